"""Round 92 (runs, atk92c): REMOTE mode over a real ``git daemon`` (its ``origin.git`` with a
``pre-receive`` hook), past round 91's runs module: three controllers on one remote, failover
copies of the state directory taken while the clone holds an UNPUSHED start commit (a killed
pass's), a remote that declines pushes or goes away mid-run, a force-push of the remote
branch under a running plan, a fresh state directory (empty, or holding only the first's
``commit.key``), a kill right after the start-up clearing of stale clone locks, the daemon's
webhook path with a ``run --once`` beside it, and LOCAL mode with two ``run --once`` on one
working tree.

Lab (one build). The round-91 tool ``t91`` (each call appended fsynced to ``calls.log``;
``rec`` exits 0) plus ``slp`` (writes ``READY-<t>``, sleeps 2 s). Kills: ``run --once`` in a
session of its own, polled at 0.5 ms, SIGKILLed (``killpg``) once the clone's ``main``
moved past the remote's (its start commit made, not pushed). A state copy is
``shutil.copytree`` of ``<state_dir>`` (clone, journal, ``commit.key``) with a config naming
it. Passes that stop on a stale clone lock have it removed as their remedy says.

- local (``L``): ``l0``..``l3``, each approved then two ``run --once`` on the same config
  and working tree started together at a second's start (the state lock decides).
- ``rh``: control. ``rj``: the hook declines any push whose tip says ``start plans/rj``; two
  passes, then the hook accepts; two passes. ``ro``: the hook declines ``complete
  plans/ro``/``fail plans/ro``; two passes, ``status --json``, then it accepts; two passes.
- ``t0``..``t2``: THREE controllers: the first and two copies of its state directory (each
  after one pass of its own), started together at a second's start.
- ``fp``: the first killed once its start of ``fp`` is in its clone and not on the remote;
  the state directory copied THEN (the copy holds the unpushed start); the killed one
  restarted and the copy started together. ``f3``: the same with two copies, three
  controllers started together. ``fc``: the same with one copy that runs ALONE first (its
  pass ends, ``completed``), and only then the old host comes back for one pass (a failover
  whose old host returns after the takeover finished).
- ``fr``: a fresh, empty state directory started on the sealed branch with ``fr`` approved;
  then the first runs it. ``fk``: a fresh state directory holding only the first's
  ``commit.key``, started together with the first.
- ``kl``: ``HEAD.lock`` and ``refs/heads/main.lock`` planted in the clone (a killed pass's
  leftovers), ``kl`` approved, the pass killed as soon as both are gone (mid-start-up), then
  passes.
- ``fz``: ``slp`` running, Bob force-pushes the remote ``main`` back to the tip before the
  start (the start gone from the remote); the pass ends, three more passes (one of them a
  copy's).
- ``gd``: ``slp`` running, the ``git daemon`` stopped; the pass ends, a pass while it is
  down, the daemon back on the same port, two passes.
- ``wh``: the daemon (``plangate run``, ``webhook.listen`` on 127.0.0.1) on the first's
  state directory, ``wh`` approved and pushed, one signed POST (``X-Plangate-Secret``), 30
  more while ``slp`` runs, a ``run --once`` on the same state directory beside it, one POST
  without a credential, the daemon stopped once the remote shows ``complete plans/wh``.

Then each controller's state (the copies and the first) has a last pass, and the remote is
audited in a fresh clone. Checks per plan: ``calls`` (the tool called once), ``record``
(the remote's PLAN.yml ``completed``), ``subjects`` (one ``start``, one end), ``audit``
(one valid run, ``complete``, no finding of the plan); ``rj:held`` (no call while declined),
``ro:held`` (one call through both declined passes), ``ro:waiting``, ``fc:copy`` (the copy
ran it once alone), ``fr:refused``, ``fz:calls``/``fz:ends``, ``wh:codes``/``wh:beside``/
``wh:done``, and ``landed``/``ahead``/``ready``/``forced`` preconditions.

Seen (round 92): one class, ``heirrun``, 9 ids (``fp``, ``f3``, ``fc`` x ``calls``,
``subjects``, ``audit``), in every build run (four for ``fp``, three for ``f3``, ``fc``): a
start commit a killed pass left UNPUSHED in its clone, carried into a copy of the state
directory, is run by EVERY controller that holds it: ``fp`` called twice (e.g. pids 7507 and
7524, 90 ms apart), ``f3`` three times, and ``fc`` twice even though the copy had finished
the plan (its pass exited 0 with ``"plan": "plans/fc" ... "status": "completed", "event":
"plan_outcome"``) before the old host came back; the old host's single pass then logged the
same ``plan_outcome`` ``completed`` and called the tool again. The remote holds ONE
``plangate: start plans/fp`` and TWO ``plangate: complete plans/fp`` (``f3``: three
completes); the fresh clone's audit
flags the later ones ``controller-unexplained`` ("a commit under the controller's identity
that it did not make: records complete plans/fp with no cause on the branch: no start of the
plan for an outcome, no abort request for an abort (Aborted-By: is a claim)"),
``log-changed`` ("EXECUTION_LOG.md changed by a commit not from the controller") and
``owned-block-changed``. (The start was made by the killed process, so its bytes and token
are the same in every copy; whichever pushes it, each takes it for its own start: round 91's
per-process token does not reach a commit made before the copy. Not checked further.)
Held: ``t0``..``t2`` (three live controllers, two of them copies) each ran once, one start,
one complete, audit clean; ``fk`` (a fresh state directory with the same ``commit.key``
beside the first) ran once; ``fr``: ``E_STORAGE`` ("... is new, and the branch holds commits
under the controller's name sealed by another state directory's key ... nothing is
adopted"), nothing called, the first ran it once; ``rj``: no call while the hook declined
the start, one after; ``ro``: one call, ``status --json`` named ``E_GIT`` for ``plans/ro``
while declined, published after without a second call; ``kl``: the kill landed after the
locks were cleared, before any call; the next pass ran it once; ``fz``: the force-push
landed (the remote back at the pre-start tip), the outcome push put start and complete back
on top, one call, one complete; ``gd``: one call, ``completed`` once the daemon was back;
``wh``: 31 POSTs ``202``, the unauthenticated one ``401``, the ``run --once`` beside the
daemon refused ``E_LOCKED: state directory ... is held by pid=... remedy: another controller
holds this state directory``, one call, one start, one complete; local ``l0``..``l3``: two
``run --once`` on one working tree ran each plan once, audit clean.

Should: ``heirrun``: docs/approvals.md, "Remote mode": "two controllers on one remote
therefore never both run a plan. Only a push that put the controller's commit on the remote
counts: every commit it makes carries its process's own token (``Controller:``, above), so
no other process (a copy of its state directory started for a failover, the same state
restored on the same host, another state directory with the same ``commit.key``) can make
the same bytes"; "the push race is the safety net for a failover's overlap (the old host
not quite gone)"; docs/threat-model.md, Accepted limits: "a second one beside it is a
failover overlap or a mistake, which the push race (remote mode) keeps from running a plan
twice (round 91: also when it runs from a copy of the first's state directory, since each
process's commits carry its own token)". ``fc`` is not even an overlap in time: the copy
finished before the old host returned, and docs/operations.md's Restore promises "no action
a commit of it shows started runs again as a new run".

Fixed (2026-12-02, r92heir): ``heirrun`` (``fp``, ``f3``, ``fc`` x ``calls``, ``subjects``,
``audit``). The cause: ``ControllerCore._sync`` pushed a commit left above the remote's tip
as "our commit from before a crash" and took the start in it for its own run, whichever
process had made it; every holder of a copy of the state directory did, and "up to date"
or a remote already past it left each its job row. Now a start commit left above the tip
that this process did not make (its ``Controller:`` token is not this process's) is never
pushed: the unpushed commits leave the clone as a lost race's do, the start's job row goes
(``_forget_unlanded``: a start not on the branch), and the pass decides the plan again with
a start of this process's own token (``ControllerCore._left_start``, logged
``start_left_dropped``), so the holders make different starts and round 91's push race
decides; ``fc``'s old host finds the plan ``completed``. Left commits without a start are
pushed as before. A first try (a ref of what the clone last knew the remote held, a start
the remote gained past it disowned) broke round 80's ``k2`` (a kill while the remote's
``post-receive`` ran: the start landed, the ref not written, the restart took its own run
for another's), so the start is made again instead of judged after the fact.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, clone_audit, until
from test_round2_execution_kit import shared
from test_round91_runs_atk91c import (
    PY,
    TOOL,
    _align,
    _calls,
    _kill_when,
    _plan,
    _popen,
    _record,
    _ref,
    _tools,
)
from writerkit import free_port, wait_for

#: a mode of the round-91 tool that sleeps 2 s after ``READY-<t>`` (a run long enough to
#: move the remote under it)
SLP = TOOL.replace(
    'elif m == "fal":',
    'elif m == "slp":\n'
    '    open(os.path.join(d, "READY-" + t), "w").write(str(os.getpid()))\n'
    "    time.sleep(2)\n"
    'elif m == "fal":',
)

#: the remote's pre-receive hook: declines a push whose new tip's subject holds a line of
#: ``DENY`` (beside the hook's repository)
HOOK = """#!/bin/sh
while read old new ref; do
  s=$(git log -1 --format=%s "$new" 2>/dev/null)
  if [ -f DENY ]; then
    while IFS= read -r p; do
      [ -n "$p" ] || continue
      case "$s" in *"$p"*) echo "declined by policy: $s" >&2; exit 1;; esac
    done < DENY
  fi
