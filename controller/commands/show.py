"""``plangate show PATH [--json]``: what a reviewer needs to see before approving a plan.

Each action's tool, why, params (references highlighted), outputs and failure policy, with
the plan's freeze state. ``--json`` prints the full model instead.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from controller.display import visible
from controller.plan.guards import describe as describe_guard

_REF = re.compile(r"\$<[^>]*>")


def show(path: str, as_json: bool = False, config_path: str | None = None) -> int:
    from controller.commands._shared import optional_config, print_problems
    from controller.plan.plans import load_plan, plan_file_in

    plan_file = plan_file_in(Path(path))
    config = optional_config(config_path)
    plan = load_plan(plan_file, config)
    if plan.model is None:
        print_problems(plan_file, plan.problems)
        return 1
    review = _review(plan, config)
    if as_json:
        body = {"hash": plan.hash, **review, **plan.model.model_dump(mode="json")}
        print(json.dumps(body, indent=2))
    else:
        color = sys.stdout.isatty()
        print("\n".join(_render(plan, color, review) + _flow_lines(plan, config)))
    return 0


def _review(plan: Any, config: Any) -> dict[str, Any]:
    """Risk, estimate and required approvals: from the catalog and policy when a config is
    given (what the controller will use), else as written in ``frozen:`` at freeze."""
    if config is None:
        frozen = plan.block("frozen")
        found = {k: frozen[k] for k in ("risk", "estimate", "policy") if k in frozen}
        return {**found, "source": "frozen"} if found else {}
    from controller.commands._shared import frozen_facts_for

    return {**(frozen_facts_for(plan, config) or {}), "source": "config"}


def _render(plan: Any, color: bool, review: dict[str, Any]) -> list[str]:
    model = plan.model
    bold = (lambda s: f"\033[1m{s}\033[0m") if color else (lambda s: s)
    lines = [
        bold(f"Plan: {visible(model.plan.name)}"),
        f"Task:    {visible(model.plan.task)}",
        f"Status:  {visible(model.plan.status)}",
        f"Hash:    {plan.hash}  ({_freeze_state(plan)})",
        *review_lines(review),
    ]
    if model.inputs:
        lines.append(f"Inputs:  {_json(model.inputs)}")
    for action in model.actions:
        lines += ["", bold(f"[{action.id}] {visible(action.tool)}") + f" - {visible(action.why)}"]
        if action.requires_approval:
            lines.append("    GATE: pauses here for a second approval before running")
        for key, value in action.params.items():
            lines.append(f"    param {visible(key)} = {_highlight(_json(value), color)}")
        for output in action.outputs:
            optional = " (optional)" if output.optional else ""
            lines.append(f"    output {output.name} <- {visible(output.path)}{optional}")
        lines.append(f"    on failure: {_policy(action)}")
        for guard in action.guards:
            lines.append(f"    guard {visible(guard.param)}: {visible(describe_guard(guard))}")
    return lines


def _flow_lines(plan: Any, config: Any) -> list[str]:
    """Where data from earlier actions goes (SPEC §16): needs the catalog's trust levels."""
    from controller.plan.flows import plan_flows

    if config is None:
        return ["", "Flows: (no config found: run with --config to see where outside data goes)"]
    flows = plan_flows(plan.model, config.tools)
    lines = ["", f"Flows ({len(flows)}):" if flows else "Flows: none (no param uses an output)"]
    lines += [f"    {visible(flow.describe())}" for flow in flows]
    return lines


def _freeze_state(plan: Any) -> str:
    if plan.frozen_hash is None:
        return "not frozen"
    return "frozen" if plan.frozen_hash == plan.hash else "STALE: changed since frozen"


def _policy(action: Any) -> str:
    text = action.on_failure
    if action.on_failure == "retry":
        text += f" up to {action.retries} times"
    if action.timeout:
        text += f"; timeout {action.timeout:g}s"
    return text


def _json(value: Any) -> str:
    return visible(json.dumps(value, ensure_ascii=False))


def _highlight(text: str, color: bool) -> str:
    if color:
        return _REF.sub(lambda m: f"\033[36m{m.group(0)}\033[0m", text)
    return _REF.sub(lambda m: f"«{m.group(0)}»", text)


def review_lines(review: dict[str, Any]) -> list[str]:
    """``Risk:``, ``Estimate:`` and ``Needs:`` lines (empty without a review)."""
    if not review:
        return []
    suffix = "  (as frozen)" if review.get("source") == "frozen" else ""
    lines = [f"Risk:    {visible(str(review.get('risk', '?')))}{suffix}"]
    estimate = review.get("estimate")
    if isinstance(estimate, dict):
        lines.append(f"Estimate: {format_estimate(estimate)}{suffix}")
    policy = review.get("policy")
    if isinstance(policy, dict):
        from controller.approval.policy import describe_record

        lines.append(f"Needs:   {visible(describe_record(policy))}{suffix}")
    return lines


def format_estimate(estimate: dict[str, Any]) -> str:
    seconds = float(estimate.get("seconds") or 0)
    cost = float(estimate.get("cost_usd") or 0)
    return f"{seconds:g} s, ${cost:.2f}"
