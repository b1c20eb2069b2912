"""Round 83 (runs): a twin folder appearing while a plan is paused at its gate (local mode).

docs/plan-format.md (twins): a folder that is one with another on some checkout (case, the
root folder ``plans\\``, a trailing backslash) holds the plan ``E_PLAN_AMBIGUOUS`` for the row,
the pass and every reader; SPEC §15: at most once, exactly as approved.

Lab (one). Plans ``cs``, ``bs``, ``tb``, ``lg``, ``ctl``: action 1 ``rec <v>``, action 2
``rec <v>2`` behind ``requires_approval: true``. Alice approves all; a pass runs action 1 and
pauses. At the gate the agent commits: ``cs`` the twin ``plans/CS/PLAN.yml`` (the same plan,
``status: approved``, action 2 tagged ``<v>-twin``); ``bs`` the root folder ``plans\\``
holding ``bs/PLAN.yml`` (the same twin text); ``tb`` the folder ``plans/tb\\`` holding the
twin; ``lg`` a forged ``plans\\lg/EXECUTION_LOG.md`` saying ``completed``; ``ctl`` nothing.
Alice approves every gate; a pass; the agent removes every twin; a pass.

Then Alice approves again every plan not completed; a pass.

Checks: ``twin`` (no ``<v>-twin`` call, ever); ``once`` (``<v>2`` at most once; ``ctl``
exactly once); ``first`` (action 1 once); ``audit`` (a fresh clone: no valid run of a twin
path, the plan's valid entries each of its own approval); ``row`` (the row is not
``completed`` by a forged record: ``lg``'s status is the controller's); ``gate`` (once the twin
is gone the paused run is a paused run: completed, or back at ``awaiting_approval``, never a
first approval refused ``E_ALREADY_EXECUTED``, never a refusal ``by`` the agent); ``resume``
(Alice's next approval runs the gated action once).

Seen (round 83): **a run paused at its gate is lost when a twin folder comes and goes** (``cs``,
``bs``, ``tb`` ``:{gate,resume}``, 6): ``plans/cs`` ran action 1 and paused (``plangate:
await-approval plans/cs``, row ``awaiting_approval``); the agent committed the twin
``plans/CS/PLAN.yml`` (``bs``: ``plans\\/bs/PLAN.yml``; ``tb``: ``plans/tb\\/PLAN.yml``), the row
went ``held: E_PLAN_AMBIGUOUS`` (held: right); Alice set ``status: approved`` (the gate approval);
a pass (held, nothing ran); the agent ``git rm``'d the twin; the next pass committed ``plangate:
refuse plans/cs`` with ``approval: {status: refused, code: E_ALREADY_EXECUTED, message: "this exact
plan ... already ran here as plans/cs (start ...); a copy, move or rewritten history of it does not
run again", by: agent@example.com}`` and ``plan.status: pending_approval`` beside ``execution:
status: awaiting_approval``: the gate approval read as a FIRST approval, credited to the agent's
removal commit. Alice's next ``status: approved`` is refused the same way: action 2 never runs (the
paused run is lost). Should (docs/approvals.md: "a refused gate approval back to
`awaiting_approval`"; round 80: a twin "removed after [the approval] left the plan waiting"): the
paused run waits at its gate (or runs Alice's gate approval once the twin is gone) and a new gate
approval resumes it. Nothing ran twice; the audit agreed (``ok: true``).
Fixed (2026-12-01, r83gatetwin): the cause was the hold itself: ``Lifecycle._ambiguity`` erased
the plan's status, version and open request, and the release read the file as a plan "from
nothing" (``FileChange(path, None, blob)``), so the status Alice set while held classified as
``None -> approved`` (a FIRST approval) by the release commit, its version's first start
already recorded: ``E_ALREADY_EXECUTED``, ``by`` the agent who removed the twin. Now the hold
keeps what it found (``PlanState.held_from``) and its release takes it back (the file judged as
changed from that version, the paused run still paused, for every twin kind and pause); a
status set while held approves nothing, as rounds 74 and 80 decided for a first approval: it is
that commit's request, refused ``E_PLAN_AMBIGUOUS`` by its own author (``approvals._check_held``),
the plan back at ``awaiting_approval``, and Alice's next approval runs the gate once. A
status-only edit while held makes no writer (she had become one: ``E_SELF_APPROVAL``). The
``row`` control reads the row after the last pass, as the calls are (it had compared the row
before Alice's new approval with the calls after it). Variants:
``test_round83_runs_gatetwinkinds.py``.
Held: no twin's action ever ran; while the twin stood the plan was held ``E_PLAN_AMBIGUOUS``
(``tb\\`` itself ``E_UNSAFE_PATH``); the forged root-folder log (``lg``) changed nothing: the gate
ran once, the row ``completed`` from the controller's record (the audit: no finding); ``ctl``
completed once.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

VIDS = ["cs", "bs", "tb", "lg", "ctl"]


def _gated(v: str, status: str = "pending_approval", tag2: str = "") -> str:
    return plan_text(v, status=status) + (
        f'  - id: 2\n    tool: rec\n    why: "second"\n    requires_approval: true\n'
        f'    params: {{tag: "{tag2 or v + "2"}"}}\n'
    )


def _twin_path(v: str) -> str | None:
    return {
        "cs": "plans/CS/PLAN.yml",
        "bs": "plans\\/bs/PLAN.yml",
        "tb": "plans/tb\\/PLAN.yml",
        "lg": "plans\\/lg/EXECUTION_LOG.md",
    }.get(v)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in VIDS:
        lab.write(v, _gated(v))
    lab.commit("agent plans")
    lab.run()
    for v in VIDS:
        lab.set_status(v, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    seen: dict[str, Any] = {"paused": {k: r.get("status") for k, r in lab.status().items()}}
    for v in VIDS:
        rel = _twin_path(v)
        if rel is None:
            continue
        path = lab.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if v == "lg":
            path.write_text("# Execution log: lg\n\n| Status | ✅ completed |\n")
        else:
            path.write_text(_gated(v, status="approved", tag2=f"{v}-twin"))
    lab.commit("agent: twins at the gate", AGENT)
    for v in VIDS:
        lab.set_status(v, "approved")
    lab.git("add", *[f"plans/{v}/PLAN.yml" for v in VIDS])
    lab.git("commit", "-q", "-m", "approve gates", who=ALICE)
    lab.run()
    seen["mid"] = {k: (r.get("status"), json.dumps(r)[:600]) for k, r in lab.status().items()}
    for v in VIDS:
        rel = _twin_path(v)
        if rel:
            lab.git("--literal-pathspecs", "rm", "-q", "--cached", rel)
            (lab.repo / rel).unlink()
    lab.git("commit", "-q", "-m", "agent: twins removed", who=AGENT)
    lab.run()
    lab.run()
    seen["end"] = {k: (r.get("status"), json.dumps(r)[:600]) for k, r in lab.status().items()}
    seen["end_files"] = {v: lab.plan(v) for v in VIDS}
    # Alice approves again every plan not completed (a new gate approval), one pass
    again = [v for v in VIDS if seen["end"].get(f"plans/{v}", ("",))[0] != "completed"]
    for v in again:
        lab.set_status(v, "approved")
    if again:
        lab.git("add", *[f"plans/{v}/PLAN.yml" for v in again])
    lab.git("commit", "-q", "--allow-empty", "-m", "approve again", who=ALICE)
    lab.run()
    seen["again"] = {k: (r.get("status"), json.dumps(r)[:600]) for k, r in lab.status().items()}
    seen["calls"] = {
        v: (len(lab.calls(v)), len(lab.calls(f"{v}2")), len(lab.calls(f"{v}-twin"))) for v in VIDS
    }
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    seen["audit_err"] = out.stderr[-2000:]
    seen["report"] = json.loads(out.stdout) if out.stdout.strip() else {}
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r83-gatetwin", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, {}))
def test_twin(lab: Lab, vid: str) -> None:
    assert lab.seen["calls"][vid][2] == 0, lab.seen["calls"][vid]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, {}))
def test_once(lab: Lab, vid: str) -> None:
    seen = lab.seen  # type: ignore[attr-defined]
    got = seen["calls"][vid][1]
    assert got == 1 if vid == "ctl" else got <= 1, (seen["calls"][vid], seen["end"].get(vid))


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, {}))
def test_first(lab: Lab, vid: str) -> None:
    assert lab.seen["calls"][vid][0] == 1, lab.seen["calls"][vid]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, {}))
def test_audit(lab: Lab, vid: str) -> None:
    seen = lab.seen  # type: ignore[attr-defined]
    assert "Traceback" not in seen["audit_err"], seen["audit_err"]
    entries = [e for e in seen["report"].get("executions", []) if e.get("approval_valid")]
    twins = [e for e in entries if "\\" in str(e.get("plan")) or e.get("plan") == "plans/CS"]
    assert not twins, twins
    mine = [e for e in entries if e.get("plan") == f"plans/{vid}"]
    assert len({e["approval_commit"] for e in mine}) == len(mine) <= 2, mine
    assert len(mine) == 2 if vid == "ctl" else len(mine) >= 1, mine


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, {}))
def test_row(lab: Lab, vid: str) -> None:
    seen = lab.seen  # type: ignore[attr-defined]
    calls = seen["calls"][vid]
    # the row and the calls read at one time, after the last pass (r83gatetwin: the row
    # after the twin went is "awaiting_approval" when the gate approval made while held is
    # refused, and the calls are counted after Alice's approval again)
    status = seen["again"].get(f"plans/{vid}", ("?", ""))[0]
    # completed only if the gated action really ran; never a status only the forged log says
    assert (status == "completed") == (calls[1] == 1), (status, calls, seen["end"].get(vid))


def _x(what: str) -> Any:
    return pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason=f"round 83 runs: a gate approval met by a twin is lost: {what}",
    )


LOST: dict[str, Any] = {}  # fixed (2026-12-01, r83gatetwin)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, LOST))
def test_gate(lab: Lab, vid: str) -> None:
    """Once the twin is gone, the paused run is a paused run: its gate approval answered (ran),
    or the plan back at ``awaiting_approval`` (docs/approvals.md: "a refused gate approval
    back to `awaiting_approval`"), never a first approval refused E_ALREADY_EXECUTED."""
    seen = lab.seen  # type: ignore[attr-defined]
    status, row = seen["end"].get(f"plans/{vid}", ("?", ""))
    assert status in ("awaiting_approval", "completed"), (status, row)
    assert "E_ALREADY_EXECUTED" not in row, row
    refusal = seen["end_files"][vid].get("approval") or {}
    assert refusal.get("by") != "agent@example.com", refusal


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, LOST))
def test_resume(lab: Lab, vid: str) -> None:
    """Alice's next gate approval runs the gated action, once."""
    seen = lab.seen  # type: ignore[attr-defined]
    assert seen["calls"][vid][1] == 1, (seen["calls"][vid], seen["again"].get(f"plans/{vid}"))
    assert seen["again"][f"plans/{vid}"][0] == "completed", seen["again"][f"plans/{vid}"]
