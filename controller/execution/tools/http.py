"""The ``http`` tool kind: one request to the catalog's method and URL (SPEC §6), with httpx.

``{param}`` placeholders in the URL are filled with the param's text, URL-encoded, dots too
(a ``/``, ``?`` or ``..`` in a value cannot change the path or add a query). The params
object is the JSON body; GET and HEAD carry no body, so their params that no placeholder
takes go in the query string, each as its text (a string as is, anything else as compact
JSON), after the catalog's own query: every param the log records reaches the server
(round 18), and a param named like a key of the catalog's query is refused (round 20). A
URL the params make too long or otherwise unparsable, or with a placeholder's path segment
left empty, is E_PARAMS_INVALID, permanent (rounds 22 and 24); so is a host no client can
send (round 47: a label empty, over 63 characters or no valid IDNA): the request is built,
host encoded, before anything is sent (:meth:`HttpTool.request`).
Headers: the
catalog's ``headers`` and ``Idempotency-Key``. Redirects are not followed: a tool does what
its URL says.

Result: ``{status, headers, json, text}``; ``text`` is cut at ``limits.max_result_bytes``.
A status >= 400 is E_TOOL_FAILED: permanent for 4xx (except 408, 425 and 429), temporary for
5xx; connection errors are temporary; no complete answer within the timeout is E_TIMEOUT:
the timeout bounds the whole exchange, wall clock (connecting, TLS, sending, the status line
and headers, 1xx answers included, and the body; round 53: httpx's timeouts are per read, so
an answer trickled in a header line at a time never tripped them), a
:class:`~controller.execution.tools.wallclock.Deadline` shutting the socket down when it
passes.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, urlsplit

from controller.display import masked_url
from controller.errors import ParamsInvalid, ToolTimeout
from controller.execution.tools import (
    ToolError,
    cut,
    fill_placeholders,
    param_text,
    placeholder_names,
    strict_json,
)
from controller.execution.tools.wallclock import Deadline

if TYPE_CHECKING:
    import httpx

    from controller.execution.tools import CallContext
    from controller.settings import ToolSpec

_NO_BODY = ("GET", "HEAD")
_RETRYABLE_4XX = (408, 425, 429)


class HttpTool:
    def __init__(self, name: str, spec: ToolSpec) -> None:
        assert spec.url
        self.name = name
        self.spec = spec
        self.method = spec.method.upper()

    def url(self, params: dict[str, Any]) -> str:
        """The catalog's URL with the params filled in, each one segment of what it fills:
        ``/``, ``?``, ``#`` and ``.`` are percent-encoded (round 14: a value ``..`` or ``.``
        was a dot segment the client resolved, leaving the catalog's path), and a filled URL
        whose path still holds a dot segment (``{a}.{b}`` with empty values) is refused."""
        assert self.spec.url
        url = fill_placeholders(self.spec.url, params, _one_segment)
        path = _path(url).split("/")
        if any(segment in (".", "..") for segment in path):
            raise ParamsInvalid(
                f"the URL {url!r} has a '.' or '..' segment made by its placeholders: a client "
                "would resolve it to another path than the catalog's"
            )
        # each placeholder fills its segment ("/" is encoded, so the segments line up):
        # one filled with nothing is gone (round 24: /hooks/{c}/post sent to /hooks//post,
        # which servers merge into /hooks/post; /items/{c} to the collection /items/)
        template = _path(self.spec.url).split("/")
        if any(placeholder_names(t) and not s for t, s in zip(template, path, strict=False)):
            raise ParamsInvalid(
                f"the URL {_shown(repr(url))} has an empty path segment where a placeholder "
                f"of {_shown(repr(self.spec.url))} is: a server would read another path than "
                "the catalog's"
            )
        return url

    def query(self, params: dict[str, Any]) -> dict[str, str]:
        """A GET's or HEAD's query: each param no URL placeholder takes, as its text. A param
        named like a query key the catalog's URL sets is refused: it would replace the
        operator's value (round 20: ``?dry_run=true`` became ``dry_run=false``)."""
        assert self.spec.url
        taken = placeholder_names(self.spec.url)
        query = {name: param_text(value) for name, value in params.items() if name not in taken}
        fixed = {key for key, _ in parse_qsl(urlsplit(self.spec.url).query, True)}
        if clash := sorted(fixed & set(query)):
            raise ParamsInvalid(
                f"{self.name}: param {clash[0]!r} names a query key the catalog's URL sets "
                f"({_shown(self.spec.url)}); the catalog's value stays: remove the param"
            )
        return query

    def call(self, params: dict[str, Any], ctx: CallContext) -> Any:
        import httpx

        url = self.url(params)
        body = None if self.method in _NO_BODY else params
        query = self.query(params) if body is None else {}
        headers = {**self.spec.headers, "Idempotency-Key": ctx.idempotency_key}
        if not any(name.lower() == "accept-encoding" for name in headers):
            headers = {**headers, "Accept-Encoding": "gzip, deflate"}  # what _decoded reads
        deadline = Deadline(ctx.timeout)
        try:
            try:
                with httpx.Client(timeout=ctx.timeout, follow_redirects=False) as client, deadline:
                    request = self.request(client, url, query, headers, body)
                    url = str(request.url)
                    request.extensions["trace"] = _tracer(deadline)
                    response = _send(client, request, ctx.max_result_bytes, deadline)
            except (httpx.HTTPError, UnicodeDecodeError):
                if deadline.cut:  # the deadline shut the socket: whatever the client made of it
                    raise _Overran() from None
                raise
        except (httpx.TimeoutException, _Overran):
            raise self._timeout(url, ctx.timeout, deadline) from None
        except httpx.HTTPError as exc:  # transport, protocol, decoding: E_TOOL_FAILED
            raise ToolError(
                f"{self.name}: {self.method} {_shown(url)} failed: {_shown(str(exc))}"
            ) from None
        except UnicodeDecodeError as exc:  # not the URL's: the answer's
            raise ToolError(
                f"{self.name}: {self.method} {_shown(url)} failed: {_shown(_reason(exc))}"
            ) from None
        except (httpx.InvalidURL, UnicodeError) as exc:  # checked before sending: not reached
            raise ParamsInvalid(
                f"{self.name}: the client refused the URL {_cut(_shown(url))} while sending "
                f"it ({_reason(exc)}): placeholders {self._named(None)}"
            ) from None
        except (httpx.StreamError, httpx.CookieConflict) as exc:  # httpx's others: no bug of ours
            raise ToolError(
                f"{self.name}: {self.method} {_shown(url)} failed: {_shown(_reason(exc))}"
            ) from None
        if deadline.cut:  # a read-until-close body the cut ended early is no answer
            raise self._timeout(url, ctx.timeout, deadline)
        result = response
        if result["status"] >= 400:
            permanent = result["status"] < 500 and result["status"] not in _RETRYABLE_4XX
            raise ToolError(
                f"{self.name}: {self.method} {_shown(url)} answered {result['status']}",
                result=result,
                permanent=permanent,
            )
        return result

    def _timeout(self, url: str, seconds: float, deadline: Deadline) -> ToolTimeout:
        """E_TIMEOUT naming the phase the exchange was in when its time ran out."""
        return ToolTimeout(
            f"{self.name}: no complete answer from {_shown(url)} within {seconds:g}s "
            f"(cut while {deadline.cut or deadline.phase}: the timeout bounds the whole "
            "exchange)"
        )

    def request(
        self,
        client: httpx.Client,
        url: str,
        query: dict[str, str],
        headers: dict[str, str],
        body: Any,
    ) -> httpx.Request:
        """The request as httpx will send it, built before anything is sent: every error
        building it can raise is the params' (E_PARAMS_INVALID, permanent), named by the
        placeholders that filled the failing part of the URL. httpx refuses some URLs only
        while parsing (round 22: too long), decodes an ``xn--`` host label with ``idna``
        when it picks a transport, and the socket encodes the host with Python's ``idna``
        codec when it resolves it (round 47: a label empty, over 63 characters or no valid
        Punycode raised ``UnicodeError`` while sending: a traceback, "internal error")."""
        import httpx

        try:  # the whole URL is parsed before anything is sent: httpx refuses some only then
            target = httpx.URL(url)
            if query:  # after the catalog's own query
                target = target.copy_merge_params(query)
        except (httpx.InvalidURL, ValueError) as exc:  # UnicodeError and idna's are ValueErrors
            part = _failed_part(str(exc))
            raise ParamsInvalid(
                f"{self.name}: its params make a URL no client can send ({_reason(exc)}): "
                f"{_cut(_shown(url))}; placeholders {self._named(part)}"
            ) from None
        host = target.raw_host.decode("ascii", errors="replace")
        try:
            target.host  # noqa: B018  # httpx decodes an ``xn--`` label here (idna)
            host.encode("idna")  # what socket.getaddrinfo does with it when it resolves it
        except (UnicodeError, ValueError) as exc:
            raise ParamsInvalid(
                f"{self.name}: its params make a host no client can send, {_cut(host)!r} "
                f"({_reason(exc)}): placeholders {self._named('host')} fill it; each label "
                "of a host (between dots) must be 1 to 63 characters and valid IDNA (an "
                "'xn--' label valid Punycode)"
            ) from None
        try:
            return client.build_request(self.method, target, headers=headers, json=body)
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            raise ParamsInvalid(
                f"{self.name}: its params make a request no client can send "
                f"({_shown(_reason(exc))})"
            ) from None

    def _named(self, part: str | None) -> str:
        """The placeholders of the catalog's URL in ``part`` (all of them if None), as text."""
        assert self.spec.url
        template = _parts(self.spec.url).get(part, "") if part else self.spec.url
        names = sorted(placeholder_names(template)) or sorted(placeholder_names(self.spec.url))
        return ", ".join(f"{{{name}}}" for name in names) or "(none)"


