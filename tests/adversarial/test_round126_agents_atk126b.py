"""Round 126, the agent's surfaces (atk126b): what an agent reaches around a plan another
party runs, in REMOTE mode over a real ``git daemon`` on 127.0.0.1 (the webhook, the page and
its ``/api/``, ``/metrics``/``/healthz``, pushes to refs beside the watched branch, the branch
deleted and put back), and many ``plangate mcp`` sessions at once in local mode. An
outsider's attack: the CLI, git, HTTP on loopback and the docs only.

Lab W (remote mode; the agent's clone pushes to a bare ``origin.git`` that ``git daemon``
serves; a ``plangate run`` daemon with ``webhook``, ``ui`` and ``metrics`` on 127.0.0.1 and
``poll_interval: 3600``, so only webhooks and its own pushes move it; the secret ``TOK`` in the
controller's environment). The agent pushes ``slowp`` (the exec tool ``gate`` gets ``tag`` and
``tok: $<secrets.TOK>``, records its call, waits for a file the test writes, then prints the
secret back as an output), 12 plans in hostile folder names (``a%2Fb`` beside ``a/b``,
``..%2F..%2Fetc``, ``q?x=1``, ``h#frag``, ``sp ace``, ``<i>tag</i>``, ``x&y=1;z``, ``p+q``,
``...``, ``café-日本``, quotes), 40 plans under ``many/`` and a 400 kB plan. The daemon
freezes them; Alice approves ``slowp`` (a push and one webhook); the daemon starts it. While
the tool waits: the agent pushes its own commit (a plan ``evil`` with ``status: approved``) as
``refs/tags/main``, ``refs/plangate/push/main`` (the controller's push namespace),
``refs/heads/plangate/slowp``, ``refs/notes/commits``, ``refs/heads/main-copy``, and
unrelated history as ``refs/heads/unrelated``; 86 webhook requests in 8 threads (60 valid, 26
odd: bodies that are no JSON, bad UTF-8, nested 20,000 deep, a 200,000-digit number, ``1e999999``,
a NUL in the ref, bad and deep form encoding, empty, duplicate keys, a body longer than its
``Content-Length``, two lengths, a length beside ``chunked``, 1 MiB + 10, another branch, every
credential scheme, a wrong one, none, a GitHub signature of another body, a ping) while 6
threads read the page 48 times and a second clone pushes ``late1``; then ``late2`` with one
webhook; POST/PUT/DELETE/PATCH on ``/api/``, ``/api/plan/plans/slowp`` and the plan page;
``/api/plan/`` paths that climb out (encoded and not, ``%00``, ``.git/config``, the plan file
itself), ``/commit/`` of ref names and git options (``main``, ``HEAD``, ``refs/tags/main``,
``main~1``, ``--output=<file>``, ``-p``); overview queries (``?status=S&page=N``, odd values);
a 60 kB query and plan id; 5 GitHub-signed deliveries whose connection closes after 5 bytes
of the signed body; 36 idle connections held on the webhook and the page (headers or a
body never finished) while one real request goes to each. The gate opens; the run completes;
the overview, each hostile plan's ``/api/plan/`` and page and the overview's links are read.
The agent deletes ``main`` on the remote (``receive.denyDeleteCurrent=ignore``: a forge where
it is not the protected default), one webhook, then pushes it back where it was, one webhook.
The daemon is stopped (SIGTERM); a FRESH controller (new state directory, ``--take-over``)
makes one pass on the remote that still holds the agent's tag ``main``; ``plangate audit`` in
a clone.

Lab M (local mode, ``agent.identity``): 10 ``plangate mcp`` processes at once (raw JSON-RPC
sessions, ``mcpkit.session``), each ``submit``-ting two plans (every other second one with
``pull_request: true``) and asking ``status``, while Alice commits four notes with git in the
same working tree; then a pass.

Ids (149):

- ``hook:*`` (26): each odd webhook request gets the answer docs/operations.md gives it (202
  accepted/ignored, 200 pong, 401, 403, 400, 413), a JSON body, never the secret; the 60
  valid ones 202; a signed delivery cut short is 403, never accepted; ``/metrics`` counts
  them (refused 4 + 5, ping 1, ignored 2, the total at least what was sent); ``/healthz``
  200 after the flood, no traceback; the 48 page reads during it all 200; idle connections
  stall neither listener.
- the run: ``slowp`` ran exactly once (during the flood, after it, after the branch came
  back, after a fresh controller's pass); ``late1`` and ``late2``, pushed during and after the
  flood, are frozen (no pass skipped); each side ref (6) was taken by the forge and approves
  and runs nothing (``evil`` never ran, never reached ``main``); ``main`` holds only the
  expected writers; the audit calls only Alice's run valid.
- the page: every writing method 405 (``E_USAGE`` with a remedy under ``/api/``) and the run
  went on; each climbing path 404 ``E_NOT_FOUND`` reading nothing (no config, no
  ``/etc/passwd``, no ``.git/config``); an encoded slash names the same plan; ``/commit/``
  takes no ref name or option (404, no file written) and shows a commit of the branch; no
  view (13: the page, ``/api/``, ``/api/plan/``, ``/api/audit``, ``/metrics``, the failing
  pass, the webhook answers) shows the secret or the webhook secret, the run's record on the
  page masks it; each hostile name is its own plan on ``/api/plan/`` (its document's name)
  and page, and the overview links each to its own page; the overview lists all 56 plans;
  the big plan is served whole.
- ``q:*`` (10): an overview query answers the page and status asked for, or a coded refusal.
- the branch deleted: ``/healthz`` 503 ``failing`` ``E_GIT``, ``/api/``'s ``pass_failed``
  ``E_GIT`` with a remedy; put back, healthy again, nothing ran again, no traceback; a fresh
  controller takes ``refs/heads/main``, not the agent's tag (no ``evil`` row, ``slowp``
  completed, nothing ran).
- ``sess:*`` (20): every concurrent ``submit`` is either whole (its file on ``main`` or on its
  pull-request branch, ``pending_approval`` after the pass) or coded with a remedy and
  nothing written; no stray branch, no ``index.lock``, a clean tree; Alice's four commits all
  landed; nothing ran without a person.

Seen (round 126: 149 ids, 142 passed, 7 xfailed (strict); 15-55 s wall at -n 1). 1 class:

- **api-overview-query-not-checked** (7 ids, ``q:status-typo``, ``q:status-case``,
  ``q:status-unknown``, ``q:status-nul``, ``q:page-negative``, ``q:page-abc``,
  ``q:page-huge``), fails open (a malformed request is accepted and answered as a valid one;
  nothing runs): ``GET /api/?status=pending-approval`` (a typo), ``?status=PENDING_APPROVAL``,
  ``?status=..%2F..%2Fx`` or ``?status=%00`` answers 200 with one section of that "status",
  ``total: 0``, no plans, so an agent or script polling it reads "nothing waits" while 55
  plans wait; ``?page=-1`` and ``?page=abc`` answer page 1, ``?page=99999999999999999999999``
  ``page: 1000000`` of ``pages: 1``. docs/operations.md: "``?status=S&page=N`` pages through
  one status", under ``/api/`` every error is "the one error shape (``E_USAGE``, with a
  remedy)"; SPEC §8: "Every error names its code (§10) and a remedy". Expected: 400
  ``E_USAGE`` naming the parameter and the statuses (or page numbers) there are.

Held: everything else above. The webhook answers every odd body as documented and keeps
accepting valid ones; a flood while a plan runs neither runs it twice nor drops a later push;
refs the agent pushes beside ``main`` (a tag named ``main``, the controller's push namespace,
notes, unrelated history) are never read as the branch, by the running daemon, by a fresh one
or by the audit; a deleted branch is a coded failing pass that heals when it comes back.

Seen but not asserted: an authenticated webhook whose connection closes before its
``Content-Length`` body arrived is counted ``accepted`` in ``/metrics`` (12 such; whether it
also caused a fetch was not pinned down), and headers never finished count ``bad_request``;
MCP ``status`` answers rows with a remote-mode config while ``log``, ``wait`` and ``submit``
refuse it ``E_CONFIG_INVALID`` "plangate mcp works on a local-mode repository (``repo:``) for
now" (docs/agents.md: "Remote mode (``remote:``) is not served yet"); a webhook's ``400`` for
a length beside ``Transfer-Encoding: chunked`` says "conflicting framing: one Content-Length
and no Transfer-Encoding" (the rule, not what was seen); MCP ``wait`` with a ``status`` that
is no status (``pending-approval``, ``PENDING_APPROVAL``, ``bogus``) answers at once
``changed: true``, ``previous`` as written: the documented rule ("returns when the
controller's status ... differs from ``status``", "Both statuses as written"), though an
agent's typo cannot be told from a change.

Fixed (2026-12-07, fix127w): **api-overview-query-not-checked**. Cause: the page's route
read the overview's query with ``parse_qs`` and took any ``status`` as a section name and any
``page`` through a clamp (``_int``: not a number is 1, a huge one 1,000,000), so nothing was
ever refused; no route said which parameters it reads. Fix: one reader of every route's
query, ``controller.service.ui.query`` (``params``: each route's parameters, ``TAKES``; a
parameter the route does not read, one given twice, a percent-encoding that is not UTF-8 or
more than 8 fields is ``E_USAGE``; ``OverviewQuery.read``: ``status`` non-empty, ``page``
a whole number from 1, only with ``status``; ``OverviewQuery.check``, called by
``UiData.overview`` against the one snapshot it answers from: a status the overview shows,
``UiData.statuses``, and a page up to the status's last); ``ui.server.route`` answers each
refusal 400, under ``/api/`` the one error shape located at ``<path>?<parameter>`` with a
remedy naming the values there are, elsewhere an HTML error page (the HTML overview refuses
as its JSON twin does; docs/operations.md). Tests: the 7 ids pass;
``tests/service/test_ui_query.py`` (every refusal on ``/api/`` and ``/``, pages answered as
asked, routes that read no parameter). Seen, fixed too: MCP ``wait`` refuses a ``status``
that is no plan status (``agentapi._waitable``: ``E_USAGE`` at ``status``, the remedy
listing the statuses; the plan's status now as answered is still taken;
``tests/service/test_mcp.py::test_wait_refuses_a_status_that_is_no_plan_status``); the
webhook refuses a body cut short (``WebhookHandler._read_up_to``, ``do_POST``: 400 "the body
was cut short (N of its Content-Length M bytes arrived)", counted ``bad_request`` as every
400; a GitHub signature over it stays 403, its reason saying the same), and each framing
refusal says what was received, then the rule (``webhook._framing``;
``tests/service/test_webhook.py``, ``test_a_body_cut_short_is_refused_and_never_fetches``,
``test_a_framing_refusal_says_what_was_received_and_the_rule``).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, until
from test_round2_execution_kit import shared
from writerkit import free_port, served

PY = sys.executable
WORKTREE = Path(__file__).resolve().parents[2]
PLANGATE = str(Path(sys.executable).with_name("plangate"))

SECRET = "tok-Zq81-vvPLN-secret-5521"
HOOK = "hook-secret-Hq77"

GATE_PY = """\
import json, os, sys, time
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:]}) + "\\n")
end = time.time() + 200
while not os.path.exists(os.environ["GATE"]) and time.time() < end:
    time.sleep(0.05)
