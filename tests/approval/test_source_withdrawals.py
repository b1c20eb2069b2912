"""A rejection committed in a plan source before the controller converts it counts as one
committed in PLAN.yml (round 120, source-rejection-dropped-at-conversion; docs/formats.md:
"The converted plan takes what its content would have taken had the source's writer
committed that PLAN.yml herself").

Before: Alice set ``status: rejected`` in the agent's ``PLAN.json`` (or ``PLAN.md``) before
the controller's pass; the convert commit wrote ``pending_approval`` ("status 'rejected' not
carried over"), froze it, and Bob's approval ran it (its copy too); no decision in the
audit. Mallory's rejection in a source stays without effect."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from controller.plan import yamlio
from tests.support.gitenv import commit_all, git, run_cli
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    MALLORY,
    PLAN,
    controller,
    edit_status,
    head_plan,
    subjects,
    write_plan,
)


def _source(repo: Path, status: str, slug: str = "greet") -> Path:
    data = yamlio.read_yaml(PLAN, "PLAN.yml").data
    data["plan"]["status"] = status
    folder = repo / "plans" / slug
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "PLAN.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def _set_source(repo: Path, status: str, who: tuple[str, str], slug: str = "greet") -> None:
    path = repo / "plans" / slug / "PLAN.json"
    data = json.loads(path.read_text())
    data["plan"]["status"] = status
    path.write_text(json.dumps(data, indent=1) + "\n")
    commit_all(repo, f"{who[0]}: {status} {slug}", who)


def _row(repo: Path, slug: str = "greet") -> dict[str, Any]:
    with controller(repo) as ctl:
        ctl.run_once()
        rows = {str(r["plan"]): r for r in ctl.status(reasons=True)}
    return rows.get(f"plans/{slug}", {})


def _approve(repo: Path, slug: str = "greet") -> dict[str, Any]:
    edit_status(repo, slug, "approved")
    commit_all(repo, f"Bob: approve {slug}", BOB)
    return _row(repo, slug)


def _starts(repo: Path, slug: str = "greet") -> list[str]:
    return [s for s in subjects(repo) if s.startswith(f"plangate: start plans/{slug}")]


def _decisions(repo: Path) -> list[tuple[Any, Any]]:
    clone = repo.parent / "clone"
    git(repo.parent, "clone", "-q", str(repo), str(clone))
    report = json.loads(run_cli("audit", "--json", cwd=clone).stdout)
    return [
        (d.get("kind"), d.get("by"))
        for d in report.get("decisions", [])
        if d.get("plan") == "plans/greet"
    ]


def test_an_approvers_rejection_in_a_source_counts_at_its_conversion(repo: Path) -> None:
    """Alice rejects the agent's draft PLAN.json before its conversion: the converted plan
    is ``rejected`` (never frozen), Bob's approval runs nothing, a copy of its version is
    refused E_VERSION_WITHDRAWN, and the fresh-clone audit lists her decision."""
    _source(repo, "draft")
    commit_all(repo, "agent: a draft source", AGENT)
    _set_source(repo, "rejected", ALICE)
    row = _row(repo)
    assert row.get("status") == "rejected", row
    assert "frozen" not in head_plan(repo)
    assert _approve(repo).get("status") == "rejected"
    assert not _starts(repo)
    write_plan(repo, "greet-2")
    commit_all(repo, "agent: the version again", AGENT)
    row = _row(repo, "greet-2")
    assert "E_VERSION_WITHDRAWN" in json.dumps(row), row
    _approve(repo, "greet-2")
    assert not _starts(repo, "greet-2")
    assert _decisions(repo) == [("reject", ALICE[1])]


def test_the_authors_rejection_of_its_submitted_source_counts(repo: Path) -> None:
    """The agent submits a PLAN.json pending and rejects it itself before its conversion
    (a pending plan's author may withdraw it): rejected."""
    _source(repo, "pending_approval")
    commit_all(repo, "agent: submit a source", AGENT)
    _set_source(repo, "rejected", AGENT)
    assert _row(repo).get("status") == "rejected"
    assert _approve(repo).get("status") == "rejected"
    assert not _starts(repo)


def test_a_strangers_rejection_in_a_source_is_without_effect(repo: Path) -> None:
    """Mallory's rejection in the source withdraws nothing: converted, frozen, Bob's approval
    runs it (a control)."""
    _source(repo, "draft")
    commit_all(repo, "agent: a draft source", AGENT)
    _set_source(repo, "rejected", MALLORY)
    assert _row(repo).get("status") == "pending_approval"
    assert _approve(repo).get("status") == "completed"


def test_the_draft_authors_rejection_in_a_source_is_without_effect(repo: Path) -> None:
    """A draft has no author withdrawers: the agent's rejection of its own draft source is
    none (converted, frozen, run on Bob's approval)."""
    _source(repo, "draft")
    commit_all(repo, "agent: a draft source", AGENT)
    _set_source(repo, "rejected", AGENT)
    assert _row(repo).get("status") == "pending_approval"
    assert _approve(repo).get("status") == "completed"
