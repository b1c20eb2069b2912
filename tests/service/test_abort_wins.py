"""Once the controller has committed ``plangate: abort`` for a run, nothing more of that run
runs (round 111, atk111d ``abort-then-continued``).

The break: a run stopped mid action 1 (a daemon's SIGTERM) with an abort requested on the
branch; the restarted daemon's first pass handed the run out as a job to abort it, and its
next pass, woken before a worker took that job up, handed the same run out again (its job
row still there, the abort not yet recorded). The first job recorded the abort
(``plangate: abort``, the job row cleared, the run's abort mark dropped); the second then ran
with nothing saying abort (the index reads the controller's abort as the answer to the
request) and went on from the journal: actions 2 and 3 called, ``plangate: complete``
committed over the aborted plan. Now a job whose row is gone (its outcome committed) or
names another run never runs, and a plan the branch shows ``aborted`` runs nothing more.

Real git, a real ``plangate run`` daemon stopped (SIGTERM) while its action 1 blocks on a
file, a real ``plangate run --once`` SIGKILLed at the same point, and a Controller object for
the restarted daemon's passes: deterministic, no race.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from controller.service.reconcile import Controller
from controller.settings import load_config
from tests.support.daemonproc import DaemonProcess, wait_until
from tests.support.gitenv import AGENT, ROOT, commit_all, git, identity

#: Action 1 writes READY-<tag>, then waits for GO-<tag>; every call is recorded.
TOOL = """\
import json, os, sys, time
tag, d = sys.argv[1], os.environ["T_DIR"]
with open(os.path.join(d, "calls.log"), "a") as f:
    f.write(tag + "\\n")
if tag.endswith("-1"):
    open(os.path.join(d, "READY-" + tag), "w").close()
    while not os.path.exists(os.path.join(d, "GO-" + tag)):
        time.sleep(0.02)
print(json.dumps({"ok": tag}))
"""


def _plan(slug: str) -> str:
    acts = "".join(
        f'  - id: {i}\n    tool: t\n    why: "step {i}"\n    params: {{tag: "{slug}-{i}"}}\n'
        for i in (1, 2, 3)
    )
    return (
        f'plan:\n  name: "{slug}"\n  task: "abort wins"\n  status: pending_approval\n'
        f"available_tools:\n  - name: t\nactions:\n{acts}"
    )


class _Lab:
    def __init__(self, tmp_path: Path, repo: Path, slug: str) -> None:
        self.tmp, self.repo, self.slug = tmp_path, repo, slug
        (tmp_path / "t.py").write_text(TOOL)
        argv = json.dumps([sys.executable, str(tmp_path / "t.py"), "{tag}"])
        self.config = tmp_path / "plangate.yml"
        self.config.write_text(
            f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
            "identity: {name: plangate, email: plangate@localhost}\n"
            "approval: {approvers: [alice@example.com]}\n"
            f"tools: {{t: {{kind: exec, argv: {argv}, env: {{T_DIR: '{tmp_path}'}}}}}}\n"
        )
        (repo / "plans" / slug).mkdir(parents=True)
        self.file = repo / "plans" / slug / "PLAN.yml"
        self.file.write_text(_plan(slug))
        commit_all(repo, f"propose {slug}", AGENT)
        self.once()  # frozen
        self.file.write_text(self.file.read_text().replace("pending_approval", "approved"))
        commit_all(repo, f"approve {slug}", ("Alice", "alice@example.com"))

    def once(self) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "-m", "controller", "run", "--once", "--config", str(self.config)],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        return result

    def abort(self) -> None:
        """The plan's author asks for the abort (``plangate abort``)."""
        args = ["abort", f"plans/{self.slug}", "--config", str(self.config)]
        result = subprocess.run(
            [sys.executable, "-m", "controller", *args],
            cwd=self.repo,
            env={**os.environ, "PYTHONPATH": str(ROOT), **identity(*AGENT)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr[-2000:]

    def ready(self) -> bool:
        return (self.tmp / f"READY-{self.slug}-1").exists()

    def release(self) -> None:
        (self.tmp / f"GO-{self.slug}-1").touch()

    def calls(self) -> list[str]:
        log = self.tmp / "calls.log"
        return log.read_text().split() if log.exists() else []

    def events(self) -> list[str]:
        """The plan's controller events, oldest first."""
        lines = git(self.repo, "log", "--reverse", "--format=%s", "--", f"plans/{self.slug}")
        return [s.split(" ")[1] for s in lines.splitlines() if s.startswith("plangate: ")]

    def status(self) -> str:
        text = git(self.repo, "show", f"HEAD:plans/{self.slug}/PLAN.yml")
        return next(ln.split(":")[1].strip() for ln in text.splitlines() if "  status:" in ln)


def test_a_run_handed_out_twice_runs_nothing_after_its_abort_is_committed(
    tmp_path: Path, repo: Path
) -> None:
    lab = _Lab(tmp_path, repo, "ab")
    daemon = DaemonProcess(lab.config)
    try:
        wait_until(lab.ready, 60, "action 1 to start")
        daemon.proc.send_signal(signal.SIGTERM)  # the daemon stops after action 1
        # once it has taken the signal in: Python runs the handler in the main thread, which
        # a loaded machine may schedule after the worker finished action 1 and began action 2
        # (CI check 2026-12-07: ['ab-1', 'ab-2']); "stop starting actions" counts from there
        daemon.wait_event("daemon.stopping", 60)
        lab.release()
        assert daemon.proc.wait(timeout=60) == 0
    finally:
        if daemon.proc.poll() is None:
            daemon.stop()
    assert lab.calls() == ["ab-1"]
    assert lab.events()[-1] == "checkpoint", lab.events()  # stopped: the run is to go on
    lab.abort()  # asked before any controller runs again: not recorded yet

    ctl = Controller(load_config(lab.config))
    try:
        first = ctl.reconcile()  # the restart's first pass: the run, to be aborted
        again = ctl.reconcile()  # the next pass, woken before a worker took it up
        assert [j.plan_id for j in first] == [f"plans/{lab.slug}"]
        ctl.execute(first[0])  # aborted before action 2: plangate: abort
        assert lab.events()[-1] == "abort", lab.events()
        for job in again:  # the same run handed out again: runs nothing, commits nothing
            ctl.execute(job)
        for job in ctl.reconcile():
            ctl.execute(job)
    finally:
        ctl.close()
    assert lab.calls() == ["ab-1"]
    assert lab.events()[-1] == "abort", lab.events()
    assert "complete" not in lab.events()
    assert lab.status() == "aborted"


def test_a_run_killed_mid_action_with_its_abort_asked_runs_nothing_more(
    tmp_path: Path, repo: Path
) -> None:
    lab = _Lab(tmp_path, repo, "ak")
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(lab.config)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lab.ready, 60, "action 1 to start")
        lab.abort()  # mid action 1
        proc.send_signal(signal.SIGKILL)  # the pass dies with action 1 in doubt
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lab.release()  # the tool the kill left running ends (or the restart stops it)
    for _ in range(2):
        lab.once()
    assert lab.calls() == ["ak-1"]  # action 1 in doubt: never called again; 2 and 3 never
    assert lab.events()[-1] == "abort", lab.events()
    assert lab.status() == "aborted"
