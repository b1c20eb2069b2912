"""CLI start-up: `plangate --help` and `plangate validate` of a 10-action plan, whole processes.

Targets from issue 17: <= 60 ms and <= 150 ms (median). The floor, a bare `python -c pass`
of the same interpreter, is measured in the same run, interleaved with the commands (floor,
help, validate, ... round after round) so that a machine getting busier moves all of them.
Each figure is the median wall time and the median CPU time (user + sys of the process,
from wait4), with its ratio to the floor's; on a shared machine CPU is what a run costs.

The package's bytecode is compiled first (as `pip install` does): with
PYTHONDONTWRITEBYTECODE set, an editable checkout would otherwise compile every module on
every start. Also measured: `validate` with a config (the config models are built).
"""

from __future__ import annotations

import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from _common import write_plan  # noqa: E402


def plangate() -> list[str]:
    """The installed entry point (what a user runs), else ``python -m controller``."""
    script = Path(sys.executable).parent / "plangate"
    return [str(script)] if script.exists() else [sys.executable, "-m", "controller"]


def run_once(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, cpu) seconds of one whole process; its output is read and dropped."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # grown by exactly this process
    if proc.returncode != 0:
        raise SystemExit(f"{argv[1:]} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def measure(commands: dict[str, list[str]], cwd: Path, rounds: int) -> dict[str, list[float]]:
    """Per command: the wall times and CPU times of ``rounds`` runs, interleaved."""
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for argv in commands.values():  # one warm-up each (page cache, bytecode)
        run_once(argv, cwd)
    for _ in range(rounds):
        for name, argv in commands.items():
            wall, cpu = run_once(argv, cwd)
            walls[name].append(wall)
            cpus[name].append(cpu)
    found = {f"{n} wall": v for n, v in walls.items()}
    return found | {f"{n} cpu": v for n, v in cpus.items()}


def main() -> int:
    quick = "--quick" in sys.argv
    rounds = 5 if quick else 21
    compileall.compile_dir(ROOT / "controller", quiet=1)
    cli = plangate()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        plan = write_plan(root, 10)  # plans/bench10/PLAN.yml in a git repo: no warning
        # outside the working folder: a ./plangate.yml is read by every command, so `validate`
        # would be measured with a config too (the case of `validate+config`)
        config = Path(tmp) / "plangate.yml"
        config.write_text("tools:\n  echo: {kind: echo}\n")
        commands = {
            "floor": [sys.executable, "-c", "pass"],
            "help": [*cli, "--help"],
            "validate": [*cli, "validate", str(plan)],
            "validate+config": [*cli, "validate", "--config", str(config), str(plan)],
        }
        found = measure(commands, root, rounds)
    print(f"{rounds} interleaved runs each, median; {' '.join(cli)}", flush=True)
    targets = {"help": 0.060, "validate": 0.150}
    floor_wall = statistics.median(found["floor wall"])
    floor_cpu = statistics.median(found["floor cpu"])
    print(f"{'floor: bare `python -c pass`':<40} {floor_wall * 1e3:7.1f} ms wall "
          f"{floor_cpu * 1e3:7.1f} ms cpu")  # fmt: skip
    for name in ("help", "validate", "validate+config"):
        wall = statistics.median(found[f"{name} wall"])
        cpu = statistics.median(found[f"{name} cpu"])
        line = (
            f"{name:<40} {wall * 1e3:7.1f} ms wall {cpu * 1e3:7.1f} ms cpu"
            f"   ratio to floor: {wall / floor_wall:.2f}x wall, {cpu / floor_cpu:.2f}x cpu"
        )
        if name in targets:
            target = targets[name]
            line += f"   target <= {target * 1e3:.0f} ms  {'OK' if wall <= target else 'OVER'}"
        print(line, flush=True)
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set; the bytecode was compiled beforehand")
    return 0


if __name__ == "__main__":
    sys.exit(main())
