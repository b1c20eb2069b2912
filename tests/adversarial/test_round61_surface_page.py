"""Round 61, agent-facing surfaces: the reviewer's web page (``ui.listen``), its JSON twin
and ``/metrics``, fed by plan text and tool outputs an agent controls.

docs/operations.md: "Every string from a plan, a commit or a tool output is shown as text:
HTML-escaped, hidden characters (bidi overrides, zero-width) shown as escapes, the execution
log rendered as Markdown with raw HTML off and ``javascript:``/``data:`` links dropped; and
every response carries ``Content-Security-Policy: default-src 'none'``"; "At most 8 requests
are served at once (503 with ``Retry-After`` beyond)"; "a request ... never takes the
controller's locks, so it cannot slow or block a pass"; ``plangate_plans{status}`` counts
plans by status with ``unreadable`` for files that cannot carry one. threat-model (round 49):
show never displays two different strings the same (hidden, blank-drawn, non-NFC).

Lab (one, module scope), local mode: the agent commits

- ``hidden`` (pending): one param per hidden character, each ``a<char>b`` (soft hyphen, word
  joiner, a TAG letter, Hangul filler, Mongolian vowel separator, BOM, CGJ, a blank-drawn
  musical symbol, bidi isolate, Arabic letter mark, U+2028 and NEL inside a quoted string, a
  decomposed ``e`` + U+0301) and one 20,000-character value ending in ``TAIL-R61``;
- ``xss`` (approved by Alice, runs): name, why and params holding HTML and Markdown link
  payloads, which the recorder echoes back as its output (so they reach results and the log);
- ``sec`` (approved, runs): its ``rec`` call gets ``$<secrets.TOK>`` and echoes it;
- ``met0``..``met5``: plans whose ``plan.status`` is a hostile string (a quote, a brace, a
  line break then a forged metric line) or six distinct unknown words;

then a daemon (``plangate run``) serves the page and metrics; the bench holds 12 sockets on
the page with an unfinished request, then asks for pages, and commits a plan ``late`` that
the daemon must still freeze.

Asserted per variant:

- ``hidden-*``: the plan's HTML page never contains the raw character (an escape instead);
  ``long-tail``: the page (or the API) shows the end of the long value, or says it is cut.
- ``xss-*``: the HTML has no live ``<script``/``<img``/event handler, no
  ``javascript:``/``vbscript:``/``data:`` href (after HTML-unescaping), and every response
  (page, API, 404, 405) carries the CSP header.
- ``secret-*``: the secret is on no page, API answer or ``/metrics``.
- ``metrics-*``: no forged metric line; ``plangate_plans`` labels are known statuses or
  ``unreadable``.
- ``slow-*``: with 12 stalled page connections a new page request is still answered (200, or
  503 with ``Retry-After``), ``/healthz`` answers, and the daemon freezes ``late``.

- ``sc-*``: an approved plan with 19 YAML scalars readers disagree on (``1_000``, ``0o17``,
  ``010``, ``12:30``, ``yes``, ``NO``, ``Null``, ``1e3_0``, ``1__0``, ``-0.0``...): the API's
  document, the HTML page and what the tool got carry the same JSON value.
- ``wh-*`` (the daemon's webhook, local mode): no credential, a wrong/prefix/suffix secret,
  Basic auth, the secret in the query, GitHub signatures of another body, with another key,
  empty or SHA-1, a wrong GitLab token: 401/403; 2 MB announced: 413; chunked: 411; a
  negative or non-numeric Content-Length: 400; the secret (plain or GitHub) is 202; no
  answer echoes the secret; ``plangate_webhook_requests_total`` labels are the documented set.
- ``oracle-page``: two agent plans named with the secret and with a wrong guess of its shape
  must look alike on the page.

- ``owned-*``: the agent commits its pending plan ``owned`` with an ``approval:`` block
  naming Alice, an ``execution:`` block (action 1 succeeded, an output) and an
  EXECUTION_LOG.md; ``owned-log-after-run``: the agent commits a rewritten EXECUTION_LOG.md of
  ``scal`` after it ran. The page, the API and the MCP ``log`` must not show the agent's
  text as the record; after Alice approves ``owned`` its action must still run once.

- ``ownfrozen-hash``: the agent commits its plan with a ``frozen:`` block holding another
  hash: the page and API show the plan's own hash (``plangate hash``).
- ``owned-fail-*``: a pending plan whose agent-written ``execution:`` block says it failed
  with ``E_FORGED_R61``: the overview and ``/api/`` must not list that failure.
- ``name-*``: plan folders ``deploy`` + U+200B beside ``deploy``, ``deploy`` + U+202E ``gpj``,
  ``<img src=x onerror=alert(9)>``: the overview shows them escaped, no live markup.
- ``q-*``: ``/?status=<script>...``, ``page`` of -1, 40 nines, ``1e400``, ``abc`` (API), a
  60,000-character status and plan id, ``/commit/HEAD:<path>``, a bidi commit id: an answer
  (200/400/404) as text, no traceback, CSP on every HTML answer, JSON served as JSON.
- ``oracle-cli-validate``: ``plangate validate --json --config`` of two plans whose
  ``plan.status`` is the secret and a wrong guess: the answers must not tell them apart.

Seen (strict xfails): ``oracle-cli-validate``: ``(got '***')`` for the secret, the wrong
guess quoted as written. ``oracle-page``: the plan named with the secret is shown
``"name": "***"``, the wrong guess as written, so the page confirms a guess of a
controller secret. ``owned-page``/``owned-api``/``owned-mcp-log``: the controller's freeze
keeps the agent's ``approval:``/``execution:`` blocks, and the page, the API and MCP ``log``
show the never-run plan's action as succeeded with the forged output and render the forged
log ("Approved by alice@example.com", "Status completed"); ``owned-log-after-run``: the
agent's committed log of a finished plan is rendered as its log, no problem flagged. Held:
after Alice approves ``owned`` its action runs once (the forged block stands for no run); the
agent's ``frozen:`` hash is replaced by the plan's own; the agent-written failure is listed
nowhere; hostile folder names are escaped; every hostile
query held.
Everything else held (hidden characters escaped, the long value shown to
its end, no live markup or ``javascript:`` link, CSP on every answer incl. 404/405, no
secret on any page or ``/metrics``, hostile statuses counted as ``invalid``/``unreadable``,
stalled page sockets stall neither the page nor the daemon, scalars shown as they run,
every webhook refusal).

Fixed (2026-11-29): ``oracle-cli-validate``, ``oracle-page``. Answers quote the asker's own
text as written and redact only the controller's material: ``validate --json`` writes each
problem through ``Problem.answered`` (a catalog ``params_schema``'s parts redacted around the
plan's own quotes) instead of redacting the whole record; the page shows the committed plan
as its author wrote it and the controller's blocks (``frozen``, ``approval``, ``execution``,
``validation``) redacted. What the controller commits still redacts everything.

Fixed (2026-11-29): ``owned-page``, ``owned-api``, ``owned-mcp-log``, ``owned-log-after-run``.
A freeze keeps the ``execution:``/``approval:`` blocks only as the controller's own commits
wrote them (an author's version is replaced, here: removed), and the page, its API and MCP
``log`` show the record through one rule (``controller.git.ownrecord.shown_record``): the
blocks of the controller's last commit that wrote them and EXECUTION_LOG.md as its last commit
of the file wrote it; a later version by anyone else is flagged ``E_OWNED_BLOCK_CHANGED``
(who, which commit) and never shown as the record.
"""

