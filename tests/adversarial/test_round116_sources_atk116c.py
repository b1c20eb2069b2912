# ruff: noqa: E501
r"""Round 116, sources (atk116c): what a reviewer reads of a plan (a source's diff or its forge
rendering, the frozen PLAN.yml, ``plangate show``, MCP ``validate``) is exactly what runs;
nothing a source says is dropped silently; a source's problem is refused with its code, its
location and a message and remedy that name the real cause.

Lab (one, module scope; the bench's config, the recorder ``rec``). Part 1, ``plangate convert
SRC`` (no config: the converter alone) of sources the test writes, one per id: Plan Contract,
ActionPlan and Agent Plan JSON, task/step JSON, the markdown plan, TOON, pte YAML; ``show
--format json|toon`` of one PLAN.yml outside the repo; one ``plangate mcp`` session
validating five of the same texts. Part 2, the daemon: the agent commits five ``PLAN.yml``
(plan ``inputs`` holding reference text, and a control), a ``PLAN.json`` whose args nest 120
deep, three ``PLAN.md`` (a shared input wholly in a code span, a ``### Step 2`` record between
the title and ``## Objective``, a control); one ``run --once`` pass; Alice approves every
PLAN.yml and converted plan in one commit; a second pass.

Variants (``<variant>:<what>``):

- ``deep-*``, ``big-*``: a value nested 97..800 levels (over PLAN.yml's 100-level limit once
  under ``actions[0].params``) in every JSON-carrying format, TOON and markdown; a source
  whose PLAN.yml would pass ``max_plan_bytes`` (a raw U+200B is 3 bytes, its escape 6; a
  source over 1 MiB): refused naming the cause at a place; controls: pte YAML says
  "nested deeper than 100 levels" at its line, 96 levels convert, 900 are "at most 100
  levels deep", 1020349 bytes are sized against the limit, 900 kB convert;
- ``pre-*``, ``obj-*``: what stands between the markdown ``# Title`` and the first ``##``
  section (prose, a list, a ``- **Requires Approval**: true`` bullet, a fence, a quote, a
  table, a rule, a ``### Step 2`` record), and a record under ``## Objective``: kept or
  refused; controls: prose before the first record of ``## Steps``/``## Tasks``, in a
  step, a task, ``## Shared Inputs`` or after ``## Workflow Config`` is refused at its line,
  a record under ``## Notes`` refused, a ``# Title`` said twice refused;
- ``cs-*``: a markdown shared input wholly in a code span (docs/formats.md: "a value wholly in
  one is read without its backticks"); controls: ``Parameters`` wholly in one;
- ``inref-*``, ``gref-*``: reference text (``$<plan.name>``, ``$<secrets.TOKEN>``, nested) in
  a plan's static ``inputs`` that a param reads through ``$<inputs.r>``, in markdown, Plan
  Contract, TOON, ActionPlan ``workspace_id``, pte and PLAN.yml; in a guard's ``one_of`` and
  ``matches``; controls: a plain input, a guard ``max`` (no number);
- ``ov-*``: Agent Plan overlays under the documented wrappers; controls: one wrapper, inner
  overlays, a stray top-level field refused;
- ``empty-*``, ``blank-*``: an empty or blank required text; controls: an empty ``type``, a
  null assumption;
- ``fence-obj-*``: a fenced block in ``## Objective`` (plan.task is hashed, shown to the
  approver); control: an indented code block;
- ``num-*``, ``tn-*`` (held): numbers at the edge of the canonical form in markdown
  shared-input bullets and TOON (``05``, ``0x10``, ``1_000``, ``yes``, ``~``, a date,
  ``+5``, ``.5``, ``5.``, ``00``, ``TRUE``/``True``/``Null`` stay strings; ``1E+2`` is 100,
  ``-0``/``-0.0`` are 0; 2^53+1, ``0.10000000000000001``, ``4.9406564584124654e-324``,
  ``1e400``, ``2e308`` refused at their place); ``show-toon`` (held): ``show --format toon``
  decodes to the ``json`` output for values TOON must quote;
- ``mcp-*``, ``d-*``: the same through MCP ``validate`` and the daemon.

Seen (round 116, 135 ids, ~25 s wall on a shared box): 8 classes broke (66 ids, strict
xfails), 69 held.

1. **md-preamble-dropped** (11): ``pre-{para,list,gate-bullet,fence,quote,step,h3,table,hr}:kept``,
   ``mcp-pre:two-steps-or-refused``, ``d-pre:all-steps-or-refused``. Everything between
   ``# Title`` and the first ``##`` heading converts to nothing, with no note and exit 0: a
   whole ``### Step 2: Delete`` record there is in the diff and on the forge, and not in the
   plan. The daemon converted ``plans/d-pre/PLAN.md`` into a one-action plan, Alice approved
   it, and it ran ``completed`` with only step 1; MCP ``validate`` says valid with one
   action. The same text anywhere else is refused at its line ("text before the first ###
   heading", "expected `- **Field**: value`"). Reproduce: insert ``\n### Step 2: Delete\n-
   **ID**: step_2\n- **Task**: task_1\n- **Action**: rec\n- **Parameters**: {"tag": "X"}\n``
   after the ``# Title`` line of ``examples/formats``' markdown plan; ``plangate convert`` it.
2. **md-step-in-objective** (2): ``obj-{step,task}:refused``. A ``### Step 2:``/``### Task 2:``
   record under ``## Objective`` converts into ``plan.task`` text (exit 0), where under
   ``## Notes`` it is ``E_CONVERT_UNSUPPORTED`` "a record under ... a section this reader keeps
   as text: it would never run" (docs/formats.md names that rule).
3. **readback-failure-misdiagnosed** (16): ``deep-{pc-args,pc-97,pc-300,pc-obj,pc-inputs,ap,agent,
   md-params,md-input,toon}:located``, ``big-{pc-zw,pc-nbsp,toon-zw,pc-plain}:sized``,
   ``mcp-deep:located``, ``d-deep:row-located``. When the converted PLAN.yml cannot be read
   back (a value over 100 levels, a text over ``max_plan_bytes``), ``convert`` says
   ``E_CONVERT_UNSUPPORTED: a value does not survive as YAML (a lone surrogate or another
   character YAML cannot carry)``, no place, remedy "change the source as the message says";
   the source holds no surrogate. MCP ``validate`` and the daemon's row say
   ``not plain JSON data: E_YAML_PARSE: <plan>:114: nested deeper than 100 levels`` (line null;
   ``PLAN.json:114`` for a one-line PLAN.json: the converted text's line). Three readers, three
   answers for one source. Reproduce: ``python -c 'print("{\"plan_version\": 1, \"skill_id\":
   \"s\", \"goal\": \"g\", \"steps\": [{\"step_id\": \"1\", \"tool\": \"rec\", \"args\":
   {\"d\": " + "["*120 + "]"*120 + "}}]}")' > p.json; plangate convert p.json``.
4. **unresolved-reference-text** (14): ``inref-{md,md-secret,pc,pc-nested,toon,ap-workspace,
   pte}:refused``, ``gref-pte-{one-of,matches}:refused``, ``mcp-inref:refused``,
   ``d-inref-{name,embedded,secret,nested}:refused``.
   ``inputs: {r: "$<plan.name>"}`` with ``x: "$<inputs.r>"`` validates, freezes and runs; the
   tool got ``"x": "$<plan.name>"`` (``$<secrets.TOKEN>`` likewise, as text). ``show`` prints
   ``Inputs: {"r": "$<plan.name>"}`` and ``x = "«$<inputs.r>»"``: a reviewer reads a
   reference. plan-format.md refuses reference text where it is not resolved (keys, ``expect``
   values: "a reviewer would read it as resolved", round 18); inputs are exempt, and ``$$<``
   means the literal in params but not in inputs. A guard ``one_of: ["$<inputs.to>"]`` or
   ``matches: "$<inputs.p>"`` validates too and compares the literal text (fail-closed at run
   time: the guard fails; ``show`` prints ``guard to: one of ["$<inputs.to>"]``). A
   judgement: the SPEC calls inputs static; the ids assert the round-18 rule
   (``E_REF_INVALID``).
5. **md-input-codespan-kept** (7): ``cs-input-{word,email,double,padded,number}:rendered``,
   ``mcp-cs:rendered``, ``d-cs:ran-rendered``. ``- n: `cs-val` `` under ``## Shared Inputs``
   becomes the input ``"`cs-val`"`` (backticks kept; a forge shows ``cs-val``), while a
   ``Parameters`` value wholly in a code span is read without them (held). The daemon ran the
   tool with ``"x": "`cs-val`"``. Fixed (fix116m): ``cs-input-number`` asserted the string
   ``"5"``; the contract reads a value wholly in a code span "without its backticks", then as
   that bullet's value (``Parameters``' content is JSON, and ``- n: 5`` is the number 5), so
   the id now asserts the number 5 (``- n: `"5"` `` is the string).
6. **agent-outer-overlays-dropped** (4): ``ov-{wrap2,wrap2-both,wrap3,wrap2-list}:kept``. The
   documented wrapper ``{"plan": {"plan": ...}, "overlays": ...}`` converts with the outer
   ``overlays`` nowhere (not mapped, not in ``metadata.source``, not refused); beside inner
   overlays, the inner are kept and the outer dropped. One wrapper keeps them (held).
7. **empty-string-says-got-a-string** (10): ``empty-{pc-goal,pc-tool,pc-step-id,pc-description,
   ap-title,ap-description,agent-title,ts-title,ts-action}:named``,
   ``blank-pc-description:named``. ``"goal": ""`` is ``E_SCHEMA_INVALID at goal: expected a
   string, got a string`` with the remedy "correct the field as the message says".
8. **md-fence-in-descriptive-text** (2): ``fence-obj-{backtick,tilde}:shown``, round 113's
   descriptive-text rule by fenced code: a ```` ```bash ```` block in ``## Objective`` becomes
   ``plan.task`` ``"...\n\nbash rm -rf /tmp/x"`` (the info string glued to the code), a
   ``~~~ python extra`` block keeps its fences and info string; a forge shows the code alone
   (an indented block converts to its text: held). ``## Notes`` does the same in
   ``metadata.source.sections`` (not hashed; not asserted).

Held: unknown TOON fields (top level, a step's, a task's ``requires_approval``, a
``workflow_config`` key) and markdown step types and config bullets refused at their place,
TOON metadata and markdown task fields kept in ``metadata``; TOON/markdown number spellings as the TOON grammar and PLAN.yml's rules say; every
number no double holds refused at its place; markdown trailing blanks, TABs and NBSPs in a
shared input refused ("the plan shows other text"); prose in every other markdown place
refused at its line; two shared-input forms refused; a plain input runs once with its value;
``show --format toon`` decodes to ``--format json`` for values TOON must quote; YAML comments
in plain and flow scalars read as YAML 1.2 says.

Suspected, not asserted: a code span INSIDE a markdown ``Parameters`` JSON string
(``{"cmd": "echo `id`"}``) keeps its backticks, which a forge hides (docs call a code span
"shown as written", as for autolinks kept with their ``<>``); TOON ``\uXXXX`` escapes are
read although the TOON spec lists five escapes only (round 114's note; ``\x41``, ``\/``,
``\b`` are refused); an Agent Plan step ``id: ""`` and a Plan Contract ``skill_id: ""``
convert (ids are dropped; the name becomes ``: g``); a TOON line whose first non-blank
character is ``#`` is a comment to ``toon-format`` 1.2.0 (its "§5.1"), a tabular row
``#web,80`` too (``h[2]{n,p}:`` over ``#web,80``, ``db,5432``, ``x,1`` decodes to the last two
rows), which a reviewer who does not know that rule reads as a row.

Adapted (fix116s): ``mcp-deep:located`` asked for a ``line`` in MCP's error; a JSON source
carries no lines by the contract (docs/formats.md: problems are at their location, "markdown
sources also give the line"), so the id takes the error's ``path`` in the text sent (here
``steps[0].args.d``) or a line within it. The depth is refused ``E_CONVERT_UNSUPPORTED`` (the
converters' code for what PLAN.yml cannot hold, as ``deep-pc-900`` already is) with YAML's
limit and words, not ``E_YAML_PARSE``: no YAML was read.

Not tried: MCP ``submit`` (needs ``agent.identity``; ``validate`` shares the converter),
``plangate check`` and ``validate`` of a committed deep source, nested ActionPlans,
remote mode.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, load_yaml, plan_text
from mcpkit import answers
from sourcekit import approve_file, md
from test_round2_execution_kit import shared

# -- sources --------------------------------------------------------------------------------

MD = md("a")
PARAMS = '- **Parameters**: {"tag": "a-ok"}\n'
INPUT = "- to: ok@example.com\n"
assert PARAMS in MD and INPUT in MD

TOON_HEAD = "metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\n"
TOON_TAIL = (
    "shared_inputs: {}\nworkflow_config:\n  parallel_execution: false\n  error_recovery: false\n"
)


def _nest(n: int) -> str:
    return "[" * n + "]" * n


def _pc(args: str = '{"tag": "A"}', inputs: str = "") -> str:
    head = '{"plan_version": 1, "skill_id": "s", "goal": "g", '
    if inputs:
        head += '"inputs": ' + inputs + ", "
    return head + '"steps": [{"step_id": "1", "tool": "rec", "args": ' + args + "}]}"


def _ap(extra: str) -> str:
    text = json.dumps(
        {
            "plan_version": 1,
            "title": "t",
            "steps": [
                {"step_number": 1, "action": {"type": "rec", "tag": "A"}, "description": "d"}
            ],
        }
    )
    return text.replace('"tag": "A"', '"tag": "A", ' + extra)


def _agent(extra: str) -> str:
    text = json.dumps(
        {
            "title": "t",
            "steps": [
                {
                    "id": "s1",
                    "title": "T",
                    "detail": "D",
                    "tool": {"kind": {"Custom": {"name": "rec", "payload": {"tag": "A"}}}},
                }
            ],
        }
    )
    return text.replace('"tag": "A"', '"tag": "A", ' + extra)


AGENT_INNER = {
    "title": "t",
    "steps": [
        {
            "id": "s1",
            "title": "T",
            "detail": "D",
            "tool": {"kind": {"Custom": {"name": "rec", "payload": {"tag": "A"}}}},
        }
    ],
}


def _wrap(outer: dict[str, Any]) -> str:
    return json.dumps(outer)


PC_BASE: dict[str, Any] = {
    "plan_version": 1,
    "skill_id": "s",
    "goal": "g",
    "steps": [{"step_id": "1", "tool": "rec", "args": {"tag": "A"}}],
}
AP_BASE: dict[str, Any] = {
    "plan_version": 1,
    "title": "t",
    "steps": [{"step_number": 1, "action": {"type": "rec", "tag": "A"}, "description": "d"}],
}
TS_BASE: dict[str, Any] = {
    "metadata": {"title": "T", "objective": "O"},
    "tasks": [{"id": "task_1", "name": "N"}],
    "steps": [{"id": "s1", "task_id": "task_1", "action": "rec", "parameters": {"tag": "a"}}],
}


def _with(base: dict[str, Any], path: str, value: Any) -> str:
    """``base`` (deep-copied) with the member at ``path`` (``a.0.b``) set to ``value``."""
    doc = json.loads(json.dumps(base))
    *parents, last = path.split(".")
    here: Any = doc
    for part in parents:
        here = here[int(part)] if part.isdigit() else here[part]
    here[int(last) if last.isdigit() else last] = value
    return json.dumps(doc)


def _with_obj(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    return json.loads(_with(base, path, value))


def _mdp(extra: str) -> str:
    return MD.replace(PARAMS, '- **Parameters**: {"tag": "a-ok", ' + extra + "}\n")


def _mdparams(value: str) -> str:
    return MD.replace(PARAMS, "- **Parameters**: " + value + "\n")


def _mdin(line: str) -> str:
    return MD.replace(INPUT, INPUT + line + "\n")


def _toon_params(body: str) -> str:
    return (
        TOON_HEAD
        + "steps[1]:\n  - id: s1\n    task_id: task_1\n    action: rec\n    parameters:\n"
        + body
        + TOON_TAIL
    )


def _toon_deep(n: int) -> str:
    body = "".join("  " * (i + 3) + f"k{i}:\n" for i in range(n)) + "  " * (n + 3) + "v: 1\n"
    return _toon_params("      tag: a\n" + body)


def _tv(value: str) -> str:
    return _toon_params("      tag: a\n      v: " + value + "\n")


def _toon_inputs(body: str) -> str:
    return (
        TOON_HEAD
        + "steps[1]:\n  - id: s1\n    task_id: task_1\n    action: rec\n    parameters:\n"
        + '      tag: a\n      x: "$<inputs.r>"\n'
        + "shared_inputs:\n"
        + body
        + "workflow_config:\n  parallel_execution: false\n  error_recovery: false\n"
    )


PTE = (
    'plan:\n  name: "t"\n  task: "t"\n  status: pending_approval\navailable_tools:\n'
    '  - name: rec\nactions:\n  - id: 1\n    tool: rec\n    why: "w"\n    params:\n'
    "      tag: a\n"
)

DEEP = r"(?i)(deep|levels)"
EMPTY = r"(?i)(empty|blank|is required)"
TITLE = "# Record plan\n"
STEP2 = (
    "### Step 2: Delete\n- **ID**: step_2\n- **Task**: task_1\n- **Action**: rec\n"
    '- **Parameters**: {"tag": "DANGER"}\n- **Timeout**: 30s\n- **Dependencies**: []\n'
)


def _pre(block: str) -> str:
    """The markdown plan with ``block`` between its ``# Title`` and ``## Objective``."""
    return MD.replace(TITLE, TITLE + "\n" + block)


