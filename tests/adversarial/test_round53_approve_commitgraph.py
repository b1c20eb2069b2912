"""Round 53, approval side: a forged commit-graph file in the shared ``.git`` (local mode).

docs/threat-model.md ("The shared `.git`"): in local mode the agent writes ``.git`` too, and
"one mechanism answers the whole class": every git child runs with replace objects off and an
empty graft file, "history as the branch holds it". git has a third way to show a history the
objects do not hold: the commit-graph file ``.git/objects/info/commit-graph`` (on by default,
``core.commitGraph``). git takes a commit's **root tree and parents** from it, without reading
the commit object, in ``git log``, ``rev-list`` and ``diff-tree`` of a single commit, and its
changed-path Bloom filters decide which commits a path-limited ``git log`` skips. git checks
neither the file's checksum nor its entries against the objects when it reads them (``git
commit-graph verify`` does: "root tree OID for commit ... in commit-graph is X != Y"). The
commit objects stay untouched, so a signature over them still verifies.

Config: ``require_signed: true``, ``allowed_signers`` with Alice's and Bob's SSH keys (the
deployment the docs recommend: a forged name alone approves nothing); one approval.

The agent (no approver, no key) wrote every plan; the controller froze them. Then, before the
controller's next pass:

- ``swap-hand``: Alice approves ``swap-hand-a`` (edits the status line, ``git commit -S``).
  The agent commits ``swap-hand-a`` back to ``pending_approval`` and ``swap-hand-b`` to
  ``approved``, writes a commit-graph (``git commit-graph write --reachable``) and patches
  Alice's commit's root tree in it to the tree of its own commit (``b`` approved, ``a`` not).
- ``swap-cli``: the same over Alice's ``plangate approve --sign plans/swap-cli-a`` (its
  ``Plan:``/``Plan-Hash:`` trailers name ``a``).
- ``swap-merge``: Alice merges (``git merge -S --no-ff``) a review branch that approves
  ``swap-merge-a``; the graph gives her merge the tree with ``swap-merge-b`` approved instead.
- ``hide-tree``: Alice (an approver) rejects ``hide-tree`` (signed); the agent sets it back to
  ``pending_approval``; Bob approves it (signed); the graph gives Alice's rejection its
  parent's tree (it changes nothing).
- ``hide-parent``: the same rejection skipped by parents: the agent's commit's parent in the
  graph is the rejection's parent.
- ``hide-bloom``: the same rejection hidden by its Bloom filter alone (``--changed-paths``;
  the filter's bits zeroed: "touches no path"), no tree or parent changed.
- ``honest``: Alice's signed approval, nothing forged (control: runs once).

Asserted: ``rec`` never ran for the plan Alice did not approve (``swap-*-b``) or that she
rejected (``hide-*``); ``plangate audit --json`` in a clone made the ordinary way (``git clone
<path>``) lists no valid run of them; a clone that reads no commit-graph
(``core.commitGraph=false``) agrees.

Seen (strict xfails in BROKEN): ``swap-hand`` and ``swap-merge``: the controller took Alice's
signed approval of ``a`` as her approval of ``b`` ("approval request (approve) by
alice@example.com" on the commit that approved ``a``) and ran ``b``; ``hide-tree``,
``hide-parent`` and ``hide-bloom``: Alice's signed rejection never happened for the
controller and Bob's approval ran the plan (``approval.by: bob``, ``completed``). The
ordinary clone (``git clone <path>`` copies ``objects/info`` with the objects) inherits the
forged file, and its audit calls the runs of ``swap-hand-b``, ``swap-merge-b``, ``hide-tree``
and ``hide-parent`` valid (it agrees with the controller's wrong verdict); it flags
``hide-bloom`` (``start-without-approval``, the reopening and Bob's approval
``E_ILLEGAL_TRANSITION``): the audit is not misled by Bloom filters, the controller is. A clone
reading no commit-graph flags all five. (A ``file://`` clone of the forged repository fails:
``upload-pack`` walks the forged trees and never sends the real one.) Held: ``swap-cli`` (the
trailers of ``plangate approve --sign`` bind ``a``: ``E_APPROVAL_REPLAYED``, "names
plans/swap-cli-a as what it approves"), ``honest``.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, identity, plan_text, valid_runs
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen, _sign_args

SWAPS = ["swap-hand", "swap-cli", "swap-merge"]
HIDES = ["hide-tree", "hide-parent", "hide-bloom"]
VIDS = SWAPS + HIDES


def _broke(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 53: {what}")


_SWAP = (
    "a commit-graph the agent wrote gives Alice's signed approval of plan a the tree that "
    "approves plan b: the controller runs b on her signature, and a `git clone <path>` "
    "(which copies the graph) audits it valid"
)
_HIDE = (
    "a commit-graph the agent wrote hides Alice's signed rejection (its tree or its place "
    "among the parents): Bob's later approval runs the rejected plan"
)
BROKEN: dict[str, pytest.MarkDecorator] = {}
AUDIT_BROKEN: dict[str, pytest.MarkDecorator] = {}


# -- the commit-graph file (git's Documentation/gitformat-commit-graph.txt) --------------------
def _chunks(data: bytes) -> dict[bytes, int]:
    count = data[6]
    found = {}
    for i in range(count + 1):
        cid, off = struct.unpack(">4sQ", data[8 + 12 * i : 20 + 12 * i])
        found[cid] = off
    return found


def _oids(data: bytes) -> list[str]:
    ch = _chunks(data)
    n = struct.unpack(">I", data[ch[b"OIDF"] + 255 * 4 : ch[b"OIDF"] + 256 * 4])[0]
    return [data[ch[b"OIDL"] + 20 * i : ch[b"OIDL"] + 20 * i + 20].hex() for i in range(n)]


def graph_path(lab: Lab) -> Path:
    return lab.repo / ".git" / "objects" / "info" / "commit-graph"


def write_graph(lab: Lab, bloom: bool = False) -> None:
    lab.git("commit-graph", "write", "--reachable", *(["--changed-paths"] if bloom else []))


def patch_graph(
    lab: Lab,
    commit: str,
    tree: str | None = None,
    parent: str | None = None,
    zero_bloom: bool = False,
) -> None:
    """Rewrite ``commit``'s entry: its root tree, its first parent, or its Bloom filter."""
    path = graph_path(lab)
    data = bytearray(path.read_bytes())
    ch = _chunks(bytes(data))
    oids = _oids(bytes(data))
    pos = oids.index(commit)
    entry = ch[b"CDAT"] + 36 * pos
    if tree:
        data[entry : entry + 20] = bytes.fromhex(tree)
    if parent:
        data[entry + 20 : entry + 24] = struct.pack(">I", oids.index(parent))
    if zero_bloom:
        bidx, bdat = ch[b"BIDX"], ch[b"BDAT"]
        end = struct.unpack(">I", data[bidx + 4 * pos : bidx + 4 * pos + 4])[0]
        start = struct.unpack(">I", data[bidx + 4 * pos - 4 : bidx + 4 * pos])[0] if pos else 0
        for i in range(bdat + 12 + start, bdat + 12 + end):
            data[i] = 0
    os.chmod(path, 0o644)
    path.write_bytes(bytes(data))


