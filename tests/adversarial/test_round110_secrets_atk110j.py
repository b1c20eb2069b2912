# ruff: noqa: E501
"""Round 110, secrets and values (atk110j): new shapes of a configured secret a tool hands
back (encodings of it or of its parts, a part a client reads on its own, a key, a short
secret, non-ASCII and astral secrets), followed to every record and answer; and values that
hash alike reaching a tool alike.

Lab (one, module scope; local mode): ``secrets.file`` (YAML, built from ``SECRETS``);
``notify`` posts ``fail``/``complete`` to a real loopback receiver; an exec tool ``say``
reads its ``key`` param (``$<secrets.NAME>``) from stdin, computes a form of it (param
``m``, see ``SAY``; ``p`` a field name) and prints it to stderr with exit 2 (``*-fail``) or
to stdout with exit 0, writing the exact form it printed to a side file outside the repo
(the needle); an exec tool ``arg`` (argv ``{n}``) prints its argv and stdin as JSON. One pass
freezes, Alice approves all in one commit, one pass runs; then ``status`` (text, JSON),
``show``, MCP ``log`` and ``status``, the journal, and a daemon with ``ui: {listen: 0}``
serving ``/api/plan/<id>``, ``/plan/<id>``, ``/api/`` and ``/``.

Ids: ``<plan>:record`` (``git log -p`` of the plan's folder, MCP ``log``, the journal) and
``<plan>:shown`` (``status`` text/JSON, ``show``, MCP ``status``, the passes' log, the plan's
notify posts, the page and ``/api/`` of the plan, and the index);
``test_round110_values_atk110j[<group>]`` for the values side (``plangate hash`` of plans
whose values are spelled differently, and what the ``arg`` tool got: argv text and stdin JSON). Needles: the form the
tool printed (raw and JSON-escaped), and every 8 characters in a row of the value a client
uses (the whole value when shorter).

Seen (round 110, 80 ids, ~20 s wall): 6 classes broke (16 plans, 32 ids: encoded-config-secret,
secret-url-parts, credential-text-parts, secret-mapping-key, composed-block-encodings,
short-secret-block-forms), 48 held. In every break the tool's stderr line ``value: <form>``
was committed readable in the ``plangate: fail`` commit (PLAN.yml ``execution:`` error and
stderr, EXECUTION_LOG.md), the journal, MCP ``log``/``status``, ``status`` (text, JSON),
``show``, the passes' structured log, the ``fail`` notify post, the page and ``/api/``.
Reproduce each: secrets file entry as in ``SECRETS``, exec tool ``say`` printing the form to
stderr and exiting 2, plan ``params: {m: <mode>, key: "$<secrets.NAME>"}``, approved, run.

1. **encoded-config-secret** (``b64c-dec``, ``hexc-dec``, ``docker-auth``): a secret
   configured in an encoding the client decodes before use (``B64C:`` base64 of the token,
   as a Kubernetes Secret's ``data:`` holds it; ``HEXC:`` hex; ``DOCKER:`` a Docker
   ``config.json`` whose ``auth`` is ``base64(user:password)``) is searched only as
   configured: ``base64.b64decode(s)``, ``bytes.fromhex(s)``, the decoded ``auth``'s
   password printed alone were committed readable. The sibling of round 109's parts.
2. **secret-url-parts** (``urlq-token``, ``slack-seg``): a URL secret's query value
   (``https://hooks.example/x?token=Uq5Wz8Kt3Rm6Px2V&team=ops``, ``parse_qs``) and the last
   path segment of a webhook URL (Slack's ``/services/T../B../<token>``) printed alone.
   Round 109 takes a URL secret's user and password only (the catalog's own URLs have
   their credential-named query values masked; a catalog URL path segment is an accepted limit, a
   configured secret URL is not the catalog).
3. **credential-text-parts** (``colon-pwd``, ``jwt-sig``, ``ini-field``, ``netrc-pwd``,
   ``bearer-tok``): ``app:Co8Rt5Wq2Zx7Nv4`` (curl ``-u``, Basic's pair) split at ``:``;
   ``Bearer Hb6Wq9Zt3Kx7Rm2Pv5`` (a header value) split at the blank; a JWT's signature
   segment; an AWS credentials INI text (``[default]`` / ``aws_secret_access_key = ...``,
   ``configparser``); a netrc line's ``password`` token: each part printed alone. Round 109
   splits ``name=value`` pairs on ``;`` and line ends, ``&`` (held: ``amp-secret``,
   ``ampe-secret``) and URL user/password; these other ordinary credential texts not.
4. **secret-mapping-key** (``keys-list``): ``KEYS: {Ak9Xq2Wz7Tm4Rv6N: read-write}`` (a token
   -> scope map) and the tool printing the key: round 108 keeps field names as written, so
   a credential that is a key is never hidden (a design choice there; the key here is the
   secret material).
5. **composed-block-encodings** (``plain-b64b64``, ``plain-hexb64``, ``plain-b64hex``):
   ``base64(base64(s))``, ``hex(base64(s))``, ``base64(hex(s))`` of a plain 17-character
   secret: each decodes with two ordinary steps (``base64 -d | base64 -d``); a single
   block encoding, line-wrapped base64, URL-encoded base64 held.
6. **short-secret-block-forms** (``short-b64``, ``short-hex``): a 4-character secret
   (``SHORT: Zq7W``) printed as base64 (``WnE3Vw==``) or hex (``5a713757``); its raw form and
   ``%5A%71%37%57`` were masked, and a 6-character one in both forms held (a length floor
   for block encodings, not documented for them).

Held: URL-encoded password of a URL secret (``urlpe-pwd``), ``&``-pairs (plain and
percent-encoded values), base64, wrapped base64, URL-encoded base64, CSS ``\\4f `` and Rust
``\\u{4f}`` escapes, one character per line, a secret as a JSON key of the tool's result
(top level and nested), a short secret raw and ``%XX``, a Greek/Cyrillic/CJK secret as
Python ``namereplace`` (``\\N{GREEK CAPITAL LETTER OMEGA}``), IMAP modified UTF-7, CSS, Rust
and JSON escapes, a mathematical-alphanumeric secret as JSON surrogate escapes and in NFKC
(``SecretKq94``). Values: ``2``/``2.0``/``2.0e+0``/``0.2e1``, ``0``/``-0.0``,
``9007199254740991``/``.0`` hash alike and reach ``arg`` alike (argv text, stdin, inline
text, list item); NFC and NFD text hash differently and reach it as written.

Not checked (time): the daemon's own structured log lines (the ``run --once`` passes' log is
checked), MCP ``wait``, the python and http tool kinds.
"""

