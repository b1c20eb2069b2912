"""Validation: every rule of SPEC §10's first group, reported with code, location and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.plan import plans, refs
from controller.settings import config_from_data
from tests.support.gitenv import ROOT
from tests.support.plan_factory import BASE_TEXT, write_plan

SEED = Path("/work/shared/seeds")


def _problems(tmp_path: Path, text: str, config: dict | None = None) -> list[plans.Problem]:
    cfg = config_from_data(config) if config is not None else None
    return plans.load_plan(write_plan(tmp_path, text), cfg).problems


def _codes(tmp_path: Path, text: str, config: dict | None = None) -> list[str]:
    return [p.code for p in _problems(tmp_path, text, config)]


def test_base_plan_is_valid(tmp_path: Path) -> None:
    plan = plans.load_plan(write_plan(tmp_path))
    assert plan.valid, plan.problems
    assert plan.hash and plan.hash.startswith("sha256:")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("plan: [unclosed\n", 2),
        ("a: 1\na: 2\n", 2),
        ("a: &x 1\nb: *x\n", 1),
        ("a: !!str 1\n", 1),
        ("a:\n  <<: {b: 1}\n", 2),
        ("a: 1\n---\nb: 2\n", 2),
    ],
)
def test_yaml_parse_errors_refuse_hidden_structure(tmp_path: Path, text: str, line: int) -> None:
    (problem,) = _problems(tmp_path, text)
    assert problem.code == "E_YAML_PARSE"
    assert problem.line == line


def test_alias_bomb_is_refused_before_expansion(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 4)}]\n" for i in range(20)
    )
    assert _codes(tmp_path, bomb) == ["E_YAML_PARSE"]


def test_schema_invalid_reports_every_error_with_line_and_hint(tmp_path: Path) -> None:
    text = BASE_TEXT.replace("    on_failure: retry", "    on_faliure: retry").replace(
        '    why: "List the keys"\n', ""
    )
    problems = _problems(tmp_path, text)
    by_path = {p.path: p for p in problems}
    assert set(p.code for p in problems) == {"E_SCHEMA_INVALID"}
    assert "did you mean `on_failure`" in by_path["actions[1].on_faliure"].message
    assert (
        by_path["actions[1].on_faliure"].line
        == text.splitlines().index("    on_faliure: retry") + 1
    )
    assert "why" in by_path["actions[0].why"].message


def test_unknown_keys_allowed_only_under_metadata_inputs_params(tmp_path: Path) -> None:
    text = (
        BASE_TEXT.replace("  agent: planner-7", "  anything: [1]")
        .replace("  count: 2", "  count: 2\n  extra: {deep: true}")
        .replace("      limit: 10", "      limit: 10\n      whatever: x")
    )
    assert _codes(tmp_path, text) == []
    assert _codes(tmp_path, BASE_TEXT + "surprise: 1\n") == ["E_SCHEMA_INVALID"]


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        ("  count: 2", "  count: 2026-11-22T10:00:00Z", "timestamp"),
        ("  count: 2", "  count: .nan", "finite"),
        ("  count: 2", "  count: 9007199254740993", "2^53"),
        # round 22: a float spelling a double cannot hold ran as another number
        ("  count: 2", "  count: 9007199254740993.0", "9007199254740992.0"),
        ("  count: 2", "  count: 1.2345678901234567891e19", "1.2345678901234567e+19"),
        ("  count: 2", "  count: 1e-400", "as 0;"),
        ("  count: 2", "  count: 4.99999999999999999999", "as 5;"),
        ("  count: 2", "  count: 0.10000000000000001", "as 0.1;"),
        ("  count: 2", "  1: 2", "not a string"),
    ],
)
def test_non_json_values_are_schema_invalid_with_quote_hint(
    tmp_path: Path, old: str, new: str, hint: str
) -> None:
    # the value's own problem first; a reference it breaks (input `count` gone) is reported too
    problem, *consequences = _problems(tmp_path, BASE_TEXT.replace(old, new))
    assert all(p.code == "E_REF_UNKNOWN" for p in consequences)
    assert problem.code == "E_SCHEMA_INVALID"
    assert hint in problem.message and "quote" in problem.message
    assert problem.path.startswith("inputs")
    assert problem.line == BASE_TEXT.splitlines().index(old) + 1, problem


@pytest.mark.parametrize("number", ["2.5", "0.1", "1e3", "-0.0", "1.50", "1.0e+20", "3.14159"])
def test_a_number_a_double_holds_as_written_is_accepted(tmp_path: Path, number: str) -> None:
    """What a double holds exactly as written (its shortest spelling has the same value):
    ``0.1`` reads back as ``0.1``, ``1.50`` as ``1.5``."""
    assert _codes(tmp_path, BASE_TEXT.replace("  count: 2", f"  count: {number}")) == []


def test_plan_too_large(tmp_path: Path) -> None:
    cfg = {"limits": {"max_plan_bytes": 200}}
    assert _codes(tmp_path, BASE_TEXT, cfg) == ["E_PLAN_TOO_LARGE"]


def test_version_unsupported(tmp_path: Path) -> None:
    text = BASE_TEXT.replace(
        "  status: pending_approval", "  status: pending_approval\n  version: 2"
    )
    assert _codes(tmp_path, text) == ["E_PLAN_VERSION_UNSUPPORTED"]
    ok = BASE_TEXT.replace("  status: pending_approval", "  status: pending_approval\n  version: 1")
    assert _codes(tmp_path, ok) == []


def test_action_ids_must_be_1_to_n_in_order(tmp_path: Path) -> None:
    problems = _problems(tmp_path, BASE_TEXT.replace("  - id: 2", "  - id: 3"))
    assert [(p.code, p.path) for p in problems] == [("E_ACTION_IDS", "actions[1].id")]


def test_tool_not_declared_and_unknown(tmp_path: Path) -> None:
    text = BASE_TEXT.replace(
        '    tool: echo\n    why: "Rotate', '    tool: rotate\n    why: "Rotate'
    )
    assert _codes(tmp_path, text) == ["E_TOOL_NOT_DECLARED"]
    cfg = {"tools": {"other": {"kind": "echo"}}}
    assert sorted(_codes(tmp_path, BASE_TEXT, cfg)) == ["E_TOOL_UNKNOWN", "E_TOOL_UNKNOWN"]
    assert _codes(tmp_path, BASE_TEXT, {"tools": {"echo": {"kind": "echo"}}}) == []


@pytest.mark.parametrize(
    ("ref", "code"),
    [
        ("$<actions[1.outputs.keys>", "E_REF_INVALID"),
        ("$<actions[2].outputs.keys>", "E_REF_FORWARD"),
        ("$<actions[1].outputs.nothing>", "E_REF_UNKNOWN"),
        ("$<inputs.nothing>", "E_REF_UNKNOWN"),
    ],
)
def test_reference_errors(tmp_path: Path, ref: str, code: str) -> None:
    problems = _problems(tmp_path, BASE_TEXT.replace("$<actions[1].outputs.keys>", ref))
    assert [(p.code, p.path) for p in problems] == [(code, "actions[1].params.key")]
    assert (
        problems[0].line
        == BASE_TEXT.splitlines().index('      key: "$<actions[1].outputs.keys>"') + 1
    )


def test_params_invalid_against_catalog_schema_skips_referenced_values(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"limit": {"type": "integer", "maximum": 5}, "service": {"type": "integer"}},
        "required": ["limit"],
    }
    cfg = {"tools": {"echo": {"kind": "echo", "params_schema": schema}}}
    problems = _problems(tmp_path, BASE_TEXT, cfg)
    # action 1: limit 10 > 5 (static); service is a reference (checked at run time).
    # action 2: limit missing.
    assert sorted((p.code, p.path) for p in problems) == [
        ("E_PARAMS_INVALID", "actions[0].params.limit"),
        ("E_PARAMS_INVALID", "actions[1].params"),
    ]


def test_every_tool_call_meets_the_catalog_schema(tmp_path: Path) -> None:
    """Round 63: a fallback step's params went unchecked, and ``$$<`` (the text ``$<``) was
    skipped as a reference. Every call (plan and step checks, fallback steps) is checked."""
    schema = {"type": "object", "properties": {"limit": {"type": "integer"}}}
    spec = {"kind": "echo", "idempotent": True, "risk": "low", "params_schema": schema}
    check = "{tool: echo, params: {limit: x}, expect: {path: $.ok, equals: true}}"
    step = f"{{id: '2.1', tool: echo, why: f, params: {{limit: x}}, verify: {check}}}"
    text = BASE_TEXT.replace("limit: 10", "limit: '$$<inputs.count>'").replace(
        "    on_failure: retry\n    retries: 2\n",
        f"    on_failure: fallback\n    fallback: [{step}]\n    preconditions: [{check}]\n",
    )
    problems = _problems(tmp_path, text + f"preconditions: [{check}]\n", {"tools": {"echo": spec}})
    assert sorted((p.code, p.path) for p in problems) == [
        ("E_PARAMS_INVALID", "actions[0].params.limit"),
        ("E_PARAMS_INVALID", "actions[1].fallback[0].params.limit"),
        ("E_PARAMS_INVALID", "actions[1].fallback[0].verify.params.limit"),
        ("E_PARAMS_INVALID", "actions[1].preconditions[0].params.limit"),
        ("E_PARAMS_INVALID", "preconditions[0].params.limit"),
    ]


def test_a_reference_stands_for_any_part_of_a_param_and_escaped_text_is_text() -> None:
    """Round 63: validate reads the --config schema's rule (shape.with_references): a
    reference inside a branch of a oneOf passes, the catalog's own message otherwise."""
    either = {
        "oneOf": [{"properties": {"n": {"type": "integer"}}, "required": ["n"]}, {"type": "string"}]
    }
    schema = {"properties": {"o": {"type": "object", **either}, "m": {"type": "integer"}}}
    assert list(plans.static_params_errors({"o": {"n": "$<inputs.n>"}}, schema)) == []
    assert list(plans.static_params_errors({"m": "$$<inputs.n>"}, schema)) == [
        (("m",), "'$<inputs.n>' is not of type 'integer'", ("'$<inputs.n>'",), ("'integer'",))
    ]


