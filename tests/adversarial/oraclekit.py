"""The secret-oracle and record labs of rounds 62-66 (what the agent's surfaces answer),
played once here.

An oracle lab (:func:`secret_lab`; :func:`quiet_lab` with a quiet tool and a check tool)
holds one plan secret; the agent commits plans that quote a guess of it (its own text: a
status, a key, a name, :func:`status_plan`), once with the right guess and once with a wrong
one, and every surface's answer to both is kept to be compared: the CLI, ``plangate mcp``
(:func:`agent_replies`) and the daemon's page and ``/api/`` (:func:`ui_daemon`); what
changes from run to run is masked alike (:func:`steady`). A record lab
(:func:`record_lab`) runs the agent's plans to their end, then changes what they recorded;
:func:`shown_records` keeps what each reader shows of them. A module keeps its plans and
guesses, which surfaces it asks, its ``BROKEN`` entries, its normalisation and its
assertions.

The nested-oracle labs of rounds 66-68 add a ``notify`` receiver in the test process
(:func:`notify_receiver`, a :func:`hook_lab` posting to it), pinned nested plans
(:func:`hash_pin`), the readers every guess is asked through (:func:`guess_readers`) and the
reviewer's page of each plan from one daemon (:func:`page_texts`).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from advkit import ALICE, BenchError, Lab, plan_text
from mcpkit import session
from test_round61_surface_page import _get

AGENT_IDENTITY = "agent:\n  identity: {name: Agent, email: agent@example.com}\n"


def status_plan(tag: str, value: str) -> str:
    """:func:`advkit.plan_text` for ``tag`` with ``plan.status`` set to ``value`` (quoted)."""
    return plan_text(tag).replace("status: pending_approval", f'status: "{value}"')


def secret_lab(root: Path, secrets: str, date: str) -> Lab:
    """A lab whose agent has its own identity and whose secrets file ``root/sec.yml`` holds
    ``secrets`` (YAML lines); its commits and passes dated ``date`` (``@<epoch> +0000``)."""
    (root / "sec.yml").write_text(secrets)
    lab = Lab(root, extra=AGENT_IDENTITY + f"secrets: {{file: {root / 'sec.yml'}}}\n")
    lab.git_date = date
    return lab


def quiet_lab(
    root: Path, secret: str, date: str, script: str, extra: str = "", tools: str = ""
) -> Lab:
    """A lab whose agent has its own identity and whose plan secret ``TOK`` is ``secret``
    (``root/sec.yml``), with the config lines ``extra``; its catalog has ``tools`` (YAML
    lines), then ``q`` (``script``, as ``root/q.py``, called with its ``tag``) and ``chk``
    (the same script, idempotent, low risk), both recording to ``ran.log``; its commits
    and passes dated ``date``."""
    (root / "sec.yml").write_text(f"TOK: {secret}\n")
    py, qs = json.dumps(sys.executable), json.dumps(str(root / "q.py"))
    ran = json.dumps(str(root / "ran.log"))
    lab = Lab(
        root,
        extra=AGENT_IDENTITY + f"secrets: {{file: {root / 'sec.yml'}}}\n" + extra,
        tools=(
            tools + f"q: {{kind: exec, argv: [{py}, {qs}, '{{tag}}'], env: {{REC_LOG: {ran}}}}}\n"
            f"chk: {{kind: exec, argv: [{py}, {qs}, chk], env: {{REC_LOG: {ran}}},"
            " idempotent: true, risk: low}\n"
        ),
    )
    (root / "q.py").write_text(script)
    lab.git_date = date
    return lab


def record_lab(root: Path, date: str, plans: dict[str, str]) -> Lab:
    """A lab whose agent has its own identity, dated ``date``: the agent commits ``plans``
    (by slug), a pass; Alice approves them all in one commit, a pass."""
    lab = Lab(root, extra=AGENT_IDENTITY)
    lab.git_date = date
    for slug, text in plans.items():
        lab.write(slug, text)
    lab.commit("plans")
    lab.run()
    for slug in plans:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


def structured(reply: dict[str, Any]) -> Any:
    """An MCP reply's ``structuredContent`` (the whole reply where it has none)."""
    return (reply.get("result") or {}).get("structuredContent") or reply


