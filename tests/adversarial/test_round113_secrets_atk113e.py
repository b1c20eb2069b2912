r"""Round 113, secrets and values (atk113e): a configured secret in Unicode full case
mapping (``ß``/``SS``, Turkish dotted/dotless i), URL-safe base64 off its alignment, the
usual forms of two new non-ASCII secrets, upper-cased and fullwidth forms cut at
``limits.max_result_bytes``, a secret printed upper-cased before a timeout kill; and YAML
values beyond JSON (integers past 2^64 and 2^53, timestamps, dates, NaN/Infinity spellings,
``1e400``, ``!!binary``) and number spellings that hash alike.

Lab (one, module scope; local mode; ``limits.max_result_bytes: 256``): round 112's lab
(atk112e) with two more secrets in ``secrets.file``: ESZ (``Grüße7Zq4Kx9Wm3Lp``) and TURK
(``Di7Kli9Zq4Wm3Xiv``). The exec tool ``say`` reads ``$<secrets.NAME>`` from stdin and
prints ``form_of(form, key)`` (exit 2); ``cuto-``/``cut-`` print it after filler so the cut
keeps the form of the first 12 characters; ``slow`` (timeout 2) prints then sleeps. One
pass freezes, Alice approves all in one commit, one pass runs; then ``status`` (text,
JSON), ``show``, MCP ``log``/``status``, the journal, notify posts and the daemon's page.

Ids: ``<plan>`` (41): no needle (8-character windows of the secret, the printed form, its
lines and long words, raw and JSON-escaped) in git, MCP, journal, what is said, notify,
page; ``***`` in the journal. ``hook_url`` (1). ``values[<group>:<tool>]`` (9: ``-1``/
``-1.0``/``-1e0``; ``'12'``/``"12"``/``12``; ``0.1``/``1e-1``/``0.10000000000000001``):
alike hashes reach exec argv/stdin, python kwargs and http path/body alike.
``refused[<slug>]`` (12): ``18446744073709551617``, ``+18446744073709551617``,
``2024-01-02``, ``.nan``, ``.NaN``, ``.inf``, ``-.Inf``, ``1e400``, ``9007199254740992``
refused ``E_SCHEMA_INVALID``; a plain timestamp in a flow mapping and ``!!binary``
``E_YAML_PARSE``, by ``plangate hash`` and the controller alike.

Seen (round 113, 63 ids, ~51 s wall): 0 broke, 63 held.

Held: upper case and casefold of ESZ (``GRÜSSE...``), TURK upper-cased and with ``i``
written ``İ`` then upper-cased, LAT/SPEC/PHRASE upper and casefold; URL-safe unpadded
base64 off by one byte; ESZ/TURK raw, base64 off 1, ``%``-quoted, ``\x``, UTF-16 hex,
lower, dashed, decimal HTML references, ``repr(bytes)``, Latin-1 mojibake; upper and
fullwidth cut on stdout, upper cut on stderr; upper printed before a timeout kill; the
url_env token. Values: ``-1.0``/``-1e0`` as ``-1``; ``'12'``/``"12"`` strings, ``12`` a
number (hashes differ, reach differ); ``1e-1``/``0.10000000000000001`` as ``0.1``;
``9007199254740992.0`` accepted, ``9007199254740992`` refused (loses precision) by both
``hash`` and the controller; ``18_446_744_073_709_551_617`` is a string (not refused).

Not counted (accepted, threat-model round 107: a trusted tool transforming a secret):
base58, base36, ascii85, base85 (also off by one byte), gzip+base64, zlib+hex: each was
seen committed readable (``plain-b58`` etc.), as documented.

Not tried (time): a secret split across two actions joined by a reference, secrets in HTTP
response headers or redirect URLs, http tool error texts quoting a URL with a secret,
JSONPath filters, exit signal names or created file names, ``-0.0`` in nested lists,
duplicate keys after normalisation, ``limits.*`` other than ``max_result_bytes``.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import html
import http.server
import json
import shlex
import socket
import sys
import threading
import urllib.parse
import xml.sax.saxutils
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from mcpkit import answers
from oraclekit import notify_receiver, ui_daemon
from test_round2_execution_kit import shared
from test_round61_surface_page import _get

#: the bytes kept of each stream (``limits.max_result_bytes``)
LIMIT = 256

SECRETS: dict[str, str] = {
    "PLAIN": "Pl4Qw7Er2Ty9Ui3Ox",
    "LAT": "P\u00e4ssw\u00f6rd7Zx9Kq4",
    "SPEC": "Sp3<Zk&9\"Wq>4'Xm/8+Vn",
    "PHRASE": "Ph7 correct horse battery Zq4",
    "ESZ": "Gr\u00fc\u00dfe7Zq4Kx9Wm3Lp",
    "TURK": "Di7Kli9Zq4Wm3Xiv",
}
ENV_SECRET = ("PLANGATE_SECRET_ENVTOK", "Ev3Rt6Yu9Io2Pa5Sd")
HOOK_TOKEN = "Nh7Tq2Wz5Xk8Rv3Mc6"


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


def _bn(b: bytes, alphabet: str) -> str:
    n, out = int.from_bytes(b, "big"), ""
    while n:
        n, r = divmod(n, len(alphabet))
        out = alphabet[r] + out
    return out


def _bold(c: str) -> str:
    if c.isdigit():
        return chr(0x1D7CE + int(c))
    if c.isupper():
        return chr(0x1D400 + ord(c) - 65)
    if c.islower():
        return chr(0x1D41A + ord(c) - 97)
    return c


def _circled(c: str) -> str:
    if c.isdigit() and c != "0":
        return chr(0x2460 + int(c) - 1)
    if c.isupper():
        return chr(0x24B6 + ord(c) - 65)
    if c.islower():
        return chr(0x24D0 + ord(c) - 97)
    return c


def _gojson(s: str) -> str:
    t = json.dumps(s)
    return t.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


#: form -> function of the secret giving the text the tool prints
def form_of(form: str, s: str) -> str:
    b = s.encode()
    table = {
        "raw": lambda: s,
        "b64off1": lambda: _b64(b"x" + b),
        "b64off2": lambda: _b64(b"xy" + b),
        "basic": lambda: "Authorization: Basic " + _b64(b"app:" + b),
        "b32off1": lambda: base64.b32encode(b"x" + b).decode(),
        "b32off3": lambda: base64.b32encode(b"xyz" + b).decode(),
        "qpall": lambda: "".join(f"={c:02X}" for c in b),
        "pctu": lambda: "".join(f"%u{ord(c):04X}" for c in s),
        "octesc": lambda: "".join(f"\\{c:03o}" for c in b),
        "cssesc": lambda: "".join(f"\\{ord(c):x} " for c in s),
        "dashed": lambda: "-".join(s),
        "dotted": lambda: ".".join(s),
        "bold": lambda: "".join(_bold(c) for c in s),
        "circled": lambda: "".join(_circled(c) for c in s),
        "strike": lambda: "".join(c + "\u0336" for c in s),
        "zw": lambda: "\u200b".join(s),
        "u16hex": lambda: s.encode("utf-16-be").hex(),
        "u16b64": lambda: _b64(s.encode("utf-16-le")),
        "htmldec": lambda: "".join(f"&#{ord(c)};" for c in s),
        "htmlhex": lambda: "".join(f"&#x{ord(c):x};" for c in s),
        "bytesrepr": lambda: repr(b),
        "asciirepr": lambda: ascii(s),
        "moji": lambda: b.decode("latin-1"),
        "moji1252": lambda: b.decode("cp1252", errors="replace"),
        "html": lambda: html.escape(s),
        "gojson": lambda: _gojson(s),
        "shq": lambda: shlex.quote(s),
        "sqlq": lambda: "'" + s.replace("'", "''") + "'",
        "csvq": lambda: '"' + s.replace('"', '""') + '"',
        "qplus": lambda: urllib.parse.quote_plus(s),
        "pct20": lambda: urllib.parse.quote(s, safe=""),
        "xmlattr": lambda: xml.sax.saxutils.quoteattr(s),
        "fw": lambda: "".join(chr(ord(c) + 0xFEE0) for c in s),
        "nul": lambda: s.encode("utf-16-le").decode("latin-1"),
        "xesc": lambda: "".join(f"\\x{c:02x}" for c in b),
        "dec": lambda: ",".join(str(c) for c in b),
        "hexsp": lambda: " ".join(f"{c:02x}" for c in b),
        "lower": lambda: s.lower(),
        "b58": lambda: _bn(b, "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"),
        "b36": lambda: _bn(b, "0123456789abcdefghijklmnopqrstuvwxyz"),
        "a85": lambda: base64.a85encode(b).decode(),
        "b85": lambda: base64.b85encode(b).decode(),
        "z85off": lambda: base64.b85encode(b"x" + b).decode(),
        "gzb64": lambda: _b64(gzip.compress(b, mtime=0)),
        "zlibhex": lambda: zlib.compress(b).hex(),
        "b64url1": lambda: base64.urlsafe_b64encode(b"x" + b).decode().rstrip("="),
        "upper": lambda: s.upper(),
        "casefold": lambda: s.casefold(),
        "trupper": lambda: s.replace("i", "\u0130").upper(),
        "odx2": lambda: " ".join(
            f"{b[i + 1]:02x}{b[i]:02x}" for i in range(0, len(b) - len(b) % 2, 2)
        ),
    }
    return table[form]()


#: per-character forms cut by the controller: the cut keeps the form of the secret's first
#: KEEP characters; the needle is the form of its first NEED (8 or more a reader decodes)
KEEP, NEED = 12, 9
CUT = ["upper", "fw"]
CUT_ERR = ["upper"]


def keep_bytes(form: str, s: str) -> int:
    return len(form_of(form, s[:KEEP]).encode())


SAY = r"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from formtable import form_of, LIMIT, keep_bytes
mode, out = sys.argv[1], sys.argv[2]
got = json.loads(sys.stdin.read())
s, slug = got["key"], got["n"]
if mode.startswith(("cut-", "cuto-")):
    form = mode.split("-", 1)[1]
    t = form_of(form, s)
    keep = keep_bytes(form, s)
    Path(out, slug).write_text(t, encoding="utf-8")
    line = ("." * (LIMIT - keep - 1) + " " + t).encode()
    if mode.startswith("cuto-"):
        sys.stdout.buffer.write(line + b"\n")
        sys.exit(0)
    sys.stderr.buffer.write(line + b"\n")
    sys.exit(2)
if mode.startswith("slow-"):
    t = form_of(mode.split("-", 1)[1], s)
    Path(out, slug).write_text(t, encoding="utf-8")
    print("value: " + t, flush=True)
    sys.stderr.write("waiting on " + t + "\n")
    sys.stderr.flush()
    time.sleep(30)
    sys.exit(0)
t = form_of(mode, s)
Path(out, slug).write_text(t, encoding="utf-8")
sys.stderr.buffer.write(("value: " + t + "\n").encode())
sys.exit(2)
"""

