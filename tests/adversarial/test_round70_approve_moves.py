"""Round 70, approval side: round 69's byte-exact moves (docs/approvals.md, "Who changed the
content": a plan file a commit adds with the bytes of a plan file it removes, all but a plain
status line, is that file moved, no writing, whether the folder or the file name changes; the
content's writers are those of the content moved, by hash, and the source folder's are
carried to the new one; ``Lifecycle._move_source``). Can a writer's bytes, or a folder's
writers, be laundered through a move, a swap or a move over another plan?

Lab (one, local mode, fake dates). The writer here is Bob (``bob@ops.example.com``, an allowed
approver), so that laundering matters: Bob writes a plan, or a ``NOTES.md`` in a plan's
folder; Alice (an approver, no writer) moves things; Bob then approves. P0 freezes every
plan; Alice's moves are committed (one commit each), P1; Bob's (or Alice's) approvals, P2.
Every plan's ``rec`` tag is the folder it was first written in.

Bob approves (asserted: nothing Bob wrote or noted ran; his approval refused
``E_SELF_APPROVAL``; no valid run in the controller-side and fresh-clone audits):

- ``mv-folder``: Bob's own plan, its folder moved by Alice byte for byte (``git mv``).
- ``mv-yaml``: Bob's own plan renamed ``PLAN.yml`` -> ``PLAN.yaml`` by Alice.
- ``mv-both``: Bob's own plan moved to another folder AND renamed ``PLAN.yaml`` by Alice.
- ``mv-notes``: the agent's plan with Bob's ``NOTES.md``; Alice moves the whole folder.
- ``mv-leave``: the agent's plan with Bob's ``NOTES.md``; Alice moves only ``PLAN.yml`` to a
  new folder (the note stays behind): the source folder's writers are carried.
- ``swap-stay``: folder ``swap-stay`` holds the agent's plan Y and Bob's note, ``swap-stay-o``
  the agent's plan X; Alice swaps the two ``PLAN.yml`` in one commit; Bob approves
  ``swap-stay`` (X, now beside his note).
- ``swap-carry``: the same swap; Bob approves the folder that received Y from his noted folder.
- ``onto``: Bob's pending plan Z in ``onto``; Alice ``git mv -f``s the agent's plan X over it
  (the folder never emptied: Bob committed a file into it); Bob approves.
- ``bob-mvappr``: Bob moves his own plan byte for byte and sets ``approved`` in that commit.
- ``mv-merge``: Bob's own plan moved by Alice on her branch, merged ``--no-ff`` by Alice.

Honest (asserted: ran once, approver alice, both audits valid):

- ``h-mvappr-both``: Alice moves the agent's plan to a new folder AND renames it
  ``PLAN.yaml``, approving in the same commit.
- ``h-swap``: Alice swaps two agent plans (no notes), then approves one of them.
- ``h-merge``: Alice moves the agent's plan on her branch, merges it ``--no-ff``, approves.

Seen (round 70): see FINDINGS.md and the ``BROKEN`` entries below.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit, valid_runs, xfail
from pairkit import pair_plan
from test_round2_execution_kit import shared

BOB_IDS = [
    "mv-folder",
    "mv-yaml",
    "mv-both",
    "mv-notes",
    "mv-leave",
    "swap-stay",
    "swap-carry",
    "onto",
    "bob-mvappr",
    "mv-merge",
]
HONEST = ["h-mvappr-both", "h-swap", "h-merge", "h-merge-ff"]
#: the folder (slug) approved, its file, and every content tag that must not run
TARGET = {
    "mv-folder": ("mv-folder-new", "PLAN.yml", ["mv-folder"]),
    "mv-yaml": ("mv-yaml", "PLAN.yaml", ["mv-yaml"]),
    "mv-both": ("mv-both-new", "PLAN.yaml", ["mv-both"]),
    "mv-notes": ("mv-notes-new", "PLAN.yml", ["mv-notes"]),
    "mv-leave": ("mv-leave-new", "PLAN.yml", ["mv-leave"]),
    "swap-stay": ("swap-stay", "PLAN.yml", ["swap-stay", "swap-stay-o"]),
    "swap-carry": ("swap-carry-o", "PLAN.yml", ["swap-carry", "swap-carry-o"]),
    "onto": ("onto", "PLAN.yml", ["onto", "onto-src"]),
    "bob-mvappr": ("bob-mvappr-new", "PLAN.yml", ["bob-mvappr"]),
    "mv-merge": ("mv-merge-new", "PLAN.yml", ["mv-merge"]),
    "h-mvappr-both": ("h-mvappr-both-new", "PLAN.yaml", ["h-mvappr-both"]),
    "h-swap": ("h-swap", "PLAN.yml", ["h-swap-o"]),
    "h-merge": ("h-merge-new", "PLAN.yml", ["h-merge"]),
    "h-merge-ff": ("h-merge-ff-new", "PLAN.yml", ["h-merge-ff"]),
}
BROKEN: dict[str, object] = {
    "h-swap": xfail(
        "honest work refused",
        "Alice swaps two agent plans' PLAN.yml byte for byte in one commit, then approves "
        "one: E_SELF_APPROVAL (alice wrote or changed this plan's content); a swap keeping "
        "the bytes is a move and should write nothing",
    ),
    "h-merge": xfail(
        "honest work refused",
        "Alice moves the agent's plan folder byte for byte on her branch, merges it --no-ff, "
        "approves: E_SELF_APPROVAL; the same move fast-forwarded (h-merge-ff) runs; a move on "
        "a merged branch should write nothing",
    ),
}


class Clock:
    def __init__(self, lab: Lab) -> None:
        self.lab, self.t = lab, int(time.time()) - 7200

    def git(self, *args: str, who=AGENT) -> str:  # type: ignore[no-untyped-def]
        self.t += 20
        self.lab.git_date = f"@{self.t} +0000"
        try:
            self.lab.git(*args, who=who)
        finally:
            self.lab.git_date = None
        return self.lab.head()

    def commit(self, msg: str, who) -> str:  # type: ignore[no-untyped-def]
        self.lab.git("add", "-A")
        return self.git("commit", "-q", "-m", msg, who=who)

    def run(self) -> None:
        self.t += 20
        self.lab.git_date = f"@{self.t} +0000"
        self.lab.run()
        self.lab.git_date = None


def _codes(lab: Lab, slug: str, name: str) -> str:
    text = lab.codes(slug)
    if name != "PLAN.yml":
        text += lab.git("show", f"HEAD:plans/{slug}/{name}", check=False)
    return text


def _note(lab: Lab, slug: str) -> None:
    (lab.repo / "plans" / slug / "NOTES.md").write_text("bob: check the host first\n")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    bob_plans = ["mv-folder", "mv-yaml", "mv-both", "onto", "bob-mvappr", "mv-merge"]
    agent_plans = [
        "mv-notes", "mv-leave", "swap-stay", "swap-stay-o", "swap-carry", "swap-carry-o",
        "onto-src", "h-mvappr-both", "h-swap", "h-swap-o", "h-merge", "h-merge-ff",
    ]  # fmt: skip
    for s in agent_plans:
        lab.write(s, pair_plan(s))
    c.commit("agent: plans", AGENT)
    for s in bob_plans:
        lab.write(s, pair_plan(s))
    for s in ("mv-notes", "mv-leave", "swap-stay", "swap-carry-o"):
        _note(lab, s)
    # swap-carry: Bob's note is in swap-carry (holding Y); the approved folder is swap-carry-o
    c.commit("bob: my plans, and review notes", BOB)
    c.run()  # P0: freezes
    git = lab.git
    # Alice's moves
    git("mv", "plans/mv-folder", "plans/mv-folder-new")
    c.commit("alice: tidy mv-folder", ALICE)
    git("mv", "plans/mv-yaml/PLAN.yml", "plans/mv-yaml/PLAN.yaml")
    c.commit("alice: name it PLAN.yaml", ALICE)
    (lab.repo / "plans" / "mv-both-new").mkdir()
    git("mv", "plans/mv-both/PLAN.yml", "plans/mv-both-new/PLAN.yaml")
    c.commit("alice: move and rename", ALICE)
    git("mv", "plans/mv-notes", "plans/mv-notes-new")
    c.commit("alice: move the folder", ALICE)
    (lab.repo / "plans" / "mv-leave-new").mkdir()
    git("mv", "plans/mv-leave/PLAN.yml", "plans/mv-leave-new/PLAN.yml")
    c.commit("alice: move the plan, keep the notes", ALICE)
    for a, b in (("swap-stay", "swap-stay-o"), ("swap-carry", "swap-carry-o"), ("h-swap", "h-swap-o")):
        pa, pb = lab.repo / "plans" / a / "PLAN.yml", lab.repo / "plans" / b / "PLAN.yml"
        ta, tb = pa.read_bytes(), pb.read_bytes()
        pa.write_bytes(tb)
        pb.write_bytes(ta)
        c.commit(f"alice: swap {a} and {b}", ALICE)
    git("mv", "-f", "plans/onto-src/PLAN.yml", "plans/onto/PLAN.yml")
    c.commit("alice: use the agent's plan in onto", ALICE)
    # Bob moves his own plan and approves it in one commit
    git("mv", "plans/bob-mvappr", "plans/bob-mvappr-new")
    lab.set_status("bob-mvappr-new", "approved")
    c.commit("bob: move and approve", BOB)
    # mv-merge / h-merge: moved on Alice's branch, merged --no-ff
    for s in ("mv-merge", "h-merge"):
        c.git("checkout", "-q", "-b", f"alice/{s}", "main", who=ALICE)
        git("mv", f"plans/{s}", f"plans/{s}-new")
        c.commit(f"alice: move {s}", ALICE)
        c.git("checkout", "-q", "main", who=ALICE)
        c.git("merge", "-q", "--no-ff", "-m", f"merge alice/{s}", f"alice/{s}", who=ALICE)
    c.git("checkout", "-q", "-b", "alice/h-merge-ff", "main", who=ALICE)
    git("mv", "plans/h-merge-ff", "plans/h-merge-ff-new")
    c.commit("alice: move h-merge-ff", ALICE)
    c.git("checkout", "-q", "main", who=ALICE)
    c.git("merge", "-q", "--ff-only", "alice/h-merge-ff", who=ALICE)
    # h-mvappr-both: move to a new folder, rename, and approve in one commit
    (lab.repo / "plans" / "h-mvappr-both-new").mkdir()
    git("mv", "plans/h-mvappr-both/PLAN.yml", "plans/h-mvappr-both-new/PLAN.yaml")
    lab.set_status("h-mvappr-both-new", "approved", "PLAN.yaml")
    c.commit("alice: move, rename, approve", ALICE)
    c.run()  # P1
    lab.p1 = {v: _codes(lab, TARGET[v][0], TARGET[v][1]) for v in TARGET}  # type: ignore[attr-defined]
    for v in BOB_IDS:
        if v == "bob-mvappr":
            continue
        slug, name, _tags = TARGET[v]
        lab.set_status(slug, "approved", name)
        c.commit(f"bob: approve {slug}", BOB)
    for v in ("h-swap", "h-merge", "h-merge-ff"):
        slug, name, _tags = TARGET[v]
        lab.set_status(slug, "approved", name)
        c.commit(f"alice: approve {slug}", ALICE)
    c.run()  # P2
    c.run()  # P3
    lab.status()
    lab.final = {v: _codes(lab, TARGET[v][0], TARGET[v][1]) for v in TARGET}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r70-moves", _build)


@pytest.mark.parametrize("vid", cases(BOB_IDS, BOB_IDS, BROKEN))  # type: ignore[arg-type]
def test_a_move_launders_no_writer(lab: Lab, vid: str) -> None:
    slug, _name, tags = TARGET[vid]
    ran = {t: len(lab.calls(t)) for t in tags}
    assert not any(ran.values()), (ran, lab.final[vid][:1500])  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.final[vid], lab.final[vid][:1500]  # type: ignore[attr-defined]
    assert valid_runs(lab.report, slug) == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_her_move_writes_nothing(lab: Lab, vid: str) -> None:
    slug, _name, tags = TARGET[vid]
    assert [len(lab.calls(t)) for t in tags] == [1], lab.final[vid][:1500]  # type: ignore[attr-defined]
    runs = valid_runs(lab.report, slug)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("vid", [*BOB_IDS, *HONEST])
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    slug, _name, tags = TARGET[vid]
    fresh = valid_runs(lab.fresh, slug)  # type: ignore[attr-defined]
    assert len(fresh) == sum(len(lab.calls(t)) for t in tags), (fresh, lab.final[vid][:800])  # type: ignore[attr-defined]
    assert len(valid_runs(lab.report, slug)) == len(fresh)  # type: ignore[attr-defined]
