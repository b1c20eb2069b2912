"""Round 68, agent-facing surfaces: round 67's catalog-schema pointers (docs/configuration.md
``params_schema``: "a JSON Pointer resolves as JSON Schema 2020-12 resolves it in the schema
as written, into a property's or an item's subschema too, where ``validate`` and ``schema
--config`` check params, and the config check resolves every reference in both forms")
against pointers into parts round 67 never tried: ``$dynamicRef`` with a pointer fragment,
``dependentSchemas``, ``patternProperties``, ``contains``, ``if``/``then``/``else``,
``additionalProperties``, ``not``, ``anyOf``/``allOf``/``prefixItems`` indexes (numeric
segments), ``propertyNames``, a numeric property or ``$defs`` name, a ``~1`` escape written
percent-encoded (``%7E1``), properties literally NAMED ``properties`` and ``anyOf`` (is a
segment a keyword or a name?), a pointer into a nested ``$id`` resource's property from
outside, and a pointer inside that resource relative to its own root.

No lab: one config holding every tool (a tool the config check refuses is taken out and
the config read again, the refusal recorded), ``plangate schema --config`` once,
``plangate validate --json --config`` once over every plan, the schema applied with
``jsonschema`` (an editor).

Asserted: every tool here is a valid, self-contained 2020-12 schema, so the config is read
with it (``*-ok`` fails when the config check refused the tool: honest work refused); a plan
``validate`` accepts is accepted by the schema (``*-ok``); a plan ``validate`` refuses with
``E_PARAMS_INVALID`` is refused by the schema (``*-bad``), never "uncheckable".

Broke: none. Held (37 ids + the case check): every tool read with the config (none
refused), ``validate`` and ``schema --config`` agree with JSON Schema as written both ways for
all 18 pointer shapes, ``$dynamicRef`` with a pointer fragment included.
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest
from advkit import cases, load_yaml
from schemakit import CONFIG_HEAD, editor_verdicts, exec_tools, tool_plan, tools_config, validated
from test_round61_surface_schema import PLANGATE

TOOLS = {
    "dynp": (
        "{properties: {w: {type: object, properties: {n: {type: integer}}},"
        ' x: {$dynamicRef: "#/properties/w/properties/n"}}}'
    ),
    "dep": (
        "{dependentSchemas: {a: {properties: {b: {type: integer}}}},"
        ' properties: {x: {$ref: "#/dependentSchemas/a/properties/b"}}}'
    ),
    "pp": (
        '{patternProperties: {"^n": {type: integer}},'
        ' properties: {x: {$ref: "#/patternProperties/^n"}}}'
    ),
    "ctn": (
        "{properties: {l: {type: array, contains: {type: integer}},"
        ' x: {$ref: "#/properties/l/contains"}}}'
    ),
    "ite": (
        "{if: {properties: {k: {const: 1}}, required: [k]},"
        " then: {properties: {v: {type: integer}}}, else: {properties: {v: {type: string}}},"
        ' properties: {x: {$ref: "#/then/properties/v"}, y: {$ref: "#/else/properties/v"}}}'
    ),
    "addp": (
        "{properties: {w: {type: object, additionalProperties: {type: integer}},"
        ' x: {$ref: "#/properties/w/additionalProperties"}}}'
    ),
    "notp": '{properties: {w: {not: {type: string}}, x: {$ref: "#/properties/w/not"}}}',
    "anyi": (
        "{properties: {w: {anyOf: [{type: integer}, {type: boolean}]},"
        ' x: {$ref: "#/properties/w/anyOf/1"}}}'
    ),
    "alli": (
        "{allOf: [{properties: {n: {type: integer}}}],"
        ' properties: {x: {$ref: "#/allOf/0/properties/n"}}}'
    ),
    "pfx": (
        "{properties: {t: {type: array, prefixItems: [{type: integer}, {type: string}]},"
        ' x: {$ref: "#/properties/t/prefixItems/1"}}}'
    ),
    "pnm": (
        "{properties: {w: {type: object, propertyNames: {maxLength: 2}},"
        ' x: {$ref: "#/properties/w/propertyNames"}}}'
    ),
    "numk": '{properties: {"0": {type: integer}, x: {$ref: "#/properties/0"}}}',
    "numd": '{$defs: {"1": {type: integer}}, properties: {x: {$ref: "#/$defs/1"}}}',
    "pct": '{properties: {"a/b": {type: integer}, x: {$ref: "#/properties/a%7E1b"}}}',
    "named": (
        "{properties: {properties: {type: object, properties: {n: {type: integer}}},"
        ' x: {$ref: "#/properties/properties/properties/n"}}}'
    ),
    "nany": (
        "{properties: {anyOf: {type: object, properties: {n: {type: integer}}},"
        ' x: {$ref: "#/properties/anyOf/properties/n"}}}'
    ),
    "idin": (
        '{$defs: {r: {$id: "urn:r68:inner", type: object,'
        " properties: {n: {type: integer}}}},"
        ' properties: {x: {$ref: "urn:r68:inner#/properties/n"}}}'
    ),
    "idrel": (
        '{$defs: {r: {$id: "urn:r68:rel", type: object,'
        ' properties: {n: {type: integer}, m: {$ref: "#/properties/n"}}}},'
        ' properties: {x: {$ref: "urn:r68:rel"}}}'
    ),
}  # fmt: skip

HONEST: dict[str, tuple[str, str]] = {
    "dynp-ok": ("dynp", '{"x": 3}'),
    "dep-ok": ("dep", '{"x": 3}'),
    "pp-ok": ("pp", '{"x": 3}'),
    "ctn-ok": ("ctn", '{"x": 3}'),
    "ite-ok": ("ite", '{"x": 3, "y": "s"}'),
    "addp-ok": ("addp", '{"x": 3}'),
    "notp-ok": ("notp", '{"x": "s"}'),
    "anyi-ok": ("anyi", '{"x": true}'),
    "alli-ok": ("alli", '{"x": 3}'),
    "pfx-ok": ("pfx", '{"x": "s"}'),
    "pnm-ok": ("pnm", '{"x": "ab"}'),
    "numk-ok": ("numk", '{"x": 3}'),
    "numd-ok": ("numd", '{"x": 3}'),
    "pct-ok": ("pct", '{"x": 3}'),
    "named-ok": ("named", '{"x": 3}'),
    "nany-ok": ("nany", '{"x": 3}'),
    "idin-ok": ("idin", '{"x": 3}'),
    "idrel-ok": ("idrel", '{"x": {"m": 3}}'),
}
SLIPS: dict[str, tuple[str, str]] = {
    "dynp-bad": ("dynp", '{"x": "s"}'),
    "dep-bad": ("dep", '{"x": "s"}'),
    "pp-bad": ("pp", '{"x": "s"}'),
    "ctn-bad": ("ctn", '{"x": "s"}'),
    "ite-then-bad": ("ite", '{"x": "s"}'),
    "ite-else-bad": ("ite", '{"y": 3}'),
    "addp-bad": ("addp", '{"x": "s"}'),
    "notp-bad": ("notp", '{"x": 3}'),
    "anyi-bad": ("anyi", '{"x": 3}'),
    "alli-bad": ("alli", '{"x": "s"}'),
    "pfx-bad": ("pfx", '{"x": 3}'),
    "pnm-bad": ("pnm", '{"x": "abc"}'),
    "numk-bad": ("numk", '{"x": "s"}'),
    "numd-bad": ("numd", '{"x": "s"}'),
    "pct-bad": ("pct", '{"x": "s"}'),
    "named-bad": ("named", '{"x": "s"}'),
    "nany-bad": ("nany", '{"x": "s"}'),
    "idin-bad": ("idin", '{"x": "s"}'),
    "idrel-bad": ("idrel", '{"x": {"m": "s"}}'),
}
BROKEN: dict[str, Any] = {}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("r68-schemaptr")
    cfg = tools_config(folder, TOOLS)
    tools = dict(TOOLS)
    refused: dict[str, str] = {}
    for _ in range(len(TOOLS) + 1):  # a tool the config check refuses: out, read again
        cfg.write_text(CONFIG_HEAD.format(root=folder) + exec_tools(tools))
        done = subprocess.run(
            [PLANGATE, "schema", "--config", str(cfg)],
            capture_output=True, text=True, cwd=folder, timeout=120,
        )  # fmt: skip
        if done.returncode == 0:
            break
        named = re.search(r"tools\.([a-z0-9]+)\.params_schema", done.stderr + done.stdout)
        assert named and named.group(1) in tools, done.stderr[-2000:]
        refused[named.group(1)] = (done.stderr + done.stdout)[-600:]
        del tools[named.group(1)]
    assert done.returncode == 0, done.stderr[-2000:]
    plans = {vid: tool_plan(tool, params) for vid, (tool, params) in {**HONEST, **SLIPS}.items()}
    rows, err = validated(folder, plans, cfg)
    assert "Traceback" not in err, err[-2000:]
    out = editor_verdicts(json.loads(done.stdout), plans, rows)
    for vid, (tool, _) in {**HONEST, **SLIPS}.items():
        out[vid]["refused"] = refused.get(tool)
    return out


def _as_written(tool: str, params: str) -> list[str]:
    """The params checked by jsonschema against the tool's schema as written (the truth)."""
    import jsonschema

    schema = load_yaml(f"s: {TOOLS[tool]}")["s"]
    checker = jsonschema.Draft202012Validator(json.loads(json.dumps(schema)))
    return [e.message for e in checker.iter_errors(json.loads(params))]


