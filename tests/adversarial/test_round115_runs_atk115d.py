"""Round 115 (runs, atk115d): the shared working tree and index played with mid-run by the
agent's own tool (a staged forged file, an uncommitted edit of the running plan, a merge or
cherry-pick left in progress, HEAD checked out on another branch, an interactive rebase left
stopped, the start rebased ``--force-rebase``, ``git stash -u``, commit hooks and
``core.hooksPath``, a stale ``index.lock`` or ``refs/heads/main.lock``), real daemons killed
(SIGKILL/SIGTERM) at chosen moments, two daemons at once, ``run --once --take-over`` beside a
live daemon and after a lost state directory, ``plangate reject``/``abort``/``approve``
raced with a daemon, and tool outputs crafted to steer the next action's parameters or to
forge lines in PLAN.yml, EXECUTION_LOG.md and commit messages. Local mode.

Lab ``L`` (one build, module scope): exec tool ``t115`` (``rec`` records, ``slp`` writes
``READY-<t>`` then sleeps 8 s, ``hook`` runs ``hook-<t>.py`` (a git attack on the shared
repository) then records, ``out`` prints ``out-<t>.json``). Every plan ``x`` has actions
``x-1``, ``x-2``, ``x-3``; ``calls.log`` is the ground truth; audit is a fresh clone.

Ids: ``once``/``order``/``evil``/``final`` per plan (31 plans), ``audit_valid`` per plan
that ran (fresh-clone ``plangate audit``), ``forged_bytes_not_committed``,
``controller_commits_touch_own_files``, ``controller_never_merges``,
``controller_commits_on_main``, ``agent_hooks_not_run_by_controller``, ``output_*``,
``race_landed``, ``killed_mid_action_in_doubt``, ``abort_*``, ``reject_*``, ``takeover_*``,
``passes_no_traceback``, ``terminal_before_takeover``.

Seen (round 115, 196 ids, ~95-135 s wall on 1 worker): nothing broke; 196 passed.

Held: a forged file and log line staged in the index, the running plan edited in the working
tree only, a merge (``MERGE_HEAD``) or ``cherry-pick -n`` left in progress, ``git stash -u``
then ``apply``: every action once, as frozen, no forged byte on main, no controller commit a
merge or touching a file outside the plan's folder and ``.plangate/``; HEAD checked out on
``side-co`` or detached by a stopped ``rebase -i``: every controller commit on main; the
agent's hooks and ``core.hooksPath`` never run under the controller's git; a stale
``index.lock``/``refs/heads/main.lock``: the pass holds the run ``executing``, the next pass
after the owner removes it completes, once each; the start commit replaced by the agent's
``rebase --force-rebase`` copy mid action 1: the run stops after action 1 (held
``E_HISTORY_REWRITTEN``), the owner's ``reset --hard`` back to the controller's tip resumes
it (each once, completed). SIGKILL mid a non-idempotent action: ``failed``
``E_ACTION_IN_DOUBT``, nothing more; SIGKILL the moment a quick action 1 is logged: in doubt,
never re-run; SIGKILL then Alice's abort with no daemon: nothing more; SIGTERM mid action 2:
completed once each; two daemons and a ``run --once`` at once: once each; ``run --once
--take-over`` beside a live daemon: once each; a lost state directory taken over after a kill:
action 1 not re-run, ``failed`` in doubt. ``plangate reject`` on an executing plan is
``E_ILLEGAL_TRANSITION`` (exit 1, remedy); approved then rejected by Bob or withdrawn by Alice
before any pass: nothing ran, ``rejected``; the author's abort and Alice's gate approval at
once with a daemon up: ``aborted``, action 3 never ran. Outputs: reference, placeholder and
legacy syntax and an object naming argv placeholders reach the next action as data (spliced
once inside a string); YAML, markdown table and trailer lines never stand as lines of
PLAN.yml, EXECUTION_LOG.md or a commit message; a lone surrogate, ``1e400``, a duplicate key
and ``2**70 + 1`` are ``E_TOOL_OUTPUT_INVALID`` (nothing used); ``-0.0`` passes as 0.

Noted, not a break: with HEAD left on ``side-co`` the pass still wrote its files into the
shared index and working tree (``git status`` on ``side-co`` then shows the plan's
``EXECUTION_LOG.md`` added and ``PLAN.yml`` modified, staged): a later ``git commit`` there
by the agent would carry the controller's bytes under the agent's name (ignored as the
agent's edit).

Not tried: remote mode; SIGKILL inside the controller's own commit or push; a resume of an
in-doubt run (the SPEC lets a person's approval re-run it); ``git worktree``/sparse checkout;
the approve-before-reject order of the ``rd`` race (only reject-first landed in the runs seen).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit_got, until
from test_round2_execution_kit import shared

PY = sys.executable
WORKTREE = Path(__file__).resolve().parents[2]

TOOL = r"""
import json, os, subprocess, sys, time
m, t, d = sys.argv[1], sys.argv[2], os.environ["T_DIR"]
raw = sys.stdin.read()
def log(kind):
    with open(os.path.join(d, "calls.log"), "a") as f:
        f.write(json.dumps({"t": t, "m": m, "k": kind, "stdin": raw, "at": time.time()}) + "\n")
        f.flush()
        os.fsync(f.fileno())
