"""Round 35, how a run is recorded: the controller's own files under git's ignore rules.

The agent makes git ignore the files the controller commits for a plan, so that a
porcelain ``git add`` would skip them (the outcome then missing from git, or the commit
failing for good). One lab, each plan one ``rec`` action, all approved by Alice in one
commit, one pass to run:

- ``gi-folder``: ``plans/gi-folder/.gitignore`` (committed with the plan) lists
  ``EXECUTION_LOG.md``, ``PLAN.yml`` and ``.*``;
- ``gi-root``: the repository's ``.gitignore`` (committed) lists ``plans/gi-root/*``;
- ``gi-exclude``: ``.git/info/exclude`` (the shared checkout, never committed) lists
  ``plans/gi-exclude/EXECUTION_LOG.md`` and ``plans/gi-exclude/PLAN.yml``.

Asserted per plan: ``rec`` ran exactly once; at HEAD its PLAN.yml says ``execution.status:
completed`` and its EXECUTION_LOG.md is committed. All held (round 35).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

SLUGS = ["gi-folder", "gi-root", "gi-exclude"]


def _build(root: Path) -> Lab:
    root.mkdir(parents=True)
    lab = Lab(root / "lab")
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.write("gi-folder", "EXECUTION_LOG.md\nPLAN.yml\n.*\n", filename=".gitignore")
    lab.commit("plans", AGENT)
    lab.run()
    for slug in SLUGS:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    (lab.repo / ".gitignore").write_text("plans/gi-root/*\n")
    lab.git("add", ".gitignore")
    lab.git("commit", "-qm", "ignore", who=AGENT)
    exclude = lab.repo / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)
    exclude.write_text("plans/gi-exclude/EXECUTION_LOG.md\nplans/gi-exclude/PLAN.yml\n")
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r35-runs-ignored", lambda root: _build(root / "i"))


@pytest.mark.parametrize("slug", SLUGS)
def test_ignored_files_still_recorded(lab: Lab, slug: str) -> None:
    assert len(lab.calls(slug)) == 1
    assert (lab.plan(slug).get("execution") or {}).get("status") == "completed"
    assert "EXECUTION_LOG.md" in lab.git("ls-tree", "--name-only", "HEAD", f"plans/{slug}/")
