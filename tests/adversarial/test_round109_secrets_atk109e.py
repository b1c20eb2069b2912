# ruff: noqa: E501
"""Round 109, secrets (atk109e): round 108's fix (a secret's parts are secrets: its value
without surrounding blanks, each string and number of a structured one) checked at its
edges, and the credential shapes next to it a client takes apart as ordinary use: quotes
around a value, a JSON text inside a mapping's value, key=value credential texts, a URL's
password; followed to the records, what is said, the notify posts and the page.

Lab (one, module scope; local mode): ``secrets.file`` (YAML, ``SECRETS_YAML``) and
``PLANGATE_SECRET_*`` variables (``ENV``); ``notify`` posts ``fail``/``complete`` to a real
loopback receiver; an exec tool ``say`` reads its ``key`` param (``$<secrets.NAME>``) from
stdin and prints a form of it (param ``m``, see ``SAY``; ``p`` a field path) to stderr,
exit 2 (or stdout, exit 0). One pass freezes, Alice approves all in one commit, one pass
runs; then ``status`` (text, JSON), ``show``, MCP ``log`` and ``status``, the journal, and a
daemon started with ``ui: {listen: 0}`` serving ``/api/plan/<id>``, ``/plan/<id>``,
``/api/`` and ``/``.

Ids: ``<plan>:record`` (``git log -p`` of the plan's folder, MCP ``log``, the journal),
``<plan>:said`` (``status`` text/JSON, ``show``, MCP ``status``, the passes' structured
log, the plan's notify posts) and ``<plan>:page`` (the page and ``/api/`` of the plan, and
the index). Needles: every 8 characters in a row of the value a client uses (and the
encoded form a tool printed, ``ENCODED``), raw and JSON-escaped.

Seen (round 109, 78 ids, ~20-40 s wall): 4 classes broke (24 ids), 54 held. All four fixed
the same session (r109secretparts: the redactor reads a secret's parts as a tool does:
without quotes around it, each value of a JSON string inside it, each value of its
``name=value`` pairs, a URL's user and password; ``secrets._parts_of``).

1. **quoted-secret** (``quot-fail``, ``squot-fail``, ``eq-fail``; 9 ids): a secret
   configured with quotes around it (``QUOT: '"Qo9Tz4Wx7Cv2Bn5"'`` in the secrets file,
   ``SQUOT`` with single quotes; ``PLANGATE_SECRET_EQ='"Eq2Wr5Ty8Ui3Op6A"'`` as
   ``docker --env-file`` passes a dotenv line, quotes kept) is searched only with them; a
   tool that unquotes it as dotenv loaders and shells do (``s.strip().strip("\"'")``) had
   ``value: Qo9Tz4Wx7Cv2Bn5`` committed in the ``plangate: fail`` commit, EXECUTION_LOG.md,
   the journal, ``status``, ``show``, MCP ``log``/``status``, the structured log, the
   ``fail`` notify post and the page/``/api/plan/``. The sibling of round 108's padding.
   Reproduce: secrets file ``QUOT: '"Qo9Tz4Wx7Cv2Bn5"'``, exec tool printing
   ``key.strip('"')`` to stderr and exiting 2, plan ``key: "$<secrets.QUOT>"``, approved, run.
2. **structured-leaf-json** (``mjs-fail``; 3 ids): a mapping in the secrets file whose
   value is itself a JSON credential string (``MJS: {cred: '{"token": "Mj6Rt9Yp3Zk5Bq8N"}'}``)
   is searched value by value one level only: the token inside ``cred`` is no part, so a
   tool printing ``json.loads(obj["cred"])["token"]`` had it committed readable everywhere.
   Held: the same nesting held as one JSON string (``DJ``: ``{"SecretString": "{\"password\":
   ...}"}``, the AWS Secrets Manager shape) and a nested mapping (``NEST``).
3. **text-credential** (``envf-fail``, ``ado-fail``; 6 ids): a credential held as one
   string in a key=value text (dotenv lines ``DB_USER=app\nDB_PASSWORD=Ev3Kr7Tw9Qz2Mp6X``;
   an ADO.NET/Azure connection string ``Server=db;User Id=app;Password=Ad5Kw8Zt3Qx6Mv2R;``)
   is searched only whole: a tool that reads the one field it needs (``password: ...``)
   had it committed readable. Held: the same as YAML ``key: value`` lines (``YSTR``).
   docs/execution.md already takes ``;AccountKey=KEY;`` apart in a catalog env value.
4. **url-credential** (``urlc-pw``, ``urlc-repr``; 6 ids): a secret that is a URL
   with a password (``URLC: postgres://app:Ur4Zx7Cv9Bn2Mq5T@db.example:5432/x``, the
   usual ``DATABASE_URL``) is searched only whole: ``urlsplit(s).password`` printed, or the
   ``repr`` of ``urlsplit(s)`` (``netloc='app:Ur4Zx7Cv9Bn2Mq5T@db.example:5432'``, what a
   debug print or a driver's error shows), had the password committed readable; the
   catalog's own URLs have their password masked (docs/execution.md), a secret URL not.

Held: a leading U+00A0, U+2003, form feed or line end before the value, stripped (file and
env); a nested mapping's field; a JSON credential nested in a JSON string (``DJ``); a
padded value inside a mapping (``MPAD``), stripped; YAML-lines text; a PEM key printed
with CRLF line ends and one of its base64 lines alone; a value with ``"&<>+/='`` printed
form-urlencoded, as a CSV field and XML-escaped; a JSON number field; a
``PLANGATE_SECRET_*`` JSON credential's field; HTTP Basic ``base64(user:password)`` of a
mapping's fields and of a plain secret; every surface (notify posts, page, ``/api/``)
masked exactly where the records are.

Should: a secret is searched in the forms a client takes it apart into: unquoted (a pair of
``"``/``'`` around it, as padding), each value of JSON found at any depth of a structured
secret (a mapping's string values parsed as round 108 parses a JSON string), the values of
a key=value credential text (``;``/line separated, as the catalog's connection strings),
and a URL's password (and token-like user part), as the catalog's URLs are.

Not checked (time): the daemon's own structured log lines for these plans (the ``run
--once`` passes' log is checked), MCP ``wait``.
"""

