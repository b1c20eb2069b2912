"""What history says about one plan: the facts of a PLAN.yml version, the per-plan state.

:class:`BlobFacts` is what one version of a PLAN.yml says (status, hashes, a digest of the
controller-owned blocks); :class:`PlanState` is the index's view of one plan, stored as JSON
in the history index; :class:`HistoryEvent` is what the audit hears about a commit. Pure data
and small rules over it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from controller.errors import PlanAmbiguous, UnsafePath
from controller.git.records import CommitRecord, FileChange
from controller.plan import yamlio
from controller.plan.names import (
    HELD_CODES,
    ambiguous_claims,
    fold_path,
    same_path,
    source_verdict,
    split_files,
    twin_folder_verdict,
    twin_folders,
)
from controller.plan.plans import DEFAULT_MAX_BYTES, PLAN_FILES, frozen_form, nested_at, text_hash

LOG_NAME = "EXECUTION_LOG.md"
MAX_NOTES = 20
_OWNED_BLOCKS = ("approval", "execution")


@dataclass(frozen=True, slots=True)
class BlobFacts:
    """What one version of a PLAN.yml says, as far as history processing needs."""

    status: str | None
    hash: str | None
    frozen_hash: str | None
    #: Digest of the controller-owned blocks (approval, execution): a human changing
    #: them is flagged by the audit.
    owned_digest: str
    parsed: bool
    #: Why this version cannot be a plan (E_PLAN_TOO_LARGE), noted on the plan.
    problem: str | None = None
    #: ``frozen.risk`` and ``frozen.estimate`` as the freeze wrote them (shown by status).
    risk: str | None = None
    estimate: dict[str, Any] | None = None
    #: Digest of the controller-owned ``execution:`` block alone: the pause (gate, failed
    #: action) and the progress of a started run, which a continuation approval answers.
    execution_digest: str = ""
    #: The version carries an ``execution:`` or ``approval:`` block (a claim of a record).
    owned: bool = False
    #: The version's top level is no block mapping (a JSON/flow mapping): it parses, yet the
    #: controller can write no status or record into it (:func:`yamlio.is_block_mapping`).
    unwritable: bool = False
    #: The hash the version has as the freeze writes it (its legacy ``${...}`` references
    #: converted: :func:`controller.plan.plans.frozen_form_hash`), when that is not ``hash``
    #: (None: the same). A withdrawal of the version vetoes it under both (round 120,
    #: draft-legacy-veto-missed: a draft written ``${inputs.who}`` was vetoed by its text's
    #: hash and its copy, frozen as ``$<inputs.who>``, ran).
    form_hash: str | None = None


#: File modes that are no plan file: a symlink (never followed) and a gitlink (a submodule).
NOT_A_FILE = {"120000": "a symbolic link", "160000": "a submodule (gitlink)"}


def nested_refusal(
    path: str,
    plans_dir: str,
    mode_of: Callable[[str], str | None],
    work_tree: Path | None = None,
) -> UnsafePath | None:
    """E_UNSAFE_PATH when ``path`` (a plan folder or file, relative to the repository) lies in
    a repository of its own below the plans folder: a folder on its way committed as a gitlink
    (``mode_of``: the branch's modes, checked out or not), or, in ``work_tree``, a folder
    holding a ``.git`` (:func:`controller.plan.plans.nested_at`: a submodule's checkout, a
    ``git init``, a clone). The one rule of every writer and reader that names a plan by its
    path (round 91: MCP ``submit`` committed into a submodule's checkout and over its
    gitlink, ``approve`` read a submodule as a plan ``.``, a gitlink never checked out was
    "no plan")."""
    parts = PurePosixPath(path).parts
    top = 0 if plans_dir.strip("/") in ("", ".") else len(PurePosixPath(plans_dir).parts)
    if top and (len(parts) <= top or not same_path("/".join(parts[:top]), plans_dir)):
        return None  # not below the plans folder: no plan's place
    for end in range(top + 1, len(parts) + 1):
        place = "/".join(parts[:end])
        if mode_of(place) == "160000":
            return UnsafePath(
                f"{place} is {NOT_A_FILE['160000']} in the plans folder; it is not followed",
                quotes=(place,),
            )
    if work_tree is not None:
        found = nested_at(work_tree / path, plans_dir, watched=work_tree)
        if found is not None:
            return UnsafePath(found.message, quotes=(path,))
    return None


def too_large(size: int, max_bytes: int) -> BlobFacts:
    """The facts of a version over ``limits.max_plan_bytes``: never parsed (a 2 MB blob in
    history once cost 21 s a pass), and never read when its size is known first."""
    why = (
        f"E_PLAN_TOO_LARGE: the file is {size} bytes, over limits.max_plan_bytes "
        f"({max_bytes}); it is not read"
    )
    return BlobFacts(None, None, None, "", False, why)


def facts_of(data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> BlobFacts:
    if len(data) > max_bytes:
        return too_large(len(data), max_bytes)
    try:
        text = data.decode("utf-8")
        parsed = yamlio.read_yaml(text, "PLAN.yml")
        doc = parsed.data
    except UnicodeDecodeError as exc:
        why = f"E_YAML_PARSE: not UTF-8 text (byte {exc.start}); the version is not read"
        return BlobFacts(None, None, None, "", False, why)
    except Exception as exc:
        what = getattr(exc, "message", str(exc)).splitlines()[0][:200]
        code = getattr(exc, "code", "E_YAML_PARSE")
        return BlobFacts(None, None, None, "", False, f"{code}: {what}")
    if not isinstance(doc, dict):
        why = "E_SCHEMA_INVALID: the file must be a mapping with plan: and actions:"
        return BlobFacts(None, None, None, "", False, why)
    plan, frozen = doc.get("plan"), doc.get("frozen")
    status = plan.get("status") if isinstance(plan, dict) else None
    frozen_hash = frozen.get("hash") if isinstance(frozen, dict) else None
    try:
        digest = hashlib.sha256(
            json.dumps([doc.get(k) for k in _OWNED_BLOCKS], sort_keys=True, default=str).encode()
        ).hexdigest()[:16]
        pause = hashlib.sha256(
            json.dumps(doc.get("execution"), sort_keys=True, default=str).encode()
        ).hexdigest()[:16]
        plan_hash = text_hash(text, doc)  # once per text: the decision and the run too
    except (TypeError, ValueError, OverflowError):
        plan_hash = None
    if plan_hash is None:
        digest = pause = ""
    risk = frozen.get("risk") if isinstance(frozen, dict) else None
    estimate = frozen.get("estimate") if isinstance(frozen, dict) else None
    form = _form_hash(text, doc, plan_hash)
    return BlobFacts(
        status if isinstance(status, str) else None,
        plan_hash,
        frozen_hash if isinstance(frozen_hash, str) else None,
        digest,
        True,
        risk=risk if isinstance(risk, str) else None,
        estimate=estimate if isinstance(estimate, dict) else None,
        execution_digest=pause,
        owned=any(doc.get(k) is not None for k in _OWNED_BLOCKS),
        unwritable=not yamlio.is_block_mapping(parsed),
        form_hash=form,
    )


def _form_hash(text: str, doc: dict[str, Any], plan_hash: str | None) -> str | None:
    """The version's hash as the freeze writes it, when its legacy ``${...}`` references
    make it another than ``plan_hash`` (None otherwise): one value tree for the hash and the
    run, so a withdrawal of the version as written withdraws it as it would freeze and run.
    A text with neither ``${`` nor a backslash (an escape, a line joined) holds no legacy
    reference, and is not walked."""
    if plan_hash is None or ("${" not in text and "\\" not in text):
        return None
    try:
        form = frozen_form(doc)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return None
    return form if form != plan_hash else None


#: PlanState's string fields many plans share a value of (:meth:`PlanState.share`).
_POOLED = ("status", "file_status", "risk", "last_commit", "log_commit", "controller_commit")
#: PlanState's times many plans share a value of (:meth:`PlanState.share`).
_POOLED_TIMES = ("frozen_since", "version_since")
#: Statuses of a started run: a withdrawal then aborts the approved version.
_RUN_STATES = frozenset({"executing", "awaiting_approval", "failed"})


@dataclass(slots=True)
class PlanState:
    """The index's view of one plan at the last processed commit."""

    plan_id: str
    file: str
    blob: str | None = None
    #: Effective status: the file's status unless a human set it illegally.
    status: str | None = None
    file_status: str | None = None
    hash: str | None = None
    frozen_hash: str | None = None
    frozen_since: int | None = None
    #: frozen_since came from a human commit's clock: the next controller commit caps it.
    frozen_uncapped: bool = False
    #: The earliest time the current version can have existed (see version_since()).
    version_since: int | None = None
    changers: list[str] = field(default_factory=list)
    #: Every content (hash) the plan held, here and through the moves that brought it, ->
    #: the contents it was made of when that one first came (none for a making from
    #: nothing; a merge's every parent's: a hand-resolved add/add has two): the versions a
    #: version was edited from, on the line and on the branches merged into it (round 127:
    #: ``Lifecycle._merged_lineage``). The authors of the version at stake are the
    #: originators of it and of those it came from, who may withdraw the plan (round 119,
    #: ``plan-author-loses-withdrawal-to-coeditor``: the writer of v1 is an author of v2,
    #: another's edit of it; an edit taken back leaves its maker none, round 20).
    versions: dict[str, list[str]] = field(default_factory=dict)
    #: The open approval request: commit, kind, blob, author, committer, time, voided_by,
    #: changed_in_commit.
    request: dict[str, Any] | None = None
    #: plan_hash of the last valid approval (gate approvals and resumes must match it).
    approved_hash: str | None = None
    #: The votes the controller recorded for one hash (its last ``partial`` or ``refuse``
    #: ``approval:`` block, SPEC §11); a change to hashed content voids them.
    collected: dict[str, Any] | None = None
    abort_requested: bool = False
    #: Who asked for the abort (the human commit's author): the abort commit's Aborted-By.
    abort_by: str | None = None
    approver: str | None = None
    #: Every approver the last event naming one names (its ``Approved-By:`` trailers: a
    #: quorum's voters, the approval that met the policy first; round 117). ``approver`` is
    #: the first.
    approvers: list[str] = field(default_factory=list)
    #: The current version's frozen risk and estimate (SPEC §11), for status.
    risk: str | None = None
    estimate: dict[str, Any] | None = None
    last_event: str = ""
    last_commit: str = ""
    #: The last commit that changed the plan's EXECUTION_LOG.md (by anyone): with
    #: ``last_commit``, the last commit of each file of the plan's record (:meth:`record_commits`).
    log_commit: str = ""
    #: The controller's last commit of the plan file at this path (round 67: with
    #: ``log_commit`` and ``owned``, :meth:`has_record`).
    controller_commit: str = ""
    #: The plan file's blob as the controller's change in ``controller_commit`` left it:
    #: what the controller last recorded at the path, so :meth:`Lifecycle._swapped_in
    #: <controller.git.lifecycle.Lifecycle._swapped_in>` reads no tree to learn it (a cold
    #: scan looked it up in the 10,000-entry plans folder for every human change).
    controller_blob: str = ""
    #: The plan file's version at ``last_commit`` carries an ``execution:``/``approval:`` block.
    owned: bool = False
    #: That version parses but its top level is no block mapping (a JSON/flow mapping): it
    #: can carry no status the controller writes, and every reader shows it ``unreadable``
    #: (round 75: ``status`` showed the status it parsed to).
    unwritable: bool = False
    #: The plan's folder holds an entry named as its log in another spelling (a name whose
    #: fold is ``EXECUTION_LOG.md``'s: :func:`controller.plan.names.log_twins`), which the
    #: controller never writes: every reader of the record notes it (round 73).
    log_claimed: bool = False
    #: A commit since this controller last started the plan, under its name but not made by
    #: it (by its record), whose message names a run event of the plan, whatever it changes
    #: (an empty one leaves ``last_commit`` at the start): the take-over check reads it.
    foreign_event: str = ""
    #: The last ``start`` of the plan under the controller's name that this controller did
    #: not make (by its record), since it last started the plan itself: ``"<sha> <frozen
    #: hash>"``. A run of another controller's (or of a lost key's): no decision of this
    #: controller's moves the plan while that version is the plan's (round 67).
    foreign_start: str = ""
    notes: list[str] = field(default_factory=list)
    #: The folder holds PLAN.yml and PLAN.yaml (E_PLAN_AMBIGUOUS): neither is acted on.
    ambiguous: bool = False
    #: A hostile name or a link where the plan file should be (E_UNSAFE_PATH): never read
    #: or acted on (its path may be one no file system holds).
    unsafe: bool = False
    #: While ``ambiguous``: what the hold found (``status``, ``file_status``, ``blob``,
    #: ``file``, ``request``), the plan file's blob last seen while held (``seen``) and a
    #: status a human set while held (``decision``): the release takes them back (round 83).
    held_from: dict[str, Any] | None = None

    def stake(self) -> str | None:
        """The version a withdrawal withdraws: the running one once started (the approved
        one), else the version waiting."""
        stake = self.approved_hash if self.status in _RUN_STATES and self.approved_hash else None
        return stake or self.hash

    def record_commits(self) -> tuple[str, ...]:
        """The last commit of each file of the plan's record (its plan file, its log) the
        index knows: a reader that trusts the controller's record only when the controller
        committed every one of them last asks these (round 66: a log alone changed)."""
        return tuple(sha for sha in (self.last_commit, self.log_commit) if sha)

    def has_record(self) -> bool:
        """Does a file at the path hold, or claim to hold, the controller's record: a commit
        of the controller's of the plan file, a log anyone committed, an entry named as the
        log in another spelling (round 73), or an owned block in the file? Without one,
        every reader's judgement of the record (:func:`controller.git.ownrecord.shown_record`)
        has nothing to note (round 67: a draft no one ran is read without git, a log
        committed before its plan is not)."""
        return bool(self.controller_commit or self.log_commit or self.owned or self.log_claimed)

    def note(self, text: str) -> None:
        self.notes = [*self.notes, text][-MAX_NOTES:]
        self.last_event = text

    def share(self, pool: dict[Any, Any]) -> None:
        """Hold equal values as one object (``pool`` maps each value to its kept copy): 50,000
        plans repeat a few statuses, risks, estimates and emails, their frozen hash is
        mostly their hash and the controller's last blob their blob; the plans one commit
        touched (a merge approving a thousand, the controller's batched events) share its id
        and usually their notes and changers.
        Values are only read, never changed in place (a change assigns a new list)."""
        for name in _POOLED:
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, pool.setdefault(value, value))
        if self.frozen_hash == self.hash:
            self.frozen_hash = self.hash
        # the times too: one commit's plans share them, and a version's time is mostly its
        # freeze's (perf85mem: two int objects per plan, 3.2 MB of 50,000 plans)
        for name in _POOLED_TIMES:
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, pool.setdefault(("time", value), value))
        if self.controller_blob == self.blob:  # the controller's last change is the file's
            self.controller_blob = self.blob or ""
        self.notes = pool.setdefault(("notes", *self.notes), self.notes)
        if self.notes and self.last_event == self.notes[-1]:
            self.last_event = self.notes[-1]
        changers = [pool.setdefault(c, c) for c in self.changers]
        self.changers = pool.setdefault(("changers", *changers), changers)
        if self.estimate is not None:
            key = ("estimate", json.dumps(self.estimate, sort_keys=True, default=str))
            self.estimate = pool.setdefault(key, self.estimate)


