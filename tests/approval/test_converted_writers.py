"""A plan the controller converts from a source takes what its content would have taken had
the source's writer committed that PLAN.yml herself (round 75, r75convert; docs/approvals.md,
"Who changed the content"; docs/formats.md, "Who wrote the plan").

Round 74 keys the writers (changers, folder writers) and the owned-block hold of every version
the index held by its CONTENT hash, and a plan file a commit writes holding that content takes
them. A ``PLAN.json`` of a held content is no plan file: the controller's ``convert`` commit
writes the PLAN.yml, and the rule left the controller's commits out, so Bob's note or
owned-block edit of the source was dropped, and his bytes lifted into the converted copy in
the agent's next commit ran on his approval, of the copy or of a parent pinning it.

Seen before the fix: tests/adversarial/test_round75_approve_respellings.py (``note-json``,
``hold-toon``, ...) and ``_pinsources.py`` (``bob-json``, ``note-jsondel``, ...)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.plan import hashing, yamlio
from tests.approval.test_content_writers import _bobs_note, _bobs_owned_edit, _refusal
from tests.support.gitkit import (
    AGENT,
    BOB,
    PLAN,
    commit_all,
    edit_status,
    head_plan,
    run_once,
    subjects,
)
from tests.support.gitkit import submitted as _submitted

COPY, PARENT = "plans/copy", "plans/parent"
KINDS = {"note": _bobs_note, "hold": _bobs_owned_edit}


def _nothing(repo: Path) -> None:
    """Nobody but the agent wrote the plan (a control)."""


def _converted_copy(repo: Path) -> None:
    """The agent's ``PLAN.json`` of the source's content, converted and frozen by passes,
    then Bob's payload lifted into the copy's params in the agent's next commit."""
    data = yamlio.read_yaml(PLAN, "PLAN.yml").data
    (repo / COPY).mkdir(parents=True)
    (repo / COPY / "PLAN.json").write_text(json.dumps(data, indent=1) + "\n")
    commit_all(repo, "agent: the plan as JSON", AGENT)
    run_once(repo)
    run_once(repo)
    assert head_plan(repo, "copy")["frozen"]["hash"] == head_plan(repo)["frozen"]["hash"]
    path = repo / COPY / "PLAN.yml"
    text = path.read_text()
    assert 'who: "world"' in text, text
    path.write_text(text.replace('who: "world"', 'who: "bob-was-here"', 1))
    commit_all(repo, "agent: extra in the copy", AGENT)
    run_once(repo)


def _parent(repo: Path) -> None:
    pin = hashing.plan_hash(yamlio.read_yaml((repo / COPY / "PLAN.yml").read_text()).data)
    (repo / PARENT).mkdir(parents=True)
    (repo / PARENT / "PLAN.yml").write_text(
        "plan:\n  name: parent\n  task: run the copy\n  status: pending_approval\n"
        "available_tools:\n  - name: greet\n"
        f'actions:\n  - id: 1\n    why: "the copy"\n    plan: {{path: {COPY}, hash: "{pin}"}}\n'
    )
    commit_all(repo, "agent: a parent pinning the copy", AGENT)
    run_once(repo)


def _bob_approves(repo: Path, slug: str) -> None:
    edit_status(repo, slug, "approved")
    commit_all(repo, f"approve {slug}", BOB)
    run_once(repo)


def _ran(repo: Path, plan: str) -> bool:
    return f"plangate: start {plan}" in subjects(repo)


def _setup(repo: Path, kind: str) -> None:
    _submitted(repo)
    KINDS.get(kind, _nothing)(repo)
    run_once(repo)
    _converted_copy(repo)


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_converted_copy_of_a_held_content_keeps_its_writers(repo: Path, kind: str) -> None:
    _setup(repo, kind)
    _bob_approves(repo, "copy")
    assert not _ran(repo, COPY)
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_parent_pinning_a_converted_copy_counts_its_writers(repo: Path, kind: str) -> None:
    _setup(repo, kind)
    _parent(repo)
    _bob_approves(repo, "parent")
    assert not _ran(repo, PARENT)
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


@pytest.mark.parametrize("slug", ["copy", "parent"])
def test_a_converted_copy_nobody_else_wrote_runs_on_his_approval(repo: Path, slug: str) -> None:
    """The agent's own plan converted and lifted (a control): Bob wrote none of it."""
    _setup(repo, "none")
    if slug == "parent":
        _parent(repo)
    _bob_approves(repo, slug)
    assert _ran(repo, f"plans/{slug}"), _refusal(repo)
