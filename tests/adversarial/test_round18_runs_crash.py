"""Round 18, at most once across a real ``kill -9`` of ``plangate run --once`` while a tool
runs in a place other than a plain action (docs/execution.md tests the crash hook on plain
actions): the bench SIGKILLs the controller process as soon as the slow tool has logged its
start (the tool then sleeps 5 s and would log its end), then runs two normal passes.

- ``fallback``: action 1 (``false``) fails with ``on_failure: fallback``; the kill lands in
  fallback step ``1.1`` (``slow``);
- ``nested``: the kill lands in action ``1/1`` of a pinned nested plan;
- ``parallel``: two independent actions (``needs: []``) both in flight;
- ``python``: a ``kind: python`` tool (its own child process) in flight.

Asserted (all held, round 18): each slow call started exactly once and never logged its end
(the orphan was stopped before anything was decided), the plan ended ``failed`` with
E_ACTION_IN_DOUBT (nothing re-run without a human's resume), and the honest ``zz`` ran once.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

SLOW = """import json, os, sys, time
data = sys.stdin.read()
tag = sys.argv[1]
def log(w):
    with open(os.environ["REC_LOG"], "a") as f:
        f.write(json.dumps({"argv": [tag, w], "stdin": data}) + "\\n")
log("start"); time.sleep(5); log("end")
print("{}")
"""
PYSLOW = """import json, os, time
def run(tag):
    def log(w):
        with open(os.environ["REC_LOG"], "a") as f:
            f.write(json.dumps({"argv": [tag, w], "stdin": ""}) + "\\n")
    log("start"); time.sleep(5); log("end")
    return {}
"""
INNER = """plan: {name: inner, task: t, status: draft}
available_tools: [{name: slow}]
actions:
  - {id: 1, tool: slow, why: w, params: {tag: nested}}
"""
PLANS = {
    "fallback": """plan: {name: fallback, task: t, status: pending_approval}
available_tools: [{name: bad}, {name: slow}]
actions:
  - id: 1
    tool: bad
    why: w
    on_failure: fallback
    fallback:
      - {id: "1.1", tool: slow, why: w, params: {tag: fallback}}
""",
    "parallel": """plan: {name: parallel, task: t, status: pending_approval}
available_tools: [{name: slow}]
actions:
  - {id: 1, tool: slow, why: w, params: {tag: parallel1}, needs: []}
  - {id: 2, tool: slow, why: w, params: {tag: parallel2}, needs: []}
""",
    "python": """plan: {name: python, task: t, status: pending_approval}
available_tools: [{name: pyslow}]
actions:
  - {id: 1, tool: pyslow, why: w, params: {tag: python}}
""",
}
TAGS = {
    "fallback": ["fallback"],
    "nested": ["nested"],
    "parallel": ["parallel1", "parallel2"],
    "python": ["python"],
}


def _starts(lab: Lab) -> int:
    if not lab.log.exists():
        return 0
    return sum('"start"]' in line for line in lab.log.read_text().splitlines())


def _build(root: Path) -> Lab:
    (root / "slow.py").write_text(SLOW)
    (root / "py").mkdir()
    (root / "py" / "pyslow.py").write_text(PYSLOW)
    slow = json.dumps([sys.executable, str(root / "slow.py"), "{tag}"])
    lab = Lab(
        root,
        tools=f"""\
bad: {{kind: exec, argv: ["false"]}}
slow: {{kind: exec, argv: {slow}, env: {{REC_LOG: {json.dumps(str(root / "ran.log"))}}}}}
pyslow: {{kind: python, target: "pyslow:run"}}
""",
        extra=f"python_path: [{json.dumps(str(root / 'py'))}]\n",
    )
    lab.write("common-inner", INNER)
    lab.commit("inner")
    pin = lab.cli("hash", str(lab.repo / "plans" / "common-inner"), cwd=lab.repo).stdout.split()[-1]
    plans = dict(PLANS)
    plans["nested"] = f"""plan: {{name: nested, task: t, status: pending_approval}}
available_tools: [{{name: slow}}]
actions:
  - {{id: 1, plan: {{path: plans/common-inner, hash: "{pin}"}}, why: w}}
"""
    plans["zz"] = plan_text("zz")
    for slug, text in plans.items():
        lab.write(slug, text)
    lab.commit("plans")
    lab.run()
    for slug in plans:
        path = lab.repo / "plans" / slug / "PLAN.yml"
        path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))
    lab.commit("approve all", ALICE)
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    for _ in range(4):
        before = _starts(lab)
        proc = subprocess.Popen(
            [sys.executable, "-m", "controller", "run", "--once", "--config", str(lab.config)],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while _starts(lab) == before and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        proc.kill()
        proc.wait()
    lab.run()
    lab.run()
    time.sleep(5.5)  # past the slow tool's sleep: an orphan left alive would log its end now
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r18-crash", _build)


def test_the_honest_plan_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1


@pytest.mark.parametrize("slug", list(TAGS))
def test_a_tool_in_flight_at_a_kill_runs_once_and_is_stopped(lab: Lab, slug: str) -> None:
    for tag in TAGS[slug]:
        calls = [c["argv"][1] for c in lab.calls(tag)]
        assert calls == ["start"], (tag, calls)
    execution = lab.plan(slug).get("execution") or {}
    assert execution.get("status") == "failed", execution
    assert "E_ACTION_IN_DOUBT" in json.dumps(execution), execution
