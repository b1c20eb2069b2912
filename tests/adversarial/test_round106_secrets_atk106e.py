# ruff: noqa: E501
"""Round 106, secrets (atk106e): the controller's own paths around a secret (a spawn
error, a timeout, intake refusals naming a JSONPath, python exceptions, http answers), very
short/long and non-ASCII secrets in Unicode's case mappings, numeric secrets in other
notations, the gate's preview of a long secret, and value-tree edges between the hash and
what a tool receives.

Lab (one, module scope; local mode; ~16 s): ``secrets.file`` holds TOK (ASCII), UNI (one
``é``), NUM (``918273645012``), GRK (Greek capitals ending in ``Σ``), ESZ (no ASCII, a
``ß``), DTL (no ASCII, dotless ``ı``), LGS (long ``ſ``), SH (``Q7z``), LONG (300 chars). An
exec tool ``say`` prints a form of its ``key`` on stdout and exits 0 (``<form>-ok``) or on
stderr and exits 3 (``<form>-fail``); ``slow`` (timeout 1 s), ``bin`` (argv[0] is the
secret), ``py`` (a python tool raising/returning the secret), ``http`` (a 127.0.0.1 server
echoing it in a header, ``Location``, reason phrase, error body, ``Set-Cookie``), ``hpath``
and ``hget`` (refused connections, the secret in the URL path / GET query). One pass
freezes, Alice approves all in one commit, one pass runs; then ``status`` (text, JSON),
``show --config``, one MCP ``log`` of every plan and ``audit --json``.

Ids: ``<form>:ok``/``:fail`` (git history and MCP log of that plan), ``<form>:said``
(status, show, MCP, the daemon's log); ``<shape>:record``/``:said`` (argv0, timeout,
nan-key, big-key, deep, py-*, http-*, gate-long, gate-mix: the end status first);
``vt-<pair>:tool`` (two files, same name, ``plangate hash`` alike -> same status and the
same stdin for ``rec``); ``audit:json``. Needles: the printed form and every 8 characters
of the secret in a row (the whole secret when shorter).

Seen (round 106): 3 classes broke (21 strict xfails), 88 ids held.

1. **Digit grouping other than by threes** (``digit-grouping``): ``lakh``
   (``9,18,27,36,45,012``), ``wan`` (``9182,7364,5012``): committed in stdout, the error,
   the outcome commit, ``status``, ``show``, MCP ``log``, the daemon's log.
2. **A numeric secret's value in hex** (``number-notation``): ``hexint``
   (``0xd5cd5fd9d4``, ``hex(int(s))``/``printf %x``). Held: ``sci`` (``9.18273645012e+11``).
3. **Unicode's full case mappings of a secret without ASCII** (``full-case-mapping``):
   ``esz-upper`` (``ÄÖÜSSÉÈÊÑÇØ``: ``ß`` upper-cased to ``SS``), ``esz-fold``
   (``äöüsséèêñçø``), ``grk-fold`` (``αβγδεζηθικλσ``: casefold's ``σ`` for the final
   ``ς`` that ``lower()`` writes), ``dtl-upper`` (``IŞĞÜÖÇIŞĞÜ``: dotless ``ı`` to ``I``).
   Held: ``grk-lower``, ``dtl-lower``, ``lgs-upper``/``lgs-fold`` (``ſ`` -> ``S``/``s``, NFKC).

Held: ``short-raw`` (3 characters masked), ``long-raw``, ``ff-gap`` (0xFF bytes between the
characters); every shape (argv[0] spawn error, the timeout, NaN/1e400 under a secret key, 101
levels, python ``ValueError``/``KeyError``/bytes/``from``/``add_note``/unserializable
object/set/NaN/``sys.exit``/print, http header/Location/reason/error body/cookie/refused path
and query, the gate preview of a long output and a mixed string); ``vt-*``: where two
files hash alike the tool got the same text (``-0e0``/``0``, ``0.30000000000000004``/
``3.0000000000000004e-1``, ``1.5e300``/``15e299``); ``1e16``/``1e21`` hash while their
integer spellings are refused (``E_SCHEMA_INVALID``, beyond 2^53), so never alike;
NFC/NFD strings and keys hash apart. ``audit:json``.

Should: the grouped view read any one separator between digit groups of 2-4 (not only
threes); a numeric secret's value in hex (and octal) as one of its forms; the skeleton view
compare ``casefold()`` (full case folding, both sides) rather than per-character lower
case, and search upper-cased text with ``ß``->``ss``/``ı``->``i`` equivalence.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from mcpkit import answers
from test_round2_execution_kit import shared

LONG = "".join(
    "Zq8Wx3Yv7Ut2Lp9KdRm4Tn6BHv6Ty2Lp8Ns4Qw3"[(i * 7) % 39]
    + "abcdefghijkmnpqrstuvwxyz23456789"[(i * 11) % 32]
    for i in range(150)
)
SECRETS = {
    "TOK": "Zq8Wx3Yv7Ut2Lp9K",
    "UNI": "Kq7mPvqWnTzL\u00e9xJ9",
    "NUM": "918273645012",
    "GRK": "\u0391\u0392\u0393\u0394\u0395\u0396\u0397\u0398\u0399\u039a\u039b\u03a3",  # ends in capital sigma
    "ESZ": "\u00c4\u00d6\u00dc\u00df\u00c9\u00c8\u00ca\u00d1\u00c7\u00d8",  # no ASCII, a sharp s
    "DTL": "\u0131\u015e\u011e\u00dc\u00d6\u00c7\u0131\u015e\u011e\u00dc",  # dotless i
    "LGS": "\u017f\u00e4\u017f\u00f6\u017f\u00fc\u017f\u00e9\u017f\u00e8",  # long s
    "SH": "Q7z",
    "LONG": LONG,
}

SAY = r"""import json, sys, time, unicodedata
f, m = sys.argv[1], sys.argv[2]
p = json.loads(sys.stdin.read())
s = p.get("key", "")
def lakh(d):
    head, tail = d[:-3], d[-3:]
    parts = []
    while len(head) > 2:
        parts.insert(0, head[-2:]); head = head[:-2]
    if head: parts.insert(0, head)
    return ",".join(parts + [tail])
