"""Round 73, approval side: round 72's writers of a plan file (docs/approvals.md, "Who changed
the content": any byte of a plan file but a plain status change makes its committer a writer;
the controller's owned blocks ``approval:``/``execution:`` are set aside, and an owned-block
editor is a writer of every LATER version of that plan, wherever it moves; a merge's own change
is judged against its parents and git's join). Can Bob (an approver) get bytes of his into a
version he then approves, through an owned block, a copy, a cherry-pick or rebase of his
commit by the agent, a merge he resolves, a YAML anchor in an owned block that the plan's
actions use; and is an honest approver refused where the rules say his bytes are none?

Lab (one, local mode, fake dates): the agent commits one ``rec`` plan per id (tag = the id,
``params: {tag: "<v>"}``). P0 freezes. Gap 1: Bob's edits, picks and merges. P1 (the
controller overwrites owned blocks, freezes). Gap 2: the agent "lifts" Bob's bytes into the
plan (``params: {tag: "<v>", extra: "<v>-bob"}``) where said. P2 freezes. Gap 3: the approver
named approves the final file with a plain status change. P3, P4, ``plangate audit --json``
with the config and on a fresh clone.

Bob's bytes in the version he approves (asserted: ``rec`` never ran, no audit calls a run
valid, one start at most):

- ``own-appr-lift``: Bob appends an ``approval:`` block holding ``payload: "<v>-bob"``; the
  agent lifts the payload into ``params`` after P1.
- ``own-exec-lift``: the same with an ``execution:`` block.
- ``own-appr-lift-br``: Bob's ``approval:`` edit on his branch, merged ``--no-ff`` by Alice.
- ``own-appr-lift-mv``: the agent lifts it in the commit that moves the folder to
  ``plans/<v>-n``.
- ``own-appr-lift-ren``: the agent lifts it in the commit that renames ``PLAN.yml`` to
  ``PLAN.yaml``.
- ``own-appr-lift-now``: Bob's edit and the agent's lift in gap 1, no pass between them.
- ``own-merge-lift``: Bob writes the ``approval:`` block inside his own merge of a docs branch
  (``--no-commit``); lifted after P1.
- ``own-appr-cp-lift``: the agent copies the folder to ``plans/<v>-c`` byte for byte (the
  source stays), then lifts Bob's payload there in its next commit; Bob approves the copy.
- ``own-anchor``: the agent's plan says ``params: *p`` (no anchor: invalid at P0); Bob inserts
  ``approval: &p {tag: "<v>", extra: "<v>-bob"}`` above ``actions:`` (his bytes become the
  params only through the alias); the agent sets ``pending_approval`` again.
- ``note-cp-lift``: Bob's ``NOTES.md`` in the folder; the agent copies the folder to
  ``plans/<v>-c`` byte for byte (the note with it), then lifts the note's text into the copy's
  params in its next commit.
- ``own-cptouch-lift``, ``note-cptouch-lift``: the same copies, the copy's commit also adding
  a comment line to the source's plan file (so git's default ``-C`` pairs the copy with it,
  round 51).
- ``pick-bob-cmt``: Bob's comment line in the plan file on his unmerged branch; the agent
  cherry-picks it onto main (author Bob, committer the agent).
- ``pick-bob-act``: Bob's commented-out params line on his branch; the agent cherry-picks it,
  then uncomments it after P1 (a new version).
- ``rebase-bob-act``: the same commit rebased by the agent onto main and fast-forwarded;
  uncommented after P1.
- ``mrg-hand-bob``: the agent's branch and main add different comment lines at the file's
  end; Bob merges the branch and resolves the conflict by hand with his own line.
- ``rev-bob-cmt``: the agent adds a comment line; Bob ``git revert``s that commit (a byte
  change beside no status change).

Controls (asserted: ran once, approver named, both audits valid):

- ``h-own-same``: Bob's ``approval:`` edit (a forged vote); P1 overwrites it; Bob approves the
  same version (an owned-block-only editor is no writer of the version it sits beside).
- ``h-own-alice``: Bob's owned edit, the agent's lift; Alice approves.
- ``h-mrg-side-bob``: ``mrg-hand-bob``'s conflict resolved by Bob taking the branch's file
  (``git checkout --theirs``: the ``-X theirs`` outcome byte for byte); Bob approves.
- ``h-mrg-xours-bob``: the same conflict merged by Bob ``-X ours``; Bob approves.
- ``h-status-cmt``: the agent's comment on the status line; Bob changes the value only.
- ``h-flow-status``: the agent's ``plan:`` a flow mapping; Bob changes the status value in it.
- ``h-crlf-status``: the agent's file with CRLF line ends; Bob changes the value, CRLF kept.

Seen (round 73), fixed 2026-11-30 (r73approve): a copy carries its source's writers
INCLUDING its owned-block editors' hold, however it is found. A copy git pairs
(``Lifecycle._pair_parked``) and a byte-exact copy of a plan the index holds that git pairs
with nothing, found by the index's blobs (``_exact_copies``, ``_plans_holding``: no copy
search), take the writers of the plan copied (its changers, its folder's writers: Bob's
``NOTES.md`` copied or not) and its folder's ``@held`` editors as the copy's own hold
(``_hold_copied``, set after the copy's own change: an owned-block editor is still no writer
of the same version copied; a copy that is another version has them as writers at once); the
lift in the next commit makes Bob a writer of the copy: ``E_SELF_APPROVAL`` for all three
ids, nothing ran, both audits agree. All asserted (the markers are off). As found: 3 BROKE
(strict xfails), two classes.

Class 1, ``own-cptouch-lift``: Bob appended an ``approval:`` block holding ``payload:
"<v>-bob"`` to the agent's plan (P1 noted it and overwrote it); the agent then copied the plan
folder to ``plans/<v>-c`` byte for byte in a commit that also added a comment to the source's
file (git's default ``diff-tree -M -C`` pairs ``C100 plans/<v>/PLAN.yml ->
plans/<v>-c/PLAN.yml``, asserted), and in its next commit lifted the payload into the copy's
``params``; Bob approved ``plans/<v>-c`` with a plain status change: ``rec`` ran once with
``extra: "<v>-bob"``, approver bob, both audits valid. The same copy of a folder holding
Bob's ``NOTES.md`` (``note-cptouch-lift``) was ``E_SELF_APPROVAL``: the pairing carries the
folder's writers but not the owned-block editor's hold; the lift on the line, on a merged
branch, in a merge, with a move or a rename all held. Should (docs/approvals.md, "Who changed
the content": an owned-block edit's "bytes could still become plan content ... so its
committer is a writer of every LATER version of that plan (... wherever the plan moves)";
round 51: a copy git pairs takes "the writers of what git pairs it from"): Bob is a writer
of the lifted copy, ``E_SELF_APPROVAL``.

Class 2, ``own-appr-cp-lift``, ``note-cp-lift``: the same, the copy's commit leaving the
source untouched (a byte-exact copy, which git's default ``-C`` does not pair): Bob's owned
block (or his ``NOTES.md``, copied with the folder) lifted into the copy in the agent's NEXT
commit; Bob's approval of the copy ran, ``extra: "<v>-bob"``, approver bob, both audits
valid. Should: as class 1 (docs/approvals.md: "Whoever commits any file into a plan's folder
... is a writer of the plan that folder holds or will hold"; threat-model, ``cp-edit``:
"exact copies (authors by hash)" are followed; the accepted ``cp-edit`` limit is a copy WITH
an edit in ONE commit, not a byte-exact copy edited later). The maintainers may judge it a
neighbour of that limit: an exact copy of an untouched plan is followed by hash, and the hash
has no folder writers. Seen beside them and left out as the accepted ``cp-edit`` limit: the
copy and the lift in ONE commit (``own-appr-cp-lift``/``note-cp-lift`` as first written) ran
too.

Held: every other Bob id was refused and nothing ran (the owned-block hold on the line, from
a merged branch, from his merge, through the agent's move or rename with the lift, and with
no pass between edit and lift; the YAML anchor in his owned block used as the params by alias;
his comment or commented-out params line cherry-picked or rebased by the agent (author Bob);
his hand-resolved conflict; his revert of the agent's comment). Every control ran once, the
approver named (his owned-block-only edit beside the same version; Alice after the lift; his
merge resolved by taking the branch's file or ``-X ours``; the status value changed beside the
agent's comment, in a flow mapping, in a CRLF file). The fresh-clone audit agreed with the
controller on every id.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit
from policykit import agent_plan as plan
from test_round2_execution_kit import shared

BOBS = [
    "own-appr-lift", "own-exec-lift", "own-appr-lift-br", "own-appr-lift-mv",
    "own-appr-lift-ren", "own-appr-lift-now", "own-merge-lift", "own-appr-cp-lift",
    "own-anchor", "note-cp-lift", "own-cptouch-lift", "note-cptouch-lift", "pick-bob-cmt",
    "pick-bob-act", "rebase-bob-act",
    "mrg-hand-bob", "rev-bob-cmt",
]  # fmt: skip
HONEST = {
    "h-own-same": BOB,
    "h-own-alice": ALICE,
    "h-mrg-side-bob": BOB,
    "h-mrg-xours-bob": BOB,
    "h-status-cmt": BOB,
    "h-flow-status": BOB,
    "h-crlf-status": BOB,
}
ALL = [*BOBS, *HONEST]
LIFT = [
    "own-appr-lift", "own-exec-lift", "own-appr-lift-br", "own-appr-lift-now",
    "own-merge-lift", "h-own-alice",
]  # fmt: skip
#: nothing open since r73approve (2026-11-30)
BROKEN: dict[str, Any] = {}


def final(v: str) -> tuple[str, str]:
    """Where the approver approves: (folder under plans/, file name)."""
    if v in ("own-appr-lift-mv",):
        return f"{v}-n", "PLAN.yml"
    if v in ("own-appr-cp-lift", "note-cp-lift", "own-cptouch-lift", "note-cptouch-lift"):
        return f"{v}-c", "PLAN.yml"
    if v == "own-appr-lift-ren":
        return v, "PLAN.yaml"
    return v, "PLAN.yml"


class Clock:
    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.t = int(time.time()) - 7200

    def git(self, *args: str, who=AGENT, check: bool = True) -> str:  # type: ignore[no-untyped-def]
        self.t += 20
        when = f"@{self.t} +0000"
        self.lab.extra_env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}  # type: ignore[attr-defined]
        try:
            self.lab.git(*args, who=who, check=check)
        finally:
            self.lab.extra_env = {}  # type: ignore[attr-defined]
        return self.lab.head()

    def commit(self, msg: str, who=AGENT) -> str:  # type: ignore[no-untyped-def]
        self.lab.git("add", "-A")
        return self.git("commit", "-q", "-m", msg, who=who)

    def run(self) -> None:
        self.t += 20
        self.lab.git_date = f"@{self.t} +0000"
        self.lab.run()
        self.lab.git_date = None


def _f(lab: Lab, folder: str, name: str = "PLAN.yml") -> Path:
    return lab.repo / "plans" / folder / name


def _sub(path: Path, old: str, new: str) -> None:
    data = path.read_bytes()
    assert old.encode() in data, (path, old, data[:400])
    path.write_bytes(data.replace(old.encode(), new.encode(), 1))


def _append(path: Path, text: str) -> None:
    path.write_bytes(path.read_bytes() + text.encode())


def _lift(lab: Lab, v: str, folder: str | None = None, name: str = "PLAN.yml") -> None:
    _sub(
        _f(lab, folder or v, name),
        f'params: {{tag: "{v}"}}',
        f'params: {{tag: "{v}", extra: "{v}-bob"}}',
    )


def _owned(lab: Lab, v: str, block: str = "approval") -> None:
    _append(_f(lab, v), f'{block}:\n  status: approved\n  approver: bob\n  payload: "{v}-bob"\n')


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    for v in ALL:
        text = plan(v)
        if v == "own-anchor":
            text = text.replace(f'params: {{tag: "{v}"}}', "params: *p")
        if v == "h-status-cmt":
            text = text.replace(
                "status: pending_approval", "status: pending_approval  # agent: ready"
            )
        if v == "h-flow-status":
            text = text.replace(
                f'plan:\n  name: "{v}"\n  task: "agent task {v}"\n  status: pending_approval\n',
                f'plan: {{name: "{v}", task: "agent task {v}", status: pending_approval}}\n',
            )
        if v == "h-crlf-status":
            text = text.replace("\n", "\r\n")
        lab.write(v, text)
    c.commit("agent plans")
    c.run()  # P0
    lab.p0 = {v: lab.read(v) for v in ("own-anchor", "h-flow-status")}  # type: ignore[attr-defined]

    def co(ref: str, new: str = "", who=AGENT) -> None:  # type: ignore[no-untyped-def]
        c.git("checkout", "-q", *(["-b", new] if new else []), ref, who=who)

    def docs(name: str, who=AGENT) -> str:  # type: ignore[no-untyped-def]
        (lab.repo / "docs").mkdir(exist_ok=True)
        (lab.repo / "docs" / f"{name}.md").write_text(name + "\n")
        return c.commit(f"docs {name}", who=who)

    # gap 1: Bob's owned-block edits
    for v in (
        "own-appr-lift", "own-appr-lift-mv", "own-appr-lift-ren", "own-appr-cp-lift",
        "own-cptouch-lift",
    ):  # fmt: skip
        _owned(lab, v)
    _owned(lab, "own-exec-lift", "execution")
    _owned(lab, "h-own-same")
    _owned(lab, "h-own-alice")
    c.commit("bob: record", who=BOB)
    co("main", "bob/own-br", who=BOB)
    _owned(lab, "own-appr-lift-br")
    c.commit("bob: record", who=BOB)
    co("main", who=ALICE)
    c.git("merge", "-q", "--no-ff", "-m", "merge bob/own-br", "bob/own-br", who=ALICE)
    _owned(lab, "own-appr-lift-now")
    c.commit("bob: record", who=BOB)
    _lift(lab, "own-appr-lift-now")
    c.commit("agent: extra")
    co("main", "agent/docs-own", who=AGENT)
    docs("own-merge")
    co("main", who=BOB)
    c.git("merge", "-q", "--no-ff", "--no-commit", "agent/docs-own", who=BOB)
    _owned(lab, "own-merge-lift")
    c.commit("merge agent/docs-own", who=BOB)
    # the anchor in an owned block
    _sub(
        _f(lab, "own-anchor"),
        "available_tools:",
        'approval: &p {tag: "own-anchor", extra: "own-anchor-bob"}\navailable_tools:',
    )
    c.commit("bob: record", who=BOB)
    lab.set_status("own-anchor", "pending_approval")
    if lab.git("status", "--porcelain").strip():
        c.commit("agent: resubmit")
    # Bob's note
    for v in ("note-cp-lift", "note-cptouch-lift"):
        (lab.repo / "plans" / v / "NOTES.md").write_text(f'extra: "{v}-bob"\n')
    c.commit("bob: note", who=BOB)
    # Bob's commits picked or rebased by the agent
    for v, line in (
        ("pick-bob-cmt", "# bob: looks fine\n"),
        ("pick-bob-act", '# params: {tag: "pick-bob-act", extra: "pick-bob-act-bob"}\n'),
        ("rebase-bob-act", '# params: {tag: "rebase-bob-act", extra: "rebase-bob-act-bob"}\n'),
    ):
        co("main", f"bob/{v}", who=BOB)
        _append(_f(lab, v), line)
        lab.picked = getattr(lab, "picked", {})  # type: ignore[attr-defined]
        lab.picked[v] = c.commit(f"bob: {v}", who=BOB)  # type: ignore[attr-defined]
        co("main")
    docs("before-picks")
    c.git("cherry-pick", lab.picked["pick-bob-cmt"])  # type: ignore[attr-defined]
    c.git("cherry-pick", lab.picked["pick-bob-act"])  # type: ignore[attr-defined]
    co("bob/rebase-bob-act")
    c.git("rebase", "-q", "main")
    co("main")
    c.git("merge", "-q", "--ff-only", "bob/rebase-bob-act")
    lab.rebased = lab.git("log", "-1", "--format=%an|%cn", "--", "plans/rebase-bob-act").strip()  # type: ignore[attr-defined]
    # conflicts at the file's end
    for v in ("mrg-hand-bob", "h-mrg-side-bob", "h-mrg-xours-bob"):
        co("main", f"agent/c-{v}")
        _append(_f(lab, v), "# agent side\n")
        c.commit("agent: side")
        co("main")
        _append(_f(lab, v), "# main side\n")
        c.commit("agent: main")
    co("main", who=BOB)
    c.git("merge", "-q", "--no-ff", "-m", "merge", "agent/c-mrg-hand-bob", who=BOB, check=False)
    text = _f(lab, "mrg-hand-bob").read_text()
    lab.conflicted = "<<<<<<<" in text  # type: ignore[attr-defined]
    _f(lab, "mrg-hand-bob").write_text(text[: text.index("<<<<<<<")] + "# bob: merged\n")
    c.commit("merge agent/c-mrg-hand-bob", who=BOB)
    c.git("merge", "-q", "--no-ff", "-m", "merge", "agent/c-h-mrg-side-bob", who=BOB, check=False)
    c.git("checkout", "--theirs", "--", "plans/h-mrg-side-bob/PLAN.yml", who=BOB)
    c.commit("merge agent/c-h-mrg-side-bob", who=BOB)
    c.git("merge", "-q", "--no-ff", "-X", "ours", "-m", "merge", "agent/c-h-mrg-xours-bob", who=BOB)
    # Bob reverts the agent's comment
    _append(_f(lab, "rev-bob-cmt"), "# agent: note\n")
    cmt = c.commit("agent: note")
    c.git("revert", "--no-edit", cmt, who=BOB)
    c.run()  # P1
    # gap 2: the agent lifts
    for v in LIFT:
        if v != "own-appr-lift-now":
            _lift(lab, v)
    c.commit("agent: extra")
    lab.git("mv", "plans/own-appr-lift-mv", "plans/own-appr-lift-mv-n")
    _lift(lab, "own-appr-lift-mv", "own-appr-lift-mv-n")
    c.commit("agent: move")
    lab.git("mv", "plans/own-appr-lift-ren/PLAN.yml", "plans/own-appr-lift-ren/PLAN.yaml")
    _lift(lab, "own-appr-lift-ren", name="PLAN.yaml")
    c.commit("agent: rename")
    copies = ("own-appr-cp-lift", "note-cp-lift", "own-cptouch-lift", "note-cptouch-lift")
    for v in copies:
        src = _f(lab, v).read_bytes()
        dst = _f(lab, f"{v}-c")
        dst.parent.mkdir()
        dst.write_bytes(src)
        if v.startswith("note-"):
            (dst.parent / "NOTES.md").write_bytes((_f(lab, v).parent / "NOTES.md").read_bytes())
        if "cptouch" in v:
            _append(_f(lab, v), "# agent: copied\n")
    c.commit("agent: copies")  # byte for byte (exact copies: authors by hash)
    lab.paired = lab.git("show", "-M", "-C", "--name-status", "--format=", "HEAD")  # type: ignore[attr-defined]
    for v in copies:
        _lift(lab, v, f"{v}-c")
    c.commit("agent: extra in the copies")
    for v in ("pick-bob-act", "rebase-bob-act"):
        p = _f(lab, v)
        text = p.read_text()
        line = f'# params: {{tag: "{v}", extra: "{v}-bob"}}\n'
        text = text.replace(line, "").replace(f'params: {{tag: "{v}"}}', line[2:].strip())
        p.write_text(text)
    c.commit("agent: uncomment")
    c.run()  # P2
    # gap 3: approvals, a plain status change
    for v in ALL:
        folder, name = final(v)
        who = HONEST.get(v, BOB)
        p = _f(lab, folder, name)
        if v == "h-flow-status":
            _sub(p, "status: pending_approval}", "status: approved}")
        elif v in ("h-crlf-status", "h-status-cmt"):
            _sub(p, "status: pending_approval", "status: approved")
        else:
            lab.set_status(folder, "approved", filename=name)
        c.commit(f"approve {folder}", who=who)
    c.run()  # P3
    lab.first = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
    c.run()  # P4
    lab.final = {v: lab.codes(final(v)[0]) for v in ALL}  # type: ignore[attr-defined]
    lab.params = {  # type: ignore[attr-defined]
        v: [c_["stdin"] for c_ in lab.calls(v)] for v in ALL
    }
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r73-ownedbytes", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = {f"plans/{v}", f"plans/{final(v)[0]}"}
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


def test_the_lab_played_as_described(lab: Lab) -> None:
    assert lab.conflicted  # type: ignore[attr-defined]
    assert lab.rebased == "Bob|Agent", lab.rebased  # type: ignore[attr-defined]
    for v in ("own-cptouch-lift", "note-cptouch-lift"):  # git pairs these copies
        assert f"plans/{v}/PLAN.yml\tplans/{v}-c/PLAN.yml" in lab.paired, lab.paired  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(BOBS, BOBS, BROKEN))
def test_bobs_bytes_in_the_version_keep_his_approval_from_running(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], (lab.params[vid], lab.final[vid][:2500])  # type: ignore[attr-defined]
    assert runs_of(lab.report, vid) == [], runs_of(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(list(HONEST), list(HONEST), BROKEN))
def test_an_approver_whose_bytes_are_none_runs_once(lab: Lab, vid: str) -> None:
    assert lab.first[vid] == 1, lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == HONEST[vid][1], runs


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(runs_of(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", ALL)
def test_the_controller_committed_one_start_at_most(lab: Lab, vid: str) -> None:
    starts = [
        s for q in {vid, final(vid)[0]} for s in lab.subjects(q) if s.startswith("plangate: start ")
    ]
    assert len(starts) == len(lab.calls(vid)) <= 1, (starts, lab.final[vid][:800])  # type: ignore[attr-defined]
