"""Notifications (SPEC §11 ``notify:``): a JSON POST when a plan needs someone or ends.

Events: ``awaiting-approval`` (a plan was frozen and waits for approvals, or a run paused at a
gate), ``partial`` (some approvals are in, more are needed), ``refuse``, ``start``,
``complete``, ``fail`` and ``abort``. The body is one JSON object::

    {"event": "partial", "plan": "plans/x", "hash": "sha256:...", "status": "pending_approval",
     "commit": "<sha of the controller's commit>", "by": "alice@example.com",
     "approvers": ["alice@example.com"], "message": "...", "controller": "host/3f2a9c1b",
     "text": "plangate: plans/x has 1 of 3 approvals; still needs 1 more from ops, ..."}

``text`` makes the same body a valid Slack (and Mattermost, Teams-compatible) incoming-webhook
message, escaped as Slack's message format asks (``&``, ``<``, ``>`` as ``&amp;``, ``&lt;``,
``&gt;``: round 116, notify-text-chat-markup): a plan path, a tool's error or an author's
expected value written as ``<!channel>``, ``<@U..>`` or ``<url|label>`` shows as typed,
never a mention or a link; ``plan`` and ``message`` stay the raw JSON strings.

Every string is written as the controller's own record writes it (round 66): the
plan's path as written (the author's text, as every reader names it), the message in the
outcome commit's ``recorded`` form (the author's text it quotes as written, the rest
redacted), every other value redacted, and ``text`` built from those, never redacted again
as a whole: no secret value the author did not write ever leaves, and masking never differs
between a right and a wrong guess of one. The body never carries params, results or outputs.

Posting never blocks or slows the controller: :meth:`Notifier.send` only puts the message on a
bounded queue per URL, and one daemon thread per URL posts it, retrying a failure (a
connection error, a timeout or a 5xx/429 answer) with exponential backoff (1 s, 2 s, 4 s, ...
at most 60 s). A full queue (an endpoint down for long) drops the newest message and logs
``notify_dropped``; a message that fails every try is logged ``notify_failed``.

A controller that exits (``run --once`` ends, the daemon is stopped by SIGTERM) first lets
each URL's thread post what is queued, every URL at once, for at most :data:`DRAIN_SECONDS`
in all (round 116, exit-drops-notify-silently: the threads died with the process, and a
healthy endpoint answering in 0.5 s got 1 of 12 posts, nothing logged). A post still queued
or in flight then is logged ``notify_dropped`` with its plan and event.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from controller.display import shorten, visible
from controller.errors import redacted_around
from controller.execution.journal import MESSAGE_CHARS
from controller.execution.tools.wallclock import Deadline
from controller.settings import NotifySettings

QUEUE_SIZE = 1000
MAX_BACKOFF = 60.0
#: Seconds an exiting controller gives its queued posts, every URL at once (SIGTERM's stop
#: stays bounded: what is left then is logged ``notify_dropped``).
DRAIN_SECONDS = 10.0
#: The controller's commit events, and the notification each one is.
EVENTS = {
    "await-approval": "awaiting-approval",
    "partial": "partial",
    "refuse": "refuse",
    "start": "start",
    "complete": "complete",
    "fail": "fail",
    "abort": "abort",
}
_TEXTS = {
    "awaiting-approval": "{plan} is waiting for approval{needs}",
    "partial": "{plan} has some approvals; still needs {missing}",
    "refuse": "an approval of {plan} was refused: {message}",
    "start": "{plan} was approved by {by} and is running",
    "complete": "{plan} completed",
    "fail": "{plan} failed: {message}",
    "abort": "{plan} was aborted",
}


def _log() -> Any:
    import structlog

    return structlog.get_logger("plangate")


class Notifier:
    """Posts events to the configured URLs from background threads."""

    def __init__(
        self,
        settings: NotifySettings,
        redact: Callable[[str], str] = lambda text: text,
        *,
        backoff: float = 1.0,
    ) -> None:
        self.settings = settings
        self.redact = redact
        self.backoff = backoff
        urls = [*settings.urls, *(os.environ.get(name, "") for name in settings.url_env)]
        self._senders = [_Sender(url, self) for url in dict.fromkeys(u for u in urls if u)]
        self._events = set(settings.events)

    @property
    def enabled(self) -> bool:
        return bool(self._senders)

    def send(self, event: str, plan: str, *, quotes: Sequence[str] = (), **fields: Any) -> None:
        """Queue one notification (never waits for the network); ``quotes``: the plan
        author's text its ``message`` quotes (the error's
        :meth:`~controller.errors.PlangateError.quoted`, as the outcome commit keeps it)."""
        if not self._senders or event not in self._events:
            return
        body = self.body(event, plan, quotes=quotes, **fields)
        for sender in self._senders:
            sender.put(body)

    def body(
        self, event: str, plan: str, *, quotes: Sequence[str] = (), **fields: Any
    ) -> dict[str, Any]:
        """The post: each value as the controller's record gives it (round 66: the post
        redacted its whole text again, so a failing check's expected value and a plan folder
        equal to a secret came back ``***`` for a right guess only). The plan's path is the
        author's text, as written; the message in its recorded form (the author's text it
        quotes as written, :func:`~controller.errors.redacted_around`, hidden characters
        escaped as the commit writes them, round 117: a tool's raw ESC and BEL reached the
        post); every other value redacted and escaped alike. ``text`` is built from those
        and the path in that form, never redacted whole again."""
        values = {k: self._shown(k, v, quotes) for k, v in fields.items() if v is not None}
        needs = f" ({values['needs']})" if values.get("needs") else ""
        named = values.get("approvers") or []
        said = {"by": ", ".join(named)} if len(named) > 1 else {}  # a quorum: every voter
        shown = visible(plan)  # the text is read by people: no raw control (round 117)
        text = _TEXTS[event].format_map(
            {
                "message": "",
                "missing": "",
                "by": "",
                **values,
                **said,
                "plan": shown,
                "needs": needs,
            }
        )
        body: dict[str, Any] = {"event": event, "plan": plan, **values, "text": "plangate: " + text}
        # cut as the journal cuts a message (a tool's 1 MB error is no notification: the chat
        # or pager endpoint would refuse it, or post it whole); redacted before the cut
        body = {k: shorten(v, MESSAGE_CHARS) if isinstance(v, str) else v for k, v in body.items()}
        return {**body, "text": chat_escaped(body["text"])}

    def _shown(self, key: str, value: Any, quotes: Sequence[str]) -> Any:
        if isinstance(value, list):  # ``approvers``: each name as ``by`` is shown
            return [self._shown(key, item, quotes) for item in value]
        if not isinstance(value, str):
            return value
        if key == "message":  # as the outcome commit records it: hidden characters escaped
            return visible(redacted_around(value, quotes, self.redact))
        return visible(self.redact(value))

    def finish(self) -> None:
        """Take no more posts; each URL's thread posts what is queued, then ends (a reload's
        old URLs: :func:`close_all` waits for them at exit)."""
        for sender in self._senders:
            sender.finish()

    def close(self, timeout: float = DRAIN_SECONDS) -> None:
        """Post what is queued for at most ``timeout`` seconds (:func:`close_all`)."""
        close_all([self], timeout)


def close_all(notifiers: Sequence[Notifier], timeout: float = DRAIN_SECONDS) -> None:
    """Drain every URL's queue at once for at most ``timeout`` seconds in all, then log each
    post not delivered ``notify_dropped`` with its plan and event (round 116,
    exit-drops-notify-silently: posts still queued at exit were lost without a word)."""
    deadline = time.monotonic() + timeout
    senders = [sender for notifier in notifiers for sender in notifier._senders]
    for sender in senders:
        sender.finish()
    for sender in senders:
        sender.join(max(0.0, deadline - time.monotonic()))
    for sender in senders:
        sender.abandon()


def chat_escaped(text: str) -> str:
    """``text`` in Slack's message format: ``&``, ``<`` and ``>`` as entities, so nothing
    from git or a tool (a folder ``n<!channel>``, stderr ``<https://x|approved>``) is a
    mention or a link (round 116, notify-text-chat-markup). CommonMark readers (Mattermost,
    Teams) decode the same entities, so they show the characters too. Escaped after the cut:
    a cut never splits an entity."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class _Sender:
    """One URL: a bounded queue and the thread that posts from it."""

    def __init__(self, url: str, owner: Notifier) -> None:
        self.url = url
        self.owner = owner
        self.queue: queue.Queue[dict[str, Any] | None] = queue.Queue(QUEUE_SIZE)
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()
        self.posting: dict[str, Any] | None = None  # the post in flight, if any

    def put(self, body: dict[str, Any]) -> None:
        self._start()
        try:
            self.queue.put_nowait(body)
        except queue.Full:
            self._dropped(body, "the queue is full")

    def _dropped(self, body: dict[str, Any], why: str) -> None:
        _log().warning(
            "notify_dropped",
            url=_safe(self.url),
            notice=body.get("event"),
            plan=body.get("plan"),
            reason=why,
        )

    def _start(self) -> None:
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="notify", daemon=True)
                self.thread.start()

    def finish(self) -> None:
        """The end mark after what is queued: the thread posts it all, then ends."""
        if self.thread is not None:
            with contextlib.suppress(queue.Full):
                self.queue.put_nowait(None)

    def join(self, timeout: float) -> None:
        if self.thread is not None:
            self.thread.join(timeout)

    def abandon(self) -> None:
        """Past the drain's time: cut any retry's wait, take what is still queued and log
        each post ``notify_dropped`` (the one in flight too: it may not arrive)."""
        self.stopping.set()
        if self.thread is None or not self.thread.is_alive():
            return
        while True:
            try:
                body = self.queue.get_nowait()
            except queue.Empty:
                break
            if body is not None:
                self._dropped(body, "still queued when the controller exited")
        posting = self.posting
        if posting is not None:
            self._dropped(posting, "in flight when the controller exited; it may not arrive")
        with contextlib.suppress(queue.Full):
            self.queue.put_nowait(None)  # the thread ends after its post in flight

    def _run(self) -> None:
        while True:
            body = self.queue.get()
            if body is None:
                return
            if self.stopping.is_set():  # past the drain's time (:meth:`abandon`)
                self._dropped(body, "still queued when the controller exited")
                continue
            self.posting = body
            try:
                self._deliver(body)
            except Exception as exc:  # one bad message must not end the sender
                _log().warning(
                    "notify_failed", url=_safe(self.url), plan=body.get("plan"), error=repr(exc)
                )
            finally:
                self.posting = None

    def _deliver(self, body: dict[str, Any]) -> None:
        settings = self.owner.settings
        data = json.dumps(body).encode("utf-8")
        error = ""
        for attempt in range(settings.retries + 1):
            if attempt and self.stopping.wait(self._delay(attempt)):
                break
            error, retry = _post(self.url, data, settings.timeout)
            if not error:
                return
            if not retry:
                break
        _log().warning(
            "notify_failed",
            url=_safe(self.url),
            notice=body.get("event"),
            plan=body.get("plan"),
            error=error,
        )

    def _delay(self, attempt: int) -> float:
        return float(min(self.owner.backoff * 2 ** (attempt - 1), MAX_BACKOFF))


