"""Round 49, secrets never reaching git or status output: the redactor's case view (any
case, 8+ characters) and NFKC view combined with its wrap and gapped views (each view holds
alone: round 35, round 40, round 41), and combining marks drawn on some of the secret's
characters (a secret marked on every character is masked; on some, not).

Lab ``vm`` (local mode): ``secrets.file`` holds ``TOK: Zq8Wxx3Yv7Ut2``; the exec tool ``say``
gets ``key: $<secrets.TOK>`` and prints the form below on stdout and stderr, exiting 0
(``-ok``) or 1 (``-fail``). Alice approves all; one pass.

- ``upper-wrap``: ``ZQ8WXX3 LF YV7UT2``: the secret upper-cased (``tr a-z A-Z``) and
  hard-wrapped.
- ``swap-wrap``: ``zQ8wXX3 LF SP SP yV7uT2``: swapped case, wrapped with indentation.
- ``nfkc-wrap``: ``\\uff3a q8Wxx3 LF Yv7Ut2``: a fullwidth first letter, wrapped.
- ``swap-list``: ``['z', 'Q', '8', ...]``: a Python list of the swapped-case characters.
- ``nfkc-list``: ``['\\uff3a', 'q', '8', ...]``.
- ``ul-half``: ``Zq8Wxx3`` then ``Yv7Ut2`` with U+0332 COMBINING LOW LINE after each
  character (half the secret underlined, as a tool marks where two values differ); controls
  ``ul-all``, ``strike-all`` (U+0336), ``dot-all`` (U+0323): every character marked.
- ``one-acute`` / ``one-lowline``: one combining mark (U+0301 / U+0332) after the 7th
  character; ``keycap``: the digit ``3`` as a keycap (U+FE0F U+20E3); ``ul-first``: the
  first half underlined (U+0332 after each character).
- ``upper`` (control): ``ZQ8WXX3YV7UT2`` whole; ``wrap`` (control): ``Zq8Wxx3 LF Yv7Ut2``;
  ``list`` (control): ``['Z', 'q', '8', ...]``.

Asserted per variant: the second half of the form (``YV7UT2``, ``yV7uT2``, ``Yv7Ut2``, or
the list's last three items) is written nowhere in the committed history about the plan
(diffs and the controller's messages) or ``plangate status`` (text, JSON).

Held: the controls. Broke: the others, ``-ok`` and ``-fail`` (stdout/stderr in
EXECUTION_LOG.md; for ``-fail`` the stderr in the error in PLAN.yml, the outcome commit and
``status``): the case and NFKC forms are searched whole, never through the wrap or the
gapped view.

Fixed (round 49, issue 11): the character-level readings are ONE composed pipeline, the
skeleton view (``secrets._skeleton_view``): the text as a terminal draws it, hidden
characters and combining marks dropped (a mark on one character as on all), each
character in its compatibility form without marks (fullwidth ``Ｚ`` as ``Z``), lower-cased
for a secret of 8+ characters with letters; the break view (hard wraps) and the gapped
view (lists of characters) run over it, mapped back through it. Every form above is
masked.
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
s = "Zq8Wxx3Yv7Ut2"
def lst(t):
    return "[" + ", ".join(repr(c) for c in t) + "]"
forms = {
    "upper-wrap": s.upper()[:7] + "\n" + s.upper()[7:],
    "swap-wrap": s.swapcase()[:7] + "\n  " + s.swapcase()[7:],
    "nfkc-wrap": "\uff3a" + s[1:7] + "\n" + s[7:],
    "swap-list": lst(s.swapcase()),
    "nfkc-list": lst("\uff3a" + s[1:]),
    "upper": s.upper(),
    "wrap": s[:7] + "\n" + s[7:],
    "list": lst(s),
    "ul-half": s[:7] + "".join(c + "\u0332" for c in s[7:]),
    "ul-all": "".join(c + "\u0332" for c in s),
    "strike-all": "".join(c + "\u0336" for c in s),
    "dot-all": "".join(c + "\u0323" for c in s),
    "one-acute": s[:7] + "\u0301" + s[7:],
    "one-lowline": s[:7] + "\u0332" + s[7:],
    "keycap": s[:6] + "3\ufe0f\u20e3" + s[7:],
    "ul-first": "".join(c + "\u0332" for c in s[:7]) + s[7:],
}
f = forms[sys.argv[1]]
print(f)
sys.stderr.write(f + "\n")
sys.exit(1 if sys.argv[2] == "fail" else 0)
"""
TAILS = {
    "upper-wrap": "YV7UT2",
    "swap-wrap": "yV7uT2",
    "nfkc-wrap": "Yv7Ut2",
    "swap-list": "'u', 'T', '2'",
    "nfkc-list": "'U', 't', '2'",
    "upper": "YV7UT2",
    "wrap": "Yv7Ut2",
    "list": "'U', 't', '2'",
    "ul-half": "t\u03322\u0332",
    "ul-all": "t\u03322\u0332",
    "strike-all": "t\u03362\u0336",
    "dot-all": "t\u03232\u0323",
    "one-acute": "Yv7Ut2",
    "one-lowline": "Yv7Ut2",
    "keycap": "Yv7Ut2",
    "ul-first": "Yv7Ut2",
}
VIDS = [f"{f}-{m}" for f in TAILS for m in ("ok", "fail")]
BROKEN: dict[str, str] = {}  # round 49: every form is fixed (see the docstring)


def _build(root: Path) -> Lab:
    return say_lab(root, "vm", SAY, S, VIDS)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r49-viewmix", _build)


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
def test_a_case_or_compatibility_form_wrapped_or_listed_is_not_written(lab: Lab, vid: str) -> None:
    tail = TAILS[vid.rsplit("-", 1)[0]]
    history = lab.history(vid)
    assert "say" in history
    escaped = json.dumps(tail)[1:-1]
    assert escaped not in history, [line[:200] for line in history.splitlines() if escaped in line][
        :4
    ]
    assert tail not in history, [line[:200] for line in history.splitlines() if tail in line][:4]
    text, js = lab.status_text  # type: ignore[attr-defined]
    rows = [json.dumps(r) for r in json.loads(js) if r.get("plan") == f"plans/{vid}"]
    lines = [line for line in text.splitlines() if vid in line]
    assert tail not in "\n".join(rows + lines), rows
    assert escaped not in "\n".join(rows + lines), rows
