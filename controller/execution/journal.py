"""The execution journal: a durable, append-only record of every action's start and end.

Crash safety rests here (SPEC §6). Before a tool runs, its start record is on disk (written and
fsynced); before the engine moves on, so is its end record. After a crash, replaying the
journal tells exactly which actions finished (never run again), which started without an end
(in doubt, and which tool process each of those may have left running), and which gates were
approved.

Location: ``<state_dir>/journal/<plan id, URL-quoted>/<hex of the frozen hash>.jsonl``. The
journal is keyed by the frozen hash, so a plan changed and approved again starts afresh.

Format: JSON Lines, one record per line, each with ``t`` (type) and ``at`` (UTC time):

- ``{"t": "begin", "start": sha, "first": true}``: the controller made the start commit
  ``sha`` (written before the commit is published, so a journal that lacks every record
  after a start was lost: the run then treats every action that may have started as in
  doubt); ``first`` (only when true) marks the start of a first approval: a journal whose
  first record it is holds the whole run, so it was not lost (round 68);
- ``{"t": "run", "resume": bool, "pid": int, "approval": {...}}``: a run began (the first
  one names the approval that started the plan: ``$<approval.*>`` is it for the whole run);
- ``{"t": "gate", "id": k}``: the gate before action ``k`` was approved;
- ``{"t": "start", "id": k, "attempt": n, "key": "step:...", "params": {...}}``: action ``k``
  is about to run with these resolved params (secrets redacted);
- ``{"t": "spawn", "id": k, "attempt": n, "pid": P, "pgid": G, "start_ticks": T, "boot_id": B,
  "marker": M, "cgroup": C}``:
  that attempt's tool started child process ``P`` in process group ``G`` (``exec`` and
  ``python`` kinds), ``T`` being its start time (``/proc/<pid>/stat`` field 22, clock ticks
  since boot) and ``B`` ``/proc/sys/kernel/random/boot_id`` (both null without ``/proc``);
  ``M`` is the call's ``PLANGATE_ATTEMPT`` value, in the environment of every process the
  tool started (round 86; absent from older journals, which are read as before); ``C`` is
  the call's own cgroup v2 (``<controller's cgroup>/plangate-M``, as ``/proc/<pid>/cgroup``
  names it; null where cgroups are not used, absent before round 88).
  After a crash, recovery stops that group before it re-runs the action or marks it in doubt,
  but only if ``P`` still runs with the same start time in the same boot (a reused pid is
  another process), and every process of the user whose environment carries ``M`` (a helper
  that left the group), and first every process in ``C`` at once (``cgroup.kill``; then
  ``C`` is removed). This record is written but *not* fsynced: if the controller process dies,
  the kernel still writes it out from the page cache; a power loss or kernel crash loses it,
  but also kills the child it describes;
- ``{"t": "end", "id": k, "attempt": n, "status": S, "retry": bool, "duration_ms": int,
  "result": ..., "outputs": {...}, "error": {"code", "message"} | null}`` with ``S`` one of
  ``succeeded``, ``failed``, ``skipped``, ``in_doubt``; ``retry: true`` marks a failed attempt
  that will be tried again (the action is not finished); a succeeded end whose result or
  outputs redaction changed also carries ``"sealed": "v2:..."``, the real ones sealed under
  the secrets (``Redactor.seal``, round 43), with the secret values they hold (``held``,
  round 126: a run hides them to its end, rotated or not): a run that goes on after a pause
  unseals them
  (written unsynced: the next action's start or the run's outcome, both synced, makes it
  durable before anything acts on it; a power loss in between reads as the action in doubt);
- ``{"t": "outcome", "status": "completed" | "failed" | "aborted" | ..., "action": k | null,
  "error": {"code", "message"}}``: how a run ended (``error`` only for a failure of no single
  action, such as a lost journal);
- ``{"t": "check", "id": k | null, "attempt": n, "kind": "precondition" | "verify", "index": i,
  "tool": T | null, "ok": bool, "polls": p, "result": ..., "failures": [...], "error": ...}``:
  a check of action ``k`` (``null``: a plan precondition) held or not (written unsynced: checks
  are idempotent, and the start or end record that follows makes it durable);
- ``{"t": "called", "id": k, "attempt": n, "result": ..., "outputs": {...}}``: the tool of an
  action with a ``verify`` returned; after a crash, recovery resumes at the verify instead of
  calling the tool again.

- ``{"t": "recovered", "from": "execution", "actions": [k, ...], "started_at": T}``: the
  journal was lost
  (or the whole state directory) and a new start found the plan's committed ``execution:``
  block recording actions of this hash as finished (round 45: a plan paused at a gate): it
  is followed by an end record ``"from_record": true`` for each action it records
  ``succeeded`` or ``skipped``, with the outputs shown there (``"unknown"``: the names shown
  masked or cut, or ``true`` for all); those, every result and the approval that started
  the plan are not known to the run (a reference to one fails E_ACTION_IN_DOUBT).

Action ids are the plan's integers; a fallback step is ``"<action>.<n>"`` (a string). An end
record may also carry ``no_call: true`` (the action failed before its tool was called: a
reference, params_schema or precondition failure; it still counts as a try),
``fallback: true`` (failed; its fallback steps run next) or ``ask: true`` (failed; the plan
waits for a human). A gate record with ``"ask": n, "approval": C`` is the approval (commit
``C``) that retries an action after its ``n``-th ask.

What one plan's journal holds is bounded (``limits.max_journal_bytes``, default 8 times
``limits.max_params_bytes``): each action's params may be up to ``max_params_bytes``, but every
action and every try journals its own (round 38: 20 actions journaled 20 MB). A start, called,
end or check record that would take the journal past the bound is not written
(:class:`JournalFull`); the run writes a small failed ``end`` record in its place (the try
ends ``E_LIMIT_EXCEEDED``, ``no_call`` when the tool was not called) and fails. From the first
refusal on, every such record is refused (actions running on other threads end with small
failed ends; one admitted meanwhile never calls its tool), so the journal passes the bound
only by those small records and the outcome. Error
messages and a check's failures are journaled cut (:func:`cut_messages`), as PLAN.yml shows
them.

A torn last line (the process died mid-write, before the fsync returned) is dropped when the
journal is opened: that record was never acknowledged, so the engine never acted on it. The
file is held with an exclusive ``flock`` while a run uses it, so two runs of one plan (threads
or processes) cannot interleave; the second gets E_LOCKED.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from controller.errors import Locked, PlangateError, StorageFailed, storage_failed
from controller.fsutil import fsync_dir

FINAL = ("succeeded", "failed", "skipped", "in_doubt")
DONE = ("succeeded", "skipped")
_SYNC = getattr(os, "fdatasync", os.fsync)


def journal_path(state_dir: Path, plan_id: str, plan_hash: str) -> Path:
    """Where the journal of one plan at one frozen hash lives: a folder named by the plan id
    URL-quoted, or by its digest when that name would be too long for a file system (round
    16: 120 ``é`` are 240 bytes as a name but 720 quoted; the start was committed, then the
    journal could not be created and the plan stayed ``executing``)."""
    folder = quote(plan_id.strip("/"), safe="") or "_"
    if len(folder) > MAX_FOLDER_NAME:
        folder = "~sha256-" + hashlib.sha256(plan_id.encode("utf-8", "surrogateescape")).hexdigest()
    return state_dir / "journal" / folder / f"{plan_hash.removeprefix('sha256:')}.jsonl"


#: The longest journal folder name kept as the quoted plan id (file systems allow 255 bytes).
MAX_FOLDER_NAME = 200


class Journal:
    """One plan's journal, open for appending; use as a context manager."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[dict[str, Any]] = []
        #: Bytes the file holds (what the bound, ``limits.max_journal_bytes``, counts).
        self.size = 0
        #: A bounded record was refused: every later one is too (:meth:`append`).
        self.full = False
        self._fd = -1

    def __enter__(self) -> Journal:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        try:
            self._open()
        except OSError as exc:
            self.close()
            raise _storage_error(self.path, exc) from None
        except BaseException:
            self.close()  # a damaged journal: its descriptor is not kept
            raise

    def _open(self) -> None:
        created = _ensure_folder(self.path.parent)
        # never blocks (round 56: a FIFO at the path stalled every pass), never a non-file
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | os.O_CLOEXEC
        self._fd = os.open(self.path, flags, 0o600)
        if not stat.S_ISREG(os.fstat(self._fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        os.set_blocking(self._fd, True)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            self._fd = -1
            raise Locked(f"journal {self.path} is in use by another run of this plan") from None
        self.records = self._load()
        if created:
            fsync_dir(self.path.parent)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # also releases the flock
            self._fd = -1

    def append(
        self, record: dict[str, Any], *, sync: bool = True, limit: int | None = None
    ) -> None:
        """Write one record; with ``sync`` (the default) return only once it is on disk.
        With ``limit``: raise :class:`JournalFull` instead, writing nothing, when the record
        would take the file past ``limit`` bytes, or once one such record was refused (a
        smaller one after it, such as another action's start on another thread, would call
        a tool after the bound was hit: the refusal ends the run).

        ``sync=False`` is for records nothing is acted on before the next synced one (a run
        or gate record, always followed by a start record): that record's fdatasync makes
        both durable, one disk flush instead of two before the first action. It also suits a
        spawn record, which only a process crash (page cache kept) needs to survive.
        """
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        data = (line + "\n").encode("utf-8")
        if limit is not None and (self.full or self.size + len(data) > limit):
            full = JournalFull(self.size, len(data), limit, after=self.full)
            self.full = True
            raise full
        try:
            written = os.write(self._fd, data)
            if written != len(data):
                raise OSError(0, f"short write ({written} of {len(data)} bytes)")
            if sync:
                _SYNC(self._fd)
        except OSError as exc:
            self._cut_back()
            raise _storage_error(self.path, exc) from None
        self.size += len(data)
        self.records.append(record)

    def _load(self) -> list[dict[str, Any]]:
        data = _read_all(self._fd)  # the file held open, never the path again
        complete = data[: data.rfind(b"\n") + 1]
        if len(complete) != len(data):
            # A torn last record was never acknowledged: drop it so appends stay line-aligned.
            os.ftruncate(self._fd, len(complete))
            _SYNC(self._fd)
        self.size = len(complete)
        return list(_parse_lines(complete, self.path))

    def _cut_back(self) -> None:
        """After a failed write: drop what of the record reached the file (a torn line), so
        a later record stays line-aligned (round 56: a short write under a full disk)."""
        with contextlib.suppress(OSError):  # else dropped when the journal is opened next
            os.ftruncate(self._fd, self.size)


def read_records(path: Path) -> list[dict[str, Any]]:
    """The journal at ``path`` read without taking it (no lock, nothing written: a live run
    may hold it), its torn last line left out; [] when there is none or it is no regular
    file. PlangateError when a line is damaged."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        data = _read_all(fd)
    finally:
        os.close(fd)
    return list(_parse_lines(data[: data.rfind(b"\n") + 1], path))


def held_by(paths: list[Path], pid: int | None) -> set[Path]:
    """The journals of ``paths`` that process ``pid`` (the state directory's holder, the
    controller) holds open for a run right now: a run takes its journal's ``flock`` from its
    first record to its end (:meth:`Journal._open`). Asked of the kernel's table of locks
    (``/proc/locks``), never of the lock itself: a probe that took it, however briefly, would
    make a run opening its journal then fail ``E_LOCKED``. A lock matches by the file's inode
    and its holder (a file system whose ``stat`` device differs from the table's, such as a
    btrfs subvolume, still matches). Empty where the table cannot be read (no ``/proc``): then
    only the controller's own process knows (round 117, status-running-false-mid-run:
    ``status`` and MCP, readers in another process, said ``running: false`` while the page
    showed the daemon's action running)."""
    if pid is None or not paths:
        return set()
    try:
        table = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return set()
    held = set()
    for line in table.splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[1:5] == ["FLOCK", "ADVISORY", "WRITE", str(pid)]:
            held.add(fields[5].rpartition(":")[2])  # a waiter's line ("->") never matches
    found = set()
    for path in paths:
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and str(st.st_ino) in held:
            found.add(path)
    return found


def _read_all(fd: int) -> bytes:
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


class JournalFull(Exception):
    """A record would take the journal past ``limits.max_journal_bytes``; nothing was written.

    Not a :class:`PlangateError`: no step's ``except PlangateError`` takes it for a failed
    check or tool. The run (:meth:`controller.execution.executor.PlanRun.record`) fills in
    ``error`` (E_LIMIT_EXCEEDED) and ``key`` (the step whose record it was) and lets it end
    the run."""

    def __init__(self, size: int, wanted: int, limit: int, *, after: bool = False) -> None:
        super().__init__(f"journal full: {size} + {wanted} bytes over {limit}")
        self.size = size
        self.wanted = wanted
        self.limit = limit
        #: Refused because an earlier record was (it might have fit by itself).
        self.after = after
        self.error: PlangateError | None = None
        self.key: ActionKey | None = None


class JournalUnwritable(JournalFull):
    """A step's record could not be written (a full disk, a file size limit: round 56); the
    run ends as for a full journal (:class:`JournalFull`): ``error`` says whether the step's
    tool ran (E_ACTION_IN_DOUBT) or never was called, ``key`` names the step."""

    def __init__(self, size: int, error: PlangateError, key: ActionKey | None) -> None:
        super().__init__(size, 0, 0, after=True)
        self.args = (f"journal not written: {error}",)
        self.error = error
        self.key = key


#: Characters of an error message (or of a check's failures, together) a record keeps: the
#: rest is cut with ``…`` (round 38: a verify naming 3,000 clauses journaled 1 MB per try).
MESSAGE_CHARS = 2000


def cut_messages(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its error message and its check failures cut to
    :data:`MESSAGE_CHARS` (the same record when nothing is that long)."""
    from controller.display import shorten

    error = record.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        message = error["message"]
        if len(message) > MESSAGE_CHARS:
            record = {**record, "error": {**error, "message": shorten(message, MESSAGE_CHARS)}}
    failures = record.get("failures")
    if isinstance(failures, list) and failures:
        kept, left = [], MESSAGE_CHARS
        for item in failures:
            text = str(item)
            if left <= 0:
                break
            kept.append(shorten(text, left))
            left -= len(text)
        if len(kept) < len(failures) or kept != failures:
            more = len(failures) - len(kept)
            if more:
                kept.append(f"and {more} more (cut)")
            record = {**record, "failures": kept}
    return record


def _storage_error(path: Path, exc: OSError) -> StorageFailed:
    return storage_failed(f"journal {path}", exc)


def _ensure_folder(folder: Path) -> bool:
    if folder.is_dir():
        return False
    folder.mkdir(parents=True, exist_ok=True)
    fsync_dir(folder.parent)
    return True


def _parse_lines(data: bytes, path: Path) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise PlangateError(
                f"journal {path}: line {number} is not JSON",
                remedy="the journal is damaged; inspect it, then move it aside: the plan's "
                "committed execution block then says which actions already ran (round 45)",
            ) from None
        if isinstance(record, dict):
            yield record


# --- replay -----------------------------------------------------------------------------


ActionKey = int | str


@dataclass
class ActionRecord:
    """What the journal says about one action (or fallback step)."""

    id: ActionKey
    starts: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    #: Start records since the last final end: attempts in the current round.
    round_attempts: int = 0
    #: The last record was a start: the action was running when the process died.
    open_start: bool = False
    #: The last spawn record of the open start: a tool process that may have outlived us.
    spawn: dict[str, Any] | None = None
    #: The open start's tool returned (its ``called`` record): only its verify is left.
    called: dict[str, Any] | None = None
    #: Tries that failed before the tool was called (they have no start record).
    no_call_tries: int = 0
    #: Tries the committed record counts for an action recovered from it (round 45).
    recovered_tries: int = 0
    #: How many times the action paused for a human (``on_failure: ask``).
    asks: int = 0
    #: Approval commits that retried the action after an ask, with the ask they answered.
    ask_approvals: dict[str, int] = field(default_factory=dict)
    #: Check records of the action, in order.
    checks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.open_start:
            return "running"
        if self.end is None:
            return "pending"
        return "failed" if self.end.get("retry") else str(self.end.get("status"))

    @property
    def done(self) -> bool:
        return not self.open_start and self.end is not None and self.status in DONE

    @property
    def attempts(self) -> int:
        return len(self.starts) + self.no_call_tries + self.recovered_tries

    @property
    def ask_pending(self) -> bool:
        """It failed with ``on_failure: ask`` and no approval has answered that ask yet."""
        end = self.end or {}
        return (
            bool(end.get("ask"))
            and not self.open_start
            and self.asks not in set(self.ask_approvals.values())
        )

    @property
    def in_fallback(self) -> bool:
        """It failed with ``on_failure: fallback``; its fallback steps have not all ended."""
        return not self.open_start and bool((self.end or {}).get("fallback"))

    @property
    def finally_failed(self) -> bool:
        """Failed for good (no retry, fallback or ask follows): a resume runs it again."""
        end = self.end
        if end is None or self.open_start:
            return False
        if end.get("retry") or end.get("fallback"):
            return False
        return end.get("status") in ("failed", "in_doubt")

    @property
    def last_start(self) -> dict[str, Any] | None:
        return self.starts[-1] if self.starts else None


@dataclass
class Replay:
    """The journal folded into per-action state."""

    actions: dict[ActionKey, ActionRecord] = field(default_factory=dict)
    gates: set[ActionKey] = field(default_factory=set)
    #: Check records of the plan's own preconditions.
    plan_checks: list[dict[str, Any]] = field(default_factory=list)
    first_run_at: str | None = None
    #: The approval that started the plan (the first run's): what ``$<approval.*>`` names in
    #: every action, gated or retried after an ask too (round 16: they got the gate's).
    plan_approval: dict[str, Any] | None = None
    #: Status of the last ``outcome`` record (None: no run has ended yet).
    last_outcome: str | None = None
    #: When that run ended (the outcome record's time): the finish time every rendering shows.
    last_outcome_at: str | None = None
    #: ``{code, message}`` of a failure that belongs to no action (a lost journal).
    last_outcome_error: dict[str, Any] | None = None
    #: Start records of every action, across runs: the tool calls ``max_tool_calls`` counts
    #: (kept as a count: summing the actions' starts before each call cost O(N) per action).
    tool_calls: int = 0
    #: The same per nested plan: parent action id -> starts of its ``"<id>/..."`` steps (the
    #: nested plan's own ``max_tool_calls``, :mod:`controller.execution.caps`).
    nested_calls: dict[str, int] = field(default_factory=dict)
    #: The journal was lost and rebuilt from the plan's committed ``execution:`` block (a
    #: ``recovered`` record, round 45): the values only the lost journal held are not known.
    recovered: bool = False

    def action(self, action_id: ActionKey) -> ActionRecord:
        if action_id not in self.actions:
            self.actions[action_id] = ActionRecord(action_id)
        return self.actions[action_id]

    def apply(self, record: dict[str, Any]) -> None:
        kind = record.get("t")
        if (
            kind == "run"
            and self.plan_approval is None
            and isinstance(record.get("approval"), dict)
        ):
            self.plan_approval = record["approval"]
        if kind == "run" and self.first_run_at is None:
            self.first_run_at = record.get("at")
        elif kind == "recovered":
            self.recovered = True
            if self.first_run_at is None and isinstance(record.get("started_at"), str):
                self.first_run_at = record["started_at"]  # as the committed record says
        elif kind == "outcome":
            self.last_outcome = record.get("status")
            self.last_outcome_at = record.get("at")
            self.last_outcome_error = record.get("error")
        elif kind == "gate":
            if "ask" in record:
                asked = self.action(_key(record["id"]))
                asked.ask_approvals[str(record.get("approval"))] = int(record["ask"])
            else:
                self.gates.add(_key(record["id"]))
        elif kind == "start":
            state = self.action(_key(record["id"]))
            state.starts.append(record)
            self.tool_calls += 1
            if isinstance(state.id, str) and "/" in state.id:
                head = state.id.split("/", 1)[0]
                self.nested_calls[head] = self.nested_calls.get(head, 0) + 1
            state.round_attempts += 1
            state.open_start = True
            state.spawn = state.called = None
        elif kind == "spawn":
            state = self.action(_key(record["id"]))
            if (
                state.open_start
                and record.get("attempt") == len(state.starts) + state.no_call_tries
            ):
                state.spawn = record
        elif kind == "called":
            state = self.action(_key(record["id"]))
            if state.open_start:
                state.called = record
        elif kind == "check":
            if record.get("id") is None:
                self.plan_checks.append(record)
            else:
                self.action(_key(record["id"])).checks.append(record)
        elif kind == "end":
            self._end(record)

    def _end(self, record: dict[str, Any]) -> None:
        state = self.action(_key(record["id"]))
        state.end = record
        state.open_start = False
        state.spawn = state.called = None
        if record.get("no_call"):
            state.no_call_tries += 1
            state.round_attempts += 1
        if record.get("ask"):
            state.asks += 1
        tries = record.get("attempt")
        if record.get("from_record") and isinstance(tries, int) and not isinstance(tries, bool):
            state.recovered_tries = max(0, tries)  # as the committed record counts them
            self.tool_calls += state.recovered_tries
        if not record.get("retry"):
            state.round_attempts = 0


def _key(value: Any) -> ActionKey:
    """An action id as journaled: an int for the plan's actions, a string for the others."""
    return value if isinstance(value, int | str) and not isinstance(value, bool) else str(value)


def replay(records: list[dict[str, Any]]) -> Replay:
    folded = Replay()
    for record in records:
        folded.apply(record)
    return folded
