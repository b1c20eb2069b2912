"""Round 65, agent-facing surfaces: round 64's catalog schemas (each tool's ``params_schema``
embedded in ``plangate schema --config`` at ``$defs/tool.<name>``, its own ``$ref``s rebased,
a schema with its own ``$id`` kept as its own resource) where the rebasing was not tried:
two tools whose schemas carry the SAME ``$id``, a ``$defs`` entry that is its own resource
(``$id``) with a ``$ref`` relative to it, a ``$ref`` in data (``const``/``enum``), properties
NAMED ``$ref``/``$id``, percent-encoded and ``~1``-escaped pointers; and whether ``schema
--config`` and ``validate --config`` agree on every kind of tool call (an action, a fallback
step, a precondition).

No lab: a config, ``plangate schema --config`` once, ``plangate validate --json --config``
once over all plans, the schema applied with ``jsonschema`` (an editor), as round 64.
Asserted: a plan ``validate`` accepts is accepted by the schema (``HONEST``); a plan
``validate`` refuses with ``E_PARAMS_INVALID`` is refused by the schema (``SLIPS``).

Broke (strict xfails, 6): the tools ``two`` (``$id: urn:r65:same``, ``v`` an integer) and
``three`` (the same ``$id``, ``v`` a string): both are embedded with their ``$id`` kept, so
the plan schema holds two resources of one URI and ``two``'s ``$ref: "#/$defs/v"`` resolves in
``three``'s: ``two`` with ``v: 5`` (valid in ``validate``) is refused by the schema
(``dupid-ok``, in a fallback step ``dupid-fb-ok``, in a precondition ``dupid-pre-ok``) and
``v: "x"`` (``E_PARAMS_INVALID`` in ``validate``) is accepted (``dupid-bad``,
``dupid-fb-bad``, ``dupid-pre-bad``). Held: ``three`` itself, a nested ``$id`` resource with
its own ``$ref``, ``$ref`` inside ``const``/``enum`` left alone, properties named ``$ref`` and
``$id``, ``%24defs`` and ``a~1b`` pointers, an ``$anchor`` (``anchor-*``), a
``$dynamicAnchor`` tree (``dyn-*``), an ``$id`` with an empty fragment (``emptyfrag-*``), an
absolute ``$ref`` into the tool's own ``$id`` (``absown-*``), one anchor name in the root and
in a nested ``$id`` resource (``nestanchor-*``). Should: a tool's ``$id`` is rebased (made unique
per tool, e.g. under the plan schema's base) or a catalog where two tools share an ``$id`` is
refused when the config is read, so each tool's references resolve in its own schema as in
``validate``.

Fixed (2026-11-29): all 6. ``schema --config`` gives each ``$id`` of a tool's schema a URI of
that tool's own (``catalog._own_uri``: ``urn:plangate:tool.<name>:<the $id>``), and every
reference naming a URI (``urn:r65:same#/$defs/v``, resolved against the resource it sits
in) the same, so two tools' ``$id``s never meet and ``two``'s ``$ref`` resolves in ``two``'s
schema, as in ``validate``. Fragment-only references inside a resource of its own are kept
(``#`` is that resource); the root's are rebased as in round 64. The config refuses a
reference that does not resolve inside its tool's schema (``schemarefs``; the module
``test_round65_surface_schemaref``), so every URI a reference names is the tool's own.
"""

from __future__ import annotations

from typing import Any

import pytest
from advkit import cases
from schemakit import CONFIG_HEAD, config_file, judged

