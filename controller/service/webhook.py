"""The push webhook (``webhook.listen``): a forge tells the daemon to fetch now.

Remote mode fetches every ``remote.poll_interval``; a webhook makes the wait a few
milliseconds instead. The endpoint accepts ``POST`` on any path (use ``/webhook``) and
authenticates the request with the shared secret from the environment variable named by
``webhook.secret_env`` (default ``PLANGATE_WEBHOOK_SECRET``), in one of three ways:

- GitHub: ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>``;
- GitLab: ``X-Gitlab-Token: <secret>``;
- anything else (a CI job, ``curl``): ``X-Plangate-Secret: <secret>`` or
  ``Authorization: Bearer <secret>``.

Answers: ``202`` accepted (a fetch and reconcile are scheduled), ``200`` for GitHub's
``ping``, ``202`` with ``"ignored"`` for a push to another branch, ``401`` when no
credential is present, ``403`` when it is wrong, ``405`` for other methods, ``411`` without
``Content-Length``, ``400`` for two different lengths or a length beside
``Transfer-Encoding`` (a proxy could frame the body otherwise), ``413`` above
``webhook.max_body_bytes``, ``400`` for a body that ended before its ``Content-Length``
(round 126). Refusals are logged with the client address, and say what was received. The
request body is never trusted beyond the branch name: the daemon fetches and reads git
itself, so a forged payload can at most cause one extra fetch.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from controller.errors import ConfigInvalid, PlangateError
from controller.logs import get_logger
from controller.service import metrics
from controller.service.httpd import HttpServer, QuietHandler
from controller.settings import Config

log = get_logger("plangate.webhook")

OnPush = Callable[[str], None]


@dataclass(frozen=True)
class Verdict:
    """Whether a request may trigger a fetch, and why not."""

    status: int  # 0 = authenticated, else the HTTP status of the refusal
    scheme: str
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == 0


def github_signature(secret: bytes, body: bytes) -> str:
    """The ``X-Hub-Signature-256`` value GitHub sends for ``body``."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def _same(given: str, expected: str | bytes) -> bool:
    want = expected if isinstance(expected, bytes) else expected.encode()
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), want)


def authenticate(headers: Mapping[str, str], body: bytes, secret: bytes) -> Verdict:
    """Check a request's credential against the shared secret (constant-time compares)."""
    lower = {k.lower(): v for k, v in headers.items()}
    if "x-hub-signature-256" in lower:
        ok = _same(lower["x-hub-signature-256"].strip(), github_signature(secret, body))
        return Verdict(0 if ok else 403, "github", "" if ok else "signature does not match")
    for header, scheme in (("x-gitlab-token", "gitlab"), ("x-plangate-secret", "plain")):
        if header in lower:
            ok = _same(lower[header].strip(), secret)
            return Verdict(0 if ok else 403, scheme, "" if ok else "wrong secret")
    auth = lower.get("authorization", "")
    if auth.lower().startswith("bearer "):
        ok = _same(auth[7:].strip(), secret)
        return Verdict(0 if ok else 403, "bearer", "" if ok else "wrong secret")
    if "x-hub-signature" in lower:
        return Verdict(401, "github", "only X-Hub-Signature-256 (SHA-256) is accepted")
    return Verdict(401, "none", "no signature or secret header")


def pushed_ref(body: bytes, content_type: str = "") -> str | None:
    """The ``ref`` a push payload names (GitHub and GitLab both send one), if any.

    The body is read as JSON or as GitHub's form encoding (``payload=<json>``) whatever the
    ``Content-Type`` says: a hook configured with the other content type, or a client that
    sends none, must not turn a push to another branch into a fetch-and-run."""
    del content_type  # not trusted to say which: both readings are tried
    for read in (_json_payload, _form_payload):
        payload = read(body)
        if isinstance(payload, dict) and isinstance(payload.get("ref"), str):
            return str(payload["ref"])
    return None


