"""Round 85 (runs): the crash recovery itself under attack: a tool whose process group
IGNORES SIGTERM, the recovery pass SIGKILLed in the middle of stopping it (after its SIGTERM,
inside the 1 s grace before the SIGKILL), for a non-idempotent and an idempotent tool; and the
branch force-moved under a killed run (its start commit gone), then put back.

docs/execution.md ("A tool left running by a dead controller"): "Before the next run decides
anything, it checks the spawn record of every action that started without an end: if that
pid is still running ... the group gets SIGTERM, up to 1 s to exit, then SIGKILL"; the crash
table: "start, no end ... first, the tool process it left running (if any) is stopped
(below); then tool ``idempotent: true`` -> run again; otherwise an end ``in_doubt`` is
written and the plan ends ``failed`` with E_ACTION_IN_DOUBT". docs/threat-model.md (round 4):
a plan whose controller commits are gone with a rewrite is held ``E_HISTORY_REWRITTEN`` "until
the erased commits are on the branch again".

Lab (one, local mode). Tools ``rec`` (the recorder), ``stb`` (effect ``stb:<tag>`` with
``overlap`` = whether the first call's process still lives, ``DONE-<tag>``; on its first call
it ignores SIGTERM (noting ``TERM-<tag>``) and waits for a ``GO`` that never comes), ``sti``
(the same program, ``idempotent: true``). Plans ``<v>``: action 1 ``stb <v>`` (``ti``:
``sti``), action 2 ``rec <v>2``. Variants, each approved by Alice and a ``run --once``
SIGKILLed once the tool did its effect:

- ``c1`` (control): nothing else; the next pass recovers it.
- ``tt``: the next pass (the recovery) SIGKILLed as soon as the tool got its SIGTERM; later
  passes recover it.
- ``ti``: the same with the idempotent tool (the recovery runs it again: once, never beside
  the first process).
- ``fp``: (after a settling pass) the branch reset to Alice's approval (``git reset --hard``:
  the controller's start commit gone), two passes, the tip put back, two passes.

Checks: ``calls`` (``tt``/``fp``/``c1``: the tool once, action 2 never; ``ti``: twice, never
overlapping, action 2 once), ``stopped`` (no process of the tool left), ``record`` (HEAD's
PLAN.yml ``failed`` with its block ``failed`` naming ``E_ACTION_IN_DOUBT``; ``ti``:
``completed``), ``held`` (``fp`` while reset: held ``E_HISTORY_REWRITTEN``, nothing ran),
``tree`` (nothing of the plan left in the shared checkout), ``audit`` (fresh clone: one valid
start per plan, no finding).

Seen (round 85): all held. ``tt``: the recovery pass SIGKILLed right after its SIGTERM (the
tool noted it and ran on); the next pass stopped the group (SIGKILL after the grace) and
failed the run E_ACTION_IN_DOUBT, ``stb`` once. ``ti``: the next pass stopped it and ran the
idempotent tool again once, never beside the first process (``overlap`` false), then action
2 once, ``completed``. ``fp``: with the start commit reset away the plan was refused
``E_ALREADY_EXECUTED`` ("a copy, move or rewritten history of it does not run again") and its
row named ``E_HISTORY_REWRITTEN``; nothing ran; the tip put back, it was recovered
``failed`` E_ACTION_IN_DOUBT. Noted, not asserted: while reset, the tool the kill left
running was still alive after two passes (as ``waitleft`` in ``test_round85_runs_killtop``).
Fixed (2026-12-01, r85linkheld): every pass first stops, by each open job's journal, the tool
a dead controller left, whatever holds the plan; asserted by ``test_held_stopped``.
The fresh-clone audit: one valid start each, no finding.
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
from advkit import ALICE, Lab, cases, load_yaml, pid_alive, until, valid_runs
from mcpkit import PLANGATE
from test_round2_execution_kit import shared

STB = r"""
import json, os, signal, sys, time
tag = sys.argv[1]
d = os.environ["KIL_DIR"]
second = os.path.exists(os.path.join(d, "DONE-" + tag))
overlap = False
if second:
    try:
        pid = int(open(os.path.join(d, "PID-" + tag)).read())
        stat = open("/proc/%d/stat" % pid).read()
        overlap = stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, ValueError):
        pass
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": ["stb:" + tag], "overlap": overlap, "stdin": ""}) + "\n")
if not second:
    def _term(signum, frame):
        open(os.path.join(d, "TERM-" + tag), "a").write("1")
    signal.signal(signal.SIGTERM, _term)
    open(os.path.join(d, "PID-" + tag), "w").write(str(os.getpid()))
