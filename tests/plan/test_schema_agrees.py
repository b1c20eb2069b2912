"""The published JSON Schema (``plangate schema``) refuses what ``plangate validate`` refuses,
wherever JSON Schema can say the rule (round 61: an agent writes to the schema, then
validates until ``valid: true``).

Real processes: ``plangate schema`` once and ``plangate validate --json`` once over every
example plan and every variant below (one change to a valid plan each), the schema applied
with ``jsonschema`` (Draft 2020-12) to the same YAML. ``SAID`` variants must get the same
verdict from both; ``UNSAID`` ones are the rules JSON Schema cannot say (documented in the
schema's description and docs/plan-format.md): ``validate`` refuses them, the schema cannot.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ruamel.yaml import YAML

from tests.support.gitenv import ROOT

PLANGATE = str(Path(sys.executable).with_name("plangate"))
EXAMPLES = sorted((ROOT / "examples").rglob("PLAN.yml"))

BASE = """\
plan: {name: n, task: t, status: pending_approval}
available_tools: [{name: rec}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {tag: x}
"""
NESTED = "plan: {path: plans/x, hash: 'sha256:" + "a" * 64 + "'}"
EXPECT = "expect: {path: $.ok, equals: true}"


def _step(extra: str) -> str:
    """BASE with ``extra`` (one flow mapping's items) added to the action."""
    return BASE + "".join(f"    {line}\n" for line in extra.split("\n"))


def _swap(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new)


#: an action that runs a nested plan (validate cannot read it without a repository)
NESTED_BASE = _swap("    tool: rec\n", f"    {NESTED}\n").replace("    params: {tag: x}\n", "")


#: variant -> plan text, for rules the schema says: both accept or both refuse
SAID = {
    "ok": BASE,
    "input-key-ok": BASE + "inputs: {region_1: eu}\n",
    "input-key-space": BASE + 'inputs: {"bad key": 1}\n',
    "input-key-dot": BASE + 'inputs: {"a.b": 1}\n',
    "input-key-digit": BASE + 'inputs: {"1a": 1}\n',
    "nested-input-key-dot": NESTED_BASE + '    inputs: {"a.b": 1}\n',
    "nested-params": NESTED_BASE + "    params: {a: 1}\n",
    "nested-guards": NESTED_BASE + "    guards: [{param: a, one_of: [1]}]\n",
    "nested-timeout": NESTED_BASE + "    timeout: 5\n",
    "nested-retry": NESTED_BASE + "    on_failure: retry\n",
    "nested-plan-ask": NESTED_BASE + "on_failure: ask\n",
    "nested-verify-tool": NESTED_BASE + f"    verify: {{tool: rec, {EXPECT}}}\n",
    "inputs-without-plan": _step("inputs: {a: 1}"),
    "tool-null": _swap("tool: rec", "tool: null"),
    "tool-missing": _swap("    tool: rec\n", ""),
    "tool-and-plan": _step(NESTED),
    "guard-no-rule": _step("guards: [{param: tag}]"),
    "guard-null-rule": _step("guards: [{param: tag, matches: null}]"),
    "guard-one-of": _step("guards: [{param: tag, one_of: [x]}]"),
    "guard-null-and-rule": _step("guards: [{param: tag, matches: null, one_of: [x]}]"),
    "expect-empty": BASE + "preconditions: [{tool: rec, expect: []}]\n",
    "expect-list": BASE + "preconditions: [{tool: rec, expect: [{path: $.a, equals: 1}]}]\n",
    "expect-no-operator": BASE + "preconditions: [{tool: rec, expect: {path: $.a}}]\n",
    "expect-two-operators": BASE
    + "preconditions: [{tool: rec, expect: {path: $.a, equals: 1, in: [1]}}]\n",
    "expect-equals-null": BASE
    + "preconditions: [{tool: rec, expect: {path: $.a, equals: null}}]\n",
    "retries-alone": _step("idempotent: true\nretries: 2"),
    "retry-alone": _step("idempotent: true\nretry: {attempts: 2}"),
    "retries-with-retry": _step("idempotent: true\non_failure: retry\nretries: 2"),
    "retries-plan-retry": _step("idempotent: true\nretries: 2") + "on_failure: retry\n",
    "retries-plan-retry-own-stop": _step("idempotent: true\nretries: 2\non_failure: stop")
    + "on_failure: retry\n",
    "retries-own-null-plan-retry": _step("idempotent: true\nretries: 2\non_failure: null")
    + "on_failure: retry\n",
    "retries-null": _step("retries: null"),
    "retry-and-retries": _step("idempotent: true\non_failure: retry\nretries: 2\nretry: {}"),
    "fallback-without-steps": _step("on_failure: fallback"),
    "fallback-steps-without-mode": _step("fallback: [{id: '1.1', tool: rec, why: f}]"),
    "fallback-ok": _step("on_failure: fallback\nfallback: [{id: '1.1', tool: rec, why: f}]"),
    "fallback-gated": _step(
        "on_failure: fallback\nfallback: [{id: '1.1', tool: rec, why: f, requires_approval: true}]"
    ),
    "fallback-retries-alone": _step(
        "on_failure: fallback\nfallback: [{id: '1.1', tool: rec, why: f, retries: 1}]"
    ),
    "fallback-retries-retry": _step(
        "on_failure: fallback\n"
        "fallback: [{id: '1.1', tool: rec, why: f, retries: 1, on_failure: retry}]"
    ),
    "verify-no-tool-params": _step(f"verify: {{{EXPECT}, params: {{a: 1}}}}"),
    "verify-no-tool-interval": _step(f"verify: {{{EXPECT}, interval: 5}}"),
    "verify-no-tool": _step(f"verify: {{{EXPECT}, params: {{}}}}"),
    "verify-tool-timeout": _step(f"verify: {{{EXPECT}, tool: rec, timeout: 5}}"),
    # round 62: a query's start, entries declared twice, references in params keys
    "output-path-ok": _step("outputs: [{name: o, path: $.a}]"),
    "output-path-blank": _step("outputs: [{name: o, path: '$ .a'}]"),
    "output-path-root": _step("outputs: [{name: o, path: $}]"),
    "output-path-no-dollar": _step("outputs: [{name: o, path: a.b}]"),
    "output-path-blank-first": _step("outputs: [{name: o, path: ' $.a'}]"),
    "output-path-name-after-root": _step("outputs: [{name: o, path: $a}]"),
    "expect-not-jsonpath": BASE
    + "preconditions: [{tool: rec, expect: {path: 'a b', equals: 1}}]\n",
    "fallback-output-path": _step(
        "on_failure: fallback\n"
        "fallback: [{id: '1.1', tool: rec, why: f, outputs: [{name: o, path: a}]}]"
    ),
    "output-twice-equal": _step("outputs: [{name: o, path: $.a}, {name: o, path: $.a}]"),
    "tool-twice-equal": _swap("[{name: rec}]", "[{name: rec}, {name: rec}]"),
    "param-key-ref": _swap("{tag: x}", "{tag: x, '$<inputs.a>': 1}") + "inputs: {a: x}\n",
    "param-key-ref-deep": _swap("{tag: x}", "{tag: [{k: {'a $<inputs.a>': 1}}]}")
    + "inputs: {a: x}\n",
    "param-key-ref-malformed": _swap("{tag: x}", "{tag: x, 'a$<': 1}"),
    "param-key-escaped": _swap("{tag: x}", "{tag: x, '$$<inputs.a>': 1, '$$$<b': 2}"),
    "param-value-ref": _swap("{tag: x}", "{tag: $<inputs.a>}") + "inputs: {a: x}\n",
    "check-param-key-ref": BASE
    + "preconditions: [{tool: rec, params: {'$<inputs.a>': 1}, expect: {path: $.a, equals: 1}}]\n"
    + "inputs: {a: x}\n",
    "fallback-param-key-ref": _step(
        "on_failure: fallback\n"
        "fallback: [{id: '1.1', tool: rec, why: f, params: {'$<inputs.a>': 1}}]"
    )
    + "inputs: {a: x}\n",
    # round 125: the format version (only 1 exists) and integers within +-(2^53-1) in every
    # integer field (JSON Schema counts 1.0e+300 an integer, validate refuses it)
    "version-1": _swap("status: pending_approval}", "status: pending_approval, version: 1}"),
    "version-1.0": _swap("status: pending_approval}", "status: pending_approval, version: 1.0}"),
    "version-2": _swap("status: pending_approval}", "status: pending_approval, version: 2}"),
    "version-1e300": _swap(
        "status: pending_approval}", "status: pending_approval, version: 1.0e+300}"
    ),
    "max-actions-safe": BASE + f"limits: {{max_actions: {2**53 - 1}}}\n",
    "max-actions-past-safe": BASE + f"limits: {{max_actions: {2**53}}}\n",
    "max-actions-1e20": BASE + f"limits: {{max_actions: {10**20}}}\n",
    "max-tool-calls-1e300": BASE + "limits: {max_tool_calls: 1.0e+300}\n",
    "id-1e300": _swap("id: 1", "id: 1.0e+300"),
    "id-past-safe": _swap("id: 1", f"id: {2**53}"),
    "needs-past-safe": _step(f"needs: [{2**53}]"),
    "needs-negative-past-safe": _step(f"needs: [{-(2**53)}]"),
}
#: SAID variants validate refuses with another code than E_SCHEMA_INVALID
REFUSED_AS = {
    name: "E_REF_INVALID"
    for name in SAID
    if name.endswith(("param-key-ref", "param-key-ref-deep", "param-key-ref-malformed"))
} | {"version-2": "E_PLAN_VERSION_UNSUPPORTED"}
#: SAID variants whose value also breaks a rule across fields (an id past 2^53 is out of order)
ALSO_REFUSED_AS = {
    "id-past-safe": ("E_ACTION_IDS",),
    "needs-past-safe": ("E_ACTION_IDS",),
    "needs-negative-past-safe": ("E_ACTION_IDS",),
}

#: variant -> plan text, for rules JSON Schema cannot say: validate refuses, the schema accepts
UNSAID = {
    "ids-out-of-order": _swap("id: 1", "id: 2"),
    "tool-not-declared": _swap("tool: rec", "tool: other"),
    "guard-unknown-param": _step("guards: [{param: nope, one_of: [x]}]"),
    "guard-never-passes": _step("guards: [{param: tag, min: 5, max: 1}]"),
    "expect-not-jsonpath-past-start": BASE
    + "preconditions: [{tool: rec, expect: {path: '$.a b', equals: 1}}]\n",
    "output-path-bad": _step("outputs: [{name: o, path: '$[?'}]"),
    "output-twice": _step("outputs: [{name: o, path: $.a}, {name: o, path: $.b}]"),
    "fallback-output-twice": _step(
        "on_failure: fallback\nfallback: [{id: '1.1', tool: rec, why: f, "
        "outputs: [{name: o, path: $.a}, {name: o, path: $.b}]}]"
    ),
    "tool-twice": _swap("[{name: rec}]", "[{name: rec}, {name: rec, description: d}]"),
    "ref-unknown": _swap("tag: x", "tag: $<inputs.nope>"),
    "nested-unreadable": NESTED_BASE + "    inputs: {a: 1}\n",
    "nested-tool-null": NESTED_BASE.replace("    plan:", "    tool: null\n    plan:"),
}


#: A catalog for the --config variants (round 63): rec checks and takes structured params,
#: poke may not check (not idempotent), nuke neither (risk: high).
CONFIG = """\
repo: {root}/repo
state_dir: {root}/state
approval: {{approvers: [alice@example.com]}}
tools:
  rec:
    kind: echo
    idempotent: true
    risk: low
    params_schema:
      type: object
      additionalProperties: false
      properties:
        tag: {{type: string}}
        n: {{type: integer}}
        to: {{type: string, pattern: "^[a-z]+$"}}
        opts:
          type: object
          additionalProperties: false
          properties: {{n: {{type: integer}}, who: {{enum: [a, b]}}}}
        ids: {{type: array, items: {{type: integer}}}}
        pair: {{type: array, prefixItems: [{{type: integer}}, {{type: string}}], items: false}}
        either:
          oneOf:
            - {{type: object, required: [n], properties: {{n: {{type: integer}}}}}}
            - {{type: integer}}
        port: {{$ref: "#/$defs/port"}}
        tree: {{$ref: "#/$defs/node"}}
        out: {{$ref: "#/$defs/Output"}}
        again: {{$ref: "#"}}
        size: {{$ref: "#size"}}
        old: {{$ref: "#/definitions/old"}}
      $defs:
        port: {{type: integer, minimum: 1, maximum: 65535}}
        node:
          type: object
          additionalProperties: false
          properties:
            name: {{type: string}}
            kids: {{type: array, items: {{$ref: "#/$defs/node"}}}}
        Output: {{type: integer}}
        size: {{$anchor: size, enum: [s, m]}}
      definitions:
        old: {{type: integer, maximum: 9}}
        part: {{$id: "urn:cat:part", $defs: {{n: {{type: integer}}}}, $ref: "#/$defs/n"}}
  poke: {{kind: echo, risk: low}}
  nuke: {{kind: echo, idempotent: true, risk: high}}
  same:
    kind: echo
    idempotent: true
    risk: low
    params_schema:
      $id: "urn:cat:same"
      $defs: {{v: {{type: integer}}}}
      properties: {{v: {{$ref: "#/$defs/v"}}, w: {{$ref: "urn:cat:same#/$defs/v"}}}}
  twin:
    kind: echo
    params_schema:
      $id: "urn:cat:same"
      $defs:
        v: {{type: string}}
        part: {{$id: "urn:cat:part", $defs: {{n: {{type: string}}}}, $ref: "#/$defs/n"}}
      properties: {{v: {{$ref: "#/$defs/v"}}, part: {{$ref: "urn:cat:part"}}}}
"""
CATALOG_BASE = "inputs: {a: 1}\n" + _swap(
    "[{name: rec}]", "[{name: rec}, {name: poke}, {name: nuke}, {name: same}, {name: twin}]"
)
CHECK = "expect: {path: $.ok, equals: true}"


def _params(params: str) -> str:
    return CATALOG_BASE.replace("{tag: x}", "{tag: x, " + params + "}")


def _fallback(params: str, tool: str = "rec") -> str:
    step = f"{{id: '1.1', tool: {tool}, why: f, params: {{{params}}}}}"
    return CATALOG_BASE + f"    on_failure: fallback\n    fallback: [{step}]\n"


def _call(tool: str, params: str) -> str:
    """The action calls ``tool`` with ``params``."""
    return CATALOG_BASE.replace("tool: rec", f"tool: {tool}").replace("{tag: x}", f"{{{params}}}")


def _check(tool: str, params: str) -> str:
    return CATALOG_BASE + f"preconditions: [{{tool: {tool}, params: {{{params}}}, {CHECK}}}]\n"


#: variant -> plan text, said by the schema with --config and validate --config alike (and,
#: without the catalog, accepted by both): a reference stands for any value at any depth, an
#: escaped $$< is text, every tool call's params meet the tool's params_schema, and a check
#: tool may check (E_CHECK_TOOL)
WITH_CATALOG = {
    "cat-ok": CATALOG_BASE,
    "cat-top-ref": _params("n: $<inputs.a>"),
    "cat-nested-ref": _params("opts: {n: $<inputs.a>}"),
    "cat-nested-enum-ref": _params("opts: {who: $<inputs.a>}"),
    "cat-item-ref": _params("ids: [$<inputs.a>, 3]"),
    "cat-prefix-ref": _params("pair: [$<inputs.a>, $<inputs.a>]"),
    "cat-text-ref": _params("to: 'x$<inputs.a>'"),
    "cat-whole-ref": _params("opts: $<inputs.a>"),
    "cat-one-of-ref": _params("either: {n: $<inputs.a>}"),
    "cat-one-of-whole-ref": _params("either: $<inputs.a>"),
    "cat-one-of-bad": _params("either: {n: x}"),
    "cat-nested-bad": _params("opts: {n: x}"),
    "cat-item-bad": _params("ids: [x, 3]"),
    "cat-extra-key-ref": _params("opts: {z: $<inputs.a>}"),
    "cat-extra-item-ref": _params("pair: [1, x, $<inputs.a>]"),
    "cat-escaped": _params("n: $$<5>"),
    "cat-escaped-nested": _params("opts: {n: $$<inputs.a>}"),
    "cat-escaped-three": _params("n: $$$<inputs.a>"),
    "cat-escaped-text": _params("to: $$<inputs.a>"),
    # round 64: a catalog schema's own $defs/$ref resolve inside it, never in the plan's
    "cat-defs-ok": _params("port: 8080"),
    "cat-defs-bad": _params("port: 0"),
    "cat-defs-ref": _params("port: $<inputs.a>"),
    "cat-tree-ok": _params("tree: {name: r, kids: [{name: k, kids: []}]}"),
    "cat-tree-ref": _params("tree: {name: r, kids: [{name: $<inputs.a>}]}"),
    "cat-tree-bad": _params("tree: {name: r, kids: [{name: r, kids: [{name: 1}]}]}"),
    "cat-defs-plan-name-ok": _params("out: 5"),
    "cat-defs-plan-name-bad": _params("out: {name: o, path: $.x}"),
    "cat-root-ref-ok": _params("again: {tag: y, again: {port: $<inputs.a>}}"),
    "cat-root-ref-bad": _params("again: {again: {port: 0}}"),
    "cat-anchor-ok": _params("size: m"),
    "cat-anchor-bad": _params("size: xl"),
    "cat-definitions-ok": _params("old: 9"),
    "cat-definitions-bad": _params("old: 10"),
    "cat-defs-fallback-bad": _fallback("tree: {kids: [{name: 1}]}"),
    "cat-defs-precondition-bad": CATALOG_BASE
    + f"preconditions: [{{tool: rec, params: {{port: 0}}, {CHECK}}}]\n",
    # round 65: two tools (same, twin) whose schemas share an $id (and a nested one) resolve
    # each in its own, as validate reads each alone, wherever the tool is called
    "cat-dupid-ok": _call("same", "v: 5"),
    "cat-dupid-bad": _call("same", "v: x"),
    "cat-dupid-absolute-ok": _call("same", "w: 5"),
    "cat-dupid-absolute-bad": _call("same", "w: x"),
    "cat-dupid-twin-ok": _call("twin", "v: x"),
    "cat-dupid-twin-bad": _call("twin", "v: 5"),
    "cat-dupid-fallback-ok": _fallback("v: 5", "same"),
    "cat-dupid-fallback-bad": _fallback("v: x", "same"),
    "cat-dupid-precondition-ok": _check("same", "v: 5"),
    "cat-dupid-precondition-bad": _check("same", "v: x"),
    "cat-dupid-part-ok": _params("part: 3"),
    "cat-dupid-part-bad": _params("part: x"),
    "cat-dupid-twin-part-ok": _call("twin", "part: x"),
    "cat-dupid-twin-part-bad": _call("twin", "part: 3"),
    "cat-fallback-ok": _fallback("opts: {n: $<inputs.a>}"),
    "cat-fallback-bad": _fallback("n: notint"),
    "cat-precondition-ok": CATALOG_BASE + f"preconditions: [{{tool: rec, {CHECK}}}]\n",
    "cat-precondition-bad": CATALOG_BASE
    + f"preconditions: [{{tool: rec, params: {{n: x}}, {CHECK}}}]\n",
    "cat-verify-bad": CATALOG_BASE + f"    verify: {{tool: rec, params: {{ids: [x]}}, {CHECK}}}\n",
    "cat-verify-no-tool": CATALOG_BASE + f"    verify: {{{CHECK}}}\n",
    "cat-verify-tool-null": CATALOG_BASE + f"    verify: {{tool: null, {CHECK}}}\n",
    "cat-check-not-idempotent": CATALOG_BASE + f"preconditions: [{{tool: poke, {CHECK}}}]\n",
    "cat-check-high-risk": CATALOG_BASE + f"    verify: {{tool: nuke, {CHECK}}}\n",
    "cat-fallback-check-high-risk": _fallback("n: 1").replace(
        "why: f,", f"why: f, verify: {{tool: nuke, {CHECK}}},"
    ),
    "cat-action-not-idempotent": CATALOG_BASE.replace("tool: rec", "tool: poke").replace(
        "{tag: x}", "{}"
    ),
    # round 125: in an action's params validate reads a legacy ${...} as the reference the
    # freeze makes of it (standing for any value), in a fallback step's or a check's as text
    "cat-legacy-top": _params("n: '${inputs.a}'"),
    "cat-legacy-whole": _params("opts: '${inputs.a}'"),
    "cat-legacy-nested-enum": _params("opts: {who: '${inputs.a}'}"),
    "cat-legacy-item": _params("ids: ['${inputs.a}', 3]"),
    "cat-legacy-text": _params("to: 'x${inputs.a}'"),
    "cat-legacy-plan": _params("n: '${plan.name}'"),
    "cat-legacy-approval": _params("n: '${approval.approved_by}'"),
    "cat-legacy-quoted-key": _params("n: '${inputs[\"a\"]}'"),
    "cat-legacy-output": CATALOG_BASE.replace(
        "    params: {tag: x}\n", "    params: {tag: x}\n    outputs: [{name: o, path: $.tag}]\n"
    )
    + "  - {id: 2, tool: rec, why: w2, params: {n: '${actions[1].outputs.o}'}}\n",
    "cat-legacy-defs": _params("port: '${inputs.a}'"),
    "cat-legacy-dupid": _call("same", "v: '${inputs.a}'"),
    "cat-legacy-dupid-twin": _call("twin", "part: '${inputs.a}'"),
    "cat-legacy-shell-text": _params("n: '${HOME}'"),
    "cat-legacy-secret-text": _params("n: '${secrets.X}'"),
    "cat-legacy-not-a-root": _params("n: '${planet}'"),
    "cat-legacy-fallback": _fallback("n: '${inputs.a}'"),
    "cat-legacy-precondition": _check("rec", "n: '${inputs.a}'"),
    "cat-legacy-verify": CATALOG_BASE
    + f"    verify: {{tool: rec, params: {{n: '${{inputs.a}}'}}, {CHECK}}}\n",
}


def _yaml(text: str) -> Any:
    return json.loads(json.dumps(YAML(typ="safe").load(text), default=str))


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bool, dict[str, Any]]]:
    """variant or example -> (the schema accepts it, validate's JSON record)."""
    folder = tmp_path_factory.mktemp("schema-agrees")
    schema = json.loads(
        subprocess.run([PLANGATE, "schema"], capture_output=True, text=True, check=True).stdout
    )
    checker = jsonschema.Draft202012Validator(schema)
    files = {name: folder / f"{name}.yml" for name in [*SAID, *UNSAID]}
    for name, path in files.items():
        path.write_text({**SAID, **UNSAID}[name])
    files.update({f"example:{p.parent.name}": p for p in EXAMPLES})
    done = subprocess.run(
        [PLANGATE, "validate", "--json", *map(str, files.values())],
        capture_output=True,
        text=True,
        cwd=folder,
    )
    records = {row["path"]: row for row in map(json.loads, done.stdout.splitlines())}
    return {
        name: (checker.is_valid(_yaml(path.read_text())), records[str(path)])
        for name, path in files.items()
    }


