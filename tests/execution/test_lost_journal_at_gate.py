"""A plan paused at a gate whose journal was lost (round 45, issue 11).

The service writes a ``begin`` record for the gate approval's start commit, so the journal
holds no run; the plan's committed ``execution:`` block (PLAN.yml, written by the paused run)
records action 1 ``succeeded``. The committed record is the truth for what already ran:
action 1 never runs again, the gate goes on with the outputs the record shows whole, and a
value it cannot give (a result, an output shown masked, the approval that started the plan)
fails the reference E_ACTION_IN_DOUBT: nothing is called with a masked value.
(tests/adversarial/test_round45_runs_lostgate.py plays it through the service.)
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
