"""Round 96, values (atk96e): secrets printed by a tool in forms round 95 left (a file name, a
2nd line, a line break inside, the output limit, one secret inside another, two adjacent,
regex metacharacters, a newline in the secret, percent / ``\\u`` / base64 / hex, an output
reference carrying the secret into a later action's error), each grepped on every surface; and
TOON-plan JSON sources through ``plangate convert`` (numbers, a repeated key, an unknown field).

Lab (built once, two ``run --once`` passes; ``limits.max_result_bytes: 4096``; a secrets file
with ``TOK`` (12 letters/digits), ``SUB`` (8, inside ``LONG``), ``LONG`` (20), ``META``
(``a.b*c+(d)[e]^$|?x``) and ``NL`` (two 6-character lines)). The ``leak`` exec tool records its
argv, stdin and environment keys in ``ran.log`` and prints what its ``tag`` (argv) says. One plan
per id, committed by the agent, frozen in P1, approved by Alice in one commit, run in P2.
``s-*``: what ``leak`` prints (``plain``: TOK; ``line2``: TOK on a 2nd line; ``brk``: TOK cut
by a line end; ``fname``: creates ``f-<TOK>.txt`` and reports its path and ``os.listdir``;
``fnerr``: opens a missing ``<dir>/<TOK>.cfg`` and exits 1 with Python's traceback; ``pct``:
META percent-encoded; ``uesc``: TOK as ``\\uXXXX`` escapes in a JSON string; ``b64``/``hex``:
TOK's base64/hex; ``trunc``: 4,094 filler characters then TOK, past the 4,096 limit;
``sub``: LONG (SUB inside it); ``adj``: TOK, SUB and META adjacent; ``meta``: META; ``nl``: NL
as printed; ``key``: TOK as a JSON key; ``err2``: stderr ``part 1: <TOK[:6]>`` /
``<TOK[6:]>`` exit 2); ``r-*``: action 1 echoes ``$<secrets.TOK>`` as output ``o``; action 2
gets ``$<actions[1].outputs.o>`` and fails printing it (raw, base64, percent) on stderr.
Checks per id: ``:ran`` the tool ran as approved (once per action); ``:log`` EXECUTION_LOG.md,
``:hist`` ``git log -p`` of the plan's folder (messages included), ``:status`` its
``status --json`` row, ``:show`` ``plangate show`` after the run: none holds the secret nor its
encodings (raw, base64, hex, percent, ``\\u``, the non-SUB parts of LONG, TOK's halves).
``all:*``: the whole history (``git log -p --all``), ``status`` text, the fresh-clone
``audit --json``, both passes' stderr (the daemon's log lines) and the state directory's files.
``f-*``: TOON-plan JSON converted, committed as converted, run: ``1e2`` and ``100`` hash alike and
the tool got ``100`` from each; ``-0.0``; a repeated key, an unknown step field and ``1e400``
refused by ``convert``.

Seen (round 96): 8 ids broke, two classes (both a secret cut in two, each half printed where
no one record holds it whole).

1. **A secret split over a call's stdout and stderr** (``s-split:log``, ``:hist``, ``:state``,
   ``:mcp``): ``leak`` printed ``head: Rv8Tn3`` on stdout and ``Yc6Hd1 :tail`` on stderr
   (TOK ``Rv8Tn3Yc6Hd1``); EXECUTION_LOG.md (and the outcome commit, the run's journal in the
   state directory, the MCP ``log`` answer) recorded ``"stdout": "head: Rv8Tn3\n..."`` and
   ``"stderr": "Yc6Hd1 :tail\n"``: the whole secret, one record. The same cut by a line end
   inside stdout (``s-brk``) was recorded ``"key: ***"``, and inside stderr (``s-err2``)
   ``part 1: ***``.
2. **A secret split over two calls** (``s-split2:*``, same four surfaces): action 1 printed
   ``head: Rv8Tn3``, action 2 ``Yc6Hd1 :tail``; both in the one EXECUTION_LOG.md in clear.
   (docs/threat-model.md line 264 lists "parts of a secret" as not covered for whole-form
   encodings; the lead may judge these two an accepted limit.)
   ``status``/``show`` of both plans held nothing of it (the plans completed).

Held: ``plain``, ``line2`` (2nd line), ``brk``, ``key`` (a JSON key), ``nl`` (a newline in the
secret; ``nljson``, ``nlcrlf``, ``nlsp``), ``meta`` (``a.b*c+(d)[e]^$|?x``; ``re.escape`` of it
``metare``: ``pattern: ***``), ``pct``/``pctall``/``pctlow``, ``uesc``/``uescmix``, ``b64``,
``b64mis`` (``eF***Q==``), ``b64adj``, ``hex``, ``sub`` (SUB inside LONG: ``long: ***``, no
``Hk3Qa7``/``Jp5Zy2`` left), ``adj`` (three adjacent: ``*********``), ``fname`` (``f-***.txt``
in the path and the listing), ``fnerr`` (``.../missing/***.cfg`` in the traceback and the
error), ``trunc``/``trb64``/``trhex`` (cut at 4,096 bytes before any of it), ``err2``; the
output reference ``r-raw``/``r-b64``/``r-pct``: action 2 got TOK (the tool's own value,
documented) and its error was recorded ``refused value: ***``, ``refused value b64: ***``,
``GET /x?q=***%2F 400``. Every surface checked with the secrets whole (and decoded: percent,
``\\u``, every base64/hex run at every offset): whole history, ``status`` text/JSON, MCP
``status``, the fresh-clone audit, both passes' stderr, the state directory. Formats: ``1e2``,
``1E+2`` and ``100`` converted to ``v: 100.0``, hashed alike (``sha256:f2e55c86...``) and the
tool got ``100`` from each; ``-0.0`` gave ``0``; ``"v": 1, "v": 2`` ``E_SCHEMA_INVALID ... is
said twice in one object``; ``1e400`` refused (``out of range float values are not JSON
compliant``); ``0.10000000000000001`` ``has no exact double``; an unknown step key
``E_CONVERT_UNSUPPORTED``; ``"${secrets.TOK}"`` kept as written (no legacy form for
secrets, docs/plan-format.md), ``show`` printed ``param v = "${secrets.TOK}"`` and the tool got
that text; ``"$<secrets.TOK>"`` gave TOK. Every run's audit agreed. (Also seen, not asserted:
a 2-character secret ``ab`` masks ``ab`` inside every tool output, ``"tab label"`` echoed back
recorded ``t*** l***el``, while ``K=ab;`` became ``K=***;``.)

Decided (2026-12-02, the lead): both classes are an accepted limit, now named in
docs/threat-model.md ("Accepted limits": a secret a tool hands out in parts). Each field a
record keeps (a call's stdout, its stderr, each action's output) is redacted whole, in every
known encoding; a tool that holds a secret can always hand it out in pieces no redactor can
join (a character per action, per stream, per line of its own choosing), so the defence is
that a tool gets a secret only where the approved plan gives it one. The 8 ids stay strict
xfails, as every accepted limit's do.

Should (docs/execution.md, "Secrets"): "Every configured secret value (not only those a plan
used) is replaced by ``***`` in everything written: journal, PLAN.yml, the log, structured log
events, and the error handed back, including inside tool output"; docs/formats.md: "Nothing is
dropped silently", "Every field is said once, every number as written".
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, clone_audit, xfail
from mcpkit import session
from test_round2_execution_kit import shared

TOK = "Rv8Tn3Yc6Hd1"
SUB = "Wm9Xv4Rt"
LONG = "Hk3Qa7" + SUB + "Jp5Zy2"
META = "a.b*c+(d)[e]^$|?x"
NL = "Nl4Pq8\nRs2Tu6"
SECRETS = {"TOK": TOK, "SUB": SUB, "LONG": LONG, "META": META, "NL": NL}

LEAK = r"""
import base64, json, os, sys, urllib.parse
tag = sys.argv[1]
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data, "env": sorted(os.environ)}) + "\n")
S = json.loads(open(os.environ["SEC_JSON"]).read())
TOK, SUB, LONG, META, NL = S["TOK"], S["SUB"], S["LONG"], S["META"], S["NL"]
mode = "echo" if tag.endswith("-a") else tag.split("-", 1)[1]
p = json.loads(data or "{}")
if tag.startswith("r-") and not tag.endswith("-a"):
    v = str(p.get("v"))
    if mode == "raw":
        sys.stderr.write("refused value: " + v + "\n")
    elif mode == "b64":
        sys.stderr.write("refused value b64: " + base64.b64encode(v.encode()).decode() + "\n")
    elif mode == "pct":
        sys.stderr.write("GET /x?q=" + urllib.parse.quote(v + "/", safe="") + " 400\n")
    sys.exit(3)
