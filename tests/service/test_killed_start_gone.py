"""A controller killed right after a commit of its own moved the branch, and a commit that
removes, moves or brings back the plan's folder before the restart (round 30, SPEC §15).

The restart finds the run from its own records (the job row and the start commit on the
branch), not from the plan still being where it started: the run goes on from the start
commit's approved content and its outcome is committed for the started plan, as without the
kill; a run whose outcome is already on the branch is not taken up again; a copy of the
started plan never runs (the start's frozen hash counts as executed, although the kill came
before it was recorded).

Real ``plangate run --once`` processes, real git and a real exec tool; the kill is a real
SIGKILL sent by a ``git`` on PATH that moves the branch (the real ``git update-ref``) and
then kills its caller when the new commit's subject starts as asked: deterministic, no race.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.gitenv import (
    AGENT,
    ALICE,
    commit_all,
    git,
    identity,
    remove_stale_index_lock,
)

PLAN = """\
plan:
  name: "victim"
  task: "records one call"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "record the call"
    params: {tag: "v"}
"""

RECORDER = """\
import json, os, sys
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
print("{}")
"""

# Moves the branch (the real update-ref), then kills the controller (its parent) the first
# time the new commit's subject starts with the given text.
KILLING_GIT = """\
#!/bin/sh
if [ "$1" = "update-ref" ] && [ ! -e "{marker}" ]; then
  {git} "$@"
  rc=$?
  case "$({git} log -1 --format=%s "$5" 2>/dev/null)" in
    "{subject}"*) : > "{marker}"; kill -9 $PPID; sleep 5;;
  esac
  exit $rc
