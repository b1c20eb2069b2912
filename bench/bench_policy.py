"""What the approval policy (SPEC §11) adds to deciding an approval, in-process.

One frozen plan and one approving commit in a real repo; the controller's decision
(:func:`controller.approval.verdicts.decide`: the §5 facts from git, the plan's profile, the
rule, the quorum tally) timed 200 times under the default policy (the floor: the same
decision as before policies existed) and under a group rule that matches the plan. Target:
the policy adds at most 5 ms (median) to approval -> first action; ``bench_daemon.py
--policy`` measures the same through the real daemon, where machine noise is larger than
the difference.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
from _common import report  # noqa: E402
from bench_daemon import AGENT, ALICE, frozen_plan, git, who  # noqa: E402

from controller.approval import approvals, verdicts  # noqa: E402
from controller.git.gitrepo import GitRepo  # noqa: E402
from controller.git.history import HistoryIndex, build_request  # noqa: E402
from controller.plan import plans  # noqa: E402
from controller.settings import config_from_data  # noqa: E402

RULE = {
    "groups": {"ops": [ALICE[1]]},
    "rules": [{"match": {"risk": "low"}, "require": [{"group": "ops", "count": 1}]}],
}


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="plangate-bench-policy-"))
    os.environ.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=str(work / "gc"))
    try:
        repo = work / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        path = repo / "plans" / "p" / "PLAN.yml"
        path.parent.mkdir(parents=True)
        path.write_bytes(frozen_plan("p"))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "add", env=who(*AGENT))
        path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
        git(repo, "commit", "-q", "-am", "approve", env=who(*ALICE))
        base = {"repo": str(repo), "tools": {"greet": {"kind": "echo"}}}
        plain = config_from_data({**base, "approval": {"approvers": [ALICE[1]]}})
        ruled = config_from_data({**base, "approval": {"approvers": [ALICE[1]], **RULE}})
        gitrepo = GitRepo(repo)
        index = HistoryIndex(None, plans_dir="plans", controller_email="plangate@localhost")
        index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
        state = index.plans["plans/p"]
        figures = {}

        def check(data: bytes) -> tuple[tuple[str, ...], str | None]:
            loaded = plans.validate_text(data.decode(), Path(state.file), plain)
            return tuple(p.code for p in loaded.problems), loaded.hash

        for name, config in (("default", plain), ("rule", ruled)):
            times = []
            for _ in range(200):
                start = time.perf_counter()
                _, verdict = verdicts.decide(state, gitrepo, config, check, verified_at=0)
                times.append(time.perf_counter() - start)
                assert verdict.outcome == "start"
            figures[name] = statistics.median(times)
        times = []
        for _ in range(200):  # the floor: the decision as it was before §11 (one approver)
            start = time.perf_counter()
            request = build_request(
                state, gitrepo, check, require_signed=False, allowed_signers=None, verified_at=0
            )
            assert approvals.verify_approval(request, plain.approval).valid
            times.append(time.perf_counter() - start)
        floor = statistics.median(times)
        report("decision before policies: build_request + verify", floor)
        report("decision, default policy (median of 200)", figures["default"], None,
               ("before policies", floor))  # fmt: skip
        report("decision, group rule (median of 200)", figures["rule"], None,
               ("before policies", floor))  # fmt: skip
        added = figures["rule"] - floor
        print(
            f"{'policy adds to the decision (median)':<48} {added * 1000:9.2f} ms"
            f"   target <= 5 ms  {'OK' if added <= 0.005 else 'OVER'}"
        )
        gitrepo.close()
        index.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
