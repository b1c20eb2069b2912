"""SPEC §12 end to end with the real controller process (``plangate run --once``): an agent
commits a plan using checks, retry, fallback, ask and ``needs``; a human approves through
git; the controller runs it and commits the outcome, PLAN.yml's execution block and
EXECUTION_LOG.md (with its Mermaid graph and the checks)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from controller.plan import yamlio
from tests.support.gitenv import commit_all, git, run_cli
from tests.support.gitkit import AGENT, ALICE, BOB, approve, head_plan, subjects, write_plan

PY = sys.executable


def controller_once(repo: Path, tools: dict[str, Any], **execution: Any) -> None:
    config = repo.parent / "plangate.yml"
    data = {
        "repo": str(repo),
        "state_dir": str(repo.parent / "state"),
        "approval": {"approvers": ["alice@example.com", "*@ops.example.com"]},
        "tools": tools,
        "execution": execution,
    }
    config.write_text(json.dumps(data))
    result = run_cli("run", "--once", "--config", str(config), cwd=repo.parent, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


def plan_text(actions: str, top: str = "") -> str:
    return (
        "plan: {name: Flow, task: Exercise SPEC 12, status: pending_approval}\n"
        "available_tools: [{name: deploy}, {name: status}, {name: rollback}, {name: work}]\n"
        + top
        + "actions:\n"
        + actions
    )


def submit_and_approve(repo: Path, text: str, tools: dict[str, Any], **execution: Any) -> None:
    write_plan(repo, "flow", text)
    commit_all(repo, "agent: add plan", AGENT)
    controller_once(repo, tools, **execution)
    assert subjects(repo)[0] == "plangate: freeze plans/flow", head_plan(repo, "flow")
    approve(repo, "flow", ALICE)
    controller_once(repo, tools, **execution)


def head_log(repo: Path) -> str:
    return git(repo, "show", "HEAD:plans/flow/EXECUTION_LOG.md")


def exec_tool(code: str, *args: str, idempotent: bool = False) -> dict[str, Any]:
    """An exec tool; an idempotent one is a read-only check tool here (risk: low)."""
    tool = {"kind": "exec", "argv": [PY, "-c", code, *args], "idempotent": idempotent}
    return {**tool, "risk": "low"} if idempotent else tool


def appender(target: Path) -> dict[str, Any]:
    code = (
        "import sys,json; d=json.load(sys.stdin); "
        "open(sys.argv[1],'a').write(d['line']+'\\n'); print('{}')"
    )
    return exec_tool(code, str(target))


def test_deploy_verify_else_roll_back_in_one_plan(repo: Path, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    status = exec_tool('print(\'{"status": "degraded"}\')', idempotent=True)
    actions = """\
  - id: 1
    tool: deploy
    why: roll out v2
    params: {line: deploy}
    verify:
      tool: status
      expect: {path: $.json.status, equals: rolled_out}
      timeout: 0.2
      interval: 0.05
    on_failure: fallback
    fallback:
      - {id: "1.1", tool: rollback, why: back to v1, params: {line: rollback}}
  - id: 2
    tool: work
    why: tell the team
    params: {line: notify}
"""
    tools = {
        "deploy": appender(effects),
        "rollback": appender(effects),
        "work": appender(effects),
        "status": status,
    }
    submit_and_approve(repo, plan_text(actions), tools)
    plan = head_plan(repo, "flow")
    assert plan["plan"]["status"] == "completed"
    assert effects.read_text() == "deploy\nrollback\nnotify\n"
    assert [(a["id"], a["status"]) for a in plan["execution"]["actions"]] == [
        (1, "skipped"),
        ("1.1", "succeeded"),
        (2, "succeeded"),
    ]
    log = head_log(repo)
    assert "E_VERIFY_FAILED" in log and "verify (`status`): ❌ does not hold" in log
    assert "```mermaid" in log and "a1 --> a2" in log


def test_precondition_with_retry_then_graph_runs_in_parallel(repo: Path, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    counter = tmp_path / "n"
    lock = exec_tool(
        "import sys,os,json; p=sys.argv[1]; n=int(open(p).read()) if os.path.exists(p) else 0; "
        "open(p,'w').write(str(n+1)); print(json.dumps({'free': n >= 1}))",
        str(counter),
        idempotent=True,
    )
    actions = """\
  - id: 1
    tool: work
    why: first
    needs: []
    params: {line: a}
    preconditions: [{tool: status, expect: {path: $.json.free, equals: true}}]
    retry: {attempts: 3, delay: 0.01, backoff: 2, max_delay: 1}
  - {id: 2, tool: work, why: second, needs: [], params: {line: b}}
  - {id: 3, tool: work, why: join, needs: [1, 2], params: {line: c}}