fi
exec {git} "$@"
"""


class _Lab:
    def __init__(self, tmp_path: Path, repo: Path) -> None:
        self.tmp, self.repo = tmp_path, repo
        self.log = tmp_path / "calls.log"
        recorder = tmp_path / "rec.py"
        recorder.write_text(RECORDER)
        argv = json.dumps([sys.executable, str(recorder), "{tag}"])
        self.config = tmp_path / "plangate.yml"
        self.config.write_text(
            f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
            "identity: {name: plangate, email: plangate@localhost}\n"
            "approval: {approvers: [alice@example.com]}\n"
            f"tools: {{rec: {{kind: exec, argv: {argv}, env: {{REC_LOG: '{self.log}'}}}}}}\n"
        )
        (repo / "plans" / "v").mkdir(parents=True)
        (repo / "plans" / "v" / "PLAN.yml").write_text(PLAN)
        commit_all(repo, "propose v", AGENT)
        self.run()
        self.approve("plans/v/PLAN.yml")

    def approve(self, file: str, who: tuple[str, str] = ALICE) -> None:
        path = self.repo / file
        path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
        commit_all(self.repo, f"approve {file}", who)

    def run(self, kill_after: str | None = None) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ)
        if kill_after is not None:
            wrapper = self.tmp / "killing-bin"
            wrapper.mkdir(exist_ok=True)
            script = wrapper / "git"
            real = shutil.which("git")
            assert real is not None
            marker = self.tmp / f"killed-{len(list(self.tmp.glob('killed-*')))}"
            script.write_text(KILLING_GIT.format(marker=marker, git=real, subject=kill_after))
            script.chmod(0o755)
            env["PATH"] = f"{wrapper}{os.pathsep}{env['PATH']}"
        result = subprocess.run(
            [sys.executable, "-m", "controller", "run", "--once", "--config", str(self.config)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if kill_after is None:
            assert result.returncode == 0, result.stderr[-2000:]
        else:
            assert result.returncode == -9, result.stderr[-2000:]  # killed, as SIGKILL kills
            assert git(self.repo, "log", "-1", "--format=%s").startswith(kill_after)
            remove_stale_index_lock(self.repo)  # the person's next git command says to
        return result

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def subjects(self) -> list[str]:
        return git(self.repo, "log", "--format=%s").splitlines()

    def status(self) -> dict[str, dict[str, object]]:
        result = subprocess.run(
            [sys.executable, "-m", "controller", "status", "--json", "--config", str(self.config)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        return {row["plan"]: row for row in json.loads(result.stdout)}

    def audit(self) -> dict[str, object]:
        """``plangate audit --json`` on a fresh clone (no state directory, no config)."""
        clone = self.tmp / "clone"
        shutil.rmtree(clone, ignore_errors=True)
        git(self.tmp, "clone", "-q", str(self.repo), str(clone))
        result = subprocess.run(
            [sys.executable, "-m", "controller", "audit", "--json"],
            cwd=clone,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
        report: dict[str, object] = json.loads(result.stdout)
        return report


def _outcomes(lab: _Lab, plan: str = "plans/v") -> list[str]:
    return [s for s in lab.subjects() if s in (f"plangate: complete {plan}",)]


def test_a_deletion_and_its_revert_before_the_restart_finish_the_killed_start(
    tmp_path: Path, repo: Path
) -> None:
    lab = _Lab(tmp_path, repo)
    lab.run(kill_after="plangate: start plans/v")
    assert lab.calls() == []
    # the agent, sharing the checkout while the daemon is down: deletes the folder, then
    # brings the start commit's file back (a file with no status to the history index)
    git(repo, "rm", "-rqf", "plans/v")
    git(repo, "commit", "-qm", "remove v", env=identity(*AGENT))
    git(repo, "revert", "--no-edit", "HEAD", env=identity(*AGENT))
    lab.run()
    lab.run()
    assert lab.calls() == [["v"]]  # once
    assert _outcomes(lab) == ["plangate: complete plans/v"]
    assert lab.status()["plans/v"]["status"] == "completed"
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    runs = [e for e in lab.audit()["executions"] if e["plan"] == "plans/v"]  # type: ignore[attr-defined]
    assert [e["outcome"] for e in runs] == ["complete"]


def test_a_moved_folder_runs_where_it_started_and_its_approved_copy_never_runs(
    tmp_path: Path, repo: Path
) -> None:
    lab = _Lab(tmp_path, repo)
    lab.run(kill_after="plangate: start plans/v")
    # killed before the start's frozen hash was recorded as executed: the agent moves the
    # folder (the approved file the killed controller left in the tree) back to pending, and
    # Alice, who may approve it (she wrote none of it), approves the copy
    git(repo, "mv", "plans/v", "plans/w")
    moved = repo / "plans" / "w" / "PLAN.yml"
    moved.write_text(moved.read_text().replace("status: approved", "status: pending_approval"))
    commit_all(repo, "move v to w", AGENT)
    lab.approve("plans/w/PLAN.yml")
    lab.run()
    lab.run()
    assert lab.calls() == [["v"]]  # the started run, once; never the copy
    assert _outcomes(lab) == ["plangate: complete plans/v"]
    rows = lab.status()
    assert rows["plans/v"]["status"] == "completed"
    assert "E_ALREADY_EXECUTED" in str(rows["plans/w"]["reason"])
    # what ran is the start commit's content: the outcome carries Alice's approval block
    done = git(repo, "show", "HEAD:plans/v/PLAN.yml")
    assert "status: completed" in done and "by: alice@example.com" in done


def test_a_run_whose_outcome_landed_is_not_taken_up_again_when_its_folder_goes(
    tmp_path: Path, repo: Path
) -> None:
    lab = _Lab(tmp_path, repo)
    lab.run(kill_after="plangate: complete plans/v")  # killed before its job row was cleared
    assert lab.calls() == [["v"]]
    git(repo, "checkout", "-q", "HEAD", "--", ".")  # the tree as the branch has it
    git(repo, "rm", "-rqf", "plans/v")
    git(repo, "commit", "-qm", "remove v", env=identity(*AGENT))
    lab.run()
    lab.run()
    assert lab.calls() == [["v"]]
    assert _outcomes(lab) == ["plangate: complete plans/v"]
    assert lab.subjects()[0] == "remove v"  # nothing of the controller's since
    assert "plans/v" not in lab.status()
