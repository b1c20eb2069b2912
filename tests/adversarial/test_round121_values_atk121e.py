r"""Round 121, values (atk121e): "what a reviewer approved is exactly what reaches the tool,
and no secret is ever written anywhere a person or agent can read it".

Lab (two, built once per module in two threads under the ``shared`` lock; local mode;
approvers ``alice@example.com``, ``*@ops.example.com``; ``secrets.file`` with TOK
(``Tk7Hq2Zp9Xw4Lm6Vb``), SPEC (``Sp3<Zk&9"Wq>4'Xm/8+Vn``) and PHRASE (``Ph7 correct horse
battery Zq4``); config ``limits.max_params_bytes: 4000``). Lab ``a`` holds every plan, lab
``b`` only the ``v-*`` plans in their second spelling. Exec tools (one script, each call
appended to ``ran.log``: argv and stdin, the ground truth): ``rec`` (advkit), ``emit``
(prints its ``out`` param, ``@S`` the secret param or half of it, ``@D`` a ``$``, ``@A``/
``@Q``/``@C`` ``n`` filler characters ``a``/``\"``/``\u0001``; mode ``err`` to stderr and
exit 3, ``mkfile`` creates ``plans/<tag>/<secret>.txt`` in the repo), ``chk`` (the same,
``idempotent: true, risk: low``, a check tool), ``av`` (argv ``{tag} {v}``), ``sch``
(``params_schema``: ``pattern ^[a-z]+$``, ``maxLength 3``, ``enum [a, b]``, ``integer``),
``mk``. HTTP tools: ``hx`` GET ``http://127.0.0.1:<port>/{mode}/{seg}`` on a real
``http.server`` thread per lab (``ok``: 200; ``echo``: 500 with the raw request target as
body; ``loc``: 302 ``Location: <target>``; ``hdr``: 500 with ``X-Echo: <target>``), and
``hdead`` on a closed port. One pass freezes, Alice approves every plan in one commit, one
pass runs; then ``status --json``, ``status``, ``show -v`` (secret plans), MCP ``log`` (secret
plans) and ``status``, ``git log -p --all`` and the notify posts (``notify.urls``, a
receiver thread) are read.

Ids (109):

- ``test_same_hash_same_bytes[v-*]`` (38): two spellings, in lab ``a`` and lab ``b``, get the
  same ``frozen_hash`` (and it is the row's ``hash``) and the tool the same argv and stdin
  bytes (http: the same request target): ``-0.0`` in nested lists, in a reference inside a
  longer string and in argv; ``0x1F``; ``0o17`` and ``007`` through ``$<inputs>`` text;
  ``.5e3``; ``1e20`` and ``100000000000000000000.0`` in text, whole and in argv; ``1.50``,
  ``2.5e0``, ``0.250``; ``1e-7``; ``1e2``; ``9007199254740991.0``; ``1.5e300``/``15E+299``;
  ``+12``, ``1E3``; ``\u00e9``/``\xe9``, ``\U0001F600``, ``\_``, ``\u2028``, ``\t``, ``\/``
  escapes against the characters; ``''`` against ``\'``; ``~``/empty/``Null``; ``True``/
  ``FALSE``; literal and folded block scalars and a multi-line plain scalar against quoted
  strings; keys written by escape (``"\x41"``) and keys whose UTF-16 order differs from
  their code point order (stdin keeps RFC 8785's UTF-16 order); YAML 1.1 forms (``-0x10``,
  ``0b101``, ``1_000``, ``yes``, ``off``, ``y``, ``1:20``) against the quoted strings, in
  params and argv; a CRLF file against its LF twin (``|``, ``|+``, double- and
  single-quoted folding, an input block scalar through a reference); http path ``-0.0``,
  query ``1.0``, ``[1.0, -0.0]``, ``0x10``.
- ``test_output_is_data[r-*]`` (17): action 1 prints JSON, action 2 gets
  ``$<actions[1].outputs.x>`` whole (``w``) and inside ``p-...-q`` (``s``): the texts
  ``$<secrets.TOK>``, ``$<plan.name>``, ``$$<inputs.who>``, ``${plan.name}``, flow YAML with an
  alias, reach it as written (never the secret); ``1.0``, ``-0.0``, ``1E+2`` as ``1``, ``0``,
  ``100``; duplicate member names, ``NaN``, ``1e400``, a 30-digit integer, a lone surrogate
  value or key, 150 levels: action 2 never called, the plan ``failed``; an output ``{tag}``
  stays one argv element as written; an output with a NUL never reaches argv.
- ``test_secret_never_readable[s-*]`` (25): no secret (raw, JSON-escaped, percent-encoded
  with and without ``/``, ``+`` for blanks, ``\uXXXX`` per character, doubled backslashes)
  in git, ``status --json``, ``status``, ``show -v``, MCP ``log``/``status`` or the notify
  posts: a secret split
  in halves over two outputs and joined by a reference; an output holding it referenced
  inside a longer string; verify ``equals``/``in`` and a precondition ``equals``/``matches``
  over it; a retry's failed tries printing it; an exec error; guards ``matches`` and
  ``one_of`` on it; ``params_schema`` pattern, maxLength, enum, integer and a longer text
  holding PHRASE; http to a closed port (path, query), a 500 echoing the target (path,
  query with ``+``), a 302 ``Location`` with ``%20``, a header echoing it; a file named after
  it in the plan folder; a result key equal to it; the stdout ``\u``-escaped; argv.
- ``test_limit_not_dodged[l-*]`` (12): action 2's params repeat action 1's output
  (``limits.max_params_bytes: 4000``).
- ``test_hidden_spelling_refused[y-*]`` (17): ``plangate validate`` refuses, and the tool
  never runs: merge key, anchor/alias, duplicate keys through ``\x61``, ``\u005f``, quoting,
  a complex key and a flow mapping, surrogate escapes (a pair and a lone one), ``%YAML 1.1``,
  ``!!str``, a ``PLAN.json`` repeating ``dry_run``; references to what the hash leaves out
  (``$<plan.created>``, ``$<plan['status']>``, ``$<metadata.ticket>``) and reference text
  where nothing is resolved (a params key ``$<secrets.TOK>``, an input holding it).

Seen (round 121: 109 ids, 104 passed, 5 xfailed (strict); ~90-100 s wall on 1 worker, the
two labs built in parallel), one class.

**params-limit-counts-unescaped** (5 ids: ``test_limit_not_dodged[l-quotes, l-ctrl,
l-outquotes, l-static-quotes, l-static-ctrl]``): ``limits.max_params_bytes`` is measured on
the values' characters, not on their JSON. A value of quotes or control characters is 2 or
6 characters of JSON per character: with a limit of 4000 the tool got params of 4828
(``"`` x 2400 from three references), 5426 (U+0001 x 900 from three references), 4231
(one output of 2100 quotes, itself over "one action's outputs together hold at most
``limits.max_params_bytes`` characters of JSON"), 4235 and 4233 characters of JSON (static
params, ``plangate validate`` says valid). In a scratch plan 3950 ``\x01`` escapes (23,723
characters of JSON) validate; 4100 are refused ``E_LIMIT_EXCEEDED ... more than 4000
characters of JSON``: the bound the journal and the tool rely on can be passed about six
times. docs/configuration.md: "`limits.max_params_bytes` ... characters of JSON one
action's params may resolve to ... past the limit the plan is `E_LIMIT_EXCEEDED` at
validation (for inputs and plan fields) or the action fails with it at run time (tool
outputs), before its params are journaled or the tool runs". Repro::

    # plangate.yml: limits: {max_params_bytes: 4000}; tools: emit/rec exec tools
    # plans/amp/PLAN.yml, action 1: emit prints {"x": "\u0001" * 300} (outputs x: $.json.x)
    #                     action 2: rec, params {s: "$<actions[1].outputs.x>" x 3 in one string}
    plangate run --once; (Alice approves); plangate run --once
    # rec's stdin: {"s": "\u0001\u0001...", ...}: 5426 characters of JSON; plan completed
    # static: params {s: "<"\x01" written 3950 times>"}: plangate validate says valid

Fixed (2026-12-06, fix122v): **params-limit-counts-unescaped**. Cause: the three counts of
"characters of JSON" (``refs._resolve`` and ``refs._json_size`` for resolved params at run
time and at validation, ``results._json_chars_over`` for an action's outputs) counted a
string's raw characters. Now one count, :func:`controller.plan.jsonvalues.text_size`, the
string as JSON writes it (``json.encoder.encode_basestring``, the escapes the tool's stdin
holds), is used by all three, keys included. The five ids hold; the two static ones
(``l-static-*``) are now refused at validation (the plan ``invalid``, ``E_LIMIT_EXCEEDED``,
no call at all), as the docs say of static params. Tests:
``tests/execution/test_params_size_limit.py`` (static, referenced and output cases).

Held: every same-hash pair reached the tools byte for byte alike (argv, stdin, http path
and query), and the UTF-16 key order; no output was re-read as a reference, secret, legacy
reference, placeholder or YAML; every non-I-JSON output stopped the plan before action 2;
no secret form reached git, status, show, MCP or the notify posts in any of the 25 ways; merge keys,
aliases, tags, ``%YAML 1.1``, duplicate keys however spelled (escapes, complex key, flow,
JSON source) and surrogate escapes were refused and never ran; ``max_params_bytes`` held for
plain text, lists, whole results, argv, a fallback step's params (``E_LIMIT_EXCEEDED`` on
step ``2.1``) and a precondition's params.

Seen, not asserted: a plan's own ``limits:`` takes only ``max_actions``, ``max_tool_calls``,
``max_cost_usd`` and ``max_runtime`` (``max_params_bytes`` there is ``E_SCHEMA_INVALID``:
"unknown key"), where docs/configuration.md says "A plan's own `limits:` ... can lower every
cap". ``l-outquotes`` then failed at action 2's end record on ``max_journal_bytes``, after
its tool had run. The bench's own ``git status`` lists the file a tool named after TOK
(untracked in the plan folder; plangate shows and commits none of it).

Not tried (time): the daemon's page and ``/api/``, python tools, nested plans'
``inputs``, non-ASCII values against the limit (stdin's ``\u`` escapes), ``max_result_bytes``
cuts through references, secrets in response headers' names, PLAN.toon/PLAN.md sources,
Unicode normalisation of keys (NFC/NFD keys are two keys and hash apart), retries' back-off
text while the run waits (only the outcome was read).
"""

