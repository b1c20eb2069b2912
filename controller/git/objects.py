"""Objects and trees: reading blobs and trees, and writing loose objects in-process.

The approval hot path never parses a big tree: reads ask git's persistent ``cat-file`` for
``<commit>:<path>``, except through a top-level folder (the plans folder) asked often in one
commit, which is indexed once in git's canonical form (:class:`_TreeIndex`, issue 17: git
reads the whole tree for each lookup); a commit that only replaces existing entries of a big
tree patches their 20-byte ids in the raw object, at offsets proven unique (see
:func:`entry_offset`), and stores it with zlib level 0 above :data:`STORE_RAW_ABOVE` (git
reads any level; ``git gc`` recompresses).
"""

from __future__ import annotations

import hashlib
import os
import re
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from controller.errors import BlobTooLarge, GitError
from controller.fsutil import READ_LIMIT
from controller.git.base import RepoBase, unreadable_object
from controller.git.deadline import DEADLINES
from controller.git.store import STORE_RAW_ABOVE, check_object, write_loose

_TREE_MODE = 0o40000
_BLOB_MODE = 0o100644
_EXEC_MODE = 0o100755
_GITLINK_MODE = 0o160000
_HEX40 = re.compile(r"[0-9a-f]{40}")
#: A tree this big (bytes) has its changed entries patched in place instead of re-parsed.
BIG_TREE = 16 * 1024
#: Bytes of the objects this process wrote or read kept to be read back without git (a
#: burst's start commit writes the PLAN.yml its outcome commit reads; a scan's batch read of
#: a thousand new plans is read again by the pass; a plan's approved version is read by its
#: decision, its start and the checks around them); objects above STORE_RAW_ABOVE
#: are not kept. Each object counts with its keeping (:data:`KEPT_OVERHEAD`): a plan's blob
#: is about 200 bytes, and counting its bytes alone kept 26,000 of them (9 MB) after a cold
#: scan of 20,000 plans (perf80mem).
KEPT_BYTES = 4 * 1024 * 1024
#: What keeping one object costs beside its bytes: the bytes object's header (33), its id
#: as a str (89) and its share of the dict (about 80).
KEPT_OVERHEAD = 200
#: Above this many names asked of one tree or commit at once, one batch instead of one
#: question each (a parse, or a ``cat-file --batch-check``).
BATCH_LOOKUPS = 8
#: A commit's top-level folder asked this many times is indexed (:meth:`Objects._big_index`):
#: a burst's batched commit asks its plans folder for hundreds of plans; a cold scan's commit
#: for the one or two it changed (indexing each of those would cost more than it saves).
INDEX_AFTER = 16
#: Answers git gave to ``<commit id>:<path>`` kept (:meth:`Objects._lookup`; an absence is
#: asked again, as its check that nothing failed to read is made again).
FOUND_KEPT = 2048
#: Indexed folders kept (the raw tree and 4 bytes an entry: 2 MB for 50,000 plans): a burst
#: asks the head it just committed.
INDEXES_KEPT = 1


