"""Round 112, the agent surfaces (CLI, MCP through the real ``mcp`` SDK client, ``init``,
``schema``) in odd repositories and a hostile process environment (atk112b).

Lab: one local-mode plans repo with an agent identity, plans committed by the agent and frozen
by one ``run --once``; clones made from it for the odd repositories.

Ids:
* ``repo:<k>``: ``approve``/``status``/``show``/``audit`` in a repository mid-merge (conflict),
  mid-rebase, on a detached HEAD, with a stale ``index.lock``, with a person's unrelated work
  staged, with the plan edited but not committed, a blobless partial clone whose origin is
  gone, a ``--shared`` clone whose alternate is gone, ``core.repositoryformatversion=99``, a
  linked worktree on another branch, ``.git`` a symlink, refs packed, a truncated loose object,
  garbage in ``HEAD``/``refs/heads/main``/``.git/config``/``.git/index``; ``init`` inside a bare
  repository's ``objects/``, inside a ``.git`` folder, inside a linked worktree.
* ``env:<k>``: stdout to ``/dev/full`` (``status``, ``schema``, ``show``, ``approve``,
  ``audit``), stderr to ``/dev/full``, stdout a pipe closed early (``schema``/``audit``/``status``),
  ``RLIMIT_FSIZE`` below the plan's or the reflog's size (``approve``), ``RLIMIT_NOFILE`` of 16,
  ``PYTHONWARNINGS=error``, ``GIT_INDEX_FILE``/``GIT_DIR``/``GIT_WORK_TREE`` pointing elsewhere,
  ``GIT_CONFIG_COUNT``/``GIT_CONFIG_PARAMETERS`` (colour, showSignature, decorate, quotepath),
  a global ``core.hooksPath`` with failing hooks, ``trailer.separators``, a committed
  ``.mailmap`` with ``log.mailmap`` (Mallory mapped to Alice), odd ``TZ``, ``HOME=/dev/null``,
  a ``git`` wrapper on PATH that chatters on stderr.
* ``mcp:<k>``: slugs over 255 bytes in UTF-8 (under 255 characters), combining and
  right-to-left characters, a name that derives such a slug, a 1 MB and a control-character
  ``note``, ``pull_request``/``timeout`` given as a string or a boolean, absolute and ``..``
  paths to ``log``/``wait``, a billion-laughs plan to ``validate``.

Seen (round 112, 102 ids, ~29 s wall on 2 idle cores, ~69 s loaded): 14 broke (5 classes),
88 held.
Broke:
**missing-object-misdiagnosed** (``repo:blobless-audit``, ``-status``, ``blobco-audit``,
``-status``, ``corrupt-status``, ``-audit``, ``-approve``): ``git clone --filter=blob:none
file://R C; git -C C remote set-url origin /gone`` then ``plangate status --json --config C``
or ``plangate audit --json`` in C answers ``E_GIT: cannot read object <sha>: SHA is empty,
possible dubious ownership in the repository ... git config --global --add safe.directory``
(C is the user's own) or ``cannot read object <sha>: [Errno 32] Broken pipe`` (which one varies
by run), remedy "see git's message"; a truncated loose object (the plan's blob) gives ``SHA
b'<sha>' could not be resolved, git returned: b'<sha> missing'`` (a Python bytes repr) for
status/audit/approve. A ``--shared`` clone whose alternate is gone says it right ("git's object
store does not hold it", remedy ``git fsck``).
**audit-refused-repo-misdiagnosed** (``repo:format-audit``, ``cfggarbage-audit``): in a clone
with ``core.repositoryformatversion=99`` or a syntax error in ``.git/config``, ``plangate audit
--json`` (no --config) says ``E_CONFIG_INVALID: no config found, and the current folder is not
inside a git working tree``; ``status``/``approve``/``show``/``check``/MCP there name git's
real refusal ("Expected git repo version <= 1", "bad config line 12").
**broken-branch-ref-misdiagnosed** (``repo:refgarbage-status``, ``-approve``, ``-audit``):
``echo 0123 > .git/refs/heads/main`` in a clone on main: ``status --json``/``approve
plans/p-28`` say ``E_GIT: HEAD is detached; plangate watches a branch``, remedy ``git switch
main`` (HEAD is on main; the ref is broken); ``audit --json`` says "the repository has no
commits to audit", remedy "see git's message" (no git message shown).
**corrupt-index-approve-commits** (``repo:idxgarbage-approve``): ``.git/index`` of garbage,
``plangate approve plans/p-28`` commits the approval, then exits 1 ``E_STORAGE: committed
<sha>, but the index does not hold it yet (... fatal: index file corrupt)``, remedy ``git
restore --staged -- plans/p-28/PLAN.yml``, which fails on that index; a stale ``index.lock``
is found before the branch moves (E_GIT, nothing committed), a corrupt index is not.
**fsize-leaves-ref-lock** (``env:fsize-reflog-approve``): in a clone whose
``.git/logs/refs/heads/main`` is larger than the file-size limit (``ulimit -f``/RLIMIT_FSIZE
1000 bytes; a long-lived branch's reflog), ``plangate approve plans/p-29`` exits 2 ``E_GIT at
.git/refs/heads/main.lock: ... File exists. Another git process seems to be running``: its own
``git update-ref`` was killed writing the reflog and left ``refs/heads/main.lock`` (holding the
approval commit) behind; the next ``approve`` (and any ``git commit``, any controller pass)
fails the same way until the person deletes the lock. With a small reflog the same limit is
E_STORAGE "nothing was committed (the branch was put back)" (held).
Held: approve mid-merge (one commit, the merge kept), mid-rebase/detached (E_GIT), stale lock,
staged unrelated work kept staged, an uncommitted edit of the plan refused (E_USAGE, the
edit kept), format 99 named by status/approve/show/check/MCP, garbage HEAD and .git/config,
linked worktree (commit on its branch only), ``.git`` symlink, packed refs, ``init`` inside
``objects/``, ``.git/`` and a linked worktree refused; stdout to /dev/full and closed pipes,
RLIMIT_FSIZE (E_STORAGE, the plan byte-identical), 16 descriptors, PYTHONWARNINGS=error,
GIT_INDEX_FILE/GIT_DIR/GIT_WORK_TREE ignored, git config from GIT_CONFIG_COUNT/PARAMETERS,
a failing global core.hooksPath, trailer.separators, TZ garbage, HOME=/dev/null, a chatty git
wrapper; a committed .mailmap with log.mailmap makes Mallory no approver; every odd MCP
argument is a coded E_USAGE with a remedy, notes with NUL/ESC/newlines forge no trailer.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, Labs, build_all, cases, plan_text
from test_round2_execution_kit import shared

WORKTREE = str(Path(__file__).resolve().parents[2])
AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}, branch_prefix: plangate/}\n"
PY = sys.executable
PAD = "x" * 3000


def _env(lab: Lab, who: tuple[str, str] | None = None) -> dict[str, str]:
    env = lab.env(who)
    env["PYTHONPATH"] = WORKTREE
    env["REC_LOG"] = str(lab.log)
    return env


def _g2(cwd: Path, env: dict[str, str], *a: str) -> str:
    r = subprocess.run(["git", *a], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    return r.stdout + (r.stderr if r.returncode else "")


def _snap(lab: Lab, repo: Path | None = None) -> dict[str, Any]:
    env = lab.env()
    cwd = repo or lab.repo
    return {
        "head": _g2(cwd, env, "rev-parse", "HEAD"),
        "tree": _g2(cwd, env, "status", "--porcelain"),
        "staged": _g2(cwd, env, "diff", "--cached", "--name-only"),
    }


def _commits(lab: Lab, before: str, repo: Path | None = None, ref: str = "HEAD") -> list[Any]:
    env, cwd = lab.env(), repo or lab.repo
    rows = []
    for h in _g2(cwd, env, "rev-list", "--reverse", f"{before.strip()}..{ref}").split():
        if len(h) != 40:
            break
        rows.append(
            {
                "parents": len(_g2(cwd, env, "rev-list", "--parents", "-n1", h).split()) - 1,
                "author": _g2(cwd, env, "log", "-1", "--format=%ae", h).strip(),
                "files": _g2(
                    cwd, env, "diff-tree", "--no-commit-id", "--name-only", "-r", h
                ).split(),
            }
        )
    return rows


def _cli(
    lab: Lab,
    who: Any,
    *args: Any,
    timeout: float = 40,
    cwd: Any = None,
    extra: dict[str, str] | None = None,
    repo: Path | None = None,
    stdout_path: str | None = None,
    stderr_path: str | None = None,
    pipe_head: bool = False,
    limits: list[tuple[int, int]] | None = None,
    gitdir_lock: Path | None = None,
) -> dict[str, Any]:
    before = _snap(lab, repo)
    env = {**_env(lab, who), **(extra or {})}
    argv = [PY, "-m", "controller", *[str(a) for a in args]]
    if pipe_head:
        argv = ["/bin/sh", "-c", '"$@" | head -c 10 >/dev/null', "sh", *argv]

    def pre() -> None:
        for res, val in limits or []:
            resource.setrlimit(res, (val, val))

    t0 = time.time()
    so_f = open(stdout_path, "wb") if stdout_path else None  # noqa: SIM115
    se_f = open(stderr_path, "wb") if stderr_path else None  # noqa: SIM115
    try:
        r = subprocess.run(
            argv,
            cwd=cwd or lab.repo,
            env=env,
            stdout=so_f or subprocess.PIPE,
            stderr=se_f or subprocess.PIPE,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
            preexec_fn=pre if limits else None,
        )
        so = (r.stdout or b"").decode("utf-8", "replace")
        se = (r.stderr or b"").decode("utf-8", "replace")
        se = se if len(se) < 4000 else se[:1500] + " ... " + se[-1500:]
        so = so if len(so) < 400000 else so[:3000] + " ... " + so[-2000:]
        out = {"rc": r.returncode, "stdout": so, "stderr": se}
    except subprocess.TimeoutExpired:
        out = {"rc": None, "stdout": "", "stderr": "TIMEOUT"}
    finally:
        for f in (so_f, se_f):
            if f:
                f.close()
    out["secs"] = round(time.time() - t0, 2)
    out["out"] = out["stdout"] + out["stderr"]
    out["before"] = before
    out["after"] = _snap(lab, repo)
    out["lock"] = (gitdir_lock or (repo or lab.repo) / ".git" / "index.lock").exists()
    out["facts"] = _commits(lab, before["head"], repo)
    return out


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


async def _session(
    lab: Lab, seq: list[Any], env: dict[str, str], cfg: Path | None = None
) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    cmd = [PY, "-m", "controller", "mcp", "--config", str(cfg or lab.config)]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env, cwd=str(lab.root))
    out: dict[str, Any] = {"calls": [], "fail": None}
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
                for n, a in seq:
                    out["calls"].append(await one(s, n, a))
        except BaseException as e:
            out["fail"] = f"{type(e).__name__}: {e}"[:1500]
    out["err"] = errlog_path.read_text(errors="replace")[-3000:]
    return out


def mcp_calls(lab: Lab, seq: list[Any], cfg: Path | None = None) -> dict[str, Any]:
    before = _snap(lab)
    try:
        out = asyncio.run(asyncio.wait_for(_session(lab, seq, _env(lab), cfg), 120))
    except BaseException as e:
        out = {"calls": [], "fail": f"{type(e).__name__}: {e}", "err": ""}
    out["before"] = before
    out["after"] = _snap(lab)
    out["facts"] = _commits(lab, before["head"])
    out["lock"] = (lab.repo / ".git" / "index.lock").exists()
    return out


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


SLUGS = [f"p-{i}" for i in range(1, 31)]


# -- odd repositories ------------------------------------------------------------------
def _repos(lab: Lab, got: dict[str, Any]) -> None:
    out: dict[str, Any] = {}
    root = lab.root / "repos"
    root.mkdir()
    src = str(lab.repo)

    def clone(name: str, *opts: str) -> tuple[Path, list[Any]]:
        d = root / name
        _git(lab, root, "clone", "-q", *opts, src, str(d))
        return d, ["--config", _cfg_for(lab, d, name)]

    # mid-merge with a conflict
    mm, c = clone("merge")
    (mm / "notes").mkdir()
    (mm / "notes" / "n.txt").write_text("a\n")
    _git(lab, mm, "add", "-A")
    _git(lab, mm, "commit", "-qm", "a", who=AGENT)
    _git(lab, mm, "checkout", "-qb", "side", "HEAD~1")
    (mm / "notes").mkdir(exist_ok=True)
    (mm / "notes" / "n.txt").write_text("b\n")
    _git(lab, mm, "add", "-A")
    _git(lab, mm, "commit", "-qm", "b", who=AGENT)
    _git(lab, mm, "checkout", "-q", "main")
    _git(lab, mm, "merge", "side", who=AGENT, check=False)
    out["merge-approve"] = _cli(lab, ALICE, "approve", "plans/p-1", repo=mm, cwd=mm)
    out["merge-approve"]["merging"] = (mm / ".git" / "MERGE_HEAD").exists()
    out["merge-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=mm, cwd=mm)
    # mid-rebase (stopped by a failing --exec)
    rb, c = clone("rebase")
    (rb / "notes").mkdir()
    (rb / "notes" / "r.txt").write_text("r\n")
    _git(lab, rb, "add", "-A")
    _git(lab, rb, "commit", "-qm", "r", who=AGENT)
    _git(lab, rb, "rebase", "--exec", "false", "HEAD~1", who=AGENT, check=False)
    out["rebase-approve"] = _cli(lab, ALICE, "approve", "plans/p-2", repo=rb, cwd=rb)
    out["rebase-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=rb, cwd=rb)
    # detached HEAD
    dh, c = clone("detached")
    _git(lab, dh, "checkout", "-q", "--detach")
    out["detached-approve"] = _cli(lab, ALICE, "approve", "plans/p-3", repo=dh, cwd=dh)
    out["detached-reject"] = _cli(lab, ALICE, "reject", "plans/p-3", "-m", "no", repo=dh, cwd=dh)
    # a stale index.lock
    lk, c = clone("lock")
    (lk / ".git" / "index.lock").write_text("")
    r = _cli(lab, ALICE, "approve", "plans/p-4", repo=lk, cwd=lk)
    r["plan_tree"] = (lk / "plans" / "p-4" / "PLAN.yml").read_text()
    out["lock-approve"] = r
    (lk / ".git" / "index.lock").unlink()
    # a person's unrelated staged work
    st, c = clone("staged")
    (st / "notes").mkdir()
    (st / "notes" / "mine.txt").write_text("mine\n")
    _git(lab, st, "add", "notes/mine.txt")
    r = _cli(lab, ALICE, "approve", "plans/p-5", repo=st, cwd=st)
    r["staged_after"] = _git(lab, st, "diff", "--cached", "--name-only")
    out["staged-approve"] = r
    # the plan edited (what runs) but not committed
    dp, c = clone("dirty")
    plan = dp / "plans" / "p-6" / "PLAN.yml"
    plan.write_text(plan.read_text().replace('tag: "p-6"', 'tag: "p-6-EDITED"'))
    r = _cli(lab, ALICE, "approve", "plans/p-6", repo=dp, cwd=dp)
    r["head_plan"] = _git(lab, dp, "show", "HEAD:plans/p-6/PLAN.yml", check=False)
    r["tree_plan"] = plan.read_text()
    out["dirty-approve"] = r
    # a blobless partial clone whose origin is gone
    _git(lab, lab.repo, "config", "uploadpack.allowFilter", "true")
    _git(lab, lab.repo, "config", "uploadpack.allowAnySHA1InWant", "true")
    bl = root / "blobless"
    _git(lab, root, "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{src}", str(bl))
    _git(lab, bl, "remote", "set-url", "origin", str(root / "gone"))
    c = ["--config", _cfg_for(lab, bl, "blobless")]
    out["blobless-audit"] = _cli(lab, ALICE, "audit", "--json", repo=bl, cwd=bl)
    out["blobless-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=bl, cwd=bl)
    out["blobless-show"] = _cli(lab, ALICE, "show", "plans/p-7", *c, repo=bl, cwd=bl)
    # a --shared clone whose alternate is gone
    cp = root / "copy"
    shutil.copytree(lab.repo, cp, symlinks=True)
    al = root / "alt"
    _git(lab, root, "clone", "-q", "--shared", str(cp), str(al))
    shutil.rmtree(cp)
    c = ["--config", _cfg_for(lab, al, "alt")]
    out["alt-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=al, cwd=al)
    out["alt-audit"] = _cli(lab, ALICE, "audit", "--json", repo=al, cwd=al)
    out["alt-approve"] = _cli(lab, ALICE, "approve", "plans/p-8", repo=al, cwd=al)
    # repository format from the future
    fv, c = clone("format")
    _git(lab, fv, "config", "core.repositoryformatversion", "99")
    out["format-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=fv, cwd=fv)
    out["format-approve"] = _cli(lab, ALICE, "approve", "plans/p-9", repo=fv, cwd=fv)
    out["format-audit"] = _cli(lab, ALICE, "audit", "--json", repo=fv, cwd=fv)
    out["format-audit-cfg"] = _cli(lab, ALICE, "audit", "--json", *c, repo=fv, cwd=fv)
    out["format-show"] = _cli(lab, ALICE, "show", "plans/p-9", *c, repo=fv, cwd=fv)
    out["format-check"] = _cli(lab, ALICE, "check", "--format", "json", *c, repo=fv, cwd=fv)
    out["format-mcp"] = mcp_calls(
        lab, [("status", {}), ("submit", {"plan": plan_text("fm"), "slug": "fm"})], cfg=c[1]
    )
    # a blobless clone checked out, its origin gone: old blobs missing
    bc = root / "blobco"
    _git(lab, root, "clone", "-q", "--filter=blob:none", f"file://{src}", str(bc))
    _git(lab, bc, "remote", "set-url", "origin", str(root / "gone"))
    c = ["--config", _cfg_for(lab, bc, "blobco")]
    out["blobco-audit"] = _cli(lab, ALICE, "audit", "--json", repo=bc, cwd=bc)
    out["blobco-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=bc, cwd=bc)
    out["blobco-approve"] = _cli(lab, ALICE, "approve", "plans/p-26", repo=bc, cwd=bc)
    out["blobco-check"] = _cli(lab, ALICE, "check", "--format", "json", *c, repo=bc, cwd=bc)
    # a corrupt loose object (the plan's blob at HEAD)
    co, c = clone("corrupt", "--no-hardlinks")
    for pack in list((co / ".git" / "objects" / "pack").glob("*.pack")):
        moved = root / pack.name
        pack.rename(moved)
        pack.with_suffix(".idx").unlink()
        with open(moved, "rb") as fh:
            subprocess.run(
                ["git", "unpack-objects", "-q"], cwd=co, stdin=fh, env=lab.env(), check=True
            )
    blob = _git(lab, co, "rev-parse", "HEAD:plans/p-27/PLAN.yml").strip()
    obj = co / ".git" / "objects" / blob[:2] / blob[2:]
    obj.chmod(0o644)
    obj.write_bytes(obj.read_bytes()[:10])
    out["corrupt-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=co, cwd=co)
    out["corrupt-audit"] = _cli(lab, ALICE, "audit", "--json", repo=co, cwd=co)
    out["corrupt-approve"] = _cli(lab, ALICE, "approve", "plans/p-27", repo=co, cwd=co)
    # HEAD garbage; a branch ref garbage; a config syntax error; an index of garbage
    hg, c = clone("headgarbage")
    (hg / ".git" / "HEAD").write_text("garbage\n")
    out["headgarbage-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=hg, cwd=hg)
    out["headgarbage-audit"] = _cli(lab, ALICE, "audit", "--json", repo=hg, cwd=hg)
    out["headgarbage-approve"] = _cli(lab, ALICE, "approve", "plans/p-28", repo=hg, cwd=hg)
    rg, c = clone("refgarbage")
    (rg / ".git" / "refs" / "heads" / "main").write_text("0123\n")
    out["refgarbage-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=rg, cwd=rg)
    out["refgarbage-audit"] = _cli(lab, ALICE, "audit", "--json", repo=rg, cwd=rg)
    out["refgarbage-approve"] = _cli(lab, ALICE, "approve", "plans/p-28", repo=rg, cwd=rg)
    cg, c = clone("cfggarbage")
    with open(cg / ".git" / "config", "a") as f:
        f.write("[core\n\tbroken\n")
    out["cfggarbage-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=cg, cwd=cg)
    out["cfggarbage-audit"] = _cli(lab, ALICE, "audit", "--json", repo=cg, cwd=cg)
    out["cfggarbage-approve"] = _cli(lab, ALICE, "approve", "plans/p-28", repo=cg, cwd=cg)
    ig, c = clone("idxgarbage")
    (ig / ".git" / "index").write_bytes(b"DIRC garbage" * 10)
    r = _cli(lab, ALICE, "approve", "plans/p-28", repo=ig, cwd=ig)
    r["index_kept"] = (ig / ".git" / "index").read_bytes() == b"DIRC garbage" * 10
    out["idxgarbage-approve"] = r
    out["idxgarbage-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=ig, cwd=ig)
    # a linked worktree on another branch
    wm, c = clone("wtmain")
    wt = root / "wt"
    _git(lab, wm, "worktree", "add", "-q", "-b", "wtb", str(wt))
    main_before = _git(lab, wm, "rev-parse", "main")
    r = _cli(
        lab,
        ALICE,
        "approve",
        "plans/p-10",
        repo=wt,
        cwd=wt,
        gitdir_lock=wm / ".git" / "worktrees" / "wt" / "index.lock",
    )
    r["main_moved"] = _git(lab, wm, "rev-parse", "main") != main_before
    r["wtb_facts"] = _commits(lab, main_before, wm, "wtb")
    out["worktree-approve"] = r
    out["worktree-status"] = _cli(
        lab, ALICE, "status", "--json", "--config", _cfg_for(lab, wt, "wt"), repo=wt, cwd=wt
    )
    # .git a symlink to the git directory
    sl, c = clone("symlink")
    (sl / ".git").rename(root / "symlink.gitdir")
    (sl / ".git").symlink_to(root / "symlink.gitdir")
    out["gitlink-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=sl, cwd=sl)
    r = _cli(
        lab,
        ALICE,
        "approve",
        "plans/p-11",
        repo=sl,
        cwd=sl,
        gitdir_lock=root / "symlink.gitdir" / "index.lock",
    )
    out["gitlink-approve"] = r
    # packed refs
    pr, c = clone("packed")
    _git(lab, pr, "pack-refs", "--all")
    out["packed-status"] = _cli(lab, ALICE, "status", "--json", *c, repo=pr, cwd=pr)
    out["packed-approve"] = _cli(lab, ALICE, "approve", "plans/p-12", repo=pr, cwd=pr)
    # init inside git directories
    bare = root / "bare.git"
    _git(lab, root, "clone", "-q", "--bare", src, str(bare))
    out["init-bare-objects"] = _cli(
        lab, None, "init", bare / "objects" / "newdir", cwd=root, repo=lab.repo
    )
    out["init-bare-objects"]["made"] = (bare / "objects" / "newdir").exists()
    out["init-dotgit"] = _cli(lab, None, "init", pr / ".git" / "newdir", cwd=root, repo=lab.repo)
    out["init-dotgit"]["made"] = (pr / ".git" / "newdir").exists()
    out["init-worktree"] = _cli(lab, None, "init", wt / "sub", cwd=root, repo=lab.repo)
    out["init-worktree"]["made"] = (wt / "sub").exists()
    got["repos"] = out


# -- a hostile environment ------------------------------------------------------------------
def _envs(lab: Lab, got: dict[str, Any]) -> None:
    out: dict[str, Any] = {}
    c = ["--config", lab.config]
    base = _cli(lab, ALICE, "status", "--json", *c)
    out["baseline"] = base
    out["devfull-status"] = _cli(lab, ALICE, "status", "--json", *c, stdout_path="/dev/full")
    out["devfull-schema"] = _cli(lab, ALICE, "schema", stdout_path="/dev/full")
    out["devfull-show"] = _cli(lab, ALICE, "show", "plans/p-13", *c, stdout_path="/dev/full")
    out["devfull-audit"] = _cli(lab, ALICE, "audit", "--json", stdout_path="/dev/full")
    out["devfull-approve"] = _cli(lab, ALICE, "approve", "plans/p-13", stdout_path="/dev/full")
    out["devfull-stderr-approve"] = _cli(
        lab, ALICE, "approve", "plans/nope", stderr_path="/dev/full"
    )
    out["pipe-schema"] = _cli(lab, ALICE, "schema", pipe_head=True)
    out["pipe-audit"] = _cli(lab, ALICE, "audit", "--json", pipe_head=True)
    out["pipe-status"] = _cli(lab, ALICE, "status", *c, pipe_head=True)
    fz = lab.root / "fz1"
    _git(lab, lab.root, "clone", "-q", str(lab.repo), str(fz))
    before_plan = (fz / "plans" / "big" / "PLAN.yml").read_text()
    r = _cli(
        lab, ALICE, "approve", "plans/big", limits=[(resource.RLIMIT_FSIZE, 1500)], repo=fz, cwd=fz
    )
    r["plan_after"] = (fz / "plans" / "big" / "PLAN.yml").read_text()
    r["plan_before"] = before_plan
    out["fsize-approve"] = r
    # the branch's reflog is larger than the limit, the plan is not
    fz = lab.root / "fz2"
    _git(lab, lab.root, "clone", "-q", str(lab.repo), str(fz))
    reflog = fz / ".git" / "logs" / "refs" / "heads" / "main"
    reflog.write_text(reflog.read_text() * 40)
    before_plan = (fz / "plans" / "p-29" / "PLAN.yml").read_text()
    r = _cli(
        lab, ALICE, "approve", "plans/p-29", limits=[(resource.RLIMIT_FSIZE, 1000)], repo=fz, cwd=fz
    )
    r["plan_after"] = (fz / "plans" / "p-29" / "PLAN.yml").read_text()
    r["plan_before"] = before_plan
    r["ref_lock"] = (fz / ".git" / "refs" / "heads" / "main.lock").exists()
    r["next"] = _cli(lab, ALICE, "approve", "plans/p-30", repo=fz, cwd=fz)
    out["fsize-reflog-approve"] = r
    out["nofile-status"] = _cli(
        lab, ALICE, "status", "--json", *c, limits=[(resource.RLIMIT_NOFILE, 16)]
    )
    out["nofile-approve"] = _cli(
        lab, ALICE, "approve", "plans/p-14", limits=[(resource.RLIMIT_NOFILE, 16)]
    )
    warn = {"PYTHONWARNINGS": "error"}
    out["warn-status"] = _cli(lab, ALICE, "status", "--json", *c, extra=warn)
    out["warn-schema"] = _cli(lab, ALICE, "schema", extra=warn)
    out["warn-approve"] = _cli(lab, ALICE, "approve", "plans/p-15", extra=warn)
    # GIT_* pointing elsewhere
    other = lab.root / "other"
    _git(lab, lab.root, "init", "-q", "-b", "main", str(other))
    (other / "x").write_text("x\n")
    _git(lab, other, "add", "x")
    _git(lab, other, "commit", "-qm", "x", who=MALLORY)
    other_head = _git(lab, other, "rev-parse", "HEAD")
    idx = lab.root / "other.index"
    shutil.copy(other / ".git" / "index", idx)
    idx_bytes = idx.read_bytes()
    r = _cli(lab, ALICE, "approve", "plans/p-16", extra={"GIT_INDEX_FILE": str(idx)})
    r["idx_same"] = idx.read_bytes() == idx_bytes
    out["gitindex-approve"] = r
    r = _cli(lab, ALICE, "approve", "plans/p-17", extra={"GIT_DIR": str(other / ".git")})
    r["other_same"] = _git(lab, other, "rev-parse", "HEAD") == other_head
    out["gitdir-approve"] = r
    r = _cli(
        lab,
        ALICE,
        "status",
        "--json",
        *c,
        extra={"GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other)},
    )
    out["gitdir-status"] = r
    cfgenv = {
        "GIT_CONFIG_COUNT": "4",
        "GIT_CONFIG_KEY_0": "color.ui",
        "GIT_CONFIG_VALUE_0": "always",
        "GIT_CONFIG_KEY_1": "log.showSignature",
        "GIT_CONFIG_VALUE_1": "true",
        "GIT_CONFIG_KEY_2": "log.decorate",
        "GIT_CONFIG_VALUE_2": "full",
        "GIT_CONFIG_KEY_3": "core.quotePath",
        "GIT_CONFIG_VALUE_3": "false",
    }
    out["gitcfg-status"] = _cli(lab, ALICE, "status", "--json", *c, extra=cfgenv)
    out["gitcfg-audit"] = _cli(lab, ALICE, "audit", "--json", extra=cfgenv)
    out["gitcfg-approve"] = _cli(lab, ALICE, "approve", "plans/p-18", extra=cfgenv)
    params = {
        "GIT_CONFIG_PARAMETERS": "'color.ui'='always' 'diff.noprefix'='true' "
        "'log.abbrevCommit'='true'"
    }
    out["gitparams-status"] = _cli(lab, ALICE, "status", "--json", *c, extra=params)
    out["gitparams-approve"] = _cli(lab, ALICE, "approve", "plans/p-19", extra=params)
    # global hooksPath with failing hooks, trailer separators
    hooks = lab.root / "ghooks"
    hooks.mkdir()
    for h in ("pre-commit", "commit-msg", "prepare-commit-msg"):
        (hooks / h).write_text("#!/bin/sh\necho hook-said-no >&2\nexit 1\n")
        (hooks / h).chmod(0o755)
    gc = lab.root / "gitconfig-hooks"
    gc.write_text(
        (lab.root / "gitconfig").read_text()
        + f'[core]\n\thooksPath = {hooks}\n[trailer]\n\tseparators = "=#"\n'
    )
    out["hooks-approve"] = _cli(
        lab, ALICE, "approve", "plans/p-20", extra={"GIT_CONFIG_GLOBAL": str(gc)}
    )
    out["trailer-status"] = _cli(
        lab, ALICE, "status", "--json", *c, extra={"GIT_CONFIG_GLOBAL": str(gc)}
    )
    # TZ and HOME
    out["tz-approve"] = _cli(lab, ALICE, "approve", "plans/p-21", extra={"TZ": "Nowhere/Land-99"})
    out["tz2-status"] = _cli(lab, ALICE, "status", "--json", *c, extra={"TZ": "UTC+99:99"})
    out["home-approve"] = _cli(
        lab,
        ALICE,
        "approve",
        "plans/p-22",
        extra={"HOME": "/dev/null", "XDG_CONFIG_HOME": "/dev/null/x"},
    )
    # a chatty git wrapper
    wrap = lab.root / "wrapbin"
    wrap.mkdir()
    real = shutil.which("git")
    (wrap / "git").write_text(
        f"#!/bin/sh\necho 'warning: chatter from a wrapper' >&2\nexec {real} \"$@\"\n"
    )
    (wrap / "git").chmod(0o755)
    path = {"PATH": f"{wrap}:{os.environ.get('PATH', '')}"}
    out["chatty-status"] = _cli(lab, ALICE, "status", "--json", *c, extra=path)
    out["chatty-approve"] = _cli(lab, ALICE, "approve", "plans/p-23", extra=path)
    got["envs"] = out
    got["lab"] = str(lab.root)


def _mailmap(lab: Lab, got: dict[str, Any]) -> None:
    """A committed .mailmap maps Mallory to Alice; a person's git reads it (log.mailmap)."""
    lab.put(".mailmap", "Alice <alice@example.com> Mallory <mallory@example.com>\n")
    lab.commit("mailmap", AGENT)
    lab.run()
    gc = lab.root / "gitconfig"
    gc.write_text(gc.read_text() + "[log]\n\tmailmap = true\n")
    lab.approve("p-24", MALLORY)
    lab.run()
    got["mailmap"] = {
        "refusal": lab.refusal("p-24"),
        "started": lab.started("p-24"),
        "calls": len(lab.calls("p-24")),
        "audit": lab.audit(),
    }