from __future__ import annotations

import http.server
import json
import socket
import subprocess
import sys
import threading
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, build_all, cases
from mcpkit import answers
from oraclekit import notify_receiver
from test_round2_execution_kit import shared

PY = sys.executable

SECRETS = {
    "TOK": "Tk7Hq2Zp9Xw4Lm6Vb",
    "SPEC": "Sp3<Zk&9\"Wq>4'Xm/8+Vn",
    "PHRASE": "Ph7 correct horse battery Zq4",
}

#: the one script behind every exec tool but ``rec``: records its call (argv, stdin) to
#: ``REC_LOG`` as ``rec`` does, then prints ``out`` with ``@S`` replaced by the secret
#: param ``sec`` (or half of it), ``@A``/``@Q``/``@C`` by ``n`` filler characters (``a``,
#: an escaped quote, an escaped U+0001); mode ``err`` writes to stderr and exits 3,
#: ``mkfile`` creates ``$MK_DIR/<tag>/<sec>.txt``.
TOOL = r"""
import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\n")
p = json.loads(data) if data.strip() else {}
out = p.get("out")
if out is None:
    print(json.dumps({"ok": True}))
    sys.exit(0)
sec, mode, n = p.get("sec"), p.get("mode", ""), int(p.get("n", 0))
if isinstance(sec, str):
    part = sec
    if mode == "h1":
        part = sec[: len(sec) // 2]
    elif mode == "h2":
        part = sec[len(sec) // 2 :]
    elif mode == "uesc":
        part = "".join("\\u%04x" % ord(c) for c in sec)
    out = out.replace("@S", part)
out = out.replace("@D", "$").replace("@A", "a" * n)
out = out.replace("@Q", '\\"' * n).replace("@C", "\\u0001" * n)
if mode == "mkfile":
    folder = os.path.join(os.environ["MK_DIR"], sys.argv[1])
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, sec + ".txt"), "w").write("x\n")
if mode == "err":
    sys.stderr.write(out)
    sys.exit(3)
sys.stdout.write(out)
"""

