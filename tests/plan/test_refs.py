"""References: parsing, validation against a plan, single-pass typed resolution, legacy form."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.errors import RefForward, RefInvalid, RefUnavailable, RefUnknown
from controller.plan import refs
from controller.plan.shape import REF_IN_TEXT


def test_parse_splits_literals_and_references() -> None:
    parts = refs.parse("Re: $<actions[2].outputs.subject> for $<inputs['a b']>[0]")
    assert parts[0] == "Re: "
    assert parts[1] == refs.Ref(
        "actions", ("outputs", "subject"), 2, "$<actions[2].outputs.subject>"
    )
    assert parts[3] == refs.Ref("inputs", ("a b",), None, "$<inputs['a b']>")
    assert parts[4] == "[0]"


def test_double_dollar_is_a_literal() -> None:
    assert refs.parse("cost $$<inputs.x> and $5") == ["cost $<inputs.x> and $5"]


@pytest.mark.parametrize(
    "text",
    [
        "$<nope.x>",
        "$<actions.x>",
        "$<actions[a]>",
        "$<inputs.x",
        "$<inputs.>",
        "$<inputs[-1]>",
        "$<inputs x>",
        "$<actions[\u0661].outputs.x>",  # a digit a reviewer would not read as 1
        "$<inputs.a[\uff13]>",
    ],
)
def test_bad_syntax_is_ref_invalid(text: str) -> None:
    with pytest.raises(RefInvalid):
        refs.parse(text)


SYMBOLS = refs.PlanSymbols(outputs={1: {"ids"}, 2: set()}, inputs={"folder": "inbox", "list": [1]})


@pytest.mark.parametrize(
    ("text", "current", "error"),
    [
        ("$<actions[2].outputs.ids>", 2, RefForward),
        ("$<actions[3].outputs.ids>", 2, RefForward),
        ("$<actions[1].outputs.nope>", 2, RefUnknown),
        ("$<actions[9].outputs.ids>", 10, RefUnknown),
        ("$<inputs.missing>", 2, RefUnknown),
        ("$<inputs.list[3]>", 2, RefUnknown),
        ("$<plan.status>", 2, RefUnknown),
        ("$<actions[1]>", 2, RefInvalid),
        ("$<actions[1].outputz.ids>", 2, RefInvalid),
        ("$<secrets.a.b>", 2, RefInvalid),
    ],
)
def test_validation_errors(text: str, current: int, error: type[Exception]) -> None:
    (ref,) = refs.parse(text)
    assert isinstance(ref, refs.Ref)
    with pytest.raises(error):
        refs.check_ref(ref, current, SYMBOLS)


@pytest.mark.parametrize(
    "text",
    [
        "$<actions[1].outputs.ids[0]>",
        "$<actions[1].result.x>",
        "$<inputs.list[0]>",
        "$<plan.name>",
        "$<approval.by>",
        "$<secrets.TOKEN>",
    ],
)
def test_valid_references(text: str) -> None:
    (ref,) = refs.parse(text)
    assert isinstance(ref, refs.Ref)
    refs.check_ref(ref, 2, SYMBOLS)


def _ctx(**kw: Any) -> refs.Context:
    base: dict[str, Any] = {
        "inputs": {"folder": "inbox", "n": 3},
        "plan": {"name": "P"},
        "outputs": {1: {"ids": ["m1", "m2"], "meta": {"k": True}}},
        "results": {1: {"messages": [{"id": "m1"}]}},
    }
    base.update(kw)
    return refs.Context(**base)


def test_whole_string_reference_keeps_its_type() -> None:
    params = {
        "ids": "$<actions[1].outputs.ids>",
        "n": "$<inputs.n>",
        "first": "$<actions[1].outputs.ids[1]>",
    }
    assert refs.resolve(params, _ctx()) == {"ids": ["m1", "m2"], "n": 3, "first": "m2"}


def test_embedded_reference_becomes_text_compact_json_for_non_strings() -> None:
    out = refs.resolve({"s": "ids=$<actions[1].outputs.ids> in $<inputs.folder>"}, _ctx())
    assert out == {"s": 'ids=["m1","m2"] in inbox'}


def test_resolution_is_single_pass_resolved_values_are_never_rescanned() -> None:
    hostile = "$<secrets.TOKEN> $<inputs.folder> ${actions[1].result}"
    ctx = _ctx(outputs={1: {"ids": hostile}})
    out = refs.resolve({"a": "$<actions[1].outputs.ids>", "b": "x $<actions[1].outputs.ids>"}, ctx)
    assert out == {"a": hostile, "b": "x " + hostile}
    assert ctx.used_secrets == set()


def test_missing_runtime_values_are_ref_unavailable() -> None:
    ctx = _ctx(outputs={1: {}}, results={})
    for text in ("$<actions[1].outputs.ids>", "$<actions[1].result>", "$<actions[2].outputs.x>"):
        with pytest.raises(RefUnavailable):
            refs.resolve(text, ctx)
    with pytest.raises(RefUnavailable):
        refs.resolve("$<actions[1].outputs.ids[5]>", _ctx())


def test_secrets_are_resolved_and_recorded_for_redaction() -> None:
    ctx = _ctx(secret=lambda name: {"TOKEN": "s3cr3t"}[name])
    assert refs.resolve({"auth": "Bearer $<secrets.TOKEN>"}, ctx) == {"auth": "Bearer s3cr3t"}
    assert ctx.used_secrets == {"s3cr3t"}


def test_keys_are_never_resolved() -> None:
    assert refs.resolve({"$<inputs.folder>": 1}, _ctx()) == {"$<inputs.folder>": 1}


def test_legacy_forms_are_converted_and_other_dollar_braces_kept() -> None:
    assert (
        refs.convert_legacy("${actions[1].outputs.email_ids[0]}")
        == "$<actions[1].outputs.email_ids[0]>"
    )
    assert (
        refs.convert_legacy("Re: ${actions[2].outputs.subject}")
        == "Re: $<actions[2].outputs.subject>"
    )
    assert refs.convert_legacy("${inputs.x} ${plan.name}") == "$<inputs.x> $<plan.name>"
    assert refs.convert_legacy("${approval.approved_by}") == "$<approval.by>"
    assert (
        refs.convert_legacy("echo ${HOME} ${PATH:-x} ${actions}")
        == "echo ${HOME} ${PATH:-x} ${actions}"
    )


@pytest.mark.parametrize(
    "text",
    [
        "${ inputs.to }",
        "${\tinputs.to}",
        "${  plan.name}",
        "${ actions[1].result }",
        "${\u200binputs.to}",
        "${\u00adapproval.approved_by}",
    ],
)
def test_a_legacy_reference_with_space_after_its_opener_is_refused(text: str) -> None:
    """Round 113 (``legacy-ref-spaced-opener``): a reviewer reads ``${ inputs.to }`` as the
    reference it is in most template languages; it was text the tool got as written, while
    ``${inputs.to }`` was refused. Now both are refused, never carried and never text."""
    assert refs.convert_legacy(text) == text  # never carried into a $<...>
    assert refs.legacy_uncarried(text) is not None  # so the plan is refused E_REF_INVALID
    assert refs.legacy_uncarried("${HOME} ${ HOME } ${secrets.TOK} ${planet}") is None


def test_a_spaced_legacy_reference_fails_validation_at_its_place() -> None:
    from pathlib import Path

    from controller.plan import plans

    text = (
        "plan: {name: p, task: t, status: pending_approval}\ninputs: {to: x}\n"
        "available_tools: [{name: t}]\n"
        'actions:\n  - {id: 1, tool: t, why: w, params: {x: "${ inputs.to }"}}\n'
    )
    found = plans.validate_text(text, Path("PLAN.yml"))
    assert [(p.code, p.path) for p in found.problems] == [
        ("E_REF_INVALID", "actions[0].params.x")
    ], found.problems


#: Pieces of params text around a legacy reference: its roots, segments, braces, quotes, a
#: `>`, white space and an invisible character, `$<`, `$$<`, a shell variable.
_LEGACY_PIECES = [
    *("${", "$<", "$", "{", "}", "[", "]", ".", "'", '"', ">", "<", " ", "\n", "\u200b"),
    *("inputs", "plan", "approval", "actions", "secrets", "HOME", "et", "[1]", "a", "x-1", "0"),
]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_LEGACY_PIECES), max_size=12).map("".join))
def test_the_schemas_action_reference_is_what_validate_reads_as_one(text: str) -> None:
    """Round 125 (schema-config-refuses-legacy-reference): ``schema --config`` checked
    ``n: "${inputs.num}"`` in an action's params as the text while validate, converting it
    as the freeze does, read a reference. The schema's reference of an action's params
    (``shape.ACTION_REFERENCE_VALUE``, Python's ``re`` as jsonschema reads it and ECMA-262
    as an editor does) holds exactly where the converted text holds a ``$<...>`` (a text
    whose legacy opener cannot be carried is refused E_REF_INVALID: not asked)."""
    from controller.plan.regexes import ecma
    from controller.plan.shape import ACTION_REFERENCE_VALUE

    if refs.legacy_uncarried(text) is not None:
        return
    read = re.search(REF_IN_TEXT, refs.convert_legacy(text)) is not None
    pattern = ACTION_REFERENCE_VALUE["pattern"]
    assert (re.search(pattern, text) is not None) == read
    assert (ecma(pattern).search(text) is not None) == read


json_leaf = (
    st.none() | st.booleans() | st.integers() | st.text(alphabet="ab$<>{}.[]' ", max_size=12)
)
json_tree = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(value=json_tree)
def test_resolution_of_reference_free_data_is_identity_or_refuses(value: Any) -> None:
    """Any tree either resolves (and then contains no unresolved $< of its own) or is refused."""
    try:
        out = refs.resolve(value, _ctx(inputs={"a": "$<inputs.a>"}))
    except (RefInvalid, RefUnavailable):
        return
    if not any("$" in s for _, s in refs.walk_strings(value)):
        assert out == value


@settings(max_examples=100, deadline=None)
@given(payload=json_tree)
def test_any_output_value_passes_through_unchanged(payload: Any) -> None:
    ctx = _ctx(outputs={1: {"ids": payload}})
    assert refs.resolve({"x": "$<actions[1].outputs.ids>"}, ctx) == {"x": payload}


def test_params_and_inputs_reach_the_tool_in_the_hashs_key_order() -> None:
    # the hash (RFC 8785) does not see the order a plan writes keys in: neither may the tool
    ctx = refs.Context(inputs={"cfg": {"zeta": 1, "alpha": {"y": 2, "b": 3}}})
    params = {"steps": {"second": "backup", "first": "delete"}, "cfg": "$<inputs.cfg>", "a": 0}
    resolved = refs.resolve(params, ctx)
    assert list(resolved) == ["a", "cfg", "steps"]
    assert list(resolved["steps"]) == ["first", "second"]
    assert list(resolved["cfg"]) == ["alpha", "zeta"] and list(resolved["cfg"]["alpha"]) == [
        "b",
        "y",
    ]
    # RFC 8785 orders by UTF-16 code units: an astral character (a surrogate pair, D83D..)
    # before U+FF61, the other way round from code points
    assert list(refs.resolve({"\uff61": 2, "\U0001f600": 1}, ctx)) == ["\U0001f600", "\uff61"]


def _reads_a_reference(text: str) -> bool:
    try:
        return any(isinstance(part, refs.Ref) for part in refs.parse(text))
    except RefInvalid:
        return True


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="$<>.a[]1", max_size=14))
def test_the_key_pattern_finds_what_the_resolver_reads_as_a_reference(text: str) -> None:
    """``REF_IN_TEXT`` (validate's key check and the schema's ``propertyNames`` for params,
    round 62) matches exactly the text the resolver reads as a reference or refuses."""
    assert (re.search(REF_IN_TEXT, text) is not None) is _reads_a_reference(text), text


@pytest.mark.parametrize(
    ("text", "holds"),
    [("$<inputs.a>", True), ("x$<", True), ("$$<inputs.a>", False), ("$$$<b", False), ("$", False)],
)
def test_an_escaped_reference_is_text(text: str, holds: bool) -> None:
    assert (re.search(REF_IN_TEXT, text) is not None) is holds
    assert _reads_a_reference(text) is holds


def test_authored_keeps_what_the_plan_wrote_and_what_a_reference_filled_as_recorded() -> None:
    written = {
        "note": "hunter2-guess",
        "both": "pre-$<actions[1].outputs.x>",
        "whole": "$<secrets.TOK>",
        "list": ["hunter2-guess", "$<actions[1].outputs.x>", 7],
        "escaped": "$$<not a ref>",
        "name": "$<plan.name>",
        "hunter2-guess": {"k": "$<inputs.who>"},
    }
    plan = {"name": "hunter2-guess", "task": "t", "hash": "sha256:0"}
    # the journal's record: resolved, then redacted (the guess was right)
    recorded = {  # in the order resolve writes (RFC 8785's), which the redactor keeps
        "both": "pre-***",
        "escaped": "$<not a ref>",
        "***": {"k": "***"},
        "list": ["***", "out", 7],
        "name": "***",
        "note": "***",
        "whole": "***",
    }
    shown = refs.authored(written, recorded, plan)
    assert shown == {
        "both": "pre-***",  # a reference's value shares the string: as recorded, whole
        "escaped": "$<not a ref>",
        "hunter2-guess": {"k": "***"},  # the author's key, an input's value
        "list": ["hunter2-guess", "out", 7],
        "name": "hunter2-guess",
        "note": "hunter2-guess",
        "whole": "***",
    }
    assert refs.authored(written, recorded)["name"] == "***"  # no plan fields: as recorded
    moved = {"escaped": "x", "both": "y"}  # not the plan's keys in its order: as recorded
    assert refs.authored({"both": "$<inputs.a>", "escaped": "$<inputs.b>"}, moved) == moved


def test_authored_falls_back_to_the_record_where_the_shapes_differ() -> None:
    # a list spelling a secret is masked whole; it was filled in by a reference here
    assert refs.authored(["$<actions[1].outputs.x>", 1], "***") == "***"
    assert refs.authored([104, 117, 110, 116, 101, 114], "***") == [104, 117, 110, 116, 101, 114]


def test_authored_keeps_a_top_level_plans_own_inputs_as_written() -> None:
    # round 65: `$<inputs.g>` read from the plan's own `inputs:` is its author's literal
    inputs = {"g": "hunter2-guess", "e": "", "tree": {"b": 1, "a": "hunter2-guess"}}
    written = {
        "one": "$<inputs.g>",
        "mix": "hunter2-guess$<inputs.e>",
        "tree": "$<inputs.tree>",
        "out": "$<inputs.g>$<actions[1].outputs.x>",
    }
    recorded = {"mix": "***", "one": "***", "out": "***out", "tree": {"a": "***", "b": 1}}
    shown = refs.authored(written, recorded, None, inputs)
    assert shown == {
        "mix": "hunter2-guess",
        "one": "hunter2-guess",
        "out": "***out",  # an output shares the string: as recorded, whole
        "tree": {"a": "hunter2-guess", "b": 1},
    }
    # no inputs given (a nested plan's: its parent's values): as recorded
    assert refs.authored(written, recorded, None) == recorded


def test_a_nested_plans_inputs_are_its_authors_where_every_value_filling_them_is() -> None:
    # round 66: provenance follows the parent's resolution, not the plan's depth
    parent_inputs = {"h": "hunter2-guess"}
    plan = {"name": "parent", "task": "t", "hash": "sha256:1"}
    given = {
        "lit": "hunter2-guess",  # the parent's literal
        "own": "$<inputs.h>-$<plan.name>",  # the parent's own input and name
        "sec": "$<secrets.TOK>",  # the controller's: not the author's, its default neither
        "out": "a$<actions[1].outputs.x>",  # an output joined to a literal: the output's
        "gone": "$<inputs.missing>",  # not resolvable: read as recorded
    }
    defaults = {"def": "hunter2-guess", "sec": "a default", "lit": "overridden"}
    theirs = refs.authored_inputs(given, defaults, plan, parent_inputs)
    assert theirs == {
        "def": "hunter2-guess",
        "lit": "hunter2-guess",
        "own": "hunter2-guess-parent",
    }
    written = {
        "a": "$<inputs.lit>",
        "b": "$<inputs.def>",
        "c": "$<inputs.sec>",
        "d": "$<inputs.out>",
    }
    recorded = {"a": "***", "b": "***", "c": "***", "d": "a***"}
    shown = refs.authored(written, recorded, None, theirs)
    assert shown == {"a": "hunter2-guess", "b": "hunter2-guess", "c": "***", "d": "a***"}
    # without the parent's own inputs given, its `$<inputs.h>` is no author's text
    assert "own" not in refs.authored_inputs(given, defaults, plan, None)


def _mask(known: tuple[str, ...]) -> Any:
    """A stand-in for the redactor's value search: every known value masked, in any JSON."""

    def mask(value: Any) -> Any:
        if isinstance(value, str):
            for secret in known:
                value = value.replace(secret, "***")
            return value
        if isinstance(value, dict):
            return {mask(k): mask(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mask(v) for v in value]
        return value

    return mask


_KNOWN = ("hunter2-guess", "s3cret-other")


def _secret_ctx(**more: Any) -> refs.Context:
    values = {"TOK": "hunter2-guess", "TOK2": "s3cret-other"}
    return refs.Context(secret=values.__getitem__, **more)


@pytest.mark.parametrize("guess", ["hunter2-guess", "hunter2-gueZZ"])
def test_recorded_builds_a_mixed_string_from_its_parts(guess: str) -> None:
    # round 67: the redactor ran over the joined string, the author's part included, so a
    # literal equal to another secret came back '***-***' for a right guess only
    plan = {"name": guess, "task": "t", "hash": "sha256:0"}
    written = {
        "mix": f"{guess}-$<secrets.TOK2>",
        "name": "$<plan.name>/$<secrets.TOK2>",
        "whole": "$<secrets.TOK>",
        "escaped": "$$<secrets.TOK>",
        guess: [guess, 7],
    }
    shown = refs.recorded(written, _secret_ctx(plan=plan), _mask(_KNOWN))
    assert shown == {
        "escaped": "$<secrets.TOK>",
        "mix": f"{guess}-***",
        "name": f"{guess}/***",
        "whole": "***",
        guess: [guess, 7],
    }
    assert list(shown) == list(refs.resolve(written, _secret_ctx(plan=plan)))  # resolve's order


def test_recorded_masks_the_controllers_material_by_value() -> None:
    # outputs carry no provenance: the value search is their net, over each run of them
    outputs = {1: {"a": "hunter2-", "b": "guess", "x": "hunter2-guess", "t": {"k": "s3cret-other"}}}
    ctx = _secret_ctx(outputs=outputs)
    mask = _mask(_KNOWN)
    assert refs.recorded("pre-$<actions[1].outputs.x>", ctx, mask) == "pre-***"
    assert refs.recorded("$<actions[1].outputs.t>", ctx, mask) == {"k": "***"}
    # two outputs that spell a secret together are one run of the controller's text
    assert refs.recorded("<$<actions[1].outputs.a>$<actions[1].outputs.b>>", ctx, mask) == "<***>"
    # a secret across the edge of the author's text and an output: the whole string masked
    assert refs.recorded("hunter2-$<actions[1].outputs.b>", ctx, mask) == "***"


def test_recorded_reads_a_nested_plans_inputs_as_its_parents_record_shows_them() -> None:
    # a child's input is shown as the parent's record built it: its author's part as written
    shown = {"h": "hunter2-guess", "k": "***", "tree": {"a": "hunter2-guess"}}
    real = {
        "h": "hunter2-guess",
        "k": "s3cret-other",
        "tree": {"a": "hunter2-guess"},
        "x": "s3cret-other",
    }
    ctx = _secret_ctx(inputs=real, shown_inputs=shown)
    mask = _mask(_KNOWN)
    assert refs.recorded("$<inputs.h>-$<inputs.k>", ctx, mask) == "hunter2-guess-***"
    assert refs.recorded("$<inputs.tree>", ctx, mask) == {"a": "hunter2-guess"}
    assert refs.recorded("($<inputs.x>)", ctx, mask) == "(***)"  # not shown: by value
    # a top-level plan (no shown_inputs): its inputs are its author's literals
    assert refs.recorded("$<inputs.h>-$<inputs.k>", _secret_ctx(inputs=real), mask) == (
        "hunter2-guess-s3cret-other"
    )
