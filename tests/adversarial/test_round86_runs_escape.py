"""Round 86 (runs): the crash recovery's stop of a tool a dead controller left, attacked by a
tool whose HELPER LEAVES the tool's process group (``setsid`` command, ``os.setpgid(0, 0)``, a
double fork into a new session, a grandchild in a new session): the helper waits for a
release file and then writes its effect. The controller is SIGKILLed mid-action and a
``run --once`` pass recovers the run; only then is the release written.

docs/execution.md ("A tool left running by a dead controller"): "Left alone it would keep
acting after the action was declared in doubt ... Before the next run decides anything, it
checks the spawn record of every action that started without an end"; the crash table:
"first, the tool process it left running (if any) is stopped; then tool ``idempotent: true``
-> run again; otherwise an end ``in_doubt`` is written". Round 11: a timeout kills the
tool's group and every process below it.

Lab (one, local mode, ``max_parallel_actions: 8``). One tool program ``esc.py <mode> <tag>``
(calls recorded as ``esc:<tag>``): on its first call it starts a helper by ``mode`` and
waits for ``RELEASE``; the helper notes ``READY-<tag>`` (its pid), waits for ``RELEASE``,
then appends ``late`` to the effect log. A later call (a resume) appends ``rerun`` at once.
Modes: ``sd`` (the ``setsid`` command), ``pg`` (``os.setpgid(0, 0)``), ``df`` (double fork,
``setsid`` between), ``gc`` (a child that stays in the group starts a grandchild that calls
``os.setsid()``), ``ho`` (control: an honest helper, stays in the group).

Plans (each approved by Alice):

- ``kl``: actions ``sd``, ``pg``, ``df``, ``gc``, ``ho`` at once (``needs: []``,
  non-idempotent tools); the pass SIGKILLed once every helper is ready.
- ``rs``: actions ``rs`` (the ``setsid`` mode, ``idempotent: true``) and ``hi`` (control:
  honest, ``idempotent: true``); approved after the kill, a pass (it recovers ``kl``:
  E_ACTION_IN_DOUBT) SIGKILLed in the same way; the recovery runs each again.
- ``ab``: action ``ab`` (double fork); approved and killed in the same way (that pass
  recovers ``rs``), then Alice sets ``aborted`` (the abort path); the next pass recovers and
  aborts it.
- ``to``: action ``to`` (double fork, tool ``timeout: 2``); a pass of its own, no kill: the
  tool times out (the timeout path).

Then ``RELEASE`` is written and the helpers get 2 s to act.

Checks per id: ``late`` (no ``late`` effect: nothing of the killed or timed-out attempt acts
after the recovery), ``stopped`` (the helper gone right after the last recovery pass, before the
release), ``calls`` (the tool once; ``rs``/``hi``: twice, the re-run's effect once),
``record`` (HEAD's PLAN.yml: ``kl`` failed E_ACTION_IN_DOUBT, ``rs`` completed, ``ab``
aborted, ``to`` failed).

Seen (round 86): one class, ``escape``, 14 ids of 41: ``late`` and ``stopped`` of ``sd``,
``pg``, ``df``, ``gc``, ``rs``, ``ab`` and ``to``. The recovery's stop signals the tool's
process GROUP (and the timeout's kill also the processes below the tool by parent pid, found
while it runs: a double-forked helper's parent is gone by then); a helper in a group of its
own survived both, alive after the recovery pass (and after the timed-out pass), and wrote its
effect once released: after ``kl`` was declared in doubt, after ``ab`` was aborted, after
``to`` failed ``E_TIMEOUT``, and beside the resumed re-run of ``rs`` (its effect twice).
Controls ``ho`` and ``hi`` held (stopped with the group; ``hi`` run once more, its effect
once), as did every ``calls`` and ``record`` id. Should (docs/execution.md above): nothing of
the old attempt acts after the recovery (or after the timeout's kill).
Fixed (2026-12-01, r86escape): each tool call's environment carries a per-attempt marker
``PLANGATE_ATTEMPT`` (journaled in its spawn record); every stop (the left-run stop, the
timeout's and an error's kill) also SIGKILLs every process of the controller's user whose
``/proc/<pid>/environ`` carries it, until none is left.
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
from advkit import ALICE, Lab, cases, load_yaml, pid_alive, until
from mcpkit import PLANGATE
from test_round2_execution_kit import shared

ESC = r"""
import json, os, subprocess, sys, time
mode, tag = sys.argv[1], sys.argv[2]
d = os.environ["ESC_DIR"]
me = os.path.abspath(__file__)


def wait_release():
    for _ in range(1200):
        if os.path.exists(os.path.join(d, "RELEASE")):
            return
        time.sleep(0.05)


def effect(kind):
    with open(os.path.join(d, "effects.log"), "a", encoding="utf-8") as f:
        f.write(json.dumps({"tag": tag, "kind": kind, "pid": os.getpid()}) + "\n")


