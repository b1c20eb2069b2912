"""The execution engine: runs an approved, frozen plan exactly as written (SPEC §3, §6, §7).

The controller calls :meth:`Engine.run` once it has verified an approval and committed the
start; the engine never touches git or ``plan.status``. It

1. reloads the plan and refuses it unless it is valid and its hash equals ``frozen.hash``;
2. replays the journal (:mod:`controller.execution.journal`) so finished actions are never
   run again,
   and stops a tool process that a crashed run left behind (only the very process it started:
   same pid, start time and boot) before it decides what to do with that action;
3. checks the plan's own preconditions (before any action has started);
4. runs the remaining actions over the ``needs`` graph
   (:mod:`~controller.execution.scheduler`: in id order for a plan without ``needs``, up to
   ``execution.max_parallel_actions`` at once otherwise), each by
   :mod:`~controller.execution.steps`: resolve params (single pass over the parsed tree, so
   tool output is data and can never add, remove, reorder or select actions), the checks
   before the tool runs, journal the start (fsynced), call the tool (journaling the child
   process an ``exec`` or ``python`` tool starts, unsynced), extract outputs with RFC 9535
   JSONPath, verify, journal the end (fsynced), apply ``on_failure``;
5. writes ``execution:`` into PLAN.yml and ``EXECUTION_LOG.md`` at checkpoints
   (:mod:`~controller.execution.checkpoints`).

Every secret value is redacted from what is written: journal, PLAN.yml, log, structured logs
and the error handed back. Test-only hook: ``PLANGATE_TEST_CRASH_AT=<point>:<action id>``
SIGKILLs the engine's own process at ``before-start``, ``after-start``, ``after-tool`` or
``after-end`` of that action (used by the crash-safety tests; never set it in production).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from controller.errors import (
    ActionInDoubt,
    LimitExceeded,
    PlangateError,
    PlanHashMismatch,
    PlanInvalid,
    PlanNotFrozen,
    StorageFailed,
    error_for,
)
from controller.execution import checks
from controller.execution.caps import CapBudget
from controller.execution.checkpoints import Checkpoints, GivesBack
from controller.execution.journal import (
    DONE,
    ActionKey,
    Journal,
    JournalFull,
    JournalUnwritable,
    cut_messages,
    journal_path,
    read_records,
    replay,
)
from controller.execution.nesting import NestedRun
from controller.execution.results import extract_outputs
from controller.execution.scheduler import Scheduler
from controller.execution.secrets import MASK, Redactor, SecretStore, held_values
from controller.execution.steps import (
    RunOutcome,
    Scope,
    Step,
    StepRunner,
    guarded,
    interrupted_outcome,
    journaled,
    stopped_mid_action,
)
from controller.execution.tools import Catalog, shorten
from controller.execution.tools.process import Spawned, stop_orphan
from controller.plan import plans, profile, refs, rules
from controller.plan.hashing import idempotency_key

if TYPE_CHECKING:
    from controller.plan.schema import Action
    from controller.settings import Config

__all__ = ["CRASH_ENV", "Engine", "RecordSource", "RunOutcome", "begin", "extract_outputs"]

#: The controller's own record of a continued run's ``execution:`` block, given the run's
#: start commit (from the journal's begin record): (the block, where it was read), or (None,
#: why there is none). The engine never touches git: the controller reads it.
RecordSource = Callable[[str | None], tuple[Any, str]]
#: What a committed ``execution:`` block says of a run's progress: what ran, with what, since
#: when, where it paused. Its ``status``, ``finished_at``, ``controller`` and ``error`` say
#: nothing a run goes on from (an approver's ``sed s/status: failed/status: approved/``
#: rewrites the block's ``status:`` too).
PROGRESS_KEYS = ("actions", "steps", "gate", "started_at")


def progress_of(block: Any) -> Any:
    """The progress a committed ``execution:`` block records (see :data:`PROGRESS_KEYS`)."""
    if not isinstance(block, dict):
        return block
    return {key: block.get(key) for key in PROGRESS_KEYS}


CRASH_ENV = "PLANGATE_TEST_CRASH_AT"
#: How long the checks before one call share an answer that the branch is clear of an abort
#: (:meth:`PlanRun._abort_asked`), in seconds: the few steps between an action's admission
#: and its call, never a sleep (a backoff's and a poll's look every 50 ms).
ABORT_SHARED = 0.005
#: Longest single pause of the retry backoff (older ``retries:``), in seconds.
BACKOFF_MAX = 60.0


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
        root: Path | None = None,
        gives_back: GivesBack | None = None,
        on_disk: bool = True,
    ) -> None:
        self.config = config
        #: The working tree the plan files lie in (the controller's repository): the run reads
        #: and writes them without following a link below it (fsutil.open_folder).
        self.root = root
        #: Does a run write its checkpoints into PLAN.yml and EXECUTION_LOG.md? False under
        #: the controller in a shared working tree: its commits write those files, and only
        #: as committed (round 81, ca_clean: a human's ``git commit -a`` during a run carried
        #: the run's uncommitted progress as hers); the run's record is rendered all the same
        #: (:attr:`RunOutcome.execution`, :attr:`RunOutcome.log`), for the outcome commit.
        self.on_disk = on_disk
        #: Would git give a record back from its checkout (None: always)? The run's records
        #: are then written with the ASCII forms of the controller's marks (round 80,
        #: :mod:`controller.execution.checkpoints`).
        self.gives_back = gives_back
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
        gate_approved: ActionKey | None = None,
        resume: bool = False,
        abort_requested: Callable[[], bool] = never,
        stop_requested: Callable[[], bool] = never,
        journal_expected: bool = False,
        loaded: plans.LoadedPlan | None = None,
        continued: bool = False,
        record: RecordSource | None = None,
    ) -> RunOutcome:
        """Run (or continue) the plan in ``plan_file``; see the module docstring.

        ``journal_expected``: the controller recorded this run's start in its journal
        (:func:`begin`), so an empty or missing journal means it was lost (SPEC §15).
        ``loaded``: the plan as the caller read and checked it (its hash), run as is.
        ``continued``: a gate or resume approval of a run the controller paused or failed:
        its committed ``execution:`` block is the controller's record (never an agent's
        block on a first approval, round 2), read when the journal was lost (round 45).
        ``record``: where the controller keeps that record (round 52: the block of its own
        last commit of the plan that wrote it, before the start commit the journal's begin
        record names), asked only when the journal was lost; the run goes on from it, and
        only when the file's block is that one. Without it the file's block is taken as the
        record (the caller vouches for the file)."""
        invalid: PlanInvalid | None = None
        try:
            plan, frozen = self._load(plan_file, approval.get("plan_hash"), loaded)
        except PlanInvalid as error:
            # round 84 (nestkill): a journaled run is recovered whatever the plan's validity
            found = self._journaled(plan_file, plan_id, approval.get("plan_hash"), loaded)
            if found is None:
                raise
            plan, frozen, invalid = *found, error
        path = journal_path(self.state_dir, plan_id, frozen)
        with Journal(path) as journal:
            run = PlanRun(self, plan, frozen, plan_id, approval, journal)
            run.resume = resume
            run.journal_expected = journal_expected
            run.continued = continued
            run.record_source = record
            run.abort_requested = abort_requested
            run.stop_requested = stop_requested
            if invalid is not None:
                if not any(r.get("t") in ("run", "start", "end") for r in journal.records):
                    raise invalid  # the run never began: nothing of it to recover
                return run.recover_invalid(invalid)
            return run.execute(gate_approved=gate_approved)

    def _journaled(
        self,
        plan_file: Path,
        plan_id: str,
        approved: Any,
        loaded: plans.LoadedPlan | None,
    ) -> tuple[plans.LoadedPlan, str] | None:
        """The approved plan an INVALID plan file still is, when a run of it was journaled
        (round 84, nestkill: a pass killed mid-action, then a commit made the plan invalid
        for the next pass: a pinned nested plan edited, deleted, twinned or a symlink, a
        tool dropped from the catalog). Crash recovery (:meth:`PlanRun.recover_invalid`)
        comes before, and whatever, the plan's validity decides: one rule for every reason
        it is invalid. None (the validation error stands alone) when nothing of a run of
        this version was journaled, or the file is not the approved version's bytes, or
        its actions cannot be read at all."""
        plan = loaded if loaded is not None else plans.load_plan(plan_file, self.config)
        frozen = plan.frozen_hash
        if frozen is None or plan.hash != frozen or (approved is not None and approved != frozen):
            return None
        model = plan.model if plan.model is not None else plans.schema_model(plan.data)
        if model is None:
            # round 95 (forgedtail): what only the controller writes (``plan.status``, the
            # ``execution:``/``approval:`` blocks; none of it hashed) is no part of what was
            # approved; an agent's invalid value there ("complete") must not keep the journal
            # from recovering the run: else the run fails with no record of the controller's
            model = plans.schema_model(plans.without_controller_fields(plan.data))
        if model is None or rules.plan_graph(model)[0] is None:
            return None  # its actions cannot be read: the validation error stands alone
        if not journal_path(self.state_dir, plan_id, frozen).is_file():
            return None  # the run never began (or its journal was lost): nothing to recover
        return dataclasses.replace(plan, model=model), frozen

    def _load(
        self, plan_file: Path, approved: Any = None, loaded: plans.LoadedPlan | None = None
    ) -> tuple[plans.LoadedPlan, str]:
        # ``loaded``: the caller read and checked the file already; run those very bytes
        plan = loaded if loaded is not None else plans.load_plan(plan_file, self.config)
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

    def crash_point(self, point: str, action_id: ActionKey) -> None:
        """Test-only: die here, as a power cut would (see module docstring)."""
        if self.crash_at and self.crash_at == f"{point}:{action_id}":
            os.kill(os.getpid(), signal.SIGKILL)


class PlanRun:
    """The state of one run of one plan; its steps may run on several threads at once."""

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
        self.catalog = engine.catalog
        self.backoff_base = engine.backoff_base
        self.backoff_max = engine.backoff_max
        self.plan = plan
        self.model = plan.model
        self.hash = frozen
        self.plan_id = plan_id
        self.approval = approval
        self.journal = journal
        self.state = replay(journal.records)
        self.lock = threading.Lock()
        self.resume = False
        self.journal_expected = False
        self.continued = False
        self.record_source: RecordSource | None = None
        self.abort_requested: Callable[[], bool] = never
        self.stop_requested: Callable[[], bool] = never
        #: The tool calls made so far (:meth:`calling`), and when the branch was last found
        #: clear of an abort, at which count (:meth:`_abort_asked`).
        self._call_count = itertools.count(1)
        self._calls = 0
        self._clear: tuple[int, float] | None = None
        self.secrets = SecretStore.for_config(self.config)
        self.secrets.redactor.seal_key = _seal_key_of(self.config)
        # the values the run was given before a pause stay hidden for the whole run, the
        # secrets rotated or removed since or not (round 126): every writer uses this one
        self.secrets.hold(held_values(self.secrets.redactor, journal.records))
        self.redactor: Redactor = self.secrets.redactor
        outputs: dict[int, dict[str, Any]] = {}
        results: dict[int, Any] = {}
        ctx = refs.Context(
            inputs=self.model.inputs,
            plan={"name": self.model.plan.name, "task": self.model.plan.task, "hash": frozen},
            approval=self.state.plan_approval or approval,
            outputs=outputs,
            results=results,
            secret=self.secrets.get,
            max_chars=self.config.limits.max_params_bytes,
            unknown=self._unknown,
        )
        #: The caps in force (SPEC §11): the smaller of the plan's and the config's limits;
        #: a nested plan's budget chains to this one (:mod:`~controller.execution.caps`).
        self.budget = CapBudget(
            profile.caps_for(plan.data, self.config.limits), self._tool_calls, self.lock
        )
        self.scope = Scope(ctx, outputs, results, self.budget)
        self.log = structlog.get_logger("plangate").bind(plan=plan_id, hash=frozen)
        self.tool_env = self._tool_env()
        graph, problems = rules.plan_graph(self.model)
        assert graph is not None, problems  # a valid plan has a graph
        self.graph = graph
        self.runner = StepRunner(self)
        #: Nested-plan action id -> the nested plan's model, once loaded (for the log).
        self.nested_models: dict[int, Any] = {}
        self.nested = NestedRun(self, self.runner, plan.path, self.nested_models)
        self.nested.recall(self.model.actions, _start_commits(journal.records))
        self.checkpoints = Checkpoints(
            config=self.config,
            plan=plan,
            model=self.model,
            graph=graph,
            plan_hash=frozen,
            plan_id=plan_id,
            approval=approval,
            state=self.state,
            lock=self.lock,
            log=self.log,
            nested=self.nested_models,
            root=engine.root,
            mask=self.redactor.data,
            gives_back=engine.gives_back,
            on_disk=engine.on_disk,
        )
        #: A journal write failed (round 56): no further record of a step is written.
        self.unwritten: StorageFailed | None = None
        #: Action id -> pid of a tool process a crashed run left running, stopped on recovery.
        self.orphans_stopped: dict[ActionKey, int] = {}

    # --- the run ------------------------------------------------------------------------

    def execute(self, *, gate_approved: ActionKey | None) -> RunOutcome:
        try:
            return self._execute(gate_approved)
        except StorageFailed as failed:  # a run or gate record (round 56): what is known
            return self._finish(RunOutcome("failed", failed, None))

    def _execute(self, gate_approved: ActionKey | None) -> RunOutcome:
        self.budget.started = time.monotonic()  # max_runtime: from this run's start or resume
        if self._already_completed():
            self.checkpoints.render("completed", final=True)
            return self._produced(RunOutcome("completed"))
        failed = self._failed_as_a_whole()
        if failed is not None:
            self.checkpoints.render("failed", final=True)
            return self._produced(RunOutcome("failed", failed, None))
        if self.journal_expected and not self.journal.records:
            return self._journal_lost()
        in_doubt = self._from_record()
        run: dict[str, Any] = {"t": "run", "resume": self.resume, "pid": os.getpid()}
        if self.state.plan_approval is None and not self.state.recovered:
            run["approval"] = self.approval  # the first run: its approval names the plan's
        self.record(run)
        self._stop_orphans()
        self._restore_context()
        self.log.info("plan_run_started", resume=self.resume, gate_approved=gate_approved)
        self.checkpoints.progress("executing")
        if in_doubt is not None:
            return self._finish(RunOutcome("failed", in_doubt, None))
        outcome = self._plan_preconditions()
        if outcome is None:
            actions = {a.id: a for a in self.model.actions}
            limit = self.config.execution.max_parallel_actions
            scheduler = Scheduler(self, self.runner, self.graph, actions, limit)
            outcome = scheduler.run(gate_approved)
        return self._finish(outcome or RunOutcome("completed"))

    def recover_invalid(self, invalid: PlanInvalid) -> RunOutcome:
        """Crash recovery of a journaled run whose plan is INVALID on this pass (round 84,
        nestkill: killed mid-action, then a commit edited, deleted, twinned or symlinked a
        pinned nested plan, or dropped a tool from the catalog). The journal is consulted
        first, whatever made the plan invalid, as docs/execution.md says of a crash: the tool
        process it left running (if any) is stopped; a start with no end is ended
        ``in_doubt`` (an idempotent tool's ``failed``: a resume runs it again; nothing runs
        now); an open nested action fails with its inner doubt. The outcome is ``failed``,
        its error naming both the in-doubt action(s) and the validation error, and the
        ``execution:`` block and log record what the journal holds."""
        run: dict[str, Any] = {"t": "run", "resume": self.resume, "pid": os.getpid()}
        if self.state.plan_approval is None and not self.state.recovered:
            run["approval"] = self.approval
        self.record(run)
        self._stop_orphans()
        self.log.error("plan_invalid_after_crash", error=str(invalid))
        why = f"the plan is invalid on this pass ({invalid.code}: {invalid.message})"
        opened = [k for k, rec in self.state.actions.items() if rec.open_start]
        doubts: list[ActionInDoubt] = []
        inner: dict[str, ActionInDoubt] = {}
        for key in sorted(opened, key=lambda k: (-str(k).count("/"), str(k))):
            rec = self.state.actions[key]
            parent = str(key).split("/", 1)[0]
            tool = self._tool_of(key)
            if tool is None and isinstance(key, int) and str(key) in inner:  # a nested plan
                error: PlangateError = inner[str(key)]
                status = "failed"
            elif tool is not None and self._idempotent_tool(key, tool):
                error = error_for(invalid.code, f"not run again: {why}", quotes=invalid.quoted())
                status = "failed"
            else:
                error = stopped_mid_action(
                    key, tool or "a nested plan step", rec, self.orphans_stopped
                )
                doubts.append(error)
                inner.setdefault(parent, error)
                status = "in_doubt"
            self.record(
                {
                    "t": "end",
                    "id": key,
                    "attempt": rec.attempts,
                    "status": status,
                    "retry": False,
                    "duration_ms": None,
                    "result": None,
                    "outputs": {},
                    "error": {"code": error.code, "message": error.recorded(self.redactor.text)},
                }
            )
        outcome_error: PlangateError = invalid
        if doubts:
            said = "; ".join(d.message for d in doubts[:5])
            outcome_error = ActionInDoubt(
                f"{said}; and {why}: nothing is run",
                remedy="check what the action did; make the plan valid again (restore what "
                "it pins, or the catalog's tool), then approve a resume (it runs the action "
                "in doubt again) or abort",
                quotes=invalid.quoted(),
            )
        return self._finish(RunOutcome("failed", outcome_error, None))

    def _tool_of(self, key: ActionKey) -> str | None:
        """The tool of a step of this plan's own (an action or a fallback step), if known (a
        nested plan's step is not: its plan may be what is invalid)."""
        if "/" in str(key):
            return None
        for action in self.model.actions:
            if action.id == key:
                return action.tool
            for step in action.fallback:
                if step.id == key:
                    return step.tool
        return None

    def _idempotent_tool(self, key: ActionKey, tool: str) -> bool:
        try:
            spec = self.catalog.get(tool).spec
        except PlangateError:
            return False  # not in the catalog: nothing says running it again is safe
        step = next((a for a in self.model.actions if a.id == key), None)
        return bool(spec.idempotent) and getattr(step, "idempotent", None) is not False

    def _journal_lost(self) -> RunOutcome:
        """The start was recorded but the journal is gone (deleted, emptied, a lost state
        directory): which actions started cannot be known, so none runs (SPEC §15)."""
        self.log.error("journal_lost", journal=str(self.journal.path))
        path = self.journal.path
        aside = sorted(path.parent.glob(f"{path.name}.older-than-branch-*"))
        why = (
            f"was set aside ({aside[-1].name}): the state directory is older than the branch "
            "(restored from a copy), and its journal cannot tell what the run did after the "
            "copy"
            if aside  # Starting._distrust_older_journals (round 72)
            else "is missing or empty, though the controller recorded the run's start"
        )
        error = ActionInDoubt(
            f"the journal of this run ({path}) {why}: any action may already have taken "
            "effect, so none is run",
            remedy="check which of the plan's actions took effect, then approve a resume "
            "(every action not recorded as finished runs again) or abort",
        )
        return self._finish(RunOutcome("failed", error, None))

    def _from_record(self) -> ActionInDoubt | None:
        """A run whose journal holds no run yet, of a plan whose committed ``execution:``
        block says actions of this frozen hash ran: the journal (or the whole state
        directory) was lost while the plan waited at a gate or had failed, and an approval
        started it again (round 45: action 1 ran a second time). The committed record is the
        truth for what already ran: each action it records ``succeeded`` or ``skipped`` is
        journaled as such (``recovered``; never run again), with the outputs it shows; an
        output it shows masked or cut, every result and the approval that started the plan
        are not known (a reference to one fails E_ACTION_IN_DOUBT instead of passing a
        masked value on). When the record shows anything else (an action started, failed or
        in doubt, or a record that cannot be matched to this hash), going on is not safe:
        the error returned fails the run, nothing runs (SPEC §15). Only for a ``continued``
        run: on a first approval the block is no record of the controller's (round 2: an
        agent's preseeded block)."""
        if not self.continued or self.state.recovered:
            return None
        if any(r.get("t") == "run" for r in self.journal.records):
            return None
        block, problem = self._committed_record()
        whole = self._holds_whole_run()
        if not isinstance(block, dict):
            return None if whole else self._recovered({}, None, [], problem)
        entries = block.get("actions")
        entries = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
        ran = [e for e in entries if e.get("status", "pending") != "pending"]
        steps = block.get("steps")
        counted = isinstance(steps, dict) and any(
            status != "pending" for status in dict(steps.get("by_status") or {})
        )
        if not ran and not counted and (problem is None or whole):
            return None
        if whole and problem is not None:
            return None  # the journal holds the run; a record someone changed adds nothing
        ids = {a.id for a in self.model.actions}
        done: dict[int, dict[str, Any]] = {}
        doubts = ["the record holds only a count of its steps"] if counted else []
        for entry in ran:
            key, status = entry.get("id"), entry.get("status")
            bound = key is not None and entry.get("key") == idempotency_key(self.hash, key)
            if isinstance(key, int) and key in ids and bound and status in DONE:
                done[key] = entry
            elif not (isinstance(key, str) and _parent(key) in done):
                doubts.append(f"action {key} is recorded {status}")
        return self._recovered(done, block.get("started_at"), doubts, problem)

    def _committed_record(self) -> tuple[Any, str | None]:
        """The committed ``execution:`` block a continued run whose journal was lost goes on
        from, and why going on is not safe (round 52). The block is not hashed: anyone who
        can commit can rewrite it (a step marked ``succeeded``, a recorded output, ``gate:``
        moved to a later action), so the record is the controller's own (its last commit of
        the plan that wrote the block, read by the controller: ``record_source``), and the
        run goes on from it only when the file's block is that one; otherwise what the
        record shows finished is journaled (never run again) and nothing runs."""
        data = self.plan.data
        file_block = data.get("execution") if isinstance(data, dict) else None
        if self.record_source is None:
            return file_block, None  # the engine used alone: its caller vouches for the file
        own, where = self.record_source(self._begun())
        if own is None:
            self.log.error("record_missing", journal=str(self.journal.path), reason=where)
            return None, f"the controller has no record of its own of the run ({where})"
        if progress_of(own) != progress_of(file_block):
            self.log.error("record_changed", journal=str(self.journal.path), record=where)
            return own, (
                "the plan's execution: block is not the controller's record of the run "
                f"({where}): someone changed it after the controller wrote it"
            )
        return own, None

    def _holds_whole_run(self) -> bool:
        """Does the journal hold this version's run from its first start (its first record a
        ``begin`` marked ``first``: the start of a first approval)? Then it was not lost: what
        it does not show never ran (round 68: a crash before action 1, a look-alike ``fail``,
        her resume failed "the journal of this run was lost" with the journal in place). A
        journal begun by a later start (a gate, ask or resume) was lost before it. A journal
        restored from a backup taken before actions ran is whole too, but older than the
        controller's own committed record: where that record (:meth:`_committed_record`,
        the controller's commit, unchanged) shows actions ran, it wins, and they never run
        again (:meth:`_from_record`)."""
        records = self.journal.records
        return bool(records) and records[0].get("t") == "begin" and records[0].get("first") is True

    def _begun(self) -> str | None:
        """The start commit this run's journal names (its last ``begin`` record)."""
        for record in reversed(self.journal.records):
            if record.get("t") == "begin" and isinstance(record.get("start"), str):
                return str(record["start"])
        return None

    def _recovered(
        self,
        done: dict[int, dict[str, Any]],
        started_at: Any,
        doubts: list[str],
        problem: str | None = None,
    ) -> ActionInDoubt | None:
        """Journal what the record shows finished (``recovered``, then an end marked
        ``from_record`` for each: never run again); the doubt that fails the run, if any:
        ``problem`` with the record itself, ``doubts`` what it cannot tell."""
        if not done and not doubts and problem is None:
            return None  # nothing ran before the pause (a gate before action 1): run as is
        recovered: dict[str, Any] = {"t": "recovered", "from": "execution", "actions": sorted(done)}
        if isinstance(started_at, str):
            recovered["started_at"] = started_at
        self.record(recovered)
        try:
            for key, entry in done.items():
                self.record(_recovered_end(key, entry))
        except JournalFull as full:  # a bound smaller than the record: nothing more runs
            assert full.error is not None
            doubts.append(full.error.message)
        self.log.warning("journal_recovered", journal=str(self.journal.path), done=sorted(done))
        clauses = [problem] if problem is not None else []
        if doubts:
            clauses.append(
                f"the committed record cannot tell what the run did ({'; '.join(doubts[:5])})"
            )
        if not clauses:
            return None
        return ActionInDoubt(
            f"the journal of this run was lost and {'; and '.join(clauses)}: nothing is run",
            remedy="check which of the plan's actions took effect, then approve a resume "
            "(actions not recorded as finished run again: the controller's own record of "
            "the run is what this outcome commits) or abort",
        )

    def _unknown(self, ref: refs.Ref) -> str | None:
        """Why a reference's value is not known to this run (None: it is): a value only the
        lost journal held (:meth:`_from_record`)."""
        if not self.state.recovered:
            return None
        if ref.root == "approval" and self.state.plan_approval is None:
            return (
                "the approval that started the plan was recorded in the journal, which was "
                "lost (the plan's approval block holds the latest approval only)"
            )
        if ref.root != "actions" or ref.action is None:
            return None
        rec = self.state.actions.get(ref.action)
        end = rec.end if rec is not None else None
        if end is None or not end.get("from_record"):
            return None
        lost = "in the journal, which was lost; the committed record"
        if ref.path[:1] == ("result",):
            return f"action {ref.action}'s result was {lost} holds no results"
        name = str(ref.path[1]) if len(ref.path) > 1 else ""
        unknown = end.get("unknown")
        if unknown is True or (isinstance(unknown, list) and name in unknown):
            return f"output {name!r} of action {ref.action} was {lost} shows it masked or cut"
        return None

    def _failed_as_a_whole(self) -> PlangateError | None:
        """The failure of the run as a whole (no single action's: a lost journal, a record
        that cannot be trusted, a cap) its last outcome recorded, when this run is no resume:
        it is the run's verdict until a person approves a resume, reported again without
        running anything (an outcome whose commit had to wait is asked for again: the
        journal then holds that outcome, and an E_ACTION_IN_DOUBT read as a journal to go
        on with ran the action it doubted)."""
        error = self.state.last_outcome_error
        if self.resume or self.state.last_outcome != "failed" or not isinstance(error, dict):
            return None
        message = str(error.get("message"))  # as journaled: redacted already (round 65)
        return error_for(str(error.get("code") or "E_ACTION_IN_DOUBT"), message, quotes=(message,))

    def _already_completed(self) -> bool:
        """A completed plan run again does nothing and writes nothing."""
        if self.state.last_outcome != "completed":
            return False
        return all(self.state.action(a.id).done for a in self.model.actions)

    def _plan_preconditions(self) -> RunOutcome | None:
        """The plan's preconditions, checked while no action has started yet."""
        if not self.model.preconditions or self.state.recovered:
            return None
        if any(r.starts for r in self.state.actions.values()):
            return None
        scope = self.scope
        for index, pre in enumerate(self.model.preconditions):
            step = Step(0, self.model.actions[0], "stop", scope)
            who = f"plan precondition {index + 1}"
            try:
                found = checks.precondition(
                    index,
                    pre,
                    guarded(scope.ctx, pre.guards, who, self.redactor.data),
                    self.runner.checker(step),
                )
            except PlangateError as error:  # a reference or a guard: the check cannot run
                return RunOutcome("failed", error, None)
            try:
                self.runner.record_check(None, 0, found)
            except JournalFull as full:
                assert full.error is not None
                return RunOutcome("failed", full.error, None)
            if not found.ok:
                return RunOutcome("failed", found.as_error("plan:"), None)
        return None

    def _stop_orphans(self) -> None:
        """Stop any tool process a crashed run left running, before anything else happens
        (those the pass stopped already, :func:`stop_left`, named as stopped here)."""
        with _LEFT_LOCK:
            early = _LEFT_STOPPED.pop(str(self.journal.path), {})
        for action_id, pid in early.items():
            rec = self.state.actions.get(action_id)
            if rec is not None and rec.open_start:
                self.orphans_stopped[action_id] = pid
        for action_id, rec in self.state.actions.items():
            spawned = _spawned(rec.spawn) if rec.open_start else None
            if spawned is not None and stop_orphan(spawned):
                self.orphans_stopped[action_id] = spawned.pid
                self.log.warning(
                    "orphan_killed", action=action_id, pid=spawned.pid, pgid=spawned.pgid
                )

    def _restore_context(self) -> None:
        for action_id, rec in self.state.actions.items():
            end = rec.end
            if isinstance(action_id, int) and rec.done and end and end.get("status") == "succeeded":
                outputs, result = journaled(self.redactor, end)  # the real values (round 43)
                self.scope.outputs[action_id] = outputs
                self.scope.results[action_id] = result

    # --- what the scheduler and the steps use -------------------------------------------

    def step_of(self, action: Action) -> Step:
        return Step(action.id, action, action.on_failure or self.model.on_failure, self.scope)

    def run_step(self, step: Step) -> RunOutcome | None:
        """Run one action: a tool call, or a nested plan. The journal full (its record not
        written, a small failed end in its place: :meth:`record`) fails the run."""
        try:
            if getattr(step.spec, "plan", None) is not None:
                return self.nested.run_step(step)
            return self.runner.run_step(step)
        except JournalFull as full:
            assert full.error is not None
            return RunOutcome("failed", full.error, full.key if full.key is not None else step.key)

    def _tool_calls(self) -> int:
        """The tool calls the journal holds, across resumes (SPEC §11: retries included)."""
        return self.state.tool_calls

    def interrupted(self, key: ActionKey, doing: str) -> RunOutcome | None:
        return interrupted_outcome(key, doing, self._abort_asked, self.stop_requested)

    def calling(self) -> None:
        """A tool (an action's, a check's) is called now, or its call returned: the branch
        is read again at the next check (:meth:`_abort_asked`)."""
        self._calls = next(self._call_count)

    def _abort_asked(self) -> bool:
        """``abort_requested()``, asked once per action: the checks before one call (the
        scheduler's admission, the step's ``before``, its ``checking`` after its
        preconditions) share one answer that it is clear, when no tool was called since it
        was given and it is under :data:`ABORT_SHARED` old (a backoff or a poll's sleep asks
        again). An abort is never answered from it: only a clear branch is (round 83: the
        three reads of the branch ref per action were a tenth of a millisecond of it)."""
        clear = self._clear
        now = time.monotonic()
        if clear is not None and clear[0] == self._calls and now - clear[1] < ABORT_SHARED:
            return False
        calls = self._calls
        if self.abort_requested():
            return True
        self._clear = (calls, now)
        return False

    def checkpoint(self) -> None:
        self.checkpoints.maybe_write()

    def crash_point(self, point: str, key: ActionKey) -> None:
        self.engine.crash_point(point, key)

    def record(self, record: dict[str, Any]) -> None:
        """Journal ``record`` (its messages cut: :func:`~controller.execution.journal.
        cut_messages`) and fold it into the state. A start, called, end or check record that
        would take the journal past ``limits.max_journal_bytes`` is not written: a small
        failed end of its step is (E_LIMIT_EXCEEDED), and :class:`JournalFull` is raised to
        end the run (round 38: 20 actions, or 21 tries of one, journaled 20 MB)."""
        record = cut_messages({"t": record["t"], "at": plans.now_utc(), **record})
        bounded = record["t"] in _BOUNDED
        with self.lock:
            if self.unwritten is not None and bounded:  # nothing more of a step after one
                raise self._unwritable(record, self.unwritten)
            try:
                self.journal.append(
                    record,
                    sync=record["t"] not in _UNSYNCED,
                    limit=self.config.limits.journal_bytes if bounded else None,
                )
            except JournalFull as full:
                full.error = self._journal_full(record, full)
                full.key = record.get("id")
                small = self._failed_end(record, full.error)
                if small is not None:  # the failure itself: small, written past the bound
                    self.journal.append(small)
                    self.state.apply(small)
                self.log.error("journal_full", journal=str(self.journal.path), size=full.size)
                raise
            except StorageFailed as failed:
                self.log.error(
                    "journal_unwritable", journal=str(self.journal.path), error=str(failed)
                )
                if record["t"] in ("spawn", "outcome"):  # known in memory; a rerun replays
                    self.state.apply(record)  # the step (in doubt) or the run again
                    return
                self.unwritten = failed
                if not bounded:
                    raise
                raise self._unwritable(record, failed) from None
            self.state.apply(record)

    def _unwritable(self, record: dict[str, Any], failed: StorageFailed) -> JournalUnwritable:
        """A step's record the journal could not take (round 56: a full disk cut a 60 KB
        end record short and the run vanished from the outcome commit): the step ends in
        memory, and on disk if a small end still fits: ``in_doubt`` (E_ACTION_IN_DOUBT)
        when its tool was called, else ``failed`` with ``no_call``; the run ends."""
        key = record.get("id")
        rec = self.state.action(key) if key is not None else None
        called = rec is not None and rec.open_start and record["t"] != "start"
        called = called and not (record["t"] == "end" and record.get("no_call"))
        what = f"the {record['t']} record of {_step_name(key)}"
        if called:
            error: PlangateError = ActionInDoubt(
                f"{_step_name(key)}'s tool was called, but {what} could not be journaled "
                f"whole ({failed}): whether and how it took effect is not recorded",
                remedy="check what the action did; free space for the state directory, then "
                "approve a resume (it runs the action again) or abort",
            )
        else:
            error = StorageFailed(
                f"{what} could not be journaled ({failed.message}); its tool was not called",
                path=failed.path,
            )
        if key is not None:
            small = self._small_end(record, error, called)
            with contextlib.suppress(StorageFailed):  # else a start with no end: in doubt
                self.journal.append(small)
            self.state.apply(small)
        return JournalUnwritable(self.journal.size, error, key)

    def _small_end(
        self, record: dict[str, Any], error: PlangateError, called: bool
    ) -> dict[str, Any]:
        rec = self.state.action(record["id"])
        small: dict[str, Any] = {
            "t": "end",
            "at": plans.now_utc(),
            "id": record["id"],
            "attempt": record.get("attempt", rec.attempts),
            "status": "in_doubt" if called else "failed",
            "retry": False,
            "duration_ms": record.get("duration_ms"),
            "result": None,
            "outputs": {},
            "error": {"code": error.code, "message": error.message},
        }
        if not called:
            small["no_call"] = True
        return small

    def _journal_full(self, record: dict[str, Any], full: JournalFull) -> LimitExceeded:
        what = {"start": "params", "called": "result", "end": "end", "check": "check"}
        if full.after:
            return LimitExceeded(
                f"the journal of this plan is full ({full.size} bytes; a record past "
                f"{full.limit}, limits.max_journal_bytes, was refused): the "
                f"{what[record['t']]} record of {_step_name(record.get('id'))} is not "
                "written, the run stops here",
                remedy="pass smaller values between actions, or fewer tries, or raise "
                "limits.max_journal_bytes (docs/configuration.md)",
            )
        return LimitExceeded(
            f"the journal of this plan holds {full.size} bytes; the {what[record['t']]} "
            f"record of {_step_name(record.get('id'))} ({full.wanted} bytes) would take it "
            f"past {full.limit} (limits.max_journal_bytes): the run stops here",
            remedy="pass smaller values between actions, or fewer tries, or raise "
            "limits.max_journal_bytes (docs/configuration.md)",
        )

    def _failed_end(self, record: dict[str, Any], error: LimitExceeded) -> dict[str, Any] | None:
        """The small end record that stands for a ``record`` the journal had no room for
        (None for a plan precondition's check: no step to end; the outcome says it)."""
        key = record.get("id")
        if key is None:
            return None
        rec = self.state.action(key)
        if record["t"] == "start":
            no_call = True
        elif record["t"] == "end":
            no_call = bool(record.get("no_call"))
        else:  # a check before the tool (no start open), a verify's, or a called record
            no_call = not rec.open_start
        message = error.message
        before = record.get("error") if record["t"] == "end" else None
        if isinstance(before, dict):
            said = shorten(str(before.get("message", "")), 300)
            message += f"; the step had ended {before.get('code')}: {said}"
        small: dict[str, Any] = {
            "t": "end",
            "at": plans.now_utc(),
            "id": key,
            "attempt": record.get("attempt", rec.attempts),
            "status": "in_doubt" if record.get("status") == "in_doubt" else "failed",
            "retry": False,
            "duration_ms": record.get("duration_ms"),
            "result": None,
            "outputs": {},
            "error": {"code": error.code, "message": message},
        }
        if no_call:
            small["no_call"] = True
        return small

    def _end_open_starts(self) -> None:
        """An aborted run ends every step the journal holds started and not ended (a crash
        mid-action, then an abort committed before the restart) ``in_doubt``
        (E_ACTION_IN_DOUBT), as a resume that reached it would: the run is over, and its
        record, the ``execution:`` block and EXECUTION_LOG.md, says the tool ran and may have
        taken effect (round 119, abort-after-crash-records-running: it said ``running`` under
        ``aborted``). An idempotent step too: nothing runs it again. Nested steps first, so a
        nested action ends after its own steps."""
        opened = [k for k, rec in self.state.actions.items() if rec.open_start]
        for key in sorted(opened, key=lambda k: (-str(k).count("/"), str(k))):
            rec = self.state.actions[key]
            tool = self._tool_of(key) or "a nested plan step"
            error = stopped_mid_action(key, tool, rec, self.orphans_stopped)
            self.log.error("action_in_doubt_at_abort", action=key, tool=tool)
            try:
                self.record(
                    {
                        "t": "end",
                        "id": key,
                        "attempt": rec.attempts,
                        "status": "in_doubt",
                        "retry": False,
                        "duration_ms": None,
                        "result": None,
                        "outputs": {},
                        "error": {
                            "code": error.code,
                            "message": error.recorded(self.redactor.text),
                        },
                    }
                )
            except (PlangateError, JournalFull):  # the journal took no more: the outcome ends it
                return

    def _produced(self, outcome: RunOutcome) -> RunOutcome:
        outcome.execution, outcome.log = self.checkpoints.block, self.checkpoints.log_text
        return outcome

    def _finish(self, outcome: RunOutcome) -> RunOutcome:
        if outcome.error is not None:
            outcome.error = self._redacted_error(outcome.error)
        if outcome.status == "aborted":
            self._end_open_starts()
        record: dict[str, Any] = {
            "t": "outcome",
            "status": outcome.status,
            "action": outcome.action,
        }
        if outcome.error is not None and outcome.action is None:  # the plan's own failure
            record["error"] = {"code": outcome.error.code, "message": outcome.error.message}
        # (the outcome record is never refused: it is small, its message cut by record())
        self.record(record)
        if outcome.status == "awaiting_approval" and outcome.action is not None:
            self.checkpoints.gate = self._gate_preview(outcome.action)
        self.checkpoints.write(outcome.status, final=outcome.status in TERMINAL)
        self._produced(outcome)
        self.log.info(
            "plan_run_ended",
            outcome=outcome.status,
            action=outcome.action,
            code=outcome.error.code if outcome.error else None,
            error=outcome.error.message if outcome.error else None,
        )
        return outcome

    # --- helpers ------------------------------------------------------------------------

    def _gate_preview(self, key: ActionKey) -> dict[str, Any] | None:
        """What approving the pause at ``key`` runs with, from this run's own scope
        (:mod:`controller.execution.gateview`), within a quarter of the room PLAN.yml keeps
        for the controller."""
        from controller.execution import gateview

        room = plans.controller_room(self.config.limits.max_plan_bytes) // 4
        try:
            return gateview.preview(self, key, room)
        except PlangateError as exc:  # the pause stands; only its preview is missing
            self.log.warning("gate_preview_failed", action=key, error=exc.message)
            return None

    def _tool_env(self) -> dict[str, str]:
        """The controller's environment minus secrets and its own credentials (the webhook
        secret, the UI token, the notify URLs: round 25): tools get secrets only as params."""
        from controller.execution.secrets import credentials_of

        hidden = (
            set(self.secrets.env_names(os.environ)) | credentials_of(self.config, os.environ)[0]
        )
        env = {k: v for k, v in os.environ.items() if k not in hidden and k != CRASH_ENV}
        env["PLANGATE_PLAN"] = self.plan_id
        return env

    def _redacted_error(self, error: PlangateError) -> PlangateError:
        message = error.recorded(self.redactor.text)  # its own quotes as written (round 65)
        if message == error.message:
            return error
        return error_for(error.code, message, error.path, error.own_quotes)


