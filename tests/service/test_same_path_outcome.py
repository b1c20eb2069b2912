"""A started run's folder removed and a new plan put at the same path before the run's outcome
is committed (round 42, issue 11), and a refused decision event its plan no longer needs.

The outcome commit of such a run records it (``plangate: complete <plan>``, its trailers,
``Run-Start: <start commit>``, the run's EXECUTION_LOG.md) without writing the started plan
back over the new one; the new plan is judged on its own (frozen, approved) and starts once
that outcome is on the branch; ``plangate audit`` on a fresh clone reads the old start's
outcome from that commit. Real git and real ``plangate run --once`` processes: local mode
with a deterministic kill right after the start commit (tests/service/test_killed_start_gone),
remote mode with a forge whose hook refuses the outcome (tests/service/test_remote_forge_refusal).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.service.test_killed_start_gone import _Lab
from tests.service.test_remote_forge_refusal import Forge
from tests.support.gitenv import AGENT, ALICE, commit_all, git, identity
from tests.support.gitkit import PLAN as GREET
from tests.support.gitkit import edit_status, write_plan

NEWCOMER = """\
plan:
  name: "newcomer"
  task: "another plan at the same path"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "record the call"
    params: {tag: "n"}
"""


def _executions(report: dict[str, object], plan: str) -> list[dict[str, object]]:
    return [e for e in report["executions"] if e["plan"] == plan]  # type: ignore[attr-defined]


def test_local_outcome_at_a_path_holding_a_new_plan_leaves_the_new_plan(
    tmp_path: Path, repo: Path
) -> None:
    lab = _Lab(tmp_path, repo)
    lab.run(kill_after="plangate: start plans/v")
    start = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "rm", "-rqf", "plans/v")
    git(repo, "commit", "-qm", "remove v", env=identity(*AGENT))
    (repo / "plans" / "v").mkdir(parents=True)
    (repo / "plans" / "v" / "PLAN.yml").write_text(NEWCOMER)
    commit_all(repo, "a new plan at plans/v", AGENT)
    lab.run()  # the killed run goes on from its start commit; the new plan is frozen
    assert lab.calls() == [["v"]]
    outcome = git(repo, "log", "-1", "--format=%B", "--grep=^plangate: complete plans/v")
    assert f"Run-Start: {start}" in outcome
    head = git(repo, "show", "HEAD:plans/v/PLAN.yml")
    assert 'name: "newcomer"' in head and "frozen:" in head and "execution:" not in head
    assert (repo / "plans" / "v" / "PLAN.yml").read_text() == head  # the working tree too
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    lab.approve("plans/v/PLAN.yml")
    lab.run()
    lab.run()
    assert lab.calls() == [["v"], ["n"]]  # each once; the new plan judged on its own
    row = lab.status()["plans/v"]
    assert row["status"] == "completed" and not row["waiting"]
    report = lab.audit()
    runs = _executions(report, "plans/v")
    assert [e["outcome"] for e in runs] == ["complete", "complete"]
    assert runs[0]["start_commit"] == start
    assert not [f for f in report["findings"] if f["plan"] == "plans/v"]  # type: ignore[attr-defined]


def test_remote_refused_outcome_at_a_path_given_a_new_plan(tmp_path: Path) -> None:
    forge = Forge(tmp_path)
    forge.add(["q"])
    forge.run()
    forge.refuse("complete plans/q")
    forge.approve(["q"])
    forge.run()
    assert forge.ran("q") == 1 and forge.remote_events("q")[-1] == "start"
    forge.pull()
    git(forge.human, "rm", "-rqf", "plans/q")
    commit_all(forge.human, "remove q", AGENT)
    forge.push()
    forge.run()
    forge.pull()
    write_plan(forge.human, "q", GREET.replace("world   # trailing comment", "q2"))
    commit_all(forge.human, "a new plan at plans/q", AGENT)
    forge.push()
    forge.run()  # the new plan is frozen; the old outcome still waits, said
    row = forge.status()["plans/q"]
    assert row["status"] == "pending_approval" and "frozen" not in str(row["reason"] or "")
    assert row["waiting"].startswith("E_GIT: the remote refused the outcome of plans/q")
    assert (tmp_path / "state" / "refused.json").exists()
    forge.approve(["q"])
    forge.run()  # the new plan waits for the old run's outcome: the job row is its
    assert forge.ran("q2") == 0
    row = forge.status()["plans/q"]  # status names the outcome that waits
    assert row["status"] == "approved"
    assert row["waiting"].startswith("E_GIT: the remote refused the outcome of plans/q")
    forge.refuse(None)
    forge.run()
    assert forge.ran("q") == 1 and forge.ran("q2") == 1
    events = forge.remote_events("q")
    assert events.count("complete") == 2 and events[-2:] == ["start", "complete"], events
    forge.pull()
    head = git(forge.human, "show", "HEAD:plans/q/PLAN.yml")
    assert "q2" in head and "status: completed" in head
    row = forge.status()["plans/q"]
    assert row["status"] == "completed" and not row["waiting"]
    refused = tmp_path / "state" / "refused.json"
    assert not refused.exists() or "plans/q" not in json.loads(refused.read_text())
    clone = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(forge.bare), str(clone))
    out = subprocess.run(
        [sys.executable, "-m", "controller", "audit", "--json"],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(out.stdout)
    assert [e["outcome"] for e in _executions(report, "plans/q")] == ["complete", "complete"]


def test_remote_refused_start_of_a_plan_rejected_meanwhile_is_released(tmp_path: Path) -> None:
    forge = Forge(tmp_path)
    forge.add(["s", "t"])
    forge.run()
    forge.refuse("start plans/s")
    forge.approve(["s", "t"])
    forge.run()
    assert forge.ran("s") == 0 and forge.ran("t") == 1
    assert forge.status()["plans/s"]["waiting"].startswith("E_GIT: the remote refused the start")
    forge.pull()
    edit_status(forge.human, "s", "rejected")
    commit_all(forge.human, "reject s", ALICE)
    forge.push()
    forge.run()  # decided again: nothing to commit for a rejected plan, so it waits no more
    row = forge.status()["plans/s"]
    assert row["status"] == "rejected" and not row["waiting"], row
    refused = tmp_path / "state" / "refused.json"
    assert not refused.exists() or "plans/s" not in json.loads(refused.read_text())
    assert forge.ran("s") == 0
