# ruff: noqa: E501  (plan texts and tool argv are kept on one line as written)
"""Round 3, what runs / how often / what is recorded: git commits that land *while* a plan
runs, and the order of gate, ask and abort decisions.

Round 1 (``test_working_tree.py``) had action 1 rewrite the working tree mid-run; here
action 1 (an agent sharing the checkout, or Alice at her desk: the ``tamper`` exec tool)
*commits* on the watched branch while the controller runs the plan with ``run --once``:
the plan's hashed content (action 2's params), a non-hashed block, an empty PLAN.yml, or
Alice's ``status: aborted``. Defence: action 2 runs with its approved params, or not at
all after the abort; the controller's outcome commit stamps only content that ran; the
pass survives and the bystander runs in it; the outcome is recorded.

Then gates and asks: a plan's own approval commit, or a gate's approval, never also
answers an ``on_failure: ask`` (the failed action is not retried without a new decision);
an abort and a gate approval committed in either order before the controller's pass end
the plan one way (aborted, or the gate runs once), never wedge it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round3_runs_kit import shared_eager

TAMPER = r"""
import os, re, subprocess, sys
mode, folder = sys.argv[1:3]
who = ("Alice", "alice@example.com") if mode == "m-alice-abort" else ("Agent", "agent@example.com")
env = dict(os.environ, GIT_AUTHOR_NAME=who[0], GIT_AUTHOR_EMAIL=who[1],
           GIT_COMMITTER_NAME=who[0], GIT_COMMITTER_EMAIL=who[1])
plan = os.path.join(folder, "PLAN.yml")
text = open(plan).read()
if mode == "m-params":
    text = text.replace('-step2"', '-step2-FORGED"')
elif mode == "m-metadata":
    text = text.replace("actions:\n", "metadata: {note: mid-run}\nactions:\n", 1)
elif mode == "m-alice-abort":
    text = re.sub(r"(?m)^  status: .*$", "  status: aborted", text, count=1)
elif mode == "m-empty":
    text = ""
open(plan, "w").write(text)
subprocess.run(["git", "commit", "-qam", "mid-run " + mode], cwd=folder, env=env, check=True)
print('{"ok": true}')
"""

MIDRUN = ["m-alice-abort", "m-empty", "m-metadata", "m-params"]
BYSTANDER = "zz-bystander"
GATES = ["g-abort-then-approve", "g-approve-then-abort", "g-abort-revert-approve"]
ASKS = ["a-ask-after-plan-approval", "a-ask-after-gate-approval"]


def _midrun_plan(lab: Lab, mode: str) -> str:
    folder = lab.repo / "plans" / mode
    return f"""\
plan:
  name: "{mode}"
  task: "a commit lands while the plan runs"
  status: pending_approval
available_tools: [{{name: tamper}}, {{name: rec}}]
actions:
  - id: 1
    tool: tamper
    why: "someone commits while the controller runs this plan"
    params: {{mode: "{mode}", folder: "{folder}"}}
  - id: 2
    tool: rec
    why: "the approved next step"
    params: {{tag: "{mode}-step2"}}
"""


def _gated(tag: str) -> str:
    return plan_text(
        tag,
        extra_actions=f"""\
  - id: 2
    tool: rec
    why: "gated"
    requires_approval: true
    params: {{tag: "{tag}-gated"}}
""",
    )


def _ask(tag: str, gate: bool) -> str:
    text = plan_text(
        tag,
        extra_actions=f"""\
  - id: 2
    tool: fail
    why: "fails; a human decides"
    on_failure: ask
    params: {{tag: "{tag}"}}
{"    requires_approval: true" + chr(10) if gate else ""}\
  - id: 3
    tool: rec
    why: "after"
    params: {{tag: "{tag}-3"}}
