"""Round 111 (runs, atk111d): history rewritten under a running or paused plan (an erased
start restored by a ``--no-ff`` merge, ``git replace``, grafts, ``gc --prune=now`` with the
reflogs expired), the watched branch renamed or deleted by a tool mid-run, ``plangate abort``
and ``plangate approve`` (resume) raced with a running daemon, nested plans whose child is
renamed, deleted, edited or approved on its own while the parent runs it, a pass under a
file-size limit, passes dated far in the past or the future and run in odd time zones, and
40 plans in one pass. Local mode.

Lab ``L`` (one build, module scope): exec tool ``t111`` (``rec`` records, ``slp`` writes
``READY-<t>`` then sleeps 1 s (10 s in the abort race, so that its abort lands mid-sleep on
a loaded machine), ``hook`` runs ``hook-<t>.py`` (a git attack on the shared repository) then
records, ``flaky`` fails its first call, ``big`` prints 400 KB). Every plan
``x`` has actions ``x-1``, ``x-2``, ``x-3`` (nested: ``x-1``, the child ``ch-x``'s ``c1``,
``c2``, then ``x-3``); ``calls.log`` is the ground truth of what ran.

Ids (``<plan>:<check>``): ``once`` (each action called at most once, resumes counted),
``order`` (calls in plan order), ``evil`` (nothing a rewrite, a replace ref or an edited
child added ran), ``final`` (the plan ends with a recorded outcome, never stranded),
``audit:*`` (a fresh-clone ``plangate audit``), ``passes:traceback``.

Seen (round 111, 105 ids, ~95-160 s wall): 2 broke (merge-restored-start-stranded,
abort-then-continued: 5 strict xfails), 100 held; 1 id skips when its race misses. Both
fixed (fix111d): a job runs only while its job row describes it (a recorded abort ends the
run), and a start merged back beside the branch's line is closed ``plangate: fail``
(E_HISTORY_REWRITTEN), to be resumed or aborted.

- **merge-restored-start-stranded** (``test_final[mg]``, ``test_final[mg2]``,
  ``test_stranded_run_closable[mg|mg2]``; confirms round 110's suspicion). ``mg``: Alice
  approves, ``run --once`` runs action 1 and pauses at the gate of action 2; main reset
  ``--hard`` to Alice's approval (start and pause erased), a pass (refuses her approval
  ``E_ALREADY_EXECUTED``), then ``git merge --no-ff -X theirs <erased tip>``: the merge's
  ``awaiting_approval`` is ``E_ILLEGAL_TRANSITION``, the row says ``pending_approval``; Alice's
  gate approval is refused ``E_ALREADY_EXECUTED``, ``plangate abort --force`` says "nothing to
  abort". ``mg2``: action 1 itself ``git reset --hard HEAD~1``; the erased start merged back the
  same way: ``pending_approval``, every new approval ``E_ALREADY_EXECUTED``. Action 1 ran, no
  outcome is ever committed, no person can continue or close the run (the fresh-clone audit's
  verdict on the run differs between builds). Property: a run is continued or closed; git
  history records what happened. The ``reset --hard`` remedy (round 110) works.
- **abort-then-continued** (``test_abort_then_nothing_runs``; racy, about half the replica
  pairs; skips when none lands). Plan ``abN`` (action 1 sleeps 3 s) approved, ``plangate run``
  started; mid action 1 the author (or Alice) runs ``plangate abort plans/abN`` and the daemon
  is SIGTERMed at once (it stops after action 1, abort not yet recorded); done for two plans;
  then ``rzK`` approved and ``plangate run`` started: it commits ``plangate: abort`` for both
  plans and then, for one of them, calls actions 2 and 3 and commits ``plangate: complete``
  (the fresh-clone audit flags that complete ``controller-unexplained``). Also seen once with
  the daemon stopped when ``status`` first showed ``aborted``. Property: an abort stops the
  plan before its next action; each action only as frozen and approved.

Held: 40 plans in one pass (once each, audit valid); a gate held through a pass dated 2001;
an approval dated in ``+14:00`` and passes in ``TZ=Pacific/Kiritimati``/``America/St_Johns``;
Mallory's forced abort ignored; two resumes raced with a daemon (the flaky action twice,
the rest once); the branch renamed (``git branch -m``) or deleted (HEAD detached) by action 1,
then put back: once each, completed; a ``git replace`` of the start by a commit calling
``rp-evil``, a graft cutting history at the start, ``reflog expire`` + ``gc --prune=now``
mid-run: nothing evil ran, completed; a pass under ``ulimit -f 256`` with a 400 KB output;
a nested child renamed, deleted or edited (evil action added) mid-child: the pinned version
ran, once; a child approved on its own while the parent runs it runs once nested and once
on its own (accepted: runs-once binds a plan's own runs, threat-model "A version that ran runs
again as a nested plan"). Not kept as a break: a pass whose controller clock (git dates) is
2040 pauses a gate that Alice's approval today cannot open (``E_APPROVAL_REPLAYED``: her
approval predates the pause), the controller's own clock being trusted config.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, cases, clone_audit_got, until
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
    time.sleep(10.0 if t.startswith("ab") else 1.0)
elif m == "hook":
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
               GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com")
    repo = os.environ["T_REPO"]
    def git(*a, check=True):
        r = subprocess.run(["git", *a], cwd=repo, env=env, capture_output=True, text=True)
        with open(os.path.join(d, "hook.log"), "a") as f:
            f.write(json.dumps({"t": t, "a": a, "rc": r.returncode, "err": r.stderr[-300:]})
                    + "\n")
        return r.stdout.strip()
    exec(open(os.path.join(d, "hook-" + t + ".py")).read())
elif m == "flaky":
    n = sum(1 for x in open(os.path.join(d, "calls.log"))
            if json.loads(x)["t"] == t and json.loads(x)["k"] == "call")
    if n == 1:
        sys.exit(3)
elif m == "big":
    print(json.dumps({"ok": True, "pad": "x" * 400000}))
    sys.exit(0)
print(json.dumps({"ok": True, "t": t}))
"""

