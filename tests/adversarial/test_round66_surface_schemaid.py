"""Round 66, agent-facing surfaces: round 65's self-contained catalog schemas (every
``$ref``/``$dynamicRef`` must resolve inside the tool's own schema when the config is read;
``schema --config`` gives each ``$id`` a URI of the tool's own,
``urn:plangate:tool.<name>:<$id>``) where round 65 did not look: ``$id``s in relative forms
(a nested ``sub.json`` with no root ``$id``; ``sub.json`` under an ``https://`` root), odd
schemes (``tag:``, ``file:``), an ``$id`` spelled as ANOTHER tool's embedded URI
(``urn:plangate:tool.b:urn:r66:bv`` in tool ``a``: does the rewrite skip it and make ``a``'s
resource collide with ``b``'s?), a ``$schema`` of draft-07 (a ``$ref`` with a sibling
``maximum``, ignored by draft-07, applied by 2020-12), a ``$dynamicRef`` extension across
resources (root ``$dynamicAnchor`` over a nested tree resource, with and without a root
``$id``), references inside keywords not walked before (``dependentSchemas``,
``if``/``then``, ``prefixItems``, ``not``, ``contains``, ``propertyNames``), PROPERTIES and
``$defs`` NAMED ``const``/``enum``/``default``/``examples`` (the config check skips
references under those keywords: does it, or the rebasing, skip a property of that name
too, so ``#/$defs/Output`` meets the plan schema's own ``Output``?), ``$ref: ""`` and
relative URI references (``root.json``, ``./root.json#``, ``/a/root.json``,
``//host/a/root.json``), and a ``const`` holding ``$id``/a URI ``$ref`` (data, never
rewritten).

No lab: one config holding every tool, ``plangate schema --config`` once, ``plangate
validate --json --config`` once over every plan, the schema applied with ``jsonschema`` (an
editor); two more configs must be refused when read (a foreign ``$ref`` under a property
named ``enum``, a ``$defs`` entry named ``examples`` holding ``#/nowhere``).

Asserted: a plan ``validate`` accepts is accepted by the schema (``HONEST``); a plan it
refuses with ``E_PARAMS_INVALID`` is refused by the schema (``SLIPS``); the two configs are
``E_CONFIG_INVALID`` naming the tool and the ``$ref`` (``cfg-*``).

Broke: none. Held (all): every shape above reads alike in ``validate`` and ``schema
--config``; the look-alike ``$id`` is rewritten again (``urn:plangate:tool.a:urn:plangate:
tool.b:...``), so ``a`` (string) and ``b`` (integer) stay apart; draft-07 is read as
2020-12 in both (``maximum`` applies beside ``$ref``); the root ``$dynamicAnchor`` extends
the nested tree only where the root has an ``$id`` (both surfaces alike); the ``const``
data is compared as written; the references under properties named like data keywords
resolve in the tool's own ``$defs`` (``Output`` the tool's integer); both odd configs are
refused when read.
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
from advkit import cases
from schemakit import CONFIG_HEAD, config_file, judged, tool_plan
from test_round61_surface_schema import PLANGATE

CONFIG = (
    CONFIG_HEAD
    + """\
  relid:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $defs: {{s: {{$id: "sub.json", $defs: {{v: {{type: integer}}}}}}}}
      properties: {{v: {{$ref: "sub.json#/$defs/v"}}}}
  relbase:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $id: "https://r66.example/base/root.json"
      $defs: {{s: {{$id: "sub.json", $defs: {{v: {{type: integer}}}}}}}}
      properties: {{v: {{$ref: "sub.json#/$defs/v"}}}}
  tagid:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $id: "tag:r66.example,2026:a"
      $defs: {{v: {{type: integer}}}}
      properties: {{v: {{$ref: "tag:r66.example,2026:a#/$defs/v"}}}}
  fileid:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $id: "file:///etc/r66.json"
      $defs: {{v: {{type: integer}}}}
      properties: {{v: {{$ref: "file:///etc/r66.json#/$defs/v"}}}}
  a:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $id: "urn:plangate:tool.b:urn:r66:bv"
      $defs: {{v: {{type: string}}}}
      properties: {{v: {{$ref: "#/$defs/v"}}}}
  b:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $id: "urn:r66:bv"
      $defs: {{v: {{type: integer}}}}
      properties: {{v: {{$ref: "#/$defs/v"}}}}
  d7:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $schema: "http://json-schema.org/draft-07/schema#"
      definitions: {{v: {{type: integer}}}}
      properties: {{v: {{$ref: "#/definitions/v", maximum: 5}}}}
  dynx:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $dynamicAnchor: node
      $ref: "urn:r66:tree"
      properties: {{n: {{maximum: 9}}}}
      $defs:
        tree:
          $id: "urn:r66:tree"
          $dynamicAnchor: node
          type: object
          properties:
            n: {{type: integer}}
            kids: {{type: array, items: {{$dynamicRef: "#node"}}}}
  dynid:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $id: "urn:r66:ext"
      $dynamicAnchor: node
      $ref: "urn:r66:tree2"
      properties: {{n: {{maximum: 9}}}}
      $defs:
        tree:
          $id: "urn:r66:tree2"
          $dynamicAnchor: node
          type: object
          properties:
            n: {{type: integer}}
            kids: {{type: array, items: {{$dynamicRef: "#node"}}}}
  kw:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $defs: {{Output: {{type: integer}}, Plan: {{type: string, maxLength: 2}}}}
      dependentSchemas: {{d: {{properties: {{d: {{$ref: "#/$defs/Output"}}}}}}}}
      propertyNames: {{$ref: "#/$defs/Plan"}}
      if: {{required: [i]}}
      then: {{properties: {{i: {{$ref: "#/$defs/Output"}}}}}}
      properties:
        c: {{const: {{"$id": "urn:r66:c", "$ref": "urn:r66:c#/x"}}}}
        e: {{enum: [{{"$dynamicRef": "#node"}}]}}
        p: {{prefixItems: [{{$ref: "#/$defs/Output"}}]}}
        n: {{not: {{$ref: "#/$defs/Output"}}}}
        ct: {{contains: {{$ref: "#/$defs/Output"}}, minContains: 1}}
  pn:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $defs: {{Output: {{type: integer}}, const: {{type: string}}}}
      properties:
        const: {{$ref: "#/$defs/Output"}}
        enum: {{$ref: "#/$defs/Output"}}
        default: {{$ref: "#/$defs/Output"}}
        examples: {{$ref: "#/$defs/const"}}
  emp:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      type: object
      properties: {{n: {{type: integer}}, w: {{$ref: ""}}}}
  dot:
    kind: exec
    argv: ["/bin/true"]
    params_schema:
      $id: "https://r66.example/a/root.json"
      type: object
      properties:
        n: {{type: integer}}
        w: {{$ref: "root.json"}}
        x: {{$ref: "./root.json#"}}
        y: {{$ref: "/a/root.json"}}
        z: {{$ref: "//r66.example/a/root.json"}}
