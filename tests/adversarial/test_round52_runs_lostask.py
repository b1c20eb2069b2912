"""Round 52 (runs): a plan waiting at an ``on_failure: ask`` pause when the controller's state
is lost (no forgery: the agent does nothing).

docs/execution.md (round 45, "A plan at a gate (or failed) when the journal is lost"): the
committed record is the truth for what already ran; "the finished ones stay recorded"; an
action recorded ``failed`` makes going on unsafe: E_ACTION_IN_DOUBT, nothing runs. Round 45
tested a gate pause; this is the other pause, an ask.

Lab ``la`` (local mode): three plans, each action 1 ``rec``, action 2 ``boom`` (an exec tool
that records its call and exits 1) with ``on_failure: ask``, action 3 ``rec``. Alice
approves; each run waits at action 2 (``awaiting_approval``, action 1 ran once, action 2
once). Then, one after another, a loss, Bob's answer to the ask (status ``approved``) and two
passes:

- ``journal``: the plan's journal folder is gone.
- ``index``: ``<state_dir>/index.sqlite`` is gone (a pure cache).
- ``state``: the whole state directory is gone (a rebuilt host; done last).

Asserted: action 1's ``rec`` ran exactly once (it succeeded and the committed record says
so); action 3 never ran (action 2 never succeeded).

Broke (strict xfail): ``state``: Bob's answer to the ask started the run again from the
beginning: action 1 ran a SECOND time, then action 2 was tried again and the plan waited at
the ask once more (the committed record said action 1 ``succeeded`` and the plan was
waiting at an ask; a lost state made the answer read as a fresh start). Should: go on from
the record (action 1 never again) or fail closed E_ACTION_IN_DOUBT as ``journal`` does.

Held: ``journal`` (failed E_ACTION_IN_DOUBT, nothing ran), ``index`` (the answer ran nothing,
the plan waits at the ask again).

Fixed (2026-11-29): a gate, ask or resume approval always starts a continued run
(``Job.continued``, no longer read from a pause the lost index held), so the engine never
starts it over; with the job row lost, the pause it answers is the one the controller's own
record shows (its last commit of the plan that wrote the ``execution:`` block, when the
branch's block is that one), an ask pause too (``starting._committed_gate``). ``state`` now
fails E_ACTION_IN_DOUBT as ``journal`` does (the record shows action 2 failed: nothing
runs); ``index`` (journal intact) takes Bob's answer as the ask's: action 2 is tried again
and the plan waits at the ask once more.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab
from test_round2_execution_kit import shared

VARIANTS = ["journal", "index", "state"]

BOOM = """\
import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
sys.exit(1)
"""

#: all fixed on 2026-11-29 (see the module docstring)
BROKEN: dict[str, str] = {}


def _plan(tag: str) -> str:
    return f"""\
plan:
  name: {tag}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}, {{name: boom}}]
actions:
  - {{id: 1, tool: rec, why: first, params: {{tag: {tag}-1}}}}
  - {{id: 2, tool: boom, why: fails, on_failure: ask, params: {{tag: {tag}-2}}}}
  - {{id: 3, tool: rec, why: last, params: {{tag: {tag}-3}}}}
"""


def _build(root: Path) -> Lab:
    (root / "boom.py").write_text(BOOM)
    py = json.dumps(sys.executable)
    lab = Lab(
        root / "la",
        tools=f"boom: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'boom.py'))}, "
        f"'{{tag}}'], env: {{REC_LOG: {json.dumps(str(root / 'la' / 'ran.log'))}}}}}\n",
    )
    for vid in VARIANTS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.paused = {v: lab.plan(v)["plan"]["status"] for v in VARIANTS}  # type: ignore[attr-defined]
    losses = {
        "journal": lambda: shutil.rmtree(lab.state / "journal" / "plans%2Fjournal"),
        "index": lambda: (lab.state / "index.sqlite").unlink(),
        "state": lambda: shutil.rmtree(lab.state),
    }
    for vid in VARIANTS:
        losses[vid]()
        lab.set_status(vid, "approved")
        lab.commit(f"answer the ask of {vid}", BOB)
        lab.run(take_over=vid == "state")  # lost for good: told (round 70)
        lab.run()
    lab.final = {v: lab.plan(v)["plan"]["status"] for v in VARIANTS}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r52-lostask", _build)


def test_every_plan_waited_at_the_ask(lab: Lab) -> None:
    assert set(lab.paused.values()) == {"awaiting_approval"}, lab.paused  # type: ignore[attr-defined]


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


@pytest.mark.parametrize("vid", _cases())
def test_action_1_never_runs_again(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-1")) == 1, (lab.final, lab.calls(f"{vid}-1"))  # type: ignore[attr-defined]
    assert lab.calls(f"{vid}-3") == []


@pytest.mark.parametrize("vid", ["journal", "state"])
def test_a_lost_journal_fails_in_doubt_and_nothing_runs(lab: Lab, vid: str) -> None:
    """The record shows action 2 failed: what it did is not known, so nothing runs (a resume
    then goes on from the controller's record)."""
    assert lab.final[vid] == "failed", lab.final  # type: ignore[attr-defined]
    assert "E_ACTION_IN_DOUBT" in lab.codes(vid), lab.codes(vid)[-1500:]
    assert len(lab.calls(f"{vid}-2")) == 1, lab.calls(f"{vid}-2")
