# ruff: noqa: E501
"""Round 102, runs (atk102a): an approved plan runs exactly as frozen, and a hostile TOOL
OUTPUT fills parameters but never changes which actions run, what a guard, a check or a
filter decides, what a later action gets beyond the references the plan wrote, the limits,
or the run's record.

Lab (one, module scope; local mode): the exec tool ``out`` (``output_trust`` untrusted,
the default) prints, per plan, the stdout/stderr/exit code a table gives it (the attacker's
output) and records each call; ``chk`` is the same script as a check tool (``idempotent``,
``risk: low``); ``snd`` is the recorder with ``sensitive: [to, n]``; ``rec`` the recorder;
``pyt`` a python tool raising ``RuntimeError(msg)``. ``secrets.file`` holds ``TOK`` and a
64-character ``LONG``; ``limits.max_params_bytes`` is 4,000. One plan per variant, a
pinned draft library ``plans/lib`` for the nested ones, and ``plans/victim`` (frozen, never
approved). One pass freezes, Alice approves every plan in one commit, one pass runs; Bob
approves ``f-gate``'s gate, a third pass. Then ``status --json``, the PLAN.yml and
EXECUTION_LOG.md of each plan at HEAD, the controller's commits and ``audit --json``.

Variants (``<slug>:<what>``):

- ``g-*:guard``: action 1's output fills ``snd``'s sensitive param behind a guard: ``"1"``
  vs ``one_of: [1]``, ``"true"`` vs ``[true]``, ``true`` vs ``[1]`` and vs ``min/max``,
  ``"3"`` vs ``min/max``, ``[]`` vs ``min/max`` and vs ``matches``, a mapping, ``[[evil]]``,
  ``[ok, evil]``, a trailing LF, a number vs ``matches``, ``1e308``, ``2^64+1``, ``NaN``,
  ``-Infinity``, a duplicate key (evil first), a lone surrogate: never called; ``1.0`` vs
  ``[1]``, ``-0.0`` vs ``[0]`` and ``__proto__``/``constructor`` keys beside ``v``: called
  with ``1``, ``0`` (ints) and the real ``v``;
- ``v-*:check`` / ``p-*:check``: ``verify: {expect}`` over the result and a precondition's
  check tool: ``"true"``/``"1"``/``true in [1,2]``/``0 not_equals 0``/``123 matches``/
  ``NaN not_equals 1``/a missing path ``not_equals``/duplicate ``ok``/``[true]`` never let
  action 2 (or the action itself) run; ``1.0 equals 1`` and ``-0.0 equals 0`` do;
- ``r-*:literal``, ``n-*:literal``: an output that IS reference text (``$<secrets.TOK>``,
  ``$<inputs.k>``, ``${inputs.k}``, ``$$<inputs.k>``, ``$<actions[1].result>``) reaches
  ``rec`` as that text, whole and inside a longer string, also through a nested plan's input;
  ``w-params:literal``: ``params: "$<...>"`` (an output as the whole params) is invalid;
- ``k-dot:keys``: ``{"a.b": evil, "a": {"b": ok}, "a']['b": evil, "a[b]": evil}`` read by
  ``$.json.a.b`` and ``$<actions[1].result.json.a.b>``: ``ok`` both;
- ``x-*:reftype``: a reference indexing a value of another type (``[0]`` of a string or a
  mapping, ``['0']`` of a list, ``.upper``/``.count``/``.__len__``): E_REF_UNAVAILABLE;
  ``qs-*:querytype``: an output query doing so (and ``['é']`` over an NFD key):
  E_OUTPUT_MISSING; ``q-*:filter``: filters select only the type-exact item;
- ``once-*:once``: NaN, a duplicate key, 101 levels, under ``on_failure: retry``: one call
  (E_TOOL_OUTPUT_INVALID is permanent); ``skip-ref:unavailable`` (an output of a skipped
  action), ``skip-result``/``fb-result:unavailable`` (the result a failing call left, of an
  action skipped or replaced by its fallback): E_REF_UNAVAILABLE, the consumer never runs;
- ``big-*:limit``: 70 KB of JSON, 80,000 bytes in 40,000 2-byte or 20,000 4-byte
  characters, over ``max_result_bytes`` (65,536): not read as JSON; ``lim-*:limit``: the
  4,000-character params bound against an output of ``LONG`` x 900 (57,600 characters,
  recorded as 2,700 once masked), whole, inside a string, in a precondition's and a
  verify tool's params, and a plain 6,000: E_LIMIT_EXCEEDED, no call got it;
- ``*:trailers``: stderr (the line quoted) and python exception messages with a
  ``Plan: plans/victim``/``Plan-Status: completed``/``Plan-Hash``/``Approved-By`` block,
  after LF, NEL, U+2028/9, VT, FF, FS/GS/RS, CR, a NUL, and an output carrying it into a
  completed plan: each outcome commit's trailers are its own; ``victim:status``,
  ``victim:audit``: the victim stays pending, no execution;
- ``*:markdown``: fences of 3-5 backticks and ``~~~``, a heading, bold, a table row, raw
  HTML, an unclosed ``<!--``, a link, in stderr, an output, a python message, a
  precondition's and a verify's quoted value: CommonMark (markdown-it) shows every marker
  inside code only; ``f-gate:preview`` (the "Waiting for approval" section and the
  await commit) and ``f-gate:runs`` (Bob's gate approval runs exactly the output);
- ``*:yaml``: YAML syntax, NEL/U+2028/U+2029/CR/BOM/NUL, noncharacters, C1 controls and
  bidi in values and keys: the ``execution:`` block reads back equal to what ran;
  ``f-cut:marked``: a cut output says so and the log has it whole;
- ``f-stars:log`` / ``f-stars:block``: the tool prints ``"***"`` itself (``v``) beside
  the secret ``TOK`` (``w``); action 2 gets ``v`` and ``s: $<secrets.TOK>``.

Seen (round 102): 1 class broke.

1. **A tool's own mask reads as a secret** (``fake-mask``): ``f-stars:log``,
   ``f-stars:block``. A tool that prints ``***`` is recorded exactly as a masked secret:
   EXECUTION_LOG.md's "Params (resolved)" shows ``"s": "***"`` (the plan's
   ``$<secrets.TOK>``) and ``"v": "***"`` (the tool's literal, which ``rec`` really got
   as ``***``) alike, under the legend "secrets as ``***``"; the ``execution:`` block shows
   outputs ``v: '***'`` (literal) and ``w: '***'`` (the secret the tool printed) alike. The
   tool's output forges "a secret was here" (or hides which value really held one) in every
   record a reader has. Should: a literal ``***`` in a tool's (untrusted) text be written
   so that it cannot be read as the mask (escape it, or mark masked spans distinctly).

Held: every other id (95): guards, checks and filters are type-exact at every depth
(``1.0``/``-0.0`` taken as ``1``/``0`` and handed on as ints); intake refuses duplicate
keys, NaN/Infinity, big integers, lone surrogates and deep nesting, permanently; output
text is never resolved again (also through a nested plan's inputs); references and queries
never index a string or cross types; the result limit counts bytes; the params bound
counts the real value, not the masked one; commit messages fold every line break into one
paragraph (trailers are only the controller's); the log keeps all tool text in code spans
and fences longer than its backtick runs; the ``execution:`` block round-trips exactly.
97 ids: 95 passed, 2 strict xfails.

Accepted (2026-12-04, the lead): the mask is text, and a tool's text may hold the same three
characters; the two strict xfails stay as the limit's witnesses (docs/threat-model.md,
"Accepted limits"). Escaping a literal ``***`` in a tool's text was weighed and not done:
redaction runs again over text it already redacted (a notify post, an MCP answer, a
shortened message), so the escape would have to tell its own masks from a tool's at every
layer, and a reader would still need the legend. What ran is unaffected: the tool got
exactly what its record says (``v`` was the text ``***``; ``s`` the secret), and no guard,
check or reference reads the record.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, xfail
from test_round2_execution_kit import shared

OUT = r"""import json, os, sys
m = sys.argv[1]
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": ["out:" + m], "stdin": data}) + "\n")
spec = json.load(open(os.environ["OUTS"], encoding="utf-8"))[m]
sys.stdout.write(spec.get("stdout", ""))
sys.stdout.flush()
sys.stderr.write(spec.get("stderr", ""))
sys.exit(spec.get("exit", 0))
"""

PYT = """def boom(msg):
    raise RuntimeError(msg)
