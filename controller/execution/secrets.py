"""Secret values for ``$<secrets.NAME>`` and their redaction from everything written (SPEC §6).

Secrets come from the controller's environment (``<secrets.env_prefix>NAME``, by default
``PLANGATE_SECRET_NAME``) or from the operator's secrets file (``secrets.file``: a YAML or
JSON mapping ``NAME: value``), never from the plans repo. The environment wins over the file.

Every configured secret value is redacted, not only the ones a plan used: a tool may echo a
secret it received some other way, and the controller's commit messages must be clean too.
A run's redactor also hides, to the run's end, every value its journal's seals say it was
given (:func:`held_values`, :meth:`SecretStore.hold`, round 126): a secret rotated or removed
while the run waited at a gate is still handed on from the seal, so it stays a secret.
Redaction replaces each occurrence of a value with ``***`` in text and inside JSON data
(strings, mapping keys, and numbers whose JSON text contains a secret), longest value first so
that a secret containing another is hidden whole; mapping keys that read alike once masked
are kept apart, never merged (round 46: :func:`_apart`). Empty values are ignored. Whole, a value is
hidden as written, JSON-escaped, URL-encoded and in the block encodings of its bytes (UTF-8,
and UTF-16 in either byte order): hex, base64 (standard and URL-safe), base32 (either
case) and uuencode (base64's bits in its alphabet, a blank or a backquote for 0: round 41),
at every alignment a longer encoded text can give it (:func:`_block_forms`). A
value's UTF-8 read as Latin-1 or Windows-1252 (mojibake, ``Ã¤`` for ``ä``) is one of its
values, with all of these forms (:func:`_misread`, round 35).

Encodings that write a value token by token are found by decoding, not by a pattern per
encoding: :meth:`Redactor._encoded_spans` reads the text through a few *views*, each one
linear pass that decodes runs of tokens to the units they stand for and keeps a map from
every unit back to the span of text it came from (:class:`_Stream`); each view's needles
(the secret's characters, UTF-8 bytes, UTF-16 bytes, code units or code points:
:class:`_Needles`) are searched in what it decoded, and the spans they came from are masked.

- The escape view (:func:`_escape_view`): backslash escapes of characters and bytes
  (``\\u`` with surrogate pairs, ``\\u{..}``, ``\\U``, ``\\x``, octal, ``\\N{name}``,
  ``\\n``..., and every escape of a YAML double-quoted scalar: ``\\_``, ``\\N``, ``\\L``,
  ``\\P``, ``\\e``, ``\\a``), any number of backslashes before them or before a
  character kept as written (escaped quotes, escapes of escapes), URL-encoding once or more
  (``%XX``, ``%25XX``), JavaScript's ``%uXXXX``, HTML references (``&#N;``, ``&#xH;``,
  and named ones of one character, ``&amp;``, ``&lt;``: ``html.escape``, round 40),
  ``+`` for a blank. Literal text passes through, so a Python bytes repr
  (``b'Kq..\\xc3\\xa9'``: ASCII runs as written, other bytes escaped) decodes whole. A
  backslash is no unit of this view, in the text or in a needle (escape marks and escaped
  backslashes read alike). With NULs dropped it is also the view of UTF-16 or UTF-32 text
  read as UTF-8 (raw or escaped NULs between characters, a run of U+FFFD for what did not
  decode).
- The UTF-7 view: ``+``, modified base64 of UTF-16, ``-`` (:func:`_utf7_view`).
- The quoted-printable view: ``=XX`` of a byte, soft line breaks (:func:`_qp_view`), over
  the text as written and over what the escape view decoded (quoted-printable inside a JSON
  string, its soft break escaped as ``=\\r\\n``); its needles include the secret with ``_``
  for a blank (an RFC 2047 ``Q`` encoded-word, round 40).
- The code-run view (:func:`_code_run_view`, round 41 generalised the number views): a
  run of character or byte codes in one numeric notation, each a word of its own: hex (bare
  or after ``0x``, ``\\x``, ``%``, ``=``, ``&#x``, ``U+``, ``#``, ``$``), decimal, octal
  (3 digits as ``od -b`` prints them, or after ``0o``) or binary (8 digits, or after
  ``0b``). Two codes are of one run when separators stand between them (blanks,
  ``,;:.-_|/``, quotes, backslashes; at most 16 characters) or the same filler as between
  the run's first two (at most 32 characters, no digit or line end: a wrapper of each
  code, ``CHAR(75)||CHAR(113)``, ``chr(75)+chr(113)``, ``\\x{4b}\\x{71}``). Each run is
  read as code points or code units (hex up to 8 digits, zero-padded UTF-32 too) and, in
  hex, as the bytes its digits write in order (``xxd``'s 2-byte groups, a UTF-32 or any
  other hex dump: a long group maps each byte back to its two digits) and as little-endian
  words of 2, 4 or 8 bytes, each written high byte first (``od -x``; ``od -t x4``, ``-t x8``
  since round 111: :data:`_WORD_SIZES`; a long group maps each word back to its digits).
  Its needles: the secret's UTF-8, UTF-16 and UTF-32
  bytes (either order), code units and code points, of 6 units or more (shorter ones would
  match by chance): ``4b 71``, ``4b:71``, ``0x4b,0x71``, ``[75, 113]``, a Node Buffer's JSON.
- The break view (:func:`_break_view`, round 35): what a line wrapper, a folding emitter
  or a quoting syntax puts between a text's characters, undone: a line end (LF, CR, CRLF)
  with the indentation after it read as nothing (a hard wrap) and, in a second reading, as
  one blank (a YAML or header fold that replaced a blank); a quote written twice (YAML
  single quotes, CSV), as POSIX shell writes it (``'\\''``, ``'"'"'``) or escaped
  (``\\'``) read as the quote. Over the text as written and over what the escape view
  decoded (a wrapped secret inside a JSON string). Only secrets of 6 characters or more
  are searched there (shorter ones would match across the line ends of ordinary text),
  and the whole forms above (base64 wrapped at 64 or 76 characters a line).

- The gapped view (:func:`_gapped_view`, round 40): the letters and digits that stand alone
  (no letter or digit right before or after), each one unit, with the length of the filler
  before each (a markup tag or an HTML reference counts as one character; a letter or digit
  outside them, or over 160 characters, ends a chain): a secret's characters each quoted in
  a list (``['K', 'q', ...]``), each followed by a blank or a comma, each in its own element
  (``<c>K</c><c>q</c>``). Its needle is the secret's letters and digits (6 or more: ordinary
  words never stand letter by letter), matched where each filler is at most 8 characters,
  9 more for each character of the secret that stands between the two
  (:func:`_gapped_needle`). Over the text and over what the escape view decoded.
- The compatibility view (:func:`_compat_view`, round 40's NFC view, NFKC since round 41):
  each character with combining marks after it composed (an NFD text), each other
  character in its compatibility form (fullwidth ``Ｋ`` as ``K``, ligatures), searched for
  the secrets in NFKC; over what the escape view decoded (over the text as written the
  skeleton view reads it, since round 49).
- The case view (round 41): the text (and its compatibility form) lower-cased, searched for
  secrets of 8 characters or more with letters, lower-cased (a secret so long in another
  case is the secret; shorter ones are matched case-exact, a word is not a secret).
- The replacement view (round 40): a run of U+FFFD read as one unit, searched for the secret
  with each run of its non-ASCII characters as one U+FFFD (its Latin-1 bytes read as
  UTF-8), when it keeps 4 other characters and is 6 long or more.
- The terminal view (:func:`_terminal_view`, round 47; a line model since round 48): each
  line as a terminal DRAWS it. A cursor and a row of cells: a printable character is
  written at the cursor and moves it right; BS moves it left, CR to column 0, CSI
  ``n D``/``n C``/``n G`` move it (HPB ``n j``, HPR ``n a`` as ``D``/``C``: round 49),
  ``ESC[K`` erases to the end (``ESC[2K`` the row), ``n P`` deletes, ``n @`` inserts,
  REP ``n b`` draws the last character again, ``ESC 7``/``ESC 8`` save and restore it.
  A character takes the cells a terminal gives it (round 49): two for an East Asian wide
  or fullwidth one (half of it drawn over leaves the other half blank), none for a
  combining mark (it joins the cell before: its span, not a unit). Every other
  escape sequence or control string (CSI, OSC/DCS/SOS/PM/APC up to BEL or ST, nF,
  two-character escapes) of ANY length, and every character
  :data:`controller.display.HIDDEN` holds (C0 and C1 controls, DEL, U+200B, U+00AD, bidi
  controls: what a person cannot see), draws nothing;
  a character struck over (``K\\bK`` bold, ``_\\bK`` underline, ``K\\b_``) keeps the
  cell's first index. Each cell remembers the source characters drawn there: a secret (or a
  whole form of it) found in what was drawn is masked from the smallest index of its
  cells to the largest (a CR redraw that drew its halves in another order: everything
  between). Over the text as written and over what the escape view decoded (``\\u001b[1m``,
  ``\\u0007``; there a quote also starts a row, as ``jq -r`` prints a string alone). Text
  without ESC, BS, CR or another hidden character but a tab and LF never enters it; a row
  wraps at 65,536 cells; blank cells padded to a cursor moved past the text are bounded
  over the whole text, and a line that asks for more is masked whole (fails closed).

- The skeleton view (:func:`_skeleton_view`, round 49): the character-level readings
  composed into ONE reading of what is printed, run over the text as written in place of
  a compatibility, case and terminal view each alone (a secret drawn by a terminal AND
  in another case, a fullwidth letter AND wrapped, marked on some characters, were found
  by none of them). The text as the terminal view draws it (when it holds a character that
  draws otherwise), then every hidden character and combining mark (categories Mn, Me,
  Mc) dropped, each other character in its compatibility decomposition without marks,
  composed again (``é`` as ``e``, ``Ｚ`` as ``Z``, a Hangul syllable as itself); its
  needles are the secrets and their whole forms read the same way (:func:`_skeleton`),
  kept when unchanged, of 6 units or more, or of 4 or more with only characters that draw
  otherwise dropped (``päss`` is not ``pass``), and lower-cased for a secret of 8
  characters or more with letters. The break view and the gapped view also run over it,
  mapped back through it: a secret in another case or fullwidth and hard-wrapped or
  written as a list of its characters, drawn with an escape inside and wrapped. ASCII
  text without a character that draws otherwise is its own skeleton (the break and gapped
  views of the text are only searched again lower-cased); other text costs a scan of its
  distinct characters and one token per character whose form differs; a skeleton read
  character by character (no terminal) replaces the text as written under the break and
  gapped views (it reads all they read there).

A number written with digit grouping (``918,273,645,012``: one separator, ``,_ .'`` or a
narrow blank, groups of three) whose digits hold a secret of 6 digits or more is hidden
whole (round 40). A secret whose text is a number also has, as values of its own, the
canonical forms of that number a tool reading it as one writes (:func:`_number_forms`,
round 60: ``0072946183`` printed ``72946183``), each of 6 characters or more.

In JSON data, a list of 6 or more integers (0 to U+10FFFF) that spells a secret in those
units (a Node ``Buffer``'s ``data``, a byte array) is replaced whole by ``***``.

Every view is linear in the text: its tokens are bounded, a run of backslashes is one token
consumed once (a per-character pattern with ``\\*`` before each character took quadratic
time over a long run of backslashes, round 14), and a needle search is ``str.find``.

A stream cut at its size limit (:data:`CUT_NOTE`) or a message shortened with ``…``/``...``
right inside a secret has that secret's start hidden too: its whole forms' starts (one
character or more before the note, 3 before ``…``/``...``). Before the note, every view
above is read too, by the same code (:meth:`Redactor._cut_start`, round 111: upper case,
``%XX``, ``\\u`` escapes and the secret spaced out kept 11 of 17 characters): the views run
over the text's last characters (:data:`_CUT_SPREAD` per character of the longest
secret) with an :class:`_AtCut` in place of the found spans, and each finder then reports a
needle's start of 3 units or more that ends what its view decoded, followed to the cut by
nothing that view reads (no letter or digit, at most :data:`_CUT_SLACK` characters). The
text is also read as ending before each of the last token starts of its last word (a
``\\u00``, ``%3`` or dump word the cut split reads as other text: :func:`_cut_points`).
Before ``…``/``...`` only the whole forms are read: the controller cuts its own messages
from the redacted whole (below), and a text may hold any number of those marks.

Limits: a secret with fewer than 4 characters besides backslashes is found in escaped forms
only whole; a secret's backslashes are not needed for a match in the escape view (its text
without them, escaped, is hidden too); a secret with a backslash before what reads as an
escape (``a\\0001``) is not found quoted-printable inside a string literal with a soft break;
a blank of a secret right after a line end of the break view is read as indentation (the
wrap is found when the line end stands for that blank, not when it stands for nothing and
the blank is the secret's own); a wrapped or quoted secret of fewer than 6 characters is
not found; a secret whose ``_`` is written ``\\_`` (Markdown) is found when every ``_`` of
it is (the escape view reads ``\\_`` as YAML's U+00A0); a uuencoded secret is found within
one uuencoded line (45 bytes), not across two (each starts with its length character); a
code run is not found across what a dump prints between its lines (``od``'s and ``xxd``'s
offsets, ``xxd``'s text column); the skeleton view reads a secret's marked letters as
their base letters (``é`` as ``e``: a value that differs from a secret only in its marks
is masked where the text holds a character read otherwise), and the line model gives a
character the width Unicode's East Asian Width gives it (a terminal that draws an
ambiguous-width character or an emoji otherwise draws another row); a secret's start
before an output-limit cut is read by the views only within :data:`_CUT_SPREAD` characters
per character of the longest secret (a view that spends more, escapes of escapes many times
over, is read there in the whole forms only).

Where a part of a tool's output is quoted in a message (the last line of stderr in an
error), it is cut from the redacted whole, never redacted alone (round 35: the tail of a
secret broken across lines was not the secret; :class:`controller.execution.tools.CallContext`).
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import copy
import html.entities
import itertools
import json
import math
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.display import HIDDEN, HIDDEN_ASTRAL, HIDDEN_BMP
from controller.errors import CUT_MARKS, ConfigInvalid, RefUnavailable
from controller.settings.credentials import credentials_of, prefixed_secrets, seal_key_of

if TYPE_CHECKING:
    from controller.settings import Config, SecretsSettings

MASK = "***"


class SecretStore:
    """The secrets configured for one controller, read when the store is built."""

    def __init__(
        self,
        settings: SecretsSettings,
        environ: Mapping[str, str] | None = None,
        credentials: Iterable[str] = (),
        literal: Iterable[str] = (),
    ) -> None:
        self.env_prefix = settings.env_prefix
        self._values = _configured(settings, os.environ if environ is None else environ)
        #: ``credentials``: other values never to be written (:func:`credentials_of`);
        #: ``literal``: hidden as written and whole-encoded only (the seal key)
        self._hidden = [*self._values.values(), *credentials]
        self._literal = list(literal)
        self.redactor = copy.copy(_built(self._hidden, self._literal))

    def hold(self, values: Iterable[str]) -> None:
        """Hide ``values`` too, from now on: the values of secrets a run was given before a
        pause (unsealed from its journal: :func:`held_values`) that the secrets file or the
        environment no longer holds (round 126: a secret rotated or removed while the run
        waited at a gate was handed on from the seal, and what the next tool printed of it
        was recorded in clear). The seal key is kept."""
        extra = {v for v in values if isinstance(v, str) and v} - set(self._hidden)
        if extra:
            key = self.redactor.seal_key
            self._hidden += sorted(extra)
            self.redactor = copy.copy(_built(self._hidden, self._literal))
            self.redactor.seal_key = key

    @classmethod
    def for_config(cls, config: Config, environ: Mapping[str, str] | None = None) -> SecretStore:
        """The store of ``config``'s secrets, its redactor hiding its credentials too."""
        env = os.environ if environ is None else environ
        return cls(config.secrets, env, credentials_of(config, env)[1], seal_key_of(config))

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


