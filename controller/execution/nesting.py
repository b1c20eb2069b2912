"""Running a nested plan as one action of its parent's run (SPEC §12).

The pinned plan is loaded again and its hash checked against the pin just before it runs
(a changed file fails the action with E_PLAN_HASH_MISMATCH: only the approved version runs).
Its actions run in the parent's run, one at a time in the order of their ``needs``, through
the parent's :class:`~controller.execution.steps.StepRunner`: journaled in the parent's
journal with keys ``"<parent action>/<id>"`` (their idempotency keys derive from the parent's
hash), with the parent's approval, secrets and catalog. Their references resolve in the
nested plan's own scope: its inputs (its defaults, overridden by the parent action's
resolved ``inputs``) and its own actions' outputs. Its calls count toward its own caps
(its ``limits:`` and the config's, the smaller) and toward the parent's: the nested run has
its own :class:`~controller.execution.caps.CapBudget`, chained to the parent's, so the
smaller remaining budget wins (round 54).

The parent action's start record opens the nested run; its end closes it, with the result
``{"plan", "hash", "outputs": {"<id>": {...}}}`` (which the parent's ``outputs`` and
``verify`` read). A crash in between resumes the nested run where its journal stops.
The run's record names the nested actions the journal holds, whether or not this pass runs
the nested plan (:meth:`NestedRun.recall`: its pinned version, as the run started it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.errors import PlangateError
from controller.execution import checks
from controller.execution.journal import JournalFull
from controller.execution.results import extract_outputs, take_result
from controller.execution.steps import RunOutcome, Scope, Step, error_of, guarded, journaled
from controller.plan import graph, nested, plans, profile, refs

if TYPE_CHECKING:
    from controller.execution.steps import Run, StepRunner
    from controller.plan.schema import Action, PlanDocument


class NestedRun:
    """One nested-plan action of a plan run."""

    def __init__(self, run: Run, runner: StepRunner, origin: Any, models: dict[int, Any]) -> None:
        self.run = run
        self.runner = runner
        self.origin = origin
        #: parent action id -> the nested plan's model (for the log).
        self.models = models

    def recall(self, actions: list[Action], commits: list[str]) -> None:
        """Know the model of each nested plan of ``actions`` the journal holds steps of,
        before any runs on this pass: the run's record (the ``execution:`` block, the log)
        shows what ran from the pinned version, never only from a plan this pass ran (round
        109, r109nestrec: a pass that never entered the nested action, it having ended or
        its child changed since, committed the record without its nested actions)."""
        ran = {str(key).split("/", 1)[0] for key in self.run.state.actions if "/" in str(key)}
        for action in actions:
            if action.plan is None or action.id in self.models or str(action.id) not in ran:
                continue
            config, check = self.run.config, plans.check_document
            child = nested.load_pinned(action.plan, config, self.origin, check, commits)
            if child is not None:
                self.models[action.id] = child.model

    def run_step(self, step: Step) -> RunOutcome | None:
        spec: Action = step.spec  # type: ignore[assignment]
        assert spec.plan is not None
        rec = self.run.state.action(step.key)
        attempt = rec.attempts if rec.open_start else rec.attempts + 1
        try:
            child = nested.load(spec.plan, self.run.config, self.origin, plans.check_document)
            inputs = {**child.model.inputs, **refs.resolve(spec.inputs or {}, step.scope.ctx)}
        except PlangateError as error:
            return self.runner.settle(step, attempt, error, no_call=not rec.open_start)
        self.models[int(step.key)] = child.model
        if not rec.open_start:
            self.runner.record_start(step, attempt, inputs)
        scope = self._scope(step, child, inputs)
        try:
            outcome = self._preconditions(step, child.model, scope, attempt)
            if outcome is None:
                outcome = self._actions(step, child.model, scope)
        except JournalFull as full:  # an inner step's record: it ended small; so does this
            assert full.error is not None  # one, whatever its on_failure: the run fails
            self.runner.record_end(step, attempt, "failed", error=full.error)
            return RunOutcome("failed", full.error, full.key)
        if outcome is not None:
            if outcome.status != "failed" or outcome.error is None:
                return outcome
            return self.runner.settle(step, attempt, outcome.error)
        result = {
            "plan": child.path,
            "hash": child.hash,
            "outputs": {str(i): scope.outputs[i] for i in sorted(scope.outputs)},
        }
        try:
            result = take_result(step.tool, result)  # the one intake, as for any tool
            run = self.runner.run
            limit = run.config.limits.max_params_bytes
            outputs = extract_outputs(spec.outputs, result, limit, run.redactor.view)
        except PlangateError as error:
            return self.runner.settle(step, attempt, error, result=result)
        return self.runner.finish(step, attempt, result, outputs)

    def _scope(self, step: Step, child: nested.Child, inputs: Any) -> Scope:
        model = child.model
        outputs: dict[int, dict[str, Any]] = {}
        results: dict[int, Any] = {}
        prefix = f"{step.key}/"
        for key, rec in self.run.state.actions.items():
            end = rec.end
            if not (isinstance(key, str) and key.startswith(prefix) and rec.done and end):
                continue
            local = key[len(prefix) :]
            if local.isdigit() and end.get("status") == "succeeded":
                found, result = journaled(self.runner.run.redactor, end)
                outputs[int(local)] = found
                results[int(local)] = result
        parent = step.scope.ctx
        spec: Action = step.spec  # type: ignore[assignment]
        try:  # each input as the parent's record shows it (round 67): the provenance an exec
            # tool's argv is judged by (round 128: a secret the parent gave never reaches it)
            given = refs.recorded(spec.inputs or {}, parent, self.runner.run.redactor.data)
        except PlangateError:
            given = {}  # none known as the author's: each read as the controller's material
        ctx = refs.Context(
            inputs=inputs,
            plan={"name": model.plan.name, "task": model.plan.task, "hash": child.hash},
            approval=parent.approval,
            outputs=outputs,
            results=results,
            secret=parent.secret,
            max_chars=parent.max_chars,
            shown_inputs={**model.inputs, **given} if isinstance(given, dict) else {},
        )
        head = str(step.key)
        budget = step.scope.budget.nested(
            profile.caps_for(child.data, self.run.config.limits),
            lambda: self.run.state.nested_calls.get(head, 0),
            f"nested plan {child.path}",
        )
        return Scope(ctx, outputs, results, budget)

    def _preconditions(
        self, step: Step, model: PlanDocument, scope: Scope, attempt: int
    ) -> RunOutcome | None:
        prefix = f"{step.key}/"
        started = any(
            isinstance(k, str) and k.startswith(prefix) and r.starts
            for k, r in self.run.state.actions.items()
        )
        if started:
            return None
        for index, pre in enumerate(model.preconditions):
            who = f"nested plan {step.key} precondition {index + 1}"
            try:
                found = checks.precondition(
                    index,
                    pre,
                    guarded(scope.ctx, pre.guards, who, self.runner.run.redactor.data),
                    # its calls count toward the nested plan's caps (and so the parent's)
                    self.runner.checker(Step(step.key, step.spec, step.on_failure, scope)),
                )
            except PlangateError as error:  # a reference or a guard: the check cannot run
                return RunOutcome("failed", error, step.key)
            self.runner.record_check(step.key, attempt, found)
            if not found.ok:
                return RunOutcome("failed", found.as_error(f"nested plan {step.key}:"), step.key)
        return None

    def _actions(self, step: Step, model: PlanDocument, scope: Scope) -> RunOutcome | None:
        built, _ = graph.build([(a.id, a.needs) for a in model.actions])
        assert built is not None  # validated
        actions = {a.id: a for a in model.actions}
        for local in built.order:
            key = f"{step.key}/{local}"
            rec = self.run.state.actions.get(key)
            if rec is not None and rec.done:
                continue
            if rec is not None and rec.finally_failed and not self.run.resume:
                return RunOutcome("failed", error_of(rec), key)
            action = actions[local]
            mode = action.on_failure or model.on_failure
            outcome = self.runner.run_step(Step(key, action, mode, scope, local))
            if outcome is not None:
                return outcome
        return None