SIZE = r"(?i)(max_plan_bytes|too large)"


def _pcraw(value: str) -> str:
    """A Plan Contract whose args hold ``v``: ``value``, written raw (UTF-8, no escapes)."""
    return json.dumps(
        {
            "plan_version": 1,
            "skill_id": "s",
            "goal": "g",
            "steps": [{"step_id": "1", "tool": "rec", "args": {"tag": "A", "v": value}}],
        },
        ensure_ascii=False,
    )


#: id -> (file name, source, --from, expectation). An expectation is ("refused", code, text):
#: exit 1, that code, ``text`` (a regex) in the message, at a place (a line or a path), never
#: an internal error; or ("param"|"input", key, value): converted, that value there.
CONVERT: dict[str, tuple[str, str, str, tuple[str, str, Any]]] = {
    # deep-value-misdiagnosed: the depth refused as "a lone surrogate", no place
    "deep-pc-args:located": (
        "p.json",
        _pc('{"tag": "A", "d": ' + _nest(120) + "}"),
        "",
        ("refused", "E_", DEEP),
    ),
    "deep-pc-97:located": (
        "p.json",
        _pc('{"tag": "A", "d": ' + _nest(97) + "}"),
        "",
        ("refused", "E_", DEEP),
    ),
    "deep-pc-300:located": (
        "p.json",
        _pc('{"tag": "A", "d": ' + _nest(300) + "}"),
        "",
        ("refused", "E_", DEEP),
    ),
    "deep-pc-obj:located": (
        "p.json",
        _pc('{"tag": "A", "d": ' + ('{"a":' * 150 + "1" + "}" * 150) + "}"),
        "",
        ("refused", "E_", DEEP),
    ),
    "deep-pc-inputs:located": (
        "p.json",
        _pc(inputs='{"d": ' + _nest(120) + "}"),
        "",
        ("refused", "E_", DEEP),
    ),
    "deep-ap:located": ("p.json", _ap('"d": ' + _nest(120)), "", ("refused", "E_", DEEP)),
    "deep-agent:located": ("p.json", _agent('"d": ' + _nest(120)), "", ("refused", "E_", DEEP)),
    "deep-md-params:located": ("p.md", _mdp('"d": ' + _nest(120)), "", ("refused", "E_", DEEP)),
    "deep-md-input:located": ("p.md", _mdin("- d: " + _nest(120)), "", ("refused", "E_", DEEP)),
    "deep-toon:located": ("p.toon", _toon_deep(120), "", ("refused", "E_", DEEP)),
    # held: the pte source (YAML) says it; 96 levels fit; 900 are "at most 100 levels deep"
    "deep-pte:located": (
        "p.yml",
        PTE + "      d: " + _nest(120) + "\n",
        "",
        ("refused", "E_YAML_PARSE", r"deeper than 100 levels"),
    ),
    "deep-pc-900:refused": (
        "p.json",
        _pc('{"tag": "A", "d": ' + _nest(900) + "}"),
        "",
        ("refused-file", "E_CONVERT_UNSUPPORTED", r"at most 100 levels deep"),
    ),
    "deep-pc-96:converts": (
        "p.json",
        _pc('{"tag": "A", "d": ' + _nest(96) + "}"),
        "",
        ("param", "tag", "A"),
    ),
    # the same read-back: a PLAN.yml over max_plan_bytes (escapes grow a raw U+200B from 3 to
    # 6 bytes; a source over 1 MiB) is "a lone surrogate" too, where 1020349 bytes are sized
    "big-pc-zw:sized": (
        "p.json",
        _pcraw("\u200b" * 200000),
        "",
        ("refused-file", r"E_(PLAN_TOO_LARGE|LIMIT_EXCEEDED)", SIZE),
    ),
    "big-pc-nbsp:sized": (
        "p.json",
        _pcraw("\u00a0" * 400000),
        "",
        ("refused-file", r"E_(PLAN_TOO_LARGE|LIMIT_EXCEEDED)", SIZE),
    ),
    "big-toon-zw:sized": (
        "p.toon",
        _tv('"x' + "\u200b" * 200000 + 'x"'),
        "",
        ("refused-file", r"E_(PLAN_TOO_LARGE|LIMIT_EXCEEDED)", SIZE),
    ),
    "big-pc-plain:sized": (
        "p.json",
        _pcraw("a" * 1100000),
        "",
        ("refused-file", r"E_(PLAN_TOO_LARGE|LIMIT_EXCEEDED)", SIZE),
    ),
    # held: just under 1 MiB is sized with the limit; 900 kB converts
    "big-pc-170k:sized": (
        "p.json",
        _pcraw("\u200b" * 170000),
        "",
        ("refused-file", r"E_", r"over 983040: limits\.max_plan_bytes"),
    ),
    "big-pc-150k:converts": ("p.json", _pcraw("\u200b" * 150000), "", ("param", "tag", "A")),
    # md-input-codespan-kept: a shared input wholly in a code span keeps its backticks
    "cs-input-word:rendered": ("p.md", _mdin("- n: `x`"), "", ("input", "n", "x")),
    "cs-input-email:rendered": (
        "p.md",
        _mdin("- n: `ops@example.com`"),
        "",
        ("input", "n", "ops@example.com"),
    ),
    "cs-input-double:rendered": ("p.md", _mdin("- n: ``x``"), "", ("input", "n", "x")),
    "cs-input-padded:rendered": ("p.md", _mdin("- n: ` x `"), "", ("input", "n", "x")),
    # fix116m: the content is read as the bullet's value would be unspanned (docs/formats.md,
    # one rule with Parameters, whose code span's content is JSON): `5` is the number 5
    "cs-input-number:rendered": ("p.md", _mdin("- n: `5`"), "", ("input", "n", 5)),
    # held: a Parameters value wholly in a code span is read without its backticks
    "cs-params-single:rendered": ("p.md", _mdparams('`{"tag": "cs"}`'), "", ("param", "tag", "cs")),
    "cs-params-double:rendered": (
        "p.md",
        _mdparams('``{"tag": "cs"}``'),
        "",
        ("param", "tag", "cs"),
    ),
    "cs-params-padded:rendered": (
        "p.md",
        _mdparams('` {"tag": "cs"} `'),
        "",
        ("param", "tag", "cs"),
    ),
    "cs-params-trailing:refused": (
        "p.md",
        _mdparams('`{"tag": "cs"}` x'),
        "",
        ("refused", "E_SCHEMA_INVALID", r"must be an object"),
    ),
    # input-reference-text-literal: reference text in a plan's inputs reaches the tool as text
    "inref-md:refused": (
        "p.md",
        _mdin("- r: $<plan.name>").replace(
            PARAMS, '- **Parameters**: {"tag": "a-ok", "x": "$<inputs.r>"}\n'
        ),
        "",
        ("refused", "E_REF_INVALID", ""),
    ),
    "inref-md-secret:refused": (
        "p.md",
        _mdin("- r: $<secrets.TOKEN>").replace(
            PARAMS, '- **Parameters**: {"tag": "a-ok", "x": "$<inputs.r>"}\n'
        ),
        "",
        ("refused", "E_REF_INVALID", ""),
    ),
    "inref-pc:refused": (
        "p.json",
        _pc('{"tag": "A", "x": "$<inputs.r>"}', '{"r": "$<plan.name>"}'),
        "",
        ("refused", "E_REF_INVALID", ""),
    ),
    "inref-pc-nested:refused": (
        "p.json",
        _pc('{"tag": "A", "x": "$<inputs.r>"}', '{"r": {"k": ["$<plan.name>"]}}'),
        "",
        ("refused", "E_REF_INVALID", ""),
    ),
    "inref-toon:refused": (
        "p.toon",
        _toon_inputs('  r: "$<plan.name>"\n'),
        "",
        ("refused", "E_REF_INVALID", ""),
    ),
    # md-preamble-dropped: what stands between `# Title` and the first `##` section is
    # dropped, a step record too; kept (task, metadata) or refused at its line, never lost
    "pre-para:kept": ("p.md", _pre("DANGER: step 1 deletes prod\n"), "", ("kept", "DANGER", "")),
    "pre-list:kept": ("p.md", _pre("- DANGER bullet\n"), "", ("kept", "DANGER", "")),
    "pre-gate-bullet:kept": (
        "p.md",
        _pre("- **Requires Approval**: true\n"),
        "",
        ("kept", "Requires Approval", ""),
    ),
    "pre-fence:kept": (
        "p.md",
        _pre('```json\n{"DANGER": false}\n```\n'),
        "",
        ("kept", "DANGER", ""),
    ),
    "pre-quote:kept": ("p.md", _pre("> DANGER quote\n"), "", ("kept", "DANGER", "")),
    "pre-step:kept": ("p.md", _pre(STEP2), "", ("kept", "DANGER", "")),
    "pre-h3:kept": ("p.md", _pre("### DANGER heading\n"), "", ("kept", "DANGER", "")),
    "pre-table:kept": (
        "p.md",
        _pre("| a | DANGER |\n|---|---|\n| 1 | 2 |\n"),
        "",
        ("kept", "DANGER", ""),
    ),
    "pre-hr:kept": ("p.md", _pre("---\nDANGER after a rule\n"), "", ("kept", "DANGER", "")),
    # md-step-in-objective: a step record under `## Objective` becomes the task's text
    "obj-step:refused": (
        "p.md",
        MD.replace("Record a tag\n", "Record a tag\n\n" + STEP2),
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", ""),
    ),
    # held: prose elsewhere is refused at its line; text before the title is no plan
    "prose-step:refused": (
        "p.md",
        MD.replace(PARAMS, PARAMS + "\nRun it with dry_run false.\n"),
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"Field"),
    ),
    "prose-task:refused": (
        "p.md",
        MD.replace("- **Steps**: step_1\n", "- **Steps**: step_1\n\nThis task needs approval.\n"),
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"Field"),
    ),
    "prose-inputs:refused": (
        "p.md",
        _mdin("\nAlso set n to 5."),
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"shared inputs"),
    ),
    "prose-config:refused": (
        "p.md",
        MD + "\nTrailing note: parallel\n",
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"Field"),
    ),
    "prose-before-title:refused": (
        "p.md",
        "Intro: DANGER\n\n" + MD,
        "",
        ("refused-file", "E_PARSE_NONJSON", r"markdown"),
    ),
    "title-twice:refused": (
        "p.md",
        MD + "\n# Second title\n",
        "",
        ("refused", "E_SCHEMA_INVALID", r"said twice"),
    ),
    "inputs-two-forms:refused": (
        "p.md",
        _mdin('\n```json\n{"n": 1}\n```'),
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"shared inputs"),
    ),
    "obj-task:refused": (
        "p.md",
        MD.replace(
            "Record a tag\n",
            "Record a tag\n\n### Task 2: More\n- **ID**: task_2\n- **Description**: DANGER\n- **Steps**: step_1\n",
        ),
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", ""),
    ),
    # held: a preamble of `## Steps` or `## Tasks` is refused; a record under `## Notes` too
    "steps-preamble:refused": (
        "p.md",
        MD.replace("## Steps\n", "## Steps\n\nDANGER prose before step 1\n"),
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"before the first ### heading"),
    ),
    "tasks-preamble:refused": (
        "p.md",
        MD.replace("## Tasks\n", "## Tasks\n\nDANGER prose\n"),
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"before the first ### heading"),
    ),
    "notes-step:refused": (
        "p.md",
        MD + "\n## Notes\n\n" + STEP2,
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"never run"),
    ),
    "notes-prose:kept": ("p.md", MD + "\n## Notes\n\nDANGER note\n", "", ("kept", "DANGER", "")),
    # agent-outer-overlays-dropped: `{"plan": {"plan": ...}, "overlays": ...}` (docs/formats.md's
    # wrapper) keeps no outer overlays: not mapped, not in metadata, not refused
    "ov-wrap2:kept": (
        "p.json",
        _wrap({"plan": {"plan": AGENT_INNER}, "overlays": {"x": "OUTER"}}),
        "",
        ("kept", "OUTER", ""),
    ),
    "ov-wrap2-both:kept": (
        "p.json",
        _wrap({"plan": {"plan": AGENT_INNER, "overlays": {"x": "IN"}}, "overlays": {"x": "OUTER"}}),
        "",
        ("kept", "OUTER", ""),
    ),
    "ov-wrap3:kept": (
        "p.json",
        _wrap(
            {
                "plan": {"plan": {"plan": AGENT_INNER}, "overlays": {"x": "MID"}},
                "overlays": {"x": "OUTER"},
            }
        ),
        "",
        ("kept", "OUTER", ""),
    ),
    "ov-wrap2-list:kept": (
        "p.json",
        _wrap(
            {
                "plan": {"plan": AGENT_INNER},
                "overlays": [{"step": "s1", "payload": {"dry_run": "OUTER"}}],
            }
        ),
        "",
        ("kept", "OUTER", ""),
    ),
    # held: one wrapper keeps them; an inner one is kept; a stray top-level field is refused
    "ov-wrap1:kept": (
        "p.json",
        _wrap({"plan": AGENT_INNER, "overlays": {"x": "OUTER"}}),
        "",
        ("kept", "OUTER", ""),
    ),
    "ov-wrap2-inner:kept": (
        "p.json",
        _wrap({"plan": {"plan": AGENT_INNER, "overlays": {"x": "OUTER"}}}),
        "",
        ("kept", "OUTER", ""),
    ),
    "ov-wrap1-title:refused": (
        "p.json",
        _wrap({"plan": AGENT_INNER, "title": "x"}),
        "",
        ("refused-file", "E_CONVERT_UNSUPPORTED", r"at title"),
    ),
    "ov-wrap1-meta:refused": (
        "p.json",
        _wrap({"plan": AGENT_INNER, "meta": {"risk_assessment": ["x"]}}),
        "",
        ("refused-file", "E_CONVERT_UNSUPPORTED", r"at meta"),
    ),
    # empty-string-says-got-a-string: an empty required text is refused "expected a string,
    # got a string", the remedy "correct the field as the message says"
    "empty-pc-goal:named": (
        "p.json",
        _with(PC_BASE, "goal", ""),
        "",
        ("refused", "E_SCHEMA_INVALID", EMPTY),
    ),
    "empty-pc-tool:named": (
        "p.json",
        _with(PC_BASE, "steps.0.tool", ""),
        "",
        ("refused", "E_SCHEMA_INVALID", EMPTY),
    ),
    "empty-pc-step-id:named": (
        "p.json",
        _with(PC_BASE, "steps.0.step_id", ""),
        "",
        ("refused", "E_SCHEMA_INVALID", EMPTY),
    ),
    "empty-pc-description:named": (
        "p.json",
        _with(PC_BASE, "steps.0.description", ""),
        "",
        ("refused", "E_SCHEMA_INVALID", EMPTY),
    ),
    "blank-pc-description:named": (
        "p.json",
        _with(PC_BASE, "steps.0.description", "  "),
        "",
        ("refused", "E_SCHEMA_INVALID", EMPTY),
    ),
    "empty-ap-title:named": (
        "p.json",
        _with(AP_BASE, "title", ""),
        "",
        ("refused", "E_SCHEMA_INVALID", EMPTY),
    ),
    "empty-ap-description:named": (
        "p.json",
        _with(AP_BASE, "steps.0.description", ""),
        "",
        ("refused", "E_SCHEMA_INVALID", EMPTY),
    ),
    "empty-agent-title:named": (
        "p.json",
        json.dumps({**AGENT_INNER, "title": ""}),
        "",
        ("refused", "E_SCHEMA_INVALID", EMPTY),
    ),
    "empty-ts-title:named": (
        "p.json",
        _with(TS_BASE, "metadata.title", ""),
        "",
        ("refused", "E_SCHEMA_INVALID", EMPTY),
    ),
    "empty-ts-action:named": (
        "p.json",
        _with(TS_BASE, "steps.0.action", ""),
        "",
        ("refused", "E_SCHEMA_INVALID", EMPTY),
    ),
    # held: an empty `type`, a null assumption say what is missing
    "empty-ap-type:named": (
        "p.json",
        _with(AP_BASE, "steps.0.action.type", ""),
        "",
        ("refused", "E_SCHEMA_INVALID", r"is required"),
    ),
    "null-pc-assumption:named": (
        "p.json",
        _with(PC_BASE, "assumptions", ["a", None]),
        "",
        ("refused", "E_SCHEMA_INVALID", r"non-empty string is required"),
    ),
    "inref-ap-workspace:refused": (
        "p.json",
        _with(
            _with_obj(AP_BASE, "steps.0.action.tag", "$<inputs.workspace_id>"),
            "workspace_id",
            "$<secrets.TOKEN>",
        ),
        "",
        ("refused", "E_REF_INVALID", ""),
    ),
    "inref-pte:refused": (
        "p.yml",
        PTE.replace("available_tools:", 'inputs:\n  r: "$<plan.name>"\navailable_tools:').replace(
            "      tag: a\n", '      tag: "$<inputs.r>"\n'
        ),
        "",
        ("refused", "E_REF_INVALID", ""),
    ),
    # the same rule for a guard's values: compared as written, never resolved
    "gref-pte-one-of:refused": (
        "p.yml",
        PTE.replace(
            "      tag: a\n",
            '      tag: "$<inputs.r>"\n    guards:\n      - {param: tag, one_of: ["$<inputs.r>"]}\n',
        ).replace("available_tools:", "inputs:\n  r: a\navailable_tools:"),
        "",
        ("refused", "E_REF_INVALID", ""),
    ),
    "gref-pte-matches:refused": (
        "p.yml",
        PTE.replace(
            "      tag: a\n",
            '      tag: "$<inputs.r>"\n    guards:\n      - {param: tag, matches: "$<inputs.p>"}\n',
        ).replace("available_tools:", 'inputs:\n  r: a\n  p: "^a$"\navailable_tools:'),
        "",
        ("refused", "E_REF_INVALID", ""),
    ),
    # held: a reference in a guard's `max` is no number
    "gref-pte-max:refused": (
        "p.yml",
        PTE.replace(
            "      tag: a\n",
            '      tag: "$<inputs.r>"\n    guards:\n      - {param: tag, max: "$<inputs.n>"}\n',
        ).replace("available_tools:", "inputs:\n  r: a\n  n: 5\navailable_tools:"),
        "",
        ("refused", "E_SCHEMA_INVALID", r"valid number"),
    ),
    # md-fence-in-descriptive-text: a fenced block in `## Objective` (plan.task, hashed) is
    # not the text a forge shows: ``` glues its info string to the code, ~~~ keeps its fences
    "fence-obj-backtick:shown": (
        "p.md",
        MD.replace("Record a tag\n", "Record a tag\n\n```bash\nrm -rf /tmp/x\n```\n"),
        "",
        ("task", "Record a tag\n\nrm -rf /tmp/x", ""),
    ),
    "fence-obj-tilde:shown": (
        "p.md",
        MD.replace("Record a tag\n", "Record a tag\n\n~~~ python extra\nprint(1)\n~~~\n"),
        "",
        ("task", "Record a tag\n\nprint(1)", ""),
    ),
    # held: an indented code block is its text
    "fence-obj-indented:shown": (
        "p.md",
        MD.replace("Record a tag\n", "Record a tag\n\n    indented code\n"),
        "",
        ("task", "Record a tag\n\nindented code", ""),
    ),
    # held: unknown fields are refused at their place; descriptive ones kept in metadata
    "unk-toon-top:refused": (
        "p.toon",
        _tv("1") + "notes: DANGER\n",
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"no PLAN\.yml equivalent"),
    ),
    "unk-toon-step:refused": (
        "p.toon",
        _toon_params("      tag: a\n").replace(
            "    parameters:\n", "    note: DANGER\n    parameters:\n"
        ),
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"no PLAN\.yml equivalent"),
    ),
    "unk-toon-task-gate:refused": (
        "p.toon",
        _tv("1").replace(
            "tasks[1]{id,name}:\n  task_1,N\n",
            "tasks[1]{id,name,requires_approval}:\n  task_1,N,true\n",
        ),
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"no PLAN\.yml equivalent"),
    ),
    "unk-toon-config:refused": (
        "p.toon",
        _tv("1") + "  dry_run: true\n",
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"no PLAN\.yml equivalent"),
    ),
    "unk-toon-metadata:kept": (
        "p.toon",
        _tv("1").replace("  objective: O\n", "  objective: O\n  reviewer_note: DANGER\n"),
        "",
        ("kept", "DANGER", ""),
    ),
    "unk-md-task-fields:kept": (
        "p.md",
        MD.replace(
            "- **Steps**: step_1\n",
            "- **Steps**: step_1\n- **Tools**: DANGER\n- **Estimated Time**: 5m\n",
        ),
        "",
        ("kept", "DANGER", ""),
    ),
    "unk-md-step-type:refused": (
        "p.md",
        MD.replace("- **Timeout**: 30s\n", "- **Timeout**: 30s\n- **Type**: DANGER\n"),
        "",
        ("refused", "E_SCHEMA_INVALID", r"unknown step_type"),
    ),
    "unk-md-config:refused": (
        "p.md",
        MD + "- DANGER Mode: on\n",
        "",
        ("refused", "E_CONVERT_UNSUPPORTED", r"known:"),
    ),
    # held: numbers at the edge of the canonical form, markdown shared-input bullets
    "num-md-05:string": ("p.md", _mdin("- n: 05"), "", ("input", "n", "05")),
    "num-md-hex:string": ("p.md", _mdin("- n: 0x10"), "", ("input", "n", "0x10")),
    "num-md-underscore:string": ("p.md", _mdin("- n: 1_000"), "", ("input", "n", "1_000")),
    "num-md-yes:string": ("p.md", _mdin("- n: yes"), "", ("input", "n", "yes")),
    "num-md-tilde:string": ("p.md", _mdin("- n: ~"), "", ("input", "n", "~")),
    "num-md-date:string": ("p.md", _mdin("- n: 2026-01-01"), "", ("input", "n", "2026-01-01")),
    "num-md-comment:string": ("p.md", _mdin("- n: x # c"), "", ("input", "n", "x # c")),
    "num-md-minus0:zero": ("p.md", _mdin("- n: -0"), "", ("input", "n", 0)),
    "num-md-150:number": ("p.md", _mdin("- n: 1.50"), "", ("input", "n", 1.5)),
    "num-md-2p53:refused": (
        "p.md",
        _mdin("- n: 9007199254740993"),
        "",
        ("refused", "E_SCHEMA_INVALID", r"2\^53"),
    ),
    "num-md-1e400:refused": (
        "p.md",
        _mdin("- n: 1e400"),
        "",
        ("refused", "E_SCHEMA_INVALID", r"not finite"),
    ),
    "num-md-tiny:refused": ("p.md", _mdin("- n: 1e-400"), "", ("refused", "E_SCHEMA_INVALID", r"")),
    # held: TOON numbers (the TOON grammar: other spellings are strings)
    "tn-plus:string": ("p.toon", _tv("+5"), "", ("param", "v", "+5")),
    "tn-dot5:string": ("p.toon", _tv(".5"), "", ("param", "v", ".5")),
    "tn-5dot:string": ("p.toon", _tv("5."), "", ("param", "v", "5.")),
    "tn-minusdot:string": ("p.toon", _tv("-.5"), "", ("param", "v", "-.5")),
    "tn-00:string": ("p.toon", _tv("00"), "", ("param", "v", "00")),
    "tn-minus05:string": ("p.toon", _tv("-05"), "", ("param", "v", "-05")),
    "tn-TRUE:string": ("p.toon", _tv("TRUE"), "", ("param", "v", "TRUE")),
    "tn-True:string": ("p.toon", _tv("True"), "", ("param", "v", "True")),
    "tn-Null:string": ("p.toon", _tv("Null"), "", ("param", "v", "Null")),
    "tn-E2:hundred": ("p.toon", _tv("1E+2"), "", ("param", "v", 100)),
    "tn-minus0:zero": ("p.toon", _tv("-0.0"), "", ("param", "v", 0)),
    "tn-1e23:float": ("p.toon", _tv("1e23"), "", ("param", "v", 1e23)),
    "tn-max:float": (
        "p.toon",
        _tv("1.7976931348623157e308"),
        "",
        ("param", "v", 1.7976931348623157e308),
    ),
    "tn-digits:refused": (
        "p.toon",
        _tv("0.10000000000000001"),
        "",
        ("refused", "E_SCHEMA_INVALID", r"no exact double"),
    ),
    "tn-denormal:refused": (
        "p.toon",
        _tv("4.9406564584124654e-324"),
        "",
        ("refused", "E_SCHEMA_INVALID", r"no exact double"),
    ),
    "tn-overflow:refused": (
        "p.toon",
        _tv("2e308"),
        "",
        ("refused", "E_SCHEMA_INVALID", r"not finite"),
    ),
    "tn-2p53:refused": (
        "p.toon",
        _tv("123456789012345678"),
        "",
        ("refused", "E_SCHEMA_INVALID", r"2\^53"),
    ),
}