@dataclass(frozen=True)
class HistoryEvent:
    """Something the audit (and logs) may want to know about one commit and one plan."""

    #: request | controller | illegal | owned-block-changed | log-changed |
    #: content-after-approval | reject | abort-request (the last two are decisions, not
    #: findings)
    kind: str
    plan_id: str
    commit: CommitRecord
    before: PlanState | None
    after: PlanState | None
    detail: str = ""


EventSink = Callable[[HistoryEvent], None]


def folder_key(folder: str) -> str:
    """The author index's key for everyone who wrote a file in ``folder`` (beside the
    plan hashes and blob ids it keys): the folder's place on a checkout, by the one rule
    (:func:`controller.plan.names.fold_path`: every part folded, a backslash a separator), so
    a file in a twin folder (``plans/NC``, ``plans/fia`` of its NFKC twin, ``plans\\nb``,
    ``plans/dt.``, ``PLANS/rr``) is a file of the plan's folder (round 83). An 8.3 short name
    is matched against the plan's folder when its writers are asked
    (``Lifecycle._short_writers``)."""
    return f"folder:{fold_path(folder)}"


def file_key(folder: str) -> str:
    """The author index's key for everyone who wrote bytes of the plan file in ``folder``
    other than its status line (a comment, metadata, line ends; round 42). Not the plan's
    own authors (an approver's comment beside her approval is no authorship, round 23):
    writers of what a parent pins, as every other file in a pinned folder is."""
    return f"file:{folder}"


