r"""Round 129, values and secrets (atk129e).

Labs (three, built once per module in parallel by ``build_all``):

- ``err``: secrets in errors of every kind. ``secrets.file`` holds A (17 alphanumerics), B
  (17 characters with ``/ ? # & %`` and an ``é``) and MAP (``{user: app, password: PW}``).
  Plans ``ERRORS``: a resolved secret refused by a catalog ``params_schema`` at run time
  (type, ``maxLength``, ``enum``, ``pattern``, a structured secret, a secret inside text),
  a secret path that does not resolve (``$<secrets.A.x>``, ``$<secrets.MAP.nope>``,
  ``$<secrets.MAP[0]>``, a secret output's member), an http tool given a secret in its URL
  path or (GET, no placeholder) its query string with nothing listening, a tool that prints
  the secret in non-JSON output with declared outputs, a missing required output of a result
  holding the secret, a tool's last stderr line holding the secret and a precondition whose
  check reads the secret and does not hold. Each must end ``failed`` with an ``E_`` code
  (never a traceback), and no spelling of the secret (round 127's ``_forms``) may be in git
  history, ``status``, ``show -v``, MCP ``log``, the page, the journal or the passes' logs.
- ``val``: a tool output reaching the next action (``$<actions[1].outputs.o>`` whole, and
  inside text). The first tool prints a JSON text of the plan's choosing; the second records
  what it got. Values: an integer over 2^53, ``100.0``, ``-0.0``, ``1e21``, ``1e400``, NFD
  text, reference text (``$<secrets.A>``, ``$$<...>``, ``${secrets.A}``, ``$<plan.name>``),
  YAML text, a NUL, a mapping written out of order, a list. docs/plan-format.md: a whole
  reference takes the value with its JSON type; inside text its text (integers in decimal,
  other numbers Python's shortest round trip); a whole number within 2^53 is an integer; a
  resolved value is data, never scanned again.
- ``voc``: secrets that collide with the controller's own words (``succeeded``,
  ``completed``, ``executing``, ``approved``, ``plangate``, ``plangate@localhost``,
  ``alice@example.com``, the plan's name). docs/execution.md: "Very short secret values
  redact every occurrence of that text"; the records the controller reads back (its statuses,
  its own commits, the approval's approver) must still say what happened: each action runs
  once over three passes, the plan ends ``completed``, ``status`` and a fresh clone's
  ``audit`` agree, and a tool output equal to such a word is hidden without changing what runs.

  The ``val`` lab also holds the ``ovl`` plans: secrets O1..O8 (file), E2
  (``PLANGATE_SECRET_E2``) and MAP2 (a mapping whose ``password`` is O7) whose texts overlap
  (O1's last 8 characters are O2's, E2's and O7's first 8; O3's last 6 are O4's first 6;
  O1's last character is O8's first; O6 holds O1 inside it); a tool prints two run together
  (``a + b[k:]``, each whole in it) as a JSON string, a JSON key, upper-cased, or on stderr
  before exit 3.

Ids (207; 191 passed, 16 xfailed; 66-101 s at ``-n 2``, load average 14-18):

- class ``overlapping-secrets-leave-a-part`` (12 strict xfails, fail open):
  ``test_overlapping_secrets_fully_hidden[longer-second-json, -stderr, -key,
  longer-first-json, -stderr, -key, env-and-file-json, -stderr, map-part-json,
  one-char-json, one-char-stderr]`` (11) and ``test_overlapping_secrets_never_in_the_state``
  (1). Two configured secrets whose texts overlap, printed run together, are masked one
  match at a time: O1 + O2's tail is recorded ``Pf4Kd9Lx2***`` (9 of O1's 17 characters
  readable: O2 was masked first and O1 no longer matched; the same with E2 from the
  environment and with MAP2's password), O3 + O4's tail ``***Ke2Ru4Io9`` (9 of O4's 15),
  O1 + O8's tail ``***Q4Zx7Lc2Vb8Mk1Xp`` (16 of O8's 17, sharing one character), in
  PLAN.yml's outputs, the ``E_TOOL_FAILED`` message, EXECUTION_LOG.md, ``status``, ``show
  -v``, the journal and the structured log. Held: the same upper-cased (hidden whole), one
  secret inside another (``***``), and the controls (two secrets adjacent: ``******``).
- class ``output-mapping-keeps-tool-order`` (4 strict xfails, fail open, low impact):
  ``test_mapping_reaches_the_tool_in_rfc8785_order[out-flat, out-nested, out-in-list,
  out-astral]``: a mapping taken from a tool's output reaches the next tool in the key order
  the first tool printed (``{"b": 1, "a": 2}`` on stdin, ``[{"b":1,"a":2}]`` inside text),
  not RFC 8785's (docs/plan-format.md: "Params reach the tool with every mapping's keys in
  the hash's (RFC 8785) order"); equal values reach a tool as different bytes. Held: the
  plan's own literal mappings (``lit-astral``, ``lit-nested-astral``: UTF-16 order,
  ``z``, ``é``, U+1F600 before U+FF21).
- held: every ``err`` plan (``test_secret_error_is_coded[*]``, 30: failed with an ``E_``
  code or refused at freeze with one; ``test_secret_never_readable_in_an_error[*]``, 30;
  fresh clone, ``check`` and the state directory, 2): schema refusals of a resolved secret
  (type, ``maxLength``, ``enum``, ``pattern``, ``const``, in text, structured, a numeric
  secret), secret paths that do not resolve, http URL path and query with nothing
  listening, non-JSON output, a missing output, stderr (raw, percent-encoded, structured),
  a failing precondition, numeric spellings of a numeric secret (``4.8213957e+07``,
  ``48213957.0``, as a key); ``val`` (whole and in text: 19 + 19, never resolved: 19,
  uncarried ``1e400``/``NaN``/over 2^53: 4, no traceback: 1); ``voc`` (16 words a secret
  may equal: statuses, ``plangate``, the bot's and the approver's address, the plan's name,
  ``true``, ``null``, ``main``, ``sha256``, ``plans``, ``step``: each action ran once
  over three passes, both plans completed, status, approval block, ``audit`` on a fresh
  clone and with the config agree, every echoed word ``***``: 42); ``ovl``
  (``test_overlapping_secrets_run_ends_as_documented[*]``, 17; the held
  ``..._fully_hidden`` ids, 6).

Fixed (fix130e): ``overlapping-secrets-leave-a-part``. Cause: ``Redactor.text`` replaced
each written form one after another (``str.replace``), and the views and number readings
read the text already masked, so a match sharing characters with one masked before no longer
matched. Now every written form's matches (overlapping occurrences too) are found in the text
as given; the views and number readings read it with those starred (as before) and as given
(``_read_both``: a match there that holds a written one whole is not taken), and all spans
are masked once, overlapping ones merged (``_masked``); ``_find`` steps one character past a
match, not its length. The 12 ids pass; ``output-mapping-keeps-tool-order`` (4) is left.

Seen, not asserted: ``$<secrets.A.x>`` (a path into a string secret) is refused at freeze
(``invalid``), not at run time, and so is ``$<secrets.MAP2.password>`` ("write
$<secrets.NAME>": a structured secret reaches a tool whole, as its JSON text).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, cast

import advkit
import pytest
from advkit import ALICE, Lab, build_all
from test_round2_execution_kit import shared
from test_round126_secrets_atk126e import _readers
from test_round127_secrets_atk127e import _forms

PY = sys.executable

A = "Zq8Lm3Xv7Tp2Wd9Hc"
B = "Wp3/Ny8?Tq5#Lz2&\u00e9"
PW = "Hk4Rw9Tz2Lp6Qx8Vm"
#: a secret the secrets file holds as a YAML integer, and how a tool may print it as a number
N = "48213957"
N_SPELLED = [N, "4.8213957e+07", "48213957.0"]

#: the recording tool: records its argv and stdin; ``mode`` chooses what it prints
TOOL = r"""
import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\n")
p = json.loads(data) if data.strip() else {}
m = p.get("mode", "ok")
s = p.get("s", "")
s = s if isinstance(s, str) else json.dumps(s)
if m == "ok":
    print(json.dumps({"x": "ok"}))
