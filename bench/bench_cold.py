"""Cold start alone on bench_approval.py's history-heavy repo, built once and kept.

``python bench/bench_cold.py [--repo DIR]`` builds the 50,000-commit repo into DIR when it
is not there yet (``--quick``: 5,000 commits; DIR defaults to a folder under
``$XDG_CACHE_HOME``, kept between runs: the build takes minutes), then copies it (hard
links for the objects) to a scratch folder and times one ``Controller.reconcile()`` on an
empty state directory: wall time, CPU of this process and of its children (git, the
parsing processes), the load average, and its ratio to a floor timed in the same run: git
itself listing the plan changes of the same first-parent history (``git log --raw``).
``--tree PATH`` imports the controller from another checkout (pairs against an older tree
with one interpreter).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import logging
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", type=Path, help="the kept repo (built if absent)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tree", type=Path, default=HERE.parent, help="checkout to import")
    parser.add_argument(
        "--scan-only",
        action="store_true",
        help="time the history index's cold scan alone (no state directory, no store import)",
    )
    args = parser.parse_args()
    if args.repo is None:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        args.repo = cache / "plangate-bench" / ("cold-quick" if args.quick else "cold")
        args.repo.parent.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(args.tree.resolve()))
    import structlog
    from _common import report

    import controller
    from controller.service.reconcile import Controller
    from controller.settings import config_from_data

    # after the controller: bench_approval's own sys.path entry must not win
    bench_approval = importlib.import_module("bench_approval")

    print(f"controller from {Path(controller.__file__).parent}", flush=True)

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    root = Path(tempfile.mkdtemp(prefix="bench-cold-"))
    os.environ.setdefault("GIT_CONFIG_GLOBAL", str(root / "gitconfig"))
    os.environ.update(HOME=str(root / "home"), XDG_STATE_HOME=str(root / "home/state"))
    os.environ.pop("STATE_DIRECTORY", None)
    try:
        if not (args.repo / ".git").exists():
            commits, plans = (5_000, 1_000) if args.quick else (50_000, 10_000)
            bench_approval.build(args.repo, commits, plans, pending=6 if args.quick else 16)
            print(f"built {args.repo}", flush=True)
        repo = root / "repo"
        shutil.copytree(args.repo, repo, symlinks=True, copy_function=os.link)
        subprocess.run(["git", "-C", str(repo), "status", "-s"], capture_output=True, check=True)
        config = config_from_data(
            {
                "repo": str(repo),
                "approval": {"approvers": ["alice@example.com"]},
                "tools": {"greet": {"kind": "echo"}},
            },
            root / "plangate.yml",
        )
        if args.scan_only:
            from controller.git.gitrepo import GitRepo
            from controller.git.history import config_index

            gitrepo = GitRepo(repo)
            index = config_index(config, root / "signers", lambda: None, gitrepo)
            head = gitrepo.run("rev-parse", "HEAD").strip()
            run = functools.partial(index.scan, gitrepo, head)
        else:
            ctl = Controller(config)
            run = ctl.reconcile
        load = os.getloadavg()[0]
        s0, c0 = (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
        start = time.perf_counter()
        run()
        wall = time.perf_counter() - start
        s1, c1 = (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
        own = s1.ru_utime + s1.ru_stime - s0.ru_utime - s0.ru_stime
        kids = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
        what = "cold scan" if args.scan_only else "cold start"
        print(
            f"{what} {args.tree.resolve().name}: wall {wall:.2f} s  self {own:.2f} s  "
            f"children {kids:.2f} s  cpu {own + kids:.2f} s  "
            f"load {load:.1f}->{os.getloadavg()[0]:.1f}",
            flush=True,
        )
        if not args.scan_only:
            ctl.close()
        floor_start = time.perf_counter()
        subprocess.run(
            ["git", "-C", str(repo), "log", "--first-parent", "--raw", "--no-renames",
             "--format=%H", "HEAD", "--", "plans"],
            stdout=subprocess.DEVNULL,
            check=True,
        )  # fmt: skip
        floor = time.perf_counter() - floor_start
        report("floor: git log --raw of the plans folder's history", floor)
        report(what, wall, None, ("git log --raw", floor))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