def _json_payload(body: bytes) -> Any:
    try:
        return json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError, RecursionError):  # too deep: no payload (round 109)
        return None


def _form_payload(body: bytes) -> Any:
    try:
        return json.loads(parse_qs(body.decode())["payload"][0])
    except (ValueError, KeyError, IndexError, UnicodeDecodeError, RecursionError):
        return None


class WebhookHandler(QuietHandler):
    """Set by :func:`serve` on a subclass: the secret, the branch, the limit, the callback."""

    secret: bytes = b""
    branch: str | None = None
    max_body: int = 1_048_576
    on_push: OnPush = staticmethod(lambda reason: None)

    def _reply(self, code: int, **body: Any) -> None:
        self.send_body(code, json.dumps(body).encode() + b"\n", "application/json")

    def _refuse(self, status: int, reason: str, scheme: str = "") -> None:
        log.warning(
            "webhook.refused",
            client=self.client_address[0],
            status=status,
            reason=reason,
            scheme=scheme,
            path=self.path,
        )
        metrics.webhook_request("refused" if status in (401, 403) else "bad_request")
        self._reply(status, status="refused", reason=reason)

    def do_GET(self) -> None:
        self.close_connection = True
        self.send_response(405)
        self.send_header("Allow", "POST")
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.close_lingering()  # a body sent with it is never read

    do_PUT = do_DELETE = do_PATCH = do_GET

    def do_POST(self) -> None:
        framed = self._read_body()
        if framed is None:
            return
        body, length = framed
        verdict = authenticate(dict(self.headers.items()), body, self.secret)
        cut = _cut_short(len(body), length)
        if not verdict.ok:
            self._refuse(verdict.status, verdict.reason + cut, verdict.scheme)
        elif cut:  # the request never arrived whole: nothing it says is read (round 126)
            self.close_connection = True
            self._refuse(400, "the body was cut short" + cut, verdict.scheme)
        else:
            self._accept(body, verdict.scheme)

    def _read_body(self) -> tuple[bytes, int] | None:
        """``(the body as it arrived, its Content-Length)``, or None once refused by its
        framing (the answer given, before the body is read)."""
        lengths = self.headers.get_all("Content-Length") or []
        coding = self.headers.get_all("Transfer-Encoding") or []
        why = _framing(lengths, coding)
        length = _length(lengths[0]) if why is None else 0
        if why is None and length > self.max_body:
            why = 413, f"body larger than {self.max_body} bytes"
        if why is not None:
            self.close_connection = True  # the unread body must not be parsed as a request
            self._refuse(*why)
            self.close_lingering()
            return None
        return self._read_up_to(length), length

    def _read_up_to(self, length: int) -> bytes:
        """At most ``length`` bytes: fewer when the client closed (or stalled past the socket
        timeout) first; the caller refuses a body cut short (round 126: one authenticated by
        ``X-Plangate-Secret`` was accepted, and counted so, from its first byte)."""
        parts: list[bytes] = []
        got = 0
        try:
            while got < length:
                part = self.rfile.read1(min(length - got, 65536))
                if not part:
                    break
                parts.append(part)
                got += len(part)
        except OSError:  # the socket timeout (a stalled body) or a reset: cut short too
            self.close_connection = True
        return b"".join(parts)

    def _accept(self, body: bytes, scheme: str) -> None:
        event = self.headers.get("X-GitHub-Event") or self.headers.get("X-Gitlab-Event") or "push"
        if event == "ping":
            metrics.webhook_request("ping")
            self._reply(200, status="pong")
            return
        ref = pushed_ref(body, self.headers.get("Content-Type", ""))
        if ref and self.branch and ref != f"refs/heads/{self.branch}":
            metrics.webhook_request("ignored")
            self._reply(202, status="ignored", reason=f"push to {ref}, watching {self.branch}")
            return
        log.info("webhook.accepted", client=self.client_address[0], scheme=scheme, kind=event)
        metrics.webhook_request("accepted")
        self.on_push(f"webhook:{scheme}")
        self._reply(202, status="accepted")


