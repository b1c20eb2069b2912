"""Every place of a markdown plan is read or refused, and descriptive text is what a forge
shows (round 116; docs/formats.md, the markdown form of ``toon-plan``): nothing between the
``# `` title and the first ``##`` section is dropped, a record in a section kept as text is
refused wherever that section is, a value wholly in a code span is read without its
backticks in every value position, and a fenced block in descriptive text is its code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.errors import ConvertFailed
from controller.plan.convert import convert_text
from tests.support.gitenv import EXAMPLES, run_cli

MD = (EXAMPLES / "formats" / "toon-plan-core.md").read_text()
TITLE = "# Plan Title\n"
OBJECTIVE = "Clear plan objective\n"
STEP = (
    "### Step 9: Delete\n- **ID**: step_9\n- **Task**: task_1\n- **Action**: rm\n"
    '- **Parameters**: {"tag": "DANGER"}\n'
)


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def _refused(text: str) -> list[tuple[str, int | None, str]]:
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    return [(p.code, p.line, p.message) for p in caught.value.problems]


@pytest.mark.parametrize(
    "block",
    [
        "DANGER: step 1 deletes prod\n",
        "- **Requires Approval**: true\n",
        '```json\n{"DANGER": false}\n```\n',
        "> DANGER quote\n",
        "### DANGER heading\n",
        "| a | DANGER |\n|---|---|\n| 1 | 2 |\n",
        "---\nDANGER after a rule\n",
    ],
)
def test_text_between_the_title_and_the_first_section_is_refused_at_its_line(block: str) -> None:
    """Round 116, md-preamble-dropped: it converted to nothing, silently."""
    text = MD.replace(TITLE, TITLE + "\n" + block)
    [(code, line, message)] = _refused(text)
    assert code == "E_CONVERT_UNSUPPORTED"
    assert line == _line_of(text, block)
    assert "between the `# ` title and the first `##` section" in message


def test_a_step_record_under_the_title_is_refused_naming_the_record() -> None:
    text = MD.replace(TITLE, TITLE + "\nsome words\n\n" + STEP)
    [(code, line, message)] = _refused(text)
    assert (code, line) == ("E_CONVERT_UNSUPPORTED", _line_of(text, "### Step 9"))
    assert "`### Step 9: Delete` is a record between the `# ` title" in message


def test_a_blank_line_under_the_title_still_converts() -> None:
    text = MD.replace(TITLE, TITLE + "\n\n")
    assert convert_text(text, "PLAN.md").data == convert_text(MD, "PLAN.md").data


def test_plangate_convert_refuses_a_step_under_the_title(tmp_path: Path) -> None:
    """The command a reviewer runs: exit 1 and the line, never a one-action plan."""
    source = tmp_path / "PLAN.md"
    source.write_text(MD.replace(TITLE, TITLE + "\n" + STEP), encoding="utf-8")
    done = run_cli("convert", str(source), cwd=tmp_path)
    assert done.returncode == 1, done.stdout
    assert "E_CONVERT_UNSUPPORTED" in done.stderr and "line 3" in done.stderr, done.stderr
    assert "actions:" not in done.stdout


@pytest.mark.parametrize("record", [STEP, "### Task 2: More\n- **ID**: task_2\n"])
def test_a_record_under_the_objective_is_refused(record: str) -> None:
    """Round 116, md-step-in-objective: the record became plan.task text (exit 0)."""
    text = MD.replace(OBJECTIVE, OBJECTIVE + "\n" + record)
    [(code, line, message)] = _refused(text)
    assert (code, line) == ("E_CONVERT_UNSUPPORTED", _line_of(text, record))
    assert "is a record under `## Objective`, a section this reader keeps as text" in message


def _input(bullet: str) -> str:
    return MD.replace("(Optional shared data)", bullet)


@pytest.mark.parametrize(
    ("bullet", "read"),
    [
        ("- n: `cs-val`", {"n": "cs-val"}),
        ("- n: `ops@example.com`", {"n": "ops@example.com"}),
        ("- n: ``a `b` c``", {"n": "a `b` c"}),
        ("- n: ` padded `", {"n": "padded"}),
        ("- n: `5`", {"n": 5}),
        ('- n: `"5"`', {"n": "5"}),
        ("- `n`: x", {"n": "x"}),
        ('`{"n": "x"}`', {"n": "x"}),
    ],
)
def test_a_shared_input_wholly_in_a_code_span_is_read_without_its_backticks(
    bullet: str, read: dict[str, object]
) -> None:
    """Round 116, md-input-codespan-kept: ``- n: `cs-val` `` was the input ``"`cs-val`"``,
    where a forge shows ``cs-val`` and ``Parameters`` in a code span was read without them.
    The content is then read as the bullet's value would be (``5`` a number, as unspanned)."""
    assert convert_text(_input(bullet), "PLAN.md").data["inputs"] == read


