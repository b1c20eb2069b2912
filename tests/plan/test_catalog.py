"""A catalog tool's params schema as ``plangate schema --config`` embeds it (round 64): its
own references resolve inside it, as when ``validate`` checks params against it alone, and
(round 65) its ``$id``s are its own, never another tool's."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from controller.plan.catalog import _rebased
from controller.plan.shape import with_references

TOOL: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "port": {"$ref": "#/$defs/port"},
        "tree": {"$ref": "#/$defs/node"},
        "out": {"$ref": "#/$defs/Output"},
        "again": {"$ref": "#"},
        "size": {"$ref": "#size"},
        "old": {"$ref": "#/definitions/old"},
        "const": {"$ref": "#/$defs/port"},  # a property named as a keyword
        "fixed": {"const": {"$ref": "#/not/a/schema"}},  # data, never rewritten
    },
    "$defs": {
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "node": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string"},
                "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
        },
        "Output": {"type": "integer"},
        "size": {"$anchor": "size", "enum": ["s", "m"]},
    },
    "definitions": {"old": {"type": "integer", "maximum": 9}},
}
#: stands for the plan schema's own names, which the tool's must never reach
PLAN_DEFS = {"Output": {"type": "object"}, "port": {"type": "string"}}

PARAMS = [
    {"port": 8080},
    {"port": 0},
    {"port": "$<inputs.a>"},
    {"tree": {"name": "r", "kids": [{"name": "k", "kids": []}]}},
    {"tree": {"name": "r", "kids": [{"name": "$<inputs.a>"}]}},
    {"tree": {"name": "r", "kids": [{"name": "r", "kids": [{"name": 1}]}]}},
    {"out": 5},
    {"out": {"name": "o", "path": "$.x"}},
    {"again": {"again": {"port": 1}}},
    {"again": {"again": {"port": 0}}},
    {"size": "m"},
    {"size": "xl"},
    {"old": 9},
    {"old": 10},
    {"const": 80},
    {"const": "x"},
    {"fixed": {"$ref": "#/not/a/schema"}},
    {"fixed": {"$ref": "#/$defs/tool.t/not/a/schema"}},
]


def _embedded(tool: Any) -> jsonschema.Draft202012Validator:
    """``tool`` where ``schema --config`` puts it, beside the plan's own definitions."""
    plan = {
        "$defs": {**PLAN_DEFS, "tool.t": _rebased(tool, "t")},
        "properties": {"params": {"$ref": "#/$defs/tool.t"}},
    }
    return jsonschema.Draft202012Validator(plan)


@pytest.mark.parametrize("params", PARAMS, ids=[str(p) for p in PARAMS])
def test_an_embedded_schema_judges_params_as_it_does_alone(params: dict[str, Any]) -> None:
    alone = jsonschema.Draft202012Validator(with_references(TOOL)).is_valid(params)
    assert _embedded(TOOL).is_valid({"params": params}) == alone


def test_the_variants_are_judged_both_ways() -> None:
    alone = jsonschema.Draft202012Validator(with_references(TOOL))
    verdicts = [alone.is_valid(p) for p in PARAMS]
    assert verdicts.count(True) >= 8 and verdicts.count(False) >= 8


def test_references_into_the_tool_get_its_place_and_anchors_its_name() -> None:
    got = _rebased(TOOL, "t")
    properties = got["properties"]
    assert properties["again"]["anyOf"][1] == {"$ref": "#/$defs/tool.t"}
    assert properties["old"]["anyOf"][1] == {"$ref": "#/$defs/tool.t/definitions/old"}
    assert properties["size"]["anyOf"][1] == {"$ref": "#tool.t.size"}
    assert got["$defs"]["size"]["$anchor"] == "tool.t.size"
    assert properties["fixed"]["anyOf"][1] == TOOL["properties"]["fixed"]


def test_a_schema_with_its_own_id_is_its_own_resource() -> None:
    tool = {**TOOL, "$id": "urn:example:tool"}
    got = _rebased(tool, "t")
    assert got["$id"] == "urn:plangate:tool.t:urn:example:tool"
    assert got["properties"]["port"] == with_references(tool)["properties"]["port"]  # kept
    for params in PARAMS:
        alone = jsonschema.Draft202012Validator(with_references(tool)).is_valid(params)
        assert _embedded(tool).is_valid({"params": params}) == alone, params


