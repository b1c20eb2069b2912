r"""Round 124, values (atk124e): "what a reviewer approved is exactly what reaches the tool,
within the documented limits, and no secret is ever written anywhere a person or agent can
read it".

Lab (two, built once per module in two threads under the ``shared`` lock; local mode;
approvers ``alice@example.com``, ``*@ops.example.com``): config ``limits:
{max_params_bytes: 4000}``, ``secrets.file`` with TOK (``Tk7Hq2Zp9Xw4Lm6Vb``), TOKX (TOK
with 6 characters before it and 12 after: a secret holding another), SPEC
(``Sp3<Zk&9"Wq>4'Xm/8+Vn``), UNI (``Pä55wörd€Kx9Tzé``), SH (``Qz``, 2 characters), S3
(``Xj7``), WORD (``sunshine``, a common word of 8 letters), ``notify.urls`` to a receiver
thread. Tools: ``emit`` (exec; one script appends each call's argv and stdin to
``ran.log``, the ground truth, then prints ``out`` with the secret param ``sec`` spliced in
raw, percent-encoded (upper- and lower-case hex, of UTF-8 or cp1252 bytes), HTML-escaped
(named or ``&#NN;``), as ``\uXXXX``, JSON-escaped (also with ``\/``), NFD, upper-cased, in
two halves on two lines, after a filler; to stdout, or to stderr with exit 3, or as cp1252
bytes), ``chk`` (the same, ``idempotent: true, risk: low``), ``av`` (argv ``{tag} {v}``),
``nx`` (argv ``/nonexistent-atk124e/bin {v}``), ``hp`` (http POST ``/{tag}``), ``hx`` (http
GET ``/{mode}/{seg}``; ``/echo/`` answers the request path, ``/err/`` the same with 500) on
a real ``http.server`` thread per lab, ``hz`` (http GET to a closed port ``/{seg}``), ``py``
(python ``pyt124e:act``: records ``repr(kwargs)``, or raises with the percent-encoded
secret), ``echo``. Pinned drafts ``kid-one`` (``s: "$<inputs.a>"``) and ``kid-two`` (``s:
"$<inputs.a>$<inputs.a>"``). Lab ``a`` holds every plan, lab ``b`` only the ``v-*`` plans
in their second spelling. One pass freezes, Alice approves every pending plan in one
commit, one pass runs; then ``status --json``, ``status``, ``show -v``, MCP ``log``, ``git
log -p --all -- plans/<id>`` (messages and diffs), the journal, the notify posts and a
daemon with ``ui: {listen: 0}`` (``/api/plan/<id>``, ``/plan/<id>``) are read per plan.

Ids (98):

- ``test_limit_holds[l-*]`` (25): the checked call (tag ``<id>``) never gets params over
  4,000 characters of JSON as its stdin carries them; where they would be, the plan says
  ``E_LIMIT_EXCEEDED`` and the call is never made, and where every value is the plan's own
  (literal, ``$<inputs.*>``, ``$<plan.task>``) the plan is ``invalid`` at validation.
  Static: 700 ``\x01`` escapes in a value (4,200 characters as ``\u0001``) and in three
  mapping keys, 300 ``1e15`` (integers of 16 digits), 250 ``0x1FFFFFFFFFFFFF``, 700
  ``1e-7`` (``1e-07``), 4,100 astral characters, 3,000 ``[]`` as a GET query and as an argv
  ``{v}``, ``$<inputs.m>`` twice and ``$<plan.task>`` twice (2,100 characters each), the
  same in a fallback step, a precondition, a verify check (``l-fallback-inputs``,
  ``l-precond-inputs``, ``l-verify-inputs``, ``l-fallback-task``), a literal 4,200-character
  string in a fallback step and a precondition (``l-fallback-literal``,
  ``l-precond-literal``), a pinned plan's literal inputs (3,000 ``[]``, 4,200 characters,
  2,100 characters used twice: ``l-kid-lit-*``). At run time: an output of 700 ``\u0001``,
  of 2,100 backslashes, of 300 ``1E15`` (whole and in a string). Either way (``any``):
  2,100 U+0958 and 1,000 U+FDFA (NFC/NFKC would lengthen them).
- ``test_secret_never_readable[s-*]`` (35): no form of the secret the plan's tool handles,
  nor of TOK, TOKX, SPEC (raw, JSON-escaped, ``\/``, percent (both hex cases, cp1252 bytes),
  ``+``, ``\uXXXX``, HTML named and numeric, base64, hex, NFD, upper case for 8 characters
  or more, any 8 characters, the first 6; the short ones and WORD between the ``[[``/``]]``
  marks their tool printed) in that plan's git history, ``status`` (JSON, text), ``show
  -v``, MCP ``log``, its notify posts, its page and ``/api/plan``, its journal: every
  encoding above on stdout and stderr, a secret inside another (TOKX printed raw and in an
  error), a stderr cut at the error message's 300 characters with TOK whole before the cut,
  10, 6 and 4 of its characters before it, and far past it (``s-cut-*``), 2- and 3-character
  secrets, a common word (and upper-cased), a tool output that is not JSON where an output
  is asked for, a verify and a precondition failing on a value holding the secret, a
  response that echoes the secret in the request URL (200 and 500), a connection refused to
  a URL holding it, an exec tool that cannot start with it in argv, a python exception
  holding it percent-encoded.
- ``test_same_hash_same_bytes[v-*]`` (30): two spellings, one in each lab; 23 of them the
  docs call one value (same ``frozen_hash`` asserted), and wherever the hashes agree the
  tool got the same bytes (exec stdin and argv, POST body, GET path and query, python
  kwargs' ``repr``): keys ``café`` NFC/NFD, ``dry_run``/``dry＿run`` (U+FF3F), values
  ``ﬁle``/``file``, ``é``/``e``+U+0301 (all four: two hashes); ``1e15``/``1000000000000000``
  (params, text, argv, GET query, python, an echo's result in a string, POST);
  ``-0``/``0``, ``-0.0``/``0`` in text, ``1e-7``/``0.0000001`` in text, ``1e400``/``.inf``
  (both ``E_SCHEMA_INVALID``), ``yes``/``"yes"``, key ``on``/``"on"``, ``017``/``17``,
  ``0o17``/``15``, ``~``/``null`` (value and in text), ``"\ud83d\ude00"``/``"\U0001F600"``
  (the first unreadable), a block and a multi-line quoted scalar in LF/CRLF files,
  ``"dry\x5frun"``/``dry_run``, ``\t``/a tab, 2^53-1 as int/float, 2^53 (the int refused),
  escaped/written keys to the POST body, floats to argv.
- ``test_reference_as_written[r-*]`` (8): an output is handed on as written, never read
  again: ``$<secrets.TOK>``, ``$<inputs.m>`` and ``$<plan.name>`` texts (printed by a tool
  from ``$$<``), ``{tag}`` into an argv template (alone and inside a string), ``0x10`` and
  ``yes`` stay strings, ``{mode}`` into an http URL template.

Seen (round 124: 98 ids, 89 passed, 9 xfailed (strict); 56-67 s wall on 1 worker, the two
labs built in parallel), one class.

**static-params-outside-action-checked-at-run** (9 ids: ``test_limit_holds[
l-fallback-inputs, l-precond-inputs, l-verify-inputs, l-fallback-task, l-fallback-literal,
l-precond-literal, l-kid-lit-list, l-kid-lit-str, l-kid-lit-twice]``): params over
``max_params_bytes`` that consist only of what the plan writes (a literal, ``$<inputs.*>``,
``$<plan.task>``) are refused at validation when they are an action's own params
(``l-inputs-twice``, ``l-task-twice`` and every ``l-*-static`` are ``invalid``), but not
when they are a fallback step's, a precondition's or a verify check's params, or a pinned
plan's literal inputs: ``plangate validate`` says valid, the plan is frozen and approved,
runs, and fails only when that step comes (``E_LIMIT_EXCEEDED``, the tool not called).
Before that the earlier work ran: action 1 of ``l-verify-inputs``, ``l-fallback-inputs``,
``l-fallback-task`` and ``l-fallback-literal`` was called (once each). Round 122's fix note
says the static lists in a fallback step, a precondition, a verify check and a pinned plan
are "E_LIMIT_EXCEEDED at validation"; its ids asserted only that the call was never made,
and 3,000 ``[]`` in a fallback step validates today. docs/configuration.md,
``limits.max_params_bytes``: "past the limit the plan is `E_LIMIT_EXCEEDED` at validation
(for inputs and plan fields) or the action fails with it at run time (tool outputs)".
Repro::

    # plangate.yml: limits: {max_params_bytes: 4000}; tools emit (exits 3), ok (exec)
    # plans/fb/PLAN.yml: inputs: {m: <2,100 x "b">}; action 1: emit, on_failure: fallback,
    #   fallback: [{id: '1.1', tool: ok, why: w, params: {s: "$<inputs.m>$<inputs.m>"}}]
    plangate validate --config plangate.yml plans/fb/PLAN.yml   # valid (sha256:...)
    # the same s in action 1's own params: E_LIMIT_EXCEEDED at actions[0].params, invalid
    # a fallback step's params {o: [[], [], ...]} (3,000): valid too
    plangate run --once; (Alice approves); plangate run --once
    # action 1 runs, fails; step 1.1: E_LIMIT_EXCEEDED "the params resolve to more than
    # 4000 characters of JSON"; plan failed (a verify check: E_VERIFY_FAILED after the
    # action ran; a pinned plan's literal input: failed at its action 1)

Fixed (2026-12-07, fix125v): the static size check (``plans._check_param_sizes``) resolved
only each action's own ``params`` against the plan's inputs and fields; the other places
the run resolves (the plan's and each step's preconditions, a verify tool's params, every
fallback step's, a pinned plan's ``inputs``) were counted only by the run, when their turn
came, and what a pinned plan's params make of the inputs the parent gives it was never
counted before the run. The check now walks one list of the places the run resolves,
``rules.param_sites`` (the list the reference rules walk, held to the schema's
``RefFreeKeys`` fields by ``tests/plan/test_param_sites.py``), with the run's own
``refs.resolve`` count, and resolves each pinned plan's sites against the inputs the parent
gives it (``E_LIMIT_EXCEEDED`` at ``actions[N].inputs``, naming the pinned plan's place).
``validate``, ``freeze``, the controller's pass, ``check`` and MCP ``validate``/``submit``
share that validator. The 9 ids pass: each plan is ``invalid`` at validation and nothing of
it runs (``tests/execution/test_params_size_limit.py``: every place, a literal, an input and
``$<plan.task>``, and a control under the limit).

Held: every static value over the limit in an action's own params (control-character
escapes in values and keys counted as ``\u0001``, numbers as the tool gets them: ``1e15``
as 16 digits, ``0x1F...`` as decimal, ``1e-7`` as ``1e-07``, astral characters, a GET
query, an argv template, ``$<inputs.*>`` and ``$<plan.task>`` repeated) was ``invalid`` at
validation; outputs of control characters, backslashes and ``1E15`` were counted as JSON
writes them (the outputs' bound, ``E_LIMIT_EXCEEDED``); U+0958 and U+FDFA reached the tool
as written (no normalisation). No secret form leaked to any reader: percent (both hex
cases, cp1252), HTML (named and numeric), ``\u`` and ``\/`` JSON escapes, NFD, halves on
two lines, upper case, a secret inside another, cuts of the error message at 300
characters (the prefix became ``***``), 2- and 3-character secrets and a common word,
``E_OUTPUT_MISSING``, verify and precondition failures, an echoing server (200 and 500), a
refused connection, a missing executable, a python exception. Every same-hash pair reached
the tools byte for byte alike (exec stdin and argv, POST body, GET query, python kwargs, an
echo's result in a string); the NFC/NFD and NFKC twins of keys and values got two hashes;
``1e400``, ``.inf``, a lone-surrogate escape and an integer of 2^53 were refused. Outputs
were handed on as written: reference text, argv and URL templates, ``0x10`` and ``yes``.

Seen, not asserted: ``s-uni-pct-cp`` (UNI's cp1252 bytes percent-encoded on stderr) was
recorded ``q=***%E9``: the last character (``é``) stays readable; one character, below the
documented 4-character parts. ``s-word-upper`` first ran with WORD ``welcome`` (7
characters): ``WELCOME`` was written everywhere, as documented ("for values of 8 characters
or more with letters, in another case ... shorter values are matched in their own case
only"), so WORD is 8 letters here. ``v-2e53-over``: ``9007199254740992.0`` (a float, 2^53)
is frozen and runs while the integer ``9007199254740992`` is refused (two hashes).

Not tried (time): ``foreach``/flows over lists (none documented for params), PLAN.json/
PLAN.toon sources of the same static values, MCP ``submit``/``validate`` of the broken
plans, a ``.gitattributes`` CRLF working tree, secrets in response header values and
redirect ``Location`` headers, ``max_journal_bytes`` and ``max_result_bytes`` against the
numeric spellings, a secret split across two outputs of one action.
"""