def version_key(plan_hash: str) -> str:
    """The author index's key for the writers of every plan that ever held the content
    ``plan_hash`` (its changers, its folder's writers; with ``@held``, its owned-block
    editors' hold): a plan holding that content later, by whatever route, takes them
    (round 74: a copy of an older version, of a deleted plan, in other bytes)."""
    return f"version:{plan_hash}"


#: The author index's keys made from a plan's id (``folder:``, ``file:``) or hash
#: (``version:``): held apart by kind (:class:`AuthorIndex`).
_KEY_KINDS = ("folder", "file", "version")


class AuthorIndex(MutableMapping[str, frozenset[str]]):
    """The author index (``folder:<id>``, ``file:<id>``, ``version:<hash>``, a plan hash, a
    blob key ... -> everyone who wrote it), a mapping of those string keys as before; a key
    of a kind made from a plan's id or hash is held as the rest of it, in a table per kind,
    that rest the very string the plan holds where ``canon`` finds it (perf83mem: a
    ``folder:``, ``file:`` and ``version:`` string per plan were 6.8 MB of a 20,000-plan
    index after its load, 17 MB at 50,000)."""

    __slots__ = ("_kinds", "_plain", "canon")

    def __init__(self, canon: Callable[[str, str], str] | None = None) -> None:
        self._plain: dict[str, frozenset[str]] = {}
        self._kinds: dict[str, dict[str, frozenset[str]]] = {kind: {} for kind in _KEY_KINDS}
        #: ``canon(kind, rest)``: the string already held equal to ``rest`` (or ``rest``)
        self.canon = canon

    def _table(self, key: str) -> tuple[dict[str, frozenset[str]], str]:
        kind, sep, rest = key.partition(":")
        table = self._kinds.get(kind) if sep else None
        return (self._plain, key) if table is None else (table, rest)

    def __getitem__(self, key: str) -> frozenset[str]:
        table, at = self._table(key)
        return table[at]

    def get(self, key: str, default: Any = None) -> Any:
        table, at = self._table(key)
        return table.get(at, default)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        table, at = self._table(key)
        return at in table

    def __setitem__(self, key: str, value: frozenset[str]) -> None:
        kind, sep, rest = key.partition(":")
        table = self._kinds.get(kind) if sep else None
        if table is None:
            self._plain[key] = value
        elif rest in table:
            table[rest] = value
        else:
            table[rest if self.canon is None else self.canon(kind, rest)] = value

    def __delitem__(self, key: str) -> None:
        table, at = self._table(key)
        del table[at]

    def adopt(self, kind: str, held: str) -> None:
        """The ``kind:held`` key, if there is one, kept by the very string ``held`` (the
        plan's own id or hash) instead of an equal copy: a cold scan keys a plan's folder
        and file before its state exists, and its version from a key string built then, so
        each rest was a string of its own to the scan's end (perf85mem: 4.4 MB of a
        20,000-plan scan's peak). The mapping is unchanged."""
        table = self._kinds[kind]
        value = table.pop(held, None)
        if value is not None:
            table[held] = value

    def __iter__(self) -> Iterator[str]:
        yield from self._plain
        for kind, table in self._kinds.items():
            for rest in table:
                yield f"{kind}:{rest}"

    def __len__(self) -> int:
        return len(self._plain) + sum(len(table) for table in self._kinds.values())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AuthorIndex):
            return self._plain == other._plain and self._kinds == other._kinds
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"AuthorIndex({dict(self.items())!r})"


