"""What a CommonMark renderer shows of a markdown source: a forge's rendered view, which is
what a reviewer of a ``PLAN.md`` reads (round 110). The one reader of ``markdown-it-py``
among the converters, imported on first use (CLI start-up); strikethrough on, as GFM
(one tilde or two, round 117).

It answers two questions for the markdown readers (:mod:`.markdown`, a model's reply in
:mod:`.source`), so that they never decide them by a scan of their own:

- which lines are headings: an ATX heading is ``#``s indented at most three spaces (round
  126: `` ## Workflow Config`` is a section to every forge), and one inside a block quote or
  a list item belongs to it, :attr:`Rendered.headings`;
- which lines are fenced code: a fence opens and closes exactly where CommonMark says (a
  closing fence has no info string, at least as many of the opener's character, indented at
  most 3 spaces; a TAB or 4 spaces before ```` ``` ```` makes no fence), :func:`read`;
- what text a value renders as: a value the converter reads must render as exactly its raw
  text, :func:`rendered_otherwise`. Code spans (shown as written, in a code font) and
  autolinks (shown as their text) pass; a backslash escape, a character reference, a link
  or image (inline or by a reference defined anywhere in the document), emphasis, strong,
  strikethrough and raw HTML each render as other text than the converter reads. A value
  wholly in one code span is read as its content, in every value position
  (:func:`code_span`, round 116).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


@dataclass(frozen=True)
class Fence:
    """One fenced code block as CommonMark reads it; lines 1-based, as git numbers them."""

    start: int
    #: the closing fence's line, or the last line of its container when never closed
    end: int
    closed: bool
    info: str
    content: str
    #: 0 for a block at the top of the document, more inside a list item or a quote
    level: int

    @property
    def lines(self) -> range:
        return range(self.start, self.end + 1)


@dataclass(frozen=True)
class Heading:
    """One ATX heading as CommonMark reads it (its line 1-based, as git numbers them)."""

    line: int
    #: how many ``#``s: 1 for ``# Title``, 2 for a section, 3 for a record
    level: int
    #: its inline text as written, without the ``#``s, the indentation and a closing sequence
    text: str
    #: the innermost block quote or list item holding it, as ``(what, first line)``, what
    #: ``"a block quote"`` or ``"a list item"``: a part of it, no heading of the document's
    #: own; None for a heading at the top of the document
    inside: tuple[str, int] | None = None

    @property
    def nested(self) -> bool:
        return self.inside is not None


@dataclass
class Rendered:
    """A markdown document as CommonMark reads it: its fences, and the markdown-it ``env``
    holding its link reference definitions (which make ``[x]`` a link anywhere in it)."""

    fences: list[Fence]
    env: dict[str, Any] = field(default_factory=dict)
    #: the indented code blocks (four spaces or a TAB first), each as a closed ``Fence``
    indented: list[Fence] = field(default_factory=list)
    #: the first line of each setext heading (a title over a ``===`` or ``---`` line)
    setext: list[int] = field(default_factory=list)
    #: every line of a link reference definition (``[r]: /u 'title'``): a forge shows none
    definitions: set[int] = field(default_factory=set)
    #: each line that is an ATX heading -> the heading (a setext one is in :attr:`setext`)
    headings: dict[int, Heading] = field(default_factory=dict)

    def code(self) -> list[Fence]:
        """Every code block, fenced or indented, in the order of the document."""
        return sorted((*self.fences, *self.indented), key=lambda block: block.start)

    def fenced(self) -> set[int]:
        """Every line inside a fenced block, its fence lines included."""
        return {line for fence in self.fences for line in fence.lines}


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # text_join off: escapes and references stay their own tokens, named in messages; GFM
    # strikes text between one or two tildes (round 117, md-single-tilde-strikethrough:
    # ``~old~new`` showed ``old`` struck out and ran as written); a definition keeps its
    # lines as a token (md-linkdef-in-descriptive-text)
    options = {"strikethrough_single_tilde": True, "inline_definitions": True}
    return MarkdownIt("commonmark", options).enable("strikethrough").disable("text_join")


def read(text: str) -> Rendered:
    """The fences and link definitions of ``text`` (LF or CRLF lines, as git's)."""
    env: dict[str, Any] = {}
    tokens = _parser().parse(text, env)
    lines = text.replace("\r\n", "\n").split("\n")
    fences = [_fence(t, lines) for t in tokens if t.type == "fence" and t.map]
    indented = [
        Fence(t.map[0] + 1, t.map[1], True, "", t.content, t.level)
        for t in tokens
        if t.type == "code_block" and t.map
    ]
    setext = [t.map[0] + 1 for t in tokens if _setext(t) and t.map]
    definitions = {
        line for t in tokens if t.type == "definition" and t.map for line in _lines_of(t.map)
    }
    return Rendered(fences, env, indented, setext, definitions, _headings(tokens))


def _headings(tokens: list[Token]) -> dict[int, Heading]:
    """Every ATX heading of the document by its line: its ``heading_open`` token, whose
    markup is its ``#``s, and the inline token after it, which holds its text; with the
    innermost block quote or list item open around it."""
    out: dict[int, Heading] = {}
    open_: list[tuple[str, int]] = []
    for at, token in enumerate(tokens):
        if token.type in _CONTAINERS:
            open_.append((_CONTAINERS[token.type], (token.map or (0, 0))[0] + 1))
        elif token.type in ("blockquote_close", "list_item_close"):
            open_.pop()
        elif token.type == "heading_open" and token.markup.startswith("#") and token.map:
            line = token.map[0] + 1
            text = tokens[at + 1].content
            inside = open_[-1] if open_ else None
            out[line] = Heading(line, len(token.markup), text, inside)
    return out


#: The containers a heading may stand in, by their opening token.
_CONTAINERS = {"blockquote_open": "a block quote", "list_item_open": "a list item"}


def _setext(token: Token) -> bool:
    """A setext heading: its markup is the underline's character, an ATX one's its ``#``s."""
    return token.type == "heading_open" and token.markup in ("=", "-") and bool(token.map)


def _lines_of(span: list[int]) -> range:
    """The 1-based lines of a token's 0-based, end-exclusive ``map``."""
    return range(span[0] + 1, span[1] + 1)


def _fence(token: Token, lines: list[str]) -> Fence:
    first, after = token.map or (0, 0)
    last = lines[after - 1] if 0 < after <= len(lines) else ""
    char = re.escape(token.markup[0])
    closer = re.compile(rf"[ \t>*+-]*{char}{{{len(token.markup)},}}[ \t]*")
    closed = after - first >= 2 and closer.fullmatch(last) is not None
    return Fence(first + 1, after, closed, token.info, token.content, token.level)


#: What each construct that renders as other text is called in a message.
_NAMES = {
    "link_open": "a link",
    "image": "an image",
    "em_open": "emphasis",
    "strong_open": "strong emphasis",
    "s_open": "strikethrough",
    "html_inline": "raw HTML",
}


def rendered_otherwise(text: str, env: dict[str, Any] | None = None) -> str | None:
    """None when ``text``, read as one paragraph's inline content, renders as exactly its
    raw text (white space at line ends aside); else the first construct that does not, as
    a message names it (``a backslash escape `\\"` ``, ``emphasis `*` ``, ``a link``)."""
    tokens = _parser().parseInline(text, dict(env or {}))
    children = (tokens[0].children or []) if tokens else []
    pattern: list[str] = []
    for token in children:
        found = _construct(token)
        if found is not None:
            return found
        pattern.append(_as_written(token))
    if re.fullmatch("".join(pattern), _lines(text), re.S):
        return None
    return "markdown that renders as other text"


#: Constructs whose text reads otherwise than the forge shows it: struck-out words read as
#: words, an image shows no text (its alt is a tooltip), raw HTML is refused by its own rule.
_NOT_TEXT = {"s_open": "strikethrough", "image": "an image", "html_inline": "raw HTML"}


def shown_text(text: str, env: dict[str, Any] | None = None) -> tuple[str, str | None]:
    """The plain text a forge shows for ``text`` read as one paragraph's inline content
    (descriptive text: a title, an objective, a step's heading): emphasis and links shown
    as their words, escapes and character references as the characters they stand for, a
    code span as its content. Second: the first construct whose words read otherwise than
    they show (strikethrough, an image, raw HTML), named; the text is then not to be used."""
    tokens = _parser().parseInline(text, dict(env or {}))
    children = (tokens[0].children or []) if tokens else []
    out: list[str] = []
    for token in children:
        if token.type in _NOT_TEXT:
            name = _NOT_TEXT[token.type]
            return "", f"{name} `{token.markup}`" if token.markup else name
        if token.type in ("text", "text_special", "code_inline"):
            out.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            out.append("\n")
    return "".join(out).strip(), None


def struck(text: str, env: dict[str, Any] | None = None) -> str | None:
    """The first strikethrough of ``text`` read as inline content (``~x~`` or ``~~x~~``,
    as GFM strikes), named as a message names it; None when there is none."""
    tokens = _parser().parseInline(text, dict(env or {}))
    for token in (tokens[0].children or []) if tokens else []:
        if token.type == "s_open":
            return f"strikethrough `{token.markup}`"
    return None


def code_span(text: str) -> str | None:
    """The content of ``text`` when it is wholly one code span, as a forge shows it (one
    space dropped at each end when both ends have one, a line end read as a space), else
    None: the value a reviewer reads in a code font, without its backticks."""
    tokens = _parser().parseInline(text.strip(), {})
    children = (tokens[0].children or []) if tokens else []
    if len(children) == 1 and children[0].type == "code_inline":
        return str(children[0].content)
    return None


def _construct(token: Token) -> str | None:
    """The name of ``token`` when it renders as other text than its source, else None."""
    if token.type == "text_special" and token.content != token.markup:
        kind = "a backslash escape" if token.info == "escape" else "a character reference"
        return f"{kind} `{token.markup}`"
    if token.type in ("link_open", "link_close") and token.markup == "autolink":
        return None
    name = _NAMES.get(token.type)
    if name is None:
        return None
    return f"{name} `{token.markup}`" if token.markup and name != "a link" else name


def _as_written(token: Token) -> str:
    """A regex of the source text that renders as ``token`` (one of :func:`_construct`'s
    None): text as itself, a code span with its backticks, an autolink in ``<>``."""
    if token.type == "code_inline":
        ticks = re.escape(token.markup)
        return f"{ticks}( ?){re.escape(_lines(token.content))}\\1{ticks}"
    if token.type == "link_open":
        return "<"
    if token.type == "link_close":
        return ">"
    if token.type in ("softbreak", "hardbreak"):  # after a backslash: no match
        return "\n"
    return re.escape(token.content)


def _lines(text: str) -> str:
    """``text`` with the white space around its line ends, which a paragraph drops, gone."""
    return re.sub(r"[ \t]*\r?\n[ \t]*", "\n", text.strip())
