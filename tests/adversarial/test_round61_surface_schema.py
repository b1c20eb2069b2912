"""Round 61, agent-facing surfaces: ``plangate schema`` (the JSON Schema of PLAN.yml an
agent writes against) against ``plangate validate``, and ``validate`` on hostile files.

SPEC §8: ``schema`` is "JSON Schema of PLAN.yml"; an agent that writes to it (docs/agents.md:
"``validate`` until ``valid: true``") expects a plan the schema accepts to be refused only
for what a schema cannot say (references, cycles, the catalog). "Every error names its code
(§10) and a remedy; no traceback reaches a user for bad input."

No lab: a temp folder of one-action plans (the same base, one change each), ``plangate
schema`` once, ``plangate validate --json`` once over all of them, and the schema applied with
``jsonschema`` (Draft 2020-12, the dialect ``$schema`` names) to the same YAML read as data.

Variants and what is asserted:

- ``agree-*`` (15): wrong types, bounds, enums, empty strings, a missing key: the schema and
  ``validate`` agree (both accept or both refuse).
- ``shape-*`` (6): a structural rule ``validate`` refuses with ``E_SCHEMA_INVALID`` (not a
  reference, cycle or catalog check): the published schema must refuse it too.
- ``hostile-*`` (6): 20,000 nested brackets, 5,000 nested flow maps, invalid UTF-8, a NUL,
  UTF-16, a 200,000-character key: ``validate`` exits 1 with an ``E_`` code, no traceback.

Seen: the ``shape-*`` variants broke (strict xfails): ``inputs`` keys are limited by
``patternProperties`` only (no ``additionalProperties: false``), so ``"bad key"`` and ``"a.b"``
pass the schema; a guard with no rule, ``expect: []``, an action with neither ``tool`` nor
``plan`` (null or missing) and ``retries`` without ``on_failure: retry`` pass the schema and
are ``E_SCHEMA_INVALID`` in ``validate``. Every ``agree-*`` and ``hostile-*`` held.

Fixed (2026-11-29): the schema's models say these rules themselves, from the constants the
validators read (``controller.plan.schema``): ``propertyNames`` for input keys, ``minItems``
for ``expect``, ``anyOf`` of the guard rules, ``oneOf`` of ``tool``/``plan`` (not null),
``if``/``then`` for ``retry``/``retries`` against the step's (or the plan's) ``on_failure``;
``tests/plan/test_schema_agrees.py`` runs every example and variant through both.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from advkit import cases
from mcpkit import PLANGATE
from schemakit import plan_schema, schema_errors, validated

BASE = """\
plan:
  name: "n"
  task: "t"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "w"
    params:
      tag: "x"
