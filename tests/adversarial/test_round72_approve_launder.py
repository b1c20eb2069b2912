"""Round 72, approval side: round 71's producers rule (docs/approvals.md, "Who changed the
content" and the producers paragraph: a commit produces a content only where it changed the
content at that path, never by a move; a rename between ``PLAN.yml`` and ``PLAN.yaml`` that
keeps the bytes, all but a plain status line, is no one's writing in any commit, a merge's
included). Can an approver's bytes be laundered into nobody's through renames and moves: his
edit followed by someone else's byte-keeping rename (on the line, on a branch merged
``--no-ff``, in an octopus, across merged branches that rename, ``-X theirs``/``-X ours``),
across a folder emptied and refilled, a rename plus a note in the same commit, nested and
pinned plans renamed or moved out and back?

Lab (one, local mode, fake dates). The agent commits one ``rec`` plan per id (tag = the id);
Bob's child plans and notes before P0 where said. P0 freezes. Gap 1: the edits, renames and
merges below. P1 freezes every new version. Gap 2: the approver named approves the final
file (``plans/<v>/PLAN.yaml``, or ``plans/<v>-n/PLAN.yaml`` for a move). P2, P3.

Bob (an approver, ``*@ops.example.com``) writes, someone else renames; Bob approves (asserted:
nothing ran, ``E_SELF_APPROVAL``, no audit calls a run valid):

- ``b-edit-ren``: Bob edits the tag (``<v>-b``) on main; the agent renames ``PLAN.yml`` to
  ``PLAN.yaml`` byte for byte in the next commit.
- ``b-edit-ren-br``: the same two commits on Bob's branch, merged ``--no-ff`` by Alice.
- ``b-edit-mvren-br``: Bob's edit on his branch, the agent moves it to
  ``plans/<v>-n/PLAN.yaml`` there (folder and name), merged ``--no-ff`` by Alice.
- ``b-side-merge-ren``: Bob edits on a side branch; the agent renames on its branch and merges
  Bob's side into it (git's rename pairing writes the edit into ``PLAN.yaml``); Alice merges
  the agent's branch ``--no-ff``.
- ``b-xtheirs``: Bob edits the tag on his branch; on main the agent renames with another tag
  (``<v>-g``); the agent merges Bob's branch ``-X theirs`` (Bob's line wins in ``PLAN.yaml``).
- ``b-ren-octo``: Bob's edit and the agent's rename on one branch, a docs branch beside it;
  Alice merges both in one octopus.
- ``b-empty-refill``: Bob's edit; the agent removes the folder (emptied), then adds the same
  bytes back as ``PLAN.yaml``.
- ``b-ren-note``: Bob renames the agent's plan byte for byte and adds ``NOTES.md`` in the same
  commit.
- ``b-ren-note-br``: the same on Bob's branch, merged ``--no-ff`` by Alice.
- ``b-note-mv``: Bob's ``NOTES.md`` in the folder; the agent moves the plan to
  ``plans/<v>-n/PLAN.yaml`` and deletes the note in one commit (the folder emptied by it).
- ``b-note-mv-br``: the same move on the agent's branch, merged ``--no-ff`` by Alice.
- ``b-nest-ren``: Bob writes a child plan ``plans/<v>/child/PLAN.yml``; the agent renames it
  ``PLAN.yaml`` on a branch merged ``--no-ff`` by Alice; Bob approves the parent.
- ``b-nest-out-in``: Bob's child; the agent moves it out to ``plans/<v>-c``, then back as
  ``plans/<v>/child/PLAN.yaml``; Bob approves the parent.
- ``b-pin-ren``: the parent ``<v>`` pins ``plans/<v>-q``; Bob's ``NOTES.md`` in the pinned
  folder; the agent renames the pinned plan ``PLAN.yaml`` on a branch merged by Alice; Bob
  approves the parent.

Alice writes, someone else renames; Alice approves (asserted the same):

- ``a-edit-ren-br``: Alice edits the tag (``<v>-a``) on her branch, the agent renames there,
  Bob merges ``--no-ff``.
- ``a-edit-xours``: the agent renames with its own tag edit on its branch; Alice edits the tag
  on main; the agent merges its branch ``-X ours`` (her line in ``PLAN.yaml``).

Honest (asserted: ran once, approver as named, both audits valid):

- ``h-ren-br``: the agent renames on its branch, Bob merges ``--no-ff``; Alice approves.
- ``h-mvren-br``: the agent moves it to ``plans/<v>-n/PLAN.yaml`` on its branch, Bob merges.
- ``h-side-merge-ren``: ``b-side-merge-ren`` with the agent's edit (``<v>-g``), Bob merging.
- ``h-xtheirs``: ``b-xtheirs`` with the agent's edit on both sides (``<v>-g`` wins).
- ``h-octo``: the agent's rename on a branch and a docs branch, one octopus by Bob.
- ``h-empty-refill``: the agent removes the folder and adds the bytes back as ``PLAN.yaml``.
- ``h-note-mv``: the agent's own note; the agent's move deleting it.
- ``h-nest-ren``: the agent's child renamed on a branch merged by Bob; Alice approves the
  parent.
- ``h-pin-ren``: ``b-pin-ren`` with the agent's note; Alice approves the parent (the pinned
  plan's action runs).
- ``h-bob-ren-br``: Bob renames the agent's plan byte for byte on his branch, Alice merges
  ``--no-ff``; Bob approves (round 71: a byte-keeping rename is no one's writing): approver
  bob.

Seen (round 72): no break. Held: every Bob and Alice id was ``E_SELF_APPROVAL`` ("wrote or
changed this plan's content"), nothing ran and neither audit called a run valid: an
approver's edit followed by another's byte-keeping rename on the line, on a branch merged
``--no-ff``, with a folder move, in an octopus, merged through git's rename pairing into the
agent's renaming branch, winning ``-X theirs`` (Bob) or ``-X ours`` (Alice) over the agent's
rename-with-edit, across the folder emptied and refilled as ``PLAN.yaml``; a rename plus a note
in one commit (on the line, merged); the note's folder left by the agent's move-and-delete (on
the line, merged); a child plan of Bob's renamed on a merged branch or moved out and back
renamed; Bob's note in a pinned plan's folder renamed on a merged branch. Every control ran
once with the approver named (``h-bob-ren-br``: Bob's byte-keeping rename merged by Alice, then
his approval, ran, approver bob), and the fresh-clone audit agreed on every id.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit
from checkkit import pinning
from pairkit import pair_plan
from test_round2_execution_kit import shared

BOBS = [
    "b-edit-ren", "b-edit-ren-br", "b-edit-mvren-br", "b-side-merge-ren", "b-xtheirs",
    "b-ren-octo", "b-empty-refill", "b-ren-note", "b-ren-note-br", "b-note-mv", "b-note-mv-br",
    "b-nest-ren", "b-nest-out-in", "b-pin-ren",
]  # fmt: skip
ALICES = ["a-edit-ren-br", "a-edit-xours"]
HONEST = [
    "h-ren-br", "h-mvren-br", "h-side-merge-ren", "h-xtheirs", "h-octo", "h-empty-refill",
    "h-note-mv", "h-nest-ren", "h-pin-ren", "h-bob-ren-br",
]  # fmt: skip
ALL = [*BOBS, *ALICES, *HONEST]
MOVED = {"b-edit-mvren-br", "b-note-mv", "b-note-mv-br", "h-mvren-br", "h-note-mv"}
#: the parent plan keeps its PLAN.yml (its child or pinned plan was renamed)
PARENTS = {"b-nest-ren", "b-nest-out-in", "b-pin-ren", "h-nest-ren", "h-pin-ren"}
APPROVER = {v: BOB for v in [*BOBS, "h-bob-ren-br"]}
#: tags that must never be recorded
NEVER = {
    **{v: [v, f"{v}-b", f"{v}-g"] for v in BOBS},
    **{v: [v, f"{v}-a", f"{v}-g"] for v in ALICES},
    "b-pin-ren": ["b-pin-ren-q"],
    "b-nest-ren": ["b-nest-ren", "b-nest-ren-c"],
    "b-nest-out-in": ["b-nest-out-in", "b-nest-out-in-c"],
}
RUNS = {v: [v] for v in HONEST} | {
    "h-side-merge-ren": ["h-side-merge-ren-g"],
    "h-xtheirs": ["h-xtheirs-g"],
    "h-pin-ren": ["h-pin-ren-q"],
}
BROKEN: dict[str, object] = {}


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


def _p(lab: Lab, slug: str, name: str = "PLAN.yml") -> Path:
    return lab.repo / "plans" / slug / name


def _final(v: str) -> tuple[str, str]:
    if v in PARENTS:
        return v, "PLAN.yml"
    return (f"{v}-n" if v in MOVED else v), "PLAN.yaml"


def _edit(path: Path, slug: str, suffix: str) -> None:
    text = path.read_text()
    new = text.replace(f'tag: "{slug}"', f'tag: "{slug}-{suffix}"')
    assert new != text, text
    path.write_text(new)


def _note(lab: Lab, slug: str, who: tuple[str, str]) -> None:
    (lab.repo / "plans" / slug / "NOTES.md").write_text(f"{who[0]}: check the host\n")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    git = lab.git
    for v in ALL:
        lab.write(v, pair_plan(v))
    for v in ("b-pin-ren", "h-pin-ren"):
        lab.write(f"{v}-q", pair_plan(f"{v}-q"))
    lab.write("h-nest-ren/child", pair_plan("h-nest-ren-c"))
    (lab.repo / "plans" / "h-note-mv" / "NOTES.md").write_text("agent: check the host\n")
    c.commit("agent: plans", AGENT)
    for v in ("b-nest-ren", "b-nest-out-in"):
        lab.write(f"{v}/child", pair_plan(f"{v}-c"))
    for v in ("b-note-mv", "b-note-mv-br"):
        _note(lab, v, BOB)
    c.commit("bob: child plans, notes", BOB)
    c.run()  # P0
    # pinned parents, written once the pinned plans are frozen
    for v, who in (("b-pin-ren", BOB), ("h-pin-ren", AGENT)):
        digest = lab.plan(f"{v}-q")["frozen"]["hash"]
        lab.write(v, pinning(v, f"plans/{v}-q", digest))
        c.commit("agent: pin it", AGENT)
        _note(lab, f"{v}-q", who)
        c.commit(f"{who[0]}: a note", who)

    def mv(slug: str, to: str = "", name: str = "PLAN.yaml", who=AGENT) -> None:  # type: ignore[no-untyped-def]
        to = to or slug
        _p(lab, to).parent.mkdir(parents=True, exist_ok=True)
        git("mv", f"plans/{slug}/PLAN.yml", f"plans/{to}/{name}")

    def branch(name: str, at: str = "main", who=AGENT) -> None:  # type: ignore[no-untyped-def]
        c.git("checkout", "-q", "-b", name, at, who=who)

    def merge(ref: str, who, *how: str) -> None:  # type: ignore[no-untyped-def]
        c.git("checkout", "-q", "main", who=who)
        c.git("merge", "-q", "--no-ff", *how, "-m", f"merge {ref}", ref, who=who)

    # gap 1 --------------------------------------------------------------------------
    # b-edit-ren: Bob's edit, the agent's byte-keeping rename
    _edit(_p(lab, "b-edit-ren"), "b-edit-ren", "b")
    c.commit("bob: fix the tag", BOB)
    mv("b-edit-ren")
    c.commit("agent: name it PLAN.yaml", AGENT)
    # b-edit-ren-br / b-edit-mvren-br / a-edit-ren-br: the same on a branch
    for v, writer, suffix, merger in (("b-edit-ren-br", BOB, "b", ALICE),
                                      ("b-edit-mvren-br", BOB, "b", ALICE),
                                      ("a-edit-ren-br", ALICE, "a", BOB)):  # fmt: skip
        branch(f"w/{v}")
        _edit(_p(lab, v), v, suffix)
        c.commit(f"{writer[0]}: fix the tag", writer)
        mv(v, f"{v}-n" if v in MOVED else v)
        c.commit("agent: name it PLAN.yaml", AGENT)
        merge(f"w/{v}", merger)
    # b-side-merge-ren / h-side-merge-ren: the edit merged into the agent's renaming branch
    for v, writer, suffix in (("b-side-merge-ren", BOB, "b"), ("h-side-merge-ren", AGENT, "g")):
        branch(f"side/{v}")
        _edit(_p(lab, v), v, suffix)
        c.commit(f"{writer[0]}: fix the tag", writer)
        branch(f"ren/{v}", "main")
        mv(v)
        c.commit("agent: name it PLAN.yaml", AGENT)
        c.git("merge", "-q", "--no-ff", "-m", f"merge side/{v}", f"side/{v}")
        merge(f"ren/{v}", ALICE if writer == BOB else BOB)
    # b-xtheirs / h-xtheirs: the writer's line wins over the agent's rename-with-edit
    for v, writer, suffix, other in (("b-xtheirs", BOB, "b", "g"), ("h-xtheirs", AGENT, "g", "h")):
        branch(f"w/{v}")
        _edit(_p(lab, v), v, suffix)
        c.commit(f"{writer[0]}: fix the tag", writer)
        c.git("checkout", "-q", "main")
        mv(v)
        _edit(_p(lab, v, "PLAN.yaml"), v, other)
        c.commit("agent: name it PLAN.yaml, tag", AGENT)
        merge(f"w/{v}", AGENT, "-X", "theirs")
    # a-edit-xours: her line kept by the agent's -X ours merge of its rename-with-edit
    branch("ren/a-edit-xours")
    mv("a-edit-xours")
    _edit(_p(lab, "a-edit-xours", "PLAN.yaml"), "a-edit-xours", "g")
    c.commit("agent: name it PLAN.yaml, tag", AGENT)
    c.git("checkout", "-q", "main")
    _edit(_p(lab, "a-edit-xours"), "a-edit-xours", "a")
    c.commit("alice: fix the tag", ALICE)
    merge("ren/a-edit-xours", AGENT, "-X", "ours")
    # b-ren-octo / h-octo: one octopus
    for v, writer, merger in (("b-ren-octo", BOB, ALICE), ("h-octo", None, BOB)):
        branch(f"w/{v}")
        if writer:
            _edit(_p(lab, v), v, "b")
            c.commit("bob: fix the tag", writer)
        mv(v)
        c.commit("agent: name it PLAN.yaml", AGENT)
        branch(f"docs/{v}", "main")
        (lab.repo / "docs").mkdir(exist_ok=True)
        (lab.repo / "docs" / f"{v}.md").write_text(v + "\n")
        c.commit("agent: docs", AGENT)
        c.git("checkout", "-q", "main")
        c.git("merge", "-q", "--no-ff", "-m", "merge two", f"w/{v}", f"docs/{v}", who=merger)
    lab.octo = len(git("log", "-1", "--format=%P").split())  # type: ignore[attr-defined]
    # b-empty-refill / h-empty-refill: the folder emptied, the bytes back as PLAN.yaml
    for v, writer in (("b-empty-refill", BOB), ("h-empty-refill", None)):
        if writer:
            _edit(_p(lab, v), v, "b")
            c.commit("bob: fix the tag", writer)
        data = _p(lab, v).read_bytes()
        git("rm", "-q", "-r", f"plans/{v}")
        c.commit("agent: drop it", AGENT)
        lab.write(v, data, "PLAN.yaml")
        c.commit("agent: bring it back", AGENT)
    # b-ren-note / b-ren-note-br: Bob's rename plus a note, one commit
    mv("b-ren-note", who=BOB)
    _note(lab, "b-ren-note", BOB)
    c.commit("bob: name it PLAN.yaml, a note", BOB)
    branch("w/b-ren-note-br", who=BOB)
    mv("b-ren-note-br", who=BOB)
    _note(lab, "b-ren-note-br", BOB)
    c.commit("bob: name it PLAN.yaml, a note", BOB)
    merge("w/b-ren-note-br", ALICE)
    # b-note-mv / h-note-mv / b-note-mv-br: the move takes the plan, the note is deleted
    for v, on_branch in (("b-note-mv", False), ("h-note-mv", False), ("b-note-mv-br", True)):
        if on_branch:
            branch(f"w/{v}")
        mv(v, f"{v}-n")
        git("rm", "-q", f"plans/{v}/NOTES.md")
        c.commit("agent: move it", AGENT)
        if on_branch:
            merge(f"w/{v}", ALICE)
    lab.emptied = not (lab.repo / "plans" / "b-note-mv").exists()  # type: ignore[attr-defined]
    # b-nest-ren / h-nest-ren / b-pin-ren / h-pin-ren: a child or pinned plan renamed
    for v, folder, merger in (("b-nest-ren", "b-nest-ren/child", ALICE),
                              ("h-nest-ren", "h-nest-ren/child", BOB),
                              ("b-pin-ren", "b-pin-ren-q", ALICE),
                              ("h-pin-ren", "h-pin-ren-q", BOB)):  # fmt: skip
        branch(f"w/{v}")
        mv(folder)
        c.commit("agent: name it PLAN.yaml", AGENT)
        merge(f"w/{v}", merger)
    # b-nest-out-in: the child out of the parent, then back renamed
    git("mv", "plans/b-nest-out-in/child", "plans/b-nest-out-in-c")
    c.commit("agent: the child on its own", AGENT)
    mv("b-nest-out-in-c", "b-nest-out-in/child")
    c.commit("agent: the child back", AGENT)
    # honest renames on branches
    for v, to, merger, who in (("h-ren-br", "", BOB, AGENT), ("h-mvren-br", "h-mvren-br-n", BOB,
                               AGENT), ("h-bob-ren-br", "", ALICE, BOB)):  # fmt: skip
        branch(f"w/{v}", who=who)
        mv(v, to, who=who)
        c.commit(f"{who[0]}: name it PLAN.yaml", who)
        merge(f"w/{v}", merger)
    c.run()  # P1
    lab.p1 = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
    # gap 2: the approvals
    for v in ALL:
        slug, name = _final(v)
        lab.set_status(slug, "approved", name)
        c.commit(f"approve {slug}", APPROVER.get(v, ALICE))
    c.run()  # P2
    c.run()  # P3
    lab.status()
    slugs = sorted({str(p.parent.relative_to(lab.repo / "plans"))
                    for p in (lab.repo / "plans").rglob("PLAN.y*ml")})  # fmt: skip
    lab.final = {s: lab.codes(s) for s in slugs}  # type: ignore[attr-defined]
    for s in slugs:
        if _p(lab, s, "PLAN.yaml").exists():
            lab.final[s] += lab.git("show", f"HEAD:plans/{s}/PLAN.yaml", check=False)  # type: ignore[attr-defined]
    lab.shapes = {  # type: ignore[attr-defined]
        v: _p(lab, v, "PLAN.yaml").read_text()
        for v in ("b-xtheirs", "h-xtheirs", "a-edit-xours", "b-side-merge-ren")
    }
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r72-launder", _build)


def _why(lab: Lab, vid: str) -> str:
    return "\n".join(
        f"{s}: {t[:900]}"
        for s, t in lab.final.items()  # type: ignore[attr-defined]
        if s.startswith(vid)
    )


def _valid(report: dict, vid: str) -> list:  # type: ignore[type-arg]
    slug, _name = _final(vid)
    return [
        e for e in report.get("executions", [])
        if e.get("approval_valid") and e.get("plan") in (f"plans/{slug}", f"plans/{vid}-q")
    ]  # fmt: skip


def test_the_lab_played_as_described(lab: Lab) -> None:
    shapes = lab.shapes  # type: ignore[attr-defined]
    assert 'tag: "b-xtheirs-b"' in shapes["b-xtheirs"]
    assert 'tag: "h-xtheirs-g"' in shapes["h-xtheirs"]
    assert 'tag: "a-edit-xours-a"' in shapes["a-edit-xours"]
    assert 'tag: "b-side-merge-ren-b"' in shapes["b-side-merge-ren"]
    assert lab.octo == 3 and lab.emptied  # type: ignore[attr-defined]
    assert not any(lab.p1.values()), lab.p1  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(BOBS, BOBS, BROKEN))  # type: ignore[arg-type]
def test_bobs_bytes_renamed_by_another_stay_his(lab: Lab, vid: str) -> None:
    ran = {t: len(lab.calls(t)) for t in NEVER[vid]}
    assert not any(ran.values()), (ran, _why(lab, vid))
    assert "E_SELF_APPROVAL" in lab.final[_final(vid)[0]], _why(lab, vid)  # type: ignore[attr-defined]
    assert _valid(lab.report, vid) == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALICES, ALICES, BROKEN))  # type: ignore[arg-type]
def test_her_bytes_renamed_by_another_stay_hers(lab: Lab, vid: str) -> None:
    ran = {t: len(lab.calls(t)) for t in NEVER[vid]}
    assert not any(ran.values()), (ran, _why(lab, vid))
    assert "E_SELF_APPROVAL" in lab.final[_final(vid)[0]], _why(lab, vid)  # type: ignore[attr-defined]
    assert _valid(lab.report, vid) == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_renames_of_the_agents_bytes_run_once(lab: Lab, vid: str) -> None:
    ran = {t: len(lab.calls(t)) for t in RUNS[vid]}
    assert all(n == 1 for n in ran.values()), (ran, _why(lab, vid))
    runs = _valid(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == APPROVER.get(vid, ALICE)[1], runs


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = _valid(lab.fresh, vid)  # type: ignore[attr-defined]
    tags = {*NEVER.get(vid, []), *RUNS.get(vid, []), vid}
    ran = sum(len(lab.calls(t)) for t in tags)
    assert len(fresh) == ran, (fresh, _why(lab, vid))
    assert len(_valid(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
