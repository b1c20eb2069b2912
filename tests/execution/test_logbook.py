"""EXECUTION_LOG.md rendering: readable sections, cut results, output that cannot break out."""

from __future__ import annotations

from pathlib import Path

from controller.execution.executor import Engine
from controller.execution.logbook import (
    ASCII_MARKS,
    ICONS,
    MAX_GRAPH_BYTES,
    MAX_GRAPH_EDGES,
    ActionView,
    LogHeader,
    ascii_marks,
    escaped,
    escaping,
    render,
    render_action,
    render_graph,
    unescaped,
)
from controller.plan.schema import Action
from tests.support.executor_kit import PY, make_plan, run

HEADER = LogHeader(
    "Rotate | keys",
    "plans/rotate",
    "sha256:" + "0" * 64,
    "bob@example.com",
    "abc123",
    "2026-01-01T00:00:00Z",
    "failed",
)


def test_header_lists_plan_hash_approver_commit_start_status() -> None:
    text = render(HEADER, [])
    assert text.startswith("# Execution log: Rotate \\| keys\n")
    for row in (
        "| Plan | `plans/rotate` |",
        "| Approved by | bob@example.com |",
        "| Approval commit | `abc123` |",
        "| Started | 2026-01-01T00:00:00Z |",
        "| Status | ❌ failed |",
    ):
        assert row in text


def test_fence_is_longer_than_any_backticks_in_the_result() -> None:
    action = Action(id=1, tool="t", why="w")
    start = {"t": "start", "id": 1, "attempt": 1, "at": "T", "params": {}}
    end = {
        "t": "end",
        "id": 1,
        "attempt": 1,
        "status": "succeeded",
        "duration_ms": 5,
        "result": {"md": "```\n# Injected heading\n````"},
        "outputs": {"o": "`x`"},
    }
    text = render_action(action, ActionView("succeeded", start, end, 1), 10_000)
    assert "`````json" in text  # 5 > the 4 backticks inside (JSON escapes the newlines)
    assert "**Duration:** 5 ms" in text and "✅ succeeded" in text
    assert '- `o`: ``"`x`"``' in text


def test_result_is_cut_at_the_limit_and_pending_actions_listed(tmp_path: Path) -> None:
    tools = {
        "big": {"kind": "exec", "argv": [PY, "-c", "print('q' * 5000)"]},
        "gate": {"kind": "echo"},
    }
    actions = [{"id": 1, "tool": "big"}, {"id": 2, "tool": "gate", "requires_approval": True}]
    config, plan_file = make_plan(
        tmp_path,
        actions,
        tools,
        extra_config={"limits": {"max_result_bytes": 1000, "max_actions": 10}},
    )
    assert run(Engine(config), plan_file).status == "awaiting_approval"
    log = (plan_file.parent / "EXECUTION_LOG.md").read_text()
    assert "(cut at 1000 bytes)" in log and "q" * 6000 not in log
    assert "## Action 2: gate" in log and "▫️ pending" in log
    assert "| Status | ⏸️ awaiting_approval |" in log


def test_the_graph_draws_needs_no_other_path_implies() -> None:
    actions = [Action(id=i, tool="t", why="w") for i in (1, 2, 3, 4)]
    needs = {1: (), 2: (1,), 3: (1,), 4: (2, 3, 1)}  # 1 -> 4 is implied by 1 -> 2 -> 4
    graph = render_graph(actions, needs, {})
    drawn = [line.strip() for line in graph.splitlines() if "-->" in line]
    assert drawn == ["a1 --> a2", "a1 --> a3", "a2 --> a4", "a3 --> a4"]
    assert "*Not drawn: 1 needs that other needs imply" in graph


def test_the_graph_of_a_dense_plan_stays_bounded() -> None:
    """Round 35: 400 actions each needing every earlier one drew 79,800 edges (1.25 MB)."""
    actions = [Action(id=i, tool="t", why="w") for i in range(1, 401)]
    dense = {i: tuple(range(1, i)) for i in range(1, 401)}
    graph = render_graph(actions, dense, {})
    assert graph.count("-->") == 399  # the chain: every other need is implied
    # a complete bipartite graph: no need is implied by another, so the cap draws them
    wide = {i: (tuple(range(1, 201)) if i > 200 else ()) for i in range(1, 401)}
    graph = render_graph(actions, wide, {})
    assert graph.count("-->") == MAX_GRAPH_EDGES
    assert f"{200 * 200 - MAX_GRAPH_EDGES} more needs" in graph
    assert len(graph.encode("utf-8")) <= MAX_GRAPH_BYTES + 1000


def test_resolved_params_quote_the_plans_literals_and_redact_what_references_filled() -> None:
    """Round 64: a literal param equal to a secret was recorded ``***`` for a right guess
    only; it is the author's text (in the committed plan already)."""
    action = Action(
        id=1,
        tool="t",
        why="w",
        params={"note": "r64-guess", "token": "$<secrets.TOK>", "title": "$<plan.name>"},
    )
    start = {
        "t": "start",
        "id": 1,
        "attempt": 1,
        "at": "T",
        "params": {"note": "***", "title": "***", "token": "***"},
    }
    plan = {"name": "r64-guess", "task": "t", "hash": "sha256:0"}
    text = render_action(action, ActionView("running", start, None, 1), 10_000, fields=plan)
    assert '"note": "r64-guess"' in text and '"title": "r64-guess"' in text
    assert '"token": "***"' in text
    assert "Values the plan wrote are shown as written" in text


