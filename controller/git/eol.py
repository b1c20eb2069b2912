"""Git's built-in line-end conversion, in-process: what git stores for a working-tree file
and what it checks out for a blob, by the ``text``/``eol``/``crlf`` attributes and
``core.autocrlf``/``core.eol`` (git's ``convert.c``).

A ``.gitattributes`` line ``PLAN.yml text eol=crlf`` (common for Windows users) keeps LF
blobs and a CRLF working tree that ``git status`` calls clean: plangate compares and writes
through the same conversion (round 75); :mod:`controller.git.conversion` adds git's other
built-ins, ``ident`` and ``working-tree-encoding`` (round 76), in git's order. The agent
writes ``.gitattributes``, so a filter driver is never applied (a file that differs but
through one reads as edited: the safe side) and no program an attribute names is run. Pure:
the attributes and config values come in as strings.
"""

from __future__ import annotations

from dataclasses import dataclass

#: git's conversions (``enum convert_crlf_action``), after the config is applied
BINARY, TEXT_INPUT, TEXT_CRLF, AUTO_INPUT, AUTO_CRLF = (
    "binary", "text-input", "text-crlf", "auto-input", "auto-crlf",
)  # fmt: skip
#: no conversion at all (the usual repository: no attribute, no ``core.autocrlf``)
NONE = BINARY


@dataclass(frozen=True)
class EolConfig:
    """``core.autocrlf`` (``true``/``input``/``false``) and ``core.eol`` (``lf``/``crlf``/
    ``native``) as the repository's config gives them (empty: unset); with them the one other
    core setting of git's conversions, ``core.checkRoundtripEncoding`` (None: unset, git's
    default ``SHIFT-JIS``; :mod:`controller.git.conversion`)."""

    autocrlf: str = ""
    eol: str = ""
    roundtrip: str | None = None

    def text_is_crlf(self) -> bool:
        """Does a ``text`` file without ``eol`` get CRLF in the working tree? (``native`` on
        the POSIX systems plangate runs on is LF)."""
        auto = _bool(self.autocrlf)
        if auto == "input":
            return False
        return auto == "true" or self.eol.lower() == "crlf"


def action(text: str, eol: str, crlf: str, config: EolConfig) -> str:
    """The conversion for a path whose ``text``, ``eol`` and (deprecated) ``crlf`` attributes
    ``git check-attr`` gives as these values (``set``, ``unset``, ``unspecified`` or a value)."""
    chosen = _attr_action(text)
    if chosen is None:
        chosen = _attr_action(crlf)
    if chosen != BINARY:
        if chosen == "auto" and eol in ("lf", "crlf"):
            chosen = AUTO_INPUT if eol == "lf" else AUTO_CRLF
        elif eol == "lf":
            chosen = TEXT_INPUT
        elif eol == "crlf":
            chosen = TEXT_CRLF
    crlf_out = config.text_is_crlf()
    if chosen == "text":
        return TEXT_CRLF if crlf_out else TEXT_INPUT
    if chosen == "auto":
        return AUTO_CRLF if crlf_out else AUTO_INPUT
    if chosen is None:
        auto = _bool(config.autocrlf)
        return {"true": AUTO_CRLF, "input": AUTO_INPUT}.get(auto, BINARY)
    return chosen


def to_git(data: bytes, conversion: str) -> bytes:
    """What git stores for the working-tree bytes ``data`` (``git add``'s CRLF to LF). (An
    ``auto`` file whose indexed blob holds a CR is stored as it is: callers compare the raw
    bytes first, so that case reads clean too.)"""
    if conversion == BINARY or b"\r\n" not in data:
        return data
    if conversion in (AUTO_INPUT, AUTO_CRLF) and _is_binary(data):
        return data
    return data.replace(b"\r\n", b"\n")


def to_worktree(data: bytes, conversion: str) -> bytes:
    """What git checks out for the blob ``data`` (LF to CRLF where the conversion says)."""
    if conversion not in (TEXT_CRLF, AUTO_CRLF) or b"\n" not in data:
        return data
    lone_lf = data.count(b"\n") > data.count(b"\r\n")
    if not lone_lf:
        return data
    if conversion == AUTO_CRLF and (b"\r" in data or _is_binary(data)):
        return data  # git leaves a file with any CR, or one it guesses binary, alone
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


#: the bytes git counts as printable (every other is a control character, or DEL)
_PRINTABLE = bytes(c for c in range(256) if not (c < 32 or c == 127) or c in b"\b\t\n\r\x1b\x0c")


def _attr_action(value: str) -> str | None:
    """``crlf_action`` of one attribute (git's ``git_path_check_crlf``); None: undefined."""
    if value == "set":
        return "text"
    if value == "unset":
        return BINARY
    if value == "input":
        return TEXT_INPUT
    if value == "auto":
        return "auto"
    return None


def _bool(value: str) -> str:
    """``core.autocrlf`` as git reads it: ``input``, or a boolean."""
    low = value.strip().lower()
    if low == "input":
        return "input"
    return "true" if low in ("true", "yes", "on", "1") else "false"


def _is_binary(data: bytes) -> bool:
    """git's guess (``convert_is_binary``): a NUL, a lone CR, or too little printable text."""
    if b"\0" in data or data.count(b"\r") > data.count(b"\r\n"):
        return True
    body = data[:-1] if data.endswith(b"\x1a") else data  # a DOS end-of-file mark
    nonprintable = len(body.translate(None, _PRINTABLE))
    printable = len(body) - nonprintable
    return (printable >> 7) < nonprintable