_PLAN_ID_NAMES = frozenset((*PLAN_FILES, LOG_NAME))


def plain_path(path: str) -> bool:
    """Is ``path`` relative, with no empty or ``.`` part? Then ``PurePosixPath`` keeps it
    as it is written, and its name, parent and parents are plain string cuts (a cold scan
    asks them of 50,000 paths: pathlib cost 2.5 s of it)."""
    return not (
        path.startswith(("/", "./"))
        or path.endswith(("/", "/."))
        or "//" in path
        or "/./" in path
        or path in ("", ".")
    )


def path_name(path: str) -> str:
    """``PurePosixPath(path).name``, without building the path (see :func:`plain_path`)."""
    name = path.rpartition("/")[2]
    return PurePosixPath(path).name if name in ("", ".") else name


def history_paths(plans_dir: str, spelled: Iterable[str] = ()) -> list[str]:
    """The pathspecs of the history a plan index reads: the plans folder, and the entries of
    each folder above it whose own name holds a backslash (``:(glob)*\\\\*``, a ``*`` never
    crossing a ``/``): git for Windows splits such a name (:func:`controller.plan.names.
    split_files`), so the root file ``plans\\rt\\PLAN.yml`` is written into ``plans/rt``
    (round 79: the index read the plans folder alone and ran the plan ``show`` held). A
    repository with no such name lists the same commits as with the plans folder alone.
    ``spelled``: the plans folder's other spellings the trees hold (``plans./``, ``plans /``:
    :meth:`controller.git.commits.Commits.folder_spellings`, what the tree walk reads; round
    84), each asked as written; a pathspec has no NTFS or HFS+ fold."""
    if plans_dir in ("", "."):
        return ["."]
    above = plans_dir.split("/")[:-1]
    folders = ["/".join(above[:at]) for at in range(len(above) + 1)]
    globs = [f":(glob){_glob_escaped(f)}{'/' if f else ''}*\\\\*" for f in folders]
    # the plans folder's case twins (``PLANS/rr/NOTES.md``: its files on a case-insensitive
    # checkout, whose committers are writers; round 83), as the tree walk reads them
    twins = f":(icase,literal){plans_dir}"
    others = [f":(literal){path}" for path in spelled]
    return [plans_dir, twins, *others, *(g for glob in globs for g in (glob, glob + "/**"))]