from __future__ import annotations

import base64
import html
import http.server
import json
import re
import socket
import subprocess
import sys
import threading
import unicodedata
import urllib.parse
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from advkit import ALICE, Lab, build_all, cases
from mcpkit import answers
from oraclekit import notify_receiver, ui_daemon
from test_round2_execution_kit import shared
from test_round61_surface_page import _get

PY = sys.executable
LIMIT = 4000

TOK = "Tk7Hq2Zp9Xw4Lm6Vb"
#: a secret that holds another (TOK) inside it, with more on both sides
SECRETS: dict[str, str] = {
    "TOK": TOK,
    "TOKX": "Pf6Jw1" + TOK + "Rr5Nc8Yd3Fg1",
    "SPEC": "Sp3<Zk&9\"Wq>4'Xm/8+Vn",
    "UNI": "P\u00e455w\u00f6rd\u20acKx9Tz\u00e9",
    "SH": "Qz",
    "S3": "Xj7",
    "WORD": "sunshine",
}
SHORT = ("SH", "S3", "WORD")

#: the one script behind every exec tool: records its call (argv, stdin) to ``REC_LOG``,
#: then prints ``out`` with the secret param ``sec`` spliced in: ``@S`` as is, ``@P``
#: percent-encoded, ``@H`` HTML-escaped, ``@U`` every character as ``\uXXXX``, ``@J`` its
#: JSON (ASCII) escape, ``@1``/``@2`` its halves; ``@A`` n ``a``, ``@C`` n ``\u0001``
#: escapes, ``@K`` n escaped backslashes, ``@F`` n ``1E15``; mode ``err*`` to stderr, exit
#: 3; mode ``*cp`` writes cp1252 bytes.
TOOL = r"""
import html, json, os, re, sys, unicodedata, urllib.parse
data = sys.stdin.buffer.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data.decode("utf-8", "replace")}) + "\n")
p = json.loads(data) if data.strip() else {}
out = p.get("out")
if out is None:
    print(json.dumps({"ok": True}))
    sys.exit(0)
sec, n, mode = p.get("sec", ""), int(p.get("n", 0)), p.get("mode", "")
rep = {
    "@P": urllib.parse.quote(sec, safe=""), "@H": html.escape(sec),
    "@U": "".join("\\u%04x" % ord(c) for c in sec), "@J": json.dumps(sec)[1:-1],
    "@1": sec[: len(sec) // 2], "@2": sec[len(sec) // 2 :], "@A": "a" * n,
    "@C": "\\u0001" * n, "@K": "\\\\" * n, "@F": ",".join(["1E15"] * n),
    "@L": re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), urllib.parse.quote(sec, safe="")),
    "@N": "".join(c if c.isalnum() else "&#%d;" % ord(c) for c in sec),
    "@Q": json.dumps(sec)[1:-1].replace("/", "\\/"), "@D": unicodedata.normalize("NFD", sec),
    "@I": urllib.parse.quote(sec.encode("cp1252"), safe=""), "@W": sec.upper(), "@S": sec,
}
for k, v in rep.items():
    out = out.replace(k, v)
raw = out.encode("cp1252" if mode.endswith("cp") else "utf-8")
if mode.startswith("err"):
    sys.stderr.buffer.write(raw)
    sys.exit(3)
sys.stdout.buffer.write(raw)
"""

