# ruff: noqa: E501
"""Round 48, what ``show`` displays vs what runs: a param value holding one character that
most terminals and fonts draw as nothing, of a category round 46's blank rule (every Zs but
the plain space) and the hidden set do not name by category alone: Khmer inherent vowels
(Mn), the Braille blank (So), a variation selector supplement (Mn), and format characters
outside the common bidi/zero-width set (invisible times, Mongolian vowel separator, a tag
space, the Arabic letter mark, shorthand overlap, an Egyptian joiner, the Arabic number
sign, BOM, ZWNJ).

One plan, one action, one param per character (``a<c>b``); ``plangate show`` on it once.
Asserted per variant: the character never reaches the output raw, and its escape does.

``record-*``: an exec tool prints five of these characters in its stdout, stderr (exit 0 and
1) and a JSON value captured as an output; asserted: none is written raw in the history
(PLAN.yml, EXECUTION_LOG.md, commit messages) or ``status`` (text and JSON).

All held.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import Lab
from test_round2_execution_kit import shared

CHARS = {
    "khmer-aq": "\u17b4",
    "khmer-aa": "\u17b5",
    "braille-blank": "\u2800",
    "vs17": "\U000e0100",
    "invisible-times": "\u2062",
    "mongolian-vs": "\u180e",
    "tag-space": "\U000e0020",
    "arabic-mark": "\u061c",
    "shorthand-overlap": "\U0001bca0",
    "egyptian-joiner": "\U00013430",
    "arabic-number-sign": "\u0600",
    "bom": "\ufeff",
    "zwnj": "\u200c",
}


def _build(root: Path) -> Lab:
    lab = Lab(root / "si")
    params = "".join(f'      {name.replace("-", "_")}: "a{c}b"\n' for name, c in CHARS.items())
    path = lab.write(
        "inv",
        "plan:\n  name: inv\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: rec}]\nactions:\n  - id: 1\n    tool: rec\n    why: w\n"
        "    params:\n      tag: inv\n" + params,
    )
    lab.shown = lab.cli("show", str(path), "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r48-showinvisible", _build)


@pytest.mark.parametrize("name", list(CHARS))
def test_show_escapes_a_character_drawn_as_nothing(lab: Lab, name: str) -> None:
    shown: str = lab.shown  # type: ignore[attr-defined]
    c = CHARS[name]
    key = name.replace("-", "_")
    line = next(line for line in shown.splitlines() if f"param {key} " in line)
    assert c not in line, line
    escape = f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"
    assert escape.lower() in line.lower(), line


EMIT = """import sys, json
sys.stdin.read()
s = "a\\u17b4b|c\\u2800d|e\\u2062f|g\\U000e0100h|i\\u180ej"
print(json.dumps({"v": s}, ensure_ascii=False)); sys.stderr.write(s + "\\n"); sys.exit(int(sys.argv[1]))
"""
RECORD = ["\u17b4", "\u2800", "\u2062", "\U000e0100", "\u180e"]


def _build_record(root: Path) -> Lab:
    import json
    import sys

    (root / "e.py").write_text(EMIT)
    py = json.dumps(sys.executable)
    lab = Lab(
        root / "rc",
        tools=f"e: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'e.py'))}, '{{m}}']}}\n",
    )
    for m in ("0", "1"):
        lab.write(
            f"p{m}",
            f"plan:\n  name: p{m}\n  task: t\n  status: pending_approval\navailable_tools: [{{name: e}}]\n"
            f"actions:\n  - id: 1\n    tool: e\n    why: w\n    params: {{m: '{m}'}}\n"
            "    outputs: [{name: o, path: '$.json.v'}]\n",
        )
    lab.commit("plans")
    lab.run()
    lab.set_status("p0", "approved")
    lab.set_status("p1", "approved")
    lab.commit("approve", ("Alice", "alice@example.com"))
    lab.run()
    lab.record = lab.git("log", "-p", "--format=%B") + "".join(  # type: ignore[attr-defined]
        lab.cli("status", *a, "--config", str(lab.config)).stdout for a in ((), ("--json",))
    )
    return lab


@pytest.fixture(scope="module")
def rlab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r48-recordinvisible", _build_record)


@pytest.mark.parametrize("c", RECORD, ids=[f"record-{ord(c):x}" for c in RECORD])
def test_the_record_escapes_a_character_drawn_as_nothing(rlab: Lab, c: str) -> None:
    """A tool's stdout/stderr/json/output (ok and failing) holding the character: never
    written raw in the history (PLAN.yml, EXECUTION_LOG.md, commit messages) or status."""
    record: str = rlab.record  # type: ignore[attr-defined]
    assert "E_TOOL_FAILED" in record
    assert c not in record, [line[:120] for line in record.splitlines() if c in line][:3]
