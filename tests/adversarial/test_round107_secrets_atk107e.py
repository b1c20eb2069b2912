# ruff: noqa: E501
"""Round 107, secrets (atk107e): the edges of round 106's fixes (digit groups under mixed
or other separators, a numeric secret's value in other notations and bases, in other
scripts' digits and in words), a secret in other Unicode transformations and charsets
(transliteration, Punycode of a secret without ASCII, tag characters, combining marks,
EBCDIC, base58/85), and the controller's notify posts as one more reader.

Lab (one, module scope; local mode): ``secrets.file`` holds TOK (ASCII), UNI (one ``é``),
NUM (``918273645012``), ESZ (no ASCII, a ``ß``), GRK (Greek capitals). An exec tool ``say``
prints ``value: <form>`` of its ``key`` on stdout and exits 0 (plan ``<form>-ok``) or on
stderr and exits 3 (``<form>-fail``); the form is computed by ``FORMCODE`` (one table, read
by the tool and by this test). ``notify:`` posts to a receiver on 127.0.0.1. One pass
freezes, Alice approves all in one commit, one pass runs; then ``status`` (text, JSON),
``show`` of each failed plan, one MCP ``log`` of every plan.

Ids: ``<form>:record`` (git history and MCP ``log`` of both plans; the tool's output was
recorded) and ``<form>:said`` (status text/JSON, ``show``, the daemon's log, the notify
posts of both plans). Needles: the printed form (as written and JSON-escaped) and every 8
characters of the secret in a row.

Seen (round 107): 8 classes broke (50 strict xfails), 10 ids held. Each broken form was
committed readable in the tool's stdout/stderr, the error, the outcome commit, MCP ``log``,
``status`` (text, JSON), ``show``, the daemon's log and the ``fail`` notify post.

1. **digit-separators**: ``mixsep`` (``918,273.645_012``), ``dash4`` (``9182-7364-5012``),
   ``rsquo3`` (``918’273’645’012``), ``group5`` (``91827,36450,12``).
2. **number-notation**: ``floathex`` (``0x1.ab9abfb3a8000p+39``), ``sci-times``
   (``9.18273645012×10^11``: 11 of the 12 digits in a row), ``hexbytes``
   (``d5:cd:5f:d9:d4``), ``hex-le`` (``d4d95fcdd5``), ``b64int`` (``1c1f2dQ=``), ``base36``.
3. **native-digits**: ``arabic`` (``٩١٨٢٧٣٦٤٥٠١٢``), ``devanagari``.
4. **number-words**: ``digitwords`` (``nine one eight ...``), ``numwords``.
5. **no-ascii-transform**: ``esz-translit`` (``AOUssEEENCO``), ``esz-puny``
   (``7bagcdg6b5av4a4a``), ``grk-idna`` (``xn--mxacdefghijkl8f``).
6. **block-encodings**: ``ebcdic`` (cp500 hex), ``b85``, ``b58``, ``b64-utf32``.
7. **tag-characters**: ``tagchars`` (U+E005A U+E0071 ...: invisible, decodes to the secret).
8. **spelling-ciphers**: ``rot13``, ``nato``, ``morse``.

Held: ``nbsp3`` (``918 273 645 012``), ``neg3`` (``-918,273,645,012``), ``sci-upper``
(``9.18273645012E+11``), ``uni-strip`` (``Kq7mPvqWnTzLexJ9``: the stand-in view),
``strike`` (each character + U+0336).

Should: decide by class which of these the redactor reads (2, 3, 6, 7 are mechanical
encodings a tool prints; 4, 8 and transliteration may be accepted limits like the split
secret); at least the digit view should read any non-digit separators (and a decimal point
after the first digit) and Unicode decimal digits (``unicodedata.decimal``), and tag
characters should be read as the ASCII they shadow.

Fixed the same session (r107digits): digit-separators and native-digits (12 ids). The other
six classes (38 ids) are transformations a tool applies deliberately, which the threat
model leaves to the tool the operator trusts (docs/threat-model.md); they stay strict xfails.
"""

from __future__ import annotations

import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, xfail
from mcpkit import answers
from oraclekit import notify_receiver
from test_round2_execution_kit import shared