#: A PLAN.yml whose values TOON quotes or escapes (``show --format toon`` must decode to ``json``)
SHOW_TOON = """\
plan:
  name: "n"
  task: "t"
  status: pending_approval
inputs:
  a: "05"
  b: "true"
  c: "-"
  d: ""
  e: " lead"
  f: "trail "
  g: "a,b"
  h: "[1]"
  i: "- x"
  j: "null"
  k: 1.5e+300
  l: "1e3"
  m: "#x"
  n: "a: b"
  o: "\\"q\\""
  p: "x\\\\y"
  q: ["", " ", "-"]
  r: [{a: 1, b: [1, 2]}, {a: 2}]
  s: {"": 1}
  t: "\\u00e9"
  u: [[1, 2], []]
  v: {}
  w: -0.0
  x: 123.456e-10
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "w"
    params: {tag: "t", "a b": 1, "a,b": 2, "a:b": 3, "[x]": 4, "-": 5, "#": 6, "1": 7, "true": 8, "x.y": {"k.l": 1}}
"""

#: MCP ``validate`` id -> the CONVERT id whose text it sends
MCP: dict[str, str] = {
    "mcp-pre:two-steps-or-refused": "pre-step:kept",
    "mcp-deep:located": "deep-pc-args:located",
    "mcp-cs:rendered": "cs-input-word:rendered",
    "mcp-inref:refused": "inref-pc:refused",
    "mcp-ok:valid": "cs-params-single:rendered",
}

