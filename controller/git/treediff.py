"""What changed between two versions of a tree, from the raw tree objects (pure).

A cold scan must know, for every first-parent commit, the files it changed under the plans
folder. ``git log --raw -- plans/`` inflates and walks both versions of the folder's tree for
each commit, matching the pathspec against every entry: with 10,000 plans (a 333 KB tree)
that was nearly all of a 37 s cold start. Two consecutive versions of a big flat tree share
almost all their bytes, so :func:`diff_level` finds their common prefix and suffix with
bytes comparisons (memcmp) and decodes only the entries in between, merged as git merges
them (``tree-diff.c``: entries in stored order, a folder sorting as ``name/``, modes made
canonical). The caller (:mod:`~controller.git.commits`) recurses into changed folders, so
the changes come out as ``git log --raw -r --no-renames`` prints them, in its order.

Anything git itself would refuse or read differently (a malformed entry, a name holding
``/``) raises :class:`TreeError`: the caller then asks git. So does a mode git shows in its
canonical form instead (``100664``; perf76): every entry a walk accepts then holds the very
mode a plain parse of its tree reads (:func:`controller.git.objects.parse_tree`), which the
walk's ``FileChange.old_mode`` relies on.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import NamedTuple, TypeGuard

S_IFMT = 0o170000
S_IFDIR = 0o040000
S_IFREG = 0o100000
S_IFLNK = 0o120000
S_IFGITLINK = 0o160000
#: Keep the offset of every MARK_EVERY-th entry of a big tree, to start decoding near a change.
MARK_EVERY = 64
#: Trees smaller than this are decoded whole (no prefix and suffix search).
SMALL_TREE = 2048
_OCTAL = b"01234567"


class TreeError(ValueError):
    """A tree object this module does not read exactly as git would."""


class Entry(NamedTuple):
    """One tree entry: its canonical mode and its 20-byte object id."""

    mode: int
    sha: bytes


#: (name, old entry, new entry): one entry that differs, a side None where absent.
Op = tuple[bytes, Entry | None, Entry | None]


def canon_mode(mode: int) -> int:
    """git's ``canon_mode``: 0644/0755 files, links, folders; anything else is a gitlink."""
    kind = mode & S_IFMT
    if kind == S_IFREG:
        return S_IFREG | (0o755 if mode & 0o100 else 0o644)
    if kind in (S_IFLNK, S_IFDIR):
        return kind
    return S_IFGITLINK


def is_dir(entry: Entry | None) -> TypeGuard[Entry]:
    return entry is not None and entry.mode & S_IFMT == S_IFDIR


def read_entry(data: bytes, pos: int) -> tuple[bytes, Entry, int]:
    """The entry at ``pos``: (name, entry, offset of the next one)."""
    space = data.find(b" ", pos)
    nul = data.find(b"\0", space + 1)
    if space <= pos or nul <= space + 1 or nul + 21 > len(data):
        raise TreeError("malformed tree entry")
    mode = data[pos:space]
    name = data[space + 1 : nul]
    if mode.strip(_OCTAL) or b"/" in name:
        raise TreeError("tree entry git would read differently")
    value = int(mode, 8)
    canonical = canon_mode(value)
    if canonical != value:  # a mode git shows as another (100664, 040755): git log reads it
        raise TreeError("tree entry with a mode git makes canonical")
    return name, Entry(canonical, data[nul + 1 : nul + 21]), nul + 21


def _key(name: bytes, entry: Entry) -> bytes:
    """git's order (``base_name_compare``) for names without ``/``: a folder as ``name/``."""
    return name + b"/" if entry.mode & S_IFMT == S_IFDIR else name


def diff_level(
    old: bytes, new: bytes, marks: list[int] | None = None
) -> tuple[list[Op], list[int]]:
    """The entries that differ between two raw trees, in git's order, and the marks of
    ``new`` (entry offsets) to pass when it is diffed next. ``marks`` are known entry
    offsets of ``old`` (sorted; 0 always is one)."""
    marks = marks or [0]
    big = min(len(old), len(new)) >= SMALL_TREE
    prefix = _common_prefix(old, new) if big else 0
    suffix = _common_suffix(old, new, min(len(old), len(new)) - prefix) if big else 0
    kept = bisect_right(marks, prefix)
    po, skipped = _skip_equal(old, marks[kept - 1], prefix)
    pn, delta, tail = po, len(new) - len(old), len(old) - suffix
    ops: list[Op] = []
    walked: list[int] = []
    while not (po >= tail and pn - po == delta):  # from there on both are byte for byte equal
        o = read_entry(old, po) if po < len(old) else None
        n = read_entry(new, pn) if pn < len(new) else None
        order = _compare(o, n)
        if order < 0 and o is not None:
            ops.append((o[0], o[1], None))
            po = o[2]
            continue
        if n is None:
            raise TreeError("tree walk out of step")  # not reachable: both ends meet the stop
        if order == 0 and o is not None:
            if o[1] != n[1]:
                ops.append((n[0], o[1], n[1]))
            po = o[2]
        else:
            ops.append((n[0], None, n[1]))
        pn = n[2]
        walked.append(pn)
    # Marks of `new`: those before the change, the walk's, and those after it (shifted).
    after = bisect_right(marks, po)
    new_marks = [*marks[:kept], *skipped, *walked[MARK_EVERY - 1 :: MARK_EVERY]]
    if after > kept and pn < len(new):
        new_marks.append(pn)  # in place of the marks the change covered
    new_marks += [m + delta for m in marks[after:]] if delta else marks[after:]
    return ops, new_marks


def _skip_equal(data: bytes, pos: int, prefix: int) -> tuple[int, list[int]]:
    """Past the entries that lie wholly in the common prefix (equal on both sides; every
    entry was checked when its bytes were first walked): (their end, marks on the way)."""
    marks: list[int] = []
    count = 0
    while True:
        nul = data.find(b"\0", pos)
        if nul < 0 or nul + 21 > prefix:
            return pos, marks
        pos, count = nul + 21, count + 1
        if count % MARK_EVERY == 0:
            marks.append(pos)


def _compare(o: tuple[bytes, Entry, int] | None, n: tuple[bytes, Entry, int] | None) -> int:
    """Which side comes first in git's order (an exhausted side comes last)."""
    if o is None:
        return 1
    if n is None:
        return -1
    ko, kn = _key(o[0], o[1]), _key(n[0], n[1])
    return -1 if ko < kn else 1 if ko > kn else 0


def _common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes ``a`` and ``b`` share (compared by memcmp, never copied)."""
    end, lo, step, view = min(len(a), len(b)), 0, 256, memoryview(b)
    while lo < end:
        hi = min(end, lo + step)
        if not a.startswith(view[lo:hi], lo):
            break
        lo, step = hi, step * 2
    else:
        return end
    while hi - lo > 1:  # a[:lo] == b[:lo], a[:hi] != b[:hi]
        mid = (lo + hi) // 2
        if a.startswith(view[lo:mid], lo):
            lo = mid
        else:
            hi = mid
    return lo


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """How many trailing bytes (at most ``limit``) ``a`` and ``b`` share."""
    la, lb, lo, step, view = len(a), len(b), 0, 256, memoryview(b)
    while lo < limit:
        hi = min(limit, lo + step)
        if not a.startswith(view[lb - hi : lb - lo], la - hi):
            break
        lo, step = hi, step * 2
    else:
        return limit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a.startswith(view[lb - mid : lb - lo], la - mid):
            lo = mid
        else:
            hi = mid
    return lo