out = None
if mode == "plain":
    out = "token: " + TOK
elif mode == "line2":
    out = "first line\nkey: " + TOK + "\nthird"
elif mode == "brk":
    out = "key: " + TOK[:6] + "\n" + TOK[6:]
elif mode == "fname":
    d = os.environ["LEAK_DIR"]
    path = os.path.join(d, "f-" + TOK + ".txt")
    open(path, "w").close()
    out = json.dumps({"created": path, "listing": sorted(os.listdir(d))})
elif mode == "fnerr":
    open(os.path.join(os.environ["LEAK_DIR"], "missing", TOK + ".cfg")).read()
elif mode == "pct":
    out = "url: https://x.example/?k=" + urllib.parse.quote(META, safe="")
elif mode == "uesc":
    out = '{"k": "' + "".join("\\u%04x" % ord(c) for c in TOK) + '"}'
elif mode == "b64":
    out = "b64: " + base64.b64encode(TOK.encode()).decode()
elif mode == "hex":
    out = "hex: " + TOK.encode().hex()
elif mode == "trunc":
    out = "x" * 4094 + TOK
elif mode == "sub":
    out = "long: " + LONG
elif mode == "adj":
    out = TOK + SUB + META
elif mode == "meta":
    out = "meta: " + META
elif mode == "nl":
    out = "nl: " + NL
