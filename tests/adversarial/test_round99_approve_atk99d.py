"""Round 99, approval (atk99d): a controller that starts over (a new state directory taken
over, a state directory holding only the old ``commit.key``, an older backup restored, two
state directories in turn, a reset met and put back before a rebuild) on a history an
attacker shaped with forged records under the controller's name.

Lab (one per mode, built at once; policy: Alice or ``*@ops.example.com``). P0: the agent
writes the plans ``done``, ``late``, ``ok``, ``fcu``, ``fcs``, ``fcr``, ``ffs``, ``fsa``,
``fsn``, ``fdn`` (one ``rec`` action each); on branch ``x`` the agent writes ``xa`` and Bob
``xb``, on ``y`` Carol a note; x and y cross-merge and Mallory merges y then x into main (two
merge bases). P1 freezes all. Alice approves ``done``: it runs (P2). P3: Bob approves ``xa``
and ``xb`` (his own plan), Alice approves ``ok``, ``fcu``, ``fcs``, ``fcr``, ``ffs``, ``fsa``;
then, before the next pass, the agent commits as ``plangate <plangate@localhost>`` the file and
message a controller event writes (an ``approval:`` block naming Alice's commit, an
``execution:`` block, ``Plan:``/``Plan-Hash:``/``Plan-Status:``/``Approved-By:``/
``Approval-Commit:``/``Controller:`` lines): ``fcu`` a ``complete`` with no seal, ``fcs`` a
``complete`` whose ``Controller-Seal:`` is copied from the controller's newest real commit,
``fcr`` one with a random seal (another key's), ``ffs`` a ``fail`` (copied seal), ``fsa`` a
``start`` (copied seal), ``fsn`` the same for a plan nobody approved, ``fdn`` a ``fail`` of the
completed ``done`` (copied seal). A fresh-clone audit is taken there. Modes, from P3 on:
``live`` (the same state directory), ``take`` (a new state directory: refused ``E_STORAGE``,
then ``run --once --take-over``), ``key`` (a new state directory holding only the old
``commit.key``), ``old`` (three passes, then the state directory copied after P1, before
``done`` ran, restored), ``two`` (a new state directory taken over, then the first one back),
``rw`` (the live state; the agent resets main to the forged tip, under the controller's
P3 commits, and adds a note; a pass; the remedy: main back to the read tip, the note merged
again; a pass; then a new state directory taken over). Last: Alice sets ``done`` approved
again (a rerun asked of a completed plan) and approves ``late`` (a control); two passes.

Ids ``<mode>:<slug>:ran``: ``rec`` calls as the promise allows (controls ``done``, ``late``,
``ok``, ``xa``: exactly one and ``completed``; approved then forged: at most one; never
approved or only by its writer: none; ``xb``: ``E_SELF_APPROVAL``, but in ``two``, where the
first state back reads the second's sealed refusal as anyone's edit and shows the approval
lapsed). ``:git``: the status is ``completed`` exactly when the fresh-clone ``plangate audit
--json`` shows a valid execution with outcome ``complete``; a never-approved plan has no
valid start; a status change the P3 audit calls ``E_ILLEGAL_TRANSITION`` is not the status
shown. ``:agree`` (not ``live``; forged and side plans): completed or not as the same
history read live; ``key``/``old``: the same status. ``<mode>:bench``: ``done`` alone ran by
P2, the side merge had two bases, ``take``/``two`` were first refused ``E_STORAGE``, ``rw``'s
reset was met (``E_HISTORY_REWRITTEN`` or ``E_ALREADY_EXECUTED``).

Seen (round 99): 195 ids; 10 broke, one class, in ``take`` and ``rw`` (both take over a new
state directory); every other mode agreed with ``live``.

1. **Take-over adopts a seal-shaped outcome with no cause** (``take:fcs:{git,agree}``,
   ``take:fcr:{git,agree}``, ``take:ffs:git``, the same five in ``rw``): after ``run --once
   --take-over`` the agent's forged ``plangate: complete plans/fcs`` (a copied seal) and
   ``complete plans/fcr`` (a random seal) made the plans Alice approved read ``completed``
   (last note ``<sha> plangate: complete plans/fcs``) though ``rec`` never ran, and the forged
   ``fail plans/ffs`` read ``failed``; the audit of the same history calls each
   ``controller-unexplained`` ("records complete plans/fcs with no cause on the branch: no
   start of the plan for an outcome") and ``E_ILLEGAL_TRANSITION: plangate@localhost set
   status completed (from pending_approval) ... ignored``, and shows no execution; the
   ``live``, ``key``, ``old`` and ``two`` controllers read the same commits as illegal
   (``pending_approval``, the approval lapsed, nothing ran). Likely root cause:
   ``Lifecycle.unproven`` (controller/git/lifecycle.py) applies round 98's cause rule only
   to unsealed commits (``if _sealed(record): return None``, the seal's shape), while a
   taken-over state's new key verifies none of them (``ControllerCore._adopt_history``
   adopts every commit under the name); docs/threat-model.md accepts that ``--take-over`` adopts a
   seal-shaped forgery "as trust on first use always did", but round 98 limited trust on
   first use to what the audit takes for the controller's by git alone, and the audit does not.

Fixed (2026-12-03, r99take): a commit adopted on trust (``--take-over``, or trust on first
use: no key of the new state directory verifies it) is noted in ``<state_dir>/commits.trusted``
and stands only as git alone reads it, its cause on the branch, sealed or not
(``OwnCommits.on_trust``, ``Lifecycle.unproven``; ``INDEX_VERSION`` 131). The ten ids pass.

Held: no plan ran twice or without its approval in any mode: ``done`` ran once through the
older backup restored (``old``), a forged ``fail`` of it (``fdn``; ``take`` showed it
``failed``, then Alice's new approval recorded a start and a completion and ``rec`` did not
run again), the reset (``ok``, ``xa`` refused ``E_ALREADY_EXECUTED``) and the rebuilds;
forged starts ran nothing (``live``/``key``/``old`` show ``executing``, ``take``/``two``
``failed`` in doubt); the unsealed ``complete`` (``fcu``) was ignored everywhere; Bob's
criss-cross side plan was refused ``E_SELF_APPROVAL`` live, taken over, key-only, restored
and rebuilt after a reset; the controls ran once and were valid in every mode.
"""

