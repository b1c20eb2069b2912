"""Reading a plan source: the strict rules for model output, and the syntax it is written in.

A planner's reply must be the plan alone (the Plan Contract's parse rules, applied to every
format): one JSON object, or exactly one fenced block holding it. Several fenced blocks are
``E_PARSE_MULTIBLOCK``; prose before or after the object or block is ``E_PARSE_NONJSON``.
A model that wraps its plan in an explanation gets refused, never half-read. A fence is
one where CommonMark opens and closes one (:mod:`.commonmark`), as a forge showing the
reply's ``PLAN.md`` draws it; a line a hand scan would take for a fence and CommonMark does
not (a TAB or four spaces before ```` ``` ````, a closer with an info string) is
``E_PARSE_NONJSON`` at its line (round 110). Files named
``.yml``/``.yaml`` or ``.toon`` are read as what they say; the markdown plan format
(``# Title`` with ``## Tasks``/``## Steps`` sections) is recognised before the strict rules.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from controller.errors import (
    ConvertUnsupported,
    ParseMultiblock,
    ParseNonJson,
    Problem,
    SchemaInvalid,
    YamlParseError,
)
from controller.plan.convert import jsonread
from controller.plan.yamlio import InexactFloat

if TYPE_CHECKING:
    from controller.plan.convert.commonmark import Fence

Syntax = Literal["json", "yaml", "toon", "markdown"]
#: A line a reader might take for a fence (any indentation): each must be one to CommonMark.
_FENCE_LINE = re.compile(r"^[ \t]*(```|~~~)")
_LANG = re.compile(r"[A-Za-z0-9_+.-]*")
_TOON_HEADER = re.compile(
    r"^[ \t]*(?:- )?[A-Za-z_\"][^:\n]*\[#?\d+[^\]\n]*\](?:\{[^}\n]*\})?:", re.M
)
#: ``## Tasks`` or ``## Steps`` as CommonMark reads an ATX heading: up to three spaces before
#: it (round 126), then the ``#``s, a space or a tab, the name.
_MD_PLAN = re.compile(r"^ {0,3}##[ \t]+(Tasks|Steps)[ \t]*\r?$", re.M)


@dataclass
class Source:
    """The parsed source: its syntax, its data (None for markdown) and its text, with what
    the strict JSON/TOON reading found (a member said twice, an inexact number)."""

    syntax: Syntax
    data: Any
    text: str
    lines: dict[tuple[str | int, ...], int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def read_source(text: str, name: str = "<text>") -> Source:
    """Parse ``text`` (a file named ``name``, or a model's reply) into a :class:`Source`."""
    text = text.removeprefix("\ufeff")
    lower = name.lower()
    if lower.endswith((".yml", ".yaml")):
        return _yaml(text, name)  # the YAML reader's own rules (yamlio: hidden breaks)
    reviewable(text, name, BINARY)
    if lower.endswith(".toon"):
        return _toon(text, name)
    if is_markdown_plan(text):
        reviewable(text, name, HIDDEN_LINES)
        return Source("markdown", None, text)
    if lower.endswith(MARKDOWN_NAMES):
        return _markdown_file(text, name)
    return model_output(text, name)


#: File names a forge renders as markdown (CommonMark): what they hold is read only where a
#: forge shows it as written: the markdown plan format, one fenced block, or one indented
#: code block.
MARKDOWN_NAMES = (".md", ".markdown", ".mdown", ".mkd")


def _markdown_file(text: str, name: str) -> Source:
    """A markdown file that is no markdown plan: its one fenced block (or the one indented
    code block that is the whole file), nothing else. A bare JSON, TOON or YAML body is
    markdown to every forge, which hides a comment, a tag or a link's destination in a value
    and changes emphasis, entities and backslashes, while the converter read the data (round
    113, ``md-bare-data-rendered``); a model's reply that is not a markdown file may still be
    a bare JSON object, as the Plan Contract allows."""
    fence = _one_fence(text, name)
    lines = text.replace("\r\n", "\n").split("\n")
    if fence is None and all(not ln.strip() or ln.startswith(("    ", "\t")) for ln in lines):
        # one indented code block, shown as written: its text, four columns taken off
        return model_output("\n".join(_unindented(ln) for ln in lines), name)
    if fence is None:
        first = next((n for n, line in enumerate(lines, 1) if line.strip()), 1)
        raise ParseNonJson(
            f"{name}:{first}: a markdown file holding neither a markdown plan (# Title, "
            "## Steps) nor one fenced block: a forge renders this text as markdown, so a "
            "reviewer does not see it as written (comments, tags and links vanish)",
            remedy="put the plan in one fenced block (```yaml ... ```, or ```json / ```toon), "
            "or write the markdown plan format",
        )
    lang = _LANG.match(fence.info.strip())
    return _fenced(lang.group(0).lower() if lang else "", fence.content, name)


def _unindented(line: str) -> str:
    """A line of an indented code block without the four columns CommonMark takes off."""
    return line[1:] if line.startswith("\t") else line[4:]


#: Characters that make git call a text binary (NUL) or that no diff shows: the C0
#: controls but TAB, LF and CR, and DEL. JSON refuses them raw; every source does (round 103).
BINARY = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: What ``str.splitlines`` reads as a line end and git does not: a line-based reader of a
#: source would see lines a reviewer's diff never shows (round 103: a whole ``### Step``
#: hidden after U+2028 on a bullet's line). The markdown reader splits on LF alone and
#: refuses these (with :data:`BINARY`'s VT, FF and FS-US), and so does the TOON reader
#: (round 122).
HIDDEN_LINES = re.compile("[\x85\u2028\u2029]|\r(?!\n)")


_CONTROL_NAMES = {"\r": "CARRIAGE RETURN", "\x85": "NEXT LINE", "\x00": "NULL"}


def reviewable(text: str, name: str, hidden: re.Pattern[str]) -> None:
    """Refuse the first character of ``hidden`` in a source, at its line and column: what a
    reviewer reads in ``git diff`` must be every character the reader reads (SPEC §15)."""
    match = hidden.search(text)
    if match is None:
        return
    at, char = match.start(), match.group(0)
    line = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    what = unicodedata.name(char, "") or _CONTROL_NAMES.get(char, "a control character")
    seen = (
        "git reads the file as binary and shows none of it"
        if char == "\x00"
        else "git diff and review tools do not show it"
        if hidden is BINARY
        else "this reader would end a line there, and git diff does not"
    )
    raise ConvertUnsupported(
        f"{name}:{line}:{column}: U+{ord(char):04X} {what}: {seen}",
        remedy=f"remove the character (a value that needs it writes it as the escape "
        f"\\u{ord(char):04x} inside a JSON string)",
    )


def is_markdown_plan(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith("# ") and _MD_PLAN.search(text) is not None


def model_output(text: str, name: str = "<text>") -> Source:
    """The one plan in a model's reply, by the strict parse rules (module docstring)."""
    body = text.strip()
    if body.startswith("{"):
        return _json(body, text, name)
    fence = _one_fence(text, name)
    if fence is not None:
        lang = _LANG.match(fence.info.strip())
        return _fenced(lang.group(0).lower() if lang else "", fence.content, name)
    if body.startswith("["):
        raise ParseNonJson(f"{name}: a JSON list; a plan is one JSON object")
    if _TOON_HEADER.search(text):
        return _toon(text, name)
    return _yaml_or_prose(text, name)


def _one_fence(text: str, name: str) -> Fence | None:
    """The one fenced block of a reply, as CommonMark reads it, with nothing around it; None
    when the reply has no fence and no line that looks like one."""
    from controller.plan.convert import commonmark

    doc = commonmark.read(text)
    if len(doc.fences) > 1:
        # located at the second block, the first one too many (round 127: no place at all)
        second = doc.fences[1].start
        refused = ParseMultiblock(
            f"{name}:{second}: {len(doc.fences)} fenced blocks; a plan is exactly one"
        )
        refused.line = second
        raise refused
    lines = text.replace("\r\n", "\n").split("\n")
    fenced = doc.fenced()
    for number, line in enumerate(lines, 1):
        if number not in fenced and _FENCE_LINE.match(line):
            raise ParseNonJson(
                f"{name}:{number}: {line.strip()!r} opens or closes no fenced block to "
                "CommonMark (a TAB or four spaces before it, an info string after a closing "
                "fence, or a fence of another length or character): a forge renders the "
                "reply's text around it as markdown, not as code",
                remedy="fence the plan with ```json at the start of a line and close it "
                "with ``` alone on a line",
            )
    if not doc.fences:
        return None
    fence = doc.fences[0]
    if not fence.closed or fence.level:
        where = "is never closed" if not fence.closed else "sits inside a list or quote"
        raise ParseNonJson(f"{name}:{fence.start}: the fenced block {where}")
    outside = "\n".join(line for n, line in enumerate(lines, 1) if n not in fence.lines)
    if outside.strip():
        raise ParseNonJson(f"{name}: text outside the fenced block: {_quote(outside)}")
    return fence


def _fenced(lang: str, inner: str, name: str) -> Source:
    if lang in ("", "json", "jsonc"):
        if not inner.strip().startswith("{"):
            raise ParseNonJson(f"{name}: the fenced block does not hold a JSON object")
        return _json(inner.strip(), inner, name)
    if lang in ("yaml", "yml"):
        return _yaml(inner, name)
    if lang == "toon":
        return _toon(inner, name)
    raise ParseNonJson(f"{name}: a fenced `{lang}` block; expected json, yaml or toon")


def _json(body: str, text: str, name: str) -> Source:
    read = _one_object(body, name)
    return Source("json", read.value, text, problems=read.problems())


def _one_object(body: str, name: str) -> jsonread.JsonRead:
    try:
        read = jsonread.read(body, whole=False)
    except json.JSONDecodeError as exc:
        raise ParseNonJson(
            f"{name}: not one JSON object: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    rest = body[read.end :].strip()
    if rest:
        raise ParseNonJson(f"{name}: text after the JSON object: {_quote(rest)}")
    if not isinstance(read.value, dict):
        raise ParseNonJson(f"{name}: a plan is one JSON object")
    return read


def _yaml(text: str, name: str) -> Source:
    from controller.plan import yamlio

    doc = yamlio.read_yaml(text, name)
    if not isinstance(doc.data, dict):
        raise SchemaInvalid(f"{name}: the plan must be a mapping")
    lines = {path: span.line + 1 for path, span in doc.spans.items()}
    odd = _key_not_text(doc.data, ())
    if odd is not None:  # round 111: `1: y` crashed the converter (int and str keys sorted)
        where = ".".join(str(part) for part in odd)
        raise SchemaInvalid(
            f"{name}:{lines.get(odd, 1)}: key {odd[-1]!r} at {where} is not a string",
            path=where,
            remedy='quote the key (`"1": y`): every key of a plan is text',
        )
    return Source("yaml", doc.data, text, lines)


def _key_not_text(value: object, at: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The path of the first mapping key in ``value`` that YAML read as no string (``1:``,
    ``~:``, ``true:``, ``1.5:``), or None."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return (*at, key)
            found = _key_not_text(item, (*at, key))
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _key_not_text(item, (*at, index))
            if found is not None:
                return found
    return None


def _yaml_or_prose(text: str, name: str) -> Source:
    try:
        source = _yaml(text, name)
    except (YamlParseError, SchemaInvalid):
        raise ParseNonJson(
            f"{name}: not a plan: expected one JSON object or one fenced ```json block "
            f"(or a YAML, TOON or markdown plan); starts with {_quote(text.strip())}"
        ) from None
    if not {"plan", "actions"} <= set(source.data):
        # "Here is the plan: {...}" parses as a one-key YAML mapping: prose, not a plan
        raise ParseNonJson(f"{name}: prose, not a plan: {_quote(text.strip())}")
    return source


#: A TOON line the reader skips as a comment (its indentation, then ``#``).
_TOON_COMMENT = re.compile(r"^([ ]*)#", re.M)


def _toon(text: str, name: str) -> Source:
    import toon_format

    # rows end at LF alone (a CRLF row's CR is its end), as git's lines do: the TOON library
    # kept a lone CR inside the value or key it interrupts, where a terminal or a review
    # breaks the line (round 122, ``toon-lone-cr-accepted``); NEL, U+2028 and U+2029 too
    reviewable(text, name, HIDDEN_LINES)
    tab = text.find("\t")
    if tab >= 0:  # one rule for every place a TAB can stand (round 114)
        line = text.count("\n", 0, tab) + 1
        column = tab - (text.rfind("\n", 0, tab) + 1) + 1
        raise SchemaInvalid(
            f"{name}: line {line}, column {column}: a TAB, which a review shows as white "
            "space: TOON reads it as a field boundary (an array header [N<TAB>]) or keeps it "
            "at a value's or key's edge where it trims spaces (`dry_run:<TAB>false` is a "
            "string)",
            remedy="use the comma or | delimiter and spaces around values; write \\t inside "
            "quotes for a TAB in a value",
        )
    comment = _TOON_COMMENT.search(text)
    if comment is not None:  # round 117, toon-hash-line-dropped
        line = text.count("\n", 0, comment.start()) + 1
        raise SchemaInvalid(
            f"{name}: line {line}, column {len(comment.group(1)) + 1}: a line that begins "
            "with #, which the TOON reader skips as a comment: a key, a list item or a "
            "tabular row written there (`#dry_run: false`, `#web,80`) would be dropped while "
            "a review shows it as text",
            remedy='delete the line, or quote a value that begins with # ("#web")',
        )
    try:
        data = toon_format.decode(text, parse_float=_toon_number)
    except (toon_format.ToonDecodeError, ValueError) as exc:
        raise SchemaInvalid(f"{name}: not valid TOON: {exc}") from None
    if not isinstance(data, dict):
        raise SchemaInvalid(f"{name}: the TOON document must be an object")
    problems = [*jsonread.value_problems(data, ()), *_edge_lookalikes(data)]
    problems += jsonread.escaped_problems(data, jsonread.escaped_strings(text))
    return Source("toon", data, text, problems=problems)


def _edge_lookalikes(data: Any) -> list[Problem]:
    """Every TOON key and string that begins or ends with a character a review shows as a
    space or as nothing (:func:`~controller.plan.yamlio.edge_lookalike`): TOON trims an
    ASCII space at an unquoted value's edge and keeps these, and has no escape to write one
    visibly (round 113, ``space-lookalike-in-source``)."""
    from controller.plan.refs import format_path
    from controller.plan.yamlio import edge_lookalike

    found: list[Problem] = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    while stack:
        item, where = stack.pop()
        texts: list[tuple[str, tuple[str | int, ...]]] = []
        if isinstance(item, dict):
            texts = [(key, (*where, key)) for key in item if isinstance(key, str)]
            stack.extend((child, (*where, key)) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, (*where, i)) for i, child in enumerate(item))
        elif isinstance(item, str):
            texts = [(item, where)]
        for text, at in texts:
            char = edge_lookalike(text)
            if char is not None:
                found.append(
                    Problem(
                        "E_SCHEMA_INVALID",
                        f"{text!r} begins or ends with U+{ord(char):04X}, which a review "
                        "shows as a space or as nothing: TOON trims an ASCII space there and "
                        "keeps this one, so it reads as another key or value",
                        format_path(at),
                        None,
                        "remove the character, or write the plan as JSON or PLAN.yml with "
                        f"the escape \\u{ord(char):04x}",
                    )
                )
    return found


def _toon_number(token: str) -> float:
    """TOON's number rules (``-0`` is 0) with the exactness hook, which keeps a number out
    of range (``1e400``) with its text, refused at its location."""
    value = jsonread.number(token)
    if value == 0 and not isinstance(value, InexactFloat):
        return 0.0  # -0 decodes to 0 (TOON §4)
    return value


def _quote(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return json.dumps(line if len(line) <= limit else line[: limit - 3] + "...")
