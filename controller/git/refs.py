"""Refs and compare-and-swap: where branches point, and moving them safely.

The branch head is read from the ref files when git's layout allows (loose ref, then
``packed-refs``); a branch only moves by compare-and-swap (:meth:`Refs.update_ref` with the
old value) or by a non-forced push, so a concurrent commit makes the swap fail instead of
being lost. Fetch and push to the remote live here too, as does refusing to write while git
itself is busy (a merge, a rebase, a held ``index.lock``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import stat
import time
from collections.abc import Sequence
from pathlib import Path

from controller.display import masked_url
from controller.errors import (
    GitError,
    PlangateError,
    PushHeld,
    PushRefused,
    StorageFailed,
    storage_failed,
)
from controller.git.base import RepoBase, check_git_dir, git_failure, write_note
from controller.git.deadline import DEADLINES
from controller.git.store import (
    Intake,
    NotTaken,
    forged_object,
    object_id,
    upload_pack_command,
    write_loose,
)

_HEX40 = re.compile(rb"[0-9a-f]{40}")
_LOCKED = re.compile(r"Unable to create '([^'\n]+\.lock)': File exists")


class Refs(RepoBase):
    """Reading refs, moving them by compare-and-swap, fetching and pushing."""

    #: The controller's note of the ref it is moving (in its state directory): the lock
    #: files its ``git update-ref`` holds outlive a controller killed meanwhile; the next
    #: one removes them (:meth:`recover_ref_locks`). None: nothing noted (other writers).
    ref_lock_note: Path | None = None

    def rev(self, ref: str) -> str | None:
        """The commit ``ref`` names (None: it names none); ``E_GIT`` when it names an object
        git cannot read: a failed read is never "no such commit" (round 85: ``approve`` under
        ``GIT_OBJECT_DIRECTORY`` said the committed plan "is not committed")."""
        result = self.run_raw("rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
        if result.returncode == 0:
            return result.stdout.decode().strip() or None
        self._check_not_broken(ref)
        named = self._named(ref)
        if named is not None and self.run_raw("cat-file", "-e", named).returncode != 0:
            raise GitError(
                f"cannot read object {named} ({ref}): git's object store does not hold it",
                remedy="check the repository (git fsck) and the GIT_* variables set",
            )
        self._check_readable(ref, result.stderr)
        return None

    def branch_head(self, branch: str) -> str | None:
        """The commit ``refs/heads/<branch>`` points at, read in-process when git's files
        allow (loose ref, then ``packed-refs``), else by ``git rev-parse``. With the
        controller's own object store (local mode) the commit is fetched into it first when
        it is not there yet (:mod:`controller.git.store`)."""
        name = f"refs/heads/{branch}"
        if self.store is None:
            return self._read_ref(name) or self.rev(name)
        return self._taken_in(name, self._read_ref(name) or self._named(name))

    def _named(self, ref: str) -> str | None:
        """The id a ref names, whether the object is in the store or not."""
        result = self.run_raw("rev-parse", "--verify", "-q", ref)
        out = result.stdout.strip()
        return out.decode() if result.returncode == 0 and _HEX40.fullmatch(out) else None

    def _taken_in(self, ref: str, sha: str | None) -> str | None:
        """``sha``, the commit ``ref`` of the shared repository names, once the controller's
        own store holds it and every object it needs, fetched from the shared repository;
        when the ref moves on meanwhile, what it names then."""
        for _ in range(8):
            if sha is None or self._whole(ref, sha):
                return sha
            intake = self._intake()
            try:  # a few commits (an approval, a merge): in-process, each object hashed
                with self.released_packs():  # kept from a repack until the ref names them
                    with self.packing():
                        intake.take(sha)
                    self._set_store_ref(ref, sha)
            except NotTaken:
                self._fetch_into_store(ref)
            except OSError as exc:  # the store's disk: nothing of the branch can be read
                raise storage_failed(str(self.store), exc) from None
            finally:
                self.forged_shared.extend(intake.forged)
            if self._whole(ref, sha):
                return sha
            sha = self._read_ref(ref) or self._named(ref)  # it moved on during the fetch
        raise GitError(
            f"{ref} of {self.path} moved on during every fetch into the controller's store",
            remedy="run the controller again when the branch is quiet",
        )

    def _whole(self, ref: str, sha: str) -> bool:
        """Is ``sha`` known to be in the controller's store with every object it needs: the
        store's ``ref`` after a fetch (git moves it only once all arrived), or a commit this
        process made? (Never "the store has the object": a failed fetch leaves objects.)"""
        if sha in self._present:
            return True
        named = self._store_ref(ref)
        if named is not None:
            self.made_whole(named)  # the base the intake compares the new commits with
        return named == sha

    def _store_ref(self, ref: str) -> str | None:
        """What the store's ``ref`` names: a commit whole in it (fetch moves it only then)."""
        assert self.store is not None
        try:  # the store is the controller's own: a loose ref after a fetch
            named = (self.store / ref).read_bytes().strip().decode()
        except (OSError, UnicodeDecodeError):
            result = self.run_raw("--git-dir", str(self.store), "rev-parse", "--verify", "-q", ref)
            named = result.stdout.strip().decode()
        return named if _HEX40.fullmatch(named.encode()) else None

    def _intake(self) -> Intake:
        """Reading the shared store (hashing every object read) and writing the own one."""
        shared_reader = self._shared_git()

        def shared(sha: str) -> tuple[bytes, bytes] | None:
            with self._lock, DEADLINES.bound(self.timeout, self._stop_shared, "git cat-file"):
                try:
                    _, kind, _, data = shared_reader.get_object_data(sha)
                except (ValueError, OSError):
                    return None
            return kind if isinstance(kind, bytes) else str(kind).encode(), bytes(data)

        def has(sha: str) -> bool:
            if self._pending is not None and sha in self._pending:
                return True
            with self._lock, DEADLINES.bound(self.timeout, self._stop_readers, "git cat-file"):
                try:
                    self._repo.git.get_object_header(sha)
                except (ValueError, OSError):
                    return False
            return True

        def size(sha: str) -> int | None:
            with self._lock, DEADLINES.bound(self.timeout, self._stop_shared, "git cat-file"):
                try:
                    return int(shared_reader.get_object_header(sha)[2])
                except (ValueError, OSError):
                    return None

        def write(kind: bytes, data: bytes) -> str:
            header = b"%s %d\0" % (kind, len(data))
            digest = hashlib.sha1(header)
            digest.update(data)
            sha = digest.hexdigest()
            level = 1 if kind == b"blob" else None  # trees as the controller writes its own
            if self._pending is not None:  # written at the end of :meth:`packing`
                self._pending[sha] = (kind, data, False, level)
                return sha
            write_loose(self._objects, sha, header, data, [], level=level)
            return sha

        def whole(sha: str) -> bool:
            return sha in self._present

        while len(self._intake_entries) > 8:  # a few big trees' entries, newest kept
            del self._intake_entries[next(iter(self._intake_entries))]
        return Intake(
            shared=shared, size=size, own=self._object, has=has, write=write, whole=whole,
            entries=self._intake_entries,
        )  # fmt: skip

    def verify_written(self) -> None:
        """Read back, hashed, what the shared store holds under every name this process
        wrote there since the last call (round 60: an agent plants an object under the name
        of the controller's next freeze, or of an approval ``plangate approve`` is about to
        commit; git keeps the planted bytes). A person's command (:attr:`checks_objects`)
        refuses with ``E_GIT``; the controller, whose own store holds the true bytes, notes
        them in :attr:`forged_shared` for the pass to report."""
        shas, self._unverified_writes = list(dict.fromkeys(self._unverified_writes)), []
        bad = [sha for sha in shas if not self._reads_back(sha)]
        if not bad:
            return
        if self.checks_objects:
            raise forged_object(bad[0], self._objects, others=bad[1:])
        self.forged_shared.extend(bad)

    def _reads_back(self, sha: str) -> bool:
        if self.checks_objects:
            try:
                self._typed_object(sha)
            except GitError:
                return False
            return True
        found = self._intake().shared(sha)
        return found is not None and object_id(found[0], found[1]) == sha

    def _set_store_ref(self, ref: str, sha: str) -> None:
        """Point the store's ``ref`` at ``sha``, a commit whole in it (what a fetch does)."""
        self.made_whole(sha)
        self._write_store_ref(ref, sha)

    def _write_store_ref(self, ref: str, sha: str) -> None:
        """The store's loose ``ref`` file (the store is the controller's own; a hint for the
        next process and what keeps its objects reachable: a failed write costs a fetch)."""
        assert self.store is not None
        path = self.store / ref
        tmp = path.with_name(f".{path.name}.plangate-{os.getpid()}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(f"{sha}\n".encode())
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)

    def made_whole(self, sha: str, ref: str | None = None, parent: str | None = None) -> None:
        """Note ``sha`` as whole in the controller's store (fetched, or made here); a commit
        made here on ``parent``, where the store's ``ref`` is, moves it on (the next process
        then needs no fetch to know its own commit whole)."""
        self._present[sha] = None
        while len(self._present) > 256:
            del self._present[next(iter(self._present))]
        if ref is None or self.store is None:
            return
        try:
            if (self.store / ref).read_bytes().strip().decode() != parent:
                return
        except (OSError, UnicodeDecodeError):
            return  # a hint only: the next fetch moves it
        self._write_store_ref(ref, sha)

    def _fetch_into_store(self, ref: str) -> None:
        """Fetch ``ref`` of the shared repository into the controller's store (see
        :mod:`controller.git.store`): every object it receives is named by its bytes, and
        the fetch fails unless all the tip needs arrived. Never from or into history git
        holds shallow (:meth:`check_complete`): git would only warn and leave the ref."""
        assert self.store is not None
        self.check_complete()
        result = self.run_raw(
            "--git-dir", str(self.store), "fetch", "-q", "--no-tags", "--no-write-fetch-head",
            "--no-recurse-submodules", f"--upload-pack={upload_pack_command()}",
            str(self.common_dir), f"+{ref}:{ref}",
            pins=(("protocol.file.allow", "always"),),
        )  # fmt: skip
        if result.returncode != 0:
            message = result.stderr.decode("utf-8", "replace").strip()
            raise GitError(
                f"cannot fetch {ref} of {self.path} into the controller's object store: "
                f"{message or 'git failed without a message'}. The shared repository's objects "
                "do not hold what its branch names as git's pack protocol reads them (a "
                "damaged or forged object, a commit-graph, pack or loose object written by "
                "hand); nothing of it is read until a fetch succeeds",
                path=str(self.common_dir / "objects"),
                remedy="git fsck in the repository names the bad objects; restore them from "
                "a clone (or run the controller in remote mode, where no agent writes .git)",
            )

    def heads_aside(self, remote: str | None) -> list[str]:
        """The tips of the repository's branches, fetched whole into the controller's own
        objects under :data:`ASIDE_NAMESPACE` (never into a branch it reads or pushes):
        remote mode, the remote's heads; local mode, the shared repository's
        ``refs/heads/*`` into its store (:mod:`controller.git.store`), as its branch is. A
        repository read in place (no store, no remote) lists its heads. One fetch; what it
        brings is read by :meth:`~controller.git.commits.Commits.log_mentioning` and let go
        by :meth:`drop_heads_aside`. A failed fetch is ``E_GIT``: unread is not empty."""
        spec = f"+refs/heads/*:{ASIDE_NAMESPACE}*"
        where = self._aside_dir(remote)
        if remote is None and self.store is None:
            return sorted(
                set(self.run("for-each-ref", "--format=%(objectname)", "refs/heads/").split())
            )
        self.check_complete()
        if remote is not None:
            args: tuple[str, ...] = (
                "fetch",
                "-q",
                "--no-tags",
                "--no-write-fetch-head",
                remote,
                spec,
            )
            result = self.run_raw(*args, env={"LC_ALL": "C"}, remote=True)
        else:
            args = (
                *where, "fetch", "-q", "--no-tags", "--no-write-fetch-head",
                "--no-recurse-submodules", f"--upload-pack={upload_pack_command()}",
                str(self.common_dir), spec,
            )  # fmt: skip
            result = self.run_raw(*args, pins=(("protocol.file.allow", "always"),))
        if result.returncode != 0:
            raise git_failure(args, result.stderr.decode("utf-8", "replace"))
        self.check_complete()
        listed = self.run(*where, "for-each-ref", "--format=%(objectname)", ASIDE_NAMESPACE)
        return sorted(set(listed.split()))

    def branch_tips(self) -> list[str]:
        """The commits the repository's branches and remote-tracking branches name (a
        person's clone, read in place: ``plangate check``)."""
        listed = self.run("for-each-ref", "--format=%(objectname)", "refs/heads/", "refs/remotes/")
        return sorted(set(listed.split()))

    def drop_heads_aside(self, remote: str | None) -> None:
        """Delete the refs :meth:`heads_aside` fetched (their objects stay until a gc)."""
        where = self._aside_dir(remote)
        if remote is None and self.store is None:
            return
        listed = self.run(*where, "for-each-ref", "--format=%(refname)", ASIDE_NAMESPACE)
        lines = [f"delete {ref}\n" for ref in listed.split("\n") if ref]
        if lines:
            self.run(*where, "update-ref", "--stdin", input="".join(lines).encode())

    def _aside_dir(self, remote: str | None) -> tuple[str, ...]:
        """The git directory :data:`ASIDE_NAMESPACE` lives in: the store's in local mode."""
        return ("--git-dir", str(self.store)) if remote is None and self.store else ()

    def _push_refs(self) -> list[str]:
        """The refs of :data:`PUSH_NAMESPACE`, from the files when git's layout allows."""
        if (self.common_dir / "reftable").exists():
            listed = self.run("for-each-ref", "--format=%(refname)", PUSH_NAMESPACE)
            return [ref for ref in listed.split("\n") if ref]
        top = self.common_dir / PUSH_NAMESPACE
        loose = [
            p.relative_to(self.common_dir).as_posix()
            for p in top.rglob("*")
            if p.is_file() and not p.name.endswith(".lock")  # git's lock, never a ref
        ]
        packed = [r.decode() for r in self._packed_refs() if r.startswith(PUSH_NAMESPACE.encode())]
        return sorted({*loose, *packed})

    def _check_not_broken(self, ref: str) -> None:
        """E_GIT when ``ref`` (``HEAD``: the branch it names) is a loose ref file that holds
        no commit id: git then reads neither the branch nor HEAD, and the readers said "HEAD
        is detached; git switch main" or "no commits to audit" (round 112,
        ``broken-branch-ref-misdiagnosed``). Asked only once git failed to read ``ref``."""
        name = ref
        if ref == "HEAD":
            try:
                head = (self.git_dir / "HEAD").read_bytes().strip()
            except OSError:
                return
            if not head.startswith(b"ref: "):
                return  # detached, or HEAD itself broken: git's own message says so
            name = head[5:].strip().decode("utf-8", "surrogateescape")
        if not name.startswith("refs/") or (self.common_dir / "reftable").exists():
            return
        path = self.common_dir / name
        try:
            raw = path.read_bytes()
        except OSError:
            return  # absent (an unborn branch), or a folder: not a broken file
        if _HEX40.fullmatch(raw.strip()) or raw.startswith(b"ref: "):
            return
        raise GitError(
            f"the branch ref {name} is broken: its file holds no commit id, so git reads "
            "neither the branch nor HEAD",
            path=str(path),
            remedy="write back the commit it named, the second field of the last line of its "
            "reflog (git itself refuses to update a broken ref): "
            f"tail -n 1 {shlex.quote(str(self.common_dir / 'logs' / name))} | cut -d' ' -f2 > "
            f"{shlex.quote(str(path))}",
        )

    def _check_readable(self, ref: str, stderr: bytes) -> None:
        """E_GIT with git's own words when a quiet read (``-q``: silent for a name that names
        nothing) failed saying ``fatal:``: git could not read the repository itself (a
        garbage line in ``packed-refs`` or ``.git/shallow``), and the readers said "HEAD is
        detached", "no commits to audit" or "is not committed" (round 113,
        ``bad-shallow-misdiagnosed``; round 112's broken-ref class through ``packed-refs``).
        One rule for every file git reads to answer: what it said is the cause."""
        said = [
            line.removeprefix("fatal:").strip()
            for line in stderr.decode("utf-8", "replace").splitlines()
            if line.startswith("fatal:")
        ]
        if not said:
            return
        raise GitError(
            f"git cannot read {ref}: {'; '.join(said)[:500]}",
            path=str(self.path),
            remedy="repair or remove the line git names (packed-refs, shallow and the refs "
            f"are files under {self.common_dir}; keep a copy first); `git fsck` then checks "
            "the rest",
        )

    def _read_ref(self, name: str) -> str | None:
        """A ref's commit from the files (None: absent, symbolic or unusual; ask git)."""
        if (self.common_dir / "reftable").exists():
            return None
        try:
            raw = (self.common_dir / name).read_bytes().strip()
        except FileNotFoundError:
            return self._packed_refs().get(name.encode())
        except OSError:
            return None
        return raw.decode() if _HEX40.fullmatch(raw) else None

    def _packed_refs(self) -> dict[bytes, str]:
        path = self.common_dir / "packed-refs"
        try:
            st = path.stat()
        except OSError:
            return {}
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if self._packed is None or self._packed[0] != key:
            try:
                data = path.read_bytes()
            except OSError:  # replaced or removed since the stat: let git answer
                return {}
            refs: dict[bytes, str] = {}
            for line in data.splitlines():
                sha, _, ref = line.partition(b" ")
                if _HEX40.fullmatch(sha):
                    refs[ref.strip()] = sha.decode()
            self._packed = (key, refs)
        return self._packed[1]

    def current_branch(self) -> str:
        """The checked-out branch; a detached HEAD is ``E_GIT``."""
        # The full name: --short turns refs/heads/main into "heads/main" once a tag (or any
        # other ref) is also called main, and the watched branch would look switched.
        result = self.run_raw("symbolic-ref", "-q", "HEAD")
        ref = result.stdout.decode("utf-8", "surrogateescape").strip()
        if result.returncode != 0:
            self._check_not_broken("HEAD")  # on a branch whose ref git cannot read
            self._check_readable("HEAD", result.stderr)
        if result.returncode != 0 or not ref.startswith("refs/heads/"):
            raise GitError(
                f"{self.path}: HEAD is detached; plangate watches a branch",
                remedy="check out the watched branch (git switch main)",
            )
        return ref.removeprefix("refs/heads/")

    def checked_out_at(self, branch: str, sha: str) -> bool:
        """Is the working tree's HEAD ``branch``, and the branch at ``sha`` (the commit the
        caller just built)? Asked by every writer of its commit's files into the shared
        checkout, under the ``index.lock`` it holds (so no ``git checkout`` switches in
        between): a checkout that left the branch during a run (``git checkout -b side``,
        ``--detach``) is someone else's work, and nothing is written or staged there (round
        116, outcome-staged-on-foreign-checkout). HEAD is read from its file (no git process
        in the usual case); git is asked when the file is not the usual symbolic ref."""
        ref = f"refs/heads/{branch}"
        try:
            raw = (self.git_dir / "HEAD").read_bytes().strip()
        except OSError:
            raw = b""
        if _HEX40.fullmatch(raw):
            return False  # detached
        named = raw.removeprefix(b"ref: ").decode("utf-8", "surrogateescape")
        if not raw.startswith(b"ref: ") or named == "refs/heads/.invalid":  # reftable
            result = self.run_raw("symbolic-ref", "-q", "HEAD")
            named = result.stdout.decode("utf-8", "surrogateescape").strip()
        if named != ref:
            return False
        return (self._read_ref(ref) or self._named(ref)) == sha

    def check_complete(self) -> None:
        """Refuse history git holds shallow: cut off, it hides who wrote and who approved
        what, so neither the controller nor the audit can judge from it. However it became
        shallow (a clone with ``--depth``, a clone of a shallow remote, a ``shallow`` file
        written by hand), git marks it with a ``shallow`` file: in the repository (its
        common directory, or a linked worktree's git directory) or in the controller's own
        object store (local mode). plangate never deepens a history itself (no
        ``--unshallow``, ``--deepen`` or ``--update-shallow``): what it did not see whole is
        made whole by whoever cut it off (docs/threat-model.md)."""
        places = [self.common_dir, self.git_dir, *([self.store] if self.store else [])]
        shallow = next((p / "shallow" for p in places if (p / "shallow").exists()), None)
        if shallow is not None:
            raise shallow_history(self.path, shallow, fetches=self.fetches, store=self.store)

    def check_health(self) -> None:
        """Refuse to write while git itself is busy or a crashed git left its lock, or while
        the git directory holds a file git would hang on (:func:`check_git_dir`)."""
        check_git_dir(self.path)
        self.check_complete()
        for name, what, command in (
            ("MERGE_HEAD", "a merge", "git merge"),
            ("rebase-merge", "a rebase", "git rebase"),
            ("rebase-apply", "a rebase or am", "git rebase (or git am)"),
            ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick"),
            ("REVERT_HEAD", "a revert", "git revert"),
        ):
            if (self.git_dir / name).exists():
                raise GitError(
                    f"{self.path} is in the middle of {what}; plangate waits",
                    remedy=f"finish or abort it ({command} --continue / --abort)",
                )
        lock = self.git_dir / "index.lock"
        if _wait_gone(lock, LOCK_WAIT):
            raise GitError(
                f"fatal: Unable to create '{lock}': File exists. Another git process seems "
                "to be running in this repository, or a git process crashed",
                remedy=f"if no git process is running, remove {lock}",
            )

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        if self._near_first_parent(ancestor, descendant):
            return True
        return self.run_raw("merge-base", "--is-ancestor", ancestor, descendant).returncode == 0

    def keeps_read_line(self, last: str, head: str, paths: Sequence[str] = ()) -> bool:
        """Does ``head`` (a descendant of ``last``) keep what the branch made after ``last`` on
        its first-parent line? False after a fast-forward to a merge of the branch into another
        line that put such a commit behind a second parent (rounds 63-64): a commit of
        ``last..head`` off the new line that descends from ``last``, unless it took ``last``
        from a commit of the new line and does not continue ``last``'s own first-parent line
        (:func:`unread_off_line`).
        A merge straight onto ``last`` (a `git pull` with nothing in between) keeps it: the
        merge brings nothing the reader had not read. With ``paths``, only such commits that
        change something under them count (a `git pull` that put a documentation commit
        behind a second parent hides no decision); a commit of the branch's own line by what
        it changed there, against its first parent."""
        if self._near_first_parent(last, head):
            return True
        spec = f"{last}..{head}"
        rows = self.run("rev-list", "--reverse", "--topo-order", "--parents", spec).split("\n")
        parents = {row[0]: row[1:] for row in (r.split() for r in rows) if row}
        unread = unread_off_line(parents, last, head)
        if not unread or not paths:
            return not unread
        lines = [f"{sha} {unread[sha]}" if unread[sha] else sha for sha in sorted(unread)]
        out = self.run(
            "diff-tree", "--stdin", "-m", "-r", "--root", "--name-only", "--", *paths,
            input="".join(f"{line}\n" for line in lines).encode(),
        )  # fmt: skip
        return not any(line in unread for line in out.split("\n"))

    def _near_first_parent(self, ancestor: str, commit: str, steps: int = 16) -> bool:
        """Is ``ancestor`` one of ``commit``'s last few first parents? (Read in-process: the
        usual case, a scan after a commit or two, needs no ``git merge-base``.)"""
        if not (_HEX40.fullmatch(ancestor.encode()) and _HEX40.fullmatch(commit.encode())):
            return False
        for _ in range(steps):
            if commit == ancestor:
                return True
            try:
                header = self._object(commit).split(b"\n\n", 1)[0]
            except GitError:
                return False
            parents = [line[7:] for line in header.split(b"\n") if line.startswith(b"parent ")]
            if not parents:
                return False
            commit = parents[0].decode()
        return False

    def ref_clash(self, ref: str) -> str | None:
        """The branch whose name keeps git from making ``ref`` (``refs/heads/a`` for
        ``refs/heads/a/b``, or ``refs/heads/a/b/c`` for ``refs/heads/a/b``: a ref is never
        both a name and a folder of names), as its short name; None when nothing does."""
        parts = ref.split("/")
        for depth in range(3, len(parts)):
            above = "/".join(parts[:depth])
            if self.run_raw("rev-parse", "--verify", "-q", above).returncode == 0:
                return above.removeprefix("refs/heads/")
        below = self.run_raw("for-each-ref", "--count=1", "--format=%(refname)", f"{ref}/")
        name = below.stdout.decode("utf-8", "replace").strip()
        return name.removeprefix("refs/heads/") or None

    def update_ref(self, ref: str, new: str, old: str | None) -> bool:
        """Compare-and-swap a ref; False when it no longer points at ``old``. A lock file
        git could not create that is still there after a short wait (a crashed git left
        ``refs/heads/main.lock`` or ``HEAD.lock``) is ``E_GIT`` naming it, never a race
        lost again on every pass."""
        args = ["update-ref", "-m", "plangate", ref, new]
        if old is not None:
            args.append(old)
        note = self.ref_lock_note
        if note is not None:  # a kill while git holds the ref's locks: known as ours after
            write_note(note, f"{time.time_ns()} {new} {ref}\n".encode())
        since = time.time_ns() - 10_000_000  # file times are a tick coarse
        try:
            result = self.run_raw(*args)
        finally:
            if note is not None:
                note.unlink(missing_ok=True)
        if result.returncode == 0:
            return True
        if result.returncode < 0:  # killed: before or after it moved the ref?
            moved = self.run_raw("rev-parse", "--verify", "-q", ref)
            if moved.returncode == 0 and moved.stdout.decode().strip() == new:
                return True  # killed after the rename: the ref moved
            self._drop_dead_lock(ref, new, since)
            raise _killed_update(ref, -result.returncode)
        text = result.stderr.decode("utf-8", "replace")
        locked = _LOCKED.search(text)
        if locked is not None and _wait_gone(Path(locked.group(1)), LOCK_WAIT):
            raise GitError(
                f"cannot move {ref}: {locked.group(0)}. Another git process seems to be "
                "running in this repository, or a git process crashed",
                path=locked.group(1),
                remedy=f"if no git process is running, remove {locked.group(1)}",
            )
        return False

    def _drop_dead_lock(self, ref: str, new: str, since: int) -> None:
        """Remove the locks a killed ``git update-ref`` left: git writes the new id into
        ``<ref>.lock`` (and takes ``HEAD.lock`` when HEAD names the ref, for HEAD's reflog)
        and renames the lock over the ref only after the reflogs are written, so a signal in
        between (``SIGXFSZ``: a reflog past the file-size limit) left them for good, and
        every later commit, the controller's and the person's, failed on them (round 112,
        ``fsize-leaves-ref-lock``). Only that git's are removed: ``<ref>.lock`` holding
        ``new`` (the commit this process just made, which nobody else knows yet), and
        ``HEAD.lock`` made since the call began, empty or holding ``new``."""
        locks = [(self.git_dir if ref == "HEAD" else self.common_dir) / f"{ref}.lock"]
        if ref != "HEAD":
            try:
                head = (self.git_dir / "HEAD").read_bytes().strip()
            except OSError:
                head = b""
            if head == b"ref: " + ref.encode():
                locks.append(self.git_dir / "HEAD.lock")
        for lock in locks:
            try:
                st = os.lstat(lock)
                held = lock.read_bytes().strip() if stat.S_ISREG(st.st_mode) else None
                ours = held == new.encode() or (held == b"" and st.st_mtime_ns >= since)
                if ours and (lock.name != "HEAD.lock" or st.st_mtime_ns >= since):
                    lock.unlink()
            except OSError:
                continue

    def fetch(self, remote: str, branch: str) -> str:
        """Fetch ``branch`` into ``refs/remotes/<remote>/<branch>``; return its commit. The
        controller's clone holds its history whole before and after (:meth:`check_complete`):
        a remote serving a shallow history is refused where git only warns (round 79: git
        rejects the ref, exits 0 and leaves it behind, and the pass would go on with a stale
        tip). A fetch without ``--update-shallow`` never writes a boundary: git rejects a ref
        whose new commits reach a boundary it has not got; the commits stay in the clone, so
        a second fetch connects them when their parents are held whole (nothing is cut off;
        the pass goes on), or rejects them again: ``E_GIT``."""
        self.check_complete()
        ref = f"refs/remotes/{remote}/{branch}"
        args = (
            "fetch",
            "-q",
            "--no-tags",
            "--write-fetch-head",
            remote,
            f"+refs/heads/{branch}:{ref}",
        )
        for _ in range(2):
            result = self.run_raw(*args, env={"LC_ALL": "C"}, remote=True)  # words read below
            text = result.stderr.decode("utf-8", "replace")
            if result.returncode != 0:
                raise git_failure(args, text)
            if _SHALLOW_REJECTED not in text:
                break
        else:
            raise shallow_remote(f"git fetch {remote}", branch, f"git: {text}")
        self.check_complete()
        sha = self.rev(ref)
        if sha is None or not self._fetched_exactly(branch):
            raise GitError(
                f"the remote has no branch {branch} (a ref only named like it, such as "
                f"refs/heads/refs/heads/{branch}, is never read in its place)",
                remedy=f"push the branch {branch} to the remote",
            )
        return sha

    def _fetched_exactly(self, branch: str) -> bool:
        """Did the fetch take the remote's ``refs/heads/<branch>`` itself? git matches the
        source ``refs/heads/main`` by its abbreviation rules and, when the remote has no
        ``main``, takes a branch or tag NAMED ``refs/heads/main`` in its place (round 79);
        ``FETCH_HEAD`` names what it took (``branch 'main' of ...`` for the branch itself)."""
        try:
            rows = (self.git_dir / "FETCH_HEAD").read_bytes().decode("utf-8", "replace")
        except OSError:
            return False
        taken = f"branch '{branch}' of "
        return any(row.partition("\t\t")[2].startswith(taken) for row in rows.split("\n"))

    def push(self, remote: str, branch: str, *, new: bool = False) -> bool:
        """Push without force; False when the remote rejected it because it moved on (a lost
        race). A refusal by the remote's hook or policy (``[remote rejected]``, ``pre-receive
        hook declined``: a forge's push protection) raises :class:`PushRefused` with the
        remote's reason; anything else (an unreachable remote) is ``E_GIT``.

        ``new``: the branch's commit was just made by this process, so only a push that put
        it on the remote counts: when git answers "up to date" (porcelain ``=``: the remote
        held it already, pushed by another process that made the same bytes) it raises
        :class:`PushHeld` (round 91, twinrun: both twins took one start for their own).

        The destination is named by a glob refspec, which git maps by literal substitution:
        an explicit ``refs/heads/main`` is matched against the remote's refs by git's
        abbreviation rules, so a branch named ``refs/heads/main`` (the ref
        ``refs/heads/refs/heads/main``, which anyone who may create a branch can push) made
        it "match more than one" and every push fail (round 79). The source is the one ref
        of a namespace only the controller writes (:meth:`_push_source`)."""
        self._push_source(branch)
        result = self.run_raw(  # not -q: it drops the porcelain line of a pushed ref
            "push",
            "--porcelain",
            remote,
            f"{PUSH_NAMESPACE}*:refs/heads/*",
            env={"LC_ALL": "C"},
            remote=True,
        )
        if result.returncode == 0:
            if new and _held(result.stdout.decode("utf-8", "replace"), branch):
                raise PushHeld(
                    masked_url(
                        f"git push {remote}: the remote already held the commit this "
                        f"controller just made on {branch} (git: up to date): another process "
                        "made the very same commit and pushed it first; it is not this "
                        "controller's, and nothing of it runs here"
                    )
                )
            return True
        text = (result.stdout + result.stderr).decode("utf-8", "replace")
        verdict, reason = push_verdict(text)
        if verdict == "lost":
            self.push_lost = masked_url(_git_words(text))
            return False
        if verdict == "refused":
            raise PushRefused(
                masked_url(f"git push {remote}: the remote refused the push: {reason}"),
                reason=masked_url(reason),
            )
        raise git_failure(("push", remote, branch), text)

    def remote_tip(self, remote: str, branch: str) -> str | None:
        """The commit the remote's ``refs/heads/<branch>`` names now (``git ls-remote``: no
        ref of the clone changes); None when it has none. Only that ref itself: a ref named
        ``refs/heads/refs/heads/<branch>`` matches ls-remote's pattern too (round 79)."""
        ref = f"refs/heads/{branch}"
        args = ("ls-remote", remote, ref)
        result = self.run_raw(*args, env={"LC_ALL": "C"}, remote=True)
        if result.returncode != 0:
            raise git_failure(args, result.stderr.decode("utf-8", "replace"))
        for line in result.stdout.decode("utf-8", "replace").splitlines():
            sha, _, name = line.partition("\t")
            if name == ref:
                return sha
        return None

    def _push_source(self, branch: str) -> None:
        """Set ``refs/plangate/push/<branch>`` to the branch's commit, the namespace's only
        ref (any other, from a crash or another branch setting, is deleted in the same
        transaction): the glob push then carries exactly that one ref.

        Only this method writes the namespace, inside a pass under the state directory's
        lock, so a git lock file found in it is a killed controller's (CI, 2026-12-01: a
        SIGKILL inside this transaction left ``refs/plangate/push/main.lock``, and every
        later pass failed ``E_GIT``): it is removed, as no other process can hold it."""
        self._clear_push_locks()
        name = f"refs/heads/{branch}"
        sha = self._read_ref(name) or self.rev(name)
        if sha is None:
            raise GitError(f"branch {branch} has no commits to push")
        source = f"{PUSH_NAMESPACE}{branch}"
        lines = [f"delete {ref}\n" for ref in self._push_refs() if ref != source]
        lines.append(f"update {source} {sha}\n")
        self.run("update-ref", "--stdin", input="".join(lines).encode())

    def recover_ref_locks(self) -> list[str]:
        """After a controller was killed while its ``git update-ref`` held the branch's lock
        files (``refs/heads/<b>.lock``, ``HEAD.lock`` for HEAD's reflog): remove them, only
        when the note :meth:`update_ref` wrote names them: made within
        :data:`REF_LOCK_WINDOW_NS` after it, holding nothing or the very commit it moved the
        branch to (round 109: every later pass stopped ``E_GIT`` and every human commit
        failed until a person removed the lock). A lock of anyone else's is left, and named
        by the next pass's ``E_GIT`` as before. Called once the state directory is held:
        no other process of this controller can hold them then. Returns the paths removed."""
        note = self.ref_lock_note
        if note is None:
            return []
        try:
            at_raw, new_raw, ref = note.read_bytes().decode("ascii").split(" ", 2)
            at, new, ref = int(at_raw), new_raw.encode(), ref.rstrip("\n")
        except (OSError, ValueError):
            return []  # none: the usual case
        removed: list[str] = []
        names = ["HEAD.lock"] + ([f"{ref}.lock"] if ref.startswith("refs/heads/") else [])
        for name in names:
            lock = (self.git_dir if name == "HEAD.lock" else self.common_dir) / name
            try:
                st = os.lstat(lock)
                if not stat.S_ISREG(st.st_mode):
                    continue
                if not at - 50_000_000 <= st.st_ctime_ns <= at + REF_LOCK_WINDOW_NS:
                    continue
                if lock.read_bytes() not in (b"", new + b"\n"):
                    continue
                lock.unlink()
            except OSError:
                continue
            removed.append(name)
        note.unlink(missing_ok=True)
        return removed

    def clear_own_locks(self) -> list[str]:
        """Remove the ref lock files (``HEAD.lock``, ``packed-refs.lock``, ``refs/**.lock``)
        of the controller's OWN clone, called when it opens the clone holding the state
        directory's lock: no other process writes that clone, so a lock there is a killed
        controller's (round 91: a SIGKILL while the branch moved left ``HEAD.lock``, and the
        next pass stopped ``E_GIT ... cannot move refs/heads/main`` until a person removed
        it). Returns the paths removed (relative to the clone)."""
        found = [self.git_dir / "HEAD.lock", self.common_dir / "packed-refs.lock"]
        refs = self.common_dir / "refs"
        if refs.is_dir():
            found += list(refs.rglob("*.lock"))
        removed: list[str] = []
        for path in found:
            if path.is_file() and not path.is_symlink():
                path.unlink(missing_ok=True)
                removed.append(path.relative_to(self.common_dir).as_posix())
        return removed

    def _clear_push_locks(self) -> None:
        """Remove the lock files a killed transaction left in :data:`PUSH_NAMESPACE`."""
        top = self.common_dir / PUSH_NAMESPACE
        if not top.is_dir():
            return
        for path in top.rglob("*.lock"):
            if path.is_file() and not path.is_symlink():
                path.unlink(missing_ok=True)