def test_a_part_with_its_own_id_keeps_its_references() -> None:
    part = {"$id": "urn:example:part", "$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"}
    tool = {"type": "object", "properties": {"n": part}}
    got = _rebased(tool, "t")["properties"]["n"]["anyOf"][1]
    assert got == {**part, "$id": "urn:plangate:tool.t:urn:example:part"}
    assert not _embedded(tool).is_valid({"params": {"n": "x"}})
    assert _embedded(tool).is_valid({"params": {"n": 1}})


def _shared_id(kind: str) -> dict[str, Any]:
    return {
        "$id": "urn:example:same",
        "$defs": {"v": {"type": kind}},
        "properties": {"v": {"$ref": "#/$defs/v"}, "w": {"$ref": "urn:example:same#/$defs/v"}},
    }


@pytest.mark.parametrize("params", [{"v": 5}, {"v": "x"}, {"w": 5}, {"w": "x"}], ids=str)
def test_two_tools_with_one_id_each_resolve_in_their_own(params: dict[str, Any]) -> None:
    """Round 65: two tools whose schemas share an ``$id`` were two resources of one URI in
    the plan schema; one tool's ``$ref`` (relative or naming the ``$id``) resolved in the
    other's. Each ``$id`` is made the tool's own."""
    plan = {
        "$defs": {"tool.a": _rebased(_shared_id("integer"), "a")},
        "properties": {"a": {"$ref": "#/$defs/tool.a"}, "b": {"$ref": "#/$defs/tool.b"}},
    }
    plan["$defs"]["tool.b"] = _rebased(_shared_id("string"), "b")
    embedded = jsonschema.Draft202012Validator(plan)
    for tool, kind in (("a", "integer"), ("b", "string")):
        alone = jsonschema.Draft202012Validator(with_references(_shared_id(kind)))
        assert embedded.is_valid({tool: params}) == alone.is_valid(params), (tool, params)


def test_a_reference_naming_a_nested_id_gets_the_tools_copy() -> None:
    """A relative nested ``$id`` is read against its parent's, as ``referencing`` reads it."""
    part = {"$id": "part", "$anchor": "p", "type": "integer"}
    tool = {
        "$id": "https://example.com/tool",
        "$defs": {"part": part},
        "properties": {"n": {"$ref": "part#p"}, "m": {"$ref": "https://example.com/part"}},
    }
    got = _rebased(tool, "t")
    own = "urn:plangate:tool.t:https://example.com/part"
    assert got["$defs"]["part"]["$id"] == own
    assert got["properties"]["n"]["anyOf"][1] == {"$ref": f"{own}#p"}
    for params in ({"n": 1}, {"n": "x"}, {"m": 2}, {"m": "y"}):
        alone = jsonschema.Draft202012Validator(with_references(tool)).is_valid(params)
        assert _embedded(tool).is_valid({"params": params}) == alone, params


def test_no_schema_is_any_params() -> None:
    assert _rebased(None, "t") == {}


def test_an_actions_params_read_a_legacy_reference_a_steps_do_not() -> None:
    """Round 125 (schema-config-refuses-legacy-reference): validate reads ``${inputs.a}`` in
    an action's params as the reference the freeze makes of it, in a fallback step's or a
    check's as text. ``schema --config`` checks an action's params by ``$defs/action.<name>``
    (its ``$anchor``s and ``$id``s its own, never the step form's), the others by
    ``$defs/tool.<name>``; a tool whose schema has no place a reference stands in has one."""
    from controller.execution.secrets import Redactor
    from controller.plan.catalog import specialise_schema
    from controller.plan.schema import json_schema
    from controller.settings import config_from_data

    tool = {**TOOL, "$id": "urn:example:tool"}
    config = config_from_data(
        {"tools": {"t": {"kind": "echo", "params_schema": tool}, "free": {"kind": "echo"}}}
    )
    schema = specialise_schema(json_schema(), config, Redactor([]))
    defs = schema["$defs"]
    assert "action.t" in defs and "action.free" not in defs
    assert defs["action.t"]["$id"] == "urn:plangate:action.t:urn:example:tool"
    assert defs["action.t"]["$defs"]["size"]["$anchor"] == "size"  # its own resource
    assert _rebased(TOOL, "t", "action")["$defs"]["size"]["$anchor"] == "action.t.size"
    checker = jsonschema.Draft202012Validator(schema)
    plan = {
        "plan": {"name": "n", "task": "t", "status": "pending_approval"},
        "available_tools": [{"name": "t"}, {"name": "free"}],
    }

    def judged(params: dict[str, Any], *, fallback: bool = False) -> bool:
        action: dict[str, Any] = {"id": 1, "tool": "t", "why": "w", "params": params}
        if fallback:
            step = {"id": "1.1", "tool": "t", "why": "f", "params": params}
            action = {**action, "params": {}, "on_failure": "fallback", "fallback": [step]}
        return checker.is_valid({**plan, "actions": [action]})

    for value in ("${inputs.a}", "${plan.name}", "x${approval.approved_by}", "$<inputs.a>"):
        assert judged({"port": value}) and judged({"tree": {"name": "r", "kids": [value]}})
    for value in ("${HOME}", "${secrets.X}", "$${inputs.a}", "${ inputs.a }", "${inputs.a>b}"):
        assert not judged({"port": value}), value
    assert not judged({"port": "${inputs.a}"}, fallback=True)
    assert judged({"port": "$<inputs.a>"}, fallback=True)