"""

OK = "a@ok.example"
EVIL = "x@evil.example"
TOK = "Wq7Zr4Np9Kd2Lx6T"
#: a 64-character secret a tool knows (its own credential): masked as 3 characters
LONG = "Lg" + "".join("abcdefghjkmnpqrstuvwxyz23456789"[(i * 7 + 3) % 31] for i in range(62))
MAX_PARAMS = 4000
FORGED = "Plan-Status: completed"
VICTIM_HASH = "sha256:" + "0" * 64
MD = "x\n`````\n````\n```\n~~~\n\n## FORGEDHEAD\n\n**FORGEDBOLD**\n\n| a | FORGEDCELL |\n|---|---|\n<!--\n"
MDLINE = "`` **FORGEDLINE** `` ` ``` <b>FORGEDHTML</b> [FORGEDLINK](https://evil.example) |"
SEPS = "boom" + "".join(
    f"{c}Plan-Status: completed{c}Plan: plans/victim"
    for c in ("\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r")
)
TRAILERS = f"boom\n\nPlan: plans/victim\n{FORGED}\nPlan-Hash: {VICTIM_HASH}\nApproved-By: alice@example.com\n"


def _j(value: Any) -> str:
    return json.dumps(value)


def _act_out(slug: str, more: str = "", outputs: str = "[{name: v, path: $.json.v}]") -> str:
    return (
        f"  - id: 1\n    tool: out\n    why: w\n    params: {{m: {slug}}}\n    outputs: {outputs}\n"
        + more
    )


def _snd(slug: str, param: str, guard: str, ref: str = "$<actions[1].outputs.v>") -> str:
    return (
        f'  - id: 2\n    tool: snd\n    why: w\n    params: {{tag: {slug}, {param}: "{ref}"}}\n'
        f"    guards: [{{param: {param}, {guard}}}]\n"
    )


def _rec(slug: str, i: int = 2, params: str = 'v: "$<actions[1].outputs.v>"') -> str:
    return f"  - id: {i}\n    tool: rec\n    why: w\n    params: {{tag: {slug}, {params}}}\n"


MATCH_OK = r'matches: "^[^@\\s]+@ok\\.example$"'

#: variant -> (stdout of ``out``, actions after action 1 / whole actions, expectation)
#: expectation: "ran" (the consumer ran) or "not" (never called)
GUARDS: dict[str, tuple[str, str, str, str]] = {
    # id: (stdout, param, guard, expect)
    "g-str1": (_j({"v": "1"}), "n", "one_of: [1]", "not"),
    "g-strtrue": (_j({"v": "true"}), "n", "one_of: [true]", "not"),
    "g-true-one": (_j({"v": True}), "n", "one_of: [1]", "not"),
    "g-true-range": (_j({"v": True}), "n", "min: 0, max: 5", "not"),
    "g-strnum-range": (_j({"v": "3"}), "n", "min: 0, max: 5", "not"),
    "g-float": ('{"v": 1.0}', "n", "one_of: [1]", "ran"),
    "g-negzero": ('{"v": -0.0}', "n", "one_of: [0]", "ran"),
    "g-empty-range": (_j({"v": []}), "n", "min: 1, max: 5", "not"),
    "g-empty-match": (_j({"v": []}), "to", MATCH_OK, "not"),
    "g-dict": (_j({"v": {"a": OK}}), "to", MATCH_OK, "not"),
    "g-nested": (_j({"v": [[EVIL]]}), "to", MATCH_OK, "not"),
    "g-mixed": (_j({"v": [OK, EVIL]}), "to", MATCH_OK, "not"),
    "g-trailnl": (_j({"v": OK + "\n"}), "to", MATCH_OK, "not"),
    "g-number": (_j({"v": 12345}), "to", 'matches: "^[0-9]+$"', "not"),
    "g-big": ('{"v": 1e308}', "n", "max: 10", "not"),
    "g-bigint": ('{"v": 18446744073709551617}', "n", "min: 0", "not"),
    "g-nan": ('{"v": NaN}', "n", "max: 10", "not"),
    "g-inf": ('{"v": -Infinity}', "n", "max: 10", "not"),
    "g-dupkey": (f'{{"v": "{OK}", "v": "{EVIL}"}}', "to", MATCH_OK, "not"),
    "g-lone": ('{"v": "a\\ud800@ok.example"}', "to", r'matches: "^a.@ok\\.example$"', "not"),
    "g-proto": (
        _j({"__proto__": {"v": EVIL}, "constructor": {"v": EVIL}, "v": OK}),
        "to",
        MATCH_OK,
        "ran",
    ),
}

#: verify / precondition: (stdout, the check, expect)
CHECKS: dict[str, tuple[str, str, str]] = {
    "v-strtrue": (_j({"ok": "true"}), "equals: true", "not"),
    "v-str1": (_j({"ok": "1"}), "equals: 1", "not"),
    "v-true-in": (_j({"ok": True}), "in: [1, 2]", "not"),
    "v-false-ne": (_j({"ok": 0}), "not_equals: 0", "not"),
    "v-float": ('{"ok": 1.0}', "equals: 1", "ran"),
    "v-negzero": ('{"ok": -0.0}', "equals: 0", "ran"),
    "v-num-match": (_j({"ok": 123}), 'matches: "[0-9]+"', "not"),
    "v-nan-ne": ('{"ok": NaN}', "not_equals: 1", "not"),
    "v-missing-ne": (_j({"other": 1}), "not_equals: bad", "not"),
    "v-dupkey": ('{"ok": false, "ok": true}', "equals: true", "not"),
    "v-list-eq": (_j({"ok": [True]}), "equals: true", "not"),
    "p-strtrue": (_j({"ok": "true"}), "equals: true", "not"),
    "p-dupkey": ('{"ok": false, "ok": true}', "equals: true", "not"),
}

#: references written by a tool: (the value ``out`` hands, what rec must get)
REFS: dict[str, str] = {
    "r-secret": "$<secrets.TOK>",
    "r-input": "$<inputs.k>",
    "r-legacy": "${inputs.k}",
    "r-escaped": "$$<inputs.k>",
    "r-result": "$<actions[1].result>",
}


#: references that index a value of another type (E_REF_UNAVAILABLE): slug -> (slug, value, ref)
REFTYPES = {
    s[0]: s
    for s in (
        ("x-str-index", "x@evil.example", "$<actions[1].outputs.v[0]>"),
        ("x-dict-index", {"0": "evil", "1": "evil"}, "$<actions[1].outputs.v[0]>"),
        ("x-list-key", ["evil"], "$<actions[1].outputs.v['0']>"),
        ("x-str-name", "evil", "$<actions[1].outputs.v.upper>"),
        ("x-list-name", ["evil"], "$<actions[1].outputs.v.count>"),
        ("x-dict-len", {"a": "evil"}, "$<actions[1].outputs.v.__len__>"),
    )
}
#: output queries that index a value of another type: RFC 9535 selects nothing (E_OUTPUT_MISSING)
QUERYTYPES = {
    s[0]: s
    for s in (
        ("qs-str-index", "$.json.v[0]", {"v": "x@evil.example"}),
        ("qs-str-slice", "$.json.v[0:3]", {"v": "x@evil.example"}),
        ("qs-dict-index", "$.json.v[0]", {"v": {"0": "evil"}}),
        ("qs-list-key", "$.json.v['0']", {"v": ["evil"]}),
        ("qs-nfd", "$.json.v['\u00e9']", {"v": {"e\u0301": "evil"}}),
    )
}


def _plans() -> dict[str, tuple[str, dict[str, Any]]]:
    """slug -> (actions text, out's spec)"""
    got: dict[str, tuple[str, dict[str, Any]]] = {}
    for slug, (stdout, param, guard, _) in GUARDS.items():
        got[slug] = (_act_out(slug) + _snd(slug, param, guard), {"stdout": stdout})
    for slug, (stdout, check, _) in CHECKS.items():
        if slug.startswith("v-"):
            more = f"    verify: {{expect: {{path: $.json.ok, {check}}}}}\n"
            got[slug] = (_act_out(slug, more, "[]") + _rec(slug, 2, "v: 1"), {"stdout": stdout})
        else:
            more = (
                f"    preconditions: [{{tool: chk, params: {{m: {slug}}}, "
                f"expect: {{path: $.json.ok, {check}}}}}]\n"
            )
            got[slug] = (_rec(slug, 1, "v: 1") + more, {"stdout": stdout})
    for slug, value in REFS.items():
        text = _act_out(slug) + _rec(
            slug, 2, 'v: "$<actions[1].outputs.v>", w: "x-$<actions[1].outputs.v>"'
        )
        got[slug] = (text, {"stdout": _j({"v": value})})
    # key spellings: the plan reads a.b, the tool also offers the key "a.b" and "a']['b"
    got["k-dot"] = (
        _act_out("k-dot", outputs="[{name: v, path: $.json.a.b}]")
        + _rec("k-dot", 2, 'v: "$<actions[1].outputs.v>", w: "$<actions[1].result.json.a.b>"'),
        {"stdout": _j({"a.b": EVIL, "a": {"b": OK}, "a']['b": EVIL, "a[b]": EVIL})},
    )
    # a whole params mapping filled from an output: could set the literal tag
    got["w-params"] = (
        _act_out("w-params")
        + '  - id: 2\n    tool: rec\n    why: w\n    params: "$<actions[1].outputs.v>"\n',
        {"stdout": _j({"v": {"tag": "w-params-evil"}})},
    )
    # retry never re-runs a permanent intake refusal
    for slug, stdout in (
        ("once-nan", '{"v": NaN}'),
        ("once-dup", '{"v": 1, "v": 2}'),
        ("once-deep", "[" * 101 + "]" * 101),
    ):
        got[slug] = (
            _act_out(
                slug,
                "    on_failure: retry\n    retry: {attempts: 3, delay: 0.1, max_delay: 0.2}\n",
            )
            + _rec(slug),
            {"stdout": stdout},
        )
    # a skipped producer: its consumer never runs with a value
    got["skip-ref"] = (
        _act_out("skip-ref", "    on_failure: skip\n") + _rec("skip-ref"),
        {"stdout": '{"v": Infinity}'},
    )
    # output bigger than max_result_bytes (not read as JSON), its JSON valid
    got["big-out"] = (
        _act_out("big-out") + _rec("big-out"),
        {"stdout": _j({"v": OK, "pad": "y" * 70000})},
    )
    # the record: trailers, markdown and YAML in what a tool says
    got["f-trailer-err"] = (
        _act_out("f-trailer-err", outputs="[]"),
        {"stdout": "", "stderr": TRAILERS, "exit": 1},
    )
    got["f-trailer-seps"] = (
        _act_out("f-trailer-seps", outputs="[]"),
        {"stdout": "", "stderr": SEPS + "\n", "exit": 1},
    )
    got["f-trailer-out"] = (
        _act_out("f-trailer-out") + _rec("f-trailer-out"),
        {"stdout": _j({"v": TRAILERS})},
    )
    got["f-nul"] = (
        _act_out("f-nul", outputs="[]"),
        {"stdout": "", "stderr": "boom\x00" + TRAILERS, "exit": 1},
    )
    md = MD
    got["f-markdown"] = (
        _act_out("f-markdown", outputs="[]"),
        {"stdout": "", "stderr": md + MDLINE + "\n", "exit": 1},
    )
    got["f-markdown-out"] = (
        _act_out("f-markdown-out") + _rec("f-markdown-out"),
        {"stdout": _j({"v": md})},
    )
    yml = "x\nexecution:\n  status: completed\n- id: 9\n  status: succeeded\n"
    got["f-yaml"] = (
        _act_out("f-yaml", outputs="[{name: v, path: $.json.v}, {name: k, path: $.json.k}]")
        + _rec("f-yaml"),
        {
            "stdout": _j(
                {"v": yml, "k": {yml: 1, "status: completed": 2, "? a": 3, "&x": 4, "*x": 5}}
            )
        },
    )
    # the result limit in bytes, not characters: 80,000 bytes in 40,000 / 20,000 characters
    for slug, pad in (("big-2byte", "\u00e9" * 40000), ("big-4byte", "\U0001f600" * 20000)):
        got[slug] = (
            _act_out(slug) + _rec(slug),
            {"stdout": json.dumps({"v": OK, "pad": pad}, ensure_ascii=False)},
        )
    # filters over a tool's items: only the type-exact match is selected
    items = {
        "items": [
            {"ok": "true", "n": "9", "b": True, "id": "bad1"},
            {"ok": 1, "n": True, "b": 1, "id": "bad2"},
            {"ok": True, "n": 9, "b": "1", "id": "good"},
        ]
    }
    for slug, query in (
        ("q-eq-true", "$.json.items[?@.ok == true].id"),
        ("q-gt", "$.json.items[?@.n > 5].id"),
        ("q-eq-one", "$.json.items[?@.b == 1].id"),
    ):
        got[slug] = (
            _act_out(slug, outputs=f'[{{name: v, path: "{query}"}}]') + _rec(slug),
            {"stdout": _j(items)},
        )
    # references and queries that index a value of another type: RFC 9535 selects nothing
    for slug, value, ref in REFTYPES.values():
        got[slug] = (_act_out(slug) + _rec(slug, 2, f'v: "{ref}"'), {"stdout": _j({"v": value})})
    for slug, query, result in QUERYTYPES.values():
        got[slug] = (
            _act_out(slug, outputs=f'[{{name: v, path: "{query}"}}]') + _rec(slug),
            {"stdout": json.dumps(result)},
        )
    # the params bound (4,000 characters) against outputs as recorded (a 64-character secret
    # masked to 3): 57,600 real characters recorded as 2,700
    got["lim-secret"] = (
        _act_out("lim-secret") + _rec("lim-secret"),
        {"stdout": _j({"v": LONG * 900})},
    )
    got["lim-secret-text"] = (
        _act_out("lim-secret-text") + _rec("lim-secret-text", 2, 'v: "<$<actions[1].outputs.v>>"'),
        {"stdout": _j({"v": LONG * 900})},
    )
    got["lim-pre"] = (
        _act_out("lim-pre")
        + _rec("lim-pre", 2, "v: 1")
        + '    preconditions: [{tool: chk, params: {m: lim-pre-chk, x: "$<actions[1].outputs.v>"}, expect: {path: $.json.ok, equals: true}}]\n',
        {"stdout": _j({"v": LONG * 900})},
    )
    got["lim-pre-chk"] = ("", {"stdout": _j({"ok": True})})
    got["lim-verify"] = (
        _act_out("lim-verify")
        + _rec("lim-verify", 2, "v: 1")
        + '    verify: {tool: chk, params: {m: lim-verify-chk, x: "$<actions[1].outputs.v>"}, expect: {path: $.json.ok, equals: true}, timeout: 1, interval: 1}\n',
        {"stdout": _j({"v": LONG * 900})},
    )
    got["lim-verify-chk"] = ("", {"stdout": _j({"ok": True})})
    got["lim-plain"] = (
        _act_out("lim-plain") + _rec("lim-plain"),
        {"stdout": _j({"v": "y" * 6000})},
    )
    # characters a YAML writer must escape, in values and keys
    odd = "a\ufffeb\uffff\U0010ffff\U000e0001\x7f\x80\x9f\x1b[2J\u202e\u00a0z"
    got["f-nonchar"] = (
        _act_out("f-nonchar") + _rec("f-nonchar"),
        {"stdout": _j({"v": {odd: odd}})},
    )
    got["f-cut"] = (_act_out("f-cut") + _rec("f-cut"), {"stdout": _j({"v": "c" * 300})})
    # a tool that prints the mask itself, beside a real secret it hands back
    got["f-stars"] = (
        _act_out("f-stars", outputs="[{name: v, path: $.json.v}, {name: w, path: $.json.w}]")
        + _rec("f-stars", 2, 'v: "$<actions[1].outputs.v>", s: "$<secrets.TOK>"'),
        {"stdout": _j({"v": "***", "w": TOK})},
    )
    # a check's failure quotes the value it read: in the log as code only
    got["p-markdown"] = (
        _rec("p-markdown", 1, "v: 1")
        + "    preconditions: [{tool: chk, params: {m: p-markdown}, expect: {path: $.json.ok, equals: true}}]\n",
        {"stdout": _j({"ok": MD + MDLINE})},
    )
    got["v-markdown"] = (
        _act_out(
            "v-markdown",
            "    verify: {expect: [{path: $.json.ok, equals: true}, {path: $.json.ok, matches: 'x.*'}]}\n",
            "[]",
        ),
        {"stdout": _j({"ok": MD + MDLINE})},
    )
    # a NUL (no commit message can carry one) in the line the outcome commit quotes; a later
    # pass must not run anything again
    got["f-nul-last"] = (
        _act_out("f-nul-last", outputs="[]"),
        {"stdout": "", "stderr": "boom\x00" + FORGED, "exit": 1},
    )
    got["py-nul"] = (
        _act_out("py-nul")
        + '  - id: 2\n    tool: pyt\n    why: w\n    params: {msg: "$<actions[1].outputs.v>"}\n',
        {"stdout": _j({"v": "boom\x00\n\n" + FORGED})},
    )
    # the result a failing call left, of an action skipped or replaced by its fallback
    got["skip-result"] = (
        _act_out("skip-result", "    on_failure: skip\n", "[]")
        + _rec("skip-result", 2, 'v: "$<actions[1].result.json.v>"'),
        {"stdout": _j({"v": EVIL}), "exit": 1},
    )
    got["fb-result"] = (
        _act_out(
            "fb-result",
            '    on_failure: fallback\n    fallback: [{id: "1.1", tool: rec, why: w, params: {tag: fb-result-step}}]\n',
            "[]",
        )
        + _rec("fb-result", 2, 'v: "$<actions[1].result.json.v>"'),
        {"stdout": _j({"v": EVIL}), "exit": 1},
    )
    # keys YAML and the record must carry apart
    keys = {
        "a\u0000b": 1,
        "\u2028": 2,
        "\u0085": 3,
        "": 4,
        "-": 5,
        "? x": 6,
        "a": 7,
        "A": 8,
        "\ufeffa": 9,
        "a\r": 10,
    }
    got["f-keys"] = (_act_out("f-keys") + _rec("f-keys"), {"stdout": _j({"v": keys})})
    # a python tool's exception message carries the output, lines and all
    for slug, text in (("py-trailer", TRAILERS), ("py-seps", SEPS), ("py-markdown", MD + MDLINE)):
        got[slug] = (
            _act_out(slug)
            + '  - id: 2\n    tool: pyt\n    why: w\n    params: {msg: "$<actions[1].outputs.v>"}\n',
            {"stdout": _j({"v": text})},
        )
    # a gate's preview of a value an output filled
    got["f-gate"] = (
        _act_out("f-gate") + _rec("f-gate") + "    requires_approval: true\n",
        {"stdout": _j({"v": MD + TRAILERS + "\x85" + FORGED})},
    )
    # characters YAML reads as line breaks, written into the execution block
    got["f-breaks"] = (
        _act_out("f-breaks") + _rec("f-breaks"),
        {"stdout": _j({"v": "a\x85b\u2028c\u2029d\re\ufefff\x00g"})},
    )
    return got


LIB = """\
plan:
  name: lib
  task: a library a plan nests
  status: draft
inputs: {tag: none, u: none, t: LIB-DEFAULT}
available_tools: [{name: rec}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {tag: "$<inputs.tag>", u: "$<inputs.u>", w: "x-$<inputs.u>"}
"""
NEST = """\
  - id: 2
    plan: {{path: plans/lib, hash: "{pin}"}}
    why: w
    inputs: {{tag: {slug}, u: "$<actions[1].outputs.v>"}}
"""
#: a nested plan's input filled with reference text: the child reads it as data
NESTED = {
    "n-secret": "$<secrets.TOK>",
    "n-input": "$<inputs.t>",
    "n-legacy": "${inputs.t}",
    "n-escaped": "$$<inputs.t>",
}


def _plan_text(slug: str, actions: str, status: str = "pending_approval") -> str:
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: {status}\ninputs: {{k: INPUT-VALUE}}\n"
        "available_tools: [{name: out}, {name: chk}, {name: snd}, {name: rec}, {name: pyt}]\nactions:\n"
        + actions
    )


