"""The push webhook against a real loopback HTTP server: who may trigger a fetch, and what not."""

from __future__ import annotations

import io
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from controller import logs
from controller.errors import ConfigInvalid
from controller.service import metrics, webhook
from controller.service.httpd import HttpServer
from controller.settings import config_from_data

SECRET = "s3cret-for-tests"


class Pushes:
    """Records the daemon wake-ups the endpoint causes."""

    def __init__(self) -> None:
        self.reasons: list[str] = []
        self.event = threading.Event()

    def __call__(self, reason: str) -> None:
        self.reasons.append(reason)
        self.event.set()


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    logs.configure(stream=stream, as_json=True)
    yield stream
    logs.configure()


@pytest.fixture
def endpoint(tmp_path: Path, log_stream: io.StringIO) -> Iterator[tuple[str, Pushes]]:
    config = config_from_data(
        {
            "remote": {"url": "git://127.0.0.1/plans.git", "branch": "main"},
            "state_dir": str(tmp_path / "state"),
            "webhook": {"listen": "127.0.0.1:0", "max_body_bytes": 4096},
        }
    )
    pushes = Pushes()
    server = webhook.serve(config, pushes, env={"PLANGATE_WEBHOOK_SECRET": SECRET})
    host, port = server.address
    yield f"http://{host}:{port}/webhook", pushes
    server.stop()


def push_body(ref: str = "refs/heads/main") -> bytes:
    return json.dumps({"ref": ref, "after": "0" * 40}).encode()


