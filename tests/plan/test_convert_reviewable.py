"""A source is read as git shows it (round 103; docs/formats.md, "A source is read as git
shows it"): what a reviewer reads in ``git diff`` is every character the converter reads,
every section is said once, a step's number means what the source wrote, and two tools of
the source never become one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from controller.errors import ConvertFailed, ConvertUnsupported, ParseNonJson
from controller.plan.convert import convert_text
from controller.plan.refs import format_path
from tests.support.gitenv import EXAMPLES

MD = (EXAMPLES / "formats" / "toon-plan-core.md").read_text()
TOON = (EXAMPLES / "formats" / "toon-plan-core.toon").read_text()
#: One bullet of the markdown example: its line in the file, 1-based
BULLET = "- **Description**: Task description"
HIDDEN_STEP = "### Step 9: Hidden\n- **ID**: step_9\n- **Task**: task_1\n- **Action**: rm"


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize(
    "char", ["\u2028", "\u2029", "\x85", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]
)
def test_a_line_end_git_does_not_see_is_refused_at_its_line(char: str) -> None:
    hidden = BULLET + char + HIDDEN_STEP.replace("\n", char)
    text = MD.replace(BULLET, hidden)
    with pytest.raises(ConvertUnsupported) as caught:
        convert_text(text, "PLAN.md")
    line = _line_of(MD, BULLET)
    column = len(BULLET) + 1
    assert caught.value.code == "E_CONVERT_UNSUPPORTED"
    assert f"PLAN.md:{line}:{column}: U+{ord(char):04X}" in caught.value.message
    assert "remove the character" in caught.value.remedy


@pytest.mark.parametrize("name", ["PLAN.md", "PLAN.toon", "PLAN.json"])
def test_a_nul_makes_any_source_refused(name: str) -> None:
    source = {"PLAN.md": MD, "PLAN.toon": TOON}.get(name)
    if source is None:
        source = (EXAMPLES / "formats" / "plan-contract-reply.md").read_text()
    text = source.replace("e", "e\x00", 1)
    with pytest.raises((ConvertUnsupported, ConvertFailed)) as caught:
        convert_text(text, name)
    assert caught.value.code in ("E_CONVERT_UNSUPPORTED", "E_PARSE_NONJSON")
    if name != "PLAN.json":
        assert "U+0000 NULL: git reads the file as binary" in caught.value.message


def _two_steps(first_needs: str, body: str) -> str:
    """The example with a second step ``notify`` whose params say ``body``; step 1 depends
    on ``first_needs``."""
    second = (
        "### Step 2: Tell\n- **ID**: step_2\n- **Task**: task_1\n- **Action**: notify\n"
        f'- **Parameters**: {{"text": "{body}"}}\n- **Dependencies**: []\n\n'
    )
    text = MD.replace(
        "- **Dependencies**: []\n\n## Shared",
        f"- **Dependencies**: [{first_needs}]\n\n{second}## Shared",
    )
    return text.replace("- **Steps**: step_1", "- **Steps**: step_1, step_2")


def test_a_crlf_markdown_source_converts_as_its_lf_twin() -> None:
    text = _two_steps("", "hello")
    lf = convert_text(text, "PLAN.md").data
    crlf = convert_text(text.replace("\n", "\r\n"), "PLAN.md").data
    assert crlf == lf
    assert [a["tool"] for a in lf["actions"]] == ["run_prediction", "notify"]


@pytest.mark.parametrize(
    "heading", ["# Other title", "## Objective", "## Tasks", "## Steps", "## Notes"]
)
def test_a_markdown_section_said_twice_is_refused_at_its_second_heading(heading: str) -> None:
    text = MD.replace("## Objective", "## Notes\nfirst\n\n## Objective", 1)
    text += f"\n{heading}\nsecond\n"
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problem = caught.value.problems[0]
    assert problem.code == "E_SCHEMA_INVALID"
    assert problem.line == text.count("\n") - 1
    assert "is said twice (first at line" in problem.message


def _contract(first: dict[str, Any], second: dict[str, Any]) -> str:
    steps = [
        first,
        second,
        {
            "step_id": "send",
            "tool": "mail",
            "args": {"body": "${actions[1].result}"},
            "depends_on": ["fetch"],
        },
    ]
    return json.dumps({"plan_version": 1, "skill_id": "s", "goal": "g", "steps": steps})


def test_a_numbered_reference_is_refused_when_the_steps_are_reordered() -> None:
    fetch = {"step_id": "fetch", "tool": "get", "args": {}, "depends_on": ["auth"]}
    auth = {"step_id": "auth", "tool": "login", "args": {}}
    with pytest.raises(ConvertFailed) as caught:
        convert_text(_contract(fetch, auth), "PLAN.json")
    problem = caught.value.problems[0]
    assert problem.path == "steps[2].args"
    assert "`${actions[1].result}` names an action by its number" in problem.message
    assert "action 1 is step 'auth' (the source's step 1 is 'fetch')" in problem.message
    assert "each comes after the steps it depends on" in (problem.remedy or "")


def test_a_numbered_reference_converts_when_the_steps_are_in_order() -> None:
    auth = {"step_id": "auth", "tool": "login", "args": {}}
    fetch = {"step_id": "fetch", "tool": "get", "args": {}, "depends_on": ["auth"]}
    data = convert_text(_contract(auth, fetch), "PLAN.json").data
    assert [a["tool"] for a in data["actions"]] == ["login", "get", "mail"]
    assert data["actions"][2]["params"] == {"body": "$<actions[1].result>"}


def test_a_numbered_reference_in_a_reordered_markdown_plan_is_refused() -> None:
    in_order = convert_text(_two_steps("", "${actions[1].result}"), "PLAN.md").data
    assert in_order["actions"][1]["params"] == {"text": "$<actions[1].result>"}
    with pytest.raises(ConvertFailed) as caught:
        convert_text(_two_steps("step_2", "${actions[1].result}"), "PLAN.md")
    problem = caught.value.problems[0]
    assert problem.path == "steps[1].parameters"
    assert "action 1 is step 'step_2' (the source's step 1 is 'step_1')" in problem.message


@pytest.mark.parametrize("other", ["typeText", "Type_Text", "TYPE_TEXT"])
def test_two_agent_plan_kinds_that_fold_to_one_tool_are_refused(other: str) -> None:
    def step(n: int, kind: str) -> dict[str, Any]:
        return {"id": str(n), "title": f"s{n}", "tool": {"kind": {kind: {"text": "a"}}}}

    doc = {"task_id": "t", "title": "x", "steps": [step(1, "TypeText"), step(2, other)]}
    with pytest.raises(ConvertFailed) as caught:
        convert_text(json.dumps(doc), "PLAN.json")
    problem = caught.value.problems[0]
    assert problem.path == "steps[1].tool.kind"
    assert f"tools 'TypeText' and {other!r} would both be named 'type_text'" in problem.message


def test_one_agent_plan_kind_used_twice_still_converts() -> None:
    step = {"id": "1", "title": "s", "tool": {"kind": {"TypeText": {"text": "a"}}}}
    doc = {"task_id": "t", "title": "x", "steps": [step, {**step, "id": "2"}]}
    data = convert_text(json.dumps(doc), "PLAN.json").data
    assert [a["tool"] for a in data["actions"]] == ["type_text", "type_text"]


@pytest.mark.parametrize("char", ["\u200b", "\u00ad", "\u200e", "\u2060", "\ufeff"])
def test_a_heading_holding_a_character_review_does_not_show_is_refused(char: str) -> None:
    """Round 105: ``## Ste<U+200B>ps`` read as another section, its step kept as text."""
    text = MD + f"\n## Ste{char}ps\n\n### Step 9: Hidden\n- **ID**: step_9\n"
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problem = caught.value.problems[0]
    assert problem.line == _line_of(text, f"## Ste{char}ps")
    assert f"a heading holding U+{ord(char):04X}" in problem.message