elif m == "echo":
    print(json.dumps({"x": s}))
elif m == "raw":
    sys.stdout.write(p.get("out", ""))
elif m == "hex":
    sys.stdout.write(bytes.fromhex(p.get("out", "")).decode("utf-8"))
elif m == "nonjson":
    sys.stdout.write("error: token " + s + " rejected {")
elif m == "num-e":
    sys.stdout.write('{"x": %.7e}' % float(s))
elif m == "num-f":
    sys.stdout.write('{"x": %s.0}' % s)
elif m == "num-key":
    sys.stdout.write('{"x": {"%s": 1}}' % s)
elif m == "stderr":
    sys.stderr.write("fatal: auth failed for " + s + "\n")
    sys.exit(3)
elif m == "stderr-pct":
    import urllib.parse
    sys.stderr.write("fatal: GET /login?pw=" + urllib.parse.quote(s, safe="") + "\n")
    sys.exit(3)
"""


def _plan(slug: str, actions: str, tools: str = "pt", pre: str = "") -> str:
    avail = ", ".join(f"{{name: {t.strip()}}}" for t in tools.split(","))
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        f"available_tools: [{avail}]\nactions:\n{actions}"
    )


def _act(n: int, tool: str, params: str, more: str = "") -> str:
    return f"  - id: {n}\n    tool: {tool}\n    why: w\n    params: {params}\n{more}"


OUT = "    outputs: [{name: o, path: $.json.x}]\n"

#: id -> (plan actions, tools, the secrets that must never be read)
ERRORS: dict[str, tuple[str, str, list[str]]] = {
    "schema-type": (_act(1, "sch", '{tag: e1, n: "$<secrets.A>"}'), "sch", [A]),
    "schema-maxlen": (_act(1, "sch", '{tag: e2, s: "$<secrets.A>"}'), "sch", [A]),
    "schema-enum": (_act(1, "sch", '{tag: e3, e: "$<secrets.A>"}'), "sch", [A]),
    "schema-pattern": (_act(1, "sch", '{tag: e4, p: "$<secrets.B>"}'), "sch", [B]),
    "schema-in-text": (_act(1, "sch", '{tag: e5, n: "id-$<secrets.A>"}'), "sch", [A]),
    "schema-structured": (_act(1, "sch", '{tag: e6, p: "$<secrets.MAP>"}'), "sch", [PW]),
    "schema-const-b": (_act(1, "sch", '{tag: e7, c: "$<secrets.B>"}'), "sch", [B]),
    "path-into-string": (_act(1, "pt", '{tag: e8, s: "$<secrets.A.x>"}'), "pt", [A]),
    "path-missing-key": (_act(1, "pt", '{tag: e9, s: "$<secrets.MAP.nope>"}'), "pt", [PW]),
    "path-index": (_act(1, "pt", '{tag: e10, s: "$<secrets.MAP[0]>"}'), "pt", [PW]),
    "output-member": (
        _act(1, "pt", '{tag: e11, mode: echo, s: "$<secrets.A>"}', OUT)
        + _act(2, "pt", '{tag: e11b, s: "$<actions[1].outputs.o.k>"}'),
        "pt",
        [A],
    ),
    "http-path": (_act(1, "hp", '{s: "$<secrets.B>"}'), "hp", [B]),
    "http-path-a": (_act(1, "hp", '{s: "$<secrets.A>"}'), "hp", [A]),
    "http-query": (_act(1, "hq", '{s: "$<secrets.B>", t: "$<secrets.A>"}'), "hq", [A, B]),
    "http-query-map": (_act(1, "hq", '{s: "$<secrets.MAP>"}'), "hq", [PW]),
    "nonjson-outputs": (
        _act(1, "pt", '{tag: e12, mode: nonjson, s: "$<secrets.A>"}', OUT),
        "pt",
        [A],
    ),
    "missing-output": (
        _act(
            1,
            "pt",
            '{tag: e13, mode: echo, s: "$<secrets.B>"}',
            "    outputs: [{name: o, path: $.json.nope}]\n",
        ),
        "pt",
        [B],
    ),
    "stderr-line": (_act(1, "pt", '{tag: e14, mode: stderr, s: "$<secrets.B>"}'), "pt", [B]),
    "stderr-pct": (_act(1, "pt", '{tag: e15, mode: stderr-pct, s: "$<secrets.B>"}'), "pt", [B]),
    "stderr-map": (_act(1, "pt", '{tag: e16, mode: stderr, s: "$<secrets.MAP>"}'), "pt", [PW]),
    "missing-secret": (_act(1, "pt", '{tag: e18, s: "$<secrets.NOPE>"}'), "pt", [A, B, PW]),
    "num-schema-string": (_act(1, "sch", '{tag: e19, s: "$<secrets.N>"}'), "sch", N_SPELLED),
    "num-schema-const": (_act(1, "sch", '{tag: e20, c: "$<secrets.N>"}'), "sch", N_SPELLED),
    "num-schema-enum": (_act(1, "sch", '{tag: e21, e: "$<secrets.N>"}'), "sch", N_SPELLED),
    "num-in-text-schema": (
        _act(1, "sch", '{tag: e22, n: "port-$<secrets.N>"}'),
        "sch",
        N_SPELLED,
    ),
    "num-e-output": (
        _act(1, "pt", '{tag: e23, mode: num-e, s: "$<secrets.N>"}', OUT)
        + _act(2, "pt", '{tag: e23b, mode: stderr, s: "$<actions[1].outputs.o>"}'),
        "pt",
        N_SPELLED,
    ),
    "num-f-output": (
        _act(1, "pt", '{tag: e24, mode: num-f, s: "$<secrets.N>"}', OUT)
        + _act(2, "pt", '{tag: e24b, mode: stderr, s: "$<actions[1].outputs.o>"}'),
        "pt",
        N_SPELLED,
    ),
    "num-key-output": (
        _act(1, "pt", '{tag: e25, mode: num-key, s: "$<secrets.N>"}', OUT)
        + _act(2, "pt", '{tag: e25b, mode: stderr, s: "$<actions[1].outputs.o>"}'),
        "pt",
        N_SPELLED,
    ),
    "num-stderr": (_act(1, "pt", '{tag: e26, mode: stderr, s: "$<secrets.N>"}'), "pt", N_SPELLED),
    "precondition": (
        _act(
            1,
            "pt",
            "{tag: e17}",
            '    preconditions: [{tool: ck, params: {tag: e17c, mode: echo, s: "$<secrets.B>"}, '
            "expect: {path: $.json.x, equals: nope}}]\n",
        ),
        "pt, ck",
        [B],
    ),
}

SCHEMA = {
    "type": "object",
    "properties": {
        "tag": {"type": "string"},
        "n": {"type": "integer"},
        "s": {"type": "string", "maxLength": 5},
        "e": {"enum": ["red", "blue"]},
        "p": {"type": "string", "pattern": "^[a-z]+$"},
        "c": {"const": "fixed-value"},
    },
}


def _slug(prefix: str, vid: str) -> str:
    return f"{prefix}-{vid}"


def build_err(root: Path, vids: list[str]) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.py").write_text(TOOL)
    sec = root / "sec.yml"
    sec.write_text(
        f"A: {A}\nB: {json.dumps(B)}\nMAP: {{user: app, password: {PW}}}\nN: {N}\n",
        encoding="utf-8",
    )
    pt = json.dumps([PY, str(root / "t.py"), "x"])
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {sec}}}\n",
        tools=f"pt: {{kind: exec, argv: {pt}}}\n"
        f"ck: {{kind: exec, argv: {pt}, idempotent: true, risk: low}}\n"
        f"sch: {{kind: exec, argv: {pt}, params_schema: {json.dumps(SCHEMA)}}}\n"
        "hp: {kind: http, method: POST, url: 'http://127.0.0.1:9/x/{s}/y'}\n"
        "hq: {kind: http, method: GET, url: 'http://127.0.0.1:9/q'}\n",
    )
    for vid in vids:
        actions, tools, _v = ERRORS[vid]
        lab.write(_slug("e", vid), _plan(_slug("e", vid), actions, tools))
    lab.commit("plans")
    slugs = [_slug("e", v) for v in vids]
    passes = [lab.run().stderr]
    frozen = {s: lab.plan(s)["plan"]["status"] for s in slugs}
    for s in slugs:
        if frozen[s] == "pending_approval":
            lab.set_status(s, "approved")
    lab.commit("approve all", ALICE)
    passes.append(lab.run().stderr)
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    fresh = [lab.cli("audit", "--json", cwd=clone), lab.cli("status", "--json", cwd=clone)]
    fresh += [lab.cli("check", "--config", str(lab.config), cwd=lab.repo)]
    return {
        "frozen": frozen,
        "final": {s: lab.plan(s)["plan"]["status"] for s in slugs},
        "codes": {s: lab.codes(s) for s in slugs},
        "read": _readers(lab, slugs, passes),
        "fresh": "".join(r.stdout + r.stderr for r in fresh),
        "tracebacks": [p[-600:] for p in passes if "Traceback" in p],
        "state": _state_text(lab),
    }


def _state_text(lab: Lab) -> str:
    out = []
    for base in (lab.state, lab.repo / ".git", lab.home):
        for path in base.rglob("*"):
            if path.is_file() and path.stat().st_size < 4_000_000:
                out.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


# -- values ---------------------------------------------------------------------------
#: id -> (the JSON text the first tool prints, the whole value the second must get, its text)
VALUES: dict[str, tuple[str, Any, str]] = {
    "whole-float": ('{"x": 100.0}', 100, "100"),
    "neg-zero": ('{"x": -0.0}', 0, "0"),
    "exp-21": ('{"x": 1e21}', 1e21, "1e+21"),
    "small": ('{"x": 1e-7}', 1e-7, "1e-07"),
    "tenth": ('{"x": 0.1}', 0.1, "0.1"),
    "nfd": ('{"x": "Ame\\u0301lie"}', "Ame\u0301lie", "Ame\u0301lie"),
    "ref-secret": ('{"x": "$<secrets.A>"}', "$<secrets.A>", "$<secrets.A>"),
    "ref-escaped": ('{"x": "$$<secrets.A>"}', "$$<secrets.A>", "$$<secrets.A>"),
    "ref-legacy": ('{"x": "${secrets.A}"}', "${secrets.A}", "${secrets.A}"),
    "ref-plan": ('{"x": "$<plan.name>"}', "$<plan.name>", "$<plan.name>"),
    "ref-json-escape": ('{"x": "\\u0024<secrets.A>"}', "$<secrets.A>", "$<secrets.A>"),
    "ref-action": (
        '{"x": "$<actions[1].outputs.o>"}',
        "$<actions[1].outputs.o>",
        "$<actions[1].outputs.o>",
    ),
    "yaml-text": (
        '{"x": "status: approved\\nactions: [{id: 9}]"}',
        "status: approved\nactions: [{id: 9}]",
        "status: approved\nactions: [{id: 9}]",
    ),
    "nul": ('{"x": "a\\u0000b"}', "a\x00b", "a\x00b"),
    "mapping-sorted": ('{"x": {"a": [2, 3], "b": 1}}', {"a": [2, 3], "b": 1}, '{"a":[2,3],"b":1}'),
    "list": ('{"x": ["$<secrets.A>", 1.0]}', ["$<secrets.A>", 1], '["$<secrets.A>",1]'),
    "true": ('{"x": true}', True, "true"),
    "null": ('{"x": null}', None, "null"),
    "empty": ('{"x": ""}', "", ""),
}
#: values that cannot be carried: the run fails with a code and the second tool never runs
UNCARRIED = {
    "int-over-2-53": '{"x": 9007199254740993}',
    "neg-int-over-2-53": '{"x": -9007199254740993}',
    "inf": '{"x": 1e400}',
    "nan": '{"x": NaN}',
}


#: key order: what a tool reads on stdin for a mapping; docs/plan-format.md: "Params reach
#: the tool with every mapping's keys in the hash's (RFC 8785) order". id -> the first tool's
#: JSON text (an output) or, under ``lit-``, the plan's own literal mapping
ORDER: dict[str, str] = {
    "out-flat": '{"x": {"b": 1, "a": 2}}',
    "out-nested": '{"x": {"z": {"y": 1, "x": 2}, "a": 0}}',
    "out-in-list": '{"x": [{"b": 1, "a": 2}]}',
    "out-astral": '{"x": {"\\uff21": 1, "\\ud83d\\ude00": 2, "z": 3}}',
    "lit-astral": json.dumps(
        {"\uff21": 1, "\U0001f600": 2, "z": 3, "\u00e9": 4}, ensure_ascii=False
    ),
    "lit-nested-astral": json.dumps({"k": {"\uff21": 1, "\U0001f600": 2}}, ensure_ascii=False),
}


def _order_plan(oid: str) -> str:
    if oid.startswith("lit-"):
        return _plan(
            _slug("o", oid),
            _act(1, "pt", f'{{tag: v2-{oid}, w: {ORDER[oid]}, t: "x"}}'),
        )
    return _val_plan(oid, ORDER[oid]).replace("name: v-", "name: o-")


def _rfc8785_ordered(pairs: list[tuple[str, Any]]) -> bool:
    keys = [k for k, _ in pairs]
    return keys == sorted(keys, key=lambda k: k.encode("utf-16-be"))


def _val_plan(vid: str, out: str) -> str:
    return _plan(
        _slug("v", vid),
        _act(
            1, "pt", json.dumps({"tag": f"v1-{vid}", "mode": "hex", "out": out.encode().hex()}), OUT
        )
        + _act(
            2,
            "pt",
            json.dumps(
                {
                    "tag": f"v2-{vid}",
                    "w": "$<actions[1].outputs.o>",
                    "t": "[$<actions[1].outputs.o>]",
                }
            ),
        ),
    )


def build_val(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.py").write_text(TOOL)
    sec = root / "sec.yml"
    sec.write_text(
        f"A: {A}\nO1: {O1}\nO2: {O2}\nO3: {O3}\nO4: {O4}\nO6: {O6}\nO8: {O8}\n"
        f"MAP2: {{user: app, password: {O7}}}\n"
    )
    (root / "o.py").write_text(OVL_TOOL)
    log = json.dumps({"REC_LOG": str(root / "lab" / "ran.log")})
    pt = json.dumps([PY, str(root / "t.py"), "x"])
    po = json.dumps([PY, str(root / "o.py")])
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {sec}}}\n",
        tools=f"pt: {{kind: exec, argv: {pt}, env: {log}}}\npo: {{kind: exec, argv: {po}}}\n",
    )
    lab.extra_env = {"PLANGATE_SECRET_E2": E2}  # type: ignore[attr-defined]
    _ovl_write(lab)
    every = {**{v: x[0] for v, x in VALUES.items()}, **UNCARRIED}
    for vid, out in every.items():
        lab.write(_slug("v", vid), _val_plan(vid, out))
    for oid in ORDER:
        lab.write(_slug("o", oid), _order_plan(oid))
    lab.commit("plans")
    slugs = [_slug("v", v) for v in every] + [_slug("o", o) for o in ORDER]
    slugs += [_slug("l", o) for o in OVL]
    passes = [lab.run().stderr]
    for s in slugs:
        lab.set_status(s, "approved")
    lab.commit("approve all", ALICE)
    passes.append(lab.run().stderr)
    calls = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    return {
        "final": {s: lab.plan(s)["plan"]["status"] for s in slugs},
        "codes": {s: lab.codes(s) for s in slugs},
        "calls": calls,
        "tracebacks": [p[-600:] for p in passes if "Traceback" in p],
        "plans": {s: lab.read(s) for s in slugs},
        "ovl": _ovl_read(lab, passes),
    }


# -- vocabulary -----------------------------------------------------------------------
VOCAB = {
    "succeeded": "succeeded",
    "completed": "completed",
    "executing": "executing",
    "approved": "approved",
    "plangate": "plangate",
    "bot-email": "plangate@localhost",
    "approver": "alice@example.com",
    "plan-name": "voc-plan",
}


#: more words: JSON's and git's own, the plans folder, a status a pass reads back
VOCAB2 = {
    "true": "true",
    "null": "null",
    "main": "main",
    "sha256": "sha256",
    "plans": "plans",
    "pending": "pending",
    "awaiting": "awaiting_approval",
    "step": "step",
}


ALL_WORDS = {**VOCAB, **VOCAB2}


def build_voc(root: Path, words: dict[str, str] = ALL_WORDS) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.py").write_text(TOOL)
    sec = root / "sec.yml"
    sec.write_text("".join(f"W{i}: {json.dumps(v)}\n" for i, v in enumerate(words.values())))
    log = json.dumps({"REC_LOG": str(root / "lab" / "ran.log")})
    pt = json.dumps([PY, str(root / "t.py"), "x"])
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {sec}}}\n",
        tools=f"pt: {{kind: exec, argv: {pt}, env: {log}}}\n",
    )
    lab.write(
        "voc-plan",
        _plan("voc-plan", _act(1, "pt", "{tag: k1}") + _act(2, "pt", "{tag: k2}")),
    )
    # a tool output equal to each word: hidden in the record, nothing else changes
    echo = "".join(
        _act(i + 1, "pt", json.dumps({"tag": f"o{i + 1}", "mode": "echo", "s": w}), OUT)
        for i, w in enumerate(words.values())
    )
    lab.write("voc-echo", _plan("voc-echo", echo))
    lab.commit("plans")
    passes = [lab.run().stderr]
    frozen = {s: lab.plan(s)["plan"]["status"] for s in ("voc-plan", "voc-echo")}
    for s in ("voc-plan", "voc-echo"):
        lab.set_status(s, "approved")
    lab.commit("approve all", ALICE)
    for _ in range(3):
        passes.append(lab.run().stderr)
    calls = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    audit = lab.cli("audit", "--json", cwd=clone)
    audit_cfg = lab.cli("audit", "--json", "--config", str(lab.config), cwd=lab.repo)
    status = lab.cli("status", "--json", "--config", str(lab.config))
    return {
        "frozen": frozen,
        "plans": {s: lab.plan(s) for s in ("voc-plan", "voc-echo")},
        "calls": calls,
        "audit": (audit.returncode, audit.stdout, audit.stderr),
        "audit_cfg": (audit_cfg.returncode, audit_cfg.stdout, audit_cfg.stderr),
        "status": status.stdout,
        "tracebacks": [p[-600:] for p in passes if "Traceback" in p],
        "subjects": lab.git("log", "--format=%an <%ae> %s"),
    }


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    got = dict(cast(Any, shared(tmp_path_factory, "r129e-secrets", _build)).got)
    one, two = got.pop("err1"), got.pop("err2")
    err = {k: {**one[k], **two[k]} for k in ("frozen", "final", "codes", "read")}
    err.update({k: one[k] + two[k] for k in ("fresh", "tracebacks", "state")})
    return {**got, "err": err, "ovl": got["val"]["ovl"]}


def _build(root: Path) -> Any:
    """The three labs at once, built once for the module whatever the workers (``shared``)."""
    half = len(ERRORS) // 2
    return build_all(
        root,
        {
            "err1": lambda r: build_err(r, list(ERRORS)[:half]),
            "err2": lambda r: build_err(r, list(ERRORS)[half:]),
            "val": build_val,
            "voc": build_voc,
        },
        workers=4,
    )


def _leaks(text: str, values: list[str]) -> list[str]:
    return [form for v in values for form in _forms(v) if form in text]


# -- err ------------------------------------------------------------------------------
@pytest.mark.parametrize("vid", list(ERRORS))
def test_secret_error_is_coded(labs: dict[str, Any], vid: str) -> None:
    """The plan froze, was approved, and its run ended ``failed`` with an ``E_`` code; no
    pass printed a traceback."""
    got = labs["err"]
    slug = _slug("e", vid)
    if got["frozen"][slug] == "invalid":  # refused when frozen: a coded validation answer
        assert "E_" in got["read"][slug]["history"], got["read"][slug]["history"][-600:]
        return
    assert got["frozen"][slug] == "pending_approval", got["frozen"][slug]
    assert got["final"][slug] == "failed", (got["final"][slug], got["codes"][slug])
    assert "E_" in got["codes"][slug], got["codes"][slug]
    assert not got["tracebacks"], got["tracebacks"]


@pytest.mark.parametrize("vid", list(ERRORS))
def test_secret_never_readable_in_an_error(labs: dict[str, Any], vid: str) -> None:
    got = labs["err"]
    slug = _slug("e", vid)
    leaks = [
        f"{reader}: {form!r}"
        for reader, text in got["read"][slug].items()
        for form in _leaks(text, ERRORS[vid][2])
    ]
    assert not leaks, leaks


def test_secret_never_readable_on_a_fresh_clone_or_check(labs: dict[str, Any]) -> None:
    got = labs["err"]
    assert "e-http-path" in got["fresh"] and "e-precondition" in got["fresh"], got["fresh"][:400]
    leaks = _leaks(got["fresh"], [A, B, PW, *N_SPELLED])
    assert not leaks, leaks


def test_secret_never_in_the_state_or_repository(labs: dict[str, Any]) -> None:
    """The journals, records and every file of ``.git`` and the state directory hold no
    spelling of any secret."""
    leaks = _leaks(labs["err"]["state"], [A, B, PW, *N_SPELLED])
    assert not leaks, leaks


# -- val ------------------------------------------------------------------------------
def _got(labs: dict[str, Any], vid: str) -> dict[str, Any]:
    got = labs["val"]
    slug = _slug("v", vid)
    assert got["final"][slug] == "completed", (got["final"][slug], got["codes"][slug])
    mine = [c for c in got["calls"] if json.loads(c["stdin"])["tag"] == f"v2-{vid}"]
    assert len(mine) == 1, mine
    return dict(json.loads(mine[0]["stdin"]))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("vid", list(VALUES))
def test_output_reaches_the_next_tool_whole(labs: dict[str, Any], vid: str) -> None:
    """A whole reference takes the output with its JSON type, as the tool printed it (a whole
    number within 2^53 an integer), never resolved again."""
    got = _got(labs, vid)["w"]
    assert _same(got, VALUES[vid][1]), (got, VALUES[vid][1])


@pytest.mark.parametrize("vid", list(VALUES))
def test_output_reaches_the_next_tool_in_text(labs: dict[str, Any], vid: str) -> None:
    """Inside text the output is its text (a string as is, other values compact JSON, numbers
    as documented), filled once."""
    got = _got(labs, vid)["t"]
    assert got == f"[{VALUES[vid][2]}]", got


@pytest.mark.parametrize("vid", list(VALUES))
def test_output_never_resolved_as_a_secret(labs: dict[str, Any], vid: str) -> None:
    """No value the second tool received holds the secret A (reference text in an output is
    data)."""
    got = labs["val"]
    mine = [c for c in got["calls"] if json.loads(c["stdin"])["tag"] == f"v2-{vid}"]
    assert mine and not any(A in c["stdin"] for c in mine), mine


@pytest.mark.parametrize("vid", list(UNCARRIED))
def test_output_that_json_cannot_carry_is_coded(labs: dict[str, Any], vid: str) -> None:
    """An output no canonical JSON carries (``1e400``, ``NaN``): the action fails with a code
    and the next tool never runs with ``Infinity``/``NaN``."""
    got = labs["val"]
    slug = _slug("v", vid)
    mine = [c for c in got["calls"] if json.loads(c["stdin"])["tag"] == f"v2-{vid}"]
    assert not mine, mine
    assert got["final"][slug] == "failed", (got["final"][slug], got["codes"][slug])
    assert "E_" in got["codes"][slug], got["codes"][slug]


ORDER_CLASS = "output-mapping-keeps-tool-order"
ORDER_WHY = (
    "a mapping taken from a tool's output reaches the next tool (whole on stdin, and as "
    "compact JSON inside text) in the order the first tool printed its keys, not RFC 8785's: "
    "two equal values reach the tool as different bytes"
)


@pytest.mark.parametrize(
    "oid",
    [
        pytest.param(o, marks=advkit.xfail(ORDER_CLASS, ORDER_WHY) if o.startswith("out-") else ())
        for o in ORDER
    ],
)
def test_mapping_reaches_the_tool_in_rfc8785_order(labs: dict[str, Any], oid: str) -> None:
    """Every mapping of the params a tool reads on stdin has its keys in RFC 8785 order
    (UTF-16 code units), the whole value and the text of one inside a string alike."""
    got = labs["val"]
    slug = _slug("o", oid)
    assert got["final"][slug] == "completed", (got["final"][slug], got["codes"][slug])
    mine = [c for c in got["calls"] if json.loads(c["stdin"])["tag"] == f"v2-{oid}"]
    assert len(mine) == 1, mine
    bad: list[Any] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        if not _rfc8785_ordered(pairs):
            bad.append([k for k, _ in pairs])
        return dict(pairs)

    params = json.loads(mine[0]["stdin"], object_pairs_hook=hook)
    text = params["t"]
    if text.startswith("["):
        json.loads(text[1:-1], object_pairs_hook=hook)
    assert not bad, (bad, mine[0]["stdin"])


def test_values_lab_printed_no_traceback(labs: dict[str, Any]) -> None:
    assert not labs["val"]["tracebacks"], labs["val"]["tracebacks"]


# -- voc ------------------------------------------------------------------------------
LABS_V = ["voc"]
WORDS = {"voc": ALL_WORDS}


@pytest.mark.parametrize("lab", LABS_V)
def test_vocabulary_plans_froze(labs: dict[str, Any], lab: str) -> None:
    want = {"voc-plan": "pending_approval", "voc-echo": "pending_approval"}
    assert labs[lab]["frozen"] == want, labs[lab]["frozen"]


@pytest.mark.parametrize("lab", LABS_V)
@pytest.mark.parametrize("slug", ["voc-plan", "voc-echo"])
def test_vocabulary_secret_plan_completes(labs: dict[str, Any], lab: str, slug: str) -> None:
    plan = labs[lab]["plans"][slug]
    assert plan["plan"]["status"] == "completed", plan["plan"]["status"]
    assert (plan.get("execution") or {}).get("status") == "completed", plan.get("execution")
    acts = plan["execution"]["actions"]
    assert [a["status"] for a in acts] == ["succeeded"] * len(acts), acts


@pytest.mark.parametrize(
    ("lab", "tag"),
    [
        (lab, t)
        for lab in LABS_V
        for t in ["k1", "k2", *(f"o{i + 1}" for i in range(len(ALL_WORDS)))]
    ],
)
def test_vocabulary_secret_action_runs_once(labs: dict[str, Any], lab: str, tag: str) -> None:
    """Over three passes after the approval each action ran exactly once."""
    n = [c for c in labs[lab]["calls"] if json.loads(c["stdin"])["tag"] == tag]
    assert len(n) == 1, len(n)


@pytest.mark.parametrize("lab", LABS_V)
def test_vocabulary_secret_approval_record_kept(labs: dict[str, Any], lab: str) -> None:
    """The approval block still says it was approved, by whom (or ``***``)."""
    appr = labs[lab]["plans"]["voc-plan"].get("approval") or {}
    assert appr.get("status") == "approved", appr
    assert appr.get("by") in ("alice@example.com", "***"), appr


@pytest.mark.parametrize("lab", LABS_V)
def test_vocabulary_secret_status_row_completed(labs: dict[str, Any], lab: str) -> None:
    rows = {r["plan"]: r for r in json.loads(labs[lab]["status"])}
    got = {k: rows[k].get("status") for k in ("plans/voc-plan", "plans/voc-echo") if k in rows}
    assert got == {"plans/voc-plan": "completed", "plans/voc-echo": "completed"}, rows


@pytest.mark.parametrize("lab", LABS_V)
@pytest.mark.parametrize("which", ["audit", "audit_cfg"])
def test_vocabulary_secret_audit_agrees(labs: dict[str, Any], lab: str, which: str) -> None:
    """``audit --json`` on a fresh clone (git alone) and with the config flags nothing: every
    run of the two plans was approved and ran once."""
    rc, out, err = labs[lab][which]
    assert "Traceback" not in err, err[-600:]
    assert rc == 0, (rc, out[-1500:], err[-600:])


@pytest.mark.parametrize(("lab", "vid"), [(lab, v) for lab in LABS_V for v in WORDS[lab]])
def test_vocabulary_output_hidden_in_the_record(labs: dict[str, Any], lab: str, vid: str) -> None:
    """A tool output equal to a secret is ``***`` in the recorded outputs."""
    i = list(WORDS[lab]).index(vid)
    act = labs[lab]["plans"]["voc-echo"]["execution"]["actions"][i]
    assert (act.get("outputs") or {}).get("o") == "***", act


@pytest.mark.parametrize("lab", LABS_V)
def test_vocabulary_lab_printed_no_traceback(labs: dict[str, Any], lab: str) -> None:
    assert not labs[lab]["tracebacks"], labs[lab]["tracebacks"]


# -- ovl: two secrets that overlap ----------------------------------------------------------
#: secret pairs whose texts overlap: the end of the first is the start of the second. A tool
#: that prints the two run together (a key id and its secret, a token and its refresh token
#: sharing a prefix) prints text holding both; every character of either must be hidden.
O1 = "Pf4Kd9Lx2Mq7Rz5Wn"  # 17; its last 8 start O2
O2 = "Mq7Rz5WnJb3Hs8Ty6Vc"  # 19
O3 = "Gt6Yh1Nb8Vc3Xz5Aq7Sw"  # 20; its last 6 start O4
O4 = "5Aq7SwKe2Ru4Io9"  # 15 (shorter than O3)
E2 = "Mq7Rz5WnYc5Ug3Fr1De"  # 19, from PLANGATE_SECRET_E2; starts with O1's last 8
O6 = "Hy5" + O1 + "Tn4Ws"  # 25: holds O1 whole inside it
O7 = "Mq7Rz5WnDf6Gh2Jk9"  # 17: MAP2's password, starts with O1's last 8
O8 = "nQ4Zx7Lc2Vb8Mk1Xp"  # 17: starts with O1's last character
OVL_TOOL = r"""
import json, os, sys
data = sys.stdin.read()
p = json.loads(data)
m, a, b, k = p["m"], p["a"], p["b"], p["k"]
b = json.loads(b) if b.startswith("{") else b  # a structured secret: its JSON text
b = b["password"] if isinstance(b, dict) else b
text = a + b[k:] if k >= 0 else a + b
if m == "json":
    print(json.dumps({"x": text}))