def _glob_escaped(path: str) -> str:
    """``path`` as a ``:(glob)`` pathspec matches it literally."""
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in path)


def plan_id_of(path: str, plans_dir: str) -> str | None:
    """``plans/x/PLAN.yml`` -> ``plans/x`` (None when not a plan file under plans_dir)."""
    if path_name(path) not in _PLAN_ID_NAMES:
        return None
    if plain_path(path) and (plans_dir == "." or plain_path(plans_dir)):
        folder = path.rpartition("/")[0] or "."
        inside = plans_dir == "." or folder == plans_dir or folder.startswith(plans_dir + "/")
    else:
        pure = PurePosixPath(path)
        folder = str(pure.parent)
        inside = PurePosixPath(plans_dir) in pure.parents
    if not inside:
        return None
    if not is_text(path):
        return None  # git allows any bytes in a name; a plan id must be text (see is_text)
    return folder


def plan_file_of(plan_id: str, names: Iterable[str]) -> str | None:
    """``plans/x`` -> its plan file on a branch (``plans/x/PLAN.yml`` or ``plans/x/PLAN.yaml``),
    read from ``names``, the folder's entries as the branch lists them; None when neither.
    Every reader that asks the branch for a plan by its id finds the file this way (round 68:
    MCP ``log`` and ``wait`` read only ``PLAN.yml``). Two entries that are a plan file or
    claim to be one, in any case, file or folder, are E_PLAN_AMBIGUOUS, as for every other
    reader (:func:`controller.plan.names.plan_file_claims`; round 71: ``plan.yml/`` beside
    ``PLAN.yml`` was read as the plan)."""
    listed = set(names)
    both = ambiguous_claims(listed)
    if both is not None:
        held = " and ".join(both)
        raise PlanAmbiguous(f"{plan_id} holds both {held}: neither is read", quotes=(plan_id,))
    found = next((f"{plan_id}/{name}" for name in PLAN_FILES if name in listed), None)
    if found is None:
        _raise_held_source(plan_id, listed)
    return found


