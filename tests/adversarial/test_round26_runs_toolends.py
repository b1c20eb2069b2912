# ruff: noqa: E501
"""Round 26, tool outputs fill params but never forge a result, and one hostile tool never
stalls the pass: the ways a tool's *result channel* can be written besides its return value.

One lab, every plan approved by Alice in one commit, one measured ``run --once`` pass. Each
hostile plan: action 1 calls the hostile tool (output ``o`` = ``$.to``), action 2 calls ``rec``
with ``$<actions[1].outputs.o>``. Python tools return ``{"to": "good"}`` unless said:

- ``py-fd1``: the function writes ``{"to": "evil"}`` straight to file descriptor 1 first
  (``os.write(1, ...)``, past ``sys.stdout``);
- ``py-sub``: the function runs a subprocess (inheriting fd 1) that prints ``{"to": "evil"}``;
- ``py-exit0``: the function writes ``{"to": "evil"}`` to fd 1 and ``os._exit(0)``\\s without
  returning;
- ``py-dag``: the function returns a list of shared references (``x = [x, x]`` 40 times:
  tiny in memory, 2^40 leaves once serialized); tool ``timeout: 5``;
- ``py-cyc``: the function returns a list that contains itself;
- ``py-strsub``: the function returns a ``str`` subclass whose ``__str__`` says ``evil``;
- ``ex-grand``: an exec tool prints ``{"to": "good"}`` and exits 0 at once, after a detached
  grandchild (double fork, ``setsid``) that keeps its stdout open sleeps 40 s; ``timeout: 3``.

Asserted: ``rec`` never got ``evil``; when it ran it got ``good``; every hostile plan ended
(``completed`` or ``failed`` with an E_ code); the pass exits 0 and the honest
``zz`` ran once. All held (round 26): fd 1 writes are not the result channel (``py-exit0``:
``E_TOOL_FAILED`` "died without a result"), ``py-dag`` is stopped at its timeout, ``py-cyc``
is ``E_TOOL_OUTPUT_INVALID``, ``ex-grand`` ends at its timeout (``E_TIMEOUT``, though the tool
itself had exited 0).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

PY = r"""
import os, subprocess, sys
def fd1():
    os.write(1, b'{"to": "evil"}\n')
    return {"to": "good"}
def sub():
    subprocess.run([sys.executable, "-c", "print('{\"to\": \"evil\"}')"])
    return {"to": "good"}
def exit0():
    os.write(1, b'{"to": "evil"}\n')
    os._exit(0)
def dag():
    x = "a" * 100
    for _ in range(40):
        x = [x, x]
    return {"to": x}
def cyc():
    a = []
    a.append(a)
    return {"to": a}
def strsub():
    class S(str):
        def __str__(self):
            return "evil"
    return {"to": S("good")}
"""
GRAND = """import os, sys, time
sys.stdin.read()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(40)
        os._exit(0)
    os._exit(0)
print('{"to": "good"}')
sys.stdout.flush()
"""
PYV = {
    "py-fd1": "fd1",
    "py-sub": "sub",
    "py-exit0": "exit0",
    "py-dag": "dag",
    "py-cyc": "cyc",
    "py-strsub": "strsub",
}
VIDS = [*PYV, "ex-grand"]


def _build(root: Path) -> Lab:
    (root / "py").mkdir()
    (root / "py" / "r26ends.py").write_text(PY)
    (root / "grand.py").write_text(GRAND)
    tools = "".join(
        f"{v}: {{kind: python, target: 'r26ends:{f}', timeout: 5}}\n" for v, f in PYV.items()
    )
    tools += f"ex-grand: {{kind: exec, argv: {json.dumps([sys.executable, str(root / 'grand.py')])}, timeout: 3}}\n"
    lab = Lab(root, tools=tools, extra=f"python_path: [{json.dumps(str(root / 'py'))}]\n")
    for v in VIDS:
        lab.write(
            v,
            f"plan:\n  name: {v}\n  task: t\n  status: pending_approval\n"
            f"available_tools: [{{name: rec}}, {{name: {v}}}]\n"
            "actions:\n"
            f'  - {{id: 1, tool: {v}, why: w, params: {{}}, outputs: [{{name: o, path: "$.to"}}]}}\n'
            f'  - {{id: 2, tool: rec, why: w, params: {{tag: {v}, v: "$<actions[1].outputs.o>"}}}}\n',
        )
    lab.write("zz", plan_text("zz"))
    lab.commit("plans")
    lab.run()
    for v in [*VIDS, "zz"]:
        lab.set_status(v, "approved")
    lab.commit("approve", ALICE)
    start = time.monotonic()
    result = lab.run(check=False)
    lab.took = time.monotonic() - start  # type: ignore[attr-defined]
    lab.ok = (result.returncode, "Traceback" in result.stderr)  # type: ignore[attr-defined]
    lab.st = {v: lab.status()[f"plans/{v}"] for v in [*VIDS, "zz"]}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r26-toolends", _build)


def test_pass_ends_and_honest_plan_ran(lab: Lab) -> None:
    assert lab.ok == (0, False)  # type: ignore[attr-defined]
    # no timing assert (the project has none): a pass that waited for the grandchild's
    # stdout would have recorded ex-grand as completed (it printed "good" and exited 0), and
    # py-dag's 2^40 leaves would never have come back: both end at their tool's timeout
    for vid in ("ex-grand", "py-dag"):
        row = lab.st[vid]  # type: ignore[attr-defined]
        assert row["status"] == "failed" and "E_TIMEOUT" in (row.get("reason") or ""), row
    assert lab.st["zz"]["status"] == "completed" and len(lab.calls("zz")) == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", VIDS)
def test_result_is_only_what_the_tool_returned(lab: Lab, vid: str) -> None:
    calls = lab.calls(vid)
    assert len(calls) <= 1
    for call in calls:
        assert json.loads(call["stdin"])["v"] == "good"
    row = lab.st[vid]  # type: ignore[attr-defined]
    assert row["status"] == "completed" or (
        row["status"] == "failed" and "E_" in (row.get("reason") or "")
    )
