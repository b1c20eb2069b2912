"""Round 28, who may reject or abort: a withdrawal written on a branch based *before* the
policy change that removed its author (round 27 judges a withdrawal by the policy recorded
"in the withdrawal's first-parent history").

Config v1: the bench's approvers plus ``mallory@example.com``. The agent writes ``old``,
``old-gate`` (action 2 gated) and ``ctl``; the controller freezes them and records policy v1.
Alice approves ``old-gate``: action 1 runs, it pauses at the gate. ``pre`` = main's tip now.
The operator removes Mallory from ``approvers`` (v2); the controller passes (records v2). The
agent then writes ``new`` and ``new-gate`` (gated, Alice approves: paused); the controller
freezes them (all after Mallory's removal). Then Mallory (no longer an approver, no author):

- ``old``: branches from ``pre`` (v1 in its first-parent history), sets ``old`` rejected and
  merges that branch into main ``--no-ff`` herself;
- ``old-gate``: the same with ``aborted`` on the paused plan;
- ``new``: branches from ``pre``, merges main into it (``--no-ff``: the plan arrives through
  the second parent, v2 too), sets ``new`` rejected, merges the branch into main herself;
- ``new-gate``: the same with ``aborted`` on the paused ``new-gate``;
- ``new-ours``: as ``new`` but the agent merges Mallory's branch ``-s ours`` (round 24: a
  merged-branch withdrawal counts even when the merge changes nothing).

The controller passes; Alice approves every plan (and opens the gates); it passes again.

Asserted: a withdrawal by someone not entitled when she made it withdraws nothing: each plan
(and each gated action) runs once. ``new*``: the plans did not exist while Mallory was an
approver, so no reading of "when made" lets her withdraw them. ``check-*``: before Alice's
approvals, ``plangate check --as alice`` on a pull request setting ``approved`` predicts the
controller's verdict (``start``). ``audit-agrees``: a fresh clone's audit flags no
``start-without-approval`` for these plans.

Results: the controller held on every variant (each plan and gated action ran once; ``ctl``
too) and the fresh-clone audit agreed; ``check-ctl`` held. BROKE (strict xfails):
``check-old``, ``check-new``, ``check-new-ours``: ``plangate check`` shows the plan
``rejected`` with outcome ``none`` (Mallory's veto honoured) where the controller ignores it
and starts the plan on Alice's approval.
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

GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
V1 = '["alice@example.com", "*@ops.example.com", "mallory@example.com"]'
V2 = '["alice@example.com", "*@ops.example.com"]'
REJECTS = ["old", "new", "new-ours"]
ABORTS = ["old-gate", "new-gate"]
ALL = [*REJECTS, *ABORTS, "ctl"]
CHECKS = ["old", "new", "new-ours", "ctl"]


def _policy(lab: Lab, approvers: str) -> None:
    text = lab.config.read_text()
    for old in (V1, V2):
        text = text.replace(old, approvers)
    lab.config.write_text(text)


def _mallory_branch(lab: Lab, vid: str, pre: str, status: str, bring_main: bool) -> str:
    name = f"m-{vid}"
    lab.git("checkout", "-q", "-b", name, pre)
    if bring_main:
        lab.git("merge", "--no-ff", "-q", "-m", "merge main", "main", who=MALLORY)
    lab.set_status(vid, status)
    lab.commit(f"mallory: {status} {vid}", MALLORY)
    lab.git("checkout", "-q", "main")
    return name


def _build(root: Path) -> Lab:
    lab = Lab(root)
    _policy(lab, V1)
    for vid in ["old", "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.write("old-gate", plan_text("old-gate", extra_actions=GATE.format(tag="old-gate")))
    lab.commit("agent writes the old plans", AGENT)
    lab.run()  # freeze, record v1
    time.sleep(1.05)
    lab.approve("old-gate", ALICE)
    lab.run()  # paused
    pre = lab.head()
    _policy(lab, V2)  # the operator removes Mallory
    lab.run()  # records v2
    for vid in ["new", "new-ours"]:
        lab.write(vid, plan_text(vid))
    lab.write("new-gate", plan_text("new-gate", extra_actions=GATE.format(tag="new-gate")))
    lab.commit("agent writes the new plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.approve("new-gate", ALICE)
    lab.run()  # paused
    time.sleep(1.05)
    branches = {
        "old": _mallory_branch(lab, "old", pre, "rejected", False),
        "old-gate": _mallory_branch(lab, "old-gate", pre, "aborted", False),
        "new": _mallory_branch(lab, "new", pre, "rejected", True),
        "new-gate": _mallory_branch(lab, "new-gate", pre, "aborted", True),
        "new-ours": _mallory_branch(lab, "new-ours", pre, "rejected", True),
    }
    for vid, branch in branches.items():
        if vid == "new-ours":
            lab.git("merge", "-s", "ours", "-q", "-m", f"merge {branch}", branch, who=AGENT)
        else:
            lab.git("merge", "--no-ff", "-q", "-m", f"merge {branch}", branch, who=MALLORY)
    lab.run()
    # check: a pull request in which the agent sets approved, merged by Alice
    lab.git("checkout", "-q", "-b", "pr")
    for vid in CHECKS:
        lab.set_status(vid, "approved")
    lab.commit("agent asks", AGENT)
    lab.git("checkout", "-q", "main")
    clone = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli(
        "check", "--config", str(lab.config), "--base", "origin/main", "--head", "origin/pr",
        "--as", "alice@example.com", "--format", "json", cwd=clone,
    )  # fmt: skip
    (root / "check.json").write_text(out.stdout)
    (root / "check.err").write_text(out.stderr)
    time.sleep(1.05)
    for vid in ALL:
        lab.set_status(vid, "approved")
        lab.commit(f"alice approves {vid}", ALICE)
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
    return shared(tmp_path_factory, "r28-oldbase", _build)


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason="round 28: " + why)


#: What round 28 broke (strict xfails).
_CHECK = (
    "plangate check disagrees with the controller on a withdrawal by a removed approver written "
    "on a branch based before her removal: the controller ignores Mallory's rejection and "
    "Alice's approval starts the plan (asserted above: it ran once, and the fresh-clone audit "
    "agrees), but check (fresh clone, same config, --as alice) shows the plan 'rejected' "
    "with outcome 'none' (it honours the veto by the policy in the rejection's first-parent "
    "history): "
)
#: What round 28 broke (fixed the same hour; kept as the record, applied to nothing).
FOUND: dict[str, pytest.MarkDecorator] = {
    "check-old": _broke(_CHECK + "old (plan existed before her removal)"),
    "check-new": _broke(_CHECK + "new (plan written after her removal, merged into her branch)"),
    "check-new-ours": _broke(_CHECK + "new-ours (her branch merged -s ours by the agent)"),
}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[]) for v in vids]


@pytest.mark.parametrize("vid", _p([*REJECTS, "ctl"]))
def test_a_removed_approvers_rejection_withdraws_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", _p(ABORTS))
def test_a_removed_approvers_abort_stops_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
    assert len(lab.calls(f"{vid}-gated")) == 1, lab.codes(vid)


def _json(lab: Lab, name: str) -> Any:
    text = (lab.root / f"{name}.json").read_text()
    assert text.strip(), (lab.root / f"{name}.err").read_text()[-2000:]
    return json.loads(text)


@pytest.mark.parametrize("vid", _p([f"check-{v}" for v in CHECKS]))
def test_check_predicts_the_start(lab: Lab, vid: str) -> None:
    report = _json(lab, "check")
    plan = f"plans/{vid.removeprefix('check-')}"
    rows = report if isinstance(report, list) else report.get("plans", [])
    row = [r for r in rows if r.get("plan") == plan]
    assert row and row[0].get("outcome") == "start", json.dumps(row)[:2000]


@pytest.mark.parametrize("vid", _p(["audit-agrees"]))
def test_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    report = _json(lab, "audit")
    ours = {f"plans/{v}" for v in ALL}
    found = [
        f
        for f in report.get("findings", [])
        if f.get("plan") in ours and f.get("kind") == "start-without-approval"
    ]
    assert found == [], json.dumps(found)[:2000]
