"""A plan paused at a gate whose journal was lost (round 45, issue 11).

The service writes a ``begin`` record for the gate approval's start commit, so the journal
holds no run; the plan's committed ``execution:`` block (PLAN.yml, written by the paused run)
records action 1 ``succeeded``. The committed record is the truth for what already ran:
action 1 never runs again, the gate goes on with the outputs the record shows whole, and a
value it cannot give (a result, an output shown masked, the approval that started the plan)
fails the reference E_ACTION_IN_DOUBT: nothing is called with a masked value.
(tests/adversarial/test_round45_runs_lostgate.py plays it through the service.)

Round 52: the block is not hashed, so the record the run goes on from is the controller's
own, handed to the engine (``record=``: the service reads it from its own commits); the run
goes on only when the file's block records the same progress, else it fails closed
(tests/adversarial/test_round52_runs_*.py play it through the service).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from controller.execution.executor import Engine, begin
from controller.plan import plans
from tests.support.executor_kit import PY, execution, journal_records, make_plan, run

SECRET = "Zq8Wx3Yv7Ut2-round45"


def _tool(target: Path) -> dict[str, Any]:
    """An exec tool that appends its params to ``target`` and prints them back as JSON."""
    code = (
        f"import sys,json; d=sys.stdin.read(); open({str(target)!r},'a').write(d+'\\n'); print(d)"
    )
    return {"kind": "exec", "argv": [PY, "-c", code]}


def _lose_and_approve(tmp_path: Path, gated: dict[str, Any], first: dict[str, Any]) -> Any:
    calls = tmp_path / "calls.jsonl"
    actions = [
        {"id": 1, "tool": "rec", "params": first, "outputs": [{"name": "x", "path": "$.json.v"}]},
        {"id": 2, "tool": "rec", "requires_approval": True, "params": gated},
    ]
    config, plan_file = make_plan(tmp_path, actions, {"rec": _tool(calls)})
    assert run(Engine(config), plan_file).status == "awaiting_approval"
    assert len(calls.read_text().splitlines()) == 1
    shutil.rmtree(config.state_path() / "journal")  # the journal is lost
    frozen = plans.load_plan(plan_file, config).frozen_hash
    assert frozen
    begin(config.state_path(), "plans/demo", frozen, "f" * 40)  # the gate approval's start
    outcome = run(Engine(config), plan_file, gate_approved=2, journal_expected=True, continued=True)
    lines = [json.loads(line) for line in calls.read_text().splitlines()]
    return outcome, lines, execution(plan_file), journal_records(config, plan_file)


def test_the_gate_goes_on_with_what_the_record_shows(tmp_path: Path) -> None:
    outcome, calls, block, records = _lose_and_approve(
        tmp_path, {"q": "$<actions[1].outputs.x>", "tag": "second"}, {"v": "hello"}
    )
    assert outcome.status == "completed", outcome.error
    assert calls == [{"v": "hello"}, {"q": "hello", "tag": "second"}]  # action 1 once
    assert [(a["id"], a["status"], a["attempts"]) for a in block["actions"]] == [
        (1, "succeeded", 1),
        (2, "succeeded", 1),
    ]
    assert [r["t"] for r in records][:3] == ["begin", "recovered", "end"]
    assert not [r for r in records if r["t"] == "start" and r["id"] == 1]


@pytest.mark.parametrize(
    "param",
    [
        pytest.param("$<actions[1].result.json.v>", id="result"),
        pytest.param("$<approval.by>", id="approval"),
    ],
)
def test_a_value_the_record_does_not_hold_is_in_doubt(tmp_path: Path, param: str) -> None:
    outcome, calls, _, records = _lose_and_approve(tmp_path, {"q": param}, {"v": "hello"})
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_ACTION_IN_DOUBT", outcome.error.message
    assert calls == [{"v": "hello"}]  # nothing called again, nothing with a guess
    assert not [r for r in records if r["t"] == "start"]


def test_an_output_the_record_shows_masked_is_in_doubt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANGATE_SECRET_TOK", SECRET)
    outcome, calls, block, _ = _lose_and_approve(
        tmp_path, {"q": "$<actions[1].outputs.x>"}, {"v": "$<secrets.TOK>"}
    )
    assert block["actions"][0]["outputs"] == {"x": "***"}
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_ACTION_IN_DOUBT", outcome.error.message
    assert calls == [{"v": SECRET}]  # action 2 never got "***"


def _paused(tmp_path: Path) -> tuple[Any, Path, Path, dict[str, Any]]:
    """A plan paused at its gate after action 1 (output ``x``), its journal lost, the gate
    approval's begin written: (config, plan file, calls, the block the run recorded)."""
    calls = tmp_path / "calls.jsonl"
    actions = [
        {
            "id": 1,
            "tool": "rec",
            "params": {"v": "real"},
            "outputs": [{"name": "x", "path": "$.json.v"}],
        },
        {
            "id": 2,
            "tool": "rec",
            "requires_approval": True,
            "params": {"q": "$<actions[1].outputs.x>"},
        },
    ]
    config, plan_file = make_plan(tmp_path, actions, {"rec": _tool(calls)})
    assert run(Engine(config), plan_file).status == "awaiting_approval"
    recorded = execution(plan_file)
    shutil.rmtree(config.state_path() / "journal")
    frozen = plans.load_plan(plan_file, config).frozen_hash
    assert frozen
    begin(config.state_path(), "plans/demo", frozen, "f" * 40)
    return config, plan_file, calls, recorded


