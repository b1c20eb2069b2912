"""Round 8, what runs: index bits the agent sets in the shared checkout (local mode).

``git update-index --skip-worktree`` / ``--assume-unchanged`` make git itself report a file
as unchanged whatever its working-tree bytes. After Alice approved both plans, the agent sets
one of those bits on an approved plan's PLAN.yml (or on ``.plangate/policy.json``) and rewrites
the working-tree file: another param, another tool argument, or garbage. docs/threat-model.md
says "uncommitted edits?" compares the index with raw file bytes in-process; the defence
asserted: each plan ran exactly once with its approved params (or the edited one not at all,
never with the edit), the pass exits 0, the other plan runs.

Also (same assertions, every plan runs once): the agent points ``core.worktree`` of the shared
``.git/config`` at an empty folder, or sets ``core.bare=true``, after the approvals.

Same lab shape as ``test_round8_runs_gitenc`` (its ``_build``).
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from advkit import Lab
from test_round8_runs_gitenc import _build


def _bit_and_edit(bit: str, rel: str, old: str, new: str) -> Callable[[Lab], None]:
    def step(lab: Lab) -> None:
        lab.git("update-index", bit, rel)
        path = lab.repo / rel
        path.write_text(path.read_text().replace(old, new))

    return step


def _worktree_elsewhere(lab: Lab) -> None:
    other = lab.root / "elsewhere"
    other.mkdir()
    (other / "README").write_text("x\n")
    lab.git("config", "core.worktree", str(other))


def _bare(lab: Lab) -> None:
    lab.git("config", "core.bare", "true")


ATTACKS: dict[str, tuple[Callable[[Lab], None], str]] = {
    "skip-worktree-param": (
        _bit_and_edit(
            "--skip-worktree", "plans/p1/PLAN.yml", 'tag: "p1"', 'tag: "p1"\n      evil: "EDITED"'
        ),
        "",
    ),
    "assume-unchanged-param": (
        _bit_and_edit(
            "--assume-unchanged",
            "plans/p1/PLAN.yml",
            'tag: "p1"',
            'tag: "p1"\n      evil: "EDITED"',
        ),
        "",
    ),
    "core-worktree-elsewhere": (_worktree_elsewhere, ""),
    "core-bare": (_bare, ""),
    "skip-worktree-policy": (
        _bit_and_edit("--skip-worktree", ".plangate/policy.json", '"approval"', '"approval_x"'),
        "",
    ),
}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    base = tmp_path_factory.getbasetemp()
    if base.name.startswith("popen-gw"):
        base = base.parent
    done = base / "r8-index.json"
    with open(base / "r8-index.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return dict(json.loads(done.read_text()))
        folder = base / "r8-index"
        folder.mkdir()
        with ThreadPoolExecutor(3) as pool:
            futures = {n: pool.submit(_build, n, folder / n, ATTACKS) for n in ATTACKS}
            out = {n: f.result() for n, f in futures.items()}
        done.write_text(json.dumps(out))
        return out


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_index_bit_never_changes_what_runs(
    results: dict[str, dict[str, Any]], name: str
) -> None:
    got = results[name]
    assert got["exits"] == [0], got["errors"]
    assert got["calls"]["p2"] == [{"tag": "p2"}], got["calls"]
    assert got["calls"]["p1"] in ([], [{"tag": "p1"}]), got["calls"]
    if name != "skip-worktree-param" and name != "assume-unchanged-param":
        assert got["calls"]["p1"] == [{"tag": "p1"}], got["calls"]