@pytest.mark.parametrize("title", ["Step", "Stеps", "Notes"])  # a Cyrillic е in the second
def test_a_record_under_a_section_kept_as_text_is_refused(title: str) -> None:
    text = MD + f"\n## {title}\n\nsome words\n\n### Step 9: Hidden\n- **Action**: rm\n"
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problem = caught.value.problems[0]
    assert problem.code == "E_CONVERT_UNSUPPORTED"
    assert problem.line == _line_of(text, "### Step 9")
    assert f"is a record under `## {title}`" in problem.message


def test_a_section_of_prose_and_an_emoji_heading_still_convert() -> None:
    text = MD + "\n## ⚠️ Risks\n\n### Rollback\nrevert the deploy\n"
    data = convert_text(text, "PLAN.md").data
    assert data["metadata"]["source"]["sections"]["⚠️ Risks"].startswith("### Rollback")


def test_a_heading_is_read_as_commonmark_reads_one() -> None:
    """A no-break space after the ``#``s makes a paragraph on every forge: no step."""
    hidden = MD.replace("### Step 1: Action Name", "###\u00a0Step 1: Action Name")
    with pytest.raises(ConvertFailed):
        convert_text(hidden, "PLAN.md")
    closed = MD.replace("## Steps\n", "## Steps ##\n")
    assert convert_text(closed, "PLAN.md").data == convert_text(MD, "PLAN.md").data


def test_a_kind_is_lower_cased_in_ascii_only() -> None:
    """Round 105: ``str.lower`` made a KELVIN SIGN an ASCII ``k``, with no note."""
    step = {"id": "1", "title": "s", "tool": {"kind": {"TypeTe\u212at": {"text": "a"}}}}
    data = convert_text(json.dumps({"task_id": "t", "title": "x", "steps": [step]})).data
    origin = data["metadata"]["converted_from"]
    assert [a["tool"] for a in data["actions"]] == ["type_te_t"]
    assert origin["tool_names"] == {"type_te_t": "type_te\u212at"}


def test_an_agent_plan_step_id_said_twice_is_refused() -> None:
    """Round 105: the first step's hints were dropped from ``step_metadata``."""
    steps = [
        {"id": "s", "title": f"t{n}", "tool": {"kind": "Wait"}, "metadata": {"n": n}}
        for n in (1, 2)
    ]
    with pytest.raises(ConvertFailed) as caught:
        convert_text(json.dumps({"task_id": "t", "title": "x", "steps": steps}))
    problem = caught.value.problems[0]
    assert problem.path == "steps[1].id"
    assert "step id 's' is used twice (first by step 1)" in problem.message


def _ap_step(number: int, text: str) -> dict[str, Any]:
    return {
        "step_number": number,
        "step_id": f"step:{number:016d}",
        "action": {"type": "send_text", "pane_id": 0, "text": text},
        "description": text,
    }


def _actionplan(on_failure: dict[str, Any]) -> dict[str, Any]:
    """A one-step ActionPlan (``send_text``) whose step fails over as ``on_failure`` says."""
    return {
        "plan_version": 1,
        "title": "t",
        "steps": [{**_ap_step(1, "main"), "on_failure": on_failure}],
    }