def _parts(url: str) -> dict[str, str]:
    """The userinfo, host (with its port), path, query and fragment of a URL as written."""
    rest, _, fragment = url.partition("#")
    rest, _, query = rest.partition("?")
    rest = rest.split("//", 1)[-1]
    netloc, _, path = rest.partition("/")
    userinfo, _, host = netloc.rpartition("@")
    return {"userinfo": userinfo, "host": host, "path": path, "query": query, "fragment": fragment}


def _failed_part(message: str) -> str | None:
    """The part of a URL httpx's message names (``URL component 'path' too long``...)."""
    for part in ("userinfo", "path", "query", "fragment"):
        if f"'{part}'" in message:
            return part
    if any(word in message for word in ("host", "IDNA", "IPv4", "IPv6", "port", "'authority'")):
        return "host"
    return None


def _reason(exc: BaseException) -> str:
    """An exception as one short ASCII line (idna's messages quote the code points)."""
    return _cut(ascii(f"{type(exc).__name__}: {exc}")[1:-1], 160)


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def _shown(text: str) -> str:
    """``text`` with the credentials of any URL in it masked (``***@host``, its whole
    userinfo since round 41, ``?key=***``): a catalog URL may carry them, and errors are
    committed (rounds 25, 26, 41)."""
    return masked_url(text)


