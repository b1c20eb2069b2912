r"""Round 111, secrets and values (atk111e): new shapes of a configured secret a tool
prints (base64/base32/hex wrapped at widths other than 64/76, percent-encoding in lower and
mixed case, ``od`` word dumps, uuencode, quoted-printable soft breaks of a long secret), a
secret whose form is cut by the controller at ``limits.max_result_bytes``, a secret in
``PLANGATE_SECRET_*`` and a webhook token in ``notify.url_env``; and values that hash alike
reaching the exec, python and http tool kinds alike.

Lab (one, module scope; local mode; ``limits.max_result_bytes: 256``): ``secrets.file``
holds PLAIN (17 characters), TOK16 (16) and LONG (96); ``PLANGATE_SECRET_ENVTOK``;
``notify`` posts ``fail``/``complete`` to a real loopback receiver and to
``PLANGATE_HOOK_URL`` (a Slack-style URL on a closed port, token in its last segment). The
exec tool ``say`` reads its ``key`` (``$<secrets.NAME>``) from stdin, prints a form of it
(``form_of``, one table shared with the tool) to stderr and exits 2; the ``cut-<form>``
plans print 255 - k filler bytes first so the cut keeps k characters of the form, on stderr
(exit 2) or on stdout (``cuto-``, exit 0, captured as output ``o`` over ``$.stdout``). One
pass freezes, Alice approves all in one commit, one pass runs; then ``status`` (text,
JSON), ``show``, MCP ``log`` and ``status``, the journal, and a daemon with ``ui: {listen:
0}`` serving ``/api/plan/<id>``, ``/plan/<id>``, ``/api/`` and ``/``.

Ids: ``<plan>:record`` (``git log -p`` of the folder: commit messages and trailers,
PLAN.yml, EXECUTION_LOG.md; MCP ``log``; the journal) and ``<plan>:shown`` (``status``
text/JSON, ``show``, MCP ``status``, the passes' structured log, the notify posts, the page
and ``/api/``); ``hook_url`` (the passes' log after posts to the url_env URL failed);
``values[<group>:<tool>]``: plans whose ``inputs.n`` is spelled differently (``1``/``1.0``/
``1e0``/``0x1``/``+1``; ``100``/``1e2``/``0x64``/``0o144``; params in another key order;
``9007199254740992.0``/``...993.0``; ``0.1``/its 37-digit spelling; a YAML surrogate-pair
escape/``\U0001F600``; ``1e-7``/``0.0000001``) whose ``plangate hash`` agree must reach
``arg`` (exec: argv and raw stdin), ``pyv`` (python: kwargs order, types, reprs) and ``hv``
(http: URL path and raw body) alike. Needles: every 8 characters in a row of the secret,
the printed form (and each line of it), for a cut form the part kept that decodes to 8+
characters; raw and JSON-escaped.

Seen (round 111, 82 ids, ~35 s wall): 2 classes broke (16 ids), 66 held; both fixed the
same session (fix111e), their ids now held.

1. **word-swapped-dump** (``tok-odx4``, ``tok-odx8``; 4 ids): the secret's bytes dumped as
   little-endian 32- or 64-bit hex words (``printf %s "$TOK" | od -A n -t x4``:
   `` 57356b54 725a3871 366d5833 4e326256``; ``-t x8``) were committed readable in the
   ``plangate: fail`` commit (PLAN.yml error, EXECUTION_LOG.md), the journal, MCP ``log``/
   ``status``, ``status``, ``show``, the structured log, the ``fail`` post and the page.
   ``od -x`` (16-bit words, round 41) held. Reproduce: ``secrets.file`` ``TOK16:
   Tk5Wq8Zr3Xm6Vb2N``, exec tool printing ``od -A n -t x4`` of its ``key`` to stderr and
   exiting 2, plan ``key: "$<secrets.TOK16>"``, approved, run.
2. **cut-start-in-a-view** (``cut-{pct,upper,uesc,spaced}:record``,
   ``cuto-{pct,upper,uesc,spaced}:{record,shown}``; 12 ids): a stream cut at
   ``max_result_bytes`` inside a secret has the secret's start masked only in its raw
   form (``cut-raw`` held) and in base64/hex/base32 (held); upper-cased, ``%XX``-encoded,
   ``\u``-escaped or spaced (``P l 4 Q ...``), 11 of PLAIN's 17 characters before the cut
   stayed readable: ``PL4QW7ER2TY***``, ``%50%6C%34%51%77%37%45%72%32%54%79%3***``. On
   stderr (exit 2) in the journal only (EXECUTION_LOG.md cuts its result block earlier);
   on stdout captured as an output, in PLAN.yml ``execution:`` outputs and
   EXECUTION_LOG.md's "Outputs captured" of the ``plangate: complete`` commit, MCP
   ``log``, the journal and the page. Reproduce: ``limits.max_result_bytes: 256``, an
   exec tool printing 243 dots, a blank and ``key.upper()`` on stdout, exit 0, output
   ``o`` at ``$.stdout``, plan ``key: "$<secrets.PLAIN>"``, approved, run.

Held: the raw secret and ``PLANGATE_SECRET_*``; base64 wrapped at 16/20/60, base32 at 16,
hex at 10; ``%xx`` lower and mixed case; ``od -x``; uuencode; quoted-printable soft breaks of
a 96-character secret; the cut of the raw form and of base64/hex/base32; the url_env
webhook token (the failed post is logged by origin only). Values: every group whose
spellings hash alike reached all three tool kinds alike (argv, raw stdin bytes, python
types/reprs/kwargs order, http path and raw body: the params go out in canonical key
order, ``1.0``/``1e0``/``0x1``/``+1`` as ``1``).

Not tried (time): ascii85/base85, rot13, reversal and Punycode (accepted, round 107), MCP
``wait``, a python tool's timeout with partial output, a secret in the error of a cut
stream's last line. Suspected: other views (NFKC, NUL-interleaved, HTML references, the
stand-in view) likely share class 2's gap at the cut.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import http.server
import json
import quopri
import socket
import struct
import sys
import threading
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
    "TOK16": "Tk5Wq8Zr3Xm6Vb2N",
    "LONG": "Lg7Hq2Wz5Xk8Rv3Mc6Tn9Bp4Yd1Fs0Gu" * 3,
}
ENV_SECRET = ("PLANGATE_SECRET_ENVTOK", "Ev3Rt6Yu9Io2Pa5Sd")
HOOK_TOKEN = "Nh7Tq2Wz5Xk8Rv3Mc6"


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


def _wrap(t: str, n: int) -> str:
    return "\n".join(t[i : i + n] for i in range(0, len(t), n))


def _words(b: bytes, size: int, fmt: str) -> str:
    b = b + b"\0" * (-len(b) % size)
    return " ".join(
        ("%0" + str(size * 2) + "x") % struct.unpack(fmt, b[i : i + size])[0]
        for i in range(0, len(b), size)
    )


#: form -> function of the secret giving the text the tool prints
def form_of(form: str, s: str) -> str:
    b = s.encode()
    table = {
        "raw": lambda: s,
        "b64w16": lambda: _wrap(_b64(b), 16),
        "b64w20": lambda: _wrap(_b64(b), 20),
        "b64w60": lambda: _wrap(_b64(b), 60),
        "b32w16": lambda: _wrap(base64.b32encode(b).decode(), 16),
        "hexw10": lambda: _wrap(b.hex(), 10),
        "pctlow": lambda: "".join(f"%{c:02x}" for c in b),
        "pctmix": lambda: "".join(("%%%02x" if i % 2 else "%%%02X") % c for i, c in enumerate(b)),
        "odx2": lambda: " " + _words(b, 2, "<H"),
        "odx4": lambda: " " + _words(b, 4, "<I"),
        "odx8": lambda: " " + _words(b, 8, "<Q"),
        "uu": lambda: binascii.b2a_uu(b).decode().rstrip("\n"),
        "qpsoft": lambda: quopri.encodestring(b"password=" + b).decode(),
        "a85": lambda: base64.a85encode(b, adobe=True).decode(),
        "upper": lambda: s.upper(),
        "uesc": lambda: "".join(f"\\u{ord(c):04x}" for c in s),
        "spaced": lambda: " ".join(s),
        "b64": lambda: _b64(b),
        "hex": lambda: b.hex(),
        "pct": lambda: "".join(f"%{c:02X}" for c in b),
        "b32": lambda: base64.b32encode(b).decode(),
    }
    return table[form]()


#: cut forms: form -> (characters of the form kept before the cut, the needle's length: the
#: part a reader decodes to 8 characters or more of the secret)
CUT = {
    "raw": (12, 10),
    "b64": (16, 12),
    "hex": (24, 18),
    "pct": (36, 27),
    "upper": (12, 10),
    "uesc": (72, 54),
    "spaced": (24, 18),
    "b32": (24, 16),
}

SAY = r"""
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from formtable import form_of, LIMIT, CUT
mode, out = sys.argv[1], sys.argv[2]
got = json.loads(sys.stdin.read())
s, slug = got["key"], got["n"]
if mode.startswith(("cut-", "cuto-")):
    form = mode.split("-", 1)[1]
    t = form_of(form, s)
    keep = CUT[form][0]
    Path(out, slug).write_text(t, encoding="utf-8")
    if mode.startswith("cuto-"):
        print("." * (LIMIT - keep - 1) + " " + t)
        sys.exit(0)
    sys.stderr.write("." * (LIMIT - keep - 1) + " " + t + "\n")
    sys.exit(2)
