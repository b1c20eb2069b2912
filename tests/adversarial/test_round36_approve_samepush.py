"""Round 36, who may reject: an author's rejection made while she was the version's only
producer, followed *in the same push* by a copy of that version reaching the branch.

docs/approvals.md (round 35): a content's producers are the people in every commit that made
it; "the intersection does not depend on the order in which the commits reach the branch, so
a cold scan ..., a live controller and the fresh-clone audit agree". The round 35 accepted
limit (``test_round35_approve_rejectfirst.py``) shows the other side: a withdrawal counts by
who had made the content on the branch *when it was made*; a later making does not undo it.

Config: the bench's (approvers Alice and ``*@ops.example.com``; one approval). The agent adds
``plans/<vid>``; the controller freezes it (commit ``fork``). Mallory (no approver) copies the
folder byte for byte to ``plans/lib/<vid>-m``: on a side branch from ``fork`` (``*-side``) or
on main after the rejection (``*-main``). The agent sets ``plans/<vid>`` ``rejected`` (she is
the only person who made that version on the branch at that commit). Then:

- ``push-side``: the agent's rejection and then her ``--no-ff`` merge of Mallory's branch,
  in ONE push (no controller pass in between);
- ``push-late``: as ``push-side``, but Mallory's copy on the side branch is committed a
  second *after* the agent's rejection (then merged by the agent in the same push);
- ``push-main``: the agent's rejection and then Mallory's copy committed on main, one push;
- ``pass-side`` (control): as ``push-side`` with a controller pass between the rejection
  and the merge;
- ``pass-main`` (control): as ``push-main`` with a pass in between.

Then Alice sets every plan ``approved``; the controller passes.

Asserted: the verdict does not depend on when the controller passed: the rejection withdraws
the version (``rec`` never runs), as in the ``pass-*`` controls, and the fresh-clone
``plangate audit`` flags no ``start-without-approval`` for the plan.

Results: BROKE (strict xfails) ``push-side`` and ``push-late``: with the copy arriving
through a merged branch in the same push (whatever its dates), the live controller ignores
the agent's rejection (the plan stays ``pending_approval``) and starts Alice's approval:
``rec`` runs once. The fresh-clone audit counts the rejection (it lists it under
``decisions``), flags Alice's approval ``illegal`` (from ``rejected``) and the controller's
start ``start-without-approval``. ``push-main`` (the copy on the first parent, same push)
held, as did the ``pass-*`` controls (rejected, never run).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["push-side", "push-late", "push-main", "pass-side", "pass-main"]
_BROKE = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 36: an author's rejection followed in the same push by a copy of the version "
    "is ignored by the live controller (the plan runs); the audit and a passed-between "
    "controller count it",
)
FOUND: dict[str, pytest.MarkDecorator] = {"push-side": _BROKE, "push-late": _BROKE}


def _copy(lab: Lab, vid: str) -> None:
    shutil.copytree(lab.repo / "plans" / vid, lab.repo / "plans/lib" / f"{vid}-m")
    lab.set_status(f"lib/{vid}-m", "pending_approval")
    lab.commit(f"mallory copies {vid}", MALLORY)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    fork = lab.head()
    for vid in ("push-side", "pass-side"):
        lab.git("checkout", "-q", "-b", f"side-{vid}", fork)
        _copy(lab, vid)
    lab.git("checkout", "-q", "main")
    time.sleep(1.05)
    # one push: the rejections, then the copies
    for vid in ("push-side", "push-main", "push-late"):
        lab.set_status(vid, "rejected")
        lab.commit(f"agent rejects {vid}", AGENT)
    time.sleep(1.05)
    lab.git("checkout", "-q", "-b", "side-push-late", fork)
    _copy(lab, "push-late")  # made after the rejection
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side-push-side", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "merge late", "side-push-late", who=AGENT)
    _copy(lab, "push-main")
    lab.run()
    # controls: a pass between the rejection and the copy
    for vid in ("pass-side", "pass-main"):
        lab.set_status(vid, "rejected")
        lab.commit(f"agent rejects {vid}", AGENT)
    lab.run()
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side-pass-side", who=AGENT)
    _copy(lab, "pass-main")
    lab.run()
    lab.before = {k: v["status"] for k, v in lab.status().items()}
    time.sleep(1.05)
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.audit_out = lab.audit()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r36-samepush", _build)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in VIDS]
)
def test_a_rejection_made_alone_stands(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 0, (lab.before.get(f"plans/{vid}"), lab.codes(vid))
    assert not lab.started(vid), lab.subjects(vid)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in VIDS]
)
def test_the_audit_agrees(lab: Lab, vid: str) -> None:
    _, report = lab.audit_out
    bad = [
        f
        for f in report.get("findings", [])
        if f["plan"] == f"plans/{vid}" and f["kind"] == "start-without-approval"
    ]
    assert not bad, bad
