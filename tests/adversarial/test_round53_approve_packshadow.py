"""Round 53, approval side: an object shadowed by a pack the agent writes into the shared
``.git/objects/pack`` (local mode), the loose object left as it was.

git looks an object up in its packs before its loose objects, and a pack's ``.idx`` says
which name each entry has; nothing but ``index-pack``, ``fsck`` or a full ``parse_object``
(``git ls-tree``/``show`` say "hash mismatch") checks that the entry hashes to that name.
``git log`` and ``diff-tree`` read trees without that check. So a one-object pack whose index
names Alice's commit's root tree, holding other tree bytes, changes what her signed commit
holds for ``git log`` while the loose object (and the signature over the commit) are intact:
a fix that rehashes loose objects, or that ignores the commit-graph
(``test_round53_approve_commitgraph.py``), does not see it.

Config: ``require_signed: true``, Alice's and Bob's SSH keys. The agent wrote and the
controller froze the plans; then, before the controller's pass:

- ``tree``: Alice approves ``tree-a`` by hand (``git commit -S``); the agent sets ``tree-a``
  back and ``tree-b`` approved, and writes a pack naming Alice's root tree for its own
  commit's root-tree bytes.
- ``subtree``: the same through the ``plans`` subtree of Alice's commit.
- ``reject``: Alice's signed rejection of ``reject``; the agent reopens it; Bob approves
  (signed); the pack names the rejection's root tree for its parent's root-tree bytes.
- ``honest``: control.

Asserted: ``rec`` never runs for ``tree-b``, ``subtree-b``, ``reject``.

Seen: all three broke (strict xfails): the plan Alice did not approve ran on her signed
approval of another, and Bob's approval ran the plan she had rejected.

Fixed (2026-11-29): the controller reads objects only from its own store, filled by ``git
fetch`` from the repository (``controller/git/store.py``); ``index-pack`` names what arrives
by its bytes, so the shadowed tree never arrives under Alice's tree's name and the fetch
fails: ``E_GIT``, nothing runs (asserted). Once the packs are removed, her signed commits
hold what she signed: ``honest`` runs once, the others never.
"""

from __future__ import annotations

import hashlib
import struct
import time
import zlib
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen
from test_round53_approve_commitgraph import _signed
from test_round53_approve_looseobject import _git_bytes

VIDS = ["tree", "subtree", "reject"]
BROKEN: dict[str, pytest.MarkDecorator] = {}
SLUGS = ["tree-a", "tree-b", "subtree-a", "subtree-b", "reject", "honest"]


def shadow(lab: Lab, name: str, with_object: str) -> list[Path]:
    """Write a one-object pack whose index names ``name`` for the bytes of ``with_object``;
    returns its files."""
    kind = lab.git("cat-file", "-t", with_object).strip()
    body = _git_bytes(lab, "cat-file", kind, with_object)
    size = len(body)
    first = ({"commit": 1, "tree": 2, "blob": 3}[kind] << 4) | (size & 15)
    size >>= 4
    head = bytearray()
    while size:
        head.append(first | 0x80)
        first, size = size & 0x7F, size >> 7
    head.append(first)
    entry = bytes(head) + zlib.compress(body)
    pack = b"PACK" + struct.pack(">II", 2, 1) + entry
    pack += hashlib.sha1(pack).digest()
    oid = bytes.fromhex(name)
    fanout = b"".join(struct.pack(">I", 1 if i >= oid[0] else 0) for i in range(256))
    idx = b"\xfftOc" + struct.pack(">I", 2) + fanout + oid
    idx += struct.pack(">II", zlib.crc32(entry) & 0xFFFFFFFF, 12) + pack[-20:]
    idx += hashlib.sha1(idx).digest()
    folder = lab.repo / ".git" / "objects" / "pack"
    folder.mkdir(exist_ok=True)
    stem = f"pack-{hashlib.sha1(pack).hexdigest()}"
    (folder / f"{stem}.pack").write_bytes(pack)
    (folder / f"{stem}.idx").write_bytes(idx)
    return [folder / f"{stem}.pack", folder / f"{stem}.idx"]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {name: _keygen(keys / name) for name in ("alice", "bob")}
    signers = root / "allowed_signers"
    signers.write_text(f"alice@example.com {pubs['alice']}\nbob@ops.example.com {pubs['bob']}\n")
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for slug in ("tree-a", "tree-b", "subtree-a", "subtree-b", "reject", "honest"):
        lab.write(slug, plan_text(slug))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    time.sleep(1.1)
    jobs = []
    for vid in ("tree", "subtree"):
        lab.set_status(f"{vid}-a", "approved")
        approval = _signed(lab, ALICE, "alice", f"approve {vid}-a")
        lab.set_status(f"{vid}-a", "pending_approval")
        lab.set_status(f"{vid}-b", "approved")
        mine = lab.commit(f"agent tidies {vid}", AGENT)
        where = "^{tree}" if vid == "tree" else ":plans"
        jobs.append((lab.head(approval + where), lab.head(mine + where)))
    before = lab.head()
    lab.set_status("reject", "rejected")
    reject = _signed(lab, ALICE, "alice", "reject reject")
    lab.set_status("reject", "pending_approval")
    lab.commit("agent reopens reject", AGENT)
    jobs.append((lab.head(f"{reject}^{{tree}}"), lab.head(f"{before}^{{tree}}")))
    lab.set_status("reject", "approved")
    _signed(lab, BOB, "bob", "approve reject")
    lab.set_status("honest", "approved")
    _signed(lab, ALICE, "alice", "approve honest")
    written = [path for name, other in jobs for path in shadow(lab, name, other)]
    lab.forged = lab.run(check=False)  # type: ignore[attr-defined]
    lab.forged_calls = {s: len(lab.calls(s)) for s in SLUGS}  # type: ignore[attr-defined]
    for path in written:  # the operator removes the packs git fsck names
        path.unlink()
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r53-packshadow", _build)


def test_the_forged_store_stops_the_controller_loudly(lab: Lab) -> None:
    forged = lab.forged  # type: ignore[attr-defined]
    assert forged.returncode != 0, forged.stderr[-2000:]
    assert "E_GIT" in forged.stderr and "object store" in forged.stderr, forged.stderr[-2000:]
    assert "Traceback" not in forged.stderr
    assert not any(lab.forged_calls.values()), lab.forged_calls  # type: ignore[attr-defined]


def test_honest_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("honest")) == 1, lab.codes("honest")


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_a_shadowing_pack_runs_nothing(lab: Lab, vid: str) -> None:
    slug = f"{vid}-b" if vid != "reject" else "reject"
    assert lab.calls(slug) == [], lab.codes(slug)
