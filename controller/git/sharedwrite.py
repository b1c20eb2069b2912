"""One writer for every commit plangate makes into a shared working tree beside the controller
(``plangate mcp``'s ``submit``, ``plangate approve``/``reject``/``abort``), under the
controller's own crash rule (:meth:`~controller.git.worktree.WorkTree.hold_index`):

- git's ``.git/index.lock`` is taken before the branch moves and held until the index and the
  working tree hold the new commit, so a person's ``git add``/``git commit`` in between fails
  loudly ("index.lock exists") instead of committing the older index (round 83: a SIGKILLed
  ``submit`` left the index behind the branch and Alice's careful commit deleted the agent's
  submission under her name);
- before the branch moves, the commit's entries are noted in ``.git/plangate-index-lock``
  (the format of the controller's ``index-lock`` note); a writer killed in the window leaves
  the note and its lock, and the next writer, ``plangate mcp`` start, or controller start or
  pass finishes the writes and removes that lock (:func:`recover`);
- the window is held under an ``flock`` of ``.git/plangate-index-lock.flock``: writers take
  turns, and a note found while the ``flock`` is free is a dead writer's (the kernel released
  its ``flock``), never one still writing.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from controller.errors import PlangateError, StorageFailed, UnsafePath

if TYPE_CHECKING:
    from controller.git.gitrepo import GitRepo
    from controller.git.records import Person
    from controller.git.worktree import IndexHold

NOTE = "plangate-index-lock"


def _note(repo: GitRepo) -> Path:
    return Path(repo.git_dir) / NOTE


@contextlib.contextmanager
def _flock(repo: GitRepo, *, wait: bool) -> Iterator[bool]:
    path = _note(repo).with_name(NOTE + ".flock")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # also releases the flock


@contextlib.contextmanager
def _noting(repo: GitRepo) -> Iterator[None]:
    before = repo.index_lock_note
    repo.index_lock_note = _note(repo)
    try:
        yield
    finally:
        repo.index_lock_note = before


def recover(repo: GitRepo) -> bool:
    """Finish the working-tree and index writes of a shared writer killed between its commit
    and them (:meth:`~controller.git.worktree.WorkTree.recover_index` over its note): the
    ``index.lock`` it left removed, the files the branch holds written where nobody edited
    them since, their index entries set. Nothing while a writer holds the window. True when
    a lock was removed."""
    if not _note(repo).exists():
        return False
    with _flock(repo, wait=False) as held:
        if not held or not _note(repo).exists():
            return False
        with _noting(repo):
            return repo.recover_index()


def commit_checked_out(
    repo: GitRepo,
    *,
    branch: str,
    parent: str,
    files: Mapping[str, bytes | None],
    message: str,
    author: Person,
    committer: Person | None = None,
    sign: bool = False,
    tree_files: Mapping[str, bytes | None] | None = None,
) -> str | None:
    """Commit ``files`` on ``parent`` and move the checked-out ``branch`` there, then write
    ``tree_files`` (default ``files``) into the working tree and ``files`` into the index,
    all under the one crash rule above. None when the branch moved meanwhile (nothing
    changed)."""
    _refuse_unwritable(repo, tree_files if tree_files is not None else files)
    with _flock(repo, wait=True), _noting(repo):
        with contextlib.suppress(OSError):
            repo.recover_index()  # a dead writer's note first: this one replaces it
        holds: list[IndexHold] = []
        sha: str | None = None
        moved = undone = False
        with _interrupts_deferred() as landed:  # held off until the writes are done
            try:
                modes = repo.file_modes(parent, list(files))  # each file's kept (round 87)
                repo.note_index_update(files, parent, modes)
                sha = repo.commit_files(
                    branch=branch,
                    parent=parent,
                    files=files,
                    message=message,
                    author=author,
                    committer=committer,
                    sign=sign,
                    before_ref=lambda _sha: holds.append(repo.hold_index(files, modes)),
                )
                moved = sha is None
                if sha is not None:
                    landed.append(sha)  # an interrupt from here on is too late to stop it
                    if not repo.checked_out_at(branch, sha):  # the checkout left the branch:
                        return sha  # nothing written or staged there (round 116)
                    tree = dict(tree_files if tree_files is not None else files)
                    entries = dict(files)
                    try:
                        repo.write_worktree(tree, modes)
                    except (OSError, PlangateError) as exc:
                        undone = _put_back(repo, branch, parent, sha, tree)
                        if not undone:  # kept: the index holds it, never a staged deletion
                            repo.set_index_entries(
                                dict(files), hold=holds[0], stored=True, modes=modes
                            )
                        raise _unwritten(tree, exc, sha, undone) from exc
                    try:
                        repo.set_index_entries(entries, hold=holds[0], stored=True, modes=modes)
                    except (OSError, PlangateError) as exc:
                        _index_again(repo, entries, modes, sha, exc)
            finally:
                for held in holds:
                    held.release()  # unless written: nothing landed, or the tree was not written
                if moved or undone or (sha is None and _unmoved(repo, branch, parent)):
                    # nothing landed: nothing to finish, and no lock to claim (round 109: a
                    # writer refused by a human's index.lock left its note, and the next writer
                    # took a later human lock for the one it had been about to make)
                    _note(repo).unlink(missing_ok=True)
        return sha


def _refuse_unwritable(repo: GitRepo, tree: Mapping[str, bytes | None]) -> None:
    """E_UNSAFE_PATH, nothing committed, when a folder on the way to a file to be written is
    a symlink or not a folder in the working tree (round 118, submit-through-untracked-link:
    with an untracked link at ``plans/<slug>``, a group folder or ``plans`` itself, the
    commit landed while the tree write skipped the link, as it must never write through one;
    ``git status`` showed the file deleted, a person's ``git commit -a`` deleted it under
    their name, and the controller waited ``E_UNSAFE_PATH`` for good). A tree that cannot
    be written commits nothing, whatever the reason: this one is known before the branch
    moves."""
    from controller.git.worktree import unwritable_place

    for path, data in tree.items():
        place = unwritable_place(Path(repo.path), path) if data is not None else None
        if place is not None:
            raise UnsafePath(
                f"{place} is a symbolic link or not a folder in the working tree: {path} "
                "cannot be written there, so nothing was committed",
                path=path,
                quotes=(path, place),
                remedy=f"remove {place} from the working tree (`rm {place}`, then `git "
                f"checkout -- {place}` brings back what the branch holds there) and try again",
            )


def _index_again(
    repo: GitRepo,
    entries: dict[str, bytes | None],
    modes: Mapping[str, int],
    sha: str,
    exc: BaseException,
) -> None:
    """The held index write failed after the branch moved (its git child killed: a terminal's
    Ctrl-C reaches the whole process group, round 110): the hold gave ``index.lock`` back,
    so the entries are set again the ordinary way (git takes the lock itself). When that
    fails too, the answer says the index is behind and how to bring it level, never a
    silent staged revert of the commit."""
    try:
        repo.set_index_entries(entries, stored=True, modes=modes)
    except (OSError, PlangateError):
        path = next(iter(entries), "")
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise StorageFailed(
            f"committed {sha[:12]}, but the index does not hold it yet ({why})",
            path=path,
            remedy=f"run `git restore --staged -- {path}` before your next commit",
        ) from exc


#: The signals whose Python handler would unwind a writer between its commit and its index.
_DEFERRED = ("SIGINT", "SIGTERM", "SIGHUP")


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[list[str]]:
    """Hold off an interrupt from the commit until the index and the working tree hold it.

    Round 110 (atk110b): Ctrl-C (SIGINT) to ``plangate approve`` after ``update-ref`` moved the
    branch and before ``update-index`` ended raised ``KeyboardInterrupt`` there; unwinding,
    the writer released ``index.lock`` with the index still holding the plan's old version,
    so the person's next ``git commit`` reverted the approval. A signal whose handler is
    Python code (``KeyboardInterrupt``, a server's SIGTERM) is now noted while the writes
    run (and blocked in this thread, whose git children inherit the block). Once the branch
    moved (the caller appends the commit to the list yielded), or when the writer fails on
    its own, the interrupt came too late to stop anything: the command finishes and says
    what it did. Otherwise it is delivered, to the handler it had, once nothing is half
    done. SIGTERM or SIGHUP that would kill outright is held off alike, and lands after the
    writes (or not at all once the branch moved); SIGKILL leaves the lock and its note for
    :func:`recover`, as before. Only the main thread sets
    handlers; in another (the MCP server's), an interrupt is raised in the main thread and
    never unwinds this one."""
    import signal
    import threading

    landed: list[str] = []
    if threading.current_thread() is not threading.main_thread():
        yield landed
        return
    held: list[int] = []
    kept: dict[int, object] = {}

    def note(signum: int, _frame: object) -> None:
        held.append(signum)

    for name in _DEFERRED:
        number: int | None = getattr(signal, name, None)
        if number is None:
            continue
        handler = signal.getsignal(number)
        if callable(handler) or handler == signal.SIG_DFL:  # not one the caller ignores
            kept[number] = signal.signal(number, note)  # from whichever thread gets it
    # blocked too, so the git children this thread starts inherit the block (a terminal's
    # Ctrl-C goes to the whole group: it killed ``update-index`` mid-write); pending, it is
    # taken below with ``sigwait``
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, kept)
    failed = False
    try:
        yield landed
    except BaseException:
        failed = True  # its own answer stands: the interrupt stopped nothing more
        raise
    finally:
        for number in sorted(signal.sigpending() & set(kept)):
            held.append(signal.sigwait({number}))
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for number, before in kept.items():
            signal.signal(number, before)  # type: ignore[arg-type]
        for number in dict.fromkeys(held if not (landed or failed) else ()):
            signal.raise_signal(number)


def _put_back(
    repo: GitRepo, branch: str, parent: str, sha: str, tree: Mapping[str, bytes | None]
) -> bool:
    """The working tree could not be written after the branch moved (a plans folder its user
    cannot write, a full disk): the branch is put back on ``parent`` (compare-and-swap, still
    under ``index.lock``: no person's commit came in between) and any file already written is
    given the parent's version again, so the shared tree, the index and the branch agree on
    nothing having happened (round 109: the commit stayed, the index did not hold it, and a
    person's next ``git commit`` would have deleted it). False when the branch moved on
    meanwhile: the commit stays."""
    try:
        if not repo.update_ref(f"refs/heads/{branch}", parent, sha):
            return False
    except PlangateError:
        return False
    for path, data in tree.items():
        with contextlib.suppress(OSError, PlangateError):
            target = Path(repo.path) / path
            if data is None or target.is_symlink() or target.read_bytes() != data:
                continue  # not written by this commit: left as it is
            before = repo.read_file(parent, path)
            if before is None:
                target.unlink()
            else:
                repo.write_worktree({path: before}, repo.file_modes(parent, [path]))
    return True


def _unwritten(
    tree: Mapping[str, bytes | None], exc: BaseException, sha: str, undone: bool
) -> PlangateError:
    """The coded error of a working-tree write that failed after the commit was made."""
    path = next(iter(tree), "")
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    if undone:
        return StorageFailed(
            f"cannot write {path} into the working tree ({why}); nothing was committed "
            "(the branch was put back)",
            path=path,
            remedy="make the folder writable by the user plangate runs as, then try again",
        )
    return StorageFailed(
        f"committed {sha[:12]}, but cannot write {path} into the working tree ({why}); the "
        "branch and the index hold it",
        path=path,
        remedy=f"once the folder is writable, run `git restore -- {path}` to bring it back",
    )


def _unmoved(repo: GitRepo, branch: str, parent: str) -> bool:
    """The branch still at ``parent``: a writer that failed before its commit landed."""
    try:
        return repo.branch_head(branch) == parent
    except Exception:  # unreadable: keep the note, the next start judges it
        return False
