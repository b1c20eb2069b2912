# ruff: noqa: E501
"""Round 16, what show displays vs what runs: ``$<approval.*>`` in a gated action.

docs/execution.md (Gate): "Before approving the gate, ``plangate show PATH`` prints the values
the gated action will receive"; ``show`` says "WAITING HERE: approving the gate runs it with
these values:". docs/plan-format.md lists ``$<approval.by>``, ``$<approval.at>``,
``$<approval.commit>`` and ``$<approval.plan_hash>`` as references a param may hold.

Each variant is a plan whose action 1 (``rec``) runs, and whose action 2 (``rec``,
``requires_approval: true``) has params ``by``/``commit``/``at``/``h`` from ``$<approval.*>``
and ``e`` from action 1's output. Alice approves the plan; at the gate the bench takes
``plangate show --format json --config`` (its ``gate.values``: what the reviewer is told will
run); then the gate is approved:

- ``gate-bob``: Bob (an allowed approver) approves the gate;
- ``gate-alice``: Alice approves the gate herself (a second commit of hers);
- ``ask-bob``: not a gate but ``on_failure: ask``: action 1 (``flaky``, params from
  ``$<approval.by>``/``$<approval.commit>``) fails once; ``show`` prints "WAITING HERE:
  approving the gate runs it with these values"; Bob approves the retry.

Defence asserted: action 2 ran once, with exactly the values ``show`` displayed at the gate.

**Broke** (all three, round 16): the gated action receives the *gate* approval's values
(``by: bob@ops.example.com``, the gate commit's id and time) while ``show`` promised the first
approval's (``alice@example.com``, Alice's plan approval commit and time); the same for the retry of
``ask-bob`` (Bob's values; the first try had Alice's). Also asserted
(held): the output-filled value ``e`` is the one shown.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab
from test_round2_execution_kit import shared

GATERS = {"gate-bob": BOB, "gate-alice": ALICE}
ALL = [*GATERS, "ask-bob"]
FLAKY = """import json, os, sys
data = sys.stdin.read()
flag = os.environ["FLAG"]
if not os.path.exists(flag):
    open(flag, "w").write("failed once")
    sys.exit(3)
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": ["ask-bob-1"], "stdin": data}) + "\\n")
print("{}")
"""
ASK = """plan:
  name: "ask-bob"
  task: "ask values"
  status: pending_approval
available_tools:
  - name: flaky
actions:
  - id: 1
    tool: flaky
    why: "fails once"
    on_failure: ask
    params: {by: "$<approval.by>", commit: "$<approval.commit>"}
"""
BROKE = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 16: show at the gate displays the first approval's $<approval.*> values; the gated action receives the gate approval's",
)


def _plan(tag: str) -> str:
    return f"""plan:
  name: "{tag}"
  task: "gate values {tag}"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "first"
    params: {{tag: "{tag}-1"}}
    outputs:
      - {{name: echo, path: "$.json.echo"}}
  - id: 2
    tool: rec
    why: "gated"
    requires_approval: true
    params: {{tag: "{tag}-2", by: "$<approval.by>", commit: "$<approval.commit>", at: "$<approval.at>", h: "$<approval.plan_hash>", e: "$<actions[1].outputs.echo>"}}
"""


def _build(root: Path) -> Lab:
    root.mkdir(parents=True)
    (root / "flaky.py").write_text(FLAKY)
    argv = json.dumps([sys.executable, str(root / "flaky.py")])
    env = f"{{REC_LOG: {json.dumps(str(root / 'lab' / 'ran.log'))}, FLAG: {json.dumps(str(root / 'flag'))}}}"
    lab = Lab(root / "lab", tools=f"flaky: {{kind: exec, argv: {argv}, env: {env}}}\n")
    for vid in GATERS:
        lab.write(vid, _plan(vid))
    lab.write("ask-bob", ASK)
    lab.commit("plans", AGENT)
    lab.run()
    for vid in ALL:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    shown = {}
    for vid in ALL:
        out = lab.cli(
            "show", str(lab.repo / "plans" / vid), "--format", "json", "--config", str(lab.config)
        )
        shown[vid] = (lab.status()[f"plans/{vid}"]["status"], json.loads(out.stdout).get("gate"))
    lab.shown = shown  # type: ignore[attr-defined]
    for vid, who in [*GATERS.items(), ("ask-bob", BOB)]:
        lab.set_status(vid, "approved")
        lab.commit(f"approve the gate of {vid}", who)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r16-runs-gatevals", lambda root: _build(root / "gatevals"))


# round 16: all broke (BROKE was their strict xfail); fixed since: $<approval.*> names the
# approval that started the plan for the whole run (journal "run" record, Replay.plan_approval)
@pytest.mark.parametrize("vid", list(ALL))
def test_the_gated_action_gets_what_show_displayed(lab: Lab, vid: str) -> None:
    status, gate = lab.shown[vid]  # type: ignore[attr-defined]
    action = 1 if vid.startswith("ask") else 2
    assert status == "awaiting_approval"
    assert gate and gate.get("action") == action, gate
    calls = lab.calls(f"{vid}-{action}")
    assert len(calls) == 1, calls
    assert json.loads(calls[0]["stdin"]) == gate["values"]


@pytest.mark.parametrize("vid", list(GATERS))
def test_the_output_filled_value_is_the_one_shown(lab: Lab, vid: str) -> None:
    _, gate = lab.shown[vid]  # type: ignore[attr-defined]
    calls = lab.calls(f"{vid}-2")
    assert len(calls) == 1 and len(lab.calls(f"{vid}-1")) == 1
    assert json.loads(calls[0]["stdin"])["e"] == gate["values"]["e"] == {"tag": f"{vid}-1"}
