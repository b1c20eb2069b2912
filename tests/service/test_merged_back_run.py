"""A run whose start (and pause) a ``git reset --hard`` erased and a ``git merge --no-ff``
brought back is closed with a recorded outcome, then goes on by a resume (round 111,
atk111d ``merge-restored-start-stranded``).

The merge puts the controller's commits beside the branch's line (its second parent), which
the history index does not read: the plan read as before its start (``pending_approval``,
the merge's ``awaiting_approval`` an illegal transition), every approval refused
E_ALREADY_EXECUTED and ``plangate abort`` answered "nothing to abort", while action 1 had
run. Now the pass that sees the held commits back only through a merge commits
``plangate: fail`` (E_HISTORY_REWRITTEN) for the run and lets go of the hold; a resume
approval goes on from the journal (the paused run pauses at its gate again), nothing run
twice. A reset back to the erased tip restores the run where it was (round 110).

Real git, a real exec tool, the controller's own passes (``run --once``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from controller.service.reconcile import Controller
from controller.settings import load_config
from tests.support.gitenv import AGENT, ALICE, commit_all, git, identity

TOOL = """\
import json, os, sys
with open(os.environ["T_LOG"], "a") as f:
    f.write(sys.argv[1] + "\\n")
print(json.dumps({"ok": sys.argv[1]}))
"""

PLAN = """\
plan:
  name: "mb"
  task: "merged back"
  status: pending_approval
available_tools:
  - name: t
actions:
  - id: 1
    tool: t
    why: "step 1"
    params: {tag: "mb-1"}
  - id: 2
    tool: t
    why: "step 2, after a second look"
    requires_approval: true
    params: {tag: "mb-2"}
"""


class _Lab:
    def __init__(self, tmp_path: Path, repo: Path) -> None:
        self.tmp, self.repo = tmp_path, repo
        (tmp_path / "t.py").write_text(TOOL)
        self.log = tmp_path / "calls.log"
        argv = json.dumps([sys.executable, str(tmp_path / "t.py"), "{tag}"])
        self.config = tmp_path / "plangate.yml"
        self.config.write_text(
            f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
            "identity: {name: plangate, email: plangate@localhost}\n"
            "approval: {approvers: [alice@example.com]}\n"
            f"tools: {{t: {{kind: exec, argv: {argv}, env: {{T_LOG: '{self.log}'}}}}}}\n"
        )
        self.file = repo / "plans" / "mb" / "PLAN.yml"
        self.file.parent.mkdir(parents=True)
        self.file.write_text(PLAN)
        commit_all(repo, "propose mb", AGENT)
        self.once()  # frozen

    def once(self) -> None:
        ctl = Controller(load_config(self.config))
        try:
            ctl.run_once()
        finally:
            ctl.close()

    def approve(self) -> str:
        text = self.file.read_text()
        status = next(ln for ln in text.splitlines() if ln.startswith("  status: "))
        self.file.write_text(text.replace(status, "  status: approved", 1))
        return commit_all(self.repo, "approve mb", ALICE)

    def calls(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def events(self) -> list[str]:
        lines = git(self.repo, "log", "--first-parent", "--format=%s", "--", "plans/mb")
        return [s.split(" ")[1] for s in lines.splitlines() if s.startswith("plangate: ")]

    def status(self) -> str:
        text = git(self.repo, "show", "HEAD:plans/mb/PLAN.yml")
        return next(ln.split(":")[1].strip() for ln in text.splitlines() if "  status:" in ln)


def test_a_start_merged_back_is_closed_then_resumed(tmp_path: Path, repo: Path) -> None:
    lab = _Lab(tmp_path, repo)
    approval = lab.approve()
    lab.once()  # action 1 runs, the run pauses at gate 2
    assert lab.calls() == ["mb-1"]
    assert lab.status() == "awaiting_approval"
    tip = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "reset", "-q", "--hard", approval)  # the start and the pause erased
    lab.once()  # held: E_HISTORY_REWRITTEN (her approval refused E_ALREADY_EXECUTED)
    assert lab.status() == "pending_approval"
    git(repo, "merge", "-q", "--no-ff", "-X", "theirs", "-m", "restore", tip, env=identity(*ALICE))
    lab.once()
    assert lab.events()[0] == "fail", lab.events()  # the run closed, with its outcome
    assert lab.status() == "failed"
    body = git(repo, "log", "-1", "--format=%B", "--first-parent", "--", "plans/mb")
    assert "E_HISTORY_REWRITTEN" in body and "through a merge" in body
    lab.approve()  # a resume: goes on from the journal, and pauses at the gate again
    lab.once()
    assert lab.events()[:2] == ["await-approval", "start"], lab.events()
    assert lab.calls() == ["mb-1"]
    lab.approve()  # the gate
    lab.once()
    assert lab.events()[0] == "complete", lab.events()
    assert lab.calls() == ["mb-1", "mb-2"]  # nothing ran twice
