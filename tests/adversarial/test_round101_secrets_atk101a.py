# ruff: noqa: E501
"""Round 101, secrets (atk101a): a secret never leaves in any form. Text notations, byte
lists and block alphabets rounds 14-60 did not list, secrets nested in one another, and the
controller's own messages and joins around a secret.

Lab (one, module scope; local mode): ``secrets.file`` holds the secrets below; the exec tool
``say`` gets ``key: $<secrets.NAME>`` and prints ``value: <form>`` on stdout and exits 0
(plan ``<form>-ok``: the recorded ``stdout`` in PLAN.yml ``execution:`` and EXECUTION_LOG.md)
or prints it on stderr and exits 3 (``<form>-fail``: also the error message in PLAN.yml, the
log, the ``plangate: fail`` commit, ``status``, ``show`` and the daemon's log). One pass
freezes, Alice approves every plan in one commit, one pass runs; then ``status`` (text and
``--json``), ``show --config`` of each ``-fail`` plan, one MCP session's ``log`` of every plan
and a fresh ``audit --json``.

Forms (secret in brackets):

- ``jsonptr`` [``SEP`` ``Jp4Tq8Vw/Xn2Rb6Hd~Mk7Ls3F``]: an RFC 6901 JSON Pointer to a key
  that is the secret (``/Jp4Tq8Vw~1Xn2Rb6Hd~0Mk7Ls3F``: a JSON Patch or schema error path);
- ``ldap-hex`` / ``ldap-bs`` [``LDP`` ``Gw5Nc8Rt,Hy3Pk6Xz+Bm2Qv9D``]: an RFC 4514 DN value,
  ``,`` and ``+`` escaped as ``\\2c``/``\\2b`` or as ``\\,``/``\\+``;
- ``puny`` / ``idna`` [``UNI`` ``Kq7mPvqWnTzLéxJ9``]: Punycode (RFC 3492) of the secret, and
  an IDNA host label ``xn--...`` of it lower-cased (a URL a tool prints);
- ``tex`` (``\\'e`` for ``é``), ``rtf`` (``\\u233?``), ``qp-latin1`` (``=E9``, the Latin-1 byte
  quoted-printable), ``url-latin1`` (``%E9``), ``ent-nosemi`` (``&eacute`` with no ``;``, as
  HTML5 reads it), ``ncr-nosemi`` (``&#233`` with no ``;``), ``translit`` (``é`` as ``e``)
  [``UNI``];
- ``java-bytes`` [``UNI``]: Java's ``Arrays.toString(s.getBytes(UTF_8))``, the UTF-8 bytes
  as SIGNED decimals (``[75, 113, ..., -61, -87, ...]``);
- ``b32hex`` [``UNI``]: RFC 4648 base32 with the extended hex alphabet (``0-9A-V``,
  DNSSEC's NSEC3 names);
- ``caret`` (cmd.exe ``^&``, ``^|``), ``ps`` (PowerShell's backtick before ``$``), ``make``
  (``$`` doubled ``$$``), ``pct`` (``%`` doubled, a printf format made safe) [``SYM``
  ``Fc3Yh8Ws&Dk5Ln2Rj|Tg7$Pb4Mx%Hv6``].

Shapes (held controls of the promise elsewhere; one plan each, no mode):

- ``nest-raw``/``nest-b64``/``nest-hex``/``nest-upper``: ``TOK`` ``Zq8Wx3Yv7Ut2Lp9K`` printed
  while ``PFX`` ``Zq8Wx3Yv`` (its first 8 characters) is a secret too: masking the shorter
  first must not leave the longer one's tail;
- ``overlap``: ``TOK`` and ``OV`` (``Lp9KdRm4Tn6B``, starting with TOK's last 4) printed as one
  word;
- ``strip-nl``: ``NL`` is ``Hv6Ty2Lp8Ns4Qw3`` plus a line end (a YAML ``|`` block), the tool
  prints it stripped;
- ``ref-key``: action 1's output ``o`` is a mapping keyed by ``UNI``; action 2 reads
  ``o.nope`` (an error that could list the keys); ``ref-str``: ``o`` is ``UNI + "-pad"``,
  action 2 reads ``o.k`` (an error that could quote the string); ``out-missing``: an output
  query matching nothing over a result holding ``UNI`` as a key; ``verify``: ``expect
  equals`` failing over ``UNI`` (the message quotes what it read); ``bad-json``: stdout that
  is not JSON, the secret inside, an output over ``$.json``;
- ``join``: actions 1 and 2 hand out ``UNI``'s halves, action 3 (``rec``) gets
  ``"$<actions[1].outputs.o>$<actions[2].outputs.o>"`` (the controller itself joins the
  secret; the halves alone are the accepted split limit, docs/threat-model.md): the whole
  secret must not be in its record (and ``rec`` got it whole);
- ``repo-file``: the exec tool ``w`` works in the repository's tree (``cwd``: the repo) and
  writes ``plans/repo-file/<UNI>.txt``, listing the folder: the file name must not be
  committed by the controller (``ls-tree HEAD``) nor the listing recorded readable.

Ids: ``<form>:ok`` / ``<form>:fail`` (git history about that plan, messages and diffs; the
tool's line recorded), ``<form>:said`` (``status`` text and JSON, ``show`` of the ``-fail``
plan, the daemon's log lines about both plans), ``<form>:mcp`` (MCP ``log`` of both);
``<shape>:record`` (history, MCP ``log``, the tree at HEAD), ``<shape>:said``; each asserts
the plan's end status first; ``audit:json`` (a fresh ``audit --json``). Needles: the printed
form whole, and every 8 characters of the secret in a row.

Seen (round 101): 4 classes broke.

1. **A per-character escape the redactor does not read** (``escape-gap``): ``jsonptr``,
   ``ldap-hex``, ``tex``, ``rtf``, ``qp-latin1``, ``ent-nosemi``, ``ncr-nosemi``, ``caret``,
   ``ps``, ``make``, ``pct``: each secret is written whole in an unambiguous notation (one
   escape per special character), committed in clear around the escape
   (``"stdout": "value: /Jp4Tq8Vw~1Xn2Rb6Hd~0Mk7Ls3F\\n"``), and for ``-fail`` also in the
   error message, the outcome commit, ``status``, ``show``, MCP ``log`` and the daemon's log.
   Held: ``ldap-bs`` (a backslash before the character), ``url-latin1``, ``translit``.
2. **The ASCII characters gathered** (``ascii-run``): ``puny``, ``idna``: Punycode writes the
   secret's ASCII characters first, in order (``Kq7mPvqWnTzLxJ9-mnb``: 15 of 16 characters,
   the é dropped), the form UTF-7 had before round 14.
3. **Signed bytes** (``signed-bytes``): ``java-bytes``: the code-run view reads unsigned
   decimals only; ``[75, 113, 55, ..., -61, -87, 120, 74, 57]`` is committed.
4. **A block alphabet not listed** (``block-alphabet``): ``b32hex``:
   ``9DOJERAGEPOLERIKF96C7ABO98SG====`` is committed (base32 in the standard alphabet is
   hidden).

Held: every shape (nested and overlapping secrets, a stripped line end, the reference and
output errors quote no value, verify quotes ``"***"``, bad JSON, the controller's join
recorded ``"v": "***"``, the tool's file never committed and its name ``***`` in the
listing), ``audit:json``. 99 ids: 39 passed, 60 strict xfails (15 forms x 4).

Should: the escape view read each of these notations as the character it stands for (one
more decoder per notation, or a general "escape-then-character" unit: ``~1``, ``\\2c``,
``^&``, ``$$``, ``%%``, ``\\'e``, ``\\u233?``, ``=E9``/``&#233``/``&eacute`` of a Latin-1
byte); Punycode is a view like UTF-7's; the code-run view read negative decimals as bytes
``b + 256``; base32hex is one more block alphabet.

Fixed (2026-12-04, the lead, r101standin; all 99 ids pass): classes 1 and 2 are ONE shape,
not a decoder per notation: the secret's runs of ASCII letters and digits written whole, in
order, each other character of it written in a few characters of any notation or dropped.
The redactor's *stand-in view* (``execution/secrets.py``: ``_standin_needle``,
``_find_standins``) finds a secret's runs (8 or more letters and digits in all) in order,
each at most 8 characters per character of the secret after the run before, case-blind for
a secret with letters, and masks from the first run to the last. The code-run view reads a
decimal with a sign as a signed byte (``-61`` -> 0xC3); base32hex is one more block
alphabet beside base32's.
"""

