"""The daemon's loop in-process, with a stand-in controller: coalescing, one run per plan at
a time, retries after a failed pass, stopping, reloading. (The real controller and git are
exercised end to end in test_daemon_local.py and test_daemon_remote.py.)"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from controller.errors import GitError
from controller.service.daemon import Daemon, Wakeups
from controller.service.reconcile import Job
from controller.service.sdnotify import Notifier
from controller.settings import Config, load_config
from tests.support.daemonkit import wait_until


@dataclass
class StandIn:
    """Implements the part of Controller the daemon uses."""

    config: Config
    jobs: list[Job] = field(default_factory=list)
    failures: int = 0
    passes: int = 0
    executed: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    saw_stop: list[bool] = field(default_factory=list)
    closed: bool = False
    #: the daemon sets how long an uncommitted plan settles and reads when to look again
    adopt_settle: float = 0.0
    adopt_due: float | None = None
    #: While cleared, a pass blocks (to add events during it); set by default.
    in_pass: threading.Event = field(default_factory=threading.Event)
    may_finish: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.may_finish.set()

    def reconcile(self, dispatch: Callable[[Job], None] | None = None) -> list[Job]:
        self.passes += 1
        self.in_pass.set()
        self.may_finish.wait(30)
        if self.failures:
            self.failures -= 1
            raise GitError("index.lock held by someone")
        return list(self.jobs)

    def execute(self, job: Job, stop_requested: Callable[[], bool]) -> None:
        self.executed.append(job.plan_id)
        self.release.wait(30)
        self.saw_stop.append(stop_requested())

    def status(self) -> list[dict[str, Any]]:
        return []

    def commit_finished(self) -> None:
        """Nothing waits: execute() records nothing."""

    def close(self) -> None:
        self.closed = True


def job(plan_id: str) -> Job:
    return Job(plan_id, Path(plan_id) / "PLAN.yml", "sha256:" + "0" * 64, {"by": "a@x"})


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "plangate.yml"
    path.write_text(
        'remote: {url: "git://127.0.0.1/x.git", poll_interval: 3600}\n'
        f"state_dir: {tmp_path / 'state'}\n"
        'approval: {approvers: ["alice@example.com"]}\n'
    )
    return path


@pytest.fixture
def daemon(config_file: Path) -> Iterator[tuple[Daemon, StandIn]]:
    holder: list[StandIn] = []

    def factory(config: Config) -> StandIn:
        holder.append(StandIn(config))
        return holder[0]

    d = Daemon(load_config(config_file), notifier=Notifier({}), controller_factory=factory)  # type: ignore[arg-type]
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(d.run()), daemon=True)
    thread.start()
    wait_until(lambda: holder and holder[0].passes >= 1, what="first pass")
    yield d, holder[0]
    holder[0].release.set()
    d.request_stop()
    thread.join(30)
    assert result == [0] and holder[0].closed


def test_a_plan_runs_once_however_often_a_pass_returns_it(daemon: tuple[Daemon, StandIn]) -> None:
    d, controller = daemon
    controller.jobs = [job("plans/a")]
    for n in range(5):
        d.wakeups.add(f"ref:{n}")
        wait_until(lambda: controller.passes >= 2, what="a pass")
    wait_until(lambda: controller.executed, what="the job to start")
    time.sleep(0.2)
    assert controller.executed == ["plans/a"] and d.running() == {"plans/a"}
    controller.jobs = []
    controller.release.set()
    wait_until(lambda: not d.running(), what="the job to end")


def test_events_during_a_pass_are_coalesced(daemon: tuple[Daemon, StandIn]) -> None:
    d, controller = daemon
    controller.may_finish.clear()
    controller.in_pass.clear()
    before = controller.passes
    d.wakeups.add("ref:main")
    assert controller.in_pass.wait(10), "no pass started"
    for n in range(50):
        d.wakeups.add(f"file:{n}")  # all while a pass runs: they share the next pass
    controller.may_finish.set()
    wait_until(lambda: controller.passes >= before + 2, what="the follow-up pass")
    time.sleep(0.5)
    assert controller.passes - before == 2


def test_a_failed_pass_is_retried_without_a_new_event(daemon: tuple[Daemon, StandIn]) -> None:
    d, controller = daemon
    controller.failures = 3
    before = controller.passes
    d.wakeups.add("ref:main")
    wait_until(lambda: controller.passes >= before + 4, 10, "three retries and a good pass")
    assert controller.failures == 0


def test_memory_is_given_back_after_a_pass_that_compacted_the_index(
    daemon: tuple[Daemon, StandIn], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold or long scan trims the heap, then the rest of its pass frees more (its commit,
    the status rows): the daemon trims again once that pass is over, and only then."""
    from controller.git import history

    released: list[int] = []
    monkeypatch.setattr(history, "release_memory", lambda: released.append(1))
    d, controller = daemon
    controller.index = SimpleNamespace(compactions=0)  # type: ignore[attr-defined]
    for reason, compactions, expected in (("ref:a", 0, 0), ("ref:b", 1, 1), ("ref:c", 1, 1)):
        controller.index.compactions = compactions  # type: ignore[attr-defined]
        before = d.passes
        d.wakeups.add(reason)
        wait_until(lambda before=before: d.passes > before, what="a pass")  # type: ignore[misc]
        wait_until(lambda expected=expected: len(released) >= expected, what="a release")  # type: ignore[misc]
    time.sleep(0.2)
    assert released == [1]


