"""MCP ``validate``'s ``approvals_needed`` by the folder's rules (round 122,
validate-needs-ignore-path-rules: with a ``plans/q/**`` rule asking 2 approvals, ``validate``
answered "1 approval (default: no rule matches)" for a plan ``submit`` at ``q/a`` then
answered, and the controller froze, with 2). Given the ``slug`` it will be submitted under,
``validate`` answers what ``submit`` there answers; without one, never "no rule matches"
where a ``paths`` rule could decide: it names each such rule (``by_path``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.errors import UsageError
from controller.service.agentapi import AgentApi
from controller.settings import config_from_data

AGENT = ("Agent Smith", "agent@example.com")
RULES = [
    {"match": {"paths": ["plans/q/**"]}, "require": [{"count": 2}]},
    {"match": {"risk": "high"}, "require": [{"group": "ops", "count": 2}]},
    {
        "match": {"paths": ["plans/big/*", "plans/huge/*"], "risk": "high"},
        "require": [{"count": 3}],
    },
]


def _plan(tool: str) -> str:
    return (
        f"plan: {{name: n, task: t, status: pending_approval}}\n"
        f"available_tools: [{{name: {tool}}}]\n"
        f"actions:\n  - {{id: 1, tool: {tool}, why: say, params: {{m: x}}}}\n"
    )


def _api(repo: Path, tmp_path: Path, rules: list[dict[str, Any]]) -> AgentApi:
    return AgentApi(
        config_from_data(
            {
                "repo": str(repo),
                "state_dir": str(tmp_path / "state"),
                "approval": {
                    "approvers": ["alice@example.com", "*@ops.example.com"],
                    "groups": {"ops": ["*@ops.example.com"]},
                    "rules": rules,
                },
                "tools": {"lo": {"kind": "echo"}, "hi": {"kind": "echo", "risk": "high"}},
                "agent": {"identity": {"name": AGENT[0], "email": AGENT[1]}},
            },
            tmp_path / "plangate.yml",
        )
    )


@pytest.mark.parametrize(
    "tool,slug", [("lo", "q/a"), ("lo", "q/b/c"), ("hi", "q/r"), ("hi", "n-hi"), ("lo", "q.x/a")]
)
def test_validate_with_the_slug_answers_as_submit_does(
    repo: Path, tmp_path: Path, tool: str, slug: str
) -> None:
    api = _api(repo, tmp_path, RULES)
    try:
        checked = api.validate(_plan(tool), slug=slug)["approvals_needed"]
        submitted = api.submit(_plan(tool), slug)["approvals_needed"]
    finally:
        api.close()
    assert checked["policy"] == submitted["policy"] and "by_path" not in checked
    assert checked["summary"] == submitted["summary"]


def test_validate_without_a_slug_names_the_rules_the_folder_could_bring_in(
    repo: Path, tmp_path: Path
) -> None:
    api = _api(repo, tmp_path, RULES)
    try:
        low = api.validate(_plan("lo"))["approvals_needed"]
        high = api.validate(_plan("hi"))["approvals_needed"]
    finally:
        api.close()
    # a low-risk plan: rule 0 under plans/q/**, else the default (rule 2 asks risk high)
    assert "no rule matches" not in low["summary"], low
    assert low["policy"] == {"rule": None, "require": [{"group": None, "count": 1}]}
    assert [(e["paths"], e["policy"]["rule"]) for e in low["by_path"]] == [(["plans/q/**"], 0)]
    assert low["summary"].startswith("depends on the folder: 2 approvals (approval.rules[0])")
    assert "elsewhere 1 approval (the default)" in low["summary"]
    # a high-risk one: rule 0 under plans/q/**, else rule 1 (rule 2 comes after it: never)
    assert high["policy"]["rule"] == 1
    assert [e["policy"]["rule"] for e in high["by_path"]] == [0]
    assert "elsewhere 2 from ops (approval.rules[1])" in high["summary"]


def test_without_paths_rules_the_answer_is_as_before(repo: Path, tmp_path: Path) -> None:
    api = _api(repo, tmp_path, RULES[1:2])
    try:
        low = api.validate(_plan("lo"))["approvals_needed"]
        high = api.validate(_plan("hi"))["approvals_needed"]
    finally:
        api.close()
    assert low["summary"] == "1 approval (default: no rule matches)" and "by_path" not in low
    assert high["summary"] == "2 from ops (approval.rules[0])" and "by_path" not in high


@pytest.mark.parametrize("slug", ["Q/A", "../x", "q//a", "q/a/PLAN.yml", "a" * 70])
def test_a_slug_submit_refuses_validate_refuses(repo: Path, tmp_path: Path, slug: str) -> None:
    api = _api(repo, tmp_path, RULES)
    try:
        with pytest.raises(UsageError):
            api.submit(_plan("lo"), slug)
        with pytest.raises(UsageError):
            api.validate(_plan("lo"), slug=slug)
    finally:
        api.close()
