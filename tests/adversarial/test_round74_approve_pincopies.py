"""Round 74, approval side: round 73's copies reached through a pin (docs/approvals.md, "Who
changed the content": "whoever committed any file into a pinned plan's folder is a writer of
the parent too (round 23)"; a copy takes the writers of the plan copied and its owned-block
editors' hold). Does a copy that drops its source's writers (``test_round74_approve_copytrails``)
also let Bob approve a PARENT pinning it?

Lab (one, local mode, fake dates): a library plan ``plans/<v>`` per id (the agent's, tag
``<v>``). P0 freezes. Gap 1: Bob's ``NOTES.md`` in the library's folder (``note-*``) or his
``approval:`` block appended to its file (``hold-*``). P1; its frozen file kept as ``v1``.
The road (below), then the agent lifts ``extra: "<v>-bob"`` into the copy ``plans/<v>-c``
(a new version), a pass freezes it, the agent commits the parent ``plans/<v>-p`` pinning
``plans/<v>-c`` by the hash ``plangate hash`` gives, a pass freezes it, the approver named
approves the parent with a plain status change, two passes, ``plangate audit --json`` with
the config and on a fresh clone.

Roads: ``later`` (a byte-exact copy, the source untouched: round 73's shape), ``older`` (the
source edited to v2 and frozen, then ``v1``'s file written as the copy), ``deleted`` (the
source ``git rm -r``ed, a pass, then ``v1`` written as the copy), ``grown`` (the copy
committed without its ``frozen:`` block, then written over with ``v1``'s bytes in the next
commit).

Attacks (Bob approves the parent; must hold: ``E_SELF_APPROVAL``, ``rec`` never ran, no
audit calls a run valid): ``note-later``, ``note-older``, ``note-deleted``, ``note-grown``,
``hold-later``, ``hold-older``. Controls (must run once, the approver named): ``h-later``,
``h-older`` (the agent's library, nobody else's byte; Bob approves), ``ha-older``
(``note-older``'s shape, Alice approves).

Seen (round 74), fixed 2026-11-30 (r74copies): a plan a commit writes holding a content the
index held before takes the writers of every plan that held it and their owned-block hold,
kept by the content hash (``Lifecycle._key_versions``, ``_took_content``; see
``test_round74_approve_copytrails``), carried as a copy's: into the copy's folder too, so the
parent pinning the copy's later version has Bob among the pinned folder's writers (round 23):
``E_SELF_APPROVAL`` for all four ids, nothing ran, both audits agree. All asserted (the
markers are off). As found: 4 ids BROKE (strict xfails): ``note-older``, ``note-deleted``,
``note-grown``, ``hold-older``. Bob's plain approval of the parent ran the pinned copy's
``rec`` once with his ``extra: "<v>-bob"``, approver bob, both audits valid: the copy
(``test_round74_approve_copytrails.py`` classes 1-3) took none of his writing of the source
folder, so neither did the parent pinning it. Should (docs/approvals.md, "Who changed the
content": the pinned plan's folder writers are the parent's, round 23; a copy takes the
writers of the plan copied, round 73; "A byte-exact copy of a plan, edited in a LATER
commit, is followed"): ``E_SELF_APPROVAL``, nothing runs. Held: ``note-later``,
``hold-later`` (round 73's byte-exact copy of the plan as held: ``E_SELF_APPROVAL`` on the
parent). Controls ran once, the approver named; the fresh-clone audit agreed on every id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOB, Lab, cases, clone_audit
from oraclekit import hash_pin
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock

BOBS = ["note-later", "note-older", "note-deleted", "note-grown", "hold-later", "hold-older"]
HONEST = {"h-later": BOB, "h-older": BOB, "ha-older": ALICE}
ALL = [*BOBS, *HONEST]
#: nothing open since r74copies (2026-11-30)
BROKEN: dict[str, Any] = {}
PARENT = (
    'plan:\n  name: "parent {v}"\n  task: "agent task parent {v}"\n  status: pending_approval\n'
    "available_tools:\n  - name: rec\nactions:\n"
    '  - id: 1\n    why: "the library"\n    plan: {{path: plans/{v}-c, hash: "{pin}"}}\n'
)


def road(v: str) -> str:
    return v.split("-", 1)[1]


def _f(lab: Lab, folder: str) -> Path:
    return lab.repo / "plans" / folder / "PLAN.yml"


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
        lab.write(v, plan(v))
    c.commit("agent libraries")
    c.run()  # P0
    for v in ALL:
        if v.startswith(("note-", "ha-")):
            (lab.repo / "plans" / v / "NOTES.md").write_text(f'extra: "{v}-bob"\n')
        if v.startswith("hold-"):
            p = _f(lab, v)
            p.write_bytes(
                p.read_bytes() + f'approval:\n  status: approved\n  payload: "{v}-bob"\n'.encode()
            )
    c.commit("bob: notes and records", who=BOB)
    c.run()  # P1
    v1 = {v: _f(lab, v).read_bytes() for v in ALL}

    def of(r: str) -> list[str]:
        return [v for v in ALL if road(v) == r]

    for v in of("later"):
        _put(_f(lab, f"{v}-c"), v1[v])
    for v in of("older"):
        _sub(_f(lab, v), f'why: "agent: record {v}"', f'why: "agent: record {v} (v2)"')
    for v in of("deleted"):
        lab.git("rm", "-r", "-q", f"plans/{v}")
    for v in of("grown"):
        _put(_f(lab, f"{v}-c"), v1[v][: v1[v].index(b"frozen:\n")])
    c.commit("agent: copies, edits, removals")
    for v in of("grown"):
        _put(_f(lab, f"{v}-c"), v1[v])
    c.commit("agent: grown")
    c.run()  # P2
    for v in of("older") + of("deleted"):
        _put(_f(lab, f"{v}-c"), v1[v])
    c.commit("agent: copies of v1")
    c.run()  # P3
    for v in ALL:
        _sub(
            _f(lab, f"{v}-c"),
            f'params: {{tag: "{v}"}}',
            f'params: {{tag: "{v}", extra: "{v}-bob"}}',
        )
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
    return shared(tmp_path_factory, "r74-pincopies", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{v}-p" and e.get("approval_valid")
    ]


def test_every_parent_waited_for_its_approval(lab: Lab) -> None:
    for v in ALL:
        assert '"status": "pending_approval"' in lab.pending[v], (v, lab.pending[v][:1500])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(BOBS, BOBS, BROKEN))
def test_a_parent_pinning_a_copy_of_bobs_folder_keeps_his_approval_from_running(
    lab: Lab, vid: str
) -> None:
    assert lab.calls(vid) == [], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.final[vid], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert runs_of(lab.report, vid) == [], runs_of(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", list(HONEST))
def test_an_honest_parent_approved_by_a_non_writer_runs_once(lab: Lab, vid: str) -> None:
    assert lab.first[vid] == 1, lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == HONEST[vid][1], runs


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(runs_of(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
