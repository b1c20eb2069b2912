"""Round 29, the committed files are only bytes their writers produced: a killed controller's
clean-up versus committed files that merely *look like* its temp files.

Round 28's fix has the next controller remove the temp files a SIGKILLed controller left in
the shared working tree (``plans/<plan>/.PLAN.yml.<12 hex>.tmp``). Here the agent has
*committed* files with such names before anything ran: ``plans/x/.PLAN.yml.0123456789ab.tmp``
(beside plan ``x``) and ``plans/y/.EXECUTION_LOG.md.0123456789ab.tmp`` (a folder without a
plan). Alice approves ``x``; a ``run --once`` pass is SIGKILLed right after its ``plangate:
start plans/x`` commit (the bench of round 28); two normal passes follow.

- ``x-runs-once``: asserted: ``rec`` ran once for ``x`` and it is ``completed``. Held.
- ``committed-lookalike-kept``: asserted: the committed ``.PLAN.yml.0123456789ab.tmp`` is
  still in the working tree with its bytes, and ``git status`` is clean (no deletion of a
  committed file left for the next ``git add -A`` to commit as a human's).
- ``other-folder-kept``: the same for ``plans/y``'s committed look-alike. Held.

**Broke** (round 29): ``committed-lookalike-kept``: the restarted controller deletes the
agent's committed ``plans/x/.PLAN.yml.0123456789ab.tmp`` from the working tree (``git status``:
`` D plans/x/.PLAN.yml.0123456789ab.tmp``) along with its own temp file; the next ``add -A``
commits that deletion under a person's name. It should remove only the temp files it noted as
its own (or only untracked ones).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import ALICE, BenchError, Lab, plan_text
from test_round2_execution_kit import shared
from test_round28_runs_killwrite import _killed_pass

NOTE = "agent notes, committed\n"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    def build(root: Path) -> Lab:
        lab = Lab(root)
        lab.write("x", plan_text("x"))
        lab.write("x", NOTE, ".PLAN.yml.0123456789ab.tmp")
        lab.write("y", NOTE, ".EXECUTION_LOG.md.0123456789ab.tmp")
        lab.commit("plan x, notes")
        lab.run()
        lab.approve("x", ALICE)
        lab.killed_at = _killed_pass(lab, 1)  # type: ignore[attr-defined]
        if lab.killed_at != "plangate: start plans/x":  # type: ignore[attr-defined]
            raise BenchError(f"killed at {lab.killed_at}")  # type: ignore[attr-defined]
        time.sleep(1.1)  # a git child of the killed controller may still finish
        lab.run()
        lab.run()
        return lab

    return shared(tmp_path_factory, "r29-tmpnames", build)


def test_x_runs_once(lab: Lab) -> None:
    assert len(lab.calls("x")) == 1
    assert lab.status()["plans/x"]["status"] == "completed"


# round 29 broke it (the recovery removed a committed look-alike): fixed, only untracked
# temps are removed
def test_committed_lookalike_kept(lab: Lab) -> None:
    path = lab.repo / "plans" / "x" / ".PLAN.yml.0123456789ab.tmp"
    assert path.exists() and path.read_text() == NOTE
    assert lab.git("status", "--porcelain", "--untracked-files=all") == ""


def test_other_folder_kept(lab: Lab) -> None:
    path = lab.repo / "plans" / "y" / ".EXECUTION_LOG.md.0123456789ab.tmp"
    assert path.exists() and path.read_text() == NOTE
    assert "plans/y/" not in lab.git("status", "--porcelain", "--untracked-files=all")
