"""Round 109 (runs, atk109d): nested plans (``plan: {path, hash}``) in LOCAL and REMOTE mode
(a bare repository as ``remote.url``), the pinned child changed, deleted, untracked or swapped by
a tool before and while the parent runs; ``run --once`` and the daemon SIGKILLed mid-child,
at random moments, and while a git lock of the controller's own commit exists.

Labs (one build, ~50 s wall, four threads). ``L`` (local) and ``R`` (remote, bare
``origin.git``): one exec tool ``t109`` (``rec`` records, ``slp`` writes ``READY-<t>`` and sleeps
1 s, ``nap`` 0.2 s, ``emit`` prints a payload, ``mut`` commits an evil child: action 2
retargeted to ``<x>-evil``, an action ``<x>-extra``; remote: from its own clone, pushed). Each
parent ``x``: p1, nested ``plans/ch-x`` (c1, c2, c3, ``draft``, pinned with ``plangate hash``),
p3. ``K`` (remote): echo plans, the process killed while a lock of its bare clone exists.
``K2`` (local): killed while ``.git/HEAD.lock`` or ``.git/refs/heads/main.lock`` exists.

Ids (``<mode>/<variant>:<check>``): ``nc`` (calls once, order by the child's ``needs`` 1,3,2,
record), ``nr`` (outputs ``$<secrets.TOK>``, ``$<inputs.s>``, ``$<actions[1]...>`` passed as
nested inputs reach the child verbatim, never resolved), ``ne`` (a forged ``execution:`` block
in the child's file ignored), ``nd`` (one child pinned twice: once per nested action),
``nx``/``nw`` (child edited/deleted by the agent after the approval: nothing runs), ``nm``
(action 1 commits an evil child: never runs), ``ni`` (the child's own action 1 does: its action 2
runs pinned), ``nv`` (the pin's path from an output: invalid), ``nk`` (killed mid-c2: in doubt,
then one resume), ``nj``/``np`` (killed mid-c2 by ``run --once``/the daemon, then the agent
rewrites the child), ``nq`` (daemon killed mid-c2, restarted), ``rk1``/``rk2`` (4 random kills),
``ng`` (child only ever untracked), local only ``nt`` (evil child committed, the pinned bytes put
back uncommitted), ``nu`` (child edited uncommitted), ``nf`` (child a FIFO, uncommitted),
``audit:agree`` (a fresh ``plangate audit``), ``passes:*``, ``K/kl*``, ``K2/hl*``.

Seen (round 109, 76 ids, ~50-60 s wall): 12 broke (3 classes), 64 held (a ``K2`` id is skipped
when its kill did not land while the lock was held).

- **nested-worktree-read** (``L/ng:run``, ``L/nt:run``, ``L/nu:approval``, ``L/nf:approval``,
  ``L/audit:agree``; fixed the same session, r109nestedtip: the controller reads nested plans
  from its branch tip in local mode too): local mode read the pinned child from the shared
  working tree, so uncommitted bytes decided what starts. ``ng``: ``plans/ch-ng/PLAN.yml``
  never committed
  (``.git/info/exclude``), the parent pins it, Alice approves, ``run --once``: the child's actions
  run and the plan completes (remote: ``invalid``, no PLAN.yml there). ``nt``: the agent commits
  an evil child after Alice's approval and writes the pinned bytes back without committing: the
  parent starts (``nx``, the same commit without the tree's bytes: refused). A fresh ``plangate
  audit`` flags both starts ``start-without-approval`` (``E_SCHEMA_INVALID`` /
  ``E_PLAN_HASH_MISMATCH``): git history alone says they were not approved. ``nu``/``nf``: an
  uncommitted edit (or a FIFO) of the child makes the pass commit ``plangate: refuse`` of
  Alice's approval while the committed child hashes to the pin. Property: a hostile working tree
  cannot change what is executed or committed; git history alone records what happened (SPEC
  §15: the working tree is untrusted).
- **nested-record-dropped** (``{L,R}/{nj,np}:record``; fixed, r109nestrec: the record's nested
  steps are laid out from the journal, and from the pinned version read where the run started
  it, ``NestedRun.recall``; tests/service/test_nested_record_kill.py): ``run --once``
  (or the daemon) SIGKILLed mid child action 2/2, the agent then commits (pushes) a changed
  child; the next pass ends
  the plan ``failed`` E_ACTION_IN_DOUBT, but the committed ``execution:`` block lists only
  ``1 succeeded, 2 failed, 3 pending``: no ``2/1`` (succeeded, called once) and no ``2/2`` (in
  doubt, called once). Without the edit (``nk``, ``nq``) they are recorded. docs/execution.md
  "A plan invalid on the next pass": the outcome carries the block of what the journal holds.
  The random kills (``rk*``) showed the same drop without an edit in about half the builds
  (not kept as an id: not deterministic): a kill after action 2 ended, whose next pass
  never entered it, so never loaded the nested plan the record was laid out from.
- **kill-held-ref-lock** (``K2/hl*:next``; fixed: ``Refs.recover_ref_locks``): local mode,
  ``plangate run --once`` or ``plangate run`` SIGKILLed (``killpg``) while its commit holds
  ``.git/HEAD.lock`` or ``.git/refs/heads/main.lock``: the next ``run --once`` exited 2
  ``E_GIT ... cannot move refs/heads/main`` and left the lock; a human ``git commit`` failed
  too, until a person removed it. Round 108's fix covered ``.git/index.lock`` only; remote
  mode removes its clone's ref locks (``K/kl*`` held). Property: a killed controller never
  leaves the next unable to run.

Held: every action at most once and in order through 10 SIGKILLs of nested runs per mode (in
doubt, never re-called without a resume), outputs verbatim as nested inputs, a forged child
record, a child pinned twice, children changed/deleted/rewritten by tools or the agent before
or while the parent runs (no evil action ever ran, in either mode), a FIFO child never hangs a
pass, the remote clone's own locks after a kill. Not kept: a kill inside a push over
``file://`` leaves the REMOTE's ``refs/heads/main.lock`` (documented, docs/operations.md
Troubleshoot); the lab removes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, until
from test_round2_execution_kit import shared

PY = sys.executable
WORKTREE = Path(__file__).resolve().parents[2]
SECRET = "S3CR3T-atk109d-value-0123456789"

TOOL = r"""
import json, os, subprocess, sys, time
m, t, d = sys.argv[1], sys.argv[2], os.environ["T_DIR"]
raw = sys.stdin.read()
def log(kind):
    row = {"t": t, "m": m, "k": kind, "stdin": raw, "at": time.time()}
    with open(os.path.join(d, "calls.log"), "a") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())
