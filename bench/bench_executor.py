"""Execution engine: a 1,000-action echo plan end to end (journal fsynced, PLAN.yml and
EXECUTION_LOG.md written), and an exec action against a bare ``subprocess.run``.

Targets: the 1,000-action plan in <= 2 s (per-action overhead <= 2 ms including the fsynced
journal; the graph issue tightened it from 10 ms); an exec action at most 10 ms more than a bare
``subprocess.run`` of the same program. Floors measured in the same run: a bare append +
fdatasync of the same journal records; ``subprocess.run`` of the same program.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import median, report, write_plan

from controller import fsutil
from controller.execution.executor import Engine
from controller.plan import plans
from controller.settings import Config, config_from_data

APPROVAL = {"by": "bench@example.com", "commit": "0" * 40}
TRUE = shutil.which("true") or "/bin/true"


def frozen_plan(
    root: Path, actions: int, tools: dict[str, object], text: str | None = None
) -> tuple[Config, Path]:
    data = {"repo": str(root), "tools": tools, "limits": {"max_actions": max(actions, 1)}}
    config = config_from_data(data, root / "plangate.yml")
    plan_file = write_plan(root, actions)
    if text is not None:
        plan_file.write_text(text)
    loaded = plans.load_plan(plan_file, config)
    assert loaded.valid, loaded.problems
    fsutil.write_atomic(plan_file, plans.freeze_text(loaded).text)
    return config, plan_file


def exec_plan_text(actions: int) -> str:
    """``actions`` calls of one exec tool, without params or outputs."""
    head = "plan: {name: exec, task: bench, status: pending_approval}\n"
    head += "available_tools: [{name: run}]\nactions:\n"
    return head + "".join(f"  - {{id: {i}, tool: run, why: step}}\n" for i in range(1, actions + 1))


def run_plan(config: Config, plan_file: Path, state: Path) -> float:
    engine = Engine(config, state_dir=state)
    start = time.perf_counter()
    outcome = engine.run(plan_file, plan_id=str(plan_file.parent.name), approval=APPROVAL)
    elapsed = time.perf_counter() - start
    assert outcome.status == "completed", outcome
    return elapsed


def journal_floor(folder: Path, state: Path, count: int) -> float:
    """Seconds per bare append + fdatasync of the engine's own journal records."""
    records = next(state.rglob("*.jsonl")).read_bytes().splitlines(keepends=True)
    records = [r for r in records if b'"t":"start"' in r or b'"t":"end"' in r][: 2 * count]
    path = folder / "floor.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    start = time.perf_counter()
    for record in records:
        os.write(fd, record)
        os.fdatasync(fd)
    elapsed = time.perf_counter() - start
    os.close(fd)
    return elapsed / len(records)


def bench_echo(root: Path, actions: int, repeat: int) -> None:
    config, plan_file = frozen_plan(root, actions, {"echo": {"kind": "echo"}})
    pristine = plan_file.read_text()
    times = []
    for i in range(repeat):
        plan_file.write_text(pristine)
        times.append(run_plan(config, plan_file, root / f"state{i}"))
    total = median(times)
    per_action = total / actions
    per_record = journal_floor(root, root / "state0", actions)
    log = plan_file.with_name("EXECUTION_LOG.md")
    print(
        f"  PLAN.yml {plan_file.stat().st_size} bytes, EXECUTION_LOG.md {log.stat().st_size} "
        f"bytes, {len(times)} runs"
    )
    report(f"{actions}-action echo plan, end to end", total, 2.0)
    report(
        "per-action overhead (2 fsynced journal records)",
        per_action,
        0.002,
        ("bare fdatasync of one record", per_record),
    )
    report(
        "per-action overhead vs its two records",
        per_action,
        None,
        ("bare fdatasync of both records", 2 * per_record),
    )


def bench_exec(root: Path, actions: int, repeat: int) -> None:
    folder = root / "exec"
    folder.mkdir()
    tools = {"run": {"kind": "exec", "argv": [TRUE]}}
    config, plan_file = frozen_plan(folder, actions, tools, exec_plan_text(actions))
    bare = median([_timed_run() for _ in range(max(repeat * actions, 20))])
    pristine = plan_file.read_text()
    times = []
    for i in range(repeat):
        plan_file.write_text(pristine)
        times.append(run_plan(config, plan_file, folder / f"state{i}") / actions)
    per_action = median(times)
    report(f"floor: bare subprocess.run([{TRUE!r}])", bare)
    report(
        "exec action through the engine (per action)",
        per_action,
        bare + 0.010,
        ("bare subprocess.run", bare),
    )
    print(
        f"  exec action minus bare subprocess.run: {(per_action - bare) * 1000:.2f} ms "
        "(target <= 10 ms)"
    )


def _timed_run() -> float:
    start = time.perf_counter()
    subprocess.run([TRUE], check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    quick = "--quick" in sys.argv
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    # Under the repo, not /tmp: fsync figures on a tmpfs would mean nothing.
    base = Path(__file__).resolve().parent.parent / ".bench-tmp"
    base.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        root = Path(tmp)
        bench_echo(root, 200 if quick else 1000, 1 if quick else 3)
        bench_exec(root, 5 if quick else 20, 1 if quick else 3)
    if not any(base.iterdir()):
        base.rmdir()
    print(json.dumps({"quick": quick}))


if __name__ == "__main__":
    main()
