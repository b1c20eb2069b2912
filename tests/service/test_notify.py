"""notify: (SPEC §11) against a real HTTP server on loopback."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from controller import settings
from controller.service.notify import Notifier
from controller.service.reconcile import Controller
from tests.support.daemonkit import wait_until
from tests.support.gitenv import run_cli
from tests.support.gitkit import AGENT, approve, commit_all, head_plan, write_plan


class Hook:
    """A loopback endpoint: records each POST; answers with the next planned status."""

    def __init__(self, answers: list[int] | None = None) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.answers = list(answers or [])
        self.tries = 0
        self.release = threading.Event()
        self.release.set()
        self.delay = 0.0  # seconds each answer takes (a healthy, slow endpoint)
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                body = json.loads(self.rfile.read(length))
                hook.release.wait(30)
                time.sleep(hook.delay)
                hook.tries += 1
                code = hook.answers.pop(0) if hook.answers else 200
                if code == 200:
                    hook.bodies.append(body)
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def events(self) -> list[str]:
        return [b["event"] for b in self.bodies]


@contextmanager
def hook(answers: list[int] | None = None) -> Iterator[Hook]:
    found = Hook(answers)
    thread = threading.Thread(target=found.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        found.release.set()
        found.server.shutdown()
        found.server.server_close()


def notifier(url: str, **options: Any) -> Notifier:
    return Notifier(
        settings.NotifySettings(urls=[url], **options),
        lambda text: text.replace("hunter2", "***"),
        backoff=0.01,
    )


def test_a_failing_endpoint_is_retried_and_the_body_is_slack_compatible() -> None:
    with hook([500, 503]) as endpoint:
        sender = notifier(endpoint.url)
        sender.send("fail", "plans/x", hash="sha256:1", message="token hunter2 leaked")
        wait_until(lambda: endpoint.bodies, 10, "the third try")
        sender.close()
    [body] = endpoint.bodies
    assert endpoint.tries == 3
    assert body["event"] == "fail" and body["plan"] == "plans/x"
    assert body["text"] == "plangate: plans/x failed: token *** leaked"
    assert "hunter2" not in json.dumps(body)


def test_a_huge_message_is_redacted_whole_then_cut_as_the_journal_cuts_it() -> None:
    """A tool's 1 MB error message is no notification (round 38 cut it in the journal and
    in commits; the notification carried it whole): the body's strings are redacted whole,
    then cut to the journal's 2,000 characters, the cut marked."""
    from controller.execution.journal import MESSAGE_CHARS

    with hook() as endpoint:
        sender = notifier(endpoint.url)
        message = "x" * 1_000_000 + " hunter2"
        sender.send("fail", "plans/x", message="hunter2 " + message)
        wait_until(lambda: endpoint.bodies, 10, "a post")
        sender.close()
    [body] = endpoint.bodies
    assert body["message"].startswith("*** xxx") and body["message"].endswith("…")
    assert len(body["message"]) <= MESSAGE_CHARS + 1
    assert len(body["text"]) <= MESSAGE_CHARS + 1
    assert "hunter2" not in json.dumps(body)


def test_a_post_quotes_the_authors_text_as_the_record_does_and_redacts_the_rest() -> None:
    """Round 66: the post redacted its whole text again, so a failing check's expected value
    and a plan folder equal to a secret came back ``***`` for a right guess only. The plan's
    path and the message's quotes (``PlangateError.quoted``) are the author's, as written;
    the rest of the message, and every other value, is redacted."""
    sender = notifier("http://127.0.0.1:9/hook")
    message = 'check failed: got "hunter2" (expected equals "hunter2-x")'
    for guess in ("hunter2", "hunter3"):
        body = sender.body(
            "fail", f"plans/{guess}", quotes=("hunter2-x",), message=message, by="hunter2"
        )
        assert body["plan"] == f"plans/{guess}"
        assert body["message"] == 'check failed: got "***" (expected equals "hunter2-x")'
        assert body["by"] == "***"
        assert body["text"] == f"plangate: plans/{guess} failed: {body['message']}"
    # no quotes: the message is the controller's, redacted whole
    assert sender.body("fail", "plans/x", message=message)["message"].count("***") == 2


