r"""Round 127, values and secrets (atk127e): "a value reaches the tool exactly as approved, and
a secret never leaves the controller in any form".

Labs (four, built once per module in parallel by ``build_all``; local mode; approver
``alice@example.com``; every pass ``plangate run --once``: pass 1 freezes, Alice approves
every plan, pass 2 runs it):

- ``lab``: ``secrets.file`` with A and PREA (a prefix of A, itself a secret), B and SUFB (a
  suffix of B), BIG (20 digits, past 2^53) and PI (more digits than a double), NFD (stored
  decomposed), NFC (stored composed), RTL (Hebrew then Latin), RGX (regex and YAML
  specials ``a.b*c+?(d)[e]{2}|^$x\1``) and WORD (``Pr0duct10n``, which a plan also writes as
  a literal). One exec tool ``pt`` (records its stdin, then prints its param ``s`` as ``mode``
  says), the same program as a check tool ``ck`` (``idempotent: true, risk: low``), and an
  http GET tool ``hx`` whose URL's port nothing listens on. Plans: one per error code a tool
  can trigger while holding a secret (``E_TOOL_OUTPUT_INVALID`` for a member named twice, a
  ``NaN``, BIG and PI as bare numbers, an unsafe integer under a key holding A, a lone
  surrogate after A, nesting past 100 under a key A; ``E_OUTPUT_MISSING`` for JSON and for
  plain text; ``E_TIMEOUT`` after printing A to stdout and stderr; ``E_TOOL_FAILED`` with A
  on stdout and with A across the 300-character cut of the last stderr line;
  ``E_VERIFY_FAILED`` without and with a polled check tool; ``E_PRECONDITION_FAILED``; a
  connection error quoting a URL whose path is an output that is NFD and whose query holds
  RTL and RGX), the substring pairs printed, NFD printed composed, NFC printed decomposed,
  RTL as is and with U+200F between its characters, RGX as is, a gate (``requires_approval``)
  whose params mix outputs and secrets (``pre-<output>-<PREA><SUFB>-post``, a list, the
  whole result), ``v-values`` (an output of every awkward kind handed on), ``v-unsafe``
  (2^53) and ``w-word``. Read per plan: ``git log -p --all``, ``status`` (text and JSON),
  ``show -v``, MCP ``log``, the page (``/plan/``, ``/api/plan/``, ``/api/``), its journal
  and the passes' log lines; once for the lab: ``check``, ``audit``, MCP ``status`` and
  ``wait``, and on a fresh clone
  without config ``audit --json``, ``status --json`` and ``show -v`` of every plan.
- ``mid``: a rotation INSIDE one run: action 1 prints ``$<secrets.ROT>`` (V1); action 2
  (``rw``, standing in for the operator at a known moment) copies a new secrets file over the
  old one (ROT V2, NEW added, GONE removed); actions 3-7 take ``$<secrets.ROT>``, KEEP,
  action 1's output, NEW and GONE (``on_failure: skip`` for the last two).
- ``poll``: the rotation between two polls of a ``verify`` tool that takes
  ``$<secrets.ROT>`` (the first poll rotates and does not hold; the second holds); then ROT
  and NEW directly.
- ``kill``: action 2 (idempotent) takes action 1's output (V1) and is in flight when the
  controller gets SIGKILL; the operator rotates ROT to V2; the next pass re-runs action 2
  from the journal, and action 3 takes ``$<secrets.ROT>``.

Ids:

- ``test_outcome_as_documented[*]`` (24): the plan froze, ended as planned with the code
  docs/errors.md gives (the gate plan waits at its gate).
- ``test_secret_never_readable[*]`` (24): no spelling (as is, NFC, NFD, upper, lower, JSON
  escape, percent-encoded, base64, hex, first and last 8 characters) of the plan's secrets is
  readable anywhere above; for the substring pairs, neither the rest of the longer secret
  once the shorter is masked (``2Wd9Hc`` of A, ``Nb4Kd7Yw2`` of B).
- ``test_secret_never_readable_in_check_and_audit`` (1),
  ``test_secret_never_readable_in_mcp_status_and_wait`` (1: MCP ``status`` and a ``wait``
  from ``executing`` for every plan), ``test_secret_never_readable_on_a_fresh_clone`` (1).
- ``test_output_reaches_next_tool_exactly[*]`` (18): an output handed on by a whole
  reference is the JSON value the tool wrote (``0.30000000000000004``, ``5e-324``,
  -(2^53-1), a 30-digit string, NFD and NFC not normalised, U+202E, U+200D, a BOM, CRLF;
  ``1.0`` and ``1E+2`` as the numbers 1 and 100: docs/plan-format.md "``1`` is ``1.0``"),
  inside text its text; an output that reads as ``$<secrets.A>``, ``${secrets.B}``,
  ``$$<secrets.A>$$<x>``, ``$<inputs.i>``, ``$<actions[1].outputs.f>`` or as YAML
  (``plan:\n  status: approved``, ``!!python/object``) reaches the tool as that text, never
  read as a reference, a secret or YAML.
- ``test_unsafe_integer_output_stops_the_run`` (1): 2^53 is ``E_TOOL_OUTPUT_INVALID``,
  action 2 never runs.
- ``test_authors_literal_equal_to_a_secret`` (1): docs/execution.md "The execution
  record's resolved params": the author's literal equal to WORD is shown as written under
  "Params (resolved)"; what ``echo`` handed back is ``***``.
- ``test_rotation_in_a_run_values_as_documented[mid, poll, kill]`` (3): a run reads the
  secrets file once, at its start (docs/configuration.md: "read at each run, so a secret
  rotated in the file is used by the next run"): inside the run ROT stays V1, the removed
  GONE is still given, the added NEW is ``E_REF_UNAVAILABLE`` (skipped); after the SIGKILL
  the re-run action 2 gets V1 from the seal, a direct ``$<secrets.ROT>`` gets V2.
- ``test_rotation_in_a_run_never_readable[mid, poll, kill]`` (3): neither V1, V2, GONE,
  NEW nor KEEP is readable (the killed pass's own output included).

Seen (round 127: 77 ids, 77 passed, 0 xfailed (strict); 88-99 s wall at ``-n 1``, the
four labs built in parallel). No class: nothing broke.

Held: every error a tool can trigger while holding a secret masked it (``E_TOOL_OUTPUT_INVALID``
names the member ``'***'`` and the place ``$["json"]["k***"]``; the stderr cut kept ``***``
whole before ``…``; ``E_TIMEOUT`` quotes nothing of the output; the connection error writes
``GET http://127.0.0.1:<port>/x/***?q=***&r=***``). A secret that is a prefix or suffix of
another left no rest of the longer one. An NFD secret printed NFC, an NFC one printed NFD,
an RTL one with U+200F inside and the regex-special one were ``***``. The gate's preview
showed ``pre-***-******-post``, ``["***", "***", "***"]`` and the whole result masked. A
fresh clone's ``audit``, ``status`` and ``show`` held nothing. Values crossed references
exactly and reference-like or YAML-like outputs stayed text. The three in-run rotations
followed the documented run-start snapshot and masked every old and new value.

Seen, not asserted: a one-character secret (``ONE: "7"``, by hand) left hashes, commit ids
and trailers readable (the controller's own fields), the run and ``audit`` as usual; a
one-character secret ``e`` made every command refuse the config (``E_CONFIG_INVALID``: the
catalog names ``echo`` and ``rec`` hold a secret's value), its message printed with every
``e`` as ``***`` (``/tmp/atk12******-x/...``, ``r***m***dy``): the documented rules
(docs/execution.md "Very short secret values redact every occurrence of that text";
threat-model round 71: a secret is never catalog material), unreadable but fail closed. The
``E_TOOL_OUTPUT_INVALID`` message for BIG says ``(20 digits)``: the length of a
secret-bearing number, not its value.

Not tried (time): a rotation with a running daemon between a verify's polls (here the
one-shot pass: the run's snapshot applies), secrets in converted-format plans, nested plans'
inputs at a gate, HTTP response headers from a later tool whose URL an output filled.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import unicodedata
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, build_all, until
from mcpkit import answers
from test_round126_secrets_atk126e import _readers

PY = sys.executable

#: A and its prefix PREA (itself a secret); B and its suffix SUFB (itself a secret)
A = "Zq8Lm3Xv7Tp2Wd9Hc"
PREA = "Zq8Lm3Xv7Tp"
B = "Nb4Kd7Yw2Qs5Fj8Rx"
SUFB = "Qs5Fj8Rx"
#: digit strings a tool prints as a bare JSON number (beyond 2^53; more digits than a double)
BIG = "98765432109876543210"
PI = "3.14159265358979323846"
#: Unicode: stored NFD (a tool prints it NFC), stored NFC (printed NFD), Hebrew + Latin
#: (printed with U+200F between characters), regex/YAML specials
NFD = unicodedata.normalize("NFD", "Amélie7Kx9Qzé")
NFC = unicodedata.normalize("NFC", "Zoë8Wq3Lp5Tñ")
RTL = "\u05e9\u05dc\u05d5\u05ddKx7Qz9Lp"
RGX = "a.b*c+?(d)[e]{2}|^$x\\1"
#: a common-looking word the plan's author also writes as a literal
WORD = "Pr0duct10n"

SECRETS = {
    "A": A,
    "PREA": PREA,
    "B": B,
    "SUFB": SUFB,
    "BIG": BIG,
    "PI": PI,
    "NFD": NFD,
    "NFC": NFC,
    "RTL": RTL,
    "RGX": RGX,
    "WORD": WORD,
}

#: the exec tool (also the check tool ``ck``): records its stdin to REC_LOG, then prints the
#: param ``s`` as ``mode`` says
TOOL = r"""
import json, os, sys, time, unicodedata
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\n")
p = json.loads(data) if data.strip() else {}
s = p.get("s", "")
s = s if isinstance(s, str) else json.dumps(s)
m = p.get("mode", "raw")
w = sys.stdout.write
if m == "raw":
    w(json.dumps({"x": s}))