def _configured(settings: SecretsSettings, env: Mapping[str, str]) -> dict[str, str]:
    """The secrets by name: the secrets file's, then the environment's (which win)."""
    values = _read_file(settings.file) if settings.file else {}
    values.update(prefixed_secrets(settings, env))
    return values


def _read_file(path: Path) -> dict[str, str]:
    from controller.fsutil import read_operator_file
    from controller.plan import yamlio

    try:
        text = read_operator_file(path).decode("utf-8")
        doc = yamlio.read_yaml(text, str(path))
    except OSError as exc:
        raise ConfigInvalid(
            f"secrets.file {path}: {exc.strerror}",
            remedy="point secrets.file at a regular file of NAME: value lines",
        ) from None
    except Exception as exc:
        raise ConfigInvalid(f"secrets.file {path}: {exc}") from None
    if doc.data is None:
        return {}
    if not isinstance(doc.data, dict):
        raise ConfigInvalid(f"secrets.file {path}: must be a mapping NAME: value")
    values = {}
    for name, value in doc.data.items():
        if not isinstance(value, str):
            _check_written(doc, (name,), value, path)
        values[str(name)] = value if isinstance(value, str) else json.dumps(value)
    return values


def _check_written(doc: Any, at: tuple[Any, ...], value: Any, path: Path) -> None:
    """A secrets file's value that is not a string reaches a tool as its JSON text (a
    mapping or list as the JSON text of the whole): it must be written as that text, or be
    quoted. Refused (round 126): a timestamp (``2027-01-01``: no JSON text, an internal
    error), null (no value: a tool got the text ``null``), and a number or boolean whose
    JSON text is not what was written (``007123456789`` reached the tool as ``7123456789``,
    ``0x1F`` as ``31``; ``.nan``, ``.inf``, ``1.0``, ``True``). Never quotes the value."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                _refuse_written(doc, (*at, key), path, "a key that is not a string")
            if not isinstance(item, str):
                _check_written(doc, (*at, key), item, path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if not isinstance(item, str):
                _check_written(doc, (*at, index), item, path)
    elif value is None:
        _refuse_written(doc, at, path, "no value (null)")
    elif not isinstance(value, (bool, int, float)):
        _refuse_written(doc, at, path, f"a YAML {_type_said(value)}, not a string")
    elif _written_text(doc, at) != json.dumps(value):
        _refuse_written(
            doc,
            at,
            path,
            "a number or true/false not written as the JSON text a tool would get (leading "
            "zeros, another base, an exponent, .nan, .inf, True)",
        )


def _type_said(value: Any) -> str:
    import datetime

    if isinstance(value, (datetime.date, datetime.datetime)):
        return "timestamp (a date or date and time)"
    return type(value).__name__


def _written_text(doc: Any, at: tuple[Any, ...]) -> str | None:
    """The characters a plain scalar at ``at`` was written as, None when not known."""
    span = doc.spans.get(at)
    if span is None or span.style:
        return None
    return str(doc.text[span.index + doc.bom : span.end_index + doc.bom])


def _refuse_written(doc: Any, at: tuple[Any, ...], path: Path, what: str) -> None:
    where = str(at[0]) + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in at[1:])
    line = doc.line_of(at)
    raise ConfigInvalid(
        f"secrets.file {path}{f', line {line}' if line else ''}: {where}: {what}",
        remedy=f'quote the value in {path} (NAME: "..."), so the tool gets exactly the '
        "text written, or remove the entry (docs/configuration.md, secrets)",
    )


#: How a tool notes that it cut a captured stream (see :func:`controller.execution.tools.cut`).
CUT_NOTE = "\n[plangate: output cut at "
#: A secret's start right before a cut mark (:data:`controller.errors.CUT_MARKS`) is hidden
#: too: at least this many characters of it, so "Loading..." stays as written.
MIN_CUT_PREFIX = 3
#: How far before a cut a view's reading of a secret's start may end (what stands after it
#: reads as nothing to that view: a blank between spaced-out characters, escape marks,
#: separators of a code run, at most :data:`_MAX_GAP`), and where a token the cut split may
#: start (:func:`_cut_points`).
_CUT_SLACK = 16
#: Token starts (characters that are no letter or digit) near a cut the views also read the
#: text as ending before, the last ones first: a cut inside ``\\u0079``, ``%39`` or a dump's
#: word leaves a part of the token that reads as other text.
_CUT_TOKENS = 3
#: Characters of text before a cut the views read per character of the longest secret
#: (``\\U0001F600`` is 10, a 4-byte character's bytes escaped ``\\xf0\\x9f..`` 16).
_CUT_SPREAD = 32
_LINES = re.compile("\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
#: A secret a number can spell, and a number written with a point or an exponent.
_NUMERIC_SECRET = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")
_NUMBER = re.compile(r"(?<![\w.])[+-]?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?(?![\w.])")
#: What a multi-line secret's lines may be joined by when a tool prints them back.
_LINE_JOINS = ("\n", "\r\n", "\r", " ", "\t", "")
#: Byte encodings of a secret's text a tool may hand back before a block encoding (UTF-16:
#: Windows APIs, PowerShell's -EncodedCommand).
_BYTE_ENCODINGS = ("utf-8", "utf-16-le", "utf-16-be")
#: A legacy code page's bytes of a non-ASCII secret (a tool that encodes for an old system).
_LEGACY_ENCODINGS = ("latin-1", "cp1252")
#: Shortest part of an encoded form that is hidden: shorter ones would mask common words.
_MIN_ENCODED = 6


#: A secret whose text is a number: JSON's grammar, and leading zeros or a sign a number
#: reader (``int()``, ``float()``, ``Decimal``) accepts too.
_NUMBER_TEXT = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
#: A numeric secret whose exponent is past this is not spelled out in full (``1e400``).
_MAX_NUMBER_DIGITS = 64


#: The shortest part of a secret hidden on its own (:func:`_parts_of`), as for a line of it.
_MIN_PART = 4
#: How deep :func:`_parts_of` reads a secret's parts (a JSON string inside a mapping, the
#: password of a URL inside it...), and how many parts one secret may give.
_PART_DEPTH, _MAX_PARTS = 4, 4096
_QUOTES_AROUND = ('"', "'", "`")
#: ``name=value`` pairs as a credential text holds them: dotenv lines, a connection string
#: (``Server=...;Password=...;``), a query string.
_PAIR = re.compile(r"(?:^|[\n;&])[ \t]*(?:export[ \t]+)?[\w.\- ]{1,64}?[ \t]*=[ \t]*([^\n;&]*)")
#: ``name=value`` pairs between blanks (a libpq connection string: ``host=db password=x``).
_WORD_PAIR = re.compile(r"(?:^|\s)[\w.\-]{1,64}=([^\s'\"]+)")
#: A dotenv comment after a value.
_COMMENT_AFTER = re.compile(r"\s+#")
#: An XML element's text (``<password>x</password>``).
_ELEMENT = re.compile(r"<([A-Za-z_][\w.\-]{0,63})(?:\s[^<>]*)?>([^<>]+)</\1\s*>")
#: The schemes of an ``Authorization`` value, and the words a netrc-like text names a
#: credential after.
_AUTH_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "bot", "apikey"})
_NAMING_WORDS = frozenset({"password", "passwd", "login", "account", "secret", "token"})
_JWT = re.compile(r"[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+")
_MARKUP = re.compile(r"[\"'{}\[\]<>]")
_HEX_TEXT = re.compile(r"[0-9a-fA-F]+")
_B64_TEXT = re.compile(r"[A-Za-z0-9+/_\-]+={0,2}")


def _parts_of(value: str) -> set[str]:
    """The secrets a secret holds that a tool may use on their own: the forms of the value a
    tool reads it in, and, read again the same way, the values it holds (rounds 108-109).

    - the value without blanks or one pair of quotes around it (a secrets file's ``"  token"``
      or a dotenv ``'"token"'``: the tool strips them);
    - for a JSON object or array (a mapping in the secrets file is kept as its JSON text; a
      service account's key is one string), each string and number in it;
    - for a credential text of ``name=value`` pairs (dotenv lines, a connection string), each
      value;
    - for a URL, its user and password.

    Each part of :data:`_MIN_PART` characters or more (a field name is not a secret; a short
    value would hide every word like it); a part's own parts too, :data:`_PART_DEPTH` deep (a
    JSON string in a mapping, a URL in a JSON credential)."""
    parts: set[str] = set()
    pending = [(value, 0)]
    while pending and len(parts) < _MAX_PARTS:
        text, depth = pending.pop()
        found = _held_by(text)
        for part in found - parts - {value}:
            if len(part) >= _MIN_PART:
                parts.add(part)
                if depth + 1 < _PART_DEPTH:
                    pending.append((part, depth + 1))
    return parts


def _held_by(text: str) -> set[str]:
    """:func:`_parts_of`'s one step: the texts ``text`` holds, as a tool reads them."""
    held: set[str] = set()
    stripped = text.strip()
    held.add(stripped)
    if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in _QUOTES_AROUND:
        held.add(stripped[1:-1])
    data: Any = None
    if stripped[:1] in ("{", "["):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None  # not JSON: an INI file's `[section]` lines, read as pairs below
    if data is not None:
        todo: list[Any] = [data]
        while todo:
            item = todo.pop()
            if isinstance(item, dict):
                todo += item.values()
            elif isinstance(item, list):
                todo += item
            elif isinstance(item, (str, int, float)) and not isinstance(item, bool):
                held.add(item if isinstance(item, str) else json.dumps(item))
    elif "=" in stripped:
        for m in _PAIR.finditer(stripped):
            found = m.group(1).strip()
            held.add(found)
            held.add(_COMMENT_AFTER.split(found, 1)[0].strip())  # dotenv's `X # note`
        held |= {m.group(1) for m in _WORD_PAIR.finditer(stripped)}  # libpq's `k=v k=v`
    if "://" in stripped:
        held |= _url_parts(stripped)
    elif "<" in stripped:
        held |= {m.group(2).strip() for m in _ELEMENT.finditer(stripped)}  # an XML config's
    if data is None:  # a JSON text's own punctuation is no field separator
        held |= _token_parts(stripped)
        held |= _decoded(stripped)
    held.discard(text)
    return held


def _url_parts(text: str) -> set[str]:
    """A URL's user, password, query values and last path segment (a webhook URL's token:
    ``/services/T0/B0/<token>``; an ``?api_key=``)."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    try:
        url = urlsplit(text)
        found = {unquote(p) for p in (url.username, url.password) if p}
        found |= {v for _, v in parse_qsl(url.query, keep_blank_values=False)}
        found.add(unquote(url.path.rstrip("/").rpartition("/")[2]))
    except ValueError:
        return set()
    return found


def _token_parts(text: str) -> set[str]:
    """The fields a credential text's reader takes on their own: ``user:password`` and a
    ``.pgpass`` line's fields (split at ``:``), an ``Authorization`` value's credential
    (``Bearer <token>``, ``Basic <b64>``), the word after ``password``/``login``/... in a
    netrc line, and a JWT's three segments."""
    found: set[str] = set()
    words = text.split()
    if len(words) == 2 and words[0].lower() in _AUTH_SCHEMES:
        found.add(words[1])
    for word, following in itertools.pairwise(words):
        if word.lower() in _NAMING_WORDS:
            found.add(following)
    if len(words) == 1 and "://" not in text and not _MARKUP.search(text):
        if ":" in text:
            found |= set(text.split(":"))
        if _JWT.fullmatch(text):
            found |= set(text.split("."))
    return found


def _decoded(text: str) -> set[str]:
    """A secret stored encoded, as the tool that decodes it prints it: base64 (either
    alphabet) or hex of UTF-8 text (a Kubernetes secret's data, a ``.dockerconfigjson``
    ``auth``, ``Basic`` credentials). Only text that decodes to printable UTF-8: a random
    token that happens to be valid base64 decodes to bytes that are not."""
    if len(text) < 8 or len(text) > 65536:
        return set()
    found: set[bytes] = set()
    if _HEX_TEXT.fullmatch(text) and len(text) % 2 == 0:
        found.add(bytes.fromhex(text))
    elif _B64_TEXT.fullmatch(text):
        body = text.rstrip("=")
        padded = body + "=" * (-len(body) % 4)
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            with contextlib.suppress(ValueError):
                found.add(decode(padded))
    texts: set[str] = set()
    for raw in found:
        try:
            plain = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if plain and all(c.isprintable() or c in "\n\r\t" for c in plain):
            texts.add(plain)
    return texts


def _number_forms(value: str) -> set[str]:
    """A secret whose text is a number, as a tool that reads it as one writes it again
    (round 60: ``int(pin)`` printed ``0072946183`` as ``72946183``, ``float(amount)``
    printed ``5550193.2500`` as ``5550193.25``): the integer without leading zeros, the
    decimal without trailing zeros, the float's shortest repr (what ``json.dumps`` writes).
    Forms shorter than 6 characters are left out: they would mask common numbers."""
    text = value.strip()
    if not _NUMBER_TEXT.fullmatch(text):
        return set()
    from decimal import Decimal

    number = Decimal(text)
    forms = set()
    if abs(number.adjusted()) < _MAX_NUMBER_DIGITS:
        exact = number.to_integral_value() if number == number.to_integral_value() else None
        forms.add(str(int(exact)) if exact is not None else format(number.normalize(), "f"))
        if exact is not None:
            # the integer in another base, as hex(), oct(), bin() and printf write it
            # (round 106: ``hex(int(pin))`` printed ``0xd5cd5fd9d4``)
            whole = int(exact)
            for base in ("x", "X", "o", "b"):
                forms.add(format(whole, base))
                forms.add(format(whole, f"#{base}"))
    real = float(number)
    if math.isfinite(real):
        forms.add(repr(real))
    kept = {f for f in forms if len(f) >= _MIN_ENCODED and value not in f}
    return {f for f in kept if not any(other != f and other in f for other in kept)}


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
        if whole and not value.isascii():  # a legacy code page's bytes (latin-1, cp1252)
            for name in _LEGACY_ENCODINGS:
                with contextlib.suppress(UnicodeEncodeError):
                    forms.update(_block_forms(value.encode(name)))
    return {form for form in forms if form}


def _block_forms(raw: bytes) -> set[str]:
    """Hex, base64 (standard and URL-safe) and base32 (both alphabets, either case) of
    ``raw``: the part of each that does not depend on what precedes or follows it, at every
    alignment."""
    forms = {raw.hex(), raw.hex().upper()}
    for body in _aligned(raw, base64.b64encode, 3, 4):
        forms.update({body, body.replace("+", "-").replace("/", "_")})
    for body in _aligned(raw, base64.b32encode, 5, 8):
        forms.update({body, body.lower()})
    for body in _aligned(raw, base64.b32hexencode, 5, 8):  # RFC 4648's extended hex alphabet
        forms.update({body, body.lower()})
    for body in _aligned(raw, base64.b64encode, 3, 4):  # uuencode: base64's bits, another alphabet
        forms.update({body.translate(_UU), body.translate(_UU_BACKTICK)})
    return {form for form in forms if len(form) >= _MIN_ENCODED}


#: base64's alphabet to uuencode's (``chr(32 + bits)``; a blank or a backquote for 0).
_B64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_UU = str.maketrans(_B64_ALPHABET, "".join(chr(32 + i) for i in range(64)))
_UU_BACKTICK = str.maketrans(_B64_ALPHABET, "`" + "".join(chr(32 + i) for i in range(1, 64)))


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


