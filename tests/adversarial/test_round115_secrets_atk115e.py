r"""Round 115, secrets (atk115e): forms of a configured secret none of rounds 1-114 printed:
reversed (plain, reversed-byte hex, inside a right-to-left override or isolate that renders
it forwards), encoded twice (base64 of base64, hex of base64, base64 of hex, hex of hex),
raw UTF-16/UTF-32 bytes of a non-ASCII secret, an ``xxd`` dump, per-character escapes of
other languages (``\u{..}``, ``\x{..}``, ``\U........``, ``&#X....;``, ``U+....``, JSON and
URL escapes alternating), charset forms (UTF-7, Latin-1 and cp1252 bytes, cp437 and Mac
Roman mojibake, punycode), case lookalikes (``ẞ``, Kelvin sign, long s, swapcase),
invisible separators (soft hyphen, word joiner, CGJ, VS16), overstrike, CDATA, SGR colours
and OSC 8 links, MIME-wrapped and ``\/``-escaped base64, new escapes cut at the limit; and
an http tool's 500 answer carrying the secret in a header value (base64), a header name, a
JSON key as ``\u`` escapes, the reason phrase, a UTF-16 or UTF-7 body by its charset, raw
UTF-16 bytes as ``application/octet-stream``.

Lab (one, module scope; local mode; ``limits.max_result_bytes: 256``): round 113's lab
(atk113e) without its values plans. ``secrets.file`` holds PLAIN, LAT, SPEC, PHRASE, ESZ,
TURK; ``PLANGATE_SECRET_ENVTOK`` is set. The exec tool ``say`` reads ``$<secrets.NAME>``
from stdin and writes ``value: <form>`` to stderr (exit 2; the byte forms write the bytes
themselves); ``cuto-``/``cut-`` print after filler so the cut at 256 bytes keeps the form
of the first 12 characters; ``slow`` (timeout 2) prints then sleeps. One pass freezes,
Alice approves all in one commit, one pass runs; then ``status`` (text, JSON), ``show``, MCP
``log``/``status``, the journal, notify posts and the daemon's page are read.

Ids: ``<plan>`` (82; ``http-*`` go through the http tool ``hx``, a loopback server): no
needle (8-character windows of the secret, the printed form, its lines and long words, the
form of each 8-character window, raw and JSON-escaped) in git,
MCP, journal, what is said, notify, page; ``***`` in the journal. ``hook_url`` (1).

Seen (round 115, 83 ids, ~50-100 s wall on 2 busy cores): 5 classes, 17 ids broke (strict
xfails, ``CLASSES`` below); 66 held.
- reversed-secret (7): ``plain-rlo``, ``plain-rli``, ``plain-rev``, ``plain-hexrev``,
  ``lat-rlo``, ``spec-rlo``, ``esz-rlo``: ``\u202exO3iU9yT2rE7wQ4lP\u202c`` committed
  (EXECUTION_LOG/``execution:``), in MCP ``log``, journal, status/show, posts, the page; a
  browser or terminal shows it as ``Pl4Qw7Er2Ty9Ui3Ox``.
- nested-encoding (4): ``plain-b64b64`` (``VUd3MFVYYzNSWEl5VkhrNVZXa3pUM2c9``),
  ``plain-hexb64``, ``plain-b64hex``, ``plain-hexhex``: committed whole.
- dump-column-split (2): ``plain-xxd``, ``esz-xxd``: an ``xxd`` row ending
  ``kkkkkPl4Qw7Er2Ty`` then ``9Ui3Ox`` on the next row, committed and in status/show.
- utf16-bytes-undecodable (3): ``esz-u16raw``, ``esz-u32raw``, ``esz-u16beraw``: the ASCII
  run ``e7Zq4Kx9Wm3Lp`` with NULs between (``e\u00007\u0000Z...``) in git or status/show.
  The same forms of the ASCII TURK and of LAT held.
- per-char-markup-wrapping (1): ``plain-xmlcdata`` (``<![CDATA[P]]><![CDATA[l]]>...``) in git.

Held: UTF-7 (ESZ, LAT, SPEC), Latin-1 and cp1252 bytes, cp437 and Mac Roman mojibake,
punycode, ``ẞ`` for ``ß`` (as is and upper-cased), Kelvin sign, long s, swapcase,
``\u{..}``, ``\x{..}``, ``\U........``, ``&#X....;``, ``U+....``, alternating JSON/URL
escapes, ``0x..`` lists, bit strings, soft hyphen / word joiner / CGJ / VS16 between
characters, overstrike bold and underline, SGR colour per character, OSC 8 link target,
MIME-wrapped base64, URL-quoted base64, base64 of a JSON blob, base64 with ``\/``, double
``%25xx``, one character a line, the env secret raw, ``\x{..}``/``&#X..;``/``\u{..}`` cut
on stdout and ``\U`` cut on stderr, ``\x{..}`` printed before a timeout kill, the url_env
token; every ``http-*`` answer (header value and name, JSON key, reason phrase, UTF-16/UTF-7
charset bodies, raw UTF-16 bytes of ESZ in an octet-stream body).

Fixed the same day (lead): utf16-bytes-undecodable (the escape view's run of U+FFFD takes
the NULs between undecodable characters, ``secrets._WIDE_CHARS``; 3 ids pass). The other
four classes are the accepted limit of a tool that transforms a secret deliberately
(threat model, "Accepted limits", round 107 and 115): kept as strict xfails.

Not counted (accepted, threat-model round 107: a trusted tool transforming a secret):
ROT13 (seen committed readable in a first run, then dropped from the module).

Not tried (time): redirect URLs, http tool error texts quoting a URL with a secret, a
secret split across two actions joined by a reference,
created file names, ``limits.*`` other than ``max_result_bytes``.
"""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import socket
import sys
import threading
import urllib.parse
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