elif m == "nfc":
    w(json.dumps({"x": unicodedata.normalize("NFC", s)}, ensure_ascii=False))
elif m == "nfd":
    w(json.dumps({"x": unicodedata.normalize("NFD", s)}, ensure_ascii=False))
elif m == "rlm":
    w(json.dumps({"x": "\u200f".join(s)}, ensure_ascii=False))
elif m == "dupkey":
    w('{"%s": 1, "%s": 2}' % (s, s))
elif m == "nan":
    w('{"%s": NaN}' % s)
elif m == "num":
    w('{"x": %s}' % s)
elif m == "numkey":
    w('{"k%s": 9007199254740993}' % s)
elif m == "surrogate":
    w('{"x": "%s\\ud800"}' % s)
elif m == "deep":
    w('{"%s": ' % s + "[" * 120 + "]" * 120 + "}")
elif m == "timeout":
    w("working " + s + "\n")
    sys.stdout.flush()
    sys.stderr.write("still " + s + "\n")
    sys.stderr.flush()
    time.sleep(30)
elif m == "exit":
    w("out " + s + "\n")
    sys.stderr.write("failed\n")
    sys.exit(3)
elif m == "cut":
    sys.stderr.write("A" * 290 + s + "B" * 40 + "\n")
    sys.exit(3)
