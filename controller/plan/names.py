"""Which names are a plan's (SPEC §2): the plan id rule, one for every reader.

A plan's id is its folder; its file is ``PLAN.yml`` or ``PLAN.yaml``. This module says which
paths name a plan (:func:`unsafe_name`: no folder named as a plan's file, source or record,
no hidden or odd blank character), and which entries of a folder are its plan file or claim
to be one (:func:`plan_file_claims`), compared as the file systems git guards against
compare them (:func:`fold`): a checkout on a case-insensitive file system makes ``plan.yml``
and ``PLAN.YML`` the plan file, one on HFS+ ``PLAN.y<U+200C>ml`` too. The history index,
``validate``/``show``, ``check``, the freezer, nested plans' pins and MCP all ask it, so the
next spelling fails the same way everywhere (rounds 69 to 72). The folder's other file a
reviewer reads, the controller's ``EXECUTION_LOG.md``, is compared by the same fold
(:func:`log_claims`, :func:`log_twins`: round 73, ``execution_log.md`` beside a plan).
A folder's plan source is judged by the same claims (:func:`source_verdict`, the daemon's
converter's rule), and :func:`folder_verdict` is the one verdict on a folder, plan file or
source, that the CLI and ``check`` read it by (round 74).
Every such comparison asks one function, :func:`same_name`: the fold, and the names NTFS
makes one with another (a trailing dot or space, the ``::$DATA`` stream, the 8.3 short name
``EXECUT~1.MD``: round 74).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping

from controller.display import HIDDEN, visible

PLAN_FILES = ("PLAN.yml", "PLAN.yaml")
#: A plan in another format (docs/formats.md) that the daemon converts to PLAN.yml.
SOURCE_FILES = ("PLAN.json", "PLAN.toon", "PLAN.md")

#: Folders a plan path may have (``plans/team/area/name/PLAN.yml`` is 5): deeper paths are
#: refused before anything walks or writes them (1,000 levels stopped every pass: round 11).
MAX_PATH_PARTS = 32
#: White space other than the plain space (U+00A0, U+3000, ...): it reads as a space.
_ODD_BLANK = re.compile(r"[^\S ]")
#: The code points HFS+ ignores in a name (Apple's TN1150; git's ``next_hfs_char``, which
#: ``core.protectHFS`` skips to find ``.git``): zero-width (non-)joiners, the bidi marks,
#: embeddings and overrides, the deprecated format characters U+206A-U+206F, the BOM. Every
#: one is also hidden (:data:`controller.display.HIDDEN`): a name holding one is unsafe.
HFS_IGNORED = frozenset(
    (*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF)
)
_DROP_IGNORED = dict.fromkeys(HFS_IGNORED)


#: A pure function asked for every entry of every folder: the names asked last kept (a
#: plan file's and folder names, and a commit's paths, asked again at once). 4,096, not
#: 65,536: every plan folder's name, asked a few times each, filled it in a cold scan of
#: 50,000 plans (about 9 MB: the name, its fold and the cache's link per entry), and the
#: first pass filled it again; an ASCII name's fold (nearly all) is two string operations.
@functools.lru_cache(maxsize=1 << 12)
def fold(name: str) -> str:
    """``name`` as the file systems a checkout lands on compare it (round 72): the code
    points HFS+ ignores dropped (:data:`HFS_IGNORED`), canonical equivalents one (HFS+
    stores NFD, APFS and NTFS keep either form; Python's canonical caseless match: NFD, case
    fold, NFD), case folded (``plan.YML``, ``PLAN.Jſon``), and the end NTFS drops gone
    (``PLAN.yml.``, ``PLAN.yml ``, ``PLAN.yml::$DATA``: round 74). Two names with one fold are
    one path somewhere, so a name whose fold is a plan file's claims its place
    (:func:`plan_file_claims`) and a folder whose fold is a plan's name is no plan folder
    (:func:`plan_named_folder`)."""
    if name.isascii():  # the usual name: NFD leaves it, and its case fold is lower()
        folded = _ntfs_bare(name.lower())
        return name if folded == name else folded  # kept once, not twice (perf80mem)
    bare = name.translate(_DROP_IGNORED)
    return _ntfs_bare(unicodedata.normalize("NFD", unicodedata.normalize("NFD", bare).casefold()))


#: What NTFS drops from the end of a name (Win32 path rules; git's ``is_ntfs_dotgit``): dots
#: and spaces, and the unnamed data stream ``::$DATA``: ``PLAN.yml.`` IS ``PLAN.yml`` there.
_NTFS_TAIL = re.compile(r"(?:[ .]|::\$data)+$")
#: An 8.3 short name as NTFS makes one (git's ``GIT~1`` for ``.git``): a prefix of the long
#: name's base, ``~`` and digits, then up to 3 characters of its extension.
_SHORT_NAME = re.compile(r"([^~.]{1,6})~([0-9]{1,6})(?:\.([^.]{1,3}))?")


def _ntfs_bare(folded: str) -> str:
    return _NTFS_TAIL.sub("", folded) or folded


def _is_short_name(folded: str, long: str) -> bool:
    """Is ``folded`` (a folded name) an 8.3 short name NTFS gives the folded name ``long``
    (``execut~1.md`` for ``execution_log.md``; ``~2`` and on for the next of one prefix)?"""
    found = _SHORT_NAME.fullmatch(folded)
    if found is None:
        return False
    # NTFS drops leading dots first (``.git`` -> ``GIT~1``, ``.plangate`` -> ``PLANGA~1``)
    stem, dot, ext = long.lstrip(".").rpartition(".")
    base = (stem if dot else ext).replace(" ", "").replace(".", "")
    prefix, digits, short_ext = found.group(1), found.group(2), found.group(3) or ""
    wanted = base[: 7 - len(digits)]
    return bool(base) and prefix == wanted and short_ext == (ext[:3] if dot else "")


def same_name(name: str, names: tuple[str, ...] | frozenset[str]) -> bool:
    """Is ``name`` one of ``names`` on a checkout git writes: the same :func:`fold` (case,
    HFS+'s ignored code points, NFC/NFD, NTFS's trailing dots, spaces and ``::$DATA``), or
    its NTFS 8.3 short name (``EXECUT~1.MD`` IS ``EXECUTION_LOG.md`` where 8.3 names are on,
    NTFS's default on a system drive; round 74). Every claim of a plan file's, a source's or
    the log's place is decided here, for every reader. A folder's own entry is named as git
    for Windows writes it (:func:`own_name`: ``\\PLAN.yml`` IS ``PLAN.yml``; round 79)."""
    folded, targets = fold(own_name(name)), _folds(names)
    if folded in targets:
        return True
    return "~" in folded and any(_is_short_name(folded, other) for other in targets)


#: The folder separators of a path as git for Windows reads it (``is_dir_sep``): ``\\`` too.
_SEPARATORS = re.compile(r"[/\\]")


def path_parts(path: str) -> list[str]:
    """The parts of the relative path ``path`` as git for Windows splits it (``is_dir_sep``
    takes ``\\`` for a separator): the folder ``plans/bs\\x`` is the path ``plans/bs/x`` there
    (round 76). Such a name is held for itself (:func:`unsafe_name`); split so, it is also
    the twin of the folder it names (:func:`same_path`). Windows drops an empty part
    (``plans\\\\x``, ``x\\``), so none is kept: a name of backslashes alone (the folder
    ``\\``) has no part, it is the folder it lies in (round 80: the root folder ``plans\\``
    IS ``plans``). The one rule for what a path lands on: every walk below asks it."""
    return [part for part in _SEPARATORS.split(path) if part]


def spelled_under(path: str, base: str) -> bool:
    """Does ``path`` lie below another spelling of the plans folder ``base``, one folder with
    it on some checkout (:func:`same_path`: ``PLANS/``, ``Plans/``, ``plans./``, ``plans /``,
    ``PLANS~1/``; a backslash split) but not ``base`` as written? Its files are the plans
    folder's there: their committers are writers of the folder they land on, a plan file
    among them claims the place of the plan at that path (round 84). No plan is ever read
    from it: the plans folder is compared as written for what IS a plan (round 80)."""
    if base in ("", ".") or path.startswith(f"{base}/"):
        return False
    top = path_parts(base)
    parts = path_parts(path)
    return len(parts) > len(top) and same_path("/".join(parts[: len(top)]), base)


def own_name(name: str) -> str:
    """The name the entry ``name`` of a folder has on a checkout git for Windows writes: its
    one part when :func:`path_parts` splits it to one (Win32 drops the empty parts around a
    backslash: ``plans/tb/\\PLAN.yml`` is written to ``plans/tb/PLAN.yml``, ``\\\\PLAN.yml``
    and ``PLAN.yml\\`` alike; round 79), else ``name``: a name that splits to more parts is
    a path into a folder below (:func:`split_files`), not an entry of this one."""
    if "\\" not in name:
        return name
    parts = path_parts(name)
    return parts[0] if len(parts) == 1 else name


def same_path(path: str, other: str) -> bool:
    """Are the relative paths ``path`` and ``other`` one path on a checkout git writes: as
    many parts (:func:`path_parts`: ``bs\\x`` is ``bs/x`` to git for Windows), each pair one
    name by :func:`same_name` either way (``FCASE/PLAN.yml`` and ``fcase/PLAN.yml``;
    ``rotate~1`` is the 8.3 short name of ``rotate-keys-prod``, not the other way round)?
    Round 75: every part of a plan's path is compared by the one rule its file name is, so
    two folders a checkout merges are one place."""
    parts, others = path_parts(path), path_parts(other)
    return len(parts) == len(others) and all(
        one == two or same_name(one, (two,)) or same_name(two, (one,))
        for one, two in zip(parts, others, strict=True)
    )


def fold_path(path: str) -> str:
    """``path`` with every part folded (:func:`fold`): two paths with one ``fold_path`` are
    :func:`same_path`; a part that may be an 8.3 short name (:func:`short_named`) is one
    path with a long name of another fold too."""
    return "/".join(fold(part) for part in path_parts(path))


def short_named(path: str) -> bool:
    """Does a part of ``path`` read as an NTFS 8.3 short name (``rotate~1``): a path
    :func:`same_path` with one of another :func:`fold_path`?"""
    return "~" in path and any(
        _SHORT_NAME.fullmatch(fold(part)) for part in path_parts(path) if "~" in part
    )


def path_twins(path: str, names_in: Callable[[str], Collection[str]], top: int = 1) -> list[str]:
    """The entries other than ``path`` (a folder's path relative to the repository) that are
    one folder with it on some checkout at ANY level below its first ``top`` parts (the
    plans folder, compared as written): ``plans/team/x`` of ``plans/Team/x``,
    ``plans/longte~1/x`` of ``plans/longteamname/x``, ``plans/bs\\x`` of ``plans/bs/x``
    (:func:`same_path`), found by walking down the listings ``names_in`` gives (a folder's
    entries; none for no folder), each level's entries one with the path's next part (or,
    holding a backslash, its next parts). The index finds a plan's twins among its plans by
    the same rule (:class:`controller.git.twins.FolderTwins`); a reader that has listings,
    not the index, asks this (round 76: a pin checked the last part only). A folder ``\\``
    has no part (:func:`path_parts`): ``plans/x/\\`` is ``plans/x`` (round 80)."""
    parts = path_parts(path)
    found, walk = [], [("/".join(parts[:top]), top)]
    while walk:
        folder, at = walk.pop()
        if at == len(parts):
            found.append(folder)  # and the folders ``\\`` in it: no part, the same folder
        for entry in names_in(folder):
            end = at + len(path_parts(entry))
            if end <= len(parts) and same_path(entry, "/".join(parts[at:end])):
                walk.append((f"{folder}/{entry}" if folder else entry, end))
    return sorted(twin for twin in found if twin != path)


def split_files(
    folder: str, names_in: Callable[[str], Iterable[str]], base: str = "."
) -> dict[str, str]:
    """The entries whose path, split by the one rule (:func:`path_parts`), is ``folder``
    (relative to the repository) and a name, while it holds a backslash: git for Windows
    writes them INTO the folder (round 77), each, as its path, -> the name it has there.
    ``plans/fy\\PLAN.yml`` is ``plans/fy/PLAN.yml`` (-> ``PLAN.yml`` of ``plans/fy``),
    ``plans/fu\\x\\PLAN.yml`` and ``plans/fm/x\\PLAN.yml`` are files of ``plans/fu/x`` and
    ``plans/fm/x``, found by a walk from the repository's root down every folder that lands on
    a part of ``folder``'s path (a twin folder on the way too: ``plans/FM/x\\PLAN.yml``; a root
    file ``plans\\ok\\EXECUTION_LOG.md``; the files of a root FOLDER ``plans\\rf/``, round
    79, and of ``plans\\`` itself: ``plans\\/tb/PLAN.yml`` IS ``plans/tb/PLAN.yml``, round
    80; a folder ``\\`` is the folder it lies in). The plans folder ``base`` is entered by
    every name that lands on it (:func:`_lands`), and the names below another spelling of it
    count as split too (:func:`spelled_under`: ``PLANS/uc/PLAN.yml``, ``plans./uc/PLAN.yml``
    are files of ``plans/uc`` there; round 84). A reader
    counts each name as an entry of the folder: a claim of its plan file's place
    (:func:`plan_file_claims`), of its log's (:func:`log_claims`). The folder's own entries
    are not among them: one split to one part (``plans/tb/\\PLAN.yml``) is that part's
    claim by :func:`same_name` (:func:`own_name`)."""
    base = "" if base in ("", ".") else base.strip("/")
    parts = path_parts(folder)
    top = len(path_parts(base)) if base and folder.startswith(f"{base}/") else 0
    found: dict[str, str] = {}
    walk = [("", 0)]
    while walk:
        place, at = walk.pop()
        for entry in names_in(place):
            split, path = path_parts(entry), f"{place}/{entry}" if place else entry
            end = at + len(split)
            # a name in it: split into it, or below another spelling of the plans folder
            # (``PLANS/uc/PLAN.yml``, ``plans./uc/``: round 84)
            spelled = "\\" in path or bool(top and spelled_under(path, base))
            named = end == len(parts) + 1 and spelled and place != folder
            if end <= len(parts) and _lands(entry, parts[at:end]):
                walk.append((path, end))  # a folder on the way, or one landing on ``folder``
            elif named and _lands("/".join(split[:-1]), parts[at:]):
                found[path] = split[-1]
    return found


def _lands(entry: str, parts: list[str]) -> bool:
    """Does the entry ``entry`` land on the path ``parts`` on some checkout, split by the one
    rule (:func:`same_path`)? The plans folder's own parts too (round 84): ``Plans/``,
    ``plans./``, ``PLANS\\`` land on it (no plan is read from them, but a plan file there
    is one file with the plan's on that checkout)."""
    return same_path(entry, "/".join(parts))


def twin_entries(name: str, names: Iterable[str]) -> list[str]:
    """The entries of a folder listing ``names`` other than ``name`` that are one entry with
    it on some checkout (:func:`same_path` of the two names): the twins of a plan's folder
    beside it (``plans/fcase`` of ``plans/FCASE``, ``plans/rotate~1`` of
    ``plans/rotate-keys-prod``; round 75)."""
    return sorted(other for other in names if other != name and same_path(other, name))


def twin_folders(folder: str, names: Callable[[str], Iterable[str]], base: str = ".") -> list[str]:
    """The folders other than ``folder`` (relative to the repository) that are one folder
    with it on some checkout, every part compared (:func:`same_path`) from the plans folder
    ``base`` down, as the history index compares whole plan ids
    (:class:`controller.git.twins.FolderTwins`); ``base`` itself is compared as written, a
    folder outside it from the repository's root. ``names`` lists a folder's entries (``""``
    the root; nothing for a file or a link). Round 76: a twin ABOVE the plan's own folder
    (``plans/team/x`` of ``plans/Team/x``, two levels up, in the middle) is one folder with
    it as a twin beside it is; every reader of a plan's path asks this one walk:
    :func:`path_twins` below ``base``'s parts (the pin verdict's walk)."""
    base = "" if base in ("", ".") else base.strip("/")
    top = len(path_parts(base)) if base and folder.startswith(f"{base}/") else 0
    return path_twins(folder, lambda place: list(names(place)), top)


@functools.lru_cache(maxsize=32)
def _folds(names: tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    return frozenset(fold(name) for name in names)


def unsafe_name(path: str) -> str | None:
    """Why a plan path (relative to the repo) is not a safe name, or None.

    A name is the plan's identity: it goes into commit subjects and trailers, logs and
    reviewers' terminals. Control characters, line breaks of any kind (LF, CR, VT, FF, NEL,
    U+2028, U+2029), bidi and zero-width characters could forge a trailer, a log line or what
    a reviewer reads, so a path with any of them is E_UNSAFE_PATH (see controller.display);
    so is one with a blank other than the plain space, or a folder name that begins or ends
    with a blank (it reads as another plan's name), or one holding a backslash (git for
    Windows reads ``plans/bs\\x`` as the path ``plans/bs/x`` and checks it out nowhere: round
    76; the folder it names is its twin, :func:`path_parts`).
    """
    parts = path.split("/")
    named = plan_named_folder(path)
    if named is not None:
        return named
    if len(parts) > MAX_PATH_PARTS or any(
        len(p.encode("utf-8", "surrogatepass")) > 255 for p in parts
    ):
        return (
            f"the path has a name over 255 bytes or more than {MAX_PATH_PARTS} folders: no file "
            "system holds it (it would stop every pass); rename the folder"
        )
    if "\\" in path:
        return (
            "a folder name holds a backslash: git for Windows takes it for a folder separator "
            "and checks no such path out (the folder 'bs\\x' is the path 'bs/x' there, which "
            "a reviewer reads); rename the folder"
        )
    found = HIDDEN.search(path) or _ODD_BLANK.search(path)
    if found is None:
        if any(part != part.strip() for part in path.split("/")):
            return (
                "a folder name begins or ends with a blank: 'tx ' reads as 'tx' in status, "
                "logs and commit subjects; rename the folder"
            )
        return None
    char = found.group(0)
    return (
        f"the path holds U+{ord(char):04X} ({char.encode('unicode_escape').decode()}), a control, "
        "line-break or invisible character that could forge a commit trailer or hide text; "
        "rename the folder"
    )


#: Files the controller itself writes in a plan's folder (the run's record).
RECORD_FILES = ("EXECUTION_LOG.md",)
#: Every name a plan's file has (PLAN.yml, PLAN.yaml), a plan source the controller converts
#: has, or a file the controller writes in a plan's folder has: a folder so named, in any
#: case, is no plan's folder (:func:`plan_named_folder`).
PLAN_NAMES = frozenset((*PLAN_FILES, *SOURCE_FILES, *RECORD_FILES))


def plan_named_folder(path: str) -> str | None:
    """Why ``path`` (a file's, relative to the repo) lies in a folder named as a plan file,
    a plan source or a file the controller writes in a plan's folder, in any case
    (``plans/x/PLAN.yml/PLAN.yml``, ``plans/x/EXECUTION_LOG.md/PLAN.yml``,
    ``plans/x/plan.YML/PLAN.yml``), or None. A plan's id is its folder and a path naming
    its file is read as that folder (MCP ``status``/``log``/``wait``, ``show``): a folder
    named ``PLAN.yml`` would be a second plan under the name of its parent's file (round
    69: the agent's folder read as Alice's completed plan), so it is no plan folder, and
    the folder above it, holding a plan file too, is E_PLAN_AMBIGUOUS. A folder at the
    place of the record's file, or a variant of a name by :func:`fold` (a checkout on a
    case-insensitive file system makes ``PLAN.YML`` the plan file, one on HFS+
    ``PLAN.y<U+200C>ml``), is none either (round 70: such folders were frozen as plans that
    MCP could not name; round 72)."""
    folders = path.split("/")[:-1]
    found = next((name for name in folders if same_name(name, PLAN_NAMES)), None)
    if found is None:
        return None
    return (
        f"a folder named {visible(found)} is no plan folder (a plan file's, a plan source's or the "
        "controller's record's name, in any case or spelling; a path naming a plan file is "
        "read as its folder's plan); rename the folder"
    )


_ORDER = {name: index for index, name in enumerate(PLAN_FILES)}


def plan_file_claims(names: Iterable[str]) -> list[str]:
    """The entries of one folder (files, folders, symlinks, gitlinks: every entry as listed,
    whatever its kind) that are its plan file or claim to be: a name whose :func:`fold` is
    ``PLAN.yml``'s or ``PLAN.yaml``'s (any case, HFS+'s ignored code points, NFC or NFD).
    More than one is E_PLAN_AMBIGUOUS (:func:`ambiguous_claims`): on a case-insensitive
    checkout ``plan.yml/`` beside ``PLAN.yml`` is one path, on HFS+ ``PLAN.y<U+200C>ml/``
    too, and a reviewer finds the other at the plan file's place (rounds 71, 72)."""
    found = [name for name in names if same_name(name, PLAN_FILES)]
    return sorted(found, key=lambda name: (name not in PLAN_FILES, _ORDER.get(name, 0), name))


def ambiguous_claims(names: Iterable[str]) -> list[str] | None:
    """The claims of :func:`plan_file_claims` when they make the folder E_PLAN_AMBIGUOUS
    (more than one), else None."""
    found = plan_file_claims(names)
    return found if len(found) > 1 else None


def source_claims(names: Iterable[str]) -> list[str]:
    """The entries of one folder that are a plan source (``PLAN.json``, ``PLAN.toon``,
    ``PLAN.md``) or claim to be one, by :func:`fold` as :func:`plan_file_claims` compares
    plan files: ``plan.JSON`` and ``PLAN.json<U+FEFF>`` are ``PLAN.json`` on a
    case-insensitive or HFS+ checkout. More than one is E_PLAN_AMBIGUOUS (a reviewer reads
    one, the daemon would convert the other: round 73); one under such a spelling alone is no
    source the daemon converts (said on its row, never converted)."""
    found = [name for name in names if same_name(name, SOURCE_FILES)]
    return sorted(found, key=lambda name: (name not in SOURCE_FILES, name))


def folder_verdict(folder: str, names: Collection[str]) -> tuple[str, str] | None:
    """Why no reader reads a plan of the folder ``folder`` listing ``names`` (every entry,
    whatever its kind), as (code, why), or None: the one verdict on a folder, for its plan
    file and its source alike. E_PLAN_AMBIGUOUS when entries claim the plan file's place
    (:func:`ambiguous_claims`: a reviewer could read one while the other ran); else the
    code for which its source waits (:func:`source_verdict`: a claim or a twin beside it,
    E_PLAN_AMBIGUOUS; a source under another spelling alone), as the history index and the
    daemon's converter judge the folder. ``check`` and the CLI's ``validate``, ``hash``,
    ``show`` and ``freeze`` ask it (:func:`controller.plan.plans.ambiguity`,
    :func:`controller.plan.plans.held_problem`; round 74: the CLI read, hashed and froze a
    source the controller held). ``folder`` is the folder's path relative to the repository,
    as the history index names it: a folder held by its name (:func:`name_verdict`) is held
    before any entry of it is looked at (round 75: the CLI froze, showed and committed into
    ``plans/a-sp `` and ``plans/a-<U+200C>zw``, held E_UNSAFE_PATH by their rows)."""
    named = name_verdict(folder)
    if named is not None:
        return named
    found = ambiguous_claims(names)
    if found is not None:
        return (
            "E_PLAN_AMBIGUOUS",
            f"the folder holds both {' and '.join(found)}: a reviewer could read one while the "
            "other ran (a case-insensitive checkout makes a case variant the plan file), so "
            "neither is read; delete one of them",
        )
    verdict = source_verdict(folder, names)
    return verdict if verdict is not None and verdict[0] else None


def name_verdict(folder: str) -> tuple[str, str] | None:
    """E_UNSAFE_PATH and why when the folder ``folder`` (relative to the repository) is held
    for its name alone, by the plan id rule the history index applies to every committed
    path (:func:`unsafe_name`: a name that begins or ends with a blank, a hidden, odd-blank
    or control character, a plan file's name, an impossible length), else None. A reader
    asks it before it trims, resolves or lists anything (round 75)."""
    why = pin_problem(folder)
    return None if why is None else ("E_UNSAFE_PATH", why)


def twin_folder_verdict(
    folder: str,
    twins: Mapping[str, Collection[str]],
    split: Mapping[str, str] | None = None,
    *,
    source: bool = False,
) -> tuple[str, str] | None:
    """E_PLAN_AMBIGUOUS, as (code, why), when a folder beside ``folder`` that is one folder
    with it on some checkout (``twins``: each such folder's path -> its entries, found by
    :func:`twin_entries`) holds a plan file or a claim of its place (:func:`plan_file_claims`):
    git writes both folders' files into one there, so a reviewer reads one plan file while
    the other runs (round 75: ``plans/fcase/`` beside ``plans/FCASE/``), as for a twin file
    in the folder itself (:func:`folder_verdict`); a file above it that git for Windows
    writes into it (``split``, :func:`split_files`: ``plans/fy\\PLAN.yml``; round 77) alike;
    else None. ``source``: ``folder``'s file is a plan source, held by a twin SOURCE too, as
    the daemon's converter holds it (``controller.service.sources.SourceFinder.twins``;
    round 82: ``plans/ss/PLAN.md`` beside ``plans/SS/PLAN.json`` read as valid); a plan
    file's twin source is no plan, never converted, and holds nothing."""
    claims = claims_a_place if source else lambda name: bool(plan_file_claims([name]))
    found = [f"{twin}/{name}" for twin, names in twins.items() for name in names if claims(name)]
    found += [path for path, name in (split or {}).items() if claims(name)]
    found = list(dict.fromkeys(found))  # a folder ``\\`` in the plan's is a twin AND split
    if not found:
        return None
    shown = " and ".join(visible(name) for name in found)
    what, done = ("the plan file", "read")
    if source:
        what, done = "a plan file or source", "read nor converted"
    return (
        "E_PLAN_AMBIGUOUS",
        f"{shown} {'is' if len(found) == 1 else 'are'} {what} of {visible(folder)} on "
        "a case-insensitive, HFS+ or NTFS "
        "checkout (the two folders are one there): a reviewer could read one while the other "
        f"ran, so neither is {done}; delete or rename one of the folders",
    )


def claims_a_place(name: str) -> bool:
    """Is ``name`` (one entry's) a plan file, a plan source, or a claim of either's place
    (:func:`fold`)? A path so named is read through :func:`folder_verdict` of its folder."""
    return bool(plan_file_claims([name]) or source_claims([name]))


#: The controller's record of a plan's run, beside its plan file (SPEC §1, §7).
LOG_NAME = RECORD_FILES[0]


def log_claims(names: Iterable[str]) -> list[str]:
    """The entries of one folder (every entry as listed, whatever its kind) that are its
    execution log or claim to be: a name whose :func:`fold` is ``EXECUTION_LOG.md``'s, the
    exact name first. On a case-insensitive checkout ``execution_log.md`` IS the plan's log,
    on HFS+ ``EXECUTION_LOG.md<U+200C>`` too: a reviewer opening the log reads whichever git
    wrote last (round 73). The plan file's claims are :func:`plan_file_claims`, by the same
    fold."""
    found = [name for name in names if same_name(name, RECORD_FILES)]
    return sorted(found, key=lambda name: (name != LOG_NAME, name))


def log_twins(names: Iterable[str]) -> list[str]:
    """The claims of :func:`log_claims` other than ``EXECUTION_LOG.md`` itself: the
    controller writes its record under that one name only, so each of them is someone
    else's text at the log's place, whoever committed it (every reader notes it
    ``E_OWNED_BLOCK_CHANGED``, :func:`controller.git.ownrecord.shown_record`; round 73)."""
    return [name for name in log_claims(names) if name != LOG_NAME]


def is_log_twin(name: str) -> bool:
    """Is ``name`` (one entry's) a claim of the log's place other than its own name?"""
    return name != LOG_NAME and same_name(name, RECORD_FILES)


def pin_problem(folder: str) -> str | None:
    """Why a nested plan's pinned folder (normalized, relative to the repo) names no plan,
    by the rule every reader finds plans by (round 71: a pin into ``EXECUTION_LOG.md/`` ran
    the plan of a folder ``status``, ``show`` and MCP refuse), or None."""
    return unsafe_name(f"{folder}/{PLAN_FILES[0]}")


#: The verdicts of :func:`source_verdict` that hold a folder: no file of it is read or run.
HELD_CODES = ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH")


def source_verdict(folder: str, names: Collection[str]) -> tuple[str, str] | None:
    """What a folder listing ``names`` holds as a plan source: None (no source, or a plan
    file: the plan is that file, the history index judges the folder), ("", name) (one
    source to convert), or (code, why) when its source waits: E_PLAN_AMBIGUOUS beside an
    entry claiming the plan file's place (:func:`plan_file_claims`:
    the PLAN.yml written would be neither read nor run), or beside a second source one path
    with it on a case-insensitive, HFS+ or NTFS checkout (:func:`same_name`); a source alone
    under such a spelling (``plan.json``) is converted from no name a reviewer sees:
    E_UNSAFE_PATH for a hidden
    character, else E_CONVERT_UNSUPPORTED (rename it); a source in a folder held for its
    name (``plans/c-sp /PLAN.json``) is E_UNSAFE_PATH (round 75: it had no row at all).
    Every reader of a folder asks it, the controller's converter and the readers of a plan
    by its id alike
    (:func:`controller.git.planstate.plan_file_of`; round 74: MCP ``log``, the page and
    ``/api/plan/`` answered "no plan" for a source the row held; the CLI and ``check``
    through :func:`folder_verdict`): a code in :data:`HELD_CODES` holds the folder."""
    found = source_claims(names)
    if not found or any(name in PLAN_FILES for name in names):
        return None
    shown = ", ".join(visible(name) for name in found)
    claims = plan_file_claims(names)
    if claims:
        held = " and ".join(visible(name) for name in claims)
        return (
            "E_PLAN_AMBIGUOUS",
            f"{folder} holds {held}, which claims the place of the PLAN.yml {shown} would "
            "be converted to: neither would be read or run; delete or rename it",
        )
    if len(found) > 1:
        twins = any(same_name(one, (other,)) for one in found for other in found if one != other)
        one_path = "; one path on a case-insensitive, HFS+ or NTFS checkout" if twins else ""
        return (
            "E_PLAN_AMBIGUOUS",
            f"{folder} holds several plan sources ({shown}{one_path}); keep one",
        )
    name = found[0]
    unsafe = unsafe_name(f"{folder}/{name}")  # the folder's name too (round 75: ``c-sp ``)
    if unsafe is not None:
        return "E_UNSAFE_PATH", unsafe
    if name in SOURCE_FILES:
        return "", name
    exact = next(s for s in SOURCE_FILES if same_name(name, (s,)))
    return (
        "E_CONVERT_UNSUPPORTED",
        f"{visible(name)} is not converted: a plan source is named exactly {exact}; rename it",
    )
