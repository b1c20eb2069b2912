"""Round 67, agent-facing surfaces: round 65's self-contained catalog schemas (``schema
--config`` embeds each tool's ``params_schema`` as a resource of its own, every reference
resolved inside it) against NEW shapes only (round 66 tried relative/odd ``$id``s, draft-07,
``$dynamicRef``, keywords walked, properties named like data keywords): plain-name
``$anchor``s (``#v``), the SAME anchor name in two tools with no ``$id`` (does ``a``'s ``#v``
meet ``b``'s once both sit in one document?), the root self-reference ``$ref: "#"`` (a tree:
embedded, does ``#`` become the PLAN schema's root?), a pointer into the tool's own
``properties`` (``#/properties/w``), JSON-pointer escapes in ``$defs`` names (``a~1b``,
``a~0b``, a percent-encoded blank ``a%20b``), ``$defs`` nested below a property and reached
by a pointer through it, boolean subschemas (``v: false``), ``unevaluatedProperties:
false`` beside an ``allOf`` ``$ref``, an ``$id`` with an empty fragment, and
``minContains``/``maxContains``.

No lab: one config holding every tool, ``plangate schema --config`` once, ``plangate
validate --json --config`` once over every plan, the schema applied with ``jsonschema`` (an
editor).

Asserted: a plan ``validate`` accepts is accepted by the schema (``*-ok``); a plan it
refuses with ``E_PARAMS_INVALID`` is refused by the schema (``*-bad``), never "uncheckable".

Broke (strict xfails, 6): ``ptr2-ok``/``-bad``, ``deep-ok``/``-bad``, ``itm-ok``/``-bad``: a
JSON pointer that reaches INTO a property's own subschema, ``#/properties/w/properties/n``,
``#/properties/l/items`` or ``#/properties/w/$defs/n`` (all valid pointers in the tool's
schema as written), passes the config check (docs/configuration.md: "a pointer ... to nowhere
is refused when the config is read"; this one is not refused), then ``validate`` refuses
EVERY plan calling the tool, the honest one included, "E_PARAMS_INVALID: the params could not
be checked: params_schema's $ref '/properties/w/properties/n' does not resolve inside the
tool's schema", and ``schema --config`` hands an editor a reference to nowhere
(``PointerToNowhere: '/$defs/tool.ptr2/properties/w/properties/n'``). Should: the pointer
resolves where the author's schema has it (both surfaces), or the config is refused when read
naming it. Held (26 + the tool count): ``#/properties/w`` (one level), ``$anchor``
(``#v``), the same anchor
name in two tools kept apart (``anca`` string, ``ancb`` integer), the root self-reference
``$ref: "#"`` (the tool's root, not the plan schema's: a tree checked to depth 3, an extra
key refused), ``~1``/``~0``/``%20`` escapes, ``$defs`` within ``$defs``, ``v: false``,
``unevaluatedProperties`` beside an ``allOf`` ``$ref``, an ``$id`` ending ``#``,
``minContains``/``maxContains``: ``validate`` and the schema agree both ways.

Fixed (2026-11-30): ``ptr2-ok``/``-bad``, ``deep-ok``/``-bad``, ``itm-ok``/``-bad``. Both
surfaces check params against the tool's schema with a reference allowed for each part
(``controller.plan.shape.with_references``), which wraps each part ``anyOf: [reference,
part]``: a pointer that went on INTO a part reached nowhere. Now each JSON Pointer reference
is rewritten where the schema is wrapped, ``anyOf/1`` inserted at each part it goes into
(in the resource it names, escapes kept as written), so it reaches the subschema JSON
Schema 2020-12 resolves in the schema as written, in ``validate`` and, rebased, in ``schema
--config``; and the config check resolves every reference with ``referencing`` in the schema
as written AND as params are checked against it, so a shape the rewrite ever misses is
refused when the config is read (E_CONFIG_INVALID naming the ``$ref``), never at validate.
"""

from __future__ import annotations

from typing import Any

import pytest
from advkit import cases
from schemakit import judged, tool_plan, tools_config

