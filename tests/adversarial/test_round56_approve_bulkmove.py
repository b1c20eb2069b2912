"""Round 56, self-approval: an approver's plan MOVED to a new folder (or parked and moved
back) with a large ADDITION of real, hashed content, so that the content likeness of round
55 (``plan/likeness.py``: twice the weight both hold over the weight of both) falls below
0.5 although every leaf of her plan is still there, unchanged.

docs/approvals.md, "Who changed the content": a plan moved with an edit in the same commit
keeps its source's writers when the removed plan and the added one are at least half alike
by content; an edit in place of parked bytes is an edit when git's rename score is 50+ or
the two are plans half alike, otherwise "the text was written there anew" and whoever wrote
the bytes the rewrite replaced wrote nothing of the plan. Her bytes are not replaced here:
they are all kept; new actions are only appended. The same edit made to her plan in place
keeps her a writer (a plan file's content changers stay its changers), so the verdict hangs
on whether the agent also renamed the folder.

Config: the bench's. Alice commits ``plans/<v>a/PLAN.yml`` (``draft``, one action calling
``rec`` with tag ``<v>``); a pass. Then the agent, in its own commits:

- ``mv6``: ``git mv plans/mv6a plans/mv6b`` and, in the same commit, appends 6 ``echo``
  actions (each a ``why`` and a ``message``: weight 2 each against her ~4).
- ``mv1``, ``mv2``, ``mv3``, ``mv12``: the same with 1, 2, 3 and 12 actions.
- ``mvparams``: the same move, her action keeps everything and gains 10 new params.
- ``mvpr``: ``mv6`` made on a branch and merged with ``--no-ff`` by the agent.
- ``park``: ``git mv plans/parka drafts/park.yml`` (a commit), the 6 actions appended to the
  parked file in place (a commit), ``git mv drafts/park.yml plans/parkb/PLAN.yml``.
- ``inplace`` (control): the 6 actions appended to ``plans/inplacea`` where it is (her folder).
- ``own`` (control): the agent's own plan of the same shape; Alice's approval runs it.

The agent sets every ``<v>b`` ``pending_approval``; a pass; Alice approves; two passes;
``plangate audit --json`` on a fresh clone.

Asserted (the defence): her action's text is hers, so ``E_SELF_APPROVAL``, ``rec`` never runs
with her tag, and the fresh-clone audit lists no valid run. ``own`` runs once.

Seen: ``mv6``, ``mv12``, ``mvparams`` and ``mvpr`` broke (her approval ran ``rec`` with her tag
once, ``completed``, and the fresh-clone audit lists the run valid): a move judged only by
likeness forgets her once the agent adds about twice her plan's weight (6 two-leaf actions,
or 10 params in her own action). ``mv1``, ``mv2`` and ``mv3`` held (the
pair still over 0.5). ``park`` held (``E_SELF_APPROVAL``: the parked edit in place
kept her), ``inplace`` held (the same addition in her folder), ``own`` ran once.
Fix direction: a move keeps its source's writers when the source's leaves are (mostly)
CONTAINED in the added plan (weight both hold over the source's weight), not only when the
two are half alike overall.

Fixed (2026-11-29): a move is judged by how much of the SOURCE the new plan keeps
(``likeness.kept_share``: the weight of her leaves found unchanged over her plan's weight),
so additions do not dilute her: all four keep 1.0 of her plan.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text, valid_runs
from test_round2_execution_kit import shared

MOVED = ["mv1", "mv2", "mv3", "mv6", "mv12", "mvparams", "mvpr", "park"]
VIDS = [*MOVED, "inplace"]
BROKEN: dict[str, object] = {}


def _actions(v: str, n: int) -> str:
    return "".join(
        f'  - id: {i}\n    tool: echo\n    why: "agent step {i} of {v}: warm cache shard {i}"\n'
        f'    params: {{message: "shard-{v}-{i}-warm"}}\n'
        for i in range(2, n + 2)
    )


def _grow(path: Path, v: str, n: int = 6) -> None:
    text = path.read_text()
    text = text.replace("  - name: rec\n", "  - name: rec\n  - name: echo\n")
    path.write_text(text + _actions(v, n))


def _params(path: Path, v: str) -> None:
    text = path.read_text()
    extra = "".join(f'      knob{i}: "agent value {i} for {v}"\n' for i in range(10))
    path.write_text(text + extra)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in VIDS:
        lab.write(f"{v}a", plan_text(v, status="draft"))
    lab.commit("alice writes her plans", ALICE)
    lab.write("ownb", plan_text("own", status="draft"))
    lab.commit("agent writes its own plan", AGENT)
    _grow(lab.repo / "plans/ownb/PLAN.yml", "own")
    lab.commit("agent grows its plan", AGENT)
    lab.run()
    # moves with a large addition, one commit
    for v, n in (("mv1", 1), ("mv2", 2), ("mv3", 3), ("mv6", 6), ("mv12", 12)):
        lab.git("mv", f"plans/{v}a", f"plans/{v}b")
        _grow(lab.repo / f"plans/{v}b/PLAN.yml", v, n)
    lab.git("mv", "plans/mvparamsa", "plans/mvparamsb")
    _params(lab.repo / "plans/mvparamsb/PLAN.yml", "mvparams")
    _grow(lab.repo / "plans/inplacea/PLAN.yml", "inplace")
    (lab.repo / "drafts").mkdir()
    lab.git("mv", "plans/parka/PLAN.yml", "drafts/park.yml")
    lab.commit("agent reorganises", AGENT)
    _grow(lab.repo / "drafts/park.yml", "park")
    lab.commit("agent extends the draft", AGENT)
    (lab.repo / "plans/parkb").mkdir(parents=True)
    lab.git("mv", "drafts/park.yml", "plans/parkb/PLAN.yml")
    lab.commit("agent brings the draft in", AGENT)
    lab.git("checkout", "-q", "-b", "side")
    lab.git("mv", "plans/mvpra", "plans/mvprb")
    _grow(lab.repo / "plans/mvprb/PLAN.yml", "mvpr")
    lab.commit("agent moves on a branch", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    lab.git("mv", "plans/inplacea", "plans/inplaceb")  # a byte-exact move: adds no one
    lab.commit("agent renames", AGENT)
    for v in [*VIDS, "own"]:
        lab.set_status(f"{v}b", "pending_approval")
    lab.commit("agent submits", AGENT)
    lab.run()
    time.sleep(1.05)
    for v in [*VIDS, "own"]:
        lab.set_status(f"{v}b", "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    fresh = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(fresh)], check=True, env=lab.env())
    result = lab.cli("audit", "--json", cwd=fresh)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    lab.fresh_audit = json.loads(result.stdout)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r56-bulkmove", _build)


def _valid_runs(lab: Lab, v: str) -> list[dict]:  # type: ignore[type-arg]
    return valid_runs(lab.fresh_audit, f"{v}b")  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_grown_plan_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"{vid}b")[:600]
    assert "E_SELF_APPROVAL" in lab.codes(f"{vid}b"), lab.codes(f"{vid}b")[:600]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_the_fresh_clone_audit_lists_no_valid_run(lab: Lab, vid: str) -> None:
    assert _valid_runs(lab, vid) == []


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("ownb")[:600]
    assert len(_valid_runs(lab, "own")) == 1
