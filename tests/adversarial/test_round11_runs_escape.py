# ruff: noqa: E501
"""Round 11, what runs after the record says it stopped: a timed-out tool's child that left
the tool's process group (``setsid``). docs/execution.md: "Timeouts (E_TIMEOUT): SIGTERM to
the tool's whole process group, 1 s grace, then SIGKILL to the group, so a child that
ignores SIGTERM, and anything it spawned, dies too."

- ``late``: the tool forks a ``setsid`` child (stdout closed) that acts 1.5 s later (and notes that the plan's ``fail`` commit is already on the branch), and
  itself sleeps past its 1 s timeout. The plan is committed ``failed`` / E_TIMEOUT "its
  process group was killed"; the child must not act afterwards. **Broke**: it does (an effect
  after the outcome commit; with ``on_failure: retry`` a retry would run beside it).
- ``pipe``: the tool exits at once but its ``setsid`` child keeps stdout open for 1.5 s:
  held, the pass is not stalled past the timeout (the plan fails E_TIMEOUT at the tool's 1 s,
  not at the child's 1.5 s, which would have ended it ``completed``) and the plan queued
  behind it runs. No timing is asserted (the project asserts none).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, BenchError, Lab, plan_text
from test_round2_execution_kit import shared

BG = r"""import json, os, sys, time
sys.stdin.read()
mode = sys.argv[1]
log = os.environ["REC_LOG"]
if os.fork() == 0:
    os.setsid()
    if mode == "late":
        for fd in (0, 1, 2):
            os.close(fd)
            os.open(os.devnull, os.O_RDWR)
    time.sleep(1.5)
    import subprocess
    seen = subprocess.run(["git", "log", "--format=%s", "-n", "20"], cwd=os.environ["LAB_REPO"], capture_output=True, text=True).stdout
    with open(log, "a") as f:
        f.write(json.dumps({"argv": ["late-" + mode], "stdin": "outcome-committed" if "fail plans/" + mode in seen else ""}) + "\n")
    os._exit(0)
if mode == "late":
    time.sleep(10)
print(json.dumps({"ok": True}))
"""


def _build(root: Path) -> Lab:
    bg = root / "bg.py"
    bg.write_text(BG)
    lab = Lab(root)
    lab.write_config(
        tools=f"bg: {{kind: exec, argv: {json.dumps([sys.executable, str(bg), '{mode}'])}, env: {{REC_LOG: {json.dumps(str(lab.log))}, LAB_REPO: {json.dumps(str(lab.repo))}}}, timeout: 1}}\n"
    )
    for m in ("late", "pipe"):
        lab.write(
            m,
            plan_text(m).replace("  - name: rec\n", "  - name: rec\n  - name: bg\n")
            + f'  - {{id: 2, tool: bg, why: "w", params: {{mode: "{m}"}}}}\n',
        )
    lab.write("after", plan_text("after"))
    lab.commit("plans", AGENT)
    lab.run()
    for m in ("late", "pipe", "after"):
        lab.approve(m)
    lab.run()
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline and not (lab.calls("late-late") and lab.calls("late-pipe")):
        time.sleep(0.1)
    lab.status()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r11-escape", _build)


# round 11: a setsid child of a timed-out tool survived the group kill; fixed since
def test_nothing_the_tool_spawned_acts_after_its_timeout(lab: Lab) -> None:
    assert lab.status()["plans/late"]["status"] == "failed"
    late = lab.calls("late-late")
    if late and late[0]["stdin"] != "outcome-committed":
        raise BenchError("the child acted before the outcome commit: the bench proves nothing")
    assert late == [], "a child of the timed-out tool acted after the outcome commit"


def test_a_child_holding_stdout_stalls_nothing(lab: Lab) -> None:
    # ended at the tool's own timeout and recorded as such (no timing assert): a pass that
    # waited for the child's end of stdout would have recorded the plan completed
    row = lab.status()["plans/pipe"]
    assert row["status"] == "failed" and "E_TIMEOUT" in (row.get("reason") or ""), row
    assert "did not finish within 1s" in row["reason"], row
    assert lab.status()["plans/after"]["status"] == "completed"
    assert len(lab.calls("after")) == 1
