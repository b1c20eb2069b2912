"""Exactly-once under a burst: one merge approves 30 plans, the daemon is SIGKILLed half way
through them, and a new daemon finishes the rest (issue 17; the 1,000-plan run is in
bench/bench_burst.py).

Each action's tool records every call and has its effect once per key (tests.support.burst).
After the restart every plan is ``completed``, every action's effect happened exactly once,
and an action was called a second time only if it was in doubt at the kill (its start
journaled, its end not): at most one per plan that was running then.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from tests.support.burst import ledger_lab
from tests.support.daemonkit import running_daemon, wait_until

N = 30
CONCURRENCY = 4


def test_sigkill_in_the_middle_of_a_burst_runs_every_action_once(tmp_path: Path) -> None:
    lab = ledger_lab(tmp_path / "lab", N, CONCURRENCY)
    with running_daemon(lab.config) as daemon:
        daemon.wait_event("reconcile.done", 60)
        lab.merge_approvals()
        # some plans done, others started or waiting for a worker
        wait_until(lambda: len(lab.lines("effects.txt")) >= N, 120, "a third of the actions")
        daemon.kill()
    killed_at = len(lab.lines("effects.txt"))
    assert killed_at < 3 * N, "the burst finished before the kill: nothing was tested"

    with running_daemon(lab.config) as daemon:
        deadline = time.monotonic() + 300
        while lab.statuses().get("completed") != N:
            assert time.monotonic() < deadline, f"{lab.statuses()}\n{daemon.text()[-3000:]}"
            time.sleep(1.0)
        assert daemon.stop() == 0

    assert lab.statuses() == {"completed": N}
    assert sorted(lab.lines("effects.txt")) == lab.expected()  # each effect exactly once
    calls = Counter(lab.lines("calls.txt"))
    assert set(calls) == set(lab.expected())
    again = [key for key, count in calls.items() if count > 1]
    # only an action in doubt at the kill runs again, and never a third time
    assert len(again) <= CONCURRENCY, again
    assert all(calls[key] == 2 for key in again)