#: the git attacks a ``hook`` action makes on the shared repository mid-run
HOOKS = {
    # mg2: the start erased mid-run (main reset to the start's parent)
    "mg2-1": 'git("reset", "-q", "--hard", "HEAD~1")\n',
    # br: the watched branch renamed mid-run
    "br-1": 'git("branch", "-m", "main", "trunk")\n',
    # bd: the watched branch deleted mid-run (HEAD detached at its tip)
    "bd-1": 'open(os.path.join(d, "bd-tip"), "w").write(git("rev-parse", "HEAD"))\n'
    'git("checkout", "-q", "--detach")\ngit("branch", "-D", "main")\n',
    # rp: a replace ref swaps the start commit for one whose plan calls rp-evil
    "rp-1": r"""
head = git("rev-parse", "HEAD")
text = git("show", "HEAD:plans/rp/PLAN.yml") + "\n"
text = text.replace('t: "rp-3"', 't: "rp-evil"')
blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, env=env, input=text,
                      capture_output=True, text=True).stdout.strip()
idx = os.path.join(d, "rp-index")
e2 = dict(env, GIT_INDEX_FILE=idx)
subprocess.run(["git", "read-tree", "HEAD"], cwd=repo, env=e2, check=True)
subprocess.run(["git", "update-index", "--cacheinfo", "100644," + blob + ",plans/rp/PLAN.yml"],
               cwd=repo, env=e2, check=True)
tree = subprocess.run(["git", "write-tree"], cwd=repo, env=e2, capture_output=True,
                      text=True).stdout.strip()
new = git("commit-tree", tree, "-p", "HEAD~1", "-m", "plangate: start plans/rp")
git("replace", "-f", head, new)
""",
    # gf: a graft makes the start commit a root (its history cut off)
    "gf-1": 'open(os.path.join(repo, ".git", "info", "grafts"), "w").write('
    'git("rev-parse", "HEAD") + "\\n")\n',
    # gc: reflogs expired and unreachable objects pruned mid-run
    "gc-1": 'git("reflog", "expire", "--expire=now", "--all")\ngit("gc", "-q", "--prune=now")\n',
    # nr: the pinned child renamed mid-child (committed)
    "nr-c1": 'git("mv", "plans/ch-nr", "plans/ch-nr-moved")\n'
    'git("commit", "-q", "-m", "agent: rename the child")\n',
    # nd: the pinned child deleted mid-child (committed)
    "nd-c1": 'git("rm", "-q", "-r", "plans/ch-nd")\ngit("commit", "-q", "-m", "agent: rm child")\n',
    # ne: the pinned child's c2 retargeted and an action added, committed, mid-child
    "ne-c1": r"""
p = os.path.join(repo, "plans", "ch-ne", "PLAN.yml")
s = open(p).read().replace('t: "ne-c2"', 't: "ne-evil"')
s += '  - id: 3\n    tool: t111\n    why: "x"\n    params: {m: rec, t: "ne-extra"}\n'
open(p, "w").write(s)
git("add", "plans/ch-ne/PLAN.yml")
git("commit", "-q", "-m", "agent: edit the child mid-run")
""",
}


