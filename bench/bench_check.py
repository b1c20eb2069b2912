"""``plangate check`` on a pull request that touches 100 plans: the whole process, as CI runs it.

A repo of 5,000 commits and 1,000 frozen plans (``--quick``: 500 commits, 200 plans) under a
quorum policy (2 from ops, 1 from security for high-risk plans); a branch whose one commit
sets 100 of them ``approved``; ``plangate check --as ... --format json`` timed from process
start to exit (median of 5; target 2 s). Floors, measured in the same run: the process
startup alone (``plangate --version``) and ``git merge-tree`` of the same range.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
from _common import median, report  # noqa: E402
from bench_daemon import ALICE, build_repo, git, who  # noqa: E402

from tests.support.quorumkit import CAROL, quorum_policy  # noqa: E402

CONFIG = quorum_policy()


def timed(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run(args, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1):
        raise SystemExit(f"{args[3:]} failed: {result.stderr.decode()[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller repo")
    args = parser.parse_args()
    commits, n_plans = (500, 200) if args.quick else (5_000, 1_000)
    work = Path(tempfile.mkdtemp(prefix="plangate-bench-check-"))
    home = work / "home"
    home.mkdir()
    os.environ.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=str(home / "gc"))
    (home / "gc").write_text("[commit]\n\tgpgsign = false\n")
    try:
        repo = work / "repo"
        names = [f"p{i:05d}" for i in range(n_plans)]
        built = build_repo(repo, commits, names)
        print(f"repo: {commits} commits + {n_plans} frozen plans, built in {built:.1f} s")
        config = work / "plangate.yml"
        config.write_text(json.dumps({"repo": str(repo), **CONFIG}))
        git(repo, "switch", "-q", "-c", "review")
        for name in names[:100]:
            path = repo / "plans" / name / "PLAN.yml"
            text = path.read_text()
            path.write_text(text.replace("status: pending_approval", "status: approved"))
        git(repo, "commit", "-q", "-am", "approve 100 plans", env=who(*ALICE))
        git(repo, "switch", "-q", "main")
        cli = [sys.executable, "-m", "controller", "--config", str(config)]
        check = [*cli, "check", "--base", "main", "--head", "review", "--as",
                 CAROL[1], "--format", "json"]  # fmt: skip
        out = subprocess.run(check, cwd=repo, capture_output=True, check=False).stdout
        found = json.loads(out)["plans"]
        assert len(found) == 100 and {p["outcome"] for p in found} == {"partial"}, found[:1]
        startup = median([timed([*cli, "--version"], repo) for _ in range(5)])
        merge_tree = median(
            [timed(["git", "merge-tree", "--write-tree", "main", "review"], repo) for _ in range(5)]
        )
        report("process startup (plangate --version)", startup)
        report("git merge-tree of the range", merge_tree)
        whole = median([timed(check, repo) for _ in range(5)])
        report("check, PR touching 100 plans (median of 5)", whole, 2.0, ("startup", startup))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