def test_resolved_params_quote_the_plans_own_inputs_as_written() -> None:
    """Round 65: ``$<inputs.g>`` from the top-level plan's own ``inputs:`` is its author's
    literal; without them (an input a reference filled) it is shown as recorded. A nested
    plan's are passed in as ``refs.authored_inputs`` finds them (round 66)."""
    params = {"note": "$<inputs.g>", "mix": "r65-guess$<inputs.e>"}
    action = Action(id=1, tool="t", why="w", params=params)
    recorded = {"mix": "***", "note": "***"}
    start = {"t": "start", "id": 1, "attempt": 1, "at": "T", "params": recorded}
    view = ActionView("running", start, None, 1)
    own = {"g": "r65-guess", "e": ""}
    text = render_action(action, view, 10_000, fields={}, inputs=own)
    assert '"note": "r65-guess"' in text and '"mix": "r65-guess"' in text
    assert '"note": "***"' in render_action(action, view, 10_000, fields={})


def _full_log() -> str:
    """A log using every mark: header, graph, plan checks, a cut result, a check's result."""
    action = Action(id=1, tool="t", why="quote ✅ as written")
    start = {"t": "start", "id": 1, "attempt": 1, "at": "T", "params": {}}
    end = {"t": "end", "id": 1, "status": "succeeded", "duration_ms": 5,
           "result": {"said": "tool ✅ · … text" + "x" * 600}}  # fmt: skip
    check = {"kind": "verify", "tool": "t", "ok": False, "result": {"r": "y" * 400}}
    view = ActionView("succeeded", start, end, 1, [check])
    sections = [render_action(action, view, 512)]
    views = {1: view, 2: ActionView("in_doubt"), 3: ActionView("skipped")}
    actions = [Action(id=i, tool="t", why="w") for i in (1, 2, 3)]
    graph = render_graph(actions, {}, views)
    bare = LogHeader("n", "plans/n", "sha256:0", "", "", "", "awaiting_approval")
    return render(bare, sections, graph=graph) + render(HEADER, [])


def test_every_icon_has_one_ascii_form() -> None:
    """Round 80: each of the log's marks has its ASCII form, chosen in one table."""
    assert set(ICONS.values()) <= set(ASCII_MARKS)
    assert all(form.isascii() and "|" not in form and "#" not in form
               for form in ASCII_MARKS.values())  # fmt: skip


def test_ascii_marks_write_the_controllers_marks_in_ascii_and_quote_the_rest() -> None:
    """Round 80: within ``ascii_marks`` no mark of the controller's is written otherwise,
    while what the log quotes (the plan's ``why``, a tool's result) keeps its characters;
    outside it the log is as before."""
    plain = _full_log()
    assert "✅ succeeded" in plain and " · " in plain and "| Approved by | — |" in plain
    with ascii_marks():
        text = _full_log()
    assert "[ok] succeeded" in text and "[x] does not hold" in text and "[pause]" in text
    assert "| Approved by | - |" in text and "**Tool:** `t` - **Status:**" in text
    assert "... (cut at 512 bytes)" in text and "y…" not in text
    quoted = "quote ✅ as written", "tool ✅ · … text"
    assert all(q in text for q in quoted), text
    for q in quoted:
        text = text.replace(q, "")
    assert text.isascii(), sorted({c for c in text if not c.isascii()})
    assert _full_log() == plain  # the form holds only within


def test_a_cut_output_in_the_execution_block_is_marked_in_ascii_alike() -> None:
    """Round 80: the ``execution:`` block's cut sign is one of the controller's marks."""
    from controller.execution.checkpoints import _shown

    assert "… (cut;" in _shown("z" * 300)
    with ascii_marks():
        assert "zzz... (cut; 302 chars" in _shown("z" * 300)


def _latin1(char: str) -> bool:
    return ord(char) < 0x100


def test_escaped_writes_what_the_checkout_cannot_hold_as_references_reversibly() -> None:
    """Round 83 (r83logenc): in a record whose checkout would not give it back, each
    character the folder cannot hold is its HTML numeric reference, whoever wrote it (the
    plan's name, a tool's output), and an ``&`` before a ``#`` is one too: the text comes
    back exactly; a record holding nothing to escape is as it is."""
    text = "nm — named ✅ café &#x2014; &amp; & # 🚀 ⚠️"
    out = escaped(text, _latin1)
    assert out.isascii() is False and "café" in out  # Latin-1 holds it: as it is
    assert "nm &#x2014; named &#x2705;" in out and "&#x26;#x2014;" in out and "&amp; & #" in out
    assert "&#x1F680;" in out and "&#x26A0;&#xFE0F;" in out
    assert unescaped(out) == text
    assert escaped(text, lambda char: True) == text
    plain = "no & #x2014; to escape é"
    assert escaped(plain, _latin1) == plain  # no character lost: not even the & guarded
    assert unescaped("&#x110000; &#xZZ;") == "&#x110000; &#xZZ;"


def test_an_escaped_log_is_bounded_as_written() -> None:
    """Round 83: a reference is longer than the character's UTF-8: within ``escaping`` the
    log's bound counts the escaped size, so the committed log stays under it."""
    from controller.execution.logbook import MAX_LOG_BYTES

    section = "中" * 100_000 + "\n"  # 300 KB as UTF-8, 800 KB escaped
    sections = [section] * 3
    plain = render(HEADER, sections)
    assert plain.count(section) == 3
    with escaping(_latin1):
        bounded = render(HEADER, sections)
    assert bounded.count(section) == 1 and "more sections are not written" in bounded
    assert len(escaped(bounded, _latin1).encode()) <= MAX_LOG_BYTES