from __future__ import annotations

import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from mcpkit import answers
from test_round2_execution_kit import shared

SECRETS = {
    "SEP": "Jp4Tq8Vw/Xn2Rb6Hd~Mk7Ls3F",
    "LDP": "Gw5Nc8Rt,Hy3Pk6Xz+Bm2Qv9D",
    "UNI": "Kq7mPvqWnTzLéxJ9",
    "SYM": "Fc3Yh8Ws&Dk5Ln2Rj|Tg7$Pb4Mx%Hv6",
    "TOK": "Zq8Wx3Yv7Ut2Lp9K",
    "PFX": "Zq8Wx3Yv",
    "OV": "Lp9KdRm4Tn6B",
    "NL": "Hv6Ty2Lp8Ns4Qw3\n",
}

SAY = r"""import base64, json, sys
f, m = sys.argv[1], sys.argv[2]
p = json.loads(sys.stdin.read())
s = p.get("key", "")
def esc(chars, how):
    return "".join(how(c) if c in chars else c for c in s)
forms = {
    "jsonptr": lambda: "/" + s.replace("~", "~0").replace("/", "~1"),
    "ldap-hex": lambda: esc(",+", lambda c: "\\%02x" % ord(c)),
    "ldap-bs": lambda: esc(",+", lambda c: "\\" + c),
    "puny": lambda: s.encode("punycode").decode(),
    "idna": lambda: "https://xn--" + s.lower().encode("punycode").decode() + ".example/",
    "tex": lambda: s.replace("\u00e9", "\\'e"),
    "rtf": lambda: "".join("\\u%d?" % ord(c) if ord(c) > 127 else c for c in s),
    "qp-latin1": lambda: "".join("=%02X" % ord(c) if ord(c) > 127 else c for c in s),
    "url-latin1": lambda: "".join("%%%02X" % ord(c) if ord(c) > 127 else c for c in s),
    "ent-nosemi": lambda: s.replace("\u00e9", "&eacute"),
    "ncr-nosemi": lambda: s.replace("\u00e9", "&#233"),
    "translit": lambda: s.replace("\u00e9", "e"),
    "java-bytes": lambda: "[" + ", ".join(str(b - 256 if b > 127 else b) for b in s.encode()) + "]",
    "b32hex": lambda: base64.b32hexencode(s.encode()).decode(),
    "caret": lambda: esc("&|<>^", lambda c: "^" + c),
    "ps": lambda: esc("$`\"", lambda c: "`" + c),
    "make": lambda: s.replace("$", "$$"),
    "pct": lambda: s.replace("%", "%%"),
    "raw": lambda: s,
    "b64": lambda: base64.b64encode(s.encode()).decode(),
    "hex": lambda: s.encode().hex(),
    "upper": lambda: s.upper(),
    "two": lambda: s + p["key2"],
    "strip": lambda: s.strip(),
}
if f in forms:
    t = "value: " + forms[f]()
    if m == "ok":
        print(t)
    else:
        sys.stderr.write(t + "\n")
        sys.exit(3)
elif f == "keyobj":
    print(json.dumps({"o": {s: 1, "x": 2}}))
elif f == "strobj":
    print(json.dumps({"o": s + "-pad"}))
elif f == "half1":
    print(json.dumps({"o": s[:8]}))
elif f == "half2":
    print(json.dumps({"o": s[8:]}))
elif f == "badjson":
    print('{"v": "' + s + '", ')
elif f == "verify":
    print(json.dumps({"v": s, "ok": False}))
"""

