"""Round 72, approval side: WHICH commit made a lapse (docs/approvals.md, "When the lapse was
made": "the commit that MADE the lapse dates it, wherever it reaches the branch"; for a merge
whose file a merged branch set, that branch's commit that set the plan away from
``approved``, ``Lifecycle._lapse_maker``) when the file's history offers other candidates:
an older lapse of hers on the same path (approved, taken back, approved again, taken back
again), a controller look-alike on the merged branch right after the agent's lapse, and a lapse
made by a rename between ``PLAN.yml`` and ``PLAN.yaml`` (round 71's edit in place) that the
agent's copy of her older approval then follows through git's rename pairing.

Lab (one, local mode, fake dates): the agent commits one ``rec`` plan per id; P0 freezes, P1
freezes a filler plan (a controller commit whose ``Controller-Seal:`` line the agent copies).
``Y`` is Alice's approval on her unmerged review branch; ``X`` (``X2``) hers on main.

Her decision taken back, then the agent cherry-picks Y onto main (asserted: ``rec`` never
ran, no valid run in either audit, one start at most):

- ``relapse-br``: on main Alice approves (X1) and reverts (R1) herself, then makes Y on her
  review branch, approves again on main (X2), and reverts X2 on her branch (R2), merged
  ``--no-ff`` by Bob: R1 is hers and dated before Y, R2 after it.
- ``relapse-mrev``: the same, R2 made inside her own merge (``--no-commit``) on her branch.
- ``relapse-octo``: the same, R2's branch merged by Bob in an octopus with a docs branch.
- ``relapse-agent``: the same history, R2 the agent's revert (1990) on its branch, merged by
  Alice ``--no-ff``.
- ``relapse-agent-line``: R2 the agent's revert (1990) on main.
- ``fake-br``: Y, then X; the agent reverts X (1990) on its branch and commits right after it
  there, under the controller's name and dated 1990, a look-alike ``plangate: freeze`` of the
  filler; Alice merges ``--no-ff``.
- ``fake-seal-br``: the same look-alike carrying P1's ``Controller-Seal:`` line.
- ``fake-mm``: the agent's revert on A1, merged into A2 where the look-alike follows; Alice
  merges A2.
- ``ren-lapse-br``: Y, then X; Alice renames ``PLAN.yml`` to ``PLAN.yaml`` setting
  ``pending_approval`` in the same commit on her branch (her lapse, a rename), Bob merges
  ``--no-ff``; the agent's pick of Y lands in ``PLAN.yaml`` through git's rename pairing.
- ``ren-lapse-agent``: the rename-and-revert is the agent's (1990) on its branch, merged by
  Alice.
- ``ren-lapse-bob``: Bob's rename-and-revert on main (another hand's lapse).
- ``ren-lapse-back``: ``ren-lapse-br``, then the agent renames ``PLAN.yaml`` back to
  ``PLAN.yml`` byte for byte (1990) before its pick.
- ``mv-lapse``: Y, then X; Alice moves the folder (``git mv plans/<v> plans/<v>-n``) and sets
  ``pending_approval`` in the same commit, on main: her decision taken back by a move; the
  agent's pick of Y lands on ``plans/<v>-n/PLAN.yml`` through git's rename pairing.
- ``mv-lapse-br``: her move-and-revert on her branch, merged ``--no-ff`` by Bob.
- ``mv-lapse-agent``: the agent's move-and-revert (1990) on its branch, merged by Alice.
- ``mv-lapse-bob``: Bob's move-and-revert on main (a reviewer's objection).
- ``mv-lapse-line-agent``: the agent's move-and-revert on main, its own clock.
- ``mv-lapse-yaml``: her move to ``plans/<v>-n/PLAN.yaml`` (folder and name) with the revert.
- ``mv-lapse-merge``: her move-and-revert written inside her own merge of a docs branch.
- ``mv-lapse-draft``: her move setting ``draft``; the agent's pick taken ``-X theirs``.
- ``mv-lapse-pickx``: her move-and-revert; the agent cherry-picks X itself (not Y).
- ``mv-then-lapse``: her byte-exact move, then her plain revert at the new path (two commits).
- ``rev-then-mv``: her plain revert of X, then the agent's byte-exact folder move, then its
  pick of Y onto the moved plan.
- ``mv-reject``: her move setting ``rejected`` (a withdrawal with the move), on main; the
  agent's pick of Y taken ``-X theirs`` (the status line conflicts).
- ``mv-reject-br``: the same on her branch, merged ``--no-ff`` by Bob.
- ``ren-reject``: her rename to ``PLAN.yaml`` setting ``rejected``, on main.
- ``mv-reject-bob``: her move setting ``rejected`` on main; then Bob (an approver) approves
  the moved plan: no cherry-pick at all.
- ``ren-reject-bob``: her rename setting ``rejected``; then Bob approves ``PLAN.yaml``.

Honest (asserted: her re-approval in the forge's web editor after her own lapse ran at P2,
approver alice, both audits valid):

- ``h-relapse-br``, ``h-relapse-mrev``: X1, R1, X2, R2 as above, all hers, R2's branch merged
  by Bob.
- ``h-ren-lapse-br``: her rename-and-revert on her branch merged ``--no-ff`` by Bob; the web
  editor re-approves ``PLAN.yaml``.
- ``h-ren-lapse``: her rename-and-revert on main; web re-approval.
- ``h-ren-lapse-octo``: her rename-and-revert on her branch, Bob's octopus with a docs branch.
- ``h-ren-lapse-ff``: her rename-and-revert on her branch, fast-forwarded by Bob.
- ``h-ren-lapse-self``: her rename-and-revert on her branch, merged ``--no-ff`` by herself.
- ``h-ren-back-lapse-br``: the agent's plan written as ``PLAN.yaml``; her rename back to
  ``PLAN.yml`` setting ``pending_approval`` on her branch, merged ``--no-ff`` by Bob.
- ``h-mv-lapse-br``: her folder move-and-revert on her branch merged by Bob; web re-approval at
  the new path.

Where the first web re-approval is refused, she approves again in the web editor (the remedy
the refusal names) and the plan must then run once, hers (asserted for every honest id).

Seen (round 72), fixed 2026-11-30 (r72lapse): the status a moved plan file carries is a status
CHANGE of the moved plan, from its source's state to the new status, as the same change made in
place (``Lifecycle._moved_state``, ``_move_from`` on the line; ``_side_lapse`` on a merged
branch): her approval lapses, so Y's copy is ``E_APPROVAL_REPLAYED``, and ``rejected`` from an
allowed approver withdraws the version (``mv-reject-bob``: Bob's approval of the moved plan is
"approved (from rejected)", ignored, as for ``ren-reject-bob``; a copy of the version is
``E_VERSION_WITHDRAWN``); an approval made with a move is round 70's, unchanged. The branch
commit that made a lapse is found through the folder's two names (``_set_away_by``, as
``_rename_edit`` tells a rename): her rename-lapse merged by Bob is dated by her commit and her
web re-approval runs at once. All asserted (the markers are off). As found: ``mv-lapse``,
``mv-lapse-br``, ``mv-lapse-agent``, ``mv-lapse-bob``,
``mv-lapse-line-agent``, ``mv-lapse-yaml``, ``mv-reject`` BROKE (a lapsed approval brought
back by another hand RAN; for ``mv-reject`` a WITHDRAWN one): a folder move that sets the plan
away from ``approved`` in the move's commit (her own ``git mv plans/<v> plans/<v>-n`` plus
``status: pending_approval``, on main, on her branch merged by Bob, to ``PLAN.yaml`` too;
Bob's; the agent's) is recorded as no lapse at all (no "approval lapsed" note at the new path),
so the agent's ``git cherry-pick`` of her review-branch approval Y (made before she took it
back) lands on the moved plan through git's rename pairing and runs: ``rec`` ran once,
approver alice, the controller-side and the fresh-clone audit both call the run valid.
``mv-reject``: her move setting ``rejected`` on main is read as a new plan's status "set
rejected (from nothing)", ``E_ILLEGAL_TRANSITION``, ignored, and the agent's pick of Y
(``-X theirs``) RAN the version she rejected, both audits valid (on her branch merged by Bob,
``mv-reject-br``, the pick was ignored "approved (from rejected)" and nothing ran).
``mv-reject-bob`` BROKE without any git trick: after her move setting ``rejected`` (ignored as
above), Bob's plain approval of the moved plan RAN the version she, an allowed approver,
rejected (approver bob, both audits valid); her rename setting ``rejected``
(``ren-reject-bob``) held ("approved (from rejected)" ignored). Should (docs/approvals.md,
"Rejections and aborts"; threat-model round 16: "only an allowed approver's withdrawal vetoes
a version everywhere"): ``E_VERSION_WITHDRAWN``. The move's
lapse made in two commits (``mv-then-lapse``: the byte-exact move, then her revert at the new
path) or by a rename in the folder (``ren-lapse-*``), and the
agent's pick of X itself (``mv-lapse-pickx``), are ``E_APPROVAL_REPLAYED``. Should
(docs/approvals.md, "Replayed approvals": "A decision lapses wherever the history shows it
taken back"; "Not the plan's path (round 66): a move keeps the frozen hash, so her decision
follows the version into the moved folder"; "An approval lapses when the plan stops saying
``approved``... a status change by anyone makes the approval lapse"; threat-model "A lapsed
approval brought back"): a move whose new file says other than ``approved`` takes back the
decisions the old file held for that version (``rejected``: withdraws it, as "approved ->
rejected" is a lapse plus a withdrawal), and Y's copy is ``E_APPROVAL_REPLAYED`` (or the
version is withdrawn). docs/plan-format.md's "A moved or copied folder is a new plan" is about
the path's record (its ``approval:`` and run), not about her decisions, which follow the
version by hash.
``h-ren-lapse-br``, ``h-ren-lapse-octo``, ``h-ren-back-lapse-br`` BROKE (honest work refused
once): her lapse made by a rename between ``PLAN.yml`` and ``PLAN.yaml`` on her branch, merged
by Bob with a merge commit (``--no-ff`` or an octopus), is dated as Bob's merge (the status
note names the merge as the commit that "set status pending_approval"), another hand's lapse,
so her web-editor re-approval right after is ``E_APPROVAL_REPLAYED`` once (it runs on her
next approval); the same rename fast-forwarded (``h-ren-lapse-ff``), merged by herself
(``h-ren-lapse-self``), made on main (``h-ren-lapse``), and her plain revert merged by Bob
(``h-relapse-br``, round 71's fix) run at once. Should (docs/approvals.md, "When the lapse was
made": "The commit that MADE the lapse dates it, wherever it reaches the branch: ... on a
branch merged by anyone"; round 71: "A rename between the folder's two names is the edit in
place it is in any commit, a merge's included"): her branch commit made the lapse, dated by
her committer date. Held: the relapse ids (an older lapse of hers on the same path, R2 hers
on a branch or in her merge or an octopus, or the agent's 1990 R2 on a branch or on main),
controller look-alikes (unsealed or with P1's seal) right after the agent's 1990 revert on a
merged branch or in a merge of merges, the rename-made lapses (hers merged by Bob, the agent's
1990 merged by Alice, Bob's, hers renamed back by the agent): no pick of Y ran, both audits
agreed; ``rev-then-mv`` (her plain revert, then the agent's byte-exact move, then the pick)
``E_APPROVAL_REPLAYED``; ``ren-reject`` ignored the pick ("approved (from rejected)"), nothing
ran; ``mv-lapse-merge`` (her move-and-revert written in her own merge) is
``E_SELF_APPROVAL`` (the merge wrote the file: hers), ``mv-lapse-draft``
``E_ILLEGAL_TRANSITION``. Since r72lapse the move a merge makes is read as the merge's status
change too: ``mv-lapse-merge`` is ``E_APPROVAL_REPLAYED`` (her lapse, in her merge), and
``mv-lapse-draft``'s move lapses her approval, the pick "approved (from draft)" ignored.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, BOT, Lab, cases, clone_audit, valid_runs
from policykit import agent_plan as plan
from test_round2_execution_kit import shared

FORGE = ("GitHub", "noreply@github.com")
OLD = 631152000  # 1990-01-01
RELAPSE = ["relapse-br", "relapse-mrev", "relapse-octo", "relapse-agent", "relapse-agent-line"]
FAKE = ["fake-br", "fake-seal-br", "fake-mm"]
RENAMED = ["ren-lapse-br", "ren-lapse-agent", "ren-lapse-bob", "ren-lapse-back"]
MOVED = ["mv-lapse", "mv-lapse-br", "mv-lapse-agent", "mv-lapse-bob", "mv-lapse-line-agent",
         "mv-lapse-yaml", "mv-lapse-merge", "mv-lapse-draft", "mv-lapse-pickx",
         "mv-then-lapse", "rev-then-mv", "mv-reject", "mv-reject-br", "ren-reject"]  # fmt: skip
#: her rejection made with a move or a rename, then Bob (an approver) approves
VETOED = ["mv-reject-bob", "ren-reject-bob"]
LAPSED = [*RELAPSE, *FAKE, *RENAMED, *MOVED, *VETOED]
REJECTED = ("mv-reject", "mv-reject-br", "ren-reject")
HONEST = ["h-relapse-br", "h-relapse-mrev", "h-ren-lapse-br", "h-ren-lapse", "h-ren-lapse-octo",
          "h-ren-lapse-ff", "h-ren-lapse-self", "h-ren-back-lapse-br", "h-mv-lapse-br"]  # fmt: skip
ALL = [*LAPSED, *HONEST]
YAML_AT_END = {"ren-lapse-br", "ren-lapse-agent", "ren-lapse-bob", "h-ren-lapse-br",
               "h-ren-lapse", "h-ren-lapse-octo", "h-ren-lapse-ff", "h-ren-lapse-self",
               "mv-lapse-yaml", "ren-reject", "ren-reject-bob"}  # fmt: skip
#: the plan's folder at the end, where it was moved
SLUG = {v: f"{v}-n" for v in ["h-mv-lapse-br", *MOVED, "mv-reject-bob"] if v != "ren-reject"}


def _at(v: str) -> tuple[str, str]:
    return SLUG.get(v, v), "PLAN.yaml" if v in YAML_AT_END else "PLAN.yml"


#: nothing open since r72lapse (2026-11-30)
BROKEN: dict[str, object] = {}


class Clock:
    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.t = int(time.time()) - 7200

    def git(self, *args: str, who=AGENT, by=None, at=None) -> str:  # type: ignore[no-untyped-def]
        self.t += 20
        when = f"@{self.t if at is None else at} +0000"
        env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        if by:
            env.update(GIT_COMMITTER_NAME=by[0], GIT_COMMITTER_EMAIL=by[1])
        self.lab.extra_env = env  # type: ignore[attr-defined]
        try:
            self.lab.git(*args, who=who)
        finally:
            self.lab.extra_env = {}  # type: ignore[attr-defined]
        return self.lab.head()

    def set(
        self, slug: str, status: str, who=ALICE, msg: str = "lgtm", name="PLAN.yml", **kw
    ) -> str:  # type: ignore[no-untyped-def]
        self.lab.set_status(slug, status, name)
        self.lab.git("add", "-A")
        return self.git("commit", "-q", "-m", msg, who=who, **kw)

    def run(self) -> None:
        self.t += 20
        self.lab.git_date = f"@{self.t} +0000"
        self.lab.run()
        self.lab.git_date = None


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    for v in ALL:
        lab.write(v, plan(v), "PLAN.yaml" if v == "h-ren-back-lapse-br" else "PLAN.yml")
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent plans")
    c.run()  # P0
    lab.write("zz-filler", plan("zz-filler"))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent: another plan")
    c.run()  # P1
    seal = re.search(r"^Controller-Seal: *[0-9a-f]{64}$", lab.git("log", "-1", "--format=%B"), re.M)
    lab.seal_seen = bool(seal)  # type: ignore[attr-defined]

    def co(ref: str, new: str = "", who=AGENT) -> None:  # type: ignore[no-untyped-def]
        c.git("checkout", "-q", *(["-b", new] if new else []), ref, who=who)

    def merge(*refs: str, who=AGENT, at=None, extra=()) -> str:  # type: ignore[no-untyped-def]
        return c.git("merge", "-q", "--no-ff", *extra, "-m", f"merge {' '.join(refs)}", *refs,
                     who=who, at=at)  # fmt: skip

    def docs(name: str, who=AGENT, at=None, msg: str = "", by=None) -> str:  # type: ignore[no-untyped-def]
        (lab.repo / "docs").mkdir(exist_ok=True)
        (lab.repo / "docs" / f"{name}.md").write_text(name + "\n")
        lab.git("add", "-A")
        return c.git("commit", "-q", "-m", msg or f"docs {name}", who=who, at=at, by=by)

    def look_alike(v: str, sealed: bool) -> None:
        msg = "plangate: freeze plans/zz-filler\n\nPlan: plans/zz-filler\n"
        if sealed and seal:
            msg += seal.group(0) + "\n"
        docs(f"fake-{v}", who=BOT, at=OLD, msg=msg)

    def merge_revert(v: str, who) -> None:  # type: ignore[no-untyped-def]
        here = lab.git("rev-parse", "--abbrev-ref", "HEAD").strip()
        co(here, f"docs/{v}", who=who)
        docs(v, who=who)
        co(here, who=who)
        c.git("merge", "-q", "--no-ff", "--no-commit", f"docs/{v}", who=who)
        lab.set_status(v, "pending_approval")
        lab.git("add", "-A")
        c.git("commit", "-q", "-m", f"merge docs/{v}", who=who)

    def ren_revert(v: str, who, at=None, status="pending_approval") -> None:  # type: ignore[no-untyped-def]
        old, new = "PLAN.yml", "PLAN.yaml"
        if v == "h-ren-back-lapse-br":
            old, new = new, old
        if v in SLUG:  # a folder move keeping the file's name
            new = "PLAN.yaml" if v == "mv-lapse-yaml" else old
        to = SLUG.get(v, v)
        (lab.repo / "plans" / to).mkdir(parents=True, exist_ok=True)
        lab.git("mv", f"plans/{v}/{old}", f"plans/{to}/{new}")
        if status == "approved":  # the move alone, byte for byte
            lab.git("add", "-A")
            c.git("commit", "-q", "-m", f"move {v}", who=who, at=at)
            return
        c.set(to, status, who=who, msg=f"name it {new}", name=new, at=at)

    x: dict[str, str] = {}
    y: dict[str, str] = {}
    relapsers = [*RELAPSE, "h-relapse-br", "h-relapse-mrev"]
    # X1 and her own R1 on main, before Y
    for v in relapsers:
        r1 = c.set(v, "approved", msg="approve")
        c.git("revert", "--no-edit", r1, who=ALICE)
    for v in LAPSED:
        co("main", f"alice/y-{v}", who=ALICE)
        y[v] = c.set(v, "approved", msg="lgtm (review)")
        co("main")
    for v in ALL:
        x[v] = c.set(v, "approved", msg="approve",
                     name="PLAN.yaml" if v == "h-ren-back-lapse-br" else "PLAN.yml")  # fmt: skip
    # R2: her own, on a branch
    for v in ("relapse-br", "relapse-mrev", "relapse-octo", "h-relapse-br", "h-relapse-mrev"):
        co("main", f"alice/r2-{v}", who=ALICE)
        if v.endswith("mrev"):
            merge_revert(v, ALICE)
        else:
            c.git("revert", "--no-edit", x[v], who=ALICE)
        co("main", who=BOB)
        if v == "relapse-octo":
            co("main", "bob/octo-docs", who=BOB)
            docs("octo-docs", who=BOB)
            co("main", who=BOB)
            merge(f"alice/r2-{v}", "bob/octo-docs", who=BOB)
            lab.octo = len(lab.git("log", "-1", "--format=%P").split())  # type: ignore[attr-defined]
        else:
            merge(f"alice/r2-{v}", who=BOB)
    # R2: the agent's
    co("main", "agent/r2")
    c.git("revert", "--no-edit", x["relapse-agent"], at=OLD)
    co("main", who=ALICE)
    merge("agent/r2", who=ALICE)
    c.git("revert", "--no-edit", x["relapse-agent-line"], at=OLD)
    # controller look-alikes on merged branches
    for v, sealed in (("fake-br", False), ("fake-seal-br", True)):
        co("main", f"agent/{v}")
        c.git("revert", "--no-edit", x[v], at=OLD)
        look_alike(v, sealed)
        co("main", who=ALICE)
        merge(f"agent/{v}", who=ALICE)
    co("main", "agent/fake-mm-2")
    co("main", "agent/fake-mm-1")
    c.git("revert", "--no-edit", x["fake-mm"], at=OLD)
    co("agent/fake-mm-2")
    merge("agent/fake-mm-1", at=OLD)
    look_alike("fake-mm", True)
    co("main", who=ALICE)
    merge("agent/fake-mm-2", who=ALICE)
    # lapses made by a rename
    for v, who, merger, at in (("ren-lapse-br", ALICE, BOB, None),
                               ("mv-lapse-br", ALICE, BOB, None),
                               ("mv-lapse-agent", AGENT, ALICE, OLD),
                               ("ren-lapse-agent", AGENT, ALICE, OLD),
                               ("ren-lapse-back", ALICE, BOB, None),
                               ("h-ren-lapse-br", ALICE, BOB, None)):  # fmt: skip
        co("main", f"r/{v}", who=who)
        ren_revert(v, who, at)
        co("main", who=merger)
        merge(f"r/{v}", who=merger)
    for v in ("h-ren-back-lapse-br", "h-mv-lapse-br", "h-ren-lapse-self", "h-ren-lapse-ff",
              "h-ren-lapse-octo"):  # fmt: skip
        co("main", f"r/{v}", who=ALICE)
        ren_revert(v, ALICE)
        if v == "h-ren-lapse-octo":
            co("main", "bob/ren-octo-docs", who=BOB)
            docs("ren-octo-docs", who=BOB)
        co("main", who=BOB)
        if v == "h-ren-lapse-self":
            merge(f"r/{v}", who=ALICE)
        elif v == "h-ren-lapse-ff":
            c.git("merge", "-q", "--ff-only", f"r/{v}", who=BOB)
        elif v == "h-ren-lapse-octo":
            merge(f"r/{v}", "bob/ren-octo-docs", who=BOB)
            lab.octo2 = len(lab.git("log", "-1", "--format=%P").split())  # type: ignore[attr-defined]
        else:
            merge(f"r/{v}", who=BOB)
    ren_revert("ren-lapse-bob", BOB)
    ren_revert("mv-lapse", ALICE)
    ren_revert("mv-lapse-pickx", ALICE)
    ren_revert("mv-lapse-bob", BOB)
    ren_revert("mv-lapse-line-agent", AGENT)
    ren_revert("mv-lapse-yaml", ALICE)
    c.git("revert", "--no-edit", x["rev-then-mv"], who=ALICE)
    ren_revert("rev-then-mv", AGENT, status="approved")
    ren_revert("mv-reject", ALICE, status="rejected")
    ren_revert("ren-reject", ALICE, status="rejected")
    ren_revert("mv-reject-bob", ALICE, status="rejected")
    ren_revert("ren-reject-bob", ALICE, status="rejected")
    co("main", "r/mv-reject-br", who=ALICE)
    ren_revert("mv-reject-br", ALICE, status="rejected")
    co("main", who=BOB)
    merge("r/mv-reject-br", who=BOB)
    co("main", "docs/mv-lapse-merge", who=ALICE)
    docs("mv-lapse-merge", who=ALICE)
    co("main", who=ALICE)
    c.git("merge", "-q", "--no-ff", "--no-commit", "docs/mv-lapse-merge", who=ALICE)
    (lab.repo / "plans" / "mv-lapse-merge-n").mkdir()
    lab.git("mv", "plans/mv-lapse-merge/PLAN.yml", "plans/mv-lapse-merge-n/PLAN.yml")
    c.set("mv-lapse-merge-n", "pending_approval", msg="merge docs, move mv-lapse-merge")
    ren_revert("mv-lapse-draft", ALICE, status="draft")
    ren_revert("mv-then-lapse", ALICE, status="approved")
    c.set("mv-then-lapse-n", "pending_approval", msg="not yet")
    ren_revert("h-ren-lapse", ALICE)
    lab.git("mv", "plans/ren-lapse-back/PLAN.yaml", "plans/ren-lapse-back/PLAN.yml")
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent: back to PLAN.yml", at=OLD)
    # her re-approvals in the web editor
    for v in HONEST:
        slug, name = _at(v)
        c.set(slug, "approved", msg=f"Update {name}", by=FORGE, name=name)
    # the agent's picks of Y
    for v in VETOED:  # Bob approves the version she rejected
        slug, name = _at(v)
        c.set(slug, "approved", who=BOB, msg="approve", name=name)
    for v in [v for v in LAPSED if v not in VETOED]:
        # a status line changed on both sides conflicts: the agent takes Y's
        how = ["-X", "theirs"] if v in ("mv-lapse-draft", *REJECTED) else []
        c.git("cherry-pick", *how, x[v] if v == "mv-lapse-pickx" else y[v])
    lab.shown = {  # type: ignore[attr-defined]
        v: lab.plan(_at(v)[0], filename=_at(v)[1])["plan"]["status"] for v in LAPSED
    }
    c.run()  # P2
    lab.first = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
    lab.first_codes = {v: lab.codes(_at(v)[0]) for v in ALL}  # type: ignore[attr-defined]
    for v in HONEST:  # refused: she approves again in the web editor (the documented remedy)
        if not lab.calls(v):
            slug, name = _at(v)
            c.set(slug, "approved", msg=f"Update {name}", by=FORGE, name=name)
    c.run()  # P3
    lab.status()
    lab.final = {v: lab.codes(_at(v)[0]) for v in ALL}  # type: ignore[attr-defined]
    for v in YAML_AT_END:
        lab.final[v] += lab.git("show", f"HEAD:plans/{v}/PLAN.yaml", check=False)  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r72-lapsemakers", _build)


def test_the_lab_played_as_described(lab: Lab) -> None:
    assert lab.seal_seen and lab.octo == 3 and lab.octo2 == 3  # type: ignore[attr-defined]
    assert set(lab.shown.values()) == {"approved"}, lab.shown  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(LAPSED, LAPSED, BROKEN))  # type: ignore[arg-type]
def test_no_other_commit_is_taken_for_the_lapse_maker(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.final[vid][:1500]  # type: ignore[attr-defined]
    runs = valid_runs(lab.report, _at(vid)[0])  # type: ignore[attr-defined]
    assert runs == [], runs


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_her_own_lapse_then_her_reapproval_runs_at_once(lab: Lab, vid: str) -> None:
    assert lab.first[vid] == 1, lab.first_codes[vid][:1500]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", HONEST)
def test_her_plan_runs_once_on_her_approval_in_the_end(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.final[vid][:1500]  # type: ignore[attr-defined]
    runs = valid_runs(lab.report, _at(vid)[0])  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = valid_runs(lab.fresh, _at(vid)[0])  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(valid_runs(lab.report, _at(vid)[0])) == len(fresh)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", ALL)
def test_the_controller_committed_one_start_at_most(lab: Lab, vid: str) -> None:
    starts = [s for s in lab.subjects(_at(vid)[0]) if s.startswith("plangate: start ")]
    assert len(starts) == len(lab.calls(vid)) <= 1, (starts, lab.final[vid][:800])  # type: ignore[attr-defined]