from __future__ import annotations

import base64
import contextlib
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from mcpkit import answers
from oraclekit import notify_receiver, ui_daemon
from test_round2_execution_kit import shared
from test_round61_surface_page import _get


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


#: name -> configured value (written to the secrets file as JSON, a YAML double-quoted scalar)
SECRETS: dict[str, Any] = {
    "B64C": _b64("Bk6Qz3Wm8Xt2Rv5N"),
    "HEXC": b"Hx4Lp9Ty2Nm7Qs3K".hex(),
    "DOCKER": json.dumps({"auths": {"reg.example": {"auth": _b64("app:Dk5Wq8Zr3Tx6Mv2P")}}}),
    "URLQ": "https://hooks.example/x?token=Uq5Wz8Kt3Rm6Px2V&team=ops",
    "SLACK": "https://hooks.slack.example/services/T0ABC123/B0DEF456/Sk7Vm2Qx9Wt4Zr6Nc3Hy",
    "URLPE": "postgres://app:Pe4%40Zq8%2FWx2Mk6@db.example/x",
    "COLON": "app:Co8Rt5Wq2Zx7Nv4",
    "AMP": "client_id=app&client_secret=Am3Kq6Wz9Xt2Rp5V",
    "AMPE": "client_id=app&client_secret=Ae7Kq%2BWz9%3DXt2Rp",
    "JWT": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhcHAifQ.Jw5Tq8Zr2Xm6Kv9Pb3Nc7Yd4Lf1Hs0Gu",
    "KEYS": {"Ak9Xq2Wz7Tm4Rv6N": "read-write"},
    "INI": "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPL\naws_secret_access_key = In8Wq3Zt6Kx9Rv2Mp5Lc\n",
    "NETRC": "machine api.example login app password Nr5Tq8Wz2Xk6Vb9M",
    "BEARER": "Bearer Hb6Wq9Zt3Kx7Rm2Pv5",
    "PLAIN": "Pl4Qw7Er2Ty9Ui3Ox",
    "PCT": "Pc4Qw7Er2Ty9Ui3O>>?~Zk",
    "SHORT": "Zq7W",
    "SHORT6": "Zq7Wx3",
    "GREEK": "Ωμέγαключ密码",
    "ASTRAL": "\U0001d516\U0001d522\U0001d520\U0001d52f\U0001d522\U0001d531\U0001d50e\U0001d52e\U0001d7d7\U0001d7d2",
}

