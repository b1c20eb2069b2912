"""Round 19, hostile folder names in the shared working tree: a *repository inside the plans
folder* (local mode; the agent cannot commit a ``.git`` entry, but it can create one in the
checkout the controller writes).

git treats a folder holding ``.git`` (a folder, or a "gitfile" ``gitdir: ...``) as another
repository: ``git add`` of a file below it fails or records a submodule, ``git status`` and
``ls-files`` stop at it. After Alice approved three plans (one commit), the agent plays one of:

- ``inner``: ``git init plans/ga`` (a repository in an approved plan's folder) and a gitfile
  ``plans/gb/.git`` pointing at the outer repository's own ``.git``;
- ``top``: ``git init plans`` (the whole plans folder becomes another repository).

Then one ``run --once`` pass. Asserted (held, both): each approved plan (``ga``, ``gb``,
``zz``) ran exactly once and is ``completed`` in ``status``, the controller committed their
outcomes (start and complete per plan), and ``plangate audit`` has no finding.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

SLUGS = ["ga", "gb", "zz"]


def _build(case: str):  # type: ignore[no-untyped-def]
    def build(root: Path) -> Lab:
        lab = Lab(root)
        for slug in SLUGS:
            lab.write(slug, plan_text(slug))
        lab.commit("plans")
        lab.run()
        for slug in SLUGS:
            path = lab.repo / "plans" / slug / "PLAN.yml"
            path.write_text(
                path.read_text().replace("status: pending_approval", "status: approved", 1)
            )
        lab.commit("approve", ALICE)
        if case == "inner":
            subprocess.run(["git", "init", "-q", str(lab.repo / "plans" / "ga")], check=True)
            (lab.repo / "plans" / "gb" / ".git").write_text("gitdir: ../../.git\n")
        else:
            subprocess.run(["git", "init", "-q", str(lab.repo / "plans")], check=True)
        lab.run()
        lab.findings = lab.audit()[1].get("findings", [])  # type: ignore[attr-defined]
        return lab

    return build


@pytest.fixture(scope="module", params=["inner", "top"])
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, f"r19-nestedgit-{request.param}", _build(request.param))


@pytest.mark.parametrize("slug", SLUGS)
def test_each_plan_ran_once_and_is_recorded(lab: Lab, slug: str) -> None:
    assert len(lab.calls(slug)) == 1
    assert lab.status()[f"plans/{slug}"]["status"] == "completed"
    assert lab.subjects(slug)[:2] == [
        f"plangate: complete plans/{slug}",
        f"plangate: start plans/{slug}",
    ]


def test_the_audit_is_clean(lab: Lab) -> None:
    assert lab.findings == []  # type: ignore[attr-defined]
