# ruff: noqa: E501
"""Round 22, what runs and what the reviewer is shown: the values a gate approver reads in
``plangate show``, numbers whose written value a double cannot hold, the agent's staged
index entries around the controller's commits, and tools that meet the OS's limits.

One lab, one pass to freeze, Alice approves every plan in one commit, one pass to run, Bob
approves the gates, one more pass.

Gate preview (docs/execution.md, "Gate": before approving the gate ``plangate show PATH``
"prints the values the gated action will receive, resolved from the outputs recorded so
far"):

- ``gate-result``: action 1 (``rec``) succeeds; the gated action 2 takes
  ``$<actions[1].result.json.echo.x>`` (a reference to the whole result, documented in
  docs/plan-format.md). Asserted: the preview shows the value action 2 then receives.
  **Broke**: the preview says ``(not known yet: ...: action 1 has no result (it was skipped
  or did not run))`` although action 1 succeeded; action 2 then receives ``R-VALUE-7q``.
- ``ask-result``: the same reference in an action that failed with ``on_failure: ask``
  (``bad`` exits 3); the preview at the ask. **Broke** likewise: "(not known yet ...)"; the
  retry Bob's approval makes receives ``A-VALUE-2m``.
- ``gate-output`` (control): the same through a declared output: held, shown.
- ``gate-long``: the output is a 320-character string whose tail (``TAIL-ZQ9``) the tool
  chose; the execution block keeps values cut at 200 characters. Asserted: the preview
  shows the whole value the gated action receives (its tail). **Broke**: the preview shows
  ``v = "\"LLLL…LLL… (cut; 322 chars, see EXECUTION_LOG.md)"``: the value's JSON text cut
  at 200 characters, written as a string that begins with a quote; the tail is not shown
  (the cut is marked, and EXECUTION_LOG.md has the whole value); the gated action receives
  all 320 characters.
- ``gate-nested``: the gated action 2 is a pinned nested plan (``plans/child``, a draft)
  whose ``inputs: {to: "$<actions[1].outputs.o>"}`` feed its action ``2/1``'s param.
  Asserted: the preview shows ``N-VALUE-5x``, the value ``2/1`` receives. **Broke**: the
  preview's "WAITING HERE: approving the gate runs it with these values:" is followed by no
  value at all (the nested plan's actions are listed with ``«$<inputs.to>»``); ``2/1`` then
  receives ``N-VALUE-5x``.
- ``gate-check``: the gated action 2 has a precondition whose check tool (``chk``,
  idempotent, low risk) takes ``$<actions[1].outputs.o>``. Asserted: the preview shows
  ``C-VALUE-8w``, the value the check tool receives once the gate is approved. **Broke**:
  the preview lists only ``tag = "gate-check-3"`` (the action's own params); the check's
  line still reads ``«$<actions[1].outputs.o>»``; ``chk`` receives ``C-VALUE-8w``.

Numbers (docs/plan-format.md: "a huge integer ... is E_SCHEMA_INVALID with the hint to quote
it"; "Reviewers must see every value written out"). A float spelling of a value a double
cannot hold: ``f-big`` ``9007199254740993.0``, ``f-exp`` ``1.2345678901234567891e19``,
``f-under`` ``1e-400``, ``f-near`` ``4.99999999999999999999``. Asserted: refused with an
E_ code, or the tool receives exactly the written number. **Broke** (all four): the plan
validates, freezes and runs; ``rec`` receives ``9007199254740992.0``,
``1.2345678901234567e+19``, ``0`` and ``5`` (``show`` displays the rounded value, the file
and the pull request the written one). ``f-ok`` (control, ``2.5``): held.

The agent's index (local mode), after the approval and before the run pass: a staged mode
change of an approved PLAN.yml (``ix-mode``), a staged gitlink inside a plan folder
(``ix-gitlink``), a staged deletion of the approved PLAN.yml (``ix-del``), an intent-to-add
of a new file (``ix-ita``). Asserted (held, all): each plan ran once, every controller
commit changes only ``PLAN.yml``/``EXECUTION_LOG.md`` of its own plans as regular 100644
files.

Tools and OS limits (held, all): ``stdin-sleep`` (400 KB of params on stdin to a tool that
never reads it and sleeps 30 s, timeout 2 s: E_TIMEOUT, the pass is not stalled),
``stdin-exit`` (the tool exits without reading: no traceback), ``argv-big`` (a 200 KB
param filling an argv placeholder: E2BIG, an E_ code), ``fds`` (the tool inherits no descriptor but 0-2 and no
``GIT_DIR``/``GIT_INDEX_FILE``/``GIT_WORK_TREE``). ``zz``: an honest plan runs once.
Asserted for these: no log line of the pass about the plan holds a traceback, the plan has
its E_ code (``stdin-sleep``: E_TIMEOUT at its tool's 2 s, the sleeper stopped at its own
bound, not waited for), the honest ``zz`` runs once; no timing is asserted. **Broke**: ``url-big`` (a 70 KB value for an http
tool's URL placeholder, an approved literal param): the pass logs ``tool_crashed`` (level
error) with a full Python traceback (``httpx.InvalidURL: URL too long``); the action fails
``E_TOOL_FAILED: hurl: internal error: InvalidURL('URL too long')``, a temporary error
(``on_failure: retry`` would retry it) instead of a permanent E_PARAMS_INVALID.
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOB, BenchError, Lab, plan_text
from test_round2_execution_kit import shared

R22 = "round 22: "
PY = json.dumps(sys.executable)
FLOATS = {
    "f-big": "9007199254740993.0",
    "f-exp": "1.2345678901234567891e19",
    "f-under": "1e-400",
    "f-near": "4.99999999999999999999",
    "f-ok": "2.5",
}
INDEX = ["ix-mode", "ix-gitlink", "ix-del", "ix-ita"]
OS = ["stdin-sleep", "stdin-exit", "argv-big", "url-big"]
LONG = "L" * 300 + "-TAIL-ZQ9-" + "M" * 10

FDS = """import os, json, sys
sys.stdin.read()
fds = sorted(os.listdir('/proc/self/fd'))
env = sorted(k for k in os.environ if k.startswith('GIT'))
with open(os.environ['REC_LOG'], 'a') as fh:
    fh.write(json.dumps({'argv': ['fds'], 'stdin': json.dumps({'fds': fds, 'env': env})}) + '\\n')
