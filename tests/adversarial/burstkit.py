"""The burst labs of rounds 65-66 (many plans through one pass or one daemon, and what a
forged record, a SIGKILL or a restored state directory does to them), played here.

A lab dates its commits and passes on a clock of its own that moves 10 s a step
(:func:`date_steps`); its agent's plans are one-action ``rec`` plans and two-action ones
(:func:`gated`: the second behind ``requires_approval``; :func:`two`). A record that only
looks like the controller's is committed under its name (:func:`bot_commit`, a batched
message from :func:`batch_message`). The daemon of part B runs in a session of its own
(:func:`daemon`) until it has made enough calls (:meth:`Daemon.wait_for_calls`), then is
killed; :meth:`Daemon.ran` names what ran by then. A
module keeps its variants, its story, its ``BROKEN`` entries and its assertions;
:func:`status_row` and :func:`findings_of` read the reports for them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from advkit import BOT, Lab


def gated(tag: str) -> str:
    """The agent's plan ``tag``: ``rec`` tagged ``<tag>-1``, then ``<tag>-2`` (target
    ``staging``) behind ``requires_approval``."""
    return (
        f'plan:\n  name: "{tag}"\n  task: "agent task {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n"
        f'  - id: 1\n    tool: rec\n    why: "first {tag}"\n    params: {{tag: "{tag}-1"}}\n'
        f'  - id: 2\n    tool: rec\n    why: "second {tag}"\n    requires_approval: true\n'
        f'    params: {{tag: "{tag}-2", target: "staging"}}\n'
    )


def two(tag: str) -> str:
    """The agent's plan ``tag``: ``rec`` tagged ``<tag>-1``, then ``<tag>-2``, no gate."""
    return (
        f'plan:\n  name: "{tag}"\n  task: "agent task {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n"
        f'  - id: 1\n    tool: rec\n    why: "first {tag}"\n    params: {{tag: "{tag}-1"}}\n'
        f'  - id: 2\n    tool: rec\n    why: "second {tag}"\n    params: {{tag: "{tag}-2"}}\n'
    )


def date_steps(lab: Lab, start: int) -> Callable[[], None]:
    """A step of the lab's clock: each call moves it (from ``start``, epoch seconds) 10 s on
    and dates the lab's commits and passes by it (``lab.git_date``)."""
    t = start

    def date() -> None:
        nonlocal t
        t += 10
        lab.git_date = f"@{t} +0000"

    return date


def batch_message(groups: list[tuple[str, str, str]]) -> str:
    """A batched commit message as the controller writes one: a group per ``(slug, event,
    status)`` (an ``abort`` claims Alice as its aborter), then a ``Controller:`` trailer."""
    body = f"plangate: {len(groups)} plan events\n\n"
    for slug, event, status in groups:
        body += f"Plan: plans/{slug}\nPlan-Event: {event}\nPlan-Status: {status}\n"
        if event == "abort":
            body += "Aborted-By: alice@example.com\n"
    return body + "Controller: host/3f2a9c1b\n"


def bot_commit(lab: Lab, message: str) -> str:
    """Everything in the tree committed under the controller's name (author and committer
    :data:`advkit.BOT`), by someone who is not the controller: the new tip."""
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", message, who=BOT)
    return lab.head()


def log_lines(lab: Lab) -> int:
    """How many calls the recording tool's log holds."""
    return len(lab.log.read_text().splitlines())


class Daemon:
    """A daemon's run over a lab (:func:`daemon`): its process, and the calls the recording
    tool's log held when it started (``before``)."""

    def __init__(self, lab: Lab, before: int, proc: subprocess.Popen[bytes]) -> None:
        self.lab = lab
        self.before = before
        self.proc = proc

    def wait_for_calls(self, count: int, seconds: float) -> None:
        """Until it has made ``count`` calls, or ``seconds`` have passed."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if log_lines(self.lab) >= self.before + count:
                break
            time.sleep(0.01)

    def ran(self) -> list[str]:
        """The tags of the calls recorded since it started."""
        lines = self.lab.log.read_text().splitlines()[self.before :]
        return [json.loads(x)["argv"][0] for x in lines]


@contextlib.contextmanager
def daemon(lab: Lab, cwd: Path) -> Iterator[Daemon]:
    """``plangate run --config`` (the lab's) as a daemon in a session of its own, in
    ``cwd``; killed (SIGKILL, mid-burst as a crash) after."""
    before = log_lines(lab)
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield Daemon(lab, before, proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def status_row(text: str, slug: str) -> dict[str, Any]:
    """The row of ``plans/<slug>`` in ``plangate status --json`` output ``text`` (or ``{}``)."""
    rows = {r["plan"]: r for r in json.loads(text)}
    return rows.get(f"plans/{slug}") or {}


def findings_of(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    """The findings of ``plans/<slug>`` in a ``plangate audit --json`` report."""
    return [f for f in report.get("findings", []) if f.get("plan") == f"plans/{slug}"]
