"""The task/step plan (``toon-plan``: JSON, TOON or the markdown plan format) -> PLAN.yml.

Steps become actions (``action`` is the tool, ``parameters`` the params), ordered so each
comes after what it depends on. Step and task ``dependencies`` become ``needs`` (a task's
dependency: each of its steps needs every step of that task). With
``parallel_execution: false`` each action also needs the one before it, so nothing runs
concurrently. Tasks themselves run nothing; they are kept whole in ``metadata.tasks``.
"""

from __future__ import annotations

from typing import Any

from controller.plan.convert.common import (
    ANY,
    BOOL,
    OBJECT,
    STR,
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

FORMAT = "toon-plan"
# The source's shapes (common.Ctx.fields): every field this converter reads, with its type.
ROOT: Shape = {
    "metadata": ANY,
    "tasks": ANY,
    "steps": ANY,
    "shared_inputs": ANY,
    "workflow_config": OBJECT,
}
STEP: Shape = {
    "id": ANY,
    "task_id": ANY,
    "action": ANY,
    "parameters": OBJECT,
    "step_type": ANY,
    "timeout": ANY,
    "dependencies": ANY,
    "retry_count": ANY,
    "title": STR,
}
TASK: Shape = {
    "id": ANY,
    "name": STR,
    "description": ANY,
    "steps": ANY,
    "dependencies": ANY,
    "agent_type": ANY,
    "tools_required": ANY,
    "estimated_time": ANY,
}
CONFIG: Shape = {"parallel_execution": BOOL, "error_recovery": BOOL, "max_retries": ANY}
STEP_TYPES = ("AGENT_EXECUTION", "DATA_PROCESSING", "ANALYSIS", "VISUALIZATION", "CONDITION_CHECK")
DEFAULT_TIMEOUT = 300
DEFAULT_RETRY_COUNT = 3


def convert(data: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    data = ctx.fields(data, (), ROOT)
    meta = ctx.obj(data.get("metadata"), ("metadata",))
    title = ctx.text(meta.get("title"), ("metadata", "title"))
    objective = ctx.text(meta.get("objective"), ("metadata", "objective"), required=False)
    created = meta.get("created_at")
    if created is not None and not isinstance(created, str):
        ctx.invalid(("metadata", "created_at"), f"expected a time as a string, got {created!r}")
    config = ctx.fields(data.get("workflow_config", {}), ("workflow_config",), CONFIG)
    tasks = _tasks(ctx.items(data.get("tasks"), ("tasks",)), ctx)
    steps = _steps(ctx.items(data.get("steps"), ("steps",)), tasks, ctx)
    actions = _actions(steps, tasks, config, ctx)
    shared = data.get("shared_inputs")
    # TOON writes an empty object as a bare key; the format's own example writes `{}`
    inputs = ctx.obj({} if shared in (None, "{}") else shared, ("shared_inputs",))
    extra_meta = {k: v for k, v in meta.items() if k not in ("title", "objective", "created_at")}
    metadata: dict[str, Any] = {}
    if extra_meta:
        metadata["source"] = extra_meta
    if tasks:
        metadata["tasks"] = [task for task, _ in tasks.values()]
    return document(
        ctx,
        fmt=FORMAT,
        name=first_line(title),
        task=objective or title,
        created=created if isinstance(created, str) else None,
        inputs=inputs,
        metadata=metadata,
        actions=actions,
    )


def _tasks(items: list[Any], ctx: Ctx) -> dict[str, tuple[dict[str, Any], Loc]]:
    tasks: dict[str, tuple[dict[str, Any], Loc]] = {}
    for index, item in enumerate(items):
        loc: Loc = ("tasks", index)
        task = ctx.fields(item, loc, TASK, "a task object")
        task_id = ctx.text(task.get("id"), (*loc, "id"))
        plain_id(ctx, task_id, (*loc, "id"), "task id")
        if task_id in tasks:
            ctx.invalid((*loc, "id"), f"task id {task_id!r} is used twice")
        tasks[task_id] = (item if isinstance(item, dict) else task, loc)  # kept whole
    return tasks


def _steps(items: list[Any], tasks: dict[str, Any], ctx: Ctx) -> dict[str, tuple[dict, Loc]]:
    steps: dict[str, tuple[dict[str, Any], Loc]] = {}
    if not items:
        ctx.invalid(("steps",), "a plan needs at least one step")
    for index, item in enumerate(items):
        loc: Loc = ("steps", index)
        step = ctx.fields(item, loc, STEP, "a step object")
        step_id = ctx.text(step.get("id"), (*loc, "id"))
        plain_id(ctx, step_id, (*loc, "id"))
        numbered_id(ctx, step_id, (*loc, "id"), index, "step id")
        if step_id in steps:
            ctx.invalid((*loc, "id"), f"step id {step_id!r} is used twice")
        task_id = step.get("task_id")
        if tasks and task_id not in tasks:
            ctx.invalid((*loc, "task_id"), f"task {task_id!r} does not exist")
        kind = step.get("step_type")
        if kind == "PARALLEL_EXECUTION":
            ctx.unsupported(
                (*loc, "step_type"),
                "PARALLEL_EXECUTION: write the parallel "
                "steps as their own steps with dependencies (they become needs)",
            )
        elif kind is not None and kind not in STEP_TYPES:
            ctx.invalid((*loc, "step_type"), f"unknown step_type {kind!r}")
        steps[step_id] = (step, loc)
    for task_id, (task, loc) in tasks.items():
        for index, step_id in enumerate(ctx.items(task.get("steps"), (*loc, "steps"))):
            plain_id(ctx, step_id, (*loc, "steps", index))
            owner = steps.get(step_id, ({}, ()))[0].get("task_id")
            if step_id not in steps:
                ctx.note((*loc, "steps", index), f"step {step_id!r} is listed but not defined")
            elif owner != task_id:
                ctx.invalid((*loc, "steps", index), f"step {step_id!r} belongs to {owner!r}")
    return steps


def _dependencies(
    steps: dict[str, tuple[dict, Loc]], tasks: dict[str, Any], ctx: Ctx
) -> dict[str, list[str]]:
    by_task: dict[str, list[str]] = {}
    for step_id, (step, _) in steps.items():
        by_task.setdefault(str(step.get("task_id")), []).append(step_id)
    deps: dict[str, list[str]] = {}
    for step_id, (step, loc) in steps.items():
        own = ctx.items(step.get("dependencies"), (*loc, "dependencies"))
        for index, dep in enumerate(own):
            plain_id(ctx, dep, (*loc, "dependencies", index), "dependency")
            if dep not in steps:
                ctx.invalid((*loc, "dependencies", index), f"step {dep!r} does not exist")
        found = [d for d in own if d in steps]
        task, task_loc = tasks.get(str(step.get("task_id")), ({}, ()))
        for index, dep_task in enumerate(
            ctx.items(task.get("dependencies"), (*task_loc, "dependencies"))
        ):
            plain_id(ctx, dep_task, (*task_loc, "dependencies", index), "dependency")
            if dep_task not in tasks:
                ctx.invalid((*task_loc, "dependencies", index), f"task {dep_task!r} does not exist")
            found += by_task.get(dep_task, [])
        deps[step_id] = list(dict.fromkeys(found))
    return deps


def _actions(
    steps: dict[str, tuple[dict, Loc]], tasks: dict[str, Any], config: dict[str, Any], ctx: Ctx
) -> list[dict[str, Any]]:
    deps = _dependencies(steps, tasks, ctx)
    order = topo_order(list(steps), deps)
    if order is None:
        ctx.unsupported(("steps",), "the dependencies form a cycle")
        return []
    numbered_as_written(ctx, order, steps, "parameters")
    number = {step_id: index + 1 for index, step_id in enumerate(order)}
    graph = any(deps.values())
    parallel = config.get("parallel_execution", False)
    actions = []
    for step_id in order:
        step, loc = steps[step_id]
        action = _action(step, loc, number[step_id], tasks, config, ctx)
        if graph:
            needs = {number[d] for d in deps[step_id]}
            if not parallel and number[step_id] > 1:
                needs.add(number[step_id] - 1)
            action["needs"] = sorted(needs)
        actions.append(action)
    if len(order) != len(steps) or order != list(steps):
        ctx.note(("steps",), "steps reordered so each comes after its dependencies")
    return actions


def _action(
    step: dict[str, Any],
    loc: Loc,
    number: int,
    tasks: dict[str, Any],
    config: dict[str, Any],
    ctx: Ctx,
) -> dict[str, Any]:
    tool = ctx.tool_name(
        ctx.text(step.get("action"), (*loc, "action")) or "unknown", (*loc, "action")
    )
    task = tasks.get(str(step.get("task_id")), ({}, ()))[0]
    what = step.get("title") or tool
    kind = step.get("step_type")
    why = f"{what} ({str(kind).lower().replace('_', ' ')})" if kind else str(what)
    if task.get("name"):
        why = f"{task['name']}: {why}"
    action: dict[str, Any] = {"id": number, "tool": tool, "why": why}
    action["params"] = step.get("parameters", {})
    timeout = ctx.seconds(step.get("timeout", DEFAULT_TIMEOUT), (*loc, "timeout"), millis=False)
    if timeout is not None:
        action["timeout"] = timeout
    action.update(_failure(step, loc, config, ctx))
    return action


def _failure(step: dict[str, Any], loc: Loc, config: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    if not config.get("error_recovery", False):
        if step.get("retry_count"):
            ctx.note((*loc, "retry_count"), "not retried: workflow_config.error_recovery is off")
        return {}
    count = step.get("retry_count", DEFAULT_RETRY_COUNT)
    cap = config.get("max_retries")
    for value, where in ((count, (*loc, "retry_count")), (cap, ("workflow_config", "max_retries"))):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100
        ):
            ctx.invalid(where, f"expected retries 0..100, got {value!r}")
            return {}
    attempts = min(count, cap) if cap is not None else count
    return {"on_failure": "retry", "retry": {"attempts": attempts}} if attempts else {}
