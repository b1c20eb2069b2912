"""A draft an allowed approver rejects is rejected, and its version vetoed (round 119,
draft-rejection-ignored). SPEC §4 lists no ``draft -> rejected``; the controller read Alice's
rejection of the agent's draft as ``E_ILLEGAL_TRANSITION ... (from draft); ignored``, the
agent submitted that very version, the controller froze it and Bob's approval ran it. A
reviewer's objection to content counts whether or not it was submitted yet. A draft's
author setting it ``rejected`` is no withdrawal (nobody submitted it: they may edit or
delete it), and is ignored ``E_APPROVER_NOT_ALLOWED`` as a stranger's is: a library author's
rejection of her own draft library would otherwise veto the parents pinning it (round 37,
``reject-child``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.gitenv import commit_all, git, identity, run_cli
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

DRAFT = PLAN.replace("status: pending_approval", "status: draft")


def _row(repo: Path, slug: str = "greet") -> dict[str, Any]:
    """One controller pass, then the plan's status row (with its notes and reason)."""
    with controller(repo) as ctl:
        ctl.run_once()
        rows = {str(r["plan"]): r for r in ctl.status(reasons=True)}
    return rows.get(f"plans/{slug}", {})


def _set(repo: Path, status: str, who: tuple[str, str], slug: str = "greet") -> None:
    edit_status(repo, slug, status)
    commit_all(repo, f"{who[0]}: {status} {slug}", who)


def _draft_rejected_by(repo: Path, who: tuple[str, str]) -> dict[str, Any]:
    """The agent's draft, a controller pass, ``who``'s rejection of it: the row after it."""
    write_plan(repo, text=DRAFT)
    commit_all(repo, "agent: a draft", AGENT)
    assert _row(repo).get("status") == "draft"
    _set(repo, "rejected", who)
    return _row(repo)


def _starts(repo: Path, slug: str = "greet") -> list[str]:
    return [s for s in subjects(repo) if s.startswith(f"plangate: start plans/{slug}")]


def test_an_approvers_rejection_of_a_draft_withdraws_it(repo: Path) -> None:
    """Alice rejects the draft: the plan is ``rejected`` (terminal). The agent's later
    ``pending_approval`` of that version is an illegal change, never frozen, and Bob's
    approvals run nothing; the fresh-clone audit lists her rejection under ``decisions``."""
    row = _draft_rejected_by(repo, ALICE)
    assert row.get("status") == "rejected", row
    assert ALICE[1] in str(row.get("reason")), row
    _set(repo, "pending_approval", AGENT)
    row = _row(repo)
    assert row.get("status") == "rejected", row
    for _ in range(2):
        _set(repo, "approved", BOB)
        row = _row(repo)
    assert row.get("status") == "rejected", row
    assert not _starts(repo) and "execution" not in head_plan(repo)
    clone = repo.parent / "clone"
    git(repo.parent, "clone", "-q", str(repo), str(clone))
    done = run_cli("audit", "--json", cwd=clone)
    report = json.loads(done.stdout)
    mine = [d for d in report.get("decisions", []) if d.get("plan") == "plans/greet"]
    assert [(d.get("kind"), d.get("by")) for d in mine] == [("reject", ALICE[1])], mine
    assert not [
        e
        for e in report.get("executions", [])
        if e.get("plan") == "plans/greet" and e.get("approval_valid")
    ]


def test_a_rejected_draft_is_vetoed_under_any_name(repo: Path) -> None:
    """The version of the draft Alice rejected, submitted again as a copy at another slug,
    is refused E_VERSION_WITHDRAWN when Bob approves it, as any withdrawn version is."""
    _draft_rejected_by(repo, ALICE)
    write_plan(repo, "greet-2")
    commit_all(repo, "agent: greet again", AGENT)
    assert _row(repo, "greet-2").get("status") == "pending_approval"
    _set(repo, "approved", BOB, "greet-2")
    row = _row(repo, "greet-2")
    assert row.get("status") == "pending_approval", row
    assert "E_VERSION_WITHDRAWN" in json.dumps(row), row
    assert head_plan(repo, "greet-2")["approval"]["code"] == "E_VERSION_WITHDRAWN"
    assert not _starts(repo, "greet-2")


def test_the_authors_rejection_of_its_own_draft_is_no_withdrawal(repo: Path) -> None:
    """The agent, who wrote the draft (its only producer), rejects it: ignored and reported,
    the plan stays a draft; submitted and approved by Bob, it runs."""
    row = _draft_rejected_by(repo, AGENT)
    assert row.get("status") == "draft", row
    assert "E_APPROVER_NOT_ALLOWED" in json.dumps(row), row
    _set(repo, "pending_approval", AGENT)
    assert _row(repo).get("status") == "pending_approval"  # frozen
    _set(repo, "approved", BOB)
    assert _row(repo).get("status") == "completed"


def test_a_strangers_rejection_of_a_draft_is_ignored(repo: Path) -> None:
    """Mallory may withdraw nothing: her rejection of the draft is ignored and reported,
    and the draft, submitted and approved by Bob, runs."""
    row = _draft_rejected_by(repo, MALLORY)
    assert row.get("status") == "draft", row
    assert "E_APPROVER_NOT_ALLOWED" in json.dumps(row), row
    _set(repo, "pending_approval", AGENT)
    assert _row(repo).get("status") == "pending_approval"
    _set(repo, "approved", BOB)
    assert _row(repo).get("status") == "completed"


