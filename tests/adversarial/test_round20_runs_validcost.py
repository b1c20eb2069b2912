"""Round 20, one hostile plan never stalls the pass: a guard that validation checks value by
value, before anyone approved anything.

docs/plan-format.md: a guard whose rules no value can meet is refused at validation
(``E_SCHEMA_INVALID``: "``one_of`` values none of which meets the guard's other rules"), and a
``matches`` check "that takes over 0.1 s, a pattern backtracking on a crafted value, fails".
So validation tries each ``one_of`` value against ``matches``, each try cut at 0.1 s, with no
bound on their sum: ``n`` crafted values cost ``n`` x 0.1 s of the controller's pass.

The agent submits ``vd`` (never approved): one action with ``guards: [{param: v, matches:
"(a|aa)+", one_of: [50 x "aaaa...a!" (30 a)]}]`` (a 2 KB guard), beside the honest ``zz``
(submitted in the same commit). One ``run --once`` pass (the one that validates and freezes);
then ``plangate validate --config`` of ``vd``.

- ``freeze-pass``: asserted the pass freezes ``zz`` and refuses ``vd`` at the budget: its
  recorded reason is ``E_SCHEMA_INVALID`` "its one_of values could not be checked against
  matches within 0.5 s" (each value backtracks to its 0.1 s timeout, so the 50 of them never
  fit in the budget; without one the pass tried them all and said "none of the one_of values
  meets its other rules"). **Broke** (round 20): the pass took about 6 s; linear in the
  number of values (by hand: 50 values 5.1 s, and a 100 KB plan of 2,000 values would hold
  every pass for over 200 s), paid on every pass that validates a new version the agent
  pushes.
- ``validate-cli``: ``plangate validate`` of ``vd`` says the same (the budget's refusal),
  without a traceback. **Broke**: about 5.7 s.

Both end with the right verdict (``E_SCHEMA_INVALID``: the guard can never pass); the
defence wanted is a bound on the whole guard's (or plan's) checking, as round 13's 0.5 s
budget bounds a JSONPath query's ``match()`` calls.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import Lab, plan_text
from test_round2_execution_kit import shared

GUARD = {"param": "v", "matches": "(a|aa)+", "one_of": ["a" * 30 + "!"] * 50}
R20 = "round 20: validation tries every one_of value against matches (0.1 s each), no total bound"
# the refusal the budget writes (guards._never_passes): what shows that validation stopped
# at the budget instead of trying every value (no timing assert: the project has none)
AT_BUDGET = "its one_of values could not be checked against matches within 0.5 s"


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
    lab.run()
    result = lab.cli("validate", "plans/vd", "--config", str(lab.config), cwd=lab.repo, timeout=300)
    lab.validate_out = result.stdout + result.stderr  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r20-validcost", _build)


# round 20: broke (R20); fixed since (params_schema and validation under one time budget)
def test_freeze_pass(lab: Lab) -> None:
    assert lab.status()["plans/zz"]["frozen_hash"], "the honest plan was not frozen"
    row = lab.status()["plans/vd"]
    assert row["status"] == "invalid", row
    assert "E_SCHEMA_INVALID" in (row.get("reason") or "") and AT_BUDGET in row["reason"], row


# round 20: broke (R20); fixed since (params_schema and validation under one time budget)
def test_validate_cli(lab: Lab) -> None:
    assert "Traceback" not in lab.validate_out  # type: ignore[attr-defined]
    out = lab.validate_out  # type: ignore[attr-defined]
    assert "E_SCHEMA_INVALID" in out and AT_BUDGET in out, out[-800:]


def test_the_verdict_is_right(lab: Lab) -> None:
    assert lab.status()["plans/vd"]["status"] == "invalid"
    assert "E_SCHEMA_INVALID" in lab.codes("vd")