def _actionplan_fallback(numbers: list[int]) -> dict[str, Any]:
    return _actionplan({"strategy": "fallback", "steps": [_ap_step(n, f"fb{n}") for n in numbers]})


@pytest.mark.parametrize("numbers", [[2, 1], [1, 1], [1, 5]])
def test_a_fallbacks_steps_are_numbered_as_they_run(numbers: list[int]) -> None:
    """Round 106: a fallback's steps numbered 2, 1 converted in array order, the step the
    source numbers 1 running second; as a plan's steps, they are numbered 1..N in order."""
    with pytest.raises(ConvertFailed) as caught:
        convert_text(json.dumps(_actionplan_fallback(numbers)), "PLAN.json")
    paths = [p.path for p in caught.value.problems]
    assert any(p.startswith("steps[0].on_failure.steps[") and "step_number" in p for p in paths)
    in_order = convert_text(json.dumps(_actionplan_fallback([1, 2])), "PLAN.json").data
    fallback = in_order["actions"][0]["fallback"]
    assert [(f["id"], f["params"]["text"]) for f in fallback] == [("1.1", "fb1"), ("1.2", "fb2")]


@pytest.mark.parametrize("warn", ["yes", 1, [True]])
def test_a_skips_warn_is_a_boolean(warn: Any) -> None:
    doc = _actionplan({"strategy": "skip", "warn": warn})
    with pytest.raises(ConvertFailed) as caught:
        convert_text(json.dumps(doc), "PLAN.json")
    assert caught.value.problems[0].path == "steps[0].on_failure.warn"
    doc["steps"][0]["on_failure"]["warn"] = True
    assert convert_text(json.dumps(doc), "PLAN.json").data["actions"][0]["on_failure"] == "skip"


def test_the_written_plan_yml_shows_text_nfc_would_change_escaped() -> None:
    """Round 107: keys ``"\\u00e9"`` and ``"e\\u0301"`` were written as two ``é``: the file
    read the same for two things the tool gets apart. Escaped as ``show`` escapes them.

    Changed (round 122, ``nfc-twin-keys``): those two keys in one object are one key said
    twice (docs/formats.md, "Every field is said once"), refused; text NFC would change is
    still written escaped, a key beside a key of another name."""
    args = {"\u00e9": 1, "a\u0301": 2, "k": "\u212a"}
    steps = [{"step_id": "s", "tool": "t", "args": args}]
    source = json.dumps({"plan_version": 1, "skill_id": "s", "goal": "g", "steps": steps})
    converted = convert_text(source, "PLAN.json")
    assert '"é": 1' in converted.text and '"a\\u0301": 2' in converted.text
    assert '"\\u212a"' in converted.text
    assert converted.data["actions"][0]["params"] == args
    twins = source.replace('"a\\u0301"', '"e\\u0301"')
    with pytest.raises(ConvertFailed) as caught:
        convert_text(twins, "PLAN.json")
    assert [p.code for p in caught.value.problems] == ["E_SCHEMA_INVALID"]
    assert "said twice" in caught.value.problems[0].message


# --- round 108: a step's number, its id, a legacy reference and a comment read as written


def _md_steps(numbers: list[int]) -> str:
    """The example with one step per number, headed ``### Step N:`` in the order given."""
    steps = "".join(
        f"### Step {n}: S{n}\n- **ID**: step_{n}\n- **Task**: task_1\n- **Action**: rec\n"
        f'- **Parameters**: {{"tag": "{n}"}}\n- **Dependencies**: []\n\n'
        for n in numbers
    )
    head, rest = MD.split("### Step 1: Action Name", 1)
    text = head + steps + "## Shared" + rest.split("## Shared", 1)[1]
    ids = ", ".join(f"step_{n}" for n in numbers)
    return text.replace("- **Steps**: step_1, step_2", f"- **Steps**: {ids}")


@pytest.mark.parametrize("numbers", [[2, 1], [1, 1], [1, 7]])
def test_markdown_step_headings_must_be_numbered_as_written(numbers: list[int]) -> None:
    text = _md_steps(numbers)
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problem = next(p for p in caught.value.problems if "at position 2" in p.message)
    assert problem.code == "E_CONVERT_UNSUPPORTED"
    assert problem.line == text[: text.rindex("### Step")].count("\n") + 1  # the second
    assert "at position 2: steps must be numbered 1..N in order" in problem.message
    assert "1..N in the order they are written" in (problem.remedy or "")


def test_markdown_step_headings_numbered_in_order_convert() -> None:
    data = convert_text(_md_steps([1, 2, 3]), "PLAN.md").data
    assert [a["params"]["tag"] for a in data["actions"]] == ["1", "2", "3"]


def _pc(steps: list[dict[str, Any]]) -> str:
    return json.dumps({"plan_version": 1, "skill_id": "s", "goal": "g", "steps": steps})


def test_a_numeric_plan_contract_step_id_is_the_steps_place() -> None:
    steps = [{"step_id": sid, "tool": "rec", "args": {}} for sid in ("2", "1")]
    with pytest.raises(ConvertFailed) as caught:
        convert_text(_pc(steps), "PLAN.json")
    assert [p.path for p in caught.value.problems] == ["steps[0].step_id", "steps[1].step_id"]
    assert convert_text(_pc(steps[::-1]), "PLAN.json").data["actions"][0]["id"] == 1


