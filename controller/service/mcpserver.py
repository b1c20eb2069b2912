"""``plangate mcp``: the agent's interface as an MCP server over stdio (official ``mcp`` SDK).

Tools: ``catalog``, ``validate``, ``submit``, ``status``, ``log``, ``wait``
(:mod:`controller.service.agentapi` does the work). There is deliberately no tool that
approves, rejects or aborts. A plangate error is returned as an MCP tool error whose text
is the one JSON error shape of SPEC §14 (``{"ok": false, "code", "message", "path",
"line", "remedy"}``), so the agent can act on the code and the remedy. Arguments that do
not fit a tool's parameters (a number for ``slug``, a word for ``timeout``) are that shape
too, ``E_USAGE`` naming the argument (:func:`bad_arguments`), never the SDK's validation
text. Nothing is printed on stdout except the protocol.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from controller.errors import PlangateError, UsageError
from controller.settings.fields import StrictFlag, StrictNumber

if TYPE_CHECKING:
    from controller.settings import Config

INSTRUCTIONS = """\
plangate runs plans that humans approve in git. Write a plan (PLAN.yml, or ActionPlan,
toon-plan, Plan Contract, Agent Plan or plan-then-execute JSON/YAML/TOON/markdown), check it
with `validate` until it has no errors, then `submit` it. A person approves it; `wait` for
its status to change and read the run's outputs with `log`. You cannot approve plans.
Use only tools from `catalog`; give every action a clear `why`."""


def build_server(config: Config) -> Any:
    """The MCP server object with the six tools registered."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from controller.service.agentapi import AS_RECORDED, OWN_QUOTES, OWN_TEXT, AgentApi

    class PlangateServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            """The one place a tool's arguments that fail the SDK's checks become the JSON
            error shape (round 61: pydantic's text and URLs reached the agent), and so is a
            tool the server lacks (round 111: "Unknown tool: approve", uncoded)."""
            names = [tool.name for tool in await self.list_tools()]
            if name not in names:
                shape = json.dumps(unknown_tool(name, names).to_json())
                raise ToolError(shape)  # the shape alone: the name is the agent's, any text
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                problems = _argument_problems(exc.__cause__)
                if problems is None:
                    raise
                shape = json.dumps(bad_arguments(name, problems).to_json())
                raise ToolError(f"Error executing tool {name}: {shape}") from None

    api = AgentApi(config)
    server = PlangateServer("plangate", instructions=INSTRUCTIONS, version=_version())

    def guarded(call: Any) -> dict[str, Any]:
        """Every tool's answer (and error), as the agent reads it: through the redactor of
        the controller's records, the one choke point of what the server says (round 49: a
        catalog's ``params_schema`` holding a secret's value was quoted by ``validate``'s
        and ``submit``'s problems), except the parts that quote the agent's own text
        (``agentapi.OWN_TEXT``, built with the catalog's parts redacted): masked, the
        agent's guess of a secret would read apart from a wrong one (round 61), and the
        values an answer names its own (``agentapi.OWN_QUOTES``) or an error quotes
        (``PlangateError.quoted``): a path or status the agent sent, a key of its source
        (round 62), and the controller's committed record of a run (``agentapi.AS_RECORDED``,
        round 64: redacted when written, again it masked the author's ``why``). A secrets
        file that cannot be read is the error."""
        from controller.errors import redacted_around
        from controller.execution.secrets import redactor_for

        try:
            answer = dict(call())
            own = answer.pop(OWN_QUOTES, {})
            redactor = redactor_for(config)
            return {
                k: v if k in OWN_TEXT or k in AS_RECORDED else _kept(v, own.get(k), redactor.data)
                for k, v in answer.items()
            }
        except PlangateError as exc:
            shape = json.dumps(exc.to_json())
            try:
                shape = redacted_around(
                    shape, exc.quoted(), redactor_for(config).text, exc.catalog_quoted()
                )
            except PlangateError as unreadable:
                shape = json.dumps(unreadable.to_json())
            raise ToolError(shape) from None

    @server.tool()
    def catalog() -> dict[str, Any]:
        """The tools a plan may call: name, description, params_schema, risk, estimate."""
        return guarded(api.catalog)

    @server.tool()
    def validate(plan: str, format: str | None = None, slug: str | None = None) -> dict[str, Any]:
        """Check plan text (PLAN.yml or any format plangate converts; `format` to force one of
        actionplan, toon-plan, plan-contract, agent-plan, pte, plan.yml). Returns valid, hash,
        and errors with code, message, path (YAML location), line and remedy. `slug`: the one
        you will submit it under, for the approvals needed in that folder."""
        return guarded(lambda: api.validate(plan, format, slug))

    # ``pull_request`` and ``timeout`` are StrictFlag / StrictNumber: an argument of another
    # JSON type is E_USAGE, never converted (round 104; the SDK resolves the annotations in
    # this module's globals)
    @server.tool()
    def submit(
        plan: str,
        slug: str,
        format: str | None = None,
        pull_request: StrictFlag = False,
        note: str | None = None,
    ) -> dict[str, Any]:
        """Commit the plan as plans/<slug>/PLAN.yml under the agent's identity, on the watched
        branch (or on a new branch for a pull request). Returns path, hash, risk, commit and
        the approvals it needs. An invalid plan is not committed: its errors are returned."""
        return guarded(lambda: api.submit(plan, slug, format, pull_request, note))

    @server.tool()
    def status(path: str | None = None) -> dict[str, Any]:
        """Every plan (or the one at `path`, e.g. plans/rotate-keys) with its status, hash,
        approver, last event and what it waits for."""
        return guarded(lambda: api.status(path))

    @server.tool()
    def log(path: str) -> dict[str, Any]:
        """A plan's status, each action's outputs and its EXECUTION_LOG.md."""
        return guarded(lambda: api.log(path))

    @server.tool()
    async def wait(
        path: str, timeout: StrictNumber = 60.0, status: str | None = None
    ) -> dict[str, Any]:
        """Block until the plan's status differs from `status` (default: its status now) or
        `timeout` seconds pass (at most 600). Returns the status and whether it changed."""
        return await _stoppable(lambda stop: guarded(lambda: api.wait(path, timeout, status, stop)))

    return server