def unread_off_line(parents: dict[str, list[str]], last: str, head: str) -> dict[str, str]:
    """The commits of ``last..head`` (``parents``: each with its parents, parents first) that
    the first-parent line from ``head`` leaves unread behind a second parent, each with the
    first parent to judge its change against ("" for all its parents). Empty when that line
    runs through ``last``. Unread is every commit off the line that descends from ``last``
    except the line's own sides: commits that descend from a commit of the line that had
    ``last`` in it (a merge of the line with the tip read, and after). A commit that
    continues ``last``'s own first-parent line is never a side (the branch's commits after
    the read must stay the branch's: round 64), nor one that took ``last`` some other way
    than through the line (round 64: a merge of the tip read onto an older line commit)."""
    line, reached = _first_parent_line(parents, head)
    if reached == last:
        return {}
    own: set[str] = set()  # last's first-parent descendants: the branch's line as it was
    from_last: set[str] = set()
    sides: set[str] = set()  # the line's commits that had `last`, and their other children
    for commit, above in parents.items():  # parents before children (topological order)
        if above and (above[0] == last or above[0] in own):
            own.add(commit)
        if any(p == last or p in from_last for p in above):
            from_last.add(commit)
        had_last = commit in line and commit in from_last
        if had_last or (commit not in own and any(p in sides for p in above)):
            sides.add(commit)
    unread = from_last - sides - line
    return {sha: parents[sha][0] if sha in own else "" for sha in unread}


