"""Approvals at scale: a 50,000-commit repo with 10,000 plans (built with git fast-import).

Targets from the approvals issue:
- incremental: one new commit that approves a plan, processed through the controller's start
  commit (``Controller.reconcile()``), <= 100 ms; reported with its ratio to the floor, a bare
  ``git commit`` of the same approving change measured in the same run;
- cold start (empty state directory: the whole history scanned and indexed) <= 60 s.

``--quick``: 5,000 commits and 1,000 plans.
"""

from __future__ import annotations

import argparse
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
from _common import median, report

from controller.plan import hashing, yamlio
from controller.service.reconcile import Controller
from controller.settings import config_from_data
from controller.settings.models import default_state_dir
from tests.support.fastimport import FastImport, build_repo
from tests.support.gitenv import AGENT, ALICE, BOT, identity
from tests.support.plantext import greet_plan

_HASHES: dict[int, str] = {}


def frozen(n: int, status: str, extra: str = "") -> str:
    text = plan(n, status)
    if n not in _HASHES:  # the status is not hashed: one parse per plan
        _HASHES[n] = hashing.plan_hash(yamlio.read_yaml(text).data)
    digest = _HASHES[n]
    return text + f"frozen:\n  hash: {digest}\n  at: '2026-01-01T00:00:00Z'\n" + extra


def plan(n: int, status: str) -> str:
    return greet_plan(f"plan {n}", f"benchmark plan number {n}", f'"world {n}"', status)


def trailers(n: int, status: str) -> str:
    return f"\n\nPlan: plans/p{n}\nPlan-Status: {status}\n"


def build(repo: Path, commits: int, plan_count: int, pending: int) -> None:
    stream = FastImport()
    stream.commit(AGENT, "initial", {"README": "bench\n"})
    executed = max(0, min(plan_count - pending, (commits - 1 - 2 * plan_count) // 3))
    for n in range(plan_count):
        path = f"plans/p{n}/PLAN.yml"
        stream.commit(AGENT, f"add p{n}", {path: plan(n, "pending_approval")})
        stream.commit(
            BOT,
            f"plangate: freeze plans/p{n}" + trailers(n, "pending_approval"),
            {path: frozen(n, "pending_approval")},
        )
        if n < executed:
            stream.commit(ALICE, f"approve p{n}", {path: frozen(n, "approved")})
            approval = "approval: {status: approved, by: alice@example.com}\n"
            stream.commit(
                BOT,
                f"plangate: start plans/p{n}" + trailers(n, "executing"),
                {path: frozen(n, "executing", approval)},
            )
            stream.commit(
                BOT,
                f"plangate: complete plans/p{n}" + trailers(n, "completed"),
                {
                    path: frozen(n, "completed", approval + "execution: {status: completed}\n"),
                    f"plans/p{n}/EXECUTION_LOG.md": f"# p{n}\n",
                },
            )
    filler = 0
    while stream.mark < commits:
        filler += 1
        stream.commit(AGENT, f"notes {filler}", {f"notes/n{filler % 500}.txt": f"{filler}\n"})
    build_repo(repo, stream)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def approve(repo: Path, n: int) -> float:
    """The human's approving commit; returns the wall time of the bare `git commit`."""
    path = repo / f"plans/p{n}/PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    git(repo, "add", f"plans/p{n}/PLAN.yml")
    env = {**os.environ, **identity(*ALICE)}
    start = time.perf_counter()
    subprocess.run(["git", "commit", "-q", "-m", f"approve p{n}"], cwd=repo, env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--prebuilt", type=Path, help="copy this repo instead of building one")
    args = parser.parse_args()
    commits, plan_count, rounds = (5_000, 1_000, 5) if args.quick else (50_000, 10_000, 15)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    root = Path(tempfile.mkdtemp(prefix="bench-approval-"))
    os.environ.setdefault("GIT_CONFIG_GLOBAL", str(root / "gitconfig"))
    # the state directory (under $HOME/.local/state) goes with the run, never the user's
    os.environ.update(HOME=str(root / "home"), XDG_STATE_HOME=str(root / "home/state"))
    os.environ.pop("STATE_DIRECTORY", None)
    try:
        repo = root / "repo"
        start = time.perf_counter()
        if args.prebuilt:
            shutil.copytree(args.prebuilt, repo, symlinks=True)
            shutil.rmtree(default_state_dir(repo), ignore_errors=True)  # a cold start
        else:
            build(repo, commits, plan_count, pending=rounds + 1)
        count = subprocess.run(
            ["git", "rev-list", "--count", "main"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        print(
            f"built {count} commits, {plan_count} plans in {time.perf_counter() - start:.1f} s",
            flush=True,
        )
        config = config_from_data(
            {
                "repo": str(repo),
                "approval": {"approvers": ["alice@example.com"]},
                "tools": {"greet": {"kind": "echo"}},
            },
            root / "plangate.yml",
        )
        ctl = Controller(config)
        start = time.perf_counter()
        ctl.reconcile()
        report("cold start (empty state dir, full scan)", time.perf_counter() - start, 60.0)
        floors, costs = [], []
        for i in range(rounds):
            n = plan_count - 1 - i
            floors.append(approve(repo, n))
            start = time.perf_counter()
            jobs = ctl.reconcile()
            costs.append(time.perf_counter() - start)
            assert f"plans/p{n}" in [j.plan_id for j in jobs], jobs
        floor = median(floors)
        report("floor: bare `git commit` of the approval", floor)
        report(
            "approving commit -> start commit (median)", median(costs), 0.100, ("git commit", floor)
        )
        report("approving commit -> start commit (max)", max(costs))
        ctl.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
