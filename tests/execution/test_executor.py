"""The engine end to end on echo and exec tools: order, references, outputs, state, policies."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.errors import PlangateError
from controller.execution.executor import Engine
from controller.plan import plans, yamlio
from tests.support.executor_kit import (
    PY,
    appender,
    execution,
    journal_records,
    make_plan,
    run,
    statuses,
)

ECHO = {"say": {"kind": "echo"}}


def test_runs_actions_in_order_and_passes_outputs(tmp_path: Path) -> None:
    actions = [
        {
            "id": 1,
            "tool": "say",
            "params": {"items": [{"id": "a"}, {"id": "b"}]},
            "outputs": [
                {"name": "ids", "path": "$.items[*].id"},
                {"name": "first", "path": "$.items[0].id"},
            ],
        },
        {
            "id": 2,
            "tool": "say",
            "params": {
                "got": "$<actions[1].outputs.ids>",
                "text": "first=$<actions[1].outputs.first>",
                "whole": "$<actions[1].result.items[1]>",
                "who": "$<approval.by>",
                "plan": "$<plan.name>",
            },
            "outputs": [{"name": "got", "path": "$.got"}],
        },
    ]
    config, plan_file = make_plan(tmp_path, actions, ECHO)
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "completed" and outcome.error is None
    block = execution(plan_file)
    assert block["status"] == "completed" and block["finished_at"]
    assert [a["status"] for a in block["actions"]] == ["succeeded", "succeeded"]
    assert block["actions"][0]["outputs"] == {"ids": ["a", "b"], "first": "a"}
    second = [r for r in journal_records(config, plan_file) if r["t"] == "end"][1]
    assert second["result"] == {
        "got": ["a", "b"],
        "text": "first=a",
        "whole": {"id": "b"},
        "who": "alice@example.com",
        "plan": "Demo plan",
    }
    assert block["actions"][1]["key"].startswith("step:")


def test_state_write_keeps_comments_and_hash(tmp_path: Path) -> None:
    config, plan_file = make_plan(tmp_path, [{"id": 1, "tool": "say"}], ECHO)
    before = plan_file.read_text()
    assert run(Engine(config), plan_file).status == "completed"
    after = plan_file.read_text()
    assert after.startswith("# written by the test\n")
    assert after[: len(before)] == before  # everything the author wrote is untouched
    assert "EXECUTION_LOG.md" in {p.name for p in plan_file.parent.iterdir()}


def test_refuses_a_plan_changed_after_freezing(tmp_path: Path) -> None:
    config, plan_file = make_plan(tmp_path, [{"id": 1, "tool": "say", "params": {"n": 1}}], ECHO)
    plan_file.write_text(plan_file.read_text().replace("n: 1", "n: 2"))
    with pytest.raises(PlangateError) as info:
        run(Engine(config), plan_file)
    assert info.value.code == "E_PLAN_HASH_MISMATCH"


def test_refuses_a_refrozen_plan_that_is_not_the_approved_one(tmp_path: Path) -> None:
    """Edited and frozen again after approval: valid and frozen, but not what was approved."""
    config, plan_file = make_plan(tmp_path, [{"id": 1, "tool": "say", "params": {"n": 1}}], ECHO)
    approved = plans.load_plan(plan_file, config).hash
    edited = plans.validate_text(plan_file.read_text().replace("n: 1", "n: 2"), plan_file, config)
    plan_file.write_text(plans.freeze_text(edited).text)
    with pytest.raises(PlangateError) as info:
        Engine(config).run(
            plan_file, plan_id="plans/demo", approval={"by": "a@b", "plan_hash": approved}
        )
    assert info.value.code == "E_PLAN_HASH_MISMATCH"


def test_refuses_an_unfrozen_plan(tmp_path: Path) -> None:
    config, plan_file = make_plan(tmp_path, [{"id": 1, "tool": "say"}], ECHO)
    doc = yamlio.read_yaml(plan_file.read_text())
    plan_file.write_text(yamlio.set_block(doc, "frozen", None))
    with pytest.raises(PlangateError) as info:
        run(Engine(config), plan_file)
    assert info.value.code == "E_PLAN_NOT_FROZEN"


def test_finished_actions_never_run_again(tmp_path: Path) -> None:
    target = tmp_path / "effects.txt"
    config, plan_file = make_plan(
        tmp_path, [{"id": 1, "tool": "add", "params": {"line": "one"}}], {"add": appender(target)}
    )
    engine = Engine(config)
    assert run(engine, plan_file).status == "completed"
    assert run(engine, plan_file).status == "completed"
    assert run(engine, plan_file, resume=True).status == "completed"
    assert target.read_text() == "one\n"


def test_stop_policy_ends_the_plan_failed(tmp_path: Path) -> None:
    actions = [
        {"id": 1, "tool": "fail"},
        {"id": 2, "tool": "say"},
    ]
    tools = {"fail": {"kind": "exec", "argv": [PY, "-c", "import sys; sys.exit('boom')"]}, **ECHO}
    config, plan_file = make_plan(tmp_path, actions, tools)
    outcome = run(Engine(config), plan_file)
    assert (outcome.status, outcome.action) == ("failed", 1)
    assert outcome.error is not None and outcome.error.code == "E_TOOL_FAILED"
    assert "boom" in outcome.error.message
    assert statuses(plan_file) == ["failed", "pending"]
    assert execution(plan_file)["actions"][0]["error"]["code"] == "E_TOOL_FAILED"


def test_failed_action_is_not_rerun_without_resume(tmp_path: Path) -> None:
    flag = tmp_path / "ok"
    code = f"import os,sys; sys.exit(0 if os.path.exists({str(flag)!r}) else 3)"
    config, plan_file = make_plan(
        tmp_path, [{"id": 1, "tool": "t"}], {"t": {"kind": "exec", "argv": [PY, "-c", code]}}
    )
    engine = Engine(config)
    assert run(engine, plan_file).status == "failed"
    flag.write_text("")
    again = run(engine, plan_file)
    assert again.status == "failed" and again.error is not None
    assert again.error.code == "E_TOOL_FAILED"
    assert [r["t"] for r in journal_records(config, plan_file)].count("start") == 1
    assert run(engine, plan_file, resume=True).status == "completed"
    assert execution(plan_file)["actions"][0]["attempts"] == 2


def test_skip_policy_goes_on_and_a_reference_to_it_is_unavailable(tmp_path: Path) -> None:
    actions = [
        {"id": 1, "tool": "fail", "on_failure": "skip", "outputs": [{"name": "x", "path": "$.x"}]},
        {"id": 2, "tool": "say", "params": {"ok": True}},
        {"id": 3, "tool": "say", "params": {"x": "$<actions[1].outputs.x>"}},
    ]
    tools = {"fail": {"kind": "exec", "argv": [PY, "-c", "raise SystemExit(1)"]}, **ECHO}
    config, plan_file = make_plan(tmp_path, actions, tools)
    outcome = run(Engine(config), plan_file)
    assert (outcome.status, outcome.action) == ("failed", 3)
    assert outcome.error is not None and outcome.error.code == "E_REF_UNAVAILABLE"
    assert statuses(plan_file) == ["skipped", "succeeded", "failed"]


def test_retry_policy_retries_with_the_same_params(tmp_path: Path) -> None:
    count = tmp_path / "count"
    code = (
        "import sys,json; d=json.load(sys.stdin); p=" + repr(str(count)) + "; "
        "open(p,'a').write(json.dumps(d)+'\\n'); "
        "n=len(open(p).read().splitlines()); sys.exit(0 if n>=3 else 1)"
    )
    actions = [
        {
            "id": 1,
            "tool": "flaky",
            "on_failure": "retry",
            "retries": 3,
            "params": {"v": "$<inputs.v>"},
        }
    ]
    config, plan_file = make_plan(
        tmp_path, actions, {"flaky": {"kind": "exec", "argv": [PY, "-c", code]}}, inputs={"v": 7}
    )
    outcome = run(Engine(config, backoff_base=0.01), plan_file)
    assert outcome.status == "completed"
    assert count.read_text().splitlines() == ['{"v": 7}'] * 3
    assert execution(plan_file)["actions"][0]["attempts"] == 3


def test_retry_gives_up_after_retries_and_stops(tmp_path: Path) -> None:
    count = tmp_path / "count"
    code = f"open({str(count)!r},'a').write('x'); raise SystemExit(1)"
    actions = [
        {"id": 1, "tool": "bad", "on_failure": "retry", "retries": 2},
        {"id": 2, "tool": "say"},
    ]
    config, plan_file = make_plan(
        tmp_path, actions, {"bad": {"kind": "exec", "argv": [PY, "-c", code]}, **ECHO}
    )
    outcome = run(Engine(config, backoff_base=0.01), plan_file)
    assert (outcome.status, outcome.action) == ("failed", 1)
    assert count.read_text() == "xxx"
    assert statuses(plan_file) == ["failed", "pending"]


def test_permanent_errors_are_not_retried(tmp_path: Path) -> None:
    actions = [
        {
            "id": 1,
            "tool": "say",
            "on_failure": "retry",
            "retries": 5,
            "outputs": [{"name": "gone", "path": "$.nothing"}],
        }
    ]
    config, plan_file = make_plan(tmp_path, actions, ECHO)
    outcome = run(Engine(config, backoff_base=0.01), plan_file)
    assert outcome.error is not None and outcome.error.code == "E_OUTPUT_MISSING"
    assert execution(plan_file)["actions"][0]["attempts"] == 1


def test_optional_output_absent_then_reference_unavailable(tmp_path: Path) -> None:
    actions = [
        {
            "id": 1,
            "tool": "say",
            "outputs": [{"name": "maybe", "path": "$.nope", "optional": True}],
        },
        {"id": 2, "tool": "say", "params": {"v": "$<actions[1].outputs.maybe>"}},
    ]
    config, plan_file = make_plan(tmp_path, actions, ECHO)
    outcome = run(Engine(config), plan_file)
    assert (outcome.status, outcome.action) == ("failed", 2)
    assert outcome.error is not None and outcome.error.code == "E_REF_UNAVAILABLE"
    assert statuses(plan_file) == ["succeeded", "failed"]


def test_params_schema_checked_after_resolution(tmp_path: Path) -> None:
    tools = {
        "say": {"kind": "echo"},
        "strict": {
            "kind": "echo",
            "params_schema": {
                "type": "object",
                "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}},
            },
        },
    }
    actions = [
        {
            "id": 1,
            "tool": "say",
            "params": {"n": "Bad Name!"},
            "outputs": [{"name": "n", "path": "$.n"}],
        },
        {"id": 2, "tool": "strict", "params": {"name": "$<actions[1].outputs.n>"}},
    ]
    config, plan_file = make_plan(tmp_path, actions, tools)
    outcome = run(Engine(config), plan_file)
    assert (outcome.status, outcome.action) == ("failed", 2)
    assert outcome.error is not None and outcome.error.code == "E_PARAMS_INVALID"


def test_gate_pauses_and_continues_from_exactly_there(tmp_path: Path) -> None:
    target = tmp_path / "effects.txt"
    actions = [
        {"id": 1, "tool": "add", "params": {"line": "one"}},
        {"id": 2, "tool": "add", "params": {"line": "two"}, "requires_approval": True},
        {"id": 3, "tool": "add", "params": {"line": "three"}},
    ]
    config, plan_file = make_plan(tmp_path, actions, {"add": appender(target)})
    engine = Engine(config)
    outcome = run(engine, plan_file)
    assert (outcome.status, outcome.action) == ("awaiting_approval", 2)
    assert target.read_text() == "one\n"
    assert execution(plan_file)["status"] == "awaiting_approval"
    assert run(engine, plan_file, gate_approved=99).status == "awaiting_approval"
    assert target.read_text() == "one\n"
    assert run(engine, plan_file, gate_approved=2).status == "completed"
    assert target.read_text() == "one\ntwo\nthree\n"


def test_abort_stops_before_the_next_action(tmp_path: Path) -> None:
    target = tmp_path / "effects.txt"
    actions = [{"id": i, "tool": "add", "params": {"line": str(i)}} for i in (1, 2, 3)]
    config, plan_file = make_plan(tmp_path, actions, {"add": appender(target)})
    outcome = run(Engine(config), plan_file, abort_requested=lambda: target.exists())
    assert (outcome.status, outcome.action) == ("aborted", 2)
    assert outcome.error is not None and outcome.error.code == "E_ABORTED"
    assert target.read_text() == "1\n"
    assert execution(plan_file)["status"] == "aborted"


def test_the_abort_check_reads_the_branch_once_per_action(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks before one call share one clear answer (round 83: three reads of the
    branch ref per action); a tool's call or end, or a few milliseconds, and it is asked
    again: an abort its tool made stops the next action. The few milliseconds are widened
    here so that a loaded machine cannot expire the answer between two checks (CI: 5 reads);
    the expiry has its own test below."""
    from controller.execution import executor

    monkeypatch.setattr(executor, "ABORT_SHARED", 3600.0)
    target = tmp_path / "effects.txt"
    actions = [{"id": i, "tool": "add", "params": {"line": str(i)}} for i in (1, 2, 3)]
    config, plan_file = make_plan(tmp_path, actions, {"add": appender(target)})
    asked: list[int] = []

    def abort_requested() -> bool:
        asked.append(1)
        return target.exists() and len(target.read_text().splitlines()) >= 2

    outcome = run(Engine(config), plan_file, abort_requested=abort_requested)
    assert (outcome.status, outcome.action) == ("aborted", 3)
    assert target.read_text() == "1\n2\n"
    assert len(asked) == 3  # once before each of actions 1 and 2, and the abort before 3


