"""Round 41, self-approval: an approver's plan written OUTSIDE the plans folder, then carried in.

docs/approvals.md: the index keeps "per hash everyone who ever wrote that exact hashed
content on any path", and a plan moved (``git mv``) keeps its source's writers. Those
paths were all under ``plans/``. Here Alice (an allowed approver) writes the whole plan
(status ``pending_approval``, no ``frozen:``) at a path that is not a plan file, then the
agent carries it into the plans folder; the controller freezes it; Alice approves it:

- ``mv-in``: Alice commits ``staging/mv-in/PLAN.yml``; the agent ``git mv``s the folder to
  ``plans/mv-in`` (a pure rename, R100).
- ``mv-in-edit``: moved with a one-line edit (``task``) in the same commit (git: a rename).
- ``dot-mv``: Alice commits ``plans/.dot-mv/PLAN.yml`` (a dot folder); the agent moves it to
  ``plans/dot-mv``.
- ``yaml-ext``: Alice commits ``plans/yaml-ext-src/PLAN.yaml`` (not a plan file name); the
  agent ``git mv``s it to ``plans/yaml-ext/PLAN.yml``.
- ``notes-file``: Alice commits ``plans/notes-file-src/alice.yml`` (a non-plan file in a
  folder holding no plan); the agent ``git mv``s it to ``plans/notes-file/PLAN.yml``.

Controls: ``ctl-bob`` (Bob writes ``staging/ctl-bob``, the agent moves it in, Alice approves)
runs once.

Asserted (the defence): Alice's approval of the plan she wrote is refused (``rec`` never
runs for her variants; the refusal names ``E_SELF_APPROVAL``), and a fresh clone's audit
agrees with the controller.

Seen: ``dot-mv``, ``yaml-ext``, ``notes-file`` held (``E_SELF_APPROVAL``). ``mv-in`` and
``mv-in-edit`` ran on Alice's approval (strict xfail): the accepted limit of
docs/threat-model.md ("Content an approver wrote outside the plans folder ... is not counted
as hers", round 3), shown here for a pure rename that git itself reports (``R100``); copies,
a side-branch draft and a delete/re-add (also seen to run) are left out as that same limit.

Fixed (2026-11-29): round 51's rule (a plan a commit makes takes the writers of whatever git
pairs it from, a file outside the plan paths followed back to the commit that wrote it)
pairs both moves (``R100``, and the rename with an edit): Alice's approval is
``E_SELF_APPROVAL``, nothing runs, the audit agrees. Copies of her draft with an edit, her
draft left in place, stay round 3's accepted limit (docs/threat-model.md).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

ALICE_VIDS = ["mv-in", "mv-in-edit", "dot-mv", "yaml-ext", "notes-file"]
CONTROLS = ["ctl-bob"]
FOUND: dict[str, pytest.MarkDecorator] = {}  # mv-in, mv-in-edit fixed (see the docstring)


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.commit("base", AGENT)
    # Alice (and Bob for the control) write the plans outside the plans folder.
    for vid in ["mv-in", "mv-in-edit"]:
        _put(lab, f"staging/{vid}/PLAN.yml", plan_text(vid))
    _put(lab, "plans/.dot-mv/PLAN.yml", plan_text("dot-mv"))
    _put(lab, "plans/yaml-ext-src/PLAN.yaml", plan_text("yaml-ext"))
    _put(lab, "plans/notes-file-src/alice.yml", plan_text("notes-file"))
    lab.commit("alice drafts plans", ALICE)
    _put(lab, "staging/ctl-bob/PLAN.yml", plan_text("ctl-bob"))
    lab.commit("bob drafts a plan", BOB)
    lab.run()
    # The agent carries them into the plans folder.
    (lab.repo / "plans").mkdir(exist_ok=True)
    for vid in ["mv-in", "mv-in-edit", "ctl-bob"]:
        lab.git("mv", f"staging/{vid}", f"plans/{vid}")
    text = lab.read("mv-in-edit").replace(
        'task: "attack variant mv-in-edit"', 'task: "attack variant mv-in-edit, tidied"'
    )
    lab.write("mv-in-edit", text)
    lab.git("mv", "plans/.dot-mv", "plans/dot-mv")
    (lab.repo / "plans/yaml-ext").mkdir()
    lab.git("mv", "plans/yaml-ext-src/PLAN.yaml", "plans/yaml-ext/PLAN.yml")
    (lab.repo / "plans/notes-file").mkdir()
    lab.git("mv", "plans/notes-file-src/alice.yml", "plans/notes-file/PLAN.yml")
    lab.commit("agent files the plans", AGENT)
    lab.renames = lab.git("show", "--stat", "-M", "-C", "--summary", "--format=", "HEAD")  # type: ignore[attr-defined]
    lab.run()
    time.sleep(1.05)
    for vid in ALICE_VIDS + CONTROLS:
        lab.approve(vid, ALICE)
    lab.run()
    lab.run()
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r41-outside", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", CONTROLS)
def test_control_runs_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", _p(ALICE_VIDS))
def test_alice_cannot_approve_the_plan_she_wrote(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], (lab.renames, lab.codes(vid))  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", ALICE_VIDS + CONTROLS)
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert len(runs) == len(lab.calls(vid)), report
    assert all(e.get("approval_valid") for e in runs), runs