ARG = r"""
import json, sys
raw = sys.stdin.read()
print(json.dumps({"argv": sys.argv[1:], "raw": raw}))
"""

VALTOOL = r"""
def probe(**kw):
    return {"o": "".join(k[0] for k in kw), "n": repr(kw["n"]) + type(kw["n"]).__name__,
            "s": repr(kw["s"])}
"""

PLAIN_FORMS = ["b64url1"]
LAT_FORMS = ["upper", "casefold", "b64url1"]
SPEC_FORMS = ["upper", "b64url1"]
PHRASE_FORMS = ["upper", "casefold"]
ESZ_FORMS = [
    "upper",
    "casefold",
    "raw",
    "b64off1",
    "b64url1",
    "pct20",
    "xesc",
    "u16hex",
    "lower",
    "dashed",
    "htmldec",
    "bytesrepr",
    "moji",
]
TURK_FORMS = [
    "upper",
    "trupper",
    "casefold",
    "raw",
    "b64off1",
    "b64url1",
    "pct20",
    "xesc",
    "u16hex",
    "lower",
    "dashed",
    "htmldec",
    "bytesrepr",
    "moji",
]

#: plan slug -> (mode, secret)
PLANS: dict[str, tuple[str, str]] = {
    "plain-raw": ("raw", "PLAIN"),
    "env-raw": ("raw", "ENVTOK"),
    **{f"plain-{f}": (f, "PLAIN") for f in PLAIN_FORMS},
    **{f"lat-{f}": (f, "LAT") for f in LAT_FORMS},
    **{f"spec-{f}": (f, "SPEC") for f in SPEC_FORMS},
    **{f"phrase-{f}": (f, "PHRASE") for f in PHRASE_FORMS},
    **{f"esz-{f}": (f, "ESZ") for f in ESZ_FORMS},
    **{f"turk-{f}": (f, "TURK") for f in TURK_FORMS},
    **{f"cuto-{f}": (f"cuto-{f}", "PLAIN") for f in CUT},
    **{f"cut-{f}": (f"cut-{f}", "PLAIN") for f in CUT_ERR},
    "slow-upper": ("slow-upper", "ESZ"),
}

