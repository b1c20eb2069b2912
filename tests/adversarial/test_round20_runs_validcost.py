"""Round 20, one hostile plan never stalls the pass: a guard that validation checks value by
value, before anyone approved anything.

docs/plan-format.md: a guard whose rules no value can meet is refused at validation
(``E_SCHEMA_INVALID``: "``one_of`` values none of which meets the guard's other rules"), and a
``matches`` check "that takes over 0.1 s, a pattern backtracking on a crafted value, fails".
So validation tries each ``one_of`` value against ``matches``, each try cut at 0.1 s, with no
bound on their sum: ``n`` crafted values cost ``n`` x 0.1 s of the controller's pass.

The agent submits ``vd`` (never approved): one action with ``guards: [{param: v, matches:
"(a|aa)+", one_of: [50 x "aaaa...a!" (30 a)]}]`` (a 2 KB guard), beside the honest ``zz``
(submitted in the same commit). One ``run --once`` pass (the one that validates and freezes),
timed; then ``plangate validate --config`` of ``vd``, timed.

- ``freeze-pass``: asserted the pass takes at most 3 s (it takes about 1 s without ``vd``)
  and freezes ``zz``. **Broke** (round 20): about 6 s; linear in the number of values (by
  hand: 50 values 5.1 s, and a 100 KB plan of 2,000 values would hold every pass for over
  200 s), paid on every pass that validates a new version the agent pushes.
- ``validate-cli``: ``plangate validate`` of ``vd`` takes at most 3 s. **Broke**: about 5.7 s.

Both end with the right verdict (``E_SCHEMA_INVALID``: the guard can never pass); the
defence wanted is a bound on the whole guard's (or plan's) checking, as round 13's 0.5 s
budget bounds a JSONPath query's ``match()`` calls.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import Lab, plan_text
from test_round2_execution_kit import shared

LIMIT = 3.0
GUARD = {"param": "v", "matches": "(a|aa)+", "one_of": ["a" * 30 + "!"] * 50}
R20 = "round 20: validation tries every one_of value against matches (0.1 s each), no total bound"


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write(
        "vd",
        "plan:\n  name: vd\n  task: t\n  status: pending_approval\navailable_tools: [{name: rec}]\n"
        "actions:\n  - id: 1\n    tool: rec\n    why: w\n    params: {tag: vd, v: x}\n"
        f"    guards: [{json.dumps(GUARD)}]\n",
    )
    lab.write("zz", plan_text("zz"))
    lab.commit("plans")
    start = time.monotonic()
    lab.run()
    lab.pass_took = time.monotonic() - start  # type: ignore[attr-defined]
    start = time.monotonic()
    result = lab.cli("validate", "plans/vd", "--config", str(lab.config), cwd=lab.repo, timeout=300)
    lab.validate_took = time.monotonic() - start  # type: ignore[attr-defined]
    lab.validate_out = result.stdout + result.stderr  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r20-validcost", _build)


# round 20: broke (R20); fixed since (params_schema and validation under one time budget)
def test_freeze_pass(lab: Lab) -> None:
    assert lab.status()["plans/zz"]["frozen_hash"], "the honest plan was not frozen"
    assert lab.pass_took <= LIMIT, f"the pass took {lab.pass_took:.1f} s validating one guard"  # type: ignore[attr-defined]


# round 20: broke (R20); fixed since (params_schema and validation under one time budget)
def test_validate_cli(lab: Lab) -> None:
    assert "Traceback" not in lab.validate_out  # type: ignore[attr-defined]
    assert lab.validate_took <= LIMIT, f"validate took {lab.validate_took:.1f} s"  # type: ignore[attr-defined]


def test_the_verdict_is_right(lab: Lab) -> None:
    assert lab.status()["plans/vd"]["status"] == "invalid"
    assert "E_SCHEMA_INVALID" in lab.codes("vd")
