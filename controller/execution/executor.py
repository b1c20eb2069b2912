"""The execution engine: runs an approved, frozen plan exactly as written (SPEC §3, §6, §7).

The controller calls :meth:`Engine.run` once it has verified an approval and committed the
start; the engine never touches git or ``plan.status``. It

1. reloads the plan and refuses it unless it is valid and its hash equals ``frozen.hash``;
2. replays the journal (:mod:`controller.execution.journal`) so finished actions are never
   run again,
   and stops a tool process that a crashed run left behind (only the very process it started:
   same pid, start time and boot) before it decides what to do with that action;
3. runs the remaining actions one at a time in id order: checks abort/stop, pauses at gates
   (``requires_approval``), resolves params (single pass over the parsed tree, so tool output
   is data and can never add, remove, reorder or select actions), checks ``params_schema``,
   journals the start (fsynced), calls the tool (journaling the child process an ``exec`` or
   ``python`` tool starts, unsynced), extracts outputs with RFC 9535 JSONPath, journals the end
   (fsynced), applies ``on_failure``;
4. writes ``execution:`` into PLAN.yml and ``EXECUTION_LOG.md`` at checkpoints (start, gates,
   end, and at most every ``execution.checkpoint_interval`` seconds), so a long plan costs
   O(N) journal records rather than N rewrites of an N-action file.

Every secret value is redacted from what is written: journal, PLAN.yml, log, structured logs
and the error handed back. Test-only hook: ``PLANGATE_TEST_CRASH_AT=<point>:<action id>``
SIGKILLs the engine's own process at ``before-start``, ``after-start``, ``after-tool`` or
``after-end`` of that action (used by the crash-safety tests; never set it in production).
"""

from __future__ import annotations

import functools
import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from controller import fsutil
from controller.errors import (
    Aborted,
    ActionInDoubt,
    GuardFailed,
    LimitExceeded,
    OutputMissing,
    ParamsInvalid,
    PlangateError,
    PlanHashMismatch,
    PlanInvalid,
    PlanNotFrozen,
    error_for,
)
from controller.execution import logbook
from controller.execution.journal import ActionRecord, Journal, journal_path, replay
from controller.execution.secrets import Redactor, SecretStore
from controller.execution.tools import CallContext, Catalog, Tool, ToolError
from controller.execution.tools.process import Spawned, stop_orphan
from controller.plan import guards, plans, profile, refs, yamlio
from controller.plan.hashing import idempotency_key

if TYPE_CHECKING:
    from controller.plan.schema import Action, Output
    from controller.settings import Config

CRASH_ENV = "PLANGATE_TEST_CRASH_AT"
#: Longest single pause of the retry backoff, and how often a pause checks abort/stop.
BACKOFF_MAX = 60.0
_POLL = 0.05
#: Checkpoints take at most about 1/this of a run's time.
CHECKPOINT_SHARE = 10
#: Output values longer than this (as JSON) are shown cut in PLAN.yml; the log has them whole.
STATE_VALUE_CHARS = 200
#: A deeper tool result is refused: recording and redacting it would overflow the stack.
MAX_RESULT_DEPTH = 100


@dataclass
class RunOutcome:
    """How a run ended; the controller turns it into ``plan.status`` and a commit."""

    status: str  # "completed" | "failed" | "awaiting_approval" | "aborted" | "stopped"
    error: PlangateError | None = None
    action: int | None = None


def never() -> bool:
    return False