def refuse_twin(plan_id: str, names_in: Callable[[str], list[str]], plans_dir: str) -> None:
    """PlanAmbiguous when a folder one with ``plan_id``'s on some checkout, at any level from
    the plans folder ``plans_dir`` down (:func:`controller.plan.names.twin_folders`), holds
    a plan file (:func:`controller.plan.names.twin_folder_verdict`, ``names_in`` lists a
    folder on the branch): a reader asking for the plan by its id answers as the status row
    does (round 75: MCP ``log`` of ``plans/FCASE`` beside ``plans/fcase`` answered its
    ``approved`` file; round 76: of ``plans/Team/x`` beside ``plans/team/x``, and ``wait``
    waited it out as approved)."""
    twins = {t: names_in(t) for t in twin_folders(plan_id, names_in, plans_dir)}
    split = split_files(plan_id, names_in, plans_dir)  # round 77: ``plans/fy\PLAN.yml``
    found = twin_folder_verdict(plan_id, twins, split) if twins or split else None
    if found is not None:
        raise PlanAmbiguous(
            f"{plan_id}: {found[1]}",
            remedy="delete or rename one of the two folders",
            quotes=(plan_id,),
        )


def _raise_held_source(plan_id: str, names: set[str]) -> None:
    """A folder whose source (``PLAN.json`` & co.) waits held is held for the reader that
    asks for its plan too (round 74: MCP ``log`` answered "no plan", the page ``no readable
    PLAN file``, while the row said E_PLAN_AMBIGUOUS): the converter's own verdict
    (:func:`controller.plan.names.source_verdict`), raised with its code and why."""
    verdict = source_verdict(plan_id, names)
    if verdict is None or verdict[0] not in HELD_CODES:
        return
    code, why = verdict
    error = PlanAmbiguous if code == "E_PLAN_AMBIGUOUS" else UnsafePath
    raise error(f"cannot convert {plan_id}: {why}", quotes=(plan_id,))


