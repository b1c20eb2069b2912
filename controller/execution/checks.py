"""Checks: ``preconditions`` before a tool runs, ``verify`` after it (SPEC §12).

A check is an ``expect`` clause (an RFC 9535 query and one comparison, or a list of them that
must all hold) over a JSON value: the result of a check tool, or for a ``verify`` without a
tool, the action's own result. Check tools are idempotent (validation refuses others,
E_CHECK_TOOL), so calling one again after a crash or on every poll is safe.

Comparisons are JSON comparisons: ``true`` never equals ``1``; ``matches`` is an I-Regexp
(RFC 9485, checked at validation) matched against the whole string, with a time limit, so a
hostile pattern or value cannot hang the engine. A query that matches nothing fails every
comparison.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.errors import (
    GuardFailed,
    LimitExceeded,
    PlangateError,
    PreconditionFailed,
    VerifyFailed,
)
from controller.plan import budget, jsonpaths, jsonvalues, regexes
from controller.plan.jsonpaths import QueryTooCostly
from controller.plan.profile import VERIFY_INTERVAL

if TYPE_CHECKING:
    from controller.plan.schema import Expect, ExpectClause, Precondition, Verify

#: Longest a single ``matches`` may take, in seconds.
MATCH_TIMEOUT = 1.0
#: Poll interval of a verify tool when the plan gives none (the estimate counts polls by it).
DEFAULT_INTERVAL = VERIFY_INTERVAL
_MISSING = object()


@dataclass
class CheckOutcome:
    """What one check found; journaled as a ``check`` record and shown in the log."""

    kind: str  # "precondition" | "verify"
    index: int
    tool: str | None
    ok: bool
    result: Any = None
    failures: list[str] = field(default_factory=list)
    error: PlangateError | None = None
    polls: int = 1
    #: The run's caps stopped the polling (its time was spent before the verify held).
    capped: bool = False
    #: The author's text the failures quote (each clause's path and expected value, as
    #: :func:`authored_parts` spells them): recorded as written (round 65).
    quotes: tuple[str, ...] = ()

    def record(self, key: Any, attempt: int) -> dict[str, Any]:
        err = (
            None if self.error is None else {"code": self.error.code, "message": self.error.message}
        )
        return {
            "t": "check",
            "id": key,
            "attempt": attempt,
            "kind": self.kind,
            "index": self.index,
            "tool": self.tool,
            "ok": self.ok,
            "polls": self.polls,
            "result": self.result,
            "failures": self.failures,
            "error": err,
        }

    def as_error(self, where: str) -> PlangateError:
        what = "; ".join(self.failures) if self.failures else ""
        quotes = self.quotes if self.error is None else ()  # a tool's error is its own
        if isinstance(self.error, GuardFailed):
            what = f"{self.error.code}: {self.error.message} (the check tool was not called)"
        elif self.error is not None:
            what = f"the check tool failed: {self.error.code}: {self.error.message}"
        if self.kind == "precondition":
            return PreconditionFailed(
                f"{where} precondition {self.index + 1} does not hold: {what}", quotes=quotes
            )
        polled = f" after {self.polls} polls" if self.polls > 1 else ""
        return VerifyFailed(f"{where} verify does not hold{polled}: {what}", quotes=quotes)


#: Calls a check tool: (tool name, params, index) -> result, raising PlangateError.
#: Calls a check tool: (tool, params resolved, index, params as written: the provenance of
#: each part, so an exec tool refuses a secret a reference brought into its argv).
CallCheck = Callable[[str, dict[str, Any], int, dict[str, Any]], Any]
#: Resolves a check's params (references) before the call.
Resolve = Callable[[dict[str, Any]], dict[str, Any]]


def precondition(index: int, pre: Precondition, resolve: Resolve, call: CallCheck) -> CheckOutcome:
    """Call the check tool once and test its result. What ``resolve`` raises (a reference
    that cannot resolve, a guard that fails: E_GUARD_FAILED) is raised: the check never ran."""
    params = resolve(pre.params)
    try:
        result = call(pre.tool, params, index, pre.params)
    except LimitExceeded:
        raise  # a cap ends the step and the run: not a precondition that does not hold
    except PlangateError as error:
        return CheckOutcome("precondition", index, pre.tool, False, error=error)
    failures = evaluate(pre.expect, result)
    found = CheckOutcome("precondition", index, pre.tool, not failures, result, failures)
    return _quoting(found, pre.expect)


def verify_result(spec: Verify, result: Any) -> CheckOutcome:
    """A verify without a tool: expect over the action's own result."""
    failures = evaluate(spec.expect, result)
    return _quoting(CheckOutcome("verify", 0, None, not failures, None, failures), spec.expect)


