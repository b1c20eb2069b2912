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
- ``push-ours``: as ``push-side``, merged ``-s ours`` (the copy never lands on main);
- ``push-main``: the agent's rejection and then Mallory's copy committed on main, one push;
- ``pass-side`` (control): as ``push-side`` with a controller pass between the rejection
  and the merge;
- ``pass-main`` (control): as ``push-main`` with a pass in between.

- ``abort-side`` (``test_abort_side``): a gated plan (action 2 ``rec`` tagged
  ``abort-side-gated``, ``requires_approval``); Alice approves, action 1 runs, it pauses at
  the gate; Mallory copies the folder on a side branch from ``fork``; in one push the agent
  sets it ``aborted`` and merges Mallory's branch; Alice approves the gate. Asserted: the
  gated action never runs and the audit flags nothing for the plan.
- ``veto-first`` (``test_veto_first_agrees``, round 35's accepted limit in ONE push): the
  agent's pull request adds ``plans/veto-first``; Mallory commits the same bytes on main at
  ``plans/lib/veto-first-m`` and sets them ``rejected``; the agent merges the pull request;
  all in one push. Alice approves. Asserted: the controller and the fresh-clone audit agree
  (``rec`` ran iff the audit lists a run, and no finding for the plan).

Then Alice sets every plan ``approved``; the controller passes.

- ``check-pr`` (``test_check_pr``): the agent rejects ``plans/check-pr`` (counted, a pass);
  later a pull request from main holds Mallory's copy ``plans/lib/check-pr-m`` (status
  ``pending_approval``) and then Alice's ``approved`` of ``plans/check-pr``. ``plangate check
  --base main --head pr-check --as alice@example.com`` is recorded, then Alice merges.
  Asserted: ``rec`` never runs, and check does not predict ``start``.

Asserted: the verdict does not depend on when the controller passed: the rejection withdraws
the version (``rec`` never runs), as in the ``pass-*`` controls, and the fresh-clone
``plangate audit`` flags no ``start-without-approval`` for the plan.

