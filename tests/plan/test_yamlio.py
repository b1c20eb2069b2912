"""Strict reading and span-splicing edits of YAML files."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.errors import YamlParseError
from controller.plan import yamlio

TEXT = """\
# top
plan:
  name: x   # keep me
  status: "pending_approval"  # and me
actions: [1, 2]
frozen:
  hash: old
  at: then
# comment before execution
execution: {status: executing}
"""


def test_set_block_replaces_only_that_block() -> None:
    doc = yamlio.read_yaml(TEXT)
    out = yamlio.set_block(doc, "frozen", {"hash": "new", "at": "now"})
    assert out == TEXT.replace("  hash: old\n  at: then\n", "  hash: new\n  at: now\n")


def test_set_block_replaces_flow_block_and_keeps_preceding_comment() -> None:
    out = yamlio.set_block(yamlio.read_yaml(TEXT), "execution", {"status": "completed"})
    assert out.endswith("# comment before execution\nexecution:\n  status: completed\n")


def test_set_block_appends_and_removes() -> None:
    doc = yamlio.read_yaml("a: 1  # c\nb:\n  - x\n  # trailing\n")
    added = yamlio.set_block(doc, "approval", {"by": "a@b"})
    assert added == "a: 1  # c\nb:\n  - x\napproval:\n  by: a@b\n  # trailing\n"
    assert (
        yamlio.set_block(yamlio.read_yaml(added), "approval", None)
        == "a: 1  # c\nb:\n  - x\n  # trailing\n"
    )


def test_set_scalar_keeps_quotes_and_comments() -> None:
    out = yamlio.set_scalar(yamlio.read_yaml(TEXT), ("plan", "status"), "approved")
    assert '  status: "approved"  # and me\n' in out
    assert out.replace('"approved"', '"pending_approval"') == TEXT


def test_set_scalar_inserts_missing_key() -> None:
    out = yamlio.set_scalar(yamlio.read_yaml("plan:\n  name: x\n"), ("plan", "status"), "draft")
    assert out == "plan:\n  status: draft\n  name: x\n"


def test_set_block_refuses_flow_top_level() -> None:
    with pytest.raises(YamlParseError):
        yamlio.set_block(yamlio.read_yaml("{a: 1}\n"), "frozen", {"x": 1})


def test_unicode_columns_are_characters() -> None:
    text = 'plan:\n  name: "héllo wörld ✓"\n  status: draft  # ü\n'
    out = yamlio.set_scalar(yamlio.read_yaml(text), ("plan", "status"), "pending_approval")
    assert out == text.replace("draft", "pending_approval")


@pytest.mark.parametrize("depth", [yamlio.MAX_DEPTH, 100_000])
def test_deep_nesting_is_refused_while_parsing(depth: int) -> None:
    # 100k nested lists once grew paths quadratically (OOM) or hit RecursionError later
    with pytest.raises(YamlParseError, match="nested deeper than"):
        yamlio.read_yaml("x: " + "[" * depth + "]" * depth + "\n")


def test_nesting_up_to_the_limit_is_read() -> None:
    depth = yamlio.MAX_DEPTH - 1  # plus the top-level mapping
    doc = yamlio.read_yaml("x: " + "[" * depth + "]" * depth + "\n")
    value, levels = doc.data["x"], 0
    while value:
        value, levels = value[0], levels + 1
    assert levels == depth - 1


# Plain scalars that read as numbers, null or booleans, leading zeros, signs, underscores,
# octal, hex, long digit strings: the reader's integer and null fast path must give
# exactly the value ruamel's own safe loader gives under the reader's core-schema resolver.
_PLAIN = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.from_regex(r"\A[-+]?[0-9_]{1,20}\Z"),
    st.from_regex(r"\A0[ox][0-9a-fA-F_]{1,6}\Z"),
    st.sampled_from(["~", "null", "Null", "NULL", "", "true", "False", "0", "00", "07", "1e3"]),
)


@settings(max_examples=300, deadline=None)
@given(_PLAIN)
def test_plain_scalars_read_as_ruamel_reads_them(value: str) -> None:
    from ruamel.yaml import YAML

    text = f"a: {value}\n"
    loader = YAML(typ="safe", pure=False)
    loader.Resolver = yamlio.CoreResolver
    try:
        expected = yamlio.canonical_number(loader.load(text)["a"])
    except ValueError:  # ruamel cannot construct it ("0o_"): the reader refuses it
        with pytest.raises(YamlParseError):
            yamlio.read_yaml(text)
        return
    read = yamlio.read_yaml(text).data["a"]
    assert read == expected and type(read) is type(expected)


@pytest.mark.parametrize("version", ["1.1", "1.0", "1.3"])
def test_a_yaml_directive_other_than_1_2_is_refused(version: str) -> None:
    """A plan is read as YAML 1.2 whatever its ``%YAML`` directive says: a reviewer who took
    ``%YAML 1.1`` at its word would read ``yes`` as true and ``0777`` as 511, while the tool
    gets "yes" and 777. So the directive is refused, with its line."""
    text = f"%YAML {version}\n---\nflag: yes\nmode: 0777\n"
    with pytest.raises(YamlParseError) as caught:
        yamlio.read_yaml(text, "plans/x/PLAN.yml")
    assert caught.value.line == 1
    if version == "1.1":  # the others the parser itself calls incompatible
        assert "%YAML 1.1 directive" in caught.value.message


def test_a_yaml_1_2_directive_reads_as_without_it() -> None:
    body = "flag: yes\nmode: 0777\n"
    assert yamlio.read_yaml("%YAML 1.2\n---\n" + body, "x").data == {"flag": "yes", "mode": 777}
    assert yamlio.read_yaml(body, "x").data == {"flag": "yes", "mode": 777}


@pytest.mark.parametrize(
    "value",
    [
        {"message": "boom ok \u202egnp.exe"},  # RIGHT-TO-LEFT OVERRIDE (Trojan Source)
        {"v": "a\u200bb", "w": "\u2066isolate\u2069", "x": "\ue000", "y": "\U000e0041"},
        {"key \u202e": ["item \u200b", {"deep": "\u00ad"}]},
        {"k" * 200 + "\u202e": 1},  # a long key: written through ruamel
    ],
)
def test_the_controllers_yaml_writes_hidden_characters_as_escapes(value: object) -> None:
    """Round 41: PLAN.yml's ``execution:`` block held a tool's U+202E raw, so a reviewer's
    editor or forge showed ``invoice exe.pdf``; every character a person cannot see is
    written as an escape, and the text reads back to the same value."""
    from controller.display import HIDDEN

    text = yamlio.dump(value)
    assert HIDDEN.search(text.replace("\n", "")) is None, text
    assert yamlio.read_yaml(text).data == value


#: Block-mapping layouts the reader accepts (round 74): every one must take the
#: controller's edits in place and read back as exactly the file with those edits.
LAYOUTS = {
    "indented-1": " plan:\n   status: draft  # st\n # between\n actions: [1]\n",
    "indented-3": "   plan:\n     status: draft\n\n   actions:\n   - 1\n",
    "markers": "%YAML 1.2\n---\n# lead\n\n  plan:\n    status: draft\n  actions: [1]\n...\n",
    "comments": "# top\n\nplan:\n  status: draft\n\n# about actions\nactions: [1]\n# tail\n",
    "no-final-newline": "  plan:\n    status: draft\n  actions: [1]",
    "crlf-indented": " plan:\r\n   status: draft\r\n actions: [1]\r\n",
    "bom-flow-plan": "\ufeffplan: {status: draft}\nactions: [1]\n",
    "held-blocks": " plan:\n   status: draft\n frozen:\n   hash: old\n # keep\n actions: [1]\n",
}
EDITS = {
    "frozen": {"hash": "sha256:abc", "at": "2026-11-30T19:00:00Z"},
    "execution": {"status": "executing", "actions": [{"id": 1, "outputs": {"a": [1, "x"]}}]},
    "approval": {"by": "alice@example.com"},
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_accepted_layout_takes_the_controllers_edits(layout: str) -> None:
    """Round 74: in a plan indented by one space (valid YAML) the controller appended its
    block at column 0 and committed a file the reader refused (``did not find expected
    <document start>``). Its blocks now take the root's column; all else stays as written."""
    text = LAYOUTS[layout]
    doc = yamlio.read_yaml(text)
    out = yamlio.edit(doc, EDITS, {("plan", "status"): "frozen"})
    expected = {**doc.data, **EDITS, "plan": {"status": "frozen"}}
    assert yamlio.read_yaml(out).data == expected
    for line in text.splitlines():
        if "draft" not in line and "hash: old" not in line:
            assert line in out.splitlines(), line  # the author's lines kept
    removed = yamlio.set_block(yamlio.read_yaml(out), "execution", None)
    assert yamlio.read_yaml(removed).data == {k: v for k, v in expected.items() if k != "execution"}
    again = yamlio.set_scalar(yamlio.read_yaml(removed), ("plan", "status"), "approved")
    assert yamlio.read_yaml(again).data["plan"] == {"status": "approved"}


