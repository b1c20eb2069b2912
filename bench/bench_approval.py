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

PLAN = """\
plan:
  name: "plan {n}"
  task: "benchmark plan number {n}"
  status: {status}
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: "say hello"
    params:
      who: "world {n}"
"""
AGENT = "Agent <agent@example.com>"
ALICE = "Alice <alice@example.com>"
BOT = "plangate <plangate@localhost>"


class Stream:
    """Writes a git fast-import stream of commits on main."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.mark = 0
        self.time = 1_700_000_000

    def commit(self, who: str, message: str, files: dict[str, str]) -> None:
        self.mark += 1
        self.time += 1
        msg = message.encode()
        head = (
            f"commit refs/heads/main\nmark :{self.mark}\n"
            f"author {who} {self.time} +0000\ncommitter {who} {self.time} +0000\n"
            f"data {len(msg)}\n"
        ).encode()
        body = [head, msg, b"\n"]
        if self.mark > 1:
            body.append(f"from :{self.mark - 1}\n".encode())
        for path, text in files.items():
            data = text.encode()
            body += [f"M 100644 inline {path}\ndata {len(data)}\n".encode(), data, b"\n"]
        self.parts.append(b"".join(body) + b"\n")


_HASHES: dict[int, str] = {}


def frozen(n: int, status: str, extra: str = "") -> str:
    text = PLAN.format(n=n, status=status)
    if n not in _HASHES:  # the status is not hashed: one parse per plan
        _HASHES[n] = hashing.plan_hash(yamlio.read_yaml(text).data)
    digest = _HASHES[n]
    return text + f"frozen:\n  hash: {digest}\n  at: '2026-01-01T00:00:00Z'\n" + extra


def trailers(n: int, status: str) -> str:
    return f"\n\nPlan: plans/p{n}\nPlan-Status: {status}\n"


def build(repo: Path, commits: int, plan_count: int, pending: int) -> None:
    stream = Stream()
    stream.commit(AGENT, "initial", {"README": "bench\n"})
    executed = max(0, min(plan_count - pending, (commits - 1 - 2 * plan_count) // 3))
    for n in range(plan_count):
        path = f"plans/p{n}/PLAN.yml"
        stream.commit(AGENT, f"add p{n}", {path: PLAN.format(n=n, status="pending_approval")})
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
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(stream.parts), check=True
    )
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=repo, check=True)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def approve(repo: Path, n: int) -> float:
    """The human's approving commit; returns the wall time of the bare `git commit`."""
    path = repo / f"plans/p{n}/PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    git(repo, "add", f"plans/p{n}/PLAN.yml")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Alice",
        "GIT_AUTHOR_EMAIL": "alice@example.com",
        "GIT_COMMITTER_NAME": "Alice",
        "GIT_COMMITTER_EMAIL": "alice@example.com",
    }
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
    try:
        repo = root / "repo"
        start = time.perf_counter()
        if args.prebuilt:
            shutil.copytree(args.prebuilt, repo, symlinks=True)
            shutil.rmtree(repo / ".git" / "plangate", ignore_errors=True)  # a cold start
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
