# ruff: noqa: E501
"""Round 54 (runs): the daemon told to stop in the middle of a step. docs/operations.md,
Signals: "SIGTERM, SIGINT: stop starting actions; the running action finishes (bounded by
its timeout); the outcome so far is checkpointed and committed (status stays executing,
resumed on the next start); exit 0". docs/execution.md: stop is checked "before each action
starts, during a retry's back-off and between verify polls, never in the middle of a tool
call". Nobody signalled a real daemon in the middle of a graph, a back-off or a verify poll.

Lab ``sg``: a daemon (``plangate run``) per variant; ``slow`` notes ``<tag>-start``, sleeps
``secs``, notes ``<tag>-end`` (exits 1 for a ``fail`` tag; not idempotent); ``chk`` the same
with 0 s (idempotent, low risk). Once the variant's trigger is seen in the record, the daemon
gets the signal; then one ``run --once`` continues the plan.

- ``seq`` (SIGTERM): action 1 ``slow`` 3 s, action 2 ``rec``; signalled during action 1.
- ``par`` (SIGTERM): two independent 3 s ``slow`` actions running at once, action 3 needs
  both; signalled while both run.
- ``retry`` (SIGINT): a failing action with ``retry: {attempts: 1, delay: 4}``; signalled
  during the back-off.
- ``verify`` (SIGTERM): an action whose ``verify`` polls a failing ``chk`` every second for
  8 s; signalled between polls.

Asserted: the daemon exits 0 and the branch shows the plan ``executing`` (committed), and
after the next pass no tool was called more than its plan allows: every started action once,
the retried action at most twice in all, the verified action's tool once (only its check
polled again). All held.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from advkit import ALICE, BenchError, Lab
from test_round2_execution_kit import shared

SLOW = """\
import json, os, sys, time
tag = sys.argv[1]
def note(x):
    with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"argv": [x]}) + "\\n")
note(tag + "-start"); time.sleep(float(sys.argv[2])); note(tag + "-end")
if tag.startswith("fail"):
    sys.exit(1)
print(json.dumps({"ok": True}))
"""
PLANGATE = str(Path(sys.executable).parent / "plangate")
HEAD = "plan:\n  name: {n}\n  task: t\n  status: pending_approval\navailable_tools: [{{name: rec}}, {{name: slow}}, {{name: chk}}]\nactions:\n"
PLANS = {
    "seq": "  - {id: 1, tool: slow, why: w, params: {tag: seq1, secs: 3}}\n  - {id: 2, tool: rec, why: w, params: {tag: seq2}}\n",
    "par": "  - {id: 1, tool: slow, why: w, needs: [], params: {tag: par1, secs: 3}}\n  - {id: 2, tool: slow, why: w, needs: [], params: {tag: par2, secs: 3}}\n  - {id: 3, tool: rec, why: w, needs: [1, 2], params: {tag: par3}}\n",
    "retry": "  - {id: 1, tool: slow, why: w, params: {tag: failretry1, secs: 0}, on_failure: retry, retry: {attempts: 1, delay: 4}}\n  - {id: 2, tool: rec, why: w, params: {tag: retry2}}\n",
    "verify": "  - id: 1\n    tool: slow\n    why: w\n    params: {tag: verify1, secs: 0}\n    verify: {tool: chk, params: {tag: failchk}, expect: {path: $.exit_code, equals: 0}, timeout: 8, interval: 1}\n  - {id: 2, tool: rec, why: w, params: {tag: verify2}}\n",
}
TRIGGER = {
    "seq": ("seq1-start", signal.SIGTERM),
    "par": ("par2-start", signal.SIGTERM),
    "retry": ("failretry1-end", signal.SIGINT),
    "verify": ("failchk-end", signal.SIGTERM),
}
VARIANTS = list(PLANS)


def _build(root: Path) -> Lab:
    (root / "slow.py").write_text(SLOW)
    lab = Lab(root / "sg")
    py, slow, log = (json.dumps(x) for x in (sys.executable, str(root / "slow.py"), str(lab.log)))
    lab.write_config(
        tools=f"slow: {{kind: exec, argv: [{py}, {slow}, '{{tag}}', '{{secs}}'], env: {{REC_LOG: {log}}}, timeout: 30}}\n"
        f"chk: {{kind: exec, argv: [{py}, {slow}, '{{tag}}', '0'], env: {{REC_LOG: {log}}}, idempotent: true, risk: low}}\n",
        extra="execution: {checkpoint_interval: 1}\n",
    )
    for vid, body in PLANS.items():
        lab.write(vid, HEAD.format(n=vid) + body)
    lab.commit("plans")
    lab.run()
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    lab.exits, lab.between = {}, {}  # type: ignore[attr-defined]
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
        lab.commit(f"approve {vid}", ALICE)
        daemon = subprocess.Popen(
            [PLANGATE, "run", "--config", str(lab.config)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(lab.root / f"{vid}.err", "wb"),  # noqa: SIM115
        )
        tag, sig = TRIGGER[vid]
        deadline = time.monotonic() + 60
        while not lab.calls(tag):
            if time.monotonic() > deadline or daemon.poll() is not None:
                daemon.kill()
                raise BenchError(f"{vid}: {tag} never seen")
            time.sleep(0.05)
        time.sleep(0.5)
        daemon.send_signal(sig)
        try:
            lab.exits[vid] = daemon.wait(60)  # type: ignore[attr-defined]
        except subprocess.TimeoutExpired:
            daemon.kill()
            raise BenchError(f"{vid}: the daemon did not stop") from None
        lab.between[vid] = lab.plan(vid)["plan"]["status"]  # type: ignore[attr-defined]
        lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r54-signals", _build)


@pytest.mark.parametrize("vid", VARIANTS)
def test_a_stopped_daemon_runs_nothing_twice(lab: Lab, vid: str) -> None:
    assert lab.exits[vid] == 0, lab.exits  # type: ignore[attr-defined]
    assert lab.between[vid] == "executing", lab.between  # type: ignore[attr-defined]
    ran = Counter(json.loads(line)["argv"][0] for line in lab.log.read_text().splitlines())
    if vid == "seq":
        assert (ran["seq1-start"], ran["seq2"]) == (1, 1), ran
    elif vid == "par":
        assert (ran["par1-start"], ran["par2-start"], ran["par3"]) == (1, 1, 1), ran
    elif vid == "retry":
        assert ran["failretry1-start"] <= 2 and ran["retry2"] == 0, ran
    else:
        assert ran["verify1-start"] == 1 and ran["verify2"] == 0, ran