#: a tool working in the repository's tree: a file named by the secret in the plan's folder
WRITE = """import json, os, sys
p = json.loads(sys.stdin.read())
open(os.path.join("plans", "repo-file", p["key"] + ".txt"), "w").write("x")
print(json.dumps({"files": sorted(os.listdir(os.path.join("plans", "repo-file")))}))
"""

#: form -> (secret name, the form as the tool prints it)
FORMS = {
    "jsonptr": ("SEP", "/Jp4Tq8Vw~1Xn2Rb6Hd~0Mk7Ls3F"),
    "ldap-hex": ("LDP", "Gw5Nc8Rt\\2cHy3Pk6Xz\\2bBm2Qv9D"),
    "ldap-bs": ("LDP", "Gw5Nc8Rt\\,Hy3Pk6Xz\\+Bm2Qv9D"),
    "puny": ("UNI", "Kq7mPvqWnTzLxJ9-mnb"),
    "idna": ("UNI", "xn--kq7mpvqwntzlxj9-mnb"),
    "tex": ("UNI", "Kq7mPvqWnTzL\\'exJ9"),
    "rtf": ("UNI", "Kq7mPvqWnTzL\\u233?xJ9"),
    "qp-latin1": ("UNI", "Kq7mPvqWnTzL=E9xJ9"),
    "url-latin1": ("UNI", "Kq7mPvqWnTzL%E9xJ9"),
    "ent-nosemi": ("UNI", "Kq7mPvqWnTzL&eacutexJ9"),
    "ncr-nosemi": ("UNI", "Kq7mPvqWnTzL&#233xJ9"),
    "translit": ("UNI", "Kq7mPvqWnTzLexJ9"),
    "java-bytes": (
        "UNI",
        "[75, 113, 55, 109, 80, 118, 113, 87, 110, 84, 122, 76, -61, -87, 120, 74, 57]",
    ),
    "b32hex": ("UNI", "9DOJERAGEPOLERIKF96C7ABO98SG===="),
    "caret": ("SYM", "Fc3Yh8Ws^&Dk5Ln2Rj^|Tg7$Pb4Mx%Hv6"),
    "ps": ("SYM", "Fc3Yh8Ws&Dk5Ln2Rj|Tg7`$Pb4Mx%Hv6"),
    "make": ("SYM", "Fc3Yh8Ws&Dk5Ln2Rj|Tg7$$Pb4Mx%Hv6"),
    "pct": ("SYM", "Fc3Yh8Ws&Dk5Ln2Rj|Tg7$Pb4Mx%%Hv6"),
}