from __future__ import annotations

import contextlib
import html
import json
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BenchError, Lab, cases, plan_text
from test_round2_execution_kit import shared

SECRET = "r61page-Sekr3t-Hq8vZw"

HIDDEN = {
    "shy": "\u00ad",
    "wj": "\u2060",
    "tag": "\U000e0041",
    "hangul-filler": "\u3164",
    "mvs": "\u180e",
    "bom": "\ufeff",
    "cgj": "\u034f",
    "notehead": "\U0001d159",
    "lri": "\u2066",
    "alm": "\u061c",
    "ls": "\u2028",
    "nel": "\u0085",
    "decomposed": "e\u0301",
}

XSS = {
    "script": "<script>alert(1)</script>",
    "img": '"><img src=x onerror=alert(1)>',
    "md-js": "[click](javascript:alert(1))",
    "md-js-case": "[click](JaVaScRiPt:alert(1))",
    "md-js-entity": "[click](java&#115;cript:alert(1))",
    "md-autolink": "<javascript:alert(1)>",
    "md-vbscript": "[click](vbscript:msgbox(1))",
    "md-data": "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "md-image": "![pixel](https://evil.example/pixel.png)",
    "raw-a": '<a href="javascript:alert(1)">raw</a>',
}

BAD_STATUS = {
    "met-inject": 'approved"} 1\\nplangate_pwned{x=\\"1\\"} 1\\n#',
    "met-brace": 'x{y=\\"z\\"}',
}

#: YAML scalars that YAML 1.1 and 1.2 readers (and JSON) read differently
SCALARS = {
    "sc-underscore": "1_000",
    "sc-octal-o": "0o17",
    "sc-yes": "yes",
    "sc-dot5": ".5",
    "sc-exp": "1e3",
    "sc-hex": "0x1F",
    "sc-plus": "+1",
    "sc-tilde": "~",
    "sc-octal-0": "010",
    "sc-float-int": "1.0",
    "sc-neg-zero": "-0.0",
    "sc-sexagesimal": "12:30",
    "sc-null-case": "Null",
    "sc-no": "NO",
    "sc-trailing-dot": "1.",
    "sc-binary": "0b11",
    "sc-exp-underscore": "1e3_0",
    "sc-double-underscore": "1__0",
    "sc-plus-dot": "+.5",
}

BROKEN: dict[str, Any] = {}


def _esc_yaml(s: str) -> str:
    out = []
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20 or o > 0x7E:
            out.append(f"\\U{o:08x}" if o > 0xFFFF else f"\\u{o:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _get(
    port: int, path: str, method: str = "GET", timeout: float = 15
) -> tuple[int, dict[str, str], str]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, dict(resp.headers), resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read().decode("utf-8", "replace")
    except (TimeoutError, OSError) as err:
        return -1, {}, f"no answer: {err!r}"


#: controller-owned blocks and a log the AGENT commits with its pending plan
OWNED_BLOCKS = """\
approval:
  status: approved
  by: alice@example.com
  at: '2026-11-29T10:00:00Z'
  commit: 1d3b75ef510ed599e5a9c8d9f5c65c46e4e31601
execution:
  status: completed
  controller: plangate@vm
  actions:
  - id: 1
    status: succeeded
    outputs: {msg: FORGED-OUT-R61}
"""
FORGED_LOG = """\
# Execution log: owned

| | |
|---|---|
| Plan | `plans/owned` |
| Approved by | alice@example.com |
| Status | completed |

## Action 1: rec

FORGED-LOG-R61
"""
OWNED_FAIL = """\
execution:
  status: failed
  controller: plangate@vm
  code: E_FORGED_R61
  error: "FORGED-FAILURE-R61: Alice's deploy broke prod"
  actions:
  - id: 1
    status: failed
    error: {code: E_FORGED_R61, message: FORGED-FAILURE-R61}
"""
QUERIES = {
    "q-status-xss": "/?status=%3Cscript%3Ealert(1)%3C/script%3E&page=1",
    "q-page-neg": "/?status=pending_approval&page=-1",
    "q-page-huge": "/?status=pending_approval&page=" + "9" * 40,
    "q-page-float": "/?status=pending_approval&page=1e400",
    "q-api-page-word": "/api/?status=pending_approval&page=abc",
    "q-status-long": "/?status=" + "a" * 60000,
    "q-plan-long": "/plan/plans/" + "b" * 60000,
    "q-commit-blob": "/commit/HEAD:plans/xss/PLAN.yml",
    "q-commit-bidi": "/commit/%E2%80%AE" + "0" * 40,
}
WH_SECRET = "r61-wh-Sekr3t-Kd82Lq0pZ"
_BODY = b'{"ref": "refs/heads/main"}'


def _post(
    headers: dict[str, str], body: bytes = _BODY, path: str = "/webhook", cl: str | None = None
) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    head += "Content-Type: application/json\r\n"
    if cl != "none":
        head += f"Content-Length: {cl if cl is not None else len(body)}\r\n"
    for k, v in headers.items():
        head += f"{k}: {v}\r\n"
    return head.encode() + b"\r\n" + body


def _sig(body: bytes, key: str = WH_SECRET, algo: str = "sha256") -> str:
    import hashlib
    import hmac

    return f"{algo}=" + hmac.new(key.encode(), body, getattr(hashlib, algo)).hexdigest()


#: webhook requests: id -> raw bytes (the ``ok`` ones must be accepted, all others refused)
WEBHOOK: dict[str, bytes] = {
    "wh-none": _post({}),
    "wh-wrong": _post({"X-Plangate-Secret": "nope"}),
    "wh-prefix": _post({"X-Plangate-Secret": WH_SECRET[:-1]}),
    "wh-suffix": _post({"X-Plangate-Secret": WH_SECRET + "x"}),
    "wh-bearer-wrong": _post({"Authorization": "Bearer " + WH_SECRET[:-1]}),
    "wh-basic": _post(
        {
            "Authorization": "Basic "
            + __import__("base64").b64encode(f":{WH_SECRET}".encode()).decode()
        }
    ),
    "wh-query": _post({}, path="/webhook?secret=" + WH_SECRET),
    "wh-gh-other-body": _post(
        {"X-Hub-Signature-256": _sig(b'{"ref": "refs/heads/other"}'), "X-GitHub-Event": "push"}
    ),
    "wh-gh-sha1": _post({"X-Hub-Signature": _sig(_BODY, algo="sha1"), "X-GitHub-Event": "push"}),
    "wh-gh-empty": _post({"X-Hub-Signature-256": "sha256=", "X-GitHub-Event": "push"}),
    "wh-gh-wrong-key": _post(
        {"X-Hub-Signature-256": _sig(_BODY, key="other"), "X-GitHub-Event": "push"}
    ),
    "wh-gitlab-wrong": _post({"X-Gitlab-Token": WH_SECRET.upper()}),
    "wh-too-big": _post({"X-Plangate-Secret": WH_SECRET}, body=b"{", cl="2000000"),
    "wh-no-length": _post(
        {"X-Plangate-Secret": WH_SECRET, "Transfer-Encoding": "chunked"},
        body=b"1\r\n{\r\n0\r\n\r\n",
        cl="none",
    ),
    "wh-neg-length": _post({"X-Plangate-Secret": WH_SECRET}, body=b"", cl="-1"),
    "wh-bad-length": _post({"X-Plangate-Secret": WH_SECRET}, body=b"", cl="abc"),
    "wh-ok-bad-json": _post({"X-Plangate-Secret": WH_SECRET}, body=b"{{{\xff"),
    "wh-ok": _post({"X-Plangate-Secret": WH_SECRET}),
    "wh-ok-github": _post({"X-Hub-Signature-256": _sig(_BODY), "X-GitHub-Event": "push"}),
}


def _raw(port: int, data: bytes) -> tuple[int, dict[str, str], str]:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=15) as s:
            s.sendall(data)
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_WR)
            chunks = []
            while True:
                try:
                    got = s.recv(65536)
                except (TimeoutError, OSError) as err:
                    chunks.append(f"<recv: {err!r}>".encode())
                    break
                if not got:
                    break
                chunks.append(got)
    except OSError as err:
        return -1, {}, f"no connection: {err!r}"
    text = b"".join(chunks).decode("utf-8", "replace")
    m = re.match(r"HTTP/1\.[01] (\d{3})", text)
    return (int(m.group(1)) if m else -1), {}, text


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    lab = Lab(
        root,
        extra=(
            f"secrets: {{file: {root / 'sec.yml'}}}\n"
            "ui: {listen: 0}\nmetrics: {listen: '127.0.0.1:0'}\n"
            "webhook: {listen: '127.0.0.1:0'}\n"
        ),
    )
    params = "".join(
        f"p_{k.replace('-', '_')}: {_esc_yaml('a' + v + 'b')}\n" for k, v in HIDDEN.items()
    )
    params += f'p_long: "{"A" * 20000}TAIL-R61"\n'
    lab.write("hidden", plan_text("hidden", params=params))
    xparams = "".join(f"x_{k.replace('-', '_')}: {_esc_yaml(v)}\n" for k, v in XSS.items())
    xss = plan_text("xss", params=xparams, name="<script>alert('name')</script>")
    xss = xss.replace(
        'why: "record that variant xss ran"',
        'why: "<img src=x onerror=alert(2)> [w](javascript:alert(3))"',
    )
    lab.write("xss", xss)
    lab.write("sec", plan_text("sec", params='key: "$<secrets.TOK>"\n'))
    lab.write("owned", plan_text("owned") + OWNED_BLOCKS)
    lab.write("owned", FORGED_LOG, filename="EXECUTION_LOG.md")
    lab.write("deploy", plan_text("deploy-plain"))
    lab.write("deploy\u200b", plan_text("deploy-zwsp"))
    lab.write("deploy\u202egpj", plan_text("deploy-bidi"))
    lab.write("<img src=x onerror=alert(9)>", plan_text("deploy-xss"))
    lab.write(
        "ownfrozen",
        plan_text("ownfrozen")
        + "frozen:\n  hash: sha256:"
        + "ab" * 32
        + "\n  at: '2026-11-29T10:00:00Z'\n",
    )
    lab.write("owned-fail", plan_text("owned-fail") + OWNED_FAIL)
    lab.write("orc-s", plan_text("orc-s", name=SECRET))
    lab.write("orc-c", plan_text("orc-c", name=SECRET[:-1] + "X"))
    lab.write(
        "scal",
        plan_text(
            "scal", params="".join(f"{k.replace('-', '_')}: {v}\n" for k, v in SCALARS.items())
        ),
    )
    for k, v in BAD_STATUS.items():
        lab.write(k, plan_text(k).replace("status: pending_approval", f'status: "{v}"'))
    for i in range(6):
        lab.write(
            f"met{i}",
            plan_text(f"met{i}").replace("status: pending_approval", f"status: zz{i}word"),
        )
    lab.commit("agent plans")
    lab.run()
    lab.set_status("xss", "approved")
    lab.set_status("sec", "approved")
    lab.set_status("scal", "approved")
    lab.commit("approve", ALICE)
    lab.run()

    # the agent commits a rewritten log of a plan that ran (the controller's log replaced)
    lab.write(
        "scal",
        FORGED_LOG.replace("owned", "scal").replace("R61", "AFTER-R61"),
        filename="EXECUTION_LOG.md",
    )
    lab.commit("agent rewrites the log of scal")
    lab.run()
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    env["PLANGATE_WEBHOOK_SECRET"] = WH_SECRET
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    pages: dict[str, Any] = {}
    held: list[socket.socket] = []
    lines: list[str] = []
    try:
        ports: dict[str, int] = {}
        deadline = time.time() + 40
        while time.time() < deadline and len(ports) < 3:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                break
            lines.append(line)
            m = re.search(r'"endpoint": "(\w+)\.listen", "address": "127\.0\.0\.1:(\d+)"', line)
            if m:
                ports[m.group(1)] = int(m.group(2))
        ui, met, hook = ports.get("ui"), ports.get("metrics"), ports.get("webhook")
        if ui is None or met is None or hook is None:
            raise BenchError("the daemon never said where it listens: " + "".join(lines)[-3000:])
        # wait for the first snapshot (the page names the plans)
        for _ in range(60):
            code, _h, body = _get(ui, "/api/")
            if code == 200 and "plans/hidden" in body:
                break
            time.sleep(0.5)
        for slug in ["hidden", "xss", "sec", "scal", "orc-s", "orc-c", "owned", "ownfrozen"]:
            pages[f"page:{slug}"] = _get(ui, f"/plan/plans/{slug}")
            pages[f"api:{slug}"] = _get(ui, f"/api/plan/plans/{slug}")
        pages["index"] = _get(ui, "/")
        pages["api-index"] = _get(ui, "/api/")
        pages["audit"] = _get(ui, "/audit")
        pages["404"] = _get(ui, "/nope/<script>")
        pages["405"] = _get(ui, "/", method="POST")
        for vid, raw in WEBHOOK.items():
            pages[vid] = _raw(hook, raw)
        for vid, path in QUERIES.items():
            pages[vid] = _get(ui, path)
        pages["metrics"] = _get(met, "/metrics")
        # slow clients: unfinished requests held open
        for _ in range(12):
            s = socket.create_connection(("127.0.0.1", ui), timeout=5)
            s.sendall(b"GET /api/ HTTP/1.1\r\nHost: x\r\n")
            held.append(s)
        time.sleep(0.5)
        pages["slow-page"] = _get(ui, "/api/", timeout=20)
        pages["slow-healthz"] = _get(met, "/healthz", timeout=20)
        lab.write("late", plan_text("late"))
        lab.commit("late plan")
        frozen = False
        for _ in range(40):
            if (lab.repo / "plans/late/PLAN.yml").read_text().count("frozen:"):
                frozen = True
                break
            time.sleep(0.5)
        pages["slow-frozen"] = frozen
    finally:
        for s in held:
            s.close()
        proc.send_signal(signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        lines.append(out or "")
    from test_round61_surface_mcp import mcp

    (pages["mcp-log:owned"],) = mcp(lab, [("log", {"path": "plans/owned"})])
    for name, guess in [("orc-cli-s", SECRET), ("orc-cli-c", SECRET[:-1] + "X")]:
        (root / f"{name}.yml").write_text(
            plan_text(name).replace("status: pending_approval", f'status: "{guess}"')
        )
    got = lab.cli(
        "validate", "--json", "--config", str(lab.config), "orc-cli-s.yml", "orc-cli-c.yml"
    )
    pages["orc-cli"] = got.stdout
    pages["ownfrozen-hash"] = lab.cli(
        "hash", str(lab.repo / "plans/ownfrozen/PLAN.yml"), "--config", str(lab.config)
    ).stdout.strip()
    pages["owned-ran-before"] = len(lab.calls("owned"))
    lab.approve("owned", ALICE)  # Alice approves what she reviewed: the plan's one action
    lab.run()
    pages["owned-status-after"] = lab.status().get("plans/owned", {})
    lab.pages = pages  # type: ignore[attr-defined]
    lab.daemon_log = "".join(lines)[-20000:]  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r61-surface-page", _build)


@pytest.mark.parametrize("vid", cases([f"hidden-{k}" for k in HIDDEN], list(HIDDEN), BROKEN))
def test_a_hidden_character_never_reaches_the_page_raw(lab: Lab, vid: str) -> None:
    code, _h, body = lab.pages["page:hidden"]  # type: ignore[attr-defined]
    assert code == 200, body[:2000]
    raw = "a" + HIDDEN[vid] + "b"
    assert raw not in body, f"{vid} shown raw"
    if vid == "hidden-decomposed":
        assert "a\u00e9b" not in body, "a decomposed value shown as its composed form"


@pytest.mark.parametrize("vid", cases(["long-tail"], ["long-tail"], BROKEN))
def test_a_long_value_is_shown_to_its_end_or_said_cut(lab: Lab, vid: str) -> None:
    _c, _h, body = lab.pages["page:hidden"]  # type: ignore[attr-defined]
    _c2, _h2, api = lab.pages["api:hidden"]  # type: ignore[attr-defined]
    assert "TAIL-R61" in body or re.search(r"(?i)truncat|\bcut\b|more characters|…", body), body[
        -3000:
    ]
    assert "TAIL-R61" in api, api[-2000:]


def _live(body: str) -> list[str]:
    found = []
    for m in re.finditer(r"<(script|img|iframe|object|embed|svg|a)\b[^>]*>", body, re.I):
        tag = m.group(0)
        if m.group(1).lower() in ("script", "img", "iframe", "object", "embed", "svg"):
            found.append(tag)
        for href in re.findall(r"""(?i)\b(?:href|src)\s*=\s*["']?([^"' >]+)""", tag):
            target = re.sub(r"[\s\x00-\x1f]", "", html.unescape(href)).lower()
            if target.startswith(("javascript:", "vbscript:", "data:")):
                found.append(tag)
    found += re.findall(r"<[a-z][^>]*\son[a-z]+\s*=", body, re.I)
    return found


@pytest.mark.parametrize(
    "vid", cases(["xss-page", "xss-index", "xss-csp"], ["xss-page", "xss-index", "xss-csp"], BROKEN)
)
def test_hostile_text_is_shown_as_text(lab: Lab, vid: str) -> None:
    pages = lab.pages  # type: ignore[attr-defined]
    assert len(lab.calls("xss")) == 1, lab.codes("xss")
    if vid == "xss-page":
        code, _h, body = pages["page:xss"]
        assert code == 200, body[:2000]
        assert "onerror" in body or "alert" in body  # the payloads are on the page, as text
        assert _live(body) == [], _live(body)
    elif vid == "xss-index":
        for key in ["index", "audit", "404"]:
            assert _live(pages[key][2]) == [], (key, _live(pages[key][2]))
    else:
        for key in ["page:xss", "api:xss", "index", "api-index", "audit", "404", "405"]:
            code, headers, _b = pages[key]
            csp = {k.lower(): v for k, v in headers.items()}.get("content-security-policy", "")
            assert "default-src 'none'" in csp, (key, code, headers)


@pytest.mark.parametrize(
    "vid", cases(["secret-pages", "secret-metrics"], ["secret-pages", "secret-metrics"], BROKEN)
)
def test_the_secret_is_on_no_page(lab: Lab, vid: str) -> None:
    pages = lab.pages  # type: ignore[attr-defined]
    assert len(lab.calls("sec")) == 1
    keys = (
        ["metrics"]
        if vid == "secret-metrics"
        else ["page:sec", "api:sec", "index", "api-index", "audit"]
    )
    for key in keys:
        assert SECRET not in pages[key][2], key


KNOWN = {
    "draft",
    "pending_approval",
    "approved",
    "running",
    "completed",
    "failed",
    "rejected",
    "aborted",
    "paused",
    "unreadable",
    "waiting_approval",
    "expired",
    "in_doubt",
    "invalid",
}


@pytest.mark.parametrize(
    "vid", cases(["metrics-inject", "metrics-labels"], ["metrics-inject", "metrics-labels"], BROKEN)
)
def test_metrics_labels_are_not_plan_text(lab: Lab, vid: str) -> None:
    code, _h, body = lab.pages["metrics"]  # type: ignore[attr-defined]
    assert code == 200, body[:1000]
    if vid == "metrics-inject":
        assert not re.search(r"(?m)^plangate_pwned", body), body[:3000]
        for line in body.splitlines():
            if line.startswith("plangate_plans{"):
                assert re.fullmatch(r'plangate_plans\{status="[a-z_]+"\} [0-9.e+]+', line), line
    else:
        labels = re.findall(r'(?m)^plangate_plans\{status="([^"]*)"\}', body)
        assert labels, body[:2000]
        assert not [x for x in labels if x.startswith(("zz", "x{"))], labels


@pytest.mark.parametrize(
    "vid",
    cases(
        ["slow-page", "slow-healthz", "slow-frozen"],
        ["slow-page", "slow-healthz", "slow-frozen"],
        BROKEN,
    ),
)
def test_stalled_page_clients_stall_nothing(lab: Lab, vid: str) -> None:
    got = lab.pages[vid]  # type: ignore[attr-defined]
    if vid == "slow-frozen":
        assert got is True, lab.daemon_log[-3000:]  # type: ignore[attr-defined]
        return
    code, headers, body = got
    if vid == "slow-page":
        assert code == 200 or (code == 503 and "Retry-After" in headers), (code, body[:500])
    else:
        assert code in (200, 503) and "status" in body, (code, body[:500])


def _shown_params(lab: Lab) -> dict[str, Any]:
    api = json.loads(lab.pages["api:scal"][2])  # type: ignore[attr-defined]
    doc = api["document"]
    doc = json.loads(doc) if isinstance(doc, str) else doc
    return dict(doc["actions"][0]["params"])


@pytest.mark.parametrize("vid", cases(list(SCALARS), list(SCALARS), BROKEN))
def test_the_page_shows_the_value_the_tool_gets(lab: Lab, vid: str) -> None:
    ran = lab.calls("scal")
    assert len(ran) == 1, lab.codes("scal")
    got = json.loads(ran[0]["stdin"])
    got = got.get("params", got)
    key = vid.replace("-", "_")
    shown = _shown_params(lab)
    assert key in got, got
    assert json.dumps(shown.get(key)) == json.dumps(got[key]), (shown.get(key), got[key])
    code, _h, body = lab.pages["page:scal"]  # type: ignore[attr-defined]
    assert code == 200
    assert (
        html.escape(json.dumps(got[key]), quote=True) in body
        or html.escape(json.dumps(got[key])) in body
    ), (key, got[key])


WH_IDS = list(WEBHOOK)


@pytest.mark.parametrize("vid", cases(WH_IDS, WH_IDS, BROKEN))
def test_the_webhook_accepts_only_the_secret(lab: Lab, vid: str) -> None:
    code, _h, body = lab.pages[vid]  # type: ignore[attr-defined]
    assert WH_SECRET not in body, body[:2000]
    assert "Traceback" not in body, body[:2000]
    if vid in ("wh-ok", "wh-ok-github"):
        assert code == 202, body[:1000]
    elif vid == "wh-ok-bad-json":
        assert code in (202, 400), body[:1000]
    elif vid == "wh-too-big":
        assert code == 413, body[:1000]
    elif vid in ("wh-no-length", "wh-neg-length", "wh-bad-length"):
        assert code in (400, 411, 413), body[:1000]
    else:
        assert code in (401, 403), body[:1000]


def test_webhook_metric_labels_are_the_documented_results(lab: Lab) -> None:
    _c, _h, body = lab.pages["metrics"]  # type: ignore[attr-defined]
    labels = set(re.findall(r'(?m)^plangate_webhook_requests_total\{result="([^"]*)"\}', body))
    assert labels, body[:3000]
    assert labels <= {"accepted", "refused", "ignored", "ping", "bad_request"}, labels


@pytest.mark.parametrize("vid", cases(["oracle-page"], ["oracle-page"], BROKEN))
def test_the_page_is_no_oracle_for_the_secret(lab: Lab, vid: str) -> None:
    """Two agent plans named with a guess: the secret itself and a wrong guess of the same
    shape. Their pages must not tell them apart (beyond the guess and the slug)."""
    pages = lab.pages  # type: ignore[attr-defined]
    s = pages["api:orc-s"][2].replace(SECRET, "GUESS").replace("orc-s", "SLUG")
    c = pages["api:orc-c"][2].replace(SECRET[:-1] + "X", "GUESS").replace("orc-c", "SLUG")
    s = re.sub(r"[0-9a-f]{12,64}", "H", s)
    c = re.sub(r"[0-9a-f]{12,64}", "H", c)
    assert "***" not in s or "***" in c, (s[:600], c[:600])


@pytest.mark.parametrize(
    "vid",
    cases(
        ["owned-page", "owned-api", "owned-mcp-log"],
        ["owned-page", "owned-api", "owned-mcp-log"],
        BROKEN,
    ),
)
def test_blocks_the_agent_committed_are_not_shown_as_the_record(lab: Lab, vid: str) -> None:
    """The agent commits its pending plan with an ``approval:`` block naming Alice, an
    ``execution:`` block with an output, and an EXECUTION_LOG.md: none of it is the
    controller's record, so no surface may show Alice as its approver, the plan as run, or
    the forged output/log."""
    assert lab.pages["owned-ran-before"] == 0  # type: ignore[attr-defined]
    if vid == "owned-mcp-log":
        text = _mcp_text(lab.pages["mcp-log:owned"])  # type: ignore[attr-defined]
    else:
        text = lab.pages["page:owned" if vid == "owned-page" else "api:owned"][2]  # type: ignore[attr-defined]
    assert "FORGED-OUT-R61" not in text, text[:3000]
    assert "FORGED-LOG-R61" not in text, text[:3000]
    assert "2026-11-29T10:00:00Z" not in text, (
        "the agent's approval block shown as Alice's approval"
    )
    if vid == "owned-api":
        row = json.loads(text)["row"]
        assert row.get("approver") in (None, ""), row
        assert row.get("status") != "completed", row


def _mcp_text(reply: dict[str, Any]) -> str:
    return json.dumps(reply, ensure_ascii=False)


def test_an_agent_written_execution_block_does_not_stand_for_a_run(lab: Lab) -> None:
    """After Alice approves ``owned``, its one action runs (the agent's ``execution:`` block
    claiming it succeeded is not the journal)."""
    assert len(lab.calls("owned")) == 1, (lab.pages["owned-status-after"], lab.codes("owned"))  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["owned-log-after-run"], ["owned-log-after-run"], BROKEN))
