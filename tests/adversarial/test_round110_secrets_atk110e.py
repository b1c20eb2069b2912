# ruff: noqa: E501
r"""Round 110, secrets and values (atk110e): after round 109's parts (quotes, JSON leaves,
dotenv and connection-string fields, a URL's user and password), the credential shapes a
client reads differently again: a secret held encoded and decoded by its client, other
credential text formats, a URL's path or query token, a mapping's key, codepage bytes in a
block encoding, pprint's wrapping; also a secret's parts in encodings and case, short
secrets, normal forms, python tools' own prints, a refusal after resolution, a guard; and
ten number/key forms that hash alike.

Lab (one, module scope; local mode): ``secrets.file`` (YAML, ``SECRETS_YAML``); ``notify``
posts ``fail``/``complete`` to a real loopback receiver; an exec tool ``say`` reads its
``key`` param (``$<secrets.NAME>``) from stdin and prints a form of it (param ``m``, see
``SAY``; ``p`` a field) to stderr, exit 2; a python tool ``pyt`` (``PYTOOL``) prints, logs,
warns, writes fd 1/2, exits or raises with it; ``prog`` names it as the program; ``chkp``,
``chkl``, ``chke``, ``chki`` refuse it by ``params_schema`` after resolution; a guard refuses
``id-$<secrets.PLAIN>``; ``rec2`` writes its stdin to a file. One pass freezes, Alice
approves all in one commit, one pass runs; then ``status`` (text, JSON), ``show``, MCP
``log``/``status``, the journal, and a daemon with ``ui: {listen: 0}`` serving
``/api/plan/<id>``, ``/plan/<id>``, ``/api/``, ``/``.

Ids: ``<plan>`` (54): no 8 characters in a row of the value a client uses (or the encoded
form printed, ``ENCODED``), raw or JSON-escaped, in the record (``git log -p`` of the
folder, MCP ``log``, the journal), what is said (``status``, ``show``, MCP ``status``, the
passes' log, the plan's notify posts) or the page. ``val:<form>`` (10): a variant and its
canonical twin that hash alike reach the tool with the same stdin.

Seen (round 110, 64 ids, ~35 s wall): 6 classes broke (19 ids), 45 held.

1. **encoded-secret** (``k8s-b64``, ``dcfg-auth``, ``basic-hdr``, ``hex-decoded``): a
   secret held in an encoded form its client decodes as ordinary use (a Kubernetes-style
   base64 value ``K8S: "S2I4Vm4zUnQ2WXcyUXo1WA=="``, a ``.dockerconfigjson`` whose
   ``auth`` is base64 of ``user:password``, ``"Basic <base64>"``, a hex string) is searched
   only as written: a tool printing ``base64.b64decode(s).decode()`` to stderr, exit 2, had
   ``decoded: Kb8Vn3Rt6Yw2Qz5X`` committed in the ``plangate: fail`` commit, PLAN.yml,
   EXECUTION_LOG.md, the journal, ``status``, ``show``, MCP ``log``/``status``, the
   structured log, the ``fail`` post and the page. (A URL's percent-encoded password,
   unquoted by the tool, held.)
2. **credential-text-shape** (``bearer-hdr``, ``dot-comment``, ``libpq-kw``, ``aws-ini``,
   ``netrc-line``, ``pgpass-line``, ``xml-cfg``): round 109 splits ``name=value`` texts
   on ``;`` and lines only: ``"Bearer TOKEN"`` (``s.split()[1]``), a dotenv value with an
   inline ``# comment`` (python-dotenv drops it), a libpq conninfo ``host=db user=app
   password=X dbname=x`` (blank-separated), an AWS credentials INI (``[default]`` then
   ``key = value``), a netrc line, a ``.pgpass`` line, an XML config's ``<password>``: the
   field a client reads, printed alone, was committed readable everywhere as in 1.
   (A JDBC URL's ``?password=`` query value held.)
3. **url-token** (``hook-urllib3``, ``hook-lastseg``, ``qtok-param``, ``qtok-get``): a URL
   secret whose credential is its path (a Slack-style webhook
   ``https://hooks.slack.com/services/T0ABC/B0DEF/<token>``) or a query value not named
   like a password (``?api_key=``) is searched only whole: urllib3's request log line
   (``https://hooks.slack.com:443 "POST /services/.../<token> HTTP/1.1" 404``), the last
   path segment, ``parse_qs(query)["api_key"]`` or ``"GET /v1/items?api_key=... HTTP/1.1"``
   printed were committed readable.
4. **secret-as-key** (``keymap-key``): a mapping secret whose KEY is the credential
   (``KEYMAP: {Km8Zq3Wx7Vb2Nt5R: admin}``, an API-key-to-role map) had the key printed and
   committed readable; docs/execution.md says field names stay readable, which such a map
   turns into the secret itself.
5. **legacy-codepage** (``lat-l1b64``, ``lat-l1b32``): ``LAT: "Pässwörd7Zx9Kq4"`` printed as
   base64 or base32 of ``s.encode("latin-1")`` (a cp1252 client) was committed readable;
   hex of the same bytes, base64 of its UTF-8 held.
6. **pprint-wrap** (``phrase-pprint``): ``pprint.pformat({"password": s}, width=24)`` of a
   passphrase splits it into adjacent quoted literals, one a line (``'Ph7 '\n   'correct
   '\n   'horse '...``): the whole passphrase was committed in the record and the page
   (the error message quotes only the last line, ``'tree'}``, so ``status`` held).

Held: a URL password percent-encoded and unquoted; a JDBC ``?password=``; hex of Latin-1
bytes and base64 of UTF-8; NFD configured printed NFC, fullwidth printed NFKC; a 5-character
secret and a 4-character mapping field printed plain; a backslash-continued line; a
mapping field's base64, hex, percent-encoding, upper case, ``\u`` escapes, HTML hex
references, and as an output's JSON key; every ``pyt`` mode (prints, logging, warnings,
fd 1 and 2 writes, ``sys.exit(msg)``, a raise, a non-JSON key, UTF-16 bytes); the secret as
a missing program; ``params_schema`` refusals after resolution (pattern, maxLength, enum,
integer, embedded) quote ``'***'``; a guard over ``id-$<secrets.PLAIN>`` fails closed with
``"id-***"``. Values: ``1e-400``/``-1e-400``/``-0e5`` vs ``0``, ``{1: x}``/``{true: x}``/
``{null: x}``/``{1.0: x}`` vs string keys, NFC vs NFD keys, ``4.9e-324`` vs ``5e-324``,
``1.5e300`` vs ``15e299``: refused, hashed apart, or the same stdin.

Not tried (time): a secret split across two actions or streams (accepted, round 96); an
http tool's own error with a URL placeholder; MCP ``wait``; the daemon's structured log.
"""

