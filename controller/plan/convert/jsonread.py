"""The one strict JSON reader of every converted source that holds JSON (round 57).

PLAN.json, an Agent Plan, a Plan Contract, a model's reply, MCP ``validate``/``submit`` text
and the JSON values of the markdown plan format are all read here, by PLAN.yml's rules
rather than Python's ``json`` defaults:

- an object that names a member twice is refused at its location (RFC 8259 leaves the
  meaning to the reader, so ``"requires_approval": true, "requires_approval": false`` is a
  gate to a reviewer and to a first-wins reader, and no gate to a last-wins one); two
  names one in NFC (``"caf\\u00e9"`` and ``"cafe\\u0301"``, alike in every diff) are one
  member named twice (round 122);
- a number is read as written and refused when no double holds it exactly
  (``9007199254740993.0``, ``1e-400``), with PLAN.yml's own rule and message
  (:class:`~controller.plan.yamlio.InexactFloat`); TOON numbers go through the same hook.

Reading never raises for these: the value is returned with its problems, so that every
problem of a source is reported at once, each at its location.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from controller.errors import Problem
from controller.plan.hashing import exact_double
from controller.plan.refs import format_path
from controller.plan.yamlio import ESCAPED_SYNTAX_REMEDY, InexactFloat, escaped_syntax

Loc = tuple[str | int, ...]
REPEATED_REMEDY = "say each field once: which of the values is meant is not clear"
INEXACT_REMEDY = "quote the number to make it a string, or write it with fewer digits"
NONFINITE_REMEDY = "write a finite number, or quote it to make it a string"


def number(text: str) -> float:
    """A JSON/TOON number with a fraction or exponent, kept with its text when no double
    holds it exactly or it is not finite (``1e400``; ``NaN`` and ``Infinity`` through
    :func:`read`'s ``parse_constant``): refused later, at its location (round 113,
    ``nonfinite-number-unlocated``: they were refused with Python's words and no place)."""
    value = float(text)
    if not math.isfinite(value) or not exact_double(text, value):
        return InexactFloat(value, text)
    return value


@dataclass
class JsonRead:
    """A JSON text read strictly: its value, where it ended, and what was said twice."""

    value: Any
    end: int
    #: id() of each object that named a member twice -> the names said twice
    repeated: dict[int, list[str]] = field(default_factory=dict)
    #: the values said second, kept alive so that no id() above is reused
    dropped: list[Any] = field(default_factory=list)
    #: (the string, the escape) of each string whose reference is spelled with an escape
    escaped: list[tuple[str, str]] = field(default_factory=list)

    def problems(self, base: Loc = (), line: int | None = None) -> list[Problem]:
        """Every member said twice, every inexact number and every reference written with
        an escape, located under ``base``."""
        found = list(value_problems(self.value, base, line, self.repeated))
        return found + escaped_problems(self.value, self.escaped, base, line)


def read(text: str, *, whole: bool = True) -> JsonRead:
    """Read the JSON value at the start of ``text`` (all of it when ``whole``); raises
    :class:`json.JSONDecodeError` as ``json`` does for text that is not JSON."""
    repeated: dict[int, list[str]] = {}
    dropped: list[Any] = []

    def members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name, item in pairs:
            if name in found:
                repeated.setdefault(id(found), []).append(name)
                dropped.append(item)
                continue  # the first kept; the source is refused anyway
            found[name] = item
        return found

    decoder = json.JSONDecoder(object_pairs_hook=members, parse_float=number, parse_constant=number)
    if whole:
        value = decoder.decode(text)
        end = len(text)
    else:
        value, end = decoder.raw_decode(text)
    return JsonRead(value, end, repeated, dropped, escaped_strings(text[:end]))


#: A quoted string as written in JSON (or TOON): in JSON text quotes open and close strings
#: only, so reading these left to right finds every string, key or value.
_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"', re.S)


def escaped_strings(text: str) -> list[tuple[str, str]]:
    """(the string, the escape) for each quoted string of ``text`` whose reference is
    spelled with an escape (:func:`~controller.plan.yamlio.escaped_syntax`)."""
    if "\\" not in text:
        return []
    found = []
    for match in _QUOTED.finditer(text):
        raw = match.group(0)
        escape = escaped_syntax(raw) if "\\" in raw else None
        if escape is not None:
            try:
                spelled = json.loads(raw)
            except ValueError:
                spelled = raw[1:-1]
            found.append((spelled, escape))
    return found


def escaped_problems(
    value: Any, escaped: list[tuple[str, str]], base: Loc = (), line: int | None = None
) -> list[Problem]:
    """E_REF_INVALID for each string of ``escaped``, at the first place ``value`` holds it
    (a key's place for a key)."""
    problems = []
    for spelled, escape in escaped:
        where = _place_of(value, spelled, base)
        problems.append(
            Problem(
                "E_REF_INVALID",
                f"the reference in {spelled!r} is written with the escape {escape} for one of "
                "its characters",
                format_path(where),
                line,
                ESCAPED_SYNTAX_REMEDY,
            )
        )
    return problems


def _place_of(value: Any, text: str, base: Loc) -> Loc:
    stack: list[tuple[Any, Loc]] = [(value, base)]
    while stack:
        item, where = stack.pop(0)
        if item == text and isinstance(item, str):
            return where
        if isinstance(item, dict):
            for key, child in item.items():
                if key == text:
                    return (*where, key)
                stack.append((child, (*where, key)))
        elif isinstance(item, list):
            stack.extend((child, (*where, i)) for i, child in enumerate(item))
    return base


def value_problems(
    value: Any, loc: Loc, line: int | None = None, repeated: dict[int, list[str]] | None = None
) -> Iterator[Problem]:
    """Inexact numbers (and, with ``repeated`` from :func:`read`, members said twice) in
    ``value``, each at its location."""
    stack: list[tuple[Any, Loc]] = [(value, loc)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, InexactFloat) and not math.isfinite(item):
            yield Problem(
                "E_SCHEMA_INVALID",
                f"the number {item.written} is not finite: JSON data holds no NaN or "
                "infinity, and no tool could be given it",
                format_path(where),
                line,
                NONFINITE_REMEDY,
            )
        elif isinstance(item, InexactFloat):
            yield Problem(
                "E_SCHEMA_INVALID", item.refusal(), format_path(where), line, INEXACT_REMEDY
            )
        elif isinstance(item, dict):
            for name in (repeated or {}).get(id(item), []):
                yield _twice((*where, name), line)
            for name, first in nfc_twins(item):
                yield _twice((*where, name), line, first)
            stack.extend((child, (*where, key)) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((child, (*where, i)) for i, child in reversed(list(enumerate(item))))


def nfc_twins(mapping: dict[Any, Any]) -> Iterator[tuple[str, str]]:
    """(name, the name said first) for each key of ``mapping`` equal to an earlier one in
    NFC (``caf\\u00e9`` and ``cafe\\u0301``; U+212A KELVIN SIGN and ``K``): one name said
    twice, alike in every review of the source, two keys to a tool (round 122)."""
    if all(type(key) is not str or key.isascii() for key in mapping):
        return
    seen: dict[str, str] = {}
    for key in mapping:
        if type(key) is str:
            first = seen.setdefault(unicodedata.normalize("NFC", key), key)
            if first != key:
                yield key, first


def _twice(where: Loc, line: int | None, first: str | None = None) -> Problem:
    name = where[-1]
    same = "" if first is None else f" (as {first!a}: the two are one name in NFC)"
    return Problem(
        "E_SCHEMA_INVALID",
        f"`{name}` is said twice in one object{same}; a source names each field once",
        format_path(where),
        line,
        REPEATED_REMEDY,
    )
