"""The controller's own record of a plan's blocks (controller/git/ownrecord.py, round 52).

What the controller and ``show`` rely on: the record is read from the controller's own
commits of the plan file, never from the branch's version; with ``events``, only a commit
that wrote the ``execution:`` block counts (a start or a refusal carries the branch's block
over, an agent's edit with it); whose commits are the controller's is the caller's to say.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from controller.git import ownrecord
from controller.git.records import CommitRecord
from tests.support.gitenv import AGENT, BOB, commit_all

CONTROLLER = ("plangate", "plangate@localhost")
FILE = "plans/x/PLAN.yml"

PLAN = """\
plan: {{name: x, task: t, status: {status}}}
actions: [{{id: 1, tool: echo}}]
execution: {{status: {status}, actions: [{{id: 1, status: {step}}}]}}
"""


def _write(repo: Path, message: str, who: tuple[str, str], status: str, step: str) -> str:
    path = repo / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PLAN.format(status=status, step=step))
    return commit_all(repo, message, who)


def _runner(repo: Path) -> ownrecord.GitRunner:
    def git(*args: str) -> str | None:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, check=False)
        return done.stdout.decode() if done.returncode == 0 else None

    return git


def _by_controller(record: CommitRecord) -> bool:
    return record.author.email == CONTROLLER[1]


def _history(repo: Path) -> dict[str, str]:
    """A pause, an agent's edit of the block, an approval, a start carrying the edit over."""
    return {
        "pause": _write(
            repo, "plangate: await-approval plans/x", CONTROLLER, "awaiting_approval", "pending"
        ),
        "edit": _write(repo, "tidy", AGENT, "awaiting_approval", "succeeded"),
        "approve": _write(repo, "approve", BOB, "approved", "succeeded"),
        "start": _write(repo, "plangate: start plans/x", CONTROLLER, "executing", "succeeded"),
    }


def test_the_execution_record_is_the_last_commit_that_wrote_it(repo: Path) -> None:
    shas = _history(repo)
    found = ownrecord.own_record(
        _runner(repo), "HEAD", FILE, _by_controller, events=ownrecord.EXECUTION_EVENTS
    )
    assert found is not None
    assert found.commit == shas["pause"]  # not the start, which carried the agent's edit
    assert found.later == (shas["start"], shas["approve"], shas["edit"])
    assert found.blocks is not None
    assert found.blocks["execution"]["actions"] == [{"id": 1, "status": "pending"}]


def test_any_own_commit_counts_without_events(repo: Path) -> None:
    shas = _history(repo)
    found = ownrecord.own_record(_runner(repo), "HEAD", FILE, _by_controller)
    assert found is not None and found.commit == shas["start"] and found.later == ()


def test_whose_commits_count_is_the_callers(repo: Path) -> None:
    _history(repo)
    found = ownrecord.own_record(
        _runner(repo), "HEAD", FILE, lambda r: False, events=ownrecord.EXECUTION_EVENTS
    )
    assert found is None  # a name alone makes no commit the controller's


def test_up_to_a_revision(repo: Path) -> None:
    shas = _history(repo)
    found = ownrecord.own_record(
        _runner(repo), shas["edit"], FILE, _by_controller, events=ownrecord.EXECUTION_EVENTS
    )
    assert found is not None and found.commit == shas["pause"]
    assert found.later == (shas["edit"],)


LOG = "plans/x/EXECUTION_LOG.md"


def test_shown_record_is_the_controllers_and_flags_a_later_version(repo: Path) -> None:
    """Round 61: what readers show is the controller's record; the agent's later block and log
    are flagged with who wrote them, never shown as the record."""
    shas = _history(repo)
    (repo / LOG).write_text("# the controller's log\n")
    commit_all(repo, "plangate: complete plans/x", CONTROLLER)
    (repo / LOG).write_text("# Approved by alice FORGED\n")
    edit = _write(repo, "rewrite", AGENT, "completed", "succeeded")
    branch = {"execution": {"status": "completed", "actions": [{"id": 1, "status": "succeeded"}]}}
    shown = ownrecord.shown_record(_runner(repo), "HEAD", FILE, _by_controller, branch)
    assert shown.blocks["execution"]["actions"] == [{"id": 1, "status": "pending"}]
    assert shown.blocks["approval"] is None
    assert shown.log == "# the controller's log\n"
    assert len(shown.notes) == 2 and all(edit[:12] in n for n in shown.notes), shown.notes
    assert all(AGENT[1] in n and "E_OWNED_BLOCK_CHANGED" in n for n in shown.notes)
    assert shas["pause"][:12] not in "".join(shown.notes)


def test_shown_record_without_a_controller_commit_is_empty(repo: Path) -> None:
    (repo / "plans/x").mkdir(parents=True)
    (repo / LOG).write_text("# Approved by alice FORGED\n")
    _write(repo, "agent plan", AGENT, "pending_approval", "succeeded")
    shown = ownrecord.shown_record(_runner(repo), "HEAD", FILE, _by_controller, {})
    assert shown.blocks == {"execution": None, "approval": None} and shown.log is None
    assert [n for n in shown.notes if "EXECUTION_LOG.md" in n]
