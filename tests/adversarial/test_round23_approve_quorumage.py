"""Round 23, ``max_age`` with a quorum: the last vote decides the age, whatever the first.

Config: the bench's, ``max_age: 20s`` (6 s until a CI at load 20 took 7 s for the control),
and ``plans/two/**`` needs two approvals. The agent
writes each plan; the controller freezes it (time F). Alice approves at once (``partial``).

- ``in-time``: Bob approves at once (control: the quorum is met within ``max_age``; the plan
  runs once).
- ``late-second``: Bob approves after F + 20 s.
- ``late-backdated``: Bob approves after F + 20 s, his commit's author and committer dates set
  to F + 2 s (inside the window, after Alice's vote).
- ``late-bare``: no early vote: Carol and Bob both approve after F + 20 s.

Defence: the version is older than ``max_age`` when the quorum completes: no start, ``rec``
never runs for the late variants (``E_PLAN_EXPIRED`` or a refusal of the backdated commit).

Results: all held (the control ran once; the late variants never started).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

RULES = 'max_age: 20s\nrules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
LATE = ["late-second", "late-backdated", "late-bare"]


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for vid in ["in-time", *LATE]:
        lab.write(f"two/{vid}", plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    frozen_at = int(lab.git("log", "-1", "--format=%ct").strip())
    time.sleep(1.05)
    for vid in ["in-time", "late-second", "late-backdated"]:
        lab.approve(f"two/{vid}", ALICE)
    lab.run()  # partial
    lab.approve("two/in-time", BOB)
    lab.run()
    time.sleep(max(0.0, frozen_at + 21.2 - time.time()))
    lab.approve("two/late-second", BOB)
    lab.set_status("two/late-backdated", "approved")
    lab.git("add", "-A")
    stamp = f"@{frozen_at + 2} +0000"
    lab.extra_env = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    lab.git("commit", "-q", "-m", "approve late-backdated", who=BOB)
    lab.extra_env = {}
    lab.approve("two/late-bare", CAROL)
    lab.run()
    lab.approve("two/late-bare", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r23-quorumage", _build)


def test_the_control_runs_within_max_age(lab: Lab) -> None:
    assert len(lab.calls("in-time")) == 1, lab.codes("two/in-time")


@pytest.mark.parametrize("vid", LATE)
def test_a_quorum_completed_after_max_age_runs_nothing(lab: Lab, vid: str) -> None:
    slug = f"two/{vid}"
    assert lab.calls(vid) == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)