PYTOOL = r"""
import json, os, urllib.parse

def act(**kw):
    if "sec" in kw:
        raise RuntimeError("boom q=" + urllib.parse.quote(kw["sec"], safe=""))
    with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"argv": ["py:" + str(kw.get("tag"))], "stdin": repr(kw)}) + "\n")
    return {"ok": True}
"""

TOOLS = ["emit", "chk", "av", "hp", "hx", "hz", "nx", "py", "echo"]


def _plan(slug: str, actions: str, top: str = "", status: str = "pending_approval") -> str:
    avail = ", ".join(f"{{name: {t}}}" for t in TOOLS)
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: {status}\n{top}"
        f"available_tools: [{avail}]\nactions:\n{actions}"
    )


def _ind(text: str, n: int) -> str:
    return "".join(" " * n + line + "\n" for line in text.split("\n"))


def _act(aid: int, tag: str, params: str = "", tool: str = "emit", more: str = "") -> str:
    inner = f"tag: {tag}" + (f", {params}" if params else "")
    return f"  - id: {aid}\n    tool: {tool}\n    why: w\n    params: {{{inner}}}\n{more}"


def _emit(slug: str, out: str, n: int = 0, extra: str = "", outputs: bool = True) -> str:
    more = "    outputs: [{name: x, path: $.json.x}]\n" if outputs else ""
    return _act(1, f"{slug}-1", f"out: {json.dumps(out)}, n: {n}{extra}", more=more)


def _lists(n: int, item: str = "[]") -> str:
    return "[" + ", ".join([item] * n) + "]"


X = "$<actions[1].outputs.x>"
LONG = "b" * 2100

KIDS: dict[str, str] = {
    "kid-one": _plan(
        "kid-one",
        _act(1, "$<inputs.tag>", 's: "$<inputs.a>"'),
        top='inputs: {a: "", tag: t}\n',
        status="draft",
    ).replace("tag: $<inputs.tag>", 'tag: "$<inputs.tag>"'),
    "kid-two": _plan(
        "kid-two",
        _act(1, "$<inputs.tag>", 's: "$<inputs.a>$<inputs.a>"'),
        top='inputs: {a: "", tag: t}\n',
        status="draft",
    ).replace("tag: $<inputs.tag>", 'tag: "$<inputs.tag>"'),
}


def _nest(aid: int, kid: str, pins: dict[str, str], inputs: str) -> str:
    return (
        f'  - id: {aid}\n    plan: {{path: plans/{kid}, hash: "{pins[kid]}"}}\n    why: w\n'
        f"    inputs: {{{inputs}}}\n"
    )


