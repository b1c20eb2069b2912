"""A plan's graph drawn as text for ``plangate show`` (SPEC §12): what runs after what.

A plan that writes ``needs:`` is a graph. The reviewer sees it level by level: an action's
level is one more than the deepest action it needs, so the actions of one level never need
each other and may run at once (up to ``execution.max_parallel_actions``). Under each
action: its plan-wide position (``<- needs 1, 3``), the gate, its checks (preconditions
before each try, verify after it), what its failure does (retry, fallback steps, ask), and
for a nested plan the pinned version and its own actions, keyed ``<action>/<id>`` as the
journal and the log key them. Once run, each line carries the action's status.

Input is the JSON view of :mod:`controller.plan.rendering` (plain data); every text the plan
author wrote goes through :func:`controller.display.visible`, so a name holding a newline,
an escape sequence or a bidi override stays on its line and cannot fake another one.
Deterministic: the order is the graph's (levels, then ids), never a dict's or a thread's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from controller.display import visible
from controller.plan import graph
from controller.plan.hashing import canonical_order

#: What a failure does, in the graph's words (stop and skip change nothing in the drawing).
_MODES = {"retry": "retry", "ask": "ask a human (pause awaiting_approval)"}


def is_graph(actions: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the plan writes ``needs:`` anywhere (a chain keeps the plain action list)."""
    return any(a.get("needs") is not None for a in actions)