async def _stoppable(work: Any) -> Any:
    """``work(stop)`` in a worker thread, ``stop`` (a threading.Event) set the moment the
    call is cancelled (``notifications/cancelled``, the session's end): round 97, a
    cancelled ``wait`` polled on to its timeout in a thread nobody could stop, and the
    session waited for it. The thread is never abandoned: it sees ``stop`` and returns."""
    import threading

    import anyio
    import anyio.to_thread

    stop = threading.Event()

    async def watch() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            stop.set()

    def caught() -> tuple[Any, Exception | None]:
        try:
            return work(stop), None
        except Exception as exc:  # raised below, outside the task group (no ExceptionGroup)
            return None, exc

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        try:
            answer, error = await anyio.to_thread.run_sync(caught)
        finally:
            group.cancel_scope.cancel()
    if error is not None:
        raise error
    return answer


def _kept(value: Any, own: Any, redact: Any) -> Any:
    """``value`` through ``redact`` (the redactor's ``data``), but for the values ``own``
    names the agent's or the plan's own text: a tuple of strings (a string value, or each
    string of a list, that IS one of them, whole, so no secret can straddle it, is kept as
    written), a mapping of such by key, or a list of such by index (a status row each)."""
    if not own:
        return redact(value)
    import secrets

    nonce = secrets.token_hex(8)  # a placeholder no tool output can spell
    held: dict[str, str] = {}

    def hold(v: Any, spec: Any) -> Any:
        if isinstance(spec, tuple) and isinstance(v, str) and v in spec:
            held[mark := f"<own:{nonce}:{len(held)}>"] = v
            return mark
        if isinstance(spec, tuple) and isinstance(v, list):
            return [hold(x, spec) for x in v]
        if isinstance(spec, dict) and isinstance(v, dict):
            return {k: hold(x, spec.get(k, ())) for k, x in v.items()}
        if isinstance(spec, list) and isinstance(v, list) and len(spec) == len(v):
            return [hold(x, s) for x, s in zip(v, spec, strict=True)]
        return v

    def give(v: Any) -> Any:
        if isinstance(v, str):
            return held.get(v, v)
        if isinstance(v, dict):
            return {k: give(x) for k, x in v.items()}
        return [give(x) for x in v] if isinstance(v, list) else v

    return give(redact(hold(value, own)))


def _argument_problems(cause: BaseException | None) -> list[tuple[str, str]] | None:
    """(argument, what it should be) of each failure, when ``cause`` is the SDK's argument
    validation (a pydantic ValidationError, read by its ``errors()``: pydantic is imported
    by the models only); None for anything else."""
    errors = getattr(cause, "errors", None)
    if type(cause).__name__ != "ValidationError" or not callable(errors):
        return None
    found = []
    for error in errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error.get("loc", ()))
        found.append((where or "arguments", _expected(error.get("type", ""))))
    return found


