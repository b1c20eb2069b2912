"""Git's built-in conversions of a working-tree file, in-process (git's ``convert.c``): what
git stores for the file's bytes and what it checks out for a blob, in git's order.

- line ends (``text``/``eol``/``crlf``, ``core.autocrlf``/``core.eol``): :mod:`eol`;
- ``ident``: ``$Id$`` in the blob is ``$Id: <the blob's id> $`` in the working tree, and any
  ``$Id: ... $`` (on one line) is stored as ``$Id$``;
- ``working-tree-encoding=<enc>``: the blob is UTF-8, the working tree in ``<enc>`` as git's
  own converter writes and reads it, glibc's iconv (:mod:`iconv`; round 77: Python's codecs
  of the same names map ``¥``, ``～``, ``／``, ``€`` ... to other bytes), with git's rules for
  byte order marks: ``UTF-16``/``UTF-32`` need one, ``UTF-16LE``/``-BE`` and
  ``UTF-32LE``/``-BE`` must not have one, ``UTF-16LE-BOM`` writes one.

A ``.gitattributes`` line saying ``ident`` or ``working-tree-encoding`` (round 76) left every
such plan waiting on "uncommitted edits" that ``git status`` did not see and no commit or
discard could remove; these are git's built-ins (nothing is run), so they are applied as git
applies them. An encoding iconv cannot open (or a platform without glibc's iconv) is
:class:`AttributeUnsupported` (a plan under it is held with that code until the attribute is
removed). A filter driver is never applied and no program an attribute names is run. Pure: the
attributes come in as values.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, replace

from controller.errors import AttributeUnsupported
from controller.git import eol, iconv
from controller.git.objects import blob_id

#: the attributes ``git check-attr`` is asked for, in this order
ATTRIBUTES = ("text", "eol", "crlf", "ident", "working-tree-encoding")


#: git stores the file in UTF-8, which another encoding spells in up to 4 bytes a byte
#: (UTF-32) or 5 (UTF-7's ``+AF8-`` for ``_``); a file wider still is over the limit.
WIDEST = 8


@dataclass(frozen=True)
class Conversion:
    """What git does to one path: its line-end action (:mod:`eol`), whether ``ident`` is set,
    its ``working-tree-encoding`` ("": none, the blob's UTF-8) and whether ``git add`` checks
    that encoding's round trip (``core.checkRoundtripEncoding`` names it)."""

    eol: str = eol.NONE
    ident: bool = False
    encoding: str = ""
    roundtrip: bool = False


#: no conversion at all (the usual repository)
NONE = Conversion()


def of_attributes(values: dict[str, str], config: eol.EolConfig) -> Conversion:
    """The conversion of a path whose attributes ``git check-attr`` gives as ``values``."""
    action = eol.action(values.get("text", ""), values.get("eol", ""), values.get("crlf", ""),
                        config)  # fmt: skip
    encoding = _encoding(values)
    roundtrip = bool(encoding) and _checks_roundtrip(encoding, config.roundtrip)
    return Conversion(action, values.get("ident") == "set", encoding, roundtrip)


def to_git(data: bytes, conversion: Conversion, path: str = "", *, adding: bool = False) -> bytes:
    """What git stores for the working-tree bytes ``data``: from the encoding, then line
    ends, then ``ident``. Bytes the encoding cannot read are kept as they are (``git status``
    hashes them so: they read as edited); ``adding`` (the bytes are to be committed, as by
    ``git add``, which refuses them): :class:`AttributeUnsupported`, never stored by a guess."""
    if conversion.encoding:
        data = _from_encoding(data, conversion, path, adding)
    data = eol.to_git(data, conversion.eol)
    return _collapse_ident(data) if conversion.ident else data


def to_worktree(data: bytes, conversion: Conversion, path: str = "") -> bytes:
    """What git checks out for the blob ``data``: ``ident``, then line ends, then the
    encoding (a blob iconv cannot write in the encoding, or an encoding it cannot open: the
    bytes as they are, as git checks them out)."""
    if conversion.ident:
        data = _expand_ident(data)
    data = eol.to_worktree(data, conversion.eol)
    if conversion.encoding:
        data = _to_encoding(data, conversion.encoding, path)
    return data


def check_checkout(blob: bytes, conversion: Conversion, path: str = "") -> None:
    """Refuse a blob git would not give back from its own checkout: ``to_git(to_worktree(
    blob)) != blob``, so ``git status`` would call the file modified the moment it is written
    (round 79: under ``working-tree-encoding=SHIFT-JIS`` git checks a ``\\`` or ``~`` out as
    0x5C/0x7E, iconv having no byte for it, and reads them back as ``¥``/``‾``). The text
    git's ``add`` adopts already passes (its round trip is checked the other way:
    :func:`to_git` ``adding``); this asks it of a text the controller itself turns into a
    blob (an agent's ``submit``, a freeze, an approval's status edit). Git reads as they are
    the bytes of an encoding iconv cannot open, and keeps the line ends of an ``auto`` file
    whose blob holds a CR (``has_crlf_in_index``). :class:`AttributeUnsupported` naming the
    path, the encoding and the characters that do not come back."""
    if conversion == NONE or not blob:
        return
    checked_out = to_worktree(blob, conversion, path)
    reading = conversion
    if conversion.eol in (eol.AUTO_INPUT, eol.AUTO_CRLF) and b"\r" in blob:
        reading = replace(reading, eol=eol.NONE)
    try:
        back = to_git(checked_out, reading, path)
    except AttributeUnsupported:  # an encoding iconv cannot open: git hashes them as they are
        back = to_git(checked_out, replace(reading, encoding=""), path)
    if back != blob:
        raise _not_given_back(path, conversion, blob)


def gives_back(blob: bytes, conversion: Conversion, path: str = "") -> bool:
    """Does :func:`check_checkout` pass? Asked of the controller's own records (round 80),
    which are committed either way: only the form of their marks depends on it."""
    try:
        check_checkout(blob, conversion, path)
    except AttributeUnsupported:
        return False
    return True


def _not_given_back(path: str, conversion: Conversion, blob: bytes) -> AttributeUnsupported:
    """The refusal of :func:`check_checkout`: the characters that do not survive the
    encoding on their own (iconv has no bytes for them, or its bytes read back as others)."""
    name = path or "the file"
    lost = _lost_characters(blob, conversion.encoding, path) if conversion.encoding else []
    if lost:
        shown = " ".join(repr(ch) for ch in lost[:12]) + (" ..." if len(lost) > 12 else "")
        why = f"working-tree-encoding={conversion.encoding} does not give back {shown}"
        change = f"leave out {shown}"
    else:
        why = "its line ends or $Id$ are checked out as other text"
        change = "change the text"
    return AttributeUnsupported(
        f"{name} would not read back from its checkout as the text committed: {why} (git "
        "status would call it modified); not committed",
        path=path,
        remedy=f"{change}, or change the attributes of {name} in .gitattributes (remove its "
        "working-tree-encoding, or name an encoding that holds the text) and commit it",
    )


def _lost_characters(blob: bytes, encoding: str, path: str) -> list[str]:
    """The characters of ``blob`` that do not come back from a checkout in ``encoding``."""
    alone = Conversion(encoding=encoding)
    lost = []
    for char in dict.fromkeys(blob.decode("utf-8", "replace")):
        data = char.encode("utf-8", "surrogatepass")
        try:
            back = to_git(to_worktree(data, alone, path), alone, path)
        except AttributeUnsupported:
            return []
        if back != data or _written(data, encoding, path) is None:
            lost.append(char)
    return lost


# --- ident -------------------------------------------------------------------------------

#: what ``ident_to_git`` stores as ``$Id$``: ``$Id:...$`` on one line
_EXPANDED_ID = re.compile(rb"\$Id:[^$\n]*\$")
#: what ``ident_to_worktree`` replaces: ``$Id$``, or ``$Id:...$`` on one line with a space
#: at most right after the colon and right before the dollar (``$Id: <sha> $``), not another
#: system's ``$Id: a b $``
_EXPANDABLE_ID = re.compile(rb"\$Id(?:\$|:(?:[^$\n](?:[^$\n ]*[^$\n])?)?\$)")


def _collapse_ident(data: bytes) -> bytes:
    return _EXPANDED_ID.sub(b"$Id$", data) if b"$Id:" in data else data


def _expand_ident(data: bytes) -> bytes:
    if b"$Id" not in data:
        return data
    stamp = b"$Id: %s $" % blob_id(data).encode()
    return _EXPANDABLE_ID.sub(stamp, data)


# --- working-tree-encoding -------------------------------------------------------------

#: the blob's encoding (git's ``default_encoding``)
_UTF8 = "UTF-8"
#: the byte order marks git checks for UTF-16 and UTF-32 (``has_prohibited_utf_bom``)
_BOMS = {
    "16": (codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE),
    "32": (codecs.BOM_UTF32_BE, codecs.BOM_UTF32_LE),
}
#: the names git writes behind a mark of its own (``reencode_string_len``): iconv's name, mark
_WRITTEN_MARKS = {"16LE-BOM": ("UTF-16LE", codecs.BOM_UTF16_LE),
                  "16BE-BOM": ("UTF-16BE", codecs.BOM_UTF16_BE)}  # fmt: skip
#: the name git reads as plain ``UTF-16`` (its mark says the order); ``UTF-16BE-BOM`` it
#: cannot read (iconv knows no such name: it cannot store such a file, nor does plangate)
_READ_AS_UTF16 = "16LE-BOM"


def _encoding(values: dict[str, str]) -> str:
    """The attribute's encoding as git reads it: unset, a boolean or UTF-8 itself is none."""
    value = values.get("working-tree-encoding", "")
    if value in ("", "set", "unset", "unspecified") or _utf_name(value) == "8":
        return ""
    return value


def _utf_name(encoding: str) -> str:
    """``16LE`` of ``UTF-16LE`` or ``utf16le`` (git's ``same_utf_encoding``); "" otherwise."""
    upper = encoding.upper()
    if not upper.startswith("UTF"):
        return ""
    return upper[3:].removeprefix("-")


def _breaks_marks(data: bytes, encoding: str) -> bool:
    """Do ``data`` break git's byte order mark rules for ``encoding`` (``validate_encoding``):
    ``UTF-16``/``UTF-32`` need a mark, their ``LE``/``BE`` forms must not have one?"""
    utf = _utf_name(encoding)
    size, order = utf[:2], utf[2:]
    return (
        size in _BOMS and order in ("", "LE", "BE") and data.startswith(_BOMS[size]) != (not order)
    )


def _from_encoding(data: bytes, conversion: Conversion, path: str, adding: bool) -> bytes:
    """git's ``encode_to_git``: as ``git status`` runs it, bytes that break the mark rules or
    that iconv refuses are hashed as they are (so they read as edited); as ``git add`` runs
    it, they are refused, and so are bytes that do not come back the same from the blob
    where git checks the round trip."""
    encoding = conversion.encoding
    source = "UTF-16" if _utf_name(encoding) == _READ_AS_UTF16 else encoding
    stored = _reencode(data, _UTF8, source, encoding, path)
    if not data:
        return data
    if stored is None or _breaks_marks(data, encoding):
        if adding:
            raise _refused(path, encoding, "its bytes break the encoding")
        return data
    if adding and conversion.roundtrip and _written(stored, encoding, path) != data:
        raise _refused(path, encoding, "it does not read back the same")
    return stored


def _to_encoding(data: bytes, encoding: str, path: str) -> bytes:
    """git's ``encode_to_worktree``: a blob iconv cannot write in the encoding (or an encoding
    it cannot open) is checked out as it is."""
    try:
        written = _written(data, encoding, path) if data else None
    except AttributeUnsupported:
        return data
    return data if written is None else written


def _written(data: bytes, encoding: str, path: str) -> bytes | None:
    """The UTF-8 ``data`` in ``encoding`` as git writes them, behind its own mark for the
    ``-BOM`` names; None: iconv refuses them."""
    target, mark = _WRITTEN_MARKS.get(_utf_name(encoding), (encoding, b""))
    written = _reencode(data, target, _UTF8, encoding, path)
    return None if written is None else mark + written


def _refused(path: str, encoding: str, why: str) -> AttributeUnsupported:
    """git's "failed to encode" (or "... and back is not the same") on ``git add``."""
    return AttributeUnsupported(
        f"git cannot store {path or 'the file'} from working-tree-encoding={encoding}: {why} "
        "(`git add` refuses it)",
        path=path,
        remedy=f"save {path or 'the file'} in {encoding} as git reads it (or remove the "
        "working-tree-encoding attribute and commit .gitattributes)",
    )


def _checks_roundtrip(encoding: str, listed: str | None) -> bool:
    """Does ``git add`` check ``encoding``'s round trip? (``check_roundtrip``: the name found
    first in ``core.checkRoundtripEncoding``, case aside, stands alone between blanks or
    commas.)"""
    names = ("SHIFT-JIS" if listed is None else listed).encode("utf-8", "surrogateescape")
    name = encoding.encode("utf-8", "surrogateescape")
    found = names.lower().find(name.lower())
    if found < 0:
        return False
    end, apart = found + len(name), b" \t\n\v\f\r,"
    return (found == 0 or names[found - 1 : found] in apart) and (
        end == len(names) or names[end : end + 1] in apart
    )


def _reencode(data: bytes, to: str, source: str, encoding: str, path: str) -> bytes | None:
    """``data`` converted by git's converter, glibc's iconv (:mod:`controller.git.iconv`;
    Python's codecs read some of these names otherwise, round 77), with git's second try at
    a name (``fallback_encoding``); None: bytes it refuses.
    :class:`AttributeUnsupported`: a name iconv cannot open (or no glibc iconv)."""
    try:
        try:
            return iconv.convert(data, to, source)
        except iconv.NoConverter:
            return iconv.convert(data, _fallback(to), _fallback(source))
    except iconv.NoConverter:
        raise AttributeUnsupported(
            f"working-tree-encoding={encoding} is an encoding plangate cannot convert",
            path=path,
            remedy=f"remove the working-tree-encoding attribute for {path or 'the file'} "
            "(or name an encoding git's iconv converts: `iconv -l` lists them) and commit "
            ".gitattributes",
        ) from None


def _fallback(encoding: str) -> str:
    """git's ``fallback_encoding``: the official spelling of UTF-8 and Latin-1."""
    if _utf_name(encoding) == "8":
        return _UTF8
    return "ISO-8859-1" if encoding.lower() == "latin-1" else encoding
