"""Round 80, approval side: the take-backs and withdrawals a merged branch carries (round 79,
r79sidelapse; docs/approvals.md, moves: "a merge carries the take-backs and withdrawals its
merged branch made whatever the merge's net diff ... a branch's withdrawal of a plan moved (or
removed) since still vetoes the version by its hash (``E_VERSION_WITHDRAWN``)"; "A withdrawn
version stays withdrawn": only "an allowed approver, or a producer of that version" withdraws).
Can the way a branch is brought in make such a take-back be skipped, or make one count that
must not?

Lab (one, local mode, fake dates). The agent writes ``plans/<id>`` per id (its tag, ``rec``
records it); P0 freezes. Gap 1: Alice approves every id on main (``ctlpr``, ``unmerged``
excepted). Then each id's branch ``b-<id>`` is cut from main there, and by id:

- ``ctlpr`` (control): ALICE approves on her branch (main never said ``approved``) and merges
  it ``--no-ff`` herself (the merge is the request, docs/approvals.md "For a merged pull
  request that is the merge commit"): runs once, approver alice;
- ``ctlrej`` (control, must stop): Alice's honest ``rejected`` on her branch, merged;
- ``unmerged`` (control): Bob rejects on a branch that is never merged; Alice approves on
  main after: runs once (a branch main never holds is no history of main);
- ``ff``: Bob rejects on the branch, the agent writes the approved bytes back, main
  fast-forwards onto it (cut at main's tip, merged first);
- ``ours``: the same, merged with ``-s ours`` (the merge's tree is main's: the branch's
  commits are in history, its diff is not); ``oursback``: the AGENT's take-back
  (``pending_approval``) then bytes back, merged ``-s ours``;
- ``octo``: Bob's reject and the bytes back, merged in an octopus with two empty branches;
- ``mom``: Bob's reject and the bytes back on ``b-mom``, merged into a second branch, that
  branch merged into main (a merge of a merge);
- ``criss``: Bob's reject on ``b-criss``, bytes back; a second branch ``b-criss2`` and
  ``b-criss`` merge each other (criss-cross), then main merges ``b-criss2``;
- ``twice``: Bob's reject and the bytes back reachable twice (``b-twice`` merged into a
  second branch, both merged into main);
- ``revert``: Bob's reject, then the agent ``git revert``s Bob's commit on the branch;
- ``cherry``: Bob's reject commit cherry-picked onto main, then reverted by the agent there;
- ``squash``: Bob's reject and the bytes back, ``merge --squash`` (the branch's commits are
  NOT in history: no withdrawal git can show; either reading is fair, the audit must agree);
- ``malback``: MALLORY (not an approver, not a producer) takes it back
  (``pending_approval``) on a branch, the agent writes ``approved`` back, merged: another
  hand's lapse (never Alice's approval again);
- ``malveto`` (control, no veto): Mallory ``rejected`` on a branch, the agent moves it to
  ``malveto-d`` (pending) there, merged; Alice approves at ``-d`` at gap 2: runs once (a
  non-approver withdraws nothing); ``malvetoin`` (control): the same without a move, the
  agent sets ``pending_approval`` after Mallory's reject; Alice approves at gap 2;
- ``bobveto``: Bob ``rejected`` on a branch, the agent moves it to ``bobveto-d`` (pending),
  merged ``--no-ff``; Alice approves at ``-d`` at gap 2: the
  version is withdrawn by hash, never runs (``E_VERSION_WITHDRAWN``);
- ``bobvetoours``: the same branch merged ``-s ours`` (the move is not in the tree, the
  plan stays approved at its path on Alice's approval of gap 1);
- ``bobvetooct``: ``bobveto`` merged in an octopus;
- ``revmerge``: Bob's ``rejected`` on a branch merged ``--no-ff`` (main says ``rejected``),
  then the agent ``git revert -m 1``s the merge (main says ``approved`` again): withdrawn;
- ``bobreappr``: the agent takes it back on its branch, BOB approves there, the agent merges
  (either Bob's or nobody's approval; never the agent's);
- ``malours``: Mallory's take-back and the bytes back, merged ``-s ours``;
- ``aliceours``: ALICE's own take-back on a branch, the agent writes her ``approved`` bytes
  back there and merges ``-s ours``: her approval stays taken back (docs/approvals.md,
  "Replayed approvals").

P1 after all merges, gap 2, P2, P3; the controller's audit and a fresh clone's.

What must hold: the id's tag runs as ``WANT`` says, every counted run's approver is allowed and
not the agent (nor Bob for a Bob-vetoed version), and a fresh clone's audit agrees.

Seen (round 80): no break; every id held and the fresh clone's audit agreed on each. Bob's
``rejected`` on a branch, then the approved bytes written back there, kept the plan
``rejected`` (effective status; ``file_status`` ``approved``) whatever brought the branch in:
a fast-forward (``ff``), ``-s ours`` (``ours``, ``bobvetoours``: the branch's commits count
though the merge's tree is main's), an octopus (``octo``), a merge of a merge (``mom``), a
criss-cross (``criss``), the same commits reached twice (``twice``), the agent's ``git
revert`` of Bob's commit (``revert``, on main after a cherry-pick: ``cherry``), or ``git
revert -m 1`` of the merge (``revmerge``). Moved after the reject (``bobveto``,
``bobvetooct``) the version stayed withdrawn: Alice's approval at the new path
``E_VERSION_WITHDRAWN``. Take-backs carried through ``-s ours`` (``oursback``, ``malours``,
``aliceours``) and ``--no-ff`` (``malback``): "approval (approve) lapsed: ... set status
pending_approval on a merged branch", nothing ran. Controls ran once on Alice's approval
(``ctlpr``: her branch merged by herself; ``unmerged``: a branch never merged vetoes nothing;
``malveto``, ``malvetoin``: Mallory, neither approver nor producer, withdrew nothing), and
Alice's honest ``rejected`` on her branch (``ctlrej``) stopped it. Conservative, not breaks:
``bobreappr`` (the agent's take-back then BOB's approval on the branch, merged by the agent)
stays ``pending_approval``: the merge is the request (docs/approvals.md, "For a merged pull
request that is the merge commit") and its net diff approves nothing; ``squash`` ran once on
Alice's approval (a squash merge leaves Bob's reject out of history; git history alone
cannot show it, controller and audit agree).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, cases, clone_audit
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock, _f

ALL = [
    "ctlpr",
    "ctlrej",
    "unmerged",
    "ff",
    "ours",
    "oursback",
    "octo",
    "mom",
    "criss",
    "twice",
    "revert",
    "cherry",
    "squash",
    "malback",
    "malveto",
    "malvetoin",
    "bobveto",
    "bobvetoours",
    "bobvetooct",
    "revmerge",
    "bobreappr",
    "malours",
    "aliceours",
]
CONTROLS = ["ctlpr", "unmerged", "malveto", "malvetoin"]

#: id -> (least, most) runs of the id's tag
WANT: dict[str, tuple[int, int]] = {
    "ctlpr": (1, 1),
    "ctlrej": (0, 0),
    "unmerged": (1, 1),
    "ff": (0, 0),
    "ours": (0, 0),
    "oursback": (0, 1),
    "octo": (0, 0),
    "mom": (0, 0),
    "criss": (0, 0),
    "twice": (0, 0),
    "revert": (0, 0),
    "cherry": (0, 0),
    "squash": (0, 1),
    "malback": (0, 0),
    "malveto": (1, 1),
    "malvetoin": (1, 1),
    "bobveto": (0, 0),
    "bobvetoours": (0, 0),
    "bobvetooct": (0, 0),
    "revmerge": (0, 0),
    "bobreappr": (0, 1),
    "malours": (0, 1),
    "aliceours": (0, 0),
}

BOBS = {
    "ff",
    "ours",
    "octo",
    "mom",
    "criss",
    "twice",
    "revert",
    "cherry",
    "squash",
    "bobveto",
    "bobvetoours",
    "bobvetooct",
    "revmerge",
}

RUNS_BROKEN: dict[str, Any] = {}
BROKEN: dict[str, Any] = {}


def folders(v: str) -> set[str]:
    return {f"plans/{v}", f"plans/{v}-d"}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    g = lab.git
    for v in ALL:
        lab.write(v, plan(v))
    c.commit("agent plans")
    c.run()  # P0
    for v in ALL:
        if v not in ("ctlpr", "unmerged"):
            lab.set_status(v, "approved")
    c.commit("alice: approve (gap 1)", who=ALICE)
    keep = {v: _f(lab, v).read_bytes() for v in ALL}

    def branch(name: str, start: str = "main") -> None:
        c.git("checkout", "-q", "-b", name, start)

    def main() -> None:
        c.git("checkout", "-q", "main")

    def bob_rej_back(v: str) -> str:
        lab.set_status(v, "rejected")
        sha = c.commit(f"bob: reject {v}", who=BOB)
        _f(lab, v).write_bytes(keep[v])
        c.commit(f"agent: {v} approved bytes back")
        return sha

    # ff first: main does not move before it
    branch("b-ff")
    bob_rej_back("ff")
    main()
    c.git("merge", "-q", "--ff-only", "b-ff")
    tip = lab.head()
    # every other branch is cut here
    branch("b-ctlpr", tip)
    lab.set_status("ctlpr", "approved")
    c.commit("alice: approve ctlpr on her branch", who=ALICE)
    branch("b-ctlrej", tip)
    lab.set_status("ctlrej", "rejected")
    c.commit("alice: reject ctlrej on her branch", who=ALICE)
    branch("b-unmerged", tip)
    lab.set_status("unmerged", "rejected")
    c.commit("bob: reject unmerged (never merged)", who=BOB)
    for v in ("ours", "octo", "mom", "twice", "squash", "criss"):
        branch(f"b-{v}", tip)
        bob_rej_back(v)
    branch("b-oursback", tip)
    lab.set_status("oursback", "pending_approval")
    c.commit("agent: take back oursback")
    _f(lab, "oursback").write_bytes(keep["oursback"])
    c.commit("agent: oursback approved bytes back")
    branch("b-revert", tip)
    lab.set_status("revert", "rejected")
    sha = c.commit("bob: reject revert", who=BOB)
    c.git("revert", "--no-edit", sha)
    branch("b-cherry", tip)
    lab.set_status("cherry", "rejected")
    cherry = c.commit("bob: reject cherry", who=BOB)
    branch("b-malback", tip)
    lab.set_status("malback", "pending_approval")
    c.commit("mallory: take back malback", who=MALLORY)
    _f(lab, "malback").write_bytes(keep["malback"])
    c.commit("agent: malback approved bytes back")
    for v, who in (("malveto", MALLORY), ("bobveto", BOB), ("bobvetoours", BOB)):
        branch(f"b-{v}", tip)
        lab.set_status(v, "rejected")
        c.commit(f"reject {v}", who=who)
        g("mv", f"plans/{v}", f"plans/{v}-d")
        _f(lab, f"{v}-d").write_bytes(
            keep[v].replace(b"status: approved", b"status: pending_approval")
        )
        c.commit(f"agent: move {v} pending")
    branch("b-revmerge", tip)
    lab.set_status("revmerge", "rejected")
    c.commit("bob: reject revmerge", who=BOB)
    branch("b-bobreappr", tip)
    lab.set_status("bobreappr", "pending_approval")
    c.commit("agent: take back bobreappr")
    lab.set_status("bobreappr", "approved")
    c.commit("bob: approve bobreappr on the branch", who=BOB)
    branch("b-malours", tip)
    lab.set_status("malours", "pending_approval")
    c.commit("mallory: take back malours", who=MALLORY)
    _f(lab, "malours").write_bytes(keep["malours"])
    c.commit("agent: malours approved bytes back")
    branch("b-aliceours", tip)
    lab.set_status("aliceours", "pending_approval")
    c.commit("alice: take back aliceours", who=ALICE)
    _f(lab, "aliceours").write_bytes(keep["aliceours"])
    c.commit("agent: aliceours approved bytes back")
    branch("b-bobvetooct", tip)
    lab.set_status("bobvetooct", "rejected")
    c.commit("bob: reject bobvetooct", who=BOB)
    g("mv", "plans/bobvetooct", "plans/bobvetooct-d")
    _f(lab, "bobvetooct-d").write_bytes(
        keep["bobvetooct"].replace(b"status: approved", b"status: pending_approval")
    )
    c.commit("agent: move bobvetooct pending")
    branch("b-malvetoin", tip)
    lab.set_status("malvetoin", "rejected")
    c.commit("mallory: reject malvetoin", who=MALLORY)
    lab.set_status("malvetoin", "pending_approval")
    c.commit("agent: malvetoin pending again")
    # side shapes
    branch("b-mom2", tip)
    c.git("merge", "-q", "--no-ff", "-m", "merge b-mom into b-mom2", "b-mom")
    branch("b-twice2", tip)
    c.git("merge", "-q", "--no-ff", "-m", "merge b-twice into b-twice2", "b-twice")
    branch("b-criss2", tip)
    c.git("commit", "-q", "--allow-empty", "-m", "criss2 work")
    c.git("checkout", "-q", "b-criss")
    c.git("merge", "-q", "--no-ff", "-m", "criss <- criss2", "b-criss2^0")
    c.git("checkout", "-q", "b-criss2")
    c.git("merge", "-q", "--no-ff", "-m", "criss2 <- criss", "b-criss^1")
    branch("b-e1", tip)
    c.git("commit", "-q", "--allow-empty", "-m", "e1")
    branch("b-e2", tip)
    c.git("commit", "-q", "--allow-empty", "-m", "e2")
    main()
    # merges into main
    m = lambda *a: c.git("merge", "-q", *a)  # noqa: E731
    c.git("merge", "-q", "--no-ff", "-m", "alice: merge ctlpr", "b-ctlpr", who=ALICE)
    m("--no-ff", "-m", "merge ctlrej", "b-ctlrej")
    m("-s", "ours", "-m", "merge ours (-s ours)", "b-ours")
    m("-s", "ours", "-m", "merge oursback (-s ours)", "b-oursback")
    m("--no-ff", "-m", "octopus", "b-octo", "b-e1", "b-e2")
    m("--no-ff", "-m", "merge mom2", "b-mom2")
    m("--no-ff", "-m", "merge criss2", "b-criss2")
    m("--no-ff", "-m", "merge twice2", "b-twice2")
    m("--no-ff", "-m", "merge twice", "b-twice")
    m("--no-ff", "-m", "merge revert", "b-revert")
    c.git("cherry-pick", cherry)
    c.git("revert", "--no-edit", "HEAD")
    m("--squash", "b-squash")
    c.git("commit", "-q", "--allow-empty", "-m", "squash b-squash")
    m("--no-ff", "-m", "merge malback", "b-malback")
    m("--no-ff", "-m", "merge malveto", "b-malveto")
    m("--no-ff", "-m", "merge malvetoin", "b-malvetoin")
    m("--no-ff", "-m", "merge bobveto", "b-bobveto")
    m("-s", "ours", "-m", "merge bobvetoours (-s ours)", "b-bobvetoours")
    m("--no-ff", "-m", "octopus bobvetooct", "b-bobvetooct", "b-e1")
    m("--no-ff", "-m", "merge revmerge", "b-revmerge")
    c.git("revert", "--no-edit", "-m", "1", "HEAD")
    m("--no-ff", "-m", "merge bobreappr", "b-bobreappr")
    m("-s", "ours", "-m", "merge malours (-s ours)", "b-malours")
    m("-s", "ours", "-m", "merge aliceours (-s ours)", "b-aliceours")
    lab.set_status("unmerged", "approved")
    c.commit("alice: approve unmerged on main", who=ALICE)
    c.run()  # P1
    lab.p1 = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
    for f in ("malveto-d", "malvetoin", "bobveto-d", "bobvetooct-d"):
        lab.set_status(f, "approved")
    c.commit("alice: approve (gap 2)", who=ALICE)
    c.run()  # P2
    c.run()  # P3
    lab.final = {v: {f: lab.codes(f[6:]) for f in folders(v)} for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r80-sidetake", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = folders(v)
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


def said(lab: Lab, v: str) -> str:
    return str(lab.final[v])[:3000]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, RUNS_BROKEN))
def test_the_version_runs_as_often_as_its_approvals_allow(lab: Lab, vid: str) -> None:
    least, most = WANT[vid]
    n = len(lab.calls(vid))
    assert least <= n <= most, (n, lab.p1[vid], said(lab, vid))  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_every_counted_run_names_an_allowed_approver_who_did_not_write_it(
    lab: Lab, vid: str
) -> None:
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    for r in runs:
        assert r.get("approver") not in (AGENT[1], MALLORY[1], None), runs
        if vid in BOBS:
            assert r.get("approver") != BOB[1], runs
    assert len(runs) == len(lab.calls(vid)), (runs, said(lab, vid))


VETO = ["bobveto", "bobvetooct"]
INPLACE = [
    "ff",
    "ours",
    "octo",
    "mom",
    "criss",
    "twice",
    "revert",
    "cherry",
    "bobvetoours",
    "revmerge",
]


@pytest.mark.parametrize("vid", cases(INPLACE, INPLACE, BROKEN))
def test_a_version_an_approver_rejected_on_a_merged_branch_stays_rejected(
    lab: Lab, vid: str
) -> None:
    assert '"status": "rejected"' in lab.final[vid][f"plans/{vid}"], said(lab, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VETO, VETO, BROKEN))
def test_a_version_an_approver_withdrew_on_a_branch_stays_withdrawn(lab: Lab, vid: str) -> None:
    assert "E_VERSION_WITHDRAWN" in lab.final[vid][f"plans/{vid}-d"], said(lab, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    mine = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert sorted((e.get("plan"), str(e.get("approver"))) for e in mine) == sorted(
        (e.get("plan"), str(e.get("approver"))) for e in fresh
    ), (mine, fresh)