# -- MCP ------------------------------------------------------------------------------------
def _mcp(lab: Lab, got: dict[str, Any]) -> None:
    out: dict[str, Any] = {}

    def sub(slug: Any, tag: str, **kw: Any) -> tuple[str, dict[str, Any]]:
        return ("submit", {"plan": plan_text(tag), "slug": slug, **kw})

    out["slug-bytes"] = mcp_calls(lab, [sub("\u00e9" * 130, "m1")])
    out["slug-cjk"] = mcp_calls(lab, [sub("\u7a0b" * 90, "m2")])
    out["slug-combining"] = mcp_calls(lab, [sub("cafe\u0301", "m3")])
    out["slug-rtl"] = mcp_calls(lab, [sub("a\u202eb", "m4")])
    out["slug-dotdot-uni"] = mcp_calls(lab, [sub("\u2025", "m5")])
    named = plan_text("m6", name="\u00e9" * 200)
    out["name-derived"] = mcp_calls(lab, [("submit", {"plan": named})])
    out["note-huge"] = mcp_calls(lab, [sub("m-note1", "m7", note="n" * 1_000_000)])
    out["note-ctrl"] = mcp_calls(
        lab, [sub("m-note2", "m8", note="a\x00b\x1b[31mc\rPlan-Status: approved")]
    )
    out["note-ctrl"]["msg"] = lab.git("log", "-1", "--format=%B", "--", "plans/m-note2")
    out["note-ctrl"]["trailers"] = lab.git(
        "log", "-1", "--format=%(trailers)", "--", "plans/m-note2"
    )
    out["note-nl"] = mcp_calls(
        lab,
        [
            sub(
                "m-note3",
                "m12",
                note="x\n\nPlan-Status: approved\nCo-authored-by: Alice <alice@example.com>",
            )
        ],
    )
    out["note-nl"]["trailers"] = lab.git("log", "-1", "--format=%(trailers)", "--", "plans/m-note3")
    out["pr-string"] = mcp_calls(lab, [sub("m-pr1", "m9", pull_request="false")])
    out["pr-int"] = mcp_calls(lab, [sub("m-pr2", "m10", pull_request=1)])
    out["wait-bool"] = mcp_calls(lab, [("wait", {"path": "plans/p-25", "timeout": True})])
    out["wait-str"] = mcp_calls(lab, [("wait", {"path": "plans/p-25", "timeout": "1"})])
    out["wait-tiny"] = mcp_calls(lab, [("wait", {"path": "plans/p-25", "timeout": 1e-300})])
    out["log-abs"] = mcp_calls(lab, [("log", {"path": "/etc/passwd"})])
    out["log-dotdot"] = mcp_calls(lab, [("log", {"path": "plans/../../etc"})])
    out["wait-abs"] = mcp_calls(
        lab, [("wait", {"path": str(lab.repo / "plans" / "p-25"), "timeout": 1})]
    )
    rows = ["a: &a [x,x,x,x,x,x,x,x,x]\n"]
    for i in range(9):
        prev, cur = chr(97 + i), chr(98 + i)
        rows.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]\n")
    laughs = "".join(rows)
    t0 = time.time()
    out["laughs-validate"] = mcp_calls(lab, [("validate", {"plan": laughs})])
    out["laughs-validate"]["secs"] = time.time() - t0
    out["format-odd"] = mcp_calls(
        lab, [("validate", {"plan": plan_text("m11"), "format": "../../yaml"})]
    )
    out["status-list"] = mcp_calls(lab, [("status", {"path": ["plans/p-25"]})])
    got["mcp"] = out