open(os.path.join(d, "DONE-" + tag), "w").write("1")
for _ in range(0 if second else 600):
    if os.path.exists(os.path.join(d, "GO-" + tag)):
        break
    time.sleep(0.1)
print('{"ok": true}')
"""

VIDS = ["c1", "tt", "ti", "fp"]


def _plan(v: str) -> str:
    tool = "sti" if v == "ti" else "stb"
    return (
        f'plan:\n  name: "{v}"\n  task: "variant {v}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n  - name: stb\n  - name: sti\nactions:\n"
        f'  - id: 1\n    tool: {tool}\n    why: "once"\n    params: {{t: "{v}"}}\n'
        f'  - id: 2\n    tool: rec\n    why: "after"\n    params: {{tag: "{v}2"}}\n'
    )


def _head(lab: Lab, v: str) -> dict[str, Any] | None:
    try:
        return dict(load_yaml(lab.git("show", f"HEAD:plans/{v}/PLAN.yml")))
    except Exception:  # a file gone or no plan is what the check reports
        return None


def _build(root: Path) -> Lab:
    kd = root / "kd"
    kd.mkdir()
    (root / "stb.py").write_text(STB)
    argv = json.dumps([sys.executable, str(root / "stb.py"), "{t}"])
    log = json.dumps(str(root / "lab" / "ran.log"))
    env_ = f"{{KIL_DIR: {json.dumps(str(kd))}, REC_LOG: {log}}}"
    tools = (
        f"stb: {{kind: exec, argv: {argv}, env: {env_}}}\n"
        f"sti: {{kind: exec, argv: {argv}, env: {env_}, idempotent: true}}\n"
    )
    lab = Lab(root / "lab", tools=tools)
    for v in VIDS:
        lab.write(v, _plan(v))
    lab.commit("agent plans")
    lab.run()
    seen: dict[str, Any] = {"marked": {}, "termed": {}}
    lab.seen = seen  # type: ignore[attr-defined]
    env = lab.env()
    env["REC_LOG"] = str(lab.log)

    def _pass() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [PLANGATE, "run", "--once", "--config", str(lab.config)],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip

    def _kill(p: subprocess.Popen[bytes]) -> None:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)

    for v in VIDS:
        if v == "fp":
            lab.run()  # settle: nothing of the others is left to a pass that fp resets away
        lab.set_status(v, "approved")
        lab.git("add", f"plans/{v}/PLAN.yml")
        lab.git("commit", "-q", "-m", f"approve {v}", who=ALICE)
        approval = lab.head()
        p = _pass()
        seen["marked"][v] = until((kd / f"DONE-{v}").exists, 80)
        time.sleep(0.3)
        _kill(p)
        if v in ("tt", "ti"):
            p = _pass()
            seen["termed"][v] = until((kd / f"TERM-{v}").exists, 80)
            _kill(p)
            seen.setdefault("between", {})[v] = pid_alive(kd / f"PID-{v}")
        if v == "fp":
            tip = lab.head()
            lab.git("reset", "-q", "--hard", approval)
            errs = [lab.run(check=False).stderr[-1500:], lab.run(check=False).stderr[-800:]]
            seen["fp_err"] = errs
            seen["fp_row"] = lab.status().get("plans/fp")
            seen["fp_calls"] = (len(lab.calls("stb:fp")), len(lab.calls("fp2")))
            seen["fp_alive"] = pid_alive(kd / "PID-fp")  # test_held_stopped (r85linkheld)
            lab.git("reset", "-q", "--hard", tip)
    seen["err"] = [lab.run(check=False).stderr[-1500:], lab.run(check=False).stderr[-800:]]
    seen["end"] = {v: _head(lab, v) for v in VIDS}
    seen["alive"] = {v: pid_alive(kd / f"PID-{v}") for v in VIDS}
    seen["tree"] = lab.git("status", "--porcelain", "--untracked-files=all")
    seen["calls"] = {
        v: (len(lab.calls(f"stb:{v}")), len(lab.calls(f"{v}2")), lab.calls(f"stb:{v}"))
        for v in VIDS
    }
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    seen["audit_err"] = out.stderr[-2000:]
    seen["report"] = json.loads(out.stdout) if out.stdout.strip() else {}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r85-killtwice", _build)


def _seen(lab: Lab) -> dict[str, Any]:
    return lab.seen  # type: ignore[attr-defined,no-any-return]


BROKEN: dict[str, Any] = {}


def test_dump(lab: Lab) -> None:
    """Not a check: the whole story, for the reader of ``-rA``."""
    seen = _seen(lab)
    print(json.dumps({k: seen[k] for k in seen if k != "report"}, default=str, indent=1))


def test_live() -> None:
    """The lab's kills fell where they were meant to (checked in ``test_calls``)."""