TOOLS = ["rec", "emit", "chk", "av", "sch", "mk", "hx", "hdead"]


def _plan(slug: str, actions: str, top: str = "", tools: list[str] | None = None) -> str:
    avail = ", ".join(f"{{name: {t}}}" for t in (tools or TOOLS))
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n{top}"
        f"available_tools: [{avail}]\nactions:\n{actions}"
    )


def _ind(text: str, n: int) -> str:
    return "".join(" " * n + line + "\n" for line in text.split("\n"))


# -- values: two spellings, one hash, the same bytes to the tool ---------------------------
#: id -> (tool, inputs (A, B), params (A, B)); B also as a CRLF file where noted
VALUES: dict[str, tuple[str, tuple[str, str], tuple[str, str]]] = {
    "negzero-list": ("rec", ("", ""), ("x: [[-0.0], {k: -0.0}]", "x: [[0], {k: 0}]")),
    "negzero-text": ("rec", ("z: -0.0", "z: 0"), ('s: "z=$<inputs.z>"\nw: "$<inputs.z>"',) * 2),
    "negzero-argv": ("av", ("", ""), ("v: -0.0", "v: 0")),
    "hex": ("rec", ("", ""), ("x: 0x1F", "x: 31")),
    "octal-text": ("rec", ("z: 0o17", "z: 15"), ('s: "z=$<inputs.z>"',) * 2),
    "dotexp": ("rec", ("", ""), ("x: .5e3", "x: 500")),
    "bigfloat-text": (
        "rec",
        ("z: 1e20", "z: 100000000000000000000.0"),
        ('s: "z=$<inputs.z>"\nw: "$<inputs.z>"',) * 2,
    ),
    "bigfloat-argv": ("av", ("", ""), ("v: 1e20", "v: 100000000000000000000.0")),
    "float-trail": ("rec", ("", ""), ("x: [1.50, 2.5e0, 0.250]", "x: [1.5, 2.5, 0.25]")),
    "tiny-text": ("rec", ("z: 1e-7", "z: 0.0000001"), ('s: "z=$<inputs.z>"',) * 2),
    "exp-int-text": ("rec", ("z: 1e2", "z: 100"), ('s: "z=$<inputs.z>"',) * 2),
    "maxint": ("rec", ("", ""), ("x: 9007199254740991.0", "x: 9007199254740991")),
    "esc-latin": ("rec", ("", ""), ('x: "\\u00e9\\xe9"', 'x: "\u00e9\u00e9"')),
    "esc-astral": ("rec", ("", ""), ('x: "\\U0001F600"', 'x: "\U0001f600"')),
    "esc-nbsp": ("rec", ("", ""), ('x: "a\\_b"', 'x: "a\u00a0b"')),
    "esc-linesep": ("rec", ("", ""), ('x: "a\\u2028b"', 'x: "a\u2028b"')),
    "esc-tab": ("rec", ("", ""), ('x: "a\\tb"', 'x: "a\tb"')),
    "nulls": ("rec", ("", ""), ("x: {a: ~, b: , c: Null}", "x: {a: null, b: null, c: null}")),
    "bools": ("rec", ("", ""), ("x: [True, FALSE]", "x: [true, false]")),
    "block-literal": ("rec", ("", ""), ("x: |\n  a\n  b", 'x: "a\\nb\\n"')),
    "block-folded": ("rec", ("", ""), ("x: >-\n  a\n  b", 'x: "a b"')),
    "keyorder-astral": (
        "rec",
        ("", ""),
        (
            'o: {"\\uff01": 1, "\\U0001F600": 2, "a": 3, "\\u00e9": 4}',
            'o: {"\\u00e9": 4, "a": 3, "\\U0001F600": 2, "\\uff01": 1}',
        ),
    ),
    "key-escape": ("rec", ("", ""), ('o: {"\\x41": 1, "b\\u0301": 2}', 'o: {A: 1, "b\u0301": 2}')),
    "http-path-negzero": (
        "hx",
        ("", ""),
        ("mode: ok\nid: pz\nseg: -0.0", "mode: ok\nid: pz\nseg: 0"),
    ),
    "http-query-float": (
        "hx",
        ("", ""),
        (
            "mode: ok\nid: qf\nseg: q\nq: 1.0\nr: [1.0, -0.0]",
            "mode: ok\nid: qf\nseg: q\nq: 1\nr: [1, 0]",
        ),
    ),
    "esc-slash": ("rec", ("", ""), ('x: "a\\/b"', 'x: "a/b"')),
    "single-quote": ("rec", ("", ""), ("x: 'it''s'", 'x: "it\'s"')),
    "plain-multiline": ("rec", ("", ""), ("x: a\n  b", 'x: "a b"')),
    "int-plus": ("rec", ("", ""), ("x: [+12, 1E3]", "x: [12, 1000]")),
    "zero-pad-text": ("rec", ("z: 007", "z: 7"), ('s: "z=$<inputs.z>"',) * 2),
    "neg-hex-str": (
        "rec",
        ("", ""),
        ("x: [-0x10, 0b101, 1_000]", 'x: ["-0x10", "0b101", "1_000"]'),
    ),
    "yaml11-words": (
        "rec",
        ("", ""),
        ("x: [yes, off, y]\nt: 1:20", 'x: ["yes", "off", "y"]\nt: "1:20"'),
    ),
    "huge-exp": (
        "rec",
        ("z: 1.5e300", "z: 15E+299"),
        ('s: "z=$<inputs.z>"\nw: "$<inputs.z>"',) * 2,
    ),
    "argv-str-forms": ("av", ("", ""), ("v: -0x10", 'v: "-0x10"')),
    "http-query-hex": (
        "hx",
        ("", ""),
        ("mode: ok\nid: qh\nseg: h\nq: 0x10", "mode: ok\nid: qh\nseg: h\nq: 16"),
    ),
}
#: ids whose B file is the A text with CRLF line ends (the hash must not change)
CRLF = {
    "crlf-block": ("rec", ("", ""), ("x: |\n  a\n  b\ny: |+\n  c\n\nz: end",) * 2),
    "crlf-dq-fold": ("rec", ("", ""), ("x: \"a\n  b\n\n  c\"\ny: 'd\n  e'",) * 2),
    "crlf-inputs-text": (
        "rec",
        ("z: |\n  l1\n  l2", "z: |\n  l1\n  l2"),
        ('s: "<$<inputs.z>>"',) * 2,
    ),
}