def test_plangate_reject_commits_the_rejection_of_a_draft(repo: Path, tmp_path: Path) -> None:
    """``plangate reject`` agrees with the controller: it commits an approver's rejection of
    a draft, and tells Mallory and the draft's author theirs would be ignored."""
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com, '*@ops.example.com']}}\n"
        "tools: {greet: {kind: echo}}\n"
    )
    write_plan(repo, text=DRAFT)
    commit_all(repo, "agent: a draft", AGENT)
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    args = ("reject", "plans/greet", "-m", "not this", "--config", str(config))
    for who in (MALLORY, AGENT):
        done = run_cli(*args, cwd=repo, env=identity(*who))
        assert done.returncode == 1 and "E_APPROVER_NOT_ALLOWED" in done.stderr, done.stderr
    done = run_cli(*args, cwd=repo, env=identity(*ALICE))
    assert done.returncode == 0 and done.stdout.startswith("rejected plans/greet"), done.stderr
    assert head_plan(repo)["plan"]["status"] == "rejected"
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    assert _row(repo).get("status") == "rejected"


#: The draft written with a legacy ``${inputs.who}`` reference: its text hashes otherwise
#: than the version the freeze writes (``$<inputs.who>``) and runs.
LEGACY = DRAFT.replace("available_tools:", "inputs:\n  who: world\navailable_tools:", 1).replace(
    "who: world   # trailing comment", 'who: "${inputs.who}"'
)


def _pending(text: str) -> str:
    return text.replace("status: draft", "status: pending_approval")


def _legacy_rejected(repo: Path) -> None:
    """The agent's legacy draft, Alice's rejection of it: withdrawn."""
    write_plan(repo, text=LEGACY)
    commit_all(repo, "agent: a legacy draft", AGENT)
    assert _row(repo).get("status") == "draft"
    _set(repo, "rejected", ALICE)
    assert _row(repo).get("status") == "rejected"


def _refused(repo: Path, slug: str) -> None:
    """``slug``'s row names the withdrawal before any approval; Bob's approval is refused
    E_VERSION_WITHDRAWN and nothing starts."""
    row = _row(repo, slug)
    assert row.get("status") == "pending_approval", row
    assert "E_VERSION_WITHDRAWN" in json.dumps(row), row
    _set(repo, "approved", BOB, slug)
    row = _row(repo, slug)
    assert "E_VERSION_WITHDRAWN" in json.dumps(row), row
    assert head_plan(repo, slug)["approval"]["code"] == "E_VERSION_WITHDRAWN"
    assert not _starts(repo, slug)


def test_a_legacy_frozen_form_differs_from_its_text() -> None:
    """The premise: the legacy draft's text hash is not the hash it freezes to; the facts
    of the version give both (round 120, draft-legacy-veto-missed)."""
    from controller.git.planstate import facts_of
    from controller.plan import hashing, yamlio

    facts = facts_of(LEGACY.encode())
    frozen = LEGACY.replace("${inputs.who}", "$<inputs.who>")
    assert facts.hash != facts.form_hash
    assert facts.form_hash == hashing.plan_hash(yamlio.read_yaml(frozen).data)
    assert facts_of(frozen.encode()).form_hash is None  # nothing to convert: the same


def test_a_rejected_legacy_draft_is_vetoed_as_it_freezes(repo: Path) -> None:
    """Round 120, draft-legacy-veto-missed: Alice rejects the agent's draft written with
    ``${inputs.who}``; its copy at another slug, as written or in the ``$<inputs.who>`` form
    the freeze converts it to, is frozen as ``$<...>``: refused E_VERSION_WITHDRAWN (the
    veto was keyed on the text's hash alone, and Bob's approval ran the copy)."""
    _legacy_rejected(repo)
    write_plan(repo, "greet-2", _pending(LEGACY))
    write_plan(repo, "greet-3", _pending(LEGACY).replace("${inputs.who}", "$<inputs.who>"))
    commit_all(repo, "agent: the version again", AGENT)
    _refused(repo, "greet-2")
    _refused(repo, "greet-3")


def test_a_rejected_legacy_draft_moved_is_vetoed(repo: Path) -> None:
    """The same version moved to another slug (``git mv``) and submitted there."""
    _legacy_rejected(repo)
    git(repo, "mv", "plans/greet", "plans/greet-2")
    edit_status(repo, "greet-2", "pending_approval")
    commit_all(repo, "agent: moved", AGENT)
    assert _row(repo, "greet-2").get("status") in ("rejected", "pending_approval")
    _set(repo, "approved", BOB, "greet-2")
    row = _row(repo, "greet-2")
    assert row.get("status") in ("rejected", "pending_approval"), row
    assert "E_VERSION_WITHDRAWN" in json.dumps(row) or row.get("status") == "rejected", row
    assert not _starts(repo, "greet-2")


def test_a_legacy_plan_rejected_before_its_first_freeze_is_vetoed(repo: Path) -> None:
    """Not draft-only (``adrlegp``): the agent submits the legacy plan and Alice rejects it
    in the same push, before any freeze; its copy is refused."""
    write_plan(repo, text=_pending(LEGACY))
    commit_all(repo, "agent: submit", AGENT)
    _set(repo, "rejected", ALICE)
    assert _row(repo).get("status") == "rejected"
    write_plan(repo, "greet-2", _pending(LEGACY))
    commit_all(repo, "agent: the version again", AGENT)
    _refused(repo, "greet-2")
