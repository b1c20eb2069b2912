"""References ``$<...>``: parse, validate against a plan, resolve at run time (SPEC §3).

Grammar::

    ref   := "$<" root path ">"
    root  := "actions[" INT "]" | "inputs" | "plan" | "approval" | "secrets"
    path  := ( "." NAME | "[" INT "]" | "['" KEY "']" | '["' KEY '"]' )*

``$$<`` writes a literal ``$<``. Resolution works on the parsed tree of params, never on
text, in a single pass: a resolved value is data and is never scanned again, so tool output
can fill a parameter but can never become a reference, an action or a tool. The legacy form
``${actions[N]...}`` (and ``${inputs...}``, ``${plan...}``, ``${approval...}``) is converted
to ``$<...>`` when a plan is frozen; one that opens a reference and cannot be carried whole
(``${inputs.to>x}``) is refused (:func:`legacy_uncarried`); any other ``${...}`` text is
left alone.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.display import INVISIBLE
from controller.errors import (
    ActionInDoubt,
    LimitExceeded,
    PlangateError,
    Problem,
    RefForward,
    RefInvalid,
    RefUnavailable,
    RefUnknown,
)
from controller.plan.hashing import canonical_order, key_order
from controller.plan.jsonvalues import scalar_size, text_size
from controller.plan.shape import REF_IN_TEXT

ROOTS = ("actions", "inputs", "plan", "approval", "secrets")
PLAN_FIELDS = ("name", "task", "hash")
APPROVAL_FIELDS = ("by", "at", "commit", "plan_hash")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_INT = re.compile(r"[0-9]+")  # ASCII only: \d would also take "١" or "３"
Segment = str | int


@dataclass(frozen=True)
class Ref:
    """One parsed reference: its root, the action id for ``actions[N]``, and the path after."""

    root: str
    path: tuple[Segment, ...]
    action: int | None = None
    text: str = ""


Part = str | Ref


def parse(text: str) -> list[Part]:
    """Split a string into literal text and references; raise :class:`RefInvalid`.

    Validation, flow analysis and resolution all parse the same strings: the parts of
    recent strings are kept (immutable :class:`Ref` objects and text)."""
    return list(_parse_cached(text))


@functools.lru_cache(maxsize=16384)
def _parse_cached(text: str) -> tuple[Part, ...]:
    return tuple(_parse(text))


def _parse(text: str) -> list[Part]:
    parts: list[Part] = []
    literal: list[str] = []
    i = 0
    while True:
        j = text.find("$", i)
        if j < 0:
            literal.append(text[i:])
            break
        literal.append(text[i:j])
        if text.startswith("$$<", j):
            literal.append("$<")
            i = j + 3
        elif text.startswith("$<", j):
            ref, i = _parse_ref(text, j)
            if "".join(literal):
                parts.append("".join(literal))
            literal = []
            parts.append(ref)
        else:
            literal.append("$")
            i = j + 1
    tail = "".join(literal)
    if tail or not parts:
        parts.append(tail)
    return parts


def _parse_ref(text: str, start: int) -> tuple[Ref, int]:
    i = start + 2
    m = _NAME.match(text, i)
    root = m.group(0) if m else ""
    if root not in ROOTS:
        raise _invalid(text, start, f"unknown root {root!r}; use one of {', '.join(ROOTS)}")
    i = m.end() if m else i
    action = None
    if root == "actions":
        m = re.compile(r"\[([0-9]+)\]").match(text, i)
        if not m:
            raise _invalid(text, start, "write actions[N] with N an action id")
        action, i = int(m.group(1)), m.end()
    path: list[Segment] = []
    while i < len(text) and text[i] != ">":
        segment, i = _parse_segment(text, i, start)
        path.append(segment)
    if i >= len(text):
        raise _invalid(text, start, "missing closing '>'")
    return Ref(root, tuple(path), action, text[start : i + 1]), i + 1


def _parse_segment(text: str, i: int, start: int) -> tuple[Segment, int]:
    if text[i] == ".":
        m = _NAME.match(text, i + 1)
        if not m:
            raise _invalid(text, start, f"expected a name after '.' at offset {i - start}")
        return m.group(0), m.end()
    if text.startswith("['", i) or text.startswith('["', i):
        quote = text[i + 1]
        end = text.find(quote + "]", i + 2)
        if end < 0:
            raise _invalid(text, start, "unterminated ['key']")
        return text[i + 2 : end], end + 2
    if text[i] == "[":
        m = _INT.match(text, i + 1)
        if not m or not text.startswith("]", m.end()):
            raise _invalid(text, start, "an index must be [N] with N >= 0")
        return int(m.group(0)), m.end() + 1
    raise _invalid(text, start, f"unexpected {text[i]!r}")


def _invalid(text: str, start: int, why: str) -> RefInvalid:
    end = text.find(">", start)
    shown = text[start : end + 1] if end >= 0 else text[start : start + 40]
    return RefInvalid(f"bad reference {shown!r}: {why}")


def whole_ref(parts: list[Part]) -> Ref | None:
    """The reference when a string is exactly one reference (its value keeps its type)."""
    return parts[0] if len(parts) == 1 and isinstance(parts[0], Ref) else None


_REF_TEXT = re.compile(REF_IN_TEXT)


def unresolved_problems(
    value: Any, where: tuple[Segment, ...], place: str, remedy: str, prefix: str = ""
) -> Iterator[Problem]:
    """E_REF_INVALID for reference text (``$<`` not written ``$$<``; a malformed one counts)
    in a value, or a key, that no reference is resolved in: the one rule of every such
    place. There the text is used as written, so a reviewer would read a reference the tool
    never gets resolved (round 18: mapping keys and ``expect`` values; round 116,
    unresolved-reference-text: a plan's static ``inputs`` and a guard's values, where the
    tool got, or the guard compared, the literal ``$<plan.name>``). ``place`` names the
    place in the message, ``remedy`` says what to write instead; ``prefix``: the path of
    ``where``'s owner, already written (``actions[0].guards[1]``)."""
    for at, text in _strings_and_keys(value, where):
        if _REF_TEXT.search(text) is not None:
            yield Problem(
                "E_REF_INVALID",
                f"{text!r}: references are never resolved in {place}: the text is used as "
                "written there, and a reviewer would read it as resolved",
                f"{prefix}.{format_path(at)}" if prefix else format_path(at),
                remedy=remedy,
            )


