"""Round 58, object store: the shared ``.git``'s layout changed by the agent (local mode):
a ``.git`` gitfile naming another git directory, a multi-pack-index over a shadowing pack,
``http-alternates``, ``extensions.worktreeConfig``, and the shared object folders blocked so
the controller's own writes cannot land there.

Config: plain approvals (Alice, Bob). For every variant the agent adds ``r-<v>`` and
``h-<v>``, the controller freezes them; then per variant, one after the other on one branch:
Alice rejects ``r-<v>`` (commit R), the agent reopens it, Bob approves it, Alice approves
``h-<v>``; then the variant's change; one pass; the operator's repair; one more pass.

- ``gitfile``: ``.git`` replaced by a gitfile naming a copy of the git directory, in which a
  one-object pack names R's root tree for its parent's (the rejection gone) (forged).
- ``midx``: that pack in the shared store itself, then ``git multi-pack-index write`` (and
  the pack's ``.idx`` kept): objects found through the multi-pack-index (forged).
- ``gitfile-sep`` (control): the real git directory moved out and named by a gitfile (as
  ``git init --separate-git-dir`` leaves it): nothing forged.
- ``http-alt`` (control): ``objects/info/http-alternates`` naming a URL: nothing forged.
- ``wtconfig`` (control): ``extensions.worktreeConfig`` with ``config.worktree`` setting
  ``core.worktree`` to a folder of the agent's holding ``r-wtconfig`` approved, and
  ``core.bare``: nothing forged.
- ``blocked``: every object packed, then a regular file at each ``objects/<xx>`` so no loose
  object can be written to the shared store (the controller's own writes go to both stores).

Asserted: for a forged variant the pass stops loudly (non-zero, ``E_GIT``) and runs nothing;
for a control it runs ``h-<v>`` once. After the repair, ``h-<v>`` ran exactly once in all
and ``r-<v>`` never (Alice's rejection holds). For ``blocked``: ``h-blocked`` ran at most
once before the repair and exactly once in all, and the branch records its outcome.

Seen: every variant held. ``gitfile``/``midx``: ``E_GIT`` naming the object store (the
message's reason begins with git's unrelated hint "Support for <GIT_DIR>/info/grafts is
deprecated", printed because the upload-pack pins name a graft file). ``blocked``: the pass
exits 0 with ``E_STORAGE at the commit of plans/h-blocked (objects under .../.git): the write
failed: File exists`` and the remedy; the plan waits, nothing ran, and it runs once after
the files are removed. The controls ran at once.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text
from test_round2_execution_kit import shared
from test_round53_approve_packshadow import shadow

FORGED = ["gitfile", "midx"]
VIDS = [*FORGED, "gitfile-sep", "http-alt", "wtconfig", "blocked"]
BROKEN: dict[str, pytest.MarkDecorator] = {}


def _change(lab: Lab, vid: str, names: tuple[str, str]) -> object:
    git_dir = lab.repo / ".git"
    if vid == "gitfile":
        copy = lab.root / "copy.git"
        pack = shadow(lab, *names)
        shutil.copytree(git_dir, copy)
        for path in pack:  # the real git directory stays whole
            path.unlink()
        shutil.move(str(git_dir), str(lab.root / "real.git"))
        (lab.repo / ".git").write_text(f"gitdir: {copy}\n")
        return None
    if vid == "midx":
        pack = shadow(lab, *names)
        lab.git("multi-pack-index", "write")
        return pack
    if vid == "gitfile-sep":
        shutil.move(str(git_dir), str(lab.root / "sep.git"))
        (lab.repo / ".git").write_text(f"gitdir: {lab.root / 'sep.git'}\n")
        return None
    if vid == "http-alt":
        (git_dir / "objects" / "info").mkdir(exist_ok=True)
        (git_dir / "objects" / "info" / "http-alternates").write_text(
            "http://127.0.0.1:9/objects\n"
        )
        return None
    if vid == "wtconfig":
        other = lab.root / "elsewhere"
        shutil.copytree(lab.repo, other, ignore=shutil.ignore_patterns(".git"))
        lab.git("config", "core.repositoryformatversion", "1")
        lab.git("config", "extensions.worktreeConfig", "true")
        (git_dir / "config.worktree").write_text(f"[core]\n\tworktree = {other}\n")
        return None
    if vid == "blocked":
        lab.git("repack", "-adq")
        lab.git("prune-packed")
        made = []
        for i in range(256):
            path = git_dir / "objects" / f"{i:02x}"
            if path.is_dir():
                shutil.rmtree(path) if not any(path.iterdir()) else None
            if not path.exists():
                path.write_text("blocked\n")
                made.append(path)
        return made
    raise AssertionError(vid)


def _repair(lab: Lab, vid: str, saved: object) -> None:
    git_dir = lab.repo / ".git"
    if vid == "gitfile":
        git_dir.unlink()
        shutil.move(str(lab.root / "real.git"), str(git_dir))
    elif vid == "midx":
        for path in saved:  # type: ignore[attr-defined]
            path.unlink()
        (git_dir / "objects" / "pack" / "multi-pack-index").unlink()
    elif vid == "gitfile-sep":
        git_dir.unlink()
        shutil.move(str(lab.root / "sep.git"), str(git_dir))
    elif vid == "http-alt":
        (git_dir / "objects" / "info" / "http-alternates").unlink()
    elif vid == "wtconfig":
        (git_dir / "config.worktree").unlink()
        lab.git("config", "--unset", "extensions.worktreeConfig")
        lab.git("config", "core.repositoryformatversion", "0")
    elif vid == "blocked":
        for path in saved:  # type: ignore[attr-defined]
            path.unlink()


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        lab.write(f"r-{vid}", plan_text(f"r-{vid}"))
        lab.write(f"h-{vid}", plan_text(f"h-{vid}"))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    time.sleep(1.1)
    lab.results = {}  # type: ignore[attr-defined]
    for vid in VIDS:
        before = lab.head()
        lab.set_status(f"r-{vid}", "rejected")
        rejection = lab.commit(f"reject r-{vid}", ALICE)
        lab.set_status(f"r-{vid}", "pending_approval")
        lab.commit(f"agent reopens r-{vid}", AGENT)
        lab.approve(f"r-{vid}", BOB)
        lab.approve(f"h-{vid}", ALICE)
        names = (lab.head(f"{rejection}^{{tree}}"), lab.head(f"{before}^{{tree}}"))
        saved = _change(lab, vid, names)
        first = lab.run(check=False)
        calls = {s: len(lab.calls(f"{s}-{vid}")) for s in ("r", "h")}
        _repair(lab, vid, saved)
        second = lab.run(check=False)
        lab.git("reset", "-q", "--hard")
        subjects = lab.git("log", "--format=%s", "-12")
        lab.results[vid] = {  # type: ignore[attr-defined]
            "first": (first.returncode, first.stderr[-2000:]),
            "second": (second.returncode, second.stderr[-2000:]),
            "calls_first": calls,
            "calls": {s: len(lab.calls(f"{s}-{vid}")) for s in ("r", "h")},
            "recorded": f"plangate: complete plans/h-{vid}" in subjects,
        }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-layout", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_a_changed_layout(lab: Lab, vid: str) -> None:
    got = lab.results[vid]  # type: ignore[attr-defined]
    (rc1, err1), (rc2, err2) = got["first"], got["second"]
    assert "Traceback" not in err1 + err2, got
    if vid in FORGED:
        assert rc1 != 0 and "E_GIT" in err1, got
        assert got["calls_first"] == {"r": 0, "h": 0}, got
    elif vid == "blocked":
        assert got["calls_first"]["h"] <= 1, got
    else:
        assert rc1 == 0 and got["calls_first"] == {"r": 0, "h": 1}, got
    assert rc2 == 0, got
    assert got["calls"] == {"r": 0, "h": 1}, got
    assert got["recorded"], got