def _build(root: Path) -> Lab:
    plans = _plans()
    outs = {slug: spec for slug, (_, spec) in plans.items()}
    (root / "out.py").write_text(OUT)
    (root / "sec.json").write_text(json.dumps({"TOK": TOK, "LONG": LONG}))
    py, out = json.dumps(sys.executable), json.dumps(str(root / "out.py"))
    env = f"env: {{REC_LOG: {json.dumps(str(root / 'lab' / 'ran.log'))}, OUTS: {json.dumps(str(root / 'outs.json'))}}}"
    rec = json.dumps([sys.executable, str(root / "lab" / "rec.py"), "{tag}"])
    (root / "r102tools.py").write_text(PYT)
    lab = Lab(
        root / "lab",
        tools=f"out: {{kind: exec, argv: [{py}, {out}, '{{m}}'], {env}}}\n"
        f"chk: {{kind: exec, argv: [{py}, {out}, '{{m}}'], idempotent: true, risk: low, {env}}}\n"
        f"snd: {{kind: exec, argv: {rec}, sensitive: [to, n], {env}}}\n"
        "pyt: {kind: python, target: 'r102tools:boom'}\n",
        extra=f"secrets: {{file: {root / 'sec.json'}}}\npython_path: [{json.dumps(str(root))}]\n"
        f"limits: {{max_params_bytes: {MAX_PARAMS}, max_journal_bytes: 8388608}}\n",
    )
    for slug, (actions, _) in plans.items():
        if actions:
            lab.write(slug, _plan_text(slug, actions))
    lab.write("lib", LIB)
    pin = lab.cli("hash", str(lab.repo / "plans" / "lib")).stdout.strip().split()[-1]
    for slug, value in NESTED.items():
        lab.write(slug, _plan_text(slug, _act_out(slug) + NEST.format(slug=slug, pin=pin)))
        outs[slug] = {"stdout": _j({"v": value})}
    (root / "outs.json").write_text(json.dumps(outs))
    lab.write("victim", _plan_text("victim", _rec("victim", 1, "v: 1")))
    lab.commit("plans")
    first = lab.run()
    for slug in [*plans, *NESTED]:
        if (
            plans.get(slug, ("x",))[0]
            and lab.plan(slug).get("plan", {}).get("status") == "pending_approval"
        ):
            lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    second = lab.run()
    got: dict[str, Any] = {}
    got["gate"] = {
        "status": lab.plan("f-gate")["plan"]["status"],
        "log": lab.git("show", "HEAD:plans/f-gate/EXECUTION_LOG.md"),
        "execution": lab.plan("f-gate").get("execution"),
        "msgs": [r[4] for r in lab.log_rows() if r[2] == "plangate@localhost" and "f-gate" in r[4]],
    }
    lab.approve("f-gate", ("Bob", "bob@ops.example.com"))
    third = lab.run()
    got["passlog"] = first.stderr + second.stderr + third.stderr
    got["rows"] = dict(lab.rows())
    got["plans"] = {
        slug: lab.plan(slug) for slug in [*plans, "victim"] if plans.get(slug, ("x",))[0]
    }
    got["logs"] = {}
    for slug in [p for p in plans if plans[p][0]]:
        try:
            got["logs"][slug] = lab.git("show", f"HEAD:plans/{slug}/EXECUTION_LOG.md")
        except Exception:
            got["logs"][slug] = ""
    got["calls"] = {
        slug: [json.loads(c["stdin"] or "null") for c in lab.calls(slug)]
        for slug in [*plans, *NESTED, "victim", "w-params-evil"]
    }
    got["outcalls"] = {slug: len(lab.calls(f"out:{slug}")) for slug in plans}
    got["outsizes"] = {slug: [len(c["stdin"]) for c in lab.calls(f"out:{slug}")] for slug in plans}
    got["commits"] = lab.log_rows()
    got["audit"] = lab.audit()[1]
    got["outcome"] = {}
    for slug in plans:
        if slug.startswith(("f-", "py-")):
            sha = lab.git(
                "log", "-1", "-E", "--format=%H", f"--grep=^plangate: (fail|complete) plans/{slug}$"
            ).strip()
            got["outcome"][slug] = {
                "body": lab.git("log", "-1", "--format=%B", sha) if sha else "",
                "trailers": lab.git(
                    "log", "-1", "--format=%(trailers:key=Plan,key=Plan-Status,key=Plan-Hash)", sha
                ).split("\n")
                if sha
                else [],
            }
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r102-runs-atk102a", _build)


