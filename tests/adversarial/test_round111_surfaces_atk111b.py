"""Round 111, the agent surfaces (CLI, MCP through the real ``mcp`` SDK client, the daemon's
page, ``init``) in odd repositories, with odd config files, in a hostile process environment,
and given odd, huge, concurrent and cancelled MCP requests (atk111b).

Lab: seven labs built at once (``build_all``), each a local-mode plans repo with an agent
identity, 29 plans committed by the agent and frozen by one ``run --once``. Repositories made
from a lab: a shallow clone, an unborn branch, a bare clone, a ``.git`` file
(``--separate-git-dir``), a clone with a submodule at ``plans/subm``, a sparse checkout without
``plans/r-sp``, ``core.autocrlf``/``core.filemode=false``, a clone owned by uid 65534, a clone
whose own hooks fail, hang 25 s, rewrite the message, fail after the commit or edit the plan.

Ids:
* ``repo:<k>``: ``status``/``show``/``audit``/``check``/``approve``/``run --once``/``init`` there.
* ``cfg:<k>``: ``status --config`` of a config in UTF-16, with a UTF-8 BOM, Latin-1, NULs, 3
  MB, nested 5000 deep, a billion laughs, ``~``, a list, a duplicate key, a tab, CR LF, CR,
  U+2028, a 5000-digit number, ``.inf``, python/binary tags, a date, a folder, a FIFO,
  ``/dev/zero``, a symlink loop, ``PLANGATE_CONFIG`` a folder, ``./plangate.yml`` a folder; the
  MCP server given a bad config.
* ``env:<k>``: a person's global git config (``color.ui=always``, ``log.showSignature``,
  ``format.pretty=oneline``, ``core.abbrev=4``, ``commit.gpgsign`` with a failing gpg,
  ``commit.verbose``/``core.commentChar``, ``user.useConfigOnly`` with no user,
  ``i18n.commitEncoding=latin1``, ``core.fsmonitor``), ``GIT_AUTHOR_*`` empty, with a newline and
  a forged trailer, a garbage or future date, ``GIT_TRACE*`` to ``/dev/stdout``, ``LANG=C`` with
  ``PYTHONIOENCODING=ascii:strict``, a bogus locale, no ``HOME``, ``XDG_*`` files, stdin closed
  or ``/dev/null`` (``approve``, ``reject``, ``freeze``, ``validate -``, ``mcp``), stderr closed,
  ``PLANGATE_CONFIG`` with a control byte or 5000 characters, paths of 5000 characters, a NUL,
  ``plans``, ``.``, a log file, a 5000-digit integer in a plan (CLI ``validate``, MCP).
* ``mcp:<k>``: every tool with wrong types, missing/extra arguments, NUL, huge or ``..`` slugs,
  NaN and negative timeouts, tools that do not exist (``approve``); a 3 MB plan, 3000 actions;
  48 calls at once (8 submits); a wait, a submit and a big validate cancelled; an agent's
  ``approved`` submit (new, and over a frozen plan) then a pass; raw 2 MB and binary lines.
* ``page:<k>``: the daemon's page: methods, HTTP/0.9 and HTTP/2 prefaces, traversal (plain and
  encoded), NUL and bad UTF-8 ids, option-shaped, range, rev, path, blob and tree ``/commit/``
  shas, a staged never-committed blob by sha and by prefix, odd/huge queries and headers, odd
  ``Content-Length``/``Transfer-Encoding``/``Expect``, 12 stalled clients, pipelining.

Seen (round 111, 186 ids, ~57 s wall on 2 idle cores, ~105 s under a load of 15): 24 broke
(8 classes), 162 held. All eight fixed (fix111b): their marks are removed.
Broke:
**dubious-ownership-misdiagnosed** (``repo:owned-status``, ``-status-in``, ``-approve``,
``-audit``): ``chown -R 65534 repo`` (git's safe.directory refusal), then ``plangate status
--json --config C`` (inside the repo or not) says ``E_GIT: <repo>: HEAD is detached; plangate
watches a branch``, remedy ``git switch main`` (the repo IS on main); ``approve plans/r-ow``
says ``E_USAGE: plans/r-ow: no PLAN.yml there`` (it is there); ``audit`` says ``the repository
has no commits to audit``: coded, but the cause and remedy are false; git's "dubious
ownership ... safe.directory" never reaches the person (``show`` inside it reads the plan).
**init-into-bare-repo** (``repo:init-bare``): ``plangate init <bare repo folder>`` exits 0 and
writes ``plangate.yml`` and a nested ``plans-repo`` into that git directory, though ``init``
refuses every folder inside a git repository (its own remedy: "outside every git repository").
**huge-int-unlocated** (``cfg:bigint``, ``env:bigint-validate``, ``env:bigint-mcp``): a value of
5001 digits (``limits: {max_actions: 1000...}`` in the config, ``n: 1000...`` in a plan):
``status`` and ``validate --json`` answer ``E_YAML_PARSE: Exceeds the limit (4300 digits) for
integer string conversion ...; use sys.set_int_max_str_digits() to increase the limit`` with
no line (every other YAML problem names one) and Python's advice as the message; MCP
``validate``/``submit`` answer ``E_PARSE_NONJSON`` "not a plan: expected one JSON object ..."
for a YAML plan.
**git-trace-env-misread** (``env:trace-stdout-status``, ``-approve``, ``-audit``, ``-show``,
``-submit``): ``GIT_TRACE=/dev/stdout`` (or ``GIT_TRACE_PERFORMANCE``) is not scrubbed as other
``GIT_*`` variables are: git's trace lines are read as its answer: ``status --json`` and MCP
``submit`` say "HEAD is detached; git switch main" on main, ``show plans/e-uni`` "<repo>: No
such file or directory", ``audit`` "invalid object name '21'", ``approve`` "non-hexadecimal
number found in fromhex()". Nothing is written.
**mcp-stdin-closed-internal-error** (``env:stdin-closed-mcp``): ``plangate mcp --config C <&-``
answers ``plangate: internal error: AttributeError: 'NoneType' object has no attribute
'buffer'`` (with stdin ``/dev/null`` it exits 0 quietly).
**mcp-unknown-tool-uncoded** (``mcp:call-approve``, ``mcp:call-unknown``): ``tools/call`` of
``approve`` (or any name the server lacks) is answered ``Unknown tool: approve``: no
``E_`` code, no remedy (approval is a person's commit; tools/list names the tools).
**page-stdlib-errors** (``page:trace``, ``connect``, ``bad-method``, ``query-huge``,
``header-huge``, ``headers-many``): ``TRACE /``, ``CONNECT``, a method with a control byte get
501 (docs/operations.md: anything but GET/HEAD is 405), a 200 kB query 414, a 300 kB header or
2000 headers 431: all the HTTP library's own HTML error page, without the
``Content-Security-Policy`` every response is promised, and under ``/api/`` not the one error
shape.
**commit-page-non-commit-object** (``page:commit-blob``, ``page:commit-tree``): ``GET
/commit/<sha of README's blob>`` or ``/commit/<HEAD's tree>`` answers 200, a "Commit" page
showing the blob's bytes or the tree's listing, not 404 "no such commit" (a staged,
never-committed blob is 404: the page reads the controller's store).
Held: shallow clones (``audit``/``run`` refused with ``git fetch --unshallow``), unborn branch,
bare repo, ``.git`` file, submodule (E_UNSAFE_PATH, the submodule untouched), sparse checkout
(E_USAGE "not in this working tree", nothing committed), autocrlf (no CR committed, one line
changed), the person's hooks never run (fail/hang/rewrite/edit: one approval commit, its
trailers kept), ``init`` into a file or with ``GIT_DEFAULT_HASH=sha256``; every odd config file
is exit 2 E_CONFIG_INVALID/E_GIT in under a second (FIFO, device, folder named; billion laughs
and nesting refused); a person's global git config changes no parse (colour, oneline,
showSignature, abbrev), gpgsign failure and useConfigOnly are E_GIT, an empty author is
E_APPROVER_NOT_ALLOWED, a newline in the author name forges no trailer; LANG=C/ascii output,
no HOME, XDG files, stdin closed for approve/reject/freeze; every odd MCP argument is E_USAGE
or E_UNSAFE_PATH with a remedy; 3 MB and 3000-action plans are coded; 48 concurrent calls all
answered, 8 one-file commits; cancelled requests leave the session answering at once and the
submit whole; an ``approved`` submit is E_ILLEGAL_TRANSITION or converted to
``pending_approval``, nothing runs; raw 2 MB/binary lines get JSON-RPC errors; the page never
5xx'd, traversal and option-shaped shas are 404 (no file written), 12 stalled clients do not
block a request, the daemon stays up.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, Labs, build_all, cases, plan_text, until
from test_round2_execution_kit import shared

WORKTREE = str(Path(__file__).resolve().parents[2])
AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}, branch_prefix: plangate/}\n"
PY = sys.executable


def _env(lab: Lab, who: tuple[str, str] | None = None) -> dict[str, str]:
    env = lab.env(who)
    env["PYTHONPATH"] = WORKTREE
    env["REC_LOG"] = str(lab.log)
    return env


def _snap(lab: Lab, repo: Path | None = None) -> dict[str, Any]:
    def g(*a: str) -> str:
        r = subprocess.run(
            ["git", *a],
            cwd=repo or lab.repo,
            env=lab.env(),
            capture_output=True,
            text=True,
            check=False,
        )
        return r.stdout + (r.stderr if r.returncode else "")

    return {
        "head": g("rev-parse", "HEAD"),
        "tree": g("status", "--porcelain"),
        "staged": g("diff", "--cached", "--name-only"),
    }


def _cli(
    lab: Lab,
    who: Any,
    *args: Any,
    timeout: float = 40,
    cwd: Any = None,
    extra: dict[str, str] | None = None,
    drop: tuple[str, ...] = (),
    stdin: Any = None,
    wrap: str | None = None,
    repo: Path | None = None,
) -> dict[str, Any]:
    before = _snap(lab, repo)
    env = {**_env(lab, who), **(extra or {})}
    for k in drop:
        env.pop(k, None)
    argv = [PY, "-m", "controller", *[str(a) for a in args]]
    if wrap is not None:
        argv = ["/bin/sh", "-c", wrap + ' exec "$@"', "sh", *argv]
    t0 = time.time()
    try:
        r = subprocess.run(
            argv,
            cwd=cwd or lab.repo,
            env=env,
            capture_output=True,
            timeout=timeout,
            check=False,
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
        )
        so = r.stdout.decode("utf-8", "replace")
        se = r.stderr.decode("utf-8", "replace")
        se = se if len(se) < 4000 else se[:1500] + " ... " + se[-1500:]
        so = so if len(so) < 400000 else so[:3000] + " ... " + so[-2000:]
        out = {"rc": r.returncode, "stdout": so, "stderr": se}
    except subprocess.TimeoutExpired:
        out = {"rc": None, "stdout": "", "stderr": "TIMEOUT"}
    out["secs"] = round(time.time() - t0, 2)
    out["out"] = out["stdout"] + out["stderr"]
    out["before"] = before
    out["after"] = _snap(lab, repo)
    out["lock"] = ((repo or lab.repo) / ".git" / "index.lock").exists()
    return out


def _commits(lab: Lab, before: str, repo: Path | None = None, ref: str = "HEAD") -> list[Any]:
    def g(*a: str) -> str:
        return subprocess.run(
            ["git", *a],
            cwd=repo or lab.repo,
            env=lab.env(),
            capture_output=True,
            text=True,
            check=False,
        ).stdout

    rows = []
    for h in g("rev-list", "--reverse", f"{before.strip()}..{ref}").split():
        rows.append(
            {
                "parents": len(g("rev-list", "--parents", "-n1", h).split()) - 1,
                "author": g("log", "-1", "--format=%ae", h).strip(),
                "files": g("diff-tree", "--no-commit-id", "--name-only", "-r", h).split(),
            }
        )
    return rows


# -- the real MCP client SDK over stdio --------------------------------------------------
def _content(res: Any) -> dict[str, Any]:
    err = getattr(res, "is_error", getattr(res, "isError", None))
    text = "".join(getattr(c, "text", "") for c in res.content)
    body = text.split(": ", 1)[1] if err and text.startswith("Error executing") else text
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    return {"error": bool(err), "data": data, "text": text[:200000]}


async def _session(lab: Lab, seq: list[Any], env: dict[str, str], mode: str) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    cmd = [PY, "-m", "controller", "mcp", "--config", str(lab.config)]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env, cwd=str(lab.root))
    out: dict[str, Any] = {"calls": [], "tools": [], "fail": None}
    errlog_path = lab.root / f"mcp-{time.time_ns()}.err"

    async def one(s: Any, name: str, args: Any) -> dict[str, Any]:
        try:
            return _content(await s.call_tool(name, args))
        except Exception as e:  # an MCP protocol error
            return {"error": True, "data": None, "text": f"{type(e).__name__}: {e}"}

    with open(errlog_path, "w") as errlog:
        try:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                out["tools"] = [t.name for t in (await s.list_tools()).tools]
                if mode == "together":
                    out["calls"] = list(await asyncio.gather(*[one(s, n, a) for n, a in seq]))
                elif mode == "cancel":  # each call cancelled after 0.3 s, then a status
                    for n, a in seq:
                        t = asyncio.ensure_future(one(s, n, a))
                        await asyncio.sleep(0.3)
                        t.cancel()
                        out["calls"].append({"cancelled": True})
                    t0 = time.time()
                    out["calls"].append(await asyncio.wait_for(one(s, "status", {}), 30))
                    out["after_cancel_s"] = time.time() - t0
                else:
                    for n, a in seq:
                        out["calls"].append(await one(s, n, a))
        except BaseException as e:
            out["fail"] = f"{type(e).__name__}: {e}"[:1500]
    out["err"] = errlog_path.read_text(errors="replace")[-3000:]
    return out


def mcp_calls(
    lab: Lab, seq: list[Any], extra: dict[str, str] | None = None, mode: str = "seq"
) -> dict[str, Any]:
    env = {**_env(lab), **(extra or {})}
    before = _snap(lab)
    try:
        out = asyncio.run(asyncio.wait_for(_session(lab, seq, env, mode), 120))
    except BaseException as e:
        out = {"calls": [], "tools": [], "fail": f"{type(e).__name__}: {e}", "err": ""}
    out["before"] = before
    out["after"] = _snap(lab)
    out["facts"] = _commits(lab, before["head"])
    out["lock"] = (lab.repo / ".git" / "index.lock").exists()
    return out


def sub(slug: str, tag: str, **kw: Any) -> tuple[str, dict[str, Any]]:
    return ("submit", {"plan": plan_text(tag, **kw), "slug": slug})


def _git(lab: Lab, cwd: Path, *a: str, who: Any = None, check: bool = True) -> str:
    r = subprocess.run(
        ["git", *a], cwd=cwd, env=lab.env(who), capture_output=True, text=True, check=False
    )
    if check and r.returncode:
        raise RuntimeError(f"git {a}: {r.stderr}")
    return r.stdout


def _cfg_for(lab: Lab, repo: Path, name: str) -> Path:
    text = lab.config.read_text().split("\n")
    text[0] = f"repo: {repo}"
    text[1] = f"state_dir: {lab.root / ('state-' + name)}"
    p = lab.root / f"cfg-{name}.yml"
    p.write_text("\n".join(text))
    return p


# -- odd repositories ------------------------------------------------------------------
def _repos(lab: Lab, got: dict[str, Any]) -> None:
    out: dict[str, Any] = {}
    root = lab.root / "repos"
    root.mkdir()
    src = f"file://{lab.repo}"
    # shallow clone
    sh = root / "shallow"
    _git(lab, root, "clone", "-q", "--depth", "1", src, str(sh))
    c = ["--config", _cfg_for(lab, sh, "shallow")]
    out["shallow-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=sh, cwd=sh)
    out["shallow-audit"] = _cli(lab, ALICE, "audit", "--json", *c, repo=sh, cwd=sh)
    out["shallow-show"] = _cli(lab, ALICE, "show", "plans/r-sh", *c, repo=sh, cwd=sh)
    r = _cli(lab, ALICE, "approve", "plans/r-sh", *c, repo=sh, cwd=sh)
    r["facts"] = _commits(lab, r["before"]["head"], sh)
    out["shallow-approve"] = r
    out["shallow-run"] = _cli(lab, None, "run", "--once", *c, repo=sh, cwd=sh, timeout=60)
    # unborn branch: a repository with no commit
    ub = root / "unborn"
    _git(lab, root, "init", "-q", "-b", "main", str(ub))
    (ub / "plans" / "u").mkdir(parents=True)
    (ub / "plans" / "u" / "PLAN.yml").write_text(plan_text("u"))
    c = ["--config", _cfg_for(lab, ub, "unborn")]
    for k in ("status", "audit", "check"):
        args = {
            "status": ["status", "--json"],
            "audit": ["audit", "--json"],
            "check": ["check", "--format", "json"],
        }[k]
        out[f"unborn-{k}"] = _cli(lab, ALICE, *args, *c, repo=ub, cwd=ub)
    out["unborn-show"] = _cli(lab, ALICE, "show", "plans/u", *c, repo=ub, cwd=ub)
    out["unborn-approve"] = _cli(lab, ALICE, "approve", "plans/u", *c, repo=ub, cwd=ub)
    out["unborn-run"] = _cli(lab, None, "run", "--once", *c, repo=ub, cwd=ub, timeout=60)
    # bare repository as the repo
    br = root / "bare.git"
    _git(lab, root, "clone", "-q", "--bare", src, str(br))
    c = ["--config", _cfg_for(lab, br, "bare")]
    out["bare-status"] = _cli(lab, ALICE, "status", "--json", *c, cwd=root, repo=lab.repo)
    r = _cli(lab, ALICE, "approve", "plans/r-sh", *c, cwd=root, repo=lab.repo)
    r["bare_head_same"] = _git(lab, br, "rev-parse", "main")
    out["bare-approve"] = r
    # a .git file (separate git dir)
    gf = root / "gitfile"
    _git(lab, root, "clone", "-q", "--separate-git-dir", str(root / "gf.gitdir"), src, str(gf))
    c = ["--config", _cfg_for(lab, gf, "gitfile")]
    out["gitfile-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=gf, cwd=gf)
    r = _cli(lab, ALICE, "approve", "plans/r-gf", *c, repo=gf, cwd=gf)
    r["facts"] = _commits(lab, r["before"]["head"], gf)
    out["gitfile-approve"] = r
    # a submodule where a plan folder would be
    sm = root / "sm"
    _git(lab, root, "clone", "-q", src, str(sm))
    _git(lab, sm, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "plans/subm")
    _git(lab, sm, "commit", "-q", "-m", "bob: a submodule", who=BOB)
    c = ["--config", _cfg_for(lab, sm, "sm")]
    out["submodule-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=sm, cwd=sm)
    out["submodule-show"] = _cli(lab, ALICE, "show", "plans/subm/plans/r-sm", *c, repo=sm, cwd=sm)
    r = _cli(lab, ALICE, "approve", "plans/subm/plans/r-sm", *c, repo=sm, cwd=sm)
    r["facts"] = _commits(lab, r["before"]["head"], sm)
    r["sub_dirty"] = _git(lab, sm / "plans" / "subm", "status", "--porcelain")
    out["submodule-approve"] = r
    # sparse checkout without the plan being approved
    sp = root / "sparse"
    _git(lab, root, "clone", "-q", src, str(sp))
    _git(lab, sp, "sparse-checkout", "set", "--no-cone", "/*", "!/plans/r-sp/")
    c = ["--config", _cfg_for(lab, sp, "sparse")]
    r = _cli(lab, ALICE, "approve", "plans/r-sp", *c, repo=sp, cwd=sp)
    r["facts"] = _commits(lab, r["before"]["head"], sp)
    r["blob"] = _git(lab, sp, "ls-tree", "HEAD", "plans/r-sp/PLAN.yml")
    out["sparse-approve"] = r
    out["sparse-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=sp, cwd=sp)
    got["repos"] = {**got.get("repos", {}), **out}


def _repos2(lab: Lab, got: dict[str, Any]) -> None:
    out: dict[str, Any] = {}
    root = lab.root / "repos"
    root.mkdir(exist_ok=True)
    src = f"file://{lab.repo}"
    # core.autocrlf=true and core.filemode=false in the repo's own config
    ac = root / "crlf"
    _git(lab, root, "clone", "-q", src, str(ac))
    _git(lab, ac, "config", "core.autocrlf", "true")
    _git(lab, ac, "config", "core.filemode", "false")
    _git(lab, ac, "rm", "-q", "--cached", "-r", ".")
    _git(lab, ac, "reset", "-q", "--hard")
    c = ["--config", _cfg_for(lab, ac, "crlf")]
    r = _cli(lab, ALICE, "approve", "plans/r-cr", *c, repo=ac, cwd=ac)
    r["facts"] = _commits(lab, r["before"]["head"], ac)
    r["diff"] = _git(lab, ac, "diff", "HEAD~1", "HEAD", "--", "plans/r-cr/PLAN.yml")
    r["cr_in_blob"] = "\r" in _git(lab, ac, "show", "HEAD:plans/r-cr/PLAN.yml")
    out["crlf-approve"] = r
    out["crlf-run"] = _cli(
        lab, None, "run", "--once", "--take-over", *c, repo=ac, cwd=ac, timeout=60
    )
    out["crlf-run"]["plan"] = _git(lab, ac, "show", "HEAD:plans/r-cr/PLAN.yml")
    # a repository owned by someone else (safe.directory)
    ow = root / "owned"
    _git(lab, root, "clone", "-q", src, str(ow))
    subprocess.run(["chown", "-R", "65534:65534", str(ow)], check=True)
    c = ["--config", _cfg_for(lab, ow, "owned")]
    out["owned-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=lab.repo, cwd=root)
    r = _cli(lab, ALICE, "approve", "plans/r-ow", *c, repo=lab.repo, cwd=root)
    r["owned_log"] = subprocess.run(
        ["git", "-c", f"safe.directory={ow}", "-C", str(ow), "log", "--format=%s"],
        capture_output=True,
        text=True,
        env=lab.env(),
        check=False,
    ).stdout
    out["owned-approve"] = r
    out["owned-audit"] = _cli(lab, ALICE, "audit", "--json", *c, repo=lab.repo, cwd=root)
    out["owned-status-in"] = _cli(lab, ALICE, "status", "--json", *c, repo=lab.repo, cwd=ow)
    out["owned-show-in"] = _cli(lab, ALICE, "show", "plans/r-ow", *c, repo=lab.repo, cwd=ow)
    # hooks in the repository: fail, hang, rewrite the message, fail after the commit
    hk = root / "hooks"
    _git(lab, root, "clone", "-q", src, str(hk))
    c = ["--config", _cfg_for(lab, hk, "hooks")]
    hooks = hk / ".git" / "hooks"

    def hook(name: str, body: str) -> None:
        for f in hooks.glob("*"):
            if not f.name.endswith(".sample"):
                f.unlink()
        if name:
            (hooks / name).write_text("#!/bin/sh\n" + body)
            (hooks / name).chmod(0o755)

    for k, (name, body, slug) in {
        "hook-fail": ("pre-commit", "echo 'hook says no' >&2\nexit 1\n", "r-h1"),
        "hook-hang": ("pre-commit", "sleep 25\n", "r-h2"),
        "hook-msg": ("commit-msg", "echo 'rewritten by hook' > \"$1\"\n", "r-h3"),
        "hook-post": ("post-commit", "echo 'post fails' >&2\nexit 1\n", "r-h4"),
        "hook-edit": (
            "pre-commit",
            "sed -i 's/attack variant/EDITED BY HOOK/' plans/*/PLAN.yml; git add -A plans\n",
            "r-h5",
        ),
    }.items():
        hook(name, body)
        r = _cli(lab, ALICE, "approve", f"plans/{slug}", *c, repo=hk, cwd=hk, timeout=60)
        r["facts"] = _commits(lab, r["before"]["head"], hk)
        r["show"] = _git(lab, hk, "show", "--stat", "--format=%s%n%b", "HEAD")[-1500:]
        out[k] = r
        _git(lab, hk, "reset", "-q", "--hard", "HEAD", check=False)
    hook("pre-commit", "echo 'hook says no' >&2\nexit 1\n")
    out["hook-run"] = _cli(
        lab, None, "run", "--once", "--take-over", *c, repo=hk, cwd=hk, timeout=60
    )
    out["hook-run"]["log"] = _git(lab, hk, "log", "--format=%an %s", "-5")
    hook("", "")
    # init in odd places
    br = root / "bare2.git"
    _git(lab, root, "clone", "-q", "--bare", src, str(br))
    out["init-bare"] = _cli(lab, None, "init", str(br), cwd=root, repo=lab.repo)
    out["init-bare"]["wrote"] = sorted(p.name for p in br.iterdir())
    f = root / "afile"
    f.write_text("x")
    out["init-file"] = _cli(lab, None, "init", str(f), cwd=root, repo=lab.repo)
    out["init-sha256"] = _cli(
        lab,
        None,
        "init",
        str(root / "s256"),
        cwd=root,
        repo=lab.repo,
        extra={"GIT_DEFAULT_HASH": "sha256"},
    )
    got["repos"] = {**got.get("repos", {}), **out}


# -- config files with odd encodings and sizes -------------------------------------------
def _configs(lab: Lab, got: dict[str, Any]) -> None:
    out: dict[str, Any] = {}
    d = lab.root / "cfgs"
    d.mkdir()
    base = lab.config.read_text()
    deep = "a: " + "[" * 5000 + "]" * 5000 + "\n"
    laughs = (
        "x0: &a0 ["
        + "lol, " * 9
        + "lol]\n"
        + "".join(f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 9))
    )
    variants: dict[str, bytes] = {
        "utf16": base.encode("utf-16"),
        "utf8bom": b"\xef\xbb\xbf" + base.encode(),
        "latin1": (base + "# caf\xe9\n").encode("latin-1"),
        "nul": base.encode() + b"\x00\x00tools: {}\n",
        "huge": base.encode() + b"#" + b"x" * (3 * 1024 * 1024) + b"\n",
        "deep": base.encode() + deep.encode(),
        "laughs": base.encode() + laughs.encode(),
        "empty": b"",
        "tilde": b"~\n",
        "list": b"- repo: /tmp\n",
        "dupkey": base.encode() + b"plans_dir: plans\nplans_dir: other\n",
        "tab": base.replace("identity:", "\tidentity:").encode(),
        "crlf": base.replace("\n", "\r\n").encode(),
        "cr-only": base.replace("\n", "\r").encode(),
        "u2028": base.replace("\n", "\u2028", 1).encode(),
        "bigint": base.encode() + b"limits: {max_actions: 1" + b"0" * 5000 + b"}\n",
        "float-inf": base.encode() + b"limits: {max_actions: .inf}\n",
        "tag": base.encode() + b"plans_dir: !!python/object/apply:os.system ['touch /tmp/r111b']\n",
        "binary-tag": base.encode() + b"plans_dir: !!binary aGVsbG8=\n",
        "timestamp": base.encode() + b"plans_dir: 2001-12-14\n",
    }
    for k, data in variants.items():
        p = d / f"{k}.yml"
        p.write_bytes(data)
        out[k] = _cli(lab, ALICE, "status", "--json", "--config", p, timeout=60)
    # the MCP server given each bad config: it must say so, not hang or die silently
    m = mcp_calls_cfg(lab, d / "nul.yml")
    out["mcp-badcfg"] = m
    # not a file
    out["dir"] = _cli(lab, ALICE, "status", "--config", d)
    fifo = d / "fifo.yml"
    os.mkfifo(fifo)
    out["fifo"] = _cli(lab, ALICE, "status", "--config", fifo, timeout=20)
    out["devzero"] = _cli(lab, ALICE, "status", "--config", "/dev/zero", timeout=30)
    loop = d / "loop.yml"
    loop.symlink_to(loop)
    out["symloop"] = _cli(lab, ALICE, "status", "--config", loop)
    out["env-dir"] = _cli(lab, ALICE, "status", extra={"PLANGATE_CONFIG": str(d)}, cwd=lab.root)
    (d / "plangate.yml").mkdir()
    out["cwd-cfgdir"] = _cli(lab, ALICE, "status", cwd=d)
    got["cfg"] = out


def mcp_calls_cfg(lab: Lab, cfg: Path) -> dict[str, Any]:
    """The MCP server started with a bad --config: a raw stdio exchange (the SDK client would
    wait for ever on a server that says nothing)."""
    env = _env(lab)
    p = subprocess.Popen(
        [PY, "-m", "controller", "mcp", "--config", str(cfg)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=lab.root,
    )
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    try:
        so, se = p.communicate((json.dumps(init) + "\n").encode(), timeout=30)
        return {"rc": p.returncode, "out": (so + se).decode("utf-8", "replace")[-3000:]}
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return {"rc": None, "out": "TIMEOUT"}


# -- the process environment ---------------------------------------------------------------
def _envs(lab: Lab, got: dict[str, Any]) -> None:
    out: dict[str, Any] = {}
    c = ["--config", str(lab.config)]
    gc = lab.root / "gitconfig-odd"

    def glob_cfg(text: str, user: bool = True) -> dict[str, str]:
        who = "[user]\n\tname = Test User\n\temail = test@example.com\n" if user else ""
        gc.write_text(who + text)
        return {"GIT_CONFIG_GLOBAL": str(gc)}

    def approve(k: str, slug: str, extra: dict[str, str], who: Any = ALICE, **kw: Any) -> None:
        r = _cli(lab, who, "approve", f"plans/{slug}", *c, extra=extra, **kw)
        r["facts"] = _commits(lab, r["before"]["head"])
        r["status_line"] = _git(lab, lab.repo, "show", f"HEAD:plans/{slug}/PLAN.yml")[:200]
        r["msg"] = _git(lab, lab.repo, "log", "-1", "--format=%an <%ae>%n%B")
        out[k] = r

    # a person's global git config that changes what porcelain prints
    approve(
        "gcfg-color",
        "e-col",
        glob_cfg(
            "[color]\n\tui = always\n[log]\n\tdecorate = full\n"
            "\tshowSignature = true\n[format]\n\tpretty = oneline\n"
            "[core]\n\tabbrev = 4\n\tquotePath = false\n"
        ),
    )
    out["gcfg-color-status"] = _cli(
        lab,
        ALICE,
        "status",
        "--json",
        *c,
        extra=glob_cfg(
            "[color]\n\tui = always\n[log]\n\tshowSignature = true\n[format]\n\tpretty = oneline\n"
        ),
    )
    out["gcfg-color-audit"] = _cli(
        lab,
        ALICE,
        "audit",
        "--json",
        *c,
        extra=glob_cfg(
            "[color]\n\tui = always\n[log]\n\tshowSignature = true\n\tdecorate = full\n"
        ),
    )
    approve(
        "gcfg-gpgsign",
        "e-gpg",
        glob_cfg("[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = /bin/false\n"),
    )
    approve(
        "gcfg-template",
        "e-tpl",
        glob_cfg("[commit]\n\tverbose = true\n\tcleanup = scissors\n[core]\n\tcommentChar = a\n"),
    )
    approve(
        "gcfg-useconfigonly",
        "e-uco",
        {**glob_cfg("[user]\n\tuseConfigOnly = true\n", user=False), "EMAIL": ""},
        who=None,
    )
    approve(
        "gcfg-latin1",
        "e-l1",
        glob_cfg("[i18n]\n\tcommitEncoding = latin1\n\tlogOutputEncoding = latin1\n"),
        who=("Bj\u00f8rn", "alice@example.com"),
    )
    approve(
        "gcfg-fsmonitor",
        "e-fsm",
        glob_cfg("[core]\n\tfsmonitor = /bin/false\n\tuntrackedCache = true\n"),
    )
    # identity from the environment
    approve("author-empty", "e-ae", {"GIT_AUTHOR_EMAIL": "", "GIT_COMMITTER_EMAIL": ""})
    approve("author-newline", "e-an", {"GIT_AUTHOR_NAME": "Alice\nApproved-By: bob"})
    approve("author-date-garbage", "e-ad", {"GIT_AUTHOR_DATE": "not a date at all"})
    approve(
        "author-date-future",
        "e-af",
        {"GIT_AUTHOR_DATE": "@4102444800 +0000", "GIT_COMMITTER_DATE": "@4102444800 +0000"},
    )
    got["env"] = {**got.get("env", {}), **out}


def _envs2(lab: Lab, got: dict[str, Any]) -> None:
    out: dict[str, Any] = {}
    c = ["--config", str(lab.config)]
    gc = lab.root / "gitconfig-odd"
    gc.write_text("[user]\n\tname = Test User\n\temail = test@example.com\n")

    def approve(k: str, slug: str, extra: dict[str, str], who: Any = ALICE, **kw: Any) -> None:
        r = _cli(lab, who, "approve", f"plans/{slug}", *c, extra=extra, **kw)
        r["facts"] = _commits(lab, r["before"]["head"])
        r["msg"] = _git(lab, lab.repo, "log", "-1", "--format=%an <%ae>%n%B")
        out[k] = r

    # git tracing to the streams git's output is parsed from
    out["trace-stdout-status"] = _cli(
        lab,
        ALICE,
        "status",
        "--json",
        *c,
        extra={"GIT_TRACE": "/dev/stdout", "GIT_TRACE_SETUP": "1"},
    )
    approve(
        "trace-stdout-approve",
        "e-tr",
        {"GIT_TRACE": "/dev/stdout", "GIT_TRACE2_EVENT": "/dev/stdout"},
    )
    # locale and home
    out["lang-c-show"] = _cli(
        lab,
        ALICE,
        "show",
        "plans/e-uni",
        *c,
        extra={"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "ascii:strict"},
    )
    out["lang-c-status"] = _cli(
        lab, ALICE, "status", *c, extra={"LC_ALL": "C", "PYTHONIOENCODING": "ascii:strict"}
    )
    out["lang-bogus"] = _cli(
        lab, ALICE, "status", "--json", *c, extra={"LANG": "xx_YY.BOGUS", "LC_ALL": "xx_YY.BOGUS"}
    )
    approve("home-unset", "e-hu", {}, drop=("HOME", "GIT_CONFIG_GLOBAL"))
    approve("home-missing", "e-hm", {"HOME": "/nonexistent/home", "XDG_CONFIG_HOME": str(gc)})
    out["xdg-file-status"] = _cli(
        lab,
        ALICE,
        "status",
        "--json",
        *c,
        extra={"XDG_CONFIG_HOME": str(gc), "XDG_CACHE_HOME": str(gc), "XDG_STATE_HOME": str(gc)},
    )
    # stdin closed, no TTY
    approve("stdin-closed", "e-sc", {}, wrap="exec 0<&-;")
    out["stdin-closed-mcp"] = _cli(lab, AGENT, "mcp", *c, wrap="exec 0<&-;", timeout=20)
    out["stdin-closed-mcp"]["facts"] = _commits(lab, out["stdin-closed-mcp"]["before"]["head"])
    out["stdin-tty-none-reject"] = _cli(
        lab, ALICE, "reject", "plans/e-rj", "-m", "no", *c, wrap="exec 0<&-;"
    )
    out["stdin-tty-none-reject"]["facts"] = _commits(
        lab, out["stdin-tty-none-reject"]["before"]["head"]
    )
    out["stderr-closed-status"] = _cli(
        lab, ALICE, "status", "--config", "/nonexistent.yml", wrap="exec 2>&-;"
    )
    out["stdin-null-mcp"] = _cli(lab, AGENT, "mcp", *c, timeout=20)
    out["stdin-closed-validate"] = _cli(lab, AGENT, "validate", "-", *c, wrap="exec 0<&-;")
    r = _cli(lab, AGENT, "freeze", "plans/e-fz", *c, wrap="exec 0<&-;")
    r["facts"] = _commits(lab, r["before"]["head"])
    out["stdin-closed-freeze"] = r
    out["trace-stdout-audit"] = _cli(
        lab, ALICE, "audit", "--json", *c, extra={"GIT_TRACE": "/dev/stdout"}
    )
    out["trace-stdout-show"] = _cli(
        lab, ALICE, "show", "plans/e-uni", *c, extra={"GIT_TRACE_PERFORMANCE": "/dev/stdout"}
    )
    m = mcp_calls(lab, [sub("e-trs", "e-trs")], extra={"GIT_TRACE": "/dev/stdout"})
    out["trace-stdout-submit"] = m
    m = mcp_calls(
        lab,
        [
            ("validate", {"plan": plan_text("e-bi", params="n: 1" + "0" * 5000)}),
            sub("e-bi", "e-bi", params="n: 1" + "0" * 5000),
        ],
    )
    out["bigint-mcp"] = m
    lab.write("e-bi2", plan_text("e-bi2", params="n: 1" + "0" * 5000))
    out["bigint-validate"] = _cli(lab, AGENT, "validate", "--json", "plans/e-bi2/PLAN.yml", *c)
    (lab.repo / "plans" / "e-bi2" / "PLAN.yml").unlink()
    (lab.repo / "plans" / "e-bi2").rmdir()
    # PLANGATE_* odd values
    out["cfg-env-nul"] = _cli(
        lab, ALICE, "status", extra={"PLANGATE_CONFIG": "a\x01b"}, cwd=lab.root
    )
    out["cfg-env-long"] = _cli(
        lab, ALICE, "status", extra={"PLANGATE_CONFIG": "x" * 5000}, cwd=lab.root
    )
    out["cfg-arg-long"] = _cli(lab, ALICE, "status", "--config", "/" + "y/" * 3000 + "c.yml")
    out["show-long"] = _cli(lab, ALICE, "show", "plans/" + "z" * 5000, *c)
    out["approve-nul"] = _cli(lab, ALICE, "approve", "plans/e-\x01", *c)
    out["approve-dir"] = _cli(lab, ALICE, "approve", "plans", *c)
    out["approve-repo-root"] = _cli(lab, ALICE, "approve", ".", *c)
    out["approve-log"] = _cli(lab, ALICE, "approve", "plans/e-uni/EXECUTION_LOG.md", *c)
    got["env"] = {**got.get("env", {}), **out}


# -- MCP: odd, huge and concurrent arguments, cancelled requests --------------------------
def _mcp(lab: Lab, got: dict[str, Any]) -> None:
    out: dict[str, Any] = {}
    got["mcp"] = out
    t0 = time.time()
    big = plan_text("m-big", params='pad: "' + "p" * (3 * 1024 * 1024) + '"\n')
    out[f"t-{len(out)}"] = time.time() - t0
    out["odd-args"] = mcp_calls(
        lab,
        [
            ("validate", {"plan": 123}),
            ("validate", {"plan": None}),
            ("validate", {"plan": ["a"]}),
            ("validate", {}),
            ("validate", {"plan": plan_text("m-v"), "format": "nope"}),
            ("validate", {"plan": plan_text("m-v"), "bogus": 1}),
            ("submit", {"plan": plan_text("m-a"), "slug": 7}),
            ("submit", {"plan": plan_text("m-a"), "slug": ""}),
            ("submit", {"plan": plan_text("m-a"), "slug": "a\x00b"}),
            ("submit", {"plan": plan_text("m-a"), "slug": "x" * 5000}),
            ("submit", {"plan": plan_text("m-a"), "slug": "../escape"}),
            ("submit", {"plan": plan_text("m-a"), "slug": "m-a", "pull_request": "yes"}),
            ("submit", {"plan": plan_text("m-a"), "slug": "m-a", "note": "n" * 200000}),
            ("status", {"path": 5}),
            ("status", {"path": "x" * 100000}),
            ("log", {"path": "plans/none-such"}),
            ("log", {}),
            ("wait", {"path": "plans/m-w", "timeout": -5}),
            ("wait", {"path": "plans/m-w", "timeout": "soon"}),
            ("wait", {"path": "plans/m-w", "timeout": float("nan")}),
            ("approve", {"path": "plans/m-w"}),
            ("nosuchtool", {}),
        ],
    )
    out[f"t-{len(out)}"] = time.time() - t0
    out["huge"] = mcp_calls(
        lab, [("validate", {"plan": big}), ("submit", {"plan": big, "slug": "m-big"})]
    )
    out[f"t-{len(out)}"] = time.time() - t0
    out["huge-actions"] = mcp_calls(
        lab,
        [
            (
                "validate",
                {
                    "plan": plan_text(
                        "m-many",
                        extra_actions="".join(
                            f"  - id: {i}\n    tool: rec\n    why: w\n    params: {{tag: t}}\n"
                            for i in range(2, 3000)
                        ),
                    )
                },
            )
        ],
    )
    # concurrent: 30 validates, 8 submits of distinct slugs, statuses and waits at once
    seq: list[Any] = [("validate", {"plan": plan_text(f"m-c{i}")}) for i in range(30)]
    seq += [sub(f"m-p{i}", f"m-p{i}") for i in range(8)]
    seq += [("status", {}) for _ in range(5)]
    seq += [("wait", {"path": "plans/m-w", "timeout": 1}) for _ in range(5)]
    out[f"t-{len(out)}"] = time.time() - t0
    out["together"] = mcp_calls(lab, seq, mode="together")
    # cancelled: a wait, a submit and a validate of a big plan, then a status still answered
    out[f"t-{len(out)}"] = time.time() - t0
    out["cancel"] = mcp_calls(
        lab,
        [
            ("wait", {"path": "plans/m-w", "timeout": 60}),
            sub("m-cx", "m-cx"),
            ("validate", {"plan": big}),
        ],
        mode="cancel",
    )
    out["cancel"]["file"] = (lab.repo / "plans" / "m-cx" / "PLAN.yml").exists()
    out["cancel"]["committed"] = _git(lab, lab.repo, "ls-tree", "HEAD", "plans/m-cx/PLAN.yml")
    # an agent's submit that says it is approved, or approves an existing plan by rewriting it
    frozen = lab.read("m-w")
    approved = frozen.replace("status: pending_approval", "status: approved", 1)
    m = mcp_calls(
        lab,
        [("submit", {"plan": approved, "slug": "m-w"}), sub("m-new", "m-new", status="approved")],
    )
    out["self-approve"] = m
    lab.run()
    out["self-approve"]["status_after_run"] = {
        s: _git(lab, lab.repo, "show", f"HEAD:plans/{s}/PLAN.yml", check=False)[:400]
        for s in ("m-w", "m-new")
    }
    out["self-approve"]["ran"] = lab.log.read_text() if lab.log.exists() else ""
    # raw stdio: a request line of 20 MB and a stream of garbage
    out[f"t-{len(out)}"] = time.time() - t0
    out["raw-huge-line"] = _raw_mcp(lab, [b"{" + b'"a":1,' * (300 * 1024) + b'"b":1}'])
    out[f"t-{len(out)}"] = time.time() - t0
    out["raw-binary"] = _raw_mcp(lab, [b"\xff\xfe\x00garbage", b"\x00" * 1000])
    got["mcp"] = out


def _raw_mcp(lab: Lab, lines: list[bytes]) -> dict[str, Any]:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ping = {"jsonrpc": "2.0", "id": 99, "method": "tools/list"}
    data = (
        b"\n".join(
            [
                json.dumps(init).encode(),
                json.dumps(done).encode(),
                *lines,
                json.dumps(ping).encode(),
            ]
        )
        + b"\n"
    )
    p = subprocess.Popen(
        [PY, "-m", "controller", "mcp", "--config", str(lab.config)],
        env=_env(lab),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=lab.root,
    )
    try:
        so, se = p.communicate(data, timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        so, se = p.communicate()
        return {"rc": None, "out": "TIMEOUT", "err": se.decode("utf-8", "replace")[-2000:]}
    return {
        "rc": p.returncode,
        "out": so.decode("utf-8", "replace")[-3000:],
        "err": se.decode("utf-8", "replace")[-2000:],
        "ids": [json.loads(x).get("id") for x in so.splitlines() if x.strip().startswith(b"{")],
    }


# -- the page: methods, paths, queries, huge headers, slow clients ---------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http(port: int, raw: bytes, timeout: float = 10) -> dict[str, Any]:
    t0 = time.time()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(raw)
            chunks = []
            while True:
                try:
                    b = s.recv(65536)
                except TimeoutError:
                    chunks.append(b"<TIMEOUT>")
                    break
                if not b:
                    break
                chunks.append(b)
                if sum(map(len, chunks)) > 4 * 1024 * 1024:
                    break
        body = b"".join(chunks)
    except OSError as e:
        body = f"<{type(e).__name__}: {e}>".encode()
    text = body.decode("utf-8", "replace")
    first = text.split("\r\n", 1)[0]
    code = int(first.split()[1]) if first.startswith("HTTP/") and len(first.split()) > 1 else None
    return {"code": code, "head": text[:600], "text": text[-2500:], "secs": time.time() - t0}


def _req(method: str, path: str, extra: str = "") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n".encode()


def _page(lab: Lab, got: dict[str, Any]) -> None:
    out: dict[str, Any] = {}
    port = _free_port()
    cfg = lab.root / "cfg-page.yml"
    cfg.write_text(lab.config.read_text() + f"ui: {{listen: '127.0.0.1:{port}'}}\n")
    errlog = open(lab.root / "daemon.err", "wb")  # noqa: SIM115 - closed below
    d = subprocess.Popen(
        [PY, "-m", "controller", "run", "--config", str(cfg)],
        env=_env(lab),
        stdout=subprocess.DEVNULL,
        stderr=errlog,
        cwd=lab.root,
    )
    try:
        ok = until(lambda: _http(port, _req("GET", "/api/"), 3)["code"] == 200, timeout=60)
        out["ready"] = ok
        head = lab.head()
        marker = lab.root / "INJECTED"
        lab.put("notes/secret.env", "TOKEN=never-committed-r111b\n")
        lab.git("add", "notes/secret.env")
        staged = lab.git("rev-parse", ":notes/secret.env").strip()
        lab.git("rm", "-q", "--cached", "notes/secret.env")
        (lab.repo / "notes" / "secret.env").unlink()
        tree = lab.git("rev-parse", "HEAD^{tree}").strip()
        reqs: dict[str, bytes] = {
            "commit-staged-blob": _req("GET", f"/commit/{staged}"),
            "commit-staged-prefix": _req("GET", f"/commit/{staged[:6]}"),
            "commit-tree": _req("GET", f"/commit/{tree}"),
            "get-root": _req("GET", "/"),
            "head-root": _req("HEAD", "/"),
            "options-root": _req("OPTIONS", "/"),
            "post-root": _req("POST", "/", "Content-Length: 3\r\n") + b"abc",
            "delete-plan": _req("DELETE", "/plan/plans/p-a"),
            "trace": _req("TRACE", "/"),
            "connect": b"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n",
            "bad-method": _req("G\x01T", "/"),
            "http09": b"GET /\r\n",
            "no-version": b"GET / \r\n\r\n",
            "http2-preface": b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            "abs-uri": _req("GET", "http://evil.example/api/"),
            "star": _req("GET", "*"),
            "dotdot": _req("GET", "/plan/../../../../etc/passwd"),
            "dotdot-enc": _req("GET", "/plan/%2e%2e%2f%2e%2e%2fetc%2fpasswd"),
            "plan-enc-slash": _req("GET", "/api/plan/plans%2Fp-a"),
            "plan-nul": _req("GET", "/api/plan/plans/p-a%00"),
            "plan-bad-utf8": _req("GET", "/api/plan/plans/%ff%fe"),
            "plan-long": _req("GET", "/api/plan/" + "a" * 60000),
            "commit-opt": _req("GET", f"/commit/--output={marker}"),
            "commit-range": _req("GET", f"/commit/{head}..HEAD"),
            "commit-rev": _req("GET", "/commit/HEAD~1"),
            "commit-path": _req("GET", "/commit/HEAD:plans"),
            "commit-ref": _req("GET", "/commit/main"),
            "commit-short": _req("GET", f"/commit/{head[:7]}"),
            "commit-zero": _req("GET", "/commit/" + "0" * 40),
            "commit-blob": _req("GET", "/commit/" + lab.git("rev-parse", "HEAD:README").strip()),
            "query-neg": _req("GET", "/?status=pending_approval&page=-1"),
            "query-huge-num": _req("GET", "/api/?page=" + "9" * 400),
            "query-float": _req("GET", "/api/?page=1e9&status=%00"),
            "query-repeat": _req("GET", "/api/?" + "&".join(["status=x"] * 3000)),
            "query-huge": _req("GET", "/api/?q=" + "q" * 200000),
            "header-huge": _req("GET", "/api/", "X-Big: " + "h" * 300000 + "\r\n"),
            "headers-many": _req("GET", "/api/", "".join(f"X-{i}: v\r\n" for i in range(2000))),
            "header-nul": _req("GET", "/api/", "X-N: a\x00b\r\n"),
            "host-bad": b"GET /api/ HTTP/1.1\r\nHost: \xff\xfe\r\nConnection: close\r\n\r\n",
            "auth-garbage": _req(
                "GET", "/api/", "Authorization: Bearer \xff" + "a" * 5000 + "\r\n"
            ),
            "range": _req("GET", "/", "Range: bytes=-1,0-0,5-1\r\n"),
            "expect": _req("GET", "/api/", "Expect: 100-continue\r\nContent-Length: 5\r\n"),
            "te-chunked": _req("GET", "/api/", "Transfer-Encoding: chunked\r\n") + b"zz\r\n",
            "cl-neg": _req("GET", "/api/", "Content-Length: -5\r\n"),
            "cl-huge": _req("GET", "/api/", "Content-Length: 99999999999999999999\r\n"),
            "favicon": _req("GET", "/favicon.ico"),
            "api-audit": _req("GET", "/api/audit"),
            "metrics-on-page": _req("GET", "/metrics"),
        }
        for k, raw in reqs.items():
            out[k] = _http(port, raw)
        out["commit-opt"]["marker"] = marker.exists() or any(
            p.name.startswith("INJECTED") for p in lab.root.rglob("INJECTED*")
        )
        # slow clients: 12 connections that send half a request line and stall
        idle = []
        for _ in range(12):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /api/ HTTP/1.1\r\nHost: x\r\n")
            idle.append(s)
        time.sleep(0.5)
        out["slow-clients"] = _http(port, _req("GET", "/api/"), timeout=20)
        for s in idle:
            s.close()
        # pipelined: two requests in one write, keep-alive
        out["pipelined"] = _http(
            port, _req("GET", "/api/").replace(b"close", b"keep-alive") + _req("GET", "/nope")
        )
        out["after"] = _http(port, _req("GET", "/api/"))
        out["alive"] = d.poll() is None
    finally:
        d.terminate()
        try:
            d.wait(20)
        except subprocess.TimeoutExpired:
            d.kill()
            d.wait()
        errlog.close()
    err = (lab.root / "daemon.err").read_text(errors="replace")
    out["daemon_err"] = [
        ln
        for ln in err.splitlines()
        if "Traceback" in ln or "internal" in ln or '"level": "error"' in ln
    ][:20]
    got["page"] = out


SLUGS = [
    "r-sh",
    "r-gf",
    "r-sm",
    "r-sp",
    "r-cr",
    "r-ow",
    "r-h1",
    "r-h2",
    "r-h3",
    "r-h4",
    "r-h5",
    "e-col",
    "e-gpg",
    "e-tpl",
    "e-uco",
    "e-l1",
    "e-fsm",
    "e-ae",
    "e-an",
    "e-ad",
    "e-af",
    "e-tr",
    "e-hu",
    "e-hm",
    "e-sc",
    "e-rj",
    "e-fz",
    "m-w",
    "p-a",
]

GROUPS = {
    "L1": (("repos", _repos),),
    "L6": (("repos", _repos2),),
    "L7": (("env", _envs2),),
    "L2": (("cfg", _configs),),
    "L5": (("env", _envs),),
    "L3": (("mcp", _mcp),),
    "L4": (("page", _page),),
}


def _build_one(root: Path, group: str) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    got: dict[str, Any] = {}
    t0 = time.time()
    lab = Lab(root / "lab", extra=AGENT_CFG)
    for s in SLUGS:
        lab.write(s, plan_text(s))
    lab.write("e-uni", plan_text("e-uni", name="Caf\u00e9 \u2615 r\u00e9sum\u00e9 \u00f1"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for name, step in GROUPS[group]:
        try:
            step(lab, got)
        except Exception as e:  # one step's failure is its ids' failure, not the lab's
            import traceback

            got[f"fail-{name}"] = f"{type(e).__name__}: {e}" + traceback.format_exc()[-1500:]
        got[f"t-{name}"] = time.time() - t0
    return got


def _build(root: Path) -> Labs:
    t0 = time.time()
    labs = build_all(root, {g: (lambda r, g=g: _build_one(r, g)) for g in GROUPS}, workers=7)
    got: dict[str, Any] = {}
    for part in labs.got.values():
        for key, value in part.items():
            if isinstance(value, dict) and isinstance(got.get(key), dict):
                got[key] = {**got[key], **value}
            else:
                got[key] = value
    got["t"] = time.time() - t0
    if os.environ.get("R111B_DUMP"):
        Path(os.environ["R111B_DUMP"]).write_text(json.dumps(got, default=str, indent=1))
    return Labs(got)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Labs:
    return shared(tmp_path_factory, "r111surf-atk111b", _build)  # type: ignore[arg-type]


def _g(lab: Any) -> dict[str, Any]:
    return lab.got  # type: ignore[no-any-return]


def _no_internal(text: str) -> None:
    assert "internal error" not in text and "Traceback" not in text, text[-800:]
    assert "unexpected exception" not in text.lower(), text[-800:]
    assert "E_INTERNAL" not in text, text[-800:]


def _coded(r: dict[str, Any], written: bool = False) -> None:
    assert r["rc"] not in (0, None), r["out"][-800:]
    _no_internal(r["out"])
    assert "E_" in r["out"] and "remedy" in r["out"], r["out"][-800:]
    if not written:
        assert r["after"] == r["before"], (r["before"], r["after"])
        assert not r["lock"], "index.lock left behind"


def _ok(r: dict[str, Any]) -> None:
    assert r["rc"] == 0, r["out"][-800:]
    _no_internal(r["out"])


def _one(r: dict[str, Any], who: str, files: list[str]) -> None:
    _ok(r)
    assert r["facts"] == [{"parents": 1, "author": who, "files": files}], r["facts"]
    assert r["after"]["tree"] == r["before"]["tree"], (r["before"], r["after"])
    assert not r["lock"], "index.lock left behind"


def xf(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 111: {cls}: {what}")


# -- odd repositories ------------------------------------------------------------------
REPO = {
    "shallow-status": "ok",
    "shallow-show": "ok",
    "shallow-audit": "coded",
    "shallow-run": "coded",
    "shallow-approve": "one",
    "unborn-status": "coded",
    "unborn-audit": "coded",
    "unborn-check": "coded",
    "unborn-approve": "coded",
    "unborn-run": "coded",
    "unborn-show": "ok",
    "bare-status": "ok",
    "bare-approve": "coded",
    "gitfile-status": "ok",
    "gitfile-approve": "one",
    "submodule-status": "ok",
    "submodule-show": "coded",
    "submodule-approve": "coded",
    "sparse-approve": "coded",
    "sparse-status": "ok",
    "crlf-approve": "one",
    "crlf-run": "ok",
    "owned-status": "owned",
    "owned-status-in": "owned",
    "owned-approve": "owned",
    "owned-audit": "owned",
    "owned-show-in": "ok",
    "hook-fail": "one",
    "hook-hang": "one",
    "hook-msg": "one",
    "hook-post": "one",
    "hook-edit": "one",
    "hook-run": "ok",
    "init-bare": "init",
    "init-file": "coded",
    "init-sha256": "coded",
}
REPO_BROKE: dict[str, Any] = {}


@pytest.mark.parametrize("k", cases([f"repo:{k}" for k in REPO], list(REPO), REPO_BROKE))
def test_odd_repository(lab: Labs, k: str) -> None:
    """init/check/status/show/audit/approve/run in a shallow clone, an unborn branch, a bare
    repository, a .git file, a submodule where a plan folder would be, a sparse checkout that
    leaves the plan out, core.autocrlf, a repository another user owns, the person's own hooks
    (failing, hanging, rewriting the message or the plan): a coded answer that names the real
    cause and writes nothing, or one commit of one file by the person."""
    assert "fail-repos" not in _g(lab), _g(lab).get("fail-repos")
    r = _g(lab)["repos"][k]
    kind = REPO[k]
    if kind == "ok":
        _ok(r)
    elif kind == "coded" and k == "submodule-show":  # show's problem line carries its remedy
        assert r["rc"] == 1 and "E_UNSAFE_PATH" in r["out"], r["out"][-600:]
        assert "commit the plan as a regular file" in r["out"], r["out"][-600:]
    elif kind == "coded":
        _coded(r, written=k.endswith("-run"))
    elif kind == "one":
        slug = {
            "shallow-approve": "r-sh",
            "gitfile-approve": "r-gf",
            "crlf-approve": "r-cr",
            "hook-fail": "r-h1",
            "hook-hang": "r-h2",
            "hook-msg": "r-h3",
            "hook-post": "r-h4",
            "hook-edit": "r-h5",
        }[k]
        _one(r, ALICE[1], [f"plans/{slug}/PLAN.yml"])
        # a hang guard, never a timing assert (the CLI's own guard kills a hang at 180 s)
        assert r["secs"] < 150, r["secs"]
        if k.startswith("hook-"):
            assert "Plan-Status: approved" in r["show"] and "EDITED" not in r["show"], r["show"]
            assert "plans/" + slug + "/PLAN.yml | 2 +-" in r["show"], r["show"]
        if k == "crlf-approve":
            assert not r["cr_in_blob"], "CR LF committed"
            assert r["diff"].count("\n-") == 2 and "+  status: approved" in r["diff"], r["diff"]
    elif kind == "owned":
        _coded(r)
        low = r["out"].lower()
        assert "safe.directory" in low or "owner" in low or "dubious" in low, r["out"][-600:]
    elif kind == "init":
        _coded(r, written=True)
        assert "plangate.yml" not in r["wrote"], r["wrote"]
    if k == "submodule-approve":
        assert r["facts"] == [] and r["sub_dirty"] == "", r
    if k == "sparse-approve":
        assert r["facts"] == [] and "on the branch but not in this working tree" in r["out"], r
    if k == "unborn-approve":
        assert "not committed" in r["out"], r["out"]


# -- config files --------------------------------------------------------------------------
CFG_OK = {"utf8bom", "huge", "crlf", "cr-only"}
CFG = [
    "utf16",
    "utf8bom",
    "latin1",
    "nul",
    "huge",
    "deep",
    "laughs",
    "empty",
    "tilde",
    "list",
    "dupkey",
    "tab",
    "crlf",
    "cr-only",
    "u2028",
    "bigint",
    "float-inf",
    "tag",
    "binary-tag",
    "timestamp",
    "mcp-badcfg",
    "dir",
    "fifo",
    "devzero",
    "symloop",
    "env-dir",
    "cwd-cfgdir",
]


@pytest.mark.parametrize("k", cases([f"cfg:{k}" for k in CFG], CFG, {}))
def test_config_file(lab: Labs, k: str) -> None:
    """A config in UTF-16, Latin-1, with NULs, 3 MB, nested 5000 deep, a billion laughs, a
    python tag, a 5000-digit number, a FIFO, /dev/zero, a symlink loop, a folder: exit 2 with
    E_CONFIG_INVALID (or E_GIT for the folder it defaults to) naming the file and, for a
    value, its line; never a hang; a UTF-8 BOM, CR LF or CR line ends are read as the text."""
    assert "fail-cfg" not in _g(lab), _g(lab).get("fail-cfg")
    r = _g(lab)["cfg"][k]
    if k in CFG_OK:
        _ok(r)
        assert json.loads(r["stdout"]), r["out"][:300]
        return
    _no_internal(r["out"])
    assert r["rc"] == 2, (r["rc"], r["out"][-600:])
    assert "E_CONFIG_INVALID" in r["out"] or "E_GIT" in r["out"], r["out"][-600:]
    assert "remedy" in r["out"], r["out"][-600:]
    if k == "mcp-badcfg":
        return
    assert r["secs"] < 150, r["secs"]  # a hang guard, never a timing assert
    if k in ("bigint", "float-inf", "timestamp", "dupkey", "tag", "binary-tag", "deep", "laughs"):
        assert re.search(r"\.yml:\d+", r["out"]), r["out"][-600:]
        assert "sys.set_int_max_str_digits" not in r["out"], r["out"][-600:]


# -- the process environment -----------------------------------------------------------------
ENV = {
    "gcfg-color": "one",
    "gcfg-color-status": "ok",
    "gcfg-color-audit": "ok",
    "gcfg-gpgsign": "coded",
    "gcfg-template": "one",
    "gcfg-useconfigonly": "coded",
    "gcfg-latin1": "one",
    "gcfg-fsmonitor": "one",
    "author-empty": "coded",
    "author-newline": "one",
    "author-date-garbage": "coded",
    "author-date-future": "one",
    "trace-stdout-status": "trace",
    "trace-stdout-approve": "trace",
    "trace-stdout-audit": "trace",
    "trace-stdout-show": "trace",
    "trace-stdout-submit": "trace-mcp",
    "lang-c-show": "ok",
    "lang-c-status": "ok",
    "lang-bogus": "ok",
    "home-unset": "one",
    "home-missing": "one",
    "xdg-file-status": "ok",
    "stdin-closed": "one",
    "stdin-closed-mcp": "mcp-closed",
    "stdin-null-mcp": "ok",
    "stdin-tty-none-reject": "one",
    "stdin-closed-validate": "coded",
    "stdin-closed-freeze": "ok",
    "stderr-closed-status": "rc2",
    "bigint-validate": "bigint",
    "bigint-mcp": "bigint-mcp",
    "cfg-env-nul": "coded",
    "cfg-env-long": "coded",
    "cfg-arg-long": "coded",
    "show-long": "coded",
    "approve-nul": "coded",
    "approve-dir": "coded",
    "approve-repo-root": "coded",
    "approve-log": "coded",
}
ENV_BROKE: dict[str, Any] = {}
SLUG_OF = {
    "gcfg-color": "e-col",
    "gcfg-template": "e-tpl",
    "gcfg-latin1": "e-l1",
    "gcfg-fsmonitor": "e-fsm",
    "author-newline": "e-an",
    "author-date-future": "e-af",
    "home-unset": "e-hu",
    "home-missing": "e-hm",
    "stdin-closed": "e-sc",
    "stdin-tty-none-reject": "e-rj",
}


@pytest.mark.parametrize("k", cases([f"env:{k}" for k in ENV], list(ENV), ENV_BROKE))
def test_environment(lab: Labs, k: str) -> None:
    """A person's global git config (colour, signatures shown, oneline format, gpgsign with a
    failing gpg, verbose commits, useConfigOnly without a user, latin1 commit encoding, an
    fsmonitor), identities and dates from the environment, git's trace sent to stdout, LANG=C
    with ASCII output, no HOME, XDG folders that are files, stdin closed or /dev/null, stderr
    closed, odd PLANGATE_CONFIG and paths: one commit of one file, or a coded answer that names
    the real cause and writes nothing."""
    assert "fail-env" not in _g(lab), _g(lab).get("fail-env")
    r = _g(lab)["env"][k]
    kind = ENV[k]
    if kind == "one":
        who = ALICE[1]
        _one(r, who, [f"plans/{SLUG_OF[k]}/PLAN.yml"])
        if k == "author-newline":
            assert "\nApproved-By: bob" not in r["msg"], r["msg"]
    elif kind == "ok":
        _ok(r)
        if k in ("gcfg-color-status", "gcfg-color-audit", "lang-bogus", "xdg-file-status"):
            assert json.loads(r["stdout"]), r["out"][:300]
        assert "\x1b[" not in r["stdout"], r["stdout"][:300]
    elif kind in ("coded", "rc2"):
        if kind == "rc2":
            assert r["rc"] == 2 and "Traceback" not in r["out"], r["out"][-600:]
        else:
            _coded(r)
        if "facts" in r:
            assert r["facts"] == [], r["facts"]
    elif kind == "trace":
        _no_internal(r["out"])
        assert r["rc"] == 0 or "GIT_TRACE" in r["out"], r["out"][-600:]
    elif kind == "trace-mcp":
        assert r["fail"] is None, r
        (c,) = r["calls"]
        assert not c["error"] or "GIT_TRACE" in c["text"], c["text"][:600]
    elif kind == "mcp-closed":
        _no_internal(r["out"])
        assert r["rc"] in (0, 2) and r["facts"] == [], r["out"][-600:]
    elif kind == "bigint":
        _no_internal(r["out"])
        (e,) = json.loads(r["stdout"].splitlines()[0])["errors"]
        assert e["line"] is not None and "set_int_max_str_digits" not in e["message"], e
    elif kind == "bigint-mcp":
        assert r["fail"] is None and r["facts"] == [], r
        for c in r["calls"]:
            assert "E_PARSE_NONJSON" not in c["text"] and re.search(r'"line": \d', c["text"]), c[
                "text"
            ][:600]


# -- MCP -------------------------------------------------------------------------------------
ARGS = [
    "validate-int",
    "validate-null",
    "validate-list",
    "validate-missing",
    "validate-format",
    "validate-extra",
    "submit-slug-int",
    "submit-slug-empty",
    "submit-slug-nul",
    "submit-slug-long",
    "submit-slug-dotdot",
    "submit-pr-str",
    "submit-note-huge",
    "status-int",
    "status-long",
    "log-none",
    "log-missing",
    "wait-negative",
    "wait-str",
    "wait-nan",
    "call-approve",
    "call-unknown",
]
ARGS_OK = {"validate-format", "validate-extra", "submit-note-huge", "wait-negative"}
ARGS_BROKE: dict[str, Any] = {}
MCP = [
    "huge-validate",
    "huge-submit",
    "huge-actions",
    "together",
    "cancel",
    "self-approve",
    "self-approve-new",
    "raw-huge-line",
    "raw-binary",
    "no-approve-tool",
]


def _call_coded(c: dict[str, Any]) -> None:
    _no_internal(c["text"])
    assert c["error"], c["text"][:600]
    assert '"code": "E_' in c["text"] and '"remedy"' in c["text"], c["text"][:600]


@pytest.mark.parametrize("k", cases([f"mcp:{k}" for k in ARGS], ARGS, ARGS_BROKE))
def test_mcp_odd_argument(lab: Labs, k: str) -> None:
    """Each tool given a wrong type, a missing or extra argument, a NUL, 5000 or 100000
    characters, `..`, NaN, a negative timeout, or a tool that does not exist (`approve`): a
    coded E_ answer with a remedy, in one session that goes on; the one valid submit (a
    200000-character note) is one commit of one file by the agent."""
    assert "fail-mcp" not in _g(lab), _g(lab).get("fail-mcp")
    m = _g(lab)["mcp"]["odd-args"]
    assert m["fail"] is None and len(m["calls"]) == len(ARGS), m
    c = m["calls"][ARGS.index(k)]
    if k in ARGS_OK:
        _no_internal(c["text"])
        assert not c["error"] and c["data"], c["text"][:600]
        if k == "validate-format":
            assert c["data"]["errors"][0]["code"] == "E_USAGE", c["data"]
        if k == "submit-note-huge":
            assert m["facts"] == [
                {"parents": 1, "author": AGENT[1], "files": ["plans/m-a/PLAN.yml"]}
            ], m["facts"]
        return
    _call_coded(c)


@pytest.mark.parametrize("k", cases([f"mcp:{k}" for k in MCP], MCP, {}))
def test_mcp(lab: Labs, k: str) -> None:
    """A 3 MB plan and one of 3000 actions (E_PLAN_TOO_LARGE, E_LIMIT_EXCEEDED, nothing
    committed); 30 validates, 8 submits, 5 statuses and 5 waits at once (each answered, 8
    one-file commits); a wait, a submit and a big validate cancelled (the session answers the
    next call at once, the submit whole or not at all); an agent's submit of a plan as
    `approved` (new or over a frozen one) never approves or runs it; raw lines of 2 MB or
    binary get JSON-RPC errors and the session goes on; no tool approves."""
    assert "fail-mcp" not in _g(lab), _g(lab).get("fail-mcp")
    g = _g(lab)["mcp"]
    if k.startswith("huge-") and k != "huge-actions":
        m = g["huge"]
        c = m["calls"][0 if k == "huge-validate" else 1]
        assert "E_PLAN_TOO_LARGE" in c["text"] and m["facts"] == [], c["text"][:400]
        _no_internal(c["text"])
    elif k == "huge-actions":
        (c,) = g["huge-actions"]["calls"]
        assert "E_LIMIT_EXCEEDED" in c["text"], c["text"][:400]
    elif k == "together":
        m = g["together"]
        assert m["fail"] is None and len(m["calls"]) == 48, m["fail"]
        for c in m["calls"]:
            _no_internal(c["text"])
            assert not c["error"], c["text"][:400]
        files = sorted(f for row in m["facts"] for f in row["files"])
        assert files == [f"plans/m-p{i}/PLAN.yml" for i in range(8)], m["facts"]
        assert all(r["parents"] == 1 and r["author"] == AGENT[1] for r in m["facts"]), m["facts"]
        assert not m["lock"] and m["after"]["tree"] == m["before"]["tree"], m
    elif k == "cancel":
        m = g["cancel"]
        assert m["fail"] is None and m["after_cancel_s"] < 5, m
        _no_internal(m["err"] + m["calls"][-1]["text"])
        assert not m["calls"][-1]["error"], m["calls"][-1]
        assert m["facts"] in (
            [],
            [{"parents": 1, "author": AGENT[1], "files": ["plans/m-cx/PLAN.yml"]}],
        ), m["facts"]
        assert bool(m["facts"]) == bool(m["committed"]) and not m["lock"], m
    elif k.startswith("self-approve"):
        m = g["self-approve"]
        slug = "m-w" if k == "self-approve" else "m-new"
        text = m["status_after_run"][slug]
        assert "status: approved" not in text and "approved" not in "".join(text.split("\n")[:4])
        assert f'"{slug}"' not in m["ran"], m["ran"]
        if k == "self-approve-new":
            _call_coded(m["calls"][1])
    elif k.startswith("raw-"):
        r = g[k]
        assert r["rc"] == 0 and r["ids"][0] == 1 and r["ids"][-1] == 99, r
        _no_internal(r["err"] + r["out"])
    else:
        m = g["odd-args"]
        assert set(m["tools"]) == {"catalog", "validate", "submit", "status", "log", "wait"}


# -- the page -------------------------------------------------------------------------------
PAGE = {
    "get-root": 200,
    "head-root": 200,
    "options-root": 405,
    "post-root": 405,
    "delete-plan": 405,
    "trace": 405,
    "connect": 405,
    "bad-method": 405,
    "http09": 0,
    "no-version": 0,
    "http2-preface": 0,
    "abs-uri": 200,
    "star": 404,
    "dotdot": 404,
    "dotdot-enc": 404,
    "plan-enc-slash": 200,
    "plan-nul": 404,
    "plan-bad-utf8": 404,
    "plan-long": 404,
    "commit-opt": 404,
    "commit-range": 404,
    "commit-rev": 404,
    "commit-path": 404,
    "commit-ref": 404,
    "commit-short": 200,
    "commit-zero": 404,
    "commit-blob": 404,
    "commit-tree": 404,
    "commit-staged-blob": 404,
    "commit-staged-prefix": 404,
    # round 126 (api-overview-query-not-checked): a query that does not fit is 400 E_USAGE
    "query-neg": 400,
    "query-huge-num": 400,
    "query-float": 400,
    "query-repeat": 400,
    "query-huge": 414,
    "header-huge": 431,
    "headers-many": 431,
    "header-nul": 200,
    "host-bad": 200,
    "auth-garbage": 200,
    "range": 200,
    "expect": 100,
    "te-chunked": 200,
    "cl-neg": 200,
    "cl-huge": 200,
    "favicon": 404,
    "api-audit": 200,
    "metrics-on-page": 404,
    "slow-clients": 200,
    "pipelined": 200,
    "after": 200,
}
PAGE_BROKE: dict[str, Any] = {}


@pytest.mark.parametrize("k", cases([f"page:{k}" for k in PAGE], list(PAGE), PAGE_BROKE))
def test_page(lab: Labs, k: str) -> None:
    """The daemon's page (GET/HEAD/OPTIONS/POST/DELETE/TRACE/CONNECT, odd methods, HTTP/0.9
    and HTTP/2 prefaces, traversal paths plain and encoded, NUL and bad UTF-8, option-shaped
    and non-commit shas, odd and huge query strings and headers, odd Content-Length and
    Transfer-Encoding, 12 stalled clients, pipelining): a status and never a 5xx, every
    answer with the Content-Security-Policy, nothing written, the daemon alive and serving."""
    assert "fail-page" not in _g(lab), _g(lab).get("fail-page")
    p = _g(lab)["page"]
    assert p["ready"] and p["alive"] and not p["daemon_err"], p.get("daemon_err")
    r = p[k]
    _no_internal(r["text"])
    want = PAGE[k]
    if want == 0:  # HTTP/0.9 shapes: no status line to give; never a 5xx nor a dead server
        assert "Error code: 5" not in r["text"] or "505" in r["text"], r["text"][-400:]
        assert p["after"]["code"] == 200
        return
    assert r["code"] == want, (r["code"], r["head"][:200])
    assert "Content-Security-Policy: default-src 'none'" in r["text"] + r["head"], r["head"][:400]
    if k == "commit-opt":
        assert not r["marker"], "git wrote the option's file"
    if k == "slow-clients":
        assert r["secs"] < 60, r["secs"]  # a hang guard: slow clients block nobody for good
