"""Round 85, approval and policy: two statuses set while a plan is held ``E_PLAN_AMBIGUOUS``
by DIFFERENT people (r84heldwd keeps "a status set while held" as its commit: which of two
counts?), in a single-approver plan and in a 2-of-``ops`` quorum.

Lab (one, built once, a few ``run --once`` passes). Policy: ``plans/q-*`` needs 2 of group
``ops`` (Alice and ``*@ops.example.com``: Bob, Carol). The agent commits its plans (frozen
by the first pass), then a twin ``plans/<SLUG>/PLAN.yml`` of each; the two statuses are set
while held (in this order); the agent removes the twin; the follow-up approvals come.
``<slug>:ran`` counts the recording tool's calls, ``<slug>:audit`` the fresh clone's
``plangate audit`` (no config) calls valid exactly the runs the controller made.

- ``ab``: Alice ``rejected``, then BOB ``approved``; after the release Carol approves:
  nothing runs (a withdrawal by an allowed approver wins in any order of commits).
- ``ag``: the AGENT (the author) ``rejected``, then the agent ``pending_approval``; Alice
  approves after the release: nothing runs.
- ``mo``: Alice ``rejected``, then MALLORY ``aborted``; Bob approves after: nothing runs.
- ``bl``: Bob ``approved``, then Alice ``rejected`` (the withdrawal last); Carol approves
  after: nothing runs.
- ``q-r``: Bob ``rejected``, then Carol ``approved``; after the release Alice and Carol
  approve (2 of ``ops``): nothing runs.
- ``q-x``: Carol ``approved``, then Bob ``rejected``; Alice and Carol after: nothing runs.
- r85heldmany's variants of the same class (not tried by the attacker; nothing runs):
  ``tr``: Alice ``rejected``, MALLORY ``approved``, Mallory ``pending_approval`` (three while
  held), Bob approves after; ``cap``: Alice ``rejected``, then 72 statuses by Mallory
  (``approved``, ``pending_approval`` in turn: past the cap of kept statuses), Bob after;
  ``q-3``: Bob ``rejected``, Carol ``approved``, Mallory ``pending_approval``, Alice and
  Carol after; ``rl``: Alice ``rejected`` while held, then MALLORY's release commit (the twin
  removed) sets ``pending_approval`` back, Bob after. ``bb`` (control): Bob ``approved`` then
  ``pending_approval`` while held (his approval refused, then set back); Alice approves
  after: runs once.
- ``ok`` (control): Alice approves after the release: runs once. ``q-ok`` (control): Alice
  and Carol approve after: runs once.

Seen (round 85): 8 ids broke, 1 class (the audit agreed with the controller each time).

1. **Of several statuses set while held only the last is judged** (``ab``, ``ag``, ``mo``,
   ``q-r`` ``:{ran,audit}``; the class of test_round85_approve_heldedges): the withdrawal set
   first while held (Alice's ``rejected``, the agent's ``rejected``, Bob's ``rejected`` in the
   quorum) is lost to the status set after it while held by anyone (Bob's or Carol's approval,
   which is itself refused ``E_PLAN_AMBIGUOUS``; Mallory's ``aborted``, ignored
   "E_ILLEGAL_TRANSITION: mallory@example.com set status aborted (from pending_approval)";
   the author's own ``pending_approval``): after the release the next approval (Carol's,
   Alice's, Bob's; Alice's and Carol's 2 of ``ops``) runs the plan once, and the fresh-clone
   audit calls it valid. With the withdrawal set last (``bl``, ``q-x``) the plan is
   ``rejected``. Should (docs/approvals.md): withdrawals "win in every status a plan can still
   run from, in any order of commits"; a status set while held "is, likewise, that commit's
   withdrawal ... the release judges it as the commit that set it".
   Fixed (2026-12-01, r85heldmany): a hold keeps every status set while held, in commit order
   (``held_from.decisions``, bounded: every withdrawal and the last status kept), and the
   release judges each as its own commit in that order (``Lifecycle._held_steps``, then the
   last by ``_held_maker``), as with no hold: the withdrawal wins, the later statuses are
   ``E_ILLEGAL_TRANSITION`` from ``rejected``; the controller and the fresh-clone audit alike.

Held: ``bl``, ``q-x`` (the withdrawal last: rejected), ``ok``, ``q-ok``; no twin ran.
"""

from __future__ import annotations

