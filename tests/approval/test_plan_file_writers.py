"""Who writes a plan by committing its own plan file (round 71, r72comment; docs/approvals.md,
"Who changed the content").

A commit that changes a plan file with any byte other than a plain status line change
(``status: approved``, the bytes ``plangate approve`` writes) makes its committer a writer of
the plan's own folder, as any other file of that folder does (round 11): a comment, a blank
line, a reindent, a ``metadata:`` block or a mode made executable beside an approval is
``E_SELF_APPROVAL``. The controller's owned blocks (``approval:``, ``execution:``) are set
aside: a human's edit there is judged by the owned record (``E_OWNED_BLOCK_CHANGED``, and a
forged vote counts for nothing, tests/approval/test_quorum.py), not as writing of that
version; but its bytes could become plan content, so its committer writes every later
version of the plan. The same on a merged branch and in a merge's own edit (judged against
each parent's file and git's join of them).

Seen before the fix (tests/adversarial/test_round71_approve_swapcarry.py, ``b-cmt-*``): Bob's
comment line in the agent's PLAN.yml made him no writer and his approval ran; his action
committed commented out and uncommented by the agent ran on his lone approval."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.git import ownrecord
from controller.git.records import CommitRecord
from tests.support.gitenv import BOT, commit_all, identity, run_cli
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    edit_status,
    git,
    run_once,
    subjects,
    submitted,
)

FILE = "plans/greet/PLAN.yml"


def _refusal(repo: Path) -> str:
    return git(repo, "log", "-1", "--format=%b", "--grep=^plangate: refuse").strip()


def _ran(repo: Path) -> bool:
    return "plangate: start plans/greet" in subjects(repo)


def _comment(text: str) -> str:
    return text + "# bob: checked\n"


def _blank(text: str) -> str:
    return text.replace("actions:\n", "\nactions:\n", 1)


def _reindent(text: str) -> str:
    return text.replace("available_tools:\n  - name: greet\n", "available_tools:\n- name: greet\n")


def _metadata(text: str) -> str:
    return text + 'metadata:\n  note: "bob was here"\n'


def _trailing(text: str) -> str:
    return text.replace("status: approved", "status: approved  # bob", 1)


EDITS: dict[str, Callable[[str], str]] = {
    "comment": _comment,
    "blank-line": _blank,
    "reindent": _reindent,
    "metadata": _metadata,
    "status-comment": _trailing,
}


def _approve_with(repo: Path, edit: Callable[[str], str] | None, who: tuple[str, str]) -> None:
    edit_status(repo, "greet", "approved")
    path = repo / FILE
    if edit is not None:
        new = edit(path.read_text())
        assert new != path.read_text()
        path.write_text(new)
    commit_all(repo, "approve greet", who)


@pytest.mark.parametrize("how", list(EDITS))
def test_bytes_beside_an_approval_make_a_writer(repo: Path, how: str) -> None:
    submitted(repo)
    _approve_with(repo, EDITS[how], BOB)
    run_once(repo)
    assert not _ran(repo)
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


def test_a_mode_made_executable_beside_an_approval_makes_a_writer(repo: Path) -> None:
    submitted(repo)
    (repo / FILE).chmod(0o755)
    _approve_with(repo, None, BOB)
    assert git(repo, "ls-tree", "HEAD", FILE).startswith("100755")
    run_once(repo)
    assert not _ran(repo)
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


def test_a_plain_approval_writes_nothing(repo: Path) -> None:
    """``edit_status`` is what ``plangate approve`` writes (``yamlio.set_scalar`` of
    ``plan.status``: the value alone, its quotes and the line's comment kept)."""
    submitted(repo)
    _approve_with(repo, None, BOB)
    assert git(repo, "diff", "--numstat", "HEAD^", "HEAD").split()[:2] == ["1", "1"]
    run_once(repo)
    assert _ran(repo), _refusal(repo)


def test_the_approve_command_writes_a_plain_status_line(repo: Path) -> None:
    submitted(repo)
    done = run_cli("approve", "plans/greet", cwd=repo, env=identity(*BOB))
    assert done.returncode == 0, done.stdout + done.stderr
    diff = git(repo, "diff", "-U0", "HEAD^", "HEAD", "--", FILE)
    changed = [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    assert changed == ["-  status: pending_approval", "+  status: approved"], diff
    run_once(repo)
    assert _ran(repo), _refusal(repo)


def test_an_approval_beside_the_agents_status_comment_writes_nothing(repo: Path) -> None:
    """The status value changed in place, the agent's comment on its line kept."""
    path = repo / FILE
    submitted(repo)
    path.write_text(
        path.read_text().replace("status: pending_approval", "status: pending_approval  # agent")
    )
    commit_all(repo, "agent: a note on the status", AGENT)
    run_once(repo)
    _approve_with(repo, None, BOB)
    run_once(repo)
    assert _ran(repo), _refusal(repo)


#: The agent's status key as the reader also reads it (round 75, r75status).
RESPELT: dict[str, Callable[[str], str]] = {
    "x-escape": lambda t: t.replace("  status:", '  "\\x73tatus":', 1),
    "explicit": lambda t: t.replace(
        "  status: pending_approval", "  ? status\n  : pending_approval"
    ),
    "next-line": lambda t: t.replace(
        "  status: pending_approval", "  status:\n    pending_approval"
    ),
}


@pytest.mark.parametrize("how", list(RESPELT))
def test_the_approve_command_under_any_spelling_of_the_key_writes_nothing(
    repo: Path, how: str
) -> None:
    """``plangate approve`` changes the value alone where the parser reads it; its own
    controller must not count that edit as its maker's content (round 75)."""
    submitted(repo)
    path = repo / FILE
    path.write_text(RESPELT[how](path.read_text()))
    commit_all(repo, "agent: the key respelled", AGENT)
    run_once(repo)
    done = run_cli("approve", "plans/greet", cwd=repo, env=identity(*BOB))
    assert done.returncode == 0, done.stdout + done.stderr
    run_once(repo)
    assert _ran(repo), _refusal(repo)


def _is_controller(record: CommitRecord) -> bool:
    return record.author.email == BOT[1]


def _runner(repo: Path) -> ownrecord.GitRunner:
    def run(*args: str) -> str | None:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, check=False)
        return done.stdout.decode() if done.returncode == 0 else None

    return run


OWNED = "approval:\n  status: approved\n  note: bob says yes\n"


def test_an_edit_of_the_approval_block_alone_is_no_writing_but_is_flagged(repo: Path) -> None:
    submitted(repo)
    _approve_with(repo, lambda t: t + OWNED, BOB)
    notes = ownrecord.record_notes(_runner(repo), "HEAD", FILE, _is_controller)
    assert [n for n in notes if n.startswith("E_OWNED_BLOCK_CHANGED")], notes
    run_once(repo)
    assert _ran(repo), _refusal(repo)


WRAPPED = '    note: |\n      - id: 2\n        tool: greet\n        why: "bob: and this"\n'
ACTION = '  - id: 2\n    tool: greet\n    why: "bob: and this"\n    params:\n      who: bob\n'


@pytest.mark.parametrize("block", ["approval", "execution"])
def test_action_text_in_an_owned_block_moved_by_the_agent_stays_his(repo: Path, block: str) -> None:
    """Round 11's wrapped text, the wrapper an owned block: Bob's action text sits in
    ``approval:``/``execution:`` (set aside: no writing of that version); the agent moves it
    into ``actions:`` (a new version, hashed content the agent's); Bob approves it alone."""
    path = repo / FILE
    submitted(repo)
    path.write_text(path.read_text() + f"{block}:\n  status: pending\n  bob:\n" + WRAPPED)
    commit_all(repo, "bob: a note for the record", BOB)
    text = path.read_text()
    text = text[: text.index(f"\n{block}:") + 1]
    path.write_text(text.replace("\nfrozen:", "\n" + ACTION + "frozen:", 1))
    commit_all(repo, "agent: take bob's action", AGENT)
    run_once(repo)
    edit_status(repo, "greet", "approved")
    commit_all(repo, "approve greet", BOB)
    run_once(repo)
    assert not _ran(repo)
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


def test_action_text_in_an_owned_block_unwrapped_with_a_move_stays_his(repo: Path) -> None:
    """The same, the agent unwrapping it in the commit that moves the plan's folder: the
    owned block's editor goes with the plan (``Lifecycle._hold_moved``)."""
    path = repo / FILE
    submitted(repo)
    path.write_text(path.read_text() + "approval:\n  status: pending\n  bob:\n" + WRAPPED)
    commit_all(repo, "bob: a note for the record", BOB)
    git(repo, "mv", "plans/greet", "plans/moved")
    moved = repo / "plans/moved/PLAN.yml"
    text = moved.read_text()
    text = text[: text.index("\napproval:") + 1]
    moved.write_text(text.replace("\nfrozen:", "\n" + ACTION + "frozen:", 1))
    commit_all(repo, "agent: move it, take bob's action", AGENT)
    run_once(repo)
    edit_status(repo, "moved", "approved")
    commit_all(repo, "approve moved", BOB)
    run_once(repo)
    assert "plangate: start plans/moved" not in subjects(repo)
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


def test_a_comment_beside_an_approval_on_a_merged_branch_makes_a_writer(repo: Path) -> None:
    submitted(repo)
    git(repo, "switch", "-q", "-c", "review")
    _approve_with(repo, _comment, BOB)
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "--no-ff", "-q", "-m", "merge review", "review", env=identity(*BOB))
    run_once(repo)
    assert not _ran(repo)
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


