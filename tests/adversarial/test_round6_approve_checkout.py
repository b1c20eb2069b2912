"""Round 6, approval side: ``plangate approve`` in a checkout the agent prepared, and plans
nobody committed.

Round 5 tried a sibling plan staged or unstaged beside the one Alice approves, and Alice's
approval commit moved into a sub folder. Here the other plan lives *inside* the folder Alice
names (``plans/nest/sub`` is a plan of its own, not pinned by ``plans/nest``):

- ``nest-staged``: the agent stages ``status: approved`` in ``plans/nest-staged/sub``; Alice
  runs ``plangate approve plans/nest-staged`` (a ``Plan: plans/nest-staged`` trailer is a
  prefix of the sub plan's path);
- ``nest-unstaged``: the same edit left unstaged in the working tree.

And who wrote a plan that was never committed (local mode adopts an untracked
``pending_approval`` PLAN.yml: frozen and committed by the controller):

- ``adopt-alice``: Alice, an approver sharing the checkout, writes ``plans/adopt-alice`` and
  leaves it untracked; the controller adopts it; Alice approves her own plan.

Defence: the sub plans never run (held: 2 of 2); Alice's own plan is not approved by Alice
alone (broke: strict xfail).
Control: ``nest-staged`` and ``nest-unstaged`` themselves run (Alice approved them).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_approval_authors import shared_lab

NESTS = ["nest-staged", "nest-unstaged"]
BROKEN: dict[str, object] = {
    "adopt-alice": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 6: a plan Alice wrote and left untracked is adopted (committed as the"
        " controller's), Alice alone approves it and it runs; a fresh clone's audit calls it"
        " valid (docs/approvals.md says git cannot tell who wrote it; not in the threat model's"
        " accepted limits)",
    )
}


def _approve_cli(lab: Lab, path: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "controller", "approve", "--config", str(lab.config), path],
        cwd=lab.repo,
        env=lab.env(ALICE),
        capture_output=True,
        text=True,
        check=False,
    )
    return f"{result.returncode} {result.stdout}{result.stderr}"


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in NESTS:
        lab.write(vid, plan_text(vid))
        lab.write(f"{vid}/sub", plan_text(f"{vid}-sub"))
    lab.commit("agent adds the plans", AGENT)
    # Alice's plan, written in the shared checkout and never committed
    lab.write("adopt-alice", plan_text("adopt-alice"))
    lab.run()  # freeze; adopt
    lab.outputs = {}  # type: ignore[attr-defined]
    for vid in NESTS:
        lab.set_status(f"{vid}/sub", "approved")
        if vid == "nest-staged":
            lab.git("add", f"plans/{vid}/sub/PLAN.yml")
        lab.outputs[vid] = _approve_cli(lab, f"plans/{vid}")  # type: ignore[attr-defined]
        lab.git("reset", "-q", "--", f"plans/{vid}/sub/PLAN.yml", check=False)
        lab.git("checkout", "--", f"plans/{vid}/sub/PLAN.yml", check=False)
    lab.approve("adopt-alice", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r6-checkout", _build)


def _marks(vid: str) -> list[object]:
    return [BROKEN[vid]] if vid in BROKEN else []


@pytest.mark.parametrize("vid", NESTS)
def test_the_plan_alice_named_runs(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", NESTS)
def test_a_plan_inside_the_named_folder_is_not_approved_with_it(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-sub") == [], lab.codes(f"{vid}/sub")
    assert not lab.started(f"{vid}/sub"), lab.codes(f"{vid}/sub")


@pytest.mark.parametrize("vid", [pytest.param("adopt-alice", marks=_marks("adopt-alice"))])  # type: ignore[arg-type]
def test_the_writer_of_an_uncommitted_plan_cannot_approve_it_alone(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


def test_with_adoption_off_an_uncommitted_plan_is_left_alone(tmp_path: Path) -> None:
    """``execution.adopt_untracked: false``: the controller never commits a plan nobody
    committed, so no plan's writer is unknown; a committed plan still runs."""
    lab = Lab(tmp_path, extra="execution: {adopt_untracked: false}\n")
    lab.write("left", plan_text("left"))
    lab.write("committed", plan_text("committed"))
    lab.commit("agent commits one plan", AGENT, "plans/committed")
    lab.run()
    assert lab.git("ls-files", "plans/left").strip() == ""
    assert lab.status().get("plans/left") is None
    lab.approve("committed", ALICE)
    lab.run()
    assert len(lab.calls("committed")) == 1
    assert lab.calls("left") == []
