"""Whether a plan's JSONPath query (an output's ``path:``, an ``expect:`` clause) is RFC 9535.

Plans mostly write plain queries such as ``$.id``, ``$.items[0].name`` or ``$['a b']``. Those
are recognised here by a strict subset of the RFC's grammar, so ``plangate validate`` does not
import the JSONPath library (tens of milliseconds of start-up) for them; anything else, valid
or not, goes to the library, whose message is the error the author sees.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
from collections.abc import Iterator
from typing import Any

from controller.errors import LimitExceeded, ToolOutputInvalid
from controller.plan import budget, jsonvalues, regexes

# $ then any number of: .name / ..name / .* / ..* / [index] / [*] / ['name'] / ["name"], where
# name is ASCII letters, digits and _ not starting with a digit; an index is an integer of at
# most 15 digits (inside I-JSON's range); a quoted name holds no quote, backslash, control
# character or surrogate. Every string this matches is an RFC 9535 query (tests check it
# against the library); no blank space, functions or filters.
_PLAIN = re.compile(
    r"""\$(?:
        \.\.?(?:\*|[A-Za-z_][A-Za-z0-9_]*)
      | \[(?:\*|0|-?[1-9][0-9]{0,14})\]
      | \['[^'\\\x00-\x1f\ud800-\udfff]*'\]
      | \["[^"\\\x00-\x1f\ud800-\udfff]*"\]
    )*""",
    re.VERBOSE,
)

#: Ids of the values (in the tree a query runs over) that a filter must not judge: the
#: recorded result's values the redaction of secrets changed (round 45). None: all may be.
_UNJUDGED: contextvars.ContextVar[frozenset[int] | None] = contextvars.ContextVar(
    "jsonpath_unjudged", default=None
)
#: Whether the filter expression being evaluated read such a value (one cell per filter).
_READ_CHANGED: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar(
    "jsonpath_read_changed", default=None
)


class MaskedAlike(dict[str, Any]):
    """A mapping of a result as recorded whose keys read the same once secrets are masked
    (:meth:`controller.execution.secrets.Redactor.view`, round 46): ``masked`` holds the
    placeholders its masked keys got. A query reads such a mapping only by the names of
    its other keys: a wildcard, a descendant segment or a filter that reaches a member under
    a placeholder, or a name selector naming one, fails the query closed
    (:class:`MaskedKeysAlike`): which key got which placeholder is the order of the tool's
    keys, and which member such a key holds is a question about the secret."""

    masked: frozenset[str] = frozenset()


class MaskedKeysAlike(ToolOutputInvalid):
    remedy = (
        "select the members of that mapping by the names the tool gives them, or have the "
        "tool return keys that hold no secret"
    )


def is_plain_query(path: str) -> bool:
    """Whether ``path`` is in the plain subset (certainly valid, no library needed)."""
    return _PLAIN.fullmatch(path) is not None


#: String literals of a query (in filters and bracketed names): their text is no syntax.
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
#: Descendant segments (``..``) a query may hold: each one multiplies the nodes to visit, so
#: ``$..*..*..*`` over a 7 KB result took minutes inside the controller (round 13).
MAX_DESCENDANTS = 1


#: Seconds of regular-expression matching (``match()``, ``search()``) one evaluation of a
#: query may spend over a tool's result, all its filter calls together: a pattern that
#: backtracks (``(a|aa)+``) must not hold the pass (round 13).
REGEX_BUDGET = 0.5


#: Nodes the queries over one tool result may select or pass through (and candidates their
#: filters test), their filters' queries included: ``[*,*]`` repeated keeps every duplicate
#: (RFC 9535), so fifteen such steps over a 450-byte result made 2^15 copies, nineteen half a
#: gigabyte (round 37). One budget covers every query evaluated over one result for one
#: purpose (:func:`sharing`: all the outputs of one action's result, all the ``expect``
#: clauses of one check or verify poll), not each query alone: sixteen outputs each just
#: under the budget over one 40 KB result ran in full (round 38). A result (at most
#: ``limits.max_result_bytes``) that needs more is not one a plan needs.
MAX_NODES = 250_000

#: The nodes the evaluation running in this context may still make (None: no evaluation).
_NODES_LEFT: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "jsonpath_nodes_left", default=None
)


class QueryTooCostly(LimitExceeded):
    remedy = (
        "a match() or search() pattern in the query backtracks over this result: write it "
        "without nested or overlapping repetition (docs/plan-format.md, Outputs)"
    )


def query_problem(path: str) -> str | None:
    """Why ``path`` is not an RFC 9535 query (the library's message), or None if it is one.

    Queries whose cost has no bound are refused too: more than one descendant segment, and a
    query from the root (``$``) inside a filter that selects more than one node (run once per
    candidate, it makes the query quadratic in the result)."""
    if _QUOTED.sub("", path).count("..") > MAX_DESCENDANTS:
        return (
            f"at most {MAX_DESCENDANTS} descendant segment (..) per query: each one multiplies "
            "the nodes to visit; name the levels you mean"
        )
    if is_plain_query(path):
        return None
    try:
        query = _environment().compile(path)
    except Exception as exc:
        return str(exc)
    if (wide := _wide_root_query(query)) is not None:
        return (
            f"the filter's query {wide} selects many nodes and runs once per candidate: a "
            "query from $ inside a filter must name one node (no *, .., slices or filters)"
        )
    return None


@functools.lru_cache(maxsize=1024)
def compiled(path: str) -> Any:
    """The compiled query whose ``match()``/``search()`` share :data:`REGEX_BUDGET`; refuses
    what :func:`query_problem` refuses (a plan frozen before a rule came still runs safely)."""
    problem = query_problem(path)
    if problem is not None:
        raise QueryTooCostly(f"query {path}: {problem}")
    return _environment().compile(path)


def named_keys(path: str) -> tuple[frozenset[str], bool]:
    """The member names a query's name selectors name, as the engine parses them (an escape
    decoded, a bracketed name with a blank whole: round 63), and whether what the query
    selects may sit under ANY key (:func:`_under_any_key`, one rule per segment kind).
    Raises what :func:`compiled` raises."""
    from jsonpath_rfc9535.selectors import NameSelector

    names: set[str] = set()
    anywhere = False
    for segment in compiled(path).segments:
        names.update(s.name for s in segment.selectors if isinstance(s, NameSelector))
        anywhere = _under_any_key(segment, anywhere)
    return frozenset(names), anywhere


def _under_any_key(segment: Any, before: bool) -> bool:
    """Whether the members ``segment`` selects may sit under any key, ``before`` saying so
    of what the segments before it selected. What each kind contributes:

    - names only (``.a``, ``['a','b']``, ``..a``): no; its members sit under those names,
      a descendant's too (``$..standby`` names ``standby``: round 63's ``hon-desc``);
    - a wildcard or a filter, child or descendant: yes, members under any key;
    - an index or a slice in a child segment (``[0]``, ``[0:1]``): as ``before``: items of
      the lists selected before, under the key that held those;
    - an index or a slice in a descendant segment (``..[0]``, ``..[0:1]``, ``$..[-1]``):
      yes, items of lists at any depth, under every key ``..`` passes through (round 64).

    So a ``..`` names every key it passes through unless a name narrows what it selects (its
    own or a later segment's); an index, slice or filter narrows nothing by name."""
    from jsonpath_rfc9535.segments import JSONPathRecursiveDescentSegment
    from jsonpath_rfc9535.selectors import FilterSelector, NameSelector, WildcardSelector

    chosen = segment.selectors
    if all(isinstance(s, NameSelector) for s in chosen):
        return False
    if any(isinstance(s, WildcardSelector | FilterSelector) for s in chosen):
        return True
    return before or isinstance(segment, JSONPathRecursiveDescentSegment)


@contextlib.contextmanager
def sharing() -> Iterator[None]:
    """Evaluate every query inside under one budget: :data:`MAX_NODES` nodes and
    :data:`REGEX_BUDGET` seconds of ``match()``/``search()`` in all (round 38: the budget was
    per query, and a result got as many queries as the plan declared). Nested uses share the
    outer budget, as :func:`controller.plan.budget.spending` does."""
    if _NODES_LEFT.get() is not None:
        yield
        return
    token = _NODES_LEFT.set([MAX_NODES])
    try:
        with budget.spending(REGEX_BUDGET):  # or the evaluation's it runs in (plan.budget)
            yield
    finally:
        _NODES_LEFT.reset(token)


def spent() -> bool:
    """Whether the running :func:`sharing` budget has no node left."""
    left = _NODES_LEFT.get()
    return left is not None and left[0] <= 0


def find(path: str, value: Any) -> tuple[list[Any], bool]:
    """The values ``path`` selects in ``value``, and whether the query is singular.

    Inside :func:`sharing` it spends the shared budget; alone, a budget of its own. Raises
    :class:`QueryTooCostly` when the budget (nodes or regular-expression time) is spent."""
    nodes, singular = locate(path, value)
    return [found for _, found in nodes], singular


def locate(
    path: str, value: Any, unjudged: frozenset[int] | None = None
) -> tuple[list[tuple[tuple[str | int, ...], Any]], bool]:
    """As :func:`find`, each value with its location (the keys and indexes leading to it).

    ``unjudged``: ids of values inside ``value`` no filter may judge (round 45: the parts of
    a recorded result that the redaction of secrets changed): a filter treats such a
    candidate as not matching, whatever its expression says, so what a query selects holds
    its filter for the tool's own value too (fails closed)."""
    query = compiled(path)
    shared = _NODES_LEFT.get() is not None
    token = _UNJUDGED.set(unjudged or None)
    try:
        with sharing():
            nodes = [(tuple(node.location), node.value) for node in query.finditer(value)]
            return nodes, query.singular_query()
    except (TimeoutError, budget.OverBudget):
        together = " (with the other queries over it)" if shared else ""
        raise QueryTooCostly(
            f"query {path}: its match()/search() took over {REGEX_BUDGET:g} s on this "
            f"result{together}"
        ) from None
    except MaskedKeysAlike as clash:
        raise MaskedKeysAlike(f"query {path}: {clash.message}") from None
    except _TooManyNodes:
        if shared:
            raise QueryTooCostly(
                f"query {path}: the queries over this result selected or passed through over "
                f"{MAX_NODES} nodes together (the query budget of one result is spent); "
                "declare fewer or narrower queries over it"
            ) from None
        raise QueryTooCostly(
            f"query {path}: it selects or passes through over {MAX_NODES} nodes of this "
            "result (a union that repeats a selector keeps every duplicate; .. visits every "
            "level); name the values you mean"
        ) from None
    finally:
        _UNJUDGED.reset(token)


class _TooManyNodes(Exception):
    """Raised inside the library's evaluation when its node budget is spent."""


def _spend() -> None:
    """One node (or filter candidate) of the running evaluation's budget."""
    left = _NODES_LEFT.get()
    if left is not None:
        left[0] -= 1
        if left[0] < 0:
            raise _TooManyNodes


def _counted(new_child: Any) -> Any:
    """``JSONPathNode.new_child`` that spends one node of the running evaluation's budget:
    every selector and descent makes its nodes through it."""

    def counted(self: Any, value: Any, key: Any, *args: Any, **kwargs: Any) -> Any:
        _spend()
        if isinstance(self.value, MaskedAlike) and key in self.value.masked:
            raise MaskedKeysAlike(
                "two keys of one mapping of the result read the same once secrets are "
                "masked, and the query reads a member under such a key (by a wildcard, a "
                "descendant segment, a filter or its placeholder): which member that is must "
                "not depend on a secret or on the order of the tool's keys; nothing of this "
                "result was used"
            )
        return new_child(self, value, key, *args, **kwargs)

    counted.counted = True  # type: ignore[attr-defined]
    return counted


def _counted_context(base: Any) -> Any:
    """A ``FilterContext`` (one per candidate a filter tests) that spends one node."""

    class Counted(base):
        __slots__ = ()
        counted = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            _spend()
            super().__init__(*args, **kwargs)

    return Counted


def _judging(evaluate: Any) -> Any:
    """``FilterExpression.evaluate`` (a filter's verdict on one candidate) that says no when
    the expression read a value in the running evaluation's :data:`_UNJUDGED` (round 45)."""

    def judged(self: Any, context: Any) -> bool:
        if _UNJUDGED.get() is None:
            return bool(evaluate(self, context))
        cell = [False]
        token = _READ_CHANGED.set(cell)
        try:
            verdict = bool(evaluate(self, context))
            return verdict and not cell[0]
        finally:
            _READ_CHANGED.reset(token)

    judged.judging = True  # type: ignore[attr-defined]
    return judged


def _reading(evaluate: Any) -> Any:
    """A filter query's ``evaluate`` (``@.a``, ``$.b`` inside a filter) that notes when what
    it read is a value in :data:`_UNJUDGED`: the filter's verdict is then void."""

    def read(self: Any, context: Any) -> object:
        found = evaluate(self, context)
        unjudged, cell = _UNJUDGED.get(), _READ_CHANGED.get()
        if unjudged is not None and cell is not None:
            values = (
                [getattr(n, "value", None) for n in found] if isinstance(found, list) else [found]
            )
            if any(id(v) in unjudged for v in values):
                cell[0] = True
        return found

    read.judging = True  # type: ignore[attr-defined]
    return read


def _json_comparison(nothing: object, node_list: Any) -> Any:
    """``ComparisonExpression.evaluate`` by :func:`controller.plan.jsonvalues.compare`: the
    library compares arrays and objects with Python's ``==`` (round 55: ``[true] == [1]``
    and ``{"a": false} == {"a": 0}`` held, and ``<=`` through them)."""

    def operand(found: Any) -> object:
        if not isinstance(found, node_list):
            return _ABSENT if found is nothing else found
        if len(found) == 1:
            return found[0].value
        return _ABSENT if len(found) == 0 else _MANY

    def evaluate(self: Any, context: Any) -> bool:
        left, right = operand(self.left.evaluate(context)), operand(self.right.evaluate(context))
        if left in _SPECIAL or right in _SPECIAL:
            # RFC 9535: an empty side equals only another empty side; `<` is false
            same = left is right is _ABSENT
            return {"==": same, "!=": not same, "<=": same, ">=": same}.get(self.operator, False)
        return jsonvalues.compare(left, self.operator, right)

    evaluate.json_compare = True  # type: ignore[attr-defined]
    return evaluate


#: A side of a comparison that is an empty nodelist or Nothing; one of several nodes (never
#: in a well-typed query: kept apart so that it equals nothing).
_ABSENT, _MANY = object(), object()
_SPECIAL = (_ABSENT, _MANY)


# --- the library, with bounded regular expressions ---------------------------------------


@functools.cache
def _environment() -> Any:
    """A JSONPath environment whose ``match()`` and ``search()`` stop at the budget: the
    library's own functions call ``regex`` without a timeout."""
    import regex
    from jsonpath_rfc9535 import JSONPathEnvironment, selectors
    from jsonpath_rfc9535.filter_expressions import (
        NOTHING,
        ComparisonExpression,
        FilterExpression,
        RelativeFilterQuery,
        RootFilterQuery,
    )
    from jsonpath_rfc9535.function_extensions import Match, Search
    from jsonpath_rfc9535.node import JSONPathNode, JSONPathNodeList

    if not getattr(JSONPathNode.new_child, "counted", False):  # every node is counted
        JSONPathNode.new_child = _counted(JSONPathNode.new_child)  # type: ignore[method-assign]
    if not getattr(selectors.FilterContext, "counted", False):
        # and every candidate a filter tests, selected or not (round 38: a filter over six
        # copies of a 20,000-element list tests 120,000 candidates and selects none)
        selectors.FilterContext = _counted_context(selectors.FilterContext)  # type: ignore[misc]
    if not getattr(FilterExpression.evaluate, "judging", False):
        FilterExpression.evaluate = _judging(FilterExpression.evaluate)  # type: ignore[method-assign]
        for reader in (RelativeFilterQuery, RootFilterQuery):
            reader.evaluate = _reading(reader.evaluate)  # type: ignore[method-assign]
    if not getattr(ComparisonExpression.evaluate, "json_compare", False):
        # one JSON equality and ordering for filters and everything else (jsonvalues)
        ComparisonExpression.evaluate = _json_comparison(NOTHING, JSONPathNodeList)  # type: ignore[method-assign]

    def bounded(whole: bool) -> Any:
        # RFC 9485 through regexes.iregexp: ^ and $ are characters, match() is fullmatch
        def call(self: Any, string: object, pattern: object) -> bool:
            if not isinstance(pattern, str) or not isinstance(string, str):
                return False
            if not regexes.is_iregexp(pattern):
                return False
            left = budget.left(REGEX_BUDGET)
            try:
                compiled = regexes.iregexp(pattern)
                found = (compiled.fullmatch if whole else compiled.search)(string, timeout=left)
            except regex.error:
                return False
            return found is not None

        return call

    class BoundedMatch(Match):
        __call__ = bounded(whole=True)

    class BoundedSearch(Search):
        __call__ = bounded(whole=False)

    class Environment(JSONPathEnvironment):
        def setup_function_extensions(self) -> None:
            super().setup_function_extensions()
            self.function_extensions["match"] = BoundedMatch()
            self.function_extensions["search"] = BoundedSearch()

    return Environment()


def _wide_root_query(query: Any) -> str | None:
    """The first query from the root inside a filter of ``query`` that is not singular."""
    from jsonpath_rfc9535.filter_expressions import RootFilterQuery
    from jsonpath_rfc9535.query import JSONPathQuery

    stack: list[Any] = [query]
    while stack:
        item = stack.pop()
        if isinstance(item, RootFilterQuery) and not item.query.singular_query():
            return str(item.query)
        if isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, JSONPathQuery) or hasattr(type(item), "__slots__"):
            for cls in type(item).__mro__:
                for name in getattr(cls, "__slots__", ()):
                    if name not in ("env", "token", "parent", "root"):
                        stack.append(getattr(item, name, None))
    return None