def test_stop_reaches_the_running_plan(daemon: tuple[Daemon, StandIn]) -> None:
    d, controller = daemon
    controller.jobs = [job("plans/long")]
    d.wakeups.add("ref:main")
    wait_until(lambda: controller.executed, what="the job to start")
    d.request_stop()
    controller.release.set()
    wait_until(lambda: controller.saw_stop, what="the job to end")
    assert controller.saw_stop == [True]


def test_reload_applies_rules_and_refuses_identity_changes(
    daemon: tuple[Daemon, StandIn], config_file: Path
) -> None:
    d, controller = daemon
    text = config_file.read_text()
    config_file.write_text(text.replace("alice@example.com", "bob@example.com"))
    assert d.reload()
    assert controller.config.approval.approvers == ["bob@example.com"]
    config_file.write_text(text + "identity: {name: other, email: other@x}\n")
    assert not d.reload()
    assert d.config.identity.name == "controller"  # the default, unchanged
    config_file.write_text("nonsense: [\n")
    assert not d.reload()


def test_delayed_reasons_wait_for_company() -> None:
    wakeups = Wakeups()
    try:
        wakeups.add("file:a", delay=30)
        assert wakeups.take(time.monotonic()) == set()
        wakeups.add("ref:main")
        assert wakeups.take(time.monotonic()) == {"file:a", "ref:main"}
        wakeups.add("file:b", delay=0.01)
        assert wakeups.take(time.monotonic() + 1) == {"file:b"}
    finally:
        wakeups.close()


#: In a process of its own (it changes signal masks): a daemon's signals are installed; the
#: main thread blocks SIGTERM and sleeps in a read, so the kernel hands the signal to the
#: worker thread, whose C-level handler takes it in while the Python handler (main thread
#: only) cannot run yet. The worker asks ``stop_requested()`` then, as between two actions.
TAKEN_IN = r"""
import os, signal, sys, threading
from pathlib import Path
from controller.service.daemon import Daemon
from controller.service.sdnotify import Notifier
from controller.settings import load_config

d = Daemon(load_config(Path(sys.argv[1])), notifier=Notifier({}))
d._install_signals()
seen = {}
r, w = os.pipe()
go = threading.Event()

def worker():
    go.wait()
    before = d.stop_requested()
    os.kill(os.getpid(), signal.SIGTERM)  # delivered to this thread: the only one not blocking it
    seen["taken"] = d.stop_requested()
    seen["before"], seen["handler_ran"] = before, bool(d._signals)
    d.wakeups.wait(0)  # the loop's wait: a stop is never drained
    seen["after_wait"] = d.stop_requested()
    os.write(w, b".")

t = threading.Thread(target=worker)
t.start()  # before the mask: the worker keeps SIGTERM unblocked
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
go.set()
os.read(r, 1)  # the main thread sleeps here, SIGTERM blocked: its handler cannot run
t.join()
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
print(seen["before"], seen["taken"], seen["handler_ran"], seen["after_wait"], bool(d._signals))
"""


def test_a_stop_counts_from_when_the_process_takes_the_signal_in(
    config_file: Path, tmp_path: Path
) -> None:
    """A SIGTERM counts for the workers the moment the process takes it in (Python's
    C-level handler, in whichever thread), not once the main thread runs the Python
    handler: a loaded host may schedule that after a worker started the next action (CI,
    2026-12-07, test_abort_wins)."""
    import subprocess
    import sys

    from tests.support.gitenv import ROOT

    script = tmp_path / "taken_in.py"
    script.write_text(TAKEN_IN)
    done = subprocess.run([sys.executable, str(script), str(config_file)], cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    # before: no stop; taken: a stop, its Python handler not run; a wait keeps it; at last
    # the main thread runs the handler
    assert done.stdout.split() == ["False", "True", "False", "True", "True"], done.stdout


def test_a_hangup_is_drained_and_a_stop_behind_it_kept() -> None:
    import signal

    wakeups = Wakeups(stops=frozenset({signal.SIGTERM}))
    try:
        os.write(wakeups.signal_fd, bytes([signal.SIGHUP]))
        assert not wakeups.signalled()
        wakeups.wait(time.monotonic())
        assert wakeups._pending() == b""  # a reload's byte does not wake the loop again
        os.write(wakeups.signal_fd, bytes([signal.SIGHUP, signal.SIGTERM, signal.SIGHUP]))
        assert wakeups.signalled()
        wakeups.wait(time.monotonic() + 60)  # returns at once: stopping
        assert wakeups.signalled()
    finally:
        wakeups.close()
