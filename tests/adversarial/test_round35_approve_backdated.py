"""Round 35, who may reject: a copy made on a side branch with back-dated commits, merged
*after* the agent's plan landed (``test_round35_approve_preproduce.py`` lands the copy
first).

Mallory (no approver) forks a branch from main before the agent's pull request is merged,
commits there a byte copy of the agent's plan as ``plans/late-m`` with author and committer
dates an hour in the past (git takes any date: no identity is forged). The agent's branch is
merged first; then her branch (``--no-ff``, by the repository's owner); the controller
passes; she rejects ``plans/late-m`` on main. Alice approves ``plans/late``; ``ctl`` is a
plain plan Alice approves. Result: held.

Asserted: her rejection of her copy does not withdraw the agent's version: Alice's
approval runs it exactly once.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

OWNER = ("Owner", "owner@example.com")
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("ctl", plan_text("ctl"))
    lab.commit("agent adds ctl", AGENT)
    lab.run()
    base = lab.head()
    lab.git("checkout", "-q", "-b", "pr")
    lab.write("late", plan_text("late"))
    lab.commit("agent adds late", AGENT)
    lab.git("checkout", "-q", "-b", "m", base)
    past = f"@{int(time.time()) - 3600} +0000"
    lab.extra_env = {"GIT_AUTHOR_DATE": past, "GIT_COMMITTER_DATE": past}
    lab.write("late-m", plan_text("late"))
    lab.commit("mallory copies late", MALLORY)
    lab.extra_env = {}
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=AGENT)
    lab.run()
    lab.git("merge", "-q", "--no-ff", "-m", "merge m", "m", who=OWNER)
    lab.run()
    lab.set_status("late-m", "rejected")
    lab.commit("mallory rejects her copy", MALLORY)
    lab.run()
    time.sleep(1.05)
    for slug in ("late", "ctl"):
        lab.set_status(slug, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r35-backdated", _build)


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in ("late", "ctl")],
)
def test_a_backdated_copy_withdraws_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
