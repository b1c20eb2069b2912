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
  her merge; pass 4.
- Alice approves every ``*-joined``/``*-departed``; passes 5 and 6; ``plangate audit --json``.

Asserted: a rejection by an approver of the policy in force vetoes (``*-joined`` never runs),
one by a departed approver is ignored (``*-departed`` runs once, valid), an approval by a
departed approver, or the agent, starts nothing (``*-gone``, ``late-departed``,
``flip-agent``), one by a joined approver runs
(``*-ok``); the audit lists exactly that.

Seen: ``BROKEN`` below (filled from the run) and FINDINGS.md, round 63. Held: ``norm-joined``,
``norm-gone``, ``flip-joined``, ``late-departed`` (never run); ``flip-ok`` ran, but credited to
Alice's later update merge, not to Mallory.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, cases, plan_text, valid_runs, xfail
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
_FLIP = (
    "after the flips main's first-parent line runs through the deciders' branches and Alice's "
    "docs branch, not through the controller's `record policy` B (nor its freeze, refusals, "
    "starts and outcomes, now behind second parents)"
)
BROKEN: dict[str, object] = {
    "norm-ok": xfail(
        "audit: a run lost once main is fast-forwarded to a flipped merge",
        "Mallory's approval, merged --no-ff under B, ran at pass 3 (the controller's start and "
        "outcome); " + _FLIP + ": the fresh-clone audit lists no execution of norm-ok and flags "
        "Alice (`illegal` completed, `owned-block-changed`, `log-changed`) for the controller's "
        "own commits her update merge brought. Should: read the controller's commits by record "
        "wherever the first-parent line runs, as the controller knows them",
    ),
    "norm-departed": xfail(
        "wrongly refused: a departed approver's rejection revived by a flipped merge",
        "Bob (departed under B) rejected on a branch merged after B's record (ignored at pass 3, "
        "as round 62's br-departed); " + _FLIP + ", so his rejection is judged by A and "
        "vetoes: Alice's later approval `E_ILLEGAL_TRANSITION` (from rejected), never runs. "
        "Should: judge a withdrawal by the policy the controller recorded before it reached the "
        "branch, whatever the parent order of a later merge",
    ),
    "flip-departed": xfail(
        "wrongly refused: a departed approver's rejection judged by a stale policy",
        "Bob (departed) rejects on his branch after B's record, merges main into it and main "
        "is fast-forwarded; " + _FLIP + ": his rejection vetoes and Alice's approval is "
        "ignored (E_ILLEGAL_TRANSITION). Should: ignored, as with a --no-ff merge",
    ),
    "flip-gone": xfail(
        "slip: a departed approver's approval credited to the next merger",
        "Bob (departed) approves on his branch, merges main in, main fast-forwarded; then Alice "
        "merges main into her docs branch (a `git pull`) and main is fast-forwarded to it: the "
        "plan RAN with approver alice@example.com (the status her merge brought from its second "
        "parent), audit valid. Should: E_APPROVER_NOT_ALLOWED (Bob's decision, not hers)",
    ),
    "flip-agent": xfail(
        "slip: the agent's own `approved` credited to an approver's update merge",
        "the agent commits `status: approved` on main (no pass); Alice, whose docs branch was "
        "forked earlier, merges main into it (`git pull` without rebase) and main is "
        "fast-forwarded to her merge: the plan RAN with approver alice@example.com, the "
        "fresh-clone audit lists it valid. Should: a status the controller's branch already "
        "held before the merge (the second parent is the branch's own previous tip) is no "
        "decision of the merger: E_APPROVER_NOT_ALLOWED (agent)",
    ),
}


def _config(lab: Lab, approvers: list[str]) -> None:
    text = lab.config.read_text()
    first = text.split("approvers: ", 1)[1].split("\n", 1)[0]
    lab.config.write_text(
        text.replace(f"approvers: {first}", f"approvers: {json.dumps(approvers)}")
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    clock = [int(time.time()) - 7200]

    def tick() -> None:
        clock[0] += 30
        lab.git_date = f"@{clock[0]} +0000"

    def run() -> None:
        tick()
        lab.run()

    tick()
    for v in [*VIDS, "late-departed", "flip-agent"]:
        lab.write(v, plan_text(v))
    lab.commit("agent adds plans", AGENT)
    run()
    fork = lab.head()
    tick()
    lab.approve("late-departed", BOB)
    _config(lab, ["alice@example.com", "mallory@example.com"])
    run()
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
            else:
                lab.git("checkout", "-q", "main")
                lab.git("merge", "-q", "--no-ff", "-m", f"merge side/{v}", f"side/{v}", who=who)
        if phase == "flip":
            # the agent sets flip-agent approved on main; Alice, whose docs branch was forked
            # at the start, updates it from main and main is fast-forwarded to her merge
            tick()
            lab.set_status("flip-agent", "approved")
            lab.commit("agent: mark flip-agent ready", AGENT)
            tick()
            lab.git("checkout", "-q", "-b", "alice/docs", fork)
            (lab.repo / "NOTES.md").write_text("runbook notes\n")
            lab.commit("docs: runbook notes", ALICE)
            tick()
            lab.git("merge", "-q", "--no-ff", "-m", "merge main into the branch", "main", who=ALICE)
            lab.git("checkout", "-q", "main")
            lab.git("merge", "-q", "--ff-only", "alice/docs", who=ALICE)
        run()
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


@xfail(
    "audit: disagrees with the controller after a flipped merge",
    "the fresh-clone audit lists 3 executions (flip-agent, flip-gone, flip-ok) where the "
    "controller ran 4 (norm-ok too), and flags policy-hash-mismatch/policy-changed on its "
    "starts: its policy history lost B's record",
)
def test_the_audit_agrees_with_the_controller(lab: Lab) -> None:
    report = lab.report  # type: ignore[attr-defined]
    ran = {e["plan"] for e in report.get("executions", []) if e.get("approval_valid")}
    assert ran == {f"plans/{v}" for v in NOT_RUN + RUN if lab.calls(v)}, report