GROUPS = {"repos": _repos, "envs": _envs, "mcp": _mcp, "mailmap": _mailmap}


def _build_one(root: Path, group: str) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    got: dict[str, Any] = {}
    lab = Lab(root / "lab", extra=AGENT_CFG)
    for s in SLUGS:
        lab.write(s, plan_text(s))
    lab.write("big", plan_text("big", params=f'pad: "{PAD}"\n'))
    lab.commit("agent: plans", AGENT)
    lab.run()
    try:
        GROUPS[group](lab, got)
    except Exception as e:  # one step's failure is its ids' failure, not the lab's
        import traceback

        got[f"fail-{group}"] = f"{type(e).__name__}: {e}" + traceback.format_exc()[-1500:]
    return got


def _build(root: Path) -> Labs:
    t0 = time.time()
    labs = build_all(root, {g: (lambda r, g=g: _build_one(r, g)) for g in GROUPS}, workers=4)
    got: dict[str, Any] = {}
    for part in labs.got.values():
        got.update(part)
    got["t"] = time.time() - t0
    if os.environ.get("R112B_DUMP"):
        Path(os.environ["R112B_DUMP"]).write_text(json.dumps(got, default=str, indent=1))
    return Labs(got)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Labs:
    return shared(tmp_path_factory, "r112surf-atk112b", _build)  # type: ignore[arg-type]


