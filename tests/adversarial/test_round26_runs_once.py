# ruff: noqa: E501
"""Round 26, at most once and exactly the approved values, across controllers and resumes.

``two`` lab (remote mode): one bare repository, two controllers with their own configs and
state directories (same catalog) on the same branch, as docs/approvals.md allows ("two
controllers on one remote therefore never both run a plan"). Twelve plans are approved in one
push; both controllers' ``run --once`` passes start at the same moment.

- ``two-controllers``: asserted: each plan's ``rec`` ran exactly once in all; both passes exit
  0 without a traceback. Held.

``one`` lab (local mode):

- ``resume-values``: action 1 (``rec``) and action 3 (``rec``) take ``$<approval.by>``,
  ``$<approval.commit>`` and ``$<approval.at>``; action 2 (``flaky``) fails the first time.
  Alice approves; the plan fails at action 2; Bob approves the resume (``failed`` ->
  ``approved``). Asserted: action 1 ran once, action 3 ran once with exactly the values
  action 1 got (round 16 fixed this for gates and ``ask``; here a resume). Held.
- ``graph-gate``: a graph plan: action 1 (slow, 1.5 s, non-idempotent) and action 2 (gated)
  start at once, action 3 needs 1, action 4 needs 2 and 3. The pause at the gate is reached
  while action 1 is still running. Bob approves the gate. Asserted: each action ran exactly
  once over three passes and the plan completed. Held.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

N = 12
FLAKY = """import json, os, sys
sys.stdin.read()
mark = os.path.join(os.environ["MARK"], sys.argv[1])
if not os.path.exists(mark):
    open(mark, "w").close()
    sys.exit(1)
print(json.dumps({"ok": True}))
"""
SLOW = """import json, os, sys, time
data = sys.stdin.read()
time.sleep(float(sys.argv[2]))
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": [sys.argv[1]], "stdin": data}) + "\\n")
print(json.dumps({"ok": True}))
"""
RESUME = """plan:
  name: res
  task: t
  status: pending_approval
available_tools: [{name: rec}, {name: flaky}]
actions:
  - {id: 1, tool: rec, why: w, params: {tag: r1, by: "$<approval.by>", c: "$<approval.commit>", at: "$<approval.at>"}}
  - {id: 2, tool: flaky, why: w, params: {tag: res}}
  - {id: 3, tool: rec, why: w, params: {tag: r3, by: "$<approval.by>", c: "$<approval.commit>", at: "$<approval.at>"}}
"""
GRAPH = """plan:
  name: g
  task: t
  status: pending_approval
available_tools: [{name: rec}, {name: slow}]
actions:
  - {id: 1, tool: slow, why: w, needs: [], params: {tag: g1, s: 1.5}}
  - {id: 2, tool: rec, why: w, needs: [], requires_approval: true, params: {tag: g2}}
  - {id: 3, tool: slow, why: w, needs: [1], params: {tag: g3, s: 0.1}}
  - {id: 4, tool: rec, why: w, needs: [2, 3], params: {tag: g4}}
"""


def _build_two(root: Path) -> Lab:
    lab = Lab(root)
    bare = root / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(bare)], check=True)
    lab.git("remote", "add", "origin", str(bare))
    text = lab.config.read_text().replace(
        f"repo: {lab.repo}\n",
        f"remote: {{url: 'file://{bare}', branch: main, poll_interval: 0.2}}\n",
    )
    lab.config.write_text(text)
    second = root / "plangate2.yml"
    second.write_text(text.replace(f"state_dir: {lab.state}", f"state_dir: {root / 'state2'}"))
    for i in range(N):
        lab.write(f"p{i}", plan_text(f"p{i}"))
    lab.commit("plans")
    lab.git("push", "-q", "origin", "HEAD:main")
    lab.run()
    lab.git("pull", "-q", "--rebase", "origin", "main")
    for i in range(N):
        lab.set_status(f"p{i}", "approved")
    lab.commit("approve", ALICE)
    lab.git("push", "-q", "origin", "HEAD:main")
    results: dict[str, subprocess.CompletedProcess[str]] = {}

    def go(name: str, cfg: Path) -> None:
        results[name] = lab.cli("run", "--once", "--config", str(cfg), timeout=120)

    threads = [
        threading.Thread(target=go, args=(n, c)) for n, c in (("a", lab.config), ("b", second))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lab.passes = [(r.returncode, "Traceback" in r.stderr) for _, r in sorted(results.items())]  # type: ignore[attr-defined]
    lab.b_err = results["b"].stderr[-1500:]  # type: ignore[attr-defined]
    return lab


def _build_one(root: Path) -> Lab:
    (root / "flaky.py").write_text(FLAKY)
    (root / "slow.py").write_text(SLOW)
    (root / "marks").mkdir()
    py = sys.executable
    tools = (
        f"flaky: {{kind: exec, argv: {json.dumps([py, str(root / 'flaky.py'), '{tag}'])}, env: {{MARK: {json.dumps(str(root / 'marks'))}}}}}\n"
        f"slow: {{kind: exec, argv: {json.dumps([py, str(root / 'slow.py'), '{tag}', '{s}'])}, idempotent: false}}\n"
    )
    lab = Lab(root, tools=tools)
    lab.write("res", RESUME)
    lab.write("g", GRAPH)
    lab.commit("plans")
    lab.run()
    time.sleep(1.1)  # approvals after the freeze, in another second (the date rule)
    lab.set_status("res", "approved")
    lab.set_status("g", "approved")
    lab.commit("approve", ALICE)
    lab.run()
    time.sleep(1.1)
    lab.set_status("res", "approved")
    lab.set_status("g", "approved")
    lab.commit("resume and gate", BOB)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r26-once-two", _build_two)


@pytest.fixture(scope="module")
def one(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r26-once-one", _build_one)


def test_two_controllers(two: Lab) -> None:
    # round 70: b's new state directory refuses a's sealed history (E_STORAGE), runs nothing
    assert two.passes == [(0, False), (1, False)], two.b_err  # type: ignore[attr-defined]
    assert "E_STORAGE" in two.b_err and "--take-over" in two.b_err  # type: ignore[attr-defined]
    assert [len(two.calls(f"p{i}")) for i in range(N)] == [1] * N


def test_resume_values(one: Lab) -> None:
    first, third = one.calls("r1"), one.calls("r3")
    assert len(first) == 1 and len(third) == 1
    a, b = json.loads(first[0]["stdin"]), json.loads(third[0]["stdin"])
    assert {k: a[k] for k in ("by", "c", "at")} == {k: b[k] for k in ("by", "c", "at")}
    assert a["by"] == ALICE[1]


def test_graph_gate(one: Lab) -> None:
    assert [len(one.calls(t)) for t in ("g1", "g2", "g3", "g4")] == [1, 1, 1, 1]
    assert one.status()["plans/g"]["status"] == "completed"
