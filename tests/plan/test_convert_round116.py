"""Round 116's source classes (tests/adversarial/test_round116_sources_atk116c.py): a
source's problem is refused with its code, at its place in the source, naming the real
cause; nothing a source says is dropped silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.errors import ConvertFailed
from controller.plan.convert import convert_text
from tests.support.gitenv import run_cli

PC: dict[str, Any] = {
    "plan_version": 1,
    "skill_id": "s",
    "goal": "g",
    "steps": [{"step_id": "1", "tool": "rec", "args": {"tag": "A"}}],
}


def _pc(**changes: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(PC))
    for key, value in changes.items():
        if key in ("tool", "step_id", "description"):
            doc["steps"][0][key] = value
        else:
            doc[key] = value
    return doc


def _refused(text: str, name: str = "p.json") -> ConvertFailed:
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, name)
    return caught.value


# -- empty-string-says-got-a-string -----------------------------------------------------------


@pytest.mark.parametrize(
    "field, value, place, said",
    [
        ("goal", "", "goal", "`goal` is empty"),
        ("tool", "", "steps[0].tool", "`tool` is empty"),
        ("step_id", "", "steps[0].step_id", "`step_id` is empty"),
        ("description", "  ", "steps[0].description", "`description` is blank"),
    ],
)
def test_an_empty_required_text_is_said_to_be_empty(
    field: str, value: str, place: str, said: str
) -> None:
    """Round 116, empty-string-says-got-a-string: ``"goal": ""`` was "expected a string, got
    a string"; it says what is wrong (empty, blank) and what is wanted."""
    failed = _refused(json.dumps(_pc(**{field: value})))
    problem = next(p for p in failed.problems if p.path == place)
    assert problem.code == "E_SCHEMA_INVALID"
    assert said in problem.message and "non-empty string is required" in problem.message
    assert "got a string" not in problem.message
    assert problem.remedy and "non-empty string" in problem.remedy


# -- agent-outer-overlays-dropped -------------------------------------------------------------

AGENT: dict[str, Any] = {
    "title": "t",
    "steps": [
        {
            "id": "s1",
            "title": "T",
            "detail": "D",
            "tool": {"kind": {"Custom": {"name": "rec", "payload": {"tag": "A"}}}},
        }
    ],
}


@pytest.mark.parametrize(
    "source, kept",
    [
        ({"plan": {"plan": AGENT}, "overlays": {"x": "OUTER"}}, {"x": "OUTER"}),
        (
            {"plan": {"plan": AGENT, "overlays": {"x": "IN"}}, "overlays": {"x": "OUTER"}},
            {"overlays": {"x": "OUTER"}, "plan.overlays": {"x": "IN"}},
        ),
        (
            {"plan": {"plan": {**AGENT, "overlays": [1]}}, "overlays": [2]},
            {"overlays": [2], "plan.plan.overlays": [1]},
        ),
        ({"plan": AGENT, "overlays": {"x": "OUTER"}}, {"x": "OUTER"}),
    ],
)
def test_agent_plan_overlays_of_every_wrapper_level_are_kept(
    source: dict[str, Any], kept: Any
) -> None:
    """Round 116, agent-outer-overlays-dropped: the outer ``overlays`` of ``{"plan": {"plan":
    ...}, "overlays": ...}`` went nowhere, and beside inner ones only the inner were kept."""
    data = convert_text(json.dumps(source), "p.json").data
    assert data["metadata"]["source"]["overlays"] == kept
