# ruff: noqa: E501
"""Round 11, runs after abort, in the daemon (``plangate run``, not ``--once``): the same
abort gaps as ``test_round11_runs_abort.py`` under the production loop. Alice's abort is
committed by the precondition check of action 1 (``d-precond``) and by a failing action
whose ``on_failure: fallback`` (``d-fallback``). Defence asserted: action 1's tool / the
fallback step never run, the plan ends ``aborted``. **Broke** (2): both run and both plans
are committed ``completed`` on top of Alice's abort.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, BenchError, Lab
from test_round2_execution_kit import shared
from test_round11_runs_abort import ABT

PLANS = {
    "d-precond": """actions:
  - id: 1
    tool: rec
    why: "w"
    params: {tag: d-precond}
    preconditions:
      - {tool: abtc, params: {slug: d-precond, fail: "no"}, expect: {path: $.json.ok, equals: true}}
""",
    "d-fallback": """actions:
  - id: 1
    tool: abt
    why: "w"
    params: {slug: d-fallback, fail: "yes"}
    on_failure: fallback
    fallback:
      - {id: "1.1", tool: rec, why: "w", params: {tag: d-fallback}}
""",
}


def _build(root: Path) -> Lab:
    abt = root / "abt.py"
    abt.write_text(ABT)
    lab = Lab(root)
    env = f"{{REC_LOG: {json.dumps(str(lab.log))}, LAB_REPO: {json.dumps(str(lab.repo))}, GIT_CONFIG_GLOBAL: {json.dumps(str(root / 'gitconfig'))}, HOME: {json.dumps(str(lab.home))}}}"
    argv = json.dumps([sys.executable, str(abt), "{slug}", "{fail}"])
    lab.write_config(
        tools=f"abt: {{kind: exec, argv: {argv}, env: {env}, output_trust: trusted}}\n"
        f"abtc: {{kind: exec, argv: {argv}, env: {env}, idempotent: true, risk: low, output_trust: trusted}}\n"
    )
    for slug, body in PLANS.items():
        lab.write(
            slug,
            f'plan:\n  name: "{slug}"\n  task: "t"\n  status: pending_approval\navailable_tools: [{{name: abt}}, {{name: abtc}}, {{name: rec}}]\n'
            + body,
        )
    lab.commit("plans", AGENT)
    lab.run()  # frozen
    e = lab.env()
    e["REC_LOG"] = str(lab.log)
    daemon = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
        env=e,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for slug in PLANS:
            lab.approve(slug)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            subjects = lab.git("log", "--format=%s", "-n", "30")
            if all(
                f"abort plans/{s}" in subjects
                or f"complete plans/{s}" in subjects
                or f"fail plans/{s}" in subjects
                for s in PLANS
            ):
                break
            time.sleep(0.2)
    finally:
        daemon.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            daemon.wait(10)
        if daemon.poll() is None:
            daemon.kill()
    missing = [t for t in (f"abt-{s}" for s in PLANS) if not lab.calls(t)]
    if missing:
        raise BenchError(f"the bench did not reach {missing}")
    lab.status()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r11-daemon", _build)


# round 11: the daemon ran the action's tool / the fallback step after Alice's abort and
# committed `completed`; fixed since (an abort is honoured before every call a step makes)
@pytest.mark.parametrize("slug", list(PLANS))
def test_the_daemon_runs_nothing_after_the_abort(lab: Lab, slug: str) -> None:
    assert len(lab.calls(f"abt-{slug}")) == 1
    assert lab.calls(slug) == []
    assert lab.status()[f"plans/{slug}"]["status"] == "aborted"