def _g(lab: Any) -> dict[str, Any]:
    return lab.got  # type: ignore[no-any-return]


def _no_internal(text: str) -> None:
    assert "internal error" not in text and "Traceback" not in text, text[-800:]
    assert "unexpected exception" not in text.lower(), text[-800:]
    assert "E_INTERNAL" not in text, text[-800:]
    assert "Exception ignored" not in text, text[-800:]


def _coded(r: dict[str, Any], written: bool = False) -> None:
    assert r["rc"] not in (0, None), r["out"][-800:]
    _no_internal(r["out"])
    assert "E_" in r["out"] and "remedy" in r["out"], r["out"][-800:]
    if not written:
        assert r["after"] == r["before"], (r["before"], r["after"])
        assert r["facts"] == [], r["facts"]
        assert not r["lock"], "index.lock left behind"


def _ok(r: dict[str, Any]) -> None:
    assert r["rc"] == 0, r["out"][-800:]
    _no_internal(r["out"])


def _one(r: dict[str, Any], who: str, files: list[str]) -> None:
    _ok(r)
    assert r["facts"] == [{"parents": 1, "author": who, "files": files}], r["facts"]
    assert r["after"]["tree"] == r["before"]["tree"], (r["before"], r["after"])
    assert not r["lock"], "index.lock left behind"