# -- limits ---------------------------------------------------------------------------------
#: id -> (plan text, kind): ``static``: every value is in the plan, so the plan is
#: ``invalid`` (E_LIMIT_EXCEEDED) at validation and never runs; ``run``: the call is never
#: made, E_LIMIT_EXCEEDED; ``any``: whatever happens, the call gets at most LIMIT characters
def limit_plans(pins: dict[str, str]) -> dict[str, tuple[str, str]]:
    p: dict[str, tuple[str, str]] = {}

    def static(slug: str, params: str, tool: str = "emit") -> str:
        return _plan(slug, _act(1, slug, params, tool=tool))

    p["l-ctrl-static"] = (static("l-ctrl-static", 's: "' + "\\x01" * 700 + '"'), "static")
    keys = ", ".join('"' + "\\x01" * 250 + f'{c}": 1' for c in "abc")
    p["l-ctrl-key"] = (static("l-ctrl-key", "m: {" + keys + "}"), "static")
    p["l-num-e15"] = (static("l-num-e15", f"o: {_lists(300, '1e15')}"), "static")
    p["l-num-hex"] = (static("l-num-hex", f"o: {_lists(250, '0x1FFFFFFFFFFFFF')}"), "static")
    p["l-num-small"] = (static("l-num-small", f"o: {_lists(700, '1e-7')}"), "static")
    p["l-astral-static"] = (
        static("l-astral-static", 's: "' + "\U0001f600" * 4100 + '"'),
        "static",
    )
    p["l-static-query"] = (
        _plan(
            "l-static-query",
            "  - id: 1\n    tool: hx\n    why: w\n"
            f"    params: {{mode: ok, seg: l-static-query, q: {_lists(3000)}}}\n",
        ),
        "static",
    )
    p["l-argv-static"] = (static("l-argv-static", f"v: {_lists(3000)}", tool="av"), "static")
    p["l-inputs-twice"] = (
        _plan(
            "l-inputs-twice",
            _act(1, "l-inputs-twice", 's: "$<inputs.m>$<inputs.m>"'),
            top=f"inputs: {{m: {LONG}}}\n",
        ),
        "static",
    )
    p["l-task-twice"] = (
        _plan("l-task-twice", _act(1, "l-task-twice", 's: "$<plan.task>$<plan.task>"')).replace(
            "  task: t\n", f"  task: {LONG}\n"
        ),
        "static",
    )
    p["l-fallback-inputs"] = (
        _plan(
            "l-fallback-inputs",
            _act(1, "l-fallback-inputs-1", "out: no, mode: err", more="    on_failure: fallback\n")
            + "    fallback:\n      - {id: '1.1', tool: emit, why: w, "
            'params: {tag: l-fallback-inputs, s: "$<inputs.m>$<inputs.m>"}}\n',
            top=f"inputs: {{m: {LONG}}}\n",
        ),
        "static",
    )
    twice = 's: "$<inputs.m>$<inputs.m>"'
    p["l-precond-inputs"] = (
        _plan(
            "l-precond-inputs",
            _act(1, "l-precond-inputs-1") + "    preconditions:\n      - {tool: chk, "
            f"params: {{tag: l-precond-inputs, {twice}}}, "
            "expect: {path: $.json.ok, equals: true}}\n",
            top=f"inputs: {{m: {LONG}}}\n",
        ),
        "static",
    )
    p["l-verify-inputs"] = (
        _plan(
            "l-verify-inputs",
            _act(
                1,
                "l-verify-inputs-1",
                more="    verify: {tool: chk, "
                f"params: {{tag: l-verify-inputs, {twice}}}, "
                "expect: {path: $.json.ok, equals: true}, timeout: 5, interval: 1}\n",
            ),
            top=f"inputs: {{m: {LONG}}}\n",
        ),
        "static",
    )
    p["l-fallback-task"] = (
        _plan(
            "l-fallback-task",
            _act(1, "l-fallback-task-1", "out: no, mode: err", more="    on_failure: fallback\n")
            + "    fallback:\n      - {id: '1.1', tool: emit, why: w, "
            'params: {tag: l-fallback-task, s: "$<plan.task>$<plan.task>"}}\n',
        ).replace("  task: t\n", f"  task: {LONG}\n"),
        "static",
    )
    p["l-fallback-literal"] = (
        _plan(
            "l-fallback-literal",
            _act(1, "l-fallback-literal-1", "out: no, mode: err", more="    on_failure: fallback\n")
            + "    fallback:\n      - {id: '1.1', tool: emit, why: w, "
            f"params: {{tag: l-fallback-literal, s: {'d' * 4200}}}}}\n",
        ),
        "static",
    )
    p["l-precond-literal"] = (
        _plan(
            "l-precond-literal",
            _act(1, "l-precond-literal-1") + "    preconditions:\n      - {tool: chk, "
            f"params: {{tag: l-precond-literal, s: {'d' * 4200}}}, "
            "expect: {path: $.json.ok, equals: true}}\n",
        ),
        "static",
    )
    p["l-kid-lit-list"] = (
        _plan(
            "l-kid-lit-list", _nest(1, "kid-one", pins, f"tag: l-kid-lit-list, a: {_lists(3000)}")
        ),
        "static",
    )
    p["l-kid-lit-str"] = (
        _plan("l-kid-lit-str", _nest(1, "kid-one", pins, f"tag: l-kid-lit-str, a: {'c' * 4200}")),
        "static",
    )
    p["l-kid-lit-twice"] = (
        _plan("l-kid-lit-twice", _nest(1, "kid-two", pins, f"tag: l-kid-lit-twice, a: {LONG}")),
        "static",
    )
    p["l-ctrl-ref"] = (
        _plan(
            "l-ctrl-ref",
            _emit("l-ctrl-ref", '{"x":"@C"}', 700) + _act(2, "l-ctrl-ref", f'l: "{X}"'),
        ),
        "run",
    )
    p["l-bslash-ref"] = (
        _plan(
            "l-bslash-ref",
            _emit("l-bslash-ref", '{"x":"@K"}', 2100) + _act(2, "l-bslash-ref", f'l: "{X}"'),
        ),
        "run",
    )
    p["l-num-e15-ref"] = (
        _plan(
            "l-num-e15-ref",
            _emit("l-num-e15-ref", '{"x":[@F]}', 300) + _act(2, "l-num-e15-ref", f'l: "{X}"'),
        ),
        "run",
    )
    p["l-num-e15-text"] = (
        _plan(
            "l-num-e15-text",
            _emit("l-num-e15-text", '{"x":[@F]}', 300) + _act(2, "l-num-e15-text", f'l: "n={X}"'),
        ),
        "run",
    )
    p["l-nfc-static"] = (static("l-nfc-static", 's: "' + "\u0958" * 2100 + '"'), "any")
    p["l-nfkc-static"] = (static("l-nfkc-static", 's: "' + "\ufdfa" * 1000 + '"'), "any")
    return p


