"""Round 116 (runs, atk116d): the shared checkout moved off the watched branch, or its index
played with, by the agent's own tool WHILE a plan runs. Local mode.

Lab ``L`` (one build, module scope): exec tool ``t116`` (``rec`` records; ``hook`` runs
``hook-<t>.py``, a git attack by the agent on the shared repository, then records). Every plan
``x`` has actions ``x-1`` (the hook), ``x-2``, ``x-3``; ``calls.log`` is the ground truth.
One plan per pass: Alice approves ``x`` on main, one ``run --once`` (the hook plays during
action 1), the checkout is observed as the agent left it, then the owner tidies (main checked
out, no lock, no linked worktree, no symref) and two more passes commit what waited. The
fresh-clone ``plangate audit`` closes the lab.

Variants (the hook):

- foreign checkout, the controller's outcome written after it: ``co`` (``checkout -b``),
  ``dt`` (``--detach``), ``nb`` (a branch from before any plan), ``ac`` (``core.autocrlf``
  then ``checkout -b``), ``dn`` (detached, an untracked note), ``nl`` (another branch, the
  agent's untracked ``EXECUTION_LOG.md``), ``sl`` (another branch, the agent's staged
  ``EXECUTION_LOG.md``), ``gf`` (another branch carrying a ``.gitattributes`` filter the agent
  defined in ``.git/config``), ``fc`` (another branch; after the pass the agent's ordinary
  commit of its own note there, then its merge of that branch into main), ``fg`` (another
  branch, the plan pausing at a gate on action 2; Alice approves the gate on main after);
- foreign checkout that holds the plan otherwise: ``ol`` (a branch with the unfrozen plan),
  ``eo`` (the same, the file edited), ``ed`` (another branch, PLAN.yml edited), ``sp`` (another
  branch, PLAN.yml edit staged), ``nu`` (a branch with no plan, the agent's untracked draft at
  the path), ``fl`` (another branch where the plan's folder is a committed symlink out of
  the repository), ``pl`` (another branch where ``plans`` itself is a committed symlink out
  of the repository);
- the watched branch's index and tree: ``ml``/``ms`` (the agent's own log untracked/staged at
  the controller's path), ``mn`` (a staged note, an untracked draft beside the plan), ``rk``
  (``git rm --cached PLAN.yml``), ``rc`` (the same, the file edited), ``sh`` (a staged edit
  of PLAN.yml stashed), ``il`` (``.git/index.lock`` a folder), ``sc`` (sparse checkout
  leaving the plan out), ``si`` (cone mode with a sparse index), ``ce`` (``core.worktree``
  pointing elsewhere), ``ma`` (a staged edit of PLAN.yml), ``sw``/``au`` (PLAN.yml marked
  ``--skip-worktree``/``--assume-unchanged``, then edited), ``ek`` (a staged note and a
  ``git commit -e`` left running in the background by the tool, its editor open);
- other worktrees and refs: ``wf`` (a linked worktree on a feature branch with a staged
  file), ``wr`` (a linked worktree forced onto main; after the pass the agent's plain ``git
  commit`` there, its stale index a revert of the run), ``wa``/``wb`` (a linked worktree
  forced onto main right after Alice's approval; after the run, a plain commit there by the
  agent / by Alice sets the plan back to ``approved``: a second run asked for), ``sr``
  (``refs/heads/main`` made a symbolic ref to ``side-sr``; after the pass the agent points
  main back, plain, at Alice's approval).
- ``pre:*``: a pass started with the checkout on another branch, detached, or main a symref.

Ids: ``once[x]`` (each action called exactly once, at the end), ``final[x]`` (main and the
status row say ``completed``), ``ctl_only[x]`` (every commit on main touching the plan after
Alice's approval is the controller's), ``audit[x]`` (fresh-clone audit: the run valid, once),
``foreign_tip[x]`` (the foreign branch never moved by the controller), ``foreign_index[x]``
(after the pass, the foreign checkout's index holds only what the agent staged: the
controller staged nothing on a branch it does not watch), ``agent[x]`` (the agent's own work
as it left it), ``pre:*``, ``ctl:*``.

Seen (round 116, 219 ids, ~65-75 s wall on 1 worker): 205 passed, 14 xfailed (strict),
two classes.

**outcome-staged-on-foreign-checkout** (13 ids: ``foreign_index[co,dt,nb,ac,dn,nl,sl,gf,fc,
fg]``, ``agent[nl,sl,fc]``): the pass checks the branch only at its start (a pass started
off main is ``E_GIT`` "the working tree is on branch side, but plangate watches main"); when
the agent's checkout leaves main DURING a run (``checkout -b``, ``--detach``, an older
branch), the outcome (or a gate's pause) commit still lands on main alone, but the
controller then writes its PLAN.yml and EXECUTION_LOG.md into that checkout and points the
index entries at them. ``git status`` on ``side-co`` (made at the start commit): ``A
plans/co/EXECUTION_LOG.md``, ``M plans/co/PLAN.yml``, both holding main's ``complete``
bytes; on ``bare0`` (no plans at all): ``A`` and ``A``; on ``side-fg``: the
``await-approval`` record. The agent's own untracked ``EXECUTION_LOG.md`` there is
overwritten (``nl``), its staged one replaced in the index and the tree (``sl``), and its
ordinary ``git commit -m "agent: my note"`` after adding only ``notes/fc.txt`` committed
``plans/fc/EXECUTION_LOG.md`` and ``plans/fc/PLAN.yml`` too, under the agent's name
(``fc``). Main never carried a foreign byte: the agent's merge of ``side-fc`` changed only
the note (identical bytes), every run ran once, the audits call each run valid. SPEC §7 and
docs/execution.md ("Checkpoints": a person's ``git commit`` during a run carries only their
own edits; docs/approvals.md: plangate never stages anyone's work) promise otherwise.

**staged-removal-discarded** (1 id: ``agent[rk]``): ``git rm --cached plans/rk/PLAN.yml``
(the file left as is) during the run: the outcome commit went ahead and its index write put
the entry back (``git status`` clean), where an edit of the file (``rc``: removal plus an
edit; ``ma``: a staged edit; ``ed``: an unstaged one) makes the outcome wait, as
docs/approvals.md says for "uncommitted edits to a PLAN.yml plangate must write".

Held: a checkout whose index or tree differs from the watched branch at the plan's files
(the unfrozen version on ``old``, an edit, a staged edit, an untracked draft on a branch
without the plan, the folder a symlink: ``E_UNSAFE_PATH``, nothing written through it) makes
the outcome wait until main is checked out again, the agent's edit kept; every controller
commit on main (``sr``: main made a symbolic ref to ``side-sr`` mid-run, the outcome went to
``side-sr`` through it; the agent then pointing main back at Alice's approval is refused
``E_ALREADY_EXECUTED``, nothing re-runs); the agent's ``.gitattributes`` filter never run by
the controller's git; a linked worktree on a feature branch untouched; a linked worktree
forced onto main: its stale index commits a revert of the run under the agent's name, which
is ``E_ILLEGAL_TRANSITION`` (ignored; no second run) and flagged by the audit
(``log-changed``, ``owned-block-changed``, ``illegal``); ``.git/index.lock`` a folder:
``E_GIT``, the outcome waits; ``core.worktree`` elsewhere, sparse checkout, sparse index, a
stash of a staged plan edit: completed once, the stash kept; skip-worktree and
assume-unchanged do not hide an edit (the outcome waits, the edit kept); a ``git commit``
the tool left running is stopped with it (the note stays staged); the stale linked
checkout's commit setting ``approved`` again, by the agent or by Alice: refused, nothing
re-runs; a pass started off main (a
branch, detached, main a symref) refused ``E_GIT``, nothing staged.

Not tried: remote mode; a gate (``await-approval``) written into a foreign checkout; the
daemon's file watcher (only ``run --once``); submodules.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit_got
from test_round2_execution_kit import shared

PY = sys.executable

TOOL = r"""
import json, os, subprocess, sys
m, t, d = sys.argv[1], sys.argv[2], os.environ["T_DIR"]
raw = sys.stdin.read()
with open(os.path.join(d, "calls.log"), "a") as f:
    f.write(json.dumps({"t": t, "m": m}) + "\n")
