"""The ``http`` tool kind: one request to the catalog's method and URL (SPEC §6), with httpx.

``{param}`` placeholders in the URL are filled with the param's text, URL-encoded, dots too
(a ``/``, ``?`` or ``..`` in a value cannot change the path or add a query). The params
object is the JSON body; GET and HEAD carry no body, so their params that no placeholder
takes go in the query string, each as its text (a string as is, anything else as compact
JSON), after the catalog's own query: every param the log records reaches the server
(round 18), and a param named like a key of the catalog's query is refused (round 20). A
URL the params make too long or otherwise unparsable, or with a placeholder's path segment
left empty, is E_PARAMS_INVALID, permanent (rounds 22 and 24).
Headers: the
catalog's ``headers`` and ``Idempotency-Key``. Redirects are not followed: a tool does what
its URL says.

Result: ``{status, headers, json, text}``; ``text`` is cut at ``limits.max_result_bytes``.
A status >= 400 is E_TOOL_FAILED: permanent for 4xx (except 408, 425 and 429), temporary for
5xx; connection errors are temporary; no answer within the timeout is E_TIMEOUT.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
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
        try:  # the whole URL is parsed before anything is sent: httpx refuses some only then
            target = httpx.URL(url)
            if query:  # after the catalog's own query
                target = target.copy_merge_params(query)
        except httpx.InvalidURL as exc:  # round 22: a 70 KB value crashed the call (traceback)
            shown = url if len(url) <= 200 else f"{url[:200]}... ({len(url)} chars)"
            raise ParamsInvalid(
                f"{self.name}: its params make a URL no client can send ({exc}): {shown}"
            ) from None
        url = str(target)
        headers = {**self.spec.headers, "Idempotency-Key": ctx.idempotency_key}
        try:
            with httpx.Client(timeout=ctx.timeout, follow_redirects=False) as client:
                deadline = time.monotonic() + ctx.timeout
                response = _send(
                    client, self.method, url, headers, body, ctx.max_result_bytes, deadline
                )
        except (httpx.TimeoutException, _Overran):
            raise ToolTimeout(
                f"{self.name}: no answer from {_shown(url)} within {ctx.timeout:g}s"
            ) from None
        except httpx.HTTPError as exc:
            raise ToolError(
                f"{self.name}: {self.method} {_shown(url)} failed: {_shown(str(exc))}"
            ) from None
        result = response
        if result["status"] >= 400:
            permanent = result["status"] < 500 and result["status"] not in _RETRYABLE_4XX
            raise ToolError(
                f"{self.name}: {self.method} {_shown(url)} answered {result['status']}",
                result=result,
                permanent=permanent,
            )
        return result


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


def _send(
    client: httpx.Client,
    method: str,
    url: str,
    headers: dict[str, str],
    body: Any,
    limit: int,
    deadline: float,
) -> dict[str, Any]:
    if not any(name.lower() == "accept-encoding" for name in headers):
        headers = {**headers, "Accept-Encoding": "gzip, deflate"}  # what _decoded reads
    with client.stream(method, url, headers=headers, json=body) as response:
        kept = bytearray()
        total = 0
        for chunk in _decoded(response):
            total += len(chunk)
            if time.monotonic() > deadline:
                raise _Overran()
            if len(kept) < limit:
                kept += chunk[: limit - len(kept)]
        return {
            "status": response.status_code,
            "headers": dict(response.headers),
            "json": _json(bytes(kept)) if total <= limit else None,
            "text": cut(bytes(kept), total, limit),
        }


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