def _md_forged(text: str) -> list[Any]:
    """What a Markdown view (CommonMark, tables) shows of the tool's text outside code: any
    ``FORGED`` marker in a heading, emphasis, table cell, link or raw HTML."""
    from markdown_it import MarkdownIt

    bad: list[Any] = []

    def walk(tokens: list[Any]) -> None:
        for t in tokens:
            if t.type in ("code_inline", "fence", "code_block"):
                continue
            if t.type in ("html_block", "html_inline"):
                bad.append((t.type, t.content[:80]))
            if t.children:
                walk(t.children)
            elif "FORGED" in (t.content or ""):
                bad.append((t.type, t.content[:80]))

    walk(MarkdownIt("commonmark").enable("table").parse(text))
    return bad


EXPECT_Q = {"q-eq-true": ["good"], "q-gt": ["good"], "q-eq-one": ["bad2"]}
RECORD = [
    "f-trailer-err",
    "f-trailer-seps",
    "f-nul",
    "f-nul-last",
    "f-trailer-out",
    "py-trailer",
    "py-seps",
    "py-nul",
]
MARKDOWN = ["f-markdown", "f-markdown-out", "py-markdown", "p-markdown", "v-markdown"]
YAMLISH = {"f-yaml": "v", "f-breaks": "v", "f-keys": "v", "f-nonchar": "v"}