def _first_parent_line(parents: dict[str, list[str]], head: str) -> tuple[set[str], str | None]:
    """``head``'s first parents within ``parents``, and the first one outside them."""
    line: set[str] = set()
    commit: str | None = head
    while commit in parents:
        line.add(commit)
        commit = next(iter(parents[commit]), None)
    return line, commit


def _held(porcelain: str, branch: str) -> bool:
    """Does ``git push --porcelain`` say the remote's ``branch`` was already at the pushed
    commit (flag ``=``, "[up to date]") rather than moved to it?"""
    for line in porcelain.splitlines():
        fields = line.split("\t")
        if len(fields) >= 2 and fields[1].endswith(f":refs/heads/{branch}"):
            return fields[0] == "="
    return False


#: A lost race: the branch is not a fast-forward any more, or another pusher held the lock.
_LOST = ("non-fast-forward", "fetch first", "cannot lock ref", "failed to update ref", "stale info")


def _git_words(text: str) -> str:
    """A failed push's own words, one line: the refused ref's summary and git's first
    error (the remote's, such as a lock file it could not create), else every line."""
    lines = [line.removeprefix("remote:").strip() for line in text.splitlines()]
    refused = [line.split("\t")[-1] for line in lines if line.startswith("!\t")]
    errors = [line for line in lines if line.startswith(("error:", "fatal:"))]
    words = refused[:1] + errors[:1] if refused or errors else [line for line in lines if line]
    return "; ".join(words)[:600]


