"""Round 40, what is recorded: a secret a tool prints back in the escaping of a common text
format that earlier rounds did not list (round 14: byte/number encodings; round 35: quote
doubling, wraps, folds; docs/threat-model.md rows on redaction).

One lab; the secret ``TOKEN`` holds a blank and the characters text formats escape
(``Kq7m Pv!W$n.zL*é_x+J&<Rb``). Each variant is one plan whose exec tool ``enc`` gets
``$<secrets.TOKEN>`` and prints it back in one form (the result's ``stdout`` goes whole into
the recorded output and EXECUTION_LOG.md); all run in one pass:

- ``form-plus``: ``application/x-www-form-urlencoded`` (``quote_plus``: a blank is ``+``);
- ``char-list-py``: ``print(list(s))``, ``['K', 'q', '7', ...]``;
- ``char-list-json``: ``json.dumps(list(s))`` (also JSON data in the result);
- ``printf-q``: bash ``printf %q`` style, a backslash before every character that is not a
  letter or digit (``Kq7m\\ Pv\\!W\\$n...``); ``re-escape``: Python ``re.escape``;
- ``md-escape``: Markdown escaping of ``*_.!+&<`` (``\\*``, ``\\_``);
- ``html-named``: ``html.escape`` (``&amp;``, ``&lt;``);
- ``mime-q``: an RFC 2047 ``Q`` encoded-word (``=?utf-8?q?Kq7m_Pv!W$n...?=``, ``_`` for a
  blank, ``=C3=A9`` for é);
- ``nfd``: the secret in Unicode NFD (``e`` + U+0301 for é: macOS file names, normalising
  tools);
- ``spaced``: every character followed by a blank (a code read out);
- ``comma-sep`` / ``tab-sep``: the characters joined by ``,`` (a CSV row of characters) or
  by a tab; ``xml-each``: each character in its own element (``<c>K</c><c>q</c>...``);
- ``shell-cont``: split by a backslash-newline continuation in the middle;
- ``latin1-bytes``: the secret's Latin-1 bytes on stdout (a tool in a Latin-1 or cp1252
  locale): not UTF-8, so the recorded text shows é as U+FFFD and every other character as is;
- ``plain`` (control): the secret as is.

**Broke** (round 40): ``char-list-py``, ``html-named``, ``mime-q``, ``nfd``, ``spaced`` and
``latin1-bytes`` (``value: Kq7m Pv!W$n.zL*\ufffd_x+J&<Rb``: 23 of 24 characters), ``comma-sep``
and ``xml-each`` are
committed readable in the recorded ``stdout`` (PLAN.yml ``execution:`` and EXECUTION_LOG.md),
e.g. ``value: Kq7m Pv!W$n.zL*é_x+J&amp;&lt;Rb`` and ``value: ['K', 'q', '7', 'm', ...]``.
Held: ``form-plus``, ``char-list-json``, ``printf-q``, ``re-escape``, ``md-escape``,
``shell-cont``, ``tab-sep`` (and the ``plain`` control).

**Fixed** (round 40), at the cause rather than per form (``controller/execution/secrets.py``):
a *gapped view* reads the letters and digits of a text that stand alone (none right before
or after), each separated from the last by filler (characters that are no letter or digit,
a markup tag or an HTML reference counting as one), and a secret of 6 letters and digits or
more is found there when each filler is at most 8 characters, 9 more for each character of
the secret standing between (``char-list-py``, ``spaced``, ``comma-sep``, ``xml-each``;
also over what the escape view decoded); the escape view decodes HTML named references
(``html-named``); the quoted-printable view's needles include the secret with ``_`` for a
blank (``mime-q``); a text with combining marks is searched composed (NFC: ``nfd``); a text
with U+FFFD is searched with each run of them standing for a run of the secret's non-ASCII
characters (``latin1-bytes``).

Asserted (as round 14): neither the whole printed form nor any 8 characters of the secret in a
row appear in that plan's git history (``log --all -p``, messages included), its ``status
--json`` row or the pass's log lines about it; every plan completed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_execution_kit import shared

SECRET = "Kq7m Pv!W$n.zL*é_x+J&<Rb"

ENC = r"""
import html, json, re, sys, unicodedata, urllib.parse
# changed (fix130s): secret on stdin, argv refuses it
mode, s = sys.argv[1], json.loads(sys.stdin.buffer.read())["s"]
def q(s):
    out = []
    for b in s.encode():
        c = chr(b)
        if c == " ":
            out.append("_")
        elif c.isalnum() and b < 128 or c in "!*+-/":
            out.append(c)
        else:
            out.append("=%02X" % b)
    return "=?utf-8?q?" + "".join(out) + "?="