done
exit 0
"""

REMOTE: dict[str, list[tuple[str, str, str]]] = {
    "rh": [("rec", "rh", "")],
    "rj": [("rec", "rj", "")],
    "ro": [("rec", "ro", "")],
    "t0": [("rec", "t0", "")],
    "t1": [("rec", "t1", "")],
    "t2": [("rec", "t2", "")],
    "fp": [("rec", "fp", "")],
    "fz": [("slp", "fz", "")],
    "f3": [("rec", "f3", "")],
    "fc": [("rec", "fc", "")],
    "fr": [("rec", "fr", "")],
    "fk": [("rec", "fk", "")],
    "kl": [("rec", "kl", "")],
    "wh": [("slp", "wh", "")],
    "gd": [("slp", "gd", "")],
}
LOCAL: dict[str, list[tuple[str, str, str]]] = {f"l{i}": [("rec", f"l{i}", "")] for i in range(4)}


def _daemon(lab: Lab, folder: Path, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
         f"--base-path={folder}", "--listen=127.0.0.1", f"--port={port}", str(folder)],
        env=lab.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    wait_for(port)
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=180)


def _try(lab: Lab, seen: dict[str, Any], config: Path, tag: str) -> None:
    """One pass whatever it exits with (a refused push ends a pass ``E_GIT``); kept in
    ``seen["passes"]``; stale locks in a clone are removed as the remedy says."""
    for _ in range(3):
        result = lab.cli("run", "--once", "--config", str(config), timeout=300)
        seen.setdefault("passes", []).append((tag, result.returncode, result.stderr[-600:]))
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
        if "remedy: if no git process is running, remove" not in result.stderr:
            return
        path = result.stderr.split("remedy: if no git process is running, remove ")[1].split()[0]
        Path(path).unlink(missing_ok=True)


def _copy_state(lab: Lab, name: str) -> Path:
    state = lab.root / name
    shutil.copytree(lab.state, state, symlinks=True)
    config = lab.root / f"{name}.yml"
    config.write_text(
        lab.config.read_text().replace(f"state_dir: {lab.state}\n", f"state_dir: {state}\n")
    )
    return config


def _build(root: Path) -> Lab:
    d = root / "t"
    d.mkdir()
    (d / "t91.py").write_text(SLP)
    seen: dict[str, Any] = {}
    # -- local: two ``run --once`` on one working tree --------------------------------------
    loc = Lab(root / "L", tools=_tools(d))
    for slug, acts in LOCAL.items():
        loc.write(slug, _plan(slug, acts))
    loc.commit("plans")
    loc.run()
    for slug in LOCAL:
        loc.approve(slug)
        _align()
        procs = [_popen(loc, loc.config) for _ in range(2)]
        seen[f"{slug}:rc"] = [(p.wait(120), p.stderr.read().decode()[-400:]) for p in procs]  # type: ignore[union-attr]
    loc.run()
    seen["l:records"] = {s: _record(loc, s) for s in LOCAL}
    seen["l:subjects"] = {s: loc.subjects(s) for s in LOCAL}
    seen["l:audit"] = clone_audit(loc, root / "Laud")[0]
    # -- remote ----------------------------------------------------------------------------
    lab = Lab(root / "R", tools=_tools(d))
    lab.t = d  # type: ignore[attr-defined]
    for slug, acts in REMOTE.items():
        lab.write(slug, _plan(slug, acts))
    lab.commit("plans")
    folder = lab.root / "served"
    folder.mkdir()
    origin = folder / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(origin)], check=True)
    (origin / "hooks" / "pre-receive").write_text(HOOK)
    (origin / "hooks" / "pre-receive").chmod(0o755)
    port = free_port()
    daemon = _daemon(lab, folder, port)
    url = f"git://127.0.0.1:{port}/origin.git"
    lab.git("remote", "add", "origin", url)
    lab.config.write_text(
        lab.config.read_text().replace(
            f"repo: {lab.repo}\n",
            f"remote: {{url: {json.dumps(url)}, branch: main, poll_interval: 0.2}}\n",
        )
    )
    clone = lab.state / "clone"
    cfg = lab.config

    def pull() -> None:
        lab.git("fetch", "-q", "origin")
        lab.git("reset", "-q", "--hard", "origin/main")

    def approve(slug: str) -> None:
        pull()
        lab.approve(slug, ALICE)
        lab.git("push", "-q", "origin", "HEAD:main")

    def deny(*lines: str) -> None:
        (origin / "DENY").write_text("".join(x + "\n" for x in lines))

    def ahead() -> Callable[[], bool]:
        before = _ref(clone)
        return lambda: bool(_ref(clone)) and _ref(clone) not in (before, _ref(origin))

    try:
        _try(lab, seen, cfg, "first")
        approve("rh")
        _try(lab, seen, cfg, "rh")
        # rj: the remote declines the start; nothing may run until it accepts
        deny("start plans/rj")
        approve("rj")
        _try(lab, seen, cfg, "rj-1")
        _try(lab, seen, cfg, "rj-2")
        seen["rj:held"] = len(_calls(d, "rj"))
        deny()
        _try(lab, seen, cfg, "rj-3")
        _try(lab, seen, cfg, "rj-4")
        # ro: the remote declines the outcome; the tool never runs again
        deny("plans/ro")
        pull()
        lab.approve("ro", ALICE)
        deny()
        lab.git("push", "-q", "origin", "HEAD:main")
        deny("complete plans/ro", "fail plans/ro")
        _try(lab, seen, cfg, "ro-1")
        _try(lab, seen, cfg, "ro-2")
        seen["ro:waiting"] = lab.cli("status", "--json", "--config", str(cfg)).stdout
        seen["ro:held"] = len(_calls(d, "ro"))
        deny()
        _try(lab, seen, cfg, "ro-3")
        _try(lab, seen, cfg, "ro-4")
        # t0..t2: THREE controllers on one remote (two copies of the state directory)
        cfg2 = _copy_state(lab, "state2")
        cfg3 = _copy_state(lab, "state3")
        _try(lab, seen, cfg2, "copy2")
        _try(lab, seen, cfg3, "copy3")
        for slug in ("t0", "t1", "t2"):
            approve(slug)
            _align()
            procs = [_popen(lab, c) for c in (cfg, cfg2, cfg3)]
            seen[f"{slug}:rc"] = [(p.wait(120), p.stderr.read().decode()[-400:]) for p in procs]  # type: ignore[union-attr]
        for c in (cfg, cfg2, cfg3):
            _try(lab, seen, c, "after-t")
        # fp: the failover copy taken while the clone holds an unpushed start commit
        approve("fp")
        seen["fp:landed"] = _kill_when(lab, ahead())
        seen["fp:ahead"] = _ref(clone) != _ref(origin)
        cfg4 = _copy_state(lab, "state4")
        _align()
        procs = [_popen(lab, c) for c in (cfg, cfg4)]
        seen["fp:rc"] = [(p.wait(120), p.stderr.read().decode()[-400:]) for p in procs]  # type: ignore[union-attr]
        for c in (cfg, cfg4, cfg2, cfg3):
            _try(lab, seen, c, "after-fp")
        # f3: as fp, with TWO copies taken while the clone holds the unpushed start
        approve("f3")
        seen["f3:landed"] = _kill_when(lab, ahead())
        seen["f3:ahead"] = _ref(clone) != _ref(origin)
        cfg5, cfg6 = _copy_state(lab, "state5"), _copy_state(lab, "state6")
        _align()
        procs = [_popen(lab, c) for c in (cfg, cfg5, cfg6)]
        seen["f3:rc"] = [(p.wait(120), p.stderr.read().decode()[-400:]) for p in procs]  # type: ignore[union-attr]
        for c in (cfg, cfg5, cfg6):
            _try(lab, seen, c, "after-f3")
        # fc: as fp, the copy runs ALONE first; the old host comes back after it finished
        approve("fc")
        seen["fc:landed"] = _kill_when(lab, ahead())
        seen["fc:ahead"] = _ref(clone) != _ref(origin)
        cfg7 = _copy_state(lab, "state7")
        _try(lab, seen, cfg7, "fc-copy")
        seen["fc:copy"] = len(_calls(d, "fc"))
        _try(lab, seen, cfg, "fc-old")
        _try(lab, seen, cfg7, "fc-copy2")
        # fr: a fresh, empty state directory on the sealed branch: refused, runs nothing
        approve("fr")
        fresh = lab.root / "state8"
        cfg8 = lab.root / "state8.yml"
        cfg8.write_text(
            cfg.read_text().replace(f"state_dir: {lab.state}\n", f"state_dir: {fresh}\n")
        )
        result = lab.cli("run", "--once", "--config", str(cfg8), timeout=300)
        seen["fr:refused"] = (result.returncode, result.stderr[-600:], len(_calls(d, "fr")))
        _try(lab, seen, cfg, "fr")
        # fk: a fresh state directory holding only the first's commit.key, beside the first
        approve("fk")
        keyed = lab.root / "state9"
        keyed.mkdir(mode=0o700)
        shutil.copy2(lab.state / "commit.key", keyed / "commit.key")
        cfg9 = lab.root / "state9.yml"
        cfg9.write_text(
            cfg.read_text().replace(f"state_dir: {lab.state}\n", f"state_dir: {keyed}\n")
        )
        _align()
        procs = [_popen(lab, c) for c in (cfg, cfg9)]
        seen["fk:rc"] = [(p.wait(120), p.stderr.read().decode()[-600:]) for p in procs]  # type: ignore[union-attr]
        _try(lab, seen, cfg, "after-fk")
        _try(lab, seen, cfg9, "after-fk")
        # kl: the pass killed right after it cleared the stale locks a killed pass left
        approve("kl")
        locks = [clone / "HEAD.lock", clone / "refs" / "heads" / "main.lock"]
        for lk in locks:
            lk.write_text(_ref(clone) + "\n")
        seen["kl:landed"] = _kill_when(lab, lambda: not any(x.exists() for x in locks))
        seen["kl:mid"] = len(_calls(d, "kl"))
        _try(lab, seen, cfg, "kl")
        _try(lab, seen, cfg, "kl2")
        # fz: the remote branch force-pushed back under a running plan (start undone)
        approve("fz")
        base = _ref(origin)
        proc = _popen(lab, cfg)
        seen["fz:ready"] = until(lambda: (d / "READY-fz").exists(), 60, 0.01)
        started = _ref(origin)
        lab.git("push", "-q", "-f", "origin", f"{base}:main")
        seen["fz:forced"] = (base, started, _ref(origin))
        seen["fz:rc"] = (proc.wait(120), proc.stderr.read().decode()[-800:])  # type: ignore[union-attr]
        for c in (cfg, cfg, cfg2):
            _try(lab, seen, c, "after-fz")
        seen["fz:calls-mid"] = len(_calls(d, "fz"))
        # gd: the remote goes away while the tool runs, and comes back
        approve("gd")
        proc = _popen(lab, cfg)
        seen["gd:ready"] = until(lambda: (d / "READY-gd").exists(), 60, 0.01)
        _stop(daemon)
        seen["gd:rc"] = (proc.wait(120), proc.stderr.read().decode()[-800:])  # type: ignore[union-attr]
        _try(lab, seen, cfg, "gd-down")
        daemon = _daemon(lab, folder, port)
        _try(lab, seen, cfg, "gd-up")
        _try(lab, seen, cfg, "gd-up2")
        # wh: the daemon woken by 30 webhook posts while its plan runs, and a run --once
        # started beside it on the same state directory
        hport = free_port()
        cfgw = lab.root / "daemon.yml"
        cfgw.write_text(cfg.read_text() + f'webhook: {{listen: "127.0.0.1:{hport}"}}\n')
        env = {**lab.env(), "PLANGATE_WEBHOOK_SECRET": "s3cret-atk92c"}
        dmn = subprocess.Popen(
            [str(Path(PY).parent / "plangate"), "run", "--config", str(cfgw)],
            cwd=lab.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        try:
            wait_for(hport)
            approve("wh")
            body = json.dumps({"ref": "refs/heads/main"}).encode()

            def post(secret: str | None) -> int:
                req = urllib.request.Request(f"http://127.0.0.1:{hport}/webhook", data=body)
                if secret:
                    req.add_header("X-Plangate-Secret", secret)
                try:
                    with urllib.request.urlopen(req, timeout=30) as answer:
                        return int(answer.status)
                except urllib.error.HTTPError as why:
                    return int(why.code)

            codes = [post("s3cret-atk92c")]
            seen["wh:ready"] = until(lambda: (d / "READY-wh").exists(), 60, 0.01)
            codes += [post("s3cret-atk92c") for _ in range(30)]
            result = lab.cli("run", "--once", "--config", str(cfg), timeout=300)
            seen["wh:beside"] = (result.returncode, result.stderr[-600:])
            codes.append(post(None))
            seen["wh:codes"] = codes
            seen["wh:done"] = until(
                lambda: (
                    "complete plans/wh" in lab.git("log", "--format=%s", "origin/main")
                    if not lab.git("fetch", "-q", "origin", check=False)
                    else False
                ),
                60,
                0.5,
            )
            time.sleep(1.0)
        finally:
            os.killpg(dmn.pid, signal.SIGTERM)
            dmn.wait(timeout=180)
        for c in (cfg2, cfg3, cfg4, cfg5, cfg6, cfg7, cfg9, cfg):
            _try(lab, seen, c, "final")
        pull()
        seen["records"] = {s: _record(lab, s) for s in REMOTE}
        seen["subjects"] = {s: lab.subjects(s) for s in REMOTE}
        aud = lab.root / "Raud"
        aud.mkdir()
        subprocess.run(["git", "clone", "-q", str(origin), str(aud / "clone")], check=True)
        result = lab.cli("audit", "--json", cwd=aud / "clone")
        seen["audit"] = json.loads(result.stdout)
    finally:
        _stop(daemon)
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r92-atk92c", _build)


def _valid(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [
        e for e in report["executions"] if e["plan"] == f"plans/{slug}" and e.get("approval_valid")
    ]


def _findings(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [f for f in report.get("findings", []) if f.get("plan") == f"plans/{slug}"]


def _ends(subjects: list[str]) -> list[str]:
    return [x for x in subjects if x.split()[1] in ("complete", "fail", "abort")]


def _starts(subjects: list[str]) -> list[str]:
    return [x for x in subjects if x.split()[1] == "start"]


#: remote plans judged the same way: each ran once, completed, one start, one end, audited
ONCE = ["rh", "rj", "ro", "t0", "t1", "t2", "fp", "f3", "fc", "fr", "fk", "kl", "gd", "wh"]
CHECKS = ["calls", "record", "subjects", "audit"]
IDS = (
    [f"{s}:{c}" for s in ONCE for c in CHECKS]
    + [f"l{i}:{c}" for i in range(4) for c in CHECKS]
    + ["rj:held", "ro:held", "ro:waiting", "fp:landed", "fp:ahead", "fz:ready", "fz:forced"]
    + ["fz:calls", "fz:ends", "gd:ready", "f3:landed", "f3:ahead", "fc:landed", "fc:ahead"]
    + ["fc:copy", "fr:refused", "kl:landed", "wh:ready", "wh:done", "wh:codes", "wh:beside"]
)

BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_runs(lab: Lab, vid: str) -> None:
    slug, check = vid.split(":")
    seen, d = lab.seen, lab.t  # type: ignore[attr-defined]
    if vid == "rj:held":
        assert seen["rj:held"] == 0, seen["passes"]
        return
    if vid == "ro:held":
        assert seen["ro:held"] == 1, seen["passes"]
        return
    if vid == "ro:waiting":
        assert "E_GIT" in seen["ro:waiting"] and "plans/ro" in seen["ro:waiting"], seen[
            "ro:waiting"
        ][-1500:]
        return
    if check in ("landed", "ahead", "ready"):
        assert seen[vid], seen["passes"][-6:]
        return
    if vid == "fz:forced":
        base, started, after = seen["fz:forced"]
        assert started != base and after == base, seen["fz:forced"]
        return
    if vid == "fc:copy":
        assert seen["fc:copy"] == 1, seen["passes"][-6:]
        return
    if vid == "fr:refused":
        rc, err, n = seen["fr:refused"]
        assert rc != 0 and "E_STORAGE" in err and n == 0, seen["fr:refused"]
        return
    if vid == "wh:codes":
        codes = seen["wh:codes"]
        assert set(codes[:-1]) == {202} and codes[-1] == 401, codes
        return
    if vid == "wh:beside":  # the run --once beside the daemon ran nothing of its own
        assert len(_calls(d, "wh")) == 1, seen["wh:beside"]
        return
    if vid == "wh:done":
        assert seen["wh:done"], seen["passes"][-4:]
        return
    if vid == "fz:calls":
        assert len(_calls(d, "fz")) == 1, (_calls(d, "fz"), seen["passes"][-8:])
        return
    if vid == "fz:ends":
        assert len(_ends(seen["subjects"]["fz"])) <= 1, seen["subjects"]["fz"]
        return
    local = slug.startswith("l")
    rec = seen["l:records" if local else "records"][slug]
    subj = seen["l:subjects" if local else "subjects"][slug]
    report = seen["l:audit" if local else "audit"]
    if check == "calls":
        assert len(_calls(d, slug)) == 1, (_calls(d, slug), seen.get(f"{slug}:rc"))
    elif check == "record":
        assert (rec.get("status"), rec.get("exec")) == ("completed", "completed"), rec
    elif check == "subjects":
        assert len(_starts(subj)) == 1 and len(_ends(subj)) == 1, subj
    elif check == "audit":
        runs = _valid(report, slug)
        assert [e["outcome"] for e in runs] == ["complete"], (slug, runs)
        assert not _findings(report, slug), _findings(report, slug)