@pytest.mark.parametrize("ref", ["urn:r65:own#/$defs/v", "https://schemas.example.invalid/v"])
def test_a_reference_leaving_the_catalog_schema_is_the_plans_problem(
    tmp_path: Path, ref: str
) -> None:
    """Round 65: a catalog ``$ref`` that does not resolve inside its schema (the config
    refuses those when read; here one is put past it) stopped every pass. Met while checking
    params it is that call's E_PARAMS_INVALID, statically and at run time; nothing is
    fetched."""
    schema = {"properties": {"limit": {"$ref": ref}}}
    errors = list(plans.params_errors({"limit": 3}, schema))
    assert len(errors) == 1 and ref in errors[0][1] and "catalog must be fixed" in errors[0][1]
    config = config_from_data({"tools": {"echo": {"kind": "echo"}}})
    config.tools["echo"] = config.tools["echo"].model_copy(update={"params_schema": schema})
    problems = plans.load_plan(write_plan(tmp_path), config).problems
    assert [(p.code, p.path) for p in problems] == [("E_PARAMS_INVALID", "actions[0].params")]
    assert ref in problems[0].message


def test_a_catalog_problem_answers_the_plans_own_text_as_written(tmp_path: Path) -> None:
    """Round 61: a problem quoting the catalog's schema is redacted in an answer, except the
    plan's own value it quotes (masking it would confirm a guess of a secret)."""
    schema = {"type": "object", "properties": {"limit": {"enum": ["S3CRET", "b"]}}}
    cfg = {"tools": {"echo": {"kind": "echo", "params_schema": schema}}}
    text = BASE_TEXT.replace("limit: 10", "limit: 'S3CRETx'")
    (problem,) = [p for p in _problems(tmp_path, text, cfg) if p.path.endswith(".limit")]
    assert problem.quotes_catalog and "'S3CRETx'" in problem.own_quotes
    answered = problem.answered(lambda t: t.replace("S3CRET", "***"))
    assert answered.message.startswith("'S3CRETx' is not one of ['***', 'b']"), answered.message
    assert answered.to_json().keys() == {"code", "message", "path", "line", "remedy"}
    plain = plans.Problem("E_SCHEMA_INVALID", "status 'S3CRET' is not a status", "plan.status")
    assert plain.answered(lambda t: t.replace("S3CRET", "***")) == plain  # the plan's alone