elif m == "plain":
    w("the token is " + s + "\n")
elif m == "slow":
    flag = os.path.join(os.environ["FLAGS"], "slow")
    if not os.path.exists(flag):
        with open(flag, "w") as f:
            f.write(str(os.getpid()))
        time.sleep(120)
    w(json.dumps({"x": s}))
elif m == "values":
    w(p["json"] if "json" in p else open(os.environ["VALUES"], encoding="utf-8").read())
"""


def _plan(slug: str, actions: str, tools: str = "pt", pre: str = "") -> str:
    avail = ", ".join(f"{{name: {t.strip()}}}" for t in tools.split(","))
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        f"{pre}available_tools: [{avail}]\nactions:\n{actions}"
    )


def _one(slug: str, sec: str, mode: str, more: str = "", out: str = "x") -> str:
    return _plan(
        slug,
        f"  - id: 1\n    tool: pt\n    why: w\n"
        f'    params: {{tag: {slug}, s: "$<secrets.{sec}>", mode: {mode}}}\n'
        f"    outputs: [{{name: o, path: $.json.{out}}}]\n{more}",
    )


#: plans whose one action hands a secret to ``pt`` that prints it: id -> (plan, the secrets
#: whose forms must not be readable, the final status, the action's error code)
ERR_PLANS: dict[str, tuple[str, list[str], str, str | None]] = {
    "dupkey": (_one("e-dupkey", "A", "dupkey"), [A], "failed", "E_TOOL_OUTPUT_INVALID"),
    "nan": (_one("e-nan", "A", "nan"), [A], "failed", "E_TOOL_OUTPUT_INVALID"),
    "bignum": (_one("e-bignum", "BIG", "num"), [BIG], "failed", "E_TOOL_OUTPUT_INVALID"),
    "inexact": (_one("e-inexact", "PI", "num"), [PI], "failed", "E_TOOL_OUTPUT_INVALID"),
    "numkey": (_one("e-numkey", "A", "numkey"), [A], "failed", "E_TOOL_OUTPUT_INVALID"),
    "surrogate": (_one("e-surrogate", "A", "surrogate"), [A], "failed", "E_TOOL_OUTPUT_INVALID"),
    "deep": (_one("e-deep", "A", "deep"), [A], "failed", "E_TOOL_OUTPUT_INVALID"),
    "missing": (_one("e-missing", "A", "raw", out="y"), [A], "failed", "E_OUTPUT_MISSING"),
    "timeout": (_one("e-timeout", "A", "timeout", "    timeout: 2\n"), [A], "failed", "E_TIMEOUT"),
    "exit": (_one("e-exit", "A", "exit"), [A], "failed", "E_TOOL_FAILED"),
    "cut": (_one("e-cut", "A", "cut"), [A], "failed", "E_TOOL_FAILED"),
    "plain": (_one("e-plain", "A", "plain", out="x"), [A], "failed", "E_OUTPUT_MISSING"),
    "verify": (
        _one("e-verify", "A", "raw", "    verify: {expect: {path: $.json.x, equals: nope}}\n"),
        [A],
        "failed",
        "E_VERIFY_FAILED",
    ),
    "precondition": (
        _plan(
            "e-precondition",
            "  - id: 1\n    tool: pt\n    why: w\n    params: {tag: e-precondition, s: a}\n"
            '    preconditions: [{tool: ck, params: {s: "$<secrets.A>", mode: raw}, '
            "expect: {path: $.json.x, equals: nope}}]\n",
            tools="pt, ck",
        ),
        [A],
        "failed",
        "E_PRECONDITION_FAILED",
    ),
    "verify-tool": (
        _plan(
            "e-verify-tool",
            "  - id: 1\n    tool: pt\n    why: w\n    params: {tag: e-verify-tool, s: a}\n"
            '    verify: {tool: ck, params: {s: "$<secrets.A>", mode: raw}, '
            "expect: {path: $.json.x, equals: nope}, timeout: 2, interval: 1}\n",
            tools="pt, ck",
        ),
        [A],
        "failed",
        "E_VERIFY_FAILED",
    ),
    # substrings of each other: the longer secret printed, the shorter one a secret too
    "sub-prefix": (_one("s-sub-prefix", "A", "raw"), [A], "completed", None),
    "sub-suffix": (_one("s-sub-suffix", "B", "raw"), [B], "completed", None),
    # Unicode: a stored NFD secret printed NFC, NFC printed NFD, RTL with U+200F inside
    "nfd-as-nfc": (_one("u-nfd-as-nfc", "NFD", "nfc"), [NFD], "completed", None),
    "nfc-as-nfd": (_one("u-nfc-as-nfd", "NFC", "nfd"), [NFC], "completed", None),
    "rtl-raw": (_one("u-rtl-raw", "RTL", "raw"), [RTL], "completed", None),
    "rtl-rlm": (_one("u-rtl-rlm", "RTL", "rlm"), [RTL], "completed", None),
    "regex": (_one("u-regex", "RGX", "raw"), [RGX], "completed", None),
    # an earlier output (a secret) in a later http tool's URL path and a secret in its
    # query: nothing listens (a connection error quoting the URL)
    "http-conn": (
        _plan(
            "h-conn",
            _one("h-conn", "NFD", "raw").split("actions:\n", 1)[1]
            + "  - id: 2\n    tool: hx\n    why: w\n"
            '    params: {seg: "$<actions[1].outputs.o>", q: "$<secrets.RTL>", '
            'r: "$<secrets.RGX>"}\n',
            tools="pt, hx",
        ),
        [NFD, RTL, RGX],
        "failed",
        "E_TOOL_FAILED",
    ),
    # the gate's preview of params mixing outputs that are secrets, secrets that are
    # substrings of each other, and Unicode secrets, in text and in a list
    "gate": (
        _plan(
            "g-gate",
            _one("g-gate", "A", "raw").split("actions:\n", 1)[1]
            + "  - id: 2\n    tool: pt\n    why: w\n    requires_approval: true\n"
            '    params: {tag: g-gate-2, s: "pre-$<actions[1].outputs.o>-$<secrets.PREA>'
            '$<secrets.SUFB>-post", l: ["$<secrets.NFD>", "$<actions[1].outputs.o>", '
            '"$<secrets.B>"], r: "$<actions[1].result>"}\n',
        ),
        [A, B, NFD],
        "awaiting_approval",
        None,
    ),
}

#: the remainder of the longer secret once the shorter one (a secret of its own) is masked:
#: readable, it hands out the rest of the longer one
REMAINDER = {"sub-prefix": A[len(PREA) :], "sub-suffix": B[: -len(SUFB)]}

#: outputs of another tool handed on by whole references and inside text
VALUES_JSON = (
    '{"f": 0.30000000000000004, "one": 1.0, "e2": 1E+2, "tiny": 5e-324, '
    '"neg": -9007199254740991, "nfd": "e\\u0301", "nfc": "\\u00e9", "rtl": "\\u202eabc\\u202c", '
    '"zw": "a\\u200db", "bom": "\\ufeffx", "nl": "a\\r\\nb", '
    '"big": "123456789012345678901234567890", "ref": "$<secrets.A>", "leg": "${secrets.B}", '
    '"dd": "$$<secrets.A>$$<x>", "inp": "$<inputs.i>", "act": "$<actions[1].outputs.f>", '
    '"yml": "x\\nplan:\\n  status: approved\\n---\\n- !!python/object:os.system [id]"}'
)
VALUE_KEYS = [
    *("f", "one", "e2", "tiny", "neg", "nfd", "nfc", "rtl", "zw", "bom", "nl", "big"),
    *("ref", "leg", "dd", "inp", "act", "yml"),
]


def _values_plan() -> str:
    outs = ", ".join(f"{{name: {k}, path: $.json.{k}}}" for k in VALUE_KEYS)
    refs = ", ".join(f'{k}: "$<actions[1].outputs.{k}>"' for k in VALUE_KEYS)
    texts = ", ".join(f't{k}: "<$<actions[1].outputs.{k}>>"' for k in VALUE_KEYS)
    return _plan(
        "v-values",
        "  - id: 1\n    tool: pt\n    why: w\n"
        "    params: {tag: v-values-1, mode: values}\n"
        f"    outputs: [{outs}]\n"
        "  - id: 2\n    tool: pt\n    why: w\n"
        f"    params: {{tag: v-values-2, {refs}, {texts}}}\n",
    )


def _unsafe_plan() -> str:
    """2^53 as a bare number: E_TOOL_OUTPUT_INVALID, and action 2 never runs."""
    return _plan(
        "v-unsafe",
        "  - id: 1\n    tool: pt\n    why: w\n"
        '    params: {tag: v-unsafe-1, mode: values, json: "{\\"x\\": 9007199254740992}"}\n'
        "    outputs: [{name: x, path: $.json.x}]\n"
        "  - id: 2\n    tool: pt\n    why: w\n"
        '    params: {tag: v-unsafe-2, s: "$<actions[1].outputs.x>"}\n',
    )


def _word_plan() -> str:
    """The author writes WORD as a literal; echo hands it back (an output)."""
    return _plan(
        "w-word",
        f"  - id: 1\n    tool: echo\n    why: w\n    params: {{note: {WORD}}}\n"
        "    outputs: [{name: n, path: $.note}]\n",
        tools="echo",
    )


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _log(lab: Lab, slug: str) -> str:
    path = lab.repo / "plans" / slug / "EXECUTION_LOG.md"
    return path.read_text() if path.exists() else ""


def build(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.py").write_text(TOOL)
    sec = root / "sec.yml"
    sec.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in SECRETS.items()))
    argv = json.dumps([PY, str(root / "t.py")])
    values = root / "values.json"
    values.write_text(VALUES_JSON)
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {sec}}}\n",
        tools=f"pt: {{kind: exec, argv: {argv}, env: {{VALUES: {json.dumps(str(values))}}}}}\n"
        f"ck: {{kind: exec, argv: {argv}, idempotent: true, risk: low}}\n"
        f'hx: {{kind: http, method: GET, url: "http://127.0.0.1:{_closed_port()}/x/{{seg}}"}}\n',
    )
    slugs: dict[str, str] = {}
    for vid, (text, _v, _f, _c) in ERR_PLANS.items():
        slug = text.split("name: ", 1)[1].split("\n", 1)[0]
        lab.write(slug, text)
        slugs[vid] = slug
    lab.write("v-values", _values_plan())
    lab.write("v-unsafe", _unsafe_plan())
    lab.write("w-word", _word_plan())
    lab.commit("plans")
    passes = [lab.run().stderr]
    every = [*slugs.values(), "v-values", "v-unsafe", "w-word"]
    frozen = {s: lab.plan(s)["plan"]["status"] for s in every}
    for slug in every:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    passes.append(lab.run().stderr)
    calls = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    check = lab.cli("check", "--config", str(lab.config), cwd=lab.repo)
    audit = lab.cli("audit", cwd=lab.repo)
    # a fresh clone, no config: what anyone who reads the repository gets from the CLI
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    fresh = [lab.cli("audit", "--json", cwd=clone), lab.cli("status", "--json", cwd=clone)]
    fresh += [lab.cli("show", "-v", f"plans/{s}", cwd=clone) for s in slugs.values()]
    # MCP status (every row) and wait (each plan, from the status it had when frozen)
    mcp = answers(
        lab,
        [("status", {})]
        + [("wait", {"path": f"plans/{s}", "timeout": 0, "status": "executing"}) for s in every],
        config=lab.config,
    )
    return {
        "slugs": slugs,
        "frozen": frozen,
        "final": {s: lab.plan(s)["plan"]["status"] for s in every},
        "errors": {
            s: [
                (a.get("error") or {}).get("code")
                for a in (lab.plan(s).get("execution") or {}).get("actions") or []
            ]
            for s in every
        },
        "calls": calls,
        "read": _readers(lab, every, passes),
        "extra": check.stdout + check.stderr + audit.stdout + audit.stderr,
        "fresh": "".join(r.stdout + r.stderr for r in fresh),
        "mcp": json.dumps(mcp, ensure_ascii=False),
        "log": {s: _log(lab, s) for s in every},
    }


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    got = build_all(
        tmp_path_factory.mktemp("r127e"),
        {
            "lab": build,
            "mid": lambda r: build_rot(r, "r-mid", MID_PLAN),
            "poll": lambda r: build_rot(r, "r-poll", POLL_PLAN),
            "kill": build_kill,
        },
    ).got  # type: ignore[attr-defined]
    return {**got["lab"], "mid": got["mid"], "poll": got["poll"], "kill": got["kill"]}


def _forms(value: str) -> list[str]:
    raw = value.encode()
    out = [
        value,
        unicodedata.normalize("NFC", value),
        unicodedata.normalize("NFD", value),
        value.upper(),
        value.lower(),
        json.dumps(value)[1:-1],
        urllib.parse.quote(value, safe=""),
        base64.b64encode(raw).decode(),
        raw.hex(),
    ]
    if len(value) >= 12:
        out += [value[:8], value[-8:]]
    return [x for x in dict.fromkeys(out) if len(x) >= 6]


def _leaks(read: dict[str, str], values: list[str]) -> list[str]:
    return [
        f"{reader}: {form!r}"
        for reader, text in read.items()
        for value in values
        for form in _forms(value)
        if form in text
    ]


def _call(calls: list[dict[str, Any]], tag: str) -> dict[str, Any]:
    mine = [c for c in calls if json.loads(c["stdin"] or "{}").get("tag") == tag]
    assert mine, f"{tag} was never called"
    return mine[-1]


@pytest.mark.parametrize("vid", list(ERR_PLANS))
def test_outcome_as_documented(labs: dict[str, Any], vid: str) -> None:
    slug = labs["slugs"][vid]
    _t, _v, final, code = ERR_PLANS[vid]
    assert labs["frozen"][slug] == "pending_approval", labs["frozen"]
    assert labs["final"][slug] == final, (labs["final"][slug], labs["errors"][slug])
    assert labs["errors"][slug][-1] == code, labs["errors"][slug]


@pytest.mark.parametrize("vid", list(ERR_PLANS))
def test_secret_never_readable(labs: dict[str, Any], vid: str) -> None:
    slug = labs["slugs"][vid]
    leaks = _leaks(labs["read"][slug], ERR_PLANS[vid][1])
    rest = REMAINDER.get(vid)
    if rest:
        leaks += [f"{r}: remainder {rest!r}" for r, t in labs["read"][slug].items() if rest in t]
    assert not leaks, leaks


def test_secret_never_readable_in_check_and_audit(labs: dict[str, Any]) -> None:
    every = [v for vid in ERR_PLANS for v in ERR_PLANS[vid][1]]
    assert not _leaks({"check+audit": labs["extra"]}, every)


def test_secret_never_readable_in_mcp_status_and_wait(labs: dict[str, Any]) -> None:
    """MCP ``status`` (every row) and ``wait`` of every plan (its outcome's answer)."""
    every = [v for vid in ERR_PLANS for v in ERR_PLANS[vid][1]]
    assert "E_TOOL_OUTPUT_INVALID" in labs["mcp"] or "failed" in labs["mcp"], labs["mcp"][:500]
    assert not _leaks({"mcp": labs["mcp"]}, every)


def test_secret_never_readable_on_a_fresh_clone(labs: dict[str, Any]) -> None:
    """``audit --json``, ``status --json`` and ``show -v`` of every plan in a fresh clone with
    no config (whoever reads the repository)."""
    every = [v for vid in ERR_PLANS for v in ERR_PLANS[vid][1]]
    assert "E_TOOL_OUTPUT_INVALID" in labs["fresh"] or "plans/e-" in labs["fresh"]
    assert not _leaks({"fresh clone": labs["fresh"]}, every)


#: what action 2 of ``v-values`` must get: each output as the tool wrote it (a whole
#: reference keeps its JSON value; inside text, its JSON text: a string as is)
VALUES_WANT = json.loads(VALUES_JSON)


@pytest.mark.parametrize("key", VALUE_KEYS)
def test_output_reaches_next_tool_exactly(labs: dict[str, Any], key: str) -> None:
    """A tool's output handed on by ``$<actions[1].outputs.k>`` alone is the same JSON value
    (float digits, 5e-324, -(2^53-1), NFD/NFC, RTL and zero-width marks, a BOM, CRLF unchanged,
    no normalisation), and inside text its text."""
    assert labs["final"]["v-values"] == "completed", labs["errors"]["v-values"]
    got = json.loads(_call(labs["calls"], "v-values-2")["stdin"])
    want = VALUES_WANT[key]
    assert (got[key] == want and type(got[key]) is type(want)) or (
        key in ("one", "e2") and got[key] == want
    ), (got[key], want)
    text = want if isinstance(want, str) else json.dumps(got[key])
    assert got[f"t{key}"] == f"<{text}>", got[f"t{key}"]


def test_unsafe_integer_output_stops_the_run(labs: dict[str, Any]) -> None:
    """docs/errors.md E_TOOL_OUTPUT_INVALID: 2^53 is refused, nothing of it used, action 2
    never runs."""
    assert labs["final"]["v-unsafe"] == "failed"
    assert labs["errors"]["v-unsafe"][0] == "E_TOOL_OUTPUT_INVALID"
    assert not [c for c in labs["calls"] if '"v-unsafe-2"' in c["stdin"]]


def test_authors_literal_equal_to_a_secret(labs: dict[str, Any]) -> None:
    """docs/execution.md: the plan's literal equal to a secret is shown as written under
    "Params (resolved)"; what the tool (echo) handed back is the controller's material,
    ``***``; the commit messages redact everything."""
    log = labs["log"]["w-word"]
    assert labs["final"]["w-word"] == "completed"
    params, _, result = log.partition("Result")
    assert f'"note": "{WORD}"' in params, log
    assert WORD not in result and '"note": "***"' in result, log


# -- a rotation inside one run (the secrets file rewritten between two actions, and between
# two polls of a verify tool) ------------------------------------------------------------------
V1, V2 = "Rw1Hq7Zt3Kp9Lm5Xb", "Rw2Jd4Yc8Nf6Tq2Vs"
GONE, NEW, KEEP = "Gq6Mz1Xr8Wp4Kd7Hn", "Nw3Bt9Lc5Qv2Zj8Rm", "Kx5Pn2Wd8Tz4Lq9Fb"
ROTATED = [V1, V2, GONE, NEW, KEEP]

#: ``rw`` stands in for the operator: it copies the rotated file over the secrets file at a
#: known point of the run (exit 0, prints ``{}``); ``ck`` polled: the first poll rotates and
#: does not hold, the second holds
RW = r"""
import json, os, shutil, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\n")
p = json.loads(data) if data.strip() else {}
if p.get("mode") == "poll":
    flag = os.path.join(os.environ["FLAGS"], "polled")
    first = not os.path.exists(flag)
    if first:
        open(flag, "w").close()
        shutil.copy(os.environ["SEC2"], os.environ["SEC"])
    print(json.dumps({"x": p.get("s", ""), "ok": not first}))
else:
    shutil.copy(os.environ["SEC2"], os.environ["SEC"])
    print("{}")
"""


def _pt(n: int, tag: str, s: str, more: str = "") -> str:
    return f'  - id: {n}\n    tool: pt\n    why: w\n    params: {{tag: {tag}, s: "{s}"}}\n{more}'


MID_PLAN = _plan(
    "r-mid",
    _pt(1, "m1", "$<secrets.ROT>", "    outputs: [{name: o, path: $.json.x}]\n")
    + "  - id: 2\n    tool: rw\n    why: w\n    params: {tag: m2}\n"
    + _pt(3, "m3", "$<secrets.ROT>")
    + _pt(4, "m4", "$<secrets.KEEP>")
    + _pt(5, "m5", "$<actions[1].outputs.o>")
    + _pt(6, "m6", "$<secrets.NEW>", "    on_failure: skip\n")
    + _pt(7, "m7", "$<secrets.GONE>", "    on_failure: skip\n"),
    tools="pt, rw",
)
POLL_PLAN = _plan(
    "r-poll",
    _pt(1, "p1", "a")
    + '    verify: {tool: ck, params: {tag: p1v, s: "$<secrets.ROT>", mode: poll}, '
    "expect: {path: $.json.ok, equals: true}, timeout: 30, interval: 1}\n"
    + _pt(2, "p2", "$<secrets.ROT>")
    + _pt(3, "p3", "$<secrets.NEW>", "    on_failure: skip\n"),
    tools="pt, ck",
)


def build_rot(root: Path, slug: str, text: str) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.py").write_text(TOOL)
    (root / "rw.py").write_text(RW)
    (root / "flags").mkdir()
    sec, sec2 = root / "sec.yml", root / "sec2.yml"
    sec.write_text(f"ROT: {V1}\nGONE: {GONE}\nKEEP: {KEEP}\n")
    sec2.write_text(f"ROT: {V2}\nNEW: {NEW}\nKEEP: {KEEP}\n")
    env = json.dumps({"SEC": str(sec), "SEC2": str(sec2), "FLAGS": str(root / "flags")})
    rw = json.dumps([PY, str(root / "rw.py")])
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {sec}}}\n",
        tools=f"pt: {{kind: exec, argv: {json.dumps([PY, str(root / 't.py')])}}}\n"
        f"rw: {{kind: exec, argv: {rw}, env: {env}}}\n"
        f"ck: {{kind: exec, argv: {rw}, env: {env}, idempotent: true, risk: low}}\n",
    )
    lab.write(slug, text)
    lab.commit("plans")
    passes = [lab.run().stderr]
    frozen = lab.plan(slug)["plan"]["status"]
    lab.approve(slug)
    passes.append(lab.run().stderr)
    calls = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    acts = (lab.plan(slug).get("execution") or {}).get("actions") or []
    return {
        "frozen": frozen,
        "final": lab.plan(slug)["plan"]["status"],
        "actions": [(a.get("status"), (a.get("error") or {}).get("code")) for a in acts],
        "calls": calls,
        "read": _readers(lab, [slug], passes)[slug],
    }


