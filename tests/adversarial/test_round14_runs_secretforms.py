"""Round 14, what is recorded: a secret a tool hands back in an encoding the redactor does
not list.

docs/execution.md ("Secrets"): every configured secret is replaced by ``***`` in everything
written, in every encoding a tool may give it: per-character escapes (JSON/Python ``\\u``,
URL-encoding, HTML references, NULs between characters) and whole block encodings (hex,
base64, base32) of its UTF-8 or UTF-16 bytes. The documented limits are transformations
(reversed, encrypted, compressed, base64 of a part, base85, line-wrapped base64).

Each variant is one plan whose exec tool gets ``$<secrets.TOKEN>`` (``Kq7mPvqWnTzLé😀xJ``:
ASCII, a Latin-1 letter, an astral emoji) and prints it back in one more standard encoding
on stdout (the result's ``stdout`` goes whole into EXECUTION_LOG.md). All plans run in one
pass. Defence asserted: neither the whole encoded form nor any 8 characters of the secret
in a row appear in that plan's git history (``log --all -p -- plans/<variant>``, messages
included), its ``plangate status --json`` row or the pass's log lines about it.

Held (round 14): ``octal`` (``\\153\\067...``), ``x-escapes`` (``\\x6b...`` of every UTF-8
byte), ``u8-escapes`` (``\\U0000006b...``), ``n-names`` (``\\N{LATIN CAPITAL LETTER K}...``),
``html-hex`` (``&#x4b;...``), ``css`` (``\\4b \\71 ...``), ``json-surrogates`` (``json.dumps``,
the emoji as ``\\ud83d\\ude00``).

**Broke** (round 14; ``FOUND``), written whole in EXECUTION_LOG.md and the outcome commit
(held since: the redactor decodes every view of a text in one linear pass, see
``controller/execution/secrets.py``, and hides a list of numbers in JSON data that spells a
secret):

- ``bytes-repr``: ``print(token.encode())``, Python's ``repr`` of the UTF-8 bytes,
  ``b'Kq7mPvqWnTzL\\xc3\\xa9\\xf0\\x9f\\x98\\x80xJ'``: the ASCII run in clear text (12 of 16
  characters), the rest as ``\\x`` escapes of the UTF-8 bytes (every byte so escaped,
  ``x-escapes``, is redacted: the mix is not);
- ``hex-space`` / ``hex-colon``: hex of the UTF-8 bytes with a separator between bytes
  (``bytes.hex(" ")``, ``xxd``/``od`` style; ``4b:71:37:...``, the form of key fingerprints);
- ``c-hex-list``: ``0x4b,0x71,...`` (a C array initialiser);
- ``byte-list-json``: Node's ``Buffer`` as JSON, ``{"type":"Buffer","data":[75,113,...]}``
  (the decimal bytes, also written as a JSON list in the log);
- ``js-u-escapes``: JavaScript ``escape()`` form, ``%u004b%u0071...``;
- ``qp-all``: quoted-printable of every byte, ``=4B=71=37...``;
- ``utf7``: UTF-7 (``str.encode("utf-7")``): the ASCII run stays raw (``Kq7mPvqWnTzL``, 12 of
  the secret's 16 characters, in clear text) followed by ``+AOnYPd4A-xJ``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_execution_kit import shared

SECRET = "Kq7mPvqWnTzLé😀xJ"

ENC = r"""
import json, sys, unicodedata
# changed (fix130s): secret on stdin, argv refuses it
mode, s = sys.argv[1], json.loads(sys.stdin.buffer.read())["s"]
b = s.encode()
forms = {
    "octal": "".join("\\%03o" % x for x in b),
    "x-escapes": "".join("\\x%02x" % x for x in b),
    "u8-escapes": "".join("\\U%08x" % ord(c) for c in s),
    "n-names": "".join("\\N{%s}" % unicodedata.name(c) for c in s),
    "html-hex": "".join("&#x%x;" % ord(c) for c in s),
    "css": "".join("\\%x " % ord(c) for c in s),
    "json-surrogates": json.dumps(s),
    "bytes-repr": repr(b),
    "hex-space": b.hex(" "),
    "hex-colon": b.hex(":"),
    "c-hex-list": "".join("0x%02x," % x for x in b),
    "byte-list-json": json.dumps({"type": "Buffer", "data": list(b)}, separators=(",", ":")),
    "js-u-escapes": "".join("%%u%04x" % ord(c) for c in s),
    "qp-all": "".join("=%02X" % x for x in b),
    "utf7": s.encode("utf-7").decode("ascii"),
}
if mode == "--all":
    print(json.dumps(forms))
else:
    print(forms[mode])
"""

HELD = [
    "octal",
    "x-escapes",
    "u8-escapes",
    "n-names",
    "html-hex",
    "css",
    "json-surrogates",
]
FOUND = {  # round 14: broke (strict xfails); fixed since, see BROKEN
    "bytes-repr": "Python's repr of its UTF-8 bytes (print(token.encode()))",
    "hex-space": "hex of the UTF-8 bytes with a blank between bytes",
    "hex-colon": "hex of the UTF-8 bytes with a colon between bytes (fingerprint style)",
    "c-hex-list": "0x.. bytes as a C array initialiser",
    "byte-list-json": "Node's Buffer as JSON: the decimal bytes as a list",
    "js-u-escapes": "JavaScript escape() %uXXXX per character",
    "qp-all": "quoted-printable of every byte",
    "utf7": "UTF-7 leaves the secret's ASCII run in clear text",
}
# every FOUND variant holds now (the redactor's escape, UTF-7, quoted-printable and number views)
BROKEN: dict[str, str] = {}
VIDS = HELD + list(FOUND)


def _plan(vid: str) -> str:
    return f"""\
plan:
  name: "{vid}"
  task: "a tool hands a secret back encoded as {vid}"
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
    return shared(tmp_path_factory, "r14-secretforms", lambda root: _build(root / "lab"))


def _marks(vid: str) -> list[Any]:
    if vid not in BROKEN:
        return []
    return [
        pytest.mark.xfail(
            strict=True,
            raises=AssertionError,
            reason=f"round 14: a secret handed back as {BROKEN[vid]} is written to git unredacted",
        )
    ]


def test_the_bench_ran_every_plan_with_the_secret(lab: Lab) -> None:
    rows = lab.status()
    for vid in VIDS:
        assert rows[f"plans/{vid}"]["status"] == "completed", lab.codes(vid)
    assert all("***" in w["git"] for w in lab.written.values())  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=_marks(v)) for v in VIDS])
def test_no_encoding_of_the_secret_is_written(lab: Lab, vid: str) -> None:
    written: dict[str, str] = lab.written[vid]  # type: ignore[attr-defined]
    form: str = lab.forms[vid]  # type: ignore[attr-defined]
    if vid == "byte-list-json":  # the bytes themselves, however the list is spaced or quoted
        form = ",".join(str(x) for x in SECRET.encode())
    runs = {SECRET[i : i + 8] for i in range(len(SECRET) - 7)}
    found = []
    for where, text in written.items():
        squeezed = "".join(text.split())
        if form in text or "".join(form.split()) in squeezed:
            found.append(f"{where}: whole form")
        found += [f"{where}: run {r!r}" for r in sorted(runs) if r in text]
    assert not found, f"{vid} ({form[:40]}...) leaked: {found[:4]}"
