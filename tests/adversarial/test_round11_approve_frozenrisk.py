# ruff: noqa: E501  (attack steps read best on one line)
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
Control: ``two`` (Alice then Bob) runs once.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

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


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    lab.write_config(
        approval=APPROVAL,
        tools=f"danger: {{kind: exec, argv: {rec}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}, risk: high}}\n",
    )
    for vid in ["edit-risk", "edit-policy", "two"]:
        lab.write(vid, danger(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze: risk high
    (lab.root / "frozen.json").write_text(
        json.dumps({v: lab.plan(v).get("frozen") for v in ["edit-risk", "two"]}, default=str)
    )

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
    lab.run()
    for vid in VIDS:
        lab.approve(vid, ALICE)
    lab.approve("two", ALICE)
    lab.run()
    lab.approve("two", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r11-frozenrisk", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("two")) == 1, lab.codes("two")


def test_the_controller_froze_it_high(lab: Lab) -> None:
    frozen = json.loads((lab.root / "frozen.json").read_text())
    assert frozen["edit-risk"]["risk"] == "high", frozen


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_one_approval_is_not_enough_whatever_frozen_says(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


def test_a_fresh_clone_audit_agrees(lab: Lab, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    result = lab.cli("audit", "--json", cwd=clone)
    report = json.loads(result.stdout)
    valid = {e["plan"] for e in report["executions"] if e.get("approval_valid")}
    assert "plans/two" in valid, report
    assert not valid & {f"plans/{v}" for v in VIDS if v not in BROKEN}, sorted(valid)