#: values side: slug -> (group, inputs.n as written, params order "za" or "az")
VALUES: dict[str, tuple[str, str, str]] = {
    "v-huge": ("huge", "18446744073709551617", "az"),
    "v-huge-p": ("huge", "+18446744073709551617", "az"),
    "v-huge-u": ("huge", "18_446_744_073_709_551_617", "az"),
    "v-date": ("date", "2024-01-02", "az"),
    "v-date-q": ("date", '"2024-01-02"', "az"),
    "v-ts": ("ts", "2024-01-02T03:04:05Z", "az"),
    "v-ts-q": ("ts", '"2024-01-02T03:04:05Z"', "az"),
    "v-ts-s": ("ts", "2024-01-02 03:04:05", "az"),
    "v-neg": ("neg", "-1", "az"),
    "v-neg-f": ("neg", "-1.0", "az"),
    "v-neg-e": ("neg", "-1e0", "az"),
    "v-kq": ("kq", "'12'", "az"),
    "v-kq-d": ("kq", '"12"', "az"),
    "v-kq-n": ("kq", "12", "az"),
    "v-flt": ("flt", "0.1", "az"),
    "v-flt-e": ("flt", "1e-1", "az"),
    "v-flt-l": ("flt", "0.10000000000000001", "az"),
    "v-big53-f": ("big53", "9007199254740992.0", "az"),
    "v-big53-i": ("big53", "9007199254740992", "az"),
    "v-nan": ("nan", ".nan", "az"),
    "v-nan-c": ("nan", ".NaN", "az"),
    "v-inf": ("inf", ".inf", "az"),
    "v-inf-m": ("inf", "-.Inf", "az"),
    "v-e400": ("e400", "1e400", "az"),
    "v-bin64": ("bin64", "!!binary aGVsbG8=", "az"),
}
#: spellings refused at hashing (not JSON data): slug -> what the refusal names
REFUSED = [
    "v-huge",
    "v-huge-p",
    "v-date",
    "v-ts",
    "v-ts-s",
    "v-nan",
    "v-nan-c",
    "v-inf",
    "v-inf-m",
    "v-e400",
    "v-bin64",
    "v-big53-i",
]
GROUPS = list(dict.fromkeys(g for g, _, _ in VALUES.values()))
TOOLS = ("arg", "pyv", "hv")