def test_the_shared_abort_answer_expires(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ABORT_SHARED with no call between, a check asks the branch again."""
    from controller.execution import executor

    monkeypatch.setattr(executor, "ABORT_SHARED", 0.0)
    target = tmp_path / "effects.txt"
    actions = [{"id": i, "tool": "add", "params": {"line": str(i)}} for i in (1, 2)]
    config, plan_file = make_plan(tmp_path, actions, {"add": appender(target)})
    asked: list[int] = []
    outcome = run(Engine(config), plan_file, abort_requested=lambda: bool(asked.append(1)))
    assert outcome.status == "completed"
    assert len(asked) == 6  # the scheduler's, the step's before and its checking, each


def test_stop_is_resumable_and_records_no_failure(tmp_path: Path) -> None:
    target = tmp_path / "effects.txt"
    actions = [{"id": i, "tool": "add", "params": {"line": str(i)}} for i in (1, 2, 3)]
    config, plan_file = make_plan(tmp_path, actions, {"add": appender(target)})
    engine = Engine(config)
    outcome = run(engine, plan_file, stop_requested=lambda: target.exists())
    assert (outcome.status, outcome.action) == ("stopped", 2)
    assert statuses(plan_file) == ["succeeded", "pending", "pending"]
    assert run(engine, plan_file).status == "completed"
    assert target.read_text() == "1\n2\n3\n"


def test_log_has_a_section_per_action(tmp_path: Path) -> None:
    actions = [{"id": 1, "tool": "say", "params": {"msg": "hi"}}, {"id": 2, "tool": "say"}]
    config, plan_file = make_plan(tmp_path, actions, ECHO)
    run(Engine(config), plan_file)
    log = (plan_file.parent / "EXECUTION_LOG.md").read_text()
    assert log.startswith("# Execution log: Demo plan")
    assert "| Approved by | alice@example.com |" in log
    assert "## Action 1: say" in log and "## Action 2: say" in log
    assert '"msg": "hi"' in log and "**Why:** step 1" in log


def test_dollar_brace_text_outside_params_reaches_the_tool_as_frozen(tmp_path: Path) -> None:
    # legacy ${...} conversion once applied to inputs too: the tool got text nobody approved
    actions = [{"id": 1, "tool": "say", "params": {"cmd": "$<inputs.tmpl>", "old": "${plan.name}"}}]
    inputs = {"tmpl": "echo ${plan.name} ${inputs.x}"}
    config, plan_file = make_plan(tmp_path, actions, ECHO, inputs=inputs)
    assert "old: $<plan.name>" in plan_file.read_text()  # params: converted when frozen
    assert run(Engine(config), plan_file).status == "completed"
    (end,) = [r for r in journal_records(config, plan_file) if r["t"] == "end"]
    assert end["result"] == {"cmd": "echo ${plan.name} ${inputs.x}", "old": "Demo plan"}


def test_a_result_nested_too_deep_fails_the_action_cleanly(tmp_path: Path) -> None:
    # once: deepcopy/redaction of a 900-deep result raised RecursionError ("internal error")
    deep = {"kind": "exec", "argv": [PY, "-c", "print('[' * 900 + ']' * 900)"]}
    actions = [
        {"id": 1, "tool": "deep", "outputs": [{"name": "o", "path": "$.json"}]},
        {"id": 2, "tool": "say", "params": {"x": "$<actions[1].outputs.o>"}},
    ]
    config, plan_file = make_plan(tmp_path, actions, {**ECHO, "deep": deep})
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "failed" and outcome.action == 1 and outcome.error is not None
    assert outcome.error.code == "E_TOOL_OUTPUT_INVALID"
    assert "nested deeper than 100 levels" in outcome.error.message
    assert statuses(plan_file) == ["failed", "pending"]


def test_a_long_plan_s_checkpoints_write_the_block_they_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The execution block a checkpoint bounds (whole, its steps slimmed, or counted) is
    dumped once to be measured and that text is what PLAN.yml gets (round 83: three dumps
    a checkpoint); the file reads back as the block, whichever form it took."""
    from controller.execution import checkpoints

    seen: list[tuple[dict[str, object], str | None]] = []
    bounded = checkpoints._bounded

    def spy(block: dict[str, object], limit: int) -> tuple[dict[str, object], str | None]:
        found = bounded(block, limit)
        seen.append(found)
        return found

    monkeypatch.setattr(checkpoints, "_bounded", spy)
    actions = [
        {
            "id": i,
            "tool": "echo",
            "params": {"value": "v" * 150},
            "outputs": [{"name": "value", "path": "$.value"}],
        }
        for i in range(1, 201)
    ]
    config, plan_file = make_plan(tmp_path, actions, {"echo": {"kind": "echo"}})
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "completed", outcome
    assert any(text is not None for _, text in seen)  # a block measured by its YAML
    for block, text in seen:
        if text is not None:
            assert text == yamlio.dump({"execution": block})
    assert execution(plan_file) == seen[-1][0] == outcome.execution
