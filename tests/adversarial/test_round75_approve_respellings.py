"""Round 75, approval side: round 74's writers keyed by CONTENT (docs/approvals.md, "Who
changed the content": "The copy is followed by its CONTENT, whatever route brought it";
the writers of every version the index holds are kept "by that version's content hash (the
hash the plan freezes to, not its file's blob)", and "A plan a commit writes (adds, or
changes in place; not the controller) holding a content one of them held, at any path, in
any version since, however late, takes those writers"). Round 74 tried the held content in
other BYTES of a plan file (``frozen:`` cut, CRLF). Here the same content reaches a new
folder by another SPELLING: a source the controller converts (``PLAN.json``, a fenced
``PLAN.md``, ``PLAN.toon``: the plan file is then written by the controller's ``convert``
commit, the one writer the rule leaves out), or a ``PLAN.yml`` whose keys are reordered,
commented, given a ``metadata:`` block (unhashed), written in flow style or with quoted
keys. Can Bob approve such a respelling of a plan he wrote, or whose folder he wrote into,
or whose owned block (or unhashed ``metadata``) he edited?

Lab (one, local mode, fake dates): one source plan ``plans/<v>`` per id. Kind ``bob-*``:
Bob commits the plan himself. Kind ``note-*``: the agent's plan, Bob commits ``NOTES.md``
into its folder after P0. Kind ``hold-*``: the agent's plan, Bob appends an ``approval:``
block after P0 (P1 notes and overwrites it). Kind ``mt-*``: the agent's plan, Bob appends a
``metadata:`` block after P0 (unhashed: the content hash unchanged, he is a folder writer).
Controls ``h-*``: the agent's plan, nobody else's byte, approved by Bob; ``ha-*``: a
``bob-*`` road approved by Alice. P0 freezes, gap 1 (Bob), P1 (``v1``, its hash kept), gap 2
(``jsonold``: the source edited, a new version; ``jsondel``: the source ``git rm -r``ed),
P2, gap 3: the respelled copy ``plans/<v>-c`` (the agent's commit; ``jsonbr`` on a branch
merged ``--no-ff``), P3 (converts and freezes; the copy's hash asserted equal to ``v1``'s),
gap 4: the agent's LATER edit of the copy (``params: {tag: "<v>", extra: "<v>-bob"}``),
P4 freezes it, gap 5: the approver approves (the status value alone), P5, P6, audits with
the config and on a fresh clone.

Roads (``<kind>-<road>``):

- ``json``: ``PLAN.json`` (the plan's own shape, ``pte``) holding v1's content, source
  untouched; the controller converts it.
- ``md``: a ``PLAN.md`` with one fenced ``json`` block of the same.
- ``toon``: a ``PLAN.toon`` (``toon_format.encode``) of the same.
- ``jsonmv``: the source ``git rm -r``ed and the ``PLAN.json`` added in ONE commit.
- ``jsonold``: the ``PLAN.json`` of v1 after the source changed (v2 held).
- ``jsondel``: the ``PLAN.json`` of v1 after the source was deleted (a pass between).
- ``jsonbr``: the ``PLAN.json`` committed on the agent's branch, merged ``--no-ff``.
- ``order``: a ``PLAN.yml`` with its keys in reverse order (``actions`` first).
- ``comment``: a ``PLAN.yml`` with a comment on every line.
- ``meta``: a ``PLAN.yml`` with a ``metadata:`` block (unhashed) of the agent's.
- ``flow``: a ``PLAN.yml`` whose top values are flow mappings and lists.
- ``quoted``: a ``PLAN.yml`` whose every key is double-quoted.

What must hold: for ``bob-*``, ``note-*``, ``hold-*``, ``mt-*`` Bob is a writer of the
copy's later version: ``E_SELF_APPROVAL``, ``rec`` never ran, no audit calls a run valid;
for ``h-*`` and ``ha-*`` it ran once with the lifted bytes, the approver named; the fresh
clone's audit agrees with the controller; one start at most.

Seen (round 75), fixed 2026-11-30 (r75convert): the plan the controller's ``convert`` commit
writes takes what its content would have taken had the source's writer committed that
PLAN.yml herself (``Lifecycle._converted``): the source's committers and the content's
authors by hash, as changers and as writers of its folder and hash, and the writers and
owned-block hold of every version that held the content (``Lifecycle._took_content``, the
``version:<hash>`` look-up round 74 made for the writer's commits). So Bob's lift in the
agent's later commit makes him a writer of the converted copy: ``E_SELF_APPROVAL`` for all
18 ids, nothing ran, both audits agree. All asserted (the markers are off). As found: 18 ids
BROKE (strict xfails), one class: **a converted source of a held content drops the content's
folder writers and owned-block hold**. ``{note,hold,mt}-{json,
md,toon,jsonold,jsondel,jsonbr}``: the agent commits a ``PLAN.json`` (or fenced ``PLAN.md``,
or ``PLAN.toon``) whose converted plan hashes to the version v1 the index held (asserted:
the copy's ``plangate hash`` equals v1's), with the source untouched, after the source
changed (v2), after it was deleted, or on a branch merged ``--no-ff``; the controller's
``plangate: convert`` commit writes the ``PLAN.yml``; the agent then lifts Bob's
``extra: "<v>-bob"`` into the copy's ``params`` and Bob's plain approval RAN ``rec`` once
with his bytes, approver bob, both audits valid. The same content spelled otherwise in a
``PLAN.yml`` the agent commits (keys reordered, comments, an unhashed ``metadata:``, flow
style, quoted keys) was ``E_SELF_APPROVAL`` for every kind, and so was every ``bob-*`` id
(his authorship follows the content by hash through the conversion too) and the source
removed and the ``PLAN.json`` added in ONE commit (``jsonmv``: a move by conversion, the
folder writers carried). Should (docs/approvals.md, "Who changed the content": "The copy is
followed by its CONTENT, whatever route brought it ... in any bytes, by any route, at any
time"; docs/formats.md, "Who wrote the plan": "the writers follow the bytes wherever they
go ... the converted plan's content then keeps those writers too"): ``E_SELF_APPROVAL``,
nothing runs. The rule's "(adds, or changes in place; not the controller)" leaves out the
one commit that writes a converted plan file: the controller's ``convert``; the agent's
commit wrote only a source, no plan file, so no look-up by the content hash is made.

Held: every ``bob-*`` road (12); ``note``/``hold``/``mt`` by ``jsonmv``, ``order``,
``comment``, ``meta``, ``flow``, ``quoted`` (``E_SELF_APPROVAL``). Controls: the agent's own
plan respelled by every road and approved by Bob, and Bob's plan respelled (``json``,
``toon``, ``jsonold``, ``order``, ``meta``) and approved by Alice, ran once, the approver
named. The fresh-clone audit agreed with the controller on every id; one start at most.
Tried and refused by the reader itself (not a variant): a YAML anchor/alias respelling
(``E_YAML_PARSE: anchor &n``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import toon_format
from advkit import ALICE, BOB, Lab, cases, clone_audit
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock, _f

ROADS = [
    "json", "md", "toon", "jsonmv", "jsonold", "jsondel", "jsonbr",
    "order", "comment", "meta", "flow", "quoted",
]  # fmt: skip
KINDS = ("bob", "note", "hold", "mt")
BOBS = [f"{k}-{r}" for k in KINDS for r in ROADS]
HONEST = {f"h-{r}": BOB for r in ROADS}
HONEST.update({f"ha-{r}": ALICE for r in ("json", "toon", "jsonold", "order", "meta")})
ALL = [*BOBS, *HONEST]
SOURCES = {"json": "PLAN.json", "md": "PLAN.md", "toon": "PLAN.toon"}

#: nothing open since r75convert (2026-11-30)
BROKEN: dict[str, Any] = {}


def road(v: str) -> str:
    return v.split("-", 1)[1]


def data(v: str) -> dict[str, Any]:
    """The content of ``plan(v)`` as data (the same hash)."""
    return {
        "plan": {"name": v, "task": f"agent task {v}", "status": "pending_approval"},
        "available_tools": [{"name": "rec"}],
        "actions": [{"id": 1, "tool": "rec", "why": f"agent: record {v}", "params": {"tag": v}}],
    }


def spelled(v: str) -> tuple[str, str]:
    """The copy of ``v``'s content by its road: (file name, text)."""
    r, d = road(v), data(v)
    if r in ("json", "jsonmv", "jsonold", "jsondel", "jsonbr"):
        return "PLAN.json", json.dumps(d, indent=1) + "\n"
    if r == "md":
        return "PLAN.md", "```json\n" + json.dumps(d) + "\n```\n"
    if r == "toon":
        return "PLAN.toon", toon_format.encode(d) + "\n"
    if r == "order":
        return "PLAN.yml", (
            f'actions:\n  - params: {{tag: "{v}"}}\n    why: "agent: record {v}"\n'
            "    tool: rec\n    id: 1\navailable_tools:\n  - name: rec\n"
            f'plan:\n  status: pending_approval\n  task: "agent task {v}"\n  name: "{v}"\n'
        )
    if r == "comment":
        return "PLAN.yml", "".join(
            f"{line}  # {v} line {i}\n" if line.strip() else "\n"
            for i, line in enumerate(plan(v).splitlines())
        )
    if r == "meta":
        return "PLAN.yml", plan(v) + f'metadata:\n  origin: "agent {v}"\n'
    if r == "flow":
        return "PLAN.yml", (
            f'plan: {{name: "{v}", task: "agent task {v}", status: pending_approval}}\n'
            "available_tools: [{name: rec}]\n"
            f'actions: [{{id: 1, tool: rec, why: "agent: record {v}", params: {{tag: "{v}"}}}}]\n'
        )
    assert r == "quoted", v
    return "PLAN.yml", (
        f'"plan":\n  "name": "{v}"\n  "task": "agent task {v}"\n  "status": pending_approval\n'
        '"available_tools":\n  - "name": rec\n"actions":\n  - "id": 1\n    "tool": rec\n'
        f'    "why": "agent: record {v}"\n    "params": {{"tag": "{v}"}}\n'
    )