#: name -> the value(s) a client uses (every 8 characters in a row of each are needles)
CORES = {
    "B64C": ["Bk6Qz3Wm8Xt2Rv5N"],
    "HEXC": ["Hx4Lp9Ty2Nm7Qs3K"],
    "DOCKER": ["Dk5Wq8Zr3Tx6Mv2P"],
    "URLQ": ["Uq5Wz8Kt3Rm6Px2V"],
    "SLACK": ["Sk7Vm2Qx9Wt4Zr6Nc3Hy"],
    "URLPE": ["Pe4@Zq8/Wx2Mk6"],
    "COLON": ["Co8Rt5Wq2Zx7Nv4"],
    "AMP": ["Am3Kq6Wz9Xt2Rp5V"],
    "AMPE": ["Ae7Kq+Wz9=Xt2Rp"],
    "JWT": ["Jw5Tq8Zr2Xm6Kv9Pb3Nc7Yd4Lf1Hs0Gu"],
    "KEYS": ["Ak9Xq2Wz7Tm4Rv6N"],
    "INI": ["In8Wq3Zt6Kx9Rv2Mp5Lc"],
    "NETRC": ["Nr5Tq8Wz2Xk6Vb9M"],
    "BEARER": ["Hb6Wq9Zt3Kx7Rm2Pv5"],
    "PLAIN": ["Pl4Qw7Er2Ty9Ui3Ox"],
    "PCT": ["Pc4Qw7Er2Ty9Ui3O>>?~Zk"],
    "SHORT": ["Zq7W"],
    "SHORT6": ["Zq7Wx3"],
    "GREEK": ["Ωμέγαключ密码"],
    "ASTRAL": [SECRETS["ASTRAL"], "SecretKq94"],
}

SAY = r"""
import base64, configparser, json, sys, unicodedata, urllib.parse
from pathlib import Path
mode, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
got = json.loads(sys.stdin.read())
s, slug = got["key"], got["n"]
fail = mode.endswith("-fail")
form = mode[:-5] if fail else mode
b64 = lambda t: base64.b64encode(t.encode()).decode()
def imap(t):
    r, run = "", ""
    for c in t + "\0":
        if c != "\0" and not (" " <= c <= "~"):
            run += c
            continue
        if run:
            r += "&" + base64.b64encode(run.encode("utf-16-be")).decode().rstrip("=").replace("/", ",") + "-"
            run = ""
        if c != "\0":
            r += "&-" if c == "&" else c
    return r
if form == "b64dec":
    t = base64.b64decode(s).decode()
elif form == "hexdec":
    t = bytes.fromhex(s).decode()
elif form == "docker":
    t = base64.b64decode(json.loads(s)["auths"]["reg.example"]["auth"]).decode().split(":", 1)[1]
elif form == "qs":
    q = urllib.parse.urlsplit(s).query if "://" in s else s
    t = urllib.parse.parse_qs(q)[path][0]
elif form == "lastseg":
    t = urllib.parse.urlsplit(s).path.rsplit("/", 1)[1]
elif form == "urlpwd":
    t = urllib.parse.unquote(urllib.parse.urlsplit(s).password)
elif form == "colon":
    t = s.split(":", 1)[1]
elif form == "jwtsig":
    t = s.split(".")[2]
elif form == "keys":
    t = ", ".join(json.loads(s))
elif form == "ini":
    c = configparser.ConfigParser(); c.read_string(s); t = c["default"][path]
elif form == "netrc":
    w = s.split(); t = w[w.index("password") + 1]
elif form == "bearer":
    t = s.split()[1]
elif form == "raw":
    t = s
elif form == "b64":
    t = b64(s)
elif form == "b64b64":
    t = b64(b64(s))
elif form == "b64pct":
    t = urllib.parse.quote(b64(s), safe="")
elif form == "hexb64":
    t = b64(s).encode().hex()
elif form == "b64hex":
    t = b64(s.encode().hex())
elif form == "b64wrap":
    x = b64(s); t = "\n".join(x[i:i + 4] for i in range(0, len(x), 4))
elif form == "hex":
    t = s.encode().hex()
elif form == "pct":
    t = "".join("%%%02X" % b for b in s.encode())
elif form == "css":
    t = "".join("\\%x " % ord(c) for c in s)
elif form == "rustu":
    t = "".join("\\u{%x}" % ord(c) for c in s)
elif form == "namerep":
    t = s.encode("ascii", "namereplace").decode()
elif form == "imap":
    t = imap(s)
elif form == "utf7":
    t = s.encode("utf-7").decode()
elif form == "jsonesc":
    t = json.dumps(s)
elif form == "nfkc":
    t = unicodedata.normalize("NFKC", s)
elif form == "vertical":
    t = "\n".join(s)
elif form == "reprbytes":
    t = repr(s.encode("utf-16-le"))
elif form == "jsonkey":
    t = json.dumps({s: 1})
elif form == "jsonkeynest":
    t = json.dumps({"tokens": {s: {"scope": "rw"}}})
else:
    raise SystemExit("unknown mode " + mode)
Path(out, slug).write_text(t, encoding="utf-8")
if fail:
    sys.stderr.write("value: " + t + "\n"); sys.exit(2)
print(t)
"""