elif m == "key":
    print(json.dumps({"x": {text: 1}}))
elif m == "stderr":
    sys.stderr.write("denied: " + text + "\n")
    sys.exit(3)
elif m == "upper":
    print(json.dumps({"x": text.upper()}))
"""
#: id -> (first secret's name, second's, the characters they share (-1: none, run together),
#: how the tool prints it)
OVL: dict[str, tuple[str, str, int, str]] = {
    "longer-second-json": ("O1", "O2", 8, "json"),
    "longer-second-stderr": ("O1", "O2", 8, "stderr"),
    "longer-second-key": ("O1", "O2", 8, "key"),
    "longer-second-upper": ("O1", "O2", 8, "upper"),
    "longer-first-json": ("O3", "O4", 6, "json"),
    "longer-first-stderr": ("O3", "O4", 6, "stderr"),
    "longer-first-key": ("O3", "O4", 6, "key"),
    "longer-first-upper": ("O3", "O4", 6, "upper"),
    "env-and-file-json": ("O1", "E2", 8, "json"),
    "env-and-file-stderr": ("O1", "E2", 8, "stderr"),
    "map-part-json": ("O1", "O7", 8, "json"),
    "one-char-json": ("O1", "O8", 1, "json"),
    "one-char-stderr": ("O1", "O8", 1, "stderr"),
    "contains-json": ("O6", "O1", 17, "json"),
    "contains-stderr": ("O6", "O1", 17, "stderr"),
    "control-adjacent": ("O1", "O2", -1, "json"),
    "control-adjacent-stderr": ("O3", "O4", -1, "stderr"),
}
OVL_VALUES = {"O1": O1, "O2": O2, "O3": O3, "O4": O4, "E2": E2, "O6": O6, "O7": O7, "O8": O8}
#: ``E2`` (``PLANGATE_SECRET_E2``) is an environment secret overlapping the file's O1
#: the bench: each text the tool prints holds both secrets whole (they overlap; no part cut)
for _a, _b, _k, _m in OVL.values():
    if _k >= 0:
        assert (OVL_VALUES[_a] + OVL_VALUES[_b][_k:]).count(OVL_VALUES[_b]) == 1, (_a, _b)
OVL_HELD = {
    "control-adjacent",
    "control-adjacent-stderr",
    "longer-second-upper",
    "longer-first-upper",
    "contains-json",
    "contains-stderr",
}


def _ref(name: str) -> str:
    return "MAP2" if name == "O7" else name


def _ovl_write(lab: Lab) -> None:
    for oid, (a, b, k, m) in OVL.items():
        lab.write(
            _slug("l", oid),
            _plan(
                _slug("l", oid),
                _act(
                    1,
                    "po",
                    f'{{m: {m}, k: {k}, a: "$<secrets.{a}>", b: "$<secrets.{_ref(b)}>"}}',
                    OUT,
                ),
                "po",
            ),
        )


def _ovl_read(lab: Lab, passes: list[str]) -> dict[str, Any]:
    slugs = [_slug("l", o) for o in OVL]
    cfg = str(lab.config)
    status = lab.cli("status", "--json", "--config", cfg).stdout
    status += lab.cli("status", "--config", cfg).stdout
    read: dict[str, str] = {}
    for sl in slugs:
        show = lab.cli("show", "-v", "--config", cfg, f"plans/{sl}", cwd=lab.repo)
        read[sl] = "\n".join(
            [
                lab.git("log", "-p", "--all", "--format=%H%n%B", "--", f"plans/{sl}"),
                show.stdout + show.stderr,
                "\n".join(x for x in status.splitlines() if f"plans/{sl}" in x),
                "\n".join(x for p in passes for x in p.splitlines() if f"plans/{sl}" in x),
            ]
        )
    return {
        "final": {sl: lab.plan(sl)["plan"]["status"] for sl in slugs},
        "codes": {sl: lab.codes(sl) for sl in slugs},
        "read": read,
        "state": _state_text(lab),
        "tracebacks": [p[-600:] for p in passes if "Traceback" in p],
    }


def _windows(value: str, n: int = 6) -> list[str]:
    """Every run of ``n`` characters of a secret, as written and upper-cased."""
    runs = {value[i : i + n] for i in range(len(value) - n + 1)}
    return sorted(runs | {r.upper() for r in runs})


OVL_CLASS = "overlapping-secrets-leave-a-part"
OVL_WHY = (
    "two configured secrets whose texts overlap (one's end is the other's start), printed run "
    "together by a tool, are masked one match at a time: the first secret's head (or the "
    "second's tail) stays readable in PLAN.yml, EXECUTION_LOG.md, status, show and the log"
)


@pytest.mark.parametrize("oid", list(OVL))
def test_overlapping_secrets_fully_hidden(labs: dict[str, Any], oid: str) -> None:
    """No run of 6 characters of either secret is readable about the plan (git history with
    diffs, ``show -v``, ``status``, the pass's log)."""
    got = labs["ovl"]
    slug = _slug("l", oid)
    a, b, _k, _m = OVL[oid]
    text = got["read"][slug]
    leaks = [w for v in (OVL_VALUES[a], OVL_VALUES[b]) for w in _windows(v) if w in text]
    assert not leaks, leaks[:6]


@pytest.mark.parametrize("oid", list(OVL))
def test_overlapping_secrets_run_ends_as_documented(labs: dict[str, Any], oid: str) -> None:
    """The plan ran: ``completed`` (json, key, upper) or ``failed`` with ``E_TOOL_FAILED``
    (stderr); no traceback."""
    got = labs["ovl"]
    slug = _slug("l", oid)
    want = "failed" if OVL[oid][3] == "stderr" else "completed"
    assert got["final"][slug] == want, (got["final"][slug], got["codes"][slug])
    if want == "failed":
        assert "E_TOOL_FAILED" in got["codes"][slug], got["codes"][slug]
    assert not got["tracebacks"], got["tracebacks"]


def test_overlapping_secrets_never_in_the_state(labs: dict[str, Any]) -> None:
    text = labs["ovl"]["state"]
    leaks = [w for v in OVL_VALUES.values() for w in _windows(v, 8) if w in text]
    assert not leaks, leaks[:6]