@pytest.fixture(scope="module")
def catalog_verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[str, tuple[bool, dict[str, Any]]]]:
    """ "config" and "plain" -> variant -> (the schema accepts it, validate's JSON record),
    with and without --config."""
    folder = tmp_path_factory.mktemp("schema-agrees-catalog")
    subprocess.run(["git", "init", "-q", str(folder / "repo")], check=True)
    config = folder / "plangate.yml"
    config.write_text(CONFIG.format(root=folder))
    plans = folder / "plans"
    plans.mkdir()
    files = {name: plans / f"{name}.yml" for name in WITH_CATALOG}
    for name, path in files.items():
        path.write_text(WITH_CATALOG[name])
    out = {}
    for key, extra in (("config", ["--config", str(config)]), ("plain", [])):
        shown = subprocess.run([PLANGATE, "schema", *extra], capture_output=True, text=True)
        checker = jsonschema.Draft202012Validator(json.loads(shown.stdout))
        done = subprocess.run(
            [PLANGATE, "validate", "--json", *extra, *map(str, files.values())],
            capture_output=True,
            text=True,
            cwd=plans,
        )
        records = {row["path"]: row for row in map(json.loads, done.stdout.splitlines())}
        out[key] = {
            name: (checker.is_valid(_yaml(path.read_text())), records[str(path)])
            for name, path in files.items()
        }
    return out


