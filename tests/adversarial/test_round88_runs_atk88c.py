"""Round 88 (runs, atk88c): the per-attempt marker stop (round 86's fix) at its edges.

docs/execution.md ("A tool left running by a dead controller"): "each tool call's environment
carries a marker of its own, ``PLANGATE_ATTEMPT=<random id>`` ... every stop (this recovery,
the timeout's kill, an error's) also SIGKILLs each process of the controller's user whose
``/proc/<pid>/environ`` carries it, again until none is left (up to 5 s; zombies, vanished and
unreadable processes skipped)". Known limits: a helper that clears or rewrites its
environment before it execs, another user's process, no ``/proc``. None of the helpers below
does any of these: each keeps its environment, runs as the controller's user (root here),
on Linux with ``/proc``.

Lab (one, local mode, ``max_parallel_actions: 8``). One tool program ``m88.py <mode> <tag>``
(calls recorded as ``m88:<tag>``): on its first call it starts a helper by ``mode`` and waits
for ``RELEASE``; the helper beats (``BEAT-<tag>``, for the ``stopped`` check), waits for
``RELEASE``, then appends ``late`` to the effect log. Modes:

- ``df`` (control, round 86's fixed case): a double fork into a new session.
- ``zt``: a double fork into a new session whose MAIN THREAD then exits
  (``pthread_exit``) while a second thread waits and acts: the pid's ``/proc/<pid>/stat``
  reads ``Z`` and its ``/proc/<pid>/environ`` is unreadable, while the live thread
  (``/proc/<pid>/task/<tid>/environ``) carries the marker and a SIGKILL to the pid ends it.
- ``fk``: a double fork into a new session that splits into three chains, each forking a
  fresh child and exiting over and over, until 8 s after the tool is gone (the stop), then
  settling and waiting.
- ``tm``: the tool itself (in the group) catches SIGTERM (the stop's first signal) and on it
  double-forks a fresh helper into a new session, then keeps waiting.
- ``zp``: the tool's child leaves the group by ``os.setpgid(0, 0)`` (no new session) and
  its main thread exits in the same way, a second thread acting.
- ``ho`` (control): an honest helper that stays in the tool's group.

Plans (each approved by Alice): ``kl`` (``df``, ``zt``, ``fk``, ``tm``, ``ho`` at once,
non-idempotent; the pass SIGKILLed once every helper is ready, a ``run --once`` recovers it),
``rs`` (``rz``: mode ``zt``, and ``rh``: control, mode ``ho``, both ``idempotent: true``;
killed and recovered the same way: the recovery runs each again), ``to`` (``td``, ``tz``,
``tf``, ``tt``: modes ``df``, ``zt``, ``fk``, ``tm`` under tool ``timeout: 2``, no kill: the
timeout path), ``hn`` (control: an honest one-action plan, its tool exits, run once,
completed). Then ``RELEASE`` is written and the helpers get 2.5 s to act.

Checks per id: ``late`` (no ``late`` effect after the recovery / timeout), ``stopped`` (no
helper of it beating right after the recovery pass, before the release), ``calls`` (the tool
once), ``action`` (its row in HEAD's ``execution:`` block), ``record`` (HEAD's PLAN.yml
per plan), ``audit`` (a fresh clone's audit: the plan's
runs valid, nothing unexplained).

Seen (round 88): two classes, 12 ids of 74 (``late`` and ``stopped`` of each).

- ``zombieleader`` (``zt``, ``zp``, ``rz``, ``tz``): the helper's pid read ``Z`` in
  ``/proc/<pid>/stat`` and ``/proc/<pid>/environ`` gave "No such process", while
  ``/proc/<pid>/task/<tid>/environ`` held ``PLANGATE_ATTEMPT``. After the recovery pass
  (``E_ACTION_IN_DOUBT``: "its tool process N was still running and was stopped") and after
  the timeout ("did not finish within 2s; its process group was killed") the helper still
  beat, and once released wrote ``late``: ``zt``, ``zp``, ``tz`` effects ``['late']``; the
  resumed idempotent ``rz`` ``['rerun', 'late']`` (its effect twice, the re-run beside the
  old attempt), its control ``rh`` ``['rerun']``.
- ``forkchurn`` (``fk``, ``tf``): three chains of fork-and-exit carrying the marker outlived
  the stop (the whole recovery ``run --once`` took about 2 s, inside the 5 s limit) and the
  timeout's kill, settled, and wrote ``late``. ``fk`` escaped in all 9 runs of the module's
  drafts (one chain or three); ``tf`` with chains that started only at the tool's death was
  caught in 1 run of 3 (twice), so the chains churn from the start: 3 of 3 escaped.

Fixed (2026-12-01, the lead): ``zombieleader`` (8 ids): the marker stop reads every
thread's environment and state under ``/proc/<pid>/task/`` when the leader's is gone or
``Z`` (``process._task_marked``); a SIGKILL to the pid ends the threads. ``forkchurn`` (4
ids) stays open (docs/threat-model.md, "Open from round 88"): a scan of ``/proc`` cannot
catch a chain whose every member forks and exits faster than the scan reaches it; the cure
is a supervisor no descendant can leave (a cgroup, or a subreaper that outlives the
controller), not a faster scan.
Fixed (2026-12-02, r88cgroup): ``forkchurn`` (4 ids: ``late`` and ``stopped`` of ``fk``
and ``tf``): each tool call runs in a cgroup v2 of its own (``plangate-<marker>`` below the
controller's cgroup), entered by a fixed ``/bin/sh`` shim before the tool runs any code and
recorded in the journal's spawn record (``cgroup``); every stop (the timeout's, an error's,
the recovery's from that record) kills it whole with ``cgroup.kill`` (every member at once,
forks in flight included) and removes it (``controller.execution.tools.cgroup``). With
``PLANGATE_TOOL_CGROUPS=off`` in the controller's environment (the marker scan alone, as on a
host without cgroup v2) the same 4 ids fail as before, and only those.
Held: ``df`` and ``td`` (round 86's double fork), ``tm`` and ``tt`` (a SIGTERM handler of
the tool double-forking a fresh marked helper: stopped), ``ho``/``rh``/``hn`` (controls);
every ``live``, ``calls`` (the tool once; ``rz``/``rh`` twice, resumed once), ``action``,
``record`` (``kl`` failed ``E_ACTION_IN_DOUBT``, ``rs`` completed, ``to`` failed
``E_TIMEOUT``, ``hn`` completed) and ``audit`` id (a fresh clone: each plan's start valid,
nothing ``unexplained``).

Should (docs/execution.md above): "nothing of the old attempt acts after the recovery";
docs/threat-model.md round 86 row: "every stop ... also SIGKILLs each process of the
controller's user whose ``/proc/<pid>/environ`` carries it, until none is left". The
``zombieleader`` helper is no zombie (only its first thread is; the process lives, keeps the
marker, and a SIGKILL to its pid ends it), clears or rewrites nothing, and is root's, as the
controller is; the ``forkchurn`` helper keeps its environment throughout.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, clone_audit, load_yaml
from mcpkit import PLANGATE
from test_round2_execution_kit import shared

M88 = r"""
import ctypes, json, os, signal, subprocess, sys, threading, time
mode, tag = sys.argv[1], sys.argv[2]
d = os.environ["ESC_DIR"]
me = os.path.abspath(__file__)