def _act(i: int | str, m: str, t: str, extra: str = "") -> str:
    return f'  - id: {i}\n    tool: t111\n    why: "{t}"\n    params: {{m: {m}, t: "{t}"}}\n{extra}'


def _plan(slug: str, acts: str, status: str = "pending_approval") -> str:
    return (
        f'plan:\n  name: "{slug}"\n  task: "atk111d {slug}"\n  status: {status}\n'
        f"available_tools:\n  - name: t111\nactions:\n{acts}"
    )


GATE = "    requires_approval: true\n"
#: plan -> (mode of action 1, 2, 3, extra of action 2)
PLANS: dict[str, tuple[str, str, str, str]] = {
    "mg": ("rec", "rec", "rec", GATE),  # paused at gate 2, erased, merged back
    "mg2": ("hook", "rec", "rec", ""),  # erased by its own action 1, merged back
    "abm": ("slp", "rec", "rec", ""),  # Mallory's abort --force raced (ignored)
    "rs": ("rec", "flaky", "rec", ""),  # failed, two resumes raced with a daemon
    "br": ("hook", "rec", "rec", ""),
    "bd": ("hook", "rec", "rec", ""),
    "rp": ("hook", "rec", "rec", ""),
    "gf": ("hook", "rec", "rec", ""),
    "gc": ("hook", "rec", "rec", ""),
    "fz": ("big", "rec", "rec", ""),  # a pass under ulimit -f
    "tp": ("rec", "rec", "rec", GATE),  # start and pause dated 2001
    "tf": ("rec", "rec", "rec", GATE),  # start and pause dated 2040
    "tz": ("rec", "rec", "rec", ""),  # approval dated +14:00 tomorrow, pass TZ=Kiritimati
}
#: abort race replicas: two plans per round, each aborted (the agent's, Alice's plangate abort)
#: mid action 1 and its daemon stopped (SIGTERM) once the abort shows; then one daemon with
#: a third plan approved takes both stopped runs up
RACE = [f"ab{i}" for i in range(4)]
for _x in RACE:
    PLANS[_x] = ("slp", "rec", "rec", "")
PLANS.update({f"rz{i}": ("rec", "rec", "rec", "") for i in range(2)})
NESTED = {  # parent -> child actions (c1 mode); the parent: x-1, nested ch-x, x-3
    "nr": "hook",  # child renamed mid-child
    "nd": "hook",  # child deleted mid-child
    "ne": "hook",  # child edited mid-child
    "na": "slp",  # child approved on its own while the parent runs it
}
MANY = [f"m{i:02d}" for i in range(40)]
ALL = list(PLANS) + list(NESTED)


def _rows(d: Path) -> list[dict[str, Any]]:
    p = d / "calls.log"
    if not p.exists():
        return []
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()]


