"""Which plan folders are one folder on some checkout (round 75): ``plans/FCASE`` and
``plans/fcase`` on a case-insensitive one, ``plans/fzw`` and ``plans/f<U+200C>zw`` on HFS+,
``plans/rotate-keys-prod`` and its 8.3 short name ``plans/rotate~1`` on NTFS. Git writes both
folders' files into one there, so a reviewer reads the one written last at the other's
place: every part of a plan's path is compared by the rule its file's name is
(:func:`controller.plan.names.same_path`; a backslash splits a name as git for Windows does:
``plans/bs\\x`` is ``plans/bs/x``, round 76). The history index keeps its plans here by the fold
of their path, so a plan's twins are found in one look-up (a short-named one in one walk),
not by comparing every pair of a 50,000-plan index.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator

from controller.plan.names import fold, fold_path, same_path, short_named


class FolderTwins:
    """Plan ids by the fold of their path; an id once added stays until it is looked up
    and found gone from the plans it is asked against (the index removes plans in many
    places: a look-up filters, nothing has to forget)."""

    def __init__(self, plan_ids: Iterable[str] = ()) -> None:
        #: fold -> the one id of that fold (nearly every fold: the id itself, as the key
        #: too), or the set of them (perf83mem: a set and a folded copy per plan were
        #: 4.5 MB of a 20,000-plan index, twice: the index's and the source finder's)
        self._by_fold: dict[str, str | set[str]] = {}
        self._short: set[str] = set()
        for plan_id in plan_ids:
            self.add(plan_id)

    def add(self, plan_id: str) -> None:
        fold = fold_path(plan_id)
        if fold == plan_id:
            fold = plan_id  # one string for both
        add_held(self._by_fold, fold, plan_id)
        if short_named(plan_id):
            self._short.add(plan_id)

    def discard(self, plan_id: str) -> None:
        """``plan_id`` no longer added (a holder that keeps no other set of its ids: the
        source finder's claimed folders, perf85mem)."""
        fold = fold_path(plan_id)
        held = self._by_fold.get(fold)
        if isinstance(held, set):
            held.discard(plan_id)
            if len(held) == 1:
                self._by_fold[fold] = next(iter(held))
        elif held == plan_id:
            del self._by_fold[fold]
        self._short.discard(plan_id)

    def __contains__(self, plan_id: object) -> bool:
        """Is ``plan_id`` added (and not discarded)?"""
        return isinstance(plan_id, str) and plan_id in self.ids(fold_path(plan_id))

    def __iter__(self) -> Iterator[str]:
        for held in self._by_fold.values():
            if isinstance(held, str):
                yield held
            else:
                yield from held

    def __len__(self) -> int:
        return sum(1 if isinstance(held, str) else len(held) for held in self._by_fold.values())

    def ids(self, fold: str) -> Collection[str]:
        """The ids added under ``fold``."""
        held = self._by_fold.get(fold, ())
        return (held,) if isinstance(held, str) else held

    def of(self, path: str, plans: Collection[str]) -> list[str]:
        """The ids among ``plans`` other than ``path`` that are one folder with ``path`` on
        some checkout (``path`` itself need not be a plan: a folder holding a log only)."""
        found = {p for p in self.ids(fold_path(path)) if p in plans}
        if short_named(path):  # an 8.3 name is one with a long name of another fold
            found |= {p for p in plans if same_path(p, path)}
        else:
            found |= {p for p in self._short if p in plans and same_path(p, path)}
        found.discard(path)
        return sorted(found)

    def known(self, path: str) -> list[str]:
        """:meth:`of` among every id added (not discarded), the index's plans or not: the
        folders one with ``path`` a tree may still hold (a commit's first parent: a twin
        folder the commit removed is no plan of the index any more, round 93), for a reader
        that lists each at its commit."""
        found = set(self.ids(fold_path(path)))
        if short_named(path):
            found |= {p for p in self if same_path(p, path)}
        else:
            found |= {p for p in self._short if same_path(p, path)}
        found.discard(path)
        return sorted(found)


def add_held(by: dict[str, str | set[str]], key: str, plan_id: str) -> None:
    """Add ``plan_id`` under ``key`` of a map holding a key's one id as that id alone and
    only several as a set (nearly every blob and fold has one plan)."""
    held = by.setdefault(key, plan_id)
    if isinstance(held, set):
        held.add(plan_id)
    elif held != plan_id:
        by[key] = {held, plan_id}


class Listing:
    """A folder's entries by the fold of their name (round 94): :func:`near` gives the few
    entries that may be one name with a part on some checkout, so a walk for the twins of
    one plan folder (:func:`controller.plan.names.path_twins`) compares a handful of the
    plans folder's 10,000 entries, not each. An entry holding a backslash (git for Windows
    splits it) or a ``~`` (an 8.3 short name) is compared always; a part that may be an
    8.3 short name is compared with every entry."""

    def __init__(self, names: Iterable[str]) -> None:
        self._names = list(names)
        self._by_fold: dict[str, str | set[str]] = {}
        self._odd: list[str] = []
        for name in self._names:  # a tree's names hold no ``/``: a ``\\`` alone splits one
            key = _key(name)
            if key is None:
                self._odd.append(name)
            else:
                add_held(self._by_fold, key, name)

    def near(self, part: str | None) -> list[str]:
        """The entries that may be one name with ``part`` (None: past the path's last part,
        only the entries of no part or many)."""
        if part is None:
            return self._odd
        if "~" in part or "\\" in part:
            return self._names
        key = _key(part)
        if key is None:
            return self._names
        held = self._by_fold.get(key, ())
        return [*((held,) if isinstance(held, str) else held), *self._odd]


def _key(name: str) -> str | None:
    """:func:`controller.plan.names.fold` of a name as :class:`Listing` keeps it, or None for
    one compared always (a ``\\`` or ``~`` in it, or an NTFS end only ``fold`` drops right):
    the usual ASCII name's fold is its lower case without trailing dots and spaces, read
    without the regular expression (a plans folder of 10,000 names is keyed once a commit)."""
    if "\\" in name or "~" in name:
        return None
    if name.isascii():
        if ":" in name:
            return None
        key = name.lower().rstrip(" .")
        return key or None
    return fold(name)


class SeenFolders:
    """Every folder spelling below the plans folder the history index has seen since it was
    seeded (round 94, perf): a plan's twin folder may be at a commit only where some level
    of its path was seen in another spelling of one fold (:func:`_key`), or beside a name
    compared always (a ``\\``, ``~`` or ``:`` in it). Over-inclusive by design: names are
    kept as hashes and never dropped (a folder deleted, a line rewound), so a hit means "list
    the tree" (:meth:`controller.git.lifecycle.Lifecycle._tree_twins`), a miss that no
    listing can find a twin. Seeded from one tree (every folder in it, :meth:`add_tree`) and
    then fed every first-parent commit's changed paths in order: each folder of a later
    commit's tree came in one of them."""

    def __init__(self) -> None:
        self._plain: set[int] = set()  # folds of the paths spelt as their fold
        self._spelt: dict[int, set[int]] = {}  # fold -> the other spellings seen
        self._odd: set[int] = set()  # folders holding a name compared always

    def add_file(self, parts: list[str]) -> None:
        """Note a changed entry's path (its parts from the plans folder down): its folders,
        and its own name when it is one compared always."""
        if parts:
            self.add(parts[:-1])
            if _key(parts[-1]) is None:
                self._odd.add(hash("".join(f"/{part}" for part in parts[:-1])))

    def add(self, parts: list[str]) -> None:
        """Note a folder path (its parts from the plans folder down) and each folder above."""
        raw = key = ""
        for part in parts:
            folded = _key(part)
            if folded is None:  # below it, a path is reached only through it: compared always
                self._odd.add(hash(raw))
                return
            raw, key = f"{raw}/{part}", f"{key}/{folded}"
            if raw == key:
                self._plain.add(hash(key))
            else:
                self._spelt.setdefault(hash(key), set()).add(hash(raw))

    def may_twin(self, parts: list[str]) -> bool:
        """Whether a folder path (parts from the plans folder down) may have a twin folder in
        a tree all of whose folders were noted: False only when no level of it was seen in
        another spelling and no level holds a name compared always."""
        raw = key = ""
        for part in parts:
            folded = _key(part)
            if folded is None or hash(raw) in self._odd:
                return True
            raw, key = f"{raw}/{part}", f"{key}/{folded}"
            others = self._spelt.get(hash(key), set()) - {hash(raw)}
            if others or (raw != key and hash(key) in self._plain):
                return True
        return hash(raw) in self._odd  # the folder itself holds one