def test_the_text_is_escaped_as_slack_reads_it_and_the_fields_stay_raw() -> None:
    """Round 116, notify-text-chat-markup: ``text`` wrote a plan folder ``n<!channel>``, a
    tool's stderr ``<https://evil.example|approved>`` and an entity ``&lt;b&gt;`` as they
    are, so Slack pinged the channel, showed a masked link and another path. Every ``&``,
    ``<``, ``>`` of ``text`` is an entity (Slack shows the characters, acts on none); the
    ``plan`` and ``message`` fields keep the raw strings."""
    import re

    sender = notifier("http://127.0.0.1:9/hook")
    plan = "plans/n<!channel>&lt;b&gt;"
    error = "see <https://evil.example/approve|plans/prod rollback approved> <@U024BE7LH>"
    body = sender.body("fail", plan, message=error, by="<!here>")
    assert (body["plan"], body["message"]) == (plan, error)
    assert not re.search(r"[<>]|&(?!amp;|lt;|gt;)", body["text"]), body["text"]
    shown = body["text"].replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    assert shown == f"plangate: {plan} failed: {error}"
    waiting = sender.body("awaiting-approval", plan, needs="1 from <!subteam^S0123>")
    assert "&lt;!subteam^S0123&gt;" in waiting["text"] and "<" not in waiting["text"]


def test_a_tools_terminal_controls_reach_the_post_as_the_record_writes_them() -> None:
    """Round 117 (``notify-post-raw-terminal-controls``): a tool's stderr ``ESC[2J``, an OSC 8
    link and BEL reached the ``fail`` post's ``text`` and ``message`` raw, where the outcome
    commit, ``status`` and ``show`` write ``\\x1b``. The post carries the recorded form;
    ``plan`` stays the path as git holds it."""
    sender = notifier("http://127.0.0.1:9/hook")
    error = "boom: \x1b[2J\x1b]8;;https://evil.example\x07click\x1b]8;;\x07 \x1b[31mred"
    plan = "plans/f\x1besc"
    body = sender.body("fail", plan, message=error, by="alice@example.com")
    assert body["plan"] == plan
    for key in ("message", "text"):
        assert "\x1b" not in body[key] and "\x07" not in body[key], body[key]
        assert "\\x1b[2J" in body[key] and "\\x07click" in body[key], body[key]
    assert "plans/f\\x1besc failed" in body["text"], body["text"]


def test_a_client_error_is_not_retried_and_retries_end() -> None:
    with hook([404, 500, 500, 500]) as endpoint:
        sender = notifier(endpoint.url, retries=2)
        sender.send("start", "plans/x", by="alice@example.com")
        sender.send("complete", "plans/x")
        wait_until(lambda: endpoint.tries == 4, 10, "four tries")
        sender.close()
    assert endpoint.bodies == []  # the 404 once, then 500 three times (1 + 2 retries)


def test_only_the_configured_events_are_posted() -> None:
    with hook() as endpoint:
        sender = notifier(endpoint.url, events=["complete"])
        sender.send("start", "plans/x")
        sender.send("complete", "plans/x")
        wait_until(lambda: endpoint.bodies, 10, "a post")
        sender.close()
    assert endpoint.events() == ["complete"]


def config_data(repo: Path, url: str) -> dict[str, Any]:
    return {
        "repo": str(repo),
        "approval": {"approvers": ["alice@example.com"]},
        "tools": {"greet": {"kind": "echo", "risk": "low"}},
        "notify": [url],
    }


def config(repo: Path, url: str) -> settings.Config:
    return settings.config_from_data(config_data(repo, url), repo.parent / "plangate.yml")


def test_the_controller_posts_its_events_and_a_stuck_endpoint_never_holds_it_up(
    repo: Path,
) -> None:
    with hook() as endpoint:
        endpoint.release.clear()  # the endpoint accepts, then hangs until released
        ctl = Controller(config(repo, endpoint.url))
        try:
            write_plan(repo)
            commit_all(repo, "add greet", AGENT)
            ctl.run_once()
            approve(repo)
            ctl.run_once()
            # the plan ran to its end while the endpoint still held the first post
            assert head_plan(repo)["plan"]["status"] == "completed"
            assert endpoint.bodies == [] and not endpoint.release.is_set()
            endpoint.release.set()
            wait_until(lambda: len(endpoint.bodies) == 3, 20, "three posts")
        finally:
            ctl.close()
    waiting, start, complete = endpoint.bodies
    assert endpoint.events() == ["awaiting-approval", "start", "complete"]
    assert waiting["plan"] == "plans/greet" and waiting["status"] == "pending_approval"
    assert "needs 1 approval" in waiting["text"]
    assert start["by"] == "alice@example.com" and start["hash"].startswith("sha256:")
    assert complete["status"] == "completed"
    assert all(set(b) <= _FIELDS for b in endpoint.bodies)


_FIELDS = {
    "event",
    "plan",
    "hash",
    "status",
    "commit",
    "by",
    "approvers",
    "missing",
    "message",
    "needs",
    "controller",
    "text",
}


