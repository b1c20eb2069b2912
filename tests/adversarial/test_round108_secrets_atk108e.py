# ruff: noqa: E501
"""Round 108, secrets (atk108e): secrets whose configured value is not the string a tool
uses (a value padded with blanks or a line end, as a copied token or a secrets file
written by hand holds it) and structured secrets (a mapping in ``secrets.file``, a JSON
credential such as a service-account key held as one string), followed to every place the
output lands; with held controls (the raw value printed, echoed, a python tool's prints,
exceptions and exits, an output cut at ``max_result_bytes`` inside a secret).

Lab (one, module scope; local mode): ``secrets.file`` (YAML) holds the secrets of
``SECRETS_YAML``. An exec tool ``say`` reads its ``key`` param from stdin and prints a form of
it (its ``m`` param: ``SAY``) on stdout and exits 0, or on stderr and exits 2 (mode ``*-fail``); a python
tool ``pr`` prints, logs, warns, raises or exits with its ``key``. One pass freezes, Alice
approves all in one commit, one pass runs (``limits.max_result_bytes: 200``); then
``status`` (text, JSON), ``show`` of every plan, MCP ``log`` and ``status`` of every plan,
and the state directory's files.

Ids: ``<plan>:record`` (``git log -p`` of the plan's folder: commit messages, PLAN.yml,
EXECUTION_LOG.md; MCP ``log``; the journal files under ``state_dir``) and ``<plan>:said``
(``status`` text and JSON, ``show``, MCP ``status``, the pass's structured log). Needles:
the secret's core (its value without surrounding blanks) and, for a structured secret,
each leaf value (every 8 characters in a row).

Seen (round 108, 70 ids, ~20 s wall): 2 classes broke (14 ids), 56 held. Both fixed the same
session (r108secretparts: the redactor searches for a secret without its padding and for
each value of a structured secret, 4 characters or more: ``secrets._parts_of``).

1. **padded-secret** (``sp-*``, ``tab-*``; 6 ids): a secret configured with a blank or a
   tab before it (``SP: "  Hq4Rt6Yu8Io0Pa2  "``, ``TAB: "\\tBn3Mq6Wr8Ey1Ud5"``) is searched
   only with it: a tool that uses the token as every
   client does, stripped (``print(s.strip())``; curl, HTTP headers and ``read`` strip it
   the same way), had it committed readable in the result's stdout/stderr, the
   ``E_TOOL_FAILED`` error (``bad token Hq4Rt6Yu8Io0Pa2``), the ``plangate: fail`` commit,
   EXECUTION_LOG.md, ``status`` (text and JSON), ``show``, MCP ``log``/``status`` and the
   pass's structured log (``action_ended``/``plan_run_ended``), and the journal. Held: a
   value padded only after it (a trailing blank, U+00A0, ``\\n`` of an ``NL: |`` block
   scalar, ``\\r\\n``): only what comes before the core breaks the search.
   Reproduce: ``secrets.file`` with ``SP: "  Hq4Rt6Yu8Io0Pa2  "``, an exec tool printing
   ``key.strip()`` to stderr and exiting 2, a plan ``key: "$<secrets.SP>"``, approved, run.
2. **structured-secret** (``map-pretty``, ``map-field``, ``map-fail``, ``jsn-pretty``,
   ``jsn-field``, ``jsn-fail``; 8 ids): a mapping in ``secrets.file``
   (``MAP: {user: app, password: Mx7Qp2Wz9Lk4Vb6N}``) or a JSON credential held as one
   string (``JSN: '{"type":"service_account","private_key":"Pk5Tg8Hy3Nb6Vc1X"}'``) is
   searched only as its whole JSON text: a tool that prints the credential
   pretty-printed has its stdout masked (``{\\n  \\"***\\"\\n}``) but the result's parsed
   ``json`` member, recorded beside it, holds ``"password": "Mx7Qp2Wz9Lk4Vb6N"`` readable
   (the same bytes, hidden in one field and shown in the next); a tool that prints one
   field (``password: ...``, the way every client reads such a credential) has it
   committed readable everywhere. Reproduce: ``secrets.file`` with the ``MAP`` line above,
   an exec tool that prints ``json.dumps(obj, indent=2)`` of its ``key`` param, a plan
   ``key: "$<secrets.MAP>"``, approved, run; ``git log -p`` shows the password.

Held: the raw value of every secret (padded ones included) and its echo (a mapping's
echo too); a mapping printed as ``key: value`` lines (masked whole); a secret with a
trailing blank or line end printed stripped; an integer secret; a python tool's stdout, stderr,
``logging``, ``warnings``, exceptions (``raise ValueError(s)``, a failing ``__str__``),
``sys.exit(s)`` and a SIGKILL (nothing of them reaches the pass's log); an output cut at
``max_result_bytes`` inside an ASCII or a non-ASCII secret (stdout and stderr).

Should: a secret's value is searched in the forms a client uses it in: stripped of the
blanks around it (and each line of a multi-line one), and, for a mapping/list in the
secrets file or a string that parses as a JSON object/array, each leaf string (of a
length the redactor searches) as a secret of its own, in the parsed ``json`` member too.
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
from test_round2_execution_kit import shared

SECRETS_YAML = """\
SP: "  Hq4Rt6Yu8Io0Pa2  "
SPT: "Tw5Gh7Jk9Lz2Xc4V "
TAB: "\\tBn3Mq6Wr8Ey1Ud5"
NBSP: "Ya1Sb3Dc5Fe7Gh9J\\u00a0"
NL: |
  Zq8Wx3Yv7Ut2Lp9K