class Engine:
    """Runs plans for one controller config; share it between threads freely."""

    def __init__(
        self,
        config: Config,
        *,
        state_dir: Path | None = None,
        backoff_base: float = 1.0,
        backoff_max: float = BACKOFF_MAX,
    ) -> None:
        self.config = config
        self.state_dir = state_dir if state_dir is not None else config.state_path()
        self.catalog = Catalog(config)
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.crash_at = os.environ.get(CRASH_ENV, "")

    def run(
        self,
        plan_file: Path,
        *,
        plan_id: str,
        approval: dict[str, Any],
        gate_approved: int | None = None,
        resume: bool = False,
        abort_requested: Callable[[], bool] = never,
        stop_requested: Callable[[], bool] = never,
    ) -> RunOutcome:
        """Run (or continue) the plan in ``plan_file``; see the module docstring."""
        plan, frozen = self._load(plan_file, approval.get("plan_hash"))
        path = journal_path(self.state_dir, plan_id, frozen)
        with Journal(path) as journal:
            run = PlanRun(self, plan, frozen, plan_id, approval, journal)
            return run.execute(
                gate_approved=gate_approved,
                resume=resume,
                abort_requested=abort_requested,
                stop_requested=stop_requested,
            )

    def _load(self, plan_file: Path, approved: Any = None) -> tuple[plans.LoadedPlan, str]:
        plan = plans.load_plan(plan_file, self.config)
        if not plan.valid:
            raise PlanInvalid(plan.problems, str(plan_file))
        frozen = plan.frozen_hash
        if frozen is None:
            raise PlanNotFrozen(f"{plan_file}: the plan has no frozen.hash; it cannot run")
        if plan.hash != frozen:
            raise PlanHashMismatch(
                f"{plan_file}: the plan's hash {plan.hash} differs from frozen.hash {frozen}; "
                "it changed after it was frozen and will not run"
            )
        if approved is not None and approved != frozen:
            raise PlanHashMismatch(
                f"{plan_file}: the plan hashes to {frozen} but the approval is for {approved}; "
                "only the approved plan runs"
            )
        return plan, frozen

    def crash_point(self, point: str, action_id: int) -> None:
        """Test-only: die here, as a power cut would (see module docstring)."""
        if self.crash_at and self.crash_at == f"{point}:{action_id}":
            os.kill(os.getpid(), signal.SIGKILL)


