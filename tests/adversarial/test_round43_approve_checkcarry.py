"""Round 43, ``plangate check`` (and ``plangate approve --config``) versus round 42's fresh
rule "a moved or copied plan's writers are carried to every plan folder above its new place".

docs/approvals.md: whoever wrote the bytes a nested plan file holds "is a writer of every
folder above the place it was moved or copied to"; ``plangate check`` "decides with the
controller's own function, so the prediction is the controller's decision for the history as
it is now"; ``approve`` with a config "first say[s] what the controller would say".

Every variant ``plans/<vid>`` is the agent's parent plan (``pending_approval``, frozen by the
controller). Alice (an allowed approver) writes something elsewhere under ``plans/``, the
agent carries it below (or into) the parent's folder, the controller passes; then the agent
opens ``pr-<vid>`` setting the parent ``approved``; in a clone, ``plangate check --as
alice@example.com`` predicts the merge and ``plangate approve --config`` is run as Alice on
main; then Alice merges the branch (the merge is the approval request):

- ``nest-mv``: Alice's draft ``plans/nest-mv-src`` ``git mv``'d to ``plans/nest-mv/child``.
- ``nest-deep``: the same, moved to ``plans/nest-deep/a/b/child``.
- ``nest-cp``: the same, COPIED (her source stays).
- ``folder-mv``: the agent's draft ``plans/folder-mv-src`` beside Alice's ``NOTES.md`` (she
  is a writer of that folder), the folder moved to ``plans/folder-mv/child``.
- ``pin-mv``: Alice's draft moved to ``plans/pin-mv-lib``, which the parent pins (round 23).
- ``self-mv``: Alice's draft moved onto the parent's own path by the agent, who sets it
  ``pending_approval`` (the parent IS her content).
- ``self-cp``: the same, COPIED onto the parent's path (her draft stays).
- ``self-readd``: Alice's draft deleted by the agent, the same bytes added by the agent at the
  parent's path in a later commit.
- ``self-mvbranch``: ``self-mv`` made on a branch the agent merges ``--no-ff``.
- ``self-direct``: Alice's draft at the parent's own path, set ``pending_approval`` by the
  agent (nothing carried: a control of the rule itself).
- ``ran-cp``: the agent's plan ``plans/ran-src`` ran (Alice approved it); the agent writes
  the same version at ``plans/ran-cp`` (the controller refuses ``E_ALREADY_EXECUTED``).
- ``ctl``: the agent's parent alone (control: runs once; check predicts start; approve
  commits).

Asserted (the defence): the controller refuses ``E_SELF_APPROVAL`` and ``rec`` never runs
(control once); ``check`` predicts ``start`` exactly when the controller started the plan;
``approve --config`` as Alice refuses (commits nothing) exactly when the controller refused
her; the fresh-clone audit agrees.

Seen: the controller held everywhere (``E_SELF_APPROVAL`` for every carried writer,
``E_ALREADY_EXECUTED`` for ``ran-cp``, nothing ran; the control ran once) and so did the
fresh-clone audit. ``check`` held for ``self-direct`` and ``ctl``. BROKE (strict xfails):

- ``check-nest-mv``, ``-nest-deep``, ``-nest-cp``, ``-pin-mv``, ``-folder-mv``,
  ``-self-mv``, ``-self-cp``, ``-self-readd``, ``-self-mvbranch``: ``plangate check --as
  alice@example.com`` predicted ``outcome: start`` with Alice's merge under ``counted`` and
  nothing refused, while the controller refused that merge ``E_SELF_APPROVAL``: check sees
  only the writers in the judged plan's own path history, not the writers a move, a copy or
  a re-add by hash carry in from another path (rounds 17, 35, 42), nor the carried writers of
  a pinned plan's folder.
- ``check-ran-cp``: ``check`` predicted ``start`` for a version that already ran under another
  path; the controller refused ``E_ALREADY_EXECUTED``.
- ``approve-nest-mv``, ``-nest-deep``, ``-nest-cp``, ``-pin-mv``, ``-folder-mv``: ``plangate
  approve --config`` as Alice committed her approval (exit 0) where the controller refuses
  it ``E_SELF_APPROVAL`` (for ``self-*`` it refused correctly).
Fixed (round 43): ``plangate check``, ``approve``, ``reject`` and ``abort --config`` read the
history through one builder (``controller.commands._shared.read_history`` over
``controller.git.history.config_index``), the index the controller builds: the whole
first-parent history with the merged branches (the path-limited fast path of ``check`` is
gone). ``check`` thus sees every carried writer; it refuses ``E_ALREADY_EXECUTED`` as
the controller does (``verdicts.already_executed``), for a version whose start the
controller's commits published on any path. ``approve --config`` counts the writers the
controller counts (``verdicts.writers``: the changers, the content's writers on any path,
the folder's carried writers and those of what it pins). All 15 ids pass.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import checkkit
import pytest
from advkit import AGENT, ALICE, Lab, identity, plan_text
from test_round2_execution_kit import shared

MOVED = ["nest-mv", "nest-deep", "nest-cp", "pin-mv"]
SELF = ["self-mv", "self-cp", "self-readd", "self-mvbranch"]
DIRECT = ["self-direct"]
VIDS = [*MOVED, "folder-mv", *SELF, *DIRECT]
ALL = [*VIDS, "ran-cp", "ctl"]
DEST = {
    "nest-mv": "nest-mv/child",
    "nest-deep": "nest-deep/a/b/child",
    "nest-cp": "nest-cp/child",
    "pin-mv": "pin-mv-lib",
}


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason="round 43: " + why)


#: what round 43 broke (strict xfails; the docstring's "Seen")
FOUND: dict[str, pytest.MarkDecorator] = {}  # all 15 fixed (see "Fixed")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in MOVED:
        lab.write(f"{vid}-src", plan_text(f"{vid}-child", status="draft"))
    for vid in SELF:
        lab.write(f"{vid}-src", plan_text(vid, status="draft"))
    lab.write("self-direct", plan_text("self-direct", status="draft"))
    (lab.repo / "plans/folder-mv-src").mkdir(parents=True)
    (lab.repo / "plans/folder-mv-src/NOTES.md").write_text("alice: notes\n")
    lab.commit("alice drafts", ALICE)
    lab.write("ran-src", plan_text("ran-src"))
    lab.commit("agent's plan that will run", AGENT)
    lab.run()
    time.sleep(1.05)
    lab.approve("ran-src", ALICE)
    lab.run()
    assert len(lab.calls("ran-src")) == 1
    lab.write("ran-cp", plan_text("ran-src"))  # the same version again, at a new path
    digest = lab.cli("hash", "plans/pin-mv-src", cwd=lab.repo).stdout.strip().split()[-1]
    lab.write("pin-mv", checkkit.pinning("pin-mv", "plans/pin-mv-lib", digest))
    for vid in ["nest-mv", "nest-deep", "nest-cp", "folder-mv", "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.write("folder-mv-src", plan_text("folder-mv-child", status="draft"))
    lab.commit("agent adds plans", AGENT)
    (lab.repo / "plans/nest-deep/a/b").mkdir(parents=True)
    for vid in ["nest-mv", "nest-deep", "pin-mv"]:
        lab.git("mv", f"plans/{vid}-src", f"plans/{DEST[vid]}")
    shutil.copytree(lab.repo / "plans/nest-cp-src", lab.repo / "plans/nest-cp/child")
    lab.git("mv", "plans/folder-mv-src", "plans/folder-mv/child")
    lab.git("mv", "plans/self-mv-src", "plans/self-mv")
    shutil.copytree(lab.repo / "plans/self-cp-src", lab.repo / "plans/self-cp")
    lab.git("rm", "-q", "-r", "plans/self-readd-src")
    lab.commit("agent carries the drafts", AGENT)
    lab.write("self-readd", plan_text("self-readd", status="draft"))
    lab.commit("agent re-adds the same plan elsewhere", AGENT)
    lab.git("checkout", "-q", "-b", "carry", "main")
    lab.git("mv", "plans/self-mvbranch-src", "plans/self-mvbranch")
    lab.commit("agent moves on a branch", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", "merge carry", "carry", who=AGENT)
    for vid in [*SELF, *DIRECT]:
        lab.set_status(vid, "pending_approval")
    lab.commit("agent submits its plans", AGENT)
    lab.run()  # freeze
    lab.run()
    time.sleep(1.05)
    checkkit.ask_in_prs(lab, ALL)
    chk = checkkit.predict(lab, root, ALL)
    approve: dict[str, Any] = {}
    lab.extra_env = identity(ALICE)  # type: ignore[attr-defined]
    for vid in ALL:
        before = lab.git("-C", str(chk), "rev-parse", "HEAD").strip()
        out = lab.cli("approve", f"plans/{vid}", "--config", str(lab.config), cwd=chk)
        after = lab.git("-C", str(chk), "rev-parse", "HEAD").strip()
        approve[vid] = {
            "rc": out.returncode,
            "committed": before != after,
            "text": (out.stdout + out.stderr)[-1500:],
        }
        if before != after:
            lab.git("-C", str(chk), "reset", "-q", "--hard", before)
    lab.extra_env = {}  # type: ignore[attr-defined]
    lab.approve_report = approve  # type: ignore[attr-defined]
    time.sleep(1.05)
    checkkit.merge_as_alice(lab, ALL)
    checkkit.audit_in_clone(lab, root)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r43-checkcarry", _build)


RUNS = {"pin-mv": "pin-mv-child"}


def test_a_version_that_ran_does_not_run_again(lab: Lab) -> None:
    assert len(lab.calls("ran-src")) == 1, lab.codes("ran-cp")
    assert not lab.started("ran-cp"), lab.codes("ran-cp")
    assert "E_ALREADY_EXECUTED" in lab.codes("ran-cp"), lab.codes("ran-cp")


def _ran(lab: Lab, vid: str) -> int:
    return len(lab.calls(RUNS.get(vid, vid)))


def test_control_runs_once(lab: Lab) -> None:
    assert _ran(lab, "ctl") == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", checkkit.params(VIDS, FOUND))
def test_the_controller_refuses_the_carried_writer(lab: Lab, vid: str) -> None:
    assert _ran(lab, vid) == 0, lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", checkkit.params(ALL, FOUND, "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    mine = checkkit.prediction(lab, vid)
    predicted = mine.get("outcome") == "start"
    assert predicted == lab.started(vid), json.dumps(mine)[:2000]


@pytest.mark.parametrize("vid", checkkit.params(ALL, FOUND, "approve-"))
def test_approve_config_says_what_the_controller_does(lab: Lab, vid: str) -> None:
    row = lab.approve_report[vid]  # type: ignore[attr-defined]
    assert row["committed"] == lab.started(vid) or vid == "ran-cp", row
    if not lab.started(vid) and vid != "ran-cp":
        assert "E_SELF_APPROVAL" in row["text"], row


@pytest.mark.parametrize("vid", checkkit.params(ALL, FOUND, "audit-"))
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    runs = checkkit.audited(lab, vid)
    assert len(runs) == int(lab.started(vid)), lab.audit_report  # type: ignore[attr-defined]
    assert all(e.get("approval_valid") for e in runs), runs
