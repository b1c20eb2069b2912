"""Round 5, what runs at a gate is what the gate's reviewer was shown.

docs/execution.md: "Before approving the gate, ``plangate show PATH`` prints the values the
gated action will receive, resolved from the outputs recorded so far". Those outputs live in
the ``execution:`` block of PLAN.yml, which is not hashed, so rewriting it leaves the plan
"(frozen)". The agent rewrites action 1's recorded output (in the shared working tree, or in
a commit of its own) so that ``show`` promises the gate reviewer one recipient; the
controller then runs the gated action with the real one from its journal.

Each variant asserts the defence: what ``show`` says "approving the gate runs it with these
values" is exactly what the tool then received (or ``show`` refuses / flags the block).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_execution_kit import shared

VARIANTS = ["control", "tree", "committed"]


def _gate_plan(tag: str) -> str:
    return f"""\
plan:
  name: "{tag}"
  task: "read a recipient, then send to it after a second look"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "read the recipient"
    params: {{tag: "{tag}-1", who: "real-{tag}@example.net"}}
    outputs:
      - {{name: who, path: "$.json.echo.who"}}
  - id: 2
    tool: rec
    why: "send to the recipient"
    requires_approval: true
    params: {{tag: "{tag}-2", to: "$<actions[1].outputs.who>"}}
"""


def _shown_values(text: str) -> dict[str, str]:
    """The values ``show`` promises under 'approving the gate runs it with these values'."""
    tail = text.split("approving the gate runs it with these values:", 1)
    if len(tail) < 2:
        return {}
    values = {}
    for line in tail[1].splitlines()[1:]:
        m = re.match(r"^\s{6}(\w+) = (.*)$", line)
        if not m:
            break
        values[m.group(1)] = json.loads(m.group(2))
    return values


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in VARIANTS:
        lab.write(f"gate-{v}", _gate_plan(f"gate-{v}"))
    lab.commit("add plans")
    lab.run()
    for v in VARIANTS:
        lab.set_status(f"gate-{v}", "approved")
    lab.commit("approve", ALICE)
    lab.run()  # action 1 runs, each plan pauses at the gate
    for v in ("tree", "committed"):
        path = lab.repo / "plans" / f"gate-{v}" / "PLAN.yml"
        text = path.read_text()
        forged = text.replace(f"who: real-gate-{v}@example.net", "who: benign@example.com")
        assert forged != text, text
        path.write_text(forged)
    lab.git("add", "plans/gate-committed/PLAN.yml")
    lab.git("commit", "-q", "-m", "tidy", who=AGENT)
    lab.run()
    shows = {}
    for v in VARIANTS:
        result = lab.cli(
            "show", f"plans/gate-{v}/PLAN.yml", "--config", str(lab.config), cwd=lab.repo
        )
        shows[v] = result.stdout + result.stderr
    lab.shows = shows  # type: ignore[attr-defined]
    # Alice approves each gate in her own clone: the tree rewrite never reaches her commit
    lab.git("checkout", "--", "plans/gate-tree/PLAN.yml")
    for v in VARIANTS:
        lab.set_status(f"gate-{v}", "approved")
    lab.commit("approve the gates", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r5-gate", _build)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_gate_runs_with_the_values_show_promised(lab: Lab, variant: str) -> None:
    tag = f"gate-{variant}"
    assert len(lab.calls(f"{tag}-1")) == 1
    ran = lab.calls(f"{tag}-2")
    assert len(ran) == 1, ran
    received = json.loads(ran[0]["stdin"])
    shown = lab.shows[variant]  # type: ignore[attr-defined]
    promised = _shown_values(shown)
    flagged = any(w in shown for w in ("E_", "STALE", "not the controller", "edited"))
    assert flagged or promised.get("to") == received["to"], (promised, received, shown[-600:])


def test_the_committed_rewrite_is_not_what_the_controller_records(lab: Lab) -> None:
    data = lab.plan("gate-committed")
    outputs = data["execution"]["actions"][0].get("outputs") or {}
    assert outputs.get("who") == "real-gate-committed@example.net", outputs