def _plans(r: dict[str, Any]) -> set[str]:
    return {row["plan"] for row in json.loads(r["stdout"])}


def xf(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 112: {cls}: {what}")


# false causes: what a message must not say when it is not so
FALSE = ("dubious ownership", "safe.directory", "Broken pipe", "[Errno", " b'", "SHA is empty")
NOT_GIT = ("not inside a git working tree",)
DETACHED = ("HEAD is detached", "no commits to audit", "git switch main")

# id -> (expectation, the plan an approve commits, false causes the answer must not name)
REPO: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "merge-approve": ("one", "p-1", ()),
    "merge-status": ("ok", "", ()),
    "rebase-approve": ("coded", "", FALSE),
    "rebase-status": ("coded", "", FALSE),
    "detached-approve": ("coded", "", FALSE),
    "detached-reject": ("coded", "", FALSE),
    "lock-approve": ("lock", "", FALSE),
    "staged-approve": ("one", "p-5", ()),
    "dirty-approve": ("coded", "", FALSE),
    "blobless-audit": ("coded", "", FALSE),
    "blobless-status": ("coded", "", FALSE),
    "blobless-show": ("coded", "", FALSE),
    "blobco-audit": ("coded", "", FALSE),
    "blobco-status": ("coded", "", FALSE),
    "blobco-approve": ("one", "p-26", ()),
    "blobco-check": ("ok", "", ()),
    "alt-status": ("coded", "", FALSE),
    "alt-audit": ("coded", "", FALSE),
    "alt-approve": ("coded", "", FALSE),
    "corrupt-status": ("coded", "", FALSE),
    "corrupt-audit": ("coded", "", FALSE),
    "corrupt-approve": ("coded", "", FALSE),
    "format-status": ("coded", "", FALSE + NOT_GIT),
    "format-approve": ("coded", "", FALSE + NOT_GIT),
    "format-audit": ("coded", "", FALSE + NOT_GIT),
    "format-audit-cfg": ("coded", "", FALSE + NOT_GIT),
    "format-show": ("coded", "", FALSE + NOT_GIT),
    "format-check": ("coded", "", FALSE + NOT_GIT),
    "format-mcp": ("mcp-coded", "", FALSE + NOT_GIT),
    "headgarbage-status": ("coded", "", FALSE),
    "headgarbage-audit": ("coded", "", FALSE),
    "headgarbage-approve": ("coded", "", FALSE),
    "refgarbage-status": ("coded", "", FALSE + DETACHED),
    "refgarbage-audit": ("coded", "", FALSE + DETACHED),
    "refgarbage-approve": ("coded", "", FALSE + DETACHED),
    "cfggarbage-status": ("coded", "", FALSE + NOT_GIT),
    "cfggarbage-audit": ("coded", "", FALSE + NOT_GIT),
    "cfggarbage-approve": ("coded", "", FALSE + NOT_GIT),
    "idxgarbage-approve": ("one-or-coded", "p-28", ()),
    "idxgarbage-status": ("ok", "", ()),
    "worktree-approve": ("one", "p-10", ()),
    "worktree-status": ("ok", "", ()),
    "gitlink-status": ("ok", "", ()),
    "gitlink-approve": ("one", "p-11", ()),
    "packed-status": ("ok", "", ()),
    "packed-approve": ("one", "p-12", ()),
    "init-bare-objects": ("init", "", ()),
    "init-dotgit": ("init", "", ()),
    "init-worktree": ("init", "", ()),
}
#: round 112's five classes, fixed the same day (2026-12-05): every id passes.
REPO_BROKE: dict[str, Any] = {}


