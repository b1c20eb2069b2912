"""Round 124 (runs, atk124d): "every approved action runs at most once, exactly as frozen,
and a controller stopped or killed at any moment comes back safe whatever people do before
it restarts". Local mode, config ``identity: {name: plangate, email: plangate@localhost}``,
approvers ``alice@example.com`` (and ``*@ops.example.com``).

Lab ``L`` (one build, module scope, one plan per variant). Exec tool ``k124`` appends one
JSON line per call to ``calls.log`` (the ground truth) and, by mode, leaves helpers behind
(``h-*``: a fork, a ``setsid`` child, a double fork, a child ignoring SIGTERM, a ``setsid
env -i`` re-exec, a fork churn, a ``git commit`` holding ``.git/index.lock`` under the
controller's identity, a lock holder ignoring SIGTERM, a double-forked helper that would
edit and commit PLAN.yml as ``plangate`` 3 s later), times out with helpers (``to-*``), kills
its parent (``t1``/``t2``/``hk``), fails once (``term-retry``, ``retry-failkill``) or runs
slowly while the daemon gets SIGTERM (``term-*``: once; twice; SIGTERM then SIGKILL; a
person staging ``README`` or editing PLAN.yml while the stop is under way; a retry back-off;
a gate ahead). A ``git`` first on PATH SIGKILLs its caller on the Nth call of a subcommand
(``ui1b``/``ui2b``: before the start's/outcome's ``update-index``; ``ur2a``: after the
outcome's ``update-ref``; ``gur1a``/``gui1b``: the gate's resume commit). The person then
removes the stale lock and stages an edit of README, a removal of PLAN.yml, a conflict, an
edit of PLAN.yml, switches branches and back, stashes and pops, or resumes.

Ids: ``once`` (calls per action), ``final`` (status row and main's PLAN.yml; the in-doubt
action ``E_ACTION_IN_DOUBT``; none ``running``), ``never_silent`` (after the recovery pass:
terminal, or ``waiting``/``reason`` naming the remedy the variant then follows), ``kept``
(the person's staged edit/removal/conflict or working-tree edit is still there after the
recovery pass), ``own_bytes`` (no controller commit carries a person's or a helper's bytes or
another file), ``audit`` (fresh clone: a valid execution, none invalid), ``helpers_stopped``
(the helper's pid gone after the pass, its late write never made), ``killed`` (the bench's
kill really happened), ``term_*`` (the daemon's stop: exit code, ``daemon.stopping`` logged,
nothing started after it, a running action finished), ``git_helper_lock_released``,
``helper_commit``, ``passes_clean``.

Seen (round 124: 264 ids, 260 passed, 4 xfailed (strict); 99-155 s on 1 worker beside other
CI runs), one class.

**left-tool-lock-blocks-restart** (4 ids: ``never_silent[hk-git]``,
``helpers_stopped[hk-git]``, ``git_helper_lock_released[hk-git]``,
``helper_commit[hk-git]``; its ``once``/``final``/``audit`` hold): action 1's tool ``git
add``s a file of its own and leaves a ``git commit -i`` of it in its editor (6 s, then a
message; committer ``plangate <plangate@localhost>``), which holds ``.git/index.lock``, then
SIGKILLs the controller. The restart (``run --once``) exits 2 ``E_GIT: ... Unable to create
'.../.git/index.lock': File exists``, remedy "if no git process is running, remove ...", yet
the left tool was never stopped: the helper (the tool's own call's process, in the call's
cgroup, with its ``PLANGATE_ATTEMPT`` marker) is still alive after the pass (in a scratch
lab, a second pass 2 s later: the same), ``plangate status --json`` shows the plan
``executing`` with ``waiting``/``reason`` null, and 6 s later the helper's commit lands on
main under the controller's name (``helper commit``, the helper's file). Only then does a
pass end the plan ``failed`` ``E_ACTION_IN_DOUBT`` (action 1 once). docs/execution.md:
"Before the next run decides anything, it checks the spawn record of every action that
started without an end (and so does every pass, before it decides anything about a plan or
its file ...)", "every stop (this recovery, ...) first sends SIGTERM to every member ... The
SIGTERM first is what lets a `git commit` a tool left running remove its `.git/index.lock`:
killed outright it would leave the lock behind, and every later commit in that repository
(the controller's outcome commit included) would fail `E_GIT` until someone removed it"; the
brief's rule: a helper that outlives the call and touches the repo "must not be committed
under the controller's name". The same helper at a call's normal end (``h-git``) is stopped
and its lock released (held). Repro::

    # exec tool k124 (action 1): git add notes-h.txt; GIT_EDITOR="sleep 6; f() { echo
    #   'helper commit' > \"$1\"; }; f" GIT_COMMITTER_NAME=plangate \
    #   GIT_COMMITTER_EMAIL=plangate@localhost git -C $REPO commit -i notes-h.txt &
    #   (wait for .git/index.lock), then kill -9 $PPID
    plangate run --once --config cfg.yml   # killed in action 1
    plangate run --once --config cfg.yml   # exit 2 E_GIT index.lock; the helper still runs
    plangate status --json                 # executing, waiting null, reason null
    sleep 7; git log -1 --format='%cn %s'  # plangate helper commit (the helper's file)
    plangate run --once --config cfg.yml   # now: failed E_ACTION_IN_DOUBT

Fixed (2026-12-07, left125): the cause was the order of a pass (``Reconcile._pass``): it
stopped a dead controller's left tools (``Starting._stop_left_tools``) only after its sync,
tree catch-up and history scan, whose git writes failed on the helper's lock first. Now a
pass stops them first of all, before any git command (and again after the scan, for job
rows it added): the helper gets its SIGTERM, git removes its lock, and the restart ends the
plan ``failed`` ``E_ACTION_IN_DOUBT`` with nothing of the helper's committed
(``tests/service/test_index_lock_crash.py::test_a_left_tools_git_holding_the_lock_is_stopped_before_the_restart_writes``).

Held: helpers left at a call's normal end are stopped and never write late (a fork, a
``setsid`` child, a double fork, a child ignoring SIGTERM (SIGKILLed after the grace), a
``setsid env -i`` re-exec, a 400-step fork churn, a double-forked helper that would edit
PLAN.yml and commit it as ``plangate`` 3 s later, a ``git commit`` holding
``.git/index.lock``: SIGTERMed, lock released, nothing committed); at a timeout (a double
fork; a tool ignoring SIGTERM with a helper ignoring it too: ``E_TIMEOUT``, action 2 never
started); a double-forked helper of a tool that SIGKILLs the controller (stopped by the
restart, in doubt). A lock holder ignoring SIGTERM (``h-lockig``) is SIGKILLed, its lock
left: the pass exits 2 ``E_GIT`` naming the lock and the remedy, which works (completed,
once each). The tool's own uncommitted edit of PLAN.yml makes the outcome wait
"uncommitted" (discard, then completed); an agent's commit editing action 2's params
mid-run is written over with what ran and action 2 runs the frozen params (the audit flags
the edit ``content-after-approval``, the execution valid). The daemon's SIGTERM:
``daemon.stopping`` logged, the running action (1 or 2) finishes and its end is recorded,
exit 0, action 2 never started after it, the restart runs what is left once; twice: exit
143 at once; SIGTERM then SIGKILL: -9; both restarts stop the left tool before it ends and
fail it ``E_ACTION_IN_DOUBT``; a README edit staged during the stop stays staged and out of
the controller's commits; a PLAN.yml edit in the tree makes the restart wait "uncommitted",
action 1 not re-run; a person's ``git commit -i README`` holding the lock across the stop
(the daemon still exits 0, the restart completes once); ``plangate abort`` during action 1
then SIGTERM (aborted, action 2 never ran); a retry back-off cut by the stop (the second try
runs after the restart: 2 calls, completed); a gate ahead (paused, approved, once). SIGKILL
inside the controller's ``update-index`` (start's or outcome's, before) or after the
outcome's ``update-ref``, the stale lock removed, then a staged README edit, a staged
removal of PLAN.yml (``git rm --cached -f``), a conflict (stages 1-3 by ``update-index
--index-info``) or a staged PLAN.yml edit: each kept in the index after the restart (the
start's variants wait "staged in the index", naming ``git restore --staged``; the outcome's
complete with the entry left as the person made it); ``unstage`` then completes once. A
tool's SIGKILL then a branch switch and back, ``git stash``/``pop`` of a README edit, a
staged README edit, ``git reset`` of the index after removing the lock: failed in doubt,
each kept; ``plangate approve`` (resume) re-runs action 2 once; a retry whose second try
kills the controller: failed in doubt, 2 calls. A gate approved, then the resume's start
commit killed after ``update-ref`` or before ``update-index``: the restart runs action 2
once. No controller commit carried a person's bytes; the fresh-clone audit calls every
execution valid.

Seen, not asserted: with ``h-lockig`` (and ``hk-git``) ``plangate status --json`` shows the
plan ``executing`` with no ``waiting``/``reason`` while every pass fails ``E_GIT`` on the
lock (the remedy is only in the pass's stderr). In ``t1-stageplan`` (a staged PLAN.yml
edit after a kill in action 1) the wait says "has uncommitted edits" rather than "staged in
the index".

Not tried: the daemon SIGKILLed while a helper holds the lock (only ``run --once``), a
helper holding a ref lock (``refs/heads/main.lock``), remote mode, graphs, ``plangate mcp``,
kills inside readers (``cat-file``, ``ls-tree``), ``git gc --prune=now`` before a restart,
systemd units (cgroup delegation), ``PLANGATE_TOOL_CGROUPS=off``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit_got
from test_round2_execution_kit import shared

PY = sys.executable
TAG = "# person wt edit 124"
TAG2 = "person readme edit 124"

TOOL = r"""
import json, os, signal, subprocess, sys, time
m, t, d, repo = sys.argv[1:5]
def rec(ev, **kw):
    kw.update(t=t, m=m, ev=ev)
    with open(os.path.join(d, "calls.log"), "a") as f:
        f.write(json.dumps(kw) + "\n")
