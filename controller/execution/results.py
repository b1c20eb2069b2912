"""What a tool returned, taken in and apart: the canonical value check, outputs by RFC 9535
JSONPath, params checks.

Intake (:func:`take_result`) is the one door a tool's result passes before the run uses,
journals, redacts or records it, whatever its kind (exec, http, python, echo, a nested plan's
result, a precondition's or verify's check tool, the result a failing tool leaves behind). A
result enters only as a value of the canonical value tree the plan's hash uses (SPEC §15,
:mod:`controller.plan.yamlio`): I-JSON (RFC 7493) data, floats with an integral value within
±(2^53−1) as the integer RFC 8785 hashes. Python's JSON parser also accepts ``NaN``,
``Infinity``, ``1e400``, integers of any size and lone surrogate escapes; such a result is
E_TOOL_OUTPUT_INVALID (and ``on_failure`` applies), never a value the journal, the
``execution:`` block or a later tool would choke on or that ``plangate validate`` refuses.

Shared by the steps of a run (:mod:`controller.execution.steps`) and anything that tests a
tool's result the same way.
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any

from controller.errors import LimitExceeded, OutputMissing, ParamsInvalid, ToolOutputInvalid
from controller.plan import jsonpaths, plans, refs
from controller.plan.jsonvalues import scalar_size, text_size
from controller.plan.yamlio import MAX_SAFE_INT, canonical_number

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.execution.tools import Tool
    from controller.plan.schema import Output

#: A deeper tool result is refused: recording and redacting it would overflow the stack.
MAX_RESULT_DEPTH = 100
#: A UTF-16 surrogate code point: in a Python string always a lone one (not I-JSON, not UTF-8).
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Longest location an error names (a hostile result may have very long keys).
_MAX_WHERE = 200


class _Refused(Exception):
    """A value outside the canonical tree: where (path parts) and what it is."""

    def __init__(self, where: tuple[str | int, ...], what: str) -> None:
        super().__init__(what)
        self.where = where
        self.what = what


def take_result(tool: str, result: Any) -> Any:
    """``result`` as a canonical value (a new tree); E_TOOL_OUTPUT_INVALID naming the first
    value outside it, by its JSONPath in the result."""
    try:
        return _canonical(result, ())
    except _Refused as bad:
        where = result_path(bad.where)
        raise ToolOutputInvalid(
            f"{tool}: its result at {where} is {bad.what}, which JSON data (I-JSON, RFC 7493) "
            "cannot carry; nothing of this result was used"
        ) from None


def result_path(parts: tuple[str | int, ...]) -> str:
    """An RFC 9535 path (``$["json"]["v"][0]``), shortened for a message."""
    text = "$" + "".join(
        f"[{part}]" if isinstance(part, int) else f"[{json.dumps(part, ensure_ascii=False)}]"
        for part in parts
    )
    return text if len(text) <= _MAX_WHERE else text[:_MAX_WHERE] + "\u2026"


def _canonical(value: Any, where: tuple[str | int, ...]) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _text(value, where)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INT:
            raise _Refused(where, f"an integer beyond ±(2^53−1) ({len(str(abs(value)))} digits)")
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Refused(where, f"{json.dumps(value)}, not a finite number")
        return canonical_number(value)
    if isinstance(value, dict | list) and len(where) >= MAX_RESULT_DEPTH:
        raise _Refused(where, f"nested deeper than {MAX_RESULT_DEPTH} levels")
    if isinstance(value, list):
        return [_canonical(item, (*where, index)) for index, item in enumerate(value)]
    if isinstance(value, dict):
        return {_key(key, where): _canonical(item, (*where, key)) for key, item in value.items()}
    raise _Refused(where, f"a {type(value).__name__}, not JSON data")


def _text(value: str, where: tuple[str | int, ...], what: str = "a string") -> str:
    found = _SURROGATE.search(value)
    if found is not None:
        raise _Refused(where, f"{what} with a lone surrogate U+{ord(found.group()):04X}")
    return value


def _key(key: Any, where: tuple[str | int, ...]) -> str:
    if not isinstance(key, str):
        raise _Refused(where, f"a mapping with the key {key!r}, not a string")
    return _text(key, where, "a mapping whose key is a string")


def check_params(tool: Tool, params: dict[str, Any]) -> None:
    """``params_schema`` again, on the resolved values (E_PARAMS_INVALID)."""
    schema = tool.spec.params_schema
    if schema is None:
        return
    errors = list(plans.params_errors(params, schema))
    if errors:
        where, message = errors[0]
        at = refs.format_path(("params", *where))
        raise ParamsInvalid(f"{message} (at {at}; params_schema of tool {tool.name!r})")


#: Characters of JSON one action's outputs may hold by default (``limits.max_params_bytes``:
#: what outputs hold is what later params are made of).
OUTPUTS_LIMIT = 1_048_576


def extract_outputs(
    outputs: list[Output],
    result: Any,
    limit: int = OUTPUTS_LIMIT,
    redact: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """Each declared output from the result: singular query -> value, otherwise a list.

    With ``redact`` (the run's :meth:`Redactor.view`), the queries run over the result *as it
    is recorded* (round 43): which nodes a query selects (its filters: ``match()``,
    ``search()``, comparisons, ``length()``) depends on nothing a secret's value decides, so
    the outputs that exist and the plain values they hold cannot spell a secret out. Each
    selected node's value is then the tool's own value at the same place (the later params
    get what the tool returned; it is recorded redacted like everything else): the recorded
    result keeps every list's length and every mapping's members in order (round 46: keys
    that read alike once masked are kept apart, never merged), so every place maps. A
    mapping whose keys read alike is read by the names of its other keys only: a query
    reaching a member under a masked key otherwise is ``E_TOOL_OUTPUT_INVALID``
    (:class:`controller.plan.jsonpaths.MaskedAlike`). A filter never selects an element the
    redaction changed (round 45: over the
    recorded ``***@customer.example`` it held, and the tool got an attacker's address
    wrapped around the secret's characters): such an element does not match, whatever the
    filter says (fails closed; :func:`changed_by_redaction`).

    The outputs together may hold at most ``limit`` characters of JSON: a query that selects
    the same values many times (``..*`` over a deeply nested result returns each level with
    everything under it; round 37: 11 MB of journal from a 60 KB result) is refused
    ``E_LIMIT_EXCEEDED`` before anything is recorded. Their queries share one budget
    (:func:`controller.plan.jsonpaths.sharing`: nodes and regular-expression time): past it,
    ``E_LIMIT_EXCEEDED`` too (round 38: sixteen outputs each just under the budget of one
    query over one 40 KB result ran in full)."""
    captured: dict[str, Any] = {}
    shown: dict[str, Any] = {}
    seen = result if redact is None else redact(result)
    places = _Places(result, seen)
    filtered = any("?" in output.path for output in outputs)  # only filters judge values
    unjudged = changed_by_redaction(seen, result) if filtered and seen is not result else None
    with jsonpaths.sharing():
        for output in outputs:
            nodes, singular = jsonpaths.locate(output.path, seen, unjudged)
            if nodes:
                values = [places.raw(where, value) for where, value in nodes]
                captured[output.name] = values[0] if singular else values
                shown[output.name] = nodes[0][1] if singular else [v for _, v in nodes]
            elif not output.optional:
                raise OutputMissing(
                    f"output {output.name!r}: {output.path} matched nothing in the result"
                )
    # counted as recorded: whether the limit is passed must not depend on a secret either
    if _json_chars_over(shown, limit):
        raise LimitExceeded(
            f"the outputs would hold over {limit} characters of JSON (limits.max_params_bytes):"
            " a query selects the same values many times (.. over nested levels, a union "
            "repeating a selector); select the values you mean"
        )
    return captured


def changed_by_redaction(seen: Any, raw: Any) -> frozenset[int]:
    """Ids of the values of ``seen`` (a result as recorded) that differ from the same place of
    ``raw`` (the tool's own): a string the redaction changed, and every list or mapping
    holding one (or whose keys it changed). Only ids of ``seen``'s own values, which live as
    long as it does; a value whose place in ``raw`` cannot be told counts as changed."""
    found: set[int] = set()
    # iterative (a deep result must not overflow the stack); each value with its parent's
    # index in ``order``, which lists parents before their children
    order: list[tuple[Any, int]] = []
    stack: list[tuple[Any, Any, int]] = [(seen, raw, -1)]
    while stack:
        shown, real, parent = stack.pop()
        order.append((shown, parent))
        here = len(order) - 1
        if isinstance(shown, list) and isinstance(real, list) and len(shown) == len(real):
            stack.extend((a, b, here) for a, b in zip(shown, real, strict=True))
        elif isinstance(shown, dict) and isinstance(real, dict) and list(shown) == list(real):
            stack.extend((a, b, here) for a, b in zip(shown.values(), real.values(), strict=True))
        elif isinstance(shown, list | dict) or shown != real:
            found.add(id(shown))
    for shown, parent in reversed(order):  # children before their parents
        if parent >= 0 and id(shown) in found:
            found.add(id(order[parent][0]))
    return frozenset(found)


class _Places:
    """Maps a place in the recorded (redacted) result to the same place in the tool's own:
    redaction keeps every list's length and every mapping's members in order, changing only
    keys (never merging two: round 46), so a mapping's member maps by its position. A place
    that does not map (a list the redaction replaced whole) keeps the recorded value."""

    def __init__(self, raw: Any, seen: Any) -> None:
        self._raw = raw
        self._seen = seen
        self._index: dict[int, tuple[dict[str, int], list[Any]]] = {}

    def raw(self, where: tuple[str | int, ...], shown: Any) -> Any:
        """The tool's value at ``where``; ``shown`` (as recorded) when it has no such place."""
        if self._raw is self._seen:
            return shown
        raw, seen = self._raw, self._seen
        for part in where:
            if isinstance(seen, list) and isinstance(raw, list) and len(seen) == len(raw):
                if not isinstance(part, int):
                    return shown
                raw, seen = raw[part], seen[part]
            elif isinstance(seen, dict) and isinstance(raw, dict) and len(seen) == len(raw):
                if not isinstance(part, str) or part not in seen:
                    return shown
                known = self._index.get(id(seen))
                if known is None:
                    index = {key: n for n, key in enumerate(seen)}
                    known = self._index[id(seen)] = (index, list(raw.values()))
                raw, seen = known[1][known[0][part]], seen[part]
            else:
                return shown
        return raw


def _json_chars_over(value: Any, limit: int) -> bool:
    """Whether ``value``'s JSON text is longer than ``limit`` characters (escapes counted as
    written, :func:`jsonvalues.text_size`), counted without writing it and given up as soon
    as it is (values shared many times count each time)."""
    left = limit
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            left -= 2 + 2 * len(item)
            for key, inner in item.items():
                left -= text_size(str(key)) + 1
                stack.append(inner)
        elif isinstance(item, list):
            left -= 2 + len(item)
            stack.extend(item)
        else:
            left -= scalar_size(item)
        if left < 0:
            return True
    return False