print(json.dumps({'ok': True}))
"""


def _simple(lab: Lab, slug: str, tool: str, params: dict[str, Any]) -> None:
    lab.write(
        slug,
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\navailable_tools: [{{name: {tool}}}]\n"
        f"actions:\n  - {{id: 1, tool: {tool}, why: w, params: {json.dumps(params)}}}\n",
    )


def _gate(ref: str, tag: str, value: str) -> str:
    return f"""plan:
  name: {tag}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {{tag: {tag}-1, x: {json.dumps(value)}}}
    outputs: [{{name: o, path: "$.json.echo.x"}}]
  - id: 2
    tool: rec
    why: w
    requires_approval: true
    params: {{tag: {tag}-2, v: "{ref}"}}
"""


CHILD = """plan:
  name: child
  task: t
  status: draft
inputs: {to: "default"}
available_tools: [{name: rec}]
actions:
  - {id: 1, tool: rec, why: w, params: {tag: gate-nested-2, v: "$<inputs.to>"}}
"""


def _gate_nested(pin: str) -> str:
    return f"""plan:
  name: gate-nested
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {{tag: gate-nested-1, x: "N-VALUE-5x"}}
    outputs: [{{name: o, path: "$.json.echo.x"}}]
  - id: 2
    plan: {{path: plans/child, hash: "{pin}"}}
    why: w
    requires_approval: true
    inputs: {{to: "$<actions[1].outputs.o>"}}
"""


GATE_CHECK = """plan:
  name: gate-check
  task: t
  status: pending_approval
