"""Reading YAML strictly and editing PLAN.yml without touching what the author wrote.

The only module that imports ruamel.yaml. Reading uses ruamel's C parser (YAML 1.2 schema)
and refuses anchors, aliases, merge keys, explicit tags, duplicate keys and multiple
documents *before* anything is constructed, so reviewers see every value written out and
no alias can expand into a bomb.

What a reviewer sees is what runs: the parser breaks lines on U+0085, U+2028, U+2029 and a
lone CR, which git diff and pull-request views show inside one line, so a key or a whole
action could hide behind one. They are refused outside quoted strings (and a NEL or lone CR
inside one too, which the parser would fold into a space): :func:`_hidden_breaks`.

One canonical value tree for the hash and the run: the hash (RFC 8785) writes ``1.0``,
``1e2`` and ``-0.0`` as ``1``, ``100`` and ``0``, so the reader yields the integer for every
float with an integral value within ±(2^53−1) (:func:`canonical_number`). Two files that
hash alike then hand tools the very same values, not ``1.0`` for one and ``1`` for the other.

Writing never re-emits the author's text. The controller owns whole top-level blocks
(``frozen``, ``approval``, ``execution``, ``validation``) and one scalar (``plan.status``);
edits splice those spans by the parser's line/column marks, so every other byte of the file,
comments and quoting included, stays as it was.
"""

from __future__ import annotations

import functools
import io
import itertools
import json
import pickle
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, NoReturn

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.tag import Tag

from controller.display import HIDDEN, edge_blank
from controller.errors import YamlParseError
from controller.plan.hashing import exact_double

PathPart = str | int
Path_ = tuple[PathPart, ...]
STR_TAG = "tag:yaml.org,2002:str"
INT_TAG = "tag:yaml.org,2002:int"
NULL_TAG = "tag:yaml.org,2002:null"
MERGE_TAG = "tag:yaml.org,2002:merge"
#: Deepest nesting of mappings/lists accepted. Real plans stay far below; a deeper file is
#: refused while parsing, before paths grow quadratically or any recursive step overflows.
MAX_DEPTH = 100
#: Largest integer a JSON number holds exactly (RFC 8785 / I-JSON): beyond it floats stay floats.
MAX_SAFE_INT = 2**53 - 1
#: Characters the parser takes as line breaks but line-based review tools do not.
HIDDEN_BREAKS = re.compile("[\x85\u2028\u2029]|\r(?!\n)")


FLOAT_TAG = "tag:yaml.org,2002:float"
#: YAML 1.2's core schema (spec 1.2.2, 10.3.2) for plain numbers, and nothing more: ruamel's
#: 1.2 rules also take YAML 1.1's ``1_000``, ``0x_1F``, ``0b101``, ``-0x10`` as integers (and
#: ``.5e3`` as a string), where every YAML 1.2 reader, and a reviewer reading the diff as
#: YAML 1.2, sees the other type (round 95).
CORE_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
CORE_FLOAT = re.compile(
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)

_TAGS = {name: Tag(suffix=name) for name in (INT_TAG, FLOAT_TAG, STR_TAG)}


class CoreResolver(VersionedResolver):
    """ruamel's YAML 1.2 resolver with its int and float rules replaced by the core schema's:
    a plain scalar is an int or a float exactly when :data:`CORE_INT` or :data:`CORE_FLOAT`
    matches it whole, else what ruamel says of any other type (``null``, ``true``, a
    timestamp), else a string. One rule for reading and for writing (a string the reader
    would take for a number is quoted)."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        tag = super().resolve(kind, value, implicit)
        if kind is not ScalarNode or not implicit[0]:
            return tag
        if CORE_INT.fullmatch(value):
            return _TAGS[INT_TAG]
        if CORE_FLOAT.fullmatch(value):
            return _TAGS[FLOAT_TAG]
        if str(tag) in (INT_TAG, FLOAT_TAG):  # a YAML 1.1 form: the text the file shows
            return _TAGS[STR_TAG]
        return tag


def _loader() -> YAML:
    yaml = YAML(typ="safe", pure=False)
    yaml.Resolver = CoreResolver
    yaml.allow_duplicate_keys = False
    return yaml


_YAML = _loader()


def _events(text: str) -> Iterator[Any]:
    """The parser events of ``text``, from ruamel's C parser driven directly: the events of
    ``YAML(typ="safe").parse``, without the loader class it builds for every call (15% of
    reading a small plan; a cold scan reads 50,000 of them). The pure-Python parser, where
    the C one is not installed."""
    if _CParser is None:
        yield from _YAML.parse(text)
        return
    parser = _CParser(text)
    try:
        get = parser.get_event  # None after the stream's end, as check_event() is False
        while (event := get()) is not None:
            yield event
    finally:
        parser.dispose()


try:
    from _ruamel_yaml import CParser as _CParser  # ruamel.yaml.clib: what typ="safe" runs
except ImportError:  # pragma: no cover - ruamel.yaml without its C extension
    _CParser = None


class Span(NamedTuple):
    """Where a value was written: 0-based lines/columns and character offsets.

    A named tuple, immutable like the frozen dataclass it was and built in a fifth of the
    time: a parse makes one per value (20,000 for a 1,000-action plan).
    """

    line: int
    column: int
    index: int  # type: ignore[assignment]  # the offset; shadows tuple.index, never called
    end_line: int
    end_column: int
    end_index: int
    style: str | None = None
    flow: bool = False

    @property
    def last_line(self) -> int:
        """0-based line of the value's last character."""
        if self.end_column == 0 and self.end_line > self.line:
            return self.end_line - 1
        return self.end_line