half = len(s) // 2
forms = {
    "plain": s,
    "form-plus": urllib.parse.quote_plus(s),
    "char-list-py": str(list(s)),
    "char-list-json": json.dumps(list(s)),
    "printf-q": "".join(c if c.isalnum() and c.isascii() else "\\" + c for c in s),
    "re-escape": re.escape(s),
    "md-escape": "".join("\\" + c if c in "*_.!+&<$" else c for c in s),
    "html-named": html.escape(s),
    "mime-q": q(s),
    "nfd": unicodedata.normalize("NFD", s),
    "spaced": " ".join(s),
    "comma-sep": ",".join(s),
    "tab-sep": "\t".join(s),
    "xml-each": "".join("<c>" + html.escape(c) + "</c>" for c in s),
    "shell-cont": s[:half] + "\\\n" + s[half:],
}
if mode == "--all":
    forms["latin1-bytes"] = s.encode("latin-1").decode("utf-8", "replace")
    print(json.dumps(forms))
elif mode == "latin1-bytes":
    sys.stdout.buffer.write(b"value: " + s.encode("latin-1") + b"\n")
else:
    print("value: " + forms[mode])
"""

#: Broke in round 40, fixed since.
FIXED: dict[str, str] = {
    "char-list-py": "Python's repr of its list of characters (['K', 'q', ...])",
    "html-named": "html.escape (named references &amp; &lt; between literal text)",
    "mime-q": "an RFC 2047 Q encoded-word (_ for a blank, =XX for other bytes)",
    "nfd": "its Unicode NFD form (the ASCII run before the accent in clear)",
    "spaced": "its characters separated by blanks",
    "comma-sep": "its characters joined by commas",
    "xml-each": "each character in its own XML element",
    "latin1-bytes": "its Latin-1 bytes on stdout (é a replacement character, the rest in clear)",
}
VIDS = [
    "plain",
    "form-plus",
    "char-list-py",
    "char-list-json",
    "printf-q",
    "re-escape",
    "md-escape",
    "html-named",
    "mime-q",
    "nfd",
    "spaced",
    "shell-cont",
    "latin1-bytes",
    "comma-sep",
    "tab-sep",
    "xml-each",
]


def _plan(vid: str) -> str:
    return f"""\
plan:
  name: "{vid}"
  task: "a tool hands a secret back as {vid}"
  status: pending_approval
available_tools:
  - name: enc
actions:
  - id: 1
    tool: enc
    why: "use the token"
    params: {{mode: "{vid}", s: "$<secrets.TOKEN>"}}
"""


def _build(root: Path) -> Lab:
    lab = Lab(root)
    (root / "enc.py").write_text(ENC)
    # changed (fix130s): secret on stdin, argv refuses it
    argv = json.dumps([sys.executable, "-I", "-S", str(root / "enc.py"), "{mode}"])
    lab.write_config(tools=f"enc: {{kind: exec, argv: {argv}}}\n")
    for vid in VIDS:
        lab.write(vid, _plan(vid))
    lab.commit("plans", AGENT)
    first = lab.run()
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("approve them", ALICE)
    lab.extra_env = {"PLANGATE_SECRET_TOKEN": SECRET}  # type: ignore[attr-defined]
    second = lab.run()
    lab.extra_env = {}  # type: ignore[attr-defined]
    import subprocess

    forms = subprocess.run(
        [sys.executable, "-I", "-S", str(root / "enc.py"), "--all"],
        input=json.dumps({"s": SECRET}, ensure_ascii=False),  # the tool's stdin, as run
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lab.forms = json.loads(forms)  # type: ignore[attr-defined]
    rows = json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    lines = (first.stdout + first.stderr + second.stdout + second.stderr).splitlines()
    lab.written = {  # type: ignore[attr-defined]
        vid: {
            "git": lab.git("log", "--all", "-p", "--text", "--format=%H%n%B", "--", f"plans/{vid}"),
            "status": json.dumps([r for r in rows if r["plan"] == f"plans/{vid}"]),
            "log": "\n".join(line for line in lines if f'"plans/{vid}"' in line),
        }
        for vid in VIDS
    }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r40-secretforms", lambda root: _build(root / "lab"))


def _marks(vid: str) -> list[Any]:
    """Marks of a variant: none left (every form that broke in round 40 is fixed)."""
    return []


def test_the_bench_ran_every_plan_with_the_secret(lab: Lab) -> None:
    rows = lab.status()
    for vid in VIDS:
        assert rows[f"plans/{vid}"]["status"] == "completed", lab.codes(vid)
    assert "***" in lab.written["plain"]["git"]  # type: ignore[attr-defined]


def _runs(secret: str) -> set[str]:
    return {secret[i : i + 8] for i in range(len(secret) - 7)}


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=_marks(v)) for v in VIDS])
def test_no_form_of_the_secret_is_written(lab: Lab, vid: str) -> None:
    written: dict[str, str] = lab.written[vid]  # type: ignore[attr-defined]
    form: str = lab.forms[vid]  # type: ignore[attr-defined]
    runs = _runs(SECRET)
    found = []
    for where, text in written.items():
        squeezed = "".join(text.split())
        if form in text or "".join(form.split()) in squeezed:
            found.append(f"{where}: whole form")
        found += [f"{where}: run {r!r}" for r in sorted(runs) if r in text]
    assert not found, f"{vid} ({form[:60]}...) leaked: {found[:4]}"
