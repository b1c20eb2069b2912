"""Validation rules for checks, fallbacks, retries, idempotency and ``needs`` (SPEC §12).

:mod:`controller.plan.plans` runs these after the schema; each yields :class:`Problem`
records with the YAML location. References are checked here for every place they may
appear (action params, check params, fallback params, a nested plan's inputs), against the
actions the referring action transitively needs (E_REF_FORWARD otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from controller.errors import Problem
from controller.plan import graph, refs, regexes
from controller.plan.shape import CHECK_TOOL_RISK, REF_IN_TEXT, RETRY_KEYS

if TYPE_CHECKING:
    from controller.plan.schema import (
        Action,
        ExpectClause,
        FallbackStep,
        PlanDocument,
        Precondition,
        Verify,
    )
    from controller.settings import Config, ToolSpec

Where = tuple[str | int, ...]
_REF_IN_TEXT = re.compile(REF_IN_TEXT)


def plan_graph(model: PlanDocument) -> tuple[graph.Graph | None, list[Problem]]:
    """The plan's graph; None without problems when ids repeat (reported as E_ACTION_IDS)."""
    ids = [a.id for a in model.actions]
    if len(set(ids)) != len(ids):
        return None, []
    return graph.build([(a.id, a.needs) for a in model.actions])


def check(model: PlanDocument, config: Config | None) -> list[Problem]:
    """Every §12 problem of a schema-valid plan (ids are checked before, in plans.py)."""
    built, problems = plan_graph(model)
    problems += list(_references(model, built))
    problems += list(_checks(model, config))
    problems += list(_fallbacks(model, config))
    problems += list(_idempotent(model, config))
    return problems


# --- references -------------------------------------------------------------------------


def _references(model: PlanDocument, built: graph.Graph | None) -> Iterator[Problem]:
    symbols = refs.PlanSymbols(
        outputs={a.id: {o.name for o in a.outputs} for a in model.actions},
        inputs=model.inputs,
        visible=built.ancestors if built is not None else None,
    )
    sites = list(param_sites(model))
    for action, where, value in sites:
        yield from refs.check_action_refs(
            action.id if action is not None else 0, value, symbols, where
        )
        if action is not None:
            yield from _keys_with_refs(value, where)
    for action, where, value in sites:  # the plan's own preconditions' keys: last, as before
        if action is None:
            yield from _keys_with_refs(value, where)
    yield from refs.unresolved_problems(model.inputs, ("inputs",), "a plan's inputs", INPUTS_REMEDY)


#: What to write instead of reference text in a plan's static ``inputs`` (round 116).
INPUTS_REMEDY = (
    "a plan's inputs are static values: write the reference in the action's params "
    '(`x: "$<plan.name>"`), or, to give a tool the text `$<`, write `$$<` in its params'
)


def _holds_ref(text: str) -> bool:
    """Whether ``text`` holds reference syntax (``$<`` not written as ``$$<``), read as
    the resolver reads it (a malformed reference counts): the regex the schema's
    ``propertyNames`` refuses in params keys (tests/plan/test_plan_rules.py holds it to
    :func:`refs.parse`)."""
    return _REF_IN_TEXT.search(text) is not None


