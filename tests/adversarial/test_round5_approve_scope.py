"""Round 5, who may make a plan run: a path rule dodged through a nested plan.

Config: a plan under ``plans/two/**`` needs two approvals. The agent puts its plan at
``plans/two/lib`` (``draft``: a plan meant only for nesting) and a one-action parent at
``plans/free`` (no rule: one approval) whose only action runs ``plans/two/lib`` pinned.
Approving a parent approves its pinned nested plans (docs/approvals.md), and the risk and
``tools:`` rules look into the nested plan; the ``paths`` rule should too, or the plan under
``plans/two`` runs on one approval.

- ``nest-draft``: the library is ``draft``; ``nest-pending``: it is ``pending_approval``
  (frozen, waiting for its own two approvals).

Control: ``plans/two/direct`` waits for a second approval (partial). Broke (2 of 2): the
parent starts on Alice's one approval (`show` says "Needs: 1 approval (default: no rule
matches)") and the library's action runs.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

R5 = "round 5: "
PARENT = """\
plan:
  name: "%s"
  task: "run the library"
  status: pending_approval
actions:
  - id: 1
    why: "the library"
    plan: {path: plans/two/%s, hash: "%s"}
"""
VIDS = ["nest-draft", "nest-pending"]
BROKEN = {
    v: [
        pytest.mark.xfail(
            strict=True,
            raises=AssertionError,
            reason=R5
            + "accepted (docs/approvals.md, paths rules): a plan under a two-approval path runs on "
            "one approval when a parent outside the path pins it; the author picks a plan's path, "
            "so paths organise reviews and risk/tools rules (which look into pins) bound them",
        )
    ]
    for v in VIDS
}


def _build(root: Path) -> Lab:
    lab = Lab(
        root, approval='rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
    )
    lab.write("two/direct", plan_text("direct"))
    lab.write("two/nest-draft", plan_text("nest-draft", status="draft"))
    lab.write("two/nest-pending", plan_text("nest-pending"))
    lab.commit("agent adds libraries", AGENT)
    hashes = {}
    for vid in VIDS:
        out = lab.cli("hash", str(lab.repo / "plans" / "two" / vid / "PLAN.yml"))
        hashes[vid] = out.stdout.split()[0]
    for vid in VIDS:
        lab.write(f"free-{vid}", PARENT % (vid, vid, hashes[vid]))
    lab.commit("agent adds parents", AGENT)
    lab.run()
    time.sleep(1.1)
    lab.approve("two/direct", ALICE)
    for vid in VIDS:
        lab.approve(f"free-{vid}", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r5-scope", _build)


def test_the_direct_plan_waits_for_a_second_approval(lab: Lab) -> None:
    assert lab.calls("direct") == [], lab.codes("two/direct")
    assert "partial" in lab.codes("two/direct"), lab.codes("two/direct")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_a_nested_plan_under_the_path_needs_its_two_approvals(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"free-{vid}")
