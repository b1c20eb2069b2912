"""Round 41, how it is recorded: a failing tool's last stderr line carrying invisible or
direction-changing characters (``U+202E`` RIGHT-TO-LEFT OVERRIDE, ``U+200B`` ZERO WIDTH SPACE,
``U+2066`` LEFT-TO-RIGHT ISOLATE) reaches the controller's committed record. The controller
writes such characters as escapes wherever text reaches a person (docs/threat-model.md,
``display.py``): ``show``, ``status``, EXECUTION_LOG.md and its commit messages do.

One lab; one plan per character, each one exec action whose tool writes
``boom FAKE ok <char>gnp.exe`` to stderr and exits 3 (E_TOOL_FAILED, the message quotes that
last line); approved by Alice and run in one pass.

Asserted per variant: the plan failed with E_TOOL_FAILED and the raw character is in none of
the plan's committed files (PLAN.yml, EXECUTION_LOG.md at HEAD), nor the commit messages, nor
``status``/``show`` output.

**Broke** (all three, round 41): PLAN.yml's ``execution.actions[0].error.message`` holds the raw
character (``message: "f: ... exited with status 3: boom FAKE ok \u202egnp.exe"`` written
with U+202E itself: the YAML emitter escapes C0/C1 controls but not format characters), while
EXECUTION_LOG.md, the commit message, ``status`` and ``show`` write ``\u202e``.

Variant ``out-rlo``: a tool prints ``{"v": "invoice <U+202E>fdp.exe"}`` and the
action declares ``outputs: [{name: v, path: $.json.v}]``; it completes. **Broke** too:
PLAN.yml's ``execution.actions[0].outputs.v`` holds the raw U+202E (shown ``invoice exe.pdf``),
EXECUTION_LOG.md writes ``\\u202e``. A forge showing
PLAN.yml renders the line reversed (``...exe.png``). Should: escape them in PLAN.yml as well.

**Fixed** (same session's successor, 2026-11-29): the controller's YAML writer
(``plan/yamlio.py``) writes every character of ``display.HIDDEN`` (format, bidi, zero-width,
private-use, tag characters) as a ``\\uXXXX``/``\\UXXXXXXXX`` escape inside a double-quoted
scalar, whatever the value, so PLAN.yml's ``execution:`` block (and every block the controller
writes) reads back to the same value and shows what EXECUTION_LOG.md shows; its fallback
through ruamel is written all-ASCII when ruamel would write such a character raw.

Held (controls): ``out-ls``, ``out-nel``, ``out-bom`` (outputs holding U+2028, U+0085, U+FEFF:
PLAN.yml writes ``\\u2028``...; the plan completed) and ``out-surr`` (a lone surrogate:
E_TOOL_OUTPUT_INVALID, nothing used).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

CHARS = {"rlo": "\u202e", "zwsp": "\u200b", "lri": "\u2066"}
#: a declared output (``outputs: [{name: v, path: $.json.v}]``) holding U+202E
OUT = "\u202e"
#: held controls: outputs with characters YAML escapes (U+2028, NEL, BOM), and a lone
#: surrogate (refused: E_TOOL_OUTPUT_INVALID)
MORE = {"out-ls": 0x2028, "out-nel": 0x85, "out-bom": 0xFEFF, "out-surr": 0xD800}
F = """import sys
sys.stderr.write("boom FAKE ok " + chr(int(sys.argv[1], 16)) + "gnp.exe\\n")
sys.exit(3)
"""
OUT_TOOL = """import json, sys
print(json.dumps({"v": "invoice " + chr(int(sys.argv[1], 16)) + "fdp.exe"}))
"""


def _build(root: Path) -> Lab:
    lab = Lab(root)
    (root / "f.py").write_text(F)
    argv = json.dumps([sys.executable, str(root / "f.py"), "{c}"])
    (root / "o.py").write_text(OUT_TOOL)
    oargv = json.dumps([sys.executable, str(root / "o.py"), "{c}"])
    lab.write_config(tools=f"f: {{kind: exec, argv: {argv}}}\no: {{kind: exec, argv: {oargv}}}\n")
    lab.write(
        "out-rlo",
        "plan:\n  name: out-rlo\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: o}]\n"
        "actions:\n  - id: 1\n    tool: o\n    why: w\n    params: {c: '202e'}\n"
        "    outputs: [{name: v, path: $.json.v}]\n",
    )
    for v, ch in CHARS.items():
        lab.write(
            v,
            f"plan:\n  name: {v}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: f}]\n"
            "actions:\n  - id: 1\n    tool: f\n    why: w\n"
            f"    params: {{c: '{ord(ch):x}'}}\n",
        )
    lab.commit("plans")
    lab.run()
    for v, code in MORE.items():
        lab.write(
            v,
            f"plan:\n  name: {v}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: o}]\n"
            "actions:\n  - id: 1\n    tool: o\n    why: w\n"
            f"    params: {{c: '{code:x}'}}\n"
            "    outputs: [{name: v, path: $.json.v}]\n",
        )
    lab.commit("more")
    lab.run()
    for v in [*CHARS, "out-rlo", *MORE]:
        lab.set_status(v, "approved")
    lab.commit("approve them", ALICE)
    lab.run()
    status = lab.cli("status", "--config", str(lab.config))
    seen = {}
    for v in [*CHARS, "out-rlo", *MORE]:
        show = lab.cli("show", str(lab.repo / "plans" / v), "--config", str(lab.config))
        seen[v] = {
            "PLAN.yml": lab.git("show", f"HEAD:plans/{v}/PLAN.yml"),
            "EXECUTION_LOG.md": lab.git("show", f"HEAD:plans/{v}/EXECUTION_LOG.md"),
            "messages": lab.git("log", "--format=%B", "--", f"plans/{v}"),
            "status": status.stdout + status.stderr,
            "show": show.stdout + show.stderr,
        }
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r41-bidirecord", lambda root: _build(root / "lab"))


def test_every_plan_failed_with_its_code(lab: Lab) -> None:
    for v in CHARS:
        assert lab.refusal(v) is None
        assert "E_TOOL_FAILED" in lab.seen[v]["PLAN.yml"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("v", list(CHARS))
def test_invisible_character_not_committed_raw(lab: Lab, v: str) -> None:
    where = [k for k, text in lab.seen[v].items() if CHARS[v] in text]  # type: ignore[attr-defined]
    assert where == []


def test_invisible_character_in_an_output_not_committed_raw(lab: Lab) -> None:
    seen = lab.seen["out-rlo"]  # type: ignore[attr-defined]
    assert "completed" in seen["status"]
    assert [k for k, text in seen.items() if OUT in text] == []


@pytest.mark.parametrize("v", list(MORE))
def test_other_characters_in_an_output_held(lab: Lab, v: str) -> None:
    seen = lab.seen[v]  # type: ignore[attr-defined]
    if v == "out-surr":
        assert "E_TOOL_OUTPUT_INVALID" in seen["PLAN.yml"]
    else:
        assert "completed" in lab.status()[f"plans/{v}"]["status"]
    assert [k for k, text in seen.items() if chr(MORE[v]) in text] == []