@dataclass
class YamlDoc:
    """A parsed file: its data, and where each value (and each mapping key) was written."""

    text: str
    data: Any
    spans: dict[Path_, Span] = field(default_factory=dict)
    key_lines: dict[Path_, int] = field(default_factory=dict)
    top_keys: list[str] = field(default_factory=list)
    _by_text: dict[tuple[str, ...], int] | None = field(default=None, repr=False, compare=False)

    @property
    def bom(self) -> int:
        """1 when the text starts with a byte order mark, which the parser's marks do not
        count (columns of the first line, every offset): add it to index the text."""
        return 1 if self.text.startswith("\ufeff") else 0

    def line_of(self, path: Sequence[PathPart]) -> int | None:
        """1-based line of the value at ``path`` (its key's line), or of its nearest parent."""
        parts = tuple(path)
        while True:
            if parts in self.key_lines:
                return self.key_lines[parts] + 1
            if parts in self.spans:
                return self.spans[parts].line + 1
            by_text = self._key_lines_by_text()
            if tuple(map(str, parts)) in by_text:  # a non-string key, named as text
                return by_text[tuple(map(str, parts))] + 1
            if not parts:
                return None
            parts = parts[:-1]

    def _key_lines_by_text(self) -> dict[tuple[str, ...], int]:
        # built once: rebuilding it per problem made a plan with 10k errors take hours
        if self._by_text is None:
            self._by_text = {tuple(map(str, k)): v for k, v in self.key_lines.items()}
        return self._by_text


class _Frame:
    __slots__ = ("container", "key", "key_line", "last", "nfc", "path", "start")

    def __init__(self, container: Any, path: Path_, start: Any) -> None:
        self.container = container
        self.path = path
        self.start = start
        self.key: Any = _NO_KEY
        self.key_line = 0
        self.last: Span | None = None
        #: a mapping's keys by their NFC, made at its first key outside ASCII (_key_said)
        self.nfc: dict[str, str] | None = None


def _key_said(frame: _Frame, key: Any, event: Any, source: str) -> None:
    """Refuse a mapping key said before in its mapping: the same, or one NFC makes it
    (``caf\\u00e9`` and ``cafe\\u0301``, one name to every review; round 122)."""
    if key in frame.container:
        _refuse(event, source, f"duplicate key {key!r}")
    if type(key) is not str or (frame.nfc is None and key.isascii()):
        return  # ASCII keys are equal in NFC only when they are equal
    if frame.nfc is None:
        frame.nfc = {unicodedata.normalize("NFC", k): k for k in frame.container if type(k) is str}
    first = frame.nfc.setdefault(unicodedata.normalize("NFC", key), key)
    if first != key:
        _refuse(
            event,
            source,
            f"duplicate key {key!a}: it is {first!a} in NFC, the one name every "
            "review shows for both (say each key once)",
        )


_NO_KEY = object()


def read_yaml(text: str, source: str = "<string>") -> YamlDoc:
    """Parse strictly in one pass over parser events; raise :class:`YamlParseError`.

    Anchors, aliases, explicit tags, merge keys, duplicate keys and extra documents are
    refused as they are met, so nothing is ever expanded.

    A text read recently is not parsed again (:class:`_ParseCache`): the caller gets a
    fresh copy of its data, so what one caller changes no other caller ever sees.
    """
    cached = _PARSED.get(text)
    if cached is not None:
        return cached
    doc = _read_uncached(text, source)
    _PARSED.put(doc)
    return doc


def _read_uncached(text: str, source: str) -> YamlDoc:
    quoted: list[tuple[int, int]] | None = [] if HIDDEN_BREAKS.search(text) else None
    try:
        doc = _build(text, source, quoted)
    except YamlParseError:
        if quoted is not None:
            _hidden_breaks(text, source, quoted)
        raise
    except MarkedYAMLError as exc:
        if quoted is not None:
            _hidden_breaks(text, source, quoted)
        raise _parse_error(exc, source, text) from None
    except YAMLError as exc:
        raise YamlParseError(f"{source}: {exc}") from None
    except (ValueError, TypeError) as exc:
        raise YamlParseError(f"{source}: {exc}") from None
    if quoted is not None:
        _hidden_breaks(text, source, quoted)
    return doc


class _ParseCache:
    """The last few texts parsed, by their exact characters, bounded by their total size.

    One plan's text is read by several steps of one decision, start or outcome (its history
    facts, its validation, the policy, each edit): a 1,000-action plan took 90 ms a parse.
    The key is the whole text (nothing else changes what the reader makes of it; a failed
    read is never kept); the data is kept pickled and every hit unpickles its own copy, so no
    caller can change what another caller reads. Spans are frozen, and their maps are
    only ever read once built.
    """

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.chars = 0
        self._lock = threading.Lock()
        self._docs: OrderedDict[str, tuple[bytes, YamlDoc]] = OrderedDict()

    def get(self, text: str) -> YamlDoc | None:
        with self._lock:
            found = self._docs.get(text)
            if found is None:
                return None
            self._docs.move_to_end(text)
        data, doc = found
        # the maps of spans are shared: nothing outside this module writes to them
        return YamlDoc(doc.text, pickle.loads(data), doc.spans, doc.key_lines, list(doc.top_keys))

    def put(self, doc: YamlDoc) -> None:
        if len(doc.text) > self.max_chars:
            return
        try:
            data = pickle.dumps(doc.data, pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, ValueError, RecursionError):
            return
        kept = YamlDoc(doc.text, None, doc.spans, doc.key_lines, list(doc.top_keys))
        with self._lock:
            if doc.text in self._docs:
                return
            self._docs[doc.text] = (data, kept)
            self.chars += len(doc.text)
            while self.chars > self.max_chars:
                text, _ = self._docs.popitem(last=False)
                self.chars -= len(text)

    def clear(self) -> None:
        with self._lock:
            self._docs.clear()
            self.chars = 0


#: At most this many characters of text are kept with their parses (about 26 bytes of
#: spans and data per character of a plan: 10 MB at most, held by a busy daemon): a
#: 1,000-action plan's texts as approved and as completed, or a hundred usual plans. A
#: larger text is parsed each time it is read, as before.
PARSE_CACHE_CHARS = 400_000
_PARSED = _ParseCache(PARSE_CACHE_CHARS)


