"""ActionPlan/StepPlan JSON (``actionplan``) -> PLAN.yml.

Steps become actions in order; a step's action ``type`` names the tool and its other
fields are the params (``custom``: ``action_type`` and ``payload``). Preconditions and
verification strategies call check tools named after their ``type`` that answer
``{"ok": true|false}``. ``on_failure`` maps strategy by strategy (abort -> stop, retry ->
retry{}, skip, fallback -> fallback steps, require_approval -> ask). A ``nested_plan``
step becomes its own plan file, pinned by hash. docs/formats.md has the full table.
"""

from __future__ import annotations

from typing import Any

from controller.plan.convert.common import (
    ANY,
    BOOL,
    INT,
    NUMBER,
    STR,
    Ctx,
    Loc,
    Shape,
    check,
    document,
    first_line,
    millis_to_iso,
    numbered_in_place,
    plain_id,
)

FORMAT = "actionplan"
# The source's shapes (common.Ctx.fields): every field this converter reads, with its type.
ROOT: Shape = {
    "plan_version": INT,
    "plan_id": ANY,
    "title": ANY,
    "workspace_id": ANY,
    "created_at": NUMBER,
    "steps": ANY,
    "preconditions": ANY,
    "on_failure": ANY,
    "metadata": ANY,
}
STEP: Shape = {
    "step_number": INT,
    "step_id": ANY,
    "action": ANY,
    "description": ANY,
    "preconditions": ANY,
    "verification": ANY,
    "on_failure": ANY,
    "timeout_ms": ANY,
    "idempotent": BOOL,
}
CUSTOM: Shape = {"type": STR, "action_type": ANY, "payload": ANY}
VERIFICATION: Shape = {"strategy": ANY, "description": ANY, "timeout_ms": ANY}
ABORT: Shape = {"strategy": STR, "message": STR}
SKIP: Shape = {"strategy": STR, "warn": BOOL}
RETRY: Shape = {
    "strategy": STR,
    "max_attempts": ANY,
    "initial_delay_ms": ANY,
    "max_delay_ms": ANY,
    "backoff_multiplier": ANY,
}
ASK: Shape = {"strategy": STR, "summary": STR}
FALLBACK: Shape = {"strategy": STR, "steps": ANY}


class StepIndex:
    """The plan's steps by source ``step_id``, and which of them may end without completing.

    ``step_completed`` has no PLAN.yml form (no check reads an action's status), so the
    converter drops it only where order alone proves it: the named step is earlier and its
    failure stops the plan. ``skip`` (the step's own or the plan's) and ``fallback`` (one
    that ends well) record a failed step ``skipped`` and the plan goes on (docs/execution.md,
    failure policies); abort, retry (then stop) and require_approval (wait, try again) do not.
    """

    def __init__(self, steps: list[Any], plan_failure: Any) -> None:
        self.numbers: dict[str | int, list[Any]] = {}
        self.loose: dict[Any, str] = {}
        default = _strategy(plan_failure)
        for step in steps:
            if not isinstance(step, dict):
                continue
            sid, number = step.get("step_id"), step.get("step_number")
            if isinstance(sid, str | int) and not isinstance(sid, bool):
                self.numbers.setdefault(sid, []).append(number)
            own = step.get("on_failure")  # the step's own policy, else the plan's
            why = (
                _loose_reason(_strategy(own), "its")
                if own is not None
                else _loose_reason(default, "the plan's")
            )
            if why:
                self.loose[number] = why

    def number(self, sid: Any) -> Any:
        """The one step ``sid`` names, else None (unknown, not a key, or named twice)."""
        found = self.numbers.get(sid) if isinstance(sid, str | int) else None
        return found[0] if found and len(found) == 1 else None


def _strategy(value: Any) -> Any:
    return value.get("strategy") if isinstance(value, dict) else None


def _loose_reason(strategy: Any, whose: str) -> str | None:
    if strategy == "skip":
        return f"{whose} on_failure is skip: a failed step is recorded skipped and the plan goes on"
    if strategy == "fallback":
        return (
            f"{whose} on_failure is fallback: when the fallback ends well the failed step is "
            "recorded skipped and the plan goes on"
        )
    return None


#: A nested plan converted with no output folder, as ``plangate convert`` says it.
UNPLACED = (
    "a nested plan needs an output folder: pass -o DIR",
    "pass -o DIR (e.g. -o plans): the nested plans are written under its folder",
)


