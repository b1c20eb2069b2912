"""The controller's own record of a plan: the blocks only it writes, as its own commits hold them.

``execution:`` and ``approval:`` (SPEC §4, §7) are not hashed: anyone who can commit can
rewrite them, and the audit flags it (``owned-block-changed``). Whoever reads them as the
controller's record reads them here, from the controller's own commits of the plan file,
never from the branch's version alone:

- ``plangate show`` (round 5, 23): the blocks of the controller's last commit of the file
  when someone committed a change to them after it (``E_OWNED_BLOCK_CHANGED``);
- the status row (``status``, MCP ``status``, the page; round 65): the notes ``show`` carries
  (:func:`record_notes`), for a row of a plan in any state (round 67: pending and frozen
  too) any file of whose record (the plan file, its log: round 66; a log committed before
  the plan: round 67) someone else's commit changed last, and any entry beside the plan
  named as its log in another spelling (``execution_log.md``: the log on a case-insensitive
  or HFS+ checkout, :func:`log_twin_notes`; round 73);
- the controller, when a gate, ask or resume approval finds the run's journal (or its whole
  state directory) lost (round 52): the ``execution:`` block of its last commit of the file
  that wrote that block (a checkpoint, a pause, an outcome), never one that carried the
  branch's block over (a start, a refusal, a vote), which an agent's edit would ride.

Before the controller goes on from that record after a loss (a lost journal, a rebuilt
index), its record of the commits it made must still end on the branch (round 59): the
commits it recorded after its newest one the branch holds (:func:`unpublished_tail`) that
name a plan are commits a reset erased, and that plan is held (E_HISTORY_REWRITTEN).

Every reader reads the record within the path's current life (round 63,
:func:`life_of`): a folder emptied or moved away, then reused for a recurring plan, and a
plan frozen as another than the one the controller recorded there, start with no record.

Each caller says which commits are the controller's: ``show`` by the identity it is given
(the config's, or the one the recorded policies name), the controller by its record of the
commits it made (``<state_dir>/commits``, SPEC §15). Git is reached through a function the
caller passes (``show`` runs plain ``git`` in the plan's folder, the controller its
repository's guarded runner), so this module imports no git library.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from controller.display import visible
from controller.errors import GitError
from controller.git.records import (
    CommitRecord,
    FileChange,
    _log_format,
    _new_tag,
    parse_log,
    record_events,
)

#: The blocks only the controller writes (SPEC §4): what ran, what it received, who approved.
OWNED = ("execution", "approval")
#: The controller's events that write a plan's ``execution:`` block (its other commits of the
#: file carry the block over as the branch held it).
EXECUTION_EVENTS = frozenset({"checkpoint", "complete", "fail", "abort", "await-approval"})
#: The file beside PLAN.yml only the controller writes (SPEC §1, §7).
LOG_FILE = "EXECUTION_LOG.md"

#: Runs git with these arguments where the path is read from; its stdout, None on failure.
GitRunner = Callable[..., str | None]
#: Is this commit one the controller made?
IsOwn = Callable[[CommitRecord], bool]


@dataclass(frozen=True)
class Recorded:
    """The controller's commit that holds the record, and the file's commits after it."""

    commit: str
    #: The commits after it that changed the file, newest first.
    later: tuple[str, ...]
    #: The owned blocks of the file at that commit (None when unreadable there).
    blocks: dict[str, Any] | None


def file_log(git: GitRunner, rev: str, *paths: str, first_parent: bool) -> list[CommitRecord]:
    """The commits up to ``rev`` that changed any of ``paths``, newest first (empty when git
    fails)."""
    tag = _new_tag()
    args = ["-c", "core.quotePath=false", "log", *(["--first-parent"] if first_parent else [])]
    args += ["-z", "--raw", "--no-renames", "--no-abbrev", "--diff-merges=first-parent"]
    out = git(*args, "--no-show-signature", _log_format(tag), rev, "--", *paths)
    return list(parse_log(out, tag)) if out else []


@dataclass(frozen=True)
class Life:
    """The commits of one life of a plan's path (round 63), newest first: the record at a
    path belongs to the plan there now, not to an earlier plan at the same path."""

    #: The commits of the plan file in this life.
    plan: tuple[CommitRecord, ...]
    #: The commits of its EXECUTION_LOG.md in this life.
    log: tuple[CommitRecord, ...]


def life_of(
    git: GitRunner, rev: str, plan_file: str, is_own: IsOwn, *, first_parent: bool = True
) -> Life:
    """The current life of ``plan_file`` up to ``rev``. A life ends (round 63: a folder
    reused for a recurring plan) at the newest commit that removed the plan file (emptied
    or moved the folder), and at the newest commit of the controller's whose version of the
    file is frozen as another plan than the one at ``rev`` (``frozen.hash``): a new plan put
    at the path, or swapped in, is not the one the controller recorded there, and the
    controller's freeze of a new version starts its own life."""
    identity = _frozen_hash(git("show", f"{rev}:{plan_file}"), plan_file)
    return _life(git, rev, plan_file, is_own, identity, first_parent)