@pytest.mark.parametrize("hidden", ["\u200b", "\u00ad", "\u2060"])
def test_a_step_id_holding_a_hidden_character_is_refused(hidden: str) -> None:
    steps = [
        {"step_id": "fetch", "tool": "rec", "args": {}},
        {"step_id": "fetch" + hidden, "tool": "rec", "args": {}},
        {"step_id": "send", "tool": "rec", "args": {}, "depends_on": ["fetch" + hidden]},
    ]
    with pytest.raises(ConvertFailed) as caught:
        convert_text(_pc(steps), "PLAN.json")
    problems = caught.value.problems
    assert [(p.code, p.path) for p in problems] == [
        ("E_SCHEMA_INVALID", "steps[1].step_id"),
        ("E_SCHEMA_INVALID", "steps[2].depends_on[0]"),
    ]
    assert hidden.encode("unicode_escape").decode() in problems[0].message


def test_a_markdown_step_id_not_in_nfc_is_refused_at_its_line() -> None:
    text = _md_steps([1, 2]).replace("step_2", "ste\u0301p_2")
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problem = next(p for p in caught.value.problems if p.path == "steps[1].id")
    assert problem.line == _line_of(text, "- **ID**: ste\u0301p_2")
    assert "not in NFC" in problem.message


@pytest.mark.parametrize(
    "written", ["${inputs.to>x}", "${actions[1].result.tag>x}", '${actions[1].result["a}b"]}']
)
def test_a_legacy_reference_not_carried_whole_is_refused(written: str) -> None:
    steps = [
        {"step_id": "a", "tool": "rec", "args": {}},
        {"step_id": "b", "tool": "rec", "args": {"x": written}},
    ]
    with pytest.raises(ConvertFailed) as caught:
        convert_text(_pc(steps), "PLAN.json")
    problem = caught.value.problems[0]
    assert (problem.code, problem.path) == ("E_REF_INVALID", "actions[1].params.x")
    assert problem.message.startswith("action 2: `${actions[1]" if "actions" in written else "")
    assert "$<...>" in (problem.remedy or "")


def test_a_legacy_reference_carried_whole_converts_and_other_text_stays() -> None:
    args = {"q": '${inputs["a>b"]}', "t": "${planet} ${HOME}"}
    data = convert_text(_pc([{"step_id": "a", "tool": "rec", "args": args}]), "PLAN.json").data
    assert data["actions"][0]["params"] == {"q": '$<inputs["a>b"]>', "t": "${planet} ${HOME}"}


def test_a_plan_yml_legacy_reference_cut_at_a_gt_is_refused() -> None:
    from controller.plan import refs
    from controller.plan.plans import check_document

    assert refs.convert_legacy("${inputs.to>x}") == "${inputs.to>x}"
    plan = {
        "plan": {"name": "n", "task": "t", "status": "pending_approval"},
        "available_tools": [{"name": "rec"}],
        "actions": [{"id": 1, "tool": "rec", "why": "w", "params": {"x": "${inputs.to>x}"}}],
        "inputs": {"to": "a"},
    }
    _model, problems = check_document(plan)
    assert [(p.code, p.path) for p in problems] == [("E_REF_INVALID", "actions[0].params.x")]
    plan["actions"][0]["params"] = {"x": "${inputs.to}"}
    assert check_document(plan)[1] == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"tag": "1"}', '"tag": "1 <!-- ; rm -rf ~ -->"}'),
        ("## Objective", "## Objective\nsee <!-- hidden --> here"),
    ],
)
def test_an_html_comment_in_a_markdown_plan_is_refused_at_its_line(old: str, new: str) -> None:
    text = _md_steps([1]).replace(old, new, 1)
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problem = caught.value.problems[0]
    assert problem.code == "E_CONVERT_UNSUPPORTED"
    assert problem.line == _line_of(text, "<!--")
    assert "HTML comment" in problem.message


def test_an_html_comment_in_a_fenced_block_is_text() -> None:
    fenced = '## Shared Inputs\n```json\n{"note": "a <!-- b -->"}\n```\n'
    text = _md_steps([1]).replace("## Shared Inputs\n(Optional shared data)\n", fenced)
    assert convert_text(text, "PLAN.md").data["inputs"] == {"note": "a <!-- b -->"}


# --- round 109: a step's number spelt otherwise, an id rendered otherwise, raw HTML


def _md_headed(heads: list[str], ids: list[str] | None = None, deps: str = "[]") -> str:
    """The example with one step per heading (``### {head} S{n}``), ids ``step_{n}``."""
    ids = ids or [f"step_{n}" for n in range(1, len(heads) + 1)]
    steps = "".join(
        f"### {head} S{n}\n- **ID**: {sid}\n- **Task**: task_1\n- **Action**: rec\n"
        f'- **Parameters**: {{"tag": "{n}"}}\n- **Dependencies**: {deps if n == 3 else "[]"}\n\n'
        for n, (head, sid) in enumerate(zip(heads, ids, strict=True), 1)
    )
    head, rest = MD.split("### Step 1: Action Name", 1)
    text = head + steps + "## Shared" + rest.split("## Shared", 1)[1]
    return text.replace("- **Steps**: step_1, step_2", f"- **Steps**: {', '.join(ids)}")