def push_verdict(text: str) -> tuple[str, str]:
    """Read a failed ``git push --porcelain``: ("lost", ...) for a lost race, ("refused",
    reason) when the remote's hook or policy declined it, ("failed", "") otherwise (the
    remote could not be reached, a broken repository)."""
    remote_lines = [
        line.removeprefix("remote:").strip()
        for line in text.splitlines()
        if line.startswith("remote:") and line.removeprefix("remote:").strip()
    ]
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) < 3 or fields[0] != "!":
            continue
        summary = fields[2].strip()
        why = summary.partition("(")[2].rpartition(")")[0].strip()
        if summary.startswith("[rejected]"):
            return "lost", why
        if summary.startswith("[remote rejected]"):
            if any(marker in why for marker in _LOST):
                return "lost", why
            return "refused", "; ".join([why or "declined", *remote_lines[-5:]])
    if "[rejected]" in text or any(marker in text for marker in _LOST):
        return "lost", ""
    if "[remote rejected]" in text or "hook declined" in text:
        return "refused", "; ".join(["declined", *remote_lines[-5:]])
    return "failed", ""


#: The controller's own push namespace: ``refs/plangate/push/<branch>`` names what it pushes.
PUSH_NAMESPACE = "refs/plangate/push/"
#: Where a new state directory's first start fetches the repository's other branches, to
#: learn the runs started there (:meth:`Refs.heads_aside`); emptied once read.
ASIDE_NAMESPACE = "refs/plangate/aside/"