ARG = r"""
import json, sys
print(json.dumps({"argv": sys.argv[1:], "stdin": json.loads(sys.stdin.read())}))
"""

#: plan slug -> (mode, path, secret, expected final status)
PLANS: dict[str, tuple[str, str, str, str]] = {
    # a part a client reads on its own
    "b64c-dec": ("b64dec-fail", "-", "B64C", "failed"),
    "hexc-dec": ("hexdec-fail", "-", "HEXC", "failed"),
    "docker-auth": ("docker-fail", "-", "DOCKER", "failed"),
    "urlq-token": ("qs-fail", "token", "URLQ", "failed"),
    "slack-seg": ("lastseg-fail", "-", "SLACK", "failed"),
    "urlpe-pwd": ("urlpwd-fail", "-", "URLPE", "failed"),
    "colon-pwd": ("colon-fail", "-", "COLON", "failed"),
    "amp-secret": ("qs-fail", "client_secret", "AMP", "failed"),
    "ampe-secret": ("qs-fail", "client_secret", "AMPE", "failed"),
    "jwt-sig": ("jwtsig-fail", "-", "JWT", "failed"),
    "keys-list": ("keys-fail", "-", "KEYS", "failed"),
    "ini-field": ("ini-fail", "aws_secret_access_key", "INI", "failed"),
    "netrc-pwd": ("netrc-fail", "-", "NETRC", "failed"),
    "bearer-tok": ("bearer-fail", "-", "BEARER", "failed"),
    # encodings of a whole secret
    "plain-b64": ("b64-fail", "-", "PLAIN", "failed"),
    "plain-b64b64": ("b64b64-fail", "-", "PLAIN", "failed"),
    "pct-b64pct": ("b64pct-fail", "-", "PCT", "failed"),
    "plain-hexb64": ("hexb64-fail", "-", "PLAIN", "failed"),
    "plain-b64hex": ("b64hex-fail", "-", "PLAIN", "failed"),
    "plain-b64wrap": ("b64wrap-fail", "-", "PLAIN", "failed"),
    "plain-css": ("css-fail", "-", "PLAIN", "failed"),
    "plain-rustu": ("rustu-fail", "-", "PLAIN", "failed"),
    "plain-vertical": ("vertical-fail", "-", "PLAIN", "failed"),
    "plain-jsonkey": ("jsonkey", "-", "PLAIN", "completed"),
    "plain-keynest": ("jsonkeynest", "-", "PLAIN", "completed"),
    "short-raw": ("raw-fail", "-", "SHORT", "failed"),
    "short-b64": ("b64-fail", "-", "SHORT", "failed"),
    "short-hex": ("hex-fail", "-", "SHORT", "failed"),
    "short-pct": ("pct-fail", "-", "SHORT", "failed"),
    "short6-b64": ("b64-fail", "-", "SHORT6", "failed"),
    "short6-hex": ("hex-fail", "-", "SHORT6", "failed"),
    "greek-namerep": ("namerep-fail", "-", "GREEK", "failed"),
    "greek-imap": ("imap-fail", "-", "GREEK", "failed"),
    "greek-css": ("css-fail", "-", "GREEK", "failed"),
    "greek-rustu": ("rustu-fail", "-", "GREEK", "failed"),
    "greek-json": ("jsonesc-fail", "-", "GREEK", "failed"),
    "astral-json": ("jsonesc-fail", "-", "ASTRAL", "failed"),
    "astral-nfkc": ("nfkc-fail", "-", "ASTRAL", "failed"),
}

