"""A converted value nested deeper than PLAN.yml is read, refused where the source wrote it.

PLAN.yml's reader refuses a mapping or list nested deeper than
:data:`controller.plan.yamlio.MAX_DEPTH` levels. A source value can reach that depth only in
the plan it becomes (a Plan Contract's ``args`` under ``actions[0].params``), so the check
is on the converted data, with that limit and that counting, before its text is written.
Round 116 (readback-failure-misdiagnosed): the converted text failed to read back, and
``convert`` called it "a lone surrogate", MCP and the daemon named a line of the converted
text, not of the source. Converters hand the source's values on as they are, so the value
that goes too deep is found in the source by identity and refused at its location there.
"""

from __future__ import annotations

from typing import Any

from controller.plan.convert.common import Ctx, Loc, _line_of
from controller.plan.refs import format_path
from controller.plan.yamlio import MAX_DEPTH


def check_depth(data: dict[str, Any], tree: Any, ctx: Ctx) -> None:
    """One E_CONVERT_UNSUPPORTED for the first container of ``data`` (the PLAN.yml data)
    past MAX_DEPTH, at the location in ``tree`` (what the converter read) it came from."""
    path = _too_deep(data)
    if path is None:
        return
    chain = _ancestors(data, path)
    where = _sources(tree)
    # the outermost value of an unbroken run of source values ending at the deep one
    top = None
    for index in range(len(chain) - 1, -1, -1):
        if id(chain[index]) not in where:
            break
        top = index
    if top is None:
        loc: Loc = ()
        shown = format_path(path)
    else:  # the member of that source value that holds the deep one
        loc, shown = where[id(chain[top])], format_path(path[:top])
        if top < len(path):
            loc, shown = (*loc, path[top]), format_path(path[: top + 1])
    _line_of(ctx, loc)
    ctx.unsupported(
        loc,
        f"the value is nested deeper than {MAX_DEPTH} levels in the PLAN.yml it becomes "
        f"(at {shown}), and PLAN.yml is read at most {MAX_DEPTH} levels deep",
        f"write values at most {MAX_DEPTH} levels deep in the plan: flatten the value, or "
        "pass it as a JSON string the tool parses",
    )


def _too_deep(data: dict[str, Any]) -> tuple[str | int, ...] | None:
    """The path of the first container at a depth PLAN.yml's reader refuses (the root
    mapping is level 1), walked without recursion."""
    stack: list[tuple[Any, tuple[str | int, ...], int]] = [(data, (), 1)]
    while stack:
        value, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            return path
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in reversed(list(items)):
            if isinstance(item, dict | list):
                stack.append((item, (*path, key), depth + 1))
    return None


def _ancestors(data: Any, path: tuple[str | int, ...]) -> list[Any]:
    """The containers along ``path``: the root, ..., the value at ``path``."""
    chain = [data]
    for key in path:
        chain.append(chain[-1][key])
    return chain


def _sources(tree: Any) -> dict[int, Loc]:
    """Every container of the source, by identity, with its location in the source."""
    found: dict[int, Loc] = {}
    stack: list[tuple[Any, Loc]] = [(tree, ())]
    while stack:
        value, loc = stack.pop()
        if not isinstance(value, dict | list) or id(value) in found:
            continue
        found[id(value)] = loc
        items = value.items() if isinstance(value, dict) else enumerate(value)
        stack.extend((item, (*loc, key)) for key, item in items)
    return found