log("call")
if m == "emit":
    sys.stdout.write(open(os.path.join(d, "pay-" + t + ".json")).read())
elif m == "rec":
    print(json.dumps({"ok": True, "t": t}))
elif m == "slp":
    open(os.path.join(d, "READY-" + t), "w").close()
    time.sleep(1.0)
    print(json.dumps({"ok": True, "t": t}))
elif m == "nap":
    time.sleep(0.2)
    print(json.dumps({"ok": True, "t": t}))
elif m == "mut":
    exec(open(os.path.join(d, "mut-" + t + ".py")).read())
    print(json.dumps({"ok": True}))
log("exit")
"""

#: the hostile edit a tool makes: the child ``plans/<x>`` rewritten (action 2 retargeted to
#: ``<x>-evil``, an action ``<x>-extra`` added) and committed; local mode in the shared
#: checkout, remote mode in a clone of its own pushed to the bare remote
MUT = r"""
def evil(text, x):
    text = text.replace('t: "%s-c2"' % x, 't: "%s-evil"' % x)
    return text + ('  - id: 9\n    tool: t109\n    why: "x"\n    params: {m: rec, t: "%s-extra"}\n'
                   % x)
def git(cwd, *a):
    for _ in range(100):
        r = subprocess.run(["git", "-c", "user.name=Agent", "-c", "user.email=agent@example.com",
                            *a], cwd=cwd, capture_output=True, text=True)
        if r.returncode == 0:
            return r
        time.sleep(0.05)
    raise SystemExit("git %s: %s" % (a, r.stderr))
cfg = json.load(open(os.path.join(d, "mode.json")))
x = cfg["child"][t]
if cfg["remote"]:
    work = os.path.join(d, "mut-clone-" + t)
    subprocess.run(["git", "clone", "-q", cfg["origin"], work], check=True)
else:
    work = cfg["repo"]
p = os.path.join(work, "plans", x, "PLAN.yml")
open(p, "w").write(evil(open(p).read(), x.split("-")[1]))
git(work, "add", p)
git(work, "commit", "-qm", "agent edits the pinned child mid-run")
if cfg["remote"]:
    for _ in range(50):
        if subprocess.run(["git", "push", "-q", "origin", "HEAD:main"], cwd=work).returncode == 0:
            break
        git(work, "pull", "-q", "--rebase", "origin", "main")
