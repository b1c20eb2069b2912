"""Round 4, approval side: an approval answers ONE question. A gate approval approves one
gate, a resume one retry, an answer to ``on_failure: ask`` one more try (docs/plan-format.md:
"Each approval answers one ask"). Round 1 showed a first approval brought back by git for
another *version* is E_APPROVAL_REPLAYED; here the version stays the same and the replayed
approval is brought back for the *next* pause of the same run.

Attacks (Alice is an approver; the agent is not and only runs ``git cherry-pick``):

- ``gates``: actions 2 and 3 are gated. Alice approves the plan and gate 2; the controller
  pauses at gate 3 (its ``await-approval`` commit is a second after Alice's); the agent
  cherry-picks Alice's gate-2 approval commit (author, author date and diff
  ``awaiting_approval -> approved`` apply unchanged). ``cli-gates``: the same with the gate-2
  approval made by ``plangate approve`` (its ``Plan-Hash:`` trailer names the same hash).
- ``resume``: action 1 fails; Alice resumes (``failed -> approved``), it fails again; the
  agent cherry-picks her resume.
- ``ask``: action 1 has ``on_failure: ask``; Alice answers the first ask, it fails again and
  asks again; the agent cherry-picks her answer.
- ``gate-first`` / ``resume-first``: nobody ever approves the gate (or the resume): the agent
  cherry-picks Alice's *first* approval of the plan with ``-X theirs`` (the status line then
  reads ``approved`` again) once the run paused at its only gate (or failed).

Defence: the replayed approval is refused (E_APPROVAL_REPLAYED: dated before the pause it
would answer), gate 3 never runs, the failing action runs exactly twice. Control: the plan
approvals Alice really made run what they approve (gate 2 ran once, each retry once).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, RECORDER, BenchError, Lab, plan_text
from test_round2_approval_authors import shared_lab

R4 = "round 4: "
VIDS = ["gates", "resume", "ask", "cli-gates"]
FIRST = ["gate-first", "resume-first"]


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=R4 + why)


GATES = plan_text(
    "gates",
    extra_actions="""\
  - id: 2
    tool: rec
    why: "gate two"
    requires_approval: true
    params: {tag: "gates-2"}
  - id: 3
    tool: rec
    why: "gate three"
    requires_approval: true
    params: {tag: "gates-3"}
""",
)
GATE_FIRST = plan_text(
    "gate-first",
    extra_actions="""\
  - id: 2
    tool: rec
    why: "the only gate"
    requires_approval: true
    params: {tag: "gate-first-2"}
""",
)
RESUME = (
    plan_text("resume").replace("tool: rec", "tool: flop").replace("- name: rec", "- name: flop")
)
ASK = plan_text("ask").replace("tool: rec", "tool: flop").replace("- name: rec", "- name: flop")
ASK = ASK.replace("    why:", "    on_failure: ask\n    why:", 1)


def _cli_approve(lab: Lab, vid: str) -> str:
    """``plangate approve`` run by Alice in her checkout (Plan:/Plan-Hash: trailers)."""
    args = [
        sys.executable,
        "-m",
        "controller",
        "approve",
        "--config",
        str(lab.config),
        f"plans/{vid}",
    ]
    result = subprocess.run(
        args, cwd=lab.repo, env=lab.env(ALICE), capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise BenchError(f"plangate approve failed: {result.stderr}")
    return lab.head()


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    failing = root / "fail.py"  # records the call, then fails
    failing.write_text(RECORDER.replace("print(json.dumps", "sys.exit(1)\nprint(json.dumps"))
    argv = json.dumps([sys.executable, str(failing), "{tag}"])
    log = json.dumps(str(root / "ran.log"))
    lab = Lab(root, tools=f"flop: {{kind: exec, argv: {argv}, env: {{REC_LOG: {log}}}}}\n")
    lab.write("gates", GATES)
    lab.write("resume", RESUME)
    lab.write("ask", ASK)
    lab.write("cli-gates", GATES.replace('"gates', '"cli-gates'))
    lab.write("gate-first", GATE_FIRST)
    lab.write("resume-first", RESUME.replace('"resume', '"resume-first'))
    lab.commit("agent adds gates, resume, ask, gate-first, resume-first", AGENT)
    lab.run()  # freeze
    firsts = {vid: lab.approve(vid, ALICE) for vid in VIDS + FIRST}
    time.sleep(1.1)  # the start and the pause are dated after Alice's approvals
    lab.run()  # gates: action 1, paused at gate 2; resume: failed; ask: asks
    answers = {
        vid: _cli_approve(lab, vid) if vid == "cli-gates" else lab.approve(vid, ALICE)
        for vid in VIDS
    }
    time.sleep(1.1)  # the next pause is dated after Alice's answers
    lab.run()  # gates: action 2, paused at gate 3; resume/ask: failed/asking again
    for vid in VIDS:
        lab.git("cherry-pick", answers[vid], who=AGENT)
    for vid in FIRST:
        lab.git("cherry-pick", "-X", "theirs", firsts[vid], who=AGENT)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r4-replay-steps", _build)


def test_the_approvals_alice_made_ran_what_they_approve(lab: Lab) -> None:
    assert len(lab.calls("gates")) == 1 and len(lab.calls("gates-2")) == 1, lab.codes("gates")
    assert len(lab.calls("resume")) >= 2 and len(lab.calls("ask")) >= 2


@pytest.mark.parametrize("vid", ["gates", "cli-gates"])
def test_a_gate_approval_approves_one_gate(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-2")) == 1, lab.codes(vid)
    assert lab.calls(f"{vid}-3") == [], f"gate 3 ran: {lab.codes(vid)}"
    assert lab.plan(vid)["plan"]["status"] == "awaiting_approval", lab.codes(vid)


def test_a_resume_resumes_once(lab: Lab) -> None:
    assert len(lab.calls("resume")) == 2, (
        f"ran {len(lab.calls('resume'))} times: {lab.codes('resume')}"
    )


def test_an_answer_answers_one_ask(lab: Lab) -> None:
    assert len(lab.calls("ask")) == 2, f"ran {len(lab.calls('ask'))} times: {lab.codes('ask')}"


def test_the_audit_does_not_call_a_replayed_answer_valid(lab: Lab) -> None:
    replayed = {
        row[0]
        for row in lab.log_rows("%H%x00%ae%x00%ce%x01")
        if row[1] == ALICE[1] and row[2] == AGENT[1]  # Alice's commit, put back by the agent
    }
    assert len(replayed) == 6
    code, report = lab.audit()
    valid = [
        e
        for e in report.get("executions") or []
        if e.get("approval_commit") in replayed and e.get("approval_valid")
    ]
    # the controller refused every replay (E_APPROVAL_REPLAYED), so nothing ran on one:
    # the audit has no execution to call valid, and the refusals are honest history
    assert valid == [] and code in (0, 1), valid


def test_a_first_approval_is_not_a_gate_approval(lab: Lab) -> None:
    assert len(lab.calls("gate-first")) == 1, lab.codes("gate-first")
    assert lab.calls("gate-first-2") == [], f"the gate ran: {lab.codes('gate-first')}"


def test_a_first_approval_is_not_a_resume(lab: Lab) -> None:
    runs = lab.calls("resume-first")
    assert len(runs) == 1, f"ran {len(runs)} times: {lab.codes('resume-first')}"