def _path(url: str) -> str:
    """The path of ``url`` without its leading ``/`` (nothing of the query or fragment)."""
    return url.split("?", 1)[0].split("#", 1)[0].split("//", 1)[-1].partition("/")[2]


class _Overran(Exception):
    """The whole exchange took longer than the timeout (httpx's timeouts are per read)."""


#: httpcore's trace steps (``connection.connect_tcp``, ``http11.receive_response_headers``,
#: ``http2.…``), as the phase a cut names.
_PHASES = {
    "connect_tcp": "connecting",
    "start_tls": "in the TLS handshake",
    "send_request_headers": "sending the request",
    "send_request_body": "sending the request",
    "receive_response_headers": "waiting for the status line and headers",
    "receive_response_body": "reading the body",
}


def _tracer(deadline: Deadline) -> Callable[[str, dict[str, Any]], None]:
    """httpcore's ``trace`` extension, telling ``deadline`` the phase and the socket the
    exchange opens (before any TLS handshake, which the deadline cuts too)."""

    def trace(event: str, info: dict[str, Any]) -> None:
        step, _, when = event.rpartition(".")
        step = step.rpartition(".")[2]
        if when == "started" and step in _PHASES:
            deadline.enter(_PHASES[step])
        elif when == "complete" and step == "connect_tcp":
            deadline.watch(info["return_value"].get_extra_info("socket"))

    return trace