SECRETS = {
    "TOK": "Zq8Wx3Yv7Ut2Lp9K",
    "UNI": "Kq7mPvqWnTzL\u00e9xJ9",
    "NUM": "918273645012",
    "ESZ": "\u00c4\u00d6\u00dc\u00df\u00c9\u00c8\u00ca\u00d1\u00c7\u00d8",
    "GRK": "\u0391\u0392\u0393\u0394\u0395\u0396\u0397\u0398\u0399\u039a\u039b\u03a3",
}

FORMCODE = r"""
import base64, unicodedata, codecs
def _words(n):
    ones = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
    tens = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
    def h(n):
        out = []
        if n >= 100:
            out.append(ones[n // 100] + " hundred"); n %= 100
        if n >= 20:
            out.append(tens[n // 10] + ("-" + ones[n % 10] if n % 10 else "")); n = 0
        if n:
            out.append(ones[n])
        return " ".join(out)
    parts = []
    for size, name in ((10**9, "billion"), (10**6, "million"), (10**3, "thousand"), (1, "")):
        if n >= size:
            parts.append((h(n // size) + " " + name).strip()); n %= size
    return " ".join(parts)
def _b58(b):
    a = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    n, out = int.from_bytes(b, "big"), ""
    while n:
        n, r = divmod(n, 58); out = a[r] + out
    return out
def _b36(n):
    a, out = "0123456789abcdefghijklmnopqrstuvwxyz", ""
    while n:
        n, r = divmod(n, 36); out = a[r] + out
    return out
def _strip(s):
    t = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
    return t.translate({0xdf: "ss", 0xd8: "O", 0xf8: "o"})
NATO = dict(zip("abcdefghijklmnopqrstuvwxyz0123456789", "Alfa Bravo Charlie Delta Echo Foxtrot Golf Hotel India Juliett Kilo Lima Mike November Oscar Papa Quebec Romeo Sierra Tango Uniform Victor Whiskey X-ray Yankee Zulu Zero One Two Three Four Five Six Seven Eight Nine".split()))
MORSE = dict(zip("abcdefghijklmnopqrstuvwxyz0123456789", ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- -.-- --.. ----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----.".split()))
def _ib(s):
    n = int(s)
    return n.to_bytes((n.bit_length() + 7) // 8, "big")
FORMS = {
    "mixsep": ("NUM", lambda s: s[:3] + "," + s[3:6] + "." + s[6:9] + "_" + s[9:]),
    "dash4": ("NUM", lambda s: "-".join([s[:4], s[4:8], s[8:]])),
    "nbsp3": ("NUM", lambda s: "\u00a0".join([s[:3], s[3:6], s[6:9], s[9:]])),
    "rsquo3": ("NUM", lambda s: "\u2019".join([s[:3], s[3:6], s[6:9], s[9:]])),
    "group5": ("NUM", lambda s: ",".join([s[:5], s[5:10], s[10:]])),
    "neg3": ("NUM", lambda s: "-{:,}".format(int(s))),
    "floathex": ("NUM", lambda s: float(s).hex()),
    "sci-upper": ("NUM", lambda s: "%.11E" % int(s)),
    "sci-times": ("NUM", lambda s: "%.11f\u00d710^11" % (int(s) / 1e11)),
    "hexbytes": ("NUM", lambda s: ":".join("%02x" % b for b in _ib(s))),
    "hex-le": ("NUM", lambda s: _ib(s)[::-1].hex()),
    "b64int": ("NUM", lambda s: base64.b64encode(_ib(s)).decode()),
    "base36": ("NUM", lambda s: _b36(int(s))),
    "arabic": ("NUM", lambda s: s.translate({ord(d): 0x660 + i for i, d in enumerate("0123456789")})),
    "devanagari": ("NUM", lambda s: s.translate({ord(d): 0x966 + i for i, d in enumerate("0123456789")})),
    "digitwords": ("NUM", lambda s: " ".join("zero one two three four five six seven eight nine".split()[int(c)] for c in s)),
    "numwords": ("NUM", lambda s: _words(int(s))),
    "esz-translit": ("ESZ", _strip),
    "uni-strip": ("UNI", _strip),
    "esz-puny": ("ESZ", lambda s: s.encode("punycode").decode()),
    "grk-idna": ("GRK", lambda s: "xn--" + s.lower().encode("punycode").decode()),
    "rot13": ("TOK", lambda s: codecs.encode(s, "rot13")),
    "ebcdic": ("TOK", lambda s: s.encode("cp500").hex()),
    "b85": ("TOK", lambda s: base64.b85encode(s.encode()).decode()),
    "b58": ("TOK", lambda s: _b58(s.encode())),
    "b64-utf32": ("TOK", lambda s: base64.b64encode(s.encode("utf-32-le")).decode()),
    "tagchars": ("TOK", lambda s: "".join(chr(0xE0000 + ord(c)) for c in s)),
    "strike": ("TOK", lambda s: "".join(c + "\u0336" for c in s)),
    "nato": ("TOK", lambda s: " ".join(NATO[c.lower()] if c.isdigit() or c.islower() else NATO[c.lower()].upper() for c in s)),
    "morse": ("TOK", lambda s: " ".join(MORSE[c.lower()] for c in s)),
}
"""

