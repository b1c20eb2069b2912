"""The ``echo`` tool kind: returns its params. For demos, tests and benchmarks."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.execution.tools import CallContext
    from controller.settings import ToolSpec


class EchoTool:
    def __init__(self, name: str, spec: ToolSpec) -> None:
        self.name = name
        self.spec = spec

    def call(self, params: dict[str, Any], ctx: CallContext) -> Any:
        return copy.deepcopy(params)
