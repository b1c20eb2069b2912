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