def _act(i: int, f: str, key: str, m: str = "ok", more: str = "", key2: str = "") -> str:
    params = f'{{f: {f}, m: {m}, key: "$<secrets.{key}>"' + (
        f', key2: "$<secrets.{key2}>"}}' if key2 else "}"
    )
    return f"  - id: {i}\n    tool: say\n    why: w\n    params: {params}\n" + more


OUT = "    outputs: [{name: o, path: $.json.o}]\n"


def _rec(tag: str, v: str, needs: str) -> str:
    return f'  - id: 3\n    tool: rec\n    why: w\n    needs: {needs}\n    params: {{tag: {tag}, v: "{v}"}}\n'


#: shape -> (the plan's actions, the secrets it must not show, the plan's end status)
SHAPES: dict[str, tuple[str, list[str], str]] = {
    "nest-raw": (_act(1, "raw", "TOK"), ["TOK"], "completed"),
    "nest-b64": (_act(1, "b64", "TOK"), ["TOK"], "completed"),
    "nest-hex": (_act(1, "hex", "TOK"), ["TOK"], "completed"),
    "nest-upper": (_act(1, "upper", "TOK"), ["TOK"], "completed"),
    "overlap": (_act(1, "two", "TOK", key2="OV"), ["TOK", "OV"], "completed"),
    "strip-nl": (_act(1, "strip", "NL"), ["NL"], "completed"),
    "ref-key": (
        _act(1, "keyobj", "UNI", more=OUT)
        + _rec("ref-key", "$<actions[1].outputs.o.nope>", "[1]").replace("id: 3", "id: 2"),
        ["UNI"],
        "failed",
    ),
    "ref-str": (
        _act(1, "strobj", "UNI", more=OUT)
        + _rec("ref-str", "$<actions[1].outputs.o.k>", "[1]").replace("id: 3", "id: 2"),
        ["UNI"],
        "failed",
    ),
    "out-missing": (
        _act(1, "keyobj", "UNI", more="    outputs: [{name: o, path: $.json.nope}]\n"),
        ["UNI"],
        "failed",
    ),
    "verify": (
        _act(1, "verify", "UNI", more="    verify: {expect: {path: $.json.v, equals: nope}}\n"),
        ["UNI"],
        "failed",
    ),
    "bad-json": (
        _act(1, "badjson", "UNI", more="    outputs: [{name: o, path: $.json.v}]\n"),
        ["UNI"],
        "failed",
    ),
    "join": (
        _act(1, "half1", "UNI", more=OUT)
        + _act(2, "half2", "UNI", more=OUT)
        + _rec("join", "$<actions[1].outputs.o>$<actions[2].outputs.o>", "[1, 2]"),
        ["UNI-whole"],
        "completed",
    ),
    "repo-file": (
        '  - id: 1\n    tool: w\n    why: w\n    params: {key: "$<secrets.UNI>"}\n',
        ["UNI"],
        "completed",
    ),
}


