"""A plan whose committed ``.gitattributes`` hide every line of it from a review is never
frozen, and no approval of it counts (round 113, ``gitattributes-hides-plan-diff``).

The agent commits ``plans/<p>/PLAN.yml -diff`` (or ``binary``, or the forges'
``linguist-generated``) with its plan: ``git log -p`` and the pull request then show
"Binary files differ" or a folded file, and before the fix the controller froze the plan
with no note and ran it on the approval. Real repositories, the real controller."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gitenv import AGENT, commit_all, git
from tests.support.gitkit import approve, controller, head_plan, submitted, write_plan

#: where the attribute is written -> (file, line)
HIDING = {
    "-diff": (".gitattributes", "plans/greet/PLAN.yml -diff\n"),
    "binary": (".gitattributes", "plans/*/PLAN.yml binary\n"),
    "linguist-generated": (".gitattributes", "*.yml linguist-generated=true\n"),
    "nested -diff": ("plans/greet/.gitattributes", "PLAN.yml -diff\n"),
    # as git reads the file, not as a text reader does (round 116)
    "cr-separated -diff": (".gitattributes", "plans/greet/PLAN.yml\r-diff\n"),
    "escaped-pattern -diff": (".gitattributes", "plans/greet/PLAN\\.yml -diff\n"),
    "bom binary": (".gitattributes", "\ufeffplans/*/PLAN.yml binary\n"),
    "bracket -diff": (".gitattributes", "plans/greet/PLAN.y[^x]l -diff\n"),
}


def _rows(repo: Path) -> dict[str, dict[str, object]]:
    with controller(repo) as ctl:
        ctl.run_once()
        return {str(row["plan"]): row for row in ctl.status(reasons=True)}


@pytest.mark.parametrize("case", list(HIDING))
def test_a_plan_no_review_shows_is_not_frozen(repo: Path, case: str) -> None:
    where, line = HIDING[case]
    write_plan(repo)
    (repo / where).write_text(line)
    commit_all(repo, "agent: plan", AGENT)
    if case != "linguist-generated":  # git itself shows no line of it
        assert "Binary files" in git(repo, "show", "--format=", "HEAD", "--", "plans/greet")
    row = _rows(repo)["plans/greet"]
    problem = row["problem"]
    assert isinstance(problem, dict) and problem["code"] == "E_ATTRIBUTE_UNSUPPORTED", row
    assert case.split()[-1] in str(problem["message"]), problem
    assert "frozen" not in head_plan(repo)
    # the remedy as given: the attribute removed, the next pass freezes it
    (repo / where).unlink()
    commit_all(repo, "agent: attributes removed", AGENT)
    assert _rows(repo)["plans/greet"]["problem"] is None
    assert head_plan(repo)["frozen"]["hash"].startswith("sha256:")


def test_an_approval_made_where_no_review_shows_the_plan_is_refused(repo: Path) -> None:
    """Frozen while every line showed, then the attribute committed with the approval: the
    approval is refused with the code, and nothing runs."""
    submitted(repo)
    (repo / ".gitattributes").write_text("plans/greet/PLAN.yml -diff\n")
    approve(repo)
    with controller(repo) as ctl:
        ctl.run_once()
    plan = head_plan(repo)
    assert "execution" not in plan, plan["execution"]
    assert plan["plan"]["status"] == "pending_approval"
    assert plan["approval"]["status"] == "refused"
    assert plan["approval"]["code"] == "E_ATTRIBUTE_UNSUPPORTED", plan["approval"]


def test_attributes_that_keep_every_line_shown_change_nothing(repo: Path) -> None:
    write_plan(repo)
    (repo / ".gitattributes").write_text("plans/*/PLAN.yml text eol=lf diff=yaml\n")
    commit_all(repo, "agent: plan", AGENT)
    assert _rows(repo)["plans/greet"]["problem"] is None
    assert head_plan(repo)["frozen"]["hash"].startswith("sha256:")
    approve(repo)
    _rows(repo)
    assert head_plan(repo)["execution"]["status"] == "completed"
