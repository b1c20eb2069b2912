"""Why a plan is where it is, in one line, from the file alone (for ``status`` and ``show``).

The controller writes its findings into the plan (``validation``, ``approval``,
``execution``); this module reads them back: an invalid plan's first error, a refused
approval's code and message, what a partial approval still misses, a failed action's error,
the gate a paused plan waits at. Pure: parsed data in, text out.
"""

from __future__ import annotations

from typing import Any

_DONE = ("succeeded", "skipped")


def reason(data: Any) -> str | None:
    """One line saying why the plan waits, failed or was refused; None when nothing to say."""
    if not isinstance(data, dict):
        return None
    plan = _mapping(data.get("plan"))
    status = plan.get("status")
    approval = _mapping(data.get("approval"))
    if status == "invalid":
        return _invalid(_mapping(data.get("validation")))
    if status == "failed":
        return _failed(_mapping(data.get("execution")))
    if status == "awaiting_approval":
        return _gate(data)
    if approval.get("status") == "refused" and status in ("pending_approval", "failed"):
        return f"approval refused: {approval.get('code')}: {approval.get('message')}"
    if approval.get("status") == "partial" and status == "pending_approval":
        return f"more approvals needed: {approval.get('missing')}"
    if status == "pending_approval":
        frozen = _mapping(data.get("frozen"))
        return "waiting for an approval" if frozen.get("hash") else "waiting to be frozen"
    return None


def _invalid(validation: dict[str, Any]) -> str | None:
    errors = [e for e in validation.get("errors") or [] if isinstance(e, dict)]
    if not errors:
        return None
    first = errors[0]
    line = f" line {first['line']}" if first.get("line") else ""
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{first.get('code')}{line}: {first.get('message')}{more}"


def _failed(execution: dict[str, Any]) -> str | None:
    for action in execution.get("actions") or []:
        error = _mapping(action.get("error")) if isinstance(action, dict) else {}
        if error and action.get("status") not in _DONE:
            return f"action {action.get('id')}: {error.get('code')}: {error.get('message')}"
    return None


def _gate(data: dict[str, Any]) -> str | None:
    done = {
        a.get("id")
        for a in _mapping(data.get("execution")).get("actions") or []
        if isinstance(a, dict) and a.get("status") in _DONE
    }
    for action in data.get("actions") or []:
        if isinstance(action, dict) and action.get("id") not in done:
            return (
                f"paused before action {action.get('id')} ({action.get('tool')}): "
                "approve it to continue, or abort"
            )
    return None


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
