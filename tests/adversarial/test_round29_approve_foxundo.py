"""Round 29, quorum: a collected vote voided by an edit on main, and the edit undone, then an
approver's "foxtrot" merge (``git pull`` on a stale local main, fast-forwarded) that puts the
edit and its undo on the second parent.

Config: two approvals per plan. The agent writes ``u`` and ``ctl``; the controller freezes
them; Alice approves both: the controller commits ``partial`` (her vote); ``stale`` = main's
tip. The agent edits ``u`` (v2: the controller freezes it anew, Alice's vote is void) and then
undoes the edit (v1 again: the controller freezes it again). Bob (ops), on a local main at
``stale`` (v1 with Alice's vote), sets ``u`` ``approved``, pulls (``git merge main``) and main
fast-forwards to his merge. Bob approves ``ctl`` on main. The controller passes.

Asserted: a vote voided by an edit stays void (round 21's rule, whatever the merge shape):
``u`` does not run on Bob's approval alone; ``ctl`` (Alice's vote never voided) runs once.

Results: held (``u``: ``partial`` with Bob's vote only, "1 more approval"; ``ctl`` ran once).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

RULES = """\
rules:
  - match: {paths: ["plans/**"]}
    require: [{count: 2}]
"""


def _swap(lab: Lab, old: str, new: str) -> None:
    path = lab.repo / "plans" / "u" / "PLAN.yml"
    path.write_text(path.read_text().replace(old, new))
    lab.commit(f"agent edits u ({new})", AGENT)


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    lab.write("u", plan_text("fu-u"))
    lab.write("ctl", plan_text("fu-ctl"))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.approve("u", ALICE)
    lab.approve("ctl", ALICE)
    lab.run()  # partial
    stale = lab.head()
    _swap(lab, "record that variant", "record (v2) that variant")
    lab.run()  # refreeze v2
    _swap(lab, "record (v2) that variant", "record that variant")
    lab.run()  # refreeze v1
    time.sleep(1.05)
    lab.git("checkout", "-q", "-b", "fx", stale)
    lab.approve("u", BOB)
    lab.git("merge", "--no-ff", "-q", "-m", "Merge branch 'main'", "main", who=BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--ff-only", "-q", "fx")
    lab.approve("ctl", BOB)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r29-foxundo", _build)


FOUND: dict[str, pytest.MarkDecorator] = {}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(["u", "ctl"]))
def test_a_voided_vote_stays_void(lab: Lab, vid: str) -> None:
    want = 1 if vid == "ctl" else 0
    assert len(lab.calls(f"fu-{vid}")) == want, lab.codes(vid)
