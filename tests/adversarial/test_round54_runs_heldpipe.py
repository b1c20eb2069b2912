# ruff: noqa: E501
"""Round 54 (runs): an exec tool that leaves its output pipes open behind it. docs/execution.md,
Timeouts: a process "the tool detached before it exited (a double fork) is no longer below
it". Python's ``subprocess.run(timeout=...)`` waits for the pipes' end of file after it kills
the child, so a detached grandchild that inherited stdout or stderr could hold the call, and
the pass with every plan behind it, for as long as it lives.

Lab ``hp``: four exec tools with ``timeout: 2`` (each plan: that tool, then ``rec`` as action
2) and a bystander plan ``zz`` behind them, approved in one commit, one ``run --once`` pass.
The tool forks a grandchild that sleeps 25 s with an end of the tool's pipes open, then
writes a mark file:

- ``det-out``: the grandchild ``setsid``s (leaves the tool's group) and keeps stdout; the tool
  prints ``{}`` and exits at once.
- ``det-err``: the same, keeping stderr only.
- ``grp-out``: the grandchild stays in the tool's process group, keeps stdout.
- ``slow-out``: as ``det-out``, and the tool itself runs 10 s past its 2 s timeout.

Asserted: the pass ended before any grandchild finished (no mark file yet when ``run --once``
returned: the call did not wait for the detached pipe), each plan ended ``failed`` or
``completed`` with a committed outcome, and the bystander ran once. All held: the call ends
E_TIMEOUT at the tool's timeout (a tool whose pipes stay open has not finished).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

HOLD = """\
import os, sys, time
mode, marks = sys.argv[1], sys.argv[2]
if os.fork() == 0:
    if not mode.startswith("grp"):
        os.setsid()
    if os.fork() == 0:
        if mode.endswith("-out"):
            os.close(2)
        if mode.endswith("-err"):
            os.close(1)
        time.sleep(25)
        open(os.path.join(marks, mode), "w").write("done")
        os._exit(0)
    os._exit(0)
os.wait()
if mode.startswith("slow"):
    time.sleep(10)
print("{}")
"""
VARIANTS = ["det-out", "det-err", "grp-out", "slow-out"]


def _build(root: Path) -> Lab:
    (root / "hold.py").write_text(HOLD)
    marks = root / "marks"
    marks.mkdir()
    lab = Lab(root / "hp")
    py, hold, mk = (json.dumps(x) for x in (sys.executable, str(root / "hold.py"), str(marks)))
    lab.write_config(
        tools="".join(
            f"h_{m.replace('-', '_')}: {{kind: exec, argv: [{py}, {hold}, {m}, {mk}], timeout: 2}}\n"
            for m in VARIANTS
        )
    )
    for m in VARIANTS:
        tool = f"h_{m.replace('-', '_')}"
        lab.write(
            m,
            f"plan:\n  name: {m}\n  task: t\n  status: pending_approval\n"
            f"available_tools: [{{name: {tool}}}, {{name: rec}}]\nactions:\n"
            f"  - {{id: 1, tool: {tool}, why: w}}\n  - {{id: 2, tool: rec, why: w, params: {{tag: {m}-2}}}}\n",
        )
    lab.write("zz", plan_text("zz"))
    lab.commit("plans")
    lab.run()
    for m in [*VARIANTS, "zz"]:
        lab.set_status(m, "approved")
    lab.commit("approve", ALICE)
    lab.run(timeout=300)
    lab.marks_at_end = sorted(os.listdir(marks))  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r54-heldpipe", _build)


@pytest.mark.parametrize("vid", VARIANTS)
def test_a_held_pipe_does_not_hold_the_pass(lab: Lab, vid: str) -> None:
    assert vid not in lab.marks_at_end, lab.marks_at_end  # type: ignore[attr-defined]
    status = lab.plan(vid)["plan"]["status"]
    assert status in ("failed", "completed"), status
    assert any(s.startswith(("plangate: fail ", "plangate: complete ")) for s in lab.subjects(vid))
    if status == "failed":
        assert lab.calls(f"{vid}-2") == []


def test_the_bystander_ran(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
