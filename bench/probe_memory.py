"""Where the daemon's memory goes during and after a cold first pass (issue 17).

An in-process probe of ``Controller.reconcile()`` on a repo of 1,000 commits then N frozen
plans, 100 per commit (the shape ``bench_daemon.py --rss-plans`` builds, with a short
history), an empty state directory. It reports the RSS (``VmRSS``, ``VmHWM``) and, with
``--trace``, the live Python objects (``tracemalloc``) at the cold scan's peak (just before
the index's reload, ``HistoryIndex._compact``) and after the pass, with the top allocation
sites of each. The repo is kept under ``--cache`` (default /tmp) for the next run.

    python bench/probe_memory.py 20000 --trace
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def status_mb() -> tuple[float, float]:
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def mb(values: tuple[int, int]) -> list[float]:
    return [round(v / 2**20, 1) for v in values]


def top(snapshot: tracemalloc.Snapshot, limit: int, key: str = "lineno") -> None:
    stats = snapshot.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)]).statistics(
        key
    )
    total = sum(s.size for s in stats)
    print(f"  live Python objects: {total / 2**20:.1f} MB")
    for stat in stats[:limit]:
        frame = stat.traceback[0]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        print(f"  {stat.size / 2**20:7.2f} MB {stat.count:9d}  {where}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("plans", type=int, nargs="?", default=20_000)
    parser.add_argument("--trace", action="store_true", help="tracemalloc snapshots too")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument(
        "--phases", action="store_true", help="the RSS's high point in each phase of the pass"
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="plangate-probe-memory-"))
    home = work / "home"
    home.mkdir()
    os.environ.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=str(home / "gc"))
    (home / "gc").write_text("[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n")
    import shutil

    from bench_daemon import build_repo, write_config

    from tests.support.gitenv import ALICE

    cached = args.cache / f"plangate-probe-repo-{args.plans}"
    if not (cached / ".git").exists():
        shutil.rmtree(cached, ignore_errors=True)
        build_repo(cached, 1000, [f"p{i:05d}" for i in range(args.plans)])
    repo = work / "repo"
    shutil.copytree(cached, repo, symlinks=True)
    config_path = write_config(
        work,
        f"        repo: {repo}\n"
        f"""        approval: {{approvers: ["{ALICE[1]}"]}}\n"""
        "        tools: {greet: {kind: echo}}\n",
    )
    from controller.git import history
    from controller.service.reconcile import Controller
    from controller.settings.loading import load_config

    gc.collect()
    print(f"{args.plans} plans; before the pass: RSS {status_mb()[0]:.1f} MB", flush=True)
    compact = history.HistoryIndex._compact

    def probed(self: history.HistoryIndex) -> None:
        scanning.clear()
        rss, hwm = status_mb()
        if peak:
            print("at the scan's traced peak (the last snapshot 4 MB past the one before):")
            top(peak[0], args.top)
        print(f"before the reload (the scan's end): RSS {rss:.1f} MB, peak {hwm:.1f} MB")
        if args.trace:
            print(f"  tracemalloc: now / peak so far {mb(tracemalloc.get_traced_memory())} MB")
            top(tracemalloc.take_snapshot(), args.top)
            tracemalloc.reset_peak()
        compact(self)
        if args.trace:
            print(
                "  after the reload: tracemalloc now / peak in it",
                f"{mb(tracemalloc.get_traced_memory())} MB",
            )
            tracemalloc.reset_peak()

    history.HistoryIndex._compact = probed  # type: ignore[method-assign]
    phase = ["walk and apply"]
    highs: dict[str, float] = {}
    if args.phases:  # a thread reads VmRSS every 10 ms; each phase keeps its highest
        from controller.git.indexstore import IndexStore

        def phased(name: str, method: Any) -> Any:
            def run(self: Any, *a: Any, **k: Any) -> Any:
                before, phase[0] = phase[0], name
                try:
                    return method(self, *a, **k)
                finally:
                    phase[0] = before if name != "reload" else "rest of the pass"

            return run

        IndexStore.save = phased("save", IndexStore.save)  # type: ignore[method-assign]
        history.HistoryIndex._compact = phased("reload", history.HistoryIndex._compact)  # type: ignore[method-assign]

        def sample() -> None:
            while True:
                rss = status_mb()[0]
                highs[phase[0]] = max(highs.get(phase[0], 0.0), rss)
                time.sleep(0.01)

        threading.Thread(target=sample, daemon=True).start()
    peak: list[tracemalloc.Snapshot] = []
    scanning = threading.Event()
    if args.trace:
        tracemalloc.start(1)
        scanning.set()

        def watch() -> None:  # a snapshot each time the traced memory grows 4 MB past its best
            best = 0
            while scanning.is_set():
                now = tracemalloc.get_traced_memory()[0]
                if now > best + 4 * 2**20:
                    best = now
                    peak[:] = [tracemalloc.take_snapshot()]
                time.sleep(0.05)

        threading.Thread(target=watch, daemon=True).start()
    controller = Controller(load_config(config_path))
    started = time.perf_counter()
    cpu = time.process_time()
    controller.reconcile()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    history.release_memory()
    rss, hwm = status_mb()
    print(
        f"after the pass ({wall:.1f} s wall, {cpu:.1f} s CPU): RSS {rss:.1f} MB, peak {hwm:.1f} MB"
    )
    for name, high in highs.items():
        print(f"  RSS high in {name}: {high:.1f} MB")
    if args.trace:
        print(
            f"  tracemalloc: now / peak since the reload {mb(tracemalloc.get_traced_memory())} MB"
        )
        top(tracemalloc.take_snapshot(), args.top)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
