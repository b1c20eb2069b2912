"""Round 47, secrets never reaching git or status output: a tool that prints a secret with
terminal escape sequences INSIDE it (colour forced on: ``grep --color=always`` highlighting a
match inside the secret, a colour change mid-token, an OSC 8 hyperlink around part of it,
nroff bold overstrike). A terminal, ``less -R`` or a CI log viewer renders these as the plain
secret; the redactor's gapped view allows only filler with no letter or digit, and an SGR
sequence (``ESC[01;31m``) carries digits and letters.

Lab ``an`` (local mode): ``secrets.file`` holds ``TOK: Zq8Wx3Yv7Ut2``; the exec tool ``say``
gets ``key: $<secrets.TOK>`` and prints the form below on stdout and stderr, then exits 0
(``-ok``) or 1 (``-fail``: the stderr line reaches the error message, PLAN.yml, the log, the
outcome commit and ``status``). Alice approves all; one pass.

- ``sgr-mid``: ``Zq8Wx3 ESC[1m Yv7Ut2 ESC[0m`` (bold from the middle).
- ``grep-color``: ``Zq8Wx3 ESC[01;31m ESC[K Yv7 ESC[m ESC[K Ut2`` (GNU grep's match colouring).
- ``osc8``: ``Zq8Wx3 ESC]8;;http://x/ ESC\\ Yv7Ut2 ESC]8;; ESC\\`` (a hyperlink).
- ``sgr-each``: every character in its own colour ``ESC[3Nm``.
- ``bs-bold``: nroff bold, each character ``c BS c``.
- ``cr-overwrite`` (control): the secret, then CR and other text.

Asserted per variant: the committed history about the plan (its files' diffs and the
controller's commit messages) and ``plangate status`` (text and JSON), read the way a
terminal renders them (escape sequences dropped, overstrikes merged), never show the secret.

Held: ``cr-overwrite`` (the secret itself is contiguous: masked). Broke (round 47):
``sgr-mid``, ``grep-color``, ``osc8``, ``sgr-each`` and ``bs-bold``, each ``-ok`` and
``-fail``: the stdout/stderr in EXECUTION_LOG.md and, for ``-fail``, the error message in
PLAN.yml, the outcome commit's message and ``status`` keep ``Zq8Wx3\\u001b[1mYv7Ut2``,
``Z\\x08Zq\\x08q8...`` and the like: the whole secret with escape sequences or
overstrikes between its parts. The redactor should read text with terminal
escape sequences (CSI, OSC, overstrike) removed, as a view like its gapped one, and mask
the secret there.

Fixed (round 47): the redactor's terminal view (``secrets._terminal_view``) reads text as a
terminal draws it: ECMA-48 CSI sequences (``ESC [`` or C1 ``\\x9b``), control strings (OSC,
DCS, SOS, PM, APC, up to BEL or ST), nF and other two-character escapes dropped, each
overstrike (``c BS c``, ``_ BS c``) read as the character drawn; a secret found there is
masked from its first character to its last, the escapes between included. Over the text as
written and over what the escape view decoded (``\\u001b[1m`` in JSON, ``\\e[1m`` in YAML).
All ten variants hold.
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
S = "Zq8Wx3Yv7Ut2"
forms = {
    "sgr-mid": "Zq8Wx3\x1b[1mYv7Ut2\x1b[0m",
    "grep-color": "Zq8Wx3\x1b[01;31m\x1b[KYv7\x1b[m\x1b[KUt2",
    "sgr-each": "".join(f"\x1b[3{i % 8}m{c}" for i, c in enumerate(S)) + "\x1b[0m",
    "osc8": "Zq8Wx3\x1b]8;;http://x/\x1b\\Yv7Ut2\x1b]8;;\x1b\\",
    "bs-bold": "".join(c + "\b" + c for c in S),
    "cr-overwrite": "Zq8Wx3Yv7Ut2\rxxxxxxxxxxxx",
}
f = forms[sys.argv[1]]
print("line " + f)
sys.stderr.write("err " + f + "\n")
sys.exit(1 if sys.argv[2] == "fail" else 0)
"""
FORMS = ["sgr-mid", "grep-color", "osc8", "sgr-each", "bs-bold", "cr-overwrite"]
VIDS = [f"{f}-{m}" for f in FORMS for m in ("ok", "fail")]


def _build(root: Path) -> Lab:
    return say_lab(root, "an", SAY, S, VIDS)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r47-ansisecret", _build)


def rendered(text: str) -> str:
    """The text as a terminal shows it: escapes (raw or JSON/Python-escaped) dropped."""
    for esc in ("\\u001b", "\\u001B", "\\x1b", "\\x1B", "\\e"):
        text = text.replace(esc, "\x1b")
    for bs in ("\\u0008", "\\x08", "\\b"):
        text = text.replace(bs, "\b")
    text = text.replace("\\\\", "\\")
    text = re.sub(r"\x1b\][^\x1b\x07]*(?:\x1b\\|\x07)", "", text)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    prev = None
    while prev != text:
        prev, text = text, re.sub(r"(.)\x08\1", r"\1", text)
    return text


@pytest.mark.parametrize("vid", VIDS)
def test_a_secret_split_by_terminal_escapes_is_not_written(lab: Lab, vid: str) -> None:
    history = rendered(lab.history(vid))
    assert S not in history, [line[:200] for line in history.splitlines() if S in line][:4]
    text, js = lab.status_text  # type: ignore[attr-defined]
    rows = [json.dumps(r) for r in json.loads(js) if r.get("plan") == f"plans/{vid}"]
    lines = [line for line in text.splitlines() if vid in line]
    assert S not in rendered("\n".join(rows + lines)), rows


def test_the_bench_ran(lab: Lab) -> None:
    assert "say" in lab.history("cr-overwrite-ok")
    assert "E_TOOL_FAILED" in lab.history("sgr-mid-fail")