available_tools: [{name: rec}, {name: chk}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {tag: gate-check-1, x: "C-VALUE-8w"}
    outputs: [{name: o, path: "$.json.echo.x"}]
  - id: 2
    tool: rec
    why: w
    requires_approval: true
    params: {tag: gate-check-3}
    preconditions:
      - {tool: chk, params: {tag: gate-check-2, v: "$<actions[1].outputs.o>"}, expect: {path: "$.exit_code", equals: 0}}
"""
ASK = """plan:
  name: ask-result
  task: t
  status: pending_approval
available_tools: [{name: rec}, {name: bad}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {tag: ask-result-1, x: "A-VALUE-2m"}
  - id: 2
    tool: bad
    why: w
    on_failure: ask
    params: {tag: ask-result-2, v: "$<actions[1].result.json.echo.x>"}
"""
FAIL = """import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a") as fh:
    fh.write(json.dumps({"argv": [sys.argv[1]], "stdin": data}) + "\\n")
sys.exit(3)
"""
GATES = ["ask-result", "gate-result", "gate-output", "gate-long", "gate-nested", "gate-check"]


def _build(root: Path) -> Lab:
    fds = root / "fds.py"
    fds.write_text(FDS)
    (root / "fail.py").write_text(FAIL)
    lab = Lab(
        root / "lab",
        tools=f"""
nr: {{kind: exec, argv: [{PY}, "-c", "import time; time.sleep(30)"], timeout: 2}}
nx: {{kind: exec, argv: [{PY}, "-c", "print('{{}}')"]}}
fd: {{kind: exec, argv: [{PY}, {json.dumps(str(fds))}], env: {{REC_LOG: {json.dumps(str(root / "lab" / "ran.log"))}}}}}
hurl: {{kind: http, method: GET, url: "http://127.0.0.1:9/x/{{p}}"}}
chk: {{kind: exec, argv: [{PY}, {json.dumps(str(root / "lab" / "rec.py"))}, "{{tag}}"], env: {{REC_LOG: {json.dumps(str(root / "lab" / "ran.log"))}}}, idempotent: true, risk: low}}
bad: {{kind: exec, argv: [{PY}, {json.dumps(str(root / "fail.py"))}, "{{tag}}"], env: {{REC_LOG: {json.dumps(str(root / "lab" / "ran.log"))}}}}}
""",
    )
    child = lab.write("child", CHILD)
    pin = lab.cli("hash", str(child.parent)).stdout.split()[0]
    lab.write("gate-nested", _gate_nested(pin))
    lab.write("gate-check", GATE_CHECK)
    lab.write("ask-result", ASK)
    lab.write("gate-result", _gate("$<actions[1].result.json.echo.x>", "gate-result", "R-VALUE-7q"))
    lab.write("gate-output", _gate("$<actions[1].outputs.o>", "gate-output", "O-VALUE-3k"))
    lab.write("gate-long", _gate("$<actions[1].outputs.o>", "gate-long", LONG))
    for slug, num in FLOATS.items():
        lab.write(slug, plan_text(slug, params=f"n: {num}\n"))
    for slug in INDEX:
        lab.write(slug, plan_text(slug))
    _simple(lab, "stdin-sleep", "nr", {"blob": "x" * 400_000})
    _simple(lab, "stdin-exit", "nx", {"blob": "x" * 400_000})
    _simple(lab, "argv-big", "rec", {"tag": "y" * 200_000})
    _simple(lab, "url-big", "hurl", {"p": "y" * 70_000})
    _simple(lab, "fds", "fd", {"a": 1})
    lab.write("zz", plan_text("zz"))
    lab.commit("plans")
    lab.run()
    slugs = [*GATES, *FLOATS, *INDEX, *OS, "fds", "zz"]
    refused = {}
    for slug in slugs:
        status = lab.status()[f"plans/{slug}"]
        if status["status"] == "pending_approval":
            lab.set_status(slug, "approved")
        else:
            refused[slug] = json.dumps(status)
    lab.commit("approve", ALICE)
    base = lab.head()
    lab.git("update-index", "--chmod=+x", "plans/ix-mode/PLAN.yml")
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{base},plans/ix-gitlink/sub")
    lab.git("rm", "--cached", "-q", "plans/ix-del/PLAN.yml")
    (lab.repo / "plans/ix-ita/NEW.md").write_text("agent text\n")
    lab.git("add", "-N", "plans/ix-ita/NEW.md")
    first = lab.run(check=False)
    if first.returncode != 0:
        raise BenchError(f"run --once exited {first.returncode}: {first.stderr[-800:]}")
    previews = {}
    for slug in GATES:
        out = lab.cli("show", "--config", str(lab.config), str(lab.repo / "plans" / slug))
        previews[slug] = out.stdout + out.stderr
    lab.git("reset", "-q")  # the agent's staged entries out of the way for the gate commit
    for slug in GATES:
        lab.set_status(slug, "approved")
        lab.commit(f"gate {slug}", BOB, f"plans/{slug}/PLAN.yml")
    lab.run()
    ctrl = [
        r[0]
        for r in lab.log_rows(fmt="%H%x00%an%x00%ae%x00%s%x00%B%x01", rev=f"{base}..HEAD")
        if r[2] == "plangate@localhost"
    ]
    changes = {c: lab.git("diff-tree", "--no-commit-id", "-r", "--root", c) for c in ctrl}
    lab.results = {  # type: ignore[attr-defined]
        "refused": refused,
        "previews": previews,
        "changes": changes,
        "said": first.stderr,
        "status": {k: v for k, v in lab.status().items()},
    }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r22-gateview", _build)


def _received(lab: Lab, tag: str) -> list[dict[str, Any]]:
    return [json.loads(c["stdin"]) for c in lab.calls(tag)]


#: The variants that still break (none since the fixes of round 22).
BROKEN: dict[str, Any] = {}

#: Fixed: the engine records the preview at the pause (execution.gate); show prints it.
GATE_FOUND = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason=R22 + "the gate preview in `plangate show` does not show what the gated action receives",
)


@pytest.mark.parametrize(
    ("slug", "value"),
    [
        pytest.param(
            "ask-result", "A-VALUE-2m", id="ask-result", marks=BROKEN.get("ask-result", ())
        ),
        pytest.param(
            "gate-result", "R-VALUE-7q", id="gate-result", marks=BROKEN.get("gate-result", ())
        ),
        pytest.param(
            "gate-output", "O-VALUE-3k", id="gate-output", marks=BROKEN.get("gate-output", ())
        ),
        pytest.param("gate-long", LONG, id="gate-long", marks=BROKEN.get("gate-long", ())),
        pytest.param(
            "gate-nested", "N-VALUE-5x", id="gate-nested", marks=BROKEN.get("gate-nested", ())
        ),
        pytest.param(
            "gate-check", "C-VALUE-8w", id="gate-check", marks=BROKEN.get("gate-check", ())
        ),
    ],
)
def test_the_gate_preview_shows_what_the_gated_action_receives(
    lab: Lab, slug: str, value: str
) -> None:
    got = _received(lab, f"{slug}-2")
    if not got or got != [{"tag": f"{slug}-2", "v": value}] * len(got):
        raise BenchError(f"the gated action did not run as the bench expects: {got}")
    preview = lab.results["previews"][slug]  # type: ignore[attr-defined]
    section = preview.split("WAITING HERE", 1)[-1]
    assert "WAITING HERE" in preview, preview[-1500:]
    assert json.dumps(value) in section, section[:1500]


#: What round 22 found; fixed (a number a double cannot hold is E_SCHEMA_INVALID).
FLOAT_FOUND = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason=R22 + "a float spelling of a value a double cannot hold is accepted and runs rounded",
)


@pytest.mark.parametrize(
    "slug",
    [pytest.param(s, id=s, marks=BROKEN.get(s, ())) for s in FLOATS],
)
def test_a_number_runs_as_written_or_is_refused(lab: Lab, slug: str) -> None:
    refused = lab.results["refused"].get(slug)  # type: ignore[attr-defined]
    got = _received(lab, slug)
    if refused is not None:
        assert "E_" in refused and got == []
        return
    assert len(got) == 1
    assert Decimal(json.dumps(got[0]["n"])) == Decimal(FLOATS[slug]), (
        f"written {FLOATS[slug]}, the tool received {got[0]['n']}"
    )


@pytest.mark.parametrize("slug", INDEX)
def test_the_agents_staged_index_never_reaches_a_controller_commit(lab: Lab, slug: str) -> None:
    assert len(lab.calls(slug)) == 1
    assert lab.results["status"][f"plans/{slug}"]["status"] == "completed"  # type: ignore[attr-defined]
    for commit, diff in lab.results["changes"].items():  # type: ignore[attr-defined]
        for line in diff.splitlines():
            meta, path = line.split("\t", 1)
            dst_mode = meta.split()[1]
            assert path.rsplit("/", 1)[-1] in ("PLAN.yml", "EXECUTION_LOG.md"), (commit, line)
            assert path.startswith("plans/") and dst_mode == "100644", (commit, line)


#: Fixed: a URL too long for any client is E_PARAMS_INVALID, no traceback.
URL_FOUND = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason=R22
    + "an http URL placeholder filled past httpx's URL limit is logged as a tool crash with a traceback",
)


@pytest.mark.parametrize("slug", [pytest.param(s, id=s, marks=BROKEN.get(s, ())) for s in OS])
def test_a_tool_meeting_os_limits_fails_with_a_code_and_stalls_nothing(lab: Lab, slug: str) -> None:
    said = [
        line
        for line in lab.results["said"].splitlines()  # type: ignore[attr-defined]
        if f'"plans/{slug}"' in line
    ]
    assert said and not [line for line in said if "Traceback" in line], [
        line[:600] for line in said if "Traceback" in line
    ]
    row = lab.results["status"][f"plans/{slug}"]  # type: ignore[attr-defined]
    if slug == "stdin-exit":
        assert row["status"] == "completed", row
    else:
        assert row["status"] == "failed" and "E_" in (row.get("reason") or ""), row
    if slug == "stdin-sleep":  # stopped at its own timeout and recorded so (no timing assert)
        assert "E_TIMEOUT" in row["reason"] and "did not finish within 2s" in row["reason"], row
    assert len(lab.calls("zz")) == 1


def test_a_tool_inherits_no_descriptor_and_no_git_location(lab: Lab) -> None:
    seen = [json.loads(c["stdin"]) for c in lab.calls("fds")]
    assert len(seen) == 1
    assert set(seen[0]["fds"]) <= {"0", "1", "2", "3"}, seen  # 3: listdir's own handle
    assert not {"GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"} & set(seen[0]["env"]), seen