class Nested:
    """Plans a conversion produces besides the main one (nested ``nested_plan`` steps)."""

    def __init__(self, base: str | None, unplaced: tuple[str, str] | None = None) -> None:
        self.base = base
        self.children: list[tuple[str, dict[str, Any]]] = []
        #: (message, remedy) of a nested plan with no folder to go to: the caller's, as its
        #: user can act on it (round 127: MCP passed on `convert`'s "pass -o DIR")
        self.unplaced = unplaced or UNPLACED

    def add(self, ctx: Ctx, data: dict[str, Any], loc: Loc, step: int) -> dict[str, str] | None:
        from controller.plan.hashing import plan_hash

        if self.base is None:
            ctx.unsupported(loc, *self.unplaced)
            return None
        data["plan"]["status"] = "draft"  # runs only inside its parent, pinned by hash
        path = f"{self.base}/step-{step}"
        self.children.append((path, data))
        return {"path": path, "hash": plan_hash(data)}


def convert(data: dict[str, Any], ctx: Ctx, nested: Nested, loc: Loc = ()) -> dict[str, Any]:
    data = ctx.fields(data, loc, ROOT)
    version = data.get("plan_version", 1)
    if version != 1:
        ctx.unsupported((*loc, "plan_version"), f"plan_version {version!r}; only 1 is known")
    title = ctx.text(data.get("title"), (*loc, "title"))
    workspace = data.get("workspace_id")
    steps = ctx.items(data.get("steps"), (*loc, "steps"))
    if not steps:
        ctx.invalid((*loc, "steps"), "a plan needs at least one step")
    keys = StepIndex(steps, data.get("on_failure"))
    actions = [_action(s, i, ctx, nested, (*loc, "steps", i), keys) for i, s in enumerate(steps)]
    extra: dict[str, Any] = {}
    pre = [
        _check(p, ctx, (*loc, "preconditions", i), keys, 0)
        for i, p in enumerate(ctx.items(data.get("preconditions"), (*loc, "preconditions")))
    ]
    if any(pre):
        extra["preconditions"] = [p for p in pre if p]
    if data.get("on_failure") is not None:
        policy = _on_failure(data["on_failure"], ctx, (*loc, "on_failure"), 0, nested, plan=True)
        if policy.get("on_failure", "stop") != "stop" or len(policy) > 1:
            extra["on_failure"] = policy["on_failure"]
            if len(policy) > 1:
                ctx.unsupported(
                    (*loc, "on_failure"), "plan-level retry settings: set them per step"
                )
    meta = {k: data[k] for k in ("plan_id", "metadata") if data.get(k) is not None}
    created = millis_to_iso(data.get("created_at"))
    if "created_at" in data and created is None:
        ctx.invalid((*loc, "created_at"), "not a time: milliseconds since 1970 are expected")
    return document(
        ctx,
        fmt=FORMAT,
        name=first_line(title),
        task=title if workspace is None else f"{title} (workspace {workspace})",
        created=created,
        inputs={"workspace_id": workspace} if workspace is not None else None,
        metadata={"source": meta} if meta else None,
        actions=actions,
        extra=extra,
    )


def _action(
    step: Any, index: int, ctx: Ctx, nested: Nested, loc: Loc, keys: StepIndex
) -> dict[str, Any]:
    step = ctx.fields(step, loc, STEP, "a step object")
    _numbered(step, index, ctx, loc)
    plain_id(ctx, step.get("step_id"), (*loc, "step_id"))
    out: dict[str, Any] = {"id": index + 1}
    out.update(_call(step.get("action"), ctx, (*loc, "action"), nested, index + 1))
    out["why"] = ctx.text(step.get("description"), (*loc, "description")) or "(no description)"
    _common(step, out, ctx, loc, keys, index + 1, nested)
    return out


def _numbered(step: dict[str, Any], index: int, ctx: Ctx, loc: Loc) -> None:
    """A step's ``step_number``, when written, is its place: steps, and a fallback's steps,
    run in array order (:func:`~controller.plan.convert.common.numbered_in_place`)."""
    number = step.get("step_number", index + 1)
    numbered_in_place(ctx, (*loc, "step_number"), number, index)


def _common(
    step: dict[str, Any],
    out: dict[str, Any],
    ctx: Ctx,
    loc: Loc,
    keys: StepIndex,
    number: int,
    nested: Nested,
) -> None:
    """Preconditions, verification, failure policy, timeout, idempotency of a step."""
    pre = [
        _check(p, ctx, (*loc, "preconditions", i), keys, number)
        for i, p in enumerate(ctx.items(step.get("preconditions"), (*loc, "preconditions")))
    ]
    if any(pre):
        out["preconditions"] = [p for p in pre if p]
    verify = _verify(step.get("verification"), ctx, (*loc, "verification"), out)
    if verify:
        out["verify"] = verify
    if step.get("on_failure") is not None:
        out.update(_on_failure(step["on_failure"], ctx, (*loc, "on_failure"), number, nested))
    timeout = ctx.seconds(step.get("timeout_ms"), (*loc, "timeout_ms"), millis=True)
    if "plan" in out:  # a nested plan's own actions take these; on its action they'd be ignored
        for key in ("timeout_ms", "idempotent"):
            if step.get(key) is not None:
                ctx.note((*loc, key), "dropped: a nested plan's actions carry their own")
        return
    if timeout is not None:
        out["timeout"] = timeout
    if step.get("idempotent") is False:
        out["idempotent"] = False
    elif step.get("idempotent"):
        ctx.note((*loc, "idempotent"), "idempotent: true comes from the tool catalog in plangate")