log("call")
if m == "slp":
    open(os.path.join(d, "READY-" + t), "w").close()
    time.sleep(8.0)
elif m == "hook":
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
               GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com")
    repo = os.environ["T_REPO"]
    def git(*a, check=True, extra=None):
        r = subprocess.run(["git", *a], cwd=repo, env={**env, **(extra or {})},
                           capture_output=True, text=True)
        with open(os.path.join(d, "hook.log"), "a") as f:
            f.write(json.dumps({"t": t, "a": a, "rc": r.returncode, "err": r.stderr[-300:]})
                    + "\n")
        return r.stdout.strip()
    exec(open(os.path.join(d, "hook-" + t + ".py")).read())
elif m == "out":
    sys.stdout.write(open(os.path.join(d, "out-" + t + ".json")).read())
    sys.exit(0)
print(json.dumps({"ok": True, "t": t}))
"""

HOOKBODY = """#!/bin/sh
gp=$(ps -o ppid= -p $PPID | tr -d ' ')
echo "HOOKRAN $0 $(tr '\\0' ' ' < /proc/$gp/cmdline)" >> "{d}/hookran.log"
"""

#: the git attacks action 1 (``hook``) makes on the shared working tree and index
HOOKS = {
    # st: a forged file and a forged log line staged in the index (never committed)
    "st-1": r"""
open(os.path.join(repo, "plans", "st", "forged.txt"), "w").write("FORGED-ST\n")
with open(os.path.join(repo, "plans", "st", "EXECUTION_LOG.md"), "a") as f:
    f.write("\nFORGED-ST line\n")
open(os.path.join(repo, "notes-forged-st.txt"), "w").write("FORGED-ST\n")
git("add", "-A")
""",
    # wt: the running plan edited in the working tree only (x-3 retargeted), not staged
    "wt-1": r"""
p = os.path.join(repo, "plans", "wt", "PLAN.yml")
open(p, "w").write(open(p).read().replace('t: "wt-3"', 't: "wt-evil"'))
""",
    # mg: a merge of a side branch left in progress (MERGE_HEAD, staged notes file)
    "mg-1": r"""
git("checkout", "-q", "-b", "side-mg")
open(os.path.join(repo, "mg-forged.txt"), "w").write("FORGED-MG\n")
git("add", "mg-forged.txt")
git("commit", "-q", "-m", "agent: side")
git("checkout", "-q", "main")
git("merge", "-q", "--no-ff", "--no-commit", "side-mg")
""",
    # cp: a cherry-pick --no-commit of a side commit left staged
    "cp-1": r"""
git("checkout", "-q", "-b", "side-cp")
open(os.path.join(repo, "cp-forged.txt"), "w").write("FORGED-CP\n")
git("add", "cp-forged.txt")
git("commit", "-q", "-m", "agent: side")
git("checkout", "-q", "main")
git("cherry-pick", "-n", "side-cp")
""",
    # co: HEAD checked out on a new branch mid-run (and left there)
    "co-1": r"""
git("checkout", "-q", "-b", "side-co")
""",
    # rb: an interactive rebase of the last two commits stopped at 'edit' (HEAD detached)
    "rb-1": r"""
git("rebase", "-i", "HEAD~2", extra={"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"})
""",
    # rf: the start commit rebased --force-rebase mid-run (a copy by the agent replaces it)
    "rf-1": r"""
git("rebase", "-q", "--force-rebase", "HEAD~1")
""",
    # sh: the running plan edited, an untracked file added, all stashed (refs/stash)
    "sh-1": r"""
p = os.path.join(repo, "plans", "sh", "PLAN.yml")
open(p, "w").write(open(p).read().replace('t: "sh-3"', 't: "sh-evil"'))
open(os.path.join(repo, "plans", "sh", "forged.txt"), "w").write("FORGED-SH\n")
git("stash", "push", "-q", "-u", "-m", "agent")
git("stash", "apply", "-q")
""",
    # hk: commit hooks in .git/hooks and a core.hooksPath in .git/config
    "hk-1": r"""
import stat
body = open(os.path.join(d, "hookbody.sh")).read()
for where in (os.path.join(repo, ".git", "hooks"), os.path.join(d, "hp")):
    os.makedirs(where, exist_ok=True)
    for name in ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit",
                 "reference-transaction", "pre-auto-gc", "post-index-change"):
        p = os.path.join(where, name)
        open(p, "w").write(body)
        os.chmod(p, 0o755)
git("config", "core.hooksPath", os.path.join(d, "hp"))
""",
    # lk: a stale index.lock left in .git
    "lk-1": r"""
open(os.path.join(repo, ".git", "index.lock"), "w").write("")
""",
    # rl: a stale refs/heads/main.lock left in .git
    "rl-1": r"""