def released():
    return os.path.exists(os.path.join(d, "RELEASE"))


def beat():
    with open(os.path.join(d, "BEAT-" + tag), "w") as f:
        f.write(str(time.time()))


def wait_release():
    for _ in range(2400):
        if released():
            return
        beat()
        time.sleep(0.05)


def effect(kind):
    with open(os.path.join(d, "effects.log"), "a", encoding="utf-8") as f:
        f.write(json.dumps({"tag": tag, "kind": kind, "pid": os.getpid()}) + "\n")


def gone(pid):
    try:
        st = open("/proc/%d/stat" % pid).read()
    except OSError:
        return True
    return st.rsplit(")", 1)[1].split()[0] in "ZX"


def helper(how, tool):
    open(os.path.join(d, "READY-" + tag), "w").write(str(os.getpid()))
    if how == "zp":
        os.setpgid(0, 0)
    if how in ("zt", "zp"):
        def work():
            wait_release()
            effect("late")
        threading.Thread(target=work).start()
        time.sleep(0.2)
        ctypes.CDLL(None).pthread_exit(None)
    if how == "fk":
        for _ in range(2):  # three chains at once
            if os.fork() == 0:
                break
        since, n = None, 0
        while not released():
            if since is None and gone(tool):
                since = time.time()
            if since is not None and time.time() - since > 8:
                break
            if os.fork():
                os._exit(0)
            n += 1
            if n % 20 == 0:
                beat()
    wait_release()
    effect("late")


