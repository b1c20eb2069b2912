"""Round 74, approval side: round 73's copies (docs/approvals.md, "Who changed the content":
"a copy git pairs, or a byte-exact copy, holds them as its own folder's ``@held`` writers";
"*An exact copy is a copy*": a plan a commit writes byte for byte as the file of a plan the
index holds takes the writers of every plan holding those bytes and their owned-block
editors' hold; "A byte-exact copy of a plan, edited in a LATER commit, is followed"). Can Bob
(an approver) approve a copy of a plan he wrote, or of a plan whose folder he wrote into, or
whose owned block he edited, when the copy reaches its folder by a road git does not pair
and the index's map of held blobs may not know: an older version, a deleted plan, a copy of
a copy, a branch, a merge commit, bytes assembled over several commits, the copy's owned
``frozen:`` block stripped, its line ends changed, its name ``PLAN.yaml``?

Lab (one, local mode, fake dates): one source plan ``plans/<v>`` per id (tag = the id). Kind
``bob-*``: Bob commits the plan himself (its author). Kind ``note-*``: the agent's plan, Bob
commits ``NOTES.md`` into its folder after P0 (the note is never copied). Kind ``hold-*``:
the agent's plan, Bob appends an ``approval:`` block after P0 (P1 notes and overwrites it).
Controls ``h-*``: the agent's plan, nobody else's byte; ``ha-*``: a ``bob-*`` road approved
by Alice. P0 freezes, gap 1 (Bob), P1; the frozen file after P1 is kept as ``v1``. Then the
road (the agent's commits, a pass between steps), then the agent's LATER edit of the copy
(``params: {tag: "<v>", extra: "<v>-bob"}``: a new version), a pass freezes it, the approver
approves with a plain status change, two passes, ``plangate audit --json`` with the config
and on a fresh clone.

Roads (``<kind>-<road>``; the copy is ``plans/<v>-c/PLAN.yml`` unless said):

- ``later``: a byte-exact copy, the source untouched (round 73's shape: the baseline).
- ``older``: the agent edits the source (v2, P2 freezes it), then writes ``v1``'s bytes (the
  older frozen file, held at no path now) as the copy.
- ``deleted``: the agent ``git rm -r``s the source; after a pass it writes ``v1`` as the copy.
- ``readd``: the same, written back at the source's own path (the folder was emptied).
- ``ofcopy``: a byte-exact copy ``<v>-c1``; after a pass ``<v>-c1`` copied to ``<v>-c``; then
  the source and ``<v>-c1`` removed.
- ``branch``: the copy committed on the agent's branch, merged ``--no-ff`` by the agent.
- ``inmerge``: the copy written in the agent's merge commit of a docs branch (``--no-commit``).
- ``assembled``: ``drafts/<v>.yml`` holds the first half of ``v1``, a later commit the rest
  (byte for byte ``v1``), then ``git mv`` into ``plans/<v>-c/PLAN.yml``.
- ``unfrozen``: the copy with its ``frozen:`` block cut (the hashed content the same).
- ``crlf``: the copy with CRLF line ends (the hashed content the same).
- ``yaml``: the copy named ``PLAN.yaml``.
- ``brold``: the agent's branch forks at P1 and copies ``v1`` there (then byte for byte the
  held plan); main edits the source (v2); after P2 the branch is merged ``--no-ff``.
- ``pickold``: the same copy commit cherry-picked onto main after the source changed.
- ``grown``: the ``unfrozen`` copy, then (no pass between) written over with ``v1``'s bytes
  in the agent's next commit: byte for byte the held plan's file.

What must hold: for ``bob-*``, ``note-*``, ``hold-*`` Bob is a writer of the copy's later
version: ``E_SELF_APPROVAL``, ``rec`` never ran, no audit calls a run valid; for ``h-*``
(Bob approves the agent's copy) and ``ha-*`` (Alice approves the copy of Bob's plan) it ran
once, the approver named; the fresh-clone audit agrees with the controller; one start at most.

Seen (round 74), fixed 2026-11-30 (r74copies): the writers of every version the index has
ever held (its plan's changers, its folder's writers) and its owned-block editors' hold are
kept by that version's CONTENT hash (``version_key``; ``Lifecycle._key_versions`` after each
commit, for the plans it touched and the folders it wrote: a keyed write, no scan), and a plan
a commit writes holding a content held before, at any path and in any version since, takes
them (``Lifecycle._took_content``, where the commit's changers take the content's authors by
hash): the writers carried as a copy's, the hold as its folder's ``@held`` after the commit's
own change. Whichever road brought the content (an older version, a deleted plan, bytes
assembled or grown, a branch's merge or pick, the ``frozen:`` block cut, CRLF), Bob's lift in
the agent's later commit makes him a writer of the copy: ``E_SELF_APPROVAL`` for all 18 ids,
nothing ran, both audits agree. All asserted (the markers are off). As found: 18 ids BROKE
(strict xfails), all of kinds ``note`` and ``hold`` (Bob a
writer of the source through his ``NOTES.md`` in its folder, or his owned-block edit's hold);
every ``bob-*`` id held (his authorship follows the content by hash: ``E_SELF_APPROVAL``).
In each, Bob's plain approval of the copy's later version (his note's ``extra`` lifted into
``params`` by the agent) RAN ``rec`` once with ``extra: "<v>-bob"``, approver bob, both
audits valid; the same copy made byte for byte of the plan as held, source untouched
(``later``), a copy of a copy, on a branch merged ``--no-ff`` with the source unchanged, in a
merge commit, or as ``PLAN.yaml`` was ``E_SELF_APPROVAL``. Should (docs/approvals.md, "Who
changed the content": "Whoever commits any file into a plan's folder ... is a writer of the
plan that folder holds"; its owned-block editor "is a writer of every LATER version of that
plan ... and of every later version of a copy of it"; "*An exact copy is a copy*"; "A
byte-exact copy of a plan, edited in a LATER commit, is followed (round 73)"; threat-model:
the accepted ``cp-edit`` limit is a copy WITH an edit in ONE commit): ``E_SELF_APPROVAL``,
nothing ran.

Class 1, an older version (``note-older``, ``hold-older``): the agent edits the source (v2,
frozen at P2), then copies the v1 file it held before (``git show``), byte for byte: the
index's map of held blobs knows only the plans' current files. Class 2, a deleted plan
(``note-deleted``, ``hold-deleted``, ``note-readd``, ``hold-readd``): ``git rm -r`` of the
source, a pass, then ``v1`` written byte for byte at a new folder or back at its own path;
the maintainers may judge it a neighbour of ``via-deleted`` (threat-model: text "deleted
with the whole folder and written anew in a later commit"), but here nothing is edited
before the copy and its bytes are a version the index held. Class 3, assembled over several
commits (``note-assembled``, ``hold-assembled``, ``note-grown``, ``hold-grown``): the bytes
built in ``drafts/<v>.yml`` over two commits and ``git mv``ed in (git pairs the draft, R100,
asserted), or the copy first committed without its ``frozen:`` block and then written over
with the held bytes in the next commit: byte for byte a plan the index holds when it lands,
yet not taken as a copy ("A plan a commit writes (adds, or writes over another) byte for
byte as the file of a plan the index holds"). Class 4, an old version through a branch
(``note-brold``, ``hold-brold``, ``note-pickold``, ``hold-pickold``): the copy made on the
agent's branch forked while ``v1`` was held (byte for byte the held plan on that branch),
merged ``--no-ff`` or cherry-picked after main changed the source. Class 5, the held
content with other bytes (``note-unfrozen``, ``hold-unfrozen``, ``note-crlf``,
``hold-crlf``): the copy without the ``frozen:`` block or with CRLF line ends; its hashed
content is the held plan's (the content hash the index keeps authors by), no content byte
edited; the maintainers may judge it the ``cp-edit`` limit's neighbour (an edit, of no
hashed byte, in the copy's commit).

Held: every ``bob-*`` road (14: his content's authorship by hash survives every road);
``note``/``hold`` by ``later``, ``ofcopy``, ``branch``, ``inmerge``, ``yaml``. Controls: the
agent's own plan copied by every road and approved by Bob, and Bob's plan copied (``later``,
``older``, ``deleted``, ``assembled``, ``unfrozen``, ``brold``) and approved by Alice ran once,
the approver named. The fresh-clone audit agreed with the controller on every id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOB, Lab, cases, clone_audit
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock, _f

ROADS = [
    "later", "older", "deleted", "readd", "ofcopy", "branch", "inmerge", "assembled",
    "unfrozen", "crlf", "yaml", "brold", "pickold", "grown",
]  # fmt: skip
BOBS = [f"{k}-{r}" for k in ("bob", "note", "hold") for r in ROADS]
HONEST = {f"h-{r}": BOB for r in ROADS}
HONEST.update(
    {f"ha-{r}": ALICE for r in ("later", "older", "deleted", "assembled", "unfrozen", "brold")}
)
ALL = [*BOBS, *HONEST]


#: nothing open since r74copies (2026-11-30)
BROKEN: dict[str, Any] = {}


def road(v: str) -> str:
    return v.split("-", 1)[1]


def final(v: str) -> tuple[str, str]:
    """Where the approver approves: (folder under plans/, file name)."""
    r = road(v)
    if r == "readd":
        return v, "PLAN.yml"
    return f"{v}-c", "PLAN.yaml" if r == "yaml" else "PLAN.yml"


def _put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _sub(path: Path, old: str, new: str) -> None:
    data = path.read_bytes()
    assert old.encode() in data, (path, old, data[:400])
    path.write_bytes(data.replace(old.encode(), new.encode(), 1))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    for v in ALL:
        if not v.startswith(("bob-", "ha-")):
            lab.write(v, plan(v))
    c.commit("agent plans")
    for v in ALL:
        if v.startswith(("bob-", "ha-")):
            lab.write(v, plan(v))
    c.commit("bob plans", who=BOB)
    c.run()  # P0
    for v in BOBS:
        if v.startswith("note-"):
            (lab.repo / "plans" / v / "NOTES.md").write_text(f'extra: "{v}-bob"\n')
        if v.startswith("hold-"):
            p = _f(lab, v)
            p.write_bytes(
                p.read_bytes() + f'approval:\n  status: approved\n  payload: "{v}-bob"\n'.encode()
            )
    c.commit("bob: notes and records", who=BOB)
    c.run()  # P1
    v1 = {v: _f(lab, v).read_bytes() for v in ALL}
    lab.v1_frozen = {v: b"\nfrozen:\n" in v1[v] for v in ALL}  # type: ignore[attr-defined]
    lab.v1_clean = {v: b"approval:" not in v1[v] for v in ALL}  # type: ignore[attr-defined]

    def of(r: str) -> list[str]:
        return [v for v in ALL if road(v) == r]

    # gap 2: the first step of each road (the branches fork at P1, v1 held)
    for r in ("brold", "pickold"):
        c.git("checkout", "-q", "-b", f"agent/{r}")
        for v in of(r):
            _put(_f(lab, f"{v}-c"), v1[v])
        lab.branch_copy = getattr(lab, "branch_copy", {})  # type: ignore[attr-defined]
        lab.branch_copy[r] = c.commit(f"agent: copies ({r})")  # type: ignore[attr-defined]
        c.git("checkout", "-q", "main")
    for v in of("later"):
        _put(_f(lab, f"{v}-c"), v1[v])
    for v in of("older") + of("brold") + of("pickold"):
        _sub(_f(lab, v), f'why: "agent: record {v}"', f'why: "agent: record {v} (v2)"')
    for v in of("deleted") + of("readd"):
        lab.git("rm", "-r", "-q", f"plans/{v}")
    for v in of("ofcopy"):
        _put(_f(lab, f"{v}-c1"), v1[v])
    for v in of("assembled"):
        half = len(v1[v]) // 2
        _put(lab.repo / "drafts" / f"{v}.yml", v1[v][:half])
    for v in of("unfrozen") + of("grown"):
        text = v1[v]
        _put(_f(lab, f"{v}-c"), text[: text.index(b"frozen:\n")])
    for v in of("crlf"):
        _put(_f(lab, f"{v}-c"), v1[v].replace(b"\n", b"\r\n"))
    for v in of("yaml"):
        _put(_f(lab, f"{v}-c", "PLAN.yaml"), v1[v])
    c.commit("agent: copies, edits, removals")
    c.git("checkout", "-q", "-b", "agent/cp")
    for v in of("branch"):
        _put(_f(lab, f"{v}-c"), v1[v])
    c.commit("agent: copies on a branch")
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "merge agent/cp", "agent/cp")
    c.git("checkout", "-q", "-b", "agent/docs")
    (lab.repo / "docs").mkdir(exist_ok=True)
    (lab.repo / "docs" / "copies.md").write_text("copies\n")
    c.commit("agent: docs")
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "--no-commit", "agent/docs")
    for v in of("inmerge"):
        _put(_f(lab, f"{v}-c"), v1[v])
    c.commit("merge agent/docs")
    for v in of("grown"):
        _put(_f(lab, f"{v}-c"), v1[v])
    c.commit("agent: the copies grown to the held bytes")
    c.run()  # P2
    # gap 3: the second step
    for v in of("older") + of("deleted"):
        _put(_f(lab, f"{v}-c"), v1[v])
    for v in of("readd"):
        _put(_f(lab, v), v1[v])
    for v in of("ofcopy"):
        _put(_f(lab, f"{v}-c"), _f(lab, f"{v}-c1").read_bytes())
    for v in of("assembled"):
        _put(lab.repo / "drafts" / f"{v}.yml", v1[v])
    c.commit("agent: copies again")
    for v in of("ofcopy"):
        lab.git("rm", "-r", "-q", f"plans/{v}", f"plans/{v}-c1")
    for v in of("assembled"):
        _f(lab, f"{v}-c").parent.mkdir(parents=True)
        lab.git("mv", f"drafts/{v}.yml", f"plans/{v}-c/PLAN.yml")
    c.commit("agent: tidy")
    c.git("merge", "-q", "--no-ff", "-m", "merge agent/brold", "agent/brold")
    c.git("cherry-pick", lab.branch_copy["pickold"])  # type: ignore[attr-defined]
    lab.paired = lab.git("show", "-M", "-C", "--name-status", "--format=", "HEAD~2")  # type: ignore[attr-defined]
    c.run()  # P3
    # gap 4: the agent's later edit of the copy (a new version)
    for v in ALL:
        folder, name = final(v)
        _sub(
            _f(lab, folder, name),
            f'params: {{tag: "{v}"}}',
            f'params: {{tag: "{v}", extra: "{v}-bob"}}',
        )
    c.commit("agent: extra in the copies")
    c.run()  # P4
    lab.pending = {v: lab.codes(final(v)[0]) for v in ALL}  # type: ignore[attr-defined]
    # gap 5: approvals, a plain status change
    for v in ALL:
        folder, name = final(v)
        p = _f(lab, folder, name)
        if road(v) == "crlf":
            _sub(p, "status: pending_approval", "status: approved")
        else:
            lab.set_status(folder, "approved", filename=name)
        c.commit(f"approve {folder}", who=HONEST.get(v, BOB))
    c.run()  # P5
    lab.first = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
    c.run()  # P6
    lab.final = {v: lab.codes(final(v)[0]) for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r74-copytrails", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = {f"plans/{v}", f"plans/{final(v)[0]}"}
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


def test_the_lab_played_as_described(lab: Lab) -> None:
    assert all(lab.v1_frozen.values()), lab.v1_frozen  # type: ignore[attr-defined]
    assert all(lab.v1_clean[v] for v in ALL if not v.startswith("hold-")), lab.v1_clean  # type: ignore[attr-defined]
    for v in ("bob-assembled", "h-assembled"):  # git pairs the draft moved in, nothing else
        assert f"drafts/{v}.yml\tplans/{v}-c/PLAN.yml" in lab.paired, lab.paired  # type: ignore[attr-defined]
    for v in ALL:  # every copy waited for its approval, frozen as the new version
        assert "pending_approval" in lab.pending[v], (v, lab.pending[v][:1500])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(BOBS, BOBS, BROKEN))
def test_a_copy_of_bobs_plan_keeps_his_approval_from_running(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.final[vid], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert runs_of(lab.report, vid) == [], runs_of(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(list(HONEST), list(HONEST), BROKEN))
def test_an_honest_copy_approved_by_a_non_writer_runs_once(lab: Lab, vid: str) -> None:
    assert lab.first[vid] == 1, lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1
    assert f'"extra": "{vid}-bob"' in lab.calls(vid)[0]["stdin"], lab.calls(vid)
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
