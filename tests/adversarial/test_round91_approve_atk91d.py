"""Round 91, approval (atk91d): held plans and twins at the edges of r89held2.

Lab (one, built once, nine ``run --once`` passes; policy: one of Alice or
``*@ops.example.com``, and for ``plans/q-*`` two of ``ops`` = Alice or ``*@ops``). P1 freezes
the plans; Alice approves the gated ``g*`` plans (action 2 ``requires_approval``) and Bob
votes for the ``q-*`` plans; P2 pauses the gated plans at their gate and records the votes
``partial``. Then, in one scan (P3 holds):

- ``na``, ``nb``, ``nz``, ``nk``: the plan is NEW in the same commit as its twin
  (``PLANS/na/``, ``plans/nb\\PLAN.yml``, ``plans/nz/PLAN<U+200D>.yml``); Alice (Mallory for
  ``nk``, the control) sets ``rejected`` in the twin; the reference ``nr``: new, no twin, Alice
  rejects before any pass.
- ``xa``, ``xb``, ``xk``: a BRANCH MERGED TWICE: on ``side-x`` the agent adds the twin
  (``PLANS/xa/``, ``plans/xb\\PLAN.yml``) and Alice (Mallory: ``xk``) rejects in it; Mallory
  merges ``--no-ff`` (the merge makes the hold); later the agent deletes the twins on
  ``side-x2`` (from ``side-x``) and Mallory merges again (the release).
- ``ga``, ``gb``, ``gk``, ``gn``: gated plans PAUSED AT THE GATE: a twin (``PLANS/ga/``,
  ``plans /gb/``) holds; Alice's ``aborted`` in it (Mallory's: ``gk``; nobody's: ``gn``); the
  release: the agent's branch deletes the twins, merged ``--no-ff`` by BOB; Bob approves the
  gate. ``mg``, ``mb``: not gated, twins ``PLANS/mg/``, ``plans/mb\\PLAN.yml``, nobody decides
  in them, released on the same branch merged by Bob; ``mm``: the same merged by Mallory;
  ``mn``: no hold, the agent's ``plans/mn/NOTES.md`` deleted on that branch (merged by Bob).
- ``sw``: Bob sets ``approved`` in the twin ``PLANS/sw/PLAN.yml`` while held (a status line
  only, refused ``E_PLAN_AMBIGUOUS``); the agent deletes the twin; Bob approves again.
- Releases by other means: ``rc`` (``PLANS/rc/``), ``rk`` (control, Mallory, ``plans/RK/``),
  ``vr`` (v2 in ``plans/vr/PLAN.yaml``): the agent's ``git rm --cached`` of the twin (the file
  left untracked, excluded); ``rp`` (``plans./rp/``), ``ru`` (``Plans/ru/``): ``git mv plans.
  attic`` and ``git mv Plans archive`` (the other spelling of the plans folder renamed away).
  Alice rejects in each twin while held; ``vr``'s v2 is brought back into ``PLAN.yml`` later.
- Quorum (``q-*``, Bob's vote before the hold; twin ``PLANS/q-*/``, deleted by the agent):
  ``q-b``: nothing while held, Carol after (the vote before the hold must survive: runs once);
  ``q-r``: Alice's ``rejected`` while held, Carol after; ``q-d``: Carol's ``approved`` while
  held, Bob after; ``q-a``: Bob's and Carol's while held, Bob after; ``q-w``: Bob's
  ``approved`` (a status line) while held, Carol after (Bob's first vote must stay: runs once).
- ``oa``, ``ob``, ``ok``: a hold made and ended on the THIRD parent of an OCTOPUS merge (the
  agent adds ``PLANS/oa/``, ``plans/ob/plan.yml``, Alice rejects in them (Mallory in ``ok``'s),
  the agent deletes them; Mallory's ``git merge --no-ff oct-one oct-held``).
- ``ca``, ``cb``, ``ck``: CRISS-CROSS: the twin (``PLANS/ca/``, ``plans./cb/``) on ``cross-a``,
  Alice's (Mallory's: ``ck``) ``rejected`` on ``cross-b`` forked from it; each branch merges
  the other; ``cross-b`` deletes the twins; Mallory merges ``cross-a`` then ``cross-b``.
- ``wv`` (no hold, the reference): v2 written into the plan, rejected by Alice, v1 back, v2
  again.

Bob then approves every plan (Carol and Bob vote for the ``q-*`` as above). ``<slug>:ran``
counts the recording tool's calls (of ``<slug>`` and ``<slug>-v2``; of action 2 for a gated
plan), ``<slug>:audit`` that the fresh clone's ``plangate audit`` calls valid exactly the runs
the controller made and the expected ones, ``<slug>:held`` that a pass saw the plan held
``E_PLAN_AMBIGUOUS`` (no vacuous attack), ``all:paused`` that the gated plans paused at their
gate with action 1 run once. Expected runs: the controls ``nk``, ``ok``, ``ck``, ``xk``,
``gk``, ``gn``, ``rk``, and ``mg``, ``mb``, ``mm``, ``mn``, ``sw``, ``q-b``, ``q-w`` once.

Seen (round 91): 12 ids broke, 2 classes; the fresh-clone audit agreed with the controller
each time (its first assertion, valid == completed, held; the refusals are the controller's
and the audit's alike).

1. **The merger of a release becomes a writer of the plan** (``gk``, ``gn``, ``mg``, ``mb``
   ``:{ran,audit}``): the agent deleted the twins on its branch, Bob merged it ``--no-ff``
   (a clean merge: no byte of his), and Bob's approval was refused
   ``plangate: refuse plans/mg`` with ``Plan-Note: E_SELF_APPROVAL: bob@ops.example.com wrote
   or changed this plan's content and cannot approve it`` (the same for ``mb``, and for the
   gate of ``gk``, ``gn``: left ``awaiting_approval``, action 2 never ran). The same release
   merged by Mallory (``mm``) and the same merge deleting a ``NOTES.md`` with no hold
   (``mn``) let Bob's approval run once.
2. **A status line set in a twin while held makes its maker a writer** (``sw``, ``q-w``
   ``:{ran,audit}``): Bob's ``approved`` in ``PLANS/sw/PLAN.yml`` (a byte copy, only the status
   line changed) was ``made while the plan was held E_PLAN_AMBIGUOUS`` and ``lapsed`` at the
   agent's release, as documented; but Bob's next approval was refused ``E_SELF_APPROVAL:
   bob@ops.example.com wrote or changed this plan's content``, and in the quorum ``q-w``
   Bob's vote made BEFORE the hold stopped counting: Carol's approval gave ``plangate:
   partial plans/q-w`` with ``approvals: [{by: carol@ops.example.com}]``, ``still needs 1
   more from ops`` (``q-b``, the same without Bob's held status, ran on Carol's vote).

Held: the new-with-its-twin plans (``na``, ``nb``, ``nz``: ``alice@example.com set status
rejected``, later ``E_ILLEGAL_TRANSITION ... (from rejected)``; ``nk`` ran once); the branch
merged twice (``xa``, ``xb``: ``alice@example.com set status rejected on a merged branch``;
``xk``: ``E_APPROVER_NOT_ALLOWED: mallory@example.com set status rejected ...; ignored``, ran
once); the gated plans (``ga``, ``gb``: ``abort requested by alice@example.com``, ``plangate:
abort``, action 2 never ran; ``gk``'s Mallory abort ignored); the octopus (``oa``, ``ob``:
``alice@example.com set status rejected on a merged branch``; ``ok`` ran once); the
criss-cross (``ca``, ``cb`` likewise; ``ck`` ran once); ``git rm --cached`` and the renamed
plans-folder spellings (``rc``, ``rp``, ``ru``: Alice's ``rejected`` judged as hers, the
agent's release ``E_ILLEGAL_TRANSITION ... (from rejected)``; ``rk`` ran once); ``vr``: v2
brought back was ``E_VERSION_WITHDRAWN: this exact version was withdrawn before it ran:
plans/vr was set rejected by alice@example.com``; the quorum: ``q-b`` ran on Carol's vote
(Bob's vote from before the hold survived), ``q-r`` stayed ``rejected``, ``q-d``, ``q-a``
never ran (no held vote counted); ``wv``: Alice's ``rejected`` of v2 left the plan
``rejected`` for good (the reference).

Should (docs/approvals.md): "A merge commits only what it wrote itself: a file it brings as a
merged branch changed it (those very bytes) was committed by that branch's commits, and their
makers are its writers, not the person who merged"; "Who releases the hold lends the status
no rights and takes none from it, by a plain commit or by a merge" (class 1). "A status change
alone (a plain status line, the hashed content kept) made while held makes no writer, as
anywhere (her next approval is hers to make); whoever deletes one of the two claims chose the
content left and is a writer" (class 2: the agent deleted the claim, not Bob).

Fixed (2026-12-02, r91held): a hold's touch of a claim is judged by the one rule for every
commit (``Lifecycle._touchers``, read by ``_ambiguity``): a re-judging (a twin's change, the
plan's own file untouched) reads the claims the commit changed by the hold's rule
(``_claims_plan``, ``_file_owners``); a status line alone writes nothing (``_status_only``);
what a merge brought, a removal too (``_brought`` -> ``_brought_removal``: a side parent and
git's clean join both lack the path), is the merged commits' makers' (``_merged_makers``),
never the merger's; anything else the commit's own (a squash: the squasher). A status line
alone set in any file claiming a plan's place by another spelling (``PLANS/x/PLAN.yml``,
``plans/x\\PLAN.yml``, ``plans/x/plan.yml``), on the line or a merged branch, no longer goes
to the draft writers (``_status_claim``). Class 1 and 2: all 12 ids pass.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, brief, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

APPROVAL = """\
groups:
  ops: ["alice@example.com", "*@ops.example.com"]