#: git's warning when a fetch would need a new shallow boundary (it rejects the ref, exit 0).
_SHALLOW_REJECTED = "because shallow roots are not allowed to be updated"

_UNSHALLOW = "git fetch --unshallow"


def shallow_history(path: Path, shallow: Path, *, fetches: bool, store: Path | None) -> GitError:
    """``E_GIT`` for history git holds shallow (``shallow``: the file that says so), with the
    remedy for where it is: a person's clone, the controller's clone of the remote, or its
    own object store."""
    if store is not None and shallow.parent == store:
        remedy = f"remove {store} (the controller fills its store again from {path})"
    elif fetches:
        remedy = (
            f"make the remote serve its whole history ({_UNSHALLOW} in the repository it "
            f"serves), then remove {path} (the controller clones it again) or run "
            f"{_UNSHALLOW} origin in it"
        )
    else:
        remedy = f"{_UNSHALLOW} (or clone without --depth)"
    return GitError(
        f"{path} is a shallow clone ({shallow} says its history is cut off): plangate needs "
        "the whole history to know who wrote and who approved each plan; nothing is judged "
        "or run from it",
        path=str(shallow),
        remedy=remedy,
    )


def shallow_remote(command: str, branch: str, detail: str) -> GitError:
    """``E_GIT`` for a clone or fetch of ``branch`` that came back shallow or that git
    rejected because the remote serves it shallow (its commits reach a boundary this clone
    never saw whole)."""
    return GitError(
        masked_url(
            f"{command}: the remote serves {branch} as a shallow history ({detail.strip()}): "
            "plangate needs the whole history to know who wrote and who approved each plan; "
            "nothing is judged or run until the remote serves it whole"
        ),
        remedy=f"make the remote's history whole ({_UNSHALLOW} in the repository it serves, "
        "or push the branch again from a complete clone)",
    )


