"""Round 45, at most once when the controller's state is lost while a plan waits at a gate.

docs/execution.md ("After a crash or restart"): "If the history index or the whole state
directory is lost, the controller finds the plans ``executing`` by its own start commits ...
without [the journal] ... nothing runs; the plan ends ``failed`` with E_ACTION_IN_DOUBT ...
any action may already have taken effect", and ``index.sqlite`` is a pure cache (round 27).
A plan paused at a gate (``awaiting_approval``) is no ``executing`` plan, so the lost journal
is not noticed there.

Lab ``lg`` (local mode): four plans, each ``rec`` (action 1) then a gated ``rec`` (action 2,
``requires_approval: true``), approved by Alice and run: each pauses at the gate after action 1
ran (PLAN.yml at HEAD records action 1 ``succeeded``). Then, one plan after another, the loss,
Bob's gate approval and two passes:

- ``control``: nothing lost. Held (action 1 once, action 2 once, completed).
- ``index-lost``: ``<state_dir>/index.sqlite`` deleted (docs: a pure cache of git).
- ``journal-lost``: the plan's journal folder in ``<state_dir>/journal`` is gone (a restored
  backup without it).
- ``state-lost``: the whole state directory is gone (a new disk, a new host with the same
  config), the case the docs name.

If the plan paused again, Bob approves the gate once more, and two passes (each loss plays
out before the next one).

Asserted: action 1's tool ran exactly once in all; action 2's at most once.

Broke (round 45): ``journal-lost`` and ``state-lost``: Bob's gate approval started the run
from the beginning: action 1's ``rec`` ran a second time (the committed PLAN.yml said it had
succeeded) and the plan paused at the gate again; Bob's second gate approval then ran action 2
and the plan completed (action 1 twice, action 2 once). ``index-lost`` held at most once (the
first gate approval after the deletion was not taken as the gate's answer: a new start
commit, paused again, nothing run; the second completed it). It should end ``failed`` with
E_ACTION_IN_DOUBT (nothing runs, as for an ``executing`` plan without a journal), or go on
from the gate with what the committed record says finished, never run action 1 again.
(The brief puts an operator *editing* the state directory out of scope; this is its loss,
which the docs promise to survive.)

Fixed (round 45): the committed record is the truth for what already ran. A start whose
journal holds no run yet, of a plan whose committed ``execution:`` block records actions of
this frozen hash as finished, journals those as ``recovered`` (never run again) with the
outputs the record shows; a value it shows masked or cut, every result and the approval that
started the plan are not known (a reference to one fails E_ACTION_IN_DOUBT, nothing is
called with a masked value); a record showing an action started, failed or in doubt fails
the run E_ACTION_IN_DOUBT, nothing runs (controller/execution/executor.py
``PlanRun._from_record``). And a gate approval with the history index lost answers the
pause the committed record shows (its ``gate:``), no longer read from the index alone
(controller/service/starting.py): ``index-lost`` too completes on the first gate approval.
Each variant now completes after one gate approval, action 1 once, action 2 once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

VARIANTS = ["control", "index-lost", "journal-lost", "state-lost"]


def _gate(tag: str) -> str:
    return f"""  - id: 2
    tool: rec
    why: after the gate
    requires_approval: true
    params: {{tag: {tag}-2}}
"""


def _build(root: Path) -> Lab:
    (root / "lg").mkdir()
    lab = Lab(root / "lg")
    for vid in VARIANTS:
        lab.write(vid, plan_text(vid, extra_actions=_gate(vid)))
    lab.commit("plans")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.paused = {v: lab.plan(v)["plan"]["status"] for v in VARIANTS}  # type: ignore[attr-defined]
    losses = {
        "control": lambda: None,
        "index-lost": lambda: (lab.state / "index.sqlite").unlink(),
        "journal-lost": lambda: shutil.rmtree(lab.state / "journal" / "plans%2Fjournal-lost"),
        "state-lost": lambda: shutil.rmtree(lab.state),
    }
    lab.answers = {}  # type: ignore[attr-defined]
    for vid in VARIANTS:  # each loss plays out before the next; state-lost last
        losses[vid]()
        for _ in range(2):  # the gate approved, then once more if the plan paused again
            if lab.plan(vid)["plan"]["status"] != "awaiting_approval":
                break
            lab.answers[vid] = lab.answers.get(vid, 0) + 1  # type: ignore[attr-defined]
            lab.set_status(vid, "approved")
            lab.commit(f"gate {vid}", BOB)
            lab.run(take_over=vid == "state-lost")  # lost for good: told (round 70)
            lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r45-lostgate", _build)


def test_every_plan_paused_at_the_gate(lab: Lab) -> None:
    assert set(lab.paused.values()) == {"awaiting_approval"}, lab.paused  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", VARIANTS)
def test_action_1_never_runs_again(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.calls(vid)
    assert len(lab.calls(f"{vid}-2")) <= 1


@pytest.mark.parametrize("vid", VARIANTS)
def test_the_first_gate_approval_goes_on_from_the_gate(lab: Lab, vid: str) -> None:
    """The committed record says action 1 succeeded: Bob's one gate approval runs action 2
    and the plan completes, the record still saying action 1 succeeded (one attempt)."""
    assert lab.answers[vid] == 1, lab.answers  # type: ignore[attr-defined]
    data = lab.plan(vid)
    assert data["plan"]["status"] == "completed", data.get("execution")
    assert len(lab.calls(f"{vid}-2")) == 1
    first = data["execution"]["actions"][0]
    assert (first["id"], first["status"], first["attempts"]) == (1, "succeeded", 1)
