"""Round 33, self-approval through a pinned plan whose version an approver wrote somewhere
else (docs/approvals.md: "approving a parent approves the pinned versions"; the index "keeps,
per hash, everyone who ever wrote that exact hashed content on any path").

Config: the bench's (approvers Alice and ``*@ops.example.com``). Per variant a child plan
(``status: draft``, one ``rec`` action tagged ``<vid>-child``) is produced as below, then the
agent adds a parent plan ``<vid>`` whose only action pins the child's folder at the child's
hash (``plan: {path, hash}``); the controller freezes it and Alice approves the parent:

- ``pin-copy``: Alice writes the child in ``plans/src-<vid>``; the agent copies the file,
  byte for byte, into ``plans/lib-<vid>`` (its own commit) and pins that folder.
- ``pin-move``: as ``pin-copy`` with ``git mv`` (Alice's folder goes away).
- ``pin-comment``: as ``pin-copy``, the agent adds a YAML comment to the copy (other bytes,
  the same hash).
- ``pin-coauthor``: the agent writes the child in ``plans/lib-<vid>`` in a commit carrying
  ``Co-authored-by: Alice <alice@example.com>``.
- ``ctl``: the agent writes the child; Alice approves the parent (control: runs once).

Asserted: Alice, a writer of the pinned version, cannot approve the parent (the child's
action never runs; ``E_SELF_APPROVAL``); ``ctl``'s child runs once.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import checkkit
import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["pin-copy", "pin-move", "pin-comment", "pin-coauthor"]
#: Alice commits only a NOTES.md into the child's folder (the agent writes PLAN.yml); the
#: parent names the folder in another spelling, or the agent moved the folder first.
SPELL = {
    "pin-slash": "plans/lib-pin-slash/",
    "pin-dot": "plans/./lib-pin-dot",
    "pin-double": "plans//lib-pin-double",
    "pin-file": "plans/lib-pin-file/PLAN.yml",
    "pin-notes-moved": "plans/lib-pin-notes-moved",
}
FOUND: dict[str, pytest.MarkDecorator] = {}


def _hash(lab: Lab, folder: str) -> str:
    result = lab.cli("hash", folder, cwd=lab.repo)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().split()[-1]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    pins: dict[str, str] = {}
    for vid in ["pin-copy", "pin-move", "pin-comment"]:
        lab.write(f"src-{vid}", plan_text(f"{vid}-child", status="draft"))
    lab.commit("alice writes shared children", ALICE)
    for vid in ["pin-copy", "pin-comment"]:
        dst = lab.repo / "plans" / f"lib-{vid}"
        dst.mkdir(parents=True)
        shutil.copy(lab.repo / "plans" / f"src-{vid}" / "PLAN.yml", dst / "PLAN.yml")
    path = lab.repo / "plans" / "lib-pin-comment" / "PLAN.yml"
    path.write_text("# the shared child, reused\n" + path.read_text())
    lab.git("mv", "plans/src-pin-move", "plans/lib-pin-move")
    lab.commit("agent reuses the children", AGENT)
    lab.write("lib-pin-coauthor", plan_text("pin-coauthor-child", status="draft"))
    lab.commit("add child\n\nCo-authored-by: Alice <alice@example.com>", AGENT)
    for vid in SPELL:
        folder = "old-pin-notes-moved" if vid == "pin-notes-moved" else f"lib-{vid}"
        lab.write(folder, plan_text(f"{vid}-child", status="draft"))
    lab.commit("agent adds children", AGENT)
    for vid in SPELL:
        folder = "old-pin-notes-moved" if vid == "pin-notes-moved" else f"lib-{vid}"
        lab.write(folder, "looks fine to me\n", filename="NOTES.md")
    lab.commit("alice's notes", ALICE)
    lab.git("mv", "plans/old-pin-notes-moved", "plans/lib-pin-notes-moved")
    lab.commit("agent moves a child", AGENT)
    lab.write("lib-ctl", plan_text("ctl-child", status="draft"))
    lab.commit("agent adds ctl child", AGENT)
    for vid in [*VIDS, *SPELL, "ctl"]:
        pins[vid] = _hash(lab, f"plans/lib-{vid}")
        lab.write(
            vid,
            checkkit.pinning(
                vid, SPELL.get(vid, f"plans/lib-{vid}"), pins[vid], "run the shared child"
            ),
        )
    lab.commit("agent adds parents", AGENT)
    lab.run()
    for vid in [*VIDS, *SPELL, "ctl"]:
        lab.approve(vid, ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r33-pinwriters", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl-child")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", _p(VIDS))
def test_a_writer_of_the_pinned_version_cannot_approve_the_parent(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-child") == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", _p(list(SPELL)))
def test_a_writer_of_the_pinned_folder_cannot_approve_the_parent(lab: Lab, vid: str) -> None:
    """Refused as self-approval, or the parent is invalid (a path spelling it refuses)."""
    assert lab.calls(f"{vid}-child") == [], lab.codes(vid)
    codes = lab.codes(vid)
    assert "E_SELF_APPROVAL" in codes or "invalid" in codes, codes