# -- the daemon -----------------------------------------------------------------------------

#: slug -> (inputs block, the ``x`` param, what the tool must get as ``x``, or None: never run)
DAEMON_YML: dict[str, tuple[str, str, Any]] = {
    "d-inref-name": ('  r: "$<plan.name>"\n', "$<inputs.r>", None),
    "d-inref-embedded": ('  r: "$<plan.name>"\n', "v=$<inputs.r>", None),
    "d-inref-secret": ('  r: "$<secrets.TOKEN>"\n', "$<inputs.r>", None),
    "d-inref-nested": ('  r: {k: ["$<plan.name>"]}\n', "$<inputs.r>", None),
    "d-inref-plain": ('  r: "plain"\n', "$<inputs.r>", "plain"),
}
DAEMON_SRC: dict[str, tuple[str, str]] = {
    "d-deep": ("PLAN.json", _pc('{"tag": "dd", "d": ' + _nest(120) + "}")),
    "d-cs": (
        "PLAN.md",
        md("dcs")
        .replace(INPUT, INPUT + "- n: `cs-val`\n")
        .replace('{"tag": "dcs-ok"}', '{"tag": "dcs", "x": "$<inputs.n>"}'),
    ),
    "d-pre": (
        "PLAN.md",
        md("dpre").replace(TITLE, TITLE + "\n" + STEP2.replace("DANGER", "dpre-2")),
    ),
    "d-ok": (
        "PLAN.md",
        md("dok").replace('{"tag": "dok-ok"}', '{"tag": "dok", "x": "$<inputs.to>"}'),
    ),
}


