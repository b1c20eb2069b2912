"""A plan's author may withdraw it after someone edited it on a merged branch (round 127,
atk127a, ``author-right-lost-to-edit-on-merged-branch``).

The authors who may withdraw a plan are the originators of the version at stake and of the
versions it was edited from at that plan (docs/approvals.md). Only the first-parent line's
commits noted what a version was edited from, and a version edited away on a merged branch
counted as no making: the agent's v1, written on its pull request and changed there by Alice
(a commit of hers, or new bytes in her ``--no-commit`` merge inside the branch) before main
ever held the plan, left main's plan made "from nothing" by Alice. The agent's rejection was
``E_APPROVER_NOT_ALLOWED``, Bob's approval ran Alice's v2, the fresh-clone audit called the
start valid and ``plangate check --as`` predicted it. The same commits landed as a
fast-forward kept the agent's right. Now a merge reads what its merged branches edited the
version from (``Lifecycle._merged_lineage``, ``_kept_by_edit``), at any depth, a merge's own
bytes made of every parent's content; an edit taken back there still leaves its maker
nothing (round 20)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.settings.models import default_state_dir
from tests.support.gitenv import commit_all, git, identity, run_cli
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    MALLORY,
    PLAN,
    edit_status,
    status_row,
    subjects,
    write_plan,
)

DAVE = ("Dave", "dave@example.com")  # a human plan author, no approver
CONFIG = """\
repo: repo
approval:
  approvers: ["alice@example.com", "*@ops.example.com"]
tools:
  greet: {kind: echo}
"""


def _text(who: str) -> str:
    """A version of the plan: the greeting's param says ``who``."""
    return PLAN.replace("world   # trailing", f"{who}   # trailing")


def _write(repo: Path, who: tuple[str, str], param: str) -> None:
    write_plan(repo, text=_text(param))
    commit_all(repo, f"{who[0]}: greet says {param}", who)


def _branch(repo: Path, name: str, base: str) -> None:
    git(repo, "checkout", "-q", "-b", name, base)


def _merge(repo: Path, into: str, branch: str, who: tuple[str, str] = BOB) -> None:
    git(repo, "checkout", "-q", into)
    git(repo, "merge", "-q", "--no-ff", "-m", f"merge {branch}", branch, env=identity(*who))


def _note(repo: Path, name: str) -> None:
    """A commit of the agent's outside the plan (an integration branch's own work)."""
    (repo / f"{name}.txt").write_text(f"{name}\n")
    commit_all(repo, f"agent: {name}", AGENT)


def _own_merge(repo: Path, into: str, branch: str, who: tuple[str, str], param: str) -> None:
    """``who`` merges ``branch`` into ``into`` ``--no-commit`` and writes a version of her
    own into the merge (a conflict resolved by hand ends the same way)."""
    git(repo, "checkout", "-q", into)
    git(repo, "merge", "-q", "--no-ff", "--no-commit", branch, env=identity(*who), check=False)
    write_plan(repo, text=_text(param))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-edit", "-m", f"merge {branch}", env=identity(*who))


# -- the histories: each leaves main holding plans/greet, made on merged branches --------


def _edited_on_the_branch(repo: Path) -> None:
    """The agent's v1 on its pull request, Alice's edit there, Bob's ``--no-ff`` merge."""
    _branch(repo, "pr", "main")
    _write(repo, AGENT, "v1")
    _write(repo, ALICE, "v2")
    _merge(repo, "main", "pr")


def _edited_two_levels_down(repo: Path) -> None:
    """The same on ``m``, forked from an integration branch ``mid``; Bob merges ``m`` into
    ``mid`` and ``mid`` into main (a merge of a merge)."""
    _branch(repo, "mid", "main")
    _note(repo, "mid")
    _branch(repo, "m", "mid")
    _write(repo, AGENT, "v1")
    _write(repo, ALICE, "v2")
    _merge(repo, "mid", "m")
    _merge(repo, "main", "mid")