elif mode == "key":
    out = json.dumps({TOK: 1})
elif mode == "b64mis":
    out = "b64: " + base64.b64encode(("x" + TOK).encode()).decode()
elif mode == "b64adj":
    out = "b64: " + base64.b64encode(("xy" + TOK + SUB).encode()).decode()
elif mode == "pctall":
    out = "q=" + "".join("%%%02X" % b for b in TOK.encode())
elif mode == "pctlow":
    out = "q=" + "".join("%%%02x" % b for b in META.encode())
elif mode == "trb64":
    out = "x" * 4086 + base64.b64encode(TOK.encode()).decode()
elif mode == "trhex":
    out = "x" * 4082 + TOK.encode().hex()
elif mode == "split":
    print("head: " + TOK[:6])
    sys.stderr.write(TOK[6:] + " :tail\n")
elif mode == "split2":
    out = "head: " + TOK[:6]
elif mode == "split2-b":
    out = TOK[6:] + " :tail"
elif mode == "nljson":
    out = json.dumps({"k": NL})
elif mode == "nlcrlf":
    out = "nl: " + NL.replace("\n", "\r\n")
elif mode == "nlsp":
    out = "nl: " + NL.replace("\n", " ")
elif mode == "metare":
    import re
    out = "pattern: " + re.escape(META)
elif mode == "fnpct":
    out = "file:///srv/" + urllib.parse.quote("f " + TOK + ".txt")
elif mode == "uescmix":
    out = '{"k": "' + TOK[:3] + "".join("\\u%04X" % ord(c) for c in TOK[3:9]) + TOK[9:] + '"}'