import json
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
WHILE = {
    "ab": [(ALICE, "rejected"), (BOB, "approved")],
    "ag": [(AGENT, "rejected"), (AGENT, "pending_approval")],
    "mo": [(ALICE, "rejected"), (MALLORY, "aborted")],
    "bl": [(BOB, "approved"), (ALICE, "rejected")],
    "q-r": [(BOB, "rejected"), (CAROL, "approved")],
    "q-x": [(CAROL, "approved"), (BOB, "rejected")],
    # r85heldmany's variants (not tried by the attacker): three statuses while held, the
    # withdrawal first; a hold past the cap of kept statuses; a quorum's three; a set-back
    "tr": [(ALICE, "rejected"), (MALLORY, "approved"), (MALLORY, "pending_approval")],
    "cap": [(ALICE, "rejected")]
    + [(MALLORY, s) for _ in range(36) for s in ("approved", "pending_approval")],
    "q-3": [(BOB, "rejected"), (CAROL, "approved"), (MALLORY, "pending_approval")],
    "bb": [(BOB, "approved"), (BOB, "pending_approval")],
    "rl": [(ALICE, "rejected")],
    "ok": [],
    "q-ok": [],
}
AFTER = {
    "ab": [CAROL],
    "ag": [ALICE],
    "mo": [BOB],
    "bl": [CAROL],
    "q-r": [ALICE, CAROL],
    "q-x": [ALICE, CAROL],
    "tr": [BOB],
    "cap": [BOB],
    "q-3": [ALICE, CAROL],
    "bb": [ALICE],
    "rl": [BOB],
    "ok": [ALICE],
    "q-ok": [ALICE, CAROL],
}
#: a release that sets a status itself (r85heldmany): Mallory removes the twin and sets
#: ``pending_approval`` back in one commit, after Alice's ``rejected`` set while held
RELEASE = {"rl": (MALLORY, "pending_approval")}
SLUGS = list(WHILE)
RUNS = {"ok": 1, "q-ok": 1, "bb": 1}


def _rows(lab: Lab) -> dict[str, Any]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {r["plan"]: r for r in json.loads(out)}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for slug in SLUGS:
        lab.write(slug.upper(), plan_text(f"{slug}-twin"))
    lab.commit("agent: twins", AGENT)
    lab.run()
    got["held"] = _rows(lab)
    for step in range(max(len(moves) for moves in WHILE.values())):
        for slug, moves in WHILE.items():
            if step < len(moves):
                who, status = moves[step]
                lab.set_status(slug, status)
                lab.commit(f"{who[0]}: {status} {slug} while held", who)
    lab.run()
    for slug, (who, status) in RELEASE.items():
        lab.git("rm", "-rq", f"plans/{slug.upper()}")
        lab.set_status(slug, status)
        lab.commit(f"{who[0]}: {status} {slug}, twin gone", who)
    for slug in SLUGS:
        if slug not in RELEASE:
            lab.git("rm", "-rq", f"plans/{slug.upper()}")
    lab.commit("agent: twins gone", AGENT)
    lab.run()
    got["released"] = _rows(lab)
    for step in range(2):
        for slug, whos in AFTER.items():
            if step < len(whos):
                lab.set_status(slug, "approved")
                lab.commit(f"{whos[step][0]}: approve {slug}", whos[step])
        lab.run()
    lab.run()
    got["calls"] = {s: len(lab.calls(s)) for s in SLUGS}
    got["twin_calls"] = {s: len(lab.calls(f"{s}-twin")) for s in SLUGS}
    got["rows"] = _rows(lab)
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    got["log"] = lab.git("log", "--format=%h %an %s", "--name-status")[-4000:]
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r85-approve-heldmany", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 85 approve: {cls}: {what}"
    )


IDS = [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")] + ["all:twins"]
_A = "of several statuses set while held only the last is judged at the release"
_WHY: dict[str, str] = {}
BROKEN: dict[str, Any] = {
    f"{s}:{w}": xfail(_A, why) for s, why in _WHY.items() for w in ("ran", "audit")
}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round85_heldmany(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.rsplit(":", 1)
    if slug == "all":
        assert sum(got["twin_calls"].values()) == 0, got["twin_calls"]
        return
    plan = f"plans/{slug}"
    row = got["rows"].get(plan, {})
    if what == "audit":
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], ran)
        assert (plan in got["valid"]) == (slug in RUNS), (plan, got["valid"])
        return
    notes = (row.get("status"), (row.get("notes") or [])[-4:])
    assert got["calls"][slug] == RUNS.get(slug, 0), (got["calls"][slug], notes)


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r85hm-", dir="/tmp/atk85a"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
