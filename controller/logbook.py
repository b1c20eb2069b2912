"""``EXECUTION_LOG.md``: the human-readable record of a plan's execution (SPEC §7).

Written next to PLAN.yml at the engine's checkpoints and rendered from the journal (whose
records are already redacted), so it always agrees with it. Layout, meant to read well on
GitHub::

    # Execution log: <plan name>

    | | |
    |---|---|
    | Plan | `plans/x` |
    | Hash | `sha256:...` |
    | Approved by | alice@example.com |
    | Approval commit | `abc123...` |
    | Started | 2026-01-01T10:00:00Z |
    | Status | ✅ completed |

    ---

    ## Action 1: email_list
    **Tool:** `email_list` · **Status:** ✅ succeeded · **Started:** ... · **Duration:** 12 ms
    **Why:** Get unread customer emails

    **Params (resolved):**
    ```json
    {...}
    ```
    **Result:** (cut at ``limits.max_result_bytes``)
    **Outputs captured:** one bullet per output
    **Error:** `E_...`: message (for failed, skipped and in-doubt actions)

Code blocks use a fence longer than any backtick run in their content, so no tool output can
close the fence and inject markdown.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.schema import Action

ICONS = {
    "succeeded": "✅",
    "completed": "✅",
    "failed": "❌",
    "skipped": "⏭️",
    "in_doubt": "⚠️",
    "running": "⏳",
    "executing": "⏳",
    "awaiting_approval": "⏸️",
    "stopped": "⏸️",
    "aborted": "🛑",
    "pending": "▫️",
}
_BACKTICKS = re.compile(r"`+")


@dataclass
class LogHeader:
    """The facts at the top of the log."""

    name: str
    plan_id: str
    plan_hash: str
    approved_by: str
    approval_commit: str
    started_at: str
    status: str
    finished_at: str | None = None


def render(header: LogHeader, sections: list[str]) -> str:
    """The whole log: header, then one section per action (pending ones included)."""
    return _render_header(header) + "\n---\n\n" + "\n---\n\n".join(sections)


def _render_header(h: LogHeader) -> str:
    rows = [
        ("Plan", f"`{h.plan_id}`"),
        ("Hash", f"`{h.plan_hash}`"),
        ("Approved by", _inline(h.approved_by) or "—"),
        ("Approval commit", f"`{h.approval_commit}`" if h.approval_commit else "—"),
        ("Started", h.started_at or "—"),
        ("Status", f"{ICONS.get(h.status, '')} {h.status}".strip()),
    ]
    if h.finished_at:
        rows.append(("Finished", h.finished_at))
    table = "\n".join(f"| {key} | {value} |" for key, value in rows)
    return f"# Execution log: {_inline(h.name)}\n\n| | |\n|---|---|\n{table}\n"


@dataclass
class ActionView:
    """What the journal says about one action: its status and its last start and end records."""

    status: str = "pending"
    start: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    attempts: int = 0


def render_action(action: Action, view: ActionView, limit: int) -> str:
    """One action's section (``start``/``end`` are journal records, see journal.py)."""
    status, start, end = view.status, view.start, view.end
    lines = [f"## Action {action.id}: {_inline(action.tool)}", ""]
    facts = [f"**Tool:** `{_inline(action.tool)}`", f"**Status:** {ICONS.get(status, '')} {status}"]
    if start:
        facts.append(f"**Started:** {start.get('at', '')}")
        if view.attempts > 1:
            facts.append(f"**Attempts:** {view.attempts}")
    if end and end.get("duration_ms") is not None:
        facts.append(f"**Duration:** {end['duration_ms']} ms")
    lines += [" · ".join(facts) + "  ", f"**Why:** {_inline(action.why)}", ""]
    if start is not None:
        lines += _block("Params (resolved)", start.get("params"), limit)
    if end is not None:
        lines += _end_lines(end, limit)
    return "\n".join(lines) + "\n"


def _end_lines(end: dict[str, Any], limit: int) -> list[str]:
    lines: list[str] = []
    if "result" in end and end["result"] is not None:
        lines += _block("Result", end["result"], limit)
    outputs = end.get("outputs") or {}
    if outputs:
        lines += ["**Outputs captured:**", ""]
        lines += [f"- `{name}`: {_code_span(_json(value), 300)}" for name, value in outputs.items()]
        lines.append("")
    error = end.get("error")
    if error:
        lines += [f"**Error:** `{error.get('code')}`: {_inline(str(error.get('message', '')))}", ""]
    return lines


def _block(title: str, value: Any, limit: int) -> list[str]:
    text = _json(value, indent=2)
    if len(text.encode("utf-8")) > limit:
        text = text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
        text += f"\n… (cut at {limit} bytes)"
    fence = _fence(text)
    return [f"**{title}:**", "", f"{fence}json", text, fence, ""]


def _json(value: Any, indent: int | None = None) -> str:
    separators = None if indent else (", ", ": ")
    return json.dumps(value, ensure_ascii=False, indent=indent, separators=separators)


def _fence(text: str) -> str:
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def _code_span(text: str, limit: int) -> str:
    if len(text) > limit:
        text = text[:limit] + "…"
    text = text.replace("\n", " ")
    ticks = "`" * (max((len(m) for m in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _inline(text: str) -> str:
    """Plan text on one line, with characters that would break the markdown escaped."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")
