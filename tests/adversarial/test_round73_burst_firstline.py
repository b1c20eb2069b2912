"""Round 73, bursts: a first start (a new state directory, or the old ``commit.key`` alone)
on histories round 72's rule (a sealed controller commit reachable but off the first-parent
line refuses ``E_HISTORY_REWRITTEN``) did not look at: honest shapes that must start
(controls), and rewrites that keep every seal off the line by keeping NO real seal reachable
at all.

Lab (one, local mode, fake commit dates). The agent adds ``f-01``..``f-08`` and the gated
``fg-1`` (``P0``); a pass freezes them. Alice's review merge approves ``f-01``..``f-04`` and
``fg-1``; a pass: four complete, ``fg-1`` pauses at its gate. The repo is cloned once per
``<shape>-<state>`` (each its own config, state and ``ran.log`` seeded with what ran):

- ``ctlmerge`` (control): Alice's branch forked at her review merge (before the controller's
  completions), a note of hers, main merged INTO her branch (the sealed commits come in behind
  its second parent), her approval of ``f-05`` on it, the branch merged ``--no-ff`` into main
  by her: every seal stays on main's first-parent line (docs/operations.md: "merged
  pull-request branches ... updated by merging main into it or not" start as before);
- ``squash`` (control): the same branch squash-merged into main by her (``git merge
  --squash``, one commit of hers: her note and her approval of ``f-05``);
- ``revert`` (honest, at most once): Alice ``git revert``s the controller's completion commit
  on main (the four plans' files back to what the start wrote);
- ``rebase`` (attack): the agent rewrites the whole line (``git rebase --rebase-merges``
  onto an amended root commit): every controller commit re-made with the agent as committer,
  its ``Controller-Seal:`` line kept but no longer verifying, no real seal reachable;
- ``orphan`` (attack): the agent replaces main by ONE parentless commit of main's tree (a
  "squash of the history"): no controller commit at all, the files saying ``completed`` and
  ``awaiting_approval``;
- ``orphanbot`` (attack): as ``orphan``, the one commit under the controller's name (author
  and committer, unsealed), its tree ``f-05`` (never approved) ``completed``;
- ``cherry`` (attack): the agent's side branch from ``P0`` with one commit under the
  controller's name (author and committer) copying the real tip's sealed message, its tree
  ``f-05`` ``completed``, merged ``--no-ff`` into main: a seal-shaped commit off the line.

States: ``key`` (a new state directory holding only the first one's ``commit.key``), ``new``
(an empty one: where refused ``E_STORAGE`` the operator says ``--take-over``, as documented),
``live`` (a copy of the live state directory: what the running controller makes of it). A
refusal ``E_HISTORY_REWRITTEN`` is answered with its remedy (the line put back: main back to
the merge's first parent for ``cherry``; the old tip for ``rebase``/``orphan``, which no
operator can find without the reflog, is NOT put back: the start is then asked again as is,
``--take-over`` for ``orphan``/``orphanbot``: the line lost for good, started over knowingly).
Then Alice approves the gate of ``fg-1``, sets ``f-01`` (completed) ``approved`` (a stray
re-approval as its file asks), approves ``f-06`` (control); two passes. Asserted per clone
(``<shape>-<state>-<v>``):

- ``start``: ``ctlmerge``/``squash``/``revert`` start (``key``: at once; ``new``, only for
  ``ctlmerge``: ``E_STORAGE``, then ``--take-over``); the attacks are refused or start,
  never adopting a forgery;
- ``done``: ``f-01``..``f-04`` ran once in all (no approval after a rewrite reruns them);
- ``gate``: ``fg-1``'s action 1 ran once in all, action 2 at most once;
- ``ctl``: ``f-06`` ran once, ``f-07``/``f-08`` never, ``f-05`` once for ``ctlmerge`` and
  ``squash`` (her approval), never elsewhere (the ``cherry`` forgery never adopted nor run
  unapproved);
- ``audit``: ``plangate audit --json`` on a fresh clone lists no valid run of ``f-07``/``f-08``
  and, where the controller ran it, one of ``f-06``.

Seen (round 73): BROKEN (6 ids, 2 classes; FIXED 2026-11-30 by r73orphan, below). **A history
squashed into one parentless commit meets a first start by trust on first use; approvals rerun
what ran** (4:
``orphan-key-done``, ``orphan-key-gate``, ``orphan-new-done``, ``orphan-new-gate``): the agent
resets main to ``git commit-tree HEAD^{tree}`` (no parent, its own name; the plan files keep
``frozen:``, ``execution: status: completed`` and ``awaiting_approval``); with the old
``commit.key`` alone or a NEW state directory the start logs ``own_commits_adopted`` ``count:
0``, ``by: trust on first use`` (no seal is reachable, so neither round 70's ``E_STORAGE`` nor
round 72's ``E_HISTORY_REWRITTEN`` fires); the rows read the plans' status "(from nothing)";
Alice's approval of ``f-01`` (completed) RUNS IT A SECOND TIME and her gate approval of
``fg-1`` RUNS ITS ACTION 1 A SECOND TIME (then pauses again); the fresh-clone audit lists one
valid run of each. The live state holds the same branch (``orphan-live``: ``E_HISTORY_REWRITTEN``
/ ``E_ALREADY_EXECUTED``, nothing rerun). **A parentless unsealed commit under the
controller's name is adopted** (2: ``orphanbot-key-ctl``, ``orphanbot-new-ctl``): the same
squash made as ``plangate`` (author and committer), its tree ``f-05`` (never approved)
``completed``: adopted by trust on first use, ``count: 1``: ``f-05`` reads ``completed``;
``fg-1``'s paused run fails ``E_ACTION_IN_DOUBT``. Should (SPEC §15: at most once;
docs/operations.md, "A new state directory": a key "adopts only what its key verifies", a
new state directory must not take another state's work for its own): a first start
whose branch carries the controller's owned blocks (``frozen:`` / ``execution:`` of a run)
with no controller commit its key verifies (or none at all) is a rewritten or foreign line
and refuses as round 72's ``E_HISTORY_REWRITTEN`` does (or at least never runs a version whose
file shows it ran); the docs' "a branch with no sealed controller commit ... starts as
before (trust on first use)" is the gap, and names no squash. HELD: ``ctlmerge`` (her branch
updated by merging main, merged ``--no-ff``: every seal on the line; ``key`` starts at once,
``new`` ``E_STORAGE`` then ``--take-over``; ``f-05`` once on her approval, nothing rerun);
``squash`` (the same branch squash-merged: likewise);
``revert`` (her ``git revert`` of the controller's completion: ``f-01`` not rerun, the audit
agrees); ``rebase`` (the agent's ``rebase --rebase-merges`` onto an amended root: ``key`` and
``new`` refuse ``E_STORAGE`` (seals its key verifies none of), ``--take-over`` then adopts
the copies and reruns nothing; ``live`` holds ``E_HISTORY_REWRITTEN``, ``f-06``'s approval
refused); ``cherry`` (the agent's seal-shaped copy of the controller's tip, ``f-05``
completed, merged from a side branch: the first start refuses ``E_HISTORY_REWRITTEN`` as
documented, fails closed, and after the merge is dropped starts, ``f-05`` still
``pending_approval``); ``f-07``/``f-08`` never ran and no audit called them valid anywhere.

FIXED (2026-11-30, r73orphan): the 6 ids pass. A first start (no ``commits`` record) whose key
verifies no commit and finds no seal on the line now looks at what the branch carries
(``ControllerCore._refuse_unattributed_records``, one ``git grep`` of the head's plan files,
asked only then): the old ``commit.key`` alone, on a branch holding commits under the
controller's name or ``frozen:``/``execution:`` records, refuses ``E_HISTORY_REWRITTEN`` (its
line is gone: logged ``own_line_gone``); a NEW state directory, on a branch whose files record
runs (an ``execution:`` block beside a plan status only a run gives) with no commit under the
controller's name that has a parent,
refuses ``E_STORAGE`` naming the squash (``own_line_squashed``). ``--take-over`` accepts either
knowingly (the line lost for good), and then every frozen hash whose file says it ran (plan
status ``executing``/``completed``/``failed``/``awaiting_approval``) counts as executed
(``run_recorded_in_file``): ``f-01``'s re-approval and ``fg-1``'s gate approval are refused
``E_ALREADY_EXECUTED``, nothing reruns. A parentless commit under the controller's name is
never adopted (``_named_history``'s ``_roots``; the controller only commits on top of its
branch): ``orphanbot``'s ``f-05`` no longer reads ``completed``, ``fg-1`` no longer fails in
doubt. Expectation changed: ``orphan``/``orphanbot`` ``key`` now refuse ``E_HISTORY_REWRITTEN``
and ``new`` ``E_STORAGE`` at first, and the lab answers both with ``--take-over`` (the old tip
is not put back) before asserting the start (``start`` asserts the refusal and the take-over).
HELD as before: every control and ``*-live``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOT, Lab, cases, clone_audit, plan_text
from burstkit import date_steps, gated, review_merge
from test_round2_execution_kit import shared
from test_round72_burst_flipseal import Clone, _commit_tree, _forged_tree

F = [f"f-{i:02d}" for i in range(1, 9)]
TAGS = [*F, "fg-1-1", "fg-1-2"]
CLONES = [
    "ctlmerge-key", "ctlmerge-new", "squash-key", "revert-key",
    "rebase-key", "rebase-new", "rebase-live", "orphan-key", "orphan-new", "orphan-live",
    "orphanbot-key", "orphanbot-new", "cherry-key", "cherry-new",
]  # fmt: skip
#: r73orphan (2026-11-30): see the module docstring's "Seen (round 73)"
BROKEN: dict[str, object] = {}


def _shape(clone: Clone, shape: str, lab: Lab, marks: dict) -> None:
    g = clone.git
    if shape == "ctlmerge":
        g("checkout", "-q", "-b", "side", marks["review"])
        (clone.repo / "NOTES").write_text("alice's notes\n")
        g("add", "-A")
        g("commit", "-q", "-m", "notes", who=ALICE)
        g("merge", "-q", "--no-ff", "-m", "merge main into side", "main", who=ALICE)
        clone.approve(["f-05"])
        g("checkout", "-q", "main")
        g("merge", "-q", "--no-ff", "-m", "merge side", "side", who=ALICE)
    elif shape == "squash":
        g("checkout", "-q", "-b", "side", marks["review"])
        (clone.repo / "NOTES").write_text("alice's notes\n")
        g("add", "-A")
        g("commit", "-q", "-m", "notes", who=ALICE)
        g("merge", "-q", "--no-ff", "-m", "merge main into side", "main", who=ALICE)
        clone.approve(["f-05"])
        g("checkout", "-q", "main")
        g("merge", "-q", "--squash", "side", who=ALICE)
        g("commit", "-q", "-m", "squash side", who=ALICE)
    elif shape == "revert":
        c = g("log", "-1", "--format=%H", "--author=plangate", "--", "plans/f-01").strip()
        g("revert", "--no-edit", c, who=ALICE)
    elif shape == "rebase":
        root = g("rev-list", "--max-parents=0", "HEAD").strip()
        g("checkout", "-q", root)
        (clone.repo / "README").write_text("plans, rewritten\n")
        g("commit", "-q", "-a", "--amend", "-m", "initial", who=AGENT)
        new_root = g("rev-parse", "HEAD").strip()
        g("checkout", "-q", "main")
        g("rebase", "-q", "--rebase-merges", "--onto", new_root, root, "main", who=AGENT)
    elif shape == "orphan":
        tree = g("rev-parse", "HEAD^{tree}").strip()
        g("reset", "-q", "--hard", g("commit-tree", tree, "-m", "import", who=AGENT).strip())
    elif shape == "orphanbot":
        path = clone.repo / "plans" / "f-05" / "PLAN.yml"
        path.write_text(path.read_text().replace("status: pending_approval", "status: completed"))
        g("add", "-A")
        tree = g("write-tree").strip()
        top = g("commit-tree", tree, "-m", "plangate: 5 plan events", who=BOT).strip()
        g("reset", "-q", "--hard", top)
    elif shape == "cherry":
        g("reset", "-q", "--hard", marks["forged"])
        g("merge", "-q", "--no-ff", "-m", "merge agent work", marks["forged_side"], who=AGENT)


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    date = date_steps(lab, 1790000000)
    date()
    for v in F:
        lab.write(v, plan_text(v))
    lab.write("fg-1", gated("fg-1"))
    p0 = lab.commit("agent plans")
    lab.run()
    date()
    review_merge(lab, [*F[:4], "fg-1"], date)
    review = lab.head()
    lab.run()
    lab.first = {t: len(lab.calls(t)) for t in TAGS}  # type: ignore[attr-defined]
    # the agent's seal-shaped commit under the controller's name, off the line (cherry)
    msg = lab.git("log", "-1", "--format=%B")
    lab.tip_subject = msg.splitlines()[0]  # type: ignore[attr-defined]
    tip = lab.head()
    lab.git("checkout", "-q", p0)
    forged = _commit_tree(lab, _forged_tree(lab, {"f-05": "completed"}), [p0], msg, BOT)
    lab.git("checkout", "-q", "main")
    marks = {"review": review, "forged": tip, "forged_side": forged}
    out: dict = {}
    for name in CLONES:
        shape, state = name.split("-")
        date()
        clone = Clone(lab, root, name, root / name / "state")
        clone.git("branch", "-q", "fside", forged)
        marks["forged_side"] = "fside"
        _shape(clone, shape, lab, marks)
        if state == "key":
            clone.state.mkdir(mode=0o700)
            shutil.copy(lab.state / "commit.key", clone.state / "commit.key")
            os.chmod(clone.state / "commit.key", 0o600)
        elif state == "live":
            shutil.copytree(lab.state, clone.state, symlinks=True)
        date()
        first = clone.run()
        res: dict = {"first": {"rc": first.returncode, "err": first.stderr[-2500:]}}
        if first.returncode != 0 and "E_HISTORY_REWRITTEN" in first.stderr and shape == "cherry":
            clone.git("reset", "-q", "--hard", "HEAD^1")  # the agent's merge dropped
            first = clone.run()
            res["again"] = {"rc": first.returncode, "err": first.stderr[-2500:]}
        gone = "E_HISTORY_REWRITTEN" in first.stderr and shape in ("orphan", "orphanbot")
        if first.returncode != 0 and ("E_STORAGE" in first.stderr or gone):
            first = clone.run("--take-over")
            res["take"] = {"rc": first.returncode, "err": first.stderr[-2500:]}
        res["final_rc"] = first.returncode
        res["rows_start"] = clone.rows()
        date()
        clone.approve(["fg-1", "f-01", "f-06"])
        a = clone.run()
        date()
        b = clone.run()
        res["after"] = {"rc": [a.returncode, b.returncode], "err": (a.stderr + b.stderr)[-2500:]}
        res["ran"] = {t: clone.count(t) for t in TAGS}
        res["rows"] = clone.rows()
        report, _ = clone_audit(clone, clone.root)  # type: ignore[arg-type]
        res["runs"] = {
            t: len([e for e in report.get("executions", []) if e.get("plan") == f"plans/{t}"
                    and e.get("approval_valid")])
            for t in [*F, "fg-1"]
        }  # fmt: skip
        out[name] = res
    lab.out = out  # type: ignore[attr-defined]
    (root / "out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r73-firstline", _build)


def test_the_lab(lab: Lab) -> None:
    first = lab.first  # type: ignore[attr-defined]
    want = {**{t: 1 for t in F[:4]}, "fg-1-1": 1}
    assert {k: first[k] for k in want} == want, first
    assert all(first[k] == 0 for k in TAGS if k not in want), first
    assert lab.tip_subject == "plangate: await-approval plans/fg-1", lab.tip_subject  # type: ignore[attr-defined]


VS = ["start", "done", "gate", "ctl", "audit"]
IDS = [f"{c}-{v}" for c in CLONES for v in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_first_start_reruns_nothing(lab: Lab, vid: str) -> None:
    shape, state, v = vid.split("-", 2)
    out = lab.out[f"{shape}-{state}"]  # type: ignore[attr-defined]
    ran, rows = out["ran"], out["rows"]
    said = (ran, rows, out["first"]["err"][-700:], out.get("take"), out["after"]["err"][-700:])
    if v == "start":
        assert out["final_rc"] == 0 and out["after"]["rc"] == [0, 0], said
        if shape == "cherry":  # the seal-shaped commit off the line fails closed (documented)
            assert out["first"]["rc"] != 0 and "E_HISTORY_REWRITTEN" in out["first"]["err"], said
            assert out["rows_start"]["f-05"]["status"] == "pending_approval", said
        if shape == "rebase" and state != "live":  # seals it verifies none of
            assert "E_STORAGE" in out["first"]["err"] and out["take"]["rc"] == 0, said
        if shape in ("orphan", "orphanbot") and state != "live":  # the line gone (round 73)
            code = "E_HISTORY_REWRITTEN" if state == "key" else "E_STORAGE"
            assert out["first"]["rc"] != 0 and code in out["first"]["err"], said
            assert out["take"]["rc"] == 0, said
        if shape in ("ctlmerge", "squash", "revert"):
            if state == "key":
                assert out["first"]["rc"] == 0, said
            else:
                assert "E_STORAGE" in out["first"]["err"] and out["take"]["rc"] == 0, said
    elif v == "done":
        assert {s: ran[s] for s in F[:4]} == {s: 1 for s in F[:4]}, said
    elif v == "gate":
        assert ran["fg-1-1"] == 1 and ran["fg-1-2"] <= 1, said
    elif v == "ctl":
        f05 = 1 if shape in ("ctlmerge", "squash") else 0
        held = state == "live" and shape in ("rebase", "orphan")  # the live hold (documented)
        want = {"f-05": f05, "f-06": 0 if held else 1, "f-07": 0, "f-08": 0}
        if shape == "orphanbot":  # the forged completion of a plan nobody approved
            assert out["rows_start"]["f-05"]["status"] != "completed", said
        assert {s: ran[s] for s in want} == want, said
        if held:
            assert "E_HISTORY_REWRITTEN" in str(rows["f-06"].get("last_event")) + str(
                rows["f-06"].get("reason")
            ), said
    elif v == "audit":
        runs = out["runs"]
        assert runs["f-07"] == 0 and runs["f-08"] == 0, (runs, said)
        assert runs["f-06"] == ran["f-06"], (runs, said)
