"""Round 43, ``plangate check`` versus rounds 41/42's folder-writer rules when the writing is
INSIDE the pull request it predicts (the merger's own commit on the branch).

Every variant ``plans/<vid>`` is the agent's parent plan, frozen on main. The agent opens
``pr-<vid>``; on it Alice (an allowed approver) makes one commit, then the agent sets the
parent ``approved``; ``plangate check --as alice@example.com`` predicts the merge; Alice
merges it (the merge is the approval request):

- ``br-note``: Alice's commit adds ``child/NOTES.md`` below the parent (round 41).
- ``br-nest``: Alice's commit adds a draft plan ``child/PLAN.yml`` below the parent.
- ``br-status-comment``: the agent's nested plan ``child/PLAN.yml`` is on main; Alice's
  commit approves it and adds a comment line to it (round 42).
- ``br-lib-note``: the parent pins the agent's library ``plans/br-lib-note-lib``; Alice's
  commit adds ``NOTES.md`` to the library's folder (round 23).
- ``ctl``: Alice's commit touches ``README`` only (control: runs once).

Asserted (the defence): the controller refuses ``E_SELF_APPROVAL`` and ``rec`` never runs
(control once); ``check`` predicts ``start`` exactly when the controller started the plan;
the fresh-clone audit agrees with what ran.

Seen: all held (``E_SELF_APPROVAL`` for Alice's merge in every variant, predicted by
``check``; the control ran once; the audit agreed). Contrast ``test_round43_approve_
checkcarry.py``: the same writers carried in from ANOTHER path are missed by ``check``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import checkkit
import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["br-note", "br-nest", "br-status-comment", "br-lib-note"]
ALL = [*VIDS, "ctl"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason="round 43: " + why)


def _alice(lab: Lab, vid: str) -> None:
    base = lab.repo / "plans" / vid
    if vid == "br-note":
        (base / "child").mkdir()
        (base / "child/NOTES.md").write_text("alice: reviewed\n")
    elif vid == "br-nest":
        lab.write(f"{vid}/child", plan_text(f"{vid}-child", status="draft"))
    elif vid == "br-status-comment":
        lab.set_status(f"{vid}/child", "approved")
        path = base / "child/PLAN.yml"
        path.write_text(path.read_text() + "# alice: reviewed\n")
    elif vid == "br-lib-note":
        (lab.repo / "plans/br-lib-note-lib/NOTES.md").write_text("alice: reviewed\n")
    else:
        (lab.repo / "README").write_text("plans, reviewed\n")
    lab.commit(f"alice on {vid}", ALICE)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("br-lib-note-lib", plan_text("br-lib-note-lib", status="draft"))
    lab.commit("agent library", AGENT)
    digest = lab.cli("hash", "plans/br-lib-note-lib", cwd=lab.repo).stdout.strip().split()[-1]
    lab.write("br-lib-note", checkkit.pinning("br-lib-note", "plans/br-lib-note-lib", digest))
    for vid in ["br-note", "br-nest", "br-status-comment", "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.write("br-status-comment/child", plan_text("br-status-comment-child"))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    lab.run()
    time.sleep(1.05)
    checkkit.ask_in_prs(lab, ALL, _alice)
    checkkit.predict(lab, root, ALL)
    time.sleep(1.05)
    checkkit.merge_as_alice(lab, ALL)
    checkkit.audit_in_clone(lab, root)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r43-checkbranch", _build)


RUNS = {"br-lib-note": "br-lib-note-lib"}


def _ran(lab: Lab, vid: str) -> int:
    return len(lab.calls(RUNS.get(vid, vid)))


def test_control_runs_once(lab: Lab) -> None:
    assert _ran(lab, "ctl") == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", checkkit.params(VIDS, FOUND))
def test_the_merger_who_wrote_below_cannot_approve(lab: Lab, vid: str) -> None:
    assert _ran(lab, vid) == 0, lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", checkkit.params(ALL, FOUND, "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    mine = checkkit.prediction(lab, vid)
    predicted = mine.get("outcome") == "start"
    assert predicted == lab.started(vid), json.dumps(mine)[:2000]


@pytest.mark.parametrize("vid", checkkit.params(ALL, FOUND, "audit-"))
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    runs = checkkit.audited(lab, vid)
    assert len(runs) == int(lab.started(vid)), lab.audit_report  # type: ignore[attr-defined]
    assert all(e.get("approval_valid") for e in runs), runs