@pytest.mark.parametrize("name", list(WITH_CATALOG))
def test_the_catalog_schema_and_validate_agree(
    catalog_verdicts: dict[str, dict[str, tuple[bool, dict[str, Any]]]], name: str
) -> None:
    accepted, record = catalog_verdicts["config"][name]
    assert accepted == record["valid"], record["errors"]
    if not accepted:  # the catalog's rule, nothing else
        code = "E_CHECK_TOOL" if "-check-" in name else "E_PARAMS_INVALID"
        assert {e["code"] for e in record["errors"]} == {code}, record["errors"]
    accepted, record = catalog_verdicts["plain"][name]  # the catalog's rules only
    assert accepted and record["valid"], record["errors"]


def test_every_example_passes_both(verdicts: dict[str, tuple[bool, dict[str, Any]]]) -> None:
    examples = {k: v for k, v in verdicts.items() if k.startswith("example:")}
    assert len(examples) == len(EXAMPLES) >= 5
    for name, (accepted, record) in examples.items():
        assert accepted and record["valid"], (name, record["errors"])


@pytest.mark.parametrize("name", list(SAID))
def test_the_schema_and_validate_agree(
    verdicts: dict[str, tuple[bool, dict[str, Any]]], name: str
) -> None:
    accepted, record = verdicts[name]
    assert accepted == record["valid"], record["errors"]
    if not accepted:  # refused for the rule itself, not only for the unreadable nested plan
        codes = {REFUSED_AS.get(name, "E_SCHEMA_INVALID")} | set(ALSO_REFUSED_AS.get(name, ()))
        assert {e["code"] for e in record["errors"]} == codes, record["errors"]
        assert any("which repository" not in e["message"] for e in record["errors"])


