"""The ``python`` tool kind: ``module:function`` called with params as keyword arguments.

The function runs in a child process (:mod:`controller.execution.tools.pyrunner`) with
``python_path``
prepended to ``sys.path``, so a timeout really stops it (its process group is killed) and a
crashing or leaking tool cannot take the controller down. It receives ``idempotency_key=`` when
its signature names that parameter, and ``PLANGATE_IDEMPOTENCY_KEY`` in its environment. Its
return value must be JSON data; an exception is E_TOOL_FAILED with the exception's message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.errors import ParamsInvalid, ToolOutputInvalid, ToolTimeout
from controller.execution.tools import ToolError, cut, shorten, strict_json
from controller.execution.tools.process import Overran, run_process
from controller.plan.plans import RESERVED_PYTHON_PARAM

if TYPE_CHECKING:
    from controller.execution.tools import CallContext
    from controller.settings import ToolSpec

RUNNER = Path(__file__).with_name("pyrunner.py")


class PythonTool:
    def __init__(
        self, name: str, spec: ToolSpec, python_path: list[Path], cwd: Path | None = None
    ) -> None:
        assert spec.target
        self.name = name
        self.spec = spec
        self.cwd = cwd if cwd is not None else spec.cwd
        self.python_path = [str(p) for p in python_path]

    def call(self, params: dict[str, Any], ctx: CallContext) -> Any:
        if RESERVED_PYTHON_PARAM in params:  # a plan frozen before the rule, or a fallback
            raise ParamsInvalid(
                f"{RESERVED_PYTHON_PARAM} is the controller's: the tool receives the step's "
                "idempotency key under that name (round 15: the approved value was replaced)"
            )
        request = {
            "target": self.spec.target,
            "params": params,
            "python_path": self.python_path,
            "idempotency_key": ctx.idempotency_key,
        }
        env = {**ctx.env, **self.spec.env, "PLANGATE_IDEMPOTENCY_KEY": ctx.idempotency_key}
        try:
            done = run_process(
                [sys.executable, str(RUNNER)],
                stdin=json.dumps(request).encode("utf-8"),
                env=env,
                timeout=ctx.timeout,
                # The report holds the whole result; it is cut later, when it is recorded.
                limit=report_limit(ctx.max_result_bytes),
                cwd=self.cwd,
                on_spawn=ctx.on_spawn,
            )
        except Overran:
            raise ToolTimeout(
                f"{self.name}: {self.spec.target} did not finish within {ctx.timeout:g}s; "
                "its process was killed"
            ) from None
        if done.stdout_total > report_limit(ctx.max_result_bytes):
            raise ToolError(
                f"{self.name}: {self.spec.target} returned {done.stdout_total} bytes, more than "
                f"the {report_limit(ctx.max_result_bytes)} a result may have",
                permanent=True,
            )
        report = _report(done.stdout)
        if report is None:
            # the last line is cut from the redacted whole (round 35: a secret broken across
            # lines left its tail in the message when the line was redacted alone)
            stderr = ctx.redact(cut(done.stderr, done.stderr_total, ctx.max_result_bytes))
            stderr = stderr.strip()
            last = (
                shorten(stderr.splitlines()[-1], 300) if stderr else f"exit status {done.exit_code}"
            )
            raise ToolError(f"{self.name}: {self.spec.target} died without a result: {last}")
        if not report.get("ok") and report.get("invalid"):
            raise ToolOutputInvalid(
                f"{self.name}: {self.spec.target} returned what is not JSON data: "
                f"{shorten(ctx.redact(str(report.get('error'))), 300)}"
            )
        if not report.get("ok"):
            raise ToolError(
                f"{self.name}: {self.spec.target} raised {report.get('error')}",
                permanent=bool(report.get("permanent")),
            )
        return report.get("result")


def report_limit(max_result_bytes: int) -> int:
    """Bytes a python tool's whole report may take (the recorded result is cut later)."""
    return max(max_result_bytes * 16, 1 << 20)


def _report(data: bytes) -> dict[str, Any] | None:
    """The runner's report; None when there is none; E_TOOL_OUTPUT_INVALID when it holds
    JSON that cannot be read exactly (a 5,000-digit integer the tool returned)."""
    value = strict_json(data)
    return value if isinstance(value, dict) else None
