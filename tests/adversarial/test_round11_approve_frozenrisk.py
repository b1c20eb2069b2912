"""Round 11, who may make a plan run: the risk written in ``frozen:`` (not hashed).

SPEC §11: a plan's risk "is computed at freeze and written in ``frozen:`` (``{hash, at, risk,
estimate, policy}``, not hashed)". The rule ``match: {risk: high}`` asks for two approvals.
If the controller reads the plan's risk back from the file instead of computing it from
the content, the agent lowers it without changing the hash.

- ``edit-risk``: the controller freezes a plan calling the high-risk tool ``danger``
  (``frozen.risk: high``, partial rule: two approvals); the agent edits ``frozen.risk: low``
  in its own commit; Alice approves.
- ``self-freeze``: the agent writes the plan with its own ``frozen:`` block (the right hash,
  ``risk: low``, ``at`` now) as ``pending_approval``; Alice approves.
- ``edit-policy``: as ``edit-risk`` but the agent drops ``risk`` and rewrites the recorded
  ``frozen.policy`` to ``{rule: null, require: [{count: 1}]}``.

Defence: one approval is not enough: the plan is ``partial`` and ``danger`` never runs.
Control: ``risk-two`` (Alice then Bob) runs once. The lab is the one of
``test_round11_approve_forgedvote.py`` (its config holds both rules).
"""

from __future__ import annotations

import json
import re

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_approval_authors import shared_lab

APPROVAL = """\
rules:
  - match: {risk: high}
    require: [{count: 2}]
"""
VIDS = ["edit-risk", "self-freeze", "edit-policy"]
BROKEN: dict[str, object] = {}


def danger(tag: str) -> str:
    return plan_text(tag).replace("name: rec", "name: danger").replace("tool: rec", "tool: danger")


def _hash(lab: Lab, slug: str) -> str:
    out = lab.cli("hash", str(lab.repo / "plans" / slug / "PLAN.yml"), "--config", str(lab.config))
    m = re.search(r"sha256:[0-9a-f]{64}", out.stdout)
    assert m, out.stdout + out.stderr
    return m.group(0)


def prepare(lab: Lab) -> None:
    """Before the first pass (the lab is shared with test_round11_approve_forgedvote.py)."""
    for vid in ["edit-risk", "edit-policy", "risk-two"]:
        lab.write(vid, danger(vid))
    lab.commit("agent adds danger plans", AGENT)


def after_freeze(lab: Lab) -> None:
    (lab.root / "frozen.json").write_text(
        json.dumps({v: lab.plan(v).get("frozen") for v in ["edit-risk", "risk-two"]}, default=str)
    )
    lab.approve("risk-two", ALICE)


def after_votes(lab: Lab) -> None:
    text = lab.read("edit-risk")
    lab.write("edit-risk", re.sub(r"(\n  risk:) high", r"\1 low", text))
    text = lab.read("edit-policy")
    text = re.sub(r"\n  risk: high", "", text)
    text = text.replace("      count: 2", "      count: 1").replace("    rule: 0", "    rule: null")
    assert "count: 1" in text, text
    lab.write("edit-policy", text)
    lab.write("self-freeze", danger("self-freeze"))
    h = _hash(lab, "self-freeze")
    lab.write(
        "self-freeze",
        danger("self-freeze")
        + f'frozen:\n  hash: "{h}"\n  at: "2026-11-25T19:00:00Z"\n  risk: low\n',
    )
    lab.commit("agent lowers the risk", AGENT)
    for vid in VIDS:
        lab.approve(vid, ALICE)
    lab.approve("risk-two", BOB)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    from test_round11_approve_forgedvote import _build

    return shared_lab(tmp_path_factory, "r11-forgedvote", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("risk-two")) == 1, lab.codes("risk-two")


def test_the_controller_froze_it_high(lab: Lab) -> None:
    frozen = json.loads((lab.root / "frozen.json").read_text())
    assert frozen["edit-risk"]["risk"] == "high", frozen


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_one_approval_is_not_enough_whatever_frozen_says(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


# the fresh-clone audit of this lab is test_round11_approve_forgedvote.py's (it covers VIDS here)
