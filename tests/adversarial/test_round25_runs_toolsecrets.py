"""Round 25, secrets never reaching git: credentials the *operator's config* gives the
controller or its tools, other than ``$<secrets.*>``, coming back in a tool's result.

docs/execution.md ("Environment"): tool processes get the controller's environment minus
secrets (every ``<secrets.env_prefix>*`` variable and the webhook secret), plus the
catalog's ``env``. docs/configuration.md calls ``notify.url_env`` "URLs that are secrets
(Slack webhooks) stay in the env", and keeps "tool ``env`` and ``headers`` values" out of the
recorded policy because they are secret. Redaction covers "every configured secret value".

One lab, one loopback http server that answers every request with the request's path and
headers (as httpbin, and many APIs' error pages, do); one plan ``d`` approved by Alice and run
in one pass. Its actions:

1. ``rec`` (control);
2. ``dump``: an exec tool (catalog ``env: {API_KEY: ...}``) that prints, as JSON, the
   variables of its environment named ``PLANGATE*``, ``HOOK*``, ``API*``, ``WEBHOOK*``,
   ``UI_*`` (and each value reversed);
3. ``hh``: an http GET tool whose catalog ``headers`` carry ``Authorization: Bearer ...``;
4. ``penv``: a python tool returning the last path segment of ``$HOOK_URL`` plus ``-py``.

The controller's environment: ``PLANGATE_SECRET_TOKEN`` (a ``$<secrets>`` value),
``WEBHOOK_SECRET`` (``webhook.secret_env``), ``UI_TOKEN`` (``ui.token_env``) and ``HOOK_URL``
(``notify.url_env``, pointing at the loopback server).

Asserted per variant: the value appears in no commit of the repository (``git log -p``) and
not in ``plangate status --json``:

- ``plain-secret``: ``PLANGATE_SECRET_TOKEN``. Held (stripped from the tool's env).
- ``plain-secret-reversed`` / ``webhook-secret-reversed``: ``dump`` also prints every value
  it sees reversed (which redaction cannot catch), so these show the variable really is
  stripped, not only redacted. Held.
- ``webhook-secret``: the webhook secret. Held (stripped).
- ``notify-url-env``: the notify URL kept in ``HOOK_URL``. **Broke**: the tool gets
  ``HOOK_URL`` in its environment and the URL (its secret path) is committed in
  EXECUTION_LOG.md; it is neither stripped like the webhook secret nor redacted.
- ``catalog-env``: the catalog ``env`` value ``API_KEY``. **Broke**: committed verbatim in
  the result of action 2 (not redacted as a configured secret).
- ``catalog-header``: the ``Authorization`` header value the server reflects. **Broke**:
  committed verbatim (result ``json`` and ``text``) in EXECUTION_LOG.md.
- ``python-tool-env``: action 4's value. **Broke**: python tools get ``HOOK_URL`` too.
- ``catalog-url-userinfo``: a second plan ``u`` calls ``hx``, an http tool whose catalog URL
  carries a password (``http://svc:PASSWORD@127.0.0.1:PORT/x``) and whose port is closed.
  **Broke**: the failure ``E_TOOL_FAILED: hx: POST http://svc:PASSWORD@... failed`` is
  committed (PLAN.yml's ``execution`` error, the outcome commit) and shown by ``status``; no
  server needs to reflect anything.
- ``catalog-argv-exit`` / ``catalog-argv-missing``: plans ``f`` and ``m`` call exec tools
  whose catalog ``argv`` holds ``--token=...``: one exits 3, the other's program does not
  exist. Held: the error names the program only, never its arguments.
- ``ui-token-env``: the bearer token of the web UI (``ui: {token_env: UI_TOKEN}``).
  **Broke**: like ``notify-url-env``, the tool gets ``UI_TOKEN`` and the token is committed.
  Whoever reads the plans repo can then open the UI.

Should: tool processes get none of the controller's configured credentials (strip every
``*_env`` variable the config names, as for the webhook secret) and redaction covers them
and the catalog's ``env``/``headers`` values like ``$<secrets.*>`` values.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from advkit import AGENT, Lab, plan_text
from test_round2_execution_kit import shared

HDR = "hdr-Secret-9f8e7d6c5b"
APIK = "apikey-Secret-1a2b3c4d5e"
SLACK = "slackSecret7x7x7x"
WH = "webhookSecret-0o0o0o0o"
SEC = "plainSecret-qwqwqwqw"
UI = "uiToken-Secret-5h5h5h5h"
URLPW = "urlPassW0rd77"
ARGV = "argvS3cret99"
MISSING = "argvMiss1ng42"

VALUES = {
    "plain-secret": SEC,
    "plain-secret-reversed": SEC[::-1],
    "webhook-secret-reversed": WH[::-1],
    "webhook-secret": WH,
    "notify-url-env": SLACK,
    "catalog-env": APIK,
    "catalog-header": HDR,
    "ui-token-env": UI,
    "python-tool-env": SLACK + "-py",
    "catalog-url-userinfo": URLPW,
    "catalog-argv-exit": ARGV,
    "catalog-argv-missing": MISSING,
}


class _Echo(BaseHTTPRequestHandler):
    def _do(self) -> None:
        n = int(self.headers.get("content-length") or 0)
        if n:
            self.rfile.read(n)
        out = json.dumps({"path": self.path, "headers": dict(self.headers.items())}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = _do

    def log_message(self, *args: object) -> None:
        pass


def _build(root: Path) -> Lab:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    dump = root / "dump.py"
    dump.write_text(
        "import os, json, sys\nsys.stdin.read()\n"
        "env = {k: v for k, v in os.environ.items()"
        " if k.startswith(('PLANGATE', 'HOOK', 'API', 'WEBHOOK', 'UI_'))}\n"
        "env.update({'rev_' + k: v[::-1] for k, v in list(env.items())})\n"
        "print(json.dumps(env))\n"
    )
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    closed = probe.getsockname()[1]  # nothing listens there: the call fails
    probe.close()
    fail = root / "fail.py"
    fail.write_text("import sys\nsys.stdin.read()\nsys.stderr.write('boom\\n')\nsys.exit(3)\n")
    pylib = root / "pylib"
    pylib.mkdir()
    (pylib / "penv.py").write_text(
        "import os\n\ndef dump():\n"
        "    return {'hook': os.environ.get('HOOK_URL', '').rsplit('/', 1)[-1] + '-py'}\n"
    )
    tools = (
        f"dump: {{kind: exec, argv: [{json.dumps(sys.executable)}, {json.dumps(str(dump))}],"
        f" env: {{API_KEY: {json.dumps(APIK)}}}}}\n"
        f'hh: {{kind: http, method: GET, url: "http://127.0.0.1:{port}/echo",'
        f" headers: {{Authorization: {json.dumps('Bearer ' + HDR)}}}}}\n"
        'penv: {kind: python, target: "penv:dump"}\n'
        f'hx: {{kind: http, method: POST, url: "http://svc:{URLPW}@127.0.0.1:{closed}/x"}}\n'
        f"fx: {{kind: exec, argv: [{json.dumps(sys.executable)}, {json.dumps(str(fail))},"
        f' "--token={ARGV}"]}}\n'
        f'mx: {{kind: exec, argv: ["/nonexistent/prog", "--token={MISSING}"]}}\n'
    )
    extra = (
        "notify: {url_env: [HOOK_URL], events: [start, complete]}\n"
        "webhook: {secret_env: WEBHOOK_SECRET}\n"
        "ui: {token_env: UI_TOKEN}\n"
        f"python_path: [{json.dumps(str(pylib))}]\n"
    )
    lab = Lab(root, tools=tools, extra=extra)
    lab.extra_env = {
        "HOOK_URL": f"http://127.0.0.1:{port}/services/T0/B0/{SLACK}",
        "WEBHOOK_SECRET": WH,
        "PLANGATE_SECRET_TOKEN": SEC,
        "UI_TOKEN": UI,
    }
    text = plan_text(
        "d",
        extra_actions=(
            "  - id: 2\n    tool: dump\n    why: print my environment\n"
            '  - id: 3\n    tool: hh\n    why: call the echo api\n    params: {q: "1"}\n'
            "  - id: 4\n    tool: penv\n    why: a python tool\n"
        ),
    ).replace("  - name: rec\n", "  - name: rec\n  - name: dump\n  - name: hh\n  - name: penv\n")
    lab.write("d", text)
    extra_u = "  - id: 2\n    tool: hx\n    why: post to the service\n"
    lab.write(
        "u",
        plan_text("u", extra_actions=extra_u).replace(
            "  - name: rec\n", "  - name: rec\n  - name: hx\n"
        ),
    )
    for slug, tool in (("f", "fx"), ("m", "mx")):
        extra = f"  - id: 2\n    tool: {tool}\n    why: fails\n"
        lab.write(
            slug,
            plan_text(slug, extra_actions=extra).replace(
                "  - name: rec\n", f"  - name: rec\n  - name: {tool}\n"
            ),
        )
    lab.commit("plans d, u, f and m", AGENT)
    lab.run()
    for slug in ("u", "f", "m"):
        lab.set_status(slug, "approved")
    lab.approve("d")
    lab.run()
    lab.gitlog = lab.git("log", "-p", "--all", "--format=%H%n%B")  # type: ignore[attr-defined]
    res = lab.cli("status", "--json", "--config", str(lab.config))
    lab.statusout = res.stdout + res.stderr  # type: ignore[attr-defined]
    srv.shutdown()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r25-toolsecrets", _build)


def _broke(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 25: {what}")


#: What round 25 found (fixed: the config's credentials are kept out of tools and redacted).
FOUND = {
    "notify-url-env": _broke(
        "notify.url_env (a secret URL) reaches tool processes and is committed unredacted"
    ),
    "catalog-env": _broke("a catalog env credential printed by its tool is committed unredacted"),
    "catalog-header": _broke("a catalog header credential reflected by the server is committed"),
    "catalog-url-userinfo": _broke(
        "the password in a catalog http URL is committed in the failed action's error"
    ),
    "python-tool-env": _broke(
        "a python tool gets notify.url_env too; its return value is committed"
    ),
    "ui-token-env": _broke(
        "the ui.token_env token reaches tool processes and is committed unredacted"
    ),
}
BROKEN: dict[str, pytest.MarkDecorator] = {}


def test_plan_ran(lab: Lab) -> None:
    assert len(lab.calls("d")) == 1
    assert lab.plan("d")["plan"]["status"] == "completed"
    for slug in ("u", "f", "m"):  # the failing tools really were called and failed
        assert lab.plan(slug)["plan"]["status"] == "failed"
        assert lab.plan(slug)["execution"]["actions"][1]["error"]["code"] == "E_TOOL_FAILED"


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in VALUES],
)
def test_value_never_committed(lab: Lab, vid: str) -> None:
    value = VALUES[vid]
    in_git = value in lab.gitlog  # type: ignore[attr-defined]
    in_status = value in lab.statusout  # type: ignore[attr-defined]
    assert not in_git, f"{vid}: {value} committed"
    assert not in_status, f"{vid}: {value} in status"
