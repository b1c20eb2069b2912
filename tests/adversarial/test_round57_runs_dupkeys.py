# ruff: noqa: E501
"""Round 57 (runs): a tool's JSON answer that names one member twice.

docs/execution.md, "Take the result in": a result enters only as I-JSON (RFC 7493), and
what Python's parser takes beyond it (``NaN``, lone surrogates, big numbers, deep nesting)
is ``E_TOOL_OUTPUT_INVALID``. RFC 7493 §2.3: "Objects in I-JSON messages MUST NOT have
members with duplicate names". RFC 8259 §4: with duplicate names "the behavior of software
that receives such an object is unpredictable" (some readers take the first, Python's
``json`` the last). So ``{"ok": false, "ok": true}`` is an answer whose meaning depends on
the reader: what the tool's author (or a log, or a human reading stdout in the log) read as
``false`` chooses that the plan goes on.

Lab ``dup``: an exec tool ``emit`` prints the raw text ``out/<tag>.txt`` holds (the
"outside world" the tool reports), ``chk`` is the same as an idempotent low-risk check
tool. Action 1 ``emit`` (a verify, or an output), action 2 ``rec`` takes the output. Alice
approves every plan; one pass.

Asserted: an answer with a member twice (top level, nested, spelled with a ``\\u`` escape,
in a list's object, through a check tool's precondition or a verify tool) is refused
``E_TOOL_OUTPUT_INVALID`` (or the step fails) and ``rec`` never ran; the control (each
name once) runs with the tool's value.

Result: every variant held: each answer with a name twice is E_TOOL_OUTPUT_INVALID (the
escaped spelling too), in an action, a precondition and a verify tool; the control runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

EMIT = """\
import sys
sys.stdout.write(open(sys.argv[1] + ".txt", encoding="utf-8").read())
"""

# id: (raw stdout of action 1 (or of the check tool), how action 1 reads it, runs?)
VERIFY = "    verify: {expect: {path: $.json.ok, equals: true}}\n"
OUT_TO = "    outputs: [{name: to, path: $.json.to}]\n"
OUT_DEEP = "    outputs: [{name: to, path: $.json.a.to}]\n"
OUT_LIST = "    outputs: [{name: to, path: '$.json.items[0].to'}]\n"
PRE = "    preconditions: [{tool: chk, params: {tag: CHK}, expect: {path: $.json.free, equals: true}}]\n"
VERIFY_TOOL = "    verify: {tool: chk, params: {tag: CHK}, expect: {path: $.json.ok, equals: true}, timeout: 1, interval: 1}\n"
VARIANTS: dict[str, tuple[str, str, bool]] = {
    "verify-top": ('{"ok": false, "ok": true}', VERIFY, False),
    "verify-escaped": ('{"ok": false, "\\u006fk": true}', VERIFY, False),
    "output-top": ('{"to": "ops@corp.example", "to": "evil@attacker.example"}', OUT_TO, False),
    "output-nested": (
        '{"a": {"to": "ops@corp.example", "to": "evil@attacker.example"}}',
        OUT_DEEP,
        False,
    ),
    "output-inlist": (
        '{"items": [{"to": "ops@corp.example", "to": "evil@attacker.example"}]}',
        OUT_LIST,
        False,
    ),
    "precondition": ('{"free": false, "free": true}', PRE, False),
    "verify-tool": ('{"ok": false, "ok": true}', VERIFY_TOOL, False),
    "control": ('{"ok": true, "to": "ops@corp.example"}', VERIFY + OUT_TO, True),
}
IDS = list(VARIANTS)
BROKEN: dict[str, Any] = {}


def _plan(vid: str) -> str:
    _, extra, _ = VARIANTS[vid]
    uses = "$<actions[1].outputs.to>" if "outputs" in extra else "done"
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: emit}, {name: chk}, {name: rec}]\nactions:\n"
        f"  - id: 1\n    tool: emit\n    why: w\n    params: {{tag: {vid}}}\n{extra}"
        f'  - id: 2\n    tool: rec\n    why: w\n    params: {{tag: {vid}, v: "{uses}"}}\n'
    )


def _build(root: Path) -> Lab:
    (root / "emit.py").write_text(EMIT)
    out = root / "out"
    out.mkdir()
    py, script = json.dumps(sys.executable), json.dumps(str(root / "emit.py"))
    lab = Lab(
        root / "dup",
        tools=(
            f"emit: {{kind: exec, argv: [{py}, {script}, '{out}/{{tag}}']}}\n"
            f"chk: {{kind: exec, argv: [{py}, {script}, '{out}/{{tag}}-chk'], idempotent: true, risk: low}}\n"
        ),
    )
    for vid, (raw, extra, _) in VARIANTS.items():
        if "tool: chk" in extra:
            (out / f"{vid}.txt").write_text('{"ok": true}')
            (out / f"{vid}-chk.txt").write_text(raw)
        else:
            (out / f"{vid}.txt").write_text(raw)
        lab.write(vid, _plan(vid).replace("tag: CHK", f"tag: {vid}"))
    lab.commit("plans")
    lab.run()
    for vid in IDS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r57-dupkeys", _build)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_one_name_one_value(lab: Lab, vid: str) -> None:
    runs = VARIANTS[vid][2]
    calls = lab.calls(vid)
    plan = lab.plan(vid)
    execution = json.dumps(plan.get("execution"), default=str)
    if runs:
        assert len(calls) == 1, execution[:800]
        assert json.loads(calls[0]["stdin"])["v"] == "ops@corp.example", calls
        return
    assert calls == [], f"rec ran with {calls[0]['stdin']}: {execution[:600]}"
    assert plan["plan"]["status"] == "failed", execution[:600]
    assert "E_TOOL_OUTPUT_INVALID" in execution, execution[:800]
