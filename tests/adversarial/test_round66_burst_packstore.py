"""Round 66, bursts: the shared ``.git/objects`` around a burst's PACK (docs/architecture.md:
"a burst's commit (16 objects or more) as one pack per store"; the names the shared store
already holds are read back after the write).

Lab (one, local mode, ``run --once`` passes):

1. ``unwritable``: the agent replaces ``.git/objects/pack`` with a link to a folder nobody
   can create a file in (``/proc/self/fdinfo``: the pack write fails, as on a full or
   read-only folder; git still reads loose objects), then commits 20 plans ``u-00``..``u-19``
   in one commit; a pass freezes them. The folder is put back.
2. The agent commits 20 plans ``b-00``..``b-19`` (``target: prod-DROP-<id>``) in one commit.
   Before the pass it predicts each plan's frozen text (a twin of the repository and state
   directory run once, ``frozen.at`` over the next 40 s; round 60's method) and plants, under
   each predicted blob name, the same text with ``target: staging``:
   ``loose`` (``b-01``..``b-04``): loose files in the shared store;
   ``pack`` (``b-05``..``b-08``): ONE crafted pack whose index names them, dated 2100 (git
   prefers the newest pack);
   ``alt`` (``b-09``..``b-12``): loose files in another store named by
   ``.git/objects/info/alternates``.
   One pass freezes the twenty (the burst's commit: a pack). Then the user runs
   ``git gc --prune=now`` (``gc``).
3. Alice approves all forty plans in one commit; two passes.

Asserted, per id: ``<kind>-said``: after the freeze burst, the shared store (``git cat-file``
in the checkout) gives each attacked plan's frozen file as the controller wrote it, or the
pass named the forged store (``shared_store.forged`` / ``E_GIT``); ``<kind>-run``: each
attacked plan ran once, with its own ``prod-DROP`` target, never ``staging``;
``unwritable-fsck``: every object the branch names is in the shared store after the burst
whose pack could not be written (``git fsck --connectivity-only``), and ``unwritable-run``:
each ``u-*`` ran once; ``pack-status`` / ``pack-show``: ``plangate status --json`` and
``plangate show`` in the checkout, after the freeze burst, give the real frozen hash and
target (or ``E_GIT``), never ``staging``; ``gc-fsck``: the user's ``git gc --prune=now``
after the burst keeps the branch whole; ``honest``: ``b-00``, ``b-13``..``b-19`` ran once.

Seen: all HELD. The freeze burst with a pack folder it cannot write falls back to commits
of loose objects (one per plan), the branch whole; the planted loose and alternate objects
are shadowed by the controller's pack (git reads packs first), the planted pack wins over it
and the pass logs ``shared_store.forged`` (E_GIT, the objects, the files, the remedy); every
plan ran once with the text Alice approved.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shutil
import struct
import time
import zlib
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

B = [f"b-{i:02d}" for i in range(20)]
U = [f"u-{i:02d}" for i in range(20)]
KINDS = {"loose": B[1:5], "pack": B[5:9], "alt": B[9:13]}
HONEST = [B[0], *B[13:]]
BROKEN: dict[str, object] = {}


def _name(body: bytes) -> str:
    return hashlib.sha1(f"blob {len(body)}\0".encode() + body).hexdigest()


def _loose(objects: Path, name: str, body: bytes) -> None:
    path = objects / name[:2] / name[2:]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(zlib.compress(f"blob {len(body)}\0".encode() + body))


def _pack(folder: Path, items: dict[str, bytes], mtime: float) -> None:
    """One pack whose index names each key for the blob bytes of its value."""
    entries, pack = [], b"PACK" + struct.pack(">II", 2, len(items))
    for name, body in items.items():
        size = len(body)
        first = (3 << 4) | (size & 15)
        size >>= 4
        head = bytearray()
        while size:
            head.append(first | 0x80)
            first, size = size & 0x7F, size >> 7
        head.append(first)
        entry = bytes(head) + zlib.compress(body)
        entries.append((bytes.fromhex(name), zlib.crc32(entry) & 0xFFFFFFFF, len(pack)))
        pack += entry
    pack += hashlib.sha1(pack).digest()
    entries.sort()
    counts = [0] * 256
    for oid, _, _ in entries:
        counts[oid[0]] += 1
    total, fanout = 0, b""
    for n in counts:
        total += n
        fanout += struct.pack(">I", total)
    idx = b"\xfftOc" + struct.pack(">I", 2) + fanout + b"".join(e[0] for e in entries)
    idx += b"".join(struct.pack(">I", e[1]) for e in entries)
    idx += b"".join(struct.pack(">I", e[2]) for e in entries)
    idx += pack[-20:]
    idx += hashlib.sha1(idx).digest()
    stem = folder / f"pack-{hashlib.sha1(pack).hexdigest()}"
    stem.with_suffix(".pack").write_bytes(pack)
    stem.with_suffix(".idx").write_bytes(idx)
    for suffix in (".pack", ".idx"):
        os.utime(stem.with_suffix(suffix), (mtime, mtime))


def _twin(lab: Lab) -> Lab:
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
    return other


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.git_date = "@1790000000 +0000"
    objects = lab.repo / ".git" / "objects"
    # 1. a pack folder nobody can write
    shutil.rmtree(objects / "pack", ignore_errors=True)
    os.symlink("/proc/self/fdinfo", objects / "pack")
    for v in U:
        lab.write(v, plan_text(v, params=f'target: "prod-DROP-{v}"\n'))
    lab.commit("agent adds twenty", AGENT)
    lab.unwritable_pass = lab.run(check=False)  # type: ignore[attr-defined]
    lab.unwritable_fsck = lab.git("fsck", "--connectivity-only", check=False) + "rc"  # type: ignore[attr-defined]
    proc = __import__("subprocess").run(
        ["git", "fsck", "--connectivity-only"], cwd=lab.repo, env=lab.env(), capture_output=True
    )
    lab.unwritable_fsck_rc = proc.returncode  # type: ignore[attr-defined]
    (objects / "pack").unlink()
    (objects / "pack").mkdir()
    lab.u_frozen = {v: "frozen" in lab.plan(v) for v in U}  # type: ignore[attr-defined]
    # 2. planted objects under the names of the next burst's blobs
    lab.git_date = "@1790000100 +0000"
    for v in B:
        lab.write(v, plan_text(v, params=f'target: "prod-DROP-{v}"\n'))
    lab.commit("agent adds twenty more", AGENT)
    twin = _twin(lab)
    packed: dict[str, bytes] = {}
    alternate = root / "alt" / "objects"
    planted: dict[str, str] = {}
    now = int(time.time())
    for kind, slugs in KINDS.items():
        for v in slugs:
            text = twin.read(v)
            for second in range(now - 2, now + 40):
                at = datetime.datetime.fromtimestamp(second, datetime.UTC)
                guess = re.sub(r"at: '[^']*'", at.strftime("at: '%Y-%m-%dT%H:%M:%SZ'"), text)
                name = _name(guess.encode())
                forged = guess.replace(f"prod-DROP-{v}", "staging").encode()
                planted[name] = v
                if kind == "loose":
                    _loose(objects, name, forged)
                elif kind == "pack":
                    packed[name] = forged
                else:
                    _loose(alternate, name, forged)
    _pack(objects / "pack", packed, mtime=4102444800)
    (objects / "info").mkdir(exist_ok=True)
    (objects / "info" / "alternates").write_text(f"{alternate}\n")
    lab.freeze_pass = lab.run(check=False)  # type: ignore[attr-defined]
    lab.hit, lab.shared_says = {}, {}  # type: ignore[attr-defined]
    for v in B:
        blob = lab.head(f"HEAD:plans/{v}/PLAN.yml")
        lab.hit[v] = blob in planted  # type: ignore[attr-defined]
        lab.shared_says[v] = lab.git("cat-file", "blob", blob, check=False)  # type: ignore[attr-defined]
    st = lab.cli("status", "--json", "--config", str(lab.config), cwd=lab.repo)
    lab.status_out = (st.returncode, st.stdout, st.stderr)  # type: ignore[attr-defined]
    lab.real_hash = {  # type: ignore[attr-defined]
        v: re.search(r"\n  hash: (\S+)", lab.read(v)).group(1)  # type: ignore[union-attr]
        for v in KINDS["pack"]
    }
    sh = lab.cli("show", "plans/b-05/PLAN.yml", "--config", str(lab.config), cwd=lab.repo)
    lab.show_out = (sh.returncode, sh.stdout + sh.stderr)  # type: ignore[attr-defined]
    # the user's gc after the burst
    lab.git("gc", "-q", "--prune=now")
    proc = __import__("subprocess").run(
        ["git", "fsck", "--connectivity-only"], cwd=lab.repo, env=lab.env(), capture_output=True
    )
    lab.gc_fsck = (proc.returncode, proc.stderr.decode(errors="replace")[-800:])  # type: ignore[attr-defined]
    # 3. one approval of all forty
    lab.git_date = "@1790000200 +0000"
    for v in [*U, *B]:
        lab.set_status(v, "approved")
    lab.commit("approve all forty", ALICE)
    lab.runs = [lab.run(check=False), lab.run(check=False)]  # type: ignore[attr-defined]
    lab.git_date = None
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r66-packstore", _build)


def test_the_prediction_hit(lab: Lab) -> None:
    """Bench check: the burst's blobs landed on planted names."""
    missed = [v for slugs in KINDS.values() for v in slugs if not lab.hit[v]]  # type: ignore[attr-defined]
    assert missed == [], missed


