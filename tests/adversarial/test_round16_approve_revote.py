"""Round 16, quorum: collected votes that outlive the version's life they were cast in.

docs/approvals.md (Quorum, Voiding): "Any change to the hashed content voids them: the plan
is frozen again and collection starts from zero", and the date rule: an approval dated
before the trusted birth of the version it would approve (the controller's last commit
before the commit that wrote that content) is ``E_APPROVAL_REPLAYED``.

Config: the bench's, plus a rule ``plans/two/**`` needs two approvals. The agent writes
every plan; the controller freezes; Alice approves (``partial``, one vote collected). Then
the version goes away and comes back, and Bob approves. Defence: Alice's vote from the
version's earlier life is void (one vote now): nothing runs, ``partial``.

- ``aba``: the agent changes the task (version B, frozen again), then restores the file of
  version A byte for byte (``git checkout <freeze> -- PLAN.yml``; same hash, a new life).
- ``readd``: the agent deletes the plan, the controller passes, the agent adds the same file
  back (same path, same hash).
- ``move``: the agent ``git mv``s the folder to ``plans/two/move-b`` (same hash, a new path);
  Bob approves the moved plan.
- ``copy``: the agent copies the folder to ``plans/two/copy-b``; Bob approves the copy.
- ``ctl``: Alice then Bob on one life: runs once (control).

Results: every variant held (``partial`` with Bob's vote only, nothing ran); the control ran
once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["aba", "readd", "move", "copy"]
BROKEN: dict[str, list[pytest.MarkDecorator]] = {}
RULE = "rules:\n  - match: {paths: ['plans/two/**']}\n    require: [{count: 2}]\n"
TARGET = {"aba": "two/aba", "readd": "two/readd", "move": "two/move-b", "copy": "two/copy-b"}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULE)
    for vid in [*VIDS, "ctl"]:
        lab.write(f"two/{vid}", plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    lab.freeze_commit = lab.head()
    for vid in [*VIDS, "ctl"]:
        lab.approve(f"two/{vid}", ALICE)
    lab.run()  # partial: Alice
    frozen_a = lab.head()
    # the version goes away
    text = lab.read("two/aba").replace('task: "attack variant aba"', 'task: "version B"')
    lab.write("two/aba", text)
    lab.commit("agent edits aba", AGENT)
    lab.git("rm", "-q", "-r", "plans/two/readd")
    lab.commit("agent removes readd", AGENT)
    lab.run()  # B frozen; readd gone
    lab.git("checkout", frozen_a, "--", "plans/two/aba/PLAN.yml", "plans/two/readd")
    lab.commit("agent restores aba and readd", AGENT)
    lab.git("mv", "plans/two/move", "plans/two/move-b")
    lab.commit("agent moves move", AGENT)
    shutil.copytree(lab.repo / "plans/two/copy", lab.repo / "plans/two/copy-b")
    lab.commit("agent copies copy", AGENT)
    lab.run()
    for slug in [*TARGET.values(), "two/ctl"]:
        lab.approve(slug, BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r16-revote", _build)


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("two/ctl")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_a_vote_from_an_earlier_life_is_void(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(TARGET[vid])
