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


# -- readback-failure-misdiagnosed ------------------------------------------------------------


def _deep_args(levels: int) -> str:
    return json.dumps(_pc()).replace(
        '"tag": "A"', '"tag": "A", "d": ' + "[" * levels + "]" * levels
    )


@pytest.mark.parametrize("levels", [97, 120, 300])
def test_a_value_too_deep_for_plan_yml_is_refused_at_its_source_place(levels: int) -> None:
    """Round 116, readback-failure-misdiagnosed: a value nested past PLAN.yml's 100 levels
    (under ``actions[0].params``) was "a lone surrogate" with no place (convert), or a line
    of the converted text (MCP, the daemon); it is refused at the source's location."""
    failed = _refused(_deep_args(levels))
    (problem,) = failed.problems
    assert (problem.code, problem.path) == ("E_CONVERT_UNSUPPORTED", "steps[0].args.d")
    assert "nested deeper than 100 levels" in problem.message
    assert "actions[0].params.d" in problem.message


def test_a_value_that_fits_plan_yml_converts() -> None:
    data = convert_text(_deep_args(96), "p.json").data
    assert data["actions"][0]["params"]["tag"] == "A"


def test_a_markdown_input_too_deep_is_refused_at_its_line() -> None:
    from tests.support.gitenv import EXAMPLES

    text = (EXAMPLES / "formats" / "toon-plan-core.md").read_text()
    deep = "- d: " + "[" * 120 + "]" * 120 + "\n"
    source = text.replace("(Optional shared data)\n", "- to: x\n" + deep)
    assert source != text
    (problem,) = _refused(source, "PLAN.md").problems
    assert (problem.code, problem.path) == ("E_CONVERT_UNSUPPORTED", "shared_inputs.d")
    assert problem.line == source.splitlines().index(deep.rstrip("\n")) + 1


def test_every_reader_names_the_depth_at_the_source(tmp_path: Path) -> None:
    """``plangate convert`` and the daemon's reader (discovery.load_source) give one answer."""
    from controller.plan.discovery import load_source

    (tmp_path / "p.json").write_text(_deep_args(120))
    done = run_cli("convert", "p.json", cwd=tmp_path)
    assert done.returncode == 1
    assert "E_CONVERT_UNSUPPORTED at steps[0].args.d" in done.stderr, done.stderr
    assert "lone surrogate" not in done.stderr
    folder = tmp_path / "plans" / "deep"
    folder.mkdir(parents=True)
    (folder / "PLAN.json").write_text(_deep_args(120))
    (problem,) = load_source(folder / "PLAN.json").problems
    assert (problem.code, problem.path) == ("E_CONVERT_UNSUPPORTED", "steps[0].args.d")


@pytest.mark.parametrize("value", ["a" * 1_100_000, "\u200b" * 200_000])
def test_a_converted_plan_over_max_plan_bytes_is_sized(tmp_path: Path, value: str) -> None:
    """Round 116, readback-failure-misdiagnosed: a converted PLAN.yml over
    limits.max_plan_bytes (escapes grow a raw U+200B from 3 bytes to 6) was "a lone
    surrogate"; it is E_PLAN_TOO_LARGE with its figures."""
    source = _pc()
    source["steps"][0]["args"]["v"] = value
    (tmp_path / "p.json").write_text(json.dumps(source, ensure_ascii=False), encoding="utf-8")
    done = run_cli("convert", "p.json", cwd=tmp_path)
    assert done.returncode == 1
    assert "E_PLAN_TOO_LARGE" in done.stderr and "1048576" in done.stderr, done.stderr
    assert "lone surrogate" not in done.stderr


def test_a_lone_surrogate_is_still_said_to_be_one(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text(json.dumps(_pc()).replace('"A"', '"\\ud800"'))
    done = run_cli("convert", "p.json", cwd=tmp_path)
    assert done.returncode == 1
    assert "lone surrogate" in done.stderr, done.stderr


def test_a_nested_actionplan_value_too_deep_is_refused_at_its_source_place() -> None:
    """A nested plan's PLAN.yml is held to the same limit, at the source's place."""
    inner = {
        "plan_version": 1,
        "title": "c",
        "steps": [
            {
                "step_number": 1,
                "action": {"type": "rec", "tag": "A", "d": json.loads("[" * 110 + "]" * 110)},
                "description": "d",
            }
        ],
    }
    outer = {
        "plan_version": 1,
        "title": "t",
        "steps": [
            {"step_number": 1, "action": {"type": "nested_plan", "plan": inner}, "description": "d"}
        ],
    }
    with pytest.raises(ConvertFailed) as caught:
        convert_text(json.dumps(outer), "p.json", nested_base="plans/x")
    (problem,) = caught.value.problems
    assert problem.code == "E_CONVERT_UNSUPPORTED"
    assert problem.path.startswith("steps[0].action.plan.steps[0].action.d"), problem
    assert "nested deeper than 100 levels" in problem.message
