"""Round 73, approval side: round 72's moved-status rule (docs/approvals.md, "Every other
status a move carries is a status CHANGE of the moved plan, from the state its source had",
``Lifecycle._moved_state``) met by the statuses round 72 did not try: ``approved`` set by
the mover (the agent, or Bob after a rejection or after a run), ``aborted`` and ``completed``
(controller-only states) set by her move, ``pending_approval`` set by the agent's move of a
rejected or completed plan; and by the shapes around a move: a move back, a copy back to the
old path, the folder deleted and re-added, an octopus, swaps of two plans' folders.

Lab (one, local mode, fake dates): the agent commits one ``rec`` plan per id (tag = the id;
for the swap ids two plans ``<v>-a`` and ``<v>-b``, tags ``<v>-a``/``<v>-b``, their first
lines alike). P0 freezes. The ``done-*`` ids are approved by Alice and run at P1. Then Alice
makes ``Y`` (her approval on her unmerged review branch ``alice/y-<v>``) and ``X`` (hers on
main) where said, the histories below are played, P2 and P3 run, ``plangate audit --json``
with the config and on a fresh clone. "Picks Y" is the agent's ``git cherry-pick -X theirs``
of Y onto main.

Attacks (asserted: the named plans' ``rec`` never ran, or ran only at P1 for ``done-*``; no
audit calls a further run valid; one start at most):

- ``mv-appr-agent``: the agent moves ``plans/<v>`` to ``plans/<v>-n`` setting ``approved`` in
  the move's commit (its own approval made with a move).
- ``mv-back-pick``: Y, X; Alice moves the folder setting ``pending_approval`` (her lapse); the
  agent moves it back byte for byte; picks Y (lands on ``plans/<v>``).
- ``cp-back-pick``: Y, X; her move-lapse; the agent copies ``plans/<v>-n`` back to
  ``plans/<v>`` (both kept); picks Y (lands on the copy).
- ``rm-readd-pick``: Y, X; her move-lapse; the agent ``git rm -r plans/<v>-n`` (commit), then
  restores ``plans/<v>`` from Y's parent (the pending bytes, commit); picks Y.
- ``mv-octo-pick``: Y, X; her move-lapse on her branch; Bob merges it in an octopus with a
  docs branch; picks Y (git's rename pairing lands it at ``plans/<v>-n``).
- ``swap-back-pick``: Y, X on ``<v>-a``; Alice swaps the two folders' files, ``<v>-a``'s
  content (now at ``plans/<v>-b``) set to ``pending_approval``; the agent swaps them back byte
  for byte; picks Y.
- ``swap-reject-bob``: Alice swaps the two files setting ``<v>-a``'s moved content
  ``rejected``; Bob approves it at ``plans/<v>-b``.
- ``rej-mv-appr-bob``: Alice rejects in place; Bob moves the folder setting ``approved``.
- ``rej-cp-appr-bob``: Alice rejects in place; Bob copies the folder to ``plans/<v>-c`` setting
  ``approved`` there.
- ``rej-mv-pend-bob``: Alice rejects in place; the agent moves the folder setting
  ``pending_approval`` (a "resubmission"); Bob approves at ``plans/<v>-n``.
- ``ip-abort-pick`` / ``mv-abort-pick``: Y, X; Alice sets ``aborted`` in place / with a move;
  picks Y.
- ``ip-done-pick`` / ``mv-done-pick``: Y, X; Alice sets ``completed`` (a controller-only
  state) in place / with a move; picks Y.
- ``done-mv-appr-bob``: ran at P1; Bob moves the folder setting ``approved``.
- ``done-cp-appr-bob``: ran at P1; Bob copies it to ``plans/<v>-c`` setting ``approved``.
- ``done-mv-pend-bob``: ran at P1; the agent moves it setting ``pending_approval``; Bob
  approves at ``plans/<v>-n``.

Controls (asserted: ran once at P2, approver as named, both audits valid):

- ``h-mv-appr-bob``: Bob's move setting ``approved`` (round 70: an approval made with a move).
- ``h-mv-back-bob``: the agent moves the folder away and back; Bob approves ``plans/<v>``.
- ``h-swap-appr``: Alice swaps the two files approving ``<v>-a``'s content in the swap
  (``<v>-a`` runs, hers; ``<v>-b`` never).
- ``h-swap-bob``: the agent swaps them byte for byte; Bob approves both at their new paths.
- ``h-mv-lapse-web``: X; her move-lapse on main; her web-editor re-approval at ``plans/<v>-n``.
- ``h-mv-octo-web``: X; her move-lapse on her branch, Bob's octopus; her web re-approval.
- ``h-mv-merge-appr``: the agent moves the folder on its branch; Bob merges ``--no-ff
  --no-commit`` and sets ``approved`` in the merge.

Seen (round 73): no break. Held: every attack id's ``rec`` never ran (``done-*`` only at P1)
and no audit called a further run valid; every control ran once, the approver named; the
fresh-clone audit agreed with the controller on every id.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit
from policykit import agent_plan as plan
from test_round2_execution_kit import shared

FORGE = ("GitHub", "noreply@github.com")
SWAPS = ["swap-back-pick", "swap-reject-bob", "h-swap-appr", "h-swap-bob"]
PICKS = [
    "mv-back-pick", "cp-back-pick", "rm-readd-pick", "mv-octo-pick", "swap-back-pick",
    "ip-abort-pick", "mv-abort-pick", "ip-done-pick", "mv-done-pick",
]  # fmt: skip
DONE = ["done-mv-appr-bob", "done-cp-appr-bob", "done-mv-pend-bob"]
ATTACKS = [
    "mv-appr-agent", *PICKS, "swap-reject-bob",
    "rej-mv-appr-bob", "rej-cp-appr-bob", "rej-mv-pend-bob", *DONE,
]  # fmt: skip
HONEST = {
    "h-mv-appr-bob": ("h-mv-appr-bob", BOB, "plans/h-mv-appr-bob-n"),
    "h-mv-back-bob": ("h-mv-back-bob", BOB, "plans/h-mv-back-bob"),
    "h-swap-appr": ("h-swap-appr-a", ALICE, "plans/h-swap-appr-b"),
    "h-swap-bob": ("h-swap-bob-a", BOB, "plans/h-swap-bob-b"),
    "h-mv-lapse-web": ("h-mv-lapse-web", ALICE, "plans/h-mv-lapse-web-n"),
    "h-mv-octo-web": ("h-mv-octo-web", ALICE, "plans/h-mv-octo-web-n"),
    "h-mv-merge-appr": ("h-mv-merge-appr", BOB, "plans/h-mv-merge-appr-n"),
}
ALL = [*ATTACKS, *HONEST]
Y_IDS = [*PICKS, "swap-reject-bob"]
BROKEN: dict[str, Any] = {}


def tags(v: str) -> list[str]:
    return [f"{v}-a", f"{v}-b"] if v in SWAPS else [v]


def runs_of(lab: Lab, report: dict[str, Any], tag: str) -> list[dict[str, Any]]:
    """Valid executions of ``tag``'s plan: at its paths (moves and copies), or for a swapped
    plan at the folder that holds it at the end."""
    here = lab.homes.get(tag) or {f"plans/{tag}{s}" for s in ("", "-n", "-c")}  # type: ignore[attr-defined]
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


def swap_plan(v: str, side: str) -> str:
    """The agent's plan ``<v>-<side>``: its first lines (name, task) alike for both sides."""
    return (
        plan(f"{v}-{side}")
        .replace(f'"{v}-{side}"', f'"{v}"', 1)
        .replace(f'"agent task {v}-{side}"', f'"agent task {v}"')
    )