def _send(
    client: httpx.Client, request: httpx.Request, limit: int, deadline: Deadline
) -> dict[str, Any]:
    response = client.send(request, stream=True)
    try:
        kept = bytearray()
        total = 0
        for chunk in _decoded(response):
            total += len(chunk)
            if deadline.cut or time.monotonic() > deadline.at:  # decoding buffered data
                raise _Overran()
            if len(kept) < limit:
                kept += chunk[: limit - len(kept)]
        return {
            "status": response.status_code,
            "headers": dict(response.headers),
            "json": _json(bytes(kept)) if total <= limit else None,
            "text": cut(bytes(kept), total, limit),
        }
    finally:
        response.close()


#: The most bytes one step of decoding a response body produces: whatever the compression
#: ratio, a body is decoded a step at a time, the time bound checked between steps (round 27:
#: a 1,100-byte body sent ``Content-Encoding: gzip, gzip`` inflated to 600 MB in one call,
#: 1.2 GB of the controller's memory).
DECODE_STEP = 64 * 1024


def _decoded(response: httpx.Response) -> Iterator[bytes]:
    """The body as its content codings (gzip, deflate, stacked or not) decode it, in pieces
    of at most :data:`DECODE_STEP` bytes at every layer; any other coding is refused."""
    import httpx

    body: Iterator[bytes] = response.iter_raw()
    codings = response.headers.get_list("content-encoding", split_commas=True)
    for coding in reversed([c.strip().lower() for c in codings if c.strip()]):
        if coding in ("gzip", "x-gzip"):
            body = _inflate(body, zlib.MAX_WBITS | 16)
        elif coding == "deflate":
            body = _inflate(body, zlib.MAX_WBITS, fallback=-zlib.MAX_WBITS)
        elif coding != "identity":
            shown = coding if len(coding) <= 40 else f"{coding[:40]}..."
            raise httpx.DecodingError(f"the answer's content encoding {shown!r} is not read")
    return body


def _inflate(source: Iterator[bytes], wbits: int, fallback: int | None = None) -> Iterator[bytes]:
    """One zlib layer of a body, a bounded step at a time (``deflate`` is zlib-wrapped or, as
    some servers send it, raw: ``fallback``, tried when the first data is no zlib stream)."""
    import httpx

    inflater, first, fed = zlib.decompressobj(wbits), True, False
    try:
        for data in source:
            fed = fed or bool(data)
            if first and fallback is not None and data:
                first = False
                try:
                    out = inflater.decompress(data, DECODE_STEP)
                except zlib.error:
                    inflater = zlib.decompressobj(fallback)
                    out = inflater.decompress(data, DECODE_STEP)
                data = inflater.unconsumed_tail
                if out:
                    yield out
            while data and not inflater.eof:  # anything after the stream's end is not read
                out = inflater.decompress(data, DECODE_STEP)
                data = inflater.unconsumed_tail
                if out:
                    yield out
        while not inflater.eof and (out := inflater.decompress(b"", DECODE_STEP)):
            yield out  # output zlib still holds
    except zlib.error as exc:
        raise httpx.DecodingError(f"the answer's body could not be decoded ({exc})") from None
    if fed and not inflater.eof:  # a cut answer is no answer (HEAD or 204: no body at all)
        raise httpx.DecodingError("the answer's body ended inside its compressed data")


def _json(data: bytes) -> Any:
    return strict_json(data)


def _one_segment(text: str) -> str:
    return quote(text, safe="").replace(".", "%2E")
