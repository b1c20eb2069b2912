"""Round 25, the committed record is only bytes the controller produced: a hostile
``.plangate`` committed by the agent before the controller's first pass, where the
controller records its policy (``.plangate/policy.json``).

One lab per variant; the agent commits the plan ``zz`` and the hostile entry in one commit,
a pass runs, Alice approves ``zz``, a second pass runs:

- ``file``: ``.plangate`` is a regular file;
- ``dir``: ``.plangate/policy.json`` is a folder (holding a file);
- ``link``: ``.plangate/policy.json`` is a symlink to ``../plans/zz/PLAN.yml``;
- ``dirlink``: ``.plangate`` is a symlink to ``plans/zz``.

Defence asserted: both passes exit 0 without a traceback; ``zz`` runs exactly once and is
``completed``; the branch holds ``.plangate/policy.json`` as a regular file (mode 100644)
holding JSON; ``plans/zz`` holds only PLAN.yml and EXECUTION_LOG.md, and its PLAN.yml is
still a plan (no policy written through the link). All held (round 25).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from advkit import AGENT, Lab, plan_text
from test_round2_execution_kit import shared


def _file(lab: Lab) -> None:
    (lab.repo / ".plangate").write_text("not a folder\n")


def _dir(lab: Lab) -> None:
    (lab.repo / ".plangate/policy.json").mkdir(parents=True)
    (lab.repo / ".plangate/policy.json/x").write_text("x")


def _link(lab: Lab) -> None:
    (lab.repo / ".plangate").mkdir()
    os.symlink("../plans/zz/PLAN.yml", lab.repo / ".plangate/policy.json")


def _dirlink(lab: Lab) -> None:
    os.symlink("plans/zz", lab.repo / ".plangate")


SETUPS: dict[str, Callable[[Lab], None]] = {
    "file": _file,
    "dir": _dir,
    "link": _link,
    "dirlink": _dirlink,
}


def _build(vid: str) -> Callable[[Path], Lab]:
    def build(root: Path) -> Lab:
        lab = Lab(root)
        lab.write("zz", plan_text("zz"))
        SETUPS[vid](lab)
        lab.commit("plan zz and a .plangate of mine", AGENT)
        runs = [lab.run(check=False)]
        lab.approve("zz")
        runs.append(lab.run(check=False))
        lab.passes = [(r.returncode, "Traceback" in r.stderr) for r in runs]  # type: ignore[attr-defined]
        return lab

    return build


@pytest.mark.parametrize("vid", list(SETUPS))
def test_policy_entry(tmp_path_factory: pytest.TempPathFactory, vid: str) -> None:
    lab = shared(tmp_path_factory, f"r25-policypath-{vid}", _build(vid))
    assert lab.passes == [(0, False), (0, False)]  # type: ignore[attr-defined]
    assert len(lab.calls("zz")) == 1
    assert lab.plan("zz")["plan"]["status"] == "completed"
    tree = lab.git("ls-tree", "-r", "HEAD", "--", ".plangate").split("\n")
    assert tree[0].startswith("100644 blob ") and tree[0].endswith("\t.plangate/policy.json")
    json.loads(lab.git("show", "HEAD:.plangate/policy.json"))
    files = lab.git("ls-tree", "-r", "--name-only", "HEAD", "--", "plans/zz").split()
    assert sorted(files) == ["plans/zz/EXECUTION_LOG.md", "plans/zz/PLAN.yml"]
