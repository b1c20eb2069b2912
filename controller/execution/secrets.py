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
URL-encoded (once or twice, either hex case), as HTML character references, and whole in
base64 or hex. A stream cut at its size limit (:data:`CUT_NOTE`) or a message shortened with
``…``/``...`` right inside a secret has that secret's start hidden too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
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


def _written_forms(value: str) -> set[str]:
    """A value as a tool may print it whole: raw, JSON-escaped, URL-encoded, base64, hex."""
    from urllib.parse import quote, quote_plus

    raw = value.encode("utf-8")
    forms = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        quote(value, safe=""),
        quote_plus(value, safe=""),
    }
    if len(raw) >= 6:  # shorter: its base64 or hex would mask common words
        forms.update({raw.hex(), raw.hex().upper(), *_base64_forms(raw)})
    return {form for form in forms if form}


def _base64_forms(raw: bytes) -> set[str]:
    """The part of the base64 (standard and URL-safe) of ``raw`` that does not depend on what
    precedes it, at each of the three alignments a longer encoded text can give it."""
    import base64

    forms = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii").rstrip("=")
        start = (shift * 4 + 2) // 3  # characters that also encode the padding bytes
        end = len(encoded) - (1 if (shift + len(raw)) % 3 else 0)  # a partial last group
        body = encoded[start:end]
        if len(body) >= 6:
            forms.update({body, body.replace("+", "-").replace("/", "_")})
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


def _encoded_pattern(values: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern matching any secret in any per-character encoding, longest first."""
    ordered = sorted(values, key=len, reverse=True)
    if not ordered:
        return None
    parts = ["".join(_char_pattern(c) for c in v) for v in ordered]
    # a leading character set lets the regex engine skip ahead to where a match can start
    first = "".join(sorted({re.escape(v[0]) for v in ordered} | {"\\\\", "%", "&", "\\+"}))
    return re.compile(f"(?=[{first}])(?:{'|'.join(parts)})")


class Redactor:
    """Replaces secret values with ``***`` in text and JSON data, in every encoding."""

    def __init__(self, values: Iterable[str]) -> None:
        secrets = {v for v in values if isinstance(v, str) and v}
        # A multi-line secret (a PEM key) may be printed or quoted line by line (an error that
        # quotes a tool's last stderr line): each line of 4 characters or more is hidden too.
        secrets |= {line for v in secrets for line in _LINES.split(v) if len(line) >= 4}
        unique = {f for v in secrets for f in _written_forms(v)}
        self._values = sorted(unique, key=len, reverse=True)
        self._secrets = sorted(secrets, key=len, reverse=True)
        self._pattern = _encoded_pattern(self._secrets)

    def __bool__(self) -> bool:
        return bool(self._values)

    def text(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        if self._pattern is not None and any(c in text for c in _ENCODING_STARTS):
            text = self._pattern.sub(MASK, text)
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
        for value in self._values:
            for size in range(min(len(value) - 1, len(head)), minimum - 1, -1):
                if head.endswith(value[:size]):
                    return size
        return 0

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