def is_text(path: str) -> bool:
    """Is ``path`` valid UTF-8? (git hands other bytes over as lone surrogates.) A folder
    name that is not is no plan: its id could not be stored, logged or put in a trailer,
    and one such folder pushed by anyone must not stop the controller for every plan."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def changed_plan_ids(records: Iterable[CommitRecord], plans_dir: str) -> set[str]:
    return {
        pid
        for r in records
        for c in r.changes
        if (pid := plan_id_of(c.path, plans_dir)) is not None
    }


def _content_changed(old: BlobFacts | None, new: BlobFacts | None, change: FileChange) -> bool:
    if old is None or new is None:
        return True
    if old.hash is None or new.hash is None:
        return change.old_blob != change.new_blob  # unparseable: any byte counts
    return old.hash != new.hash


def _same_hash(a: BlobFacts | None, b: BlobFacts | None) -> bool:
    return a is not None and b is not None and a.hash is not None and a.hash == b.hash


def unsafe(state: PlanState) -> bool:
    """A plan under a hostile name or behind a link (E_UNSAFE_PATH): never read or acted on
    (its path may be one no file system holds: a pass that touched it would fail)."""
    return state.unsafe


def held(state: PlanState) -> bool:
    """The history index's verdict that nothing of the plan's folder is read, written or
    acted on: E_UNSAFE_PATH (:func:`unsafe`) or E_PLAN_AMBIGUOUS (``state.ambiguous``: more
    than one entry claims the plan file's place, :func:`controller.plan.names.plan_file_claims`).
    Every writer of the controller asks it, as every reader does (round 73: the freeze step
    froze a plan born beside a symlink ``plan.yml`` that the row, ``show`` and MCP held)."""
    return state.unsafe or state.ambiguous


def _needs_attention(state: PlanState) -> bool:
    if held(state):
        return False  # held by the index: nothing to decide or write until the verdict goes
    if state.request is not None or state.abort_requested:
        return True
    if state.status is None or state.file_status is None:
        return True  # no valid status, or the file cannot be read: the controller says why
    if state.status == "pending_approval":
        return state.frozen_hash != state.hash or state.hash is None
    # An executing (or approved) plan with no request and no abort needs nothing from a
    # pass: its run is a job (service.starting). Keeping a burst's thousand queued plans
    # out of this set keeps a pass's cost to what changed.
    return False
