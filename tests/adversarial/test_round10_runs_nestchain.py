# ruff: noqa: E501  (plan texts are kept on one line as written)
"""Round 10, stall the controller: a chain of nested plans, each pinning the next.

docs/plan-format.md: a nested plan nests "one level only". docs/formats.md: an ActionPlan
``nested_plan`` step becomes its own PLAN.yml at ``<plan folder>/step-N`` pinned by its hash,
and the daemon converts a ``PLAN.json`` an agent commits in a plan folder. So one committed
file (a few KB) whose ``nested_plan`` steps nest ``DEPTH`` deep makes the controller write
the chain ``plans/deep/step-1/step-1/...`` and validate it. The validator walks the whole
chain before it finds the second level, and the walk is exponential in the depth (measured:
depth 11: 3.6 s, 12: 3.7 s of validation, 13: 8.3 s, 14: 21 s for the pass; ``plangate
validate plans/deep/PLAN.yml`` alone, depth 13: 10.8 s). At depth 16 the pass runs for
minutes, at 20 for hours: the daemon never gets to the next approval, every plan stalls.

Defence asserted: with the chain committed beside an honest plan Alice approved, the
``run --once`` pass ends within ``BOUND`` seconds, the honest plan runs exactly once, the
chain's plan is refused (``invalid`` with an E_ code), and ``plangate status`` answers
within the bound too.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from typing import Any

import pytest
from advkit import AGENT, Lab, plan_text

DEPTH = 16
# Not timing asserts: 16 levels took minutes to hours when exponential (round 10); the fixed
# walk stops at the second level, about a second. The bounds only tell the two apart.
BOUND = 60.0  # the pass (an honest one here takes about 1 s)
BOUND_READ = 60.0  # status, validate


def _ap(tag: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "plan_version": 1,
        "plan_id": f"plan:{tag}",
        "title": tag,
        "workspace_id": "/w",
        "steps": steps,
    }


def _chain(depth: int) -> dict[str, Any]:
    doc = _ap(
        "leaf",
        [
            {
                "step_number": 1,
                "action": {"type": "store_data", "key": "leaf", "value": 1},
                "description": "leaf",
            }
        ],
    )
    for i in range(depth):
        doc = _ap(
            f"level{i}",
            [
                {
                    "step_number": 1,
                    "action": {"type": "nested_plan", "plan": doc},
                    "description": "nest",
                }
            ],
        )
    return doc


def _timed(
    lab: Lab, *args: str, bound: float = BOUND, both: bool = False
) -> tuple[float, int | None, str]:
    start = time.monotonic()
    try:
        result = lab.cli(*args, "--config", str(lab.config), timeout=bound)
    except subprocess.TimeoutExpired:  # the child is killed by subprocess.run
        return time.monotonic() - start, None, ""
    return (
        time.monotonic() - start,
        result.returncode,
        result.stdout + (result.stderr if both else ""),
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    root = tmp_path_factory.mktemp("r10-nestchain")
    py, rec = sys.executable, root / "rec.py"
    lab = Lab(
        root,
        tools=f'store_data: {{kind: exec, argv: ["{py}", "{rec}", "{{key}}"], env: {{REC_LOG: "{root / "ran.log"}"}}}}\n',
    )
    lab.write("honest", plan_text("honest"))
    lab.commit("honest plan", AGENT)
    lab.run()
    lab.approve("honest")  # Alice approves; the next pass should run it
    lab.write("deep", json.dumps(_chain(DEPTH)), filename="PLAN.json")
    lab.commit("a plan in ActionPlan JSON", AGENT)
    lab.pass_wall, lab.pass_rc, _ = _timed(lab, "run", "--once")
    lab.status_wall, lab.status_rc, lab.status_out = _timed(
        lab, "status", "--json", bound=BOUND_READ
    )
    _hand_chain(lab, DEPTH)  # working tree only: ``validate`` reads files, not commits
    lab.validate_wall, lab.validate_rc, lab.validate_out = _timed(
        lab, "validate", str(lab.repo / "plans/hand/PLAN.yml"), bound=BOUND_READ, both=True
    )
    return lab


def _hand_chain(lab: Lab, depth: int) -> None:
    """The same chain written by hand as PLAN.yml files (no conversion), each pinning the
    next by its real hash (JCS of ASCII data is ``json.dumps`` with sorted keys)."""

    def pin(view: dict[str, Any]) -> str:
        data = json.dumps(view, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return "sha256:" + hashlib.sha256(data.encode()).hexdigest()

    view: dict[str, Any] = {
        "plan": {"name": "leaf", "task": "t"},
        "available_tools": [{"name": "store_data"}],
        "actions": [{"id": 1, "tool": "store_data", "why": "w", "params": {"key": "hand-leaf"}}],
    }
    for level in range(depth, -1, -1):
        rel = "hand" + "/s" * level
        status = "draft" if level else "pending_approval"
        body = (
            f'plan:\n  name: {json.dumps(view["plan"]["name"])}\n  task: "t"\n  status: {status}\n'
        )
        body += "".join(f"{k}: {json.dumps(v)}\n" for k, v in view.items() if k != "plan")
        lab.write(rel, body)
        view = {
            "plan": {"name": f"level{level}", "task": "t"},
            "available_tools": [{"name": "store_data"}],
            "actions": [{"id": 1, "why": "n", "plan": {"path": f"plans/{rel}", "hash": pin(view)}}],
        }


def test_the_pass_ends_and_the_approved_plan_runs(lab: Lab) -> None:
    assert lab.pass_rc is not None, f"run --once still busy after {lab.pass_wall:.1f} s"
    assert lab.pass_rc == 0
    assert len(lab.calls("honest")) == 1


def test_status_answers_and_names_the_chain(lab: Lab) -> None:
    assert lab.status_rc is not None, f"status still busy after {lab.status_wall:.1f} s"
    rows = {r["plan"]: r for r in json.loads(lab.status_out)}
    assert "E_" in json.dumps(rows.get("plans/deep", {}))


def test_the_chain_itself_never_runs(lab: Lab) -> None:
    assert lab.calls("leaf") == []


def test_validate_of_a_hand_written_chain_answers(lab: Lab) -> None:
    """No conversion needed: the same chain as PLAN.yml files the agent writes."""
    assert lab.validate_rc is not None, f"validate still busy after {lab.validate_wall:.1f} s"
    assert "E_" in lab.validate_out
