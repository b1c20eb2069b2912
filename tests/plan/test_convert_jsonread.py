"""Converted sources are read by PLAN.yml's rules (round 57): one strict JSON reader
(``plan.convert.jsonread``) refuses a member said twice and a number no double holds, a
markdown bullet said twice is refused at its line, TOON numbers follow the same rule, and
tool renaming stays one-to-one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.errors import ConvertFailed, Problem
from controller.plan.convert import convert_text, jsonread
from controller.plan.plans import validate_text
from controller.plan.yamlio import InexactFloat
from tests.support.gitenv import EXAMPLES

EX = EXAMPLES / "formats"
INEXACT = ["9007199254740993.0", "1e-400", "123456789012345678.5", "4.99999999999999999999"]


def _refused(text: str, name: str = "plan.json") -> list[Problem]:
    with pytest.raises(ConvertFailed) as err:
        convert_text(text, name)
    return err.value.problems


def _where(problems: list[Problem]) -> list[tuple[str, str]]:
    return [(p.code, p.path) for p in problems]


# --- the reader ------------------------------------------------------------------------


def test_a_member_said_twice_is_located_wherever_it_is() -> None:
    read = jsonread.read('{"a": [{"b": 1, "b": 2}], "c": {"d": {"e": 1, "e": 1}}, "a": []}')
    assert read.value["a"] == [{"b": 1}]  # the first kept; the source is refused anyway
    assert [p.path for p in read.problems()] == ["a", "a[0].b", "c.d.e"]
    assert {p.code for p in read.problems()} == {"E_SCHEMA_INVALID"}
    assert all(p.remedy == jsonread.REPEATED_REMEDY for p in read.problems(("x",), 7))


def test_a_value_said_second_is_never_mistaken_for_another_object() -> None:
    """The dropped value is kept alive: its id() is never reused by a later object."""
    text = '{"k": {"x": 1, "x": 2}, "k": {"y": 1, "y": 2}, ' + '"z": [{}, {}, {}, {}]}'
    assert [p.path for p in jsonread.read(text).problems()] == ["k", "k.x"]


@pytest.mark.parametrize("written", INEXACT)
def test_a_number_no_double_holds_is_refused_with_plan_yml_message(
    written: str, tmp_path: Path
) -> None:
    read = jsonread.read('{"p": {"n": [1, ' + written + "]}}")
    [problem] = read.problems()
    assert (problem.code, problem.path) == ("E_SCHEMA_INVALID", "p.n[1]")
    assert isinstance(read.value["p"]["n"][1], InexactFloat)
    yml = tmp_path / "PLAN.yml"
    yml.write_text(
        "plan: {name: n, task: t, status: draft}\n"
        f"actions:\n  - {{id: 1, tool: rec, why: w, params: {{n: [1, {written}]}}}}\n"
    )
    same = [p for p in validate_text(yml.read_text(), yml).problems if "exact double" in p.message]
    assert [p.message for p in same] == [problem.message]  # one rule, one message


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_number_a_double_writes_reads_exactly(value: float) -> None:
    read = jsonread.read(json.dumps({"n": value}))
    assert read.problems() == [] and read.value["n"] == value
    assert type(read.value["n"]) is float


# --- every JSON source -------------------------------------------------------------------


def _contract_text() -> str:
    match = re.search(r"```json\n(.*)```", (EX / "plan-contract-reply.md").read_text(), re.S)
    assert match
    return match.group(1)


JSON_SOURCES = {
    "actionplan": lambda: (EX / "actionplan.json").read_text(),
    "agent-plan": lambda: (EX / "agent-plan.json").read_text(),
    "toon-plan": lambda: (EX / "toon-plan-core.json").read_text(),
    "plan-contract": _contract_text,
}


def _with_root_key_twice(text: str) -> tuple[str, str]:
    first = next(iter(json.loads(text)))
    value = json.dumps(json.loads(text)[first])
    return text.replace("{", "{" + json.dumps(first) + ": " + value + ", ", 1), first


@pytest.mark.parametrize("fmt", list(JSON_SOURCES))
def test_every_json_format_refuses_a_member_said_twice(fmt: str) -> None:
    text = JSON_SOURCES[fmt]()
    assert convert_text(text, "plan.json").format == fmt  # the control converts
    doubled, key = _with_root_key_twice(text)
    assert json.loads(doubled) == json.loads(text)  # Python's json would say nothing
    assert ("E_SCHEMA_INVALID", key) in _where(_refused(doubled))
    fenced = "```json\n" + doubled + "\n```\n"
    assert ("E_SCHEMA_INVALID", key) in _where(_refused(fenced, "reply.md"))


def test_a_gate_said_twice_and_an_inexact_number_are_all_reported() -> None:
    text = (
        '{"plan_version": 1, "goal": "g", "steps": [{"step_id": "a", "tool": "rec", '
        '"args": {"n": 9007199254740993.0}, "requires_approval": true, '
        '"requires_approval": false}]}'
    )
    assert _where(_refused(text)) == [
        ("E_SCHEMA_INVALID", "steps[0].requires_approval"),
        ("E_SCHEMA_INVALID", "steps[0].args.n"),
    ]


# --- TOON and markdown -------------------------------------------------------------------


TOON = (
    "metadata:\n  title: T\n  objective: o\nsteps[1]:\n  - id: step_1\n    task_id: task_1\n"
    "    action: rec\n    step_type: AGENT_EXECUTION\n    timeout: 30\n    parameters:\n"
    "      amount: {amount}\nshared_inputs: {{}}\n"
)


def test_toon_numbers_go_through_the_same_rule() -> None:
    assert convert_text(TOON.format(amount="0.5"), "plan.toon").data["actions"][0]["params"] == {
        "amount": 0.5
    }
    [problem] = _refused(TOON.format(amount="9007199254740993.0"), "plan.toon")
    assert (problem.code, problem.path) == ("E_SCHEMA_INVALID", "steps[0].parameters.amount")
    assert "has no exact double" in problem.message


def test_toon_keeps_its_own_number_rules() -> None:
    from controller.plan.convert.source import read_source

    data = read_source("a: -0.0\nb: 0.5\n", "x.toon").data
    assert data == {"a": 0.0, "b": 0.5} and str(data["a"]) == "0.0"
    # out of range: kept with its text and named at its place (round 113), never Python's words
    (problem,) = read_source("a: 1e400\n", "x.toon").problems
    assert problem.code == "E_SCHEMA_INVALID" and problem.path == "a"
    assert "the number 1e400 is not finite" in problem.message


MD = (EX / "toon-plan-core.md").read_text()


def _line(text: str, needle: str, nth: int = 1) -> int:
    lines = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    return lines[nth - 1]


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ("- **Timeout**: 30s\n", "- **Timeout**: 30s\n- **Timeout**: 900s\n", "steps[0].timeout"),
        (
            "- Parallel Execution: false\n",
            "- Parallel Execution: false\n- Parallel Execution: true\n",
            "workflow_config.parallel_execution",
        ),
        (
            "## Shared Inputs\n(Optional shared data)\n",
            "## Shared Inputs\n- target: staging\n- target: production\n",
            "shared_inputs.target",
        ),
    ],
)
def test_a_markdown_bullet_said_twice_is_refused_at_its_line(old: str, new: str, path: str) -> None:
    assert old in MD
    text = MD.replace(old, new, 1)
    [problem] = _refused(text, "plan.md")
    second = new.splitlines()[-1]
    assert (problem.code, problem.path, problem.line) == (
        "E_SCHEMA_INVALID",
        path,
        _line(text, second, 2 if second == new.splitlines()[0] else 1),
    )
    assert "said twice" in problem.message


def test_markdown_json_values_use_the_strict_reader() -> None:
    text = MD.replace(
        "- **Parameters**: {}\n", '- **Parameters**: {"to": "a", "to": "b", "n": 1e-400}\n', 1
    )
    line = _line(text, '"to": "a"')
    problems = _refused(text, "plan.md")
    assert [(p.path, p.line) for p in problems] == [
        ("steps[0].parameters.to", line),
        ("steps[0].parameters.n", line),
    ]


# --- tool names --------------------------------------------------------------------------


def _pc(*tools: str) -> str:
    steps = [{"step_id": f"s{i}", "tool": t, "args": {}} for i, t in enumerate(tools)]
    return json.dumps({"plan_version": 1, "goal": "g", "steps": steps}, ensure_ascii=False)


@pytest.mark.parametrize(
    "tools",
    [("deploy.prod", "deploy_prod"), ("deploy_prod", "deploy.prod"), ("déploy", "dèploy")],
)
def test_two_source_tools_never_become_one(tools: tuple[str, str]) -> None:
    [problem] = _refused(_pc(*tools))
    assert (problem.code, problem.path) == ("E_SCHEMA_INVALID", "steps[1].tool")
    assert repr(tools[0]) in problem.message and repr(tools[1]) in problem.message


def test_a_renaming_that_stays_one_to_one_converts() -> None:
    data = convert_text(_pc("deploy.prod", "deploy.prod", "deploy.staging", "deploy_x")).data
    assert [a["tool"] for a in data["actions"]] == [
        "deploy_prod",
        "deploy_prod",
        "deploy_staging",
        "deploy_x",
    ]
    assert data["metadata"]["converted_from"]["tool_names"] == {
        "deploy_prod": "deploy.prod",
        "deploy_staging": "deploy.staging",
    }