print(json.dumps({"ok": True, "tag": sys.argv[1], "echo": json.load(sys.stdin)["tok"]}))
"""


def gate_plan(tag: str, name: str | None = None, status: str = "pending_approval") -> str:
    return (
        f'plan:\n  name: "{name or tag}"\n  task: a gated run {tag}\n  status: {status}\n'
        "available_tools:\n  - name: gate\nactions:\n  - id: 1\n    tool: gate\n"
        f"    why: hold the run of {tag} open\n"
        f'    params: {{tag: "{tag}", tok: "$<secrets.TOK>"}}\n'
        "    outputs:\n      - {name: said, path: $.json.tag}\n"
        "      - {name: echoed, path: $.json.echo}\n"
    )


def rec_plan(name: str, task: str = "a plan beside the run") -> str:
    return (
        f'plan:\n  name: "{name}"\n  task: "{task}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n"
        f'    why: "record {name}"\n    params: {{tag: "{name}"}}\n'
    )


#: hostile plan folder names (below ``plans/``), each with its own plan name
HOSTILE = {
    "pct": "a%2Fb",
    "nested": "a/b",
    "dotdot-pct": "..%2F..%2Fetc",
    "query": "q?x=1",
    "frag": "h#frag",
    "space": "sp ace",
    "html": "<i>tag</i>",
    "amp": "x&y=1;z",
    "plus": "p+q",
    "dots": "...",
    "uni": "caf\u00e9-\u65e5\u672c",
    "quote": 'it\'s "q"',
}
MANY = 40

#: overview queries (``/api/?status=S&page=N``, docs/operations.md)
QUERIES = {
    "q:pending": "?status=pending_approval&page=1",
    "q:completed": "?status=executing",
    "q:plain": "",
    "q:status-typo": "?status=pending-approval",
    "q:status-case": "?status=PENDING_APPROVAL",
    "q:status-unknown": "?status=..%2F..%2Fx",
    "q:status-nul": "?status=%00",
    "q:page-negative": "?status=pending_approval&page=-1",
    "q:page-abc": "?status=pending_approval&page=abc",
    "q:page-huge": "?status=pending_approval&page=99999999999999999999999",
}
STATUSES = {
    "draft", "pending_approval", "invalid", "approved", "rejected", "executing",
    "awaiting_approval", "completed", "failed", "aborted",
}  # fmt: skip


# -- HTTP ------------------------------------------------------------------------------------
def http(
    port: int,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 60,
) -> dict[str, Any]:
    """One raw HTTP/1.1 request (the path sent as given, no client normalisation)."""
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
    for k, v in (headers or {}).items():
        head += f"{k}: {v}\r\n"
    if body is not None and "Content-Length" not in (headers or {}):
        head += f"Content-Length: {len(body)}\r\n"
    data = head.encode("latin-1") + b"\r\n" + (body or b"")
    chunks = []
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(data)
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_WR)
            while True:
                c = s.recv(65536)
                if not c:
                    break
                chunks.append(c)
    except OSError as why:
        if not chunks:
            return {"code": None, "body": repr(why), "headers": ""}
    raw = b"".join(chunks)
    top, _, rest = raw.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    try:
        code = int(lines[0].split()[1])
    except (IndexError, ValueError):
        code = None
    return {"code": code, "headers": "\n".join(lines[1:]), "body": rest.decode("utf-8", "replace")}


def jget(port: int, path: str) -> Any:
    r = http(port, "GET", path)
    try:
        return json.loads(r["body"])
    except ValueError:
        return {"http": r["code"], "raw": r["body"][:2000]}


def _sig(body: bytes, key: str = HOOK) -> str:
    return "sha256=" + hmac.new(key.encode(), body, hashlib.sha256).hexdigest()


def hook_requests() -> list[tuple[str, bytes, dict[str, str]]]:
    good = json.dumps({"ref": "refs/heads/main"}).encode()
    deep = b'{"ref": ' + b"[" * 20000 + b"]" * 20000 + b"}"
    many: list[tuple[str, bytes, dict[str, str]]] = []
    for i in range(60):
        many.append((f"ok-{i}", good, {"X-Plangate-Secret": HOOK}))
    odd = {
        "notjson": (b"this is not json at all", {"X-Plangate-Secret": HOOK}),
        "badutf8": (b'{"ref": "\xff\xfe\xc0"}', {"X-Plangate-Secret": HOOK}),
        "deep": (deep, {"X-Plangate-Secret": HOOK}),
        "refint": (b'{"ref": 12}', {"X-Plangate-Secret": HOOK}),
        "refnull": (b'{"ref": null}', {"X-Plangate-Secret": HOOK}),
        "list": (b"[1,2,3]", {"X-Plangate-Secret": HOOK}),
        "bignum": (b'{"ref": 1e999999}', {"X-Plangate-Secret": HOOK}),
        "longdigits": (b'{"n": ' + b"9" * 200000 + b"}", {"X-Plangate-Secret": HOOK}),
        "nul": (b'{"ref": "refs/heads/main\\u0000"}', {"X-Plangate-Secret": HOOK}),
        "form-bad": (b"payload=%ZZ%", {"X-Plangate-Secret": HOOK}),
        "form-deep": (
            b"payload=" + urllib.parse.quote(deep.decode()).encode(),
            {"X-Plangate-Secret": HOOK, "Content-Type": "application/x-www-form-urlencoded"},
        ),
        "empty": (b"", {"X-Plangate-Secret": HOOK}),
        "dupkeys": (
            b'{"ref": "refs/heads/x", "ref": "refs/heads/main"}',
            {"X-Plangate-Secret": HOOK},
        ),
        "gh-sig": (good, {"X-Hub-Signature-256": _sig(good), "X-GitHub-Event": "push"}),
        "gh-sig-other": (good, {"X-Hub-Signature-256": _sig(b"{}"), "X-GitHub-Event": "push"}),
        "gh-ping": (
            b'{"zen": "x"}',
            {"X-Hub-Signature-256": _sig(b'{"zen": "x"}'), "X-GitHub-Event": "ping"},
        ),
        "bearer": (good, {"Authorization": f"Bearer {HOOK}"}),
        "nocred": (good, {}),
        "wrong": (good, {"X-Plangate-Secret": "nope"}),
        "secret-in-body": (json.dumps({"ref": HOOK}).encode(), {"X-Plangate-Secret": "x"}),
        "cl-short": (
            good + b"GARBAGE-NEXT-REQUEST",
            {"X-Plangate-Secret": HOOK, "Content-Length": str(len(good))},
        ),
        "cl-two": (
            good,
            {"X-Plangate-Secret": HOOK, "Content-Length": f"{len(good)}, {len(good) + 1}"},
        ),
        "chunked": (
            b"5\r\nhello\r\n0\r\n\r\n",
            {"X-Plangate-Secret": HOOK, "Transfer-Encoding": "chunked", "Content-Length": "10"},
        ),
        "too-big": (b"{" + b" " * (1024 * 1024 + 10) + b"}", {"X-Plangate-Secret": HOOK}),
        "other-branch": (b'{"ref": "refs/heads/other"}', {"X-Plangate-Secret": HOOK}),
        "gitlab": (good, {"X-Gitlab-Token": HOOK}),
    }
    for k, (b, h) in odd.items():
        many.append((k, b, h))
    return many


ODD_KINDS = [k for k, _, _ in hook_requests() if not k.startswith("ok-")]


def flood(port: int) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    reqs = hook_requests()
    lock = threading.Lock()

    def worker(items: list[tuple[str, bytes, dict[str, str]]]) -> None:
        for kind, body, headers in items:
            r = http(port, "POST", "/webhook", body, headers, timeout=120)
            with lock:
                out[kind] = r

    threads = [threading.Thread(target=worker, args=(reqs[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return out


# -- git on the agent's clone ----------------------------------------------------------------
def _pull(lab: Lab) -> None:
    lab.git("fetch", "-q", "origin", "refs/heads/main", check=False)
    lab.git("reset", "-q", "--hard", "FETCH_HEAD", check=False)


def _push(lab: Lab, *spec: str) -> str:
    r = subprocess.run(
        ["git", "push", "origin", *spec],
        cwd=lab.repo,
        env=lab.env(AGENT),
        capture_output=True,
        text=True,
        check=False,
    )
    return f"{r.returncode} {r.stderr[-400:]}"


def _bare(lab: Lab) -> Path:
    return lab.root / "served" / "origin.git"


def _bgit(lab: Lab, *args: str) -> str:
    r = subprocess.run(
        ["git", "-C", str(_bare(lab)), *args],
        env=lab.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    return r.stdout.strip()


def _remote_plan(lab: Lab, slug: str) -> str:
    return _bgit(lab, "show", f"refs/heads/main:plans/{slug}/PLAN.yml")


def _ran(lab: Lab) -> list[str]:
    if not lab.log.exists():
        return []
    return [json.loads(x)["argv"][0] for x in lab.log.read_text().splitlines() if x.strip()]


def _pid_id(slug: str) -> str:
    return urllib.parse.quote(f"plans/{slug}", safe="/")


def page_flood(port: int, got: dict[str, Any]) -> None:
    """Readers of the page at the same time as the webhook flood: 6 threads x 8 reads."""
    paths = ["/api/", f"/api/plan/{_pid_id('slowp')}", "/", "/api/audit"]
    out: list[tuple[str, Any]] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        for j in range(8):
            p = paths[(i + j) % len(paths)]
            r = http(port, "HEAD" if j % 3 == 2 else "GET", p, timeout=120)
            with lock:
                out.append((p, r["code"]))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    got["page-flood"] = out


def push_late(lab: Lab, slug: str, got: dict[str, Any]) -> None:
    """A second clone of the agent's pushes a new plan to main (no webhook of its own)."""
    clone = lab.root / f"clone-{slug}"
    env = lab.env(AGENT)
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--no-tags",
            "--single-branch",
            "-b",
            "main",
            got["url"],
            str(clone),
        ],
        env=env,
        capture_output=True,
        check=False,
    )
    (clone / "plans" / slug).mkdir(parents=True, exist_ok=True)
    (clone / "plans" / slug / "PLAN.yml").write_text(rec_plan(slug))
    for _ in range(20):
        subprocess.run(["git", "add", "-A"], cwd=clone, env=env, check=False)
        subprocess.run(
            ["git", "commit", "-qm", f"agent: {slug}"],
            cwd=clone,
            env=env,
            capture_output=True,
            check=False,
        )
        r = subprocess.run(
            ["git", "push", "-q", "origin", "HEAD:refs/heads/main"],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if r.returncode == 0:
            got[f"pushed-{slug}"] = True
            return
        subprocess.run(
            ["git", "pull", "-q", "--no-tags", "--rebase", "origin", "refs/heads/main"],
            cwd=clone,
            env=env,
            capture_output=True,
            check=False,
        )
    got[f"pushed-{slug}"] = False


# -- the lab ----------------------------------------------------------------------------------
def build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    (root / "gate.py").write_text(GATE_PY)
    release = root / "release"
    ports = {k: free_port() for k in ("ui", "hook", "metrics")}
    lab = Lab(root / "w")
    lab.extra_env = {"PLANGATE_SECRET_TOK": SECRET, "PLANGATE_WEBHOOK_SECRET": HOOK}  # type: ignore[attr-defined]
    # the secret on stdin only: a secret placed into argv is refused (round 128, fix129s)
    argv = json.dumps([PY, str(root / "gate.py"), "{tag}"])
    lab.write_config(
        tools=(
            f"gate: {{kind: exec, timeout: 250, argv: {argv},"
            f" env: {{REC_LOG: {json.dumps(str(lab.log))}, GATE: {json.dumps(str(release))}}}}}\n"
        ),
        extra=(
            f"ui: {{listen: '127.0.0.1:{ports['ui']}'}}\n"
            f"webhook: {{listen: '127.0.0.1:{ports['hook']}'}}\n"
            f"metrics: {{listen: '127.0.0.1:{ports['metrics']}'}}\n"
        ),
    )
    lab.slow_poll = True  # type: ignore[attr-defined]
    got: dict[str, Any] = {"ports": ports}
    lab.got = got  # type: ignore[attr-defined]
    lab.write("slowp", gate_plan("slowp"))
    for key, name in HOSTILE.items():
        lab.write(name, rec_plan(f"N-{key}"))
    for i in range(MANY):
        lab.write(f"many/m{i:02d}", rec_plan(f"M-{i:02d}"))
    lab.write("big", rec_plan("BIG", "b" * 400_000))
    lab.commit("agent: plans", AGENT)
    ui, hook = ports["ui"], ports["hook"]
    with served(lab) as url:
        got["url"] = url
        lab.config.write_text(
            lab.config.read_text().replace("poll_interval: 0.2", "poll_interval: 3600")
        )
        got["push0"] = _push(lab, "HEAD:refs/heads/main")
        env = lab.env()
        env["REC_LOG"] = str(lab.log)
        errf = open(lab.root / "daemon.err", "w")  # noqa: SIM115 (closed below)
        daemon = subprocess.Popen(
            [PLANGATE, "run", "--config", str(lab.config)],
            cwd=lab.root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=errf,
            start_new_session=True,
        )
        try:
            got["frozen"] = until(lambda: "frozen:" in _remote_plan(lab, "slowp"), 180, 0.3)
            # the controller may push again between our fetch and our push (under CI load
            # its pass commits in several steps): a rejected push is fetched and made again
            for _ in range(20):
                _pull(lab)
                lab.approve("slowp", ALICE)
                got["push-approve"] = _push(lab, "HEAD:refs/heads/main")
                if got["push-approve"].startswith("0 "):
                    break
                time.sleep(0.5)
            http(
                hook, "POST", "/webhook", b'{"ref": "refs/heads/main"}', {"X-Plangate-Secret": HOOK}
            )
            got["started"] = until(lambda: "slowp" in _ran(lab), 180, 0.2)
            main_before = _bgit(lab, "rev-parse", "refs/heads/main")
            # 1. the agent pushes to refs beside main: an approved "evil" plan of its own
            lab.git("checkout", "-q", "-b", "side")
            lab.write("evil", rec_plan("evil").replace("pending_approval", "approved"))
            lab.commit("agent: evil approved", AGENT)
            side = lab.head()
            got["side-pushes"] = {
                ref: _push(lab, f"+{side}:{ref}")
                for ref in (
                    "refs/tags/main",
                    "refs/plangate/push/main",
                    "refs/heads/plangate/slowp",
                    "refs/notes/commits",
                    "refs/heads/main-copy",
                )
            }
            # unrelated history on a branch
            lab.git("checkout", "-q", "--orphan", "unrel")
            lab.git("rm", "-rqf", ".")
            lab.write("evil2", rec_plan("evil2").replace("pending_approval", "approved"))
            lab.commit("agent: unrelated", AGENT)
            got["side-pushes"]["refs/heads/unrelated"] = _push(lab, "+HEAD:refs/heads/unrelated")
            lab.git("checkout", "-q", "-f", "main")
            # 2. a webhook flood while the plan runs
            pusher = threading.Thread(target=push_late, args=(lab, "late1", got))
            pusher.start()
            pager = threading.Thread(target=page_flood, args=(ui, got))
            pager.start()
            got["flood"] = flood(hook)
            pager.join(300)
            pusher.join(120)
            push_late(lab, "late2", got)
            got["late2-hook"] = http(
                hook, "POST", "/webhook", b'{"ref": "refs/heads/main"}', {"X-Plangate-Secret": HOOK}
            )
            got["healthz-after-flood"] = until(
                lambda: http(ports["metrics"], "GET", "/healthz")["code"] == 200, 120, 0.5
            )
            got["ran-during"] = _ran(lab)
            got["main-during"] = (main_before, _bgit(lab, "rev-parse", "refs/heads/main"))
            # 3. the page while it runs: methods that would change something, hostile paths
            got["methods"] = {
                f"{m} {p}": http(ui, m, p, b"{}", {"Content-Type": "application/json"})
                for m in ("POST", "PUT", "DELETE", "PATCH")
                for p in ("/api/", f"/api/plan/{_pid_id('slowp')}", "/plan/plans/slowp")
            }
            got["paths"] = {
                p: http(ui, "GET", p)
                for p in (
                    "/api/plan/..%2F..%2Fplangate.yml",
                    "/api/plan/plans/..%2F..%2F..%2Fplangate.yml",
                    "/api/plan/plans/../../plangate.yml",
                    "/api/plan/%2e%2e/%2e%2e/plangate.yml",
                    "/api/plan/plans/slowp%00",
                    "/api/plan/plans%2Fslowp",
                    "/api/plan/.git/config",
                    "/api/plan/plans/slowp/PLAN.yml",
                    "/api/plan/plans/slowp/../../README",
                    "/api/plan//etc/passwd",
                    "/plan/..%2F..%2Fplangate.yml",
                )
            }
            got["page-running"] = {
                p: http(ui, "GET", p)
                for p in (
                    "/api/",
                    f"/api/plan/{_pid_id('slowp')}",
                    "/plan/plans/slowp",
                    "/api/audit",
                )
            }
            got["metrics-running"] = http(ports["metrics"], "GET", "/metrics")
            got["queries"] = {q: http(ui, "GET", "/api/" + q) for q in QUERIES.values()}
            got["long-query"] = http(ui, "GET", "/api/?x=" + "y" * 60000)
            got["long-id"] = http(ui, "GET", "/api/plan/plans/" + "z" * 60000)
            # signed deliveries whose body stops short (the connection closed after 5 bytes)
            got["trunc-before"] = _hook_counts(ports["metrics"])
            signed = json.dumps({"ref": "refs/heads/main", "pad": "x" * 200}).encode()
            for _ in range(5):
                c = socket.create_connection(("127.0.0.1", hook), timeout=30)
                c.sendall(
                    b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\n"
                    + f"X-Hub-Signature-256: {_sig(signed)}\r\n".encode()
                    + f"Content-Length: {len(signed)}\r\n\r\n".encode()
                    + signed[:5]
                )
                c.shutdown(socket.SHUT_WR)
                with contextlib.suppress(OSError):
                    got.setdefault("trunc-answers", []).append(c.recv(4096).decode("latin-1")[:300])
                c.close()
            until(
                lambda: (
                    sum(_hook_counts(ports["metrics"]).values())
                    >= sum(got["trunc-before"].values()) + 5
                ),
                30,
                0.2,
            )
            got["trunc-after"] = _hook_counts(ports["metrics"])
            # idle connections held open on both listeners, then one real request each
            idle: list[socket.socket] = []
            for port, part in (
                (hook, b"POST /webhook HTTP/1.1\r\nHost: x\r\n"),
                (ui, b"GET /api/ HTTP/1.1\r\nHost: x\r\n"),
                (
                    hook,
                    b"POST /webhook HTTP/1.1\r\nContent-Length: 50\r\n"
                    b"X-Plangate-Secret: " + HOOK.encode() + b"\r\n\r\n{",
                ),
            ):
                for _ in range(12):
                    c = socket.create_connection(("127.0.0.1", port), timeout=30)
                    c.sendall(part)
                    idle.append(c)
            try:
                got["idle-hook"] = http(
                    hook,
                    "POST",
                    "/webhook",
                    b'{"ref": "refs/heads/main"}',
                    {"X-Plangate-Secret": HOOK},
                    timeout=90,
                )
                got["idle-ui"] = http(ui, "GET", "/api/", timeout=90)
            finally:
                for c in idle:
                    c.close()
            got["commits"] = {
                p: http(ui, "GET", p)
                for p in (
                    "/commit/main",
                    "/commit/HEAD",
                    "/commit/refs/tags/main",
                    "/commit/main~1",
                    "/commit/--output=" + str(lab.root / "pwned"),
                    "/commit/-p",
                    "/commit/" + side,
                    "/commit/" + main_before,
                )
            }
            got["pwned"] = (lab.root / "pwned").exists()
        finally:
            release.write_text("go\n")
        try:
            got["completed"] = until(
                lambda: "status: completed" in _remote_plan(lab, "slowp"), 240, 0.3
            )
            http(
                hook, "POST", "/webhook", b'{"ref": "refs/heads/main"}', {"X-Plangate-Secret": HOOK}
            )
            got["settled"] = until(
                lambda: "completed" in json.dumps(jget(ui, f"/api/plan/{_pid_id('slowp')}")),
                180,
                0.5,
            )
            got["page-done"] = {
                p: http(ui, "GET", p)
                for p in ("/api/", f"/api/plan/{_pid_id('slowp')}", "/plan/plans/slowp")
            }
            got["hostile"] = {
                key: (
                    jget(ui, f"/api/plan/{_pid_id(name)}"),
                    http(ui, "GET", f"/plan/{_pid_id(name)}")["code"],
                )
                for key, name in HOSTILE.items()
            }
            got["late-frozen"] = {
                t: until(lambda t=t: "frozen:" in _remote_plan(lab, t), 150, 0.5)
                for t in ("late1", "late2")
            }
            got["html-overview"] = http(ui, "GET", "/")["body"]
            got["big"] = jget(ui, f"/api/plan/{_pid_id('big')}")
            got["overview"] = jget(ui, "/api/")
            got["metrics-end"] = http(ports["metrics"], "GET", "/metrics")
            # the agent deletes the watched branch, then puts it back where it was
            lab.git(
                "fetch", "-q", "--no-tags", "origin", "+refs/heads/main:refs/remotes/origin/main"
            )
            tip = _bgit(lab, "rev-parse", "refs/heads/main")
            got["tip"] = tip
            # a forge where the watched branch is not the protected default lets it go
            _bgit(lab, "config", "receive.denyDeleteCurrent", "ignore")
            got["delete"] = _push(lab, ":refs/heads/main")
            got["deleted"] = _bgit(lab, "rev-parse", "--verify", "-q", "refs/heads/main") == ""
            got["delete-hook"] = http(
                hook, "POST", "/webhook", b'{"ref": "refs/heads/main"}', {"X-Plangate-Secret": HOOK}
            )
            seen_fail: dict[str, Any] = {}

            def failing() -> bool:
                seen_fail["healthz"] = http(ports["metrics"], "GET", "/healthz")
                seen_fail["api"] = jget(ui, "/api/")
                return seen_fail["healthz"]["code"] == 503 or bool(
                    isinstance(seen_fail["api"], dict) and seen_fail["api"].get("pass_failed")
                )

            got["fail-seen"] = until(failing, 60, 0.5)
            got["while-deleted"] = seen_fail
            got["mcp-free-status"] = lab.cli(
                "status", "--json", "--config", str(lab.config)
            ).stdout[-3000:]
            got["restore"] = _push(lab, f"{tip}:refs/heads/main")
            http(
                hook, "POST", "/webhook", b'{"ref": "refs/heads/main"}', {"X-Plangate-Secret": HOOK}
            )
            got["healthy-again"] = until(
                lambda: (
                    http(ports["metrics"], "GET", "/healthz")["code"] == 200
                    and not (jget(ui, "/api/") or {}).get("pass_failed")
                ),
                150,
                0.5,
            )
            got["after-restore-api"] = jget(ui, "/api/")
            got["overview-pending"] = [
                jget(ui, f"/api/?status=pending_approval&page={n}") for n in (1, 2)
            ]
        finally:
            os.killpg(daemon.pid, signal.SIGTERM)
            try:
                daemon.wait(90)
            except subprocess.TimeoutExpired:
                os.killpg(daemon.pid, signal.SIGKILL)
                daemon.wait(30)
            errf.close()
        got["metrics-end"] = got.get("metrics-end")
        got["daemon-rc"] = daemon.returncode
        # a fresh controller (a new state directory) on the remote that holds the agent's tag
        fresh = lab.root / "fresh.yml"
        fresh.write_text(
            lab.config.read_text()
            .replace(f"state_dir: {lab.state}", f"state_dir: {lab.root / 'state2'}")
            .replace("ui: {listen", "#ui: {listen")
            .replace("webhook: {listen", "#webhook: {listen")
            .replace("metrics: {listen", "#metrics: {listen")
        )
        once = lab.cli("run", "--once", "--take-over", "--config", str(fresh))
        got["fresh-once"] = (once.returncode, once.stderr[-2000:])
        st = lab.cli("status", "--json", "--config", str(fresh))
        try:
            got["fresh-status"] = json.loads(st.stdout)
        except ValueError:
            got["fresh-status"] = {"raw": st.stdout[-1000:], "err": st.stderr[-1000:]}
        got["daemon-err"] = (lab.root / "daemon.err").read_text()[-4000:]
        got["ran"] = _ran(lab)
        got["remote-refs"] = _bgit(lab, "for-each-ref", "--format=%(refname) %(objectname)")
        got["remote-log"] = _bgit(lab, "log", "--format=%ae %s", "refs/heads/main")
        got["remote-tree"] = _bgit(lab, "ls-tree", "-r", "--name-only", "refs/heads/main")
        clone = lab.root / "audit-clone"
        subprocess.run(
            ["git", "clone", "-q", "-b", "main", url, str(clone)], env=lab.env(), check=True
        )
        out = lab.cli("audit", "--json", cwd=clone)
        try:
            got["audit"] = json.loads(out.stdout)
        except ValueError:
            got["audit"] = {"raw": out.stdout[-1000:], "err": out.stderr[-1000:]}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r126-agents-b", build)


def G(lab: Lab) -> dict[str, Any]:
    return lab.got  # type: ignore[attr-defined,no-any-return]


# -- the webhook flood while the plan runs ---------------------------------------------------
#: what docs/operations.md, "The webhook", says each request gets
EXPECTED_HOOK = {
    **{
        k: (202, {"accepted", "ignored"})
        for k in (
            "notjson",
            "badutf8",
            "deep",
            "refint",
            "refnull",
            "list",
            "bignum",
            "longdigits",
            "form-bad",
            "form-deep",
            "empty",
            "dupkeys",
            "cl-short",
        )
    },  # authenticated: the payload is never trusted beyond the branch name
    "gh-sig": (202, {"accepted"}),
    "bearer": (202, {"accepted"}),
    "gitlab": (202, {"accepted"}),
    "nul": (202, {"ignored"}),
    "other-branch": (202, {"ignored"}),
    "gh-ping": (200, None),
    "nocred": (401, {"refused"}),
    "wrong": (403, {"refused"}),
    "secret-in-body": (403, {"refused"}),
    "gh-sig-other": (403, {"refused"}),
    "too-big": (413, {"refused"}),
    "cl-two": (400, {"refused"}),
    "chunked": (400, {"refused"}),
}


def _hook_counts(port: int) -> dict[str, float]:
    return {
        x.split('"')[1]: float(x.rsplit(" ", 1)[1])
        for x in http(port, "GET", "/metrics")["body"].splitlines()
        if x.startswith("plangate_webhook_requests_total{")
    }


def _body(r: dict[str, Any]) -> Any:
    try:
        return json.loads(r["body"])
    except ValueError:
        return None


@pytest.mark.parametrize("kind", [f"hook:{k}" for k in ODD_KINDS])
def test_each_webhook_request_gets_its_documented_answer(lab: Lab, kind: str) -> None:
    k = kind.split(":", 1)[1]
    r = G(lab)["flood"][k]
    code, statuses = EXPECTED_HOOK[k]
    assert r["code"] == code, (k, r)
    body = _body(r)
    assert isinstance(body, dict), r
    if statuses is not None:
        assert body.get("status") in statuses, (k, body)
    assert HOOK not in r["body"] and "Traceback" not in r["body"]


def test_every_valid_webhook_of_the_flood_was_accepted(lab: Lab) -> None:
    got = G(lab)["flood"]
    oks = {k: v["code"] for k, v in got.items() if k.startswith("ok-")}
    assert len(oks) == 60 and set(oks.values()) == {202}, oks


def test_the_metrics_count_every_webhook_request(lab: Lab) -> None:
    g = G(lab)
    counts = {
        x.split('"')[1]: float(x.rsplit(" ", 1)[1])
        for x in g["metrics-end"]["body"].splitlines()
        if x.startswith("plangate_webhook_requests_total{")
    }
    # refused: nocred, wrong, secret-in-body, gh-sig-other and the 5 signed deliveries cut
    # short; ignored: nul, other-branch
    assert counts.get("refused") == 4 + 5 and counts.get("ping") == 1, counts
    assert counts.get("ignored") == 2, counts
    # the approval's webhook, the flood, the one beside idle connections, late2's, the one
    # after the run; the 24 idle connections closed unanswered are counted too
    assert sum(counts.values()) >= 1 + len(g["flood"]) + 1 + 1 + 1, counts


def test_a_signed_delivery_cut_short_is_not_accepted(lab: Lab) -> None:
    g = G(lab)
    before, after = g["trunc-before"], g["trunc-after"]
    assert after.get("accepted", 0) == before.get("accepted", 0), (before, after)
    assert all(" 202 " not in a for a in g.get("trunc-answers", [])), g.get("trunc-answers")


def test_the_controller_is_healthy_after_the_flood(lab: Lab) -> None:
    g = G(lab)
    assert g["healthz-after-flood"], g["daemon-err"]
    assert "Traceback" not in g["daemon-err"], g["daemon-err"]


def test_the_page_answered_every_read_during_the_flood(lab: Lab) -> None:
    seen = G(lab)["page-flood"]
    assert len(seen) == 48 and {c for _, c in seen} == {200}, seen


#: api-overview-query-not-checked (q:status-*, q:page-*): fixed (2026-12-07, fix127w)
QUERY_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(
    "qid",
    [pytest.param(k, id=k, marks=[QUERY_BROKEN[k]] if k in QUERY_BROKEN else []) for k in QUERIES],
)
def test_an_overview_query_is_a_real_page_or_coded(lab: Lab, qid: str) -> None:
    r = G(lab)["queries"][QUERIES[qid]]
    body = _body(r)
    assert r["code"] is not None and r["code"] < 500, (qid, r["code"], r["body"][:400])
    assert isinstance(body, dict), r["body"][:400]
    asked = urllib.parse.parse_qs(QUERIES[qid].lstrip("?"))
    page = asked.get("page", ["1"])[0]
    if r["code"] == 200:  # the page asked for, of a status there is, or a coded refusal
        for sec in body["sections"]:
            assert sec["status"] in STATUSES, (qid, sec["status"])
            assert str(sec["page"]) == page, (qid, sec["page"], sec["pages"])
            assert 1 <= sec["page"] <= max(sec["pages"], 1), (qid, sec["page"], sec["pages"])
    else:
        assert str(body.get("code", "")).startswith("E_") and body.get("remedy"), body


def test_a_long_query_or_plan_id_is_coded(lab: Lab) -> None:
    g = G(lab)
    for r in (g["long-query"], g["long-id"]):
        assert r["code"] in (200, 400, 404, 414), r["body"][:300]
        body = _body(r)
        assert isinstance(body, dict), r["body"][:300]
        if r["code"] != 200:
            assert str(body.get("code", "")).startswith("E_") and body.get("remedy"), body


def test_idle_connections_do_not_stall_the_webhook_or_the_page(lab: Lab) -> None:
    g = G(lab)
    assert g["idle-hook"]["code"] == 202, g["idle-hook"]
    assert g["idle-ui"]["code"] == 200, g["idle-ui"]["body"][:300]


def test_the_approved_plan_ran_exactly_once(lab: Lab) -> None:
    g = G(lab)
    assert g["push-approve"].startswith("0 "), g["push-approve"]
    assert g["started"] and g["ran-during"] == ["slowp"], g["ran-during"]
    assert g["ran"] == ["slowp"], g["ran"]
    assert g["completed"] and g["settled"], g["daemon-err"]


def test_pushes_made_during_the_flood_are_not_skipped(lab: Lab) -> None:
    g = G(lab)
    assert g["pushed-late1"] and g["pushed-late2"], g
    assert g["late-frozen"] == {"late1": True, "late2": True}, g["late-frozen"]


# -- the agent's pushes to refs beside the watched branch -------------------------------------
SIDE_REFS = [
    "refs/tags/main",
    "refs/plangate/push/main",
    "refs/heads/plangate/slowp",
    "refs/notes/commits",
    "refs/heads/main-copy",
    "refs/heads/unrelated",
]


@pytest.mark.parametrize("ref", SIDE_REFS)
def test_a_ref_the_agent_pushed_beside_main_approves_and_runs_nothing(lab: Lab, ref: str) -> None:
    g = G(lab)
    assert g["side-pushes"][ref].startswith("0 "), g["side-pushes"][ref]  # the forge took it
    assert ref in g["remote-refs"]
    assert "evil" not in " ".join(g["ran"]), g["ran"]
    assert "evil" not in g["remote-tree"] and "evil" not in g["remote-log"], g["remote-log"]


def test_the_watched_branch_holds_only_the_expected_writers(lab: Lab) -> None:
    log = G(lab)["remote-log"].splitlines()
    agents = [x for x in log if x.startswith("agent@")]
    assert agents == [
        "agent@example.com agent: late2",
        "agent@example.com agent: late1",
        "agent@example.com agent: plans",
    ], log
    assert [x for x in log if x.startswith("alice@")] == ["alice@example.com approve slowp"]


def test_the_audit_calls_only_alices_run_valid(lab: Lab) -> None:
    a = G(lab)["audit"]
    assert a.get("ok") is True and not a.get("findings"), a
    runs = [(e["plan"], e["approval_valid"]) for e in a.get("executions", [])]
    assert runs == [("plans/slowp", True)], runs


# -- the page: methods, paths, commits, secrets, hostile names, many plans ---------------------
METHOD_IDS = [
    f"{m} {p}"
    for m in ("POST", "PUT", "DELETE", "PATCH")
    for p in ("/api/", "/api/plan/plans/slowp", "/plan/plans/slowp")
]


@pytest.mark.parametrize("req", METHOD_IDS)
def test_a_request_that_would_change_state_is_405(lab: Lab, req: str) -> None:
    r = G(lab)["methods"][req]
    assert r["code"] == 405, r
    if " /api/" in req:
        body = _body(r)
        assert body and body["ok"] is False and body["code"] == "E_USAGE" and body["remedy"], r


def test_the_run_went_on_as_approved_after_the_writes_were_refused(lab: Lab) -> None:
    g = G(lab)
    view = _body(g["page-running"]["/api/plan/plans/slowp"])
    assert view["row"]["status"] == "executing", view["row"]
    assert g["ran"] == ["slowp"]


PATH_IDS = [
    "/api/plan/..%2F..%2Fplangate.yml",
    "/api/plan/plans/..%2F..%2F..%2Fplangate.yml",
    "/api/plan/plans/../../plangate.yml",
    "/api/plan/%2e%2e/%2e%2e/plangate.yml",
    "/api/plan/plans/slowp%00",
    "/api/plan/.git/config",
    "/api/plan/plans/slowp/PLAN.yml",
    "/api/plan/plans/slowp/../../README",
    "/api/plan//etc/passwd",
    "/plan/..%2F..%2Fplangate.yml",
]


@pytest.mark.parametrize("path", PATH_IDS)
def test_a_path_outside_the_plans_is_404_and_reads_nothing(lab: Lab, path: str) -> None:
    r = G(lab)["paths"][path]
    assert r["code"] == 404, r
    for leak in ("approvers", HOOK, "state_dir", "root:x:0", "[core]"):
        assert leak not in r["body"], (leak, r["body"][:400])
    if path.startswith("/api/"):
        body = _body(r)
        assert body and body["code"] == "E_NOT_FOUND" and body["remedy"], r


def test_an_encoded_slash_names_the_same_plan(lab: Lab) -> None:
    body = _body(G(lab)["paths"]["/api/plan/plans%2Fslowp"])
    assert body["row"]["plan"] == "plans/slowp", body


COMMIT_IDS = ["main", "HEAD", "refs/tags/main", "main~1", "--output", "-p"]


@pytest.mark.parametrize("what", COMMIT_IDS)
def test_commit_page_takes_no_ref_name_or_option(lab: Lab, what: str) -> None:
    g = G(lab)
    key = next(
        k for k in g["commits"] if k == f"/commit/{what}" or k.startswith(f"/commit/{what}=")
    )
    r = g["commits"][key]
    assert r["code"] == 404, (key, r["code"], r["body"][:300])
    assert not g["pwned"]


def test_commit_page_shows_a_commit_of_the_branch(lab: Lab) -> None:
    g = G(lab)
    r = g["commits"][f"/commit/{g['main-during'][0]}"]
    assert r["code"] == 200, r


SECRET_VIEWS = [
    "page-running",
    "page-done",
    "metrics-running",
    "overview",
    "hostile",
    "big",
    "audit",
    "while-deleted",
    "after-restore-api",
    "paths",
    "commits",
    "flood",
]


@pytest.mark.parametrize("view", SECRET_VIEWS)
def test_no_view_shows_the_secret(lab: Lab, view: str) -> None:
    g = G(lab)
    assert SECRET not in json.dumps(g[view]), view
    assert HOOK not in json.dumps(g[view]), view


def test_the_secret_is_masked_in_the_runs_record_on_the_page(lab: Lab) -> None:
    g = G(lab)
    body = g["page-done"]["/api/plan/plans/slowp"]["body"]
    view = json.loads(body)
    assert view["row"]["status"] == "completed", view["row"]
    assert "***" in body and SECRET not in body
    assert SECRET not in g["daemon-err"]


@pytest.mark.parametrize("key", list(HOSTILE))
def test_a_hostile_folder_name_is_its_own_plan_on_the_api(lab: Lab, key: str) -> None:
    view, html_code = G(lab)["hostile"][key]
    assert view["row"]["plan"] == f"plans/{HOSTILE[key]}", view.get("row")
    assert view["document"]["plan"]["name"] == f"N-{key}", view["document"]["plan"]
    assert html_code == 200


@pytest.mark.parametrize("key", list(HOSTILE))
def test_the_overview_links_each_hostile_plan_to_its_own_page(lab: Lab, key: str) -> None:
    import html as htmlmod
    import re

    page = G(lab)["html-overview"]
    hrefs = {
        urllib.parse.unquote(htmlmod.unescape(h)[len("/plan/") :])
        for h in re.findall(r'href="(/plan/[^"]*)"', page)
    }
    assert f"plans/{HOSTILE[key]}" in hrefs, sorted(hrefs)[:20]


def test_the_overview_lists_every_plan(lab: Lab) -> None:
    o = G(lab)["overview"]
    assert o["total"] == 1 + len(HOSTILE) + MANY + 1 + 2, o["counts"]
    assert o["counts"] == {"pending_approval": len(HOSTILE) + MANY + 1 + 2, "completed": 1}
    listed = {p["plan"] for sec in o["sections"] for p in sec["plans"]}
    assert {f"plans/many/m{i:02d}" for i in range(MANY)} <= listed


def test_a_big_plan_is_served(lab: Lab) -> None:
    big = G(lab)["big"]
    assert big["row"]["plan"] == "plans/big" and big["row"]["status"] == "pending_approval"
    assert len(big["document"]["plan"]["task"]) == 400_000


# -- the watched branch deleted and put back -------------------------------------------------
def test_deleting_the_branch_is_reported_with_its_code(lab: Lab) -> None:
    g = G(lab)
    assert g["deleted"], g["delete"]
    assert g["fail-seen"], g["while-deleted"]
    h = _body(g["while-deleted"]["healthz"])
    assert g["while-deleted"]["healthz"]["code"] == 503 and h["code"] == "E_GIT", h
    pf = g["while-deleted"]["api"]["pass_failed"]
    assert pf["code"] == "E_GIT" and pf["remedy"], pf


def test_the_branch_put_back_heals_and_runs_nothing_again(lab: Lab) -> None:
    g = G(lab)
    assert g["restore"].startswith("0 "), g["restore"]
    assert g["healthy-again"], g["daemon-err"]
    assert g["ran"] == ["slowp"], g["ran"]
    assert g["daemon-rc"] == 0 and "Traceback" not in g["daemon-err"]


def test_a_fresh_controller_takes_the_branch_not_the_agents_tag(lab: Lab) -> None:
    g = G(lab)
    rc, err = g["fresh-once"]
    assert rc == 0 and "Traceback" not in err, err
    rows = g["fresh-status"]
    rows = rows.get("plans", rows) if isinstance(rows, dict) else rows
    names = {r["plan"]: r.get("status") for r in rows}
    assert "plans/evil" not in names and "plans/evil2" not in names, sorted(names)
    assert names.get("plans/slowp") == "completed", names.get("plans/slowp")
    assert g["ran"] == ["slowp"]


# -- many MCP sessions at once, a person committing beside them --------------------------------
AGENT_CFG = (
    "agent:\n  identity: {name: Agent, email: agent@example.com}\n  branch_prefix: plangate/\n"
)
SESSIONS = 10


def build_many(root: Path) -> Lab:
    from mcpkit import session

    lab = Lab(root / "m", extra=AGENT_CFG)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    answers: dict[str, Any] = {}
    lock = threading.Lock()

    def one(i: int) -> None:
        calls = [
            ("submit", {"slug": f"s{i:02d}a", "plan": rec_plan(f"s{i:02d}a")}),
            (
                "submit",
                {"slug": f"s{i:02d}b", "plan": rec_plan(f"s{i:02d}b"), "pull_request": i % 2 == 0},
            ),
            ("status", {"path": f"plans/s{i:02d}a"}),
        ]
        replies, err = session(lab, calls, timeout=240)
        with lock:
            answers[i] = (replies, err[-1500:])

    def person() -> None:
        for n in range(4):
            lab.put(f"notes/alice-{n}.txt", f"{n}\n")
            lab.git("add", "notes")
            lab.git("commit", "-q", "-m", f"alice note {n}", who=ALICE)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(SESSIONS)]
    threads.append(threading.Thread(target=person))
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    got["answers"] = answers
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "HEAD").split("\n")
    got["porcelain"] = lab.git("status", "--porcelain", "--untracked-files=all")
    got["branches"] = lab.git("branch", "--list", "--format=%(refname:short)").split()
    got["locks"] = sorted(
        p.name
        for p in (lab.repo / ".git").iterdir()
        if p.name in ("index.lock", "plangate-index-lock")
    )
    got["log"] = lab.git("log", "--format=%ae %s", "main")
    got["branch-files"] = {
        b: lab.git("ls-tree", "-r", "--name-only", b).split("\n")
        for b in got["branches"]
        if b != "main"
    }
    lab.run()
    got["rows"] = lab.status()
    got["ran"] = lab.log.read_text() if lab.log.exists() else ""
    return lab