TOOLS = {
    "anc": '{$defs: {v: {$anchor: "v", type: integer}}, properties: {v: {$ref: "#v"}}}',
    "anca": '{$defs: {v: {$anchor: "same", type: string}}, properties: {v: {$ref: "#same"}}}',
    "ancb": '{$defs: {v: {$anchor: "same", type: integer}}, properties: {v: {$ref: "#same"}}}',
    "self": (
        "{type: object, additionalProperties: false, properties: {n: {type: integer},"
        ' kids: {type: array, items: {$ref: "#"}}}}'
    ),
    "ptr": (
        "{properties: {w: {type: object, properties: {n: {type: integer}}},"
        ' x: {$ref: "#/properties/w"}}}'
    ),
    "ptr2": (
        "{properties: {w: {type: object, properties: {n: {type: integer}}},"
        ' x: {$ref: "#/properties/w/properties/n"}}}'
    ),
    "esc": (
        '{$defs: {"a/b": {type: integer}, "a~b": {type: string}, "a b": {type: boolean}},'
        ' properties: {s: {$ref: "#/$defs/a~1b"}, t: {$ref: "#/$defs/a~0b"},'
        ' u: {$ref: "#/$defs/a%20b"}}}'
    ),
    "deep": (
        "{properties: {w: {$defs: {n: {type: integer}},"
        ' properties: {n: {$ref: "#/properties/w/$defs/n"}}}}}'
    ),
    "deep2": (
        "{$defs: {a: {$defs: {b: {type: integer}}}},"
        ' properties: {v: {$ref: "#/$defs/a/$defs/b"}}}'
    ),
    "itm": (
        "{properties: {l: {type: array, items: {type: integer}},"
        ' m: {$ref: "#/properties/l/items"}}}'
    ),
    "boo": "{properties: {v: false, ok: true}}",
    "unev": (
        '{allOf: [{$ref: "#/$defs/base"}], unevaluatedProperties: false,'
        " $defs: {base: {properties: {n: {type: integer}}}}}"
    ),
    "frag": (
        '{$id: "urn:r67:frag#", $defs: {v: {type: integer}},'
        ' properties: {v: {$ref: "#/$defs/v"}}}'
    ),
    "cont": (
        "{properties: {l: {type: array, contains: {type: integer},"
        " minContains: 2, maxContains: 3}}}"
    ),
}  # fmt: skip

HONEST: dict[str, tuple[str, str]] = {
    "anc-ok": ("anc", '{"v": 3}'),
    "anca-ok": ("anca", '{"v": "x"}'),
    "ancb-ok": ("ancb", '{"v": 3}'),
    "self-ok": ("self", '{"n": 1, "kids": [{"n": 2, "kids": [{"n": 3}]}]}'),
    "ptr-ok": ("ptr", '{"x": {"n": 3}}'),
    "ptr2-ok": ("ptr2", '{"x": 3}'),
    "esc-ok": ("esc", '{"s": 3, "t": "x", "u": true}'),
    "deep-ok": ("deep", '{"w": {"n": 3}}'),
    "deep2-ok": ("deep2", '{"v": 3}'),
    "itm-ok": ("itm", '{"m": 3}'),
    "boo-ok": ("boo", '{"ok": 1}'),
    "unev-ok": ("unev", '{"n": 3}'),
    "frag-ok": ("frag", '{"v": 3}'),
    "cont-ok": ("cont", '{"l": [1, 2, "x"]}'),
}
SLIPS: dict[str, tuple[str, str]] = {
    "anc-bad": ("anc", '{"v": "x"}'),
    "anca-bad": ("anca", '{"v": 3}'),
    "ancb-bad": ("ancb", '{"v": "x"}'),
    "self-bad": ("self", '{"n": 1, "kids": [{"n": 2, "kids": [{"n": "x"}]}]}'),
    "self-extra": ("self", '{"n": 1, "kids": [{"n": 2, "zz": 1}]}'),
    "ptr-bad": ("ptr", '{"x": {"n": "x"}}'),
    "ptr2-bad": ("ptr2", '{"x": "x"}'),
    "esc-s-bad": ("esc", '{"s": "x"}'),
    "esc-t-bad": ("esc", '{"t": 3}'),
    "esc-u-bad": ("esc", '{"u": 3}'),
    "deep-bad": ("deep", '{"w": {"n": "x"}}'),
    "deep2-bad": ("deep2", '{"v": "x"}'),
    "itm-bad": ("itm", '{"m": "x"}'),
    "boo-bad": ("boo", '{"v": 1}'),
    "unev-bad": ("unev", '{"n": 3, "zz": 1}'),
    "frag-bad": ("frag", '{"v": "x"}'),
    "cont-few": ("cont", '{"l": [1, "x"]}'),
    "cont-many": ("cont", '{"l": [1, 2, 3, 4]}'),
}
BROKEN: dict[str, Any] = {}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("r67-schemashape")
    plans = {vid: tool_plan(tool, params) for vid, (tool, params) in {**HONEST, **SLIPS}.items()}
    return judged(folder, plans, tools_config(folder, TOOLS))


def test_every_tool_of_the_config_is_read() -> None:
    assert set(TOOLS) == {t for t, _ in [*HONEST.values(), *SLIPS.values()]}


@pytest.mark.parametrize("vid", cases(list(HONEST), list(HONEST), BROKEN))
def test_an_honest_plan_is_accepted_by_the_config_schema(
    verdicts: dict[str, Any], vid: str
) -> None:
    got = verdicts[vid]
    assert got["validate"] is not None and got["validate"]["valid"], got
    assert got["schema"] == [], got


@pytest.mark.parametrize("vid", cases(list(SLIPS), list(SLIPS), BROKEN))
def test_a_plan_validate_refuses_is_refused_by_the_schema(
    verdicts: dict[str, Any], vid: str
) -> None:
    got = verdicts[vid]
    row = got["validate"]
    assert row is not None and row["valid"] is False, got
    assert any(e["code"] == "E_PARAMS_INVALID" for e in row["errors"]), row
    assert got["schema"], got
    assert not any(e.startswith("UNCHECKABLE") for e in got["schema"]), got
