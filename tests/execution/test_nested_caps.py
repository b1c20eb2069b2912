"""A pinned (nested) plan's own ``limits:`` hold inside its parent's run (SPEC §11, §12;
round 54): every key, the run-time ones by the engine (the nested plan's budget chained to
the parent's, the smaller remaining one wins), the others where the pinned plan is
validated. Outcomes are asserted (which tools ran, the codes recorded), never timings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.execution.executor import Engine
from controller.plan import plans
from tests.execution.test_executor_nested import write_child
from tests.support.executor_kit import PY, appender, execution, journal_records, make_plan, run

SLEEPER = {"kind": "exec", "argv": [PY, "-c", "import time; time.sleep(60)"], "timeout": 120}
CHECK = {"kind": "exec", "argv": [PY, "-c", "print('{\"ok\": true}')"], "idempotent": True,
         "risk": "low"}  # fmt: skip


def child(limits: dict[str, Any], tools: list[str], **top: Any) -> dict[str, Any]:
    return {
        "plan": {"name": "Child", "task": "Do little", "status": "draft"},
        "available_tools": [{"name": t} for t in sorted(set(tools))],
        **({"limits": limits} if limits else {}),
        **top,
        "actions": [
            {"id": i, "tool": t, "why": f"child {i}", "params": {"line": f"c{i}"}}
            for i, t in enumerate(tools, 1)
        ],
    }


def parent_of(
    root: Path, pin: str, tools: dict[str, Any], *, top: dict[str, Any] | None = None,
    **nested: Any,
) -> tuple[Any, Path]:  # fmt: skip
    actions = [
        {"id": 1, "plan": {"path": "plans/common/notify", "hash": pin}, **nested},
        {"id": 2, "tool": "add", "params": {"line": "after"}},
    ]
    return make_plan(root, actions, tools, top=top)


def ends(config: Any, plan_file: Path) -> dict[Any, dict[str, Any]]:
    return {r["id"]: r for r in journal_records(config, plan_file) if r["t"] == "end"}


@pytest.mark.parametrize("on_failure", ["stop", "skip"])
def test_the_pinned_plans_max_tool_calls_holds(tmp_path: Path, on_failure: str) -> None:
    effects = tmp_path / "effects"
    pin = write_child(tmp_path, child({"max_tool_calls": 1}, ["add", "add", "add"]))
    config, plan_file = parent_of(tmp_path, pin, {"add": appender(effects)}, on_failure=on_failure)
    outcome = run(Engine(config), plan_file)
    # the child's first call only; a cap is never skipped: the parent's action 2 never runs
    assert effects.read_text().splitlines() == ["c1"]
    assert outcome.status == "failed" and outcome.error is not None, outcome
    assert outcome.error.code == "E_LIMIT_EXCEEDED" and outcome.action == 1
    assert "nested plan plans/common/notify" in outcome.error.message
    assert "limits.max_tool_calls" in outcome.error.message
    found = ends(config, plan_file)
    assert found["1/2"]["status"] == "failed" and found["1/2"].get("no_call") is True
    assert found["1/2"]["error"]["code"] == "E_LIMIT_EXCEEDED"
    assert found[1]["status"] == "failed" and 2 not in found
    shown = {a["id"]: a["status"] for a in execution(plan_file)["actions"]}
    assert shown[1] == "failed" and shown[2] == "pending", shown


def test_the_pinned_plans_checks_count_toward_its_max_tool_calls(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    pre = [{"tool": "chk", "params": {}, "expect": {"path": "$.json.ok", "equals": True}}]
    data = child({"max_tool_calls": 1}, ["add"], preconditions=pre)
    data["available_tools"].append({"name": "chk"})
    pin = write_child(tmp_path, data)
    config, plan_file = parent_of(tmp_path, pin, {"add": appender(effects), "chk": CHECK})
    outcome = run(Engine(config), plan_file)
    assert not effects.exists()  # the precondition was the one call allowed
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_LIMIT_EXCEEDED", outcome.error


def test_the_parents_cap_still_bounds_a_nested_plan_with_a_larger_one(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    pin = write_child(tmp_path, child({"max_tool_calls": 10}, ["add", "add", "add"]))
    config, plan_file = parent_of(
        tmp_path, pin, {"add": appender(effects)}, top={"limits": {"max_tool_calls": 2}}
    )
    outcome = run(Engine(config), plan_file)
    # the nested action's own start is the parent's first call, c1 its second
    assert effects.read_text().splitlines() == ["c1"]
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_LIMIT_EXCEEDED"
    assert "nested plan" not in outcome.error.message  # the parent's cap, named as such


def test_the_pinned_plans_max_runtime_holds(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    pin = write_child(tmp_path, child({"max_runtime": 1}, ["sleep", "add"]))
    config, plan_file = parent_of(tmp_path, pin, {"add": appender(effects), "sleep": SLEEPER})
    outcome = run(Engine(config), plan_file)
    assert not effects.exists()  # neither the child's action 2 nor the parent's action 2
    assert outcome.status == "failed" and outcome.error is not None, outcome
    assert outcome.error.code == "E_LIMIT_EXCEEDED"
    assert "limits.max_runtime of nested plan plans/common/notify" in outcome.error.message
    found = ends(config, plan_file)
    assert found["1/1"]["error"]["code"] == "E_LIMIT_EXCEEDED"  # the sleeper was cut
    assert "1/2" not in found and 2 not in found


@pytest.mark.parametrize(
    ("limits", "tool"),
    [
        ({"max_actions": 1}, {"kind": "echo"}),
        ({"max_cost_usd": 1}, {"kind": "echo", "estimate": {"seconds": 0, "cost_usd": 1}}),
        ({"max_runtime": 1}, {"kind": "echo", "estimate": {"seconds": 1, "cost_usd": 0}}),
    ],
)
def test_the_pinned_plans_freeze_time_caps_make_the_parent_invalid(
    tmp_path: Path, limits: dict[str, Any], tool: dict[str, Any]
) -> None:
    """max_actions, max_cost_usd and the estimated run time are weighed where the pinned plan
    is validated, with its own limits: the parent does not validate, so it never runs."""
    old = write_child(tmp_path, child({}, ["add", "add"]))
    config, plan_file = parent_of(tmp_path, old, {"add": tool})  # valid without them
    pin = write_child(tmp_path, child(limits, ["add", "add"]))
    plan_file.write_text(plan_file.read_text().replace(old, pin))
    loaded = plans.load_plan(plan_file, config)
    assert not loaded.valid
    assert [p.code for p in loaded.problems] == ["E_LIMIT_EXCEEDED"], loaded.problems
    assert "actions[0].plan" in loaded.problems[0].path, loaded.problems


def test_the_pinned_plans_fallback_steps_count_toward_its_cap(tmp_path: Path) -> None:
    """A nested action's fallback steps are journaled under the nested action (``1/1.1``)
    and count toward the nested plan's ``max_tool_calls``."""
    effects = tmp_path / "effects"
    data = child({"max_tool_calls": 2}, ["fail"])
    data["available_tools"].append({"name": "add"})
    steps = [{"id": f"1.{n}", "tool": "add", "why": "undo", "params": {"line": f"f{n}"}}
             for n in (1, 2, 3)]  # fmt: skip
    data["actions"][0] |= {"on_failure": "fallback", "fallback": steps}
    pin = write_child(tmp_path, data)
    tools = {"add": appender(effects), "fail": appender(effects, extra="sys.exit(1); ")}
    config, plan_file = parent_of(tmp_path, pin, tools)
    outcome = run(Engine(config), plan_file)
    assert effects.read_text().splitlines() == ["c1", "f1"]  # two calls, the child's cap
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_LIMIT_EXCEEDED", outcome.error
    found = ends(config, plan_file)
    assert found["1/1.1"]["status"] == "succeeded" and "1.1" not in found
    assert found["1/1.2"]["error"]["code"] == "E_LIMIT_EXCEEDED"
    shown = {a["id"]: a["status"] for a in execution(plan_file)["actions"]}
    assert shown["1/1.1"] == "succeeded" and shown[2] == "pending", shown
