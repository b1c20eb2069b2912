"""Round 42, round 41's rule "a plan file's committer is a writer of every plan folder above
its own" for the OTHER people of that commit (its author vs. committer, its co-authors).

Each variant ``plans/<vid>`` is the agent's plan, frozen by the controller. Then one commit
puts a file below the plan's folder; afterwards the named approver approves the parent:

- ``cmt-plan``: ``child/PLAN.yml`` (a draft plan), authored by the agent, COMMITTED by Bob
  (an allowed approver; e.g. he rebased it); Bob approves.
- ``cmt-note``: the same with ``child/NOTES.md``; Bob approves.
- ``co-plan``: the agent's commit of ``child/PLAN.yml`` with ``Co-authored-by: Alice
  <alice@example.com>``; Alice approves.
- ``co-note``: the same with ``child/NOTES.md``; Alice approves.
- ``co-status``: the agent's own nested plan ``child/PLAN.yml`` (pending); Alice approves
  that nested plan (status only) in a commit with ``Co-authored-by: Carol``; Carol then
  approves the parent: a status-only commit makes none of its people a writer, so it runs
  once (a control).

- ``mal-note`` / ``mal-sub``: Mallory (no allowed approver) commits ``child/NOTES.md`` /
  ``child/PLAN.yml`` below the agent's frozen plan (a writer of its folder by round 41's rule,
  but no producer of its version), then sets the plan ``rejected``; Alice approves it: the
  rejection is ignored and the plan runs once (docs/approvals.md: only producers of the
  version at stake, or allowed approvers, may withdraw it).

Control: ``ctl`` (nothing below the folder) runs once on Bob's approval.

Asserted (the defence): the committer and every co-author of a commit writing below the
folder are writers of the plan: ``rec`` never runs and ``E_SELF_APPROVAL`` is named; a fresh
clone's audit agrees with the controller.

Seen: all held (``E_SELF_APPROVAL`` for the four; ``mal-note``, ``mal-sub``, ``ctl`` and
``co-status`` ran once).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, identity, plan_text
from test_round2_execution_kit import shared

WHO = {"cmt-plan": BOB, "cmt-note": BOB, "co-plan": ALICE, "co-note": ALICE}
FILES = {
    "cmt-plan": "child/PLAN.yml",
    "cmt-note": "child/NOTES.md",
    "co-plan": "child/PLAN.yml",
    "co-note": "child/NOTES.md",
}
MAL = {"mal-note": "child/NOTES.md", "mal-sub": "child/PLAN.yml"}
FOUND: dict[str, pytest.MarkDecorator] = {}


def _put(lab: Lab, vid: str) -> None:
    path = lab.repo / "plans" / vid / FILES[vid]
    path.parent.mkdir(parents=True, exist_ok=True)
    text = plan_text(f"{vid}-child", status="draft") if path.name == "PLAN.yml" else "notes\n"
    path.write_text(text)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in [*WHO, "ctl", "co-status", *MAL]:
        lab.write(vid, plan_text(vid))
    lab.write("co-status/child", plan_text("co-status-child"))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for vid in ["cmt-plan", "cmt-note"]:
        _put(lab, vid)
        lab.extra_env = {
            k.replace("AUTHOR", "COMMITTER"): v for k, v in identity(BOB).items() if "AUTHOR" in k
        }  # type: ignore[attr-defined]
        lab.commit(f"agent's {FILES[vid]} (rebased by bob)", AGENT)
        lab.extra_env = {}  # type: ignore[attr-defined]
    for vid in ["co-plan", "co-note"]:
        _put(lab, vid)
        lab.commit(f"agent's {FILES[vid]}\n\nCo-authored-by: Alice <alice@example.com>", AGENT)
    for vid, rel in MAL.items():  # Mallory (no approver) writes below the folder, then rejects
        path = lab.repo / "plans" / vid / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            plan_text(f"{vid}-child", status="draft") if path.name == "PLAN.yml" else "notes\n"
        )
        lab.commit(f"mallory writes {rel}", MALLORY)
        lab.set_status(vid, "rejected")
        lab.commit(f"mallory rejects {vid}", MALLORY)
    lab.set_status("co-status/child", "approved")
    lab.commit("approve nested\n\nCo-authored-by: Carol <carol@ops.example.com>", ALICE)
    lab.run()
    time.sleep(1.05)
    for vid, who in WHO.items():
        lab.approve(vid, who)
    lab.approve("ctl", BOB)
    for vid in MAL:
        lab.approve(vid, ALICE)
    lab.approve("co-status", CAROL)
    lab.run()
    lab.run()
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r42-people", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(list(MAL)))
def test_a_writer_below_the_folder_gains_no_veto(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", ["ctl", "co-status"])
def test_control_runs_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", _p(list(WHO)))
def test_every_person_of_the_commit_is_a_writer(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", [*WHO, *MAL, "ctl", "co-status"])
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert len(runs) == len(lab.calls(vid)), report
    assert all(e.get("approval_valid") for e in runs), runs
