# ruff: noqa: E501
"""Round 49, what ``show`` displays vs what runs, and what the record writes: characters a
person cannot tell from nothing (or from another spelling) that neither round 46's blank
rule nor round 48's hidden set names.

``show-*``: one plan, one action, one param per character (``a<c>b``); ``plangate show``
once. Asserted per variant: the character never reaches the output raw, and its escape does.

- ``null-notehead``: U+1D159 MUSICAL SYMBOL NULL NOTEHEAD (So, a blank glyph, on every
  list of invisible characters beside U+3164 and U+2800, which are escaped).
- ``khitan-filler``: U+16FE4 KHITAN SMALL SCRIPT FILLER (Mn, drawn as nothing).
- ``unassigned``: U+0378, a code point with no character (Cn); a private-use U+E000 and
  U+FFFFF are escaped.
- ``noncharacter``: U+FDD0 (Cn, a noncharacter).
- ``unassigned-thai``: U+0E00 (Cn).
- ``nfd``: ``cafe`` + U+0301 COMBINING ACUTE ACCENT: drawn as ``café`` (U+00E9), which a
  tool reads as another value; asserted: the line does not read as the precomposed value.
- ``key-null-notehead``: a param named ``ta`` U+1D159 ``g`` beside ``tag``: both lines read
  ``param tag = ...``.
- ``jamo``: U+1100 U+1161 (conjoining jamo), drawn as the syllable U+AC00.
- ``control-hangul``: U+3164 (control: escaped since round 46/48).

``record-*``: an exec tool prints U+1D159 and U+16FE4 in its stdout, stderr (exit 0 and 1)
and a JSON value captured as an output; asserted: neither is written raw in the history
(PLAN.yml, EXECUTION_LOG.md, commit messages) or ``status`` (text and JSON).

Fixed (all variants): ``controller.display`` follows one rule, "show never displays two
different strings the same": every code point of category C (unassigned and
noncharacters included, for the Unicode version of its generated table: a character
assigned later is escaped) and Z but U+0020, every default-ignorable code point and the
graphic characters drawn blank (U+1D159, U+16FE4, U+2800, the Hangul fillers) are
escaped, in values, param names and the record; where a value is not NFC, each character
NFC would change is escaped (``cafe\\u0301``, U+1100 ``\\u1161``), while NFC text in
any script is shown as written. ``show-key-null-notehead`` looked for ``\\U0001d159`` in
the lowered line, which can never hold an upper-case ``U``: it looks for the escape
lowered, as ``show-*`` does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

CHARS = {
    "null-notehead": "\U0001d159",
    "khitan-filler": "\U00016fe4",
    "unassigned": "\u0378",
    "noncharacter": "\ufdd0",
    "unassigned-thai": "\u0e00",
    "control-hangul": "\u3164",
}
BROKEN: dict[str, str] = {}  # every variant fixed (see the docstring)


def _mark(vid: str) -> list[pytest.MarkDecorator]:
    if vid in BROKEN:
        return [
            pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 49: {BROKEN[vid]}")
        ]
    return []


def _build(root: Path) -> Lab:
    lab = Lab(root / "sg")
    params = "".join(f'      {name.replace("-", "_")}: "a{c}b"\n' for name, c in CHARS.items())
    params += '      nfd: "cafe\u0301"\n      nfc: "caf\u00e9"\n'
    params += '      "ta\U0001d159g": "x"\n'
    params += '      jamo: "\u1100\u1161"\n      syllable: "\uac00"\n'
    path = lab.write(
        "g",
        "plan:\n  name: g\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: rec}]\nactions:\n  - id: 1\n    tool: rec\n    why: w\n"
        "    params:\n      tag: g\n" + params,
    )
    lab.shown = lab.cli("show", str(path), "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r49-showglyphs", _build)


def _line(shown: str, key: str) -> str:
    return next(line for line in shown.splitlines() if f"param {key} " in line)


@pytest.mark.parametrize("name", [pytest.param(n, id=f"show-{n}", marks=_mark(n)) for n in CHARS])
def test_show_escapes_a_character_read_as_nothing(lab: Lab, name: str) -> None:
    shown: str = lab.shown  # type: ignore[attr-defined]
    c = CHARS[name]
    line = _line(shown, name.replace("-", "_"))
    assert c not in line, line
    escape = f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"
    assert escape.lower() in line.lower(), line


PAIRS = {"nfd": ("nfd", "nfc"), "jamo": ("jamo", "syllable")}


@pytest.mark.parametrize("vid", [pytest.param(v, id=f"show-{v}", marks=_mark(v)) for v in PAIRS])
def test_show_tells_a_decomposed_value_from_the_composed_one(lab: Lab, vid: str) -> None:
    import unicodedata

    shown: str = lab.shown  # type: ignore[attr-defined]
    nfd = _line(shown, PAIRS[vid][0]).split("=", 1)[1]
    nfc = _line(shown, PAIRS[vid][1]).split("=", 1)[1]
    assert unicodedata.normalize("NFC", nfd) != unicodedata.normalize("NFC", nfc), (nfd, nfc)


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(
            "key-null-notehead", id="show-key-null-notehead", marks=_mark("key-null-notehead")
        )
    ],
)
def test_show_escapes_a_blank_glyph_in_a_param_name(lab: Lab, vid: str) -> None:
    shown: str = lab.shown  # type: ignore[attr-defined]
    lines = [line for line in shown.splitlines() if "param ta" in line]
    assert len(lines) == 2, lines
    assert all("\U0001d159" not in line for line in lines), lines
    assert any("\\U0001d159".lower() in line.lower() for line in lines), lines


EMIT = """import sys, json
sys.stdin.read()
s = "a\\U0001d159b|c\\U00016fe4d"
print(json.dumps({"v": s}, ensure_ascii=False)); sys.stderr.write(s + "\\n"); sys.exit(int(sys.argv[1]))
"""
RECORD = ["\U0001d159", "\U00016fe4"]


def _build_record(root: Path) -> Lab:
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
    lab.commit("approve", ALICE)
    lab.run()
    lab.record = lab.git("log", "-p", "--format=%B") + "".join(  # type: ignore[attr-defined]
        lab.cli("status", *a, "--config", str(lab.config)).stdout for a in ((), ("--json",))
    )
    return lab


@pytest.fixture(scope="module")
def rlab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r49-recordglyphs", _build_record)


@pytest.mark.parametrize(
    "c",
    [pytest.param(c, id=f"record-{ord(c):x}", marks=_mark(f"record-{ord(c):x}")) for c in RECORD],
)
def test_the_record_escapes_a_character_read_as_nothing(rlab: Lab, c: str) -> None:
    record: str = rlab.record  # type: ignore[attr-defined]
    assert "E_TOOL_FAILED" in record
    assert c not in record, [line[:120] for line in record.splitlines() if c in line][:3]