#: the helper's editor: 6 s, then a message, so the commit lands unless it is stopped
EDITOR = "sleep 6; f() { echo 'helper commit' > \"$1\"; }; f"
def once(name):
    p = os.path.join(d, "once-%s-%s" % (name, t))
    if os.path.exists(p):
        return False
    open(p, "w").close()
    return True
def devnull():
    fd = os.open(os.devnull, os.O_RDWR)
    for i in (0, 1, 2):
        os.dup2(fd, i)
def hold(kind):
    with open(os.path.join(d, "hpid-" + t), "w") as f:
        f.write(str(os.getpid()))
    if kind in ("ignterm", "lockig"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if kind == "lockig":
        os.close(os.open(os.path.join(repo, ".git", "index.lock"), os.O_CREAT | os.O_EXCL))
    time.sleep(3 if kind == "lateplan" else 6)
    if kind == "churn":
        return
    if kind == "lockig":
        os.unlink(os.path.join(repo, ".git", "index.lock"))
    rec("late", kind=kind)
    if kind == "lateplan":
        p = os.path.join(repo, "plans", t.rsplit("-", 1)[0], "PLAN.yml")
        with open(p, "a") as f:
            f.write("# late helper edit\n")
        e = dict(os.environ, GIT_AUTHOR_NAME="plangate", GIT_AUTHOR_EMAIL="plangate@localhost",
                 GIT_COMMITTER_NAME="plangate", GIT_COMMITTER_EMAIL="plangate@localhost")
        subprocess.run(["git", "-C", repo, "commit", "-qam", "plangate: late helper"], env=e)
def spawn(kind):
    if kind == "envi":
        subprocess.Popen(["setsid", "env", "-i", sys.executable, os.path.abspath(__file__),
                          "hold", t, d, repo], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elif os.fork() == 0:
        devnull()
        if kind in ("setsid", "dfork", "lateplan", "churn"):
            os.setsid()
        if kind in ("dfork", "lateplan") and os.fork() != 0:
            os._exit(0)
        if kind == "churn":
            with open(os.path.join(d, "hpid-" + t), "w") as f:
                f.write(str(os.getpid()))
            for _ in range(400):
                if os.fork() != 0:
                    os._exit(0)
                time.sleep(0.02)
            rec("late", kind=kind)
            os._exit(0)
        try:
            hold(kind)
        finally:
            os._exit(0)
    p = os.path.join(d, "hpid-" + t)
    end = time.time() + 30
    while time.time() < end and not os.path.exists(p):
        time.sleep(0.05)
    time.sleep(0.1)
if m == "hold":
    hold("envi")
    sys.exit(0)
rec("call", pid=os.getpid())
if m == "kill" and once("k"):
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(0.3)
if m == "slow":
    time.sleep(3)
    rec("end")
if m == "hang":
    with open(os.path.join(d, "tpid-" + t), "w") as f:
        f.write(str(os.getpid()))
    time.sleep(40)
    rec("end")
if m == "failonce" and once("f"):
    print("first try fails", file=sys.stderr)
    sys.exit(1)
if m == "failkill":
    if once("f"):
        sys.exit(1)
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(0.3)
if m.startswith("h"):
    spawn(m[1:])
if m == "git":
    with open(os.path.join(repo, "notes-h-%s.txt" % t), "w") as f:
        f.write("helper bytes %s\n" % t)
    e = dict(os.environ, GIT_AUTHOR_NAME="plangate", GIT_AUTHOR_EMAIL="plangate@localhost",
             GIT_COMMITTER_NAME="plangate", GIT_COMMITTER_EMAIL="plangate@localhost",
             GIT_EDITOR=EDITOR)
    subprocess.run(["git", "-C", repo, "add", "notes-h-%s.txt" % t], env=e)
    g = subprocess.Popen(["git", "-C", repo, "commit", "-i", "notes-h-%s.txt" % t], env=e,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    with open(os.path.join(d, "hpid-" + t), "w") as f:
        f.write(str(g.pid))
    end = time.time() + 30
    while time.time() < end and not os.path.exists(os.path.join(repo, ".git", "index.lock")):
        time.sleep(0.05)
    time.sleep(0.3)
    rec("locked", held=os.path.exists(os.path.join(repo, ".git", "index.lock")))
if m == "gitkill":
    e = dict(os.environ, GIT_AUTHOR_NAME="plangate", GIT_AUTHOR_EMAIL="plangate@localhost",
             GIT_COMMITTER_NAME="plangate", GIT_COMMITTER_EMAIL="plangate@localhost",
             GIT_EDITOR=EDITOR)
    with open(os.path.join(repo, "notes-h-%s.txt" % t), "w") as f:
        f.write("helper bytes %s\n" % t)
    subprocess.run(["git", "-C", repo, "add", "notes-h-%s.txt" % t], env=e)
    g = subprocess.Popen(["git", "-C", repo, "commit", "-i", "notes-h-%s.txt" % t], env=e,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    with open(os.path.join(d, "hpid-" + t), "w") as f:
        f.write(str(g.pid))
    end = time.time() + 30
    while time.time() < end and not os.path.exists(os.path.join(repo, ".git", "index.lock")):
        time.sleep(0.05)
    rec("locked", held=os.path.exists(os.path.join(repo, ".git", "index.lock")))
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(0.3)
if m in ("wtplan", "midedit"):
    x = t.rsplit("-", 1)[0]
    p = os.path.join(repo, "plans", x, "PLAN.yml")
    text = open(p).read()
    if m == "wtplan":
        open(p, "w").write(text + "# late helper edit\n")
    else:
        open(p, "w").write(text.replace('t: "%s-2"' % x, 't: "%s-2x"' % x))
        e = dict(os.environ, GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
                 GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com")
        subprocess.run(["git", "-C", repo, "commit", "-qam", "agent: mid-run edit"], env=e)
if m == "dforkkill":
    spawn("dfork")
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(0.3)
if m == "dforkhang":
    spawn("dfork")
    time.sleep(40)
if m == "ignhang":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    spawn("ignterm")
    time.sleep(40)
print(json.dumps({"ok": True, "t": t}))
"""

GITWRAP = r"""#!/bin/sh
spec="{spec}"
if [ -f "$spec" ]; then
  sub=$(cut -d'|' -f1 "$spec"); n=$(cut -d'|' -f2 "$spec"); when=$(cut -d'|' -f3 "$spec")
  first=""
  for a in "$@"; do
    case "$a" in -*|*=*) continue;; esac
    first="$a"; break
  done
  if [ "$first" = "$sub" ]; then
    c=$(cat "$spec.count" 2>/dev/null || echo 0); c=$((c+1)); echo $c > "$spec.count"
    if [ "$c" = "$n" ]; then
      rm -f "$spec" "$spec.count"
      echo "$PPID $when $sub" >> "{log}"
      if [ "$when" = after ]; then {real} "$@"; fi
      kill -9 $PPID
      sleep 0.5
      exit 1
    fi
  fi
fi
exec {real} "$@"
"""

#: variant -> (phase, m1, m2, extra plan lines, kill spec or daemon mode, person's acts,
#: remedies, final status, in-doubt action, calls (a1, a2))
V: dict[str, tuple[Any, ...]] = {}


def _v(x: str, ph: str, m1: str, m2: str, extra: str, kill: str, acts: list[str],
       rem: list[str], st: str, doubt: int | None, c: tuple[int, int]) -> None:  # fmt: skip
    V[x] = (ph, m1, m2, extra, kill, acts, rem, st, doubt, c)


GATE2 = "gate2"
RETRY1 = "retry1"
TO1 = "to1"
# -- helpers left at a call's normal end (one pass each, nothing killed) -------------------
for _k in ("fork", "setsid", "dfork", "ignterm", "envi", "churn", "lateplan"):
    _v(f"h-{_k}", "helper", f"h{_k}", "rec", "", "", [], [], "completed", None, (1, 1))
_v("h-git", "helper", "git", "rec", "", "", [], [], "completed", None, (1, 1))
_v("h-lockig", "helper", "hlockig", "rec", "", "", [], ["rmlock"], "completed", None, (1, 1))
# -- helpers at a timeout, and a helper of a tool that kills the controller ----------------
_v("hk-git", "kill", "gitkill", "rec", "", "tool", [], [], "failed", 1, (1, 0))
_v("h-wtplan", "helper", "wtplan", "rec", "", "", [], ["discard"], "completed", None, (1, 1))
_v("h-midedit", "helper", "midedit", "rec", "", "", [], [], "completed", None, (1, 1))
_v("to-dfork", "helper", "dforkhang", "rec", TO1, "", [], [], "failed", None, (1, 0))
_v("to-ignterm", "helper", "ignhang", "rec", TO1, "", [], [], "failed", None, (1, 0))
_v("hk-dfork", "kill", "dforkkill", "rec", "", "tool", [], [], "failed", 1, (1, 0))
# -- the daemon's SIGTERM (systemctl stop) -------------------------------------------------
_v("term-a1", "term", "slow", "rec", "", "term", [], [], "completed", None, (1, 1))
_v("term-a2", "term", "rec", "slow", "", "term", [], [], "completed", None, (1, 1))
_v("term-twice", "term", "hang", "rec", "", "term2", [], [], "failed", 1, (1, 0))
_v("term-kill", "term", "hang", "rec", "", "termkill", [], [], "failed", 1, (1, 0))
_v("term-stage", "term", "slow", "rec", "", "term", ["stagereadme"], [], "completed", None, (1, 1))
_v("term-wtedit", "term", "slow", "rec", "", "term", ["wtedit"], ["discard"], "completed", None,
   (1, 1))  # fmt: skip
_v("term-retry", "term", "failonce", "rec", RETRY1, "term", [], [], "completed", None, (2, 1))
_v("term-lock", "term", "slow", "rec", "", "term", ["personlock"], [], "completed", None,
   (1, 1))  # fmt: skip
_v("term-abort", "term", "slow", "rec", "", "term", ["abort"], [], "aborted", None, (1, 0))
_v("term-gate", "term", "slow", "rec", GATE2, "term", [], ["gate"], "completed", None, (1, 1))
# -- SIGKILL inside the controller's git, then a person's index --------------------------
_v("ui2b-stagereadme", "kill", "rec", "rec", "", "update-index|2|before", ["rmlock", "stagereadme"],
   [], "completed", None, (1, 1))  # fmt: skip
_v("ui2b-rmcached", "kill", "rec", "rec", "", "update-index|2|before", ["rmlock", "rmcached"],
   ["unstage"], "completed", None, (1, 1))  # fmt: skip
_v("ui2b-conflict", "kill", "rec", "rec", "", "update-index|2|before", ["rmlock", "conflict"],
   ["unstage"], "completed", None, (1, 1))  # fmt: skip
_v("ur2a-stage", "kill", "rec", "rec", "", "update-ref|2|after", ["rmlock", "stageplan"],
   ["discard"], "completed", None, (1, 1))  # fmt: skip
_v("ui1b-rmcached", "kill", "rec", "rec", "", "update-index|1|before", ["rmlock", "rmcached"],
   ["unstage"], "completed", None, (1, 1))  # fmt: skip
_v("ui1b-conflict", "kill", "rec", "rec", "", "update-index|1|before", ["rmlock", "conflict"],
   ["unstage"], "completed", None, (1, 1))  # fmt: skip
# -- SIGKILL from a tool, then a person's git ---------------------------------------------
_v("t2-switch", "kill", "rec", "kill", "", "tool", ["switch"], [], "failed", 2, (1, 1))
_v("t2-stashpop", "kill", "rec", "kill", "", "tool", ["stashpop"], [], "failed", 2, (1, 1))
_v("t2-stagereadme", "kill", "rec", "kill", "", "tool", ["stagereadme"], [], "failed", 2, (1, 1))
_v("t1-stageplan", "kill", "kill", "rec", "", "tool", ["stageplan"], ["discard"], "failed", 1,
   (1, 0))  # fmt: skip
_v("t2-resume", "kill", "rec", "kill", "", "tool", [], ["resume"], "completed", None, (1, 2))
_v("t2-rmlockidx", "kill", "rec", "kill", "", "tool", ["rmlock", "resetidx"], [], "failed", 2,
   (1, 1))  # fmt: skip
_v("retry-failkill", "kill", "failkill", "rec", RETRY1, "tool", [], [], "failed", 1, (2, 0))
# -- a gate approved, the resume commit killed ---------------------------------------------
_v("gur1a-gate", "gatekill", "rec", "rec", GATE2, "update-ref|1|after", ["rmlock"], [],
   "completed", None, (1, 1))  # fmt: skip
_v("gui1b-gate", "gatekill", "rec", "rec", GATE2, "update-index|1|before", ["rmlock"], [],
   "completed", None, (1, 1))  # fmt: skip

ALL = list(V)
HELP = [x for x in ALL if x.startswith(("h-", "to-", "hk-"))]
TERM = [x for x in ALL if x.startswith("term-")]
KILLS = [x for x in ALL if V[x][0] in ("kill", "gatekill")]
TERMINAL = ("completed", "failed", "aborted")
NAMES = {
    "discard": ("uncommitted", "staged", "index"),
    "unstage": ("uncommitted", "staged", "index"),
    "rmlock": ("index.lock",),
    "gate": (),
    "resume": (),
}


def _plan(x: str) -> str:
    _ph, m1, m2, extra = V[x][:4]
    a1 = a2 = ""
    if extra == GATE2:
        a2 = "    requires_approval: true\n"
    if extra == RETRY1:
        a1 = "    on_failure: retry\n    retry: {attempts: 2, delay: 3}\n"
    if extra == TO1:
        a1 = "    timeout: 2\n"
    return (
        f'plan:\n  name: "{x}"\n  task: "atk124d {x}"\n  status: pending_approval\n'
        "available_tools:\n  - name: k124\nactions:\n"
        f'  - id: 1\n    tool: k124\n    why: "one"\n    params: {{m: {m1}, t: "{x}-1"}}\n'
        + a1
        + f'  - id: 2\n    tool: k124\n    why: "two"\n    params: {{m: {m2}, t: "{x}-2"}}\n'
        + a2
    )


def _g(lab: Lab, *a: str, who: tuple[str, str] = AGENT, inp: str | None = None) -> Any:
    r = subprocess.run(
        ["git", *a], cwd=lab.repo, env=lab.env(who), capture_output=True, text=True, input=inp
    )
    return [a[0], r.returncode, r.stderr[-300:]]


def _events(lab: Lab) -> list[dict[str, Any]]:
    p = lab.t / "calls.log"  # type: ignore[attr-defined]
    if not p.exists():
        return []
    return [json.loads(ln) for ln in p.read_text().splitlines() if ln.strip()]


def _calls(lab: Lab, x: str) -> tuple[int, int]:
    rows = [r for r in _events(lab) if r["ev"] == "call"]
    return tuple(sum(1 for r in rows if r["t"] == f"{x}-{i}") for i in (1, 2))  # type: ignore[return-value]


def _alive(pid: int, tag: str) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z" and tag in cmd


def _pidfile(lab: Lab, name: str) -> int | None:
    p = lab.t / name  # type: ignore[attr-defined]
    try:
        return int(p.read_text())
    except (OSError, ValueError):
        return None


def _pass(lab: Lab, tag: str, spec: str | None = None) -> tuple[int, str]:
    d = lab.t  # type: ignore[attr-defined]
    if spec:
        (d / "spec").write_text(spec)
        lab.extra_env = {"PATH": f"{lab.wrap}:{os.environ['PATH']}"}  # type: ignore[attr-defined]
    t0 = time.time()
    try:
        r = lab.run(check=False)
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
        (d / "spec").unlink(missing_ok=True)
        (d / "spec.count").unlink(missing_ok=True)
    lab.seen["passes"].append((tag, r.returncode, r.stderr[-1500:]))  # type: ignore[attr-defined]
    lab.seen["took"].append((tag, round(time.time() - t0, 2)))  # type: ignore[attr-defined]
    return r.returncode, r.stderr[-3000:]


def _until(pred: Any, timeout: float = 90.0) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def _daemon(lab: Lab, x: str, mode: str, acts: list[str]) -> dict[str, Any]:
    """The daemon started; once action N's tool has begun, the person's acts, then SIGTERM
    (``term2``: again once ``daemon.stopping`` is logged; ``termkill``: SIGKILL then)."""
    env = lab.env()
    err = lab.root / f"daemon-{x}.err"
    at = 2 if V[x][2] == "slow" else 1
    got: dict[str, Any] = {}
    with open(err, "wb") as fh:
        proc = subprocess.Popen(
            [PY, "-m", "controller", "run", "--config", str(lab.config)],
            cwd=lab.root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=fh,
            start_new_session=True,
        )
        try:
            t0 = time.time()
            got["began"] = _until(lambda: _calls(lab, x)[at - 1] >= 1 or proc.poll() is not None)
            got["acts"] = [_act(lab, x, a) for a in acts]
            os.kill(proc.pid, signal.SIGTERM)
            if mode in ("term2", "termkill"):
                got["stopping_seen"] = _until(lambda: "daemon.stopping" in err.read_text())
                os.kill(proc.pid, signal.SIGTERM if mode == "term2" else signal.SIGKILL)
            proc.wait(timeout=150)
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=60)
    person = getattr(lab, "person", None)
    if person is not None:  # the person's own git ends (its editor gives up) before a restart
        got["person_rc"] = person.wait(timeout=90)
        lab.person = None  # type: ignore[attr-defined]
    lab.seen["took"].append((f"{x}-daemon", round(time.time() - t0, 2)))  # type: ignore[attr-defined]
    text = err.read_text()
    got["rc"] = proc.returncode
    got["stopping"] = "daemon.stopping" in text
    got["calls_at_exit"] = _calls(lab, x)
    got["ends_at_exit"] = [r for r in _events(lab) if r["ev"] == "end" and r["t"].startswith(x)]
    got["traceback"] = "Traceback" in text
    got["err"] = text[-1500:]
    return got


def _readme(lab: Lab) -> None:
    p = lab.repo / "README"
    p.write_text(p.read_text() + TAG2 + "\n")


def _act(lab: Lab, x: str, how: str) -> Any:
    rel = f"plans/{x}/PLAN.yml"
    path = lab.repo / rel
    if how == "rmlock":
        had = (lab.repo / ".git/index.lock").exists()
        (lab.repo / ".git/index.lock").unlink(missing_ok=True)
        return ["rmlock", had]
    if how == "stagereadme":
        _readme(lab)
        return _g(lab, "add", "README")
    if how == "wtedit":
        path.write_text(path.read_text() + TAG + "\n")
        return ["wtedit", 0]
    if how == "stageplan":
        path.write_text(path.read_text() + TAG + "\n")
        return _g(lab, "add", rel)
    if how == "rmcached":
        return _g(lab, "rm", "-q", "-f", "--cached", rel)
    if how == "conflict":
        ours = _g_out(lab, "rev-parse", f"HEAD:{rel}")
        base = _g_out(lab, "rev-parse", f"HEAD~1:{rel}") or ours
        info = (
            f"0 {'0' * 40}\t{rel}\n"
            f"100644 {base} 1\t{rel}\n100644 {ours} 2\t{rel}\n100644 {base} 3\t{rel}\n"
        )
        return _g(lab, "update-index", "--index-info", inp=info)
    if how == "switch":
        a = _g(lab, "checkout", "-q", "-b", f"side-{x}")
        b = _g(lab, "checkout", "-q", "main")
        return [a, b]
    if how == "stashpop":
        _readme(lab)
        a = _g(lab, "stash", "-q")
        b = _g(lab, "stash", "pop", "-q")
        return [a, b]
    if how == "resetidx":
        return _g(lab, "reset", "-q")
    if how == "personlock":  # the person's `git commit -i README` sits in its editor
        _readme(lab)
        e = lab.env(AGENT)
        e["GIT_EDITOR"] = "sleep 8;:"
        lab.person = subprocess.Popen(  # type: ignore[attr-defined]
            ["git", "commit", "-i", "README"],
            cwd=lab.repo,
            env=e,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return ["personlock", _until(lambda: (lab.repo / ".git/index.lock").exists(), 30)]
    if how == "abort":
        return _cli_alice(lab, "abort", "--config", str(lab.config), f"plans/{x}")
    raise AssertionError(how)


def _g_out(lab: Lab, *a: str) -> str:
    return subprocess.run(
        ["git", *a], cwd=lab.repo, env=lab.env(), capture_output=True, text=True
    ).stdout.strip()


def _remedy(lab: Lab, x: str, how: str) -> Any:
    rel = f"plans/{x}/PLAN.yml"
    if how in ("discard", "unstage"):
        a = _g(lab, "reset", "-q", "--", rel)
        b = _g(lab, "checkout", "HEAD", "--", rel)
        return [a, b]
    if how == "rmlock":
        return _act(lab, x, "rmlock")
    if how == "gate":
        lab.approve(x, message=f"approve gate {x}")
        return ["gate", 0]
    if how == "resume":
        return _cli_alice(lab, "approve", "--config", str(lab.config), f"plans/{x}")
    raise AssertionError(how)


def _cli_alice(lab: Lab, *args: str) -> Any:
    lab.extra_env = dict(  # type: ignore[attr-defined]
        GIT_AUTHOR_NAME=ALICE[0],
        GIT_AUTHOR_EMAIL=ALICE[1],
        GIT_COMMITTER_NAME=ALICE[0],
        GIT_COMMITTER_EMAIL=ALICE[1],
    )
    try:
        r = lab.cli(*args, cwd=lab.repo)
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
    return [args[0], r.returncode, (r.stdout + r.stderr)[-300:]]


def _row(lab: Lab, x: str) -> dict[str, Any]:
    rows = lab.rows()
    if "raw" in rows:
        return {"status": None, "reason": str(rows["raw"])[-600:]}
    return dict(rows.get(f"plans/{x}", {}))


def _observe(lab: Lab, x: str) -> None:
    seen = lab.seen  # type: ignore[attr-defined]
    p = lab.repo / "plans" / x / "PLAN.yml"
    seen[f"{x}:rec_row"] = _row(lab, x)
    seen[f"{x}:wt"] = p.read_text() if p.is_file() else ""
    seen[f"{x}:cached"] = lab.git("diff", "--cached", check=False)
    seen[f"{x}:cached_ns"] = lab.git("diff", "--cached", "--name-status", check=False)
    seen[f"{x}:unmerged"] = lab.git("ls-files", "-u", "--", f"plans/{x}", check=False)
    seen[f"{x}:wtdiff"] = lab.git("diff", "--", "README", check=False)
    seen[f"{x}:lock"] = (lab.repo / ".git/index.lock").exists()
    hp = _pidfile(lab, f"hpid-{x}-1")
    tp = _pidfile(lab, f"tpid-{x}-1")
    seen[f"{x}:alive"] = [
        (n, pid, _alive(pid, f"{x}-1")) for n, pid in (("helper", hp), ("tool", tp)) if pid
    ]


def _tidy(lab: Lab) -> None:
    (lab.repo / ".git/index.lock").unlink(missing_ok=True)
    lab.git("checkout", "-q", "-f", "main", check=False)
    lab.git("reset", "-q", "--hard", check=False)
    lab.git("clean", "-q", "-fdx", check=False)


def _build(root: Path) -> Lab:
    d = root / "t"
    d.mkdir(parents=True)
    (d / "k124.py").write_text(TOOL)
    lab = Lab(root / "L")
    argv = json.dumps([PY, str(d / "k124.py"), "{m}", "{t}", str(d), str(lab.repo)])
    lab.write_config(tools=f"k124: {{kind: exec, argv: {argv}}}\n")
    wrap = root / "bin"
    wrap.mkdir()
    real = shutil.which("git")
    (wrap / "git").write_text(GITWRAP.format(spec=d / "spec", real=real, log=d / "killed.log"))
    (wrap / "git").chmod(0o755)
    lab.t = d  # type: ignore[attr-defined]
    lab.wrap = wrap  # type: ignore[attr-defined]
    seen: dict[str, Any] = {"passes": [], "bench_errors": [], "took": []}
    lab.seen = seen  # type: ignore[attr-defined]
    for x in ALL:
        lab.write(x, _plan(x))
    lab.commit("agent: plans")
    _pass(lab, "freeze")
    helpers_end = time.time()
    for x in ALL:
        ph, _m1, _m2, _e, kill, acts, remedies = V[x][:7]
        try:
            if ph == "gatekill":
                lab.approve(x)
                _pass(lab, f"{x}-pause")
                seen[f"{x}:paused"] = _row(lab, x).get("status")
                lab.approve(x, message=f"approve gate {x}")
            else:
                lab.approve(x)
            if ph == "term":
                seen[f"{x}:term"] = _daemon(lab, x, kill, acts)
            else:
                spec = kill if "|" in kill else None
                seen[f"{x}:kill"] = _pass(lab, f"{x}-first", spec)
                seen[f"{x}:first_err"] = seen[f"{x}:kill"][1][-800:]
                seen[f"{x}:first_calls"] = _calls(lab, x)
                seen[f"{x}:acts"] = [_act(lab, x, a) for a in acts]
                if ph == "helper":
                    helpers_end = time.time()
            if ph != "helper" or remedies:
                seen[f"{x}:rec_err"] = _pass(lab, f"{x}-rec")[1][-800:]
            _observe(lab, x)
            seen[f"{x}:rec_calls"] = _calls(lab, x)
            if x == "hk-git":  # a helper left running after the restart: let it end, go on
                lk = lab.repo / ".git/index.lock"
                seen[f"{x}:lock_gone"] = _until(lambda lk=lk: not lk.exists(), 60)
                seen[f"{x}:rec2_err"] = _pass(lab, f"{x}-rec2")[1][-800:]
            for i, remedy in enumerate(remedies):
                seen[f"{x}:remedy{i}"] = _remedy(lab, x, remedy)
                _pass(lab, f"{x}-rem{i}")
        except Exception as why:  # a bench failure is kept for test_bench_steps
            seen["bench_errors"].append((x, f"{type(why).__name__}: {why}"[-400:]))
        _tidy(lab)
    _pass(lab, "last")
    # a helper left alive writes its late line 3-8 s after it began: wait past that
    while time.time() < helpers_end + 12:
        time.sleep(0.5)
    seen["rows"] = lab.rows()
    seen["calls"] = {x: _calls(lab, x) for x in ALL}
    seen["late"] = [r["t"] for r in _events(lab) if r["ev"] == "late"]
    seen["locked"] = {r["t"]: r.get("held") for r in _events(lab) if r["ev"] == "locked"}
    seen["ends"] = [r["t"] for r in _events(lab) if r["ev"] == "end"]
    for x in ALL:
        with contextlib.suppress(Exception):
            seen[f"{x}:final"] = lab.plan(x, "main")
    seen["bot"] = lab.git(
        "log", "-p", "--all", "--format=@@%H %ae %s", "--author=plangate@localhost"
    )
    seen["killed"] = (d / "killed.log").read_text() if (d / "killed.log").exists() else ""
    seen["audit"] = clone_audit_got(lab, root)
    with contextlib.suppress(OSError):
        Path("/tmp/atk124d").mkdir(exist_ok=True)
        Path("/tmp/atk124d/seen.json").write_text(json.dumps(seen, default=str, indent=1))
    return lab


@pytest.fixture(scope="module")
def L(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "r124d-L", _build).seen  # type: ignore[attr-defined]


def _xf(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 124: {cls}: {what}")


BROKEN: dict[str, Any] = {}
FINAL_BROKEN: dict[str, Any] = {}
KEPT_BROKEN: dict[str, Any] = {}
SILENT_BROKEN: dict[str, Any] = {}
HELP_BROKEN: dict[str, Any] = {}
GIT_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("x", cases(KILLS, KILLS, {}))
def test_killed(L: dict[str, Any], x: str) -> None:
    """The first pass was really SIGKILLed at its point (the bench did what it says)."""
    rc, err = L[f"{x}:kill"]
    assert rc == -9, (rc, err[-400:])
    kill = V[x][4]
    if "|" in kill:
        sub, _n, when = kill.split("|")
        assert f"{when} {sub}" in L["killed"], L["killed"]


@pytest.mark.parametrize("x", cases(ALL, ALL, BROKEN))
def test_once(L: dict[str, Any], x: str) -> None:
    """Each action ran as often as documented: once; never again after a kill or a stop
    unasked (a retry's second try, a resume's re-run only where asked)."""
    assert tuple(L["calls"][x]) == V[x][9], (L["calls"][x], L.get(f"{x}:rec_calls"))


@pytest.mark.parametrize("x", cases(ALL, ALL, FINAL_BROKEN))
def test_final(L: dict[str, Any], x: str) -> None:
    """The plan ends as documented in the status row and in main's PLAN.yml; a killed action
    ``in_doubt`` ``E_ACTION_IN_DOUBT``; none left ``running``."""
    want, doubt = V[x][7], V[x][8]
    row = L["rows"].get(f"plans/{x}", {})
    assert row.get("status") == want, (row.get("status"), row.get("waiting"), row.get("reason"))
    final = L.get(f"{x}:final") or {}
    assert (final.get("plan") or {}).get("status") == want, final.get("plan")
    acts = {a.get("id"): a for a in (final.get("execution") or {}).get("actions") or []}
    if doubt:
        a = acts.get(doubt) or {}
        assert a.get("status") == "in_doubt", a
        assert (a.get("error") or {}).get("code") == "E_ACTION_IN_DOUBT", a
    running = [i for i, a in acts.items() if a.get("status") == "running"]
    assert not running, acts


@pytest.mark.parametrize("x", cases(ALL, ALL, SILENT_BROKEN))
def test_never_silent(L: dict[str, Any], x: str) -> None:
    """After the recovery pass the plan is terminal, or its row says why it waits and
    names the remedy the variant then follows; never stuck with nothing said."""
    row = L.get(f"{x}:rec_row") or {}
    text = json.dumps([row.get("waiting"), row.get("reason")])
    if row.get("status") in TERMINAL:
        return
    if x == "h-lockig":  # the whole pass fails E_GIT naming the lock and its remedy
        err = L[f"{x}:rec_err"]
        assert "E_GIT" in err and "remove" in err and "index.lock" in err, err[-400:]
        return
    assert row.get("waiting") or row.get("reason"), (row.get("status"), text)
    remedies = V[x][6]
    assert remedies, (row.get("status"), text)
    words = NAMES[remedies[0]]
    assert not words or any(w in text for w in words), (words, row.get("status"), text)


KEPT = [x for x in ALL if set(V[x][5]) & {"stagereadme", "wtedit", "stageplan", "rmcached",
                                          "conflict", "stashpop", "personlock"}]  # fmt: skip


@pytest.mark.parametrize("x", cases(KEPT, KEPT, KEPT_BROKEN))
def test_kept(L: dict[str, Any], x: str) -> None:
    """The person's staged edit, staged removal, conflict or working-tree edit is still there
    after the restart: "plangate never stages, commits or discards anyone's other work"
    (docs/approvals.md); "an entry anyone staged since, an edit or a removal, is theirs and
    is kept" (docs/execution.md)."""
    acts = V[x][5]
    if "stagereadme" in acts:
        assert TAG2 in L[f"{x}:cached"], L[f"{x}:cached_ns"]
    if "stashpop" in acts or "personlock" in acts:
        assert TAG2 in L[f"{x}:wtdiff"], L[f"{x}:wtdiff"][-300:]
    if "wtedit" in acts:
        assert TAG in L[f"{x}:wt"], L[f"{x}:wt"][-300:]
    if "stageplan" in acts:
        assert TAG in L[f"{x}:cached"], (L[f"{x}:cached_ns"], L[f"{x}:rec_row"].get("waiting"))
    if "rmcached" in acts:
        assert f"D\tplans/{x}/PLAN.yml" in L[f"{x}:cached_ns"], L[f"{x}:cached_ns"]
    if "conflict" in acts:
        assert L[f"{x}:unmerged"].strip(), (L[f"{x}:cached_ns"], L[f"{x}:rec_row"])


def _bot_commits(L: dict[str, Any]) -> list[tuple[str, str]]:
    out, head, buf = [], "", []
    for line in L["bot"].splitlines():
        if line.startswith("@@"):
            if head:
                out.append((head, "\n".join(buf)))
            head, buf = line[2:], []
        else:
            buf.append(line)
    if head:
        out.append((head, "\n".join(buf)))
    return out


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_own_bytes(L: dict[str, Any], x: str) -> None:
    """No commit under the controller's identity naming the plan adds a person's or a
    helper's bytes, or changes a file other than the plan's PLAN.yml / EXECUTION_LOG.md (or
    the controller's records)."""
    bad = []
    for head, diff in _bot_commits(L):
        if not head.endswith(f" plans/{x}") and x not in head:
            continue
        files = [ln[6:] for ln in diff.splitlines() if ln.startswith("+++ b/")]
        added = [ln for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        own = all(
            f.startswith(".plangate/")
            or f in (f"plans/{x}/PLAN.yml", f"plans/{x}/EXECUTION_LOG.md")
            for f in files
        )
        late = any(TAG in ln or TAG2 in ln or "late helper" in ln for ln in added)
        if not own or late:
            bad.append((head, files))
    assert not bad, bad


def test_no_bot_commit_of_other_files(L: dict[str, Any]) -> None:
    """No commit under the controller's name (on any branch) touches README, a helper's
    file, or carries a late helper's edit (the git helpers: ``test_helper_commit``)."""
    bad = []
    for head, diff in _bot_commits(L):
        if head.endswith(" helper commit"):
            continue
        files = [ln[6:] for ln in diff.splitlines() if ln.startswith("+++ b/")]
        if (
            any(not (f.startswith((".plangate/", "plans/"))) for f in files)
            or "late helper" in diff
        ):
            bad.append((head, files))
    assert not bad, bad


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_audit(L: dict[str, Any], x: str) -> None:
    """The fresh-clone audit agrees: the plan has an execution it calls valid, none invalid."""
    execs = [e for e in L["audit"]["report"].get("executions", []) if e.get("plan") == f"plans/{x}"]
    got = [(e.get("approval_valid"), e.get("outcome")) for e in execs]
    assert any(e.get("approval_valid") for e in execs), got
    assert all(e.get("approval_valid") for e in execs), got


@pytest.mark.parametrize("x", cases(HELP, HELP, HELP_BROKEN))
def test_helpers_stopped(L: dict[str, Any], x: str) -> None:
    """A helper a tool left in its call's cgroup (forked, ``setsid``, double-forked, ignoring
    SIGTERM, ``env -i``, a fork churn) is stopped at the call's end, at a timeout, or by the
    restart after a kill (docs/execution.md: "A tool that exits normally loses its helpers
    too"): its pid is gone after the pass and its late write (3-8 s later) never happens."""
    alive = [a for a in L.get(f"{x}:alive", []) if a[2]]
    assert not alive, alive
    assert f"{x}-1" not in L["late"], L["late"]


GITH = ["h-git", "hk-git"]


@pytest.mark.parametrize("x", cases(GITH, GITH, GIT_BROKEN))
def test_git_helper_lock_released(L: dict[str, Any], x: str) -> None:
    """A ``git commit`` a tool left holding ``.git/index.lock`` gets SIGTERM (at the call's
    end; after a kill, from the restart before it decides anything) and removes its lock:
    the bench saw the lock held, none is left after the (recovery) pass."""
    assert L["locked"].get(f"{x}-1") is True, L["locked"]
    assert L[f"{x}:lock"] is False


@pytest.mark.parametrize("x", cases(GITH, GITH, GIT_BROKEN))
def test_helper_commit(L: dict[str, Any], x: str) -> None:
    """The ``git commit`` a tool left in its editor (committer ``plangate``, 6 s) is stopped
    at the call's end or by the restart after a kill, before it can land: no commit of the
    helper's file under the controller's name, on any branch."""
    bad = [(head, diff[-200:]) for head, diff in _bot_commits(L) if f"notes-h-{x}-1.txt" in diff]
    assert not bad, bad


@pytest.mark.parametrize("x", cases(TERM, TERM, {}))
def test_term_stop(L: dict[str, Any], x: str) -> None:
    """``systemctl stop`` (SIGTERM): ``daemon.stopping`` logged; the running action finishes
    (its end recorded) and the daemon exits 0; the same again exits at once 143; no action
    starts after the stop was taken in (docs/operations.md, Signals)."""
    got = L[f"{x}:term"]
    mode = V[x][4]
    assert got["began"], got
    assert got["stopping"], got["err"][-600:]
    assert not got["traceback"], got["err"][-600:]
    at = 2 if V[x][2] == "slow" else 1
    if mode == "term":
        assert got["rc"] == 0, (got["rc"], got["err"][-600:])
        if V[x][1] == "slow" or V[x][2] == "slow":
            assert any(e["t"] == f"{x}-{at}" for e in got["ends_at_exit"]), got
    elif mode == "term2":
        assert got["rc"] == 143, (got["rc"], got["err"][-600:])
    else:
        assert got["rc"] == -9, got["rc"]
    if at == 1:
        a1, a2 = got["calls_at_exit"]
        assert (a1, a2) == (1, 0), got["calls_at_exit"]


@pytest.mark.parametrize("x", cases(["term-twice", "term-kill"], ["term-twice", "term-kill"], {}))
def test_term_orphan_stopped(L: dict[str, Any], x: str) -> None:
    """The tool left running by a daemon that exited at once (second SIGTERM, SIGKILL) is
    stopped by the restart before the action is declared in doubt: never finishes."""
    alive = [a for a in L.get(f"{x}:alive", []) if a[2]]
    assert not alive, alive
    assert f"{x}-1" not in L["ends"], L["ends"]


def test_gate_paused(L: dict[str, Any]) -> None:
    """The gated variants really paused at their gate before the approval (bench check)."""
    for x in ("gur1a-gate", "gui1b-gate"):
        assert L[f"{x}:paused"] == "awaiting_approval", (x, L[f"{x}:paused"])


def test_bench_steps(L: dict[str, Any]) -> None:
    """Every step of the bench ran (a bench failure is never read as a finding)."""
    assert not L["bench_errors"], L["bench_errors"]


def _pass_ok(t: str, rc: int, e: str) -> bool:
    if "Traceback" in e:
        return False
    if rc == -9:
        return t.endswith("-first")
    if rc == 0:
        return True
    # h-lockig: a lock left by a helper ignoring SIGTERM, the remedy named (held); hk-git-rec:
    # the finding left-tool-lock-blocks-restart, asserted by its xfailed ids
    return (t.startswith("h-lockig-") or t == "hk-git-rec") and "index.lock" in e


def test_passes_clean(L: dict[str, Any]) -> None:
    """No pass printed a traceback; each exited 0 or was the one killed."""
    bad = [(t, rc, e[-300:]) for t, rc, e in L["passes"] if not _pass_ok(t, rc, e)]
    assert not bad, bad