@pytest.mark.parametrize(("bullet", "read"), [("- n: `a` b", "`a` b"), ("- n: `a` `b`", "`a` `b`")])
def test_a_value_not_wholly_one_code_span_keeps_its_text(bullet: str, read: str) -> None:
    """A forge shows the backticks' content and the text around it; nothing is cut."""
    assert convert_text(_input(bullet), "PLAN.md").data["inputs"] == {"n": read}


def test_a_step_bullet_wholly_in_a_code_span_is_read_without_its_backticks() -> None:
    """One rule for every value position: an action, a timeout, an id."""
    spanned = (
        MD.replace("- **Action**: run_prediction", "- **Action**: `run_prediction`", 1)
        .replace("- **Timeout**: 30s", "- **Timeout**: `30s`", 1)
        .replace("- **ID**: step_1", "- **ID**: ``step_1``", 1)
    )
    assert spanned != MD
    assert convert_text(spanned, "PLAN.md").data == convert_text(MD, "PLAN.md").data


@pytest.mark.parametrize(
    ("block", "task"),
    [
        ("```bash\nrm -rf /tmp/x\n```\n", "rm -rf /tmp/x"),
        ("~~~ python extra\nprint(1)\n~~~\n", "print(1)"),
        ("````\n```\n*x*\n```\n````\n", "```\n*x*\n```"),
        ("    *x* [a](b 'c')\n", "*x* [a](b 'c')"),
        (
            "```\n### Task list\n\nline two\n```\n\nafter *it*\n",
            "### Task list\n\nline two\n\nafter it",
        ),
    ],
)
def test_a_code_block_in_descriptive_text_is_its_code(block: str, task: str) -> None:
    """Round 116, md-fence-in-descriptive-text: the objective was read as one paragraph, so
    a fence's info string was glued to its code (``bash rm -rf /tmp/x``), a ``~~~`` block
    kept its fences, and an indented block's ``*x*`` read as emphasis; a forge shows the
    code alone, as written. ``## Notes`` keeps the same text in metadata."""
    text = MD.replace(OBJECTIVE, OBJECTIVE + "\n" + block)
    assert convert_text(text, "PLAN.md").data["plan"]["task"] == "Clear plan objective\n\n" + task
    notes = MD + "\n## Notes\n\nwords\n\n" + block
    sections = convert_text(notes, "PLAN.md").data["metadata"]["source"]["sections"]
    assert sections["Notes"] == "words\n\n" + task


def test_a_record_without_an_id_bullet_is_known_by_its_headings_number() -> None:
    """A user's trial: steps headed ``### Step 1:`` / ``### Step 2:`` with no ``- **ID**:``
    bullet were refused "a non-empty string is required" (no line) and ``- **Dependencies**:
    1`` "step '1' does not exist". The heading's number is the record's id, as a reader of
    the file refers to it; the plan is the one with the bullets written out."""
    steps = (
        "# Greet\n\n## Objective\n\nGreet twice.\n\n## Tasks\n\n### Task 1: Greeting\n\n"
        "- **Steps**: 1, 2\n\n## Steps\n\n"
        "### Step 1: Greet\n\n{id1}- **Task**: 1\n- **Action**: greet\n"
        '- **Parameters**: {{"name": "a"}}\n\n'
        "### Step 2: Greet again\n\n{id2}- **Task**: 1\n- **Action**: greet\n"
        '- **Parameters**: {{"name": "b"}}\n- **Dependencies**: 1\n'
    )
    bare = convert_text(steps.format(id1="", id2=""), "PLAN.md")
    written = convert_text(steps.format(id1="- **ID**: 1\n", id2="- **ID**: 2\n"), "PLAN.md")
    assert bare.data == written.data
    assert [a["needs"] for a in bare.data["actions"]] == [[], [1]]
