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

from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urldefrag, urljoin

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


def foreign_references(schema: Any, *forms: Any) -> list[str]:
    """Each reference in ``schema`` that does not resolve inside it (another schema's URI,
    a remote one, a pointer or anchor to nowhere), as written, in the order met. Each of
    ``forms`` is ``schema`` as a check reads it (its references rewritten in place and
    order, :func:`controller.plan.shape.with_references`): a reference whose rewritten self
    does not resolve there is named too (round 67), so the config check resolves what the
    params check will, with the same resolver."""
    written = _resolved(schema)
    for form in forms:
        checked = _resolved(form)
        if len(checked) != len(written):  # never, by construction: refuse rather than guess
            checked = [(ref, False) for ref, _ok in written]
        written = [
            (ref, ok and there) for (ref, ok), (_, there) in zip(written, checked, strict=True)
        ]
    return [ref for ref, ok in written if not ok]


def _resolved(schema: Any) -> list[tuple[str, bool]]:
    """(reference, it resolves inside ``schema``) for each reference, in the order met."""
    if not isinstance(schema, dict):
        return []
    resource = DRAFT202012.create_resource(schema)
    resolver = NO_RETRIEVAL.resolver_with_root(resource)
    return [(ref, _resolves(ref, there)) for ref, there in _references(schema, resolver, top=True)]


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


def resources(schema: Any, base: str = "", top: bool = True) -> Iterator[tuple[str, Any]]:
    """(absolute URI, node) for ``schema`` (URI ``""`` unless it has an ``$id``) and each
    part with an ``$id`` of its own, as :func:`_references` (and ``referencing``) reads it."""
    if isinstance(schema, list):
        for item in schema:
            yield from resources(item, base, top=False)
        return
    if not isinstance(schema, dict):
        return
    if isinstance(schema.get("$id"), str):
        base = urldefrag(urljoin(base, schema["$id"]))[0]
        yield base, schema
    elif top:
        yield base, schema
    for key, value in schema.items():
        if key in NAMED_SCHEMAS and isinstance(value, dict):
            for sub in value.values():
                yield from resources(sub, base, top=False)
        elif key not in DATA_KEYWORDS:
            yield from resources(value, base, top=False)


#: How :func:`rewritten` rewrites one reference: (reference, base URI, its resource's node).
Rewrite = Callable[[str, str, Any], str]


def rewritten(schema: Any, rewrite: Rewrite, base: str = "", here: Any = None) -> Any:
    """A copy of ``schema`` with each reference ``rewrite``-n (given the base URI and the node
    of the resource it sits in), everything else as it is."""
    if isinstance(schema, list):
        return [rewritten(item, rewrite, base, here) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if here is None or isinstance(schema.get("$id"), str):
        here = schema
        if isinstance(schema.get("$id"), str):
            base = urldefrag(urljoin(base, schema["$id"]))[0]
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in DATA_KEYWORDS:
            out[key] = value
        elif key in REF_KEYWORDS and isinstance(value, str):
            out[key] = rewrite(value, base, here)
        elif key in NAMED_SCHEMAS and isinstance(value, dict):
            out[key] = {name: rewritten(sub, rewrite, base, here) for name, sub in value.items()}
        else:
            out[key] = rewritten(value, rewrite, base, here)
    return out


#: Keywords that apply their schemas to the very instance their node applies to (a list of
#: schemas, one schema, a map of them); every other applicator moves to a part of it (a
#: property's value, an item, a property's name), so a loop through one of those ends with
#: the instance.
IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
IN_PLACE_ONE = ("not", "if", "then", "else")
IN_PLACE_MAPS = ("dependentSchemas",)


def endless_reference(schema: Any) -> str | None:
    """The first reference (as written) through which ``schema`` applies itself to the same
    instance again without end, or None. Round 114: ``{$ref: "#"}``, two ``$defs`` naming
    each other, a property's schema pointing at itself: checking any params against such a
    schema never ends (Python's recursion limit ends it as an internal error in every reader
    of a plan calling the tool). A loop that passes through a property or an item (a tree)
    ends with the instance and is kept. References that do not resolve are
    :func:`foreign_references`' to name."""
    if not isinstance(schema, dict):
        return None
    root = NO_RETRIEVAL.resolver_with_root(DRAFT202012.create_resource(schema))
    done: set[int] = set()  # nodes whose in-place successors were all seen loop-free
    for node, resolver in _schema_nodes(schema, root, top=True):
        found = _loop_from(node, resolver, done)
        if found is not None:
            return found
    return None


def _loop_from(start: dict[str, Any], resolver: Any, done: set[int]) -> str | None:
    """Depth-first along in-place applications from ``start`` (no recursion: a long chain of
    references must not be what exhausts the stack)."""
    if id(start) in done:
        return None
    on_path: set[int] = {id(start)}
    stack: list[tuple[dict[str, Any], Iterator[tuple[str | None, Any, Any]]]] = [
        (start, _in_place(start, resolver))
    ]
    while stack:
        node, successors = stack[-1]
        step = next(successors, None)
        if step is None:
            stack.pop()
            on_path.discard(id(node))
            done.add(id(node))
            continue
        ref, target, target_resolver = step
        if not isinstance(target, dict) or id(target) in done:
            continue
        if id(target) in on_path:
            return ref or _first_ref(stack)
        on_path.add(id(target))
        stack.append((target, _in_place(target, target_resolver)))
    return None


def _first_ref(stack: list[tuple[dict[str, Any], Any]]) -> str:
    for node, _ in stack:
        for key in REF_KEYWORDS:
            if isinstance(node.get(key), str):
                return str(node[key])
    return "#"


def _in_place(node: dict[str, Any], resolver: Any) -> Iterator[tuple[str | None, Any, Any]]:
    """(the reference followed or None, schema, its resolver) for each schema ``node``
    applies to its own instance."""
    for key in REF_KEYWORDS:
        ref = node.get(key)
        if isinstance(ref, str):
            try:
                found = resolver.lookup(ref)
            except Unresolvable:
                continue
            yield ref, found.contents, found.resolver
    subs: list[Any] = []
    for key in IN_PLACE_LISTS:
        if isinstance(node.get(key), list):
            subs += node[key]
    subs += [node.get(key) for key in IN_PLACE_ONE]
    for key in IN_PLACE_MAPS:
        if isinstance(node.get(key), dict):
            subs += node[key].values()
    for sub in subs:
        if isinstance(sub, dict) and isinstance(sub.get("$id"), str):
            yield None, sub, resolver.in_subresource(DRAFT202012.create_resource(sub))
        else:
            yield None, sub, resolver


def _schema_nodes(node: Any, resolver: Any, top: bool = False) -> Iterator[tuple[Any, Any]]:
    """(schema node, its resolver) for ``node`` and every schema under it, as
    :func:`_references` walks them."""
    if isinstance(node, list):
        for item in node:
            yield from _schema_nodes(item, resolver)
        return
    if not isinstance(node, dict):
        return
    if not top and isinstance(node.get("$id"), str):
        resolver = resolver.in_subresource(DRAFT202012.create_resource(node))
    yield node, resolver
    for key, value in node.items():
        if key in DATA_KEYWORDS:
            continue
        if key in NAMED_SCHEMAS and isinstance(value, dict):
            for sub in value.values():
                yield from _schema_nodes(sub, resolver)
        elif isinstance(value, dict | list):
            yield from _schema_nodes(value, resolver)
