r"""Round 127, values and secrets (atk127e): "a value reaches the tool exactly as approved, and
a secret never leaves the controller in any form".

Work in progress (first commit): error-code, substring, Unicode and values ids.
"""

from __future__ import annotations

import base64
import json
import sys
import unicodedata
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, build_all
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
elif m == "values":
    w(p["json"])
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
}

#: the remainder of the longer secret once the shorter one (a secret of its own) is masked:
#: readable, it hands out the rest of the longer one
REMAINDER = {"sub-prefix": A[len(PREA) :], "sub-suffix": B[: -len(SUFB)]}

#: outputs of another tool handed on by whole references and inside text
VALUES_JSON = (
    '{"f": 0.30000000000000004, "one": 1.0, "e2": 1E+2, "tiny": 5e-324, '
    '"neg": -9007199254740991, "nfd": "e\\u0301", "nfc": "\\u00e9", "rtl": "\\u202eabc\\u202c", '
    '"zw": "a\\u200db", "bom": "\\ufeffx", "nl": "a\\r\\nb", '
    '"big": "123456789012345678901234567890"}'
)
VALUE_KEYS = ["f", "one", "e2", "tiny", "neg", "nfd", "nfc", "rtl", "zw", "bom", "nl", "big"]


def _values_plan() -> str:
    outs = ", ".join(f"{{name: {k}, path: $.json.{k}}}" for k in VALUE_KEYS)
    refs = ", ".join(f'{k}: "$<actions[1].outputs.{k}>"' for k in VALUE_KEYS)
    texts = ", ".join(f't{k}: "<$<actions[1].outputs.{k}>>"' for k in VALUE_KEYS)
    return _plan(
        "v-values",
        "  - id: 1\n    tool: pt\n    why: w\n"
        f"    params: {{tag: v-values-1, mode: values, json: {json.dumps(VALUES_JSON)}}}\n"
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


def _log(lab: Lab, slug: str) -> str:
    path = lab.repo / "plans" / slug / "EXECUTION_LOG.md"
    return path.read_text() if path.exists() else ""


def build(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.py").write_text(TOOL)
    sec = root / "sec.yml"
    sec.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in SECRETS.items()))
    argv = json.dumps([PY, str(root / "t.py")])
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {sec}}}\n",
        tools=f"pt: {{kind: exec, argv: {argv}}}\n"
        f"ck: {{kind: exec, argv: {argv}, idempotent: true, risk: low}}\n",
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
        "log": {s: _log(lab, s) for s in every},
    }


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build_all(tmp_path_factory.mktemp("r127e"), {"lab": build}).got["lab"]  # type: ignore[attr-defined]


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