def _call(action: Any, ctx: Ctx, loc: Loc, nested: Nested, number: int) -> dict[str, Any]:
    action = ctx.obj(action, loc, "an action object with `type`")
    kind = action.get("type")
    if not isinstance(kind, str) or not kind:
        ctx.invalid((*loc, "type"), "the action's `type` is required")
        return {"tool": "unknown", "params": {}}
    params = {k: v for k, v in action.items() if k != "type"}
    if kind == "nested_plan":
        ctx.only_keys(action, loc, ("type", "plan"))
        return _nested(params.get("plan"), ctx, (*loc, "plan"), nested, number)
    if kind == "custom":
        ctx.fields(action, loc, CUSTOM)
        kind = ctx.text(action.get("action_type"), (*loc, "action_type")) or "custom"
        payload = action.get("payload")
        params = payload if isinstance(payload, dict) else {"payload": payload}
    return {"tool": ctx.tool_name(kind, (*loc, "type")), "params": params}


def _nested(plan: Any, ctx: Ctx, loc: Loc, nested: Nested, number: int) -> dict[str, Any]:
    inner_ctx = Ctx(ctx.source)
    child_nested = Nested(f"{nested.base}/step-{number}" if nested.base else None, nested.unplaced)
    data = convert(ctx.obj(plan, loc, "a nested ActionPlan"), inner_ctx, child_nested, loc)
    ctx.problems += inner_ctx.problems
    nested.children += child_nested.children
    pinned = nested.add(ctx, data, loc, number) if not inner_ctx.problems else None
    return {"plan": pinned or {"path": "", "hash": ""}}


def _check(pre: Any, ctx: Ctx, loc: Loc, keys: StepIndex, number: int) -> dict[str, Any]:
    pre = ctx.obj(pre, loc, "a precondition with `type`")
    kind = pre.get("type")
    if not isinstance(kind, str) or not kind:
        ctx.invalid((*loc, "type"), "the precondition's `type` is required")
        return {}
    if kind == "step_completed":
        ctx.only_keys(pre, loc, ("type", "step_id"))
        _step_completed(pre.get("step_id"), ctx, loc, keys, number)
        return {}
    params = {k: v for k, v in pre.items() if k != "type"}
    return check(ctx.tool_name(kind, (*loc, "type")), params)


def _step_completed(sid: Any, ctx: Ctx, loc: Loc, keys: StepIndex, number: int) -> None:
    """Dropped with a note when order proves it (StepIndex), else refused: never lost."""
    earlier = keys.number(sid)
    if not (isinstance(earlier, int) and 0 < earlier < number):
        ctx.unsupported(loc, "step_completed must name an earlier step of this plan")
        return
    why = keys.loose.get(earlier)
    if why is None:
        ctx.note(
            loc,
            f"step_completed({sid}) holds by order: steps run one after another and a "
            f"failure of step {earlier} stops the plan (its on_failure is abort, retry or "
            "require_approval)",
        )
        return
    ctx.unsupported(
        loc,
        f"step_completed({sid}): step {earlier} may end without completing ({why}), and "
        "PLAN.yml has no check on an earlier action's status",
        f"give step {earlier} on_failure abort, retry or require_approval so its failure "
        f"stops the plan, or remove the precondition if step {number} may run after "
        f"step {earlier} failed",
    )


def _verify(value: Any, ctx: Ctx, loc: Loc, out: dict[str, Any]) -> dict[str, Any] | None:
    if value is None:
        return None
    value = ctx.fields(value, loc, VERIFICATION)
    strategy = ctx.obj(value.get("strategy"), (*loc, "strategy"), "a strategy with `type`")
    kind = strategy.get("type")
    if not isinstance(kind, str) or not kind:
        ctx.invalid(
            (*loc, "strategy", "type"),
            "the strategy's `type` is required, a string",
            'name the check, or write {"type": "none"} for no verification',
        )
        return None
    if kind == "none":
        _no_verify(value, strategy, ctx, loc)
        return None
    verify = check(
        ctx.tool_name(kind, (*loc, "strategy", "type")),
        {k: v for k, v in strategy.items() if k != "type"},
    )
    timeout = ctx.seconds(value.get("timeout_ms"), (*loc, "timeout_ms"), millis=True)
    if timeout is not None:
        verify["timeout"] = timeout
    description = value.get("description")
    if description is not None:
        out["why"] = f"{out['why']} (verified: {ctx.text(description, (*loc, 'description'))})"
    return verify


