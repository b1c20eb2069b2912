"""Round 43, ``plangate reject --config`` (which "first say[s] what the controller would
say": a rejection by someone neither an approver nor an author is one the controller would
ignore) versus rounds 34/35's producers: a move makes nothing.

The agent writes ``plans/<vid>-src``; the controller freezes it; Mallory (no approver) ``git
mv``s it to ``plans/<vid>``; the controller passes. Then, in a clone of main:

- ``carrier``: Mallory runs ``plangate reject --config`` (she only moved it: the controller
  ignores her rejection). Defence: nothing committed. Then on main she commits the rejection
  anyway and Alice approves: the plan runs once.
- ``producer``: the agent (its producer) runs ``plangate reject --config``. Defence: the
  rejection is committed (the controller honours it). Then on main the agent rejects and
  Alice approves: nothing runs.
- ``cp-author`` / ``cp-copier``: Mallory COPIES the agent's plan (``<vid>-src`` stays) to
  ``plans/<vid>``: the copy is a further making, so neither the agent nor Mallory produced
  it alone and neither may withdraw it (docs/approvals.md, round 35); the agent /
  Mallory runs ``reject --config`` on the copy. Defence: nothing committed; their rejection
  committed anyway is ignored and Alice's approval runs the copy once.

Seen: the controller held (Mallory's rejection ignored, the plan ran once on Alice's
approval; the producer's rejection stood, nothing ran), and ``reject --config`` committed
the producer's rejection. BROKE (strict xfail): ``reject-carrier``: ``plangate reject
plans/carrier --config`` run as Mallory, who only ``git mv``'d the plan, printed ``rejected
plans/carrier in <commit> on main`` and committed, where the controller ignores that
rejection (the plan then ran once on Alice's approval): the CLI counts a mover as an
author. ``reject-cp-author`` and ``reject-cp-copier`` likewise: ``reject --config`` on the
copy, run as the agent (author of the source) or as Mallory (the copier), committed the
rejection, while the controller ignored both (the copy ran once on Alice's approval).
Fixed (round 43): ``plangate check``, ``approve``, ``reject`` and ``abort --config`` read the
history through one builder (``controller.commands._shared.read_history`` over
``controller.git.history.config_index``), the index the controller builds: the whole
first-parent history with the merged branches (the path-limited fast path of ``check`` is
gone). ``reject`` and ``abort --config`` count as authors the producers of the version
at stake (``Lifecycle.withdrawers``), whom the controller's withdraw rule asks: a mover or a
copier produced nothing. The 3 ids pass.

Changed (2026-12-06, round 119 fix122w; first tried as fix119w, reverted): ``author-
withdrawal-lost-to-another-copy``. Who may withdraw as an author reads the content's
ORIGINATORS (the people in every commit that made it afresh): the agent originated the
content Mallory copied, so its rejection of its own plan after her copy counts (``cp-
author``: the controller honours it, ``reject --config`` commits it, nothing runs), while
Mallory, the copier, still withdraws nothing (``cp-copier``). The two ``cp-author`` ids
asserted the fail-open round 119 found, against SPEC §4 (an author of the plan may withdraw
it).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, identity, plan_text
from test_round2_execution_kit import shared

WHO = {"carrier": MALLORY, "producer": AGENT, "cp-author": AGENT, "cp-copier": MALLORY}
COPIED = ["cp-author", "cp-copier"]
#: whose rejection counts: the producer's, and since round 119 the author's of the copied
#: content too (``cp-author``: the agent originated it; Mallory's copy removes nobody)
HONOURED = ["producer", "cp-author"]
#: what round 43 broke (strict xfails; the docstring's "Seen")
FOUND: dict[str, pytest.MarkDecorator] = {}  # all 3 fixed (see "Fixed")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in WHO:
        lab.write(f"{vid}-src", plan_text(vid))
    lab.commit("agent's plans", AGENT)
    lab.run()
    for vid in ["carrier", "producer"]:
        lab.git("mv", f"plans/{vid}-src", f"plans/{vid}")
    for vid in COPIED:
        shutil.copytree(lab.repo / f"plans/{vid}-src", lab.repo / f"plans/{vid}")
    lab.commit("mallory moves two and copies two", MALLORY)
    lab.run()
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid, who in WHO.items():
        lab.extra_env = identity(who)  # type: ignore[attr-defined]
        before = lab.git("-C", str(chk), "rev-parse", "HEAD").strip()
        out = lab.cli("reject", f"plans/{vid}", "-m", "no", "--config", str(lab.config), cwd=chk)
        after = lab.git("-C", str(chk), "rev-parse", "HEAD").strip()
        report[vid] = {"committed": before != after, "text": (out.stdout + out.stderr)[-1500:]}
        if before != after:
            lab.git("-C", str(chk), "reset", "-q", "--hard", before)
    lab.extra_env = {}  # type: ignore[attr-defined]
    lab.reject_report = report  # type: ignore[attr-defined]
    shutil.rmtree(chk, ignore_errors=True)
    for vid, who in WHO.items():
        lab.set_status(vid, "rejected")
        lab.commit(f"reject {vid}", who)
    lab.run()
    time.sleep(1.05)
    for vid in WHO:
        lab.set_status(vid, "pending_approval")
        lab.commit(f"agent resubmits {vid}", AGENT)
        lab.approve(vid, ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r43-rejectcarry", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


@pytest.mark.parametrize("vid", _p(list(WHO)))
def test_the_controller_honours_only_the_producer(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == (0 if vid in HONOURED else 1), lab.codes(vid)


@pytest.mark.parametrize("vid", _p(list(WHO), "reject-"))
def test_reject_config_says_what_the_controller_does(lab: Lab, vid: str) -> None:
    row = lab.reject_report[vid]  # type: ignore[attr-defined]
    assert row["committed"] == (vid in HONOURED), row
