"""Round 60, object store: forged objects PLANTED in the shared ``.git/objects`` under the
names of objects the controller, and then the approver, are about to write (local mode).

git writes no object it already has: ``git add``/``hash-object -w``/``commit`` see the name
present (a loose file or a pack entry) and keep the bytes there. An object's name is
predictable before it exists: the controller's freeze of a plan the agent wrote is that
text plus ``frozen: {hash, at, risk, ...}`` (``at`` in seconds), and an approval made by
``plangate approve`` is the frozen text with ``status: approved``.

Lab (one, plain approvals). The agent adds ``x`` (``target: prod-db-DROP``). Before the
freeze it predicts the frozen text (the bench: a twin of the repository and state directory
run once; an agent would run ``plangate freeze`` or copy another plan's block) and writes a
loose object, under the name of each candidate (``at`` over the next 40 s), holding the same
text with ``target: staging``. One pass freezes ``x``; a second pass follows.

- ``freeze-says``: asserted: a pass names the forged shared store (``E_GIT``, ``fsck`` or
  ``shared_store.forged``) once the controller's own freeze landed on a forged name (its
  write to the shared store did not happen: "what the controller writes goes into both
  stores, the same bytes under the same names").
- ``status``: ``plangate status --json`` gives the real frozen hash, or ``E_GIT``.
- ``approve-freeze``: Alice's ``plangate approve plans/x`` over the forged freeze blob:
  refused with ``E_GIT`` naming the object store and ``git fsck``.
Alice repairs as told (``git fsck`` names the object; she removes every loose object fsck
calls a mismatch and writes the working tree's file back with ``git hash-object -w``). The
agent then plants the approval's blob (the frozen text with ``status: approved``), forged
(``staging``), and Alice runs ``plangate approve plans/x`` again.
- ``approve-commit``: asserted: ``approve`` refuses (``E_GIT``) or the commit it made names
  bytes the shared store really holds (``git cat-file`` of ``HEAD:plans/x/PLAN.yml`` is the
  working tree's file).
- ``stop-loud``: the next pass stops with ``E_GIT`` naming the object store; nothing ran.
- ``fsck-names``: ``git fsck`` names the forged approval blob.
- ``repair-once``: after the same repair, one pass runs ``x`` exactly once, with
  ``prod-db-DROP`` (what Alice's commit holds).

Seen: BROKE (strict xfails): ``freeze-says`` (both passes exit 0 silent while the
freeze's blob in the shared store is the planted staging text), ``approve-commit``
(``approve`` exits 0 with its commit naming the planted staging bytes; only the next pass
stops). Held: ``status``, ``approve-freeze`` (``E_GIT`` + ``git fsck``), ``stop-loud``,
``fsck-names``, ``repair-once`` (x ran once with prod-db-DROP after the repair).

Fixed (2026-11-29): whatever plangate writes into a store nobody verified (the controller's
freezes, outcomes and state commits into the shared store; ``approve``'s commit in the
shared checkout) under a name the store already held is read back before the branch
moves, through the hashed reads
(``Refs.verify_written``). ``approve`` refuses with ``E_GIT`` naming the object and the
object store, its branch unmoved (``approve-commit``); the controller, whose own store holds
its true bytes, commits and logs ``shared_store.forged`` (``E_GIT``, the objects, the commit
and files) at error level (``freeze-says``). The remedy is the repair that works for a
planted object: ``git fsck --full``, delete the loose file (or the pack) it names, write the
true object again with ``git hash-object -w`` (or fetch it from a clone).
"""

from __future__ import annotations

import datetime
import hashlib
import re
import shutil
import time
import zlib
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, identity, plan_text
from test_round2_execution_kit import shared

VIDS = [
    "freeze-says",
    "status",
    "approve-freeze",
    "approve-commit",
    "stop-loud",
    "fsck-names",
    "repair-once",
]
BROKEN: dict[str, pytest.MarkDecorator] = {}  # all fixed (2026-11-29), see the docstring


def _name(body: bytes) -> str:
    return hashlib.sha1(f"blob {len(body)}\0".encode() + body).hexdigest()


def plant(lab: Lab, name: str, body: bytes) -> None:
    """A loose blob under ``name`` holding ``body`` (another object's bytes)."""
    path = lab.repo / ".git" / "objects" / name[:2] / name[2:]
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(zlib.compress(f"blob {len(body)}\0".encode() + body))


def repair(lab: Lab) -> str:
    """What ``git fsck``'s remedy leads to: remove each loose object that does not hash to its
    name, write the working tree's plan back. Returns fsck's report."""
    report = lab.git("fsck", "--full", check=False)
    folder = lab.repo / ".git" / "objects"
    for path in folder.glob("[0-9a-f][0-9a-f]/*"):
        raw = zlib.decompress(path.read_bytes())
        if hashlib.sha1(raw).hexdigest() != path.parent.name + path.name:
            path.unlink()
    lab.git("hash-object", "-w", "plans/x/PLAN.yml")
    return report