from __future__ import annotations

import contextlib
import json
import re
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
PCT: "postgres://app:Pc7%40Zx9%2FKq2Wm5@db.example:5432/x"
K8S: "S2I4Vm4zUnQ2WXcyUXo1WA=="
DCFG: '{"auths": {"reg.example": {"auth": "YXBwOkRjNFdxOFpuMlhyNlR2OUI="}}}'
BASICH: "Basic YXBwOkJoNU5rOVd6M1F4N1JtMkw="
DOTC: "DB_PASSWORD=Dt6Yh2Kw9Zq4Xn8V # prod\\n"
LIBPQ: "host=db.example port=5432 user=app password=Lq3Zw8Xv5Nk2Rt7Y dbname=x"
JDBC: "jdbc:postgresql://db.example:5432/x?user=app&password=Jd9Kx4Wq7Zn2Vb5T"
HOOK: "https://hooks.slack.com/services/T0ABC/B0DEF/Hk7Wq2Zx9Vn4Rt6Ym3Pb8Lc5"
QTOK: "https://api.example/v1/items?api_key=Qk2Zr8Wx5Nv9Tm3B"
KEYMAP: {Km8Zq3Wx7Vb2Nt5R: admin}
LAT: "P\\u00e4ssw\\u00f6rd7Zx9Kq4"
SHORT: "Sh4r7"
PIN4: {user: app, pin: "8264"}
PLAIN: "Pl3Qw8Er5Ty2Ui7O"
NUM: "73915428"
AWSINI: "[default]\\naws_access_key_id = AKIAEXAMPLEKEY\\naws_secret_access_key = Aw7Kq2Zx9Vn4Rt6Ym3Pb8Lc5\\n"
NETRC: "machine api.example login app password Nr5Wq8Zk2Xv7Tb3M"
PGPASS: "db.example:5432:x:app:Pg4Zq7Wx2Nv9Kt6R"
XMLC: "<config><user>app</user><password>Xm6Kq9Wz3Nv7Rt2B</password></config>"
BEARER: "Bearer Br8Zq3Wx6Nv2Kt9M"
NFD: "Cafe\\u0301Kq7Zx9Wv"
FW: "\\uff26\\uff57\\uff14\\uff2b\\uff51\\uff17\\uff3a\\uff58\\uff19"
PHRASE: "Ph7 correct horse battery staple Zq4 mango tree"
MAPB: {user: app, password: Mb5Wq8Zk2Xv7Tb3N}
HEXS: "4878335771375a6b394e763254623552"
"""

ENV: dict[str, str] = {}

CORES = {
    "PCT": ["Pc7@Zx9/Kq2Wm5"],
    "K8S": ["Kb8Vn3Rt6Yw2Qz5X"],
    "DCFG": ["Dc4Wq8Zn2Xr6Tv9B"],
    "BASICH": ["Bh5Nk9Wz3Qx7Rm2L"],
    "DOTC": ["Dt6Yh2Kw9Zq4Xn8V"],
    "LIBPQ": ["Lq3Zw8Xv5Nk2Rt7Y"],
    "JDBC": ["Jd9Kx4Wq7Zn2Vb5T"],
    "HOOK": ["Hk7Wq2Zx9Vn4Rt6Ym3Pb8Lc5"],
    "QTOK": ["Qk2Zr8Wx5Nv9Tm3B"],
    "KEYMAP": ["Km8Zq3Wx7Vb2Nt5R"],
    "LAT": ["Pässwörd7Zx9Kq4"],
    "SHORT": ["Sh4r7"],
    "PIN4": ["8264"],
    "PLAIN": ["Pl3Qw8Er5Ty2Ui7O"],
    "NUM": ["73915428"],
    "AWSINI": ["Aw7Kq2Zx9Vn4Rt6Ym3Pb8Lc5"],
    "NETRC": ["Nr5Wq8Zk2Xv7Tb3M"],
    "PGPASS": ["Pg4Zq7Wx2Nv9Kt6R"],
    "XMLC": ["Xm6Kq9Wz3Nv7Rt2B"],
    "BEARER": ["Br8Zq3Wx6Nv2Kt9M"],
    "NFD": ["CaféKq7Zx9Wv"],
    "FW": ["Fw4Kq7Zx9"],
    "PHRASE": ["correct horse battery staple"],
    "MAPB": ["Mb5Wq8Zk2Xv7Tb3N"],
    "HEXS": ["Hx3Wq7Zk9Nv2Tb5R"],
}

SAY = r"""
import base64, configparser, json, pprint, sys, unicodedata, urllib.parse
import xml.etree.ElementTree as ET
mode, path = sys.argv[1], sys.argv[2]
s = json.loads(sys.stdin.read()).get("key")
fail = mode.endswith("-fail")
form = mode[:-5] if fail else mode
def leaf():
    v = s
    for seg in path.split("."):
        if isinstance(v, str) and v[:1] in "{[":
            v = json.loads(v)
        if seg in ("", "-"):
            continue
        v = v[int(seg)] if isinstance(v, list) else v[seg]
    return v