def _plan(slug: str, actions: str) -> str:
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: say}, {name: rec}, {name: w}]\nactions:\n" + actions
    )


def _slugs() -> list[str]:
    return [f"{f}-{m}" for f in FORMS for m in ("ok", "fail")] + list(SHAPES)


def _build(root: Path) -> Lab:
    (root / "say.py").write_text(SAY)
    (root / "w.py").write_text(WRITE)
    (root / "sec.json").write_text(json.dumps(SECRETS))
    py, say, w = (json.dumps(str(x)) for x in (sys.executable, root / "say.py", root / "w.py"))
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {root / 'sec.json'}}}\n",
        tools=f"say: {{kind: exec, argv: [{py}, {say}, '{{f}}', '{{m}}']}}\n"
        f"w: {{kind: exec, argv: [{py}, {w}], cwd: {json.dumps(str(root / 'lab' / 'repo'))}}}\n",
    )
    for f, (key, _) in FORMS.items():
        for m in ("ok", "fail"):
            lab.write(f"{f}-{m}", _plan(f"{f}-{m}", _act(1, f, key, m)))
    for shape, (actions, _, _) in SHAPES.items():
        lab.write(shape, _plan(shape, actions))
    lab.commit("plans")
    first = lab.run()
    for slug in _slugs():
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    second = lab.run()
    got: dict[str, Any] = {"passlog": first.stderr + second.stderr}
    cfg = str(lab.config)
    fails = [f"{f}-fail" for f in FORMS]
    with ThreadPoolExecutor(4) as pool:  # what readers see, read side by side (no writes)
        histories = {slug: pool.submit(lab.history, slug) for slug in _slugs()}
        shows = {
            s: pool.submit(lab.cli, "show", "--config", cfg, str(lab.repo / "plans" / s))
            for s in fails
        }
        as_json = pool.submit(lab.cli, "status", "--json", "--config", cfg)
        as_text = pool.submit(lab.cli, "status", "--config", cfg)
        replies = pool.submit(
            answers, lab, [("log", {"path": f"plans/{slug}"}) for slug in _slugs()]
        )
        audit = pool.submit(lab.audit)
        got["history"] = {slug: h.result() for slug, h in histories.items()}
        got["show"] = {s: told.result().stdout + told.result().stderr for s, told in shows.items()}
        rows = {row["plan"]: row for row in json.loads(as_json.result().stdout)}
        got["status"] = as_text.result().stdout
        got["mcp"] = {
            slug: json.dumps(reply, ensure_ascii=False)
            for slug, reply in zip(_slugs(), replies.result(), strict=True)
        }
        got["audit"] = json.dumps(audit.result()[1], ensure_ascii=False)
    got["rows"] = {p: r.get("status") for p, r in rows.items()}
    got["rowtext"] = {p: json.dumps(r, ensure_ascii=False) for p, r in rows.items()}
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "HEAD")
    got["calls"] = [c["stdin"] for c in lab.calls("join")]
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r101-secrets-atk101a", _build)


