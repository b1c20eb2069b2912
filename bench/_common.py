"""Helpers shared by the benchmarks: timing, floors, a plan generator, report lines."""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall seconds of each of ``repeat`` calls."""
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def median(values: list[float]) -> float:
    return statistics.median(values)


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def spawn_floor(repeat: int) -> float:
    """Median wall time of a bare ``python -c pass`` (the interpreter's own start-up)."""
    return median(timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), repeat))


def report(
    name: str, seconds: float, target: float | None = None, floor: tuple[str, float] | None = None
) -> None:
    line = f"{name:<48} {seconds * 1000:9.1f} ms"
    if target is not None:
        line += f"   target <= {target * 1000:.0f} ms  {'OK' if seconds <= target else 'OVER'}"
    if floor is not None:
        line += f"   ratio to {floor[0]}: {seconds / floor[1]:.2f}x"
    print(line, flush=True)


def plan_text(actions: int) -> str:
    """A valid plan of ``actions`` echo actions, each using the previous one's output."""
    lines = [
        "plan:",
        '  name: "bench"',
        '  task: "benchmark plan"',
        "  status: pending_approval",
        "inputs:",
        "  start: 1",
        "available_tools:",
        "  - name: echo",
        "actions:",
    ]
    for i in range(1, actions + 1):
        value = '"$<inputs.start>"' if i == 1 else f'"$<actions[{i - 1}].outputs.value>"'
        lines += [
            f"  - id: {i}",
            "    tool: echo",
            f'    why: "step {i}"',
            "    params:",
            f"      value: {value}",
            f'      note: "step {i} of {actions}"',
            "    outputs:",
            "      - name: value",
            '        path: "$.value"',
        ]
    return "\n".join(lines) + "\n"


def write_plan(folder: Path, actions: int) -> Path:
    path = folder / "plans" / f"bench{actions}" / "PLAN.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(plan_text(actions))
    return path


def profiler(daemon: Any, out: Path | None) -> subprocess.Popen[bytes] | None:
    """``--profile``: py-spy (if on PATH) records the daemon (a ``DaemonProcess``) until
    :func:`stop_profiler`; ``BENCH_SPY_GIL=1``: only the thread holding the GIL;
    ``BENCH_SPY_IDLE=1``: wall time by thread, waits included; ``BENCH_SPY_RATE``: samples
    a second (50)."""
    spy = shutil.which("py-spy")
    if out is None or spy is None:
        return None
    rate = os.environ.get("BENCH_SPY_RATE", "50")
    argv = [spy, "record", "-r", rate, "-f", "raw", "-o", str(out), "--pid", str(daemon.proc.pid)]
    if os.environ.get("BENCH_SPY_GIL"):
        argv.append("--gil")  # only the thread holding the GIL: where the CPU-bound time goes
    argv += ["--threads", "--idle"] if os.environ.get("BENCH_SPY_IDLE") else []  # wall, by thread
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_profiler(spy: subprocess.Popen[bytes] | None) -> None:
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait(60)
