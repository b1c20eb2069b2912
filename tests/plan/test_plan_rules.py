"""Validation of the SPEC §12 fields: each mistake gets its code and its location."""

from __future__ import annotations

from typing import Any

import pytest

from controller import settings
from controller.plan import plans

TOOLS = {
    "deploy": {"kind": "echo"},
    "probe": {"kind": "echo", "idempotent": True, "risk": "low"},
    "risky_probe": {"kind": "echo", "idempotent": True},  # risk: medium (the default)
}


def problems(actions: list[dict[str, Any]], **top: Any) -> list[tuple[str, str]]:
    config = settings.config_from_data({"tools": TOOLS})
    data = {
        "plan": {"name": "n", "task": "t", "status": "pending_approval"},
        "available_tools": [{"name": "deploy"}, {"name": "probe"}, {"name": "risky_probe"}],
        **top,
        "actions": [{"why": "w", "tool": "deploy", **a} for a in actions],
    }
    _model, found = plans.check_document(data, config)
    return [(p.code, p.path) for p in found]


def test_a_full_graph_plan_is_valid() -> None:
    check = {
        "tool": "probe",
        "expect": [{"path": "$.a", "in": [1, 2]}, {"path": "$.b", "matches": "ok.*"}],
    }
    actions = [
        {
            "id": 1,
            "needs": [],
            "preconditions": [check],
            "outputs": [{"name": "x", "path": "$.x"}],
            "retry": {"attempts": 2, "delay": 1, "max_delay": 5, "backoff": 2},  # plan: retry
        },
        {"id": 2, "needs": [], "verify": {"expect": {"path": "$.y", "not_equals": None}}},
        {
            "id": 3,
            "needs": [1, 2],
            "params": {"x": "$<actions[1].outputs.x>"},
            "on_failure": "fallback",
            "fallback": [
                {"id": "3.1", "tool": "deploy", "why": "undo", "on_failure": "retry", "retries": 1}
            ],
            "idempotent": False,
        },
        {"id": 4, "needs": [3], "params": {"x": "$<actions[1].outputs.x>"}, "on_failure": "ask"},
    ]
    assert problems(actions, preconditions=[check], on_failure="retry") == []


def test_references_must_follow_the_needs() -> None:
    actions = [
        {"id": 1, "needs": [], "outputs": [{"name": "x", "path": "$.x"}]},
        {"id": 2, "needs": [], "params": {"x": "$<actions[1].outputs.x>"}},
        {
            "id": 3,
            "needs": [2],
            "verify": {
                "tool": "probe",
                "params": {"x": "$<actions[1].result>"},
                "expect": {"path": "$", "equals": 1},
            },
        },
    ]
    assert problems(actions) == [
        ("E_REF_FORWARD", "actions[1].params.x"),
        ("E_REF_FORWARD", "actions[2].verify.params.x"),
    ]


@pytest.mark.parametrize(
    ("needs", "found"),
    [
        ({1: [2], 2: [1]}, [("E_ACTION_IDS", "actions[0].needs")]),
        ({1: [1]}, [("E_ACTION_IDS", "actions[0].needs")]),
        ({2: [7]}, [("E_ACTION_IDS", "actions[1].needs")]),
    ],
)
def test_cycles_and_unknown_needs(needs: dict[int, list[int]], found: list[Any]) -> None:
    actions = [{"id": i, "needs": needs.get(i, [])} for i in (1, 2)]
    assert problems(actions) == found


@pytest.mark.parametrize("tool", ["deploy", "risky_probe"])
def test_check_tools_must_be_idempotent_and_low_risk(tool: str) -> None:
    pre = {"tool": tool, "expect": {"path": "$.ok", "equals": True}}
    found = problems([{"id": 1, "preconditions": [pre]}])
    assert ("E_CHECK_TOOL", "actions[0].preconditions[0].tool") in found


@pytest.mark.parametrize(
    ("action", "found"),
    [
        ({"on_failure": "fallback"}, ("E_SCHEMA_INVALID", "actions[0].on_failure")),
        (
            {"fallback": [{"id": "1.1", "tool": "deploy", "why": "w"}]},
            ("E_SCHEMA_INVALID", "actions[0].fallback"),
        ),
        (
            {"on_failure": "fallback", "fallback": [{"id": "1.2", "tool": "deploy", "why": "w"}]},
            ("E_ACTION_IDS", "actions[0].fallback[0].id"),
        ),
        ({"retries": 2, "retry": {"attempts": 2}}, ("E_SCHEMA_INVALID", "actions[0]")),
        ({"idempotent": True}, ("E_SCHEMA_INVALID", "actions[0].idempotent")),
        (
            {"verify": {"expect": {"path": "$.a", "equals": 1, "in": [1]}}},
            ("E_SCHEMA_INVALID", "actions[0].verify.expect"),
        ),
        (
            {"verify": {"expect": {"path": "$.a", "matches": "(?=x)"}}},
            ("E_SCHEMA_INVALID", "actions[0].verify.expect.matches"),
        ),
        (
            {"verify": {"expect": {"path": "a.b", "equals": 1}}},
            ("E_SCHEMA_INVALID", "actions[0].verify.expect.path"),
        ),
        (
            {"verify": {"interval": 2, "expect": {"path": "$", "equals": 1}}},
            ("E_SCHEMA_INVALID", "actions[0].verify"),
        ),
        ({"on_faliure": "skip"}, ("E_SCHEMA_INVALID", "actions[0].on_faliure")),
    ],
)
def test_each_mistake_has_its_code(action: dict[str, Any], found: tuple[str, str]) -> None:
    assert problems([{"id": 1, **action}]) == [found]


