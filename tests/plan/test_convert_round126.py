"""Round 125's reader classes fixed in round 126 (tests/adversarial/
test_round125_sources_atk125c.py): a markdown plan's headings are the ATX headings CommonMark
finds (indented up to three spaces they are sections and records; inside a block quote or a
list item they are refused at their line), and a source's bytes are read once, with one code
(``E_YAML_PARSE`` for text that is not UTF-8, ``E_PLAN_TOO_LARGE`` over the bound)."""

from __future__ import annotations

from typing import Any

import pytest

from controller.errors import PlangateError, PlanTooLarge, YamlParseError
from controller.plan.convert import convert_text
from controller.plan.convert.source import is_markdown_plan

MD = """\
# Record plan

## Objective
Record a tag

## Tasks

### Task 1: Record
- **ID**: task_1
- **Description**: record one tag
- **Steps**: step_1

## Steps

### Step 1: Record ok
- **ID**: step_1
- **Task**: task_1
- **Action**: rec
- **Parameters**: {"tag": "ok"}
- **Timeout**: 30s

## Shared Inputs
- to: ok@example.com

## Workflow Config
- Parallel Execution: false
- Error Recovery: false
"""
OBJ = "## Objective\nRecord a tag\n"
SHARED = "## Shared Inputs\n- to: ok@example.com\n"
WF = "## Workflow Config\n- Parallel Execution: false\n- Error Recovery: false\n"
RETRY = WF.replace(
    "false\n- Error Recovery: false\n", "false\n- Error Recovery: true\n- Max Retries: 2\n"
)
STEP2 = '### Step 2: Back up first\n- **Action**: rec\n- **Parameters**: {"tag": "backup"}\n'
for _part in (OBJ, SHARED, WF):
    assert _part in MD


def _converted(text: str) -> dict[str, Any]:
    return convert_text(text, "PLAN.md").data


def _refused(text: str) -> str:
    with pytest.raises(PlangateError) as caught:
        convert_text(text, "PLAN.md")
    assert caught.value.code == "E_CONVERT_UNSUPPORTED", caught.value
    return str(caught.value)


@pytest.mark.parametrize("pad", [" ", "  ", "   "])
def test_an_indented_step_record_in_the_objective_is_refused_at_its_line(pad: str) -> None:
    """`` ### Step 2:`` in the objective is a step heading on every forge: refused at its line
    as the unindented one is ("would never run"), never ``plan.task`` text."""
    said = _refused(MD.replace(OBJ, OBJ + "\n" + pad + STEP2))
    assert "line 6: `### Step 2: Back up first` is a record under `## Objective`" in said


def test_an_indented_step_record_under_notes_is_refused_at_its_line() -> None:
    said = _refused(MD.replace(SHARED, "## Notes\nnothing\n\n  " + STEP2 + "\n" + SHARED))
    assert "`### Step 2: Back up first` is a record under `## Notes`" in said


@pytest.mark.parametrize("pad", [" ", "  ", "   "])
def test_an_indented_workflow_config_after_notes_is_that_section(pad: str) -> None:
    """`` ## Workflow Config`` after ``## Notes`` is the section a forge shows: its retries
    are the plan's, never Notes text."""
    plan = _converted(MD.replace(WF, "## Notes\nx\n\n" + pad + RETRY))
    action = plan["actions"][0]
    assert action["on_failure"] == "retry" and action["retry"] == {"attempts": 2}, action
    assert "Workflow" not in str(plan["metadata"]), plan["metadata"]


def test_an_indented_shared_inputs_after_notes_is_that_section() -> None:
    plan = _converted(MD.replace(SHARED, "## Notes\nnothing\n\n   " + SHARED))
    assert plan["inputs"] == {"to": "ok@example.com"}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("# Record plan\n", "  # Record plan\n"),
        ("### Step 1: Record ok\n", "   ### Step 1: Record ok\n"),
        ("### Task 1: Record\n", " ### Task 1: Record\n"),
        ("## Steps\n", " ## Steps\n"),
        ("## Tasks\n", "   ## Tasks\n"),
    ],
)
def test_an_indented_heading_converts_as_the_unindented_one(old: str, new: str) -> None:
    assert _converted(MD.replace(old, new)) == _converted(MD)


def test_a_heading_continuing_a_list_item_is_refused_naming_the_item() -> None:
    """Two spaces after the task's last bullet and a blank line continue that item: CommonMark
    (and a forge's ``<li>``) holds the heading inside it. Refused at its line with why, never
    "expected a bullet" alone."""
    said = _refused(MD.replace("## Steps\n", "  ## Steps\n"))
    assert "line 13: `## Steps` is a heading inside a list item (from line 11)" in said


@pytest.mark.parametrize(
    "where",
    [
        "> ## Workflow Config\n- Error Recovery: true\n",
        "> ### Step 2: Back up first\n- **Action**: rec\n",
        "- ## Workflow Config\n- Error Recovery: true\n",
    ],
)
def test_a_heading_inside_a_quote_or_an_item_is_refused_in_a_section_kept_as_text(
    where: str,
) -> None:
    """``> ## Workflow Config`` under ``## Notes``: a heading to a forge, part of the quote to
    CommonMark; neither read as the section nor kept as Notes text a reviewer reads as one."""
    text = MD.replace(WF, "## Notes\nx\n\n" + where)
    line = text.splitlines().index(where.splitlines()[0]) + 1
    said = _refused(text)
    assert f"line {line}: `{where.splitlines()[0]}` is a heading inside a" in said, said


def test_four_spaces_make_code_not_a_heading() -> None:
    """CommonMark's limit: four spaces after a blank line is an indented code block, shown as
    code; it stays the Notes section's code, as a forge shows it."""
    plan = _converted(MD.replace(WF, "## Notes\nx\n\n    " + RETRY.splitlines()[0] + "\n"))
    assert "on_failure" not in plan["actions"][0]
    assert "## Workflow Config" in str(plan["metadata"])


def test_a_plan_whose_steps_heading_is_indented_is_a_markdown_plan() -> None:
    text = MD.replace("## Tasks\n", "").replace("## Steps\n", " ## Steps\n")
    assert is_markdown_plan(text)


def test_a_source_is_read_once_with_one_code() -> None:
    """Not UTF-8 is E_YAML_PARSE (docs/errors.md), over the bound E_PLAN_TOO_LARGE: the
    reading of the daemon's pass, its row, ``check``, ``hash``, ``validate`` and ``show``."""
    from controller.plan.discovery import MAX_SOURCE_BYTES, source_text

    with pytest.raises(YamlParseError, match=r"not UTF-8 text \(byte 0\)"):
        source_text('{"a": 1}'.encode("utf-16"))
    with pytest.raises(PlanTooLarge, match=str(MAX_SOURCE_BYTES)):
        source_text(b" " * (MAX_SOURCE_BYTES + 1))
    assert source_text(b"{}") == "{}"


def test_text_before_the_title_is_refused_at_its_line() -> None:
    """``    # Fake`` four spaces in is a code block a forge shows above the title: refused
    at its line, never dropped (it stood before every section)."""
    said = _refused("    # Fake title\n\n" + MD)
    assert "line 1: '# Fake title' stands before the `# ` title" in said, said
