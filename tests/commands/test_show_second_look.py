"""`plangate show` for the second look: what a gated action will receive, what each action
did, and what each tool maps to in the catalog."""

from __future__ import annotations

from pathlib import Path

from tests.support.gitenv import commit_all, run_cli
from tests.support.gitkit import AGENT, ALICE, approve, write_plan

GATED = """\
plan:
  name: "Greet twice"
  task: "Say hello, then say it again after a second look"
  status: pending_approval
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: "say hello"
    params: {who: world}
    outputs:
      - {name: who, path: $.who}
  - id: 2
    tool: greet
    why: "say it again"
    requires_approval: true
    params:
      said: "hello, $<actions[1].outputs.who>"
      token: "$<secrets.TOKEN>"
"""


def test_show_at_a_gate_and_after_running(repo: Path, tmp_path: Path) -> None:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\n"
        "tools:\n  greet: {kind: echo, description: says it}\n"
    )
    write_plan(repo, "greet", GATED)
    commit_all(repo, "agent", AGENT)
    env = {"PLANGATE_SECRET_TOKEN": "s3cret-value"}
    assert run_cli("run", "--once", "--config", str(config), env=env).returncode == 0
    approve(repo, "greet", ALICE)
    assert run_cli("run", "--once", "--config", str(config), env=env).returncode == 0
    shown = run_cli("show", "plans/greet", "--config", str(config), cwd=repo)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    lines = out.splitlines()
    assert lines[0].startswith("Plan:") and lines[2].startswith("Status:  awaiting_approval")
    assert "paused before action 2" in lines[2]
    assert "Approved: by alice@example.com" in out
    assert out.count("runs: echo: returns its params") == 2  # the catalog's mapping per tool
    assert "ran: succeeded in" in out and 'outputs: {"who": "world"}' in out
    waiting = lines.index("    WAITING HERE: approving the gate runs it with these values:")
    assert lines[waiting + 1] == '      said = "hello, world"'
    assert lines[waiting + 2] == '      token = "***"'
    assert "s3cret-value" not in out