@pytest.mark.parametrize(
    "k",
    cases([f"repo:{k}" for k in REPO], list(REPO), {f"repo:{k}": m for k, m in REPO_BROKE.items()}),
)
def test_odd_repository(lab: Labs, k: str) -> None:
    """approve/reject/status/show/audit/check/MCP in a repository mid-merge or mid-rebase, on
    a detached HEAD, with a stale lock, staged or uncommitted work, missing or corrupt objects,
    a future format, a garbage HEAD/ref/config/index, a linked worktree, a .git symlink,
    packed refs; init inside git directories: a coded answer naming the real cause that
    writes nothing, or one commit of one file by the person."""
    assert "fail-repos" not in _g(lab), _g(lab).get("fail-repos")
    r = _g(lab)["repos"][k]
    kind, slug, false = REPO[k]
    if kind == "ok":
        _ok(r)
    elif kind == "coded":
        _coded(r)
    elif kind == "lock":  # the person's lock is kept, named, nothing written
        _no_internal(r["out"])
        assert r["rc"] not in (0, None) and "E_GIT" in r["out"], r["out"][-600:]
        assert "index.lock" in r["out"] and r["lock"], r["out"][-600:]
        assert r["facts"] == [] and r["after"] == r["before"], r["facts"]
    elif kind == "one":
        _one(r, ALICE[1], [f"plans/{slug}/PLAN.yml"])
    elif kind == "one-or-coded":
        if r["facts"]:
            _one(r, ALICE[1], [f"plans/{slug}/PLAN.yml"])
        else:
            _coded(r)
    elif kind == "init":
        _coded(r)
        assert not r["made"], "init made a folder inside a git directory"
    elif kind == "mcp-coded":
        assert r["fail"] is None, r["fail"]
        for c in r["calls"]:
            assert c["error"] and c["data"] and str(c["data"].get("code", "")).startswith("E_"), c
            assert c["data"].get("remedy"), c
        assert r["facts"] == [] and not r["lock"], r["facts"]
        r = {"out": json.dumps(r["calls"])}
    for word in false:
        assert word not in r["out"], f"false cause {word!r}: {r['out'][-700:]}"
    if k == "merge-approve":
        assert r["merging"], "the person's merge in progress was lost"
    if k == "staged-approve":
        assert "notes/mine.txt" in r["staged_after"], r["staged_after"]
    if k == "dirty-approve":
        assert "p-6-EDITED" in r["tree_plan"] and "p-6-EDITED" not in r["head_plan"]
    if k == "worktree-approve":
        assert not r["main_moved"], "approve in a worktree on wtb moved main"


