"""Round 58, object store: a forged object behind new history of every size, so that both
of the store's paths are used: the in-process intake (a few commits) and the ``git fetch``
the intake falls back to past its bounds (commits, objects, sizes) (local mode).

Config: plain approvals (Alice, Bob). The agent adds ``r-<v>`` and ``h-<v>`` for every
variant; the controller freezes them all. Then, one variant after the other on one branch:
Alice rejects ``r-<v>`` (commit R); the agent commits the variant's history on top; Bob
approves ``r-<v>``; Alice approves ``h-<v>``; the agent writes a one-object pack naming R's
root tree for the bytes of R's parent's root tree (``git log`` shows R changing nothing: the
rejection is gone). One pass; then the operator removes the pack; one more pass.

- ``few``: one agent commit reopening ``r-few`` (3 new commits in all: the intake's path).
- ``many``: the reopen and 40 more agent commits (past 32 commits: the fetch).
- ``merge``: the reopen on a side branch of 40 commits, merged with ``--no-ff``.
- ``wide``: the reopen and one commit adding 3,000 files (past the intake's object bound).
- ``big``: the reopen and one commit adding a 12 MB incompressible blob (past its size bound).

Asserted: the forged pass stops loudly (exit non-zero, ``E_GIT`` naming the object store) and
runs nothing; after the repair ``h-<v>`` runs once and ``r-<v>`` never (Alice's rejection
holds).

Seen: every variant held.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text
from test_round2_execution_kit import shared
from test_round53_approve_packshadow import shadow

VIDS = ["few", "many", "merge", "wide", "big"]
BROKEN: dict[str, pytest.MarkDecorator] = {}


def _history(lab: Lab, vid: str) -> None:
    slug = f"r-{vid}"
    if vid == "merge":
        lab.git("checkout", "-q", "-b", "side")
    lab.set_status(slug, "pending_approval")
    lab.commit(f"agent reopens {slug}", AGENT)
    if vid in ("many", "merge"):
        for i in range(40):
            (lab.repo / "notes.txt").write_text(f"{vid} {i}\n")
            lab.commit(f"agent note {i}", AGENT)
    if vid == "merge":
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "--no-ff", "-m", "agent merges side", "side", who=AGENT)
        lab.git("branch", "-q", "-D", "side")
    if vid == "wide":
        folder = lab.repo / "wide"
        folder.mkdir()
        for i in range(3000):
            (folder / f"f{i}.txt").write_text(f"{i}\n")
        lab.commit("agent adds many files", AGENT)
    if vid == "big":
        (lab.repo / "big.bin").write_bytes(os.urandom(12 * 1024 * 1024))
        lab.commit("agent adds a big file", AGENT)


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
        _history(lab, vid)
        lab.approve(f"r-{vid}", BOB)
        lab.approve(f"h-{vid}", ALICE)
        pack = shadow(lab, lab.head(f"{rejection}^{{tree}}"), lab.head(f"{before}^{{tree}}"))
        forged = lab.run(check=False)
        calls = {s: len(lab.calls(f"{s}-{vid}")) for s in ("r", "h")}
        for path in pack:
            path.unlink()
        repaired = lab.run(check=False)
        lab.results[vid] = {  # type: ignore[attr-defined]
            "forged": (forged.returncode, forged.stderr[-2000:]),
            "repaired": (repaired.returncode, repaired.stderr[-2000:]),
            "calls_forged": calls,
            "calls": {s: len(lab.calls(f"{s}-{vid}")) for s in ("r", "h")},
        }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-bounds", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_a_forgery_behind_history_of_any_size(lab: Lab, vid: str) -> None:
    got = lab.results[vid]  # type: ignore[attr-defined]
    (rc1, err1), (rc2, err2) = got["forged"], got["repaired"]
    assert "Traceback" not in err1 + err2
    assert rc1 != 0 and "E_GIT" in err1 and "object store" in err1, got
    assert got["calls_forged"] == {"r": 0, "h": 0}, got
    assert rc2 == 0, got
    assert got["calls"] == {"r": 0, "h": 1}, got