#: values side: slug -> the param ``n`` as written (YAML), the group whose hashes must agree
VALUES: dict[str, tuple[str, str]] = {
    "v-int": ("2", "two"),
    "v-float": ("2.0", "two"),
    "v-exp": ("2.0e+0", "two"),
    "v-under": ("0.2e1", "two"),
    "v-zero": ("0", "zero"),
    "v-negz": ("-0.0", "zero"),
    "v-nfc": ('"\\u00e9t\\u00e9"', "nfc"),
    "v-nfd": ('"e\\u0301te\\u0301"', "nfd"),
    "v-big": ("9007199254740991.0", "big"),
    "v-bigint": ("9007199254740991", "big"),
}


def _plan(slug: str, mode: str, path: str, key: str) -> str:
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: say}]\nactions:\n"
        f"  - id: 1\n    tool: say\n    why: w\n"
        f'    params: {{m: {mode}, p: "{path}", n: {slug}, key: "$<secrets.{key}>"}}\n'
    )


def _vplan(slug: str, value: str) -> str:
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        f"inputs: {{n: {value}}}\n"
        "available_tools: [{name: arg}]\nactions:\n"
        "  - id: 1\n    tool: arg\n    why: w\n"
        '    params: {n: "$<inputs.n>", s: "x-$<inputs.n>", l: ["$<inputs.n>"]}\n'
        "    outputs:\n"
        '      - {name: argv, path: "$.json.argv"}\n'
        '      - {name: stdin, path: "$.json.stdin"}\n'
    )


def _build(root: Path) -> Lab:
    (root / "say.py").write_text(SAY)
    (root / "arg.py").write_text(ARG)
    out = root / "printed"
    out.mkdir()
    (root / "sec.yml").write_text(
        "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in SECRETS.items()),
        encoding="utf-8",
    )
    server, posts = notify_receiver()
    py, say, arg, outp = (
        json.dumps(str(x)) for x in (sys.executable, root / "say.py", root / "arg.py", out)
    )
    lab = Lab(
        root / "lab",
        extra=(
            f"secrets: {{file: {root / 'sec.yml'}}}\n"
            f'notify: {{urls: ["http://127.0.0.1:{server.server_address[1]}/hook"], events: [fail, complete], retries: 0}}\n'
        ),
        tools=(
            f"say: {{kind: exec, argv: [{py}, {say}, '{{m}}', '{{p}}', {outp}]}}\n"
            f"arg: {{kind: exec, argv: [{py}, {arg}, '{{n}}']}}\n"
        ),
    )
    for slug, (mode, path, key, _) in PLANS.items():
        lab.write(slug, _plan(slug, mode, path, key))
    for slug, (value, _) in VALUES.items():
        lab.write(slug, _vplan(slug, value))
    lab.commit("plans")
    cfg = str(lab.config)
    first = lab.run()
    hashes = {}
    for slug, (value, _) in VALUES.items():
        # the same plan under one name, outside the repo: a copy of one hash runs once
        alone = root / "hashed" / slug / "PLAN.yml"
        alone.parent.mkdir(parents=True)
        alone.write_text(_vplan("v", value))
        h = lab.cli("hash", str(alone))
        hashes[slug] = h.stdout.strip() or h.stderr.strip()
    for slug in [*PLANS, *VALUES]:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    second = lab.run()
    got: dict[str, Any] = {"passlog": first.stdout + first.stderr + second.stdout + second.stderr}
    got["hashes"] = hashes
    got["vplans"] = {s: lab.plan(s) for s in VALUES}
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
    return shared(tmp_path_factory, "r110-secrets-atk110j", _build)