from __future__ import annotations

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

SECRETS_YAML = """\
LNBSP: "\\u00a0Lb4Nq7Wd2Ks9Xp6"
LEMSP: "\\u2003Le5Mq8Rt3Yu6Zp1"
LFF: "\\fLf6Gh9Jk2Mn5Qr8"
LNL: "\\nLn7Bv3Cx5Zq9Wt2"
QUOT: '"Qo9Tz4Wx7Cv2Bn5"'
SQUOT: "'Sq3Fd6Gh8Jk1Lz4'"
NEST: {db: {user: app, password: Ne4Tq8Wz2Xk6Vb9M}}
DJ: '{"SecretString": "{\\\\"password\\\\": \\\\"Dj5Hn8Kq2Wv7Xr4T\\\\"}"}'
MJS: {cred: '{"token": "Mj6Rt9Yp3Zk5Bq8N"}'}
MPAD: {password: "  Mp7Wc4Xv2Nb8Lk5Q"}
ENVF: "DB_USER=app\\nDB_PASSWORD=Ev3Kr7Tw9Qz2Mp6X\\n"
YSTR: "user: app\\npassword: Ys8Gb3Nh6Jm2Kq9W\\n"
URLC: "postgres://app:Ur4Zx7Cv9Bn2Mq5T@db.example:5432/x"
PEM: "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\nBKcwggSjAgEAAoIBAQC7Pm3Xq9Zr4Wt6\\n-----END PRIVATE KEY-----\\n"
SPECIAL: {password: 'Sp5"Q&<r>9+/=Zt''w3'}
JNUM: '{"pin": 73915428, "rate": 0.73915428}'
ADO: "Server=db.example;User Id=app;Password=Ad5Kw8Zt3Qx6Mv2R;"
BAS: {user: app, password: Ba7Xq2Wk9Zt4Nm6P}
PLAIN: "Pl3Qw8Er5Ty2Ui7O"
"""