BYTES = {
    "latin1b": lambda s: s.encode("latin-1"),
    "cp1252b": lambda s: s.encode("cp1252"),
    "u16raw": lambda s: b"\xff\xfe" + s.encode("utf-16-le"),
    "u32raw": lambda s: s.encode("utf-32-le"),
    "u16beraw": lambda s: s.encode("utf-16-be"),
}


def _mixpj(s: str) -> str:
    return "".join(
        (f"%{ord(c):02X}" if i % 2 else f"\\u{ord(c):04x}") if ord(c) < 128 else c
        for i, c in enumerate(s)
    )


def _xxd(b: bytes) -> str:
    # ``xxd``: 16 bytes a line, hex then the bytes as text; the secret crosses a line
    data = b"kkkkk" + b
    rows = []
    for i in range(0, len(data), 16):
        chunk = data[i : i + 16]
        hx = " ".join(chunk[j : j + 2].hex() for j in range(0, len(chunk), 2))
        txt = "".join(chr(c) if 32 <= c < 127 else "." for c in chunk)
        rows.append(f"{i:08x}: {hx:<40}  {txt}")
    return "\n".join(rows)


def _b64wrap(b: bytes) -> str:
    # MIME base64 (76-character lines) of a prefix and the secret: the line end falls
    # inside the secret's part
    pre = b"k" * 50
    return base64.encodebytes(pre + b).decode()