""",
    )
    return text.replace("  - name: rec\n", "  - name: rec\n  - name: fail\n")


def _fails(lab: Lab, tag: str) -> int:
    path = lab.root / "fail.log"
    return path.read_text().split().count(tag) if path.exists() else 0


def _build(root: Path) -> Lab:
    (root / "tamper.py").write_text(TAMPER)
    fail = json.dumps(["/bin/sh", "-c", f'echo "$1" >> {root}/fail.log; exit 3', "sh", "{tag}"])
    lab = Lab(
        root,
        tools=f"tamper: {{kind: exec, argv: {json.dumps([sys.executable, str(root / 'tamper.py'), '{mode}', '{folder}'])}}}\n"
        f"fail: {{kind: exec, argv: {fail}}}\n",
        extra="demo: true\n",
    )
    for mode in MIDRUN:
        lab.write(mode, _midrun_plan(lab, mode))
    lab.write(BYSTANDER, plan_text(BYSTANDER))
    for tag in GATES:
        lab.write(tag, _gated(tag))
    lab.write(ASKS[0], _ask(ASKS[0], gate=False))
    lab.write(ASKS[1], _ask(ASKS[1], gate=True))
    lab.commit("plans", AGENT)
    lab.run()
    for slug in [*MIDRUN, BYSTANDER, *GATES, *ASKS]:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    # pass 1: the mid-run commits land; gated plans reach their gates, asks their failures
    first = lab.run(check=False)
    lab.pass1 = {"rc": first.returncode, "stderr": first.stderr[-600:]}
    lab.bystander_in_pass1 = len(lab.calls(BYSTANDER))
    # the gate decisions, two commits each, before the controller's next pass
    lab.set_status(GATES[0], "aborted")
    lab.commit("abort", AGENT)
    lab.set_status(GATES[0], "approved")
    lab.commit("approve the gate", ALICE)
    lab.set_status(GATES[1], "approved")
    lab.commit("approve the gate", ALICE)
    lab.set_status(GATES[1], "aborted")
    lab.commit("abort", AGENT)
    lab.set_status(GATES[2], "aborted")
    abort = lab.commit("abort", AGENT)
    lab.git("revert", "--no-edit", abort, who=AGENT)
    lab.set_status(GATES[2], "approved")
    lab.commit("approve the gate", ALICE)
    lab.set_status(ASKS[1], "approved")  # the gate of action 2: it runs, fails and asks
    lab.commit("approve the gate", ALICE)
    lab.run(check=False)
    lab.run(check=False)
    lab.asks_before_answer = {tag: _fails(lab, tag) for tag in ASKS}
    lab.set_status(ASKS[0], "approved")  # Alice answers the ask once: one more try
    lab.commit("try again", ALICE)
    lab.run(check=False)
    lab.run(check=False)
    lab.final = lab.status()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_eager(tmp_path_factory, "r3-midrun")


# -- commits that land while the plan runs ----------------------------------------------


@pytest.mark.parametrize("mode", ["m-params", "m-metadata"])
def test_a_commit_mid_run_never_changes_the_next_action(lab: Lab, mode: str) -> None:
    assert len(lab.calls(f"{mode}-step2")) == 1, "the approved next step did not run once"
    assert lab.calls(f"{mode}-step2-FORGED") == [], "the next step ran with committed edits"


def test_the_outcome_commit_stamps_only_content_that_ran(lab: Lab) -> None:
    stamped = [
        r
        for r in lab.log_rows()
        if r[2] == "plangate@localhost"
        and "Plan: plans/m-params" in r[4]
        and "Plan-Status: completed" in r[4]
    ]
    assert stamped, "no outcome commit for plans/m-params"
    text = lab.git("show", f"{stamped[0][0]}:plans/m-params/PLAN.yml")
    assert "FORGED" not in text, "the controller stamped 'completed' on params that never ran"


def test_an_abort_committed_mid_run_stops_before_the_next_action(lab: Lab) -> None:
    assert lab.calls("m-alice-abort-step2") == [], "the next action ran after Alice's abort"
    assert lab.final["plans/m-alice-abort"]["status"] == "aborted"


def test_an_empty_plan_committed_mid_run_costs_only_its_plan(lab: Lab) -> None:
    assert lab.pass1["rc"] == 0, f"the pass died: {lab.pass1['stderr']}"
    assert lab.bystander_in_pass1 == 1, "the bystander did not run in the pass"


def test_an_empty_plan_committed_mid_run_still_gets_its_outcome_recorded(lab: Lab) -> None:
    assert len(lab.calls("m-empty-step2")) == 1  # it did run (once)
    assert any(s.startswith("plangate: complete ") for s in lab.subjects("m-empty")), (
        "no outcome commit: git history does not show that the plan ran"
    )


def test_the_bystander_ran_once_in_the_end(lab: Lab) -> None:
    assert len(lab.calls(BYSTANDER)) == 1
    assert lab.final[f"plans/{BYSTANDER}"]["status"] == "completed"


# -- abort and gate approval in either order before one pass ----------------------------


@pytest.mark.parametrize("tag", ["g-abort-then-approve", "g-abort-revert-approve"])
def test_an_abort_before_the_gate_approval_wins(lab: Lab, tag: str) -> None:
    assert lab.calls(f"{tag}-gated") == [], "the gated action ran after the abort"
    assert lab.final[f"plans/{tag}"]["status"] == "aborted"


def test_an_abort_after_the_gate_approval_ends_the_plan_one_way(lab: Lab) -> None:
    tag = "g-approve-then-abort"
    ran = len(lab.calls(f"{tag}-gated"))
    status = lab.final[f"plans/{tag}"]["status"]
    assert ran <= 1
    assert (status, ran) in (("aborted", 0), ("completed", 1)), f"wedged: {status}, ran {ran}"


# -- an ask is answered only by a new decision --------------------------------------------


@pytest.mark.parametrize("tag", ASKS)
def test_no_earlier_approval_answers_an_ask(lab: Lab, tag: str) -> None:
    assert lab.asks_before_answer[tag] == 1, "the failed action was tried again unasked"
    assert lab.calls(f"{tag}-3") == []


def test_one_answer_buys_one_more_try(lab: Lab) -> None:
    tag = ASKS[0]
    assert _fails(lab, tag) == 2, "one answer to an ask must try the action exactly once more"
    assert lab.final[f"plans/{tag}"]["status"] == "awaiting_approval"
    assert _fails(lab, ASKS[1]) == 1
