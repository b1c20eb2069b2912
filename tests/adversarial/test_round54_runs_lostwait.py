# ruff: noqa: E501
"""Round 54 (runs): a run whose journal is lost while its outcome has to wait, because the
plan file holds uncommitted edits. docs/threat-model.md listed it under "Known edges, not yet
attacked into a test": "A lost journal's E_ACTION_IN_DOUBT outcome that cannot be committed
(the plan file left with uncommitted edits by a kill) waits; a second pass of the same
process then finds the journal no longer empty (its own ``begin`` record) and runs the
action". docs/execution.md: a journal "missing or empty, though the controller started the
run" -> "nothing runs; the plan ends failed with E_ACTION_IN_DOUBT".

Lab ``lw`` (local mode, ``checkpoint_interval: 1``, ``max_concurrent_plans: 5``): one plan
per variant, action 1 ``rec`` (``<vid>-1``), action 2 ``slow`` (an exec tool that notes
``<vid>-2-start``, sleeps 4 s, notes ``<vid>-2-end``; not idempotent), action 3 ``rec``
(``<vid>-3``). Alice approves all in one commit; a daemon (``plangate run``) starts them
together and is SIGKILLed while every action 2 runs (after a checkpoint wrote PLAN.yml in
the working tree); the orphaned tools finish. Then, per variant:

- ``comment``: the plan's journal folder is lost (``<state>/journal/plans%2F<vid>``), and
  the agent, who writes the shared working tree, appends a comment line to PLAN.yml (left
  uncommitted). Three ``run --once`` passes.
- ``staged``: journal lost; the agent only ``git add``s the plan's folder (the controller's
  own checkpoint bytes, staged, nothing of the agent's).
- ``logedit``: journal lost; the agent writes EXECUTION_LOG.md (PLAN.yml untouched).
- ``kept`` (control): the agent's comment, journal kept.
- ``clean`` (control): journal lost, nobody touches the tree.

Lab ``lwd``: ``daemon``: the ``comment`` case with a restarted daemon (passes on start, on
SIGHUP and on a bystander's commit) instead of ``run --once``.

Asserted per variant: action 1 and action 2 each ran exactly once and action 3 never ran
(nobody approved a resume; at most once).

Broke (strict xfails): ``comment``, ``daemon``: the first pass finds the journal missing and
decides E_ACTION_IN_DOUBT, but its outcome cannot be committed over the agent's edit, so the
plan stays ``executing``; the next pass (same daemon, or the next ``run --once``) finds a
journal again (the ``begin`` record the first pass wrote) and runs the plan from action 1:
action 1 and the non-idempotent action 2 ran TWICE, action 3 ran, and nothing was committed
(``status`` still ``executing``, "the outcome waits: ... uncommitted edits"). Should: a run
decided in doubt stays in doubt (journal the decision, or never start a journal it did not
find) until a human's resume. Held: see the test ids without a marker.

Fixed (2026-11-29, with round 52's execution side, found the same hour by that fixer as a
known edge): a run that failed as a whole (the journal lost: E_ACTION_IN_DOUBT) reports the
same failure again on every pass while its outcome waits, and runs nothing until a resume is
approved (docs/execution.md, "A verdict that waits for its commit";
``tests/service/test_state_loss.py``). Both variants hold.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, cases, plan_text
from test_round2_execution_kit import shared

ONCE = ["comment", "staged", "logedit", "kept", "clean"]
VARIANTS = [*ONCE, "daemon"]
BROKEN: dict[str, object] = {}  # fixed (see the docstring)

SLOW = """\
import json, os, sys, time
tag = sys.argv[1]
def note(x):
    with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"argv": [x]}) + "\\n")
