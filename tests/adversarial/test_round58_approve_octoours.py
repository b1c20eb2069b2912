"""Round 58, a rejection buried in an octopus ``-s ours`` merge (its branch the third or fourth
parent): round 24 closed a withdrawal on a branch merged ``-s ours`` (the audit was blind to
it), round 8 one behind a merge's second parent. ``git merge -s ours A B`` makes an octopus
whose tree is the first parent's.

Config: the bench's. The agent commits ``plans/<v>``; a pass freezes it. Bob (an approver)
rejects it on branch ``<v>-rej`` (``status: rejected``, with ``-m``). Owner commits a note on
``<v>-d1`` (and ``<v>-d2``). The agent merges, on main, ``--no-ff -s ours``:

- ``rej-third``: ``git merge -s ours <v>-d1 <v>-rej`` (the rejection is parent 3).
- ``rej-fourth``: ``git merge -s ours <v>-d1 <v>-d2 <v>-rej`` (parent 4).
- ``rej-second`` (control): ``git merge -s ours <v>-rej <v>-d1`` (parent 2).

A pass; Alice approves each on main; two passes; ``plangate audit --json``.

Asserted (the defence): the rejected version never runs on Alice's later approval, the audit
lists no valid run.

Seen: all held: each plan's effective status is ``rejected`` (the rejection found through
parent 3 or 4 of the ``-s ours`` octopus as through parent 2), Alice's later approval is
``E_ILLEGAL_TRANSITION``, nothing ran, no valid run in the audit.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text, valid_runs
from test_round2_execution_kit import shared

OWNER = ("Owner", "owner@example.com")
VIDS = ["rej-third", "rej-fourth", "rej-second"]
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in VIDS:
        lab.write(v, plan_text(v))
    lab.commit("agent proposes", AGENT)
    lab.run()
    base = lab.head()
    time.sleep(1.05)
    for v in VIDS:
        lab.git("checkout", "-q", "-b", f"{v}-rej", base)
        lab.set_status(v, "rejected")
        lab.commit(f"bob rejects {v}: not this way", BOB)
        for d in ["d1", "d2"]:
            lab.git("checkout", "-q", "-b", f"{v}-{d}", base)
            (lab.repo / f"{v}-{d}.txt").write_text(d + "\n")
            lab.commit(f"owner notes {v} {d}", OWNER)
        lab.git("checkout", "-q", "main")
    order = {
        "rej-third": ["d1", "rej"],
        "rej-fourth": ["d1", "d2", "rej"],
        "rej-second": ["rej", "d1"],
    }
    for v, parts in order.items():
        lab.git(
            "merge",
            "-q",
            "--no-ff",
            "--no-edit",
            "-s",
            "ours",
            *[f"{v}-{p}" for p in parts],
            who=AGENT,
        )
    lab.parents = lab.git("log", "--first-parent", "--format=%s|%P", "-3")  # type: ignore[attr-defined]
    lab.run()
    time.sleep(1.05)
    for v in VIDS:
        lab.set_status(v, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-octoours", _build)


def test_the_merges_are_octopus(lab: Lab) -> None:
    rows = [r.split("|") for r in lab.parents.strip().splitlines()]  # type: ignore[attr-defined]
    assert sorted(len(p.split()) for _s, p in rows) == [3, 3, 4], rows


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_the_rejection_holds(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]
