"""Round 98, values (atk98c): tool OUTPUT values reaching later params through references,
RFC 9535 selectors in ``outputs: path:``, and secrets reaching records through references.

Lab (built once, two ``run --once`` passes: P1 freezes, Alice approves every plan in one
commit, P2 runs). Secrets file: ``TOK`` (12 letters/digits) and ``QT`` (``Qx7"Zp\\9/Lm``: a
quote, a backslash and a slash, so each JSON encoding of it is a new text). Tools: ``emit``
(exec) prints the text its ``mode`` names (an edge value, a fixed document, a number, a
secret it was handed as a JSON key, JSON-encoded twice or three times) or echoes its stdin
(``echo``); ``rec`` (advkit's recorder) records its stdin; ``recs`` is ``rec`` with a
``params_schema`` (``v``: ``^[0-9]+$``); ``reca`` is ``rec`` with ``--v={v}`` in its argv.
Every plan: action 1 ``emit`` with output ``o``, action 2 a sink given ``o`` (or a text,
argv or ``result`` reference around it).
``o-*``: edge outputs (``1e400``, ``-0``, ``1.0``, ``2^53+1``, ``1E+2``, ``10^400``, a
duplicate key, ``NaN``/``Infinity``/``-Infinity``, a top-level scalar/array/string, JSON on
stderr only, non-UTF-8 bytes, a lone surrogate escape, nesting of 90/150/5,000/20,000/100,000
levels, ``$.stdout``). ``p-*``: selectors over one document (filters, ``length``/``match``/
``search``, slices, ``[::-1]``, ``[::0]``, wildcards on lists and objects, ``$..id``,
negative and out-of-range indices, bracket names, no match; bad syntax, ``[01]``,
``[2^53]``, no ``$``). ``t-*``: a number/boolean/null/list/string output inside a longer
string (``n=$<...>;``). ``a-*``: an output into an argv placeholder. ``s-*``: secrets through
references (halves joined from two outputs; QT echoed, in text, in an object or list rendered
as text, JSON-encoded twice/three times, through ``result``/``result.stdout``/``result.json``;
TOK into a ``params_schema`` refusal, a ``.x``/``[0]`` of a string, argv; the plan's own literal
``***`` beside a secret selected by ``@ == '***'``, ``length(@) == 3``, ``@ != 'zz'``, ``*``).
``k-*``: TOK/QT as the KEY of an unusable value (NaN, duplicate, 2^53+1, lone surrogate, too
deep), so the E_ message names the key.
Checks: ``<o|p|t|a>-*:run`` the tool got the defined value (JSON-equal; ``t-``/``a-``: the
text is the same JSON value) or the named E_ code and was not called; EXECUTION_LOG.md's
resolved params for action 2 equal the tool's stdin; ``a-``: the argv element is the value's
text. ``s-*``/``k-*:rec`` no form of TOK/QT (raw, JSON-escaped 1-3 times, fragments) in
EXECUTION_LOG.md, ``git log -p`` of the plan, ``show``, ``status --json`` or PLAN.yml, and the
defined value where there is one. ``all:clean`` no traceback anywhere, both passes exit 0, the
control ``c-honest`` ran; ``all:strict`` every sink's stdin strict JSON.

Seen (round 98): 103 ids, 0 broke: clean. Edge outputs: ``1e400``/``NaN``/``±Infinity``/
``2^53+1``/``10^400``/lone surrogate/a duplicate key/nesting past 100 levels each
``E_TOOL_OUTPUT_INVALID`` naming the JSONPath (``its result at $["json"]["x"] is NaN ...``,
``names the member 'x' twice``), the sink not called; ``-0``→``0``, ``1.0``→``1``,
``1E+2``→``100``; JSON on stderr, non-UTF-8 stdout and 100,000-deep output past
``max_result_bytes`` ``E_OUTPUT_MISSING``; the log's resolved params always equal the sink's
stdin. Selectors: every RFC 9535 form gave the RFC's nodes (``[::-1]`` ``[3,2,1]``,
``$..id`` ``[1,2,3,9]``), ``[::0]``/``[-4]``/no match ``E_OUTPUT_MISSING``, bad syntax
``E_SCHEMA_INVALID`` at freeze (``not an RFC 9535 JSONPath query: leading zero ...``).
Secrets: every record showed ``***`` (``'***' does not match '^[0-9]+$'``,
``its result at $["json"]["***"]``, ``names the member '***' twice``); the join of two
halves was masked as resolved params; filters did not select the redacted secret
(``@ == '***'`` gave ``["***"]``), ``*`` gave the secret (the plan's own selection).
Seen, not asserted: a number inside a longer string or an argv element is Python's
float text, not RFC 8785's (``1e20`` → ``1e+20``, ``1e-7`` → ``1e-07``, ``0.000001`` →
``1e-06``; JCS writes ``100000000000000000000``, ``1e-7``, ``0.000001``), while integral
floats within 2^53 are written as integers (``1E+2`` → ``100``). SPEC §3 says only "compact
JSON", and both texts parse to the same number; 100-level nesting counts the result's own
wrapper (an output 100 deep, ``{"x": [[...99]]}``, is refused).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

TOK = "Rv8Tn3Yc6Hd1"
QT = 'Qx7"Zp\\9/Lm'
SECRETS = {"TOK": TOK, "QT": QT}


def _needles() -> list[str]:
    out = []
    for sec in (TOK, QT):
        x = sec
        for _ in range(4):
            out.append(x)
            x = json.dumps(x)[1:-1]
    out += ["Zp\\9", 'Qx7\\"', "9/Lm"]
    return sorted(set(out))


NEEDLES = _needles()

EMIT = r"""
import json, os, sys
mode = sys.argv[1]
data = sys.stdin.read()
M = json.loads(open(os.environ["MODES"]).read())
if mode == "echo":
    print(json.dumps(json.loads(data)))
    sys.exit(0)