ENV = {
    "PLANGATE_SECRET_EJ": '{"client_secret": "Ej4Wq7Zr2Tx9Kb5N"}',
    "PLANGATE_SECRET_EPAD": "\u00a0Ep6Ht3Yn8Mz2Qc5V",
    "PLANGATE_SECRET_EQ": '"Eq2Wr5Ty8Ui3Op6A"',
}

CORES = {
    "LNBSP": ["Lb4Nq7Wd2Ks9Xp6"],
    "LEMSP": ["Le5Mq8Rt3Yu6Zp1"],
    "LFF": ["Lf6Gh9Jk2Mn5Qr8"],
    "LNL": ["Ln7Bv3Cx5Zq9Wt2"],
    "QUOT": ["Qo9Tz4Wx7Cv2Bn5"],
    "SQUOT": ["Sq3Fd6Gh8Jk1Lz4"],
    "NEST": ["Ne4Tq8Wz2Xk6Vb9M"],
    "DJ": ["Dj5Hn8Kq2Wv7Xr4T"],
    "MJS": ["Mj6Rt9Yp3Zk5Bq8N"],
    "MPAD": ["Mp7Wc4Xv2Nb8Lk5Q"],
    "ENVF": ["Ev3Kr7Tw9Qz2Mp6X"],
    "YSTR": ["Ys8Gb3Nh6Jm2Kq9W"],
    "URLC": ["Ur4Zx7Cv9Bn2Mq5T"],
    "PEM": ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "BKcwggSjAgEAAoIBAQC7Pm3Xq9Zr4Wt6"],
    "SPECIAL": ["r>9+/=Zt'w3", 'Sp5"Q&<r'],
    "JNUM": ["73915428"],
    "EJ": ["Ej4Wq7Zr2Tx9Kb5N"],
    "EPAD": ["Ep6Ht3Yn8Mz2Qc5V"],
    "EQ": ["Eq2Wr5Ty8Ui3Op6A"],
    "ADO": ["Ad5Kw8Zt3Qx6Mv2R"],
    "BAS": ["Ba7Xq2Wk9Zt4Nm6P"],
    "PLAIN": ["Pl3Qw8Er5Ty2Ui7O"],
}

SAY = r"""
import csv, io, json, shlex, sys, urllib.parse, xml.sax.saxutils
mode, path = sys.argv[1], sys.argv[2]
s = json.loads(sys.stdin.read()).get("key")
fail = mode.endswith("-fail")
form = mode[:-5] if fail else mode
def leaf():
    v = s
    for seg in path.split("."):
        if seg.startswith("~"):
            v, seg = json.loads(v), seg[1:]
        elif isinstance(v, str) and v[:1] in "{[":
            v = json.loads(v)
        if seg == "":
            continue
        v = v[int(seg)] if isinstance(v, list) else v[seg]
    return v
if form == "strip":
    t = "value: " + s.strip()
elif form == "qstrip":
    t = "value: " + s.strip().strip("\"'")
elif form == "field":
    t = "password: " + str(leaf())
elif form == "fieldstrip":
    t = "password: " + str(leaf()).strip()
elif form == "kv":
    d = dict(l.replace(": ", "=", 1).split("=", 1) for l in s.splitlines() if l.strip())
    t = "password: " + d[path]
elif form == "urlpw":
    t = "password: " + urllib.parse.urlsplit(s).password
elif form == "urlrepr":
    t = repr(urllib.parse.urlsplit(s))
elif form == "urlnet":
    t = "connecting to " + urllib.parse.urlsplit(s).netloc
elif form == "crlf":
    t = s.replace("\n", "\r\n")
elif form == "pemline":
    t = "key line: " + s.splitlines()[int(path)]
elif form == "pembody":
    t = "".join(s.splitlines()[1:-1])
elif form == "form":
    t = urllib.parse.urlencode({"password": leaf()})
elif form == "csv":
    b = io.StringIO(); csv.writer(b).writerow(["app", leaf()]); t = b.getvalue()
elif form == "xml":
    t = "<password>" + xml.sax.saxutils.escape(leaf()) + "</password>"
elif form == "shq":
    t = "export PW=" + shlex.quote(leaf())
elif form == "repr":
    t = repr(leaf())
elif form == "ado":
    d = dict(kv.split("=", 1) for kv in s.split(";") if kv)
    t = "password: " + d[path]
elif form == "basic":
    import base64
    o = json.loads(s) if s[:1] == "{" else {"user": "app", "password": s}
    t = "Authorization: Basic " + base64.b64encode((o["user"] + ":" + o["password"]).encode()).decode()
elif form == "num":
    t = "pin: %r" % (leaf(),)
else:
    raise SystemExit("unknown mode " + mode)
if fail:
    sys.stderr.write(t + "\n"); sys.exit(2)
print(t)
"""