def _plan(slug: str, mode: str, key: str) -> str:
    tool = "slow" if mode.startswith("slow-") else "say"
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        f"available_tools: [{{name: {tool}}}]\nactions:\n"
        f"  - id: 1\n    tool: {tool}\n    why: w\n"
        f'    params: {{m: {mode}, n: {slug}, key: "$<secrets.{key}>"}}\n'
        + ('    outputs: [{name: o, path: "$.stdout"}]\n' if mode.startswith("cuto-") else "")
    )


def _vplan(slug: str, value: str, order: str, tag: str) -> str:
    pairs = ["a: 2", "z: 1"] if order == "az" else ["z: 1", "a: 2"]
    params = (
        "{" + ", ".join([*pairs, 'n: "$<inputs.n>"', 's: "x-$<inputs.n>"', f"tag: {tag}"]) + "}"
    )
    acts = ""
    for i, tool in enumerate(TOOLS, 1):
        acts += f"  - id: {i}\n    tool: {tool}\n    why: w\n    params: {params}\n"
        if tool != "hv":
            out = "$.json" if tool == "arg" else "$"
            acts += f'    outputs: [{{name: r, path: "{out}"}}]\n'
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        f"inputs: {{n: {value}}}\n"
        "available_tools: [{name: arg}, {name: pyv}, {name: hv}]\nactions:\n" + acts
    )