class PlanRun:
    """The mutable state of one run of one plan; never shared between threads."""

    def __init__(
        self,
        engine: Engine,
        plan: plans.LoadedPlan,
        frozen: str,
        plan_id: str,
        approval: dict[str, Any],
        journal: Journal,
    ) -> None:
        assert plan.model is not None
        self.engine = engine
        self.config = engine.config
        self.plan = plan
        self.model = plan.model
        self.hash = frozen
        self.plan_id = plan_id
        self.approval = approval
        self.journal = journal
        self.state = replay(journal.records)
        self.secrets = SecretStore(self.config.secrets)
        self.redactor: Redactor = self.secrets.redactor
        self.outputs: dict[int, dict[str, Any]] = {}
        #: The guard checks of each action's current attempt (journaled with its start).
        self._guard_checks: dict[int, list[dict[str, Any]]] = {}
        self.results: dict[int, Any] = {}
        self.ctx = refs.Context(
            inputs=self.model.inputs,
            plan={"name": self.model.plan.name, "task": self.model.plan.task, "hash": frozen},
            approval=approval,
            outputs=self.outputs,
            results=self.results,
            secret=self.secrets.get,
        )
        self.log = structlog.get_logger("plangate").bind(plan=plan_id, hash=frozen)
        self.tool_env = self._tool_env()
        self.checkpoints = Checkpoints(self)
        #: Action id -> pid of a tool process a crashed run left running, stopped on recovery.
        self.orphans_stopped: dict[int, int] = {}
        #: The caps in force (SPEC §11): the smaller of the plan's and the config's limits.
        self.caps = profile.caps_for(plan.data, self.config.limits)
        self.started = time.monotonic()

    # --- the run ------------------------------------------------------------------------

    def execute(
        self,
        *,
        gate_approved: int | None,
        resume: bool,
        abort_requested: Callable[[], bool],
        stop_requested: Callable[[], bool],
    ) -> RunOutcome:
        self.abort_requested = abort_requested
        self.stop_requested = stop_requested
        self.started = time.monotonic()  # max_runtime counts from this run's start or resume
        if self._already_completed():
            return RunOutcome("completed")
        self.record({"t": "run", "resume": resume, "pid": os.getpid()})
        self._stop_orphans()
        self._restore_context()
        self.log.info("plan_run_started", resume=resume, gate_approved=gate_approved)
        self.checkpoints.write("executing")
        for action in self.model.actions:
            outcome = self._step(action, gate_approved, resume)
            if outcome is not None:
                return self._finish(outcome)
            self.checkpoints.maybe_write()
        return self._finish(RunOutcome("completed"))

    def _already_completed(self) -> bool:
        """A completed plan run again does nothing and writes nothing."""
        if self.state.last_outcome != "completed":
            return False
        return all(self.state.action(a.id).done for a in self.model.actions)

    def _stop_orphans(self) -> None:
        """Stop any tool process a crashed run left running, before anything else happens."""
        for action_id, rec in self.state.actions.items():
            spawned = _spawned(rec.spawn) if rec.open_start else None
            if spawned is not None and stop_orphan(spawned):
                self.orphans_stopped[action_id] = spawned.pid
                self.log.warning(
                    "orphan_killed", action=action_id, pid=spawned.pid, pgid=spawned.pgid
                )

    def _restore_context(self) -> None:
        for action_id, rec in self.state.actions.items():
            if rec.done and rec.end is not None and rec.end.get("status") == "succeeded":
                self.outputs[action_id] = rec.end.get("outputs") or {}
                self.results[action_id] = rec.end.get("result")

    def _step(self, action: Action, gate_approved: int | None, resume: bool) -> RunOutcome | None:
        rec = self.state.actions.get(action.id)
        if rec is not None and rec.done:
            return None
        if self.abort_requested():
            return RunOutcome("aborted", Aborted(f"aborted before action {action.id}"), action.id)
        if self.stop_requested():
            return RunOutcome("stopped", None, action.id)
        if action.requires_approval and action.id not in self.state.gates:
            if gate_approved != action.id:
                return RunOutcome("awaiting_approval", None, action.id)
            self.record({"t": "gate", "id": action.id})
        if rec is not None and rec.open_start:
            return self._after_crash(action, rec)
        if rec is not None and _finally_failed(rec) and not resume:
            return RunOutcome("failed", _error_of(rec), action.id)
        return self._run_action(action)

    def _after_crash(self, action: Action, rec: ActionRecord) -> RunOutcome | None:
        """An action started but never ended: re-run it only if its tool is idempotent."""
        tool = self.engine.catalog.get(action.tool)
        if tool.spec.idempotent:
            self.log.warning("action_rerun_after_crash", action=action.id, tool=action.tool)
            return self._run_action(action)
        started = (rec.last_start or {}).get("at", "?")
        orphan = self.orphans_stopped.get(action.id)
        stopped = f"; its tool process {orphan} was still running and was stopped" if orphan else ""
        error = ActionInDoubt(
            f"action {action.id} ({action.tool}) started at {started} but its end was never "
            f"recorded (the controller stopped mid-action){stopped}; it may or may not have "
            "taken effect"
        )
        self._record_end(action, rec.attempts, "in_doubt", error=error)
        return RunOutcome("failed", error, action.id)

    def _run_action(self, action: Action) -> RunOutcome | None:
        rec = self.state.action(action.id)
        try:
            tool = self.engine.catalog.get(action.tool)
            params = refs.resolve(action.params, self.ctx)
            _check_params(tool, params)
            self._guard_checks[action.id] = guards.check(action, params)
        except PlangateError as error:
            return self._settle_failure(action, rec.attempts, error)
        tries = 1 + action.retries if action.on_failure == "retry" else 1
        while True:
            outcome, again = self._attempt(action, tool, params, rec, tries)
            if not again:
                return outcome
            interrupted = self._backoff(rec.round_attempts, action.id)
            if interrupted is not None:
                return interrupted

    def _attempt(
        self, action: Action, tool: Tool, params: dict[str, Any], rec: ActionRecord, tries: int
    ) -> tuple[RunOutcome | None, bool]:
        """One try of an action: (outcome, whether to try again)."""
        attempt = rec.attempts + 1
        capped = self._cap_reached(action)
        if capped is not None:
            return RunOutcome("failed", capped, action.id), False
        self.engine.crash_point("before-start", action.id)
        self._record_start(action, attempt, params)
        self.engine.crash_point("after-start", action.id)
        started = time.monotonic()
        result, outputs, error = self._call(action, tool, params, attempt)
        duration = _ms(started)
        if error is not None and error.code == "E_TIMEOUT" and self._runtime_left() == 0:
            error = self._runtime_exceeded(action)
        self.engine.crash_point("after-tool", action.id)
        if error is None:
            self._record_end(action, attempt, "succeeded", result, outputs, duration_ms=duration)
            self.outputs[action.id] = outputs
            self.results[action.id] = result
            self.engine.crash_point("after-end", action.id)
            return None, False
        retry = action.on_failure == "retry" and not error.permanent and rec.round_attempts < tries
        if retry:
            self._record_end(
                action, attempt, "failed", result, error=error, retry=True, duration_ms=duration
            )
            return None, True
        return self._settle_failure(action, attempt, error, result, duration), False

    def _call(
        self, action: Action, tool: Tool, params: dict[str, Any], attempt: int
    ) -> tuple[Any, dict[str, Any], PlangateError | None]:
        """Call the tool and take its outputs: (result, outputs, error)."""
        ctx = CallContext(
            idempotency_key=idempotency_key(self.hash, action.id),
            timeout=self._timeout(action.timeout or tool.spec.timeout),
            max_result_bytes=self.config.limits.max_result_bytes,
            env=self.tool_env,
            plan_id=self.plan_id,
            action_id=action.id,
            on_spawn=functools.partial(self._record_spawn, action.id, attempt),
        )
        try:
            result = tool.call(params, ctx)
        except PlangateError as error:
            return getattr(error, "result", None), {}, error
        except Exception as exc:  # a bug in a tool kind must not kill the daemon
            self.log.exception("tool_crashed", action=action.id, tool=action.tool)
            return None, {}, ToolError(f"{action.tool}: internal error: {exc!r}", permanent=True)
        if _deeper_than(result, MAX_RESULT_DEPTH):
            message = f"{action.tool}: its result is nested deeper than {MAX_RESULT_DEPTH} levels"
            return None, {}, ToolError(message, permanent=True)
        try:
            return result, extract_outputs(action.outputs, result), None
        except PlangateError as error:
            return result, {}, error

    # --- caps (SPEC §11) ---------------------------------------------------------------

    def _cap_reached(self, action: Action) -> LimitExceeded | None:
        """Stop before a call the caps do not allow: tool calls (every attempt of every
        action, retries included, across resumes) and this run's wall time."""
        calls = sum(rec.attempts for rec in self.state.actions.values())
        if calls >= self.caps.max_tool_calls:
            return LimitExceeded(
                f"action {action.id} would be tool call {calls + 1}, over the cap of "
                f"{self.caps.max_tool_calls} (limits.max_tool_calls, retries included)"
            )
        if self._runtime_left() == 0:
            return self._runtime_exceeded(action)
        return None

    def _runtime_left(self) -> float | None:
        if self.caps.max_runtime is None:
            return None
        return max(0.0, self.caps.max_runtime - (time.monotonic() - self.started))

    def _runtime_exceeded(self, action: Action) -> LimitExceeded:
        ran = time.monotonic() - self.started
        return LimitExceeded(
            f"the run has taken {ran:.1f} s at action {action.id}, over the cap of "
            f"{self.caps.max_runtime:g} s (limits.max_runtime)"
        )

    def _timeout(self, seconds: float) -> float:
        """A tool's timeout, shortened to the run time the cap leaves."""
        left = self._runtime_left()
        return seconds if left is None else max(0.001, min(seconds, left))

    def _settle_failure(
        self,
        action: Action,
        attempt: int,
        error: PlangateError,
        result: Any = None,
        duration_ms: int | None = None,
    ) -> RunOutcome | None:
        """The action has failed for good: skip it or end the plan, per ``on_failure``."""
        status = "skipped" if action.on_failure == "skip" else "failed"
        self._record_end(action, attempt, status, result, error=error, duration_ms=duration_ms)
        if status == "skipped":
            return None
        return RunOutcome("failed", error, action.id)

    def _backoff(self, attempts: int, action_id: int) -> RunOutcome | None:
        """Wait before the next try; an abort or stop cuts the wait short."""
        delay = min(self.engine.backoff_base * 2 ** (attempts - 1), self.engine.backoff_max)
        deadline = time.monotonic() + delay
        while True:
            if self.abort_requested():
                return RunOutcome(
                    "aborted", Aborted(f"aborted while retrying action {action_id}"), action_id
                )
            if self.stop_requested():
                return RunOutcome("stopped", None, action_id)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            time.sleep(min(left, _POLL))

    def _finish(self, outcome: RunOutcome) -> RunOutcome:
        if outcome.error is not None:
            outcome.error = self._redacted_error(outcome.error)
        self.record({"t": "outcome", "status": outcome.status, "action": outcome.action})
        self.checkpoints.write(outcome.status, final=outcome.status in TERMINAL)
        self.log.info(
            "plan_run_ended",
            outcome=outcome.status,
            action=outcome.action,
            code=outcome.error.code if outcome.error else None,
            error=outcome.error.message if outcome.error else None,
        )
        return outcome

    # --- journal ------------------------------------------------------------------------

    def record(self, record: dict[str, Any]) -> None:
        record = {"t": record["t"], "at": plans.now_utc(), **record}
        self.journal.append(record, sync=record["t"] not in _UNSYNCED)
        self.state.apply(record)

    def _record_start(self, action: Action, attempt: int, params: dict[str, Any]) -> None:
        key = idempotency_key(self.hash, action.id)
        safe = self.redactor.data(params)
        record = {"t": "start", "id": action.id, "attempt": attempt, "key": key, "params": safe}
        if self._guard_checks.get(action.id):
            record["guards"] = self._guard_checks[action.id]
        self.record(record)
        self.log.debug("action_started", action=action.id, tool=action.tool, attempt=attempt)

    def _record_spawn(self, action_id: int, attempt: int, spawned: Spawned) -> None:
        self.record(
            {
                "t": "spawn",
                "id": action_id,
                "attempt": attempt,
                "pid": spawned.pid,
                "pgid": spawned.pgid,
                "start_ticks": spawned.start_ticks,
                "boot_id": spawned.boot_id,
            }
        )

    def _record_end(
        self,
        action: Action,
        attempt: int,
        status: str,
        result: Any = None,
        outputs: dict[str, Any] | None = None,
        *,
        error: PlangateError | None = None,
        retry: bool = False,
        duration_ms: int | None = None,
    ) -> None:
        err = None if error is None else {"code": error.code, "message": error.message}
        record = {
            "t": "end",
            "id": action.id,
            "attempt": attempt,
            "status": status,
            "retry": retry,
            "duration_ms": duration_ms,
            "result": self.redactor.data(result),
            "outputs": self.redactor.data(outputs or {}),
            "error": self.redactor.data(err),
        }
        if isinstance(error, GuardFailed):
            record["guards"] = self.redactor.data(error.checks)
        self.record(record)
        self.log.info(
            "action_ended",
            action=action.id,
            tool=action.tool,
            attempt=attempt,
            status=status,
            retry=retry,
            duration_ms=duration_ms,
            code=err["code"] if err else None,
            error=record["error"]["message"] if err else None,
        )

    # --- helpers ------------------------------------------------------------------------

    def _tool_env(self) -> dict[str, str]:
        """The controller's environment minus secrets: tools get secrets only as params."""
        hidden = set(self.secrets.env_names(os.environ)) | {self.config.webhook.secret_env}
        env = {k: v for k, v in os.environ.items() if k not in hidden and k != CRASH_ENV}
        env["PLANGATE_PLAN"] = self.plan_id
        return env

    def _redacted_error(self, error: PlangateError) -> PlangateError:
        message = self.redactor.text(error.message)
        if message == error.message:
            return error
        return error_for(error.code, message, error.path)