def _expected(kind: str) -> str:
    """What a pydantic error type asks for, in plain words."""
    if kind == "missing":
        return "is required"
    for word in ("string", "bool", "int", "float", "dict", "list"):
        if kind.startswith(word):
            return f"must be {_NOUNS[word]}"
    return "has the wrong type or value"


_NOUNS = {
    "string": "a string",
    "bool": "true or false",
    "int": "an integer",
    "float": "a number",
    "dict": "an object",
    "list": "a list",
}


def bad_arguments(tool: str, problems: list[tuple[str, str]]) -> UsageError:
    """E_USAGE for arguments that do not fit ``tool``'s parameters, naming each one."""
    said = "; ".join(f"{name} {expected}" for name, expected in problems)
    first = problems[0][0] if problems else ""
    return UsageError(
        f"{tool}: {said}",
        path=first,
        remedy=f"call {tool} with the arguments its input schema (tools/list) describes",
    )


def unknown_tool(name: str, names: list[str]) -> UsageError:
    """E_USAGE for a call of a tool the server does not have, listing the ones it has."""
    shown = name if len(name) <= 100 else name[:100] + "..."
    return UsageError(
        f"{shown!r}: no such tool; the tools are {', '.join(names)}",
        remedy=f"call one of {', '.join(names)} (tools/list describes them); approving, "
        "rejecting and aborting a plan is a person's commit, never a tool",
    )


def serve(config: Config) -> None:
    """Run the server on stdin/stdout until the client closes it, answering every request
    read before it did: a client that writes its requests and closes stdin (``printf ... |
    plangate mcp``) gets each reply. (The SDK ends the session at end of input and drops
    the replies of requests still being handled.)"""
    import anyio

    with _claimed_stdin() as wire:
        anyio.run(_serve_stdio, build_server(config), wire)


async def _serve_stdio(server: Any, wire: BinaryIO | None = None) -> None:
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

    lowlevel = server._lowlevel_server  # run_stdio_async's own server, fed our streams
    open_ids: set[Any] = set()
    answered = anyio.Event()
    to_server, server_in = anyio.create_memory_object_stream[Any](0)
    server_out, from_server = anyio.create_memory_object_stream[Any](0)

    def settle(request_id: Any) -> None:
        nonlocal answered
        open_ids.discard(request_id)
        if not open_ids:
            answered.set()

    lines = None if wire is None else _RequestLines(wire)
    async with stdio_server(stdin=lines) as (wire_in, wire_out):  # type: ignore[arg-type]
        if lines is not None:
            lines.answer_on(wire_out)

        async def inbound() -> None:
            nonlocal answered
            async with to_server:
                async for item in wire_in:
                    answer = _answered_here(item)
                    if answer is not None:
                        await _send(wire_out, answer)
                        continue
                    message = getattr(item, "message", None)
                    if isinstance(message, JSONRPCRequest):
                        if not open_ids:
                            answered = anyio.Event()
                        open_ids.add(message.id)
                    elif isinstance(message, JSONRPCNotification) and (
                        message.method == "notifications/cancelled"
                    ):
                        settle((message.params or {}).get("requestId"))
                    await to_server.send(item)
                if open_ids:  # end of input: the replies still owed, then the end
                    await answered.wait()

        sent = anyio.Event()

        async def outbound() -> None:
            async with wire_out, from_server:
                async for item in from_server:
                    message = getattr(item, "message", None)
                    await _send(wire_out, item)
                    if isinstance(message, JSONRPCResponse | JSONRPCError):
                        settle(message.id)
            sent.set()

        async with anyio.create_task_group() as group:
            group.start_soon(inbound)
            group.start_soon(outbound)
            await lowlevel.run(server_in, server_out, lowlevel.create_initialization_options())
            await sent.wait()  # every reply on the wire; input no one will answer is not read
            group.cancel_scope.cancel()


def _answered_here(item: Any) -> Any:
    """The answer plangate gives ``item`` (what the SDK's reader made of one line) itself,
    or None to hand it to the SDK. A failure here costs that line alone: it is answered
    ``-32603`` (round 125: an exception in the server's read of one line ended the
    session, every request before and after it unanswered)."""
    try:
        if isinstance(item, Exception):  # a line that is no JSON-RPC message
            return _unreadable(item)
        # answered here: the SDK's answer has no code
        return _call_shape_refused(getattr(item, "message", None))
    except Exception:
        return _internal_error(_request_id_of(item))


def _request_id_of(item: Any) -> Any:
    from mcp_types import JSONRPCRequest

    message = getattr(item, "message", None)
    return message.id if isinstance(message, JSONRPCRequest) else None


