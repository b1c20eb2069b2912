"""HTML for the page: server-rendered, no script, every untrusted string escaped.

Every value that comes from a plan, a commit, a tool or a log passes through :func:`esc`
(hidden characters shown as escapes by :func:`controller.display.visible`, then HTML
escaping). EXECUTION_LOG.md is rendered by markdown-it with raw HTML disabled and its own
link validation (no ``javascript:`` or ``data:`` links). The server also sends a
Content-Security-Policy that allows no script at all, so even a rendering mistake cannot run
code in a reviewer's browser.
"""

from __future__ import annotations

import html
import json
from typing import Any
from urllib.parse import quote

from controller.display import visible, visible_lines

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f8fa}
header{background:#24292f;color:#fff;padding:10px 24px;display:flex;gap:24px;align-items:center}
header a{color:#fff;text-decoration:none;font-weight:600}
main{padding:16px 24px;max-width:1200px}
h1{font-size:20px;margin:8px 0}h2{font-size:16px;margin:22px 0 8px}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d0d7de}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #eaeef2;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
code,pre{font:12px ui-monospace,monospace}pre{white-space:pre-wrap;word-break:break-all;margin:0}
.chip{display:inline-block;padding:1px 8px;border-radius:10px;background:#eaeef2;margin-right:6px}
.s-completed{background:#dafbe1}.s-failed,.s-invalid{background:#ffebe9}
.s-executing{background:#ddf4ff}.s-pending_approval,.s-awaiting_approval{background:#fff8c5}
.code{color:#cf222e;font-weight:600}.muted{color:#57606a}
.box{background:#fff;border:1px solid #d0d7de;padding:8px 12px}
"""


def esc(value: Any) -> str:
    """Any value as safe HTML text: hidden characters escaped, then HTML-escaped."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return html.escape(visible(text), quote=True)


def esc_block(text: str) -> str:
    """Text of several lines (JSON, a commit) for a ``<pre>``: its line breaks kept."""
    return html.escape(visible_lines(text), quote=True)


def plan_href(plan_id: str) -> str:
    return "/plan/" + quote(plan_id, safe="/")


def chip(status: str | None) -> str:
    name = status or "unknown"
    safe = "".join(c for c in name if c.isalnum() or c == "_")
    return f'<span class="chip s-{safe}">{esc(name)}</span>'


def page(title: str, body: str) -> bytes:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width">'
        f"<title>{esc(title)} · plangate</title><style>{STYLE}</style></head><body>"
        '<header><a href="/">plangate</a><a href="/audit">audit</a>'
        '<a href="/api/">json</a></header>'
        f"<main>{body}</main></body></html>"
    ).encode()


def table(head: list[str], rows: list[list[str]], empty: str = "nothing here") -> str:
    if not rows:
        return f'<p class="muted">{esc(empty)}</p>'
    cells = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


#: Statuses the overview shows in their own tables before the rest (failures: in one table).
SHOWN_ABOVE = ("pending_approval", "awaiting_approval", "executing", "failed", "invalid")


def overview(data: dict[str, Any]) -> bytes:
    counts = " ".join(f"{chip(s)}{n}" for s, n in sorted(data["counts"].items()))
    parts = [
        *_stuck(data.get("pass_failed")),
        f"<h1>Plans</h1><p>{data['total']} plans {counts}</p>",
    ]
    parts.append(_audit_line(data["audit"]))
    waiting = [
        s for s in data["sections"] if s["status"] in ("pending_approval", "awaiting_approval")
    ]
    for section in waiting:
        parts.append(
            _section(section, ["plan", "status", "still needs", "who may give it"], _waiting_row)
        )
    for section in (s for s in data["sections"] if s["status"] == "executing"):
        parts.append(_section(section, ["plan", "status", "progress", "last event"], _running_row))
    parts.append(f"<h2>Recent failures ({data['failures_total']})</h2>")
    parts.append(
        table(
            ["plan", "status", "code", "last event"],
            [_failure_row(r) for r in data["failures"]],
            "no failures",
        )
    )
    for section in data["sections"]:
        if section["status"] not in SHOWN_ABOVE:
            parts.append(_section(section, ["plan", "status", "hash", "last event"], _plain_row))
    return page("Plans", "".join(parts))


def _stuck(failure: dict[str, Any] | None) -> list[str]:
    """Why the controller's passes fail, above everything else (nothing while they complete)."""
    if not failure:
        return []
    return [
        '<div class="box"><p><b>The controller is not moving:</b> its passes fail since '
        f"{esc(failure['since'])} ({esc(failure['passes'])} in a row, the last at "
        f"{esc(failure['at'])}).</p>"
        f'<p><span class="code">{esc(failure["code"])}</span> {esc(failure["message"])}</p>'
        f"<p><b>Remedy</b> {esc(failure['remedy'])}</p></div>"
    ]


def _section(section: dict[str, Any], head: list[str], row: Any) -> str:
    status = section["status"]
    more = ""
    if section["pages"] > 1:
        nxt = section["page"] + 1
        if nxt <= section["pages"]:
            more = f'<p><a href="/?status={quote(status)}&amp;page={nxt}">next page</a></p>'
    title = f'<h2 id="{esc(status)}">{esc(status.replace("_", " "))} ({section["total"]})</h2>'
    return title + table(head, [row(p) for p in section["plans"]]) + more


def _link(plan_id: str) -> str:
    return f'<a href="{esc(plan_href(plan_id))}">{esc(plan_id)}</a>'


def _waiting_row(p: dict[str, Any]) -> list[str]:
    needs = p.get("needs") or {}
    who = ", ".join(needs.get("who") or []) or "nobody"
    if needs.get("not"):
        who += f" (not {needs['not']})"
    return [_link(p["plan"]), chip(p["status"]), esc(needs.get("missing", "")), esc(who)]


def _running_row(p: dict[str, Any]) -> list[str]:
    prog = p.get("progress") or {}
    text = f"{prog.get('done', 0)} done"
    if prog.get("running"):
        text += ", running " + ", ".join(str(r) for r in prog["running"])
    return [_link(p["plan"]), chip(p["status"]), esc(text), esc(p["last_event"])]


def _failure_row(p: dict[str, Any]) -> list[str]:
    code = f'<span class="code">{esc(p["code"])}</span>' if p.get("code") else ""
    return [_link(p["plan"]), chip(p["status"]), code, esc(p["last_event"])]


def _plain_row(p: dict[str, Any]) -> list[str]:
    return [
        _link(p["plan"]),
        chip(p["status"]),
        f"<code>{esc((p['hash'] or '-')[:19])}</code>",
        esc(p["last_event"]),
    ]


def _audit_line(audit: dict[str, Any] | None) -> str:
    if audit is None:
        return '<p class="muted">audit: not computed yet</p>'
    verdict = (
        "ok"
        if audit["ok"]
        else ("failed" if audit["ok"] is None else f"{audit['findings']} finding(s)")
    )
    runs = audit["executions"]
    return f'<p>audit of the branch: <a href="/audit">{esc(verdict)}</a>, {runs} executions</p>'


def commit_link(commit: str | None, url: str | None) -> str:
    if not commit:
        return "-"
    safe = "".join(c for c in str(commit) if c in "0123456789abcdef")[:64]
    target = url.replace("{commit}", safe) if url else f"/commit/{safe}"
    return f'<a href="{esc(target)}"><code>{esc(safe[:12])}</code></a>'


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def plan_page(plan_id: str, data: dict[str, Any], commit_url: str | None) -> bytes:
    doc = data.get("document") or {}
    meta = _mapping(doc.get("plan"))
    frozen = _mapping(doc.get("frozen"))
    row = data["row"]
    parts = [
        *_stuck(data.get("pass_failed")),
        f"<h1>{esc(meta.get('name', plan_id))}</h1>",
        f'<div class="box"><p><b>Plan</b> <code>{esc(plan_id)}</code> {chip(row["status"])}</p>',
        f"<p><b>Task</b> {esc(meta.get('task', ''))}</p>",
        f"<p><b>Hash</b> <code>{esc(data.get('hash') or '-')}</code> "
        f"({esc(_frozen_state(data, frozen))})</p>",
    ]
    if row.get("needs"):
        parts.append(f"<p><b>Still needs</b> {esc(row['needs']['missing'])}</p>")
    parts.append("</div>")
    parts += _problems(data.get("problems") or [])
    # a held folder's page has no document, only the controller's record (round 73)
    parts += _approval(
        doc.get("approval") or _mapping(data.get("record")).get("approval"), commit_url
    )
    parts += _actions(doc, data.get("live") or {}, data.get("tools") or {})
    parts += _graph(doc)
    if data.get("notes"):
        parts.append(
            "<h2>Recent events</h2><ul>"
            + "".join(f"<li>{esc(n)}</li>" for n in data["notes"])
            + "</ul>"
        )
    parts += _log(data.get("log"), data.get("log_cut", False))
    return page(plan_id, "".join(parts))


def _frozen_state(data: dict[str, Any], frozen: dict[str, Any]) -> str:
    if not frozen.get("hash"):
        return "not frozen"
    return "frozen" if frozen.get("hash") == data.get("hash") else "STALE: changed since frozen"


def _problems(problems: list[dict[str, Any]]) -> list[str]:
    if not problems:
        return []
    rows = [
        [
            f'<span class="code">{esc(p.get("code", ""))}</span>',
            esc(p.get("path") or ""),
            esc(p.get("message", "")),
        ]
        for p in problems
    ]
    return ["<h2>Problems</h2>", table(["code", "where", "message"], rows)]


def _approval(approval: Any, commit_url: str | None) -> list[str]:
    if not isinstance(approval, dict):
        return ["<h2>Approvals</h2><p class=muted>none recorded</p>"]
    listed = approval.get("approvals")
    entries: list[Any] = listed if isinstance(listed, list) else [approval]
    rows = [
        [
            esc(e.get("by", "?")),
            esc(e.get("at", "")),
            commit_link(e.get("commit"), commit_url),
            esc(approval.get("status", "")),
        ]
        for e in entries
        if isinstance(e, dict)
    ]
    extra = ""
    if approval.get("code"):
        code, message = esc(approval["code"]), esc(approval.get("message", ""))
        extra = f'<p><span class="code">{code}</span> {message}</p>'
    if approval.get("missing"):
        extra += f"<p>still missing: {esc(approval['missing'])}</p>"
    return ["<h2>Approvals</h2>", table(["by", "at", "commit", "status"], rows), extra]


def _actions(doc: dict[str, Any], live: dict[str, Any], tools: dict[str, str]) -> list[str]:
    execution = _mapping(doc.get("execution"))
    ran = {str(a.get("id")): a for a in execution.get("actions") or [] if isinstance(a, dict)}
    rows = []
    for action, key in _steps(doc, {**ran, **live}):
        state = {**ran.get(key, {}), **live.get(key, {})}
        params = state.get("params", action.get("params", {}))
        result = state.get("result", state.get("outputs"))
        error = state.get("error") or {}
        status = chip(state.get("status", "pending"))
        if isinstance(error, dict) and error.get("code"):
            status += (
                f' <span class="code">{esc(error["code"])}</span> {esc(error.get("message", ""))}'
            )
        gate = " <b>GATE</b>" if action.get("requires_approval") else ""
        rows.append(
            [
                esc(key),
                _tool_cell(action, gate, tools),
                esc(action.get("why", "")),
                f"<pre>{esc_block(json.dumps(params, indent=1, ensure_ascii=False))}</pre>",
                status,
                esc(f"{state['duration_ms']} ms") if state.get("duration_ms") is not None else "",
                f"<pre>{esc(_cut(json.dumps(result, ensure_ascii=False)))}</pre>"
                if result is not None
                else "",
            ]
        )
    return [
        "<h2>Actions</h2>",
        table(
            ["id", "tool", "why", "params", "status", "duration", "result / outputs"],
            rows,
            "no actions",
        ),
    ]


def _steps(doc: dict[str, Any], ran: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """Each action with its key, each followed by its fallback steps that ran (round 128: a
    fallback step in doubt or failed with its own code was shown nowhere)."""
    steps = []
    for action in doc.get("actions") or []:
        if not isinstance(action, dict):
            continue
        steps.append((action, str(action.get("id"))))
        for step in action.get("fallback") or []:
            if isinstance(step, dict) and str(step.get("id")) in ran:
                steps.append((step, str(step.get("id"))))
    return steps


def _tool_cell(action: dict[str, Any], gate: str, tools: dict[str, str]) -> str:
    name = str(action.get("tool", ""))
    mapped = esc(tools.get(name, ""))
    return f"<code>{esc(name)}</code>{gate}<br><span class=muted>{mapped}</span>"


def _cut(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def _graph(doc: dict[str, Any]) -> list[str]:
    actions = [a for a in doc.get("actions") or [] if isinstance(a, dict)]
    if not any("needs" in a for a in actions):
        return []
    lines = []
    for a in actions:
        needs = a.get("needs") or []
        arrow = ", ".join(str(n) for n in needs) if needs else "start"
        lines.append(f"{arrow} -> {a.get('id')} ({a.get('tool')})")
    return ["<h2>Graph</h2>", f"<pre>{esc_block(chr(10).join(lines))}</pre>"]


def _log(text: str | None, cut: bool) -> list[str]:
    if text is None:
        return []
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    note = '<p class="muted">(cut: the log is longer)</p>' if cut else ""
    return [
        "<h2>Execution log</h2>",
        f'<div class="box">{md.render(visible_lines(text))}</div>',
        note,
    ]


def audit_page(report: dict[str, Any], commit_url: str | None) -> bytes:
    if report.get("pending"):
        return page("Audit", "<h1>Audit</h1><p>being computed; reload in a moment</p>")
    head = f"<h1>Audit</h1><p>branch head {commit_link(report.get('head'), commit_url)}</p>"
    if report.get("error"):
        head += f'<p class="code">the audit failed: {esc(report["error"])}</p>'
    executions = [
        [
            _link(e["plan"]),
            commit_link(e.get("start_commit"), commit_url),
            esc(e.get("approver") or "?"),
            commit_link(e.get("approval_commit"), commit_url),
            "valid"
            if e.get("approval_valid") and e.get("hash_ok", True)
            else f'<span class="code">INVALID {esc(e.get("code") or "")}</span>',
            esc(e.get("outcome") or "running"),
        ]
        for e in report.get("executions", [])
    ]
    findings = [
        [
            f'<span class="code">{esc(f.get("kind", ""))}</span>',
            _link(f.get("plan", "")),
            commit_link(f.get("commit"), commit_url),
            esc(f.get("detail", "")),
        ]
        for f in report.get("findings", [])
    ]
    return page(
        "Audit",
        head
        + "<h2>Findings</h2>"
        + table(["kind", "plan", "commit", "detail"], findings, "no findings")
        + "<h2>Executions</h2>"
        + table(
            ["plan", "start", "approver", "approval", "verdict", "outcome"],
            executions,
            "no executions",
        ),
    )


def commit_page(commit: str, text: str) -> bytes:
    return page(
        commit[:12],
        f"<h1>Commit <code>{esc(commit[:12])}</code></h1><pre class=box>{esc_block(text)}</pre>",
    )


def commit_error(commit: str, error: dict[str, Any]) -> bytes:
    """The commit page when git cannot read the repository: the error, its code, remedy."""
    lines = [f"{error.get('code')}: {error.get('message')}"]
    lines += [f"{k}: {error[k]}" for k in ("path", "remedy") if error.get(k)]
    return page(
        commit[:12],
        f"<h1>Commit <code>{esc(commit[:12])}</code></h1>"
        f"<pre class=box>{esc_block(chr(10).join(lines))}</pre>",
    )


def not_found(what: str) -> bytes:
    return page("Not found", f"<h1>Not found</h1><p>{esc(what)}</p>")


def http_error(status: int, title: str, message: str, remedy: str) -> bytes:
    return page(title, f"<h1>{status} {esc(title)}</h1><p>{esc(message)}</p><p>{esc(remedy)}</p>")


def not_ready(message: str, remedy: str) -> bytes:
    return page(
        "Not ready",
        f"<h1>Not ready yet</h1><p>{esc(message)}</p><p>{esc(remedy)}</p>",
    )
