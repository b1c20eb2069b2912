"""Round 62, agent-facing surfaces: ``plangate schema`` against ``plangate validate``,
after round 61's fix (the schema carries ``validate``'s shape rules, "the rest named in the
schema's ``description``").

docs/agents.md: an agent writes to the schema and "``validate`` until ``valid: true``";
round 61 (threat model): the schema's models say validate's shape rules themselves, and what
JSON Schema cannot say is named in the top-level ``description`` ("action ids are 1..N ...;
a guard's param is a key of its step's params, its bounds or values can pass and its
matches compiles; expect paths are RFC 9535 JSONPath ..."). Agreement both ways: a plan
the schema accepts is refused only for a rule the description names, and a plan
``validate`` accepts is never refused by the schema (honest work wrongly refused in an
editor).

No lab (no repo, no pass): a temp folder of one-action plans (round 61's base, one change
each), ``plangate schema`` once, ``plangate validate --json`` once over all of them, the
schema applied with ``jsonschema`` (Draft 2020-12).

Variants:

- ``unnamed-*`` (5): ``validate`` refuses a shape the schema accepts; asserted: the schema
  refuses it, or its ``description`` names the rule. ``unnamed-output-path-no-dollar``
  (``outputs: [{path: "a.b"}]``) and ``unnamed-output-path-bad`` (``$[?``): E_SCHEMA_INVALID
  "not an RFC 9535 JSONPath query" (the description names only EXPECT paths);
  ``unnamed-output-dup`` (an output name declared twice), ``unnamed-tools-dup`` (a tool twice
  in ``available_tools``): E_SCHEMA_INVALID "declared twice"; ``unnamed-param-key-ref``
  (``"$<inputs.a>"`` as a params KEY): E_REF_INVALID "never in mapping keys". All five
  broke (strict xfails): the schema accepts them and the description says nothing of them.
- ``named-*`` (6, held): a guard on a missing param, bounds that cannot pass, a ``matches``
  that does not compile, ``needs`` on itself, duplicate and gapped ids: refused by
  ``validate`` and named in the description.
- ``both-*`` (14, held): honest plans (float-spelled integers, ``null`` for optional
  fields, a 5,000-character name, an ``expect`` against ``null``, an optional output...):
  ``validate`` and the schema both accept them.

Fixed (2026-11-29): the schema's models say more of these rules, from the constants the
checks read (``controller.plan.shape``): output and ``expect`` paths carry a ``pattern`` of
the RFC 9535 grammar's start (``QUERY_START``: ``$``, then nothing, blank, ``.`` or ``[``),
``available_tools`` and each ``outputs`` list ``uniqueItems``, and params (and a nested
plan's inputs) a recursive ``$defs`` entry whose ``propertyNames`` refuse ``REF_IN_TEXT``
(the regex ``validate``'s key check now reads) at any depth. The rest (the full JSONPath
grammar, two entries of one name that differ otherwise) is named in the ``description``
and docs/plan-format.md; ``validate`` now checks a fallback step's outputs as an action's.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from advkit import cases
from schemakit import plan_schema, schema_errors, validated
from test_round61_surface_schema import BASE, _why

UNNAMED = {
    "unnamed-output-path-no-dollar": (
        _why('    outputs: [{name: o, path: "a.b"}]\n'),
        r"output[s']* (?:query|quer|path)",
    ),
    "unnamed-output-path-bad": (
        _why('    outputs: [{name: o, path: "$[?"}]\n'),
        r"output[s']* (?:query|quer|path)",
    ),
    "unnamed-output-dup": (
        _why('    outputs: [{name: o, path: "$.a"}, {name: o, path: "$.b"}]\n'),
        r"output names?.{0,40}(?:unique|once|twice)",
    ),
    "unnamed-tools-dup": (
        BASE.replace("  - name: rec\n", "  - name: rec\n  - name: rec\n"),
        r"available_tools.{0,60}(?:unique|once|twice)|(?:unique|once|twice).{0,60}available_tools",
    ),
    "unnamed-param-key-ref": (
        BASE.replace('      tag: "x"\n', '      tag: "x"\n      "$<inputs.a>": 1\n')
        + "inputs: {a: x}\n",
        r"(?:mapping |param(?:eter)?s? )keys",
    ),
}
NAMED = {
    "named-guard-param": (
        _why('    guards: [{param: nope, matches: "x"}]\n'),
        r"a guard's param is a key",
    ),
    "named-guard-bounds": (
        _why("    guards: [{param: tag, min: 5, max: 1}]\n"),
        r"bounds or values can pass",
    ),
    "named-guard-regex": (_why('    guards: [{param: tag, matches: "("}]\n'), r"matches compiles"),
    "named-needs-self": (_why("    needs: [1]\n"), r"no cycle"),
    "named-ids-dup": (
        BASE + "  - id: 1\n    tool: rec\n    why: w2\n    params: {}\n",
        r"1\.\.N in file order",
    ),
    "named-ids-gap": (
        BASE + "  - id: 3\n    tool: rec\n    why: w2\n    params: {}\n",
        r"1\.\.N in file order",
    ),
}
BOTH = {
    "both-attempts-float": _why(
        "    idempotent: true\n    on_failure: retry\n    retry: {attempts: 2.0}\n"
    ),
    "both-guard-min-float": _why("    guards: [{param: tag, min: 1.5}]\n"),
    "both-needs-float": BASE + "  - id: 2\n    tool: rec\n    why: w2\n    params: {}\n"
    "    needs: [1.0]\n",
    "both-verify": _why(
        '    verify: {tool: rec, expect: [{path: "$.ok", equals: true}], interval: 0.5,'
        " timeout: 5}\n"
    ),
    "both-expect-null": BASE
    + 'preconditions:\n  - tool: rec\n    expect: [{path: "$.ok", equals: null}]\n',
    "both-output-optional": _why('    outputs: [{name: o, path: "$.a", optional: true}]\n'),
    "both-onfail-null": _why("    on_failure: null\n"),
    "both-timeout-null": _why("    timeout: null\n"),
    "both-needs-null": _why("    needs: null\n"),
    "both-params-missing": BASE.replace('    params:\n      tag: "x"\n', ""),
    "both-why-newline": BASE.replace('why: "w"', 'why: "a\\nb"'),
    "both-timeout-float": _why("    timeout: 1.5\n"),
    "both-name-long": BASE.replace('name: "n"', 'name: "' + "n" * 5000 + '"'),
    "both-guard-oneof-mixed": _why("    guards: [{param: tag, one_of: [x, 1, null, {a: 1}]}]\n"),
}

BROKEN: dict[str, Any] = {}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    import jsonschema

    folder = tmp_path_factory.mktemp("r62-schema")
    schema = plan_schema(folder)
    checker = jsonschema.Draft202012Validator(schema)
    plans = {
        **{k: v[0] for k, v in UNNAMED.items()},
        **{k: v[0] for k, v in NAMED.items()},
        **BOTH,
    }
    rows, _err = validated(folder, plans)
    out: dict[str, Any] = {"description": str(schema.get("description", ""))}
    for vid, text in plans.items():
        out[vid] = {"schema": schema_errors(checker, text), "validate": rows.get(vid)}
    return out


RULES = {**UNNAMED, **NAMED}


@pytest.mark.parametrize("vid", cases(list(RULES), list(RULES), BROKEN))
def test_a_rule_validate_applies_is_in_the_schema_or_named(
    verdicts: dict[str, Any], vid: str
) -> None:
    got = verdicts[vid]
    row = got["validate"]
    assert row is not None and row["valid"] is False, got  # validate refuses it
    assert got["schema"] or re.search(RULES[vid][1], verdicts["description"], re.I), (
        f"the schema accepts it and its description does not name the rule: {row['errors']}"
    )


@pytest.mark.parametrize("vid", cases(list(BOTH), list(BOTH), BROKEN))
def test_an_honest_plan_is_accepted_by_both(verdicts: dict[str, Any], vid: str) -> None:
    got = verdicts[vid]
    assert got["validate"] is not None and got["validate"]["valid"], got
    assert got["schema"] == [], got
