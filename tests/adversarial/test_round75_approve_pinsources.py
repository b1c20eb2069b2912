"""Round 75, approval side: the converted copies of ``test_round75_approve_respellings``
reached through a PIN (docs/approvals.md, "Who changed the content": "whoever committed any
file into a pinned plan's folder is a writer of the parent too (round 23)"; a copy takes the
writers of the plan copied and its owned-block editors' hold, by content, "in any bytes, by
any route"; docs/formats.md, "Who wrote the plan": "the converted plan's content then keeps
those writers too, so a copy of it, or a plan pinning it, counts them as well"). Does a
converted source that drops its content's writers also let Bob approve a PARENT pinning it?

Lab (one, local mode, fake dates): a library plan ``plans/<v>`` per id (tag ``<v>``; the
agent's, Bob's for ``bob-*``/``ha-*``). P0 freezes. Gap 1: Bob's ``NOTES.md`` in its folder
(``note-*``), his ``approval:`` block appended (``hold-*``), or his ``metadata:`` block
appended (``mt-*``, unhashed). P1 (v1). Gap 2: ``jsonold`` edits the library (v2),
``jsondel`` removes it; P2. Gap 3: the agent's source of v1's content at ``plans/<v>-c``
(``PLAN.json``; ``toon``: ``PLAN.toon``; ``order``: a ``PLAN.yml`` with its keys reordered;
``exact``: v1's file byte for byte, the library untouched); P3 converts and freezes it.
Gap 4: the agent lifts ``extra: "<v>-bob"`` into the copy's ``params``; P4. Gap 5: the
agent's parent ``plans/<v>-p`` pinning ``plans/<v>-c`` by ``hash_pin``; P5. Gap 6: the
approver approves the parent (a plain status change); P6, P7; audits with the config and
on a fresh clone.

Attacks (Bob approves the parent; must hold: ``E_SELF_APPROVAL``, ``rec`` never ran, no
audit calls a run valid): ``{bob,note,hold,mt}-{json,toon,jsonold,jsondel,order,exact}``.
Controls (must run once with the lifted bytes, the approver named): ``h-json``,
``h-jsonold`` (the agent's library, Bob approves), ``ha-json``, ``ha-jsondel`` (Bob's
library, Alice approves).

Seen (round 75), fixed 2026-11-30 (r75convert): the controller's ``convert`` commit now
carries the converted plan's writers (the source's committers, the content's authors by
hash, the writers of every version that held the content: ``Lifecycle._converted``,
``_took_content``) into the plan's FOLDER as a copy's are carried, and its holders' hold into
its ``@held``, so a parent pinning it counts them (``pinned_writers`` reads the pinned
folder): ``E_SELF_APPROVAL`` for all 16 ids, ``bob-*`` included, nothing ran, both audits
agree. All asserted (the markers are off). As found: 16 ids BROKE (strict xfails), one class:
**a parent pinning a converted copy of a held content takes none of the content's writers,
not even its author's**.
``{bob,note,hold,mt}-{json,toon,jsonold,jsondel}``: the agent's ``PLAN.json``/``PLAN.toon``
of v1's content (the library untouched, edited to v2, or deleted) converts to a plan whose
hash is v1's (asserted), the agent lifts ``extra: "<v>-bob"`` into it and commits a parent
pinning it; Bob's plain approval of the PARENT ran the pinned copy's ``rec`` once with his
bytes, approver bob, both audits valid. Worse than the copy approved directly
(``test_round75_approve_respellings``), where ``bob-*`` held: here Bob, the AUTHOR of the
library's content (by hash), approves a parent running it. The same content committed by
the agent as a ``PLAN.yml`` (``order``: keys reordered; ``exact``: byte for byte) was
``E_SELF_APPROVAL`` for every kind, ``bob`` included. Should (docs/formats.md, "Who wrote
the plan": "the converted plan's content then keeps those writers too, so a copy of it, or
a plan pinning it, counts them as well"; docs/approvals.md, "Who changed the content": a
pinned plan's writers are the parent's, round 23; the copy followed by its content "in any
bytes, by any route"): ``E_SELF_APPROVAL``, nothing runs.

Held: ``order`` and ``exact`` for all four kinds. Controls (the agent's converted library
approved through the parent by Bob; Bob's by Alice) ran once with the lifted bytes, the
approver named. The fresh-clone audit agreed with the controller on every id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOB, Lab, cases, clone_audit
from oraclekit import hash_pin
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock, _f
from test_round75_approve_respellings import _hash, _lift, spelled

ROADS = ["json", "toon", "jsonold", "jsondel", "order", "exact"]
BOBS = [f"{k}-{r}" for k in ("bob", "note", "hold", "mt") for r in ROADS]
HONEST = {"h-json": BOB, "h-jsonold": BOB, "ha-json": ALICE, "ha-jsondel": ALICE}
ALL = [*BOBS, *HONEST]
PARENT = (
    'plan:\n  name: "parent {v}"\n  task: "agent task parent {v}"\n  status: pending_approval\n'
    "available_tools:\n  - name: rec\nactions:\n"
    '  - id: 1\n    why: "the library"\n    plan: {{path: plans/{v}-c, hash: "{pin}"}}\n'
)

#: nothing open since r75convert (2026-11-30)
BROKEN: dict[str, Any] = {}


def road(v: str) -> str:
    return v.split("-", 1)[1]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    for v in ALL:
        if not v.startswith(("bob-", "ha-")):
            lab.write(v, plan(v))
    c.commit("agent libraries")
    for v in ALL:
        if v.startswith(("bob-", "ha-")):
            lab.write(v, plan(v))
    c.commit("bob libraries", who=BOB)
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
    lab.v1_file = {v: _f(lab, v).read_bytes() for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        if road(v) == "jsonold":
            p = _f(lab, v)
            p.write_text(p.read_text().replace(f"agent: record {v}", f"agent: record {v} (v2)"))
        if road(v) == "jsondel":
            lab.git("rm", "-r", "-q", f"plans/{v}")
    c.commit("agent: v2 and removals")
    c.run()  # P2
    for v in ALL:
        if road(v) == "exact":
            lab.write(f"{v}-c", lab.v1_file[v])  # type: ignore[attr-defined]
            continue
        name, text = spelled(v)
        lab.write(f"{v}-c", text, name)
    c.commit("agent: sources")
    c.run()  # P3
    lab.copied = {v: _hash(lab, f"{v}-c") for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        _lift(_f(lab, f"{v}-c"), v)
    c.commit("agent: extra in the copies")
    c.run()  # P4
    for v in ALL:
        lab.write(f"{v}-p", PARENT.format(v=v, pin=hash_pin(lab, f"{v}-c")))
    c.commit("agent: parents")
    c.run()  # P5
    lab.pending = {v: lab.codes(f"{v}-p") for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        lab.set_status(f"{v}-p", "approved")
        c.commit(f"approve plans/{v}-p", who=HONEST.get(v, BOB))
    c.run()  # P6
    lab.first = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
    c.run()  # P7
    lab.final = {v: lab.codes(f"{v}-p") for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r75-pinsources", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{v}-p" and e.get("approval_valid")
    ]


def test_every_copy_is_the_held_content_and_every_parent_waited(lab: Lab) -> None:
    for v in ALL:
        assert lab.copied[v] == lab.v1[v] and lab.v1[v].startswith("sha256:"), v  # type: ignore[attr-defined]
        assert '"status": "pending_approval"' in lab.pending[v], (v, lab.pending[v][:1500])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(BOBS, BOBS, BROKEN))
def test_a_parent_pinning_a_converted_copy_keeps_bobs_approval_from_running(
    lab: Lab, vid: str
) -> None:
    assert lab.calls(vid) == [], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.final[vid], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert runs_of(lab.report, vid) == [], runs_of(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", list(HONEST))
def test_an_honest_parent_approved_by_a_non_writer_runs_once(lab: Lab, vid: str) -> None:
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