def forget_parses(keep: bool = True) -> None:
    """Drop the texts kept with their parses (a cold scan's old plan versions: up to 10 MB
    that no later read asks for); ``keep=False``: keep none from now on (a process that
    reads each text once, such as the cold scan's parsing children)."""
    _PARSED.clear()
    if not keep:
        _PARSED.max_chars = -1


def _hidden_breaks(text: str, source: str, quoted: list[tuple[int, int]]) -> None:
    """Refuse the first line break only YAML sees: outside a quoted string, or one the parser
    folds (NEL, lone CR) inside one. ``quoted``: character ranges of quoted scalars."""
    for match in HIDDEN_BREAKS.finditer(text):
        at, char = match.start(), match.group(0)
        inside = any(start < at < end for start, end in quoted)
        if inside and char in "\u2028\u2029":
            continue
        line = text.count("\n", 0, at) + 1
        column = at - text.rfind("\n", 0, at)
        name = "CARRIAGE RETURN" if char == "\r" else unicodedata.name(char, "NEXT LINE")
        where = (
            "inside a quoted string, where YAML folds it into a space"
            if inside
            else ("outside a quoted string")
        )
        escape = "\\r" if char == "\r" else f"\\u{ord(char):04x}"
        err = YamlParseError(
            f"{source}:{line}:{column}: U+{ord(char):04X} {name} at column {column}, {where}: "
            "YAML reads a line break there that git diff and review tools do not show; "
            f"remove it, or write it as the escape {escape} inside a double-quoted string",
            remedy=f"remove the character, or write it as {escape} inside a double-quoted string",
        )
        err.line = line
        err.column = column  # type: ignore[attr-defined]
        raise err


def _build(text: str, source: str, quoted: list[tuple[int, int]] | None = None) -> YamlDoc:
    doc = YamlDoc(text, None)
    stack: list[_Frame] = []
    documents = 0
    spans, key_lines = doc.spans, doc.key_lines
    for event in _events(text):
        if isinstance(event, ScalarEvent):
            if quoted is not None and event.style in ("'", '"'):
                quoted.append((event.start_mark.index, event.end_mark.index))
            value = _scalar(event, source)
            if event.style == '"' and ("$<" in value or "${" in value):
                escape = escaped_syntax(text[event.start_mark.index : event.end_mark.index])
                if escape is not None:
                    _refuse(
                        event,
                        source,
                        f"the reference in {value!r} is written with the escape {escape} for "
                        f"one of its characters: {ESCAPED_SYNTAX_REMEDY}",
                    )
            frame = stack[-1] if stack else None
            if frame is None or type(frame.container) is not dict:
                _place(doc, stack, value, event, source, is_scalar=True)
            elif frame.key is _NO_KEY:  # a key: kept until its value comes (_place, inlined)
                if (
                    value in frame.container
                    or frame.nfc is not None
                    or (type(value) is str and not value.isascii())
                ):
                    _key_said(frame, value, event, source)
                frame.key, frame.key_line = value, event.start_mark.line
            else:  # a value in a mapping, the commonest event: _place, inlined
                path = (*frame.path, frame.key)
                frame.container[frame.key] = value
                key_lines[path] = frame.key_line
                frame.key = _NO_KEY
                start, end = event.start_mark, event.end_mark
                spans[path] = frame.last = Span(
                    start.line,
                    start.column,
                    start.index,
                    end.line,
                    end.column,
                    end.index,
                    event.style,
                )
        elif isinstance(event, MappingStartEvent | SequenceStartEvent):
            _check_node(event, source)
            if len(stack) >= MAX_DEPTH:
                _refuse(event, source, f"nested deeper than {MAX_DEPTH} levels")
            container: Any = {} if isinstance(event, MappingStartEvent) else []
            path = _place(doc, stack, container, event, source, is_scalar=False)
            stack.append(_Frame(container, path, event))
        elif isinstance(event, MappingEndEvent | SequenceEndEvent):
            _close(doc, stack, event)
        elif isinstance(event, AliasEvent):
            _refuse(event, source, f"alias *{event.anchor} (write the value out in full)")
        elif isinstance(event, DocumentStartEvent):
            documents += 1
            if documents > 1:
                _refuse(event, source, "more than one YAML document in the file")
            version = getattr(event, "version", None)
            if version is not None and tuple(version) != (1, 2):
                # plans are read as YAML 1.2 whatever the directive says: a reviewer who
                # believed it would read `yes` as true and 0777 as 511, where the tool gets
                # "yes" and 777
                _refuse(
                    event,
                    source,
                    f"a %YAML {'.'.join(map(str, version))} directive (plans are YAML 1.2: "
                    "remove the directive)",
                )
    if isinstance(doc.data, dict):
        doc.top_keys = [k for k in doc.data if isinstance(k, str)]
    return doc


def _check_node(event: Any, source: str) -> None:
    if event.anchor:
        _refuse(event, source, f"anchor &{event.anchor} (write values out in full)")
    if event.tag is not None and _explicit_tag(event):
        _refuse(event, source, f"tag {event.tag} (quote the value instead)")


@functools.lru_cache(maxsize=4096)
def _plain_tag(value: str) -> str:
    """The YAML 1.2 tag of a plain scalar (cached: plans repeat their plain values a lot)."""
    return str(_YAML.resolver.resolve(ScalarNode, value, (True, False)))


def edge_lookalike(text: str) -> str | None:
    """The character at an edge of ``text`` that a reader shows as a space (U+00A0, U+2009,
    U+3000, ...) or as nothing (:data:`controller.display.INVISIBLE`: U+200B, U+00AD, a bidi
    mark, U+2064, U+3164, ...) but no ASCII-space trimming removes, else None. A plain YAML
    or unquoted TOON value or key trims an ASCII space at its edges and keeps these:
    ``dry_run<U+00A0>: true`` is another key than ``dry_run : true``, which a diff shows
    alike (round 113, ``space-lookalike-in-source``; round 122: one rule, not a list)."""
    return edge_blank(text)


