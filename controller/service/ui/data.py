"""What the page shows, assembled from the daemon's published snapshot and bounded reads.

The daemon calls :meth:`UiData.publish` at the end of each pass with the rows of
``Controller.status()``; requests never take the controller's locks. A plan's own page reads
that plan's files (PLAN.yml, EXECUTION_LOG.md, its journal while it runs) with
``O_NOFOLLOW``, only regular files, at most a fixed number of bytes. The audit is
recomputed in one background thread when the branch head moves, never inside a request.
"""

from __future__ import annotations

import json
import os
import re
import stat
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from controller.errors import PlangateError, Problem
from controller.logs import get_logger
from controller.service.ui.query import OverviewQuery
from controller.service.unreadable import UNREADABLE
from controller.settings import Config

log = get_logger("plangate.ui")

ORDER = (
    "awaiting_approval",
    "pending_approval",
    "executing",
    "failed",
    "invalid",
    "approved",
    "draft",
    "completed",
    "aborted",
    "rejected",
)
FAILED = ("failed", "invalid")
#: The overview's section of the rows that have no status.
UNKNOWN = "unknown"
_CODE = re.compile(r"\bE_[A-Z_]+\b")
MAX_LOG = 262_144
MAX_JOURNAL = 4_194_304


def read_bounded(path: Path, limit: int) -> tuple[str | None, bool]:
    """``(text, cut)`` of a regular file, never through a symlink; ``(None, False)`` if absent
    or not a regular file. Only ``limit`` bytes are read, whatever the file's size."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None, False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, False
        data = os.read(fd, limit + 1)
    except OSError:
        return None, False
    finally:
        os.close(fd)
    return data[:limit].decode("utf-8", "replace"), len(data) > limit


def failure_code(row: dict[str, Any]) -> str | None:
    match = _CODE.search(row.get("last_event") or "")
    return match.group(0) if match else None


class UiData:
    """The page's source of truth: a snapshot of plan rows plus bounded per-plan reads."""

    def __init__(
        self,
        config: Config,
        workdir: Callable[[], Path],
        max_rows: int = 100,
        store: Callable[[], Path | None] = lambda: None,
        is_own: Callable[[Any], bool] | None = None,
    ) -> None:
        from controller.execution.secrets import redactor_for

        self.config = config
        self._workdir = workdir
        #: the controller's own object store (local mode, the daemon holding the state
        #: lock): the page reads objects as the controller does, never the shared store an
        #: agent can write (round 58); None: every object read is hashed against its name
        self.store = store
        self.max_rows = max_rows
        self._rows: dict[str, dict[str, Any]] = {}
        self._published: float | None = None
        self._head = ""
        self._redactor = redactor_for(config)
        self._audit = AuditCache(config, workdir, store)
        self._codes: dict[tuple[str, str], str | None] = {}
        self._git: Any = None  # the repository, read at the published head (_committed)
        self._refused: PlangateError | None = None  # why git cannot read it (_open_git)
        self._git_lock = threading.Lock()
        #: which commits are the controller's (its record of the commits it made): the
        #: record the page shows is theirs (round 61); None: the config's state directory
        self._is_own = is_own

    # --- written by the daemon ------------------------------------------------------------

    def publish(self, rows: list[dict[str, Any]], head: str = "") -> None:
        """A new snapshot (one assignment: readers see the old or the new one, never a mix)."""
        self._rows = {row["plan"]: row for row in rows}
        self._published = time.time()
        if head and head != self._head:
            self._head = head
            self._audit.refresh(head)

    def first_pass_failed(self, code: str, message: str) -> None:
        """The daemon's pass failed before any snapshot: the "not ready" answer says why
        (redacted: the message may quote plan values), not "still reading" for ever."""
        self.failure = (code, self._redactor.text(message)[:300])

    # --- read by requests -----------------------------------------------------------------

    #: (code, message) of the last pass that failed before the first snapshot, or None
    failure: tuple[str, str] | None = None

    @property
    def ready(self) -> bool:
        """Has the daemon published a snapshot yet? Before its first pass ends it has not:
        every page then answers "not ready" (503), never "no such plan" (round 95)."""
        return self._published is not None

    def pass_failed(self) -> dict[str, Any] | None:
        """Why the controller's passes fail now, redacted, or None while they complete: its
        state directory's record (:class:`~controller.service.statedir.PassFailure`), read at
        each request, since the snapshot is the last completed pass's (round 124)."""
        from controller.service.statedir import PassFailure

        found = PassFailure(self.config.state_path() / PassFailure.NAME).read()
        if found is None:
            return None
        said = {key: self._redactor.text(str(found[key])) for key in ("message", "remedy")}
        return {**found, **said}

    def overview(self, asked: OverviewQuery | None = None) -> dict[str, Any]:
        """Every status's first page, or the page of one status ``asked`` (held against this
        snapshot's statuses and pages: an unknown status or a page past the last is
        ``E_USAGE``, never an empty page: round 126)."""
        asked = asked or OverviewQuery()
        stuck = self.pass_failed()
        rows = list(self._rows.values())
        counts = Counter(row["status"] or UNKNOWN for row in rows)
        asked.check(self.statuses(counts), lambda s: self._pages(counts.get(s, 0)))
        statuses = [s for s in ORDER if counts.get(s)] + sorted(s for s in counts if s not in ORDER)
        if asked.status is not None:
            statuses = [asked.status]
        sections = [self._section(rows, s, asked.page, stuck) for s in statuses]
        failed = [r for r in rows if r["status"] in FAILED or failure_code(r)]
        failures = [self._summary(r, stuck) for r in failed]
        return {
            "published_at": self._published,
            "pass_failed": stuck,
            "total": len(rows),
            "counts": dict(counts),
            "sections": sections,
            "failures": failures[: self.max_rows],
            "failures_total": len(failures),
            "audit": self._audit.summary(),
        }

    @staticmethod
    def statuses(counts: Counter[str]) -> list[str]:
        """The statuses the overview shows, so the ones ``?status=`` may name: every plan
        status (an empty one is a page of none), its own sections of rows with no status or
        an unreadable one, and any other a row shows now."""
        own = [*ORDER, UNREADABLE, UNKNOWN]
        return own + sorted(s for s in counts if s not in own)

    def _pages(self, count: int) -> int:
        """How many pages ``count`` plans of one status fill (one when there are none)."""
        return max(1, -(-count // self.max_rows))

    def _section(
        self, rows: list[dict[str, Any]], status: str, page: int, stuck: dict[str, Any] | None
    ) -> dict[str, Any]:
        matching = [r for r in rows if (r["status"] or UNKNOWN) == status]
        matching.sort(key=lambda r: r["plan"])
        start = (max(page, 1) - 1) * self.max_rows
        shown = matching[start : start + self.max_rows]
        return {
            "status": status,
            "total": len(matching),
            "page": max(page, 1),
            "pages": self._pages(len(matching)),
            "plans": [self._summary(r, stuck) for r in shown],
        }

    def _summary(self, row: dict[str, Any], stuck: dict[str, Any] | None) -> dict[str, Any]:
        from controller.service.statedir import waits_on_passes

        code = row.get("held") or failure_code(row)
        if code is None and row["status"] in FAILED:
            code = self._file_code(row)
        summary = {
            "plan": row["plan"],
            "status": row["status"],
            "hash": row.get("hash"),
            "approver": row.get("approver"),
            "approvers": row.get("approvers") or [],
            "last_event": row.get("last_event") or "",
            "code": code,
            "waiting": row.get("waiting") or waits_on_passes(row, stuck),
        }
        if row["status"] in ("pending_approval", "awaiting_approval", "approved"):
            summary["needs"] = self._needs(row)
        if row["status"] == "executing" or row.get("running"):
            summary["progress"] = self._progress(row)
        return summary

    def _file_code(self, row: dict[str, Any]) -> str | None:
        """The error code a failed or invalid plan's file records (read once per commit)."""
        key = (row["plan"], row.get("last_commit") or "")
        if key not in self._codes:
            if len(self._codes) > 4 * self.max_rows:
                self._codes.clear()
            text, _ = self._committed(row["file"])
            self._codes[key] = recorded_code(text or "")
        return self._codes[key]

    def _needs(self, row: dict[str, Any]) -> dict[str, Any]:
        """What a waiting plan still needs and who may give it (the default policy unless the
        row carries what the controller computed)."""
        approval = self.config.approval
        who = list(approval.approvers)
        missing = row.get("missing") or (
            "one approval by an allowed approver" if who else "nobody may approve (no approvers)"
        )
        if row["status"] == "awaiting_approval":
            missing = "a gate approval by an allowed approver"
        return {
            "missing": missing,
            "who": who,
            "not": "the plan's authors" if not approval.allow_self_approval else None,
        }

    def _progress(self, row: dict[str, Any]) -> dict[str, Any]:
        actions = self._journal_actions(row)
        done = sum(1 for a in actions.values() if a["status"] in ("succeeded", "skipped"))
        running = [k for k, a in actions.items() if a["status"] == "running"]
        return {"done": done, "running": running, "seen": len(actions)}

    def _journal_actions(self, row: dict[str, Any]) -> dict[str, dict[str, Any]]:
        from controller.execution.journal import journal_path

        plan_hash = row.get("frozen_hash") or row.get("hash")
        if not plan_hash:
            return {}
        path = journal_path(self.config.state_path(), row["plan"], plan_hash)
        text, _ = read_bounded(path, MAX_JOURNAL)
        return journal_actions(text or "")

    def plan(self, plan_id: str) -> dict[str, Any] | None:
        """One plan's page, or None when the snapshot does not know that plan (a request can
        never name a file to read: paths come from the controller's own rows)."""
        row = self._rows.get(plan_id)
        if row is None:
            return None
        if row.get("held"):
            return self._held(row)
        plan_file = self._workdir() / row["file"]
        text, oversize = self._committed(row["file"])
        stuck = self.pass_failed()
        page: dict[str, Any] = {
            "row": self._summary(row, stuck),
            "notes": list(row.get("notes") or []),
            "pass_failed": stuck,
        }
        page.update(self._plan_view(plan_file, text, oversize))
        self._show_record(page, row["file"], text)
        if row["status"] == "executing" or row.get("running"):
            page["live"] = self._redactor.data(self._journal_actions(row))
        return page

    def _held(self, row: dict[str, Any]) -> dict[str, Any]:
        """The page of a folder the row holds (``held``: ``E_PLAN_AMBIGUOUS``, two entries
        claim the plan file's place; ``E_UNSAFE_PATH``): the code and why, the row's notes,
        and the controller's own record of the row's file with its notes (round 70: her
        completed run, under the code; the blocks as ``record``, the log its commit wrote),
        but no plan text read from the branch: no ``document``, no hash, no name or task, as
        ``show`` and MCP ``log`` refuse (round 73: the page titled the folder with one file's
        plan name and task, ``/api/plan/`` answered its document and hash; for ``PLAN.yml``
        beside ``PLAN.yaml``, the file no other reader reads). The file's owned blocks are
        read only to compare them with the record (a later version by anyone else noted)."""
        code = row["held"]
        notes = list(row.get("notes") or [])
        said = [*reversed(notes), row.get("reason") or ""]  # a held source's: its reason
        why = next((n for n in said if n.startswith(code)), None) or (
            f"{code}: the folder is held (see plangate status): no file of it is read or run"
        )
        stuck = self.pass_failed()
        page: dict[str, Any] = {
            "row": {**self._summary(row, stuck), "hash": None},
            "notes": notes,
            "problems": [{"code": code, "message": why}],
            "pass_failed": stuck,
        }
        # a held source's row names no file: the record is the one beside its would-be PLAN.yml
        file = row["file"] or f"{row['plan']}/PLAN.yml"
        text, _ = self._committed(file)
        record = self._show_record(page, file, text)
        blocks = {k: v for k, v in (record.blocks if record else {}).items() if v is not None}
        if blocks:
            page["record"] = self._redactor.data(blocks)
        return page

    def _show_record(self, page: dict[str, Any], file: str, text: str | None) -> Any:
        """The plan's ``execution:``/``approval:`` blocks and its log as the controller's own
        commits wrote them, a later version by anyone else flagged, never shown as the
        record (round 61: :func:`controller.git.ownrecord.shown_record`, the one rule every
        reader of the record uses). Shown as the controller committed them (round 64):
        redacted when written, as written where they quote the author (a ``why``, a literal
        param); redacted again, the author's text equal to a secret read ``***``."""
        from controller.git.ownrecord import note_code, owned_blocks, shown_record

        branch = owned_blocks(text, PurePosixPath(file).name) if text is not None else None
        record = self._locked_git(
            lambda git: shown_record(
                git, self._head, file, self._own(), branch or {}, plans_dir=self.config.plans_dir
            )
        )
        log_text = record.log if record is not None else None
        page["log"] = log_text[:MAX_LOG] if log_text is not None else None
        page["log_cut"] = log_text is not None and len(log_text) > MAX_LOG
        if record is None:
            return None
        document = page.get("document")
        if isinstance(document, dict) and branch is not None:
            for key, value in record.blocks.items():
                document.pop(key, None)
                if value is not None:
                    document[key] = value
        notes = [{"code": note_code(n), "message": n} for n in record.notes]
        page["problems"] = [*(page.get("problems") or []), *self._redactor.data(notes)]
        return record

    def _own(self) -> Callable[[Any], bool]:
        if self._is_own is None:
            from controller.service.statedir import is_own_commit

            self._is_own = is_own_commit(self.config)
        return self._is_own

    def _locked_git(self, read: Callable[[Callable[..., str | None]], Any]) -> Any:
        """``read(git)`` with git run in the repository at the published head; None before
        the first snapshot."""
        if not self._head:
            return None
        with self._git_lock:
            if self._open_git() is None:
                return None

            def git(*args: str) -> str | None:
                try:
                    return str(self._git.run(*args))
                except PlangateError:
                    return None

            return read(git)

    def _committed(self, path: str) -> tuple[str | None, Problem | None]:
        """``(text, oversize)`` of ``path`` as the watched branch holds it at the published
        head: the page shows the record, never the working tree (in local mode an agent
        writes it: a rewritten log, results or approver of a finished plan would read as the
        controller's; round 5). ``(None, None)`` when absent or not a regular file. A blob
        over ``limits.max_plan_bytes`` is never read: ``(None, E_PLAN_TOO_LARGE)``, the
        diagnosis the row's reader makes of it (:func:`controller.plan.plans.too_large`;
        round 117, page-oversized-plan-misdiagnosed: the page cut at its own 1 MiB and then
        called the regular file "no readable PLAN file", E_UNSAFE_PATH, beside the row's
        E_PLAN_TOO_LARGE)."""
        from controller.plan.plans import too_large

        head, limit = self._head, self.config.limits.max_plan_bytes
        if not head:
            return None, None
        with self._git_lock:
            if self._open_git() is None:
                return None, None
            try:
                self._refused = None
                listed = self._git.run("ls-tree", "-l", "-z", head, "--", path)
                meta, _, name = listed.rstrip("\0").partition("\t")
                mode, kind, sha, size = [*meta.split(), "", "", "", ""][:4]
                if name != path or kind != "blob" or mode not in ("100644", "100755"):
                    return None, None
                if int(size) > limit:
                    return None, too_large(int(size), limit)
                data = self._git.blob(sha)
            except PlangateError:
                self._refused = _refusal(self._workdir())  # the format changed since the open
                return None, None
            except ValueError:
                return None, None
        return data.decode("utf-8", "replace"), None

    def _open_git(self) -> Any:
        """The repository (under ``_git_lock``), None when git cannot read it: then
        ``_refused`` holds why (round 94: an extension git refuses read as "no readable PLAN
        file"; every answer that needs git says why instead)."""
        if self._git is None:
            from controller.git.gitrepo import GitRepo

            try:
                self._git = GitRepo(self._workdir(), store=self.store())
            except PlangateError as exc:
                self._refused = exc
                return None
            self._refused = None
        return self._git

    def _plan_view(
        self, plan_file: Path, text: str | None, oversize: Problem | None
    ) -> dict[str, Any]:
        refused = self._refused
        if text is None and refused is not None:
            return {"problems": [{k: v for k, v in refused.to_json().items() if v is not None}]}
        if oversize is not None:  # a regular file, only too large: never read (round 117)
            return {"problems": [{k: v for k, v in oversize.to_json().items() if v is not None}]}
        if text is None:
            return {"problems": [{"code": "E_UNSAFE_PATH", "message": "no readable PLAN file"}]}
        from controller.plan.plans import validate_text

        try:
            loaded = validate_text(text, plan_file, self.config)
        except PlangateError as exc:
            return {"problems": [{"code": exc.code, "message": self._answered(exc)}]}
        data = self._document(loaded.data) if isinstance(loaded.data, dict) else {}
        redact = self._redactor.text
        problems = [
            {"code": p.code, "message": p.message, "path": p.path}
            for p in (problem.answered(redact) for problem in loaded.problems)
        ]
        tools = {
            name: _tool_line(spec)
            for name, spec in self.config.tools.items()
            if any(a.get("tool") == name for a in _actions(data))
        }
        # tool lines show the catalog's argv and URL (round 49)
        tools = self._redactor.data(tools)
        return {"hash": loaded.hash, "document": data, "problems": problems, "tools": tools}

    def _answered(self, exc: PlangateError) -> str:
        """An error about the plan's file as an answer to its author: the text it quotes
        as written, the rest redacted (:func:`controller.errors.redacted_around`)."""
        from controller.errors import redacted_around

        return redacted_around(str(exc), exc.quoted(), self._redactor.text, exc.catalog_quoted())

    def _document(self, data: dict[str, Any]) -> dict[str, Any]:
        """The committed plan as its author wrote it (masking its text where it equals a
        secret confirms a guess of the secret, round 61: it is in the repository as written
        anyway); the blocks the controller writes into it (``frozen``, ``approval``,
        ``execution``: outputs, errors) through the records' redactor, but its answer to the
        author (``validation:``, :data:`~controller.plan.plans.ANSWER_BLOCKS`) as recorded:
        the one rule already wrote it (round 63)."""
        from controller.plan.plans import ANSWER_BLOCKS, CONTROLLER_BLOCKS

        redacted = set(CONTROLLER_BLOCKS) - set(ANSWER_BLOCKS)
        return {k: self._redactor.data(v) if k in redacted else v for k, v in data.items()}

    def audit(self) -> dict[str, Any]:
        return self._audit.full()

    def close(self) -> None:
        self._audit.close()
        with self._git_lock:
            if self._git is not None:
                self._git.close()
                self._git = None


def _refusal(workdir: Path) -> PlangateError | None:
    """Why git refuses the repository now (:func:`controller.git.guard.accepted`), if so."""
    from controller.git.guard import GitGuard

    try:
        GitGuard.read(workdir, offline=True)
    except PlangateError as exc:
        return exc
    return None


def _actions(data: dict[str, Any]) -> list[dict[str, Any]]:
    actions = data.get("actions")
    return [a for a in actions if isinstance(a, dict)] if isinstance(actions, list) else []


def _tool_line(spec: Any) -> str:
    kind = getattr(spec, "kind", "?")
    if kind == "exec":
        return f"exec {json.dumps(list(getattr(spec, 'argv', [])))}"
    if kind == "http":
        return f"http {getattr(spec, 'method', '')} {getattr(spec, 'url', '')}"
    if kind == "python":
        return f"python {getattr(spec, 'target', '')}"
    return str(kind)


def _block(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def recorded_code(text: str) -> str | None:
    """The first error code a plan file records: its validation errors, the step that ended
    its failed run (:func:`controller.plan.summary.ended_by`: a fallback step's own error
    included), or a refused approval."""
    from controller.plan import summary, yamlio

    try:
        data = yamlio.read_yaml(text).data
    except Exception:  # unreadable: the row's own event says why
        return None
    if not isinstance(data, dict):
        return None
    found: list[Any] = []
    validation, execution, approval = (
        _block(data, k) for k in ("validation", "execution", "approval")
    )
    found += [e.get("code") for e in validation.get("errors") or [] if isinstance(e, dict)]
    ended = summary.ended_by(execution)  # what ended the run, as status's reason says
    found.append(ended[1].get("code") if ended is not None else None)
    found.append(approval.get("code"))
    return next((c for c in found if isinstance(c, str) and _CODE.fullmatch(c)), None)


def journal_actions(text: str) -> dict[str, dict[str, Any]]:
    """Each action's latest state from journal lines (a torn last line is ignored)."""
    actions: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or "id" not in record:
            continue
        key = str(record["id"])
        entry = actions.setdefault(key, {"id": record["id"], "status": "pending"})
        if record.get("t") == "start":
            entry.update(status="running", started_at=record.get("at"), params=record.get("params"))
            entry["attempt"] = record.get("attempt")
        elif record.get("t") == "end":
            entry.update(
                status="running" if record.get("retry") else record.get("status"),
                duration_ms=record.get("duration_ms"),
                result=record.get("result"),
                error=record.get("error"),
            )
    return actions


class AuditCache:
    """``plangate audit`` over the branch, recomputed in the background when the head moves."""

    def __init__(
        self,
        config: Config,
        workdir: Callable[[], Path],
        store: Callable[[], Path | None] = lambda: None,
        is_own: Callable[[Any], bool] | None = None,
    ) -> None:
        self.config = config
        self._workdir = workdir
        self._store = store
        self._result: dict[str, Any] | None = None
        self._wanted = ""
        self._wake = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None

    def refresh(self, head: str) -> None:
        self._wanted = head
        self._wake.set()
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="ui-audit", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop:
            self._wake.wait()
            self._wake.clear()
            if self._stop:
                return
            head = self._wanted
            started = time.monotonic()
            try:
                report = self._run(head)
            except Exception as exc:  # the page says the audit failed; the daemon goes on
                log.warning("ui.audit_failed", error=str(exc))
                report = {"ok": None, "error": str(exc), "executions": [], "findings": []}
            report.update(head=head, seconds=round(time.monotonic() - started, 3))
            self._result = report

    def _run(self, head: str) -> dict[str, Any]:
        from controller.approval.audit import audit_repo
        from controller.git.gitrepo import GitRepo

        repo = GitRepo(self._workdir(), store=self._store())
        try:
            return audit_repo(repo, self.config, head).to_json()
        finally:
            close = getattr(repo, "close", None)
            if close is not None:
                close()

    def summary(self) -> dict[str, Any] | None:
        result = self._result
        if result is None:
            return None
        return {
            "ok": result.get("ok"),
            "head": result.get("head"),
            "findings": len(result.get("findings", [])),
            "executions": len(result.get("executions", [])),
        }

    def full(self) -> dict[str, Any]:
        return self._result or {"ok": None, "pending": True, "executions": [], "findings": []}

    def close(self) -> None:
        self._stop = True
        self._wake.set()