async def _send(stream: Any, item: Any) -> None:
    """``item`` onto the SDK's writer as it can write it (:func:`_writable`); nothing for a
    server notification that cannot be written."""
    writable = _writable(item)
    if writable is not None:
        await stream.send(writable)


def _writable(item: Any) -> Any:
    """``item``, a reply or a server message, as the SDK's stdout writer can write it: an
    exception there ends the session (a string holding a lone surrogate, a value past
    pydantic's serialization depth), so a reply that cannot be written as JSON is that
    request's ``-32603`` instead, and a handler's exception, which the SDK answers with
    code 0, is ``-32603`` as JSON-RPC 2.0 asks."""
    from mcp_types import JSONRPCError, JSONRPCResponse

    message = item.message
    if isinstance(message, JSONRPCError) and message.error.code == 0:
        item = _internal_error(message.id, message.error.message)
    if _serializes(item.message):
        return item
    if not isinstance(message, JSONRPCResponse | JSONRPCError):
        return None
    why = "the reply could not be written as JSON"
    failed = _internal_error(message.id, why)
    return failed if _serializes(failed.message) else _internal_error(None, why)


def _serializes(message: Any) -> bool:
    try:
        message.model_dump_json(by_alias=True, exclude_unset=True)
    except Exception:  # pydantic's serialization error (or anything else): not writable
        return False
    return True


def _internal_error(request_id: Any, why: str = "") -> Any:
    """JSON-RPC 2.0's ``-32603 Internal error`` for the request ``request_id`` (or null)."""
    from mcp.shared.message import SessionMessage
    from mcp_types import ErrorData, JSONRPCError

    error = ErrorData(code=-32603, message=f"Internal error: {why}" if why else "Internal error")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _parse_error(request_id: str | int | None = None, why: str = "") -> Any:
    """JSON-RPC 2.0's ``-32700 Parse error``, saying why when a bound of plangate's refused
    the line (:mod:`controller.service.rpclines`), with the request's id when it was read."""
    from mcp.shared.message import SessionMessage
    from mcp_types import ErrorData, JSONRPCError

    error = ErrorData(code=-32700, message=f"Parse error: {why}" if why else "Parse error")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _unreadable(error: Exception) -> Any:
    """The JSON-RPC 2.0 answer to a line the SDK could not read as a message (its stdio
    reader hands the read stream the exception; the SDK drops it, round 97: no reply at
    all): ``-32700 Parse error`` for a line that is no JSON, ``-32600 Invalid Request`` for
    JSON that is no message (a ``method`` that is no string, ``params`` no object). The id
    is the line's when it is a request's own (a string or integer beside a string
    ``method``), null otherwise, as JSON-RPC 2.0 §5 asks. (A request with ``id: null``
    never comes here: the SDK's schema reads it as a notification, its id dropped, and a
    notification has no reply; docs/agents.md.)"""
    errors = getattr(error, "errors", None)
    found = errors(include_url=False) if callable(errors) else []
    if not found or any(e.get("type") == "json_invalid" for e in found):
        return _parse_error()
    request_id = None
    for e in found:
        line = e.get("input")
        if isinstance(line, dict) and isinstance(line.get("method"), str):
            candidate = line.get("id")
            if isinstance(candidate, str) or (
                isinstance(candidate, int) and not isinstance(candidate, bool)
            ):
                request_id = candidate
                break
    return _invalid_request(request_id)


def _invalid_request(request_id: str | int | None) -> Any:
    from mcp.shared.message import SessionMessage
    from mcp_types import ErrorData, JSONRPCError

    error = ErrorData(code=-32600, message="Invalid Request")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


@contextlib.contextmanager
def _claimed_stdin() -> Iterator[BinaryIO | None]:
    """The wire (stdin) read from a private duplicate while fd 0 points at the null device,
    as the SDK's own claim does (a git child reads EOF, never the agent's requests); so
    :class:`_RequestLines` reads each raw line before the SDK does. None (the SDK reads
    stdin itself) when the descriptors cannot be duplicated. The duplicate is never
    closed: a worker thread may still block reading it after the server ends."""
    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        yield None
        return
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
    except OSError:
        yield None
        return
    try:
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        with contextlib.suppress(OSError):
            os.dup2(private, 0)