def post(url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(url, content=body, headers={"Content-Type": "application/json", **headers})


def test_github_signed_push_triggers_a_fetch(endpoint: tuple[str, Pushes]) -> None:
    url, pushes = endpoint
    body = push_body()
    sig = webhook.github_signature(SECRET.encode(), body)
    response = post(url, body, {"X-Hub-Signature-256": sig, "X-GitHub-Event": "push"})
    assert response.status_code == 202
    assert response.json()["status"] == "accepted"
    assert pushes.reasons == ["webhook:github"]


def test_github_bad_signature_is_refused_and_logged(
    endpoint: tuple[str, Pushes], log_stream: io.StringIO
) -> None:
    url, pushes = endpoint
    body = push_body()
    forged = webhook.github_signature(b"not the secret", body)
    response = post(url, body, {"X-Hub-Signature-256": forged, "X-GitHub-Event": "push"})
    assert response.status_code == 403
    assert pushes.reasons == []
    events = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    refused = [e for e in events if e["event"] == "webhook.refused"]
    assert refused and refused[0]["status"] == 403 and refused[0]["client"] == "127.0.0.1"


def test_signature_over_a_different_body_is_refused(endpoint: tuple[str, Pushes]) -> None:
    url, pushes = endpoint
    sig = webhook.github_signature(SECRET.encode(), push_body())
    response = post(url, push_body() + b" ", {"X-Hub-Signature-256": sig})
    assert response.status_code == 403
    assert pushes.reasons == []


def test_missing_credential_is_401(endpoint: tuple[str, Pushes]) -> None:
    url, pushes = endpoint
    assert post(url, push_body(), {}).status_code == 401
    sha1_only = {"X-Hub-Signature": "sha1=0000"}
    assert post(url, push_body(), sha1_only).status_code == 401
    assert pushes.reasons == []


@pytest.mark.parametrize(
    ("header", "scheme"),
    [
        ("X-Gitlab-Token", "gitlab"),
        ("X-Plangate-Secret", "plain"),
        ("Authorization", "bearer"),
    ],
)
def test_token_schemes(endpoint: tuple[str, Pushes], header: str, scheme: str) -> None:
    url, pushes = endpoint
    good = f"Bearer {SECRET}" if header == "Authorization" else SECRET
    bad = "Bearer nope" if header == "Authorization" else "nope"
    assert post(url, push_body(), {header: bad}).status_code == 403
    assert pushes.reasons == []
    assert post(url, push_body(), {header: good}).status_code == 202
    assert pushes.reasons == [f"webhook:{scheme}"]


def test_ping_and_other_branches_do_not_fetch(endpoint: tuple[str, Pushes]) -> None:
    url, pushes = endpoint
    body = b'{"zen": "hi"}'
    ping = post(
        url,
        body,
        {
            "X-Hub-Signature-256": webhook.github_signature(SECRET.encode(), body),
            "X-GitHub-Event": "ping",
        },
    )
    assert ping.status_code == 200
    other = push_body("refs/heads/feature")
    response = post(url, other, {"X-Gitlab-Token": SECRET, "X-Gitlab-Event": "Push Hook"})
    assert response.status_code == 202 and response.json()["status"] == "ignored"
    assert pushes.reasons == []


def test_github_form_encoded_payload(endpoint: tuple[str, Pushes]) -> None:
    url, pushes = endpoint
    body = b"payload=%7B%22ref%22%3A+%22refs%2Fheads%2Fmain%22%7D"
    sig = webhook.github_signature(SECRET.encode(), body)
    response = httpx.post(
        url,
        content=body,
        headers={"Content-Type": "application/x-www-form-urlencoded", "X-Hub-Signature-256": sig},
    )
    assert response.status_code == 202 and response.json()["status"] == "accepted"
    assert pushes.reasons == ["webhook:github"]


def test_oversized_body_is_refused_unread(endpoint: tuple[str, Pushes]) -> None:
    url, pushes = endpoint
    response = post(url, b"x" * 5000, {"X-Plangate-Secret": SECRET})
    assert response.status_code == 413
    assert pushes.reasons == []


def raw_request(url: str, request: bytes) -> bytes:
    host, port = httpx.URL(url).host, httpx.URL(url).port
    with socket.create_connection((host, port or 80), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_length_is_required_and_get_is_not_allowed(endpoint: tuple[str, Pushes]) -> None:
    url, pushes = endpoint
    answer = raw_request(
        url,
        b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-Plangate-Secret: " + SECRET.encode() + b"\r\n\r\n",
    )
    assert answer.startswith(b"HTTP/1.1 411")
    assert httpx.get(url).status_code == 405
    assert pushes.reasons == []


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: 2\r\nContent-Length: 40\r\n",
        b"Transfer-Encoding: chunked\r\nContent-Length: 40\r\n",
    ],
    ids=["two-lengths", "chunks-beside-a-length"],
)
def test_framing_a_proxy_may_read_otherwise_is_refused(
    endpoint: tuple[str, Pushes], framing: bytes
) -> None:
    """Two Content-Length values, or chunks beside a length: a proxy in front and this server
    could split the stream into requests differently (smuggling a second request past the
    proxy's checks). Refused 400, the connection closed, nothing fetched."""
    url, pushes = endpoint
    body = push_body()
    answer = raw_request(
        url,
        b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-Plangate-Secret: " + SECRET.encode() + b"\r\n"
        + framing.replace(b"40", str(len(body)).encode()) + b"\r\n" + body,
    )  # fmt: skip
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b"conflicting framing" in answer
    assert pushes.reasons == []
    same = b"Content-Length: %d\r\nContent-Length: %d\r\n" % (len(body), len(body))
    twice = raw_request(  # the same length twice is one length (RFC 9110 §8.6)
        url,
        b"POST /webhook HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Plangate-Secret: "
        + SECRET.encode() + b"\r\n" + same + b"\r\n" + body,
    )  # fmt: skip
    assert twice.startswith(b"HTTP/1.1 202"), twice[:200]


def test_unset_secret_refuses_to_start(tmp_path: Path) -> None:
    config = config_from_data({"webhook": {"listen": "127.0.0.1:0"}, "repo": str(tmp_path)})
    with pytest.raises(ConfigInvalid, match="PLANGATE_WEBHOOK_SECRET"):
        webhook.serve(config, lambda reason: None, env={})


def test_port_in_use_is_a_config_error(endpoint: tuple[str, Pushes]) -> None:
    url, _ = endpoint
    busy = f"127.0.0.1:{httpx.URL(url).port}"
    with pytest.raises(ConfigInvalid, match="cannot listen"):
        HttpServer(busy, "webhook.listen", webhook.WebhookHandler)


def test_requests_are_counted_when_metrics_are_on(endpoint: tuple[str, Pushes]) -> None:
    url, _ = endpoint
    m = metrics.enable()
    try:
        post(url, push_body(), {"X-Plangate-Secret": "wrong"})
        post(url, push_body(), {"X-Plangate-Secret": SECRET})
        text = m.exposition().decode()
        assert 'plangate_webhook_requests_total{result="refused"} 1.0' in text
        assert 'plangate_webhook_requests_total{result="accepted"} 1.0' in text
    finally:
        metrics.disable()