def _edited_in_an_inner_merge(repo: Path) -> None:
    """Alice merges the agent's ``m`` into ``mid`` ``--no-commit`` and writes v2 there."""
    _branch(repo, "mid", "main")
    _note(repo, "mid")
    _branch(repo, "m", "mid")
    _write(repo, AGENT, "v1")
    git(repo, "checkout", "-q", "mid")
    _note(repo, "mid-2")  # so that the inner merge is a merge
    _own_merge(repo, "mid", "m", ALICE, "v2")
    _merge(repo, "main", "mid")


def _edited_three_levels_down(repo: Path) -> None:
    """Alice's edit on ``low``, merged into ``m``, into ``mid``, into main, all by Bob."""
    _branch(repo, "mid", "main")
    _note(repo, "mid")
    _branch(repo, "m", "mid")
    _note(repo, "m")
    _branch(repo, "low", "m")
    _write(repo, AGENT, "v1")
    _write(repo, ALICE, "v2")
    _merge(repo, "m", "low")
    _merge(repo, "mid", "m")
    _merge(repo, "main", "mid")


def _agent_edits_mallorys_v1(repo: Path) -> None:
    """Mallory writes v1 on the branch, the agent edits it there, Bob merges."""
    _branch(repo, "pr", "main")
    _write(repo, MALLORY, "v1")
    _write(repo, AGENT, "v2")
    _merge(repo, "main", "pr")


def _add_add_resolved_by_hand(repo: Path) -> None:
    """Dave adds plans/greet on ``a``, the agent adds it with other bytes on ``b``; Alice
    merges both into ``mid``, resolving the add/add by hand (v3); Bob merges ``mid``."""
    _branch(repo, "a", "main")
    _write(repo, DAVE, "va")
    _branch(repo, "b", "main")
    _write(repo, AGENT, "vb")
    _branch(repo, "mid", "main")
    _note(repo, "mid")
    _merge(repo, "mid", "a", ALICE)
    _own_merge(repo, "mid", "b", ALICE, "v3")
    _merge(repo, "main", "mid")


Build = Callable[[Path], None]
WITHDRAWN: list[tuple[str, Build, tuple[str, str]]] = [
    ("edited-on-the-branch", _edited_on_the_branch, AGENT),
    ("edited-two-levels-down", _edited_two_levels_down, AGENT),
    ("edited-in-an-inner-merge", _edited_in_an_inner_merge, AGENT),
    ("edited-three-levels-down", _edited_three_levels_down, AGENT),
    ("writer-of-v1", _agent_edits_mallorys_v1, MALLORY),
    ("add-add-first-side", _add_add_resolved_by_hand, DAVE),
    ("add-add-second-side", _add_add_resolved_by_hand, AGENT),
]


# -- what is read ----------------------------------------------------------------------


def _row(repo: Path) -> dict[str, Any]:
    return status_row(repo)


def _reject(repo: Path, who: tuple[str, str]) -> None:
    git(repo, "checkout", "-q", "main")
    edit_status(repo, "greet", "rejected")
    commit_all(repo, f"{who[0]}: rejected greet", who)


def _check_outcome(repo: Path) -> str:
    """``plangate check --as bob`` of Bob's approval on a branch ``ap``: its outcome."""
    _branch(repo, "ap", "main")
    edit_status(repo, "greet", "approved")
    commit_all(repo, "Bob: approved greet", BOB)
    config = repo.parent / "plangate.yml"
    config.write_text(CONFIG)
    result = run_cli(
        "check", "--config", str(config), "--base", "main", "--head", "ap",
        "--as", BOB[1], "--format", "json",
        cwd=repo,
    )  # fmt: skip
    assert result.stdout.strip(), result.stderr
    report = json.loads(result.stdout)
    rows = report if isinstance(report, list) else report.get("plans", [])
    [row] = [r for r in rows if r.get("plan") == "plans/greet"]
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "ap")
    return str(row.get("outcome"))


