"""A plan whose committed ``.gitattributes`` hide every line of it from a review is never
frozen, and no approval of it counts (round 113, ``gitattributes-hides-plan-diff``).

The agent commits ``plans/<p>/PLAN.yml -diff`` (or ``binary``, or the forges'
``linguist-generated``) with its plan: ``git log -p`` and the pull request then show
"Binary files differ" or a folded file, and before the fix the controller froze the plan
with no note and ran it on the approval. Real repositories, the real controller."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.gitenv import AGENT, commit_all, git, run_cli
from tests.support.gitkit import PLAN, approve, controller, head_plan, submitted, write_plan

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


MARKDOWN = """\
# Greet

## Objective
Say hello to the world

## Steps

### Step 1: Say hello
- **ID**: s1
- **Action**: greet
- **Type**: AGENT_EXECUTION
- **Parameters**: {"who": "world"}
- **Timeout**: 30s
"""

#: attribute lines that hide a source in its own folder (round 121)
SOURCE_HIDING = {
    "-diff": ("PLAN.md", "PLAN.md -diff\n"),
    "binary": ("PLAN.json", "PLAN.json binary\n"),
    "linguist-generated": ("PLAN.md", "*.md linguist-generated\n"),
}


@pytest.mark.parametrize("case", list(SOURCE_HIDING))
def test_a_source_no_review_shows_is_not_converted(repo: Path, case: str) -> None:
    """Round 121, ``source-diff-hidden-by-attributes``: a source whose folder's attributes
    hide every line of it (``git log -p``: "Binary files differ"; a forge folds a generated
    file) was converted, frozen and run on the approval. It now waits, unconverted, with
    the code; the attribute removed, it is converted."""
    name, line = SOURCE_HIDING[case]
    folder = repo / "plans" / "greet"
    folder.mkdir(parents=True)
    text = MARKDOWN if name == "PLAN.md" else _contract()
    (folder / name).write_text(text)
    (folder / ".gitattributes").write_text(line)
    commit_all(repo, "agent: a source", AGENT)
    row = _rows(repo)["plans/greet"]
    problem = row["problem"]
    assert isinstance(problem, dict) and problem["code"] == "E_ATTRIBUTE_UNSUPPORTED", row
    assert name in str(problem["message"]) and case in str(problem["message"]), problem
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD", "plans/greet").split()
    assert tree == ["plans/greet/.gitattributes", f"plans/greet/{name}"], tree
    (folder / ".gitattributes").unlink()
    commit_all(repo, "agent: attributes removed", AGENT)
    assert _rows(repo)["plans/greet"]["problem"] is None
    assert head_plan(repo)["frozen"]["hash"].startswith("sha256:")


def _contract() -> str:
    step = {"step_id": "s1", "tool": "greet", "args": {"who": "world"}}
    return json.dumps({"plan_version": 1, "goal": "Greet the world", "steps": [step]})


def _parent(pin: str) -> str:
    return (
        "plan:\n  name: parent\n  task: t\n  status: pending_approval\n"
        "available_tools:\n  - name: greet\nactions:\n  - id: 1\n"
        f'    plan: {{path: plans/kid, hash: "{pin}"}}\n    why: nested\n'
    )


def _kid(repo: Path) -> str:
    """The nested plan ``plans/kid`` (a draft), committed; its hash."""
    write_plan(repo, "kid", PLAN.replace("status: pending_approval", "status: draft"))
    commit_all(repo, "agent: a nested plan", AGENT)
    hashed = run_cli("hash", str(repo / "plans" / "kid"), cwd=repo)
    assert hashed.returncode == 0, hashed.stderr
    return hashed.stdout.split()[-1]


def test_a_plan_pinning_a_nested_plan_no_review_shows_is_not_frozen(repo: Path) -> None:
    """Round 121, ``nested-plan-diff-hidden-by-attributes``: the nested plan a parent pins
    is part of what approving the parent approves; its folder's ``PLAN.yml -diff`` hid every
    line of it, and the parent was frozen and ran it. The parent now waits with the code."""
    pin = _kid(repo)
    (repo / "plans" / "kid" / ".gitattributes").write_text("PLAN.yml -diff\n")
    write_plan(repo, "parent", _parent(pin))
    commit_all(repo, "agent: a parent", AGENT)
    row = _rows(repo)["plans/parent"]
    problem = row["problem"]
    assert isinstance(problem, dict) and problem["code"] == "E_ATTRIBUTE_UNSUPPORTED", row
    assert "plans/kid/PLAN.yml" in str(problem["message"]), problem
    assert "frozen" not in head_plan(repo, "parent")


def test_an_approval_made_where_no_review_shows_a_nested_plan_is_refused(repo: Path) -> None:
    """Frozen while the nested plan showed, then its attribute committed with the approval:
    the approval is refused with the code, and nothing runs."""
    write_plan(repo, "parent", _parent(_kid(repo)))
    commit_all(repo, "agent: a parent", AGENT)
    _rows(repo)
    assert head_plan(repo, "parent")["frozen"]["hash"].startswith("sha256:")
    (repo / ".gitattributes").write_text("plans/kid/PLAN.yml -diff\n")
    approve(repo, "parent")
    with controller(repo) as ctl:
        ctl.run_once()
    plan = head_plan(repo, "parent")
    assert "execution" not in plan, plan["execution"]
    assert plan["approval"]["status"] == "refused"
    assert plan["approval"]["code"] == "E_ATTRIBUTE_UNSUPPORTED", plan["approval"]
