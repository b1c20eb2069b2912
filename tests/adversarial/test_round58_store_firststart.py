"""Round 58, object store: the first start (a whole-branch import into an empty
``<state_dir>/objects.git``) on a shared repository whose ``.git`` the agent already forged
(local mode).

A controller with a new state directory (a rebuilt host, a fresh install over an existing
plans repository) takes the whole branch in by ``git fetch`` before it reads anything. Every
lab here is one copy of the same signed history, started with an empty state directory after
the agent changed the shared ``.git``:

Config: ``require_signed: true``. History: the agent adds ``a``, ``b`` and ``honest``; a
controller (the old host) froze them; Alice approves ``a`` (signed); the agent sets ``a``
back and ``b`` approved; Alice approves ``honest`` (signed). Then, before the first start:

- ``pack``: a one-object pack names Alice's approval's root tree for the agent's root tree
  (her signed commit shows ``b`` approved).
- ``loose``: the same by rewriting her root tree's loose object in place.
- ``alt``: her root tree's loose object deleted; ``objects/info/alternates`` names a folder
  holding the forged bytes under that name.
- ``promisor``: her root tree's loose object deleted; ``extensions.partialClone`` and a
  promisor remote whose repository holds the forged bytes under that name.
- ``objfmt``: ``extensions.objectFormat=sha256`` (``repositoryformatversion = 1``) written into
  ``.git/config`` of a SHA-1 repository.
- ``shallow``: ``.git/shallow`` names Alice's approval (the history behind it cut off).
- ``alt-real`` (control): the real objects moved out into an alternate object folder (as
  ``git clone --shared`` leaves them): nothing is forged, the first start must work.
- ``replace`` (control): ``git replace`` of her root tree by the agent's: nothing is forged.

Asserted: for the forged ones, the first pass stops loudly (exit non-zero, ``E_GIT``),
``rec`` never runs; after the operator's repair (the pack removed, the object restored, the
config or file removed) the next pass runs ``honest`` exactly once and ``b`` never. For the
controls, the first pass runs ``honest`` once and ``b`` never.

Seen: every variant held. The forged ones: ``E_GIT at .../objects: cannot fetch
refs/heads/main ... into the controller's object store`` (``pack``, ``loose``, ``alt``,
``promisor``; the reason git gives starts with its unrelated hint "Support for
<GIT_DIR>/info/grafts is deprecated"), ``E_GIT ... uses sha256 object ids`` (``objfmt``),
``E_GIT ... is a shallow clone`` (``shallow``); nothing ran, and after the repair ``honest``
ran once, ``b`` never. The controls ran at once.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import time
import zlib
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared
from test_round53_approve_commitgraph import _signed
from test_round53_approve_packshadow import shadow
from test_round58_store_replace import signed_lab

FORGED = ["pack", "loose", "alt", "promisor", "objfmt", "shallow"]
CONTROLS = ["alt-real", "replace"]
VIDS = FORGED + CONTROLS
BROKEN: dict[str, pytest.MarkDecorator] = {}


def _base(root: Path) -> Lab:
    lab = signed_lab(root / "base")
    for slug in ("a", "b", "honest"):
        lab.write(slug, plan_text(slug))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    time.sleep(1.1)
    lab.set_status("a", "approved")
    approval = _signed(lab, ALICE, "alice", "approve a")
    lab.set_status("a", "pending_approval")
    lab.set_status("b", "approved")
    mine = lab.commit("agent tidies", AGENT)
    lab.set_status("honest", "approved")
    _signed(lab, ALICE, "alice", "approve honest")
    lab.names = (approval, lab.head(approval + "^{tree}"), lab.head(mine + "^{tree}"))  # type: ignore[attr-defined]
    return lab


def _copy(base: Lab, root: Path) -> Lab:
    shutil.copytree(base.root, root, symlinks=True)
    lab = copy.copy(base)
    lab.root, lab.repo, lab.config = root, root / "repo", root / "plangate.yml"
    lab.state, lab.log, lab.home = root / "state", root / "ran.log", root / "home"
    lab.recorder = root / "rec.py"
    shutil.rmtree(lab.state)
    if lab.log.exists():
        lab.log.unlink()
    signers = root / "allowed_signers"
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    return lab


def _loose_path(lab: Lab, oid: str) -> Path:
    return lab.repo / ".git" / "objects" / oid[:2] / oid[2:]


def _loose_bytes(lab: Lab, oid: str) -> bytes:
    body = subprocess.run(
        ["git", "cat-file", "tree", oid],
        cwd=lab.repo,
        env=lab.env(),
        capture_output=True,
        check=True,
    ).stdout
    return zlib.compress(b"tree %d\0" % len(body) + body)


def _forge(lab: Lab, vid: str) -> object:
    """Apply the variant's change; returns what the repair needs."""
    _, tree, other = lab.names  # type: ignore[attr-defined]
    git_dir = lab.repo / ".git"
    real = _loose_path(lab, tree)
    saved = real.read_bytes()
    if vid == "pack":
        return shadow(lab, tree, other)
    if vid == "loose":
        os.chmod(real, 0o644)
        real.write_bytes(_loose_bytes(lab, other))
        return saved
    if vid in ("alt", "alt-real"):
        alt = lab.root / "alt-objects"
        (alt / tree[:2]).mkdir(parents=True)
        (alt / tree[:2] / tree[2:]).write_bytes(
            saved if vid == "alt-real" else _loose_bytes(lab, other)
        )
        (git_dir / "objects" / "info").mkdir(exist_ok=True)
        (git_dir / "objects" / "info" / "alternates").write_text(f"{alt}\n")
        os.chmod(real, 0o644)
        real.unlink()
        return saved
    if vid == "promisor":
        far = lab.root / "far.git"
        subprocess.run(["git", "init", "-q", "--bare", str(far)], check=True, env=lab.env())
        (far / "objects" / tree[:2]).mkdir(parents=True)
        (far / "objects" / tree[:2] / tree[2:]).write_bytes(_loose_bytes(lab, other))
        lab.git("config", "core.repositoryformatversion", "1")
        lab.git("config", "extensions.partialClone", "far")
        lab.git("config", "remote.far.url", str(far))
        lab.git("config", "remote.far.promisor", "true")
        os.chmod(real, 0o644)
        real.unlink()
        return saved
    if vid == "objfmt":
        lab.git("config", "core.repositoryformatversion", "1")
        lab.git("config", "extensions.objectFormat", "sha256")
        return None
    if vid == "shallow":
        (git_dir / "shallow").write_text(lab.names[0] + "\n")  # type: ignore[attr-defined]
        return None
    if vid == "replace":
        lab.git("replace", "-f", tree, other)
        return None
    raise AssertionError(vid)


