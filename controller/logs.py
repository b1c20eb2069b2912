"""Structured logging for the daemon: JSON lines for journald, a readable console on a TTY.

Every module logs through ``structlog.get_logger("plangate")``. :func:`configure` decides the
output once per process: one JSON object per line when stderr is not a terminal (systemd's
journal, a log shipper, a test reading the output), a coloured console line otherwise.
Standard-library loggers (watchdog, GitPython, http.server) go through the same renderer.
On the console every string is shown through :func:`controller.display.visible`: plan paths,
tool names and error messages quote plan text, which must not drive the operator's terminal
(JSON's escaping already keeps it inert in JSON lines).

Each JSON line carries at least ``event``, ``level``, ``timestamp`` (UTC, ISO 8601 with
microseconds) and ``logger``; events about a plan carry ``plan`` (its path relative to the
repo) and ``hash`` (its frozen hash). :func:`plan_context` binds both for everything logged
in a block, including from libraries the daemon calls, so callers need not repeat them.

Observers registered through :func:`add_observer` see every event, debug ones included,
before filtering (the metrics follow the engine's events this way). Values registered
through :func:`add_redactor` (the secret store's redaction) are applied to
every event as the last step before it is rendered (keys, values and the formatted
traceback and stack), so a secret never reaches a log line.
"""

from __future__ import annotations

import io
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

if "structlog" not in sys.modules and "rich" not in sys.modules:
    # structlog imports rich, when it is installed, for its own traceback and pretty-printing
    # helpers, which plangate never uses (the console's traceback is _visible_traceback, JSON
    # lines format theirs with format_exc_info), and which comes only with the development
    # tools (import-linter): hiding it while structlog imports saves about 50 ms of every
    # `run` start (STYLE: keep the CLI fast). A later `import rich` works as before.
    sys.modules["rich"] = None  # type: ignore[assignment]
    try:
        import structlog
    finally:
        del sys.modules["rich"]
import structlog

if TYPE_CHECKING:
    from structlog.typing import ExcInfo

from controller.display import visible, visible_lines

Redactor = Callable[[str], str]
Observer = Callable[[Mapping[str, Any]], None]

_redactors: list[Redactor] = []
_observers: list[Observer] = []
_lock = threading.Lock()


def add_observer(observe: Observer) -> None:
    """Call ``observe(event)`` for every event, debug ones included, before it is filtered.

    This is how metrics follow what lower layers (the engine, the git layer) log without
    those layers importing the metrics module.
    """
    with _lock:
        if observe not in _observers:
            _observers.append(observe)


def remove_observer(observe: Observer) -> None:
    with _lock:
        if observe in _observers:
            _observers.remove(observe)


def _observe(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for observe in list(_observers):
        try:
            observe(event)
        except Exception:  # an observer must never break logging
            continue
    return event


def add_redactor(redact: Redactor) -> None:
    """Apply ``redact`` to every string value of every event from now on."""
    with _lock:
        if redact not in _redactors:
            _redactors.append(redact)


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        for redact in list(_redactors):
            value = redact(value)
        return value
    if isinstance(value, dict):
        return {_redact_value(k): _redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(v) for v in value]
    if isinstance(value, tuple):  # kept a tuple: an ``exc_info`` triple must stay one
        return tuple(_redact_value(v) for v in value)
    return value


def _redact(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """The last step before rendering, after the traceback and the stack became text."""
    if not _redactors:
        return event
    return {key: _redact_value(value) for key, value in event.items()}


def use_json(stream: TextIO) -> bool:
    """JSON unless a person is watching: ``PLANGATE_LOG_FORMAT`` (json|console) decides first."""
    forced = os.environ.get("PLANGATE_LOG_FORMAT", "").lower()
    if forced in ("json", "console"):
        return forced == "json"
    isatty = getattr(stream, "isatty", None)
    return not (isatty and isatty())


def _shared_processors() -> list[Any]:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]


def _final_processors(as_json: bool) -> list[Any]:
    """What turns an event into its line: JSON, or the console with hidden characters shown.

    Redaction comes after ``format_exc_info``: an exception message quoting a secret is text
    only from there on. The console renders the traceback itself, redacted by
    :func:`_visible_traceback`.
    """
    if as_json:
        return [
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            _redact,
            structlog.processors.JSONRenderer(sort_keys=False, default=str),
        ]
    return [
        structlog.stdlib.ProcessorFormatter.remove_processors_meta,
        _redact,
        _visible_strings,
        structlog.dev.ConsoleRenderer(
            colors=True, sort_keys=False, exception_formatter=_visible_traceback
        ),
    ]


# rendered on lines of their own by the console renderer: their line breaks are kept
_MULTILINE = ("stack", "exception")


def _visible_strings(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Console only: string keys and values with hidden characters escaped (nested values
    are shown by ``repr``, which escapes them already)."""
    return {visible(key): _visible_value(key, value) for key, value in event.items()}


def _visible_value(key: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    return visible_lines(value) if key in _MULTILINE else visible(value)


def _visible_traceback(out: TextIO, exc_info: ExcInfo) -> None:
    """A plain traceback, hidden characters escaped line by line and redacted: an exception
    message can quote plan values (rich's traceback would print them raw, and its locals
    would bypass the redactors)."""
    text = io.StringIO()
    structlog.dev.plain_traceback(text, exc_info)
    out.write(visible_lines(_redact_value(text.getvalue())))


def configure(
    *, level: str | None = None, stream: TextIO | None = None, as_json: bool | None = None
) -> None:
    """Set up structlog and the standard library's logging for this process.

    ``level`` defaults to ``PLANGATE_LOG_LEVEL`` or ``info``. Safe to call more than once
    (the daemon calls it again after a config reload).
    """
    out = stream or sys.stderr
    as_json = use_json(out) if as_json is None else as_json
    level_name = (level or os.environ.get("PLANGATE_LOG_LEVEL") or "info").upper()
    numeric = logging.getLevelName(level_name)
    if not isinstance(numeric, int):
        numeric = logging.INFO
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=_shared_processors(),
            processors=_final_processors(as_json),
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    # Libraries are chatty at info; their warnings still show.
    for noisy in ("watchdog", "git", "urllib3", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(max(numeric, logging.WARNING))
    structlog.configure(
        processors=[
            _observe,
            structlog.stdlib.filter_by_level,
            *_shared_processors(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )


def get_logger(name: str = "plangate") -> Any:
    """The logger every plangate module uses."""
    return structlog.get_logger(name)


@contextmanager
def plan_context(plan: str | None, plan_hash: str | None = None) -> Iterator[None]:
    """Bind ``plan`` and ``hash`` to every event logged in this block (this thread only)."""
    values = {k: v for k, v in (("plan", plan), ("hash", plan_hash)) if v}
    with structlog.contextvars.bound_contextvars(**values):
        yield