def test_a_log_the_agent_rewrote_after_the_run_is_not_shown(lab: Lab, vid: str) -> None:
    assert len(lab.calls("scal")) == 1
    for key in ["page:scal", "api:scal"]:
        assert "FORGED-LOG-AFTER-R61" not in lab.pages[key][2], key  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "vid",
    cases(
        ["owned-fail-overview", "owned-fail-api"], ["owned-fail-overview", "owned-fail-api"], BROKEN
    ),
)
def test_an_agent_written_failure_is_not_listed(lab: Lab, vid: str) -> None:
    """A pending plan whose agent-written ``execution:`` block says it failed with a code:
    the overview's recent failures (and the API) must not list a failure that never was."""
    key = "index" if vid == "owned-fail-overview" else "api-index"
    text = lab.pages[key][2]  # type: ignore[attr-defined]
    assert "E_FORGED_R61" not in text and "FORGED-FAILURE-R61" not in text, text[-3000:]


@pytest.mark.parametrize(
    "vid",
    cases(["name-zwsp", "name-bidi", "name-xss"], ["name-zwsp", "name-bidi", "name-xss"], BROKEN),
)
def test_a_hostile_folder_name_is_shown_as_text(lab: Lab, vid: str) -> None:
    """Plan folders ``deploy`` + U+200B (beside ``deploy``), ``deploy`` + U+202E ``gpj`` and
    ``<img src=x onerror=alert(9)>``: the overview shows no raw hidden character and no
    live markup (or leaves the folder out with a coded problem)."""
    _c, _h, body = lab.pages["index"]  # type: ignore[attr-defined]
    if vid == "name-zwsp":
        assert "deploy\u200b" not in body
    elif vid == "name-bidi":
        assert "\u202e" not in body
    else:
        assert _live(body) == [], _live(body)