def _life(
    git: GitRunner,
    rev: str,
    plan_file: str,
    is_own: IsOwn,
    identity: str | None,
    first_parent: bool,
    depth: int = 0,
) -> Life:
    """:func:`life_of` for a plan at ``rev`` frozen as ``identity``."""
    log_file, other = log_file_of(plan_file), other_name(plan_file)
    paths = (plan_file, log_file, *((other,) if other else ()))
    commits = file_log(git, rev, *paths, first_parent=first_parent)
    end = next((i for i, r in enumerate(commits) if _removes(r, plan_file)), len(commits))
    commits = commits[:end]
    end = _other_identity(git, commits, plan_file, is_own, identity)
    commits = commits[:end]
    # what came before the newest rename is the other name's life, read as its own (round
    # 70: the log of a plan swapped in under the other name is not the new plan's record)
    renamed = next((r.sha for r in commits if _renamed_from(r, plan_file, other)), None)
    if renamed is not None:
        commits = commits[: next(i for i, r in enumerate(commits) if r.sha == renamed) + 1]
    plan = tuple(r for r in commits if _changes(r, plan_file) is not None)
    log = tuple(r for r in commits if _changes(r, log_file) is not None)
    if renamed is None or depth >= MAX_RENAMES:
        return Life(plan, log)
    before = _life(git, f"{renamed}^", other or "", is_own, identity, first_parent, depth + 1)
    seen = {r.sha for r in log}
    return Life(plan + before.plan, log + tuple(r for r in before.log if r.sha not in seen))


#: Renames between the plan file's two names a life is followed across (a bound on the walk).
MAX_RENAMES = 16


def other_name(plan_file: str) -> str | None:
    """The plan file's other accepted name in its folder (PLAN.yml <-> PLAN.yaml)."""
    folder, _, name = plan_file.rpartition("/")
    names = ("PLAN.yml", "PLAN.yaml")
    if name not in names:
        return None
    other = names[1 - names.index(name)]
    return f"{folder}/{other}" if folder else other


def _renamed_from(record: CommitRecord, plan_file: str, other: str | None) -> str | None:
    """``record``'s sha when it put ``plan_file`` in place of its other name (a rename
    between PLAN.yml and PLAN.yaml, round 69): the plan's life goes on from the other name,
    its record with it (the page read it so; MCP ``log`` lost the run). A plan's identity is
    its folder (round 70): the rename keeps the record whether or not the commit also
    edited the file (an edited owned block is then noted, as an edit in place is; a plan
    frozen as another ends the life at the controller's commit of it, :func:`_other_identity`)."""
    if other is None:
        return None
    added, gone = _changes(record, plan_file), _changes(record, other)
    if added is None or gone is None or added.old_blob is not None or gone.new_blob is not None:
        return None
    return record.sha


def file_in(record: CommitRecord, plan_file: str) -> str:
    """The name the plan file has in ``record`` (a life followed across a rename holds
    commits of its other name)."""
    other = other_name(plan_file)
    if _changes(record, plan_file) is None and other and _changes(record, other) is not None:
        return other
    return plan_file


def log_file_of(plan_file: str) -> str:
    """The execution log beside the plan file."""
    return str(PurePosixPath(plan_file).parent / LOG_FILE)


