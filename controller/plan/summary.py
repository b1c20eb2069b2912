"""Why a plan is where it is, in one line, from the file alone (for ``status`` and ``show``).

The controller writes its findings into the plan (``validation``, ``approval``,
``execution``); this module reads them back: an invalid plan's first error, a refused
approval's code and message, what a partial approval still misses, a failed action's error,
the gate a paused plan waits at. Pure: parsed data in, text out.
"""

from __future__ import annotations

from typing import Any

_DONE = ("succeeded", "skipped")


def reason(data: Any, status: str | None = None) -> str | None:
    """One line saying why the plan waits, failed or was refused; None when nothing to say.
    ``status``: the plan's effective status when known (a human may have written another
    one into the file, which is ignored: an invalid plan set ``approved`` is still invalid)."""
    if not isinstance(data, dict):
        return None
    plan = _mapping(data.get("plan"))
    status = status or plan.get("status")
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
    found = ended_by(execution)
    if found is None:
        return None
    key, error = found
    code, message = error.get("code"), error.get("message")
    if key is None:  # the plan's own failure (a lost journal, a full one)
        return f"{code}: {message}"
    return f"{step_name(key)}: {code}: {message}"


def ended_by(execution: Any) -> tuple[Any, dict[str, Any]] | None:
    """What ended a failed run, as its outcome commit names it: ``(step id, error)``, the id
    None for a failure of the plan's own (``execution.error``: a lost or full journal).

    Else the first action (in plan order) not finished whose record holds a failure, and
    in it the LAST of its steps still failed: after the action failed, the fallback step
    that failed or is in doubt (``1.1``: the run ended there, and the action's own error is
    what the fallback was run for), a nested plan's step (``3/2``), else the action itself.
    An action finished (``succeeded``, or ``skipped``: a fallback that ended well) is passed
    over with every step under it (a nested step that failed before it was fallen back
    from). The one reading of a run's failure: ``status``'s reason, ``show``, the page."""
    if not isinstance(execution, dict):
        return None
    error = _mapping(execution.get("error"))  # written only for the run's own failure
    if error:
        return None, error
    groups: dict[str, list[dict[str, Any]]] = {}
    for step in execution.get("actions") or []:
        if isinstance(step, dict):
            groups.setdefault(_head(step.get("id")), []).append(step)
    for steps in groups.values():
        head = steps[0]
        if _head(head.get("id")) == str(head.get("id")) and head.get("status") in _DONE:
            continue  # finished: what failed under it was handled
        failed = [s for s in steps if _mapping(s.get("error")) and s.get("status") not in _DONE]
        if failed:
            return failed[-1].get("id"), _mapping(failed[-1].get("error"))
    return None


def step_name(key: Any) -> str:
    """``action 2``, ``action 3/1``, ``fallback step 1.1 of action 1``."""
    text = str(key)
    last = text.rsplit("/", 1)[-1]
    if "." in last:
        return f"fallback step {text} of action {text.rsplit('.', 1)[0]}"
    return f"action {text}"


def _head(key: Any) -> str:
    """The plan's action a step id is under: ``1`` of ``1``, ``1.2`` and ``1/3.1``."""
    return str(key).split("/", 1)[0].split(".", 1)[0]


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


def action_runs(data: Any) -> dict[int, dict[str, Any]]:
    """Per action id, what the controller recorded when it ran: status, duration, outputs,
    error (from ``execution.actions``)."""
    execution = _mapping(data.get("execution")) if isinstance(data, dict) else {}
    runs: dict[int, dict[str, Any]] = {}
    for action in execution.get("actions") or []:
        if isinstance(action, dict) and isinstance(action.get("id"), int):
            runs[action["id"]] = action
    return runs


def run_line(run: dict[str, Any]) -> str:
    """``succeeded in 240 ms; outputs {...}`` or ``failed in 3 ms: E_TOOL_FAILED: ...``."""
    import json

    text = str(run.get("status") or "?")
    if isinstance(run.get("duration_ms"), int | float):
        text += f" in {run['duration_ms']:g} ms"
    attempts = run.get("attempts")
    if isinstance(attempts, int) and attempts > 1:
        text += f" ({attempts} attempts)"
    error = _mapping(run.get("error"))
    if error:
        return f"{text}: {error.get('code')}: {error.get('message')}"
    outputs = run.get("outputs")
    if outputs:
        shown = json.dumps(outputs, ensure_ascii=False)
        text += f"; outputs {shown if len(shown) <= 200 else shown[:197] + '...'}"
    return text


def gate_values(data: Any, action: Any) -> dict[str, Any]:
    """The params the gated ``action`` will receive, resolved from the outputs recorded so
    far; secrets shown as ``***``; a value not known yet says why."""
    from controller.errors import PlangateError
    from controller.plan import refs

    runs = action_runs(data)
    ctx = refs.Context(
        inputs=_mapping(data.get("inputs")),
        plan=_mapping(data.get("plan")),
        approval=_mapping(data.get("approval")),
        outputs={i: _mapping(r.get("outputs")) for i, r in runs.items() if r.get("outputs")},
        secret=lambda name: "***",
    )
    values: dict[str, Any] = {}
    for key, value in action.params.items():
        try:
            values[key] = refs.resolve(value, ctx)
        except PlangateError as exc:
            values[key] = f"(not known yet: {exc.message})"
    return values
