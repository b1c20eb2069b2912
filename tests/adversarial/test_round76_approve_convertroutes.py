"""Round 76, approval side: routes a converted source's writer might still be laundered by
after round 75's rule (docs/approvals.md, "A plan the controller writes by conversion":
the converted PLAN.yml "takes what its content would have taken had the source's writer
committed that PLAN.yml herself: the source's committers and the content's authors by hash,
as its changers and as writers of its folder and of its hash"; docs/threat-model.md: a
converted source's writer lost through ``Co-authored-by:``, a merged branch, a pin).

Lab (one, local mode, fake dates). Per id a plan ``plans/<v>`` whose content is ``data(v)``
(round 75's ``respellings``), written by a road below; the WRITER is Bob for ``bob-*`` and
``ha-*``, the agent for ``h-*``. Gap 1 (no pass between its commits):

- ``twostep``: the writer commits ``PLAN.json``; the agent then edits its ``why`` (v2);
- ``late``: the agent commits ``PLAN.json``; the writer (Bob) then edits its ``why``;
- ``coauth``: the agent commits ``PLAN.json`` with ``Co-authored-by:`` the writer (Bob; for
  ``h-*`` Carol, an allowed approver who does not approve here);
- ``brmerge``: the writer commits ``PLAN.json`` on a branch the AGENT merges ``--no-ff``;
- ``brmergeA``: the same branch merged ``--no-ff`` by ALICE (a non-writer);
- ``xfmt``: the writer commits ``PLAN.json``; converted at P1, then the agent replaces the
  PLAN.yml with ``PLAN.toon`` of the same content (P2), then with ``PLAN.md`` (P3): back
  and forth across formats, every hop a controller ``convert`` commit;
- ``back``: the writer commits a ``PLAN.yml`` (frozen at P1); the agent replaces it with a
  ``PLAN.json`` of the same content in ONE commit (P2 converts it);
- ``pin``: the writer's ``PLAN.json`` converted at P1; the agent's parent ``plans/<v>-p``
  pins it by its hash (P2): the approver approves the PARENT.

P1, P2, P3 (conversions and freezes). Gap 4: the approver (Bob for ``bob-*``/``h-*``, Alice
for ``ha-*``) changes the status value of ``plans/<v>`` (``pin``: ``plans/<v>-p``) to
``approved``; P4, P5; audits with the config and on a fresh clone.

What must hold: ``bob-*`` (Bob wrote the source, or some of it, and approves):
``E_SELF_APPROVAL``, ``rec`` never ran for ``<v>``, no audit calls a run valid. Controls
``h-*`` (the agent wrote it, Bob approves) and ``ha-*`` (Bob wrote it, Alice approves): run
once, the approver named; a defence that refuses every converted plan fails them. The fresh
clone's audit agrees with the controller on every id.

Seen (round 76): no break. Held: Bob's approval was ``E_SELF_APPROVAL`` and ``rec`` never
ran by every road: a source he added and the agent edited before any pass (``twostep``), the
agent's source he edited before any pass (``late``), the agent's commit naming him
``Co-authored-by:`` (``coauth``), his branch merged ``--no-ff`` by the agent (``brmerge``) or
by Alice (``brmergeA``), his converted plan carried across ``PLAN.toon`` and ``PLAN.md`` by
the agent (``xfmt``: three ``convert`` commits, the hash unchanged), his frozen ``PLAN.yml``
swapped for the agent's ``PLAN.json`` in one commit (``back``), and a parent pinning his
converted plan (``pin``). Controls: the agent's plan by every road approved by Bob, and
Bob's by Alice, ran once, the approver named. The fresh-clone audit agreed everywhere.
Not tried: content first seen on an UNMERGED branch (history a fresh clone of the watched
branch never holds), a source with an owned block or a ``NOTES.md`` beside it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import toon_format
from advkit import AGENT, ALICE, BOB, CAROL, Lab, cases, clone_audit
from oraclekit import hash_pin
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock, _f
from test_round75_approve_respellings import _approve, data

ROADS = ["twostep", "late", "coauth", "brmerge", "brmergeA", "xfmt", "back", "pin"]
BOBS = [f"bob-{r}" for r in ROADS]
HONEST = {f"h-{r}": BOB for r in ROADS if r != "late"}
HONEST.update({f"ha-{r}": ALICE for r in ROADS})
ALL = [*BOBS, *HONEST]
APPROVER = {**{v: BOB for v in BOBS}, **HONEST}
PARENT = (
    'plan:\n  name: "parent {v}"\n  task: "agent task parent {v}"\n  status: pending_approval\n'
    "available_tools:\n  - name: rec\nactions:\n"
    '  - id: 1\n    why: "the library"\n    plan: {{path: plans/{v}, hash: "{pin}"}}\n'
)

BROKEN: dict[str, Any] = {}


def road(v: str) -> str:
    return v.split("-", 1)[1]


def writer(v: str) -> tuple[str, str]:
    return AGENT if v.startswith("h-") else BOB


def target(v: str) -> str:
    return f"{v}-p" if road(v) == "pin" else v


def as_json(v: str) -> str:
    return json.dumps(data(v), indent=1) + "\n"


def _v2(lab: Lab, v: str) -> None:
    p = _f(lab, v, "PLAN.json")
    text = p.read_text()
    assert f"agent: record {v}" in text, text
    p.write_text(text.replace(f"agent: record {v}", f"agent: record {v} (v2)", 1))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    of = {r: [v for v in ALL if road(v) == r] for r in ROADS}
    # gap 1: the line's roads, grouped by writer
    for who in (AGENT, BOB):
        for v in of["twostep"] + of["xfmt"] + of["pin"] + of["back"]:
            if writer(v) == who:
                if road(v) == "back":
                    lab.write(v, plan(v))
                else:
                    lab.write(v, as_json(v), "PLAN.json")
        c.commit(f"{who[0].lower()}: sources", who=who)
    for v in of["twostep"]:
        _v2(lab, v)
    c.commit("agent: twostep v2")
    for v in of["late"]:
        lab.write(v, as_json(v), "PLAN.json")
    c.commit("agent: late sources")
    for v in of["late"]:
        _v2(lab, v)
    c.commit("bob: late v2", who=BOB)
    for co in (BOB, CAROL):
        for v in of["coauth"]:
            if (co == BOB) == (writer(v) == BOB):
                lab.write(v, as_json(v), "PLAN.json")
        c.commit(f"agent: coauthored sources\n\nCo-authored-by: {co[0]} <{co[1]}>")
    for r, merger in (("brmerge", AGENT), ("brmergeA", ALICE)):
        for who in (AGENT, BOB):
            br = f"{who[0].lower()}/{r}"
            c.git("checkout", "-q", "-b", br)
            for v in of[r]:
                if writer(v) == who:
                    lab.write(v, as_json(v), "PLAN.json")
            c.commit(f"{who[0].lower()}: {r} sources", who=who)
            c.git("checkout", "-q", "main")
            c.git("merge", "-q", "--no-ff", "-m", f"merge {br}", br, who=merger)
    c.run()  # P1
    lab.p1 = {v: lab.codes(v) for v in ALL}  # type: ignore[attr-defined]
    lab.h1 = {v: hash_pin(lab, v) for v in ALL}  # type: ignore[attr-defined]
    for v in of["xfmt"]:
        lab.git("rm", "-q", f"plans/{v}/PLAN.yml")
        lab.write(v, toon_format.encode(data(v)) + "\n", "PLAN.toon")
    for v in of["back"]:
        lab.git("rm", "-q", f"plans/{v}/PLAN.yml")
        lab.write(v, as_json(v), "PLAN.json")
    for v in of["pin"]:
        lab.write(f"{v}-p", PARENT.format(v=v, pin=lab.h1[v]))  # type: ignore[attr-defined]
    c.commit("agent: other formats, parents")
    c.run()  # P2
    for v in of["xfmt"]:
        lab.git("rm", "-q", f"plans/{v}/PLAN.yml")
        lab.write(v, "```json\n" + json.dumps(data(v)) + "\n```\n", "PLAN.md")
    c.commit("agent: markdown")
    c.run()  # P3
    lab.h3 = {v: hash_pin(lab, v) for v in ALL}  # type: ignore[attr-defined]
    lab.pending = {v: lab.codes(target(v)) for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        _approve(_f(lab, target(v)))
        c.commit(f"approve plans/{target(v)}", who=APPROVER[v])
    c.run()  # P4
    lab.first = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
    c.run()  # P5
    lab.final = {v: lab.codes(target(v)) for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r76-convertroutes", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{target(v)}" and e.get("approval_valid")
    ]


def test_every_plan_was_converted_and_waited(lab: Lab) -> None:
    for v in ALL:
        assert lab.h3[v].startswith("sha256:"), v  # type: ignore[attr-defined]
        assert '"status": "pending_approval"' in lab.pending[v], (v, lab.pending[v][:1500])  # type: ignore[attr-defined]
        left = sorted(p.name for p in (lab.repo / "plans" / v).iterdir())
        assert left[-1] == "PLAN.yml" and not any(n.startswith("PLAN.") for n in left[:-1]), left
    for v in ALL:  # no hop changed the content
        if road(v) in ("xfmt", "back"):
            assert lab.h3[v] == lab.h1[v], v  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(BOBS, BOBS, BROKEN))
def test_bobs_approval_of_a_source_he_wrote_never_runs(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.final[vid], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert runs_of(lab.report, vid) == [], runs_of(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(list(HONEST), list(HONEST), BROKEN))
def test_a_non_writers_approval_runs_once(lab: Lab, vid: str) -> None:
    assert lab.first[vid] == 1, lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1, lab.final[vid][:2500]
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == HONEST[vid][1], runs


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(runs_of(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