IDS = (
    [f"{s}:guard" for s in GUARDS]
    + [f"{s}:check" for s in CHECKS]
    + [f"{s}:literal" for s in REFS]
    + [f"{s}:literal" for s in NESTED]
    + ["k-dot:keys", "w-params:literal"]
    + [f"{s}:once" for s in ("once-nan", "once-dup", "once-deep")]
    + ["skip-ref:unavailable", "skip-result:unavailable", "fb-result:unavailable"]
    + [f"{s}:limit" for s in ("big-out", "big-2byte", "big-4byte")]
    + [f"{s}:filter" for s in EXPECT_Q]
    + [f"{s}:trailers" for s in RECORD]
    + [f"{s}:markdown" for s in MARKDOWN]
    + [f"{s}:yaml" for s in YAMLISH]
    + [f"{s}:reftype" for s in REFTYPES]
    + [f"{s}:querytype" for s in QUERYTYPES]
    + [
        f"{s}:limit"
        for s in ("lim-secret", "lim-secret-text", "lim-pre", "lim-verify", "lim-plain")
    ]
    + ["f-cut:marked", "f-stars:log", "f-stars:block"]
    + ["f-gate:preview", "f-gate:runs", "victim:status", "victim:audit"]
)

_FAKE = xfail(
    "fake-mask", "a tool's literal `***` is recorded exactly as a masked secret (round 102)"
)
BROKEN: dict[str, Any] = {"f-stars:log": _FAKE, "f-stars:block": _FAKE}