@pytest.mark.parametrize(
    "heads",
    [
        ["Step II:", "Step I:"],
        ["Step Two:", "Step One:"],
        ["Step #2:", "Step #1:"],
        ["Step (2):", "Step (1):"],
        ["Step-2:", "Step-1:"],
        ["Step_2:", "Step_1:"],
        ["2.", "1."],
        ["Step \u2461:", "Step \u2460:"],
        ["Step \u00b2:", "Step \u00b9:"],
        ["Step \u2161:", "Step \u2160:"],
        ["Step \uff12:", "Step \uff11:"],
        ["Step 2.0:", "Step 1.0:"],
        ["Fetch:", "Send:"],
    ],
)
def test_a_step_heading_not_numbered_in_the_digits_0_9_is_refused_at_its_line(
    heads: list[str],
) -> None:
    """Round 109: ``### Step II`` before ``### Step I`` converted in written order with no
    note: ``actions[1]`` was the step headed ``Step II``."""
    text = _md_headed(heads)
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problem = caught.value.problems[0]
    assert problem.code == "E_CONVERT_UNSUPPORTED"
    assert problem.line == _line_of(text, f"### {heads[0]}")
    assert "is no `### Step N:` heading with N in the digits 0-9" in problem.message
    assert "`### Step N: Title`" in (problem.remedy or "")


@pytest.mark.parametrize(
    "heads",
    [
        ["Step 1:", "Step 2:", "Step 3:"],
        ["Step 1.", "Step 2.", "Step 3."],
        ["Step1:", "Step2:", "Step3:"],
        ["step 1 -", "STEP 2 -", "Step 3 -"],
        ["Step 1/3:", "Step 2/3:", "Step 3/3:"],
        ["Step 01:", "Step 02:", "Step 03:"],
    ],
)
def test_a_step_heading_numbered_in_place_in_the_digits_0_9_converts(heads: list[str]) -> None:
    data = convert_text(_md_headed(heads), "PLAN.md").data
    assert [a["params"]["tag"] for a in data["actions"]] == ["1", "2", "3"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (" 2", " 1"),
        ("\uff12", "\uff11"),
        ("\u0662", "\u0661"),
        ("\u2461", "\u2460"),
        ("2.0", "1.0"),
        ("#2", "#1"),
        ("Step 2", "Step 1"),
    ],
)
@pytest.mark.parametrize("fmt", ["contract", "task-step"])
def test_a_step_id_that_reads_as_a_number_and_is_none_is_refused(
    fmt: str, first: str, second: str
) -> None:
    """Round 109: a Plan Contract ``step_id`` ``"２"`` (or ``" 2"``, ``"#2"``, ...) before
    ``"１"`` converted in written order: markdown refused ``Step ２``, the contract took it."""
    if fmt == "contract":
        steps = [{"step_id": sid, "tool": "rec", "args": {}} for sid in (first, second)]
        source, field = _pc(steps), "step_id"
    else:
        source = json.dumps(
            {
                "metadata": {"title": "T", "objective": "O"},
                "tasks": [{"id": "task_1", "name": "N", "steps": [first, second]}],
                "steps": [
                    {"id": sid, "task_id": "task_1", "action": "rec", "parameters": {}}
                    for sid in (first, second)
                ],
            }
        )
        field = "id"
    with pytest.raises(ConvertFailed) as caught:
        convert_text(source, "PLAN.json")
    problems = [p for p in caught.value.problems if p.path == f"steps[0].{field}"]
    assert [p.code for p in problems] == ["E_SCHEMA_INVALID"]
    assert "reads as a step's number and is none" in problems[0].message


def test_a_step_id_in_the_digits_0_9_or_a_name_converts() -> None:
    for ids in (("1", "2"), ("01", "02"), ("step_2", "step_1"), ("s2", "fetch")):
        steps = [{"step_id": sid, "tool": "rec", "args": {}} for sid in ids]
        assert len(convert_text(_pc(steps), "PLAN.json").data["actions"]) == 2


@pytest.mark.parametrize("hidden", ["step\\_1", "step&#95;1", "step&#x5F;1", "step&lowbar;1"])
def test_a_markdown_id_a_forge_renders_as_another_is_refused(hidden: str) -> None:
    """Round 109: ids ``step_1`` and ``step\\_1`` render as one; a dependency on the escaped
    one converted to ``needs: [2]``, which the rendered view shows as one on step 1."""
    ids = ["step_1", hidden, "step_3"]
    text = _md_headed(["Step 1:", "Step 2:", "Step 3:"], ids, deps=f"[{hidden}]")
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problems = caught.value.problems
    assert {p.code for p in problems} == {"E_CONVERT_UNSUPPORTED"}
    assert {p.path for p in problems} >= {"steps[1].id", "steps[2].dependencies"}
    assert "a forge renders it as another character" in problems[0].message


@pytest.mark.parametrize(
    "html",
    [
        "<? ; rm -rf ~ ?>",
        "<!X ; rm -rf ~ >",
        "<![CDATA[ ; rm -rf ~ ]]>",
        "<x y='; rm -rf ~'>",
        "</x >",
        "<br/>",
        "<script>",
    ],
)
@pytest.mark.parametrize("where", ["param", "input", "objective"])
def test_raw_html_in_a_markdown_plan_is_refused_at_its_line(where: str, html: str) -> None:
    """Round 109: ``{"cmd": "ls <? ; rm -rf ~ ?>"}`` converted and ran; a forge shows
    ``"cmd": "ls "``. Round 108 refused only ``<!--``."""
    text = _md_steps([1])
    if where == "param":
        text = text.replace('"tag": "1"}', '"tag": "1", "cmd": "ls ' + html + '"}', 1)
    elif where == "input":
        text = text.replace("(Optional shared data)", "- to: ok@example.com" + html, 1)
    else:
        text = text.replace("Clear plan objective", "Clear plan " + html, 1)
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problem = caught.value.problems[0]
    assert problem.code == "E_CONVERT_UNSUPPORTED"
    assert problem.line == _line_of(text, html)
    assert "raw HTML" in problem.message and "\\u003c" in (problem.remedy or "")


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("`ls <? ; rm ?>`", "ls <? ; rm ?>"),  # a code span shows its text
        ("ls \\<? x ?>", "ls <? x ?>"),  # an escaped `<` is text
        # autolinks show as links, their text
        ("<https://example.com/a?b> <ok@example.com>", "https://example.com/a?b ok@example.com"),
        ("$<inputs.to> $<actions[1].result.tag> a < b, c<d, e<<f;",) * 2,
    ],
)
def test_text_a_forge_shows_as_written_is_no_raw_html(value: str, shown: str) -> None:
    """The objective converts to the text a forge shows (round 113: descriptive text as
    shown, no markup kept), and none of these is raw HTML."""
    text = _md_steps([1]).replace("Clear plan objective", value, 1)
    assert convert_text(text, "PLAN.md").data["plan"]["task"] == shown