LIFTS = [
    ('params: {{tag: "{v}"}}', 'params: {{tag: "{v}", extra: "{v}-bob"}}'),
    ('"params": {{"tag": "{v}"}}', '"params": {{"tag": "{v}", "extra": "{v}-bob"}}'),
]


def _lift(path: Path, v: str) -> None:
    text = path.read_text()
    for old, new in LIFTS:
        old, new = old.format(v=v), new.format(v=v)
        if old in text:
            path.write_text(text.replace(old, new, 1))
            return
    raise AssertionError((path, text[:600]))


def _approve(path: Path) -> None:
    text = path.read_text()
    new, n = re.subn(r"pending_approval", "approved", text, count=1)
    assert n == 1, (path, text[:600])
    path.write_text(new)


def _hash(lab: Lab, folder: str) -> str:
    done = lab.cli("hash", str(_f(lab, folder)))
    return done.stdout.strip() or done.stderr.strip()


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
        p = _f(lab, v)
        if v.startswith("note-"):
            (lab.repo / "plans" / v / "NOTES.md").write_text(f'extra: "{v}-bob"\n')
        if v.startswith("hold-"):
            p.write_text(p.read_text() + f'approval:\n  status: approved\n  payload: "{v}-bob"\n')
        if v.startswith("mt-"):
            p.write_text(p.read_text() + f'metadata:\n  extra: "{v}-bob"\n')
    c.commit("bob: notes, records, metadata", who=BOB)
    c.run()  # P1
    lab.v1 = {v: _hash(lab, v) for v in ALL}  # type: ignore[attr-defined]

    def of(r: str) -> list[str]:
        return [v for v in ALL if road(v) == r]

    for v in of("jsonold"):
        p = _f(lab, v)
        p.write_text(p.read_text().replace(f"agent: record {v}", f"agent: record {v} (v2)", 1))
    for v in of("jsondel"):
        lab.git("rm", "-r", "-q", f"plans/{v}")
    c.commit("agent: v2 and removals")
    c.run()  # P2
    for v in ALL:
        if road(v) == "jsonbr":
            continue
        if road(v) == "jsonmv":
            lab.git("rm", "-r", "-q", f"plans/{v}")
        name, text = spelled(v)
        lab.write(f"{v}-c", text, name)
    c.commit("agent: respelled copies")
    c.git("checkout", "-q", "-b", "agent/br")
    for v in of("jsonbr"):
        name, text = spelled(v)
        lab.write(f"{v}-c", text, name)
    c.commit("agent: copies on a branch")
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "merge agent/br", "agent/br")
    c.run()  # P3
    lab.copied = {v: _hash(lab, f"{v}-c") for v in ALL}  # type: ignore[attr-defined]
    lab.tree = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans").splitlines()  # type: ignore[attr-defined]
    for v in ALL:
        _lift(_f(lab, f"{v}-c"), v)
    c.commit("agent: extra in the copies")
    c.run()  # P4
    lab.pending = {v: lab.codes(f"{v}-c") for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        _approve(_f(lab, f"{v}-c"))
        c.commit(f"approve {v}-c", who=HONEST.get(v, BOB))
    c.run()  # P5
    lab.first = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
    c.run()  # P6
    lab.final = {v: lab.codes(f"{v}-c") for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r75-respellings", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = {f"plans/{v}", f"plans/{v}-c"}
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


def test_the_lab_played_as_described(lab: Lab) -> None:
    for v in ALL:  # every respelling is the held content, converted where a source
        assert lab.copied[v] == lab.v1[v] and lab.v1[v].startswith("sha256:"), (  # type: ignore[attr-defined]
            v,
            lab.copied[v],
            lab.v1[v],  # type: ignore[attr-defined]
        )
        assert f"plans/{v}-c/PLAN.yml" in lab.tree, v  # type: ignore[attr-defined]
        assert "pending_approval" in lab.pending[v], (v, lab.pending[v][:1500])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(BOBS, BOBS, BROKEN))
def test_a_respelling_of_bobs_plan_keeps_his_approval_from_running(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.final[vid], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert runs_of(lab.report, vid) == [], runs_of(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(list(HONEST), list(HONEST), BROKEN))
def test_an_honest_respelling_approved_by_a_non_writer_runs_once(lab: Lab, vid: str) -> None:
    assert lab.first[vid] == 1, lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1
    assert f'"extra": "{vid}-bob"' in lab.calls(vid)[0]["stdin"], lab.calls(vid)
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == HONEST[vid][1], runs


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clone_agrees_and_one_start_at_most(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(runs_of(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
    subjects = [s for q in (vid, f"{vid}-c") for s in lab.subjects(q)]
    starts = [s for s in subjects if s.startswith("plangate: start ")]
    assert len(starts) == len(lab.calls(vid)) <= 1, (starts, lab.final[vid][:800])  # type: ignore[attr-defined]