#: plan slug -> (mode, path, secret, expected final status)
PLANS: dict[str, tuple[str, str, str, str]] = {
    "lnbsp-fail": ("strip-fail", "-", "LNBSP", "failed"),
    "lemsp-fail": ("strip-fail", "-", "LEMSP", "failed"),
    "lff-fail": ("strip-fail", "-", "LFF", "failed"),
    "lnl-fail": ("strip-fail", "-", "LNL", "failed"),
    "quot-fail": ("qstrip-fail", "-", "QUOT", "failed"),
    "squot-fail": ("qstrip-fail", "-", "SQUOT", "failed"),
    "nest-fail": ("field-fail", "db.password", "NEST", "failed"),
    "dj-fail": ("field-fail", "SecretString.~password", "DJ", "failed"),
    "mjs-fail": ("field-fail", "cred.~token", "MJS", "failed"),
    "mpad-fail": ("fieldstrip-fail", "password", "MPAD", "failed"),
    "envf-fail": ("kv-fail", "DB_PASSWORD", "ENVF", "failed"),
    "ystr-fail": ("kv-fail", "password", "YSTR", "failed"),
    "urlc-pw": ("urlpw-fail", "-", "URLC", "failed"),
    "urlc-repr": ("urlrepr-fail", "-", "URLC", "failed"),
    "pem-crlf": ("crlf-fail", "-", "PEM", "failed"),
    "pem-line": ("pemline-fail", "1", "PEM", "failed"),
    "spc-form": ("form-fail", "password", "SPECIAL", "failed"),
    "spc-csv": ("csv-fail", "password", "SPECIAL", "failed"),
    "spc-xml": ("xml-fail", "password", "SPECIAL", "failed"),
    "jnum-pin": ("num-fail", "pin", "JNUM", "failed"),
    "ej-fail": ("field-fail", "client_secret", "EJ", "failed"),
    "epad-fail": ("strip-fail", "-", "EPAD", "failed"),
    "eq-fail": ("qstrip-fail", "-", "EQ", "failed"),
    "ado-fail": ("ado-fail", "Password", "ADO", "failed"),
    "bas-basic": ("basic-fail", "-", "BAS", "failed"),
    "plain-basic": ("basic-fail", "-", "PLAIN", "failed"),
}


def _plan(slug: str, mode: str, path: str, key: str) -> str:
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: say}]\nactions:\n"
        f"  - id: 1\n    tool: say\n    why: w\n"
        f'    params: {{m: {mode}, p: "{path}", key: "$<secrets.{key}>"}}\n'
    )


