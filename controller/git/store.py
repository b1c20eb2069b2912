"""Local mode's own object store: history read only from objects named by their content.

In local mode the agent shares the working tree, and so ``.git/objects``. git trusts what it
finds there: a commit-graph file (also a ``--split`` chain, or an alternate's) gives a commit
another root tree or other parents without the commit object being read; a one-object pack
that shadows a real object, or a rewritten loose object, gives an id other bytes. git reads
none of them against their names, and ``verify-commit`` still accepts the approver's
signature over the untouched commit object: her signed approval of one plan approved
another, her signed rejection vanished (round 53).

So the controller reads no object from the shared store. Its repository handle runs every git
child with ``GIT_OBJECT_DIRECTORY`` set to the store of a bare repository in its state
directory (``objects.git``), which nothing fills but ``git fetch`` from the shared repository:
``upload-pack`` reads the shared store, ``index-pack`` names every object it receives by the
hash of its bytes, and fetch's connectivity check refuses a tip whose objects did not all
arrive. A forged object reaches the store under its true name, where nothing refers to it; a
forgery upload-pack cannot get past (a rewritten object the tip needs) fails the fetch,
``E_GIT``, loudly, and nothing runs. A commit-graph or alternate of the shared store is never
read: the store's ``info/`` is the controller's.

What the controller writes (blobs, trees, its commits) goes to both stores, the same bytes
under the same names: its commits stay readable by everyone's git in the shared checkout.

Nothing is taken in until the branch points at a commit not known whole: the controller's
own commits are there already; the few commits of an approval or a merge are taken in
in-process by :class:`Intake` (every object hashed, as index-pack would); the first start,
and anything the intake declines, by the fetch. ``upload-pack`` runs in the shared
repository, with its config, but from a command line that pins what it could be made to run
or read: no transport (a "partial clone" would lazily fetch through a program the agent
names), no commit-graph, replace refs or grafts (they would make it send less and the fetch
fail, every pass), no hooks.

A fetch that fails leaves what it received in the store, so "the store holds the commit" is
never the test: a commit is known whole when the store's branch names it (fetch moves the
branch only after its connectivity check) or this process made it on a whole parent.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from controller.errors import GitError

#: Loose objects bigger than this are stored without compression (git reads any level;
#: ``git gc`` recompresses).
STORE_RAW_ABOVE = 64 * 1024

#: The store's folder in the state directory.
STORE_NAME = "objects.git"

#: What ``upload-pack`` runs with in the shared repository (its ``-c`` is the command scope:
#: nothing in the repository's config overrides it; git clears ``GIT_CONFIG_*`` and the
#: object directory variables for a local transport's server side, so they are set here).
_UPLOAD_PACK_PINS = (
    ("protocol.allow", "never"),
    *((f"protocol.{name}.allow", "never") for name in ("file", "git", "ssh", "http", "https")),
    *((f"protocol.{name}.allow", "never") for name in ("ext", "fd", "testgit")),
    ("core.commitGraph", "false"),
    ("core.useReplaceRefs", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.alternateRefsCommand", ""),
    ("advice.graftFileDeprecated", "false"),
    ("uploadpack.allowAnySHA1InWant", "false"),
)


def upload_pack_command() -> str:
    """The ``--upload-pack`` program (git runs it through the shell, then the repository)."""
    pins = " ".join(f"-c {shlex.quote(f'{key}={value}')}" for key, value in _UPLOAD_PACK_PINS)
    # git clears GIT_GRAFT_FILE and GIT_NO_REPLACE_OBJECTS for a local transport's server
    # side: a grafts file the agent writes would otherwise cut the history it sends
    return f"env GIT_GRAFT_FILE=/dev/null GIT_NO_REPLACE_OBJECTS=1 git {pins} upload-pack"


def object_id(kind: bytes, data: bytes) -> str:
    """The name git gives an object of ``kind`` holding ``data`` (SHA-1 of header and bytes)."""
    digest = hashlib.sha1(b"%s %d\0" % (kind, len(data)))
    digest.update(data)
    return digest.hexdigest()


def check_object(sha: str, kind: bytes, data: bytes, objects: Path | str) -> None:
    """Refuse bytes read from a store nobody verified (the shared ``.git/objects`` of local
    mode) that are not the object ``sha`` names: a pack or a loose file an agent wrote shadows
    it (round 58). ``E_GIT`` naming the object and the store."""
    if object_id(kind, data) != sha:
        raise forged_object(sha, objects)


def forged_object(sha: str, objects: Path | str, others: Sequence[str] = ()) -> GitError:
    more = f" (also {', '.join(others)})" if others else ""
    return GitError(
        f"object {sha}{more} in the object store {objects} does not hash to its name: another "
        "object (a pack or a loose file someone wrote) shadows it; nothing read from it is used",
        path=str(objects),
        remedy=f"run git fsck --full in the repository; delete each loose object file it "
        f"calls a hash mismatch ({objects}/xx/yyyy...), or the pack holding it, then write the "
        "true object again: git hash-object -w <file> for a file you have (the plan as "
        "committed, e.g. from the working tree), or git fetch <clone> from a clone that "
        "holds it",
    )


def ensure_store(path: Path) -> Path:
    """The bare repository at ``path``, made (empty) when missing; returns its objects dir.

    Made in a temporary folder beside it and renamed: a killed start leaves no half store."""
    if (path / "objects").is_dir() and (path / "HEAD").is_file():
        return path / "objects"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".objects-", dir=path.parent))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    result = subprocess.run(
        ["git", "init", "-q", "--bare", str(tmp)], env=env, capture_output=True, check=False
    )
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise GitError(
            f"cannot make the controller's object store {path}: {message}",
            path=str(path),
            remedy="make the state directory writable by the controller",
        )
    try:
        tmp.rename(path)
    except OSError:  # another process made it first
        shutil.rmtree(tmp, ignore_errors=True)
        if not (path / "objects").is_dir():
            raise
    return path / "objects"


def write_loose(
    objects: Path, sha: str, header: bytes, data: bytes, body: list[bytes], level: int | None = None
) -> None:
    """One loose object ``sha`` in the store ``objects`` (``body``: its compressed bytes,
    made once and shared between the stores it goes to)."""
    folder = objects / sha[:2]
    target = folder / sha[2:]
    if target.exists():
        # As git does: a fresh mtime keeps a concurrent `git gc --prune` off an old
        # unreachable object that our commit is about to reference.
        with contextlib.suppress(OSError):
            os.utime(target)
        return
    if not body:
        if level is None:
            level = 0 if len(data) > STORE_RAW_ABOVE else 1
        packed = zlib.compressobj(level)
        body.append(packed.compress(header) + packed.compress(data) + packed.flush())
    fd, tmp = _temp_object(folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(body[0])
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: From this many objects written together on, one pack (and its index) per store instead of
#: a loose file each: creating a file costs ~0.3 ms on this class of disk, and a burst's
#: commit writes a few hundred objects into two stores (issue 17).
PACK_AT = 16


#: More packs than this in the controller's own store, and the small ones are rolled up
#: (``git repack --geometric=2 -d``: each lookup of a missing object reads every pack's index).
MAX_PACKS = 48


def pack_count(objects: Path) -> int:
    """How many packs ``objects`` holds (their indexes, as git counts them)."""
    try:
        return sum(1 for name in os.listdir(objects / "pack") if name.endswith(".idx"))
    except OSError:
        return 0


def write_pack(objects: Path, items: Sequence[tuple[str, bytes, bytes]]) -> Path:
    """``items`` ((id, kind, bytes) each) as one pack in ``objects/pack``, undeltified, with
    its version-2 index, both written by gitdb (GitPython's object database), named as git
    names packs (``pack-<the pack's SHA-1>``), read-only. The index is renamed into place
    last: git finds a pack by its index, and re-reads the pack folder when an object it is
    asked for is missing, so a running ``cat-file`` sees the new objects. Returns the pack's
    ``.keep`` file, made before anything else (as ``git index-pack --keep`` does): no repack
    drops the pack's still unreachable objects until the caller removes it, once a ref names
    them (:meth:`~controller.git.base.RepoBase.released_packs`)."""
    from io import BytesIO

    from gitdb.base import OStream
    from gitdb.pack import PackEntity

    streams = [OStream(bytes.fromhex(sha), kind, len(d), BytesIO(d)) for sha, kind, d in items]
    pack, index = bytearray(), bytearray()
    name, _ = PackEntity.write_pack(streams, pack.extend, index.extend, len(streams))
    folder = objects / "pack"
    folder.mkdir(exist_ok=True)
    keep = folder / f"pack-{name.hex()}.keep"
    keep.write_bytes(b"plangate: until a ref names its objects\n")
    for suffix, body in ((".pack", pack), (".idx", index)):
        fd, tmp = _temp_object(folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(body)
            os.replace(tmp, folder / f"pack-{name.hex()}{suffix}")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return keep


_TEMP_NAMES = itertools.count()


def _temp_object(folder: Path) -> tuple[int, str]:
    """A new read-only temp file in ``folder`` (made when missing), open for writing: a name
    of this process's own, created exclusively (a thousand-plan burst writes 4,000 loose
    objects: ``mkstemp``'s random names, the ``mkdir`` tried each time and a ``chmod`` after
    cost a third of the writing, issue 17); ``mkstemp`` only when that name is taken."""
    tmp = f"{folder}/tmp_obj_{os.getpid()}_{next(_TEMP_NAMES)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    for _ in range(2):
        try:
            return os.open(tmp, flags, 0o444), tmp
        except FileNotFoundError:
            folder.mkdir(exist_ok=True)
        except FileExistsError:
            break
    fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
    os.chmod(tmp, 0o444)
    return fd, tmp


# -- taking a few commits in without git fetch --------------------------------------------------

#: One tree entry as git writes it: octal mode, space, name, NUL, 20-byte id.
_ENTRY = re.compile(rb"([0-7]+) ([^\0]*)\0(.{20})", re.S)
_WHOLE_ENTRY = re.compile(rb"[0-7]+ [^\0]*\0.{20}", re.S)
_TREE = re.compile(rb"(?:[0-7]+ [^\0]*\0.{20})*", re.S)
_GITLINK = b"160000"
_DIR = b"40000"


class NotTaken(Exception):
    """The commits are not for the quick intake (too many, an odd shape, an object whose bytes
    do not hash to its name): ``git fetch`` decides."""


@dataclass
class Intake:
    """The few commits a branch moved by (an approval, a merged pull request), taken into the
    controller's store in-process, each object hashed from its bytes, as index-pack would.

    ``git fetch`` of one commit on a repository of 10,000 plans spends most of its ~35 ms in
    processes (upload-pack, pack-objects, unpack-objects, the connectivity check) and in
    walking the 300 KB ``plans`` tree twice; the approval-to-first-action target is 50 ms.
    What is taken in, and why it is whole: every new commit is read from the shared store and
    hashed; its root tree is compared with its first parent's, which is whole (in the store
    with everything it needs); an entry whose id is the same at the same path is whole with
    it; every other entry is read, hashed and written, a tree recursively against the entry
    its base had at that path, so nothing is taken as whole for merely being in the store (a
    failed fetch leaves objects whose children are missing). Anything else (more than
    :attr:`max_commits` commits, more than :attr:`max_objects` objects, one bigger than
    :attr:`max_read`, a root commit, an object that does not hash to its name) raises
    :class:`NotTaken` and git fetch decides. Blobs are written as git writes loose ones (zlib
    level 1), trees as the controller writes its own (raw above ``STORE_RAW_ABOVE``: the hot
    path's 300 KB ``plans`` tree)."""

    #: reads (kind, bytes) of an object from the shared store (None: missing)
    shared: Callable[[str], tuple[bytes, bytes] | None]
    #: the size of an object in the shared store (None: missing), asked before reading it
    size: Callable[[str], int | None]
    #: reads the bytes of an object (a commit, a tree) from the controller's store
    own: Callable[[str], bytes]
    #: does the controller's store hold this object?
    has: Callable[[str], bool]
    #: writes (kind, bytes) into the controller's store; returns the id
    write: Callable[[bytes, bytes], str]
    #: is this commit whole in the controller's store?
    whole: Callable[[str], bool]
    #: the entries of big trees taken in lately, by id (the repository handle keeps a few:
    #: the next approval's base is the tree this one took in)
    entries: dict[str, frozenset[bytes]] = field(default_factory=dict)
    max_commits: int = 32
    max_objects: int = 4096
    #: an object bigger than this is left to git, which streams it (a hostile 80 MB blob
    #: would otherwise be read whole into the controller's memory)
    max_read: int = 1024 * 1024
    #: blobs a new commit replaces whose copy in the shared store does not hash to its name
    #: (:meth:`_spot`): the controller needs none of them, but the operator must hear of it
    forged: list[str] = field(default_factory=list)
    #: at most this many replaced blobs are checked per intake (an approval changes one)
    max_spots: int = 16
    _objects: int = 0
    _spots: int = 0

    def take(self, tip: str) -> None:
        commits: dict[str, tuple[str, list[str], bytes]] = {}
        todo = [tip]
        while todo:
            sha = todo.pop()
            if sha in commits or self.whole(sha):
                continue
            if len(commits) >= self.max_commits:
                raise NotTaken(f"more than {self.max_commits} new commits")
            raw = self._read(sha, b"commit")
            tree, parents = commit_links(raw)
            if not parents:
                raise NotTaken("a root commit")
            commits[sha] = (tree, parents, raw)
            todo.extend(parents)
        for sha in _parents_first(commits):
            tree, parents, raw = commits[sha]
            base = commits[parents[0]][0] if parents[0] in commits else None
            if base is None:
                base = commit_links(self.own(parents[0]))[0]
            self._tree(tree, base)
            self.write(b"commit", raw)

    def _read(self, sha: str, kind: bytes) -> bytes:
        self._objects += 1
        if self._objects > self.max_objects:
            raise NotTaken(f"more than {self.max_objects} new objects")
        size = self.size(sha)
        if size is not None and size > self.max_read:
            raise NotTaken(f"{sha} is {size} bytes: git fetch streams it")
        found = None if size is None else self.shared(sha)
        if found is None:
            raise NotTaken(f"{sha} is not in the repository's store")
        got, data = found
        digest = hashlib.sha1(b"%s %d\0" % (got, len(data)))
        digest.update(data)
        if got != kind or digest.hexdigest() != sha:
            raise NotTaken(f"{sha} does not hash to its name")
        return data

    def _tree(self, tree: str, base: str | None) -> None:
        if tree == base:
            return
        raw = self._read(tree, b"tree")
        if _TREE.fullmatch(raw) is None:
            raise NotTaken(f"tree {tree} is not as git writes trees")
        gone: dict[bytes, tuple[bytes, bytes]] = {}
        window = None
        if base is not None and len(raw) > STORE_RAW_ABOVE and base not in self.entries:
            window = changed_entries(raw, self.own(base))
        if window is not None:  # the big tree beside its base: only the entries between
            new, removed = window
            for mode, name, oid in _entries(removed):
                gone[name] = (mode, oid)
        else:
            new = frozenset(_WHOLE_ENTRY.findall(raw))  # whole entries: no tuples for the alike
        if base is not None and window is None:
            old = self.entries.get(base)
            if old is None:
                old = frozenset(_WHOLE_ENTRY.findall(self.own(base)))
            for mode, name, oid in _entries(old - new):
                gone[name] = (mode, oid)
            if len(raw) > STORE_RAW_ABOVE:  # the next approval's base: not parsed again
                self.entries[tree] = new
            new -= old
        for mode, name, oid in _entries(new):
            sha = oid.hex()
            if mode == _GITLINK:
                continue  # a submodule's commit: not an object of this repository
            if mode == _DIR:
                was = gone.get(name)
                self._tree(sha, was[1].hex() if was is not None and was[0] == _DIR else None)
            else:
                was = gone.get(name)
                if was is not None and was[0] != _DIR and was[0] != _GITLINK:
                    self._spot(was[1].hex())
                if not self.has(sha):  # a blob in the store is whole
                    self.write(b"blob", self._read(sha, b"blob"))
        self.write(b"tree", raw)  # written as the controller writes trees (raw when big)

    def _spot(self, sha: str) -> None:
        """Hash the shared store's copy of a blob a new commit replaces: the version the
        approver read there (her ``git show``, her editor's diff) before she changed it. The
        controller reads its own copy, but a shadowing pack under that name is a forgery the
        operator must hear of (round 58); one small read, no ``git fsck`` per pass."""
        if self._spots >= self.max_spots:
            return
        self._spots += 1
        size = self.size(sha)
        found = None if size is None or size > self.max_read else self.shared(sha)
        if found is not None and object_id(found[0], found[1]) != sha:
            self.forged.append(sha)


#: steps :func:`changed_entries` takes before it leaves the comparison to whole sets
WINDOW_STEPS = 256


def changed_entries(new: bytes, old: bytes) -> tuple[frozenset[bytes], frozenset[bytes]] | None:
    """(entries only ``new`` has, entries only ``old`` has) of two raw trees, whole entries
    in :data:`_WHOLE_ENTRY`'s form, found by reading only where the two differ; None when
    that takes more than :data:`WINDOW_STEPS` steps or an entry is not in the strict form
    (the caller compares whole sets).

    An approval changes one entry of a 10,000-entry plans tree: splitting both trees into
    sets of entries cost 8 ms of the approving pass (bench_daemon). Both trees are read from
    their first byte as git reads them (``<mode> <name>\0<20 bytes>``, each entry's end
    fixed by its bytes), side by side, as git's sorted trees are merged: from two entry
    boundaries, the bytes both go on with alike are skipped up to the last entry boundary
    within them (the same entries, read the same way in both), then the next entry of each
    is compared by name; the smaller one is only in its tree, a name in both with other
    bytes is in each. Every entry of ``new`` is thus either skipped beside the same bytes of
    ``old`` or counted new: on a hostile tree (a name twice, out of order) the answer holds
    every entry whole sets call new or gone, and maybe more (read again, never skipped)."""
    i = j = 0
    added: list[bytes] = []
    removed: list[bytes] = []
    for _ in range(WINDOW_STEPS):
        same = _common_run(new, i, old, j)
        if same:
            run = _TREE.match(new, i, i + same)
            assert run is not None  # ``(...)*`` matches the empty string
            j += run.end() - i
            i = run.end()
        if i == len(new) and j == len(old):
            return frozenset(added) - frozenset(removed), frozenset(removed) - frozenset(added)
        ours = _WHOLE_ENTRY.match(new, i) if i < len(new) else None
        theirs = _WHOLE_ENTRY.match(old, j) if j < len(old) else None
        if (ours is None and i < len(new)) or (theirs is None and j < len(old)):
            return None  # not an entry in the strict form
        key_new = _sort_key(ours[0]) if ours is not None else None
        key_old = _sort_key(theirs[0]) if theirs is not None else None
        if ours is not None and (key_old is None or key_new is None or key_new <= key_old):
            added.append(ours[0])
            i = ours.end()
        if theirs is not None and (key_new is None or key_old is None or key_old <= key_new):
            removed.append(theirs[0])
            j = theirs.end()
    return None


def _sort_key(entry: bytes) -> bytes:
    """git's order of a whole entry: its name, a folder's as if it ended in ``/``."""
    mode, _, rest = entry.partition(b" ")
    name = rest[: rest.index(b"\0")]
    return name + b"/" if mode == _DIR else name


def _common_run(a: bytes, i: int, b: bytes, j: int) -> int:
    """How many bytes ``a`` from ``i`` and ``b`` from ``j`` go on with alike (the slices
    halved: each comparison one memcmp)."""
    lo, hi = 0, min(len(a) - i, len(b) - j)  # alike below lo; the first difference below hi
    while hi - lo > 64:
        mid = (lo + hi) // 2
        if a[i + lo : i + mid] == b[j + lo : j + mid]:
            lo = mid
        else:
            hi = mid
    while lo < hi and a[i + lo] == b[j + lo]:
        lo += 1
    return lo


def _entries(whole: frozenset[bytes]) -> list[tuple[bytes, bytes, bytes]]:
    found = []
    for entry in whole:
        match = _ENTRY.fullmatch(entry)
        assert match is not None  # what _WHOLE_ENTRY found
        found.append((match[1], match[2], match[3]))
    return found


def commit_links(raw: bytes) -> tuple[str, list[str]]:
    """(tree, parents) of a commit object's bytes; NotTaken when it has no tree line."""
    header = raw.split(b"\n\n", 1)[0].split(b"\n")
    if not header or not header[0].startswith(b"tree "):
        raise NotTaken("a commit without its tree line")
    parents = [line[7:].decode() for line in header[1:] if line.startswith(b"parent ")]
    return header[0][5:].decode(), parents


def _parents_first(commits: dict[str, tuple[str, list[str], bytes]]) -> list[str]:
    order: list[str] = []
    seen: set[str] = set()

    def visit(sha: str) -> None:
        stack = [(sha, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if node in seen or node not in commits:
                continue
            seen.add(node)
            stack.append((node, True))
            stack.extend((p, False) for p in commits[node][1])

    for sha in commits:
        visit(sha)
    return order
