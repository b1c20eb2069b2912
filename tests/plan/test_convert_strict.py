"""Conversion reads a source strictly (round 53): a flag is a JSON boolean or a refusal, and
no field of any format is dropped without a word (docs/formats.md, "Rules that hold for every
format").

Every converter reads its source objects through ``common.Ctx.fields`` against the shapes
declared beside it; these tests walk those shapes (every boolean field of every format, with
values that are not booleans) and plant an unknown field in every object of every format.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.errors import ConvertFailed
from controller.plan import refs
from controller.plan.convert import FORMATS as FORMAT_NAMES
from controller.plan.convert import (
    actionplan,
    agentplan,
    common,
    contract,
    convert_text,
    toonplan,
)
from controller.plan.plans import validate_text
from tests.support.gitenv import EXAMPLES

EX = EXAMPLES / "formats"
NOT_BOOLEANS = ["true", "false", 1, 0, "yes", [True], {"value": True}, None]


def _json(name: str) -> dict[str, Any]:
    return json.loads((EX / name).read_text())


def _contract() -> dict[str, Any]:
    match = re.search(r"```json\n(.*)```", (EX / "plan-contract-reply.md").read_text(), re.S)
    assert match
    return json.loads(match.group(1))


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def _toon_fork() -> dict[str, Any]:
    """Two steps that both need step_1 only: parallel_execution decides whether they chain."""
    doc = _json("toon-plan-data-validation.json")
    doc["steps"].append({**doc["steps"][1], "id": "step_3", "action": "fix_rows"})
    doc["tasks"][0]["steps"].append("step_3")
    return doc


def _skipping() -> dict[str, Any]:
    """The full ActionPlan with its last step skipped on failure (round 106: ``warn``)."""
    doc = _json("actionplan-full.json")
    doc["steps"][4]["on_failure"] = {"strategy": "skip", "warn": True}
    return doc


# (format, shape module, field) -> (source document, where the flag sits in it)
BOOLEAN_FIELDS: dict[tuple[str, str], tuple[Callable[[], dict[str, Any]], tuple[Any, ...]]] = {
    ("agent-plan", "requires_approval"): (
        lambda: _json("agent-plan.json"),
        ("steps", 0, "requires_approval"),
    ),
    ("plan-contract", "requires_approval"): (_contract, ("steps", 1, "requires_approval")),
    ("actionplan", "idempotent"): (
        lambda: _json("actionplan-full.json"),
        ("steps", 0, "idempotent"),
    ),
    ("actionplan", "warn"): (_skipping, ("steps", 4, "on_failure", "warn")),
    ("toon-plan", "parallel_execution"): (
        _toon_fork,
        ("workflow_config", "parallel_execution"),
    ),
    ("toon-plan", "error_recovery"): (
        lambda: _json("toon-plan-data-validation.json"),
        ("workflow_config", "error_recovery"),
    ),
}
#: more places the same flag is read (a fallback step is read by the step's shape)
MORE_PLACES = [
    ("actionplan", lambda: _json("actionplan-full.json"), ("steps", 2, "on_failure", "steps", 0)),
]
SHAPED = {
    "agent-plan": agentplan,
    "plan-contract": contract,
    "actionplan": actionplan,
    "toon-plan": toonplan,
}


def _declared_flags() -> set[tuple[str, str]]:
    """Every boolean field any format's shapes declare."""
    found = set()
    for fmt, module in SHAPED.items():
        for value in vars(module).values():
            if (
                isinstance(value, dict)
                and value
                and all(isinstance(k, common.Kind) for k in value.values())
            ):
                found |= {(fmt, key) for key, kind in value.items() if kind is common.BOOL}
    return found


def test_every_declared_flag_is_walked_here() -> None:
    """A flag added to a shape without a case below fails here: the walk covers them all."""
    assert _declared_flags() == set(BOOLEAN_FIELDS)
    assert set(SHAPED) | {"pte"} == set(FORMAT_NAMES)  # pte: PLAN.yml's own schema, below


def _refused_at(source: dict[str, Any], fmt: str, path: tuple[Any, ...]) -> common.Problem:
    with pytest.raises(ConvertFailed) as err:
        convert_text(json.dumps(source), fmt=fmt, nested_base="plans/x")
    where = refs.format_path(path)
    found = [p for p in err.value.problems if p.path == where]
    assert found, (where, err.value.problems)
    return found[0]


