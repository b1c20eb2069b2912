"""Round 122's reader classes (tests/adversarial/test_round122_sources_atk122c.py, classes
1-6): one rule of what a review draws as nothing (``controller.display.INVISIBLE``: format
characters, every Default_Ignorable_Code_Point, blank glyphs) for every reader's names and
unquoted edges; a lone CR in TOON refused; two keys one in NFC are one key said twice; a
markdown bullet's marker is followed by a space or a tab, as CommonMark reads one."""

from __future__ import annotations

import pytest

from controller import display
from controller.errors import PlangateError, YamlParseError
from controller.plan import refs, yamlio
from controller.plan.convert import convert_text
from tests.support.gitenv import EXAMPLES

MD = (EXAMPLES / "formats" / "toon-plan-core.md").read_text()
PARAMS = "- **Parameters**: {}\n"
TIMEOUT = "- **Timeout**: 30s\n"
RECOVERY = "- Error Recovery: true\n"
assert PARAMS in MD and TIMEOUT in MD and RECOVERY in MD

#: What the attackers used (round 122) and what the old hand lists missed: bidi marks and
#: isolates, an invisible operator, the combining grapheme joiner, a Hangul filler, a
#: language tag, the Arabic letter mark, an unassigned default-ignorable, a blank glyph.
MISSED = [
    "\u200e",
    "\u202e",
    "\u2066",
    "\u2064",
    "\u034f",
    "\u3164",
    "\U000e0001",
    "\u061c",
    "\u2065",
    "\ufff0",
    "\U000e0002",
    "\u2800",
]


def _pc(args: str) -> str:
    return (
        '{"plan_version": 1, "skill_id": "s", "goal": "g", "steps": [{"step_id": "1", '
        '"tool": "rec", "args": ' + args + "}]}"
    )


def _toon(params: str, nl: str = "\n") -> str:
    text = (
        "metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\n"
        "steps[1]:\n  - id: s1\n    task_id: task_1\n    action: rec\n    parameters:\n"
        + params
        + "shared_inputs: {}\nworkflow_config:\n  parallel_execution: false\n"
        "  error_recovery: false\n"
    )
    return text.replace("\n", nl)


def _plan_yml(params: str) -> str:
    return (
        "plan:\n  name: p\n  task: t\n  status: pending_approval\navailable_tools:\n"
        "  - name: rec\nactions:\n  - id: 1\n    tool: rec\n    why: w\n    params:\n"
        "      tag: x\n" + params
    )


def _refused(text: str, name: str) -> list[tuple[str, str]]:
    """(code, message) of each problem converting ``text`` finds; fails if it converts."""
    with pytest.raises(PlangateError) as caught:
        convert_text(text, name)
    problems = getattr(caught.value, "problems", None)
    if problems:
        return [(p.code, f"{p.path} {p.message}") for p in problems]
    return [(caught.value.code, str(caught.value))]


def _params(text: str, name: str) -> dict[str, object]:
    return convert_text(text, name).data["actions"][0]["params"]  # type: ignore[no-any-return]


# -- the rule ---------------------------------------------------------------------------------


def test_the_invisible_rule_is_format_characters_default_ignorables_and_blank_glyphs() -> None:
    """One class, by Unicode properties: every Cf, every Default_Ignorable_Code_Point (its
    unassigned ranges too: U+2065, U+FFF0-U+FFF8, U+E0000-U+E0FFF) and the blank glyphs; a
    subset of what ``show`` escapes (HIDDEN), and nothing a review draws."""
    import unicodedata

    everything = "".join(map(chr, range(0x110000)))
    invisible = set(display.INVISIBLE.findall(everything))
    cf = {c for c in everything if unicodedata.category(c) == "Cf"}
    ignorable = {chr(c) for lo, hi in display.DEFAULT_IGNORABLE for c in range(lo, hi + 1)}
    blanks = {chr(c) for c in display.BLANK_GLYPHS}
    assert invisible == cf | ignorable | blanks
    assert invisible <= set(display.HIDDEN.findall(everything))
    assert not invisible & set("abc 09\t\n-_:é")
    assert {"\u2065", "\ufff8", "\U000e0fff", "\u3164", "\u034f"} <= invisible


@pytest.mark.parametrize("char", MISSED)
def test_a_name_or_an_unquoted_edge_with_an_invisible_character_is_found(char: str) -> None:
    assert display.first_ignorable(f"dry_run{char}") == char
    assert display.edge_blank(f"dry_run{char}") == char
    assert display.edge_blank(f"{char}dry_run") == char
    assert display.edge_blank(f"dry{char}run") is None  # not at an edge