"""
    tools = {
        "work": appender(effects),
        "status": lock,
        "deploy": {"kind": "echo"},
        "rollback": {"kind": "echo"},
    }
    submit_and_approve(
        repo, plan_text(actions, "on_failure: retry\n"), tools, max_parallel_actions=2
    )
    plan = head_plan(repo, "flow")
    assert plan["plan"]["status"] == "completed", plan["execution"]
    assert sorted(effects.read_text().split()) == ["a", "b", "c"]
    assert effects.read_text().split()[-1] == "c"
    assert plan["execution"]["actions"][0]["attempts"] == 2
    log = head_log(repo)
    assert "E_PRECONDITION_FAILED" not in json.dumps(plan["execution"])
    assert "precondition 1 (`status`): ✅ holds" in log


def test_ask_pauses_for_a_human_who_fixes_and_approves(repo: Path, tmp_path: Path) -> None:
    flag = tmp_path / "fixed"
    picky = exec_tool("import sys,os; sys.exit(0 if os.path.exists(sys.argv[1]) else 4)", str(flag))
    actions = """\
  - {id: 1, tool: deploy, why: needs a human if it fails, on_failure: ask}
  - {id: 2, tool: work, why: then this, params: {line: x}}
"""
    tools = {
        "deploy": picky,
        "work": {"kind": "echo"},
        "status": {"kind": "echo"},
        "rollback": {"kind": "echo"},
    }
    submit_and_approve(repo, plan_text(actions), tools)
    plan = head_plan(repo, "flow")
    assert plan["plan"]["status"] == "awaiting_approval"
    assert subjects(repo)[0] == "plangate: await-approval plans/flow"
    controller_once(repo, tools)  # nothing new: it keeps waiting
    assert head_plan(repo, "flow")["plan"]["status"] == "awaiting_approval"
    flag.write_text("ok")
    approve(repo, "flow", BOB)
    controller_once(repo, tools)
    plan = head_plan(repo, "flow")
    assert plan["plan"]["status"] == "completed"
    assert [a["status"] for a in plan["execution"]["actions"]] == ["succeeded", "succeeded"]


def test_ask_then_abort(repo: Path) -> None:
    broken = exec_tool("raise SystemExit(4)")
    actions = "  - {id: 1, tool: deploy, why: fails, on_failure: ask}\n"
    tools = {
        "deploy": broken,
        "work": {"kind": "echo"},
        "status": {"kind": "echo"},
        "rollback": {"kind": "echo"},
    }
    submit_and_approve(repo, plan_text(actions), tools)
    assert head_plan(repo, "flow")["plan"]["status"] == "awaiting_approval"
    result = run_cli("abort", "plans/flow", cwd=repo)
    assert result.returncode == 0, result.stderr
    controller_once(repo, tools)
    assert head_plan(repo, "flow")["plan"]["status"] == "aborted"


def test_validate_reports_graph_mistakes(repo: Path) -> None:
    actions = """\
  - {id: 1, tool: work, why: a, needs: [2], outputs: [{name: x, path: $.x}]}
  - {id: 2, tool: work, why: b, needs: [1]}
"""
    path = write_plan(repo, "flow", plan_text(actions))
    result = run_cli("validate", str(path), cwd=repo)
    assert result.returncode != 0
    assert "E_ACTION_IDS" in result.stdout + result.stderr
    assert "cycle: 1 -> 2 -> 1" in result.stdout + result.stderr
    data = yamlio.read_yaml(path.read_text()).data
    assert data["actions"][0]["needs"] == [2]


def test_a_nested_plan_runs_pinned_inside_the_parent(repo: Path, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    child = (
        "plan: {name: Notify, task: Tell the team, status: draft}\n"
        "inputs: {text: hi}\n"
        "available_tools: [{name: work}]\n"
        "actions:\n"
        "  - {id: 1, tool: work, why: post, params: {line: $<inputs.text>}}\n"
    )
    folder = repo / "plans" / "common" / "notify"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_text(child)
    pin = run_cli("hash", str(folder), cwd=repo).stdout.strip()
    actions = f"""\
  - {{id: 1, tool: work, why: first, params: {{line: deploy}}}}
  - id: 2
    why: tell
    plan: {{path: plans/common/notify, hash: "{pin}"}}
    inputs: {{text: deployed}}
"""
    tools = {"work": appender(effects), "deploy": {"kind": "echo"}, "status": {"kind": "echo"},
             "rollback": {"kind": "echo"}}  # fmt: skip
    submit_and_approve(repo, plan_text(actions), tools)
    plan = head_plan(repo, "flow")
    assert plan["plan"]["status"] == "completed", plan.get("execution")
    assert effects.read_text() == "deploy\ndeployed\n"
    assert [a["id"] for a in plan["execution"]["actions"]] == [1, 2, "2/1"]
    assert "## Nested action 2/1: work" in head_log(repo)
    # The child changes after the parent ran: validating the parent now says so.
    (folder / "PLAN.yml").write_text(child.replace("text: hi", "text: bye"))
    result = run_cli("validate", str(repo / "plans" / "flow"), cwd=repo)
    assert result.returncode == 1 and "E_PLAN_HASH_MISMATCH" in result.stdout + result.stderr