TERMINAL = ("completed", "failed", "aborted")
#: Records written without fdatasync: the journal is write-ahead, every record durable
#: before the next effect (a tool call, whose ``start`` is synced, or the run's return, whose
#: ``outcome`` is), and one fdatasync makes every record before it durable. A run, gate or
#: check record only matters together with the start that follows it; an ``end`` is made
#: durable by the next action's start or the outcome (a power loss between them leaves the
#: action's start without its end: in doubt, never run again unasked); a spawn record only has
#: to survive the controller's death, which keeps the page cache (a power loss kills the
#: tool). So one fdatasync per action, and one per run for its outcome.
_UNSYNCED = ("run", "gate", "spawn", "check", "end")
#: Records held to ``limits.max_journal_bytes``: the ones that carry params, results, outputs
#: or check results (the others are small and bounded by the tool calls and gates).
_BOUNDED = ("start", "called", "end", "check")


def _parent(key: str) -> int | None:
    """The plan's action a fallback step (``"1.2"``) or nested action (``"3/1"``) is of."""
    head = key.replace("/", ".").split(".", 1)[0]
    return int(head) if head.isascii() and head.isdigit() else None


def _recovered_end(key: int, entry: dict[str, Any]) -> dict[str, Any]:
    """The end record standing for an action the committed record says finished: its
    outputs as shown there; those masked or cut (or all, when the record shows none) are
    listed ``unknown``."""
    outputs = entry.get("outputs")
    unknown: list[str] | bool = True
    shown: dict[str, Any] = {}
    if isinstance(outputs, dict):
        shown = dict(outputs)
        unknown = sorted(str(k) for k, v in shown.items() if _not_whole(v))
    attempts = entry.get("attempts")
    return {
        "t": "end",
        "id": key,
        "attempt": attempts if isinstance(attempts, int) and attempts >= 0 else 1,
        "status": entry.get("status"),
        "retry": False,
        "duration_ms": entry.get("duration_ms"),
        "result": None,
        "outputs": shown,
        "error": None,
        "started_at": entry.get("started_at"),
        "from_record": True,
        "unknown": unknown,
    }


