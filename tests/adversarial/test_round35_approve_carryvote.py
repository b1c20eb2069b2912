"""Round 35, quorum: a vote cast by an approver who afterwards *carries* the version (moves
or copies it), which round 34 made him an author of.

docs/approvals.md (round 34): a content's authors are "everyone whose commit made a plan
hold it (wrote it, or moved, copied, re-added or undid back to it) ... None of them may
approve it (``E_SELF_APPROVAL``)"; collected votes are "judged again, from its commit, under
the policy in force when the next approval is decided, with every §5 check" (round 23: a
vote cast before its voter wrote into the folder no longer counts).

Config: plans under ``plans/two/`` need two approvals. The agent writes every plan; Bob
(an approver) votes first (``partial``), then:

- ``mv-back``: Bob moves the plan's folder away and back (two commits, no content change);
  Carol approves.
- ``cp``: Bob copies the folder byte for byte to a new folder (the original stays); Carol
  approves the original.
- ``ctl``: nothing; Carol approves (control: two votes, the plan runs once).

Asserted: after carrying it, Bob is an author of the version: his earlier vote no longer
counts, so Carol's approval alone does not start the plan (``rec`` never runs); ``ctl``
runs once.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["mv-back", "cp", "ctl"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _slug(vid: str) -> str:
    return f"two/{vid}"


def _build(root: Path) -> Lab:
    lab = Lab(
        root, approval='rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
    )
    for vid in VIDS:
        lab.write(_slug(vid), plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in VIDS:
        lab.approve(_slug(vid), BOB)
    lab.run()
    lab.git("mv", "plans/two/mv-back", "plans/two/mv-back-tmp")
    lab.commit("bob moves mv-back away", BOB)
    lab.git("mv", "plans/two/mv-back-tmp", "plans/two/mv-back")
    lab.commit("bob moves mv-back back", BOB)
    shutil.copytree(lab.repo / "plans/two/cp", lab.repo / "plans/two/cp-copy")
    lab.commit("bob copies cp", BOB)
    lab.run()
    time.sleep(1.05)
    for vid in VIDS:
        lab.approve(_slug(vid), CAROL)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r35-carryvote", _build)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in VIDS]
)
def test_a_carriers_vote_drops(lab: Lab, vid: str) -> None:
    want = 1 if vid == "ctl" else 0
    assert len(lab.calls(vid)) == want, lab.codes(_slug(vid))
