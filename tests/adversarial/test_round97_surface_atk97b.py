"""Round 97, agent surfaces (atk97b): the readers while git is busy or odd under them:
locks the agent holds (``.git/index.lock``, ``HEAD.lock``, ``refs/heads/main.lock``), ``git
gc --aggressive --prune=now`` and ``git repack -a -d -f`` looping during reads, the plans
folder replaced in the agent's tree by a symlink or a file, plan folders committed as
symlinks to other plans' folders (``r`` -> ``p``, ``s`` -> ``q``), raw MCP sessions (1,000
calls, a call before ``initialize``, duplicate and string ids, a line that is no JSON, an
unknown method, a ``wait`` on an absent plan, a ``wait`` cancelled mid-call), two
``submit`` of one slug in one session and three in parallel processes, a daemon busy with
a burst of N plans (``ATK97B_N``, 40 by default: 300 did not fit the module's time) read
through ``/api/``, ``/api/plan/``, ``/``, ``status --json`` and MCP while ``git repack``
loops, then the daemon restarted on its saved state.

Lab (one, local mode): the agent commits ``p``, ``q``; a pass freezes; Alice approves
``p``; a pass runs it; the baseline readers (``status --json``, ``show``, MCP ``status``/
``log``) are read twice; then each plant above, each reader read again.

Seen (round 97, a hand run of this lab's build with N=40, 14:40 UTC; the pytest run of the
module was not finished by the round's deadline, so ``BROKEN`` is empty and the ids below
that broke by hand are expected to FAIL, not xfail, until the lead marks them):
``link:show``: ``plangate show plans/s/PLAN.yml`` (``s`` a committed symlink to ``q``'s
folder) said ``E_UNSAFE_PATH: 's' on the way to the plan is a symbolic link ...`` AND
``E_UNSAFE_PATH at status: the controller holds status pending_approval: waiting for an
approval`` while ``status --json`` says ``plans/s``: ``status: null``, ``held:
E_UNSAFE_PATH`` (q's status shown as s's).
``mcp:odd:parse``: a line ``{not json`` got no reply at all (JSON-RPC 2.0: -32700 with id
null); a call with ``id: null`` got none either.
``mcp:cancel:fast``: a ``wait`` (timeout 60) followed 0.5 s later by
``notifications/cancelled`` for it: no reply for it (right), but the session ran 62.4 s,
sitting the cancelled wait out.
Held by hand: every lock (status/show/MCP equal to the baseline), gc/repack during reads
(equal to the baseline, 228 gc runs rc 0), the plans folder as a symlink (``show``:
``E_UNSAFE_PATH``) or a file (``show``: ``E_USAGE ... Not a directory``), ``status`` and
MCP unchanged; links ``r``/``s``: ``held: E_UNSAFE_PATH`` rows, MCP ``log``
``E_UNSAFE_PATH`` with a remedy, p and q each ran once; 1,000 MCP calls all answered,
identical (15 s); a call before ``initialize``: -32602; duplicate id 7 both answered;
two submits of one slug (one session, or three processes): each ``submitted: true`` with
its own commit, the branch holds the newest; the burst: every read 200, every status shown
one the branch held, each plan ran once, audit ok; the restart: 503 ``E_NOT_READY`` three
times, then 200 with every plan completed.

Pytest (r97surf): the build sized to about 100 s on 2 cores: N=10, two reads under the gc
loop, the cancelled ``wait``'s timeout 10 s; the burst waits until every burst plan is
``completed`` on the branch (the hand run's wait for a ``Plan-Status`` trailer, which no
commit carries, sat 120 s); ``mcp:waitabsent`` takes ``status: null, changed: false`` at its
timeout too (docs/agents.md: ``wait`` returns when the status changes; an absent plan may
yet land, a pull request's on merge) or a coded error.

Fixed (2026-12-02, r97surf): ``link:show``: ``show`` (and every CLI reader naming a plan by
its path: ``controller.commands._shared.plan_id_for``, the policy's ``frozen:`` facts too)
took the plan id from ``Path.resolve()`` of the file, which follows a link inside the
repository: ``plans/s`` -> ``q``'s folder read ``plans/q``'s row. The id is now the path as
named (``os.path.abspath``, no link read); only the way to the repository may pass a link.

Fixed (2026-12-02, r97mcp): an unreadable line is answered ``-32700`` (no JSON) or ``-32600``
(JSON but no message) with id null (or the line's own id beside a string ``method``), and the
session goes on; a request with ``id: null`` is read by the SDK as a notification and is not
answered (docs/agents.md says so); ``wait`` is stoppable: a cancelled one returns within one
poll and the session ends with its input.

Should: the brief's property (a failed read is an error with its code, location and
remedy; what a reader shows is what the controller recorded) and docs/agents.md "Every
request read before stdin closes is answered before the server exits".
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared
from writerkit import free_port

N = int(os.environ.get("ATK97B_N", "10"))
GCREADS = 2
AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}, branch_prefix: plangate/}\n"
INIT = {
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2024-11-05", "capabilities": {},
               "clientInfo": {"name": "atk97b", "version": "1"}},
}  # fmt: skip
INITED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(i: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": name, "arguments": args}}  # fmt: skip


def _raw(lab: Lab, msgs: list[Any], timeout: float = 180, hold: float = 0) -> dict[str, Any]:
    """A raw MCP session: ``msgs`` (dicts, or str lines as written), stdin held open
    ``hold`` seconds after; every reply line, stderr, rc, seconds taken."""
    t0 = time.time()
    p = subprocess.Popen(
        [mcpkit.PLANGATE, "mcp", "--config", str(lab.config)], cwd=lab.root, env=lab.env(),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    w = p.stdin
    assert w is not None
    p.stdin = None

    def feed() -> None:
        try:
            for m in msgs:
                if isinstance(m, float):
                    w.flush()
                    time.sleep(m)
                    continue
                w.write((m if isinstance(m, str) else json.dumps(m)) + "\n")
            w.flush()
            if hold:
                time.sleep(hold)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                w.close()

    th = threading.Thread(target=feed, daemon=True)
    th.start()
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        err += "\nTIMEOUT"
    replies = []
    for line in out.split("\n"):
        if line.strip():
            try:
                replies.append(json.loads(line))
            except ValueError:
                replies.append({"unparsed": line[:500]})
    return {"replies": replies, "err": err[-3000:], "rc": p.returncode, "secs": time.time() - t0}


def _text(reply: dict[str, Any] | None) -> tuple[bool, str]:
    if reply is None:
        return True, "NO REPLY"
    res = reply.get("result") or {}
    if not res:
        return True, json.dumps(reply.get("error"))
    return bool(res.get("isError")), "".join(c.get("text", "") for c in res.get("content", []))


def _get(port: int, path: str, method: str = "GET") -> tuple[int, str]:
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.request(method, path)
        r = c.getresponse()
        body = r.read().decode("utf-8", "replace")
        c.close()
        return r.status, body
    except (OSError, http.client.HTTPException) as e:
        return -1, repr(e)


def _rows(obj: Any) -> dict[str, str]:
    """Every ``{plan, status}`` pair anywhere in a JSON answer."""
    out: dict[str, str] = {}

    def walk(o: Any) -> None:
        if isinstance(o, dict):
            if isinstance(o.get("plan"), str) and "status" in o:
                out[o["plan"]] = str(o["status"])
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(obj)
    return out


def _readers(lab: Lab) -> dict[str, Any]:
    c = str(lab.config)
    st = lab.cli("status", "--json", "--config", c)
    sh = lab.cli("show", "--config", c, str(lab.repo / "plans/p/PLAN.yml"))
    rep = mcpkit.session(lab, [("status", {}), ("log", {"path": "plans/p"}),
                               ("status", {"path": "plans/q"})], timeout=120)  # fmt: skip
    return {
        "status": (st.returncode, st.stdout, st.stderr[-1500:]),
        "show": (sh.returncode, sh.stdout, sh.stderr[-1500:]),
        "mcp": [_text(r) for r in rep[0]],
        "mcperr": rep[1][-1500:],
    }


def _spawn_daemon(lab: Lab, root: Path, tag: str) -> subprocess.Popen[bytes]:
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    errf = (root / f"daemon-{tag}.err").open("wb")
    return subprocess.Popen(
        [mcpkit.PLANGATE, "run", "--config", str(lab.config)], cwd=root, env=env,
        stdout=subprocess.DEVNULL, stderr=errf, start_new_session=True,
    )  # fmt: skip


def _stop(d: subprocess.Popen[bytes]) -> None:
    if d.poll() is None:
        os.killpg(d.pid, signal.SIGTERM)
        try:
            d.wait(timeout=180)
        except subprocess.TimeoutExpired:
            os.killpg(d.pid, signal.SIGKILL)
            d.wait(timeout=30)


def _history_statuses(lab: Lab) -> dict[str, set[str]]:
    """Every status each plan's PLAN.yml held at any commit of main."""
    text = lab.git("log", "-p", "--format=C %h", "main", "--", "plans")
    seen: dict[str, set[str]] = {}
    cur = ""
    for line in text.split("\n"):
        m = re.match(r"\+\+\+ b/(plans/[^/]+)/PLAN\.yml", line)
        if m:
            cur = m.group(1)
        elif line.startswith("+  status: ") and cur:
            seen.setdefault(cur, set()).add(line.split(": ", 1)[1].strip())
    return seen


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    lab = Lab(root / "lab", extra=AGENT_CFG)
    got: dict[str, Any] = {}
    c = str(lab.config)
    t0 = time.time()
    got["t"] = tm = []
    lab.write("p", plan_text("p"))
    lab.write("q", plan_text("q"))
    lab.commit("agent: p q", AGENT)
    lab.run()
    lab.approve("p")
    lab.run()
    got["base"] = _readers(lab)
    got["base2"] = _readers(lab)
    tm.append(('got["base2"] = _re', time.time() - t0))
    # -- locks held by the agent
    for lock in ("index.lock", "HEAD.lock", "refs/heads/main.lock"):
        f = lab.repo / ".git" / lock
        f.write_text("")
        try:
            got[f"lock:{lock}"] = _readers(lab)
            lab.set_status("q", "approved")
            ap = lab.cli("approve", "--config", c, str(lab.repo / "plans/q"))
            got[f"lockapprove:{lock}"] = (ap.returncode, ap.stdout + ap.stderr)
        finally:
            f.unlink()
        lab.git("checkout", "-q", "--", ".")
    got["q_after_locks"] = lab.plan("q")["plan"]["status"]
    tm.append(('got["q_after_locks', time.time() - t0))
    # -- gc / repack during reads
    stop = threading.Event()
    gcs: list[tuple[int, str]] = []

    def gc_loop() -> None:
        while not stop.is_set():
            for args in (["gc", "--aggressive", "--prune=now"], ["repack", "-a", "-d", "-f"]):
                r = subprocess.run(["git", *args], cwd=lab.repo, env=lab.env(), capture_output=True,
                                   text=True, check=False)  # fmt: skip
                gcs.append((r.returncode, r.stderr[-300:]))

    th = threading.Thread(target=gc_loop)
    th.start()
    try:
        got["gc"] = [_readers(lab) for _ in range(GCREADS)]
    finally:
        stop.set()
        th.join()
    got["gcruns"] = gcs
    tm.append(('got["gcruns"] = gc', time.time() - t0))
    # -- the plans folder replaced in the agent's tree (uncommitted)
    real = lab.repo / "plans.real"
    (lab.repo / "plans").rename(real)
    (lab.repo / "plans").symlink_to("plans.real")
    got["plans:link"] = _readers(lab)
    (lab.repo / "plans").unlink()
    (lab.repo / "plans").write_text("not a folder\n")
    got["plans:file"] = _readers(lab)
    (lab.repo / "plans").unlink()
    real.rename(lab.repo / "plans")
    got["plans:back"] = _readers(lab)
    tm.append(('got["plans:back"] ', time.time() - t0))
    # -- a plan folder committed as a symlink to another plan's folder
    (lab.repo / "plans" / "r").symlink_to("p")
    (lab.repo / "plans" / "s").symlink_to("q")
    lab.commit("agent: r s links", AGENT)
    lab.run(check=False)
    got["link:status"] = lab.cli("status", "--json", "--config", c).stdout
    rl = mcpkit.session(lab, [("log", {"path": "plans/r"}), ("status", {"path": "plans/r"}),
                              ("log", {"path": "plans/s"}),
                              ("status", {"path": "plans/s"})])  # fmt: skip
    got["link:mcp"] = [_text(r) for r in rl[0]]
    sh = lab.cli("show", "--config", c, str(lab.repo / "plans/s/PLAN.yml"))
    got["link:show"] = (sh.returncode, sh.stdout + sh.stderr)
    # Alice approves q (the real folder); the link s must not make a second run
    lab.approve("q")
    lab.run(check=False)
    got["ranq"] = len(lab.calls("q"))
    got["ranp"] = len(lab.calls("p"))
    tm.append(('got["ranp"] = len(', time.time() - t0))
    # -- MCP sessions
    big = [INIT, INITED] + [_call(i, "status", {"path": "plans/p"}) for i in range(1, 1001)]
    got["mcp1000"] = _raw(lab, big, timeout=300)
    odd = [
        _call(1, "status", {"path": "plans/p"}),  # before initialize
        INIT, INITED,
        _call(9, "log", {"path": "plans/p"}), _call(8, "log", {"path": "plans/q"}),
        _call("s", "status", {"path": "plans/p"}), _call(7, "status", {"path": "plans/p"}),
        _call(7, "status", {"path": "plans/q"}), "{not json", _call(None, "status", {}),
        {"jsonrpc": "2.0", "id": 5, "method": "no/such"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
        _call(6, "status", {}),
        _call(4, "wait", {"path": "plans/nosuch", "timeout": 3}),
    ]  # fmt: skip
    got["mcpodd"] = _raw(lab, odd)
    cancel = [INIT, INITED, _call(1, "wait", {"path": "plans/p", "timeout": 10}), 0.5,
              {"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 1, "reason": "user"}},
              _call(2, "status", {"path": "plans/p"})]  # fmt: skip
    got["mcpcancel"] = _raw(lab, cancel, timeout=120)
    tm.append(('got["mcpcancel"] =', time.time() - t0))
    before = lab.head()
    dup = [INIT, INITED, _call(1, "submit", {"plan": plan_text("dupa", name="dup"), "slug": "dup"}),
           _call(2, "submit", {"plan": plan_text("dupb", name="dup"), "slug": "dup"})]  # fmt: skip
    got["mcpdup"] = _raw(lab, dup)
    with ThreadPoolExecutor(3) as ex:
        futs = [ex.submit(_raw, lab, [INIT, INITED, _call(1, "submit", {
            "plan": plan_text(f"two{k}", name="two"), "slug": "two"})]) for k in "abc"]  # fmt: skip
        got["mcpdup2"] = [f.result() for f in futs]
    got["dupcommits"] = lab.git("log", "--format=%s", f"{before}..main")
    got["duptree"] = {s: lab.git("show", f"main:plans/{s}/PLAN.yml", check=False)
                      for s in ("dup", "two")}  # fmt: skip
    got["duporder"] = lab.git("log", "--format=%H", f"{before}..main").split()
    got["dupdirty"] = lab.git("status", "--porcelain")
    tm.append(('got["dupdirty"] = ', time.time() - t0))
    # -- the burst, read while the daemon is busy
    ui = free_port()
    lab.config.write_text(lab.config.read_text() + f"ui: {{listen: {ui}}}\n")
    for k in range(N):
        lab.write(f"b{k}", plan_text(f"b{k}"))
    lab.commit("agent: burst", AGENT)
    d = _spawn_daemon(lab, root, "1")
    reads: list[tuple[float, str, int, str]] = []
    try:
        end = time.time() + 60
        while time.time() < end and _get(ui, "/api/")[0] == -1:
            time.sleep(0.05)

        # wait for the freeze of the burst, then Alice approves them all at once
        def frozen() -> bool:
            t = lab.git("show", f"main:plans/b{N - 1}/PLAN.yml", check=False)
            return "frozen:" in t

        end = time.time() + 400
        while time.time() < end and not frozen():
            time.sleep(0.3)
        got["frozen"] = frozen()
        tm.append(('got["frozen"] = fr', time.time() - t0))
        # and its first pass done (the page ready): under load the first pass, still going
        # when Alice approved, ran the whole burst while every read was 503 "not ready",
        # and the reads this burst is for showed nothing (a lab race, 1 in 6 loaded runs)
        end = time.time() + 120
        while time.time() < end and _get(ui, "/api/")[0] != 200:
            time.sleep(0.1)
        for k in range(N):
            lab.set_status(f"b{k}", "approved")
        lab.commit("approve burst", ALICE)
        stop = threading.Event()
        gcs2: list[tuple[int, str]] = []

        def gc2() -> None:
            while not stop.is_set():
                r = subprocess.run(["git", "repack", "-a", "-d"], cwd=lab.repo, env=lab.env(),
                                   capture_output=True, text=True, check=False)  # fmt: skip
                gcs2.append((r.returncode, r.stderr[-300:]))
                time.sleep(0.5)

        th = threading.Thread(target=gc2)
        th.start()
        end = time.time() + 600
        began = time.time()
        k = 0
        while time.time() < end:
            t = time.time()
            for path in ("/api/", f"/api/plan/plans/b{k % N}", "/"):
                code, body = _get(ui, path)
                reads.append((t, path, code, body if path != "/" or code != 200 else ""))
            st = lab.cli("status", "--json", "--config", c)
            reads.append((t, "status", st.returncode, st.stdout if st.returncode in (0, 1)
                          else st.stderr[-2000:]))  # fmt: skip
            if k % 4 == 0:
                rep = mcpkit.session(lab, [("status", {}), ("log", {"path": f"plans/b{k % N}"})])
                for r in rep[0]:
                    e, tx = _text(r)
                    reads.append((t, "mcp", int(e), tx))
            k += 1
            if len(lab.log.read_text().splitlines()) >= N + 2 if lab.log.exists() else False:
                break
        stop.set()
        th.join()
        got["burst_s"] = round(time.time() - began, 1)
        got["gcs2"] = gcs2
        end = time.time() + 120  # every burst plan completed on the branch

        def done() -> bool:
            return all("  status: completed" in lab.git("show", f"main:plans/b{k}/PLAN.yml")
                       for k in range(N))  # fmt: skip

        while time.time() < end and not done():
            time.sleep(0.5)
        time.sleep(1)
    finally:
        _stop(d)
    got["reads"] = reads
    tm.append(('got["reads"] = rea', time.time() - t0))
    got["ranb"] = {f"b{k}": len(lab.calls(f"b{k}")) for k in range(N)}
    got["hist"] = {k: sorted(v) for k, v in _history_statuses(lab).items()}
    fin = lab.cli("status", "--json", "--config", c)
    got["final"] = fin.stdout
    got["final2"] = lab.cli("status", "--json", "--config", c).stdout
    # -- restart on the saved state
    d = _spawn_daemon(lab, root, "2")
    rs: list[tuple[int, str]] = []
    try:
        end = time.time() + 90
        while time.time() < end:
            code, body = _get(ui, "/api/")
            if code != -1:
                rs.append((code, body))
            if code == 200:
                break
            time.sleep(0.02)
        for k in (0, N - 1):
            rs.append(_get(ui, f"/api/plan/plans/b{k}"))
        time.sleep(2)
    finally:
        _stop(d)
    got["restart"] = rs
    tm.append(('got["restart"] = r', time.time() - t0))
    au = lab.cli("audit", "--json", "--config", c)
    got["audit"] = (au.returncode, au.stdout, au.stderr[-2000:])
    got["daemonerr"] = "".join((root / f"daemon-{t}.err").read_text()[-3000:] for t in "12")
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r97-surface-atk97b", _build)


LOCKS = ("index.lock", "HEAD.lock", "refs/heads/main.lock")
READERS = ("status", "show", "mcp")
LOCKIDS = [f"lock:{k}:{r}" for k in LOCKS for r in (*READERS, "approve")]
GCIDS = [f"gc:{i}:{r}" for i in range(GCREADS) for r in READERS] + ["gc:ran"]
DIRIDS = [f"plans:{k}:{r}" for k in ("link", "file", "back") for r in READERS]
LINKIDS = ["link:status", "link:rlog", "link:rstatus", "link:slog", "link:sstatus", "link:show",
           "link:ran"]  # fmt: skip
MCPIDS = ["mcp:1000:answered", "mcp:1000:same", "mcp:odd:preinit", "mcp:odd:dupid",
          "mcp:odd:strid", "mcp:odd:unknown", "mcp:odd:parse", "mcp:odd:exit",
          "mcp:waitabsent", "mcp:cancel:fast", "mcp:cancel:status"]  # fmt: skip
DUPIDS = [f"dup:{w}:{c}" for w in ("session", "procs") for c in ("commits", "tip")]
BURSTIDS = [f"burst:{r}:{c}" for r in ("api", "plan", "page", "status", "mcp")
            for c in ("no5xx", "held")] + ["burst:ran", "burst:audit", "burst:final"]  # fmt: skip
RESTARTIDS = ["restart:503", "restart:first", "restart:plan"]
CTLIDS = ["base:stable", "base:fields", "base:sorted", "ctl:daemon", "ctl:pq"]
IDS = LOCKIDS + GCIDS + DIRIDS + LINKIDS + MCPIDS + DUPIDS + BURSTIDS + RESTARTIDS + CTLIDS
#: Fixed (2026-12-02): show-link-status (r97surf), mcp-parse-noreply, mcp-cancel-runs-on (r97mcp).
BROKEN: dict[str, Any] = {}


def _same_or_error(got: dict[str, Any], now: dict[str, Any], reader: str) -> None:
    """A reader under a plant answers what it answered before, or an error with its E_ code
    (never an empty list, never "no plan", never a traceback)."""
    base = got["base"][reader]
    cur = now[reader]
    if reader == "mcp":
        assert "Traceback" not in now["mcperr"], now["mcperr"]
        for (e0, t0), (e1, t1) in zip(base, cur, strict=True):
            assert (e1, t1) == (e0, t0) or (e1 and '"code": "E_' in t1 and '"remedy"' in t1), t1
        return
    rc, out, err = cur
    assert "Traceback" not in out + err, err
    if (rc, out) == (base[0], base[1]):
        return
    assert rc not in (0, 1) or reader == "show", (rc, out[:800], err)
    assert re.search(r"\bE_[A-Z_]+", out + err), (rc, out[:800], err)
    assert "no plan" not in (out + err).lower(), err


def _codes(got: dict[str, Any], route: str) -> list[tuple[int, str]]:
    return [(r[2], r[3]) for r in got["reads"] if r[1].startswith(route) and
            (route != "/" or r[1] == "/")]  # fmt: skip


def _why(got: dict[str, Any]) -> str:
    """What a burst that did not end says of itself: how long the read loop ran, how many
    reads, and the first daemon's log tail (its stderr)."""
    return f"reads: {len(got['reads'])}, {got.get('burst_s')} s; daemon: {got['daemonerr'][-2500:]}"


def _burst(got: dict[str, Any], route: str, check: str) -> None:
    reads = _codes(got, route)
    assert reads, route
    hist = {k: set(v) for k, v in got["hist"].items()}
    if check == "no5xx":
        for code, body in reads:
            assert "Traceback" not in body, body[-1500:]
            if route in ("status",):
                assert code in (0, 1), (code, body[-800:])
            elif route == "mcp":
                assert code == 0, body[:800]
            else:
                ready = "E_NOT_READY" in body or "Not ready" in body  # the API's, the page's
                assert code == 200 or (code == 503 and ready), (code, body[:800])
        return
    shown = 0
    for code, body in reads:
        if route == "/" or code not in (0, 1, 200):
            continue
        rows = _rows(json.loads(body))
        for plan, st in rows.items():
            if plan in hist and st not in ("None", "unknown"):
                shown += 1
                assert st in hist[plan], (route, plan, st, sorted(hist[plan]))
    if route != "/":
        assert shown, route


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round97_surface(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    part, rest = vid.split(":", 1)
    if part == "lock":
        lock, reader = rest.rsplit(":", 1)
        if reader == "approve":
            rc, text = got[f"lockapprove:{lock}"]
            assert "Traceback" not in text, text
            assert rc == 0 or ("E_" in text and "remedy" in text), (rc, text)
            assert "no PLAN.yml there" not in text, text
        else:
            _same_or_error(got, got[f"lock:{lock}"], reader)
    elif part == "gc":
        if rest == "ran":
            assert any(r[0] == 0 for r in got["gcruns"]), got["gcruns"][:3]
        else:
            i, reader = rest.split(":")
            now = got["gc"][int(i)]
            # gc changes nothing git holds: every reader answers exactly the baseline
            if reader == "mcp":
                assert now["mcp"] == got["base"]["mcp"], now["mcp"]
            else:
                assert now[reader][:2] == got["base"][reader][:2], now[reader]
    elif part == "plans":
        how, reader = rest.split(":")
        now = got[f"plans:{how}"]
        if how == "back":
            assert now[reader][:2] == got["base"][reader][:2] if reader != "mcp" else (
                now["mcp"] == got["base"]["mcp"]), now[reader]  # fmt: skip
        else:
            _same_or_error(got, now, reader)
    elif part == "link":
        rows = {r["plan"]: r for r in json.loads(got["link:status"])}
        if rest == "status":
            for sl in ("plans/r", "plans/s"):
                assert rows[sl]["held"] == "E_UNSAFE_PATH" and rows[sl]["status"] is None, rows[sl]
            assert rows["plans/p"]["status"] == "completed", rows["plans/p"]
        elif rest == "show":  # s is a link to q: show never gives s a status of q's
            rc, text = got["link:show"]
            assert rc != 0 and "E_UNSAFE_PATH" in text, text
            assert "holds status pending_approval" not in text, text
        elif rest == "ran":
            assert (got["ranp"], got["ranq"]) == (1, 1), (got["ranp"], got["ranq"])
        else:
            idx = ["rlog", "rstatus", "slog", "sstatus"].index(rest)
            err, text = got["link:mcp"][idx]
            assert "E_UNSAFE_PATH" in text, text[:800]
            assert '"completed"' not in text and '"pending_approval"' not in text, text[:800]
            if rest.endswith("log"):
                assert err and '"remedy"' in text, text[:800]
    elif part == "mcp":
        _mcp(got, rest)
    elif part == "dup":
        _dup(got, rest)
    elif part == "burst":
        route, _, check = rest.partition(":")
        if route in ("api", "plan"):
            route = {"api": "/api/", "plan": "/api/plan/"}[route]
        elif route == "page":
            route = "/"
        if check in ("no5xx", "held"):
            _burst(got, route, check)
        elif route == "ran":
            assert set(got["ranb"].values()) == {1}, (got["ranb"], _why(got))
        elif route == "audit":
            rc, out, err = got["audit"]
            rep = json.loads(out)
            assert rc == 0 and rep["ok"], (rc, err)
            valid = {e["plan"] for e in rep["executions"] if e.get("approval_valid")}
            assert {f"plans/b{k}" for k in range(N)} <= valid, (sorted(valid)[:5], _why(got))
        else:
            assert got["final"] == got["final2"], "status --json not stable"
            rows = {r["plan"]: r for r in json.loads(got["final"])}
            late = {p: r for p, r in rows.items() if p.startswith("plans/b") and
                    r["status"] != "completed"}  # fmt: skip
            assert not late, (late, _why(got))
    elif part == "restart":
        rs = got["restart"]
        first = next(i for i, (c, _) in enumerate(rs) if c == 200)
        if rest == "503":
            for c, body in rs[:first]:
                assert c == 503 and json.loads(body)["code"] == "E_NOT_READY", (c, body[:500])
        elif rest == "first":
            final = {r["plan"]: r["status"] for r in json.loads(got["final"])}
            rows = _rows(json.loads(rs[first][1]))
            for k in range(N):
                assert rows.get(f"plans/b{k}") == final[f"plans/b{k}"], (k, rows.get(f"plans/b{k}"))
        else:
            for c, body in rs[first + 1 :]:
                assert c == 200 and json.loads(body)["row"]["status"] == "completed", body[:500]
    elif part == "base":
        rows = json.loads(got["base"]["status"][1])
        if rest == "stable":
            assert got["base"]["status"] == got["base2"]["status"], "not stable"
            assert got["base"]["mcp"] == got["base2"]["mcp"], "mcp not stable"
        elif rest == "fields":
            fin = json.loads(got["final"])
            keys = {tuple(sorted(r)) for r in rows + fin}
            assert len(keys) == 1, keys
        else:
            fin = [r["plan"] for r in json.loads(got["final"])]
            assert fin == sorted(fin), fin[:20]
    elif rest == "daemon":
        assert "Traceback" not in got["daemonerr"], got["daemonerr"]
    else:
        rows = {r["plan"]: r["status"] for r in json.loads(got["final"])}
        assert rows["plans/p"] == rows["plans/q"] == "completed", rows


def _by_id(replies: list[dict[str, Any]], rid: Any) -> list[dict[str, Any]]:
    return [r for r in replies if r.get("id") == rid and "unparsed" not in r]


def _mcp(got: dict[str, Any], rest: str) -> None:
    if rest.startswith("1000"):
        big = got["mcp1000"]
        answered = [_text(r) for r in big["replies"] if r.get("id") not in (0, None)]
        if rest.endswith("answered"):
            ids = sorted(r.get("id") for r in big["replies"] if r.get("id"))
            assert ids == list(range(1, 1001)) and big["rc"] == 0, (len(ids), big["err"])
        else:
            assert len({t for _, t in answered}) == 1 and not any(e for e, _ in answered), (
                {t[:200] for _, t in answered})  # fmt: skip
        return
    odd = got["mcpodd"]
    reps = odd["replies"]
    if rest == "odd:preinit":  # a call before initialize: a JSON-RPC error, never a result
        r = _by_id(reps, 1)
        assert len(r) == 1 and "error" in r[0], r
    elif rest == "odd:dupid":
        r = _by_id(reps, 7)
        assert len(r) == 2 and all("result" in x for x in r), r
    elif rest == "odd:strid":
        r = _by_id(reps, "s")
        assert len(r) == 1 and '"plans/p"' in _text(r[0])[1], r
    elif rest == "odd:unknown":
        r = _by_id(reps, 5)
        assert len(r) == 1 and r[0]["error"]["code"] == -32601, r
    elif rest == "odd:parse":  # JSON-RPC 2.0: a line that is no JSON is answered -32700
        r = [x for x in reps if x.get("id") is None and "error" in x]
        assert any(x["error"]["code"] == -32700 for x in r), reps
    elif rest == "odd:exit":
        assert odd["rc"] == 0 and "Traceback" not in odd["err"], odd["err"]
    elif rest == "waitabsent":  # a plan that is not there: answered once, no traceback;
        # docs/agents.md: wait returns when the plan's status differs from the one it had
        # (an absent plan's is null: it may yet land, a pull request's plan on merge), so an
        # answer is a coded error or "status: null, changed: false" after its timeout
        r = _by_id(reps, 4)
        assert len(r) == 1, reps
        err, text = _text(r[0])
        if err:
            assert '"code": "E_' in text and '"remedy"' in text, text[:800]
        else:
            got_ = json.loads(text)
            assert (got_["status"], got_["changed"]) == (None, False), text[:800]
            assert got_["waited"] >= 2.5, text[:800]
    elif rest == "cancel:fast":  # a cancelled wait stops: the session does not sit it out
        assert got["mcpcancel"]["secs"] < 60, got["mcpcancel"]["secs"]  # a hang guard
    else:
        r = _by_id(got["mcpcancel"]["replies"], 2)
        assert len(r) == 1 and '"completed"' in _text(r[0])[1], got["mcpcancel"]


def _dup(got: dict[str, Any], rest: str) -> None:
    how, check = rest.split(":")
    slug = "dup" if how == "session" else "two"
    if how == "session":
        reps = {f"dup{t}": _by_id(got["mcpdup"]["replies"], i)[0] for i, t in ((1, "a"), (2, "b"))}
    else:
        reps = {
            f"two{t}": _by_id(s["replies"], 1)[0]
            for t, s in zip("abc", got["mcpdup2"], strict=True)
        }
    ok = {tag: json.loads(_text(r)[1]) for tag, r in reps.items() if not _text(r)[0]}
    commits = {tag: x["commit"] for tag, x in ok.items() if x.get("submitted")}
    order = got["duporder"]
    if check == "commits":  # each "submitted" names its own commit on the branch
        cs = list(commits.values())
        assert len(set(cs)) == len(cs) and set(cs) <= set(order), (commits, order)
    else:  # the branch holds what the newest of those commits says it submitted
        newest = min(commits, key=lambda t: order.index(commits[t]))
        text = got["duptree"][slug]
        assert f'tag: "{newest}"' in text, (newest, commits, order, text)


if __name__ == "__main__":
    import sys
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r97-", dir="/tmp/atk97b"))
    t0 = time.time()
    g = _build(out).got  # type: ignore[attr-defined]
    g["_secs"] = time.time() - t0
    Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/atk97b/got.json").write_text(
        json.dumps(g, default=str, indent=1)
    )
    print("done", g["_secs"])