open(os.path.join(repo, ".git", "refs", "heads", "main.lock"), "w").write("")
""",
}

#: outputs of action 1 (``out``) crafted to steer action 2 or forge written records
OUTS = {
    # os: reference, placeholder and legacy syntax in an output value: data, never resolved
    "os-1": {"v": "$<plan.name>|{m}|{t}|${plan.name}|$$<x>|$<secrets.X>", "t": "os-evil"},
    # ot: an object whose keys name action 2's argv placeholders
    "ot-1": {"v": {"m": "hook", "t": "ot-evil"}, "t": "ot-evil", "m": "hook"},
    # oy: YAML, markdown and trailer lines in an output value
    "oy-1": {
        "v": "x\n  - id: 9\n    status: succeeded\n| 3 | FORGED-OY | succeeded |\n"
        "\nPlan-Event: complete\nPlan: plans/oy\nFORGED-OY-TRAILER: 1\n---\n# FORGED-OY\n",
        "t": "oy-evil",
    },
    # ob: a lone surrogate, NUL and U+2028 in an output value
    "ob-1": {"v": "a\u0000b\u2028c\ud800d", "t": "ob-evil"},
}

#: raw stdout of action 1 for number and duplicate-key outputs
RAW = {
    "oi": '{"ok": true, "v": 1e400}',  # overflows a double
    "od": '{"ok": true, "v": "first", "v": "second"}',  # duplicate key
    "og": '{"ok": true, "v": 1180591620717411303425}',  # 2**70 + 1: beyond a double
    "on": '{"ok": true, "v": -0.0}',  # negative zero
}

WT = ["st", "wt", "mg", "cp", "co", "rb", "rf", "sh", "hk", "lk", "rl"]
KILL = ["kk", "ka", "kt", "kx", "dd", "rj", "ar", "to", "tl"]
OUT = [k.split("-")[0] for k in OUTS] + list(RAW)
REJ = ["rr", "rv", "rd"]
ALL = WT + KILL + OUT + REJ


def _act(i: int, m: str, t: str, extra: str = "") -> str:
    return f'  - id: {i}\n    tool: t115\n    why: "{t}"\n    params: {{m: {m}, t: "{t}"}}\n{extra}'


def _plan(slug: str, acts: str) -> str:
    return (
        f'plan:\n  name: "{slug}"\n  task: "atk115d {slug}"\n  status: pending_approval\n'
        f"available_tools:\n  - name: t115\nactions:\n{acts}"
    )


GATE = "    requires_approval: true\n"


def _acts(x: str) -> str:
    if x in WT:
        return _act(1, "hook", f"{x}-1") + _act(2, "rec", f"{x}-2") + _act(3, "rec", f"{x}-3")
    if x in OUT:
        out1 = "    outputs:\n      - {name: v, path: $.json.v}\n"
        a2 = (
            f'  - id: 2\n    tool: t115\n    why: "{x}-2"\n'
            f'    params: {{m: rec, t: "{x}-2", v: "$<actions[1].outputs.v>"}}\n'
        )
        a3 = (
            f'  - id: 3\n    tool: t115\n    why: "{x}-3"\n'
            f'    params: {{m: rec, t: "{x}-3", w: "pre $<actions[1].outputs.v> post"}}\n'
        )
        return _act(1, "out", f"{x}-1", out1) + a2 + a3
    if x in ("kt",):
        return _act(1, "rec", f"{x}-1") + _act(2, "slp", f"{x}-2") + _act(3, "rec", f"{x}-3")
    if x == "ar":
        return _act(1, "rec", f"{x}-1") + _act(2, "slp", f"{x}-2", GATE) + _act(3, "rec", f"{x}-3")
    if x == "kx" or x in REJ:
        return _act(1, "rec", f"{x}-1") + _act(2, "rec", f"{x}-2") + _act(3, "rec", f"{x}-3")
    return _act(1, "slp", f"{x}-1") + _act(2, "rec", f"{x}-2") + _act(3, "rec", f"{x}-3")


def _rows(d: Path) -> list[dict[str, Any]]:
    p = d / "calls.log"
    if not p.exists():
        return []
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()]


def _spawn(lab: Lab, args: list[str]) -> subprocess.Popen:
    e = {**lab.env(), "PYTHONPATH": str(WORKTREE)}
    return subprocess.Popen(
        [PY, "-m", "controller", *args, "--config", str(lab.config)],
        cwd=lab.root, env=e, stdout=subprocess.DEVNULL,
        stderr=open(lab.root / f"err-{time.monotonic_ns()}.log", "wb"),
        start_new_session=True,
    )  # fmt: skip


def _stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def _cli_as(lab: Lab, who: tuple[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**lab.env(who), "PYTHONPATH": str(WORKTREE)}
    return subprocess.run(
        [PY, "-m", "controller", *args, "--config", str(lab.config)],
        cwd=lab.repo, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


def _once(lab: Lab, tag: str, *extra: str) -> None:
    e = {**lab.env(), "PYTHONPATH": str(WORKTREE)}
    cmd = [PY, "-m", "controller", "run", "--once", *extra, "--config", str(lab.config)]
    r = subprocess.run(cmd, cwd=lab.root, env=e, capture_output=True, text=True, timeout=300)
    lab.seen["passes"].append((tag, r.returncode, r.stderr[-1500:]))  # type: ignore[attr-defined]


def _approve(lab: Lab, *slugs: str, who: tuple[str, str] = ALICE) -> None:
    for s in slugs:
        lab.set_status(s, "approved")
    for s in slugs:
        lab.git("add", f"plans/{s}/PLAN.yml")
    lab.git("commit", "-q", "-m", f"approve {' '.join(slugs)}", who=who)


def _tidy(lab: Lab) -> None:
    """The owner puts the shared checkout back: no operation in progress, main checked out,
    the tree as main's tip, no lock files, no hooks (main itself never moved by this)."""
    lab.git("config", "--unset", "core.hooksPath", check=False)
    for p in (lab.repo / ".git" / "hooks").glob("*"):
        if not p.name.endswith(".sample"):
            p.unlink()
    for op in ("merge", "rebase", "cherry-pick"):
        lab.git(op, "--abort", check=False)
    for p in (lab.repo / ".git" / "index.lock", lab.repo / ".git" / "refs/heads/main.lock"):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()
    lab.git("checkout", "-q", "-f", "main")
    lab.git("reset", "-q", "--hard", "main")
    lab.git("clean", "-q", "-fd")


