"""Round 52 (runs): a forged ``gate:`` / action record answering a LATER gate after a loss.

docs/execution.md (round 45): after a journal loss "the committed record is then the truth
for what already ran", and "the pause a gate approval answers is the one the history index
recorded, or when the index was lost, the one the committed ``gate:`` shows". The
``execution:`` block is not hashed; the agent (no approver) can commit an edit of it.

Lab ``fg`` (local mode): four plans ``<vid>``, each: action 1 ``rec``, action 2 ``rec`` gated
(``requires_approval``), action 3 ``rec`` gated too. Alice approves; each run pauses at gate 2
after action 1. The agent then commits one edit of every plan's ``execution:`` block:
``gate: {action: 3}`` (the pause moved to the second gate) and action 2 recorded
``succeeded`` (attempts 1, no outputs). Then, one variant after another, a loss, ONE gate
approval by Bob (meant for gate 2: it is the gate ``show`` names), two passes:

- ``journal``: the plan's journal folder is gone.
- ``index``: ``<state_dir>/index.sqlite`` is gone (a pure cache, docs round 27).
- ``index-journal``: both.
- ``state``: the whole state directory is gone (done last).

Asserted: one gate approval never runs the action behind the second gate (``<vid>-3`` ran 0
times), and action 2 was never taken as done without running (the plan is not
``completed`` with ``<vid>-2`` never called, and the controller's own last commit of the
file does not record action 2 ``succeeded`` while its tool never ran).

Broke (strict xfails):

- ``journal``: Bob's gate approval took the agent's record of action 2 as done: action 2's
  tool never ran, the controller committed ``await-approval`` with action 2 ``succeeded``
  (the agent's bytes, now under the controller's name) and the run paused at gate 3.
- ``index-journal`` and ``state``: Bob's ONE gate approval (for gate 2) skipped action 2 and
  ran action 3, which sits behind a gate of its own; the controller committed ``complete``
  with action 2 ``succeeded`` although its tool never ran.

Should: read the committed record only as the controller last committed it (a person's edit
of the block is E_OWNED_BLOCK_CHANGED for ``show`` already), or fail closed
(E_ACTION_IN_DOUBT), never skip an approved action or let one approval pass two gates.

Held: ``index`` (journal present: the approval was not taken for gate 3; the run paused at
gate 2 again and nothing ran).

Fixed (2026-11-29): after a loss the controller reads the committed record only as it last
committed it: the ``execution:`` block of its own last commit of the plan that wrote the
block (a pause, a failure, an outcome: by its record of the commits it made, never by name;
``controller/git/ownrecord.py``, which ``show`` reads the record with too), before the
run's start commit. The pause a gate approval answers when the index lost it is the one
that record shows, and only when the branch's block is that record
(``starting._committed_gate``); a run whose journal was lost goes on from that record only
when the branch's block is that record (``PlanRun._committed_record``). Here the agent's
edit is on the branch: ``journal``, ``index-journal`` and ``state`` journal what the
controller's record shows finished (action 1), then fail E_ACTION_IN_DOUBT: no tool runs,
and the outcome commit writes the controller's record back (action 2 ``pending``);
``index`` (journal intact) pauses at gate 2 again, nothing run.

Test changed (2026-11-29): the assertion "an approval that went somewhere ran action 2"
read a failed outcome as an approval gone astray. A run that fails closed
(``failed``, E_ACTION_IN_DOUBT, no tool called after the loss) took the approval nowhere:
it is what the round-45 rules do for a lost journal whose record cannot be trusted, and a
resume then goes on from the controller's own record. Such an outcome is accepted when it
says E_ACTION_IN_DOUBT and action 2's tool never ran; everything else is asserted as
before.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab
from ruamel.yaml import YAML
from test_round2_execution_kit import shared

VARIANTS = ["journal", "index", "index-journal", "state"]

#: filled from what this round saw (see the module docstring); all fixed on 2026-11-29
BROKEN: dict[str, str] = {}


def _plan(tag: str) -> str:
    return f"""\
