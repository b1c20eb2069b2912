"""A status value changed in place is no writing of the plan, however its key is spelled
(round 75, r75status; docs/approvals.md, "Who changed the content"): the history index
decides it on what the parser reads (``yamlio.scalar_alone_changed``: nothing but the
``plan.status`` value's span differs), not on the spelling of ``status:``. Any byte outside
that span (a comment, the key respelled) still makes the committer a writer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from controller.git.planstate import folder_key
from tests.support.gitenv import BOT
from tests.support.gitkit import AGENT, BOB, commit_all, git, submitted

FILE = "plans/greet/PLAN.yml"

#: The agent's status key as the reader also reads it (round 75's layouts).
SPELLINGS: dict[str, Callable[[str], str]] = {
    "x-escape": lambda t: t.replace("  status:", '  "\\x73tatus":', 1),
    "u-escape": lambda t: t.replace("  status:", '  "\\u0073tatus":', 1),
    "explicit": lambda t: t.replace(
        "  status: pending_approval", "  ? status\n  : pending_approval"
    ),
    "next-line": lambda t: t.replace(
        "  status: pending_approval", "  status:\n    pending_approval"
    ),
}


def _bobs_approval(repo: Path, spelling: str, edit: Callable[[str], str]) -> bool:
    """Whether Bob is a writer of the plan's folder after his approval ``edit`` of the
    agent's plan with its status key spelled ``spelling`` (read from history alone)."""
    submitted(repo)
    path = repo / FILE
    path.write_text(SPELLINGS[spelling](path.read_text()))
    commit_all(repo, "agent: the key respelled", AGENT)
    path.write_text(edit(path.read_text()))
    commit_all(repo, "approve greet", BOB)
    index = HistoryIndex(repo.parent / "index.sqlite", plans_dir="plans", controller_email=BOT[1])
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    return BOB[1] in index.authors.get(folder_key("plans/greet"), frozenset())


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_the_value_changed_in_place_under_any_key_spelling_writes_nothing(
    repo: Path, spelling: str
) -> None:
    assert not _bobs_approval(repo, spelling, lambda t: t.replace("pending_approval", "approved"))


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_a_byte_beside_the_value_still_writes(repo: Path, spelling: str) -> None:
    def commented(text: str) -> str:
        return text.replace("pending_approval", "approved  # bob: ok")

    assert _bobs_approval(repo, spelling, commented)


def test_the_key_respelled_with_the_approval_writes(repo: Path) -> None:
    def respelled(text: str) -> str:
        return text.replace('"\\x73tatus": pending_approval', '"status": approved')

    assert _bobs_approval(repo, "x-escape", respelled)
