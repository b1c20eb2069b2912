"""What an agent is told (round 127, atk127b), in-process against real git and through the
real ``plangate`` command:

- validate-format-unnamed-on-conversion-refusal: a source the converter refuses is answered
  with the format it was read as (MCP ``validate``, CLI ``validate --json``), never ``null``;
- mcp-nested-plan-remedy-names-cli-option: an ActionPlan with a ``nested_plan`` step is
  submitted with its nested plan at ``plans/<slug>/step-1`` in the same commit, and runs
  inside its parent once approved; ``validate`` without a ``slug`` says to give one (never
  ``convert``'s "pass -o DIR");
- mcp-log-unreadable-plan-uncoded: ``log`` of a plan the controller does not read answers
  the status row's code and ``file_status: null``; of a symlinked plan file, the row's
  refusal, as ``wait``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from controller.errors import PlangateError
from controller.service.agentapi import AgentApi
from controller.settings import config_from_data
from tests.support.gitenv import commit_all, git, identity, run_cli

AGENT = ("Agent Smith", "agent@example.com")
ALICE = ("Alice", "alice@example.com")

PTE_APPROVAL = """\
plan:
  name: pte
  task: greet
  status: pending_approval
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: greet
    params: {name: bob}
approval: {status: approved, by: alice@example.com}
"""
PC_FLAG = json.dumps(
    {
        "plan_version": 1,
        "goal": "greet",
        "steps": [
            {"step_id": "s1", "tool": "greet", "args": {"n": 1}, "requires_approval": "true"}
        ],
    }
)
NESTED = json.dumps(
    {
        "plan_version": 1,
        "title": "outer",
        "steps": [
            {
                "step_number": 1,
                "description": "run the inner plan",
                "action": {
                    "type": "nested_plan",
                    "plan": {
                        "plan_version": 1,
                        "title": "inner",
                        "steps": [
                            {
                                "step_number": 1,
                                "description": "greet",
                                "action": {"type": "greet", "name": "inner"},
                            }
                        ],
                    },
                },
            }
        ],
    }
)
GOOD = (
    "plan: {name: n, task: t, status: pending_approval}\n"
    "available_tools: [{name: greet}]\n"
    "actions:\n  - {id: 1, tool: greet, why: w, params: {name: x}}\n"
)


def _settings(tmp_path: Path, repo: Path) -> dict[str, Any]:
    return {
        "repo": str(repo),
        "state_dir": str(tmp_path / "state"),
        "approval": {"approvers": ["alice@example.com"]},
        "tools": {"greet": {"kind": "echo"}},
        "agent": {"identity": {"name": AGENT[0], "email": AGENT[1]}},
    }


def _config_file(tmp_path: Path, repo: Path) -> Path:
    config = tmp_path / "plangate.yml"
    config.write_text(json.dumps(_settings(tmp_path, repo)))  # JSON is YAML
    return config


def _api(tmp_path: Path, repo: Path) -> AgentApi:
    return AgentApi(config_from_data(_settings(tmp_path, repo), tmp_path / "plangate.yml"))


# -- the format a refused conversion was read as ------------------------------------------
@pytest.mark.parametrize(
    "text,fmt,where",
    [
        (PTE_APPROVAL, "pte", "approval"),
        (PC_FLAG, "plan-contract", "steps[0].requires_approval"),
        (NESTED, "actionplan", "steps[0].action.plan"),
    ],
    ids=["pte-approval", "pc-flag", "nested"],
)
def test_validate_names_the_format_a_refused_source_was_read_as(
    repo: Path, tmp_path: Path, text: str, fmt: str, where: str
) -> None:
    api = _api(tmp_path, repo)
    try:
        answer = api.validate(text)
    finally:
        api.close()
    assert answer["valid"] is False and answer["hash"] is None, answer
    assert [e["path"] for e in answer["errors"]] == [where], answer
    assert answer["format"] == fmt, answer


def test_cli_validate_json_names_a_refused_sources_format(tmp_path: Path) -> None:
    folder = tmp_path / "plans" / "pc"
    folder.mkdir(parents=True)
    (folder / "PLAN.json").write_text(PC_FLAG)
    (tmp_path / "plans" / "y").mkdir()
    (tmp_path / "plans" / "y" / "PLAN.yml").write_text(GOOD)
    result = run_cli("validate", "--json", "plans/pc/PLAN.json", "plans/y/PLAN.yml", cwd=tmp_path)
    source, plan = (json.loads(line) for line in result.stdout.splitlines())
    assert source["valid"] is False and source["format"] == "plan-contract", source
    assert plan["format"] == "plan.yml", plan


# -- a nested plan over MCP -----------------------------------------------------------------
def test_validate_without_a_slug_says_to_give_one(repo: Path, tmp_path: Path) -> None:
    api = _api(tmp_path, repo)
    try:
        (err,) = api.validate(NESTED)["errors"]
    finally:
        api.close()
    assert err["code"] == "E_CONVERT_UNSUPPORTED" and err["path"] == "steps[0].action.plan"
    told = f"{err['message']} {err['remedy']}"
    assert "-o" not in told and "`slug`" in err["remedy"], err


@pytest.mark.parametrize("pull_request", [False, True], ids=["watched", "pull-request"])
def test_submit_commits_the_nested_plan_under_the_plans_folder(
    repo: Path, tmp_path: Path, pull_request: bool
) -> None:
    api = _api(tmp_path, repo)
    try:
        checked = api.validate(NESTED, slug="outer")
        done = api.submit(NESTED, "outer", pull_request=pull_request)
    finally:
        api.close()
    assert checked["valid"] is True and done["submitted"] is True, (checked, done)
    assert checked["hash"] == done["hash"] and checked["risk"] == done["risk"], (checked, done)
    assert done["nested"] == [{"path": "plans/outer/step-1", "file": "plans/outer/step-1/PLAN.yml"}]
    (shown,) = checked["nested"]
    files = git(repo, "show", "--name-only", "--format=", done["commit"]).split()
    assert sorted(files) == ["plans/outer/PLAN.yml", "plans/outer/step-1/PLAN.yml"], files
    inner = git(repo, "show", f"{done['commit']}:plans/outer/step-1/PLAN.yml")
    assert inner == shown["plan_yml"] and "status: draft" in inner.replace('"', ""), inner
    outer = git(repo, "show", f"{done['commit']}:plans/outer/PLAN.yml")
    assert "path: plans/outer/step-1" in outer.replace('"', ""), outer
    on_main = (repo / "plans" / "outer" / "step-1" / "PLAN.yml").exists()
    assert on_main is not pull_request


def test_a_submitted_nested_plan_runs_inside_its_parent_once_approved(
    repo: Path, tmp_path: Path
) -> None:
    config = _config_file(tmp_path, repo)
    api = _api(tmp_path, repo)
    try:
        api.submit(NESTED, "outer")
    finally:
        api.close()
    frozen = run_cli("run", "--once", "--config", str(config), cwd=repo)
    assert frozen.returncode == 0, frozen.stderr
    approved = run_cli("approve", "plans/outer", cwd=repo, env=identity(*ALICE))
    assert approved.returncode == 0, approved.stderr
    ran = run_cli("run", "--once", "--config", str(config), cwd=repo)
    assert ran.returncode == 0, ran.stderr
    api = _api(tmp_path, repo)
    try:
        (row,) = api.status("plans/outer")["plans"]
        log = api.log("plans/outer")
    finally:
        api.close()
    assert row["status"] == "completed", row
    assert "inner" in (log["execution_log"] or ""), log


# -- log of a plan the controller does not read ----------------------------------------------
def _unreadable(repo: Path) -> None:
    for name, data in (
        ("toobig", GOOD.encode() + b"# " + b"y" * 1_100_000 + b"\n"),
        ("badutf", GOOD.encode() + b"# \xff\n"),
        ("good", GOOD.encode()),
    ):
        (repo / "plans" / name).mkdir(parents=True)
        (repo / "plans" / name / "PLAN.yml").write_bytes(data)
    (repo / "plans" / "link").mkdir()
    os.symlink("../good/PLAN.yml", repo / "plans" / "link" / "PLAN.yml")
    commit_all(repo, "plans", AGENT)


@pytest.mark.parametrize("name,code", [("toobig", "E_PLAN_TOO_LARGE"), ("badutf", "E_YAML_PARSE")])
def test_log_of_an_unreadable_plan_answers_its_rows_code(
    repo: Path, tmp_path: Path, name: str, code: str
) -> None:
    _unreadable(repo)
    api = _api(tmp_path, repo)
    try:
        (row,) = api.status(f"plans/{name}")["plans"]
        log = api.log(f"plans/{name}")
    finally:
        api.close()
    assert row["problem"]["code"] == code and row["file_status"] is None, row
    assert log["status"] == row["status"] == "unreadable", log
    assert log["file_status"] is None, log
    assert [p.split(":")[0] for p in log["problems"]] == [code], log
    assert "y" * 1000 not in json.dumps(log)


def test_log_of_a_symlinked_plan_file_is_its_rows_refusal(repo: Path, tmp_path: Path) -> None:
    _unreadable(repo)
    api = _api(tmp_path, repo)
    try:
        (row,) = api.status("plans/link")["plans"]
        with pytest.raises(PlangateError) as refused:
            api.log("plans/link")
        good = api.log("plans/good")
    finally:
        api.close()
    assert row["held"] == refused.value.code == "E_UNSAFE_PATH", (row, refused.value)
    assert refused.value.remedy, refused.value
    assert good["file_status"] == "pending_approval" and good["problems"] == [], good


# -- where a refusal is -------------------------------------------------------------------------
@pytest.mark.parametrize("slug", ["../x", "R-Upper", "plans/rotate"])
def test_a_refused_slug_names_the_argument(repo: Path, tmp_path: Path, slug: str) -> None:
    api = _api(tmp_path, repo)
    try:
        with pytest.raises(PlangateError) as refused:
            api.submit(GOOD, slug)
        with pytest.raises(PlangateError) as checked:
            api.validate(GOOD, slug=slug)
    finally:
        api.close()
    for err in (refused.value, checked.value):
        assert err.code == "E_USAGE" and err.path == "slug", err
    # ``plans/rotate`` was written as ``plans/plans/rotate``, a plan nobody looked for
    assert not (repo / "plans" / "plans").exists()


def test_two_fenced_blocks_are_located_at_the_second(repo: Path, tmp_path: Path) -> None:
    block = "```json\n" + NESTED + "\n```\n"
    api = _api(tmp_path, repo)
    try:
        (err,) = api.validate(block + "\n" + block)["errors"]
    finally:
        api.close()
    assert err["code"] == "E_PARSE_MULTIBLOCK" and err["line"] == 5, err


def test_log_of_a_source_that_does_not_convert_answers_its_rows_code(
    repo: Path, tmp_path: Path
) -> None:
    """The next variant: a ``PLAN.json`` the daemon cannot convert is an ``unreadable`` row
    with its code; ``log`` answers that, never "no plan ... check the path"."""
    (repo / "plans" / "pc").mkdir(parents=True)
    (repo / "plans" / "pc" / "PLAN.json").write_text(PC_FLAG)
    commit_all(repo, "a source", AGENT)
    api = _api(tmp_path, repo)
    try:
        (row,) = api.status("plans/pc")["plans"]
        log = api.log("plans/pc")
    finally:
        api.close()
    assert row["status"] == "unreadable" and row["problem"]["code"] == "E_SCHEMA_INVALID", row
    assert log["status"] == "unreadable" and log["file_status"] is None, log
    assert [p.split(":")[0] for p in log["problems"]] == ["E_SCHEMA_INVALID"], log


def test_cli_convert_json_names_a_refused_sources_format(tmp_path: Path) -> None:
    """``plangate convert --json`` of a source the converter refuses answers the error shape
    with the format it was read as (fix128g's note: only ``validate`` named it); a source
    whose format was never found (not one JSON object) has no ``format`` key."""
    source = tmp_path / "contract.json"
    source.write_text(PC_FLAG)
    result = run_cli("convert", "--json", str(source), cwd=tmp_path)
    answer = json.loads(result.stdout)
    assert result.returncode != 0 and answer["ok"] is False, answer
    assert answer["format"] == "plan-contract", answer
    broken = tmp_path / "broken.json"
    broken.write_text('{"plan": {"name": "x"}, "actions": [')
    result = run_cli("convert", "--json", str(broken), cwd=tmp_path)
    answer = json.loads(result.stdout)
    assert answer["ok"] is False and "format" not in answer, answer