def test_an_emoji_variation_selector_is_kept_at_an_edge_and_in_a_name() -> None:
    assert display.edge_blank("ok \u2705\ufe0f") is None
    assert display.first_ignorable("\u26a0\ufe0f") is None
    assert display.edge_blank("ok\ufe0f") == "\ufe0f"  # after ASCII: drawn as nothing


@pytest.mark.parametrize("char", ["\u2065", "\u2066", "\u3164", "\U000e0001"])
def test_a_legacy_opener_after_any_invisible_character_is_refused(char: str) -> None:
    text = f"${{{char}inputs.to}}"
    assert refs.convert_legacy(text) == text
    assert refs.legacy_uncarried(text) is not None


# -- class 1: PLAN.yml and YAML sources -------------------------------------------------------


@pytest.mark.parametrize("char", MISSED)
@pytest.mark.parametrize("where", ["key", "value-end", "value-start", "flow"])
def test_a_plain_yaml_scalar_with_an_invisible_edge_is_refused_at_its_line(
    char: str, where: str
) -> None:
    """``dry_run<U+200E>: true`` validated as the key ``dry_run\\u200e`` and ``dry_run:
    true<U+2064>`` as a string, where the diff shows ``dry_run: true``."""
    text = {
        "key": f"a: 1\ndry_run{char}: true\n",
        "value-end": f"a: 1\ndry_run: true{char}\n",
        "value-start": f"a: 1\nmode: {char}0777\n",
        "flow": f"a: 1\no: {{dry_run: {char}false}}\n",
    }[where]
    with pytest.raises(YamlParseError) as caught:
        yamlio.read_yaml(text, "PLAN.yml")
    assert caught.value.line == 2
    assert f"U+{ord(char):04X}" in str(caught.value)
    quoted = yamlio.read_yaml(f'a: 1\n"dry_run{char}": "true{char}"\n', "PLAN.yml").data
    assert quoted == {"a": 1, f"dry_run{char}": f"true{char}"}


def test_a_plain_yaml_value_ending_with_an_emoji_is_read() -> None:
    assert yamlio.read_yaml("note: done \u2705\ufe0f\n", "PLAN.yml").data == {
        "note": "done \u2705\ufe0f"
    }


def test_a_fenced_yaml_plan_in_markdown_with_an_invisible_edge_is_refused() -> None:
    text = "```yaml\n" + _plan_yml("      dry_run: true\u2064\n") + "```\n"
    found = _refused(text, "PLAN.md")
    assert [code for code, _ in found] == ["E_YAML_PARSE"], found
    assert "U+2064" in found[0][1], found


# -- class 2 and 3: TOON edges, names in every source -------------------------------------------


@pytest.mark.parametrize("char", MISSED)
def test_an_unquoted_toon_value_or_key_with_an_invisible_edge_is_refused(char: str) -> None:
    """``dry_run: false<U+200E>`` was the (truthy) string ``"false\\u200e"``."""
    for params in (f"      dry_run: false{char}\n", f"      dry_run{char}: false\n"):
        found = _refused(_toon("      tag: x\n" + params), "PLAN.toon")
        assert {code for code, _ in found} == {"E_SCHEMA_INVALID"}, found
        assert any(f"U+{ord(char):04X}" in message for _, message in found), found


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("PLAN.json", _pc('{"tag": "x", "dry_run\u2065": false}')),
        ("PLAN.json", _pc('{"tag": "x", "dry_run\\u2065": false}')),
        ("PLAN.toon", _toon("      tag: x\n      dry_run\u2065: false\n")),
        ("PLAN.md", MD.replace(PARAMS, '- **Parameters**: {"dry_run\u2065": false}\n')),
        ("PLAN.json", _pc('{"tag": "x", "dry\ufff3run": false}')),
        ("PLAN.json", _pc('{"tag": "x", "dry_run\U000e0fff": false}')),
    ],
)
def test_a_key_holding_an_unassigned_default_ignorable_is_refused(name: str, text: str) -> None:
    """U+2065 is unassigned, and Default_Ignorable_Code_Point (2060..206F): the old rule
    (category Cf and a list of the rest) let ``dry_run<U+2065>`` through every source."""
    found = _refused(text, name)
    assert {code for code, _ in found} == {"E_SCHEMA_INVALID"}, found
    assert any("holds U+" in message for _, message in found), found


# -- class 4: a lone CR in TOON ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "line"),
    [
        ("      tag: x\n      note: n\r      dry_run: true\n", 12),
        ("      tag: x\n      \rdry_run: true\n", 12),
        ('      tag: "x\r      dry_run: true"\n', 11),
        ("      tag: x\n      hosts[1]: web\rdb\n", 12),
        ("      tag: x\n      note: a\u2028b\n", 12),
    ],
)
def test_a_lone_cr_in_toon_is_refused_at_its_line(params: str, line: int) -> None:
    """``note: n<CR>      dry_run: true`` converted to the note ``"n\\r      dry_run:
    true"`` and no ``dry_run``, which a terminal shows on a line of its own."""
    found = _refused(_toon(params), "PLAN.toon")
    assert [code for code, _ in found] == ["E_CONVERT_UNSUPPORTED"], found
    assert f"PLAN.toon:{line}:" in found[0][1], found


