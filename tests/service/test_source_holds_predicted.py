"""What ``hash``, ``validate``, ``freeze --check`` and ``check`` say of a committed plan source
is what the daemon does with it (round 122).

``source-prediction-ignores-hold``: a source the daemon holds (the committed attributes hide
it from a review, a root macro among them; committed as a symbolic link) had its hash
printed as the one "the controller will freeze" and was ``valid``; the readers now ask the
daemon's own rules of the commit (:func:`controller.service.sources.source_held`).
``nested-source-over-agent-kid``: an ActionPlan whose nested step the conversion writes where
the agent committed its own ``step-2/PLAN.yml``: the pass waited, while the readers and
``check`` said it converts and ``status`` had no row for it
(:func:`controller.service.sources.written_held`, asked by all of them).
``nested-source-kid-mispredicted``: the same parent beside the agent's ``step-2/PLAN.md``:
``check`` predicted that PLAN.md converted, where the parent's conversion writes its own kid
there first. Real repositories, the real controller and CLI."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.support.gitenv import AGENT, commit_all, git, run_cli
from tests.support.gitkit import PLAN, controller

MARKDOWN = """# Greet

## Objective
Greet the world

## Steps

### Step 1: Greet
- **Action**: greet
- **Type**: AGENT_EXECUTION
- **Parameters**: {"who": "world"}
- **Timeout**: 30s
"""


def _contract(who: str = "world") -> str:
    step = {"step_id": "s1", "tool": "greet", "args": {"who": who}}
    return json.dumps({"plan_version": 1, "goal": "Greet the world", "steps": [step]})


def _nested(who: str) -> str:
    """An ActionPlan whose step 2 is a nested plan: its conversion writes ``step-2/PLAN.yml``."""
    step = {"type": "custom", "action_type": "greet"}
    kid = {
        "plan_version": 1,
        "title": "Kid",
        "steps": [
            {
                "step_number": 1,
                "action": {**step, "payload": {"who": f"{who}-kid"}},
                "description": "k",
            }
        ],
    }
    steps = [
        {"step_number": 1, "action": {**step, "payload": {"who": who}}, "description": "first"},
        {"step_number": 2, "action": {"type": "nested_plan", "plan": kid}, "description": "nest"},
    ]
    return json.dumps({"plan_version": 1, "title": "Parent", "steps": steps}, indent=1)


def _put(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _held(repo: Path, case: str) -> str:
    """Commit the case's source at ``plans/greet``; the code the daemon holds it with."""
    if case == "root-attributes":
        _put(repo, "plans/greet/PLAN.md", MARKDOWN)
        _put(repo, ".gitattributes", "plans/greet/PLAN.md -diff\n")
        code = "E_ATTRIBUTE_UNSUPPORTED"
    elif case == "plans-attributes":
        _put(repo, "plans/greet/PLAN.json", _contract())
        _put(repo, "plans/.gitattributes", "greet/PLAN.json binary\n")
        code = "E_ATTRIBUTE_UNSUPPORTED"
    elif case == "root-macro":
        _put(repo, "plans/greet/PLAN.md", MARKDOWN)
        _put(repo, ".gitattributes", "[attr]hidden -diff\nplans/greet/PLAN.md hidden\n")
        code = "E_ATTRIBUTE_UNSUPPORTED"
    elif case == "symlink":
        _put(repo, "notes/real.json", _contract("evil"))
        (repo / "plans" / "greet").mkdir(parents=True)
        os.symlink("../../notes/real.json", repo / "plans" / "greet" / "PLAN.json")
        code = "E_UNSAFE_PATH"
    else:  # the agent's own PLAN.yml where the nested step is written
        _put(repo, "plans/greet/PLAN.json", _nested("nk"))
        _put(repo, "plans/greet/step-2/PLAN.yml", PLAN.replace("pending_approval", "draft"))
        code = "E_CONVERT_UNSUPPORTED"
    commit_all(repo, "agent: a source", AGENT)
    return code


CASES = ["root-attributes", "plans-attributes", "root-macro", "symlink", "nested-over-agent-plan"]


def _config(repo: Path) -> Path:
    path = repo.parent / "plangate.yml"
    data = {
        "repo": str(repo),
        "approval": {"approvers": ["alice@example.com"]},
        "tools": {"greet": {"kind": "echo"}},
    }
    path.write_text(json.dumps(data))
    return path