t = form_of(mode, s)
Path(out, slug).write_text(t, encoding="utf-8")
sys.stderr.write("value: " + t + "\n")
sys.exit(2)
"""

ARG = r"""
import json, sys
raw = sys.stdin.read()
print(json.dumps({"argv": sys.argv[1:], "raw": raw}))
"""

VALTOOL = r"""
def probe(**kw):
    return {"order": list(kw), "repr": {k: repr(v) for k, v in kw.items()},
            "type": {k: type(v).__name__ for k, v in kw.items()}}
"""

#: plan slug -> (mode, secret)
PLANS: dict[str, tuple[str, str]] = {
    "plain-raw": ("raw", "PLAIN"),
    "env-raw": ("raw", "ENVTOK"),
    "plain-b64w16": ("b64w16", "PLAIN"),
    "plain-b64w20": ("b64w20", "PLAIN"),
    "long-b64w60": ("b64w60", "LONG"),
    "plain-b32w16": ("b32w16", "PLAIN"),
    "plain-hexw10": ("hexw10", "PLAIN"),
    "plain-pctlow": ("pctlow", "PLAIN"),
    "plain-pctmix": ("pctmix", "PLAIN"),
    "tok-odx2": ("odx2", "TOK16"),
    "tok-odx4": ("odx4", "TOK16"),
    "tok-odx8": ("odx8", "TOK16"),
    "plain-uu": ("uu", "PLAIN"),
    "long-qpsoft": ("qpsoft", "LONG"),
    **{f"cut-{f}": (f"cut-{f}", "PLAIN") for f in CUT},
    **{f"cuto-{f}": (f"cuto-{f}", "PLAIN") for f in CUT},
}

#: values side: slug -> (group, inputs.n as written, params order "za" or "az")
VALUES: dict[str, tuple[str, str, str]] = {
    "v-one": ("one", "1", "az"),
    "v-one-f": ("one", "1.0", "az"),
    "v-one-e": ("one", "1e0", "az"),
    "v-one-x": ("one", "0x1", "az"),
    "v-one-p": ("one", "+1", "az"),
    "v-hund": ("hund", "100", "az"),
    "v-hund-e": ("hund", "1e2", "az"),
    "v-hund-x": ("hund", "0x64", "az"),
    "v-hund-o": ("hund", "0o144", "az"),
    "v-ord-az": ("order", "5", "az"),
    "v-ord-za": ("order", "5", "za"),
    "v-dbl-2": ("dbl", "9007199254740992.0", "az"),
    "v-dbl-3": ("dbl", "9007199254740993.0", "az"),
    "v-tenth": ("tenth", "0.1", "az"),
    "v-tenth-l": ("tenth", "0.1000000000000000055511151231257827", "az"),
    "v-surr-pair": ("surr", '"\\ud83d\\ude00"', "az"),
    "v-surr-astral": ("surr", '"\\U0001F600"', "az"),
    "v-tiny": ("tiny", "1e-7", "az"),
    "v-tiny-d": ("tiny", "0.0000001", "az"),
}
GROUPS = list(dict.fromkeys(g for g, _, _ in VALUES.values()))
TOOLS = ("arg", "pyv", "hv")


def _plan(slug: str, mode: str, key: str) -> str:
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: say}]\nactions:\n"
        f"  - id: 1\n    tool: say\n    why: w\n"
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
        f"import base64, binascii, quopri, struct\nLIMIT = {LIMIT}\n" + src[start:end],
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
    return shared(tmp_path_factory, "r111-secrets-atk111e", _build)


def _value(key: str) -> str:
    return ENV_SECRET[1] if key == "ENVTOK" else SECRETS[key]


def _needles(slug: str, printed: str) -> list[str]:
    mode, key = PLANS[slug]
    core = _value(key)
    found = [core[i : i + 8] for i in range(len(core) - 7)]
    if mode.startswith(("cut-", "cuto-")):
        found.append(printed[: CUT[mode.split("-", 1)[1]][1]])
    else:
        found.append(printed)
        found += [line for line in printed.splitlines() if len(line) >= 8]
        if mode == "qpsoft":
            found.append(printed.replace("=\n", ""))
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


IDS = [f"{s}:{w}" for s in PLANS for w in ("record", "shown")]


def _broke(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 111: {cls}: {what}")


#: class -> (ids, what broke): none open; both classes were fixed the same session (fix111e:
#: the cut's views, the word dumps)
CLASSES: dict[str, tuple[list[str], str]] = {}
BROKEN: dict[str, Any] = {
    vid: _broke(cls, what) for cls, (vids, what) in CLASSES.items() for vid in vids
}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round111_secrets_atk111e(lab: Lab, vid: str) -> None:
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    printed = got["printed"][slug]
    assert printed, f"the tool never ran for {slug}"
    needles = _needles(slug, printed)
    expected = "completed" if slug.startswith("cuto-") else "failed"
    assert got["rows"].get(f"plans/{slug}") == expected, got["rowtext"].get(f"plans/{slug}")
    if what == "record":
        text = got["history"][slug] + got["mcp"][slug] + got["journal"][slug]
        assert "plangate: " in got["history"][slug], got["history"][slug][-800:]
    else:
        text = _said(got, slug) + _mstatus_row(got, slug)
        assert f"plans/{slug}" in text, text[-800:]
        posts = _posts(got, slug)
        assert f"plans/{slug}" in posts, got["posts"][-3:]
        page = got["pages"][slug]
        assert "E_TOOL_FAILED" in page or expected == "completed", page[:800]
        text += posts + page + got["pages"]["index"]
    leaks = [n for n in needles if n in text]
    assert not leaks, (leaks, text[-1500:])


def test_round111_hook_url_atk111e(lab: Lab) -> None:
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
def test_round111_values_atk111e(lab: Lab, vid: str) -> None:
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
    for same in alike:
        seen = {s: _reached(got, s, tool) for s in same}
        assert len(set(seen.values())) == 1, seen
