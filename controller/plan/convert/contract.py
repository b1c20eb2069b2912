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

from controller.plan.convert.common import Ctx, Loc, document, first_line, topo_order

FORMAT = "plan-contract"
ROOT_KEYS = (
    "plan_version",
    "plan_id",
    "plan_hash",
    "skill_id",
    "goal",
    "assumptions",
    "inputs",
    "steps",
    "estimates",
    "risk",
    "validation_issues",
    "policy_context",
    "llm",
    "status",
)
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
STEP_KEYS = (
    "step_id",
    "tool",
    "args",
    "description",
    "depends_on",
    "requires_approval",
    "timeout_ms",
)
POLICY_KEYS = ("policy_preset", "model", "max_steps", "max_tool_calls", "max_pages", "max_cost_usd")
CAPS = {
    "max_steps": "max_actions",
    "max_tool_calls": "max_tool_calls",
    "max_cost_usd": "max_cost_usd",
}


def convert(data: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    ctx.only_keys(data, (), ROOT_KEYS)
    if data.get("plan_version", 1) != 1:
        ctx.unsupported(("plan_version",), f"plan_version {data['plan_version']!r}; only 1")
    goal = ctx.text(data.get("goal"), ("goal",))
    assumptions = [
        ctx.text(a, ("assumptions", i))
        for i, a in enumerate(ctx.items(data.get("assumptions"), ("assumptions",)))
    ]
    task = goal
    if assumptions:
        task += "\n\nAssumptions:\n" + "\n".join(f"- {a}" for a in assumptions)
    inputs = ctx.obj(data.get("inputs") or {}, ("inputs",))
    actions = _actions(ctx.items(data.get("steps"), ("steps",)), ctx)
    policy = ctx.obj(data.get("policy_context") or {}, ("policy_context",))
    ctx.only_keys(policy, ("policy_context",), POLICY_KEYS)
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
        step = ctx.obj(item, loc, "a step object")
        ctx.only_keys(step, loc, STEP_KEYS)
        step_id = ctx.text(step.get("step_id"), (*loc, "step_id"))
        if step_id in records:
            ctx.invalid((*loc, "step_id"), f"step_id {step_id!r} is used twice")
        records[step_id] = (step, loc)
    deps = {
        sid: [d for d in ctx.items(s.get("depends_on"), (*loc, "depends_on"))]
        for sid, (s, loc) in records.items()
    }
    for sid, wanted in deps.items():
        for index, dep in enumerate(wanted):
            if dep not in records:
                ctx.invalid((*records[sid][1], "depends_on", index), f"no step {dep!r}")
    order = topo_order(list(records), {k: [d for d in v if d in records] for k, v in deps.items()})
    if order is None:
        ctx.unsupported(("steps",), "depends_on forms a cycle")
        return []
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
        "params": ctx.obj(step.get("args") or {}, (*loc, "args")),
    }
    timeout = ctx.seconds(step.get("timeout_ms"), (*loc, "timeout_ms"), millis=True)
    if timeout is not None:
        action["timeout"] = timeout
    if step.get("requires_approval") is True:
        action["requires_approval"] = True
    return action
