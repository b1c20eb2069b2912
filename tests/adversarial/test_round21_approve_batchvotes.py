"""Round 21, quorum: votes collected in a batched controller commit (``plangate: 11 plan
events``) are each plan's own.

docs/approvals.md: the votes live in the controller's ``partial``/``refuse`` commits; from 8
waiting events a pass records them in one batched commit whose trailer block holds one group
per plan, and "``status`` and the history index read each plan's own group (never another
plan's ``Approval-Commit``)".

Config: the bench's, plus ``plans/two/**`` needs two approvals. The agent adds twelve plans
``plans/two/b0`` .. ``b11``; the controller freezes them. In one push Alice approves ``b0`` ..
``b9``, Mallory (no approver) approves ``b10`` and the agent ``b11``; one pass records all
events: the first alone, the other eleven in one batched commit (``plangate: 11 plan
events``: Alice's votes and the two refusals). Then Bob approves all
twelve.

- ``b10`` / ``b11``: nobody but Bob ever voted for them: they stay ``partial`` (Bob only);
  ``rec`` never runs (a vote read from a neighbour's group in the batch would start them).
- Control ``b0`` .. ``b9``: Alice's batched vote and Bob's start each once.

Results: held (``b10``/``b11`` ``partial`` with Bob only; ``b0``..``b9`` ran once each, with
``approval.approvals`` Alice and Bob).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

PLANS = [f"b{i}" for i in range(12)]
OWN = {"b10": MALLORY, "b11": AGENT}


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        approval="""\
        rules:
          - match: {paths: ["plans/two/**"]}
            require: [{count: 2}]
        """,
    )
    for slug in PLANS:
        lab.write(f"two/{slug}", plan_text(slug))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for slug in PLANS:
        lab.approve(f"two/{slug}", OWN.get(slug, ALICE))
    time.sleep(1.05)
    lab.run()  # one batched commit
    for slug in PLANS:
        lab.approve(f"two/{slug}", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r21-batchvotes", _build)


def test_the_votes_were_batched(lab: Lab) -> None:
    subjects = lab.git("log", "--format=%s").splitlines()
    assert any(s.endswith(" plan events") for s in subjects), subjects[:8]


@pytest.mark.parametrize("slug", [p for p in PLANS if p not in OWN])
def test_control_alice_and_bob_run_it_once(lab: Lab, slug: str) -> None:
    assert len(lab.calls(slug)) == 1, lab.codes(f"two/{slug}")


@pytest.mark.parametrize("slug", list(OWN))
def test_no_vote_leaks_from_a_neighbours_group(lab: Lab, slug: str) -> None:
    assert lab.calls(slug) == [], lab.codes(f"two/{slug}")
    approval = lab.plan(f"two/{slug}").get("approval") or {}
    assert approval.get("status") == "partial", approval
    assert [a["by"] for a in approval.get("approvals", [])] == [BOB[1]], approval