#: One escape of a JSON, YAML or TOON quoted string: ``\\xHH``, ``\\uHHHH``, ``\\UHHHHHHHH``
#: or a backslash and one character.
_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))", re.S)
#: What a quoted string may say in place of a reference's characters.
ESCAPED_SYNTAX_REMEDY = (
    "write the reference's $, <, >, { and } as themselves (a reviewer reads the source; an "
    "escape there hides the reference); a literal $< is $$<"
)


def escaped_syntax(raw: str) -> str | None:
    """The first escape in ``raw`` (a quoted string as written, in JSON, YAML or TOON) that
    stands for a character of a reference's syntax (the ``$`` and ``<`` or ``{`` opening it,
    a ``$`` right before those, the ``>`` or ``}`` closing it), else None. Round 114,
    ``escaped-reference-syntax``: ``"\\u0024<plan.name>"`` is a live reference in every
    format while the diff a reviewer reads shows no ``$<``. An escape elsewhere is text as
    before: ``"\\u00245 fee"`` is ``$5 fee``, ``"\\u003cb>$<plan.name>"`` a tag's text and a
    reference written out."""
    if "\\" not in raw:
        return None
    chars: list[str] = []
    escapes: list[str | None] = []  # the escape each character was written as, or None
    last = 0
    for match in _ESCAPE.finditer(raw):
        plain = raw[last : match.start()]
        chars += plain
        escapes += [None] * len(plain)
        last = match.end()
        code = match.group(1) or match.group(2) or match.group(3)
        if code:
            char = chr(int(code, 16)) if int(code, 16) <= 0x10FFFF else "\x00"
        else:
            char = match.group(4) if match.group(4) in '"\\/' else "\x00"
        chars.append(char)
        escapes.append(match.group(0))
    chars += raw[last:]
    escapes += [None] * (len(raw) - last)
    spelled = "".join(chars)
    for opener in re.finditer(r"\$[<{]", spelled):
        at = opener.start()
        close = spelled.find(">" if spelled[at + 1] == "<" else "}", at + 2)
        places = [at, at + 1, *([at - 1] if at and spelled[at - 1] == "$" else [])]
        places += [close] if close >= 0 else []
        found = next((escapes[p] for p in places if escapes[p] is not None), None)
        if found is not None:
            return found
    return None


def _scalar(event: ScalarEvent, source: str) -> Any:
    if event.anchor or event.tag is not None:
        _check_node(event, source)
    if event.style:  # quoted or block scalars are strings
        return event.value
    value = event.value
    if value and (value[0] > "\x7f" or value[-1] > "\x7f") and edge_lookalike(value):
        char = edge_lookalike(value) or ""
        _refuse(
            event,
            source,
            f"the plain value {value!r} {'begins' if value[0] == char else 'ends'} with "
            f"U+{ord(char):04X}, which a review shows as a space or as nothing: YAML trims an "
            "ASCII space there and keeps this one, so it reads as another key or value "
            "(quote the value to keep the character, or remove it)",
        )
    tag = _plain_tag(value)
    if tag == STR_TAG:
        return value
    digits = tag == INT_TAG and value.isascii() and value.isdigit() and len(value) <= 15
    if digits and (value[0] != "0" or value == "0"):  # what ruamel's constructor makes of it
        return int(value)
    if tag == NULL_TAG:
        return None
    if tag == MERGE_TAG:
        _refuse(event, source, "merge key << (write the keys out in full)")
    construct = SafeConstructor.yaml_constructors.get(tag)
    if construct is None:
        _refuse(event, source, f"unsupported value type {tag}")
    node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
    try:
        found = construct(_YAML.constructor, node)
    except ValueError:  # Python's limit on an integer's digits (round 111: no line, its advice)
        _too_long(event, source, value)
    if type(found) is float and not exact_double(value, found):
        return InexactFloat(found, value)
    return canonical_number(found)


class InexactFloat(float):
    """A number written with more precision than a double holds (``9007199254740993.0``,
    ``1e-400``, ``4.99999999999999999999``): the double is another number, which the hash
    and the tool would get while the file and the pull request show the written one (round
    22). Kept with its text so that validation refuses it (``E_SCHEMA_INVALID``, quote it),
    as it does an integer beyond ±(2^53−1)."""

    written: str

    def __new__(cls, value: float, written: str) -> InexactFloat:
        made = super().__new__(cls, value)
        made.written = written
        return made

    def __reduce__(self) -> tuple[Any, ...]:  # the parse cache pickles documents
        return (InexactFloat, (float(self), self.written))

    def refusal(self) -> str:
        """Why the number is refused, in every reader that meets it (PLAN.yml and every
        converted source: one rule, one message)."""
        held = canonical_number(float(self))
        return (
            f"the number {self.written} has no exact double: it would reach the tool and the "
            f"hash as {held!r}; quote it to make it a string, or write it with fewer digits"
        )


def canonical_number(value: Any) -> Any:
    """The integer for a float with an integral value within ±(2^53−1) (``1.0``, ``1e2``,
    ``-0.0``): the value RFC 8785 hashes, so it is also the value tools get."""
    if type(value) is float and value.is_integer() and abs(value) <= MAX_SAFE_INT:
        return int(value)
    return value


def _span(start: Any, end: Any, style: str | None = None, flow: bool = False) -> Span:
    return Span(start.line, start.column, start.index, end.line, end.column, end.index, style, flow)


def _place(
    doc: YamlDoc, stack: list[_Frame], value: Any, event: Any, source: str, is_scalar: bool
) -> Path_:
    """Attach a new value to its parent; return its path."""
    if not stack:
        doc.data = value
        path: Path_ = ()
    else:
        frame = stack[-1]
        if isinstance(frame.container, list):
            path = (*frame.path, len(frame.container))
            frame.container.append(value)
        elif frame.key is _NO_KEY:
            if not is_scalar:
                _refuse(event, source, "a mapping key must be a plain value")
            _key_said(frame, value, event, source)
            frame.key, frame.key_line = value, event.start_mark.line
            return frame.path
        else:
            path = (*frame.path, frame.key)
            frame.container[frame.key] = value
            doc.key_lines[path] = frame.key_line
            frame.key = _NO_KEY
    if is_scalar:
        span = _span(event.start_mark, event.end_mark, event.style)
        doc.spans[path] = span
        if stack:
            stack[-1].last = span
    return path


