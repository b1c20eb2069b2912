"""Round 77, approval side: an edited swap or rotation (round 76, docs/approvals.md, moves:
"a content leaves its path when its file is removed or overwritten by other content ... the
path's new content is paired with its likest source") whose one leg is NOT a fresh pending
plan: one that ran, one rejected, one approved and not yet run, one converted from a writer's
``PLAN.json``, and unconverted sources swapped; and the swap undone (the original bytes
written back) after a pass.

Lab (one, local mode, fake dates). Per id ``plans/<v>`` holds plan A (tag ``<v>``) and
``plans/<v>-w`` the agent's W (tag ``<v>-w``), ``plans/<v>-x`` for rotations. A is the
agent's ``PLAN.yml`` for ``ran-*``, ``rej-*``, ``appr-*``; BOB's ``PLAN.json`` (converted at
P0) for ``conv-*`` and ``conva-*``; for ``src-*``/``srca-*`` Bob commits A as
``plans/<v>/PLAN.json`` and the agent W (and X) as ``PLAN.json`` just before the move, no pass
between (the SOURCES are swapped). P0. Gap 1: Alice approves A (``ran-*``; P1 runs it) or
rejects it (``rej-*``). P1. Gap 2: Alice approves A (``appr-*``) in one commit, then, in ONE
agent commit, by way:

- ``swap``: A's file and W's exchanged, each first ``why`` edited;
- ``swapx``: the same byte for byte (baseline);
- ``swap1`` (sources): only A's source edited;
- ``rot``: ``<v>`` -> ``<v>-w`` -> ``<v>-x`` -> ``<v>``, each edited;
- ``mv`` (``appr`` only, the baseline of ``appr-swapx``): ``git mv plans/<v> plans/<v>-w``
  into a new folder (W is at ``plans/<v>-x``, not moved);
- ``undo``: the edited swap; P2; then the agent writes both ORIGINAL files back (gap 3).

P2, P3. Gap 4: A's copy (at ``<v>-w``; ``<v>`` for ``undo``) is approved by BOB for
``ran``, ``rej``, ``conv``, ``src`` (Bob WROTE the last two), by ALICE for ``conva``,
``srca``, by nobody for ``appr`` (the copy still says ``approved``: hers, made for A); Bob
approves the agent's content at the other path (W or X) for ``ran``, ``rej``, ``appr``;
Alice for the rest (Bob wrote a folder it moved into). P4, P5; audits.

What must hold: ``ran-*``: A ran once at P1, never again (by hash for ``swapx``, ``undo``);
its EDITED copy (``swap``, ``rot``), which still says ``status: completed`` and carries A's
``frozen``/``execution`` blocks, runs nothing on Bob's status change either (held as seen
below); ``rej-*``: the withdrawn version never runs (a withdrawal's veto follows the hash),
nor its edited copy still saying ``rejected``; ``appr-swap``, ``appr-rot``: her approval of A
never runs the agent's edited copy ("an approval the moved file still says is the moving
commit's, of content it changed (it runs nothing)"); ``appr-swapx``, ``appr-mv`` (controls):
the byte-exact move carries her approval ("its state is the moved plan's ... the status its
source had"), A runs once, approver alice; ``conv-*``, ``src-*``: Bob wrote A, his approval of
its copy is ``E_SELF_APPROVAL`` (round 75: converted content takes the source's writers),
``rec`` for ``<v>`` never ran; controls ``conva-*``, ``srca-*``: Alice's runs it once.
Everywhere the approval of the agent's moved content (by Bob; by Alice where Bob wrote the
folder: "The path's writers stay") runs it once, and the fresh clone's audit agrees.

Seen (round 77): 2 ids BROKE (strict xfails; honest work refused), one class, both fixed
(2026-12-01, r77movedappr): a move whose file says ``approved`` and keeps the very bytes its
source held approved carries the source's open first approval, its request (commit, author,
kind) too, as it carries any other status its source had (``Lifecycle._moved_state``,
``_carries_approval``; on the line and in merges), and the audit hears the request at the new
path; an edited move, or an approval made by the move's own commit, stays the mover's (index
version 88). As found: **an approval committed before a byte-exact move, with no pass
between, is read as the mover's**.
``appr-swapx``: Alice sets ``approved`` on the agent's ``plans/<v>`` (one commit), then the
agent exchanges the files of ``plans/<v>`` and ``plans/<v>-w`` byte for byte (next commit);
the pass reads "approval request (approve) by agent@example.com" at ``plans/<v>-w`` and
refuses ``E_APPROVER_NOT_ALLOWED: agent@example.com (author of <move>) is not an approver``:
the version she approved never runs. ``appr-mv``: the same with a plain ``git mv plans/<v>
plans/<v>-w`` into a new folder. Should (docs/approvals.md, moves: "A move that keeps a plan
file's bytes ... writes nothing"; "Every other status a move carries is a status CHANGE of
the moved plan, from the state its source had (round 72, ``Lifecycle._moved_state``)"; "its
state is the moved plan's ... the status its source had"): the source's state was
``approved`` by Alice in history, the move changed nothing, her approval of that very
version runs it once (or the docs should say that an approval not yet read by a pass does not
survive a move: re-approve after it). Nothing ran that should not.

Also seen, held (not a break): the EDITED copy of a completed or rejected plan
(``ran-swap``, ``ran-rot``, ``rej-swap``, ``rej-rot``), whose file still says ``completed`` /
``rejected`` with A's ``frozen`` block, is a new life ("E_ILLEGAL_TRANSITION: agent set status
completed (from nothing); ignored") that is NOT frozen anew at the move's pass; Bob's status
change to ``approved`` is ``E_PLAN_HASH_MISMATCH`` and only then the controller freezes it.
Safe (nothing runs twice), though the move's pass could freeze it at once.

Held: a byte-exact or undone swap of a ran plan never ran it again (``E_ALREADY_EXECUTED``);
a rejected version moved or restored never ran; the agent's edited copy of Alice's approved
plan ran nothing; Bob's converted ``PLAN.json`` (``conv-*``: swapped, rotated, swapped and
undone after a pass) and his unconverted source swapped with the agent's sources (``src-*``,
one or both legs edited, rotated) stayed his: ``E_SELF_APPROVAL``, never ran; Alice's
approval of the same ran once; Bob, a writer of the folder the agent's content moved INTO,
was refused there too (the folder's writers stay). The fresh-clone audit agreed on every id.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOB, Lab, cases, clone_audit, load_yaml
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock, _f

IDS = {
    "ran": ["swap", "swapx", "rot", "undo"],
    "rej": ["swap", "swapx", "rot", "undo"],
    "appr": ["swap", "swapx", "rot", "mv"],
    "conv": ["swap", "rot", "undo"],
    "conva": ["swap", "rot", "undo"],
    "src": ["swap", "swap1", "rot"],
    "srca": ["swap", "swap1", "rot"],
}
ALL = [f"{k}-{w}" for k, ws in IDS.items() for w in ws]
SELF = [v for v in ALL if v.startswith(("conv-", "src-"))]

# round 77's appr-swapx, appr-mv: fixed (2026-12-01, r77movedappr)
BROKEN: dict[str, Any] = {}


def kind(v: str) -> str:
    return v.split("-", 1)[0]


def way(v: str) -> str:
    return v.split("-", 1)[1]


def name(v: str) -> str:
    return "PLAN.json" if kind(v) in ("src", "srca") else "PLAN.yml"


def ring(v: str) -> list[str]:
    if way(v) == "mv":
        return [v, f"{v}-x"]
    return [v, f"{v}-w", f"{v}-x"] if way(v) == "rot" else [v, f"{v}-w"]


def home(v: str) -> str:
    return v if way(v) == "undo" else f"{v}-w"


def other(v: str) -> tuple[str, str]:
    """(folder, tag) of the agent's content Bob approves at gap 4."""
    if way(v) == "undo":
        return f"{v}-w", f"{v}-w"
    if way(v) == "rot":
        return v, f"{v}-x"
    if way(v) == "mv":
        return f"{v}-x", f"{v}-x"
    return v, f"{v}-w"


