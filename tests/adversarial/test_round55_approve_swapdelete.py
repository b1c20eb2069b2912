"""Round 55, an agent's own new plan refused for an approver because the SAME commit deleted
an old plan of hers (honest approvals wrongly refused).

docs/approvals.md, "Who changed the content": "A plan moved with an edit in the same commit
keeps its source's writers when git would call it a move (a file arriving with the same
bytes, or at least half the same lines)", and (round 54) "moves (R) keep git's 50". Plans
for one tool share their shape (action ids, tool, `params:`, a `step:` param), so an agent's
own runbook and an approver's unrelated one have more than half their lines in common while
git scores the pair far below 50 (38 here: `git diff -M` reports a delete and an add, not a
rename; `git diff -M30%` pairs them at 38%).

Config: the bench's (Alice and `*@ops.example.com` approve). Plans of 8 `rec` actions
(`step: N` params, a `why:` line per action). Alice's own plans use the why text "rotate
keys step N"; the agent's "prune logs step N": no why text, tag, name or task in common.
Per variant:

- ``rejected``: Alice writes ``<v>-old``, the controller freezes it, Alice rejects it (a
  final state). One agent commit "drop the rejected plan, propose a new one" removes
  ``plans/<v>-old`` and adds its own ``plans/<v>``; Alice approves ``plans/<v>``.
- ``pending``: the same, Alice's plan still pending (an abandoned draft the agent clears).
- ``completed``: Alice's plan approved by Bob and run; the agent's commit removes the
  finished folder and adds its own plan.
- ``pr``: ``rejected`` played on a branch the agent merges with ``--no-ff``.
- ``two``: ``rejected`` with two new agent plans (``<v>``, ``<v>-b``) in the commit.
- ``small`` (control): ``rejected`` with one-action plans.
- ``apart`` (control): ``rejected`` with the removal and the new plan in two commits.
- ``bob`` (control): ``rejected``, approved by Bob instead.

Asserted (the promise): Alice wrote nothing of the agent's plan, so her approval runs it
once (no `E_SELF_APPROVAL`), and the fresh audit finds the run valid.

Seen: ``rejected``, ``pending``, ``pr`` broke (`E_SELF_APPROVAL: alice@example.com wrote or
changed this plan's content`; git itself scores the pair 38, no rename). Held: the controls,
``completed`` (her finished plan carries its `execution:` block, so fewer than half the
lines match) and ``two`` (two new plans of the same shape: no single likest one, nothing
paired).

Fixed (2026-11-29): a plan a commit adds is paired with one it removes by CONTENT
(``controller.plan.likeness``): the two plans' hashed leaves, values weighed over the layout
every ``rec`` runbook shares (ids, tool names). Alice's runbook and the agent's are 0.33
alike (the step numbers and the layout), below ``MOVE_LIKENESS`` (0.5): nothing is paired,
and her approval of the agent's plan runs it. (Round 56: ``MOVE_KEPT``, the share of hers
the agent's plan keeps: 0.004.)
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, BenchError, Lab, cases, plan_text
from test_round2_execution_kit import shared

VIDS = ["rejected", "pending", "completed", "pr", "two", "small", "apart", "bob"]
BROKEN: dict[str, object] = {}


def runbook(tag: str, why: str, steps: int = 8) -> str:
    extra = "".join(
        f'  - id: {i}\n    tool: rec\n    why: "{why} step {i}"\n    params:\n'
        f'      tag: "{tag}"\n      step: {i}\n'
        for i in range(2, steps + 1)
    )
    return plan_text(tag, extra_actions=extra, name=f"{why} ({tag})")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    steps = {v: (1 if v == "small" else 8) for v in VIDS}
    for v in VIDS:
        lab.write(f"{v}-old", runbook(f"{v}-old", "rotate keys", steps[v]))
    lab.commit("alice drafts her runbooks", ALICE)
    lab.run()
    time.sleep(1.05)
    lab.set_status("completed-old", "approved")
    lab.commit("bob approves completed-old", BOB)
    for v in VIDS:
        if v not in ("pending", "completed"):
            lab.set_status(f"{v}-old", "rejected")
    lab.commit("alice withdraws her runbooks", ALICE)
    lab.run()
    lab.run()
    assert lab.calls("completed-old"), lab.codes("completed-old")
    for v in VIDS:
        mine = runbook(v, "prune logs", steps[v])
        if v == "pr":
            lab.git("checkout", "-q", "-b", "agent-pr")
        if v == "apart":
            lab.git("rm", "-q", "-r", f"plans/{v}-old")
            lab.commit(f"agent: drop {v}-old", AGENT)
            lab.write(v, mine)
            lab.commit(f"agent: propose {v}", AGENT)
            continue
        lab.git("rm", "-q", "-r", f"plans/{v}-old")
        lab.write(v, mine)
        if v == "two":
            lab.write(f"{v}-b", runbook(f"{v}-b", "prune logs"))
        lab.commit(f"agent: drop {v}-old, propose {v}", AGENT)
        if v == "pr":
            lab.git("checkout", "-q", "main")
            lab.git("merge", "-q", "--no-ff", "-m", "merge agent-pr", "agent-pr", who=AGENT)
    lab.run()
    time.sleep(1.05)
    for v in VIDS:
        if v != "bob":
            lab.set_status(v, "approved")
    lab.set_status("two-b", "approved")
    lab.commit("alice approves the agent's plans", ALICE)
    lab.set_status("bob", "approved")
    lab.commit("bob approves", BOB)
    lab.run()
    lab.run()
    lab.scores = {  # type: ignore[attr-defined]
        v: lab.git("log", "-M", "--summary", "--format=", "-n", "1", "--", f"plans/{v}")
        for v in VIDS
    }
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r55-swapdelete", _build)


def test_git_calls_none_of_them_a_rename(lab: Lab) -> None:
    scores = lab.scores  # type: ignore[attr-defined]
    for v in VIDS:
        assert "rename" not in scores[v], (v, scores[v])


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_approval_of_the_agents_own_plan_runs(lab: Lab, vid: str) -> None:
    if "approval request" not in lab.codes(vid):
        raise BenchError(f"{vid}: no approval was read: {lab.codes(vid)[:400]}")
    assert "E_SELF_APPROVAL" not in lab.codes(vid), lab.codes(vid)
    firsts = [c for c in lab.calls(vid) if '"step"' not in c["stdin"]]
    assert len(firsts) == 1, lab.codes(vid)
    runs = [
        e
        for e in lab.report.get("executions", [])  # type: ignore[attr-defined]
        if e.get("plan") == f"plans/{vid}"
    ]
    assert runs and all(e.get("approval_valid") for e in runs), runs
