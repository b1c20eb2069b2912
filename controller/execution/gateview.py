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
- ``checks``: the params of the action's preconditions and verify tool;
- ``note``: what is not shown, when something is not.

Secrets show as ``***`` (and any secret value an output carries is redacted); a value the
plan's author wrote (a literal, ``$<plan.name>``) is shown as written, even one equal to a
secret (:func:`controller.plan.refs.authored`, round 64: masked, it told a right guess from
a wrong one); a value that cannot be resolved yet says why. Its cost is bounded by what it
can show (round 23: 200 nested actions each repeating a 40 KB output ten times took 10 s of
the pass): one value is resolved up to :data:`VALUE_CHARS` characters, the whole preview up to
:data:`PREVIEW_CHARS`; past either a value says it is not shown. A value longer than
:data:`GATE_VALUE_CHARS` as JSON is shown cut, with its length and the SHA-256 of its RFC
8785 form as shown (secrets masked). When even cut values would take more than the room
given (a quarter of what PLAN.yml keeps for the controller), values are cut shorter, then
the nested actions' and checks' params are left out, then every value, each time with a
``note`` saying so (round 23: a 60-action nested plan's preview was silently empty).
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
#: One value is resolved up to this many characters; a longer one is not shown.
VALUE_CHARS = 65_536
#: The whole preview resolves at most this many characters; values past it are not shown.
PREVIEW_CHARS = 1 << 20

_LISTS = ("actions", "checks")


def preview(run: PlanRun, key: ActionKey, room: int) -> dict[str, Any]:
    """The preview of the pause at ``key``, within ``room`` bytes of JSON."""
    action = next((a for a in run.model.actions if a.id == key), None)
    if action is None:  # a nested plan has no gates nor asks (SPEC §12): only the parent's
        return {"action": key, "params": {}}
    whole = _Resolver(run).step(key, action, run.scope.ctx)
    for chars in (GATE_VALUE_CHARS, SMALL_VALUE_CHARS):
        found = _cut_tree(whole, chars)
        if _fits(found, room):
            return found
    left_out = {k: len(whole[k]) for k in _LISTS if whole.get(k)}
    slim = _cut_tree({k: v for k, v in whole.items() if k not in _LISTS}, SMALL_VALUE_CHARS)
    what = " and ".join(f"{n} {'nested actions' if k == 'actions' else 'checks'}"
                        for k, n in left_out.items())  # fmt: skip
    slim["note"] = f"not shown: the params of {what} (too many for PLAN.yml)"
    if left_out and _fits(slim, room):
        return slim
    return {"action": key, "note": "not shown: this pause's values are too many for PLAN.yml"}


def _fits(found: dict[str, Any], room: int) -> bool:
    return len(json.dumps(found, ensure_ascii=False)) <= room


class _Resolver:
    """Values resolved against a scope with secrets masked, then redacted; bounded."""

    def __init__(self, run: PlanRun) -> None:
        self.run = run
        self.left = PREVIEW_CHARS

    def step(self, key: ActionKey, action: Any, ctx: refs.Context) -> dict[str, Any]:
        """The pause's values; ``ctx``: the top-level plan's scope, whose inputs are its
        author's literals (round 65: quoted as written, as its other literals are)."""
        ctx = _masked(ctx)
        found: dict[str, Any] = {"action": key, "params": self.values(action.params, ctx)}
        checks = [
            {
                "check": f"precondition {i}",
                "tool": pre.tool,
                "params": self.values(pre.params, ctx),
            }
            for i, pre in enumerate(action.preconditions, 1)
        ]
        verify = action.verify
        if verify is not None and verify.tool is not None:
            checks.append(
                {
                    "check": "verify",
                    "tool": verify.tool,
                    "params": self.values(verify.params, ctx),
                }
            )
        if checks:
            found["checks"] = checks
        if action.plan is not None:
            found.update(self.nested(key, action, ctx))
        return found

    def nested(self, key: ActionKey, action: Any, ctx: refs.Context) -> dict[str, Any]:
        from controller.plan import nested, plans

        given: dict[str, Any] = {}
        shown: dict[str, Any] = {}
        for name, value in (action.inputs or {}).items():
            resolved, ok = self.value(value, ctx)
            shown[name] = resolved
            if ok:
                given[name] = resolved
        found: dict[str, Any] = {"inputs": shown}
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
            # each input as the preview shows it: its parts' provenance (rounds 66-67)
            shown_inputs={**child.model.inputs, **given},
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
        return {name: self.value(value, ctx)[0] for name, value in params.items()}

    def value(self, value: Any, ctx: refs.Context) -> tuple[Any, bool]:
        """(the value as the record shows it, :func:`refs.recorded`, True), or (why it is not
        shown, False)."""
        if self.left <= 0:
            return f"(not shown: the preview resolved {PREVIEW_CHARS} characters already)", False
        budget = refs.Budget(min(VALUE_CHARS, self.left))
        try:
            refs.resolve(value, ctx, budget=budget)  # the budget and the refusals
        except PlangateError as exc:
            if exc.code == "E_LIMIT_EXCEEDED":
                return f"(not shown: more than {budget.limit} characters)", False
            return f"(not known yet: {exc.message})", False
        finally:  # what was built, a failed resolution's too
            self.left -= min(budget.limit, budget.limit - budget.left)
        # built from its parts: the author's as written, a secret ***, the rest redacted
        # (rounds 64-67), as the journal records the params the run resolves
        return refs.recorded(value, ctx, self.run.redactor.data), True


def _masked(ctx: refs.Context) -> refs.Context:
    return dataclasses.replace(ctx, secret=lambda name: "***", used_secrets=set())


def _cut_tree(tree: dict[str, Any], chars: int) -> dict[str, Any]:
    """The preview with every value whole or cut at ``chars``."""
    out = dict(tree)
    for part in ("params", "inputs"):
        if isinstance(tree.get(part), dict):
            out[part] = {name: _cut(value, chars) for name, value in tree[part].items()}
    for part in _LISTS:
        if isinstance(tree.get(part), list):
            out[part] = [
                {**item, "params": {n: _cut(v, chars) for n, v in item["params"].items()}}
                if isinstance(item.get("params"), dict)
                else item
                for item in tree[part]
            ]
    return out


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