if m == "hook":
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
               GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com",
               HOME=os.environ["T_HOME"], GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=os.environ["T_GCFG"])
    repo = os.environ["T_REPO"]
    top = os.path.dirname(repo)
    def git(*a, cwd=None):
        r = subprocess.run(["git", *a], cwd=cwd or repo, env=env, capture_output=True, text=True)
        with open(os.path.join(d, "hook.log"), "a") as f:
            f.write(json.dumps({"t": t, "a": a, "rc": r.returncode, "err": r.stderr[-300:]})
                    + "\n")
        return r.stdout.strip()
    def put(rel, text, base=None):
        p = os.path.join(base or repo, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", newline="") as f:
            f.write(text)
    def add_line(rel, line):
        p = os.path.join(repo, rel)
        put(rel, open(p, newline="").read() + line)
    exec(open(os.path.join(d, "hook-" + t + ".py")).read())
print(json.dumps({"ok": True, "t": t}))
"""

FILTER = r"""#!/bin/sh
# who ran the agent's filter: the chain of parent command lines
chain=""
p=$PPID
n=0
# eight levels reach the lab's own process; above it, the runner's command lines
# (a CI harness's) are not this lab's and may hold any bytes
while [ "$p" -gt 1 ] 2>/dev/null && [ "$n" -lt 8 ]; do
  n=$((n + 1))
  chain="$chain <$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null)>"
  p=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
  [ -z "$p" ] && break
done
echo "FILTER RAN $* BY$chain" >> "{d}/filter-ran.log"
cat
"""

#: action 1's git attack on the shared checkout, per variant
HOOKS = {
    # -- the checkout leaves main mid-run; nothing of the plan differs there
    "co": "git('checkout', '-q', '-b', 'side-co')\n",
    "dt": "git('checkout', '-q', '--detach')\n",
    "nb": "git('checkout', '-q', 'bare0')\n",
    "ac": "git('config', 'core.autocrlf', 'true')\ngit('checkout', '-q', '-b', 'side-ac')\n",
    "dn": "git('checkout', '-q', '--detach')\nput('plans/dn/NOTES.md', 'AGENT NOTES DN\\n')\n",
    "nl": "git('checkout', '-q', '-b', 'side-nl')\n"
    "put('plans/nl/EXECUTION_LOG.md', 'AGENT OWN LOG NL\\n')\n",
    "sl": "git('checkout', '-q', '-b', 'side-sl')\n"
    "put('plans/sl/EXECUTION_LOG.md', 'AGENT STAGED LOG SL\\n')\n"
    "git('add', 'plans/sl/EXECUTION_LOG.md')\n",
    "gf": "git('checkout', '-q', '-b', 'side-gf')\n"
    "put('.gitattributes', '* filter=evil\\n')\n"
    "git('config', 'filter.evil.clean', os.path.join(d, 'filter.sh') + ' clean %f')\n"
    "git('config', 'filter.evil.smudge', os.path.join(d, 'filter.sh') + ' smudge %f')\n"
    "git('add', '.gitattributes')\ngit('commit', '-q', '-m', 'agent: attributes')\n",
    # -- the checkout leaves main for a branch that holds the plan otherwise
    "ol": "git('checkout', '-q', 'old')\n",
    "eo": "git('checkout', '-q', 'old')\nadd_line('plans/eo/PLAN.yml', '# AGENT-EDIT-EO\\n')\n",
    "ed": "git('checkout', '-q', '-b', 'side-ed')\n"
    "add_line('plans/ed/PLAN.yml', '# AGENT-EDIT-ED\\n')\n",
    "sp": "git('checkout', '-q', '-b', 'side-sp')\n"
    "add_line('plans/sp/PLAN.yml', '# AGENT-STAGED-SP\\n')\ngit('add', 'plans/sp/PLAN.yml')\n",
    "nu": "git('checkout', '-q', 'bare0')\nput('plans/nu/PLAN.yml', 'AGENT DRAFT NU\\n')\n",
    # -- main stays checked out; its index and tree are played with
    "ml": "put('plans/ml/EXECUTION_LOG.md', 'AGENT OWN LOG ML\\n')\n",
    "ms": "put('plans/ms/EXECUTION_LOG.md', 'AGENT STAGED LOG MS\\n')\n"
    "git('add', 'plans/ms/EXECUTION_LOG.md')\n",
    "mn": "put('plans/mn/NOTES.md', 'AGENT STAGED NOTES MN\\n')\ngit('add', 'plans/mn/NOTES.md')\n"
    "put('plans/mn/DRAFT.md', 'AGENT UNTRACKED MN\\n')\n",
    "rk": "git('rm', '-q', '--cached', 'plans/rk/PLAN.yml')\n",
    "rc": "git('rm', '-q', '--cached', 'plans/rc/PLAN.yml')\n"
    "add_line('plans/rc/PLAN.yml', '# AGENT-EDIT-RC\\n')\n",
    "sh": "add_line('plans/sh/PLAN.yml', '# AGENT-STASHED-SH\\n')\n"
    "git('add', 'plans/sh/PLAN.yml')\ngit('stash', 'push', '-q', '-m', 'agent-sh')\n",
    "il": "os.mkdir(os.path.join(repo, '.git', 'index.lock'))\n",
    "sc": "git('sparse-checkout', 'set', '--no-cone', '/README', '/plans/ml/')\n",
    "ce": "os.makedirs(os.path.join(top, 'elsewhere'), exist_ok=True)\n"
    "git('config', 'core.worktree', os.path.join(top, 'elsewhere'))\n",
    "ma": "add_line('plans/ma/PLAN.yml', '# AGENT-STAGED-MA\\n')\n"
    "git('add', 'plans/ma/PLAN.yml')\n",
    "si": "git('sparse-checkout', 'init', '--cone', '--sparse-index')\n"
    "git('sparse-checkout', 'set', 'notes')\n",
    "fl": "git('checkout', '-q', '-b', 'side-fl')\n"
    "git('rm', '-q', '-r', 'plans/fl')\n"
    "os.makedirs(os.path.join(top, 'outside-fl'), exist_ok=True)\n"
    "os.symlink(os.path.join(top, 'outside-fl'), os.path.join(repo, 'plans', 'fl'))\n"
    "git('add', 'plans/fl')\ngit('commit', '-q', '-m', 'agent: link')\n",
    "sw": "git('update-index', '--skip-worktree', 'plans/sw/PLAN.yml')\n"
    "add_line('plans/sw/PLAN.yml', '# AGENT-EDIT-SW\\n')\n",
    "au": "git('update-index', '--assume-unchanged', 'plans/au/PLAN.yml')\n"
    "add_line('plans/au/PLAN.yml', '# AGENT-EDIT-AU\\n')\n",
    "ek": "put('notes/ek.txt', 'agent note ek\\n')\ngit('add', 'notes/ek.txt')\n"
    "subprocess.Popen(['git', 'commit', '-q', '-e', '-m', 'agent: note ek'], cwd=repo,"
    " env={**env, 'GIT_EDITOR': 'sleep 3 && true'}, start_new_session=True,"
    " stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, 'ek.err'), 'w'))\n",
    "pl": "git('checkout', '-q', '-b', 'side-pl')\n"
    "os.makedirs(os.path.join(top, 'outside-pl'), exist_ok=True)\n"
    "os.rename(os.path.join(repo, 'plans'), os.path.join(top, 'outside-pl', 'plans'))\n"
    "os.symlink(os.path.join(top, 'outside-pl', 'plans'), os.path.join(repo, 'plans'))\n"
    "git('add', '-A', 'plans')\ngit('commit', '-q', '-m', 'agent: plans a link')\n",
    "fc": "git('checkout', '-q', '-b', 'side-fc')\n",
    "fg": "git('checkout', '-q', '-b', 'side-fg')\n",
    # -- other worktrees and refs of the same repository
    "wf": "w = os.path.join(top, 'wt-wf')\ngit('worktree', 'add', '-q', w, '-b', 'feat-wf')\n"
    "put('F.txt', 'agent wf\\n', base=w)\ngit('add', 'F.txt', cwd=w)\n",
    "wr": "git('worktree', 'add', '-q', '--force', os.path.join(top, 'wt-wr'), 'main')\n",
    "wa": "pass\n",
    "wb": "pass\n",
    "sr": "git('branch', 'side-sr')\n"
    "git('symbolic-ref', 'refs/heads/main', 'refs/heads/side-sr')\n",
}

FOREIGN = ["co", "dt", "nb", "ac", "dn", "nl", "sl", "gf", "fc", "fg"]
HOLDS = ["ol", "eo", "ed", "sp", "nu", "fl", "pl"]
MAIN = ["ml", "ms", "mn", "rk", "rc", "sh", "il", "sc", "ce", "ma", "si", "sw", "au", "ek"]
OTHER = ["wf", "wr", "wa", "wb", "sr"]
ALL = FOREIGN + HOLDS + MAIN + OTHER
#: the branch the hook leaves checked out (None: detached); absent: main
AWAY = {
    "co": "side-co", "dt": None, "nb": "bare0", "ac": "side-ac", "dn": None, "nl": "side-nl",
    "sl": "side-sl", "gf": "side-gf", "ol": "old", "eo": "old", "ed": "side-ed",
    "sp": "side-sp", "nu": "bare0", "fl": "side-fl", "fc": "side-fc",
    "fg": "side-fg", "pl": "side-pl",
}  # fmt: skip
#: what the agent itself staged (paths) in the foreign checkout
AGENT_STAGED = {"sl": {"plans/sl/EXECUTION_LOG.md"}, "sp": {"plans/sp/PLAN.yml"}}


def _act(i: int, m: str, t: str) -> str:
    return f'  - id: {i}\n    tool: t116\n    why: "{t}"\n    params: {{m: {m}, t: "{t}"}}\n'


def _plan(x: str) -> str:
    return (
        f'plan:\n  name: "{x}"\n  task: "atk116d {x}"\n  status: pending_approval\n'
        "available_tools:\n  - name: t116\nactions:\n"
        + _act(1, "hook" if x in HOOKS else "rec", f"{x}-1")
        + _act(2, "rec", f"{x}-2")
        + ("    requires_approval: true\n" if x == "fg" else "")
        + _act(3, "rec", f"{x}-3")
    )


def _rows(d: Path) -> list[dict[str, Any]]:
    p = d / "calls.log"
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()] if p.exists() else []


def _pass(lab: Lab, tag: str) -> tuple[int, str]:
    r = lab.run(check=False)
    lab.seen["passes"].append((tag, r.returncode, r.stderr[-1200:]))  # type: ignore[attr-defined]
    return r.returncode, r.stderr


def _main_status(lab: Lab, x: str) -> Any:
    with contextlib.suppress(Exception):
        return lab.plan(x, "main").get("plan", {}).get("status")
    return None


def _tidy(lab: Lab) -> None:
    """The owner puts the checkout back on main as main's tip (main itself never moved)."""
    g = lab.git
    for w in lab.repo.parent.glob("wt-*"):
        g("worktree", "remove", "--force", str(w), check=False)
    g("worktree", "prune", check=False)
    g("config", "--unset", "core.worktree", check=False)
    g("config", "--unset", "core.autocrlf", check=False)
    g("config", "--remove-section", "filter.evil", check=False)
    g("sparse-checkout", "disable", check=False)
    lock = lab.repo / ".git" / "index.lock"
    if lock.is_dir():
        lock.rmdir()
    # ``ek``'s tool leaves the agent's ``git commit`` running (its editor sleeps 3 s); the
    # call's end stops it. Its lock, while it still holds one, is waited for (bounded) as its
    # owner would. (CI 2026-12-06 and the stop of 2026-12-07: 219 setup errors; the cause was
    # the stop's SIGKILL landing while git held the lock, leaving it stale for good. The stop
    # now sends SIGTERM first, and git removes its lock: tests/execution/test_tool_cgroup.py.)
    deadline = time.monotonic() + 60
    while lock.is_file() and time.monotonic() < deadline:
        time.sleep(0.2)
    if g("symbolic-ref", "-q", "refs/heads/main", check=False).strip():
        g("update-ref", "--no-deref", "refs/heads/main", lab.head("main"))
    g("checkout", "-q", "-f", "main")
    g("reset", "-q", "--hard", "main")
    g("clean", "-q", "-fdx")


def _observe(lab: Lab, x: str) -> dict[str, Any]:
    g = lab.git
    o: dict[str, Any] = {
        "head": g("symbolic-ref", "-q", "--short", "HEAD", check=False).strip() or None,
        "porcelain": g("status", "--porcelain", check=False),
        "cached": set(g("diff", "--cached", "--name-only", check=False).split()),
        "ls": g("ls-files", "-s", f"plans/{x}", check=False),
        "main_status": _main_status(lab, x),
        "files": {},
        "staged": {},
    }
    folder = lab.repo / "plans" / x
    for f in ("PLAN.yml", "EXECUTION_LOG.md", "NOTES.md", "DRAFT.md"):
        with contextlib.suppress(OSError):
            o["files"][f] = (folder / f).read_text(encoding="utf-8", errors="replace")
        o["staged"][f] = g("show", f":plans/{x}/{f}", check=False)
    return o


def _build(root: Path) -> Lab:
    d = root / "t"
    d.mkdir(parents=True)
    (d / "t116.py").write_text(TOOL)
    (d / "filter.sh").write_text(FILTER.format(d=d))
    (d / "filter.sh").chmod(0o755)
    for x, hook in HOOKS.items():
        (d / f"hook-{x}-1.py").write_text(hook)
    lab = Lab(root / "L")
    argv = json.dumps([PY, str(d / "t116.py"), "{m}", "{t}"])
    env = json.dumps(
        {
            "T_DIR": str(d),
            "T_REPO": str(lab.repo),
            "T_HOME": str(lab.home),
            "T_GCFG": str(lab.root / "gitconfig"),
        }
    )
    lab.env()  # writes the lab's global gitconfig
    lab.write_config(tools=f"t116: {{kind: exec, argv: {argv}, env: {env}}}\n")
    lab.t = d  # type: ignore[attr-defined]
    seen: dict[str, Any] = {"passes": []}
    lab.seen = seen  # type: ignore[attr-defined]
    for x in [*ALL, "pp", "pd", "ps"]:
        lab.write(x, _plan(x))
    lab.commit("agent: plans")
    lab.git("branch", "old")  # the plans as the agent wrote them, never frozen
    lab.git("branch", "bare0", "HEAD~1")  # before any plan
    _pass(lab, "freeze")
    for x in ALL:
        lab.set_status(x, "approved")
        lab.git("add", f"plans/{x}/PLAN.yml")
        lab.git("commit", "-q", "-m", f"approve {x}", who=ALICE)
        seen[f"{x}:appr"] = lab.head("main")
        away = AWAY.get(x, "main")
        seen[f"{x}:away_tip0"] = (
            lab.git("rev-parse", "-q", "--verify", f"refs/heads/{away}", check=False).strip()
            if away not in (None, "main")
            else None
        )
        if x in ("wa", "wb"):  # a linked checkout of main made right after the approval
            w = lab.repo.parent / f"wt-{x}"
            lab.git("worktree", "add", "-q", "--force", str(w), "main", who=AGENT)
        rc, err = _pass(lab, x)
        seen[f"{x}:pass"] = (rc, err[-1500:])
        seen[f"{x}:obs"] = _observe(lab, x)
        seen[f"{x}:away_tip"] = (
            lab.git("rev-parse", "-q", "--verify", f"refs/heads/{away}", check=False).strip()
            if away not in (None, "main")
            else None
        )
        seen[f"{x}:away_reflog"] = (
            lab.git("reflog", "show", "--format=%gs", f"refs/heads/{away}", check=False)
            if away not in (None, "main")
            else ""
        )
        if x == "sh":
            seen["sh:stash"] = lab.git("show", "stash@{0}:plans/sh/PLAN.yml", check=False)
        if x == "il":
            seen["il:lockdir"] = (lab.repo / ".git" / "index.lock").is_dir()
        if x == "si":
            seen["si:sparse"] = lab.git("sparse-checkout", "list", check=False)
        if x == "sc":
            seen["sc:sparse"] = lab.git("config", "core.sparseCheckout", check=False).strip()
        if x == "ce":
            seen["ce:cfg"] = lab.git("config", "core.worktree", check=False).strip()
        if x == "wf":
            w = lab.repo.parent / "wt-wf"
            seen["wf:wt"] = lab.git("-C", str(w), "status", "--porcelain", check=False)
        if x == "wr":
            w = lab.repo.parent / "wt-wr"
            seen["wr:wt"] = lab.git("-C", str(w), "status", "--porcelain", check=False)
            # the agent's ordinary commit in its (stale) linked checkout of main
            lab.git("-C", str(w), "commit", "-q", "-m", "agent: my work", who=AGENT, check=False)
            seen["wr:agent_commit"] = lab.git("log", "-1", "--format=%H %an %s", "main").strip()
        if x == "fc":
            lab.put("notes/fc.txt", "agent note fc\n")
            lab.git("add", "notes/fc.txt")
            lab.git("commit", "-q", "-m", "agent: my note", who=AGENT)
            seen["fc:side_commit"] = lab.git(
                "show", "--name-only", "--format=%an|%s", "side-fc", check=False
            )
        if x == "ek":  # the agent's own commit, its editor open, left running by the tool
            seen["ek:main_has"] = lab.git("ls-tree", "-r", "--name-only", "main", "notes")
            seen["ek:err"] = (d / "ek.err").read_text() if (d / "ek.err").exists() else ""
        if x == "pl":
            out = lab.repo.parent / "outside-pl" / "plans" / "pl"
            seen["pl:outside"] = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
            seen["pl:outside_plan"] = (out / "PLAN.yml").read_text() if out.is_dir() else ""
        if x == "fl":
            seen["fl:outside"] = sorted(p.name for p in (lab.repo.parent / "outside-fl").iterdir())
        if x in ("wa", "wb"):
            # its stale index holds Alice's approved version: a plain commit there, by the
            # agent (wa) or by Alice working in that checkout (wb), sets it back on main
            w = lab.repo.parent / f"wt-{x}"
            who = AGENT if x == "wa" else ALICE
            seen[f"{x}:wt"] = lab.git("-C", str(w), "status", "--porcelain", check=False)
            lab.git("-C", str(w), "commit", "-q", "-m", "my work", who=who, check=False)
            seen[f"{x}:stale_commit"] = lab.git("log", "-1", "--format=%H %an %s", "main")
            seen[f"{x}:stale_status"] = _main_status(lab, x)
        if x == "sr":
            seen["sr:refs"] = lab.git("for-each-ref", "--format=%(refname) %(objectname) %(symref)")
            seen["sr:side_tip"] = lab.head("refs/heads/side-sr")
        _tidy(lab)
        if x == "fg":  # Alice approves the gate on main
            seen["fg:paused"] = _main_status(lab, "fg")
            lab.set_status("fg", "approved")
            lab.git("add", "plans/fg/PLAN.yml")
            lab.git("commit", "-q", "-m", "approve gate fg", who=ALICE)
        if x == "fc":  # the agent merges its branch (the controller's bytes in it) into main
            lab.git("merge", "-q", "--no-ff", "-m", "agent: merge side-fc", "side-fc", who=AGENT)
            seen["fc:merge"] = lab.git(
                "show", "--stat", "--format=%an|%s", "-m", "--first-parent", "main"
            )
        if x == "sr":  # the agent points main back at Alice's approval, a plain ref again
            lab.git("update-ref", "--no-deref", "refs/heads/main", seen["sr:appr"])
            lab.git("reset", "-q", "--hard", "main")
        seen[f"{x}:b"] = _pass(lab, f"{x}-b")[1][-3000:]
        _pass(lab, f"{x}-c")
        seen[f"{x}:rows_after"] = lab.rows().get(f"plans/{x}", {})
    # -- a pass that STARTS with the checkout off main
    for x, how in (("pp", "branch"), ("pd", "detach"), ("ps", "symref")):
        lab.set_status(x, "approved")
        lab.git("add", f"plans/{x}/PLAN.yml")
        lab.git("commit", "-q", "-m", f"approve {x}", who=ALICE)
        if how == "branch":
            lab.git("checkout", "-q", "-b", "side-pp")
        elif how == "detach":
            lab.git("checkout", "-q", "--detach")
        else:
            lab.git("branch", "side-ps")
            lab.git("symbolic-ref", "refs/heads/main", "refs/heads/side-ps")
        rc, err = _pass(lab, x)
        seen[f"{x}:pre"] = (rc, err[-1500:], _rows(d))
        seen[f"{x}:pre_porcelain"] = lab.git("status", "--porcelain", check=False)
        _tidy(lab)
        _pass(lab, f"{x}-b")
        seen[f"{x}:rows_after"] = lab.rows().get(f"plans/{x}", {})
    seen["calls"] = _rows(d)
    seen["rows"] = lab.rows()
    seen["audit"] = clone_audit_got(lab, root)
    ran = d / "filter-ran.log"
    seen["filter"] = ran.read_bytes().decode("utf-8", "replace") if ran.exists() else ""
    seen["log"] = lab.git("log", "--first-parent", "--format=%H %an|%s", "main")
    seen["files"] = lab.git("log", "--format=@@%an", "--name-only", "main")
    seen["bot_off_main"] = sorted(
        set(lab.git("rev-list", "--all", "--author=plangate").split())
        - set(lab.git("rev-list", "main", "--author=plangate").split())
    )
    seen["sr_side_commits"] = lab.git(
        "rev-list", "--author=plangate", f"{seen['sr:appr']}..refs/heads/side-sr", check=False
    ).split()
    seen["bot_merges"] = lab.git("rev-list", "--merges", "--author=plangate", "main").split()
    for x in [*ALL, "pp", "pd", "ps"]:
        appr = (
            seen.get(f"{x}:appr")
            or lab.git("log", "-1", "--format=%H", "--author=alice", "--", f"plans/{x}").strip()
        )
        seen[f"{x}:appr"] = appr
        seen[f"{x}:after"] = lab.git(
            "log", "--first-parent", "--format=%an|%s", f"{appr}..main", "--", f"plans/{x}",
            check=False,
        )  # fmt: skip
        seen[f"{x}:final"] = _main_status(lab, x)
        with contextlib.suppress(Exception):
            seen[f"{x}:xlog"] = lab.git("show", f"main:plans/{x}/EXECUTION_LOG.md")
    return lab


@pytest.fixture(scope="module")
def L(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "r116d-L", _build).seen  # type: ignore[attr-defined]


def _called(g: dict[str, Any], t: str) -> int:
    return sum(1 for r in g["calls"] if r["t"] == t)


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_once(L: dict[str, Any], x: str) -> None:
    """Each frozen action of the plan ran exactly once, whatever the checkout did."""
    got = {t: _called(L, t) for t in (f"{x}-1", f"{x}-2", f"{x}-3")}
    assert got == {f"{x}-1": 1, f"{x}-2": 1, f"{x}-3": 1}, (got, L[f"{x}:pass"][1][-600:])


FINAL = {x: "completed" for x in ALL}


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_final(L: dict[str, Any], x: str) -> None:
    """Main and the status row record the one run as completed (sr: the agent rewound main
    to Alice's approval; the row and the refusal say it already ran)."""
    row = L["rows"].get(f"plans/{x}", {})
    if x == "sr":
        assert "E_ALREADY_EXECUTED" in json.dumps(row) + L["sr:b"], (row, L["sr:b"][-600:])
        return
    if x == "wr":  # the agent's stale-index commit put main's file back to executing
        assert row.get("status") == "completed", row
        return
    if x in ("wa", "wb"):  # the stale commit set 'approved' again: ignored, never re-run
        who = "agent" if x == "wa" else "alice"
        want = f"E_ILLEGAL_TRANSITION: {who}@example.com set status approved (from completed)"
        assert row.get("status") == "completed", row
        assert any(n.startswith(want) for n in row.get("notes") or []), row.get("notes")
        assert any("E_OWNED_BLOCK_CHANGED" in n for n in row.get("notes") or []), row
        return
    assert L[f"{x}:final"] == FINAL[x], (L[f"{x}:final"], row)
    assert row.get("status") == FINAL[x], row


CTL = [x for x in ALL if x not in ("wr", "wa", "wb", "sr", "fg")]


@pytest.mark.parametrize("x", cases(CTL, CTL, {}))
def test_ctl_only(L: dict[str, Any], x: str) -> None:
    """Every first-parent commit on main that touches the plan after Alice's approval is the
    controller's (start, complete): no foreign byte under anyone's name."""
    lines = [ln for ln in L[f"{x}:after"].splitlines() if ln.strip()]
    assert lines and all(ln.startswith("plangate|plangate: ") for ln in lines), lines
    assert [ln.split(" ")[1] for ln in lines][::-1] == ["start", "complete"], lines


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_audit(L: dict[str, Any], x: str) -> None:
    """The fresh-clone audit calls the plan's run valid (sr: the agent's rewind erased it
    from main; nothing there calls a second run valid)."""
    execs = [
        e
        for e in L["audit"]["report"].get("executions", [])
        if e.get("plan") == f"plans/{x}" and e.get("approval_valid")
    ]
    if x == "sr":
        assert len(execs) <= 1, execs
        return
    if x == "fg":  # the start and the gate's resume, each on its own approval by Alice
        assert len(execs) == 2 and len({e["approval_commit"] for e in execs}) == 2, execs
        return
    assert len(execs) == 1, (execs, L["audit"]["err"])


AWAYB = [x for x in FOREIGN + HOLDS if AWAY[x] is not None]


@pytest.mark.parametrize("x", cases(AWAYB, AWAYB, {}))
def test_foreign_tip(L: dict[str, Any], x: str) -> None:
    """The branch the agent checked out is never moved by the controller: a branch that
    existed keeps its tip; one the hook made moved only by the agent's own git (its reflog:
    the branch made, and ``gf``'s commit of the attributes)."""
    if L[f"{x}:away_tip0"]:
        assert L[f"{x}:away_tip"] == L[f"{x}:away_tip0"], (x, L[f"{x}:away_reflog"])
        return
    moves = L[f"{x}:away_reflog"].strip().splitlines()
    assert all(m.startswith("commit: agent: ") for m in moves[:-1]), moves
    assert moves[-1].startswith("branch: Created"), moves


@pytest.mark.parametrize("x", cases(FOREIGN + HOLDS, FOREIGN + HOLDS, {}))
def test_foreign_index(L: dict[str, Any], x: str) -> None:
    """After the pass, the checkout of the branch the controller does not watch stages only
    what the agent staged: no PLAN.yml or EXECUTION_LOG.md of the controller's run waits
    there for the next plain ``git commit``."""
    o = L[f"{x}:obs"]
    assert o["head"] == AWAY[x], o["head"]
    extra = o["cached"] - AGENT_STAGED.get(x, set())
    assert not extra, (sorted(extra), o["porcelain"])


def _agent_checks(L: dict[str, Any], x: str) -> None:
    o = L[f"{x}:obs"]
    f, s = o["files"], o["staged"]
    if x == "dn":
        assert f.get("NOTES.md") == "AGENT NOTES DN\n", f.get("NOTES.md")
    elif x == "nl":
        assert f.get("EXECUTION_LOG.md") == "AGENT OWN LOG NL\n", f.get("EXECUTION_LOG.md", "")[
            :200
        ]
    elif x == "sl":
        assert s["EXECUTION_LOG.md"] == "AGENT STAGED LOG SL\n", s["EXECUTION_LOG.md"][:200]
        assert f.get("EXECUTION_LOG.md") == "AGENT STAGED LOG SL\n"
    elif x == "gf":
        by_ctl = [ln for ln in L["filter"].splitlines() if "--once" in ln and "t116.py" not in ln]
        assert not by_ctl, by_ctl
    elif x in ("eo", "ed"):
        assert f.get("PLAN.yml", "").endswith(f"# AGENT-EDIT-{x.upper()}\n"), f.get("PLAN.yml")
        assert o["main_status"] == "executing", o["main_status"]  # the outcome waited
    elif x == "sp":
        assert s["PLAN.yml"].endswith("# AGENT-STAGED-SP\n"), s["PLAN.yml"][-200:]
        assert o["main_status"] == "executing", o["main_status"]
    elif x == "nu":
        assert f.get("PLAN.yml") == "AGENT DRAFT NU\n", f.get("PLAN.yml")
        assert o["main_status"] == "executing", o["main_status"]
    elif x == "ma":
        assert s["PLAN.yml"].endswith("# AGENT-STAGED-MA\n"), s["PLAN.yml"][-200:]
        assert o["main_status"] == "executing", o["main_status"]
    elif x == "si":
        assert "notes" in L["si:sparse"], L["si:sparse"]
    elif x == "fl":
        assert L["fl:outside"] == [], L["fl:outside"]
    elif x == "fc":
        # the agent's ordinary commit of its own note on its branch carries its note only
        names = L["fc:side_commit"].strip().splitlines()
        assert names[0] == "Agent|agent: my note" and names[1:] == ["", "notes/fc.txt"], names
    elif x in ("sw", "au"):
        mark = f"# AGENT-EDIT-{x.upper()}\n"
        assert f.get("PLAN.yml", "").endswith(mark), f.get("PLAN.yml", "")[-120:]
        assert o["main_status"] == "executing", o["main_status"]
    elif x == "ek":
        # the tool's left-behind ``git commit`` (editor open) is stopped with the tool: its
        # staged note stays staged, never committed by anyone, the lock not left behind
        assert "A  notes/ek.txt" in o["porcelain"], o["porcelain"]
        assert "notes/ek.txt" not in L["ek:main_has"], L["ek:main_has"]
    elif x == "pl":
        # nothing written through the link: the plan folder out there holds the agent's
        # plan as it moved it (no log, no run record)
        assert L["pl:outside"] == ["PLAN.yml"], L["pl:outside"]
        assert (
            "execution:" not in L["pl:outside_plan"]
            or "status: completed" not in (L["pl:outside_plan"])
        ), L["pl:outside_plan"][-300:]
    elif x == "fg":
        assert L["fg:paused"] == "awaiting_approval", L["fg:paused"]
    elif x == "ol":
        assert o["main_status"] == "executing" and not o["cached"], (o["main_status"], o["cached"])
    elif x in ("ml", "ms"):
        # the controller's own path on its own branch: its log, committed and checked out
        log = L.get(f"{x}:xlog", "")
        assert f"{x}-3" in log and "AGENT" not in log, log[:300]
        assert not o["porcelain"].strip(), o["porcelain"]
    elif x == "mn":
        assert s["NOTES.md"] == "AGENT STAGED NOTES MN\n", o["porcelain"]
        assert f.get("DRAFT.md") == "AGENT UNTRACKED MN\n", o["porcelain"]
    elif x == "rk":
        # the agent's staged removal is an uncommitted edit of the plan file: kept, or waited on
        assert "D  plans/rk/PLAN.yml" in o["porcelain"] or o["main_status"] == "executing", (
            o["porcelain"],
            o["main_status"],
        )
    elif x == "rc":
        assert f.get("PLAN.yml", "").endswith("# AGENT-EDIT-RC\n"), f.get("PLAN.yml", "")[-80:]
        assert "D  plans/rc/PLAN.yml" in o["porcelain"], o["porcelain"]
        assert o["main_status"] == "executing", o["main_status"]
    elif x == "sh":
        assert L["sh:stash"].endswith("# AGENT-STASHED-SH\n"), L["sh:stash"][-120:]
        assert "AGENT-STASHED" not in json.dumps(L.get("sh:xlog", "")), "stash on main"
    elif x == "il":
        assert L["il:lockdir"], "the agent's index.lock folder was removed"
    elif x == "sc":
        assert L["sc:sparse"] == "true", L["sc:sparse"]
    elif x == "ce":
        assert L["ce:cfg"].endswith("elsewhere"), L["ce:cfg"]
    elif x == "wf":
        assert L["wf:wt"].strip() == "A  F.txt", L["wf:wt"]
    elif x == "wr":
        # the agent's commit is its own (a revert of the run by its stale index): the run is
        # not repeated and the row stays the controller's record
        assert L["wr:agent_commit"].split(" ")[1] == "Agent", L["wr:agent_commit"]
    elif x == "sr":
        assert "side-sr" in L["sr:refs"], L["sr:refs"]
    elif x in ("wa", "wb"):
        assert L[f"{x}:stale_status"] == "approved", (L[f"{x}:stale_status"], L[f"{x}:wt"])
    else:  # co, dt, nb, ac: nothing of the agent's in the plan folder to keep
        assert o["head"] == AWAY.get(x, "main"), o["head"]


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_agent(L: dict[str, Any], x: str) -> None:
    """The agent's own work in the checkout is as it left it (or the outcome waited for it)."""
    _agent_checks(L, x)


PRE = ["pp", "pd", "ps"]


@pytest.mark.parametrize("x", cases(PRE, PRE, {}))
def test_pre(L: dict[str, Any], x: str) -> None:
    """A pass that starts with the checkout off main (another branch, detached, main a symref
    to another branch) refuses E_GIT naming the cause and the remedy, runs nothing and
    stages nothing; once main is back, the plan runs once."""
    rc, err, calls = L[f"{x}:pre"]
    assert rc == 2 and "E_GIT" in err, (rc, err[-400:])
    assert "git switch main" in err or "detached" in err, err[-400:]
    assert not [r for r in calls if r["t"].startswith(f"{x}-")], calls
    assert not L[f"{x}:pre_porcelain"].strip(), L[f"{x}:pre_porcelain"]
    got = [_called(L, f"{x}-{i}") for i in (1, 2, 3)]
    assert got == [1, 1, 1], got


def test_ctl_never_off_main(L: dict[str, Any]) -> None:
    """Every controller commit is on main (none only on the agent's branches), but those of
    ``sr``'s run, which main (then a symbolic ref to ``side-sr``) held until the agent
    pointed main back at Alice's approval: they are on ``side-sr`` and nowhere else."""
    off = set(L["bot_off_main"]) - set(L["sr_side_commits"])
    assert not off, (off, L["bot_off_main"])


def test_ctl_never_merges(L: dict[str, Any]) -> None:
    assert not L["bot_merges"], L["bot_merges"]


def test_ctl_own_files(L: dict[str, Any]) -> None:
    """Every file a controller commit changed is a plan's own file or its policy record."""
    bad, who = [], ""
    for line in L["files"].splitlines():
        if line.startswith("@@"):
            who = line[2:]
        elif line.strip() and who == "plangate":
            own = line.startswith(".plangate/") or line.endswith(("/PLAN.yml", "/EXECUTION_LOG.md"))
            if not own:
                bad.append(line)
    assert not bad, bad


def test_wr_audit_flags_agents_stale_commit(L: dict[str, Any]) -> None:
    """The agent's plain commit in its linked checkout of main (a stale index: the run's
    record reverted) is flagged by the fresh-clone audit as the agent's change of the
    controller's record, and the run stays one valid execution."""
    commit = L["wr:agent_commit"].split(" ")[0]
    kinds = {
        f.get("kind")
        for f in L["audit"]["report"].get("findings", [])
        if f.get("plan") == "plans/wr" and f.get("commit") == commit
    }
    assert {"log-changed", "owned-block-changed", "illegal"} <= kinds, kinds


@pytest.mark.parametrize("x", cases(["wa", "wb"], ["wa", "wb"], {}))
def test_stale_linked_commit_flagged(L: dict[str, Any], x: str) -> None:
    """The stale linked checkout's commit that set the completed plan back to ``approved``
    is flagged by the fresh-clone audit (``illegal``, ``owned-block-changed``,
    ``log-changed``), and the audit still sees one valid execution."""
    commit = L[f"{x}:stale_commit"].split(" ")[0]
    kinds = {
        f.get("kind")
        for f in L["audit"]["report"].get("findings", [])
        if f.get("plan") == f"plans/{x}" and f.get("commit") == commit
    }
    assert {"log-changed", "owned-block-changed", "illegal"} <= kinds, kinds


def test_il_lock_folder_is_egit(L: dict[str, Any]) -> None:
    """``.git/index.lock`` a folder the agent made: the outcome commit is ``E_GIT`` with git's
    words (exit 2), the run's outcome waits, the folder is left for its owner."""
    rc, err = L["il:pass"]
    assert rc == 2 and "E_GIT" in err and "index.lock" in err, (rc, err[-400:])
    assert L["il:obs"]["main_status"] == "executing", L["il:obs"]["main_status"]


def test_fl_link_folder_waits(L: dict[str, Any]) -> None:
    """The plan's folder a symlink on the agent's branch checked out mid-run: the outcome
    waits ``E_UNSAFE_PATH``, nothing is written through the link."""
    assert "E_UNSAFE_PATH" in L["fl:pass"][1], L["fl:pass"][1][-400:]
    assert L["fl:obs"]["main_status"] == "executing" and L["fl:outside"] == []


def test_passes_no_traceback(L: dict[str, Any]) -> None:
    bad = [(t, rc, e[-300:]) for t, rc, e in L["passes"] if "Traceback" in e or rc not in (0, 2)]
    assert not bad, bad
