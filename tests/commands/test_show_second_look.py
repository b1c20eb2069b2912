"""`plangate show` for the second look: what a gated action will receive, what each action
did, and what each tool maps to in the catalog."""

from __future__ import annotations

from pathlib import Path

from tests.support.gitenv import commit_all, git, run_cli
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


def _paused_at_the_gate(repo: Path, tmp_path: Path, text: str, tool: str = "{kind: echo}") -> Path:
    """The agent's plan ``text`` committed, approved by Alice and run to its gate (with a
    secret set); the config's path."""
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\ntools:\n  greet: {tool}\n"
    )
    write_plan(repo, "greet", text)
    commit_all(repo, "agent", AGENT)
    env = {"PLANGATE_SECRET_TOKEN": "s3cret-value"}
    assert run_cli("run", "--once", "--config", str(config), env=env).returncode == 0
    approve(repo, "greet", ALICE)
    assert run_cli("run", "--once", "--config", str(config), env=env).returncode == 0
    return config


def test_show_at_a_gate_and_after_running(repo: Path, tmp_path: Path) -> None:
    config = _paused_at_the_gate(repo, tmp_path, GATED, "{kind: echo, description: says it}")
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


RESULTS_AT_A_GATE = """\
plan:
  name: "Carry a result past a gate"
  task: "The gated action takes a whole result and an output that holds a secret"
  status: pending_approval
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: "say hello"
    params: {who: world, long: "%s", tok: "$<secrets.TOKEN>"}
    outputs:
      - {name: tok, path: $.tok}
  - id: 2
    tool: greet
    why: "say it again"
    requires_approval: true
    params:
      whole: "$<actions[1].result.who>"
      long: "$<actions[1].result.long>"
      leak: "$<actions[1].outputs.tok>"
""" % ("L" * 300 + "-TAIL")


def test_the_gate_preview_is_what_the_engine_resolves_and_holds_no_secret(
    repo: Path, tmp_path: Path
) -> None:
    """Round 22: the preview was rebuilt from PLAN.yml's execution block, which holds no
    results and cuts values at 200 characters. The engine now records it at the pause
    (``execution.gate``, and the log), from whole results and outputs, secrets redacted
    (an output that carries a secret too); show prints that record."""
    config = _paused_at_the_gate(repo, tmp_path, RESULTS_AT_A_GATE)
    out = run_cli("show", "plans/greet", "--config", str(config), cwd=repo).stdout
    lines = out.splitlines()
    waiting = lines.index("    WAITING HERE: approving the gate runs it with these values:")
    assert lines[waiting + 1] == '      whole = "world"'
    assert lines[waiting + 2] == f'      long = "{"L" * 300}-TAIL"'
    assert lines[waiting + 3].startswith("      leak = ") and "s3cret" not in lines[waiting + 3]
    committed = git(repo, "show", "HEAD:plans/greet/PLAN.yml")
    log = git(repo, "show", "HEAD:plans/greet/EXECUTION_LOG.md")
    assert "gate:" in committed and "Waiting for approval at action `2`" in log
    assert "-TAIL" in log
    everything = git(repo, "log", "-p", "--all")
    assert "s3cret-value" not in out + everything


