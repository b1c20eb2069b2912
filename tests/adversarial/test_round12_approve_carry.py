"""Round 12, who may make a plan run: partial votes carried to another name, and the
watched branch switched under the controller.

Config: a plan under ``plans/two/**`` needs two approvals; any other plan one. Votes live in
the controller's ``partial`` commits (docs/approvals.md, "Voiding"); the ``approval:`` block
travels with the file when the agent moves or copies it.

- ``mv``: Bob votes on ``plans/two/mv`` (partial); the agent ``git mv``s it to
  ``plans/two/mv2`` (same content, same hash, Bob's partial block inside); Alice approves
  ``mv2``. If Bob's vote followed the file, two people "approved" ``mv2``, one of them never
  saw that name.
- ``cp``: the same with a copy (``plans/two/cp2``, the original stays).
- ``out``: Bob votes on ``plans/two/out``; the agent moves it to ``plans/out`` (one approval
  needed there) and sets ``approved`` itself: Bob's collected vote alone would meet the new
  rule if it were carried and the agent's own (refused) request re-counted it.
- ``switch``: Alice approves ``plans/sw``, Bob rejects, the controller sees the rejection;
  the agent switches the shared checkout to a branch ``alt`` at Alice's approval commit (a
  history without the rejection). The controller must not follow it.

Defence: nothing runs; ``mv2``/``cp2`` stay ``partial`` with Alice alone, ``out`` is refused,
``sw`` stays rejected (the pass on ``alt`` stops with ``E_GIT``). Control: ``ctl`` (under
``plans/two``, Bob then Alice) runs once.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_approval_authors import shared_lab

RULES = "rules:\n  - match: {paths: ['plans/two/**']}\n    require: [{count: 2}]\n"
SLUGS = {"mv": "two/mv", "cp": "two/cp", "out": "two/out", "ctl": "two/ctl"}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for tag, slug in SLUGS.items():
        lab.write(slug, plan_text(tag))
    lab.write("sw", plan_text("sw"))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    for slug in SLUGS.values():
        lab.approve(slug, BOB)
    approval = lab.approve("sw", ALICE)
    lab.set_status("sw", "rejected")
    lab.commit("bob rejects sw", BOB)
    lab.run()  # partial x4, sw rejected
    lab.git("mv", "plans/two/mv", "plans/two/mv2")
    lab.commit("agent moves mv", AGENT)
    shutil.copytree(lab.repo / "plans/two/cp", lab.repo / "plans/two/cp2")
    lab.commit("agent copies cp", AGENT)
    lab.git("mv", "plans/two/out", "plans/out")
    lab.commit("agent moves out", AGENT)
    lab.run()
    lab.approve("two/mv2", ALICE)
    lab.approve("two/cp2", ALICE)
    lab.approve("two/ctl", ALICE)
    lab.set_status("out", "approved")
    lab.commit("agent approves out", AGENT)
    lab.run()
    # the switch: the shared checkout moved to another branch
    lab.git("checkout", "-q", "-b", "alt", approval)
    switched = lab.run(check=False)
    (root / "switch.json").write_text(
        json.dumps({"rc": switched.returncode, "stderr": switched.stderr[-2000:]})
    )
    lab.git("checkout", "-q", "main")
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r12-carry", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("two/ctl")


@pytest.mark.parametrize("tag,slug", [("mv", "two/mv2"), ("cp", "two/cp2")], ids=["mv", "cp"])
def test_a_vote_does_not_follow_the_file(lab: Lab, tag: str, slug: str) -> None:
    assert lab.calls(tag) == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)
    approval = lab.plan(slug).get("approval") or {}
    assert approval.get("status") == "partial", approval
    assert [a["by"] for a in approval.get("approvals", [])] == ["alice@example.com"], approval


def test_a_vote_carried_out_of_the_rule_does_not_start_it(lab: Lab) -> None:
    assert lab.calls("out") == [], lab.codes("out")
    assert not lab.started("out"), lab.codes("out")
    assert lab.refusal("out") in {"E_APPROVER_NOT_ALLOWED", "E_SELF_APPROVAL"}, lab.codes("out")


def test_a_switched_branch_is_not_followed(lab: Lab) -> None:
    switched = json.loads((lab.root / "switch.json").read_text())
    assert switched["rc"] != 0 and "E_GIT" in switched["stderr"], switched
    assert lab.calls("sw") == [], lab.codes("sw")
    assert not lab.started("sw"), lab.codes("sw")
    assert lab.status()["plans/sw"]["status"] == "rejected", lab.codes("sw")