def helper(escape):
    if escape == "pg":
        os.setpgid(0, 0)
    elif escape == "ss":
        os.setsid()
    open(os.path.join(d, "READY-" + tag), "w").write(str(os.getpid()))
    wait_release()
    effect("late")


def spawn(*args):
    return subprocess.Popen([sys.executable, me, *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


if mode == "helper":
    helper(sys.argv[3])
    sys.exit(0)
if mode == "mid":  # stays in the tool's group; its child leaves it
    spawn("helper", tag, "ss").wait()
    sys.exit(0)
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": ["esc:" + tag], "stdin": ""}) + "\n")
if os.path.exists(os.path.join(d, "DONE-" + tag)):
    effect("rerun")
    print('{"ok": true}')
    sys.exit(0)
open(os.path.join(d, "DONE-" + tag), "w").write("1")
if mode == "sd":
    subprocess.Popen(["setsid", sys.executable, me, "helper", tag, "none"],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
elif mode == "pg":
    spawn("helper", tag, "pg")
elif mode == "df":
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            fd = os.open(os.devnull, os.O_RDWR)
            for n in (0, 1, 2):
                os.dup2(fd, n)
            os.execv(sys.executable, [sys.executable, me, "helper", tag, "none"])
        os._exit(0)
    os.wait()
elif mode == "gc":
    spawn("mid", tag)
else:  # "ho": an honest helper, in the tool's own group
    spawn("helper", tag, "none")
wait_release()
print('{"ok": true}')
"""

#: id -> (plan, mode, idempotent, timeout)
VARIANTS: dict[str, tuple[str, str, bool, int]] = {
    "sd": ("kl", "sd", False, 120),
    "pg": ("kl", "pg", False, 120),
    "df": ("kl", "df", False, 120),
    "gc": ("kl", "gc", False, 120),
    "ho": ("kl", "ho", False, 120),
    "rs": ("rs", "sd", True, 120),
    "hi": ("rs", "ho", True, 120),
    "ab": ("ab", "df", False, 120),
    "to": ("to", "df", False, 2),
}
VIDS = list(VARIANTS)
PLANS = ["kl", "rs", "ab", "to"]
KILLED = [v for v in VIDS if VARIANTS[v][0] != "to"]


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
    (root / "esc.py").write_text(ESC)
    log = json.dumps(str(root / "lab" / "ran.log"))
    env_ = f"{{ESC_DIR: {json.dumps(str(kd))}, REC_LOG: {log}}}"
    tools = ""
    for v, (_, mode, idem, timeout) in VARIANTS.items():
        argv = json.dumps([sys.executable, str(root / "esc.py"), mode, "{t}"])
        tools += (
            f"t{v}: {{kind: exec, argv: {argv}, env: {env_}, timeout: {timeout}, "
            f"idempotent: {str(idem).lower()}}}\n"
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
    seen["ready"], seen["err"] = {}, []

    def _pass() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [PLANGATE, "run", "--once", "--config", str(lab.config)],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip

    try:
        for plan in ("kl", "rs", "ab"):  # a pass runs one plan at a time: one kill each
            _approve(lab, [plan])
            p = _pass()
            mine = [v for v in KILLED if VARIANTS[v][0] == plan]
            for v in mine:  # the kill falls mid-action, every helper waiting
                seen["ready"][v] = until((kd / f"READY-{v}").exists, 60)
            time.sleep(0.3)
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
        _approve(lab, ["ab"], "aborted")
        seen["err"].append(lab.run(check=False).stderr[-1500:])
        seen["alive"] = {v: pid_alive(kd / f"READY-{v}") for v in KILLED}
        _approve(lab, ["to"])
        seen["err"].append(lab.run(check=False).stderr[-1500:])
        seen["ready"]["to"] = (kd / "READY-to").exists()
        seen["alive"]["to"] = pid_alive(kd / "READY-to")
    finally:
        (kd / "RELEASE").write_text("1")
    time.sleep(2.0)
    seen["err"].append(lab.run(check=False).stderr[-1500:])
    log = kd / "effects.log"
    rows = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    seen["effects"] = {v: [r["kind"] for r in rows if r["tag"] == v] for v in VIDS}
    seen["calls"] = {v: len(lab.calls(f"esc:{v}")) for v in VIDS}
    seen["end"] = {plan: _head(lab, plan) for plan in PLANS}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r86-escape", _build)


def _seen(lab: Lab) -> dict[str, Any]:
    return lab.seen  # type: ignore[attr-defined,no-any-return]


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
    """The tool once; a resumed action's tool once more, its effect exactly once."""
    calls, effects = _seen(lab)["calls"][vid], _seen(lab)["effects"][vid]
    if VARIANTS[vid][2]:
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
    want = {"kl": "failed", "rs": "completed", "ab": "aborted", "to": "failed"}[plan]
    assert data["plan"]["status"] == want, (data["plan"], _seen(lab)["err"])
    assert block.get("status") == want, text[:1500]
    if plan == "kl":
        assert "E_ACTION_IN_DOUBT" in text, text[:1500]