SAY = (
    FORMCODE
    + r"""
import json, sys
f, m = sys.argv[1], sys.argv[2]
s = json.loads(sys.stdin.read()).get("key", "")
t = "value: " + FORMS[f][1](s)
if m == "ok":
    sys.stdout.buffer.write((t + "\n").encode())
else:
    sys.stderr.buffer.write((t + "\n").encode()); sys.exit(3)
"""
)

_NS: dict[str, Any] = {}
exec(FORMCODE, _NS)  # the same table the tool reads
FORMS: dict[str, tuple[str, str]] = {f: (k, fn(SECRETS[k])) for f, (k, fn) in _NS["FORMS"].items()}


def _plan(slug: str, f: str, key: str, m: str) -> str:
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: say}]\nactions:\n"
        f"  - id: 1\n    tool: say\n    why: w\n"
        f'    params: {{f: {f}, m: {m}, key: "$<secrets.{key}>"}}\n'
    )


def _slugs() -> list[str]:
    return [f"{f}-{m}" for f in FORMS for m in ("ok", "fail")]


def _build(root: Path) -> Lab:
    server, posts = notify_receiver()
    hook = f'notify: ["http://127.0.0.1:{server.server_address[1]}/hook"]\n'
    (root / "say.py").write_text(SAY)
    (root / "sec.json").write_text(json.dumps(SECRETS))
    py, say = (json.dumps(str(x)) for x in (sys.executable, root / "say.py"))
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {root / 'sec.json'}}}\n" + hook,
        tools=f"say: {{kind: exec, argv: [{py}, {say}, '{{f}}', '{{m}}']}}\n",
    )
    for f, (key, _) in FORMS.items():
        for m in ("ok", "fail"):
            lab.write(f"{f}-{m}", _plan(f"{f}-{m}", f, key, m))
    lab.commit("plans")
    cfg = str(lab.config)
    first = lab.run()
    for slug in _slugs():
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    second = lab.run()
    server.shutdown()
    got: dict[str, Any] = {"passlog": first.stderr + second.stderr, "posts": list(posts)}
    slugs = _slugs()
    with ThreadPoolExecutor(2) as pool:
        histories = {slug: pool.submit(lab.history, slug) for slug in slugs}
        shows = {
            s: pool.submit(lab.cli, "show", "--config", cfg, str(lab.repo / "plans" / s))
            for s in slugs
            if s.endswith("-fail")
        }
        as_json = pool.submit(lab.cli, "status", "--json", "--config", cfg)
        as_text = pool.submit(lab.cli, "status", "--config", cfg)
        replies = pool.submit(answers, lab, [("log", {"path": f"plans/{slug}"}) for slug in slugs])
        got["history"] = {slug: h.result() for slug, h in histories.items()}
        got["show"] = {s: t.result().stdout + t.result().stderr for s, t in shows.items()}
        rows = {row["plan"]: row for row in json.loads(as_json.result().stdout)}
        got["status"] = as_text.result().stdout
        got["mcp"] = {
            slug: json.dumps(r, ensure_ascii=False)
            for slug, r in zip(slugs, replies.result(), strict=True)
        }
    got["rows"] = {p: r.get("status") for p, r in rows.items()}
    got["rowtext"] = {p: json.dumps(r, ensure_ascii=False) for p, r in rows.items()}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r107-secrets-atk107e", _build)