def test_an_indented_plan_gets_its_status_inserted_at_its_column() -> None:
    out = yamlio.set_scalar(yamlio.read_yaml(" plan:\n   name: x\n"), ("plan", "status"), "draft")
    assert out == " plan:\n   status: draft\n   name: x\n"


def test_an_edit_that_would_not_read_back_is_refused_before_anyone_writes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever the splice gets wrong, the edit reads its text back: a file the reader would
    refuse, or read otherwise than asked, is an error (reported), never a text to commit."""
    doc = yamlio.read_yaml(TEXT)
    monkeypatch.setattr(yamlio, "_splice", lambda d, b, s: d.text + "frozen:\n- x\n")
    with pytest.raises(YamlParseError, match=r"would not read back.*nothing was written"):
        yamlio.set_block(doc, "approval", {"by": "a@b"})
    monkeypatch.setattr(yamlio, "_splice", lambda d, b, s: d.text)
    with pytest.raises(YamlParseError, match="read back otherwise"):
        yamlio.set_scalar(doc, ("plan", "status"), "approved")


#: One plan in the spellings of its status key the reader accepts (round 75).
STATUS_SPELLINGS = {
    "plain": "plan:\n  name: x\n  status: pending_approval  # agent\nactions: []\n",
    "x-escape": 'plan:\n  name: x\n  "\\x73tatus": pending_approval\nactions: []\n',
    "u-escape": 'plan:\n  name: x\n  "\\u0073tatus": pending_approval\nactions: []\n',
    "explicit": "plan:\n  name: x\n  ? status\n  : pending_approval\nactions: []\n",
    "next-line": "plan:\n  name: x\n  status:\n    pending_approval\nactions: []\n",
    "flow": "plan: {name: x, status: 'pending_approval'}\nactions: []\n",
    "bom-crlf": "\ufeffplan:\r\n  name: x\r\n  status: pending_approval\r\nactions: []\r\n",
}


@pytest.mark.parametrize("spelling", list(STATUS_SPELLINGS))
def test_the_status_value_alone_changed_is_decided_on_the_parse(spelling: str) -> None:
    before = STATUS_SPELLINGS[spelling]
    after = yamlio.set_scalar(yamlio.read_yaml(before), ("plan", "status"), "approved")
    assert yamlio.scalar_alone_changed(before, after, ("plan", "status"))
    by_hand = before.replace("pending_approval", "approved")
    assert yamlio.scalar_alone_changed(before, by_hand, ("plan", "status"))


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t + "# alice\n",  # a comment elsewhere
        lambda t: t.replace("pending_approval", "approved  # alice"),  # beside the value
        lambda t: t.replace("pending_approval", "approved").replace("name: x", "name: y"),
        lambda t: t.replace("pending_approval", "approved").replace("actions: []", "actions: [ ]"),
        lambda t: t.replace("pending_approval", "'approved'\n  # alice"),  # not one word
    ],
)
@pytest.mark.parametrize("spelling", ["x-escape", "explicit", "next-line"])
def test_any_byte_outside_the_status_value_is_a_change(spelling: str, edit: object) -> None:
    before = STATUS_SPELLINGS[spelling]
    after = edit(before)  # type: ignore[operator]
    assert after != before
    assert not yamlio.scalar_alone_changed(before, after, ("plan", "status"))


def test_a_respelled_status_key_is_no_status_change_alone() -> None:
    before = STATUS_SPELLINGS["x-escape"]
    after = (
        STATUS_SPELLINGS["plain"].replace("  # agent", "").replace("pending_approval", "approved")
    )
    assert yamlio.read_yaml(after).data["plan"]["status"] == "approved"
    assert not yamlio.scalar_alone_changed(before, after, ("plan", "status"))
    assert not yamlio.scalar_alone_changed(before, "plan: [", ("plan", "status"))


def test_an_escaped_string_is_written_in_ascii_and_reads_back_itself() -> None:
    """Round 83 (r83logenc): the ``execution:`` block of a record whose checkout would not
    give it back writes such a string double-quoted with YAML's escapes, key or value, by the
    fast writer or ruamel's."""
    e = yamlio.Escaped
    value = {"a": e("x \u2014 y \u2705 \U0001f680 \x85 \"q\" 'z'"), e("k\u2014"): [e("\u00e9"), 1]}
    long = {**value, "k" * 200: "left to ruamel"}  # a long key: ruamel's writer
    for written, text in ((value, yamlio.dump(value)), (long, yamlio.dump(long))):
        assert text.isascii(), text
        assert yamlio.read_yaml(text).data == written


