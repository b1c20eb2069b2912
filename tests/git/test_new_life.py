"""A plan moved in ONE commit onto the path of a plan the controller recorded, frozen as
another plan (``frozen.hash``), starts a new life there in the history index too (round 73,
r73approve; docs/plan-format.md, a path's life): a swap of two folders' files, or ``git rm -r``
of the path's folder and ``git mv`` of another onto it. The path's state is the moved plan's,
as the same two steps in two commits make it, not the recorded plan's ``completed``,
``rejected`` or ``failed``: an approval of the moved plan there runs it once, and the
content that ran, moved away, never runs again.

Seen before the fix: tests/adversarial/test_round73_approve_movemerges.py
(``h-swap-ran-bob``, ``h-mvover-ran-bob``, ``h-swap-rej-bob``, ``h-swap-failed-bob``): the
moved plan kept the path's old state; Bob's approval was ``E_ILLEGAL_TRANSITION`` ("approved
(from completed)"), ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from controller.git.planstate import PlanState
from controller.plan import yamlio
from tests.support.gitenv import identity
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    approve,
    commit_all,
    edit_status,
    git,
    run_once,
    subjects,
    write_plan,
)
from tests.support.plantext import greet_plan

OTHER = greet_plan("Other", "Say hello to the team", "team")


def _frozen(repo: Path, slug: str) -> str:
    text = git(repo, "show", f"HEAD:plans/{slug}/PLAN.yml")
    return str(yamlio.read_yaml(text).data["frozen"]["hash"])


def _setup(repo: Path, first: str) -> str:
    """``plans/greet`` and ``plans/other`` frozen; greet then approved by Alice and run
    (``first`` "ran") or rejected by her (``first`` "rejected"). Returns other's hash."""
    write_plan(repo, "greet")
    write_plan(repo, "other", OTHER)
    commit_all(repo, "agent: two plans", AGENT)
    run_once(repo)
    if first == "ran":
        approve(repo, "greet", ALICE)
    else:
        edit_status(repo, "greet", "rejected")
        commit_all(repo, "reject greet", ALICE)
    run_once(repo)
    return _frozen(repo, "other")


def _swap(repo: Path) -> None:
    one, two = repo / "plans/greet/PLAN.yml", repo / "plans/other/PLAN.yml"
    a, b = one.read_bytes(), two.read_bytes()
    one.write_bytes(b)
    two.write_bytes(a)
    commit_all(repo, "agent: swap greet and other", AGENT)


def _move_over(repo: Path) -> None:
    git(repo, "rm", "-q", "-r", "plans/greet")
    git(repo, "mv", "plans/other", "plans/greet")
    commit_all(repo, "agent: replace plans/greet", AGENT)


def _state(repo: Path, tmp_path: Path, plan: str) -> PlanState:
    index = HistoryIndex(None, plans_dir="plans", controller_email="plangate@localhost")
    try:
        index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
        return index.plans[plan]
    finally:
        index.close()


def _starts(repo: Path, plan: str) -> int:
    return subjects(repo).count(f"plangate: start {plan}")


@pytest.mark.parametrize("how", ["swap", "move-over"])
def test_a_plan_put_onto_a_ran_plans_path_in_one_commit_is_a_new_life(
    repo: Path, tmp_path: Path, how: str
) -> None:
    other = _setup(repo, "ran")
    assert _starts(repo, "plans/greet") == 1
    (_swap if how == "swap" else _move_over)(repo)
    state = _state(repo, tmp_path, "plans/greet")
    # the moved plan's state (its source's, pending), not the path's run
    assert state.status == "pending_approval", state
    assert state.hash == other and state.request is None and state.approver is None, state
    assert any("a new life" in note for note in state.notes), state.notes
    approve(repo, "greet", BOB)
    run_once(repo)
    assert _starts(repo, "plans/greet") == 2, subjects(repo)[:6]
    assert git(repo, "log", "-1", "--format=%(trailers:key=Plan-Hash,valueonly)", "--grep",
               "^plangate: start plans/greet").strip() == other  # fmt: skip
    assert _starts(repo, "plans/other") == 0