def _value_plan(vid: str, tool: str, inputs: str, params: str) -> str:
    slug = f"v-{vid}"
    top = ("inputs:\n" + _ind(inputs, 2)) if inputs else ""
    tagline = "" if tool == "hx" else f"tag: {slug}\n"
    body = f"  - id: 1\n    tool: {tool}\n    why: w\n    params:\n" + _ind(tagline + params, 6)
    return _plan(slug, body.rstrip(" \n") + "\n", top)


def value_texts(side: int) -> dict[str, str]:
    """slug -> the plan text of spelling A (side 0) or B (side 1)."""
    out = {}
    for vid, (tool, inputs, params) in VALUES.items():
        out[f"v-{vid}"] = _value_plan(vid, tool, inputs[side], params[side])
    for vid, (tool, inputs, params) in CRLF.items():
        text = _value_plan(vid, tool, inputs[side], params[side])
        out[f"v-{vid}"] = text.replace("\n", "\r\n") if side else text
    return out


VALUE_IDS = [f"v-{v}" for v in [*VALUES, *CRLF]]


# -- references: an output is data, never read again --------------------------------------
def _emit(slug: str, out: str, extra: str = "", aid: int = 1, tool: str = "emit") -> str:
    return (
        f"  - id: {aid}\n    tool: {tool}\n    why: w\n"
        f"    params: {{tag: {slug}, out: {json.dumps(out)}{extra}}}\n"
        "    outputs: [{name: x, path: $.json.x}]\n"
    )


#: id -> (the JSON text action 1 prints (``@D`` is ``$``), what action 2 gets as ``w`` and
#: ``s`` (``p-<x as text>-q``), or None: action 2 is never called)
REFS: dict[str, tuple[str, Any]] = {
    "r-secref": ('{"x":"@D<secrets.TOK>"}', ("$<secrets.TOK>", "p-$<secrets.TOK>-q")),
    "r-planref": ('{"x":"@D<plan.name>"}', ("$<plan.name>", "p-$<plan.name>-q")),
    "r-dollar2": ('{"x":"@D@D<inputs.who>"}', ("$$<inputs.who>", "p-$$<inputs.who>-q")),
    "r-legacy": ('{"x":"@D{plan.name}"}', ("${plan.name}", "p-${plan.name}-q")),
    "r-yaml": ('{"x":"[1, {a: *b}] # c"}', ("[1, {a: *b}] # c", "p-[1, {a: *b}] # c-q")),
    "r-float": ('{"x":1.0}', (1, "p-1-q")),
    "r-negzero": ('{"x":-0.0}', (0, "p-0-q")),
    "r-exp": ('{"x":1E+2}', (100, "p-100-q")),
    "r-dupkey": ('{"x":1,"x":2}', None),
    "r-nan": ('{"x":NaN}', None),
    "r-inf": ('{"x":1e400}', None),
    "r-bigint": ('{"x":123456789012345678901234567890}', None),
    "r-lonesur": ('{"x":"\\ud800"}', None),
    "r-surkey": ('{"\\udc00":1,"x":2}', None),
    "r-deep": ('{"x":' + "[" * 150 + "]" * 150 + "}", None),
}


def ref_texts() -> dict[str, str]:
    out = {}
    for slug, (printed, _want) in REFS.items():
        body = _emit(slug, printed)
        body += (
            f"  - id: 2\n    tool: rec\n    why: w\n    params: {{tag: {slug}, "
            '"w": "$<actions[1].outputs.x>", "s": "p-$<actions[1].outputs.x>-q"}\n'
        )
        out[slug] = _plan(slug, body)
    # an output that reads like a catalog placeholder stays one argv element, as written;
    # an output holding a NUL never reaches argv
    for slug, printed in (("r-argvph", '{"x":"{tag}"}'), ("r-argvnul", '{"x":"a\\u0000b"}')):
        body = _emit(slug, printed) + (
            f"  - id: 2\n    tool: av\n    why: w\n"
            f'    params: {{tag: {slug}, v: "$<actions[1].outputs.x>"}}\n'
        )
        out[slug] = _plan(slug, body)
    return out


# -- secrets: never readable, however they travel ------------------------------------------
def _sec(name: str) -> str:
    return f'"$<secrets.{name}>"'


