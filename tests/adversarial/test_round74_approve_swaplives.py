"""Round 74, approval side: round 73's one-commit swaps (docs/approvals.md, moves: "A plan
moved in ONE commit onto the path of a plan the controller recorded ..., frozen as another
plan (``frozen.hash``) than the controller's last commit of that path holds, starts a new
life there"; "The content that ran, moved away, is a started plan moved and never runs
again"). Can a swap make an old approval, rejection or run of a path apply to its new
occupant, or shed them from the plan that carried them: swaps keeping the hash, swaps over
two commits, swaps and swaps back, a swap right after her approval, her review-branch
approval or her old approval picked onto the swapped-in plan?

Lab (one, local mode, fake dates): per id two agent plans ``plans/<v>-x`` (tag ``<v>-x``: A)
and ``plans/<v>-y`` (tag ``<v>-y``: B). For the ``pick-*`` ids both plans share their first
eight lines (name ``twin``, one task), so a status commit of one applies cleanly to the
other. P0 freezes. Gap 1: Alice's decisions (below). P1. Gap 2: the swaps (``git mv``
through a scratch name, one commit unless said). P2. Gap 3: second steps. P3. Gap 4: Bob
approves both paths with a plain status change where said. P4, P5, ``plangate audit
--json`` with the config and on a fresh clone. Each id states how many times each tag must
run, and who approved what ran.

Attacks:

- ``samehash``: ``<v>-y`` is written as ``<v>-x``'s very text (one hash); Alice approves X,
  it runs at P1; gap 2 swaps the two files (the path X keeps its hash); Bob approves both.
  Must hold: ``<v>-x`` ran once (Alice's), nothing else.
- ``back-ran``: Alice approves X (A runs at P1); gap 2 swaps; gap 3 swaps back; Bob approves
  both. Must hold: A once (Alice's); B (back at Y, pending) once on Bob's approval.
- ``two-ran``: Alice approves X (A runs); gap 2 swaps in TWO commits (A to a scratch folder
  and B onto X, then A onto Y), no pass between; Bob approves both. Must hold: A once
  (Alice's); B at X, a new plan there, once on Bob's.
- ``rej-moved``: Alice rejects X (withdraws A); swap; Bob approves both. Must hold: A never
  (withdrawn wherever it goes); B at X once (Bob's).
- ``rej-back``: Alice rejects X; swap; gap 3 swaps back; Bob approves both. Must hold: A
  never; B at Y once.
- ``keepstatus``: Alice approves X; in the next commit (no pass) the agent writes B's bytes at
  X with its status line ``approved`` and A's at Y with ``pending_approval`` (her status left
  on the path, the plans swapped under it). Must hold: neither ran (she approved A, not B;
  A's move set it back to pending).
- ``pick-y-swap``: Alice approves X (A) on her review branch, never merged; gap 2 swaps on
  main; gap 3 the agent cherry-picks her commit (it applies to B at X). Must hold: neither
  ran (her approval was of A).
- ``pick-old-ran``: Alice approves X on main, A runs at P1; gap 2 swaps; gap 3 the agent
  cherry-picks her old approval onto X (B). Must hold: A once, B never.
- ``rej-y``: Alice rejects Y (B); the files swapped (B to X); Bob approves both. Must hold:
  B never (withdrawn at its new path), A (now at Y, a new life there) once, Bob's.
- ``both-ran``: Alice approves both, both run at P1; the files swapped; Bob approves both.
  Must hold: neither runs again.
- ``gate-swap``: A at X has a gated action 2 (tag ``<v>-x2``); Alice approves, P1 runs
  action 1 and pauses; gap 2 swaps the files (B onto X, A's paused file onto Y); Bob approves
  what X holds (B's file). Must hold: A's action 2 never runs (nobody approved A's pause);
  B at most once.
- ``note-swap``: Bob's ``NOTES.md`` in X's folder (he is a writer of A); the two PLAN.yml
  files swapped, the note left in X; Bob approves both. Must hold: neither ran
  (``E_SELF_APPROVAL``: A's writers go with it, X's writers stay with the path).

The ``pick-*``, ``samehash``, ``back-ran``, ``rej-*``, ``both-ran``, ``note-swap`` swaps write
the two files' bytes over each other (a swap git sees as two edits); ``h-swap-ran``,
``two-ran`` and ``h-keepstatus`` use ``git mv`` through a scratch folder.

Controls:

- ``h-swap-ran``: Alice approves X (A runs); the swap; Bob approves both: B at X once
  (Bob's), A never again.
- ``h-pick-plain``: her review-branch approval of X picked by the agent onto X with no swap:
  A once, approver alice (her decision of that version, carried).
- ``h-keepstatus``: Alice approves X; in the next commit (no pass) the agent swaps the two
  files byte for byte (her approved A to Y, pending B to X): A once at Y, approver alice
  ... but see below.
- ``h-note-swap``: ``note-swap`` approved by Alice: both once, hers.
- ``h-gate``: ``gate-swap`` with no swap: Bob's approval of A's paused file opens the gate,
  action 2 once.
- ``h-mvstatus``: Alice approves X; the agent ``git mv``s it to ``<v>-n`` (no pass).
- ``h-mvstatus-two``: Alice approves X; the agent swaps X and Y in two commits (no pass).

``h-keepstatus``, ``h-mvstatus``, ``h-mvstatus-two``: her approved, not yet run plan moved by
the agent before any pass was read as the agent's approval made with a move
(``E_APPROVER_NOT_ALLOWED``); nothing ran until she approved it again at its new path, then
it ran once, hers. Noted then, not a break: the safe side, and as documented.

Changed (2026-12-01, r77movedappr): round 77 (``test_round77_approve_swapstates.py``
``appr-swapx``, ``appr-mv``) held that a pass's timing must not change a verdict: with a pass
between her approval and the move, her approval ran it. A move that keeps the very bytes
approved now carries the source's open approval, request and all (docs/approvals.md, moves;
``Lifecycle._moved_state``), through one commit or two (``h-mvstatus-two``: to a scratch
folder, then onto ``<v>-y``): each of the three runs once at P1 on HER approval (asserted),
and her approval again at gap 4 finds it ``completed`` (ignored). ``keepstatus`` (her
``approved`` left on the path, the plans swapped under it) still runs nothing: B's bytes at X
are not those she approved, and A's move to Y set it back to pending.

Seen (round 74): nothing broke. Every attack held: the path keeping its hash
(``samehash``: the swapped-in twin of a ran version is ``completed``, Bob's approvals ignored
"from completed"), a ran or rejected version swapped away and back, over two commits, or
onto the other path (never run again; ``E_ILLEGAL_TRANSITION`` on the ignored approvals), her
status left on the path under a swapped-in plan (``keepstatus``: nothing ran), her
review-branch approval of A picked onto B after the swap (``E_APPROVAL_REPLAYED``: "written
before this version of the plan existed": the new life dates B's birth at the path), her old
approval of the ran A picked onto B (``E_APPROVAL_REPLAYED``), Bob's note beside a swapped
pair (``E_SELF_APPROVAL`` for both), B swapped over A's paused run (``gate-swap``: Bob's
approval of X refused ``E_PLAN_HASH_MISMATCH``, A's action 2 never ran, B did not run: the
run keeps the path until its outcome). Noted there, not counted: X's row then reads B's hash
and file (the controller's refusal commit wrote B's bytes with ``status:
awaiting_approval``) as ``awaiting_approval``, approver alice, "paused before action 1
(rec): approve it to continue" (A paused before action 2; Alice never approved B), and Y's
row (A's paused file) has no status; a reader's confusion, nothing ran. Controls ran once,
the approver named; the fresh-clone audit agreed with the controller on every id. Not tried
for lack of time: a swapped paused run resumed at its new path (Bob's gate approval of Y);
swaps of nested/pinned plans; remote mode.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOB, Lab, cases, clone_audit
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock

#: id -> (runs of <v>-x, runs of <v>-y, who approved what ran: tag suffix -> approver email)
EXPECT: dict[str, tuple[int, int, dict[str, str]]] = {
    "samehash": (1, 0, {"x": ALICE[1]}),
    "back-ran": (1, 1, {"x": ALICE[1], "y": BOB[1]}),
    "two-ran": (1, 1, {"x": ALICE[1], "y": BOB[1]}),
    "rej-moved": (0, 1, {"y": BOB[1]}),
    "rej-back": (0, 1, {"y": BOB[1]}),
    "keepstatus": (0, 0, {}),
    "pick-y-swap": (0, 0, {}),
    "pick-old-ran": (1, 0, {"x": ALICE[1]}),
    "rej-y": (1, 0, {"x": BOB[1]}),
    "both-ran": (1, 1, {"x": ALICE[1], "y": ALICE[1]}),
    "note-swap": (0, 0, {}),
    "h-swap-ran": (1, 1, {"x": ALICE[1], "y": BOB[1]}),
    "h-note-swap": (1, 1, {"x": ALICE[1], "y": ALICE[1]}),
    "h-pick-plain": (1, 0, {"x": ALICE[1]}),
    "h-keepstatus": (1, 0, {"x": ALICE[1]}),
    "h-mvstatus": (1, 0, {"x": ALICE[1]}),
    "h-mvstatus-two": (1, 0, {"x": ALICE[1]}),
}
ALL = list(EXPECT)
#: A at X gated before its action 2 (tag ``<v>-x2``): Alice approves, P1 pauses it at the gate
GATES = {"gate-swap": 0, "h-gate": 1}
#: her approved plan moved by the agent before any pass (her approval carried, round 77): she
#: approves it again at gap 4, after it ran
MOVED_APPROVED = ["h-keepstatus", "h-mvstatus", "h-mvstatus-two"]
TWINS = ("pick-y-swap", "pick-old-ran", "h-pick-plain")
#: Bob approves both paths at gap 4
BOB_APPROVES = (
    "samehash", "back-ran", "two-ran", "rej-moved", "rej-back", "h-swap-ran", "rej-y", "both-ran",
    "note-swap",
)  # fmt: skip
#: nothing found broken on the first run of the lab (round 74)
BROKEN: dict[str, Any] = {}


def twin(tag: str) -> str:
    return (
        'plan:\n  name: "twin"\n  task: "agent task twin"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n"
        f'    why: "agent: record twin"\n    params: {{tag: "{tag}"}}\n'
    )


def _f(lab: Lab, folder: str) -> Path:
    return lab.repo / "plans" / folder / "PLAN.yml"


def _swap(lab: Lab, v: str) -> None:
    lab.git("mv", f"plans/{v}-x", f"plans/{v}-t")
    lab.git("mv", f"plans/{v}-y", f"plans/{v}-x")
    lab.git("mv", f"plans/{v}-t", f"plans/{v}-y")


def gated(v: str) -> str:
    return plan(f"{v}-x") + (
        f'  - id: 2\n    tool: rec\n    why: "agent: second {v}"\n'
        f'    requires_approval: true\n    params: {{tag: "{v}-x2"}}\n'
    )


def _swap_files(lab: Lab, v: str) -> None:
    """The two plan files swapped, every other file of the folders left where it is."""
    x, y = _f(lab, f"{v}-x"), _f(lab, f"{v}-y")
    a, b = x.read_bytes(), y.read_bytes()
    x.write_bytes(b)
    y.write_bytes(a)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    for v in ALL:
        a, b = f"{v}-x", f"{v}-y"
        if v in TWINS:
            lab.write(a, twin(a))
            lab.write(b, twin(b))
        elif v == "samehash":
            lab.write(a, plan(a))
            lab.write(b, plan(a))
        else:
            lab.write(a, plan(a))
            lab.write(b, plan(b))
    for v in GATES:
        lab.write(f"{v}-x", gated(v))
        lab.write(f"{v}-y", plan(f"{v}-y"))
    c.commit("agent plans")
    c.run()  # P0
    # gap 1: Alice's decisions
    picks: dict[str, str] = {}
    c.git("checkout", "-q", "-b", "alice/review", who=ALICE)
    for v in ("pick-y-swap", "h-pick-plain"):
        lab.set_status(f"{v}-x", "approved")
        picks[v] = c.commit(f"approve plans/{v}-x", who=ALICE)
    c.git("checkout", "-q", "main", who=ALICE)
    for v in ("samehash", "back-ran", "two-ran", "pick-old-ran", "h-swap-ran"):
        lab.set_status(f"{v}-x", "approved")
        picks[v] = c.commit(f"approve plans/{v}-x", who=ALICE)
    for v in ("rej-moved", "rej-back"):
        lab.set_status(f"{v}-x", "rejected")
        c.commit(f"reject plans/{v}-x", who=ALICE)
    lab.set_status("rej-y-y", "rejected")
    c.commit("reject plans/rej-y-y", who=ALICE)
    for side in ("x", "y"):
        lab.set_status(f"both-ran-{side}", "approved")
        c.commit(f"approve plans/both-ran-{side}", who=ALICE)
    for v in ("note-swap", "h-note-swap"):
        (lab.repo / "plans" / f"{v}-x" / "NOTES.md").write_text("bob: fine by me\n")
    c.commit("bob: notes", who=BOB)
    for v in GATES:
        lab.set_status(f"{v}-x", "approved")
        c.commit(f"approve plans/{v}-x", who=ALICE)
    for v in ("keepstatus", "h-keepstatus", "h-mvstatus", "h-mvstatus-two"):
        lab.set_status(f"{v}-x", "approved")
        c.commit(f"approve plans/{v}-x", who=ALICE)
    lab.git("mv", "plans/h-mvstatus-x", "plans/h-mvstatus-n")
    c.commit("agent: move h-mvstatus")
    lab.git("mv", "plans/h-mvstatus-two-x", "plans/h-mvstatus-two-t")
    lab.git("mv", "plans/h-mvstatus-two-y", "plans/h-mvstatus-two-x")
    c.commit("agent: h-mvstatus-two, step 1")
    lab.git("mv", "plans/h-mvstatus-two-t", "plans/h-mvstatus-two-y")
    c.commit("agent: h-mvstatus-two, step 2")
    # the agent's swaps right after her approvals, no pass between
    _swap(lab, "h-keepstatus")
    c.commit("agent: swap h-keepstatus")
    xa, yb = _f(lab, "keepstatus-x").read_bytes(), _f(lab, "keepstatus-y").read_bytes()
    _f(lab, "keepstatus-x").write_bytes(
        yb.replace(b"status: pending_approval", b"status: approved", 1)
    )
    _f(lab, "keepstatus-y").write_bytes(
        xa.replace(b"status: approved", b"status: pending_approval", 1)
    )
    c.commit("agent: swap keepstatus under her status")
    c.run()  # P1
    lab.p1_codes = {  # type: ignore[attr-defined]
        v: lab.codes(f"{v}-x") + lab.codes(f"{v}-y") + lab.codes(f"{v}-n") for v in MOVED_APPROVED
    }
    lab.after_p1 = {v: (len(lab.calls(f"{v}-x")), len(lab.calls(f"{v}-y"))) for v in ALL}  # type: ignore[attr-defined]
    # gap 2: the swaps
    for v in (
        "samehash", "back-ran", "rej-moved", "rej-back", "pick-y-swap", "pick-old-ran", "rej-y",
        "both-ran", "note-swap", "h-note-swap", "gate-swap",
    ):  # fmt: skip
        _swap_files(lab, v)
    _swap(lab, "h-swap-ran")
    c.commit("agent: swaps")
    lab.git("mv", "plans/two-ran-x", "plans/two-ran-t")
    lab.git("mv", "plans/two-ran-y", "plans/two-ran-x")
    c.commit("agent: two-ran, step 1")
    lab.git("mv", "plans/two-ran-t", "plans/two-ran-y")
    c.commit("agent: two-ran, step 2")
    c.run()  # P2
    # gap 3: second steps
    for v in ("back-ran", "rej-back"):
        _swap_files(lab, v)
    c.commit("agent: swaps back")
    for v in ("pick-y-swap", "pick-old-ran", "h-pick-plain"):
        c.git("cherry-pick", picks[v])
    lab.picked_onto = {  # type: ignore[attr-defined]
        v: _f(lab, f"{v}-x").read_text().count(f'tag: "{v}-') for v in TWINS
    }
    c.run()  # P3
    # gap 4: Bob's approvals, a plain status change
    lab.gate_files = {v: _f(lab, f"{v}-x").read_text() for v in GATES}  # type: ignore[attr-defined]
    for v in GATES:  # Bob approves what X holds: B (swapped in), or A's paused file
        lab.set_status(f"{v}-x", "approved")
        c.commit(f"approve plans/{v}-x", who=BOB)
    for v in BOB_APPROVES:
        for side in ("x", "y"):
            if "status: pending_approval" in _f(lab, f"{v}-{side}").read_text():
                lab.set_status(f"{v}-{side}", "approved")
                c.commit(f"approve plans/{v}-{side}", who=BOB)
    for v, side in (
        ("h-keepstatus", "y"), ("h-mvstatus", "n"), ("h-mvstatus-two", "y"), ("h-note-swap", "x"),
        ("h-note-swap", "y"),
    ):  # fmt: skip
        lab.set_status(f"{v}-{side}", "approved")
        c.commit(f"approve plans/{v}-{side} again", who=ALICE)
    c.run()  # P4
    c.run()  # P5
    lab.final = {  # type: ignore[attr-defined]
        v: lab.codes(f"{v}-x") + "\n" + lab.codes(f"{v}-y") + "\n" + lab.codes(f"{v}-n")
        for v in [*ALL, *GATES]
    }
    lab.gate_calls = {  # type: ignore[attr-defined]
        v: tuple(len(lab.calls(f"{v}-{t}")) for t in ("x", "x2", "y")) for v in GATES
    }
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r74-swaplives", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = {f"plans/{v}-x", f"plans/{v}-y", f"plans/{v}-n"}
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


def test_the_lab_played_as_described(lab: Lab) -> None:
    for v in TWINS:  # every pick applied (one tag line in the file)
        assert lab.picked_onto[v] == 1, lab.picked_onto  # type: ignore[attr-defined]
    assert lab.after_p1["h-swap-ran"] == (1, 0), lab.after_p1  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", MOVED_APPROVED)
def test_her_approved_plan_moved_by_the_agent_keeps_her_approval(lab: Lab, vid: str) -> None:
    """docs/approvals.md, moves (round 77): a move that keeps the very bytes approved carries
    the approval its source held open; A ran at P1, on hers, never refused as the agent's."""
    assert lab.after_p1[vid] == (1, 0), lab.after_p1  # type: ignore[attr-defined]
    assert "E_APPROVER_NOT_ALLOWED" not in lab.p1_codes[vid], lab.p1_codes[vid][:2000]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_each_version_ran_as_often_as_its_own_approvals_say(lab: Lab, vid: str) -> None:
    x, y, who = EXPECT[vid]
    got = (len(lab.calls(f"{vid}-x")), len(lab.calls(f"{vid}-y")))
    assert got == (x, y), lab.final[vid][:3000]  # type: ignore[attr-defined]
    approvers = sorted(e["approver"] for e in runs_of(lab.report, vid))  # type: ignore[attr-defined]
    assert approvers == sorted(who.values()), (approvers, lab.final[vid][:3000])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", list(GATES))