# YAML 1.2's core schema, and nothing more (round 95: ruamel's 1.2 rules read YAML 1.1's
# ``1_000`` as 1000 and ``0b101`` as 5, where every YAML 1.2 reader sees strings).
_CORE = {
    "1_000": "1_000",
    "1_0.5": "1_0.5",
    "0x_1F": "0x_1F",
    "0b101": "0b101",
    "-0x10": "-0x10",
    "+0o10": "+0o10",
    "0o1_0": "0o1_0",
    "1__0": "1__0",
    "1:20": "1:20",
    "1:30.5": "1:30.5",
    "yes": "yes",
    "0777": 777,
    "0o10": 8,
    "0x10": 16,
    "0xff": 255,
    "-0": 0,
    "+1": 1,
    ".5": 0.5,
    "+.5": 0.5,
    "-.5e3": -500,
    ".5e3": 500,
    "1.": 1,
    "1e2": 100,
    "1E+2": 100,
    "2.50": 2.5,
    "1e+20": 1e20,
}


@pytest.mark.parametrize("written", sorted(_CORE))
def test_plain_numbers_follow_the_yaml_1_2_core_schema(written: str) -> None:
    want = _CORE[written]
    got = yamlio.read_yaml(f"v: {written}\n").data["v"]
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("text", ["1_000", "0b101", "0x_1F", "-0x10", "1_0.5", ".5e3", "1:20"])
def test_what_the_reader_takes_for_a_string_is_written_back_as_one(text: str) -> None:
    """The writer asks the same resolver: a string stays a string, a number-like string that
    the core schema reads as a number is quoted."""
    assert yamlio.read_yaml(yamlio.dump({"v": text})).data == {"v": text}


