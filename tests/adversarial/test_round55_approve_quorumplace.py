"""Round 55, quorum placement: does an approver in several groups fill one entry only, and is
each placed where the quorum needs them whatever order the votes come in?

docs/approvals.md, "Quorum": "One person counts once and in one entry (an approver in two
groups is placed where the quorum needs them)"; "Any change to the hashed content voids
them" (a comment is not hashed content).

Config: the bench's approvers; groups ``ops`` (Alice and ``*@ops.example.com``), ``sec``
(Bob only), ``carolonly`` (Carol only); one ``paths`` rule per plan:

- ``q-any2-ops1``: ``[{count: 2}, {group: ops, count: 1}]``; Alice then Bob vote (two
  people for three places: must stay partial).
- ``q-ops-sec-bob``: ``[{group: ops}, {group: sec}]``; Bob (in both) alone: partial.
- ``q-ops-sec-order``: the same rule; Bob then Carol: Bob must be placed in ``sec``.
- ``q-any-sec``: ``[{count: 1}, {group: sec}]``; Bob then Alice.
- ``q-ops2-carol``: ``[{group: ops, count: 2}, {group: carolonly}]``; Carol, Bob, Dave.
- ``q-twice``: ``[{count: 2}]``; Bob, then Bob again as ``BOB@OPS.EXAMPLE.COM``: partial.
- ``q-comment``: ``[{count: 2}]``; Bob votes, the agent adds a comment line to PLAN.yml
  (not hashed), Carol votes: runs.

One vote per commit, a pass after each round of votes.

Asserted: the partial ones never run and say what is missing; the others run once.

Seen: all held.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

DAVE = ("Dave", "dave@ops.example.com")
BOB_UPPER = ("Bob", "BOB@OPS.EXAMPLE.COM")
RULES = {
    "q-any2-ops1": "[{count: 2}, {group: ops, count: 1}]",
    "q-ops-sec-bob": "[{group: ops, count: 1}, {group: sec, count: 1}]",
    "q-ops-sec-order": "[{group: ops, count: 1}, {group: sec, count: 1}]",
    "q-any-sec": "[{count: 1}, {group: sec, count: 1}]",
    "q-ops2-carol": "[{group: ops, count: 2}, {group: carolonly, count: 1}]",
    "q-twice": "[{count: 2}]",
    "q-comment": "[{count: 2}]",
}
VOTES = {
    "q-any2-ops1": [ALICE, BOB],
    "q-ops-sec-bob": [BOB],
    "q-ops-sec-order": [BOB, CAROL],
    "q-any-sec": [BOB, ALICE],
    "q-ops2-carol": [CAROL, BOB, DAVE],
    "q-twice": [BOB, BOB_UPPER],
    "q-comment": [BOB, "comment", CAROL],
}
PARTIAL = ["q-any2-ops1", "q-ops-sec-bob", "q-twice"]
RUNS = [v for v in RULES if v not in PARTIAL]


def _build(root: Path) -> Lab:
    rules = "".join(
        f'  - match: {{paths: ["plans/{v}"]}}\n    require: {req}\n' for v, req in RULES.items()
    )
    lab = Lab(
        root,
        approval=(
            "groups:\n"
            '  ops: ["alice@example.com", "*@ops.example.com"]\n'
            '  sec: ["bob@ops.example.com"]\n'
            '  carolonly: ["carol@ops.example.com"]\n'
            "rules:\n" + rules
        ),
    )
    for v in RULES:
        lab.write(v, plan_text(v))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for round_ in range(3):
        time.sleep(1.05)
        for v, votes in VOTES.items():
            if round_ >= len(votes):
                continue
            who = votes[round_]
            if who == "comment":
                path = lab.repo / "plans" / v / "PLAN.yml"
                path.write_text("# reviewed with the team\n" + path.read_text())
                lab.commit(f"agent: comment {v}", AGENT)
                continue
            lab.set_status(v, "approved")
            lab.commit(f"{who[0]} approves {v}", who)
        lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r55-quorumplace", _build)


@pytest.mark.parametrize("vid", PARTIAL)
def test_too_few_people_stay_partial(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    row = lab.status()[f"plans/{vid}"]
    assert row["status"] == "pending_approval", row
    assert "more approvals needed" in (row["reason"] or ""), row


@pytest.mark.parametrize("vid", RUNS)
def test_enough_people_placed_well_run_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