class Objects(RepoBase):
    """Blobs and trees: read by id or path, written as loose objects."""

    def shared_blob(self, sha: str, limit: int) -> bytes:
        """A blob of the shared store as it is there (local mode with the controller's own
        store: a person's ``git add`` wrote it there alone), hashed against ``sha``; over
        ``limit`` bytes: BlobTooLarge, never read. The controller's own store first."""
        try:
            return self._object(sha, limit)
        except BlobTooLarge:
            raise
        except GitError:
            if self._shared_objects is None:
                raise
        reader = self._shared_git()
        with self._lock, DEADLINES.bound(self.timeout, self._stop_shared, "git cat-file"):
            try:
                _, kind, size = reader.get_object_header(sha)
                if size > limit:
                    raise BlobTooLarge(sha, size, limit)
                data = bytes(reader.get_object_data(sha)[3])
            except (ValueError, OSError):
                raise unreadable_object(sha) from None
        if kind != b"blob" or blob_id(data) != sha:
            raise unreadable_object(sha)
        return data

    def blob(self, sha: str) -> bytes:
        """A blob's content: BlobTooLarge (E_PLAN_TOO_LARGE) for one over
        :data:`~controller.fsutil.READ_LIMIT`, which is never read."""
        return self._object(sha, READ_LIMIT)

    def _object(self, sha: str, limit: int | None = None) -> bytes:
        """An object's content; one this process wrote, or read lately (in a batch or
        alone), is not asked of git again (kept by its id, the hash of these very bytes:
        never stale; read as git gave it, hashed first where objects are checked). A burst's
        plan asked git five times for its approved PLAN.yml (the decision twice, the approved
        text, the start's and the pass's uncommitted checks) and twice for its folder's tree
        (the mode of its files, the start commit's tree), each time through the persistent
        ``cat-file`` (perf99)."""
        kept = self._kept.get(sha)
        if kept is None and self._pending is not None and sha in self._pending:
            kept = self._pending[sha][1]  # written at the end of :meth:`packing`
        if kept is not None:
            return kept
        data = super()._object(sha, limit)
        self._keep(sha, data)
        return data

    def blob_sizes(self, shas: Sequence[str]) -> dict[str, int]:
        """The size of each object of ``shas`` git has (one ``cat-file --batch-check``)."""
        if not shas:
            return {}
        out = self.run_raw(
            "cat-file", "--batch-check", input="".join(f"{s}\n" for s in shas).encode()
        )
        sizes = {}
        for line in out.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3:  # not "<sha> missing"
                sizes[parts[0].decode()] = int(parts[2])
        return sizes

    def _keep(self, sha: str, data: bytes) -> None:
        if len(data) > STORE_RAW_ABOVE or sha in self._kept:
            return
        with self._lock:
            self._kept[sha] = data
            self._kept_bytes += len(data) + KEPT_OVERHEAD
            while self._kept_bytes > KEPT_BYTES:
                oldest = next(iter(self._kept))
                self._kept_bytes -= len(self._kept.pop(oldest)) + KEPT_OVERHEAD

    def forget_kept(self) -> None:
        """Drop the objects kept (after a cold scan: the last 4 MB of the plans it read, each
        a small object among the scan's dead records; read from git again when asked)."""
        with self._lock:
            self._kept = {}
            self._kept_bytes = 0

    def blobs(self, shas: Sequence[str], keep: bool = True) -> dict[str, bytes]:
        """Many objects in one ``git cat-file --batch`` round trip (cold scans); ``keep``:
        kept to be read back without git (a cold scan's 50,000 root trees are not)."""
        if not shas:
            return {}
        out = self.run_raw("cat-file", "--batch", input="".join(f"{s}\n" for s in shas).encode())
        data, pos, found = out.stdout, 0, {}
        while pos < len(data):
            end = data.index(b"\n", pos)
            header = data[pos:end].split()
            pos = end + 1
            if len(header) < 3:  # "<sha> missing"
                continue
            size = int(header[2])
            sha, content = header[0].decode(), data[pos : pos + size]
            if self.checks_objects:
                check_object(sha, header[1], content, self._objects)
            found[sha] = content
            pos += size + 1
        for sha, content in found.items() if keep else ():  # a burst's pass reads them again
            self._keep(sha, content)
        return found

    def blob_sha(self, commit: str, path: str) -> str | None:
        """The blob of ``path`` in ``commit`` (None when it is not there)."""
        spec = f"{commit}:{path}"
        if _askable(spec):
            found = self._lookup(spec)
            return found[0] if found is not None and found[1] == "blob" else None
        sha, mode = self._tree_of(commit), _TREE_MODE  # a name git cannot be asked: walk
        for part in path.split("/"):
            if sha is None or mode != _TREE_MODE:
                return None
            entry = self._tree_entries(sha).get(part)
            if entry is None:
                return None
            sha, mode = entry
        return sha if (mode & 0o170000) in (0o100000, 0o120000) else None

    def mode_of(self, commit: str, path: str) -> str | None:
        """git's mode of ``path`` in ``commit`` ("100644", "100755", ...; None: not there).
        The folder holding it is looked up by git (:meth:`_lookup`) and only that folder's
        tree is read (:meth:`_tree_entry`): walking down parsed the whole plans folder's tree
        of every new commit (10,000 entries, 15% of an approving pass; issue 17)."""
        folder, _, name = path.rpartition("/")
        spec = f"{commit}:{folder}"
        sha: str | None
        if folder and _askable(spec):
            found = self._lookup(spec)
            if found is None or found[1] != "tree":
                return None
            sha, mode = found[0], _TREE_MODE
            parts = [name]
        else:
            sha, mode = self._tree_of(commit), _TREE_MODE
            parts = path.split("/")
        for part in parts:
            if sha is None or mode != _TREE_MODE:
                return None
            entry = self._tree_entry(sha, part)
            if entry is None:
                return None
            sha, mode = entry
        return f"{mode:o}" if sha is not None and mode != _TREE_MODE else None

    def file_modes(self, commit: str | None, paths: Sequence[str]) -> dict[str, int]:
        """The mode (an ``int``) a file of ``paths`` the controller commits on ``commit`` gets
        (:func:`kept_mode`: the entry's own, ``100644`` or ``100755``; ``100644`` for a new
        one): what the index entry and the working-tree file are given beside the commit."""
        modes = {}
        for path in paths:
            found = self.mode_of(commit, path) if commit else None
            modes[path] = _EXEC_MODE if found == f"{_EXEC_MODE:o}" else _BLOB_MODE
        return modes

    def _tree_entry(self, tree: str, name: str) -> tuple[str, int] | None:
        """``_parsed_tree(tree).get(name)`` without decoding a big tree it does not hold:
        a cold scan asks the mode of each changed plan file in its parent, each parent's
        plans folder another 10,000-entry tree (round 71's :meth:`mode_of` parsed and copied
        it whole: 40% of a 50,000-commit cold start). The answer is :func:`tree_entry`'s,
        which is :func:`parse_tree`'s (a test compares them on hostile trees)."""
        cached = self._trees.get(tree)
        if cached is not None:
            return cached.get(name)
        data = self._object(tree)
        if len(data) >= BIG_TREE:
            return tree_entry(data, name)
        parsed = parse_tree(data)
        if len(self._trees) > 256:
            self._trees.clear()
        self._trees[tree] = parsed
        return parsed.get(name)

    def _lookup(self, spec: str) -> tuple[str, str] | None:
        """(object id, type) of ``<tree-ish>:<path>``, resolved by git's persistent
        ``cat-file --batch-check`` (None when absent); ``spec`` must be :func:`_askable`.
        Where objects are checked, walked instead: git would follow trees it never hashed."""
        if self.checks_objects:
            return self._walked(spec)
        found = self._found.get(spec)
        if found is not None:
            return found
        known, found = self._through_big_tree(spec)
        if not known:
            found = self._header(spec)
        if found is None:
            self._unreadable(spec)
            return None
        if _HEX40.fullmatch(spec, 0, 40) and spec[40:41] == ":":
            # under a commit's id the answer never changes: a commit writing a burst's plans
            # asked git for each plan's folder three or four times (the trees among its
            # paths, the mode of each file, its log's blob in the parent; perf99)
            if len(self._found) >= FOUND_KEPT:
                self._found.clear()
            self._found[spec] = found
        return found

    def _header(self, spec: str) -> tuple[str, str] | None:
        """(object id, type) git's persistent ``cat-file --batch-check`` gives ``spec``."""
        with self._lock, DEADLINES.bound(self.timeout, self._stop_readers, "git cat-file"):
            try:
                sha, kind, _ = self._repo.git.get_object_header(spec)
            except ValueError:  # "<spec> missing": not there, or an object git cannot read
                return None
            except OSError as exc:  # the persistent cat-file died
                raise GitError(f"cannot look up {spec}: {exc}") from None
        return _text(sha), _text(kind)

    def _through_big_tree(self, spec: str) -> tuple[bool, tuple[str, str] | None]:
        """git's answer for ``<commit>:<folder>/<name>[/<rest>]`` where ``<folder>`` (one
        level below the root: the plans folder) is a big tree asked often, found without git
        reading that tree again: ``(True, answer)``, or ``(False, None)`` when it cannot be
        (git is asked).

        git resolves a path by reading every tree on the way whole: a lookup in a commit's
        10,000-entry plans folder cost git 2 ms, and a burst of 10,000 plans asked it for
        each plan file of each batched commit (the burst's cost grew with the square of the
        plans: issue 17). A folder asked :data:`INDEX_AFTER` times in one commit is read once
        and indexed (:class:`_TreeIndex`), where it is in git's canonical form: then git's
        lookup (entries in order, the first of a name) and the index's agree. The rest of
        the path is git's again, through the small tree the entry names, and the entry's
        own object is asked of git (its type and presence, as the one-step lookup gives
        them)."""
        commit, _, path = spec.partition(":")
        folder, _, below = path.partition("/")
        name, _, rest = below.partition("/")
        if not (_HEX40.fullmatch(commit) and folder and name) or any(
            part in ("", ".", "..") for part in path.split("/")
        ):
            return False, None
        index = self._big_index(commit, folder)
        if index is None:
            return False, None
        entry = index.get(name)
        if entry is None:
            return True, None
        sha, mode = entry
        if rest:
            return True, self._header(f"{sha}:{rest}") if mode == _TREE_MODE else None
        return True, self._header(sha)

    def _big_index(self, commit: str, folder: str) -> _TreeIndex | None:
        """The index of ``commit``'s ``folder`` once it was asked :data:`INDEX_AFTER` times
        and is a big tree in canonical form (None: not, or not yet)."""
        key = (commit, folder)
        with self._lock:
            if key in self._indexes:
                return self._indexes[key]
            asked = self._index_asks.get(key, 0) + 1
            if len(self._index_asks) > 4096:
                self._index_asks.clear()
            self._index_asks[key] = asked
        if asked < INDEX_AFTER:
            return None
        index: _TreeIndex | None = None
        found = self._header(f"{commit}:{folder}")
        if found is not None and found[1] == "tree":
            kind, data = self._typed_object(found[0])
            if kind == b"tree" and len(data) >= BIG_TREE:
                index = _TreeIndex.of(data)
        with self._lock:
            while len(self._indexes) >= INDEXES_KEPT:
                del self._indexes[next(iter(self._indexes))]
            self._indexes[key] = index
        return index

    def _unreadable(self, spec: str) -> None:
        """git said ``<tree-ish>:<path>`` is missing: return when nothing is at that path,
        raise ``E_GIT`` when what is missing is an object the path goes through (the commit,
        a tree on the way, the entry's own object). A read that failed is never an absence
        (round 85: under ``GIT_OBJECT_DIRECTORY`` naming a store without the branch's tip,
        MCP ``status`` said "no plan ... submit it first" and ``approve`` "not committed")."""
        name, _, path = spec.partition(":")
        if not path:  # the tree-ish itself
            sha = name if _HEX40.fullmatch(name) else self._resolved(name)
            if sha is None:
                return  # a ref that names nothing: nothing there
            if sha in self._readable:
                return
            with self._lock, DEADLINES.bound(self.timeout, self._stop_readers, "git cat-file"):
                try:
                    self._repo.git.get_object_header(sha)
                except ValueError:
                    raise GitError(
                        f"cannot read object {sha}: git's object store does not hold it",
                        remedy="check the repository (git fsck) and the GIT_* variables set",
                    ) from None
                except OSError as exc:
                    raise GitError(f"cannot look up {sha}: {exc}") from None
            if len(self._readable) > 4096:
                self._readable.clear()
            self._readable.add(sha)
            return
        folder, _, entry = path.rpartition("/")
        if folder:
            found = self._lookup(f"{name}:{folder}")  # raises when the folder is unread
            if found is None or found[1] != "tree":
                return  # no folder there: nothing at the path
            tree = found[0]
        else:
            self._unreadable(name)  # raises when the tree-ish is unread
            sha = name if _HEX40.fullmatch(name) else self._resolved(name)
            if sha is None:
                return
            kind, data = self._typed_object(sha)
            if kind == b"commit":
                tree = data.split(b"\n", 1)[0][5:].decode()
            elif kind == b"tree":
                tree = sha
            else:
                return
        listed = self._tree_entry(tree, entry)  # reading the tree raises when git cannot
        if listed is None or listed[1] == _GITLINK_MODE:  # a submodule's commit: absent
            return
        # git's path lookup also misses an entry its tree lists out of order or twice (round
        # 58's odd trees: git's own reading, the path absent); only an object the store does
        # not hold is a failed read
        with self._lock, DEADLINES.bound(self.timeout, self._stop_readers, "git cat-file"):
            try:
                self._repo.git.get_object_header(listed[0])
                return
            except ValueError:
                pass
            except OSError as exc:
                raise GitError(f"cannot look up {listed[0]}: {exc}") from None
        raise GitError(
            f"cannot read object {listed[0]} ({spec}): git's object store does not hold it",
            remedy="check the repository (git fsck) and the GIT_* variables set",
        )

    def _walked(self, spec: str) -> tuple[str, str] | None:
        """:meth:`_lookup` through objects each hashed against its name (:meth:`_object`)."""
        name, _, path = spec.partition(":")
        sha = name if _HEX40.fullmatch(name) else self._resolved(name)
        if sha is None:
            return None
        kind, data = self._typed_object(sha)
        if kind == b"commit":
            first = data.split(b"\n", 1)[0]
            sha, kind = first[5:].decode(), b"tree"
        mode = _TREE_MODE if kind == b"tree" else 0
        for part in path.split("/") if path else ():
            entry = self._tree_entry(sha, part) if mode == _TREE_MODE else None
            if entry is None:
                return None
            sha, mode = entry
        if mode == _TREE_MODE:
            return sha, "tree"
        return sha, "commit" if mode == _GITLINK_MODE else "blob"

    def _resolved(self, name: str) -> str | None:
        """The object a ref name (``HEAD``, a branch) names: refs are not objects."""
        result = self.run_raw("rev-parse", "--verify", "-q", "--end-of-options", name)
        out = result.stdout.strip().decode()
        return out if result.returncode == 0 and _HEX40.fullmatch(out) else None

    def is_tree(self, commit: str, path: str) -> bool:
        """Is ``path`` a folder in ``commit``?"""
        spec = f"{commit}:{path}"
        if _askable(spec):
            found = self._lookup(spec)
            return found is not None and found[1] == "tree"
        return False  # a name git cannot be asked holds no plan file either (walked elsewhere)

    def names_in(self, commit: str, folder: str) -> list[str]:
        """The names of ``folder``'s entries in ``commit`` (files, folders, links; none when
        it is no folder): one tree read, so a reader compares them as it likes (a plan
        file's name in any case, :func:`controller.plan.names.plan_file_claims`)."""
        spec = f"{commit}:{folder}"
        if _askable(spec):
            found = self._lookup(spec)
            sha = found[0] if found is not None and found[1] == "tree" else None
        else:  # a name git cannot be asked: walk
            sha = self._tree_of(commit)
            for part in folder.split("/"):
                entry = self._parsed_tree(sha).get(part) if sha is not None else None
                sha = entry[0] if entry is not None and entry[1] == _TREE_MODE else None
        return list(parse_tree(self._object(sha))) if sha is not None else []

    def names_among(self, commit: str, folders: Sequence[str]) -> dict[str, list[str]]:
        """:meth:`names_in` of each of ``folders``: one by one for a few, two round trips
        for many (``cat-file --batch-check``, then ``--batch``: a burst's thousand new plans,
        issue 17)."""
        specs = [f"{commit}:{folder}" for folder in folders]
        if len(folders) <= BATCH_LOOKUPS or self.checks_objects or not all(map(_askable, specs)):
            return {folder: self.names_in(commit, folder) for folder in folders}
        out = self.run_raw(
            "cat-file", "--batch-check", input="".join(f"{s}\n" for s in specs).encode()
        )
        if out.returncode != 0:
            raise GitError(f"cannot look up {len(folders)} folders in {commit[:12]}")
        lines = out.stdout.splitlines()
        for spec, line in zip(specs, lines, strict=False):
            if _kind(line) is None:
                self._unreadable(spec)  # absent, or git could not read it
        trees = {
            folder: line.split()[0].decode()
            for folder, line in zip(folders, lines, strict=False)
            if _kind(line) == b"tree"
        }
        read = self.blobs(sorted(set(trees.values())), keep=False)
        return {
            folder: list(parse_tree(read[trees[folder]])) if trees.get(folder) in read else []
            for folder in folders
        }

    def names_of(self, trees: Mapping[str, str]) -> dict[str, list[str]]:
        """:meth:`names_in` of folders whose tree ids are known (``trees``: folder -> id, as
        a cold scan's walk read them: ``FileChange.folder``): each tree read by its id (one
        round trip for many), never found through its commit's plans folder."""
        if len(trees) <= BATCH_LOOKUPS or self.checks_objects:
            return {folder: list(parse_tree(self._object(sha))) for folder, sha in trees.items()}
        read = self.blobs(sorted(set(trees.values())), keep=False)
        return {
            folder: list(parse_tree(read[sha] if sha in read else self._object(sha)))
            for folder, sha in trees.items()
        }

    def trees_among(self, commit: str, paths: Sequence[str]) -> set[str]:
        """The ``paths`` that are folders in ``commit``: :meth:`is_tree` for a few, one
        ``cat-file --batch-check`` for many (a burst's batch of a thousand plan files asked
        one at a time waited 0.3 s on the persistent reader, issue 17)."""
        askable = [path for path in paths if _askable(f"{commit}:{path}")]
        if len(askable) <= BATCH_LOOKUPS or self.checks_objects:
            return {path for path in askable if self.is_tree(commit, path)}
        specs = "".join(f"{commit}:{path}\n" for path in askable).encode()
        out = self.run_raw("cat-file", "--batch-check", input=specs)
        if out.returncode != 0:
            raise GitError(f"cannot look up {len(askable)} paths in {commit[:12]}")
        lines = out.stdout.splitlines()
        for path, line in zip(askable, lines, strict=False):
            if _kind(line) is None:
                self._unreadable(f"{commit}:{path}")  # absent, or git could not read it
        return {path for path, line in zip(askable, lines, strict=False) if _kind(line) == b"tree"}

    def is_gone(self, commit: str, path: str) -> bool:
        """Is nothing at ``path`` in ``commit`` (False when git cannot be asked the name)?"""
        spec = f"{commit}:{path}"
        return _askable(spec) and self._lookup(spec) is None

    def read_file(self, commit: str, path: str) -> bytes | None:
        blob = self.blob_sha(commit, path)
        return None if blob is None else self.blob(blob)

    def _tree_of(self, commit: str) -> str | None:
        first = self._object(commit).split(b"\n", 1)[0]
        return first[5:].decode() if first.startswith(b"tree ") else None

    def _tree_entries(self, tree: str) -> dict[str, tuple[str, int]]:
        """name -> (sha, mode) of a tree (a copy the caller may change)."""
        return dict(self._parsed_tree(tree))

    def _parsed_tree(self, tree: str) -> Mapping[str, tuple[str, int]]:
        """name -> (sha, mode) of a tree; trees are immutable, so parsed ones are cached."""
        cached = self._trees.get(tree)
        if cached is None:
            cached = parse_tree(self._object(tree))
            if len(self._trees) > 256:
                self._trees.clear()
            self._trees[tree] = cached
        return cached

    def ls_files(self, commit: str, paths: Sequence[str]) -> list[tuple[str, str]]:
        """(path, blob) of every file under ``paths`` in ``commit``."""
        out = self.run("ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths)
        rows = []
        for line in out.split("\0"):
            if line:
                meta, _, path = line.partition("\t")
                rows.append((path, meta.split()[2]))
        return rows

    def folders_under(self, commit: str, folder: str) -> list[str]:
        """Every folder below ``folder`` (``"."``: the root) in ``commit``, at any depth, as
        paths from the repository's root: one ``ls-tree -r -d`` (the twin filter's seed,
        :class:`controller.git.twins.SeenFolders`)."""
        if folder in ("", "."):
            out = self.run("ls-tree", "-r", "-d", "-z", "--name-only", commit)
            return [path for path in out.split("\0") if path]
        spec = f"{commit}:{folder}"
        if not _askable(spec):  # a name git cannot be asked: by the pathspec
            out = self.run(
                "ls-tree", "-r", "-d", "-z", "--name-only", "--full-tree", commit, "--",
                f":(literal){folder}",
            )  # fmt: skip
            return [path for path in out.split("\0") if path]
        found = self._lookup(spec)
        if found is None or found[1] != "tree":
            return []  # no such folder there
        out = self.run("ls-tree", "-r", "-d", "-z", "--name-only", found[0])
        return [f"{folder}/{path}" for path in out.split("\0") if path]

    def store_blob(self, data: bytes) -> str:
        return self._store(b"blob", data)

    def _store(self, kind: bytes, data: bytes) -> str:
        """Write a loose object (as git does: temp file, then rename) and return its id; in
        local mode into the controller's own store and the shared one (its commits stay
        readable in the shared checkout)."""
        header = b"%s %d\0" % (kind, len(data))
        digest = hashlib.sha1(header)
        digest.update(data)
        sha = digest.hexdigest()
        if self._pending is not None:
            self._pending[sha] = (kind, data, True, None)
        else:
            self._write_loose(sha, header, data, True)
        self._keep(sha, data)
        return sha

    def publish(self, kind: bytes, sha: str) -> None:
        """Write an object git made in the controller's own store (a commit ``git
        commit-tree`` signed) into the shared store too (local mode)."""
        if self._shared_objects is None:
            return
        data = self._object(sha)
        self._before_unverified_write(sha)
        write_loose(self._shared_objects, sha, b"%s %d\0" % (kind, len(data)), data, [])

    def tree_with(self, base_tree: str | None, files: Mapping[str, bytes | None]) -> str:
        """A new tree: ``base_tree`` with ``files`` written (None deletes), built in the odb."""
        return self._merged(base_tree, files) or self._store(b"tree", b"")

    def _merged(self, base_tree: str | None, files: Mapping[str, bytes | None]) -> str | None:
        """The id of ``base_tree`` with ``files`` applied; None when nothing is left (git has
        no empty folders)."""
        raw = self._object(base_tree) if base_tree else b""
        nested: dict[str, dict[str, bytes | None]] = {}
        leaves: dict[str, bytes | None] = {}
        for path, data in files.items():
            head, sep, rest = path.partition("/")
            if sep:
                nested.setdefault(head, {})[rest] = data
            else:
                leaves[head] = data
        olds: Mapping[str, tuple[str, int] | None] = {}
        if base_tree and len(nested) + len(leaves) > BATCH_LOOKUPS:  # one parse, no lookups
            olds = self._parsed_tree(base_tree)
        elif base_tree:
            olds = {name: self._entry(base_tree, raw, name) for name in (*nested, *leaves)}
        changes: dict[str, tuple[str, int] | None] = {}
        for name, data in leaves.items():
            mode = kept_mode(olds.get(name))
            changes[name] = None if data is None else (self.store_blob(data), mode)
        for name, sub in nested.items():
            old = olds.get(name)
            sha = self._merged(old[0] if old and old[1] == _TREE_MODE else None, sub)
            changes[name] = None if sha is None else (sha, _TREE_MODE)
        if base_tree and len(raw) > BIG_TREE:
            patched = self._patch(base_tree, raw, changes, olds)
            if patched is not None:
                return self._store(b"tree", patched)
        entries = self._tree_entries(base_tree) if base_tree else {}
        for name, entry in changes.items():
            if entry is None:
                entries.pop(name, None)
            else:
                entries[name] = entry
        if not entries:
            return None
        # A parsed tree is in git's order and replacing an entry keeps its place: only new
        # names need the sort.
        sha = self._store(b"tree", serialize_tree(entries, presorted=_in_git_order(entries)))
        self._trees[sha] = dict(entries)
        return sha

    def _entry(self, tree: str, raw: bytes, name: str) -> tuple[str, int] | None:
        """(id, mode) of ``name`` in ``tree``, without parsing a big tree."""
        spec = f"{tree}:{name}"
        if len(raw) <= BIG_TREE or not _askable(spec):
            return self._tree_entries(tree).get(name)
        found = self._lookup(spec)
        if found is None:
            return None
        sha, kind = found
        if kind == "tree":
            return sha, _TREE_MODE
        return self._tree_entries(tree).get(name)  # a blob's mode is not in the answer

    def _patch(
        self,
        tree: str,
        raw: bytes,
        changes: Mapping[str, tuple[str, int] | None],
        olds: Mapping[str, tuple[str, int] | None],
    ) -> bytes | None:
        """``raw`` with the ids of existing entries replaced in place (same names, same
        modes); None when a change adds, removes or retypes an entry."""
        spliced = bytearray(raw)
        for name, entry in changes.items():
            if entry is None:
                return None
            old = olds[name] if name in olds else self._entry(tree, raw, name)
            if old is None or old[1] != entry[1]:
                return None
            at = entry_offset(raw, name, old[1], old[0])
            if at is None:
                return None
            spliced[at : at + 20] = bytes.fromhex(entry[0])
        return bytes(spliced)


def kept_mode(old: tuple[str, int] | None) -> int:
    """The mode a file the controller writes over the tree entry ``old`` gets: the entry's
    own when it is a regular file (``100644`` or ``100755``), else (none, a symlink, a
    gitlink, a folder) a plain ``100644``. Never a fixed ``100644``: a ``100755`` plan file
    the agent committed, written back as ``100644`` by the controller's commit, left the
    checkout's file differing from the branch by its executable bit, and the approver's
    ``git add`` of her status edit then made it executable again under her name, a writer's
    change (round 87's ``modeflip``). Never normalised either: a mode the controller changed
    would be a change under its name of what it did not produce."""
    return _EXEC_MODE if old is not None and old[1] == _EXEC_MODE else _BLOB_MODE


def blob_id(data: bytes) -> str:
    """The object id git gives ``data`` as a blob (SHA-1 repositories)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def file_blob_id(path: Path) -> str | None:
    """:func:`blob_id` of a regular file, read a megabyte at a time (a file an agent wrote may
    be of any size); None for a link, a FIFO or another special file, or none at all."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        seen = os.fstat(handle.fileno())
        if not stat.S_ISREG(seen.st_mode):
            return None
        return stream_blob_id(handle, seen.st_size)


def stream_blob_id(handle: BinaryIO, size: int) -> str | None:
    """:func:`blob_id` of a file of ``size`` bytes read a megabyte at a time (a file of any
    size costs no memory); None when it did not hold ``size`` bytes (it changed meanwhile)."""
    digest = hashlib.sha1(b"blob %d\0" % size)
    left = size
    while left > 0:
        chunk = handle.read(min(left, 1 << 20))
        if not chunk:
            return None
        digest.update(chunk)
        left -= len(chunk)
    return None if handle.read(1) else digest.hexdigest()


def entry_offset(raw: bytes, name: str, mode: int, sha: str) -> int | None:
    """Where the 20-byte id of entry ``name`` sits in the raw tree ``raw``.

    The caller knows (from git) that the entry exists with this mode and id, so its bytes
    ``<mode> <name>\\0<id>`` occur in ``raw``; when they occur exactly once that occurrence
    is the entry. A second occurrence (only a hostile name such as ``140000 x`` beside
    ``x``, with the same content, can make one) falls back to a walk from the start.
    """
    needle = b"%o %s\0" % (mode, name.encode("utf-8", "surrogateescape"))
    full = needle + bytes.fromhex(sha)
    at = raw.find(full)
    if at < 0:
        return None
    if raw.find(full, at + 1) < 0:
        return at + len(needle)
    pos = 0
    while pos < len(raw):
        space = raw.index(b" ", pos)
        nul = raw.index(b"\0", space)
        if raw[pos : nul + 1] == needle:
            return nul + 1
        pos = nul + 21
    return None


def parse_tree(data: bytes) -> dict[str, tuple[str, int]]:
    """A raw tree object: ``<octal mode> <name>\\0<20-byte sha>`` repeated."""
    entries: dict[str, tuple[str, int]] = {}
    pos, end = 0, len(data)
    while pos < end:
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
        entries[name] = (data[nul + 1 : nul + 21].hex(), int(data[pos:space], 8))
        pos = nul + 21
    return entries


_CANONICAL_MODES = frozenset((b"40000", b"100644", b"100755", b"120000", b"160000"))


class _TreeIndex:
    """A big tree in git's canonical form (:meth:`of`), its entries found by bisection on
    their start offsets: 4 bytes an entry beside the raw object, no name decoded until
    asked. In that form, entries strictly in git's order and no name twice, an exact search
    finds what git's own path lookup (entries in order, the first of a name) finds."""

    __slots__ = ("data", "starts")

    def __init__(self, data: bytes, starts: array[int]) -> None:
        self.data, self.starts = data, starts

    @classmethod
    def of(cls, data: bytes) -> _TreeIndex | None:
        """The index of raw tree ``data``; None unless every entry has one of git's own modes
        and a name (not empty, ``.`` or ``..``, no ``/``), the entries are strictly in git's
        order (a folder's name compared as if it ended in ``/``), no name is there twice
        and nothing is left over."""
        starts: array[int] = array("I")
        files: set[bytes] = set()
        previous = b""
        pos, end = 0, len(data)
        while pos < end:
            space = data.find(b" ", pos)
            nul = data.find(b"\0", space + 1) if space >= 0 else -1
            if nul < 0 or nul + 21 > end:
                return None
            mode, name = data[pos:space], data[space + 1 : nul]
            if mode not in _CANONICAL_MODES or name in (b"", b".", b"..") or b"/" in name:
                return None
            key = name + b"/" if mode == b"40000" else name
            if key <= previous or (mode == b"40000" and name in files):
                return None
            if mode != b"40000":
                files.add(name)
            starts.append(pos)
            previous, pos = key, nul + 21
        return cls(data, starts)

    def _entry(self, i: int) -> tuple[bytes, bytes, int]:
        """(key, mode, offset of the id) of entry ``i``."""
        data, start = self.data, self.starts[i]
        space = data.index(b" ", start)
        nul = data.index(b"\0", space)
        mode = data[start:space]
        name = data[space + 1 : nul]
        return (name + b"/" if mode == b"40000" else name), mode, nul + 1

    def get(self, name: str) -> tuple[str, int] | None:
        """(id, mode) of the entry ``name`` (None: no such entry)."""
        try:
            raw = name.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return None  # no bytes spell it: no entry has it
        for key in (raw, raw + b"/"):  # a file's place, then a folder's
            lo, hi = 0, len(self.starts)
            while lo < hi:
                mid = (lo + hi) // 2
                if self._entry(mid)[0] < key:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < len(self.starts):
                found, mode, at = self._entry(lo)
                if found == key:
                    return self.data[at : at + 20].hex(), int(mode, 8)
        return None


#: One raw tree entry as :func:`parse_tree` splits it, in its strict form: octal digits, a
#: space, a name without NUL, a NUL, 20 bytes of id.
_ENTRY = rb"[0-7]+ [^\0]*\0.{20}"  # compiled with re.S: ``.`` any byte ([\s\S]: 5x slower)
_STRICT_TREE = re.compile(rb"(?:%s)*" % _ENTRY, re.S)


def tree_entry(data: bytes, name: str) -> tuple[str, int] | None:
    """``parse_tree(data).get(name)``, exactly (also its errors), found by the regex engine
    instead of a Python loop over every entry: a tree every entry of which is in the strict
    form (:data:`_ENTRY`) is split by :func:`parse_tree` into those very entries (the first
    space after a run of octal digits, the first NUL after it, 20 bytes), and the last entry
    of a name is the one its dict keeps. Any other tree (a mode ``int`` reads in another
    way, a cut last entry, a name no bytes spell) is parsed whole, as before."""
    try:
        raw = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return parse_tree(data).get(name)
    if _STRICT_TREE.fullmatch(data) is None:
        return parse_tree(data).get(name)
    if b"\0" in raw or b" %s\0" % raw not in data:
        # no entry's name holds a NUL; an entry of that name is ``<mode> <name>\0<id>`` in
        # the strict form: absent those bytes, none is there (the usual answer: no
        # ``.gitattributes`` in a 10,000-entry plans folder, found by one byte search
        # instead of the greedy match below, 5 of an approving pass's ms)
        return None
    last = re.compile(rb"(?:%s)*([0-7]+) %s\0(.{20})" % (_ENTRY, re.escape(raw)), re.S)
    found = last.match(data)  # greedy: the last entry of that name
    if found is None:
        return None
    return found.group(2).hex(), int(found.group(1), 8)


def _tree_key(name: str, mode: int) -> bytes:
    """git sorts a folder as ``name/``."""
    raw = name.encode("utf-8", "surrogateescape")
    return raw + b"/" if mode == _TREE_MODE else raw


def _in_git_order(entries: Mapping[str, tuple[str, int]]) -> bool:
    previous = b""
    for name, (_, mode) in entries.items():
        key = _tree_key(name, mode)
        if key < previous:
            return False
        previous = key
    return True


def serialize_tree(entries: Mapping[str, tuple[str, int]], *, presorted: bool = False) -> bytes:
    """The raw tree object, entries in git's order (a folder sorts as ``name/``)."""
    names = entries if presorted else sorted(entries, key=lambda n: _tree_key(n, entries[n][1]))
    return b"".join(
        b"%o %s\0%s"
        % (entries[n][1], n.encode("utf-8", "surrogateescape"), bytes.fromhex(entries[n][0]))
        for n in names
    )


def _kind(line: bytes) -> bytes | None:
    """The type of a ``cat-file --batch-check`` answer (None: missing)."""
    parts = line.split()
    return parts[1] if len(parts) == 3 else None


def _askable(spec: str) -> bool:
    """Does ``<tree-ish>:<path>`` reach ``cat-file --batch-check`` unchanged? One line, no
    carriage return (git strips a final one: ``x\\r`` would be read as ``x``), and UTF-8
    (GitPython encodes the line; a non-UTF-8 name is held as surrogate escapes)."""
    if "\n" in spec or "\r" in spec:
        return False
    try:
        spec.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
