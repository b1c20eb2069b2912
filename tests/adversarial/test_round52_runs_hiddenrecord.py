"""Round 52 (runs): a finished action HIDDEN from the committed record runs twice after a loss.

The reverse of test_round52_runs_forgedrecord.py / forgedgate.py: there the agent's edit of
the unhashed ``execution:`` block ADDED what never happened; here it REMOVES what did. After
a loss of the journal (round 45: "the committed record is then the truth for what already
ran"), an action the record no longer shows as finished is run again.

Lab ``hr`` (local mode): six plans, each: action 1 ``rec``, action 2 ``rec`` gated, action 3
``rec`` gated. Alice approves; each pauses at gate 2. For the ``hide2-*`` plans Bob approves
gate 2 (action 2 runs once) and they pause at gate 3. The agent then commits one edit of the
``execution:`` blocks only:

- ``hide1-*``: action 1 (which ran) recorded ``pending`` (only ``id``/``key`` kept).
- ``hide2-*``: action 2 (which ran) recorded ``pending``, ``gate: {action: 2}`` and its params.

Then per suffix, one after another, a loss, one gate approval by Bob, two passes:
``-journal`` (the plan's journal folder gone), ``-index`` (``index.sqlite`` gone, a pure
cache), ``-state`` (the whole state directory gone, a rebuilt host; done last).

Asserted: at most once: ``rec`` for action 1 ran exactly once and for action 2 at most once.

Broke (strict xfails): ``hide1-journal``, ``hide1-state``: action 1 ran a SECOND time (the
gate approval re-ran it from the agent's record, then ran action 2 and paused at gate 3);
``hide2-state``: action 2 ran a SECOND time on Bob's gate approval (the record said gate 2,
action 2 pending). Should: trust only the controller's own last commit of the record (or
fail closed, E_ACTION_IN_DOUBT), never re-run an action that ran.

Held: ``hide1-index``, ``hide2-index`` (journal present), ``hide2-journal`` (the run paused
at gate 2 again, nothing ran twice).

Fixed (2026-11-29): after a journal loss the run goes on only from the controller's own
record (the ``execution:`` block of its last commit of the plan that wrote it, before the
start: ``controller/git/ownrecord.py``), and only when the branch's block is that record;
otherwise it journals what that record shows finished and fails E_ACTION_IN_DOUBT, nothing
runs (``PlanRun._committed_record``). ``hide1-journal``, ``hide1-state``, ``hide2-journal``
and ``hide2-state`` now fail closed so (action 1 and action 2 never again; the outcome
commit writes the controller's record back); the ``-index`` plans (journal intact) pause
again, the hidden record being no pause of the controller's (``starting._committed_gate``).
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab
from ruamel.yaml import YAML
from test_round2_execution_kit import shared

SUFFIXES = ["journal", "index", "state"]
VARIANTS = [f"hide{n}-{s}" for s in SUFFIXES for n in (1, 2)]

#: all fixed on 2026-11-29 (see the module docstring)
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


def _hide(lab: Lab, slug: str) -> None:
    yaml = YAML()
    path = lab.repo / "plans" / slug / "PLAN.yml"
    data = yaml.load(path.read_text(encoding="utf-8"))
    ex = data["execution"]
    index = 0 if slug.startswith("hide1") else 1
    entry = ex["actions"][index]
    for key in list(entry):
        if key not in ("id", "key"):
            del entry[key]
    entry["status"] = "pending"
    if index == 1:
        ex["gate"]["action"] = 2
        ex["gate"]["params"] = {"tag": f"{slug}-2"}
    out = io.StringIO()
    yaml.dump(data, out)
    path.write_text(out.getvalue(), encoding="utf-8")


def _build(root: Path) -> Lab:
    lab = Lab(root / "hr")
    for vid in VARIANTS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    for vid in VARIANTS:
        if vid.startswith("hide2"):
            lab.set_status(vid, "approved")
    lab.commit("gate 2", BOB)
    lab.run()
    lab.paused = {  # type: ignore[attr-defined]
        v: lab.plan(v)["execution"].get("gate", {}).get("action") for v in VARIANTS
    }
    for vid in VARIANTS:
        _hide(lab, vid)
    lab.commit("tidy the records", AGENT)
    for suffix in SUFFIXES:
        group = [v for v in VARIANTS if v.endswith(f"-{suffix}")]
        if suffix == "journal":
            for vid in group:
                shutil.rmtree(lab.state / "journal" / f"plans%2F{vid}")
        elif suffix == "index":
            (lab.state / "index.sqlite").unlink()
        else:
            shutil.rmtree(lab.state)
        for vid in group:
            lab.set_status(vid, "approved")
        lab.commit(f"gates {suffix}", BOB)
        lab.run(take_over=suffix == "state")  # lost for good: told (round 70)
        lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r52-hiddenrecord", _build)


def test_setup_paused_where_expected(lab: Lab) -> None:
    paused = lab.paused  # type: ignore[attr-defined]
    assert paused == {v: 2 if v.startswith("hide1") else 3 for v in VARIANTS}, paused


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
def test_no_action_runs_twice(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-1")) == 1, lab.calls(f"{vid}-1")
    assert len(lab.calls(f"{vid}-2")) <= 1, lab.calls(f"{vid}-2")
    assert len(lab.calls(f"{vid}-3")) == 0, lab.calls(f"{vid}-3")