def _changes(record: CommitRecord, path: str) -> FileChange | None:
    return next((c for c in record.changes if c.path == path), None)


def _removes(record: CommitRecord, path: str) -> bool:
    change = _changes(record, path)
    return change is not None and change.new_blob is None


def _other_identity(
    git: GitRunner,
    commits: Sequence[CommitRecord],
    plan_file: str,
    is_own: IsOwn,
    identity: str | None,
) -> int:
    """Where the controller's commits of another plan begin in ``commits`` (its length:
    none). Read back only as far as a record is taken from: the controller's newest commit
    of the file that wrote ``execution:`` and its newest of the log."""
    log_file, seen_exec, seen_log = log_file_of(plan_file), False, False
    hashes: dict[str, str | None] = {}
    for index, record in enumerate(commits):
        if seen_exec and seen_log:
            break
        if not is_own(record):
            continue
        seen_log = seen_log or _changes(record, log_file) is not None
        change = _changes(record, plan_file)
        if change is None or change.new_blob is None:
            continue
        seen_exec = seen_exec or _event(record) in EXECUTION_EVENTS
        if change.new_blob not in hashes:
            hashes[change.new_blob] = _frozen_hash(written(git, record, plan_file), plan_file)
        if hashes[change.new_blob] != identity:
            return index
    return len(commits)


def _frozen_hash(text: str | None, path: str) -> str | None:
    """The ``frozen.hash`` a plan file's text records (None: none, or unreadable)."""
    from controller.plan import yamlio

    if text is None:
        return None
    try:
        data = yamlio.read_yaml(text, PurePosixPath(path).name).data
    except Exception:  # an unreadable version names no plan
        return None
    frozen = data.get("frozen") if isinstance(data, dict) else None
    value = frozen.get("hash") if isinstance(frozen, dict) else None
    return value if isinstance(value, str) else None


def _own_hash(text: str | None) -> str | None:
    """The plan hash of a plan file's text (None: none, or unreadable)."""
    from controller.plan.plans import text_hash

    return text_hash(text) if text is not None else None


def hash_mismatch(file: str, found: str | None, recorded: str | None) -> str | None:
    """The one rule (round 64) of every reader of a plan's record (``show``, ``status``, the
    page and its API, MCP ``log``): the record is of the version that hashes to ``recorded``
    (the ``frozen.hash`` the controller froze, approved and ran); the text at the path,
    which hashes to ``found``, is another when they differ, and the reader says so
    (``show``'s ``STALE``). None: the same, or no recorded version to compare with."""
    if recorded is None or found == recorded:
        return None
    now = found or "no readable plan"
    return (
        f"E_PLAN_HASH_MISMATCH: {file} hashes to {now}, but the controller's record (its "
        f"approval, its run) is of {recorded}: the content changed since it was frozen "
        "(STALE), and what is recorded as run is not this text; restore the recorded "
        "version, or resubmit (status: pending_approval) to have it frozen and approved anew"
    )


def note_code(note: str) -> str:
    """The ``E_...`` code a reader's note starts with."""
    code = note.split(":", 1)[0]
    return code if code.startswith("E_") else "E_OWNED_BLOCK_CHANGED"


def last_own(
    log: Sequence[CommitRecord], is_own: IsOwn, events: frozenset[str] | None = None
) -> tuple[str, tuple[str, ...]] | None:
    """(the controller's newest commit of ``log``, the commits before it in ``log``); with
    ``events``, only a commit whose event for the plan (the folder of the file it changed)
    is one of them counts."""
    for index, record in enumerate(log):
        if not is_own(record):
            continue
        if events is not None and _event(record) not in events:
            continue
        return record.sha, tuple(r.sha for r in log[:index])
    return None


def _event(record: CommitRecord) -> str | None:
    """The controller's event for the plan whose file the (path-limited) commit changed."""
    found = record_events(record)
    for change in record.changes:
        event = found.get(str(PurePosixPath(change.path).parent))
        if event:
            return event
    return None