FALLBACK = {"on_failure": "fallback"}


@pytest.mark.parametrize(
    ("action", "found"),
    [
        pytest.param(
            {
                **FALLBACK,
                "fallback": [
                    {"id": "1.1", "tool": "deploy", "why": "w", "requires_approval": True}
                ],
            },
            ("E_SCHEMA_INVALID", "actions[0].fallback[0].requires_approval"),
            id="a gate on a fallback step",
        ),
        pytest.param(
            {"retry": {"attempts": 2}}, ("E_SCHEMA_INVALID", "actions[0].retry"), id="retry, stop"
        ),
        pytest.param(
            {"on_failure": "skip", "retries": 2},
            ("E_SCHEMA_INVALID", "actions[0].retries"),
            id="retries, skip",
        ),
        pytest.param(
            {"on_failure": "ask", "retry": {"attempts": 1}},
            ("E_SCHEMA_INVALID", "actions[0].retry"),
            id="retry, ask",
        ),
        pytest.param(
            {
                **FALLBACK,
                "retry": {"attempts": 2},
                "fallback": [{"id": "1.1", "tool": "deploy", "why": "w"}],
            },
            ("E_SCHEMA_INVALID", "actions[0].retry"),
            id="retry before a fallback",
        ),
        pytest.param(
            {**FALLBACK, "fallback": [{"id": "1.1", "tool": "deploy", "why": "w", "retries": 2}]},
            ("E_SCHEMA_INVALID", "actions[0].fallback[0].retries"),
            id="retries on a fallback step that stops",
        ),
    ],
)
def test_a_key_the_engine_would_ignore_is_refused(
    action: dict[str, Any], found: tuple[str, str]
) -> None:
    """What a reviewer reads is what runs: a gate or retry settings that would not act are
    refused where they are written, never silently dropped."""
    assert problems([{"id": 1, **action}]) == [found]


def test_retry_settings_count_where_a_retry_applies() -> None:
    fallback = [{"id": "1.1", "tool": "deploy", "why": "w", "on_failure": "retry", "retries": 2}]
    assert problems([{"id": 1, "on_failure": "retry", "retry": {"attempts": 2}}]) == []
    assert problems([{"id": 1, "retries": 1}], on_failure="retry") == []
    assert problems([{"id": 1, **FALLBACK, "fallback": fallback}]) == []
    assert problems([{"id": 1, "on_failure": "skip", "retries": 1}], on_failure="retry") != []


def test_plan_level_fallback_is_refused() -> None:
    assert problems([{"id": 1}], on_failure="fallback") == [("E_SCHEMA_INVALID", "on_failure")]


def test_a_plan_precondition_cannot_use_action_results() -> None:
    pre = {
        "tool": "probe",
        "params": {"x": "$<actions[1].result>"},
        "expect": {"path": "$", "equals": 1},
    }
    assert problems([{"id": 1}], preconditions=[pre]) == [
        ("E_REF_FORWARD", "preconditions[0].params.x")
    ]


def test_a_fallback_step_cannot_send_untrusted_data_unguarded() -> None:
    """Fallback steps call tools like actions do: the data-flow rule (SPEC §16) covers them."""
    config = settings.config_from_data(
        {"tools": {"read": {"kind": "echo"}, "send": {"kind": "echo", "sensitive": ["to"]}}}
    )
    step = {"id": "2.1", "tool": "send", "why": "w", "params": {"to": "$<actions[1].outputs.x>"}}
    data = {
        "plan": {"name": "n", "task": "t", "status": "pending_approval"},
        "available_tools": [{"name": "read"}, {"name": "send"}],
        "actions": [
            {"id": 1, "tool": "read", "why": "w", "outputs": [{"name": "x", "path": "$.x"}]},
            {"id": 2, "tool": "read", "why": "w", "on_failure": "fallback", "fallback": [step]},
        ],
    }
    _model, found = plans.check_document(data, config)
    assert [(p.code, p.path) for p in found] == [
        ("E_UNGUARDED_FLOW", "actions[1].fallback[0].params.to")
    ]
    step["guards"] = [{"param": "to", "matches": "^[a-z]+@example[.]com$"}]
    _model, found = plans.check_document(data, config)
    assert found == []
