"""Round 77, approval side: whose writers an EDITED swap or rotation's copy carries (round 76,
docs/approvals.md, moves: "The content a move with an edit is paired with is any plan
content that LEAVES its path in the commit ... the path's new content is paired with its
likest source among them (``_likest_source``, the same ``likeness.MOVE_KEPT`` and more of it
than of the path's own old plan)"; "A plan moved with an edit in the same commit keeps its
source's writers when it is a move: ... the new plan MADE of the removed plan's content:
keeping at least half of it, or being at least half its unchanged content itself"). Round
76 checked that the edited swap is a new LIFE (Bob's approval runs it); here: can the WRITER
of the moved-away plan approve its edited copy at the other path (self-approval laundered by
the swap)?

Lab (one, local mode, fake dates). Per id ALICE (an allowed approver) commits her plan
``plans/<v>`` (two ``rec`` actions tagged ``<v>.1``, ``<v>.2``); the agent commits
``plans/<v>-w`` (tags ``<v>-w.1``, ``<v>-w.2``) and, for rotations, ``plans/<v>-x``. P0
freezes. Gap 1, by way, every move committed by the AGENT in ONE commit:

- ``swap``: her file and ``<v>-w``'s exchanged, each first ``why`` edited;
- ``swapx``: the same byte for byte (baseline: round 70's move, the writers by hash);
- ``swap1a``: only her plan's copy edited (the agent's moves byte for byte);
- ``swap1w``: only the agent's copy edited (hers moves byte for byte);
- ``rot``: ``<v>`` -> ``<v>-w`` -> ``<v>-x`` -> ``<v>``, each edited;
- ``rot1``: the same rotation with the agent's ``<v>-w`` -> ``<v>-x`` leg unedited;
- ``rotA``: the same rotation with HER leg unedited (the other two edited);
- ``mixA``: ``plans/<v>-w`` rewritten with BOTH her actions and the agent's first one
  (the agent's name and task): all of hers, about half of the path's own; ``plans/<v>``
  rewritten with a new agent plan (tags ``<v>-n.*``), so her content leaves its path;
- ``mixW``: ``plans/<v>-w`` rewritten with the agent's two actions AND her two (the agent's
  name and task): it keeps at least half of the path's OWN old plan (all of it) as much as of
  hers, so it is no move, an edit of ``<v>-w`` in place; ``plans/<v>`` as in ``mixA``;
- ``back``: the edited swap, P1, then the edited swap BACK (her content, edited twice, home);
- ``br``: the edited swap on ``agent/moves``, merged ``--no-ff`` by ALICE;
- ``brB``: the same branch merged ``--no-ff`` by BOB (a merger alone is no writer);
- ``json``: across formats: the agent removes ``<v>-w``'s PLAN.yml and writes her plan,
  edited, as ``plans/<v>-w/PLAN.json`` (the controller converts it), and the agent's plan,
  edited, over her ``PLAN.yml``.

P1 (P2 after ``back``'s swap back). Gap 2: for ``self-*`` ALICE sets ``approved`` on the path
now holding her (edited) content, in one commit; for ``bob-*`` BOB does; in every id Bob
approves the agent's content now at the other path (``<v>``; ``<v>-w`` for ``back``). P3,
P4; audits with the config and on a fresh clone.

What must hold: ``self-*``: her approval of her own content's copy is ``E_SELF_APPROVAL``,
``rec`` for ``<v>.1`` never ran (she wrote it; docs/threat-model.md: "none of whom wrote
it"); controls ``bob-*``: Bob's approval runs it once, approver bob; everywhere Bob's
approval of the agent's moved content runs it once (a defence that refuses every swap is
caught). The fresh clone's audit agrees with the controller on every id.

Seen (round 77): no break. Held: Alice's approval of the copy of her own plan was
``E_SELF_APPROVAL`` and ``rec`` for ``<v>.1``/``<v>.2`` never ran by every way: an edited
swap, a one-sided edit of either leg, byte for byte, edited rotations (all legs, her leg
byte-exact, the agent's leg byte-exact), her two actions merged with the agent's one
(``mixA``, paired with hers), her plan and the agent's whole plan in one file (``mixW``,
where the path's own plan is kept as much as hers: an edit in place, still hers by content),
swapped and swapped back with a pass between, on a branch merged by her or by Bob, and
across formats (her plan as the agent's ``PLAN.json`` at the other path, converted). Bob's
approval of the same copy ran it once, approver bob (a merger alone was no writer), and his
approval of the agent's moved content ran it once everywhere. The fresh-clone audit agreed
on every id.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOB, Lab, cases, clone_audit, load_yaml
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock, _f

WAYS = [
    "swap",
    "swapx",
    "swap1a",
    "swap1w",
    "rot",
    "rot1",
    "rotA",
    "mixA",
    "mixW",
    "back",
    "br",
    "brB",
    "json",
]
SELF = [f"self-{w}" for w in WAYS]
HONEST = [f"bob-{w}" for w in WAYS]
ALL = [*SELF, *HONEST]
BRANCHED = ("br", "brB")

BROKEN: dict[str, Any] = {}


def kind(v: str) -> str:
    return v.split("-", 1)[0]


def way(v: str) -> str:
    return v.split("-", 1)[1]


def text(name: str, task: str, acts: list[tuple[str, str]]) -> str:
    out = (
        f'plan:\n  name: "{name}"\n  task: "{task}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n"
    )
    for i, (why, tag) in enumerate(acts, 1):
        out += f'  - id: {i}\n    tool: rec\n    why: "{why}"\n    params: {{tag: "{tag}"}}\n'
    return out


def acts(slug: str, who: str) -> list[tuple[str, str]]:
    return [
        (f"{who}: record {slug} first, the one that counts", f"{slug}.1"),
        (f"{who}: record {slug} second, the follow-up", f"{slug}.2"),
    ]


def hers(v: str) -> str:
    return text(v, f"alice task {v}", acts(v, "alice"))


def agents(slug: str) -> str:
    return text(slug, f"agent task {slug}", acts(slug, "agent"))


def home(v: str) -> str:
    """Where her content is at gap 2."""
    return v if way(v) == "back" else f"{v}-w"


def other(v: str) -> tuple[str, str]:
    """(folder, first tag) of the agent's content Bob approves at gap 2."""
    w = way(v)
    if w == "back":
        return f"{v}-w", f"{v}-w.1"
    if w.startswith("rot"):
        return v, f"{v}-x.1"
    if w.startswith("mix"):
        return v, f"{v}-n.1"
    return v, f"{v}-w.1"


