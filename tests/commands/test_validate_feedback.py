"""`plangate validate` as an author meets it: one loader with freeze, every error at once,
the tab named as a tab, and a warning when the daemon would never pick the file up."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.gitenv import git, run_cli
from tests.support.plan_factory import BASE_TEXT, write_plan

FLOW = (
    '{"plan": {"name": "x", "task": "y", "status": "pending_approval"}, '
    '"available_tools": [{"name": "echo"}], '
    '"actions": [{"id": 1, "tool": "echo", "why": "w", "params": {}}]}\n'
)


def test_validate_refuses_what_freeze_refuses(tmp_path: Path) -> None:
    plan = tmp_path / "PLAN.yml"
    plan.write_text(FLOW)
    validated = run_cli("validate", str(plan))
    frozen = run_cli("freeze", str(plan))
    assert validated.returncode == frozen.returncode == 1
    assert "block mapping" in validated.stderr and "block mapping" in frozen.stderr
    assert plan.read_text() == FLOW


def test_a_tab_is_named_with_line_and_column(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, BASE_TEXT.replace("  task:", "\ttask:"))
    result = run_cli("validate", "--json", str(plan))
    (error,) = json.loads(result.stdout)["errors"]
    line = BASE_TEXT.splitlines().index("  task: 'Rotate the API keys of the staging service'") + 1
    assert error["code"] == "E_YAML_PARSE" and error["line"] == line
    assert f"tab character at line {line}, column 1" in error["message"]
    assert error["remedy"]


def test_every_error_of_every_kind_in_one_run_sorted_by_line(tmp_path: Path) -> None:
    text = (
        BASE_TEXT.replace("  status: pending_approval", "  status: pending_approval\n  owner: me")
        .replace("    on_failure: retry", "    on_faliure: retry")
        .replace('      service: "$<inputs.service>"', '      service: "$<inputs.nope>"')
        .replace("  - id: 2", "  - id: 3")
    )
    plan = write_plan(tmp_path, text)
    (tmp_path / "plangate.yml").write_text("tools:\n  echo: {kind: echo}\n")
    result = run_cli("validate", "--json", str(plan), cwd=tmp_path)
    assert result.returncode == 1
    errors = json.loads(result.stdout)["errors"]
    codes = [e["code"] for e in errors]
    # schema errors no longer hide the reference and id errors behind them
    assert {"E_SCHEMA_INVALID", "E_REF_UNKNOWN", "E_ACTION_IDS"} <= set(codes), errors
    assert [e["line"] for e in errors] == sorted(e["line"] for e in errors)
    lines = text.splitlines()
    assert {(e["path"], e["line"]) for e in errors} >= {
        ("plan.owner", lines.index("  owner: me") + 1),
        ("actions[1].on_faliure", lines.index("    on_faliure: retry") + 1),
        ("actions[0].params.service", lines.index('      service: "$<inputs.nope>"') + 1),
    }
    assert all(set(e) == {"code", "message", "path", "line", "remedy"} for e in errors)
    assert all(e["remedy"] for e in errors)
    text_run = run_cli("validate", str(plan), cwd=tmp_path)
    assert f"invalid, {len(errors)} problem(s)" in text_run.stdout
    # the text a person reads gives each problem its remedy too, on the line below it
    lines_out = text_run.stderr.splitlines()
    shown = [i for i, ln in enumerate(lines_out) if ": E_" in ln]
    assert len(shown) == len(errors), text_run.stderr
    assert [lines_out[i + 1] for i in shown] == [f"  remedy: {e['remedy']}" for e in errors]


def test_validate_warns_where_the_daemon_would_look(tmp_path: Path) -> None:
    repo = tmp_path / "plans-repo"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    good = write_plan(repo, name="rotate")
    # in a folder of its own: beside PLAN.yml it would make that folder E_PLAN_AMBIGUOUS
    # (one path on a case-insensitive checkout, round 71)
    lower = repo / "plans" / "rotate-lower" / "plan.yml"
    lower.parent.mkdir(parents=True)
    lower.write_text(BASE_TEXT)
    outside = repo / "drafts" / "rotate" / "PLAN.yml"
    outside.parent.mkdir(parents=True)
    outside.write_text(BASE_TEXT)
    result = run_cli("validate", str(good), str(lower), str(outside))
    assert result.returncode == 0, result.stderr  # valid: a warning, not an error
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 2, result.stderr
    assert str(lower) in warnings[0] and str(lower.parent.resolve() / "PLAN.yml") in warnings[0]
    assert str(outside) in warnings[1]
    assert str(repo.resolve() / "plans" / "rotate" / "PLAN.yml") in warnings[1]
    record = json.loads(run_cli("validate", "--json", str(lower)).stdout)
    assert record["valid"] and "PLAN.yml" in record["warnings"][0]


def test_a_bare_tool_name_is_told_the_shape_and_still_declares_it(tmp_path: Path) -> None:
    """An agent's first plan often lists its tools by name (`available_tools: [echo]`): one
    problem at that entry, saying what to write, and no cascade of "not declared" at every
    action that calls the tool (found by an agent-with-only-the-docs trial, 2026-11-30)."""
    text = BASE_TEXT.replace(
        'available_tools:\n  - name: echo\n    description: "Returns its params"\n',
        "available_tools: [echo]\n",
    )
    assert text != BASE_TEXT
    plan = write_plan(tmp_path, text)
    record = json.loads(run_cli("validate", "--json", str(plan)).stdout)
    assert not record["valid"]
    (error,) = record["errors"]
    assert (error["code"], error["path"]) == ("E_SCHEMA_INVALID", "available_tools[0]")
    assert "`name`, `description`" in error["message"]
    assert "write `name: echo`" in error["message"]
    assert error["line"] == text.splitlines().index("available_tools: [echo]") + 1


def test_a_source_file_under_another_name_is_read_in_its_format_with_the_exact_name_to_use(
    tmp_path: Path,
) -> None:
    """A user's trial: ``validate drafts/actionplan.json`` read the JSON as a PLAN.yml ("not a
    block mapping", unknown keys ``steps``...) where MCP ``validate`` found the ActionPlan
    format, and the warning said the controller reads only PLAN.yml, though it converts a
    folder's PLAN.json. The suffix says the format; the warning names the exact name."""
    source = {
        "plan_version": 1,
        "goal": "Greet",
        "steps": [{"step_id": "a", "tool": "echo", "args": {"name": "x"}, "description": "Hi"}],
    }
    git(tmp_path, "init", "-q")
    drafts = tmp_path / "drafts"
    drafts.mkdir()
    draft = drafts / "contract.json"
    draft.write_text(json.dumps(source))
    exact = drafts / "PLAN.json"
    exact.write_text(json.dumps(source))
    result = run_cli("validate", "--json", str(draft), cwd=tmp_path)
    named = run_cli("validate", "--json", str(exact), cwd=tmp_path)
    got, want = json.loads(result.stdout), json.loads(named.stdout)
    assert result.returncode == named.returncode == 0, result.stdout
    assert got["valid"] is True and got["hash"] == want["hash"], got
    (warning,) = got["warnings"]
    assert "converts its PLAN.json" in warning and warning.endswith("plans/drafts/PLAN.json")