def test_without_a_config_show_checks_the_record_by_the_recorded_policys_controller(
    repo: Path, tmp_path: Path
) -> None:
    """Round 23: without --config, show took an agent's committed rewrite of the execution
    block as the record. The controller is now the identity the recorded policy names; when
    the recorded versions name two (an agent recorded one naming itself), show says it
    cannot tell and shows the branch's blocks unchecked (round 110: only versions sealed
    by the identity they name count; an unsealed one names nobody)."""
    import json

    _paused_at_the_gate(repo, tmp_path, GATED)
    plan_file = repo / "plans/greet/PLAN.yml"
    text = plan_file.read_text()
    assert "      said: hello, world\n" in text  # the engine's record of the gate
    plan_file.write_text(text.replace("      said: hello, world\n", "      said: hello, forged\n"))
    commit_all(repo, "agent rewrites the record", AGENT)
    out = run_cli("show", "plans/greet", cwd=repo).stdout
    assert '      said = "hello, world"' in out.splitlines() and "E_OWNED_BLOCK_CHANGED" in out

    policy = repo / ".plangate/policy.json"
    doc = json.loads(policy.read_text())
    doc["identity"]["email"] = AGENT[1]
    from controller.plan.hashing import canonical_bytes

    policy.write_bytes(canonical_bytes(doc))
    # round 110: an unsealed version names nobody: show still checks by the controller's
    commit_all(repo, "agent records a policy naming itself", AGENT)
    out = run_cli("show", "plans/greet", cwd=repo).stdout
    assert '      said = "hello, world"' in out.splitlines() and "E_OWNED_BLOCK_CHANGED" in out
    # a seal-shaped record naming its own committer: git alone cannot tell which is real
    (repo / "plans/greet/NOTE").write_text("x\n")
    trailers = f"Policy-Hash: {'a' * 64}\nController-Seal: {'b' * 64}"
    commit_all(repo, f"plangate: record policy\n\n{trailers}", AGENT)
    out = run_cli("show", "plans/greet", cwd=repo).stdout
    assert "more than one controller identity" in out and "pass --config" in out


def test_show_of_an_invalid_plan_carries_the_records_notes(repo: Path, tmp_path: Path) -> None:
    """Round 68: an invalid plan committed beside the agent's forged EXECUTION_LOG.md: the
    row and MCP noted the log (E_OWNED_BLOCK_CHANGED), ``show`` printed only the validation
    problems. The record's notes do not depend on whether the plan validates."""
    import json

    config = tmp_path / "plangate.yml"
    config.write_text(f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\n")
    folder = write_plan(repo, "greet", GATED).parent  # `greet` is no tool of this config
    (folder / "EXECUTION_LOG.md").write_text("# Execution log\n\n- Status: completed\n")
    commit_all(repo, "agent: a plan and its 'log'", AGENT)
    shown = run_cli("show", "--config", str(config), "plans/greet", cwd=repo)
    assert shown.returncode == 1
    assert "E_TOOL_UNKNOWN" in shown.stderr and "E_OWNED_BLOCK_CHANGED" in shown.stderr
    shown = run_cli("show", "--json", "--config", str(config), "plans/greet", cwd=repo)
    codes = [e["code"] for e in json.loads(shown.stdout)["errors"]]
    assert codes[0] == "E_TOOL_UNKNOWN" and "E_OWNED_BLOCK_CHANGED" in codes, codes


def test_show_with_a_config_gives_the_controllers_status_not_one_it_ignored(
    repo: Path, tmp_path: Path
) -> None:
    """A status the controller ignored (here the agent, the plan's author, committing
    ``completed`` over a plan paused at its gate) is the file's text, not the plan's state:
    ``show --config`` gives the controller's row, as ``status`` and the page do, and names
    the file's (round 82: it printed ``completed``)."""
    import json

    config = _paused_at_the_gate(repo, tmp_path, GATED)
    plan = repo / "plans" / "greet" / "PLAN.yml"
    text = plan.read_text()
    held = next(line for line in text.splitlines() if line.strip().startswith("status:"))
    plan.write_text(text.replace(held, held.split(":")[0] + ": completed", 1))
    commit_all(repo, "the agent says it is done", AGENT)
    shown = run_cli("show", "--json", "--config", str(config), str(plan), cwd=repo)
    assert shown.returncode == 0, shown.stderr
    view = json.loads(shown.stdout)
    assert view["plan"]["status"] == "awaiting_approval", view["plan"]
    assert view["file_status"] == "completed"
    assert "the controller holds 'awaiting_approval'" in view["record_warning"]
    text_view = run_cli("show", "--config", str(config), str(plan), cwd=repo).stdout
    assert "Status:  awaiting_approval" in text_view, text_view
    bare = json.loads(run_cli("show", "--json", str(plan), cwd=repo).stdout)
    assert bare["plan"]["status"] == "completed"  # without a config: the file, as written