def _close(doc: YamlDoc, stack: list[_Frame], event: Any) -> None:
    frame = stack.pop()
    flow = bool(getattr(frame.start, "flow_style", False))
    if flow or frame.last is None:
        span = _span(frame.start.start_mark, event.end_mark, None, flow)
    else:
        last = frame.last
        span = Span(
            frame.start.start_mark.line,
            frame.start.start_mark.column,
            frame.start.start_mark.index,
            last.end_line,
            last.end_column,
            last.end_index,
            None,
            False,
        )
    doc.spans[frame.path] = span
    if stack:
        stack[-1].last = span


def _parse_error(exc: MarkedYAMLError, source: str, text: str = "") -> YamlParseError:
    mark = exc.problem_mark or exc.context_mark
    line = f":{mark.line + 1}" if mark is not None else ""
    what = " ".join(p for p in (exc.context, exc.problem) if p)
    tab = _tab_near(text, mark)
    if tab is not None:  # the parser's words do not say "tab": the commonest slip does
        line = f":{tab[0]}"
        what = (
            f"a tab character at line {tab[0]}, column {tab[1]}: YAML indents with spaces "
            "only (replace the tab with spaces)"
        )
    err = YamlParseError(f"{source}{line}: {what}")
    err.line = mark.line + 1 if mark is not None else None
    if tab is not None:
        err.line = tab[0]
    return err


def _tab_near(text: str, mark: Any) -> tuple[int, int] | None:
    """1-based (line, column) of the tab that made the parser fail, if one did: the
    character at the error mark, or a tab in the indentation of that line."""
    if mark is None or not text:
        return None
    lines = text.splitlines()
    if mark.line >= len(lines):
        return None
    row = lines[mark.line]
    if mark.column < len(row) and row[mark.column] == "\t":
        return mark.line + 1, mark.column + 1
    indent = len(row) - len(row.lstrip(" \t"))
    found = row.find("\t", 0, max(indent, mark.column) + 1)
    return (mark.line + 1, found + 1) if found >= 0 else None


def _explicit_tag(event: Any) -> bool:
    """Whether the text writes a tag on the node. The parser marks the non-specific tag
    ``!`` (and its verbatim ``!<!>``) on a scalar "implicit" for plain resolution, but YAML
    1.2 resolves a ``!``-tagged scalar as a string (spec 6.9.1): ``mode: ! 0777`` is
    ``"0777"`` to a YAML 1.2 reader and was 777 here (round 121,
    ``yaml-nonspecific-tag-accepted``). Every written tag is refused, ``!`` too."""
    if str(event.tag) == "!":
        return True
    implicit = event.implicit
    return not (implicit[0] or implicit[1]) if isinstance(implicit, tuple) else not implicit


def _too_long(event: Any, source: str, value: str) -> NoReturn:
    """A number too long to read (an integer of more than 4300 digits): refused at its line,
    with plangate's remedy."""
    line = event.start_mark.line + 1 if event.start_mark else None
    shown = value if len(value) <= 40 else f"{value[:20]}...{value[-10:]}"
    err = YamlParseError(
        f"{source}:{line}: the number {shown} ({len(value)} characters) is too long to read "
        "as a number: quote it to make it a string, or write a shorter number",
        remedy="quote the value to make it a string, or write a number of at most 4300 digits",
    )
    err.line = line
    raise err


def _refuse(event: Any, source: str, what: str) -> NoReturn:
    line = event.start_mark.line + 1 if event.start_mark else None
    err = YamlParseError(f"{source}:{line}: {what}")
    err.line = line
    raise err


# --- writing ----------------------------------------------------------------------------


class Escaped(str):
    """A string the controller's record writes with every non-ASCII character as YAML's
    double-quoted escape (``\\u2014``): the very value read back, in ASCII (round 83: a
    record's checkout that would not give it back, :mod:`controller.execution.checkpoints`).
    Equal to its text everywhere else."""

    __slots__ = ()


def _plain_strings(value: Any) -> tuple[Any, bool]:
    """``value`` with each :class:`Escaped` a plain ``str`` (for ruamel's writer), and
    whether it held any."""
    found = False

    def walk(item: Any) -> Any:
        nonlocal found
        if type(item) is Escaped:
            found = True
            return str(item)
        if type(item) is dict:
            return {walk(k): walk(v) for k, v in item.items()}
        if type(item) is list:
            return [walk(v) for v in item]
        return item

    plain = walk(value)
    return plain, found


def dump(value: Any) -> str:
    """Block-style YAML for data the controller writes (plain JSON data only).

    Written by :func:`_emit` (a run's ``execution:`` block of 1,000 actions: 150 ms through
    ruamel's representer, written at the run's start, end and checkpoints); the same text
    ruamel writes for the usual values (plain words, numbers, timestamps). A value it does not
    handle (a non-string key, a float it cannot write back exactly, a very long key) goes
    to ruamel whole. Either way the text reads back to exactly ``value``.
    """
    value = _writable(value)
    out: list[str] = []
    try:
        _emit(value, 0, out)
    except _Unhandled:
        plain, escaped = _plain_strings(value)
        return _ruamel_dump(plain, ascii_only=escaped)
    return "".join(out)