#: Marks a break between two runs of number tokens that do not touch: no needle holds it.
_BREAK = "\U0010ffff"
#: Characters that start an escape the escape view decodes (or a NUL): text without any of
#: them holds a secret, to that view, only as written.
_ESCAPE_STARTS = ("\\", "%", "&", "+", "\0")
#: One escape of the escape view. Every part is bounded, and a run of backslashes (escape
#: marks, any number: escapes of escapes) is one token, consumed once: the view never scans
#: the same characters twice (a long run of backslashes was quadratic, round 14).
_ESCAPE_TOKEN = re.compile(
    r"""(?P<bs>\\+)(?:
          u\{(?P<ub>[0-9a-fA-F]{1,6})\}
        | u(?P<u4>[0-9a-fA-F]{4})
        | U(?P<u8>[0-9a-fA-F]{8})
        | x(?P<x2>[0-9a-fA-F]{2})
        | N\{(?P<name>[A-Za-z0-9 \-]{1,88})\}
        | (?P<oct>[0-7]{1,3})
        | (?P<short>[nrtbfvae])
        | (?P<yaml>[_NLP])
      )?
    | %(?:25)*(?:[uU](?P<pu>[0-9a-fA-F]{4,6})|(?P<pct>[0-9a-fA-F]{2}))
    | &\#(?:0*(?P<dec>[0-9]{1,7})|[xX]0*(?P<hex>[0-9a-fA-F]{1,6}));
    | &(?P<entity>[A-Za-z][A-Za-z0-9]{1,31});
    """,
    re.VERBOSE,
)
_SHORT_ESCAPES = {"n": 10, "r": 13, "t": 9, "b": 8, "f": 12, "v": 11, "a": 7, "e": 27}
#: YAML's escapes of characters no other syntax names by a letter (YAML 1.2 §5.7).
_YAML_ESCAPES = {"_": 0xA0, "N": 0x85, "L": 0x2028, "P": 0x2029}
#: What an emitter writes between a text's characters when it wraps, folds or quotes it
#: (the break view, :func:`_break_view`): a line end with the indentation after it (a hard
#: wrap, a YAML or mail header fold), and a quote written twice or escaped (YAML single
#: quotes and CSV: ``''``, ``""``; POSIX shell: ``'\''``, ``'"'"'``, and ``'''`` for it
#: once the escape view has dropped its backslash; ``\'``, ``\"``).
_BREAK_TOKEN = re.compile(r"""(?P<quote>'\\''|'"'"'|'''|''|""|\\['"])|(?:\r\n|[\n\r])[ \t]*""")
#: A break of the break view stands for nothing (a hard wrap) or for the blank it replaced
#: (a fold): the view reads the text both ways.
_BREAK_JOINTS = ("", " ")
#: Characters one of the break view's tokens starts with.
_BREAK_STARTS = ("\n", "\r", "'", '"', "\\")
#: UTF-7: ``+`` and a run of modified base64 (UTF-16BE), ``-`` ending it.
_UTF7_RUN = re.compile(r"\+([A-Za-z0-9+/]*)(-?)")
#: Quoted-printable: ``=XX`` of a byte, ``=`` at the end of a line (a soft line break).
_QP_TOKEN = re.compile(r"=(?:(?P<byte>[0-9A-Fa-f]{2})|\r?\n)")
#: A code of a code run (the code-run view, :func:`_code_run_view`), a word of its own: hex
#: (2 digits or more, bare or after 0x, \x, %, =, &#x, U+, # or $: a byte, a code unit or
#: point of up to 8 digits, or a group of bytes), decimal (up to 7 digits), octal (3 digits,
#: ``od -b``, or after ``0o``) or binary (8 digits, or after ``0b``).
_HEX_TOKEN = re.compile(
    r"(?:0[xX]|\\[xX]|%|=|&\#[xX]|[uU]\+|\#|\$|(?<![0-9A-Za-z]))([0-9a-fA-F]{2,})(?![0-9A-Za-z])"
)
#: a decimal code; signed (``-61``: Java's bytes) where no digit or letter precedes the sign
_DEC_TOKEN = re.compile(r"(?<![0-9A-Za-z])(-?[0-9]{1,7})(?![0-9A-Za-z])")
_OCT_TOKEN = re.compile(
    r"(?:0[oO]|(?<![0-9A-Za-z])(?=[0-7]{3}(?![0-9A-Za-z])))([0-7]{1,7})(?![0-9A-Za-z])"
)
_BIN_TOKEN = re.compile(
    r"(?:0[bB]|(?<![0-9A-Za-z])(?=[01]{8}(?![0-9A-Za-z])))([01]{1,21})(?![0-9A-Za-z])"
)
#: What may stand between two codes of one run: any of these (a list's separators), or the
#: filler that stood between the run's first two codes, repeated (a wrapper of each code:
#: ``CHAR(75)||CHAR(113)``, ``chr(75)+chr(113)``, ``\x{4b}\x{71}``); separators at most
#: _MAX_GAP characters, a filler at most _MAX_FILLER and never a digit or a line end.
_GAP = re.compile(r"[\s,;:.\-_|/\\'\"]*")
_FILLER = re.compile(r"[^0-9\n\r]*")
_MAX_GAP = 16
_MAX_FILLER = 32
#: Hex digits of a code: more than this, a group of bytes only (UTF-32: 8).
_CODE_DIGITS = 8
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
#: NULs dropped, a run of U+FFFD as one, with the NULs between them (round 115: a non-ASCII
#: secret's UTF-16/UTF-32 bytes read as UTF-8 put a NUL between two undecodable characters)
_WIDE_CHARS = re.compile("[^\0\ufffd]+|\ufffd[\ufffd\0]*")
_WIDE_BYTES = re.compile("[^\0]+")
#: The gapped view (:func:`_gapped_view`, round 40): a markup tag or an HTML reference (one
#: character of filler each), or a letter or digit standing alone (no letter or digit
#: right before or after it: ``['K', 'q', ...]``, ``K q 7``, ``<c>K</c><c>q</c>``).
_GAPPED_TOKEN = re.compile(
    r"<[/!?]?[A-Za-z][^<>]{0,62}>"
    r"|&(?:[A-Za-z][A-Za-z0-9]{1,31}|\#[0-9]{1,7}|\#[xX][0-9a-fA-F]{1,6});"
    r"|(?<![^\W_])(?P<unit>[^\W_])(?![^\W_])"
)
_ALNUM = re.compile(r"[^\W_]")
#: Filler allowed between two characters of a gapped secret, plus this for each character
#: of the secret between them that is no letter or digit (written with its own filler).
_GAP_FILLER = 8
#: the stand-in view: characters that may write one character of a secret between its runs
#: of ASCII letters and digits (``&eacute`` is 7, RTF's ``\u8364?`` 7)
_STANDIN = 8
_ASCII_RUN = re.compile(r"[A-Za-z0-9]+")
#: Longest stretch of source text between two units of the gapped view.
_GAP_SOURCE = 160
#: A number written with digit grouping (``918,273,645,012``, ``918_273``, ``918 273``,
#: ``918.273``, ``918'273``, ``918’273``, ``9182-7364-5012``): groups of one to five digits
#: between separators, mixed or not (round 106: the Indian ``9,18,27,36,45,012`` and fours;
#: round 107: a dash, a right quote, fives, ``918,273.645_012``).
_GROUPED = re.compile(
    r"(?<![\w.,])[0-9]{1,5}(?:[-,_ .'\u2018\u2019\u066c\u00a0\u202f\u2009][0-9]{1,5})+(?!\w)"
)
#: A decimal digit of another script (Arabic-Indic, Devanagari, fullwidth...): read as its
#: ASCII digit, one for one, by the number views (round 107).
_NATIVE_DIGIT = re.compile(r"(?![0-9])\d")
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u3099\u309a"
#: Characters each with combining marks after it (an NFD text: ``e`` + U+0301 for ``é``).
_COMBINED = re.compile(f"(?:[^{_MARKS}][{_MARKS}]+)+")
#: The compatibility view's tokens (:func:`_compat_view`): characters with combining marks
#: after them (composed together), or a run of other non-ASCII characters (each alone).
_COMPAT_RUN = re.compile(
    f"(?P<marks>{_COMBINED.pattern})|(?:[^\\x00-\\x7f{_MARKS}](?![{_MARKS}]))+"
)
#: A secret this long, with letters, is also found in another case (``.upper()``):
#: shorter ones are matched as written (a word in another case is not a secret).
_MIN_CASELESS = 8

#: The terminal view (:func:`_terminal_view`, round 47, a line model since round 48): each
#: line read as a terminal DRAWS it. A cursor and a row of cells: a printable character
#: (a tab too) is written at the cursor and moves it right; BS moves it left, CR to column
#: 0; CSI ``n D``/``n C``/``n G`` (and HPA, `` ` ``) move it, ``ESC[K`` (and ``ESC[2K``)
#: erases to the end (the whole row), ``n P`` deletes characters, ``ESC 7``/``ESC 8`` and
#: CSI ``s``/``u`` save and restore it; LF ends the line. Every other escape sequence or
#: control string (CSI or C1 CSI, OSC/DCS/SOS/PM/APC up to BEL or ST, nF and two-character
#: escapes), of ANY length, and every character :data:`controller.display.HIDDEN` holds
#: (C0 and C1 controls, DEL, format characters such as U+200B and U+00AD, odd blanks)
#: draws nothing. One ``finditer`` over unbounded but unambiguous tokens: each character
#: is read once (a CSI that does not end is read twice: as one, then as text), and every
#: cell is written once per character written (plus padding, bounded: :data:`_MAX_PADDING`).


_QUOTES = "\"'`"


def _drawn_run(extra: str = "") -> str:
    """A run of characters that draw as written: a tab, or any character
    :data:`controller.display.HIDDEN` does not hold and ``extra`` does not name."""
    astral = "\\U00010000-\\U0010ffff"
    return f"(?:[^{HIDDEN_BMP}{extra}{astral}]|\t|(?![{HIDDEN_ASTRAL}])[{astral}])+"


_TERMINAL_REST = (
    r"|(?:\x1b\[|\x9b)(?:(?P<params>[0-9;]*)(?P<final>[DCG`KPsu@abj])"
    r"|[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e])"
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])"
    r"(?:[^\x07\x1b\x9c\x9d\x90\x98\x9e\x9f]*(?:\x07|\x1b\\?|\x9c))?"
    r"|\x1b[\x20-\x2f]+[\x30-\x7e]"
    r"|\x1b(?P<esc>[\x30-\x7e])"
)
_TERMINAL_TOKEN = re.compile(
    f"(?P<text>{_drawn_run()}){_TERMINAL_REST}" + r"|(?P<control>[\x08\r\n])|[\s\S]"
)
#: The same inside what the escape view decoded: a quote (``"``, ``'``, a backquote) also
#: starts a row, as ``jq -r`` or a YAML reader prints a string alone (a CR inside it goes
#: back to the string's start, not the line's).
_QUOTED_TOKEN = re.compile(
    f"(?P<text>{_drawn_run(_QUOTES)}){_TERMINAL_REST}" + "|(?P<control>[\\x08\\r\\n\"'`])|[\\s\\S]"
)
#: The width of the terminal the view draws on: a row this long wraps to the next (drawn
#: on, as a terminal with autowrap does), cursor moves stop at its margins.
_TERMINAL_WIDTH = 65536
#: Blank cells the view may pad a row with (a cursor moved right past the text, then a
#: character written; blanks inserted, with the cells they move), over the whole text:
#: ``2 * len(text) + _TERMINAL_WIDTH``. Past it, each line that asks for more fails
#: closed: masked whole.
_MAX_PADDING = 2
#: Characters that make a text draw other than as written (ESC, BS, CR, C1 controls, every
#: other character of :data:`controller.display.HIDDEN` but a tab and LF): text without
#: them never enters the terminal view (its cost is one scan for them).
_DRAWS_OTHERWISE = re.compile("(?![\t\n])(?:" + HIDDEN.pattern + ")")
#: The second cell of a wide character in a row of the line model (never drawn text: a NUL
#: draws nothing), dropped when the row is handed on.
_WIDE_TAIL = "\0"
#: Combining marks (spacing ones too): they join the character before, in no cell of
#: their own, and the skeleton view drops them.
_MARK_CATEGORIES = frozenset(("Mn", "Me", "Mc"))
_CELLS: dict[str, int] = {}


def _cells(char: str) -> int:
    """The cells a terminal gives ``char`` (wcwidth): 2 for East Asian wide and fullwidth
    characters, 0 for a combining mark (it joins the cell before), 1 for the others."""
    cells = _CELLS.get(char)
    if cells is None:
        if char.isascii():
            cells = 1
        elif unicodedata.category(char) in _MARK_CATEGORIES:
            cells = 0
        else:
            cells = 2 if unicodedata.east_asian_width(char) in "WF" else 1
        _CELLS[char] = cells
    return cells


def _narrow(piece: str) -> bool:
    """Whether every character of ``piece`` takes one cell (each distinct one looked at)."""
    return all(_cells(char) == 1 for char in set(piece))


def _latin(raw: bytes) -> str:
    """Bytes as a string of one character per byte (what the byte views search)."""
    return raw.decode("latin-1")


def _fold(text: str) -> str:
    """A blank and ``+`` are one unit to the escape view (``+`` is a form-encoded blank)."""
    return text.replace(" ", "+")


class _Stream:
    """Units decoded from a text (each one character: a character, or a byte, code unit or
    code point as ``chr``), with the span of the source each came from.

    Pieces are added in source order: a literal piece maps its units one to one onto the
    source's characters, a token piece maps all its units onto the token's whole span."""

    __slots__ = ("_parts", "_sources", "_starts", "size")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._starts: list[int] = []  # the index of each piece's first unit
        #: source start, end, and the characters of source per unit (0: the whole span)
        self._sources: list[tuple[int, int, int]] = []
        self.size = 0

    def add(
        self, units: str, start: int, end: int, *, literal: bool = False, step: int = 0
    ) -> None:
        """Add ``units``, each from ``step`` characters of the source (``literal``: one)."""
        if units:
            self._parts.append(units)
            self._starts.append(self.size)
            self._sources.append((start, end, 1 if literal else step))
            self.size += len(units)

    def add_utf8(self, text: str, start: int) -> None:
        """Literal text as the bytes of its UTF-8 (a non-ASCII character: its whole span)."""
        at = 0
        for run in _NON_ASCII.finditer(text) if not text.isascii() else ():
            self.add(text[at : run.start()], start + at, start + run.start(), literal=True)
            for offset, char in enumerate(run.group(), start=start + run.start()):
                self.add(_latin(char.encode("utf-8", "surrogatepass")), offset, offset + 1)
            at = run.end()
        self.add(text[at:], start + at, start + len(text), literal=True)

    def text(self) -> str:
        return "".join(self._parts)

    def span(self, first: int, stop: int) -> tuple[int, int]:
        """The source span of units ``first`` .. ``stop - 1``."""
        at = bisect.bisect_right(self._starts, first) - 1
        start, _, step = self._sources[at]
        begin = start + (first - self._starts[at]) * step
        at = bisect.bisect_right(self._starts, stop - 1) - 1
        start, end, step = self._sources[at]
        return begin, start + (stop - self._starts[at]) * step if step else end