def _rowsafe(lab: Lab) -> dict[str, Any]:
    try:
        return lab.rows()
    except Exception as why:
        return {"raw": repr(why)}


def _st(lab: Lab, x: str) -> Any:
    try:
        return lab.plan(x, "main").get("plan", {}).get("status")
    except Exception:
        return None


def _ready(lab: Lab, t: str) -> bool:
    return until(lambda: (lab.t / f"READY-{t}").exists(), 120, 0.01)  # type: ignore[attr-defined]


def _mk(root: Path) -> Lab:
    d = root / "t"
    d.mkdir(parents=True)
    (d / "t115.py").write_text(TOOL)
    (d / "hookbody.sh").write_text(HOOKBODY.format(d=d))
    for tag, hook in HOOKS.items():
        (d / f"hook-{tag}.py").write_text(hook)
    for tag, out in OUTS.items():
        (d / f"out-{tag}.json").write_text(json.dumps({"ok": True, **out}))
    for x, raw in RAW.items():
        (d / f"out-{x}-1.json").write_text(raw)
    lab = Lab(root / "L")
    argv = json.dumps([PY, str(d / "t115.py"), "{m}", "{t}"])
    env = json.dumps({"T_DIR": str(d), "T_REPO": str(lab.repo)})
    lab.write_config(tools=f"t115: {{kind: exec, argv: {argv}, env: {env}}}\n")
    lab.t = d  # type: ignore[attr-defined]
    lab.seen = {"passes": []}  # type: ignore[attr-defined]
    for x in ALL:
        lab.write(x, _plan(x, _acts(x)))
    lab.commit("plans")
    return lab