# -- round 71: a secret is never catalog material ---------------------------------------------
SECRET = "r71Kq9SecretZp"


def _secret_catalog(tools: dict[str, Any]) -> Any:
    from controller.settings import config_from_data

    return config_from_data({"tools": tools})


@pytest.mark.parametrize(
    ("tool", "place"),
    [
        (
            {"params_schema": {"properties": {"e": {"enum": [SECRET, "x"]}}}},
            "params_schema.properties.e.enum.0",
        ),
        (
            {"params_schema": {"properties": {"c": {"const": SECRET}}}},
            "params_schema.properties.c.const",
        ),
        (
            {"params_schema": {"properties": {"p": {"pattern": f"^{SECRET}$"}}}},
            "params_schema.properties.p.pattern",
        ),
        ({"params_schema": {"not": {"enum": [SECRET]}}}, "params_schema.not.enum.0"),
        (
            {"params_schema": {"properties": {"d": {"default": f"a-{SECRET}-b"}}}},
            "params_schema.properties.d.default",
        ),
        ({"params_schema": {"examples": [{"k": SECRET}]}}, "params_schema.examples.0.k"),
        (
            {"params_schema": {"properties": {SECRET: {"type": "string"}}}},
            "params_schema.properties.***",
        ),
        (
            {"params_schema": {"properties": {"n": {"const": 48213957}}}},
            "params_schema.properties.n.const",
        ),
        (
            {"params_schema": {"properties": {"l": {"default": ["r71Kq9", "SecretZp"]}}}},
            "params_schema.properties.l.default",
        ),
        ({"description": f"uses {SECRET}"}, "description"),
    ],
)
def test_a_catalog_publishing_a_secret_is_refused_naming_the_place(
    tool: dict[str, Any], place: str
) -> None:
    """Round 71: a schema holding a secret answered a literal guess valid or not (the
    verdict the oracle, every quote ``***``). Any published string (or number) equal to or
    holding a value the records' redactor hides is E_CONFIG_INVALID, naming the tool and the
    path, never the value; the remedy is ``$<secrets.NAME>`` at run time."""
    from controller.errors import ConfigInvalid
    from controller.execution.secrets import Redactor
    from controller.plan.catalog import refuse_secrets_in_catalog, secrets_in_catalog

    config = _secret_catalog({"pin": {"kind": "echo", **tool}, "ok": {"kind": "echo"}})
    redactor = Redactor([SECRET, "48213957"])
    assert secrets_in_catalog(config, redactor) == [f"tools.pin.{place}"]
    with pytest.raises(ConfigInvalid) as refused:
        refuse_secrets_in_catalog(config, redactor)
    said = refused.value.render()
    assert f"tools.pin.{place}" in said and "$<secrets.NAME>" in said, said
    assert SECRET not in said and "48213957" not in said, said


def test_a_catalog_without_a_secret_and_what_a_tool_runs_are_accepted() -> None:
    """What a tool runs (argv, env, URL) may hold a credential: shown masked, never refused;
    a catalog publishing none loads, and no secrets means nothing to find."""
    from controller.execution.secrets import Redactor
    from controller.plan.catalog import refuse_secrets_in_catalog, secrets_in_catalog

    config = _secret_catalog(
        {
            "run": {"kind": "exec", "argv": ["/bin/echo", SECRET], "env": {"MODE": SECRET}},
            "nan": {
                "kind": "echo",
                "params_schema": {"properties": {"f": {"const": float("nan")}}},
            },
            "pin": {"kind": "echo", "params_schema": {"properties": {"e": {"enum": ["x"]}}}},
        }
    )
    assert secrets_in_catalog(config, Redactor([SECRET])) == []
    refuse_secrets_in_catalog(config, Redactor([]))
