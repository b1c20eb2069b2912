"""Round 110, the surfaces under hostile environments: git's environment variables, odd
locales and argv bytes, huge or odd arguments, config edge cases, the page's odd paths and
methods, MCP (the real SDK) under concurrent CLI approvals, and signals mid-run (atk110g).

Lab (one, local mode, agent identity configured, a ``slow`` exec tool): the agent commits
pending plans, ``done`` (named ``café ✓ done``) is approved by Alice and completed. Then:

Ids:
* ``gitenv:<k>``: ``approve``/``status``/``reject`` under ``GIT_INDEX_FILE``, ``GIT_DIR`` (another
  repository), ``GIT_WORK_TREE``, ``GIT_OBJECT_DIRECTORY``, ``HOME`` unset, a global config with
  ``commit.gpgsign`` and a failing ``gpg.program``, a failing ``pre-commit`` hook, ``GIT_TRACE``,
  ``GIT_EDITOR=false``: a right commit (Alice's, one file, objects all there, tree clean, the
  other repository untouched) or coded, nothing committed.
* ``locale:<k>``: ``LC_ALL=C``, ``PYTHONIOENCODING=latin-1``, argv bytes that are no UTF-8
  (path and ``--config``), and a committed plan folder named ``plans/<0xFF 0xFE>``.
* ``arg:<k>``: 100,000-char paths, 3,000-deep paths, a 5,000-char ``--config``, a 120 kB
  reject note, a note with controls and a forged trailer line, ``/dev/zero``, a FIFO, ``/``,
  ``/etc``, ``-``, ``""``: coded with a remedy, no hang, nothing committed wrongly.
* ``cfg:<k>``: configs empty, a list, null, a YAML bomb, a ``!!python`` tag, duplicate keys,
  a BOM, Latin-1 bytes, 50,000-deep, tabs, bad ports, ``plans_dir: ../..``, ``state_dir``
  inside the repo, ``repo`` a file, 20 MB: the JSON error shape, never code run.
* ``mcp:<k>`` (the REAL ``mcp`` SDK): no deciding tool; slugs 10,000 chars, ``../``, nested,
  empty, ``.``, newline, NUL, RTL; a 2 MB note, a NUL note with a trailer line, a bogus
  format, ``log`` of ``../../etc/passwd`` or a 100,000-char path, ``wait`` with timeout -1 or
  1e308, ``status`` of a NUL path; the server under ``GIT_INDEX_FILE``, ``GIT_DIR``, Alice's
  ``GIT_AUTHOR_*``/``GIT_COMMITTER_*`` (a submit claiming ``approved``), ``HOME`` unset.
* ``conc:<k>``: six parallel MCP submits in one session while Alice approves two plans with
  the CLI: every commit its author's and one file, the tree clean, no lock, no decision.
* ``page:<k>``: the daemon's page (``ui.listen``) under odd paths (``..``, encoded ``..``,
  ``%00``, ``%zz``, ``%ff``, a 60,000-char id, bad ``status``/``page`` queries,
  ``/commit/--output=FILE``, ranges, reflog, ``//``, an absolute URI, ``\\``, ``;``) and methods
  (POST, PUT, DELETE, PATCH, TRACE, CONNECT, FOO, OPTIONS ``*``, HEAD, HTTP/1.0, 0.9, 2.0).
* ``sig:<k>``: SIGTERM, SIGHUP, SIGUSR1 to ``run --once`` mid-action; SIGTERM to ``status``.

Seen (round 110, 120 ids, ~30 s wall): 1 broke (1 class: undecodable-folder-unlisted;
3 ids), 117 held.
Broke:
**undecodable-folder-unlisted** (``locale:odd-folder-status``, ``-status-json``,
``-audit-json``): the agent commits ``plans/$'\\xff\\xfe'/PLAN.yml`` (a folder name that is
no UTF-8; ``git ls-tree`` shows ``"plans/\\377\\376"``). ``plangate status``, ``status --json``
and ``audit --json`` exit 0 and list NO row for it: no ``E_UNSAFE_PATH``, no problem, no
finding, while ``plangate validate``/``show`` of the same folder on disk say
``E_UNSAFE_PATH: the path holds U+DCFF ... rename the folder``. The reviewer's surfaces stay
silent about a committed plan (bad input must be answered coded, naming the location).
Kept as an accepted limit for now: such a folder is no plan by design (``planstate.is_text``:
its id cannot be stored, logged or put in a trailer), documented in docs/operations.md;
nothing of it is read or run. Listing it would need the readers to carry an escaped id.
Held: every git environment variable is scrubbed or harmless (approvals commit into the
configured repo only, by Alice, one file; ``GIT_OBJECT_DIRECTORY`` leaves no missing
object; a failing gpg is E_GIT; hooks are not run); odd locales and non-UTF-8 argv are
escaped or coded; huge paths are "File name too long" with a remedy; ``/dev/zero`` and a FIFO
are "not a regular file" (no hang); every odd config is E_CONFIG_INVALID/E_YAML_PARSE/E_GIT
(the bomb, the python tag and 50,000-deep refused without expanding); MCP answers odd
arguments with the E_ shape, writes nothing outside ``plans/``, never uses the
environment's identity, and concurrent submits with CLI approvals stay one file per commit;
the page answers 404/405/414 (HTTP/2.0 gets http.server's own 505 page without a status
line, as round 109 accepted for garbage), never writes a file, no handler traceback; signals
stop ``run --once`` without a traceback and the next pass works.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text, until
from test_round2_execution_kit import shared
from writerkit import free_port

WORKTREE = str(Path(__file__).resolve().parents[2])
AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}, branch_prefix: plangate/}\n"
PY = sys.executable


def _env(lab: Lab, who: tuple[str, str] | None = None) -> dict[str, str]:
    env = lab.env(who)
    env["PYTHONPATH"] = WORKTREE
    env["REC_LOG"] = str(lab.log)
    return env


def _cli(
    lab: Lab, who: Any, *args: Any, timeout: float = 40, cwd: Any = None,
    extra: dict[str, str] | None = None, drop: tuple[str, ...] = (), stdin: Any = None,
) -> dict[str, Any]:  # fmt: skip
    before = lab.head()
    tree = lab.git("status", "--porcelain")
    env = {**_env(lab, who), **(extra or {})}
    for k in drop:
        env.pop(k, None)
    try:
        r = subprocess.run(
            [PY, "-m", "controller", *args], cwd=cwd or lab.repo, env=env,
            capture_output=True, timeout=timeout, check=False,
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
        )  # fmt: skip
        so = r.stdout.decode("utf-8", "replace")
        se = r.stderr.decode("utf-8", "replace")
        se = se if len(se) < 4000 else se[:1500] + " ... " + se[-1500:]
        out = {"rc": r.returncode, "stdout": so, "stderr": se}
    except subprocess.TimeoutExpired:
        out = {"rc": None, "stdout": "", "stderr": "TIMEOUT"}
    out["out"] = out["stdout"] + out["stderr"]
    out["moved"] = lab.head() != before
    out["before"] = before
    out["dirty"] = lab.git("status", "--porcelain") != tree
    return out


def _changed(lab: Lab, rev: str) -> list[str]:
    return lab.git("diff-tree", "--no-commit-id", "--name-only", "-r", rev).split()


# -- the real MCP client SDK over stdio --------------------------------------------------
def _content(res: Any) -> dict[str, Any]:
    err = getattr(res, "is_error", getattr(res, "isError", None))
    text = "".join(getattr(c, "text", "") for c in res.content)
    body = text.split(": ", 1)[1] if err and text.startswith("Error executing") else text
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    return {"error": bool(err), "data": data, "text": text[:3000]}


async def _session(
    lab: Lab, seq: list[tuple[str, dict[str, Any]]], env: dict[str, str], together: bool,
    during: Any = None,
) -> dict[str, Any]:  # fmt: skip
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    cmd = [PY, "-m", "controller", "mcp", "--config", str(lab.config)]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env, cwd=str(lab.root))
    out: dict[str, Any] = {"calls": [], "tools": [], "fail": None}
    errlog_path = lab.root / f"mcp-{time.time_ns()}.err"
    out["errlog"] = str(errlog_path)

    async def one(s: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            return _content(await s.call_tool(name, args))
        except Exception as e:  # an MCP protocol error
            return {"error": True, "data": None, "text": f"{type(e).__name__}: {e}"}

    with open(errlog_path, "w") as errlog:
        try:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                out["tools"] = [t.name for t in (await s.list_tools()).tools]
                if together:
                    jobs = [one(s, n, a) for n, a in seq]
                    if during is not None:
                        jobs.append(asyncio.to_thread(during))
                    res = await asyncio.gather(*jobs)
                    out["calls"] = list(res[: len(seq)])
                else:
                    for n, a in seq:
                        out["calls"].append(await one(s, n, a))
        except Exception as e:
            out["fail"] = f"{type(e).__name__}: {e}"
    out["err"] = errlog_path.read_text(errors="replace")[-3000:]
    return out


def mcp_calls(
    lab: Lab, seq: list[tuple[str, dict[str, Any]]], extra: dict[str, str] | None = None,
    drop: tuple[str, ...] = (), together: bool = False, during: Any = None,
) -> dict[str, Any]:  # fmt: skip
    env = {**_env(lab), **(extra or {})}
    for k in drop:
        env.pop(k, None)
    coro = _session(lab, seq, env, together, during)
    try:
        return asyncio.run(asyncio.wait_for(coro, 150))
    except Exception as e:
        return {"calls": [], "tools": [], "fail": f"{type(e).__name__}: {e}", "err": ""}


# -- raw HTTP ----------------------------------------------------------------------------
def _request(port: int, data: bytes, timeout: float = 15) -> tuple[int, str]:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError as e:
        return -2, repr(e)
    got: list[bytes] = []
    with contextlib.suppress(OSError):
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    with contextlib.suppress(OSError):
        while True:
            b = s.recv(65536)
            if not b:
                break
            got.append(b)
    s.close()
    out = b"".join(got)
    head = out.split(b"\r\n", 1)[0].split()
    try:
        code = int(head[1]) if head[:1] in ([b"HTTP/1.1"], [b"HTTP/1.0"]) else -1
    except (IndexError, ValueError):
        code = -1
    return code, out[:400_000].decode("latin-1")


def _req(method: str, path: str, ver: str = "HTTP/1.1") -> bytes:
    return f"{method} {path} {ver}\r\nHost: x\r\nContent-Length: 0\r\n\r\n".encode("latin-1")


# -- what is tried -----------------------------------------------------------------------
GITENV = ["gidx-approve", "gdir-approve", "gwt-approve", "gobj-approve", "nohome-approve",
          "nohome-status", "gpgsign-approve", "hookfail-approve", "trace-status-json",
          "trace-approve", "editor-reject", "gdir-status-json"]  # fmt: skip
LOCALE = ["c-show", "latin1-show", "latin1-status", "c-status-json", "argv-ff-show",
          "argv-ff-approve", "argv-ff-validate", "argv-ff-config", "odd-folder-status",
          "odd-folder-status-json", "odd-folder-audit-json"]  # fmt: skip
HUGE = ["long-path-show", "long-path-validate", "long-path-approve", "long-config",
        "big-message-reject", "nul-ish-message", "validate-dev-zero", "hash-dev-zero",
        "validate-fifo", "convert-dev-zero", "show-root", "approve-outside",
        "approve-dash", "show-empty"]  # fmt: skip
CONFIGS: dict[str, bytes] = {
    "empty": b"",
    "list": b"[]\n",
    "null": b"null\n",
    "bomb": b"a: &a [x,x,x,x,x,x,x,x,x]\n"
    + b"".join(
        b"%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n"
        % ((bytes([c]), bytes([c])) + (bytes([c - 1]),) * 9)
        for c in range(ord("b"), ord("k"))
    ),
    "python-tag": b"repo: !!python/object/apply:os.system ['touch PWNED']\n",
    "dup-keys": b"<BASE>repo: /nowhere\n",
    "bom": b"\xef\xbb\xbf<BASE>",
    "latin1": b"<BASE># caf\xe9\n",
    "deep": b"x: " + b"[" * 50000 + b"]" * 50000 + b"\n",
    "tabs": b"repo:\t/x\n\tstate_dir: y\n",
    "ui-port-huge": b"<BASE>ui: {listen: 99999}\n",
    "ui-port-text": b"<BASE>ui: {listen: 'a:b:c'}\n",
    "plans-dir-up": b"<BASE>plans_dir: ../..\n",
    "state-in-repo": b"<STATE_IN_REPO>",
    "repo-file": b"<REPO_FILE>",
    "huge": b"<BASE>" + b"# " + b"x" * 20_000_000 + b"\n",
}
CFGK = list(CONFIGS)
PAGE: dict[str, tuple[bytes, set[int]]] = {
    "root": (_req("GET", "/"), {200}),
    "api": (_req("GET", "/api/"), {200}),
    "head-api": (_req("HEAD", "/api/"), {200}),
    "dotdot": (_req("GET", "/plan/../../../etc/passwd"), {400, 404}),
    "enc-dotdot": (_req("GET", "/api/plan/%2e%2e%2f%2e%2e%2fetc%2fpasswd"), {400, 404}),
    "nul": (_req("GET", "/api/plan/%00"), {400, 404}),
    "bad-pct": (_req("GET", "/api/plan/%zz"), {400, 404}),
    "bad-utf8": (_req("GET", "/api/plan/%ff%fe"), {400, 404}),
    "long-id": (_req("GET", "/api/plan/" + "a" * 60000), {400, 404, 414}),
    "status-bogus": (_req("GET", "/api/?status=bogus"), {200, 400}),
    "page-neg": (_req("GET", "/api/?status=pending_approval&page=-1"), {200, 400}),
    "page-huge": (_req("GET", "/api/?status=pending_approval&page=" + "9" * 40), {200, 400}),
    "page-text": (_req("GET", "/?status=pending_approval&page=abc"), {200, 400}),
    "page-pct": (_req("GET", "/api/?status=%ff&page=%zz"), {200, 400}),
    "commit-bad": (_req("GET", "/commit/zzzz"), {400, 404}),
    "commit-opt": (_req("GET", "/commit/--output=PWNFILE"), {400, 404}),
    "commit-range": (_req("GET", "/commit/HEAD..HEAD"), {200, 400, 404}),
    "commit-reflog": (_req("GET", "/commit/@%7B-1%7D"), {200, 400, 404}),
    "commit-zero": (_req("GET", "/commit/" + "0" * 40), {400, 404}),
    "commit-head": (_req("GET", "/commit/HEAD"), {200, 400, 404}),
    "api-commit": (_req("GET", "/api/commit/HEAD"), {200, 400, 404}),
    "double-slash": (_req("GET", "//api/"), {200, 301, 308, 400, 404}),
    "absolute-uri": (_req("GET", "http://evil.example/api/"), {200, 400, 404}),
    "asterisk": (_req("OPTIONS", "*"), {400, 405, 501}),
    "post": (_req("POST", "/api/"), {405}),
    "put": (_req("PUT", "/plan/x"), {405}),
    "delete": (_req("DELETE", "/api/plan/x"), {405}),
    "patch": (_req("PATCH", "/"), {405}),
    "trace": (_req("TRACE", "/"), {405, 501}),
    "connect": (_req("CONNECT", "evil.example:443"), {400, 405, 501}),
    "foo-method": (_req("FOO", "/"), {405, 501}),
    "http10": (_req("GET", "/api/", "HTTP/1.0"), {200}),
    "http09": (b"GET /api/\r\n\r\n", {-1, 400, 505}),
    "http2-ver": (_req("GET", "/api/", "HTTP/2.0"), {400, 505}),
    "backslash": (_req("GET", "/plan/..%5c..%5cetc%5cpasswd"), {400, 404}),
    "semicolon": (_req("GET", "/api/;x=1"), {200, 400, 404}),
    "audit-q": (_req("GET", "/api/audit?x=%"), {200, 400, 503}),
}
PAGEK = list(PAGE)
MCPK = ["no-decider", "slug-long", "slug-dotdot", "slug-nested", "slug-empty", "slug-dot",
        "slug-newline", "slug-nul", "slug-rtl", "note-huge", "note-nul", "format-bogus",
        "log-dotdot", "log-long", "wait-neg", "wait-huge", "status-nul",
        "env-gidx-submit", "env-gdir-submit", "env-alice-approved",
        "env-nohome-status"]  # fmt: skip
CONC = ["submits-landed", "approves-alice", "only-own-files", "tree-clean", "no-decision"]
SIG = ["term-run-once", "hup-run-once", "usr1-run-once", "term-status"]


def _build_local(root: Path, got: dict[str, Any]) -> Lab:
    slow = f"slow: {{kind: exec, argv: [{json.dumps(PY)}, '-c', 'import time; time.sleep(4)']}}\n"
    lab = Lab(root / "lab", extra=AGENT_CFG, tools=slow)
    for s in ["pend", "p-gidx", "p-gdir", "p-gwt", "p-gobj", "p-home", "p-gpg", "p-hook",
              "p-trace", "p-ed", "rj", "c1", "c2", "c3", "done"]:  # fmt: skip
        lab.write(s, plan_text(s, name="café ✓ done" if s == "done" else None))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("done", ALICE)
    lab.run()
    c = ["--config", str(lab.config)]
    odd = root / "odd"
    odd.mkdir()
    other = odd / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(other)], check=True)
    subprocess.run(["git", "-C", str(other), "commit", "-q", "--allow-empty", "-m", "o"],
                   env=lab.env(BOB), check=True)  # fmt: skip
    got["other-head"] = subprocess.run(["git", "-C", str(other), "rev-parse", "HEAD"],
                                       capture_output=True, text=True).stdout.strip()  # fmt: skip
    (odd / "wt").mkdir()
    (odd / "objs").mkdir()
    gpgcfg = odd / "gpg.gitconfig"
    gpgcfg.write_text("[user]\n\tname = T\n\temail = t@example.com\n[commit]\n\tgpgsign = true\n"
                      "[gpg]\n\tprogram = false\n")  # fmt: skip
    hooks = odd / "hooks"
    hooks.mkdir()
    (hooks / "pre-commit").write_text("#!/bin/sh\necho refused by hook >&2\nexit 1\n")
    (hooks / "pre-commit").chmod(0o755)
    hookcfg = odd / "hook.gitconfig"
    hookcfg.write_text(f"[user]\n\tname = T\n\temail = t@example.com\n[core]\n\thooksPath = "
                       f"{hooks}\n")  # fmt: skip
    ge: dict[str, tuple[list[str], dict[str, str], tuple[str, ...]]] = {
        "gidx-approve": (["approve", "plans/p-gidx"], {"GIT_INDEX_FILE": str(odd / "idx")}, ()),
        "gdir-approve": (["approve", "plans/p-gdir"], {"GIT_DIR": str(other / ".git")}, ()),
        "gwt-approve": (["approve", "plans/p-gwt"], {"GIT_WORK_TREE": str(odd / "wt")}, ()),
        "gobj-approve": (
            ["approve", "plans/p-gobj"],
            {"GIT_OBJECT_DIRECTORY": str(odd / "objs")},
            (),
        ),
        "nohome-approve": (["approve", "plans/p-home"], {}, ("HOME", "GIT_CONFIG_GLOBAL")),
        "nohome-status": (["status"], {}, ("HOME", "GIT_CONFIG_GLOBAL")),
        "gpgsign-approve": (["approve", "plans/p-gpg"], {"GIT_CONFIG_GLOBAL": str(gpgcfg)}, ()),
        "hookfail-approve": (
            ["approve", "plans/p-hook"],
            {"GIT_CONFIG_GLOBAL": str(hookcfg)},
            (),
        ),
        "trace-status-json": (["status", "--json"], {"GIT_TRACE": "1", "GIT_TRACE2": "1"}, ()),
        "trace-approve": (["approve", "plans/p-trace"], {"GIT_TRACE": "1"}, ()),
        "editor-reject": (
            ["reject", "plans/p-ed"],
            {"GIT_EDITOR": "false", "EDITOR": "false", "GIT_PAGER": "false"},
            (),
        ),
        "gdir-status-json": (["status", "--json"], {"GIT_DIR": str(other / ".git")}, ()),
    }
    got["gitenv"] = {}
    for k, (a, extra, drop) in ge.items():
        r = _cli(lab, ALICE, *a, *c, extra=extra, drop=drop)
        if r["moved"]:
            r["files"] = _changed(lab, "HEAD")
            r["author"] = lab.git("log", "-1", "--format=%ae", "HEAD").strip()
        r["fsck"] = subprocess.run(
            ["git", "fsck", "--connectivity-only"],
            cwd=lab.repo,
            env=lab.env(),
            capture_output=True,
            text=True,
        ).returncode
        r["porcelain"] = lab.git("status", "--porcelain")
        r["other-head"] = subprocess.run(
            ["git", "-C", str(other), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        got["gitenv"][k] = r
        r["t"] = time.time()
        if r["fsck"] != 0 or r["porcelain"]:  # put the lab back for the next variant
            lab.git("reset", "-q", "--hard", r["before"] if r["fsck"] else "HEAD")
    got["wt-empty"] = os.listdir(odd / "wt")
    # locales and argv bytes
    ff = os.fsencode(str(lab.repo / "plans")) + b"/\xff\xfe"
    loc: dict[str, tuple[list[Any], dict[str, str]]] = {
        "c-show": (["show", "plans/done"], {"LC_ALL": "C", "LANG": "C"}),
        "latin1-show": (["show", "plans/done"], {"PYTHONIOENCODING": "latin-1"}),
        "latin1-status": (["status"], {"PYTHONIOENCODING": "latin-1"}),
        "c-status-json": (["status", "--json"], {"LC_ALL": "C", "PYTHONUTF8": "0"}),
        "argv-ff-show": (["show", ff], {}),
        "argv-ff-approve": (["approve", ff], {}),
        "argv-ff-validate": (["validate", ff], {}),
        "argv-ff-config": (["status"], {}),
    }
    got["locale"] = {}
    for k, (a, extra) in loc.items():
        cfg = c if k != "argv-ff-config" else ["--config", b"/tmp/\xff\xfe.yml"]
        got["locale"][k] = _cli(lab, ALICE, *a, *cfg, extra=extra)
    # huge and odd arguments
    fifo = odd / "fifo.yml"
    os.mkfifo(fifo)
    long = "plans/" + "a" * 100_000
    hg: dict[str, list[Any]] = {
        "long-path-show": ["show", long],
        "long-path-validate": ["validate", "plans/" + "b/" * 3000 + "PLAN.yml"],
        "long-path-approve": ["approve", "plans/" + "c" * 5000],
        "long-config": ["status", "--config", "/tmp/" + "d" * 5000 + ".yml"],
        "big-message-reject": ["reject", "-m", "no " * 40000, "plans/rj"],
        "nul-ish-message": ["reject", "-m", "x\x07\x1b[31m\u202e\r\nPlan-Approved: y", "plans/c3"],
        "validate-dev-zero": ["validate", "/dev/zero"],
        "hash-dev-zero": ["hash", "/dev/zero"],
        "validate-fifo": ["validate", str(fifo)],
        "convert-dev-zero": ["convert", "/dev/zero"],
        "show-root": ["show", "/"],
        "approve-outside": ["approve", "/etc"],
        "approve-dash": ["approve", "--", "-"],
        "show-empty": ["show", ""],
    }
    got["huge"] = {}
    for k, a in hg.items():
        r = _cli(lab, ALICE, *a, *(c if "--config" not in a else []), timeout=25)
        r["pend"] = lab.plan("pend")["plan"]["status"]
        r["c3"] = lab.plan("c3")["plan"]["status"]
        r["rj"] = lab.plan("rj")["plan"]["status"]
        got["huge"][k] = r
        r["t"] = time.time()
    # config edge cases
    base = lab.config.read_bytes()
    got["cfg"] = {}
    for k, data in CONFIGS.items():
        data = data.replace(b"<BASE>", base)
        if k == "state-in-repo":
            data = base.replace(str(lab.state).encode(), str(lab.repo / ".plangate").encode())
        if k == "repo-file":
            data = base.replace(str(lab.repo).encode(), str(lab.repo / "README").encode())
        p = odd / f"cfg-{k}.yml"
        p.write_bytes(data)
        r = _cli(lab, ALICE, "status", "--json", "--config", str(p), timeout=30, cwd=odd)
        r["pwned"] = (odd / "PWNED").exists()
        got["cfg"][k] = r
        r["t"] = time.time()
    return lab


def _build_mcp(lab: Lab, got: dict[str, Any]) -> None:
    def sub(slug: str, tag: str, **kw: Any) -> tuple[str, dict[str, Any]]:
        return ("submit", {"plan": plan_text(tag), "slug": slug, **kw})

    seq = [
        sub("m" * 10000, "ml"),
        sub("../escape", "me"),
        sub("a/b", "mn"),
        sub("", "mem"),
        sub(".", "mdot"),
        sub("x\ny", "mnl"),
        sub("x\x00y", "mnul"),
        sub("\u202eevil", "mrtl"),
        sub("m-note", "mnote", note="n" * 2_000_000),
        sub("m-notenul", "mnn", note="a\x00b\nPlan-Approved: plans/pend sha256:00"),
        ("submit", {"plan": plan_text("mfmt"), "slug": "m-fmt", "format": "bogus"}),
        ("log", {"path": "../../../etc/passwd"}),
        ("log", {"path": "plans/" + "z" * 100000}),
        ("wait", {"path": "plans/pend", "timeout": -1, "status": "bogus"}),
        ("wait", {"path": "plans/pend", "timeout": 1e308, "status": "bogus"}),
        ("status", {"path": "plans/\x00"}),
    ]
    before = lab.head()
    got["mcp"] = mcp_calls(lab, seq)
    got["mcp-escape"] = (lab.root / "escape").exists() or (lab.repo / "escape").exists()
    got["mcp-porcelain"] = lab.git("status", "--porcelain")
    got["mcp-commits"] = [
        (r[2], _changed(lab, r[0]))
        for r in lab.log_rows(fmt="%H%x00%an%x00%ae%x01", rev=f"{before}..HEAD")
    ]
    other = lab.root.parent / "odd" / "other"
    # hostile environments for the server
    h0 = lab.head()
    got["env-gidx"] = mcp_calls(lab, [sub("m-gidx", "mgidx")],
                                extra={"GIT_INDEX_FILE": str(lab.root / "srv-idx")})  # fmt: skip
    got["env-gidx-files"] = _changed(lab, "HEAD") if lab.head() != h0 else []
    got["env-gidx-porcelain"] = lab.git("status", "--porcelain")
    lab.git("reset", "-q", "--hard", "HEAD")
    h1 = lab.head()
    got["env-gdir"] = mcp_calls(lab, [sub("m-gdir", "mgdir")],
                                extra={"GIT_DIR": str(other / ".git")})  # fmt: skip
    got["env-gdir-other"] = subprocess.run(
        ["git", "-C", str(other), "log", "--format=%s", "main"], capture_output=True, text=True
    ).stdout
    got["env-gdir-moved"] = lab.head() != h1
    got["env-gdir-files"] = _changed(lab, "HEAD") if lab.head() != h1 else []
    got["env-gdir-porcelain"] = lab.git("status", "--porcelain")
    lab.git("reset", "-q", "--hard", "HEAD")
    alice = {"GIT_AUTHOR_NAME": "Alice", "GIT_AUTHOR_EMAIL": ALICE[1],
             "GIT_COMMITTER_NAME": "Alice", "GIT_COMMITTER_EMAIL": ALICE[1]}  # fmt: skip
    got["env-alice"] = mcp_calls(
        lab, [("submit", {"plan": plan_text("malice", status="approved"), "slug": "m-alice"}),
              sub("m-alice2", "malice2")], extra=alice)  # fmt: skip
    got["env-alice-author"] = lab.git("log", "-1", "--format=%ae %ce", "HEAD").strip()
    got["env-nohome"] = mcp_calls(lab, [("status", {"path": "plans/pend"})],
                                  drop=("HOME", "GIT_CONFIG_GLOBAL"))  # fmt: skip
    # concurrent submits (one session, parallel calls) with CLI approvals by Alice
    h2 = lab.head()
    appr: dict[str, Any] = {}

    def approvals() -> None:
        time.sleep(0.3)
        for s in ("c1", "c2"):
            for _ in range(20):
                r = _cli(lab, ALICE, "approve", f"plans/{s}", "--config", str(lab.config))
                appr[s] = r
                if r["rc"] == 0 or "E_GIT" not in r["out"]:
                    break
                time.sleep(0.2)

    conc = [sub(f"k{i}", f"k{i}") for i in range(6)]
    got["conc"] = mcp_calls(lab, conc, together=True, during=approvals)
    got["conc-appr"] = {s: {k: v for k, v in r.items() if k in ("rc", "out")}
                        for s, r in appr.items()}  # fmt: skip
    got["conc-commits"] = [
        (r[2], _changed(lab, r[0]))
        for r in lab.log_rows(fmt="%H%x00%an%x00%ae%x01", rev=f"{h2}..HEAD")
    ]
    got["conc-porcelain"] = lab.git("status", "--porcelain")
    got["conc-lock"] = (lab.repo / ".git" / "index.lock").exists()
    lab.run()
    got["conc-rows"] = lab.rows()


def _build_page(lab: Lab, got: dict[str, Any]) -> None:
    port = free_port()
    cfg = lab.root / "page.yml"
    cfg.write_text(lab.config.read_text() + f'ui: {{listen: "127.0.0.1:{port}"}}\n')
    err = lab.root / "page.err"
    d = subprocess.Popen(
        [PY, "-m", "controller", "run", "--config", str(cfg)], cwd=lab.root, env=_env(lab),
        stdout=subprocess.DEVNULL, stderr=err.open("wb"), start_new_session=True,
    )  # fmt: skip
    try:
        got["page-ready"] = until(lambda: _request(port, _req("GET", "/api/"))[0] == 200, 90)
        res = {}
        for k, (data, _want) in PAGE.items():
            data = data.replace(b"PWNFILE", str(lab.root / "PWNED").encode())
            res[k] = _request(port, data)
        got["page"] = res
        got["page-pwned"] = (lab.root / "PWNED").exists()
        got["page-alive"] = d.poll() is None
    finally:
        if d.poll() is None:
            os.killpg(d.pid, signal.SIGTERM)
            try:
                d.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(d.pid, signal.SIGKILL)
                d.wait()
    text = err.read_text(errors="replace")
    got["page-failed"] = [ln[:400] for ln in text.splitlines()
                          if "handler_failed" in ln or "Traceback" in ln]  # fmt: skip


def _build_signals(lab: Lab, got: dict[str, Any]) -> None:
    got["sig"] = {}
    for k, sig in (("term-run-once", signal.SIGTERM), ("hup-run-once", signal.SIGHUP),
                   ("usr1-run-once", signal.SIGUSR1)):  # fmt: skip
        slug = f"s-{k}"
        lab.write(slug, plan_text(slug).replace("tool: rec", "tool: slow").replace(
            "  - name: rec\n", "  - name: slow\n"))  # fmt: skip
        lab.commit(f"agent: {slug}", AGENT)
        lab.run()
        lab.approve(slug, ALICE)
        p = subprocess.Popen(
            [PY, "-m", "controller", "run", "--once", "--config", str(lab.config)],
            cwd=lab.root, env=_env(lab), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        until(lambda s=slug: lab.started(s), 60)
        time.sleep(0.8)
        os.killpg(p.pid, sig)
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            _, err = p.communicate()
        after = lab.run(check=False)
        got["sig"][k] = {"rc": p.returncode, "err": err.decode(errors="replace")[-3000:],
                         "after": after.returncode, "after-err": after.stderr[-2000:],
                         "porcelain": lab.git("status", "--porcelain"),
                         "status": lab.plan(slug)["plan"]["status"]}  # fmt: skip
    p = subprocess.Popen(
        [PY, "-m", "controller", "status", "--config", str(lab.config)], cwd=lab.root,
        env=_env(lab), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    time.sleep(0.6)
    os.killpg(p.pid, signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    got["sig"]["term-status"] = {"rc": p.returncode, "err": err.decode(errors="replace")[-3000:],
                                 "after": 0, "after-err": "", "porcelain": "",
                                 "status": "n/a"}  # fmt: skip


def _build_oddfolder(lab: Lab, got: dict[str, Any]) -> None:
    """A plan folder whose name is no UTF-8 (bytes 0xFF 0xFE), committed by the agent."""
    folder = os.fsencode(str(lab.repo / "plans")) + b"/\xff\xfe"
    os.makedirs(folder)
    with open(folder + b"/PLAN.yml", "w", encoding="utf-8") as f:
        f.write(plan_text("oddf"))
    lab.commit("agent: odd folder", AGENT)
    c = ["--config", str(lab.config)]
    got["oddfolder"] = {
        "odd-folder-status": _cli(lab, ALICE, "status", *c),
        "odd-folder-status-json": _cli(lab, ALICE, "status", "--json", *c),
        "odd-folder-audit-json": _cli(lab, ALICE, "audit", "--json", *c),
    }


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    got: dict[str, Any] = {}
    t0 = time.time()
    lab = _build_local(root, got)
    lab.got = got  # type: ignore[attr-defined]
    got["t-local"] = time.time() - t0
    _build_mcp(lab, got)
    got["t-mcp"] = time.time() - t0
    _build_page(lab, got)
    got["t-page"] = time.time() - t0
    _build_signals(lab, got)
    got["t-sig"] = time.time() - t0
    _build_oddfolder(lab, got)
    if os.environ.get("R110G_DUMP"):
        Path(os.environ["R110G_DUMP"]).write_text(json.dumps(got, default=str, indent=1))
    got["t"] = time.time() - t0
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r110surf-atk110g", _build)


def _g(lab: Lab) -> dict[str, Any]:
    return lab.got  # type: ignore[attr-defined]


def _no_internal(text: str) -> None:
    assert "internal error" not in text and "Traceback" not in text, text[-800:]
    assert "unexpected exception" not in text.lower(), text[-800:]


def _coded(r: dict[str, Any], code: str = "E_") -> None:
    assert r["rc"] not in (0, None), r
    _no_internal(r["out"])
    assert code in r["out"], r["out"][-800:]
    assert "remedy" in r["out"], r["out"][-800:]
    assert not r["moved"] and not r["dirty"], r


def xf(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 110: {cls}: {what}")


GITENV_BROKE: dict[str, Any] = {}


@pytest.mark.parametrize("k", cases([f"gitenv:{k}" for k in GITENV], GITENV, GITENV_BROKE))
def test_git_environment(lab: Lab, k: str) -> None:
    """git's own environment variables: either the command works on the configured repo (a
    commit by Alice touching only the plan's file, the tree clean, objects all there, no
    other repository touched) or it is refused coded, nothing committed."""
    g = _g(lab)
    r = g["gitenv"][k]
    _no_internal(r["out"])
    assert r["rc"] is not None, "hung"
    assert r["other-head"] == g["other-head"], "another repository was written"
    assert r["fsck"] == 0, "a commit whose objects are not in the repository"
    if k.endswith("-json"):
        shape = json.loads(r["stdout"])
        assert isinstance(shape, (list, dict)), shape
    if r["rc"] == 0 and r["moved"]:
        slug = r["out"] and [a for a in GITENV if a == k] and k
        assert r["author"] == ALICE[1], r
        assert len(r["files"]) == 1 and r["files"][0].startswith("plans/p-"), (slug, r["files"])
        assert not r["porcelain"], r["porcelain"]
    elif r["rc"] != 0:
        assert "E_" in r["out"] and "remedy" in r["out"], r["out"][-800:]
        assert not r["moved"] and not r["porcelain"], r
    if k == "gwt-approve":
        assert g["wt-empty"] == [], g["wt-empty"]


XF_ODD = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 110, accepted for now (docs/threat-model.md, Accepted limits; docs/operations.md "
    "Troubleshoot): undecodable-folder-unlisted: a committed plans/<0xFF 0xFE>/PLAN.yml is no "
    "plan, so it has no status row, no E_UNSAFE_PATH, no finding",
)
LOCALE_BROKE: dict[str, Any] = {f"locale:{k}": XF_ODD for k in LOCALE if k.startswith("odd-folder")}


@pytest.mark.parametrize("k", cases([f"locale:{k}" for k in LOCALE], LOCALE, LOCALE_BROKE))
def test_locale_and_bytes(lab: Lab, k: str) -> None:
    """Odd locales, output encodings and argv that is no UTF-8: it works or is coded."""
    r = _g(lab)["oddfolder" if k.startswith("odd-folder") else "locale"][k]
    _no_internal(r["out"])
    assert r["rc"] is not None
    if k.startswith("odd-folder"):  # a row (or finding) that names the folder, coded
        assert r["rc"] in (0, 1) and "E_UNSAFE_PATH" in r["out"], r
    elif r["rc"] == 1:  # validate's report: the problem, its code, the path and the fix
        assert "E_UNSAFE_PATH" in r["out"] and "rename" in r["out"], r
    else:
        assert r["rc"] == 0 or ("E_" in r["out"] and "remedy" in r["out"]), r
    assert not r["moved"], r
    if k.endswith("-json") and r["rc"] in (0, 1):
        json.loads(r["stdout"])


HUGE_BROKE: dict[str, Any] = {}


@pytest.mark.parametrize("k", cases([f"arg:{k}" for k in HUGE], HUGE, HUGE_BROKE))
def test_odd_arguments(lab: Lab, k: str) -> None:
    """Huge or odd arguments: coded with a remedy, no hang, nothing committed wrongly."""
    r = _g(lab)["huge"][k]
    assert r["rc"] is not None, f"{k} hung"
    _no_internal(r["out"])
    if k == "nul-ish-message":  # a person's reject with an odd note: it may commit, alone
        assert r["pend"] == "pending_approval"
        if r["rc"] == 0:
            assert r["c3"] == "rejected", r
            return
    if k == "big-message-reject" and r["rc"] == 0:
        assert r["rj"] == "rejected" and r["pend"] == "pending_approval", r
        return
    _coded(r)
    assert r["pend"] == "pending_approval"


CFG_BROKE: dict[str, Any] = {}
CFG_OK_ALLOWED = {"dup-keys", "bom", "latin1", "huge", "plans-dir-up", "state-in-repo"}


@pytest.mark.parametrize("k", cases([f"cfg:{k}" for k in CFGK], CFGK, CFG_BROKE))
def test_config_edges(lab: Lab, k: str) -> None:
    """A config that is empty, a list, a YAML bomb, a python tag, too deep, tabbed, with
    bad ports or odd folders: E_CONFIG_INVALID in the JSON error shape (or, for a config
    that is fine, a status), never a hang, an internal error or code run."""
    r = _g(lab)["cfg"][k]
    assert r["rc"] is not None, "hung"
    assert not r["pwned"]
    _no_internal(r["out"])
    assert not r["dirty"] and not r["moved"], r  # nothing written into the working tree
    if r["rc"] == 0:
        assert k in CFG_OK_ALLOWED, r
        json.loads(r["stdout"])
        return
    shape = json.loads(r["stdout"])
    assert shape["ok"] is False and shape["code"].startswith("E_") and shape["remedy"], shape


MCP_BROKE: dict[str, Any] = {}
MCP_IDX = {k: i for i, k in enumerate(MCPK[1:17])}


@pytest.mark.parametrize("k", cases([f"mcp:{k}" for k in MCPK], MCPK, MCP_BROKE))
def test_mcp(lab: Lab, k: str) -> None:
    """MCP through the real SDK: odd arguments coded (E_ shape with a remedy), a hostile
    server environment never writes elsewhere nor decides, no deciding tool."""
    g = _g(lab)
    m = g["mcp"]
    assert m["fail"] is None, m
    _no_internal(m["err"])
    if k == "no-decider":
        assert not {"approve", "reject", "abort"} & set(m["tools"]), m["tools"]
        for author, files in g["mcp-commits"]:
            assert author == AGENT[1], (author, files)
            assert all(f.startswith("plans/") and f.endswith("/PLAN.yml") for f in files), files
        assert not g["mcp-escape"] and not g["mcp-porcelain"], g["mcp-porcelain"]
        return
    if k in MCP_IDX:
        r = m["calls"][MCP_IDX[k]]
        _no_internal(r["text"])
        if k in ("wait-neg", "wait-huge") and not r["error"]:
            return
        if k == "note-nul" and not r["error"]:
            return
        if k == "slug-nested" and not r["error"]:  # a nested plan folder, as status lists
            assert r["data"]["file"] == "plans/a/b/PLAN.yml", r
            return
        if k in ("slug-rtl", "note-huge") and not r["error"]:
            return
        assert r["error"], r
        assert r["data"] and r["data"]["code"].startswith("E_") and r["data"].get("remedy"), r
        return
    if k == "env-gidx-submit":
        u = g["env-gidx"]
        r = u["calls"][0] if u["calls"] else {"error": True, "text": u["fail"], "data": None}
        _no_internal(r["text"])
        assert not g["env-gidx-porcelain"], g["env-gidx-porcelain"]
        if not r["error"]:
            assert g["env-gidx-files"] == ["plans/m-gidx/PLAN.yml"], g["env-gidx-files"]
        else:
            assert r["data"] and r["data"]["code"].startswith("E_"), r
        return
    if k == "env-gdir-submit":
        u = g["env-gdir"]
        r = u["calls"][0] if u["calls"] else {"error": True, "text": u["fail"], "data": None}
        _no_internal(r["text"])
        assert g["env-gdir-other"].strip() == "o", g["env-gdir-other"]
        assert not g["env-gdir-porcelain"], g["env-gdir-porcelain"]
        if not r["error"]:
            assert g["env-gdir-files"] == ["plans/m-gdir/PLAN.yml"], g["env-gdir-files"]
        return
    if k == "env-alice-approved":
        u = g["env-alice"]
        assert u["calls"] and u["calls"][0]["error"], u
        assert u["calls"][0]["data"]["code"].startswith("E_")
        r2 = u["calls"][1]
        if not r2["error"]:  # the agent's identity is the config's, not the environment's
            assert g["env-alice-author"] == f"{AGENT[1]} {AGENT[1]}", g["env-alice-author"]
        return
    if k == "env-nohome-status":
        u = g["env-nohome"]
        assert u["fail"] is None and u["calls"], u
        r = u["calls"][0]
        _no_internal(r["text"])
        assert not r["error"] or (r["data"] and r["data"]["code"].startswith("E_")), r


CONC_BROKE: dict[str, Any] = {}


@pytest.mark.parametrize("k", cases([f"conc:{k}" for k in CONC], CONC, CONC_BROKE))
def test_concurrent(lab: Lab, k: str) -> None:
    """Six parallel MCP submits while Alice approves two plans with the CLI: each submit
    lands (or is E_GIT "kept moving"), each approval is Alice's and touches only its plan,
    the working tree clean, no lock left, no submitted plan decided."""
    g = _g(lab)
    cs = g["conc"]
    assert cs["fail"] is None, cs
    if k == "submits-landed":
        for r in cs["calls"]:
            _no_internal(r["text"])
            assert not r["error"] or (r["data"] and r["data"]["code"] == "E_GIT"), r
        assert sum(1 for r in cs["calls"] if not r["error"]) >= 4, cs["calls"]
    elif k == "approves-alice":
        for s, r in g["conc-appr"].items():
            _no_internal(r["out"])
            assert r["rc"] == 0, (s, r)
    elif k == "only-own-files":
        for author, files in g["conc-commits"]:
            assert author in (AGENT[1], ALICE[1]), (author, files)
            assert len(files) == 1, (author, files)
            if author == ALICE[1]:
                assert files[0] in ("plans/c1/PLAN.yml", "plans/c2/PLAN.yml"), files
            else:
                assert files[0].startswith("plans/k"), files
    elif k == "tree-clean":
        assert not g["conc-porcelain"] and not g["conc-lock"], g["conc-porcelain"]
    elif k == "no-decision":
        rows = g["conc-rows"]
        for i in range(6):
            row = rows.get(f"plans/k{i}", {})
            assert row.get("status") in ("pending_approval", None), row
        assert not lab.calls("k0")


PAGE_BROKE: dict[str, Any] = {}


@pytest.mark.parametrize("k", cases([f"page:{k}" for k in PAGEK], PAGEK, PAGE_BROKE))
def test_page(lab: Lab, k: str) -> None:
    """The page's odd paths and methods: the documented code (405 for a method that is not
    GET/HEAD, 404 for what it does not know), never 500 or a dropped connection, no handler
    traceback, no file written, the daemon alive."""
    g = _g(lab)
    assert g["page-ready"]
    code, body = g["page"][k]
    # round 111 (atk111b, page-stdlib-errors): the page's own 505, with a status line, its
    # headers and under /api/ the error shape, no longer http.server's HTTP/0.9-style page
    assert code in PAGE[k][1], (code, body[:800])
    assert "Traceback" not in body
    if k == "head-api":
        assert body.split("\r\n\r\n", 1)[-1] == "", body[-300:]
    if "/api/" in PAGE[k][0].decode("latin-1").split("\r\n")[0] and code >= 400 and code != 405:
        shape = json.loads(body.split("\r\n\r\n", 1)[1])
        assert shape["code"].startswith("E_") and shape.get("remedy"), shape
    assert not g["page-pwned"]
    assert g["page-alive"]
    assert not g["page-failed"], g["page-failed"]


SIG_BROKE: dict[str, Any] = {}


@pytest.mark.parametrize("k", cases([f"sig:{k}" for k in SIG], SIG, SIG_BROKE))
def test_signals(lab: Lab, k: str) -> None:
    """SIGTERM/SIGHUP/SIGUSR1 to ``run --once`` mid-action, SIGTERM to ``status``: no
    traceback; the next pass works; the tree clean; the plan never lost."""
    r = _g(lab)["sig"][k]
    assert r["rc"] is not None
    _no_internal(r["err"])
    assert r["after"] == 0 and "Traceback" not in r["after-err"], r["after-err"][-800:]
    assert not r["porcelain"], r["porcelain"]
    if k != "term-status":
        assert r["status"] in ("executing", "completed", "failed", "paused"), r["status"]