# -- secrets --------------------------------------------------------------------------------
def _sec(name: str) -> str:
    return f'"$<secrets.{name}>"'


def secret_plans() -> dict[str, tuple[str, str]]:
    """id -> (plan text, the secret its tool handles)."""
    s: dict[str, tuple[str, str]] = {}

    def one(slug: str, name: str, out: str, mode: str = "", n: int = 0) -> None:
        extra = f", sec: {_sec(name)}" + (f", mode: {mode}" if mode else "")
        s[slug] = (_plan(slug, _emit(slug, out, n, extra, outputs=False)), name)

    one("s-pct-stdout", "SPEC", "url=http://h/?q=@P")
    one("s-pct-stderr", "SPEC", "failed: GET http://h/?q=@P", mode="err")
    one("s-html-stdout", "SPEC", "<p>@H</p>")
    one("s-html-stderr", "SPEC", "<p>@H</p>", mode="err")
    one("s-uesc-json", "TOK", '{"x":"@U"}')
    one("s-uesc-stderr", "TOK", '{"x":"@U"}', mode="err")
    one("s-lines", "TOK", "@1\n@2")
    one("s-substr", "TOKX", '{"x":"@S"}')
    one("s-substr-err", "TOKX", "bad token @S", mode="err")
    one("s-uni-json", "UNI", '{"x":"@J"}')
    one("s-uni-cp1252", "UNI", "pw=@S", mode="outcp")
    one("s-uni-pct", "UNI", "q=@P", mode="err")
    one("s-pct-lower", "SPEC", "q=@L", mode="err")
    one("s-html-num", "SPEC", "<p>@N</p>")
    one("s-json-slash", "SPEC", '{"x":"@Q"}')
    one("s-uni-nfd", "UNI", "pw=@D")
    one("s-uni-pct-cp", "UNI", "q=@I", mode="err")
    one("s-word-upper", "WORD", "v=[[@W]]")
    one("s-tok-upper", "TOK", "v=@W", mode="err")
    for k in (190, 290, 294, 296, 3990):
        one(f"s-cut-{k}", "TOK", "@A@S", mode="err", n=k)
    one("s-short-2", "SH", "v=[[@S]] j=[[@U]] p=[[@P]]")
    one("s-short-3", "S3", "v=[[@S]] j=[[@U]] p=[[@P]]", mode="err")
    one("s-word", "WORD", "v=[[@S]] h=[[@H]]")
    sec = f"sec: {_sec('SPEC')}"
    s["s-out-missing"] = (
        _plan("s-out-missing", _emit("s-out-missing", "not json q=@P <@H>", 0, f", {sec}")),
        "SPEC",
    )
    s["s-verify-got"] = (
        _plan(
            "s-verify-got",
            _act(
                1,
                "s-verify-got-1",
                more="    verify: {tool: chk, "
                f"""params: {{tag: s-verify-got, out: '{{"y":"q=@P"}}', {sec}}}, """
                "expect: {path: $.json.y, equals: nope}, timeout: 2, interval: 1}\n",
            ),
        ),
        "SPEC",
    )
    s["s-precond-got"] = (
        _plan(
            "s-precond-got",
            _act(1, "s-precond-got-1") + "    preconditions:\n      - {tool: chk, "
            f"""params: {{tag: s-precond-got, out: '{{"y":"<@H>"}}', {sec}}}, """
            "expect: {path: $.json.y, equals: nope}}\n",
        ),
        "SPEC",
    )
    s["s-http-echo"] = (
        _plan(
            "s-http-echo",
            "  - id: 1\n    tool: hx\n    why: w\n"
            f"    params: {{mode: echo, seg: e, q: {_sec('SPEC')}}}\n",
        ),
        "SPEC",
    )
    s["s-http-500"] = (
        _plan(
            "s-http-500",
            f"  - id: 1\n    tool: hx\n    why: w\n    params: {{mode: err, seg: {_sec('TOK')}}}\n",
        ),
        "TOK",
    )
    s["s-http-refused"] = (
        _plan(
            "s-http-refused",
            f"  - id: 1\n    tool: hz\n    why: w\n    params: {{seg: {_sec('SPEC')}}}\n",
        ),
        "SPEC",
    )
    s["s-argv-missing"] = (
        _plan(
            "s-argv-missing",
            f"  - id: 1\n    tool: nx\n    why: w\n    params: {{v: {_sec('TOK')}}}\n",
        ),
        "TOK",
    )
    s["s-py-pct"] = (
        _plan("s-py-pct", _act(1, "s-py-pct", f"sec: {_sec('SPEC')}", tool="py")),
        "SPEC",
    )
    return s


# -- references: an output is used as written, never read again -------------------------
#: id -> (what action 1 prints as ``x``, the text around the reference, what ``av`` must get)
RESOLVE: dict[str, tuple[str, str, str]] = {
    "r-secret-text": ("$$<secrets.TOK>", "", "$<secrets.TOK>"),
    "r-inputs-text": ("$$<inputs.m>", "", "$<inputs.m>"),
    "r-template": ("{tag}", "", "{tag}"),
    "r-template-in": ("{tag}", "p-", "p-{tag}"),
    "r-yaml-hex": ("0x10", "", "0x10"),
    "r-yaml-yes": ("yes", "", "yes"),
    "r-name-in": ("$$<plan.name>", "p-", "p-$<plan.name>"),
    "r-hx-template": ("{mode}", "", ""),
}
RESOLVE_IDS = list(RESOLVE)


def resolve_plans() -> dict[str, str]:
    out = {}
    for rid, (x, around, _) in RESOLVE.items():
        first = _act(
            1,
            f"{rid}-1",
            "out: " + json.dumps(json.dumps({"x": x})),
            more="    outputs: [{name: x, path: $.json.x}]\n",
        )
        if rid == "r-hx-template":
            second = f'  - id: 2\n    tool: hx\n    why: w\n    params: {{mode: ok, seg: "{X}"}}\n'
        else:
            second = _act(2, rid, f'v: "{around}{X}"', tool="av")
        out[rid] = _plan(rid, first + second, top="inputs: {m: zz}\n")
    return out