def _twin_text(lab: Lab) -> str:
    twin = lab.root / "twin"
    shutil.copytree(lab.root, twin, symlinks=True, ignore=shutil.ignore_patterns("twin"))
    (twin / "plangate.yml").write_text(
        (twin / "plangate.yml").read_text().replace(str(lab.root), str(twin))
    )
    other = Lab.__new__(Lab)
    other.__dict__.update(lab.__dict__)
    other.root, other.repo, other.config = twin, twin / "repo", twin / "plangate.yml"
    other.state, other.log, other.home = twin / "state", twin / "ran.log", twin / "home"
    other.run()
    return other.read("x")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.git_date = "@1790000000 +0000"
    lab.write("seed", plan_text("seed"))
    lab.commit("agent adds seed", AGENT)
    lab.run()
    lab.write("x", plan_text("x", params='target: "prod-db-DROP"\n'))
    lab.commit("agent adds x", AGENT)
    frozen = _twin_text(lab)
    now, planted = int(time.time()), set()
    for second in range(now - 2, now + 40):
        at = datetime.datetime.fromtimestamp(second, datetime.UTC)
        text = re.sub(r"at: '[^']*'", at.strftime("at: '%Y-%m-%dT%H:%M:%SZ'"), frozen)
        planted.add(_name(text.encode()))
        plant(lab, _name(text.encode()), text.replace("prod-db-DROP", "staging").encode())
    lab.freeze_passes = [lab.run(check=False), lab.run(check=False)]  # type: ignore[attr-defined]
    blob = lab.head("HEAD:plans/x/PLAN.yml")
    lab.hit = blob in planted  # type: ignore[attr-defined]
    lab.shared_says = lab.git("cat-file", "blob", blob)  # type: ignore[attr-defined]
    lab.real_hash = re.search(r"\n  hash: (\S+)", lab.read("x")).group(1)  # type: ignore[attr-defined, union-attr]
    st = lab.cli("status", "--json", "--config", str(lab.config), cwd=lab.repo)
    lab.status_out = st.stdout + st.stderr  # type: ignore[attr-defined]
    lab.extra_env = identity(ALICE)  # type: ignore[attr-defined]
    first = lab.cli("approve", "plans/x", "--config", str(lab.config), cwd=lab.repo)
    lab.approve_first = (first.returncode, first.stdout + first.stderr)  # type: ignore[attr-defined]
    repair(lab)
    approved = re.sub(r"\n  status: \S+", "\n  status: approved", lab.read("x"), count=1)
    plant(lab, _name(approved.encode()), approved.replace("prod-db-DROP", "staging").encode())
    second = lab.cli("approve", "plans/x", "--config", str(lab.config), cwd=lab.repo)
    lab.approve_second = (second.returncode, second.stdout + second.stderr)  # type: ignore[attr-defined]
    lab.extra_env = {}  # type: ignore[attr-defined]
    if second.returncode != 0:  # she flips the line by hand (the same bytes)
        lab.approve("x", ALICE)
    lab.committed = lab.git("cat-file", "blob", "HEAD:plans/x/PLAN.yml", check=False)  # type: ignore[attr-defined]
    lab.on_disk = lab.read("x")  # type: ignore[attr-defined]
    lab.stop = lab.run(check=False)  # type: ignore[attr-defined]
    lab.ran_before_repair = list(lab.calls("x"))  # type: ignore[attr-defined]
    lab.fsck = repair(lab)  # type: ignore[attr-defined]
    lab.fsck += lab.git("fsck", "--full", check=False)  # type: ignore[attr-defined]
    lab.after = [lab.run(check=False), lab.run(check=False)]  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r60-preplant", _build)


def test_the_prediction_hit(lab: Lab) -> None:
    """Bench check: the controller's freeze landed on a planted name; git shows staging."""
    assert lab.hit and "staging" in lab.shared_says, lab.shared_says  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_planted_objects(lab: Lab, vid: str) -> None:
    if vid == "freeze-says":
        said = " ".join(r.stderr for r in lab.freeze_passes)  # type: ignore[attr-defined]
        assert re.search(r"E_GIT|fsck|shared_store\.forged", said), "no pass said anything"
    elif vid == "status":
        out = lab.status_out  # type: ignore[attr-defined]
        assert "E_GIT" in out or (lab.real_hash in out and "staging" not in out), out[-1500:]  # type: ignore[attr-defined]
    elif vid == "approve-freeze":
        code, out = lab.approve_first  # type: ignore[attr-defined]
        assert code != 0 and "E_GIT" in out and "fsck" in out, out
    elif vid == "approve-commit":
        code, out = lab.approve_second  # type: ignore[attr-defined]
        assert (code != 0 and "E_GIT" in out) or lab.committed == lab.on_disk, (  # type: ignore[attr-defined]
            code,
            out,
            lab.committed[-400:],  # type: ignore[attr-defined]
        )
    elif vid == "stop-loud":
        stop = lab.stop  # type: ignore[attr-defined]
        assert lab.ran_before_repair == [], lab.ran_before_repair  # type: ignore[attr-defined]
        assert stop.returncode != 0 and "E_GIT" in stop.stderr, stop.stderr[-1500:]
    elif vid == "fsck-names":
        assert re.search(r"mismatch|missing|corrupt", lab.fsck), lab.fsck  # type: ignore[attr-defined]
    elif vid == "repair-once":
        for result in lab.after:  # type: ignore[attr-defined]
            assert result.returncode == 0, result.stderr[-1500:]
        ran = lab.calls("x")
        assert len(ran) == 1 and '"prod-db-DROP"' in ran[0]["stdin"], ran
