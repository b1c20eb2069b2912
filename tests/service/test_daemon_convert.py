"""The controller converts a PLAN.json, PLAN.toon or PLAN.md in a plan folder (SPEC §13):
one `convert` commit replaces the source with PLAN.yml, the plan is then frozen and runs like
any other, and the source file's authors count as the plan's authors for self-approval."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from controller.service.reconcile import Controller
from tests.support.gitenv import AGENT, ALICE, commit_all, git, run_cli
from tests.support.gitkit import approve, head_plan, make_config, subjects

CONTRACT = {
    "plan_version": 1,
    "goal": "Greet the world",
    "inputs": {"who": "world"},
    "steps": [
        {
            "step_id": "s1",
            "tool": "greet",
            "args": {"who": "${inputs.who}"},
            "description": "say hello",
        }
    ],
}

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


@contextmanager
def controller(repo: Path, **approval: Any) -> Iterator[Controller]:
    ctl = Controller(make_config(repo, **approval))
    try:
        yield ctl
    finally:
        ctl.close()


def write(repo: Path, slug: str, name: str, text: str) -> Path:
    path = repo / "plans" / slug / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_committed_plan_json_is_converted_frozen_and_its_authors_cannot_approve(
    repo: Path,
) -> None:
    write(repo, "greet", "PLAN.json", json.dumps(CONTRACT, indent=2))
    commit_all(repo, "agent proposes", ALICE)  # Alice wrote the plan...
    with controller(repo) as ctl:
        ctl.reconcile()
    assert subjects(repo)[:2] == ["plangate: freeze plans/greet", "plangate: convert plans/greet"]
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD", "plans/greet").split()
    assert tree == ["plans/greet/PLAN.yml"]  # the source is gone: the plan is its PLAN.yml
    assert not (repo / "plans/greet/PLAN.json").exists()
    plan = head_plan(repo)
    assert plan["metadata"]["converted_from"]["format"] == "plan-contract"
    assert plan["actions"][0]["params"] == {"who": "$<inputs.who>"}
    body = git(repo, "log", "-1", "--format=%B", "HEAD~1")
    assert "from PLAN.json (plan-contract)" in body and "Plan: plans/greet" in body
    approve(repo, who=ALICE)  # ...so she may not approve it, though the controller committed it
    with controller(repo) as ctl:
        ctl.run_once()
    assert head_plan(repo)["approval"]["code"] == "E_SELF_APPROVAL"
    approve(repo, who=("Bob", "bob@ops.example.com"))
    with controller(repo) as ctl:
        ctl.run_once()
    assert head_plan(repo)["plan"]["status"] == "completed"
    assert git(repo, "status", "--porcelain") == ""
    config = repo.parent / "plangate.yml"
    config.write_text(
        json.dumps(
            {
                "repo": str(repo),
                "tools": {"greet": {"kind": "echo"}},
                "approval": {"approvers": ["*@example.com", "*@ops.example.com"]},
            }
        )
    )
    audit = run_cli("audit", "--json", "--config", str(config), cwd=repo.parent)
    assert audit.returncode == 0, audit.stdout + audit.stderr  # the convert commit is explained


def test_an_uncommitted_plan_md_is_converted_in_local_mode(repo: Path) -> None:
    write(repo, "hello", "PLAN.md", MARKDOWN)
    with controller(repo) as ctl:
        ctl.reconcile()
    assert subjects(repo)[:2] == ["plangate: freeze plans/hello", "plangate: convert plans/hello"]
    assert not (repo / "plans/hello/PLAN.md").exists()
    plan = head_plan(repo, "hello")
    assert plan["metadata"]["converted_from"]["format"] == "toon-plan"
    assert plan["frozen"]["hash"].startswith("sha256:")
    assert git(repo, "status", "--porcelain") == ""


def test_a_source_that_does_not_convert_waits_with_its_code(repo: Path) -> None:
    bad = dict(CONTRACT, policy_context={"max_pages": 5})
    write(repo, "pages", "PLAN.json", json.dumps(bad))
    commit_all(repo, "agent proposes", AGENT)
    before = subjects(repo)
    with controller(repo) as ctl:
        ctl.reconcile()
        ctl.reconcile()  # reported once, not retried every pass
        (row,) = [r for r in ctl.status() if r["plan"] == "plans/pages"] or [None]
    assert subjects(repo) == before
    # no PLAN.yml yet, but status says why (docs/formats.md; round 4 found no row at all)
    assert row is not None and row["status"] == "unreadable" and row["hash"] is None
    assert row["problem"]["code"] == "E_CONVERT_UNSUPPORTED" and "max_pages" in row["reason"]
    waiting = ctl._waiting["plans/pages"]
    assert "E_CONVERT_UNSUPPORTED" in waiting and "max_pages" in waiting


def test_a_folder_with_a_plan_yml_keeps_its_other_files(repo: Path) -> None:
    from tests.support.gitkit import write_plan

    write_plan(repo, "greet")
    write(repo, "greet", "PLAN.md", MARKDOWN)  # notes beside a plan: not a second plan
    commit_all(repo, "agent proposes", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()
    assert subjects(repo)[0] == "plangate: freeze plans/greet"
    assert (repo / "plans/greet/PLAN.md").exists()


def test_validate_reads_a_source_as_the_daemon_does(repo: Path) -> None:
    """An agent that writes PLAN.json or PLAN.md checks it with `plangate validate` before
    committing: it is converted as the daemon converts it (no "never picked up" warning),
    and the hash it prints is the one the controller then freezes."""
    write(repo, "greet", "PLAN.md", MARKDOWN)
    config = repo.parent / "plangate.yml"
    config.write_text(json.dumps({"repo": str(repo), "tools": {"greet": {"kind": "echo"}}}))
    checked = run_cli("--config", str(config), "validate", "--json", "plans/greet", cwd=repo)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    record = json.loads(checked.stdout)
    assert record["valid"] and record["warnings"] == [] and record["path"].endswith("PLAN.md")
    commit_all(repo, "agent proposes", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()
    assert head_plan(repo)["frozen"]["hash"] == record["hash"]

    broken = write(repo, "broken", "PLAN.json", '{"plan_version": 1, "goal": "x", "steps": [{}]}')
    result = run_cli("validate", "--json", str(broken), cwd=repo)
    record = json.loads(result.stdout)
    assert result.returncode == 1 and not record["valid"]
    assert record["errors"] and all(e["code"].startswith("E_") for e in record["errors"])
    assert record["errors"][0]["remedy"]
    write(repo, "broken", "PLAN.yml", head_plan_text(repo))
    result = run_cli("validate", str(broken), cwd=repo)
    assert "PLAN.yml is beside it: the controller runs that file" in result.stderr


def head_plan_text(repo: Path) -> str:
    return git(repo, "show", "HEAD:plans/greet/PLAN.yml") + "\n"


def test_a_source_in_a_twin_folder_of_a_plan_is_never_converted(repo: Path) -> None:
    """``plans/held/PLAN.md`` beside ``plans/Held/PLAN.yml``: one folder on a case-insensitive
    checkout, where the source is a note beside the plan file. The pass converts nothing
    into it (round 81: it wrote ``plans/held/PLAN.yml``, a twin, and froze both); the
    source's folder waits ``E_PLAN_AMBIGUOUS``, and ``plans/Held`` is frozen as any plan.
    Two sources in twin folders are neither converted."""
    from tests.support.gitkit import write_plan

    write_plan(repo, "Held")
    write(repo, "held", "PLAN.md", MARKDOWN)
    write(repo, "pair", "PLAN.md", MARKDOWN)
    write(repo, "PAIR", "PLAN.json", json.dumps(CONTRACT))
    commit_all(repo, "agent proposes", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()
        waiting = dict(ctl._waiting)
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert not any(s.startswith("plangate: convert") for s in subjects(repo)), subjects(repo)
    assert {"plans/held/PLAN.yml", "plans/pair/PLAN.yml", "plans/PAIR/PLAN.yml"}.isdisjoint(tree)
    assert head_plan(repo, "Held")["frozen"]["hash"]
    for folder in ("plans/held", "plans/pair", "plans/PAIR"):
        assert "E_PLAN_AMBIGUOUS" in waiting[folder], (folder, waiting)


def test_twin_sources_wait_on_their_rows_until_a_twin_is_removed(repo: Path) -> None:
    """``plans/pair/PLAN.md`` and ``plans/PAIR/PLAN.json`` (one folder on a case-insensitive
    checkout): neither is converted, and ``status`` shows a row for each, held
    ``E_PLAN_AMBIGUOUS`` (round 82: the pass waited, but no reader showed a row). With
    ``plans/PAIR`` removed the other is released: converted once."""
    write(repo, "pair", "PLAN.md", MARKDOWN)
    write(repo, "PAIR", "PLAN.json", json.dumps(CONTRACT))
    commit_all(repo, "agent proposes", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()
        rows = {r["plan"]: r for r in ctl.status()}
        for folder in ("plans/pair", "plans/PAIR"):
            assert rows[folder]["held"] == "E_PLAN_AMBIGUOUS", rows.get(folder)
            assert "one folder with" in rows[folder]["reason"], rows[folder]
        git(repo, "rm", "-rq", "plans/PAIR")
        commit_all(repo, "agent drops a twin", AGENT)
        ctl.reconcile()
        ctl.reconcile()
    assert subjects(repo).count("plangate: convert plans/pair") == 1, subjects(repo)
    assert head_plan(repo, "pair")["frozen"]["hash"]


def test_a_conversion_never_writes_a_nested_plan_into_a_twin_folder(repo: Path) -> None:
    """An ActionPlan ``plans/nt/PLAN.json`` whose step 2 is a nested plan converts to
    ``plans/nt/step-2/PLAN.yml``; beside the agent's ``plans/nt/STEP-2/PLAN.yml`` that is a
    twin folder (round 82: the controller's own convert commit wrote it). Nothing is
    converted; the source waits ``E_PLAN_AMBIGUOUS`` on its row and in the pass."""
    from tests.support.gitkit import write_plan

    step = {"step_number": 1, "action": {"type": "greet", "who": "x"}, "description": "hi"}
    inner = {"plan_version": 1, "plan_id": "plan:in", "title": "in", "steps": [step]}
    nested = {"step_number": 2, "description": "n"}
    nested["action"] = {"type": "nested_plan", "plan": inner}
    outer = {"plan_version": 1, "plan_id": "plan:nt", "title": "nt", "steps": [step, nested]}
    write(repo, "nt", "PLAN.json", json.dumps(dict(outer, workspace_id="/w")))
    write_plan(repo, "nt/STEP-2")
    commit_all(repo, "agent proposes", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()
        waiting = dict(ctl._waiting)
        (row,) = [r for r in ctl.status() if r["plan"] == "plans/nt"]
    assert not any(s.startswith("plangate: convert") for s in subjects(repo)), subjects(repo)
    assert "plans/nt/step-2/PLAN.yml" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    assert "E_PLAN_AMBIGUOUS" in waiting["plans/nt"] and "plans/nt/STEP-2" in waiting["plans/nt"]
    assert row["problem"]["code"] == "E_PLAN_AMBIGUOUS", row