u = lambda: urllib.parse.urlsplit(s)
if form == "plain":
    t = "value: " + s
elif form == "urlpct":
    t = "password: " + urllib.parse.unquote(u().password)
elif form == "b64d":
    t = "decoded: " + base64.b64decode(s).decode()
elif form == "dcfg":
    a = json.loads(s)["auths"]["reg.example"]["auth"]
    t = "registry login: " + base64.b64decode(a).decode()
elif form == "basicd":
    t = "credentials: " + base64.b64decode(s.split()[1]).decode()
elif form == "dotc":
    d = dict(l.split("=", 1) for l in s.splitlines() if l.strip())
    t = "password: " + d[path].split(" #")[0].strip()
elif form == "libpq":
    t = "password: " + dict(kv.split("=", 1) for kv in s.split())[path]
elif form == "jdbcq":
    t = "password: " + urllib.parse.parse_qs(urllib.parse.urlsplit(s[5:]).query)[path][0]
elif form == "urllib3":
    t = '%s://%s:443 "POST %s HTTP/1.1" 404' % (u().scheme, u().hostname, u().path)
elif form == "lastseg":
    t = "token: " + u().path.rsplit("/", 1)[1]
elif form == "qtok":
    t = "api key: " + urllib.parse.parse_qs(u().query)[path][0]