def test_a_plain_approval_on_a_merged_branch_writes_nothing(repo: Path) -> None:
    submitted(repo)
    git(repo, "switch", "-q", "-c", "review")
    _approve_with(repo, None, BOB)
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "--no-ff", "-q", "-m", "merge review", "review", env=identity(*BOB))
    run_once(repo)
    assert _ran(repo), _refusal(repo)


@pytest.mark.parametrize("edit", [None, _comment], ids=["plain", "comment"])
def test_a_merges_own_edit_of_the_plan_file(repo: Path, edit: Callable[[str], str] | None) -> None:
    """Bob merges the agent's branch (a note beside the plan) and approves in the merge
    commit itself: judged against git's join of the parents, a plain status line writes
    nothing; a comment with it makes him a writer."""
    submitted(repo)
    git(repo, "switch", "-q", "-c", "work")
    (repo / "plans/greet/NOTES.md").write_text("agent: context\n")
    commit_all(repo, "agent: notes", AGENT)
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "--no-ff", "--no-commit", "-q", "work", env=identity(*BOB))
    _approve_with(repo, edit, BOB)
    assert len(git(repo, "log", "-1", "--format=%P").split()) == 2
    run_once(repo)
    if edit is None:
        assert _ran(repo), _refusal(repo)
    else:
        assert not _ran(repo)
        assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


def test_a_plain_approval_by_another_is_unaffected_by_a_comment_of_alices(repo: Path) -> None:
    """The writer is the commenter alone: Bob's plain approval after Alice's comment runs."""
    submitted(repo)
    path = repo / FILE
    path.write_text(path.read_text() + "# alice: looks fine\n")
    commit_all(repo, "alice: a comment", ALICE)
    run_once(repo)
    _approve_with(repo, None, BOB)
    run_once(repo)
    assert _ran(repo), _refusal(repo)