CRLF: "Fs2Dg4Hj6Kl8Zx0C\\r\\n"
MAP: {user: app, password: Mx7Qp2Wz9Lk4Vb6N}
JSN: '{"type":"service_account","private_key":"Pk5Tg8Hy3Nb6Vc1X"}'
INT: 48213957
UNI: "Kq7mPvqWnTzL\\u00e9xJ9"
ASC: "Rw3Ex5Ty7Ui9Op1A"
"""

#: secret -> the values a reader must never find (the core a client uses; each leaf)
CORES = {
    "SP": ["Hq4Rt6Yu8Io0Pa2"],
    "SPT": ["Tw5Gh7Jk9Lz2Xc4V"],
    "TAB": ["Bn3Mq6Wr8Ey1Ud5"],
    "NBSP": ["Ya1Sb3Dc5Fe7Gh9J"],
    "NL": ["Zq8Wx3Yv7Ut2Lp9K"],
    "CRLF": ["Fs2Dg4Hj6Kl8Zx0C"],
    "MAP": ["Mx7Qp2Wz9Lk4Vb6N"],
    "JSN": ["Pk5Tg8Hy3Nb6Vc1X"],
    "INT": ["48213957"],
    "UNI": ["Kq7mPvqWnTzL\u00e9xJ9"],
    "ASC": ["Rw3Ex5Ty7Ui9Op1A"],
}

SAY = r"""
import json, sys
mode = sys.argv[1]
s = json.loads(sys.stdin.read()).get("key")
def obj():
    return json.loads(s) if isinstance(s, str) else s
fail = mode.endswith("-fail")
form = mode[:-5] if fail else mode
if form == "raw":
    t = "value: " + (s if isinstance(s, str) else json.dumps(s))
elif form == "strip":
    t = "value: " + s.strip()
elif form == "pretty":
    t = json.dumps(obj(), indent=2)
elif form == "field":
    o = obj()
    t = "password: " + str(o.get("password") or o.get("private_key"))
elif form == "yaml":
    t = "\n".join("%s: %s" % kv for kv in obj().items())
elif form.startswith("cut"):
    t = "x" * int(form[3:]) + s
else:
    raise SystemExit("unknown mode " + mode)
if fail:
    sys.stderr.write(t + "\n"); sys.exit(2)
print(t)
"""

PR = r"""
import logging, os, sys, warnings
def pr(key, m="ok"):
    print("OUT:" + key)
    print("ERR:" + key, file=sys.stderr)
    sys.stdout.flush(); sys.stderr.flush()
    os.write(2, ("FD2:" + key + "\n").encode())
    logging.getLogger("x").error("LOG:%s", key)
    warnings.warn("WARN:" + key)
    if m == "raise":
        raise ValueError("EXC:" + key)
    if m == "exit":
        sys.exit("EXIT:" + key)
    if m == "kill":
        os.kill(os.getpid(), 9)
    return {"ok": True}
class Boom(Exception):
    def __str__(self):
        raise RuntimeError("STR:" + self.args[0])
def boom(key):
    raise Boom(key)