def _tool_receiver() -> tuple[http.server.ThreadingHTTPServer, list[dict[str, str]]]:
    got: list[dict[str, str]] = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(size).decode("utf-8", "replace")
            got.append({"path": self.path, "body": body})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"ok": true}')

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, got


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _build(root: Path) -> Lab:
    here = Path(__file__).resolve()
    src = here.read_text(encoding="utf-8")
    # the form table the tool computes with is this module's own (one table, two readers)
    start, end = src.index("def _b64("), src.index("SAY = r")
    (root / "formtable.py").write_text(
        "import base64, gzip, zlib, html, json, shlex, urllib.parse, xml.sax.saxutils\n"
        f"LIMIT = {LIMIT}\n" + src[start:end],
        encoding="utf-8",
    )
    (root / "say.py").write_text(SAY)
    (root / "arg.py").write_text(ARG)
    (root / "valtool.py").write_text(VALTOOL)
    out = root / "printed"
    out.mkdir()
    (root / "sec.yml").write_text(
        "".join(f"{k}: {json.dumps(v)}\n" for k, v in SECRETS.items()), encoding="utf-8"
    )
    server, posts = notify_receiver()
    tserver, tgot = _tool_receiver()
    hook = f"http://127.0.0.1:{_closed_port()}/services/T0ABC/B0DEF/{HOOK_TOKEN}"
    py, say, arg, outp, rootp = (
        json.dumps(str(x)) for x in (sys.executable, root / "say.py", root / "arg.py", out, root)
    )
    lab = Lab(
        root / "lab",
        extra=(
            f"secrets: {{file: {root / 'sec.yml'}}}\n"
            f"python_path: [{rootp}]\n"
            f"limits: {{max_result_bytes: {LIMIT}}}\n"
            f'notify: {{urls: ["http://127.0.0.1:{server.server_address[1]}/hook"], '
            "url_env: [PLANGATE_HOOK_URL], events: [fail, complete], retries: 0, timeout: 2}\n"
        ),
        tools=(
            f"say: {{kind: exec, argv: [{py}, {say}, '{{m}}', {outp}, {rootp}]}}\n"
            f"slow: {{kind: exec, timeout: 2, argv: [{py}, {say}, '{{m}}', {outp}, {rootp}]}}\n"
            f"arg: {{kind: exec, argv: [{py}, {arg}, '{{n}}', 'x{{n}}']}}\n"
            'pyv: {kind: python, target: "valtool:probe"}\n'
            f"hv: {{kind: http, method: POST, "
            f'url: "http://127.0.0.1:{tserver.server_address[1]}/t/{{tag}}/{{n}}"}}\n'
        ),
    )
    lab.extra_env = {ENV_SECRET[0]: ENV_SECRET[1], "PLANGATE_HOOK_URL": hook}  # type: ignore[attr-defined]
    for slug, (mode, key) in PLANS.items():
        lab.write(slug, _plan(slug, mode, key))
    for slug, (_, value, order) in VALUES.items():
        lab.write(slug, _vplan(slug, value, order, slug))
    lab.commit("plans")
    cfg = str(lab.config)
    first = lab.run()
    hashes = {}
    for slug, (_, value, order) in VALUES.items():
        alone = root / "hashed" / slug / "PLAN.yml"
        alone.parent.mkdir(parents=True)
        alone.write_text(_vplan("v", value, order, "v"))
        h = lab.cli("hash", str(alone))
        hashes[slug] = h.stdout.strip() or h.stderr.strip()
    for slug in [*PLANS, *(v for v in VALUES if v not in REFUSED)]:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    second = lab.run()
    got: dict[str, Any] = {"passlog": first.stdout + first.stderr + second.stdout + second.stderr}
    got["hashes"] = hashes
    got["vplans"] = {s: lab.plan(s) for s in VALUES if s not in REFUSED}
    got["tool_http"] = list(tgot)
    got["printed"] = {
        s: (out / s).read_text(encoding="utf-8") if (out / s).exists() else None for s in PLANS
    }
    with ThreadPoolExecutor(4) as pool:
        histories = {s: pool.submit(lab.history, s) for s in PLANS}
        shows = {
            s: pool.submit(lab.cli, "show", "--config", cfg, str(lab.repo / "plans" / s))
            for s in PLANS
        }
        as_json = pool.submit(lab.cli, "status", "--json", "--config", cfg)
        as_text = pool.submit(lab.cli, "status", "--config", cfg)
        logs = pool.submit(answers, lab, [("log", {"path": f"plans/{s}"}) for s in PLANS])
        mstat = pool.submit(answers, lab, [("status", {})])
        got["history"] = {s: h.result() for s, h in histories.items()}
        got["show"] = {s: t.result().stdout + t.result().stderr for s, t in shows.items()}
        got["status"] = as_text.result().stdout
        rows = {row["plan"]: row for row in json.loads(as_json.result().stdout)}
        got["mcp"] = {
            s: json.dumps(r, ensure_ascii=False) for s, r in zip(PLANS, logs.result(), strict=True)
        }
        got["mstatus"] = json.dumps(mstat.result(), ensure_ascii=False)
    server.shutdown()
    tserver.shutdown()
    got["posts"] = list(posts)
    ui_config = lab.root / "plangate-ui.yml"
    ui_config.write_text(lab.config.read_text() + "ui: {listen: 0}\n")
    pages: dict[str, str] = {}
    with ui_daemon(lab, ui_config, f"plans/{next(iter(PLANS))}") as port:
        for s in PLANS:
            pages[s] = "".join(
                str(_get(port, f"{kind}/plans/{s}")[2]) for kind in ("/api/plan", "/plan")
            )
        pages["index"] = str(_get(port, "/api/")[2]) + str(_get(port, "/")[2])
    got["pages"] = pages
    got["rows"] = {p: r.get("status") for p, r in rows.items()}
    got["rowtext"] = {p: json.dumps(r, ensure_ascii=False) for p, r in rows.items()}
    journal = lab.state / "journal"
    got["journal"] = {
        s: "".join(
            f.read_text(errors="replace") for f in (journal / f"plans%2F{s}").glob("*.jsonl")
        )
        for s in PLANS
    }
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r113-secrets-atk113e", _build)


