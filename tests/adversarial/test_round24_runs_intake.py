# ruff: noqa: E501
"""Round 24, the one intake of tool results (docs/execution.md, step 5) for python and exec
tools: "integers of any size, a non-string key or nesting over 100 levels is
E_TOOL_OUTPUT_INVALID (permanent), and nothing of the result is used", and floats.

One lab, every plan approved by Alice in one commit, one ``run --once`` pass. Each hostile plan:
action 1 calls the hostile tool (output ``o`` = ``$``), action 2 calls ``rec`` with
``$<actions[1].outputs.o>``. Asserted per variant: action 1 is refused
(``E_TOOL_OUTPUT_INVALID``) and ``rec`` never ran with a value the tool did not say; the pass
exits 0 and the honest plan ran.

- ``py-intkey-dup``: a python tool returns ``{1: "a", "1": "b"}`` (a non-string key that
  collides with a string one). BROKE: the result is taken as ``{"1": "b"}`` and reaches the
  next tool; exec output naming a member twice is refused, and a non-string key should be.
- ``py-intkey``: a python tool returns ``{1: "a"}``. BROKE: taken as ``{"1": "a"}``.
- ``py-boolkey``: a python tool returns ``{True: "a", "true": "b"}``. BROKE: ``{"true": "b"}``.
- ``py-nonekey``: ``{None: "a", "null": "b", 1.5: "c"}``. BROKE: ``{"null": "b", "1.5": "c"}``
  (a python tool returning ``2**60`` is refused, as documented).
- ``py-nan-retry``: a python tool logs its call then returns ``{"n": NaN}``; the action has
  ``on_failure: retry, retries: 2``. Asserted: the tool was called once (the refusal is
  permanent, as it is for the exec ``ex-inf-retry`` control), the plan failed. Held (the code
  is ``E_TOOL_FAILED`` "not JSON data", not ``E_TOOL_OUTPUT_INVALID``, but it is not retried).
- ``ex-inf-retry`` (control): the same with an exec tool printing ``{"n": 1e999}``: held.
- ``ex-bigint``: an exec tool prints ``{"n": <5,000 nines>}``. Asserted:
  E_TOOL_OUTPUT_INVALID. BROKE: Python's parse limit makes ``json`` null and the whole
  result (stdout, ``json: null``) goes to the next tool as a success.
- ``ex-deep``: an exec tool prints a list nested 20,000 deep (40 KB, within the result
  limit). BROKE the same way (RecursionError read as "not JSON"), while ``ex-deep150``
  (nested 150 deep) is refused. (Found at 200,000 deep: 400 KB, past the 64 KB result limit,
  whose text is cut and handed on as text with its cut note by design; the depth was
  lowered after the fix so that the variant tests the reading, not the limit.)
- ``ex-float-id``: an exec tool prints ``{"id": 9007199254740993.0}``, output ``$.json.id``.
  Asserted: refused, or the next tool gets that number exactly. BROKE: the next tool
  gets ``9007199254740992`` (another id); the plan reader refuses this very number
  (round 22) but the intake takes the double.
- ``ex-float-prec``: ``{"v": 4.99999999999999999999}`` (output ``$.json.v``) reaches the next
  tool as ``5``. BROKE.
- ``ex-underflow``: ``{"v": 1e-400}`` reaches the next tool as ``0`` (``1e400`` is refused).
  BROKE.
- ``ht-bigint``, ``ht-deep``, ``ht-float-id``: the same bodies answered by a local server to an
  http tool (POST). BROKE as their exec twins. ``ht-dupkey`` (control: a member named twice)
  is refused. Held.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

PY = """
import json, os
def _log(tag):
    with open(os.environ["REC_LOG"], "a") as f:
        f.write(json.dumps({"argv": [tag], "stdin": ""}) + "\\n")
def intkey_dup(): return {1: "a", "1": "b"}
def intkey(): return {1: "a"}
def nonekey():
    return {None: "a", "null": "b", 1.5: "c"}


def boolkey(): return {True: "a", "true": "b"}
def nan():
    _log("py-nan-retry-tool")
    return {"n": float("nan")}
