"""Everything plangate does with git, behind one class: the only GitPython importer.

Reading: first-parent history with the files each commit changed (one ``git log`` per
scan), blobs through GitPython's persistent ``cat-file --batch`` process, signatures through
``git verify-commit``.

Writing never goes through the shared index or working tree: :meth:`GitRepo.commit_files`
writes the new blobs, trees and commit as loose objects in-process (``git commit-tree`` only
when the commit must be signed or the identity needs git's own cleaning) and moves the
branch with a compare-and-swap ``git update-ref``. A human's staged or unstaged work is
therefore never staged, committed or discarded, a concurrent human commit makes the swap
fail (and the caller re-evaluates) instead of being lost, and hooks never run. With
``commit.gpgSign`` true in the trusted git config (system, global, environment; never the
repository's own: read once, when it opens the repository) every commit is signed by ``git
commit-tree -S`` with ``user.signingKey``; ``git commit-tree`` itself ignores that setting.
In local mode the caller then writes the same bytes into the working tree and refreshes
those index entries (:meth:`GitRepo.write_worktree`, :meth:`GitRepo.set_index_entries`).

The approval hot path never parses a big tree: a ``plans/`` folder of 10,000 plans is a
330 KB tree object. Reads ask git's persistent ``cat-file`` for ``<commit>:<path>``; a commit
that only replaces existing entries of a big tree patches their 20-byte ids in the raw
object, at offsets proven unique (see :func:`entry_offset`), and stores it with zlib level 0
(git reads any level; ``git gc`` recompresses).

Every git failure becomes ``E_GIT`` carrying git's own message.

The class is put together from one module per concern: :mod:`~controller.git.base`
(opening, running git), :mod:`~controller.git.objects` (objects and trees),
:mod:`~controller.git.refs` (refs and compare-and-swap), :mod:`~controller.git.records` and
:mod:`~controller.git.commits` (commits, messages and trailers), :mod:`~controller.git.signing`
(signing and verification) and :mod:`~controller.git.worktree`. Only ``controller.git``
imports GitPython.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from controller.errors import GitError, NotInWorkTree
from controller.git.base import git_failure
from controller.git.commits import Commits
from controller.git.gitpython import git
from controller.git.guard import GitGuard, RemoteAuth, remote_auth
from controller.git.objects import (
    BIG_TREE,
    STORE_RAW_ABOVE,
    blob_id,
    entry_offset,
    parse_tree,
    serialize_tree,
)
from controller.git.records import (
    ZERO,
    CommitRecord,
    FileChange,
    Person,
    commit_object,
    parse_log,
    parse_trailers,
)
from controller.git.refs import LOCK_WAIT, shallow_remote
from controller.git.signing import Signature
from controller.git.worktree import IndexHold, WorkTree

__all__ = [
    "BIG_TREE",
    "LOCK_WAIT",
    "STORE_RAW_ABOVE",
    "ZERO",
    "CommitRecord",
    "FileChange",
    "GitRepo",
    "IndexHold",
    "Person",
    "Signature",
    "blob_id",
    "commit_object",
    "entry_offset",
    "git_failure",
    "parse_log",
    "parse_trailers",
    "parse_tree",
    "remote_auth",
    "serialize_tree",
]


#: A ``url``/``pushurl`` line of a git config file (what :meth:`GitRepo.forget_remote_userinfo`
#: looks for before it runs git).
_URL_LINE = re.compile(r"^[ \t]*(?:push)?url[ \t]*=[ \t]*(.*)$", re.MULTILINE | re.IGNORECASE)


class GitRepo(Commits, WorkTree):
    """One git repository (a working tree in local mode, a bare clone in remote mode)."""

    @classmethod
    def containing(cls, path: Path) -> GitRepo:
        """The working tree that contains ``path``: a person's own clone (``approve``,
        ``check``), whose config chooses their signing key and programs, as git's would."""
        try:
            found = git.Repo(path, search_parent_directories=True)
            top = found.working_tree_dir
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            cls._refused_around(path)
            raise NotInWorkTree(f"{path} is not inside a git working tree") from None
        if top is None:  # git reads the repository as bare (round 113: "None is not a git ...")
            where = shlex.quote(str(found.git_dir))
            raise GitError(
                f"git reads the repository {found.git_dir} as bare (core.bare = true), so it "
                "has no working tree to commit in",
                path=str(found.git_dir),
                remedy=f"git --git-dir={where} config core.bare false (a clone's working tree), "
                "or run the command in a working tree",
            )
        return cls(Path(str(top)), trust_repo_config=True)

    @classmethod
    def _refused_around(cls, path: Path) -> None:
        """Git's own refusal of the repository holding ``path``, when there is one that
        GitPython did not open (a format version git does not know, a broken
        ``.git/config``): opening it as the readers do names the cause, where "not inside a
        git working tree" named none (round 112, ``audit-refused-repo-misdiagnosed``)."""
        try:
            place = Path(path).resolve()
        except OSError:
            return
        for folder in (place, *place.parents):
            if (folder / ".git").exists():
                cls(folder, trust_repo_config=True)  # raises git's refusal, if it refuses
                return

    def recover_index(self) -> bool:
        """:meth:`WorkTree.recover_index`, with the checked-out branch taken into the
        controller's own store first (local mode, :mod:`controller.git.store`): the recovery
        reads the commit the checkout is at, and a commit someone made after the kill (round
        66's agent, through an index file of their own) is not in the store until then, so
        "does the branch hold what the killed controller committed" failed to read and set
        nothing, and its plan's outcome waited on "changes staged in the index" for good."""
        note = self.index_lock_note
        if self.store is not None and note is not None and note.exists():
            named = self.run_raw("symbolic-ref", "-q", "HEAD").stdout.decode("utf-8", "replace")
            if named.startswith("refs/heads/"):
                with contextlib.suppress(GitError):  # unreadable: recovery sets nothing
                    self.branch_head(named.strip().removeprefix("refs/heads/"))
        return super().recover_index()

    @classmethod
    def clone_bare(
        cls, url: str, target: Path, branch: str, auth: RemoteAuth | None = None
    ) -> GitRepo:
        """The controller's own bare clone of ``url`` (remote mode), made beside ``target``
        and moved there once whole. A remote serving a shallow history gives a shallow
        clone: it is refused ``E_GIT`` and not kept, so a later pass clones again (round 79:
        a ``--depth 1`` remote made its boundary commit look like the writer of every plan).
        ``url`` is without userinfo, its credential ``auth`` (:func:`remote_auth`): no
        command line holds it (round 128)."""
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=target.parent))
        result = subprocess.run(
            ["git", "clone", "--bare", "-q", "--single-branch", "--branch", branch, url, str(tmp)],
            capture_output=True,
            check=False,
            env=GitGuard.read(target.parent).env(auth=auth),
        )
        if result.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise git_failure(("clone", url), result.stderr.decode("utf-8", "replace"))
        if (tmp / "shallow").exists():
            shutil.rmtree(tmp, ignore_errors=True)
            raise shallow_remote(f"git clone {url}", branch, "the clone has a shallow file")
        tmp.rename(target)
        return cls(target, fetches=True, auth=auth)

    def forget_remote_userinfo(self, remote: str) -> None:
        """The URL of ``remote`` in the clone's own config written without its userinfo: a
        clone made before round 128 kept ``http://user:PW@host/...`` there, and git hands
        the URL it reads there to ``git-remote-http``'s command line on every fetch and
        push. Read in-process first: git runs only for such a clone, once."""
        try:
            text = (self.git_dir / "config").read_text("utf-8", "replace")
        except OSError:
            return
        stored = [m.strip().strip('"') for m in _URL_LINE.findall(text)]
        if not any(remote_auth(url)[1] is not None for url in stored):
            return
        for key in (f"remote.{remote}.url", f"remote.{remote}.pushurl"):
            urls = self.run("config", "--get-all", key, check=False).splitlines()
            if all(remote_auth(url)[1] is None for url in urls):
                continue
            self.run("config", "--unset-all", key)  # no command line names the old value
            for url in urls:
                self.run("config", "--add", key, remote_auth(url)[0])