forms = {
    "lakh": lambda: lakh(s),
    "wan": lambda: ",".join([s[:4], s[4:8], s[8:]]),
    "hexint": lambda: hex(int(s)),
    "sci": lambda: "%.11e" % int(s),
    "lower": lambda: s.lower(),
    "casefold": lambda: s.casefold(),
    "upper": lambda: s.upper(),
    "nfkd-upper": lambda: unicodedata.normalize("NFKD", s.upper()),
    "raw": lambda: s,
    "ff-gap": lambda: None,
}
if f == "ff-gap":
    out = b"value: " + b"\xff".join(bytes([c]) for c in s.encode()) + b"\n"
    if m == "ok":
        sys.stdout.buffer.write(out)
    else:
        sys.stderr.buffer.write(out); sys.exit(3)
elif f in forms:
    t = "value: " + forms[f]()
    if m == "ok":
        print(t)
    else:
        sys.stderr.write(t + "\n")
        sys.exit(3)
elif f == "nan-key":
    print('{"' + s + '": {"x": NaN}}')
elif f == "big-key":
    print('{"a": {"' + s + '": 1e400}}')
elif f == "deep":
    print("[" * 101 + json.dumps(s) + "]" * 101)
elif f == "sleep":
    sys.stderr.write("value: " + s + "\n"); sys.stderr.flush()
    print("value: " + s); sys.stdout.flush()
    time.sleep(30)
elif f == "pad":
    print(json.dumps({"o": "A" * 1990 + s}))
elif f == "hdr":
    print(json.dumps({"o": s}))
"""

PTOOL = r"""
class Odd:
    def __init__(self, s):
        self.s = s
    def __repr__(self):
        return "Odd(" + self.s + ")"

def run(f, key):
    if f == "exc":
        raise ValueError("value: " + key)
    if f == "keyerr":
        raise KeyError(key)
    if f == "bytes":
        raise ValueError(key.encode())
    if f == "cause":
        try:
            raise ValueError("value: " + key)
        except ValueError as e:
            raise RuntimeError("outer") from e
    if f == "note":
        e = RuntimeError("outer")
        e.add_note("value: " + key)
        raise e
    if f == "obj":
        return {"o": Odd(key)}
    if f == "setret":
        return {key}
    if f == "nan":
        return {key: float("nan")}
    if f == "exit":
        import sys
        sys.exit("value: " + key)
    if f == "print":
        print("value: " + key)
        raise ValueError("boom")
    return {"ok": True}