def _needles(key: str, form: str) -> list[str]:
    s = SECRETS[key]
    found = [s] if len(s) < 8 else [s[i : i + 8] for i in range(len(s) - 7)]
    found += [form, json.dumps(form)[1:-1], json.dumps(form, ensure_ascii=False)[1:-1]]
    return list(dict.fromkeys(found))


def _leaks(text: str, needles: list[str]) -> list[str]:
    return [n for n in needles if n in text]


def _said(got: dict[str, Any], slugs: list[str]) -> str:
    text = "\n".join(
        line for line in got["passlog"].splitlines() if any(f"plans/{s}" in line for s in slugs)
    )
    for slug in slugs:
        text += got["rowtext"].get(f"plans/{slug}", "")
        block = re.split(r"(?m)^(?=\S)", got["status"])
        text += "".join(b for b in block if f"plans/{slug}" in b.split("\n", 1)[0])
        text += got["show"].get(slug, "")
        text += "".join(p for p in got["posts"] if f'"plans/{slug}"' in p)
    return text


IDS = [f"{f}:{w}" for f in FORMS for w in ("record", "said")]

#: Fixed the same session (r107digits): ``digit-separators`` (``mixsep``, ``dash4``,
#: ``rsquo3``, ``group5``: groups of one to five digits between any of the separators,
#: mixed) and ``native-digits`` (``arabic``, ``devanagari``: read one for one as ASCII).
#: Accepted, kept as strict xfails: a tool that transforms a secret DELIBERATELY is trusted
#: with it (docs/threat-model.md, the redactor's limit: "A tool that transforms a secret
#: deliberately ..."): each class below is a transformation no tool applies in passing.
#: class -> (what, forms)
CLASSES = {
    "number-notation": (
        "accepted (a deliberate transformation): a numeric secret's value as float.hex, a "
        "mantissa with x10^n, its integer's bytes (hex with separators, little-endian, "
        "base64) or base36",
        ["floathex", "sci-times", "hexbytes", "hex-le", "b64int", "base36"],
    ),
    "number-words": (
        "accepted (a deliberate transformation): a numeric secret spelled digit by digit or "
        "as an English number",
        ["digitwords", "numwords"],
    ),
    "no-ascii-transform": (
        "accepted (a deliberate transformation): a secret without ASCII transliterated "
        "(NFKD, marks dropped, ß->ss) or in Punycode/IDNA whole",
        ["esz-translit", "esz-puny", "grk-idna"],
    ),
    "block-encodings": (
        "accepted (a deliberate transformation): a secret in EBCDIC hex, base85, base58 or "
        "base64 of its UTF-32",
        ["ebcdic", "b85", "b58", "b64-utf32"],
    ),
    "tag-characters": (
        "accepted (a deliberate transformation): a secret as Unicode tag characters "
        "(U+E0000 + ASCII, invisible)",
        ["tagchars"],
    ),
    "spelling-ciphers": (
        "accepted (a deliberate transformation): a secret in ROT13, the NATO spelling "
        "alphabet or Morse",
        ["rot13", "nato", "morse"],
    ),
}
BROKEN: dict[str, Any] = {
    f"{f}:{w}": xfail(cls, what)
    for cls, (what, forms) in CLASSES.items()
    for f in forms
    for w in ("record", "said")
}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round107_secrets_atk107e(lab: Lab, vid: str) -> None:
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    variant, what = vid.split(":")
    key, form = FORMS[variant]
    needles = _needles(key, form)
    ok, fail = f"{variant}-ok", f"{variant}-fail"
    assert got["rows"].get(f"plans/{ok}") == "completed", got["rows"].get(f"plans/{ok}")
    assert got["rows"].get(f"plans/{fail}") == "failed", got["rows"].get(f"plans/{fail}")
    if what == "record":
        text = "".join(got["history"][s] + got["mcp"][s] for s in (ok, fail))
        assert "value: " in got["history"][ok] + got["mcp"][ok], got["history"][ok][-1500:]
    else:
        text = _said(got, [ok, fail])
        assert any(f'"plans/{fail}"' in p for p in got["posts"]), got["posts"][:3]
    assert not _leaks(text, needles), (_leaks(text, needles), text[-1500:])