# --- round 110: a markdown value renders as written, fences are CommonMark's, no hidden name


def _md_param(params: str) -> str:
    return _md_steps([1]).replace('{"tag": "1"}', params, 1)


@pytest.mark.parametrize(
    ("params", "named"),
    [
        (r'{"tag": "A\", \"mode\": \"dry-run"}', 'a backslash escape `\\"`'),
        ('{"tag": "A&quot;, &quot;mode&quot;: &quot;x"}', "a character reference `&quot;`"),
        ('{"cmd": "ls &#x3B; rm"}', "a character reference `&#x3B;`"),
        ('{"path": "/srv/app&shy;/data"}', "a character reference `&shy;`"),
        ('{"cmd": "[ls](u \'; rm -rf ~\')"}', "a link"),
        ('{"to": "[ok@example.com](mailto:evil@example.net)"}', "a link"),
        ('{"cmd": "ls ![](;rm)"}', "an image"),
        ('{"glob": "*.log", "x": "a*"}', "emphasis `*`"),
        ('{"path": "/srv/__init__/x"}', "strong emphasis `__`"),
        ('{"x": "~~old~~ new"}', "strikethrough `~~`"),
    ],
)
def test_a_markdown_value_a_forge_renders_otherwise_is_refused_at_its_line(
    params: str, named: str
) -> None:
    """Round 110: ``{"tag": "A\\", \\"mode\\": \\"dry-run"}`` converted to one ``tag``; a forge
    shows ``{"tag": "A", "mode": "dry-run"}``. A link's title and destination, a reference,
    emphasis eating its stars: each showed other text than the tool got."""
    text = _md_param(params)
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problem = caught.value.problems[0]
    assert (problem.code, problem.path) == ("E_CONVERT_UNSUPPORTED", "steps[0].parameters")
    assert problem.line == _line_of(text, "- **Parameters**")
    assert f"{named} in a value" in problem.message
    assert "code span" in (problem.remedy or "")


@pytest.mark.parametrize("where", ["\n## Notes\n[r]: http://x '; rm -rf ~'\n", "\n[r]: /u\n"])
def test_a_reference_link_whose_definition_sits_anywhere_is_refused(where: str) -> None:
    """Round 110: ``[ls][r]`` with ``[r]: http://x '; rm -rf ~'`` in ``## Notes`` or the
    objective: the definition line is never rendered, the value shows ``ls``."""
    text = _md_param('{"cmd": "[ls][r]"}')
    text = text.replace("\n## Shared Inputs", where + "\n## Shared Inputs", 1)
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    assert "a link in a value" in caught.value.problems[0].message
    # without a definition, `[ls][r]` renders as written: text
    plain = convert_text(_md_param('{"cmd": "[ls][r]"}'), "PLAN.md").data
    assert plain["actions"][0]["params"] == {"cmd": "[ls][r]"}


@pytest.mark.parametrize(
    "inputs",
    [
        "- to: [ok@example.com](mailto:evil@example.net)",
        "- to: ok@example.com&#44; evil@example.net",
        "- to: ok@example.com![](evil@example.net)",
        r'{"to": "ok@example.com\", \"cc\": \"evil@example.net"}',
    ],
)
def test_a_shared_input_a_forge_renders_otherwise_is_refused(inputs: str) -> None:
    text = _md_steps([1]).replace("(Optional shared data)", inputs, 1)
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problem = caught.value.problems[0]
    assert problem.code == "E_CONVERT_UNSUPPORTED" and "in a value" in problem.message
    assert problem.line == _line_of(text, inputs)


@pytest.mark.parametrize(
    "value",
    [
        "plain text, a comma; and a semicolon",
        "https://x.example/a_b_c",
        "a*b",
        "ls *.txt *.log",
        "ok@example.com",
        "snake_case_name, a__b__c",
        "$<inputs.to> a < b",
        "AT&T; a&b",
        "[x] without a definition",
    ],
)
def test_a_markdown_value_that_renders_as_written_converts_as_written(value: str) -> None:
    data = convert_text(_md_param(json.dumps({"v": value})), "PLAN.md").data
    assert data["actions"][0]["params"] == {"v": value}
    inputs = _md_steps([1]).replace("(Optional shared data)", f"- v: {value}", 1)
    assert convert_text(inputs, "PLAN.md").data["inputs"] == {"v": value}