KILL_PLAN = _plan(
    "r-kill",
    _pt(1, "k1", "$<secrets.ROT>", "    outputs: [{name: o, path: $.json.x}]\n")
    + '  - id: 2\n    tool: sl\n    why: w\n    params: {tag: k2, s: "$<actions[1].outputs.o>", '
    "mode: slow}\n" + _pt(3, "k3", "$<secrets.ROT>"),
    tools="pt, sl",
)


def build_kill(root: Path) -> dict[str, Any]:
    """Action 2 (idempotent) is in flight when the controller is SIGKILLed; the operator
    rotates ROT; the next pass re-runs action 2 from the journal."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.py").write_text(TOOL)
    (root / "flags").mkdir()
    sec = root / "sec.yml"
    sec.write_text(f"ROT: {V1}\nKEEP: {KEEP}\n")
    argv = json.dumps([PY, str(root / "t.py")])
    flags = json.dumps({"FLAGS": str(root / "flags")})
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {sec}}}\n",
        tools=f"pt: {{kind: exec, argv: {argv}}}\n"
        f"sl: {{kind: exec, argv: {argv}, env: {flags}, idempotent: true}}\n",
    )
    lab.write("r-kill", KILL_PLAN)
    lab.commit("plans")
    passes = [lab.run().stderr]
    frozen = lab.plan("r-kill")["plan"]["status"]
    lab.approve("r-kill")
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    out = root / "killed.log"
    with open(out, "w") as fh:
        proc = subprocess.Popen(
            [PY, "-m", "controller", "run", "--once", "--config", str(lab.config)],
            cwd=lab.root,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
        flag = root / "flags" / "slow"
        in_flight = until(lambda: flag.exists() and flag.read_text().strip() != "", 120)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    if in_flight:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(flag.read_text()), signal.SIGKILL)
    sec.write_text(f"ROT: {V2}\nKEEP: {KEEP}\n")
    passes.append(out.read_text())
    passes.append(lab.run(take_over=False, check=False).stderr)
    calls = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    acts = (lab.plan("r-kill").get("execution") or {}).get("actions") or []
    return {
        "in_flight": in_flight,
        "frozen": frozen,
        "final": lab.plan("r-kill")["plan"]["status"],
        "actions": [(a.get("status"), (a.get("error") or {}).get("code")) for a in acts],
        "calls": calls,
        "passes": passes,
        "read": _readers(lab, ["r-kill"], passes)["r-kill"],
    }


#: what each tool call of the in-run rotations got: the run's values are read when the run
#: starts (docs/configuration.md: "read at each run, so a secret rotated in the file is used
#: by the next run"); an output handed on is what the tool returned; after a SIGKILL the next
#: pass is a new run: a direct ``$<secrets.ROT>`` gets the new value
IN_RUN_CALLS = {
    "mid": [("m1", V1), ("m2", None), ("m3", V1), ("m4", KEEP), ("m5", V1), ("m7", GONE)],
    "poll": [("p1", "a"), ("p1v", V1), ("p1v", V1), ("p2", V1)],
    "kill": [("k1", V1), ("k2", V1), ("k2", V1), ("k3", V2)],
}
IN_RUN_ACTIONS = {
    "mid": [("succeeded", None)] * 5 + [("skipped", "E_REF_UNAVAILABLE"), ("succeeded", None)],
    "poll": [("succeeded", None)] * 2 + [("skipped", "E_REF_UNAVAILABLE")],
    "kill": [("succeeded", None)] * 3,
}


@pytest.mark.parametrize("key", list(IN_RUN_CALLS))
def test_rotation_in_a_run_values_as_documented(labs: dict[str, Any], key: str) -> None:
    got = labs[key]
    assert got.get("in_flight", True), "action 2 never started before the SIGKILL"
    assert got["frozen"] == "pending_approval"
    assert got["final"] == "completed", got["actions"]
    assert got["actions"] == IN_RUN_ACTIONS[key]
    seen = [(json.loads(c["stdin"])["tag"], json.loads(c["stdin"]).get("s")) for c in got["calls"]]
    assert seen == IN_RUN_CALLS[key]


@pytest.mark.parametrize("key", list(IN_RUN_CALLS))
def test_rotation_in_a_run_never_readable(labs: dict[str, Any], key: str) -> None:
    """No value ROT held before or after the rotation, nor GONE, NEW or KEEP, is readable in
    anything written or served about the plan (git history, status, show -v, MCP log, the
    page and /api/, the journal, the passes' log lines, the killed pass's own output)."""
    assert not _leaks(labs[key]["read"], ROTATED)
