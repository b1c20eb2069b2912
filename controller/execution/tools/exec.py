"""The ``exec`` tool kind: a program from the catalog, never a shell (SPEC §6).

The catalog's ``argv`` is the command; each element may hold ``{param}`` placeholders, filled
with that param's text and staying one argv element whatever it contains (quotes, ``;``,
``$(...)`` and backticks are inert: no shell ever sees them). The whole params object goes to
the program as JSON on stdin. The environment is the controller's without secrets, plus the
catalog's ``env`` and ``PLANGATE_IDEMPOTENCY_KEY``. It runs in the catalog's ``cwd`` (relative
to the config file's folder), by default in the config file's folder.

Result: ``{exit_code, stdout, stderr, json}``, ``json`` being stdout parsed as JSON when it is
JSON (else null). Each stream is kept up to ``limits.max_result_bytes`` and the cut is noted in
the text. A non-zero exit is E_TOOL_FAILED (temporary: a retry may help); a timeout kills the
whole process group (E_TIMEOUT).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.errors import ParamsInvalid, ToolTimeout
from controller.execution.tools import (
    ToolError,
    cut,
    fill_placeholders,
    placeholder_names,
    shorten,
    strict_json,
)
from controller.execution.tools.process import Finished, Overran, run_process

if TYPE_CHECKING:
    from controller.execution.tools import CallContext
    from controller.settings import ToolSpec


class ExecTool:
    def __init__(self, name: str, spec: ToolSpec, cwd: Path | None = None) -> None:
        assert spec.argv
        self.name = name
        self.spec = spec
        self.cwd = cwd if cwd is not None else spec.cwd
        self.argv_template = list(spec.argv)

    def argv(
        self,
        params: dict[str, Any],
        shown: Mapping[str, Any] | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> list[str]:
        """The command with placeholders filled; one element stays one element. A NUL would
        end an element early (C strings), so a value holding one is E_PARAMS_INVALID; so is
        an element that would hold a secret (:meth:`_refuse_secrets`)."""
        argv = [fill_placeholders(element, params) for element in self.argv_template]
        self._refuse_secrets(argv, shown, redact)
        for index, element in enumerate(argv):
            if "\0" in element:
                raise ParamsInvalid(
                    f"{self.name}: argv element {index} ({self.argv_template[index]!r}) would "
                    "hold a NUL character from a param's value; no program argument can carry "
                    "one",
                    remedy="keep NUL characters out of values placed into argv (pass such "
                    "data on stdin, where the params arrive as JSON)",
                )
        return argv

    def _refuse_secrets(
        self,
        argv: list[str],
        shown: Mapping[str, Any] | None,
        redact: Callable[[str], str] | None,
    ) -> None:
        """E_PARAMS_INVALID, before anything starts, for an element filled from a param that
        brings a secret into it (round 128): a process's argv is ``/proc/<pid>/cmdline``,
        readable by every process and user of the host (``ps``), the other tools included,
        and the cgroup shim's command line carries the same elements. An element holds one
        when ``shown`` (the params as the record shows them: the author's parts as written,
        whatever a reference brought in redacted) fills it otherwise than the real params:
        a ``$<secrets.*>`` whole or inside text, a list or mapping holding one, a structured
        secret, an output or result that holds one, in any encoding the redactor hides. The
        author's own text is never judged (a literal equal to a secret would make the
        refusal an oracle for a guess, rounds 64-67; it is in the committed plan anyway).
        Without ``shown`` each filled element is searched with ``redact``."""
        for index, template in enumerate(self.argv_template):
            names = placeholder_names(template)
            if not names:
                continue  # the catalog's own text: the operator's, no param reaches it
            element = argv[index]
            if shown is not None:
                holds = fill_placeholders(template, shown) != element
            else:
                holds = redact is not None and redact(element) != element
            if holds:
                which = ", ".join(repr(n) for n in sorted(names))
                raise ParamsInvalid(
                    f"{self.name}: argv element {index} ({template!r}) would hold a secret "
                    f"from param {which}: a program's arguments are its command line, which "
                    "every process on the host can read (/proc/<pid>/cmdline, ps); nothing "
                    "was started",
                    remedy="give the secret to a param the catalog does not place into the "
                    "tool's argv: the tool reads it from stdin, where the whole params object "
                    "arrives as JSON (or use a python or http tool)",
                )

    def call(self, params: dict[str, Any], ctx: CallContext) -> Any:
        argv = self.argv(params, ctx.shown, ctx.redact)
        env = {**ctx.env, **self.spec.env, "PLANGATE_IDEMPOTENCY_KEY": ctx.idempotency_key}
        stdin = json.dumps(params, ensure_ascii=False).encode("utf-8")
        try:
            done = run_process(
                argv,
                stdin=stdin,
                env=env,
                timeout=ctx.timeout,
                limit=ctx.max_result_bytes,
                cwd=self.cwd,
                on_spawn=ctx.on_spawn,
            )
        except Overran:
            raise ToolTimeout(
                f"{self.name}: {argv[0]} did not finish within {ctx.timeout:g}s; "
                "its process group was killed"
            ) from None
        result = exec_result(done, ctx.max_result_bytes)
        if done.exit_code != 0:
            raise ToolError(
                f"{self.name}: {argv[0]} {_exit_text(done)}{_tail(result, ctx.redact)}",
                result=result,
            )
        return result


def exec_result(done: Finished, limit: int) -> dict[str, Any]:
    stdout = cut(done.stdout, done.stdout_total, limit)
    return {
        "exit_code": done.exit_code,
        "stdout": stdout,
        "stderr": cut(done.stderr, done.stderr_total, limit),
        "json": _parse_json(done.stdout) if done.stdout_total <= limit else None,
    }


def _parse_json(data: bytes) -> Any:
    return strict_json(data)  # not JSON, too deep, or a repeated member name: None


def _exit_text(done: Finished) -> str:
    if done.exit_code < 0:
        return f"was killed by signal {-done.exit_code}"
    return f"exited with status {done.exit_code}"


def _tail(result: dict[str, Any], redact: Callable[[str], str]) -> str:
    """The last line of stderr for the message, cut from the redacted whole: a secret broken
    across lines is found whole, its tail alone would not be (round 35)."""
    text = redact(str(result["stderr"])).strip().splitlines()
    return f": {shorten(text[-1], 300)}" if text else ""