def test_authenticate_is_constant_shape() -> None:
    body = b"{}"
    good = webhook.github_signature(b"k", body)
    assert webhook.authenticate({"x-hub-signature-256": good}, body, b"k").ok
    assert not webhook.authenticate({"X-Hub-Signature-256": good.upper()}, body, b"k").ok
    assert webhook.authenticate({}, body, b"k").status == 401


def _cut_short(url: str, credential: bytes, body: bytes) -> bytes:
    """A POST whose connection ends (write side shut) after 5 bytes of its body."""
    host, port = httpx.URL(url).host, httpx.URL(url).port
    with socket.create_connection((host, port or 80), timeout=10) as sock:
        sock.sendall(
            b"POST /webhook HTTP/1.1\r\nHost: x\r\n" + credential + b"\r\n"
            + b"Content-Length: %d\r\n\r\n" % len(body) + body[:5]
        )  # fmt: skip
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_body_cut_short_is_refused_and_never_fetches(endpoint: tuple[str, Pushes]) -> None:
    """Round 126: a request authenticated by its secret header whose connection closed
    before its ``Content-Length`` body arrived was accepted (a fetch, counted ``accepted``).
    Every scheme refuses it: 400 saying how much arrived (a GitHub signature, over the whole
    body, 403 saying the same), counted a refusal, nothing fetched."""
    url, pushes = endpoint
    body = push_body()
    m = metrics.enable()
    try:
        for header in (b"X-Plangate-Secret: ", b"X-Gitlab-Token: ", b"Authorization: Bearer "):
            answer = _cut_short(url, header + SECRET.encode(), body)
            assert answer.startswith(b"HTTP/1.1 400"), answer[:300]
            said = json.loads(answer.partition(b"\r\n\r\n")[2])
            assert said["status"] == "refused", said
            assert said["reason"].startswith("the body was cut short"), said
            assert f"5 of its Content-Length {len(body)} bytes arrived" in said["reason"], said
        signed = webhook.github_signature(SECRET.encode(), body).encode()
        answer = _cut_short(url, b"X-Hub-Signature-256: " + signed, body)
        assert answer.startswith(b"HTTP/1.1 403") and b"5 of its Content-Length" in answer
        text = m.exposition().decode()
        assert 'plangate_webhook_requests_total{result="bad_request"} 3.0' in text, text
        assert 'plangate_webhook_requests_total{result="refused"} 1.0' in text, text
        assert 'result="accepted"' not in text, text
    finally:
        metrics.disable()
    assert pushes.reasons == []
    assert post(url, body, {"X-Plangate-Secret": SECRET}).status_code == 202  # still serving


@pytest.mark.parametrize(
    ("framing", "received"),
    [
        (b"Transfer-Encoding: chunked\r\nContent-Length: 40\r\n", "Content-Length '40' beside "
         "Transfer-Encoding 'chunked'"),
        (b"Content-Length: 2\r\nContent-Length: 40\r\n", "Content-Length given 2 times ('2', "
         "'40')"),
        (b"Content-Length: 4x\r\n", "bad Content-Length '4x'"),
        (b"Transfer-Encoding: chunked\r\n", "(Transfer-Encoding 'chunked' is not read)"),
    ],
    ids=["chunks-beside-a-length", "two-lengths", "bad-length", "chunks-alone"],
)  # fmt: skip
def test_a_framing_refusal_says_what_was_received_and_the_rule(
    endpoint: tuple[str, Pushes], framing: bytes, received: str
) -> None:
    """Round 126: the 400 for a length beside ``chunked`` said "conflicting framing: one
    Content-Length and no Transfer-Encoding", the rule as if it were what was received."""
    url, pushes = endpoint
    answer = raw_request(
        url,
        b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-Plangate-Secret: " + SECRET.encode() + b"\r\n"
        + framing + b"\r\n",
    )  # fmt: skip
    reason = json.loads(answer.partition(b"\r\n\r\n")[2])["reason"]
    assert received in reason, reason
    if b"4x" in framing:
        assert "one decimal number" in reason, reason
    else:
        assert "send one Content-Length and no Transfer-Encoding" in reason, reason
    assert pushes.reasons == []