@pytest.mark.parametrize(
    ("params", "read"),
    [
        ('`{"glob": "*.log", "x": "a*"}`', {"glob": "*.log", "x": "a*"}),
        (r'`{"tag": "A\", \"mode\": \"x"}`', {"tag": 'A", "mode": "x'}),
        ('{"glob": "`*.log`"}', {"glob": "`*.log`"}),
        ('{"url": "<https://x.example/a_b>"}', {"url": "<https://x.example/a_b>"}),
        ('{"glob": "\\u002a.log", "amp": "\\u0026quot;"}', {"glob": "*.log", "amp": "&quot;"}),
    ],
)
def test_a_code_span_an_autolink_and_a_json_escape_convert_as_today(
    params: str, read: dict[str, Any]
) -> None:
    """The remedy: a code span shows its text as written (the whole value in one is read
    without its backticks, as before), and a JSON escape is no markdown."""
    assert convert_text(_md_param(params), "PLAN.md").data["actions"][0]["params"] == read


@pytest.mark.parametrize("marked", ["*step_1*", "_step_1_", "**step_1**", "~~step_1~~"])
def test_a_markdown_id_rendered_with_emphasis_is_refused(marked: str) -> None:
    """Round 110: ``step_1`` and ``*step_1*`` render as one id (italic); a dependency on the
    marked one converted to one on step 2."""
    ids = ["step_1", marked, "step_3"]
    text = _md_headed(["Step 1:", "Step 2:", "Step 3:"], ids, deps=f"[{marked}]")
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problems = caught.value.problems
    assert {p.path for p in problems} >= {"steps[1].id", "steps[2].dependencies"}
    assert all(p.code == "E_CONVERT_UNSUPPORTED" for p in problems)
    assert "in an id" in problems[0].message


def _md_notes(block: str) -> str:
    return _md_steps([1, 2]).replace("## Steps\n", "## Notes\n" + block + "\n## Steps\n", 1)


@pytest.mark.parametrize(
    "block", ["```\nx\n``` y\n", "````\nx\n```\n", "```\nx\n    ```\n", "~~~\nx\n```\n"]
)
def test_a_fence_commonmark_never_closes_is_refused_at_its_line(block: str) -> None:
    """Round 110: a closing line with an info string, a shorter or other fence, or one
    indented four spaces: a forge shows ``## Steps`` and every step as code under
    ``## Notes``; a hand scan closed the block and read both steps."""
    text = _md_notes(block)
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    problem = caught.value.problems[0]
    assert problem.code == "E_CONVERT_UNSUPPORTED"
    assert problem.line == _line_of(text, "## Notes") + 1
    assert "never closed as CommonMark closes one" in problem.message


@pytest.mark.parametrize(
    "block",
    ["```\nx\n```\n", "````\n```\n## Steps\n````\n", "~~~ sh\n```\n~~~\n", "   ```\nx\n   ```\n"],
)
def test_a_fence_commonmark_closes_is_code_and_the_steps_convert(block: str) -> None:
    data = convert_text(_md_notes(block), "PLAN.md").data
    assert [a["params"]["tag"] for a in data["actions"]] == ["1", "2"]


def test_a_tab_before_backticks_opens_no_fence_in_a_markdown_plan() -> None:
    """``\\t```‍`` after a heading is an indented code block: the lines after it are read, as
    a forge shows them (a hand scan took it for a fence and hid the steps)."""
    data = convert_text(_md_notes("\t```\n"), "PLAN.md").data
    assert [a["params"]["tag"] for a in data["actions"]] == ["1", "2"]


REPLY_PLAN = json.dumps(
    {"plan_version": 1, "skill_id": "s", "goal": "g", "steps": [{"step_id": "1", "tool": "rec"}]}
)


@pytest.mark.parametrize(
    ("opener", "closer"),
    [("\t```json", "\t```"), ("    ```json", "    ```"), ("```json", "``` x"), ("````json", "```")],
)
def test_a_reply_whose_fence_commonmark_does_not_read_is_refused(opener: str, closer: str) -> None:
    """Round 110: a reply ``PLAN.md`` fenced after a TAB: to CommonMark an indented code
    block of the opener alone and the JSON a paragraph, where ``<!-- -->`` is hidden."""
    with pytest.raises(ParseNonJson) as caught:
        convert_text(f"{opener}\n{REPLY_PLAN}\n{closer}\n", "PLAN.md")
    assert caught.value.message.startswith("PLAN.md:1:")


@pytest.mark.parametrize(
    ("opener", "closer"), [("   ```json", "   ```"), ("~~~json`", "~~~"), ("````json", "`````")]
)
def test_a_reply_fenced_as_commonmark_reads_converts(opener: str, closer: str) -> None:
    data = convert_text(f"{opener}\n{REPLY_PLAN}\n{closer}\n", "PLAN.md").data
    assert data["actions"][0]["tool"] == "rec"


@pytest.mark.parametrize("char", ["\u200b", "\u202e", "\u2060", "\u00ad", "\ufeff", "\u3164"])
@pytest.mark.parametrize("fmt", ["md", "json", "toon", "yaml", "nested"])
def test_a_name_holding_a_hidden_character_is_refused_in_every_source(fmt: str, char: str) -> None:
    """Round 110: ``{"tag": "A", "dry_run<U+200B>": true}`` converted; every review of the
    source reads ``dry_run``, and a tool that ignores unknown keys ran for real."""
    key = f"dry{char}_run"
    loc: tuple[str | int, ...] = ("actions", 0, "params", key)
    if fmt == "md":
        source, name = _md_param(json.dumps({"tag": "A", key: True}, ensure_ascii=False)), "x.md"
    elif fmt in ("json", "nested"):
        args = {"tag": "A", key: True} if fmt == "json" else {"tag": {"deep": [{key: 1}]}}
        source, name = _pc([{"step_id": "1", "tool": "rec", "args": args}]), "x.json"
        loc = loc if fmt == "json" else ("actions", 0, "params", "tag", "deep", 0, key)
    elif fmt == "toon":
        source = TOON.replace("shared_inputs: {}", f"shared_inputs:\n  {key}: true")
        name, loc = "x.toon", ("inputs", key)
    else:
        pte = (EXAMPLES / "formats" / "pte-customer-emails.yml").read_text()
        source = pte.replace('folder: "inbox"', f'folder: "inbox"\n      "{key}": true', 1)
        name = "x.yml"
    with pytest.raises(ConvertFailed) as caught:
        convert_text(source, name)
    problems = [p for p in caught.value.problems if "holds U+" in p.message]
    assert [(p.code, p.path) for p in problems] == [("E_SCHEMA_INVALID", format_path(loc))]
    assert f"U+{ord(char):04X}" in problems[0].message