ENV = {
    "baseline": "plans",
    "devfull-status": "coded",
    "devfull-schema": "coded",
    "devfull-show": "coded",
    "devfull-audit": "coded",
    "devfull-approve": "one-or-coded:p-13",
    "devfull-stderr-approve": "quiet",
    "pipe-schema": "pipe",
    "pipe-audit": "pipe",
    "pipe-status": "pipe",
    "fsize-approve": "fsize",
    "fsize-reflog-approve": "fsize-ref",
    "nofile-status": "ok-or-coded",
    "nofile-approve": "coded",
    "warn-status": "plans",
    "warn-schema": "ok",
    "warn-approve": "one:p-15",
    "gitindex-approve": "one:p-16",
    "gitdir-approve": "one:p-17",
    "gitdir-status": "plans",
    "gitcfg-status": "plans",
    "gitcfg-audit": "audit",
    "gitcfg-approve": "one:p-18",
    "gitparams-status": "plans",
    "gitparams-approve": "one:p-19",
    "hooks-approve": "one:p-20",
    "trailer-status": "plans",
    "tz-approve": "one:p-21",
    "tz2-status": "plans",
    "home-approve": "one:p-22",
    "chatty-status": "plans",
    "chatty-approve": "one:p-23",
}


ENV_BROKE: dict[str, Any] = {}