def test_a_plan_swapped_onto_a_rejected_plans_path_runs_on_its_approval(
    repo: Path, tmp_path: Path
) -> None:
    _setup(repo, "rejected")
    _swap(repo)
    assert _state(repo, tmp_path, "plans/greet").status == "pending_approval"
    approve(repo, "greet", BOB)
    run_once(repo)
    assert _starts(repo, "plans/greet") == 1, subjects(repo)[:6]


def test_the_ran_content_swapped_away_does_not_run_again(repo: Path, tmp_path: Path) -> None:
    _setup(repo, "ran")
    _swap(repo)
    edit_status(repo, "other", "pending_approval")
    commit_all(repo, "agent: again", AGENT)
    approve(repo, "other", BOB)
    run_once(repo)
    assert _starts(repo, "plans/other") == 0
    body = git(repo, "log", "-1", "--format=%b", "--grep=^plangate: refuse plans/other")
    assert "E_ALREADY_EXECUTED" in body, body


def test_a_run_paused_at_its_gate_keeps_the_path(repo: Path, tmp_path: Path) -> None:
    """A run executing or paused at a gate is the path's until its outcome (written back where
    it started): a plan swapped onto it is no new life of the index."""
    from tests.support.gitkit import GATED, head_plan

    write_plan(repo, "greet", GATED)
    write_plan(repo, "other", OTHER)
    commit_all(repo, "agent: two plans", AGENT)
    run_once(repo)
    approve(repo, "greet", ALICE)
    run_once(repo)
    assert head_plan(repo)["plan"]["status"] == "awaiting_approval"
    _swap(repo)
    state = _state(repo, tmp_path, "plans/greet")
    assert state.status == "awaiting_approval", state
    assert not any("a new life" in note for note in state.notes), state.notes


@pytest.mark.parametrize("how", ["swap", "move-over", "two-commits"])
def test_a_new_life_brought_by_a_merge(repo: Path, tmp_path: Path, how: str) -> None:
    """The same replacement made on a branch and merged ``--no-ff``: what the merge brings
    onto the path is the moved plan, a new life as on the line (before: the merge's file read
    as an edit of the ran plan, Bob's approval ignored, "approved (from completed)")."""
    other = _setup(repo, "ran")
    git(repo, "checkout", "-q", "-b", "reuse")
    if how == "two-commits":
        git(repo, "rm", "-q", "-r", "plans/greet")
        commit_all(repo, "agent: remove greet", AGENT)
        git(repo, "mv", "plans/other", "plans/greet")
        commit_all(repo, "agent: other to greet", AGENT)
    else:
        (_swap if how == "swap" else _move_over)(repo)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge reuse", "reuse", env=identity(*AGENT))
    state = _state(repo, tmp_path, "plans/greet")
    assert state.status == "pending_approval", state
    assert state.hash == other, state
    approve(repo, "greet", BOB)
    run_once(repo)
    assert _starts(repo, "plans/greet") == 2, subjects(repo)[:6]
    assert _starts(repo, "plans/other") == 0


def _move_over_edited(repo: Path) -> None:
    """``git rm -r`` of greet's folder and ``git mv`` of other onto it with its ``why`` edited
    in the same commit: git pairs the two below 100%, the moved file keeps other's frozen hash."""
    git(repo, "rm", "-q", "-r", "plans/greet")
    git(repo, "mv", "plans/other", "plans/greet")
    path = repo / "plans/greet/PLAN.yml"
    path.write_text(path.read_text().replace('why: "say hello"', 'why: "say hello (moved)"'))
    commit_all(repo, "agent: replace plans/greet, edited", AGENT)