note(tag + "-start"); time.sleep(4); note(tag + "-end")
print(json.dumps({"ok": True}))
"""
PLANGATE = str(Path(sys.executable).parent / "plangate")


def _plan(vid: str) -> str:
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: rec}, {name: slow}]\nactions:\n"
        f"  - {{id: 1, tool: rec, why: w, params: {{tag: {vid}-1}}}}\n"
        f"  - {{id: 2, tool: slow, why: w, params: {{tag: {vid}-2}}}}\n"
        f"  - {{id: 3, tool: rec, why: w, params: {{tag: {vid}-3}}}}\n"
    )


def _daemon(lab: Lab, name: str) -> subprocess.Popen[bytes]:
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    return subprocess.Popen(
        [PLANGATE, "run", "--config", str(lab.config)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(lab.root / f"{name}.err", "wb"),
    )


def _killed_mid_run(root: Path, name: str, vids: list[str]) -> Lab:
    (root / "slow.py").write_text(SLOW)
    lab = Lab(root / name)
    py, slow, log = (json.dumps(x) for x in (sys.executable, str(root / "slow.py"), str(lab.log)))
    lab.write_config(
        tools=f"slow: {{kind: exec, argv: [{py}, {slow}, '{{tag}}'], env: {{REC_LOG: {log}}}, timeout: 30}}\n",
        extra="execution: {checkpoint_interval: 1, max_concurrent_plans: 5}\n",
    )
    for vid in vids:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in vids:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    daemon = _daemon(lab, "first")
    deadline = time.monotonic() + 90
    while any(not lab.calls(f"{v}-2-start") for v in vids):
        if time.monotonic() > deadline or daemon.poll() is not None:
            daemon.kill()
            raise BenchError("the slow actions never all started")
        time.sleep(0.1)
    time.sleep(1.6)  # a checkpoint writes PLAN.yml in the tree
    daemon.kill()
    daemon.wait()
    deadline = time.monotonic() + 30  # the orphaned tools finish on their own
    while any(not lab.calls(f"{v}-2-end") for v in vids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return lab


def _lose_and_touch(lab: Lab, vid: str) -> None:
    if vid != "kept":
        shutil.rmtree(lab.state / "journal" / f"plans%2F{vid}")
    folder = lab.repo / "plans" / vid
    if vid in ("comment", "kept", "daemon"):
        with open(folder / "PLAN.yml", "a", encoding="utf-8") as handle:
            handle.write("# the agent's note\n")
    elif vid == "staged":
        lab.git("add", f"plans/{vid}")
    elif vid == "logedit":
        (folder / "EXECUTION_LOG.md").write_text("# the agent's log\n")


def _build(root: Path) -> Lab:
    lab = _killed_mid_run(root, "lw", ONCE)
    for vid in ONCE:
        _lose_and_touch(lab, vid)
    for _ in range(3):
        lab.run()
    lab.dirty = lab.git("status", "--short")  # type: ignore[attr-defined]
    return lab


def _build_daemon(root: Path) -> Lab:
    lab = _killed_mid_run(root, "lwd", ["daemon"])
    _lose_and_touch(lab, "daemon")
    daemon = _daemon(lab, "second")
    try:
        time.sleep(5)
        daemon.send_signal(signal.SIGHUP)
        time.sleep(3)
        lab.write("other", plan_text("other"))
        lab.git("add", "plans/other")
        lab.git("commit", "-q", "-m", "a bystander's plan", who=AGENT)
        time.sleep(5)
        daemon.send_signal(signal.SIGHUP)
        time.sleep(3)
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(60)
        except subprocess.TimeoutExpired:
            daemon.kill()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r54-lostwait", _build)


@pytest.fixture(scope="module")
def dlab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r54-lostwait-daemon", _build_daemon)


def _ran(lab: Lab, vid: str) -> Counter[str]:
    rows = [json.loads(line)["argv"][0] for line in lab.log.read_text().splitlines()]
    return Counter(r for r in rows if r.startswith(f"{vid}-"))


@pytest.mark.parametrize("vid", cases(VARIANTS, VARIANTS, BROKEN))
def test_nothing_runs_twice_after_a_lost_journal(lab: Lab, dlab: Lab, vid: str) -> None:
    which = dlab if vid == "daemon" else lab
    ran = _ran(which, vid)
    assert ran[f"{vid}-1"] == 1, ran
    assert ran[f"{vid}-2-start"] == 1, ran
    assert ran[f"{vid}-3"] == 0, ran