def _post(url: str, data: bytes, timeout: float) -> tuple[str, bool]:
    """('', _) on success, else why it failed and whether to try again (a 4xx other than
    429 is final: no retry would help). ``timeout`` bounds the whole post, wall clock
    (round 53: urllib's is per read, so an endpoint trickling its headers held this URL's
    queue as long as it liked)."""
    import http.client  # here, not at start-up: a pass without notify URLs never posts
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": "plangate-notify"},
    )
    with Deadline(timeout) as deadline:
        try:
            with _opener(deadline).open(request, timeout=timeout) as answer:
                deadline.enter("reading the body")
                answer.read(65536)
        except urllib.error.HTTPError as exc:
            if not deadline.cut:
                return f"HTTP {exc.code}", exc.code >= 500 or exc.code == 429
        except (OSError, ValueError, http.client.HTTPException) as exc:
            if not deadline.cut:
                return type(exc).__name__ + (
                    f": {exc.reason}" if hasattr(exc, "reason") else ""
                ), True
    if deadline.cut:
        why = f"no complete answer within {timeout:g}s (cut while {deadline.cut})"
        return f"TimeoutError: {why}", True
    return "", False


def _opener(deadline: Deadline) -> Any:
    """urllib's opener, its HTTP and HTTPS connections telling ``deadline`` their socket
    (before any TLS handshake, which the deadline cuts too)."""
    import http.client
    import urllib.request

    def watched(*args: Any, **kwargs: Any) -> Any:
        sock = socket.create_connection(*args, **kwargs)
        deadline.watch(sock)
        deadline.enter("waiting for the answer")
        return sock

    def connection(kind: type[http.client.HTTPConnection]) -> Any:
        def make(*args: Any, **kwargs: Any) -> http.client.HTTPConnection:
            made = kind(*args, **kwargs)
            made._create_connection = watched  # type: ignore[attr-defined]
            return made

        return make

    class Plain(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> Any:
            return self.do_open(connection(http.client.HTTPConnection), req)

    class Secure(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> Any:
            context = self._context  # type: ignore[attr-defined]
            return self.do_open(connection(http.client.HTTPSConnection), req, context=context)

    class Unfollowed(urllib.request.HTTPRedirectHandler):
        """A redirect is not followed (round 117, ``notify-redirect-post-lost-silently``:
        urllib re-sent a 301/302/303 as a GET without the body, to any host, and logged
        nothing): the answer is the post's failure, ``HTTP 30x``, logged as any other."""

        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(Plain(), Secure(), Unfollowed())


def _safe(url: str) -> str:
    """The URL without its path and query (where webhook tokens live), for logs."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{':' + str(parts.port) if parts.port else ''}"
