"""Round 22, quorum: a collected vote is bound to its plan, not only to its version's hash.

Config: the bench's, plus ``plans/two/**`` needs two approvals. The agent writes each plan;
the controller freezes it.

- ``twin``: ``plans/two/twin-a`` and ``plans/two/twin-b`` hold the same bytes (one hash).
  Alice approves ``twin-a`` (``partial``); Bob approves ``twin-b``.
- ``mv-trailer``: Alice approves ``plans/two/mv-a`` with ``plangate approve`` (its commit
  names ``Plan: plans/two/mv-a`` and the hash; ``partial``); the agent ``git mv``s the folder
  to ``plans/two/mv-b`` (same bytes); Bob approves ``mv-b``.
- ``mv-plain``: the same with Alice's approval a bare status edit (no trailers).

Defence: the second plan is ``partial`` with Bob's vote only; ``rec`` never runs (Alice's
vote for one plan is not a vote for a twin or for the plan moved elsewhere).

Results: all three held.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, identity, plan_text
from test_round2_execution_kit import shared

RULES = 'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
CASES = {"twin": "two/twin-b", "mv-trailer": "two/mv-b", "mv-plain": "two/mvp-b"}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    lab.write("two/twin-a", plan_text("twin"))
    lab.write("two/twin-b", plan_text("twin"))
    lab.write("two/mv-a", plan_text("mv-trailer"))
    lab.write("two/mvp-a", plan_text("mv-plain"))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.approve("two/twin-a", ALICE)
    lab.approve("two/mvp-a", ALICE)
    lab.extra_env = identity(ALICE)
    result = lab.cli("approve", "--config", str(lab.config), "plans/two/mv-a", cwd=lab.repo)
    lab.extra_env = {}
    assert result.returncode == 0, result.stderr[-800:]
    lab.run()  # partial: Alice's votes
    time.sleep(1.05)
    lab.git("mv", "plans/two/mv-a", "plans/two/mv-b")
    lab.git("mv", "plans/two/mvp-a", "plans/two/mvp-b")
    lab.commit("agent moves", AGENT)
    lab.run()
    time.sleep(1.05)
    for slug in CASES.values():
        lab.approve(slug, BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r22-votepaths", _build)


@pytest.mark.parametrize("vid", list(CASES))
def test_a_vote_for_one_plan_is_no_vote_for_another(lab: Lab, vid: str) -> None:
    slug = CASES[vid]
    assert lab.calls(vid) == [], lab.codes(slug)
    approval = lab.plan(slug).get("approval") or {}
    assert approval.get("status") == "partial", lab.codes(slug)
    assert [a["by"] for a in approval.get("approvals", [])] == [BOB[1]], approval