"""
EXEC = {
    "ex-inf-retry": 'open(__import__("os").environ["REC_LOG"], "a").write(\'{"argv": ["ex-inf-retry-tool"], "stdin": ""}\\n\')\nprint(\'{"n": 1e999}\')',
    "ex-bigint": 'print(\'{"n": \' + "9" * 5000 + "}")',
    "ex-deep": 'print("[" * 20000 + "]" * 20000)',
    "ex-deep150": 'print("[" * 150 + "]" * 150)',
    "ex-float-id": "print('{\"id\": 9007199254740993.0}')",
    "ex-float-prec": "print('{\"v\": 4.99999999999999999999}')",
    "ex-underflow": "print('{\"v\": 1e-400}')",
}
#: http tools: the body a local server answers with
HTTP = {
    "ht-bigint": b'{"n": ' + b"9" * 5000 + b"}",
    "ht-deep": b"[" * 20000 + b"]" * 20000,
    "ht-float-id": b'{"id": 9007199254740993.0}',
    "ht-dupkey": b'{"n": "first", "n": "second"}',
}
PYV = {
    "py-intkey-dup": "intkey_dup",
    "py-intkey": "intkey",
    "py-boolkey": "boolkey",
    "py-nonekey": "nonekey",
    "py-nan-retry": "nan",
}
RETRY = {"py-nan-retry", "ex-inf-retry"}
PATH = {
    "ex-float-id": "$.json.id",
    "ex-float-prec": "$.json.v",
    "ex-underflow": "$.json.v",
    "ht-float-id": "$.json.id",
}
EXACT = {
    "ex-float-id": "9007199254740993",
    "ex-float-prec": "4.99999999999999999999",
    "ex-underflow": "1e-400",
    "ht-float-id": "9007199254740993",
}
VIDS = [*PYV, *EXEC, *HTTP]

_B = "round 24: the result intake"
#: What round 24 found (fixed: refused with their E_ codes; the reasons kept as the record).
FOUND = {
    "py-intkey-dup": f"{_B} turns a python tool's non-string key into a string, silently dropping the colliding member",
    "py-intkey": f"{_B} turns a python tool's non-string key into a string",
    "py-boolkey": f"{_B} turns a python tool's bool key into 'true', dropping the colliding member",
    "py-nonekey": f"{_B} turns a python tool's None and float keys into 'null' and '1.5', dropping the colliding member",
    "ex-bigint": f"{_B} takes exec stdout with an integer over Python's 4300-digit limit as 'not JSON' (json null) and succeeds",
    "ex-deep": f"{_B} takes exec stdout nested past the recursion limit as 'not JSON' (json null) and succeeds",
    "ex-float-id": f"{_B} passes 9007199254740993.0 on as 9007199254740992",
    "ex-float-prec": f"{_B} passes 4.99999999999999999999 on as 5",
    "ex-underflow": f"{_B} passes 1e-400 on as 0",
    "ht-bigint": f"{_B} takes an http body with an integer over Python's 4300-digit limit as 'not JSON' (json null) and succeeds",
    "ht-deep": f"{_B} takes an http body nested past the recursion limit as 'not JSON' (json null) and succeeds",
    "ht-float-id": f"{_B} passes an http body's 9007199254740993.0 on as 9007199254740992",
}
BROKEN: dict[str, str] = {}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
        body = HTTP[self.path.strip("/")]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _build(root: Path) -> Lab:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    (root / "py").mkdir()
    (root / "py" / "r24tool.py").write_text(PY)
    tools = "".join(
        f"{v}: {{kind: python, target: 'r24tool:{f}', timeout: 30, env: {{REC_LOG: {json.dumps(str(root / 'ran.log'))}}}}}\n"
        for v, f in PYV.items()
    )
    for vid, code in EXEC.items():
        (root / f"{vid}.py").write_text("import sys\nsys.stdin.read()\n" + code + "\n")
        tools += f"{vid}: {{kind: exec, argv: {json.dumps([sys.executable, str(root / (vid + '.py'))])}, timeout: 30, env: {{REC_LOG: {json.dumps(str(root / 'ran.log'))}}}}}\n"
    for vid in HTTP:
        tools += f'{vid}: {{kind: http, method: POST, url: "http://127.0.0.1:{port}/{vid}", timeout: 30}}\n'
    lab = Lab(root, tools=tools, extra=f"python_path: [{json.dumps(str(root / 'py'))}]\n")
    for vid in VIDS:
        retry = ", on_failure: retry, retries: 2" if vid in RETRY else ""
        lab.write(
            vid,
            f"""plan:
  name: {vid}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}, {{name: {vid}}}]
actions:
  - {{id: 1, tool: {vid}, why: w, params: {{}}, outputs: [{{name: o, path: "{PATH.get(vid, "$")}"}}]{retry}}}
  - {{id: 2, tool: rec, why: w, params: {{tag: {vid}, v: "$<actions[1].outputs.o>"}}}}
""",
        )
    lab.write("r24-honest", plan_text("r24-honest"))
    lab.commit("plans")
    lab.run()
    for vid in [*VIDS, "r24-honest"]:
        lab.set_status(vid, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    server.shutdown()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r24-intake", _build)


def test_honest_ran(lab: Lab) -> None:
    assert len(lab.calls("r24-honest")) == 1
    assert lab.status()["plans/r24-honest"]["status"] == "completed"


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(
            v,
            id=v,
            marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=BROKEN[v])]
            if v in BROKEN
            else [],
        )
        for v in VIDS
    ],
)
def test_intake_refuses(lab: Lab, vid: str) -> None:
    row = lab.status()[f"plans/{vid}"]
    said = json.dumps(row)
    if vid in RETRY:
        assert len(lab.calls(f"{vid}-tool")) == 1, (
            f"the tool ran {len(lab.calls(f'{vid}-tool'))} times: {said}"
        )
    if vid in PATH:
        want = EXACT[vid]
        got = [json.loads(c["stdin"])["v"] for c in lab.calls(vid)]
        assert got == [] or [str(g) for g in got] == [want], (
            f"the tool said {want}, the next tool got {got}"
        )
        return
    assert lab.calls(vid) == [], f"the next tool got {[c['stdin'][:300] for c in lab.calls(vid)]}"
    assert row["status"] == "failed", said
    if vid != "py-nan-retry":
        assert "E_TOOL_OUTPUT_INVALID" in said, said