def _escape_value(token: re.Match[str]) -> tuple[int, bool, int] | None:
    """What one escape token stands for: (code point or byte, a byte?, where it ends);
    None when it stands for nothing (escape marks before a character kept as written)."""
    group = token.lastgroup
    digits = token[group] if group else None
    end = token.end()
    if group is None or digits is None or group == "bs":
        return None
    if group in ("x2", "pct", "oct"):
        return int(digits, 8 if group == "oct" else 16) & 0xFF, True, end
    if group == "short":
        return _SHORT_ESCAPES[digits], True, end
    if group == "yaml":
        return _YAML_ESCAPES[digits], False, end
    if group == "entity":  # an HTML named reference (round 40: html.escape's &amp; &lt;)
        named = html.entities.html5.get(digits + ";")
        return (ord(named), False, end) if named and len(named) == 1 else None
    if group == "name":
        try:
            return ord(unicodedata.lookup(digits)), False, end
        except KeyError:
            return None
    if group == "pu":  # JavaScript's %uXXXX; 5 or 6 digits only for a character past U+FFFF
        size = 4
        for wider in (6, 5):
            if len(digits) >= wider and digits[0] != "0" and int(digits[:wider], 16) <= 0x10FFFF:
                size = wider
                break
        return int(digits[:size], 16), False, end - (len(digits) - size)
    code = int(digits, 10 if group == "dec" else 16)
    return (code, False, end) if code <= 0x10FFFF else None


def _escape_view(text: str, *, marks_only: bool = False) -> tuple[_Stream, _Stream]:
    """``text`` with every escape decoded (JSON/Python/C/Rust ``\\`` escapes of characters
    and bytes, escapes of escapes, URL-encoding once or more, ``%uXXXX``, HTML references,
    named ones too),
    as characters and as UTF-8 bytes. Escape marks (backslashes) before a character kept as
    written are dropped; what no escape encodes stays as written, so a bytes repr mixing
    literal runs and ``\\x`` escapes decodes whole. A ``\\x``, octal or ``%`` escape stands
    for a byte: in the characters it is that byte's Latin-1 character (a Python str repr).
    ``marks_only``: backslashes are escape marks before characters kept as written, never
    escapes (for a secret with a backslash before what reads as an escape: ``a\\0001``)."""
    chars, raw = _Stream(), _Stream()
    pos = 0
    high: tuple[int, int, int] | None = None  # a high surrogate waiting for its low half

    def emit(code: int, is_byte: bool, start: int, end: int) -> None:
        if code == 0x5C:  # a backslash, escaped or not, is no unit (see _Needles)
            return
        chars.add(chr(code), start, end)
        if is_byte:
            raw.add(chr(code), start, end)
        else:
            raw.add(_latin(chr(code).encode("utf-8", "surrogatepass")), start, end)

    def literal(start: int, end: int) -> None:
        nonlocal high
        if start < end:
            if high is not None:
                emit(high[0], False, high[1], high[2])
                high = None
            chars.add(text[start:end], start, end, literal=True)
            raw.add_utf8(text[start:end], start)

    for token in _ESCAPE_TOKEN.finditer(text):
        literal(pos, token.start())
        value = None if marks_only and token["bs"] else _escape_value(token)
        if value is None:  # escape marks: dropped; anything else of the token as written
            pos = token.end("bs") if token["bs"] else token.start()
            continue
        code, is_byte, end = value
        start = token.start()
        if high is not None and (is_byte or not 0xDC00 <= code < 0xE000 or high[2] != start):
            emit(high[0], False, high[1], high[2])
            high = None
        if not is_byte and 0xD800 <= code < 0xDC00:
            high = (code, start, end)
        elif high is not None:  # the low half: one character from both escapes
            code = 0x10000 + ((high[0] - 0xD800) << 10) + (code - 0xDC00)
            emit(code, False, high[1], end)
            high = None
        else:
            emit(code, is_byte, start, end)
        pos = end
    literal(pos, len(text))
    if high is not None:
        emit(high[0], False, high[1], high[2])
    return chars, raw


def _utf7_view(text: str) -> _Stream:
    """``text`` with every UTF-7 run (``+``, modified base64 of UTF-16BE, ``-``) decoded."""
    stream = _Stream()
    pos = 0
    for run in _UTF7_RUN.finditer(text):
        body = run[1]
        units = len(body) * 6 // 16
        if not units and not (run[2] and not body):  # not UTF-7: as written
            continue
        stream.add(text[pos : run.start()], pos, run.start(), literal=True)
        if units:
            raw = base64.b64decode(body + "A" * (-len(body) % 4))[: units * 2]
            stream.add(raw.decode("utf-16-be", "surrogatepass"), run.start(), run.end())
        else:  # "+-" is a plus sign
            stream.add("+", run.start(), run.end())
        pos = run.end()
    stream.add(text[pos:], pos, len(text), literal=True)
    return stream


def _qp_view(text: str) -> _Stream:
    """``text`` as UTF-8 bytes with every quoted-printable ``=XX`` decoded (soft breaks
    dropped): quoted-printable keeps printable ASCII as written."""
    stream = _Stream()
    pos = 0
    for token in _QP_TOKEN.finditer(text):
        stream.add_utf8(text[pos : token.start()], pos)
        if token["byte"]:
            stream.add(chr(int(token["byte"], 16)), token.start(), token.end())
        pos = token.end()
    stream.add_utf8(text[pos:], pos)
    return stream


def _break_view(text: str, joint: str) -> _Stream:
    """``text`` as a line wrapper, a folding emitter or a quoting syntax had it before: each
    line end with the indentation after it read as ``joint`` (nothing, or the blank a fold
    replaced), each quote written twice or escaped (``''``, ``""``, ``'\\''``, ``'"'"'``,
    ``\\'``, ``\\"``) read as the quote. One linear pass, as every view."""
    stream = _Stream()
    parts, starts, sources = stream._parts, stream._starts, stream._sources  # as add() does
    size = pos = 0
    for token in _BREAK_TOKEN.finditer(text):
        start, end = token.span()
        if pos < start:
            parts.append(text[pos:start])
            starts.append(size)
            sources.append((pos, start, 1))
            size += start - pos
        quote = token["quote"]
        unit = quote[-1] if quote else joint
        if unit:
            parts.append(unit)
            starts.append(size)
            sources.append((start, end, 0))
            size += 1
        pos = end
    stream.size = size
    stream.add(text[pos:], pos, len(text), literal=True)
    return stream


class _Drawn:
    """What the terminal view drew (:func:`_terminal_view`): one unit per drawn cell (LF
    between lines), each with the smallest and largest index of the source characters that
    drew it (a character struck over, ``_`` under it, counts from the first). A run of units
    maps back to the source from the smallest of them to the largest: what a CR redraw or a
    cursor move put in another order is masked with everything between."""

    __slots__ = ("_hi", "_lo", "_units", "failed")

    def __init__(self) -> None:
        self._units: list[str] = []
        self._lo: list[int] = []
        self._hi: list[int] = []
        #: source spans of lines that asked for more padding than the view allows: masked
        self.failed: list[tuple[int, int]] = []

    def text(self) -> str:
        return "".join(self._units)

    def span(self, first: int, stop: int) -> tuple[int, int]:
        return min(self._lo[first:stop]), max(self._hi[first:stop]) + 1


class _Row:
    """One row of the terminal view's line model: cells (character, first and last source
    index) and the cursor."""

    __slots__ = ("chars", "col", "hi", "lo", "saved", "wide")

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.lo: list[int] = []
        self.hi: list[int] = []
        self.col = 0
        self.saved = 0
        self.wide = False  # a wide character was drawn: its second cell is _WIDE_TAIL

    def flush(self, drawn: _Drawn) -> None:
        """Hand the row's cells to ``drawn`` (a wide character's second cell dropped: one
        unit per character drawn) and start an empty row (the cursor at 0)."""
        if self.wide:
            keep = [i for i, char in enumerate(self.chars) if char != _WIDE_TAIL]
            self.chars = [self.chars[i] for i in keep]
            self.lo = [self.lo[i] for i in keep]
            self.hi = [self.hi[i] for i in keep]
            self.wide = False
        drawn._units += self.chars
        drawn._lo += self.lo
        drawn._hi += self.hi
        self.chars, self.lo, self.hi = [], [], []
        self.col = 0

    def join(self, at: int) -> None:
        """A character of no cell (a combining mark) from source index ``at``: it joins the
        cell before the cursor (its span grows to it), drawing nothing of its own."""
        cell = min(self.col, len(self.chars)) - 1
        if cell > 0 and self.chars[cell] == _WIDE_TAIL:
            cell -= 1
        if cell >= 0:
            self.hi[cell] = max(self.hi[cell], at)

    def write(self, text: str, start: int) -> None:
        """Draw ``text`` (from source index ``start``) at the cursor, within the row (a wide
        character is written as itself and :data:`_WIDE_TAIL`, two cells)."""
        col, size = self.col, len(text)
        over = min(size, len(self.chars) - col)
        chars, lo, hi = self.chars, self.lo, self.hi
        if self.wide and over > 0:  # half a wide character drawn over: its other half blank
            if chars[col] == _WIDE_TAIL and col > 0:
                chars[col - 1] = " "
            if col + over < len(chars) and chars[col + over] == _WIDE_TAIL:
                chars[col + over] = " "
        for offset in range(max(over, 0)):  # drawn over: an overstrike keeps its start
            cell, char, at = col + offset, text[offset], start + offset
            old = chars[cell]
            if char == "_" and old not in " _":  # ``X BS _``: X underlined
                hi[cell] = at
                continue
            if old != char and old != "_":
                lo[cell] = at
            chars[cell], hi[cell] = char, at
        if size > over:
            rest = max(over, 0)
            chars += text[rest:]
            lo += range(start + rest, start + size)
            hi += range(start + rest, start + size)
        self.col = col + size

    def move(self, col: int) -> None:
        self.col = min(max(col, 0), _TERMINAL_WIDTH - 1)


def _csi_count(params: str, default: int) -> int:
    """The first parameter of a CSI (its default when absent or 0; any size: bounded)."""
    first = params.partition(";")[0].lstrip("0")
    if not first.isdigit():
        return default
    return int(first) if len(first) <= 8 else _TERMINAL_WIDTH


def _terminal_view(text: str, *, quoted: bool = False) -> _Drawn:
    """``text`` as a terminal draws it, line by line (round 48; round 47 dropped escapes and
    read overstrikes only): :data:`_TERMINAL_TOKEN`'s line model. A secret found in what
    was drawn is masked from the first source character of its cells to the last.
    Linear in the text: one ``finditer``; each cell is written, struck over or erased at
    most once per character of the text, and blank cells padded (a cursor moved past the
    text) are bounded over the whole text (:data:`_MAX_PADDING`), a line past that bound
    failing closed (its whole span masked)."""
    drawn = _Drawn()
    row = _Row()
    padding = _MAX_PADDING * len(text) + _TERMINAL_WIDTH
    line_start = 0
    failed = False
    last = ""  # the last character drawn (REP draws it again)

    def draw(char: str, at: int, padding: int, failed: bool) -> tuple[int, bool]:
        """One character at the cursor, in as many cells as a terminal gives it."""
        cells = _cells(char)
        if not cells:
            row.join(at)
            return padding, failed
        if row.col + cells > _TERMINAL_WIDTH:  # autowrap
            row.flush(drawn)
        gap = row.col - len(row.chars)
        if gap > 0:
            if gap > padding:
                failed = True
                row.col = len(row.chars)
            else:
                padding -= gap
                row.chars += " " * gap
                row.lo += [at] * gap
                row.hi += [at] * gap
        if cells == 2:
            row.wide = True
            row.write(char + _WIDE_TAIL, at)
            row.lo[row.col - 1] = row.hi[row.col - 1] = at
        else:
            row.write(char, at)
        return padding, failed

    for token in (_QUOTED_TOKEN if quoted else _TERMINAL_TOKEN).finditer(text):
        kind = token.lastgroup
        if kind is None:  # draws nothing
            continue
        start, end = token.span()
        if kind == "text":
            piece = token.group()
            last = piece[-1]
            if not piece.isascii() and not _narrow(piece):  # wide or combining: each alone
                for at, char in enumerate(piece, start):
                    padding, failed = draw(char, at, padding, failed)
                continue
            if row.col == len(row.chars) and row.col + end - start <= _TERMINAL_WIDTH:
                row.chars += piece  # at the end of the row (the common case)
                row.lo += range(start, end)
                row.hi += range(start, end)
                row.col += end - start
                continue
            while piece:
                if row.col >= _TERMINAL_WIDTH:  # autowrap: drawn on, on the next row
                    row.flush(drawn)
                gap = row.col - len(row.chars)
                if gap > 0:
                    if gap > padding:
                        failed = True
                        row.col = len(row.chars)
                    else:
                        padding -= gap
                        row.chars += " " * gap
                        row.lo += [start] * gap
                        row.hi += [start] * gap
                part = piece[: _TERMINAL_WIDTH - row.col]
                row.write(part, start)
                start += len(part)
                piece = piece[len(part) :]
        elif kind == "final":
            params = token["params"]
            final = token["final"]
            if final in "Dj":  # CUB, HPB
                row.move(row.col - _csi_count(params, 1))
            elif final in "Ca":  # CUF, HPR
                row.move(row.col + _csi_count(params, 1))
            elif final == "b":  # REP: the last character drawn, again (bounded as padding)
                count = min(_csi_count(params, 1), _TERMINAL_WIDTH)
                if last and count <= padding:
                    padding -= count
                    for _ in range(count):
                        padding, failed = draw(last, start, padding, failed)
                elif last:
                    failed = True
            elif final in "G`":
                row.move(_csi_count(params, 1) - 1)
            elif final == "K":
                which = _csi_count(params, 0)
                keep = row.col if which == 0 else 0 if which == 2 else len(row.chars)
                del row.chars[keep:], row.lo[keep:], row.hi[keep:]
            elif final == "P":
                end = row.col + _csi_count(params, 1)
                del row.chars[row.col : end], row.lo[row.col : end], row.hi[row.col : end]
            elif final == "@":  # blanks inserted: the row's rest moves right (bounded)
                count = min(_csi_count(params, 1), _TERMINAL_WIDTH)
                cost = count + len(row.chars) - row.col
                if row.col < len(row.chars) and cost <= padding:
                    padding -= cost
                    at = row.col
                    row.chars[at:at] = " " * count
                    row.lo[at:at] = [start] * count
                    row.hi[at:at] = [start] * count
                    del row.chars[_TERMINAL_WIDTH:], row.lo[_TERMINAL_WIDTH:]
                    del row.hi[_TERMINAL_WIDTH:]
                elif row.col < len(row.chars):
                    failed = True
            elif final == "s" and not params:
                row.saved = row.col
            elif final == "u" and not params:
                row.move(row.saved)
        elif kind == "esc":
            if token["esc"] == "7":
                row.saved = row.col
            elif token["esc"] == "8":
                row.move(row.saved)
        elif kind == "control":
            control = token["control"]
            if control == "\b":
                row.move(row.col - 1)
            elif control == "\r":
                row.col = 0
            else:
                row.flush(drawn)
                drawn._units.append(control)
                drawn._lo.append(start)
                drawn._hi.append(start)
                if control != "\n":  # a quote: the row of a string printed alone
                    continue
                if failed:
                    drawn.failed.append((line_start, start))
                failed = False
                line_start = start + 1
    row.flush(drawn)
    if failed:
        drawn.failed.append((line_start, len(text)))
    return drawn


def _terminal_inside(
    text: str, outer: _Stream | None, needles: set[str], found: list[tuple[int, int]]
) -> None:
    """The terminal view of ``text`` (the source, or the units of ``outer``'s view of it:
    escapes written ``\\u001b``, ``\\e``, ``\\x1b``, ``\\u0007`` in a JSON or YAML string),
    searched for the secrets and their whole forms, when ``text`` holds a character that
    does not draw as itself (:data:`_DRAWS_OTHERWISE`)."""
    if needles and _DRAWS_OTHERWISE.search(text):
        drawn = _terminal_view(text, quoted=outer is not None)
        span = _within(drawn.span, outer)
        _find(drawn.text(), needles, span, found)
        found += [span_ if outer is None else outer.span(*span_) for span_ in drawn.failed]


