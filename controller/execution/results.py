"""What a tool returned, taken apart: outputs by RFC 9535 JSONPath, depth and params checks.

Shared by the steps of a run (:mod:`controller.execution.steps`) and anything that tests a
tool's result the same way.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from controller.errors import OutputMissing, ParamsInvalid
from controller.plan import plans, refs

if TYPE_CHECKING:
    from controller.execution.tools import Tool
    from controller.plan.schema import Output

#: A deeper tool result is refused: recording and redacting it would overflow the stack.
MAX_RESULT_DEPTH = 100


def deeper_than(value: Any, limit: int) -> bool:
    """Whether JSON data nests lists/mappings more than ``limit`` levels (no recursion)."""
    level: list[Any] = [value]
    for _ in range(limit):
        level = [
            item
            for node in level
            if isinstance(node, dict | list)
            for item in (node.values() if isinstance(node, dict) else node)
        ]
        if not level:
            return False
    return any(isinstance(node, dict | list) for node in level)


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


@functools.lru_cache(maxsize=1024)
def _query(path: str) -> Any:
    import jsonpath_rfc9535

    return jsonpath_rfc9535.compile(path)


def extract_outputs(outputs: list[Output], result: Any) -> dict[str, Any]:
    """Each declared output from the result: singular query -> value, otherwise a list."""
    captured: dict[str, Any] = {}
    for output in outputs:
        query = _query(output.path)
        values = query.find(result).values()
        if values:
            captured[output.name] = values[0] if query.singular_query() else list(values)
        elif not output.optional:
            raise OutputMissing(
                f"output {output.name!r}: {output.path} matched nothing in the result"
            )
    return captured
