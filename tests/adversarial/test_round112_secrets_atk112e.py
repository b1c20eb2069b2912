r"""Round 112, secrets and values (atk112e): new printed shapes of a configured secret
(block encodings off their alignment, per-byte escapes of other notations, compatibility and
marked letters, escapes a text format adds, mojibake and byte reprs of a non-ASCII secret),
per-character views of a secret cut at ``limits.max_result_bytes`` (round 111's suspicion),
a secret printed before a tool timeout, and YAML value spellings that hash alike.

Lab (one, module scope; local mode; ``limits.max_result_bytes: 256``): ``secrets.file``
holds PLAIN (17 characters), LAT (``Pässwörd7Zx9Kq4``), SPEC (``Sp3<Zk&9"Wq>4'Xm/8+Vn``)
and PHRASE (``Ph7 correct horse battery Zq4``); ``PLANGATE_SECRET_ENVTOK``; ``notify``
posts ``fail``/``complete`` to a real loopback receiver and to ``PLANGATE_HOOK_URL`` (closed
port, token in its last segment). The exec tool ``say`` reads its ``key``
(``$<secrets.NAME>``) from stdin and prints ``form_of(form, key)`` (one table shared with
the tool) to stderr, exit 2; ``cuto-<form>`` prints filler then the form on stdout so the
cut keeps the form of the secret's first 12 characters (exit 0, output ``o`` at
``$.stdout``), ``cut-<form>`` the same on stderr (exit 2); ``slow`` (``timeout: 2``) prints
the form on stdout and stderr and sleeps. One pass freezes, Alice approves all in one
commit, one pass runs; then ``status`` (text, JSON), ``show``, MCP ``log``/``status``, the
journal, and a daemon with ``ui: {listen: 0}`` (``/api/plan/<id>``, ``/plan/<id>``,
``/api/``, ``/``).

Ids: ``<plan>`` (51): no needle in the record (``git log -p`` of the folder: messages,
trailers, PLAN.yml, EXECUTION_LOG.md), MCP ``log``, the journal, what is said (``status``,
``show``, the passes' log), MCP ``status``, the notify posts, the page; and ``***`` is in
the journal (the text was kept, masked). Needles: every 8 characters of the secret, the
printed form, its lines and words of 12+, the form of each 8-character window found in it
(for a cut: the form of the first 9 characters); raw and JSON-escaped. ``hook_url``: the
url_env token never in the passes' log. ``values[<group>:<tool>]`` (24): spellings whose
``plangate hash`` agree (``0``/``-0``/``-0.0``/``0.0``/``-0e3``; ``1_000``/``"1_000"``;
``0b11``/``"0b11"``; ``yes``/``"yes"``; ``on``/``"on"``; ``null``/``~``/``Null``;
``10``/``10.0``/``0.1e2``; ``2^53-1`` as int, ``.0`` and ``e15``) reach ``arg`` (exec argv,
raw stdin), ``pyv`` (python kwargs order, repr, type) and ``hv`` (http path, raw body)
alike; each group has at least one pair hashing alike.

Seen (round 112, 76 ids, ~26 s wall): 0 broke, 76 held.

Held: base64 of the secret after 1 or 2 bytes (and ``Authorization: Basic`` of
``app:<secret>``, PLAIN and PHRASE), base32 after 1 and 3 bytes; quoted-printable of every
byte (``=50=6C``), JavaScript ``%u0050``, octal ``\120``, CSS ``\50 `` escapes, ``-``/``.``
between characters, mathematical bold, circled letters, U+0336 overstrike, U+200B between
characters, hex and base64 of UTF-16, decimal HTML references; LAT as ``repr(bytes)``,
``ascii()``, UTF-8 read as Latin-1 and cp1252; SPEC through ``html.escape``, Go-style JSON
(``\u003c``), ``shlex.quote``, SQL and CSV quote doubling, ``quote_plus``, ``quote``,
``quoteattr``; PHRASE ``quote_plus``/``%20``; cut on stdout of fullwidth, UTF-16 read as
Latin-1 (NUL-interleaved), ``&#x..;``, ``\x..``, decimal list, spaced hex, overstrike,
lower case, ``od -x`` words, dashed; cut on stderr of fullwidth, ``&#x..;``, ``\x..``,
overstrike; a secret printed raw or ``\x``-escaped before a timeout kill; the url_env
token. Values: every group's alike spellings reached all three kinds alike (``-0``/
``-0.0`` as ``0``, ``1_000``/``0b11``/``yes``/``on`` as strings, ``10.0`` as ``10``).

Not tried (time): MCP ``wait``; a secret across two actions (accepted, round 96); base85,
rot13, reversal, Punycode (accepted, round 107); a notify ``urls`` literal holding a secret.
"""

from __future__ import annotations

