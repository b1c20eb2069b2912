"""Round 72, bursts: a foxtrot with NO forgery at all (a branch that merged main into itself,
main fast-forwarded to it, the controller's sealed commits all behind the second parent) met by
a new state directory or the old ``commit.key`` alone (docs/operations.md, "A new state
directory"), then an honest gate approval.

Lab (one, local mode, fake commit dates). The agent adds ``f-01``..``f-08`` and the gated
``fg-1``/``fg-2`` (``P0``); a pass freezes them. Alice's review merge approves ``f-01``..``f-04``
and both gated plans; a pass: four complete, the gated two pause at their gates. The repo is
cloned four times (each its own config, state and ``ran.log`` seeded with what ran); in each,
one foxtrot:

- ``alice-*``: Alice's branch forked at ``P0`` (a note of hers), main merged INTO it, her
  approval of ``f-05`` on it, main fast-forwarded to it (an honest mistake the forge's
  fast-forward button makes);
- ``agent-*``: the agent's branch forked at ``P0`` (a new plan ``f-09``), main merged into it,
  main fast-forwarded to it (no commit under the controller's name, no seal touched).

Then the controller starts with ``key`` (a new state directory holding only the first one's
``commit.key``) or ``new`` (a NEW empty state directory, no option). Alice then approves the
gates of ``fg-1``/``fg-2`` (the ``status`` the file shows her: ``awaiting_approval``), sets
``f-01`` (completed) to ``approved`` (a stray re-approval), approves ``f-06`` (control); two
passes. Asserted per clone (``<foxtrot>-<state>-<v>``):

- ``start``: ``new`` refuses ``E_STORAGE`` (the branch holds sealed controller commits its key
  verifies none of); ``key`` starts and adopts its own sealed commits (not trust on first use);
- ``rows``: after the start, ``f-01``..``f-04`` read ``completed`` and the gated plans
  ``awaiting_approval`` (what the branch's controller commits say);
- ``done``: ``f-01``..``f-04`` ran once in all (her stray approval reruns nothing);
- ``gate1``: each gated plan's action 1 ran once in all (her gate approval never reruns it);
- ``gate2``: each gated plan's action 2 ran once after her gate approval;
- ``ctl``: ``f-06`` ran once (control), ``f-07``/``f-08`` (never approved) never, ``f-05`` once
  for ``alice-*`` (her approval on the branch), never for ``agent-*``, ``f-09`` never;
- ``audit``: ``plangate audit --json`` on a fresh clone lists one valid run of each of
  ``f-01``..``f-04`` (and of ``f-06``), none of ``f-07``/``f-08``.

Seals copied (``test_a_copied_seal_reruns_nothing``; three more clones of the lab at its tip,
the controller's sealed ``await-approval`` of ``fg-2``, re-made by the agent under the
controller's name, author and committer): ``amend-*``: the same parent and message, ``f-05``
set ``completed`` in the tree (a ``commit --amend`` with the controller as committer; the seal
no longer verifies), main moved to it (a force push); ``mseal-key``: tree, parent and message
kept, the agent's branch (from ``P0``, a new plan ``f-09``) added as a SECOND parent (the seal
binds the first parent only). Started with a copy of the live state (``live``) or the old key
alone (``key``); Alice approves both gates, ``f-01``, ``f-05``, ``f-06``; two passes. Asserted:
``twice``: no tag ran twice (except action 1 of a run the start failed ``E_ACTION_IN_DOUBT``,
whose approval is a resume the docs let run again), ``f-01``..``f-04`` once; ``forged``: ``f-05``
(completed by the amend, never approved before) ran once on her approval; ``ctl``: ``f-06``
once, ``f-07``/``f-08``/``f-09`` never.

Fixed (2026-11-30, r72foxtrot): the 20 ids pass, markers removed. A first start (no record:
``new``, or the key alone: ``key``) on a branch where a sealed commit under the controller's
name is reachable from the head but not on its first-parent line refuses
``E_HISTORY_REWRITTEN`` (the controller only ever commits on that line: it was rewritten),
``--take-over`` included, naming the newest such commit and the remedies
(``ControllerCore._refuse_seals_off_the_line``, docs/operations.md "A new state directory").
Expectations changed by the rule (documented): every clone's first start is refused
(``*-start`` asserts it), then the clone follows the remedy it prints (main back to the foxtrot
merge's second parent, the side line merged again ``--no-ff`` by whoever made it: Alice's
approval of ``f-05`` comes in by her merge), and ``start`` asserts what round 70/71 say of that
line: ``key`` adopts by its commit.key, ``new`` refuses ``E_STORAGE`` and starts
``--take-over``. ``*-audit`` (the limit) passes now, markers removed: with the line put back the
fresh clone's first parents are the controller's again.

Seen (round 72): BROKEN (20 ids, 1 class) and 4 ids of a known limit. A foxtrot with no forgery
at all (``alice-*``: Alice's honest ``git pull`` shape; ``agent-*``: the agent's branch, main
merged into it, main fast-forwarded) hides every sealed controller commit behind the second
parent. ``*-new-start``: a NEW empty state directory starts without ``E_STORAGE`` (round 70's
refusal never fires: no seal on the first-parent line); ``*-key-start``: the old
``commit.key`` alone logs ``own_commits_adopted`` ``count: 0``, ``by: trust on first use``
(it verifies none of the seals it never looks at). ``*-rows``: ``f-01``..``f-04`` (completed)
read ``pending_approval`` "waiting for an approval" (their controller commits an "illegal
transition" by the merger) and the paused gates likewise. ``*-done``: Alice's approval of
``f-01`` (as its row asks) RUNS IT A SECOND TIME. ``*-gate1``/``*-gate2``: her gate approval of
``fg-1``/``fg-2`` (the file says ``awaiting_approval``) is taken as a first approval: action 1
runs A SECOND TIME and the plan pauses again before action 2 (never run). Should (SPEC §15: at
most once; docs/operations.md "A new state directory": a branch holding sealed controller
commits refuses a new state directory, and one with the old key "adopts only what its key
verifies"; docs/approvals.md "The first-parent line": a foxtrot is held, never read as the
merger's decisions): the seals reachable from the tip count wherever they stand (``new``:
``E_STORAGE``; ``key``: its own commits adopted), and a line whose controller commits went
behind a second parent is held ``E_HISTORY_REWRITTEN`` as the live controller holds it
(round 72's ``test_round72_burst_flipseal.py`` ``restB``), never judged afresh. Known limit,
not new (``*-audit``, strict xfails of class ``limit``): the fresh-clone audit lists none of
``f-02``..``f-04``'s runs (rounds 8 and 29, docs/threat-model.md). HELD: ``*-ctl`` (``f-06``
once on her approval, ``f-05`` once on her branch's approval, ``f-07``/``f-08``/the agent's
``f-09`` never).
The copied seals held (9): ``amend-live``: the live record holds ``fg-2`` ``executing`` with
"E_HISTORY_REWRITTEN: a rewrite of the branch erased the controller's commits of this plan"
(documented; action 2 never runs until restored); ``amend-key``: the amended commit is anyone's,
``fg-2``'s run (its sealed start adopted, its pause not) fails ``E_ACTION_IN_DOUBT`` at the start
(her later approval is a resume: action 1 again, as documented); ``f-05`` ran once on her
approval in both; ``mseal-key``: the re-parented commit verifies and is adopted, the agent's side
branch decides nothing (``f-09`` never ran), the gates' action 2 once.
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

F = [f"f-{i:02d}" for i in range(1, 10)]
GS = ["fg-1", "fg-2"]
TAGS = [*F, *(f"{g}-{n}" for g in GS for n in (1, 2))]
CLONES = ["alice-key", "alice-new", "agent-key", "agent-new"]
#: seals copied: the controller's tip commit re-made by the agent under its name
SEALS = ["amend-live", "amend-key", "mseal-key"]
#: round 72's 20 ids and the 4 audit ids of the known limit were fixed or made moot by
#: r72foxtrot (2026-11-30): see the module docstring's "Seen (round 72)"
BROKEN: dict[str, object] = {}


def _foxtrot(clone: Clone, kind: str, p0: str) -> None:
    who = ALICE if kind == "alice" else AGENT
    clone.git("checkout", "-q", "-b", "side", p0)
    if kind == "alice":
        (clone.repo / "NOTES").write_text("alice's notes\n")
    else:
        path = clone.repo / "plans" / "f-09" / "PLAN.yml"
        path.parent.mkdir(parents=True)
        path.write_text(plan_text("f-09"))
    clone.git("add", "-A")
    clone.git("commit", "-q", "-m", "work on side", who=who)
    clone.git("merge", "-q", "--no-ff", "-m", "merge main into side", "main", who=who)
    if kind == "alice":
        clone.approve(["f-05"])
    clone.git("checkout", "-q", "main")
    clone.git("merge", "-q", "--ff-only", "side")


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    date = date_steps(lab, 1790000000)
    date()
    for v in F[:8]:
        lab.write(v, plan_text(v))
    for g in GS:
        lab.write(g, gated(g))
    p0 = lab.commit("agent plans")
    lab.run()
    date()
    review_merge(lab, [*F[:4], *GS], date)
    lab.run()
    lab.first = {t: len(lab.calls(t)) for t in TAGS}  # type: ignore[attr-defined]
    out: dict = {}
    _seals(lab, root, p0, out, date)
    for name in CLONES:
        kind, state = name.split("-")
        date()
        clone = Clone(lab, root, name, root / name / "state")
        _foxtrot(clone, kind, p0)
        if state == "key":
            (root / name / "state").mkdir(mode=0o700)
            shutil.copy(lab.state / "commit.key", root / name / "state" / "commit.key")
            os.chmod(root / name / "state" / "commit.key", 0o600)
        date()
        held = clone.run()  # r72foxtrot: a first start refuses the foxtrot
        res: dict = {"held": {"rc": held.returncode, "err": held.stderr[-2500:]}}
        if held.returncode != 0:  # the remedy it names: the line back, the side merged again
            tip = clone.git("rev-parse", "HEAD").strip()
            fox = clone.git("rev-list", "--first-parent", "--merges", "-1", "HEAD").strip()
            clone.git("reset", "-q", "--hard", clone.git("rev-parse", f"{fox}^2").strip())
            clone.git("merge", "-q", "--no-ff", "-m", "merge side again", tip,
                      who=ALICE if kind == "alice" else AGENT)  # fmt: skip
        s = clone.run()
        res["start"] = {"rc": s.returncode, "err": s.stderr[-2500:]}
        res["adopted"] = [x for x in s.stderr.splitlines() if '"own_commits_adopted"' in x]
        if s.returncode != 0:  # refused: the remedy the refusal names, knowingly
            s = clone.run("--take-over")
            res["take"] = {"rc": s.returncode, "err": s.stderr[-1500:]}
        res["rows_start"] = clone.rows()
        date()
        clone.approve([*GS, "f-01", "f-06"])
        a = clone.run()
        date()
        b = clone.run()
        res["after"] = {"rc": [a.returncode, b.returncode], "err": (a.stderr + b.stderr)[-1500:]}
        res["ran"] = {t: clone.count(t) for t in TAGS}
        res["rows"] = clone.rows()
        report, _ = clone_audit(clone, clone.root)  # type: ignore[arg-type]
        res["runs"] = {
            t: len([e for e in report.get("executions", []) if e.get("plan") == f"plans/{t}"
                    and e.get("approval_valid")])
            for t in [*F, *GS]
        }  # fmt: skip
        out[name] = res
    lab.out = out  # type: ignore[attr-defined]
    (root / "out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


def _seals(lab: Lab, root: Path, p0: str, out: dict, date) -> None:  # type: ignore[no-untyped-def]
    """The controller's tip commit (tree T, parent P, message M, sealed) re-made by the agent,
    author and committer the controller: ``amend`` with ``f-05`` set ``completed`` in T (same
    P and M: the seal no longer verifies), the tip replaced (a force push); ``mseal`` with T,
    P, M kept and the agent's branch (from ``P0``, a new plan ``f-09``) as a SECOND parent
    (the seal binds the first parent only). ``live``: a copy of the live state directory;
    ``key``: the old ``commit.key`` alone."""
    msg = lab.git("log", "-1", "--format=%B")
    parent = lab.head("HEAD^")
    amended = _commit_tree(lab, _forged_tree(lab, {"f-05": "completed"}), [parent], msg, BOT)
    lab.git("checkout", "-q", "-b", "x", p0)
    lab.write("f-09", plan_text("f-09"))
    side = lab.commit("x side", AGENT)
    lab.git("checkout", "-q", "main")
    tree = lab.git("rev-parse", "HEAD^{tree}").strip()
    mseal = _commit_tree(lab, tree, [parent, side], msg, BOT)
    lab.tip_subject = msg.splitlines()[0]  # type: ignore[attr-defined]
    for name in SEALS:
        kind, state = name.split("-")
        date()
        clone = Clone(lab, root, name, root / name / "state")
        clone.git("reset", "-q", "--hard", amended if kind == "amend" else mseal)
        if state == "key":
            clone.state.mkdir(mode=0o700)
            shutil.copy(lab.state / "commit.key", clone.state / "commit.key")
            os.chmod(clone.state / "commit.key", 0o600)
        else:
            shutil.copytree(lab.state, clone.state, symlinks=True)
        s = clone.run()
        res: dict = {"start": {"rc": s.returncode, "err": s.stderr[-2000:]}}
        res["rows_start"] = clone.rows()
        date()
        clone.approve([*GS, "f-01", "f-05", "f-06"])
        a = clone.run()
        date()
        b = clone.run()
        res["after"] = {"rc": [a.returncode, b.returncode], "err": (a.stderr + b.stderr)[-1500:]}
        res["ran"] = {t: clone.count(t) for t in TAGS}
        res["rows"] = clone.rows()
        out[name] = res


SIDS = [f"{c}-{v}" for c in SEALS for v in ("twice", "forged", "ctl")]


@pytest.mark.parametrize("vid", cases(SIDS, SIDS, BROKEN))  # type: ignore[arg-type]
def test_a_copied_seal_reruns_nothing(lab: Lab, vid: str) -> None:
    kind, state, v = vid.split("-", 2)
    out = lab.out[f"{kind}-{state}"]  # type: ignore[attr-defined]
    ran = out["ran"]
    said = (ran, out["rows"], out["start"]["err"][-700:], out["after"]["err"][-500:])
    assert out["start"]["rc"] == 0 and out["after"]["rc"] == [0, 0], said
    if v == "twice":
        # a run the start failed E_ACTION_IN_DOUBT (its pause commit no longer verifies): her
        # approval of the failed plan is a resume, which the docs let run it again
        rs = out["rows_start"]
        doubt = {f"{g}-1" for g in GS if "E_ACTION_IN_DOUBT" in str(rs[g].get("reason"))}
        assert all(n <= 1 for t, n in ran.items() if t not in doubt), said
        assert all(ran[s] == 1 for s in F[:4]), said
        assert all(ran[f"{g}-1"] == 1 for g in GS if f"{g}-1" not in doubt), said
    elif v == "forged":
        assert ran["f-05"] == 1, said
    else:
        want = {"f-06": 1, "f-07": 0, "f-08": 0, "f-09": 0}
        assert {s: ran[s] for s in want} == want, said


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r72-foxtrot", _build)


def test_the_lab(lab: Lab) -> None:
    first = lab.first  # type: ignore[attr-defined]
    want = {**{t: 1 for t in F[:4]}, "fg-1-1": 1, "fg-2-1": 1}
    assert {k: first[k] for k in want} == want, first
    assert all(first[k] == 0 for k in TAGS if k not in want), first
    assert lab.tip_subject == "plangate: await-approval plans/fg-2", lab.tip_subject  # type: ignore[attr-defined]


VS = ["start", "rows", "done", "gate1", "gate2", "ctl", "audit"]
IDS = [f"{c}-{v}" for c in CLONES for v in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_foxtrot_reruns_nothing(lab: Lab, vid: str) -> None:
    kind, state, v = vid.split("-", 2)
    out = lab.out[f"{kind}-{state}"]  # type: ignore[attr-defined]
    ran, rows, rs = out["ran"], out["rows"], out["rows_start"]
    said = (ran, rows, out["start"]["err"][-700:], out["after"]["err"][-500:])
    if v == "start":
        held = out["held"]
        assert held["rc"] != 0 and "E_HISTORY_REWRITTEN" in held["err"], held
        if state == "new":
            assert out["start"]["rc"] != 0 and "E_STORAGE" in out["start"]["err"], said
        else:
            assert out["start"]["rc"] == 0, said
            assert out["adopted"] and "its commit.key" in out["adopted"][0], out["adopted"]
    elif v == "rows":
        for s in F[:4]:
            assert rs[s]["status"] == "completed", (s, rs)
        for g in GS:
            assert rs[g]["status"] == "awaiting_approval", (g, rs)
    elif v == "done":
        assert {s: ran[s] for s in F[:4]} == {s: 1 for s in F[:4]}, said
    elif v == "gate1":
        assert {g: ran[f"{g}-1"] for g in GS} == {g: 1 for g in GS}, said
    elif v == "gate2":
        assert {g: ran[f"{g}-2"] for g in GS} == {g: 1 for g in GS}, said
    elif v == "ctl":
        f05 = 1 if kind == "alice" else 0
        want = {"f-05": f05, "f-06": 1, "f-07": 0, "f-08": 0, "f-09": 0}
        assert {s: ran[s] for s in want} == want, said
    elif v == "audit":
        runs = out["runs"]
        want = {**{s: 1 for s in F[:4]}, "f-06": 1, "f-07": 0, "f-08": 0}
        assert {s: runs[s] for s in want} == want, (runs, said)
