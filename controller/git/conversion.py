"""Git's built-in conversions of a working-tree file, in-process (git's ``convert.c``): what
git stores for the file's bytes and what it checks out for a blob, in git's order.

- line ends (``text``/``eol``/``crlf``, ``core.autocrlf``/``core.eol``): :mod:`eol`;
- ``ident``: ``$Id$`` in the blob is ``$Id: <the blob's id> $`` in the working tree, and any
  ``$Id: ... $`` (on one line) is stored as ``$Id$``;
- ``working-tree-encoding=<enc>``: the blob is UTF-8, the working tree in ``<enc>`` (Python's
  codecs), with git's rules for byte order marks: ``UTF-16``/``UTF-32`` need one,
  ``UTF-16LE``/``-BE`` and ``UTF-32LE``/``-BE`` must not have one, ``UTF-16LE-BOM`` writes one.

A ``.gitattributes`` line saying ``ident`` or ``working-tree-encoding`` (round 76) left every
such plan waiting on "uncommitted edits" that ``git status`` did not see and no commit or
discard could remove; these are git's built-ins (nothing is run), so they are applied as git
applies them. An encoding Python does not know is :class:`AttributeUnsupported` (a plan under
it is held with that code until the attribute is removed). A filter driver is never applied
and no program an attribute names is run. Pure: the attributes come in as values.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from controller.errors import AttributeUnsupported
from controller.git import eol
from controller.git.objects import blob_id

#: the attributes ``git check-attr`` is asked for, in this order
ATTRIBUTES = ("text", "eol", "crlf", "ident", "working-tree-encoding")


@dataclass(frozen=True)
class Conversion:
    """What git does to one path: its line-end action (:mod:`eol`), whether ``ident`` is set
    and its ``working-tree-encoding`` ("": none, the blob's UTF-8)."""

    eol: str = eol.NONE
    ident: bool = False
    encoding: str = ""


#: no conversion at all (the usual repository)
NONE = Conversion()


def of_attributes(values: dict[str, str], config: eol.EolConfig) -> Conversion:
    """The conversion of a path whose attributes ``git check-attr`` gives as ``values``."""
    action = eol.action(values.get("text", ""), values.get("eol", ""), values.get("crlf", ""),
                        config)  # fmt: skip
    return Conversion(action, values.get("ident") == "set", _encoding(values))


def to_git(data: bytes, conversion: Conversion, path: str = "") -> bytes:
    """What git stores for the working-tree bytes ``data`` (``git add``): from the encoding,
    then line ends, then ``ident``. Bytes the encoding cannot read are kept as they are (git
    refuses to store them: they read as edited)."""
    if conversion.encoding:
        data = _from_encoding(data, conversion.encoding, path)
    data = eol.to_git(data, conversion.eol)
    return _collapse_ident(data) if conversion.ident else data


def to_worktree(data: bytes, conversion: Conversion, path: str = "") -> bytes:
    """What git checks out for the blob ``data``: ``ident``, then line ends, then the
    encoding (a blob it cannot write in the encoding, or an encoding it does not know: the
    bytes as they are, as git checks them out)."""
    if conversion.ident:
        data = _expand_ident(data)
    data = eol.to_worktree(data, conversion.eol)
    if conversion.encoding:
        data = _to_encoding(data, conversion.encoding, path)
    return data


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


# --- working-tree-encoding ---------------------------------------------------------------

#: the byte order marks git checks for UTF-16 and UTF-32 (``has_prohibited_utf_bom``)
_BOMS = {
    "16": (codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE),
    "32": (codecs.BOM_UTF32_BE, codecs.BOM_UTF32_LE),
}
#: the marks git writes itself for these names, and reads (``reencode_string_len``)
_WRITTEN_MARKS = {"16LE-BOM": codecs.BOM_UTF16_LE, "16BE-BOM": codecs.BOM_UTF16_BE}
_READ_MARKS = {"16LE-BOM": codecs.BOM_UTF16_LE}


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


def _codec(encoding: str, path: str, marks: dict[str, bytes]) -> str:
    """Python's codec for ``encoding``; ``marks``: the names git handles as UTF-16 behind a
    mark itself (git reads ``UTF-16LE-BOM`` but not ``UTF-16BE-BOM``: it cannot store such a
    file, and neither does plangate)."""
    utf = _utf_name(encoding)
    name = f"UTF-{utf.removesuffix('-BOM')}" if utf in marks else encoding
    try:
        codec = codecs.lookup(name).name
        "".encode(codec)  # a text encoding: Python's base64 or rot13 codecs are none
    except LookupError:
        raise AttributeUnsupported(
            f"working-tree-encoding={encoding} is an encoding plangate cannot convert",
            path=path,
            remedy=f"remove the working-tree-encoding attribute for {path or 'the file'} "
            "(or name an encoding Python knows) and commit .gitattributes",
        ) from None
    return codec


def _from_encoding(data: bytes, encoding: str, path: str) -> bytes:
    codec = _codec(encoding, path, _READ_MARKS)
    utf = _utf_name(encoding)
    size, order = utf[:2], utf[2:]
    # git refuses UTF-16 without a mark, UTF-16LE/BE with one: stored as they are
    if size in _BOMS and order in ("", "LE", "BE") and data.startswith(_BOMS[size]) != (not order):
        return data
    if utf in _READ_MARKS and data.startswith(_READ_MARKS[utf]):
        data = data[len(_READ_MARKS[utf]) :]
    try:
        return data.decode(codec).encode("utf-8")
    except UnicodeError:
        return data


def _to_encoding(data: bytes, encoding: str, path: str) -> bytes:
    try:
        text = data.decode("utf-8").encode(_codec(encoding, path, _WRITTEN_MARKS))
    except (UnicodeError, AttributeUnsupported):
        return data
    return _WRITTEN_MARKS.get(_utf_name(encoding), b"") + text
