"""Round 109, the surfaces under hostile environment and filesystem conditions, and the
remote-mode webhook under hostile payloads (atk109b).

Lab (one, local mode, agent identity configured): the agent commits ``pend`` (pending) and
``done`` (named ``café ✓ done``, approved by Alice, completed). Then every CLI command is run
under conditions an operator's machine can have: stdout on a full disk (``/dev/full``) or a
closed pipe, an ASCII-only output encoding, a deleted working folder, a config that is
unreadable (permission bits honoured: the CLI runs without CAP_DAC_OVERRIDE through
``setpriv``), a folder, a FIFO, ``/dev/zero``, a symlink loop or a dangling symlink, a state
dir that is a file, unreadable or read-only, a held ``.git/index.lock`` and a read-only object
store during ``approve``/``reject``, ``init``/``convert -o`` into a read-only folder, SIGINT.
MCP through the REAL ``mcp`` SDK (``stdio_client`` + ``ClientSession`` on ``python -m
controller mcp``): the tool list, a submit that claims ``approved``/``completed`` or brings its
own ``approval:``/``execution:`` blocks, a submit while ``index.lock`` is held or the plans
folder is read-only, a server started on an unreadable config. Last, a second lab in REMOTE
mode (a bare origin, a daemon with ``webhook.listen`` and ``metrics.listen``) gets hostile
webhook requests over raw sockets.

Ids:
* ``out:<k>``: stdout on ``/dev/full`` (``schema``, ``status``, ``status --json``, ``show``,
  ``audit --json``, ``validate --json``, ``hash``, ``check``): coded (E_STORAGE), no internal
  error, no traceback. ``pipe:<k>``: ``status``/``schema`` into a pipe closed after 10 bytes.
* ``enc:<k>``: ``PYTHONIOENCODING=ascii``: ``show``/``status`` of the ``café ✓`` plan.
* ``cwd:<k>``: commands run from a deleted folder: coded or working, never internal error.
* ``cfg:<k>``: a config unreadable, a folder, a FIFO, ``/dev/zero``, a loop, dangling: exit 2,
  E_CONFIG_INVALID (JSON shape under ``--json``), no hang.
* ``state:<k>``: state dir a file, unreadable, read-only: E_STORAGE for status/run/approve.
* ``write:<k>``: ``approve``/``reject``/``abort`` with ``index.lock`` held or a read-only object
  store: coded, nothing committed, the working tree as it was (no half-written PLAN.yml).
* ``mk:<k>``: ``init``/``convert -o`` into a read-only folder: coded.
* ``sig:<k>``: SIGINT to ``run --once`` mid-action and to a daemon: no traceback.
* ``mcp:<k>``: no approve/reject/abort tool; a submit claiming a decision never lands as one;
  environment failures coded; nothing committed but what a submit should commit.
* ``hook:<k>``: hostile webhook requests: each answered with its HTTP code (never a dropped
  connection or a logged handler traceback), the daemon alive, the origin untouched.

Seen (round 109, 84 ids, ~37 s wall): 19 broke (7 classes), 65 held.
Fixed the same session: stdout-full, ascii-stdout, deleted-cwd and readonly-state-run (the
CLI's boundary codes an OS error without a file, a database error and an output it cannot
write; stdout escapes what it cannot encode: r109cli), webhook-deep-json (a body too deep is
no payload; a client gone before the answer is no handler failure: r109hook),
failed-writer-claims-lock (a writer that fails before its commit lands removes its note:
r109note). Fixed the next session: mcp-submit-half-written (a shared writer whose
working-tree write the system refuses puts the branch back: ``sharedwrite._put_back``,
r109putback).
Broke:
**mcp-submit-half-written** (``mcp:submit-ro-plans``): MCP ``submit`` (real SDK) while the
plans folder is not writable (``chmod 555 plans``, server run without CAP_DAC_OVERRIDE): the
commit "Submit plan plans/m-ro" LANDS on main, then writing the working tree fails
(PermissionError in ``write_worktree``), the tool answers an uncoded "unexpected exception"
(the client sees no E_ code), and ``git status`` shows ``D  plans/m-ro/PLAN.yml`` STAGED with
the lock released: round 83's hazard, a person's next ``git commit`` deletes the submission
under their name (never a half-written state, never a commit it should not make).
**failed-writer-claims-lock** (``write:lock-approve``, ``write:lock-reject``): with a
person's ``.git/index.lock`` held (their ``git commit`` editor open), ``plangate approve
plans/pend`` fails E_GIT as it should, but leaves ``.git/plangate-index-lock`` (the note of a
killed plangate writer, docs/operations.md). The next writer then takes the person's lock
for its own: ``touch .git/index.lock; plangate approve P`` (E_GIT); ``rm .git/index.lock;
touch .git/index.lock`` (a new git command); ``plangate reject -m no P`` exits 0, commits,
and REMOVES that index.lock, which no plangate made.
**stdout-full-uncoded** (``out:*``, 8 ids): ``plangate schema --config C > /dev/full`` exits 2
with "plangate: internal error: OSError: [Errno 28] No space left on device" and "rerun with
PLANGATE_DEBUG=1 ... report it"; ``status --json > /dev/full`` prints a Python traceback
("During handling of the above exception, another exception occurred"), its error shape
itself unwritable (docs/errors.md: a full disk is E_STORAGE; SPEC 8: no traceback).
**ascii-stdout-uncoded** (``enc:show``): ``PYTHONIOENCODING=ascii plangate show plans/done``
(a plan named ``café ✓ done``): "internal error: UnicodeEncodeError" (``--json`` held).
**deleted-cwd-uncoded** (``cwd:status-nocfg``, ``cwd:validate-rel``, ``cwd:show-rel``):
``cd D; rmdir D; plangate validate plans/pend --config C`` (or ``status`` without
``--config``): "internal error: FileNotFoundError: [Errno 2]" (round 108 coded an OS refusal of
a NAMED path; the working folder is not covered).
**readonly-state-run** (``state:ro-run``): a state dir whose folders are read-only (``chmod
555``, files kept writable; run without CAP_DAC_OVERRIDE): ``plangate run --once`` exits 2
with "internal error: OperationalError: attempt to write a readonly database" (an
unreadable state dir, or read-only files, are E_STORAGE).
**webhook-deep-json** (``hook:deep-array``, ``hook:deep-object``, ``hook:form-deep``): in
remote mode, an authenticated POST whose JSON body nests 100,000 arrays (or objects, or the
same inside GitHub's ``payload=`` form) gets NO HTTP answer: the connection is closed, the
daemon logs ``http.handler_failed`` with a ``RecursionError`` traceback, and no
``webhook_requests_total`` result is counted (docs/operations.md lists the answers).
Held: unreadable/odd configs are E_CONFIG_INVALID (the JSON shape under ``--json``; the
message says "does not exist" for a folder, a FIFO and ``/dev/zero``, which is untrue but
coded); state dir a file or unreadable is E_STORAGE; ``index.lock`` and a read-only object
store are E_GIT/E_STORAGE with nothing committed and the tree clean; ``init``/``convert -o``
into a read-only folder coded; SIGINT stops cleanly; a closed pipe is quiet; MCP has no
deciding tool, and a submit claiming ``approved``/``completed`` or carrying forged blocks
never becomes a decision; MCP environment failures are coded; the webhook answers bad
lengths 400/411/413, wrong secrets 401/403, other methods 405, oversized headers 431/414, and
a slow request does not stall the next; no webhook request committed anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, load_yaml, plan_text, until
from test_round2_execution_kit import shared
from writerkit import free_port

WORKTREE = str(Path(__file__).resolve().parents[2])
AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}, branch_prefix: plangate/}\n"
#: run without the capabilities that let root ignore permission bits
NODAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
SECRET = "s3cret-109b"


def _env(lab: Lab, who: tuple[str, str] | None = None) -> dict[str, str]:
    env = lab.env(who)
    env["PYTHONPATH"] = WORKTREE
    env["REC_LOG"] = str(lab.log)
    return env


def _cli(
    lab: Lab, who: Any, *args: str, timeout: float = 60, pre: list[str] | None = None,
    cwd: Any = None, extra: dict[str, str] | None = None, stdout: Any = None,
) -> dict[str, Any]:  # fmt: skip
    before = lab.head()
    tree = lab.git("status", "--porcelain")
    env = {**_env(lab, who), **(extra or {})}
    try:
        r = subprocess.run(
            [*(pre or []), sys.executable, "-m", "controller", *args],
            cwd=cwd or lab.repo, env=env, stdout=stdout or subprocess.PIPE,
            stderr=subprocess.PIPE, timeout=timeout, check=False,
        )  # fmt: skip
        so = r.stdout.decode("utf-8", "replace") if r.stdout else ""
        out = {"rc": r.returncode, "stdout": so[-2000:], "stderr": r.stderr.decode()[-2000:]}
    except subprocess.TimeoutExpired:
        out = {"rc": None, "stdout": "", "stderr": "TIMEOUT"}
    out["out"] = out["stdout"] + out["stderr"]
    out["moved"] = lab.head() != before
    out["dirty"] = lab.git("status", "--porcelain") != tree
    return out


# -- the real MCP client SDK over stdio --------------------------------------------------
_SEEN = [0]


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
    lab: Lab, seq: list[tuple[str, dict[str, Any]]], config: Path, pre: list[str], cwd: Path
) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    cmd = [*pre, sys.executable, "-m", "controller", "mcp", "--config", str(config)]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=_env(lab), cwd=str(cwd))
    out: dict[str, Any] = {"calls": [], "tools": [], "fail": None}
    _SEEN[0] += 1
    out["errlog"] = str(lab.root / f"mcp-{_SEEN[0]}.err")
    with open(out["errlog"], "w") as errlog:
        try:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                out["tools"] = [t.name for t in (await s.list_tools()).tools]
                for name, args in seq:
                    try:
                        out["calls"].append(_content(await s.call_tool(name, args)))
                    except Exception as e:  # an MCP protocol error (unknown tool, ...)
                        out["calls"].append(
                            {"error": True, "data": None, "text": f"{type(e).__name__}: {e}"}
                        )
        except Exception as e:  # the server would not start or died
            out["fail"] = f"{type(e).__name__}: {e}"
    return out


def calls(
    lab: Lab, seq: list[tuple[str, dict[str, Any]]], config: Path | None = None,
    pre: list[str] | None = None, cwd: Path | None = None,
) -> dict[str, Any]:  # fmt: skip
    coro = _session(lab, seq, config or lab.config, pre or [], cwd or lab.root)
    try:
        return asyncio.run(asyncio.wait_for(coro, 120))
    except Exception as e:
        return {"calls": [], "tools": [], "fail": f"{type(e).__name__}: {e}"}


# -- what is tried -----------------------------------------------------------------------
OUT = {
    "schema": ["schema"],
    "status": ["status"],
    "status-json": ["status", "--json"],
    "show": ["show", "plans/done"],
    "audit-json": ["audit", "--json"],
    "validate-json": ["validate", "--json", "plans/pend"],
    "hash": ["hash", "plans/pend"],
    "check": ["check", "--base", "HEAD~1", "--head", "HEAD"],
}
ENC = {"show": ["show", "plans/done"], "status": ["status"], "show-json": ["show", "--json",
       "plans/done"]}  # fmt: skip
CWD = {
    "status-nocfg": (["status"], False),
    "validate-rel": (["validate", "plans/pend"], True),
    "show-rel": (["show", "plans/pend"], True),
    "validate-abs": (["validate", "<repo>/plans/pend"], True),
    "schema": (["schema"], True),
    "status": (["status"], True),
}
CFG = ["unread-status", "unread-show", "unread-approve", "unread-audit-json",
       "unread-status-json", "dir", "fifo", "zero", "loop", "dangling"]  # fmt: skip
STATE = ["file-status", "file-status-json", "file-run", "unread-status", "unread-run",
         "ro-status", "ro-run"]  # fmt: skip
WRITE = ["lock-approve", "lock-reject", "lock-abort-done", "objects-approve", "objects-reject"]
MK = ["init-ro", "convert-ro", "init-under-file"]
SIG = ["run-once-int", "daemon-int"]
MCPK = ["no-decider-tools", "approve-tool", "reject-tool", "abort-tool", "submit-approved",
        "submit-completed", "submit-executing", "submit-forged-blocks", "submit-lock",
        "submit-ro-plans", "unread-config", "gone-cwd", "nothing-ran"]  # fmt: skip

DEEP = 100_000
HOOK: dict[str, tuple[bytes, dict[str, str], Any]] = {
    # name: (body, headers, Content-Length spec: True = right, False = none, str = as given)
    "ok": (b'{"ref":"refs/heads/main"}', {}, True),
    "cl-negative": (b"{}", {}, "-1"),
    "cl-text": (b"{}", {}, "abc"),
    "cl-huge": (b"{}", {}, "9" * 30),
    "chunked": (b"2\r\n{}\r\n0\r\n\r\n", {"Transfer-Encoding": "chunked"}, False),
    "deep-array": (b"[" * DEEP + b"]" * DEEP, {}, True),
    "deep-object": (b'{"ref":' + b'{"a":' * DEEP + b"1" + b"}" * DEEP + b"}", {}, True),
    "form-deep": (
        b"payload=" + b"%5B" * DEEP,
        {"Content-Type": "application/x-www-form-urlencoded"},
        True,
    ),
    "ref-list": (b'{"ref":["refs/heads/main"]}', {}, True),
    "ref-nan": (b'{"ref":NaN}', {}, True),
    "bad-utf8": (b'{"ref":"\xff\xfe"}', {}, True),
    "surrogate": (b'{"ref":"\\ud800"}', {}, True),
    "form-bad": (b"payload=%FF%zz", {"Content-Type": "application/x-www-form-urlencoded"}, True),
    "gh-bad-sig-ping": (
        b"{}",
        {"X-Hub-Signature-256": "sha256=zz", "X-GitHub-Event": "ping"},
        True,
    ),
    "gh-ping-nosig": (b"{}", {"X-GitHub-Event": "ping"}, True),
    "bearer-latin1": (b"{}", {"Authorization": "Bearer s3cr\u00e9t"}, True),
    "gitlab-empty": (b"{}", {"X-Gitlab-Token": ""}, True),
    "get": (b"", {}, True),
    "big-noauth": (b"x" * 3_000_000, {}, True),
}
NOAUTH = {"gh-bad-sig-ping", "gh-ping-nosig", "bearer-latin1", "gitlab-empty", "big-noauth"}
WANT: dict[str, set[int]] = {
    "ok": {202},
    "cl-negative": {400},
    "cl-text": {400},
    "cl-huge": {413},
    "chunked": {411},
    "deep-array": {202, 400},
    "deep-object": {202, 400},
    "form-deep": {202, 400},
    "ref-list": {202, 400},
    "ref-nan": {202, 400},
    "bad-utf8": {202, 400},
    "surrogate": {202, 400},
    "form-bad": {202, 400},
    "gh-bad-sig-ping": {403},
    "gh-ping-nosig": {401},
    "bearer-latin1": {403},
    "gitlab-empty": {401, 403},
    "get": {405},
    "big-noauth": {401, 413},
}
HOOK_RAW = {
    "garbage": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"A" * 200,
    "long-line": b"POST /" + b"a" * 100_000 + b" HTTP/1.1\r\n\r\n",
    "many-headers": b"POST /webhook HTTP/1.1\r\n"
    + b"".join(b"X-%d: y\r\n" % i for i in range(2000))
    + b"Content-Length: 2\r\n\r\n{}",
    "huge-header": b"POST /webhook HTTP/1.1\r\nX-Plangate-Secret: " + b"s" * 200_000
    + b"\r\nContent-Length: 2\r\n\r\n{}",
}  # fmt: skip


def _request(port: int, data: bytes, timeout: float = 15) -> tuple[int, str]:
    """One raw HTTP exchange: the status code (-1: no answer at all) and the first bytes.
    The answer is read while the request is still being sent: a server may answer an
    oversized request (413/414/431) and close before it has all of it."""
    import threading

    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError as e:
        return -2, repr(e)
    got: list[bytes] = []

    def read() -> None:
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                got.append(b)
        except OSError as e:
            got.append(f"<{type(e).__name__}>".encode())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    with contextlib.suppress(OSError):
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    reader.join(timeout + 5)
    s.close()
    out = b"".join(got)
    head = out.split(b"\r\n", 1)[0].split()
    try:
        code = int(head[1]) if head[:1] in ([b"HTTP/1.1"], [b"HTTP/1.0"]) else -1
    except (IndexError, ValueError):
        code = -1
    return code, out[:400].decode("latin-1")


def _hook(port: int, body: bytes, hdrs: dict[str, str], cl: Any, auth: bool) -> bytes:
    h = f"{'GET' if not body and cl is True else 'POST'} /webhook HTTP/1.1\r\nHost: x\r\n"
    if cl is True:
        h += f"Content-Length: {len(body)}\r\n"
    elif cl:
        h += f"Content-Length: {cl}\r\n"
    if auth:
        h += f"X-Plangate-Secret: {SECRET}\r\n"
    for k, v in hdrs.items():
        h += f"{k}: {v}\r\n"
    return h.encode("latin-1") + b"\r\n" + body


def _sig(body: bytes) -> str:
    return "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


def _get(port: int, path: str) -> tuple[int, str]:
    return _request(port, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())


def _spawn(lab: Lab, config: Path, cwd: Path, name: str, pre: list[str] | None = None) -> Any:
    env = {**_env(lab), "PLANGATE_WEBHOOK_SECRET": SECRET}
    return subprocess.Popen(
        [*(pre or []), sys.executable, "-m", "controller", "run", "--config", str(config)],
        cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=(cwd / f"{name}.err").open("wb"),
        start_new_session=True,
    )  # fmt: skip


def _stop(d: Any, sig: int = signal.SIGTERM) -> int | None:
    if d.poll() is None:
        os.killpg(d.pid, sig)
        try:
            d.wait(timeout=180)
        except subprocess.TimeoutExpired:
            os.killpg(d.pid, signal.SIGKILL)
            d.wait(timeout=30)
    return d.returncode


def _cfg_with(lab: Lab, path: Path, **repl: str) -> Path:
    text = lab.config.read_text()
    for key, value in repl.items():
        lines = [ln for ln in text.split("\n") if not ln.startswith(f"{key}:")]
        text = "\n".join(lines) + f"\n{key}: {value}\n"
    path.write_text(text)
    return path


def _build_local(root: Path, got: dict[str, Any]) -> Lab:
    lab = Lab(root / "lab", extra=AGENT_CFG, tools="slow: {kind: exec, argv: [sleep, '4']}\n")
    lab.write("pend", plan_text("pend"))
    lab.write("done", plan_text("done", name="café ✓ done"))
    lab.write("gate", plan_text("gate"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("done", ALICE)
    lab.run()
    c = ["--config", str(lab.config)]
    odd = root / "odd"
    odd.mkdir()
    # stdout on a full disk, a closed pipe, an ASCII terminal
    got["out"] = {}
    for k, a in OUT.items():
        with open("/dev/full", "wb") as full:
            got["out"][k] = _cli(lab, ALICE, *a, *c, stdout=full)
    got["pipe"] = {}
    for k in ("status", "schema"):
        env = _env(lab, ALICE)
        cmd = f"{sys.executable} -m controller {k} --config {lab.config} | head -c 10"
        r = subprocess.run(
            ["bash", "-o", "pipefail", "-c", cmd], cwd=lab.repo, env=env, capture_output=True,
            text=True, timeout=60, check=False,
        )  # fmt: skip
        got["pipe"][k] = {"rc": r.returncode, "err": r.stderr[-1500:]}
    got["enc"] = {
        k: _cli(lab, ALICE, *a, *c, extra={"PYTHONIOENCODING": "ascii"}) for k, a in ENC.items()
    }
    # a deleted working folder
    got["cwd"] = {}
    for k, (a, with_cfg) in CWD.items():
        gone = odd / f"gone-{k}"
        gone.mkdir()
        args = [x.replace("<repo>", str(lab.repo)) for x in a]
        cmd = [sys.executable, "-m", "controller", *args, *(c if with_cfg else [])]
        script = f'cd {gone} && rmdir {gone} && exec "$@"'
        r = subprocess.run(
            ["bash", "-c", script, "sh", *cmd], env=_env(lab, ALICE), capture_output=True,
            text=True, timeout=60, check=False,
        )  # fmt: skip
        got["cwd"][k] = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-1500:]}
    # odd configs
    unread = odd / "unread.yml"
    shutil.copy(lab.config, unread)
    unread.chmod(0)
    fifo = odd / "fifo.yml"
    os.mkfifo(fifo)
    (odd / "zero.yml").symlink_to("/dev/zero")
    (odd / "loop1.yml").symlink_to(odd / "loop2.yml")
    (odd / "loop2.yml").symlink_to(odd / "loop1.yml")
    (odd / "dangling.yml").symlink_to(odd / "nowhere.yml")
    cfgs = {
        "unread-status": (["status"], unread),
        "unread-show": (["show", "plans/pend"], unread),
        "unread-approve": (["approve", "plans/pend"], unread),
        "unread-audit-json": (["audit", "--json"], unread),
        "unread-status-json": (["status", "--json"], unread),
        "dir": (["status"], odd),
        "fifo": (["status"], fifo),
        "zero": (["status"], odd / "zero.yml"),
        "loop": (["status"], odd / "loop1.yml"),
        "dangling": (["status"], odd / "dangling.yml"),
    }
    got["cfg"] = {
        k: _cli(lab, ALICE, *a, "--config", str(p), pre=NODAC, timeout=30)
        for k, (a, p) in cfgs.items()
    }
    # odd state dirs
    sfile = odd / "state-file"
    sfile.write_text("x\n")
    cf = _cfg_with(lab, odd / "sfile.yml", state_dir=str(sfile))
    su = odd / "state-unread"
    shutil.copytree(lab.state, su)
    cu = _cfg_with(lab, odd / "sunread.yml", state_dir=str(su))
    sr = odd / "state-ro"
    shutil.copytree(lab.state, sr)
    cr = _cfg_with(lab, odd / "sro.yml", state_dir=str(sr))
    su.chmod(0)
    for dirpath, dirs, _files in os.walk(sr):  # its folders read-only, its files as they are
        for d in dirs:
            os.chmod(os.path.join(dirpath, d), 0o555)
    sr.chmod(0o555)
    states = {
        "file-status": (["status"], cf),
        "file-status-json": (["status", "--json"], cf),
        "file-run": (["run", "--once"], cf),
        "unread-status": (["status"], cu),
        "unread-run": (["run", "--once"], cu),
        "ro-status": (["status"], cr),
        "ro-run": (["run", "--once"], cr),
    }
    got["state"] = {
        k: _cli(lab, ALICE, *a, "--config", str(p), pre=NODAC) for k, (a, p) in states.items()
    }
    # writes that git cannot make
    got["write"] = {}
    lock = lab.repo / ".git" / "index.lock"
    note = lab.repo / ".git" / "plangate-index-lock"
    for k, a in (("lock-approve", ["approve", "plans/pend"]),
                 ("lock-reject", ["reject", "-m", "no", "plans/pend"]),
                 ("lock-abort-done", ["abort", "plans/done"])):  # fmt: skip
        lock.write_text("")  # a person's `git commit` holds the lock (its editor open)
        try:
            got["write"][k] = _cli(lab, ALICE, *a, *c)
        finally:
            got["write"][k]["lock-kept"] = lock.exists()
            got["write"][k]["note-left"] = note.exists()
            lock.unlink(missing_ok=True)
            note.unlink(missing_ok=True)
    objs = lab.repo / ".git" / "objects"
    modes = {}
    for dirpath, _dirs, _files in os.walk(objs):
        modes[dirpath] = os.stat(dirpath).st_mode
        os.chmod(dirpath, 0o555)
    try:
        for k, a in (("objects-approve", ["approve", "plans/pend"]),
                     ("objects-reject", ["reject", "-m", "no", "plans/pend"])):  # fmt: skip
            got["write"][k] = _cli(lab, ALICE, *a, *c, pre=NODAC)
    finally:
        for dirpath, mode in modes.items():
            os.chmod(dirpath, mode)
    got["pend-status"] = lab.plan("pend")["plan"]["status"]
    # init / convert into a read-only folder
    ro = odd / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    src = odd / "src.json"
    src.write_text(json.dumps({"name": "x", "steps": [{"tool": "echo", "params": {}}]}))
    afile = odd / "afile"
    afile.write_text("x")
    got["mk"] = {
        "init-ro": _cli(lab, ALICE, "init", str(ro / "new"), pre=NODAC, cwd=odd),
        "convert-ro": _cli(lab, ALICE, "convert", str(src), "-o", str(ro), pre=NODAC, cwd=odd),
        "init-under-file": _cli(lab, ALICE, "init", str(afile / "x"), cwd=odd),
    }
    got["ro-empty"] = os.listdir(ro) == []
    ro.chmod(0o755)
    return lab


def _build_signals(lab: Lab, got: dict[str, Any]) -> None:
    """SIGINT to `run --once` while its tool sleeps, and to a daemon."""
    lab.write("slowp", plan_text("slowp").replace("tool: rec", "tool: slow").replace(
        "  - name: rec\n", "  - name: slow\n"))  # fmt: skip
    lab.commit("agent: slow plan", AGENT)
    lab.run()
    lab.approve("slowp", ALICE)
    env = _env(lab)
    p = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(lab.config)],
        cwd=lab.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    until(lambda: any(x.startswith("plangate: start") for x in lab.subjects("slowp")), 60)
    time.sleep(0.8)
    os.killpg(p.pid, signal.SIGINT)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate()
    got["sig"] = {"run-once-int": {"rc": p.returncode, "err": err.decode()[-3000:]}}
    d = _spawn(lab, lab.config, lab.root, "dint")
    time.sleep(4)
    rc = _stop(d, signal.SIGINT)
    got["sig"]["daemon-int"] = {"rc": rc, "err": (lab.root / "dint.err").read_text()[-3000:]}
    lab.run(check=False)


def _build_mcp(lab: Lab, got: dict[str, Any]) -> None:
    def sub(slug: str, text: str) -> tuple[str, dict[str, Any]]:
        return ("submit", {"plan": text, "slug": slug})

    forged = plan_text("mf") + (
        "approval: {status: approved, by: alice@example.com, at: '2026-01-01T00:00:00Z',"
        " commit: 0000000, plan_hash: 'sha256:00'}\n"
        "execution: {status: completed, controller: plangate}\n"
    )
    seq = [
        ("approve", {"path": "plans/pend"}),
        ("reject", {"path": "plans/pend"}),
        ("abort", {"path": "plans/pend"}),
        sub("m-approved", plan_text("mapp", status="approved")),
        sub("m-completed", plan_text("mcomp", status="completed")),
        sub("m-executing", plan_text("mexe", status="executing")),
        sub("m-forged", forged),
    ]
    before = lab.head()
    got["mcp"] = calls(lab, seq)
    got["mcp-dirty"] = lab.git("status", "--porcelain")
    lab.run()
    got["mcp-after"] = {}
    for slug in ("m-approved", "m-completed", "m-executing", "m-forged"):
        try:
            got["mcp-after"][slug] = dict(load_yaml(lab.git("show", f"HEAD:plans/{slug}/PLAN.yml")))
        except Exception:
            got["mcp-after"][slug] = None
    got["mcp-status"] = lab.rows()
    got["mcp-before"] = before
    # environment failures
    lock = lab.repo / ".git" / "index.lock"
    head = lab.head()
    lock.write_text("")
    try:
        got["mcp-lock"] = calls(lab, [sub("m-lock", plan_text("mlock"))])
    finally:
        lock.unlink()
    got["mcp-lock-moved"] = lab.head() != head
    got["mcp-lock-left"] = (lab.repo / "plans" / "m-lock").exists()
    plans = lab.repo / "plans"
    plans.chmod(0o555)
    try:
        got["mcp-ro"] = calls(lab, [sub("m-ro", plan_text("mro"))], pre=NODAC)
    finally:
        plans.chmod(0o755)
    got["mcp-ro-moved"] = lab.head() != head
    got["mcp-ro-dirty"] = lab.git("status", "--porcelain")
    unread = lab.root.parent / "odd" / "unread.yml"
    got["mcp-unread"] = calls(lab, [("status", {})], config=unread, pre=NODAC)
    gone = lab.root.parent / "odd" / "mcp-gone"
    gone.mkdir()
    wrap = ["bash", "-c", f'cd {gone} && rmdir {gone} && exec "$@"', "sh"]
    got["mcp-gone"] = calls(lab, [("status", {"path": "plans/pend"})], pre=wrap)


def _build_remote(root: Path, got: dict[str, Any]) -> None:
    rem = Lab(root / "rem", extra=AGENT_CFG)
    rem.write("rpend", plan_text("rpend"))
    rem.commit("agent: plan", AGENT)
    origin = root / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(rem.repo), str(origin)], check=True)
    hport, mport = free_port(), free_port()
    rem.config.write_text(
        rem.config.read_text().replace(
            f"repo: {rem.repo}\n",
            f"remote: {{url: {json.dumps(str(origin))}, branch: main, poll_interval: 300}}\n",
        )
        + f'webhook: {{listen: "127.0.0.1:{hport}"}}\nmetrics: {{listen: "127.0.0.1:{mport}"}}\n'
    )

    def ohead() -> str:
        return subprocess.run(
            ["git", "--git-dir", str(origin), "rev-parse", "main"], capture_output=True,
            text=True, check=True,
        ).stdout.strip()  # fmt: skip

    d = _spawn(rem, rem.config, rem.root, "remote")
    try:
        got["hook-ready"] = until(lambda: _get(mport, "/healthz")[0] == 200, 90)
        until(lambda: "freeze" in subprocess.run(
            ["git", "--git-dir", str(origin), "log", "--format=%s", "main"],
            capture_output=True, text=True, check=False).stdout, 60)  # fmt: skip
        time.sleep(1)
        head = ohead()
        res: dict[str, Any] = {}
        for k, (body, hdrs, cl) in HOOK.items():
            res[k] = _request(hport, _hook(hport, body, hdrs, cl, k not in NOAUTH))
        for k, data in HOOK_RAW.items():
            res[k] = _request(hport, data)
        # a slow request (headers only, the body never sent) must not stall the next
        slow = socket.create_connection(("127.0.0.1", hport), timeout=30)
        slow.sendall(_hook(hport, b"", {}, "100", True))
        t0 = time.time()
        res["after-slow"] = _request(hport, _hook(hport, b'{"ref":"refs/heads/main"}', {}, True,
                                                  True), timeout=10)  # fmt: skip
        res["after-slow-s"] = time.time() - t0
        slow.close()
        gb = b'{"ref":"refs/heads/main"}'
        res["gh-good"] = _request(
            hport,
            _hook(
                hport, gb, {"X-Hub-Signature-256": _sig(gb), "X-GitHub-Event": "push"}, True, False
            ),
        )
        time.sleep(2)
        got["hook"] = res
        got["hook-metrics"] = _get(mport, "/metrics")[1]
        got["hook-health"] = _get(mport, "/healthz")
        got["hook-alive"] = d.poll() is None
        got["hook-origin-moved"] = ohead() != head
    finally:
        _stop(d)
    err = (rem.root / "remote.err").read_text(errors="replace")
    got["hook-failed"] = [ln[:300] for ln in err.splitlines() if "handler_failed" in ln]


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    got: dict[str, Any] = {}
    t0 = time.time()
    lab = _build_local(root, got)
    lab.got = got  # type: ignore[attr-defined]
    _build_signals(lab, got)
    _build_mcp(lab, got)
    _build_remote(root, got)
    got["t"] = time.time() - t0
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r109surf-atk109b", _build)


def _g(lab: Lab) -> dict[str, Any]:
    return lab.got  # type: ignore[attr-defined]


def _no_internal(text: str) -> None:
    assert "internal error" not in text and "Traceback" not in text, text[-600:]


def _coded(r: dict[str, Any], code: str = "E_") -> None:
    assert r["rc"] not in (0, None), r
    _no_internal(r["out"])
    assert code in r["out"], r["out"][-600:]
    assert "remedy" in r["out"], r["out"][-600:]
    assert not r["moved"] and not r["dirty"], r


def xf(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 109: {cls}: {what}")


XF_OUT = xf("stdout-full-uncoded", "stdout on a full disk is an internal error or a traceback")
XF_ENC = xf("ascii-stdout-uncoded", "an ASCII stdout is 'internal error: UnicodeEncodeError'")
XF_CWD = xf("deleted-cwd-uncoded", "a deleted working folder is 'internal error: FileNotFound'")
XF_RO = xf("readonly-state-run", "run on a read-only state dir: internal error OperationalError")
XF_HOOK = xf("webhook-deep-json", "a deeply nested JSON body: no HTTP answer, RecursionError")


OK = list(OUT)


@pytest.mark.parametrize("k", cases([f"out:{k}" for k in OK], OK, {}))  # fixed (r109cli)
def test_stdout_full(lab: Lab, k: str) -> None:
    """stdout on a full disk: a coded E_STORAGE on stderr, never an internal error."""
    r = _g(lab)["out"][k]
    assert r["rc"] not in (0, None), r
    _no_internal(r["out"])
    assert "E_STORAGE" in r["stderr"], r["stderr"][-600:]


@pytest.mark.parametrize("k", cases([f"pipe:{k}" for k in ("status", "schema")],
                                    ["status", "schema"], {}))  # fmt: skip
def test_closed_pipe(lab: Lab, k: str) -> None:
    """stdout into a pipe the reader closed: quiet, no traceback."""
    r = _g(lab)["pipe"][k]
    _no_internal(r["err"])
    assert "BrokenPipe" not in r["err"], r


EK = list(ENC)
ENC_BROKE: dict[str, Any] = {}  # fixed the same session (r109cli)


@pytest.mark.parametrize("k", cases([f"enc:{k}" for k in EK], EK, ENC_BROKE))
def test_ascii_stdout(lab: Lab, k: str) -> None:
    """An ASCII-only stdout: the plan is shown (escaped) or the error coded."""
    r = _g(lab)["enc"][k]
    _no_internal(r["out"])
    assert r["rc"] == 0 or "E_" in r["out"], r


CK = list(CWD)
CWD_BROKE: dict[str, Any] = {}  # fixed the same session (r109cli)


@pytest.mark.parametrize("k", cases([f"cwd:{k}" for k in CK], CK, CWD_BROKE))
def test_deleted_cwd(lab: Lab, k: str) -> None:
    """From a deleted working folder: it works (absolute paths) or says so, coded."""
    r = _g(lab)["cwd"][k]
    _no_internal(r["out"])
    assert r["rc"] == 0 or ("E_" in r["out"] and "remedy" in r["out"]), r


@pytest.mark.parametrize("k", cases([f"cfg:{k}" for k in CFG], CFG, {}))
def test_odd_config(lab: Lab, k: str) -> None:
    """An unreadable, folder, FIFO, endless, looping or dangling config: E_CONFIG_INVALID,
    exit 2, no hang, nothing written; under ``--json`` the one error shape on stdout."""
    r = _g(lab)["cfg"][k]
    _coded(r, "E_CONFIG_INVALID")
    assert r["rc"] == 2, r
    if k.endswith("-json"):
        shape = json.loads(r["stdout"])
        assert shape["ok"] is False and shape["code"] == "E_CONFIG_INVALID" and shape["remedy"]


@pytest.mark.parametrize(
    "k", cases([f"state:{k}" for k in STATE], STATE, {})
)  # fmt: skip (ro-run fixed: r109cli)
def test_odd_state(lab: Lab, k: str) -> None:
    """A state dir that is a file, unreadable or read-only: E_STORAGE where it is needed
    (a read-only status may still answer), never an internal error."""
    r = _g(lab)["state"][k]
    _no_internal(r["out"])
    if k == "ro-status" and r["rc"] == 0:
        assert "plans/done" in r["stdout"]
        return
    assert r["rc"] not in (0, None) and "E_STORAGE" in r["out"] and "remedy" in r["out"], r
    if k.endswith("-json"):
        shape = json.loads(r["stdout"])
        assert shape["ok"] is False and shape["code"] == "E_STORAGE", shape
    assert not r["moved"], r


XF_NOTE = xf(
    "failed-writer-claims-lock",
    "a writer refused by a person's index.lock leaves "
    ".git/plangate-index-lock; the next writer removes the person's lock",
)
WRITE_BROKE: dict[str, Any] = {}  # fixed the same session (r109note)


@pytest.mark.parametrize("k", cases([f"write:{k}" for k in WRITE], WRITE, WRITE_BROKE))
def test_write_refused(lab: Lab, k: str) -> None:
    """git cannot write: coded (E_GIT / E_STORAGE), nothing committed, the working tree as
    it was (no half-written PLAN.yml), the plan still pending."""
    r = _g(lab)["write"][k]
    _coded(r)
    assert any(c in r["out"] for c in ("E_GIT", "E_STORAGE", "E_ILLEGAL")), r["out"][-400:]
    assert _g(lab)["pend-status"] == "pending_approval"
    if k.startswith("lock-"):  # the person's lock is theirs: kept, and never claimed
        assert r["lock-kept"] and not r["note-left"], r


@pytest.mark.parametrize("k", cases([f"mk:{k}" for k in MK], MK, {}))
def test_make_refused(lab: Lab, k: str) -> None:
    """init/convert into a folder that cannot be written: coded, no half-made tree."""
    r = _g(lab)["mk"][k]
    _coded(r)
    assert _g(lab)["ro-empty"]


@pytest.mark.parametrize("k", cases([f"sig:{k}" for k in SIG], SIG, {}))
def test_sigint(lab: Lab, k: str) -> None:
    """SIGINT mid-action or to a daemon: it stops, no traceback, no KeyboardInterrupt."""
    r = _g(lab)["sig"][k]
    assert r["rc"] is not None
    _no_internal(r["err"])
    assert "KeyboardInterrupt" not in r["err"], r["err"][-600:]
    if k == "run-once-int":  # the slow action ran once, never twice, never unrecorded
        slowp = lab.plan("slowp")
        assert slowp["plan"]["status"] in ("executing", "completed", "failed", "approved"), slowp


@pytest.mark.parametrize("k", cases([f"mcp:{k}" for k in MCPK], MCPK, {}))
def test_mcp(lab: Lab, k: str) -> None:
    """MCP through the real SDK: no deciding tool; a submit never lands as a decision; the
    environment's failures are coded, nothing committed."""
    g = _g(lab)
    m = g["mcp"]
    if k == "no-decider-tools":
        assert m["fail"] is None, m["fail"]
        assert m["tools"] and not {"approve", "reject", "abort"} & set(m["tools"]), m["tools"]
        return
    idx = {"approve-tool": 0, "reject-tool": 1, "abort-tool": 2, "submit-approved": 3,
           "submit-completed": 4, "submit-executing": 5, "submit-forged-blocks": 6}  # fmt: skip
    if k in ("approve-tool", "reject-tool", "abort-tool"):
        r = m["calls"][idx[k]]
        assert r["error"], r
        assert g["mcp-status"]["plans/pend"]["status"] == "pending_approval"
        return
    if k in idx:
        r = m["calls"][idx[k]]
        slug = ["m-approved", "m-completed", "m-executing", "m-forged"][idx[k] - 3]
        _no_internal(r["text"])
        if r["error"]:
            assert r["data"] and r["data"]["code"].startswith("E_") and r["data"]["remedy"]
            assert g["mcp-after"][slug] is None
            return
        row = g["mcp-status"].get(f"plans/{slug}", {})
        assert row.get("status") in ("pending_approval", "invalid"), row
        tag = {"m-approved": "mapp", "m-completed": "mcomp", "m-executing": "mexe"}.get(slug, "mf")
        assert not lab.calls(tag), "ran"
        return
    if k == "submit-lock":
        r = g["mcp-lock"]["calls"][0]
        assert r["error"] and r["data"] and r["data"]["code"].startswith("E_"), r
        _no_internal(r["text"])
        assert not g["mcp-lock-moved"] and not g["mcp-lock-left"]
        return
    if k == "submit-ro-plans":
        r = g["mcp-ro"]["calls"][0]
        assert r["error"] and r["data"] and r["data"]["code"] in ("E_STORAGE", "E_GIT"), r
        _no_internal(r["text"])
        assert not g["mcp-ro-moved"] and not g["mcp-ro-dirty"], g["mcp-ro-dirty"]
        return
    if k == "unread-config":
        u = g["mcp-unread"]
        if u["calls"]:
            r = u["calls"][0]
            assert r["error"] and r["data"]["code"] == "E_CONFIG_INVALID", r
        else:  # refused at start: said so on stderr, coded
            err = Path(u["errlog"]).read_text()
            assert "E_CONFIG_INVALID" in err and "Traceback" not in err, err[-600:]
        return
    if k == "gone-cwd":
        u = g["mcp-gone"]
        assert u["fail"] is None, u["fail"]
        r = u["calls"][0]
        _no_internal(r["text"])
        assert not r["error"] or (r["data"] and r["data"]["code"].startswith("E_")), r
        return
    if k == "nothing-ran":
        ran = [json.loads(x)["argv"][0] for x in lab.log.read_text().splitlines() if x.strip()]
        assert set(ran) <= {"done"}, ran


