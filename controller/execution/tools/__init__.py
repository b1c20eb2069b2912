"""The tool catalog: what a plan's ``tool:`` name runs (SPEC §6, config ``tools:``).

Tools come only from the controller's config, never from the plans repo. Each kind lives in
its own module (:mod:`~controller.execution.tools.echo`, :mod:`~controller.execution.tools.exec`,
:mod:`~controller.execution.tools.python`, :mod:`~controller.execution.tools.http`) and
implements :class:`Tool`:
``call(params, ctx)`` returns the result as JSON data, or raises a
:class:`~controller.errors.PlangateError` whose ``permanent`` flag tells the executor whether
a retry could help. Tools never retry on their own; the executor decides.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from controller.display import shorten  # re-exported: the tools cut their messages with it
from controller.errors import ParamsInvalid, ToolFailed, ToolUnknown
from controller.plan.hashing import exact_double

if TYPE_CHECKING:
    from controller.execution.tools.process import Spawned
    from controller.settings import Config, ToolSpec

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


#: What the redactor writes for a secret (controller.execution.secrets.MASK).


def _as_written(text: str) -> str:
    return text


@dataclass(frozen=True)
class CallContext:
    """What a tool gets besides its params for one call."""

    idempotency_key: str
    timeout: float
    max_result_bytes: int = 65_536
    #: Base environment for child processes (the controller's, without secrets).
    env: Mapping[str, str] = field(default_factory=dict)
    plan_id: str = ""
    action_id: int | str = 0
    #: Told about each child process right after it starts (``exec`` and ``python`` kinds),
    #: so the engine can journal it and stop it should the controller die mid-tool.
    on_spawn: Callable[[Spawned], None] | None = None
    #: The run's redactor (:meth:`controller.execution.secrets.Redactor.text`): a tool that
    #: quotes part of its output in a message (the last line of stderr) cuts it from the
    #: redacted whole, never redacts the part alone (round 35: the tail of a secret broken
    #: across lines, after a quoted-printable soft break, was committed in the message).
    redact: Callable[[str], str] = _as_written
    #: The params as the execution record shows them (:func:`controller.plan.refs.recorded`:
    #: the author's parts as written, whatever a reference brought in redacted), given to an
    #: ``exec`` tool: an argv element these fill otherwise than the real params holds a
    #: secret (or what the redactor hides) a reference brought in, and is refused before
    #: anything starts (round 128: a process's command line is readable by every process).
    #: None: no provenance; the tool searches each filled element with :attr:`redact`.
    shown: Mapping[str, Any] | None = None


class Tool(Protocol):
    """One catalog entry, ready to call."""

    name: str
    spec: ToolSpec

    def call(self, params: dict[str, Any], ctx: CallContext) -> Any: ...


class ToolError(ToolFailed):
    """E_TOOL_FAILED carrying the tool's result (exit code, output) for the record."""

    def __init__(self, message: str, *, result: Any = None, permanent: bool = False) -> None:
        super().__init__(message)
        self.result = result
        self.permanent = permanent  # type: ignore[misc]