from __future__ import annotations

import functools
import json
import re
import secrets
import shutil
from pathlib import Path
from typing import Any

import pytest
from advkit import (
    AGENT,
    ALICE,
    BOB,
    BOT,
    CAROL,
    MALLORY,
    Lab,
    brief,
    build_all,
    cases,
    clone_audit,
    plan_text,
)
from test_round2_execution_kit import shared

MODES = ["live", "take", "key", "old", "two", "rw"]
#: slug -> what the attacker forges under the controller's name before the pass after
#: Alice's approvals: (event, plan status, seal: none / copied / random / None = no forgery)
FORGE: dict[str, tuple[str, str, str] | None] = {
    "ok": None,
    "fcu": ("complete", "completed", "none"),
    "fcs": ("complete", "completed", "copied"),
    "fcr": ("complete", "completed", "random"),
    "ffs": ("fail", "failed", "copied"),
    "fsa": ("start", "executing", "copied"),
    "fsn": ("start", "executing", "copied"),  # never approved by anyone
    "fdn": ("fail", "failed", "copied"),  # the plan `done` that really completed
}
APPROVED = {"ok", "fcu", "fcs", "fcr", "ffs", "fsa"}
#: brought to main by criss-cross merges (two merge bases) from a side branch: ``xa`` the
#: agent's, ``xb`` Bob's; Bob approves both at P3 (``xb``: his own plan)
SIDE = {"xa": AGENT, "xb": BOB}
SLUGS = ["done", "late", *FORGE, *SIDE]


def _seal(lab: Lab, kind: str) -> str:
    """The trailer lines a forgery ends with: a real commit's Controller/Seal lines copied
    (the controller's newest commit before the forgeries), another key's (random) seal, or
    none."""
    real = lab.real  # type: ignore[attr-defined]
    ctl = re.search(r"^Controller: .*$", real, re.M)
    seal = re.search(r"^Controller-Seal: .*$", real, re.M)
    assert ctl and seal, real
    if kind == "none":
        return ctl.group(0)
    if kind == "random":
        return ctl.group(0) + f"\nController-Seal: {secrets.token_hex(32)}"
    return ctl.group(0) + "\n" + seal.group(0)