def owned_blocks(text: str, name: str) -> dict[str, Any] | None:
    """The owned blocks of a plan file's text (None: not a readable mapping)."""
    from controller.plan import yamlio

    try:
        data = yamlio.read_yaml(text, name).data
    except Exception:  # an unreadable version is no record
        return None
    return {key: data.get(key) for key in OWNED} if isinstance(data, dict) else None


def blocks_at(git: GitRunner, rev: str, path: str) -> dict[str, Any] | None:
    """The owned blocks of ``path`` at ``rev`` (None: absent or unreadable there)."""
    text = git("show", f"{rev}:{path}")
    return None if text is None else owned_blocks(text, PurePosixPath(path).name)


def own_record(
    git: GitRunner,
    rev: str,
    path: str,
    is_own: IsOwn,
    *,
    events: frozenset[str] | None = None,
    first_parent: bool = True,
) -> Recorded | None:
    """The controller's record of ``path`` up to ``rev``: its newest commit of the file (with
    ``events``, of those events only) and the blocks there, in the path's current life
    (:func:`life_of`); None when it has none."""
    plan_log = life_of(git, rev, path, is_own, first_parent=first_parent).plan
    found = last_own(plan_log, is_own, events)
    if found is None:
        return None
    sha, later = found
    return Recorded(sha, later, blocks_at(git, sha, path))


def unpublished_tail(own: Sequence[str], on_branch: Callable[[str], bool]) -> list[str]:
    """The commits of ``own`` (the controller's record, oldest first) recorded after the
    newest one ``on_branch`` holds, oldest first: commits a rewrite erased, or (after a
    crash) one made that never landed. Walked from the newest: one check when none is gone."""
    tail: list[str] = []
    for sha in reversed(own):
        if on_branch(sha):
            break
        tail.append(sha)
    return tail[::-1]


def commit_records(git: GitRunner, shas: Sequence[str]) -> list[CommitRecord]:
    """The records of the commits ``shas`` still readable (a pruned one is left out)."""
    present = [sha for sha in shas if git("cat-file", "-e", f"{sha}^{{commit}}") is not None]
    if not present:
        return []
    tag = _new_tag()
    args = ["-c", "core.quotePath=false", "log", "--no-walk=unsorted", "-z", "--raw"]
    args += ["--no-renames", "--no-abbrev", "--diff-merges=first-parent", "--no-show-signature"]
    out = git(*args, _log_format(tag), *present, "--")
    return list(parse_log(out, tag)) if out else []


@dataclass(frozen=True)
class ShownRecord:
    """What every reader shows as a plan's record (round 61): the owned blocks and the
    execution log as the controller's own last commits of them wrote them, and a note per
    version someone else wrote after (or instead of) that record."""

    #: ``execution``/``approval`` as the controller recorded them (None: it recorded none).
    blocks: dict[str, Any]
    #: EXECUTION_LOG.md as the controller's last commit of it wrote it (None: never).
    log: str | None
    #: ``E_OWNED_BLOCK_CHANGED: ...`` for each of the two that the branch holds otherwise;
    #: ``E_PLAN_HASH_MISMATCH: ...`` when the plan there is not the version recorded
    #: (:func:`hash_mismatch`).
    notes: tuple[str, ...]


