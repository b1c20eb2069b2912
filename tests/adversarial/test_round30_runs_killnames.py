"""Round 30, at most once and how it is recorded, across a controller killed (SIGKILL) right
after its ``plangate: start`` commit, for a plan whose folder name git quotes.

Round 28's recovery writes back the files a killed controller noted and nobody touched
since; git writes a path with a non-ASCII byte or a space quoted and octal-escaped in its
porcelain output (``"plans/caf\\303\\251 v0/PLAN.yml"``). Plan ``plans/café v0`` is approved
by Alice; a ``run --once`` pass is SIGKILLed right after the branch moved to its start
commit (the bench of round 28; retried with a new plan until the kill lands there); two
normal passes follow.

- ``quoted-runs-once``: asserted: ``rec`` ran exactly once for the victim and ``status``
  shows it ``completed``. Held.
- ``quoted-tree-clean``: asserted: ``git status --porcelain --untracked-files=all`` is empty
  after the restart (no stale file, no temp file left for a human's ``add -A``). Held.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import ALICE, BenchError, Lab, plan_text
from test_round2_execution_kit import shared
from test_round28_runs_killwrite import _killed_pass


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    def build(root: Path) -> Lab:
        lab = Lab(root)
        for attempt in range(6):
            victim = f"café v{attempt}"
            lab.write(victim, plan_text(victim))
            lab.commit(f"plan {attempt}")
            lab.run()
            lab.approve(victim, ALICE)
            if _killed_pass(lab, 1) == f"plangate: start plans/{victim}":
                break
            lab.run()
        else:
            raise BenchError("no kill landed right after a start commit")
        lab.victim = victim  # type: ignore[attr-defined]
        time.sleep(1.1)  # a git child of the killed controller may still finish
        lab.run()
        lab.run()
        return lab

    return shared(tmp_path_factory, "r30-killnames", build)


def test_quoted_runs_once(lab: Lab) -> None:
    victim = lab.victim  # type: ignore[attr-defined]
    assert len(lab.calls(victim)) == 1
    assert lab.status()[f"plans/{victim}"]["status"] == "completed"


def test_quoted_tree_clean(lab: Lab) -> None:
    assert lab.git("status", "--porcelain", "--untracked-files=all") == ""
