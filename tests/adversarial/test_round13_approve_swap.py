"""Round 13, who may make a plan run: an approval of version 1 replayed onto version 2 behind
a first-parent swap, no controller commit erased (so no hold).

- ``swap``: the controller freezes version 1 (F); Alice approves it (A, never seen: the agent
  moves the branch back to F, not a rewrite); the agent writes version 2, the controller
  freezes it (FV2, after A). The agent then branches ``side`` from F, writes version 2 there
  (FV2's frozen block copied), cherry-picks A, merges ``main`` with ``-s ours`` and
  fast-forwards ``main`` to that merge: FV2 stays on the branch (second parent), but the
  first-parent line is F, version 2, A. On that line the last controller commit before
  version 2 is F, which A follows.

Defence: the controller's freeze of that exact version (FV2, later than A) bounds it:
``E_APPROVAL_REPLAYED``, nothing runs. Control: ``ctl`` approved by Alice runs once.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_approval_authors import shared_lab


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("ctl", plan_text("ctl"))
    lab.write("swap", plan_text("swap", params='note: "v1"\n'))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # F
    f_tip = lab.head()
    time.sleep(1.1)
    approval = lab.approve("swap", ALICE)
    lab.git("reset", "-q", "--hard", f_tip)
    time.sleep(1.1)
    lab.write("swap", plan_text("swap", params='note: "v2"\n'))
    lab.commit("agent writes version 2", AGENT)
    lab.run()  # FV2
    v2 = lab.read("swap")
    lab.git("checkout", "-q", "-b", "side", f_tip)
    lab.write("swap", v2)
    lab.commit("agent writes version 2 on side", AGENT)
    lab.git("cherry-pick", approval, who=AGENT)
    lab.git("merge", "-q", "-s", "ours", "-m", "merge main", "main", who=AGENT)
    merge = lab.head()
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", merge)
    lab.approve("ctl", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r13-swap", _build)


def test_swap_replay_never_runs_version_two(lab: Lab) -> None:
    assert lab.calls("swap") == [], lab.codes("swap")
    assert "E_APPROVAL_REPLAYED" in lab.codes("swap"), lab.codes("swap")


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")
