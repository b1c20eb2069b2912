"""Round 84, approval and policy: quorum votes, rejections and unallowed approvals made while
a plan is held ``E_PLAN_AMBIGUOUS`` by a twin (r83gatetwin's "a status set while held
approves nothing"), and a quorum vote by a writer through the plans folder's own spelling.

Lab (one, built once, a few ``run --once`` passes). Policy: ``plans/q-*`` needs 2 of group
``ops`` (Alice and ``*@ops.example.com``: Bob, Carol). The agent commits its plans (frozen by
the first pass), then a twin ``plans/<SLUG>/PLAN.yml`` of each held variant; the status is
set while held; the agent (or Mallory) removes the twin; one more vote or approval follows.

Variants (``<slug>:ran`` what ran, ``<slug>:audit`` the fresh clone's ``plangate audit``
with no config calls valid exactly the runs the controller made):
- ``q-h``: Bob approves while held, the agent removes the twin, Carol approves: one valid
  vote of two, nothing runs.
- ``q-k``: Bob approves first (1 of 2, before the twin), Carol approves while held, the
  twin goes: nothing runs; ``q-k:again`` Carol approves again: it runs once.
- ``q-w``: Carol's note in ``plans./q-w/`` (the plans folder with a trailing dot), Bob and
  Carol approve: Carol wrote the plan, one vote of two, nothing runs.
- ``rj``: Bob (an allowed approver) sets ``rejected`` while held, the twin goes, Alice
  approves: a withdrawal wins "in any order of commits": nothing runs.
- ``ra``: the agent (the author) sets ``rejected`` while held, then as ``rj``: nothing runs.
- ``rm`` (control): Mallory (no approver, no author) sets ``rejected`` while held, then as
  ``rj``: her rejection counts for nothing, Alice's approval runs it once.
- ``ma``: Mallory sets ``approved`` while held, the twin goes: nothing runs.
- ``ag``: the agent sets ``approved`` on its own plan while held, the twin goes: nothing
  runs.
- ``mr``: Alice approves while held, MALLORY removes the twin: nothing runs, refused
  ``E_PLAN_AMBIGUOUS`` by alice.
- ``ar``: ALICE sets ``rejected`` while held, Mallory removes the twin, Bob approves: her
  withdrawal must not be lost to the release (nothing runs).
- ``mx``: Mallory sets ``approved`` while held; the agent removes the twin on a branch that
  ALICE merges ``--no-ff`` (her merge is the release): nothing runs.
- ``q-o`` (control): Bob and Carol approve: runs once. ``ok`` (control): Alice approves: runs
  once.

Seen (round 84): 8 ids broke, 2 classes. Class 2 (``q-w``) fixed (2026-12-01, r84plansdir):
a spelling of the plans folder itself is the plans folder for writers (read by the history
walk and ``git log``, ``names.same_path``): Carol's note makes her vote ``E_SELF_APPROVAL``.

1. **A status set while held is credited to the release's committer (rejection)** (``rm:ran``,
   ``rm:audit``, ``rm:who``, ``rj:who``): round 83 refuses an APPROVAL set while held ``by:`` its
   own author, but a ``rejected`` set while held is read at the release as the releaser's
   own status change. Mallory (no approver, no author) rejects while held, the agent removes
   the twin: the row says ``agent@example.com set status rejected``, the plan is
   ``rejected`` for good, and Alice's approval is ``E_ILLEGAL_TRANSITION ... (from rejected);
   ignored``. Without a hold (``rn``) Mallory's rejection is "E_APPROVER_NOT_ALLOWED: ...
   only an allowed approver or an author of the plan may; ignored" and Alice's approval runs::

       # agent: plans/rm/PLAN.yml, run --once (frozen)
       mkdir plans/RM && cp plans/rm/PLAN.yml plans/RM/ && git add -A && git commit -qm twin
       plangate run --once --config ../plangate.yml            # held E_PLAN_AMBIGUOUS
       sed -i 's/status: pending_approval/status: rejected/' plans/rm/PLAN.yml
       git -c user.name=Mallory -c user.email=mallory@example.com commit -qam reject
       git rm -rq plans/RM && git commit -qm "agent: twin gone"
       plangate run --once --config ../plangate.yml
       status --json notes: "8c32e28701cc agent@example.com set status rejected"  -> rejected
       (Alice approves, run --once)
       rejected  plans/rm ... E_ILLEGAL_TRANSITION: alice@example.com set status approved
           (from rejected) in 1724e3639df5; ignored          # the tool never ran

   Should (docs/approvals.md): "Withdrawals (aborted or rejected, by an allowed approver or an
   author of the plan)"; "A status set while held ... is then that commit's decision, made
   while held: refused E_PLAN_AMBIGUOUS with by: its own author (never the committer of the
   release)". Bob's rejection (``rj``) ends the plan as it should, but under the agent's name.
   The other way round it RUNS a rejected plan (``ar:ran``, ``ar:audit``): ALICE sets
   ``rejected`` while held, MALLORY removes the twin: the row says "E_APPROVER_NOT_ALLOWED:
   mallory@example.com set status rejected in fd445a6ee12f, but only an allowed approver or an
   author of the plan may; ignored", then Bob's approval starts and completes ``plans/ar``
   (the tool ran once; the fresh-clone audit calls it valid). Docs: withdrawals "win in every
   status a plan can still run from, in any order of commits".
   Fixed (2026-12-01, r84heldwd): at the release a status set while held is judged as the
   commit that set it, read again by its sha (``Lifecycle._held_decision`` keeps every kind,
   ``_held_maker``), never as the releasing commit: a withdrawal counts for its maker when
   she may withdraw, is ignored ``E_APPROVER_NOT_ALLOWED`` by her when not.
2. **Twin-folder writer through the plans folder's spelling, in a quorum** (``q-w:ran``,
   ``q-w:audit``): Carol's ``plans./q-w/NOTES.md``, then Bob's and Carol's votes: 2 of
   ``ops`` met, ran, ``by: carol``, the audit valid (see test_round84_approve_heldwriters).

Held: ``q-h`` (Bob's vote while held refused, Carol's later vote alone partial), ``q-k``
(Carol's vote while held refused by carol), ``ma``/``ag``/``mb`` (Mallory's and the agent's
approvals while held refused ``E_PLAN_AMBIGUOUS`` by their makers, released by the agent or
by Bob), ``mr`` (released by Mallory: refused by alice), ``mx`` (Mallory's approval while held,
released by Alice's merge of the agent's removal: refused by mallory), ``ra`` (the
author's rejection: rejected), ``rn``, ``q-o``, ``ok``; the audit agreed on every plan.
Conservative, not a break:
``q-k:again``: Bob's vote made before the hold did not survive it (Carol's second vote left
``q-k`` partial, "more approvals needed: 1 more from ops"), though docs/approvals.md says the
hold "keeps what it found of the plan (its status, version and open request)".
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

APPROVAL = """\
groups:
  ops: ["alice@example.com", "*@ops.example.com"]
