"""Secret values for ``$<secrets.NAME>`` and their redaction from everything written (SPEC §6).

Secrets come from the controller's environment (``<secrets.env_prefix>NAME``, by default
``PLANGATE_SECRET_NAME``) or from the operator's secrets file (``secrets.file``: a YAML or
JSON mapping ``NAME: value``), never from the plans repo. The environment wins over the file.

Every configured secret value is redacted, not only the ones a plan used: a tool may echo a
secret it received some other way, and the controller's commit messages must be clean too.
Redaction replaces each occurrence of a value with ``***`` in text and inside JSON data
(strings, mapping keys, and numbers whose JSON text contains a secret), longest value first so
that a secret containing another is hidden whole. Empty values are ignored. A value is also
hidden in every encoding a tool or an error message may give it: escaped inside JSON text or
a Python repr (``\\u`` escapes of any character, escaped quotes, escapes of escapes),
URL-encoded (once or twice, either hex case), as HTML character references, and with NULs
between its characters (UTF-16 or UTF-32 text read as UTF-8, raw or escaped). Whole, it is
hidden in the block encodings of its bytes (UTF-8, and UTF-16 in either byte order): hex,
base64 (standard and URL-safe) and base32 (either case), at every alignment a longer encoded
text can give it (:func:`_block_forms`). A stream cut at its size limit (:data:`CUT_NOTE`) or
a message shortened with ``…``/``...`` right inside a secret has that secret's start hidden
too.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.errors import ConfigInvalid, RefUnavailable

if TYPE_CHECKING:
    from controller.settings import Config, SecretsSettings

MASK = "***"


class SecretStore:
    """The secrets configured for one controller, read when the store is built."""

    def __init__(self, settings: SecretsSettings, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.env_prefix = settings.env_prefix
        self._values: dict[str, str] = _read_file(settings.file) if settings.file else {}
        for key, value in env.items():
            if key.startswith(settings.env_prefix) and len(key) > len(settings.env_prefix):
                self._values[key[len(settings.env_prefix) :]] = value
        self.redactor = Redactor(self._values.values())

    def get(self, name: str) -> str:
        """The value of secret ``name``; E_REF_UNAVAILABLE when it is not configured."""
        if name not in self._values:
            raise RefUnavailable(
                f"$<secrets.{name}>: secret {name!r} is not set "
                f"(environment {self.env_prefix}{name} or the secrets file)",
                remedy=f"set {self.env_prefix}{name} in the controller's environment",
            )
        return self._values[name]

    def env_names(self, environ: Mapping[str, str]) -> list[str]:
        """Variables of ``environ`` that hold secrets (kept out of tool processes)."""
        return [key for key in environ if key.startswith(self.env_prefix)]


def _read_file(path: Path) -> dict[str, str]:
    from controller.plan import yamlio

    try:
        data = yamlio.read_yaml(path.read_text(encoding="utf-8"), str(path)).data
    except OSError as exc:
        raise ConfigInvalid(f"secrets.file {path}: {exc.strerror}") from None
    except Exception as exc:
        raise ConfigInvalid(f"secrets.file {path}: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigInvalid(f"secrets.file {path}: must be a mapping NAME: value")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in data.items()}


#: How a tool notes that it cut a captured stream (see :func:`controller.execution.tools.cut`).
CUT_NOTE = "\n[plangate: output cut at "
#: Marks of a cut made by shortening text for a message: a secret's start right before one
#: is hidden too (at least this many characters of it, so "Loading..." stays as written).
CUT_MARKS = ("\u2026", "...")
MIN_CUT_PREFIX = 3
_LINES = re.compile("\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
#: Characters that start an encoded character (JSON/Python escape, URL, HTML, form space):
#: text without any of them holds a secret only as written.
_ENCODING_STARTS = ("\\", "%", "&", "+")
#: A NUL, raw or in an encoding :func:`_char_pattern` knows: text with one may hold a secret
#: with NULs between its characters (UTF-16 or UTF-32 text read as UTF-8).
_NUL_HINT = re.compile(r"\x00|\\(?:u0000|x00|U00000000)|%(?:25)*00|&#0+;|&#x0+;", re.IGNORECASE)
#: Byte encodings of a secret's text a tool may hand back before a block encoding (UTF-16:
#: Windows APIs, PowerShell's -EncodedCommand).
_BYTE_ENCODINGS = ("utf-8", "utf-16-le", "utf-16-be")
#: Shortest part of an encoded form that is hidden: shorter ones would mask common words.
_MIN_ENCODED = 6


def _written_forms(value: str, *, whole: bool = True) -> set[str]:
    """A value as a tool may print it whole: raw, JSON-escaped, URL-encoded, and in the
    block encodings of its bytes (of its UTF-8 only for a line of a multi-line secret)."""
    from urllib.parse import quote, quote_plus

    forms = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        quote(value, safe=""),
        quote_plus(value, safe=""),
    }
    if len(value.encode("utf-8")) >= _MIN_ENCODED:  # shorter: its encodings match by chance
        for name in _BYTE_ENCODINGS if whole else _BYTE_ENCODINGS[:1]:
            forms.update(_block_forms(value.encode(name)))
    return {form for form in forms if form}


def _block_forms(raw: bytes) -> set[str]:
    """Hex, base64 (standard and URL-safe) and base32 (either case) of ``raw``: the part of
    each that does not depend on what precedes or follows it, at every alignment."""
    import base64

    forms = {raw.hex(), raw.hex().upper()}
    for body in _aligned(raw, base64.b64encode, 3, 4):
        forms.update({body, body.replace("+", "-").replace("/", "_")})
    for body in _aligned(raw, base64.b32encode, 5, 8):
        forms.update({body, body.lower()})
    return {form for form in forms if len(form) >= _MIN_ENCODED}


def _aligned(raw: bytes, encode: Callable[[bytes], bytes], size: int, chars: int) -> set[str]:
    """For a bit-packing encoding (``size`` bytes -> ``chars`` characters): the characters
    that encode bits of ``raw`` alone, after 0 .. size-1 bytes of something else."""
    bits = size * 8 // chars  # bits per character
    forms = set()
    for shift in range(size):
        encoded = encode(b"\0" * shift + raw).decode("ascii").rstrip("=")
        start = -(-shift * 8 // bits)  # characters that also encode the bytes before
        end = (shift + len(raw)) * 8 // bits  # a last character shared with the bytes after
        forms.add(encoded[start:end])
    return forms


def _char_pattern(char: str) -> str:
    """Every way one character of a secret may be written inside text a tool or an error
    produced: as is, escaped (JSON ``\\uXXXX`` with surrogates, ``\\xXX``, ``\\UXXXXXXXX``,
    ``\\n``, a backslash before a quote, any number of backslashes for escapes of escapes),
    URL-encoded (each UTF-8 byte, ``%25`` for double encoding, ``+`` for a space) or as an HTML
    character reference."""
    code = ord(char)
    escaped = [re.escape(char)]
    if code <= 0xFFFF:
        escaped.append(f"u(?i:{code:04x})")
    else:
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        escaped.append(f"u(?i:{high:04x})\\\\*u(?i:{low:04x})")
        escaped.append(f"U(?i:{code:08x})")
    if code <= 0xFF:
        escaped.append(f"x(?i:{code:02x})")
    short = {"\n": "n", "\r": "r", "\t": "t", "\b": "b", "\f": "f", "/": "/"}
    if char in short:
        escaped.append(short[char])
    alternatives = [f"\\\\*(?:{'|'.join(escaped)})"]
    alternatives.append("".join(f"%(?:25)*(?i:{b:02x})" for b in char.encode("utf-8")))
    alternatives.append(f"&#0*{code};|&#[xX]0*(?i:{code:x});")
    if char == " ":
        alternatives.append("\\+")
    return "(?:" + "|".join(alternatives) + ")"


def _wide_char_pattern(char: str) -> str:
    """One character of UTF-16/32 text read as UTF-8: an ASCII one as itself (in any
    encoding), any other as itself or as the U+FFFD its undecodable bytes became."""
    if char.isascii():
        return _char_pattern(char)
    return f"(?:{_char_pattern(char)}|(?:{_char_pattern(chr(0xFFFD))}){{1,4}})"


def _encoded_pattern(values: Iterable[str], *, interleaved: bool = False) -> re.Pattern[str] | None:
    """One pattern matching any secret in any per-character encoding, longest first;
    ``interleaved``: with up to three NULs (raw or encoded) between its characters too."""
    ordered = sorted(values, key=len, reverse=True)
    if not ordered:
        return None
    between = f"(?:{_char_pattern(chr(0))}){{0,3}}" if interleaved else ""
    char = _wide_char_pattern if interleaved else _char_pattern
    parts = [between.join(char(c) for c in v) for v in ordered]
    # a leading character set lets the regex engine skip ahead to where a match can start
    first = "".join(sorted({re.escape(v[0]) for v in ordered} | {"\\\\", "%", "&", "\\+"}))
    return re.compile(f"(?=[{first}])(?:{'|'.join(parts)})")


class Redactor:
    """Replaces secret values with ``***`` in text and JSON data, in every encoding."""

    def __init__(self, values: Iterable[str]) -> None:
        secrets = {v for v in values if isinstance(v, str) and v}
        # A multi-line secret (a PEM key) may be printed or quoted line by line (an error that
        # quotes a tool's last stderr line): each line of 4 characters or more is hidden too.
        lines = {line for v in secrets for line in _LINES.split(v) if len(line) >= 4} - secrets
        unique = {f for v in secrets for f in _written_forms(v)}
        unique |= {f for v in lines for f in _written_forms(v, whole=False)}
        secrets |= lines
        self._values = sorted(unique, key=len, reverse=True)
        self._secrets = sorted(secrets, key=len, reverse=True)
        self._pattern = _encoded_pattern(self._secrets)

    @functools.cached_property
    def _interleaved(self) -> re.Pattern[str]:
        """Built on first need: the secrets with NULs between their characters."""
        pattern = _encoded_pattern(self._secrets, interleaved=True)
        assert pattern is not None
        return pattern

    def __bool__(self) -> bool:
        return bool(self._values)

    def text(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        if self._pattern is not None and any(c in text for c in _ENCODING_STARTS):
            text = self._pattern.sub(MASK, text)
        if self._pattern is not None and _NUL_HINT.search(text):
            text = self._interleaved.sub(MASK, text)
        if CUT_NOTE in text:
            text = self._cut_tail(text)
        if any(mark in text for mark in CUT_MARKS):
            text = self._cut_marks(text)
        return text

    def _cut_tail(self, text: str) -> str:
        """Hide the start of a secret that a stream cut at its limit ended with."""
        at = text.rfind(CUT_NOTE)
        head = text[:at].rstrip("\ufffd")  # a character cut in half decodes as U+FFFD
        size = self._partial_at_end(head, 1)
        return head[:-size] + MASK + text[at:] if size else text

    def _cut_marks(self, text: str) -> str:
        """Hide the start of a secret that a message shortened with ``…`` or ``...`` ends at
        the cut with (cut first, redacted after: the whole secret was not there to find)."""
        pattern = "|".join(re.escape(mark) for mark in CUT_MARKS)
        pieces = re.split(f"({pattern})", text)
        for index in range(0, len(pieces) - 1, 2):
            size = self._partial_at_end(pieces[index], MIN_CUT_PREFIX)
            if size:
                pieces[index] = pieces[index][:-size] + MASK
        return "".join(pieces)

    def _partial_at_end(self, head: str, minimum: int) -> int:
        """Length of the longest start of a secret (in any whole form) that ``head`` ends with."""
        longest = 0
        last = head[-1:]
        for value in self._values if last else ():
            # only prefixes that end with head's last character can match: jump between them
            end = value.rfind(last, 0, min(len(value) - 1, len(head)))
            while end >= max(minimum, longest + 1) - 1:
                if head.endswith(value[: end + 1]):
                    longest = end + 1
                    break
                end = value.rfind(last, 0, end)
        return longest

    def data(self, value: Any) -> Any:
        """A copy of JSON data with every secret hidden (the input is not changed)."""
        if not self._values:
            return value
        return self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self._walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        if isinstance(value, int | float) and not isinstance(value, bool):
            shown = json.dumps(value)
            return MASK if self.text(shown) != shown else value
        return value


def redactor_for(config: Config) -> Redactor:
    """The redactor of every secret configured for ``config`` (e.g. for commit messages)."""
    return SecretStore(config.secrets).redactor


def redact_text(config: Config, text: str) -> str:
    """``text`` with every configured secret value replaced by ``***``."""
    return redactor_for(config).text(text)
