# ruff: noqa: E501
"""Round 26, secrets never reaching git or status output: credentials the operator's config
puts in an http tool's catalog URL other than as a password (round 25 fixed
``http://user:PASSWORD@host``; docs/execution.md, "Redaction": "the password of a tool's URL,
which error messages also write as ``user:***@host``").

One lab, four http tools (POST unless said), one plan per tool (one action, ``{a: 1}``),
approved by Alice in one commit, run in one pass:

- ``query-closed``: ``http://127.0.0.1:9/x?api_key=KEY`` (port closed);
- ``query-answered``: ``http://127.0.0.1:PORT/x?access_token=KEY``, a loopback server that
  answers 500 with a body that does not echo the URL;
- ``query-get``: a GET tool ``http://127.0.0.1:9/x?key=KEY`` (port closed);
- ``path-token``: ``http://127.0.0.1:9/hooks/KEY/post`` (the Slack/Discord webhook form,
  where the path is the credential, as ``notify.url_env`` URLs are; port closed).

Controls, a URL password (round 25's fix) quoted by the errors other rounds added:
``userinfo-empty-seg`` (``http://svc:PASSWORD@127.0.0.1:9/hooks/{c}/post`` with ``c: ""``:
round 24's E_PARAMS_INVALID) and ``userinfo-timeout`` (a server that answers after 3 s, tool
``timeout: 2``: E_TIMEOUT). Held: written ``svc:***@``.

Asserted per variant: KEY is in no commit (``git log -p --all``) and not in
``plangate status --json``.

**Broke** (all four, round 26): the failure ``E_TOOL_FAILED: query-closed: POST
http://127.0.0.1:9/x?api_key=KEY failed: [Errno 111] Connection refused`` (``... answered
500`` for ``query-answered``) is committed (PLAN.yml's ``execution`` error, EXECUTION_LOG.md,
the outcome commit's message) and shown by ``status``: the query string and the path of a
catalog URL are written verbatim, where the userinfo password is now ``***``. No server has to
reflect anything.
Should: redact the catalog URL's query values (and, for the webhook form, the path) like its
password, or write only scheme, host and port in errors.
``show-*`` (``test_show_does_not_print_the_catalog_credential``): ``plangate show PATH
--config`` (what a reviewer reads before approving) for ``userinfo-timeout`` and
``query-closed``. **Broke** (both, round 26): its ``runs: http: POST http://svc:PASSWORD@...``
line prints the URL password (round 25: "a URL password never quoted") and the query key
verbatim. Should: ``svc:***@`` and the query values masked, as in every other output.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

KEYS = {
    "query-closed": "Qz7Rt2Mv8Kp4Wn6Y",
    "query-answered": "Hb3Nc9Xd5Fg1Jk7L",
    "query-get": "Mx5Ly3Kz9Jw1Iv7U",
    "path-token": "Pw4Ts8Ue2Vr6Ya0B",
    "userinfo-empty-seg": "Zr8Yq2Xp6Wo4Vn1M",
    "userinfo-timeout": "Ge5Fd3Cb1Az9Yx7W",
}
_R = "round 26: a credential in the catalog URL's {} is committed and shown by status in the tool's error (only a URL password is redacted)"
#: What round 26 found. Fixed: a URL's query values are credentials (redacted, and written
#: ``?key=***`` in errors and ``show``). Accepted (docs/threat-model.md, "Accepted limits"):
#: a token that is a path segment cannot be told from the path; keep it out of the URL.
FOUND = {
    "query-closed": _R.format("query string"),
    "query-answered": _R.format("query string"),
    "query-get": _R.format("query string"),
}
BROKEN = {
    "path-token": "round 26, accepted: a credential written as a path segment of a catalog URL "
    "cannot be told from the path; it is quoted in errors (keep credentials in headers, the "
    "query or secrets)",
}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
        if self.path == "/slow":
            time.sleep(3)
        try:
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": "bad"}')
        except OSError:  # the client gave up (the timeout variant)
            pass

    def log_message(self, *args: object) -> None:
        pass


def _build(root: Path) -> Lab:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    urls = {
        "query-closed": ("POST", f"http://127.0.0.1:9/x?api_key={KEYS['query-closed']}"),
        "query-answered": (
            "POST",
            f"http://127.0.0.1:{port}/x?access_token={KEYS['query-answered']}",
        ),
        "query-get": ("GET", f"http://127.0.0.1:9/x?key={KEYS['query-get']}"),
        "path-token": ("POST", f"http://127.0.0.1:9/hooks/{KEYS['path-token']}/post"),
        "userinfo-empty-seg": (
            "POST",
            f"http://svc:{KEYS['userinfo-empty-seg']}@127.0.0.1:9/hooks/{{c}}/post",
        ),
        "userinfo-timeout": (
            "POST",
            f"http://svc:{KEYS['userinfo-timeout']}@127.0.0.1:{port}/slow",
        ),
    }
    params = {"userinfo-empty-seg": '{c: ""}'}
    tools = "".join(
        f'{v}: {{kind: http, method: {m}, url: "{u}", timeout: {2 if "timeout" in v else 5}}}\n'
        for v, (m, u) in urls.items()
    )
    lab = Lab(root, tools=tools)
    for v in KEYS:
        lab.write(
            v,
            f"plan:\n  name: {v}\n  task: t\n  status: pending_approval\n"
            f"available_tools: [{{name: {v}}}]\n"
            f"actions:\n  - {{id: 1, tool: {v}, why: w, params: {params.get(v, '{a: 1}')}}}\n",
        )
    lab.commit("plans")
    lab.run()
    for v in KEYS:
        lab.set_status(v, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    server.shutdown()
    lab.gitlog = lab.git("log", "-p", "--all")  # type: ignore[attr-defined]
    lab.shows = {  # type: ignore[attr-defined]
        v: lab.cli("show", f"plans/{v}", "--config", str(lab.config), cwd=lab.repo).stdout
        for v in KEYS
    }
    lab.stat = lab.cli("status", "--json", "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r26-urlquery", _build)


def test_each_plan_ended(lab: Lab) -> None:
    rows = {r["plan"]: r for r in json.loads(lab.stat)}  # type: ignore[attr-defined]
    for v in KEYS:
        assert rows[f"plans/{v}"]["status"] == "failed"
        assert "E_" in (rows[f"plans/{v}"].get("reason") or "")


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(
            v,
            id=v,
            marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=BROKEN[v])]
            if v in BROKEN
            else [],
        )
        for v in KEYS
    ],
)
def test_catalog_url_credential_stays_out_of_git_and_status(lab: Lab, vid: str) -> None:
    key = KEYS[vid]
    assert key not in lab.gitlog  # type: ignore[attr-defined]
    assert key not in lab.stat  # type: ignore[attr-defined]


SHOW_FOUND = {
    "userinfo-timeout": "round 26: plangate show --config prints the catalog URL with its password (round 25 said a URL password is never quoted)",
    "query-closed": "round 26: plangate show --config prints the catalog URL with its query credential",
}


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(
            v,
            id=v,
        )
        for v in SHOW_FOUND
    ],
)
def test_show_does_not_print_the_catalog_credential(lab: Lab, vid: str) -> None:
    show = lab.shows[vid]  # type: ignore[attr-defined]
    assert "runs: http" in show
    assert KEYS[vid] not in show