def _build(root: Path) -> Lab:
    lab = _mk(root)
    seen, d = lab.seen, lab.t  # type: ignore[attr-defined]
    t0 = time.time()
    _once(lab, "freeze")
    # -- working tree attacks: one plan per pass, the owner tidies after each
    for x in WT:
        _approve(lab, x)
        before = lab.head("main")
        _once(lab, x)
        seen[f"{x}:row1"] = _rowsafe(lab).get(f"plans/{x}", {})
        seen[f"{x}:git"] = lab.git("status", "--short", "--branch", check=False)[-600:]
        _tidy(lab)
        if x == "rf":  # the owner's remedy for a rewrite: main back to the controller's tip
            starts = lab.git("rev-list", "--author=plangate", f"{before}..HEAD@{{1}}", check=False)
            tips = [
                ln.split(" ")[0]
                for ln in lab.git("reflog", "--format=%H %cn %s", "main").splitlines()
                if ln.split(" ", 1)[1].startswith("plangate plangate: ")
            ]
            seen["rf:tips"] = (starts, tips[:3])
            if tips:
                lab.git("reset", "-q", "--hard", tips[0])
        _once(lab, f"{x}-b")
        _once(lab, f"{x}-c")
    # -- outputs: all approved in one commit, one pass
    _approve(lab, *OUT)
    _once(lab, "out")
    _once(lab, "out-b")
    # -- kk: SIGKILL mid action 1 (slp), then passes
    _approve(lab, "kk")
    p = _spawn(lab, ["run"])
    seen["kk:landed"] = _ready(lab, "kk-1")
    _stop(p, signal.SIGKILL)
    _once(lab, "kk-a")
    _once(lab, "kk-b")
    # -- ka: SIGKILL mid action 1, Alice's abort with no daemon, then passes
    _approve(lab, "ka")
    p = _spawn(lab, ["run"])
    seen["ka:landed"] = _ready(lab, "ka-1")
    _stop(p, signal.SIGKILL)
    r = _cli_as(lab, ALICE, "abort", "plans/ka")
    seen["ka:abort"] = (r.returncode, r.stdout[-300:], r.stderr[-300:])
    _once(lab, "ka-a")
    _once(lab, "ka-b")
    # -- kt: SIGTERM mid action 2 (slp), then passes
    _approve(lab, "kt")
    p = _spawn(lab, ["run"])
    seen["kt:landed"] = _ready(lab, "kt-2")
    _stop(p, signal.SIGTERM)
    _once(lab, "kt-a")
    _once(lab, "kt-b")
    # -- kx: SIGKILL the daemon the moment action 1's call is logged (end of a quick tool)
    _approve(lab, "kx")
    p = _spawn(lab, ["run"])
    until(lambda: any(r["t"] == "kx-1" for r in _rows(d)), 120, 0.002)
    _stop(p, signal.SIGKILL)
    _once(lab, "kx-a")
    _once(lab, "kx-b")
    # -- dd: two daemons and a run --once at the same time
    _approve(lab, "dd")
    p1, p2 = _spawn(lab, ["run"]), _spawn(lab, ["run"])
    _once(lab, "dd-once")
    until(lambda: _st(lab, "dd") in ("completed", "failed", "aborted"), 120, 0.3)
    _stop(p1)
    _stop(p2)
    # -- rj: Alice's reject while the daemon runs action 1
    _approve(lab, "rj")
    p = _spawn(lab, ["run"])
    seen["rj:landed"] = _ready(lab, "rj-1")
    r = _cli_as(lab, ALICE, "reject", "-m", "stop it", "plans/rj")
    seen["rj:reject"] = (r.returncode, r.stdout[-400:], r.stderr[-400:])
    seen["rj:reject_head"] = lab.head("main")
    until(lambda: _st(lab, "rj") in ("completed", "failed", "aborted", "rejected"), 120, 0.3)
    time.sleep(1.0)
    _stop(p)
    # -- ar: paused at the gate; Alice's gate approve and the author's abort at once, daemon up
    _approve(lab, "ar")
    _once(lab, "ar-pause")
    p = _spawn(lab, ["run"])
    got: dict[str, Any] = {}

    def go(key: str, who: tuple[str, str], *a: str) -> None:
        got[key] = _cli_as(lab, who, *a)

    ts = [
        threading.Thread(target=go, args=("approve", ALICE, "approve", "plans/ar")),
        threading.Thread(target=go, args=("abort", AGENT, "abort", "plans/ar")),
    ]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    seen["ar:cli"] = {k: (v.returncode, v.stderr[-300:]) for k, v in got.items()}
    until(lambda: _st(lab, "ar") in ("completed", "failed", "aborted"), 120, 0.3)
    time.sleep(1.0)
    _stop(p)
    # -- to: run --once --take-over beside a live daemon that runs action 1
    _approve(lab, "to")
    p = _spawn(lab, ["run"])
    seen["to:landed"] = _ready(lab, "to-1")
    _once(lab, "to-takeover", "--take-over")
    until(lambda: _st(lab, "to") in ("completed", "failed", "aborted"), 120, 0.3)
    _stop(p)
    # -- rr / rv: approved, then rejected (Bob; Alice withdrawing her own) before any pass
    _approve(lab, "rr", "rv")
    r1 = _cli_as(lab, ("Bob", "bob@ops.example.com"), "reject", "-m", "no", "plans/rr")
    r2 = _cli_as(lab, ALICE, "reject", "-m", "withdrawn", "plans/rv")
    seen["rej:cli"] = [(r.returncode, r.stdout[-300:], r.stderr[-300:]) for r in (r1, r2)]
    _once(lab, "rej")
    _once(lab, "rej-b")
    # -- rd: Alice's approve and Bob's reject at once, a daemon up
    p = _spawn(lab, ["run"])
    got2: dict[str, Any] = {}

    def go2(key: str, who: tuple[str, str], *a: str) -> None:
        got2[key] = _cli_as(lab, who, *a)

    ts = [
        threading.Thread(target=go2, args=("approve", ALICE, "approve", "plans/rd")),
        threading.Thread(
            target=go2,
            args=("reject", ("Bob", "bob@ops.example.com"), "reject", "-m", "no", "plans/rd"),
        ),
    ]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    seen["rd:cli"] = {k: (v.returncode, v.stderr[-300:]) for k, v in got2.items()}
    until(lambda: _st(lab, "rd") in ("completed", "failed", "aborted", "rejected"), 120, 0.3)
    time.sleep(2.0)
    _stop(p)
    seen["rd:order"] = lab.git("log", "--first-parent", "--reverse", "--format=%an|%s", "main")
    seen["before_tl"] = {x: _st(lab, x) for x in ALL}
    # -- tl (last: it loses every journal): SIGKILL mid action 1, state lost, --take-over
    _approve(lab, "tl")
    p = _spawn(lab, ["run"])
    seen["tl:landed"] = _ready(lab, "tl-1")
    _stop(p, signal.SIGKILL)
    lab.state.rename(lab.root / "state-lost")
    _once(lab, "tl-takeover", "--take-over")
    _once(lab, "tl-b")
    seen["wall"] = time.time() - t0
    seen["errs"] = [p.read_text()[-1500:] for p in lab.root.glob("err-*.log")]
    seen["rows"] = _rowsafe(lab)
    seen["plans"] = {}
    for s in ALL:
        with contextlib.suppress(Exception):
            seen["plans"][s] = lab.plan(s, "main")
        with contextlib.suppress(Exception):
            seen[f"{s}:xlog"] = lab.git("show", f"main:plans/{s}/EXECUTION_LOG.md")
    seen["calls"] = _rows(d)
    seen["audit"] = clone_audit_got(lab, root)
    seen["log"] = lab.git("log", "--format=%H %an %P|%s", "main")
    seen["bodies"] = lab.git("log", "--format=%an%x00%B%x01", "main")
    seen["files"] = lab.git("log", "--format=@@%an", "--name-only", "main")
    seen["all_refs_bot"] = lab.git("log", "--all", "--format=%H %an %D|%s", "--author=plangate")
    seen["bot_off_main"] = sorted(
        set(lab.git("rev-list", "--all", "--author=plangate").split())
        - set(lab.git("rev-list", "main", "--author=plangate").split())
    )
    seen["bot_merges"] = lab.git("rev-list", "--merges", "--author=plangate", "main").split()
    seen["tree"] = lab.git("ls-tree", "-r", "--name-only", "main").split("\n")
    seen["hookran"] = (d / "hookran.log").read_text() if (d / "hookran.log").exists() else ""
    seen["hooklog"] = (d / "hook.log").read_text() if (d / "hook.log").exists() else ""
    return lab


