"""Round 28, quorum: ``plangate check`` on collected votes the policy now judges differently.

Config: the bench's plus ``plans/two/**`` needs two approvals. The agent writes each plan; the
controller freezes it. Votes are collected (``partial``) on main:

- ``removed``: Bob (ops) votes; the operator then narrows ``approvers`` to Alice and Carol
  (``*@ops.example.com`` goes; Bob has left); the controller passes (records the policy);
- ``twice``: Alice votes;
- ``aliased``: Dave (``dave@ops.example.com``) votes; the operator then adds the alias
  ``people: [[agent@example.com, dave@ops.example.com]]`` (Dave is the agent: an author);
- ``ctl``: Carol votes (she stays an approver).

Then for each plan a pull request in which the agent sets ``approved``; ``plangate check
--as alice@example.com`` (fresh clone, the controller's config) is recorded; Alice merges each
``--no-ff``; the controller passes.

Asserted: ``removed``/``twice``/``aliased`` never start (the collected vote no longer counts,
or is Alice's own: still ``partial``), ``ctl`` runs once; ``check-*``: check's outcome
matches the controller's (``start`` exactly when the controller started the plan).

Results: all held (the controller kept each plan partial or ran ctl once; check agreed).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import checkkit
import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

RULES = 'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
DAVE = ("Dave", "dave@ops.example.com")
VOTERS = {"removed": BOB, "twice": ALICE, "aliased": DAVE, "ctl": CAROL}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for vid in VOTERS:
        lab.write(f"two/{vid}", plan_text(vid))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid, who in VOTERS.items():
        lab.set_status(f"two/{vid}", "approved")
        lab.commit(f"vote {vid}", who)
    lab.run()  # partial x4
    text = lab.config.read_text()
    old = '["alice@example.com", "*@ops.example.com"]'
    assert old in text
    text = text.replace(old, '["alice@example.com", "carol@ops.example.com"]')
    aliases = "  identity_aliases: {people: [[agent@example.com, dave@ops.example.com]]}\n"
    lab.config.write_text(text.replace("approval:\n", "approval:\n" + aliases, 1))
    lab.run()  # records the policy
    for vid in VOTERS:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        lab.set_status(f"two/{vid}", "approved")
        lab.commit(f"agent asks {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    chk = checkkit.predict(lab, root, VOTERS)
    (root / "check.json").write_text(json.dumps(lab.check_report))  # type: ignore[attr-defined]
    time.sleep(1.05)
    checkkit.merge_as_alice(lab, VOTERS, passes=1)
    shutil.rmtree(chk, ignore_errors=True)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r28-checkvotes", _build)


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason="round 28: " + why)


#: What round 28 broke (strict xfails).
FOUND: dict[str, pytest.MarkDecorator] = {}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[]) for v in vids]


@pytest.mark.parametrize("vid", _p(["removed", "twice", "aliased", "ctl"]))
def test_only_counted_votes_start(lab: Lab, vid: str) -> None:
    expected = 1 if vid == "ctl" else 0
    assert len(lab.calls(vid)) == expected, lab.codes(f"two/{vid}")


@pytest.mark.parametrize("vid", _p([f"check-{v}" for v in VOTERS]))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    name = vid.removeprefix("check-")
    row = json.loads((lab.root / "check.json").read_text())[name]
    assert row["out"].strip(), row["err"]
    report = json.loads(row["out"])
    rows = report if isinstance(report, list) else report.get("plans", [])
    mine = [r for r in rows if r.get("plan") == f"plans/two/{name}"]
    assert mine, row["out"][:2000]
    predicted = mine[0].get("outcome") == "start"
    assert predicted == lab.started(f"two/{name}"), json.dumps(mine)[:2000]