def _spawn(lab: Lab, args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    e = {**lab.env(), "PYTHONPATH": str(WORKTREE), **(env or {})}
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
        cwd=lab.repo, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _mk(root: Path) -> Lab:
    d = root / "t"
    d.mkdir(parents=True)
    (d / "t111.py").write_text(TOOL)
    for tag, hook in HOOKS.items():
        (d / f"hook-{tag}.py").write_text(hook)
    lab = Lab(root / "L")
    argv = json.dumps([PY, str(d / "t111.py"), "{m}", "{t}"])
    env = json.dumps({"T_DIR": str(d), "T_REPO": str(lab.repo)})
    lab.write_config(tools=f"t111: {{kind: exec, argv: {argv}, env: {env}}}\n")
    lab.t = d  # type: ignore[attr-defined]
    lab.seen = {"passes": []}  # type: ignore[attr-defined]
    for x, (m1, m2, m3, extra) in PLANS.items():
        lab.write(x, _plan(x, _act(1, m1, f"{x}-1") + _act(2, m2, f"{x}-2", extra)
                           + _act(3, m3, f"{x}-3")))  # fmt: skip
    for x, c1 in NESTED.items():
        status = "pending_approval" if x == "na" else "draft"
        lab.write(f"ch-{x}", _plan(f"ch-{x}", _act(1, c1, f"{x}-c1") + _act(2, "rec", f"{x}-c2"),
                                   status))  # fmt: skip
    for x in MANY:
        lab.write(x, _plan(x, _act(1, "rec", f"{x}-1") + _act(2, "rec", f"{x}-2")))
    lab.commit("plans")
    pins = {
        x: lab.cli(
            "hash", f"plans/ch-{x}", "--config", str(lab.config), cwd=lab.repo
        ).stdout.strip()
        for x in NESTED
    }
    for x in NESTED:
        nest = f'  - id: 2\n    plan: {{path: plans/ch-{x}, hash: "{pins[x]}"}}\n    why: "n"\n'
        lab.write(x, _plan(x, _act(1, "rec", f"{x}-1") + nest + _act(3, "rec", f"{x}-3")))
    lab.commit("parents")
    return lab


def _once(lab: Lab, tag: str, prefix: str = "", env: dict[str, str] | None = None) -> None:
    e = {**lab.env(), "PYTHONPATH": str(WORKTREE), "REC_LOG": str(lab.log), **(env or {})}
    cmd = [PY, "-m", "controller", "run", "--once", "--config", str(lab.config)]
    if prefix:
        cmd = ["bash", "-c", prefix + ' && exec "$@"', "x", *cmd]
    r = subprocess.run(cmd, cwd=lab.root, env=e, capture_output=True, text=True, timeout=300)
    lab.seen["passes"].append((tag, r.returncode, r.stderr[-1500:]))  # type: ignore[attr-defined]


def _approve(lab: Lab, *slugs: str, who: tuple[str, str] = ALICE, date: str | None = None) -> None:
    for s in slugs:
        lab.set_status(s, "approved")
    lab.git("add", "-A")
    args = ["commit", "-q", "-m", f"approve {' '.join(slugs)}"]
    if date:
        args += ["--date", date]
    lab.git(*args, who=who)


def _rowsafe(lab: Lab) -> dict[str, Any]:
    try:
        return lab.rows()
    except Exception as why:
        return {"raw": repr(why)}


def _status_now(lab: Lab, x: str) -> Any:
    try:
        return lab.plan(x).get("plan", {}).get("status")
    except Exception:
        return None


def _daemon_until(lab: Lab, slug: str, ready: str, act: Any, done: tuple[str, ...]) -> None:
    proc = _spawn(lab, ["run"])
    try:
        landed = until(lambda: (lab.t / f"READY-{ready}").exists(), 60, 0.01)  # type: ignore[attr-defined]
        lab.seen[f"{slug}:landed"] = landed  # type: ignore[attr-defined]
        lab.seen[f"{slug}:act"] = act()  # type: ignore[attr-defined]
        lab.seen[f"{slug}:act_at"] = time.time()  # type: ignore[attr-defined]
        until(lambda: lab.rows().get(f"plans/{slug}", {}).get("status") in done, 120, 0.5)
    finally:
        _stop(proc)


def _build(root: Path) -> Lab:
    lab = _mk(root)
    seen, d = lab.seen, lab.t  # type: ignore[attr-defined]
    t0 = time.time()
    _once(lab, "freeze")
    # -- many: 40 plans approved in one commit, one pass
    _approve(lab, *MANY)
    tm = time.time()
    _once(lab, "many")
    seen["many:wall"] = time.time() - tm
    # -- mg: paused at its gate, the branch reset to Alice's approval (erasing the start and
    # the pause), a pass, then the erased tip merged back --no-ff -X theirs
    _approve(lab, "mg")
    _once(lab, "mg")
    tip = lab.head()
    approval = lab.git("log", "-1", "--format=%H", "--author=alice", "--", "plans/mg").strip()
    lab.git("reset", "-q", "--hard", approval)
    _once(lab, "mg-erased")
    seen["mg:row_erased"] = _rowsafe(lab).get("plans/mg", {})
    lab.git("merge", "-q", "--no-ff", "-X", "theirs", "-m", "restore", tip, who=ALICE)
    _once(lab, "mg-merged")
    _once(lab, "mg-merged2")
    seen["mg:row_merged"] = _rowsafe(lab).get("plans/mg", {})
    if seen["mg:row_merged"].get("status") == "awaiting_approval":
        _approve(lab, "mg")  # Alice approves the gate
        _once(lab, "mg-gate")
        _once(lab, "mg-gate2")
    else:  # stranded: can a person close the run? Alice's gate approval, then her abort
        _approve(lab, "mg")
        _once(lab, "mg-gate")
        seen["mg:row_gate"] = _rowsafe(lab).get("plans/mg", {})
        r = _cli_as(lab, ALICE, "abort", "--force", "plans/mg")
        seen["mg:abort"] = (r.returncode, r.stdout[-300:], r.stderr[-300:])
        _once(lab, "mg-abort")
        seen["mg:row_abort"] = _rowsafe(lab).get("plans/mg", {})
    # -- mg2: its own action 1 resets main to the start's parent; the erased start merged back
    _approve(lab, "mg2")
    _once(lab, "mg2")
    _once(lab, "mg2-b")
    erased = [
        line.split(" ", 1)[0]
        for line in lab.git("log", "-g", "--format=%H %s", "main").splitlines()
        if line.endswith("plangate: start plans/mg2")
    ]
    seen["mg2:erased"] = erased
    seen["mg2:row_erased"] = _rowsafe(lab).get("plans/mg2", {})
    if erased:
        lab.git("merge", "-q", "--no-ff", "-X", "theirs", "-m", "restore", erased[0], who=ALICE)
    _once(lab, "mg2-merged")
    _once(lab, "mg2-merged2")
    seen["mg2:row_merged"] = _rowsafe(lab).get("plans/mg2", {})
    if seen["mg2:row_merged"].get("status") in ("pending_approval", "failed"):
        _approve(lab, "mg2")  # Alice approves again (a resume, or a new request)
        _once(lab, "mg2-again")
        _once(lab, "mg2-again2")
    # -- ab*: aborts raced with the daemon mid action 1, the daemon stopped, one daemon after
    for i, x in enumerate(RACE):
        who = AGENT if i % 2 == 0 else ALICE
        _approve(lab, x)
        proc = _spawn(lab, ["run"])
        try:
            seen[f"{x}:landed"] = until(lambda x=x: (d / f"READY-{x}-1").exists(), 60, 0.01)
            seen[f"{x}:act"] = _cli_as(lab, who, "abort", f"plans/{x}").returncode
        finally:
            _stop(proc)  # SIGTERM at once: the daemon stops after action 1
        if i % 2 == 1:
            z = f"rz{i // 2}"
            _approve(lab, z)
            proc = _spawn(lab, ["run"])
            try:
                pair = (RACE[i - 1], x, z)
                until(lambda pair=pair: all(_status_now(lab, y) in ("aborted", "completed",
                      "failed") for y in pair), 120, 0.5)  # fmt: skip
                time.sleep(1.0)
            finally:
                _stop(proc)
    _approve(lab, "abm")
    _daemon_until(lab, "abm", "abm-1",
                  lambda: _cli_as(lab, MALLORY, "abort", "--force", "plans/abm").returncode,
                  ("completed", "failed"))  # fmt: skip
    # -- rs: failed at its flaky action 2; Alice's and Bob's resumes raced with a daemon
    _approve(lab, "rs")
    _once(lab, "rs")
    seen["rs:row_failed"] = _rowsafe(lab).get("plans/rs", {})
    proc = _spawn(lab, ["run"])
    try:
        time.sleep(0.5)
        a = _cli_as(lab, ALICE, "approve", "plans/rs")
        b = _cli_as(lab, BOB, "approve", "--force", "plans/rs")
        seen["rs:approves"] = (a.returncode, a.stderr[-300:], b.returncode, b.stderr[-300:])
        until(lambda: lab.rows().get("plans/rs", {}).get("status") == "completed", 120, 0.5)
        time.sleep(1.0)
    finally:
        _stop(proc)
    _once(lab, "rs-after")
    # -- br / bd: the watched branch renamed or deleted by action 1; the owner's remedy
    _approve(lab, "br")
    _once(lab, "br")
    seen["br:branches"] = lab.git("branch", "--list")
    lab.git("branch", "-m", "trunk", "main", check=False)
    lab.git("checkout", "-q", "main", check=False)
    _once(lab, "br-fixed")
    _once(lab, "br-fixed2")
    _approve(lab, "bd")
    _once(lab, "bd")
    seen["bd:branches"] = lab.git("branch", "--list")
    lab.git("checkout", "-q", "-B", "main")  # main again at the (detached) HEAD
    _once(lab, "bd-fixed")
    _once(lab, "bd-fixed2")
    # -- rp / gf / gc: replace ref, graft, gc --prune=now mid-run
    for x in ("rp", "gf", "gc"):
        _approve(lab, x)
        _once(lab, x)
        _once(lab, f"{x}-2")
    with contextlib.suppress(FileNotFoundError):
        (lab.repo / ".git" / "info" / "grafts").unlink()
    # -- fz: a pass under a 1 MiB file size limit while action 1 prints 400 KB; then a pass
    _approve(lab, "fz")
    _once(lab, "fz-limited", prefix="ulimit -f 256")
    seen["fz:row_limited"] = _rowsafe(lab).get("plans/fz", {})
    _once(lab, "fz")
    _once(lab, "fz-2")
    seen["fz:row_after"] = _rowsafe(lab).get("plans/fz", {})
    if seen["fz:row_after"].get("status") == "failed":
        _approve(lab, "fz")
        _once(lab, "fz-resume")
    # -- tp / tf: start and pause dated 2001 / 2040 by the pass; Alice approves the gate today
    for x, date in (("tp", "@978307200 +0000"), ("tf", "@2218000000 +0000")):
        _approve(lab, x)
        lab.git_date = date
        _once(lab, x)
        lab.git_date = None
        seen[f"{x}:row_paused"] = _rowsafe(lab).get(f"plans/{x}", {})
        _approve(lab, x)
        _once(lab, f"{x}-gate")
        _once(lab, f"{x}-gate2")
    # -- tz: approval dated tomorrow in +14:00, pass in TZ=Pacific/Kiritimati
    _approve(
        lab,
        "tz",
        date=time.strftime("%Y-%m-%dT%H:%M:%S+1400", time.gmtime(time.time() + 14 * 3600 + 60)),
    )
    _once(lab, "tz", env={"TZ": "Pacific/Kiritimati"})
    _once(lab, "tz-2", env={"TZ": "America/St_Johns"})
    # -- nested: child renamed / deleted / edited mid-child by c1; child approved on its own
    _approve(lab, "nr", "nd", "ne")
    _once(lab, "nested")
    _once(lab, "nested-2")
    _approve(lab, "na")
    _daemon_until(lab, "na", "na-c1",
                  lambda: _approve(lab, "ch-na"), ("completed", "failed"))  # fmt: skip
    _once(lab, "na-2")
    _once(lab, "na-3")
    seen["wall"] = time.time() - t0
    seen["errs"] = [p.read_text()[-1500:] for p in lab.root.glob("err-*.log")]
    seen["rows"] = _rowsafe(lab)
    seen["plans"] = {}
    for s in ALL + [f"ch-{x}" for x in NESTED] + MANY:
        with contextlib.suppress(Exception):
            seen["plans"][s] = lab.plan(s)
    seen["calls"] = _rows(d)
    seen["audit"] = clone_audit_got(lab, root)
    seen["log"] = lab.git("log", "--format=%h %an %at %s")
    seen["log_ct"] = lab.git("log", "--format=%ct %s")  # committer time: when it landed
    seen["hooklog"] = (d / "hook.log").read_text() if (d / "hook.log").exists() else ""
    return lab


@pytest.fixture(scope="module")
def L(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "r111d-L", _build).seen  # type: ignore[attr-defined]


def _called(g: dict[str, Any], t: str) -> int:
    return sum(1 for r in g["calls"] if r["t"] == t and r["k"] == "call")


def _tags(x: str) -> list[str]:
    if x in NESTED:
        return [f"{x}-1", f"{x}-c1", f"{x}-c2", f"{x}-3"]
    return [f"{x}-1", f"{x}-2", f"{x}-3"]


def _status(g: dict[str, Any], x: str) -> Any:
    return (g["plans"].get(x) or {}).get("plan", {}).get("status")


#: how many calls an action may have: 2 for a flaky action resumed, else 1
ALLOWED = {"rs-2": 2, "na-c1": 2, "na-c2": 2}
BROKEN: dict[str, Any] = {}

ONCE = ALL


@pytest.mark.parametrize("x", cases(ONCE, ONCE, BROKEN))
def test_once(L: dict[str, Any], x: str) -> None:
    """Every action called at most once (a flaky one resumed: twice)."""
    got = {t: _called(L, t) for t in _tags(x)}
    bad = {t: n for t, n in got.items() if n > ALLOWED.get(t, 1)}
    assert not bad, (got, L["rows"].get(f"plans/{x}"))


@pytest.mark.parametrize("x", cases(ONCE, ONCE, BROKEN))
def test_order(L: dict[str, Any], x: str) -> None:
    """The calls of the plan came in its order (first calls)."""
    tags = _tags(x)
    seq = []
    for r in L["calls"]:
        if r["t"] in tags and r["k"] == "call" and r["t"] not in seq:
            seq.append(r["t"])
    assert seq == tags[: len(seq)], seq


EVIL = ["rp", "ne", "mg", "mg2", "br", "bd", "gf", "gc"]


@pytest.mark.parametrize("x", cases(EVIL, EVIL, BROKEN))
def test_evil(L: dict[str, Any], x: str) -> None:
    """Nothing a rewrite, replace ref, graft or edited child added ran."""
    ran = sorted({r["t"] for r in L["calls"] if r["t"].startswith(x + "-")})
    assert not [t for t in ran if "evil" in t or "extra" in t], ran
    assert set(ran) <= set(_tags(x)), ran


FINAL = {
    "mg": ("completed", "failed", "aborted"),
    "mg2": ("completed", "failed", "aborted"),
    "abm": ("completed",),
    "rs": ("completed",),
    "br": ("completed",),
    "bd": ("completed",),
    "rp": ("completed",),
    "gf": ("completed",),
    "gc": ("completed",),
    "fz": ("completed",),
    "tp": ("completed",),
    # the pass dated 2040 (the controller's own clock): Alice's gate approval today is older
    # than the pause, refused E_APPROVAL_REPLAYED; the gate holds (nothing runs unapproved)
    "tf": ("completed", "awaiting_approval"),
    "tz": ("completed",),
    "nr": ("completed",),
    "nd": ("completed",),
    "ne": ("completed",),
    "na": ("completed",),
    "rz0": ("completed",),
    "rz1": ("completed",),
}
#: fixed (fix111d): the pass that finds the held start back only through a merge commits
#: ``plangate: fail`` (E_HISTORY_REWRITTEN) for the run; a resume goes on, an abort ends it
FINAL_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("x", cases(list(FINAL), list(FINAL), FINAL_BROKEN))
def test_final(L: dict[str, Any], x: str) -> None:
    """The plan ends with a recorded outcome (the committed status and the status row), never
    stranded with an action run and no outcome."""
    row = L["rows"].get(f"plans/{x}", {})
    assert _status(L, x) in FINAL[x], (_status(L, x), row)
    assert row.get("status") in FINAL[x], row


@pytest.mark.parametrize("x", cases(["mg", "mg2"], ["mg", "mg2"], FINAL_BROKEN))
def test_stranded_run_closable(L: dict[str, Any], x: str) -> None:
    """After the erased start is merged back, git history records the run's end: a controller
    outcome commit (complete, fail, abort) of the plan follows its start."""
    subjects = [ln.split(" ", 3)[3] for ln in L["log"].splitlines() if ln.endswith(f"plans/{x}")]
    outcomes = [s for s in subjects if s.split(" ")[1] in ("complete", "fail", "abort")]
    assert outcomes, subjects[:6]


def test_abort_race_landed(L: dict[str, Any]) -> None:
    """The race bench: each raced abort landed while its action 1 ran."""
    assert all(L[f"{x}:landed"] and L[f"{x}:act"] == 0 for x in RACE), [
        (L.get(f"{x}:landed"), L.get(f"{x}:act")) for x in RACE
    ]


@pytest.mark.parametrize("x", cases(RACE, RACE, {}))
def test_abort_once(L: dict[str, Any], x: str) -> None:
    """Whatever the race did, action 1 of an aborted-then-restarted run ran once."""
    assert _called(L, f"{x}-1") == 1


def test_abort_then_nothing_runs(L: dict[str, Any]) -> None:
    """An abort (the author's or Alice's, plangate abort) committed mid action 1, the daemon
    stopped, another daemon takes both runs up: once the controller has committed plangate:
    abort for a plan, none of its actions is called after it (a call a second or more after
    the commit's time; git keeps whole seconds) and no complete follows. Under load the abort
    can land after action 1 ended and action 2 began, which is no breach: that action was
    called before the abort. When no replica called an action after its abort, nothing broke."""
    late = []
    for x in RACE:
        ends = [
            int(ln.split(" ", 1)[0])
            for ln in L["log_ct"].splitlines()
            if ln.split(" ", 1)[1].startswith("plangate: abort ") and ln.endswith(f"plans/{x}")
        ]
        if not ends:
            continue
        calls = [r for r in L["calls"] if r["k"] == "call" and r["t"] in (f"{x}-2", f"{x}-3")]
        late += [(x, r["t"], r["at"], min(ends)) for r in calls if r["at"] >= min(ends) + 1]
        subj = [ln.split(" ", 1)[1] for ln in L["log_ct"].splitlines() if ln.endswith(f"plans/{x}")]
        abort_at = next(i for i, s in enumerate(subj) if s.startswith("plangate: abort "))
        late += [(x, s) for s in subj[:abort_at] if s.startswith("plangate: complete ")]
    assert not late, late


def test_abort_by_stranger_ignored(L: dict[str, Any]) -> None:
    """Mallory's forced abort is ignored: every action ran once."""
    assert [_called(L, f"abm-{i}") for i in (1, 2, 3)] == [1, 1, 1], L["rows"].get("plans/abm")


def test_resume_race(L: dict[str, Any]) -> None:
    """Two resumes raced with the daemon: action 2 called exactly twice (the failed try and
    one resume), action 1 once, action 3 once."""
    assert [_called(L, f"rs-{i}") for i in (1, 2, 3)] == [1, 2, 1], L["rs:approves"]


def test_many_all_ran(L: dict[str, Any]) -> None:
    """40 plans approved in one commit: each completed, each action once."""
    bad = [x for x in MANY if _called(L, f"{x}-1") != 1 or _called(L, f"{x}-2") != 1]
    assert not bad, bad
    st = [x for x in MANY if _status(L, x) != "completed"]
    assert not st, st


def test_many_audit(L: dict[str, Any]) -> None:
    """The fresh-clone audit calls each of the 40 runs valid."""
    valid = set(L["audit"]["valid"])
    assert not [x for x in MANY if f"plans/{x}" not in valid]


#: mg, mg2 (the stranded runs): the audit's verdict differs between builds
AUDITED = [x for x in ALL if x not in RACE and x not in ("mg", "mg2")]


@pytest.mark.parametrize("x", cases(AUDITED, AUDITED, {}))
def test_audit_valid(L: dict[str, Any], x: str) -> None:
    """The fresh-clone audit calls the plan's run valid (the run rests on a valid approval)."""
    assert f"plans/{x}" in L["audit"]["valid"], (L["audit"]["err"], L["audit"]["rc"])


def test_audit_flags_nothing_unexplained(L: dict[str, Any]) -> None:
    """The fresh-clone audit flags no start or controller commit it cannot explain (the plans
    with a break of their own, mg, mg2 and the abort race, aside)."""
    rep = L["audit"]["report"]
    skip = {f"plans/{x}" for x in ["mg", "mg2", *RACE]}
    bad = [
        f
        for f in rep.get("findings", [])
        if isinstance(f, dict)
        and f.get("plan") not in skip
        and ("start" in f.get("kind", "") or "controller" in f.get("kind", ""))
    ]
    assert not bad, bad[:5]


def test_passes_no_traceback(L: dict[str, Any]) -> None:
    """No pass printed a traceback, the daemon's neither."""
    bad = [(t, e[-400:]) for t, _, e in L["passes"] if "Traceback" in e]
    bad += [e[-400:] for e in L["errs"] if "Traceback" in e]
    assert not bad, bad


def test_passes_exit_ok(L: dict[str, Any]) -> None:
    """Every pass exited 0, or 2 with a coded error (never an internal error)."""
    bad = [(t, rc, e[-300:]) for t, rc, e in L["passes"] if rc not in (0,) and "E_" not in e]
    assert not bad, bad