class Clock:
    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.t = int(time.time()) - 7200

    def git(self, *args: str, who=AGENT, forge: bool = False) -> str:  # type: ignore[no-untyped-def]
        self.t += 20
        when = f"@{self.t} +0000"
        env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        if forge:
            env |= {"GIT_COMMITTER_NAME": FORGE[0], "GIT_COMMITTER_EMAIL": FORGE[1]}
        self.lab.extra_env = env  # type: ignore[attr-defined]
        try:
            self.lab.git(*args, who=who)
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
    lab = Lab(root)
    c = Clock(lab)
    p = lab.repo / "plans"
    for v in ALL:
        if v in SWAPS:
            lab.write(f"{v}-a", swap_plan(v, "a"))
            lab.write(f"{v}-b", swap_plan(v, "b"))
        else:
            lab.write(v, plan(v))
    c.commit("agent plans")
    c.run()  # P0
    for v in DONE:
        lab.set_status(v, "approved")
    c.commit("approve the done ids", who=ALICE)
    c.run()  # P1: the done ids run
    lab.after_p1 = {v: len(lab.calls(v)) for v in DONE}  # type: ignore[attr-defined]

    def co(ref: str, new: str = "", who=AGENT) -> None:  # type: ignore[no-untyped-def]
        c.git("checkout", "-q", *(["-b", new] if new else []), ref, who=who)

    def mv(src: str, dst: str, status: str | None = None, who=AGENT, msg: str = "move") -> str:  # type: ignore[no-untyped-def]
        lab.git("mv", f"plans/{src}", f"plans/{dst}")
        if status:
            lab.set_status(dst, status)
        return c.commit(f"{msg} plans/{src} -> plans/{dst}", who=who)

    def cp(src: str, dst: str, status: str | None = None, who=AGENT) -> str:  # type: ignore[no-untyped-def]
        shutil.copytree(p / src, p / dst)
        if status:
            lab.set_status(dst, status)
        return c.commit(f"copy plans/{src} -> plans/{dst}", who=who)

    def swap(v: str, status: str | None = None, who=AGENT) -> str:  # type: ignore[no-untyped-def]
        a, b = lab.read(f"{v}-a"), lab.read(f"{v}-b")
        lab.write(f"{v}-a", b)
        lab.write(f"{v}-b", a)
        if status:
            lab.set_status(f"{v}-b", status)
        return c.commit(f"swap plans/{v}-a and plans/{v}-b", who=who)

    def docs(name: str, who=AGENT) -> str:  # type: ignore[no-untyped-def]
        (lab.repo / "docs").mkdir(exist_ok=True)
        (lab.repo / "docs" / f"{name}.md").write_text(name + "\n")
        return c.commit(f"docs {name}", who=who)

    def slug(v: str) -> str:
        return f"{v}-a" if v in SWAPS else v

    # Y on her review branches, then X on main
    y: dict[str, str] = {}
    for v in Y_IDS:
        co("main", f"alice/y-{v}", who=ALICE)
        y[v] = c.set(slug(v), "approved", msg="lgtm (review)")
        co("main")
    for v in [*PICKS, "h-mv-lapse-web", "h-mv-octo-web"]:
        c.set(slug(v), "approved", msg="approve")

    # the agent's own approval made with a move
    mv("mv-appr-agent", "mv-appr-agent-n", "approved")
    # her move-lapse, then the agent's way back
    mv("mv-back-pick", "mv-back-pick-n", "pending_approval", who=ALICE, msg="not yet")
    mv("mv-back-pick-n", "mv-back-pick", msg="move back")
    mv("cp-back-pick", "cp-back-pick-n", "pending_approval", who=ALICE, msg="not yet")
    cp("cp-back-pick-n", "cp-back-pick")
    mv("rm-readd-pick", "rm-readd-pick-n", "pending_approval", who=ALICE, msg="not yet")
    c.git("rm", "-q", "-r", "plans/rm-readd-pick-n")
    c.commit("drop plans/rm-readd-pick-n")
    c.git("checkout", f"{y['rm-readd-pick']}^", "--", "plans/rm-readd-pick")
    c.commit("restore plans/rm-readd-pick")
    for v in ("mv-octo-pick", "h-mv-octo-web"):
        co("main", f"alice/mv-{v}", who=ALICE)
        mv(v, f"{v}-n", "pending_approval", who=ALICE, msg="not yet")
        co("main", f"bob/docs-{v}", who=BOB)
        docs(f"docs-{v}", who=BOB)
        co("main", who=BOB)
        c.git("merge", "-q", "--no-ff", "-m", "octopus", f"alice/mv-{v}", f"bob/docs-{v}", who=BOB)
    swap("swap-back-pick", "pending_approval", who=ALICE)
    swap("swap-back-pick")
    # controller-only and abort states set by her, in place and with a move
    c.set("ip-abort-pick", "aborted", msg="abort")
    mv("mv-abort-pick", "mv-abort-pick-n", "aborted", who=ALICE, msg="abort")
    c.set("ip-done-pick", "completed", msg="done")
    mv("mv-done-pick", "mv-done-pick-n", "completed", who=ALICE, msg="done")
    # rejections, then moves
    swap("swap-reject-bob", "rejected", who=ALICE)
    c.set("swap-reject-bob-b", "approved", who=BOB, msg="approve")
    for v in ("rej-mv-appr-bob", "rej-cp-appr-bob", "rej-mv-pend-bob"):
        c.set(v, "rejected", msg="no")
    mv("rej-mv-appr-bob", "rej-mv-appr-bob-n", "approved", who=BOB, msg="approve")
    cp("rej-cp-appr-bob", "rej-cp-appr-bob-c", "approved", who=BOB)
    mv("rej-mv-pend-bob", "rej-mv-pend-bob-n", "pending_approval", msg="resubmit")
    c.set("rej-mv-pend-bob-n", "approved", who=BOB, msg="approve")
    # completed plans moved or copied with a status
    mv("done-mv-appr-bob", "done-mv-appr-bob-n", "approved", who=BOB, msg="approve")
    cp("done-cp-appr-bob", "done-cp-appr-bob-c", "approved", who=BOB)
    mv("done-mv-pend-bob", "done-mv-pend-bob-n", "pending_approval", msg="again")
    c.set("done-mv-pend-bob-n", "approved", who=BOB, msg="approve")
    # controls
    mv("h-mv-appr-bob", "h-mv-appr-bob-n", "approved", who=BOB, msg="approve")
    mv("h-mv-back-bob", "h-mv-back-bob-n")
    mv("h-mv-back-bob-n", "h-mv-back-bob", msg="move back")
    c.set("h-mv-back-bob", "approved", who=BOB, msg="approve")
    swap("h-swap-appr", "approved", who=ALICE)
    swap("h-swap-bob")
    c.set("h-swap-bob-a", "approved", who=BOB, msg="approve")
    c.set("h-swap-bob-b", "approved", who=BOB, msg="approve")
    mv("h-mv-lapse-web", "h-mv-lapse-web-n", "pending_approval", who=ALICE, msg="not yet")
    for v in ("h-mv-lapse-web", "h-mv-octo-web"):
        c.set(f"{v}-n", "approved", msg="Update PLAN.yml", forge=True)
    co("main", "agent/mv-merge")
    mv("h-mv-merge-appr", "h-mv-merge-appr-n")
    co("main", who=BOB)
    c.git("merge", "-q", "--no-ff", "--no-commit", "agent/mv-merge", who=BOB)
    lab.set_status("h-mv-merge-appr-n", "approved")
    c.commit("merge agent/mv-merge, approve", who=BOB)
    # the agent brings Y back
    for v in PICKS:
        c.git("cherry-pick", "-X", "theirs", y[v])
    lab.shown = {}  # type: ignore[attr-defined]
    for v in PICKS:
        where = [q for q in (slug(v), f"{slug(v)}-n") if (p / q / "PLAN.yml").exists()]
        lab.shown[v] = [lab.plan(q)["plan"]["status"] for q in where]  # type: ignore[attr-defined]
    lab.homes = {  # type: ignore[attr-defined]
        t: {f"plans/{q}" for q in (f"{v}-a", f"{v}-b") if f'tag: "{t}"' in lab.read(q)}
        for v in SWAPS
        for t in tags(v)
    }
    c.run()  # P2
    lab.first = {t: len(lab.calls(t)) for v in ALL for t in tags(v)}  # type: ignore[attr-defined]
    c.run()  # P3
    lab.final = {v: lab.codes(slug(v)) + str(lab.status()) for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r73-movestates", _build)


def test_the_lab_played_as_described(lab: Lab) -> None:
    assert lab.after_p1 == {v: 1 for v in DONE}  # type: ignore[attr-defined]
    assert all("approved" in s for s in lab.shown.values()), lab.shown  # type: ignore[attr-defined]


def _hint(lab: Lab, v: str) -> str:
    return lab.final[v][:2500]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ATTACKS, ATTACKS, BROKEN))
