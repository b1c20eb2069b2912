"""PLAN.yml text for converted data: block YAML a reviewer can read, every string quoted.

Written by hand rather than by a YAML dumper so that the output is the same on every
machine and needs no ruamel here: strings are JSON double-quoted (a subset of YAML's
double-quoted style), with every character that could hide or reorder text escaped, so no
value can turn into a timestamp, a boolean or another key. The caller checks that reading
the text back gives exactly the data.
"""

from __future__ import annotations

import json
import re
from typing import Any

from controller.display import escape_hidden

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}
INLINE_WIDTH = 72


def to_yaml(data: dict[str, Any], header: str = "") -> str:
    lines = [f"# {line}" for line in header.splitlines()] if header else []
    for key, value in data.items():
        if lines and not lines[-1].startswith("#"):
            lines.append("")
        _entry(lines, _key(key), value, 0)
    return "\n".join(lines) + "\n"


def _entry(lines: list[str], key: str, value: Any, indent: int) -> None:
    pad = " " * indent
    inline = _inline(value)
    if inline is not None:
        lines.append(f"{pad}{key}: {inline}")
    elif isinstance(value, dict):
        lines.append(f"{pad}{key}:")
        for k, v in value.items():
            _entry(lines, _key(k), v, indent + 2)
    else:
        lines.append(f"{pad}{key}:")
        _items(lines, value, indent + 2)


def _items(lines: list[str], values: list[Any], indent: int) -> None:
    pad = " " * indent
    for value in values:
        inline = _inline(value)
        if inline is not None:
            lines.append(f"{pad}- {inline}")
        elif isinstance(value, dict):
            first = len(lines)
            for k, v in value.items():
                _entry(lines, _key(k), v, indent + 2)
            lines[first] = f"{pad}- {lines[first][indent + 2 :]}"
        else:
            lines.append(f"{pad}-")
            _items(lines, value, indent + 2)


def _inline(value: Any) -> str | None:
    """The value on one line: a scalar, an empty collection, or a short list of scalars."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        if all(not isinstance(v, dict | list) for v in value.values()):
            text = "{" + ", ".join(f"{_key(k)}: {scalar(v)}" for k, v in value.items()) + "}"
            return text if len(text) <= INLINE_WIDTH else None
        return None
    if isinstance(value, list):
        if not value:
            return "[]"
        if all(not isinstance(v, dict | list) for v in value):
            text = "[" + ", ".join(scalar(v) for v in value) + "]"
            return text if len(text) <= INLINE_WIDTH else None
        return None
    return scalar(value)


def scalar(value: Any) -> str:
    if isinstance(value, str):
        return quote(value)
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value, allow_nan=False)
    raise TypeError(f"{type(value).__name__} is not JSON data")


def quote(text: str) -> str:
    """A YAML double-quoted scalar whose hidden characters, and those NFC would change, are
    escaped (round 107: keys ``"\\u00e9"`` and ``"e\\u0301"`` were written as two ``é``)."""
    return escape_hidden(json.dumps(text, ensure_ascii=False), _escape)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _key(key: Any) -> str:
    text = str(key)
    if _PLAIN_KEY.match(text) and text.lower() not in _RESERVED:
        return text
    return quote(text)