if mode.startswith("sec"):
    k = json.dumps(json.loads(data)["s"])
    body = {"secnan": k + ": NaN", "secdup": k + ": 1, " + k + ": 2",
            "secbig": k + ": 9007199254740993", "secsurr": k + ': "\\ud800"',
            "secdeep": k + ": " + "[" * 100000 + "]" * 100000}[mode.split("-")[0]]
    sys.stdout.write("{" + body + "}\n")
    sys.exit(0)
if mode.startswith("num-"):
    sys.stdout.write('{"x": ' + mode[4:] + '}\n')
    sys.exit(0)
if mode in ("dbl", "trip"):
    x = json.loads(data)["s"]
    for _ in range(1 if mode == "dbl" else 2):
        x = json.dumps(x)
    print(json.dumps({"x": x, "o": {"s": json.loads(data)["s"]}}))
    sys.exit(0)
if mode.startswith("deep-"):
    n = int(mode[5:])
    sys.stdout.write('{"x": ' + "[" * n + "]" * n + "}\n")
    sys.exit(0)
if mode == "deep":
    sys.stdout.write("[" * 100000 + "]" * 100000 + "\n")
    sys.exit(0)
if mode == "nonutf8":
    sys.stdout.buffer.write(b'{"x": "a\xff\xfeb"}\n')
    sys.exit(0)
text = M[mode]
if mode.startswith("err"):
    sys.stderr.write(text + "\n")
else:
    sys.stdout.write(text + "\n")