"""
)

TOOLS = ("relid", "relbase", "tagid", "fileid", "a", "b", "d7", "dynx", "dynid", "kw", "pn",
         "emp", "dot")  # fmt: skip
OUT = '{"name": "a", "path": "$.x"}'  # the plan schema's own Output shape

HONEST: dict[str, tuple[str, str]] = {
    "relid-ok": ("relid", '{"v": 3}'),
    "relbase-ok": ("relbase", '{"v": 3}'),
    "tagid-ok": ("tagid", '{"v": 3}'),
    "fileid-ok": ("fileid", '{"v": 3}'),
    "pgid-a-ok": ("a", '{"v": "x"}'),
    "pgid-b-ok": ("b", '{"v": 3}'),
    "d7-ok": ("d7", '{"v": 3}'),
    "dynx-ok": ("dynx", '{"n": 3, "kids": [{"n": 50}]}'),
    "dynid-ok": ("dynid", '{"n": 3, "kids": [{"n": 4}]}'),
    "kw-dep-ok": ("kw", '{"d": 3}'),
    "kw-if-ok": ("kw", '{"i": 3}'),
    "kw-const-ok": ("kw", '{"c": {"$id": "urn:r66:c", "$ref": "urn:r66:c#/x"}}'),
    "kw-enum-ok": ("kw", '{"e": {"$dynamicRef": "#node"}}'),
    "kw-prefix-ok": ("kw", '{"p": [3]}'),
    "kw-not-ok": ("kw", '{"n": "x"}'),
    "kw-contains-ok": ("kw", '{"ct": ["x", 3]}'),
    "pn-const-ok": ("pn", '{"const": 3}'),
    "pn-enum-ok": ("pn", '{"enum": 3}'),
    "pn-default-ok": ("pn", '{"default": 3}'),
    "pn-examples-ok": ("pn", '{"examples": "s"}'),
    "emp-ok": ("emp", '{"w": {"n": 3}}'),
    "dot-ok": ("dot", '{"w": {"n": 3}, "x": {"n": 3}, "y": {"n": 3}, "z": {"n": 3}}'),
}
SLIPS: dict[str, tuple[str, str]] = {
    "relid-bad": ("relid", '{"v": "x"}'),
    "relbase-bad": ("relbase", '{"v": "x"}'),
    "tagid-bad": ("tagid", '{"v": "x"}'),
    "fileid-bad": ("fileid", '{"v": "x"}'),
    "pgid-a-bad": ("a", '{"v": 3}'),
    "pgid-b-bad": ("b", '{"v": "x"}'),
    "d7-bad": ("d7", '{"v": 50}'),
    "dynx-bad": ("dynx", '{"n": 3, "kids": [{"n": "x"}]}'),
    "dynid-bad": ("dynid", '{"n": 3, "kids": [{"n": 50}]}'),
    "kw-dep-bad": ("kw", '{"d": "x"}'),
    "kw-if-bad": ("kw", '{"i": "x"}'),
    "kw-const-bad": (
        "kw",
        '{"c": {"$id": "urn:plangate:tool.kw:urn:r66:c", '
        '"$ref": "urn:plangate:tool.kw:urn:r66:c#/x"}}',
    ),
    "kw-enum-bad": ("kw", '{"e": {"$dynamicRef": "#tool.kw.node"}}'),
    "kw-prefix-bad": ("kw", '{"p": ["x"]}'),
    "kw-not-bad": ("kw", '{"n": 3}'),
    "kw-contains-bad": ("kw", '{"ct": ["x"]}'),
    "kw-names-bad": ("kw", '{"abc": 1}'),
    "pn-const-bad": ("pn", '{"const": ' + OUT + "}"),
    "pn-enum-bad": ("pn", '{"enum": ' + OUT + "}"),
    "pn-default-bad": ("pn", '{"default": ' + OUT + "}"),
    "pn-examples-bad": ("pn", '{"examples": 3}'),
    "emp-bad": ("emp", '{"w": {"n": "x"}}'),
    "dot-bad": ("dot", '{"w": {"n": 3}, "x": {"n": 3}, "y": {"n": 3}, "z": {"n": "x"}}'),
}

REFUSED = {
    "cfg-foreign-under-enum": (
        '  ue:\n    kind: exec\n    argv: ["/bin/true"]\n    params_schema:\n'
        '      properties: {enum: {$ref: "https://r66.invalid/v.json"}}\n',
        "https://r66.invalid/v.json",
    ),
    "cfg-nowhere-in-examples-def": (
        '  ud:\n    kind: exec\n    argv: ["/bin/true"]\n    params_schema:\n'
        '      $defs: {examples: {$ref: "#/nowhere"}}\n'
        '      properties: {v: {$ref: "#/$defs/examples"}}\n',
        "#/nowhere",
    ),
}

#: none broke (see the module docstring)
BROKEN: dict[str, Any] = {}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("r66-schemaid")
    plans = {vid: tool_plan(tool, params) for vid, (tool, params) in {**HONEST, **SLIPS}.items()}
    out: dict[str, Any] = judged(folder, plans, config_file(folder, CONFIG))
    head = CONFIG_HEAD.format(root=folder)
    for vid, (tool, _) in REFUSED.items():
        bad = folder / f"{vid}.yml"
        bad.write_text(head + tool)
        done = subprocess.run(
            [PLANGATE, "schema", "--config", str(bad)], capture_output=True, text=True, cwd=folder
        )
        out[vid] = done
    return out


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


@pytest.mark.parametrize("vid", cases(list(REFUSED), list(REFUSED), BROKEN))
def test_a_reference_leaving_the_tool_is_refused_when_the_config_is_read(
    verdicts: dict[str, Any], vid: str
) -> None:
    done = verdicts[vid]
    assert done.returncode != 0, done.stdout[:500]
    assert "E_CONFIG_INVALID" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert REFUSED[vid][1] in done.stderr and "params_schema" in done.stderr, done.stderr