TERMINAL = ("completed", "failed", "aborted")
#: Records written without fdatasync. A run or gate record only matters together with the
#: start record that follows it (whose sync makes both durable); a spawn record only has to
#: survive the controller's death, which keeps the page cache (a power loss kills the tool).
_UNSYNCED = ("run", "gate", "spawn")


def _finally_failed(rec: ActionRecord) -> bool:
    end = rec.end
    return end is not None and not end.get("retry") and end.get("status") in ("failed", "in_doubt")


def _spawned(record: dict[str, Any] | None) -> Spawned | None:
    """The journaled child process of an open start, if one was recorded."""
    if record is None:
        return None
    pid, pgid, ticks, boot = (record.get(k) for k in ("pid", "pgid", "start_ticks", "boot_id"))
    if not isinstance(pid, int) or not isinstance(pgid, int):
        return None
    return Spawned(
        pid,
        pgid,
        ticks if isinstance(ticks, int) else None,
        boot if isinstance(boot, str) else None,
    )


def _error_of(rec: ActionRecord) -> PlangateError:
    err = (rec.end or {}).get("error") or {}
    return error_for(str(err.get("code", "E_TOOL_FAILED")), str(err.get("message", "failed")))


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether JSON data nests lists/mappings more than ``limit`` levels (no recursion)."""
    level: list[Any] = [value]
    for _ in range(limit):
        level = [
            item
            for node in level
            if isinstance(node, dict | list)
            for item in (node.values() if isinstance(node, dict) else node)
        ]
        if not level:
            return False
    return any(isinstance(node, dict | list) for node in level)


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _check_params(tool: Tool, params: dict[str, Any]) -> None:
    """``params_schema`` again, on the resolved values (E_PARAMS_INVALID)."""
    schema = tool.spec.params_schema
    if schema is None:
        return
    errors = list(plans.params_errors(params, schema))
    if errors:
        where, message = errors[0]
        at = refs.format_path(("params", *where))
        raise ParamsInvalid(f"{message} (at {at}; params_schema of tool {tool.name!r})")


@functools.lru_cache(maxsize=1024)
def _query(path: str) -> Any:
    import jsonpath_rfc9535

    return jsonpath_rfc9535.compile(path)


def extract_outputs(outputs: list[Output], result: Any) -> dict[str, Any]:
    """Each declared output from the result: singular query -> value, otherwise a list."""
    captured: dict[str, Any] = {}
    for output in outputs:
        query = _query(output.path)
        values = query.find(result).values()
        if values:
            captured[output.name] = values[0] if query.singular_query() else list(values)
        elif not output.optional:
            raise OutputMissing(
                f"output {output.name!r}: {output.path} matched nothing in the result"
            )
    return captured


# --- checkpoints: PLAN.yml execution block and EXECUTION_LOG.md --------------------------


class Checkpoints:
    """Brings PLAN.yml's ``execution:`` and EXECUTION_LOG.md up to date, at most so often."""

    def __init__(self, run: PlanRun) -> None:
        self.run = run
        self.interval = run.config.execution.checkpoint_interval
        self.last = 0.0
        self.cost = 0.0
        self.controller = f"{run.config.identity.name}@{socket.gethostname()}"
        self.plan_file = run.plan.path
        self.log_file = run.plan.path.with_name("EXECUTION_LOG.md")
        # Sections of finished actions never change: render each once.
        self._done_sections: dict[int, str] = {}

    def maybe_write(self) -> None:
        # Never spend more than ~1/CHECKPOINT_SHARE of the run rewriting state files, however
        # large the plan: the gap grows with the cost of the last write.
        gap = max(self.interval, self.cost * CHECKPOINT_SHARE)
        if time.monotonic() - self.last >= gap:
            self.write("executing")

    def write(self, status: str, *, final: bool = False) -> None:
        started = time.monotonic()
        finished = plans.now_utc() if final else None
        try:
            self._write_plan(self.execution_block(status, finished))
            fsutil.write_atomic(self.log_file, self.render_log(status, finished))
        except (PlangateError, OSError) as exc:
            # The journal is the record of truth; a state file we cannot write is reported.
            self.run.log.error("checkpoint_failed", error=str(exc))
        self.last = time.monotonic()
        self.cost = self.last - started

    def execution_block(self, status: str, finished: str | None) -> dict[str, Any]:
        return {
            "status": status,
            "controller": self.controller,
            "started_at": self.run.state.first_run_at,
            "finished_at": finished,
            "actions": [self._action_state(a) for a in self.run.model.actions],
        }

    def _action_state(self, action: Action) -> dict[str, Any]:
        key = idempotency_key(self.run.hash, action.id)
        rec = self.run.state.actions.get(action.id)
        entry: dict[str, Any] = {"id": action.id, "key": key, "status": "pending"}
        if rec is None:
            return entry
        entry.update(status=rec.status, attempts=rec.attempts)
        if rec.last_start:
            entry["started_at"] = rec.last_start.get("at")
        end = rec.end if not rec.open_start else None
        if end is not None:
            entry["duration_ms"] = end.get("duration_ms")
            entry["outputs"] = {k: _shown(v) for k, v in (end.get("outputs") or {}).items()}
            if end.get("error"):
                entry["error"] = end["error"]
        return entry

    def _write_plan(self, block: dict[str, Any]) -> None:
        text = self.plan_file.read_text(encoding="utf-8")
        loaded = self.run.plan
        same = text == loaded.text and loaded.doc is not None
        doc = loaded.doc if same and loaded.doc else yamlio.read_yaml(text, str(self.plan_file))
        fsutil.write_atomic(self.plan_file, yamlio.set_block(doc, "execution", block))

    def render_log(self, status: str, finished: str | None) -> str:
        approval = self.run.approval
        header = logbook.LogHeader(
            name=self.run.model.plan.name,
            plan_id=self.run.plan_id,
            plan_hash=self.run.hash,
            approved_by=str(approval.get("by") or ""),
            approval_commit=str(approval.get("commit") or ""),
            started_at=self.run.state.first_run_at or "",
            status=status,
            finished_at=finished,
        )
        return logbook.render(header, [self._section(a) for a in self.run.model.actions])

    def _section(self, action: Action) -> str:
        rec = self.run.state.actions.get(action.id)
        if action.id in self._done_sections:
            return self._done_sections[action.id]
        view = logbook.ActionView()
        if rec is not None:
            end = None if rec.open_start else rec.end
            view = logbook.ActionView(rec.status, rec.last_start, end, rec.attempts)
        text = logbook.render_action(action, view, self.run.config.limits.max_result_bytes)
        if rec is not None and rec.done:
            self._done_sections[action.id] = text
        return text


def _shown(value: Any) -> Any:
    """An output value for PLAN.yml: whole when short, else cut (the log has it whole)."""
    import json

    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= STATE_VALUE_CHARS:
        return value
    return f"{text[:STATE_VALUE_CHARS]}… (cut; {len(text)} chars, see EXECUTION_LOG.md)"
