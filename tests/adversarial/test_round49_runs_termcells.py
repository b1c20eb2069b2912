# ruff: noqa: E501
"""Round 49, secrets never reaching git or status output: round 48's terminal line model
(a cursor and cells) against what a terminal really does with cells and cursor moves.

Lab ``tc`` (local mode): ``secrets.file`` holds ``TOK: Zq8Wxx3Yv7Ut2``; the exec tool ``say``
gets ``key: $<secrets.TOK>`` and prints the form below on stdout and stderr, exiting 0
(``-ok``) or 1 (``-fail``). Alice approves all; one pass. Each form is drawn by xterm/VTE
as the whole secret:

- ``cub`` (control, round 48): ``Zq8Wxx3 ab ESC[2D Yv7Ut2``.
- ``wide-bs``: ``Zq8Wxx3 中 BS BS Yv7Ut2``: a wide (East Asian) character takes two cells,
  two backspaces go back over it.
- ``wide-cub``: the same with ``ESC[2D``.
- ``wide-cr``: ``中中中_ Yv7Ut2 CR Zq8Wxx3``: a progress line whose prefix is wide characters.
- ``comb-bs``: ``Zq8Wxx3 e U+0301 BS Yv7Ut2``: a combining mark takes no cell.
- ``comb-cr``: ``______ U+0301 _ Yv7Ut2 CR Zq8Wxx3``.
- ``rep``: ``Zq8Wx ESC[1b 3Yv7Ut2``: REP (ECMA-48 CSI b, in xterm's terminfo ``rep``, so
  ncurses writes it) repeats the last character.
- ``hpa``: ``_______Yv7Ut2 ESC[1` Zq8Wxx3``: HPA, the horizontal position absolute (as CHA).
- ``hpr``: ``Zq8____Yv7Ut2 CR ESC[3a Wxx3``: HPR, relative move right (as CUF).
- ``cub0``: ``Zq8Wxx3a ESC[0D Yv7Ut2``: a zero count moves one cell, as every ECMA-48 count.
- ``c1-cub``: ``Zq8Wxx3ab U+009B 2D Yv7Ut2``: cursor back written with the C1 CSI.
- ``scosc``: ``Zq8 ESC[s ____Yv7Ut2 ESC[u Wxx3``: save/restore cursor, the SCO/ANSI.SYS form.
- ``nfkc-bs``: ``\uff3a q8Wxx3 ab BS BS Yv7Ut2``: a fullwidth first letter (NFKC view) and
  backspaces (terminal view) together.
- ``case-bs``: ``zQ8wXX3 ab BS BS yV7uT2``: the secret in swapped case (case view, 8+ chars)
  drawn after backspaces; ``case-sgr``: swapped case with one SGR between its halves.
- ``sgr-wrap``: ``Zq8 ESC[1m Wxx3 LF SP SP Yv7Ut2``: an escape inside a hard-wrapped secret;
  ``bel-wrap``: ``Zq8W BEL xx3 LF Yv7Ut2``.

- Controls of the same model: ``cubmod`` (``ESC[1;5D``), ``sgrcolon`` (``ESC[38:2::255:0:0m``),
  ``g0`` (``ESC[0G``), ``csigt`` (``ESC[>4;1m``), ``cha-semi`` (``ESC[1;1G``), ``cuf-over``
  (CR then ``ESC[3C``), ``decsc-cr`` (``ESC 7``/``ESC 8``), ``el0-over`` (``ESC[0K``), ``ris``
  (``ESC c`` before, an SGR inside).

- ``khitan``: U+16FE4 KHITAN SMALL SCRIPT FILLER (Mn, drawn as nothing) between the halves;
  controls ``hangul`` (U+3164), ``vs16`` (U+FE0F), ``cgj`` (U+034F), ``tagchar`` (U+E0041).

Held: ``cub``, ``hpa``, ``cub0``, ``c1-cub``, ``scosc`` and every control above. Broke: the others, each ``-ok`` and
``-fail`` (stdout/stderr in EXECUTION_LOG.md; for ``-fail`` the error in PLAN.yml, the
outcome commit and ``status``): the redactor's terminal view counts one cell per character
(a wide character takes two on a terminal, a combining mark none), draws nothing for REP
and HPR, and is not combined with the NFKC, case and wrap views.

Asserted per variant: the second half ``Yv7Ut2`` (inside the span the secret is drawn from,
so a mask covers it) is written nowhere in the committed history about the plan (diffs and
the controller's messages) or ``plangate status`` (text, JSON).

Fixed (round 49, issue 11): the terminal view's line model gives a character the cells a
terminal gives it (a wide or fullwidth character two, a combining mark none: it joins the
cell before; a wide character half drawn over leaves its other half blank), draws REP
(``CSI n b``) as the last character again (bounded with the padding) and moves the cursor
for HPR and HPB (``CSI n a``/``n j``, as ``C``/``D``). And the character-level readings are
ONE composed pipeline, the skeleton view (``secrets._skeleton_view``): what the terminal
draws, hidden characters and combining marks dropped, each character in its compatibility
form without marks, lower-cased for a secret of 8+ characters with letters; the break and
gapped views run over it too. So ``wide-*``, ``comb-*``, ``rep``, ``hpr``, ``nfkc-bs``,
``case-*``, ``sgr-wrap`` and ``bel-wrap`` are masked; ``khitan`` too (U+16FE4 is a
combining mark, category Mn: dropped by the skeleton view whether or not
``display.HIDDEN`` holds it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import Lab, say_lab
from test_round2_execution_kit import shared

S = "Zq8Wxx3Yv7Ut2"
SAY = r"""import sys
sys.stdin.read()
forms = {
    "cub": "Zq8Wxx3ab\x1b[2DYv7Ut2",
    "wide-bs": "Zq8Wxx3\u4e2d\b\bYv7Ut2",
    "wide-cub": "Zq8Wxx3\u4e2d\x1b[2DYv7Ut2",
    "wide-cr": "\u4e2d\u4e2d\u4e2d_Yv7Ut2\rZq8Wxx3",
    "comb-bs": "Zq8Wxx3e\u0301\bYv7Ut2",
    "comb-cr": "______\u0301_Yv7Ut2\rZq8Wxx3",
    "rep": "Zq8Wx\x1b[1b3Yv7Ut2",
    "hpa": "_______Yv7Ut2\x1b[1`Zq8Wxx3",
    "hpr": "Zq8____Yv7Ut2\r\x1b[3aWxx3",
    "cub0": "Zq8Wxx3a\x1b[0DYv7Ut2",
    "c1-cub": "Zq8Wxx3ab\u009b2DYv7Ut2",
    "scosc": "Zq8\x1b[s____Yv7Ut2\x1b[uWxx3",
    "nfkc-bs": "\uff3aq8Wxx3ab\b\bYv7Ut2",
    "case-bs": "zQ8wXX3ab\b\byV7uT2",
    "case-sgr": "zQ8\x1b[1mwXX3yV7uT2",
    "sgr-wrap": "Zq8\x1b[1mWxx3\n  Yv7Ut2",
    "bel-wrap": "Zq8W\x07xx3\nYv7Ut2",
    "cubmod": "Zq8Wxx3a\x1b[1;5DYv7Ut2",
    "sgrcolon": "Zq8Wxx3\x1b[38:2::255:0:0mYv7Ut2",
    "g0": "_______Yv7Ut2\x1b[0GZq8Wxx3",
    "csigt": "Zq8Wxx3\x1b[>4;1mYv7Ut2",
    "cha-semi": "_______Yv7Ut2\x1b[1;1GZq8Wxx3",
    "cuf-over": "Zq8____Yv7Ut2\r\x1b[3CWxx3",
    "decsc-cr": "Zq8\x1b7____Yv7Ut2\x1b8Wxx3",
    "el0-over": "Zq8Wxx3ab\b\b\x1b[0KYv7Ut2",
    "ris": "xx\x1bcZq8Wxx3Yv7\x1b[mUt2",
    "khitan": "Zq8Wxx3\U00016fe4Yv7Ut2",
    "hangul": "Zq8Wxx3\u3164Yv7Ut2",
    "vs16": "Zq8Wxx3\ufe0fYv7Ut2",
    "cgj": "Zq8Wxx3\u034fYv7Ut2",
    "tagchar": "Zq8Wxx3\U000e0041Yv7Ut2",
}
f = forms[sys.argv[1]]
print(f)
sys.stderr.write(f + "\n")
sys.exit(1 if sys.argv[2] == "fail" else 0)
"""
FORMS = [
    "cub",
    "wide-bs",
    "wide-cub",
    "wide-cr",
    "comb-bs",
    "comb-cr",
    "rep",
    "hpa",
    "hpr",
    "cub0",
    "c1-cub",
    "scosc",
    "nfkc-bs",
    "case-bs",
    "case-sgr",
    "sgr-wrap",
    "bel-wrap",
    "cubmod",
    "sgrcolon",
    "g0",
    "csigt",
    "cha-semi",
    "cuf-over",
    "decsc-cr",
    "el0-over",
    "ris",
    "khitan",
    "hangul",
    "vs16",
    "cgj",
    "tagchar",
]
VIDS = [f"{f}-{m}" for f in FORMS for m in ("ok", "fail")]
BROKEN: dict[str, str] = {}  # round 49: every form is fixed (see the docstring)


def _build(root: Path) -> Lab:
    return say_lab(root, "tc", SAY, S, VIDS)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r49-termcells", _build)


def _marks(vid: str) -> list[pytest.MarkDecorator]:
    form = vid.rsplit("-", 1)[0]
    if form in BROKEN:
        return [
            pytest.mark.xfail(
                strict=True, raises=AssertionError, reason=f"round 49: {BROKEN[form]}"
            )
        ]
    return []


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=_marks(v)) for v in VIDS])
def test_a_secret_drawn_whole_by_cells_is_not_written(lab: Lab, vid: str) -> None:
    TAIL = "yV7uT2" if vid.startswith("case-") else "Yv7Ut2"
    history = lab.history(vid)
    assert TAIL not in history, [line[:200] for line in history.splitlines() if TAIL in line][:4]
    text, js = lab.status_text  # type: ignore[attr-defined]
    rows = [json.dumps(r) for r in json.loads(js) if r.get("plan") == f"plans/{vid}"]
    lines = [line for line in text.splitlines() if vid in line]
    assert TAIL not in "\n".join(rows + lines), rows


def test_the_bench_ran(lab: Lab) -> None:
    assert "say" in lab.history("cub-ok")
    assert "E_TOOL_FAILED" in lab.history("cub-fail")
