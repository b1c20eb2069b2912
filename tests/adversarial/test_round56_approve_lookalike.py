"""Round 56, honest approvals wrongly refused: the agent's OWN runbook, drafted outside the
plans folder, that git's ``--find-copies-harder`` pairs at a copy score of 66 or more with an
approver's unrelated runbook for the same tool, only through the layout such runbooks share;
and the agent's own plan for the same target, added in the commit that removes an approver's
old plan, paired by likeness through the target params they share.

docs/approvals.md, "Who changed the content": "*A copy counts from 66%.* ... Plans for one
tool share their shape (action ids, tool, step names, common params): an agent's own runbook
drafted outside the plans folder scored 61 against an approver's runbook it had never seen";
moves are paired by content likeness, where "the layout every plan for one tool shares
(action ids, `tool`, `needs`, `available_tools`)" weighs 0.1. The draft path still asks
git's line score; a runbook whose actions carry the same common keys (``on_failure``,
``timeout``, ``step``, ``dry_run``, ``retries``) is mostly layout lines.

Config: the bench's. Alice commits her 8-action runbook ``plans/alice-rb`` (``web step N``,
tags ``a-N``) and her old plan ``plans/old-<v>`` for the ``sp`` variants (params ``host``,
``region``, ``port``, ``user``, ``db`` of the production database); a pass. The agent, with
its own text (another name, task, every ``why`` and tag its own):

- ``draft``: commits its runbook at ``drafts/draft.yml``; a later commit ``git mv``\\ s it to
  ``plans/draft/PLAN.yml`` (git: ``C076`` from ``plans/alice-rb/PLAN.yml``).
- ``draft-edit``: the same, with one edit in place of the draft before the move.
- ``draft-pr``: ``draft`` on a branch merged by the agent.
- ``straight`` (control): the same runbook committed straight into ``plans/straight``.
- ``sp``: one commit removes ``plans/old-sp`` (Alice's abandoned plan) and adds the agent's
  own ``plans/sp`` (name, task, why and tag its own, the five target params the same).
- ``sp-later`` (control): the removal and the add in two commits.

The agent submits; a pass; Alice approves each; two passes; ``plangate audit --json``.

Asserted (the promise): Alice wrote none of these plans, so her approval runs each once and
the audit lists the run valid.

Seen: ``sp`` broke (``E_SELF_APPROVAL: alice@example.com wrote or changed this plan's
content``: five equal target params out of nine leaves that distinguish a plan put the pair
over 0.5, though no text of hers that says what the plan does is in it); ``sp-later`` (the
same two plans, removal and add in two commits) ran, so the verdict hangs on the agent's
commit boundaries. The draft path held: ``draft``, ``draft-edit``, ``draft-pr`` (git scores
the draft C076 against her runbook, yet she was not made a writer) ran once each, as did
``straight``. Fix direction: weigh params that name a target (the same for every plan run on
it) like layout, or pair a move only when the leaves that say what a plan does (task, name,
why) carry over.

Fixed (2026-11-29): an action of the removed plan counts only when it survives (its
``why`` kept, or everything else it says); the five target params alone do not make the
agent's action hers, and the template strings weigh as layout: ``sp`` keeps 0.013 of her
plan, under 0.5, and runs on her approval.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, cases
from test_round2_execution_kit import shared

DRAFTS = ["draft", "draft-edit", "draft-pr"]
VIDS = [*DRAFTS, "straight", "sp", "sp-later"]
BROKEN: dict[str, object] = {}


def runbook(name: str, task: str, tag: str, why: str, n: int = 8) -> str:
    s = (
        f'plan:\n  name: "{name}"\n  task: "{task}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n"
    )
    for i in range(1, n + 1):
        s += f"  - id: {i}\n    tool: rec\n"
        if i > 1:
            s += f"    needs: [{i - 1}]\n"
        s += (
            f'    why: "{why} {i}"\n    on_failure: stop\n    timeout: 300\n    params:\n'
            f'      tag: "{tag}-{i}"\n      step: {i}\n      dry_run: false\n      retries: 3\n'
        )
    return s


def agent_rb(v: str) -> str:
    return runbook(f"agent db patch {v}", f"patch the db tier ({v})", v, f"db step of {v}")


def target(name: str, task: str, why: str, tag: str) -> str:
    return (
        f'plan:\n  name: "{name}"\n  task: "{task}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n"
        f'    why: "{why}"\n    params:\n      tag: "{tag}-1"\n      host: "db-prod-1.internal"\n'
        '      region: "eu-west-1"\n      port: 5432\n      user: "ops_admin"\n'
        '      db: "billing"\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("alice-rb", runbook("alice weekly patch", "patch the web tier", "a", "web step"))
    for v in ("sp", "sp-later"):
        lab.write(
            f"old-{v}", target("vacuum billing", "vacuum the billing db", "vacuum", f"old{v}")
        )
    lab.commit("alice writes her plans", ALICE)
    lab.run()
    (lab.repo / "drafts").mkdir()
    for v in ("draft", "draft-edit"):
        (lab.repo / f"drafts/{v}.yml").write_text(agent_rb(v))
    lab.commit("agent drafts runbooks", AGENT)
    p = lab.repo / "drafts/draft-edit.yml"
    p.write_text(p.read_text().replace("patch the db tier", "patch the database tier"))
    lab.commit("agent edits its draft", AGENT)
    for v in ("draft", "draft-edit"):
        (lab.repo / f"plans/{v}").mkdir(parents=True)
        lab.git("mv", f"drafts/{v}.yml", f"plans/{v}/PLAN.yml")
    lab.write("straight", agent_rb("straight"))
    lab.git("rm", "-q", "-r", "plans/old-sp", "plans/old-sp-later")
    lab.write("sp", target("restart billing", "restart the billing db", "restart it", "sp"))
    lab.commit("agent brings its plans in", AGENT)
    lab.write(
        "sp-later", target("restart billing", "restart the billing db", "restart it", "sp-later")
    )
    lab.commit("agent adds another", AGENT)
    lab.git("checkout", "-q", "-b", "side")
    (lab.repo / "drafts").mkdir(exist_ok=True)
    (lab.repo / "drafts/draft-pr.yml").write_text(agent_rb("draft-pr"))
    lab.commit("agent drafts on a branch", AGENT)
    (lab.repo / "plans/draft-pr").mkdir(parents=True)
    lab.git("mv", "drafts/draft-pr.yml", "plans/draft-pr/PLAN.yml")
    lab.commit("agent brings it in", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    lab.run()
    time.sleep(1.05)
    for v in VIDS:
        lab.set_status(v, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r56-lookalike", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_approval_of_the_agents_own_plan_runs(lab: Lab, vid: str) -> None:
    if "approval request" not in lab.codes(vid) and not lab.calls(f"{vid}-1"):
        raise BenchError(f"{vid}: no approval was read: {lab.codes(vid)[:400]}")
    assert "E_SELF_APPROVAL" not in lab.codes(vid), lab.codes(vid)[:800]
    assert len(lab.calls(f"{vid}-1")) == 1, lab.codes(vid)[:800]
    runs = [
        e
        for e in lab.report.get("executions", [])  # type: ignore[attr-defined]
        if e.get("plan") == f"plans/{vid}"
    ]
    assert runs and all(e.get("approval_valid") for e in runs), runs