def verify_poll(
    spec: Verify,
    resolve: Resolve,
    call: CallCheck,
    interrupted: Callable[[], bool],
    time_left: Callable[[], float | None] = lambda: None,
) -> CheckOutcome | None:
    """Poll the verify tool every ``interval`` until it holds or ``timeout`` passes.

    ``time_left`` is what the run's caps leave (None: no cap): when the next poll would
    come after it, and before ``timeout``, the polling waits for the cap and stops there
    with ``capped`` set (round 55: it kept its own timeout past ``max_runtime``). None when
    ``interrupted`` (an abort or stop) cut the polling short.
    """
    assert spec.tool is not None
    deadline = time.monotonic() + (spec.timeout or 0.0)
    interval = spec.interval or DEFAULT_INTERVAL
    polls = 0
    while True:
        polls += 1
        try:
            result = call(spec.tool, resolve(spec.params), 0, spec.params)
            failures = evaluate(spec.expect, result)
            error: PlangateError | None = None
        except PlangateError as exc:
            result, failures, error = None, [], exc
        if error is None and not failures:
            return CheckOutcome("verify", 0, spec.tool, True, result, [], polls=polls)
        if error is not None and error.permanent:
            break
        left, now = time_left(), time.monotonic()
        if left is not None and left < interval and now + left < deadline:
            if not _sleep(left, interrupted):
                return None
            found = CheckOutcome("verify", 0, spec.tool, False, result, failures, error, polls)
            found.capped = True
            return _quoting(found, spec.expect)
        if now + interval > deadline:
            break
        if not _sleep(interval, interrupted):
            return None
    found = CheckOutcome("verify", 0, spec.tool, False, result, failures, error, polls)
    return _quoting(found, spec.expect)


def _quoting(found: CheckOutcome, clause: ExpectClause) -> CheckOutcome:
    found.quotes = authored_parts(clause)
    return found


def authored_parts(clause: ExpectClause) -> tuple[str, ...]:
    """What of a failure's text (:func:`evaluate`) is the plan author's: each clause's path
    and expected value as the message spells them. The record keeps them as written and
    redacts the rest, the result as the check read it (round 65: the whole message through
    the redactor, an ``equals`` equal to a secret came back ``***`` for a right guess only)."""
    items = clause if isinstance(clause, list) else [clause]
    return tuple(part for item in items for part in (item.path, _short(item.operator[1])))


def _sleep(seconds: float, interrupted: Callable[[], bool]) -> bool:
    """Sleep, checking ``interrupted`` every 50 ms; False when it said so."""
    end = time.monotonic() + seconds
    while True:
        if interrupted():
            return False
        left = end - time.monotonic()
        if left <= 0:
            return True
        time.sleep(min(left, 0.05))


# --- expect -----------------------------------------------------------------------------


def evaluate(clause: ExpectClause, value: Any) -> list[str]:
    """The clauses that do not hold, described for a reader (empty: all hold)."""
    items = clause if isinstance(clause, list) else [clause]
    failures = []
    # all the clauses together: one time budget (round 20: 60 slow matches) and one query
    # budget (round 38: 16 clauses each just under the nodes one query may make)
    with budget.spending(), jsonpaths.sharing():
        for number, item in enumerate(items):
            try:
                failure = _failure(item, value)
            except budget.OverBudget:
                failure = (
                    f"{item.path} could not be checked: the clauses took over "
                    f"{budget.BUDGET:g} s together (a pattern that backtracks)"
                )
            if failure is not None:
                failures.append(failure)
            if jsonpaths.spent() and number + 1 < len(items):
                failures.append(
                    f"{len(items) - number - 1} more clauses not checked: the clauses' queries "
                    f"spent the query budget of this result ({jsonpaths.MAX_NODES} nodes "
                    "together)"
                )
                break
    return failures


def _failure(item: Expect, value: Any) -> str | None:
    try:
        nodes, singular = jsonpaths.find(item.path, value)
    except (QueryTooCostly, jsonpaths.MaskedKeysAlike) as exc:
        return f"{item.path} could not be evaluated: {exc}"
    if not nodes:
        actual: Any = _MISSING
    else:
        actual = nodes[0] if singular else nodes
    name, expected = item.operator
    shown = "nothing" if actual is _MISSING else _short(actual)
    wanted = f"{name} {_short(expected)}"
    if actual is _MISSING:
        return f"{item.path} matched nothing (expected {wanted})"
    if not holds(name, actual, expected):
        return f"{item.path} is {shown} (expected {wanted})"
    return None


def holds(name: str, actual: Any, expected: Any) -> bool:
    if name == "equals":
        return same(actual, expected)
    if name == "not_equals":
        return not same(actual, expected)
    if name == "in":
        return any(same(actual, option) for option in expected)
    return isinstance(actual, str) and _matches(expected, actual)


def same(a: Any, b: Any) -> bool:
    """JSON equality (:func:`controller.plan.jsonvalues.equal`): booleans are not numbers at
    any depth, 1 equals 1.0, objects compare by key."""
    return jsonvalues.equal(a, b)


def _matches(pattern: str, text: str) -> bool:
    import regex

    if not regexes.is_iregexp(pattern):  # refused at validation; fail closed here too
        return False
    timeout = min(MATCH_TIMEOUT, budget.left(MATCH_TIMEOUT))
    try:
        return regexes.iregexp(pattern).fullmatch(text, timeout=timeout) is not None
    except TimeoutError:
        budget.left()  # over the evaluation's budget: the caller says so
        return False
    except regex.error:
        return False


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."
