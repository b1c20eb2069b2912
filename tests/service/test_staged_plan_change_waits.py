"""A change of a running plan's file staged in the index makes its outcome wait, as an edit
of the file does (round 116, atk116d ``staged-removal-discarded``).

The break: during a run the agent unstaged the plan file (``git rm --cached``, the file left
as it was). The outcome commit went ahead and its index write put the entry back: ``git
status`` clean, the agent's staged removal gone, where an edit of the file (or a staged
edit) made the outcome wait with the change kept (docs/approvals.md: the plan waits on any
uncommitted change of a PLAN.yml plangate must write). Now the index's entry of the plan file
is compared with the commit too (``WorkTree.index_holds``, ``Committing._check_staged``); a
staged edit whose file was written back as committed waits alike.

Real git, real ``plangate run --once`` passes, the change made by the run's own exec tool.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.gitenv import AGENT, ROOT, commit_all, git

#: Action 1 plays with the index entry of the plan file (as the agent), the file kept.
TOOL = """\
import json, os, subprocess, sys
tag, repo, how = sys.argv[1], os.environ["T_REPO"], os.environ["T_HOW"]
env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
rel = "plans/p/PLAN.yml"
def git(*a):
    subprocess.run(["git", *a], cwd=repo, env=env, check=True)
if tag.endswith("-1"):
    if how == "removed":
        git("rm", "-q", "--cached", rel)
    else:  # a staged edit, the file then written back as committed
        path = os.path.join(repo, rel)
        kept = open(path, "rb").read()
        open(path, "ab").write(b"# AGENT STAGED\\n")
        git("add", rel)
        open(path, "wb").write(kept)
print(json.dumps({"ok": tag}))
"""


def _plan() -> str:
    acts = "".join(
        f'  - id: {i}\n    tool: t\n    why: "step {i}"\n    params: {{tag: "p-{i}"}}\n'
        for i in (1, 2, 3)
    )
    return (
        'plan:\n  name: "p"\n  task: "staged change"\n  status: pending_approval\n'
        f"available_tools:\n  - name: t\nactions:\n{acts}"
    )


def _once(config: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stderr


@pytest.mark.parametrize("how", ["removed", "staged-edit"])
def test_a_staged_change_of_the_running_plan_makes_its_outcome_wait(
    tmp_path: Path, repo: Path, how: str
) -> None:
    (tmp_path / "t.py").write_text(TOOL)
    argv = json.dumps([sys.executable, str(tmp_path / "t.py"), "{tag}"])
    env = json.dumps({"T_REPO": str(repo), "T_HOW": how})
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval: {approvers: [alice@example.com]}\n"
        f"tools: {{t: {{kind: exec, argv: {argv}, env: {env}}}}}\n"
    )
    plan = repo / "plans" / "p" / "PLAN.yml"
    plan.parent.mkdir(parents=True)
    plan.write_text(_plan())
    commit_all(repo, "propose p", AGENT)
    _once(config)  # frozen
    plan.write_text(plan.read_text().replace("pending_approval", "approved"))
    commit_all(repo, "approve p", ("Alice", "alice@example.com"))

    err = _once(config)  # the run: action 1 stages its change

    assert "status: executing" in git(repo, "show", "main:plans/p/PLAN.yml"), err[-1500:]
    staged = git(repo, "diff", "--cached", "--name-status").split()
    assert staged == ["D" if how == "removed" else "M", "plans/p/PLAN.yml"], err[-1500:]
    assert "has uncommitted changes staged in the index" in err, err[-1500:]

    git(repo, "restore", "--staged", "--", "plans/p/PLAN.yml")  # the agent takes it back
    _once(config)

    assert "status: completed" in git(repo, "show", "main:plans/p/PLAN.yml")
    assert git(repo, "status", "--porcelain") == ""