import base64
import contextlib
import html
import http.server
import json
import shlex
import socket
import sys
import threading
import urllib.parse
import xml.sax.saxutils
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
}
ENV_SECRET = ("PLANGATE_SECRET_ENVTOK", "Ev3Rt6Yu9Io2Pa5Sd")
HOOK_TOKEN = "Nh7Tq2Wz5Xk8Rv3Mc6"


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


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
        "odx2": lambda: " ".join(
            f"{b[i + 1]:02x}{b[i]:02x}" for i in range(0, len(b) - len(b) % 2, 2)
        ),
    }
    return table[form]()


#: per-character forms cut by the controller: the cut keeps the form of the secret's first
#: KEEP characters; the needle is the form of its first NEED (8 or more a reader decodes)
KEEP, NEED = 12, 9
CUT = ["fw", "nul", "htmlhex", "xesc", "dec", "hexsp", "strike", "lower", "odx2", "dashed"]
CUT_ERR = ["fw", "htmlhex", "xesc", "strike"]


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

PLAIN_FORMS = [
    "b64off1",
    "b64off2",
    "basic",
    "b32off1",
    "b32off3",
    "qpall",
    "pctu",
    "octesc",
    "cssesc",
    "dashed",
    "dotted",
    "bold",
    "circled",
    "strike",
    "zw",
    "u16hex",
    "u16b64",
    "htmldec",
]
LAT_FORMS = ["bytesrepr", "asciirepr", "moji", "moji1252"]
SPEC_FORMS = ["html", "gojson", "shq", "sqlq", "csvq", "qplus", "pct20", "xmlattr"]
PHRASE_FORMS = ["qplus", "pct20", "basic"]

#: plan slug -> (mode, secret)
PLANS: dict[str, tuple[str, str]] = {
    "plain-raw": ("raw", "PLAIN"),
    "env-raw": ("raw", "ENVTOK"),
    **{f"plain-{f}": (f, "PLAIN") for f in PLAIN_FORMS},
    **{f"lat-{f}": (f, "LAT") for f in LAT_FORMS},
    **{f"spec-{f}": (f, "SPEC") for f in SPEC_FORMS},
    **{f"phrase-{f}": (f, "PHRASE") for f in PHRASE_FORMS},
    **{f"cuto-{f}": (f"cuto-{f}", "PLAIN") for f in CUT},
    **{f"cut-{f}": (f"cut-{f}", "PLAIN") for f in CUT_ERR},
    "slow-raw": ("slow-raw", "PLAIN"),
    "slow-xesc": ("slow-xesc", "PLAIN"),
}

#: values side: slug -> (group, inputs.n as written, params order "za" or "az")
VALUES: dict[str, tuple[str, str, str]] = {
    "v-zero": ("zero", "0", "az"),
    "v-zero-m": ("zero", "-0", "az"),
    "v-zero-mf": ("zero", "-0.0", "az"),
    "v-zero-f": ("zero", "0.0", "az"),
    "v-zero-e": ("zero", "-0e3", "az"),
    "v-under": ("under", "1_000", "az"),
    "v-under-q": ("under", '"1_000"', "az"),
    "v-bin": ("bin", "0b11", "az"),
    "v-bin-q": ("bin", '"0b11"', "az"),
    "v-yes": ("yes", "yes", "az"),
    "v-yes-q": ("yes", '"yes"', "az"),
    "v-on": ("on", "on", "az"),
    "v-on-q": ("on", '"on"', "az"),
    "v-null": ("null", "null", "az"),
    "v-null-t": ("null", "~", "az"),
    "v-null-c": ("null", "Null", "az"),
    "v-tenth": ("tenth", "10.0", "az"),
    "v-tenth-e": ("tenth", "0.1e2", "az"),
    "v-tenth-i": ("tenth", "10", "az"),
    "v-big": ("big", "9007199254740991", "az"),
    "v-big-f": ("big", "9007199254740991.0", "az"),
    "v-big-e": ("big", "9.007199254740991e15", "az"),
}
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
        "import base64, html, json, shlex, urllib.parse, xml.sax.saxutils\n"
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
    for slug in [*PLANS, *VALUES]:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    second = lab.run()
    got: dict[str, Any] = {"passlog": first.stdout + first.stderr + second.stdout + second.stderr}
    got["hashes"] = hashes
    got["vplans"] = {s: lab.plan(s) for s in VALUES}
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
    return shared(tmp_path_factory, "r112-secrets-atk112e", _build)


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
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 112: {cls}: {what}")


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
def test_round112_secrets_atk112e(lab: Lab, vid: str) -> None:
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


def test_round112_hook_url_atk112e(lab: Lab) -> None:
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


VIDS = [f"{g}:{t}" for g in GROUPS for t in TOOLS]
VBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, VBROKEN))
def test_round112_values_atk112e(lab: Lab, vid: str) -> None:
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
    assert alike, (group, got["hashes"])
    for same in alike:
        seen = {s: _reached(got, s, tool) for s in same}
        assert len(set(seen.values())) == 1, seen