class _RequestLines:
    """The lines of the wire, as the SDK's stdio reader takes them, less the requests whose
    ``id`` is of no JSON-RPC id type (a number with a fraction, ``true``, a list, an
    object), answered here ``-32600 Invalid Request`` with id null (JSON-RPC 2.0 §5: the id
    cannot be told). Round 118, rpc-odd-id-unanswered: the SDK's schema read such a request
    as a notification, its id dropped, and it got no reply at all (nor ran). ``id: null``
    is not one of them: that stays a notification (docs/agents.md). Less, too, the lines no
    reader of the chain can take (round 125: :func:`_refusal_of`), each answered here."""

    def __init__(self, wire: BinaryIO) -> None:
        import anyio

        self._text = io.TextIOWrapper(wire, encoding="utf-8", errors="replace")
        self._ready = anyio.Event()
        self._replies: Any = None

    def answer_on(self, replies: Any) -> None:
        """The stream the server's replies go out on (the SDK's stdout writer's)."""
        self._replies = replies
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        from controller.service.rpclines import MAX_LINE_CHARS

        while line := await self._readline(MAX_LINE_CHARS + 1):
            if len(line) > MAX_LINE_CHARS and not line.endswith("\n"):
                await self._drop_rest()  # never held whole: a line is read up to the bound
                answer = _parse_error(None, f"a line longer than {MAX_LINE_CHARS} characters")
            else:
                answer = _refusal_of(line)
            if answer is not None:
                await self._ready.wait()
                await _send(self._replies, answer)
                continue
            yield line

    async def _drop_rest(self) -> None:
        """Read the rest of the line being read, to its newline (or the end), keeping none."""
        while (part := await self._readline(1 << 16)) and not part.endswith("\n"):
            pass

    async def _readline(self, most: int) -> str:
        """The next line, or its first ``most`` characters (in a worker thread, as the SDK's
        own reader reads)."""
        import anyio.to_thread

        return await anyio.to_thread.run_sync(self._text.readline, most)


def _refusal_of(line: str) -> Any:
    """The answer plangate gives ``line`` before any parser reads it, or None to hand it to
    the SDK: a line past a bound every reader can take (:func:`rpclines.screen`: too deep, a
    number too long) is ``-32700`` saying why, a request with an id of no id type
    ``-32600``. A failure here costs that line alone (``-32603``), never the session."""
    from controller.service import rpclines

    try:
        unread = rpclines.screen(line)
        if unread is not None:
            return _parse_error(unread.request_id, unread.why)
        return _invalid_request(None) if _has_odd_id(line) else None
    except Exception:
        return _internal_error(None)


def _has_odd_id(line: str) -> bool:
    """Is ``line`` a request (an object with a string ``method``) whose ``id`` is there and
    neither a string, an integer nor null?"""
    try:
        message = json.loads(line)
    except ValueError:
        return False
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return False
    request_id = message.get("id")
    if request_id is None or isinstance(request_id, str):
        return False
    return isinstance(request_id, bool) or not isinstance(request_id, int)


def _call_shape_refused(message: Any) -> Any:
    """The answer to a ``tools/call`` whose ``name`` is no string or whose ``arguments`` are
    no object, or None for any other message. Round 118, rpc-arguments-shape-uncoded: the
    SDK refused them ``-32602 "Invalid request parameters"`` with no data, where every other
    argument that does not fit is ``E_USAGE`` in the error shape (:func:`bad_arguments`).
    A tool error as those are: the shape alone for a name (it is the agent's, any text, as
    :func:`unknown_tool`'s), ``Error executing tool <name>: `` and the shape for the
    arguments of a named tool."""
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCRequest, JSONRPCResponse

    if not isinstance(message, JSONRPCRequest) or message.method != "tools/call":
        return None
    params = message.params or {}
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str):
        error = UsageError(
            f"tools/call: name must be a string, the tool's name (not {_json_kind(name)})",
            path="name",
            remedy='send {"name": "<tool>", "arguments": {...}}, e.g. {"name": "status", '
            '"arguments": {}}; tools/list describes the tools',
        )
        text = json.dumps(error.to_json())
    elif arguments is not None and not isinstance(arguments, dict):
        said = f"must be an object, not {_json_kind(arguments)}"
        error = bad_arguments(name, [("arguments", said)])
        text = f"Error executing tool {name}: {json.dumps(error.to_json())}"
    else:
        return None
    result = {"content": [{"type": "text", "text": text}], "isError": True}
    return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result))


def _json_kind(value: Any) -> str:
    """The JSON type of ``value``, as a message names it."""
    kinds = ((bool, "true or false"), (int | float, "a number"), (str, "a string"),
             (list, "a list"), (dict, "an object"))  # fmt: skip
    return next((said for kind, said in kinds if isinstance(value, kind)), "null")


def _version() -> str:
    from controller import __version__

    return __version__