@pytest.fixture(scope="module")
def L(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "r115d-L", _build).seen  # type: ignore[attr-defined]


def _called(g: dict[str, Any], t: str) -> int:
    return sum(1 for r in g["calls"] if r["t"] == t and r["k"] == "call")


def _tags(x: str) -> list[str]:
    return [f"{x}-1", f"{x}-2", f"{x}-3"]


def _status(g: dict[str, Any], x: str) -> Any:
    return (g["plans"].get(x) or {}).get("plan", {}).get("status")


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("x", cases(ALL, ALL, BROKEN))
def test_once(L: dict[str, Any], x: str) -> None:
    """Every action called at most once."""
    got = {t: _called(L, t) for t in _tags(x)}
    assert all(n <= 1 for n in got.values()), (got, L["rows"].get(f"plans/{x}"))


@pytest.mark.parametrize("x", cases(ALL, ALL, BROKEN))
def test_order(L: dict[str, Any], x: str) -> None:
    """The calls of the plan came in its order."""
    tags = _tags(x)
    seq = [r["t"] for r in L["calls"] if r["t"].startswith(x + "-") and r["k"] == "call"]
    assert seq == tags[: len(seq)], seq


@pytest.mark.parametrize("x", cases(ALL, ALL, BROKEN))
def test_evil(L: dict[str, Any], x: str) -> None:
    """Nothing but the frozen actions ran (no edited, stashed or output-steered target)."""
    ran = sorted({r["t"] for r in L["calls"] if r["t"].startswith(x + "-")})
    assert set(ran) <= set(_tags(x)), ran


FINAL = {x: ("completed",) for x in WT + OUT}
FINAL.update(
    ob=("failed",),
    oi=("completed", "failed"),
    od=("completed", "failed"),
    og=(
        "completed",
        "failed",
    ),  # a lone surrogate in an output: E_TOOL_OUTPUT_INVALID, nothing used
    kk=("failed",),  # in doubt: non-idempotent action 1 killed mid-call
    ka=("aborted", "failed"),
    kt=("completed", "failed"),
    kx=("completed", "failed"),
    dd=("completed",),
    rj=("completed", "failed", "aborted", "rejected"),
    ar=("completed", "aborted"),
    to=("completed", "failed"),
    tl=("failed", "completed"),
)
FINAL.update(rr=("rejected",), rv=("rejected",), rd=("rejected", "completed"))
FINAL_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("x", cases(ALL, ALL, FINAL_BROKEN))
def test_final(L: dict[str, Any], x: str) -> None:
    """The plan ends with a recorded outcome on main and in its status row."""
    row = L["rows"].get(f"plans/{x}", {})
    assert _status(L, x) in FINAL[x], (_status(L, x), row)
    assert row.get("status") in FINAL[x], row


AUDIT_BROKEN: dict[str, Any] = {}


RAN = [x for x in ALL if x not in REJ]


@pytest.mark.parametrize("x", cases(RAN, RAN, AUDIT_BROKEN))
def test_audit_valid(L: dict[str, Any], x: str) -> None:
    """A fresh-clone audit calls the plan's run valid (the start follows a valid approval)."""
    assert f"plans/{x}" in L["audit"]["valid"], (L["audit"]["rc"], L["audit"]["err"])


@pytest.mark.parametrize(
    "x", cases(["st", "wt", "mg", "cp", "sh"], ["st", "wt", "mg", "cp", "sh"], {})
)
def test_forged_bytes_not_committed(L: dict[str, Any], x: str) -> None:
    """What the agent staged, left in a merge or cherry-pick, stashed or edited in the working
    tree never reaches a controller commit: no forged file on main, the plan's committed files
    hold none of the agent's bytes."""
    forged = [f for f in L["tree"] if "forged" in f]
    assert not forged, forged
    text = json.dumps(L["plans"].get(x)) + L.get(f"{x}:xlog", "")
    assert "FORGED" not in text and f"{x}-evil" not in text, text[-600:]