#: Each character's form in the skeleton view (:func:`_skeleton_view`), cached.
_FORMS: dict[str, str] = {}


def _skeleton_char(char: str) -> str:
    """A character as the skeleton view reads it: nothing for a hidden character or a
    combining mark; else its compatibility decomposition without marks, composed again
    (``é`` as ``e``, fullwidth ``Ｋ`` as ``K``, ``ﬁ`` as ``fi``, a Hangul syllable kept)."""
    form = _FORMS.get(char)
    if form is None:
        if char.isascii():
            form = "" if _DRAWS_OTHERWISE.match(char) else char
        elif HIDDEN.match(char) or unicodedata.category(char) in _MARK_CATEGORIES:
            form = ""
        else:
            bare = "".join(
                part
                for part in unicodedata.normalize("NFKD", char)
                if unicodedata.category(part) not in _MARK_CATEGORIES and not HIDDEN.match(part)
            )
            form = unicodedata.normalize("NFKC", bare)
        _FORMS[char] = form
    return form


def _skeleton(value: str) -> str:
    """A secret (or a form of it) as the skeleton view reads it: drawn by the terminal view
    when it holds a character that draws otherwise, then each character's skeleton form."""
    if _DRAWS_OTHERWISE.search(value):
        value = _terminal_view(value).text()
    return "".join(map(_skeleton_char, value))


class _Skeleton:
    """The skeleton view of a text (:func:`_skeleton_view`): its units and their map back
    to the source (``span``); ``same``: the units are the source's characters one to one
    (the text as written); ``drawn``: read through the terminal view's line model."""

    __slots__ = ("drawn", "failed", "same", "span", "units")

    def __init__(
        self, units: str, span: Callable[[int, int], tuple[int, int]] | None, *, drawn: bool
    ) -> None:
        self.units = units
        self.span = span or _same
        self.same = span is None
        self.drawn = drawn
        #: source spans of lines the terminal view failed closed on: masked
        self.failed: list[tuple[int, int]] = []


def _skeleton_view(text: str) -> _Skeleton:
    """``text`` as ONE composed reading of what is printed (round 49): drawn by the terminal
    view's line model when it holds a character that draws otherwise (ESC, BS, CR, a hidden
    character), then each character in its skeleton form (:func:`_skeleton_char`: hidden
    characters and combining marks dropped, the compatibility form without marks). A mark
    is read with the character before it (one unit, spanning both). Text of ASCII without
    a character that draws otherwise is its own skeleton (one scan); other text costs a
    scan of its distinct characters, and one token for each character whose form differs."""
    drawn = None
    if _DRAWS_OTHERWISE.search(text):
        drawn = _terminal_view(text)
        units = drawn.text()
    elif text.isascii():
        return _Skeleton(text, None, drawn=False)
    else:
        units = text
    changed = [char for char in set(units) if not char.isascii() and _skeleton_char(char) != char]
    if not changed:
        if drawn is None:
            return _Skeleton(text, None, drawn=False)
        skeleton = _Skeleton(units, drawn.span, drawn=True)
        skeleton.failed = drawn.failed
        return skeleton
    empty = "".join(re.escape(char) for char in changed if not _FORMS[char])
    other = "".join(re.escape(char) for char in changed if _FORMS[char])
    tokens = [f"[{other}]"] if other else []
    if empty:  # a mark or a hidden character, with the character before it
        tokens.insert(0, rf"[\s\S]?[{empty}]+")
    stream = _Stream()
    pos = 0
    for match in re.finditer("|".join(tokens), units):
        start, end = match.span()
        stream.add(units[pos:start], pos, start, literal=True)
        form = "".join(_FORMS.get(char, char) for char in match.group())
        stream.add(form, start, end)
        pos = end
    stream.add(units[pos:], pos, len(units), literal=True)
    if drawn is None:
        return _Skeleton(stream.text(), stream.span, drawn=False)
    skeleton = _Skeleton(stream.text(), _composed(stream.span, drawn.span), drawn=True)
    skeleton.failed = drawn.failed
    return skeleton


def _skeleton_inside(
    skeleton: _Skeleton,
    needles: _Needles,
    plain: tuple[dict[str, tuple[_Stream, str]], tuple[_Stream, list[int]] | None],
    found: list[tuple[int, int]],
) -> None:
    """The skeleton view of a text searched for the secrets' skeletons (in any case for a
    secret of 8 characters or more with letters), and the structural views over it: the
    break view (hard wraps, folds) and the gapped view (a list of characters), mapped back
    through it. ``plain``: the break streams and the gapped view of ``text`` as written,
    already searched case-exact; when the skeleton is the text they are only read again
    lower-cased."""
    found += skeleton.failed
    span = skeleton.span
    units = skeleton.units
    if not skeleton.same:
        _find(units, needles.skeleton, span, found)
    _find_lowered(units, needles.skeleton_caseless, span, found)
    if skeleton.same:
        breaks, gapped = plain
    else:
        breaks = {}
        for joint in _BREAK_JOINTS if any(c in units for c in _BREAK_STARTS) else ():
            if needles.skeleton_breaks[joint] or needles.caseless_breaks[joint]:
                stream = _break_view(units, joint)
                breaks[joint] = stream, stream.text()
        gapped = _gapped_view(units) if needles.skeleton_gapped else None
    for joint, (stream, read) in breaks.items():
        through = _composed(stream.span, span)
        if not skeleton.same:
            _find(read, needles.skeleton_breaks[joint], through, found)
        _find_lowered(read, needles.caseless_breaks[joint], through, found)
    if gapped is not None:
        inner, gaps = gapped
        through = _composed(inner.span, span)
        if not skeleton.same:
            _find_gapped(inner.text(), gaps, needles.skeleton_gapped, through, found)
        if needles.caseless_gapped:
            lowered = inner.text().lower()
            if len(lowered) == inner.size:
                _find_gapped(lowered, gaps, needles.caseless_gapped, through, found)


def _composed(
    inner: Callable[[int, int], tuple[int, int]], outer: Callable[[int, int], tuple[int, int]]
) -> Callable[[int, int], tuple[int, int]]:
    """Spans of units of a view of another view's units, in the source of the other."""
    return lambda first, stop: outer(*inner(first, stop))


def _find_lowered(
    units: str,
    needles: set[str],
    span: Callable[[int, int], tuple[int, int]],
    found: list[tuple[int, int]],
) -> None:
    """:func:`_find` in ``units`` case-folded (through :func:`_lower_view` where a
    character folds to more than one, ``ß``, ``İ``): Unicode's full case mapping, so a
    secret upper-cased (``ß`` is ``SS``) or folded (``ς`` is ``σ``) is found (round 106)."""
    if not needles:
        return
    lowered = units.casefold()
    if len(lowered) != len(units):
        lower = _lower_view(units, str.casefold)
        lowered, span = lower.text(), _composed(lower.span, span)
    _find(lowered, needles, span, found)


def _misread(value: str) -> set[str]:
    """A secret's UTF-8 bytes read as Latin-1 and as Windows-1252 (mojibake: ``Ã¤`` for
    ``ä``), each byte cp1252 leaves undefined read as Latin-1 (as Windows reads it)."""
    raw = value.encode("utf-8", "surrogatepass")
    if raw.isascii():
        return set()
    cp1252 = "".join(bytes([byte]).decode("cp1252", "ignore") or chr(byte) for byte in raw)
    return {_latin(raw), cp1252} - {value}


#: How a code run's codes are read: each code to its units (a code point, a byte or bytes),
#: or None where the code cannot be one of that reading (the run ends there).
_Reading = Callable[[str], str | None]
#: A reading and the digits of a long group (over :data:`_CODE_DIGITS`) that write one piece
#: of its units, mapped back together: a byte's two, a word's ``2 * size``.
_Read = tuple[_Reading, int]


def _code_point(base: int) -> _Reading:
    """A code as one unit: a byte, a UTF-16 code unit or a code point (zero-padded too)."""

    def read(digits: str) -> str | None:
        if len(digits) > _CODE_DIGITS:
            return None
        value = int(digits, base)
        if value < 0:  # a signed byte (round 101: Java's ``Arrays.toString(getBytes())``)
            return chr(value + 256) if value >= -128 else None
        return chr(value) if value <= 0x10FFFF else None

    return read


def _hex_bytes(digits: str) -> str | None:
    """Hex digits as the bytes they write in order (``xxd``'s groups, a UTF-32 dump)."""
    return bytes.fromhex(digits).decode("latin-1") if len(digits) % 2 == 0 else None


def _hex_words(size: int) -> _Reading:
    """Hex digits as little-endian words of ``size`` bytes, each written high byte first
    (``od -x``: 2; ``od -t x4``: 4, ``-t x8``: 8, round 111)."""

    def read(digits: str) -> str | None:
        if len(digits) % (2 * size):
            return None
        raw = bytes.fromhex(digits)
        swapped = bytearray(len(raw))
        for at in range(size):  # byte ``at`` of every word goes to ``size - 1 - at``
            swapped[size - 1 - at :: size] = raw[at::size]
        return swapped.decode("latin-1")

    return read


#: The word sizes (bytes) of the little-endian word dumps the hex codes are read as.
_WORD_SIZES = (2, 4, 8)
#: How the codes of each notation are read (hex: code points, bytes in order, little-endian
#: words of each size; the others: code points).
_HEX_READINGS: tuple[_Read, ...] = (
    (_code_point(16), 2),
    (_hex_bytes, 2),
    *((_hex_words(size), 2 * size) for size in _WORD_SIZES),
)
_DEC_READINGS: tuple[_Read, ...] = ((_code_point(10), 2),)
_OCT_READINGS: tuple[_Read, ...] = ((_code_point(8), 2),)
_BIN_READINGS: tuple[_Read, ...] = ((_code_point(2), 2),)


def _code_run_view(
    text: str, pattern: re.Pattern[str], readings: tuple[_Read, ...]
) -> list[_Stream]:
    """The codes of ``text`` that stand in runs (character or byte codes in one notation: a
    list, a dump, a code per wrapper), read each way of ``readings``, one stream each.

    Two codes are of one run when what stands between them is separators (:data:`_GAP`, at
    most _MAX_GAP characters) or, repeated, the filler between the run's first two codes
    (one notation per run: ``CHAR(75)||CHAR(113)``; at most _MAX_FILLER, no digit). A
    code of up to 8 hex digits or a few decimal, octal or binary ones maps its units onto
    its whole token; a longer group of hex bytes maps each byte onto its two digits, and
    each word of a word reading onto its digits (a word's bytes are written in reverse).
    One ``finditer``: linear in the text."""
    streams = [_Stream() for _ in readings]
    broken = [False] * len(readings)  # a code this reading could not read ended its run
    last = -1  # where the last code ended
    filler: str | None = None  # the run's repeated filler
    for token in pattern.finditer(text):
        start, end = token.span()
        joined = False
        if last >= 0 and start - last <= _MAX_FILLER:
            gap = text[last:start]
            if filler is None and _FILLER.fullmatch(gap):
                filler = gap
            joined = gap == filler or (len(gap) <= _MAX_GAP and _GAP.fullmatch(gap) is not None)
        if not joined:
            filler = None
        last = end
        digits = token[1]
        step = 2 if len(digits) > _CODE_DIGITS else 0  # a group of bytes: two digits each
        begin = token.start(1) if step else start
        for index, (read, piece) in enumerate(readings):
            units = read(digits)
            if units is None:
                broken[index] = True
                continue
            stream = streams[index]  # as add() does, inline: this loop is the hot one
            if (broken[index] or not joined) and stream.size:
                stream._parts.append(_BREAK)
                stream._starts.append(stream.size)
                stream._sources.append((start, start, 0))
                stream.size += 1
            broken[index] = False
            if step and piece > 2:  # a long group's words: each maps back to its digits
                _add_words(stream, units, piece, begin)
                continue
            stream._parts.append(units)
            stream._starts.append(stream.size)
            stream._sources.append((begin, end, step))
            stream.size += len(units)
    return streams


def _add_words(stream: _Stream, units: str, digits: int, begin: int) -> None:
    """The units of a long group read as words (``digits`` each, from ``begin``): a word's
    bytes are written in reverse, so each word maps back to its own digits whole."""
    size = digits // 2
    for at in range(0, len(units), size):
        start = begin + 2 * at
        stream.add(units[at : at + size], start, start + digits)


def _squeezed(text: str, pattern: re.Pattern[str]) -> _Stream:
    """Units of a decoded ``text`` without NULs (and with each run of U+FFFD as one): the
    text of UTF-16 or UTF-32 read as UTF-8. Spans are in units of ``text``."""
    stream = _Stream()
    for run in pattern.finditer(text):
        if run.group()[0] == "\ufffd":
            stream.add("\ufffd", run.start(), run.end())
        else:
            stream.add(run.group(), run.start(), run.end(), literal=True)
    return stream


def _gapped_view(text: str) -> tuple[_Stream, list[int]]:
    """The letters and digits of ``text`` that stand alone, each one unit, and the filler
    before each (round 40: a secret's characters each quoted in a list, each followed by a
    blank or a comma, each in its own element): the length of what separates it from the
    unit before, a tag or an HTML reference counted as one character, -1 where a chain of
    lone characters starts (a letter or digit between them, or too much text). Linear: one
    ``finditer`` whose tokens are bounded, and each stretch between tokens scanned once."""
    stream = _Stream()
    gaps: list[int] = []
    last = -1  # where the last unit ended
    skipped = 0  # characters of tags and references since the last unit
    tokens = 0  # tags and references since the last unit
    seen = 0  # where the text not yet looked at for letters or digits starts
    clean = True  # no letter or digit outside tags since the last unit
    for token in _GAPPED_TOKEN.finditer(text):
        start, end = token.span()
        if last >= 0 and clean and start - last <= _GAP_SOURCE:
            clean = _ALNUM.search(text, seen, start) is None
        seen = end
        unit = token["unit"]
        if unit is None:
            skipped += end - start
            tokens += 1
            continue
        joined = last >= 0 and clean and start - last <= _GAP_SOURCE
        if not joined and stream.size:
            stream.add(_BREAK, start, start)
            gaps.append(-1)
        stream.add(unit, start, end, literal=True)
        gaps.append(start - last - skipped + tokens if joined else -1)
        last, skipped, tokens, clean = end, 0, 0, True
    return stream, gaps


def _find_gapped(
    haystack: str,
    gaps: list[int],
    needles: Mapping[str, tuple[int, ...]],
    span: Callable[[int, int], tuple[int, int]],
    found: list[tuple[int, int]],
) -> None:
    """Add the source span of every occurrence of a gapped needle in the gapped view whose
    fillers are each at most what the needle allows there (before a cut, :class:`_AtCut`:
    of a start of one that ends the view, its fillers so too)."""
    if isinstance(found, _AtCut):
        for needle, allowed in needles.items():
            for size in _starts_at_end(haystack, needle, MIN_CUT_PREFIX):
                at = len(haystack) - size
                if all(0 <= gaps[at + j] <= allowed[j] for j in range(1, size)):
                    found.append(span(at, len(haystack)))
                    break
        return
    for needle, allowed in needles.items():
        at = haystack.find(needle)
        while at >= 0:
            if all(0 <= gaps[at + j] <= allowed[j] for j in range(1, len(needle))):
                found.append(span(at, at + len(needle)))
                at = haystack.find(needle, at + len(needle))
            else:
                at = haystack.find(needle, at + 1)


