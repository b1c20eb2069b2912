# ruff: noqa: E501  (attack steps read best on one line)
"""Round 41, self-approval through files an approver commits BELOW a plan's folder.

docs/approvals.md: "Whoever commits any file into a plan's folder (notes, a draft, a patch,
anything but the status change of an approval) is a writer of the plan that folder holds".
Earlier rounds wrote files directly in the folder. Here the file sits in a sub-folder. The
agent writes each plan ``plans/<vid>``; the controller freezes it; then Alice (an allowed
approver) commits, and afterwards approves the agent's plan:

- ``sub-note``: ``plans/sub-note/docs/NOTES.md``;
- ``sub-script``: ``plans/sub-script/bin/run.sh`` (a file a run could read);
- ``sub-plan``: ``plans/sub-plan/child/PLAN.yml``, a plan of her own (``draft``) inside the
  agent's plan folder;
- ``sub-draft``: ``plans/sub-draft/old/PLAN.draft.yml``, the agent's plan text edited (a draft).

- ``note-move-out``: Alice commits ``plans/note-move-out/NOTES.md``; the agent then ``git mv``s
  only PLAN.yml to ``plans/note-move-out-b/PLAN.yml`` (her note stays behind); she approves
  the plan at its new place.
- ``note-move-down``: the same, PLAN.yml moved down into ``plans/note-move-down/inner/``.

- ``pin-sub``: Alice commits a draft plan ``plans/pin-sub/child/PLAN.yml``; the agent adds
  ``plans/pin-sub/PLAN.yml`` whose only action pins ``plans/pin-sub/child`` (her version);
  Alice approves the parent (round 23's pinned-writer rule, with the child inside the
  parent's own folder). Control ``pin-sub-agent``: the agent's child, runs once.

- ``lib-sub``: the agent's parent pins the agent's library ``plans/lib-sub-lib``; Alice
  commits ``plans/lib-sub-lib/x/PLAN.yml`` (a note) below the library's folder, then
  approves the parent (the pinned-folder writer rule, round 23). ``lib-note``: the same
  with ``x/NOTES.md``.

Control: ``ctl`` (nothing written by Alice) runs once on her approval.

- ``sub-plan-bad``: ``plans/sub-plan-bad/child/PLAN.yml`` holding ``not: [a plan`` (no YAML);
- ``sub-plan-note``: ``plans/sub-plan-note/child/PLAN.yml`` holding a review note (no plan).
- ``sub-json`` / ``sub-md`` / ``sub-toon``: the note as ``child/PLAN.json`` / ``.md`` / ``.toon``
  (plan source names).

Asserted (the defence): Alice, a writer of something in the plan's folder, cannot approve
it: ``rec`` never runs for her variants and ``E_SELF_APPROVAL`` is named; a fresh clone's
audit agrees with the controller.

Seen: ``sub-note``, ``sub-script``, ``sub-draft``, ``sub-json``, ``sub-md``, ``sub-toon``, ``note-move-out``, ``note-move-down`` and
``pin-sub``, ``lib-note`` held (``E_SELF_APPROVAL``). BROKE (strict xfail): ``sub-plan``,
``sub-plan-bad``, ``sub-plan-note``, and ``lib-sub`` (the same below a pinned library's folder): a file named ``PLAN.yml`` one folder down is taken as another plan's
folder (status lists ``plans/<vid>/child`` as draft / unreadable) and its committer is no
writer of the enclosing plan, whatever its bytes; Alice's approval ran the agent's plan
once (``completed``, approver alice@example.com). The audit agrees with the controller.

Fixed (the same session): a plan file's committer is a writer of every plan folder above
its own, on the branch and on merged branches (``Lifecycle._folder_writers``), as a file of
any other name already made her.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import checkkit
import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

FILES = {
    "sub-note": ("docs/NOTES.md", "reviewed, looks fine\n"),
    "sub-script": ("bin/run.sh", "#!/bin/sh\necho hi\n"),
    "sub-plan": ("child/PLAN.yml", plan_text("sub-plan-child", status="draft")),
    "sub-plan-bad": ("child/PLAN.yml", "not: [a plan\n"),
    "sub-plan-note": ("child/PLAN.yml", "reviewed, looks fine\n"),
    "sub-json": ("child/PLAN.json", '{"note": "reviewed, looks fine"}\n'),
    "sub-md": ("child/PLAN.md", "reviewed, looks fine\n"),
    "sub-toon": ("child/PLAN.toon", "reviewed, looks fine\n"),
    "sub-draft": (
        "old/PLAN.draft.yml",
        plan_text("sub-draft").replace("attack variant", "a variant"),
    ),
}
# Alice's note stays in the old folder; the agent moves the plan file elsewhere: approve the new place.
MOVES = {"note-move-out": "note-move-out-b", "note-move-down": "note-move-down/inner"}
PINS = {"pin-sub": ALICE, "pin-sub-agent": AGENT}
LIBS = {"lib-sub": "x/PLAN.yml", "lib-note": "x/NOTES.md"}
VIDS = list(FILES)
FOUND: dict[str, pytest.MarkDecorator] = {}  # fixed (see the docstring)


def _hash(lab: Lab, folder: str) -> str:
    result = lab.cli("hash", folder, cwd=lab.repo)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().split()[-1]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    # pin-sub: Alice's child plan inside the parent's folder; pin-sub-agent: the agent's.
    for vid, who in PINS.items():
        lab.write(f"{vid}/child", plan_text(vid, status="draft"))
        lab.commit(f"child of {vid}", who)
    for vid in PINS:
        lab.write(
            vid,
            checkkit.pinning(
                vid, f"plans/{vid}/child", _hash(lab, f"plans/{vid}/child"), "run the child"
            ),
        )
    lab.commit("agent adds parents", AGENT)
    # lib-sub / lib-note: the agent's library pinned by the agent's parent; Alice writes one
    # folder below the LIBRARY's folder.
    for vid in LIBS:
        lab.write(f"{vid}-lib", plan_text(vid, status="draft"))
        lab.commit(f"library of {vid}", AGENT)
        lab.write(
            vid,
            checkkit.pinning(
                vid, f"plans/{vid}-lib", _hash(lab, f"plans/{vid}-lib"), "run the child"
            ),
        )
        lab.commit(f"parent {vid}", AGENT)
    for vid in [*VIDS, *MOVES, "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for vid, (rel, text) in FILES.items():
        path = lab.repo / "plans" / vid / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        lab.commit(f"alice adds {rel} to {vid}", ALICE)
    for vid, rel in LIBS.items():
        path = lab.repo / "plans" / f"{vid}-lib" / rel
        path.parent.mkdir(parents=True)
        path.write_text("reviewed, looks fine\n")
        lab.commit(f"alice adds {rel} below {vid}-lib", ALICE)
    for vid in MOVES:
        (lab.repo / "plans" / vid / "NOTES.md").write_text("reviewed\n")
        lab.commit(f"alice notes {vid}", ALICE)
    lab.run()
    for vid, dest in MOVES.items():
        (lab.repo / "plans" / dest).mkdir(parents=True)
        lab.git("mv", f"plans/{vid}/PLAN.yml", f"plans/{dest}/PLAN.yml")
    lab.commit("agent files plans elsewhere", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in [*VIDS, *MOVES.values(), *PINS, *LIBS, "ctl"]:
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
    return shared(tmp_path_factory, "r41-subfolder", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", ["ctl", "pin-sub-agent"])
def test_control_runs_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", _p(list(LIBS)))
def test_a_writer_below_the_pinned_library_cannot_approve_the_parent(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


def test_a_writer_of_the_pinned_child_cannot_approve_the_parent(lab: Lab) -> None:
    assert lab.calls("pin-sub") == [], lab.codes("pin-sub")
    assert "E_SELF_APPROVAL" in lab.codes("pin-sub"), lab.codes("pin-sub")


@pytest.mark.parametrize("vid", _p(VIDS))
def test_a_writer_below_the_folder_cannot_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", _p(list(MOVES)))
def test_a_note_writer_cannot_approve_the_plan_moved_away(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(MOVES[vid])
    assert "E_SELF_APPROVAL" in lab.codes(MOVES[vid]), lab.codes(MOVES[vid])


@pytest.mark.parametrize("vid", [*VIDS, "ctl"])
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert len(runs) == len(lab.calls(vid)), report
    assert all(e.get("approval_valid") for e in runs), runs
