"""Round 52 (runs): a plan paused at a gate moved or copied to a new path (no state loss).

The journal is keyed by the plan's path; a paused plan at a new path has an empty journal
there, the trigger of the round-45 recovery that trusts the committed ``execution:`` block
(see test_round52_runs_forgedrecord.py, where a journal loss made it trust an agent's edit).
Here the agent needs no loss: it moves or copies the paused plan itself.

Lab ``mg``: three plans, each: action 1 ``rec`` (``who: real@example.net``, output ``who``),
action 2 ``rec`` gated with ``to: $<actions[1].outputs.who>``, action 3 ``rec``. Alice
approves; each pauses at the gate. The agent then, in one commit:

- ``mvplain``: ``git mv plans/mvplain plans/mvplain2`` (record untouched);
- ``mvforge``: edits the ``execution:`` block (action 1's output ``who`` and the gate's
  ``to`` become ``evil@attacker.example``) and moves the folder to ``plans/mvforge2``;
- ``cpforge``: the same edit, and copies the folder to ``plans/cpforge2`` (original kept).

Bob then approves the gate at the NEW path; two passes.

Asserted: no tool call gets ``evil@attacker.example``; action 1 ran once; nothing behind the
gate ran for the new paths (the controller refuses them E_ALREADY_EXECUTED). All held.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab
from ruamel.yaml import YAML
from test_round2_execution_kit import shared

EVIL = "evil@attacker.example"
VARIANTS = ["mvplain", "mvforge", "cpforge"]


def _plan(tag: str) -> str:
    return f"""\
plan:
  name: {tag}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - id: 1
    tool: rec
    why: read
    params: {{tag: {tag}-1, who: real@example.net}}
    outputs: [{{name: who, path: $.json.echo.who}}]
  - id: 2
    tool: rec
    why: send
    requires_approval: true
    params: {{tag: {tag}-2, to: "$<actions[1].outputs.who>"}}
  - {{id: 3, tool: rec, why: last, params: {{tag: {tag}-3}}}}
"""


def _build(root: Path) -> Lab:
    lab = Lab(root / "mg")
    for vid in VARIANTS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    for vid in ("mvforge", "cpforge"):
        yaml = YAML()
        path = lab.repo / "plans" / vid / "PLAN.yml"
        data = yaml.load(path.read_text(encoding="utf-8"))
        data["execution"]["actions"][0]["outputs"]["who"] = EVIL
        data["execution"]["gate"]["params"]["to"] = EVIL
        out = io.StringIO()
        yaml.dump(data, out)
        path.write_text(out.getvalue(), encoding="utf-8")
    lab.git("mv", "plans/mvplain", "plans/mvplain2")
    lab.git("mv", "plans/mvforge", "plans/mvforge2")
    shutil.copytree(lab.repo / "plans" / "cpforge", lab.repo / "plans" / "cpforge2")
    lab.commit("reorganise", AGENT)
    lab.run()
    for vid in VARIANTS:
        lab.set_status(f"{vid}2", "approved")
    lab.commit("gates", BOB)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r52-movedgate", _build)


@pytest.mark.parametrize("vid", VARIANTS)
def test_nothing_runs_with_the_agents_record(lab: Lab, vid: str) -> None:
    calls = [c for n in (1, 2, 3) for c in lab.calls(f"{vid}-{n}")]
    assert not [c for c in calls if EVIL in c["stdin"]], calls
    assert len(lab.calls(f"{vid}-1")) == 1, lab.calls(f"{vid}-1")
    assert lab.calls(f"{vid}-2") == [] and lab.calls(f"{vid}-3") == [], calls
    assert "E_ALREADY_EXECUTED" in lab.codes(f"{vid}2"), lab.codes(f"{vid}2")[-1500:]
