"""Round 51 (runs): at most once across a rebuilt host (a NEW state directory on the same
repository, round 50's fix: a frozen hash's first start is a fact of history).

Lab ``fh`` (one module lab):

- ``killed``: plan ``k`` has two actions: ``rec`` (tag ``k``) then ``slow`` (an exec tool that
  touches a marker and sleeps). The old controller's pass is SIGKILLed while ``slow`` runs
  (the start commit is on the branch, action 1 ran). A second controller with a NEW state
  directory then runs passes. Asserted: ``rec`` ran once for ``k`` (nothing re-runs action 1).
- ``killed-copy``: the killed plan's approved version copied to ``plans/kc`` (same frozen
  hash) and approved by Alice; the new controller must refuse it (``rec`` for ``k`` once).
- ``revert``: plan ``r`` ran to completion under the old controller; the agent then
  ``git revert``s the controller's complete and start commits (PLAN.yml back at ``approved``
  with its frozen block). The new controller runs passes: ``rec`` ran once for ``r``.
- ``readd``: plan ``a`` ran; the agent ``git rm``s its folder, then re-adds the approved
  bytes (pre-start) in a later commit. New controller: ``rec`` ran once for ``a``.
- ``old-after``: after all of it, the OLD controller (its own state directory) runs passes
  again: every tag still ran once.
- ``k-one-outcome`` / ``k-audit``: the controller's commits hold one outcome for ``k``'s
  start; a fresh clone's audit has no ``outcome-without-start``.

Held: every run count (``k``, ``r``, ``a``: once, on the rebuilt host and the old host back;
``kc`` and the re-added ``a`` refused E_ALREADY_EXECUTED; the reverted ``r`` ignored as an
illegal transition).

Broke (strict xfails): ``k-one-outcome``: the rebuilt host committed ``fail plans/k``
(journal missing); the old host, back, committed a SECOND ``fail plans/k`` (E_ACTION_IN_DOUBT
from its journal, action 1 now shown succeeded), rewriting the finished run's execution block;
``k-audit``: the fresh-clone audit flags that second outcome ``outcome-without-start`` (exit 1).

Fixed (round 51): the old host, back, checks the branch when it takes its journaled run up
(and again before any outcome commit): ``fail plans/k`` after its start, under the
controller's name but not made by it (the rebuilt host's), drops the job (``run_taken_over``):
nothing more runs, nothing is committed; ``k`` has one outcome and the audit is clean.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from advkit import BenchError, Lab, plan_text
from test_round2_execution_kit import shared

SLOW = """\
import pathlib, sys, time
pathlib.Path(sys.argv[1]).write_text("in")
time.sleep(60)
print('{"ok": true}')
"""


def _plangate(lab: Lab) -> str:
    return os.path.join(os.path.dirname(sys.executable), "plangate")


def _killed_pass(lab: Lab, marker) -> None:  # type: ignore[no-untyped-def]
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    proc = subprocess.Popen(
        [_plangate(lab), "run", "--once", "--config", str(lab.config)],
        cwd=lab.root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.time() + 60
    while not marker.exists():
        if proc.poll() is not None or time.time() > deadline:
            raise BenchError("the slow action never started")
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(0.5)


def _build(root):  # type: ignore[no-untyped-def]
    (root / "slow.py").write_text(SLOW)
    marker = root / "slow.marker"
    slow = json.dumps([sys.executable, str(root / "slow.py"), str(marker)])
    lab = Lab(root / "fh", tools=f"slow: {{kind: exec, argv: {slow}, timeout: 120}}\n")
    two = plan_text(
        "k",
        extra_actions=(
            "  - id: 2\n    tool: slow\n    why: slow\n    needs: [1]\n    params: {}\n"
        ),
    ).replace("  - name: rec\n", "  - name: rec\n  - name: slow\n")
    lab.write("r", plan_text("r"))
    lab.write("a", plan_text("a"))
    lab.commit("plans r a")
    lab.run()
    lab.approve("r")
    lab.approve("a")
    lab.run()
    lab.run()
    # the approved bytes of ``a`` before its start, to re-add later
    starts = {}
    for slug in ("r", "a"):
        out = lab.git("log", "--format=%H %s", "--", f"plans/{slug}/PLAN.yml")
        starts[slug] = [line.split(" ", 1) for line in out.splitlines()]
    approved_a = None
    for sha, subject in starts["a"]:
        if subject == "approve a":
            approved_a = lab.git("show", f"{sha}:plans/a/PLAN.yml")
    # killed run of k
    lab.write("k", two)
    lab.commit("plan k")
    lab.run()
    lab.approve("k")
    _killed_pass(lab, marker)
    lab.killed_head = lab.git("log", "-1", "--format=%s")  # type: ignore[attr-defined]
    approved_k = lab.git("show", "HEAD~1:plans/k/PLAN.yml")
    lab.git("checkout", "-q", "--", ".")
    lab.git("clean", "-qfd", "plans")
    # revert the controller's commits of r
    for sha, subject in starts["r"]:
        if subject.startswith(("plangate: complete", "plangate: start")):
            lab.git("revert", "--no-edit", sha, who=("Agent", "agent@example.com"))
    # re-add a
    lab.git("rm", "-rq", "plans/a")
    lab.commit("drop a")
    lab.write("a", approved_a or "")
    lab.commit("bring a back")
    # copy of k
    lab.write("kc", approved_k.replace("status: approved", "status: pending_approval", 1))
    lab.commit("copy k")
    cfg2 = lab.root / "fresh.yml"
    cfg2.write_text(
        lab.config.read_text().replace(
            f"state_dir: {lab.state}", f"state_dir: {lab.root / 'state2'}"
        )
    )
    outs = []
    # a rebuilt host on sealed history: taken over knowingly (round 70)
    r = lab.cli("run", "--once", "--take-over", "--config", str(cfg2))
    outs.append(r.stderr[-2000:])
    lab.approve("kc")
    for _ in range(2):
        r = lab.cli("run", "--once", "--config", str(cfg2))
        outs.append(r.stderr[-2000:])
    lab.fresh_out = outs  # type: ignore[attr-defined]
    lab.fresh_counts = {t: len(lab.calls(t)) for t in ("k", "r", "a")}  # type: ignore[attr-defined]
    lab.fresh_status = lab.cli(  # type: ignore[attr-defined]
        "status", "--json", "--config", str(cfg2)
    ).stdout
    for _ in range(2):
        lab.run(check=False)
    lab.old_counts = {t: len(lab.calls(t)) for t in ("k", "r", "a")}  # type: ignore[attr-defined]
    lab.k_outcomes = [  # type: ignore[attr-defined]
        s
        for s in lab.git("log", "--format=%s").splitlines()
        if s.startswith(("plangate: fail plans/k", "plangate: complete plans/k"))
    ]
    clone = lab.root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    lab.audit_out = lab.cli("audit", "--json", cwd=clone).stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r51-freshhost", _build)


def test_the_kill_landed_mid_run(lab: Lab) -> None:
    assert lab.killed_head.startswith("plangate: start plans/k"), lab.killed_head  # type: ignore[attr-defined]


@pytest.mark.parametrize("tag", ["k", "r", "a"])
def test_fresh_host_runs_nothing_twice(lab: Lab, tag: str) -> None:
    assert lab.fresh_counts[tag] == 1, (lab.fresh_counts, lab.fresh_out)  # type: ignore[attr-defined]


@pytest.mark.parametrize("tag", ["k", "r", "a"])
def test_old_host_after_runs_nothing_twice(lab: Lab, tag: str) -> None:
    assert lab.old_counts[tag] == 1, lab.old_counts  # type: ignore[attr-defined]


def test_no_traceback(lab: Lab) -> None:
    assert not any("Traceback" in o for o in lab.fresh_out), lab.fresh_out  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", ["k-one-outcome", "k-audit"])
def test_one_outcome_per_start(lab: Lab, vid: str) -> None:
    if vid == "k-one-outcome":
        assert len(lab.k_outcomes) == 1, lab.k_outcomes  # type: ignore[attr-defined]
    else:
        assert "outcome-without-start" not in lab.audit_out, lab.audit_out  # type: ignore[attr-defined]