"""


class Echo(BaseHTTPRequestHandler):
    def log_message(self, *a: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        key = json.loads(body or b"{}").get("key", "")
        mode = self.path.strip("/").split("/")[0]
        if mode == "hdr":
            self.send_response(200)
            self.send_header("X-Echo", key)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"ok": true}')
        elif mode == "hdr-fail":
            self.send_response(500)
            self.send_header("X-Echo", key)
            self.end_headers()
            self.wfile.write(b"no")
        elif mode == "loc":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:1/x?token=" + key)
            self.end_headers()
        elif mode == "reason":
            self.send_response(503, "value " + key)
            self.end_headers()
            self.wfile.write(b"down")
        elif mode == "body-fail":
            self.send_response(500)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.end_headers()
            self.wfile.write(("value: " + key).encode())
        elif mode == "cookie":
            self.send_response(200)
            self.send_header("Set-Cookie", "sid=" + key + "; Path=/")
            self.end_headers()
            self.wfile.write(b"{}")
        else:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(json.dumps({"v": key}).encode())


#: form (exec say, ok and fail) -> (secret, the printed form)
def _forms() -> dict[str, tuple[str, str]]:
    g, e, d, s = SECRETS["GRK"], SECRETS["ESZ"], SECRETS["DTL"], SECRETS["LGS"]
    return {
        "lakh": ("NUM", "9,18,27,36,45,012"),
        "wan": ("NUM", "9182,7364,5012"),
        "hexint": ("NUM", hex(int(SECRETS["NUM"]))),
        "sci": ("NUM", "{:.11e}".format(int(SECRETS["NUM"]))),
        "grk-lower": ("GRK", g.lower()),
        "grk-fold": ("GRK", g.casefold()),
        "esz-upper": ("ESZ", e.upper()),
        "esz-fold": ("ESZ", e.casefold()),
        "dtl-upper": ("DTL", d.upper()),
        "dtl-lower": ("DTL", d.lower()),
        "lgs-upper": ("LGS", s.upper()),
        "lgs-fold": ("LGS", s.casefold()),
        "short-raw": ("SH", "Q7z"),
        "long-raw": ("LONG", LONG),
        "ff-gap": ("TOK", "Z\ufffdq\ufffd8"),
    }


FORMS = _forms()
FORM_F = {
    "grk-lower": "lower",
    "grk-fold": "casefold",
    "esz-upper": "upper",
    "esz-fold": "casefold",
    "dtl-upper": "upper",
    "dtl-lower": "lower",
    "lgs-upper": "upper",
    "lgs-fold": "casefold",
    "short-raw": "raw",
    "long-raw": "raw",
}


def _act(i: int, tool: str, f: str, key: str, m: str = "ok", more: str = "") -> str:
    return (
        f"  - id: {i}\n    tool: {tool}\n    why: w\n"
        f'    params: {{f: {f}, m: {m}, key: "$<secrets.{key}>"}}\n' + more
    )


#: controller paths: shape -> (actions, secrets, end status)
def _shapes() -> dict[str, tuple[str, list[str], str]]:
    out = "    outputs: [{name: o, path: $.json.o}]\n"
    return {
        "argv0": (
            '  - id: 1\n    tool: bin\n    why: w\n    params: {key: "$<secrets.TOK>"}\n',
            ["TOK"],
            "failed",
        ),
        "argv0-uni": (
            '  - id: 1\n    tool: bin\n    why: w\n    params: {key: "$<secrets.UNI>"}\n',
            ["UNI"],
            "failed",
        ),
        "timeout": (_act(1, "slow", "sleep", "TOK"), ["TOK"], "failed"),
        "nan-key": (_act(1, "say", "nan-key", "TOK"), ["TOK"], "failed"),
        "nan-key-uni": (_act(1, "say", "nan-key", "UNI"), ["UNI"], "failed"),
        "big-key": (_act(1, "say", "big-key", "TOK"), ["TOK"], "failed"),
        "deep": (_act(1, "say", "deep", "TOK"), ["TOK"], "failed"),
        "py-exc": (_act(1, "py", "exc", "TOK"), ["TOK"], "failed"),
        "py-keyerr": (_act(1, "py", "keyerr", "UNI"), ["UNI"], "failed"),
        "py-bytes": (_act(1, "py", "bytes", "UNI"), ["UNI"], "failed"),
        "py-cause": (_act(1, "py", "cause", "TOK"), ["TOK"], "failed"),
        "py-note": (_act(1, "py", "note", "TOK"), ["TOK"], "failed"),
        "py-obj": (_act(1, "py", "obj", "TOK"), ["TOK"], "failed"),
        "py-setret": (_act(1, "py", "setret", "TOK"), ["TOK"], "failed"),
        "py-nan": (_act(1, "py", "nan", "TOK"), ["TOK"], "failed"),
        "py-exit": (_act(1, "py", "exit", "TOK"), ["TOK"], "failed"),
        "py-print": (_act(1, "py", "print", "UNI"), ["UNI"], "failed"),
        "http-hdr": (_act(1, "http", "hdr", "TOK"), ["TOK"], "completed"),
        "http-hdr-fail": (_act(1, "http", "hdr-fail", "UNI"), ["UNI"], "failed"),
        "http-loc": (_act(1, "http", "loc", "TOK"), ["TOK"], "completed"),
        "http-reason": (_act(1, "http", "reason", "TOK"), ["TOK"], "failed"),
        "http-body-fail": (_act(1, "http", "body-fail", "UNI"), ["UNI"], "failed"),
        "http-cookie": (_act(1, "http", "cookie", "TOK"), ["TOK"], "completed"),
        "http-refused-path": (_act(1, "hpath", "x", "UNI"), ["UNI"], "failed"),
        "http-refused-query": (_act(1, "hget", "x", "TOK"), ["TOK"], "failed"),
        "gate-long": (
            _act(1, "say", "pad", "LONG", more=out)
            + "  - id: 2\n    tool: rec\n    why: w\n    requires_approval: true\n"
            '    params: {tag: gate-long, v: "$<actions[1].outputs.o>", s: "$<secrets.LONG>"}\n',
            ["LONG"],
            "awaiting_approval",
        ),
        "gate-mix": (
            _act(1, "say", "hdr", "TOK", more=out)
            + "  - id: 2\n    tool: rec\n    why: w\n    requires_approval: true\n"
            '    params: {tag: gate-mix, v: "x$<actions[1].outputs.o>$<secrets.UNI>y"}\n',
            ["TOK", "UNI"],
            "awaiting_approval",
        ),
    }


SHAPES = _shapes()

#: value-tree pairs: name -> (the value as file A writes it, as file B writes it)
PAIRS = {
    "f1e16": ("1e16", "10000000000000000"),
    "f1e21": ("1e21", "1000000000000000000000"),
    "big53": ("9007199254740993", "9007199254740992"),
    "neg0e": ("-0e0", "0"),
    "tiny": ("5e-324", "4.9406564584124654e-324"),
    "frac": ("0.30000000000000004", "3.0000000000000004e-1"),
    "nfc": ('"\\u00e9"', '"e\\u0301"'),
    "keynfc": ('{"\\u00e9": 1}', '{"e\\u0301": 1}'),
    "bigexp": ("1.5e300", "15e299"),
}


def _plan(slug: str, actions: str, name: str | None = None) -> str:
    return (
        f"plan:\n  name: {name or slug}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: say}, {name: rec}, {name: bin}, {name: slow}, {name: py},"
        " {name: http}, {name: hpath}, {name: hget}]\nactions:\n" + actions
    )


def _vt(slug: str, value: str, name: str) -> str:
    return _plan(
        slug,
        f"  - id: 1\n    tool: rec\n    why: w\n    params: {{tag: {slug[:-2]}, n: {value}}}\n",
        name,
    )


def _slugs() -> list[str]:
    return [f"{f}-{m}" for f in FORMS for m in ("ok", "fail")] + list(SHAPES)


def _vslugs() -> list[str]:
    return [f"vt-{p}-{x}" for p in PAIRS for x in "ab"]


def _build(root: Path) -> Lab:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    (root / "say.py").write_text(SAY)
    (root / "pylib").mkdir()
    (root / "pylib" / "ptool106.py").write_text(PTOOL)
    (root / "sec.json").write_text(json.dumps(SECRETS))
    py, say = (json.dumps(str(x)) for x in (sys.executable, root / "say.py"))
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {root / 'sec.json'}}}\npython_path: [{json.dumps(str(root / 'pylib'))}]\n",
        tools=f"say: {{kind: exec, argv: [{py}, {say}, '{{f}}', '{{m}}']}}\n"
        f"slow: {{kind: exec, argv: [{py}, {say}, '{{f}}', '{{m}}'], timeout: 1}}\n"
        "bin: {kind: exec, argv: ['{key}']}\n"
        "py: {kind: python, target: 'ptool106:run'}\n"
        f"http: {{kind: http, method: POST, url: 'http://127.0.0.1:{port}/{{f}}'}}\n"
        "hpath: {kind: http, method: POST, url: 'http://127.0.0.1:1/{key}'}\n"
        "hget: {kind: http, method: GET, url: 'http://127.0.0.1:1/x'}\n",
    )
    for f in FORMS:
        for m in ("ok", "fail"):
            lab.write(
                f"{f}-{m}", _plan(f"{f}-{m}", _act(1, "say", FORM_F.get(f, f), FORMS[f][0], m))
            )
    for shape, (actions, _, _) in SHAPES.items():
        lab.write(shape, _plan(shape, actions))
    hashdir = root / "hashes"
    for p, (a, b) in PAIRS.items():
        for x, v in (("a", a), ("b", b)):
            lab.write(f"vt-{p}-{x}", _vt(f"vt-{p}-{x}", v, f"vt-{p}-{x}"))
            (hashdir / f"{p}-{x}").mkdir(parents=True)
            (hashdir / f"{p}-{x}" / "PLAN.yml").write_text(_vt(f"vt-{p}-{x}", v, f"vt-{p}"))
    lab.commit("plans")
    cfg = str(lab.config)
    with ThreadPoolExecutor(2) as pool:
        hashes = {
            k: pool.submit(lab.cli, "hash", "--config", cfg, str(hashdir / k / "PLAN.yml"))
            for k in (f"{p}-{x}" for p in PAIRS for x in "ab")
        }
        got: dict[str, Any] = {
            "hash": {
                k: (h.result().returncode, h.result().stdout.strip(), h.result().stderr[-300:])
                for k, h in hashes.items()
            }
        }
    first = lab.run()
    for slug in _slugs() + _vslugs():
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    second = lab.run()
    server.shutdown()
    got["passlog"] = first.stderr + second.stderr
    slugs = _slugs()
    with ThreadPoolExecutor(2) as pool:
        histories = {slug: pool.submit(lab.history, slug) for slug in slugs}
        shows = {
            s: pool.submit(lab.cli, "show", "--config", cfg, str(lab.repo / "plans" / s))
            for s in slugs
            if not s.endswith("-ok")
        }
        as_json = pool.submit(lab.cli, "status", "--json", "--config", cfg)
        as_text = pool.submit(lab.cli, "status", "--config", cfg)
        replies = pool.submit(answers, lab, [("log", {"path": f"plans/{slug}"}) for slug in slugs])
        audit = pool.submit(lab.audit)
        got["history"] = {slug: h.result() for slug, h in histories.items()}
        got["show"] = {s: t.result().stdout + t.result().stderr for s, t in shows.items()}
        rows = {row["plan"]: row for row in json.loads(as_json.result().stdout)}
        got["status"] = as_text.result().stdout
        got["mcp"] = {
            slug: json.dumps(r, ensure_ascii=False)
            for slug, r in zip(slugs, replies.result(), strict=True)
        }
        got["audit"] = json.dumps(audit.result()[1], ensure_ascii=False)
    got["rows"] = {p: r.get("status") for p, r in rows.items()}
    got["rowtext"] = {p: json.dumps(r, ensure_ascii=False) for p, r in rows.items()}
    got["calls"] = {f"vt-{p}": [c["stdin"] for c in lab.calls(f"vt-{p}")] for p in PAIRS}
    got["vcalls"] = {}
    if lab.log.exists():
        for line in lab.log.read_text().splitlines():
            row = json.loads(line)
            got["vcalls"].setdefault(row["argv"][0], []).append(row["stdin"])
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r106-secrets-atk106e", _build)


def _needles(key: str, form: str | None = None) -> list[str]:
    s = SECRETS[key]
    found = [s] if len(s) < 8 else [s[i : i + 8] for i in range(len(s) - 7)]
    return found + ([form] if form and form != s else [])


def _leaks(text: str, needles: list[str]) -> list[str]:
    return [n for n in needles if n in text]


def _about(log: str, slugs: list[str]) -> str:
    return "\n".join(line for line in log.splitlines() if any(f"plans/{s}" in line for s in slugs))


def _said(got: dict[str, Any], slugs: list[str]) -> str:
    text = _about(got["passlog"], slugs)
    for slug in slugs:
        text += got["rowtext"].get(f"plans/{slug}", "")
        block = re.split(r"(?m)^(?=\S)", got["status"])
        text += "".join(b for b in block if f"plans/{slug}" in b.split("\n", 1)[0])
        text += got["show"].get(slug, "") + got["mcp"].get(slug, "")
    return text


FORM_IDS = [f"{f}:{w}" for f in FORMS for w in ("ok", "fail", "said")]
SHAPE_IDS = [f"{s}:{w}" for s in SHAPES for w in ("record", "said")]
PAIR_IDS = [f"vt-{p}:tool" for p in PAIRS]
IDS = FORM_IDS + SHAPE_IDS + PAIR_IDS + ["audit:json"]

#: round 106's three secret classes (digit-grouping, number-notation, full-case-mapping; 21
#: ids) were fixed the same session (r106secrets): none expected to break
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round106_secrets_atk106e(lab: Lab, vid: str) -> None:
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    variant, what = vid.split(":")
    if variant == "audit":
        every = [n for k in SECRETS for n in _needles(k)]
        assert not _leaks(got["audit"], every), got["audit"][:2000]
        return
    if variant.startswith("vt-"):
        p = variant[3:]
        ha, hb = got["hash"][f"{p}-a"], got["hash"][f"{p}-b"]
        ra, rb = got["rows"].get(f"plans/vt-{p}-a"), got["rows"].get(f"plans/vt-{p}-b")
        calls = got["calls"][variant]
        if ha[0] == 0 and hb[0] == 0 and ha[1] == hb[1]:  # hash alike: run alike
            assert ra == rb, (ra, rb, ha, hb)
            assert len(calls) in (0, 2) and len(set(calls)) <= 1, (calls, ha)
        return
    if variant in FORMS:
        key, form = FORMS[variant]
        needles = _needles(key, form)
        slugs = [f"{variant}-ok", f"{variant}-fail"]
        assert got["rows"].get(f"plans/{slugs[0]}") == "completed", got["rows"].get(
            f"plans/{slugs[0]}"
        )
        assert got["rows"].get(f"plans/{slugs[1]}") == "failed", got["rows"].get(
            f"plans/{slugs[1]}"
        )
        if what in ("ok", "fail"):
            text = got["history"][f"{variant}-{what}"] + got["mcp"][f"{variant}-{what}"]
            assert "value: " in text, text[-1500:]
        else:
            text = _said(got, slugs)
        assert not _leaks(text, needles), (_leaks(text, needles), text[-1500:])
        return
    _, keys, end = SHAPES[variant]
    needles = [n for k in keys for n in _needles(k)]
    assert got["rows"].get(f"plans/{variant}") == end, got["rows"].get(f"plans/{variant}")
    text = (
        got["history"][variant] + got["mcp"][variant] if what == "record" else _said(got, [variant])
    )
    if variant.startswith("argv0") and what == "record":
        # changed (fix130s): secret on stdin, argv refuses it: argv[0] filled with a secret is
        # refused before anything starts (E_PARAMS_INVALID), no spawn error to redact
        assert "E_PARAMS_INVALID" in text, text[-1500:]
    assert not _leaks(text, needles), (_leaks(text, needles), text[-1500:])
