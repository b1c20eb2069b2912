"""glibc's ``iconv``, through :mod:`ctypes`: the converter git itself runs for
``working-tree-encoding`` (git's ``utf8.c`` ``reencode_string_iconv``; git on glibc links no
other iconv), so a plan file converts to the bytes git's conversion gives.

Python's codecs are not that converter: under the same name they map some characters to other
bytes (round 77: ``SHIFT-JIS`` reads 0x5C/0x7E as ``\\``/``~`` where iconv reads ``¥``/``‾``;
``BIG5`` writes ``／`` as bytes iconv reads as ``∕``; ``GBK`` cannot read iconv's ``€``), and
know names iconv does not (``unicode_escape``) or miss ones it knows (``UCS-2``). Where glibc
is not the C library (musl, macOS) nothing converts here (:class:`NoConverter`): whose iconv git
uses there is unknown, so nothing is guessed.
"""

from __future__ import annotations

import ctypes
import errno
from functools import cache

#: ``(iconv_t) -1`` and ``(size_t) -1``: iconv's failures
_FAILED = ctypes.c_void_p(-1).value
_ERROR = ctypes.c_size_t(-1).value


class NoConverter(Exception):
    """iconv cannot convert between these encodings (or there is no glibc iconv)."""


class _Iconv:
    """The three calls, typed (``iconv_t`` as a pointer, the buffers as moving pointers)."""

    def __init__(self, libc: ctypes.CDLL) -> None:
        self.open = libc.iconv_open
        self.open.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        self.open.restype = ctypes.c_void_p
        self.iconv = libc.iconv
        pointer, size = ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)
        self.iconv.argtypes = [ctypes.c_void_p, pointer, size, pointer, size]
        self.iconv.restype = ctypes.c_size_t
        self.close = libc.iconv_close
        self.close.argtypes = [ctypes.c_void_p]
        self.close.restype = ctypes.c_int


@cache
def _library() -> _Iconv | None:
    """The process's C library's iconv when that library is glibc (None otherwise)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.gnu_get_libc_version  # noqa: B018 - glibc's own symbol: this is glibc
        return _Iconv(libc)
    except (OSError, AttributeError):
        return None


def available() -> bool:
    """Is glibc's iconv there to convert with?"""
    return _library() is not None


def convert(data: bytes, to: str, source: str) -> bytes | None:
    """``data`` in ``source`` converted to ``to`` as git's ``reencode_string_iconv`` does:
    one pass, no final reset of a stateful encoding (git makes none), and None for input iconv
    refuses (an invalid or incomplete sequence: git's "failed to encode").
    :class:`NoConverter`: iconv cannot open the pair."""
    lib = _library()
    if lib is None:
        raise NoConverter("no glibc iconv")
    handle = lib.open(_name(to), _name(source))
    if handle is None or handle == _FAILED:
        raise NoConverter(f"iconv cannot convert {source} to {to}")
    try:
        return _run(lib, handle, data)
    finally:
        lib.close(handle)


def _name(encoding: str) -> bytes:
    # attribute values come from git as bytes (read as UTF-8 with surrogateescape)
    return encoding.encode("utf-8", "surrogateescape")


def _run(lib: _Iconv, handle: int, data: bytes) -> bytes | None:
    source = ctypes.create_string_buffer(data, len(data) or 1)
    inp, left = ctypes.c_void_p(ctypes.addressof(source)), ctypes.c_size_t(len(data))
    out: list[bytes] = []
    while True:
        room = left.value * 4 + 32  # any encoding's growth per call; E2BIG asks for more
        target = ctypes.create_string_buffer(room)
        outp, free = ctypes.c_void_p(ctypes.addressof(target)), ctypes.c_size_t(room)
        done = lib.iconv(handle, ctypes.byref(inp), ctypes.byref(left), ctypes.byref(outp),
                         ctypes.byref(free))  # fmt: skip
        failure = ctypes.get_errno() if done == _ERROR else 0
        out.append(target.raw[: room - free.value])
        if done != _ERROR:
            return b"".join(out)
        if failure != errno.E2BIG:
            return None
