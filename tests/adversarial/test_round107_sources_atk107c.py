# ruff: noqa: E501
"""Round 107, sources (atk107c): what a reviewer reads in a plan SOURCE is what ``plangate
convert``, MCP ``validate`` and the daemon freeze, looked at from the PLAN.yml a conversion
writes: its text read back (quoting, comments, key order, long and multi-line strings,
unicode in keys and values), ``--from`` forcing one format onto another's text, MCP
``validate`` of each format against ``plangate convert`` of the same text, the daemon's
conversion of committed sources, a nested plan it writes and an edit of it afterwards.

Lab (one, module scope; the bench's config, the recorder ``rec``). Part 1, ``plangate
convert SRC`` (no config) of sources the test writes, read back as YAML, converted again
with ``-o`` and read by ``show --format json``. Part 2, one ``plangate mcp`` session
validating 14 texts, each also converted by the CLI. Part 3, the daemon: the agent commits
six plan sources (markdown, CRLF markdown, TOON, TOON with YAML-looking scalars, an
ActionPlan with NFD/NFC keys, an ActionPlan with a nested plan); one pass; then the agent
edits the nested PLAN.yml the pass wrote, Alice approves the parent, two passes.

Variants (``<variant>:<what>``): ``yml-*`` values and keys through the written PLAN.yml
(NFD/NFC keys and values, Hangul jamo, KELVIN SIGN beside ``K``, ``<<``, an empty key,
U+2028 key, YAML words and numbers as strings, ``#``, 600-character and multi-line strings,
``-0.0``/``1.0``/``1e300``, hidden and astral characters, key order, ``"1"``/``"true"``
keys), ``md-nfd`` the same in a markdown ``Parameters``; ``from-*`` ``--from`` forcing
actionplan / plan-contract / toon-plan / agent-plan / pte onto another format's text and
onto hybrids of two; ``yml-surrogate`` a lone surrogate; ``mcp-*`` MCP ``validate`` (format
told or not) of markdown, TOON, ActionPlan (bare, fenced, BOM), Plan Contract reply, Agent
Plan, pte, TOON scalars, CRLF markdown vs ``convert``; ``d-*`` the daemon's frozen hash vs
``convert``'s, the nested plan's pin and its edit.

Seen (round 107): 1 class broke.

1. **The written PLAN.yml carries non-NFC text raw** (``yaml-nfc``): ``yml-nfd:key``,
   ``yml-nfd:value``, ``yml-hangul:value``, ``yml-kelvin:key``, ``md-nfd:param``,
   ``mcp-nfd:hash``, ``d-nfd:text``. A source whose params hold ``"\u00e9": 1`` and
   ``"e\u0301": 2`` (JSON escapes, visibly two keys) converts to a PLAN.yml showing
   ``"é": 1`` and ``"é": 2``: the file the reviewer reads from then on (the daemon's
   commit, MCP ``plan_yml``) shows two different keys the same, and the tool gets both; so
   ``cafe\u0301``, jamo ``\u1100\u1161`` and KELVIN SIGN beside ``K``. ``show`` escapes
   them (round 49's rule); the writer, which escapes bidi/zero-width/U+2028, does not.
   Should: escape every character NFC would change, as ``show`` does.

Changed (round 122, ``nfc-twin-keys``): two keys of one object equal in NFC are one key said
twice in every reader (``E_SCHEMA_INVALID``; docs/formats.md), so ``yml-nfd:key``,
``yml-kelvin:key``, ``md-nfd:param``, ``mcp-nfd:hash`` and ``d-nfd`` hold a key NFC would
change beside a key of another name (``a\u0301``, ``k``): still written escaped.

Held: every other id: YAML words, ``#``, ``<<``, long and multi-line strings, numbers,
hidden characters and key order round-trip exactly; every ``--from`` mismatch and hybrid is
refused with an E_ code; MCP ``validate`` agrees with ``convert`` on every format; the
daemon freezes ``convert``'s hash; the nested plan is pinned, and its edit never runs.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, BenchError, Lab, cases, load_yaml
from sourcekit import approve_file, md
from test_round2_execution_kit import shared

ROOT = Path(__file__).resolve().parents[2]


def _j(value: Any) -> str:
    return json.dumps(value, indent=1)


def ap(action: dict[str, Any], **kw: Any) -> str:
    step = {"step_number": 1, "description": "d", "action": action}
    return _j({"plan_version": 1, "title": "T", "steps": [step], **kw})


def rec(**params: Any) -> dict[str, Any]:
    return {"type": "rec", **params}


#: id -> (file name, source text, --from, the params the one action must get)
VALUES: dict[str, tuple[str, str, str, dict[str, Any]]] = {
    # Changed (round 122, nfc-twin-keys): two keys one in NFC (``\u00e9`` and ``e\u0301``,
    # KELVIN SIGN and ``K``) are one key said twice, refused (docs/formats.md, "Every field is
    # said once"); the keys NFC would change are kept beside keys of other names
    "yml-nfd:key": (
        "v1.json",
        ap(rec(tag="t", **{"\u00e9": 1, "a\u0301": 2})),
        "",
        {"tag": "t", "\u00e9": 1, "a\u0301": 2},
    ),
    "yml-nfd:value": ("v2.json", ap(rec(tag="cafe\u0301")), "", {"tag": "cafe\u0301"}),
    "yml-hangul:value": ("v3.json", ap(rec(tag="\u1100\u1161")), "", {"tag": "\u1100\u1161"}),
    "yml-kelvin:key": (
        "v4.json",
        ap(rec(tag="t", **{"\u212a": 1, "k": 2})),
        "",
        {"tag": "t", "\u212a": 1, "k": 2},
    ),
    "yml-merge:key": (
        "v5.json",
        ap(rec(tag="t", **{"<<": {"x": 1}})),
        "",
        {"tag": "t", "<<": {"x": 1}},
    ),
    "yml-empty:key": ("v6.json", ap(rec(tag="t", **{"": "e"})), "", {"tag": "t", "": "e"}),
    "yml-ls:key": ("v7.json", ap(rec(tag="t", **{"\u2028": 3})), "", {"tag": "t", "\u2028": 3}),
    "yml-words:value": (
        "v8.json",
        ap(rec(tag="null", a="yes", b="~", c="1e3", d="0x10", e="on")),
        "",
        {"tag": "null", "a": "yes", "b": "~", "c": "1e3", "d": "0x10", "e": "on"},
    ),
    "yml-comment:value": (
        "v9.json",
        ap(rec(tag="x # y", a="#z", b="a: b")),
        "",
        {"tag": "x # y", "a": "#z", "b": "a: b"},
    ),
    "yml-long:value": (
        "v10.json",
        ap(rec(tag="w " * 300 + "end")),
        "",
        {"tag": "w " * 300 + "end"},
    ),
    "yml-multiline:value": (
        "v11.json",
        ap(rec(tag="a\nb\n\n c \n", a="x\r\ny", b=" lead\ttab ")),
        "",
        {"tag": "a\nb\n\n c \n", "a": "x\r\ny", "b": " lead\ttab "},
    ),
    "yml-negzero:value": (
        "v12.json",
        ap(rec(tag="t", z=-0.0, f=1.0, g=1e300)),
        "",
        {"tag": "t", "z": -0.0, "f": 1.0, "g": 1e300},
    ),
    "yml-hidden:value": (
        "v13.json",
        ap(rec(tag="\ufeffa\u200bb\u202ec\u0085d\u00a0e")),
        "",
        {"tag": "\ufeffa\u200bb\u202ec\u0085d\u00a0e"},
    ),
    "yml-astral:value": (
        "v14.json",
        ap(rec(tag="\U0001f600\U000e0041\U0010fffd")),
        "",
        {"tag": "\U0001f600\U000e0041\U0010fffd"},
    ),
    "yml-order:key": (
        "v15.json",
        ap(rec(z=1, tag="t", a=2, m={"b": 1, "a": 2})),
        "",
        {"z": 1, "tag": "t", "a": 2, "m": {"b": 1, "a": 2}},
    ),
    "yml-int1:key": (
        "v16.json",
        ap(rec(tag="t", **{"1": "one", "true": "t", "null": "n"})),
        "",
        {"tag": "t", "1": "one", "true": "t", "null": "n"},
    ),
    "md-nfd:param": (
        "v17.md",
        md("m17").replace('"tag": "m17-ok"', '"tag": "m17", "a\\u0301": 1, "\\u00e9": 2'),
        "",
        {"tag": "m17", "a\u0301": 1, "\u00e9": 2},
    ),
}

#: id -> (file name, source text, --from): each must be refused with an E_ code
REFUSED: dict[str, tuple[str, str, str]] = {
    "yml-surrogate:value": (
        "r1.json",
        ap(rec(tag="a\\ud800b")).replace("\\\\ud800", "\\ud800"),
        "",
    ),
    "from-hybrid:ap-pc": (
        "r2.json",
        _j(
            {
                "plan_version": 1,
                "title": "T",
                "goal": "g",
                "skill_id": "s",
                "steps": [{"step_number": 1, "description": "d", "action": rec(tag="x")}],
            }
        ),
        "actionplan",
    ),
    "from-hybrid:pc-ap": (
        "r3.json",
        _j(
            {
                "plan_version": 1,
                "skill_id": "s",
                "goal": "g",
                "steps": [{"step_id": "a", "tool": "rec", "args": {"tag": "x"}, "step_number": 1}],
            }
        ),
        "plan-contract",
    ),
    "from-md-as:actionplan": ("r4.md", md("r4"), "actionplan"),
    "from-md-as:pte": ("r5.md", md("r5"), "pte"),
    "from-ap-as:toon-plan": ("r6.json", ap(rec(tag="r6")), "toon-plan"),
    "from-ap-as:agent-plan": ("r7.json", ap(rec(tag="r7")), "agent-plan"),
    "from-ap-as:pte": ("r8.json", ap(rec(tag="r8")), "pte"),
    "from-pte-as:plan-contract": (
        "r9.yml",
        'plan: {name: "n", task: "t", status: pending_approval}\navailable_tools: [{name: rec}]\nactions:\n  - {id: 1, tool: rec, why: w, params: {tag: r9}}\n',
        "plan-contract",
    ),
    "from-toon-as:actionplan": (
        "r10.toon",
        (ROOT / "examples/formats/toon-plan-core.toon").read_text(),
        "actionplan",
    ),
    "from-ag-as:actionplan": (
        "r11.json",
        (ROOT / "examples/formats/agent-plan.json").read_text(),
        "actionplan",
    ),
    "from-ag-as:pte": ("r12.json", (ROOT / "examples/formats/agent-plan.json").read_text(), "pte"),
}


TOON = (ROOT / "examples/formats/toon-plan-core.toon").read_text()
AGP = (ROOT / "examples/formats/agent-plan.json").read_text()
PCR = (ROOT / "examples/formats/plan-contract-reply.md").read_text()
TOONS = 'metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\nsteps[1]{id,task_id,action,timeout}:\n  step_1,task_1,rec,30\nshared_inputs:\n  a: 1_000\n  b: 0x10\n  c: .5\n  d: +1\n  e: 1e3\n  f: null\n  g: 05\n  h: -0\n  i: yes\n  j: 1.0\n  k: 2025-01-01\n  l: ~\n  m: 0o17\n  n: "05"\n  o: -0.0\n  p: 1E3\nworkflow_config:\n  parallel_execution: false\n  error_recovery: false\n'
PTE = 'plan: {name: "n", task: "t", status: pending_approval}\navailable_tools: [{name: rec}]\nactions:\n  - {id: 1, tool: rec, why: w, params: {tag: pte}}\n'

#: id -> (file name for the CLI, text, MCP ``format`` or "", the CLI's --from or "")
MCP: dict[str, tuple[str, str, str, str]] = {
    "mcp-md:hash": ("a.md", md("mm"), "", ""),
    "mcp-md-told:hash": ("b.md", md("mt"), "toon-plan", ""),
    "mcp-toon:hash": ("c.toon", TOON, "", ""),
    "mcp-toon-told:hash": ("d.toon", TOON, "toon-plan", ""),
    "mcp-ap:hash": ("e.json", ap(rec(tag="ma")), "", ""),
    "mcp-ap-fenced:hash": ("f.md", "```json\n" + ap(rec(tag="mf")) + "\n```\n", "", ""),
    "mcp-pc:hash": ("g.md", PCR, "", ""),
    "mcp-ag:hash": ("h.json", AGP, "", ""),
    "mcp-pte:hash": ("i.yml", PTE, "pte", ""),
    "mcp-nfd:hash": ("j.json", ap(rec(tag="t", **{"\u00e9": 1, "a\u0301": 2})), "", ""),
    "mcp-crlf-md:hash": ("k.md", md("mc").replace("\n", "\r\n"), "", ""),
    "mcp-toon-scalars:inputs": ("m.toon", TOONS, "", ""),
    "mcp-toon-scalars-told:inputs": ("n.toon", TOONS, "toon-plan", ""),
    "mcp-bom-json:hash": ("l.json", "\ufeff" + ap(rec(tag="mb")), "", ""),
}

NEST = _j(
    {
        "plan_version": 1,
        "title": "T",
        "steps": [
            {
                "step_number": 1,
                "description": "outer",
                "action": {
                    "type": "nested_plan",
                    "plan": {
                        "plan_version": 1,
                        "title": "N",
                        "steps": [
                            {
                                "step_number": 1,
                                "description": "inner",
                                "action": rec(tag="dn-inner"),
                            }
                        ],
                    },
                },
            },
            {"step_number": 2, "description": "after", "action": rec(tag="dn-outer")},
        ],
    }
)

#: slug -> (source file name, text) committed in a plan folder for the daemon
DAEMON: dict[str, tuple[str, str]] = {
    "d-md": ("PLAN.md", md("dmd")),
    "d-toon": ("PLAN.toon", TOON),
    "d-nfd": ("PLAN.json", ap(rec(tag="t", **{"\u00e9": 1, "a\u0301": 2}))),  # round 122
    "d-crlf": ("PLAN.md", md("dcr").replace("\n", "\r\n")),
    "d-nest": ("PLAN.json", NEST),
    "d-toons": ("PLAN.toon", TOONS),
}


def _convert(lab: Lab, folder: Path, name: str, content: str, fmt: str) -> dict[str, Any]:
    path = folder / name
    path.write_bytes(content.encode("utf-8"))
    told = ["--from", fmt] if fmt else []
    done = lab.cli("convert", *told, str(path), cwd=folder)
    got: dict[str, Any] = {
        "rc": done.returncode,
        "err": done.stderr[-1500:],
        "plan": None,
        "text": done.stdout,
    }
    if done.returncode == 0 and done.stdout.strip():
        got["plan"] = load_yaml(done.stdout)
        out = folder / (name + ".out")
        out.mkdir()
        written = folder / name
        conv = lab.cli("convert", *told, "-o", str(out), str(written), cwd=folder)
        got["o_rc"] = conv.returncode
        files = sorted(out.rglob("PLAN.yml"))
        got["o_text"] = files[0].read_text(encoding="utf-8") if files else ""
        if files:
            show = lab.cli("show", "--format", "json", str(files[0]), cwd=folder)
            got["show"] = (
                json.loads(show.stdout) if show.returncode == 0 and show.stdout.strip() else None
            )
    return got


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    folder = root / "src"
    folder.mkdir()
    for vid, (name, content, fmt, _want) in VALUES.items():
        got[vid] = _convert(lab, folder, name, content, fmt)
    for vid, (name, content, fmt) in REFUSED.items():
        got[vid] = _convert(lab, folder, name, content, fmt)
    # MCP validate of each text, the format told or not, against the CLI's conversion
    calls = [
        ("validate", {"plan": text, **({"format": f} if f else {})})
        for (_n, text, f, _c) in MCP.values()
    ]
    replies = mcpkit.answers(lab, calls)
    got["mcp"] = {}
    for (vid, (name, text, _f, cli_fmt)), rep in zip(MCP.items(), replies, strict=True):
        res = rep.get("result") or {}
        body = "".join(c.get("text", "") for c in res.get("content") or [])
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        cli = _convert(lab, folder, "m-" + name, text, cli_fmt)
        got["mcp"][vid] = {
            "err": bool(res.get("isError")),
            "body": body[:1500],
            "data": data,
            "cli": (cli.get("show") or {}).get("hash"),
            "cli_plan": cli["plan"],
            "cli_err": cli["err"],
        }
    # the daemon: sources committed in plan folders, one pass; then an edit of a nested plan
    for slug, (filename, text) in DAEMON.items():
        lab.write(slug, text, filename)
    lab.commit("agent: plan sources", AGENT)
    lab.run()
    got["rows"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    got["daemon_cli"] = {}
    for slug, (filename, text) in DAEMON.items():
        cli = _convert(lab, folder, f"{slug}-{filename}", text, "")
        got["daemon_cli"][slug] = (cli.get("show") or {}).get("hash")
        try:
            got.setdefault("frozen", {})[slug] = lab.plan(slug)
        except BenchError:
            got.setdefault("frozen", {})[slug] = None
    nested = lab.repo / "plans/d-nest/step-1/PLAN.yml"
    got["nested_written"] = nested.exists()
    if nested.exists():
        nested.write_text(
            nested.read_text(encoding="utf-8").replace("dn-inner", "dn-edited"), encoding="utf-8"
        )
        lab.commit("agent: edit the nested plan", AGENT)
        lab.run()
        try:
            approve_file(lab, "d-nest")
            lab.commit("approve d-nest", ALICE)
            lab.run()
            lab.run()
        except BenchError as e:
            got["nest_err"] = str(e)
    got["nest_calls"] = {t: len(lab.calls(t)) for t in ("dn-outer", "dn-inner", "dn-edited")}
    got["rows2"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-nest")}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r107-sources-atk107c", _build)


#: round 107's one source class (yaml-nfc, 7 ids) was fixed the same session (r107nfc: the
#: converter's writer escapes every character NFC would change): none expected to break
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(REFUSED), list(REFUSED), BROKEN))
def test_refused(lab: Lab, vid: str) -> None:
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] != 0 and got["plan"] is None, f"converted: {got['text'][:800]}"
    assert re.search(r"\bE_[A-Z_]+\b", got["err"]), got["err"]


def _hidden(text: str) -> list[str]:
    """Characters of the written PLAN.yml text that NFC would change: two different strings
    shown the same to whoever reads the file (show escapes them, docs/plan-format.md)."""
    return [
        " ".join(f"U+{ord(c):04X}" for c in line if ord(c) > 127)
        for line in text.split("\n")
        if unicodedata.normalize("NFC", line) != line
    ]


@pytest.mark.parametrize("vid", cases(list(VALUES), list(VALUES), BROKEN))
def test_written_text_shows_each_string(lab: Lab, vid: str) -> None:
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["plan"] is not None, got["err"]
    assert got["plan"]["actions"][0]["params"] == VALUES[vid][3], got["text"][-800:]
    assert not _hidden(got["text"]), (
        f"raw in the written PLAN.yml: {_hidden(got['text'])}: {got['text'][-400:]}"
    )
    shown = got.get("show") or {}
    assert shown and shown["actions"][0]["params"] == VALUES[vid][3], shown


def _same(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    keys = ("actions", "inputs", "available_tools", "on_failure", "limits", "preconditions")
    return a is not None and b is not None and all(a.get(k) == b.get(k) for k in keys)


@pytest.mark.parametrize("vid", cases(list(MCP), list(MCP), BROKEN))
def test_mcp_validate_agrees(lab: Lab, vid: str) -> None:
    """MCP ``validate`` of a text is the plan ``plangate convert`` of that text writes: its
    ``plan_yml`` field by field, and its hash where the plan validates."""
    m = lab.got["mcp"][vid]  # type: ignore[attr-defined]
    if m["err"] or not m["data"] or not m["data"].get("plan_yml"):
        assert "E_" in m["body"], m
        return
    if m["data"].get("hash"):
        assert m["cli"] == m["data"]["hash"], f"MCP validate froze another plan than convert: {m}"
    assert not _hidden(m["data"]["plan_yml"]), _hidden(m["data"]["plan_yml"])
    mine = load_yaml(m["data"]["plan_yml"])
    assert _same(mine, m["cli_plan"]), (mine, m["cli_plan"], m["cli_err"])


DAEMON_SAME = ["d-md", "d-toon", "d-nfd", "d-crlf", "d-toons"]


@pytest.mark.parametrize(
    "slug", cases([f"{s}:frozen-is-convert" for s in DAEMON_SAME], DAEMON_SAME, BROKEN)
)
def test_daemon_freezes_convert(lab: Lab, slug: str) -> None:
    """The pass converts a committed source into the PLAN.yml ``plangate convert`` writes."""
    g = lab.got  # type: ignore[attr-defined]
    row = g["rows"].get(f"plans/{slug}") or {}
    assert row.get("hash") and row["hash"] == g["daemon_cli"][slug], (row, g["daemon_cli"][slug])


@pytest.mark.parametrize("vid", cases(["d-nfd:text"], ["d-nfd:text"], BROKEN))
def test_daemon_nfd_text(lab: Lab, vid: str) -> None:
    """The PLAN.yml the pass commits shows both keys apart."""
    text = lab.git("show", "HEAD:plans/d-nfd/PLAN.yml")
    assert not _hidden(text), text[-300:]


@pytest.mark.parametrize("vid", cases(["d-nest:pin"], ["d-nest:pin"], BROKEN))
def test_nested_written_and_pinned(lab: Lab, vid: str) -> None:
    """The nested plan is written under the plan's folder and pinned by hash."""
    g = lab.got  # type: ignore[attr-defined]
    plan = g["frozen"]["d-nest"]
    assert plan and g["nested_written"], g["frozen"]
    pin = plan["actions"][0].get("plan") or {}
    assert pin.get("path") == "plans/d-nest/step-1" and str(pin.get("hash", "")).startswith(
        "sha256:"
    ), pin


@pytest.mark.parametrize("vid", cases(["d-nest:edited"], ["d-nest:edited"], BROKEN))
def test_nested_edit_never_runs(lab: Lab, vid: str) -> None:
    """A nested plan edited after the conversion breaks the pin: its new
    text never runs (nor does the parent around it)."""
    g = lab.got  # type: ignore[attr-defined]
    assert g["nest_calls"]["dn-edited"] == 0 and g["nest_calls"]["dn-outer"] == 0, (
        g["nest_calls"],
        g["rows2"],
        g.get("nest_err"),
    )
    row = g["rows2"].get("plans/d-nest") or {}
    assert row.get("status") not in ("completed", "running"), row
    assert g["nest_calls"]["dn-inner"] == 0 and "E_" in str(row.get("reason")), row
