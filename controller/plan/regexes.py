"""The regular-expression dialects plangate accepts, each translated into the ``regex`` engine
with its own meaning (round 55: both were read as Python, so ``^``/``$`` anchored and ``$``
matched before a final newline).

- **I-Regexp** (RFC 9485): JSONPath ``match()``/``search()`` in filters and ``expect``'s
  ``matches``. ``^`` and ``$`` are ordinary characters, ``.`` is any character but LF and
  CR, no ``\\d``-style escapes, flags or back-references (:func:`is_iregexp` refuses those).
  ``match()`` is anchored at both ends (``fullmatch``), ``search()`` is not.
- **ECMA-262** (JSON Schema ``pattern``, 2020-12 §6.3.3), without flags and not in ``u``
  mode: ``$`` is the end of the string, ``\\d`` is ``[0-9]``, ``\\w`` ``[A-Za-z0-9_]``,
  ``\\s`` the ECMA white space and line terminators, ``.`` anything but a line terminator,
  and strings are UTF-16 code units (an astral character is two). Constructs whose meaning
  differs and that have no translation here are refused (:class:`NotECMA`); the catalog is
  checked with :func:`ecma_problem` when the config is read.

The jsonpath-rfc9535 library's own ``map_re`` only maps ``.``: it leaves ``^``/``$`` to
Python. Callers pass their own timeout (:mod:`controller.plan.budget`).
"""

from __future__ import annotations

import functools
import re
from typing import Any

#: ``.`` in I-Regexp: any character but LF and CR (a surrogate pair, should one arrive, is
#: one character, as the library maps it).
_IDOT = r"(?:(?![\r\n])\P{Cs}|\p{Cs}\p{Cs})"

_WORD = "A-Za-z0-9_"
_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_LINE_END = "\\n\\r\\u2028\\u2029"
_WORD_AT = f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
_NOT_WORD_AT = f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))"
#: Escapes outside a class, and inside one (where ``\\b`` is a backspace).
_ECMA_CLASS_ESC = {"d": "0-9", "w": _WORD, "s": _SPACE}
_ECMA_ESC = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
    "b": _WORD_AT,
    "B": _NOT_WORD_AT,
}
_CONTROL_ESC = {"f": "\\x0c", "n": "\\n", "r": "\\r", "t": "\\t", "v": "\\x0b"}
_GROUPS = ("(?:", "(?=", "(?!", "(?<=", "(?<!")
_HEX = frozenset("0123456789abcdefABCDEF")
_BRACES = re.compile(r"\{[0-9]+(?:,[0-9]*)?\}", re.ASCII)


class NotECMA(ValueError):
    """A ``pattern`` that is no ECMA-262 regular expression plangate can run as written."""


# --- I-Regexp (RFC 9485) ------------------------------------------------------------------


def is_iregexp(pattern: object) -> bool:
    """Whether ``pattern`` is an I-Regexp (RFC 9485 §3)."""
    from iregexp_check import check

    return isinstance(pattern, str) and bool(check(pattern))


@functools.lru_cache(maxsize=512)
def iregexp(pattern: str) -> Any:
    """The compiled ``regex`` for an I-Regexp (checked by the caller with :func:`is_iregexp`):
    ``^``/``$`` literal, ``.`` any character but LF and CR; match with ``fullmatch`` for
    ``match()``/``matches`` and ``search`` for ``search()``, never with anchors."""
    import regex

    # VERSION0: in VERSION1 "&&" or "--" inside a class are set operations, in RFC 9485 text
    return regex.compile(translate_iregexp(pattern), regex.VERSION0)


def translate_iregexp(pattern: str) -> str:
    """``pattern`` (an I-Regexp) in the ``regex`` engine's syntax."""
    out: list[str] = []
    escaped = in_class = False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\":
            out.append(ch)
            escaped = True
        elif in_class:
            out.append("\\[" if ch == "[" else ch)
            in_class = ch != "]"
        elif ch == "[":
            out.append(ch)
            in_class = True
        else:
            out.append({".": _IDOT, "^": "\\^", "$": "\\$"}.get(ch, ch))
    return "".join(out)


# --- ECMA-262 (JSON Schema ``pattern``) ---------------------------------------------------


def ecma_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be run as ECMA-262, or ``None``."""
    import regex

    try:
        ecma(pattern)
    except NotECMA as exc:
        return str(exc)
    except regex.error as exc:
        return f"not a valid regular expression: {exc}"
    return None


@functools.lru_cache(maxsize=512)
def ecma(pattern: str) -> Any:
    """The compiled ``regex`` for an ECMA-262 pattern; search the :func:`code_units` of the
    instance with it. Raises :class:`NotECMA` or ``regex.error``."""
    import regex

    return regex.compile(translate_ecma(pattern), regex.VERSION0)


def code_units(text: str) -> str:
    """``text`` as UTF-16 code units (ECMA-262 strings): an astral character becomes its two
    surrogates."""
    if all(ord(ch) <= 0xFFFF for ch in text):
        return text
    out = []
    for ch in text:
        point = ord(ch)
        if point > 0xFFFF:
            point -= 0x10000
            out.append(chr(0xD800 + (point >> 10)) + chr(0xDC00 + (point & 0x3FF)))
        else:
            out.append(ch)
    return "".join(out)


def translate_ecma(pattern: str) -> str:
    """``pattern`` (ECMA-262, no flags) in the ``regex`` engine's syntax."""
    return _EcmaReader(code_units(pattern)).read()