elif mode == "err2":
    sys.stderr.write("part 1: " + TOK[:6] + "\n" + TOK[6:] + "\n")
    sys.exit(2)
if out is not None:
    print(out)
else:
    print(json.dumps({"ok": True, "echo": json.loads(data) if data.strip() else None}))
"""

LEAKS = [
    "plain", "line2", "brk", "fname", "fnerr", "pct", "uesc", "b64", "hex", "trunc",
    "sub", "adj", "meta", "nl", "key", "err2", "b64mis", "b64adj", "pctall", "pctlow",
    "trb64", "trhex", "split", "nljson", "nlcrlf", "nlsp", "metare", "fnpct", "uescmix", "split2",
]  # fmt: skip
FAILS = {"fnerr", "err2"}
REFS = ["raw", "b64", "pct"]
SLUGS = [f"s-{m}" for m in LEAKS] + [f"r-{m}" for m in REFS]


def needles() -> list[str]:
    out: list[str] = []
    for s in SECRETS.values():
        b = s.encode()
        out += [s, base64.b64encode(b).decode(), b.hex(), urllib.parse.quote(s, safe="")]
        out += ["".join(f"\\u{ord(c):04x}" for c in s), json.dumps(s)[1:-1]]
    out += [LONG[:6], LONG[-6:], TOK[:6], TOK[6:], NL.replace("\n", "")]
    out += [base64.b64encode((TOK + "/").encode()).decode()[:12]]
    return sorted({n for n in out if len(n) >= 6})


NEEDLES = needles()


PARTS = [*SECRETS.values(), TOK[:6], TOK[6:], LONG[:6], LONG[-6:], NL.replace("\n", "")]


def _views(text: str) -> list[str]:
    """The text, percent- and ``\\u``-decoded, and every base64/hex run decoded (4 offsets)."""
    out = [text, urllib.parse.unquote(urllib.parse.unquote(text))]
    out.append(re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text))
    out.append(out[-1].replace("\\n", "\n").replace("\\\\", "\\"))
    for run in re.findall(r"[0-9a-fA-F]{12,}", text):
        for k in (0, 1):
            with contextlib.suppress(ValueError):
                out.append(bytes.fromhex(run[k : k + (len(run) - k) // 2 * 2]).decode("latin-1"))
    for run in re.findall(r"[A-Za-z0-9+/]{8,}", text):
        for k in range(4):
            r = run[k:]
            r = r[: len(r) // 4 * 4]
            with contextlib.suppress(ValueError):
                out.append(base64.b64decode(r).decode("latin-1"))
    return out


HALVES = {TOK[:6], TOK[6:]}


def found(text: str, whole: bool = False) -> list[str]:
    """Secrets (and their parts, unless ``whole``) in the text or any decoded view of it."""
    hits = [n for n in NEEDLES if n in text and not (whole and n in HALVES)]
    for view in _views(text):
        hits += [f"decoded:{p!r}" for p in PARTS if p in view and not (whole and p in HALVES)]
    return sorted(set(hits))


def leak_plan(slug: str) -> str:
    return (
        f'plan:\n  name: "{slug}"\n  task: t\n  status: pending_approval\n'
        "available_tools: [{name: leak}]\nactions:\n"
        f'  - id: 1\n    tool: leak\n    why: w\n    params: {{tag: "{slug}"}}\n'
    )


def two_plan(slug: str) -> str:
    return (
        leak_plan(slug)
        + f'  - id: 2\n    tool: leak\n    why: w\n    params: {{tag: "{slug}-b"}}\n'
    )


def ref_plan(slug: str) -> str:
    return (
        f'plan:\n  name: "{slug}"\n  task: t\n  status: pending_approval\n'
        "available_tools: [{name: leak}]\nactions:\n"
        "  - id: 1\n    tool: leak\n    why: w\n"
        f'    params: {{tag: "{slug}-a", x: "$<secrets.TOK>"}}\n'
        '    outputs: [{name: o, path: "$.json.echo.x"}]\n'
        "  - id: 2\n    tool: leak\n    why: w\n"
        f'    params: {{tag: "{slug}", v: "$<actions[1].outputs.o>"}}\n'
    )


#: TOON-plan JSON sources: slug -> (parameters JSON text, what the tool gets or an E_ code)
FMT: dict[str, tuple[str, Any]] = {
    "f-1e2": ('"v": 1e2', 100),
    "f-100": ('"v": 100', 100),
    "f-eplus": ('"v": 1E+2', 100),
    "f-negz": ('"v": -0.0', 0),
    "f-dup": ('"v": 1, "v": 2', "E_SCHEMA_INVALID"),
    "f-big": ('"v": 1e400', "E_"),
    "f-prec": ('"v": 0.10000000000000001', "E_SCHEMA_INVALID"),
    "f-unk": ('"v": 1}, "frobnicate": {"a": 1', "E_CONVERT_UNSUPPORTED"),
    "f-secleg": ('"v": "${secrets.TOK}"', "${secrets.TOK}"),  # no legacy form: text
    "f-sec": ('"v": "$<secrets.TOK>"', TOK),
}


def toon(slug: str, tag: str, params: str) -> str:
    return (
        f'{{"metadata": {{"title": "{slug}", "objective": "o"}}, "steps": [{{"id": "s1", '
        f'"action": "leak", "parameters": {{"tag": "{tag}", {params}}}}}]}}'
    )


def _build(root: Path) -> Lab:
    (root / "sec.json").write_text(json.dumps(SECRETS))
    (root / "leakdir").mkdir()
    (root / "missing").mkdir()
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {root / 'sec.json'}}}\nlimits: {{max_result_bytes: 4096}}\n",
        tools="leak: {kind: exec, argv: "
        + json.dumps([sys.executable, str(root / "leak.py"), "{tag}"])
        + ", env: "
        + json.dumps(
            {
                "REC_LOG": str(root / "lab" / "ran.log"),
                "SEC_JSON": str(root / "sec.json"),
                "LEAK_DIR": str(root / "leakdir"),
            }
        )
        + "}\n",
    )
    (root / "leak.py").write_text(LEAK)
    got: dict[str, Any] = {"conv": {}, "hash": {}}
    for slug in SLUGS:
        text = ref_plan(slug) if slug.startswith("r-") else leak_plan(slug)
        lab.write(slug, two_plan(slug) if slug == "s-split2" else text)
    conv = root / "conv"
    conv.mkdir()
    for slug, (params, _want) in FMT.items():
        for tag in (slug, "twin"):
            src = conv / tag / f"{slug}.json"
            src.parent.mkdir(exist_ok=True)
            src.write_text(
                toon(slug if tag == slug else "tw", slug if tag == slug else "tw", params)
            )
            out = lab.repo / ("plans" if tag == slug else "twins")
            r = lab.cli("convert", "--from", "toon-plan", "-o", str(out), str(src))
            yml = out / slug / "PLAN.yml"
            if tag == slug:
                got["conv"][slug] = (r.returncode, r.stdout + r.stderr, yml.exists())
                if yml.exists():
                    got["hash_own"] = got.get("hash_own", {})
                    h = lab.cli("hash", "--config", str(lab.config), str(yml))
                    got["hash_own"][slug] = h.stdout.strip()
            elif yml.exists():
                h = lab.cli("hash", "--config", str(lab.config), str(yml))
                got["hash"][slug] = h.stdout.strip()
    subprocess.run(["rm", "-rf", str(lab.repo / "twins")], check=True)
    lab.commit("agent: plans")
    got["p1"] = lab.run(check=False)
    for slug in [*SLUGS, *FMT]:
        f = lab.repo / "plans" / slug / "PLAN.yml"
        if slug in FMT and f.exists():
            f.write_text(f.read_text().replace('status: "pending_approval"', 'status: "approved"'))
        elif f.exists():
            lab.set_status(slug, "approved")
    lab.commit("alice: approve", ALICE)
    got["p2"] = lab.run(check=False)
    st = lab.cli("status", "--json", "--config", str(lab.config))
    got["rows"] = {r["plan"]: r for r in json.loads(st.stdout)}
    got["status_text"] = lab.cli("status", "--config", str(lab.config)).stdout
    got["calls"] = {s: [json.loads(c["stdin"]) for c in lab.calls(s)] for s in [*SLUGS, *FMT]}
    got["calls_a"] = {s: len(lab.calls(f"{s}-a")) for s in SLUGS}
    got["logs"], got["hist"], got["show"] = {}, {}, {}
    for s in [*SLUGS, *FMT]:
        p = lab.repo / "plans" / s / "EXECUTION_LOG.md"
        got["logs"][s] = p.read_text() if p.exists() else ""
        got["hist"][s] = lab.git("log", "-p", "--all", "--format=fuller%n%B", "--", f"plans/{s}")
        sh = lab.cli("show", "--config", str(lab.config), str(lab.repo / "plans" / s / "PLAN.yml"))
        got["show"][s] = sh.stdout + sh.stderr
    got["history"] = lab.git("log", "-p", "--all", "--format=fuller%n%B")
    got["state"] = {}
    for f in sorted(lab.state.rglob("*")):
        if f.is_file() and "objects" not in f.parts:
            got["state"][str(f.relative_to(lab.state))] = f.read_bytes().decode("utf-8", "replace")
    replies, _err = session(
        lab, [("status", {}), *[("log", {"path": f"plans/{s}"}) for s in SLUGS]]
    )
    got["mcp_status"] = json.dumps(replies[0], ensure_ascii=False)
    got["mcp"] = {
        s: json.dumps(r, ensure_ascii=False) for s, r in zip(SLUGS, replies[1:], strict=True)
    }
    mid = root / "mid"
    mid.mkdir()
    report, valid = clone_audit(lab, mid)
    got["valid"] = sorted(valid)
    got["audit_text"] = json.dumps(report, ensure_ascii=False)
    got["audit_raw"] = json.dumps(report)
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _lab(factory: pytest.TempPathFactory) -> Lab:
    return shared(factory, "r96-values-atk96e", _build)


SURF = ["ran", "log", "hist", "status", "show", "state", "mcp"]
GLOBAL = [
    "all:mcp-status",
    "all:history",
    "all:status-text",
    "all:audit",
    "all:stderr",
    "all:state",
]
FIDS = [f"{s}:{w}" for s in FMT for w in ("ran", "audit")] + ["f-twins:same-hash"]
IDS = [f"{s}:{w}" for s in SLUGS for w in SURF] + GLOBAL + FIDS
_STREAMS = xfail(
    "accepted limit: secret-split-streams",
    "TOK's first half on stdout, its second on stderr of one call: both committed in clear",
)
_CALLS = xfail(
    "accepted limit: secret-split-calls",
    "TOK's halves printed by two calls of one plan: both committed in clear",
)
BROKEN: dict[str, Any] = {
    **{f"s-split:{w}": _STREAMS for w in ("log", "hist", "state", "mcp")},
    **{f"s-split2:{w}": _CALLS for w in ("log", "hist", "state", "mcp")},
}


def _row(got: dict[str, Any], slug: str) -> dict[str, Any]:
    return dict(got["rows"].get(f"plans/{slug}", {}))


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round96_atk96e(tmp_path_factory: pytest.TempPathFactory, vid: str) -> None:
    got = _lab(tmp_path_factory).got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    if slug == "all":
        if what == "history":
            text = got["history"]
        elif what == "mcp-status":
            text = got["mcp_status"]
            assert "s-plain" in text, text[:500]
        elif what == "status-text":
            text = got["status_text"] + json.dumps(got["rows"], ensure_ascii=False)
        elif what == "audit":
            text = got["audit_text"] + got["audit_raw"]
        elif what == "stderr":
            text = got["p1"].stderr + got["p2"].stderr + got["p1"].stdout + got["p2"].stdout
            assert got["p2"].returncode == 0 and "Traceback" not in got["p2"].stderr, text[-800:]
        else:
            hits = {k: found(v, True) for k, v in got["state"].items() if found(v, True)}
            assert not hits, hits
            return
        assert found(text, True) == [], found(text, True)
        return
    if slug == "f-twins":
        assert got["hash"]["f-1e2"] == got["hash"]["f-100"] == got["hash"]["f-eplus"], got["hash"]
        assert got["hash"]["f-negz"] != got["hash"]["f-100"], got["hash"]
        assert got["hash"]["f-100"].startswith("sha256:"), got["hash"]
        return
    row = _row(got, slug)
    if slug in FMT:
        want = FMT[slug][1]
        rc, out, written = got["conv"][slug]
        calls = got["calls"][slug]
        if isinstance(want, str) and want.startswith("E_"):
            assert rc != 0 and want in out and not written, (rc, out)
            assert calls == [] and not row
            return
        if what == "audit":
            assert row.get("status") == "completed", row
            assert f"plans/{slug}" in got["valid"]
            return
        assert rc == 0 and len(calls) == 1, (out, calls, row.get("reason"))
        v = calls[0]["v"]
        assert json.dumps(v) == json.dumps(want) and type(v) is type(want), (v, want)
        return
    if what == "ran":
        calls = got["calls"][slug]
        if slug.startswith("r-"):
            assert got["calls_a"][slug] == 1 and len(calls) == 1, row
            assert calls[0]["v"] == TOK  # the tool's own value, handed on
            assert row.get("status") == "failed", row
        else:
            assert len(calls) == 1, row
            want = "failed" if slug[2:] in FAILS else "completed"
            assert row.get("status") == want, (row.get("status"), row.get("reason"))
        return
    if what == "status":
        text = json.dumps(row, ensure_ascii=False) + json.dumps(row)
    elif what == "state":  # the run's journal (and any other file named by the plan)
        text = "".join(v for k, v in got["state"].items() if f"plans%2F{slug}/" in k)
        assert text, sorted(got["state"])
    else:
        text = got[{"log": "logs", "hist": "hist", "show": "show", "mcp": "mcp"}[what]][slug]
        assert text, what
        if what == "mcp":  # the answer carries the run's log
            assert "Action 1" in text and text != "null", text[:800]
    assert found(text) == [], found(text)


if __name__ == "__main__":
    import tempfile

    Path("/tmp/atk96e").mkdir(exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="lab-", dir="/tmp/atk96e"))
    got = _build(out).got  # type: ignore[attr-defined]
    print("P1", got["p1"].returncode, got["p1"].stderr[-1500:])
    print("P2", got["p2"].returncode, got["p2"].stderr[-1500:])
    print("VALID", got["valid"])
    print("HASH", got["hash"])
    for s in [*SLUGS, *FMT]:
        r = got["rows"].get(f"plans/{s}", {})
        print(
            f"== {s}: {r.get('status')} {str(r.get('reason'))[:200]} calls={len(got['calls'][s])}"
        )
        for k in ("logs", "hist", "show"):
            if found(got[k][s]):
                print("  LEAK", k, found(got[k][s]))
        if found(json.dumps(r)):
            print("  LEAK status", found(json.dumps(r)))
        if s in got["conv"]:
            print("  conv", got["conv"][s][0], got["conv"][s][1][-200:].strip())
    for k in ("history", "status_text", "audit_text"):
        print("GLOBAL", k, found(got[k]))
    print("STDERR", found(got["p1"].stderr + got["p2"].stderr))
    print("STATE", {k: found(v) for k, v in got["state"].items() if found(v)})