def _needles(key: str, printed: str | None) -> list[str]:
    found: list[str] = []
    for core in CORES[key]:
        found += [core] if len(core) < 8 else [core[i : i + 8] for i in range(len(core) - 7)]
    if printed:
        found.append(printed)
        if "\n" in printed:
            found += [line for line in printed.splitlines() if len(line) >= 8]
    found += [json.dumps(n)[1:-1] for n in found if json.dumps(n)[1:-1] != n]
    found += [json.dumps(n, ensure_ascii=False)[1:-1] for n in found]
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
    return pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason=f"round 110, accepted (docs/threat-model.md, Accepted limits): {cls}: {what}",
    )


#: class -> (plans, what broke): the classes kept as accepted limits; the others were fixed
#: the same session (r110secretparts: ``secrets._held_by``)
CLASSES: dict[str, tuple[list[str], str]] = {
    "secret-mapping-key": (
        ["keys-list"],
        "a mapping secret's key (a token -> scope map) printed alone",
    ),
    "composed-block-encodings": (
        ["plain-b64b64", "plain-hexb64", "plain-b64hex"],
        "base64 of base64, hex of base64, base64 of hex of a secret",
    ),
    "short-secret-block-forms": (
        ["short-b64", "short-hex"],
        "a 4-character secret in base64 or hex (raw and %XX masked; 6 characters held)",
    ),
}
BROKEN: dict[str, Any] = {
    f"{s}:{w}": _broke(cls, what)
    for cls, (slugs, what) in CLASSES.items()
    for s in slugs
    for w in ("record", "shown")
}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round110_secrets_atk110j(lab: Lab, vid: str) -> None:
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    _mode, _path, key, expected = PLANS[slug]
    printed = got["printed"][slug]
    assert printed, f"the tool never ran for {slug}"
    needles = _needles(key, printed)
    assert got["rows"].get(f"plans/{slug}") == expected, got["rowtext"].get(f"plans/{slug}")
    if what == "record":
        text = got["history"][slug] + got["mcp"][slug] + got["journal"][slug]
        assert "plangate: " in got["history"][slug], got["history"][slug][-800:]
        assert "***" in got["history"][slug], got["history"][slug][-800:]
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


VIDS = ["two", "zero", "big", "nfc-nfd"]


@pytest.mark.parametrize("group", VIDS)
def test_round110_values_atk110j(lab: Lab, group: str) -> None:
    """Values that hash alike reach the tool alike (argv text, stdin JSON, inline text, a
    list item); values that reach it differently hash differently."""
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    if group == "nfc-nfd":
        assert got["hashes"]["v-nfc"].startswith("sha256:"), got["hashes"]
        assert got["hashes"]["v-nfc"] != got["hashes"]["v-nfd"], got["hashes"]
        seen = {}
        for s in ("v-nfc", "v-nfd"):
            plan = got["vplans"][s]
            assert plan["plan"]["status"] == "completed", plan.get("execution")
            seen[s] = json.dumps(plan["execution"]["actions"][0]["outputs"], ensure_ascii=False)
        assert "\\u0301" in seen["v-nfd"] or "\u0301" in seen["v-nfd"], seen
        assert seen["v-nfc"] != seen["v-nfd"], seen
        return
    slugs = [s for s, (_, g) in VALUES.items() if g == group]
    hashes = {got["hashes"][s] for s in slugs}
    assert len(hashes) == 1 and next(iter(hashes)).startswith("sha256:"), got["hashes"]
    reached = {}
    for s in slugs:
        plan = got["vplans"][s]
        assert plan["plan"]["status"] == "completed", plan.get("execution")
        reached[s] = json.dumps(plan["execution"]["actions"][0]["outputs"], sort_keys=True)
    assert len(set(reached.values())) == 1, reached