def shown_records(lab: Lab, slugs: Iterable[str]) -> dict[str, Any]:
    """What each reader shows of ``plans/<slug>`` for each of ``slugs``, by
    ``<slug>:<reader>``: ``status`` (its ``status --json`` row), ``show`` (``show
    --config``), ``mcp-log`` and ``mcp-status`` (one MCP session: :func:`structured`)."""
    cfg = str(lab.config)
    got: dict[str, Any] = {}
    rows = {r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)}
    calls: list[tuple[str, dict[str, Any]]] = []
    slugs = list(slugs)
    for slug in slugs:
        plan = f"plans/{slug}"
        got[f"{slug}:status"] = rows.get(plan)
        got[f"{slug}:show"] = lab.cli("show", "--config", cfg, plan, cwd=lab.repo).stdout
        calls += [("log", {"path": plan}), ("status", {"path": plan})]
    replies = agent_replies(lab, calls)
    for i, slug in enumerate(slugs):
        for j, what in enumerate(("mcp-log", "mcp-status")):
            got[f"{slug}:{what}"] = structured(replies[2 * i + j])
    return got


def steady(text: str, ms: str = r"\d+(\.\d+)? ?ms") -> str:
    """``text`` with what changes from run to run masked: hashes (``H``), durations (``ms``,
    a pattern: ``N ms``) and the JSON ``duration_ms``/``id``/``waited`` values (``N``)."""
    text = re.sub(r"[0-9a-f]{12,64}", "H", text)
    text = re.sub(ms, "N ms", text)
    text = re.sub(r'"(duration_ms|id|waited)": [0-9.]+', r'"\1": N', text)
    return re.sub(r"duration_ms: \d+", "duration_ms: N", text)


def proposed(lab: Lab, plans: dict[str, str], approve: Iterable[str] = ()) -> None:
    """The agent commits ``plans`` (by slug), a pass; Alice approves ``approve`` in one
    commit, a pass (none when ``approve`` is empty)."""
    for slug, text in plans.items():
        lab.write(slug, text)
    lab.commit("agent plans")
    lab.run()
    slugs = list(approve)
    if slugs:
        for slug in slugs:
            lab.set_status(slug, "approved")
        lab.commit("approve", ALICE)
        lab.run()