@pytest.mark.parametrize("k", cases([f"env:{k}" for k in ENV], list(ENV), ENV_BROKE))
def test_environment(lab: Labs, k: str) -> None:
    """stdout to /dev/full or a pipe closed early, stderr to /dev/full, RLIMIT_FSIZE under
    the plan's size, 16 descriptors, PYTHONWARNINGS=error, GIT_INDEX_FILE/GIT_DIR elsewhere,
    git config from the environment, failing global hooks, odd TZ/HOME, a chatty git: the
    same answer, one right commit, or a coded error with nothing half-written."""
    assert "fail-envs" not in _g(lab), _g(lab).get("fail-envs")
    r = _g(lab)["envs"][k]
    kind, _, slug = ENV[k].partition(":")
    if kind == "plans":
        _ok(r)
        assert _plans(r) == _plans(_g(lab)["envs"]["baseline"]), r["stdout"][-400:]
        assert len(_plans(r)) >= 31
    elif kind == "ok":
        _ok(r)
    elif kind == "coded":
        _coded(r)
    elif kind == "one":
        _one(r, ALICE[1], [f"plans/{slug}/PLAN.yml"])
    elif kind == "one-or-coded":
        _no_internal(r["out"])
        if r["facts"]:
            _one({**r, "rc": 0}, ALICE[1], [f"plans/{slug}/PLAN.yml"])
        else:
            _coded(r)
    elif kind == "quiet":  # the error cannot be told: the exit code says it, nothing written
        assert r["rc"] not in (0, None) and r["facts"] == [] and r["after"] == r["before"]
    elif kind == "pipe":
        _no_internal(r["stderr"])
        assert "BrokenPipe" not in r["stderr"], r["stderr"][-600:]
        assert r["facts"] == [] and r["after"] == r["before"]
    elif kind == "fsize":
        _coded(r)
        assert "E_STORAGE" in r["out"], r["out"][-600:]
        assert r["plan_after"] == r["plan_before"], "the plan was half-written"
    elif kind == "fsize-ref":  # the one right commit, or coded; no lock of its own left
        _no_internal(r["out"])
        assert r["rc"] not in (None,) and "E_" in r["out"], r["out"][-600:]
        assert not r["ref_lock"], "refs/heads/main.lock left behind: " + r["out"][-500:]
        assert "Another git process" not in r["out"], r["out"][-600:]
        _one(r["next"], ALICE[1], ["plans/p-30/PLAN.yml"])
    elif kind == "ok-or-coded":
        if r["rc"] == 0:
            _ok(r)
        else:
            _coded(r)
    elif kind == "audit":
        _ok(r)
        assert json.loads(r["stdout"])["ok"] is True, r["stdout"][-400:]
    if k == "gitindex-approve":
        assert r["idx_same"], "the GIT_INDEX_FILE named in the environment was written"
    if k == "gitdir-approve":
        assert r["other_same"], "the repository GIT_DIR named got the approval"


def test_mailmap_makes_no_approver(lab: Labs) -> None:
    """A committed .mailmap mapping Mallory to Alice, read by git (log.mailmap=true): Mallory's
    approval is refused, nothing runs, audit calls nothing valid."""
    assert "fail-mailmap" not in _g(lab), _g(lab).get("fail-mailmap")
    m = _g(lab)["mailmap"]
    assert m["refusal"] == "E_APPROVER_NOT_ALLOWED", m
    assert not m["started"] and m["calls"] == 0, m
    assert not [e for e in m["audit"][1].get("executions", []) if e.get("approval_valid")]


MCP = {
    "slug-bytes": "coded",
    "slug-cjk": "coded",
    "slug-combining": "coded",
    "slug-rtl": "coded",
    "slug-dotdot-uni": "coded",
    "name-derived": "coded",
    "note-huge": "submitted",
    "note-ctrl": "submitted",
    "note-nl": "submitted",
    "pr-string": "coded",
    "pr-int": "coded",
    "wait-bool": "coded",
    "wait-str": "coded",
    "wait-tiny": "answered",
    "wait-abs": "answered",
    "log-abs": "coded",
    "log-dotdot": "coded",
    "laughs-validate": "invalid",
    "format-odd": "invalid",
    "status-list": "coded",
}


@pytest.mark.parametrize("k", cases([f"mcp:{k}" for k in MCP], list(MCP), {}))
def test_mcp(lab: Labs, k: str) -> None:
    """The real MCP SDK client: slugs over 255 bytes, combining/RTL characters, a 1 MB or
    control-character note, booleans and strings where numbers go, absolute and '..' paths,
    a billion-laughs plan: a coded answer (nothing committed), or one commit whose message
    carries no trailer and no control byte."""
    assert "fail-mcp" not in _g(lab), _g(lab).get("fail-mcp")
    r = _g(lab)["mcp"][k]
    assert r["fail"] is None, r["fail"]
    assert len(r["calls"]) == 1, r
    c = r["calls"][0]
    _no_internal(c["text"] + r.get("err", ""))
    kind = MCP[k]
    if kind == "coded":
        assert c["error"] and c["data"] and str(c["data"].get("code")).startswith("E_"), c
        assert c["data"].get("remedy"), c
        assert r["facts"] == [] and not r["lock"], r["facts"]
    elif kind == "submitted":
        assert not c["error"] and c["data"]["ok"] is True, c["text"][:400]
        assert r["facts"] and len(r["facts"]) == 1 and r["facts"][0]["author"] == AGENT[1]
        assert "Plan-Status" not in r.get("trailers", ""), r.get("trailers")
        assert "Co-authored-by" not in r.get("trailers", ""), r.get("trailers")
        assert "\x00" not in r.get("msg", "") and "\x1b" not in r.get("msg", ""), r.get("msg")
    elif kind == "answered":
        assert c["data"] is not None, c
        assert c["error"] or c["data"].get("changed") is False, c
        assert r["facts"] == [], r["facts"]
    elif kind == "invalid":
        assert not c["error"] and c["data"]["valid"] is False, c["text"][:400]
        assert all(str(e.get("code", "")).startswith("E_") for e in c["data"]["errors"]), c
        assert r.get("secs", 0) < 30 and r["facts"] == []
