"""Round 12, what is reported: an approved plan whose PLAN.yml the agent swapped, in the
shared working tree only (local mode), for a folder (``tree-dir``) or a FIFO (``tree-fifo``)
after Alice approved it.

docs/threat-model.md: one bad entry "costs only its plan a code in ``status``" (a swapped
PLAN.yml "makes that plan wait with ``E_UNSAFE_PATH``"), and since round 11 "``status`` says
why an outcome waits". Defence asserted: the honest plan beside them runs once, the swapped
plans run nothing, and ``plangate status --json`` names E_UNSAFE_PATH for each (in its
``problem``, ``reason``, ``waiting``, ``last_event`` or ``notes``).

Observed (round 12): the pass logs ``plan_waiting`` with ``E_UNSAFE_PATH: .../PLAN.yml is not a
regular file; plangate never reads one`` and runs nothing of the plan (held), but ``status``
shows a plain ``approved`` row (problem, reason and waiting null; last event: Alice's
approval): whoever reads ``status`` cannot tell why an approved plan never starts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

VARIANTS = ["tree-dir", "tree-fifo"]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for slug in [*VARIANTS, "honest"]:
        lab.write(slug, plan_text(slug))
    lab.commit("submit")
    lab.run()
    for slug in [*VARIANTS, "honest"]:
        lab.set_status(slug, "approved")
        lab.git("add", f"plans/{slug}/PLAN.yml")
    lab.git("commit", "-q", "-m", "approve", who=ALICE)
    (lab.repo / "plans/tree-dir/PLAN.yml").unlink()
    (lab.repo / "plans/tree-dir/PLAN.yml").mkdir()
    (lab.repo / "plans/tree-dir/PLAN.yml/x").write_text("x\n")
    (lab.repo / "plans/tree-fifo/PLAN.yml").unlink()
    os.mkfifo(lab.repo / "plans/tree-fifo/PLAN.yml")
    lab.passes = [lab.run(check=False).returncode for _ in range(2)]  # type: ignore[attr-defined]
    lab.rows = lab.status()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r12-runs-treewait", _build)


def test_the_honest_plan_runs_and_the_swapped_ones_do_not(lab: Lab) -> None:
    assert lab.passes == [0, 0]  # type: ignore[attr-defined]
    assert len(lab.calls("honest")) == 1
    assert lab.calls("tree-dir") == [] and lab.calls("tree-fifo") == []


# round 12: status showed a plain approved row here (strict xfail); fixed since
@pytest.mark.parametrize("vid", VARIANTS)
def test_status_names_why_the_approved_plan_waits(lab: Lab, vid: str) -> None:
    row = lab.rows[f"plans/{vid}"]  # type: ignore[attr-defined]
    assert "E_UNSAFE_PATH" in json.dumps(row), json.dumps(row)[:600]