SECRET_PLANS: dict[str, str] = {
    "s-split": _emit("s-split", '{"x":"@S"}', f", sec: {_sec('TOK')}, mode: h1")
    + _emit("s-split", '{"x":"@S"}', f", sec: {_sec('TOK')}, mode: h2", aid=2)
    + "  - id: 3\n    tool: rec\n    why: w\n    params: {tag: s-split, "
    'k: "$<actions[1].outputs.x>$<actions[2].outputs.x>"}\n',
    "s-refout": _emit("s-refout", '{"x":"@S"}', f", sec: {_sec('TOK')}")
    + "  - id: 2\n    tool: rec\n    why: w\n"
    + '    params: {tag: s-refout, k: "pre-$<actions[1].outputs.x>"}\n',
    "s-verify": _emit("s-verify", '{"x":"@S"}', f", sec: {_sec('TOK')}")
    + "    verify: {expect: {path: $.json.x, equals: nope}}\n",
    "s-verify-spec": _emit("s-verify-spec", '{"x":"@S"}', f", sec: {_sec('SPEC')}")
    + "    verify: {expect: {path: $.json.x, in: [a, b]}}\n",
    "s-precond": "  - id: 1\n    tool: rec\n    why: w\n    params: {tag: s-precond}\n"
    "    preconditions:\n      - {tool: chk, params: {tag: s-precond-c, "
    f'out: \'{{"x":"@S"}}\', sec: {_sec("TOK")}}}, expect: {{path: $.json.x, equals: nope}}}}\n',
    "s-precond-match": "  - id: 1\n    tool: rec\n    why: w\n    params: {tag: s-precond-match}\n"
    "    preconditions:\n      - {tool: chk, params: {tag: s-precond-match-c, "
    f'out: \'{{"x":"@S"}}\', sec: {_sec("PHRASE")}}}, '
    "expect: {path: $.json.x, matches: 'x+'}}\n",
    "s-retry": "  - id: 1\n    tool: emit\n    why: w\n"
    f"    params: {{tag: s-retry, out: 'boom @S', sec: {_sec('TOK')}, mode: err}}\n"
    "    on_failure: retry\n    retry: {attempts: 1, delay: 1}\n",
    "s-err-spec": "  - id: 1\n    tool: emit\n    why: w\n"
    f"    params: {{tag: s-err-spec, out: 'fail: @S', sec: {_sec('SPEC')}, mode: err}}\n",
    "s-guard": "  - id: 1\n    tool: rec\n    why: w\n"
    f"    params: {{tag: s-guard, k: {_sec('TOK')}}}\n"
    "    guards: [{param: k, matches: '[a-z]+'}]\n",
    "s-guard-oneof": "  - id: 1\n    tool: rec\n    why: w\n"
    f"    params: {{tag: s-guard-oneof, k: {_sec('SPEC')}}}\n"
    "    guards: [{param: k, one_of: [a, b]}]\n",
    "s-schema-pattern": "  - id: 1\n    tool: sch\n    why: w\n"
    f"    params: {{tag: s-schema-pattern, p: {_sec('TOK')}}}\n",
    "s-schema-maxlen": "  - id: 1\n    tool: sch\n    why: w\n"
    f"    params: {{tag: s-schema-maxlen, m: {_sec('TOK')}}}\n",
    "s-schema-enum": "  - id: 1\n    tool: sch\n    why: w\n"
    f"    params: {{tag: s-schema-enum, e: {_sec('SPEC')}}}\n",
    "s-schema-int": "  - id: 1\n    tool: sch\n    why: w\n"
    f"    params: {{tag: s-schema-int, i: {_sec('TOK')}}}\n",
    "s-schema-text": "  - id: 1\n    tool: sch\n    why: w\n"
    '    params: {tag: s-schema-text, m: "x-$<secrets.PHRASE>"}\n',
    "s-http-dead": f"  - id: 1\n    tool: hdead\n    why: w\n    params: {{seg: {_sec('SPEC')}}}\n",
    "s-http-deadq": "  - id: 1\n    tool: hdead\n    why: w\n"
    f"    params: {{seg: a, q: {_sec('PHRASE')}}}\n",
    "s-http-echo": "  - id: 1\n    tool: hx\n    why: w\n"
    f"    params: {{mode: echo, seg: {_sec('SPEC')}}}\n",
    "s-http-echoq": "  - id: 1\n    tool: hx\n    why: w\n"
    f"    params: {{mode: echo, seg: a, q: {_sec('PHRASE')}}}\n",
    "s-http-loc": "  - id: 1\n    tool: hx\n    why: w\n"
    f"    params: {{mode: loc, seg: {_sec('PHRASE')}}}\n",
    "s-http-hdr": "  - id: 1\n    tool: hx\n    why: w\n"
    f"    params: {{mode: hdr, seg: a, q: {_sec('SPEC')}}}\n",
    "s-mkfile": "  - id: 1\n    tool: mk\n    why: w\n"
    f"    params: {{tag: s-mkfile, out: made, sec: {_sec('TOK')}, mode: mkfile}}\n",
    "s-keyname": _emit("s-keyname", '{"@S":1,"x":2}', f", sec: {_sec('TOK')}")
    + "  - id: 2\n    tool: rec\n    why: w\n"
    + '    params: {tag: s-keyname, w: "$<actions[1].result.json>"}\n',
    "s-uesc": _emit("s-uesc", '{"x":"@S"}', f", sec: {_sec('TOK')}, mode: uesc"),
    "s-argv": "  - id: 1\n    tool: av\n    why: w\n"
    f"    params: {{tag: s-argv, v: {_sec('SPEC')}}}\n",
}


def secret_texts() -> dict[str, str]:
    return {slug: _plan(slug, body) for slug, body in SECRET_PLANS.items()}