def _convert(lab: Lab, folder: Path, name: str, content: str, fmt: str) -> dict[str, Any]:
    path = folder / name
    path.write_bytes(content.encode("utf-8"))
    told = ["--from", fmt] if fmt else []
    done = lab.cli("convert", *told, str(path), cwd=folder)
    got: dict[str, Any] = {"rc": done.returncode, "err": done.stderr[-2000:], "plan": None}
    got["out"] = done.stdout
    if done.stdout.strip():
        try:
            got["plan"] = load_yaml(done.stdout)
        except Exception:  # a bad text is the finding, kept raw
            got["plan"] = {"raw": done.stdout}
    return got


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    jobs = list(CONVERT.items())

    def one(i: int) -> None:
        vid, (name, content, fmt, _) = jobs[i]
        folder = root / "src" / f"v{i}"
        folder.mkdir(parents=True)
        got[vid] = _convert(lab, folder, name, content, fmt)

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(one, range(len(jobs))))
    # part 1a: show --format toon/json of a plan outside the repo (the renderer alone)
    spot = root / "showtoon" / "plans" / "x"
    spot.mkdir(parents=True)
    (spot / "PLAN.yml").write_text(SHOW_TOON, encoding="utf-8")
    got["show"] = {
        fmt: lab.cli("show", "--format", fmt, str(spot / "PLAN.yml"), cwd=spot).stdout
        for fmt in ("json", "toon")
    }
    # part 1b: MCP validate of the same texts (one session)
    mcp = {vid: CONVERT[src][1] for vid, src in MCP.items()}
    replies = answers(lab, [("validate", {"plan": text}) for text in mcp.values()])
    got["mcp"] = {}
    for vid, reply in zip(mcp, replies, strict=True):
        result = reply.get("result") or {}
        got["mcp"][vid] = result.get("structuredContent") or {"raw": json.dumps(reply)[:2000]}
    # part 2: the daemon
    for slug, (inputs, x, _) in DAEMON_YML.items():
        text = plan_text(slug, params=f'x: "{x}"\n')
        lab.write(slug, text.replace("available_tools:", "inputs:\n" + inputs + "available_tools:"))
    for slug, (name, text) in DAEMON_SRC.items():
        lab.put(f"plans/{slug}/{name}", text)
    lab.commit("agent: plans")
    got["pass"] = lab.run(check=False).returncode
    got["rows1"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    got["shown"] = {}
    for slug in DAEMON_YML:
        shown = lab.cli(
            "show", "--config", str(lab.config), str(lab.repo / "plans" / slug / "PLAN.yml")
        )
        got["shown"][slug] = shown.stdout + shown.stderr
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans")
    for slug in DAEMON_YML:
        lab.set_status(slug, "approved")
    for slug in DAEMON_SRC:
        if f"plans/{slug}/PLAN.yml" in got["tree"]:
            approve_file(lab, slug)
    lab.commit("approve the plans", ALICE)
    got["pass2"] = lab.run(check=False).returncode
    got["rows"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r116-sources-atk116c", _build)


DEEP_WHY = "a converted plan YAML cannot read back (a value nested over 100 levels, over max_plan_bytes) is refused as 'a lone surrogate or another character YAML cannot carry', with no location"
CS_WHY = "a shared input wholly in a code span reaches the plan with its backticks; a forge shows it without"
INREF_WHY = "reference text where nothing resolves it (a plan's static inputs, a guard's one_of/matches) is accepted: the tool gets, or the guard compares, the literal text a reviewer reads as a reference"
PRE_WHY = "what stands between the `# Title` and the first `##` section (prose, a gate bullet, a fenced block, a whole `### Step 2` record) converts to nothing, silently"
OBJ_WHY = "a `### Step 2` record under `## Objective` converts into plan.task text, not refused as under any other text section"
OV_WHY = "an Agent Plan wrapped twice, {plan: {plan: ...}, overlays: ...}, converts with its outer overlays in no field: not mapped, not in metadata.source, not refused"
EMPTY_WHY = "an empty or blank required text (goal, title, tool, step_id, description, action) is refused 'expected a string, got a string', and the remedy sends the author back to that message"
FENCE_WHY = "a fenced block in `## Objective` converts into plan.task as other text than a forge shows: a ``` block's info string glued to its code ('bash rm -rf /tmp/x'), a ~~~ block with its fences and info string"
#: every class the round found was fixed the same day (fix116m: the markdown reader;
#: fix116s: depth and size at the source, reference text, overlays, empty texts): the ids
#: above pass and keep watch
BROKEN: dict[str, Any] = {}


def _p(plan: dict[str, Any] | None) -> dict[str, Any]:
    return ((plan or {}).get("actions") or [{}])[0].get("params") or {}


@pytest.mark.parametrize("vid", cases(list(CONVERT), list(CONVERT), BROKEN))
def test_convert(lab: Lab, vid: str) -> None:
    """Refused with its code, at its place, naming the real cause; or converted to exactly
    the value the source shows."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    kind, key, want = CONVERT[vid][3]
    assert "internal error" not in got["err"] and "Traceback" not in got["err"], got["err"]
    if kind == "task":  # plan.task is exactly the text a forge shows
        assert got["rc"] == 0 and got["plan"], got["err"]
        assert got["plan"]["plan"]["task"] == key, got["plan"]["plan"]
        return
    if kind == "kept":  # in the converted plan's text, or refused at a place
        if got["rc"] == 0:
            assert key in got["out"], f"converted without {key!r}: {got['out'][:1500]}"
            return
        assert got["rc"] == 1 and re.search(r"\bE_[A-Z_]+", got["err"]), got
        assert re.search(r"(line \d+|:\d+:)", got["err"]), got["err"]
        return
    if kind.startswith("refused"):
        assert got["rc"] == 1, got
        assert re.search(r"\b" + key, got["err"]), got["err"]
        assert re.search(want, got["err"]), got["err"]
        if kind == "refused":  # "refused-file": the whole file, no place to name
            assert re.search(r"(line \d+|:\d+:| at [a-z_]+[\[.:])", got["err"]), got["err"]
        return
    assert got["rc"] == 0 and got["plan"], got["err"]
    where = _p(got["plan"]) if kind == "param" else got["plan"].get("inputs") or {}
    assert key in where, where
    # numbers as PLAN.yml's reader reads them (100.0 is 100); strings and flags exactly
    assert where[key] == want, where
    if isinstance(want, (str, bool)) or where[key] is None:
        assert type(where[key]) is type(want), where


_RAN = [
    f"{slug}:{'ran' if want is not None else 'refused'}"
    for slug, (_, _, want) in DAEMON_YML.items()
]


@pytest.mark.parametrize("vid", cases(_RAN, [s.split(":")[0] for s in _RAN], BROKEN))
def test_daemon_inputs_reference_text(lab: Lab, vid: str) -> None:
    """A PLAN.yml whose static inputs hold reference text is refused E_REF_INVALID and never
    runs; a plain input runs once with its value."""
    slug = vid
    want = DAEMON_YML[slug][2]
    calls = lab.calls(slug)
    row = lab.got["rows"].get(f"plans/{slug}", {})  # type: ignore[attr-defined]
    if want is None:
        assert calls == [], calls
        assert "E_REF_INVALID" in json.dumps(row), row
        return
    assert len(calls) == 1, calls
    assert json.loads(calls[0]["stdin"])["x"] == want, calls


@pytest.mark.parametrize("vid", cases(["d-deep:row-located"], ["d-deep"], BROKEN))
def test_daemon_deep_source_row(lab: Lab, vid: str) -> None:
    """A committed source nested too deep is not converted, and its row names the depth."""
    tree = lab.got["tree"]  # type: ignore[attr-defined]
    assert "plans/d-deep/PLAN.yml" not in tree, tree
    assert lab.calls("dd") == []
    row = lab.got["rows1"].get("plans/d-deep", {})  # type: ignore[attr-defined]
    assert re.search(DEEP, json.dumps(row)), row
    # the place it names is in the source (PLAN.json is one line long)
    lines = len(DAEMON_SRC["d-deep"][1].splitlines())
    for where in re.findall(r"PLAN\.json:(\d+)", json.dumps(row)):
        assert int(where) <= lines, (
            f"PLAN.json has {lines} line(s), the row names line {where}: {row}"
        )


@pytest.mark.parametrize(
    "slug, tag, want",
    cases(
        ["d-cs:ran-rendered", "d-ok:ran-once"],
        [("d-cs", "dcs", "cs-val"), ("d-ok", "dok", "ok@example.com")],
        BROKEN,
    ),
)
def test_daemon_markdown_input(lab: Lab, slug: str, tag: str, want: str) -> None:
    """A committed PLAN.md converts, is approved and runs once with the value a forge shows."""
    assert f"plans/{slug}/PLAN.yml" in lab.got["tree"]  # type: ignore[attr-defined]
    calls = lab.calls(tag)
    assert len(calls) == 1, calls
    assert json.loads(calls[0]["stdin"])["x"] == want, calls


@pytest.mark.parametrize("vid", cases(["d-pre:all-steps-or-refused"], ["d-pre"], BROKEN))
def test_daemon_preamble_step(lab: Lab, vid: str) -> None:
    """A committed PLAN.md whose ``### Step 2`` record stands under the title is refused (its
    row names the code and line), or converts with both steps; never a one-step plan that
    Alice's approval runs while the diff she reviewed shows two."""
    tree = lab.got["tree"]  # type: ignore[attr-defined]
    if f"plans/{vid}/PLAN.yml" not in tree:
        row = lab.got["rows1"].get(f"plans/{vid}", {})  # type: ignore[attr-defined]
        assert "E_CONVERT_UNSUPPORTED" in json.dumps(row), row
        assert lab.calls("dpre-ok") == []
        return
    plan = lab.plan(vid)
    assert [a.get("params", {}).get("tag") for a in plan["actions"]] == ["dpre-ok", "dpre-2"], plan[
        "actions"
    ]


@pytest.mark.parametrize("vid", cases(list(MCP), list(MCP), BROKEN))
def test_mcp_validate(lab: Lab, vid: str) -> None:
    """MCP ``validate`` reads each text as ``convert`` should: refused with a code at a place
    in the text sent, or valid with exactly what the text shows."""
    got = lab.got["mcp"][vid]  # type: ignore[attr-defined]
    assert "valid" in got, got
    plan = load_yaml(got["plan_yml"]) if got.get("plan_yml") else None
    if vid == "mcp-pre:two-steps-or-refused":
        if got["valid"]:
            assert plan and len(plan["actions"]) == 2, plan
        return
    if vid == "mcp-deep:located":
        assert not got["valid"], got
        err = got["errors"][0]
        lines = len(CONVERT[MCP[vid]][1].splitlines())
        # a JSON source's place is its path (docs/formats.md: "markdown sources also give
        # the line"); a line, when given, is one of the text sent (fix116s)
        assert err.get("line") is None or err["line"] <= lines, err
        assert err.get("line") is not None or err.get("path"), err
        assert re.search(DEEP, err["message"]), err
        for where in re.findall(r"<plan>:(\d+)", err["message"]):
            assert int(where) <= lines, (
                f"the text has {lines} line(s), the message names {where}: {err}"
            )
        return
    if vid == "mcp-cs:rendered":
        assert got["valid"] and plan and plan["inputs"]["n"] == "x", plan
        return
    if vid == "mcp-inref:refused":
        assert not got["valid"], got
        assert got["errors"][0]["code"] == "E_REF_INVALID", got["errors"]
        return
    assert got["valid"] and plan and _p(plan) == {"tag": "cs"}, got


@pytest.mark.parametrize("vid", ["show-toon:decodes-to-json"])
def test_show_toon_decodes_to_json(lab: Lab, vid: str) -> None:
    """``show --format toon`` of values TOON must quote (``"05"``, ``"true"``, ``"-"``, ``""``,
    edge blanks, delimiters, keys with ``.``/``,``/``:``/``#``) decodes to the ``json`` output."""
    import toon_format

    shown = lab.got["show"]  # type: ignore[attr-defined]
    data = json.loads(shown["json"])
    assert data["inputs"]["a"] == "05" and data["actions"][0]["params"]["x.y"] == {"k.l": 1}, data
    assert toon_format.decode(shown["toon"]) == data