def agent_replies(lab: Lab, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """One ``plangate mcp`` session making ``calls``: each reply (``{"missing": True}``
    where none came); the server's stderr kept as ``lab.mcp_stderr``."""
    replies, stderr = session(lab, calls)
    lab.mcp_stderr = stderr[-20000:]  # type: ignore[attr-defined]
    return [reply or {"missing": True} for reply in replies]


def named_replies(
    lab: Lab, names: list[str], calls: list[tuple[str, dict[str, Any]]]
) -> dict[str, str]:
    """:func:`agent_replies` as JSON text, by the name given to each call."""
    replies = agent_replies(lab, calls)
    return {
        name: json.dumps(reply, ensure_ascii=False)
        for name, reply in zip(names, replies, strict=True)
    }


_LISTENS = re.compile(r'"endpoint": "(\w+)\.listen", "address": "127\.0\.0\.1:(\d+)"')


def _ports(proc: subprocess.Popen[str], names: Iterable[str]) -> dict[str, int]:
    """The ports the daemon says its ``names`` endpoints (``ui``, ``metrics``) listen on (its
    log lines), within 40 s."""
    wanted, ports = set(names), {}
    lines: list[str] = []
    deadline = time.time() + 40
    while time.time() < deadline:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            break
        lines.append(line)
        m = _LISTENS.search(line)
        if m and m.group(1) in wanted:
            ports[m.group(1)] = int(m.group(2))
        if set(ports) == wanted:
            return ports
    raise BenchError("the daemon never said where it listens: " + "".join(lines)[-3000:])


def _port(proc: subprocess.Popen[str]) -> int:
    """The port the daemon says its page listens on (its log line), within 40 s."""
    return _ports(proc, ["ui"])["ui"]


@contextlib.contextmanager
def ui_daemon(lab: Lab, config: Path, ready: str) -> Iterator[int]:
    """``plangate run --config config`` (a config with ``ui: {listen: 0}``) as a daemon:
    yields its port once ``/api/`` names ``ready`` (or after 30 s of asking), and stops it
    (SIGTERM) after."""
    with listening(lab, config, ready) as ports:
        yield ports["ui"]


@contextlib.contextmanager
def listening(
    lab: Lab, config: Path, ready: str, names: Iterable[str] = ("ui",)
) -> Iterator[dict[str, int]]:
    """:func:`ui_daemon` that yields the port of each endpoint of ``names`` (``ui``, the
    page, always among them; ``metrics``)."""
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        cwd=lab.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        ports = _ports(proc, names)
        for _ in range(120):
            code, _h, body = _get(ports["ui"], "/api/")
            if code == 200 and ready in body:
                break
            time.sleep(0.25)
        yield ports
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def notify_receiver() -> tuple[http.server.ThreadingHTTPServer, list[str]]:
    """An HTTP server on a free local port (served by a daemon thread) keeping the body of
    every POST it gets, in order, in the list it returns beside it."""
    posts: list[str] = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            posts.append(self.rfile.read(size).decode("utf-8"))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, posts


def hook_lab(root: Path, secrets: str, date: str, port: int, script: str) -> Lab:
    """A lab whose agent has its own identity, whose secrets file ``root/sec.yml`` holds
    ``secrets`` (YAML lines), which posts to ``notify_receiver``'s ``port`` and serves the
    reviewer's page (``ui: {listen: 0}``); its one tool ``q`` runs ``script`` (``root/q.py``,
    called with its ``tag``, recording to ``ran.log``); its commits and passes dated ``date``."""
    (root / "sec.yml").write_text(secrets)
    py, qs = json.dumps(sys.executable), json.dumps(str(root / "q.py"))
    ran = json.dumps(str(root / "ran.log"))
    lab = Lab(
        root,
        extra=(
            AGENT_IDENTITY + f"secrets: {{file: {root / 'sec.yml'}}}\n"
            f'notify: ["http://127.0.0.1:{port}/hook"]\n'
            "ui: {listen: 0}\n"
        ),
        tools=f"q: {{kind: exec, argv: [{py}, {qs}, '{{tag}}'], env: {{REC_LOG: {ran}}}}}\n",
    )
    (root / "q.py").write_text(script)
    lab.git_date = date
    return lab


def hash_pin(lab: Lab, folder: str) -> str:
    """``plangate hash plans/<folder>``: the ``sha256:...`` a parent pins its child with."""
    out = lab.cli("hash", f"plans/{folder}", cwd=lab.repo).stdout
    found = re.search(r"sha256:[0-9a-f]{64}", out)
    assert found, out
    return found.group(0)


def nest_action(path: str, pin: str, inputs: str = "") -> str:
    """Action 1 running the plan at ``path`` pinned by ``pin``, passing ``inputs`` (a YAML
    flow mapping; none when empty)."""
    return f'  - id: 1\n    plan: {{path: {path}, hash: "{pin}"}}\n    why: "nested"\n' + (
        f"    inputs: {inputs}\n" if inputs else ""
    )


def status_rows(lab: Lab) -> dict[str, Any]:
    """``status --json --config``'s rows, by plan path."""
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {r["plan"]: r for r in json.loads(out)}


def guess_readers(
    lab: Lab,
    plans: dict[str, str],
    rows: dict[str, Any],
    posts: list[str],
    also: dict[str, tuple[str, ...]] | None = None,
) -> dict[str, str]:
    """What four readers answer of each of ``plans`` (a variant's name to its plan path), by
    ``<name>-<reader>``: ``log`` (the committed EXECUTION_LOG.md), ``status`` (its row of
    ``rows``), ``notify`` (the ``posts`` naming its path, or one of ``also[name]``, sorted)
    and ``mcp-log`` (one ``plangate mcp`` session for them all)."""
    got: dict[str, str] = {}
    calls: list[tuple[str, dict[str, Any]]] = []
    for name, plan in plans.items():
        got[f"{name}-log"] = lab.git("show", f"HEAD:{plan}/EXECUTION_LOG.md", check=False)
        got[f"{name}-status"] = json.dumps(rows.get(plan), ensure_ascii=False)
        named = (plan, *(also or {}).get(name, ()))
        got[f"{name}-notify"] = "\n".join(
            sorted(p for p in posts if json.loads(p)["plan"] in named)
        )
        calls.append(("log", {"path": plan}))
    for name, reply in zip(plans, agent_replies(lab, calls), strict=True):
        got[f"{name}-mcp-log"] = json.dumps(reply, ensure_ascii=False)
    return got


def page_text(port: int, path: str) -> str:
    """The daemon's answer to ``GET path`` (an error's body after ``HTTP <code>: ``)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=15) as resp:
            return resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return f"HTTP {err.code}: " + err.read().decode("utf-8", "replace")


def page_texts(lab: Lab, plans: Iterable[str], ready: str) -> dict[str, tuple[str, str]]:
    """From one daemon (:func:`ui_daemon` on the lab's config, once ``/api/`` names
    ``ready``): the reviewer's page and its JSON twin of each of ``plans``, by plan path."""
    got: dict[str, tuple[str, str]] = {}
    with ui_daemon(lab, lab.config, ready) as port:
        for plan in plans:
            got[plan] = (page_text(port, f"/plan/{plan}"), page_text(port, f"/api/plan/{plan}"))
    return got


def keyed_pages(lab: Lab, plans: dict[str, str], ready: str) -> dict[str, str]:
    """:func:`page_texts` of ``plans`` (a variant's key to its plan path), by key:
    ``<key>:page`` and ``<key>:api``."""
    got = page_texts(lab, plans.values(), ready)
    out: dict[str, str] = {}
    for key, plan in plans.items():
        out[f"{key}:page"], out[f"{key}:api"] = got[plan]
    return out


# -- rounds 69-70: what every reader of the agent's says of a path ----------------------------
def as_text(x: Any) -> str:
    """A reader's answer as text (JSON unless it is text already)."""
    return x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)