def _repair(lab: Lab, vid: str, saved: object) -> None:
    _, tree, _ = lab.names  # type: ignore[attr-defined]
    git_dir = lab.repo / ".git"
    real = _loose_path(lab, tree)
    if vid == "pack":
        for path in saved:  # type: ignore[attr-defined]
            path.unlink()
    elif vid in ("loose", "alt", "promisor"):
        if vid == "alt":
            (git_dir / "objects" / "info" / "alternates").unlink()
        if vid == "promisor":
            for key in ("extensions.partialClone", "remote.far.promisor", "remote.far.url"):
                lab.git("config", "--unset", key)
            lab.git("config", "core.repositoryformatversion", "0")
        if real.exists():
            os.chmod(real, 0o644)
        real.write_bytes(saved)  # type: ignore[arg-type]
    elif vid == "objfmt":
        lab.git("config", "--unset", "extensions.objectFormat")
        lab.git("config", "core.repositoryformatversion", "0")
    elif vid == "shallow":
        (git_dir / "shallow").unlink()


def _build(root: Path) -> Lab:
    base = _base(root)
    results = {}
    for vid in VIDS:
        lab = _copy(base, root / vid)
        saved = _forge(lab, vid)
        first = lab.run(check=False, take_over=True)  # a new state dir, told (round 70)
        calls_first = {s: len(lab.calls(s)) for s in ("a", "b", "honest")}
        if vid in FORGED:
            _repair(lab, vid, saved)
        second = lab.run(check=False, take_over=True)  # still a first start if refused
        results[vid] = {
            "first": (first.returncode, first.stderr[-2500:]),
            "second": (second.returncode, second.stderr[-2500:]),
            "calls_first": calls_first,
            "calls": {s: len(lab.calls(s)) for s in ("a", "b", "honest")},
        }
    base.results = results  # type: ignore[attr-defined]
    return base


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-firststart", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_the_first_start_on_a_changed_store(lab: Lab, vid: str) -> None:
    got = lab.results[vid]  # type: ignore[attr-defined]
    (rc1, err1), (rc2, err2) = got["first"], got["second"]
    assert "Traceback" not in err1 + err2, (err1, err2)
    assert got["calls"]["b"] == 0, got
    if vid in FORGED:
        assert rc1 != 0 and "E_GIT" in err1, got
        assert not any(got["calls_first"].values()), got
        assert rc2 == 0, got
    else:
        assert rc1 == 0, got
    assert got["calls"]["honest"] == 1, got
