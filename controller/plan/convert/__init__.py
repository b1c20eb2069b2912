"""Plans written in the formats agents already use, turned into PLAN.yml (SPEC §13).

``convert_text`` reads a source (strict model-output rules, :mod:`.source`), detects its
format unless told, runs that format's converter and returns the PLAN.yml text with the
data it holds. Formats: ``actionplan``, ``toon-plan`` (JSON, TOON or markdown),
``plan-contract``, ``agent-plan``, ``pte``; docs/formats.md maps each field by field. A
conversion either succeeds whole or raises :class:`~controller.errors.ConvertFailed` with
every problem found; nothing is dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.errors import (
    ConvertFailed,
    ConvertUnsupported,
    PlangateError,
    Problem,
    UsageError,
)
from controller.plan.convert.common import Ctx
from controller.plan.convert.depth import check_depth
from controller.plan.convert.source import Source, read_source

FORMATS = ("actionplan", "toon-plan", "plan-contract", "agent-plan", "pte")
#: Where a conversion's nested plans go: the plan's folder (None: nowhere), and the (message,
#: remedy) of a nested plan with no folder (None: ``convert``'s own, "pass -o DIR").
Place = tuple[str | None, tuple[str, str] | None]


@dataclass
class Conversion:
    """A converted plan: its format, data and PLAN.yml text, and nested plans it pins."""

    format: str
    data: dict[str, Any]
    text: str
    #: (repo-relative plan folder, PLAN.yml text) of each nested plan, children first
    children: list[tuple[str, str]] = field(default_factory=list)
    #: The status the source says (:attr:`Ctx.source_status`), whatever was written
    source_status: str | None = None


def convert_text(
    text: str,
    source: str = "<text>",
    fmt: str | None = None,
    nested_base: str | None = None,
    verify: bool = True,
    by: str = "`plangate convert`",
    unplaced: tuple[str, str] | None = None,
) -> Conversion:
    """Convert one plan source; ``nested_base`` is the repo path of the plan's folder (nested
    plans are written under it). ``verify=False`` skips reading the text back: for a caller
    that parses it anyway and calls :func:`check_reads_back` (a 1,000-step plan parses in
    a quarter of a second). ``unplaced``: the (message, remedy) of a nested plan without
    ``nested_base``, as the caller's user can act on it (default: ``convert``'s ``-o``)."""
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", remedy=f"use one of: {', '.join(FORMATS)}")
    try:
        return _convert_text(text, source, fmt, (nested_base, unplaced), verify, by)
    except (RecursionError, ValueError, OverflowError) as exc:
        # Hostile input the parsers give up on (a value nested 50,000 deep, a number of
        # 5,000 digits): a coded error for this source, never an exception in a pass.
        raise ConvertUnsupported(
            f"{source}: the source cannot be read safely ({type(exc).__name__}: {str(exc)[:200]})",
            remedy="write values at most 100 levels deep and numbers of JSON's usual size",
        ) from None


def _convert_text(
    text: str,
    source: str,
    fmt: str | None,
    place: Place,
    verify: bool,
    by: str,
) -> Conversion:
    parsed = read_source(text, source)
    ctx = Ctx(source, lines=dict(parsed.lines), problems=list(parsed.problems))
    fmt = fmt or detect(parsed, source)
    try:
        return _converted(parsed, fmt, ctx, place, verify, by)
    except PlangateError as exc:
        # the format is known from here on: a refusal names it as a success does (round
        # 127, validate-format-unnamed-on-conversion-refusal: MCP answered `format: null`)
        exc.source_format = fmt
        raise


def _converted(
    parsed: Source,
    fmt: str,
    ctx: Ctx,
    place: Place,
    verify: bool,
    by: str,
) -> Conversion:
    source = ctx.source
    data, children, tree = _convert(parsed, fmt, ctx, place)
    for plan in (data, *(child for _, child in children)):
        if not ctx.problems:
            check_depth(plan, tree, ctx)  # round 116: at the source's place, before the text
    ctx.check()
    header = f"Converted by {by} from {_display(source)} ({fmt}); review it."
    nested = f"Nested plan converted from {_display(source)} ({fmt})."
    return Conversion(
        fmt,
        data,
        render(data, header, source, verify),
        [(path, render(child, nested, path)) for path, child in children],
        ctx.source_status,
    )


def _convert(
    parsed: Source, fmt: str, ctx: Ctx, place: Place
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]], Any]:
    """The PLAN.yml data, its nested plans, and the tree the converter read (the source's
    data; a markdown plan's records as its reader gives them)."""
    if parsed.syntax == "markdown":
        if fmt != "toon-plan":
            raise ConvertUnsupported(
                f"{ctx.source}: a markdown plan is the toon-plan format, not {fmt}"
            )
        from controller.plan.convert import markdown, toonplan

        tree = markdown.parse(parsed.text, ctx)
        return toonplan.convert(tree, ctx), [], tree
    data, children = _convert_data(parsed.data, fmt, ctx, place)
    return data, children, parsed.data


def _convert_data(
    data: Any, fmt: str, ctx: Ctx, place: Place
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    if fmt == "actionplan":
        from controller.plan.convert import actionplan

        nested = actionplan.Nested(*place)  # (the folder, or what to do without one)
        return actionplan.convert(data, ctx, nested), nested.children
    if fmt == "toon-plan":
        from controller.plan.convert import toonplan

        return toonplan.convert(data, ctx), []
    if fmt == "plan-contract":
        from controller.plan.convert import contract

        return contract.convert(data, ctx), []
    if fmt == "agent-plan":
        from controller.plan.convert import agentplan

        return agentplan.convert(data, ctx), []
    from controller.plan.convert import pte

    return pte.convert(data, ctx), []


def detect(parsed: Source, source: str = "<text>") -> str:
    """The format of a parsed source, from the fields only that format has."""
    if parsed.syntax == "markdown":
        return "toon-plan"
    data = parsed.data
    found = _detect(data)
    if found is None:
        keys = [str(k) for k in list(data)[:8]]
        raise ConvertUnsupported(
            f"{source}: cannot tell the plan's format (keys: {', '.join(keys)})",
            remedy=f"pass --from with one of: {', '.join(FORMATS)}",
            quotes=(source, *keys),  # the asker's own keys, as written (round 62)
        )
    return found


def _detect(data: dict[str, Any]) -> str | None:
    plan = data.get("plan")
    if "actions" in data and isinstance(plan, dict) and ("name" in plan or "task" in plan):
        return "pte"
    if any(k in data for k in ("skill_id", "policy_context", "goal")):
        return "plan-contract"
    if any(k in data for k in ("tasks", "workflow_config", "shared_inputs")):
        return "toon-plan"
    if "workspace_id" in data or _first_step_has(data, "step_number", "action"):
        return "actionplan"
    from controller.plan.convert.agentplan import unwrap

    root = unwrap(data)[0]
    if "task_id" in root or _first_step_has(root, "tool", "detail"):
        return "agent-plan"
    if _first_step_has(data, "task_id"):
        return "toon-plan"
    return None


def _first_step_has(data: dict[str, Any], *keys: str) -> bool:
    steps = data.get("steps")
    first = steps[0] if isinstance(steps, list) and steps else None
    return isinstance(first, dict) and all(k in first for k in keys)


def render(data: dict[str, Any], header: str, source: str, verify: bool = True) -> str:
    """PLAN.yml text for ``data``, checked (unless told) to read back as exactly ``data``."""
    from controller.errors import YamlParseError
    from controller.plan import yamlio
    from controller.plan.convert.emit import to_yaml

    try:
        text = to_yaml(data, header)
        if verify:
            check_reads_back(yamlio.read_yaml(text, source).data, data, source)
    except (TypeError, ValueError, YamlParseError) as exc:
        raise ConvertFailed(
            [Problem("E_CONVERT_UNSUPPORTED", f"not plain JSON data: {exc}")], source
        ) from None
    return text


def check_reads_back(back: Any, data: dict[str, Any], source: str) -> None:
    """The written PLAN.yml, read again, must be exactly the converted data. ``back`` None:
    the text was not read: for plain JSON data the reader's problems (E_PLAN_TOO_LARGE with
    its figures) are the answer, never "a lone surrogate" (round 116,
    readback-failure-misdiagnosed: a plan over limits.max_plan_bytes was called that)."""
    if back is None and isinstance(_canonical(data), bytes):
        return  # plain JSON data the reader refused for its own reason: that is the answer
    if back is None or _canonical(back) != _canonical(data):
        raise ConvertFailed(
            [
                Problem(
                    "E_CONVERT_UNSUPPORTED",
                    "a value does not survive as YAML (a lone surrogate or another "
                    "character YAML cannot carry)",
                )
            ],
            source,
        )


def _canonical(value: Any) -> Any:
    """RFC 8785 bytes, what the hash sees: ``1.0`` in the source and the ``1`` YAML reads back
    are one value (the canonical value tree, SPEC §2); any other difference is a loss. A
    value the hash cannot write (a lone surrogate, an integer beyond ±(2^53-1), which
    PLAN.yml's check then refuses at its place) is compared leaf by leaf, each number as the
    hash writes it where it can (round 121, ``convert-number-mix-misreported``: a ``1E2``
    beside such an integer was compared as the text ``100.0`` against the ``100`` read back,
    and the source refused "a value does not survive as YAML", with no place)."""
    from controller.plan.hashing import canonical_bytes

    try:
        return canonical_bytes(value)
    except (ValueError, TypeError):  # not JSON data: compare leaf by leaf
        return _leaves(value)


def _leaves(value: Any) -> Any:
    """``value`` with each number a ``("number", text)`` pair (a tuple: no JSON value is one),
    the text its RFC 8785 spelling where it has one; strings, flags and null as they are."""
    from controller.plan.hashing import canonical_bytes

    if isinstance(value, dict):
        return {key: _leaves(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_leaves(item) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return ("number", canonical_bytes(value).decode("utf-8"))
        except (ValueError, TypeError):
            return ("number", repr(value))
    return value


def _display(source: str) -> str:
    from controller.display import visible

    return visible(source.rsplit("/", 1)[-1])