elif form == "qget":
    t = '"GET %s?%s HTTP/1.1" 403' % (u().path, u().query)
elif form == "key":
    t = "token: " + list(json.loads(s))[0]
elif form == "l1hex":
    t = s.encode("latin-1").hex()
elif form == "l1b64":
    t = base64.b64encode(s.encode("latin-1")).decode()
elif form == "l1b32":
    t = base64.b32encode(s.encode("latin-1")).decode()
elif form == "hexd":
    t = "decoded: " + bytes.fromhex(s).decode()
elif form == "u8b64":
    t = base64.b64encode(s.encode()).decode()
elif form == "ini":
    c = configparser.ConfigParser(); c.read_string(s)
    t = "secret: " + c["default"][path]
elif form == "netrc":
    w = s.split(); t = "password: " + w[w.index("password") + 1]
elif form == "pgpass":
    t = "password: " + s.split(":")[-1]
elif form == "xmlc":
    t = "password: " + ET.fromstring(s).findtext(path)
elif form == "bearer":
    t = "token: " + s.split()[1]
elif form == "nfc":
    t = "value: " + unicodedata.normalize("NFC", s)
elif form == "nfkc":
    t = "value: " + unicodedata.normalize("NFKC", s)
elif form == "bscont":
    t = "TOKEN=" + s[:8] + "\\\n" + s[8:]
elif form == "pprint":
    t = pprint.pformat({"password": s}, width=24)
elif form == "partb64":
    t = "b64: " + base64.b64encode(str(leaf()).encode()).decode()
elif form == "parthex":
    t = "hex: " + str(leaf()).encode().hex()
elif form == "partpct":
    t = "q: " + urllib.parse.quote(str(leaf()), safe="")
elif form == "partupper":
    t = "value: " + str(leaf()).upper()
elif form == "partjsonu":
    t = '{"v": "' + "".join("\\u%04x" % ord(c) for c in str(leaf())) + '"}'
elif form == "parthtml":
    t = "<b>" + "".join("&#x%x;" % ord(c) for c in str(leaf())) + "</b>"
elif form == "partsplit":
    v = str(leaf()); t = "first: " + v[:8] + "\nrest: " + v[8:]
elif form == "jsonkey":
    t = json.dumps({str(leaf()): "yes"})
elif form == "ok":
    t = "ok"
else:
    raise SystemExit("unknown mode " + mode)
if fail:
    sys.stderr.write(t + "\n"); sys.exit(2)
print(t)
"""

PYTOOL = r"""
import logging, os, sys, warnings

def run(m, p, key):
    if m == "print":
        print("token " + key)
    elif m == "eprint":
        print("token " + key, file=sys.stderr)
    elif m == "log":
        logging.getLogger("vendor.client").warning("token %s", key)
    elif m == "warn":
        warnings.warn("deprecated token " + key)
    elif m == "fd1":
        os.write(1, ("token " + key + "\n").encode())
    elif m == "fd2":
        os.write(2, ("token " + key + "\n").encode())
    elif m == "exit":
        sys.exit("bad token " + key)
    elif m == "raise":
        raise RuntimeError("token rejected: " + key.upper())
    elif m == "nonjson":
        return {("k", key): 1}
    elif m == "bytes":
        return {"raw": key.encode("utf-16-le")}
    return {"ok": True}
