"""Guards: what values a parameter fed by outside data may take (SPEC §16).

A guard is written in the plan, so it is hashed and approved with it::

    guards:
      - {param: to, matches: "^[^@]+@customer\\.example$"}
      - {param: amount, min: 0, max: 500}
      - {param: channel, one_of: [ops, support]}

Rules: ``matches`` (a regular expression in Python's syntax that the whole value must
match, so an unanchored pattern cannot be satisfied by a substring; matched by the
``regex`` engine with a time limit, failing closed), ``one_of`` (the value equals one of
these JSON values), ``min``/``max`` (a number within bounds, inclusive). A list value must
satisfy the guard element by element; several guards on one parameter must all hold.
:func:`check` runs after the references are resolved and before the tool is called; a
value that fails is E_GUARD_FAILED. The values are read as recorded (secrets masked, round
43); one the redaction changed fails closed (round 45, :func:`check_values`). Pure: data in,
data out.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from controller.errors import GuardFailed, PlangateError, Problem
from controller.plan import budget, jsonvalues, refs
from controller.plan.shape import GUARD_RULES

if TYPE_CHECKING:
    from controller.plan.schema import Action, FallbackStep, Guard, PlanDocument

MAX_PATTERN = 1000
#: What to write instead of reference text in a guard's ``one_of`` or ``matches`` (round 116).
GUARD_REMEDY = (
    "a guard compares the resolved param with values as written: write the allowed values "
    "themselves; to allow the text `$<` write `[$]<` in matches"
)
#: Seconds one ``matches`` check may take. A pattern that backtracks catastrophically on a
#: crafted value (``^(a|aa)+$``) must not stall the controller: it fails closed instead.
MATCH_TIMEOUT = 0.1


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    import regex  # the maintained engine with a match timeout; its syntax is re's

    if len(pattern) > MAX_PATTERN:
        raise ValueError(f"longer than {MAX_PATTERN} characters")
    return regex.compile(pattern, regex.VERSION0)


def static_problems(model: PlanDocument) -> Iterator[Problem]:
    """Guards that can never work: no rule, an unknown param, a pattern that does not compile
    (on actions, fallback steps and their checks, and the plan's preconditions)."""
    owners: list[tuple[str, Any]] = [
        (f"preconditions[{k}]", pre) for k, pre in enumerate(model.preconditions)
    ]
    for index, action in enumerate(model.actions):
        steps: list[tuple[str, Action | FallbackStep]] = [(f"actions[{index}]", action)]
        steps += [(f"actions[{index}].fallback[{k}]", s) for k, s in enumerate(action.fallback)]
        for base, step in steps:
            owners.append((base, step))
            owners += [(f"{base}.preconditions[{k}]", p) for k, p in enumerate(step.preconditions)]
            if step.verify is not None:
                owners.append((f"{base}.verify", step.verify))
    for base, owner in owners:
        for g_index, guard in enumerate(getattr(owner, "guards", None) or ()):
            yield from _guard_problems(owner.params, guard, f"{base}.guards[{g_index}]")


def _guard_problems(params: dict[str, Any], guard: Guard, where: str) -> Iterator[Problem]:
    if guard.param not in params:
        known = ", ".join(sorted(params)) or "none"
        yield Problem(
            "E_SCHEMA_INVALID",
            f"guard on param {guard.param!r}, which this step does not have (params: {known})",
            f"{where}.param",
        )
    if all(getattr(guard, rule) is None for rule in GUARD_RULES):
        yield Problem(
            "E_SCHEMA_INVALID",
            "a guard needs at least one rule: matches, one_of, min or max",
            where,
        )
    for rule in ("one_of", "matches"):  # compared as written, never resolved (round 116)
        yield from refs.unresolved_problems(
            getattr(guard, rule), (rule,), "a guard's values", GUARD_REMEDY, prefix=where
        )
    if guard.matches is not None:
        try:
            _compiled(guard.matches)
        except Exception as exc:  # regex.error, or too long
            yield Problem(
                "E_SCHEMA_INVALID",
                f"matches is not a valid regular expression: {exc}",
                f"{where}.matches",
            )
            return
    impossible = _never_passes(guard)
    if impossible is not None:
        yield Problem(
            "E_SCHEMA_INVALID",
            f"this guard can never pass: {impossible}; the step would always fail "
            "E_GUARD_FAILED (fix the bounds or the allowed values)",
            where,
        )


def _never_passes(guard: Guard) -> str | None:
    """Why no value can meet every rule of ``guard`` (None: some value can)."""
    if guard.min is not None and guard.max is not None and guard.min > guard.max:
        return f"min {guard.min:g} is above max {guard.max:g}"
    numeric = guard.min is not None or guard.max is not None
    if guard.matches is not None and numeric:
        return "matches needs a string and min/max a number"
    if guard.one_of is not None:
        allowed = _allowed(guard)
        try:
            with budget.spending():
                if all(_item_failure(guard, v, allowed) for v in guard.one_of):
                    return "none of the one_of values meets its other rules"
        except budget.OverBudget:  # round 20: 50 values at 0.1 s each held every pass
            return (
                f"its one_of values could not be checked against matches within "
                f"{budget.BUDGET:g} s (the pattern backtracks, or too many values)"
            )
    return None


#: Why a guard fails closed over a value the redaction of secrets changed (round 45).
HELD_SECRET = (
    "held a secret's text (the value as recorded is not the value the tool would get), so "
    "the guard cannot judge it and fails closed"
)

HELD_SECRET_REMEDY = (
    "the value held a secret's text (or outside data wrapping its characters), so the guard "
    "could not judge the value the tool would get and the tool was not called; pass secrets "
    "only where no guard reads them, and have the outside data checked for what it holds"
)


def check(
    action: Action | FallbackStep, params: dict[str, Any], real: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Each guard of ``action`` over the resolved ``params``: the checks made (for the journal
    and the log), or :class:`GuardFailed` carrying them when one fails."""
    rules = getattr(action, "guards", None) or ()
    return check_values(rules, params, f"action {action.id}", real, action.params)


def check_values(
    rules: Sequence[Guard],
    params: dict[str, Any],
    who: str,
    real: dict[str, Any] | None = None,
    written: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """:func:`check` for any guarded call (``who``: ``action 2``, ``action 2 precondition 1``).
    All its guards share one time budget (:mod:`controller.plan.budget`): past it the call
    fails closed (round 20: a list of 90 values each matched just under the timeout).

    ``params`` are the values as recorded (secrets masked, round 43: a guard must not test a
    secret); ``real``, the values the tool gets. Where they differ for a guarded param (the
    redaction changed it: a secret's text, or outside data wrapping its characters), the
    guard fails closed (round 45: it held for ``***@customer.example`` while the tool got an
    attacker's address around the secret's characters). Not where the plan writes the param
    as exactly one secret (``written``, the params as in the plan: ``s: "$<secrets.TOK>"``):
    the value is then knowingly that secret and nothing else, and the guard reads its masked
    value as in round 43. Neither the message nor the check quotes the real value."""
    checks: list[dict[str, Any]] = []
    with budget.spending():
        for guard in rules:
            value = params.get(guard.param)
            changed = (
                real is not None
                and real.get(guard.param) != value
                and not _one_secret((written or {}).get(guard.param))
            )
            try:
                failure = HELD_SECRET if changed else _failure(guard, value)
            except budget.OverBudget:
                failure = (
                    f"could not be checked within {budget.BUDGET:g} s (all the guards of the "
                    "call together: a pattern that backtracks, or too many values)"
                )
            _checked(checks, guard, value, failure, who, changed)
    return checks


def _one_secret(written: Any) -> bool:
    """Whether a param as written in the plan is exactly one ``$<secrets.NAME>``."""
    if not isinstance(written, str):
        return False
    try:
        ref = refs.whole_ref(refs.parse(written))
    except PlangateError:
        return False
    return ref is not None and ref.root == "secrets"


def _checked(
    checks: list[dict[str, Any]],
    guard: Guard,
    value: Any,
    failure: str | None,
    who: str,
    held_secret: bool = False,
) -> None:
    """Record one guard's check; raise :class:`GuardFailed` with every check when it failed."""
    entry: dict[str, Any] = {"param": guard.param, "rule": describe(guard), "ok": failure is None}
    if held_secret:
        entry["held_secret"] = True
    checks.append(entry)
    if failure is not None:
        error = GuardFailed(
            f"{who}: param {guard.param!r} = {_short(value)} {failure} (guard: {describe(guard)})",
            path=f"params.{guard.param}",
            remedy=HELD_SECRET_REMEDY if held_secret else None,
        )
        error.checks = checks
        raise error


def _failure(guard: Guard, value: Any) -> str | None:
    values = value if isinstance(value, list) else [value]
    if not values:
        return "is an empty list"
    allowed = _allowed(guard)
    for item in values:
        why = _item_failure(guard, item, allowed)
        if why is not None:
            return why if item is value else f"has an element {_short(item)} that {why}"
    return None


def _item_failure(guard: Guard, item: Any, allowed: frozenset[str] | None) -> str | None:
    if guard.matches is not None:
        if not isinstance(item, str):
            return "is not a string"
        timeout = min(MATCH_TIMEOUT, budget.left(MATCH_TIMEOUT))
        try:
            if _compiled(guard.matches).fullmatch(item, timeout=timeout) is None:
                return "does not match"
        except TimeoutError:
            budget.left()  # over the call's budget: the caller says so
            return f"could not be matched within {MATCH_TIMEOUT:g} s (the pattern backtracks)"
    if allowed is not None and _key(item) not in allowed:
        return "is not one of the allowed values"
    if guard.min is not None or guard.max is not None:
        if isinstance(item, bool) or not isinstance(item, int | float):
            return "is not a number"
        if guard.min is not None and item < guard.min:
            return f"is below {guard.min:g}"
        if guard.max is not None and item > guard.max:
            return f"is above {guard.max:g}"
    return None


def _key(value: Any) -> str:
    """A value as JSON equality sees it, hashable (:func:`controller.plan.jsonvalues.key`:
    1 and 1.0 alike at every depth, true not 1, "1" not 1); a ``one_of`` is a set of these
    (2,500 values against 10,000 allowed ones compared pair by pair took seconds, round 20)."""
    return jsonvalues.key(value)


def _allowed(guard: Guard) -> frozenset[str] | None:
    """A guard's ``one_of`` as a set of :func:`_key` (None: no ``one_of``)."""
    return None if guard.one_of is None else frozenset(map(_key, guard.one_of))


def describe(guard: Guard) -> str:
    parts = []
    if guard.matches is not None:
        parts.append(f"matches {json.dumps(guard.matches)}")
    if guard.one_of is not None:
        parts.append(f"one of {json.dumps(guard.one_of, ensure_ascii=False)}")
    if guard.min is not None:
        parts.append(f"min {guard.min:g}")
    if guard.max is not None:
        parts.append(f"max {guard.max:g}")
    return ", ".join(parts)


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"