@pytest.mark.parametrize("x", cases(["st", "mg", "cp", "sh"], ["st", "mg", "cp", "sh"], {}))
def test_controller_commits_touch_own_files(L: dict[str, Any], x: str) -> None:
    """Every file a controller commit changed is a plan's own file or its policy record (the
    commit never carries the agent's index)."""
    bad, who = [], ""
    for line in L["files"].splitlines():
        if line.startswith("@@"):
            who = line[2:]
        elif line.strip() and who == "plangate":
            ok = line.startswith(".plangate/") or line.endswith(("/PLAN.yml", "/EXECUTION_LOG.md"))
            if not ok or "forged" in line:
                bad.append(line)
    assert not bad, bad


def test_controller_never_merges(L: dict[str, Any]) -> None:
    """A merge left in progress (MERGE_HEAD) never makes a controller commit a merge."""
    assert not L["bot_merges"], L["bot_merges"]


def test_controller_commits_on_main(L: dict[str, Any]) -> None:
    """HEAD checked out on a side branch or detached by a stopped rebase: every controller
    commit is on main, none only on the agent's branches."""
    assert not L["bot_off_main"], (L["bot_off_main"], L["all_refs_bot"][:800])


def test_agent_hooks_not_run_by_controller(L: dict[str, Any]) -> None:
    """The agent's .git/hooks and core.hooksPath never run under the controller's git."""
    ran = [ln for ln in L["hookran"].splitlines() if "controller" in ln or "plangate" in ln]
    assert not ran, ran


OUTV = {x: OUTS[f"{x}-1"]["v"] for x in ("os", "ot", "oy")}


@pytest.mark.parametrize("x", cases(list(OUTV), list(OUTV), {}))
def test_output_value_is_data(L: dict[str, Any], x: str) -> None:
    """An output holding reference, placeholder or record syntax reaches action 2 exactly as
    the tool printed it: never resolved again, never a placeholder filled."""
    rows = [r for r in L["calls"] if r["t"] == f"{x}-2"]
    assert rows and json.loads(rows[0]["stdin"]) == {"m": "rec", "t": f"{x}-2", "v": OUTV[x]}


@pytest.mark.parametrize("x", cases(list(OUTV), list(OUTV), {}))
def test_output_embedded_text(L: dict[str, Any], x: str) -> None:
    """Inside a longer string the output's text is spliced once (strings as is, objects as
    compact JSON)."""
    v = OUTV[x]
    text = v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))
    rows = [r for r in L["calls"] if r["t"] == f"{x}-3"]
    assert rows and json.loads(rows[0]["stdin"]) == {
        "m": "rec",
        "t": f"{x}-3",
        "w": f"pre {text} post",
    }


def test_output_no_forged_action_record(L: dict[str, Any]) -> None:
    """YAML lines in an output never add an action record to the committed PLAN.yml."""
    acts = (L["plans"].get("oy") or {}).get("execution", {}).get("actions", [])
    assert [a.get("id") for a in acts] == [1, 2, 3], acts
    assert [a.get("status") for a in acts] == ["succeeded"] * 3, acts


def test_output_no_forged_log_line(L: dict[str, Any]) -> None:
    """Markdown lines in an output never stand as lines of EXECUTION_LOG.md."""
    lines = L.get("oy:xlog", "").splitlines()
    bad = [
        ln for ln in lines if ln.startswith(("| 3 | FORGED", "# FORGED", "Plan-Event: complete"))
    ]
    assert lines and not bad, bad


def test_output_no_forged_trailer(L: dict[str, Any]) -> None:
    """Trailer lines in an output never stand as lines of a controller commit message."""
    bad = []
    for row in L["bodies"].split("\x01"):
        who, _, body = row.strip("\n").partition("\0")
        if who == "plangate":
            bad += [ln for ln in body.splitlines() if ln.startswith(("FORGED", "# FORGED"))]
    assert not bad, bad


def test_output_lone_surrogate_refused(L: dict[str, Any]) -> None:
    """A lone surrogate in an output is refused E_TOOL_OUTPUT_INVALID; action 2 never runs."""
    acts = (L["plans"].get("ob") or {}).get("execution", {}).get("actions", [])
    assert acts and (acts[0].get("error") or {}).get("code") == "E_TOOL_OUTPUT_INVALID", acts
    assert _called(L, "ob-2") == 0


@pytest.mark.parametrize(
    "x", cases(["kk", "ka", "kt", "tl", "to", "rj"], ["kk", "ka", "kt", "tl", "to", "rj"], {})
)
def test_race_landed(L: dict[str, Any], x: str) -> None:
    """The bench: the kill or command landed while the slow action ran."""
    assert L[f"{x}:landed"]


def test_killed_mid_action_in_doubt(L: dict[str, Any]) -> None:
    """SIGKILL mid non-idempotent action 1: the next pass records failed E_ACTION_IN_DOUBT and
    runs nothing more."""
    ex = (L["plans"].get("kk") or {}).get("execution", {})
    codes = json.dumps(ex)
    assert "E_ACTION_IN_DOUBT" in codes, codes[-600:]
    assert _called(L, "kk-2") == _called(L, "kk-3") == 0


def test_abort_after_kill_nothing_more(L: dict[str, Any]) -> None:
    """Alice's abort after the daemon was killed mid action 1: nothing after action 1 ran."""
    assert L["ka:abort"][0] == 0, L["ka:abort"]
    assert _called(L, "ka-2") == _called(L, "ka-3") == 0


