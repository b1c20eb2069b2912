"""Plan Contract v1 JSON (``plan-contract``) -> PLAN.yml.

``goal`` and ``assumptions`` become the task a reviewer reads; ``inputs`` stay inputs; each
step (``step_id``, ``tool``, ``args``) is an action; the caps of ``policy_context`` become
the plan's own ``limits`` (max_steps -> max_actions, max_tool_calls, max_cost_usd).
``max_pages`` has no PLAN.yml cap and is refused when set. What the planner's server
computed (ids, hash, estimates, risk, validation issues, model) is kept in metadata:
plangate computes its own hash, risk and estimate from its catalog. ``status`` is never
carried over: a converted plan always starts ``pending_approval``.
"""

from __future__ import annotations

from typing import Any

from controller.plan.convert.common import (
    ANY,
    BOOL,
    INT,
    LIST,
    NUMBER,
    OBJECT,
    STR,
    STRINGS,
    Ctx,
    Loc,
    Shape,
    document,
    first_line,
    numbered_as_written,
    numbered_id,
    plain_id,
    topo_order,
)

FORMAT = "plan-contract"
# The source's shapes (common.Ctx.fields): every field this converter reads, with its type.
ROOT: Shape = {
    "plan_version": INT,
    "plan_id": ANY,
    "plan_hash": ANY,
    "skill_id": STR,
    "goal": ANY,
    "assumptions": LIST,
    "inputs": OBJECT,
    "steps": ANY,
    "estimates": ANY,
    "risk": ANY,
    "validation_issues": ANY,
    "policy_context": OBJECT,
    "llm": ANY,
    "status": ANY,
}
METADATA_KEYS = (
    "plan_id",
    "plan_hash",
    "skill_id",
    "estimates",
    "risk",
    "validation_issues",
    "llm",
    "status",
)
STEP: Shape = {
    "step_id": ANY,
    "tool": ANY,
    "args": OBJECT,
    "description": ANY,
    "depends_on": STRINGS,
    "requires_approval": BOOL,
    "timeout_ms": ANY,
}
POLICY: Shape = {
    "policy_preset": ANY,
    "model": ANY,
    "max_steps": INT,
    "max_tool_calls": INT,
    "max_pages": ANY,
    "max_cost_usd": NUMBER,
}
CAPS = {
    "max_steps": "max_actions",
    "max_tool_calls": "max_tool_calls",
    "max_cost_usd": "max_cost_usd",
}


def convert(data: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    data = ctx.fields(data, (), ROOT)
    if data.get("plan_version", 1) != 1:
        ctx.unsupported(("plan_version",), f"plan_version {data['plan_version']!r}; only 1")
    goal = ctx.text(data.get("goal"), ("goal",))
    assumptions = [
        ctx.text(a, ("assumptions", i)) for i, a in enumerate(data.get("assumptions", []))
    ]
    task = goal
    if assumptions:
        task += "\n\nAssumptions:\n" + "\n".join(f"- {a}" for a in assumptions)
    inputs = data.get("inputs", {})
    actions = _actions(ctx.items(data.get("steps"), ("steps",)), ctx)
    policy = ctx.fields(data.get("policy_context", {}), ("policy_context",), POLICY)
    if policy.get("max_pages") is not None:
        ctx.unsupported(
            ("policy_context", "max_pages"),
            "PLAN.yml has no page cap; remove it (or null it) and let the tool enforce pages",
        )
    limits = {CAPS[k]: policy[k] for k in CAPS if policy.get(k) is not None}
    metadata = {k: data[k] for k in METADATA_KEYS if data.get(k) is not None}
    for key in ("policy_preset", "model"):
        if policy.get(key) is not None:
            metadata[key] = policy[key]
    if data.get("status") == "approved":
        ctx.note(("status",), "the source said approved; approval happens in git, not here")
    name = f"{data.get('skill_id')}: {first_line(goal, 80)}" if data.get("skill_id") else goal
    return document(
        ctx,
        fmt=FORMAT,
        name=first_line(name),
        task=task,
        inputs=inputs,
        metadata={"source": metadata} if metadata else None,
        actions=actions,
        extra={"limits": limits} if limits else None,
    )


def _actions(steps: list[Any], ctx: Ctx) -> list[dict[str, Any]]:
    if not steps:
        ctx.invalid(("steps",), "a plan needs at least one step")
    records: dict[str, tuple[dict[str, Any], Loc]] = {}
    for index, item in enumerate(steps):
        loc: Loc = ("steps", index)
        step = ctx.fields(item, loc, STEP, "a step object")
        step_id = ctx.text(step.get("step_id"), (*loc, "step_id"))
        plain_id(ctx, step_id, (*loc, "step_id"))
        numbered_id(ctx, step_id, (*loc, "step_id"), index, "step_id")
        if step_id in records:
            ctx.invalid((*loc, "step_id"), f"step_id {step_id!r} is used twice")
        records[step_id] = (step, loc)
    deps = {sid: list(s.get("depends_on", [])) for sid, (s, _) in records.items()}
    for sid, wanted in deps.items():
        for index, dep in enumerate(wanted):
            plain_id(ctx, dep, (*records[sid][1], "depends_on", index), "depends_on")
            if dep not in records:
                ctx.invalid((*records[sid][1], "depends_on", index), f"no step {dep!r}")
    order = topo_order(list(records), {k: [d for d in v if d in records] for k, v in deps.items()})
    if order is None:
        ctx.unsupported(("steps",), "depends_on forms a cycle")
        return []
    numbered_as_written(ctx, order, records, "args")
    number = {sid: i + 1 for i, sid in enumerate(order)}
    graph = any(deps.values())
    actions = []
    for sid in order:
        step, loc = records[sid]
        action = _action(step, loc, number[sid], ctx)
        if graph:
            action["needs"] = sorted(number[d] for d in deps[sid] if d in number)
        actions.append(action)
    return actions


def _action(step: dict[str, Any], loc: Loc, number: int, ctx: Ctx) -> dict[str, Any]:
    tool = ctx.tool_name(ctx.text(step.get("tool"), (*loc, "tool")) or "unknown", (*loc, "tool"))
    why = step.get("description")
    action: dict[str, Any] = {
        "id": number,
        "tool": tool,
        "why": ctx.text(why, (*loc, "description"))
        if why is not None
        else f"step {step.get('step_id')}: {tool}",
        "params": step.get("args", {}),
    }
    timeout = ctx.seconds(step.get("timeout_ms"), (*loc, "timeout_ms"), millis=True)
    if timeout is not None:
        action["timeout"] = timeout
    if step.get("requires_approval"):
        action["requires_approval"] = True
    return action