def test_the_validation_block_quotes_the_plan_as_written_and_masks_the_catalog(
    tmp_path: Path,
) -> None:
    """Round 62: the committed ``validation:`` block masked a plan's status equal to a secret
    (``(got '***')``) and kept a wrong guess as written: one commit confirmed a guess. The
    plan's own text is now recorded as written; the catalog's parts stay masked."""
    from controller.execution.secrets import Redactor

    redact = Redactor(["S3CRETzz"]).text
    schema = {"type": "object", "properties": {"limit": {"enum": ["S3CRETzz", "b"]}}}
    cfg = {"tools": {"echo": {"kind": "echo", "params_schema": schema}}}
    text = BASE_TEXT.replace("status: pending_approval", 'status: "S3CRETzz"')
    text = text.replace("limit: 10", "limit: 'S3CRETzzq'")
    plan = write_plan(tmp_path, text)
    loaded = plans.load_plan(plan, config_from_data(cfg))
    block = plans.invalid_text(loaded, redact=redact)
    said = [e["message"] for e in json.loads(json.dumps(_yaml(block)))["validation"]["errors"]]
    assert any(m.endswith("(got 'S3CRETzz')") for m in said), said  # the author's, as written
    assert any(m.startswith("'S3CRETzzq' is not one of ['***', 'b']") for m in said), said