def test_reject_mid_run(L: dict[str, Any]) -> None:
    """plangate reject on an executing plan: refused by the CLI, or nothing after it runs."""
    rc = L["rj:reject"][0]
    if rc == 0:
        assert _called(L, "rj-2") == _called(L, "rj-3") == 0, L["rj:reject"]
    else:
        assert "Traceback" not in L["rj:reject"][2] and "E_" in L["rj:reject"][2], L["rj:reject"]


def test_abort_raced_with_gate_approve(L: dict[str, Any]) -> None:
    """The author's abort and Alice's gate approval at once: the abort lands, action 3 never
    runs and the plan ends aborted."""
    assert L["ar:cli"]["abort"][0] == 0, L["ar:cli"]
    assert _called(L, "ar-3") == 0
    assert _status(L, "ar") == "aborted", _status(L, "ar")


def test_takeover_lost_state_no_rerun(L: dict[str, Any]) -> None:
    """A lost state directory taken over after a kill mid action 1: action 1 not run again,
    nothing after it runs (any action may have taken effect)."""
    assert _called(L, "tl-1") == 1 and _called(L, "tl-2") == 0


def test_takeover_beside_live_daemon(L: dict[str, Any]) -> None:
    """run --once --take-over beside a live daemon running the plan: each action once."""
    assert [_called(L, t) for t in _tags("to")] == [1, 1, 1] or _status(L, "to") == "failed"


def test_passes_no_traceback(L: dict[str, Any]) -> None:
    """No pass or daemon printed a traceback."""
    bad = [p for p in L["passes"] if "Traceback" in p[2]] + [
        e for e in L["errs"] if "Traceback" in e
    ]
    assert not bad, bad[:2]


def test_terminal_before_takeover(L: dict[str, Any]) -> None:
    """Before the take-over, every plan but tl had reached a terminal status."""
    open_ = {
        x: s
        for x, s in L["before_tl"].items()
        if x != "tl" and s not in ("completed", "failed", "aborted", "rejected")
    }
    assert not open_, open_


def _stdin(L: dict[str, Any], t: str) -> Any:
    rows = [r for r in L["calls"] if r["t"] == t]
    return rows[0]["stdin"] if rows else None


def test_output_overflow_not_passed_as_nonjson(L: dict[str, Any]) -> None:
    """An output 1e400: refused, or action 2 gets valid JSON (never Infinity)."""
    raw = _stdin(L, "oi-2")
    if raw is None:
        return
    json.loads(raw, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c} passed: {raw}"))


def test_output_duplicate_key_recorded_as_passed(L: dict[str, Any]) -> None:
    """An output object with a duplicate key: refused, or the value passed to action 2 is the
    value the committed record shows."""
    raw = _stdin(L, "od-2")
    if raw is None:
        return
    acts = (L["plans"].get("od") or {}).get("execution", {}).get("actions", [])
    recorded = (acts[0].get("outputs") or {}).get("v") if acts else None
    assert json.loads(raw)["v"] == recorded, (raw, recorded)


def test_output_big_integer_exact(L: dict[str, Any]) -> None:
    """An output 2**70 + 1: refused, or passed to action 2 exactly (no float rounding)."""
    raw = _stdin(L, "og-2")
    if raw is None:
        return
    assert json.loads(raw)["v"] == 2**70 + 1, raw


def test_output_big_integer_recorded_exact(L: dict[str, Any]) -> None:
    """The committed record of the 2**70 + 1 output is exact, or the output was refused."""
    acts = (L["plans"].get("og") or {}).get("execution", {}).get("actions", [])
    if _stdin(L, "og-2") is None:
        return
    v = (acts[0].get("outputs") or {}).get("v")
    assert v == 2**70 + 1, v


def test_output_negative_zero(L: dict[str, Any]) -> None:
    """An output -0.0 reaches action 2 as a number zero."""
    raw = _stdin(L, "on-2")
    assert raw is not None and json.loads(raw)["v"] == 0, raw


@pytest.mark.parametrize("x", cases(["rr", "rv"], ["rr", "rv"], {}))
def test_reject_after_approve_before_pass(L: dict[str, Any], x: str) -> None:
    """An approved plan rejected (Bob) or withdrawn (Alice) before any pass: nothing runs."""
    assert all(r[0] == 0 for r in L["rej:cli"]), L["rej:cli"]
    assert [_called(L, t) for t in _tags(x)] == [0, 0, 0]


def test_reject_raced_with_approve(L: dict[str, Any]) -> None:
    """Approve and reject at once with a daemon up: when the reject landed on main before the
    controller's start, nothing ran."""
    subjects = [ln.split("|", 1)[1] for ln in L["rd:order"].splitlines()]
    rej = [i for i, sj in enumerate(subjects) if "plans/rd" in sj and "reject" in sj.lower()]
    start = [i for i, sj in enumerate(subjects) if sj == "plangate: start plans/rd"]
    if rej and (not start or rej[0] < start[0]):
        assert [_called(L, t) for t in _tags("rd")] == [0, 0, 0], (L["rd:cli"], subjects[-6:])
    else:
        assert [_called(L, t) for t in _tags("rd")] in ([1, 1, 1], [0, 0, 0]), L["rd:cli"]
