"""A run whose start and pause a ``git reset --hard`` erased and a person's ``git cherry-pick``
put back (copies: author plangate, committer the person, new ids) is closed with a recorded
outcome, then goes on by a resume (round 112, atk112d ``pick-restored-start-stranded``).

The copies are a person's commits (round 58: a commit the controller did not make is
anyone's), so they never count as the controller's start or pause; before, the line read
them as another controller's run: the plan waited for it for good, the hold never lifted and
``abort --force`` made no controller commit. Now one rule covers a merge's second parent
(round 111, tests/service/test_merged_back_run.py) and copies: the held run's erased
commits are back in a form the controller did not make, so it commits ``plangate: fail``
(E_HISTORY_REWRITTEN) and lets go of the hold; a resume approval goes on from the journal.

Real git, a real exec tool, the controller's own passes (``run --once``).
"""

from __future__ import annotations

from pathlib import Path

from tests.service.test_merged_back_run import _Lab
from tests.support.gitenv import ALICE, BOB, commit_all, git, identity


def _approve_as(lab: _Lab, who: tuple[str, str]) -> str:
    text = lab.file.read_text()
    status = next(ln for ln in text.splitlines() if ln.startswith("  status: "))
    lab.file.write_text(text.replace(status, "  status: approved", 1))
    return commit_all(lab.repo, "approve mb", who)


def test_a_start_picked_back_is_closed_then_resumed(tmp_path: Path, repo: Path) -> None:
    lab = _Lab(tmp_path, repo)
    lab.config.write_text(
        lab.config.read_text().replace(
            "[alice@example.com]", "[alice@example.com, bob@ops.example.com]"
        )
    )
    approval = lab.approve()
    lab.once()  # action 1 runs, the run pauses at gate 2
    assert lab.calls() == ["mb-1"]
    tip = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "reset", "-q", "--hard", approval)  # the start and the pause erased
    lab.once()  # held: E_HISTORY_REWRITTEN
    assert lab.status() == "pending_approval"
    git(
        repo,
        "cherry-pick", "--allow-empty", "--keep-redundant-commits", "-X", "theirs",
        f"{approval}..{tip}",
        env=identity(*ALICE),
    )  # fmt: skip
    assert lab.status() == "awaiting_approval"  # the copies' text
    lab.once()
    assert lab.events()[0] == "fail", lab.events()  # the run closed, with its outcome
    assert lab.status() == "failed"
    body = git(repo, "log", "-1", "--format=%B", "--first-parent", "--", "plans/mb")
    assert "E_HISTORY_REWRITTEN" in body and "copies" in body, body
    # Alice committed the copies: bytes in the plan's folder (EXECUTION_LOG.md), so she is
    # its writer (round 11: whoever puts any file into a plan's folder writes its plan) and
    # her resume is refused; another approver's goes on (docs/threat-model.md, round 112)
    lab.approve()
    lab.once()
    assert lab.events()[0] == "refuse", lab.events()
    assert "E_SELF_APPROVAL" in git(repo, "log", "-1", "--format=%B", "--", "plans/mb")
    _approve_as(lab, BOB)  # a resume: goes on from the journal, and pauses at the gate again
    lab.once()
    assert lab.events()[:2] == ["await-approval", "start"], lab.events()
    assert lab.calls() == ["mb-1"]
    _approve_as(lab, BOB)  # the gate
    lab.once()
    assert lab.events()[0] == "complete", lab.events()
    assert lab.calls() == ["mb-1", "mb-2"]  # nothing ran twice


def test_the_audit_says_what_git_alone_can_prove_of_the_closing_fail(
    tmp_path: Path, repo: Path
) -> None:
    """Merged back, the closing ``fail`` names its start (``Closes-Start:``), reachable
    behind the merge: a fresh clone's audit explains it (round 112,
    ``merged-back-fail-unexplained``). Picked back, the start it names is erased for good:
    the audit's finding says so and points to the controller's record."""
    import json
    import subprocess

    from tests.support.gitenv import run_cli

    for how in ("merge", "pick"):
        work = tmp_path / how
        work.mkdir()
        here = work / "repo"
        subprocess.run(["git", "init", "-q", "-b", "main", str(here)], check=True)
        commit_all(here, "init")
        lab = _Lab(work, here)
        approval = lab.approve()
        lab.once()
        tip = git(here, "rev-parse", "HEAD").strip()
        git(here, "reset", "-q", "--hard", approval)
        lab.once()
        if how == "merge":
            git(here, "merge", "-q", "--no-ff", "-X", "theirs", "-m", "restore", tip,
                env=identity(*ALICE))  # fmt: skip
        else:
            git(here, "cherry-pick", "--allow-empty", "--keep-redundant-commits", "-X",
                "theirs", f"{approval}..{tip}", env=identity(*ALICE))  # fmt: skip
        lab.once()
        closing = git(here, "rev-parse", "HEAD").strip()
        assert lab.events()[0] == "fail"
        clone = work / "clone"
        subprocess.run(["git", "clone", "-q", "--no-local", str(here), str(clone)], check=True)
        got = run_cli("audit", "--json", cwd=clone)
        about = [f for f in json.loads(got.stdout)["findings"] if f["commit"] == closing]
        if how == "merge":
            assert about == [], about
        else:
            # read as anyone's commit by git alone: its status change is illegal there too
            (one,) = [f for f in about if f["kind"] == "controller-unexplained"]
            assert "which this history does not hold" in one["detail"], one
            assert "audit --config" in one["detail"], one