def _gapped_needle(value: str) -> tuple[str, tuple[int, ...]] | None:
    """A secret as the gapped view reads it: its letters and digits (6 or more), and the
    filler allowed before each (more where characters of the secret stand between)."""
    units: list[str] = []
    allowed: list[int] = []
    between = 0
    for char in unicodedata.normalize("NFC", value):
        if _ALNUM.match(char):
            units.append(char)
            allowed.append(_GAP_FILLER + between * (_GAP_FILLER + 1))
            between = 0
        else:
            between += 1
    if len(units) < _MIN_ENCODED:
        return None
    return "".join(units), tuple(allowed)


def _standin_needle(value: str) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    r"""A secret as the stand-in view reads it (round 101): its runs of ASCII letters and
    digits, in order, and how many characters may stand between each run and the one
    before, in place of the secret's characters there (each written in up to
    :data:`_STANDIN` characters of any notation: ``~1`` for ``/`` in a JSON Pointer, ``\2c``
    in an LDAP name, ``^&`` for cmd, ``$$`` for make, ``%%`` for printf, ``\'e``, ``\u233?``,
    ``&eacute`` or ``=E9`` for ``é``; or dropped, as Punycode gathers the ASCII characters
    first). None for a secret of one run, or of fewer than 8 such letters and digits."""
    runs: list[str] = []
    allowed: list[int] = []
    last = -1
    for run in _ASCII_RUN.finditer(unicodedata.normalize("NFC", value)):
        if last >= 0:
            allowed.append((run.start() - last) * _STANDIN)
        runs.append(run.group())
        last = run.end()
    if len(runs) < 2 or sum(map(len, runs)) < _MIN_CASELESS:
        return None
    return tuple(runs), tuple(allowed)


def _find_standins(
    text: str,
    needles: Mapping[tuple[str, ...], tuple[int, ...]],
    found: list[tuple[int, int]],
) -> None:
    """Add the span of every place ``text`` holds a stand-in needle's runs in order, each
    at most its allowance after the run before. Each start is an occurrence of the first
    run (``str.find``); from it, the ends reachable after each run are a set bounded by the
    allowances: linear in the text for a set of secrets. Before a cut (:class:`_AtCut`): the
    places whose runs go on to the text's end, the last of them begun."""
    at_cut = isinstance(found, _AtCut)
    for runs, allowed in needles.items():
        first = runs[0]
        at = text.find(first)
        while at >= 0:
            ends = [at + len(first)]
            kept = len(first)  # letters and digits of the needle matched so far
            for run, most in zip(runs[1:], allowed, strict=True):
                if at_cut and _run_cut(text, ends, run, most, kept):
                    found.append((at, len(text)))
                    break
                kept += len(run)
                reach: set[int] = set()
                for end in ends:
                    limit = end + most + len(run)
                    hit = text.find(run, end, limit)
                    while hit >= 0:
                        reach.add(hit + len(run))
                        hit = text.find(run, hit + 1, limit)
                ends = sorted(reach)
                if not ends:
                    break
            if ends and not at_cut:
                found.append((at, ends[-1]))
                at = text.find(first, ends[-1])
            else:
                at = text.find(first, at + 1)


def _run_cut(text: str, ends: list[int], run: str, most: int, kept: int) -> bool:
    """Whether ``text`` ends with the start of ``run`` (one character or more) at most
    ``most`` characters after one of ``ends``, :data:`MIN_CUT_PREFIX` units in all."""
    size = len(text)
    for end in ends:
        for at in range(end, min(end + most, size - 1) + 1):
            rest = size - at
            if 0 < rest < len(run) and kept + rest >= MIN_CUT_PREFIX and run.startswith(text[at:]):
                return True
    return False


def _compat_view(text: str) -> _Stream:
    """``text`` in its compatibility form (NFKC): each character with the combining marks
    after it composed, each other character in its compatibility form (fullwidth ``Ｋ`` as
    ``K``, the ligature ``ﬁ`` as ``fi``). A character whose form is one character stays one
    unit of a literal piece, so a run of fullwidth text maps back one to one."""
    stream = _Stream()
    pos = 0
    forms: dict[str, str] = {}
    for run in _COMPAT_RUN.finditer(text):
        stream.add(text[pos : run.start()], pos, run.start(), literal=True)
        if run["marks"]:
            stream.add(unicodedata.normalize("NFKC", run.group()), run.start(), run.end())
            pos = run.end()
            continue
        same: list[str] = []  # characters of one-character forms since ``pos``
        pos = run.start()
        for at, char in enumerate(run.group(), start=pos):
            form = forms.get(char)
            if form is None:
                form = forms[char] = unicodedata.normalize("NFKC", char)
            if len(form) == 1:
                same.append(form)
                continue
            stream.add("".join(same), pos, at, literal=True)
            stream.add(form, at, at + 1)
            same, pos = [], at + 1
        stream.add("".join(same), pos, run.end(), literal=True)
        pos = run.end()
    stream.add(text[pos:], pos, len(text), literal=True)
    return stream


def _lower_view(text: str, case: Callable[[str], str] = str.lower) -> _Stream:
    """``text`` lower-cased (or case-folded: ``case``), where a character's lower case is
    not one character (``İ``; folded, ``ß`` is ``ss``)."""
    stream = _Stream()
    pos = 0
    for run in _NON_ASCII.finditer(text):
        for at, char in enumerate(run.group(), start=run.start()):
            lower = case(char)
            if len(lower) != 1:
                stream.add(case(text[pos:at]), pos, at, literal=True)
                stream.add(lower, at, at + 1)
                pos = at + 1
    stream.add(case(text[pos:]), pos, len(text), literal=True)
    return stream


class _AtCut(list[tuple[int, int]]):
    """What the finders collect over the text right before a cut (:meth:`Redactor._cut_start`)
    in place of whole occurrences: where a start of a needle (:data:`MIN_CUT_PREFIX` units
    or more) ends what a view read, the rest of it cut off. One rule for every view: each
    finder (:func:`_find`, :func:`_find_gapped`, :func:`_find_standins`) reads it."""


def _starts_at_end(head: str, value: str, minimum: int) -> Iterator[int]:
    """The lengths of the starts of ``value`` (``minimum`` .. ``len(value) - 1``) that
    ``head`` ends with, longest first."""
    last = head[-1:]
    if not last:
        return
    # only starts that end with head's last character can match: jump between them
    end = value.rfind(last, 0, min(len(value) - 1, len(head)))
    while end >= minimum - 1:
        if head.endswith(value[: end + 1]):
            yield end + 1
        end = value.rfind(last, 0, end)


def _cut_points(head: str, base: int) -> list[int]:
    """Where the text before a cut is read to (:meth:`Redactor._cut_start`): its end, and
    the last :data:`_CUT_TOKENS` token starts (no letter or digit) of its last word (the
    blank before it included, at most :data:`_CUT_SLACK` characters), after ``base``: a
    token the cut split (``\\u00``, ``%3``, a dump's word) is read as not there."""
    points = [len(head)]
    for at in range(len(head) - 1, max(base, len(head) - _CUT_SLACK) - 1, -1):
        if len(points) > _CUT_TOKENS:
            break
        if not head[at].isalnum():
            points.append(at)
            if head[at].isspace():
                break
    return points


def _reads_as_nothing(rest: str) -> bool:
    """Whether what stands between a view's reading and a cut is filler (a blank, escape
    marks, a code run's separators): no letter or digit, at most :data:`_CUT_SLACK`."""
    return len(rest) <= _CUT_SLACK and not any(char.isalnum() for char in rest)


def _start_at_end(head: str, values: Iterable[str], minimum: int) -> int:
    """The length of the longest start of one of ``values`` that ``head`` ends with."""
    return max((next(_starts_at_end(head, v, minimum), 0) for v in values), default=0)


def _find(
    haystack: str,
    needles: Iterable[str],
    span: Callable[[int, int], tuple[int, int]],
    found: list[tuple[int, int]],
) -> None:
    """Add the source span of every occurrence of every needle in ``haystack`` (before a
    cut, :class:`_AtCut`: of the longest start of a needle that ``haystack`` ends with)."""
    if isinstance(found, _AtCut):
        size = _start_at_end(haystack, needles, MIN_CUT_PREFIX)
        if size:
            found.append(span(len(haystack) - size, len(haystack)))
        return
    for needle in needles:
        at = haystack.find(needle)
        while at >= 0:
            found.append(span(at, at + len(needle)))
            at = haystack.find(needle, at + 1)  # overlapping occurrences too


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span (overlapping ones merged) replaced by ``***``."""
    out: list[str] = []
    pos = 0
    start, end = -1, -1
    for begin, finish in sorted(spans):
        if begin < end:
            end = max(end, finish)
            continue
        if start >= 0:
            out += [text[pos:start], MASK]
            pos = end
        start, end = begin, finish
    if start >= 0:
        out += [text[pos:start], MASK]
        pos = end
    return "".join(out) + text[pos:]


def _read_both(
    text: str,
    spans: list[tuple[int, int]],
    read: Callable[[str, list[tuple[int, int]]], object],
) -> None:
    """Add to ``spans`` what ``read`` (the views, the number readings) finds in ``text``.

    With nothing found yet, ``text`` is read once. Otherwise it is read twice: with what
    was found starred (same length, so the same positions: as the readings read it masked
    before round 129, where a mask ends a token), and as given, keeping from that reading
    only the matches that hold no match found before whole (round 129: a view's match that
    shares characters with a written one, another secret's encoded form overlapping it;
    one holding a written secret whole is a loose reading of that secret, ``=48`` read as
    quoted-printable before ``483920``, the whole of a structured secret re-indented, and
    is not taken: the parts it holds are hidden already)."""
    if not spans:
        read(text, spans)
        return
    before = sorted(spans)
    read(_starred(text, before), spans)
    again: list[tuple[int, int]] = []
    read(text, again)
    if not again:
        return
    starts = [begin for begin, _ in before]
    # the least end of the spans found before starting at or after each one's start
    least = [finish for _, finish in before]
    for index in range(len(least) - 2, -1, -1):
        least[index] = min(least[index], least[index + 1])
    for begin, finish in again:
        index = bisect.bisect_left(starts, begin)
        if index == len(starts) or least[index] > finish:
            spans.append((begin, finish))


def _starred(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span's characters replaced by ``*`` (one for one: the same
    positions), as the later readings of :meth:`Redactor.text` read it."""
    chars = list(text)
    for begin, finish in spans:
        begin, finish = max(0, begin), min(finish, len(chars))
        if begin < finish:
            chars[begin:finish] = "*" * (finish - begin)
    return "".join(chars)


def _units(value: str) -> set[str]:
    """A secret as the numbers a list may give it: the bytes of its UTF-8, UTF-16 and UTF-32
    (either byte order), its UTF-16 code units and its code points."""
    wide = value.encode("utf-16-be", "surrogatepass")
    names = (*_BYTE_ENCODINGS, "utf-32-le", "utf-32-be")
    forms = {_latin(value.encode(name, "surrogatepass")) for name in names}
    forms.add("".join(chr(int.from_bytes(wide[i : i + 2], "big")) for i in range(0, len(wide), 2)))
    forms.add(value)
    return {form for form in forms if len(form) >= _MIN_ENCODED}