def test_a_lone_cr_in_a_fenced_toon_block_is_refused() -> None:
    """The TOON reader refuses it (E_CONVERT_UNSUPPORTED) where the markdown file's fence
    reading has not already (a lone CR ends a line to CommonMark: E_PARSE_NONJSON)."""
    text = "```toon\n" + _toon("      tag: x\n      note: n\r      dry_run: true\n") + "```\n"
    found = _refused(text, "PLAN.md")
    assert [code for code, _ in found] in (["E_CONVERT_UNSUPPORTED"], ["E_PARSE_NONJSON"])


def test_crlf_toon_still_reads_as_lf() -> None:
    text = _toon("      tag: x\n      dry_run: false\n", nl="\r\n")
    assert _params(text, "PLAN.toon") == {"tag": "x", "dry_run": False}


# -- class 5: NFC twins -----------------------------------------------------------------------

TWINS = [("caf\u00e9", "cafe\u0301"), ("cafe\u0301", "caf\u00e9"), ("K", "\u212a")]


@pytest.mark.parametrize(("first", "second"), TWINS)
def test_two_keys_one_in_nfc_are_a_member_said_twice_in_json_toon_and_markdown(
    first: str, second: str
) -> None:
    """``"caf\\u00e9"`` and ``"cafe\\u0301"`` written raw are ``"café"`` twice in every diff;
    the tool got both keys."""
    sources = [
        ("PLAN.json", _pc(f'{{"tag": "x", "{first}": "safe", "{second}": "evil"}}')),
        ("PLAN.toon", _toon(f"      tag: x\n      {first}: safe\n      {second}: evil\n")),
        (
            "PLAN.md",
            MD.replace(PARAMS, f'- **Parameters**: {{"{first}": "safe", "{second}": "evil"}}\n'),
        ),
    ]
    for name, text in sources:
        found = _refused(text, name)
        assert [code for code, _ in found] == ["E_SCHEMA_INVALID"], (name, found)
        assert "said twice" in found[0][1] and "NFC" in found[0][1], (name, found)


@pytest.mark.parametrize(("first", "second"), TWINS)
def test_two_yaml_keys_one_in_nfc_are_a_duplicate_key(first: str, second: str) -> None:
    for text in (
        f'a: 1\n"{first}": safe\n"{second}": evil\n',
        f'a: 1\no: {{"{first}": safe, "{second}": evil}}\n',
    ):
        with pytest.raises(YamlParseError) as caught:
            yamlio.read_yaml(text, "PLAN.yml")
        assert "duplicate key" in str(caught.value) and "NFC" in str(caught.value)
        assert caught.value.line in (2, 3)


def test_keys_that_differ_in_nfc_are_kept() -> None:
    data = yamlio.read_yaml('"caf\u00e9": 1\ncafe: 2\nK: 3\nk: 4\n"\u00c5": 5\n', "x.yml").data
    assert list(data) == ["caf\u00e9", "cafe", "K", "k", "\u00c5"]
    assert _params(_pc('{"tag": "x", "caf\u00e9": 1, "cafe": 2}'), "PLAN.json") == {
        "tag": "x",
        "caf\u00e9": 1,
        "cafe": 2,
    }


# -- class 6: a markdown list marker and a no-break space -------------------------------------


@pytest.mark.parametrize("space", ["\u00a0", "\u2003", "\u3000"])
def test_a_list_marker_then_a_unicode_space_is_no_bullet(space: str) -> None:
    """CommonMark: a list marker is followed by a space or a tab; ``-<U+00A0>**Timeout**:
    45s`` is rendered inside the bullet above it, and was read as a timeout of 45 s."""
    for old, new in (
        (TIMEOUT, f"-{space}**Timeout**: 45s\n"),
        (RECOVERY, f"-{space}Error Recovery: true\n"),
    ):
        text = MD.replace(old, new)
        line = text[: text.index(new)].count("\n") + 1
        found = _refused(text, "PLAN.md")
        assert [code for code, _ in found] == ["E_CONVERT_UNSUPPORTED"], found
        assert f"line {line}:" in found[0][1], found


def test_a_list_marker_then_a_tab_is_still_a_bullet() -> None:
    data = convert_text(MD.replace(TIMEOUT, "-\t**Timeout**: 45s\n"), "PLAN.md").data
    assert data["actions"][0]["timeout"] == 45
