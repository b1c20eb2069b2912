"""Caps at run time (SPEC §11): tool calls, retries included, and the run's wall time."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from controller.execution.executor import Engine
from tests.support.executor_kit import PY, appender, make_plan, run, statuses


def test_tool_calls_are_capped_with_retries_counted(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    failing = appender(calls, extra="sys.exit(1); ")
    config, plan_file = make_plan(
        tmp_path,
        [
            {"id": 1, "tool": "fail", "on_failure": "retry", "retries": 5},
            {"id": 2, "tool": "fail"},
        ],
        {"fail": failing},
        extra_config={"limits": {"max_actions": 10, "max_tool_calls": 3}},
    )
    outcome = run(Engine(config, backoff_base=0.01), plan_file)
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_LIMIT_EXCEEDED"
    assert "tool call 4, over the cap of 3" in outcome.error.message
    assert calls.read_text().splitlines() == ["x", "x", "x"]
    assert statuses(plan_file)[1] == "pending"


def test_a_plan_own_cap_wins_when_smaller_and_skip_does_not_bypass_it(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    config, plan_file = make_plan(
        tmp_path,
        [{"id": i, "tool": "append", "on_failure": "skip"} for i in (1, 2, 3)],
        {"append": appender(calls)},
        extra_config={"limits": {"max_actions": 10, "max_tool_calls": 100}},
    )
    text = plan_file.read_text().replace("actions:", "limits: {max_tool_calls: 2}\nactions:", 1)
    plan_file.write_text(text)
    from controller import fsutil
    from controller.plan import plans

    fsutil.write_atomic(plan_file, plans.freeze_text(plans.load_plan(plan_file, config)).text)
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_LIMIT_EXCEEDED" and outcome.action == 3
    assert calls.read_text().splitlines() == ["x", "x"]


def test_the_run_time_cap_stops_a_long_tool_and_the_plan(tmp_path: Path) -> None:
    marker = tmp_path / "second"
    sleeper = {"kind": "exec", "argv": [PY, "-c", "import time; time.sleep(60)"], "timeout": 120}
    config, plan_file = make_plan(
        tmp_path,
        [{"id": 1, "tool": "sleep"}, {"id": 2, "tool": "append"}],
        {"sleep": sleeper, "append": appender(marker)},
        extra_config={"limits": {"max_actions": 10, "max_runtime": "1s"}},
    )
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_LIMIT_EXCEEDED"
    assert "limits.max_runtime" in outcome.error.message
    assert not marker.exists()


# --- every wait takes its time from the run's budget (round 55) -----------------------------


def _checker(target: Path) -> dict[str, object]:
    """A check tool (idempotent, low risk) that notes each poll and never says ok."""
    tool = appender(target, extra="print(json.dumps({'ok': False})); sys.exit(0); ")
    return {**tool, "idempotent": True, "risk": "low"}


def test_verify_polling_stops_at_the_run_time_cap_whatever_on_failure(tmp_path: Path) -> None:
    polls, after = tmp_path / "polls", tmp_path / "after"
    verify = {"tool": "chk", "expect": {"path": "$.json.ok", "equals": True}}
    first = {"id": 1, "tool": "append", "on_failure": "skip"}
    config, plan_file = make_plan(
        tmp_path,
        [
            {**first, "verify": {**verify, "timeout": 600, "interval": 0.2}},
            {"id": 2, "tool": "after"},
        ],
        {"append": appender(tmp_path / "calls"), "chk": _checker(polls), "after": appender(after)},
        extra_config={"limits": {"max_actions": 10, "max_runtime": "1s"}},
    )
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_LIMIT_EXCEEDED" and outcome.action == 1
    assert "limits.max_runtime" in outcome.error.message
    assert polls.exists() and not after.exists()


def test_a_verify_poll_waits_for_the_cap_and_stops_there() -> None:
    from controller.execution import checks
    from controller.plan.schema import Verify

    spec = Verify.model_validate(
        {"tool": "chk", "expect": {"path": "$.ok", "equals": True}, "timeout": 600, "interval": 60}
    )
    calls: list[str] = []

    def call(name: str, params: dict[str, object], index: int, written: object) -> object:
        calls.append(name)
        return {"ok": False}

    found = checks.verify_poll(spec, lambda p: p, call, lambda: False, lambda: 0.01)
    assert found is not None and not found.ok and found.capped
    assert calls == ["chk"]
    uncapped = Verify.model_validate({**spec.model_dump(), "timeout": 0.01})
    found = checks.verify_poll(uncapped, lambda p: p, call, lambda: False, lambda: None)
    assert found is not None and not found.ok and not found.capped


def test_a_retry_back_off_is_cut_to_the_time_left(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    config, plan_file = make_plan(
        tmp_path,
        [{"id": 1, "tool": "fail", "on_failure": "retry", "retry": {"attempts": 3, "delay": 3600}}],
        {"fail": appender(calls, extra="sys.exit(1); ")},
        extra_config={"limits": {"max_actions": 10, "max_runtime": "1s"}},
    )
    # the back-off would otherwise sleep an hour: a thread, so that a regression fails here
    # instead of holding the suite (the join's bound is a hang guard, not a timing assert)
    done: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: done.update(o=run(Engine(config), plan_file)))
    worker.daemon = True
    worker.start()
    worker.join(300)
    assert not worker.is_alive(), "the retry back-off slept past max_runtime"
    outcome = done["o"]
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_LIMIT_EXCEEDED" and outcome.action == 1
    assert calls.read_text().splitlines() == ["x"]


def test_two_steps_never_take_the_last_call_together() -> None:
    """Round 54's ``par`` (seen failing in CI, 2026-11-29): parallel steps each checked the
    cap before either start was journaled, and both called: 3 calls under a cap of 2. The
    check and the holding of the call are one step now; the hold ends when the start is
    journaled (the journal's count has it then)."""
    from controller.execution.caps import CapBudget
    from controller.plan.profile import Caps

    journaled = [1]
    budget = CapBudget(Caps(10, 2, None, None), lambda: journaled[0], threading.Lock())
    assert budget.take_call("2") is None  # the last call, held for step 2
    refused = budget.take_call("3")  # step 3, before step 2's start is journaled
    assert refused is not None and refused.code == "E_LIMIT_EXCEEDED"
    journaled[0] += 1  # step 2's start is journaled ...
    budget.call_journaled()  # ... and its hold ends: still no call left
    assert budget.take_call("3") is not None
    nested = budget.nested(Caps(10, 5, None, None), lambda: 0, "nested plan plans/lib")
    assert nested.take_call("4/1") is not None  # the parent's cap holds for the child too
