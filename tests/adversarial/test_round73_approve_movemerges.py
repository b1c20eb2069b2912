"""Round 73, approval side: round 72's moved lapse (docs/approvals.md, a move whose new file
says other than ``approved`` is a status change of the moved plan, "on the line or on her
branch merged by anyone", ``Lifecycle._side_lapse``) carried by the ways a branch reaches main
that round 72 did not try with a move: a merge of merges, a squash merge, the agent's rebase
of her branch, ``-X theirs`` over the agent's edit of the old path, the agent's move-lapse in
an octopus, the agent's move and copy of her moved plan in one commit; and moves into a folder
that holds another plan's history (a plan that ran there, its folder emptied), swaps with a
plan that ran.

Lab (one, local mode, fake dates): the agent commits one ``rec`` plan per id (tag = the id);
the ``*-hist`` and ``*-ran`` ids have a second plan ``<v>-w`` (tag ``<v>-w``) that Alice
approves and that runs at P1. Y is Alice's approval on her unmerged review branch, X hers on
main; "picks Y" is the agent's ``git cherry-pick -X theirs`` of Y. P2, P3, ``plangate audit
--json`` with the config and on a fresh clone.

Attacks (asserted: ``<v>``'s ``rec`` never ran; ``<v>-w`` ran only at P1; no audit calls a
further run valid):

- ``mm-mv-pick``: Y, X; her move-lapse (``git mv plans/<v> plans/<v>-n`` + ``pending_approval``)
  on her branch A1, Bob merges A1 into his A2 ``--no-ff``, then A2 into main; picks Y.
- ``squash-mv-pick``: her move-lapse on her branch, squash-merged by Bob; picks Y.
- ``rebase-mv-pick``: her move-lapse on her branch, rebased by the agent onto main and
  fast-forwarded (committer the agent); picks Y.
- ``xtheirs-mv-pick``: her move-lapse on her branch; the agent adds a comment to the old
  path on main; Bob merges her branch ``-X theirs``; picks Y.
- ``octo-agent-mv-pick``: the agent's move-lapse on its branch, Alice's octopus with a docs
  branch; picks Y.
- ``mvcp-agent-pick``: her move-lapse on main; the agent, in one commit, moves ``<v>-n`` to
  ``<v>-m`` and copies it to ``<v>-c`` (both byte for byte); picks Y (onto one of them).
- ``into-hist-pick``: ``<v>-w`` ran at P1; Y, X on ``<v>``, her plain revert; the agent
  empties ``plans/<v>-w`` and moves ``plans/<v>`` there byte for byte; picks Y.
- ``swap-ran-bob``: ``<v>-w`` ran at P1; the agent swaps ``<v>``'s and ``<v>-w``'s files and
  sets the ran plan (now at ``plans/<v>``) ``pending_approval``; Bob approves it there (asserted:
  ``<v>-w`` ran once only; ``<v>`` never).

- ``swap-failed-bob``: ``<v>-w`` (its action a tool that fails the first time it is called for
  a tag) ran and FAILED at P1; the agent swaps the two files; Bob approves the failed content
  at ``plans/<v>`` (asserted: neither action ran: the failed one is not run again under a
  new path, nor ``<v>``).

Controls (asserted: ran once, the approver named, both audits valid):

- ``h-mm-mv-web``: her move-lapse through Bob's merge of merges; her web re-approval at
  ``plans/<v>-n``.
- ``h-squash-mv-web``: her move-lapse squash-merged by Bob; her web re-approval after P2 (the
  squash commit is Bob's, so the lapse is another hand's, dated by the next controller commit:
  round 67), run at P3.
- ``h-into-hist-bob``: ``<v>-w`` ran at P1; the agent empties its folder and moves ``<v>``
  there; Bob approves ``<v>`` at ``plans/<v>-w`` (a new life: ``<v>`` runs, ``<v>-w`` not
  again).
- ``h-swap-ran-bob``: ``<v>-w`` ran at P1; the agent swaps the two files; Bob approves
  ``<v>``'s content at ``plans/<v>-w`` (``<v>`` runs; ``<v>-w`` not again).
- ``h-mvover-ran-bob``: ``<v>-w`` ran at P1; in ONE commit the agent removes its folder and
  moves ``plans/<v>`` there; Bob approves at ``plans/<v>-w``.
- ``h-swap-rej-bob``: Alice rejected ``<v>-w`` (pending) at P1; the agent swaps the two files;
  Bob approves ``<v>``'s content at ``plans/<v>-w`` (``<v>`` runs; ``<v>-w`` never).
- ``h-swap-failed-bob``: ``<v>-w`` FAILED at P1; the agent swaps the two files; Bob approves
  ``<v>``'s content at ``plans/<v>-w`` (``<v>`` runs; the failed action is not run again).

Seen (round 73), fixed 2026-11-30 (r73approve): the life rule by ``frozen.hash`` is the index's
too. A plan file moved in one commit onto the path of a plan the controller recorded
(``Lifecycle._move_source``: a swap, ``git rm -r`` + ``git mv`` onto it), frozen as another than
the controller's last commit of that path holds, starts a new life there (``_swapped_in``,
``_new_life``): the state is the moved plan's, as the same two steps in two commits make it (its
status, its request, from its source's state: ``_moved_state``), not the path's old
``completed``/``rejected``/``failed``; the record's files' last commits and the writers stay.
Bob's approval of ``<v>`` at ``plans/<v>-w`` runs it once, the approver named, both audits
valid; the ran (or failed) content moved to ``plans/<v>`` is a moved started plan (no status of
its own, as a ``git mv`` of it gives) and never runs again (``swap-ran-bob``,
``swap-failed-bob`` held: ``E_ALREADY_EXECUTED``). The rows say it: ``plans/<v>-w`` completed
with ``<v>``'s hash, approver bob, each path noting "a new life of the path". All asserted (the
markers are off). As found: 4 BROKE (strict xfails), one class, honest work refused: a plan put
in ONE commit onto the path of a plan the controller recorded (a swap, or the old plan's folder
removed and the new one moved there) keeps that path's recorded state. ``h-swap-ran-bob``: the
agent swapped the files of ``plans/<v>`` (pending, frozen at P0) and ``plans/<v>-w`` (ran at P1:
``completed``, with the controller's ``approval:``/``execution:`` blocks) byte for byte; Bob
approved ``<v>``'s content at ``plans/<v>-w`` with a plain status change. The row of
``plans/<v>-w`` kept ``<v>-w``'s life: status ``completed``, approver alice, the hash ``<v>``'s;
"E_ILLEGAL_TRANSITION: agent set status pending_approval (from completed) ... ignored" and "bob
set status approved (from completed) ... ignored": ``<v>`` never ran (and the row of
``plans/<v>``, the ran content, reads ``pending_approval``, "waiting for an approval").
``h-mvover-ran-bob``: the same with ``git rm -r plans/<v>-w`` and ``git mv plans/<v>
plans/<v>-w`` in one commit (the same two steps in two commits, ``h-into-hist-bob``, ran).
``h-swap-rej-bob``: the swap with a plan Alice rejected: "approved (from rejected)", ignored.
``h-swap-failed-bob``: the swap with a plan that FAILED: Bob's approval of ``<v>`` is read as a
resume of the failed run and refused (``E_PLAN_HASH_MISMATCH``, "a gate or resume approval needs
the same hash"); ``<v>`` never ran. (The failed run is not resumed on ``<v>``'s content either,
nor the failed content run again at ``plans/<v>``: ``swap-failed-bob`` held; a probe outside the
suite found the same for the one-commit replacement of a failed plan.) Two pending plans swapped
(``test_round73_approve_movestates.py``, ``h-swap-bob``) ran. Should (docs/plan-format.md, a
path's life: "A life ends at the commit that removes the plan file ... and where the path holds
a plan frozen as another (``frozen.hash``) than the one the controller last recorded there (a
plan swapped in)"; docs/approvals.md, round 70: two plans swapped byte for byte are each that
content moved, "the folder a swap takes a plan from counts as left by it"): ``<v>`` at
``plans/<v>-w`` is a new life, pending, and Bob's approval runs it once (the ran content stays
ran: ``swap-ran-bob`` held). The rows also misreport: the ``plans/<v>-w`` row shows ``<v>``'s
hash as ``completed``, approved by alice (a version that never ran), and ``plans/<v>`` shows the
ran content as ``pending_approval``; the audit (with the config and on a fresh clone) lists only
the real run, as the controller acted.

Held: every pick of Y was refused and nothing ran (her move-lapse through a merge of merges, a
squash, the agent's rebase of her branch, ``-X theirs`` over the agent's edit of the old path;
the agent's move-lapse in an octopus; the agent's move-and-copy of her moved plan; her plain
revert then the agent's move into an emptied folder that held a ran plan, Y's pick settled by
hand onto it); the ran plan swapped and re-submitted did not run again (``swap-ran-bob``);
every other control ran once, the approver named; the fresh-clone audit agreed with the
controller on every id.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit
from policykit import agent_plan as plan
from test_round2_execution_kit import shared

FORGE = ("GitHub", "noreply@github.com")
PICKS = [
    "mm-mv-pick", "squash-mv-pick", "rebase-mv-pick", "xtheirs-mv-pick",
    "octo-agent-mv-pick", "mvcp-agent-pick", "into-hist-pick",
]  # fmt: skip
ATTACKS = [*PICKS, "swap-ran-bob", "swap-failed-bob"]
HONEST = {
    "h-mm-mv-web": ALICE,
    "h-squash-mv-web": ALICE,
    "h-into-hist-bob": BOB,
    "h-swap-ran-bob": BOB,
    "h-mvover-ran-bob": BOB,
    "h-swap-rej-bob": BOB,
    "h-swap-failed-bob": BOB,
}
ALL = [*ATTACKS, *HONEST]
WITH_W = [
    "into-hist-pick", "swap-ran-bob", "h-into-hist-bob", "h-swap-ran-bob", "h-mvover-ran-bob",
]  # fmt: skip
REJ_W = ["h-swap-rej-bob"]
FAIL_W = ["swap-failed-bob", "h-swap-failed-bob"]
FLAKY = """\
import json, os, sys
tag, log = sys.argv[1], os.environ["REC_LOG"]
if not os.path.exists(f"{log}.{tag}"):  # fails the first time, for a tag
    open(f"{log}.{tag}", "w").close()
    sys.exit("boom")
