"""Round 32, quorum and runs-once: a failed or paused run carried to another folder, its
status (``failed``, ``awaiting_approval``, ``aborted``) and ``execution:`` block along, so
that one approval there looks like a resume or a gate approval ("still need one approval").

Config: the bench's, plus ``plans/two/**`` needs two approvals and a ``flaky`` exec tool that
fails until a marker file exists. The agent writes each plan; Alice and Bob approve it (the
quorum). The ``f-*`` plans (``rec``, ``flaky``, ``rec`` tagged ``<vid>-3``) fail at action 2;
the ``g-*`` plans pause at their gated action 2 (``<vid>-gated``). Then:

- ``f-abort-cp`` / ``g-abort-cp``: Bob aborts the plan; the agent copies its folder (status
  ``aborted``) to ``<vid>-b``;
- ``f-cp`` / ``g-cp``: the agent copies the failed / paused plan's folder to ``<vid>-b``;
- ``f-mv`` / ``f-abort-mv``: the agent ``git mv``s the failed (aborted) folder to ``<vid>-b``.

The marker is created (the tool would now succeed); Carol alone approves each ``<vid>-b``.

Asserted: nothing of the carried run runs again or goes on: ``rec`` ran once for ``<vid>``,
never for ``<vid>-3`` or ``<vid>-gated``; the copy is refused (``E_ALREADY_EXECUTED``).

Results: every variant held (``E_ALREADY_EXECUTED``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

FLAKY = """\
plan:
  name: "{t}"
  task: "t {t}"
  status: pending_approval
available_tools:
  - name: rec
  - name: flaky
actions:
  - id: 1
    tool: rec
    why: "first"
    params:
      tag: "{t}"
  - id: 2
    tool: flaky
    why: "fails until the marker exists"
  - id: 3
    tool: rec
    why: "third"
    params:
      tag: "{t}-3"
"""
GATE = """\
  - id: 2
    tool: rec
    why: "gated"
    requires_approval: true
    params:
      tag: "{t}-gated"
"""
FV = ["f-abort-cp", "f-cp", "f-mv", "f-abort-mv"]
GV = ["g-abort-cp", "g-cp"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    mark = root / "MARK"
    lab.write_config(
        approval='rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n',
        tools=f'flaky: {{kind: exec, argv: ["sh", "-c", "test -e {mark}"]}}\n',
    )
    for vid in FV:
        lab.write(f"two/{vid}", FLAKY.format(t=vid))
    for vid in GV:
        lab.write(f"two/{vid}", plan_text(vid, extra_actions=GATE.format(t=vid)))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for who in (ALICE, BOB):
        for vid in FV + GV:
            lab.approve(f"two/{vid}", who)
        lab.run()
    lab.run()
    for vid in ["f-abort-cp", "f-abort-mv", "g-abort-cp"]:
        lab.set_status(f"two/{vid}", "aborted")
        lab.commit(f"bob aborts {vid}", BOB)
    lab.run()
    mark.write_text("now it works\n")
    plans = lab.repo / "plans" / "two"
    for vid in ["f-abort-cp", "f-cp", "g-abort-cp", "g-cp"]:
        shutil.copytree(plans / vid, plans / f"{vid}-b")
    for vid in ["f-mv", "f-abort-mv"]:
        lab.git("mv", f"plans/two/{vid}", f"plans/two/{vid}-b")
    lab.commit("agent carries the runs along", AGENT)
    lab.run()
    for vid in FV + GV:
        lab.approve(f"two/{vid}-b", CAROL)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r32-resumecopy", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(FV + GV))
def test_a_carried_run_does_not_go_on(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(f"two/{vid}-b")
    assert lab.calls(f"{vid}-3") == [], lab.codes(f"two/{vid}-b")
    assert lab.calls(f"{vid}-gated") == [], lab.codes(f"two/{vid}-b")
    assert not lab.started(f"two/{vid}-b"), lab.subjects(f"two/{vid}-b")
