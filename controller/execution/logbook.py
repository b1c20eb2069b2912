"""``EXECUTION_LOG.md``: the human-readable record of a plan's execution (SPEC §7).

Written next to PLAN.yml at the engine's checkpoints and rendered from the journal (whose
records are already redacted), so it always agrees with it. The one exception: "Params
(resolved)" quotes every value the plan's author wrote (a literal, ``$<plan.name>``, an
``$<inputs.*>`` its authors filled: a top-level plan's own, a nested plan's
:func:`controller.plan.refs.authored_inputs`) as the frozen plan wrote it and only what
another reference filled in as the journal recorded it
(:func:`controller.plan.refs.authored`, round 64: a literal equal to a secret recorded
``***`` told its author a right guess of the secret from a wrong one). Layout, meant to
read well on GitHub::

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
    *Values the plan wrote are shown as written; values a reference filled in as resolved...*
    **Result:** (cut at ``limits.max_result_bytes``)
    **Outputs captured:** one bullet per output
    **Error:** `E_...`: message (for failed, skipped and in-doubt actions)
    **Checks:** one bullet per precondition and verify of the last try, with its result

Between the header and the sections: a Mermaid flowchart of the actions and their ``needs``
(GitHub draws it), each node showing the action's id, tool and outcome, and the plan's own
preconditions with their results. Node labels hold only ids, tool names (a restricted
alphabet) and statuses, so plan text cannot break out of the diagram.

Code blocks use a fence longer than any backtick run in their content, so no tool output can
close the fence and inject markdown. Plan- and git-supplied text (name, plan id, approver,
tool, why, params, results, errors) is put on one line with its control, zero-width and bidi
characters escaped (:mod:`controller.display`), so it cannot rewrite what a reader sees.

The log's own marks (its icons, the ``·`` between facts, ``—`` for a fact it lacks, ``…``
where it cuts a value) are written through :func:`mark`: within :func:`ascii_marks` each is
its ASCII form (:data:`ASCII_MARKS`), which the controller renders where the record's
checkout would not give the marks back (round 80: ``✅`` under ``working-tree-encoding=
ISO-8859-1``, which git checks out as its UTF-8 bytes and reads back as ``â\x9c\x85``, so
``git status`` listed every such log modified and a person's ``git commit -a`` committed it
as other text). Where the record still would not come back (round 83: the plan's name, a
``why``, a parameter, a gate's preview or a tool's output holds a character the folder's
encoding cannot hold), :func:`escaped` writes each such character, whoever wrote it, as its
HTML numeric character reference (``&#x2014;``: a Markdown view shows ``—``), reversibly
(:func:`unescaped`); a record that comes back is never changed.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.display import visible, visible_json
from controller.errors import PlangateError
from controller.plan.refs import authored

if TYPE_CHECKING:
    from controller.plan.schema import Action, FallbackStep, Precondition

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

#: The controller's own marks in its records (the log's icons, separators and dashes, the cut
#: sign of the log and of PLAN.yml's ``execution:`` block) and the ASCII each is written as
#: where the record's checkout would not give them back (round 80): chosen here, for every
#: mark. None holds ``|`` (a table cell), ``#`` (Mermaid's entities) or starts a line.
ASCII_MARKS = {
    "✅": "[ok]",
    "❌": "[x]",
    "⏭️": "[skip]",
    "⚠️": "[!]",
    "⏳": "[..]",
    "⏸️": "[pause]",
    "🛑": "[stop]",
    "▫️": "[ ]",
    "·": "-",
    "—": "-",
    "…": "...",
}
_ASCII: ContextVar[bool] = ContextVar("ascii_marks", default=False)


def mark(char: str) -> str:
    """The controller's mark ``char`` (one of :data:`ASCII_MARKS`, or ``""``) as the record
    being rendered writes it: itself, or within :func:`ascii_marks` its ASCII form."""
    return ASCII_MARKS.get(char, char) if _ASCII.get() else char


def ascii_marks_on() -> bool:
    """Is the record being rendered written with :data:`ASCII_MARKS`?"""
    return _ASCII.get()


#: What :func:`escaped` writes a character as: its HTML numeric character reference, which
#: every Markdown view shows as the character itself (round 83).
_REFERENCE = re.compile(r"&#x([0-9A-F]{1,6});")
#: the characters of that form: written as they are
_FORM = frozenset("&#x;0123456789ABCDEF")
#: Within :func:`escaping`: what the record's checkout holds (its size is counted escaped).
_HELD: ContextVar[Callable[[str], bool] | None] = ContextVar("held", default=None)


def escaped(text: str, held: Callable[[str], bool]) -> str:
    """``text`` with every character ``held`` says the record's checkout cannot hold written
    as its HTML numeric character reference (``—``: ``&#x2014;``; round 83: the plan's name,
    an action's ``why``, a parameter as written, a tool's output, under ``working-tree-encoding=
    ISO-8859-1``), and, where any is, each ``&`` before a ``#`` as ``&#x26;`` so the form is
    reversible (:func:`unescaped`). Run on the rendered record, after redaction (the journal
    and the params it quotes are redacted before any of it is rendered). ``text`` as it is
    where ``held`` holds every character: no other record changes."""
    lost = [char for char in dict.fromkeys(text) if char not in _FORM and not held(char)]
    if not lost:
        return text
    found = re.compile("&(?=#)|[" + "".join(re.escape(char) for char in lost) + "]")
    return found.sub(lambda m: f"&#x{ord(m.group(0)):X};", text)


@contextlib.contextmanager
def escaping(held: Callable[[str], bool]) -> Iterator[None]:
    """Within: the log's size (:data:`MAX_LOG_BYTES`) is counted as :func:`escaped` writes it
    (a reference is up to 10 bytes for a character's 2 to 4; this thread's rendering only)."""
    token = _HELD.set(held)
    try:
        yield
    finally:
        _HELD.reset(token)


def _size(text: str) -> int:
    """The bytes ``text`` takes in the record (escaped within :func:`escaping`)."""
    held = _HELD.get()
    return len((text if held is None else escaped(text, held)).encode("utf-8"))


def unescaped(text: str) -> str:
    """The text :func:`escaped` was given (references of another form are left as they are)."""
    return _REFERENCE.sub(_referenced, text)


def _referenced(match: re.Match[str]) -> str:
    point = int(match.group(1), 16)
    return chr(point) if point <= 0x10FFFF else match.group(0)


@contextlib.contextmanager
def ascii_marks() -> Iterator[None]:
    """Within: every :func:`mark` is its ASCII form (this thread's rendering only)."""
    token = _ASCII.set(True)
    try:
        yield
    finally:
        _ASCII.reset(token)


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


def render(
    header: LogHeader,
    sections: list[str],
    *,
    graph: str = "",
    plan_checks: str = "",
    waiting: str = "",
) -> str:
    """The whole log: header, graph, plan checks, then one section per action, at most
    :data:`MAX_LOG_BYTES` in all: the sections past it are named, not written (the journal
    keeps them; round 19: a thousand short sections passed 1 MiB)."""
    top = _render_header(header)
    for extra in (graph, plan_checks, waiting):
        if extra:
            top += "\n" + extra
    size = _size(top)
    kept: list[str] = []
    for section in sections:
        size += _size(section) + 6
        if size > MAX_LOG_BYTES:
            left = len(sections) - len(kept)
            kept.append(
                f"**{left} more sections are not written here:** the log stops at "
                f"{MAX_LOG_BYTES} bytes; `plangate status` and the controller's journal "
                "have every action.\n"
            )
            break
        kept.append(section)
    return top + "\n---\n\n" + "\n---\n\n".join(kept)


def render_gate(gate: dict[str, Any] | None) -> str:
    """The pause's preview (:mod:`controller.execution.gateview`): what approving it runs
    with, secrets as ``***``."""
    if not gate:
        return ""
    text = _json(gate, indent=2)
    fence = _fence(text)
    return (
        f"## Waiting for approval at action {_code(str(gate.get('action')))}\n\n"
        "Approving runs it with these values (secrets shown as `***`):\n\n"
        f"{fence}json\n{text}\n{fence}\n"
    )


#: EXECUTION_LOG.md at most (bytes); nothing the controller commits is over 1 MiB.
MAX_LOG_BYTES = 1_000_000


def _render_header(h: LogHeader) -> str:
    rows = [
        ("Plan", _cell_code(h.plan_id)),
        ("Hash", _cell_code(h.plan_hash)),
        ("Approved by", _inline(h.approved_by) or mark("—")),
        ("Approval commit", _cell_code(h.approval_commit) if h.approval_commit else mark("—")),
        ("Started", _inline(h.started_at) or mark("—")),
        ("Status", f"{_icon(h.status)} {_inline(h.status)}".strip()),
    ]
    if h.finished_at:
        rows.append(("Finished", _inline(h.finished_at)))
    table = "\n".join(f"| {key} | {value} |" for key, value in rows)
    return f"# Execution log: {_inline(h.name)}\n\n| | |\n|---|---|\n{table}\n"


@dataclass
class ActionView:
    """What the journal says about one action: its status and its last start and end records."""

    status: str = "pending"
    start: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    attempts: int = 0
    #: Check records (journal.py) of the last try.
    checks: list[dict[str, Any]] = field(default_factory=list)


def render_action(
    action: Action | FallbackStep,
    view: ActionView,
    limit: int,
    *,
    key: Any = None,
    fields: Mapping[str, Any] | None = None,
    inputs: Mapping[str, Any] | None = None,
    recorded: Callable[[Any], Any] | None = None,
) -> str:
    """One action's section (``start``/``end`` are journal records, see journal.py);
    ``key`` names an action of a nested plan (``"2/1"``); ``fields``: what ``$<plan.*>``
    reads in the action's plan (name, task, hash), and ``inputs``: what ``$<inputs.*>``
    reads where the authors wrote it (a top-level plan's own ``inputs:``; a nested plan's
    :func:`~controller.plan.refs.authored_inputs`, round 66), the author's text in its params."""
    status, start, end = view.status, view.start, view.end
    plan = getattr(action, "plan", None)
    what = action.tool or (f"plan {plan.path}" if plan is not None else "")
    shown = action.id if key is None else key
    if key is not None and "." not in str(action.id):
        kind = "Nested action"
    else:
        kind = "Fallback step" if isinstance(action.id, str) else "Action"
    lines = [f"## {kind} {_inline(str(shown))}: {_inline(what)}", ""]
    recovered = end is not None and end.get("recovered")
    facts = [
        f"**Tool:** {_code(what)}",
        f"**Status:** {_icon(status)} {status}" + (" (its fallback ran)" if recovered else ""),
    ]
    if start:
        facts.append(f"**Started:** {_inline(str(start.get('at', '')))}")
        if view.attempts > 1:
            facts.append(f"**Attempts:** {view.attempts}")
    if end and end.get("duration_ms") is not None:
        facts.append(f"**Duration:** {end['duration_ms']} ms")
    lines += [f" {mark('·')} ".join(facts) + "  ", f"**Why:** {_inline(action.why)}", ""]
    checks = (start or {}).get("guards") or (end or {}).get("guards")
    if checks:
        lines += _guard_lines(checks)
    if start is not None:
        params = _params(action, start.get("params"), fields, inputs, recorded)
        lines += _block("Params (resolved)", params, limit)
        lines += [_AUTHORED_NOTE, ""]
    if view.checks:
        lines += ["**Checks:**", ""] + [_check_line(c) for c in view.checks] + [""]
    if end is not None:
        lines += _end_lines(_own_result(action, end), limit)
    return "\n".join(lines) + "\n"


def _params(
    action: Action | FallbackStep,
    journaled: Any,
    fields: Mapping[str, Any] | None,
    inputs: Mapping[str, Any] | None,
    recorded: Callable[[Any], Any] | None,
) -> Any:
    """A step's params as the log shows them: built from their parts (``recorded``,
    :func:`~controller.plan.refs.recorded`, round 67), else (a value that part cannot be
    built again, a run without it) as the journal holds them, the author's wholly as
    written (:func:`~controller.plan.refs.authored`)."""
    if recorded is not None:
        try:
            shown = recorded(action.params)
        except PlangateError:
            shown = None
        if shown is not None:
            return shown
    return authored(action.params, journaled, fields, inputs)


def _own_result(action: Action | FallbackStep, end: dict[str, Any]) -> dict[str, Any]:
    """``end`` with a nested plan's result naming its plan's path as the author wrote it
    (round 67: ``plans/***`` for a folder named like a secret, while the Tool line quotes
    it as written); the rest of that result, the child's outputs, as recorded."""
    pin = getattr(action, "plan", None)
    result = end.get("result")
    if pin is None or not isinstance(result, dict) or "plan" not in result:
        return end
    return {**end, "result": {k: pin.path if k == "plan" else v for k, v in result.items()}}


#: What the params block quotes as written and what it redacts (round 64).
_AUTHORED_NOTE = (
    "*Values the plan wrote are shown as written; values a reference filled in as "
    "resolved, secrets as `***`.*"
)


def _guard_lines(checks: list[dict[str, Any]]) -> list[str]:
    """Each guard checked before the tool ran (SPEC §16), passed or not."""
    lines = ["**Guards:**", ""]
    for check in checks:
        verdict = "passed" if check.get("ok") else "FAILED"
        if not check.get("ok") and check.get("held_secret"):
            verdict += (
                " closed (the value held a secret's text: the tool would not get what is recorded)"
            )
        rule = _code_span(str(check.get("rule", "")), 300)
        lines.append(f"- {_code(str(check.get('param', '')))} {rule}: {verdict}")
    return [*lines, ""]


def _check_line(check: dict[str, Any]) -> str:
    """One check record as a bullet: kind, tool, verdict, why it failed, the result."""
    kind = str(check.get("kind", "check"))
    index = check.get("index")
    name = f"{kind} {index + 1}" if kind == "precondition" and isinstance(index, int) else kind
    tool = f" ({_code(str(check['tool']))})" if check.get("tool") else " (over the result)"
    verdict = f"{mark('✅')} holds" if check.get("ok") else f"{mark('❌')} does not hold"
    polls = check.get("polls") or 1
    extra = f" after {polls} polls" if polls > 1 else ""
    line = f"- {name}{tool}: {verdict}{extra}"
    failures = check.get("failures") or []
    if failures:
        line += ": " + _message("; ".join(str(f) for f in failures))
    error = check.get("error")
    if error:
        line += f": {_code(str(error.get('code')))} {_message(str(error.get('message', '')))}"
    if check.get("result") is not None:
        line += f" {mark('·')} result {_code_span(_json(check['result']), 300)}"
    return line


def render_checks(
    title: str, declared: Sequence[Precondition], records: list[dict[str, Any]]
) -> str:
    """The plan's preconditions and what the last run of them found."""
    if not declared:
        return ""
    last: dict[int, dict[str, Any]] = {}
    for record in records:
        last[int(record.get("index", 0))] = record
    lines = [f"**{title}:**", ""]
    for index, pre in enumerate(declared):
        found = last.get(index)
        if found is None:
            unchecked = f"{mark('▫️')} not checked yet"
            lines.append(f"- precondition {index + 1} ({_code(pre.tool)}): {unchecked}")
        else:
            lines.append(_check_line(found))
    return "\n".join(lines) + "\n"


# --- the graph --------------------------------------------------------------------------

_MERMAID_CLASSES = {
    "succeeded": "fill:#d4edda,stroke:#28a745",
    "failed": "fill:#f8d7da,stroke:#dc3545",
    "in_doubt": "fill:#fff3cd,stroke:#ffc107",
    "skipped": "fill:#e2e3e5,stroke:#6c757d",
    "running": "fill:#cce5ff,stroke:#007bff",
    "pending": "fill:#ffffff,stroke:#adb5bd",
}
_SAFE = re.compile(r"[^A-Za-z0-9_./-]")


#: Edges the log's graph draws at most: Mermaid's own default (``maxEdges``), past which
#: GitHub shows an error instead of the diagram.
MAX_GRAPH_EDGES = 500
#: Bytes the log's graph takes at most (it counts toward :data:`MAX_LOG_BYTES` with the
#: header; round 35: a dense plan's 79,800 edges made a 1.25 MB log).
MAX_GRAPH_BYTES = 120_000


def render_graph(
    actions: Sequence[Action],
    needs: Mapping[int, Sequence[int]],
    views: Mapping[int, ActionView],
    reduced: tuple[list[tuple[int, int]], int] | None = None,
) -> str:
    """A Mermaid flowchart: one node per action (id, tool, outcome), one edge per need that
    no other path of needs implies (the transitive reduction: what must run before what is
    drawn all the same), at most :data:`MAX_GRAPH_EDGES` edges and :data:`MAX_GRAPH_BYTES`
    bytes in all; a line under it says how many were not drawn (PLAN.yml has every one).
    ``reduced``: :func:`reduced_needs` of the actions, when the caller keeps it between
    renderings (the needs of a run never change)."""
    lines = ["```mermaid", "flowchart TD"]
    size = 0
    used: set[str] = set()
    drawn: set[int] = set()
    for action in actions:
        view = views.get(action.id) or ActionView()
        status = view.status if view.status in _MERMAID_CLASSES else "pending"
        end = view.end or {}
        shown = "fell back" if end.get("recovered") else view.status
        what = action.tool or (f"plan {action.plan.path}" if action.plan else "")
        name = _SAFE.sub("_", what)[:60]
        label = f"{action.id} {mark('·')} {name}<br/>{_icon(view.status)} {shown}"
        line = f'  a{action.id}["{label}"]:::{status}'
        size += len(line.encode("utf-8")) + 1
        if size > MAX_GRAPH_BYTES:
            break
        lines.append(line)
        used.add(status)
        drawn.add(action.id)
    edges, implied = reduced or reduced_needs([a.id for a in actions], needs)
    count = 0
    for need, action_id in edges:
        line = f"  a{need} --> a{action_id}"
        if count >= MAX_GRAPH_EDGES or need not in drawn or action_id not in drawn:
            continue
        if size + len(line) + 1 > MAX_GRAPH_BYTES:
            break
        size += len(line) + 1
        lines.append(line)
        count += 1
    left = len(edges) - count
    lines += [
        f"  classDef {name} {style}" for name, style in _MERMAID_CLASSES.items() if name in used
    ]
    lines.append("```")
    notes = []
    if len(drawn) < len(actions):
        notes.append(f"{len(actions) - len(drawn)} actions")
    if implied:
        notes.append(f"{implied} needs that other needs imply")
    if left:
        notes.append(f"{left} more needs")
    note = (
        f"\n*Not drawn: {', '.join(notes)} (the graph stops at {MAX_GRAPH_EDGES} edges and "
        f"{MAX_GRAPH_BYTES} bytes; PLAN.yml has every action and need).*\n"
        if notes
        else ""
    )
    return "**Graph:**\n\n" + "\n".join(lines) + "\n" + note


def reduced_needs(
    ids: Sequence[int], needs: Mapping[int, Sequence[int]]
) -> tuple[list[tuple[int, int]], int]:
    """The needs edges ``(need, action)`` no other path implies, in the actions' order, and
    how many were left out as implied (a need of a need's ancestors). Ancestors are bit
    sets over a topological order: linear in the edges times the actions / 64."""
    index = {action: position for position, action in enumerate(ids)}
    direct = {
        action: [n for n in dict.fromkeys(needs.get(action, ())) if n in index and n != action]
        for action in ids
    }
    waiting = {action: len(needed) for action, needed in direct.items()}
    after: dict[int, list[int]] = {action: [] for action in ids}
    for action, needed in direct.items():
        for n in needed:
            after[n].append(action)
    ready = [action for action in ids if not waiting[action]]
    ancestors: dict[int, int] = {}
    while ready:
        action = ready.pop()
        bits = 0
        for n in direct[action]:
            bits |= ancestors[n] | (1 << index[n])
        ancestors[action] = bits
        for later in after[action]:
            waiting[later] -= 1
            if not waiting[later]:
                ready.append(later)
    edges: list[tuple[int, int]] = []
    implied = 0
    for action in ids:
        if action not in ancestors:  # a cycle (never in a valid plan): every edge as written
            edges += [(n, action) for n in direct[action]]
            continue
        through = 0  # what the action's needs need, directly or not
        for n in direct[action]:
            through |= ancestors[n]
        for n in direct[action]:
            if through >> index[n] & 1:
                implied += 1
            else:
                edges.append((n, action))
    return edges, implied


def _end_lines(end: dict[str, Any], limit: int) -> list[str]:
    lines: list[str] = []
    if "result" in end and end["result"] is not None:
        lines += _block("Result", end["result"], limit)
    outputs = end.get("outputs") or {}
    if outputs:
        lines += ["**Outputs captured:**", ""]
        lines += [
            f"- {_code(name)}: {_code_span(_json(value), 300)}" for name, value in outputs.items()
        ]
        lines.append("")
    error = end.get("error")
    if error:
        message = _message(str(error.get("message", "")))
        lines += [f"**Error:** {_code(str(error.get('code')))}: {message}", ""]
    return lines


def _block(title: str, value: Any, limit: int) -> list[str]:
    text = _json(value, indent=2)
    if len(text.encode("utf-8")) > limit:
        text = text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
        text += f"\n{mark('…')} (cut at {limit} bytes)"
    fence = _fence(text)
    return [f"**{title}:**", "", f"{fence}json", text, fence, ""]


def _json(value: Any, indent: int | None = None) -> str:
    separators = None if indent else (", ", ": ")
    return visible_json(json.dumps(value, ensure_ascii=False, indent=indent, separators=separators))


def _fence(text: str) -> str:
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def _code_span(text: str, limit: int) -> str:
    if len(text) > limit:
        text = text[:limit] + mark("…")
    text = text.replace("\n", " ")
    ticks = "`" * (max((len(m) for m in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _icon(status: str) -> str:
    """The status's icon as the record being rendered writes it (``""``: none)."""
    return mark(ICONS.get(status, ""))


def _inline(text: str) -> str:
    """Plan text on one line, inert: no markup of its own (a link, an image that loads
    when the log is viewed, bold text posing as the log's own), no HTML, no table cell.

    Whitespace runs (newlines, carriage returns included) become one space, so a multi-line
    ``why`` cannot break the table or the list; other hidden characters are shown escaped.
    """
    escaped = _MD_INLINE.sub(r"\\\1", _one_line(text))
    return escaped.replace("&", "&amp;").replace("<", "&lt;")


#: What makes inline markdown: emphasis, code, links and images (``[``), escapes, cells; an
#: underscore only where it could open or close emphasis (``email_send`` stays as it is).
_MD_INLINE = re.compile(r"([\\`*\[\]|]|(?<![^\W_])_|_(?![^\W_]))")


def _message(text: str) -> str:
    """A message that carries what tools said (stderr, output): one code span, where no
    markdown or HTML is read."""
    return _code_span(_one_line(text), 4000)


def _code(text: str) -> str:
    """Plan text as a code span (where ``<`` is literal, so it is not turned into ``&lt;``)."""
    return _code_span(_one_line(text), 300)


def _cell_code(text: str) -> str:
    """A code span in a table row: GFM splits cells on ``|`` even inside code spans."""
    return _code(text).replace("|", "\\|")


def _one_line(text: str) -> str:
    return visible(" ".join(text.split()))