HK = [*HOOK, *HOOK_RAW, "after-slow", "gh-good"]
HOOK_BROKE: dict[str, Any] = {}  # fixed the same session (r109hook)


@pytest.mark.parametrize("k", cases([f"hook:{k}" for k in HK], HK, HOOK_BROKE))
def test_webhook(lab: Lab, k: str) -> None:
    """A hostile webhook request: an HTTP answer with the documented code, never a dropped
    connection or a handler traceback; no commit; the daemon alive and healthy."""
    g = _g(lab)
    assert g["hook-ready"]
    code, body = g["hook"][k]
    if k == "garbage":  # no HTTP request line: http.server's HTTP/0.9-style error page
        assert code > 0 or "Error response" in body, (code, body)
    else:
        assert code > 0, (code, body)
    if k in WANT:
        assert code in WANT[k], (code, body)
    elif k == "after-slow":
        assert code == 202 and g["hook"]["after-slow-s"] < 5, (code, g["hook"]["after-slow-s"])
    elif k == "gh-good":
        assert code == 202, (code, body)
    elif k != "garbage":
        assert 400 <= code < 500, (code, body)
    assert "Traceback" not in body
    if k in ("deep-array", "deep-object", "form-deep"):
        assert not g["hook-failed"], g["hook-failed"]
    assert g["hook-alive"] and g["hook-health"][0] == 200, g["hook-health"]
    assert not g["hook-origin-moved"]