def strict_json(data: bytes) -> Any:
    """A tool's output as JSON data, or None when it is not JSON. E_TOOL_OUTPUT_INVALID for
    JSON whose object names a member twice (I-JSON, RFC 7493, forbids it, and a reader of the
    recorded output who takes the first ``v`` would see another value than the one handed
    on: round 13), a number no double holds as written, and JSON that cannot be read
    exactly (an integer past Python's digit limit, nesting past its recursion limit: round
    24)."""
    if not data.strip():
        return None
    from controller.errors import ToolOutputInvalid

    try:  # UTF-8 only, as the recorded text reads it (RFC 8259 §8.1; a BOM may be ignored):
        text = data.decode("utf-8").removeprefix("\ufeff")  # json.loads would take UTF-16,
    except UnicodeDecodeError:  # UTF-32 and encoded surrogates, and call bad UTF-8 "a
        return None  # number too long"; the text shows what the bytes are
    try:
        return json.loads(text, object_pairs_hook=_unique_members, parse_float=_exact_float)
    except _Repeated as repeated:
        raise ToolOutputInvalid(
            f"the tool's JSON output names the member {repeated.name!r} twice in one object "
            "(I-JSON, RFC 7493): which value is meant is not clear"
        ) from None
    except _Inexact as inexact:
        raise ToolOutputInvalid(
            f"the tool's JSON output holds the number {shorten(inexact.text, 60)}, which no "
            f"double holds as written: it would be handed on as {inexact.value!r} (round 24)"
        ) from None
    except json.JSONDecodeError:
        return None  # not JSON: a text result
    except (ValueError, RecursionError) as exc:
        # JSON, but beyond what can be read exactly: an integer past Python's digit limit,
        # nesting past its recursion limit (round 24: read as "not JSON", the whole text was
        # handed on as a success)
        why = "nested too deep" if isinstance(exc, RecursionError) else "a number too long"
        raise ToolOutputInvalid(f"the tool's JSON output cannot be read exactly: {why}") from None


class _Inexact(Exception):
    def __init__(self, text: str, value: float) -> None:
        self.text, self.value = text, value


def _exact_float(text: str) -> float:
    value = float(text)
    if not exact_double(text, value):
        raise _Inexact(text, value)
    return value


class _Repeated(Exception):
    def __init__(self, name: str) -> None:
        self.name = name


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name in found:
            raise _Repeated(name)
        found[name] = value
    return found


def build_tool(name: str, spec: ToolSpec, config: Config) -> Tool:
    """The tool object for one catalog entry."""
    if spec.kind == "echo":
        from controller.execution.tools.echo import EchoTool

        return EchoTool(name, spec)
    if spec.kind == "exec":
        from controller.execution.tools.exec import ExecTool

        return ExecTool(name, spec, tool_cwd(spec, config))
    if spec.kind == "python":
        from controller.execution.tools.python import PythonTool

        return PythonTool(name, spec, list(config.python_path), tool_cwd(spec, config))
    from controller.execution.tools.http import HttpTool

    return HttpTool(name, spec)


def tool_cwd(spec: ToolSpec, config: Config) -> Path | None:
    """Where a tool process runs: ``cwd`` (relative to the config's folder), else that folder."""
    base = config.source.parent.resolve() if config.source is not None else None
    if base is not None and not base.is_dir():
        base = None
    if spec.cwd is None:
        return base
    if spec.cwd.is_absolute() or base is None:
        return spec.cwd
    return base / spec.cwd


class Catalog:
    """The config's tools, built on first use; safe to share between threads."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._tools: dict[str, Tool] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> Tool:
        spec = self._config.tools.get(name)
        if spec is None:
            known = ", ".join(sorted(self._config.tools)) or "none"
            raise ToolUnknown(f"tool {name!r} is not in the controller's catalog (known: {known})")
        with self._lock:
            if name not in self._tools:
                self._tools[name] = build_tool(name, spec, self._config)
            return self._tools[name]


def param_text(value: Any) -> str:
    """A param as placeholder text: strings as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def placeholder_names(template: str) -> set[str]:
    """The param names a template's ``{name}`` placeholders take."""
    return set(_PLACEHOLDER.findall(template))


def fill_placeholders(template: str, params: Mapping[str, Any], quote: Any = None) -> str:
    """``template`` with each ``{name}`` replaced by that param's text (``quote``-d if given)."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in params:
            raise ParamsInvalid(f"placeholder {{{name}}} needs a param {name!r}, which is missing")
        text = param_text(params[name])
        return quote(text) if quote else text

    return _PLACEHOLDER.sub(one, template)


def cut(data: bytes, total: int, limit: int) -> str:
    """Captured output as text, noting how much was cut at the limit."""
    text = data[:limit].decode("utf-8", errors="replace")
    if total > limit:
        # controller.execution.secrets.CUT_NOTE recognises this note to hide a secret cut in half
        text += f"\n[plangate: output cut at {limit} bytes; {total - limit} more bytes dropped]"
    return text