def _audit(repo: Path) -> dict[str, Any]:
    """``plangate audit --json`` of a fresh clone: git history alone."""
    clone = repo.parent / "clone" / "repo"
    shutil.rmtree(clone.parent, ignore_errors=True)
    clone.parent.mkdir()
    git(repo, "clone", "-q", str(repo), str(clone))
    (clone.parent / "plangate.yml").write_text(CONFIG)
    shutil.rmtree(default_state_dir(clone), ignore_errors=True)
    result = run_cli("audit", "--json", "--config", str(clone.parent / "plangate.yml"))
    assert result.returncode in (0, 1), result.stderr
    return dict(json.loads(result.stdout))


def _starts(repo: Path) -> list[str]:
    return [s for s in subjects(repo) if s.startswith("plangate: start plans/greet")]


def _assert_withdrawn(repo: Path, by: tuple[str, str]) -> None:
    """The plan is ``rejected`` by ``by``; Bob's approval (predicted by ``check --as``, then
    merged) runs nothing; the fresh-clone audit lists the rejection as ``by``'s, flags no
    ignored withdrawal and finds no valid start."""
    row = _row(repo)
    assert row.get("status") == "rejected", row
    assert "E_APPROVER_NOT_ALLOWED" not in json.dumps(row), row
    assert _check_outcome(repo) != "start"
    assert _row(repo).get("status") == "rejected"
    assert not _starts(repo), subjects(repo)
    report = _audit(repo)
    mine = [d for d in report.get("decisions", []) if d.get("plan") == "plans/greet"]
    assert [(d.get("kind"), d.get("by")) for d in mine] == [("reject", by[1])], mine
    flagged = [f for f in report.get("findings", []) if f.get("kind") == "withdraw-not-allowed"]
    assert not flagged, flagged
    runs = [e for e in report.get("executions", []) if e.get("plan") == "plans/greet"]
    assert not [e for e in runs if e.get("approval_valid")], runs


@pytest.mark.parametrize(
    ("build", "author"),
    [pytest.param(build, author, id=name) for name, build, author in WITHDRAWN],
)
@pytest.mark.parametrize("passes", ["a-pass-between", "one-push"])
def test_an_author_may_withdraw_a_plan_edited_on_a_merged_branch(
    repo: Path, build: Build, author: tuple[str, str], passes: str
) -> None:
    """The author of a version the plan was edited from on a merged branch (the agent's v1
    changed by Alice; Mallory's v1 changed by the agent; either side of an add/add that
    Alice resolved by hand) rejects the plan on main: it is withdrawn. ``one-push``: the
    merge and the rejection read by one cold scan, no pass between."""
    build(repo)
    if passes == "a-pass-between":
        assert _row(repo).get("status") == "pending_approval"
    _reject(repo, author)
    _assert_withdrawn(repo, author)


def test_an_edit_taken_back_on_the_branch_leaves_its_maker_nothing(repo: Path) -> None:
    """The agent's v1, Mallory's v2, the agent's v1 again on the branch, merged by Bob:
    Mallory's rejection is ignored and Bob's approval runs the agent's plan (round 20)."""
    _branch(repo, "pr", "main")
    _write(repo, AGENT, "v1")
    _write(repo, MALLORY, "v2")
    _write(repo, AGENT, "v1")
    _merge(repo, "main", "pr")
    _row(repo)
    _reject(repo, MALLORY)
    row = _row(repo)
    assert row.get("status") == "pending_approval", row
    assert f"E_APPROVER_NOT_ALLOWED: {MALLORY[1]}" in json.dumps(row), row
    assert _check_outcome(repo) == "start"
    _row(repo)
    assert _row(repo).get("status") == "completed"
    assert len(_starts(repo)) == 1


def test_a_merger_who_only_merged_gains_nothing(repo: Path) -> None:
    """The agent's v1 and its own edit on the branch, merged ``--no-ff`` by Mallory: she
    made no version, and her rejection is ignored."""
    _branch(repo, "pr", "main")
    _write(repo, AGENT, "v1")
    _write(repo, AGENT, "v2")
    _merge(repo, "main", "pr", MALLORY)
    _row(repo)
    _reject(repo, MALLORY)
    row = _row(repo)
    assert row.get("status") == "pending_approval", row
    assert f"E_APPROVER_NOT_ALLOWED: {MALLORY[1]}" in json.dumps(row), row
