"""Round 63, approval side: the recorded policy (round 61, held in round 62) against a branch
merged late with its PARENTS FLIPPED: the stale branch merges main into itself and main is
fast-forwarded to that merge, so the decision sits on main's first-parent line with no
controller record of the new policy before it.

docs/approvals.md, "The recorded policy": "Withdrawals are judged by the controller's last own
record before them"; docs/threat-model.md (round 27): "who may reject or abort is judged by the
policy the controller had recorded ... in the withdrawal's first-parent history". Round 62's
``br-*`` merged a branch forked before a record ``--no-ff`` into main after it (the joined
approver vetoed, the departed one was ignored). A fast-forward to a merge whose first parent
is the stale branch gives main the same tree and the same commits, in the other order.

Lab (one, local mode, dates on a past clock, no sleep). Policy A: the bench's approvers (Alice,
Bob). Policy B: Alice and Mallory (Bob departed, Mallory joined).

- pass 1 (A): every plan frozen, A recorded; the fork point. Bob approves ``late-departed``
  on main (no pass).
- the config becomes B; pass 2 records B (``late-departed`` is judged now).
- per variant a branch from the fork point, one decision committed after B's record:
  ``*-joined`` (Mallory rejects), ``*-departed`` (Bob rejects), ``*-ok`` (Mallory approves),
  ``*-gone`` (Bob approves). First ``norm-*`` (controls): each merged ``--no-ff`` into main
  by the decider; pass 3. Then ``flip-*``: the decider's ``git merge main`` on her branch (the
  everyday "update branch", or ``git pull`` without rebase), main fast-forwarded to it; then
  ``flip-agent``: the agent commits ``status: approved`` on main, and Alice, whose docs branch
  (``NOTES.md``) was forked at the start, merges main into it and main is fast-forwarded to
  her merge; pass 4 holds (below), the owner resets main to the tip the controller saw and
  the same updates are made again with merge commits, in the same order, each by its maker
  (the agent's commit merged by the agent); pass 4 again.
- Alice approves every ``*-joined``/``*-departed``; passes 5 and 6; ``plangate audit --json``.

Asserted: a rejection by an approver of the policy in force vetoes (``*-joined`` never runs),
one by a departed approver is ignored (``*-departed`` runs once, valid), an approval by a
departed approver, or the agent, starts nothing (``*-gone``, ``late-departed``,
``flip-agent``), one by a joined approver runs
(``*-ok``); the audit lists exactly that.

Fixed (2026-11-29): ``flip-agent``, ``flip-gone``, ``flip-departed``, ``norm-departed``,
``norm-ok`` and the audit check. The controller no longer follows a branch whose first-parent
line lost the tip it last read (``HistoryIndex.scan``, ``Refs.on_first_parent_line``): such a
tip is a fast-forward to a merge of the branch into another line, whose decisions git would
credit to the merger and whose controller records (policy B, starts, outcomes) sit behind a
second parent for every reader after it. The pass holds, nothing is decided,
``E_HISTORY_REWRITTEN`` (``FirstParentSwapped``) names both tips and the remedy: the branch
back to the tip the controller saw (it committed nothing since) and the updates merged again
with merge commits by those who made them. The lab asserts the hold, then follows the remedy.

Seen before the fix (FINDINGS.md, round 63): the six ids above broke (strict xfails until
2026-11-29). Held: ``norm-joined``, ``norm-gone``, ``flip-joined``, ``late-departed`` (never
run); ``flip-ok`` ran, but credited to Alice's later update merge, not to Mallory (credited to
Mallory's own merge since the fix).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, cases, plan_text, valid_runs
from policykit import PastClock, set_approvers
from test_round2_execution_kit import shared

DECIDED = {
    "joined": (MALLORY, "rejected"),
    "departed": (BOB, "rejected"),
    "ok": (MALLORY, "approved"),
    "gone": (BOB, "approved"),
}
VIDS = [f"{m}-{k}" for m in ("norm", "flip") for k in DECIDED]
RUN = [v for v in VIDS if v.endswith(("-departed", "-ok"))]
NOT_RUN = [v for v in VIDS if v not in RUN] + ["late-departed", "flip-agent"]
#: Fixed 2026-11-29: the controller holds on a flipped line (see the module docstring).
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    clock = PastClock(lab)
    tick, run = clock.tick, clock.run

    tick()
    for v in [*VIDS, "late-departed", "flip-agent"]:
        lab.write(v, plan_text(v))
    lab.commit("agent adds plans", AGENT)
    run()
    fork = seen = lab.head()
    tick()
    lab.approve("late-departed", BOB)
    set_approvers(lab, ["alice@example.com", "mallory@example.com"])
    run()
    merged: list[tuple[str, tuple[str, str]]] = []
    for phase in ("norm", "flip"):
        for v in [x for x in VIDS if x.startswith(phase)]:
            who, status = DECIDED[v.split("-", 1)[1]]
            tick()
            lab.git("checkout", "-q", "-b", f"side/{v}", fork)
            lab.set_status(v, status)
            lab.commit(f"{status} {v}", who)
            tick()
            if phase == "flip":
                lab.git(
                    "merge", "-q", "--no-ff", "-m", "merge main into the branch", "main", who=who
                )
                lab.git("checkout", "-q", "main")
                lab.git("merge", "-q", "--ff-only", f"side/{v}", who=who)
                merged.append((f"side/{v}", who))
            else:
                lab.git("checkout", "-q", "main")
                lab.git("merge", "-q", "--no-ff", "-m", f"merge side/{v}", f"side/{v}", who=who)
        if phase == "flip":
            # the agent sets flip-agent approved on main; Alice, whose docs branch was forked
            # at the start, updates it from main and main is fast-forwarded to her merge
            tick()
            lab.set_status("flip-agent", "approved")
            lab.commit("agent: mark flip-agent ready", AGENT)
            merged.append((lab.head(), AGENT))  # the agent's commit, put back as it was made
            tick()
            lab.git("checkout", "-q", "-b", "alice/docs", fork)
            (lab.repo / "NOTES.md").write_text("runbook notes\n")
            lab.commit("docs: runbook notes", ALICE)
            tick()
            lab.git("merge", "-q", "--no-ff", "-m", "merge main into the branch", "main", who=ALICE)
            lab.git("checkout", "-q", "main")
            lab.git("merge", "-q", "--ff-only", "alice/docs", who=ALICE)
            tick()
            merged.append(("alice/docs", ALICE))
            assert lab.run(check=False).returncode != 0  # the pass decided nothing
            assert lab.calls("flip-agent") == lab.calls("flip-gone") == []
            lab.restore_line(seen, merged)
        run()
        seen = lab.head()
    tick()
    for v in VIDS:
        if v.endswith(("-joined", "-departed")):
            lab.set_status(v, "approved")
    lab.commit("alice approves", ALICE)
    run()
    run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    lab.git_date = None
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r63-flipmerge", _build)


@pytest.mark.parametrize("vid", cases(RUN, RUN, BROKEN))  # type: ignore[arg-type]
def test_runs_under_the_policy_in_force(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid), lab.report  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(NOT_RUN, NOT_RUN, BROKEN))  # type: ignore[arg-type]
def test_never_runs_under_the_policy_in_force(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


def test_the_audit_agrees_with_the_controller(lab: Lab) -> None:
    report = lab.report  # type: ignore[attr-defined]
    ran = {e["plan"] for e in report.get("executions", []) if e.get("approval_valid")}
    assert ran == {f"plans/{v}" for v in NOT_RUN + RUN if lab.calls(v)}, report
