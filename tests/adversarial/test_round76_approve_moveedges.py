"""Round 76, approval side: the edges of round 75's rule that an EDITED move is a new life
(docs/approvals.md, moves: "the path's plan file rewritten with the content of a plan file
the commit removes, keeping at least half of it (``likeness.MOVE_KEPT``, by leaves) and more
of it than of the path's own old plan, is that plan moved there"; "nothing that ran (by
hash) runs again"; "The content that ran, moved away, is a started plan moved and never
runs again"). Round 75 tried ``git rm -r`` of one folder and ``git mv`` onto it. Here the
moves remove NO plan file: two plans swapped, three rotated, each edited; and a move over
two commits (both folders removed, then the content re-added at the other path, edited).

Lab (one, local mode, fake dates): per id the agent commits ``plans/<v>``, ``plans/<v>-w``
and (rotations) ``plans/<v>-x``; P0 freezes. Gap 1: Alice approves ``<v>-w`` (kinds ``ran``,
``pick``, ``h``; one commit each, kept as X), rejects it (``hrej``), or approves ``<v>``
(``ranmv``); P1 runs what she approved. Gap 2, by way, all on main:

- ``swap``: ``<v>``'s file and ``<v>-w``'s exchanged in ONE commit, each ``why`` edited;
- ``swapx``: the same, byte for byte (baseline: round 73's swap);
- ``rot``: ``<v>`` -> ``<v>-w`` -> ``<v>-x`` -> ``<v>``, each edited, ONE commit;
- ``rotx``: the same rotation byte for byte;
- ``two``: ``git rm -r`` of ``<v>`` and ``<v>-w`` in one commit, then ``<v>``'s file with its
  ``why`` edited written at ``plans/<v>-w`` in the next (a path emptied, then a new plan);
- ``swap1``: the swap with only ``<v>``'s content edited (``<v>-w``'s moves byte for byte);
- ``swapnoff``: the edited swap made on ``agent/moves``, merged ``--no-ff`` by the agent;
- ``twobr``: the two-commit move made on ``agent/moves`` (the merge sees one rewrite).

P2. Gap 3: ``pick``: the agent ``git cherry-pick -X theirs`` her X onto the path; ``h``,
``hrej``, ``ranmv``: Bob approves the new occupant of ``plans/<v>-w`` (a plain status
change); ``ran``: nobody. P3, P4; audits with the config and on a fresh clone.

What must hold: ``ran-*``, ``pick-*``: her approval of ``<v>-w``'s old plan never runs the
new occupant (``rec`` for ``<v>`` never), the old ran once; ``ranmv-{swapx,rotx}``: ``<v>``
ran at P1 and never again on Bob's approval at the new path; everywhere ``<v>-x``'s content
never runs, nothing runs twice. Controls ``h-*`` and ``hrej-*``: Bob's approval of the new
occupant runs it once, approver bob (a defence that keeps the path's old state fails them).
The fresh clone's audit agrees with the controller on every id.

Fixed (2026-12-01, r76swapedit): all 8 below. Round 75's edited-move pairing
(``Lifecycle._edited_move``) now takes any plan content that LEAVES its path in the commit,
removed or overwritten by other content (``_left_path``: the path's new content is another
plan's moved there, byte for byte or by this same rule, or keeps under half of it), and pairs
each path's new content with its likest source among them (``_likest_source``: at least
``likeness.MOVE_KEPT``, more than of the path's own old plan), on the line and in merges
(``_merged_in``): the edited swap or rotation is a new life, Bob's approval runs it once.

Seen (round 76): 8 ids BROKE (strict xfails; honest work refused), one class: **a plan
moved WITH AN EDIT by a swap or a rotation, no plan file removed, keeps the path's old
state**. ``{h,hrej}-{swap,rot,swap1,swapnoff}``: in ONE commit (on main, or on a branch
merged ``--no-ff``) the agent exchanges the files of ``plans/<v>`` and ``plans/<v>-w`` (or
rotates three), editing each ``why`` line (``swap1``: only the line of the plan moved onto
``<v>-w``); ``<v>-w`` had run (or been rejected by Alice). The index kept the path's
life: the row says ``completed`` (``rejected``), approver alice, the move's
``pending_approval`` is "E_ILLEGAL_TRANSITION: agent@example.com set status
pending_approval (from completed) ...; ignored", the file is ``E_PLAN_HASH_MISMATCH`` (never
re-frozen), and Bob's approval of the new occupant is "set status approved (from
completed) ...; ignored": ``<v>``'s content, which never ran, can never run there. The same
swap or rotation byte for byte (``swapx``, ``rotx``) starts a new life and ran once on Bob's
approval, and so did the move over two commits on the line (``two``) and on a merged
branch (``twobr``). Should (docs/approvals.md, moves:
"A plan moved in ONE commit onto the path of a plan the controller recorded (a swap of the
two files, ...) ... starts a new life there"; "A move with an edit in the same commit is
such a move too"; docs/plan-format.md, a path's life): the edited swap is a move with an
edit, a new life, the moved plan frozen anew, Bob's approval runs it once. Round 75's
``_edited_move`` pairs only "the content of a plan file the commit REMOVES"; in a swap or a
rotation no plan file is removed, the content leaves its path by being overwritten. Nothing
ran that should not: ``ran-*``/``pick-*`` ran nothing at the new occupant.

Held: her approval of the old occupant (``ran-*``) and her approval commit cherry-picked
``-X theirs`` onto the new occupant (``pick-*``) ran nothing there, by every way (edited and
byte-exact swaps and rotations, a one-sided edit, a merged branch, the two-commit move on
the line and on a branch); the moved plan that ran at P1 (``ranmv-swapx``,
``ranmv-rotx``) never ran again on Bob's approval at its new path; no rotated ``<v>-x``
content ever ran; controls ``h``/``hrej`` by ``swapx``, ``rotx``, ``two``, ``twobr`` ran
the new occupant once, approver bob. The fresh-clone audit agreed with the controller
on every id (the broken ones included: both say nothing ran).
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

WAYS = ["swap", "swapx", "rot", "rotx", "two", "swap1", "swapnoff", "twobr"]
BRANCHED = ("swapnoff", "twobr")
ATTACKS = [f"{k}-{w}" for k in ("ran", "pick") for w in WAYS]
ATTACKS += ["ranmv-swapx", "ranmv-rotx"]
HONEST = [f"{k}-{w}" for k in ("h", "hrej") for w in WAYS]
ALL = [*ATTACKS, *HONEST]

BROKEN: dict[str, Any] = {}  # round 76's 8 fixed (2026-12-01, r76swapedit)


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


def _edited(text: str) -> str:
    new, n = re.subn(r'why: "agent: record ([^"]*)"', r'why: "agent: record \1 (moved)"', text)
    assert n == 1, text[:600]
    return new


def _move(lab: Lab, v: str) -> None:
    w = way(v)
    ring = [v, f"{v}-w", f"{v}-x"] if w.startswith("rot") else [v, f"{v}-w"]
    texts = [_f(lab, f).read_text() for f in ring]
    for i, f in enumerate(ring):  # ring[i]'s content goes to ring[i + 1]
        text = texts[i - 1]
        keep = w.endswith("x") or (w == "swap1" and i != 1)
        _f(lab, f).write_text(text if keep else _edited(text))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    for v in ALL:
        lab.write(v, plan(v))
        lab.write(f"{v}-w", plan(f"{v}-w"))
        if way(v).startswith("rot"):
            lab.write(f"{v}-x", plan(f"{v}-x"))
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
    lab.old = {v: _f(lab, v).read_text() for v in ALL if way(v).startswith("two")}  # type: ignore[attr-defined]
    for branch in (False, True):
        if branch:
            c.git("checkout", "-q", "-b", "agent/moves")
        for v in ALL:
            if (way(v) in BRANCHED) != branch:
                continue
            if way(v).startswith("two"):
                lab.git("rm", "-r", "-q", f"plans/{v}", f"plans/{v}-w")
            else:
                _move(lab, v)
        c.commit(f"agent: swaps, rotations, removals ({branch})")
        for v in ALL:
            if way(v).startswith("two") and (way(v) in BRANCHED) == branch:
                lab.write(f"{v}-w", _edited(lab.old[v]))  # type: ignore[attr-defined]
        c.commit(f"agent: re-added with an edit ({branch})")
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "merge agent/moves", "agent/moves")
    c.run()  # P2
    lab.p2 = {v: lab.codes(f"{v}-w") for v in ALL}  # type: ignore[attr-defined]
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
    return shared(tmp_path_factory, "r76-moveedges", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = {f"plans/{v}", f"plans/{v}-w", f"plans/{v}-x"}
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


def test_the_lab_played_as_described(lab: Lab) -> None:
    for v in ALL:  # P1 ran what she approved, nothing else
        want = {"ran": (0, 1), "pick": (0, 1), "h": (0, 1), "hrej": (0, 0), "ranmv": (1, 0)}
        assert lab.p1[v] == want[kind(v)], (v, lab.p1[v])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ATTACKS, ATTACKS, BROKEN))
def test_no_old_approval_or_run_applies_to_the_new_occupant(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-x") == [], lab.final[vid][:2500]  # type: ignore[attr-defined]
    if kind(vid) == "ranmv":
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
    assert lab.calls(f"{vid}-x") == []
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert BOB[1] in [r["approver"] for r in runs], runs


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    want = len(lab.calls(vid)) + len(lab.calls(f"{vid}-w")) + len(lab.calls(f"{vid}-x"))
    assert len(fresh) == want, fresh
    assert len(runs_of(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
