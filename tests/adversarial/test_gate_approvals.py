"""Property: a gate (``requires_approval``) or a resume is approved only like a plan is (SPEC
§4, §5: same rules, same hash).

Attacks while a plan waits at its gate or after it failed: Mallory sets ``approved``; the
agent (the plan's author) does; Mallory with ``Co-authored-by: Alice``; Alice approves the
gate in a commit that also changes the gated action; the agent changes the gated action while
the plan waits and Alice then approves. Defence: refused with the code, the gated action never
runs (or never with changed params). Controls: Alice's gate approval and resume do run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text, play
from test_round2_execution_kit import shared

GATED = (
    plan_text("{tag}")
    + """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
)
FAILING = """\
plan:
  name: "{tag}"
  task: "fails, then is resumed"
  status: pending_approval
available_tools:
  - name: flaky
actions:
  - id: 1
    tool: flaky
    why: "fails the first time"
    params: {{tag: "{tag}"}}
"""


def submit(lab: Lab, vid: str) -> None:
    text = FAILING if vid.startswith("resume") else GATED
    lab.write(vid, text.replace("{tag}", vid).replace("{{", "{").replace("}}", "}"))
    lab.commit(f"add {vid}", AGENT)


def approve_by(who: tuple[str, str], message: str = "", change: bool = False) -> object:
    def step(lab: Lab, vid: str) -> None:
        lab.set_status(vid, "approved")
        if change:
            path = lab.repo / "plans" / vid / "PLAN.yml"
            path.write_text(path.read_text().replace(f'"{vid}-gated"', f'"{vid}-gated-CHANGED"'))
        lab.commit(f"approve {vid}" + (f"\n\n{message}" if message else ""), who)

    return step


def agent_changes(lab: Lab, vid: str) -> None:
    path = lab.repo / "plans" / vid / "PLAN.yml"
    path.write_text(path.read_text().replace(f'"{vid}-gated"', f'"{vid}-gated-CHANGED"'))
    lab.commit(f"tweak {vid}", AGENT)


ALICE_OK = approve_by(ALICE)
ATTACKS = {
    "gate-by-mallory": ([submit, ALICE_OK, approve_by(MALLORY)], {"E_APPROVER_NOT_ALLOWED"}),
    "gate-by-author": (
        [submit, ALICE_OK, approve_by(AGENT)],
        {"E_SELF_APPROVAL", "E_APPROVER_NOT_ALLOWED"},
    ),
    "gate-by-mallory-coauthor-alice": (
        [submit, ALICE_OK, approve_by(MALLORY, "Co-authored-by: Alice <alice@example.com>")],
        {"E_APPROVER_NOT_ALLOWED"},
    ),
    "gate-with-content-change": (
        [submit, ALICE_OK, approve_by(ALICE, change=True)],
        {"E_PLAN_HASH_MISMATCH"},
    ),
    "gate-after-agent-change": (
        [submit, ALICE_OK, agent_changes, ALICE_OK],
        {"E_PLAN_HASH_MISMATCH"},
    ),
    "resume-by-mallory": ([submit, ALICE_OK, approve_by(MALLORY)], {"E_APPROVER_NOT_ALLOWED"}),
    "resume-by-author": (
        [submit, ALICE_OK, approve_by(AGENT)],
        {"E_SELF_APPROVAL", "E_APPROVER_NOT_ALLOWED"},
    ),
}
CONTROLS = {
    "gate-by-alice": [submit, ALICE_OK, ALICE_OK],
    "resume-by-alice": [submit, ALICE_OK, ALICE_OK],
}

FLAKY = """\
import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
marker = os.path.join(os.environ["MARKS"], sys.argv[1])
if not os.path.exists(marker):
    open(marker, "w").close()
    sys.exit(3)
print("{}")
"""


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    flaky = lab.root / "flaky.py"
    flaky.write_text(FLAKY)
    marks = lab.root / "marks"
    marks.mkdir()
    argv = json.dumps([sys.executable, "-I", "-S", str(flaky), "{tag}"])
    env = json.dumps({"REC_LOG": str(lab.log), "MARKS": str(marks)})
    lab.write_config(tools=f"flaky: {{kind: exec, argv: {argv}, env: {env}}}\n")
    play(lab, {**{vid: steps for vid, (steps, _) in ATTACKS.items()}, **CONTROLS})
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-gates", _build_lab)


def test_alice_approves_a_gate_and_a_resume(lab: Lab) -> None:
    assert len(lab.calls("gate-by-alice-gated")) == 1
    assert len(lab.calls("resume-by-alice")) == 2


@pytest.mark.parametrize("vid", list(ATTACKS))
def test_a_gate_or_resume_is_approved_only_by_the_rules(lab: Lab, vid: str) -> None:
    if vid.startswith("resume"):
        assert len(lab.calls(vid)) == 1, "the failed action was retried"
    else:
        assert len(lab.calls(vid)) == 1
        assert lab.calls(f"{vid}-gated") == [] and lab.calls(f"{vid}-gated-CHANGED") == []
    assert lab.refusal(vid) in ATTACKS[vid][1] or any(
        code in lab.codes(vid) for code in ATTACKS[vid][1]
    ), lab.codes(vid)[:800]