@pytest.mark.parametrize("vid", VIDS)
def test_calls(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    assert seen["marked"][vid], seen["marked"]
    if vid in ("tt", "ti"):
        assert seen["termed"][vid], seen["termed"]
    first, after, rows = seen["calls"][vid]
    if vid == "ti":
        assert (first, after) == (2, 1), seen["calls"][vid]
        assert not any(r.get("overlap") for r in rows), rows
        return
    assert (first, after) == (1, 0), seen["calls"][vid]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_stopped(lab: Lab, vid: str) -> None:
    assert _seen(lab)["alive"][vid] is False, _seen(lab)["alive"]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_record(lab: Lab, vid: str) -> None:
    data = _seen(lab)["end"][vid]
    assert data is not None
    block = data.get("execution") or {}
    text = json.dumps(block, default=str)
    if vid == "ti":
        assert data["plan"]["status"] == "completed", (data["plan"], _seen(lab)["err"])
        assert block.get("status") == "completed", text[:1500]
        return
    assert data["plan"]["status"] == "failed", (data["plan"], _seen(lab)["err"])
    assert block.get("status") == "failed", text[:1500]
    assert "E_ACTION_IN_DOUBT" in text, text[:1500]


@pytest.mark.parametrize("what", ["row", "calls"])
def test_held(lab: Lab, what: str) -> None:
    seen = _seen(lab)
    if what == "calls":
        assert seen["fp_calls"] == (1, 0), seen["fp_calls"]
        return
    row = seen["fp_row"] or {}
    assert "E_HISTORY_REWRITTEN" in json.dumps(row), (row, seen["fp_err"])


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_tree(lab: Lab, vid: str) -> None:
    tree = [line for line in _seen(lab)["tree"].splitlines() if f"plans/{vid}/" in line]
    assert not tree, tree


@pytest.mark.parametrize("vid", VIDS)
def test_audit(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    assert "Traceback" not in seen["audit_err"], seen["audit_err"]
    report = seen["report"]
    assert len(valid_runs(report, vid)) == 1, valid_runs(report, vid)
    mine = [f for f in report.get("findings", []) if f"plans/{vid}" in json.dumps(f)]
    assert not mine, mine


def test_held_stopped(lab: Lab) -> None:
    """``fp`` while held ``E_HISTORY_REWRITTEN`` (the start commit reset away): the tool the
    kill left is stopped by the journal's recovery all the same, whatever decides about the
    plan (added by r85linkheld: the ``waitleft`` rule, every open job's journal first)."""
    assert _seen(lab)["fp_alive"] is False, (_seen(lab)["fp_row"], _seen(lab)["fp_err"])