def _yaml(text: str) -> object:
    from controller.plan import yamlio

    return yamlio.read_yaml(text, "PLAN.yml").data


def test_an_answer_keeps_the_askers_quote_unless_a_secret_straddles_it() -> None:
    """Round 62: :func:`redacted_around` keeps the asker's text as written (a right guess of
    a secret reads as a wrong one does) but never lets a quote cut a secret of the
    controller's text in two: then the whole text is redacted."""
    from controller.errors import redacted_around
    from controller.execution.secrets import Redactor

    redact = Redactor(["S3CRETzz"]).text
    said = redacted_around("no plan plans/S3CRETzz (enum S3CRETzz)", ["plans/S3CRETzz"], redact)
    assert said == "no plan plans/S3CRETzz (enum ***)", said
    json_said = redacted_around('{"m": "a \\u00e9S3CRETzz"}', ["a \u00e9S3CRETzz"], redact)
    assert "***" not in json_said, json_said  # as JSON spells the quote, too
    straddled = redacted_around("keys: S3CR, ETzz S3CRETzz", ["S3CR"], redact)
    assert "S3CRETzz" not in straddled, straddled
    assert redacted_around("x S3CRETzz", ["S3C"], redact) == "x ***"


def test_a_cut_after_the_askers_quote_makes_no_secrets_start_of_it() -> None:
    """Round 63: a secret's start right before ``...`` is hidden in the controller's cut
    material, never in the asker's text: the asker's ``S3CR...`` (a start of the secret)
    reads as a wrong start does, and the controller's own cut still hides one."""
    from controller.errors import redacted_around
    from controller.execution.secrets import Redactor

    redact = Redactor(["S3CRETzz"]).text
    for start in ("S3CRE", "S3CRx"):
        said = redacted_around(f"duplicate key '{start}...'", [f"'{start}...'"], redact)
        assert said == f"duplicate key '{start}...'", said
        cut = redacted_around(f"keys: {start}... and more", [start], redact)
        assert cut == f"keys: {start}... and more", cut
    assert redacted_around("x S3CRE... y", ["y"], redact) == "x ***... y"


