# ruff: noqa: E501
"""Round 108, sources (atk108c): what a reviewer reads in a plan SOURCE (markdown
``PLAN.md``, task/step JSON and TOON, Plan Contract, pte YAML) and in a PLAN.yml is exactly
the actions, order, params and dependencies that run, or the source is refused with a coded
error (docs/formats.md, "A source is read as git shows it", "Every field is said once";
docs/plan-format.md, "Reading rules", "References").

Lab (one, module scope; the bench's config, the recorder ``rec`` echoing its params). Part 1,
``plangate convert SRC`` (no config: the converter alone) of sources the test writes, each
read back as YAML. Part 2, ``plangate show --format json`` of hand-written PLAN.yml files
using YAML features. Part 3, the daemon: the agent commits ``plans/d-swap/PLAN.md`` (step
headings ``Step 2``, ``Step 1``, ``Step 3`` whose params read ``${actions[1]...}``),
``plans/d-ok/PLAN.md`` (the same in order), ``plans/d-gt/PLAN.json`` (a Plan Contract whose
``${actions[1].result.json.echo.tag>x}`` holds a ``>``) and ``plans/d-yl/PLAN.yml`` (the same
legacy reference in a PLAN.yml); one pass; Alice approves the four; two passes.

Variants (``<variant>:<what>``):

- ``num-*``: markdown ``### Step N:`` headings written 2, 1 / 1, 1 / 1, 7 (and a reference
  ``$<actions[1]...>`` beside a ``### Step 1`` written second), a Plan Contract whose
  ``step_id`` s are ``"2", "1", "3"``: must be refused (as ActionPlan's ``step_number`` and
  its fallbacks' are, round 106), never converted in written order under other numbers;
- ``twin-*``: two step ids a reviewer sees as one (``fetch`` and ``fetch<U+200B>``,
  ``step_1<U+00AD>``, NFC ``st\u00e9p_1`` and NFD ``ste\u0301p_1``) in a Plan Contract,
  task/step JSON, markdown and TOON, a third step depending on the hidden one: must be
  refused (the dependency reads as one on the visible step);
- ``ref-*``: a legacy ``${...}`` reference holding ``>`` (``${inputs.to>x}``,
  ``${actions[1].result.echo.tag>x}``) or a quoted key holding ``}``: must be refused, never
  rewritten into a ``$<...>`` that ends at the ``>`` (a reference plus text) nor left as text
  the tool receives;
- ``html-*``: an inline HTML comment (``<!-- ; rm -rf ~ -->``) in a markdown ``Parameters``
  value or a shared input: a forge's rendered view of the source hides it; must be refused
  (as an HTML block is, round 103);
- held controls: markdown constructs that are no ``- **Field**: value`` bullet (lazy
  continuation, ``**Action:**``, ``__Action__``, ``+``/``1.`` bullets, a nested bullet, an
  indented step heading, a link definition, a hard break, a missing ID), escaped duplicate
  keys in JSON and markdown, deep nesting, 16 MiB, non-UTF-8 bytes, a BOM in a heading, pte
  YAML (anchors, merge keys, tags, two documents, ``%YAML 1.1``, escaped duplicate keys,
  NEL, U+2028; as a file and as a fenced reply), task/step task mismatches, in-order
  numbering and references; PLAN.yml: anchors, merge keys, tags, two documents,
  ``%YAML 1.1``, duplicate keys however spelled (quoted, ``\\x61``/``\\u0061`` escapes, flow,
  ``?`` complex key, top level), a BOM mid-file;
- daemon: ``d-swap:order`` (Step 1 must run before Step 2, or nothing), ``d-swap:ref``
  (Step 3 must get Step 1's tag, or nothing run), ``d-ok:ref`` (control), ``d-gt:runs`` and
  ``d-yl:runs`` (the tool never gets the reference cut at ``>``).

Seen (round 108, 75 ids, ~22 s wall): 4 classes broke (20 ids), 55 held.

1. **Markdown step numbers are not read** (``md-step-number``): ``num-swap:order``,
   ``num-dup:order``, ``num-gap:order``, ``num-ref:ref``, ``num-pc:ref``, ``d-swap:order``,
   ``d-swap:ref``. ``plangate convert plans/x/PLAN.md`` with ``### Step 2: A`` written before
   ``### Step 1: B`` converts in written order (A is action 1) with no note; a third step's
   ``${actions[1].result...}`` binds to A, the step headed ``Step 2``; ``1, 1`` and ``1, 7``
   convert alike. The daemon froze it; Alice's approval ran ``Step 2`` first and handed its
   result to the reference that names ``Step 1``. A Plan Contract with ``step_id`` ``"2",
   "1"`` the same. Should: refuse headings not numbered 1..N in order (as ActionPlan's
   ``step_number``), or number the actions by them.
2. **Step ids a reviewer cannot tell apart** (``id-lookalike``): ``twin-pc-zw:needs``,
   ``twin-ts-zw:needs``, ``twin-md-zw:needs``, ``twin-md-shy:needs``, ``twin-md-nfd:needs``,
   ``twin-toon-zw:needs``. Steps ``fetch`` and ``fetch<U+200B>`` (raw) and a third
   ``depends_on: ["fetch<U+200B>"]`` convert to ``needs: [2]``: the diff shows two steps
   named ``fetch`` and a dependency on "fetch", the first to any reader. Should: refuse ids
   that differ only by characters review does not show or NFC (as headings, round 105).
3. **A legacy reference is cut at ``>``** (``legacy-ref-extent``): ``ref-md-gt:ref``,
   ``ref-pc-gt:ref``, ``ref-pc-brace:ref``, ``d-gt:runs``, ``d-yl:runs``.
   ``{"x": "${inputs.to>x}"}`` converts to ``$<inputs.to>x>``: the input's value plus the
   text ``x>`` (valid; the daemon ran ``rec`` with ``x: "dgAx>"`` from
   ``${actions[1].result.json.echo.tag>x}``, and froze a PLAN.yml's own legacy ``${...}``
   the same way); ``${actions[1].result.echo["a}b"]}`` is left as text the tool gets.
   Should: refuse a ``${...}`` reference the rewrite cannot carry whole.
4. **An inline HTML comment in markdown values** (``md-inline-comment``):
   ``html-param:param``, ``html-input:input``. ``- **Parameters**: {"cmd": "ls <!-- ; rm -rf
   ~ -->"}`` converts; a forge's rendered view of the PLAN.md shows ``"cmd": "ls "``.
   Should: refuse raw HTML comments in markdown values, as HTML blocks are.

Held: every other id.

Fixed the same session (fix108c), one rule per class: ``### Step N:`` headings, and a numeric
Plan Contract or task/step ``step_id``/``id``, are the step's place, numbered 1..N as written
(``common.numbered_in_place``, ActionPlan's ``step_number`` rule); a step or task id, and each
dependency, holding a character review does not show or not in NFC is refused
(``common.plain_id``); a ``${`` that opens a reference (``${inputs``, ``${actions``,
``${secrets``, ...) and does not convert whole into one ``$<...>`` is refused in a converter
and in a PLAN.yml (``refs.legacy_uncarried``; the freeze's rewrite no longer cuts at ``>``);
an HTML comment ``<!--`` anywhere outside a fenced block of a markdown plan is refused
(``markdown._comment``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BenchError, Lab, cases, load_yaml
from sourcekit import approve_file, md
from test_round2_execution_kit import shared

ZW, SHY = "\u200b", "\u00ad"


def _j(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False)


def _step(n: Any, sid: str, tag: str, deps: str = "[]", extra: str = "") -> str:
    return (
        f"\n### Step {n}: S{tag}\n- **ID**: {sid}\n- **Task**: task_1\n- **Action**: rec\n"
        f'- **Parameters**: {{"tag": "{tag}"{extra}}}\n- **Timeout**: 30s\n'
        f"- **Dependencies**: {deps}\n"
    )


def mdplan(steps: list[str], ids: list[str], parallel: bool = False) -> str:
    base = md("b")
    head = base.split("## Steps")[0].replace(
        "- **Steps**: step_1", "- **Steps**: " + ", ".join(ids)
    )
    tail = "\n## Shared Inputs" + base.split("## Shared Inputs")[1]
    text = head + "## Steps\n" + "".join(steps) + tail
    return (
        text.replace("Parallel Execution: false", "Parallel Execution: true") if parallel else text
    )


def pc(steps: list[dict[str, Any]]) -> str:
    return _j({"plan_version": 1, "skill_id": "s", "goal": "g", "steps": steps})


def pcs(sid: str, tag: str, **kw: Any) -> dict[str, Any]:
    return {"step_id": sid, "tool": "rec", "args": {"tag": tag, **kw.pop("args", {})}, **kw}


def ts(steps: list[dict[str, Any]], parallel: bool = True) -> str:
    ids = [s["id"] for s in steps]
    return _j(
        {
            "metadata": {"title": "T", "objective": "O"},
            "tasks": [{"id": "task_1", "name": "N", "steps": ids}],
            "steps": steps,
            "shared_inputs": {},
            "workflow_config": {"parallel_execution": parallel, "error_recovery": False},
        }
    )


def tss(sid: str, tag: str, deps: list[str] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {
        "id": sid,
        "task_id": "task_1",
        "action": "rec",
        "parameters": {"tag": tag},
    }
    if deps is not None:
        d["dependencies"] = deps
    return d


def toon_twin(hidden: str) -> str:
    return (
        "metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\nsteps[3]:\n"
        "  - id: fetch\n    task_id: task_1\n    action: rec\n    parameters:\n      tag: A\n"
        f"  - id: fetch{hidden}\n    task_id: task_1\n    action: rec\n    parameters:\n      tag: B\n"
        "  - id: send\n    task_id: task_1\n    action: rec\n    parameters:\n      tag: C\n"
        f"    dependencies[1]: fetch{hidden}\n"
        "shared_inputs: {}\nworkflow_config:\n  parallel_execution: true\n  error_recovery: false\n"
    )


REF1 = ', "x": "$<actions[1].result.tag>"'
MD_BASE = md("b")


def _md(old: str, new: str) -> str:
    assert old in MD_BASE, old
    return MD_BASE.replace(old, new)


TWO = mdplan([_step(1, "step_1", "A"), _step(2, "step_2", "B")], ["step_1", "step_2"])

#: id -> (file name, source text, --from): each must be refused with an E_ code
REFUSED: dict[str, tuple[str, str | bytes, str]] = {
    # md-step-number
    "num-swap:order": (
        "n1.md",
        mdplan([_step(2, "step_2", "A"), _step(1, "step_1", "B")], ["step_2", "step_1"]),
        "",
    ),
    "num-dup:order": (
        "n2.md",
        mdplan([_step(1, "step_1", "A"), _step(1, "step_2", "B")], ["step_1", "step_2"]),
        "",
    ),
    "num-gap:order": (
        "n3.md",
        mdplan([_step(1, "step_1", "A"), _step(7, "step_2", "B")], ["step_1", "step_2"]),
        "",
    ),
    "num-ref:ref": (
        "n4.md",
        mdplan(
            [_step(2, "step_2", "A"), _step(1, "step_1", "B"), _step(3, "step_3", "C", extra=REF1)],
            ["step_2", "step_1", "step_3"],
        ),
        "",
    ),
    "num-pc:ref": (
        "n5.json",
        pc(
            [
                pcs("2", "A"),
                pcs("1", "B"),
                pcs("3", "C", args={"x": "${actions[1].result.tag}"}),
            ]
        ),
        "",
    ),
    # id-lookalike
    "twin-pc-zw:needs": (
        "t1.json",
        pc(
            [pcs("fetch", "A"), pcs("fetch" + ZW, "B"), pcs("send", "C", depends_on=["fetch" + ZW])]
        ),
        "",
    ),
    "twin-ts-zw:needs": (
        "t2.json",
        ts([tss("step_1", "A"), tss("step_1" + ZW, "B"), tss("step_3", "C", ["step_1" + ZW])]),
        "",
    ),
    "twin-md-zw:needs": (
        "t3.md",
        mdplan(
            [
                _step(1, "step_1", "A"),
                _step(2, "step_1" + ZW, "B"),
                _step(3, "step_3", "C", "step_1" + ZW),
            ],
            ["step_1", "step_1" + ZW, "step_3"],
            parallel=True,
        ),
        "",
    ),
    "twin-md-shy:needs": (
        "t4.md",
        mdplan(
            [
                _step(1, "step_1", "A"),
                _step(2, "step_1" + SHY, "B"),
                _step(3, "step_3", "C", "step_1" + SHY),
            ],
            ["step_1", "step_1" + SHY, "step_3"],
            parallel=True,
        ),
        "",
    ),
    "twin-md-nfd:needs": (
        "t5.md",
        mdplan(
            [
                _step(1, "st\u00e9p_1", "A"),
                _step(2, "ste\u0301p_1", "B"),
                _step(3, "step_3", "C", "ste\u0301p_1"),
            ],
            ["st\u00e9p_1", "ste\u0301p_1", "step_3"],
            parallel=True,
        ),
        "",
    ),
    "twin-toon-zw:needs": ("t6.toon", toon_twin(ZW), ""),
    # legacy-ref-extent
    "ref-md-gt:ref": (
        "r1.md",
        _md('{"tag": "b-ok"}', '{"tag": "b-ok", "x": "${inputs.to>x}"}'),
        "",
    ),
    "ref-pc-gt:ref": (
        "r2.json",
        pc([pcs("a", "A"), pcs("b", "B", args={"x": "${actions[1].result.echo.tag>x}"})]),
        "",
    ),
    "ref-pc-brace:ref": (
        "r3.json",
        pc([pcs("a", "A"), pcs("b", "B", args={"x": '${actions[1].result.echo["a}b"]}'})]),
        "",
    ),
    # md-inline-comment
    "html-param:param": (
        "h1.md",
        _md('{"tag": "b-ok"}', '{"tag": "b-ok", "cmd": "ls <!-- ; rm -rf ~ -->"}'),
        "",
    ),
    "html-input:input": (
        "h2.md",
        _md("- to: ok@example.com", "- to: ok@example.com<!-- , evil@example.net -->"),
        "",
    ),
    # held: markdown that is no bullet the reader knows
    "md-lazy:line": ("m1.md", _md('{"tag": "b-ok"}', '{"tag": "b-ok"}\ncontinued text'), ""),
    "md-lazyjson:line": ("m2.md", _md('{"tag": "b-ok"}', '{"tag":\n  "b-ok"}'), ""),
    "md-boldcolon:field": ("m3.md", _md("- **Action**: rec", "- **Action:** rec"), ""),
    "md-under:field": ("m4.md", _md("- **Action**: rec", "- __Action__: rec"), ""),
    "md-plus:field": ("m5.md", _md("- **Action**: rec", "+ **Action**: rec"), ""),
    "md-ordered:field": ("m6.md", _md("- **Action**: rec", "1. **Action**: rec"), ""),
    "md-nested:field": (
        "m7.md",
        _md("- **Action**: rec", "- **Action**: rec\n  - **Action**: evil"),
        "",
    ),
    "md-indent3:heading": ("m8.md", TWO.replace("### Step 2: SB", "   ### Step 2: SB"), ""),
    "md-linkdef:line": (
        "m9.md",
        _md("- **Timeout**: 30s", "[x]: http://e.example\n- **Timeout**: 30s"),
        "",
    ),
    "md-hardbreak:field": (
        "m10.md",
        _md("- **Action**: rec", "- **Action**: rec\\\n- **Timeout**: 9s"),
        "",
    ),
    "md-noid:field": ("m11.md", TWO.replace("- **ID**: step_2\n", ""), ""),
    "md-bommid:heading": ("m12.md", _md("## Steps", "\ufeff## Steps"), ""),
    # held: every field once, however escaped; depth; size; encodings
    "json-escdup:key": (
        "j1.json",
        pc([pcs("a", "A", requires_approval=True)]).replace(
            '"requires_approval": true',
            '"requires_approval": true, "requires_appro\\u0076al": false',
        ),
        "",
    ),
    "md-escdup:key": ("j2.md", _md('{"tag": "b-ok"}', '{"tag": "b-ok", "t\\u0061g": "evil"}'), ""),
    "json-deep:depth": (
        "j3.json",
        pc([pcs("a", "A", args={"d": "DEEP"})]).replace('"DEEP"', "[" * 5000 + "]" * 5000),
        "",
    ),
    "md-deep:depth": (
        "j4.md",
        _md('{"tag": "b-ok"}', '{"tag": "b-ok", "d": ' + "[" * 5000 + "]" * 5000 + "}"),
        "",
    ),
    "json-huge:size": ("j5.json", pc([pcs("a", "x" * (17 * 1024 * 1024))]), ""),
    "md-latin1:encoding": ("e1.md", _md("Record a tag", "Record a t\u00e9g").encode("latin-1"), ""),
    "md-cesu:encoding": (
        "e2.md",
        MD_BASE.encode().replace(b"Record a tag", b"Record \xed\xa0\xbd\xed\xb8\x80"),
        "",
    ),
    "md-overlong:encoding": ("e3.md", MD_BASE.encode().replace(b'"b-ok"', b'"b\xc0\xafok"'), ""),
    # held: task/step structure
    "ts-taskmismatch:task": (
        "k1.json",
        _j(
            {
                "metadata": {"title": "T", "objective": "O"},
                "tasks": [
                    {"id": "t1", "name": "A", "steps": ["s1", "s2"]},
                    {"id": "t2", "name": "B", "steps": [], "dependencies": ["t1"]},
                ],
                "steps": [
                    {"id": "s1", "task_id": "t1", "action": "rec", "parameters": {"tag": "A"}},
                    {"id": "s2", "task_id": "t2", "action": "rec", "parameters": {"tag": "B"}},
                ],
                "shared_inputs": {},
                "workflow_config": {"parallel_execution": False, "error_recovery": False},
            }
        ),
        "",
    ),
}

PTE = "plan: {name: n, task: t, status: pending_approval}\navailable_tools: [{name: rec}]\nactions:\n  - id: 1\n    tool: rec\n    why: w\n    params:\n"
PTE_BAD = {
    "anchor": PTE + "      tag: &a x\n      b: *a\n",
    "merge": PTE + "      <<: {tag: x}\n",
    "tag": PTE + "      tag: !!str x\n",
    "twodocs": PTE + "      tag: x\n---\nplan: {}\n",
    "yaml11": "%YAML 1.1\n---\n" + PTE + "      tag: yes\n",
    "escdup": PTE + '      tag: x\n      "t\\x61g": y\n',
    "nel": PTE + "      tag: x\u0085      evil: y\n",
    "ls": PTE + "      tag: x # c\u2028      evil: y\n",
}
for _k, _v in PTE_BAD.items():
    REFUSED[f"pte-{_k}:yaml"] = (f"p-{_k}.yml", _v, "pte")
    REFUSED[f"pte-reply-{_k}:yaml"] = (f"pr-{_k}.md", "```yaml\n" + _v + "```\n", "")

#: id -> (file name, source text, check of the converted plan): each converts, as read
CONVERTS: dict[str, tuple[str, str, Any]] = {
    "num-inorder:ref": (
        "c1.md",
        mdplan(
            [_step(1, "step_1", "A"), _step(2, "step_2", "B"), _step(3, "step_3", "C", extra=REF1)],
            ["step_1", "step_2", "step_3"],
        ),
        lambda p: (
            [a["params"]["tag"] for a in p["actions"]] == ["A", "B", "C"]
            and p["actions"][2]["params"]["x"] == "$<actions[1].result.tag>"
        ),
    ),
    "twin-toon-apart:needs": (
        "c2.toon",
        toon_twin("2"),
        lambda p: [a.get("needs") for a in p["actions"]] == [[], [], [2]],
    ),
    "ts-taskorder:needs": (
        "c3.json",
        _j(
            {
                "metadata": {"title": "T", "objective": "O"},
                "tasks": [
                    {"id": "t1", "name": "A", "steps": ["s1"], "dependencies": ["t2"]},
                    {"id": "t2", "name": "B", "steps": ["s2"]},
                ],
                "steps": [
                    {"id": "s1", "task_id": "t1", "action": "rec", "parameters": {"tag": "A"}},
                    {"id": "s2", "task_id": "t2", "action": "rec", "parameters": {"tag": "B"}},
                ],
                "shared_inputs": {},
                "workflow_config": {"parallel_execution": False, "error_recovery": False},
            }
        ),
        lambda p: (
            [a["params"]["tag"] for a in p["actions"]] == ["B", "A"]
            and p["actions"][1].get("needs") == [1]
            and "reordered" in str(p["metadata"]["converted_from"].get("notes"))
        ),
    ),
    "ref-md-native:ref": (
        "c4.md",
        _md('{"tag": "b-ok"}', '{"tag": "b-ok", "x": "$<inputs.to>x>"}'),
        lambda p: p["actions"][0]["params"]["x"] == "$<inputs.to>x>",
    ),
}

YHEAD = "plan:\n  name: n\n  task: t\n  status: pending_approval\navailable_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n    why: w\n    params:\n"
#: id -> PLAN.yml text: ``show --format json`` must refuse it with an E_ code
YAML_BAD: dict[str, str] = {
    "yml-anchor:yaml": YHEAD + "      tag: &a x\n      b: *a\n",
    "yml-merge:yaml": YHEAD + "      <<: {tag: x}\n",
    "yml-tag:yaml": YHEAD + "      tag: !!str x\n",
    "yml-twodocs:yaml": YHEAD + "      tag: x\n---\nplan: {name: m}\n",
    "yml-afterend:yaml": YHEAD + "      tag: x\n...\nactions: []\n",
    "yml-yaml11:yaml": "%YAML 1.1\n---\n" + YHEAD + "      tag: yes\n",
    "yml-dupquoted:key": YHEAD + '      tag: x\n      "tag": y\n',
    "yml-dupx:key": YHEAD + '      tag: x\n      "t\\x61g": y\n',
    "yml-dupu:key": YHEAD + '      tag: x\n      "t\\u0061g": y\n',
    "yml-dupflow:key": YHEAD + "      tag: x\n      z: {a: 1, a: 2}\n",
    "yml-dupcomplex:key": YHEAD + "      ? tag\n      : x\n      tag: y\n",
    "yml-dupplan:key": YHEAD + "      tag: x\nplan:\n  name: m\n",
    "yml-bommid:yaml": YHEAD + "      tag: x\n\ufeff      b: y\n",
}

SWAP = mdplan(
    [
        _step(2, "step_2", "dsA"),
        _step(1, "step_1", "dsB"),
        _step(3, "step_3", "dsC", extra=', "x": "${actions[1].result.json.echo.tag}"'),
    ],
    ["step_2", "step_1", "step_3"],
)
OK = mdplan(
    [
        _step(1, "step_1", "doA"),
        _step(2, "step_2", "doB"),
        _step(3, "step_3", "doC", extra=', "x": "${actions[1].result.json.echo.tag}"'),
    ],
    ["step_1", "step_2", "step_3"],
)
GT = pc([pcs("a", "dgA"), pcs("b", "dgB", args={"x": "${actions[1].result.json.echo.tag>x}"})])
YL = (
    "plan:\n  name: n\n  task: t\n  status: pending_approval\navailable_tools:\n  - name: rec\n"
    "actions:\n  - id: 1\n    tool: rec\n    why: w\n    params: {tag: dyA}\n"
    '  - id: 2\n    tool: rec\n    why: w\n    params: {tag: dyB, x: "${actions[1].result.json.echo.tag>x}"}\n'
)
DAEMON = {
    "d-swap": ("PLAN.md", SWAP),
    "d-ok": ("PLAN.md", OK),
    "d-gt": ("PLAN.json", GT),
    "d-yl": ("PLAN.yml", YL),
}


def _convert(lab: Lab, folder: Path, name: str, content: str | bytes, fmt: str) -> dict[str, Any]:
    path = folder / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    told = ["--from", fmt] if fmt else []
    done = lab.cli("convert", *told, str(path), cwd=folder)
    got: dict[str, Any] = {"rc": done.returncode, "err": done.stderr[-1500:], "plan": None}
    if done.returncode == 0 and done.stdout.strip():
        got["plan"] = load_yaml(done.stdout)
        got["text"] = done.stdout[-1500:]
    return got


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    folder = root / "src"
    folder.mkdir()
    for vid, (name, content, fmt) in REFUSED.items():
        got[vid] = _convert(lab, folder, name, content, fmt)
    for vid, (name, content, _check) in CONVERTS.items():
        got[vid] = _convert(lab, folder, name, content, "")
    ymls = root / "ymls"
    for i, (vid, text) in enumerate(YAML_BAD.items()):
        path = ymls / f"y{i}" / "PLAN.yml"
        path.parent.mkdir(parents=True)
        path.write_bytes(text.encode("utf-8"))
        done = lab.cli("show", "--format", "json", str(path), cwd=ymls)
        got[vid] = {"rc": done.returncode, "out": (done.stdout + done.stderr)[-1200:]}
    # the daemon
    for slug, (filename, text) in DAEMON.items():
        lab.write(slug, text, filename)
    lab.commit("agent: plans")
    lab.run()
    got["rows1"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    for slug in DAEMON:
        try:
            if slug == "d-yl":
                lab.set_status(slug, "approved")
            else:
                approve_file(lab, slug)
        except (AssertionError, OSError, BenchError) as why:
            got.setdefault("approve_err", {})[slug] = str(why)[:300]
    lab.commit("alice: approve", ALICE)
    lab.run()
    lab.run()
    got["rows2"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    log = lab.log.read_text() if lab.log.exists() else ""
    got["order"] = [json.loads(line)["argv"][0] for line in log.split("\n") if line.strip()]
    got["stdin"] = {
        t: [json.loads(c["stdin"]) for c in lab.calls(t)] for t in ("dsC", "doC", "dgB", "dyB")
    }
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r108-sources-atk108c", _build)


#: Fixed the same session (fix108c): the four classes (20 ids) of the docstring.
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(REFUSED), list(REFUSED), BROKEN))
def test_source_refused(lab: Lab, vid: str) -> None:
    """The source is ambiguous, hidden or unreadable: refused with a code, nothing written."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] != 0 and got["plan"] is None, f"converted: {got.get('text')}"
    assert re.search(r"\bE_[A-Z_]+\b", got["err"]), got["err"]