class _EcmaReader:
    """One pass over an ECMA-262 pattern, emitting its ``regex`` equivalent."""

    def __init__(self, pattern: str) -> None:
        self.src = pattern
        self.i = 0
        self.out: list[str] = []
        self.quantifiable = False

    def read(self) -> str:
        while self.i < len(self.src):
            self._step()
        return "".join(self.out)

    def _step(self) -> None:
        ch = self.src[self.i]
        if ch == "\\":
            self._escape()
        elif ch == "[":
            self._klass()
        elif ch == "(":
            self._group()
        elif ch in "*+?{":
            self._quantifier()
        else:
            self.i += 1
            plain = {"$": "\\Z", "^": "\\A", ".": f"[^{_LINE_END}]", "}": "\\}"}
            self.out.append(plain.get(ch, ch if ch in ")|" else _literal(ch)))
            self.quantifiable = ch not in "$^(|"

    def _refuse(self, what: str) -> NotECMA:
        return NotECMA(f"{what} at offset {self.i} of {self.src!r}")

    def _escape(self) -> None:
        self.out.append(self._escaped(in_class=False))
        self.quantifiable = self.src[self.i - 1] not in "bB" or self.src[self.i - 2] != "\\"

    def _escaped(self, in_class: bool) -> str:
        if self.i + 1 >= len(self.src):
            raise self._refuse("a trailing backslash")
        ch = self.src[self.i + 1]
        self.i += 2
        if in_class and ch in _ECMA_CLASS_ESC:
            return _ECMA_CLASS_ESC[ch]
        if in_class and ch == "b":
            return "\\x08"
        if not in_class and ch in _ECMA_ESC:
            return _ECMA_ESC[ch]
        if ch in _CONTROL_ESC:
            return _CONTROL_ESC[ch]
        if ch in "xu":
            return self._hex(ch, 2 if ch == "x" else 4)
        if ch == "0" and not self.src[self.i : self.i + 1].isdigit():
            return "\\x00"
        if ch.isascii() and ch.isalnum():
            self.i -= 2
            raise self._refuse(
                f"\\{ch} (a back-reference, \\c, \\k, \\p or a class escape "
                "inside [...] whose ECMA-262 meaning differs)"
            )
        return _literal(ch)

    def _hex(self, kind: str, width: int) -> str:
        digits = self.src[self.i : self.i + width]
        if len(digits) != width or not set(digits) <= _HEX:
            self.i -= 2
            raise self._refuse(f"\\{kind} without {width} hex digits")
        self.i += width
        return f"\\{kind}{digits}"

    def _klass(self) -> None:
        self.i += 1
        negated = self.src.startswith("^", self.i)
        self.i += negated
        parts: list[str] = []
        while self.i < len(self.src) and self.src[self.i] != "]":
            ch = self.src[self.i]
            if ch == "\\":
                if self.src[self.i + 1 : self.i + 2] in ("D", "W", "S", "B"):
                    raise self._refuse("\\D, \\W, \\S or \\B inside [...]")
                parts.append(self._escaped(in_class=True))
            else:
                parts.append(ch if ch == "-" else _literal(ch))
                self.i += 1
        if self.i >= len(self.src):
            raise self._refuse("an unterminated [")
        self.i += 1
        if not parts:  # ECMA: [] matches nothing, [^] any code unit
            self.out.append("[\\s\\S]" if negated else "(?!)")
        else:
            self.out.append(("[^" if negated else "[") + "".join(parts) + "]")
        self.quantifiable = True

    def _group(self) -> None:
        for opener in _GROUPS:
            if self.src.startswith(opener, self.i):
                self.out.append(opener)
                self.i += len(opener)
                break
        else:
            if self.src.startswith("(?", self.i):
                raise self._refuse(
                    "a (? construct ECMA-262 does not have or plangate "
                    "does not run (named groups, flags)"
                )
            self.out.append("(")
            self.i += 1
        self.quantifiable = False

    def _quantifier(self) -> None:
        ch = self.src[self.i]
        if ch == "{":
            end = self._brace_end()
            if end is None:  # ECMA (Annex B): a { that is no quantifier is itself
                self.out.append("\\{")
                self.i += 1
                self.quantifiable = True
                return
            text, self.i = self.src[self.i : end], end
        else:
            text, self.i = ch, self.i + 1
        if not self.quantifiable:
            raise self._refuse(f"nothing to repeat before {text}")
        if self.src.startswith("?", self.i):
            text += "?"
            self.i += 1
        if self.i < len(self.src) and self.src[self.i] in "*+?":
            raise self._refuse("a quantifier on a quantifier (possessive in Python)")
        self.out.append(text)
        self.quantifiable = False

    def _brace_end(self) -> int | None:
        found = _BRACES.match(self.src, self.i)
        return found.end() if found else None


def _literal(ch: str) -> str:
    """``ch`` as a literal in the ``regex`` engine, wherever it stands."""
    return ch if ch.isalnum() or ch in " _" or ord(ch) > 0x7F else "\\" + ch