def _approve_gate(config: Any, plan_file: Path, record: Any) -> Any:
    return run(
        Engine(config), plan_file, gate_approved=2, journal_expected=True, continued=True,
        record=record,
    )  # fmt: skip


def test_the_run_goes_on_from_the_controllers_record(tmp_path: Path) -> None:
    config, plan_file, calls, recorded = _paused(tmp_path)
    asked: list[Any] = []
    outcome = _approve_gate(config, plan_file, lambda start: asked.append(start) or (recorded, "c"))
    assert outcome.status == "completed", outcome.error
    assert asked == ["f" * 40]  # the start commit the journal's begin names
    assert [json.loads(line) for line in calls.read_text().splitlines()] == [
        {"v": "real"},
        {"q": "real"},
    ]


def test_a_block_that_is_not_the_controllers_record_fails_closed(tmp_path: Path) -> None:
    """Round 52: someone committed an edit of the block after the controller wrote it (here
    action 1's output): nothing runs, what the controller's record shows finished is
    journaled, and the outcome's block is the controller's record, not the edit."""
    config, plan_file, calls, recorded = _paused(tmp_path)
    text = plan_file.read_text()
    assert "x: real" in text
    plan_file.write_text(text.replace("x: real", "x: evil@attacker.example", 1))
    outcome = _approve_gate(config, plan_file, lambda start: (recorded, "its commit abc"))
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_ACTION_IN_DOUBT", outcome.error.message
    assert "not the controller's record" in outcome.error.message
    assert [json.loads(line) for line in calls.read_text().splitlines()] == [{"v": "real"}]
    records = journal_records(config, plan_file)
    assert [r["t"] for r in records][:3] == ["begin", "recovered", "end"]
    assert outcome.execution is not None
    assert outcome.execution["actions"][0]["outputs"] == {"x": "real"}
    assert outcome.execution["actions"][0]["status"] == "succeeded"


def test_an_approvers_edit_of_the_block_status_alone_goes_on(tmp_path: Path) -> None:
    """``sed s/status: awaiting_approval/status: approved/`` also rewrites the block's
    ``status:``: it says nothing a run goes on from."""
    config, plan_file, calls, recorded = _paused(tmp_path)
    text = plan_file.read_text()
    plan_file.write_text(text.replace("status: awaiting_approval", "status: approved"))
    outcome = _approve_gate(config, plan_file, lambda start: (recorded, "c"))
    assert outcome.status == "completed", outcome.error
    assert len(calls.read_text().splitlines()) == 2


def test_no_record_of_the_controllers_fails_closed(tmp_path: Path) -> None:
    config, plan_file, calls, _ = _paused(tmp_path)
    outcome = _approve_gate(config, plan_file, lambda start: (None, "no commit of its own"))
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_ACTION_IN_DOUBT", outcome.error.message
    assert len(calls.read_text().splitlines()) == 1


def test_the_in_doubt_verdict_sticks_until_a_resume(tmp_path: Path) -> None:
    """Asked again without a resume (its outcome commit had to wait), the failed run reports
    the same verdict and runs nothing."""
    config, plan_file, calls, _ = _paused(tmp_path)
    outcome = _approve_gate(config, plan_file, lambda start: (None, "no commit of its own"))
    again = _approve_gate(config, plan_file, lambda start: (None, "no commit of its own"))
    assert again.status == "failed" and again.error is not None
    assert again.error.code == "E_ACTION_IN_DOUBT"
    assert outcome.error is not None and again.error.message == outcome.error.message
    assert len(calls.read_text().splitlines()) == 1