#: form -> function of the secret giving the text the tool prints
def form_of(form: str, s: str) -> str:
    if form in BYTES:
        return BYTES[form](s).decode("utf-8", "replace")
    b = s.encode()
    table = {
        "raw": lambda: s,
        "utf7": lambda: s.encode("utf-7").decode("ascii"),
        "cp437moji": lambda: b.decode("cp437"),
        "macmoji": lambda: b.decode("mac_roman"),
        "puny": lambda: s.encode("punycode").decode("ascii"),
        "capsharp": lambda: s.replace("\u00df", "\u1e9e"),
        "capsharpup": lambda: s.upper().replace("SS", "\u1e9e"),
        "kelvin": lambda: s.replace("K", "\u212a"),
        "longs": lambda: s.replace("s", "\u017f"),
        "rlo": lambda: "\u202e" + s[::-1] + "\u202c",
        "swapcase": lambda: s.swapcase(),
        "b64b64": lambda: _b64(_b64(b).encode()),
        "hexb64": lambda: _b64(b).encode().hex(),
        "b64hex": lambda: _b64(b.hex().encode()),
        "pctb64": lambda: urllib.parse.quote(_b64(b"xy" + b), safe=""),
        "b64wrap": lambda: _b64wrap(b),
        "ues6": lambda: "".join(f"\\u{{{ord(c):x}}}" for c in s),
        "xbrace": lambda: "".join(f"\\x{{{ord(c):x}}}" for c in s),
        "uplus": lambda: " ".join(f"U+{ord(c):04X}" for c in s),
        "bigU": lambda: "".join(f"\\U{ord(c):08x}" for c in s),
        "htmlpad": lambda: "".join(f"&#X{ord(c):04X};" for c in s),
        "hex0x": lambda: ",".join(f"0x{c:02x}" for c in b),
        "bits": lambda: " ".join(f"{c:08b}" for c in b),
        "shy": lambda: "\u00ad".join(s),
        "wj": lambda: "\u2060".join(s),
        "cgj": lambda: "".join(c + "\u034f" for c in s),
        "vs": lambda: "".join(c + "\ufe0f" for c in s),
        "ovbold": lambda: "".join(c + "\b" + c for c in s),
        "ovul": lambda: "".join("_\b" + c for c in s),
        "mixpj": lambda: _mixpj(s),
        "rev": lambda: s[::-1],
        "rli": lambda: "\u2067" + s[::-1] + "\u2069",
        "hexhex": lambda: b.hex().encode().hex(),
        "b64json": lambda: _b64(json.dumps({"auths": {"r": {"password": s}}}).encode()),
        "xmlcdata": lambda: "".join(f"<![CDATA[{c}]]>" for c in s),
        "pct2low": lambda: "".join(f"%25{c:02x}" for c in b),
        "sgr": lambda: "".join(f"\x1b[3{i % 7 + 1}m{c}" for i, c in enumerate(s)) + "\x1b[0m",
        "osc8": lambda: f"\x1b]8;;https://x/{s}\x1b\\link\x1b]8;;\x1b\\",
        "upper": lambda: s.upper(),
        "b64slash": lambda: _b64(b"x" + b).replace("/", "\\/"),
        "hexrev": lambda: b[::-1].hex(),
        "vert": lambda: "\n".join(s),
        "xxd": lambda: _xxd(b),
    }
    return table[form]()


#: per-character forms cut by the controller: the cut keeps the form of the secret's first
#: KEEP characters; the needle is the form of its first NEED (8 or more a reader decodes)
KEEP, NEED = 12, 9
CUT = ["xbrace", "htmlpad", "ues6"]
CUT_ERR = ["bigU"]


def keep_bytes(form: str, s: str) -> int:
    return len(form_of(form, s[:KEEP]).encode())


