"""Round 75, approval side: moves brought by MERGES onto a path that recorded another plan
(docs/approvals.md, moves: "A plan moved in ONE commit onto the path of a plan the
controller recorded ..., frozen as another plan (``frozen.hash``) than the controller's last
commit of that path holds, starts a new life there"; "The content that ran, moved away, is a
started plan moved and never runs again"; round 74 asked it for merges too: a merge that
brings a moved plan onto such a path starts a new life as the same move on the line does).
Can an old approval, rejection or run of the path apply to the new occupant, or the moved
plan's own run be lost or doubled, when the move reaches main through a ``--no-ff`` merge,
an octopus, a merge of merges, or as a rename git pairs below 100% (an edit with the move)?

Lab (one, local mode, fake dates): per id the agent commits ``plans/<v>`` (tag ``<v>``) and
``plans/<v>-w`` (tag ``<v>-w``); P0 freezes. Gap 1: Alice approves ``<v>-w`` (kinds ``ran``,
``pick``, ``h``: one commit each, kept as X), rejects it (``hrej``), or approves ``<v>``
itself (``ranmv``: ``<v>-w`` stays pending); P1 runs what she approved. Gap 2, the move, in
ONE commit: ``git rm -r plans/<v>-w`` and ``git mv plans/<v> plans/<v>-w`` (way ``sim``: with
an edit of the ``why`` line, so git pairs it below 100%), committed by the agent per way:

- ``line``: on main (round 73's shape: the baseline);
- ``noff``: on ``agent/noff``, merged ``--no-ff`` by the agent;
- ``octo``: on ``agent/octo``, merged in an octopus with ``agent/docs`` (a docs commit);
- ``mm``: on ``agent/mm1``, merged ``--no-ff`` into ``agent/mm2`` (a docs commit), merged
  ``--no-ff`` into main;
- ``sim``: as ``noff``, the moved plan's ``why`` edited in the move's commit;
- ``simline``: as ``line``, with the same edit (is it the merge or the edit?).

P2. Gap 3: ``pick``: the agent ``git cherry-pick -X theirs`` her X (her approval of the old
occupant) onto the path; ``h``, ``hrej``, ``ranmv``: Bob approves the new occupant at
``plans/<v>-w`` (a plain status change); ``ran``: nobody. P3, P4; audits with the config
and on a fresh clone.

What must hold: ``ran-*`` and ``pick-*``: the new occupant never runs (her approval was of
the path's old plan), the old one ran once; ``ranmv-*``: the moved plan ran at P1 and never
again (``E_ALREADY_EXECUTED`` or any refusal), ``<v>-w``'s own never; controls ``h-*`` (Bob
approves the new occupant, the old one ran) and ``hrej-*`` (the old one rejected): the new
occupant runs once, approver bob, the old one not again; the fresh clone's audit agrees.

Seen (round 75): 4 ids BROKE (strict xfails; honest work refused), one class: **a plan
moved WITH AN EDIT onto a recorded path keeps the path's old state**. ``h-sim``,
``h-simline``, ``hrej-sim``, ``hrej-simline``: in ONE commit (on main, or on a branch
merged ``--no-ff``) the agent ``git rm -r``s ``plans/<v>-w`` (ran, or rejected by Alice)
and ``git mv``s ``plans/<v>`` there, editing its ``why`` line; the moved file's
``frozen.hash`` is ``<v>``'s, another than the path's recorded one. The index kept the
path's life: the row says ``completed`` (or ``rejected``), the move's ``pending_approval``
is "E_ILLEGAL_TRANSITION: agent set status pending_approval (from completed) ...; ignored",
the file is ``E_PLAN_HASH_MISMATCH`` (never re-frozen) and Bob's approval of the new
occupant is "set status approved (from completed) ...; ignored": the new occupant can never
run at that path (its own content never ran). The same move without the edit (``line``,
``noff``, ``octo``, ``mm``) starts a new life and ran once on Bob's approval. Should
(docs/plan-format.md, a path's life: "a plan moved onto the path in ONE commit ... or
brought there by a merge whose branch ... replaced it ..., frozen as another plan than the
controller last recorded there, is a new life of the path ...: its state is the moved
plan's ..., not the path's ``completed``, ``rejected`` or ``failed``, so its approval runs
it once"; docs/approvals.md, moves): a new life, the edited plan frozen anew, Bob's
approval runs it once. Nothing ran that should not: ``ran-sim``/``pick-sim`` ran nothing.
Fixed (2026-11-30, r75simmove): the history index pairs a move git would report with an
edit (``Lifecycle._edited_move``: a removed plan file whose content the path's rewritten plan
keeps at least ``likeness.MOVE_KEPT`` of, more than of the path's own old plan; git's ``-B
-M`` pair) as the byte-exact move, on the line and in a merge (``_moved_onto``,
``_merged_in``, ``_paired_from``): a new life (``_swapped_in``), the moved plan's state
(``_moved_state``), the edit still its mover's writing, re-frozen as any edit of a pending
plan; Bob's approval runs it once. Index version 67.

Held: her approval of the old occupant (``ran-*``) ran nothing at the new occupant, by
every way (the line, ``--no-ff``, an octopus, a merge of merges, with an edit); her old
approval commit cherry-picked ``-X theirs`` onto the new occupant (``pick-*``) ran nothing;
the moved plan that ran at its old path (``ranmv-*``) never ran again on Bob's approval at
the new path; controls ``h``/``hrej`` by ``line``, ``noff``, ``octo``, ``mm`` ran the new
occupant once, approver bob, the old one not again. The fresh-clone audit agreed with the
controller on every id.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOB, Lab, cases, clone_audit
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock, _f

WAYS = ["line", "noff", "octo", "mm", "sim", "simline"]
ATTACKS = [
    f"{k}-{w}" for k in ("ran", "pick", "ranmv") for w in WAYS if (k, w[:3]) != ("ranmv", "sim")
]
HONEST = [f"{k}-{w}" for k in ("h", "hrej") for w in WAYS]
ALL = [*ATTACKS, *HONEST]

BROKEN: dict[str, Any] = {}  # round 75's 4 fixed (2026-11-30, r75simmove)


def kind(v: str) -> str:
    return v.split("-", 1)[0]


def way(v: str) -> str:
    return v.split("-", 1)[1]


def _approve(lab: Lab, folder: str, status: str = "approved") -> None:
    p = _f(lab, folder)
    text = p.read_text()
    new, n = re.subn(r"(?m)^  status: .*$", f"  status: {status}", text, count=1)
    assert n == 1, text[:500]
    p.write_text(new)


def _move(lab: Lab, v: str) -> None:
    lab.git("rm", "-r", "-q", f"plans/{v}-w")
    lab.git("mv", f"plans/{v}", f"plans/{v}-w")
    if way(v).startswith("sim"):
        p = _f(lab, f"{v}-w")
        p.write_text(p.read_text().replace(f"agent: record {v}", f"agent: record {v} (moved)"))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    for v in ALL:
        lab.write(v, plan(v))
        lab.write(f"{v}-w", plan(f"{v}-w"))
    c.commit("agent plans")
    c.run()  # P0
    lab.x = {}  # type: ignore[attr-defined]
    for v in ALL:
        k = kind(v)
        if k in ("ran", "pick", "h"):
            _approve(lab, f"{v}-w")
        elif k == "hrej":
            _approve(lab, f"{v}-w", "rejected")
        else:
            _approve(lab, v)
        lab.x[v] = c.commit(f"alice: {k} {v}", who=ALICE)  # type: ignore[attr-defined]
    c.run()  # P1
    lab.p1 = {v: (len(lab.calls(v)), len(lab.calls(f"{v}-w"))) for v in ALL}  # type: ignore[attr-defined]
    of = {w: [v for v in ALL if way(v) == w] for w in WAYS}
    for v in of["line"] + of["simline"]:
        _move(lab, v)
    c.commit("agent: moves on the line")
    for w, into in (("noff", None), ("sim", None), ("octo", "agent/docs"), ("mm", "agent/mm2")):
        br = "agent/mm1" if w == "mm" else f"agent/{w}"
        c.git("checkout", "-q", "-b", br)
        for v in of[w]:
            _move(lab, v)
        c.commit(f"agent: moves ({w})")
        c.git("checkout", "-q", "main")
        if into is not None:
            c.git("checkout", "-q", "-b", into)
            (lab.repo / "docs").mkdir(exist_ok=True)
            (lab.repo / "docs" / f"{w}.md").write_text(f"{w}\n")
            c.commit(f"agent: docs ({w})")
            c.git("checkout", "-q", "main")
        if w == "octo":
            c.git("merge", "-q", "--no-ff", "-m", "octopus", br, "agent/docs")
        elif w == "mm":
            c.git("checkout", "-q", "agent/mm2")
            c.git("merge", "-q", "--no-ff", "-m", "merge mm1 into mm2", br)
            c.git("checkout", "-q", "main")
            c.git("merge", "-q", "--no-ff", "-m", "merge mm2", "agent/mm2")
        else:
            c.git("merge", "-q", "--no-ff", "-m", f"merge {br}", br)
    lab.paired = lab.git("log", "-M", "--name-status", "--format=%s", "-m", "--first-parent")  # type: ignore[attr-defined]
    c.run()  # P2
    lab.picked = {}  # type: ignore[attr-defined]
    for v in ALL:
        k = kind(v)
        if k == "pick":
            done = c.git("cherry-pick", "-X", "theirs", lab.x[v], check=False)  # type: ignore[attr-defined]
            if lab.git("status", "--porcelain").strip():
                lab.git("cherry-pick", "--abort", check=False)
            lab.picked[v] = done  # type: ignore[attr-defined]
        elif k in ("h", "hrej", "ranmv"):
            _approve(lab, f"{v}-w")
            c.commit(f"bob: approve {v}-w", who=BOB)
    c.run()  # P3
    c.run()  # P4
    lab.final = {v: lab.codes(f"{v}-w") for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r75-mergelives", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = {f"plans/{v}", f"plans/{v}-w"}
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


def test_the_lab_played_as_described(lab: Lab) -> None:
    for v in ALL:  # P1 ran what she approved, nothing else
        want = {"ran": (0, 1), "pick": (0, 1), "h": (0, 1), "hrej": (0, 0), "ranmv": (1, 0)}
        assert lab.p1[v] == want[kind(v)], (v, lab.p1[v])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ATTACKS, ATTACKS, BROKEN))
def test_the_paths_old_state_never_runs_the_new_occupant(lab: Lab, vid: str) -> None:
    k = kind(vid)
    if k == "ranmv":
        assert len(lab.calls(vid)) == 1, lab.final[vid][:2500]  # type: ignore[attr-defined]
        assert lab.calls(f"{vid}-w") == [], lab.final[vid][:2500]  # type: ignore[attr-defined]
    else:
        assert lab.calls(vid) == [], lab.final[vid][:2500]  # type: ignore[attr-defined]
        assert len(lab.calls(f"{vid}-w")) == 1, lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert len(runs_of(lab.report, vid)) == 1, runs_of(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))
def test_bobs_approval_of_the_new_occupant_runs_it_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert len(lab.calls(f"{vid}-w")) == (1 if kind(vid) == "h" else 0)
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert BOB[1] in [r["approver"] for r in runs], runs


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)) + len(lab.calls(f"{vid}-w")), fresh
    assert len(runs_of(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