def _writable(value: Any) -> Any:
    """``value`` with every lone surrogate of its strings written as text: ``\\xNN`` for a
    byte git's metadata held that is not UTF-8 (read with surrogateescape), ``\\uNNNN``
    otherwise. Round 25: an approval commit with such a byte in its author or trailers had
    the controller write an escape no YAML reader takes back, and the plan was unreadable
    for good. The common case (no surrogate anywhere) costs one pass of the C encoder."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except UnicodeEncodeError:
        pass
    except (TypeError, ValueError, RecursionError):
        return value  # not plain JSON data: ruamel's writer decides

    def text(item: str) -> str:
        return type(item)(_LONE_SURROGATE.sub(_surrogate_text, item))

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return text(item)
        if isinstance(item, dict):
            return {text(k) if isinstance(k, str) else k: walk(v) for k, v in item.items()}
        if isinstance(item, list):
            return [walk(v) for v in item]
        return item

    return walk(value)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_text(match: re.Match[str]) -> str:
    point = ord(match.group(0))
    return f"\\x{point - 0xDC00:02x}" if 0xDC80 <= point <= 0xDCFF else f"\\u{point:04x}"


def _ruamel_dump(value: Any, *, ascii_only: bool = False) -> str:
    yaml = YAML(typ="safe", pure=False)
    yaml.Resolver = CoreResolver  # its plain strings read back as strings
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    yaml.width = 4096
    yaml.allow_unicode = not ascii_only  # a value to write Escaped: every one, in ASCII
    out = io.StringIO()
    yaml.dump(value, out)
    text = out.getvalue()
    if HIDDEN.search(text.replace("\n", "")):  # its emitter writes format characters raw
        yaml.allow_unicode = False  # every non-ASCII character escaped: the same value
        out = io.StringIO()
        yaml.dump(value, out)
        text = out.getvalue()
    return text


class _Unhandled(Exception):
    """A value :func:`_emit` leaves to ruamel."""


#: What ruamel writes plain in block context (its emitter's analysis, for one line of
#: printable characters): no leading or trailing space, no indicator first (``-``, ``?`` and
#: ``:`` only before a space), no ``: `` or `` #`` inside, no ``:`` last. The value must also
#: read back as a string (:func:`_plain_tag`).
_PRINTABLE = "\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff"


@functools.cache
def _scalar_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(plain, one line, to escape), compiled on the first write: their Unicode classes take
    about 5 ms to compile, which a command that only reads (``validate``, ``hash``) skips."""
    plain = re.compile(
        f"(?![#,\\[\\]{{}}&*!|>'\"%@`\\s])(?![-?:](?: |$))(?:(?!: | #)[{_PRINTABLE}])*(?<![ :])"
    )
    one_line = re.compile(f"[{_PRINTABLE}]*")
    # what a double-quoted scalar must escape besides JSON's: C1 controls, DEL, the line
    # breaks review tools hide (NEL, U+2028, U+2029), the BOM, surrogates, non-characters
    # and every character a person cannot see (display.HIDDEN: format characters such as
    # the bidi overrides, zero-width characters, private use), so the controller's record in
    # PLAN.yml shows what a tool's output or error held as escapes, as EXECUTION_LOG.md does
    escape = re.compile(f"[\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]|{HIDDEN.pattern}")
    return plain, one_line, escape


#: ruamel writes a longer key as an explicit ``? key``: left to it.
_MAX_KEY = 127


def _emit(value: Any, indent: int, out: list[str], first: str | None = None) -> None:
    """Block YAML for ``value`` (a non-empty mapping or list) at ``indent``; ``first``: what
    starts its first line instead of the indent (a list item's ``- ``). Plain JSON types
    only (not their subclasses): anything else is left to ruamel, as before."""
    if type(value) is dict and value:
        for key, item in value.items():
            if type(key) not in (str, Escaped) or len(key) > _MAX_KEY:
                raise _Unhandled
            start = first if first is not None else " " * indent
            first = None
            _emit_entry(f"{start}{_scalar_text(key)}:", item, indent + 2, indent, out)
    elif type(value) is list and value:
        for item in value:
            start = (first if first is not None else " " * indent) + "- "
            first = None
            if type(item) in (dict, list) and item:
                _emit(item, indent + 2, out, start)
            else:
                out.append(f"{start}{_scalar_text(item)}\n")
    else:
        out.append(f"{_scalar_text(value)}\n")


def dump_floor(value: Any) -> int | None:
    """A number of characters :func:`dump` writes at least for ``value`` (so at least as
    many bytes), counted without writing it: :func:`_emit`'s layout, every key and string
    as long as its plain form (quoting and escapes only lengthen it). None when it cannot
    tell: a value left to ruamel, a float. A checkpoint's execution block too long for
    PLAN.yml is known so without a dump (round 83: 30 ms for a 1,000-step block)."""
    try:
        return _floor(value, 0) if type(value) in (dict, list) and value else None
    except _Unhandled:
        return None


def _floor(value: Any, indent: int) -> int:
    """What :func:`_emit` writes for a non-empty mapping or list at ``indent``, at least."""
    total = 0
    if type(value) is dict:
        for key, item in value.items():
            if type(key) is not str or len(key) > _MAX_KEY:
                raise _Unhandled
            head = indent + len(key) + 1  # the indent (or a list item's dash), "key:"
            if type(item) is dict and item:
                total += head + 1 + _floor(item, indent + 2)
            elif type(item) is list and item:
                total += head + 1 + _floor(item, indent)
            else:
                total += head + 1 + _scalar_floor(item) + 1
    else:
        for item in value:
            if type(item) in (dict, list) and item:
                total += _floor(item, indent + 2)  # its first line starts with the dash
            else:
                total += indent + 2 + _scalar_floor(item) + 1
    return total


def _scalar_floor(value: Any) -> int:
    kind = type(value)
    if kind is str:
        return len(value)
    if value is None:
        return 4
    if kind is bool:
        return 4 if value else 5
    if kind is int:
        return len(str(value))
    if (kind is dict or kind is list) and not value:
        return 2
    raise _Unhandled  # a float (its text is decided by ruamel's reading), or no JSON type


def _emit_entry(head: str, item: Any, inner: int, indent: int, out: list[str]) -> None:
    if type(item) is dict and item:
        out.append(head + "\n")
        _emit(item, inner, out)
    elif type(item) is list and item:
        out.append(head + "\n")
        _emit(item, indent, out)  # ruamel's style: a list's dashes under its key
    else:
        out.append(f"{head} {_scalar_text(item)}\n")


