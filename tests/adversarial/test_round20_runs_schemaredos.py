# ruff: noqa: E501
"""Round 20, one hostile plan or tool output never stalls the pass: the operator's
``params_schema`` ``pattern`` is run on values the agent (or a tool's output) chooses, with
no time bound.

docs/configuration.md: a tool's ``params_schema`` is "JSON Schema (2020-12) checked statically
and after resolution". Guards' ``matches`` are cut at 0.1 s and JSONPath ``match()`` shares
0.5 s (round 13); a schema's ``pattern`` is not cut. The operator's catalog here is honest
and ordinary: ``slug: {kind: echo, params_schema: {properties: {name: {type: string,
pattern: "^([a-z0-9]+-?)*$"}}}}`` (a slug pattern; it backtracks exponentially on a run of
letters followed by a character it refuses).

- ``static``: the agent submits ``ps`` (never approved) with ``name: "aaaa...a!"`` (26
  ``a``). The pass that validates it is timed (the honest ``zz`` is submitted in the same
  commit). Asserted: the pass takes at most 3 s and ``ps`` is refused (``E_PARAMS_INVALID``).
  **Broke** (round 20): the verdict is right but comes after the whole backtracking: about
  4-8 s here, and doubling with every ``a`` (by hand: 25 ``a`` 3.2 s; 30 ``a`` and
  ``plangate status --json`` did not answer within 60 s either: it validates the plan again).
- ``runtime``: an honest plan, approved by Alice: action 1 (``emit``, an exec tool) prints
  ``{"n": "aaaa...a!"}`` (26 ``a``, the output's author's choice), action 2 calls ``slug`` with
  ``name: "$<actions[1].outputs.n>"``; the schema is checked again on the resolved params.
  Asserted: the plan's run (``execution.started_at`` to ``finished_at``) takes at most 1.5 s
  (whole seconds as recorded), ending ``E_PARAMS_INVALID``. **Broke**: it backtracks to the
  end, outside every tool's timeout.

- ``runtime-unique``: the catalog's ``uniq`` (``echo``) has ``params_schema: {properties:
  {to: {type: array, uniqueItems: true}}}`` (an ordinary "no recipient twice"); an approved
  plan passes ``to: "$<actions[1].outputs.l>"``, the output a list of 2,000 distinct
  objects ``{"a": i}`` (26 KB). Asserted: the run takes at most 1.5 s. **Broke**: the
  uniqueness check compares every pair (by hand with the jsonschema validator: 1,000 items
  1.0 s, 2,000 4.6 s, 4,000 15.4 s), then the plan completes.

All also assert the honest ``zz`` ran once.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

BAD = "a" * 26 + "!"
R20U = "round 20: uniqueItems on a tool-output list is checked in quadratic time with no bound"
R20 = "round 20: a params_schema pattern is matched without a time bound (ReDoS by the plan's or the output's value)"


def _at(text: Any) -> datetime:
    return datetime.fromisoformat(str(text).replace("Z", "+00:00"))


def _build(root: Path) -> Lab:
    emit = root / "emit.py"
    root.mkdir(parents=True, exist_ok=True)
    emit.write_text(
        f"import json; print(json.dumps({{'n': {BAD!r}, 'l': [{{'a': i}} for i in range(2000)]}}, separators=(',', ':')))\n"
    )
    argv = json.dumps([sys.executable, str(emit)])
    lab = Lab(
        root,
        tools=f"""\
slug: {{kind: echo, params_schema: {{type: object, properties: {{name: {{type: string, pattern: "^([a-z0-9]+-?)*$"}}}}}}}}
uniq: {{kind: echo, params_schema: {{type: object, properties: {{to: {{type: array, uniqueItems: true}}}}}}}}
emit: {{kind: exec, argv: {argv}, idempotent: true, risk: low}}
""",
    )
    lab.write(
        "ps",
        "plan:\n  name: ps\n  task: t\n  status: pending_approval\navailable_tools: [{name: slug}]\n"
        f'actions:\n  - {{id: 1, tool: slug, why: w, params: {{name: "{BAD}"}}}}\n',
    )
    lab.write(
        "rt",
        "plan:\n  name: rt\n  task: t\n  status: pending_approval\navailable_tools: [{name: emit}, {name: slug}]\n"
        "actions:\n  - {id: 1, tool: emit, why: w, params: {}, outputs: [{name: n, path: $.json.n}]}\n"
        '  - {id: 2, tool: slug, why: w, params: {name: "$<actions[1].outputs.n>"}}\n',
    )
    lab.write(
        "ru",
        "plan:\n  name: ru\n  task: t\n  status: pending_approval\navailable_tools: [{name: emit}, {name: uniq}]\n"
        "actions:\n  - {id: 1, tool: emit, why: w, params: {}, outputs: [{name: l, path: $.json.l}]}\n"
        '  - {id: 2, tool: uniq, why: w, params: {to: "$<actions[1].outputs.l>"}}\n',
    )
    lab.write("zz", plan_text("zz"))
    lab.commit("plans")
    start = time.monotonic()
    lab.run(timeout=300)
    lab.freeze_took = time.monotonic() - start  # type: ignore[attr-defined]
    lab.set_status("rt", "approved")
    lab.set_status("ru", "approved")
    lab.set_status("zz", "approved")
    lab.commit("approve", ALICE)
    lab.run(timeout=300)
    execution = lab.plan("rt").get("execution") or {}
    lab.rt_exec = execution  # type: ignore[attr-defined]
    lab.ru_exec = lab.plan("ru").get("execution") or {}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r20-schemaredos", _build)


# round 20: broke (R20); fixed since (params_schema and validation under one time budget)
def test_static(lab: Lab) -> None:
    assert "E_PARAMS_INVALID" in json.dumps(lab.plan("ps").get("validation"), default=str)
    assert lab.freeze_took <= 3.0, f"the pass took {lab.freeze_took:.1f} s on one param"  # type: ignore[attr-defined]


# round 20: broke (R20); fixed since (params_schema and validation under one time budget)
def test_runtime(lab: Lab) -> None:
    execution = lab.rt_exec  # type: ignore[attr-defined]
    assert execution.get("status") == "failed", execution
    assert "E_PARAMS_INVALID" in json.dumps(execution, default=str)
    took = (_at(execution["finished_at"]) - _at(execution["started_at"])).total_seconds()
    assert took <= 1.5, f"the run took {took} s checking one resolved param"


# round 20: broke (R20U); fixed since (params_schema and validation under one time budget)
def test_runtime_unique(lab: Lab) -> None:
    execution = lab.ru_exec  # type: ignore[attr-defined]
    assert execution.get("status") in ("completed", "failed"), execution
    took = (_at(execution["finished_at"]) - _at(execution["started_at"])).total_seconds()
    assert took <= 1.5, f"the run took {took} s checking uniqueItems on one resolved param"


def test_the_honest_plan_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