def test_the_cases_are_right_by_json_schema_as_written() -> None:
    assert set(TOOLS) == {t for t, _ in [*HONEST.values(), *SLIPS.values()]}
    for vid, (tool, params) in HONEST.items():
        assert _as_written(tool, params) == [], vid
    for vid, (tool, params) in SLIPS.items():
        assert _as_written(tool, params), vid


@pytest.mark.parametrize("vid", cases(list(HONEST), list(HONEST), BROKEN))
def test_an_honest_plan_is_accepted_by_the_config_schema(
    verdicts: dict[str, Any], vid: str
) -> None:
    got = verdicts[vid]
    assert got["refused"] is None, got
    assert got["validate"] is not None and got["validate"]["valid"], got
    assert got["schema"] == [], got


@pytest.mark.parametrize("vid", cases(list(SLIPS), list(SLIPS), BROKEN))
def test_a_plan_validate_refuses_is_refused_by_the_schema(
    verdicts: dict[str, Any], vid: str
) -> None:
    got = verdicts[vid]
    assert got["refused"] is None, got
    row = got["validate"]
    assert row is not None and row["valid"] is False, got
    assert any(e["code"] == "E_PARAMS_INVALID" for e in row["errors"]), row
    assert got["schema"], got
    assert not any(e.startswith("UNCHECKABLE") for e in got["schema"]), got