SAY = r"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from formtable import form_of, LIMIT, keep_bytes, BYTES
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
raw = BYTES[mode](s) if mode in BYTES else t.encode()
sys.stderr.buffer.write(b"value: " + raw + b"\n")
sys.exit(2)
"""

#: forms each secret is printed in (none of them in rounds 1-114's lists)
ESZ_FORMS = [
    "utf7",
    "latin1b",
    "cp1252b",
    "u16raw",
    "u32raw",
    "u16beraw",
    "cp437moji",
    "macmoji",
    "puny",
    "capsharp",
    "capsharpup",
    "kelvin",
    "rlo",
    "swapcase",
    "ues6",
    "xbrace",
    "bigU",
    "htmlpad",
    "uplus",
    "mixpj",
    "xxd",
]
LAT_FORMS = ["utf7", "latin1b", "longs", "puny", "rlo", "u16raw", "u32raw"]
PLAIN_FORMS = [
    "rlo",
    "swapcase",
    "b64b64",
    "hexb64",
    "b64hex",
    "pctb64",
    "b64wrap",
    "ues6",
    "xbrace",
    "uplus",
    "bigU",
    "htmlpad",
    "hex0x",
    "bits",
    "shy",
    "wj",
    "cgj",
    "vs",
    "ovbold",
    "ovul",
    "mixpj",
    "rev",
    "rli",
    "hexhex",
    "b64json",
    "hexrev",
    "vert",
    "xxd",
    "xmlcdata",
    "pct2low",
    "sgr",
    "osc8",
]
SPEC_FORMS = ["ues6", "xbrace", "rlo", "mixpj", "utf7", "b64slash"]
TURK_FORMS = ["kelvin", "u16raw"]

#: the http tool's answers (status 500): form -> the secret it is asked about
HTTP_FORMS = {
    "hdrb64": "PLAIN",
    "hdrname": "PLAIN",
    "jsonkey": "PLAIN",
    "reason": "PLAIN",
    "u16cs": "ESZ",
    "u16octet": "ESZ",
    "u7cs": "ESZ",
}


def _http_answer(form: str, s: str) -> tuple[str, dict[str, str], bytes, str]:
    """(reason, headers, body, the printed text) of the http tool's answer."""
    b = s.encode()
    if form == "hdrb64":
        t = _b64(b"u:" + b)
        return "Fail", {"X-Auth-Echo": "Basic " + t}, b"{}", t
    if form == "hdrname":
        return "Fail", {f"X-{s}": "1"}, b"{}", s
    if form == "jsonkey":
        body = json.dumps({s: 1}, ensure_ascii=True).encode()
        return "Fail", {"Content-Type": "application/json"}, body, s
    if form == "reason":
        return s, {}, b"{}", s
    if form == "u16cs":
        ctype = {"Content-Type": "text/plain; charset=utf-16"}
        return "Fail", ctype, ("value: " + s).encode("utf-16"), s
    if form == "u7cs":
        ctype = {"Content-Type": "text/plain; charset=utf-7"}
        t = ("value: " + s).encode("utf-7")
        return "Fail", ctype, t, t.decode()
    t = s.encode("utf-16-le")
    return "Fail", {"Content-Type": "application/octet-stream"}, t, t.decode("utf-8", "replace")