def shown_record(
    git: GitRunner,
    rev: str,
    plan_file: str,
    is_own: IsOwn,
    branch: dict[str, Any],
    *,
    plans_dir: str = "plans",
) -> ShownRecord:
    """The record of the plan ``plan_file`` up to ``rev`` as readers show it: ``branch`` are
    the owned blocks of the file at ``rev``. The ``execution:`` block is the one of the
    controller's last commit that wrote it (:data:`EXECUTION_EVENTS`), ``approval:`` the
    one of its last commit of the file, the log the one of its last commit of the log, all
    within the path's current life (:func:`life_of`, round 63: a reused folder's new plan
    has no record, as a copy has none). A log removed within a life where the controller
    recorded none is no change of its record. A record shown for a plan whose text does not
    hash to its ``frozen.hash`` carries :func:`hash_mismatch`'s note (round 64: the life
    is the frozen version's; the text kept its ``frozen:`` block, not its content).
    ``plans_dir``: the plans folder, from which down a folder's twins are compared
    (:func:`twin_logs`)."""
    current = git("show", f"{rev}:{plan_file}")
    identity = _frozen_hash(current, plan_file)
    life = _life(git, rev, plan_file, is_own, identity, True)
    blocks = _recorded_blocks(git, life.plan, plan_file, is_own)
    notes: list[str] = []
    changed = [key for key in OWNED if branch.get(key) != blocks.get(key)]
    if changed:
        names = "/".join(f"{key}:" for key in changed)
        notes.append(_note(f"the {names} block", life.plan, is_own))
    log_file = log_file_of(plan_file)
    own_log = last_own(life.log, is_own)
    logged = next((r for r in life.log if own_log is not None and r.sha == own_log[0]), None)
    text = written(git, logged, log_file) if logged is not None else None
    if life.log and not is_own(life.log[0]) and (own_log or not _removes(life.log[0], log_file)):
        notes.append(_note(LOG_FILE, life.log, is_own))
    notes += log_twin_notes(git, rev, plan_file, plans_dir)
    stale = hash_mismatch(plan_file, _own_hash(current), identity)
    if stale is not None and (text is not None or any(v is not None for v in blocks.values())):
        notes.append(stale)
    return ShownRecord(blocks, text, tuple(notes))


def log_twin_notes(git: GitRunner, rev: str, plan_file: str, plans_dir: str) -> list[str]:
    """An ``E_OWNED_BLOCK_CHANGED`` note for each entry beside ``plan_file`` at ``rev``
    (file, symlink, folder, gitlink) whose name is the log's by the fold of plan file
    names but not ``EXECUTION_LOG.md`` itself (:func:`controller.plan.names.log_twins`):
    ``execution_log.md``, ``EXECUTION_LOG.MD``, ``EXECUTION_LOG.md<U+200C>``, NTFS's
    ``EXECUT~1.MD`` and ``EXECUTION_LOG.md.`` (round 74). The controller writes its record
    under the one name only; on a case-insensitive, HFS+ or NTFS checkout such
    an entry IS the plan's log, so what it holds is someone else's text at the record's
    place, never shown (round 73: a forged "completed, approved by alice" log beside a plan
    that never ran was noted by no reader). The log in a folder beside the plan's that is
    one folder with it on such a checkout (``plans/ship/`` of ``plans/Ship``,
    ``plans/archiv~1/`` of ``plans/archive-logs-daily``: :func:`twin_logs`) is noted alike
    (round 75)."""
    from controller.plan.names import log_twins

    folder = str(PurePosixPath(plan_file).parent)
    prefix = "" if folder == "." else f"{folder}/"
    names = _listed(git, rev, prefix)
    notes = []
    twins = twin_logs(git, rev, folder, plans_dir)
    for path in [*(prefix + name for name in log_twins(names)), *twins]:
        name = path[len(prefix) :] if path.startswith(prefix) else path
        last = file_log(git, rev, path, first_parent=True)
        where = f" by {last[0].author.email} in {last[0].sha[:12]}" if last else ""
        notes.append(
            f"E_OWNED_BLOCK_CHANGED: {visible(name)} beside the plan file is {LOG_FILE} on a "
            f"case-insensitive, HFS+ or NTFS checkout (one name by the fold of plan file "
            f"names), "
            f"and the controller writes only {LOG_FILE}: it is not the controller's "
            f"record{where}; not shown"
        )
    return notes


def _listed(git: GitRunner, rev: str, prefix: str) -> list[str]:
    """The names of the entries of the folder ``prefix`` (``""`` or ending in ``/``)."""
    out = git("ls-tree", "-z", "--name-only", rev, *(("--", prefix) if prefix else ()))
    return [p[len(prefix) :] for p in (out or "").split("\0") if p.startswith(prefix) and p]


