"""Round 37, who may reject: a version first made by a *move with an edit* (git pairs the
files as a rename), then copied by a non-approver.

docs/approvals.md (rounds 34, 35): a content's producers are the people in *every* commit that
made it: a commit that wrote it into a plan file "and did not take it from a plan file or draft
the same commit removes"; "a move ... makes nothing"; "a copy ... [is a] further commit that
made it: only someone in all of them is a producer". A move *with an edit* writes new content;
if it were taken for a plain move, the version would have no maker but a later copier, who
would then be its only producer (and could veto it).

Config: the bench's (approvers Alice and ``*@ops.example.com``). The agent adds
``plans/<vid>-src``; the controller freezes it. Then:

- ``mvedit``: the agent ``git mv``s the folder to ``plans/<vid>`` and edits a param in the
  same commit (a rename by git's measure); the controller freezes the new version. Mallory
  (no approver) copies the folder byte for byte to ``plans/lib/<vid>-m`` and sets her copy
  ``rejected``.
- ``mvedit-rej``: as ``mvedit``, but Mallory rejects ``plans/<vid>`` itself after her copy.
- ``mvedit-side``: the agent's move-with-edit is made on a side branch and merged ``--no-ff``.
- ``mvedit-status``: the agent's move-with-edit also sets ``status: draft``; the controller
  passes; the agent sets it ``pending_approval``; then Mallory copies and rejects her copy.
- ``edit`` (control): the agent edits in place (no move); Mallory copies and rejects her copy.

Then Alice approves ``plans/<vid>``. Asserted: Mallory's rejection withdraws nothing
(``rec`` runs once) and a fresh-clone ``plangate audit`` flags no start of the plan.

Results: every variant held (the copier's rejection ignored, ``rec`` ran once, the audit
calls each run valid).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["mvedit", "mvedit-rej", "mvedit-side", "mvedit-status", "edit"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _edit(lab: Lab, slug: str) -> None:
    text = lab.read(slug)
    lab.write(slug, text.replace('      tag: "', '      extra: "edited"\n      tag: "'))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        lab.write(f"{vid}-src" if vid != "edit" else vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for vid in ("mvedit", "mvedit-rej", "mvedit-status"):
        lab.git("mv", f"plans/{vid}-src", f"plans/{vid}")
        _edit(lab, vid)
        if vid == "mvedit-status":
            lab.set_status(vid, "draft")
        lab.commit(f"agent moves and edits {vid}", AGENT)
    _edit(lab, "edit")
    lab.commit("agent edits in place", AGENT)
    lab.git("checkout", "-q", "-b", "side")
    lab.git("mv", "plans/mvedit-side-src", "plans/mvedit-side")
    _edit(lab, "mvedit-side")
    lab.commit("agent moves and edits on a side branch", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    lab.run()
    lab.set_status("mvedit-status", "pending_approval")
    lab.commit("agent submits", AGENT)
    lab.run()
    for vid in VIDS:
        shutil.copytree(lab.repo / "plans" / vid, lab.repo / "plans/lib" / f"{vid}-m")
        lab.commit(f"mallory copies {vid}", MALLORY)
    lab.run()
    for vid in VIDS:
        lab.set_status(vid if vid == "mvedit-rej" else f"lib/{vid}-m", "rejected")
        lab.commit(f"mallory rejects {vid}", MALLORY)
    lab.run()
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.git("clone", "-q", str(lab.repo), str(root / "fresh"))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r37-moveedit", _build)


def _p(vids: list[str]) -> list[object]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(VIDS))
def test_copier_cannot_veto(lab: Lab, vid: str) -> None:
    assert "extra" in lab.read(vid)
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", _p(VIDS))
def test_audit_agrees(lab: Lab, vid: str) -> None:
    import json

    result = lab.cli("audit", "--json", cwd=lab.root / "fresh")
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    report = json.loads(result.stdout)
    text = json.dumps(report)
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert runs and all(e.get("approval_valid") for e in runs), text[-3000:]
