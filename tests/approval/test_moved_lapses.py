"""The status a moved plan file carries is a status CHANGE of the moved plan (round 72): the
source's state -> the new status, as the same change made in place. A move keeps the frozen
hash, so her decisions follow the version (round 66): a folder move whose new file says
other than ``approved`` takes back the approval the old file held (the lapse: the agent's
cherry-pick of her older review-branch approval onto the moved plan is
``E_APPROVAL_REPLAYED``), and ``rejected`` from an allowed approver withdraws the version
(``E_VERSION_WITHDRAWN`` for another approver's approval of it); from someone who may not
withdraw it, the approval still lapses, the withdrawal is ignored. A move whose file says
``approved`` is an approval of the version moved (round 70), unchanged.

And her lapse made by a rename between ``PLAN.yml`` and ``PLAN.yaml`` on her branch, merged by
another with a merge commit, is dated by her branch commit (the commit that MADE it,
``Lifecycle._set_away_by`` following the folder's two names), not as the merge: her
re-approval committed by the forge right after runs.

Seen before the fix: tests/adversarial/test_round72_approve_lapsemakers.py (``mv-lapse*``,
``mv-reject``, ``mv-reject-bob``, ``h-ren-lapse-br``, ``h-ren-lapse-octo``,
``h-ren-back-lapse-br``)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from controller.plan import yamlio
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    MALLORY,
    edit_status,
    git,
    run_once,
    subjects,
    submitted,
)

FORGE = ("GitHub", "noreply@github.com")


def _commit(
    repo: Path, message: str, who: tuple[str, str], at: int, by: tuple[str, str] | None = None
) -> str:
    """Stage everything; commit as ``who`` (committed by ``by``) dated ``at``."""
    git(repo, "add", "-A")
    return _git(repo, "commit", "-q", "-m", message, who=who, at=at, by=by)


def _git(
    repo: Path, *args: str, who: tuple[str, str], at: int, by: tuple[str, str] | None = None
) -> str:
    by = by or who
    when = f"@{at} +0000"
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": who[0],
        "GIT_AUTHOR_EMAIL": who[1],
        "GIT_COMMITTER_NAME": by[0],
        "GIT_COMMITTER_EMAIL": by[1],
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return git(repo, "rev-parse", "HEAD").strip()


def _after_freeze() -> int:
    """A second after the controller's freeze: the tests date their commits a few seconds
    apart from there (an approval dated before the version's freeze approves an older one)."""
    return int(time.time()) + 1


def _run(repo: Path) -> None:
    """One pass, once the clock is past the dates given to the branch's newest commit."""
    last = max(int(x) for x in git(repo, "log", "-1", "--format=%at %ct").split())
    time.sleep(max(0.0, last + 1 - time.time()))
    run_once(repo)


def _set(path: Path, status: str) -> None:
    path.write_text(
        yamlio.set_scalar(yamlio.read_yaml(path.read_text()), ("plan", "status"), status)
    )


def _moved(repo: Path, status: str) -> None:
    """``git mv plans/greet plans/moved`` and the moved file set to ``status``."""
    git(repo, "mv", "plans/greet", "plans/moved")
    _set(repo / "plans" / "moved" / "PLAN.yml", status)


def _shown(repo: Path, slug: str, name: str = "PLAN.yml") -> dict[str, object]:
    return dict(yamlio.read_yaml(git(repo, "show", f"HEAD:plans/{slug}/{name}")).data)


def _code(repo: Path, slug: str, name: str = "PLAN.yml") -> str | None:
    block = _shown(repo, slug, name).get("approval") or {}
    assert isinstance(block, dict)
    return block.get("code") if block.get("status") == "refused" else None


def _started(repo: Path, slug: str) -> bool:
    return f"plangate: start plans/{slug}" in subjects(repo)


@pytest.mark.parametrize("where", ["line", "merged", "in-merge"])
def test_a_move_setting_pending_lapses_her_approval(repo: Path, where: str) -> None:
    """On the line, on her branch merged ``--no-ff`` by Bob, or written by Bob inside his
    merge of a docs branch (``--no-commit``)."""
    submitted(repo)
    t = _after_freeze()
    git(repo, "checkout", "-q", "-b", "review")
    edit_status(repo, "greet", "approved")
    y = _commit(repo, "lgtm (review)", ALICE, t)  # Y: her approval on her review branch
    git(repo, "checkout", "-q", "main")
    edit_status(repo, "greet", "approved")
    _commit(repo, "approve", ALICE, t + 1)  # X
    if where == "merged":
        git(repo, "checkout", "-q", "-b", "alice/move")
    if where == "in-merge":
        git(repo, "checkout", "-q", "-b", "docs")
        (repo / "NOTES.md").write_text("notes\n")
        _commit(repo, "docs", BOB, t + 2)
        git(repo, "checkout", "-q", "main")
        _git(repo, "merge", "-q", "--no-ff", "--no-commit", "docs", who=BOB, at=t + 2)
        _moved(repo, "pending_approval")
        _commit(repo, "merge docs, move it", BOB, t + 2)  # Bob's objection, in his merge
    else:
        _moved(repo, "pending_approval")
        _commit(repo, "move it, not yet", ALICE, t + 2)  # her decision taken back, by a move
    if where == "merged":
        git(repo, "checkout", "-q", "main")
        _git(repo, "merge", "-q", "--no-ff", "-m", "merge", "alice/move", who=BOB, at=t + 3)
    _git(repo, "cherry-pick", y, who=AGENT, at=t + 4)  # lands on plans/moved (rename pairing)
    plan = _shown(repo, "moved")["plan"]
    assert isinstance(plan, dict) and plan["status"] == "approved"
    _run(repo)
    assert not _started(repo, "moved")
    assert _code(repo, "moved") == "E_APPROVAL_REPLAYED"


def test_her_move_setting_pending_then_her_own_reapproval_runs(repo: Path) -> None:
    """Her own decision after her own lapse made by a move is a new one (the lapse is hers,
    dated when she committed it)."""
    submitted(repo)
    t = _after_freeze()
    edit_status(repo, "greet", "approved")
    _commit(repo, "approve", ALICE, t)
    _moved(repo, "pending_approval")
    _commit(repo, "move it, not yet", ALICE, t + 1)
    _set(repo / "plans" / "moved" / "PLAN.yml", "approved")
    _commit(repo, "Update PLAN.yml", ALICE, t + 2, by=FORGE)
    _run(repo)
    assert _started(repo, "moved"), _shown(repo, "moved")


def _copy_of_moved(repo: Path, t: int) -> None:
    """The agent brings the version back as a copy in a new folder, waiting for approval;
    Bob (an allowed approver) approves the copy."""
    text = (repo / "plans" / "moved" / "PLAN.yml").read_text()
    (repo / "plans" / "again").mkdir()
    (repo / "plans" / "again" / "PLAN.yml").write_text(text)
    _set(repo / "plans" / "again" / "PLAN.yml", "pending_approval")
    _commit(repo, "agent: again", AGENT, t)
    _run(repo)
    edit_status(repo, "again", "approved")
    _commit(repo, "approve again", BOB, t + 1)
    _run(repo)


def test_a_move_setting_rejected_by_an_approver_withdraws_the_version(repo: Path) -> None:
    submitted(repo)
    t = _after_freeze()
    edit_status(repo, "greet", "approved")
    _commit(repo, "approve", ALICE, t)
    _moved(repo, "rejected")
    _commit(repo, "move it, rejected", ALICE, t + 1)
    _run(repo)
    # Bob approves the moved plan: as in place, "approved (from rejected)" is no approval
    _set(repo / "plans" / "moved" / "PLAN.yml", "approved")
    _commit(repo, "approve", BOB, t + 2)
    _run(repo)
    assert not _started(repo, "moved")
    _copy_of_moved(repo, t + 3)
    assert not _started(repo, "again")
    assert _code(repo, "again") == "E_VERSION_WITHDRAWN"


def test_a_move_setting_rejected_by_a_non_approver_withdraws_nothing(repo: Path) -> None:
    """Mallory (no approver, no producer of the version) moves it setting ``rejected``: her
    approval lapses (any status change does), the withdrawal is ignored, and the version is
    not vetoed: Bob's approval of the moved plan runs."""
    submitted(repo)
    t = _after_freeze()
    edit_status(repo, "greet", "approved")
    _commit(repo, "approve", ALICE, t)
    _moved(repo, "rejected")
    _commit(repo, "move it, rejected", MALLORY, t + 1)
    _run(repo)
    assert not _started(repo, "moved")
    _set(repo / "plans" / "moved" / "PLAN.yml", "approved")
    _commit(repo, "approve", BOB, t + 2)
    _run(repo)
    assert _started(repo, "moved"), _shown(repo, "moved")


@pytest.mark.parametrize("back", [False, True], ids=["to-yaml", "back-to-yml"])
def test_a_rename_lapse_merged_by_another_is_dated_by_her_branch_commit(
    repo: Path, back: bool
) -> None:
    old, new = ("PLAN.yaml", "PLAN.yml") if back else ("PLAN.yml", "PLAN.yaml")
    submitted(repo)
    t = _after_freeze()
    if back:
        git(repo, "mv", "plans/greet/PLAN.yml", "plans/greet/PLAN.yaml")
        _commit(repo, "agent: PLAN.yaml", AGENT, t - 1)
        _run(repo)
    _set(repo / "plans" / "greet" / old, "approved")
    _commit(repo, "approve", ALICE, t)
    git(repo, "checkout", "-q", "-b", "alice/rename")
    git(repo, "mv", f"plans/greet/{old}", f"plans/greet/{new}")
    _set(repo / "plans" / "greet" / new, "pending_approval")
    _commit(repo, "name it, not yet", ALICE, t + 1)  # her lapse, made by a rename
    git(repo, "checkout", "-q", "main")
    _git(repo, "merge", "-q", "--no-ff", "-m", "merge", "alice/rename", who=BOB, at=t + 2)
    _set(repo / "plans" / "greet" / new, "approved")
    _commit(repo, f"Update {new}", ALICE, t + 3, by=FORGE)  # her web re-approval
    _run(repo)
    assert _started(repo, "greet"), _shown(repo, "greet", new)
