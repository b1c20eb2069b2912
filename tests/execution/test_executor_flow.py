"""The engine's control flow from SPEC §12: retry settings, plan-level on_failure, checks,
fallback, ask, per-action idempotent. Real tools (echo, exec); the journal and PLAN.yml are
read back the way a user (or the controller) reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller.execution.executor import Engine
from tests.support.executor_kit import (
    PY,
    appender,
    execution,
    journal_records,
    make_plan,
    run,
    statuses,
)

ECHO = {"kind": "echo", "idempotent": True, "risk": "low"}


def counter_tool(counter: Path, fail_until: int, payload: str = "{}") -> dict[str, Any]:
    """An exec tool that fails until it has been called ``fail_until`` times, counting calls."""
    code = (
        "import sys,json,os; p=sys.argv[1]; n=int(open(p).read()) if os.path.exists(p) else 0; "
        "n+=1; open(p,'w').write(str(n)); "
        f"sys.exit(1) if n<{fail_until} else print(json.dumps({{'calls': n, **{payload}}}))"
    )
    return {
        "kind": "exec",
        "argv": [PY, "-c", code, str(counter)],
        "idempotent": True,
        "risk": "low",
    }


def calls(counter: Path) -> int:
    return int(counter.read_text()) if counter.exists() else 0


# --- retry ------------------------------------------------------------------------------


def test_retry_settings_bound_the_calls(tmp_path: Path) -> None:
    counter = tmp_path / "n"
    retry = {"attempts": 2, "delay": 0.01, "max_delay": 0.02, "backoff": 3}
    action = {"id": 1, "tool": "flaky", "on_failure": "retry", "retry": retry}
    config, plan_file = make_plan(tmp_path, [action], {"flaky": counter_tool(counter, 5)})
    outcome = run(Engine(config), plan_file)
    assert (outcome.status, outcome.action) == ("failed", 1)
    assert calls(counter) == 3  # attempts: 2 means at most 3 calls
    ends = [r for r in journal_records(config, plan_file) if r["t"] == "end"]
    assert [e["retry"] for e in ends] == [True, True, False]


def test_plan_level_on_failure_is_the_default_and_retries_keeps_working(tmp_path: Path) -> None:
    counter, other = tmp_path / "n", tmp_path / "m"
    actions = [
        {"id": 1, "tool": "flaky", "retries": 1},  # the older form, with the plan's retry
        {"id": 2, "tool": "other", "on_failure": "skip"},  # its own setting wins
    ]
    tools = {"flaky": counter_tool(counter, 2), "other": counter_tool(other, 9)}
    config, plan_file = make_plan(tmp_path, actions, tools, top={"on_failure": "retry"})
    outcome = run(Engine(config, backoff_base=0.01), plan_file)
    assert outcome.status == "completed"
    assert (calls(counter), calls(other)) == (2, 1)
    assert statuses(plan_file) == ["succeeded", "skipped"]


# --- checks -----------------------------------------------------------------------------


def test_failed_precondition_stops_before_the_tool_runs(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    action = {
        "id": 1,
        "tool": "add",
        "preconditions": [
            {
                "tool": "probe",
                "params": {"free": False},
                "expect": {"path": "$.free", "equals": True},
            }
        ],
    }
    tools = {"add": appender(effects), "probe": ECHO}
    config, plan_file = make_plan(tmp_path, [action], tools)
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "failed"
    assert outcome.error is not None and outcome.error.code == "E_PRECONDITION_FAILED"
    assert "$.free is false (expected equals true)" in outcome.error.message
    assert not effects.exists()
    log = plan_file.with_name("EXECUTION_LOG.md").read_text()
    assert "precondition 1 (`probe`): ❌ does not hold" in log


def test_plan_preconditions_run_before_the_first_action(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    pre = {
        "tool": "probe",
        "params": {"env": "prod"},
        "expect": [{"path": "$.env", "in": ["staging"]}],
    }
    config, plan_file = make_plan(
        tmp_path, [{"id": 1, "tool": "add"}], {"add": appender(effects), "probe": ECHO},
        top={"preconditions": [pre]},
    )  # fmt: skip
    outcome = run(Engine(config), plan_file)
    assert outcome.error is not None and outcome.error.code == "E_PRECONDITION_FAILED"
    assert not effects.exists()
    assert "**Plan preconditions:**" in plan_file.with_name("EXECUTION_LOG.md").read_text()


def test_verify_over_the_result_then_retry(tmp_path: Path) -> None:
    counter = tmp_path / "n"
    tool = counter_tool(counter, 1)
    action = {
        "id": 1,
        "tool": "deploy",
        "on_failure": "retry",
        "retry": {"attempts": 5, "delay": 0},
        "verify": {"expect": {"path": "$.json.calls", "equals": 3}},
    }
    config, plan_file = make_plan(tmp_path, [action], {"deploy": tool})
    assert run(Engine(config), plan_file).status == "completed"
    assert calls(counter) == 3
    checks = [r for r in journal_records(config, plan_file) if r["t"] == "check"]
    assert [c["ok"] for c in checks] == [False, False, True]


def test_verify_polls_a_check_tool_until_it_holds(tmp_path: Path) -> None:
    counter = tmp_path / "n"
    probe = counter_tool(counter, 1, "{'status': 'rolled_out' if n >= 3 else 'pending'}")
    action = {
        "id": 1,
        "tool": "deploy",
        "verify": {
            "tool": "status",
            "expect": {"path": "$.json.status", "matches": "rolled_.*"},
            "timeout": 30,
            "interval": 0.01,
        },
    }
    config, plan_file = make_plan(tmp_path, [action], {"deploy": ECHO, "status": probe})
    assert run(Engine(config), plan_file).status == "completed"
    assert calls(counter) == 3
    log = plan_file.with_name("EXECUTION_LOG.md").read_text()
    assert "verify (`status`): ✅ holds after 3 polls" in log


def test_verify_that_never_holds_fails_with_its_code(tmp_path: Path) -> None:
    action = {
        "id": 1,
        "tool": "deploy",
        "params": {"state": "pending"},
        "verify": {
            "tool": "status",
            "expect": {"path": "$.s", "not_equals": None},
            "timeout": 0.05,
            "interval": 0.01,
        },
    }
    config, plan_file = make_plan(tmp_path, [action], {"deploy": ECHO, "status": ECHO})
    outcome = run(Engine(config), plan_file)
    assert outcome.error is not None and outcome.error.code == "E_VERIFY_FAILED"
    assert "matched nothing" in outcome.error.message


# --- fallback and ask -------------------------------------------------------------------


def test_fallback_runs_instead_and_the_plan_goes_on(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    actions = [
        {
            "id": 1,
            "tool": "broken",
            "on_failure": "fallback",
            "fallback": [
                {"id": "1.1", "tool": "add", "why": "roll back", "params": {"line": "rollback"}},
                {"id": "1.2", "tool": "add", "why": "tell", "params": {"line": "told"}},
            ],
        },
        {"id": 2, "tool": "add", "params": {"line": "after"}},
    ]
    broken = {"kind": "exec", "argv": [PY, "-c", "raise SystemExit(3)"]}
    config, plan_file = make_plan(tmp_path, actions, {"broken": broken, "add": appender(effects)})
    assert run(Engine(config), plan_file).status == "completed"
    assert effects.read_text() == "rollback\ntold\nafter\n"
    shown = [(a["id"], a["status"]) for a in execution(plan_file)["actions"]]
    assert shown == [(1, "skipped"), ("1.1", "succeeded"), ("1.2", "succeeded"), (2, "succeeded")]
    log = plan_file.with_name("EXECUTION_LOG.md").read_text()
    assert "## Fallback step 1.1: add" in log and "(its fallback ran)" in log


def test_failed_fallback_fails_the_plan(tmp_path: Path) -> None:
    broken = {"kind": "exec", "argv": [PY, "-c", "raise SystemExit(3)"]}
    actions = [
        {
            "id": 1,
            "tool": "broken",
            "on_failure": "fallback",
            "fallback": [{"id": "1.1", "tool": "broken", "why": "also broken"}],
        },
        {"id": 2, "tool": "broken"},
    ]
    config, plan_file = make_plan(tmp_path, actions, {"broken": broken})
    outcome = run(Engine(config), plan_file)
    assert (outcome.status, outcome.action) == ("failed", "1.1")


def test_ask_pauses_then_a_new_approval_retries_once(tmp_path: Path) -> None:
    counter = tmp_path / "n"
    actions = [{"id": 1, "tool": "flaky", "on_failure": "ask"}, {"id": 2, "tool": "echo"}]
    config, plan_file = make_plan(
        tmp_path, actions, {"flaky": counter_tool(counter, 3), "echo": ECHO}
    )
    engine = Engine(config)
    first = run(engine, plan_file)
    assert (first.status, first.action) == ("awaiting_approval", 1)
    assert first.error is not None and first.error.code == "E_TOOL_FAILED"
    # Run again without an approval for it: still waiting, nothing called.
    assert run(engine, plan_file).status == "awaiting_approval"
    assert calls(counter) == 1
    approval = {"by": "bob@example.com", "commit": "b0b"}
    again = engine.run(plan_file, plan_id="plans/demo", approval=approval, gate_approved=1)
    assert again.status == "awaiting_approval" and calls(counter) == 2
    # The same approval cannot answer the next ask; a new one can.
    same = engine.run(plan_file, plan_id="plans/demo", approval=approval, gate_approved=1)
    assert same.status == "awaiting_approval" and calls(counter) == 2
    approval = {"by": "bob@example.com", "commit": "b0b2"}
    done = engine.run(plan_file, plan_id="plans/demo", approval=approval, gate_approved=1)
    assert done.status == "completed" and calls(counter) == 3
    assert statuses(plan_file) == ["succeeded", "succeeded"]


def test_ask_then_abort_ends_the_plan(tmp_path: Path) -> None:
    broken = {"kind": "exec", "argv": [PY, "-c", "raise SystemExit(3)"]}
    config, plan_file = make_plan(
        tmp_path, [{"id": 1, "tool": "b", "on_failure": "ask"}], {"b": broken}
    )
    engine = Engine(config)
    assert run(engine, plan_file).status == "awaiting_approval"
    outcome = run(engine, plan_file, gate_approved=1, abort_requested=lambda: True)
    assert outcome.status == "aborted"


def test_expect_compares_as_json() -> None:
    from controller.execution.checks import same

    assert same(1, 1.0) and not same(True, 1) and not same(1, "1")
    assert same({"a": [1, None]}, {"a": [1.0, None]}) and not same({"a": 1}, {"a": 1, "b": 2})
