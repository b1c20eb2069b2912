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

- ``static``: the agent submits ``ps`` (never approved) with ``name: "aaaa...a!"`` (40
  ``a``; round 20 used 26). The pass that validates it is the one the honest ``zz`` is
  submitted in. Asserted: ``ps`` is refused (``E_PARAMS_INVALID``, by the pattern or by the
  budget) and ``status --json`` answers about it. **Broke** (round 20): the verdict is right
  but comes after the whole backtracking, doubling with every ``a`` (by hand: 25 ``a`` 3.2 s,
  26 ``a`` 4-8 s; 30 ``a`` and ``plangate status --json`` did not answer within 60 s
  either: it validates the plan again). No timing assert (the project has none): with 40
  ``a`` an unbounded check takes about a day, so the pass ending at all (the lab's runs wait
  up to 300 s) and the verdict being recorded is what tells the bounded check apart.
- ``runtime``: an honest plan, approved by Alice: action 1 (``emit``, an exec tool) prints
  ``{"n": "aaaa...a!"}`` (40 ``a``, the output's author's choice), action 2 calls ``slug``
  with ``name: "$<actions[1].outputs.n>"``; the schema is checked again on the resolved
  params. Asserted: the plan's run ended ``failed``, action 1 succeeded, action 2 failed
  ``E_PARAMS_INVALID`` naming the ``params_schema`` of ``slug`` (the pass ended: see
  ``static``). **Broke**: it backtracks to the end, outside every tool's timeout.

- ``runtime-unique``: the catalog's ``uniq`` (``echo``) has ``params_schema: {properties:
  {to: {type: array, uniqueItems: true}}}`` (an ordinary "no recipient twice"); an approved
  plan passes ``to: "$<actions[1].outputs.l>"``, the output a list of 2,000 distinct
  objects ``{"a": i}`` (26 KB). Asserted: the run completed, both actions succeeded (the
  2,000 distinct items pass the uniqueness check). **Broke**: the uniqueness check compares
  every pair (by hand with the jsonschema validator: 1,000 items 1.0 s, 2,000 4.6 s, 4,000
  15.4 s), then the plan completes. The defence (comparing by hashing) has no outcome here
  besides time: the pairwise check reaches the same verdict, and a list long enough for it
  never to end does not fit in ``max_result_bytes`` (64 KiB); no timing is asserted.

All also assert the honest ``zz`` ran once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

# an unbounded backtracking check of 40 a would take about a day (26 a took 4-8 s)
BAD = "a" * 40 + "!"
R20U = "round 20: uniqueItems on a tool-output list is checked in quadratic time with no bound"
R20 = "round 20: a params_schema pattern is matched without a time bound (ReDoS by the plan's or the output's value)"


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
    lab.run(timeout=300)
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
    errors = (lab.plan("ps").get("validation") or {}).get("errors") or []
    assert [e["code"] for e in errors] == ["E_PARAMS_INVALID"], errors
    assert "params_schema of tool 'slug'" in errors[0]["message"], errors
    row = lab.status()["plans/ps"]  # status validates the plan again, and answers
    assert row["status"] == "invalid" and "E_PARAMS_INVALID" in (row.get("reason") or ""), row


# round 20: broke (R20); fixed since (params_schema and validation under one time budget)
def test_runtime(lab: Lab) -> None:
    execution = lab.rt_exec  # type: ignore[attr-defined]
    assert execution.get("status") == "failed", execution
    first, second = execution["actions"]
    assert first["status"] == "succeeded" and second["status"] == "failed", execution
    error = second.get("error") or {}
    assert error.get("code") == "E_PARAMS_INVALID", execution
    assert "params_schema of tool 'slug'" in error.get("message", ""), execution


# round 20: broke (R20U); fixed since (params_schema and validation under one time budget)
def test_runtime_unique(lab: Lab) -> None:
    execution = lab.ru_exec  # type: ignore[attr-defined]
    # no timing assert (see the docstring): the bounded check's verdict, 2,000 distinct items
    assert execution.get("status") == "completed", execution
    assert [a["status"] for a in execution["actions"]] == ["succeeded", "succeeded"], execution


def test_the_honest_plan_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
