"""A three-action plan whose exec tool (the agent's) works on the shared checkout during
its run: the labs of rounds 116 and after on what a run's outcome may write there
(``tests/service/test_foreign_checkout_outcome.py``, ``test_staged_plan_change_waits.py``).

Real git, real ``plangate run --once`` passes; the tool is ``<tmp>/t.py``, called with the
action's tag (``p-1``..``p-3``) and ``T_REPO`` plus the ``env`` a test gives it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.gitenv import AGENT, ROOT, commit_all


def plan_text(task: str) -> str:
    """Plan ``p``: three actions of tool ``t``, tagged ``p-1``..``p-3``."""
    acts = "".join(
        f'  - id: {i}\n    tool: t\n    why: "step {i}"\n    params: {{tag: "p-{i}"}}\n'
        for i in (1, 2, 3)
    )
    return (
        f'plan:\n  name: "p"\n  task: "{task}"\n  status: pending_approval\n'
        f"available_tools:\n  - name: t\nactions:\n{acts}"
    )


def once(config: Path) -> str:
    """One ``plangate run --once`` pass, which must exit 0; its stderr."""
    result = subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stderr


def approved_plan(tmp_path: Path, repo: Path, tool: str, extra: dict[str, str], task: str) -> Path:
    """Plan ``p`` proposed by the agent, frozen by a pass and approved by Alice, with the
    tool ``tool`` (its source) as ``t``; the config's path. The next pass runs it."""
    (tmp_path / "t.py").write_text(tool)
    argv = json.dumps([sys.executable, str(tmp_path / "t.py"), "{tag}"])
    env = json.dumps({"T_REPO": str(repo), **extra})
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval: {approvers: [alice@example.com]}\n"
        f"tools: {{t: {{kind: exec, argv: {argv}, env: {env}}}}}\n"
    )
    plan = repo / "plans" / "p" / "PLAN.yml"
    plan.parent.mkdir(parents=True)
    plan.write_text(plan_text(task))
    commit_all(repo, "propose p", AGENT)
    once(config)  # frozen
    plan.write_text(plan.read_text().replace("pending_approval", "approved"))
    commit_all(repo, "approve p", ("Alice", "alice@example.com"))
    return config