"""

BIG = 2**53 + 1
#: s-*: what the sink must get where the promise defines it (the plan's own literal "***",
#: the secret only where the plan's reference selects the secret's node)
SWANT: dict[str, Any] = {
    "s-lit": "***",
    "s-filt": ["***"],
    "s-filtlen": ["***"],
    "s-filtne": ["***", "echo"],
    "s-wild": sorted(["***", "echo", TOK]),
    "s-qt": QT,
    "s-concat": TOK,
}
#: o-*: the text printed, the path, what action 2 must get (a value) or an E_ code prefix
OUTS: dict[str, tuple[str, str, Any]] = {
    "inf400": ('{"x": 1e400}', "$.json.x", "E_"),
    "negz": ('{"x": -0}', "$.json.x", 0),
    "one0": ('{"x": 1.0}', "$.json.x", 1.0),
    "big53": (f'{{"x": {BIG}}}', "$.json.x", "E_TOOL_OUTPUT_INVALID"),
    "e2": ('{"x": 1E+2}', "$.json.x", 100.0),
    "hugeint": ('{"x": 1' + "0" * 400 + "}", "$.json.x", "E_"),
    "dup": ('{"x": 1, "x": 2}', "$.json.x", "E_TOOL_OUTPUT_INVALID"),
    "nan": ('{"x": NaN}', "$.json.x", "E_"),
    "inf": ('{"x": Infinity}', "$.json.x", "E_"),
    "ninf": ('{"x": -Infinity}', "$.json.x", "E_"),
    "scalar": ("42", "$.json", 42),
    "array": ("[1, 2, 3]", "$.json[1]", 2),
    "str": ('"hi"', "$.json", "hi"),
    "errjson": ('{"x": 5}', "$.json.x", "E_OUTPUT_MISSING"),
    "nonutf8": ("", "$.json.x", "E_"),
    "surr": ('{"x": "a\\ud800b"}', "$.json.x", "E_TOOL_OUTPUT_INVALID"),
    "deep": ("", "$.json[0]", "E_"),
    "stdout": ('{"x": 7}', "$.stdout", '{"x": 7}\n'),
    "deep-90": ("", "$.json.x", None),
    "deep-150": ("", "$.json", "E_TOOL_OUTPUT_INVALID"),
    "deep-150x": ("", "$.json.x", "E_TOOL_OUTPUT_INVALID"),
    "deep-5000": ("", "$.json", "E_TOOL_OUTPUT_INVALID"),
    "deep-20000": ("", "$.json", "E_TOOL_OUTPUT_INVALID"),
}
DOC = json.dumps(
    {
        "a": [{"id": 1, "k": "x"}, {"id": 2, "k": "yy"}, {"id": 3, "k": "x"}],
        "m": {"b": {"id": 9}},
    }
)
#: p-*: a selector over DOC (under $.json) and the value or E_ code
PATHS: dict[str, tuple[str, Any]] = {
    "filter": ("$.json.a[?@.k=='x'].id", [1, 3]),
    "filtnum": ("$.json.a[?@.id > 1.5].id", [2, 3]),
    "slice": ("$.json.a[0:2].id", [1, 2]),
    "rev": ("$.json.a[::-1].id", [3, 2, 1]),
    "step0": ("$.json.a[::0].id", "E_OUTPUT_MISSING"),
    "slice1": ("$.json.a[0:1].id", [1]),
    "wild": ("$.json.a[*].k", ["x", "yy", "x"]),
    "wildobj": ("$.json.m.*", [{"id": 9}]),
    "desc": ("$..id", [1, 2, 3, 9]),
    "neg": ("$.json.a[-1].id", 3),
    "negout": ("$.json.a[-4].id", "E_OUTPUT_MISSING"),
    "nothing": ("$.json.zz", "E_OUTPUT_MISSING"),
    "length": ("$.json.a[?length(@.k)==2].id", [2]),
    "match": ("$.json.a[?match(@.k, 'y+')].id", [2]),
    "search": ("$.json.a[?search(@.k, 'y')].id", [2]),
    "bracket": ("$['json']['a'][0]['id']", 1),
    "badsyn": ("$.json.a[?@.k==]", "E_"),
    "lead0": ("$.json.a[01]", "E_"),
    "hugeidx": ("$.json.a[9007199254740992]", "E_"),
    "nopfx": ("json.a", "E_"),
}


def plan(
    slug: str,
    mode: str,
    path: str,
    sink: str = "rec",
    v: str = "$<actions[1].outputs.o>",
    p1: str = "",
) -> str:
    return (
        f'plan:\n  name: "{slug}"\n  task: t\n  status: pending_approval\n'
        f"available_tools: [{{name: emit}}, {{name: {sink}}}]\nactions:\n"
        f"  - id: 1\n    tool: emit\n    why: w\n    params: {{mode: {json.dumps(mode)}{p1}}}\n"
        f"    outputs: [{{name: o, path: {json.dumps(path)}}}]\n"
        f"  - id: 2\n    tool: {sink}\n    why: w\n"
        f"    params: {{tag: {json.dumps(slug)}, v: {json.dumps(v)}}}\n"
    )


def concat_plan(slug: str) -> str:
    return (
        f'plan:\n  name: "{slug}"\n  task: t\n  status: pending_approval\n'
        "available_tools: [{name: emit}, {name: rec}]\nactions:\n"
        '  - id: 1\n    tool: emit\n    why: w\n    params: {mode: echo, h: "Rv8Tn3"}\n'
        '    outputs: [{name: o, path: "$.json.h"}]\n'
        '  - id: 2\n    tool: emit\n    why: w\n    params: {mode: echo, h: "Yc6Hd1"}\n'
        '    outputs: [{name: o, path: "$.json.h"}]\n'
        "  - id: 3\n    tool: rec\n    why: w\n"
        f'    params: {{tag: "{slug}", v: "$<actions[1].outputs.o>$<actions[2].outputs.o>"}}\n'
    )


SECS: dict[str, str] = {
    "s-concat": concat_plan("s-concat"),
    "s-qt": plan("s-qt", "echo", "$.json.s", p1=', s: "$<secrets.QT>"'),
    "s-qtin": plan(
        "s-qtin",
        "echo",
        "$.json.s",
        p1=', s: "$<secrets.QT>"',
        v="pre $<actions[1].outputs.o> post",
    ),
    "s-schema": plan("s-schema", "echo", "$.json.s", sink="recs", p1=', s: "$<secrets.TOK>"'),
    "s-refpath": plan(
        "s-refpath", "echo", "$.json.s", v="$<actions[1].outputs.o.x>", p1=', s: "$<secrets.TOK>"'
    ),
    "s-idx": plan(
        "s-idx", "echo", "$.json.s", v="$<actions[1].outputs.o[0]>", p1=', s: "$<secrets.TOK>"'
    ),
    "s-objtok": plan(
        "s-objtok", "echo", "$.json", v="obj=$<actions[1].outputs.o>", p1=', s: "$<secrets.TOK>"'
    ),
    "s-objqt": plan(
        "s-objqt", "echo", "$.json", v="obj=$<actions[1].outputs.o>", p1=', s: "$<secrets.QT>"'
    ),
    "s-listqt": plan(
        "s-listqt", "echo", "$..s", v="l=$<actions[1].outputs.o>", p1=', s: "$<secrets.QT>"'
    ),
    "s-argvq": plan("s-argvq", "echo", "$.json.s", sink="reca", p1=', s: "$<secrets.QT>"'),
    "s-dbl": plan("s-dbl", "dbl", "$.json.x", p1=', s: "$<secrets.QT>"'),
    "s-trip": plan("s-trip", "trip", "$.json.x", p1=', s: "$<secrets.QT>"'),
    "s-dblin": plan(
        "s-dblin", "dbl", "$.json.o", v="o=$<actions[1].outputs.o>", p1=', s: "$<secrets.QT>"'
    ),
    "s-lit": plan("s-lit", "echo", "$.json.b", p1=', a: "$<secrets.TOK>", b: "***"'),
    "s-filt": plan("s-filt", "echo", "$.json[?@ == '***']", p1=', a: "$<secrets.TOK>", b: "***"'),
    "s-filtlen": plan(
        "s-filtlen", "echo", "$.json[?length(@) == 3]", p1=', a: "$<secrets.TOK>", b: "***"'
    ),
    "s-filtne": plan(
        "s-filtne", "echo", "$.json[?@ != 'zz']", p1=', a: "$<secrets.TOK>", b: "***"'
    ),
    "s-wild": plan("s-wild", "echo", "$.json.*", p1=', a: "$<secrets.TOK>", b: "***"'),
    "s-result": plan(
        "s-result", "echo", "$.json.s", v="r=$<actions[1].result>", p1=', s: "$<secrets.QT>"'
    ),
    "s-resout": plan(
        "s-resout", "echo", "$.json.s", v="$<actions[1].result.stdout>", p1=', s: "$<secrets.QT>"'
    ),
    "s-resjson": plan(
        "s-resjson", "dbl", "$.json.s", v="$<actions[1].result.json>", p1=', s: "$<secrets.QT>"'
    ),
    "s-argv": plan("s-argv", "echo", "$.json.s", sink="reca", p1=', s: "$<secrets.TOK>"'),
}
#: t-*: a number printed by the tool, embedded in a longer string: the text (ECMAScript/JCS form)
TEXTS: dict[str, tuple[str, str]] = {
    "one0": ("1.0", "1"),
    "negz": ("-0", "0"),
    "negz0": ("-0.0", "0"),
    "e2": ("1E+2", "100"),
    "e21": ("1e21", "1e+21"),
    "e20": ("1e20", "100000000000000000000"),
    "em7": ("1e-7", "1e-7"),
    "em6": ("0.000001", "0.000001"),
    "tiny": ("5e-324", "5e-324"),
    "sum": ("0.30000000000000004", "0.30000000000000004"),
    "max": ("1.7976931348623157e308", "1.7976931348623157e+308"),
    "big": ("9007199254740991", "9007199254740991"),
    "str": ('"a\\"b"', 'a"b'),
    "bool": ("true", "true"),
    "null": ("null", "null"),
    "list": ("[1, 2.0, -0]", "[1,2,0]"),
}
#: k-*: TOK / QT as an output's JSON KEY with an unusable value: the E_ message names the key
KEYS = [
    "secnan-t",
    "secdup-t",
    "secbig-t",
    "secsurr-t",
    "secdeep-t",
    "secnan-q",
    "secdup-q",
    "secbig-q",
    "secsurr-q",
]
SLUGS = [f"o-{m}" for m in OUTS] + [f"p-{m}" for m in PATHS] + list(SECS) + ["c-honest"]
#: a-*: a tool output handed to an exec tool's argv placeholder (``--v={v}``): its one argv
#: element is the value's text, the same value the tool got on stdin
ARGS: dict[str, str] = {
    "e20": "1e20", "em7": "1e-7", "negz": "-0", "half": "1.5", "true": "true", "null": "null",
    "list": "[1, 2.0]", "obj": '{"b": 1, "a": [true]}', "str": '"s p\\n-x"', "empty": '""',
}  # fmt: skip
SLUGS += [f"a-{m}" for m in ARGS]
SLUGS += [f"t-{m}" for m in TEXTS] + [f"k-{m}" for m in KEYS]


def _build(root: Path) -> Lab:
    (root / "sec.json").write_text(json.dumps(SECRETS))
    modes = {m: t for m, (t, _p, _w) in OUTS.items()}
    modes["doc"] = DOC
    modes["errjson"] = OUTS["errjson"][0]
    (root / "modes.json").write_text(json.dumps(modes))
    (root / "emit.py").write_text(EMIT)
    lab = Lab(root / "lab", extra=f"secrets: {{file: {root / 'sec.json'}}}\n")
    rec = [sys.executable, str(lab.recorder), "{tag}"]
    env = json.dumps({"REC_LOG": str(lab.log)})
    emit = [sys.executable, str(root / "emit.py"), "{mode}"]
    lab.write_config(
        extra=f"secrets: {{file: {root / 'sec.json'}}}\n",
        tools=(
            f"emit: {{kind: exec, argv: {json.dumps(emit)},"
            f" env: {{MODES: {json.dumps(str(root / 'modes.json'))}}}}}\n"
            f"recs: {{kind: exec, argv: {json.dumps(rec)}, env: {env}, params_schema: "
            '{type: object, properties: {v: {type: string, pattern: "^[0-9]+$"}}}}\n'
            f"reca: {{kind: exec, argv: {json.dumps([*rec, '--v={v}'])}, env: {env}}}\n"
        ),
    )
    for m, (_t, p, _w) in OUTS.items():
        lab.write(f"o-{m}", plan(f"o-{m}", m.rstrip("x"), p))
    for m, (p, _w) in PATHS.items():
        lab.write(f"p-{m}", plan(f"p-{m}", "doc", p))
    for s, text in SECS.items():
        lab.write(s, text)
    lab.write("c-honest", plan("c-honest", "scalar", "$.json"))
    for m, (t, _w) in TEXTS.items():
        lab.write(f"t-{m}", plan(f"t-{m}", f"num-{t}", "$.json.x", v="n=$<actions[1].outputs.o>;"))
    for m, t in ARGS.items():
        lab.write(f"a-{m}", plan(f"a-{m}", f"num-{t}", "$.json.x", sink="reca"))
    for m in KEYS:
        sec = "TOK" if m.endswith("-t") else "QT"
        lab.write(f"k-{m}", plan(f"k-{m}", m, "$.json", p1=f', s: "$<secrets.{sec}>"'))
    lab.commit("agent: plans")
    got: dict[str, Any] = {"p1": lab.run(check=False)}
    for s in SLUGS:
        if (lab.repo / "plans" / s / "PLAN.yml").exists():
            try:
                lab.set_status(s, "approved")
            except Exception as e:
                got.setdefault("noset", {})[s] = repr(e)
    lab.commit("alice: approve", ALICE)
    got["p2"] = lab.run(check=False)
    st = lab.cli("status", "--json", "--config", str(lab.config))
    got["rows"] = {r["plan"]: r for r in json.loads(st.stdout)}
    got["calls"] = {s: [c["stdin"] for c in lab.calls(s)] for s in SLUGS}
    got["argv"] = {s: [c["argv"] for c in lab.calls(s)] for s in SLUGS}
    got["logs"], got["hist"], got["show"], got["plans"] = {}, {}, {}, {}
    for s in SLUGS:
        p = lab.repo / "plans" / s / "EXECUTION_LOG.md"
        got["logs"][s] = p.read_text() if p.exists() else ""
        got["hist"][s] = lab.git("log", "-p", "--format=fuller%n%B", "--", f"plans/{s}")
        sh = lab.cli("show", "--config", str(lab.config), str(lab.repo / "plans" / s / "PLAN.yml"))
        got["show"][s] = sh.stdout + sh.stderr
        got["plans"][s] = (lab.repo / "plans" / s / "PLAN.yml").read_text()
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _lab(factory: pytest.TempPathFactory) -> Lab:
    return shared(factory, "r98-values-atk98c", _build)


def _strict(text: str) -> Any:
    def bad(c: str) -> Any:
        raise ValueError(f"non-JSON constant {c}")

    return json.loads(text, parse_constant=bad)


def _codes(got: dict[str, Any], slug: str) -> str:
    row = got["rows"].get(f"plans/{slug}", {})
    return json.dumps(row, ensure_ascii=False) + got["plans"][slug]


def _want(slug: str) -> Any:
    kind, m = slug.split("-", 1)
    if kind == "o":
        return OUTS[m][2]
    if kind == "p":
        return PATHS[m][1]
    if kind == "a":
        return None
    if kind == "t":
        return TEXTS[m][1]
    return 42


SECRET_SLUGS = [*SECS, *(f"k-{m}" for m in KEYS)]
IDS = [f"{s}:run" for s in SLUGS if s not in SECRET_SLUGS] + [f"{s}:rec" for s in SECRET_SLUGS]
IDS += ["all:clean", "all:strict"]
BROKEN: dict[str, Any] = {}


def _log_value(log: str, action: int) -> Any:
    """The resolved ``v`` the log records for an action (the JSON params block)."""
    sec = log.split(f"Action {action}", 1)
    assert len(sec) == 2, log[:1500]
    m = re.search(r"Params \(resolved\):\*\*\s*```json\n(.*?)\n```", sec[1], re.S)
    assert m, sec[1][:1500]
    return _strict(m.group(1))["v"]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round98_atk98c(tmp_path_factory: pytest.TempPathFactory, vid: str) -> None:
    got = _lab(tmp_path_factory).got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    if slug == "all":
        if what == "clean":  # no traceback anywhere; the controller itself worked
            assert got["p1"].returncode == 0 and got["p2"].returncode == 0, got["p2"].stderr[-1500:]
            for s in SLUGS:
                text = got["logs"][s] + _codes(got, s) + got["show"][s]
                assert "Traceback" not in text, (s, text[-1500:])
            assert "Traceback" not in got["p1"].stderr + got["p2"].stderr
            assert len(got["calls"]["c-honest"]) == 1  # the control ran
        else:  # every sink got strict JSON on stdin (no NaN/Infinity)
            for s in SLUGS:
                for c in got["calls"][s]:
                    _strict(c)
        return
    calls = got["calls"][slug]
    codes = _codes(got, slug)
    if what == "rec":
        assert got["logs"][slug] and "Action 2" in got["logs"][slug], codes[-800:]
        for k in ("logs", "hist", "show"):
            for n in NEEDLES:
                assert n not in got[k][slug], (k, n)
        for n in NEEDLES:
            assert n not in codes, n
        if slug in SWANT:
            assert len(calls) == 1, codes[-1500:]
            v = _strict(calls[0])["v"]
            v = sorted(v) if slug == "s-wild" else v
            assert v == SWANT[slug], (v, SWANT[slug])
        return
    want = _want(slug)
    if isinstance(want, str) and want.startswith("E_"):
        assert calls == [], calls
        assert want in codes, codes[-1500:]
        return
    assert len(calls) == 1, codes[-1500:]
    v = _strict(calls[0])["v"]
    # the log records for action 2 the very value the tool got on stdin
    rec = _log_value(got["logs"][slug], 2)
    assert json.dumps(rec) == json.dumps(v), (rec, v)
    if slug.startswith("a-"):
        argv = got["argv"][slug][0]
        arg = [x for x in argv if x.startswith("--v=")]
        assert len(arg) == 1, argv
        text = arg[0][4:]
        if isinstance(v, str):
            assert text == v, (text, v)
        else:
            assert _strict(text) == v, (text, v)
    if slug.startswith("t-"):  # the text of the same JSON value (JCS form seen aside)
        assert v.startswith("n=") and v.endswith(";"), v
        if TEXTS[slug[2:]][0].startswith('"'):
            assert v == "n=" + want + ";", (v, want)
        else:
            assert _strict(v[2:-1]) == _strict(want), (v, want)  # the same JSON value
    elif want is not None:
        if isinstance(want, list) and slug == "p-desc":
            assert sorted(v) == want, v
        elif isinstance(want, float | int) and not isinstance(want, bool):
            assert isinstance(v, float | int) and v == want, (v, want)  # JSON numbers
        else:
            assert json.dumps(v) == json.dumps(want) and type(v) is type(want), (v, want)


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="lab-", dir="/tmp/atk98c"))
    got = _build(out).got  # type: ignore[attr-defined]
    print("P1", got["p1"].returncode, got["p1"].stderr[-1500:])
    print("P2", got["p2"].returncode, got["p2"].stderr[-3000:])
    for s in SLUGS:
        r = got["rows"].get(f"plans/{s}", {})
        print(f"== {s}: {r.get('status')} {str(r.get('reason'))[:300]} calls={got['calls'][s]}")
    print(out)