def bobs_other(v: str) -> tuple[str, str]:
    """Who approves the agent's content at the other path: the folders Bob wrote are his."""
    return ALICE if kind(v) in ("conv", "conva", "src", "srca") else BOB


def as_json(slug: str) -> str:
    return json.dumps(load_yaml(plan(slug)), indent=2) + "\n"


def _edited(t: str) -> str:
    new, n = re.subn(r'(why"?: "[^"]*)"', r'\1 (moved)"', t, count=1)
    assert n == 1, t[:600]
    return new


def _status(lab: Lab, folder: str, status: str = "approved") -> None:
    p = _f(lab, folder)
    t = p.read_text()
    new, n = re.subn(r"(?m)^  status: .*$", f"  status: {status}", t, count=1)
    assert n == 1, t[:800]
    p.write_text(new)


def _move(lab: Lab, v: str) -> None:
    if way(v) == "mv":
        lab.git("mv", f"plans/{v}", f"plans/{v}-w")
        return
    r, fn = ring(v), name(v)
    texts = [_f(lab, f, fn).read_text() for f in r]
    for i, f in enumerate(r):  # r[i - 1]'s content goes to r[i]
        keep = way(v) == "swapx" or (way(v) == "swap1" and i == 0)
        _f(lab, f, fn).write_text(texts[i - 1] if keep else _edited(texts[i - 1]))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    for v in ALL:
        if kind(v) in ("conv", "conva"):
            lab.write(v, as_json(v), "PLAN.json")
    c.commit("bob: his plans as PLAN.json", who=BOB)
    for v in ALL:
        if kind(v) not in ("src", "srca"):
            for f in ring(v):
                if f != v or kind(v) not in ("conv", "conva"):
                    lab.write(f, plan(f))
    c.commit("agent plans")
    c.run()  # P0
    lab.p0 = {
        v: sorted(p.name for p in (lab.repo / "plans" / v).iterdir()) for v in ALL if "conv" in v
    }  # type: ignore[attr-defined]
    for v in ALL:
        if kind(v) in ("ran", "rej"):
            _status(lab, v, "approved" if kind(v) == "ran" else "rejected")
    c.commit("alice: approve or reject", who=ALICE)
    c.run()  # P1
    lab.p1 = {v: (len(lab.calls(v)), lab.codes(v)) for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        if kind(v) in ("src", "srca"):
            lab.write(v, as_json(v), "PLAN.json")
    c.commit("bob: his sources", who=BOB)
    for v in ALL:
        if kind(v) in ("src", "srca"):
            for f in ring(v)[1:]:
                lab.write(f, as_json(f), "PLAN.json")
    c.commit("agent: sources")
    for v in ALL:
        if kind(v) == "appr":
            _status(lab, v)
    c.commit("alice: approve", who=ALICE)
    lab.orig = {v: [_f(lab, f, name(v)).read_text() for f in ring(v)] for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        _move(lab, v)
    c.commit("agent: swaps and rotations")
    c.run()  # P2
    lab.p2 = {v: (lab.codes(v), lab.codes(f"{v}-w")) for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        if way(v) == "undo":
            for f, t in zip(ring(v), lab.orig[v], strict=True):  # type: ignore[attr-defined]
                _f(lab, f, name(v)).write_text(t)
    c.commit("agent: the swaps undone")
    c.run()  # P3
    for who in (ALICE, BOB):
        for v in ALL:
            if (who == ALICE) == (kind(v) in ("conva", "srca")) and kind(v) != "appr":
                _status(lab, home(v))
            if who == bobs_other(v):
                _status(lab, other(v)[0])
        c.commit(f"{who[0].lower()}: approve", who=who)
    c.run()  # P4
    c.run()  # P5
    lab.final = {v: lab.codes(home(v)) for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r77-swapstates", _build)


def want(v: str) -> tuple[int, str | None]:
    """How often A's tag runs in all, and the approver of its last run."""
    k, w = kind(v), way(v)
    if k == "ran":
        return 1, ALICE[1]
    if k == "rej":
        return 0, None
    if k == "appr":
        return (1, ALICE[1]) if w in ("swapx", "mv") else (0, None)
    if k in ("conv", "src"):
        return 0, None
    return 1, ALICE[1]


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = {f"plans/{v}", f"plans/{v}-w", f"plans/{v}-x"}
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_a_copy_runs_as_its_version_allows(lab: Lab, vid: str) -> None:
    n, approver = want(vid)
    assert len(lab.calls(vid)) == n, (lab.p1[vid], lab.p2[vid], lab.final[vid][:2500])  # type: ignore[attr-defined]
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == n + 1, runs
    if approver:
        assert approver in [r["approver"] for r in runs], runs


@pytest.mark.parametrize("vid", cases(SELF, SELF, BROKEN))
def test_bob_cannot_approve_his_own_plans_copy(lab: Lab, vid: str) -> None:
    assert "E_SELF_APPROVAL" in lab.final[vid], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert BOB[1] not in [
        r["approver"]
        for r in runs_of(lab.report, vid)  # type: ignore[attr-defined]
        if r.get("plan") == f"plans/{home(vid)}"
    ]


@pytest.mark.parametrize("vid", ALL)
def test_bobs_approval_of_the_agents_moved_plan_runs_it_once(lab: Lab, vid: str) -> None:
    folder, tag = other(vid)
    assert len(lab.calls(tag)) == 1, lab.codes(folder)[:2500]


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    mine = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert len(mine) == len(fresh), (mine, fresh)
    assert sorted(str(e.get("approver")) for e in mine) == sorted(
        str(e.get("approver")) for e in fresh
    )
