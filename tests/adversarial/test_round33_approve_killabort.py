"""Round 33, who may abort a run whose start was killed: the killed-start recovery (round
29/30, new this hour) finishes a run from the start commit's content on the restart; an abort
committed while the controller was down must still stop it before its first action.

docs/approvals.md: an abort by an allowed approver or an author "stops a running plan before
its next action"; nothing more of the plan runs.

Per lab, passes are killed (SIGKILL, a new approved plan each) until one is killed right
after its ``plangate: start`` commit (the working tree still ``M  plans/<victim>/PLAN.yml``);
the action has not run. Then, before the restart, someone restores the committed file
(``git checkout HEAD -- plans/<victim>``), sets ``status: aborted`` and commits; then two
passes; then a bystander ``zz`` is approved by Alice and one more pass runs.

- ``bob`` (left out for suite time; held when run): Bob (an approver) aborts. Asserted:
  ``rec`` never ran for the victim; the victim ends ``aborted``; the fresh clone's audit
  lists Bob's withdrawal under ``decisions``.
- ``agent`` (left out for suite time; held when run): the agent (the plan's author) aborts.
- ``bob-side``: Bob aborts on a branch ``side`` that Nina (no approver, no author) merges
  ``--no-ff``; same.
- ``bob-reject``: Bob commits ``rejected`` (an executing plan: ``aborted``; the audit lists
  it as an ``abort-request``).
- ``mallory``: Mallory (no approver, no author) aborts: ignored (control: the victim runs
  once).

All: the bystander runs once.

Results: all held.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared
from test_round28_runs_killwrite import killed_start

NINA = ("Nina", "nina@example.com")
LABS = ["bob-side", "bob-reject", "mallory"]
WHO = {"bob": BOB, "mallory": MALLORY, "agent": AGENT, "bob-side": BOB, "bob-reject": BOB}
#: The labs whose withdrawal must stop the run (the audit lists both as ``abort-request``).
STOPS = {"bob": "abort-request", "agent": "abort-request", "bob-side": "abort-request",
         "bob-reject": "reject"}  # fmt: skip


def _build(mode: str):  # type: ignore[no-untyped-def]
    def build(root: Path) -> Lab:
        lab = Lab(root)
        victim = f"k{killed_start(lab, lambda n: f'k{n}', lambda n: plan_text(f'k{n}'))}"
        lab.victim = victim  # type: ignore[attr-defined]
        lab.ran_before = len(lab.calls(victim))  # type: ignore[attr-defined]
        lab.git("checkout", "HEAD", "--", f"plans/{victim}")
        status = "rejected" if mode == "bob-reject" else "aborted"
        if mode == "bob-side":
            lab.git("checkout", "-q", "-b", "side")
        lab.set_status(victim, status)
        lab.commit(f"{status} {victim}", WHO[mode], f"plans/{victim}")
        if mode == "bob-side":
            lab.git("checkout", "-q", "main")
            lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=NINA)
        lab.run()
        lab.run()
        lab.write("zz", plan_text("zz"))
        lab.commit("plan zz", AGENT, "plans/zz")
        lab.run()
        lab.set_status("zz", "approved")
        lab.commit("approve zz", ALICE, "plans/zz")
        lab.run()
        return lab

    return build


@pytest.fixture(scope="module", params=LABS)
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Lab:
    built = shared(tmp_path_factory, f"r33-killabort-{request.param}", _build(request.param))
    built.mode = request.param  # type: ignore[attr-defined]
    return built


def test_the_kill_came_before_the_action(lab: Lab) -> None:
    assert lab.ran_before == 0  # type: ignore[attr-defined]


def test_the_abort_decides(lab: Lab) -> None:
    victim = lab.victim  # type: ignore[attr-defined]
    row = lab.status().get(f"plans/{victim}") or {}
    if lab.mode in STOPS:  # type: ignore[attr-defined]
        assert lab.calls(victim) == [], row
        assert row.get("status") == "aborted", row
    else:
        assert len(lab.calls(victim)) == 1, row


def test_the_fresh_clone_audit_lists_the_abort(lab: Lab) -> None:
    victim = lab.victim  # type: ignore[attr-defined]
    _, report = lab.audit()
    decided = {(d["plan"], d["by"]) for d in report.get("decisions", [])}
    mode = lab.mode  # type: ignore[attr-defined]
    want = (f"plans/{victim}", WHO[mode][1])
    if mode in STOPS:
        assert want in decided, report.get("decisions")
    else:
        assert not [d for d in decided if d[0] == f"plans/{victim}"], decided


def test_bystander(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