def test_a_gate_opens_only_on_an_approval_of_its_own_pause(lab: Lab, vid: str) -> None:
    """gate-swap: after B's file was swapped onto X over A's paused run, Bob's approval of
    what X holds (B, pending) never opens A's gate; h-gate: his approval of A's paused file
    opens it once."""
    x, x2, y = lab.gate_calls[vid]  # type: ignore[attr-defined]
    assert (x, x2) == (1, GATES[vid]), (lab.gate_calls, lab.final[vid][:3000])  # type: ignore[attr-defined]
    assert y <= 1, lab.final[vid][:3000]  # type: ignore[attr-defined]
    if vid == "gate-swap":
        assert 'tag: "gate-swap-y"' in lab.gate_files[vid], lab.gate_files[vid]  # type: ignore[attr-defined]
    else:
        assert "status: awaiting_approval" in lab.gate_files[vid], lab.gate_files[vid]  # type: ignore[attr-defined]


REFUSED = {
    "note-swap": "E_SELF_APPROVAL",
    "pick-y-swap": "E_APPROVAL_REPLAYED",
    "pick-old-ran": "E_APPROVAL_REPLAYED",
}


@pytest.mark.parametrize("vid", cases(list(REFUSED), list(REFUSED), BROKEN))
def test_the_refusal_names_its_code(lab: Lab, vid: str) -> None:
    assert REFUSED[vid] in lab.final[vid], lab.final[vid][:3000]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    ran = len(lab.calls(f"{vid}-x")) + len(lab.calls(f"{vid}-y"))
    assert len(fresh) == ran, (fresh, lab.final[vid][:2000])  # type: ignore[attr-defined]
    assert len(runs_of(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", ALL)
def test_the_controller_committed_one_start_per_run(lab: Lab, vid: str) -> None:
    starts = [
        s
        for side in ("x", "y", "n")
        for s in lab.subjects(f"{vid}-{side}")
        if s.startswith("plangate: start ")
    ]
    ran = len(lab.calls(f"{vid}-x")) + len(lab.calls(f"{vid}-y"))
    assert len(starts) == ran, (starts, lab.final[vid][:800])  # type: ignore[attr-defined]