@pytest.fixture(scope="module")
def labm(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r126-agents-b-many", build_many)


def _tool_answer(reply: Any) -> dict[str, Any]:
    if not reply or "result" not in reply:
        return {"ok": None, "raw": reply}
    text = "".join(c.get("text", "") for c in reply["result"].get("content", []))
    body = text.partition(": ")[2] if text.startswith("Error executing tool") else text
    try:
        return json.loads(body)  # type: ignore[no-any-return]
    except ValueError:
        return {"ok": None, "raw": text[:800]}


SUBMIT_IDS = [f"sess:{i:02d}{x}" for i in range(SESSIONS) for x in "ab"]


@pytest.mark.parametrize("sid", SUBMIT_IDS)
def test_each_concurrent_submit_is_whole_or_coded_nothing(labm: Lab, sid: str) -> None:
    g = G(labm)
    i, x = int(sid[5:7]), sid[7]
    replies, err = g["answers"][i]
    a = _tool_answer(replies["ab".index(x)])
    slug = f"s{i:02d}{x}"
    assert "Traceback" not in err, err
    pr = x == "b" and i % 2 == 0
    where = g["branch-files"].get(f"plangate/{slug}", []) if pr else g["tree"]
    if a.get("ok") is True:
        assert f"plans/{slug}/PLAN.yml" in where, (a, where[-5:])
        if not pr:
            assert g["rows"][f"plans/{slug}"]["status"] == "pending_approval"
    else:
        assert str(a.get("code", "")).startswith("E_") and a.get("remedy"), a
        assert f"plans/{slug}/PLAN.yml" not in g["tree"], a


def test_concurrent_sessions_leave_no_half_written_state(labm: Lab) -> None:
    g = G(labm)
    assert g["porcelain"] == "", g["porcelain"]
    assert g["locks"] == [], g["locks"]
    prs = {f"plangate/s{i:02d}b" for i in range(SESSIONS) if i % 2 == 0}
    ok_prs = {
        f"plangate/s{i:02d}b"
        for i in range(SESSIONS)
        if i % 2 == 0 and _tool_answer(g["answers"][i][0][1]).get("ok") is True
    }
    assert ok_prs <= set(g["branches"]) <= {"main"} | prs, g["branches"]
    assert set(g["branches"]) - {"main"} == ok_prs, (g["branches"], ok_prs)


def test_the_persons_commits_all_landed_beside_the_sessions(labm: Lab) -> None:
    log = G(labm)["log"]
    assert all(f"alice note {n}" in log for n in range(4)), log


def test_nothing_submitted_ran_without_a_person(labm: Lab) -> None:
    assert G(labm)["ran"] == ""