def _row(got: dict[str, Any], slug: str) -> str:
    return str((got["rows"].get(f"plans/{slug}") or {}).get("status"))


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round102_runs_atk102a(lab: Lab, vid: str) -> None:
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    calls = got["calls"].get(slug, [])
    row = got["rows"].get(f"plans/{slug}", {})
    assert slug in ("victim",) or row, sorted(got["rows"])
    if what == "guard":
        expect = GUARDS[slug][3]
        assert got["outcalls"][slug] == 1, got["outcalls"][slug]
        if expect == "not":
            assert calls == [], calls
            assert _row(got, slug) == "failed", row
            return
        assert _row(got, slug) == "completed", row
        assert len(calls) == 1, calls
        value = calls[0].get("n", calls[0].get("to"))
        want = {"g-float": 1, "g-negzero": 0, "g-proto": OK}[slug]
        assert value == want and type(value) is type(want), calls  # 1, never 1.0; 0, never -0.0
        return
    if what == "check":
        expect = CHECKS[slug][2]
        if expect == "not":
            assert calls == [], calls
            assert _row(got, slug) == "failed", row
        else:
            assert len(calls) == 1 and _row(got, slug) == "completed", (calls, row)
        return
    if what == "literal":
        if slug == "w-params":  # the whole params from an output: refused, nothing ran
            assert got["calls"]["w-params-evil"] == [] and calls == [], got["calls"]
            assert _row(got, slug) == "invalid", row
            return
        value = REFS.get(slug) or NESTED[slug]
        name = "v" if slug in REFS else "u"
        assert calls == [{"tag": slug, name: value, "w": "x-" + value}], calls
        assert TOK not in json.dumps(calls), calls
        return
    if what == "keys":
        assert calls == [{"tag": slug, "v": OK, "w": OK}], calls
        return
    if what == "once":
        assert got["outcalls"][slug] == 1, got["outcalls"][
            slug
        ]  # a permanent refusal, never retried
        assert calls == [] and _row(got, slug) == "failed", (calls, row)
        assert "E_TOOL_OUTPUT_INVALID" in json.dumps(row), row
        return
    if what == "unavailable":
        assert calls == [] and _row(got, slug) == "failed", (calls, row)
        assert "E_REF_UNAVAILABLE" in json.dumps(row), row
        return
    if what == "limit" and slug.startswith("lim-"):
        if slug == "lim-verify":  # the action ran; its verify's check tool never got the value
            assert calls == [{"tag": slug, "v": 1}], calls
            assert got["outsizes"]["lim-verify-chk"] == [], got["outsizes"]
        else:
            assert calls == [], calls
            assert got["outsizes"].get(f"{slug}-chk", []) == [], got["outsizes"]
        assert _row(got, slug) == "failed" and "E_LIMIT_EXCEEDED" in json.dumps(row), row
        return
    if what == "limit":
        assert calls == [] and _row(got, slug) == "failed", (calls, row)
        assert "E_OUTPUT_MISSING" in json.dumps(row), row
        return
    if what == "reftype":
        assert calls == [] and _row(got, slug) == "failed", (calls, row)
        assert "E_REF_UNAVAILABLE" in json.dumps(row), row
        return
    if what == "querytype":
        assert calls == [] and _row(got, slug) == "failed", (calls, row)
        assert "E_OUTPUT_MISSING" in json.dumps(row), row
        return
    if what == "marked":
        shown = got["plans"][slug]["execution"]["actions"][0]["outputs"]["v"]
        assert shown.endswith("(cut; 302 chars, see EXECUTION_LOG.md)"), shown
        assert json.dumps("c" * 300) in got["logs"][slug], got["logs"][slug][-1500:]
        return
    if slug == "f-stars":  # the tool's own `***` must not read as a masked secret
        assert calls == [{"tag": slug, "v": "***", "s": TOK}], calls
        if what == "log":
            log = got["logs"][slug]
            part = log[log.find("## Action 2") :]
            params = json.loads(part[part.find("{") : part.find("\n}\n") + 2])
            assert params["v"] != params["s"], params  # the literal and the secret recorded apart
        else:
            outputs = got["plans"][slug]["execution"]["actions"][0]["outputs"]
            assert outputs["v"] != outputs["w"], outputs  # the tool's `***` and its masked secret
        return
    if what == "filter":
        assert calls == [{"tag": slug, "v": EXPECT_Q[slug]}], calls
        return
    if what == "trailers":
        out = got["outcome"][slug]
        status = "completed" if slug == "f-trailer-out" else "failed"
        assert _row(got, slug) == status, row
        assert got["outcalls"][slug] == 1, got["outcalls"][slug]  # once, whatever later passes did
        assert out["body"], out
        own = [t for t in out["trailers"] if t]
        assert [t for t in own if t.startswith("Plan:")] == [f"Plan: plans/{slug}"], own
        assert [t for t in own if t.startswith("Plan-Status:")] == [f"Plan-Status: {status}"], own
        assert VICTIM_HASH not in "\n".join(own), own
        lines = re.split(r"\r\n|\r|\n", out["body"])
        forged = ("Plan: plans/victim", f"Plan-Hash: {VICTIM_HASH}") + (
            (FORGED,) if status == "failed" else ()
        )
        assert not any(line.startswith(forged) for line in lines), out["body"]
        return
    if what == "markdown":
        log = got["logs"][slug]
        assert "FORGEDHEAD" in log, log[-2000:]  # the tool's text is recorded ...
        assert _md_forged(log) == [], _md_forged(log)  # ... as code only
        return
    if what == "yaml":
        assert _row(got, slug) == "completed", row
        execution = got["plans"][slug]["execution"]
        assert execution["status"] == "completed", execution
        assert [a["id"] for a in execution["actions"]] == [1, 2], execution
        assert execution["actions"][0]["outputs"][YAMLISH[slug]] == calls[0]["v"], (
            execution,
            calls,
        )
        return
    if slug == "f-gate":
        gate = got["gate"]
        if what == "preview":
            assert gate["status"] == "awaiting_approval", gate["status"]
            assert _md_forged(gate["log"]) == [], _md_forged(gate["log"])
            assert "Waiting for approval" in gate["log"], gate["log"][-1500:]
            await_msgs = [m for m in gate["msgs"] if m.startswith("plangate: await-approval")]
            assert await_msgs and not any(
                line.startswith(("Plan: plans/victim", FORGED))
                for m in await_msgs
                for line in m.splitlines()
            ), await_msgs
            return
        assert _row(got, slug) == "completed", row
        value = json.loads(_j({"v": MD + TRAILERS + "\x85" + FORGED}))["v"]
        assert calls == [{"tag": slug, "v": value}], calls
        return
    if what == "status":
        assert _row(got, "victim") == "pending_approval", got["rows"].get("plans/victim")
        assert got["calls"]["victim"] == [], got["calls"]["victim"]
        return
    runs = [e for e in got["audit"].get("executions", []) if e.get("plan") == "plans/victim"]
    assert runs == [], runs
