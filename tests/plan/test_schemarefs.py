"""A catalog params schema is self-contained (round 65): each reference resolves inside it,
nothing is fetched."""

from __future__ import annotations

from typing import Any

import pytest

from controller.plan.schemarefs import foreign_references

NEST: dict[str, Any] = {
    "$defs": {
        "top": {"$anchor": "pp", "type": "integer"},
        "sub": {
            "$id": "urn:example:nest",
            "$defs": {"x": {"$anchor": "pp", "type": "string"}},
            "properties": {"w": {"$ref": "#pp"}, "y": {"$ref": "#/$defs/x"}},
        },
        "a/b": {"type": "integer"},
    },
    "properties": {
        "v": {"$ref": "#pp"},
        "s": {"$ref": "#/$defs/sub"},
        "x": {"$ref": "urn:example:nest#/$defs/x"},
        "t": {"$ref": "#/%24defs/a~1b"},
        "c": {"const": {"$ref": "urn:elsewhere"}},  # data, not a reference
        "$ref": {"type": "string"},  # a property so named
        "again": {"$ref": "#"},
    },
}

INSIDE = {
    "pointers, anchors, a nested $id, data and names": NEST,
    "its own $id, absolute": {
        "$id": "urn:example:own#",
        "$defs": {"v": {"type": "integer"}},
        "properties": {"v": {"$ref": "urn:example:own#/$defs/v"}, "w": {"$ref": "#/$defs/v"}},
    },
    "a dynamic anchor": {
        "$dynamicAnchor": "node",
        "properties": {"kids": {"items": {"$dynamicRef": "#node"}}},
    },
    "a relative nested $id": {
        "$id": "https://example.com/tool",
        "$defs": {"part": {"$id": "part", "type": "integer"}},
        "properties": {"n": {"$ref": "part"}},
    },
}

OUTSIDE = {
    "another schema's $id": ({"properties": {"v": {"$ref": "urn:r65:own#/$defs/v"}}}, 1),
    "a remote URI": ({"properties": {"v": {"$ref": "https://schemas.example.invalid/v"}}}, 1),
    "the metaschema": ({"$ref": "https://json-schema.org/draft/2020-12/schema"}, 1),
    "a pointer to nowhere": ({"properties": {"v": {"$ref": "#/$defs/none"}}}, 1),
    "an anchor in another resource": (
        {**NEST, "properties": {"z": {"$ref": "#nope"}, "q": {"$ref": "urn:example:nest#top"}}},
        2,
    ),
    "a relative path with no base": ({"prefixItems": [{"$ref": "v.json"}]}, 1),
}


@pytest.mark.parametrize("schema", INSIDE.values(), ids=list(INSIDE))
def test_a_reference_inside_the_schema_is_its_own(schema: dict[str, Any]) -> None:
    assert foreign_references(schema) == []


@pytest.mark.parametrize(("schema", "count"), OUTSIDE.values(), ids=list(OUTSIDE))
def test_a_reference_leaving_the_schema_is_named(schema: dict[str, Any], count: int) -> None:
    assert len(foreign_references(schema)) == count


def test_a_boolean_schema_has_no_references() -> None:
    assert foreign_references(True) == []


#: Round 67: pointers INTO a part (a property's, an item's subschema) and the held shapes
#: around them; each resolves as written, as params are checked and where ``schema
#: --config`` embeds it, and judges plain values as the schema as written does.
INTO: dict[str, tuple[dict[str, Any], list[Any], list[Any]]] = {
    "a property's property": (
        {
            "properties": {
                "w": {"type": "object", "properties": {"n": {"type": "integer"}}},
                "x": {"$ref": "#/properties/w/properties/n"},
            }
        },
        [{"x": 3}, {"w": {"n": 1}}],
        [{"x": "x"}, {"w": {"n": "x"}}],
    ),
    "a property's $defs": (
        {
            "properties": {
                "w": {
                    "$defs": {"n": {"type": "integer"}},
                    "properties": {"n": {"$ref": "#/properties/w/$defs/n"}},
                }
            }
        },
        [{"w": {"n": 3}}],
        [{"w": {"n": "x"}}],
    ),
    "an array's items": (
        {
            "properties": {
                "l": {"type": "array", "items": {"type": "integer"}},
                "m": {"$ref": "#/properties/l/items"},
            }
        },
        [{"m": 3}, {"l": [1]}],
        [{"m": "x"}],
    ),
    "prefixItems, additionalProperties, allOf, if/then, escapes": (
        {
            "properties": {
                "t": {"prefixItems": [{"properties": {"a/b c": {"type": "integer"}}}]},
                "d": {"additionalProperties": {"properties": {"k": {"type": "boolean"}}}},
                "g": {"allOf": [{"if": True, "then": {"properties": {"z": {"type": "string"}}}}]},
                "p": {"$ref": "#/properties/t/prefixItems/0/properties/a~1b%20c"},
                "q": {"$ref": "#/properties/d/additionalProperties/properties/k"},
                "r": {"$ref": "#/properties/g/allOf/0/then/properties/z"},
            }
        },
        [{"p": 1, "q": True, "r": "s"}],
        [{"p": "x"}, {"q": 1}, {"r": 2}],
    ),
    "inside a part with its own $id": (
        {
            "properties": {
                "w": {
                    "$id": "urn:r67:w",
                    "properties": {"a": {"properties": {"b": {"type": "integer"}}}},
                    "$ref": "#/properties/a/properties/b",
                },
                "x": {"$ref": "urn:r67:w#/properties/a/properties/b"},
            }
        },
        [{"x": 1}, {"w": 1}],
        [{"x": "x"}, {"w": "x"}],
    ),
    "held: anchors, $defs in $defs, the root, booleans, a pointer to a part": (
        {
            "$defs": {"a": {"$defs": {"b": {"$anchor": "bb", "type": "integer"}}}},
            "properties": {
                "v": {"$ref": "#/$defs/a/$defs/b"},
                "u": {"$ref": "#bb"},
                "kid": {"$ref": "#"},
                "no": False,
                "w": {"properties": {"n": {"type": "integer"}}},
                "y": {"$ref": "#/properties/w"},
            },
        },
        [{"v": 1, "u": 2, "kid": {"v": 3}, "y": {"n": 1}}],
        [{"v": "x"}, {"u": "x"}, {"kid": {"v": "x"}}, {"no": 1}, {"y": {"n": "x"}}],
    ),
}  # fmt: skip


@pytest.mark.parametrize(("schema", "good", "bad"), INTO.values(), ids=list(INTO))
def test_a_pointer_into_a_part_resolves_in_every_form(
    schema: dict[str, Any], good: list[Any], bad: list[Any]
) -> None:
    import jsonschema

    from controller.plan.catalog import _rebased
    from controller.plan.shape import with_references

    checked = with_references(schema)
    assert foreign_references(schema, checked) == []
    embedded = {"$defs": {"tool.t": _rebased(schema, "t")}, "$ref": "#/$defs/tool.t"}
    for form in (schema, checked, embedded):
        validator = jsonschema.Draft202012Validator(form)
        assert [validator.is_valid(v) for v in good] == [True] * len(good), form
        assert [validator.is_valid(v) for v in bad] == [False] * len(bad), form


def test_a_reference_resolving_as_written_but_not_as_checked_is_named_as_written() -> None:
    schema = {"$defs": {"n": {"type": "integer"}}, "properties": {"x": {"$ref": "#/$defs/n"}}}
    checked = {"properties": {"x": {"$ref": "#/$defs/gone"}}}
    assert foreign_references(schema) == []
    assert foreign_references(schema, checked) == ["#/$defs/n"]
