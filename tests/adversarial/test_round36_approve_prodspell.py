"""Round 36, who may reject: round 35's producers rule (the people in *every* commit that made
a content) compared across identity spellings.

Config: the bench's (approvers Alice and ``*@ops.example.com``; one approval). The agent adds
``plans/<vid>``; the controller freezes it. Then a byte copy of the folder lands at
``plans/lib/<vid>-m``:

- ``co-spelled``: committed by Mallory with ``Co-authored-by: Agent <AGENT@Example.com>``;
- ``co-nfkc``: committed by Mallory with ``co-authored-by: Agent <ａgent@example.com>``
  (fullwidth ``a``, lower-case key);
- ``self-copy-spelled``: committed by the agent as ``AGENT@Example.COM``;
- ``ctl``: no copy.

The agent (in every making commit, however spelled) rejects ``plans/<vid>``; Alice approves.

Asserted: the agent's rejection counts (the intersection compares mailboxes, not spellings):
``rec`` never runs, and the fresh-clone audit lists the rejection under ``decisions``.

Results: every variant held.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["co-spelled", "co-nfkc", "self-copy-spelled", "ctl"]
COPIES = {
    "co-spelled": ("mallory copies\n\nCo-authored-by: Agent <AGENT@Example.com>", MALLORY),
    "co-nfkc": ("mallory copies\n\nco-authored-by: Agent <\uff41gent@example.com>", MALLORY),
    "self-copy-spelled": ("agent copies", ("Agent", "AGENT@Example.COM")),
}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for vid, (message, who) in COPIES.items():
        shutil.copytree(lab.repo / "plans" / vid, lab.repo / "plans/lib" / f"{vid}-m")
        lab.commit(message, who)
    lab.run()
    time.sleep(1.05)
    for vid in VIDS:
        lab.set_status(vid, "rejected")
    lab.commit("agent rejects its plans", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.audit_out = lab.audit()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r36-prodspell", _build)


@pytest.mark.parametrize("vid", VIDS)
def test_the_authors_rejection_counts(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 0, lab.codes(vid)
    assert not lab.started(vid), lab.subjects(vid)
    _, report = lab.audit_out
    kinds = [d["kind"] for d in report.get("decisions", []) if d["plan"] == f"plans/{vid}"]
    assert kinds == ["reject"], report.get("decisions")