"""

#: plan slug -> (tool, mode or None, secret, expected final status)
PLANS: dict[str, tuple[str, str | None, str, str]] = {
    # padded secrets: the core a client uses, stripped
    "sp-strip": ("say", "strip", "SP", "completed"),
    "sp-fail": ("say", "strip-fail", "SP", "failed"),
    "sp-raw": ("say", "raw", "SP", "completed"),
    "spt-strip": ("say", "strip", "SPT", "completed"),
    "spt-fail": ("say", "strip-fail", "SPT", "failed"),
    "tab-strip": ("say", "strip", "TAB", "completed"),
    "tab-fail": ("say", "strip-fail", "TAB", "failed"),
    "nbsp-strip": ("say", "strip", "NBSP", "completed"),
    "nbsp-fail": ("say", "strip-fail", "NBSP", "failed"),
    "nl-strip": ("say", "strip", "NL", "completed"),
    "nl-fail": ("say", "strip-fail", "NL", "failed"),
    "nl-raw": ("say", "raw", "NL", "completed"),
    "crlf-strip": ("say", "strip", "CRLF", "completed"),
    "crlf-fail": ("say", "strip-fail", "CRLF", "failed"),
    # structured secrets
    "map-raw": ("say", "raw", "MAP", "completed"),
    "map-pretty": ("say", "pretty", "MAP", "completed"),
    "map-field": ("say", "field", "MAP", "completed"),
    "map-fail": ("say", "field-fail", "MAP", "failed"),
    "map-yaml": ("say", "yaml", "MAP", "completed"),
    "map-echo": ("echo", None, "MAP", "completed"),
    "jsn-raw": ("say", "raw", "JSN", "completed"),
    "jsn-pretty": ("say", "pretty", "JSN", "completed"),
    "jsn-field": ("say", "field", "JSN", "completed"),
    "jsn-fail": ("say", "field-fail", "JSN", "failed"),
    # controls
    "int-raw": ("say", "raw", "INT", "completed"),
    "int-echo": ("echo", None, "INT", "completed"),
    "uni-cut": ("say", "cut190", "UNI", "completed"),
    "uni-ecut": ("say", "cut190-fail", "UNI", "failed"),
    "asc-cut": ("say", "cut192", "ASC", "completed"),
    "asc-ecut": ("say", "cut193-fail", "ASC", "failed"),
    "py-ok": ("pr", "ok", "ASC", "completed"),
    "py-raise": ("pr", "raise", "ASC", "failed"),
    "py-exit": ("pr", "exit", "ASC", "failed"),
    "py-kill": ("pr", "kill", "ASC", "failed"),
    "py-boom": ("boom", None, "ASC", "failed"),
}


def _plan(slug: str, tool: str, mode: str | None, key: str) -> str:
    params = (f"m: {mode}, " if mode else "") + f'key: "$<secrets.{key}>"'
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        f"available_tools: [{{name: {tool}}}]\nactions:\n"
        f"  - id: 1\n    tool: {tool}\n    why: w\n    params: {{{params}}}\n"
    )


def _build(root: Path) -> Lab:
    (root / "say.py").write_text(SAY)
    (root / "pylib").mkdir()
    (root / "pylib" / "r108tools.py").write_text(PR)
    (root / "sec.yml").write_text(SECRETS_YAML)
    py, say = (json.dumps(str(x)) for x in (sys.executable, root / "say.py"))
    lab = Lab(
        root / "lab",
        extra=(
            f"secrets: {{file: {root / 'sec.yml'}}}\n"
            f"python_path: [{json.dumps(str(root / 'pylib'))}]\n"
            "limits: {max_result_bytes: 200}\n"
        ),
        tools=(
            f"say: {{kind: exec, argv: [{py}, {say}, '{{m}}']}}\n"
            'pr: {kind: python, target: "r108tools:pr"}\n'
            'boom: {kind: python, target: "r108tools:boom"}\n'
        ),
    )
    for slug, (tool, mode, key, _) in PLANS.items():
        lab.write(slug, _plan(slug, tool, mode, key))
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
    return shared(tmp_path_factory, "r108-secrets-atk108e", _build)


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


IDS = [f"{s}:{w}" for s in PLANS for w in ("record", "said")]

#: the ids that broke on the attacker's main, by class (``*-strip:said`` of a completed plan holds:
#: nothing of its output is said there)
PADDED_BROKEN = [
    "sp-strip:record",
    "sp-fail:record",
    "sp-fail:said",
    "tab-strip:record",
    "tab-fail:record",
    "tab-fail:said",
]
STRUCTURED_BROKEN = [
    "map-pretty:record", "map-field:record", "map-fail:record", "map-fail:said",
    "jsn-pretty:record", "jsn-field:record", "jsn-fail:record", "jsn-fail:said",
]  # fmt: skip

#: both classes fixed the same session (r108secretparts, ``secrets._parts_of``): a secret
#: is searched for without its padding, and each value of a structured one on its own
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round108_secrets_atk108e(lab: Lab, vid: str) -> None:
    got: dict[str, Any] = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    _tool, _mode, key, expected = PLANS[slug]
    needles = _needles(key)
    assert got["rows"].get(f"plans/{slug}") == expected, got["rowtext"].get(f"plans/{slug}")
    if what == "record":
        text = got["history"][slug] + got["mcp"][slug] + got["journal"][slug]
        assert "plangate: " in got["history"][slug], got["history"][slug][-800:]
    else:
        text = _said(got, slug) + _mstatus_row(got, slug)
        assert f"plans/{slug}" in text, text[-800:]
    leaks = [n for n in needles if n in text]
    assert not leaks, (leaks, text[-1500:])