@pytest.mark.parametrize("vid", cases(list(CONVERTS), list(CONVERTS), BROKEN))
def test_source_converts_as_read(lab: Lab, vid: str) -> None:
    """Written as a reader expects, the source converts to exactly that."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["plan"] is not None, got["err"]
    assert CONVERTS[vid][2](got["plan"]), got["text"]


@pytest.mark.parametrize("vid", cases(list(YAML_BAD), list(YAML_BAD), BROKEN))
def test_plan_yml_refused(lab: Lab, vid: str) -> None:
    """A PLAN.yml whose YAML a reviewer could read two ways is refused by ``show``."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] != 0 and re.search(r"\bE_[A-Z_]+\b", got["out"]), got["out"]


@pytest.mark.parametrize("vid", cases(["d-swap:order"], ["d-swap:order"], BROKEN))
def test_daemon_step_order(lab: Lab, vid: str) -> None:
    """The step headed ``Step 1`` runs before the step headed ``Step 2``, or nothing runs."""
    order = [t for t in lab.got["order"] if t.startswith("ds")]  # type: ignore[attr-defined]
    assert not order or order.index("dsB") < order.index("dsA"), (order, lab.got["rows2"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["d-swap:ref"], ["d-swap:ref"], BROKEN))
def test_daemon_step_ref(lab: Lab, vid: str) -> None:
    """``${actions[1]...}`` beside a ``### Step 1`` gets that step's result, or nothing runs."""
    calls = lab.got["stdin"]["dsC"]  # type: ignore[attr-defined]
    assert all(c.get("x") == "dsB" for c in calls), calls


@pytest.mark.parametrize("vid", cases(["d-ok:ref"], ["d-ok:ref"], BROKEN))
def test_daemon_in_order(lab: Lab, vid: str) -> None:
    """Control: in order, Alice's approval runs the three steps, the reference reads step 1."""
    g = lab.got  # type: ignore[attr-defined]
    assert [t for t in g["order"] if t.startswith("do")] == ["doA", "doB", "doC"], (
        g["order"],
        g["rows2"],
    )
    assert g["stdin"]["doC"] == [{"tag": "doC", "x": "doA"}], g["stdin"]["doC"]


@pytest.mark.parametrize("slug", cases(["d-gt:runs", "d-yl:runs"], ["d-gt", "d-yl"], BROKEN))
def test_daemon_ref_whole(lab: Lab, slug: str) -> None:
    """A reference ``${actions[1].result.json.echo.tag>x}`` names the key ``tag>x``: the tool
    never gets ``tag``'s value with ``x>`` after it (refused, or failed at the reference)."""
    g = lab.got  # type: ignore[attr-defined]
    tag = "dgB" if slug == "d-gt" else "dyB"
    assert g["stdin"][tag] == [], (g["stdin"][tag], g["rows2"].get(f"plans/{slug}"))
