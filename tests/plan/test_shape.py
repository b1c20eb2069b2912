"""The plain check of the usual plan (controller.plan.shape) against the pydantic schema.

``plangate validate`` checks a plan of the usual shape without building the pydantic
models (issue 17). That check may only ever say "the schema accepts this" when the schema
does, with stand-ins equal to the models, so that every problem reported is the same.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from controller.plan import schema, shape
from controller.plan.plans import check_document, load_plan
from controller.settings import config_from_data


def _base() -> dict[str, Any]:
    return {
        "plan": {"name": "p", "task": "t", "status": "pending_approval", "version": 1},
        "metadata": {"owner": "ops"},
        "inputs": {"start": 1, "who": "x"},
        "available_tools": [{"name": "echo"}, {"name": "http_get", "description": "GET"}],
        "on_failure": "skip",
        "actions": [
            {
                "id": 1,
                "tool": "echo",
                "why": "one",
                "params": {"value": "$<inputs.start>"},
                "outputs": [{"name": "value", "path": "$.value"}],
            },
            {
                "id": 2,
                "tool": "echo",
                "why": "two",
                "params": {"value": "$<actions[1].outputs.value>", "n": [1, {"a": None}]},
                "needs": [1],
                "outputs": [{"name": "v2", "path": "$['value']", "optional": True}],
                "on_failure": "stop",
                "requires_approval": True,
                "idempotent": False,
            },
        ],
    }


# (where, key) -> values tried there, each replacing (or, with _GONE, removing) the key
_GONE = object()
_ODD = [_GONE, None, "", "x", "Bad name", "name\n", 0, 1, 2, -1, True, False, 1.5, [], {}, [1]]
_SITES: list[tuple[tuple[Any, ...], str]] = [
    ((), "plan"),
    ((), "metadata"),
    ((), "inputs"),
    ((), "available_tools"),
    ((), "on_failure"),
    ((), "actions"),
    ((), "limits"),
    ((), "frozen"),
    ((), "preconditions"),
    ((), "extra"),
    (("plan",), "name"),
    (("plan",), "task"),
    (("plan",), "status"),
    (("plan",), "created"),
    (("plan",), "version"),
    (("plan",), "extra"),
    (("available_tools", 0), "name"),
    (("available_tools", 1), "description"),
    (("available_tools", 0), "extra"),
    (("actions", 0), "id"),
    (("actions", 0), "tool"),
    (("actions", 0), "why"),
    (("actions", 0), "params"),
    (("actions", 0), "outputs"),
    (("actions", 1), "needs"),
    (("actions", 1), "on_failure"),
    (("actions", 1), "requires_approval"),
    (("actions", 1), "idempotent"),
    (("actions", 1), "retries"),
    (("actions", 1), "timeout"),
    (("actions", 1), "verify"),
    (("actions", 1), "plan"),
    (("actions", 1), "extra"),
    (("actions", 0, "outputs", 0), "name"),
    (("actions", 0, "outputs", 0), "path"),
    (("actions", 1, "outputs", 0), "optional"),
    (("actions", 1, "outputs", 0), "extra"),
]
_EXTRA = ["on_failure_typo", "fallback", "stop", "retry", "draft", "completed", "$.x", "echo"]


def _variants() -> list[Any]:
    found: list[Any] = [_base(), [], "text", None, {}]
    for where, key in _SITES:
        for value in [*_ODD, *_EXTRA]:
            doc = _base()
            target: Any = doc
            for step in where:
                target = target[step]
            if value is _GONE:
                target.pop(key, None)
            else:
                target[key] = copy.deepcopy(value)
            found.append(doc)
    return found


def _same(stand_in: Any, model: Any, where: str = "") -> None:
    """Every field of ``model`` is on ``stand_in`` with an equal value, at every depth."""
    if isinstance(model, BaseModel):
        for name in type(model).model_fields:
            _same(getattr(stand_in, name), getattr(model, name), f"{where}.{name}")
    elif isinstance(model, list):
        assert isinstance(stand_in, list) and len(stand_in) == len(model), where
        for index, (a, b) in enumerate(zip(stand_in, model, strict=True)):
            _same(a, b, f"{where}[{index}]")
    else:
        assert type(stand_in) is type(model) and stand_in == model, where


# One test over every document (not one test id each: 2,700 ids cost the suite minutes of
# per-test overhead for milliseconds of work); every mismatch is reported at once.
def test_a_plain_yes_is_the_schemas_yes_with_equal_fields() -> None:
    wrong = []
    for index, doc in enumerate(_variants()):
        stand_in = shape.plain_document(doc)
        if stand_in is None:
            continue  # the schema decides (and reports); nothing to compare
        try:
            _same(stand_in, schema.PlanDocument.model_validate(doc))
        except Exception as exc:  # a schema refusal or a field that differs
            wrong.append(f"doc {index}: {type(exc).__name__}: {exc}"[:300])
    assert wrong == []


def test_the_usual_plan_is_checked_plainly() -> None:
    assert shape.plain_document(_base()) is not None


#: A catalog that makes the rules with a config speak: a params schema, a python tool (its
#: reserved param), a tool not idempotent, one missing from it (http_get).
_CATALOG = {
    "tools": {
        "echo": {
            "kind": "echo",
            "idempotent": False,
            "params_schema": {"type": "object", "properties": {"value": {"type": "integer"}}},
        },
        "py": {"kind": "python", "target": "os:getcwd"},
    }
}


@pytest.mark.parametrize("with_config", [False, True])
def test_validate_reports_the_same_problems_either_way(with_config: bool) -> None:
    config = config_from_data(copy.deepcopy(_CATALOG)) if with_config else None
    wrong = []
    for index, doc in enumerate(_variants()):
        plain_model, plain = check_document(copy.deepcopy(doc), config, None, plain=True)
        model, problems = check_document(copy.deepcopy(doc), config, None)
        if plain != problems or (plain_model is None) != (model is None):
            wrong.append((index, plain, problems))
    assert wrong == []


def test_rules_with_a_config_speak_on_the_stand_ins() -> None:
    doc = _base()
    doc["actions"][0]["params"] = {"value": "text", "idempotency_key": 1}
    doc["actions"][1]["idempotent"] = True
    doc["actions"][1]["tool"] = "py"
    doc["available_tools"].append({"name": "py"})
    assert shape.plain_document(doc) is not None
    config = config_from_data(copy.deepcopy(_CATALOG))
    _, plain = check_document(copy.deepcopy(doc), config, None, plain=True)
    _, problems = check_document(copy.deepcopy(doc), config, None)
    assert plain == problems
    assert {p.code for p in plain} >= {"E_PARAMS_INVALID"}


def test_schema_errors_still_come_from_the_schema() -> None:
    doc = _base()
    doc["actions"][0]["why"] = ""
    doc["actions"][1]["retries"] = 3  # outside the plain part: the schema reads it all
    assert shape.plain_document(doc) is None
    _, problems = check_document(doc, None, None, plain=True)
    assert [p.path for p in problems] == ["actions[0].why", "actions[1].retries"]


def test_the_constants_are_the_schemas() -> None:
    # the models' fields use the very types the plain check reads its tuples from
    assert schema.PlanHeader.model_fields["status"].annotation is shape.Status
    assert get_args(shape.Status) == shape.STATUSES
    assert schema.PlanDocument.model_fields["on_failure"].annotation is shape.PlanOnFailure
    for keys, model in (
        (shape.PLAN_KEYS, schema.PlanDocument),
        (shape.HEADER_KEYS, schema.PlanHeader),
        (shape.TOOL_KEYS, schema.AvailableTool),
        (shape.ACTION_KEYS, schema.Action),
        (shape.OUTPUT_KEYS, schema.Output),
    ):
        assert keys <= set(model.model_fields), model.__name__


def test_the_stand_ins_have_every_field_of_the_models() -> None:
    """The rules may read any field: each stand-in carries them all."""
    stand_in = shape.plain_document(_base())
    assert stand_in is not None
    assert set(vars(stand_in)) == set(schema.PlanDocument.model_fields)
    assert set(vars(stand_in.plan)) == set(schema.PlanHeader.model_fields)
    assert set(vars(stand_in.available_tools[0])) == set(schema.AvailableTool.model_fields)
    assert set(vars(stand_in.actions[0])) == set(schema.Action.model_fields)
    assert set(vars(stand_in.actions[0].outputs[0])) == set(schema.Output.model_fields)


def test_rule_problems_are_found_on_the_stand_ins(tmp_path: Path) -> None:
    path = tmp_path / "PLAN.yml"
    path.write_text(
        "plan: {name: p, task: t, status: draft}\n"
        "available_tools: [{name: echo}]\n"
        "actions:\n"
        "  - {id: 2, tool: echo, why: w, params: {v: '$<actions[9].outputs.x>'}}\n"
        "  - {id: 2, tool: nope, why: w, outputs: [{name: a, path: '$..['}]}\n"
    )
    plain, full = load_plan(path, plain=True), load_plan(path)
    assert plain.problems == full.problems
    assert {p.code for p in plain.problems} >= {"E_ACTION_IDS", "E_TOOL_NOT_DECLARED"}


def _accepts(schema: dict[str, Any], value: Any) -> bool:
    import jsonschema

    return jsonschema.Draft202012Validator(shape.with_references(schema)).is_valid(value)


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"properties": {"n": {"type": "integer"}}}, {"n": "$<inputs.n>"}),
        ({"properties": {"o": {"properties": {"n": {"enum": [1]}}}}}, {"o": {"n": "$<i.n>"}}),
        ({"items": {"type": "integer"}}, ["$<inputs.n>", 3]),
        ({"prefixItems": [{"type": "integer"}]}, ["a $<inputs.n>"]),
        ({"additionalProperties": {"type": "integer"}}, {"k": "$<inputs.n>"}),
        ({"patternProperties": {"^k": {"type": "integer"}}}, {"k": "$<inputs.n>"}),
        ({"allOf": [{"properties": {"n": {"type": "integer"}}}]}, {"n": "$<inputs.n>"}),
        ({"oneOf": [{"properties": {"n": {"const": 1}}, "required": ["n"]}]}, {"n": "$<x>"}),
    ],
)
def test_a_reference_stands_for_any_part_of_the_params(schema: Any, value: Any) -> None:
    """Round 63: the --config schema let a reference stand only for a whole top-level param."""
    assert not _accepts_as_written(schema, value)
    assert _accepts(schema, value)


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"properties": {"n": {"type": "integer"}}}, {"n": "$$<inputs.n>"}),  # the text $<
        ({"properties": {"n": {"type": "integer"}}}, {"n": "$$$<inputs.n>"}),
        ({"properties": {"o": {"additionalProperties": False}}}, {"o": {"k": "$<inputs.n>"}}),
        ({"prefixItems": [{"type": "integer"}], "items": False}, [1, "$<inputs.n>"]),
        ({"properties": {"n": {"type": "integer"}}}, {"n": {"deep": "$<inputs.n>"}}),
    ],
)
def test_what_no_reference_can_fix_stays_refused(schema: Any, value: Any) -> None:
    assert not _accepts(schema, value)


def _accepts_as_written(schema: dict[str, Any], value: Any) -> bool:
    import jsonschema

    return jsonschema.Draft202012Validator(schema).is_valid(value)


@pytest.mark.parametrize(
    ("idempotent", "risk", "checks"),
    [(True, "low", True), (True, None, True), (False, "low", False), (True, "medium", False)],
)
def test_a_check_tool_is_idempotent_and_low_risk(
    idempotent: bool, risk: str | None, checks: bool
) -> None:
    from controller.plan.rules import check_tool_problems
    from controller.settings.toolspec import ToolSpec

    assert shape.can_check(idempotent, risk) is checks
    spec = ToolSpec.model_validate(
        {"kind": "echo", "idempotent": idempotent, "risk": risk or "low"}
    )
    assert (not list(check_tool_problems("t", spec, "x"))) is shape.can_check(
        spec.idempotent, spec.risk
    )
