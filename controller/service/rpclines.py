"""What ``plangate mcp`` reads of a JSON-RPC line before any parser does (docs/agents.md).

Every reader a line meets (Python's ``json``, the SDK's pydantic reader, the SDK's
handlers) recurses per level of nesting, each with its own limit: Python's ``json`` raises
``RecursionError`` near 1,000 levels, the SDK's reader gives up near 200, and a number of
more than 4,300 digits is no number to either. Round 125 (mcp-deep-line-kills-session):
one line 1,000 levels deep raised ``RecursionError`` in the server's own read of it and
ended the session, every request before and after it unanswered. So each line is first
measured here, in C-level passes and without parsing it: a line nested deeper than
:data:`MAX_DEPTH` levels, holding a number longer than :data:`MAX_NUMBER_CHARS` characters,
or longer than :data:`MAX_LINE_CHARS` (``mcpserver`` reads no more of it) is read by no
parser at all and answered ``-32700`` saying why, with the request's own ``id`` when the top
of the line shows one plainly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import accumulate

#: Levels of ``[``/``{`` one line may nest, the envelope's own included (a ``tools/call``'s
#: arguments sit 3 deep). Well below every reader's limit (the SDK's ~200, Python's ~1,000),
#: and above PLAN.yml's 100 levels plus the envelope: no message of the six tools nests past 4.
MAX_DEPTH = 128

#: Characters of one JSON number (sign, digits, fraction, exponent). No double holds more
#: than 17 significant digits, plangate's integers are within ±(2^53-1), and Python's
#: reader refuses integers of more than 4,300 digits.
MAX_NUMBER_CHARS = 1000

#: Characters of one line: the largest plan text a tool takes (4 MiB: ``limits.max_plan_bytes``
#: is at most that, and so is a source's ``MAX_SOURCE_BYTES``), each byte at most 6
#: characters in JSON (``\u0001``), and 64 KiB for the envelope and the other arguments.
#: A longer line is never held whole: what follows the bound is read and dropped.
MAX_LINE_CHARS = 6 * 4 * 1024 * 1024 + 64 * 1024

#: Characters of a refused line read for its ``id`` (the top object's own tokens, read one by
#: one in Python): past it the answer's id is null.
MAX_ID_SCAN = 1 << 20

# A JSON string whole (unrolled: one C-level match however long), or an unterminated one to
# the end of the line.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
# A number-like run of more than MAX_NUMBER_CHARS characters, as the token below reads one.
_LONG_NUMBER = re.compile(
    rf"-\d[\d.eE+-]{{{MAX_NUMBER_CHARS - 1},}}|\d[\d.eE+-]{{{MAX_NUMBER_CHARS},}}"
)
# One token a step: a string, a bracket, a colon or comma, a number-like run, any other run
# (a literal, or garbage the parsers will refuse), whitespace.
_TOKEN = re.compile(
    rf"(?P<string>{_STRING.pattern})|(?P<open>[\[{{])|(?P<close>[\]}}])"
    r"|(?P<number>-?\d[\d.eE+-]*)|(?P<other>[:,]|[^\s\"\[\]{}:,]+)|\s+",
    re.DOTALL,
)
_INTEGER = re.compile(r"-?(?:0|[1-9]\d*)")
# A JSON number has at most three runs of digits (whole, fraction, exponent) and four other
# characters, so one past the bound holds a run of more than a quarter of it.
_LONG_DIGITS = re.compile(rf"\d{{{MAX_NUMBER_CHARS // 4}}}")


@dataclass(frozen=True)
class Unread:
    """A line no parser is given: why (for the error's message) and the request's id."""

    why: str
    request_id: str | int | None = None


def screen(line: str) -> Unread | None:
    """None when every reader of the chain can read ``line`` safely; else why not. Counted
    in C-level passes (strings out, then the brackets alone), so a wide line costs little;
    only a refused line's top object is read token by token, for its ``id``."""
    if _plainly_safe(line):
        return None
    shape = _STRING.sub('""', line)  # a string's brackets and digits are text
    why = _too_deep(shape) or _long_number(shape)
    if not why:
        return None
    readable = len(line) <= MAX_ID_SCAN and line.lstrip().startswith("{")
    return Unread(why, _request_id(_top_tokens(line)) if readable else None)


def _too_deep(shape: str) -> str:
    brackets = _NOT_BRACKET.sub("", shape)
    if len(brackets) <= MAX_DEPTH:
        return ""
    deepest = max(accumulate(map(_STEP.__getitem__, brackets)))
    return f"nested deeper than {MAX_DEPTH} levels" if deepest > MAX_DEPTH else ""


def _long_number(shape: str) -> str:
    found = _LONG_NUMBER.search(shape) is not None
    return f"a number longer than {MAX_NUMBER_CHARS} characters" if found else ""


def _top_tokens(line: str) -> list[str]:
    """The tokens of the line's top level (a container value as its opening bracket)."""
    depth, top = 0, []
    for match in _TOKEN.finditer(line):
        kind = match.lastgroup
        depth += 1 if kind == "open" else -1 if kind == "close" else 0
        if kind is not None and (depth == 1 or (depth == 2 and kind == "open")):
            top.append(match.group())
    return top


def _plainly_safe(line: str) -> bool:
    """Too few brackets to nest past the bound and no run of digits a number past the bound
    holds (strings counted too: this only ever sends a line on to the exact count)."""
    brackets = line.count("[") + line.count("{")
    return brackets <= MAX_DEPTH and _LONG_DIGITS.search(line) is None


def _request_id(top: list[str]) -> str | int | None:
    """The ``id`` of a request from the top object's own tokens (``top[0]`` is its ``{``):
    a string or integer beside a string ``method`` (the last of a repeated key, as
    ``json`` reads it), None otherwise or when the value is cut off by the bound."""
    members: dict[str, str] = {}
    for i in range(1, len(top) - 2):
        if top[i].startswith('"') and top[i + 1] == ":":
            key = _string(top[i])
            if key is not None:
                members[key] = top[i + 2]
    method, value = members.get("method", ""), members.get("id", "")
    if not method.startswith('"') or _string(method) is None:
        return None
    if value.startswith('"'):
        return _string(value)
    if _INTEGER.fullmatch(value) and len(value) <= MAX_NUMBER_CHARS:
        return int(value)
    return None


def _string(token: str) -> str | None:
    """A string token's text, or None for one cut off, malformed, or not writable as UTF-8
    (a lone surrogate: no reply quoting it could be written)."""
    try:
        text = json.loads(token)
        text.encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return None
    return text if isinstance(text, str) else None