class _Needles:
    """What each view searches for one set of secrets.

    A backslash is no unit of the escape view, in any form (a run of backslashes is escape
    marks, whatever its length: escapes of escapes), so the escape view's needles are the
    secret without its backslashes, and with each blank as ``+`` (:func:`_fold`)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.chars: set[str] = set()  # the escape view, characters
        self.bytes: set[str] = set()  # the escape view, bytes
        self.wide_chars: set[str] = set()  # the escape view less NULs, characters
        self.wide_bytes: set[str] = set()  # the escape view less NULs, bytes
        self.utf7: set[str] = set()
        self.qp: set[str] = set()
        self.qp_escaped: set[str] = set()  # the quoted-printable view of the escape view
        self.numbers: set[str] = set()
        #: the gapped view: a secret's letters and digits, and the filler allowed before each
        self.gapped: dict[str, tuple[int, ...]] = {}
        #: the compatibility form (NFKC), searched in a text so normalised
        self.compat: set[str] = set()
        #: lower-cased, searched in the text (and its compatibility form) lower-cased
        self.caseless: set[str] = set()
        #: each run of non-ASCII characters as one U+FFFD (Latin-1 bytes read as UTF-8)
        self.replaced: set[str] = set()
        #: the break view, read with each joint (:data:`_BREAK_JOINTS`), of the text as
        #: written and of what the escape view decoded (no backslash there)
        self.breaks: dict[str, set[str]] = {joint: set() for joint in _BREAK_JOINTS}
        self.breaks_escaped: dict[str, set[str]] = {joint: set() for joint in _BREAK_JOINTS}
        #: the terminal view (round 47): the secret as written (and as that view reads it,
        #: for a secret holding a control), and without its backslashes inside escapes
        self.terminal: set[str] = set()
        self.terminal_escaped: set[str] = set()
        #: the skeleton view (round 49, :meth:`finish`): the secrets and their whole forms
        #: as it reads them, the break view's and the gapped view's needles over it, and
        #: each lower-cased for a secret of 8 characters or more with letters
        self.skeleton: set[str] = set()
        self.skeleton_breaks: dict[str, set[str]] = {joint: set() for joint in _BREAK_JOINTS}
        self.skeleton_gapped: dict[str, tuple[int, ...]] = {}
        self.skeleton_caseless: set[str] = set()
        self.caseless_breaks: dict[str, set[str]] = {joint: set() for joint in _BREAK_JOINTS}
        self.caseless_gapped: dict[str, tuple[int, ...]] = {}
        #: the stand-in view (round 101): a secret's ASCII runs and the characters allowed
        #: before each; lower-cased, searched in the text lower-cased (8+ with letters)
        self.standins: dict[tuple[str, ...], tuple[int, ...]] = {}
        self.caseless_standins: dict[tuple[str, ...], tuple[int, ...]] = {}
        self._values = list(secrets)
        #: a secret has a backslash before what reads as an escape: read marks only too
        self.marks = any(_ESCAPE_TOKEN.search(value) for value in secrets if "\\" in value)
        for value in secrets:
            utf8 = _latin(value.encode("utf-8", "surrogatepass"))
            size = len(value)
            _add(self.chars, _unescaped(value), size)
            _add(self.bytes, _unescaped(utf8), len(utf8))
            # A secret that itself reads as escapes, or whose start does after a backslash or
            # a % of the text before it (a path then "t0k\u00e9n"): as the view reads it. A
            # mark the view keeps as written is left out (the needle without it finds the
            # secret; with it, the text's character would be masked too, at a cut alone).
            plain_chars, plain_raw = (view.text() for view in _escape_view(value))
            _add(self.chars, _fold(plain_chars), -1)
            _add(self.bytes, _fold(plain_raw), -1)
            for prefix in ("\\", "%"):
                chars, raw = _escape_view(prefix + value)
                if chars.text() != prefix + plain_chars:
                    _add(self.chars, _fold(chars.text()), -1)
                if raw.text() != prefix + plain_raw:
                    _add(self.bytes, _fold(raw.text()), -1)
            for name in _BYTE_ENCODINGS[1:] if len(utf8) >= _MIN_ENCODED else ():
                _add(self.bytes, _unescaped(_latin(value.encode(name, "surrogatepass"))), -1)
            _add(self.wide_chars, _unescaped(value.replace("\0", "")), size)
            _add(self.wide_bytes, _unescaped(utf8.replace("\0", "")), len(utf8))
            replaced = _NON_ASCII.sub("\ufffd", value.replace("\0", ""))
            if replaced != value and len(replaced) - replaced.count("\ufffd") >= 4:
                _add(self.wide_chars, _unescaped(replaced), -1)  # U+FFFD for each run
            self.utf7.add(value)
            self.qp.add(utf8)
            if " " in value:  # an RFC 2047 Q encoded-word writes a blank as "_"
                self.qp.add(utf8.replace(" ", "_"))
            if (gapped := _gapped_needle(value)) is not None:
                needle, allowed = gapped
                known = self.gapped.get(needle, allowed)
                self.gapped[needle] = tuple(map(max, known, allowed))
            if (standin := _standin_needle(value)) is not None:
                runs, allowed = standin
                self.standins[runs] = allowed
                if any(run.lower() != run.upper() for run in runs):
                    self.caseless_standins[tuple(run.lower() for run in runs)] = allowed
            compat = unicodedata.normalize("NFKC", value)
            if compat == unicodedata.normalize("NFC", value) or len(compat) >= _MIN_ENCODED:
                self.compat.add(compat)
            if len(compat) >= _MIN_CASELESS and compat.lower() != compat.upper():
                # case-folded (full case mapping, round 106: ``ß`` upper-cased is ``SS``, a
                # final ``ς`` folds to ``σ``), and folded after upper-casing (``ı`` is ``I``)
                self.caseless.update({compat.casefold(), compat.upper().casefold()})
            if replaced != value and len(replaced) >= _MIN_ENCODED:
                self.replaced.add(_WIDE_CHARS.sub(_one_replacement, replaced))
            # after a ``=`` of the text before it, when that reads as a byte with its start
            after = _qp_view("=" + value).text()
            if after != "=" + utf8:
                _add(self.qp, after, -1)
            # quoted-printable read through the escape view: no backslash, "+" for a blank
            _add(self.qp_escaped, _unescaped(utf8), len(utf8))
            if after != "=" + utf8:
                _add(self.qp_escaped, _unescaped(after), -1)
            # a secret that itself reads as escapes (``%00``), as the escape view reads it
            read = _escape_view(value)[0].text().encode("utf-8", "surrogatepass")
            _add(self.qp_escaped, _fold(_latin(read)), -1)
            self.numbers |= _units(value)
            # Markdown escapes a ``_`` as ``\\_``, which the escape view reads as YAML's
            # U+00A0: the secret so escaped, as the view reads it
            if "_" in value:
                chars, raw = _escape_view(value.replace("_", "\\_"))
                _add(self.chars, _fold(chars.text()), size)
                _add(self.bytes, _fold(raw.text()), len(utf8))
            # drawn by a terminal: escape sequences or overstrikes between its characters
            for form in {value, _DRAWS_OTHERWISE.sub("", value)}:
                _add(self.terminal, form, size)
                _add(self.terminal_escaped, form.replace("\\", ""), size)
            # wrapped, folded or quoted: the secret as written and as the break view reads
            # it (a secret holding ``''`` or a line end); 6 units or more (shorter ones would
            # match by chance across the line ends of ordinary text)
            for joint in _BREAK_JOINTS:
                for form in (value, _break_view(value, joint).text()):
                    if len(form) >= _MIN_ENCODED and (not joint or joint in form):
                        self.breaks[joint].add(form)
                        if len(bare := form.replace("\\", "")) >= _MIN_ENCODED:
                            self.breaks_escaped[joint].add(bare)

    def finish(self) -> None:
        """The skeleton view's needles, once the whole forms are among the terminal and
        break view's (:class:`Redactor`): each form as the skeleton view reads it, kept
        when it is the form as written, 6 units or more, or 4 or more where only characters
        that draw otherwise were dropped (as the terminal view's; the break and gapped
        views': 6; a shorter secret's other characters read alike are
        another word: ``päss`` is not ``pass``)."""
        for form in list(self.terminal_escaped):  # the terminal view draws no mark
            if len(bare := "".join(c for c in form if _cells(c))) >= _MIN_ENCODED:
                self.terminal_escaped.add(bare)
        for form in self.terminal | self.compat:
            skel = _skeleton(form)
            drawn = skel == _DRAWS_OTHERWISE.sub("", form)  # only controls dropped
            if skel == form or len(skel) >= _MIN_ENCODED or (drawn and len(skel) >= 4):
                self.skeleton.add(skel)
        for joint in _BREAK_JOINTS:
            for form in self.breaks[joint]:
                if len(skel := _skeleton(form)) >= _MIN_ENCODED:
                    self.skeleton_breaks[joint].add(skel)
        for value in self._values:
            skel = _skeleton(value)
            if (gapped := _gapped_needle(skel)) is not None:
                _merge_gapped(self.skeleton_gapped, *gapped)
            if len(skel) < _MIN_CASELESS or skel.lower() == skel.upper():
                continue  # a word in another case is not a secret
            lowered = skel.lower()
            # searched case-folded (:func:`_find_lowered`): folded, and folded after
            # upper-casing (``ı`` upper-cased is ``I``, which folds to ``i``)
            folds = {skel.casefold(), skel.upper().casefold()}
            self.skeleton_caseless.update(folds)
            for joint in _BREAK_JOINTS:
                for fold in folds:
                    for form in (fold, _break_view(fold, joint).text()):
                        if len(form) >= _MIN_ENCODED and (not joint or joint in form):
                            self.caseless_breaks[joint].add(form)
            if (gapped := _gapped_needle(lowered)) is not None:
                _merge_gapped(self.caseless_gapped, *gapped)


def _merge_gapped(
    needles: dict[str, tuple[int, ...]], needle: str, allowed: tuple[int, ...]
) -> None:
    """Add a gapped needle, the filler it allows the most of either."""
    known = needles.get(needle, allowed)
    needles[needle] = tuple(map(max, known, allowed))


def _one_replacement(run: re.Match[str]) -> str:
    """A run of U+FFFD as one (what :data:`_WIDE_CHARS` squeezes), other text as it is."""
    return "\ufffd" if run.group()[0] == "\ufffd" else run.group()


def _unescaped(needle: str) -> str:
    """A needle as the escape view reads it: no backslash, ``+`` for a blank."""
    return _fold(needle).replace("\\", "")


def _add(needles: set[str], needle: str, size: int) -> None:
    """Add a needle that is the whole secret (``size`` units) or, shorter or another reading
    of it, long enough (4 units) not to mask common text."""
    if needle and (len(needle) == size or len(needle) >= 4):
        needles.add(needle)


#: A sealed value in the journal: ``v2:`` and the base64 of nonce and ciphertext.
_SEAL_PREFIX = "v2:"
_SEAL_AAD = b"plangate journal value"


class Redactor:
    """Replaces secret values with ``***`` in text and JSON data, in every encoding."""

    def __init__(self, values: Iterable[str], *, literal: Iterable[str] = ()) -> None:
        """``values``: secrets, found in every encoding and view. ``literal``: values found
        only as written (and upper-cased) and in their whole encodings (:func:`_written_forms`),
        by plain substring search: a random key the controller made (its seal key), which
        no one spells in another notation, at the cost of a few ``in`` tests per text."""
        secrets = {v for v in values if isinstance(v, str) and v}
        #: The values this redactor was made to hide (not the seal key): what a seal of data
        #: holding one of them carries on (:meth:`held_in`), so a later part of the run
        #: hides them whatever the secrets are then.
        self.given = tuple(sorted(secrets))
        self._given_forms: dict[str, tuple[str, ...]] = {}
        # What a tool takes of it: the value without its padding, and each value of a
        # structured one (round 108: a mapping in the secrets file, a JSON credential)
        secrets |= {part for v in secrets for part in _parts_of(v)}
        # A numeric secret as the number it stands for, written canonically (round 60)
        secrets |= {form for v in secrets for form in _number_forms(v)}
        # A multi-line secret (a PEM key) may be printed or quoted line by line (an error that
        # quotes a tool's last stderr line): each line of 4 characters or more is hidden too.
        lines = {line for v in secrets for line in _LINES.split(v) if len(line) >= 4} - secrets
        # Its lines joined again by other line ends, blanks or nothing (round 16: five lines of
        # 3 characters printed with CRLF were committed whole): each is the secret written.
        secrets |= {
            sep.join(parts)
            for v in secrets
            if len(parts := _LINES.split(v)) > 1
            for sep in _LINE_JOINS
            if len(sep.join(parts)) >= 4
        }
        # Its UTF-8 read as Latin-1 or Windows-1252 (round 35: mojibake kept its ASCII runs)
        secrets |= {form for v in secrets for form in _misread(v)}
        unique = {f for v in secrets for f in _written_forms(v)}
        unique |= {f for v in lines for f in _written_forms(v, whole=False)}
        secrets |= lines
        literal_forms = {
            form
            for v in literal
            if isinstance(v, str) and v
            for spelt in {v, v.upper()}
            for form in _written_forms(spelt)
        }
        self._values = sorted(unique | literal_forms, key=len, reverse=True)
        self._secrets = sorted(secrets, key=len, reverse=True)
        self._needles = _Needles(self._secrets)
        # The whole forms too (hex, base64, base32 at every alignment), line-wrapped: base64
        # at 64 or 76 characters a line (PEM, MIME), hex cut into lines
        self._needles.breaks[""] |= {f for f in unique if len(f) >= _MIN_ENCODED}
        # and drawn by a terminal (a colour change inside a base64 form)
        self._needles.terminal |= {f for f in unique if len(f) >= _MIN_ENCODED}
        self._needles.finish()
        # and so inside a string literal (base64 wrapped, its line ends escaped as ``\n``)
        self._needles.breaks_escaped[""] |= {
            bare for f in unique if len(bare := f.replace("\\", "")) >= _MIN_ENCODED
        }
        #: Secrets a number can spell (digits, a sign, a point): found again in numbers
        #: written another way (``4.8213957e7`` for ``48213957``: round 17).
        self._numeric = [v for v in self._secrets if _NUMERIC_SECRET.fullmatch(v)]
        #: Secrets of 6 digits or more: found again written with digit grouping (round 40).
        self._digits = [v for v in self._numeric if v.isdigit() and len(v) >= _MIN_ENCODED]
        #: The text before a cut the views read for a secret's start (:meth:`_cut_start`).
        self._cut_window = _CUT_SPREAD * max(map(len, self._secrets), default=0) + _CUT_SLACK

    def __bool__(self) -> bool:
        return bool(self._values)

    # --- sealing: the real values across a pause, kept unreadable without the secrets ----

    #: The key that seals real values for the journal (32 bytes; :func:`seal_key` reads or
    #: makes ``<state_dir>/seal.key``): set by the engine; None seals nothing.
    seal_key: bytes | None = None

    def _seal_cipher(self) -> Any:
        """ChaCha20-Poly1305 (``cryptography``) under :attr:`seal_key` through HKDF-SHA256:
        imported on first use, never on a command that seals nothing. Round 44: a key
        derived from the secrets themselves stopped opening when any unrelated secret was
        added while a plan waited at a gate (its gated tool then got ``***``)."""
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        if self.seal_key is None:
            raise ValueError("no seal key")
        key = HKDF(hashes.SHA256(), 32, salt=None, info=b"plangate seal v2").derive(self.seal_key)
        return ChaCha20Poly1305(key)

    def seal(self, value: Any) -> str | None:
        """``value`` (JSON data holding what this redactor hides) sealed for the journal:
        ChaCha20-Poly1305 with a random nonce under the state directory's key (round 43: a
        run resumed after a gate or an ask gets the values an unpaused run used, and a journal
        read without that key holds no secret). None when there is nothing to hide or no key."""
        if not self._values or self.seal_key is None:
            return None
        plain = json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
        nonce = os.urandom(12)
        sealed = self._seal_cipher().encrypt(nonce, plain, _SEAL_AAD)
        return _SEAL_PREFIX + base64.b64encode(nonce + sealed).decode("ascii")

    def held_in(self, value: Any, shown: Any) -> list[str]:
        """The values this redactor was given (:attr:`given`) that ``value`` (JSON data,
        ``shown`` as this redactor redacts it) holds: each value found as written, itself or
        one of its parts (a structured secret's fields, a number's canonical forms), raw or
        JSON-escaped, when a redactor of those alone hides all that this one hid; otherwise
        (an encoded form, a form only a view reads) every value given. The seal carries
        them to the run's later parts (:func:`held_values`)."""
        text = json.dumps(value, ensure_ascii=False)
        found = [v for v in self.given if any(f in text for f in self._forms_of(v))]
        if found and _built(found, ()).data(value) == shown:
            return found
        return list(self.given)

    def _forms_of(self, value: str) -> tuple[str, ...]:
        forms = self._given_forms.get(value)
        if forms is None:
            spelt = {value} | _parts_of(value)
            spelt |= {n for v in spelt for n in _number_forms(v)}
            escaped = {json.dumps(v, ensure_ascii=False)[1:-1] for v in spelt}
            forms = tuple(sorted((spelt | escaped) - {""}, key=len, reverse=True))
            self._given_forms[value] = forms
        return forms

    def unseal(self, text: Any) -> Any:
        """What :meth:`seal` sealed; :class:`ValueError` when it cannot be read (another key:
        ``seal.key`` was removed; or the text is not a seal)."""
        from cryptography.exceptions import InvalidTag

        if not self._values or not isinstance(text, str) or not text.startswith(_SEAL_PREFIX):
            raise ValueError("not a seal of these secrets")
        try:
            raw = base64.b64decode(text[len(_SEAL_PREFIX) :], validate=True)
        except (ValueError, TypeError):
            raise ValueError("not a seal") from None
        if len(raw) < 12 + 16:
            raise ValueError("not a seal")
        try:
            plain = self._seal_cipher().decrypt(raw[:12], raw[12:], _SEAL_AAD)
        except InvalidTag:
            raise ValueError("sealed under another key") from None
        return json.loads(plain.decode("utf-8"))

    def text(self, text: str) -> str:
        """``text`` with every secret hidden. Every match of every form, in every view, is
        found in the text as given, and the spans are masked once, overlapping ones merged
        (round 129: two secrets whose texts overlap, ``a + b[8:]``, were masked one match at
        a time; once one was ``***`` the other no longer matched and a part of it stayed).
        A secret's start that a cut left at the end is hidden after (:meth:`_cut_tail`,
        :meth:`_cut_marks`)."""
        spans: list[tuple[int, int]] = []
        for value in self._values:
            at = text.find(value)
            while at >= 0:  # every occurrence, overlapping ones too (``abab`` in ``ababab``)
                spans.append((at, at + len(value)))
                at = text.find(value, at + 1)
        if self._secrets:
            _read_both(text, spans, self._encoded_spans)
        if self._numeric:
            _read_both(text, spans, self._number_spans)
        if spans:
            text = _masked(text, spans)
        if CUT_NOTE in text:
            text = self._cut_tail(text)
        if any(mark in text for mark in CUT_MARKS):
            text = self._cut_marks(text)
        return text

    def _encoded_spans(
        self, text: str, found: list[tuple[int, int]] | None = None
    ) -> list[tuple[int, int]]:
        """Where ``text`` holds a secret encoded by character, by byte or by number: one
        pass of each view decodes the text (keeping a map back to it), each view's needles
        are searched in what it decoded, and the spans they came from are returned (into
        ``found``: an :class:`_AtCut` asks for the starts a cut at the text's end left)."""
        found = [] if found is None else found
        needles = self._needles
        if any(c in text for c in _ESCAPE_STARTS):
            if needles.marks and "\\" in text:
                chars, raw = _escape_view(text, marks_only=True)
                _find(_fold(chars.text()), needles.chars, chars.span, found)
                _find(_fold(raw.text()), needles.bytes, raw.span, found)
                _qp_inside(chars, needles.qp_escaped, found)
            chars, raw = _escape_view(text)
            decoded, decoded_raw = _fold(chars.text()), _fold(raw.text())
            _find(decoded, needles.chars, chars.span, found)
            _find(decoded_raw, needles.bytes, raw.span, found)
            for stream, units, wide, pattern in (
                (chars, decoded, needles.wide_chars, _WIDE_CHARS),
                (raw, decoded_raw, needles.wide_bytes, _WIDE_BYTES),
            ):
                if "\0" in units:  # UTF-16/32 text read as UTF-8: NULs between characters
                    squeezed = _squeezed(units, pattern)
                    _find(squeezed.text(), wide, _through(squeezed, stream), found)
            _qp_inside(chars, needles.qp_escaped, found)
            _breaks_inside(chars, needles.breaks_escaped, found)
            if chars.text() != text:  # fullwidth or another case, escaped
                _compat_inside(chars.text(), chars, needles, found)
            if chars.text() != text:  # terminal escapes escaped (``\u001b[1m`` in JSON)
                _terminal_inside(chars.text(), chars, needles.terminal_escaped, found)
            if needles.gapped and chars.text() != text:  # lone characters, each escaped
                inner, gaps = _gapped_view(chars.text())
                _find_gapped(inner.text(), gaps, needles.gapped, _through(inner, chars), found)
        skeleton = _skeleton_view(text)
        # the text as written, to the break and gapped views: unless its skeleton is read
        # from it character by character (then the views over the skeleton read it all)
        plain = skeleton.same or skeleton.drawn
        breaks: dict[str, tuple[_Stream, str]] = {}
        if plain and any(c in text for c in _BREAK_STARTS):
            for joint in _BREAK_JOINTS:
                if needles.breaks[joint] or needles.caseless_breaks[joint]:
                    stream = _break_view(text, joint)
                    breaks[joint] = stream, stream.text()
                    _find(breaks[joint][1], needles.breaks[joint], stream.span, found)
        if "+" in text:
            stream = _utf7_view(text)
            _find(stream.text(), needles.utf7, stream.span, found)
        if "=" in text:
            stream = _qp_view(text)
            _find(stream.text(), needles.qp, stream.span, found)
        gapped: tuple[_Stream, list[int]] | None = None
        if needles.gapped and plain:
            stream, gaps = gapped = _gapped_view(text)
            _find_gapped(stream.text(), gaps, needles.gapped, stream.span, found)
        # the terminal, hidden-character, mark, compatibility and case readings composed
        # (round 49), with the break and gapped views over what they read
        _skeleton_inside(skeleton, needles, (breaks, gapped), found)
        if needles.replaced and "\ufffd" in text:
            stream = _squeezed(text, _WIDE_CHARS)
            _find(stream.text(), needles.replaced, stream.span, found)
        if needles.numbers:
            for pattern, readings in (
                (_HEX_TOKEN, _HEX_READINGS),
                (_DEC_TOKEN, _DEC_READINGS),
                (_OCT_TOKEN, _OCT_READINGS),
                (_BIN_TOKEN, _BIN_READINGS),
            ):
                for stream in _code_run_view(text, pattern, readings):
                    _find(stream.text(), needles.numbers, stream.span, found)
        if needles.standins:  # each other character written in any short notation (101)
            _find_standins(text, needles.standins, found)
            lowered = text.lower()
            if needles.caseless_standins and len(lowered) == len(text):
                _find_standins(lowered, needles.caseless_standins, found)
        return found

    def _number_spans(self, text: str, found: list[tuple[int, int]]) -> None:
        """Add where ``text`` holds a numeric secret written as another number: in exponent
        or decimal notation, with digit grouping, or in digits of another script."""
        if "e" in text or "E" in text or "." in text:
            found += [m.span() for m in _NUMBER.finditer(text) if self._spells_number(m.group(0))]
        if self._digits:
            found += [m.span() for m in _GROUPED.finditer(text) if self._grouped(m)]
        if _NATIVE_DIGIT.search(text):
            # digits of another script, read one for one as ASCII (the same positions)
            plain = _NATIVE_DIGIT.sub(lambda m: str(unicodedata.decimal(m.group(0))), text)
            found += [m.span() for m in _GROUPED.finditer(plain) if self._grouped(m)]
            for secret in self._numeric:
                at = plain.find(secret)
                while at >= 0:
                    found.append((at, at + len(secret)))
                    at = plain.find(secret, at + 1)

    def _cut_tail(self, text: str) -> str:
        """Hide the start of a secret that a stream cut at its limit ended with."""
        at = text.rfind(CUT_NOTE)
        head = text[:at].rstrip("\ufffd")  # a character cut in half decodes as U+FFFD
        start = self._cut_start(head)
        return head[:start] + MASK + text[at:] if start < len(head) else text

    def _cut_start(self, head: str) -> int:
        """Where the start of a secret that ``head`` ends with begins (``len(head)``: none),
        in a whole form (one character or more) or in any view (round 111: ``upper()``,
        ``%XX``, ``\\u`` escapes, spaced out: only the whole forms were read). The views are
        the views of :meth:`_encoded_spans`, each finder reading a needle's start at the end
        of what it decoded (:class:`_AtCut`), over the last :attr:`_cut_window` characters,
        as they are and without a token the cut split (:func:`_cut_points`)."""
        start = len(head) - self._partial_at_end(head, 1)
        if not self._secrets:
            return start
        base = max(0, len(head) - self._cut_window)
        for end in _cut_points(head, base):
            found = _AtCut()
            self._encoded_spans(head[base:end], found)
            near = [begin for begin, stop in found if _reads_as_nothing(head[base + stop : end])]
            if near:
                start = min(start, base + min(near))
        return start

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
        return _start_at_end(head, self._values, minimum)

    def data(self, value: Any) -> Any:
        """A copy of JSON data with every secret hidden (the input is not changed).

        A mapping keeps every member of the input: keys that read the same once masked
        (round 46: a key holding a secret and a key written ``***``) are kept apart, each
        masked one of them under a placeholder of its own (:func:`_apart`)."""
        if not self._values:
            return value
        return self._walk(value, False)

    def view(self, value: Any) -> Any:
        """:meth:`data`, for queries: each mapping whose masked keys got placeholders is a
        :class:`controller.plan.jsonpaths.MaskedAlike`, which a query reads only by the
        names of its other keys (never written: YAML takes plain mappings only)."""
        if not self._values:
            return value
        return self._walk(value, True)

    def _spells(self, value: list[Any]) -> bool:
        """Whether a list of numbers (bytes, code units or code points: a Node Buffer's
        ``data``, a byte array) spells a secret: the whole list is then hidden."""
        if len(value) < _MIN_ENCODED or not self._needles.numbers:
            return False
        if not all(type(v) is int and 0 <= v <= 0x10FFFF for v in value):
            return False
        stream = "".join(map(chr, value))
        return any(needle in stream for needle in self._needles.numbers)

    def _grouped(self, number: re.Match[str]) -> bool:
        """Whether a number written with digit grouping holds a secret of digits."""
        digits = re.sub(r"[^0-9]", "", number.group())
        return any(secret in digits for secret in self._digits)

    def _spells_number(self, written: str) -> bool:
        """Whether a number in exponent or decimal notation is, written plainly, a secret."""
        try:
            value = float(written)
        except (ValueError, OverflowError):
            return False
        if not math.isfinite(value):
            return False
        plain = str(int(value)) if value.is_integer() and abs(value) < 2**63 else repr(value)
        return any(secret in plain for secret in self._numeric)

    def _lines_of(self, value: list[Any]) -> bool:
        """Whether a list of strings joined (by nothing or line ends: a multi-line secret
        returned as its lines) holds a secret its items alone do not show."""
        if len(value) < 2 or not all(isinstance(v, str) for v in value):
            return False
        return any(self.text(joined) != joined for joined in ("".join(value), "\n".join(value)))

    def _walk(self, value: Any, marked: bool) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            real = [str(k) for k in value]
            keys = [self.text(k) for k in real]
            values = [self._walk(v, marked) for v in value.values()]
            if len(set(keys)) == len(keys):
                return dict(zip(keys, values, strict=True))
            return _apart(real, keys, values, marked)
        if isinstance(value, list):
            if self._spells(value) or self._lines_of(value):
                return MASK
            return [self._walk(v, marked) for v in value]
        if isinstance(value, int | float) and not isinstance(value, bool):
            shown = json.dumps(value)
            return MASK if self.text(shown) != shown else value
        return value


