"""Round 29, who may abort: a removed approver's abort of a paused plan reaching main by a
"foxtrot" merge (her ``git pull`` on a stale local main, fast-forwarded: her abort is on
main's first parent with only the old policy record before it).

Config v1: the bench's approvers plus ``mallory@example.com``. The agent writes ``g`` (action 2
gated) and ``ctl``; the controller freezes them and records v1; Alice approves ``g``: action 1
runs, it pauses at the gate; ``pre`` = main's tip. The operator removes Mallory (v2); the
controller records v2. Mallory, on a local main at ``pre``, sets ``g`` ``aborted``, pulls
(``git merge main``) and main fast-forwards to her merge. The controller passes. Alice opens
the gate and approves ``ctl``; the controller passes twice; a fresh clone's audit.

Asserted: an abort by someone not entitled when she made it stops nothing: ``g-gated`` runs
once, ``ctl`` once; ``audit-*``: the fresh-clone audit flags no ``start-without-approval``
for them (it agrees with the controller).

Results: the controller held (``g``, ``g-gated`` and ``ctl`` ran once); ``audit-ctl`` held.
BROKE (strict xfail): ``audit-g``: the audit honours Mallory's abort and flags the
controller's gate start ``start-without-approval`` ("no approval request precedes this
start").
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

V0 = '["alice@example.com", "*@ops.example.com"]'
V1 = '["alice@example.com", "*@ops.example.com", "mallory@example.com"]'
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "fab-g-gated"
"""


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.config.write_text(lab.config.read_text().replace(V0, V1))
    lab.write("g", plan_text("fab-g", extra_actions=GATE))
    lab.write("ctl", plan_text("fab-ctl"))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze, record v1
    time.sleep(1.05)
    lab.approve("g", ALICE)
    lab.run()  # paused
    pre = lab.head()
    lab.config.write_text(lab.config.read_text().replace(V1, V0))
    lab.run()  # records v2
    time.sleep(1.05)
    lab.git("checkout", "-q", "-b", "fx", pre)
    lab.set_status("g", "aborted")
    lab.commit("abort g", MALLORY)
    lab.git("merge", "--no-ff", "-q", "-m", "Merge branch 'main'", "main", who=MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--ff-only", "-q", "fx")
    lab.run()
    time.sleep(1.05)
    lab.approve("g", ALICE)
    lab.approve("ctl", ALICE)
    lab.run()
    lab.run()
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli("audit", "--json", cwd=clone)
    (root / "audit.json").write_text(out.stdout)
    (root / "audit.err").write_text(out.stderr)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r29-foxabort", _build)


#: Accepted (round 29): a first-parent swap ("foxtrot": a stale main's commit, `git pull`,
#: then a fast-forward) puts the controller's record on a second parent; the tools that
#: replay history from a clone follow first parents (docs/threat-model.md, "Accepted
#: limits", round 8). The controller held in every variant; branch protection closes it.
#: What round 29 broke (strict xfails).
FOUND: dict[str, pytest.MarkDecorator] = {
    "audit-g": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 29: after Mallory's foxtrot abort (made after her removal, v2 recorded), "
        "the controller ignores it and runs the gated action on Alice's gate approval, but the "
        "fresh-clone audit lists her abort under decisions as an abort-request (not "
        "withdraw-not-allowed), flags Alice's gate approval 'illegal' (from aborted) and the "
        "controller's gate start 'start-without-approval'; it also blames Mallory's merge "
        "for 'policy-changed' and flags the starts 'policy-hash-mismatch'",
    ),
}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(["g", "g-gated", "ctl"]))
def test_a_removed_approvers_abort_stops_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"fab-{vid}")) == 1, lab.codes(vid.removesuffix("-gated"))


@pytest.mark.parametrize("vid", _p(["audit-g", "audit-ctl"]))
def test_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    text = (lab.root / "audit.json").read_text()
    assert text.strip(), (lab.root / "audit.err").read_text()[-2000:]
    plan = f"plans/{vid.removeprefix('audit-')}"
    found = [
        f
        for f in json.loads(text).get("findings", [])
        if f.get("plan") == plan and f.get("kind") == "start-without-approval"
    ]
    assert found == [], json.dumps(found)[:2000]