def test_a_status_a_move_carries_runs_nothing_it_should_not(lab: Lab, vid: str) -> None:
    for t in tags(vid):
        want = 1 if vid in DONE else 0
        assert len(lab.calls(t)) == want, (t, _hint(lab, vid))
        assert len(runs_of(lab, lab.report, t)) == want, runs_of(lab, lab.report, t)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(list(HONEST), list(HONEST), BROKEN))
def test_honest_moves_and_swaps_run_once_the_approver_named(lab: Lab, vid: str) -> None:
    tag, who, _where = HONEST[vid]
    assert lab.first[tag] == 1, _hint(lab, vid)  # type: ignore[attr-defined]
    assert len(lab.calls(tag)) == 1
    runs = runs_of(lab, lab.report, tag)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == who[1], runs
    if vid == "h-swap-appr":
        assert lab.calls("h-swap-appr-b") == []
    if vid == "h-swap-bob":
        assert len(lab.calls("h-swap-bob-b")) == 1


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    for t in tags(vid):
        fresh = runs_of(lab, lab.fresh, t)  # type: ignore[attr-defined]
        assert len(fresh) == len(lab.calls(t)), (t, fresh, lab.calls(t))
        assert len(runs_of(lab, lab.report, t)) == len(fresh)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", ALL)
def test_the_controller_committed_one_start_at_most(lab: Lab, vid: str) -> None:
    for t in tags(vid):
        here = lab.homes.get(t) or {f"plans/{t}{s}" for s in ("", "-n", "-c")}  # type: ignore[attr-defined]
        starts = [
            s
            for q in sorted(here)
            for s in lab.subjects(q.removeprefix("plans/"))
            if s.startswith("plangate: start ")
        ]
        assert len(starts) == len(lab.calls(t)) <= 1, (t, starts, _hint(lab, vid))