# -- values: two spellings; one hash must mean the same bytes -------------------------------
#: id -> (inputs A, inputs B, params A, params B); the tool is ``emit`` (``hp`` for ``v-hp-*``)
VALUES: dict[str, tuple[str, str, str, str]] = {
    "v-nfc-key": ("", "", "caf\u00e9: 1", "cafe\u0301: 1"),
    "v-fw-key": ("", "", "dry_run: true", "dry\uff3frun: true"),
    "v-nfkc-val": ("", "", 'x: "\ufb01le"', 'x: "file"'),
    "v-nfc-val": ("", "", 'x: "\u00e9"', 'x: "e\u0301"'),
    "v-e15": ("", "", "x: 1e15", "x: 1000000000000000"),
    "v-e15-text": ("z: 1e15", "z: 1000000000000000", 's: "n=$<inputs.z>"', 's: "n=$<inputs.z>"'),
    "v-negzero": ("", "", "x: -0", "x: 0"),
    "v-negzero-text": ("z: -0.0", "z: 0", 's: "n=$<inputs.z>"', 's: "n=$<inputs.z>"'),
    "v-small-text": ("z: 1e-7", "z: 0.0000001", 's: "n=$<inputs.z>"', 's: "n=$<inputs.z>"'),
    "v-1e400": ("", "", "x: 1e400", "x: .inf"),
    "v-yes": ("", "", "x: yes", 'x: "yes"'),
    "v-on-key": ("", "", "on: 1", '"on": 1'),
    "v-octal": ("", "", "x: 017", "x: 17"),
    "v-0o": ("", "", "x: 0o17", "x: 15"),
    "v-tilde": ("", "", "x: ~", "x: null"),
    "v-null-text": ("n: ~", "n: null", 's: "a=$<inputs.n>"', 's: "a=$<inputs.n>"'),
    "v-surrogate": ("", "", 'x: "\\ud83d\\ude00"', 'x: "\\U0001F600"'),
    "v-crlf-block": ("", "", "s: |\n  a\n  b", "s: |\n  a\n  b"),
    "v-crlf-quoted": ("", "", 's: "a\n  b"', 's: "a\n  b"'),
    "v-esc-key": ("", "", '"dry\\x5frun": true', "dry_run: true"),
    "v-tab": ("", "", 'x: "a\\tb"', 'x: "a\tb"'),
    "v-2e53": ("", "", "x: 9007199254740991", "x: 9007199254740991.0"),
    "v-2e53-over": ("", "", "x: 9007199254740992.0", "x: 9007199254740992"),
    "v-hp-e15": ("", "", "x: [1e15, 1.0e20]", "x: [1000000000000000, 100000000000000000000.0]"),
    "v-hp-esc-key": ("", "", '"\\xe9\\U0001F600": "\\t"', '"\u00e9\U0001f600": "\t"'),
    "v-av-e15": ("", "", "v: 1e15", "v: 1000000000000000"),
    "v-av-float": ("", "", "v: [2.50, 1e20, -0.0]", "v: [2.5, 100000000000000000000.0, 0]"),
    "v-hx-num": ("", "", "mode: ok\nq: 1e15\nr: -0.0", "mode: ok\nq: 1000000000000000\nr: 0"),
    "v-py-e15": ("", "", "x: 1e15\ny: 2.50", "x: 1000000000000000\ny: 2.5"),
    "v-echo-e15": ("", "", "a: 1e15", "a: 1000000000000000"),
}
#: pairs the docs say are one value (the hash and the bytes must agree)
SAME = {
    "v-e15",
    "v-e15-text",
    "v-negzero",
    "v-negzero-text",
    "v-small-text",
    "v-yes",
    "v-on-key",
    "v-octal",
    "v-0o",
    "v-tilde",
    "v-null-text",
    "v-crlf-block",
    "v-crlf-quoted",
    "v-esc-key",
    "v-tab",
    "v-2e53",
    "v-hp-e15",
    "v-hp-esc-key",
    "v-av-e15",
    "v-av-float",
    "v-hx-num",
    "v-py-e15",
    "v-echo-e15",
}
CRLF = {"v-crlf-block", "v-crlf-quoted"}
TOOL_OF = {"hp": "hp", "av": "av", "hx": "hx", "py": "py", "ec": "echo"}
VALUE_IDS = list(VALUES)


def value_texts(side: int) -> dict[str, bytes]:
    out = {}
    for vid, (ia, ib, pa, pb) in VALUES.items():
        inputs, params = (ia, pa) if side == 0 else (ib, pb)
        tool = TOOL_OF.get(vid[2:4], "emit")
        top = f"inputs:\n{_ind(inputs, 2)}" if inputs else ""
        tag = f"seg: {vid}" if tool == "hx" else f"tag: {vid}"
        if tool == "echo":
            tag = "n: 1"
        body = f"  - id: 1\n    tool: {tool}\n    why: w\n    params:\n" + _ind(
            f"{tag}\n" + params, 6
        )
        if tool == "echo":
            body = body.rstrip(" \n") + "\n" + _act(2, vid, 's: "r=$<actions[1].result>"')
        text = _plan(vid, body.rstrip(" \n") + "\n", top)
        if side == 1 and vid in CRLF:
            text = text.replace("\n", "\r\n")
        out[vid] = text.encode("utf-8")
    return out


