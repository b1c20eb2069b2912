"""Round 77, approval side: an edited copy made of TWO plans that both leave their paths in
the same commit (round 76, docs/approvals.md, moves: "the path's new content is paired with
its likest source among them (``_likest_source``)"; and "A plan moved with an edit in the
same commit keeps its source's writers when it is a move: ... keeping at least half of it, or
being at least half its unchanged content itself"). If the move pairing keeps only the
LIKEST source, the other writer's half may be laundered: can the writer of the less-like
source approve the mix?

Lab (one, local mode, fake dates). Per id ALICE commits ``plans/<v>-a`` (two ``rec``
actions, tags ``<v>.a1``, ``<v>.a2``), BOB commits ``plans/<v>-b`` (one action, ``<v>.b1``),
the agent ``plans/<v>-w`` (one action, ``<v>.w1``). P0 freezes. Gap 1, one AGENT commit,
by content (the new ``plans/<v>-w``):

- ``ab``: her two actions and his one, under her name and task (all of each: a tie);
- ``a1b``: her FIRST action and his, under her name and task (about half of hers, nearly
  all of his: his is the likest source);

and by how the two sources leave: ``ow``: ``plans/<v>-a`` and ``plans/<v>-b`` overwritten
with new agent plans (tags ``<v>.n1``, ``<v>.n2``); ``rm``: both folders ``git rm -r``'d;
``nw``: overwritten as in ``ow``, the mix written into a NEW folder ``plans/<v>-z`` ("a plan
moved with an edit into a folder that held none is a new plan as before") and ``<v>-w`` left.
P1. Gap 2: ``alice-*`` Alice, ``bob-*`` Bob, ``carol-*`` Carol (an allowed approver who wrote
nothing) sets ``approved`` on the mix (``plans/<v>-w``; ``-z`` for ``nw``). P2, P3; audits
with the config and on a fresh clone.

What must hold: ``alice-*`` and ``bob-*``: each wrote at least half of the mix ("none of whom
wrote it"): ``E_SELF_APPROVAL``, no ``rec`` call for ``<v>.a1``/``<v>.b1``; controls
``carol-*``: Carol's approval runs it once, approver carol. The fresh clone's audit agrees.

Seen (round 77): no break. Held: Alice's and Bob's approvals of a plan made of both their
plans were ``E_SELF_APPROVAL`` and nothing of it ran, whether the pairing's tie (``ab``) or
Bob's plan as the likest source (``a1b``: Alice's half not the likest) decided it, whether
their folders were overwritten (``ow``), removed (``rm``), or the mix went to a new folder
(``nw``); Carol's approval ran it once. The fresh-clone audit agreed on every id.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOB, CAROL, Lab, cases, clone_audit
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock, _f

WHO = {"alice": ALICE, "bob": BOB, "carol": CAROL}
ALL = [f"{k}-{m}-{w}" for k in WHO for m in ("ab", "a1b") for w in ("ow", "rm", "nw")]
SELF = [v for v in ALL if not v.startswith("carol-")]
HONEST = [v for v in ALL if v.startswith("carol-")]

BROKEN: dict[str, Any] = {}


def text(name: str, task: str, acts: list[tuple[str, str]]) -> str:
    out = (
        f'plan:\n  name: "{name}"\n  task: "{task}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n"
    )
    for i, (why, tag) in enumerate(acts, 1):
        out += f'  - id: {i}\n    tool: rec\n    why: "{why}"\n    params: {{tag: "{tag}"}}\n'
    return out


def act(v: str, who: str, t: str) -> tuple[str, str]:
    return (f"{who}: record {v} {t}, as the runbook says", f"{v}.{t}")


def target(v: str) -> str:
    return f"{v}-z" if v.endswith("-nw") else f"{v}-w"


def _approve(lab: Lab, folder: str) -> None:
    p = _f(lab, folder)
    t = p.read_text()
    new, n = re.subn(r"(?m)^  status: .*$", "  status: approved", t, count=1)
    assert n == 1, t[:800]
    p.write_text(new)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    for v in ALL:
        lab.write(
            f"{v}-a",
            text(f"{v}-a", f"alice task {v}", [act(v, "alice", "a1"), act(v, "alice", "a2")]),
        )
    c.commit("alice plans", who=ALICE)
    for v in ALL:
        lab.write(f"{v}-b", text(f"{v}-b", f"bob task {v}", [act(v, "bob", "b1")]))
    c.commit("bob plans", who=BOB)
    for v in ALL:
        lab.write(f"{v}-w", text(f"{v}-w", f"agent task {v}", [act(v, "agent", "w1")]))
    c.commit("agent plans")
    c.run()  # P0
    for v in ALL:
        mine = [act(v, "alice", "a1")] + ([act(v, "alice", "a2")] if "-ab-" in v else [])
        _f(lab, target(v)).parent.mkdir(parents=True, exist_ok=True)
        _f(lab, target(v)).write_text(
            text(f"{v}-a", f"alice task {v}", [*mine, act(v, "bob", "b1")])
        )
        if v.endswith("-rm"):
            lab.git("rm", "-r", "-q", f"plans/{v}-a", f"plans/{v}-b")
        else:
            _f(lab, f"{v}-a").write_text(text(f"{v}-n1", "agent n1", [act(v, "agent", "n1")]))
            _f(lab, f"{v}-b").write_text(text(f"{v}-n2", "agent n2", [act(v, "agent", "n2")]))
    c.commit("agent: two plans folded into one")
    c.run()  # P1
    for k, who in WHO.items():
        for v in ALL:
            if v.startswith(f"{k}-"):
                _approve(lab, target(v))
        c.commit(f"{k}: approve", who=who)
    c.run()  # P2
    c.run()  # P3
    lab.final = {v: lab.codes(target(v)) for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r77-twosources", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = {f"plans/{v}-{x}" for x in "abwz"}
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


@pytest.mark.parametrize("vid", cases(SELF, SELF, BROKEN))
def test_a_writer_of_either_half_cannot_approve_the_mix(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}.a1") == [], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert lab.calls(f"{vid}.b1") == [], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.final[vid], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert runs_of(lab.report, vid) == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))
def test_carols_approval_runs_the_mix_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}.a1")) == 1, lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert len(lab.calls(f"{vid}.b1")) == 1, lab.final[vid][:2500]  # type: ignore[attr-defined]
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert [r["approver"] for r in runs] == [CAROL[1]], runs


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    mine = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert len(mine) == len(fresh), (mine, fresh)
    assert [e.get("approver") for e in mine] == [e.get("approver") for e in fresh]