def _edited(t: str) -> str:
    new, n = re.subn(r'why: "([^"]*)"', r'why: "\1 (moved)"', t, count=1)
    assert n == 1, t[:600]
    return new


def _approve(lab: Lab, folder: str) -> None:
    p = _f(lab, folder)
    t = p.read_text()
    new, n = re.subn(r"(?m)^  status: .*$", "  status: approved", t, count=1)
    assert n == 1, t[:800]
    p.write_text(new)


def _move(lab: Lab, v: str) -> None:
    w = way(v)
    if w.startswith("mix"):
        a, o = acts(v, "alice"), acts(f"{v}-w", "agent")
        mine = a + o[:1] if w == "mixA" else o + a
        _f(lab, f"{v}-w").write_text(text(f"{v}-w", f"agent task {v}-w", mine))
        _f(lab, v).write_text(agents(f"{v}-n"))
        return
    if w == "json":
        lab.git("rm", "-q", f"plans/{v}-w/PLAN.yml")
        data = load_yaml(_edited(hers(v)))
        _f(lab, f"{v}-w").parent.mkdir(parents=True, exist_ok=True)
        _f(lab, f"{v}-w", "PLAN.json").write_text(json.dumps(data, indent=2) + "\n")
        _f(lab, v).write_text(_edited(agents(f"{v}-w")))
        return
    ring = [v, f"{v}-w", f"{v}-x"] if w.startswith("rot") else [v, f"{v}-w"]
    texts = [_f(lab, f).read_text() for f in ring]
    for i, f in enumerate(ring):  # ring[i - 1]'s content goes to ring[i]
        keep = (
            w == "swapx"
            or (w == "swap1a" and i == 0)
            or (w == "swap1w" and i == 1)
            or (w == "rot1" and i == 2)
            or (w == "rotA" and i == 1)
        )
        _f(lab, f).write_text(texts[i - 1] if keep else _edited(texts[i - 1]))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    for v in ALL:
        lab.write(v, hers(v))
    c.commit("alice: her plans", who=ALICE)
    for v in ALL:
        lab.write(f"{v}-w", agents(f"{v}-w"))
        if way(v).startswith("rot"):
            lab.write(f"{v}-x", agents(f"{v}-x"))
    c.commit("agent plans")
    c.run()  # P0
    lab.p0 = {v: lab.codes(v) for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        if way(v) not in BRANCHED:
            _move(lab, v)
    c.commit("agent: swaps and rotations, edited")
    for merger in (ALICE, BOB):
        br = f"agent/moves-{merger[0].lower()}"
        c.git("checkout", "-q", "-b", br)
        for v in ALL:
            if way(v) == ("br" if merger == ALICE else "brB"):
                _move(lab, v)
        c.commit(f"agent: swaps on {br}")
        c.git("checkout", "-q", "main")
        c.git("merge", "-q", "--no-ff", "-m", f"merge {br}", br, who=merger)
    c.run()  # P1
    lab.p1 = {v: lab.codes(home(v)) for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        if way(v) == "back":
            _move(lab, v)
    c.commit("agent: the swaps back, edited again")
    c.run()  # P2
    for v in SELF:
        _approve(lab, home(v))
    c.commit("alice: approve", who=ALICE)
    for v in ALL:
        if kind(v) == "bob":
            _approve(lab, home(v))
        _approve(lab, other(v)[0])
    c.commit("bob: approve", who=BOB)
    c.run()  # P3
    c.run()  # P4
    lab.final = {v: lab.codes(home(v)) for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r77-swapwriters", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = {f"plans/{v}", f"plans/{v}-w", f"plans/{v}-x"}
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


def ran(lab: Lab, v: str) -> int:
    tags = {f"{v}.1", f"{v}-w.1", f"{v}-x.1", f"{v}-n.1"}
    return sum(len(lab.calls(t)) for t in tags)


@pytest.mark.parametrize("vid", cases(SELF, SELF, BROKEN))
def test_the_writer_cannot_approve_her_plans_edited_copy(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}.1") == [], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert lab.calls(f"{vid}.2") == [], lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.final[vid], lab.final[vid][:2500]  # type: ignore[attr-defined]
    mine = [r for r in runs_of(lab.report, vid) if r["approver"] == ALICE[1]]  # type: ignore[attr-defined]
    assert mine == [], mine


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))
def test_bobs_approval_of_her_plans_copy_runs_it_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}.1")) == 1, lab.final[vid][:2500]  # type: ignore[attr-defined]
    assert len(lab.calls(f"{vid}.2")) == 1, lab.final[vid][:2500]  # type: ignore[attr-defined]
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert [r["approver"] for r in runs] == [BOB[1], BOB[1]], runs


@pytest.mark.parametrize("vid", ALL)
def test_bobs_approval_of_the_agents_moved_plan_runs_it_once(lab: Lab, vid: str) -> None:
    folder, tag = other(vid)
    assert len(lab.calls(tag)) == 1, lab.codes(folder)[:2500]


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(runs_of(lab.report, vid)) == len(fresh), fresh  # type: ignore[attr-defined]
    assert len(fresh) == len({(e.get("plan"), e.get("hash")) for e in fresh}), fresh
    assert len(fresh) <= ran(lab, vid), fresh
