"""What approving a pause runs with: the gate's preview, computed by the engine (SPEC §7).

When a run pauses (``requires_approval``, or ``on_failure: ask``) the engine resolves what
the paused action will receive from the very values it will resolve them from when the
gate is approved: its own scope, holding every earlier action's whole outputs and results
(round 22: ``show`` rebuilt the preview from ``execution:``, which holds no results and
outputs cut at 200 characters, so it said "not known yet" of a result reference and cut a
long value, and it showed neither a nested plan's inputs nor a check's params). The preview
is written into the ``execution:`` block (``gate:``) and the log; ``plangate show`` prints
it. It holds:

- ``params``: the action's params as the tool will get them;
- ``inputs`` and ``actions``: for a nested plan, the inputs it gets and each of its actions'
  params as far as they resolve before it runs;
- ``checks``: the params of the action's preconditions and verify tool.

Secrets show as ``***`` (and any secret value an output carries is redacted); a value that
cannot be resolved yet says why; a value longer than :data:`GATE_VALUE_CHARS` as JSON is cut,
with its length and the SHA-256 of its RFC 8785 form.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import TYPE_CHECKING, Any

from controller.errors import PlangateError
from controller.plan import refs
from controller.plan.hashing import canonical_bytes

if TYPE_CHECKING:
    from controller.execution.executor import PlanRun
    from controller.execution.journal import ActionKey

#: A value longer than this as JSON is shown cut (with its length and SHA-256).
GATE_VALUE_CHARS = 2000
#: Shorter cuts, when the whole preview would take more than its share of PLAN.yml.
SMALL_VALUE_CHARS = 200


def preview(run: PlanRun, key: ActionKey, room: int) -> dict[str, Any]:
    """The preview of the pause at ``key``, within ``room`` bytes of JSON."""
    for chars in (GATE_VALUE_CHARS, SMALL_VALUE_CHARS):
        found = _preview(run, key, chars)
        if len(json.dumps(found, ensure_ascii=False)) <= room:
            return found
    cut = "(not shown: this pause's values are too many for PLAN.yml)"
    return {"action": key, "params": dict.fromkeys(found["params"], cut)}


def _preview(run: PlanRun, key: ActionKey, chars: int) -> dict[str, Any]:
    action = next((a for a in run.model.actions if a.id == key), None)
    if action is None:  # a nested plan has no gates nor asks (SPEC §12): only the parent's
        return {"action": key, "params": {}}
    return _Shown(run, chars).step(key, action, run.scope.ctx)


class _Shown:
    """Values resolved against a scope with secrets masked, redacted and cut."""

    def __init__(self, run: PlanRun, chars: int) -> None:
        self.run = run
        self.chars = chars

    def step(self, key: ActionKey, action: Any, ctx: refs.Context) -> dict[str, Any]:
        ctx = _masked(ctx)
        found: dict[str, Any] = {"action": key, "params": self.values(action.params, ctx)}
        checks = [
            {"check": f"precondition {i}", "tool": pre.tool, "params": self.values(pre.params, ctx)}
            for i, pre in enumerate(action.preconditions, 1)
        ]
        verify = getattr(action, "verify", None)
        if verify is not None and verify.tool is not None:
            checks.append(
                {"check": "verify", "tool": verify.tool, "params": self.values(verify.params, ctx)}
            )
        if checks:
            found["checks"] = checks
        if action.plan is not None:
            found.update(self.nested(key, action, ctx))
        return found

    def nested(self, key: ActionKey, action: Any, ctx: refs.Context) -> dict[str, Any]:
        from controller.plan import nested, plans

        given: dict[str, Any] = {}
        unknown: dict[str, str] = {}
        for name, value in (action.inputs or {}).items():
            try:
                given[name] = refs.resolve(value, ctx)
            except PlangateError as exc:
                unknown[name] = f"(not known yet: {exc.message})"
        found: dict[str, Any] = {"inputs": {**self.cut(given), **unknown}}
        try:
            child = nested.load(
                action.plan, self.run.config, self.run.nested.origin, plans.check_document
            )
        except PlangateError as exc:
            found["actions"] = [{"error": f"{exc.code}: {exc.message}"}]
            return found
        inner_ctx = refs.Context(
            inputs={**child.model.inputs, **given},
            plan={
                "name": child.model.plan.name,
                "task": child.model.plan.task,
                "hash": child.hash,
            },
            approval=ctx.approval,
            secret=ctx.secret,
            max_chars=ctx.max_chars,
        )
        found["actions"] = [
            {
                "action": f"{key}/{inner.id}",
                "tool": inner.tool,
                "params": self.values(inner.params, inner_ctx),
            }
            for inner in child.model.actions
        ]
        return found

    def values(self, params: dict[str, Any], ctx: refs.Context) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in params.items():
            try:
                out[name] = self.cut({name: refs.resolve(value, ctx)})[name]
            except PlangateError as exc:
                out[name] = f"(not known yet: {exc.message})"
        return out

    def cut(self, values: dict[str, Any]) -> dict[str, Any]:
        """Redacted (a secret an output carries), then each value whole or cut."""
        safe = self.run.redactor.data(values)
        return {name: _cut(value, self.chars) for name, value in safe.items()}


def _masked(ctx: refs.Context) -> refs.Context:
    return dataclasses.replace(ctx, secret=lambda name: "***", used_secrets=set())


def _cut(value: Any, chars: int) -> Any:
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= chars:
        return value
    try:
        digest = "sha256:" + hashlib.sha256(canonical_bytes(value)).hexdigest()
    except (TypeError, ValueError):
        digest = "no digest"
    return (
        f"{text[:chars]}… (cut: {len(text)} chars as JSON, {digest} of its RFC 8785 form; the "
        "action gets the whole value)"
    )