with open(log, "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag], "stdin": sys.stdin.read()}) + "\\n")
print(json.dumps({"ok": True}))
"""
#: nothing open since r73approve (2026-11-30)
BROKEN: dict[str, Any] = {}


def tags(v: str) -> list[str]:
    return [v, f"{v}-w"] if v in WITH_W or v in REJ_W or v in FAIL_W else [v]


def failed_runs(v: str) -> int:
    """Runs that recorded no call: the -w plan's failed run at P1."""
    return int(v in FAIL_W)


class Clock:
    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.t = int(time.time()) - 7200

    def git(self, *args: str, who=AGENT, forge: bool = False, check: bool = True) -> str:  # type: ignore[no-untyped-def]
        self.t += 20
        when = f"@{self.t} +0000"
        env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        if forge:
            env |= {"GIT_COMMITTER_NAME": FORGE[0], "GIT_COMMITTER_EMAIL": FORGE[1]}
        self.lab.extra_env = env  # type: ignore[attr-defined]
        try:
            self.lab.git(*args, who=who, check=check)
        finally:
            self.lab.extra_env = {}  # type: ignore[attr-defined]
        return self.lab.head()

    def commit(self, msg: str, who=AGENT, forge: bool = False) -> str:  # type: ignore[no-untyped-def]
        self.lab.git("add", "-A")
        return self.git("commit", "-q", "-m", msg, who=who, forge=forge)

    def set(self, slug: str, status: str, who=ALICE, msg: str = "lgtm", forge=False) -> str:  # type: ignore[no-untyped-def]
        self.lab.set_status(slug, status)
        return self.commit(msg, who=who, forge=forge)

    def run(self) -> None:
        self.t += 20
        self.lab.git_date = f"@{self.t} +0000"
        self.lab.run()
        self.lab.git_date = None


def _build(root: Path) -> Lab:
    (root / "flaky.py").write_text(FLAKY)
    argv = json.dumps([sys.executable, str(root / "flaky.py"), "{tag}"])
    log = json.dumps(str(root / "ran.log"))
    lab = Lab(root, tools=f"flaky: {{kind: exec, argv: {argv}, env: {{REC_LOG: {log}}}}}\n")
    c = Clock(lab)
    p = lab.repo / "plans"
    for v in ALL:
        for t in tags(v):
            text = plan(t)
            if v in FAIL_W and t.endswith("-w"):
                text = text.replace("- name: rec\n", "- name: flaky\n").replace(
                    "tool: rec", "tool: flaky"
                )
            lab.write(t, text)
    c.commit("agent plans")
    c.run()  # P0
    for v in [*WITH_W, *FAIL_W]:
        lab.set_status(f"{v}-w", "approved")
    c.commit("approve the -w plans", who=ALICE)
    for v in REJ_W:
        lab.set_status(f"{v}-w", "rejected")
    c.commit("reject", who=ALICE)
    c.run()  # P1
    lab.after_p1 = {v: len(lab.calls(f"{v}-w")) for v in WITH_W}  # type: ignore[attr-defined]
    lab.failed_p1 = {v: lab.plan(f"{v}-w")["plan"]["status"] for v in FAIL_W}  # type: ignore[attr-defined]

    def co(ref: str, new: str = "", who=AGENT) -> None:  # type: ignore[no-untyped-def]
        c.git("checkout", "-q", *(["-b", new] if new else []), ref, who=who)

    def mv(src: str, dst: str, status: str | None = None, who=AGENT, msg: str = "move") -> str:  # type: ignore[no-untyped-def]
        lab.git("mv", f"plans/{src}", f"plans/{dst}")
        if status:
            lab.set_status(dst, status)
        return c.commit(f"{msg} plans/{src} -> plans/{dst}", who=who)

    def docs(name: str, who=AGENT) -> str:  # type: ignore[no-untyped-def]
        (lab.repo / "docs").mkdir(exist_ok=True)
        (lab.repo / "docs" / f"{name}.md").write_text(name + "\n")
        return c.commit(f"docs {name}", who=who)

    y: dict[str, str] = {}
    for v in PICKS:
        co("main", f"alice/y-{v}", who=ALICE)
        y[v] = c.set(v, "approved", msg="lgtm (review)")
        co("main")
    x = {v: c.set(v, "approved", msg="approve") for v in [*PICKS, "h-mm-mv-web", "h-squash-mv-web"]}

    # a merge of merges
    for v in ("mm-mv-pick", "h-mm-mv-web"):
        co("main", f"bob/{v}-2", who=BOB)
        docs(f"{v}-2", who=BOB)
        co("main", f"alice/{v}-1", who=ALICE)
        mv(v, f"{v}-n", "pending_approval", who=ALICE, msg="not yet")
        co(f"bob/{v}-2", who=BOB)
        c.git("merge", "-q", "--no-ff", "-m", "merge", f"alice/{v}-1", who=BOB)
        co("main", who=BOB)
        c.git("merge", "-q", "--no-ff", "-m", "merge", f"bob/{v}-2", who=BOB)
    # squash merges
    for v in ("squash-mv-pick", "h-squash-mv-web"):
        co("main", f"alice/{v}", who=ALICE)
        mv(v, f"{v}-n", "pending_approval", who=ALICE, msg="not yet")
        co("main", who=BOB)
        c.git("merge", "-q", "--squash", f"alice/{v}", who=BOB)
        c.commit(f"squash alice/{v}", who=BOB)
    # the agent's rebase of her branch
    co("main", "alice/rebase", who=ALICE)
    mv("rebase-mv-pick", "rebase-mv-pick-n", "pending_approval", who=ALICE, msg="not yet")
    co("main")
    docs("rebase-base")
    co("alice/rebase")
    c.git("rebase", "-q", "main")
    co("main")
    c.git("merge", "-q", "--ff-only", "alice/rebase")
    # -X theirs over the agent's edit of the old path
    co("main", "alice/xtheirs", who=ALICE)
    mv("xtheirs-mv-pick", "xtheirs-mv-pick-n", "pending_approval", who=ALICE, msg="not yet")
    co("main")
    (p / "xtheirs-mv-pick" / "PLAN.yml").write_text(
        (p / "xtheirs-mv-pick" / "PLAN.yml").read_text() + "# agent: note\n"
    )
    c.commit("agent: note")
    co("main", who=BOB)
    c.git("merge", "-q", "--no-ff", "-X", "theirs", "-m", "merge", "alice/xtheirs", who=BOB)
    lab.xtheirs = sorted(q.name for q in p.iterdir() if q.name.startswith("xtheirs"))  # type: ignore[attr-defined]
    # the agent's move-lapse in an octopus
    co("main", "agent/octo-mv")
    mv("octo-agent-mv-pick", "octo-agent-mv-pick-n", "pending_approval", msg="not yet")
    co("main", "agent/octo-docs")
    docs("octo-docs")
    co("main", who=ALICE)
    c.git("merge", "-q", "--no-ff", "-m", "octopus", "agent/octo-mv", "agent/octo-docs", who=ALICE)
    lab.octo = len(lab.git("log", "-1", "--format=%P").split())  # type: ignore[attr-defined]
    # her move-lapse, then the agent's move and copy in one commit
    mv("mvcp-agent-pick", "mvcp-agent-pick-n", "pending_approval", who=ALICE, msg="not yet")
    shutil.copytree(p / "mvcp-agent-pick-n", p / "mvcp-agent-pick-c")
    lab.git("mv", "plans/mvcp-agent-pick-n", "plans/mvcp-agent-pick-m")
    c.commit("agent: move and copy")
    # into a folder holding another plan's history
    c.git("revert", "--no-edit", x["into-hist-pick"], who=ALICE)
    for v in ("into-hist-pick", "h-into-hist-bob"):
        c.git("rm", "-q", "-r", f"plans/{v}-w")
        c.commit(f"agent: archive plans/{v}-w")
        mv(v, f"{v}-w")
    c.set("h-into-hist-bob-w", "approved", who=BOB, msg="approve")
    # onto a ran plan's path in one commit
    c.git("rm", "-q", "-r", "plans/h-mvover-ran-bob-w")
    lab.git("mv", "plans/h-mvover-ran-bob", "plans/h-mvover-ran-bob-w")
    c.commit("agent: replace plans/h-mvover-ran-bob-w")
    c.set("h-mvover-ran-bob-w", "approved", who=BOB, msg="approve")
    # swaps with a plan that ran (or was rejected)
    for v in ("swap-ran-bob", "h-swap-ran-bob", "h-swap-rej-bob", *FAIL_W):
        a, w = (p / v / "PLAN.yml").read_bytes(), (p / f"{v}-w" / "PLAN.yml").read_bytes()
        (p / v / "PLAN.yml").write_bytes(w)
        (p / f"{v}-w" / "PLAN.yml").write_bytes(a)
        c.commit(f"agent: swap plans/{v} and plans/{v}-w")
    lab.set_status("swap-ran-bob", "pending_approval")
    c.commit("agent: again")
    c.set("swap-ran-bob", "approved", who=BOB, msg="approve")
    c.set("h-swap-ran-bob-w", "approved", who=BOB, msg="approve")
    c.set("h-swap-rej-bob-w", "approved", who=BOB, msg="approve")
    c.set("swap-failed-bob", "approved", who=BOB, msg="approve")  # the failed content, moved
    c.set("h-swap-failed-bob-w", "approved", who=BOB, msg="approve")
    # her web re-approvals
    c.set("h-mm-mv-web-n", "approved", msg="Update PLAN.yml", forge=True)
    # the agent brings Y back
    for v in PICKS:
        if v != "into-hist-pick":
            c.git("cherry-pick", "-X", "theirs", y[v])
            continue
        # git pairs no rename onto a path Y's parent holds: the agent settles the
        # modify/delete by hand (her status line on the moved plan), keeping her authorship
        c.git("cherry-pick", "-X", "theirs", y[v], check=False)
        lab.git("rm", "-q", "-r", "--cached", "--ignore-unmatch", f"plans/{v}")
        shutil.rmtree(p / v, ignore_errors=True)
        lab.set_status(f"{v}-w", "approved")
        lab.git("add", "-A")
        c.git("-c", "core.editor=true", "cherry-pick", "--continue")
        lab.hist_pick = lab.git("log", "-1", "--format=%an|%cn|%s").strip()  # type: ignore[attr-defined]
    lab.shown = {  # type: ignore[attr-defined]
        v: [
            lab.plan(q.name)["plan"]["status"]
            for q in p.iterdir()
            if (q.name.startswith(v) and (q / "PLAN.yml").exists() and "-w" not in q.name)
            or (q.name == f"{v}-w" and v == "into-hist-pick")
        ]
        for v in PICKS
    }
    c.run()  # P2
    lab.first = {t: len(lab.calls(t)) for v in ALL for t in tags(v)}  # type: ignore[attr-defined]
    # Bob's squash made the lapse (another hand's: dated by the next controller commit, round
    # 67), so her web re-approval comes after P2
    c.set("h-squash-mv-web-n", "approved", msg="Update PLAN.yml", forge=True)
    c.run()  # P3
    lab.later = {t: len(lab.calls(t)) for v in ALL for t in tags(v)}  # type: ignore[attr-defined]
    c.run()  # P4
    lab.final = {v: lab.codes(v) for v in ALL}  # type: ignore[attr-defined]
    lab.rows = lab.status()  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r73-movemerges", _build)


def test_the_lab_played_as_described(lab: Lab) -> None:
    assert lab.after_p1 == {v: 1 for v in WITH_W}  # type: ignore[attr-defined]
    assert lab.failed_p1 == {v: "failed" for v in FAIL_W}, lab.failed_p1  # type: ignore[attr-defined]
    assert lab.octo == 3  # type: ignore[attr-defined]
    assert lab.hist_pick == "Alice|Agent|lgtm (review)", lab.hist_pick  # type: ignore[attr-defined]
    assert lab.xtheirs == ["xtheirs-mv-pick-n"], lab.xtheirs  # type: ignore[attr-defined]
    assert all("approved" in s for s in lab.shown.values()), lab.shown  # type: ignore[attr-defined]


def _hint(lab: Lab, v: str) -> str:
    return lab.final[v][:2000] + str({k: r for k, r in lab.rows.items() if v in k})[:2500]  # type: ignore[attr-defined]


def _valid_at(report: dict[str, Any], path: str) -> list[dict[str, Any]]:
    return [
        e for e in report.get("executions", []) if e.get("plan") == path and e.get("approval_valid")
    ]


@pytest.mark.parametrize("vid", cases(ATTACKS, ATTACKS, BROKEN))
def test_a_move_lapse_however_it_is_merged_lets_no_copy_run(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], _hint(lab, vid)
    if vid in WITH_W or vid in FAIL_W:
        assert len(lab.calls(f"{vid}-w")) == int(vid in WITH_W), _hint(lab, vid)
        # the only valid run: the -w plan's at P1, at its own path
        runs = _valid_at(lab.report, f"plans/{vid}-w") + _valid_at(lab.report, f"plans/{vid}")  # type: ignore[attr-defined]
        assert len(runs) == 1, runs
    else:
        runs = [
            e
            for e in lab.report.get("executions", [])  # type: ignore[attr-defined]
            if str(e.get("plan")).startswith(f"plans/{vid}") and e.get("approval_valid")
        ]
        assert runs == [], runs


@pytest.mark.parametrize("vid", cases(list(HONEST), list(HONEST), BROKEN))
def test_honest_moves_run_once_the_approver_named(lab: Lab, vid: str) -> None:
    ran = lab.later if vid == "h-squash-mv-web" else lab.first  # type: ignore[attr-defined]
    assert ran[vid] == 1, _hint(lab, vid)
    assert len(lab.calls(vid)) == 1
    if vid in WITH_W or vid in REJ_W or vid in FAIL_W:
        before = int(vid in WITH_W or vid in FAIL_W)  # the -w plan's own run at P1
        assert len(lab.calls(f"{vid}-w")) == int(vid in WITH_W), _hint(lab, vid)
        runs = _valid_at(lab.report, f"plans/{vid}-w")  # type: ignore[attr-defined]
        assert len(runs) == before + 1 and runs[-1]["approver"] == BOB[1], runs
    else:
        runs = _valid_at(lab.report, f"plans/{vid}-n")  # type: ignore[attr-defined]
        assert len(runs) == 1 and runs[0]["approver"] == HONEST[vid][1], runs


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    here = [f"plans/{vid}{s}" for s in ("", "-n", "-m", "-c", "-w")]
    mine = [
        (e["plan"], e.get("approver"))
        for e in lab.report.get("executions", [])  # type: ignore[attr-defined]
        if e.get("plan") in here and e.get("approval_valid")
    ]
    fresh = [
        (e["plan"], e.get("approver"))
        for e in lab.fresh.get("executions", [])  # type: ignore[attr-defined]
        if e.get("plan") in here and e.get("approval_valid")
    ]
    assert sorted(mine) == sorted(fresh), (mine, fresh)
    ran = sum(len(lab.calls(t)) for t in tags(vid)) + failed_runs(vid)
    assert len(fresh) == ran, (fresh, _hint(lab, vid))


@pytest.mark.parametrize("vid", ALL)
def test_the_controller_committed_one_start_per_run(lab: Lab, vid: str) -> None:
    starts = [
        s
        for q in (vid, f"{vid}-n", f"{vid}-m", f"{vid}-c", f"{vid}-w")
        for s in lab.subjects(q)
        if s.startswith("plangate: start ")
    ]
    ran = sum(len(lab.calls(t)) for t in tags(vid)) + failed_runs(vid)
    assert len(starts) == ran, (starts, _hint(lab, vid))
