"""Plan-then-execute YAML (``pte``) -> PLAN.yml.

The skill writes PLAN.yml's own shape with the older ``${...}`` references, plus
``approval``/``execution`` blocks that only a controller may write. References become
``$<...>`` (``${approval.approved_by}`` -> ``$<approval.by>``); the controller blocks are
dropped when they say nothing (approval pending, execution not started) and refused
otherwise: an approval or a run is made in git, never carried in by a file. Every other
field is kept as written, for validation to judge.
"""

from __future__ import annotations

from typing import Any

from controller.plan.convert.common import DEFAULT_STATUS, Ctx, Loc, carry_legacy, hidden_names

FORMAT = "pte"
_EMPTY_APPROVAL = {"status": "pending"}
_NOT_STARTED = ("not_started", "pending", None)
#: The remedy of a controller's block in the plan (round 125: the generic one, "change the
#: source ... or write PLAN.yml by hand", did not fit a hand-written PLAN.yml carrying one).
_REMOVE_BLOCK = (
    "delete the `{block}:` block from the plan and submit it again: {who}, no file carries it"
)


def convert(data: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "approval":
            _approval(value, ctx)
        elif key == "execution":
            _execution(value, ctx)
        elif key in ("frozen", "validation"):
            ctx.note((key,), "dropped: the controller writes it when it freezes the plan")
        else:
            out[key] = value
    plan = out.get("plan")
    if isinstance(plan, dict):
        status = plan.get("status")
        ctx.source_status = status if isinstance(status, str) else None
        if status not in (None, DEFAULT_STATUS, "draft"):
            ctx.note(("plan", "status"), f"status {status!r} not carried over")
        out["plan"] = {**plan, "status": status if status == "draft" else DEFAULT_STATUS}
    actions = out.get("actions")
    if isinstance(actions, list):
        out["actions"] = [_action(a, ctx, ("actions", i)) for i, a in enumerate(actions)]
    hidden_names(ctx, out.get("inputs"), ("inputs",))
    hidden_names(ctx, out.get("actions"), ("actions",))
    origin = {"format": FORMAT, **({"notes": ctx.notes} if ctx.notes else {})}
    metadata = out.get("metadata") if isinstance(out.get("metadata"), dict) else {}
    if "metadata" in out and not isinstance(out["metadata"], dict):
        ctx.invalid(("metadata",), "metadata must be a mapping")
    out["metadata"] = {"converted_from": origin, **(metadata or {})}
    return _ordered(out)


def _action(action: Any, ctx: Ctx, loc: Loc) -> Any:
    if isinstance(action, dict) and "params" in action:
        return {**action, "params": carry_legacy(ctx, action["params"], (*loc, "params"))}
    return action


def _approval(value: Any, ctx: Ctx) -> None:
    if value is None or value == _EMPTY_APPROVAL:
        ctx.note(("approval",), "dropped: approval pending")
        return
    ctx.unsupported(
        ("approval",),
        "an approval cannot be carried in a file: remove the "
        "block and approve in git (`plangate approve`) once the plan is frozen",
        _REMOVE_BLOCK.format(block="approval", who="a person approves in git once it is frozen"),
    )


def _execution(value: Any, ctx: Ctx) -> None:
    empty = (
        isinstance(value, dict)
        and value.get("status") in _NOT_STARTED
        and all(v is None for k, v in value.items() if k != "status")
    )
    if value is None or empty:
        ctx.note(("execution",), "dropped: execution not started")
        return
    ctx.unsupported(
        ("execution",),
        "an execution record cannot be carried in a file: only "
        "the controller writes it; remove the block",
        _REMOVE_BLOCK.format(block="execution", who="only the controller records a run"),
    )


def _ordered(out: dict[str, Any]) -> dict[str, Any]:
    order = (
        "plan",
        "metadata",
        "inputs",
        "available_tools",
        "preconditions",
        "on_failure",
        "limits",
        "actions",
    )
    first = {k: out[k] for k in order if k in out}
    return {**first, **{k: v for k, v in out.items() if k not in first}}