# -- the lab --------------------------------------------------------------------------------
class Server(http.server.BaseHTTPRequestHandler):
    seen: list[dict[str, Any]]

    def do_GET(self) -> None:
        self.seen.append({"method": "GET", "path": self.path, "body": ""})
        echo = json.dumps({"path": self.path}).encode()
        if self.path.startswith("/echo/"):
            self._send(200, echo)
        elif self.path.startswith("/err/"):
            self._send(500, echo)
        else:
            self._send(200, b'{"ok": true}')

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(size)
        self.seen.append(
            {"method": "POST", "path": self.path, "body": body.decode("utf-8", "replace")}
        )
        self._send(200, b'{"ok": true}')

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _build_one(root: Path, side: int) -> dict[str, Any]:
    seen: list[dict[str, Any]] = []
    handler = type("H", (Server,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hook, posts = notify_receiver()
    try:
        got = _play(root, side, server.server_address[1], hook.server_address[1])
        got["posts"] = list(posts)
        got["seen"] = list(seen)
        return got
    finally:
        for one in (server, hook):
            one.shutdown()
            one.server_close()


def _lab(root: Path, port: int, hook: int) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.py").write_text(TOOL)
    (root / "pylib").mkdir(exist_ok=True)
    (root / "pylib" / "pyt124e.py").write_text(PYTOOL)
    (root / "sec.yml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in SECRETS.items()))
    t = json.dumps([PY, str(root / "t.py"), "{tag}"])
    tv = json.dumps([PY, str(root / "t.py"), "{tag}", "{v}"])
    return Lab(
        root / "lab",
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n"
        f"python_path: [{json.dumps(str(root / 'pylib'))}]\n"
        f"limits: {{max_params_bytes: {LIMIT}}}\n"
        f'notify: {{urls: ["http://127.0.0.1:{hook}/h"]}}\n',
        tools=(
            f"emit: {{kind: exec, argv: {t}}}\n"
            f"chk: {{kind: exec, argv: {t}, idempotent: true, risk: low}}\n"
            f"av: {{kind: exec, argv: {tv}}}\n"
            'nx: {kind: exec, argv: ["/nonexistent-atk124e/bin", "{v}"]}\n'
            f'hp: {{kind: http, method: POST, url: "http://127.0.0.1:{port}/{{tag}}"}}\n'
            f'hx: {{kind: http, method: GET, url: "http://127.0.0.1:{port}/{{mode}}/{{seg}}"}}\n'
            f'hz: {{kind: http, method: GET, url: "http://127.0.0.1:{_closed_port()}/{{seg}}"}}\n'
            'py: {kind: python, target: "pyt124e:act"}\n'
        ),
    )


def _play(root: Path, side: int, port: int, hook: int) -> dict[str, Any]:
    lab = _lab(root, port, hook)
    texts: dict[str, str | bytes] = dict(value_texts(side))
    limits: dict[str, tuple[str, str]] = {}
    secrets: dict[str, tuple[str, str]] = {}
    if side == 0:
        for slug, text in KIDS.items():
            lab.write(slug, text)
        pins = {}
        for slug in KIDS:
            out = lab.cli("hash", str(lab.repo / "plans" / slug / "PLAN.yml"))
            pins[slug] = out.stdout.strip().split()[-1] if out.stdout.strip() else "sha256:0"
        limits = limit_plans(pins)
        secrets = secret_plans()
        texts.update(resolve_plans())
        texts.update({k: v[0] for k, v in limits.items()})
        texts.update({k: v[0] for k, v in secrets.items()})
    for slug, text in texts.items():
        lab.write(slug, text)
    lab.commit("plans")
    lab.run()
    for slug in texts:
        if lab.plan(slug)["plan"]["status"] == "pending_approval":
            lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    calls = []
    if lab.log.exists():
        calls = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    rows = lab.rows()
    got: dict[str, Any] = {
        "calls": calls,
        "rows": rows,
        "hashes": {
            p[len("plans/") :]: r.get("frozen_hash")
            for p, r in rows.items()
            if isinstance(r, dict) and p.startswith("plans/v-")
        },
    }
    if side:
        return got
    cfg = str(lab.config)
    got["finals"] = {
        slug: lab.git("show", f"HEAD:plans/{slug}/PLAN.yml", check=False)[:30000] for slug in limits
    }

    def hist(slug: str) -> str:
        return subprocess.run(
            ["git", "log", "-p", "--all", "--format=%H%n%B", "--", f"plans/{slug}"],
            cwd=lab.repo,
            env=lab.env(),
            capture_output=True,
            check=True,
        ).stdout.decode("utf-8", "replace")

    got["history"] = {slug: hist(slug) for slug in secrets}
    status_text = lab.cli("status", "--config", cfg).stdout
    got["status_text"] = {
        slug: "\n".join(x for x in status_text.splitlines() if slug in x) for slug in secrets
    }
    got["shows"] = {
        slug: (lambda o: o.stdout + o.stderr)(
            lab.cli("show", "-v", "--config", cfg, f"plans/{slug}", cwd=lab.repo)
        )
        for slug in secrets
    }
    names = list(secrets)
    replies = answers(lab, [("log", {"path": f"plans/{slug}"}) for slug in names])
    got["mcp"] = {
        slug: json.dumps(r, ensure_ascii=False) for slug, r in zip(names, replies, strict=True)
    }
    journal = lab.state / "journal"
    got["journal"] = {
        slug: "".join(
            f.read_text(errors="replace") for f in (journal / f"plans%2F{slug}").glob("*.jsonl")
        )
        for slug in secrets
    }
    ui_config = lab.root / "plangate-ui.yml"
    ui_config.write_text(lab.config.read_text() + "ui: {listen: 0}\n")
    pages: dict[str, str] = {}
    with ui_daemon(lab, ui_config, f"plans/{names[0]}") as ui:
        for slug in secrets:
            pages[slug] = "".join(
                str(_get(ui, f"{kind}/plans/{slug}")[2]) for kind in ("/api/plan", "/plan")
            )
    got["pages"] = pages
    return got


def _build(root: Path) -> Any:
    return build_all(
        root, {"a": lambda r: _build_one(r, 0), "b": lambda r: _build_one(r, 1)}, workers=2
    )


@pytest.fixture(scope="module")
def got(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "r124e-values", _build).got


def _calls(side: dict[str, Any], tag: str) -> list[dict[str, Any]]:
    return [c for c in side["calls"] if c["argv"][:1] == [tag]]


def _row(side: dict[str, Any], slug: str) -> Any:
    row = side["rows"].get(f"plans/{slug}", {})
    return (row.get("status"), row.get("code"), str(row.get("reason"))[:300])


def _size(text: str) -> int:
    """Characters of the params as JSON writes them (the exec tool's stdin)."""
    return len(json.dumps(json.loads(text), ensure_ascii=False))


# -- the ids --------------------------------------------------------------------------------
BROKEN: dict[str, Any] = {}
LIMIT_IDS = [
    "l-ctrl-static",
    "l-ctrl-key",
    "l-num-e15",
    "l-num-hex",
    "l-num-small",
    "l-astral-static",
    "l-static-query",
    "l-argv-static",
    "l-inputs-twice",
    "l-task-twice",
    "l-fallback-inputs",
    "l-precond-inputs",
    "l-verify-inputs",
    "l-fallback-task",
    "l-fallback-literal",
    "l-precond-literal",
    "l-kid-lit-list",
    "l-kid-lit-str",
    "l-kid-lit-twice",
    "l-ctrl-ref",
    "l-bslash-ref",
    "l-num-e15-ref",
    "l-num-e15-text",
    "l-nfc-static",
    "l-nfkc-static",
]
LIMIT_KIND = {k: v[1] for k, v in limit_plans({"kid-one": "x", "kid-two": "x"}).items()}


@pytest.mark.parametrize("slug", cases(LIMIT_IDS, LIMIT_IDS, BROKEN))
def test_limit_holds(got: dict[str, Any], slug: str) -> None:
    a = got["a"]
    kind = LIMIT_KIND[slug]
    if slug == "l-static-query":
        sizes = [len(s["path"]) for s in a["seen"] if "/l-static-query" in s["path"]]
    else:
        sizes = [_size(c["stdin"]) for c in _calls(a, slug)]
    if slug == "l-argv-static":
        sizes = [len(c["argv"][1]) for c in _calls(a, slug)]
    assert all(n <= LIMIT for n in sizes), (sizes, _row(a, slug))
    if kind == "any":
        return
    assert sizes == [], (sizes, _row(a, slug))
    said = json.dumps(a["rows"].get(f"plans/{slug}")) + a["finals"].get(slug, "")
    assert "E_LIMIT_EXCEEDED" in said, _row(a, slug)
    if kind == "static":  # every value is the plan's own: refused when validated
        assert _row(a, slug)[0] == "invalid", _row(a, slug)


def needles(name: str) -> dict[str, str]:
    """The forms of a secret a reader undoes at a glance; a short secret (1-3 characters, a
    common word) is looked for between the ``[[``/``]]`` marks its tool printed."""
    value = SECRETS[name]
    raw = value.encode()
    forms = {
        "raw": value,
        "json": json.dumps(value)[1:-1],
        "pct": quote(value, safe=""),
        "plus": urllib.parse.quote_plus(value),
        "uesc": "".join(f"\\u{ord(c):04x}" for c in value),
        "html": html.escape(value),
        "b64": base64.b64encode(raw).decode(),
        "hex": raw.hex(),
        "pctl": re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(value, safe="")),
        "htmln": "".join(c if c.isalnum() else f"&#{ord(c)};" for c in value),
        "jslash": json.dumps(value)[1:-1].replace("/", "\\/"),
        "nfd": unicodedata.normalize("NFD", value),
        "pctcp": quote(value.encode("cp1252"), safe=""),
        "upper": value.upper(),
    }
    if len(value) < 8:  # "shorter values are matched in their own case only"
        del forms["upper"]
    if name in SHORT:
        return {k: f"[[{v}]]" for k, v in forms.items()}
    for i in range(len(value) - 7):
        forms[f"w{i}"] = value[i : i + 8]
    forms["head6"] = value[:6]
    return forms


def _readable(a: dict[str, Any], slug: str) -> dict[str, str]:
    return {
        "git": a["history"][slug],
        "status_json": json.dumps(a["rows"].get(f"plans/{slug}"), ensure_ascii=False),
        "status_text": a["status_text"][slug],
        "show": a["shows"][slug],
        "mcp": a["mcp"][slug],
        "notify": "\n".join(p for p in a["posts"] if slug in p),
        "page": a["pages"][slug],
        "journal": a["journal"][slug],
    }


SECRET_IDS = list(secret_plans())
SECRET_OF = {k: v[1] for k, v in secret_plans().items()}


@pytest.mark.parametrize("slug", cases(SECRET_IDS, SECRET_IDS, BROKEN))
def test_secret_never_readable(got: dict[str, Any], slug: str) -> None:
    a = got["a"]
    assert _row(a, slug)[0] in ("completed", "failed"), _row(a, slug)
    found = []
    names = [SECRET_OF[slug]] + ([] if SECRET_OF[slug] in SHORT else ["TOK", "TOKX", "SPEC"])
    for place, text in _readable(a, slug).items():
        for name in dict.fromkeys(names):
            for form, needle in needles(name).items():
                if needle in text:
                    at = text.index(needle)
                    found.append((place, name, form, text[max(0, at - 100) : at + 40]))
    assert not found, found[:6]


@pytest.mark.parametrize("slug", cases(VALUE_IDS, VALUE_IDS, BROKEN))
def test_same_hash_same_bytes(got: dict[str, Any], slug: str) -> None:
    a, b = got["a"], got["b"]
    ha, hb = a["hashes"].get(slug), b["hashes"].get(slug)
    if slug in SAME:
        assert ha == hb and str(ha).startswith("sha256:"), (ha, hb, _row(a, slug), _row(b, slug))
    if ha is None or ha != hb:
        return  # two hashes (or one refused): a reviewer approves each on its own
    if slug.startswith(("v-hp-", "v-hx-")):
        key = f"/ok/{slug}" if slug.startswith("v-hx-") else f"/{slug}"
        sa = [s for s in a["seen"] if s["path"].split("?")[0] == key]
        sb = [s for s in b["seen"] if s["path"].split("?")[0] == key]
        assert len(sa) == 1 and sa == sb, (sa, sb)
        return
    tag = f"py:{slug}" if slug.startswith("v-py-") else slug
    ca, cb = _calls(a, tag), _calls(b, tag)
    assert len(ca) == 1, (ca, _row(a, slug))
    assert len(cb) == 1, (cb, _row(b, slug))
    assert ca[0] == cb[0], (ca[0], cb[0])


@pytest.mark.parametrize("slug", cases(RESOLVE_IDS, RESOLVE_IDS, BROKEN))
def test_reference_as_written(got: dict[str, Any], slug: str) -> None:
    a = got["a"]
    assert _row(a, slug)[0] == "completed", _row(a, slug)
    if slug == "r-hx-template":
        paths = [s["path"] for s in a["seen"] if s["path"].startswith("/ok/")]
        paths = [p for p in paths if "mode" in urllib.parse.unquote(p) or p == "/ok/ok"]
        assert [urllib.parse.unquote(p).split("?")[0] for p in paths] == ["/ok/{mode}"], paths
        return
    calls = _calls(a, slug)
    assert len(calls) == 1, calls
    assert calls[0]["argv"][1] == RESOLVE[slug][2], calls[0]["argv"]
    assert json.loads(calls[0]["stdin"])["v"] == RESOLVE[slug][2], calls[0]["stdin"]
