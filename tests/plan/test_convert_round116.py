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


# -- unresolved-reference-text ----------------------------------------------------------------

PLAN = """\
plan:
  name: "t"
  task: "t"
  status: pending_approval
inputs:
  r: INPUT
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "w"
    params:
      tag: "$<inputs.r>"
"""


def _problems(text: str) -> list[tuple[str, str, int | None]]:
    from controller.plan.plans import validate_text

    plan = validate_text(text, Path("PLAN.yml"))
    return [(p.code, p.path, p.line) for p in plan.problems]


@pytest.mark.parametrize(
    "value, place",
    [
        ('"$<plan.name>"', "inputs.r"),
        ('"v=$<secrets.TOKEN>"', "inputs.r"),
        ('{k: ["$<plan.name>"]}', "inputs.r.k[0]"),
    ],
)
def test_reference_text_in_a_plans_inputs_is_refused_at_its_place(value: str, place: str) -> None:
    """Round 116, unresolved-reference-text: a plan's static inputs are never resolved, so
    ``r: "$<plan.name>"`` read through ``$<inputs.r>`` gave the tool the literal text a
    reviewer reads as a reference; round 18's rule (keys, ``expect``) now covers inputs."""
    assert _problems(PLAN.replace("INPUT", value)) == [("E_REF_INVALID", place, 6)]


@pytest.mark.parametrize(
    "guard, place",
    [
        ('one_of: ["$<inputs.r>"]', "actions[0].guards[0].one_of[0]"),
        ('matches: "$<inputs.r>"', "actions[0].guards[0].matches"),
    ],
)
def test_reference_text_in_a_guard_is_refused_at_its_place(guard: str, place: str) -> None:
    """Round 116, unresolved-reference-text: a guard's values are compared as written."""
    text = PLAN.replace("INPUT", "a") + f"    guards:\n      - {{param: tag, {guard}}}\n"
    assert _problems(text) == [("E_REF_INVALID", place, 16)]


def test_an_escaped_or_plain_input_and_a_bracketed_pattern_stay_valid() -> None:
    text = (
        PLAN.replace("INPUT", '"$$<plain"')
        + '    guards:\n      - {param: tag, matches: "[$]<.*|.*"}\n'
    )
    assert _problems(text) == []


def test_convert_refuses_a_plan_contract_whose_inputs_hold_a_reference(tmp_path: Path) -> None:
    """The converted plan is validated as the daemon would: ``plangate convert`` exits 1
    naming the input (the same rule for every source format, the PLAN.yml's)."""
    source = _pc(inputs={"r": "$<plan.name>"})
    source["steps"][0]["args"] = {"tag": "A", "x": "$<inputs.r>"}
    (tmp_path / "p.json").write_text(json.dumps(source))
    done = run_cli("convert", "--json", "p.json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    (error,) = json.loads(done.stdout.splitlines()[0])["errors"]
    assert (error["code"], error["path"]) == ("E_REF_INVALID", "inputs.r"), error
    assert "write `$$<` in its params" in error["remedy"], error
