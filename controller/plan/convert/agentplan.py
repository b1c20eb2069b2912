"""The Agent Plan schema (``agent-plan``: ChatRunner/RuleBasedPlanner JSON) -> PLAN.yml.

Each step's ``tool.kind`` is a one-key object naming the tool kind (``Navigate``,
``TypeText``, ``Custom``...): the kind in snake_case is the tool and its payload the params
(``Custom``: its ``name`` is the tool, its ``payload``/``args`` the params); ``tool.wait``
travels as the ``wait`` param, ``tool.timeout_ms`` becomes ``timeout`` in seconds. A
step's validation becomes ``verify``: a check tool named after the condition
(``ElementVisible`` -> ``element_visible``) polled until it answers ``{"ok": true}``.
Planner reasoning, overlays and step hints stay in metadata; known risks are shown in the
task.
"""

from __future__ import annotations

from typing import Any

from controller.plan.convert.common import (
    ANY,
    BOOL,
    LIST,
    OBJECT,
    STR,
    Ctx,
    Loc,
    Shape,
    check,
    document,
    first_line,
    numbered_id,
    plain_id,
    snake,
)
from controller.plan.refs import format_path

FORMAT = "agent-plan"
# The source's shapes (common.Ctx.fields): every field this converter reads, with its type.
ROOT: Shape = {
    "task_id": ANY,
    "title": ANY,
    "description": ANY,
    "created_at": STR,
    "meta": OBJECT,
    "steps": ANY,
    "overlays": ANY,
}
WRAPPER: Shape = {"overlays": ANY}
META: Shape = {"rationale": ANY, "risk_assessment": LIST, "vendor_context": ANY}
STEP: Shape = {
    "id": ANY,
    "title": ANY,
    "detail": STR,
    "tool": ANY,
    "validations": ANY,
    "requires_approval": BOOL,
    "metadata": OBJECT,
}
TOOL: Shape = {"kind": ANY, "wait": ANY, "timeout_ms": ANY}
CUSTOM: Shape = {"name": ANY, "payload": ANY, "args": ANY}
VALIDATION: Shape = {"description": ANY, "condition": ANY}
WAITS = ("dom_ready", "idle", "none")


def unwrap(data: dict[str, Any]) -> tuple[dict[str, Any], Loc, list[tuple[Loc, dict[str, Any]]]]:
    """The plan root: the object itself, or ``plan`` / ``plan.plan`` of an API answer; with
    what every wrapper level holds beside its ``plan`` (outermost first). Every level is
    kept: round 116 (agent-outer-overlays-dropped) found only the innermost wrapper's
    fields read, the outer ``overlays`` of ``{"plan": {"plan": ...}, "overlays": ...}``
    in no field."""
    loc: Loc = ()
    wrappers: list[tuple[Loc, dict[str, Any]]] = []
    while "steps" not in data and isinstance(data.get("plan"), dict) and len(data) <= 2:
        wrappers.append((loc, {k: v for k, v in data.items() if k != "plan"}))
        data, loc = data["plan"], (*loc, "plan")
    return data, loc, wrappers


def _overlays(ctx: Ctx, data: dict[str, Any], root: Loc, wrappers: list[tuple[Loc, Any]]) -> Any:
    """The overlays of every level that holds some: one level's as written, several keyed
    by where each stood (``overlays``, ``plan.overlays``...), never one in place of another."""
    levels = [(loc, ctx.fields(outer, loc, WRAPPER)) for loc, outer in wrappers]
    found = {
        format_path((*loc, "overlays")): fields["overlays"]
        for loc, fields in [*levels, (root, data)]
        if fields.get("overlays") is not None
    }
    return next(iter(found.values())) if len(found) == 1 else found or None


