"""The working tree and its index (local mode): written only where plangate wrote.

After a commit made off-index, the same bytes are written into the working tree and only
those index entries are refreshed, so a human's staged or unstaged work is never staged,
committed or discarded.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shlex
import stat
import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from controller.errors import AttributeUnsupported, GitError, PlangateError
from controller.fsutil import READ_LIMIT, read_regular
from controller.git import attrfiles, conversion, eol
from controller.git.base import git_failure, write_note
from controller.git.objects import _BLOB_MODE, _EXEC_MODE, Objects, blob_id, stream_blob_id
from controller.git.records import ZERO, Person

_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git hash-object -t tree /dev/null
_U32 = 0xFFFFFFFF  # the index keeps each stat field's low 32 bits


#: The attributes that can hide every line of a file from its review: git's diff (``-diff``,
#: ``binary``) and the forges' folded "generated" files (:meth:`WorkTree.review_hiding`).
_REVIEW_ATTRIBUTES = ("binary", "diff", "linguist-generated", "gitlab-generated")
#: Words a line of an attribute file must hold to hide a file (:func:`_may_hide`).
_REVIEW_WORDS = re.compile(r"diff|binary|generated")


def _may_hide(data: bytes, place: str, path: str) -> bool:
    """Whether a line of the attribute file ``place`` holding ``data`` may give ``path`` an
    attribute of :data:`_REVIEW_ATTRIBUTES`. Over-inclusive by design, a "maybe" only costs
    a ``git check-attr``: any macro definition (``[attr]``, which may set any of them), a
    quoted pattern, a pattern with a bracket or a backslash (git's wildmatch reads ``[^x]``,
    ``[[:alpha:]]`` and ``\\.`` as ``fnmatch`` does not), and every pattern ``fnmatch``
    matches case-folded (its ``*`` also crosses ``/``). The file is read as git reads it:
    bytes (a ``?`` is one byte of a UTF-8 name), a UTF-8 BOM skipped, lines ended by LF
    alone, a pattern ended by a space, TAB or CR (round 116: ``PLAN.yml<CR>-diff`` and
    ``PLAN\\.yml -diff`` hid a plan from git's diff while this look said "no"). The usual
    ``*.png binary`` or ``*.sh text eol=lf`` costs no process."""
    import fnmatch

    folder = place.rpartition("/")[0]
    rel = (path[len(folder) + 1 :] if folder else path).encode("utf-8").decode("latin-1")
    text = data.removeprefix(b"\xef\xbb\xbf").decode("latin-1")
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("[attr]", '"')):
            return True
        pattern, *rest = re.split(r"[ \t\r]+", line, maxsplit=1)
        attributes = rest[0] if rest else ""
        if not _REVIEW_WORDS.search(attributes):
            continue
        pattern = pattern.lower().removeprefix("/")
        if "**" in pattern or "[" in pattern or "\\" in pattern:
            return True
        subject = rel if "/" in pattern.rstrip("/") else rel.rpartition("/")[2]
        if fnmatch.fnmatchcase(subject.lower(), pattern):
            return True
    return False


#: What ``git check-attr`` answers for a path no attribute file names.
_UNSPECIFIED = {name: "unspecified" for name in conversion.ATTRIBUTES}


#: The files whose checkout :meth:`WorkTree.write_worktree` remembers (a digest each): the
#: plans a burst runs at once, and more.
CHECKOUTS_KEPT = 4096


class WorkTree(Objects):
    """Writing files and index entries; what the working tree holds."""

    #: The controller's note of the ``index.lock`` it holds (in its state directory): after
    #: a crash (SIGKILL) while holding it, the next controller knows the stale lock as its own
    #: and removes it (:meth:`release_stale_index_lock`); a lock of anyone else's is left.
    index_lock_note: Path | None = None
    #: The parent of the commit whose entries are noted ("-": none known) and what the
    #: working tree held at each noted path then (see note_index_update).
    _note_context = b"-\n"

    #: (the config files' stats, their core.autocrlf/core.eol/...) as last read
    _eol_config: tuple[tuple[tuple[int, ...], ...], eol.EolConfig] | None = None
    #: ``core.attributesFile`` as last read with them ("": unset)
    _attributes_file = ""
    #: (the index file's stat, whether it names a ``.gitattributes``) as last read
    _index_attributes: tuple[tuple[int, ...], bool] | None = None
    #: Each path's conversion as asked while :meth:`remembering_conversions` (one pass), and
    #: the paths its first question asks for too; None: every question asks git.
    _remembered: dict[str, conversion.Conversion] | None = None
    _to_ask: tuple[str, ...] = ()
    #: path -> (the blob's id, the digest of its checkout) for the files :meth:`write_worktree`
    #: left holding a blob's checkout, the last :data:`CHECKOUTS_KEPT` (per instance; made
    #: on the first write): :meth:`holds_own_checkout`.
    _checkouts: dict[str, tuple[str, bytes]] | None = None
    #: (the index file's stat key, path -> blob) as this process's own index writes left
    #: it: the entries it set, while the index is that very file (:meth:`index_holds`)
    _own_index: tuple[tuple[int, ...], dict[str, str]] | None = None
    #: (the index file's stat key, folders listed, path -> its entries) as ``git ls-files``
    #: read them while the index was that very file (:meth:`_index_entries`)
    _listed: tuple[tuple[int, ...], set[str], dict[str, list[tuple[str, str, str]]]] | None = None

    def _index_entries(self, paths: Sequence[str]) -> dict[str, list[tuple[str, str, str]]]:
        """Each path's index entries, as (mode, blob, stage), from one ``git ls-files -s`` of
        the folders holding them, kept while the index file is the one it read (its stat
        key, taken before the read: a write meanwhile makes the next look read again). A
        plan's decision asks for its file, its start commit for the file and its log: one
        git process for both (bench_daemon's approval -> first action)."""
        key = _stat_key(self.git_dir / "index")
        listed = self._listed
        if listed is None or listed[0] != key or not key:
            listed = (key, set(), {})
        folders = {str(PurePosixPath(path).parent) for path in paths}
        missing = sorted(folder for folder in folders if folder not in listed[1])
        if missing or any(str(PurePosixPath(path).parent) == "." for path in paths):
            specs = [path for path in paths if str(PurePosixPath(path).parent) == "."]
            specs += [f"{folder}/" for folder in missing if folder != "."]
            out = self.run_raw("--no-optional-locks", "--literal-pathspecs", "ls-files", "-s",
                               "-z", "--", *specs)  # fmt: skip
            if out.returncode != 0:
                raise git_failure(("ls-files", "-s"), out.stderr.decode("utf-8", "replace"))
            fresh: dict[str, list[tuple[str, str, str]]] = {path: [] for path in paths}
            for entry in filter(None, out.stdout.split(b"\0")):
                meta, _, raw_path = entry.partition(b"\t")
                mode, sha, stage = meta.decode("ascii").split(" ")
                fresh.setdefault(raw_path.decode("utf-8", "surrogateescape"), []).append(
                    (mode, sha, stage)
                )
            # a new tuple, never one another thread reads changed in place
            listed = (key, listed[1] | {f for f in missing if f != "."}, {**listed[2], **fresh})
            self._listed = listed
        return {path: list(listed[2].get(path, [])) for path in paths}

    def hiding_bit(self, path: str) -> str | None:
        """``"assume-unchanged"`` or ``"skip-worktree"`` when ``path``'s index entry carries
        that bit (``git status`` then shows no edit of it, and ``git checkout --`` leaves it:
        round 116, hidden-index-bit-remedy-unworkable), else None (``git ls-files -v``: a
        lowercase tag is assume-unchanged, ``S`` skip-worktree)."""
        got = self.run_raw("--no-optional-locks", "--literal-pathspecs", "ls-files", "-v", "-z",
                           "--", path)  # fmt: skip
        tag = got.stdout[:1].decode("ascii", "replace") if got.returncode == 0 else ""
        if tag == "S" or tag == "s":
            return "skip-worktree"
        if tag.islower():
            return "assume-unchanged"
        return None

    @contextlib.contextmanager
    def remembering_conversions(self, paths: Sequence[str] = ()) -> Iterator[None]:
        """Within: a path's conversion is asked of git once, and the first question asks for
        ``paths`` too, at once (one ``git check-attr`` for a pass's plan files, as ``git
        status`` reads the attributes once; none where no question comes: the usual
        repository, whose bytes equal to the commit need no conversion, round 78). The next
        pass asks again."""
        outer = self._remembered is not None
        if not outer:
            self._remembered, self._to_ask = {}, ()
        self._to_ask = (*self._to_ask, *paths)
        try:
            yield
        finally:
            if not outer:
                self._remembered, self._to_ask = None, ()

    def conversions(self, paths: Sequence[str]) -> dict[str, conversion.Conversion]:
        """Git's built-in conversion of each of ``paths`` (:mod:`controller.git.conversion`):
        their line-end, ``ident`` and ``working-tree-encoding`` attributes as ``git
        check-attr`` reads them (it runs nothing an attribute names) and ``core.autocrlf``/
        ``core.eol`` (``core.checkRoundtripEncoding``)."""
        remembered = self._remembered
        if remembered is None:
            return self._asked_conversions(paths) or {path: conversion.NONE for path in paths}
        missing = [path for path in dict.fromkeys(paths) if path not in remembered]
        if missing:
            batch = list(dict.fromkeys([*missing, *self._to_ask]) - remembered.keys())
            found = self._asked_conversions(batch)
            if found is None:  # one path git cannot name fails the question: each alone
                found = {}
                for path in missing:
                    found.update(self._asked_conversions([path]) or {path: conversion.NONE})
            remembered.update(found)
        return {path: remembered[path] for path in paths}

    def review_hiding(self, commit: str, path: str) -> str | None:
        """The attribute the ``.gitattributes`` files committed in ``commit`` give ``path``
        that makes a review show none of its lines, as written there (``-diff``, ``binary``:
        git's diff says "Binary files differ"; ``linguist-generated``,
        ``gitlab-generated``: a forge folds the file away), else None (round 113,
        ``gitattributes-hides-plan-diff``). The commit's own files are asked, never the
        checkout's (what the reviewer's clone and the forge read): they are written into a
        working tree of their own for ``git check-attr`` (git 2.39 has no ``--source``), as
        the reviewer's checkout holds them; a file read there is read as a checkout's is,
        with its UTF-8 BOM skipped, which ``--cached`` does not (round 116). No process
        when the commit holds no attribute file on the way to ``path``."""
        folders = PurePosixPath(path).parts[:-1]
        places = [
            "/".join((*folders[:depth], ".gitattributes")) for depth in range(len(folders) + 1)
        ]
        # the mode first: its folder's lookup is kept per commit (no object read twice in a
        # pass, tests/service/test_burst_reads.py); the blob only of a regular file
        found = [
            (place, sha)
            for place in places
            if self.mode_of(commit, place) in ("100644", "100755")
            and (sha := self.blob_sha(commit, place)) is not None
        ]
        if not any(_may_hide(self.blob(sha), place, path) for place, sha in found):
            return None  # no line can give the path such an attribute: git is not asked
        with tempfile.TemporaryDirectory(prefix="plangate-attributes-") as tmp:
            tree = Path(tmp, "tree")
            for place, sha in found:
                (tree / place).parent.mkdir(parents=True, exist_ok=True)
                (tree / place).write_bytes(self.blob(sha))
            env = {
                "GIT_DIR": str(self.git_dir),
                "GIT_WORK_TREE": str(tree),
                "GIT_INDEX_FILE": os.path.join(tmp, "index"),
            }
            got = self.run("check-attr", "-z", *_REVIEW_ATTRIBUTES, "--", path, env=env)
        values = dict(zip(got.split("\0")[1::3], got.split("\0")[2::3], strict=False))
        if values.get("binary") == "set":
            return "binary"
        if values.get("diff") == "unset":
            return "-diff"
        for name in _REVIEW_ATTRIBUTES[2:]:
            if values.get(name) in ("set", "true"):
                return name
        return None

    def _asked_conversions(self, paths: Sequence[str]) -> dict[str, conversion.Conversion] | None:
        """``git check-attr`` of ``paths``; None when git refuses the question (a path it
        cannot name: no conversion, the file reads as edited)."""
        if self.bare or not paths:
            return {path: conversion.NONE for path in paths}
        config = self._eol_settings()
        # where no attribute can apply, git's answer is "unspecified" for each: the config's
        # conversion alone, without a process (issue 17: the approving pass's start commit)
        found: dict[str, dict[str, str]] = {
            path: {} if self._attributes_may_apply(path) else dict(_UNSPECIFIED) for path in paths
        }
        asked = [path for path, values in found.items() if not values]
        if asked:
            got = self.run_raw("check-attr", "-z", *conversion.ATTRIBUTES, "--", *asked)
            if got.returncode != 0:
                return None
            out = got.stdout.decode("utf-8", "surrogateescape").split("\0")
            for path, name, value in zip(out[0::3], out[1::3], out[2::3], strict=False):
                found.setdefault(path, {})[name] = value
        return {path: conversion.of_attributes(got, config) for path, got in found.items()}

    def _eol_settings(self) -> eol.EolConfig:
        """``core.autocrlf``/``core.eol``/``core.checkRoundtripEncoding`` as git reads them,
        again when one of the files git reads them from changes
        (:func:`~controller.git.attrfiles.config_files`: the repository's, a linked
        worktree's common one, and the operator's global and system files: a ``git config
        --global core.autocrlf true`` while the daemon runs applies from its next pass)."""
        key = tuple(map(_stat_key, attrfiles.config_names(self.git_dir, self.common_dir)))
        if self._eol_config is None or self._eol_config[0] != key:
            got = self.run_raw(
                "config", "-z", "--get-regexp",
                r"^core\.(autocrlf|eol|checkroundtripencoding|attributesfile)$",
            )  # fmt: skip
            values = dict(
                item.split("\n", 1) for item in got.stdout.decode("utf-8", "replace").split("\0")
                if "\n" in item
            )  # fmt: skip
            config = eol.EolConfig(
                values.get("core.autocrlf", ""),
                values.get("core.eol", ""),
                values.get("core.checkroundtripencoding"),
            )
            self._eol_config = (key, config)
            self._attributes_file = values.get("core.attributesfile", "")
        return self._eol_config[1]

    def as_committed(
        self,
        path: str,
        data: bytes,
        *,
        adding: bool = False,
        how: conversion.Conversion | None = None,
    ) -> bytes:
        """What git stores for the working-tree bytes ``data`` at ``path``: what it compares
        to tell a clean file from an edited one (``git status``), through git's built-in
        conversions (line ends, ``ident``, ``working-tree-encoding``; round 76).
        :class:`~controller.errors.AttributeUnsupported`: an encoding it cannot apply, or
        (``adding``: the bytes are to be committed, as ``git add`` would) bytes git refuses
        to add. ``how``: the path's conversion as already asked (:meth:`conversions` of many
        paths at once), else git is asked."""
        if how is None:
            how = self.conversions([path])[path]
        return conversion.to_git(data, how, path, adding=adding)

    def as_git_compares(self, path: str, data: bytes, committed: bytes | None) -> bytes:
        """The working tree's bytes ``data`` at ``path`` as git compares them with the
        committed blob ``committed`` to call the file clean or edited (``git status``): as
        :meth:`as_committed`, except that bytes equal to the blob stand for it (are clean)
        only when git's conversion reads them as the blob too, or when the index's stat data
        vouches for the file (:meth:`stat_vouches`: git then never reads it). Round 78: under
        ``working-tree-encoding=SHIFT-JIS`` git checks out the blob's ``\\`` as 0x5C and reads
        it back as ``¥``: ``git status`` calls the file modified, while round 8's UTF-8 file
        left untouched when the attribute came later is clean to git by its stat data."""
        if committed is None or data != committed:
            return self.as_committed(path, data)
        if not self._attributes_may_apply(path):
            return data  # git's conversion by config alone leaves a blob's own bytes so
        try:
            stored = self.as_committed(path, data)
        except AttributeUnsupported:  # git's iconv cannot open it either: hashed as they are
            return data
        if stored == data or self.stat_vouches(path, blob_id(data)):
            return data
        return stored

    def stat_vouches(self, path: str, sha: str) -> bool:
        """Does the index's entry of ``path`` name the blob ``sha`` with stat data that calls
        the file unchanged, as git 2.39 decides without reading it (``read-cache.c``
        ``ie_match_stat``, ``statinfo.c`` ``match_stat_data``, ``core.checkStat=default``,
        built without ``USE_NSEC``: whole seconds of mtime and ctime, inode, owner, size,
        the executable bit; the device is not compared)? Not when the entry is racily clean
        (the index file no later than the file, to the second: git reads such a file) or
        has no stat data (an entry written by ``update-index --index-info``). Asked of ``git
        ls-files --debug``, which runs no filter (never ``git status``: round 19)."""
        try:
            index_time = int(os.stat(self.git_dir / "index").st_mtime)  # before git reads it
            seen = os.lstat(self.path / path)
        except OSError:
            return False
        got = self.run_raw("--no-optional-locks", "--literal-pathspecs", "ls-files", "-s",
                           "--debug", "-z", "--", path)  # fmt: skip
        entry = _debug_entry(got.stdout, path) if got.returncode == 0 else None
        if entry is None or entry.sha != sha or not stat.S_ISREG(seen.st_mode):
            return False
        if index_time <= entry.stat[0]:
            return False  # racily clean: git compares the content
        now = (int(seen.st_mtime), int(seen.st_ctime), seen.st_ino, seen.st_uid, seen.st_gid,
               seen.st_size)  # fmt: skip
        same = entry.stat == tuple(value & _U32 for value in now)
        return same and entry.exec_bit == seen.st_mode & 0o100

    def _attributes_may_apply(self, path: str) -> bool:
        """Could any attribute apply to ``path``? A ``.gitattributes`` beside it or in a
        folder above it (in the working tree, or tracked: git reads the index's when the file
        is gone), ``info/attributes``, the global or system file. Without any, git's
        conversion is the config's alone, which leaves the blob's own bytes as they are
        (``core.autocrlf`` never converts a blob holding CRLF): no ``git check-attr`` then,
        the usual repository's pass asks git nothing more (tests/service/test_git_calls.py)."""
        if attrfiles.files_may_apply(self.path, self.git_dir, self.common_dir, path):
            return True
        if self._index_names_attributes():
            return True
        self._eol_settings()  # core.attributesFile with them (asked once, again on a change)
        return bool(self._attributes_file) and os.path.lexists(
            os.path.expanduser(self._attributes_file)
        )

    def _index_names_attributes(self) -> bool:
        """Does the index name a ``.gitattributes`` anywhere
        (:func:`~controller.git.attrfiles.index_may_name_attributes`; read again when the
        index changes)? Over-inclusive: only a question to git follows."""
        index = self.git_dir / "index"
        try:
            seen = os.stat(index)
        except OSError:
            return False
        key = (seen.st_ino, seen.st_mtime_ns, seen.st_size)
        if self._index_attributes is None or self._index_attributes[0] != key:
            data = attrfiles.index_bytes(index)
            found = attrfiles.index_may_name_attributes(data, self.git_dir)
            self._index_attributes = (key, found)
        return self._index_attributes[1]

    def as_checked_out(self, files: Mapping[str, bytes | None]) -> dict[str, bytes | None]:
        """``files`` (blobs) as git would check them out (its built-in conversions)."""
        conversions = self.conversions([path for path, data in files.items() if data])
        return {
            path: conversion.to_worktree(data, conversions[path], path)
            if data and path in conversions
            else data
            for path, data in files.items()
        }

    def check_checkouts(self, files: Mapping[str, bytes | None]) -> None:
        """Refuse ``files`` (blobs about to be committed) when git would not give one back
        from its checkout (:func:`controller.git.conversion.check_checkout`: written as
        :meth:`as_checked_out` writes it, ``git status`` would call it modified at once;
        round 79). :class:`~controller.errors.AttributeUnsupported` naming the path, the
        encoding and the characters. No ``git check-attr`` where no attribute can apply:
        git's conversion by config alone (``core.autocrlf``) gives every blob back."""
        paths = [path for path, data in files.items() if data and self._attributes_may_apply(path)]
        conversions = self.conversions(paths) if paths else {}
        for path, how in conversions.items():
            conversion.check_checkout(files[path] or b"", how, path)

    def gives_back(self, files: Mapping[str, bytes]) -> bool:
        """Would git give each of ``files`` back from its checkout (:meth:`check_checkouts`
        passes)? Asked of the controller's own records (round 80), which are committed either
        way: only the form of its marks depends on it."""
        try:
            self.check_checkouts(files)
        except AttributeUnsupported:
            return False
        return True

    def record_conversions(self, paths: Sequence[str]) -> dict[str, conversion.Conversion]:
        """The conversion of each of ``paths`` (a run's records, asked at its start within the
        pass's one question, round 80), git asked only where an attribute can apply."""
        asked = [path for path in paths if self._attributes_may_apply(path)]
        found = self.conversions(asked) if asked else {}
        return {path: found.get(path, conversion.NONE) for path in paths}

    def write_worktree(
        self, files: Mapping[str, bytes | None], modes: Mapping[str, int] | None = None
    ) -> None:
        """Write ``files`` (blobs) into the working tree as git would check them out
        (atomically and durably; None deletes). ``modes``: the mode each has in the commit
        (:meth:`~controller.git.objects.Objects.file_modes`); a file written gets that
        executable bit (a ``100755`` plan file stays executable, a ``100644`` one is not;
        round 87); without, a file keeps the mode of the one it replaces."""
        from controller.fsutil import write_atomic, write_atomic_many

        changed: list[tuple[Path, bytes]] = []
        executable: dict[Path, bool] = {}
        checkouts: dict[str, tuple[str, bytes]] = {}
        for path, data in self.as_checked_out(files).items():
            target = self.path / path
            self._forget_checkout(path)
            if _through_link(self.path, path):
                continue  # never write through a link someone put in the tree (SPEC §15)
            special = _special(target)
            if special == "folder":
                continue  # a folder where a file goes: what it holds is never touched
            if data is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                # a FIFO, device or socket someone put there is never opened (a FIFO blocks
                # its reader): the file is renamed over it, as a link is (round 106: an
                # EXECUTION_LOG.md FIFO kept the run's log out of its outcome commit)
                if (
                    special
                    or target.is_symlink()
                    or not target.exists()
                    or target.read_bytes() != data
                ):
                    changed.append((target, data))  # replaces a link itself, never its target
                    if modes is not None:
                        executable[target] = modes.get(path, _BLOB_MODE) == _EXEC_MODE
                blob = files[path]
                if blob is not None:
                    checkouts[path] = (blob_id(blob), hashlib.sha256(data).digest())
        # root: the folders are opened without following a link swapped in meanwhile
        if len(changed) == 1:
            target, data = changed[0]
            write_atomic(target, data, root=self.path, executable=executable.get(target))
        elif changed:  # a batched commit's files: their fsyncs together
            write_atomic_many(changed, root=self.path, executable=executable)
        self._keep_checkouts(checkouts)

    def displaced_versions(
        self,
        files: Mapping[str, bytes | None],
        head: str,
        own: Callable[[str], str | None],
        head_blob: Callable[[str, str], str | None] | None = None,
    ) -> list[tuple[str, str, bytes]]:
        """What a commit of ``files`` on ``head`` written into this checkout would displace:
        each working-tree file and index entry at those paths that holds neither ``head``'s
        version, nor the bytes the commit writes, nor ``own(path)`` (the blob the
        controller's own last commit of it left, asked only then), as (path, suffix, bytes):
        suffix ``""`` for the working tree's file, ``".staged"`` for the index's entry
        (``".stage<N>"`` for a conflict's), ``".note"`` for what cannot be saved as bytes
        (a link, a FIFO, an unreadable or oversized file: what it was, never its target).
        ``head_blob(head, path)``: ``path``'s blob at ``head`` (default: asked of git).
        Read as git compares (a file git calls clean is not displaced); never through a
        link. Round 122, ``log-edit-overwritten`` (:mod:`controller.git.displaced`)."""
        from controller.errors import PlanTooLarge

        found: list[tuple[str, str, bytes]] = []
        owned: dict[str, str | None] = {}

        def kept(path: str, sha: str | None, keep: set[str]) -> bool:
            if sha is None or sha in keep:
                return True
            if path not in owned:
                owned[path] = own(path)
            return sha == owned[path]

        blob_at = head_blob or self.blob_sha  # the caller's: a plan file's blob known
        heads = {path: (blob_at(head, path) if head else None) for path in files}
        keeps = {
            path: {s for s in (heads[path], None if data is None else blob_id(data)) if s}
            for path, data in files.items()
        }
        for path in files:
            if _through_link(self.path, path):
                continue  # never written there: nothing displaced
            target, keep = self.path / path, keeps[path]
            special = _special(target)
            if special == "folder":
                continue  # never touched by the write
            if special or target.is_symlink():
                what = (
                    f"a symbolic link to {os.readlink(target)!r}"
                    if target.is_symlink()
                    else "a FIFO, device or socket (never opened)"
                )
                if target.is_symlink() and kept(
                    path, blob_id(os.fsencode(os.readlink(target))), keep
                ):
                    continue
                found.append((path, ".note", f"{path} was {what}\n".encode()))
                continue
            try:
                raw = read_regular(target, root=self.path)
            except FileNotFoundError:
                continue
            except PlanTooLarge as exc:
                found.append((path, ".note", f"{path} was not saved: {exc.message}\n".encode()))
                continue
            except (OSError, PlangateError) as exc:
                found.append((path, ".note", f"{path} was unreadable: {exc}\n".encode()))
                continue
            if kept(path, blob_id(raw), keep):
                continue
            try:
                committed = None if heads[path] is None else self.blob(heads[path] or "")
                if committed is not None and self.holds_own_checkout(path, raw, committed):
                    continue  # this process's own checkout of it (git is not asked)
                stored = blob_id(self.as_git_compares(path, raw, committed))
            except (OSError, PlangateError):
                stored = None
            if stored is not None and kept(path, stored, keep):
                continue  # clean as git reads it (line ends, encodings)
            found.append((path, "", raw))
        found.extend(self._displaced_entries(files, heads, keeps, kept))
        return found

    def _displaced_entries(
        self,
        files: Mapping[str, bytes | None],
        heads: Mapping[str, str | None],
        keeps: Mapping[str, set[str]],
        kept: Callable[[str, str | None, set[str]], bool],
    ) -> list[tuple[str, str, bytes]]:
        """:meth:`displaced_versions`' index entries (one ``git ls-files``, unless the index
        is still this process's own last write and names each path's kept blob)."""
        own = self._own_index
        if (
            own is not None
            and own[0] == _stat_key(self.git_dir / "index")
            and all(own[1].get(path) in keeps[path] for path in files)
        ):
            return []
        entries = self._index_entries(list(files))
        found: list[tuple[str, str, bytes]] = []
        for path in files:
            got = entries.get(path, [])
            if not got:
                if heads[path] is not None and files[path] is not None:
                    note = f"{path} had no index entry (a staged removal: git rm --cached)\n"
                    found.append((path, ".staged.note", note.encode()))
                continue
            if len(got) == 1 and got[0][2] == "0" and kept(path, got[0][1], keeps[path]):
                continue
            for mode, sha, stage in got:
                suffix = ".staged" if stage == "0" else f".stage{stage}"
                if mode not in (f"{_BLOB_MODE:o}", f"{_EXEC_MODE:o}"):
                    note = f"{path}'s index entry was mode {mode}, object {sha}\n"
                    found.append((path, suffix + ".note", note.encode()))
                    continue
                try:
                    found.append((path, suffix, self.shared_blob(sha, READ_LIMIT)))
                except (OSError, PlangateError) as exc:
                    note = f"{path}'s index entry {sha} was not saved: {exc}\n"
                    found.append((path, suffix + ".note", note.encode()))
        return found

    def holds_own_checkout(self, path: str, data: bytes, committed: bytes) -> bool:
        """Are ``data``, the working tree's bytes at ``path``, the very bytes this process's
        :meth:`write_worktree` left there as the checkout of the blob ``committed``? Then the
        file is that blob's own checkout, clean as git reads it, and git is asked nothing
        (a run's outcome checks its plan file for edits made since its start commit wrote it;
        the run itself writes nothing into the shared tree, round 81). False whenever in
        doubt (never written by this process, written since as another blob, forgotten)."""
        known = (self._checkouts or {}).get(path)
        return known is not None and known == (blob_id(committed), hashlib.sha256(data).digest())

    def _keep_checkouts(self, checkouts: dict[str, tuple[str, bytes]]) -> None:
        kept = self._checkouts
        if kept is None:
            kept = self._checkouts = {}
        kept.update(checkouts)
        while len(kept) > CHECKOUTS_KEPT:
            del kept[next(iter(kept))]

    def index_holds(self, path: str, sha: str | None) -> bool:
        """Does the index's entry of ``path`` name the blob ``sha`` (stage 0, one entry)?
        A staged edit, a staged removal (``git rm --cached``) or a conflict says no: an
        uncommitted change of the file that an index write of the controller's would
        discard (round 116, staged-removal-discarded: the outcome's write put a removed
        entry back). No git process while the index is still the file this process's own
        last write left and that write, or one before it on the same file, set the entry
        (:meth:`_note_own_index`: a run's outcome after its start); else ``git ls-files``,
        which reads no working-tree file and takes no lock. ``sha`` None: does the index
        have no entry of ``path`` (:meth:`_indexed`)?"""
        if sha is None:
            return not self._indexed(path)
        own = self._own_index
        index = self.git_dir / "index"
        if own is not None and own[1].get(path) == sha and own[0] == _stat_key(index):
            return True
        try:
            entries = self._index_entries([path])[path]
        except GitError:
            return False
        return len(entries) == 1 and entries[0][1:] == (sha, "0")

    def _note_own_index(self, before: tuple[int, ...], records: bytes) -> None:
        """After this process's write of ``records`` over the index whose stat key was
        ``before``: the entries it knows, kept only while nobody else wrote the index."""
        own = self._own_index
        known = own[1] if own is not None and own[0] == before else {}
        for record in records.split(b"\0"):
            meta, _, raw = record.partition(b"\t")
            if not raw:
                continue
            path, sha = raw.decode("utf-8", "surrogateescape"), meta.split()[-1].decode()
            known.pop(path, None)
            if sha != ZERO:
                known[path] = sha
        while len(known) > CHECKOUTS_KEPT:
            del known[next(iter(known))]
        self._own_index = (_stat_key(self.git_dir / "index"), known)

    def _forget_checkout(self, path: str) -> None:
        if self._checkouts is not None:
            self._checkouts.pop(path, None)

    def set_index_entries(
        self,
        files: Mapping[str, bytes | None],
        hold: IndexHold | None = None,
        *,
        stored: bool = False,
        modes: Mapping[str, int] | None = None,
    ) -> None:
        """Point the index entries of ``files`` at these contents, leaving all others alone
        (through ``hold``, the lock taken before the commit moved the branch, when given).
        ``stored``: the blobs are in the store already (the commit of these very files wrote
        them; storing them again asked git, per file, whether the shared store held each
        and read it back: a third of a 1,000-plan burst's starts, issue 17). ``modes``: the
        mode of each in the commit (:meth:`~controller.git.objects.Objects.file_modes`;
        not given: ``100644``), the entry's mode as git's checkout sets it."""
        for data in () if stored else files.values():
            if data is not None:
                self.store_blob(data)
        if hold is not None:
            hold.write()
        else:
            self._update_index(_index_records(files, modes))

    def note_index_update(
        self,
        files: Mapping[str, bytes | None],
        parent: str,
        modes: Mapping[str, int] | None = None,
        kept: Collection[str] = (),
    ) -> None:
        """Before a commit of ``files`` on ``parent`` moves the branch: note the entries it
        sets, so that a controller killed before it wrote them into the working tree and the
        index (:meth:`recover_index`) can still make both agree with the commit. Only with
        :attr:`index_lock_note`. ``modes``: :meth:`file_modes` of ``parent`` (asked when not
        given), the modes the commit keeps. ``kept``: files whose working-tree bytes are a
        person's, never written back (noted as holding nothing of the controller's)."""
        if self.index_lock_note is None:
            return
        if modes is None:
            modes = self.file_modes(parent, list(files))
        held = []  # what each file holds now: the controller's own last write (a run's
        for path in files:  # checkpoint) or the version the commit replaces
            try:
                sha = blob_id(read_regular(self.path / path, root=self.path))
            except (OSError, PlangateError):
                sha = "-"  # none, or a link: never written through
            if path in kept:
                sha = "!"  # a person's: matches no version _repair_file writes over
            held.append(f"{sha}\t{path}\0")
        self._note_context = (parent + "\n" + "".join(held)).encode("utf-8", "surrogateescape")
        write_note(self.index_lock_note, self._noted(b"-", _index_records(files, modes)))

    def _noted(self, header: bytes, records: bytes) -> bytes:
        return b"%s\n%d\n%s%s" % (header, len(records), records, self._note_context)

    def _update_index(self, records: bytes) -> None:
        self._hold(records).write()

    def hold_index(
        self, files: Mapping[str, bytes | None], modes: Mapping[str, int] | None = None
    ) -> IndexHold:
        """Take ``index.lock`` to point the entries of ``files`` at these contents
        (:meth:`IndexHold.write`, through :meth:`set_index_entries`).

        A commit of the working tree's files takes it before it moves the branch and keeps
        it until the index holds what it committed: a human's ``git commit`` between the two
        built its tree from the index's older entries and silently took the controller's
        change back (the demo, under load); now it fails on the lock, as git's own commands
        do beside each other, and is run again. A human's ``git add``/``commit`` holding it
        for a moment is waited for (bounded). ``modes``: as :meth:`set_index_entries`'s."""
        return self._hold(_index_records(files, modes))

    def _hold(self, records: bytes) -> IndexHold:
        lock_path = self.git_dir / "index.lock"
        for delay in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0):
            if self.index_lock_note is not None:  # a kill between the two is still ours
                header = b"P %d" % time.time_ns()
                write_note(self.index_lock_note, self._noted(header, records))
            try:
                lock = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                time.sleep(delay)
                continue
            hold = IndexHold(self, lock, self._note_index_lock(lock, records), records)
            try:
                self._index_readable()
            except BaseException:
                hold.release()
                raise
            return hold
        raise git_failure(
            ("update-index", "--index-info"),
            f"fatal: Unable to create '{lock_path}': File exists.",
        )

    def _index_readable(self) -> None:
        """Refuse, while the lock is held and before the commit moves the branch, an index git
        cannot read: its signature, version and checksum checked in-process (round 112,
        ``corrupt-index-approve-commits``: ``approve`` committed, then answered E_STORAGE
        with a remedy that failed on that index). No git process: the new index itself is
        made once the branch moved (:meth:`IndexHold.write`), off the approval's path (made
        here, it cost the first action 13 ms on a 10,000-plan index)."""
        index = self.git_dir / "index"
        data = attrfiles.index_bytes(index)
        if data is None:
            return  # no index yet: git starts an empty one
        why = _index_damage(data)
        if why is None:
            return
        raise GitError(
            f"git cannot read the index {index} ({why}); nothing was committed",
            path=str(index),
            remedy=f"rebuild it from the branch: rm -f {shlex.quote(str(index))} && git "
            "reset -q (the working tree is kept; add again what was staged)",
        )

    def _note_index_lock(self, lock: int, records: bytes) -> Path | None:
        """Record which file is the lock this process holds (device, inode, change time) and
        the entries it sets: git's lock outlives a process killed while holding it, and every
        later controller waited on it for good (a SIGKILL in a burst: the update runs git
        under the lock). The change time tells it from a lock made later in a reused inode;
        nothing writes the lock (:meth:`IndexHold.write`), so it keeps that time."""
        note = self.index_lock_note
        if note is None:
            return None
        identity = "L " + " ".join(map(str, _lock_identity(os.fstat(lock))))
        write_note(note, self._noted(identity.encode("ascii"), records))
        return note

    def recover_index(self) -> bool:
        """After a controller was killed between a commit and its updates of the working tree
        and the index: remove the ``index.lock`` it left (only when the note names that very
        file); where the checked-out commit holds exactly what the controller committed (a
        commit that never landed sets nothing), write the noted files into the working tree
        when they still hold the version the commit replaced (nobody's edit is overwritten),
        remove the temp files its interrupted writes left beside them, and point the index
        entries at them (round 28). True when a stale lock was removed. Called once the state
        directory is held: no other process of this controller can hold the lock then."""
        note = self.index_lock_note
        if note is None:
            return False
        try:
            header, _, rest = note.read_bytes().partition(b"\n")
            size, _, rest = rest.partition(b"\n")
            records, context = rest[: int(size)], rest[int(size) :]
            parent_raw, _, held_raw = context.partition(b"\n")
            kind, *fields = header.split() or [b"-"]
            parent = parent_raw.decode("ascii") if parent_raw != b"-" else None
            held: dict[bytes, str] = {}
            for entry in held_raw.split(b"\0"):
                if entry:
                    sha, _, path = entry.partition(b"\t")
                    held[path] = sha.decode("ascii")
        except (OSError, ValueError):
            return False  # none (the usual case), or the lock not known as ours yet
        lock_path = self.git_dir / "index.lock"
        try:
            st: os.stat_result | None = os.lstat(lock_path)
        except OSError:
            st = None
        released = st is not None and _ours(lock_path, st, kind, fields)
        if released:
            lock_path.unlink(missing_ok=True)
            (self.git_dir / INDEX_NEW).unlink(missing_ok=True)  # its unfinished new index
        elif st is not None:
            return False  # someone's git holds it now: the next start tries again
        noted = [record for record in records.split(b"\0") if record]
        landed = [record for record in noted if self._at_head(record)]
        for record in landed:
            self._repair_file(record, parent, held)
        owed = [record for record in landed if self._entry_owed(record, parent, held)]
        owed += self._moved_past(noted, landed, parent, held)
        if owed:
            self._update_index(b"".join(record + b"\0" for record in owed))
        note.unlink(missing_ok=True)
        return released

    def _entry_owed(self, record: bytes, parent: str | None, held: dict[bytes, str]) -> bool:
        """Is the index entry of this noted record still the killed controller's to set: it
        names the version the commit replaced (the parent's blob; no entry where the parent
        had no file), what the working tree held when the commit was made (the controller's
        own earlier bytes, an index left behind them), or the committed blob itself? An
        entry anyone staged since (an edit, a removal, a conflict) is theirs and is kept,
        as the working-tree file is (:meth:`_repair_file`): round 122, staged-edit-unstaged
        (killed inside its index write, the stale lock removed, a person's ``git add`` of
        PLAN.yml was pointed back at the controller's blob by the restart)."""
        meta, _, raw_path = record.partition(b"\t")
        path = raw_path.decode("utf-8", "surrogateescape")
        want = meta.split()[-1].decode("ascii")
        try:
            before = self.blob_sha(parent, path) if parent is not None else None
        except GitError:
            return False
        was = held.get(raw_path, "-")
        for sha in {want, before or ZERO, was if was != "-" else ZERO}:
            if sha == ZERO and not self._indexed(path):
                return True  # no entry: the parent had no file, or the commit removes it
            if sha != ZERO and self.index_holds(path, sha):
                return True
        return False

    def _moved_past(
        self,
        noted: list[bytes],
        landed: list[bytes],
        parent: str | None,
        held: dict[bytes, str] | None = None,
    ) -> list[bytes]:
        """Of the ``noted`` records the checked-out commit no longer holds: those whose
        commit landed all the same (a child of ``parent`` on the branch's ancestry path that
        holds every record), where the branch moved past it (someone's commit of the file
        through another index file before this start, round 66's restart under load), and
        whose index entry is still the killed controller's to set (:meth:`_entry_owed`: it
        names the version the commit replaced, as that controller left it). The index entry
        is what it owed: its own committed blob, which
        the outcome's staged check reads as no one's change (``controller_blob``); a file or
        an entry anyone changed since is theirs and is left alone. Nothing is written into
        the working tree: the branch holds a later version of it."""
        if len(landed) == len(noted) or parent is None:
            return []
        paths = [r.partition(b"\t")[2].decode("utf-8", "surrogateescape") for r in noted]
        wanted = [r.partition(b"\t")[0].split()[-1].decode("ascii") for r in noted]
        try:
            listed = self.run("rev-list", "--ancestry-path", "--parents", f"{parent}..HEAD")
        except GitError:
            return []
        children = [
            line.split()[0] for line in listed.splitlines() if line.split()[1:2] == [parent]
        ]
        for child in children:
            try:
                holds = all(
                    (self.blob_sha(child, path) or ZERO) == want
                    for path, want in zip(paths, wanted, strict=True)
                )
            except GitError:
                continue
            if holds:
                return [
                    record
                    for record in noted
                    if record not in landed and self._entry_owed(record, parent, held or {})
                ]
        return []

    def _indexed(self, path: str) -> bool:
        """Does the index have any entry of ``path``?"""
        out = self.run_raw("--no-optional-locks", "--literal-pathspecs", "ls-files", "-z", "--",
                           path)  # fmt: skip
        return out.returncode != 0 or bool(out.stdout.strip(b"\0"))

    def _repair_file(self, record: bytes, parent: str | None, held: dict[bytes, str]) -> None:
        """The working-tree file of one landed record: written as committed when it still
        holds what it held when the commit was made (the controller's own last write, such as
        a run's checkpoint) or the parent's version (the write never happened): nobody's
        edit since is overwritten. Its stray temps removed."""
        from controller.errors import PlanTooLarge, UnsafePath
        from controller.fsutil import TEMP_NAME

        meta, _, raw_path = record.partition(b"\t")
        path = raw_path.decode("utf-8", "surrogateescape")
        want = meta.split()[-1].decode("ascii")
        mode = int(meta.split()[0], 8)  # the noted entry's: the commit's mode
        target = self.path / path
        try:
            current: str | None = blob_id(read_regular(target, root=self.path))
        except FileNotFoundError:
            current = None
        except (UnsafePath, OSError):
            return  # a link or no file where a plan file was: never written through
        except PlanTooLarge:
            current = "-"  # a file the controller never wrote: someone's edit, kept
        if (current or ZERO) != want:
            was = held.get(raw_path, "-")  # what it held at the commit ("-": no file then)
            try:
                before = self.blob_sha(parent, path) if parent is not None else None
            except GitError:
                before = None
            if current == (None if was == "-" else was) or current == before:
                data = None if want == ZERO else self.blob(want)
                self.write_worktree({path: data}, {path: mode})
        with contextlib.suppress(OSError):
            strays = [
                stray
                for stray in target.parent.iterdir()
                if TEMP_NAME.fullmatch(stray.name)
                and stray.name.startswith(f".{target.name}.")
                and stray.is_file()
                and not stray.is_symlink()
            ]
            if strays:  # only untracked ones: a committed or staged look-alike is someone's
                rels = [stray.relative_to(self.path).as_posix() for stray in strays]
                tracked = set(
                    self.run("--literal-pathspecs", "ls-files", "-z", "--", *rels).split("\0")
                )
                for stray, rel in zip(strays, rels, strict=True):
                    if rel not in tracked:
                        stray.unlink()

    def remove_stray_temps(self, under: str) -> int:
        """Remove the temp files a controller killed in the middle of any working-tree write
        left under ``under`` (the plans folder): untracked files named as
        :func:`controller.fsutil.temp_name` names them, beside the file they were for. Run
        once when the controller takes the state directory; a write that had a note is also
        cleaned by :meth:`recover_index`, this covers every other (a checkpoint written
        between commits). A tracked or staged look-alike is someone's and is kept."""
        from controller.fsutil import TEMP_NAME

        if self.bare:
            return 0
        try:
            listed = self.run("--literal-pathspecs", "ls-files", "-z", "--others", "--", under)
        except GitError:
            return 0
        removed = 0
        for rel in filter(None, listed.split("\0")):
            target = self.path / rel
            if not TEMP_NAME.fullmatch(target.name) or target.is_symlink():
                continue
            with contextlib.suppress(OSError):
                if target.is_file():
                    target.unlink()
                    removed += 1
        return removed

    def _at_head(self, record: bytes) -> bool:
        """Does the checked-out commit hold what this index record sets?"""
        meta, _, raw_path = record.partition(b"\t")
        blob = meta.split()[-1].decode("ascii")
        try:
            found = self.blob_sha("HEAD", raw_path.decode("utf-8", "surrogateescape"))
        except GitError:
            return False
        return (found or ZERO) == blob

    def _updated_index(self, before: bytes | None, records: bytes) -> bytes:
        """The index ``before`` with ``records`` applied, by git, on a private copy dated 0.

        Writing an index makes git re-read, through the clean filter or ``process`` driver the
        repository's attributes select, every entry as recent as the index itself (its
        "racily clean" check). In a shared checkout the agent picks those programs and can
        keep an entry racy for good (a file dated 2100): the controller's own index update
        ran them as the controller (round 19). An index dated 0 has no racy entry, so git
        reads no file; the next git command in the checkout checks those entries itself."""
        with tempfile.TemporaryDirectory(prefix="plangate-index-") as folder:
            private = Path(folder) / "index"
            if before is not None:  # else no index yet: git starts an empty one
                private.write_bytes(before)
                os.utime(private, ns=(0, 0))
            result = self.run_raw(
                "update-index", "-z", "--index-info", input=records,
                env={"GIT_INDEX_FILE": str(private)},
            )  # fmt: skip
            if result.returncode != 0:
                stderr = result.stderr.decode("utf-8", "replace")
                raise git_failure(("update-index", "--index-info"), stderr)
            return private.read_bytes()

    def user(self, kind: str = "AUTHOR") -> Person:
        """The identity git would use for a new commit (``git var GIT_AUTHOR_IDENT``)."""
        ident = self.run("var", f"GIT_{kind}_IDENT").strip()
        name, _, rest = ident.partition(" <")
        person = Person(name, rest.split(">", 1)[0])
        try:  # git stores the bytes as given; a commit message and its readers are UTF-8
            (person.name + person.email).encode("utf-8")
        except UnicodeEncodeError:
            from controller.errors import UsageError

            raise UsageError(
                f"your git {kind.lower()} identity is not valid UTF-8",
                remedy=f"set GIT_{kind}_NAME and GIT_{kind}_EMAIL (or user.name and "
                "user.email) to UTF-8 text",
            ) from None
        return person

    def worktree_changes(self, paths: Sequence[str]) -> tuple[set[str], set[str]]:
        """(modified tracked files, untracked files) under ``paths`` in the working tree.

        Not ``git status``: it reads working-tree files through the clean filters and
        ``process`` drivers a committed ``.gitattributes`` selects. Here git compares only
        trees with the index; the files themselves are hashed in-process, raw and through git's
        built-in conversions only (:mod:`controller.git.conversion`: line ends, round 75;
        ``ident`` and ``working-tree-encoding``, round 76; a file git would call clean after a
        filter driver's conversion counts as modified: the safe side).
        """
        # --no-optional-locks: never take index.lock from a human's `git commit`.
        base = ("--no-optional-locks", "-c", "core.quotePath=false")
        entries = self.run(*base, "ls-files", "-s", "-z", "--", *paths).split("\0")
        modified = set(self._staged(base, paths))
        for entry in filter(None, entries):
            meta, _, path = entry.partition("\t")
            mode, sha, stage = meta.split(" ")
            if stage != "0" or not self._worktree_holds(path, mode, sha):
                modified.add(path)
        others = self.run(*base, "ls-files", "-z", "--others", "--exclude-standard", "--", *paths)
        return modified, set(filter(None, others.split("\0")))

    def _staged(self, base: Sequence[str], paths: Sequence[str]) -> list[str]:
        """Paths under ``paths`` whose index entry differs from HEAD (tree against index)."""
        born = self.run_raw("rev-parse", "-q", "--verify", "HEAD").returncode == 0
        head = "HEAD" if born else _EMPTY_TREE
        out = self.run(
            *base, "diff-index", "--cached", "--no-renames", "--name-only", "-z", head, "--", *paths
        )
        return list(filter(None, out.split("\0")))

    def _worktree_holds(self, path: str, mode: str, sha: str) -> bool:
        """Does the working tree's ``path`` hold the blob ``sha`` as git compares it
        (:meth:`as_git_compares`: what ``git status`` calls clean)?"""
        raw = self._worktree_id(path, mode)
        if raw is None or mode in ("120000", "160000"):
            return raw == sha
        try:
            data = read_regular(self.path / path, root=self.path)
            committed = data if blob_id(data) == sha else None  # the blob itself, unread
            return blob_id(self.as_git_compares(path, data, committed)) == sha
        except (OSError, PlangateError):  # AttributeUnsupported too: reads as edited
            return False

    def _worktree_id(self, path: str, mode: str) -> str | None:
        """The blob id of the working tree's ``path`` as it is on disk (None: not there)."""
        target = self.path / path
        try:
            if mode == "120000":
                return blob_id(os.fsencode(os.readlink(target)))
            if mode == "160000":  # a submodule: its checkout is not read here
                return None
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            seen = os.fstat(handle.fileno())
            if not stat.S_ISREG(seen.st_mode):
                return None
            return stream_blob_id(handle, seen.st_size)


def _stat_key(path: str | Path) -> tuple[int, ...]:
    """What tells one version of a file from the next (none: ``()``)."""
    try:
        seen = os.stat(path)
    except OSError:
        return ()
    return (seen.st_ino, seen.st_mtime_ns, seen.st_size)


class _IndexStat(NamedTuple):
    """One index entry's blob, executable bit and stat data as git compares it."""

    sha: str
    exec_bit: int
    stat: tuple[int, ...]  # mtime, ctime (seconds), inode, uid, gid, size


def _debug_entry(out: bytes, path: str) -> _IndexStat | None:
    """The stage-0 entry of ``path`` in ``git ls-files -s --debug -z`` output. Each record is
    ``<mode> <blob> <stage>\\t<path>\\0`` followed by its stat lines (``  ctime: <s>:<ns>``
    ...), the last one ``  size: <n>\\tflags: <n>\\n``."""
    chunks = out.split(b"\0")
    head = chunks[0]
    for chunk in chunks[1:]:
        end = chunk.find(b"\n", chunk.find(b"  size: ")) + 1
        debug, following = chunk[:end], chunk[end:]
        meta, _, name = head.partition(b"\t")
        head = following
        fields = meta.decode("ascii", "replace").split(" ")
        if name.decode("utf-8", "surrogateescape") != path or len(fields) != 3 or fields[2] != "0":
            continue
        found = {key.decode(): int(value) for key, value in re.findall(rb"(\w+): ([0-9]+)", debug)}
        keys = ("mtime", "ctime", "ino", "uid", "gid", "size")
        if not set(keys) <= found.keys():
            return None
        return _IndexStat(fields[1], int(fields[0], 8) & 0o100, tuple(found[k] for k in keys))
    return None


class IndexHold:
    """``index.lock``, held by this process (:meth:`WorkTree.hold_index`): written once
    (:meth:`write`) or given back untouched (:meth:`release`)."""

    def __init__(self, tree: WorkTree, lock: int, note: Path | None, records: bytes) -> None:
        self.tree, self.lock, self.note, self.records = tree, lock, note, records
        self.done = False

    def write(self) -> None:
        """The index with the records applied, put in place while the lock is held. Under the
        lock, as git does: git's work on a private copy of the index (a few ms), then the
        copy written. Reading the index before taking the lock and checking it after lost
        every attempt to a human polling `git status`, which rewrites the index with fresh
        stat data each time (the demo, under load).

        The new index is written beside it (:data:`INDEX_NEW`) and renamed over it, and the
        lock, never written, is removed after: it stays the very file the note names until
        it goes. Writing the new index into the lock, as git does, let a SIGKILL stop the
        write part way (the kernel ends a write of many pages early for a fatal signal): the
        lock then matched no note, so every later start left it, and the next person's
        ``git add`` and the next controller's commit failed on it for good (the CI failure
        of 2026-12-05, a 3-SIGKILL burst)."""
        tree, index = self.tree, self.tree.git_dir / "index"
        new = tree.git_dir / INDEX_NEW
        before = _stat_key(index)  # under the lock: nobody else writes it meanwhile
        try:
            written = tree._updated_index(attrfiles.index_bytes(index), self.records)
            new.unlink(missing_ok=True)  # a killed write's, or anyone's link: never written through
            fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
            with os.fdopen(fd, "wb") as out:
                out.write(written)  # no fsync: git's own index writes have none
            os.replace(new, index)
        except BaseException:
            with contextlib.suppress(OSError):
                new.unlink(missing_ok=True)
            self.release()
            raise
        self.done = True
        tree._note_own_index(before, self.records)
        os.close(self.lock)
        (tree.git_dir / "index.lock").unlink(missing_ok=True)
        if self.note is not None:
            self.note.unlink(missing_ok=True)

    def release(self) -> None:
        """Give the lock back without writing (nothing landed, or the working tree could not
        be written): the note of the commit's entries stays, without the lock's identity,
        for :meth:`WorkTree.recover_index` (the lock first: a kill between the two leaves a
        note naming a lock that is gone, never a lock no note names)."""
        if self.done:
            return
        self.done = True
        os.close(self.lock)
        (self.tree.git_dir / "index.lock").unlink(missing_ok=True)
        if self.note is not None:
            with contextlib.suppress(OSError):
                write_note(self.note, self.tree._noted(b"-", self.records))


def _index_records(
    files: Mapping[str, bytes | None], modes: Mapping[str, int] | None = None
) -> bytes:
    """``git update-index -z --index-info`` records setting ``files`` (None: removed), each
    with its mode in ``modes`` (not there: ``100644``)."""
    modes = modes or {}
    records = []
    for path, data in files.items():  # NUL-terminated: a path may hold a newline
        sha = ZERO if data is None else blob_id(data)
        mode = 0 if data is None else modes.get(path, _BLOB_MODE)
        records.append(f"{mode:o} {sha}\t{path}\0")
    return "".join(records).encode("utf-8", "surrogateescape")


def _lock_identity(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_ctime_ns)


def _index_damage(data: bytes) -> str | None:
    """What git would say of an index file's bytes it cannot read (None: the header and
    checksum hold): ``index file smaller than expected``, ``bad signature``, ``bad index
    version``, ``bad index file sha1 signature`` (a trailer of zeros is ``index.skipHash``)."""
    if len(data) < 32:
        return "index file smaller than expected"
    if data[:4] != b"DIRC":
        return "bad signature"
    if int.from_bytes(data[4:8], "big") not in (2, 3, 4):
        return f"bad index version {int.from_bytes(data[4:8], 'big')}"
    trailer = data[-20:]
    if trailer != bytes(20) and hashlib.sha1(data[:-20]).digest() != trailer:
        return "bad index file sha1 signature"
    return None


#: The file a new index is written to before it is renamed over ``.git/index``, under the lock.
INDEX_NEW = "plangate-index.new"

#: How long after the controller noted it was about to take index.lock a lock it finds can be
#: the one it made (a kill between the note and the lock's creation: nothing else names it).
LOCK_WINDOW_NS = 10_000_000_000


def _ours(lock: Path, st: os.stat_result, kind: bytes, fields: list[bytes]) -> bool:
    """Is this index.lock the one the note describes? ``L dev ino ctime``: that very file;
    ``W dev ino ctime sha256``: that file, before or after the controller wrote that content
    into it (a note an earlier controller left: it wrote the new index into the lock);
    ``P time``: about to be made then, and made within :data:`LOCK_WINDOW_NS` (a kill between
    the note and the lock's creation; file times are a tick coarse)."""
    try:
        if kind in (b"L", b"W") and len(fields) >= 3:
            same = _lock_identity(st) == tuple(int(f) for f in fields[:3])
            if same or kind == b"L" or len(fields) != 4:
                return same
            if (st.st_dev, st.st_ino) != (int(fields[0]), int(fields[1])):
                return False
            return hashlib.sha256(lock.read_bytes()).hexdigest().encode() == fields[3]
        if kind == b"P" and len(fields) == 1:
            at = int(fields[0])
            return at - 50_000_000 <= st.st_ctime_ns <= at + LOCK_WINDOW_NS
    except (OSError, ValueError):
        return False
    return False


def _through_link(root: Path, path: str) -> bool:
    """Is a folder on the way to ``path`` (inside ``root``) a symlink, or not a folder?"""
    return unwritable_place(root, path) is not None


def unwritable_place(root: Path, path: str) -> str | None:
    """The first folder on the way to ``path`` (inside ``root``, as a path in it) that is a
    symlink or not a folder, where :meth:`WorkTree.write_worktree` never writes through;
    None when every one is a real folder or not there yet (made on the write)."""
    parts = PurePosixPath(path).parts
    here = root
    for depth, part in enumerate(parts[:-1], start=1):
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            return "/".join(parts[:depth])
    return None


def _special(target: Path) -> str:
    """What ``target`` is when it is there and neither a regular file nor a link:
    ``"folder"``, or ``"special"`` (a FIFO, a device, a socket); ``""`` otherwise (lstat:
    never followed, never opened)."""
    try:
        mode = os.lstat(target).st_mode
    except OSError:
        return ""
    if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
        return ""
    return "folder" if stat.S_ISDIR(mode) else "special"
