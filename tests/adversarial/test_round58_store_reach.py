"""Round 58, object store: can the agent reach the controller's own store
(``<state_dir>/objects.git``) through where the state directory is, or where the shared
``.git`` points? (local mode)

The store is trusted only because the agent cannot write it. Each variant is its own small
lab with plan ``p`` (the agent's; approved by Alice where the pass gets that far):

- ``gitdir``: ``state_dir`` inside the shared ``.git`` (``repo/.git/plangate-state``: a
  place an operator may think "not in the working tree").
- ``worktree``: ``state_dir`` inside the working tree.
- ``symlink``: ``state_dir`` named through a symlink that leads into the shared ``.git``.
- ``sepgit``: the repository's ``.git`` is a gitfile; ``state_dir`` inside the real git
  directory it names.
- ``into-store``: a valid config and one pass; then the agent replaces the shared ``.git``
  with a gitfile naming ``<state_dir>/objects.git`` itself (the shared repository becomes
  the controller's store); Alice's approval of ``p`` was committed before.

Asserted: the first four are refused at config load (``E_CONFIG_INVALID`` naming
``state_dir``), nothing runs; ``into-store``: the pass exits non-zero, ``rec`` never runs.

Seen: all held. ``into-store`` stops with ``E_GIT: the working tree is on branch master, but
plangate watches main`` (the bare store's ``HEAD``): loud, but for an incidental reason; a
check that the repository's git directory is not (inside) the state directory would name it.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

PLACES = ["gitdir", "worktree", "symlink", "sepgit"]
VIDS = [*PLACES, "into-store"]
BROKEN: dict[str, pytest.MarkDecorator] = {}


def _one(root: Path, where: str) -> dict[str, object]:
    lab = Lab(root / where)
    lab.write("p", plan_text("p"))
    lab.commit("agent adds p", AGENT)
    if where == "into-store":
        lab.run()
        time.sleep(1.1)
        lab.approve("p", ALICE)
        shutil.move(str(lab.repo / ".git"), str(root / f"{where}-real.git"))
        (lab.repo / ".git").write_text(f"gitdir: {lab.state / 'objects.git'}\n")
    else:
        if where == "gitdir":
            state = lab.repo / ".git" / "plangate-state"
        elif where == "worktree":
            state = lab.repo / "state"
        elif where == "symlink":
            (root / f"{where}-link").symlink_to(lab.repo / ".git")
            state = root / f"{where}-link" / "st"
        else:
            shutil.move(str(lab.repo / ".git"), str(root / f"{where}.git"))
            (lab.repo / ".git").write_text(f"gitdir: {root / (where + '.git')}\n")
            state = root / f"{where}.git" / "st"
        text = lab.config.read_text().replace(f"state_dir: {lab.state}", f"state_dir: {state}")
        lab.config.write_text(text)
        lab.approve("p", ALICE)
    result = lab.run(check=False)
    return {"rc": result.returncode, "err": result.stderr[-1500:], "ran": len(lab.calls("p"))}


def _build(root: Path) -> Lab:
    lab = Lab(root / "holder")
    lab.results = {where: _one(root, where) for where in VIDS}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-reach", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_the_store_stays_out_of_reach(lab: Lab, vid: str) -> None:
    got = lab.results[vid]  # type: ignore[attr-defined]
    assert "Traceback" not in got["err"], got
    assert got["rc"] != 0 and got["ran"] == 0, got
    if vid in PLACES:
        assert "E_CONFIG_INVALID" in got["err"] and "state_dir" in got["err"], got
