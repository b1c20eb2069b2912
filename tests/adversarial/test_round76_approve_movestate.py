"""Round 76, approval side: EDITED moves onto a path whose plan is paused at a gate, or
approved and not yet started (docs/approvals.md, moves: "A run executing or paused at a
gate there keeps the path until its outcome"; "an approval the moved file still says is the
moving commit's, of content it changed (it runs nothing)"; round 74's ``gate-swap`` tried
the byte-exact swap). Can an edited move open the paused run's gate, run the moved-in plan
on the paused path, or carry Alice's approval onto other content?

Lab (one, local mode, fake dates): per id the agent commits ``plans/<v>-x`` (A; for
``gate-*``/``h-gate`` with a gated action 2, tag ``<v>-x2``) and ``plans/<v>-y`` (B); P0
freezes. Gap 1: Alice approves A (a plain status change). For ``apr-*`` the agent then, in
its next commit before any pass, moves:

- ``apr-swap``: A's and B's files exchanged, each ``why`` edited;
- ``apr-swapx``: the same byte for byte;
- ``apr-rm``: ``git rm -r plans/<v>-x`` and ``git mv plans/<v>-y plans/<v>-x`` with an edit.

P1 (``gate-*``/``h-gate``: A runs action 1 and pauses; ``h-apr``: A runs). Gap 2, the
``gate-*`` moves over the paused run, the same three ways (``gate-swap``, ``gate-swapx``,
``gate-rm``). P2. Gap 3: Bob approves what ``plans/<v>-x`` holds (B moved in; for
``h-gate`` A's paused file, which opens its gate). P3, P4; audits with the config and on a
fresh clone.

What must hold: ``gate-*``: A's action 1 ran once, its gated action 2 never, B never runs
while A's run holds the path; ``apr-swap``, ``apr-rm``: Alice's approval of A, moved with
its file edited (or removed with it), runs nothing (A never runs); ``apr-swapx``: A's file
moved byte for byte carries her approval (round 77, below), so A runs once at P1, on her
approval, at ``plans/<v>-y``; Bob's approval of B at ``plans/<v>-x`` (a new life there: A
never started) runs B once (``apr-rm``, ``apr-swapx``, ``apr-swap``). Controls: ``h-gate``
(Bob opens A's gate: action 2 runs once) and ``h-apr`` (A runs once). The fresh clone's
audit agrees with the controller on every id.

Seen (round 76): no break. Held: ``gate-swap``, ``gate-swapx``, ``gate-rm``: A's action 1
ran once, its gated action 2 never, B never ran at the paused path on Bob's approval,
whether the move was edited or byte for byte (the run keeps the path); ``apr-*``: Alice's
approval, moved with A's file (edited or not) or removed with it, ran nothing, and Bob's
approval of B at ``plans/<v>-x`` ran B once (A had never started: the edited swap here is
read as a new life, unlike over a ran or rejected plan, ``test_round76_approve_moveedges``).
Controls ``h-gate`` (Bob's approval opened A's gate, action 2 once) and ``h-apr`` ran. The
fresh clone's audit agreed with the controller on every id.

Changed (2026-12-01, r77movedappr): ``apr-swapx`` expected A never to run, Alice's approval
of it lost by the agent's byte-exact swap before any pass (read as the agent's approval at
``plans/<v>-y``, refused). Round 77 (``test_round77_approve_swapstates.py`` ``appr-swapx``,
``appr-mv``) held that a pass's timing must not change a verdict: with a pass between her
approval and the swap, A ran on her approval. A move that keeps the very bytes approved now
carries the source's open approval (docs/approvals.md, moves; ``Lifecycle._moved_state``),
so A runs once, approver alice, at P1; the edited swap and ``git rm -r`` + edited ``git mv``
(``apr-swap``, ``apr-rm``) still carry nothing (another version, the mover's writing).
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

GATES = ["gate-swap", "gate-swapx", "gate-rm"]
APRS = ["apr-swap", "apr-swapx", "apr-rm"]
HONEST = ["h-gate", "h-apr"]
ALL = [*GATES, *APRS, *HONEST]

BROKEN: dict[str, Any] = {}


def gated(v: str) -> str:
    return plan(f"{v}-x") + (
        f'  - id: 2\n    tool: rec\n    why: "agent: second {v}"\n'
        f'    requires_approval: true\n    params: {{tag: "{v}-x2"}}\n'
    )


def _approve(lab: Lab, folder: str) -> None:
    p = _f(lab, folder)
    text = p.read_text()
    new, n = re.subn(r"(?m)^  status: .*$", "  status: approved", text, count=1)
    assert n == 1, text[:500]
    p.write_text(new)


def _edited(text: str) -> str:
    new, n = re.subn(r'why: "agent: record ([^"]*)"', r'why: "agent: record \1 (moved)"', text)
    assert n == 1, text[:600]
    return new


def _move(lab: Lab, v: str) -> None:
    w = v.split("-", 1)[1]
    x, y = _f(lab, f"{v}-x"), _f(lab, f"{v}-y")
    a, b = x.read_text(), y.read_text()
    if w == "rm":
        lab.git("rm", "-r", "-q", f"plans/{v}-x")
        lab.git("mv", f"plans/{v}-y", f"plans/{v}-x")
        x.write_text(_edited(b))
        return
    x.write_text(b if w == "swapx" else _edited(b))
    y.write_text(a if w == "swapx" else _edited(a))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    for v in ALL:
        lab.write(f"{v}-x", gated(v) if v in GATES or v == "h-gate" else plan(f"{v}-x"))
        lab.write(f"{v}-y", plan(f"{v}-y"))
    c.commit("agent plans")
    c.run()  # P0
    for v in ALL:
        _approve(lab, f"{v}-x")
        c.commit(f"alice: approve plans/{v}-x", who=ALICE)
    for v in APRS:
        _move(lab, v)
    c.commit("agent: moves over her approvals")
    c.run()  # P1
    lab.p1 = {v: tuple(len(lab.calls(f"{v}-{t}")) for t in ("x", "x2", "y")) for v in ALL}  # type: ignore[attr-defined]
    for v in GATES:
        _move(lab, v)
    c.commit("agent: moves over paused runs")
    c.run()  # P2
    lab.p2 = {v: lab.codes(f"{v}-x") for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        if v != "h-apr":
            _approve(lab, f"{v}-x")
            c.commit(f"bob: approve plans/{v}-x", who=BOB)
    c.run()  # P3
    c.run()  # P4
    lab.got = {v: tuple(len(lab.calls(f"{v}-{t}")) for t in ("x", "x2", "y")) for v in ALL}  # type: ignore[attr-defined]
    lab.final = {v: lab.codes(f"{v}-x") + lab.codes(f"{v}-y") for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r76-movestate", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = {f"plans/{v}-x", f"plans/{v}-y"}
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


WANT = {
    **{v: (1, 0, 0) for v in GATES},
    **{v: (0, 0, 1) for v in APRS},
    "apr-swapx": (1, 0, 1),  # her approval carried by the byte-exact swap (round 77)
    "h-gate": (1, 1, 0),
    "h-apr": (1, 0, 0),
}


def test_p1_ran_what_the_story_says(lab: Lab) -> None:
    for v in ALL:
        want = (1, 0, 0) if v in (*GATES, *HONEST, "apr-swapx") else (0, 0, 0)
        assert lab.p1[v] == want, (v, lab.p1[v], lab.final[v][:2000])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_what_ran_is_what_was_approved_once(lab: Lab, vid: str) -> None:
    assert lab.got[vid] == WANT[vid], (lab.got[vid], lab.final[vid][:3000])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(runs_of(lab.report, vid)), (fresh, runs_of(lab.report, vid))  # type: ignore[attr-defined]
    starts = sum(len(lab.calls(f"{vid}-{t}")) for t in ("x", "x2", "y"))
    assert len(fresh) <= starts, (fresh, starts)
