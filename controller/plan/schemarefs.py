"""A catalog ``params_schema``'s references (``$ref``, ``$dynamicRef``): the rule that each
resolves inside the tool's own schema, and the one registry every check resolves them with.

Round 65: a tool's ``$ref`` to another tool's ``$id`` (or to an ``https://`` URI) loaded
without complaint; ``validate``, checking the tool's schema alone, met it unresolvable and
every ``run --once`` died on the plan naming it, while ``plangate schema --config`` (the
whole catalog one document) resolved it against the other tool. So a catalog schema is
self-contained: :func:`foreign_references` lists what does not resolve inside it (the
config refuses those, ``controller.settings.toolspec``), and :data:`NO_RETRIEVAL` is the
registry params are checked with: nothing is ever fetched (no network), a reference outside
the schema is unresolvable (:class:`referencing.exceptions.Unresolvable`).

The walk reads a schema as ``controller.plan.catalog`` rebases it: every place but data
(``const``, ``enum``, ``default``, ``examples``), a map of named schemas (``properties``,
``$defs``, ...) by its values, a node with its own ``$id`` a resource with its own base.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

#: The registry a params schema is checked with: nothing in it, nothing retrieved.
NO_RETRIEVAL: Registry[Any] = Registry()
#: The keywords whose string value names a schema by URI, and those that name an anchor.
REF_KEYWORDS = ("$ref", "$dynamicRef")
ANCHOR_KEYWORDS = ("$anchor", "$dynamicAnchor")
#: Keywords whose value is data, never a schema: a ``$ref`` inside is a value.
DATA_KEYWORDS = ("const", "enum", "default", "examples")
#: Keywords whose value maps names (of properties, of definitions) to schemas.
NAMED_SCHEMAS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")


def foreign_references(schema: Any) -> list[str]:
    """Each reference in ``schema`` that does not resolve inside it (another schema's URI,
    a remote one, a pointer or anchor to nowhere), as written, in the order met."""
    if not isinstance(schema, dict):
        return []
    resource = DRAFT202012.create_resource(schema)
    resolver = NO_RETRIEVAL.resolver_with_root(resource)
    return [
        ref for ref, there in _references(schema, resolver, top=True) if not _resolves(ref, there)
    ]


def _references(node: Any, resolver: Any, top: bool = False) -> Iterator[tuple[str, Any]]:
    """(reference, the resolver of its resource) for each reference under ``node``."""
    if isinstance(node, list):
        for item in node:
            yield from _references(item, resolver)
        return
    if not isinstance(node, dict):
        return
    if not top and isinstance(node.get("$id"), str):
        resolver = resolver.in_subresource(DRAFT202012.create_resource(node))
    for key, value in node.items():
        if key in DATA_KEYWORDS:
            continue
        if key in REF_KEYWORDS and isinstance(value, str):
            yield value, resolver
        elif key in NAMED_SCHEMAS and isinstance(value, dict):
            for sub in value.values():
                yield from _references(sub, resolver)
        else:
            yield from _references(value, resolver)


def _resolves(ref: str, resolver: Any) -> bool:
    try:
        resolver.lookup(ref)
    except Unresolvable:
        return False
    return True