def test_a_trickled_answer_is_cut_at_the_timeout() -> None:
    """Round 53: urllib's timeout is per read, so an endpoint that sent a header line every
    0.1 s held its URL's sender (and every notification queued behind) as long as it liked.
    The timeout bounds the whole post; the cut leaves no deadline thread behind."""
    import time

    from controller.service.notify import _post

    outcome: list[str] = []

    class Trickler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            try:
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                for _ in range(60):
                    self.wfile.write(b"X-Slow: x\r\n")
                    self.wfile.flush()
                    time.sleep(0.1)
                self.wfile.write(b"Content-Length: 0\r\n\r\n")
                outcome.append("complete")
            except OSError:
                outcome.append("client hung up")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        error, retry = _post(f"http://127.0.0.1:{server.server_address[1]}/", b"{}", 0.5)
        assert error.startswith("TimeoutError") and "cut while waiting for the answer" in error
        assert retry
        assert not [t for t in threading.enumerate() if t.name == "plangate-http-deadline"]
        wait_until(lambda: bool(outcome), timeout=30)
        assert outcome == ["client hung up"]
    finally:
        server.shutdown()
        server.server_close()


def test_run_once_posts_every_queued_event_before_it_exits(repo: Path) -> None:
    """Round 116, exit-drops-notify-silently: ``run --once`` froze 12 plans and exited with
    its posts still queued; an endpoint answering each in 0.5 s got 1, nothing was logged.
    The exiting controller drains the queue (bounded, DRAIN_SECONDS): every post has
    arrived when the process has exited."""
    plans = 8
    with hook() as endpoint:
        endpoint.delay = 0.3
        for i in range(plans):
            write_plan(repo, f"p{i}")
        commit_all(repo, "agent: plans", AGENT)
        path = repo.parent / "plangate.yml"
        path.write_text(json.dumps(config_data(repo, endpoint.url)))
        done = run_cli("run", "--once", "--config", str(path), cwd=repo)
        assert done.returncode == 0, done.stderr[-2000:]
        arrived = sorted(b["plan"] for b in endpoint.bodies)
    assert arrived == sorted(f"plans/p{i}" for i in range(plans)), done.stderr[-2000:]
    assert "notify_dropped" not in done.stderr


def test_posts_left_at_the_drain_bound_are_logged_with_their_plan_and_event() -> None:
    """An endpoint that does not answer within the drain's time: close() returns at the
    bound, and each post not delivered (queued, or in flight) is logged ``notify_dropped``
    naming its plan and event, never lost in silence (round 116)."""
    import structlog

    with hook() as endpoint:
        endpoint.release.clear()  # the endpoint accepts, then hangs
        sender = notifier(endpoint.url, timeout=30)
        for name in ("a", "b", "c"):
            sender.send("awaiting-approval", f"plans/{name}")
        wait_until(lambda: endpoint.tries == 0 and sender._senders[0].posting, 10, "in flight")
        began = time.monotonic()
        with structlog.testing.capture_logs() as events:
            sender.close(timeout=0.5)
        assert time.monotonic() - began < 5
    dropped = [(e["plan"], e["notice"]) for e in events if e["event"] == "notify_dropped"]
    assert sorted(dropped) == [(f"plans/{n}", "awaiting-approval") for n in "abc"], events


def test_a_redirect_is_not_followed_and_the_post_is_logged_failed() -> None:
    """Round 117 (``notify-redirect-post-lost-silently``): an endpoint answering 301, 302 or
    303 with a ``Location:`` had urllib re-send the notice as a GET without its body, to
    wherever the answer pointed, and nothing was logged. A redirect is the post's failure."""
    import structlog

    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            seen.append(f"{self.command} {self.path}")
            if self.path.startswith("/hook"):
                self.send_response(int(self.path.removeprefix("/hook")))
                self.send_header("Location", "/elsewhere")
            else:
                self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = _answer

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with structlog.testing.capture_logs() as events:
            for code in (301, 302, 303):
                sender = notifier(f"{base}/hook{code}", retries=0)
                sender.send("start", f"plans/r{code}", by="alice@example.com")
                sender.close(timeout=10)
    finally:
        server.shutdown()
        server.server_close()
    assert seen == ["POST /hook301", "POST /hook302", "POST /hook303"], seen  # none followed
    failed = [(e["plan"], e["error"]) for e in events if e["event"] == "notify_failed"]
    assert failed == [(f"plans/r{c}", f"HTTP {c}") for c in (301, 302, 303)], events