"""

#: plan slug -> (tool, mode, path, secret, expected final status, extra action lines)
PLANS: dict[str, tuple[str, str, str, str, str, str]] = {
    # a secret held in an encoded form that a client decodes as ordinary use
    "pct-url": ("say", "urlpct-fail", "-", "PCT", "failed", ""),
    "k8s-b64": ("say", "b64d-fail", "-", "K8S", "failed", ""),
    "dcfg-auth": ("say", "dcfg-fail", "-", "DCFG", "failed", ""),
    "basic-hdr": ("say", "basicd-fail", "-", "BASICH", "failed", ""),
    "hex-decoded": ("say", "hexd-fail", "-", "HEXS", "failed", ""),
    "bearer-hdr": ("say", "bearer-fail", "-", "BEARER", "failed", ""),
    # credential texts in other shapes than round 109's
    "dot-comment": ("say", "dotc-fail", "DB_PASSWORD", "DOTC", "failed", ""),
    "libpq-kw": ("say", "libpq-fail", "password", "LIBPQ", "failed", ""),
    "jdbc-query": ("say", "jdbcq-fail", "password", "JDBC", "failed", ""),
    "aws-ini": ("say", "ini-fail", "aws_secret_access_key", "AWSINI", "failed", ""),
    "netrc-line": ("say", "netrc-fail", "-", "NETRC", "failed", ""),
    "pgpass-line": ("say", "pgpass-fail", "-", "PGPASS", "failed", ""),
    "xml-cfg": ("say", "xmlc-fail", "password", "XMLC", "failed", ""),
    # a URL secret's path or query token, as a client logs the request
    "hook-urllib3": ("say", "urllib3-fail", "-", "HOOK", "failed", ""),
    "hook-lastseg": ("say", "lastseg-fail", "-", "HOOK", "failed", ""),
    "qtok-param": ("say", "qtok-fail", "api_key", "QTOK", "failed", ""),
    "qtok-get": ("say", "qget-fail", "-", "QTOK", "failed", ""),
    # a secret that is a mapping's key
    "keymap-key": ("say", "key-fail", "-", "KEYMAP", "failed", ""),
    # codepages, normal forms
    "lat-l1hex": ("say", "l1hex-fail", "-", "LAT", "failed", ""),
    "lat-l1b64": ("say", "l1b64-fail", "-", "LAT", "failed", ""),
    "lat-l1b32": ("say", "l1b32-fail", "-", "LAT", "failed", ""),
    "lat-u8b64": ("say", "u8b64-fail", "-", "LAT", "failed", ""),
    "nfd-nfc": ("say", "nfc-fail", "-", "NFD", "failed", ""),
    "fw-nfkc": ("say", "nfkc-fail", "-", "FW", "failed", ""),
    # short secrets and short parts
    "short-plain": ("say", "plain-fail", "-", "SHORT", "failed", ""),
    "pin4-field": ("say", "partupper-fail", "pin", "PIN4", "failed", ""),
    # split across lines
    "plain-bscont": ("say", "bscont-fail", "-", "PLAIN", "failed", ""),
    "phrase-pprint": ("say", "pprint-fail", "-", "PHRASE", "failed", ""),
    # encodings of a part (round 109's parts) a reader decodes
    "mapb-b64": ("say", "partb64-fail", "password", "MAPB", "failed", ""),
    "mapb-hex": ("say", "parthex-fail", "password", "MAPB", "failed", ""),
    "mapb-pct": ("say", "partpct-fail", "password", "MAPB", "failed", ""),
    "mapb-upper": ("say", "partupper-fail", "password", "MAPB", "failed", ""),
    "mapb-jsonu": ("say", "partjsonu-fail", "password", "MAPB", "failed", ""),
    "mapb-html": ("say", "parthtml-fail", "password", "MAPB", "failed", ""),
    "mapb-key": ("say", "jsonkey", "password", "MAPB", "completed", ""),
    # a python tool's own prints, logs, exits and odd results
    "py-print": ("pyt", "print", "-", "PLAIN", "completed", ""),
    "py-eprint": ("pyt", "eprint", "-", "PLAIN", "completed", ""),
    "py-log": ("pyt", "log", "-", "PLAIN", "completed", ""),
    "py-warn": ("pyt", "warn", "-", "PLAIN", "completed", ""),
    "py-fd1": ("pyt", "fd1", "-", "PLAIN", "completed", ""),
    "py-fd2": ("pyt", "fd2", "-", "PLAIN", "completed", ""),
    "py-exit": ("pyt", "exit", "-", "PLAIN", "failed", ""),
    "py-raise": ("pyt", "raise", "-", "PLAIN", "failed", ""),
    "py-nonjson": ("pyt", "nonjson", "-", "PLAIN", "failed", ""),
    "py-bytes": ("pyt", "bytes", "-", "PLAIN", "failed", ""),
    # the secret as the program an exec tool names: the OS's error quotes it
    "prog-missing": ("prog", "ok", "-", "PLAIN", "failed", ""),
    "prog-missing-part": ("prog", "ok", "-", "MAPB", "failed", ""),
    # a refusal after resolution quoting the resolved value
    "schema-pattern": ("chkp", "ok", "-", "PLAIN", "failed", ""),
    "schema-maxlen": ("chkl", "ok", "-", "PLAIN", "failed", ""),
    "schema-enum": ("chke", "ok", "-", "PLAIN", "failed", ""),
    "schema-int": ("chki", "ok", "-", "NUM", "failed", ""),
    "schema-embed": ("chkp", "ok", "-", "PLAIN@id-", "failed", ""),
    "guard-matches": (
        "say",
        "ok",
        "-",
        "PLAIN@id-",
        "failed",
        '    guards: [{param: key, matches: "^[a-z]+$"}]\n',
    ),
    "guard-oneof": (
        "say",
        "ok",
        "-",
        "PLAIN@id-",
        "failed",
        "    guards: [{param: key, one_of: [alpha, beta]}]\n",
    ),
}

#: the values side: (variant, canonical twin), each a params ``n:`` form
VALUES: dict[str, tuple[str, str]] = {
    "underflow": ("1e-400", "0"),
    "neg-underflow": ("-1e-400", "0"),
    "neg-zero-exp": ("-0e5", "0"),
    "same-double": ("1.5e300", "15e299"),
    "int-key": ("{1: x}", '{"1": x}'),
    "bool-key": ("{true: x}", '{"true": x}'),
    "null-key": ("{null: x}", '{"null": x}'),
    "float-key": ("{1.0: x}", '{"1": x}'),
    "nfd-key": ('{"\\u00e9": 1}', '{"e\\u0301": 1}'),
    "tiny-subnormal": ("4.9e-324", "5e-324"),
}

REC2 = r"""
import os, sys
tag = sys.argv[1]
data = sys.stdin.buffer.read()
open(os.path.join(os.environ["VALS"], tag + ".json"), "wb").write(data)
print("{}")
"""


def _plan(slug: str, tool: str, mode: str, path: str, key: str, extra: str) -> str:
    pre = ""
    if "@" in key:
        key, pre = key.split("@")
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        f"available_tools: [{{name: {tool}}}]\nactions:\n"
        f"  - id: 1\n    tool: {tool}\n    why: w\n"
        f'    params: {{m: {mode}, p: "{path}", key: "{pre}$<secrets.{key}>"}}\n' + extra
    )


def _vplan(tag: str, form: str) -> str:
    return (
        f"plan:\n  name: {tag}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: rec2}]\nactions:\n"
        "  - id: 1\n    tool: rec2\n    why: w\n"
        f"    params:\n      tag: {tag}\n      n: {form}\n"
    )


def _vtags() -> dict[str, str]:
    tags: dict[str, str] = {}
    for name, (variant, twin) in VALUES.items():
        tags[f"v-{name}"] = variant
        tags[f"t-{name}"] = twin
    return tags


def _build(root: Path) -> Lab:
    (root / "say.py").write_text(SAY)
    (root / "rec2.py").write_text(REC2)
    (root / "pyt").mkdir()
    (root / "pyt" / "r110tool.py").write_text(PYTOOL)
    (root / "vals").mkdir()
    (root / "sec.yml").write_text(SECRETS_YAML)
    server, posts = notify_receiver()
    py, say, rec2 = (
        json.dumps(str(x)) for x in (sys.executable, root / "say.py", root / "rec2.py")
    )
    argv = f"[{py}, {say}, '{{m}}', '{{p}}']"
    lab = Lab(
        root / "lab",
        extra=(
            f"secrets: {{file: {root / 'sec.yml'}}}\n"
            f"python_path: [{json.dumps(str(root / 'pyt'))}]\n"
            f'notify: {{urls: ["http://127.0.0.1:{server.server_address[1]}/hook"], events: [fail, complete], retries: 0}}\n'
        ),
        tools=(
            f"say: {{kind: exec, argv: {argv}}}\n"
            'pyt: {kind: python, target: "r110tool:run"}\n'
            "prog: {kind: exec, argv: ['{key}', '{m}']}\n"
            f"chkp: {{kind: exec, argv: {argv}, params_schema: {{type: object, properties: {{key: {{type: string, pattern: '^[a-z]+$'}}}}}}}}\n"
            f"chkl: {{kind: exec, argv: {argv}, params_schema: {{type: object, properties: {{key: {{type: string, maxLength: 3}}}}}}}}\n"
            f"chke: {{kind: exec, argv: {argv}, params_schema: {{type: object, properties: {{key: {{enum: [alpha, beta]}}}}}}}}\n"
            f"chki: {{kind: exec, argv: {argv}, params_schema: {{type: object, properties: {{key: {{type: integer}}}}}}}}\n"
            f"rec2: {{kind: exec, argv: [{py}, {rec2}, '{{tag}}'], env: {{VALS: {json.dumps(str(root / 'vals'))}}}}}\n"
        ),
    )
    lab.extra_env = dict(ENV)  # type: ignore[attr-defined]
    for slug, (tool, mode, path, key, _, extra) in PLANS.items():
        lab.write(slug, _plan(slug, tool, mode, path, key, extra))
    for tag, form in _vtags().items():
        lab.write(tag, _vplan(tag, form))
    lab.commit("plans")
    cfg = str(lab.config)
    first = lab.run()
    for slug in [*PLANS, *_vtags()]:
        if "status: pending_approval" in lab.read(slug):
            lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    second = lab.run()
    got: dict[str, Any] = {"passlog": first.stdout + first.stderr + second.stdout + second.stderr}
    got["vals"] = {p.stem: p.read_text() for p in (root / "vals").glob("*.json")}
    hashes = lab.cli(
        "validate", "--json", "--config", cfg, *(str(lab.repo / "plans" / t) for t in _vtags())
    )
    got["hashes"] = hashes.stdout
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
    return shared(tmp_path_factory, "r110-secrets-atk110e", _build)


#: plan slug -> the encoded form its tool printed (a reader decodes it with ordinary tools)
ENCODED = {
    "lat-l1hex": ["50e4737377f67264377a78394b7134"],
    "lat-l1b64": ["UORzc3f2cmQ3Wng5S3E0"],
    "lat-l1b32": ["KDSHG43X6ZZGIN22PA4UW4JU"],
    "lat-u8b64": ["UMOkc3N3w7ZyZDdaeDlLcTQ="],
    "mapb-b64": ["TWI1V3E4WmsyWHY3VGIzTg=="],
    "mapb-hex": ["4d623557713", "5a6b3258763754623"],
    "mapb-pct": [],
    "mapb-upper": ["MB5WQ8ZK2XV7TB3N"],
    "mapb-jsonu": ["\\u004d\\u0062\\u0035\\u0057"],
    "mapb-html": ["&#x4d;&#x62;&#x35;&#x57;&#x71;"],
    "plain-bscont": ["Pl3Qw8Er\\\n5Ty2Ui7O", "Pl3Qw8Er", "5Ty2Ui7O"],
    "phrase-pprint": ["correct horse", "battery staple"],
    "pin4-field": ["8264"],
    "short-plain": ["Sh4r7"],
    "fw-nfkc": ["Fw4Kq7Zx9"],
}


def _needles(key: str) -> list[str]:
    found: list[str] = []
    for core in CORES[key]:
        found += [core] if len(core) < 8 else [core[i : i + 8] for i in range(len(core) - 7)]
    return list(dict.fromkeys(found))


def _said(got: dict[str, Any], slug: str) -> str:
    path = f"plans/{slug}"
    if slug.startswith("py-"):  # a python tool's own prints name no plan: the whole log
        text = got["passlog"]
    else:
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
VIDS = [f"val:{v}" for v in VALUES]


def _broke(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason=f"round 110, accepted (docs/threat-model.md, Accepted limits): {cls}: {what}",
    )


#: the classes kept as accepted limits (the others fixed the same session: r110secretparts)
CLASSES: dict[str, tuple[list[str], str]] = {
    "secret-as-key": (["keymap-key"], "a mapping secret's key is no part"),
    "pprint-wrap": (
        ["phrase-pprint"],
        "a secret pprint splits into adjacent quoted literals on lines is readable",
    ),
}
BROKEN: dict[str, Any] = {
    slug: _broke(cls, what) for cls, (slugs, what) in CLASSES.items() for slug in slugs
}


def _surfaces(got: dict[str, Any], slug: str, expected: str) -> dict[str, str]:
    """Every surface's text about ``slug``: the record (``git log -p`` of its folder, MCP
    ``log``, the journal), what is said (``status`` text/JSON, ``show``, MCP ``status``, the
    passes' log, its notify posts) and the page (``/api/plan/``, ``/plan/``, the index)."""
    history = got["history"][slug]
    assert "plangate: " in history, history[-800:]
    said = _said(got, slug) + _mstatus_row(got, slug)
    assert f"plans/{slug}" in said, said[-800:]
    posts = _posts(got, slug)
    assert f"plans/{slug}" in posts, got["posts"][-3:]
    page = got["pages"][slug]
    assert "E_" in page or expected == "completed", page[:800]
    return {
        "record": history + got["mcp"][slug] + got["journal"][slug],
        "said": said + posts,
        "page": page + got["pages"]["index"],
    }


@pytest.mark.parametrize("slug", cases(IDS, IDS, BROKEN))
def test_round110_secrets_atk110e(lab: Lab, slug: str) -> None:
    """No 8 characters in a row of the secret (or of the part a client uses, or the
    encoded form the tool printed) readable on any surface."""
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    _tool, _mode, _path, key, expected, _extra = PLANS[slug]
    needles = _needles(key.split("@")[0]) + ENCODED.get(slug, [])
    needles += [json.dumps(n)[1:-1] for n in needles if json.dumps(n)[1:-1] != n]
    assert got["rows"].get(f"plans/{slug}") == expected, got["rowtext"].get(f"plans/{slug}")
    leaks = {
        where: found
        for where, text in _surfaces(got, slug, expected).items()
        if (found := [n for n in needles if _readable(n, text)])
    }
    assert not leaks, leaks


#: a duration as the surfaces print it ("in 8264 ms", "duration_ms": 8264, "8264 ms"):
#: the controller's own measurement, which a short all-digit secret can equal by chance
#: under load (CI, stop 60: a run of 8.264 s read as PIN4's "8264")
_DURATION = re.compile(r'"duration_ms":\s*[0-9.]+|\b[0-9][0-9.]* ms\b|duration_ms=[0-9.]+')


def _readable(needle: str, text: str) -> bool:
    """``needle`` readable in ``text``; an all-digit needle only as its own number, outside
    the durations the controller measured."""
    if not needle.isdigit():
        return needle in text
    return re.search(rf"(?<![0-9]){needle}(?![0-9])", _DURATION.sub("", text)) is not None


VBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, VBROKEN))
def test_round110_values_atk110e(lab: Lab, vid: str) -> None:
    """Two plans whose ``n`` hashes alike reach the tool alike (its stdin, ``tag`` aside);
    or they hash apart, or the variant is refused."""
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    name = vid.split(":")[1]
    hashes: dict[str, str | None] = {}
    for line in got["hashes"].splitlines():
        with contextlib.suppress(ValueError):
            row = json.loads(line)
            for r in row if isinstance(row, list) else [row]:
                hashes[
                    Path(r["path"]).parent.name
                    if r["path"].endswith(".yml")
                    else Path(r["path"]).name
                ] = r.get("hash") if r.get("valid") else None
    v, t = hashes.get(f"v-{name}"), hashes.get(f"t-{name}")
    assert t is not None, (name, got["hashes"][:1500])
    if v is None or v != t:
        return  # refused, or hashed apart: nothing to compare
    sv = got["vals"].get(f"v-{name}", "").replace(f"v-{name}", "TAG")
    st = got["vals"].get(f"t-{name}", "").replace(f"t-{name}", "TAG")
    assert sv and st, (name, sorted(got["vals"]))
    assert sv == st, (name, sv, st)