def _value(key: str) -> str:
    return ENV_SECRET[1] if key == "ENVTOK" else SECRETS[key]


def _needles(slug: str, printed: str) -> list[str]:
    mode, key = PLANS[slug]
    core = _value(key)
    found = [core[i : i + 8] for i in range(len(core) - 7)]
    if mode.startswith(("cut-", "cuto-")):
        found.append(form_of(mode.split("-", 1)[1], core[:NEED]))
    else:
        form = mode.split("-", 1)[1] if mode.startswith("slow-") else mode
        found.append(printed)
        found += [line for line in printed.splitlines() if len(line) >= 8]
        found += [w for w in printed.split() if len(w) >= 12 and not w.endswith(":")]
        found += [
            f
            for f in (form_of(form, core[i : i + 8]) for i in range(len(core) - 7))
            if f in printed
        ]
    found += [json.dumps(n)[1:-1] for n in found if json.dumps(n)[1:-1] != n]
    return list(dict.fromkeys(found))


def _said(got: dict[str, Any], slug: str) -> str:
    path = f"plans/{slug}"
    text = "\n".join(
        line
        for line in got["passlog"].splitlines()
        if f'"{path}"' in line or f" {path} " in line or line.endswith(f" {path}")
    )
    text += got["rowtext"].get(path, "")
    rows = got["status"].split("\n")
    for i, line in enumerate(rows):
        if f" {path} " in line:
            text += line + "\n"
            for follow in rows[i + 1 :]:
                if follow[:1] != " ":
                    break
                text += follow + "\n"
    text += got["show"].get(slug, "")
    return text


def _mstatus_row(got: dict[str, Any], slug: str) -> str:
    data = json.loads(got["mstatus"])
    found = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("path") == f"plans/{slug}" or node.get("plan") == f"plans/{slug}":
                found.append(json.dumps(node, ensure_ascii=False))
                return
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        elif isinstance(node, str) and node.lstrip().startswith(("{", "[")):
            with contextlib.suppress(ValueError):
                walk(json.loads(node))

    walk(data)
    return "".join(found)


def _posts(got: dict[str, Any], slug: str) -> str:
    return "\n".join(p for p in got["posts"] if f'"plans/{slug}"' in p)


IDS = list(PLANS)