def _forge(lab: Lab, slug: str, event: str, status: str, seal: str, approval: str) -> None:
    """The agent commits, as ``plangate <plangate@localhost>``, the file a controller event
    writes (status, an approval block naming Alice, an execution block) and its message
    (``fdn``: a forged ``fail`` of the plan ``done``, which really completed)."""
    slug = "done" if slug == "fdn" else slug
    text = lab.read(slug)
    digest = re.search(r"hash: (sha256:[0-9a-f]+)", text)
    assert digest, text
    plan_hash = digest.group(1)
    if slug == "done":  # the real completion's file stays, its status says failed
        body = text.replace("status: completed", f"status: {status}")
    else:
        body = text.replace("  status: pending_approval", f"  status: {status}", 1)
        body = body.replace("  status: approved", f"  status: {status}", 1)
        body += (
            "approval:\n  status: approved\n  by: alice@example.com\n"
            "  at: '2026-12-03T10:00:00Z'\n"
            f"  commit: {approval}\n  plan_hash: {plan_hash}\n  signature: null\n"
            f"execution:\n  status: {status}\n  controller: plangate@vm\n"
            "  started_at: '2026-12-03T10:00:00Z'\n"
        )
        if status != "executing":
            body += "  finished_at: '2026-12-03T10:00:01Z'\n"
        body += "  actions:\n  - id: 1\n    key: step:0000000000000000\n"
        body += "    status: " + ("succeeded" if status == "completed" else "failed") + "\n"
        body += "    attempts: 1\n"
    lab.write(slug, body)
    msg = (
        f"plangate: {event} plans/{slug}\n\nPlan: plans/{slug}\nPlan-Hash: {plan_hash}\n"
        f"Plan-Status: {status}\nApproved-By: alice@example.com\nApproval-Commit: {approval}\n"
        + _seal(lab, seal)
    )
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", msg, who=BOT)


def _calls(lab: Lab) -> dict[str, int]:
    return {s: len(lab.calls(s)) for s in SLUGS}


def _new_state(lab: Lab, name: str, key_from: Path | None = None) -> None:
    lab.state = lab.root / name
    if key_from is not None:
        lab.state.mkdir()
        shutil.copy2(key_from / "commit.key", lab.state / "commit.key")
    lab.write_config()


def _build(root: Path, mode: str) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {"mode": mode}
    for slug in SLUGS:
        if slug not in SIDE:
            lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    # the side plans: X1 (the agent's xa, Bob's xb) and Y1 (Carol's note) cross-merged, then
    # main merges Y2 and X2 (Mallory): X2 and main^ have two merge bases
    lab.branch("x")
    for slug, who in SIDE.items():
        lab.write(slug, plan_text(slug))
        lab.commit(f"{who[0].lower()}: {slug}", who)
    x1 = lab.head()
    lab.branch("y", "main")
    lab.note("y1", CAROL)
    y1 = lab.head()
    lab.git("checkout", "-q", "x")
    lab.git("merge", "-q", "--no-ff", "--no-edit", y1, who=AGENT)
    lab.git("checkout", "-q", "y")
    lab.git("merge", "-q", "--no-ff", "--no-edit", x1, who=CAROL)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-edit", "y", who=MALLORY)
    got["bases"] = len(lab.git("merge-base", "--all", "main", "x").split())
    lab.git("merge", "-q", "--no-ff", "--no-edit", "x", who=MALLORY)
    lab.run()  # P1: frozen
    first = lab.state
    if mode == "old":
        shutil.copytree(first, root / "backup")  # the copy before anything ran
    lab.approve("done")
    lab.run()  # P2: `done` ran once
    got["p2"] = _calls(lab)
    # P3: Alice approves; the agent's forgeries under the controller's name follow at once
    for slug in SIDE:
        lab.set_status(slug, "approved")
    lab.commit("bob: approve side plans", BOB)
    for slug in APPROVED:
        lab.set_status(slug, "approved")
    approval = lab.commit("alice: approve", ALICE)
    real = lab.git("log", "-1", "--format=%B", "--author=plangate@localhost")
    lab.real = real  # type: ignore[attr-defined]
    for slug, forged in FORGE.items():
        if forged:
            _forge(lab, slug, *forged, approval=approval)
    audit_dir = root / "pre"
    audit_dir.mkdir()
    report, valid = clone_audit(lab, audit_dir)
    got["pre_valid"] = sorted(valid)
    got["illegal"] = {  # plan -> the statuses the audit calls a forged, ignored change
        f["plan"]: sorted(
            {
                m.group(1)
                for f2 in report["findings"]
                if f2["plan"] == f["plan"]
                for m in [re.search(r"set status (\w+)", f2["detail"])]
                if m
            }
        )
        for f in report["findings"]
        if f.get("kind") == "illegal"
    }
    forged_tip = lab.head()
    if mode in ("take", "two"):
        _new_state(lab, "state2")
        refused = lab.run(check=False)
        got["refused"] = (refused.returncode, refused.stderr[-1500:])
        lab.run(take_over=True)
    elif mode == "key":
        _new_state(lab, "state2", key_from=first)
        lab.run()
    else:
        lab.run()
    lab.run()
    if mode == "old":
        lab.run()
        shutil.rmtree(first)
        shutil.copytree(root / "backup", first)  # the older copy restored
        lab.run()
    if mode == "rw":  # the agent resets main under the controller's commits, then a note
        tip = lab.head()
        lab.git("reset", "-q", "--hard", forged_tip)
        lab.note("rw")
        note = lab.head()
        held = lab.run(check=False)
        got["held"] = (held.returncode, held.stderr[-1500:])
        # the remedy: main back to the tip the controller read, the note merged again
        lab.git("reset", "-q", "--hard", tip)
        lab.git("merge", "-q", "--no-ff", "-m", "merge the note again", note, who=AGENT)
        lab.run()
        _new_state(lab, "state2")  # then the host is rebuilt: a new state, taken over
        lab.run(take_over=True)
        lab.run()
    if mode == "two":  # the first controller's state back in turn
        lab.state = first
        lab.write_config()
        lab.run()
    got["mid"] = _calls(lab)
    got["midrows"] = lab.rows()
    # Alice approves `done` again (a rerun asked of a completed plan) and `late` (a control)
    lab.set_status("done", "approved")
    lab.approve("late")
    lab.run()
    lab.run()
    got["calls"] = _calls(lab)
    got["rows"] = lab.rows()
    post = root / "post"
    post.mkdir()
    report, valid = clone_audit(lab, post)
    got["valid"] = sorted(valid)
    got["outcomes"] = {
        e["plan"]: e.get("outcome") for e in report["executions"] if e.get("approval_valid")
    }
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _labs(factory: pytest.TempPathFactory) -> dict[str, Lab]:
    builders = {m: functools.partial(_build, mode=m) for m in MODES}
    return shared(factory, "r99-approve-atk99d", lambda root: build_all(root, builders)).got