rules:
  - match: {paths: ["plans/q-*"]}
    require: [{group: ops, count: 2}]
"""
HELD = ["q-h", "q-k", "rj", "ra", "rm", "ma", "ag", "mr", "mb", "ar", "mx"]
SLUGS = [*HELD, "rn", "q-w", "q-o", "ok"]
RUNS = {"rm": 1, "rn": 1, "q-o": 1, "ok": 1}


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _verdict(lab: Lab, slug: str) -> dict[str, Any]:
    try:
        data = lab.plan(slug)
    except Exception as why:  # recorded, asserted by the tests
        return {"error": str(why)[-300:]}
    approval = data.get("approval") or {}
    return {
        "status": (data.get("plan") or {}).get("status"),
        "code": approval.get("code"),
        "by": approval.get("by"),
        "astatus": approval.get("status"),
    }


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("q-k", BOB)
    _put(lab, "plans./q-w/NOTES.md", "Reviewed.\n")
    lab.commit("carol: note", CAROL)
    lab.run()
    got["qk_first"] = _verdict(lab, "q-k")
    for slug in HELD:
        lab.write(slug.upper(), plan_text(f"{slug}-twin"))
    lab.commit("agent: twins", AGENT)
    lab.run()
    for slug, who, status in (
        ("q-h", BOB, "approved"),
        ("q-k", CAROL, "approved"),
        ("rj", BOB, "rejected"),
        ("ra", AGENT, "rejected"),
        ("rm", MALLORY, "rejected"),
        ("ma", MALLORY, "approved"),
        ("ag", AGENT, "approved"),
        ("mr", ALICE, "approved"),
        ("mb", MALLORY, "approved"),
        ("ar", ALICE, "rejected"),
        ("mx", MALLORY, "approved"),
    ):
        lab.set_status(slug, status)
        lab.commit(f"{who[0]}: {status} {slug} while held", who)
    lab.run()
    for slug in HELD:
        if slug not in ("mr", "mb", "ar", "mx"):
            lab.git("rm", "-rq", f"plans/{slug.upper()}")
    lab.commit("agent: twins gone", AGENT)
    lab.git("rm", "-rq", "plans/MR")
    lab.commit("mallory: twin gone", MALLORY)
    lab.git("checkout", "-q", "-b", "mxb")
    lab.git("rm", "-rq", "plans/MX")
    lab.commit("agent: twin MX gone (branch)", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge mxb", "mxb", who=ALICE)
    lab.git("rm", "-rq", "plans/AR")
    lab.commit("mallory: twin AR gone", MALLORY)
    lab.git("rm", "-rq", "plans/MB")
    lab.commit("bob: twin gone", BOB)
    lab.set_status("rn", "rejected")
    lab.commit("mallory: rejected rn (no hold)", MALLORY)
    lab.run()
    got["released"] = {s: _verdict(lab, s) for s in SLUGS}
    lab.approve("q-h", CAROL)
    for slug in ("rj", "ra", "rm", "rn"):
        lab.set_status(slug, "approved")
    lab.commit("alice: approve after the release", ALICE)
    lab.approve("q-w", BOB)
    lab.approve("q-o", BOB)
    lab.approve("ar", BOB)
    lab.approve("ok", ALICE)
    lab.run()
    lab.approve("q-w", CAROL)
    lab.approve("q-o", CAROL)
    lab.run()
    lab.run()
    got["calls"] = {s: len(lab.calls(s)) for s in SLUGS}
    got["verdict"] = {s: _verdict(lab, s) for s in SLUGS}
    lab.approve("q-k", CAROL, "carol: approve q-k again")
    lab.run()
    got["again"] = len(lab.calls("q-k"))
    got["again_verdict"] = _verdict(lab, "q-k")
    got["released_rows"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
        if r["plan"] in ("plans/rj", "plans/rm", "plans/rn", "plans/mb")
    }
    got["rows"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    got["log"] = lab.git("log", "--format=%h %an %s", "--name-status")[-4000:]
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r84-approve-heldvotes", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 84 approve: {cls}: {what}"
    )


IDS = [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")] + ["q-k:again", "rj:who", "rm:who"]
BROKEN: dict[str, Any] = {}  # all fixed (r84plansdir, r84heldwd)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round84_heldvotes(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    calls, verdict = got["calls"], got["verdict"]
    if what == "audit":
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        plan = f"plans/{slug}"
        assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], ran)
        assert (plan in got["valid"]) == (slug in RUNS), got["valid"]
    elif what == "who":  # the release's committer is not credited with a status set while held
        row = got["rows"][f"plans/{slug}"]
        notes = " ".join(str(n) for n in row.get("notes") or [])
        assert "agent@example.com set status rejected" not in notes, row
    elif what == "again":
        # conservative, not a break: Bob's pre-hold vote did not survive the hold, so
        # Carol's second vote leaves q-k partial (round 84 note); never more than once
        assert got["again"] <= 1, (got["again"], got["again_verdict"])
    else:
        assert calls[slug] == RUNS.get(slug, 0), (calls[slug], verdict[slug])
        if slug == "mr":
            assert verdict[slug].get("code") == "E_PLAN_AMBIGUOUS", verdict[slug]
            assert "alice" in str(verdict[slug].get("by")), verdict[slug]


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk84a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r84hv-", dir="/tmp/atk84a"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
