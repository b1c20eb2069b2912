"""Round 63, agent-facing surfaces: ``plangate schema --config`` and ``plangate validate
--config`` against each other, after round 62's schema fix (query ``pattern``,
``uniqueItems``, ``propertyNames``; ``--config`` adds the catalog's per-tool ``params_schema``
branches: "with ``--config``, ``tool`` is an enum of the catalog and each tool's params are
checked by its ``params_schema``").

docs/agents.md: an agent writes to the schema and runs ``validate`` until ``valid: true``.
Agreement both ways: a plan ``validate`` accepts is never refused by the schema (honest work
wrongly refused in an editor), and a plan the schema accepts is refused only for a rule the
schema's ``description`` names. And ``validate --config`` must hold a step's params to the
catalog's ``params_schema`` wherever a tool gets them (an action, a fallback step).

No lab (no repo, no pass): a temp folder with a config whose catalog tool ``rec`` has a
``params_schema`` (``tag`` string, ``n`` integer, ``to`` with a pattern, ``opts`` an object
with an integer ``n`` and an enum ``who``, ``ids`` an array of integers, ``mode`` an enum,
no other keys); ``plangate schema`` with and without ``--config`` once each, ``plangate
validate --json --config`` once over all plans; the schema applied with ``jsonschema``.

Variants:

- ``honest-*``: plans ``validate --config`` accepts, which both schemas must accept.
  Broke (strict xfails, 4): a reference INSIDE a structured param: ``opts: {n:
  "$<inputs.n>"}`` (``honest-nested-obj-ref-input``), the same from an action's output
  (``honest-nested-obj-ref-output``), ``ids: ["$<inputs.n>", 3]``
  (``honest-array-item-ref``), ``opts: {who: "$<inputs.who>"}`` for an enum
  (``honest-nested-enum-ref``): ``schema --config`` says "is not valid under any of the given
  schemas" (the catalog branch lets a ``$<`` string stand only for a whole top-level param);
  the config-less schema accepts all four. Held (5): a top-level reference for an integer
  and an enum, a whole array or object param by reference, blank space after ``$`` in an
  output query.
- ``rule-*``: plans ``validate --config`` refuses; the ``--config`` schema must refuse them
  or its description name the rule. Broke (2): a ``verify`` or a ``precondition`` naming a
  catalog tool that is not ``idempotent``/``risk: low`` (``E_CHECK_TOOL``): the schema,
  which has the catalog, accepts it and the description says nothing of check tools
  (``rule-check-verify``, ``rule-check-precond``). Held (3): ``$ `` as an output query and an
  output declared twice with different ``optional`` (named), a ``$<`` key inside a list
  (refused by both).
- ``slip-*``: ``validate --config`` must refuse params the catalog's ``params_schema``
  refuses. Broke (2): a FALLBACK step's ``n: notint`` (``slip-fallback-params``: valid, while
  the same param on the action is ``E_PARAMS_INVALID``, ``ctl-action-params``, held), and
  ``n: "$$<5>"`` (``slip-escaped-dollar``: the escaped text ``$<5>`` is no reference, the
  tool would get the string ``$<5>`` for an integer; valid).

Fixed (2026-11-29): one rule for every tool call, read by both sides from
``controller.plan.shape``. A reference is ``REFERENCE_VALUE`` (a string matching
``REF_IN_TEXT``, so ``$$<`` is no reference): the ``--config`` schema lets one stand for any
part of the params at any depth (``with_references`` wraps each subschema of a part,
``properties``, ``items``, ``prefixItems``, ``additionalProperties``..., in ``anyOf:
[reference, it]``, keeping ``false``), and ``validate`` checks params against the same
wrapped schema, a string it reads as a reference for the reference, every other string as
the tool gets it (``$$<`` read as ``$<``). Wherever a tool is called (an action, a fallback
step, a precondition, a verify: ``plans.tool_calls`` and the schema's ``Action``,
``FallbackStep``, ``Precondition``, ``Verify`` entries) the params meet the tool's
``params_schema``; a check's ``tool`` is an enum of the catalog tools that may check
(``shape.can_check``: idempotent and ``risk: low``, as ``E_CHECK_TOOL`` reads it), and the
schema's description names the rule.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from advkit import cases
from schemakit import catalog_config, plan_schema, schema_errors, validated

#: the catalog tool ``rec``'s ``params_schema``
PARAMS_SCHEMA = """\
type: object
properties:
  tag: {type: string}
  n: {type: integer}
  to: {type: string, pattern: "^[a-z]+@corp\\\\.example$"}
  flag: {type: boolean}
  opts:
    type: object
    properties: {n: {type: integer}, who: {type: string, enum: [a, b]}}
  ids: {type: array, items: {type: integer}}
  mode: {enum: [fast, slow]}
additionalProperties: false
"""

B = """\
plan:
  name: "n"
  task: "t"
  status: pending_approval
