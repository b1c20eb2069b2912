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

_REF = re.compile(r"\$<[^>]*>")
# C0/C1 controls, and format characters that hide text or reverse its direction (Trojan Source)
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def show(path: str, as_json: bool = False, config_path: str | None = None) -> int:
    from controller.commands._shared import optional_config, print_problems
    from controller.plans import load_plan, plan_file_in

    plan_file = plan_file_in(Path(path))
    plan = load_plan(plan_file, optional_config(config_path))
    if plan.model is None:
        print_problems(plan_file, plan.problems)
        return 1
    if as_json:
        print(json.dumps({"hash": plan.hash, **plan.model.model_dump(mode="json")}, indent=2))
    else:
        color = sys.stdout.isatty()
        print("\n".join(_render(plan, color)))
    return 0


def _render(plan: Any, color: bool) -> list[str]:
    model = plan.model
    bold = (lambda s: f"\033[1m{s}\033[0m") if color else (lambda s: s)
    lines = [
        bold(f"Plan: {_visible(model.plan.name)}"),
        f"Task:    {_visible(model.plan.task)}",
        f"Status:  {_visible(model.plan.status)}",
        f"Hash:    {plan.hash}  ({_freeze_state(plan)})",
    ]
    if model.inputs:
        lines.append(f"Inputs:  {_json(model.inputs)}")
    for action in model.actions:
        lines += ["", bold(f"[{action.id}] {_visible(action.tool)}") + f" - {_visible(action.why)}"]
        if action.requires_approval:
            lines.append("    GATE: pauses here for a second approval before running")
        for key, value in action.params.items():
            lines.append(f"    param {_visible(key)} = {_highlight(_json(value), color)}")
        for output in action.outputs:
            optional = " (optional)" if output.optional else ""
            lines.append(f"    output {output.name} <- {_visible(output.path)}{optional}")
        lines.append(f"    on failure: {_policy(action)}")
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
    return _visible(json.dumps(value, ensure_ascii=False))


def _visible(text: str) -> str:
    """Plan text safe for a terminal: control, format and bidi characters shown escaped.

    A plan's author must not be able to hide or reorder what its reviewer reads.
    """
    return _HIDDEN.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def _highlight(text: str, color: bool) -> str:
    if color:
        return _REF.sub(lambda m: f"\033[36m{m.group(0)}\033[0m", text)
    return _REF.sub(lambda m: f"«{m.group(0)}»", text)