Results: BROKE (strict xfails) ``push-side``, ``push-late`` and ``push-ours``: with the copy
arriving through a merged branch in the same push (whatever its dates, even a ``-s ours``
merge that lands none of it), the live controller ignores
the agent's rejection (the plan stays ``pending_approval``) and starts Alice's approval:
``rec`` runs once. The fresh-clone audit counts the rejection (it lists it under
``decisions``), flags Alice's approval ``illegal`` (from ``rejected``) and the controller's
start ``start-without-approval``. ``push-main`` (the copy on the first parent, same push)
held, as did the ``pass-*`` controls (rejected, never run).
``abort-side`` BROKE: the agent's abort is ignored, Alice's gate approval runs the gated
action; the audit lists the agent's ``abort-request`` and flags the gate's start
``start-without-approval`` (and Alice's approval ``illegal``, from ``aborted``).
``check-pr`` BROKE: check predicts ``status: approved``, ``outcome: start`` (exit 0); the
controller keeps the plan ``rejected`` and runs nothing (Alice's approval ignored).
``veto-first`` BROKE the other way: the controller ignores Mallory's rejection and runs the
plan; the audit counts it (``decisions``) and flags the start ``start-without-approval``
(``E_VERSION_WITHDRAWN``). In both, the verdict depends on whether the controller passed
between the commits: a merged branch read in the same pass changes who made the content
before a withdrawal earlier on the first parent.
Fixed (the same session): a making found on a merged branch counts from the merge that
brought it in, in the order of the first-parent line (the live controller, a cold scan and
the audit judge a withdrawal by what was made before it); `plangate check` reads the whole
history when the plans it judges have a withdrawal in theirs (an author's right depends on
copies anywhere).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["push-side", "push-late", "push-ours", "push-main", "pass-side", "pass-main"]
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{vid}-gated"
"""
_BROKE = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 36: an author's rejection followed in the same push by a copy of the version "
    "is ignored by the live controller (the plan runs); the audit and a passed-between "
    "controller count it",
)
FOUND: dict[str, pytest.MarkDecorator] = {}  # fixed (below)


def _copy(lab: Lab, vid: str) -> None:
    shutil.copytree(lab.repo / "plans" / vid, lab.repo / "plans/lib" / f"{vid}-m")
    lab.set_status(f"lib/{vid}-m", "pending_approval")
    lab.commit(f"mallory copies {vid}", MALLORY)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
    lab.write("check-pr", plan_text("check-pr"))
    lab.write("abort-side", plan_text("abort-side", extra_actions=GATE.format(vid="abort-side")))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    fork = lab.head()
    lab.git("checkout", "-q", "-b", "pr-veto-first", fork)
    lab.write("veto-first", plan_text("veto-first"))
    lab.commit("agent adds veto-first", AGENT)
    lab.git("checkout", "-q", "main")
    lab.write("lib/veto-first-m", plan_text("veto-first"))
    lab.commit("mallory lands the same plan", MALLORY)
    lab.set_status("lib/veto-first-m", "rejected")
    lab.commit("mallory rejects it", MALLORY)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr-veto-first", who=AGENT)
    lab.run()
    time.sleep(1.05)
    lab.set_status("abort-side", "approved")
    lab.commit("alice approves abort-side", ALICE)
    lab.run()  # action 1 runs, the plan pauses at its gate
    for vid in ("push-side", "pass-side", "abort-side", "push-ours"):
        lab.git("checkout", "-q", "-b", f"side-{vid}", fork)
        _copy(lab, vid)
    lab.git("checkout", "-q", "main")
    time.sleep(1.05)
    # one push: the rejections, then the copies
    for vid in ("push-side", "push-main", "push-late", "push-ours"):
        lab.set_status(vid, "rejected")
        lab.commit(f"agent rejects {vid}", AGENT)
    lab.set_status("abort-side", "aborted")
    lab.commit("agent aborts abort-side", AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "merge abort side", "side-abort-side", who=AGENT)
    time.sleep(1.05)
    lab.git("checkout", "-q", "-b", "side-push-late", fork)
    _copy(lab, "push-late")  # made after the rejection
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side-push-side", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "merge late", "side-push-late", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-s", "ours", "-m", "merge ours", "side-push-ours", who=AGENT)
    _copy(lab, "push-main")
    lab.run()
    # controls: a pass between the rejection and the copy
    for vid in ("pass-side", "pass-main", "check-pr"):
        lab.set_status(vid, "rejected")
        lab.commit(f"agent rejects {vid}", AGENT)
    lab.run()
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side-pass-side", who=AGENT)
    _copy(lab, "pass-main")
    lab.run()
    lab.before = {k: v["status"] for k, v in lab.status().items()}
    time.sleep(1.05)
    for vid in [*VIDS, "abort-side", "veto-first"]:
        lab.set_status(vid, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.audit_out = lab.audit()
    # check-pr: rejected (counted) long ago; a pull request brings Mallory's copy and Alice's
    # approval of the rejected plan
    lab.git("checkout", "-q", "-b", "pr-check", "main")
    _copy(lab, "check-pr")
    time.sleep(1.05)
    lab.set_status("check-pr", "approved")
    lab.commit("alice approves check-pr", ALICE)
    check = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", "pr-check",
        "--as", "alice@example.com", "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    lab.check_out = (check.returncode, check.stdout, check.stderr)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-check", "pr-check", who=ALICE)
    lab.run()
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


_VETO = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 36: a copy landed and rejected, then the pull request that made the content "
    "merged, in one push: the controller ignores the rejection and runs the plan, the audit "
    "counts it and flags the start",
)


def test_abort_side(lab: Lab) -> None:
    assert len(lab.calls("abort-side")) == 1, lab.codes("abort-side")
    assert not lab.calls("abort-side-gated"), lab.codes("abort-side")
    _, report = lab.audit_out
    # the abort counted: Alice's gate approval after it is an illegal change, which the
    # audit reports as the controller does; nothing it finds says the two disagree
    found = [f for f in report.get("findings", []) if f["plan"] == "plans/abort-side"]
    assert all(f["kind"] == "illegal" and "from aborted" in f["detail"] for f in found), found
    assert "E_ILLEGAL_TRANSITION" in lab.codes("abort-side"), lab.codes("abort-side")


def test_veto_first_agrees(lab: Lab) -> None:
    ran = len(lab.calls("veto-first"))
    _, report = lab.audit_out
    bad = [f for f in report.get("findings", []) if f["plan"] == "plans/veto-first"]
    runs = [e for e in report.get("executions", []) if e["plan"] == "plans/veto-first"]
    assert ran == len(runs) and not bad, (ran, bad, runs, lab.codes("veto-first"))


_CHECK = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 36: plangate check predicts a start for a plan its author rejected (counted) "
    "when the pull request brings a copy of the version; the controller keeps it rejected",
)


def test_check_pr(lab: Lab) -> None:
    _, out, err = lab.check_out
    assert "Traceback" not in err, err[-2000:]
    rows = {row["plan"]: row for row in __import__("json").loads(out)["plans"]}
    assert not lab.calls("check-pr"), lab.codes("check-pr")
    assert rows["plans/check-pr"]["outcome"] != "start", rows["plans/check-pr"]