@pytest.mark.parametrize("first", ["ran", "rejected"])
@pytest.mark.parametrize("where", ["line", "merge"])
def test_a_plan_moved_with_an_edit_onto_the_path_is_a_new_life(
    repo: Path, tmp_path: Path, first: str, where: str
) -> None:
    """Round 75 (r75simmove): the move made with an edit of the moved plan, on the line or on
    a branch merged ``--no-ff``, is a new life as the byte-exact move is (before: the path kept
    ``completed``/``rejected``, the move's ``pending_approval`` and Bob's approval ignored)."""
    _setup(repo, first)
    if where == "merge":
        git(repo, "checkout", "-q", "-b", "reuse")
    _move_over_edited(repo)
    if where == "merge":
        git(repo, "checkout", "-q", "main")
        git(repo, "merge", "-q", "--no-ff", "-m", "merge reuse", "reuse", env=identity(*AGENT))
    state = _state(repo, tmp_path, "plans/greet")
    assert state.status == "pending_approval", state
    assert any("a new life" in note for note in state.notes), state.notes
    run_once(repo)  # the edit re-freezes it, as any edit of a pending plan
    approve(repo, "greet", BOB)
    run_once(repo)
    assert _starts(repo, "plans/greet") == (2 if first == "ran" else 1), subjects(repo)[:6]
    assert _starts(repo, "plans/other") == 0


def test_an_approval_moved_with_an_edit_runs_nothing(repo: Path, tmp_path: Path) -> None:
    """The move carries no approval onto content no one approved: Alice approved other, the
    agent moved it with an edit onto the ran path, its file still saying ``approved``. A new
    life, but the approval was of other's version: the edited plan waits for its own."""
    _setup(repo, "ran")
    approve(repo, "other", ALICE)  # no pass between: the move comes first
    git(repo, "rm", "-q", "-r", "plans/greet")
    git(repo, "mv", "plans/other", "plans/greet")
    path = repo / "plans/greet/PLAN.yml"
    path.write_text(path.read_text().replace('why: "say hello"', 'why: "say hello (moved)"'))
    commit_all(repo, "agent: replace plans/greet, edited", AGENT)
    run_once(repo)
    run_once(repo)
    assert _starts(repo, "plans/greet") == 1, subjects(repo)[:6]
    assert _starts(repo, "plans/other") == 0


THIRD = greet_plan("Third", "Say hello to everyone", "everyone")


def _edited(text: str) -> str:
    return text.replace('why: "say hello"', 'why: "say hello (moved)"')


def _exchange(repo: Path, ring: list[str], edit: set[str]) -> None:
    """``ring[i]``'s file moved to ``ring[i + 1]`` (the last to the first) in ONE commit, no
    file removed; the content arriving at each folder in ``edit`` has its ``why`` edited."""
    paths = [repo / f"plans/{slug}/PLAN.yml" for slug in ring]
    texts = [path.read_text() for path in paths]
    for i, path in enumerate(paths):
        text = texts[i - 1]
        path.write_text(_edited(text) if ring[i] in edit else text)
    commit_all(repo, f"agent: exchange {', '.join(ring)}, edited", AGENT)


@pytest.mark.parametrize("first", ["ran", "rejected"])
@pytest.mark.parametrize("where", ["line", "merge"])
@pytest.mark.parametrize("edit", ["both", "moved-in"])
def test_a_plan_swapped_with_an_edit_onto_the_path_is_a_new_life(
    repo: Path, tmp_path: Path, first: str, where: str, edit: str
) -> None:
    """Round 76 (r76swapedit): the two files exchanged in ONE commit with the ``why`` edited
    (of both, or only of the plan moved onto the ran path), no plan file removed, on the line
    or on a branch merged ``--no-ff``: the content left the path by being overwritten, a move
    with an edit, a new life (before: the path kept ``completed``/``rejected``, the moved
    plan's ``pending_approval`` and Bob's approval ignored, "from completed")."""
    _setup(repo, first)
    if where == "merge":
        git(repo, "checkout", "-q", "-b", "reuse")
    _exchange(repo, ["greet", "other"], {"greet", "other"} if edit == "both" else {"greet"})
    if where == "merge":
        git(repo, "checkout", "-q", "main")
        git(repo, "merge", "-q", "--no-ff", "-m", "merge reuse", "reuse", env=identity(*AGENT))
    state = _state(repo, tmp_path, "plans/greet")
    assert state.status == "pending_approval", state
    assert any("a new life" in note for note in state.notes), state.notes
    run_once(repo)  # the edit re-freezes it, as any edit of a pending plan
    approve(repo, "greet", BOB)
    run_once(repo)
    assert _starts(repo, "plans/greet") == (2 if first == "ran" else 1), subjects(repo)[:6]
    assert _starts(repo, "plans/other") == 0