def convert(source: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    data, root, wrappers = unwrap(source)
    data = ctx.fields(data, root, ROOT)
    title = ctx.text(data.get("title"), (*root, "title"))
    description = ctx.text(data.get("description"), (*root, "description"), required=False)
    meta = ctx.fields(data.get("meta", {}), (*root, "meta"), META)
    risks = [str(r) for r in meta.get("risk_assessment", [])]
    task = description or title
    if risks:
        task += "\n\nKnown risks:\n" + "\n".join(f"- {r}" for r in risks)
    steps = ctx.items(data.get("steps"), (*root, "steps"))
    if not steps:
        ctx.invalid((*root, "steps"), "a plan needs at least one step")
    actions = [_action(s, i + 1, ctx, (*root, "steps", i)) for i, s in enumerate(steps)]
    first: dict[str, int] = {}
    for index, action in enumerate(actions):
        # a step's id keys its hints in metadata: said twice, the first step's would be
        # dropped (round 105); refused as the other formats refuse an id used twice
        step_id = action["_step_id"]
        if first.setdefault(step_id, index) != index:
            ctx.invalid(
                (*root, "steps", index, "id"),
                f"step id {step_id!r} is used twice (first by step {first[step_id] + 1})",
            )
    metadata: dict[str, Any] = {}
    for key in ("task_id",):
        if data.get(key) is not None:
            metadata[key] = data[key]
    for key in ("rationale", "vendor_context"):
        if meta.get(key) is not None:
            metadata[key] = meta[key]
    hints = {a["_step_id"]: a.pop("_hints") for a in actions if "_hints" in a}
    if hints:
        metadata["step_metadata"] = hints
    overlays = _overlays(ctx, data, root, wrappers)
    if overlays is not None:
        metadata["overlays"] = overlays
    for action in actions:
        action.pop("_step_id", None)
    return document(
        ctx,
        fmt=FORMAT,
        name=first_line(title),
        task=task,
        created=data.get("created_at"),
        metadata={"source": metadata} if metadata else None,
        actions=actions,
    )


def _action(step: Any, number: int, ctx: Ctx, loc: Loc) -> dict[str, Any]:
    step = ctx.fields(step, loc, STEP, "a step object")
    title = ctx.text(step.get("title"), (*loc, "title"))
    detail = step.get("detail", "")
    why = f"{title}: {detail}" if detail.strip() else title
    plain_id(ctx, step.get("id"), (*loc, "id"))
    numbered_id(ctx, step.get("id"), (*loc, "id"), number - 1)
    action: dict[str, Any] = {"id": number, "_step_id": str(step.get("id", number)), "why": why}
    action.update(_tool(step.get("tool"), ctx, (*loc, "tool")))
    validations = ctx.items(step.get("validations"), (*loc, "validations"))
    if len(validations) > 1:
        ctx.unsupported(
            (*loc, "validations"),
            f"{len(validations)} validations: PLAN.yml "
            "verifies an action with one check; split the step, one check each",
        )
    elif validations:
        action["verify"] = _verify(validations[0], ctx, (*loc, "validations", 0), action)
    if step.get("requires_approval"):
        action["requires_approval"] = True
    if step.get("metadata"):  # an empty map of hints has nothing to keep
        action["_hints"] = step["metadata"]
    return action


def _tool(value: Any, ctx: Ctx, loc: Loc) -> dict[str, Any]:
    tool = ctx.fields(value, loc, TOOL, "a tool object")
    name, payload, spelled = _variant(tool.get("kind"), ctx, (*loc, "kind"))
    if name == "custom":
        name, payload = _custom(payload, ctx, (*loc, "kind", spelled))
        spelled = name
    params = payload if isinstance(payload, dict) else {"value": payload}
    tool_name = ctx.tool_name(name, (*loc, "kind"), spelled)
    out: dict[str, Any] = {"tool": tool_name, "params": dict(params)}
    wait = tool.get("wait")
    if wait is not None:
        if wait not in WAITS:
            ctx.invalid((*loc, "wait"), f"wait is one of {', '.join(WAITS)}, got {wait!r}")
        elif "wait" in params:
            ctx.unsupported((*loc, "wait"), "the payload already has a `wait` param")
        else:
            out["params"]["wait"] = wait
    timeout = ctx.seconds(tool.get("timeout_ms"), (*loc, "timeout_ms"), millis=True)
    if timeout is not None:
        out["timeout"] = timeout
    return out


def _custom(payload: Any, ctx: Ctx, loc: Loc) -> tuple[str, Any]:
    """A ``Custom`` kind's tool name and params: ``payload`` or ``args``, never both."""
    custom = ctx.fields(payload, loc, CUSTOM, "an object with `name` and `payload`")
    name = ctx.text(custom.get("name"), (*loc, "name")) or "custom"
    if "payload" in custom and "args" in custom:
        ctx.unsupported(
            (*loc, "args"),
            "both `payload` and `args`: a tool call takes one set of params; "
            "write them in one of the two",
        )
    return name, custom.get("payload", custom.get("args", {}))


def _variant(kind: Any, ctx: Ctx, loc: Loc) -> tuple[str, Any, str]:
    """``{"Navigate": {...}}`` -> ``("navigate", {...}, "Navigate")``: the tool, its payload
    and the kind as written; a bare ``"Wait"`` has no payload."""
    if isinstance(kind, str) and kind:
        return snake(kind), {}, kind
    if isinstance(kind, dict) and len(kind) == 1:
        ((name, payload),) = kind.items()
        return snake(str(name)), payload if payload is not None else {}, str(name)
    ctx.invalid(loc, 'kind is one object naming the tool kind, e.g. {"Navigate": {"url": ...}}')
    return "unknown", {}, "unknown"


def _verify(validation: Any, ctx: Ctx, loc: Loc, action: dict[str, Any]) -> dict[str, Any]:
    validation = ctx.fields(validation, loc, VALIDATION, "a validation object")
    name, payload, spelled = _variant(validation.get("condition"), ctx, (*loc, "condition"))
    params = payload if isinstance(payload, dict) else {"value": payload}
    verify = check(ctx.tool_name(name, (*loc, "condition"), spelled), dict(params))
    if "timeout" in action:
        verify["timeout"] = action["timeout"]
    description = validation.get("description")
    if description is not None:
        action["why"] = (
            f"{action['why']} (verified: {ctx.text(description, (*loc, 'description'))})"
        )
    return verify