#: How long a pass waits for a running git command (a human's commit) to release index.lock.
LOCK_WAIT = 0.5

#: How long after :meth:`Refs.update_ref` noted it was about to move a ref a lock file it
#: finds can be its git's (the spawn of git and its lock within this; file times a tick coarse).
REF_LOCK_WINDOW_NS = 10_000_000_000


def _wait_gone(path: Path, seconds: float) -> bool:
    """Poll until ``path`` is gone; True when it is still there after ``seconds``."""
    deadline = time.monotonic() + seconds
    delay = 0.001
    while path.exists():
        if time.monotonic() >= deadline:
            return True
        time.sleep(delay)
        delay = min(delay * 2, 0.02)
    return False


def _killed_update(ref: str, signum: int) -> PlangateError:
    """The coded error of a ``git update-ref`` killed by a signal: nothing moved."""
    import signal

    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    if name == "SIGXFSZ":
        return StorageFailed(
            f"cannot move {ref}: git update-ref was killed by SIGXFSZ writing the reflog (the "
            "file-size limit is below the reflog's size); nothing was committed (the branch "
            "was not moved)",
            path=ref,
            remedy="raise the file-size limit (ulimit -f; LimitFSIZE= for the service), or "
            "trim the reflog (git reflog expire --expire=now --all), then try again",
        )
    return GitError(
        f"cannot move {ref}: git update-ref was killed by {name}; nothing was committed (the "
        "branch was not moved)",
        remedy="find what kills git (a resource limit, the OOM killer), then try again",
    )
