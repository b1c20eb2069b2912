"""The record of a run's nested plan comes from what ran (round 109, r109nestrec).

A plan's action 2 runs a pinned nested plan. ``plangate run --once`` is SIGKILLed (a real
SIGKILL at one of the engine's crash points) in the middle of it, or just after it ended;
the next pass never enters the nested action (it ended already, or the agent committed a
changed child meanwhile, which fails the plan with E_ACTION_IN_DOUBT). Its outcome commit
used to carry an ``execution:`` block without the nested actions the journal holds, and a
log without their sections: both were laid out from the nested plan only when that pass
loaded it. They are now laid out from the journal and from the pinned version, read at the
run's start commit when the branch no longer holds it.

Real ``plangate run --once`` processes and real git.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from controller.execution.executor import CRASH_ENV
from tests.support.gitenv import commit_all, git, run_cli
from tests.support.gitkit import AGENT, ALICE, approve, head_plan, write_plan

CHILD = (
    "plan: {name: Notify, task: Tell the team, status: draft}\n"
    "available_tools: [{name: work}]\n"
    "actions:\n"
    "  - {id: 1, tool: work, why: post, params: {line: c1}}\n"
    "  - {id: 2, tool: work, why: log it, params: {line: c2}}\n"
)


def _config(repo: Path, effects: Path) -> Path:
    code = (
        "import sys,json; d=json.load(sys.stdin); "
        "open(sys.argv[1],'a').write(d['line']+'\\n'); print('{}')"
    )
    work = {"kind": "exec", "argv": [sys.executable, "-c", code, str(effects)]}
    config = repo.parent / "plangate.yml"
    data = {
        "repo": str(repo),
        "state_dir": str(repo.parent / "state"),
        "approval": {"approvers": ["alice@example.com"]},
        "tools": {"work": work},
    }
    config.write_text(json.dumps(data))
    return config


def _once(config: Path, crash_at: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {CRASH_ENV: crash_at} if crash_at else None
    result = run_cli("run", "--once", "--config", str(config), cwd=config.parent, env=env)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def _lab(repo: Path) -> tuple[Path, Path]:
    effects = repo.parent / "effects"
    config = _config(repo, effects)
    child = write_plan(repo, "ch", CHILD)
    pin = run_cli("hash", str(child.parent), cwd=repo).stdout.strip()
    write_plan(
        repo,
        "flow",
        "plan: {name: Flow, task: Nest, status: pending_approval}\n"
        "available_tools: [{name: work}]\n"
        "actions:\n"
        "  - {id: 1, tool: work, why: first, params: {line: p1}}\n"
        f'  - {{id: 2, why: tell, plan: {{path: plans/ch, hash: "{pin}"}}}}\n'
        "  - {id: 3, tool: work, why: last, params: {line: p3}}\n",
    )
    commit_all(repo, "agent: add plan", AGENT)
    assert _once(config).returncode == 0
    approve(repo, "flow", ALICE)
    return config, effects


def _recorded(repo: Path) -> tuple[dict[Any, str], dict[str, Any]]:
    plan = head_plan(repo, "flow")
    return {a["id"]: a["status"] for a in plan["execution"]["actions"]}, plan


def test_killed_mid_child_then_the_child_changed_keeps_the_nested_record(repo: Path) -> None:
    config, effects = _lab(repo)
    killed = _once(config, crash_at="after-tool:2/2")
    assert killed.returncode == -9, killed.stderr
    assert effects.read_text() == "p1\nc1\nc2\n"
    write_plan(repo, "ch", CHILD.replace("line: c2", "line: evil"))
    commit_all(repo, "agent: rewrite the child", AGENT)

    assert _once(config).returncode == 0
    acts, plan = _recorded(repo)
    assert plan["plan"]["status"] == "failed", plan
    assert "E_ACTION_IN_DOUBT" in json.dumps(plan["execution"]), plan["execution"]
    assert acts == {1: "succeeded", 2: "failed", "2/1": "succeeded", "2/2": "in_doubt",
                    3: "pending"}  # fmt: skip
    log = git(repo, "show", "HEAD:plans/flow/EXECUTION_LOG.md")
    # the sections come from the pinned version (the start commit's), not the agent's
    assert "## Nested action 2/1: work" in log and "## Nested action 2/2: work" in log
    assert "evil" not in log
    assert effects.read_text() == "p1\nc1\nc2\n"  # nothing ran again


def test_killed_after_the_nested_action_ended_keeps_the_nested_record(repo: Path) -> None:
    config, effects = _lab(repo)
    killed = _once(config, crash_at="before-start:3")
    assert killed.returncode == -9, killed.stderr

    assert _once(config).returncode == 0
    acts, plan = _recorded(repo)
    assert plan["plan"]["status"] == "completed", plan
    assert acts == {1: "succeeded", 2: "succeeded", "2/1": "succeeded", "2/2": "succeeded",
                    3: "succeeded"}  # fmt: skip
    log = git(repo, "show", "HEAD:plans/flow/EXECUTION_LOG.md")
    assert "## Nested action 2/1: work" in log and "## Nested action 2/2: work" in log
    assert effects.read_text() == "p1\nc1\nc2\np3\n"