def test_a_recorded_problem_is_answered_whole_then_cut() -> None:
    """Round 63: cut first, a quote of the author's text cut in two was no quote any more,
    and the redactor read a secret's start at the cut (``'***…`` for the secret's start,
    a wrong one as written). Answered whole first, both are recorded as written."""
    from controller.errors import Problem
    from controller.execution.secrets import Redactor

    redact = Redactor(["S3CRETzz"]).text
    recorded = []
    for guess in ("S3CRETzz", "S3CRXTzz"):
        head = "a" * (plans.MAX_RECORDED_CHARS - 7)  # the cut lands after "'S3CRET"
        problem = Problem(
            "E_SCHEMA_INVALID",
            f"{head}'{guess}' is not one of ['S3CRETzz']",
            quotes_catalog=True,
            own_quotes=(f"'{guess}'",),
        )
        recorded.append(plans._recorded(problem, redact).replace(guess[:6], "GUESS"))
    assert recorded[0] == recorded[1] and "***" not in recorded[0], recorded


def test_limit_exceeded(tmp_path: Path) -> None:
    cfg = {"limits": {"max_actions": 1}, "tools": {"echo": {"kind": "echo"}}}
    assert _codes(tmp_path, BASE_TEXT, cfg) == ["E_LIMIT_EXCEEDED"]


def test_bad_output_jsonpath(tmp_path: Path) -> None:
    problems = _problems(tmp_path, BASE_TEXT.replace('path: "$.service"', 'path: "$[?(@.x"'))
    assert [(p.code, p.path) for p in problems] == [
        ("E_SCHEMA_INVALID", "actions[0].outputs[0].path")
    ]


def test_all_errors_of_a_file_are_reported_at_once(tmp_path: Path) -> None:
    text = (
        BASE_TEXT.replace("  - id: 2", "  - id: 5")
        .replace("$<inputs.service>", "$<inputs.nope>")
        .replace('    tool: echo\n    why: "Rotate', '    tool: rotate\n    why: "Rotate')
    )
    assert sorted(_codes(tmp_path, text)) == [
        "E_ACTION_IDS",
        "E_REF_UNKNOWN",
        "E_REF_UNKNOWN",
        "E_TOOL_NOT_DECLARED",
    ]


def test_seed_plan_validates_once_tools_declared_and_freezing_converts_refs(tmp_path: Path) -> None:
    seed = next(SEED.glob("004_*")).read_text()
    block = seed.split("### PLAN.yml\n```yaml\n", 1)[1].split("```", 1)[0]
    # The seed's own approval/execution examples are controller-owned: drop them, and fix
    # the seed's reference to an undeclared output (`from`) by declaring it.
    text = block.split("# Approval record")[0].replace(
        '      - name: "body"\n        path: "$.body"',
        '      - name: "body"\n        path: "$.body"\n'
        '      - name: "from"\n        path: "$.from"',
    )
    path = write_plan(tmp_path, text, "emails")
    plan = plans.load_plan(path)
    assert plan.valid, plan.problems
    outcome = plans.freeze_text(plan, at="2026-11-22T00:00:00Z")
    assert outcome.changed
    assert (
        "${actions" not in outcome.text and '"$<actions[1].outputs.email_ids[0]>"' in outcome.text
    )
    assert '"Re: $<actions[2].outputs.subject>"' in outcome.text
    frozen = plans.validate_text(outcome.text, path)
    assert frozen.valid and frozen.frozen_hash == frozen.hash


def test_duplicate_available_tools_are_refused(tmp_path: Path) -> None:
    text = BASE_TEXT.replace(
        '    description: "Returns its params"\n',
        '    description: "Returns its params"\n  - name: echo\n',
    )
    problems = _problems(tmp_path, text)
    assert [(p.code, p.path) for p in problems] == [("E_SCHEMA_INVALID", "available_tools[1].name")]


def test_reading_uses_ruamel_c_parser() -> None:
    """The pure-Python parser is ~6x slower; the C extension must be what reads plans."""
    from controller.plan import yamlio

    assert "clib" in type(yamlio._YAML.Parser).__module__ or "CParser" in repr(yamlio._YAML.Parser)