def dfork(how):
    tool = os.getpid()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            fd = os.open(os.devnull, os.O_RDWR)
            for n in (0, 1, 2):
                os.dup2(fd, n)
            os.execv(sys.executable, [sys.executable, me, "helper", tag, how, str(tool)])
        os._exit(0)
    os.wait()


if mode == "helper":
    helper(sys.argv[3], int(sys.argv[4]))
    sys.exit(0)
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": ["m88:" + tag], "stdin": ""}) + "\n")
if os.path.exists(os.path.join(d, "DONE-" + tag)):
    effect("rerun")
    print('{"ok": true}')
    sys.exit(0)
open(os.path.join(d, "DONE-" + tag), "w").write("1")
if mode in ("df", "zt", "fk"):
    dfork(mode)
elif mode == "tm":
    def on_term(signum, frame):
        dfork("none")
    signal.signal(signal.SIGTERM, on_term)
    open(os.path.join(d, "READY-" + tag), "w").write(str(os.getpid()))
elif mode in ("ho", "zp"):
    how = "none" if mode == "ho" else "zp"
    subprocess.Popen([sys.executable, me, "helper", tag, how, str(os.getpid())],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
elif mode == "hn":
    open(os.path.join(d, "READY-" + tag), "w").write(str(os.getpid()))
    print('{"ok": true}')
    sys.exit(0)
wait_release()
print('{"ok": true}')
"""

#: id -> (plan, mode, timeout)
VARIANTS: dict[str, tuple[str, str, int]] = {
    "df": ("kl", "df", 120),
    "zt": ("kl", "zt", 120),
    "zp": ("kl", "zp", 120),
    "fk": ("kl", "fk", 120),
    "tm": ("kl", "tm", 120),
    "ho": ("kl", "ho", 120),
    "td": ("to", "df", 2),
    "tz": ("to", "zt", 2),
    "tf": ("to", "fk", 2),
    "tt": ("to", "tm", 2),
    "hn": ("hn", "hn", 120),
    "rz": ("rs", "zt", 120),
    "rh": ("rs", "ho", 120),
}
IDEM = {"rz", "rh"}
VIDS = list(VARIANTS)
PLANS = ["kl", "to", "hn", "rs"]
HELPED = [v for v in VIDS if v != "hn"]


def _plan(name: str) -> str:
    mine = [v for v in VIDS if VARIANTS[v][0] == name]
    tools = "".join(f"  - name: t{v}\n" for v in mine)
    actions = "".join(
        f'  - id: {i}\n    tool: t{v}\n    why: "{v}"\n    needs: []\n    params: {{t: "{v}"}}\n'
        for i, v in enumerate(mine, 1)
    )
    return (
        f'plan:\n  name: "{name}"\n  task: "plan {name}"\n  status: pending_approval\n'
        f"available_tools:\n{tools}actions:\n{actions}"
    )


def _beating(kd: Path, tag: str) -> bool:
    beat = kd / f"BEAT-{tag}"
    if not beat.exists():
        return False
    before = beat.stat().st_mtime_ns
    time.sleep(0.6)
    return beat.stat().st_mtime_ns != before


def _until(pred: Any, timeout: float = 60.0) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def _head(lab: Lab, plan: str) -> dict[str, Any] | None:
    try:
        return dict(load_yaml(lab.git("show", f"HEAD:plans/{plan}/PLAN.yml")))
    except Exception:  # a file gone or no plan is what the check reports
        return None


def _approve(lab: Lab, plans: list[str], status: str = "approved") -> None:
    for plan in plans:
        lab.set_status(plan, status)
        lab.git("add", f"plans/{plan}/PLAN.yml")
    lab.git("commit", "-q", "-m", f"{status} {' '.join(plans)}", who=ALICE)


def _build(root: Path) -> Lab:
    kd = root / "kd"
    kd.mkdir()
    (root / "m88.py").write_text(M88)
    log = json.dumps(str(root / "lab" / "ran.log"))
    env_ = f"{{ESC_DIR: {json.dumps(str(kd))}, REC_LOG: {log}}}"
    tools = ""
    for v, (_, mode, timeout) in VARIANTS.items():
        argv = json.dumps([sys.executable, str(root / "m88.py"), mode, "{t}"])
        tools += (
            f"t{v}: {{kind: exec, argv: {argv}, env: {env_}, timeout: {timeout}, "
            f"idempotent: {str(v in IDEM).lower()}}}\n"
        )
    extra = "execution: {max_parallel_actions: 8}\n"
    lab = Lab(root / "lab", tools=tools, extra=extra)
    for plan in PLANS:
        lab.write(plan, _plan(plan))
    lab.commit("agent plans")
    lab.run()
    seen: dict[str, Any] = {}
    lab.seen = seen  # type: ignore[attr-defined]
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    seen["ready"], seen["err"], seen["alive"] = {}, [], {}
    try:
        _approve(lab, ["kl"])
        p = subprocess.Popen(
            [PLANGATE, "run", "--once", "--config", str(lab.config)],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        for v in [v for v in VIDS if VARIANTS[v][0] == "kl"]:
            seen["ready"][v] = _until((kd / f"READY-{v}").exists, 60)
        time.sleep(0.5)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        t0 = time.time()
        seen["err"].append(lab.run(check=False).stderr[-1500:])
        seen["recovery_s"] = round(time.time() - t0, 2)
        for v in [v for v in VIDS if VARIANTS[v][0] == "kl"]:
            seen["alive"][v] = _beating(kd, v)
        _approve(lab, ["rs"])
        p = subprocess.Popen(
            [PLANGATE, "run", "--once", "--config", str(lab.config)],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        for v in IDEM:
            seen["ready"][v] = _until((kd / f"READY-{v}").exists, 60)
        time.sleep(0.5)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        seen["err"].append(lab.run(check=False).stderr[-1500:])
        for v in IDEM:
            seen["alive"][v] = _beating(kd, v)
        _approve(lab, ["to"])
        seen["err"].append(lab.run(check=False).stderr[-1500:])
        for v in [v for v in VIDS if VARIANTS[v][0] == "to"]:
            seen["ready"][v] = (kd / f"READY-{v}").exists()
            seen["alive"][v] = _beating(kd, v)
        _approve(lab, ["hn"])
        seen["err"].append(lab.run(check=False).stderr[-1500:])
        seen["ready"]["hn"] = (kd / "READY-hn").exists()
        seen["alive"]["hn"] = False
    finally:
        (kd / "RELEASE").write_text("1")
    time.sleep(2.5)
    seen["err"].append(lab.run(check=False).stderr[-1500:])
    log = kd / "effects.log"
    rows = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    seen["effects"] = {v: [r["kind"] for r in rows if r["tag"] == v] for v in VIDS}
    seen["calls"] = {v: len(lab.calls(f"m88:{v}")) for v in VIDS}
    seen["end"] = {plan: _head(lab, plan) for plan in PLANS}
    try:
        report, valid = clone_audit(lab, root / "clone")
        text = json.dumps(report)
        seen["audit"] = {"valid": sorted(valid), "unexplained": text.count("unexplained")}
    except Exception as why:  # what the audit check reports
        seen["audit"] = {"error": repr(why)[-1500:]}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r88-atk88c", _build)


def _seen(lab: Lab) -> dict[str, Any]:
    return lab.seen  # type: ignore[attr-defined,no-any-return]


#: forkchurn (``fk``, ``tf``): fixed, see the module's "Fixed (2026-12-02, r88cgroup)".
BROKEN: dict[str, Any] = {}


def test_dump(lab: Lab) -> None:
    """Not a check: the whole story, for the reader of ``-rA``."""
    print(json.dumps(_seen(lab), default=str, indent=1))


@pytest.mark.parametrize("vid", VIDS)
def test_live(lab: Lab, vid: str) -> None:
    """The lab's kills fell where they were meant to: every helper was waiting."""
    assert _seen(lab)["ready"][vid], _seen(lab)["ready"]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_late(lab: Lab, vid: str) -> None:
    """Nothing of the killed (or timed-out) attempt acts once the recovery is done."""
    effects = _seen(lab)["effects"][vid]
    assert "late" not in effects, (effects, _seen(lab)["err"])


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_stopped(lab: Lab, vid: str) -> None:
    assert _seen(lab)["alive"][vid] is False, _seen(lab)["alive"]


@pytest.mark.parametrize("vid", VIDS)
def test_calls(lab: Lab, vid: str) -> None:
    """The tool once, never re-run without a human's approval."""
    calls, effects = _seen(lab)["calls"][vid], _seen(lab)["effects"][vid]
    if vid in IDEM:  # resumed once (idempotent), its effect once
        assert calls == 2, (calls, effects)
        assert effects.count("rerun") == 1, effects
        return
    assert calls == 1, (calls, effects)
    assert "rerun" not in effects, effects


@pytest.mark.parametrize("plan", PLANS)
def test_record(lab: Lab, plan: str) -> None:
    data = _seen(lab)["end"][plan]
    assert data is not None
    block = data.get("execution") or {}
    text = json.dumps(block, default=str)
    want = {"kl": "failed", "to": "failed", "hn": "completed", "rs": "completed"}[plan]
    assert data["plan"]["status"] == want, (data["plan"], _seen(lab)["err"])
    assert block.get("status") == want, text[:1500]
    if plan == "kl":
        assert "E_ACTION_IN_DOUBT" in text, text[:1500]
    if plan == "to":
        assert "E_TIMEOUT" in text, text[:1500]


@pytest.mark.parametrize("plan", PLANS)
def test_audit(lab: Lab, plan: str) -> None:
    """A fresh clone's audit calls the plan's start valid and nothing unexplained."""
    audit = _seen(lab)["audit"]
    assert f"plans/{plan}" in audit.get("valid", []), audit
    assert audit.get("unexplained") == 0, audit


@pytest.mark.parametrize("vid", VIDS)
def test_action(lab: Lab, vid: str) -> None:
    """Each action's own record: in doubt after the kill, timed out, or succeeded."""
    plan = VARIANTS[vid][0]
    data = _seen(lab)["end"][plan] or {}
    mine = [v for v in VIDS if VARIANTS[v][0] == plan]
    actions = (data.get("execution") or {}).get("actions") or []
    row = next((a for a in actions if str(a.get("id")) == str(mine.index(vid) + 1)), None)
    assert row is not None, actions
    text = json.dumps(row, default=str)
    if plan in ("hn", "rs"):
        assert row.get("status") == "succeeded", text
    elif plan == "kl":
        assert row.get("status") == "in_doubt", text
    else:
        assert row.get("status") == "failed" and "E_TIMEOUT" in text, text