@pytest.mark.parametrize("value", NOT_BOOLEANS, ids=repr)
@pytest.mark.parametrize("field", sorted(BOOLEAN_FIELDS), ids="/".join)
def test_a_flag_that_is_not_a_boolean_is_refused(field: tuple[str, str], value: Any) -> None:
    build, path = BOOLEAN_FIELDS[field]
    problem = _refused_at(_set(build(), path, value), field[0], path)
    assert problem.code == "E_SCHEMA_INVALID"
    assert problem.remedy and "true or false" in problem.remedy
    assert field[1] in problem.message


@pytest.mark.parametrize("value", NOT_BOOLEANS, ids=repr)
@pytest.mark.parametrize("fmt,build,where", MORE_PLACES)
def test_a_flag_is_refused_wherever_the_shape_is_read(
    fmt: str, build: Callable[[], dict[str, Any]], where: tuple[Any, ...], value: Any
) -> None:
    path = (*where, "idempotent")
    assert _refused_at(_set(build(), path, value), fmt, path).code == "E_SCHEMA_INVALID"


@pytest.mark.parametrize("field", sorted(BOOLEAN_FIELDS), ids="/".join)
def test_a_boolean_flag_still_converts_and_decides(field: tuple[str, str]) -> None:
    build, path = BOOLEAN_FIELDS[field]
    on, off = (
        convert_text(json.dumps(_set(build(), path, flag)), fmt=field[0], nested_base="plans/x")
        for flag in (True, False)
    )
    assert on.data != off.data  # the flag is carried: true and false convert differently


@pytest.mark.parametrize("value", ["yes", "1", "on"])
def test_markdown_and_toon_flags_are_refused_with_their_place(value: str) -> None:
    text = (EX / "toon-plan-core.md").read_text()
    text = text.replace("- Parallel Execution: false", f"- Parallel Execution: {value}")
    with pytest.raises(ConvertFailed) as err:
        convert_text(text, "plan.md")
    [problem] = err.value.problems
    assert (problem.code, problem.path) == (
        "E_SCHEMA_INVALID",
        "workflow_config.parallel_execution",
    )
    assert problem.line == 31
    toon = (EX / "toon-plan-core.toon").read_text()
    toon = toon.replace("parallel_execution: false", f"parallel_execution: {value}")
    with pytest.raises(ConvertFailed) as err:
        convert_text(toon, "plan.toon")
    assert [p.code for p in err.value.problems] == ["E_SCHEMA_INVALID"]


@pytest.mark.parametrize("key", ["requires_approval", "idempotent"])
@pytest.mark.parametrize("value", ["true", 1, [True]], ids=repr)
def test_pte_flags_are_judged_by_plan_yml_schema(key: str, value: Any, tmp_path: Path) -> None:
    """pte writes PLAN.yml's own shape: the value is carried as written, and validation
    refuses it (a converted plan that does not validate is never frozen)."""
    from controller.plan import yamlio

    source = yamlio.read_yaml((EX / "pte-customer-emails.yml").read_text()).data
    source["actions"][0][key] = value
    conversion = convert_text(json.dumps(source), "PLAN.yml", fmt="pte")
    assert conversion.data["actions"][0][key] == value  # carried, never read as a boolean
    plan = validate_text(conversion.text, tmp_path / "PLAN.yml")
    assert ("E_SCHEMA_INVALID", f"actions[0].{key}") in [(p.code, p.path) for p in plan.problems]


# --- nothing dropped: an unknown field anywhere is carried or refused -----------------------

SOURCES: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
    "actionplan": ("actionplan", lambda: _json("actionplan.json")),
    "actionplan-full": ("actionplan", lambda: _json("actionplan-full.json")),
    "actionplan-none": (
        "actionplan",
        lambda: _set(
            _json("actionplan.json"),
            ("steps", 0, "verification"),
            {"strategy": {"type": "none"}, "timeout_ms": 5000},
        ),
    ),
    "toon-plan-core": ("toon-plan", lambda: _json("toon-plan-core.json")),
    "toon-plan-data": ("toon-plan", lambda: _json("toon-plan-data-validation.json")),
    "plan-contract": ("plan-contract", _contract),
    "agent-plan": ("agent-plan", lambda: _json("agent-plan.json")),
    "agent-plan-custom": (
        "agent-plan",
        lambda: _set(
            _json("agent-plan.json"),
            ("steps", 2, "tool", "kind"),
            {"Custom": {"name": "rec", "args": {"tag": "x"}}},
        ),
    ),
}