def test_pre_commit_hook_runs_freeze_check() -> None:
    from controller.plan import yamlio

    hooks = yamlio.read_yaml((ROOT / ".pre-commit-hooks.yaml").read_text())
    entries = {h["id"]: h for h in hooks.data}
    assert entries["plangate-freeze-check"]["entry"] == "plangate freeze --check"
    assert "PLAN" in entries["plangate-freeze-check"]["files"]


# each depth where the schema refuses unknown keys: (the line it follows, its indent)
DEPTHS = {
    "top level": ("    retries: 2", ""),
    "plan": ("  status: pending_approval", "  "),
    "available_tools item": ('    description: "Returns its params"', "    "),
    "action": ("    on_failure: retry", "    "),
    "output": ('        path: "$.service"', "        "),
}
# keys a location names as written (plain) and keys it must quote: plan["a.b"]
KEYS = ["bogus", "bo-gus", "app.kubernetes.io/name", "x[1]", "é", 'say "hi"', "two words", "0"]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("depth", DEPTHS)
def test_an_unknown_key_is_reported_at_its_own_line(tmp_path: Path, depth: str, key: str) -> None:
    after, indent = DEPTHS[depth]
    written = f"{indent}{json.dumps(key, ensure_ascii=False)}: 1"
    text = BASE_TEXT.replace(f"{after}\n", f"{after}\n{written}\n")
    (problem,) = _problems(tmp_path, text)
    assert problem.code == "E_SCHEMA_INVALID"
    assert problem.message.startswith(f"unknown key `{key}`")
    assert problem.line == text.splitlines().index(written) + 1, problem


def test_a_key_that_is_not_a_string_is_reported_at_its_own_line(tmp_path: Path) -> None:
    text = BASE_TEXT.replace(
        "  status: pending_approval\n", "  status: pending_approval\n  1.5: x\n"
    )
    (problem,) = _problems(tmp_path, text)
    assert "not a string" in problem.message and problem.path == 'plan["1.5"]'
    assert problem.line == text.splitlines().index("  1.5: x") + 1


def test_a_param_problem_under_a_quoted_key_is_reported_at_its_line(tmp_path: Path) -> None:
    written = '      "app.kubernetes.io/name": "$<inputs.nothing>"'
    text = BASE_TEXT.replace("      limit: 10\n", f"      limit: 10\n{written}\n")
    (problem,) = _problems(tmp_path, text)
    assert (problem.code, problem.path) == (
        "E_REF_UNKNOWN",
        'actions[0].params["app.kubernetes.io/name"]',
    )
    assert problem.line == text.splitlines().index(written) + 1


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.one_of(st.text(), st.integers(min_value=0)), max_size=6))
def test_a_problem_location_reads_back_as_the_keys_it_names(parts: list[str | int]) -> None:
    """The line of a problem is looked up by the keys its location names: every location
    ``format_path`` writes must read back as exactly those keys."""
    assert plans._split(refs.format_path(parts)) == parts


@pytest.mark.parametrize("key", ["a.b", "a[0]", "'a'", " a", "", "a\u200b", "0a"])
def test_input_keys_follow_the_output_names_rule(tmp_path: Path, key: str) -> None:
    """Round 56: with inputs ``a.b`` and ``a``, ``$<inputs.a.b>`` read input ``a``'s ``b``
    (what ``show`` printed as the input ``a.b`` was not what the tool got). An input key is
    named by the rule of output names: refused with its location and a remedy."""
    text = BASE_TEXT.replace("  count: 2", f"  count: 2\n  {json.dumps(key)}: X\n  a: {{b: AB}}")
    problems = _problems(tmp_path, text)
    assert [p.code for p in problems] == ["E_SCHEMA_INVALID"], problems
    assert problems[0].path == refs.format_path(("inputs", key))
    line = text.splitlines().index(f"  {json.dumps(key)}: X") + 1
    assert problems[0].line == line and "not a plain name" in problems[0].message
    assert problems[0].remedy and "rename" in problems[0].remedy


