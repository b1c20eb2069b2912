"""Plan- and git-supplied text made safe to show a person, in a terminal or in markdown.

A plan's author (often an agent) writes the plan's name, task, ``why``, params and folder
name, and anyone can write commit subjects, trailers and git identities. None of it may
act on the reader's terminal or renderer: ANSI escape sequences, carriage returns,
zero-width, tag and bidi-override characters (Trojan Source) could otherwise hide, rewrite
or reorder what an approver reads. Every human-facing output (``show``, ``status``,
``audit``, error and validation messages, the console log, EXECUTION_LOG.md) passes such
text through :func:`visible`. JSON written with ``ensure_ascii`` (the default) needs
nothing, its escaping already keeps them inert; JSON written with ``ensure_ascii=False``
passes through :func:`visible_json`.
"""

from __future__ import annotations

import re

# Every control (Cc), format (Cf), line/paragraph separator (Zl/Zp), surrogate (Cs) and
# private-use (Co) character of Unicode 14, plus the blocks around them kept whole for
# characters assigned later (U+2065, the Egyptian format controls with the blanks and
# modifiers Unicode 15 put after them (to U+13455), the tag block). Format
# characters hide text (zero-width, soft hyphen, tags) or reorder it (bidi, Trojan Source).
# Also the invisible characters of other categories that attacks use as blanks or to carry
# hidden data: the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the combining grapheme
# joiner (U+034F), Khmer's inherent vowels (U+17B4, U+17B5), the Mongolian free variation
# selectors (U+180B-U+180F), the variation selectors (U+FE00-U+FE0F, U+E0100-U+E01EF): with
# the format characters, every Default_Ignorable_Code_Point of Unicode 15 (U+FFF0-U+FFF8 and
# U+E0000-U+E0FFF kept whole); the Braille blank (U+2800), a blank of category So; and every
# space separator (Zs) but the plain space (U+00A0, U+1680, U+2000-U+200A, U+202F, U+205F,
# U+3000): it reads as a space but is another string to every tool (round 46).
HIDDEN = re.compile(
    "[\x00-\x1f\x7f-\xa0\xad\u034f\u1680\u2000-\u200a\u202f\u205f\u3000\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\uffa0"
    "\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u2800\ufe00-\ufe0f"
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f\ud800-\uf8ff\ufeff\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U00013455\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff\U000f0000-\U0010ffff]"
)


def visible(text: str) -> str:
    """``text`` with every hidden character shown as its Python escape (``\\x1b``, ``\\u202e``)."""
    return HIDDEN.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def visible_lines(text: str) -> str:
    """:func:`visible` line by line, for text made of lines (a traceback, a list of problems):
    its line breaks are kept, every other hidden character escaped."""
    return "\n".join(visible(line) for line in text.split("\n"))


def visible_json(text: str) -> str:
    """JSON text as ``json.dumps(..., ensure_ascii=False)`` wrote it, hidden characters as
    ``\\uXXXX`` escapes: still valid JSON that decodes to the same value.

    ``json.dumps`` already escapes C0 controls inside strings, so a raw newline can only be
    the indentation's; it is kept.
    """
    return HIDDEN.sub(
        lambda m: m.group(0) if m.group(0) == "\n" else _json_escape(m.group(0)), text
    )


def _json_escape(char: str) -> str:
    """``\\uXXXX``, as a UTF-16 surrogate pair above U+FFFF (JSON has no longer escape)."""
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
#: A URL's whole userinfo (round 41: its *user* part alone is a credential where a service
#: puts the token there, ``https://TOKEN@github.com/o/r.git``, a Sentry DSN's key).
_USERINFO = re.compile(r"^[^/?#@]*@")
_QUERY_VALUE = re.compile(r"(^|&)([^=&]*)=[^&]*")


#: Words that name a credential only as a whole word of a name (a part of it): inside a
#: longer word they are something else (``bypass``, ``PATH``, ``spinner``, ``seedling``).
_CREDENTIAL_WORDS = ("passphrase", "pass", "pat", "jwt", "pin", "seed", "mnemonic", "totp", "otp")

#: A name that says its value is a credential (an env variable, a header, an option, a
#: query key): ``API_KEY``, ``Authorization``, ``--token``, ``access_token``, ...
CREDENTIAL_NAME = re.compile(
    r"(?i)key|token|secret|passw|pwd|auth|credential|cookie|session|signature|bearer"
    # a word of the name (parts split at ``_``, ``-``, ``.``, digits or a camel-case hump):
    # round 40 ``PASS``, ``PASSPHRASE`` (``DB_PASS``, ``smtpPass``); round 41 ``PAT``,
    # ``JWT``, ``PIN``, ``SEED``, ``MNEMONIC``, ``OTP``, ``TOTP`` (``GH_PAT``, ``TOTP_SEED``);
    # as words only, so that ``PATH``, ``PATCH``, ``spinner`` or ``mapping`` are no credentials
    rf"|(?<![a-z])(?:{'|'.join(_CREDENTIAL_WORDS)})(?![a-z])"
    rf"|(?-i:(?<=[a-z0-9])(?:{'|'.join(w.capitalize() for w in _CREDENTIAL_WORDS)})(?![a-z]))"
    rf"|(?-i:(?<=[a-z0-9])(?:{'|'.join(w.upper() for w in _CREDENTIAL_WORDS)})(?![A-Za-z]))"
)


def _masked_pair(match: re.Match[str]) -> str:
    if CREDENTIAL_NAME.search(match.group(2)):
        return f"{match.group(1)}{match.group(2)}=***"
    return match.group(0)


def masked_url(text: str) -> str:
    """``text`` with the credentials the URLs in it carry written ``***``: the whole userinfo
    (``***@host``: a password, and a user part, where GitHub and Sentry put a token; round
    41) and the value of a query key named like one (``?api_key=***``;
    ``?dry_run=true`` stays: a reviewer must see it). Catalog and remote URLs are written
    into errors, ``show`` and logs (rounds 25 and 26)."""
    return _URL.sub(_masked_one, text)


def _masked_one(match: re.Match[str]) -> str:
    url = match.group(0)
    scheme, _, rest = url.partition("://")
    rest = _USERINFO.sub("***@", rest)
    head, mark, query = rest.partition("?")
    if mark:
        query, hash_mark, fragment = query.partition("#")
        query = _QUERY_VALUE.sub(_masked_pair, query)
        rest = f"{head}?{query}{hash_mark}{fragment}"
    return f"{scheme}://{rest}"


#: What the redactor writes for a secret (controller.execution.secrets): a cut never splits it.
_MASK = "***"


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters for a message, the cut marked with ``…`` (the
    redactor hides a secret's start right before that mark: see controller.execution.secrets).
    Text already redacted is never cut inside a ``***``: the cut then follows it (and is
    marked all the same: the text was over ``limit``)."""
    if len(text) <= limit:
        return text
    for inside in range(
        1, min(len(_MASK), limit + 1)
    ):  # the cut leaves ``inside`` stars of a mask before it
        if text[limit - inside : limit - inside + len(_MASK)] == _MASK:
            limit += len(_MASK) - inside
            break
    return text[:limit] + "\u2026"