rules:
  - match: {paths: ["plans/q-*"]}
    require: [{group: ops, count: 2}]
"""

#: new in the same commit as its twin (never frozen before the hold): slug -> (twin, rejecter)
NEW = {
    "na": ("PLANS/na/PLAN.yml", ALICE),
    "nb": ("plans/nb\\PLAN.yml", ALICE),
    "nz": ("plans/nz/PLAN\u200d.yml", ALICE),
    "nk": ("PLANS/nk/PLAN.yml", MALLORY),  # control
}
#: the reference: new with no twin, Alice's rejected before the first pass
NOREF = ["nr"]
#: a hold made and ended on the THIRD parent of an octopus merge: slug -> (twin, rejecter)
OCTO = {
    "oa": ("PLANS/oa/PLAN.yml", ALICE),
    "ob": ("plans/ob/plan.yml", ALICE),
    "ok": ("PLANS/ok/PLAN.yml", MALLORY),  # control
}
#: criss-cross: the twin on A, the rejection on B (forked from A), A and B merge each other,
#: B deletes the twin; main merges A then B in one scan
CROSS = {
    "ca": ("PLANS/ca/PLAN.yml", ALICE),
    "cb": ("plans./cb/PLAN.yml", ALICE),
    "ck": ("PLANS/ck/PLAN.yml", MALLORY),  # control
}
#: a branch merged twice: the twin and the rejection merged (held), the deletion merged later
TWICE = {
    "xa": ("PLANS/xa/PLAN.yml", ALICE),
    "xb": ("plans/xb\\PLAN.yml", ALICE),
    "xk": ("PLANS/xk/PLAN.yml", MALLORY),  # control
}
#: gated plans paused at the gate, held, aborted in the twin, released by a merged deletion
GATE = {
    "ga": ("PLANS/ga/PLAN.yml", ALICE),
    "gb": ("plans /gb/PLAN.yml", ALICE),
    "gk": ("PLANS/gk/PLAN.yml", MALLORY),  # control
    "gn": ("PLANS/gn/PLAN.yml", None),  # control: nobody withdraws; Bob merges the release
}
#: not gated, nobody withdraws in the twin, the release merged by Bob in the same branch
MERGED = {"mg": "PLANS/mg/PLAN.yml", "mb": "plans/mb\\PLAN.yml"}
#: the reference: the same release merged by Mallory (Bob approves after)
MALMERGE = {"mm": "PLANS/mm/PLAN.yml"}
#: the reference with no hold: the agent's NOTES.md deleted on its branch, merged by Bob
NOTE = ["mn"]
#: Bob's approved in the twin while held (a status line only), the agent releases: slug -> who
#: approves after (single approver: Bob again; q-w: Bob voted before the hold, Carol after)
REVOTE = {"sw": BOB}
#: releases by other means than a deletion: slug -> (twin, rejecter, how)
REL = {
    "rc": ("PLANS/rc/PLAN.yml", ALICE, "cached"),  # git rm --cached of the twin
    "rk": ("plans/RK/PLAN.yml", MALLORY, "cached"),  # control
    "rp": ("plans./rp/PLAN.yml", ALICE, "folder"),  # git mv plans. attic
    "ru": ("Plans/ru/PLAN.yml", ALICE, "folder"),  # git mv Plans archive
    "vr": ("plans/vr/PLAN.yaml", ALICE, "cached"),  # v2 in the twin: vetoed by hash
}
V2 = {"vr"}
#: a withdrawal of another version with no hold: v2 rejected by Alice, v1 back, v2 again
NOHOLD = ["wv"]
#: 2-of-ops quorum: Bob's vote before the hold; what is set in the twin while held; who after
QUORUM = {
    "q-b": ([], [CAROL]),  # Bob before; Carol after the release: runs once
    "q-r": ([(ALICE, "rejected")], [CAROL]),  # Alice's withdrawal while held: never runs
    "q-d": ([(CAROL, "approved")], [BOB]),  # Carol's held vote must not count; Bob again
    "q-a": ([(BOB, "approved"), (CAROL, "approved")], [BOB]),  # no held vote counts
    "q-w": ([(BOB, "approved")], [CAROL]),  # Bob's held re-vote: Bob's first vote stays
}
GATED = set(GATE)
SLUGS = [
    *NEW,
    *NOREF,
    *OCTO,
    *CROSS,
    *TWICE,
    *GATE,
    *MERGED,
    *MALMERGE,
    *NOTE,
    *REVOTE,
    *REL,
    *NOHOLD,
    *QUORUM,
]
RUNS = {
    "nk": 1,
    "ok": 1,
    "ck": 1,
    "xk": 1,
    "gk": 1,
    "gn": 1,
    "mg": 1,
    "mb": 1,
    "rk": 1,
    "q-b": 1,
    "mm": 1,
    "mn": 1,
    "sw": 1,
    "q-w": 1,
}
#: plans a pass saw held (the attack is no vacuous one)
HELD = [*NEW, *TWICE, *GATE, *MERGED, *MALMERGE, *REVOTE, *REL, *QUORUM]


def _set(lab: Lab, rel: str, status: str) -> None:
    path = lab.repo / rel
    lines = path.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        if line.startswith("  status:") and i < 6:
            lines[i] = f"  status: {status}"
            break
    path.write_text("\n".join(lines), encoding="utf-8")


def _gone(lab: Lab, rel: str) -> None:
    (lab.repo / rel).unlink()


def _gated(v: str) -> str:
    return plan_text(v) + (
        f'  - id: 2\n    tool: rec\n    why: "second"\n    requires_approval: true\n'
        f'    params: {{tag: "{v}2"}}\n'
    )


def _merge(lab: Lab, who: tuple[str, str], *refs: str) -> None:
    lab.git("merge", "-q", "--no-ff", "-m", f"merge {' '.join(refs)}", *refs, who=who)


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    got: dict[str, Any] = {}
    old = [s for s in SLUGS if s not in NEW and s not in NOREF]
    for slug in old:
        lab.write(slug, _gated(slug) if slug in GATED else plan_text(slug))
    lab.put("plans/mn/NOTES.md", "the agent's notes\n")
    lab.commit("agent: plans", AGENT)
    lab.run()  # P1: frozen
    for slug in GATED:
        lab.set_status(slug, "approved")
    lab.commit("alice: approve the gated plans", ALICE)
    for slug in QUORUM:
        lab.set_status(slug, "approved")
    lab.commit("bob: vote", BOB)
    lab.run()  # P2: gated paused, quorum partial
    rows = lab.rows()
    got["paused"] = {s: rows.get(f"plans/{s}", {}).get("status") for s in GATED}
    got["partial"] = {s: brief(rows.get(f"plans/{s}", {}), notes=4) for s in QUORUM}

    # -- NEW: the plan and its twin in one commit; the reference with no twin
    for slug, (rel, _who) in NEW.items():
        lab.write(slug, plan_text(slug))
        lab.put(rel, plan_text(slug))
    lab.write("nr", plan_text("nr"))
    # -- twins on the first-parent line (held at the next pass)
    for slug, (rel, _who) in GATE.items():
        lab.put(rel, lab.read(slug))
    for slug, rel in {**MERGED, **MALMERGE}.items():
        lab.put(rel, lab.read(slug))
    for slug in REVOTE:
        lab.put(f"PLANS/{slug}/PLAN.yml", lab.read(slug))
    for slug, (rel, _who, _how) in REL.items():
        lab.put(rel, plan_text(f"{slug}-v2") if slug in V2 else lab.read(slug))
    for slug in QUORUM:
        lab.put(f"PLANS/{slug}/PLAN.yml", lab.read(slug))
    lab.commit("agent: new plans with twins, twins", AGENT)
    # -- TWICE: the twin and the rejection on a branch, merged now (held), deleted later
    lab.git("checkout", "-q", "-b", "side-x")
    for slug, (rel, _who) in TWICE.items():
        lab.put(rel, lab.read(slug))
    lab.commit("agent: x twins", AGENT)
    for who in (ALICE, MALLORY):
        for rel, w in TWICE.values():
            if w == who:
                _set(lab, rel, "rejected")
        lab.commit(f"{who[0]}: reject in the x twins", who)
    lab.git("checkout", "-q", "main")
    _merge(lab, MALLORY, "side-x")  # the hold made by Mallory's merge
    # -- while held (ONE scan with the new plans: the next pass)
    for who in (ALICE, MALLORY):
        for rel, w in NEW.values():
            if w == who:
                _set(lab, rel, "rejected")
        for rel, w, _how in REL.values():
            if w == who:
                _set(lab, rel, "rejected")
        for rel, w in GATE.values():
            if w == who:
                _set(lab, rel, "aborted")
        lab.commit(f"{who[0]}: withdraw in the twins", who)
    lab.set_status("nr", "rejected")
    lab.commit("alice: reject nr", ALICE)
    for slug in REVOTE:
        _set(lab, f"PLANS/{slug}/PLAN.yml", "approved")
    lab.commit("bob: approve in the twins while held", BOB)
    for slug, (held, _after) in QUORUM.items():
        for who, status in held:
            _set(lab, f"PLANS/{slug}/PLAN.yml", status)
            lab.commit(f"{who[0]}: {status} {slug} in the twin", who)
    lab.run()  # P3: held
    got["held"] = lab.rows()

    # -- the releases
    for rel, _who in NEW.values():
        _gone(lab, rel)
    for slug in [*QUORUM, *REVOTE]:
        _gone(lab, f"PLANS/{slug}/PLAN.yml")
    lab.commit("agent: twins gone", AGENT)
    cached = [rel for rel, _w, how in REL.values() if how == "cached"]
    lab.git("rm", "-q", "--cached", *cached)
    with open(lab.repo / ".git" / "info" / "exclude", "a", encoding="utf-8") as handle:
        for rel in cached:
            handle.write("/" + rel.replace("\\", "\\\\") + "\n")
    lab.git("commit", "-q", "-m", "agent: untrack the twins", who=AGENT)
    lab.git("mv", "plans.", "attic")
    lab.git("mv", "Plans", "archive")
    lab.commit("agent: move the other plans folders away", AGENT)
    lab.branch("side-x2", "side-x")
    for rel, _w in TWICE.values():
        _gone(lab, rel)
    lab.commit("agent: x twins gone", AGENT)
    lab.git("checkout", "-q", "main")
    _merge(lab, MALLORY, "side-x2")  # side-x merged twice
    lab.git("checkout", "-q", "-b", "side-g")
    for rel in [*(r for r, _w in GATE.values()), *MERGED.values()]:
        _gone(lab, rel)
    _gone(lab, "plans/mn/NOTES.md")
    lab.commit("agent: gate twins gone", AGENT)
    lab.git("checkout", "-q", "main")
    _merge(lab, BOB, "side-g")
    lab.git("checkout", "-q", "-b", "side-m")
    for rel in MALMERGE.values():
        _gone(lab, rel)
    lab.commit("agent: mm twin gone", AGENT)
    lab.git("checkout", "-q", "main")
    _merge(lab, MALLORY, "side-m")
    # -- OCTO: a hold made and ended on the third parent of an octopus
    lab.git("checkout", "-q", "-b", "oct-one")
    lab.put("notes/one.md", "one\n")
    lab.commit("agent: one", AGENT)
    lab.branch("oct-held", "main")
    for slug, (rel, _who) in OCTO.items():
        lab.put(rel, lab.read(slug))
    lab.commit("agent: octo twins", AGENT)
    for who in (ALICE, MALLORY):
        for rel, w in OCTO.values():
            if w == who:
                _set(lab, rel, "rejected")
        lab.commit(f"{who[0]}: reject in the octo twins", who)
    for rel, _w in OCTO.values():
        _gone(lab, rel)
    lab.commit("agent: octo twins gone", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "octopus", "oct-one", "oct-held", who=MALLORY)
    # -- CROSS: criss-cross branches
    lab.git("checkout", "-q", "-b", "cross-a")
    for slug, (rel, _who) in CROSS.items():
        lab.put(rel, lab.read(slug))
    lab.commit("agent: cross twins", AGENT)
    lab.git("checkout", "-q", "-b", "cross-b")
    for who in (ALICE, MALLORY):
        for rel, w in CROSS.values():
            if w == who:
                _set(lab, rel, "rejected")
        lab.commit(f"{who[0]}: reject in the cross twins", who)
    b1 = lab.head()
    lab.git("checkout", "-q", "cross-a")
    lab.put("notes/a.md", "a\n")
    lab.commit("agent: a", AGENT)
    a2 = lab.head()
    _merge(lab, AGENT, b1)  # A3 = A2 + B1
    lab.git("checkout", "-q", "cross-b")
    _merge(lab, AGENT, a2)  # B2 = B1 + A2
    for rel, _w in CROSS.values():
        _gone(lab, rel)
    lab.commit("agent: cross twins gone", AGENT)
    lab.git("checkout", "-q", "main")
    _merge(lab, MALLORY, "cross-a")
    _merge(lab, MALLORY, "cross-b")
    # -- NOHOLD: v2 rejected by Alice (a pass between each step)
    lab.write("wv", plan_text("wv-v2"))
    lab.commit("agent: wv v2", AGENT)
    lab.run()  # P4: the releases read; wv v2 frozen
    got["released"] = lab.rows()
    lab.set_status("wv", "rejected")
    lab.commit("alice: reject wv v2", ALICE)
    lab.run()  # P5
    lab.write("wv", plan_text("wv"))
    lab.commit("agent: wv v1 back", AGENT)
    lab.run()  # P6
    lab.write("wv", plan_text("wv-v2"))
    lab.write("vr", plan_text("vr-v2"))
    lab.commit("agent: v2 back", AGENT)
    lab.run()  # P7
    # -- the approvals
    for slug in SLUGS:
        if slug not in QUORUM:
            lab.set_status(slug, "approved")
    lab.commit("bob: approve", BOB)
    for who in (BOB, CAROL):
        for slug, (_held, after) in QUORUM.items():
            if who in after:
                lab.set_status(slug, "approved")
        lab.commit(f"{who[0]}: quorum votes after", who)
    lab.run()  # P8
    lab.run()  # P9
    got["calls"] = {
        s: len(lab.calls(f"{s}2")) if s in GATED else len(lab.calls(s)) + len(lab.calls(f"{s}-v2"))
        for s in SLUGS
    }
    got["first"] = {s: len(lab.calls(s)) for s in GATED}
    got["rows"] = lab.rows()
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r91-approve-atk91d", _build)


IDS = (
    [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")]
    + [f"{s}:held" for s in HELD]
    + ["all:paused"]
)
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round91_atk91d(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.rsplit(":", 1)
    plan = f"plans/{slug}"
    row = got["rows"].get(plan, {})
    if what == "paused":
        assert set(got["paused"].values()) == {"awaiting_approval"}, got["paused"]
        assert set(got["first"].values()) == {1}, got["first"]
        return
    if what == "held":
        held = got["held"].get(plan, {})
        assert "E_PLAN_AMBIGUOUS" in json.dumps(held, ensure_ascii=False), brief(held, notes=4)
        return
    if what == "audit":
        done = row.get("status") == "completed"
        if slug in GATED:
            assert plan in got["valid"], (plan, got["valid"])
            assert done == (slug in RUNS), brief(row, notes=4)
            return
        assert (plan in got["valid"]) == done, (plan, got["valid"], brief(row, notes=4))
        assert (plan in got["valid"]) == (slug in RUNS), (plan, got["valid"])
        return
    assert got["calls"][slug] == RUNS.get(slug, 0), (got["calls"][slug], brief(row, notes=4))


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk91d", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r91d-", dir="/tmp/atk91d"))
    got = _build(out).got  # type: ignore[attr-defined]
    for key in ("held", "released", "rows"):
        got[key] = {p: brief(r, notes=4) for p, r in got[key].items()}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