def _framing(lengths: list[str], coding: list[str]) -> tuple[int, str] | None:
    """``(status, reason)`` refusing how a request says its body is framed, or None for one
    decimal ``Content-Length`` and no ``Transfer-Encoding``. Each reason says what was
    received, then the rule (round 126: "one Content-Length and no Transfer-Encoding" alone
    for a length beside ``chunked``)."""
    rule = "send one Content-Length and no Transfer-Encoding"
    if len(set(lengths)) > 1:
        # two lengths, or a length beside chunks: a proxy in front may frame the body
        # otherwise than this server does (request smuggling, RFC 9112 §6.3): refused
        got = ", ".join(_said(v) for v in lengths)
        return (
            400,
            f"conflicting framing: Content-Length given {len(lengths)} times ({got}); {rule}",
        )
    if lengths and coding:
        got = f"Content-Length {_said(lengths[0])} beside Transfer-Encoding "
        return 400, f"conflicting framing: {got}{_said(', '.join(coding))}; {rule}"
    if not lengths:
        got = f" (Transfer-Encoding {_said(', '.join(coding))} is not read)" if coding else ""
        return 411, f"Content-Length is required{got}; {rule}"
    if not lengths[0].strip().isdigit() or not lengths[0].strip().isascii():
        return (
            400,
            f"bad Content-Length {_said(lengths[0])}: send the body's length in bytes, "
            "one decimal number",
        )
    return None


def _length(text: str) -> int:
    """A checked ``Content-Length``; one of more digits than any body is read as too large
    (``int`` of thousands of digits raises)."""
    digits = text.strip().lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else 10**18


def _said(value: str) -> str:
    """A header value as a reason quotes it (escaped, cut)."""
    from controller.display import shorten

    return shorten(repr(value), 60)


def _cut_short(got: int, length: int) -> str:
    """What a refusal adds for a body cut short (how much of it arrived); nothing for a
    whole one."""
    return "" if got >= length else f" ({got} of its Content-Length {length} bytes arrived)"


def webhook_secret(config: Config, env: Mapping[str, str] | None = None) -> bytes:
    """The shared secret, from the environment; refusing to run an unauthenticated hook.

    The daemon calls this before it starts any listener; the error names the config file and
    the line of ``webhook.listen``."""
    name = config.webhook.secret_env
    value = (os.environ if env is None else env).get(name, "")
    if not value:
        raise ConfigInvalid(
            f"{_where(config)}webhook.listen is set but ${name} is empty",
            remedy=f"set {name} to a long random secret (the same one the forge sends), "
            "or remove webhook.listen",
        )
    return value.encode()


def _where(config: Config) -> str:
    """``FILE:LINE: `` of ``webhook.listen`` in the config file ("" when unknown)."""
    if config.source is None:
        return ""
    try:
        from controller.plan import yamlio

        doc = yamlio.read_yaml(config.source.read_text(encoding="utf-8"), str(config.source))
        line = doc.line_of(("webhook", "listen"))
    except (OSError, UnicodeDecodeError, PlangateError):
        line = None
    return f"{config.source}:{line}: " if line else f"{config.source}: "


def serve(config: Config, on_push: OnPush, env: Mapping[str, str] | None = None) -> HttpServer:
    """Start the endpoint on ``webhook.listen``; ``on_push(reason)`` is called per push."""
    assert config.webhook.listen is not None
    handler = type(
        "BoundWebhookHandler",
        (WebhookHandler,),
        {
            "secret": webhook_secret(config, env),
            "branch": config.remote.branch if config.remote else None,
            "max_body": config.webhook.max_body_bytes,
            "on_push": staticmethod(on_push),
        },
    )
    return HttpServer(config.webhook.listen, "webhook.listen", handler).start()
