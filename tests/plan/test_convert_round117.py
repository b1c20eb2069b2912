"""Round 117's markdown classes (tests/adversarial/test_round117_sources_atk117c.py): the
reader's view of a markdown plan's blocks is CommonMark's, the one a forge renders. A
setext heading, an indented code block where fields are read, single-tilde strikethrough, a
heading's title said again by a bullet: refused at their line. A heading rendered as a
section's name is that section; a link reference definition in descriptive text is nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.errors import ConvertFailed
from controller.plan.convert import convert_text
from tests.support.gitenv import EXAMPLES, run_cli

MD = (EXAMPLES / "formats" / "toon-plan-core.md").read_text()
OBJECTIVE = "Clear plan objective\n"
WF = "## Workflow Config\n- Parallel Execution: false\n- Error Recovery: true\n- Max Retries: 3"
STEP_HEAD = "### Step 1: Action Name\n"
assert OBJECTIVE in MD and WF in MD and STEP_HEAD in MD


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def _refused(text: str) -> list[tuple[str, int | None, str]]:
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    return [(p.code, p.line, p.message) for p in caught.value.problems]


def _converted(text: str) -> dict:  # type: ignore[type-arg]
    return convert_text(text, "PLAN.md").data


def _cli_convert(tmp_path: Path, text: str) -> dict:  # type: ignore[type-arg]
    """``plangate convert --json`` in its own process: the first error of its answer."""
    (tmp_path / "PLAN.md").write_text(text)
    done = run_cli("convert", "--json", "PLAN.md", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    error: dict = json.loads(done.stdout.splitlines()[0])["errors"][0]  # type: ignore[type-arg]
    return error


# -- md-setext-heading-not-a-section ----------------------------------------------------------


@pytest.mark.parametrize(
    "block, heading",
    [
        ("\nShared Inputs\n-------------\n- to: evil@x.example\n", "Shared Inputs\n"),
        ("\nWorkflow Config\n---\n- Error Recovery: false\n", "Workflow Config\n"),
        ("\nObjective\n=========\nDelete everything\n", "Objective\n="),
        ("\nNotes\n-----\nsee\n", "Notes\n"),
    ],
)
def test_a_setext_heading_is_refused_at_its_line(block: str, heading: str) -> None:
    """Round 117, md-setext-heading-not-a-section: a forge shows a second section, the
    reader kept it as text of the objective (and the plan took the later section's value)."""
    text = MD.replace(OBJECTIVE, OBJECTIVE + block)
    [(code, line, message)] = _refused(text)
    assert code == "E_CONVERT_UNSUPPORTED"
    assert line == _line_of(text, heading)
    assert "setext heading" in message


def test_a_setext_heading_is_refused_by_plangate_convert_with_a_remedy(tmp_path: Path) -> None:
    text = MD.replace(OBJECTIVE, OBJECTIVE + "\nShared Inputs\n---\n- to: evil@x.example\n")
    error = _cli_convert(tmp_path, text)
    assert error["code"] == "E_CONVERT_UNSUPPORTED", error
    assert error["line"] == _line_of(text, "Shared Inputs"), error
    assert "## Section" in error["remedy"], error


def test_a_rule_after_a_blank_line_stays_a_rule() -> None:
    """``---`` after a blank line is a thematic break, no heading: descriptive text."""
    text = MD.replace(OBJECTIVE, OBJECTIVE + "\n---\n\nmore words\n")
    assert _converted(text)["plan"]["task"].endswith("more words")


# -- md-indented-code-read-as-field -----------------------------------------------------------


@pytest.mark.parametrize(
    "old, new, needle",
    [
        (STEP_HEAD, STEP_HEAD + "\n    - **Retries**: 2\n\n", "    - **Retries**"),
        (STEP_HEAD, STEP_HEAD + "\n\t- **Retries**: 2\n\n", "\t- **Retries**"),
        (
            "## Workflow Config\n- Parallel Execution: false\n",
            "## Workflow Config\n\n    - Parallel Execution: false\n\n",
            "    - Parallel",
        ),
        ("(Optional shared data)\n", "\n    - to: evil@x.example\n", "    - to:"),
    ],
)
def test_an_indented_code_block_where_fields_are_read_is_refused(
    old: str, new: str, needle: str
) -> None:
    """Round 117, md-indented-code-read-as-field: a forge shows the bullet as code; the
    reader read it as the field (retries, error recovery, an input)."""
    text = MD.replace(old, new, 1)
    problems = _refused(text)
    assert ("E_CONVERT_UNSUPPORTED", _line_of(text, needle)) in [(c, n) for c, n, _ in problems]
    assert any("indented code block" in message for _, _, message in problems), problems


def test_an_indented_code_block_is_refused_by_plangate_convert(tmp_path: Path) -> None:
    text = MD.replace(STEP_HEAD, STEP_HEAD + "\n    - **Retries**: 2\n\n", 1)
    error = _cli_convert(tmp_path, text)
    assert error["code"] == "E_CONVERT_UNSUPPORTED", error
    assert error["line"] == _line_of(text, "    - **Retries**"), error
    assert "at most three spaces" in error["remedy"], error


def test_a_nested_bullet_stays_a_field() -> None:
    """Four spaces under a bullet (no blank line) continue the list: still a field."""
    text = MD.replace("- **Timeout**: 30s\n", "- **Timeout**: 30s\n    - **Retries**: 2\n")
    assert _converted(text)["actions"][0]["retry"] == {"attempts": 2}


# -- md-single-tilde-strikethrough ------------------------------------------------------------


@pytest.mark.parametrize(
    "old, new",
    [
        ("- **Parameters**: {}", '- **Parameters**: {"path": "~old~new"}'),
        ("- **Type**: AGENT_EXECUTION", "- **Type**: ~AGENT_EXECUTION~"),
        ("- **ID**: step_1", "- **ID**: ~step_1~"),
        ("- **Action**: run_prediction", "- **Action**: ~run_prediction~"),
        ("- **Steps**: step_1, step_2", "- **Steps**: ~step_1~, step_2"),
        (OBJECTIVE, "Clear ~no~ objective\n"),
        (STEP_HEAD, "### Step 1: Action ~not~ Name\n"),
        ("(Optional shared data)", "- to: ~ok@example.com~"),
    ],
)
def test_single_tilde_strikethrough_is_refused_at_its_line(old: str, new: str) -> None:
    """Round 117, md-single-tilde-strikethrough: GFM strikes text between one tilde or two;
    ``~old~new`` showed ``old`` struck out and reached the tool as written."""
    text = MD.replace(old, new, 1)
    problems = _refused(text)
    # the objective's text is refused at its section's heading, as round 116's `~~` is
    line = _line_of(text, "## Objective" if old == OBJECTIVE else new.strip())
    assert any(
        code == "E_CONVERT_UNSUPPORTED" and n == line and "strikethrough `~`" in message
        for code, n, message in problems
    ), problems


def test_a_tilde_that_strikes_nothing_is_text() -> None:
    text = MD.replace("- **Parameters**: {}", '- **Parameters**: {"path": "~/a ~/b"}')
    assert _converted(text)["actions"][0]["params"] == {"path": "~/a ~/b"}


# -- md-heading-title-overridden --------------------------------------------------------------


@pytest.mark.parametrize(
    "old, bullet",
    [
        ("- **Timeout**: 30s\n", "- **Title**: Delete all\n"),
        ("- **ID**: task_1\n", "- **Name**: Wipe\n"),
    ],
)
def test_a_title_bullet_under_a_titled_heading_is_said_twice(old: str, bullet: str) -> None:
    """Round 117, md-heading-title-overridden: the bullet silently replaced the title the
    forge shows in the heading."""
    text = MD.replace(old, old + bullet, 1)
    [(code, line, message)] = _refused(text)
    assert code == "E_SCHEMA_INVALID"
    assert line == _line_of(text, bullet)
    assert "said twice" in message


def test_a_title_bullet_under_a_heading_without_one_is_the_title() -> None:
    text = MD.replace(STEP_HEAD, "### Step 1:\n").replace(
        "- **Timeout**: 30s\n", "- **Timeout**: 30s\n- **Title**: Delete all\n"
    )
    assert "Delete all" in _converted(text)["actions"][0]["why"]


# -- md-section-name-rendered-alike -----------------------------------------------------------


@pytest.mark.parametrize(
    "heading",
    [
        "## *Workflow Config*",
        "## **Workflow Config**",
        "## `Workflow Config`",
        "## Workflow&#32;Config",
        "## [Workflow Config](x)",
    ],
)
def test_a_heading_rendered_as_a_sections_name_is_that_section(heading: str) -> None:
    """Round 117, md-section-name-rendered-alike: kept as another section (unhashed), its
    ``Error Recovery: true`` left the plan."""
    text = MD.replace("## Workflow Config", heading)
    assert _converted(text)["actions"][0].get("on_failure") == "retry"


def test_a_section_said_plainly_and_rendered_alike_is_said_twice() -> None:
    text = MD + "\n\n## *Workflow Config*\n- Error Recovery: false\n"
    problems = _refused(text)
    assert ("E_SCHEMA_INVALID", _line_of(text, "## *Workflow")) in [(c, n) for c, n, _ in problems]


def test_an_emphasised_objective_is_the_objective() -> None:
    text = MD.replace("## Objective", "## *Objective*")
    assert _converted(text)["plan"]["task"] == OBJECTIVE.strip()


# -- md-linkdef-in-descriptive-text -----------------------------------------------------------


@pytest.mark.parametrize(
    "objective",
    [
        OBJECTIVE + "\n[x]: /u 'delete all'\n",
        "[Clear plan][r] objective\n\n[r]: /u 'delete all'\n",
        OBJECTIVE + "\n[r]:\n/u\n'delete all'\n",
    ],
)
def test_a_link_definition_in_descriptive_text_converts_to_nothing(objective: str) -> None:
    """Round 117, md-linkdef-in-descriptive-text: a forge shows none of it; ``plan.task``
    held ``r: /u 'delete all'``."""
    text = MD.replace(OBJECTIVE, objective)
    assert _converted(text)["plan"]["task"] == "Clear plan objective"


def test_a_definition_line_inside_a_paragraph_is_text() -> None:
    """A definition cannot interrupt a paragraph: a forge shows the line as text."""
    text = MD.replace(OBJECTIVE, OBJECTIVE + "[r]: /u\n")
    assert _converted(text)["plan"]["task"] == "Clear plan objective\n[r]: /u"


# -- the daemon: what a forge shows as code or struck out never runs ---------------------------

DAEMON_MD = """\
# Greet

## Objective
Say hello to the world

## Steps

### Step 1: Say hello
- **ID**: s1
- **Action**: greet
- **Parameters**: {"who": "PARAM"}
- **Timeout**: 30s
"""


@pytest.mark.parametrize(
    "old, new, said",
    [
        ("PARAM", "~old~new", "strikethrough `~`"),
        (
            "### Step 1: Say hello\n",
            "### Step 1: Say hello\n\n    - **Retries**: 2\n\n",
            "indented code block",
        ),
        ("## Objective\n", "Objective\n---\n", "setext heading"),
    ],
)
def test_a_committed_plan_md_read_otherwise_by_a_forge_waits_with_its_code(
    repo: Path, old: str, new: str, said: str
) -> None:
    """Round 117: the daemon converted, froze and (once approved) ran these plans, with
    what a forge shows struck out or as code, or a second section it never read."""
    from controller.service.reconcile import Controller
    from tests.support.gitenv import AGENT, commit_all
    from tests.support.gitkit import make_config, subjects

    path = repo / "plans" / "greet" / "PLAN.md"
    path.parent.mkdir(parents=True)
    path.write_text(DAEMON_MD.replace(old, new).replace("PARAM", "world"))
    commit_all(repo, "agent proposes", AGENT)
    before = subjects(repo)
    ctl = Controller(make_config(repo))
    try:
        ctl.reconcile()
        (row,) = [r for r in ctl.status() if r["plan"] == "plans/greet"]
    finally:
        ctl.close()
    assert subjects(repo) == before  # never converted, never frozen
    assert row["status"] == "unreadable", row
    assert row["problem"]["code"] == "E_CONVERT_UNSUPPORTED" and said in row["reason"], row