@pytest.mark.parametrize("name", list(UNSAID))
def test_what_the_schema_cannot_say_validate_refuses(
    verdicts: dict[str, tuple[bool, dict[str, Any]]], name: str
) -> None:
    accepted, record = verdicts[name]
    assert accepted and not record["valid"], record["errors"]


def test_the_schema_names_what_it_cannot_say() -> None:
    shown = subprocess.run([PLANGATE, "schema"], capture_output=True, text=True, check=True)
    description = json.loads(shown.stdout)["description"]
    for rule in [
        "1..N",
        "available_tools",
        "references",
        "guard's param",
        "RFC 9535",
        "output paths",
        "output names in each outputs list are unique",
        "never in params keys",
        "check tool",
    ]:
        assert rule in description, rule


def _integer_nodes(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [found for item in node for found in _integer_nodes(item)]
    if not isinstance(node, dict):
        return []
    here = [node] if node.get("type") == "integer" else []
    return here + [found for value in node.values() for found in _integer_nodes(value)]


def test_every_integer_field_is_bounded_as_plain_json_data() -> None:
    """Round 125 (schema-silent-on-safe-integer-range, -on-plan-version): every integer
    field of the published schema (generated from the models: a field added later too) is
    within +-(2^53-1), the rule validate reads in every value, and ``plan.version`` is 1."""
    shown = subprocess.run([PLANGATE, "schema"], capture_output=True, text=True, check=True)
    schema = json.loads(shown.stdout)
    nodes = _integer_nodes(schema)
    assert len(nodes) >= 6  # version, id, needs' items, retries, attempts, the two limits
    safe = 2**53 - 1
    for node in nodes:
        assert -safe <= node["minimum"] and node["maximum"] <= safe, node
    version = schema["$defs"]["PlanHeader"]["properties"]["version"]["anyOf"]
    assert {"type": "integer", "minimum": 1, "maximum": 1} in [
        {k: v for k, v in part.items() if k in ("type", "minimum", "maximum")} for part in version
    ]