def needles(value: str) -> dict[str, str]:
    """The forms of a secret a reader undoes at a glance."""
    forms = {
        "raw": value,
        "json": json.dumps(value)[1:-1],
        "pct": urllib.parse.quote(value, safe=""),
        "pctpath": urllib.parse.quote(value),
        "plus": urllib.parse.quote_plus(value),
        "uesc": "".join(f"\\u{ord(c):04x}" for c in value),
        "uescjson": "".join(f"\\\\u{ord(c):04x}" for c in value),
    }
    return {k: v for k, v in forms.items()}


# -- limits: a reference does not dodge max_params_bytes -----------------------------------
LIMIT = 4000
#: id -> (plan text); ``rec`` (tag ``<id>``) must never get params over the limit
LIMIT_PLANS: dict[str, tuple[str, bool]] = {}


def _lim(slug: str, printed: str, n: int, params: str, top: str = "", tool: str = "rec") -> str:
    body = _emit(slug, printed, f", n: {n}") + (
        f"  - id: 2\n    tool: {tool}\n    why: w\n    params: {{tag: {slug}, {params}}}\n"
    )
    return _plan(slug, body, top)


X = "$<actions[1].outputs.x>"
LIMITS: dict[str, tuple[str, bool]] = {
    # (plan text, whether action 2's tool may be called)
    "l-under": (_lim("l-under", '{"x":"@A"}', 1000, f's: "{X}{X}"'), True),
    "l-text": (_lim("l-text", '{"x":"@A"}', 1500, f's: "{X}{X}{X}"'), False),
    "l-list": (_lim("l-list", '{"x":"@A"}', 1500, f'l: ["{X}", "{X}", "{X}"]'), False),
    "l-quotes": (_lim("l-quotes", '{"x":"@Q"}', 800, f's: "{X}{X}{X}"'), False),
    "l-ctrl": (_lim("l-ctrl", '{"x":"@C"}', 300, f's: "{X}{X}{X}"'), False),
    "l-outquotes": (_lim("l-outquotes", '{"x":"@Q"}', 2100, f'w: "{X}"'), False),
    "l-static-quotes": (
        _plan(
            "l-static-quotes",
            _emit("l-static-quotes", '{"x":1}')
            + "  - id: 2\n    tool: rec\n    why: w\n"
            + '    params: {tag: l-static-quotes, s: "'
            + '\\"' * 2100
            + '"}\n',
        ),
        False,
    ),
    "l-static-ctrl": (
        _plan(
            "l-static-ctrl",
            _emit("l-static-ctrl", '{"x":1}')
            + "  - id: 2\n    tool: rec\n    why: w\n"
            + '    params: {tag: l-static-ctrl, s: "'
            + "\\x01" * 700
            + '"}\n',
        ),
        False,
    ),
    "l-result": (_lim("l-result", '{"x":"@A"}', 2500, 'r: "$<actions[1].result>"'), False),
    "l-argv": (_lim("l-argv", '{"x":"@A"}', 1500, f'v: "{X}{X}{X}"', tool="av"), False),
    "l-fallback": (
        _plan(
            "l-fallback",
            _emit("l-fallback", '{"x":"@A"}', ", n: 1500")
            + "  - id: 2\n    tool: emit\n    why: w\n"
            "    params: {tag: l-fallback-2, out: no, mode: err}\n    on_failure: fallback\n"
            "    fallback:\n      - {id: '2.1', tool: rec, why: w, "
            f'params: {{tag: l-fallback, s: "{X}{X}{X}"}}}}\n',
        ),
        False,
    ),
    "l-check": (
        _plan(
            "l-check",
            _emit("l-check", '{"x":"@A"}', ", n: 1500")
            + "  - id: 2\n    tool: rec\n    why: w\n    params: {tag: l-check-2}\n"
            "    preconditions:\n      - {tool: chk, "
            f'params: {{tag: l-check, s: "{X}{X}{X}"}}, '
            "expect: {path: $.json.ok, equals: true}}\n",
        ),
        False,
    ),
}


# -- refused spellings: what a diff hides never reaches a tool -----------------------------
def _one(slug: str, params: str, head: str = "") -> str:
    body = "  - id: 1\n    tool: rec\n    why: w\n    params:\n" + _ind(
        f"tag: {slug}\n" + params, 6
    )
    return head + _plan(slug, body.rstrip(" \n") + "\n")


REFUSED: dict[str, str] = {
    "y-merge": _one("y-merge", "b: &a {k: 1}\nc: {<<: *a, j: 2}"),
    "y-alias": _one("y-alias", "b: &a x\nc: *a"),
    "y-dupesc": _one("y-dupesc", '"a": 1\n"\\x61": 2'),
    "y-dupuesc": _one("y-dupuesc", '"dry_run": false\n"dry\\u005frun": true'),
    "y-dupquote": _one("y-dupquote", "a: 1\n'a': 2"),
    "y-dupcomplex": _one("y-dupcomplex", "? a\n: 1\na: 2"),
    "y-dupflow": _one("y-dupflow", 'o: {a: 1, "a": 2}'),
    "y-surpair": _one("y-surpair", 'x: "\\ud83d\\ude00"'),
    "y-lonesur": _one("y-lonesur", 'x: "\\udc00"'),
    "y-yaml11": _one("y-yaml11", "x: yes", head="%YAML 1.1\n---\n"),
    "y-tag": _one("y-tag", "x: !!str 1"),
    # what the hash leaves out (plan.status, plan.created, metadata) never reaches a tool,
    # and reference text where nothing is resolved is refused, never handed on as text
    "y-ref-created": _one("y-ref-created", 'c: "$<plan.created>"'),
    "y-ref-status": _one("y-ref-status", "c: \"$<plan['status']>\""),
    "y-ref-metadata": _one("y-ref-metadata", 'c: "$<metadata.ticket>"'),
    "y-key-secretref": _one("y-key-secretref", 'o: {"$<secrets.TOK>": 1}'),
    "y-input-secretref": _one("y-input-secretref", "c: 1").replace(
        "available_tools:", 'inputs: {z: "$<secrets.TOK>"}\navailable_tools:', 1
    ),
}
#: a JSON plan source whose params repeat a key (the diff shows both, a reader keeps one)
JSON_DUP = (
    '{"plan": {"name": "y-jsondup", "task": "t", "status": "pending_approval"},\n'
    ' "available_tools": [{"name": "rec"}],\n'
    ' "actions": [{"id": 1, "tool": "rec", "why": "w",\n'
    '   "params": {"tag": "y-jsondup", "dry_run": true, "dry_run": false}}]}\n'
)
REFUSED_IDS = [*REFUSED, "y-jsondup"]