def test_output_names_and_a_nested_action_s_input_keys_share_the_rule(tmp_path: Path) -> None:
    from controller.plan import schema

    bad_output = BASE_TEXT.replace("      - name: keys", '      - name: "a.b"')
    found = _problems(tmp_path, bad_output)
    assert [(p.code, p.path) for p in found][:1] == [
        ("E_SCHEMA_INVALID", "actions[0].outputs[0].name")
    ]
    assert "not a plain name" in found[0].message and found[0].remedy
    pin = {"path": "plans/lib", "hash": "sha256:" + "0" * 64}
    for key, ok in (("a.b", False), ("a[0]", False), ("a_b", True)):
        action = {"id": 1, "plan": pin, "why": "w", "inputs": {key: "chosen"}}
        doc = {"plan": {"name": "n", "task": "t", "status": "draft"}, "actions": [action]}
        _model, errors = schema.parse_document(doc)
        assert (errors == []) is ok, errors
        if not ok:
            assert errors[0]["loc"] == ("actions", 0, "inputs", key, "[key]")


@pytest.mark.parametrize(
    ("name", "beside", "ambiguous"),
    [("PLAN.yml", "plan.yml", True), ("PLAN.yml", "PLAN.YML", True),
     ("PLAN.yaml", "plan.yaml", True), ("PLAN.yml", "PLAN.yaml", True),
     ("PLAN.yml", "PLAN.json", False), ("PLAN.yml", "plan.ymlx", False)],
)  # fmt: skip
def test_a_plan_file_beside_a_case_variant_of_a_plan_files_name_is_ambiguous(
    tmp_path: Path, name: str, beside: str, ambiguous: bool
) -> None:
    """Round 71: the entries of a plan's folder are compared as ``plan_named_folder``
    compares names (case-insensitively): ``plan.yml/`` beside ``PLAN.yml`` is one path on a
    case-insensitive checkout, so ``validate``/``show``/``freeze`` read neither."""
    folder = tmp_path / "plans" / "x"
    (folder / beside).mkdir(parents=True)
    (folder / name).write_text(BASE_TEXT)
    codes = [p.code for p in plans.read_plan(folder / name).problems]
    assert ("E_PLAN_AMBIGUOUS" in codes) is ambiguous, codes


def test_the_catalogs_quote_is_redacted_whatever_the_asker_wrote() -> None:
    """Round 71: a refusal of ``n: <secret>`` against ``not: {enum: [<secret>]}`` read
    "'<secret>' should not be valid under {'enum': ['<secret>']}": the catalog's part kept
    as written because it held the asker's quote. The catalog's quotes are redacted whole;
    the asker's own words stay as written outside them, and a longer quote of the asker's
    still holds a catalog value inside it as written."""
    from controller.errors import redacted_around
    from controller.execution.secrets import Redactor

    redact = Redactor(["S3CRETzz"]).text
    schema = {"properties": {"n": {"not": {"enum": ["S3CRETzz"]}}}}
    ((_where, message, own, theirs),) = plans.static_params_errors({"n": "S3CRETzz"}, schema)
    said = redacted_around(message, own, redact, theirs)
    assert said == "'S3CRETzz' should not be valid under {'enum': ['***']}", said
    problem = plans.Problem(
        "E_PARAMS_INVALID", message, "n", quotes_catalog=True, own_quotes=own, catalog_quotes=theirs
    )
    assert problem.answered(redact).message == said
    wrong = redacted_around(
        "'S3CRETzq' should not be valid under {'enum': ['***']}",
        ["'S3CRETzq'"],
        redact,
        ["{'enum': ['***']}"],
    )
    assert wrong.replace("S3CRETzq", "G") == said.replace("S3CRETzz", "G")
    inside = redacted_around(
        "got 'a S3CRETzz b' (5)", ["'a S3CRETzz b'"], redact, ["'S3CRETzz'", "5"]
    )
    assert inside == "got 'a S3CRETzz b' (5)", inside
