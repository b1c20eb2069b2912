"""Running one action (or fallback step) of a plan run: tries, checks, retries, on_failure.

For each try: resolve params, then everything that must hold *before the tool runs*
(:meth:`StepRunner.before_tool`: the ``params_schema`` on resolved values, then the
preconditions; guards belong there too), journal the start (fsynced), call the tool, take its
outputs, run ``verify``, journal the end (fsynced). A failure then follows ``on_failure``:
``retry`` (waits of ``delay × backoff^n`` capped at ``max_delay``), ``skip``, ``fallback``
(the fallback steps run in order; if they all end well the action counts as skipped and the
plan goes on), ``ask`` (the plan pauses ``awaiting_approval`` at the action) or ``stop``.

The :class:`StepRunner` is called from the scheduler's worker threads; everything it shares
with other steps goes through ``run.record`` (one lock) or per-action dict entries.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from controller.display import shorten
from controller.errors import (
    Aborted,
    ActionInDoubt,
    GuardFailed,
    PlangateError,
    error_for,
    redacted_around,
)
from controller.execution import checks
from controller.execution.caps import CapBudget, CapReached
from controller.execution.journal import MESSAGE_CHARS
from controller.execution.results import check_params, extract_outputs, take_result
from controller.execution.tools import CallContext, Tool, ToolError
from controller.plan import guards, refs
from controller.plan.hashing import idempotency_key

if TYPE_CHECKING:
    from collections.abc import Callable

    import structlog

    from controller.execution.journal import ActionKey, ActionRecord, Replay
    from controller.execution.secrets import Redactor
    from controller.execution.tools import Catalog
    from controller.execution.tools.process import Spawned
    from controller.plan.schema import Action, FallbackStep, Retry
    from controller.settings import Config

_POLL = 0.05


@dataclass
class RunOutcome:
    """How a run ended; the controller turns it into ``plan.status`` and a commit."""

    status: str  # "completed" | "failed" | "awaiting_approval" | "aborted" | "stopped"
    error: PlangateError | None = None
    action: ActionKey | None = None
    #: The ``execution:`` block and EXECUTION_LOG.md text this run produced, from the engine's
    #: own state: what the controller commits (never the files, which others can rewrite).
    execution: dict[str, Any] | None = None
    log: str | None = None


@dataclass
class Scope:
    """The plan a step belongs to (the run's, or a nested plan's): what its references
    resolve against, and the caps its calls count toward."""

    ctx: refs.Context
    outputs: dict[int, dict[str, Any]]
    results: dict[int, Any]
    budget: CapBudget


@dataclass(frozen=True)
class Step:
    """One unit the engine runs: an action, or a fallback step (key ``"<action>.<n>"``)."""

    key: ActionKey
    spec: Action | FallbackStep
    on_failure: str
    scope: Scope
    #: The id references use inside the scope (a nested plan's own id); default: ``key``.
    local: int | None = None

    @property
    def tool(self) -> str:
        """The tool's name (a nested plan's action: ``plan <path>``, for logs)."""
        if self.spec.tool is not None:
            return self.spec.tool
        plan = getattr(self.spec, "plan", None)
        return f"plan {plan.path}" if plan is not None else ""


class Run(Protocol):
    """What a step needs of its plan run (:class:`controller.execution.executor.PlanRun`)."""

    config: Config
    hash: str
    plan_id: str
    state: Replay
    redactor: Redactor
    tool_env: dict[str, str]
    resume: bool
    log: structlog.stdlib.BoundLogger
    orphans_stopped: dict[ActionKey, int]
    catalog: Catalog
    backoff_base: float
    backoff_max: float

    def record(self, record: dict[str, Any]) -> None: ...
    def crash_point(self, point: str, key: ActionKey) -> None: ...
    def interrupted(self, key: ActionKey, doing: str) -> RunOutcome | None: ...
    def calling(self) -> None: ...


class StepRunner:
    """Runs steps of one plan run; safe to call from several threads for different steps."""

    def __init__(self, run: Run) -> None:
        self.run = run
        #: The guard checks of each step's current try (journaled with its start).
        self._guard_checks: dict[ActionKey, list[dict[str, Any]]] = {}

    # --- entry point --------------------------------------------------------------------

    def run_step(self, step: Step) -> RunOutcome | None:
        """Run (or finish) the step; None when the plan may go on past it."""
        rec = self.run.state.action(step.key)
        if rec.open_start:
            return self._after_crash(step, rec)
        if rec.in_fallback:
            return self._run_fallback(step, _error_of(rec))
        return self._run_tries(step)

    def _after_crash(self, step: Step, rec: ActionRecord) -> RunOutcome | None:
        """A try started but never ended: finish its verify, re-run it if idempotent, or
        mark it in doubt."""
        attempt = rec.attempts
        if rec.called is not None:
            self.run.log.warning("verify_resumed_after_crash", action=step.key, tool=step.tool)
            outputs, result = journaled(self.run.redactor, rec.called)
            outcome = self._verified(step, attempt, result, outputs)
            if outcome is None or outcome.status != "retry" or outcome.error is None:
                return outcome
            again = self._failed(step, rec, self._tries(step), attempt, outcome.error, result)
            return again[0] if not again[1] else self._run_tries(step, backoff_first=True)
        if self._idempotent(step):
            self.run.log.warning("action_rerun_after_crash", action=step.key, tool=step.tool)
            return self._run_tries(step)
        error = stopped_mid_action(step.key, step.tool, rec, self.run.orphans_stopped)
        self.record_end(step, attempt, "in_doubt", error=error)
        return RunOutcome("failed", error, step.key)

    def _idempotent(self, step: Step) -> bool:
        spec = self.run.catalog.get(step.tool).spec
        return spec.idempotent and step.spec.idempotent is not False

    # --- tries --------------------------------------------------------------------------

    def _policy(self, step: Step) -> Retry:
        return step.spec.retry_policy(self.run.backoff_base, self.run.backoff_max)

    def _tries(self, step: Step) -> int:
        return 1 + self._policy(step).attempts if step.on_failure == "retry" else 1

    def _run_tries(self, step: Step, *, backoff_first: bool = False) -> RunOutcome | None:
        rec = self.run.state.action(step.key)
        policy, tries = self._policy(step), self._tries(step)
        again = backoff_first
        while True:
            if again:
                interrupted = self._backoff(policy, rec.round_attempts, step)
                if interrupted is not None:
                    return interrupted
            outcome, again = self._attempt(step, rec, tries)
            if not again:
                return outcome

    def _attempt(self, step: Step, rec: ActionRecord, tries: int) -> tuple[RunOutcome | None, bool]:
        """One try: (outcome, whether to try again)."""
        attempt = rec.attempts + 1
        # An abort (or a hold, or a stop) is honoured before every call a step makes: its
        # checks, its tool, each fallback step, each nested action (all come through here),
        # not only between the plan's own actions: a check tool may itself be what withdrew it.
        stop = self.run.interrupted(step.key, "before")
        if stop is not None:
            return stop, False
        try:
            tool = self.run.catalog.get(step.tool)
            params = refs.resolve(step.spec.params, step.scope.ctx)
            self.before_tool(step, tool, params, attempt)
        except PlangateError as refused:
            stop = self.run.interrupted(step.key, "checking")
            if stop is not None:
                return stop, False
            return self._failed(step, rec, tries, attempt, refused, no_call=True)
        stop = self.run.interrupted(step.key, "checking")
        if stop is not None:
            return stop, False
        budget = step.scope.budget
        capped = budget.take_call(step.key)
        if capped is not None:
            # a cap ends the action and the plan (``skip`` never passes it); the record says
            # so, closing the try a crash left open when the cap refused its re-run
            crashed = rec.open_start
            self.record_end(
                step, rec.attempts if crashed else attempt, "failed", error=capped,
                no_call=not crashed,
            )  # fmt: skip
            return RunOutcome("failed", capped, step.key), False
        try:
            self.run.crash_point("before-start", step.key)
            self.record_start(step, attempt, params)
        finally:
            budget.call_journaled()  # the journal counts the call now (or it is not made)
        self.run.crash_point("after-start", step.key)
        started = time.monotonic()
        result, outputs, failure = self._call(step, tool, params, attempt)
        duration = _ms(started)
        if failure is not None and failure.code == "E_TIMEOUT" and budget.runtime_left() == 0:
            failure = budget.runtime_exceeded(step.key)
        self.run.crash_point("after-tool", step.key)
        if failure is None:
            if step.spec.verify is not None and step.spec.verify.tool is not None:
                self.run.record(
                    {
                        "t": "called",
                        "id": step.key,
                        "attempt": attempt,
                        **self._safe(result, outputs),
                    }
                )
            outcome = self._verified(step, attempt, result, outputs, duration)
            if outcome is None or outcome.status != "retry":
                return outcome, False
            failure = outcome.error
            assert failure is not None
        return self._failed(step, rec, tries, attempt, failure, result, duration)

    def before_tool(self, step: Step, tool: Tool, params: dict[str, Any], attempt: int) -> None:
        """Everything that must hold before the tool runs; raise to fail this try.

        The one place for such checks: ``params_schema`` on the resolved values
        (E_PARAMS_INVALID), then the step's preconditions (E_PRECONDITION_FAILED).
        """
        check_params(tool, params)
        # over the values as recorded (round 43): a guard's outcome (recorded, and which
        # action runs or is skipped) must not be a test of a secret's value; one the
        # redaction changed fails closed (round 45: the tool gets the real one)
        seen = self.run.redactor.data(params)
        self._guard_checks[step.key] = guards.check(step.spec, seen, params)
        for index, pre in enumerate(step.spec.preconditions):
            who = f"action {step.key} precondition {index + 1}"
            found = checks.precondition(
                index,
                pre,
                guarded(step.scope.ctx, pre.guards, who, self.run.redactor.data),
                self.checker(step),
            )
            self.record_check(step.key, attempt, found)
            if not found.ok:
                raise found.as_error(f"action {step.key}:")

    def _verified(
        self,
        step: Step,
        attempt: int,
        result: Any,
        outputs: dict[str, Any],
        duration: int | None = None,
    ) -> RunOutcome | None:
        """Run the step's verify; end the try as succeeded, or say it must count as failed
        (a ``RunOutcome("retry", error)``), or that the run was interrupted."""
        spec = step.spec.verify
        if spec is not None:
            if spec.tool is None:
                # over the result as recorded (round 43), as outputs are read
                found = checks.verify_result(spec, self.run.redactor.view(result))
            else:
                seen: list[RunOutcome] = []

                def stopped() -> bool:
                    found = self.run.interrupted(step.key, "verifying")
                    if found is not None:
                        seen.append(found)
                    return found is not None

                polled = checks.verify_poll(
                    spec,
                    guarded(
                        step.scope.ctx,
                        spec.guards,
                        f"action {step.key} verify",
                        self.run.redactor.data,
                    ),
                    self.checker(step),
                    stopped,
                    step.scope.budget.runtime_left,
                )
                if polled is None:  # the start stays open with its `called` record
                    return seen[-1] if seen else RunOutcome("stopped", None, step.key)
                found = polled
            self.record_check(step.key, attempt, found)
            if not found.ok:
                return RunOutcome("retry", self._verify_error(step, found), step.key)
        self.record_end(step, attempt, "succeeded", result, outputs, duration_ms=duration)
        local = step.local if step.local is not None else step.key
        if isinstance(local, int):
            step.scope.outputs[local] = outputs
            step.scope.results[local] = result
        self.run.crash_point("after-end", step.key)
        return None

    def _verify_error(self, step: Step, found: checks.CheckOutcome) -> PlangateError:
        """Why the verify failed: a cap that stopped its polling (E_LIMIT_EXCEEDED, which
        ends the run whatever ``on_failure`` says), else E_VERIFY_FAILED."""
        if isinstance(found.error, CapReached):
            return found.error
        if found.capped:
            return step.scope.budget.runtime_exceeded(step.key)
        return found.as_error(f"action {step.key}:")

    def _failed(
        self,
        step: Step,
        rec: ActionRecord,
        tries: int,
        attempt: int,
        error: PlangateError,
        result: Any = None,
        duration: int | None = None,
        *,
        no_call: bool = False,
    ) -> tuple[RunOutcome | None, bool]:
        retry = step.on_failure == "retry" and not error.permanent
        if retry and rec.round_attempts + 1 < tries + (0 if no_call else 1):
            self.record_end(
                step, attempt, "failed", result, error=error, duration_ms=duration,
                retry=True, no_call=no_call,
            )  # fmt: skip
            return None, True
        return self._settle(step, attempt, error, result, duration, no_call), False

    def settle(
        self,
        step: Step,
        attempt: int,
        error: PlangateError,
        *,
        result: Any = None,
        no_call: bool = False,
    ) -> RunOutcome | None:
        """The step (a nested plan's action) failed for good: apply ``on_failure``."""
        return self._settle(step, attempt, error, result, None, no_call)

    def finish(
        self, step: Step, attempt: int, result: Any, outputs: dict[str, Any]
    ) -> RunOutcome | None:
        """The step's work is done: verify it (over ``result``), then end it."""
        outcome = self._verified(step, attempt, result, outputs)
        if outcome is not None and outcome.status == "retry" and outcome.error is not None:
            return self.settle(step, attempt, outcome.error, result=result)
        return outcome

    def _settle(
        self,
        step: Step,
        attempt: int,
        error: PlangateError,
        result: Any,
        duration: int | None,
        no_call: bool,
    ) -> RunOutcome | None:
        """The step failed for good: apply ``on_failure`` (a cap: ``stop``, whatever it says)."""
        mode = "stop" if isinstance(error, CapReached) else step.on_failure
        status = "skipped" if mode == "skip" else "failed"
        self.record_end(
            step, attempt, status, result, error=error, duration_ms=duration,
            fallback=mode == "fallback", ask=mode == "ask", no_call=no_call,
        )  # fmt: skip
        if mode == "skip":
            return None
        if mode == "fallback":
            return self._run_fallback(step, error)
        if mode == "ask":
            return RunOutcome("awaiting_approval", error, step.key)
        return RunOutcome("failed", error, step.key)

    def _run_fallback(self, step: Step, error: PlangateError) -> RunOutcome | None:
        """Run the fallback steps in order; all ended well: the action counts as skipped."""
        for spec in getattr(step.spec, "fallback", []):
            key = _fallback_key(step.key, spec.id)
            rec = self.run.state.action(key)
            if rec.done:
                continue
            if rec.finally_failed and not self.run.resume:
                return RunOutcome("failed", _error_of(rec), key)
            sub = Step(key, spec, spec.on_failure, step.scope)
            outcome = self.run_step(sub)
            if outcome is not None:
                return outcome
        attempt = self.run.state.action(step.key).attempts
        self.record_end(step, attempt, "skipped", error=error, recovered=True)
        return None

    def _backoff(self, policy: Retry, attempts: int, step: Step) -> RunOutcome | None:
        """Wait ``delay × backoff^(n-1)`` (capped, and cut to the run time the caps leave:
        the next try then meets the cap); an abort or stop cuts the wait short."""
        key = step.key
        delay = min(policy.delay * policy.backoff ** max(attempts - 1, 0), policy.max_delay)
        deadline = time.monotonic() + step.scope.budget.wait(delay)
        while True:
            interrupted = self.run.interrupted(key, "retrying")
            if interrupted is not None:
                return interrupted
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            time.sleep(min(left, _POLL))

    # --- calling tools ------------------------------------------------------------------

    def _call(
        self, step: Step, tool: Tool, params: dict[str, Any], attempt: int
    ) -> tuple[Any, dict[str, Any], PlangateError | None]:
        """Call the tool and take its outputs: (result, outputs, error)."""
        ctx = CallContext(
            idempotency_key=idempotency_key(self.run.hash, step.key),
            timeout=step.scope.budget.tool_timeout(step.spec.timeout or tool.spec.timeout),
            max_result_bytes=self.run.config.limits.max_result_bytes,
            env=self.run.tool_env,
            plan_id=self.run.plan_id,
            action_id=step.key,
            on_spawn=functools.partial(self._record_spawn, step.key, attempt),
            redact=self.run.redactor.text,
            shown=self._shown(tool, step.spec.params, step.scope.ctx),
        )
        self.run.calling()
        try:
            returned = tool.call(params, ctx)
        except PlangateError as error:
            return _left_behind(step.tool, error), {}, error
        except Exception as exc:  # a bug in a tool kind must not kill the daemon
            self.run.log.exception("tool_crashed", action=step.key, tool=step.tool)
            return None, {}, ToolError(f"{step.tool}: internal error: {exc!r}", permanent=True)
        finally:
            self.run.calling()  # and its end: what it did is looked at afresh
        try:
            result = take_result(step.tool, returned)
        except PlangateError as error:
            return None, {}, error
        try:
            limit = self.run.config.limits.max_params_bytes
            redact = self.run.redactor.view  # queries read the result as recorded (round 43)
            return result, extract_outputs(step.spec.outputs, result, limit, redact), None
        except PlangateError as error:
            return result, {}, error

    def checker(self, step: Step) -> checks.CallCheck:
        def call(name: str, params: dict[str, Any], index: int, written: dict[str, Any]) -> Any:
            tool = self.run.catalog.get(name)
            check_params(tool, params)
            # a check's call is a tool call (round 21), of every plan it is made for
            budget = step.scope.budget
            budget.count_check_call(step.key)
            ctx = CallContext(
                idempotency_key=idempotency_key(self.run.hash, f"{step.key}:check:{index}"),
                timeout=budget.tool_timeout(tool.spec.timeout),
                max_result_bytes=self.run.config.limits.max_result_bytes,
                env=self.run.tool_env,
                plan_id=self.run.plan_id,
                redact=self.run.redactor.text,
                shown=self._shown(tool, written, step.scope.ctx),
            )
            self.run.calling()
            try:
                returned = tool.call(params, ctx)
            except PlangateError as error:
                # a check tool stopped by the run's cap: the cap's error (round 55)
                if error.code == "E_TIMEOUT" and budget.runtime_left() == 0:
                    raise budget.runtime_exceeded(step.key) from error
                raise
            finally:
                self.run.calling()
            # expect reads a check's result as recorded (round 43): never a test of a secret
            return self.run.redactor.view(take_result(name, returned))

        return call

    def _shown(self, tool: Tool, written: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
        """The call's params as the record shows them (:func:`refs.recorded`: the author's
        parts as written, whatever a reference brought in redacted), for an ``exec`` tool
        only: it refuses an argv element they do not fill alike (a secret a reference
        brought in would be in the process's command line, round 128), never judging the
        author's own text (a literal equal to a secret is no oracle: rounds 64-67). None
        (other kinds, or no provenance): the tool falls back to the redactor's search."""
        if tool.spec.kind != "exec":
            return None
        try:
            shown = refs.recorded(written, ctx, self.run.redactor.data)
        except PlangateError:
            return None
        return shown if isinstance(shown, dict) else None

    # --- journal ------------------------------------------------------------------------

    def _safe(self, result: Any, outputs: dict[str, Any]) -> dict[str, Any]:
        return _kept(self.run.redactor, result, outputs)

    def record_check(self, key: ActionKey | None, attempt: int, found: checks.CheckOutcome) -> None:
        record = found.record(key, attempt)
        record["result"] = self.run.redactor.data(record["result"])
        # the expected values the author wrote as written, the rest redacted (round 65)
        redact = self.run.redactor.text
        record["failures"] = [redacted_around(f, found.quotes, redact) for f in found.failures]
        record["error"] = self.run.redactor.data(record["error"])
        self.run.record(record)

    def record_start(self, step: Step, attempt: int, params: dict[str, Any]) -> None:
        key = idempotency_key(self.run.hash, step.key)
        safe = self.run.redactor.data(params)
        record = {"t": "start", "id": step.key, "attempt": attempt, "key": key, "params": safe}
        if self._guard_checks.get(step.key):
            record["guards"] = self._guard_checks[step.key]
        self.run.record(record)
        self.run.log.debug("action_started", action=step.key, tool=step.tool, attempt=attempt)

    def _record_spawn(self, key: ActionKey, attempt: int, spawned: Spawned) -> None:
        self.run.record(
            {
                "t": "spawn",
                "id": key,
                "attempt": attempt,
                "pid": spawned.pid,
                "pgid": spawned.pgid,
                "start_ticks": spawned.start_ticks,
                "boot_id": spawned.boot_id,
                "marker": spawned.marker,
                "cgroup": spawned.cgroup,
            }
        )

    def record_end(
        self,
        step: Step,
        attempt: int,
        status: str,
        result: Any = None,
        outputs: dict[str, Any] | None = None,
        *,
        error: PlangateError | None = None,
        duration_ms: int | None = None,
        **flags: bool,
    ) -> None:
        err = None
        if error is not None:  # its own quotes as written (round 65), the rest redacted
            err = {"code": error.code, "message": error.recorded(self.run.redactor.text)}
        record = {
            "t": "end",
            "id": step.key,
            "attempt": attempt,
            "status": status,
            "retry": flags.pop("retry", False),
            "duration_ms": duration_ms,
            **(
                _kept(self.run.redactor, result, outputs or {})
                if status == "succeeded"
                else {
                    "result": self.run.redactor.data(result),
                    "outputs": self.run.redactor.data(outputs or {}),
                }
            ),
            "error": err,
            **{name: True for name, on in flags.items() if on},
        }
        if isinstance(error, GuardFailed):
            record["guards"] = self.run.redactor.data(error.checks)
        self.run.record(record)
        self.run.log.info(
            "action_ended",
            action=step.key,
            tool=step.tool,
            attempt=attempt,
            status=status,
            retry=record["retry"],
            duration_ms=duration_ms,
            code=err["code"] if err else None,
            # cut as the journal cuts it: the log is no place for a megabyte message
            error=shorten(record["error"]["message"], MESSAGE_CHARS) if err else None,
        )


def _kept(redactor: Redactor, result: Any, outputs: dict[str, Any]) -> dict[str, Any]:
    """A result and outputs as journaled: redacted, and when that changed them, the real
    ones sealed (:meth:`Redactor.seal`) for a run that goes on after a pause (round 43)."""
    safe = {"result": redactor.data(result), "outputs": redactor.data(outputs)}
    if redactor.seal_key is not None and (safe["result"] != result or safe["outputs"] != outputs):
        # with the secret values they hold, hidden to the run's end (round 126)
        held = redactor.held_in({"result": result, "outputs": outputs}, safe)
        sealed = redactor.seal({"result": result, "outputs": outputs, "held": held})
        if sealed is not None:
            safe["sealed"] = sealed
    return safe


def journaled(redactor: Redactor, record: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The outputs and result a succeeded end (or a ``called`` record) holds: the real ones
    when they were sealed and the secrets can unseal them, otherwise as recorded (redacted:
    the secrets changed since, or a journal written before round 43)."""
    if "sealed" in record:
        try:
            kept = redactor.unseal(record["sealed"])
            return kept.get("outputs") or {}, kept.get("result")
        except (ValueError, AttributeError):
            pass
    return record.get("outputs") or {}, record.get("result")


def guarded(ctx: Any, rules: Any, who: str, redact: Callable[[Any], Any]) -> checks.Resolve:
    """A check's params resolved against ``ctx``, then held to the check's own guards
    (SPEC §16): a failing guard raises E_GUARD_FAILED before the check tool is called. The
    guards test the values as recorded (``redact``: the run's redactor; round 43); a value
    the redaction changed fails its guard closed (round 45)."""

    def resolve(params: dict[str, Any]) -> dict[str, Any]:
        values: dict[str, Any] = refs.resolve(params, ctx)
        guards.check_values(rules, redact(values), who, values, params)
        return values

    return resolve


def stopped_mid_action(
    key: ActionKey, tool: str, rec: ActionRecord, orphans: dict[ActionKey, int]
) -> ActionInDoubt:
    """Why a step whose start the journal holds with no end is in doubt (SPEC §6, §7): said
    the same whether a resume reaches it, the plan turned invalid, or an abort ended the run
    before it was reached (round 119)."""
    started = (rec.last_start or {}).get("at", "?")
    orphan = orphans.get(key)
    stopped = f"; its tool process {orphan} was still running and was stopped" if orphan else ""
    return ActionInDoubt(
        f"action {key} ({tool}) started at {started} but its end was never recorded (the "
        f"controller stopped mid-action){stopped}; it may or may not have taken effect"
    )


def interrupted_outcome(
    key: ActionKey, doing: str, abort: Callable[[], bool], stop: Callable[[], bool]
) -> RunOutcome | None:
    if abort():
        return RunOutcome("aborted", Aborted(f"aborted while {doing} action {key}"), key)
    if stop():
        return RunOutcome("stopped", None, key)
    return None


def _left_behind(tool: str, error: PlangateError) -> Any:
    """The result a failing tool left with its error (an exec's exit code and output), taken
    in like any result; one outside the canonical tree is not kept and the error says so."""
    try:
        return take_result(tool, getattr(error, "result", None))
    except PlangateError as bad:
        error.message += f" ({bad.message})"
        return None


def _fallback_key(action: ActionKey, step_id: str) -> ActionKey:
    """A fallback step's key: its id, under its nested plan's action for a nested one
    (``"2/1.1"``, as the record shows it; round 54: journaled ``"1.1"``, it was not counted
    toward the nested plan's caps and could stand for the parent's own step ``1.1``)."""
    if isinstance(action, str) and "/" in action:
        return f"{action.rsplit('/', 1)[0]}/{step_id}"
    return step_id


def _error_of(rec: ActionRecord) -> PlangateError:
    err = (rec.end or {}).get("error") or {}
    message = str(err.get("message", "failed"))
    # as journaled: redacted already, the author's quotes as written (round 65)
    return error_for(str(err.get("code", "E_TOOL_FAILED")), message, quotes=(message,))


error_of = _error_of


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
