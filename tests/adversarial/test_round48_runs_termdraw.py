"""Round 48, secrets never reaching git or status output: a secret a terminal DRAWS whole
from text in which it is not contiguous, the terminal view of round 47 reading only
escape sequences and same-character overstrikes.

Lab ``td`` (local mode): ``secrets.file`` holds ``TOK: Zq8Wx3Yv7Ut2``; the exec tool ``say``
gets ``key: $<secrets.TOK>`` and prints the form below on stdout and stderr, then exits 0
(``-ok``) or 1 (``-fail``: the stderr line reaches the error message, PLAN.yml, the log, the
outcome commit and ``status``). Alice approves all; one pass.

- ``bs-erase``: ``Zq8Wx3 x BS SP BS Yv7Ut2`` (a typo erased as a tty echoes it: ``script``).
- ``bs-over``: ``Zq8Wx3 x BS Yv7Ut2`` (a different character drawn over a typo).
- ``bs-el``: ``Zq8Wx3 x BS ESC[K Yv7Ut2`` (readline's erase: back, clear to end of line).
- ``bs-two``: ``Zq8Wx3 ab BS BS Yv7Ut2`` (two characters drawn over).
- ``cub``: ``Zq8Wx3 ab ESC[2D Yv7Ut2`` (cursor back two, then drawn over).
- ``cr-redraw``: ``______Yv7Ut2 CR Zq8Wx3`` (a progress line redrawn from its start).
- ``cha-redraw``: ``______Yv7Ut2 ESC[1G Zq8Wx3`` (cursor to column 1, then drawn).
- ``del``: ``Zq8Wx3 DEL Yv7Ut2`` (DEL, which a terminal ignores).
- ``bel``: ``Zq8Wx3 BEL Yv7Ut2`` (BEL: a beep, nothing drawn).
- ``nul``: ``Zq8Wx3 NUL Yv7Ut2`` (NUL: nothing drawn).
- ``si``: ``Zq8Wx3 SI Yv7Ut2`` (shift-in, already in G0: nothing drawn).
- ``zwsp``/``shy``: U+200B / U+00AD between the halves (drawn as nothing).
- ``osc-long``: an OSC 8 hyperlink whose URL is 3,000 characters, between the halves.
- ``csi-long``: an SGR sequence with 1,500 ``1;`` parameters, between the halves.
- ``osc-c1st``: an OSC ended by C1 ST (U+009C); ``c1-csi``: C1 CSI (U+009B) SGR.
- ``csi-priv`` (``ESC[?2004h``), ``csi-inter`` (``ESC[2 q``), ``esc-keypad`` (``ESC= ESC>``),
  ``dcs`` (``ESC P1$r0m ESC\\``) between the halves.

Asserted per variant: the committed history about the plan (its files' diffs and the
controller's commit messages) and ``plangate status`` (text and JSON), read the way a
terminal draws them (escapes decoded, then drawn on a line buffer: BS and CR move the
cursor, ``ESC[nD``/``ESC[nG`` move it, other escapes and the controls above draw nothing),
never show the secret.

Held: ``bs-erase``, ``bs-over``, ``nul``, ``osc-c1st``, ``c1-csi``, ``csi-priv``,
``csi-inter``, ``esc-keypad``, ``dcs`` (the secret is masked).
Broke (round 48), each ``-ok`` and ``-fail``: ``bs-el``, ``bs-two``, ``cub``, ``cr-redraw``,
``cha-redraw``, ``del``, ``bel``, ``si``, ``zwsp``, ``shy``, ``osc-long``, ``csi-long``: the
stdout/stderr in EXECUTION_LOG.md and, for ``-fail``, the error in PLAN.yml, the outcome
commit and ``status`` keep both halves around the controls (``Zq8Wx3\\u0007Yv7Ut2``,
``Zq8Wx3ab\\b\\bYv7Ut2``, ``Zq8Wx3ab\\u001b[2DYv7Ut2``); a terminal, ``less -R``, ``jq -r``
draws the whole secret. The redactor's terminal view should draw the line as a terminal
does (BS, CR and cursor moves, controls that draw nothing, sequences of any length) and
mask the span the secret was drawn from; a NUL already is.

Fixed (round 48, issue 11): the redactor's terminal view is a line model: a cursor and
cells, printable characters written at the cursor, BS, CR, ``ESC[nD``/``ESC[nC``/
``ESC[nG`` moving it, ``ESC[K`` erasing to the end, every other escape sequence or control
string of any length and every character ``controller.display.HIDDEN`` holds drawing
nothing; a secret found in what was drawn is masked from the first source character of its
cells to the last. Every variant above, ``-ok`` and ``-fail``, holds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from advkit import Lab, say_lab
from test_round2_execution_kit import shared

S = "Zq8Wx3Yv7Ut2"
SAY = r"""import sys
sys.stdin.read()
forms = {
    "bs-erase": "Zq8Wx3x\b \bYv7Ut2",
    "bs-over": "Zq8Wx3x\bYv7Ut2",
    "bs-el": "Zq8Wx3x\b\x1b[KYv7Ut2",
    "bs-two": "Zq8Wx3ab\b\bYv7Ut2",
    "cub": "Zq8Wx3ab\x1b[2DYv7Ut2",
    "cr-redraw": "______Yv7Ut2\rZq8Wx3",
    "cha-redraw": "______Yv7Ut2\x1b[1GZq8Wx3",
    "del": "Zq8Wx3\x7fYv7Ut2",
    "bel": "Zq8Wx3\x07Yv7Ut2",
    "nul": "Zq8Wx3\x00Yv7Ut2",
    "si": "Zq8Wx3\x0fYv7Ut2",
    "zwsp": "Zq8Wx3\u200bYv7Ut2",
    "shy": "Zq8Wx3\u00adYv7Ut2",
    "osc-long": "Zq8Wx3\x1b]8;;http://x/" + "a" * 3000 + "\x1b\\Yv7Ut2",
    "csi-long": "Zq8Wx3\x1b[" + "1;" * 1500 + "1mYv7Ut2",
    "osc-c1st": "Zq8Wx3\x1b]0;t\u009cYv7Ut2",
    "c1-csi": "Zq8Wx3\u009b1mYv7Ut2",
    "csi-priv": "Zq8Wx3\x1b[?2004hYv7Ut2",
    "csi-inter": "Zq8Wx3\x1b[2 qYv7Ut2",
    "esc-keypad": "Zq8Wx3\x1b=\x1b>Yv7Ut2",
    "dcs": "Zq8Wx3\x1bP1$r0m\x1b\\Yv7Ut2",
}
f = forms[sys.argv[1]]
print(f)
sys.stderr.write(f + "\n")
sys.exit(1 if sys.argv[2] == "fail" else 0)
"""
FORMS = [
    "bs-erase",
    "bs-over",
    "bs-el",
    "bs-two",
    "cub",
    "cr-redraw",
    "cha-redraw",
    "del",
    "bel",
    "nul",
    "si",
    "zwsp",
    "shy",
    "osc-long",
    "csi-long",
    "osc-c1st",
    "c1-csi",
    "csi-priv",
    "csi-inter",
    "esc-keypad",
    "dcs",
]
VIDS = [f"{f}-{m}" for f in FORMS for m in ("ok", "fail")]
BROKEN: dict[str, str] = {}  # round 48's breaks: fixed (see the docstring)


def _build(root: Path) -> Lab:
    return say_lab(root, "td", SAY, S, VIDS)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r48-termdraw", _build)


_ESCAPES = {
    "\\u001b": "\x1b",
    "\\u001B": "\x1b",
    "\\x1b": "\x1b",
    "\\x1B": "\x1b",
    "\\e": "\x1b",
    "\\n": "\n",
    "\\u0008": "\b",
    "\\x08": "\b",
    "\\b": "\b",
    "\\r": "\r",
    "\\u000d": "\r",
    "\\x0d": "\r",
    "\\u007f": "\x7f",
    "\\x7f": "\x7f",
    "\\u0007": "\x07",
    "\\x07": "\x07",
    "\\a": "\x07",
    "\\u200b": "",
    "\\u00ad": "",
    "\u200b": "",
    "\u00ad": "",
    "\\u0000": "\x00",
    "\\x00": "\x00",
    "\\0": "\x00",
    "\\u000f": "\x0f",
    "\\x0f": "\x0f",
}


def _draw_line(line: str) -> str:
    cells: list[str] = []
    col = 0
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\x1b":
            m = re.match(r"\x1b\[([0-9;?]*)([@-~])", line[i:])
            if m:
                n = int(m.group(1) or "1") if m.group(1).isdigit() else 1
                if m.group(2) == "D":
                    col = max(0, col - n)
                elif m.group(2) == "G":
                    col = max(0, n - 1)
                elif m.group(2) == "K":
                    del cells[col:]
                i += m.end()
                continue
            m = re.match(r"\x1b[\]P_^X][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)", line[i:])
            i += m.end() if m else 2
            continue
        if c == "\b":
            col = max(0, col - 1)
        elif c == "\r":
            col = 0
        elif c in "\x7f\x07\x00\x0f\x0e":
            pass
        else:
            while len(cells) <= col:
                cells.append(" ")
            cells[col] = c
            col += 1
        i += 1
    return "".join(cells)


def drawn(text: str) -> str:
    """The text as a terminal draws it: escapes (raw or JSON/YAML-escaped) decoded, then
    each line drawn on a line buffer, whole and each quoted or backquoted value alone (as
    ``jq -r`` or a YAML reader prints it)."""
    for esc, raw in _ESCAPES.items():
        text = text.replace(esc, raw)
    text = text.replace("\\\\", "\\")
    out = []
    for line in text.split("\n"):
        out.append(_draw_line(line))
        out += [_draw_line(part) for part in re.split(r'["`]|: ', line)]
    return "\n".join(out)


def _marks(vid: str) -> list[pytest.MarkDecorator]:
    form = vid.rsplit("-", 1)[0]
    if form in BROKEN:
        return [
            pytest.mark.xfail(
                strict=True, raises=AssertionError, reason=f"round 48: {BROKEN[form]}"
            )
        ]
    return []


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=_marks(v)) for v in VIDS])
def test_a_secret_a_terminal_draws_whole_is_not_written(lab: Lab, vid: str) -> None:
    history = drawn(lab.history(vid))
    assert S not in history, [line[:200] for line in history.splitlines() if S in line][:4]
    text, js = lab.status_text  # type: ignore[attr-defined]
    rows = [json.dumps(r) for r in json.loads(js) if r.get("plan") == f"plans/{vid}"]
    lines = [line for line in text.splitlines() if vid in line]
    assert S not in drawn("\n".join(rows + lines)), rows


def test_the_bench_ran(lab: Lab) -> None:
    assert "say" in lab.history("del-ok")
    assert "E_TOOL_FAILED" in lab.history("bel-fail")