def _strings_and_keys(
    value: Any, path: tuple[Segment, ...]
) -> Iterator[tuple[tuple[Segment, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield (*path, key), key
            yield from _strings_and_keys(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings_and_keys(item, (*path, index))


def walk_strings(
    value: Any, path: tuple[Segment, ...] = ()
) -> Iterator[tuple[tuple[Segment, ...], str]]:
    """Every string in a JSON tree (mapping values and list items, not keys) with its path."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from walk_strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from walk_strings(item, (*path, index))


def format_path(parts: tuple[Segment, ...] | list[Segment]) -> str:
    """``actions[0].params.id`` from ``("actions", 0, "params", "id")`` (0-based indexes)."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _NAME.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out


# --- validation -------------------------------------------------------------------------


@dataclass
class PlanSymbols:
    """What references in a plan may name: action ids with their outputs, and the inputs."""

    outputs: dict[int, set[str]]
    inputs: dict[str, Any]
    #: action id -> the ids it may reference (its transitive ``needs``); None: earlier ids.
    visible: Mapping[int, Collection[int]] | None = None


def check_action_refs(
    action_id: int, params: Any, symbols: PlanSymbols, where: tuple[Segment, ...]
) -> list[Problem]:
    """Problems with the references in one action's params."""
    problems: list[Problem] = []
    for sub, text in walk_strings(params, where):
        try:
            for part in parse(text):
                if isinstance(part, Ref):
                    check_ref(part, action_id, symbols)
        except PlangateError as exc:
            problems.append(Problem(exc.code, exc.message, format_path(sub)))
    return problems


def check_ref(ref: Ref, current: int, symbols: PlanSymbols) -> None:
    """Raise if ``ref`` cannot be resolved for action ``current`` of this plan."""
    if ref.root == "actions":
        _check_action_ref(ref, current, symbols)
    elif ref.root == "inputs":
        if not ref.path or not isinstance(ref.path[0], str):
            raise RefInvalid(f"{ref.text}: write $<inputs.KEY>")
        if ref.path[0] not in symbols.inputs:
            raise RefUnknown(f"{ref.text}: no input named {ref.path[0]!r} in `inputs`")
        try:
            follow(symbols.inputs, ref.path)
        except LookupError as exc:
            raise RefUnknown(f"{ref.text}: {exc.args[0]}") from None
    elif ref.root in ("plan", "approval"):
        allowed = PLAN_FIELDS if ref.root == "plan" else APPROVAL_FIELDS
        if len(ref.path) != 1 or ref.path[0] not in allowed:
            raise RefUnknown(f"{ref.text}: use $<{ref.root}.X> with X one of {', '.join(allowed)}")
    elif len(ref.path) != 1 or not isinstance(ref.path[0], str):
        raise RefInvalid(f"{ref.text}: write $<secrets.NAME>")


def _check_action_ref(ref: Ref, current: int, symbols: PlanSymbols) -> None:
    n = ref.action
    assert n is not None
    if symbols.visible is not None and current in symbols.visible:
        if n not in symbols.visible[current] and n in symbols.outputs:
            raise RefForward(
                f"{ref.text}: action {current} cannot use action {n}: it is not among the "
                "actions it needs (directly or through them); add it to needs"
            )
    elif n >= current:
        where = f"action {current}" if current else "a plan precondition"
        raise RefForward(f"{ref.text}: {where} cannot use action {n}, which runs later")
    if n not in symbols.outputs:
        raise RefUnknown(f"{ref.text}: there is no action with id {n}")
    head = ref.path[:1]
    if head == ("result",):
        return
    if head != ("outputs",) or len(ref.path) < 2 or not isinstance(ref.path[1], str):
        raise RefInvalid(f"{ref.text}: continue with .outputs.NAME or .result")
    if ref.path[1] not in symbols.outputs[n]:
        declared = ", ".join(sorted(symbols.outputs[n])) or "none"
        raise RefUnknown(
            f"{ref.text}: action {n} declares no output {ref.path[1]!r} (declared: {declared})"
        )


def follow(value: Any, path: tuple[Segment, ...] | list[Segment]) -> Any:
    """Walk ``path`` into ``value``; raise LookupError saying where it stopped."""
    for step in path:
        if isinstance(step, int) and isinstance(value, list):
            if step >= len(value):
                raise LookupError(f"index [{step}] is out of range (length {len(value)})")
            value = value[step]
        elif isinstance(step, str) and isinstance(value, dict):
            if step not in value:
                raise LookupError(f"no key {step!r}")
            value = value[step]
        else:
            raise LookupError(f"cannot take {step!r} of a {type(value).__name__}")
    return value


# --- resolution -------------------------------------------------------------------------


@dataclass
class Context:
    """What references resolve against when an action is about to run."""

    inputs: Mapping[str, Any] = field(default_factory=dict)
    plan: Mapping[str, Any] = field(default_factory=dict)
    approval: Mapping[str, Any] = field(default_factory=dict)
    #: action id -> captured outputs (a missing key: an optional output that matched nothing)
    outputs: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    #: action id -> full tool result
    results: Mapping[int, Any] = field(default_factory=dict)
    secret: Callable[[str], str] | None = None
    #: secret values handed out, so that everything written can be redacted
    used_secrets: set[str] = field(default_factory=set)
    #: limits.max_params_bytes: every resolution against this context stops past it
    max_chars: int | None = None
    #: why a reference's value is not known (None: it is), e.g. an output only the committed
    #: record holds, masked or cut, after the journal was lost (round 45): E_ACTION_IN_DOUBT
    unknown: Callable[[Ref], str | None] | None = None
    #: How the execution record shows each input (:func:`recorded`): None for a plan whose
    #: inputs are its author's literals (a top-level plan's); a nested plan's: its defaults
    #: and its parent's values, each as the parent's record shows it (round 67).
    shown_inputs: Mapping[str, Any] | None = None


class _Budget:
    """Characters of resolved params still allowed (references can multiply a small plan)."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = self.left = limit

    def charge(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise LimitExceeded(
                f"the params resolve to more than {self.limit} characters of JSON; make "
                "the values smaller (a literal, or what a reference repeats) or raise "
                "limits.max_params_bytes"
            )


#: A count of characters resolutions may still build (:func:`resolve`'s ``budget``).
Budget = _Budget


def resolve(
    params: Any, ctx: Context, max_chars: int | None = None, budget: Budget | None = None
) -> Any:
    """A copy of ``params`` with every reference replaced by its value (single pass), each
    mapping of the plan's own with its keys in RFC 8785 order (as the hash reads it).

    With ``max_chars`` (default: the context's), E_LIMIT_EXCEEDED as soon as the resolved
    values (strings, keys, JSON text of whole values) pass that many characters: nothing
    that large is ever built. A ``budget`` (instead) is charged as the values are built,
    also by a resolution that fails: what is left of it says what the work cost.
    """
    if budget is not None:
        return _resolve(params, ctx, budget)
    limit = ctx.max_chars if max_chars is None else max_chars
    return _resolve(params, ctx, None if limit is None else _Budget(limit))


def _resolve(params: Any, ctx: Context, budget: _Budget | None) -> Any:
    if isinstance(params, str):
        value = _resolve_string(params, ctx, budget)
        if budget is not None:
            budget.charge(text_size(value) if isinstance(value, str) else _json_size(value, budget))
        return value
    if isinstance(params, dict):
        if budget is not None:  # ``{}``, each key and its ``: ``, the ``, `` between items
            budget.charge(sum(text_size(key) + 4 for key in params) + 2 * (not params))
        # keys in the hash's order: the order a plan writes them in is not approved
        return {key: _resolve(params[key], ctx, budget) for key in sorted(params, key=key_order)}
    if isinstance(params, list):
        if budget is not None:  # ``[]`` and the ``, `` between items
            budget.charge(2 * len(params) + 2 * (not params))
        return [_resolve(item, ctx, budget) for item in params]
    if budget is not None:  # a number, a boolean, null: as JSON writes it (round 122)
        budget.charge(scalar_size(params))
    return params


def _json_size(value: Any, budget: _Budget) -> int:
    """Characters of ``value`` as JSON (escapes counted as written, ``, `` and ``: `` as the
    exec tool's stdin writes them), stopping early once it passes the budget."""
    if isinstance(value, str):
        return text_size(value)
    if isinstance(value, dict):
        size = 2 * (not value)
        for key, item in value.items():
            size += text_size(str(key)) + 4 + _json_size(item, budget)
            if size > budget.left:
                return size
        return size
    if isinstance(value, list):
        size = 2 * (not value)
        for item in value:
            size += _json_size(item, budget) + 2
            if size > budget.left:
                return size
        return size
    return scalar_size(value)  # a non-JSON value: its schema error says so


def _resolve_string(text: str, ctx: Context, budget: _Budget | None = None) -> Any:
    if "$" not in text:
        return text
    parts = parse(text)
    ref = whole_ref(parts)
    if ref is not None:
        return lookup(ref, ctx)
    if budget is None:
        return "".join(p if isinstance(p, str) else _as_text(lookup(p, ctx)) for p in parts)
    pieces, size = [], 0
    for part in parts:
        piece = part if isinstance(part, str) else _as_text(lookup(part, ctx))
        size += len(piece)
        if size > budget.left:
            budget.charge(size)
        pieces.append(piece)
    return "".join(pieces)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def lookup(ref: Ref, ctx: Context) -> Any:
    """The value of one reference in ``ctx``; raise :class:`RefUnavailable` (or
    :class:`ActionInDoubt` for a value the run lost: :attr:`Context.unknown`)."""
    why = ctx.unknown(ref) if ctx.unknown is not None else None
    if why is not None:
        raise ActionInDoubt(f"{ref.text}: {why}")
    try:
        if ref.root == "actions":
            return _lookup_action(ref, ctx)
        if ref.root == "secrets":
            return _lookup_secret(ref, ctx)
        source = {"inputs": ctx.inputs, "plan": ctx.plan, "approval": ctx.approval}[ref.root]
        value = follow(dict(source), ref.path)
        # an input is plan text: its mappings in the hash's order, as params are
        return canonical_order(value) if isinstance(value, dict | list) else value
    except LookupError as exc:
        raise RefUnavailable(f"{ref.text}: {exc.args[0]}") from None


def _lookup_action(ref: Ref, ctx: Context) -> Any:
    n = ref.action
    assert n is not None
    if ref.path[:1] == ("result",):
        if n not in ctx.results:
            raise LookupError(f"action {n} has no result (it was skipped or did not run)")
        return follow(ctx.results[n], ref.path[1:])
    if n not in ctx.outputs:
        raise LookupError(f"action {n} has no outputs (it was skipped or did not run)")
    name = str(ref.path[1])
    if name not in ctx.outputs[n]:
        raise LookupError(f"output {name!r} of action {n} matched nothing")
    return follow(ctx.outputs[n][name], ref.path[2:])


def _lookup_secret(ref: Ref, ctx: Context) -> str:
    name = str(ref.path[0])
    if ctx.secret is None:
        raise LookupError("no secrets are configured")
    value = ctx.secret(name)
    ctx.used_secrets.add(value)
    return value


# --- legacy ${...} ----------------------------------------------------------------------

_LEGACY = re.compile(r"\$\{((?:actions\[[0-9]+\]|inputs|plan|approval)[^{}]*)\}")
_LEGACY_RENAMES = {"approval.approved_by": "approval.by", "approval.approved_at": "approval.at"}
#: A ``${`` that opens a reference of the legacy form, a root the rewrite knows named whole
#: (``${planet}`` is text), after any white space or invisible character
#: (:data:`controller.display.INVISIBLE`): a reviewer reads
#: ``${ inputs.to }`` as the reference it is in most template languages, so it is refused as
#: one that cannot be carried (round 113, ``legacy-ref-spaced-opener``; round 55 let it reach
#: the tool as text). ``${secrets...}`` (no legacy form) stays text the tool gets as written.
_LEGACY_OPEN = re.compile(
    r"\$\{(?:\s|" + INVISIBLE.pattern + r")*(?:actions|inputs|plan|approval)(?![A-Za-z0-9_-])"
)


def convert_legacy(text: str) -> str:
    """``${actions[1].outputs.x}`` -> ``$<actions[1].outputs.x>``; other ``${...}`` untouched
    (:func:`legacy_uncarried` names a ``${`` that reads as a reference and is not carried)."""
    if "${" not in text:
        return text
    return _LEGACY.sub(_convert_match, text)


def _convert_match(match: re.Match[str]) -> str:
    body = _LEGACY_RENAMES.get(match.group(1), match.group(1))
    candidate = f"$<{body}>"
    try:
        _ref, end = _parse_ref(candidate, 0)
    except RefInvalid:
        return match.group(0)
    # the reference must be the whole of it: ``${inputs.to>x}`` is no ``$<inputs.to>`` and
    # the text ``x>`` (round 108)
    return candidate if end == len(candidate) else match.group(0)


def legacy_uncarried(text: str) -> str | None:
    """The first ``${...}`` of ``text`` that opens a legacy reference (``${inputs``,
    ``${actions``, ``${plan``, ``${approval``) which :func:`convert_legacy` does not carry
    whole into ``$<...>``, else None: left as text, the tool would get it, or cut, a
    reference and some text (round 108). Plans and converters refuse it."""
    if "${" not in text:
        return None
    for found in _LEGACY_OPEN.finditer(text):
        start = found.start()
        if start and text[start - 1] == "$":  # `$${`: `$` and a reference, or the shell's
            close = text.find("}", start)  # escape of `${`; carried, it is neither (round 114)
            return text[start - 1 : close + 1 if close >= 0 else len(text)][:80]
        match = _LEGACY.match(text, start)
        if match is None or _convert_match(match) == match.group(0):
            close = text.find("}", found.start())
            return text[found.start() : close + 1 if close >= 0 else len(text)][:80]
    return None


def legacy_problem(found: str, path: str, line: int | None = None) -> Problem:
    """The refusal of an uncarried legacy reference ``found`` (:func:`legacy_uncarried`)."""
    return Problem(
        "E_REF_INVALID",
        f"`{found}` reads as a legacy reference that cannot be written as one `$<...>` "
        "(white space or an invisible character after `${`, a `>` or a brace inside it, a `$` "
        "right before it: `$${` is `$` then a reference to one reader, the text `${` to "
        "another)",
        path,
        line,
        "write the reference as $<...> with nothing between `$<` and its root (a key "
        'holding `>` or a brace as $<inputs["a>b"]>), or write the text without `${` '
        "(a literal `$<` is `$$<`)",
    )


def convert_legacy_tree(value: Any, *, shared: bool = False) -> Any:
    """:func:`convert_legacy` applied to every string of a JSON tree, into a new tree.
    ``shared``: a container with nothing to rewrite is handed on as it is, not copied: a
    converter finds a value of the plan in its source by identity (round 116,
    convert/depth.py); the plan's readers keep their own copy."""
    if isinstance(value, str):
        return convert_legacy(value)
    if isinstance(value, dict):
        mapped = {key: convert_legacy_tree(item, shared=shared) for key, item in value.items()}
        return value if shared and _same_items(value.values(), mapped.values()) else mapped
    if isinstance(value, list):
        items = [convert_legacy_tree(item, shared=shared) for item in value]
        return value if shared and _same_items(value, items) else items
    return value


def _same_items(old: Iterable[Any], new: Iterable[Any]) -> bool:
    return all(a is b or (isinstance(a, str) and a == b) for a, b in zip(old, new, strict=True))


#: What the record shows for a secret's value (secrets.MASK; this module imports no
#: execution layer).
MASKED = "***"

#: The provenance of one part of a recorded value: the author's text, a secret, or other
#: controller material (an output, a result, an approval's field).
_OWN, _SECRET, _THEIRS = "own", "secret", "theirs"


def recorded(written: Any, ctx: Context, mask: Callable[[Any], Any]) -> Any:
    """``written`` (a value of the plan) resolved against ``ctx`` as the execution record
    shows it, built part by part from each part's provenance (round 67): the author's
    text (a literal, a ``$<plan.*>``, an input of the author's: ``ctx.shown_inputs``) as
    written, a ``$<secrets.*>`` as ``***``, and the controller's other material (an output,
    a result, an approval's field) through ``mask``, the redactor's search for known values,
    the second net for what carries no provenance. Never the author's part searched for a
    secret's value: masked, a literal equal to a secret recorded ``***`` for a right guess
    only (rounds 64-67). A secret's value across the edge of the author's part and the
    controller's (an output completing a literal) masks the whole string."""
    if isinstance(written, dict):
        return {key: recorded(written[key], ctx, mask) for key in sorted(written, key=key_order)}
    if isinstance(written, list):
        return [recorded(item, ctx, mask) for item in written]
    if not isinstance(written, str) or "$" not in written:
        return written
    parts = parse(written)
    ref = whole_ref(parts)
    if ref is not None:
        kind, value = _part(ref, ctx, mask)
        return value if kind == _OWN else MASKED if kind == _SECRET else mask(value)
    pieces = [(_OWN, p) if isinstance(p, str) else _text_part(p, ctx, mask) for p in parts]
    return _joined(pieces, mask)


def _part(ref: Ref, ctx: Context, mask: Callable[[Any], Any]) -> tuple[str, Any]:
    """(provenance, value) of one reference: as written for the author's, else as resolved."""
    if ref.root == "secrets":
        lookup(ref, ctx)  # what the run looked up (used_secrets), never shown
        return _SECRET, MASKED
    if ref.root == "plan":
        return _OWN, lookup(ref, ctx)
    if ref.root == "inputs":
        if ctx.shown_inputs is None:  # a top-level plan's inputs: its author's literals
            return _OWN, lookup(ref, ctx)
        try:  # as the parent's record shows it: already built from its parts
            return _OWN, follow(dict(ctx.shown_inputs), ref.path)
        except LookupError:
            return _THEIRS, lookup(ref, ctx)
    return _THEIRS, lookup(ref, ctx)


def _text_part(ref: Ref, ctx: Context, mask: Callable[[Any], Any]) -> tuple[str, str]:
    kind, value = _part(ref, ctx, mask)
    return kind, _as_text(value)


def _joined(pieces: list[tuple[str, str]], mask: Callable[[Any], Any]) -> str:
    """The pieces of a string joined: the author's as given, each run of the controller's
    pieces masked as one (two outputs may spell a secret together), a secret as ``***``;
    a secret's value across an edge of the author's text: the whole string masked."""
    runs: list[tuple[bool, str]] = []  # (the author's, raw text: a secret already ***)
    for kind, text in pieces:
        own = kind == _OWN
        text = MASKED if kind == _SECRET else text
        if runs and runs[-1][0] == own and not own:
            runs[-1] = (False, runs[-1][1] + text)
        else:
            runs.append((own, text))
    shown = [text if own else mask(text) for own, text in runs]
    for i, (own, text) in enumerate(runs):
        if not own:
            continue
        before = runs[i - 1][1] if i and not runs[i - 1][0] else ""
        after = runs[i + 1][1] if i + 1 < len(runs) and not runs[i + 1][0] else ""
        if (before or after) and mask(before + text + after) != (
            mask(before) + mask(text) + mask(after)
        ):
            return str(mask("".join(t for _, t in runs)))
    return "".join(shown)


def authored(
    written: Any,
    resolved: Any,
    plan: Mapping[str, Any] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> Any:
    """``resolved`` (what ``written``, a value of the plan, resolved to, redacted) as the
    execution record shows it: every part the plan's author wrote, a literal (and, given the
    ``plan`` fields, a ``$<plan.*>`` reference: the author's own name and task; given the
    plan's own ``inputs`` as written, a ``$<inputs.*>`` reference: a top-level plan's input
    is its author's literal, round 65; a nested plan's are :func:`authored_inputs`, round
    66), as written; what any other reference filled in as
    ``resolved`` has it (round 64: a literal param equal to a secret recorded ``***``
    confirmed the author's guess of the secret; the literal is in the committed plan
    already). A mapping key is always the author's."""
    if _authored_only(written, plan, inputs):
        try:
            return resolve(written, Context(plan=plan or {}, inputs=inputs or {}))
        except PlangateError:  # a field not given: that part as recorded, the rest as written
            if not isinstance(written, (dict, list)):
                return resolved
    if isinstance(written, dict) and isinstance(resolved, dict) and len(written) == len(resolved):
        keys = sorted(written, key=key_order)  # resolve's order, which redaction keeps
        if all(got == key or got not in written for key, got in zip(keys, resolved, strict=True)):
            return {
                k: authored(written[k], v, plan, inputs)
                for k, v in zip(keys, resolved.values(), strict=True)
            }
    if isinstance(written, list) and isinstance(resolved, list) and len(written) == len(resolved):
        return [authored(w, r, plan, inputs) for w, r in zip(written, resolved, strict=True)]
    return resolved


def authored_inputs(
    given: Mapping[str, Any],
    defaults: Mapping[str, Any],
    plan: Mapping[str, Any] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A nested plan's inputs that are its authors' text, for :func:`authored`'s ``inputs``
    (round 66: a child's ``$<inputs.*>`` filled by its parent's literal, or by its own
    default, was recorded ``***`` for a right guess of a secret only). Provenance follows
    the parent's resolution: the child's own defaults (literals it wrote), and each value
    the parent action ``given`` that is wholly its author's text as :func:`authored` reads
    it (``plan``, ``inputs``: the parent's own fields and inputs), resolved as the run
    resolved it. An input filled by anything else (a secret, an output, a result) is left
    out, its default too: ``$<inputs.*>`` reading it is shown as recorded."""
    own = {name: value for name, value in defaults.items() if name not in given}
    ctx = Context(plan=plan or {}, inputs=inputs or {})
    for name, written in given.items():
        if _authored_only(written, plan, inputs):
            try:
                own[name] = resolve(written, ctx)
            except PlangateError:  # a field not given: the child reads it as recorded
                continue
    return own


def _authored_only(
    value: Any, plan: Mapping[str, Any] | None, inputs: Mapping[str, Any] | None
) -> bool:
    """Whether no reference in ``value`` brings in anything but the author's own text."""
    own = {root for root, given in (("plan", plan), ("inputs", inputs)) if given is not None}
    try:
        parts = [p for _, text in walk_strings(value) for p in parse(text)]
    except PlangateError:
        return False
    return all(isinstance(p, str) or p.root in own for p in parts)