IDS = [
    f"{m}:{s}:{w}"
    for m in MODES
    for s in SLUGS
    for w in ("ran", "git", "agree")
    # agree: the controls' `ran` already asserts one completed run in every mode
    if w != "agree" or (m != "live" and s not in ("done", "late", "ok"))
]
IDS += [f"{m}:bench" for m in MODES]
BROKEN: dict[str, Any] = {}  # r99take fixed the one class (docstring)


def _allowed(slug: str) -> set[int]:
    """``rec`` calls the promise allows: approved by Alice once, nothing forged: exactly once;
    approved, then a forged record under the controller's name: at most once (a lapsed
    approval fails closed); never approved: never."""
    if slug in ("done", "late", "ok", "xa"):
        return {1}
    return {0, 1} if slug in APPROVED else {0}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round99_atk99d(tmp_path_factory: pytest.TempPathFactory, vid: str) -> None:
    labs = _labs(tmp_path_factory)
    if vid.endswith(":bench"):
        got = labs[vid.split(":")[0]].got  # type: ignore[attr-defined]
        assert got["p2"]["done"] == 1 and sum(got["p2"].values()) == 1, got["p2"]
        assert got["bases"] == 2, got["bases"]  # a real criss-cross
        if got["mode"] == "rw":  # the reset was met: held, or the runs refused as run
            _code, err = got["held"]
            assert "E_HISTORY_REWRITTEN" in err or "E_ALREADY_EXECUTED" in err, got["held"]
        if got["mode"] in ("take", "two"):
            code, err = got["refused"]
            assert code != 0 and "E_STORAGE" in err, got["refused"]
        return
    mode, slug, what = vid.split(":")
    got = labs[mode].got  # type: ignore[attr-defined]
    plan = f"plans/{slug}"
    row = got["rows"].get(plan, {})
    status = row.get("status")
    if what == "ran":
        assert got["calls"][slug] in _allowed(slug), (got["calls"], brief(row))
        if _allowed(slug) == {1}:
            assert status == "completed", brief(row)
        if slug == "xb" and mode != "two":  # Bob wrote it: his approval is refused (two:
            # the first state back reads the second's sealed refusal as anyone's edit)
            assert "E_SELF_APPROVAL" in json.dumps(row), brief(row)
        return
    if what == "git":  # `completed` exactly when git alone shows a valid, completed run
        shown = got["outcomes"].get(plan) == "complete"
        assert (status == "completed") == shown, (got["outcomes"].get(plan), brief(row))
        if _allowed(slug) == {0}:  # never approved (or only by its writer): no valid start
            assert plan not in got["valid"], (got["valid"], brief(row))
        # a change the audit (git alone) calls illegal is not the status shown
        forged = got["illegal"].get(plan, [])
        if slug in ("fcu", "fcs", "fcr", "ffs"):  # the bench: the audit flagged the outcome
            assert forged, got["illegal"]
        assert status not in forged, (forged, brief(row))
        return
    # the same history read live: completed (or not) alike, whatever state directory read it
    live = labs["live"].got["rows"].get(plan, {})  # type: ignore[attr-defined]
    assert (status == "completed") == (live.get("status") == "completed"), (
        brief(row),
        brief(live),
    )
    if mode in ("key", "old"):  # the key verifies the same commits as the live record
        assert status == live.get("status"), (brief(row), brief(live))