inputs: {n: 5, who: a, ids: [1, 2], mode: fast}
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "w"
    outputs: [{name: o, path: "$.echo.n"}, {name: l, path: "$.echo"}]
    params:
      tag: "x"
"""


def _a2(params: str) -> str:
    return (
        B
        + "  - id: 2\n    tool: rec\n    why: w2\n    needs: [1]\n    params:\n      tag: y\n"
        + params
    )


def _why(extra: str) -> str:
    return B.replace('    why: "w"\n', '    why: "w"\n' + extra)


HONEST = {
    "honest-nested-obj-ref-input": B + '      opts: {n: "$<inputs.n>"}\n',
    "honest-nested-obj-ref-output": _a2('      opts: {n: "$<actions[1].outputs.o>"}\n'),
    "honest-array-item-ref": B + '      ids: ["$<inputs.n>", 3]\n',
    "honest-nested-enum-ref": B + '      opts: {who: "$<inputs.who>"}\n',
    "honest-top-int-ref": B + '      n: "$<inputs.n>"\n',
    "honest-top-enum-ref": B + '      mode: "$<inputs.mode>"\n',
    "honest-array-whole-ref": B + '      ids: "$<inputs.ids>"\n',
    "honest-obj-whole-ref": _a2('      opts: "$<actions[1].outputs.l>"\n'),
    "honest-query-blank": B.replace('path: "$.echo.n"', 'path: "$ .echo.n"'),
}
RULES = {
    "rule-check-verify": (
        _why(
            '    verify: {tool: rec, params: {tag: x}, expect: [{path: "$.ok", equals: true}],'
            " timeout: 5}\n"
        ),
        r"check tool|risk:? ?low|checks? (?:may )?run",
    ),
    "rule-check-precond": (
        B + 'preconditions:\n  - tool: rec\n    params: {tag: x}\n    expect: [{path: "$.ok",'
        " equals: true}]\n",
        r"check tool|risk:? ?low|checks? (?:may )?run",
    ),
    "rule-query-space": (B.replace('path: "$.echo.n"', 'path: "$ "'), r"RFC 9535"),
    "rule-output-dup-optional": (
        B.replace('{name: l, path: "$.echo"}', '{name: o, path: "$.echo.n", optional: true}'),
        r"output names?.{0,60}unique",
    ),
    "rule-keyref-in-list": (B + '      ids: [{"$<inputs.n>": 1}]\n', r"never in params keys"),
}
SLIPS = {
    "slip-fallback-params": _why(
        '    on_failure: fallback\n    fallback:\n      - id: "1.1"\n        tool: rec\n'
        "        why: fb\n        params: {tag: x, n: notint}\n"
    ),
    "slip-escaped-dollar": B + '      n: "$$<5>"\n',
    "ctl-action-params": B + "      n: notint\n",
}

#: every id of this module is fixed (see the docstring)
BROKEN: dict[str, Any] = {}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    import jsonschema

    folder = tmp_path_factory.mktemp("r63-schema")
    cfg = catalog_config(folder, PARAMS_SCHEMA)
    schemas = {"config": plan_schema(folder, cfg), "plain": plan_schema(folder)}
    plans = {**HONEST, **{k: v[0] for k, v in RULES.items()}, **SLIPS}
    rows, err = validated(folder, plans, cfg)
    assert "Traceback" not in err, err[-2000:]
    out: dict[str, Any] = {"description": str(schemas["config"].get("description", ""))}
    for vid, text in plans.items():
        out[vid] = {"validate": rows.get(vid)}
        for key, schema in schemas.items():
            out[vid][key] = schema_errors(jsonschema.Draft202012Validator(schema), text)
    return out


@pytest.mark.parametrize("vid", cases(list(HONEST), list(HONEST), BROKEN))
def test_an_honest_plan_is_accepted_by_both_schemas(verdicts: dict[str, Any], vid: str) -> None:
    got = verdicts[vid]
    assert got["validate"] is not None and got["validate"]["valid"], got
    assert got["plain"] == [], got
    assert got["config"] == [], got


@pytest.mark.parametrize("vid", cases(list(RULES), list(RULES), BROKEN))
def test_a_rule_validate_applies_is_in_the_schema_or_named(
    verdicts: dict[str, Any], vid: str
) -> None:
    got = verdicts[vid]
    row = got["validate"]
    assert row is not None and row["valid"] is False, got
    assert got["config"] or re.search(RULES[vid][1], verdicts["description"], re.I), (
        f"the --config schema accepts it and its description does not name the rule: "
        f"{row['errors']}"
    )


@pytest.mark.parametrize("vid", cases(list(SLIPS), list(SLIPS), BROKEN))
def test_validate_holds_every_step_to_the_catalog(verdicts: dict[str, Any], vid: str) -> None:
    row = verdicts[vid]["validate"]
    assert row is not None, verdicts[vid]
    assert row["valid"] is False, f"valid with params the catalog refuses: {row}"
    assert any(e["code"] == "E_PARAMS_INVALID" for e in row["errors"]), row["errors"]