IDS = [f"{k}-{w}" for k in KINDS for w in ("said", "run")]
IDS += ["pack-status", "pack-show", "unwritable-fsck", "unwritable-run", "gc-fsck", "honest"]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_burst_pack_beside_planted_objects(lab: Lab, vid: str) -> None:
    kind, _, what = vid.partition("-")
    if kind in KINDS and what == "said":
        forged = [v for v in KINDS[kind] if "staging" in lab.shared_says[v]]  # type: ignore[attr-defined]
        said = lab.freeze_pass.stderr  # type: ignore[attr-defined]
        assert not forged or re.search(r"shared_store\.forged|E_GIT", said), forged
    elif kind in KINDS and what == "run":
        for v in KINDS[kind]:
            ran = lab.calls(v)
            assert len(ran) == 1 and f'"prod-DROP-{v}"' in ran[0]["stdin"], (v, ran)
            assert "staging" not in ran[0]["stdin"]
            assert lab.plan(v)["plan"]["status"] == "completed"
    elif vid == "pack-status":
        code, out, err = lab.status_out  # type: ignore[attr-defined]
        if "E_GIT" in out + err:
            return
        assert code in (0, 1), err[-800:]
        rows = {r["plan"]: r for r in json.loads(out)}
        for v in KINDS["pack"]:
            row = rows.get(f"plans/{v}", {})
            assert row.get("hash") == lab.real_hash[v], (v, row)  # type: ignore[attr-defined]
        assert "staging" not in out
    elif vid == "pack-show":
        code, out = lab.show_out  # type: ignore[attr-defined]
        assert "E_GIT" in out or ("prod-DROP-b-05" in out and "staging" not in out), out[-1500:]
    elif vid == "unwritable-fsck":
        assert lab.unwritable_pass.returncode == 0, lab.unwritable_pass.stderr[-800:]  # type: ignore[attr-defined]
        assert all(lab.u_frozen.values()), lab.u_frozen  # type: ignore[attr-defined]
        assert lab.unwritable_fsck_rc == 0, lab.unwritable_fsck  # type: ignore[attr-defined]
    elif vid == "unwritable-run":
        assert {v: len(lab.calls(v)) for v in U} == {v: 1 for v in U}
    elif vid == "gc-fsck":
        assert lab.gc_fsck[0] == 0, lab.gc_fsck  # type: ignore[attr-defined]
        for result in lab.runs:  # type: ignore[attr-defined]
            assert result.returncode == 0, result.stderr[-800:]
    elif vid == "honest":
        assert {v: len(lab.calls(v)) for v in HONEST} == {v: 1 for v in HONEST}