def test_three_plans_rotated_with_an_edit_start_a_new_life(repo: Path, tmp_path: Path) -> None:
    """greet -> other -> third -> greet in ONE commit, each edited: third's content, moved
    onto the ran path, is a new life there; the ran content moved away never runs again."""
    write_plan(repo, "third", THIRD)
    commit_all(repo, "agent: a third plan", AGENT)
    _setup(repo, "ran")
    _exchange(repo, ["greet", "other", "third"], {"greet", "other", "third"})
    state = _state(repo, tmp_path, "plans/greet")
    assert state.status == "pending_approval", state
    assert any("a new life" in note for note in state.notes), state.notes
    run_once(repo)
    approve(repo, "greet", BOB)
    run_once(repo)
    assert _starts(repo, "plans/greet") == 2, subjects(repo)[:6]
    assert _starts(repo, "plans/other") == _starts(repo, "plans/third") == 0


def test_an_edited_copy_over_a_ran_path_is_no_move(repo: Path, tmp_path: Path) -> None:
    """Only content that LEAVES its path moves: other edited in place and an edited copy of
    it written over the ran greet in the same commit is an edit of greet's plan (its record
    kept: ``completed``, the new content never frozen), not a new life of greet's path."""
    _setup(repo, "ran")
    one, two = repo / "plans/greet/PLAN.yml", repo / "plans/other/PLAN.yml"
    text = two.read_text()
    two.write_text(text.replace('why: "say hello"', 'why: "say hello (kept)"'))
    one.write_text(_edited(text))
    commit_all(repo, "agent: other edited, and copied over greet", AGENT)
    state = _state(repo, tmp_path, "plans/greet")
    assert state.status == "completed", state
    assert not any("a new life" in note for note in state.notes), state.notes


def test_the_recorded_blob_is_what_git_holds_at_the_controllers_commit(
    repo: Path, tmp_path: Path
) -> None:
    """Each row keeps the blob the controller's last change of the plan file left
    (``controller_blob``), which the swap check above compares with instead of reading the
    plans folder's tree at that commit (a cold scan read it for every human change: issue
    17). Through a run, a swap, a new life run again and a rename to PLAN.yaml, it is what
    git holds at the path (or its other name) in ``controller_commit``."""
    _setup(repo, "ran")
    _swap(repo)
    approve(repo, "greet", BOB)
    run_once(repo)
    git(repo, "mv", "plans/other/PLAN.yml", "plans/other/PLAN.yaml")
    commit_all(repo, "agent: other as PLAN.yaml", AGENT)
    run_once(repo)
    gitrepo = GitRepo(repo)
    index = HistoryIndex(None, plans_dir="plans", controller_email="plangate@localhost")
    try:
        index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
        recorded = {p: s for p, s in index.plans.items() if s.controller_commit}
        assert set(recorded) == {"plans/greet", "plans/other"}, index.plans
        for state in recorded.values():
            names = [state.file, state.file.replace(".yaml", ".yml")]
            held = [gitrepo.blob_sha(state.controller_commit, name) for name in names]
            assert state.controller_blob == next(filter(None, held)), state
    finally:
        index.close()
    assert _starts(repo, "plans/greet") == 2