def mcp_payload(reply: dict[str, Any] | None) -> tuple[bool, Any]:
    """(is an error, the answer: the structured content or the error text) of an MCP reply."""
    res = (reply or {}).get("result") or {}
    if res.get("isError") or not res:
        return True, as_text(reply)
    if res.get("structuredContent") is not None:
        return False, res["structuredContent"]
    return False, json.loads(res["content"][0]["text"])


def path_readers(
    lab: Lab,
    names: dict[str, str],
    more: Iterable[tuple[str, dict[str, Any]]] = (),
    shown: Iterable[str] | None = None,
) -> tuple[dict[str, Any], list[Any]]:
    """What the readers say of each of ``names`` (a key to a path): ``rows`` (``status
    --json`` by path), ``<key>:mcp-log`` and ``<key>:mcp-status`` (one ``plangate mcp``
    session; the replies to its ``more`` calls after them returned beside) and ``<key>:show``
    for each key of ``shown`` (every key when None)."""
    cfg = str(lab.config)
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    calls: list[tuple[str, dict[str, Any]]] = []
    for path in names.values():
        calls += [("log", {"path": path}), ("status", {"path": path})]
    replies = session(lab, [*calls, *more])[0]
    for i, key in enumerate(names):
        got[f"{key}:mcp-log"] = replies[2 * i]
        got[f"{key}:mcp-status"] = replies[2 * i + 1]
    for key in names if shown is None else shown:
        out = lab.cli("show", "--config", cfg, names[key], cwd=lab.repo)
        got[f"{key}:show"] = out.stdout + out.stderr
    return got, replies[len(calls) :]