def _http_tool(out: Path) -> http.server.ThreadingHTTPServer:
    class Answer(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            got = json.loads(self.rfile.read(size))
            form = got["m"].split("-", 1)[1]
            reason, headers, body, printed = _http_answer(form, got["key"])
            (out / got["n"]).write_text(printed, encoding="utf-8")
            self.send_response(500, reason)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


#: plan slug -> (mode, secret)
PLANS: dict[str, tuple[str, str]] = {
    "plain-raw": ("raw", "PLAIN"),
    "env-raw": ("raw", "ENVTOK"),
    **{f"plain-{f}": (f, "PLAIN") for f in PLAIN_FORMS},
    **{f"lat-{f}": (f, "LAT") for f in LAT_FORMS},
    **{f"spec-{f}": (f, "SPEC") for f in SPEC_FORMS},
    **{f"esz-{f}": (f, "ESZ") for f in ESZ_FORMS},
    **{f"turk-{f}": (f, "TURK") for f in TURK_FORMS},
    **{f"cuto-{f}": (f"cuto-{f}", "PLAIN") for f in CUT},
    **{f"cut-{f}": (f"cut-{f}", "PLAIN") for f in CUT_ERR},
    "slow-xbrace": ("slow-xbrace", "ESZ"),
    **{f"http-{f}": (f"http-{f}", k) for f, k in HTTP_FORMS.items()},
}


def _plan(slug: str, mode: str, key: str) -> str:
    tool = {"slow": "slow", "http": "hx"}.get(mode.split("-", 1)[0], "say")
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        f"available_tools: [{{name: {tool}}}]\nactions:\n"
        f"  - id: 1\n    tool: {tool}\n    why: w\n"
        f'    params: {{m: {mode}, n: {slug}, key: "$<secrets.{key}>"}}\n'
        + ('    outputs: [{name: o, path: "$.stdout"}]\n' if mode.startswith("cuto-") else "")
    )


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
    out = root / "printed"
    out.mkdir()
    (root / "sec.yml").write_text(
        "".join(f"{k}: {json.dumps(v)}\n" for k, v in SECRETS.items()), encoding="utf-8"
    )
    server, posts = notify_receiver()
    hserver = _http_tool(out)
    hook = f"http://127.0.0.1:{_closed_port()}/services/T0ABC/B0DEF/{HOOK_TOKEN}"
    py, say, outp, rootp = (
        json.dumps(str(x)) for x in (sys.executable, root / "say.py", out, root)
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
            f"hx: {{kind: http, method: POST, "
            f'url: "http://127.0.0.1:{hserver.server_address[1]}/h"}}\n'
        ),
    )
    lab.extra_env = {ENV_SECRET[0]: ENV_SECRET[1], "PLANGATE_HOOK_URL": hook}  # type: ignore[attr-defined]
    for slug, (mode, key) in PLANS.items():
        lab.write(slug, _plan(slug, mode, key))
    lab.commit("plans")
    cfg = str(lab.config)
    first = lab.run()
    for slug in PLANS:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    second = lab.run()
    got: dict[str, Any] = {"passlog": first.stdout + first.stderr + second.stdout + second.stderr}
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
    hserver.shutdown()
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
    return shared(tmp_path_factory, "r115-secrets-atk115e", _build)


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
        if mode.startswith("http-"):
            found += [core.lower()[i : i + 8] for i in range(len(core) - 7)]
        else:
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
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 115: {cls}: {what}")


#: class -> (ids, what broke)
CLASSES: dict[str, tuple[list[str], str]] = {
    "reversed-secret": (
        ["plain-rlo", "plain-rli", "plain-rev", "plain-hexrev", "lat-rlo", "spec-rlo", "esz-rlo"],
        "a secret printed in reverse order (as text, as reversed-byte hex, or wrapped in "
        "U+202E/U+2067, which a bidi renderer shows as the secret itself) is recorded whole",
    ),
    "nested-encoding": (
        ["plain-b64b64", "plain-hexb64", "plain-b64hex", "plain-hexhex"],
        "a secret encoded twice (base64 of base64, hex of base64, base64 of hex, hex of hex) "
        "is recorded whole; one layer is all the redactor decodes",
    ),
    "dump-column-split": (
        ["plain-xxd", "esz-xxd"],
        "an xxd dump whose text column holds the secret across two rows (hex between) "
        "keeps 11 of its 17 characters readable (kkkkkPl4Qw7Er2Ty / 9Ui3Ox)",
    ),
    "per-char-markup-wrapping": (
        ["plain-xmlcdata"],
        "each character in its own XML CDATA section (an XML reader sees the secret) is "
        "recorded readable in git",
    ),
    # utf16-bytes-undecodable (esz-u16raw, esz-u32raw, esz-u16beraw): fixed the same day
    # (a run of U+FFFD takes the NULs between its characters: secrets._WIDE_CHARS)
}
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
def test_round115_secrets_atk115e(lab: Lab, vid: str) -> None:
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


def test_round115_hook_url_atk115e(lab: Lab) -> None:
    """The notify URL held in ``notify.url_env`` (a Slack-style webhook whose token is its
    last path segment) is the controller's credential: a post to it that fails is never
    logged with the token readable."""
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    text = got["passlog"]
    assert "notify" in text.lower(), text[-1500:]
    leaks = [HOOK_TOKEN[i : i + 8] for i in range(len(HOOK_TOKEN) - 7)]
    leaks = [n for n in leaks if n in text]
    assert not leaks, (leaks, [line for line in text.splitlines() if "notify" in line][:5])