def _objects(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        found.append(path)
        for key, item in value.items():
            found += _objects(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _objects(item, (*path, index))
    return found


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_an_unknown_field_in_any_object_is_carried_or_refused(name: str) -> None:
    fmt, build = SOURCES[name]
    source = build()
    paths = _objects(source)
    assert len(paths) >= 5
    for path in paths:
        planted = copy.deepcopy(source)
        target = planted
        for part in path:
            target = target[part]
        target["zz_planted"] = "zz-marker"
        try:
            conversion = convert_text(json.dumps(planted), fmt=fmt, nested_base="plans/x")
        except ConvertFailed as exc:
            where = {refs.format_path((*path, "zz_planted")), refs.format_path(path)}
            assert any(p.path in where for p in exc.problems), (path, exc.problems)
        else:
            written = conversion.text + "".join(text for _, text in conversion.children)
            assert "zz-marker" in written, path


@pytest.mark.parametrize(
    "verification,where",
    [
        ({"strategy": {}}, "steps[0].verification.strategy.type"),
        ({"strategy": {"type": ""}}, "steps[0].verification.strategy.type"),
        ({"strategy": {"type": "none", "rule_id": "r"}}, "steps[0].verification.strategy.rule_id"),
        ({"strategy": None}, "steps[0].verification.strategy"),
    ],
)
def test_a_verification_never_vanishes(verification: dict[str, Any], where: str) -> None:
    source = _set(_json("actionplan.json"), ("steps", 0, "verification"), verification)
    with pytest.raises(ConvertFailed) as err:
        convert_text(json.dumps(source), fmt="actionplan")
    assert where in [p.path for p in err.value.problems]


def test_a_none_strategys_timeout_and_description_are_noted() -> None:
    verification = {"strategy": {"type": "none"}, "timeout_ms": 5000, "description": "looked"}
    source = _set(_json("actionplan.json"), ("steps", 0, "verification"), verification)
    data = convert_text(json.dumps(source), fmt="actionplan").data
    notes = "\n".join(data["metadata"]["converted_from"]["notes"])
    assert "verify" not in data["actions"][0]
    assert "timeout_ms" in notes and "looked" in notes


def test_custom_payload_and_args_together_are_refused() -> None:
    kind = {"Custom": {"name": "rec", "payload": {"a": 1}, "args": {"b": 2}}}
    source = _set(_json("agent-plan.json"), ("steps", 2, "tool", "kind"), kind)
    problem = _refused_at(source, "agent-plan", ("steps", 2, "tool", "kind", "Custom", "args"))
    assert problem.code == "E_CONVERT_UNSUPPORTED"


@pytest.mark.parametrize(
    "fmt,build,path,value",
    [
        ("actionplan", lambda: _json("actionplan.json"), ("created_at",), "yesterday"),
        ("actionplan", lambda: _json("actionplan.json"), ("plan_version",), True),
        ("actionplan", lambda: _json("actionplan.json"), ("steps", 0, "step_number"), "1"),
        ("agent-plan", lambda: _json("agent-plan.json"), ("created_at",), 1706385600000),
        ("agent-plan", lambda: _json("agent-plan.json"), ("steps", 0, "metadata"), "hint"),
        ("plan-contract", _contract, ("steps", 1, "depends_on"), [["s1"]]),
        ("plan-contract", _contract, ("policy_context", "max_steps"), "10"),
        ("toon-plan", lambda: _json("toon-plan-core.json"), ("metadata", "created_at"), 5),
    ],
)
def test_a_value_of_another_type_is_refused_not_dropped(
    fmt: str, build: Callable[[], dict[str, Any]], path: tuple[Any, ...], value: Any
) -> None:
    assert _refused_at(_set(build(), path, value), fmt, path).code == "E_SCHEMA_INVALID"