def _not_whole(value: Any) -> bool:
    """A value the committed record shows masked (``***``) or cut."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return MASK in text or "(cut; " in text


def _step_name(key: Any) -> str:
    return "the plan's preconditions" if key is None else f"action {key}"


def stop_left(state_dir: Path, plan_id: str, plan_hash: str) -> dict[ActionKey, int]:
    """Stop the tool processes a dead controller's run of ``plan_id`` at ``plan_hash`` left
    running (round 85, waitleft): every open start's spawn record in its journal, as
    :meth:`PlanRun._stop_orphans` does when the run is taken up, but before, and whatever,
    anything decides about the plan's file (a YAML error, a symlink, a hold: the plan waits,
    its tool must not act on). The journal is read, never taken (a live run may hold it);
    a run of this very process (its last ``run`` record names this pid) is left alone: its
    tools are its own. Action id -> pid of each process stopped."""
    path = journal_path(state_dir, plan_id, plan_hash)
    try:
        records = read_records(path)
    except PlangateError:
        return {}  # a damaged journal: the run's own open says so
    runs = [r for r in records if r.get("t") == "run"]
    if not runs or runs[-1].get("pid") == os.getpid():
        return {}
    stopped: dict[ActionKey, int] = {}
    for action_id, rec in replay(records).actions.items():
        spawned = _spawned(rec.spawn) if rec.open_start else None
        if spawned is not None and stop_orphan(spawned):
            stopped[action_id] = spawned.pid
            structlog.get_logger("plangate").warning(
                "orphan_killed", plan=plan_id, action=action_id, pid=spawned.pid,
                pgid=spawned.pgid, reason="left running by a dead controller's run",
            )  # fmt: skip
    if stopped:
        with _LEFT_LOCK:  # the run's recovery names them (PlanRun._stop_orphans)
            _LEFT_STOPPED.setdefault(str(path), {}).update(stopped)
    return stopped


#: Journal path -> the processes :func:`stop_left` stopped for it, until the run's own
#: recovery takes them (its in-doubt error says the process was still running and stopped).
_LEFT_STOPPED: dict[str, dict[ActionKey, int]] = {}
_LEFT_LOCK = threading.Lock()


def _spawned(record: dict[str, Any] | None) -> Spawned | None:
    """The journaled child process of an open start, if one was recorded."""
    if record is None:
        return None
    pid, pgid, ticks, boot = (record.get(k) for k in ("pid", "pgid", "start_ticks", "boot_id"))
    if not isinstance(pid, int) or not isinstance(pgid, int):
        return None
    marker = record.get("marker")  # none in a journal written before round 86
    box = record.get("cgroup")  # none before round 88, or where cgroups are not used
    return Spawned(
        pid,
        pgid,
        ticks if isinstance(ticks, int) else None,
        boot if isinstance(boot, str) else None,
        marker if isinstance(marker, str) and marker else None,
        box if isinstance(box, str) and box else None,
    )


def begin(state_dir: Path, plan_id: str, plan_hash: str, start: str, first: bool = False) -> None:
    """Record the start commit ``start`` in the run's journal before it is published: from
    then on the run expects its journal (``Engine.run(journal_expected=True)``). ``first``:
    the start of a first approval (nothing of this version ran before it), so a journal that
    begins with it holds the whole run (round 68: ``PlanRun._holds_whole_run``).

    Not fsynced: a process crash keeps it (page cache); a power loss that drops it drops the
    unsynced start commit's objects too, and the run's own first record is synced."""
    with Journal(journal_path(state_dir, plan_id, plan_hash)) as journal:
        record: dict[str, Any] = {"t": "begin", "at": plans.now_utc(), "start": start}
        if first:
            record["first"] = True
        journal.append(record, sync=False)


def _seal_key_of(config: Config) -> bytes | None:
    """The key sealing real values across a pause (``<state_dir>/seal.key``); None when the
    state directory cannot hold one (the values are then journaled redacted only)."""
    from controller.execution.secrets import seal_key

    try:
        return seal_key(config.state_path() / "seal.key")
    except (OSError, ValueError, PlangateError):
        return None


def _start_commits(records: list[dict[str, Any]]) -> list[str]:
    """The start commits the journal's ``begin`` records name, first first: the trees the
    run's pinned nested plans were started from."""
    found = [r.get("start") for r in records if r.get("t") == "begin"]
    return list(dict.fromkeys(s for s in found if isinstance(s, str)))
