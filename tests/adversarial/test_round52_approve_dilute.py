"""Round 52, self-approval: an approver's plan carried to a new folder with an edit, diluted
with comment lines (bytes the plan hash ignores) so that git's rename score stays below its
50% threshold and git pairs nothing (or pairs the wrong file).

docs/approvals.md / round 50: a plan's writers follow its bytes through git's rename/copy
pairing wherever they are parked, edits in place adding their makers.

Config: the bench's. Alice (an allowed approver) commits ``plans/<vid>a/PLAN.yml`` as
``draft``; a pass. Then the agent, in its own commits:

- ``dil``: ``git mv plans/dila parked/dil``; later one commit moves it back to ``plans/dilb``
  with an edit of ``plan.task`` and 300 comment lines (~20 KB) appended.
- ``dil2``: ``git mv plans/dil2a parked/dil2``; a commit appends the 300 comment lines to the
  parked file; the return commit (the same as ``dil``'s) moves it to ``plans/dil2b`` removing
  the comment lines, with the edit (git reports ``plans/dil2b`` as added, and pairs
  ``parked/dil2`` with ``plans/dilb`` instead).
- ``dilmv``: ``git mv plans/dilmva plans/dilmvb`` with the edit and the comment lines, in that
  same commit (git reports a delete and an add).

The agent sets the three ``pending_approval``; a pass; Alice approves them; two passes;
``git clone``; ``plangate audit --json`` in the clone.

Asserted (the defence): ``E_SELF_APPROVAL``, ``rec`` never runs, the fresh-clone audit lists
no run.

Seen: all held.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["dil", "dil2", "dilmv"]
PAD = "".join(f"# padding line {i} {'x' * 60}\n" for i in range(300))


def _edit(path: Path) -> None:
    text = path.read_text()
    path.write_text(text.replace('task: "attack variant', 'task: "tidied attack variant'))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        lab.write(f"{vid}a", plan_text(vid, status="draft"))
    lab.commit("alice writes her plans", ALICE)
    lab.run()
    (lab.repo / "parked").mkdir()
    lab.git("mv", "plans/dila", "parked/dil")
    lab.git("mv", "plans/dil2a", "parked/dil2")
    lab.commit("agent parks", AGENT)
    parked = lab.repo / "parked/dil2/PLAN.yml"
    parked.write_text(parked.read_text() + PAD)
    lab.commit("agent pads a parked file", AGENT)
    lab.git("mv", "parked/dil", "plans/dilb")
    back = lab.repo / "plans/dilb/PLAN.yml"
    _edit(back)
    back.write_text(back.read_text() + PAD)
    lab.git("mv", "parked/dil2", "plans/dil2b")
    back2 = lab.repo / "plans/dil2b/PLAN.yml"
    back2.write_text(back2.read_text().replace(PAD, ""))
    _edit(back2)
    lab.git("mv", "plans/dilmva", "plans/dilmvb")
    moved = lab.repo / "plans/dilmvb/PLAN.yml"
    _edit(moved)
    moved.write_text(moved.read_text() + PAD)
    lab.commit("agent brings them back", AGENT)
    for vid in VIDS:
        lab.set_status(f"{vid}b", "pending_approval")
    lab.commit("agent submits", AGENT)
    lab.run()
    for vid in VIDS:
        lab.set_status(f"{vid}b", "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    fresh = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(fresh)], check=True, env=lab.env())
    result = lab.cli("audit", "--json", cwd=fresh)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    lab.fresh_audit = json.loads(result.stdout)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r52-dilute", _build)


@pytest.mark.parametrize("vid", VIDS)
def test_her_diluted_plan_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"{vid}b")
    assert "E_SELF_APPROVAL" in lab.codes(f"{vid}b"), lab.codes(f"{vid}b")


@pytest.mark.parametrize("vid", VIDS)
def test_the_fresh_clone_audit_lists_no_run(lab: Lab, vid: str) -> None:
    runs = [
        e
        for e in lab.fresh_audit.get("executions", [])  # type: ignore[attr-defined]
        if e.get("plan") == f"plans/{vid}b"
    ]
    assert runs == [], runs