def _broke(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 113: {cls}: {what}")


#: class -> (ids, what broke)
CLASSES: dict[str, tuple[list[str], str]] = {}
BROKEN: dict[str, Any] = {
    vid: _broke(cls, what) for cls, (vids, what) in CLASSES.items() for vid in vids
}


def _surfaces(got: dict[str, Any], slug: str, expected: str) -> dict[str, str]:
    """Each place plangate writes or shows the plan's run, by name."""
    history = got["history"][slug]
    assert "plangate: " in history, history[-800:]
    said = _said(got, slug)
    assert f"plans/{slug}" in said, said[-800:]
    posts = _posts(got, slug)
    assert f"plans/{slug}" in posts, got["posts"][-3:]
    page = got["pages"][slug]
    assert "E_" in page or expected == "completed", page[:800]
    return {
        "git": history,
        "mcp-log": got["mcp"][slug],
        "journal": got["journal"][slug],
        "said": said,
        "mcp-status": _mstatus_row(got, slug),
        "posts": posts,
        "page": page + got["pages"]["index"],
    }


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round113_secrets_atk113e(lab: Lab, vid: str) -> None:
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    slug = vid
    printed = got["printed"][slug]
    assert printed, f"the tool never ran for {slug}"
    needles = _needles(slug, printed)
    expected = "completed" if slug.startswith("cuto-") else "failed"
    assert got["rows"].get(f"plans/{slug}") == expected, got["rowtext"].get(f"plans/{slug}")
    leaks = {
        where: found
        for where, text in _surfaces(got, slug, expected).items()
        if (found := [n for n in needles if n in text])
    }
    assert not leaks, leaks
    # the tool's text was recorded, its secret masked (not dropped)
    assert "***" in got["journal"][slug], got["journal"][slug][-800:]


def test_round113_hook_url_atk113e(lab: Lab) -> None:
    """The notify URL held in ``notify.url_env`` (a Slack-style webhook whose token is its
    last path segment) is the controller's credential: a post to it that fails is never
    logged with the token readable."""
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    text = got["passlog"]
    assert "notify" in text.lower(), text[-1500:]
    leaks = [HOOK_TOKEN[i : i + 8] for i in range(len(HOOK_TOKEN) - 7)]
    leaks = [n for n in leaks if n in text]
    assert not leaks, (leaks, [line for line in text.splitlines() if "notify" in line][:5])


def _reached(got: dict[str, Any], slug: str, tool: str) -> str:
    """What ``tool`` got in plan ``slug``, the plan's own tag written ``SLUG``."""
    plan = got["vplans"][slug]
    assert plan["plan"]["status"] == "completed", (slug, plan.get("execution"))
    if tool == "hv":
        seen = [r for r in got["tool_http"] if r["path"].startswith(f"/t/{slug}/")]
        assert len(seen) == 1, (slug, got["tool_http"])
        text = json.dumps(seen[0], ensure_ascii=False)
    else:
        act = plan["execution"]["actions"][TOOLS.index(tool)]
        text = json.dumps(act.get("outputs"), ensure_ascii=False) + str(act.get("result", ""))
    return text.replace(slug, "SLUG")


VIDS = [f"{g}:{t}" for g in ("neg", "kq", "flt") for t in TOOLS]
VBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, VBROKEN))
def test_round113_values_atk113e(lab: Lab, vid: str) -> None:
    """Values that hash alike reach each tool kind alike: the exec tool's argv and raw stdin
    bytes, the python tool's keyword arguments (their order, types and reprs), the http
    tool's URL path and raw body."""
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    group, tool = vid.split(":")
    slugs = [s for s, (g, _, _) in VALUES.items() if g == group]
    by_hash: dict[str, list[str]] = {}
    for s in slugs:
        if got["hashes"][s].startswith("sha256:"):
            by_hash.setdefault(got["hashes"][s], []).append(s)
    alike = [same for same in by_hash.values() if len(same) > 1]
    if not alike:
        # no two spellings hash alike: then no two reach the tool alike
        seen = {s: _reached(got, s, tool) for s in slugs}
        assert len(set(seen.values())) == len(slugs), seen
    for same in alike:
        seen = {s: _reached(got, s, tool) for s in same}
        assert len(set(seen.values())) == 1, seen


@pytest.mark.parametrize("vid", REFUSED)
def test_round113_refused_atk113e(lab: Lab, vid: str) -> None:
    """A value that is no JSON data (an integer past 2^64, a YAML timestamp or date, NaN or
    infinity in any spelling, 1e400, ``!!binary``) is refused with ``E_SCHEMA_INVALID`` at
    ``inputs.n``, never hashed to something a tool would see otherwise."""
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    said = got["hashes"][vid]
    assert "sha256:" not in said, said
    code = "E_YAML_PARSE" if vid in ("v-ts", "v-ts-s", "v-bin64") else "E_SCHEMA_INVALID"
    assert code in said, said
    assert "inputs.n" in said or ":5:" in said, said
