"""Round 51, who may withdraw: a non-approver who copies an approver's waiting plan out of
the plan paths and carries the exact bytes back to a new folder, then rejects that copy.

docs/approvals.md: "a non-approver who only moved, copied, restored or raced someone's plan
cannot withdraw it, at its old path or its new one, nor veto its version" (rounds 34-35).

Config: the bench's. Alice (an allowed approver) commits ``plans/w/<vid>/PLAN.yml``
(``pending_approval``); the controller freezes it. Then the agent (not an approver):

- ``direct-cp`` (control, rounds 34-35): copies it to ``plans/w/<vid>2`` in one commit;
- ``park-cp``: copies it to ``drafts/<vid>/PLAN.yml``, then ``git mv``s that to
  ``plans/w/<vid>2/PLAN.yml`` (exact bytes, git pairs a rename ``R100``);
- ``park-notes``: copies it to ``plans/w/<vid>/notes.txt``, then ``git mv``s that to
  ``plans/w/<vid>2/PLAN.yml``.

The controller freezes ``<vid>2`` (the same hash); the agent sets ``<vid>2`` ``rejected``;
a pass; then Bob approves Alice's ``plans/w/<vid>``; two passes.

Asserted (the defence): the agent's rejection vetoes nothing: Alice's plan runs once on
Bob's approval (no ``E_VERSION_WITHDRAWN``).

Seen: all held (each of Alice's plans ran once on Bob's approval).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

VIA = {"direct-cp": None, "park-cp": "drafts/park-cp/PLAN.yml", "park-notes": "notes.txt"}
CASES = list(VIA)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in CASES:
        lab.write(f"w/{vid}", plan_text(vid))
    lab.commit("alice writes her plans", ALICE)
    lab.run()
    for vid, via in VIA.items():
        src, dst = f"plans/w/{vid}/PLAN.yml", f"plans/w/{vid}2/PLAN.yml"
        (lab.repo / dst).parent.mkdir(parents=True, exist_ok=True)
        if via is None:
            shutil.copyfile(lab.repo / src, lab.repo / dst)
        else:
            park = via if "/" in via else f"plans/w/{vid}/{via}"
            (lab.repo / park).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(lab.repo / src, lab.repo / park)
            lab.commit(f"agent parks {vid}", AGENT)
            lab.git("mv", park, dst)
        lab.commit(f"agent carries {vid}", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in CASES:
        lab.set_status(f"w/{vid}2", "rejected")
    lab.commit("agent rejects the copies", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in CASES:
        lab.set_status(f"w/{vid}", "approved")
    lab.commit("bob approves alice's plans", BOB)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r51-copyveto", _build)


def _p(vids: list[str]) -> list[object]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(CASES))
def test_a_copier_vetoes_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(f"w/{vid}")
    assert "E_VERSION_WITHDRAWN" not in lab.codes(f"w/{vid}"), lab.codes(f"w/{vid}")