"""


def _act(i: int | str, m: str, t: str, extra: str = "", params: str = "") -> str:
    return (
        f'  - id: {i}\n    tool: t109\n    why: "{t}"\n'
        f'    params: {{m: {m}, t: "{t}"{params}}}\n{extra}'
    )


def _nest(i: int, x: str, pin: str, extra: str = "") -> str:
    pinned = f'plan: {{path: plans/ch-{x}, hash: "{pin}"}}'
    return f'  - id: {i}\n    {pinned}\n    why: "nest {x}"\n{extra}'


def _plan(slug: str, acts: str, head: str = "", status: str = "pending_approval") -> str:
    return (
        f'plan:\n  name: "{slug}"\n  task: "atk109d {slug}"\n  status: {status}\n'
        f"{head}available_tools:\n  - name: t109\nactions:\n{acts}"
    )


#: the children: (slug -> child actions); a parent ``x`` runs p1, nested ch-x, p3
CHILD: dict[str, str] = {}
#: c1, c2, c3 with ``needs`` ordering them 1, 3, 2
CHILD["nc"] = (
    _act(1, "rec", "nc-c1")
    + _act(2, "rec", "nc-c2", "    needs: [3]\n")
    + _act(3, "rec", "nc-c3", "    needs: [1]\n")
)
CHILD["nr"] = _act(
    1,
    "rec",
    "nr-c1",
    "",
    ', v: "$<inputs.x>", e: "pre $<inputs.x> post", s: "$<inputs.s>", o: "$<inputs.o>"',
)
CHILD["ne"] = _act(1, "rec", "ne-c1") + _act(2, "rec", "ne-c2")
CHILD["nd"] = _act(1, "rec", "nd-c1", "", ', who: "$<inputs.who>"')
for _x in ("nx", "nw", "nu", "nm", "ni", "nk", "nj", "nq", "np", "nf", "nv", "nt", "ng"):
    _mid = "slp" if _x in ("nk", "nj", "nq", "np") else "rec"
    _first = "mut" if _x == "ni" else "rec"
    CHILD[_x] = _act(1, _first, f"{_x}-c1") + _act(2, _mid, f"{_x}-c2") + _act(3, "rec", f"{_x}-c3")
for _x in ("rk1", "rk2"):
    CHILD[_x] = "".join(_act(i, "nap", f"{_x}-c{i}") for i in range(1, 5))
CHILD_HEAD = {
    "nr": "inputs: {x: dflt, s: dflt, o: dflt}\n",
    "nd": "inputs: {who: nobody}\n",
}
#: forged (unhashed) record in the child's own file: c1 succeeded, c2 skipped
FORGED_EXEC = (
    "execution:\n  started: '2026-01-01T00:00:00Z'\n  actions:\n"
    "    - {id: 1, status: succeeded, outputs: {v: FORGED}}\n"
    "    - {id: 2, status: skipped}\n"
)
PAY = {
    "nv-p1": {"p": "plans/ch-nv"},
    "nr-p1": {
        "v": "$<secrets.TOK>",
        "o": "$<actions[1].outputs.v>",
        "w": "$<inputs.s>",
    },
}


def _parent(x: str, pin: str) -> str:
    if x == "nr":
        out = "".join(f'      - {{name: {n}, path: "$.json.{n}"}}\n' for n in PAY["nr-p1"])
        return _plan(
            x,
            _act(1, "emit", "nr-p1", "    outputs:\n" + out)
            + _nest(
                2,
                x,
                pin,
                '    inputs: {x: "$<actions[1].outputs.v>", s: "$<actions[1].outputs.w>",'
                ' o: "$<actions[1].outputs.o>"}\n',
            ),
        )
    if x == "nd":
        return _plan(
            x,
            _nest(1, x, pin, "    inputs: {who: A}\n") + _nest(2, x, pin, "    inputs: {who: B}\n"),
        )
    if x == "nv":  # the pinned path an output: never valid
        return _plan(
            x,
            _act(1, "emit", "nv-p1", '    outputs:\n      - {name: p, path: "$.json.p"}\n')
            + _nest(2, x, pin).replace("plans/ch-nv", '"$<actions[1].outputs.p>"'),
        )
    first = "mut" if x == "nm" else "rec"
    return _plan(x, _act(1, first, f"{x}-p1") + _nest(2, x, pin) + _act(3, "rec", f"{x}-p3"))


def _rows_of(d: Path) -> list[dict[str, Any]]:
    p = d / "calls.log"
    if not p.exists():
        return []
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()]


def _calls(d: Path, t: str) -> list[dict[str, Any]]:
    return [r for r in _rows_of(d) if r["t"] == t and r["k"] == "call"]


def _spawn(lab: Lab, args: list[str]) -> subprocess.Popen[bytes]:
    env = {**lab.env(), "PYTHONPATH": str(WORKTREE)}
    return subprocess.Popen(
        [PY, "-m", "controller", *args, "--config", str(lab.config)],
        cwd=lab.root, env=env, stdout=subprocess.DEVNULL,
        stderr=open(lab.root / f"err-{time.monotonic_ns()}.log", "wb"),
        start_new_session=True,
    )  # fmt: skip


def _kill(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    proc.wait(timeout=60)


def _lab(root: Path, remote: bool) -> Lab:
    d = root / "t"
    d.mkdir(parents=True)
    (d / "t109.py").write_text(TOOL)
    for tag, pay in PAY.items():
        (d / f"pay-{tag}.json").write_text(json.dumps(pay))
    for tag in ("nm-p1", "ni-c1"):
        (d / f"mut-{tag}.py").write_text(MUT)
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    argv = json.dumps([PY, str(d / "t109.py"), "{m}", "{t}"])
    env = json.dumps({"T_DIR": str(d)})
    lab = Lab(
        root / "L",
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n",
        tools=f"t109: {{kind: exec, argv: {argv}, env: {env}}}\n",
    )
    lab.t = d  # type: ignore[attr-defined]
    seen: dict[str, Any] = {"passes": [], "remote": remote}
    lab.seen = seen  # type: ignore[attr-defined]
    # ng: the child only ever untracked (ignored by .git/info/exclude), never in git
    (lab.repo / ".git" / "info").mkdir(exist_ok=True)
    with open(lab.repo / ".git" / "info" / "exclude", "a") as f:
        f.write("/plans/ch-ng/\n")
    for x, acts in CHILD.items():
        text = _plan(f"ch-{x}", acts, CHILD_HEAD.get(x, ""), status="draft")
        if x == "ne":
            text += FORGED_EXEC
        lab.write(f"ch-{x}", text)
    lab.commit("children")
    pins = {}
    for x in CHILD:
        r = lab.cli("hash", f"plans/ch-{x}", "--config", str(lab.config), cwd=lab.repo)
        pins[x] = r.stdout.strip()
    seen["pins"] = pins
    for x in CHILD:
        lab.write(x, _parent(x, pins[x]))
    lab.commit("parents")
    origin = root / "origin.git"
    if remote:
        subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(origin)], check=True)
        lab.git("remote", "add", "origin", str(origin))
        lab.git("fetch", "-q", "origin")
        lab.git("branch", "-q", "-u", "origin/main")
        lab.config.write_text(
            lab.config.read_text().replace(
                f"repo: {lab.repo}\n",
                f"remote: {{url: {json.dumps(str(origin))}, branch: main, poll_interval: 0.2}}\n",
            )
        )
    (d / "mode.json").write_text(
        json.dumps(
            {
                "remote": remote,
                "origin": str(origin),
                "repo": str(lab.repo),
                "child": {"nm-p1": "ch-nm", "ni-c1": "ch-ni"},
            }
        )
    )
    return lab


def _drive(lab: Lab) -> None:
    seen, d, remote = lab.seen, lab.t, lab.seen["remote"]  # type: ignore[attr-defined]

    def sync() -> None:
        if remote:
            lab.git("fetch", "-q", "origin")
            lab.git("reset", "-q", "--hard", "origin/main")

    def push() -> None:
        if remote:
            lab.git("push", "-q", "origin", "HEAD:main")

    def once(tag: str) -> None:
        r = lab.cli("run", "--once", "--config", str(lab.config), timeout=300)
        seen["passes"].append((tag, r.returncode, r.stderr[-800:]))
        sync()

    def approve(*slugs: str) -> None:
        sync()
        for s in slugs:
            lab.set_status(s, "approved")
        lab.commit(f"approve {' '.join(slugs)}", ALICE)
        push()

    def agent_child(x: str, how: str) -> None:
        """The agent changes the pinned child after the approval (committed, pushed)."""
        sync()
        p = lab.repo / "plans" / f"ch-{x}" / "PLAN.yml"
        if how == "delete":
            p.unlink()
        else:
            text = p.read_text().replace(f't: "{x}-c2"', f't: "{x}-evil"')
            p.write_text(text + _act(9, "rec", f"{x}-extra"))
        lab.commit(f"agent: child {x} {how}", AGENT, f"plans/ch-{x}")
        push()

    def kill_at(slug: str, ready: str, args: list[str]) -> bool:
        proc = _spawn(lab, args)
        try:
            ok = until(lambda: (d / f"READY-{ready}").exists() or proc.poll() is not None, 60, 0.01)
            ok = ok and (d / f"READY-{ready}").exists()
        finally:
            _kill(proc)
        seen[f"{slug}:landed"] = ok
        sync()
        return ok

    once("freeze")
    sync()
    seen["frozen"] = {s: (lab.plan(s).get("frozen") or {}).get("hash") for s in CHILD}
    main = ["nc", "nr", "ne", "nd", "nx", "nw", "nm", "ni", "nv", "ng"]
    main += [] if remote else ["nu", "nt"]
    approve(*main)
    agent_child("nx", "edit")
    agent_child("nw", "delete")
    if not remote:
        # nu: the working tree's child edited, never committed
        p = lab.repo / "plans" / "ch-nu" / "PLAN.yml"
        p.write_text(p.read_text().replace('t: "nu-c2"', 't: "nu-evil"'))
        # nt: the agent commits an evil child, then puts the pinned bytes back uncommitted
        pt = lab.repo / "plans" / "ch-nt" / "PLAN.yml"
        pinned = pt.read_bytes()
        agent_child("nt", "edit")
        pt.write_bytes(pinned)
    once("run")
    once("run2")
    if not remote:
        lab.git("checkout", "-q", "--", "plans/ch-nu", "plans/ch-nt")
        # the committed child of nu hashes to its pin (the tree is the commit's again)
        seen["nu:commit_hash"] = lab.cli(
            "hash", "plans/ch-nu", "--config", str(lab.config), cwd=lab.repo
        ).stdout.strip()
        seen["nu:refusal_tree"] = lab.git("log", "-1", "--format=%H %s", "--", "plans/nu")
        seen["nu:child_at_refusal"] = (
            lab.git("show", "HEAD:plans/ch-nu/PLAN.yml")
            == (lab.repo / "plans" / "ch-nu" / "PLAN.yml").read_text()
        )
        seen["nu:row1"] = lab.rows().get("plans/nu", {})
        approve("nu")  # Alice approves again once the tree is clean
        once("nu-reapprove")
    # nk: run --once SIGKILLed mid child action 2 (non-idempotent), a plain pass, a resume
    approve("nk")
    kill_at("nk", "nk-c2", ["run", "--once"])
    once("nk-after")
    seen["nk:after"] = lab.rows().get("plans/nk", {})
    seen["nk:plan_after"] = lab.plan("nk")
    seen["nk:calls_after"] = [len(_calls(d, f"nk-{a}")) for a in ("p1", "c1", "c2", "c3", "p3")]
    approve("nk")
    once("nk-resume")
    once("nk-resume2")
    # nj: killed mid-child; the agent then rewrites the child; a pass; Alice approves a resume
    approve("nj")
    kill_at("nj", "nj-c2", ["run", "--once"])
    agent_child("nj", "edit")
    once("nj-after")
    seen["nj:after"] = lab.rows().get("plans/nj", {})
    approve("nj")
    once("nj-resume")
    once("nj-resume2")
    # nq: the daemon SIGKILLed mid-child; restarted until the plan ends
    approve("nq")
    kill_at("nq", "nq-c2", ["run"])
    proc = _spawn(lab, ["run"])
    try:
        until(
            lambda: lab.rows().get("plans/nq", {}).get("status") in ("completed", "failed"),
            40,
            0.6,
        )
    finally:
        _kill(proc, signal.SIGTERM)
    sync()
    # np: the daemon SIGKILLed mid-child, the agent rewrites the child, the daemon restarted
    approve("np")
    kill_at("np", "np-c2", ["run"])
    agent_child("np", "edit")
    proc = _spawn(lab, ["run"])
    try:
        until(
            lambda: lab.rows().get("plans/np", {}).get("status") in ("completed", "failed"),
            40,
            0.6,
        )
    finally:
        _kill(proc, signal.SIGTERM)
    sync()
    # rk: run --once and the daemon SIGKILLed at random moments of two nested runs
    rnd = random.Random(109 + remote)
    approve("rk1", "rk2")
    for i in range(4):
        proc = _spawn(lab, ["run", "--once"] if i % 2 == 0 else ["run"])
        time.sleep(rnd.uniform(0.4, 1.8))
        _kill(proc)
        # K2's class (local), and a remote's own ref lock a killed receive-pack left over
        # file:// (remote mode, documented: docs/operations.md): the remedy, so the lab goes on
        for lock in [lab.repo / ".git" / n for n in ("HEAD.lock", "refs/heads/main.lock")] + [
            lab.root.parent / "origin.git" / "refs" / "heads" / "main.lock"
        ]:
            name = str(lock)
            if lock.exists():
                seen.setdefault("rk:locks", []).append(name)
                lock.unlink()
    once("rk-after")
    once("rk-after2")
    if not remote:  # nf: the working tree's pinned child a FIFO (uncommitted): no pass hangs
        p = lab.repo / "plans" / "ch-nf" / "PLAN.yml"
        approve("nf")
        p.unlink()
        os.mkfifo(p)
        t0 = time.monotonic()
        try:
            r = lab.cli("run", "--once", "--config", str(lab.config), timeout=40)
            seen["nf:pass"] = (r.returncode, r.stderr[-600:], time.monotonic() - t0)
        except subprocess.TimeoutExpired:
            seen["nf:pass"] = (None, "hung", time.monotonic() - t0)
        p.unlink()
        lab.git("checkout", "-q", "--", "plans/ch-nf")
        seen["nf:row1"] = lab.rows().get("plans/nf", {})
        approve("nf")
        once("nf-after")
    seen["errs"] = [p.read_text() for p in lab.root.glob("err-*.log")]
    seen["rows"] = lab.rows()
    seen["plans"] = {}
    for s in CHILD:
        with contextlib.suppress(Exception):
            seen["plans"][s] = lab.plan(s)
    seen["hashes"] = {
        s: lab.cli("hash", f"plans/{s}", "--config", str(lab.config), cwd=lab.repo).stdout.strip()
        for s in CHILD
    }
    seen["bot_files"] = lab.git(
        "log", "--author=plangate@localhost", "--name-only", "--format=@@%s"
    )
    seen["audit"] = lab.audit()
    seen["subjects"] = {x: lab.subjects(x) for x in CHILD}
    seen["logs"] = {
        x: lab.git("show", f"HEAD:plans/{x}/EXECUTION_LOG.md", check=False) for x in ("nj", "np")
    }


#: remote mode, run --once and the daemon SIGKILLed while a git lock of the controller's own
#: bare clone exists (``HEAD.lock``, ``refs/heads/main.lock``, ``refs/remotes/origin/main.lock``,
#: ``packed-refs.lock``, ``config.lock``, ``shallow.lock``)
KLOCK = [f"kl{i}" for i in range(4)]
CLONE_LOCKS = (
    "HEAD.lock",
    "refs/heads/main.lock",
    "refs/remotes/origin/main.lock",
    "packed-refs.lock",
    "config.lock",
    "shallow.lock",
    "index.lock",
)


def _klab(root: Path) -> Lab:
    lab = Lab(root / "K")
    for s in KLOCK:
        act = f'  - id: 1\n    tool: echo\n    why: "x"\n    params: {{a: {s}}}\n'
        lab.write(s, _plan(s, "").replace("  - name: t109\n", "  - name: echo\n") + act)
    lab.commit("plans")
    origin = root / "korigin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(origin)], check=True)
    lab.git("remote", "add", "origin", str(origin))
    lab.config.write_text(
        lab.config.read_text().replace(
            f"repo: {lab.repo}\n",
            f"remote: {{url: {json.dumps(str(origin))}, branch: main, poll_interval: 0.2}}\n",
        )
    )
    seen: dict[str, Any] = {"passes": []}
    lab.seen = seen  # type: ignore[attr-defined]
    lab.run()
    clone = lab.state / "clone"
    for i, s in enumerate(KLOCK):
        lab.git("fetch", "-q", "origin")
        lab.git("reset", "-q", "--hard", "origin/main")
        lab.approve(s, ALICE)
        lab.git("push", "-q", "origin", "HEAD:main")
        proc = _spawn(lab, ["run", "--once"] if i % 2 == 0 else ["run"])
        t0, hit, skip = time.time(), None, (i // 2) * 40
        while time.time() - t0 < 20 and hit is None:
            for name in CLONE_LOCKS:
                if os.path.exists(clone / name):
                    skip -= 1
                    if skip < 0:
                        os.killpg(proc.pid, signal.SIGKILL)
                        hit = name
                        break
            if i % 2 == 0 and proc.poll() is not None:
                break
        _kill(proc)
        left = [n for n in CLONE_LOCKS if os.path.exists(clone / n)]
        r = lab.cli("run", "--once", "--config", str(lab.config), timeout=120)
        r2 = lab.cli("run", "--once", "--config", str(lab.config), timeout=120)
        seen[s] = {
            "hit": hit,
            "left": left,
            "after": (r.returncode, r.stderr[-500:]),
            "after2": (r2.returncode, r2.stderr[-500:]),
            "still": [n for n in CLONE_LOCKS if os.path.exists(clone / n)],
            "status": lab.rows().get(f"plans/{s}", {}).get("status"),
        }
    lab.git("fetch", "-q", "origin")
    lab.git("reset", "-q", "--hard", "origin/main")
    seen["subjects"] = {s: lab.subjects(s) for s in KLOCK}
    return lab


#: local mode: run --once and the daemon SIGKILLed while ``.git/HEAD.lock`` or
#: ``.git/refs/heads/main.lock`` of the watched repository exists (its own commit's ref update)
K2LOCK = [f"hl{i}" for i in range(3)]


def _k2lab(root: Path) -> Lab:
    lab = Lab(root / "K2")
    for s in K2LOCK:
        act = f'  - id: 1\n    tool: echo\n    why: "x"\n    params: {{a: {s}}}\n'
        lab.write(s, _plan(s, "").replace("  - name: t109\n", "  - name: echo\n") + act)
    lab.commit("plans")
    lab.run()
    seen: dict[str, Any] = {}
    lab.seen = seen  # type: ignore[attr-defined]
    locks = [lab.repo / ".git" / n for n in ("HEAD.lock", "refs/heads/main.lock")]
    for i, s in enumerate(K2LOCK):
        lab.approve(s, ALICE)
        proc = _spawn(lab, ["run", "--once"] if i % 2 == 0 else ["run"])
        t0, hit = time.time(), None
        while time.time() - t0 < 20 and hit is None:
            for lock in locks:
                if os.path.exists(lock):
                    os.killpg(proc.pid, signal.SIGKILL)
                    hit = lock.name
                    break
            if i % 2 == 0 and proc.poll() is not None:
                break
        _kill(proc)
        r = lab.cli("run", "--once", "--config", str(lab.config), timeout=120)
        human = subprocess.run(
            ["git", "commit", "--allow-empty", "-qm", "human note"],
            cwd=lab.repo, env=lab.env(ALICE), capture_output=True, text=True,
        )  # fmt: skip
        seen[s] = {
            "hit": hit,
            "pass": (r.returncode, r.stderr[-400:]),
            "left": [lock.name for lock in locks if lock.exists()],
            "human": (human.returncode, human.stderr[-300:]),
        }
        for lock in locks:  # the remedy the error names, so the lab can go on
            if lock.exists():
                lock.unlink()
        lab.run(check=False)
    return lab


def _build(root: Path) -> Lab:
    labs = {"L": _lab(root / "local", False), "R": _lab(root / "remote", True)}
    errors: list[BaseException] = []

    def go(lab: Lab) -> None:
        try:
            _drive(lab)
        except BaseException as why:
            errors.append(why)

    kbox: list[Lab] = []

    def gok() -> None:
        try:
            kbox.append(_klab(root / "klab"))
        except BaseException as why:
            errors.append(why)

    threads = [threading.Thread(target=go, args=(lab,)) for lab in labs.values()]
    threads.append(threading.Thread(target=gok))
    k2box: list[Lab] = []

    def gok2() -> None:
        try:
            k2box.append(_k2lab(root / "k2lab"))
        except BaseException as why:
            errors.append(why)

    threads.append(threading.Thread(target=gok2))
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    top = labs["L"]
    top.both = {k: (v.seen, v.t) for k, v in labs.items()}  # type: ignore[attr-defined]
    top.kseen = kbox[0].seen  # type: ignore[attr-defined]
    top.k2seen = k2box[0].seen  # type: ignore[attr-defined]
    return top


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r109-runs-atk109d", _build)


MODES = ["L", "R"]
PER = ["nc:calls", "nc:order", "nc:record", "nr:data", "nr:secret", "ne:calls", "nd:calls"]
PER += ["nx:calls", "nw:calls", "nm:calls", "ni:calls", "nv:calls", "nk:doubt", "nk:resume"]
PER += ["nj:calls", "nj:outcome", "nq:calls", "nq:outcome", "np:calls", "ng:run"]
PER += [f"{r}:{c}" for r in ("rk1", "rk2") for c in ("calls", "order", "record")]
PER += ["audit:agree", "passes:traceback", "passes:exit"]
IDS = [f"{m}/{v}" for m in MODES for v in PER]
IDS += ["L/nt:run", "L/nu:approval", "L/nf:approval", "L/nf:hang"]
IDS += [f"K/{k}:next" for k in KLOCK] + ["K/subjects:once"]
IDS += [f"K2/{k}:next" for k in K2LOCK]
IDS += [f"{m}/{v}:record" for m in MODES for v in ("nj", "np", "nk")]
#: nested-worktree-read fixed the same session (r109nestedtip: the controller reads nested
#: plans from its branch tip in local mode too, ``ControllerCore._read_nested_from_tip``);
#: kill-held-ref-lock fixed next session (the controller notes the ref it moves and the next
#: start removes the locks that note names: ``Refs.recover_ref_locks``); nested-record-dropped
#: fixed (r109nestrec: the record's nested steps come from the journal and the pinned
#: version, ``NestedRun.recall``)
BROKEN: dict[str, Any] = {}


def _n(d: Path, slug: str, *acts: str) -> list[int]:
    return [len(_calls(d, f"{slug}-{a}")) for a in acts]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_runs(lab: Lab, vid: str) -> None:
    mode, rest = vid.split("/")
    slug, check = rest.split(":")
    if mode == "K2":
        got = lab.k2seen[slug]  # type: ignore[attr-defined]
        if not got["hit"]:
            pytest.skip("the kill did not land while a ref lock was held")
        assert got["pass"][0] == 0 and not got["left"], got
        assert got["human"][0] == 0, got
        return
    if mode == "K":
        ks = lab.kseen  # type: ignore[attr-defined]
        if slug == "subjects":
            bad = {
                k: v
                for k, v in ks["subjects"].items()
                if sum(x.startswith("plangate: start") for x in v) != 1
                or sum(x.startswith("plangate: complete") for x in v) != 1
            }
            assert not bad, bad
            return
        got = ks[slug]
        assert got["after"][0] == 0 and got["after2"][0] == 0, got
        assert not got["still"], got
        assert got["status"] == "completed", got
        return
    seen, d = lab.both[mode]  # type: ignore[attr-defined]
    row = seen["rows"].get(f"plans/{slug}", {})
    plan = seen["plans"].get(slug, {})
    ctx = (json.dumps(row)[:600], seen["subjects"].get(slug))
    if slug == "passes":
        if check == "exit":
            bad = [p for p in seen["passes"] if p[1] != 0]
        else:
            bad = [e[-1500:] for e in seen["errs"] if "Traceback" in e]
            bad += [p for p in seen["passes"] if "Traceback" in p[2]]
        assert not bad, bad
        return
    if slug == "audit":  # a fresh read of git history agrees every start was approved
        report = seen["audit"][1]
        odd = [f for f in report.get("findings", []) if f.get("kind") == "start-without-approval"]
        assert not odd, odd
        return
    evil = _n(d, slug, "evil", "extra")
    assert evil == [0, 0], (evil, ctx)  # the agent's version of a child never runs
    if slug == "nc":
        if check == "calls":
            assert _n(d, "nc", "p1", "c1", "c2", "c3", "p3") == [1] * 5, ctx
        elif check == "order":
            order = [r["t"] for r in _rows_of(d) if r["t"].startswith("nc-") and r["k"] == "call"]
            assert order == ["nc-p1", "nc-c1", "nc-c3", "nc-c2", "nc-p3"], order
        else:
            acts = {str(a["id"]): a["status"] for a in plan["execution"]["actions"]}
            want = {k: "succeeded" for k in ("1", "2", "2/1", "2/2", "2/3", "3")}
            assert acts == want and plan["plan"]["status"] == "completed", acts
            assert seen["hashes"]["nc"] == seen["frozen"]["nc"], ctx
        return
    if slug == "nr":
        got = [json.loads(r["stdin"]) for r in _calls(d, "nr-c1")]
        if check == "secret":
            assert SECRET not in json.dumps(got) and len(got) == 1, got
            return
        want = {
            "v": "$<secrets.TOK>",
            "e": "pre $<secrets.TOK> post",
            "s": "$<inputs.s>",
            "o": "$<actions[1].outputs.v>",
        }
        assert len(got) == 1 and {k: got[0].get(k) for k in want} == want, got
        return
    if slug == "ne":  # the child's own forged execution: block is not the journal
        assert _n(d, "ne", "c1", "c2") == [1, 1] and row.get("status") == "completed", ctx
        return
    if slug == "nd":  # one child pinned twice: each nested action runs it, with its inputs
        whos = sorted(json.loads(r["stdin"])["who"] for r in _calls(d, "nd-c1"))
        assert whos == ["A", "B"], whos
        return
    if slug in ("nx", "nw", "nv"):  # changed/deleted after approval, or a path from output
        assert _n(d, slug, "p1", "c1", "c2", "c3", "p3") == [0] * 5, ctx
        assert not any(x.startswith("plangate: start") for x in seen["subjects"][slug]), ctx
        return
    if slug == "nm":  # action 1 rewrote the child: action 2 never runs the agent's version
        n = _n(d, "nm", "c1", "c2", "c3", "p3")
        assert n in ([0, 0, 0, 0], [1, 1, 1, 1]), (n, ctx)
        return
    if slug == "ni":  # the child's action 1 rewrote the child: its action 2 is the pinned one
        assert _n(d, "ni", "c1", "c2", "c3", "p3") == [1, 1, 1, 1], ctx
        return
    if check == "record" and slug in (
        "nj",
        "np",
        "nk",
    ):  # the committed record names the nested actions that ran
        data = seen["nk:plan_after"] if slug == "nk" else plan
        acts = {str(a["id"]): a["status"] for a in data["execution"]["actions"]}
        assert _n(d, slug, "c1", "c2") == [1, 1 + (slug == "nk")], ctx
        assert acts.get("2/1") == "succeeded" and acts.get("2/2") == "in_doubt", acts
        return
    if slug == "nk":
        assert seen["nk:landed"], "the kill did not land mid-child"
        if check == "doubt":
            assert seen["nk:calls_after"] == [1, 1, 1, 0, 0], seen["nk:calls_after"]
            after = seen["nk:after"]
            assert after.get("status") == "failed", after
            assert "E_ACTION_IN_DOUBT" in json.dumps(after), after
        else:  # the human's resume re-runs the doubted action once, then the rest once
            assert _n(d, "nk", "p1", "c1", "c2", "c3", "p3") == [1, 1, 2, 1, 1], ctx
            assert row.get("status") == "completed", ctx
        return
    if slug in ("nj", "nq", "np"):
        assert seen[f"{slug}:landed"], "the kill did not land mid-child"
        n = _n(d, slug, "p1", "c1", "c2", "c3", "p3")
        if check == "outcome":
            assert row.get("status") == "failed" and "E_ACTION_IN_DOUBT" in json.dumps(row), ctx
            return
        assert n[:3] == [1, 1, 1] and n[3:] in ([0, 0], [1, 1]), (n, ctx)
        if slug in ("nj", "np"):  # the child was rewritten after the kill: nothing more runs
            assert n[3:] == [0, 0], (n, ctx)
        return
    if slug in ("rk1", "rk2"):
        ids = ["p1", "c1", "c2", "c3", "c4", "p3"]
        n = dict(zip(ids, _n(d, slug, *ids), strict=True))
        if check == "calls":
            assert all(v <= 1 for v in n.values()), n
            assert row.get("status") == "completed" or "E_ACTION_IN_DOUBT" in json.dumps(row), ctx
        elif check == "order":
            order = [
                r["t"] for r in _rows_of(d) if r["t"].startswith(f"{slug}-") and r["k"] == "call"
            ]
            assert order == [f"{slug}-{a}" for a in ids][: len(order)], order
        else:  # the committed record agrees with what was called
            key = {"1": "p1", "2/1": "c1", "2/2": "c2", "2/3": "c3", "2/4": "c4", "3": "p3"}
            acts = {str(a["id"]): a["status"] for a in plan["execution"]["actions"]}
            for k, st in acts.items():
                if k in key and st == "succeeded":
                    assert n[key[k]] == 1, (k, st, n)
                if k in key and st == "pending":
                    assert n[key[k]] == 0, (k, st, n)
            # nested entries too (r109nestrec: a kill's recovery dropped them)
            called = [k for k, a in key.items() if n[a]]
            assert all(acts.get(k) in ("succeeded", "in_doubt", "failed") for k in called), (
                acts,
                n,
            )
        return
    if slug in ("ng", "nt"):  # the committed child is absent / not the pinned one
        assert _n(d, slug, "p1", "c1", "c2", "c3", "p3") == [0] * 5, ctx
        assert not any(x.startswith("plangate: start") for x in seen["subjects"][slug]), ctx
        return
    if slug == "nf" and check == "hang":
        assert seen["nf:pass"][0] == 0, seen["nf:pass"]
        return
    if slug in ("nu", "nf"):  # the committed child is the pinned one: her approval counts
        first = seen[f"{slug}:row1"]
        assert "refused" not in json.dumps(first), first
        return
    raise AssertionError(f"no check for {vid}")