def _scalar_text(value: Any) -> str:
    kind = type(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        return _float_text(value)
    if kind is dict or kind is list:  # empty: a nonempty one is a block
        return "{}" if kind is dict else "[]"
    if kind is Escaped:  # double-quoted, every non-ASCII character escaped (round 83)
        return _NON_ASCII.sub(_yaml_escape, _scalar_patterns()[2].sub(_yaml_escape,
                              json.dumps(value, ensure_ascii=False)))  # fmt: skip
    if kind is not str:
        raise _Unhandled
    plain, one_line, escape = _scalar_patterns()
    if not HIDDEN.search(value):
        if value and plain.fullmatch(value) and _plain_tag(value) == STR_TAG:
            return value
        if one_line.fullmatch(value):
            return "'" + value.replace("'", "''") + "'"
    quoted = json.dumps(value, ensure_ascii=False)
    return escape.sub(_yaml_escape, quoted)


_NON_ASCII = re.compile("[^\x00-\x7f]")


def _yaml_escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _float_text(value: float) -> str:
    text = repr(value)
    if value != value or value in (float("inf"), float("-inf")):
        return {"nan": ".nan", "inf": ".inf", "-inf": "-.inf"}[text]
    if _plain_tag(text) != "tag:yaml.org,2002:float":
        raise _Unhandled  # e.g. 1e+20 is no YAML 1.2 float: ruamel writes 1.0e+20
    return text


def entries(doc: YamlDoc) -> Iterator[tuple[str, int, int]]:
    """(key, first line, last line) of each top-level entry, 0-based and inclusive."""
    for key in doc.top_keys:
        yield key, doc.key_lines[(key,)], doc.spans[(key,)].last_line


def is_block_mapping(doc: YamlDoc) -> bool:
    root = doc.spans.get(())
    return isinstance(doc.data, dict) and bool(doc.data) and root is not None and not root.flow


def set_block(
    doc: YamlDoc,
    key: str,
    value: Any,
    *,
    checked: bool = True,
    dumped: Mapping[str, str] | None = None,
) -> str:
    """The text with top-level ``key`` set to ``value`` (None removes it), all else unchanged.
    ``dumped``: ``{key: dump({key: value})}`` already made by the caller, of this very value."""
    return edit(doc, {key: value}, checked=checked, dumped=dumped)


def edit(
    doc: YamlDoc,
    blocks: dict[str, Any],
    scalars: dict[Path_, str] | None = None,
    *,
    checked: bool = True,
    dumped: Mapping[str, str] | None = None,
) -> str:
    """The text with several top-level ``blocks`` set (None removes one) and ``scalars``
    replaced (keeping their quote style), from this one parse: the same text as applying
    :func:`set_block` and :func:`set_scalar` in turn, without parsing what each step made.

    Every writer of a plan file comes here, and what it makes is read back before anyone
    writes it (:func:`_check_edit`): the edit of a layout it gets wrong raises
    :class:`YamlParseError`, so the controller reports the file and never commits one the
    reader refuses (round 74: an indented plan was left unreadable by the controller's own
    ``refuse`` commit). ``checked=False`` only for the engine's checkpoints on disk, never
    committed: the run's start edit of the same parse was checked, and its outcome is.
    ``dumped``: a block's text (``dump({key: value})``) the caller made of that very value."""
    scalars = scalars or {}
    text = _splice(doc, blocks, scalars, dumped) if dumped else _splice(doc, blocks, scalars)
    if checked:
        _check_edit(doc, text, blocks, scalars)
    return text


def _splice(
    doc: YamlDoc,
    blocks: dict[str, Any],
    scalars: dict[Path_, str],
    dumped: Mapping[str, str] | None = None,
) -> str:
    if not is_block_mapping(doc):
        raise YamlParseError("the top level of the file must be a block mapping to be edited")
    lines = doc.text.splitlines(keepends=True)
    eol = _line_ending(doc.text)
    # a root mapping may be indented (every key at one column): its new keys go there too
    margin = " " * doc.spans[()].column
    spans = {name: (first, last) for name, first, last in entries(doc)}
    ops: list[tuple[int, int, list[str]]] = []  # replace lines[start:end] by new lines
    appended: list[str] = []
    for key, value in blocks.items():
        made = (dumped or {}).get(key) if value is not None else None
        new = "" if value is None else (made or dump({key: value})).replace("\n", eol)
        new_lines = [margin + line if line.strip() else line for line in new.splitlines(True)]
        if key in spans:
            first, last = spans[key]
            ops.append((first, last + 1, new_lines))
        else:
            appended += new_lines
    if appended:
        end = max(last for _, last in spans.values())
        if not lines[end].endswith("\n"):
            lines[end] += eol
        ops.append((end + 1, end + 1, appended))
    for path, value in scalars.items():
        line = _scalar_line(doc, lines, path, value)
        if line is None:  # a key to insert: edit in turn (rare: a file without plan.status)
            text = _splice(doc, blocks, {p: v for p, v in scalars.items() if p != path}, dumped)
            return _insert_scalar(read_yaml(text), path, value)
        ops.append((line[0], line[0] + 1, [line[1]]))
    ops.sort(key=lambda op: (op[0], op[1]))
    if any(a[1] > b[0] for a, b in itertools.pairwise(ops)):
        raise YamlParseError("overlapping edits of one file")  # a bug, never written
    for start, end, new_lines in reversed(ops):
        lines[start:end] = new_lines
    return "".join(lines)


def _line_ending(text: str) -> str:
    """The file's line ending (CRLF if its first line has one), for lines the controller adds."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def set_blocks(text: str, blocks: dict[str, Any], source: str = "<string>") -> str:
    """Apply several :func:`set_block` edits at once."""
    return edit(read_yaml(text, source), blocks)


def set_scalar(doc: YamlDoc, path: Sequence[PathPart], value: str) -> str:
    """The text with the scalar at ``path`` replaced by ``value``, keeping its quote style."""
    return edit(doc, {}, {tuple(path): value})


#: A value as :func:`set_scalar` writes a state: one word, plain or quoted, nothing else.
_WORD_VALUE = re.compile(r"[a-z_]+|'[a-z_]+'|\"[a-z_]+\"")


def scalar_alone_changed(before: str, after: str, path: Sequence[PathPart]) -> bool:
    """Whether ``after`` is ``before`` with nothing but the scalar at ``path`` rewritten where
    the parser read it: every character outside that value's span the same, the new value one
    word (plain or quoted, as :func:`set_scalar` writes it), and both reading as the same
    document apart from that value. Decided on the parse, not on how the key is spelled
    (round 75: ``"\\x73tatus":``, ``? status`` / ``:``, the value on the next line)."""
    try:
        old, new = read_yaml(before), read_yaml(after)
    except YamlParseError:
        return False
    old_cut, new_cut = _scalar_cut(old, path), _scalar_cut(new, path)
    if old_cut is None or new_cut is None:
        return False
    (start, end), (new_start, new_end) = old_cut, new_cut
    if start != new_start or before[:start] != after[:start] or before[end:] != after[new_end:]:
        return False
    if _WORD_VALUE.fullmatch(after[new_start:new_end]) is None:
        return False
    return _same(_without(old.data, path), _without(new.data, path))


def without_comment_after(text: str, path: Sequence[PathPart], name: str = "") -> str:
    """``text`` without the comment that follows the scalar at ``path`` on its line (round 95,
    forgedtail: ``status: complete  # FORGED``, the controller's ``failed`` written into the
    agent's line kept the agent's words); unchanged when there is none, or when the text
    without it would read otherwise."""
    try:
        doc = read_yaml(text, name)
    except YamlParseError:
        return text
    cut = _scalar_cut(doc, path)
    if cut is None:
        return text
    end = cut[1]
    stop = len(text)
    for eol in ("\n", "\r"):
        found = text.find(eol, end)
        if found != -1:
            stop = min(stop, found)
    match = re.fullmatch(r"[ \t]+#.*", text[end:stop])
    if match is None:
        return text
    edited = text[:end] + text[stop:]
    try:
        if read_yaml(edited, name).data != doc.data:
            return text
    except YamlParseError:
        return text
    return edited


def _scalar_cut(doc: YamlDoc, path: Sequence[PathPart]) -> tuple[int, int] | None:
    """The character offsets of the scalar at ``path`` in ``doc.text``, or None (none there)."""
    span = doc.spans.get(tuple(path))
    if span is None or isinstance(_get(doc.data, path), dict | list):
        return None
    return span.index + doc.bom, span.end_index + doc.bom


def _without(data: Any, path: Sequence[PathPart]) -> Any:
    """A copy of ``data`` (fresh from :func:`read_yaml`) without the entry at ``path``."""
    parent = _get(data, path[:-1])
    if isinstance(parent, dict):
        parent.pop(path[-1], None)
    return data


def _check_edit(doc: YamlDoc, text: str, blocks: dict[str, Any], scalars: dict[Path_, str]) -> None:
    """Refuse an edit whose text does not read back as the file with exactly these changes:
    whatever the layout (an indented root, ``---``/``...``, comments, no final newline),
    the controller never hands on a file the reader refuses or reads otherwise."""
    expected = read_yaml(doc.text).data
    for key, value in blocks.items():
        if value is None:
            expected.pop(key, None)
        else:
            expected[key] = _writable(value)
    for path, value in scalars.items():
        parent = _get(expected, path[:-1])
        if isinstance(parent, dict):
            parent[path[-1]] = value
    try:
        written = read_yaml(text).data
    except YamlParseError as exc:
        raise _unwritable(f"it would not read back ({exc.message})") from None
    if not _same(written, expected):
        raise _unwritable("it would read back otherwise than written")


def _unwritable(why: str) -> YamlParseError:
    return YamlParseError(
        f"the controller cannot edit this file's layout: {why}; nothing was written",
        remedy="write the plan as a block mapping, one key per line (see docs/plan-format.md)",
    )


def _same(a: Any, b: Any) -> bool:
    """Equal values, a NaN equal to a NaN (a tool's output may hold one)."""
    if a == b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return isinstance(a, float) and isinstance(b, float) and a != a and b != b


def _scalar_line(doc: YamlDoc, lines: list[str], path: Path_, value: str) -> tuple[int, str] | None:
    """(line number, new line) replacing the scalar at ``path``; None: there is none to
    replace (a key to insert)."""
    span = doc.spans.get(path)
    parent = _get(doc.data, path[:-1])
    if (
        span is None
        or not isinstance(parent, dict)
        or isinstance(parent.get(path[-1]), dict | list)
    ):
        return None
    quote = span.style if span.style in ("'", '"') else ""
    if span.line != span.end_line:
        raise YamlParseError(f"{'.'.join(map(str, path))} must be written on one line")
    line = lines[span.line]
    shift = doc.bom if span.line == 0 else 0
    start, end = span.column + shift, span.end_column + shift
    return span.line, line[:start] + f"{quote}{value}{quote}" + line[end:]


def _get(data: Any, path: Sequence[PathPart]) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _insert_scalar(doc: YamlDoc, path: Sequence[PathPart], value: str) -> str:
    parent = _get(doc.data, path[:-1])
    span = doc.spans.get(tuple(path[:-1]))
    if not isinstance(parent, dict) or not parent or span is None or span.flow:
        raise YamlParseError(
            f"cannot write {'.'.join(map(str, path))}: its parent is not a mapping"
        )
    first = (*path[:-1], next(iter(parent)))
    line = doc.key_lines[first]
    lines = doc.text.splitlines(keepends=True)
    indent = lines[line][: len(lines[line]) - len(lines[line].lstrip(" "))]
    lines.insert(line, f"{indent}{path[-1]}: {value}{_line_ending(doc.text)}")
    return "".join(lines)