def twin_logs(git: GitRunner, rev: str, folder: str, plans_dir: str) -> list[str]:
    """The entries named as the log (:func:`controller.plan.names.log_claims`, the exact
    name too) in each folder that is one folder with ``folder`` on a folding checkout, at
    any level from the plans folder ``plans_dir`` down
    (:func:`controller.plan.names.twin_folders`), as paths in the repo
    (``plans/ship/EXECUTION_LOG.md``, ``plans/lg/x/EXECUTION_LOG.md`` of ``plans/Lg/x``): git
    writes them into the plan's folder there, at its log's place, whoever committed them
    (round 75 looked beside the folder only; round 76); a file above the folder that git for
    Windows writes into it (:func:`controller.plan.names.split_files`:
    ``plans/lo\\EXECUTION_LOG.md``; round 77) alike."""
    from controller.plan.names import log_claims, split_files, twin_folders

    if folder == ".":
        return []

    def listed(place: str) -> list[str]:
        return _listed(git, rev, f"{place}/" if place else "")

    found = []
    for twin in twin_folders(folder, listed, plans_dir):
        found += [f"{twin}/{log}" for log in log_claims(listed(twin))]
    split = split_files(folder, listed, plans_dir)
    return found + [path for path, name in split.items() if log_claims([name])]


def record_notes(
    git: GitRunner, rev: str, plan_file: str, is_own: IsOwn, *, plans_dir: str = "plans"
) -> tuple[str, ...]:
    """The notes every reader carries for the record at ``plan_file`` up to ``rev``
    (:func:`shown_record`'s, for the owned blocks the file holds there): the status row's
    too (round 65: a row judged the text by its own ``frozen.hash``, which a swapped folder
    or a rewritten ``frozen:`` block carries along, while ``show`` judged it by the
    controller's record of the path's life)."""
    branch = blocks_at(git, rev, plan_file) or {}
    return shown_record(git, rev, plan_file, is_own, branch, plans_dir=plans_dir).notes


def recorded_blocks(git: GitRunner, rev: str, plan_file: str, is_own: IsOwn) -> dict[str, Any]:
    """The owned blocks of ``plan_file`` as the controller recorded them up to ``rev`` (what
    a freeze keeps, :func:`controller.plan.plans.freeze_text`), in its current life."""
    return _recorded_blocks(git, life_of(git, rev, plan_file, is_own).plan, plan_file, is_own)


def _recorded_blocks(
    git: GitRunner, log: Sequence[CommitRecord], path: str, is_own: IsOwn
) -> dict[str, Any]:
    return {key: _recorded_block(git, log, path, key, is_own) for key in OWNED}


def _recorded_block(
    git: GitRunner, log: Sequence[CommitRecord], path: str, key: str, is_own: IsOwn
) -> Any:
    found = last_own(log, is_own, EXECUTION_EVENTS if key == "execution" else None)
    record = next((r for r in log if found is not None and r.sha == found[0]), None)
    if record is None:
        return None
    where = file_in(record, path)
    text = written(git, record, where)
    blocks = None if text is None else owned_blocks(text, PurePosixPath(where).name)
    return (blocks or {}).get(key)


def written(git: GitRunner, record: CommitRecord, path: str) -> str | None:
    """``path`` as ``record`` (a commit that changed it, as :func:`file_log` read it) wrote
    it; None where it removed it, or where git's path lookup misses the entry but the blob
    the commit names is in the store (round 58's odd trees: git's own reading). A blob the
    store does not hold is ``E_GIT``: a read that failed is never "no log" (round 86: MCP
    ``log`` answered ``"execution_log": null`` for a committed log whose blob was gone)."""
    text = git("show", f"{record.sha}:{path}")
    if text is not None:
        return text
    change = _changes(record, path)
    if change is None or change.new_blob is None or change.mode == "160000":
        return None
    if git("cat-file", "-e", change.new_blob) is not None:
        return None
    raise GitError(
        f"cannot read object {change.new_blob} ({record.sha}:{path}): git's object store "
        "does not hold it",
        remedy="check the repository (git fsck) and the GIT_* variables set",
    )


def _note(what: str, log: Sequence[CommitRecord], is_own: IsOwn) -> str:
    """Who wrote the newest version of ``what`` that is not the controller's."""
    other = next((r for r in log if not is_own(r)), None)
    where = f" by {other.author.email} in {other.sha[:12]}" if other is not None else ""
    return (
        f"E_OWNED_BLOCK_CHANGED: {what} on the branch is not the controller's record: edited "
        f"after (or without) the controller's record{where}; shown as the controller "
        "recorded it"
    )