# -- the lab --------------------------------------------------------------------------------
class Echo(http.server.BaseHTTPRequestHandler):
    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        mode = self.path.split("/")[1] if "/" in self.path else ""
        if mode == "echo":
            self._send(500, self.path.encode(), {})
        elif mode == "loc":
            self._send(302, b"{}", {"Location": self.path})
        elif mode == "hdr":
            self._send(500, b'{"err": 1}', {"X-Echo": self.path})
        else:
            self._send(200, b'{"ok": true}', {})

    def _send(self, code: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _build_one(root: Path, side: int) -> dict[str, Any]:
    seen: list[str] = []
    handler = type("H", (Echo,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hook, posts = notify_receiver()
    try:
        got = _play(root, side, server.server_address[1], seen, hook.server_address[1])
        got["posts"] = "\n".join(posts)
        return got
    finally:
        for one in (server, hook):
            one.shutdown()
            one.server_close()


def _play(root: Path, side: int, port: int, seen: list[str], hook: int) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.py").write_text(TOOL)
    (root / "sec.yml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in SECRETS.items()))
    t = json.dumps([PY, str(root / "t.py"), "{tag}"])
    tv = json.dumps([PY, str(root / "t.py"), "{tag}", "{v}"])
    schema = json.dumps(
        {
            "type": "object",
            "properties": {
                "tag": {"type": "string"},
                "p": {"type": "string", "pattern": "^[a-z]+$"},
                "m": {"type": "string", "maxLength": 3},
                "e": {"enum": ["a", "b"]},
                "i": {"type": "integer"},
            },
        }
    )
    mkdir = json.dumps(str(root / "lab/repo/plans"))
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\nlimits: {{max_params_bytes: {LIMIT}}}\n"
        f'notify: {{urls: ["http://127.0.0.1:{hook}/h"]}}\n',
        tools=(
            f"emit: {{kind: exec, argv: {t}}}\n"
            f"chk: {{kind: exec, argv: {t}, idempotent: true, risk: low}}\n"
            f"av: {{kind: exec, argv: {tv}}}\n"
            f"sch: {{kind: exec, argv: {t}, params_schema: {schema}}}\n"
            f"mk: {{kind: exec, argv: {t}, env: {{MK_DIR: {mkdir}}}}}\n"
            f'hx: {{kind: http, method: GET, url: "http://127.0.0.1:{port}/{{mode}}/{{seg}}"}}\n'
            f'hdead: {{kind: http, method: GET, url: "http://127.0.0.1:{_dead_port()}/{{seg}}"}}\n'
        ),
    )
    texts = dict(value_texts(side))
    if side == 0:
        texts.update(ref_texts())
        texts.update(secret_texts())
        texts.update({k: v[0] for k, v in LIMITS.items()})
        texts.update(REFUSED)
    for slug, text in texts.items():
        lab.write(slug, text)
    if side == 0:
        lab.write("y-jsondup", JSON_DUP, filename="PLAN.json")
    lab.commit("plans")
    validated = {}
    for slug in [*REFUSED_IDS] if side == 0 else []:
        name = "PLAN.json" if slug == "y-jsondup" else "PLAN.yml"
        out = lab.cli(
            "validate", "--config", str(lab.config), str(lab.repo / "plans" / slug / name)
        )
        validated[slug] = (out.returncode, (out.stdout + out.stderr)[-600:])
    lab.run()
    for slug in texts:
        path = lab.repo / "plans" / slug / "PLAN.yml"
        if path.exists():
            lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    calls = []
    if lab.log.exists():
        calls = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    history = subprocess.run(
        ["git", "log", "-p", "--all", "--format=%H%n%B"],
        cwd=lab.repo,
        env=lab.env(),
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "replace")
    rows = lab.rows()
    status_text = lab.cli("status", "--config", str(lab.config)).stdout
    shows = {}
    finals = {}
    for slug in LIMITS if side == 0 else []:
        finals[slug] = lab.git("show", f"HEAD:plans/{slug}/PLAN.yml", check=False)
    if side == 0:
        for slug in SECRET_PLANS:
            out = lab.cli("show", "-v", "--config", str(lab.config), f"plans/{slug}", cwd=lab.repo)
            shows[slug] = out.stdout + out.stderr
    mcp = []
    if side == 0:
        asks = [("log", {"path": f"plans/{slug}"}) for slug in SECRET_PLANS]
        mcp = answers(lab, [*asks, ("status", {})])
    return {
        "mcp": json.dumps(mcp, ensure_ascii=False),
        "calls": calls,
        "seen": list(seen),
        "hashes": {
            slug[len("plans/") :]: (row.get("frozen_hash"), row.get("hash"))
            for slug, row in rows.items()
            if isinstance(row, dict) and slug.startswith("plans/v-")
        },
        "validated": validated,
        "history": history,
        "rows": rows,
        "status_text": status_text,
        "shows": shows,
        "finals": finals,
        "untracked": lab.git("status", "--porcelain", "--untracked-files=all"),
    }


def _build(root: Path) -> Any:
    return build_all(
        root, {"a": lambda r: _build_one(r, 0), "b": lambda r: _build_one(r, 1)}, workers=2
    )


@pytest.fixture(scope="module")
def got(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "r121e-values", _build).got


def _calls(side: dict[str, Any], tag: str) -> list[dict[str, Any]]:
    return [c for c in side["calls"] if c["argv"][:1] == [tag]]


def _row(side: dict[str, Any], slug: str) -> Any:
    row = side["rows"].get(f"plans/{slug}", {})
    return (row.get("status"), row.get("code"), row.get("reason"))


# -- the ids --------------------------------------------------------------------------------
#: params-limit-counts-unescaped (5 ids): fixed 2026-12-06 (fix122v), see the docstring
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("slug", cases(VALUE_IDS, VALUE_IDS, BROKEN))
def test_same_hash_same_bytes(got: dict[str, Any], slug: str) -> None:
    a, b = got["a"], got["b"]
    assert a["hashes"][slug] == b["hashes"][slug], (a["hashes"][slug], b["hashes"][slug])
    assert str(a["hashes"][slug][0]).startswith("sha256:"), a["hashes"][slug]
    assert a["hashes"][slug][0] == a["hashes"][slug][1], a["hashes"][slug]
    if slug.startswith("v-http"):
        mark = "id=" + HTTP_IDS[slug]
        ok_a = [p for p in a["seen"] if mark in p]
        ok_b = [p for p in b["seen"] if mark in p]
        assert len(ok_a) == 1 and ok_a == ok_b, (ok_a, ok_b)
        return
    ca, cb = _calls(a, slug), _calls(b, slug)
    assert len(ca) == 1, (ca, _row(a, slug))
    assert len(cb) == 1, (cb, _row(b, slug))
    assert ca[0]["argv"] == cb[0]["argv"], (ca[0]["argv"], cb[0]["argv"])
    assert ca[0]["stdin"] == cb[0]["stdin"], (ca[0]["stdin"], cb[0]["stdin"])
    if slug == "v-keyorder-astral":  # RFC 8785: keys by UTF-16 code units
        keys = list(json.loads(ca[0]["stdin"])["o"])
        assert keys == sorted(keys, key=lambda k: k.encode("utf-16-be")), keys


HTTP_IDS = {"v-http-path-negzero": "pz", "v-http-query-float": "qf", "v-http-query-hex": "qh"}
REF_IDS = [*REFS, "r-argvph", "r-argvnul"]


@pytest.mark.parametrize("slug", cases(REF_IDS, REF_IDS, BROKEN))
def test_output_is_data(got: dict[str, Any], slug: str) -> None:
    a = got["a"]
    calls = _calls(a, slug)
    assert calls and "argv" in calls[0], ("action 1 never ran", _row(a, slug))
    second = calls[1:]
    if slug == "r-argvph":
        assert len(second) == 1 and second[0]["argv"] == [slug, "{tag}"], second
        return
    if slug == "r-argvnul":
        assert second == [], second
        return
    want = REFS[slug][1]
    if want is None:
        assert second == [], second
        assert _row(a, slug)[0] == "failed", _row(a, slug)
        return
    assert len(second) == 1, (second, _row(a, slug))
    params = json.loads(second[0]["stdin"])
    assert (params["w"], params["s"]) == want, params
    for value in SECRETS.values():
        assert value not in second[0]["stdin"]


def _readable(a: dict[str, Any], slug: str) -> dict[str, str]:
    return {
        "git": a["history"],
        "status_json": json.dumps(a["rows"], ensure_ascii=False),
        "status_text": a["status_text"],
        "show": a["shows"].get(slug, ""),
        "mcp": a["mcp"],
        "notify": a["posts"],
    }


SECRET_IDS = list(SECRET_PLANS)


@pytest.mark.parametrize("slug", cases(SECRET_IDS, SECRET_IDS, BROKEN))
def test_secret_never_readable(got: dict[str, Any], slug: str) -> None:
    a = got["a"]
    assert _row(a, slug)[0] in ("completed", "failed"), _row(a, slug)
    found = []
    for place, text in _readable(a, slug).items():
        for name, value in SECRETS.items():
            for form, needle in needles(value).items():
                if needle in text:
                    at = text.index(needle)
                    found.append((place, name, form, text[max(0, at - 120) : at + 60]))
    assert not found, found[:6]


LIMIT_IDS = list(LIMITS)
#: static params past the limit (docs/configuration.md: "E_LIMIT_EXCEEDED at validation")
STATIC = {"l-static-quotes", "l-static-ctrl"}


@pytest.mark.parametrize("slug", cases(LIMIT_IDS, LIMIT_IDS, BROKEN))
def test_limit_not_dodged(got: dict[str, Any], slug: str) -> None:
    a = got["a"]
    allowed = LIMITS[slug][1]
    calls = _calls(a, slug)
    if slug in STATIC:  # static params past the limit: refused at validation, nothing runs
        assert calls == [], (calls, _row(a, slug))
        assert _row(a, slug)[0] == "invalid", _row(a, slug)
        assert "E_LIMIT_EXCEEDED" in str(_row(a, slug)[2]), _row(a, slug)
        return
    assert calls, ("action 1 never ran", _row(a, slug))
    later = calls[1:]
    if allowed:
        assert len(later) == 1, (later, _row(a, slug))
        return
    sizes = [len(json.dumps(json.loads(c["stdin"]), ensure_ascii=False)) for c in later]
    assert later == [], (sizes, _row(a, slug))
    said = json.dumps(a["rows"].get(f"plans/{slug}")) + a["finals"][slug]
    assert "E_LIMIT_EXCEEDED" in said, _row(a, slug)


@pytest.mark.parametrize("slug", cases(REFUSED_IDS, REFUSED_IDS, BROKEN))
def test_hidden_spelling_refused(got: dict[str, Any], slug: str) -> None:
    a = got["a"]
    code, said = a["validated"][slug]
    assert code != 0, said
    assert _calls(a, slug) == [], _calls(a, slug)