plan:
  name: {tag}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - {{id: 1, tool: rec, why: first, params: {{tag: {tag}-1}}}}
  - {{id: 2, tool: rec, why: gate two, requires_approval: true, params: {{tag: {tag}-2}}}}
  - {{id: 3, tool: rec, why: gate three, requires_approval: true, params: {{tag: {tag}-3}}}}
"""


def _forge(lab: Lab, slug: str) -> None:
    yaml = YAML()
    path = lab.repo / "plans" / slug / "PLAN.yml"
    data = yaml.load(path.read_text(encoding="utf-8"))
    ex = data["execution"]
    ex["gate"]["action"] = 3
    second = ex["actions"][1]
    second["status"] = "succeeded"
    second["attempts"] = 1
    second["started_at"] = ex["actions"][0]["started_at"]
    second["duration_ms"] = 5
    second["outputs"] = {}
    out = io.StringIO()
    yaml.dump(data, out)
    path.write_text(out.getvalue(), encoding="utf-8")


def _build(root: Path) -> Lab:
    lab = Lab(root / "fg")
    for vid in VARIANTS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.paused = {v: lab.plan(v)["plan"]["status"] for v in VARIANTS}  # type: ignore[attr-defined]
    for vid in VARIANTS:
        _forge(lab, vid)
    lab.commit("tidy the records", AGENT)
    journal = lab.state / "journal"
    losses = {
        "journal": lambda: shutil.rmtree(journal / "plans%2Fjournal"),
        "index": lambda: (lab.state / "index.sqlite").unlink(),
        "index-journal": lambda: (
            (lab.state / "index.sqlite").unlink(),
            shutil.rmtree(journal / "plans%2Findex-journal"),
        ),
        "state": lambda: shutil.rmtree(lab.state),
    }
    for vid in VARIANTS:
        losses[vid]()
        lab.set_status(vid, "approved")
        lab.commit(f"gate 2 of {vid}", BOB)
        lab.run(take_over=vid == "state")  # lost for good: told (round 70)
        lab.run()
    lab.final = {v: lab.plan(v)["plan"]["status"] for v in VARIANTS}  # type: ignore[attr-defined]
    lab.second = {  # type: ignore[attr-defined]
        v: lab.plan(v)["execution"]["actions"][1].get("status") for v in VARIANTS
    }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r52-forgedgate", _build)


def _cases() -> list:  # type: ignore[type-arg]
    return [
        pytest.param(
            v,
            id=v,
            marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 52: {r}")]
            if (r := BROKEN.get(v))
            else [],
        )
        for v in VARIANTS
    ]


def test_every_plan_paused_at_gate_2(lab: Lab) -> None:
    assert set(lab.paused.values()) == {"awaiting_approval"}, lab.paused  # type: ignore[attr-defined]
    assert all(len(lab.calls(f"{v}-2")) == 0 for v in VARIANTS)


@pytest.mark.parametrize("vid", _cases())
def test_one_gate_approval_runs_action_2_not_3(lab: Lab, vid: str) -> None:
    final = lab.final[vid]  # type: ignore[attr-defined]
    assert len(lab.calls(f"{vid}-1")) == 1, lab.calls(f"{vid}-1")
    assert lab.calls(f"{vid}-3") == [], (final, lab.calls(f"{vid}-3"))
    assert len(lab.calls(f"{vid}-2")) <= 1
    if final == "failed":  # failed closed: the approval went nowhere, nothing ran
        assert lab.calls(f"{vid}-2") == [], lab.calls(f"{vid}-2")
        assert "E_ACTION_IN_DOUBT" in lab.codes(vid), lab.codes(vid)[-1500:]
    elif final != "awaiting_approval" or lab.calls(f"{vid}-2") == []:
        # the approval went somewhere: then it must have run action 2, the gate it answered
        assert len(lab.calls(f"{vid}-2")) == 1 or final == "awaiting_approval", final
    assert not (final == "completed" and not lab.calls(f"{vid}-2")), final
    # the controller's own commit never records as succeeded a gated action whose tool never ran
    second = lab.second[vid]  # type: ignore[attr-defined]
    assert lab.calls(f"{vid}-2") or second != "succeeded", (final, second)