CONFIG = (
    CONFIG_HEAD
    + """\
  rec:
    kind: exec
    argv: ["/bin/true", "{{tag}}"]
    params_schema:
      type: object
      $defs:
        sub:
          $id: "urn:r65:sub"
          type: object
          $defs: {{p: {{type: integer}}}}
          properties: {{p: {{$ref: "#/$defs/p"}}}}
        "a/b": {{type: integer}}
      properties:
        tag: {{type: string}}
        mode: {{const: {{"$ref": "#/x"}}}}
        en: {{enum: ["a", {{"$ref": "#"}}]}}
        "$ref": {{type: string}}
        "$id": {{type: integer}}
        s: {{$ref: "#/$defs/sub"}}
        t: {{$ref: "#/$defs/a~1b"}}
        u: {{$ref: "#/%24defs/a~1b"}}
  two:
    kind: exec
    argv: ["/bin/true"]
    idempotent: true
    risk: low
    params_schema:
      $id: "urn:r65:same"
      $defs: {{v: {{type: integer}}}}
      properties: {{v: {{$ref: "#/$defs/v"}}}}
  three:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $id: "urn:r65:same"
      $defs: {{v: {{type: string}}}}
      properties: {{v: {{$ref: "#/$defs/v"}}}}
  fail: {{kind: exec, argv: ["/bin/false"]}}
  an:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $defs: {{p: {{$anchor: pos, type: integer, minimum: 1}}}}
      properties: {{v: {{$ref: "#pos"}}}}
  dyn:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $dynamicAnchor: node
      type: object
      properties:
        n: {{type: integer}}
        kids: {{type: array, items: {{$dynamicRef: "#node"}}}}
  ef:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $id: "urn:r65:ef#"
      $defs: {{v: {{type: integer}}}}
      properties: {{v: {{$ref: "#/$defs/v"}}}}
  own:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $id: "urn:r65:own"
      $defs: {{v: {{type: integer}}}}
      properties: {{v: {{$ref: "urn:r65:own#/$defs/v"}}}}
  nest:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $defs:
        top: {{$anchor: pp, type: integer}}
        sub:
          $id: "urn:r65:nest"
          $defs: {{x: {{$anchor: pp, type: string}}}}
          properties: {{w: {{$ref: "#pp"}}}}
      properties: {{v: {{$ref: "#pp"}}, s: {{$ref: "#/$defs/sub"}}}}
"""
)

HEAD = """\
plan:
  name: "n"
  task: "t"
  status: pending_approval
available_tools:
  [{name: rec}, {name: two}, {name: three}, {name: fail}, {name: an}, {name: dyn}, {name: ef},
   {name: own}, {name: nest}]
"""


def _action(tool: str, params: str) -> str:
    return HEAD + f'actions:\n  - id: 1\n    tool: {tool}\n    why: "w"\n    params: {{{params}}}\n'


def _fallback(params: str) -> str:
    return (
        HEAD + 'actions:\n  - id: 1\n    tool: fail\n    why: "w"\n    on_failure: fallback\n'
        f'    fallback:\n      - {{id: "1.1", tool: two, why: "fb", params: {{{params}}}}}\n'
    )


def _pre(params: str) -> str:
    return (
        HEAD + f"preconditions:\n  - {{tool: two, params: {{{params}}}, "
        "expect: {path: $.exit_code, equals: 0}}\n"
        'actions:\n  - id: 1\n    tool: rec\n    why: "w"\n    params: {tag: x}\n'
    )


HONEST = {
    "dupid-ok": _action("two", "v: 5"),
    "dupid-fb-ok": _fallback("v: 5"),
    "dupid-pre-ok": _pre("v: 5"),
    "dupid-three-ok": _action("three", 'v: "x"'),
    "const-ref": _action("rec", 'tag: x, mode: {"$ref": "#/x"}'),
    "enum-ref": _action("rec", 'tag: x, en: {"$ref": "#"}'),
    "prop-ref": _action("rec", 'tag: x, "$ref": "y"'),
    "prop-id": _action("rec", 'tag: x, "$id": 3'),
    "subid-ok": _action("rec", "tag: x, s: {p: 3}"),
    "tilde-ok": _action("rec", "tag: x, t: 3"),
    "pct-ok": _action("rec", "tag: x, u: 3"),
    "anchor-ok": _action("an", "v: 3"),
    "dyn-ok": _action("dyn", "n: 1, kids: [{n: 2, kids: [{n: 3}]}]"),
    "emptyfrag-ok": _action("ef", "v: 3"),
    "absown-ok": _action("own", "v: 3"),
    "nestanchor-ok": _action("nest", 'v: 3, s: {w: "x"}'),
}
SLIPS = {
    "dupid-bad": _action("two", 'v: "x"'),
    "dupid-fb-bad": _fallback('v: "x"'),
    "dupid-pre-bad": _pre('v: "x"'),
    "dupid-three-bad": _action("three", "v: 5"),
    "subid-bad": _action("rec", 'tag: x, s: {p: "x"}'),
    "pct-bad": _action("rec", 'tag: x, u: "no"'),
    "prop-id-bad": _action("rec", 'tag: x, "$id": "no"'),
    "anchor-bad": _action("an", "v: 0"),
    "dyn-bad": _action("dyn", 'n: 1, kids: [{n: 2, kids: [{n: "x"}]}]'),
    "emptyfrag-bad": _action("ef", 'v: "x"'),
    "absown-bad": _action("own", 'v: "x"'),
    "nestanchor-bad": _action("nest", "v: 3, s: {w: 3}"),
}

#: all fixed (see the module docstring)
BROKEN: dict[str, Any] = {}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("r65-catalog")
    return judged(folder, {**HONEST, **SLIPS}, config_file(folder, CONFIG))


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