def _keys_with_refs(value: Any, where: Where) -> Iterator[Problem]:
    """Mapping keys that read as references: keys are used as written, never resolved, so
    a key like ``$<inputs.k>`` would look resolved to a reviewer and reach the tool as text
    (round 18)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and _holds_ref(key):
                yield Problem(
                    "E_REF_INVALID",
                    f"{key!r}: references are resolved in values, never in mapping keys; "
                    "put the reference in a value",
                    refs.format_path((*where, key)),
                )
            yield from _keys_with_refs(item, (*where, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _keys_with_refs(item, (*where, index))


def param_sites(model: PlanDocument) -> Iterator[tuple[Action | None, Where, Any]]:
    """(the action it belongs to, None for the plan's own preconditions; location; value) of
    every value the run resolves and hands a tool (or a nested plan): the plan's
    preconditions' params, then each action's :func:`_ref_sites`. The one list the reference
    rules and the static size check (``plans._check_param_sizes``, round 124) walk, so a
    place a new feature resolves is checked by both once it is listed here
    (tests/plan/test_param_sites.py holds it to the schema's ``RefFreeKeys`` fields)."""
    for p_index, pre in enumerate(model.preconditions):
        yield None, ("preconditions", p_index, "params"), pre.params
    for index, action in enumerate(model.actions):
        for where, value in _ref_sites(action, ("actions", index)):
            yield action, where, value


def _ref_sites(action: Action, base: Where) -> Iterator[tuple[Where, Any]]:
    """Every value of an action where ``$<...>`` references are resolved at run time."""
    yield (*base, "params"), action.params
    if action.inputs is not None:
        yield (*base, "inputs"), action.inputs
    for p_index, pre in enumerate(action.preconditions):
        yield (*base, "preconditions", p_index, "params"), pre.params
    if action.verify is not None:
        yield (*base, "verify", "params"), action.verify.params
    for f_index, step in enumerate(action.fallback):
        fbase: Where = (*base, "fallback", f_index)
        yield (*fbase, "params"), step.params
        for p_index, pre in enumerate(step.preconditions):
            yield (*fbase, "preconditions", p_index, "params"), pre.params
        if step.verify is not None:
            yield (*fbase, "verify", "params"), step.verify.params


# --- check tools and expect clauses ------------------------------------------------------


def _checks(model: PlanDocument, config: Config | None) -> Iterator[Problem]:
    declared = {tool.name for tool in model.available_tools}
    for p_index, pre in enumerate(model.preconditions):
        yield from _check(pre, ("preconditions", p_index), declared, config)
    for index, action in enumerate(model.actions):
        yield from _step_checks(action, ("actions", index), declared, config)
        for f_index, step in enumerate(action.fallback):
            yield from _step_checks(step, ("actions", index, "fallback", f_index), declared, config)


def _step_checks(
    step: Action | FallbackStep, base: Where, declared: set[str], config: Config | None
) -> Iterator[Problem]:
    for p_index, pre in enumerate(step.preconditions):
        yield from _check(pre, (*base, "preconditions", p_index), declared, config)
    if step.verify is not None:
        yield from _check(step.verify, (*base, "verify"), declared, config)


def _check(
    check: Precondition | Verify, base: Where, declared: set[str], config: Config | None
) -> Iterator[Problem]:
    yield from expect_problems(check.expect, (*base, "expect"))
    if check.tool is None:
        return
    where = refs.format_path((*base, "tool"))
    yield from tool_problems(check.tool, where, declared, config)
    spec = config.tools.get(check.tool) if config is not None else None
    if spec is not None:
        yield from check_tool_problems(check.tool, spec, where)


def check_tool_problems(name: str, spec: ToolSpec, where: str) -> Iterator[Problem]:
    """A check tool must be idempotent and of low risk (E_CHECK_TOOL; the ``--config``
    schema's enum of check tools reads the same rule, :func:`shape.can_check`)."""
    if not spec.idempotent:
        yield Problem(
            "E_CHECK_TOOL",
            f"check tool {name!r} is not idempotent in the catalog; checks may run many "
            "times, so only tools marked idempotent: true can check",
            where,
        )
    risk = getattr(spec, "risk", None)
    if risk is not None and risk != CHECK_TOOL_RISK:
        yield Problem(
            "E_CHECK_TOOL",
            f"check tool {name!r} has risk {risk!r} in the catalog; only risk: low tools check",
            where,
        )


def tool_problems(
    name: str, where: str, declared: set[str], config: Config | None
) -> Iterator[Problem]:
    if name not in declared:
        listed = ", ".join(sorted(declared)) or "none"
        yield Problem(
            "E_TOOL_NOT_DECLARED",
            f"tool {name!r} is not in available_tools (declared: {listed}); declare it there",
            where,
        )
    if config is not None and name not in config.tools:
        known = ", ".join(sorted(config.tools)) or "none"
        yield Problem(
            "E_TOOL_UNKNOWN",
            f"tool {name!r} is not in the controller's catalog (known: {known})",
            where,
        )


def expect_problems(clause: ExpectClause, base: Where) -> Iterator[Problem]:
    """Queries that are not RFC 9535 and ``matches`` patterns that are not I-Regexp."""
    from controller.plan.jsonpaths import query_problem

    items = clause if isinstance(clause, list) else [clause]  # never empty: the schema's minItems
    for k, item in enumerate(items):
        at = (*base, k) if isinstance(clause, list) else base
        problem = query_problem(item.path)
        if problem is not None:
            yield Problem(
                "E_SCHEMA_INVALID",
                f"not an RFC 9535 JSONPath query: {problem} (write e.g. $.status)",
                refs.format_path((*at, "path")),
            )
        name, value = item.operator
        yield from refs.unresolved_problems(
            value, (*at, name), "expect", "compare with a literal value"
        )
        if name == "matches" and not regexes.is_iregexp(value):
            yield Problem(
                "E_SCHEMA_INVALID",
                "not an I-Regexp (RFC 9485) pattern: use characters, ., [...], \\p{..}, "
                "groups, |, ?, *, +, {n,m}; ^ and $ are characters, the whole value must match",
                refs.format_path((*at, "matches")),
            )


# --- fallback and on_failure -------------------------------------------------------------


def _fallbacks(model: PlanDocument, config: Config | None) -> Iterator[Problem]:
    declared = {tool.name for tool in model.available_tools}
    for index, action in enumerate(model.actions):
        base: Where = ("actions", index)
        mode = action.on_failure or model.on_failure
        if mode == "fallback" and not action.fallback:
            yield Problem(
                "E_SCHEMA_INVALID",
                "on_failure: fallback needs fallback: steps to run",
                refs.format_path((*base, "on_failure")),
            )
        if action.fallback and mode != "fallback":
            yield Problem(
                "E_SCHEMA_INVALID",
                f"fallback: steps never run with on_failure: {mode}; write on_failure: fallback",
                refs.format_path((*base, "fallback")),
            )
        for f_index, step in enumerate(action.fallback):
            expected = f"{action.id}.{f_index + 1}"
            at = (*base, "fallback", f_index)
            if step.id != expected:
                yield Problem(
                    "E_ACTION_IDS",
                    f"fallback step ids are <action id>.1, .2, ... in order: expected "
                    f"{expected!r}, found {step.id!r}",
                    refs.format_path((*at, "id")),
                )
            yield from tool_problems(step.tool, refs.format_path((*at, "tool")), declared, config)
            if step.requires_approval:
                yield Problem(
                    "E_SCHEMA_INVALID",
                    "a fallback step cannot pause for a second approval: fallback steps run at "
                    "once when the action fails, so the gate would be skipped; to have a person "
                    "decide after a failure write on_failure: ask on the action, or put "
                    "requires_approval on the action to approve it before it runs",
                    refs.format_path((*at, "requires_approval")),
                )
    yield from _retry_settings(model)


def _retry_settings(model: PlanDocument) -> Iterator[Problem]:
    """``retry:``/``retries:`` only count with ``on_failure: retry`` (the engine tries once
    otherwise): settings it would ignore are refused, like a fallback without its policy."""
    for index, action in enumerate(model.actions):
        steps: list[tuple[Where, Action | FallbackStep, str]] = [
            (("actions", index), action, action.on_failure or model.on_failure)
        ]
        steps += [
            (("actions", index, "fallback", k), s, s.on_failure)
            for k, s in enumerate(action.fallback)
        ]
        for base, step, mode in steps:
            for key in RETRY_KEYS:
                if getattr(step, key) is not None and mode != "retry":
                    yield Problem(
                        "E_SCHEMA_INVALID",
                        f"{key}: only applies with on_failure: retry, and this step fails "
                        f"with {mode} (it is tried once); write on_failure: retry or remove "
                        f"{key}:",
                        refs.format_path((*base, key)),
                    )


def _idempotent(model: PlanDocument, config: Config | None) -> Iterator[Problem]:
    """``idempotent: true`` cannot make a tool the catalog calls unsafe to repeat safe."""
    if config is None:
        return
    for index, action in enumerate(model.actions):
        steps: list[tuple[Where, Action | FallbackStep]] = [(("actions", index), action)]
        steps += [(("actions", index, "fallback", k), s) for k, s in enumerate(action.fallback)]
        for base, step in steps:
            spec = config.tools.get(step.tool) if step.tool else None
            if step.idempotent and spec is not None and not spec.idempotent:
                yield Problem(
                    "E_SCHEMA_INVALID",
                    f"idempotent: true cannot override the catalog, where tool {step.tool!r} "
                    "is not idempotent; per-action idempotent may only make it stricter (false)",
                    refs.format_path((*base, "idempotent")),
                )


def is_idempotent(step: Action | FallbackStep, spec: ToolSpec) -> bool:
    """The catalog's answer, made stricter by the step's own ``idempotent: false``."""
    return spec.idempotent and step.idempotent is not False