"""


def _why(extra: str) -> str:
    return BASE.replace('    why: "w"\n', '    why: "w"\n' + extra)


AGREE = {
    "agree-ok": BASE,
    "agree-id-str": BASE.replace("id: 1", 'id: "1"'),
    "agree-id-zero": BASE.replace("id: 1", "id: 0"),
    "agree-inputs-list": BASE + "inputs: [1, 2]\n",
    "agree-params-null": BASE.replace('    params:\n      tag: "x"\n', "    params: null\n"),
    "agree-plan-onfail-fallback": BASE + "on_failure: fallback\n",
    "agree-status-unknown": BASE.replace("pending_approval", "zz"),
    "agree-tools-strings": BASE.replace("  - name: rec\n", "  - rec\n"),
    "agree-timeout-bool": _why("    timeout: true\n"),
    "agree-version-str": BASE.replace(
        "status: pending_approval\n", "status: pending_approval\n  version: abc\n"
    ),
    "agree-nested-str": BASE.replace("    tool: rec\n", '    plan: "plans/x"\n'),
    "agree-name-empty": BASE.replace('name: "n"', 'name: ""'),
    "agree-optional-str": _why('    outputs: [{name: o, path: "$.a", optional: "yes"}]\n'),
    "agree-interval-neg": _why(
        '    verify: {tool: rec, expect: [{path: "$.ok", equals: true}], interval: -1,'
        " timeout: 5}\n"
    ),
    "agree-delay-str": _why(
        "    idempotent: true\n    on_failure: retry\n    retry: {attempts: 2, delay: 5s}\n"
    ),
}

SHAPE = {
    "shape-input-key-space": BASE + 'inputs:\n  "bad key": 1\n',
    "shape-input-key-dot": BASE + 'inputs:\n  "a.b": 1\n',
    "shape-guard-no-rule": _why("    guards: [{param: tag}]\n"),
    "shape-expect-empty": BASE + "preconditions:\n  - tool: rec\n    expect: []\n",
    "shape-tool-null": BASE.replace("    tool: rec\n", "    tool: null\n"),
    "shape-tool-missing": BASE.replace("    tool: rec\n", ""),
    "shape-retries-alone": _why("    idempotent: true\n    retries: 2\n"),
}

HOSTILE: dict[str, bytes] = {
    "hostile-deep-flow": (BASE + "metadata:\n  x: " + "[" * 20000 + "]" * 20000 + "\n").encode(),
    "hostile-deep-map": (
        BASE + "metadata:\n  x: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n"
    ).encode(),
    "hostile-bad-utf8": BASE.encode().replace(b'"w"', b'"w\xff\xfe"'),
    "hostile-nul": BASE.encode().replace(b'"w"', b'"w\x00"'),
    "hostile-utf16": BASE.encode("utf-16"),
    "hostile-long-key": (BASE + "metadata:\n  " + "k" * 200000 + ": 1\n").encode(),
}

BROKEN: dict[str, Any] = {}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    import jsonschema

    folder = tmp_path_factory.mktemp("r61-schema")
    checker = jsonschema.Draft202012Validator(plan_schema(folder))
    plans = {**AGREE, **SHAPE}
    rows, _err = validated(folder, plans)
    out: dict[str, Any] = {}
    for vid, text in plans.items():
        out[vid] = {"schema": schema_errors(checker, text, None), "validate": rows.get(vid)}
    for vid, raw in HOSTILE.items():
        (folder / f"{vid}.yml").write_bytes(raw)
        got = subprocess.run(
            [PLANGATE, "validate", "--json", f"{vid}.yml"],
            capture_output=True,
            cwd=folder,
            timeout=120,
        )
        out[vid] = {
            "rc": got.returncode,
            "out": got.stdout.decode("utf-8", "replace"),
            "err": got.stderr.decode("utf-8", "replace"),
        }
    return out


@pytest.mark.parametrize("vid", cases(list(AGREE), list(AGREE), BROKEN))
def test_schema_and_validate_agree(verdicts: dict[str, Any], vid: str) -> None:
    got = verdicts[vid]
    assert got["validate"] is not None, got
    assert (not got["schema"]) == bool(got["validate"]["valid"]), got


@pytest.mark.parametrize("vid", cases(list(SHAPE), list(SHAPE), BROKEN))
def test_a_shape_validate_refuses_the_schema_refuses(verdicts: dict[str, Any], vid: str) -> None:
    got = verdicts[vid]
    row = got["validate"]
    assert row is not None and row["valid"] is False, got  # validate refuses it ...
    assert any(e["code"] == "E_SCHEMA_INVALID" for e in row["errors"]), row  # ... as a shape
    assert got["schema"], f"the schema accepts what validate refuses: {row['errors']}"


@pytest.mark.parametrize("vid", cases(list(HOSTILE), list(HOSTILE), BROKEN))
def test_a_hostile_file_is_a_coded_refusal(verdicts: dict[str, Any], vid: str) -> None:
    got = verdicts[vid]
    assert got["rc"] == 1, got
    assert "Traceback" not in got["err"] + got["out"], got["err"][-2000:]
    row = json.loads(got["out"])
    row = row[0] if isinstance(row, list) else row
    assert row["valid"] is False and row["errors"][0]["code"].startswith("E_"), row
    assert row["errors"][0].get("remedy"), row