def _build(root: Path) -> Lab:
    (root / "say.py").write_text(SAY)
    (root / "sec.yml").write_text(SECRETS_YAML)
    server, posts = notify_receiver()
    py, say = (json.dumps(str(x)) for x in (sys.executable, root / "say.py"))
    lab = Lab(
        root / "lab",
        extra=(
            f"secrets: {{file: {root / 'sec.yml'}}}\n"
            f'notify: {{urls: ["http://127.0.0.1:{server.server_address[1]}/hook"], events: [fail, complete], retries: 0}}\n'
        ),
        tools=f"say: {{kind: exec, argv: [{py}, {say}, '{{m}}', '{{p}}']}}\n",
    )
    lab.extra_env = dict(ENV)  # type: ignore[attr-defined]
    for slug, (mode, path, key, _) in PLANS.items():
        lab.write(slug, _plan(slug, mode, path, key))
    lab.commit("plans")
    cfg = str(lab.config)
    first = lab.run()
    for slug in PLANS:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    second = lab.run()
    got: dict[str, Any] = {"passlog": first.stdout + first.stderr + second.stdout + second.stderr}
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
    return shared(tmp_path_factory, "r109-secrets-atk109e", _build)


#: plan slug -> the encoded form its tool prints (a reader decodes it with ordinary tools)
ENCODED = {
    "spc-form": ["Sp5%22Q%26%3Cr%3E9%2B%2F%3DZt%27w3"],
    "spc-csv": ['"Sp5""Q&<r>9+/=Zt\'w3"'],
    "spc-xml": ["Sp5\"Q&amp;&lt;r&gt;9+/=Zt'w3"],
    "bas-basic": ["YXBwOkJhN1hxMldrOVp0NE5tNlA="],
    "plain-basic": ["YXBwOlBsM1F3OEVyNVR5MlVpN08="],
}


def _needles(key: str) -> list[str]:
    found: list[str] = []
    for core in CORES[key]:
        found += [core] if len(core) < 8 else [core[i : i + 8] for i in range(len(core) - 7)]
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


IDS = [f"{s}:{w}" for s in PLANS for w in ("record", "said", "page")]


def _broke(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 109: {cls}: {what}")


CLASSES = {
    "quoted-secret": (
        ["quot-fail", "squot-fail", "eq-fail"],
        "a secret configured with quotes around it is not searched without them",
    ),
    "structured-leaf-json": (
        ["mjs-fail"],
        "a mapping's string value holding JSON is not searched value by value",
    ),
    "text-credential": (
        ["envf-fail", "ado-fail"],
        "a key=value credential text (dotenv lines, a ;Password=...; connection string) is not split",
    ),
    "url-credential": (
        ["urlc-pw", "urlc-repr"],
        "a URL secret's password is not a secret of its own",
    ),
}
#: the four classes above fixed the same session (r109secretparts, ``secrets._parts_of``: a
#: secret's parts as a tool reads them, read again a few levels deep)
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round109_secrets_atk109e(lab: Lab, vid: str) -> None:
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    _mode, _path, key, expected = PLANS[slug]
    needles = _needles(key) + ENCODED.get(slug, [])
    needles += [json.dumps(n)[1:-1] for n in needles if json.dumps(n)[1:-1] != n]
    assert got["rows"].get(f"plans/{slug}") == expected, got["rowtext"].get(f"plans/{slug}")
    if what == "record":
        text = got["history"][slug] + got["mcp"][slug] + got["journal"][slug]
        assert "plangate: " in got["history"][slug], got["history"][slug][-800:]
        assert "***" in got["history"][slug], got["history"][slug][-800:]  # output recorded
    elif what == "said":
        text = _said(got, slug) + _mstatus_row(got, slug)
        assert f"plans/{slug}" in text, text[-800:]
        posts = _posts(got, slug)
        assert f"plans/{slug}" in posts, got["posts"][-3:]
        text += posts
    else:
        text = got["pages"][slug]
        assert "E_TOOL_FAILED" in text or expected == "completed", text[:800]
        text += got["pages"]["index"]
    leaks = [n for n in needles if n in text]
    assert not leaks, (leaks, text[-1500:])
