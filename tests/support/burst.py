"""A burst of plans whose actions leave a trace: the SIGKILL test and the burst benchmark.

:func:`ledger_lab` builds a repository holding ``n`` frozen plans of three ``exec`` actions,
and a branch ``approvals`` that approves them all in one commit (merge it to start the burst).
The tool is idempotent the way real tools are, by a key: every call is appended to
``calls.txt``; the effect (``effects.txt``) happens once per key (plan, action), however often
the tool is called. So ``effects.txt`` shows exactly-once, and ``calls.txt`` shows every time
the controller ran an action: more than once only for an action in doubt at a crash.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from controller.plan import plans
from controller.settings import config_from_data
from tests.support.fastimport import FastImport, build_repo
from tests.support.gitenv import AGENT, ALICE, ROOT, git
from tests.support.gitenv import identity as who

TOOL = """\
#!/bin/sh
echo "$1 $2" >> "$3/calls.txt"
if mkdir "$3/keys/$1-$2" 2>/dev/null; then echo "$1 $2" >> "$3/effects.txt"; fi
"""


@dataclass
class Lab:
    base: Path
    repo: Path
    config: Path
    names: list[str]

    def merge_approvals(self) -> None:
        git(self.repo, "merge", "-q", "--no-ff", "-m", "approve all", "approvals", env=who(*ALICE))

    def lines(self, name: str) -> list[str]:
        path = self.base / name
        return path.read_text().splitlines() if path.exists() else []

    def expected(self) -> list[str]:
        return sorted(f"{name} {i}" for name in self.names for i in (1, 2, 3))

    def statuses(self) -> dict[str, int]:
        """How many plans are in each status, as ``plangate status --json`` says."""
        argv = [
            sys.executable,
            "-m",
            "controller",
            "status",
            "--json",
            "--config",
            str(self.config),
        ]
        out = subprocess.run(
            argv, check=True, capture_output=True, text=True, cwd=ROOT, env=_env()
        ).stdout
        return dict(Counter(p["status"] for p in json.loads(out)))


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT)}


def ledger_lab(base: Path, n: int, concurrency: int = 4) -> Lab:
    """``n`` frozen plans (``k0000``...) of three calls of the ledger tool; their approvals
    on the branch ``approvals``."""
    base.mkdir(parents=True, exist_ok=True)
    (base / "keys").mkdir()
    tool = base / "mark.sh"
    tool.write_text(TOOL)
    tool.chmod(0o755)
    repo = base / "repo"
    data = {
        "repo": str(repo),
        "state_dir": str(base / "state"),
        "approval": {"approvers": [ALICE[1]]},
        "tools": {
            "mark": {
                "kind": "exec",
                "argv": [str(tool), "{plan}", "{step}", str(base)],
                "idempotent": True,
            }
        },
        "execution": {"max_concurrent_plans": concurrency},
    }
    config = base / "plangate.yml"
    config.write_text(json.dumps(data))  # JSON is YAML
    loaded_config = config_from_data(data, config)
    names = [f"k{i:04d}" for i in range(n)]
    files = {}
    for name in names:
        text = f"plan: {{name: {name}, task: ledger, status: pending_approval}}\n"
        text += "available_tools: [{name: mark}]\nactions:\n"
        text += "".join(
            f"  - {{id: {i}, tool: mark, why: mark, params: {{plan: {name}, step: '{i}'}}}}\n"
            for i in (1, 2, 3)
        )
        path = f"plans/{name}/PLAN.yml"
        loaded = plans.validate_text(text, Path(path), loaded_config)
        assert loaded.valid, loaded.problems
        files[path] = plans.freeze_text(loaded).text
    stream = FastImport()
    stream.commit(AGENT, "propose", files)
    build_repo(repo, stream)
    git(repo, "switch", "-q", "-c", "approvals")
    for name in names:
        plan = repo / "plans" / name / "PLAN.yml"
        plan.write_text(plan.read_text().replace("status: pending_approval", "status: approved", 1))
    git(repo, "commit", "-q", "-am", f"approve {n} plans", env=who(*ALICE))
    git(repo, "switch", "-q", "main")
    return Lab(base, repo, config, names)
