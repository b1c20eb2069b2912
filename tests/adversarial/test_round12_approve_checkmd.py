"""Round 12, who may make a plan run: ``plangate check --format markdown`` is the pull-request
comment a reviewer reads before merging. Folder names are the agent's: if they reach the
comment as live markdown/HTML, one plan's row can hide the next (an HTML comment opened by
one folder name and closed by another, a ``<details>`` fold, a ``|`` splitting cells).

The PR adds ``plans/a<!--x``, then the agent's ``plans/b-evil`` (arriving ``approved``),
then ``plans/c-->x``; and ``plans/d<details>`` / ``plans/e|x``. Defence: every folder name
reaches the comment escaped (no raw ``<!--``, ``-->``, ``<details>`` or unescaped ``|``), and
``plans/b-evil`` has its row.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, Lab, plan_text
from test_round2_approval_authors import shared_lab

NAMES = ["a<!--x", "b-evil", "c-->x", "d<details>", "e|x"]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.run()
    lab.git("checkout", "-q", "-b", "pr")
    for i, name in enumerate(NAMES):
        lab.write(
            name, plan_text(f"md{i}", status="approved" if name == "b-evil" else "pending_approval")
        )
    lab.commit("agent adds plans", AGENT)
    res = lab.cli("check", "--config", str(lab.config), "--format", "markdown", cwd=lab.repo)
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    (root / "comment.md").write_text(res.stdout)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r12-checkmd", _build)


def test_no_folder_name_is_live_markup(lab: Lab) -> None:
    comment = (lab.root / "comment.md").read_text()
    for raw in ("<!--", "-->", "<details>", "e|x"):
        assert raw not in comment, comment


def test_every_plan_has_its_row(lab: Lab) -> None:
    comment = (lab.root / "comment.md").read_text()
    rows = [line for line in comment.splitlines() if line.startswith("| plans/")]
    assert len(rows) == len(NAMES), comment
    assert any(row.startswith("| plans/b-evil |") for row in rows), comment
    assert all(row.count("|") - row.count("\\|") == 8 for row in rows), comment