def _check(repo: Path) -> dict[str, dict[str, object]]:
    config = _config(repo)
    told = run_cli(
        "--config", str(config), "check", "--base", "HEAD~1", "--head", "HEAD",
        "--format", "json", cwd=repo,
    )  # fmt: skip
    assert told.returncode in (0, 1), told.stderr
    return {str(p["plan"]): p for p in json.loads(told.stdout)["plans"]}


def _rows(repo: Path) -> dict[str, dict[str, object]]:
    with controller(repo) as ctl:
        ctl.run_once()
        return {str(row["plan"]): row for row in ctl.status(reasons=True)}


@pytest.mark.parametrize("case", CASES)
def test_readers_say_the_code_the_daemon_holds_a_source_with(repo: Path, case: str) -> None:
    """``hash``, ``validate`` and ``freeze --check`` of the folder: exit 1 with the code of the
    source's row, and no hash (none is ever frozen)."""
    code = _held(repo, case)
    for argv in (["hash"], ["validate", "--json"], ["freeze", "--check"]):
        done = run_cli(*argv, "plans/greet", cwd=repo)
        said = done.stdout + done.stderr
        assert done.returncode == 1, (argv, said)
        assert code in said, (argv, said)
        assert not re.search(r"sha256:[0-9a-f]{64}", said), (argv, said)


@pytest.mark.parametrize("case", CASES)
def test_the_row_and_check_say_the_code_and_nothing_converts(repo: Path, case: str) -> None:
    code = _held(repo, case)
    report = _check(repo)["plans/greet"]
    assert report["outcome"] in ("invalid", "held"), report
    assert code in json.dumps(report), report
    row = _rows(repo).get("plans/greet")
    assert row is not None and isinstance(row["problem"], dict), row
    assert row["problem"]["code"] == code, row
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD", "plans/greet").split()
    assert "plans/greet/PLAN.yml" not in tree, tree


def test_the_agents_nested_plan_removed_releases_the_parent(repo: Path) -> None:
    """The wait is the branch's state, not a refusal of the source's bytes: the agent's own
    ``step-2/PLAN.yml`` removed, the next pass converts the parent and writes its kid."""
    _held(repo, "nested-over-agent-plan")
    with controller(repo) as ctl:  # one daemon: what it remembers between its passes
        ctl.run_once()
        rows = {str(row["plan"]): row for row in ctl.status(reasons=True)}
        assert rows["plans/greet"]["problem"] is not None, rows.get("plans/greet")
        git(repo, "rm", "-q", "plans/greet/step-2/PLAN.yml")
        commit_all(repo, "agent: my own step-2 removed", AGENT)
        ctl.run_once()
        rows = {str(row["plan"]): row for row in ctl.status(reasons=True)}
    assert rows["plans/greet"]["problem"] is None, rows["plans/greet"]
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD", "plans/greet").split()
    assert tree == ["plans/greet/PLAN.yml", "plans/greet/step-2/PLAN.yml"], tree


def test_check_predicts_the_kid_a_parent_writes_over_the_agents_source(repo: Path) -> None:
    """The agent's ``step-2/PLAN.md`` where the parent's conversion writes its kid: ``check``
    reports ``plans/greet/step-2`` as the kid the daemon writes there (its hash, and a warning
    that the PLAN.md beside it is not converted), never ``convert`` of that PLAN.md."""
    _put(repo, "plans/greet/PLAN.json", _nested("ns"))
    _put(repo, "plans/greet/step-2/PLAN.md", MARKDOWN.replace("world", "evil"))
    commit_all(repo, "agent: a source", AGENT)
    found = _check(repo)
    parent, kid = found["plans/greet"], found["plans/greet/step-2"]
    assert parent["outcome"] == "convert", parent
    assert kid["outcome"] != "convert", kid
    _rows(repo)
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD", "plans/greet").split()
    assert "plans/greet/step-2/PLAN.yml" in tree, tree
    hashed = run_cli("hash", "plans/greet/step-2/PLAN.yml", cwd=repo)
    assert hashed.returncode == 0, hashed.stderr
    assert kid["hash"] == hashed.stdout.split()[-1], (kid, hashed.stdout)
    assert any("PLAN.md" in str(w) for w in kid.get("warnings") or []), kid  # type: ignore[attr-defined]