# -- the lab ---------------------------------------------------------------------------------
def _signed(lab: Lab, who: tuple[str, str], key: str, message: str) -> str:
    lab.git("add", "-A")
    lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "-m", message, who=who)
    return lab.head()


def _cli_approve(lab: Lab, slug: str) -> str:
    env = lab.env()
    env.update(
        identity(ALICE),
        GIT_CONFIG_COUNT="2",
        GIT_CONFIG_KEY_0="gpg.format",
        GIT_CONFIG_VALUE_0="ssh",
        GIT_CONFIG_KEY_1="user.signingKey",
        GIT_CONFIG_VALUE_1=str(lab.root / "keys" / "alice"),
    )
    out = subprocess.run(
        [sys.executable, "-m", "controller", "approve", "--sign", f"plans/{slug}"],
        cwd=lab.repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        from advkit import BenchError

        raise BenchError(f"approve --sign failed: {out.stdout} {out.stderr}")
    return lab.head()


def _clone_audit(lab: Lab, name: str, *clone_args: str, drop_graph: bool = False) -> dict:
    dst = lab.root / name
    env = lab.env()
    result = subprocess.run(
        ["git", *clone_args, "clone", "-q", str(lab.repo), str(dst)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        return {"clone_failed": result.stderr[-500:], "executions": []}
    if drop_graph:  # the history as the objects hold it (the clone's own link only)
        (dst / ".git" / "objects" / "info" / "commit-graph").unlink(missing_ok=True)
    out = lab.cli("audit", "--json", cwd=dst)
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    return json.loads(out.stdout)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {name: _keygen(keys / name) for name in ("alice", "bob")}
    signers = root / "allowed_signers"
    signers.write_text(f"alice@example.com {pubs['alice']}\nbob@ops.example.com {pubs['bob']}\n")
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for vid in SWAPS:
        lab.write(f"{vid}-a", plan_text(f"{vid}-a"))
        lab.write(f"{vid}-b", plan_text(f"{vid}-b"))
    for vid in [*HIDES, "honest"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.1)  # approvals are written after the freeze (whole-second dates)
    patches: list[dict] = []

    # swap-hand: Alice's hand-made signed approval of a
    lab.set_status("swap-hand-a", "approved")
    approval = _signed(lab, ALICE, "alice", "approve swap-hand-a")
    lab.set_status("swap-hand-a", "pending_approval")
    lab.set_status("swap-hand-b", "approved")
    lab.commit("agent tidies swap-hand", AGENT)
    patches.append({"commit": approval, "tree": lab.git("rev-parse", "HEAD^{tree}").strip()})

    # swap-cli: plangate approve --sign
    approval = _cli_approve(lab, "swap-cli-a")
    lab.set_status("swap-cli-a", "pending_approval")
    lab.set_status("swap-cli-b", "approved")
    lab.commit("agent tidies swap-cli", AGENT)
    patches.append({"commit": approval, "tree": lab.git("rev-parse", "HEAD^{tree}").strip()})

    # swap-merge: Alice's signed merge of a review branch approving a
    lab.git("checkout", "-q", "-b", "review")
    lab.set_status("swap-merge-a", "approved")
    lab.commit("approve swap-merge-a", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git(
        *_sign_args(lab, "alice"),
        "merge",
        "-q",
        "-S",
        "--no-ff",
        "-m",
        "merge review",
        "review",
        who=ALICE,
    )
    merge = lab.head()
    lab.set_status("swap-merge-a", "pending_approval")
    lab.set_status("swap-merge-b", "approved")
    lab.commit("agent tidies swap-merge", AGENT)
    patches.append({"commit": merge, "tree": lab.git("rev-parse", "HEAD^{tree}").strip()})

    # hide-*: Alice's signed rejection, the agent's undo, Bob's signed approval
    for vid in HIDES:
        before = lab.head()
        lab.set_status(vid, "rejected")
        reject = _signed(lab, ALICE, "alice", f"reject {vid}")
        lab.set_status(vid, "pending_approval")
        undo = lab.commit(f"agent reopens {vid}", AGENT)
        if vid == "hide-tree":
            patches.append(
                {"commit": reject, "tree": lab.git("rev-parse", f"{before}^{{tree}}").strip()}
            )
        elif vid == "hide-parent":
            patches.append({"commit": undo, "parent": before})
        else:
            patches.append({"commit": reject, "zero_bloom": True})
    for vid in HIDES:
        lab.set_status(vid, "approved")
    _signed(lab, BOB, "bob", "approve the hide plans")
    lab.set_status("honest", "approved")
    _signed(lab, ALICE, "alice", "approve honest")

    write_graph(lab, bloom=True)
    for p in patches:
        patch_graph(lab, **p)
    lab.graph_log = lab.git("log", "--format=%h %an %s", "--stat", "-25")  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    lab.local_audit = _clone_audit(lab, "fresh-local")  # type: ignore[attr-defined]
    lab.nograph_audit = _clone_audit(  # type: ignore[attr-defined]
        lab, "fresh-nograph", drop_graph=True
    )
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r53-commitgraph", _build)


def _target(vid: str) -> str:
    return f"{vid}-b" if vid in SWAPS else vid


def _valid_runs(report: dict, slug: str) -> list[dict]:  # type: ignore[type-arg]
    return valid_runs(report, slug)


def test_honest_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("honest")) == 1, lab.codes("honest")


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_the_forged_graph_runs_nothing(lab: Lab, vid: str) -> None:
    slug = _target(vid)
    assert lab.calls(slug) == [], (lab.codes(slug), lab.graph_log)  # type: ignore[attr-defined]
    assert not lab.started(slug), lab.subjects(slug)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, AUDIT_BROKEN))
def test_an_ordinary_clone_audit_lists_no_valid_run(lab: Lab, vid: str) -> None:
    runs = _valid_runs(lab.local_audit, _target(vid))  # type: ignore[attr-defined]
    assert runs == [], runs


@pytest.mark.parametrize("vid", VIDS)
def test_a_clone_reading_no_graph_lists_no_valid_run(lab: Lab, vid: str) -> None:
    report = lab.nograph_audit  # type: ignore[attr-defined]
    assert "clone_failed" not in report, report
    assert _valid_runs(report, _target(vid)) == []