def _no_verify(value: dict[str, Any], strategy: dict[str, Any], ctx: Ctx, loc: Loc) -> None:
    """``type: none``: no verify; any field beside it is refused or noted, never lost."""
    ctx.only_keys(strategy, (*loc, "strategy"), ("type",))
    for key in ("timeout_ms", "description"):
        if key in value:
            ctx.note(
                (*loc, key),
                f"not used: the strategy is `none` (no verification); {key} {value[key]!r}",
            )


def _on_failure(
    value: Any, ctx: Ctx, loc: Loc, number: int, nested: Nested, plan: bool = False
) -> dict[str, Any]:
    value = ctx.obj(value, loc, "an on_failure object with `strategy`")
    strategy = value.get("strategy")
    if strategy == "abort":
        value = ctx.fields(value, loc, ABORT)
        if value.get("message"):
            ctx.note((*loc, "message"), f"abort message: {value['message']}")
        return {"on_failure": "stop"}
    if strategy == "skip":
        value = ctx.fields(value, loc, SKIP)
        if value.get("warn") is not None:
            ctx.note((*loc, "warn"), f"warn: {value['warn']} (a skipped action is always logged)")
        return {"on_failure": "skip"}
    if strategy == "retry":
        return _retry(value, ctx, loc)
    if strategy == "require_approval":
        value = ctx.fields(value, loc, ASK)
        if value.get("summary"):
            ctx.note((*loc, "summary"), f"approval summary: {value['summary']}")
        return {"on_failure": "ask"}
    if strategy == "fallback" and not plan:
        value = ctx.fields(value, loc, FALLBACK)
        steps = ctx.items(value.get("steps"), (*loc, "steps"))
        fallback = [
            _fallback(s, i, ctx, (*loc, "steps", i), number, nested) for i, s in enumerate(steps)
        ]
        return {"on_failure": "fallback", "fallback": fallback}
    ctx.unsupported((*loc, "strategy"), f"on_failure strategy {strategy!r} is not supported here")
    return {}


def _retry(value: dict[str, Any], ctx: Ctx, loc: Loc) -> dict[str, Any]:
    value = ctx.fields(value, loc, RETRY)
    attempts = value.get("max_attempts")
    if not isinstance(attempts, int) or isinstance(attempts, bool) or not 1 <= attempts <= 101:
        ctx.unsupported((*loc, "max_attempts"), f"max_attempts {attempts!r}: 1..101 calls")
        return {"on_failure": "retry"}
    retry: dict[str, Any] = {"attempts": attempts - 1}  # PLAN.yml counts tries after the first
    for key, target in (("initial_delay_ms", "delay"), ("max_delay_ms", "max_delay")):
        if value.get(key) is not None:
            ms = value[key]
            if isinstance(ms, bool) or not isinstance(ms, int | float) or ms < 0:
                ctx.invalid((*loc, key), f"expected milliseconds >= 0, got {ms!r}")
                continue
            secs = ms / 1000
            retry[target] = int(secs) if float(secs).is_integer() else secs
    backoff = value.get("backoff_multiplier")
    if backoff is not None:
        if (
            isinstance(backoff, bool)
            or not isinstance(backoff, int | float)
            or not 1 <= backoff <= 10
        ):
            ctx.unsupported(
                (*loc, "backoff_multiplier"), f"backoff {backoff!r}: PLAN.yml takes 1..10"
            )
        else:
            retry["backoff"] = backoff
    return {"on_failure": "retry", "retry": retry}


def _fallback(
    step: Any, index: int, ctx: Ctx, loc: Loc, number: int, nested: Nested
) -> dict[str, Any]:
    step = ctx.fields(step, loc, STEP, "a fallback step")
    _numbered(step, index, ctx, loc)
    out: dict[str, Any] = {"id": f"{number}.{index + 1}"}
    action = ctx.obj(step.get("action"), (*loc, "action"))
    if action.get("type") == "nested_plan":
        ctx.unsupported((*loc, "action"), "a nested plan cannot be a fallback step")
    else:
        out.update(_call(action, ctx, (*loc, "action"), nested, number))
    out["why"] = ctx.text(step.get("description"), (*loc, "description")) or "(no description)"
    _common(step, out, ctx, loc, StepIndex([], None), number, nested)
    if out.get("on_failure") in ("fallback", "ask"):
        ctx.unsupported((*loc, "on_failure"), "a fallback step's on_failure is stop, skip or retry")
    out.pop("fallback", None)
    return out