def test_a_name_with_an_emoji_or_a_line_separator_converts() -> None:
    """An emoji's variation selector shows as the emoji; a line separator or a control in a
    name is kept and written escaped in PLAN.yml (round 107), not refused."""
    args = {"\u26a0\ufe0f": "warn", "\u2028": 3, "a\x1bb": 4}
    data = convert_text(_pc([{"step_id": "1", "tool": "rec", "args": args}]), "x.json").data
    assert data["actions"][0]["params"] == args


def test_a_markdown_file_holds_its_data_only_where_a_forge_shows_it_as_written() -> None:
    """Round 113 (``md-bare-data-rendered``): a ``PLAN.md`` holding a bare JSON object (or
    TOON, or YAML) converted as data, while every forge renders the file as markdown: a
    ``<!-- ... -->`` in a value vanished from the reviewer's view, and links, tags, emphasis
    and entities changed. A markdown file's data is read from one fenced block, or from one
    indented code block that is the whole file; a model's reply that is no markdown file may
    still be the bare object (the Plan Contract)."""
    reply = (EXAMPLES / "formats" / "plan-contract-reply.md").read_text()
    fenced = reply.strip().split("\n")
    assert fenced[0].startswith("```") and fenced[-1] == "```"
    bare = "\n".join(fenced[1:-1]) + "\n"  # the same JSON object, no fence
    with pytest.raises(ParseNonJson) as caught:
        convert_text(bare, "PLAN.md")
    assert "PLAN.md:1: a markdown file holding neither a markdown plan" in caught.value.message
    assert "fenced block" in caught.value.remedy
    as_code = "".join(f"    {line}\n" if line else "\n" for line in bare.split("\n")[:-1])
    assert convert_text(as_code, "PLAN.md").data == convert_text(reply, "PLAN.md").data
    assert convert_text(bare, "reply.txt").data == convert_text(reply, "PLAN.md").data


@pytest.mark.parametrize(
    ("source", "field", "shown"),
    [
        ("# [Plan](x '; delete all') Title\n", "name", "Plan Title"),
        ("# Plan &amp; *Title*\n", "name", "Plan & Title"),
        (
            "## Objective\n\nClear [plan](u 'rm -rf') \\*objective\\*\n",
            "task",
            "Clear plan *objective*",
        ),
    ],
)
def test_markdown_prose_converts_as_a_forge_shows_it(source: str, field: str, shown: str) -> None:
    """Round 113 (``md-prose-markup-kept``): the title and objective became ``name`` and
    ``task`` as their markdown source (a link's hidden title and destination, ``&amp;``,
    ``\\*``), which a forge shows as other text."""
    if source.startswith("# "):
        text = MD.replace("# Plan Title\n", source)
    else:
        text = MD.replace("## Objective\nClear plan objective\n", source)
    assert text != MD
    assert convert_text(text, "PLAN.md").data["plan"][field] == shown


@pytest.mark.parametrize(
    "heading", ["### Step 1: ~~Delete~~ Action Name", "### Step 1: ![Action](x)"]
)
def test_struck_out_or_pictured_prose_is_refused_at_its_line(heading: str) -> None:
    """Strikethrough reads as its words, an image shows no words: neither converts."""
    text = MD.replace("### Step 1: Action Name", heading)
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    line = _line_of(MD, "### Step 1: Action Name")
    assert f"line {line}:" in caught.value.message
    assert "descriptive text" in caught.value.message


@pytest.mark.parametrize("number", ["NaN", "-Infinity", "1e400"])
def test_a_number_no_json_holds_is_refused_at_its_place(number: str) -> None:
    """Round 113 (``nonfinite-number-unlocated``): refused with Python's words ("Out of range
    float values are not JSON compliant") and no location."""
    reply = (EXAMPLES / "formats" / "plan-contract-reply.md").read_text()
    body = reply.split("```json\n", 1)[1].split("```", 1)[0]
    text = body.replace('"style": "concise"', f'"style": "concise", "n": {number}')
    assert text != body
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.json")
    assert f"the number {number} is not finite" in caught.value.message
    assert "not JSON compliant" not in caught.value.message
    assert "steps[1].args.n" in caught.value.message


@pytest.mark.parametrize("char", ["\u00a0", "\u2009", "\u3000", "\u202f", "\u200b"])
def test_a_space_lookalike_at_an_unquoted_toon_edge_is_refused(char: str) -> None:
    """Round 113 (``space-lookalike-in-source``): TOON trims an ASCII space at an unquoted
    value's edge and kept these: ``error_recovery: <NBSP>true`` was the string."""
    text = TOON.replace("error_recovery: true", f"error_recovery: {char}true")
    assert text != TOON
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.toon")
    assert f"U+{ord(char):04X}" in caught.value.message
    assert "workflow_config.error_recovery" in caught.value.message