def _apart(real: list[str], keys: list[str], values: list[Any], marked: bool) -> dict[str, Any]:
    """A mapping whose keys ``real`` read the same once masked (``keys``), kept whole (round
    46: the later key won, the other member vanished, and the value a query or a check read
    came from whichever key the tool wrote last). A key the masking did not change keeps its
    name; each masked key that reads like another key is ``<masked>~N`` (N from 1, the first
    not taken), in the order of the keys. The placeholders tell the members apart for a
    reader; a query never selects by them (:class:`controller.plan.jsonpaths.MaskedAlike`):
    which one gets which N is the order of the tool's keys, which carries no meaning."""
    seen: dict[str, int] = {}
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
    alike = [k != r and seen[k] > 1 for k, r in zip(keys, real, strict=True)]
    taken = {k for k, moved in zip(keys, alike, strict=True) if not moved}
    named: list[str] = []
    placeholders: set[str] = set()
    for key, moved in zip(keys, alike, strict=True):
        if moved:
            number = 1
            while f"{key}~{number}" in taken:
                number += 1
            key = f"{key}~{number}"
            taken.add(key)
            placeholders.add(key)
        named.append(key)
    if not marked:
        return dict(zip(named, values, strict=True))
    from controller.plan.jsonpaths import MaskedAlike

    found = MaskedAlike(zip(named, values, strict=True))
    found.masked = frozenset(placeholders)
    return found


def _qp_inside(chars: _Stream, needles: set[str], found: list[tuple[int, int]]) -> None:
    """Quoted-printable inside a string literal: the quoted-printable view of what the escape
    view decoded (round 17: a soft break JSON-escaped as ``=\\r\\n`` in a tool's JSON)."""
    decoded = chars.text()
    if "=" in decoded:
        inner = _qp_view(decoded)
        _find(_fold(inner.text()), needles, _through(inner, chars), found)


def _breaks_inside(
    chars: _Stream, needles: dict[str, set[str]], found: list[tuple[int, int]]
) -> None:
    """Wrapped or folded inside a string literal: the break view of what the escape view
    decoded (a line end escaped as ``\\n`` in JSON, YAML's escaped line break, a CSV field's
    ``""`` escaped as ``\\"\\"``)."""
    decoded = chars.text()
    if any(c in decoded for c in _BREAK_STARTS):
        for joint, wanted in needles.items():
            if wanted:
                inner = _break_view(decoded, joint)
                _find(inner.text(), wanted, _through(inner, chars), found)


def _compat_inside(
    text: str, outer: _Stream | None, needles: _Needles, found: list[tuple[int, int]]
) -> None:
    """The compatibility view (NFKC) of ``text`` and, for secrets long enough, ``text`` and
    that view lower-cased (``text``: the source, or the units of ``outer``'s view of it)."""
    compat = None
    if not text.isascii() and not unicodedata.is_normalized("NFKC", text):
        compat = _compat_view(text)
        _find(compat.text(), needles.compat, _within(compat.span, outer), found)
    if needles.caseless:
        plain = compat.text() if compat is not None else text
        folded = plain.casefold()
        span: Callable[[int, int], tuple[int, int]] = compat.span if compat else _same
        if len(folded) != len(plain):  # a character that folds to two (``ß``, ``İ``)
            fold = _lower_view(plain, str.casefold)
            folded = fold.text()
            span = _through(fold, compat) if compat is not None else fold.span
        _find(folded, needles.caseless, _within(span, outer), found)


def _within(
    span: Callable[[int, int], tuple[int, int]], outer: _Stream | None
) -> Callable[[int, int], tuple[int, int]]:
    """``span`` of units of ``outer``'s text mapped onto ``outer``'s source (if any)."""
    return span if outer is None else (lambda first, stop: outer.span(*span(first, stop)))


def _same(first: int, stop: int) -> tuple[int, int]:
    """The span of units that are the source's characters."""
    return first, stop


def _through(outer: _Stream, inner: _Stream) -> Callable[[int, int], tuple[int, int]]:
    """Spans of ``outer``'s units (themselves units of ``inner``) in ``inner``'s source."""
    return lambda first, stop: inner.span(*outer.span(first, stop))


def seal_key(path: Path) -> bytes:
    """The 32 random bytes at ``path`` (``<state_dir>/seal.key``, mode 0600), made on first
    use (created exclusively and fsynced: two runs racing read the same key)."""
    from controller.fsutil import fsync_dir, read_regular

    try:
        key = read_regular(path, 64)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        made = os.urandom(32)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            key = read_regular(path, 64)
        else:
            try:
                os.write(fd, made)
                os.fsync(fd)
            finally:
                os.close(fd)
            fsync_dir(path.parent)
            key = made
    if len(key) != 32:
        raise ValueError(f"{path}: not a seal key (32 bytes)")
    return key


def held_values(redactor: Redactor, records: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every secret value a run's journal shows it was given (round 126): the ``held`` list
    of each seal :meth:`Redactor.unseal` opens (the values the sealed data held, when it was
    sealed), or, for a seal made before round 126, each string, key and number of the real
    data that its recorded (redacted) form does not hold (the text the redactor changed,
    whole: it hides the value inside it, and its parts). A run's redactor hides them for the
    whole run, whatever the secrets file or the environment holds now."""
    held: set[str] = set()
    for record in records:
        if "sealed" not in record:
            continue
        try:
            kept = redactor.unseal(record["sealed"])
        except ValueError:
            continue  # another key: the run goes on with the recorded values (redacted)
        if not isinstance(kept, dict):
            continue
        if isinstance(kept.get("held"), list):
            held |= {v for v in kept["held"] if isinstance(v, str)}
            continue
        real = _leaves([kept.get("result"), kept.get("outputs")])
        shown = _leaves([record.get("result"), record.get("outputs")])
        held |= {v for v in real - shown if len(v) >= _MIN_PART}
    return held


def _leaves(value: Any) -> set[str]:
    """The strings, mapping keys and numbers (as JSON writes them) of JSON data."""
    found: set[str] = set()
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            found |= {str(k) for k in item}
            todo += item.values()
        elif isinstance(item, list):
            todo += item
        elif isinstance(item, str):
            found.add(item)
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            found.add(json.dumps(item))
    return found


#: Redactors :func:`redactor_for` made, by the values they hide (a handful: one per config
#: in force; a secret changed in the file makes a new one).
_MADE: dict[tuple[frozenset[str], frozenset[str]], Redactor] = {}


def redactor_for(config: Config) -> Redactor:
    """The redactor of every secret configured for ``config`` (e.g. for commit messages):
    the secrets are read again at each call (the file may have changed), the redactor built
    once per set of values (every printer and every commit message asks for it)."""
    values = _configured(config.secrets, os.environ).values()
    return _built([*values, *credentials_of(config, os.environ)[1]], seal_key_of(config))


def _built(values: Iterable[str], literal: Iterable[str]) -> Redactor:
    """The redactor of ``values`` and ``literal``, built once per set of them: building one
    finds every form and view of each value (milliseconds), and every run and every commit
    message asks (round 72's seal key made it every run's cost: the 1,000-plan merge burst
    spent 4 s building the same redactor). Shared: callers that set :attr:`Redactor.seal_key`
    take a copy (:class:`SecretStore`)."""
    wanted = (frozenset(values), frozenset(literal))
    made = _MADE.get(wanted)
    if made is None:
        if len(_MADE) >= 8:
            _MADE.clear()
        made = _MADE[wanted] = Redactor(wanted[0], literal=wanted[1])
    return made


def redact_text(config: Config, text: str) -> str:
    """``text`` with every configured secret value replaced by ``***``."""
    return redactor_for(config).text(text)