def levels(actions: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """The actions by level (1: needs nothing), each level in id order; [] on a bad graph."""
    needs = _needs(actions)
    built, problems = graph.build([(a, list(n)) for a, n in needs.items()])
    if built is None or problems:
        return []
    depth: dict[int, int] = {}
    for action in built.order:
        depth[action] = 1 + max((depth[n] for n in built.needs[action]), default=0)
    by_id = {a["id"]: a for a in actions}
    out: list[list[Mapping[str, Any]]] = [[] for _ in range(max(depth.values(), default=0))]
    for action in sorted(depth):
        out[depth[action] - 1].append(by_id[action])
    return out


def _needs(actions: Sequence[Mapping[str, Any]]) -> dict[int, tuple[int, ...]]:
    return graph.direct_needs([(a["id"], a.get("needs")) for a in actions])


def graph_lines(view: Mapping[str, Any], runs: Mapping[Any, Mapping[str, Any]]) -> list[str]:
    """The ``Graph:`` section of ``show`` for a plan with ``needs`` ([] for a chain)."""
    actions = view.get("actions") or []
    if not is_graph(actions):
        return []
    rows = levels(actions)
    if not rows:
        return ["Graph: (the needs do not form a graph: see validate)"]
    needs = _needs(actions)
    nested = {n["action"]: n for n in view.get("nested") or [] if isinstance(n, dict)}
    lines = [
        f"Graph (needs): {len(actions)} actions in {len(rows)} levels; "
        "the actions of one level may run at once"
    ]
    for pre in view.get("preconditions") or []:
        lines.append(f"  before the first action: {check_text('precondition', pre)}")
    for number, row in enumerate(rows, 1):
        lines.append(f"  level {number}")
        for action in row:
            lines.append("    " + _head(action, needs[action["id"]], runs.get(action["id"])))
            lines += ["        " + line for line in _under(action, runs, nested)]
    return lines


def _head(action: Mapping[str, Any], needed: Sequence[Any], run: Mapping[str, Any] | None) -> str:
    after = f"  <- needs {', '.join(str(n) for n in needed)}" if needed else ""
    status = f"  [{visible(str(run.get('status')))}]" if run else ""
    return (
        f"[{action['id']}] {callee(action)} - {visible(str(action.get('why', '')))}{after}{status}"
    )


def callee(action: Mapping[str, Any]) -> str:
    """``deploy`` or ``plan plans/common/notify``, made visible."""
    if action.get("tool"):
        return visible(str(action["tool"]))
    pinned = action.get("plan") or {}
    return f"plan {visible(str(pinned.get('path', '?')))}"


def _under(
    action: Mapping[str, Any],
    runs: Mapping[Any, Mapping[str, Any]],
    nested: Mapping[Any, Mapping[str, Any]],
) -> list[str]:
    lines = step_lines(action, runs)
    if action.get("plan"):
        lines += nested_lines(action, nested.get(action["id"]), runs)
    return lines


def step_lines(step: Mapping[str, Any], runs: Mapping[Any, Mapping[str, Any]]) -> list[str]:
    """The gate, checks and failure handling of one action or nested action."""
    lines = []
    if step.get("requires_approval"):
        lines.append("GATE: waits for a second approval before it runs")
    for pre in step.get("preconditions") or []:
        lines.append(check_text("precondition", pre))
    if step.get("verify"):
        lines.append(check_text("verify", step["verify"]))
    mode = step.get("on_failure")
    if mode in _MODES:
        lines.append(f"on failure: {_MODES[mode]}")
    fallback = step.get("fallback") or []
    if fallback:
        lines.append("on failure: run instead, in order:")
        for item in fallback:
            run = runs.get(item.get("id"))
            status = f"  [{visible(str(run.get('status')))}]" if run else ""
            lines.append(
                f"  [{visible(str(item.get('id')))}] {visible(str(item.get('tool')))} - "
                f"{visible(str(item.get('why', '')))}{status}"
            )
    return lines


def nested_lines(
    action: Mapping[str, Any],
    child: Mapping[str, Any] | None,
    runs: Mapping[Any, Mapping[str, Any]],
) -> list[str]:
    """The pinned plan and its actions (``<action>/<id>``), one level in."""
    pinned = action.get("plan") or {}
    lines = [f"runs plan {visible(str(pinned.get('path')))} pinned at {pinned.get('hash')}"]
    if child is None:
        return [*lines, "| (not read: run show inside the plans repository, or with --config)"]
    error = child.get("error")
    if isinstance(error, dict):
        code, message = visible(str(error.get("code"))), visible(str(error.get("message")))
        return [*lines, f"| cannot be read: {code}: {message}"]
    lines[0] += f' ("{visible(str(child.get("name", "")))}")'
    inner = child.get("actions") or []
    needs = _needs(inner)
    parent = action["id"]
    for item in inner:
        key = f"{parent}/{item['id']}"
        after = [f"{parent}/{n}" for n in needs.get(item["id"], ())]
        lines.append("| " + _head({**item, "id": key}, after, runs.get(key)))
        keyed = {**item, "fallback": [
            {**f, "id": f"{parent}/{f.get('id')}"} for f in item.get("fallback") or []
        ]}  # fmt: skip
        lines += ["|     " + line for line in step_lines(keyed, runs)]
    return lines


def check_text(kind: str, check: Mapping[str, Any]) -> str:
    """``precondition lock_free {"name": "web"}: $.free equals true`` and the verify forms."""
    tool = check.get("tool")
    if tool is None:
        return f"{kind}: {expect_text(check.get('expect'))} (over its own result)"
    params = _json(check.get("params") or {})
    polling = ""
    if kind == "verify":
        timeout, interval = check.get("timeout"), check.get("interval")
        every = f"every {interval:g} s" if interval else "every 5 s"
        polling = f", polled {every} for up to {timeout:g} s" if timeout else ", once"
    guards = check.get("guards") or []
    guarded = "".join(f", guard {visible(str(g.get('param')))} {guard_text(g)}" for g in guards)
    return f"{kind} {visible(str(tool))} {params}{polling}{guarded}: {expect_text(check['expect'])}"


def expect_text(clause: Any) -> str:
    """``$.status equals "ok" and $.n in [1, 2]``."""
    items = clause if isinstance(clause, list) else [clause]
    parts = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        operator = next((k for k in item if k != "path"), "equals")
        parts.append(
            f"{visible(str(item.get('path')))} {operator.replace('_', ' ')} "
            f"{_json(item.get(operator))}"
        )
    return " and ".join(parts) or "?"


def _json(value: Any) -> str:
    """JSON of a value, its mappings in the hash's order: the order the tool gets them in."""
    return visible(json.dumps(canonical_order(value), ensure_ascii=False))


def guard_text(guard: Mapping[str, Any]) -> str:
    """``matches "^a$", one of ["x"], min 0`` (as :func:`controller.plan.guards.describe`)."""
    parts = []
    if guard.get("matches") is not None:
        parts.append(f"matches {json.dumps(guard['matches'])}")
    if guard.get("one_of") is not None:
        parts.append(f"one of {json.dumps(guard['one_of'], ensure_ascii=False)}")
    for bound in ("min", "max"):
        if guard.get(bound) is not None:
            parts.append(f"{bound} {guard[bound]:g}")
    return visible(", ".join(parts))