def _needles(key: str, form: str | None = None) -> list[str]:
    if key == "UNI-whole":
        return [SECRETS["UNI"]]
    s = SECRETS[key].strip()
    found = [s[i : i + 8] for i in range(len(s) - 7)]
    return found + ([form] if form else [])


def _leaks(text: str, needles: list[str]) -> list[str]:
    return [n for n in needles if n in text]


def _about(log: str, slugs: list[str]) -> str:
    return "\n".join(line for line in log.splitlines() if any(f"plans/{s}" in line for s in slugs))


def _said(got: dict[str, Any], slugs: list[str]) -> str:
    """What ``status`` (text: the block of each plan; JSON: its row) and the daemon's log say
    about ``slugs``."""
    text = _about(got["passlog"], slugs)
    for slug in slugs:
        text += got["rowtext"].get(f"plans/{slug}", "")
        block = re.split(r"(?m)^(?=\S)", got["status"])
        text += "".join(b for b in block if f"plans/{slug}" in b.split("\n", 1)[0])
    return text


FORM_IDS = [f"{f}:{w}" for f in FORMS for w in ("ok", "fail", "said", "mcp")]
SHAPE_IDS = [f"{s}:{w}" for s in SHAPES for w in ("record", "said")]
IDS = FORM_IDS + SHAPE_IDS + ["audit:json"]

BROKEN: dict[str, Any] = {}  # all 60 fixed the same session (r101standin)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round101_secrets_atk101a(lab: Lab, vid: str) -> None:
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    variant, what = vid.split(":")
    if variant == "audit":
        every = [n for k in SECRETS for n in _needles(k)]
        assert not _leaks(got["audit"], every), got["audit"][:2000]
        return
    if variant in FORMS:
        key, form = FORMS[variant]
        needles = _needles(key, form)
        slugs = [f"{variant}-ok", f"{variant}-fail"]
        assert got["rows"].get(f"plans/{slugs[0]}") == "completed", got["rows"]
        assert got["rows"].get(f"plans/{slugs[1]}") == "failed", got["rows"]
        if what in ("ok", "fail"):
            text = got["history"][f"{variant}-{what}"]
            assert "value: " in text, text[-1500:]  # the tool's line is recorded
        elif what == "said":
            text = _said(got, slugs) + got["show"][slugs[1]]
        else:
            text = got["mcp"][slugs[0]] + got["mcp"][slugs[1]]
        assert not _leaks(text, needles), (_leaks(text, needles), text[-1500:])
        return
    _, keys, end = SHAPES[variant]
    needles = [n for k in keys for n in _needles(k)]
    assert got["rows"].get(f"plans/{variant}") == end, got["rows"]
    if what == "record":
        text = got["history"][variant] + got["mcp"][variant] + got["tree"]
        if variant == "join":  # the controller joined the halves: the tool got the secret whole
            assert [json.loads(c)["v"] for c in got["calls"]] == [SECRETS["UNI"]], got["calls"]
    else:
        text = _said(got, [variant])
    assert not _leaks(text, needles), (_leaks(text, needles), text[-1500:])