@pytest.mark.parametrize("vid", cases(["oracle-cli-validate"], ["oracle-cli-validate"], BROKEN))
def test_validate_is_no_oracle_for_the_secret(lab: Lab, vid: str) -> None:
    rows = [json.loads(x) for x in lab.pages["orc-cli"].splitlines() if x.strip()]  # type: ignore[attr-defined]
    if len(rows) == 1 and isinstance(rows[0], list):
        rows = rows[0]
    by = {r["path"]: json.dumps(r["errors"]) for r in rows}
    s_text = by["orc-cli-s.yml"].replace(SECRET, "GUESS")
    c_text = by["orc-cli-c.yml"].replace(SECRET[:-1] + "X", "GUESS")
    assert s_text == c_text.replace("orc-cli-c", "orc-cli-s"), (s_text[:600], c_text[:600])


@pytest.mark.parametrize("vid", cases(list(QUERIES), list(QUERIES), BROKEN))
def test_a_hostile_query_is_answered_as_text(lab: Lab, vid: str) -> None:
    code, headers, body = lab.pages[vid]  # type: ignore[attr-defined]
    assert code in (200, 400, 404, 414, 431), (code, body[:500])
    assert "Traceback" not in body and 'File "/' not in body, body[:2000]
    ctype = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
    if QUERIES[vid].startswith("/api/"):  # JSON data, not markup: served as JSON
        assert ctype.startswith("application/json"), headers
    else:
        assert _live(body) == [], _live(body)
        assert "<script>alert" not in body
    if code != -1 and headers:
        csp = {k.lower(): v for k, v in headers.items()}.get("content-security-policy", "")
        assert "default-src 'none'" in csp or code in (414, 431), (code, headers)


@pytest.mark.parametrize("vid", cases(["ownfrozen-hash"], ["ownfrozen-hash"], BROKEN))
def test_the_page_shows_the_hash_of_what_runs(lab: Lab, vid: str) -> None:
    """The agent commits its plan with a ``frozen:`` block holding another hash: the page's
    hash is the plan's own (``plangate hash``), never the agent's."""
    own = lab.pages["ownfrozen-hash"]  # type: ignore[attr-defined]
    assert own.startswith("sha256:") or "sha256:" in own, own
    api = json.loads(lab.pages["api:ownfrozen"][2])  # type: ignore[attr-defined]
    assert "ab" * 32 not in json.dumps(api["row"]), api["row"]
    assert api["row"]["hash"] in own, (api["row"]["hash"], own)
    assert "ab" * 32 not in lab.pages["page:ownfrozen"][2]  # type: ignore[attr-defined]
