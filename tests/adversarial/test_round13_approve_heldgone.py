"""Round 13, who may make a plan run: the rewrite hold ended by deleting the plan, then an
approval of version 1 replayed onto version 2, whose controller freeze (made *after* that
approval) the rewrite erased.

Timeline (local mode; Alice is an approver, the agent is not; one lab, shared history):

1. The agent adds ``gone``, ``ours`` and ``rmv`` (version 1); the controller freezes them (F).
2. Alice approves each (commits A); before any pass the agent moves the branch back to F
   (no controller commit is erased: not a rewrite; Alice's approvals were never seen).
3. The agent writes version 2 of each; the controller freezes it (FV2, a controller commit
   made after Alice's approvals: the date rule's trusted birth of version 2, so this is not
   the documented "approval made after the controller's last commit" limit).
4. ``rmv`` (control, no rewrite): the agent deletes the plan (a pass sees it gone), then
   adds version 2 back with FV2's frozen block and cherry-picks Alice's approval A.
5. The agent resets the branch to before step 1 (erases F and FV2: every plan is held,
   ``E_HISTORY_REWRITTEN``); a pass sees the plans gone (a deleted plan's hold ends).
6. ``gone``: the agent adds version 2 back (FV2's frozen block copied) and cherry-picks
   Alice's approval of version 1 (author Alice, her date, after F but before FV2).
``rej`` (held variant): Bob rejects version 1 (seen); the rewrite erases the rejection; the
agent adds version 1 back after the deletion pass and Alice approves it: E_VERSION_WITHDRAWN.
``forget`` (held variant): Alice writes a plan (frozen); the rewrite erases her commit; after
the deletion pass the agent adds the same bytes as its own and Alice approves: E_SELF_APPROVAL.
7. ``ours``: the agent first merges the old tip back with ``-s ours`` (F and FV2 are on the
   branch again, ending any hold) and then does the same as ``gone``.

Defence: version 2 never runs (Alice approved version 1 only): ``E_APPROVAL_REPLAYED`` or a
hold. Control: ``ctl``, written after the rewrite and approved by Alice, runs once.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_approval_authors import shared_lab

VIDS = ["gone", "ours", "rmv", "late"]
FOUND = {  # round 13: broke (strict xfails); fixed since, see BROKEN
    "gone": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 13: a rewrite erases the controller's freeze of version 2, a pass sees "
        "the plan deleted (its hold ends), the agent re-adds version 2 and cherry-picks "
        "Alice's approval of version 1: version 2 runs as approved by Alice",
    ),
}
BROKEN: dict[str, pytest.MarkDecorator] = {}  # every FOUND variant holds now (index freezes)


def _v(tag: str, n: int) -> str:
    return plan_text(tag, params=f'note: "v{n}"\n')


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("base", plan_text("base"))
    lab.write("late", _v("late", 1))
    lab.commit("agent adds base and late", AGENT)
    lab.run()
    pre = lab.head()
    time.sleep(1.1)
    for vid in VIDS[:3]:
        lab.write(vid, _v(vid, 1))
    lab.write("rej", _v("rej", 1))
    lab.commit("agent adds version 1", AGENT)
    lab.write("forget", _v("forget", 1))
    lab.commit("alice writes forget", ALICE)
    lab.run()  # F: freezes version 1
    forget_v1 = lab.read("forget")
    rej_v1 = lab.read("rej")
    lab.set_status("rej", "rejected")
    lab.commit("bob rejects rej", BOB)
    lab.run()  # the rejection is seen
    f_tip = lab.head()
    time.sleep(1.1)
    approvals = {vid: lab.approve(vid, ALICE) for vid in VIDS}  # never seen by a pass
    lab.git("reset", "-q", "--hard", f_tip)  # F stays: not a rewrite
    time.sleep(1.1)
    for vid in VIDS:
        lab.write(vid, _v(vid, 2))
    lab.commit("agent writes version 2", AGENT)
    lab.run()  # FV2: the controller freezes version 2, after Alice's approvals
    v2 = {vid: lab.read(vid) for vid in VIDS}
    # rmv: delete (seen), re-add version 2 with FV2's block, replay A -- no rewrite
    lab.git("rm", "-q", "-r", "plans/rmv")
    lab.commit("agent deletes rmv", AGENT)
    lab.run()
    lab.write("rmv", v2["rmv"])
    lab.commit("agent adds rmv again", AGENT)
    lab.git("cherry-pick", approvals["rmv"], who=AGENT)
    lab.run()
    (root / "rmv-codes.txt").write_text(lab.codes("rmv") + json.dumps(lab.calls("rmv")))
    old_tip = lab.head()
    # the rewrite: F and FV2 erased; a pass holds the plans and sees them gone
    lab.git("reset", "-q", "--hard", pre)
    lab.run()
    time.sleep(1.1)
    # gone
    lab.write("gone", v2["gone"])
    lab.commit("agent adds gone again", AGENT)
    lab.git("cherry-pick", approvals["gone"], who=AGENT)
    # rej: the version Bob rejected (seen), erased by the rewrite, added back and approved
    lab.write("rej", rej_v1)
    lab.commit("agent adds rej again", AGENT)
    lab.approve("rej", ALICE)
    # forget: Alice's own plan (frozen), erased by the rewrite, re-added by the agent
    lab.write("forget", forget_v1)
    lab.commit("agent adds forget as its own", AGENT)
    lab.approve("forget", ALICE)
    lab.run()
    # late: version 2 and the replay first, then the erased commits merged back (one push)
    lab.write("late", v2["late"])
    lab.commit("agent writes late version 2 again", AGENT)
    lab.git("cherry-pick", approvals["late"], who=AGENT)
    # ours: the erased commits back on the branch, then the same replay
    lab.git("merge", "-q", "-s", "ours", "-m", "agent merges the old tip back", old_tip, who=AGENT)
    lab.write("ours", v2["ours"])
    lab.commit("agent adds ours again", AGENT)
    lab.git("cherry-pick", approvals["ours"], who=AGENT)
    # ctl: an honest plan after the rewrite
    lab.write("ctl", plan_text("ctl"))
    lab.commit("agent adds ctl", AGENT)
    lab.run()
    lab.approve("ctl", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r13-heldgone", _build)


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_version_two_never_runs_on_an_approval_of_version_one(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    if vid == "rmv":  # refused before the rewrite erased its record
        assert "E_APPROVAL_REPLAYED" in (lab.root / "rmv-codes.txt").read_text()
    else:
        assert "E_APPROVAL_REPLAYED" in lab.codes(vid) or "E_HISTORY_REWRITTEN" in lab.codes(vid), (
            lab.codes(vid)
        )


def test_a_seen_rejection_erased_then_the_plan_re_added_stays_withdrawn(lab: Lab) -> None:
    assert lab.calls("rej") == [], lab.codes("rej")
    history = lab.git("log", "-p", "--", "plans/rej/PLAN.yml")
    assert "code: E_VERSION_WITHDRAWN" in history, lab.codes("rej")


def test_a_writer_erased_then_the_plan_re_added_is_still_its_writer(lab: Lab) -> None:
    assert lab.calls("forget") == [], lab.codes("forget")
    history = lab.git("log", "-p", "--", "plans/forget/PLAN.yml")
    assert "code: E_SELF_APPROVAL" in history, lab.codes("forget")


def test_control_honest_plan_after_the_rewrite_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


# round 13: broke (strict xfail: the audit called the replayed approval valid); fixed since:
# the controller's freezes on merged-back branches count (Lifecycle._side_freeze)
def test_audit_on_a_fresh_clone_flags_the_replayed_approval(lab: Lab, tmp_path: Path) -> None:
    import json as _json
    import subprocess
    import sys

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True, env=lab.env())
    env = lab.env()
    result = subprocess.run(
        [sys.executable, "-m", "controller", "audit", "--json"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = _json.loads(result.stdout)
    # The controller now refuses gone (no run to judge); a run of it would be flagged, and
    # the audit finds nothing to say against the controller's refusal.
    runs = [e for e in report["executions"] if e["plan"] == "plans/gone"]
    assert not [e for e in runs if e["approval_valid"]], runs
    assert not [f for f in report["findings"] if f["plan"] == "plans/gone"], report["findings"]


def test_a_new_state_dir_sees_the_controllers_freeze_on_a_merged_back_branch(
    tmp_path: Path,
) -> None:
    """The same replay where the controller's state cannot help: a new state directory
    (a new install) after the agent erased the freezes and merged them back with ``-s
    ours``. Round 72 (r72foxtrot): the controller's sealed freezes now stand only behind the
    merge's second parent, which a first start reads as a rewritten line: it refuses
    ``E_HISTORY_REWRITTEN`` and decides nothing (it had run, refusing the replay
    ``E_APPROVAL_REPLAYED``); version 2 never runs either way."""
    lab = Lab(tmp_path / "lab")
    root = lab.head()
    lab.write("fz", _v("fz", 1))
    lab.commit("agent adds fz", AGENT)
    lab.run()  # F: the controller freezes version 1
    time.sleep(1.1)
    lab.approve("fz")  # A: Alice approves version 1; no pass sees it
    approval = lab.git("log", "-1", "--format=%an%x00%ae%x00%ad%x00%s", "--date=raw").split("\0")
    lab.git("reset", "-q", "--hard", "HEAD~1")
    time.sleep(1.1)
    lab.write("fz", _v("fz", 2))
    lab.commit("agent writes version 2", AGENT)
    lab.run()  # FV2: the controller freezes version 2, after A
    old = lab.head()
    version2 = lab.read("fz")
    lab.git("reset", "-q", "--hard", root)
    lab.git("merge", "-q", "-s", "ours", "-m", "keep the old tip", old, who=AGENT)
    lab.write("fz", version2)
    lab.commit("agent adds version 2 back", AGENT)
    name, email, date, subject = (part.strip() for part in approval)
    lab.extra_env = {"GIT_AUTHOR_DATE": date}  # type: ignore[attr-defined]
    try:
        lab.approve("fz", (name, email), message=subject)  # the cherry-pick of A
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
    fresh = lab.root / "fresh.yml"
    fresh.write_text(lab.config.read_text().replace(str(lab.state), str(lab.root / "state2")))
    tip = lab.head()
    result = lab.cli("run", "--once", "--config", str(fresh))
    assert result.returncode != 0 and "E_HISTORY_REWRITTEN" in result.stderr, result.stderr[-800:]
    assert lab.calls("fz") == [], "version 2 ran on the approval of version 1"
    assert lab.head() == tip  # nothing decided, nothing committed