@pytest.mark.parametrize("where", ["n: {}\n", "a: [1, {}]\n", "b:\n  - {}\n"])
def test_a_number_too_long_to_read_is_refused_at_its_line(where: str) -> None:
    """Round 111 (atk111b): a 5001-digit integer was E_YAML_PARSE with Python's own words
    (``sys.set_int_max_str_digits``) and no line; it is refused at its line, with plangate's
    remedy (quote it, or write a shorter number)."""
    text = "first: 1\n" + where.format("1" + "0" * 5000)
    line = text[: text.index("10000")].count("\n") + 1
    with pytest.raises(YamlParseError) as caught:
        yamlio.read_yaml(text, "f.yml")
    assert caught.value.line == line
    assert caught.value.message.startswith(f"f.yml:{line}: the number 1000")
    assert "set_int_max_str_digits" not in caught.value.message
    assert "quote the value" in (caught.value.remedy or "")


@pytest.mark.parametrize("char", ["\u00a0", "\u2009", "\u3000", "\u202f", "\u200b", "\ufeff"])
@pytest.mark.parametrize("where", ["key", "value-end", "value-start", "flow"])
def test_a_plain_scalar_with_a_space_lookalike_at_its_edge_is_refused(
    char: str, where: str
) -> None:
    """Round 113 (``space-lookalike-in-source``): YAML trims an ASCII space at a plain
    scalar's edge and keeps these, so ``dry_run<U+00A0>: true`` was another key than the
    ``dry_run : true`` a diff shows. Quoted, the character is kept as written."""
    text = {
        "key": f"a: 1\ndry_run{char}: true\n",
        "value-end": f"a: 1\npath: /srv/app{char}\n",
        "value-start": f"a: 1\ndry_run: {char}false\n",
        "flow": f"a: 1\no: {{dry_run: {char}false}}\n",
    }[where]
    with pytest.raises(YamlParseError) as caught:
        yamlio.read_yaml(text, "PLAN.yml")
    assert caught.value.line == 2
    assert f"U+{ord(char):04X}" in str(caught.value) and "quote the value" in str(caught.value)
    quoted = yamlio.read_yaml(f'a: 1\n"dry_run{char}": "{char}false"\n', "PLAN.yml").data
    assert quoted == {"a": 1, f"dry_run{char}": f"{char}false"}
    inside = yamlio.read_yaml(f"a: 1\nb: x{char}y\n", "PLAN.yml").data  # not at an edge
    assert inside == {"a": 1, "b": f"x{char}y"}
