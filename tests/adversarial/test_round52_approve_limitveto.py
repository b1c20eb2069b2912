"""Round 52, who may reject: a carrier's veto through ``diff.renameLimit`` in the shared
repository's ``.git/config`` (``test_round52_approve_repoconfig.py`` found that setting hides
a parked plan's writers from the controller).

docs/approvals.md (round 35): a content's producers are the people in EVERY commit that made
it; moves and conversions make nothing. A rejection by someone neither an allowed approver
nor an author is ignored and flagged ``withdraw-not-allowed``.

Config: the bench's; the ``limit`` lab sets ``git config diff.renameLimit 1`` in the watched
repository, the ``control`` lab does not. The agent commits ``plans/vetoa`` (waiting); a
pass freezes it. Mallory (no approver) parks it out of the plans folder (``git mv`` to
``parked/v``), then moves it back to ``plans/vetob`` adding a comment line on top (same hash)
in a commit that also adds two note files (past the rename limit: git pairs nothing); a
pass; Mallory sets ``rejected``; a pass; Alice approves; two passes; ``git clone`` and
``plangate audit --json`` in the clone.

Asserted (the defence): Mallory's rejection is ignored (the fresh-clone audit flags
``withdraw-not-allowed``), Alice's approval runs ``rec`` exactly once, and the fresh-clone
audit lists that run as validly approved.

Seen: held in both labs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

CONFIGS = {"control": [], "limit": [("diff.renameLimit", "1")]}


def _build(root: Path, keys: list[tuple[str, str]]) -> Lab:
    lab = Lab(root)
    for key, value in keys:
        lab.git("config", key, value)
    lab.write("vetoa", plan_text("veto"))
    lab.commit("agent writes a plan", AGENT)
    lab.run()
    (lab.repo / "parked").mkdir()
    lab.git("mv", "plans/vetoa", "parked/v")
    lab.commit("mallory parks it", MALLORY)
    lab.git("mv", "parked/v", "plans/vetob")
    file = lab.repo / "plans/vetob/PLAN.yml"
    file.write_text("# carried\n" + file.read_text())
    (lab.repo / "notes").mkdir()
    for i in range(2):
        (lab.repo / f"notes/n{i}.txt").write_text(f"note {i}\n" * 5)
    lab.commit("mallory brings it back", MALLORY)
    lab.run()
    lab.set_status("vetob", "rejected")
    lab.commit("mallory rejects", MALLORY)
    lab.run()
    lab.approve("vetob", ALICE)
    lab.run()
    lab.run()
    fresh = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(fresh)], check=True, env=lab.env())
    result = lab.cli("audit", "--json", cwd=fresh)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    lab.fresh_audit = json.loads(result.stdout)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module", params=list(CONFIGS))
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Lab:
    name = str(request.param)
    return shared(tmp_path_factory, f"r52-limitveto-{name}", lambda r: _build(r, CONFIGS[name]))


def test_the_carriers_rejection_is_no_veto(lab: Lab) -> None:
    assert len(lab.calls("veto")) == 1, lab.codes("vetob")


def test_the_fresh_clone_audit_agrees(lab: Lab) -> None:
    report = lab.fresh_audit  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == "plans/vetob"]
    assert [e.get("approval_valid") for e in runs] == [True], runs
    kinds = [f.get("kind") for f in report.get("findings", []) if f.get("plan") == "plans/vetob"]
    assert "withdraw-not-allowed" in kinds, report.get("findings")
