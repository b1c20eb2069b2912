"""Round 125, the agent's surfaces (atk125b): ``plangate schema`` (plain and ``--config``)
against ``plangate validate`` (plain and ``--config``) and MCP ``validate``; MCP ``submit`` of
plans carrying records or an approved status, and beside a ``plangate run`` daemon executing
a plan, through the official ``mcp`` SDK client (``mcp.client.stdio``); raw JSON-RPC lines
nested deep (written on the server's stdin, as docs/agents.md's ``printf ... | plangate mcp``
client does: the SDK client's own serializer refuses arguments nested a few hundred deep,
``ValueError: Maximum serialization depth exceeded``). An outsider's attack: the CLI, git and
the docs only.

Lab A (module scope, local mode, ``agent.identity`` Agent, approvers Alice and
``*@ops.example.com``; catalog ``chk`` (echo, idempotent, low risk), ``typed`` (echo with a
``params_schema``: ``n`` integer 0..10 required, ``s`` ``^[a-z]+$`` up to 8, ``l`` up to 3
integers, ``e`` enum, ``o`` an object with ``k``; nothing else), ``rec``):

1. 63 plan variants, edits of one plan using most documented fields (inputs, a precondition,
   guards, outputs, a reference, retry, verify, a fallback, limits), each written as PLAN.yml
   (a block mapping, one top-level key a line). Each is judged by the JSON Schema ``plangate
   schema`` prints (jsonschema's Draft 2020-12 validator) and by ``plangate validate --json``,
   without a config, and with the lab's config (``schema --config``, ``validate --config``);
   and by MCP ``validate`` (the server's catalog).
2. MCP ``submit`` (one SDK session, one call after another, HEAD and branches around each) of
   plans carrying an ``approval:`` block naming Alice, an ``execution:`` block, ``status:
   approved`` plainly, through an anchor, a ``!!str`` tag or a duplicate key, ``executing``,
   ``completed``; a ``frozen:`` block with a zero hash and a ``validation:`` block (dropped, as
   docs/formats.md says of ``pte``); a plan with a legacy ``${inputs.num}`` in ``typed``'s
   integer param. A pass; Alice approves the two taken ones; a pass.
3. Seven raw sessions: a ``submit`` of a fresh plan, then one line nested 400, 1000 or 3000
   arrays deep (bare), a ``tools/call`` whose extra argument is nested 1000 or 5000 deep, or
   whose ``id`` is, a ``ping`` whose params are; then a ``status``. Seven more: one odd line
   (an ``id``, a ``timeout`` or a bare number of 5,001 digits, a lone surrogate or NUL in
   ``plan``, two ``id`` keys, ``NaN``), then a ``status``.

Lab D (local mode, a ``plangate run`` daemon with ``ui`` on 127.0.0.1): the agent submits
``slowp`` (the exec tool ``gate`` records its call, then waits for a file the test writes); a
pass freezes it; Alice approves; the daemon starts it. While the tool waits, one SDK session:
``status``, ``submit`` of a new version over ``slowp`` (plain and ``pull_request: true``),
``submit`` of the same text as ``slowp-copy``, of a new ``side``, ``log``, ``wait`` from
``pending_approval``; the page's ``/api/plan/plans/slowp`` and ``/api/`` and MCP ``status``
while it runs. The gate opens; ``wait`` from ``executing`` and ``log``; the daemon freezes the
two new plans and is stopped (SIGTERM to its pid); ``plangate audit``.

Ids (177):

- ``sch:*`` (63): the schema's verdict is ``validate``'s, plain and with the catalog (controls:
  float and bool ids, bounds of ``timeout``/``retry``/``interval``/``backoff``, durations,
  statuses, empty names, versions 0 and 1, output and input names, fallback ids, guards,
  ``expect``, ``needs`` items, ``typed`` params with wrong types, extra keys, ``$<...>`` for a
  whole param, an item, an object, inside text, ``$$<`` text, ``${HOME}`` and ``${secrets.X}``
  (no legacy reference: text), a fallback step's params, a check tool that is not
  idempotent, ``approval:``/``execution:`` blocks).
- ``mcpv:*`` (63): MCP ``validate`` answers each variant as ``validate --config`` does (valid
  and the codes; a plan carrying an ``approval:`` or ``execution:`` block is refused
  ``E_CONVERT_UNSUPPORTED`` as ``submit`` refuses it), every error coded with a remedy.
- ``submit`` refusals (8): coded, nothing committed, no folder, no branch; taken (2): the
  controller's freeze replaces the agent's block (its own hash), nothing ran before Alice, her
  approval ran each once; the legacy plan's answered hash is the hash frozen; the tree clean.
- ``deep:*`` (7 + 7): the session answers the ``submit`` before the deep line and the
  ``status`` after it with no internal error; nothing is left half-written (no
  ``index.lock``, no index note, a commit only the whole submission's).
- ``odd:*`` (7): the odd line is answered (``-32700``/``-32600`` or a coded tool answer) and
  so is the ``status`` after it, no internal error.
- Lab D (15): ``status`` says ``executing``; ``submit`` over the running plan (plain and as a
  pull request) ``E_ILLEGAL_TRANSITION``, nothing moved; the copy and ``side`` committed
  ``pending_approval``; ``log`` is the controller's ``executing``; ``wait`` from pending
  answers ``executing`` at once, from ``executing`` ``completed`` with the output; only
  ``slowp`` ran, once; the copy and ``side`` frozen and waiting for a person; no branch, a
  clean tree; the audit calls only ``slowp``'s run valid; ``/api/plan/plans/slowp`` says
  ``executing`` while it runs (and it ran once) and ``completed`` after, the copy
  ``pending_approval``, as MCP ``status`` says.

Seen (round 125: 177 ids, 156 passed, 21 xfailed (strict); 40-75 s wall at -n 1 on this
loaded machine). 4 classes:

- **schema-silent-on-plan-version** (2 ids, ``sch:version-2``, ``sch:version-1e300``), fails
  closed (an agent writing to the schema is told its plan is fine, ``validate`` refuses it):
  ``plan: {version: 2}`` (or ``1e300``): the schema's ``PlanHeader.version`` is ``minimum: 1``
  with no maximum, so ``plangate schema`` (and ``--config``) accepts it; ``validate`` says
  ``E_PLAN_VERSION_UNSUPPORTED`` "format version 2 is newer than this plangate supports (1)"
  (for ``1e300``: ``E_SCHEMA_INVALID`` "Input should be a valid integer"). docs/plan-format.md:
  "The schema refuses every shape ``validate`` refuses where JSON Schema can say it" (a
  ``maximum: 1`` or ``const: 1`` says it), and the field table: "only ``1`` exists"; the
  schema's description does not name the rule.
- **schema-silent-on-safe-integer-range** (3 ids, ``sch:max-actions-1e20``,
  ``sch:max-tool-calls-1e300``, ``sch:id-1e300``), fails closed: ``limits.max_actions:
  100000000000000000000``, ``limits.max_tool_calls: 1e+300`` and an action's ``id: 1e+300`` are
  integers to JSON Schema (``type: integer, minimum: 1``, no maximum): the schema accepts them,
  ``validate`` refuses them ``E_SCHEMA_INVALID`` ("integer beyond ±(2^53-1) loses precision" /
  "Input should be a valid integer (got 1e+300)"). docs/plan-format.md: integers within
  ±(2^53−1), and "The schema refuses every shape ``validate`` refuses where JSON Schema can say
  it" (a ``maximum`` on each integer field says it); the schema's description does not list it
  among what only ``validate`` checks. (The same refusal of a huge integer in free
  ``params``/``inputs`` values is not asserted: JSON Schema cannot tell ``1e20`` the float from
  the integer; nor ``limits.max_runtime`` or a guard's bounds, ``type: number``.)
- **schema-config-refuses-legacy-reference** (10 ids, ``sch:legacy-n``, ``sch:legacy-s``,
  ``sch:legacy-obj``, ``sch:legacy-item``, ``sch:legacy-whole-list``, ``sch:legacy-enum``,
  ``sch:legacy-plan-name``, ``sch:legacy-approval-by``, ``sch:legacy-embedded``,
  ``sch:legacy-output``), fails closed: a legacy reference in an action's params of a catalog
  tool with a ``params_schema`` (``n: "${inputs.num}"`` for an integer, ``"${inputs.who}"``
  against a ``pattern`` or an ``enum``, ``"${inputs.obj}"`` for an object, an item of an
  integer list, ``${plan.name}``, ``${approval.approved_by}``, ``a${inputs.who}``,
  ``${actions[1].outputs.o}``) is checked by ``plangate schema --config`` as the literal
  string ("is not valid under any of the given schemas"), while ``validate --config`` and MCP
  ``validate`` read it as the reference it is and say ``valid: true`` (MCP ``submit`` commits
  it, rewritten to ``$<...>``). docs/agents.md: ``plangate schema --config`` gives "the same
  rules as ``validate --config`` for every tool call ..., a ``$<...>`` reference standing for
  any value at any depth"; docs/plan-format.md: legacy ``${inputs.x}``, ``${plan.x}``,
  ``${approval.x}``, ``${actions[N].outputs.x}`` in action params are references, "``plangate
  validate`` checks such a plan as if converted". (A fallback step's legacy reference is
  refused by both: ``sch:fallback-typed-legacy`` agrees.)
- **mcp-deep-line-kills-session** (6 ids, ``deep:array-1000``, ``deep:array-3000``,
  ``deep:args-1000``, ``deep:args-5000``, ``deep:id-3000``, ``deep:ping-params-3000``), fails
  closed (a crash of the surface): one JSON-RPC line nested about 1000 levels or more (a bare
  ``[[[...]]]``, or a well-formed ``tools/call`` whose extra argument or ``id`` is nested so,
  or a ``ping``'s ``params``) makes ``plangate mcp`` print ``plangate: internal error:
  ExceptionGroup: unhandled errors in a TaskGroup`` and exit: no reply to the line, none to the
  ``submit`` sent BEFORE it (never committed either) nor to the ``status`` after it. 400 levels
  is answered ``-32700`` and the session goes on (``deep:array-400`` passes). docs/agents.md:
  "A line that is no JSON gets ... -32700 ... and the session goes on"; "Every request read
  before stdin closes is answered before the server exits"; the property: no surface crashes,
  every error coded. Repro: ``printf '%s\\n' <initialize> <initialized> "$(python3 -c
  'print("["*3000+"]"*3000)')" | plangate mcp --config plangate.yml``.

Fixed (2026-12-07, fix126c): the three schema classes. Cause: the JSON Schema ``plangate
schema`` prints is generated from the pydantic models, which did not carry two of
``validate``'s rules, and the ``--config`` schema had one reference rule for every tool call
while ``validate`` converts legacy ``${...}`` references in an action's params only. Fix:
``PlanHeader.version`` is ``le=SUPPORTED_VERSION`` (the schema's ``maximum: 1``); every
integer field the models have is bounded ±(2^53−1) by the schema generator
(``schema._PlanJsonSchema.int_schema``, ``shape.MAX_SAFE_INT``, the constant
``plans.non_json_problems`` reads), a field added later too; an action's params are checked
by ``$defs/action.<name>`` (``catalog._action_defs``, ``_CALLERS``' reading kind), whose
reference is ``shape.ACTION_REFERENCE_VALUE``: ``$<...>`` or a legacy reference the freeze
carries whole (``shape.LEGACY_REF_IN_TEXT``), while a fallback step's and a check's params
keep ``$defs/tool.<name>`` (``$<...>`` only, as ``validate`` reads them). Tests:
tests/plan/test_schema_agrees.py (versions, integers past 2^53 in every integer field, legacy
references in an action's params, a fallback step's, a check's, a verify's; every integer
node bounded), tests/plan/test_catalog.py (the action form's own ``$id``s and anchors),
tests/plan/test_refs.py (hypothesis: the pattern, as Python and as ECMA-262 read it, holds
exactly where the converted text holds a reference). The fifteen ids pass. Of the "seen"
notes: MCP ``validate``'s remedy for an ``approval:``/``execution:`` block is now "delete the
block and submit again" (``convert.pte._REMOVE_BLOCK``), not "write PLAN.yml by hand".

Fixed (2026-12-07, fix126m): mcp-deep-line-kills-session. Cause: the server's own read of
each line (``mcpserver._has_odd_id``, ``json.loads`` before the SDK) raised ``RecursionError``
on a line ~1000 deep, outside any per-line handling, and the exception ended the stdio task
group (the SDK's reader itself gives up near 200 levels, ``-32700``). Fix: every line is
measured before any parser reads it, without recursion (``controller/service/rpclines.py``,
``screen``: at most ``MAX_DEPTH`` 128 levels, JSON numbers of at most ``MAX_NUMBER_CHARS``
1000 characters); a line past a bound is answered ``-32700`` saying why ("Parse error: nested
deeper than 128 levels" / "... a number longer than 1000 characters", so the 500-deep and
5,001-digit lines of "Seen but not asserted" now say why), with the request's ``id`` when the
top object shows a string or integer one beside a string ``method``; a line longer than
``MAX_LINE_CHARS`` (6 x 4 MiB + 64 KiB) is never held whole (``mcpserver._RequestLines``:
the rest read and dropped), ``-32700`` saying so. A failure in the
server's handling of one line or reply costs that line alone (``mcpserver._refusal_of``,
``_answered_here``: ``-32603``; ``_writable``: a reply that cannot be written as JSON, and a
handler exception the SDK answers with code 0, are ``-32603``). docs/agents.md says so. Tests:
this module's 6 ``deep:*`` ids, ``tests/service/test_mcp_lines.py``,
``tests/service/test_rpclines.py``.

Held: every other variant gets one verdict from the schema and ``validate`` (plain and with
the catalog), and MCP ``validate`` equals ``validate --config`` on the rest with coded errors;
a submission carrying ``approval:``/``execution:`` is ``E_CONVERT_UNSUPPORTED``, an approved,
executing or completed status ``E_ILLEGAL_TRANSITION`` (remedy: "approval is a human's
commit"), an anchor, a tag or a duplicate ``status`` key ``E_YAML_PARSE``: nothing committed,
no folder, no branch; an agent-written ``frozen:`` (zero hash) or ``validation:`` block is
dropped and the controller freezes its own hash, nothing runs before Alice and her approval
runs each once; the legacy plan's answered hash is the frozen one; the deep lines leave no
``index.lock``, no half-written submission and a clean tree. Beside a running daemon: the
running plan cannot be replaced (plain or pull request), the same version under a new slug
waits for a person, MCP ``status``/``log``/``wait`` follow the controller, the audit agrees.

Seen but not asserted: MCP ``validate`` refuses a PLAN.yml carrying an ``approval:`` or
``execution:`` block (``E_CONVERT_UNSUPPORTED``, its remedy "change the source ..., or write
PLAN.yml by hand") where ``validate`` and the schema say valid; a PLAN.yml submitted with a
``frozen:``/``validation:`` block or a legacy ``${...}`` is read as ``pte`` and committed
rewritten (flow style, a "Converted by plangate mcp ``submit``" header), not "as is, comments
kept"; ``plangate hash`` of that legacy PLAN.yml prints another hash than the one frozen (the
rewrite happens at freeze); a JSON-RPC line 500 deep, or with a 5,001-digit number, is
answered ``-32700`` "Parse error" though it is JSON.

Not tried: webhook floods while a plan runs (remote mode); the page's ``/api/`` with hostile
names; remote mode with the agent pushing to controller-owned refs.
"""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared
from writerkit import free_port

PLANGATE = str(Path(sys.executable).with_name("plangate"))
AGENT_CFG = (
    "agent:\n  identity: {name: Agent, email: agent@example.com}\n  branch_prefix: plangate/\n"
)
TOOLS = """\
chk: {kind: echo, idempotent: true, risk: low}
typed:
  kind: echo
  params_schema:
    type: object
    properties:
      n: {type: integer, minimum: 0, maximum: 10}
      s: {type: string, maxLength: 8, pattern: "^[a-z]+$"}
      l: {type: array, items: {type: integer}, maxItems: 3}
      e: {enum: [a, b]}
      o: {type: object, properties: {k: {type: string}}, required: [k], additionalProperties: false}
    required: [n]
    additionalProperties: false
"""

# -- 1. the schema and validate: one verdict per plan -----------------------------------------
#: A plan using most documented fields: a precondition, guards, outputs, a reference, retry,
#: verify, a fallback, limits. Written as PLAN.yml's block mapping, one top-level key a line.
BASE: dict[str, Any] = {
    "plan": {"name": "n", "task": "t", "status": "pending_approval"},
    "inputs": {"who": "ops", "num": 3, "obj": {"k": "x"}},
    "limits": {"max_actions": 5, "max_tool_calls": 20, "max_cost_usd": 1, "max_runtime": "15m"},
    "available_tools": [{"name": "chk"}, {"name": "typed"}],
    "preconditions": [{"tool": "chk", "params": {"x": 1}, "expect": {"path": "$.x", "equals": 1}}],
    "actions": [
        {
            "id": 1,
            "tool": "typed",
            "why": "w1",
            "params": {"n": 2, "s": "ab"},
            "outputs": [{"name": "o", "path": "$.n"}],
            "guards": [{"param": "n", "min": 0, "max": 5}],
            "timeout": 10,
            "on_failure": "retry",
            "retry": {"attempts": 2, "delay": 0, "max_delay": 1, "backoff": 1},
            "verify": {
                "tool": "chk",
                "params": {"y": 1},
                "expect": [{"path": "$.y", "equals": 1}],
                "timeout": 5,
                "interval": 1,
            },
        },
        {
            "id": 2,
            "tool": "chk",
            "why": "w2",
            "params": {"v": "$<actions[1].outputs.o>", "w": "$<inputs.who>"},
            "needs": [1],
            "on_failure": "fallback",
            "fallback": [{"id": "2.1", "tool": "chk", "why": "fb", "params": {}}],
            "requires_approval": True,
        },
    ],
}


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(d: dict[str, Any]) -> None:
        for p in path[:-1]:
            d = d[p]
        d[path[-1]] = value

    return edit


A1 = ["actions", 0]
TP = [*A1, "params"]
#: id -> an edit of BASE. Each: what the schema (``plangate schema``, and ``schema --config``)
#: says of the plan must be what ``validate`` (and ``validate --config``) says.
SCH: dict[str, Callable[[dict[str, Any]], None]] = {
    "base": lambda d: None,
    "id-float": _set([*A1, "id"], 1.0),
    "id-zero": _set([*A1, "id"], 0),
    "id-str": _set([*A1, "id"], "1"),
    "id-bool": _set([*A1, "id"], True),
    "timeout-zero": _set([*A1, "timeout"], 0),
    "timeout-86400": _set([*A1, "timeout"], 86400),
    "timeout-over": _set([*A1, "timeout"], 86400.5),
    "retry-101": _set([*A1, "retry", "attempts"], 101),
    "backoff-half": _set([*A1, "retry", "backoff"], 0.5),
    "interval-3601": _set([*A1, "verify", "interval"], 3601),
    "max-runtime-90s": _set(["limits", "max_runtime"], "90s"),
    "max-runtime-1.5h": _set(["limits", "max_runtime"], "1.5h"),
    "max-runtime-15mm": _set(["limits", "max_runtime"], "15mm"),
    "max-runtime-zero": _set(["limits", "max_runtime"], 0),
    "max-cost-neg": _set(["limits", "max_cost_usd"], -1),
    "status-draft": _set(["plan", "status"], "draft"),
    "status-caps": _set(["plan", "status"], "Pending_approval"),
    "name-empty": _set(["plan", "name"], ""),
    "why-empty": _set([*A1, "why"], ""),
    "version-1": _set(["plan", "version"], 1),
    "version-0": _set(["plan", "version"], 0),
    "out-name-dot": _set([*A1, "outputs", 0, "name"], "a.b"),
    "out-path-bare": _set([*A1, "outputs", 0, "path"], "a"),
    "input-key-space": _set(["inputs", "a b"], 1),
    "fallback-id-bad": _set(["actions", 1, "fallback", 0, "id"], "2.0"),
    "guard-empty": _set([*A1, "guards", 0], {"param": "n"}),
    "guard-one-of-empty": _set([*A1, "guards", 0], {"param": "n", "one_of": []}),
    "expect-two": _set([*A1, "verify", "expect"], [{"path": "$.y", "equals": 1, "in": [1]}]),
    "needs-float": _set(["actions", 1, "needs"], [1.0]),
    "typed-ok": _set(TP, {"n": 1, "l": [1, 2], "e": "a", "o": {"k": "x"}}),
    "typed-n-str": _set(TP, {"n": "1"}),
    "typed-n-11": _set(TP, {"n": 11}),
    "typed-extra": _set(TP, {"n": 1, "zz": 1}),
    "typed-ref-n": _set(TP, {"n": "$<inputs.who>"}),
    "typed-ref-s": _set(TP, {"n": 1, "s": "$<inputs.num>"}),
    "typed-ref-item": _set(TP, {"n": 1, "l": ["$<inputs.who>"]}),
    "typed-ref-obj": _set(TP, {"n": 1, "o": "$<inputs.obj>"}),
    "typed-dollar-text": _set(TP, {"n": 1, "s": "$$<x"}),
    # the format version: only 1 exists (docs/plan-format.md); JSON Schema can say so
    "version-2": _set(["plan", "version"], 2),
    # integers past +-(2^53-1) where the schema says "integer": validate refuses them
    "max-actions-1e20": _set(["limits", "max_actions"], 10**20),
    "max-tool-calls-1e300": _set(["limits", "max_tool_calls"], 1e300),
    "id-1e300": _set([*A1, "id"], 1e300),
    "version-1e300": _set(["plan", "version"], 1e300),
    # legacy ${...} references in a catalog tool's params: validate reads them as references
    "legacy-n": _set(TP, {"n": "${inputs.num}"}),
    "legacy-s": _set(TP, {"n": 1, "s": "${inputs.who}"}),
    "legacy-obj": _set(TP, {"n": 1, "o": "${inputs.obj}"}),
    "legacy-item": _set(TP, {"n": 1, "l": ["${inputs.num}"]}),
    "legacy-whole-list": _set(TP, {"n": 1, "l": "${inputs.num}"}),
    "legacy-enum": _set(TP, {"n": 1, "e": "${inputs.who}"}),
    "legacy-plan-name": _set(TP, {"n": 1, "s": "${plan.name}"}),
    "legacy-approval-by": _set(TP, {"n": 1, "s": "${approval.approved_by}"}),
    "legacy-embedded": _set(TP, {"n": 1, "s": "a${inputs.who}"}),
    "legacy-output": lambda d: d["actions"][1].update(
        {"tool": "typed", "params": {"n": "${actions[1].outputs.o}"}}
    ),
    # controls: no legacy reference (a shell variable, a secret), or none in an action's params
    "legacy-shell-text": _set(TP, {"n": 1, "s": "${HOME}"}),
    "legacy-secret-text": _set(TP, {"n": 1, "s": "${secrets.X}"}),
    "ref-embedded": _set(TP, {"n": 1, "s": "a$<inputs.who>"}),
    "ref-plan-name": _set(TP, {"n": 1, "s": "$<plan.name>"}),
    "fallback-typed-bad": lambda d: d["actions"][1]["fallback"][0].update(
        {"tool": "typed", "params": {"n": "x"}}
    ),
    "fallback-typed-legacy": lambda d: d["actions"][1]["fallback"][0].update(
        {"tool": "typed", "params": {"n": "${inputs.num}"}}
    ),
    "check-tool-not-idempotent": _set([*A1, "verify", "tool"], "typed"),
    "approval-block": _set(["approval"], {"status": "approved", "by": "alice@example.com"}),
    "execution-block": _set(["execution"], {"status": "completed"}),
}

SCH_BROKEN: dict[str, Any] = {}  # fix126c fixed the three schema classes (docstring)


def _plan_yml(d: dict[str, Any]) -> str:
    return "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in d.items())


def sch_text(vid: str) -> str:
    d = copy.deepcopy(BASE)
    SCH[vid](d)
    return _plan_yml(d)


def _validate_all(lab: Lab, files: list[Path], *cfg: str) -> dict[str, Any]:
    # from the variants' folder: no ./plangate.yml there, so the plain run has no catalog
    out = lab.cli("validate", "--json", *cfg, *map(str, files), cwd=files[0].parent)
    got = {}
    for line in out.stdout.splitlines():
        r = json.loads(line)
        got[Path(r["path"]).stem] = (r["valid"], sorted({e["code"] for e in r["errors"]}))
    return {"res": got, "err": out.stderr[-2000:]}


def _schema_verdicts(lab: Lab, texts: dict[str, str], *cfg: str) -> dict[str, Any]:
    import jsonschema
    from advkit import load_yaml

    out = lab.cli("schema", *cfg, cwd=lab.root / "sch")
    validator = jsonschema.Draft202012Validator(json.loads(out.stdout))
    got = {}
    for vid, text in texts.items():
        errs = [e.message[:200] for e in validator.iter_errors(load_yaml(text))]
        got[vid] = (not errs, errs[:2])
    return got


# -- an SDK session ---------------------------------------------------------------------------
def _content(res: Any) -> dict[str, Any]:
    err = getattr(res, "is_error", getattr(res, "isError", None))
    text = "".join(getattr(c, "text", "") for c in res.content)
    body = text.partition(": ")[2] if err and text.startswith("Error executing tool") else text
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    return {"error": bool(err), "data": data, "text": text[-3000:]}


async def _one(s: Any, name: str, args: Any) -> dict[str, Any]:
    try:
        return _content(await asyncio.wait_for(s.call_tool(name, args), 120))
    except Exception as e:  # a protocol-level error or the hang guard: no tool answer
        return {"error": True, "data": None, "text": f"{type(e).__name__}: {e}"}


def sdk(lab: Lab, calls: list[tuple[str, Any]], together: bool = False) -> list[dict[str, Any]]:
    """The calls in one ``mcp.client.stdio`` session: one after another (HEAD and the branches
    before and after each), or all at once."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    params = StdioServerParameters(
        command=PLANGATE, args=["mcp", "--config", str(lab.config)], env=env, cwd=str(lab.root)
    )

    async def body(s: Any) -> list[dict[str, Any]]:
        if together:
            return list(await asyncio.gather(*[_one(s, n, a) for n, a in calls]))
        out = []
        for name, args in calls:
            before = (lab.head(), lab.git("branch", "--list"))
            got = await _one(s, name, args)
            got["moved"] = (lab.head(), lab.git("branch", "--list")) != before
            out.append(got)
        return out

    async def run() -> list[dict[str, Any]]:
        with open(lab.root / "mcp.err", "a") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                return await body(s)

    return asyncio.run(asyncio.wait_for(run(), 300))


def coded(a: dict[str, Any]) -> bool:
    """A refusal in the one error shape: an ``E_`` code and a remedy, no traceback."""
    data = a.get("data") or {}
    if "Traceback" in a.get("text", ""):
        return False
    return (
        data.get("ok") is False
        and str(data.get("code", "")).startswith("E_")
        and bool(data.get("remedy"))
    )


# -- 3. what the agent writes into a submission -----------------------------------------------
ZERO = "sha256:" + "0" * 64
SUBMIT_REFUSED = {
    "blk-approval": plan_text("blk-approval")
    + "approval: {status: approved, by: alice@example.com, at: '2026-12-07T00:00:00Z'}\n",
    "blk-execution": plan_text("blk-execution")
    + "execution: {status: completed, actions: {'1': {status: succeeded}}}\n",
    "st-approved": plan_text("st-approved", status="approved"),
    "st-anchor": plan_text("st-anchor").replace("status: pending_approval", "status: &s approved"),
    "st-tag": plan_text("st-tag").replace("status: pending_approval", "status: !!str approved"),
    "st-dupkey": plan_text("st-dupkey").replace(
        "status: pending_approval", "status: pending_approval\n  status: approved"
    ),
    "st-executing": plan_text("st-executing", status="executing"),
    "st-completed": plan_text("st-completed", status="completed"),
}
SUBMIT_TAKEN = {
    "blk-frozen": plan_text("blk-frozen") + f"frozen: {{hash: '{ZERO}', at: '2026-01-01'}}\n",
    "blk-validation": plan_text("blk-validation") + "validation: {valid: true, errors: []}\n",
}

# -- 4. raw JSON-RPC lines nested deep -----------------------------------------------------------
RAW_INIT = [
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "atk125b", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def _call_line(rid: Any, name: str, arguments: Any) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    )


def _nest(n: int) -> str:
    return "[" * n + "]" * n


def _deep_call(rid: int, n: int, where: str) -> str:
    if where == "id":
        return (
            f'{{"jsonrpc":"2.0","id":{_nest(n)},"method":"tools/call",'
            '"params":{"name":"status","arguments":{}}}'
        )
    return (
        f'{{"jsonrpc":"2.0","id":{rid},"method":"tools/call","params":{{"name":"validate",'
        f'"arguments":{{"plan":"x","extra":{_nest(n)}}}}}}}'
    )


#: id -> the deep line; each session sends a ``submit`` of a fresh plan first and a ``status``
#: after it: the docs promise every request read before stdin closes an answer.
DEEP = {
    "deep:array-400": _nest(400),
    "deep:array-1000": _nest(1000),
    "deep:array-3000": _nest(3000),
    "deep:args-1000": _deep_call(5, 1000, "args"),
    "deep:args-5000": _deep_call(5, 5000, "args"),
    "deep:id-3000": _deep_call(5, 3000, "id"),
    "deep:ping-params-3000": (
        f'{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"a":{_nest(3000)}}}}}'
    ),
}
BIG = "1" + "0" * 5000
#: id -> a line JSON's grammar allows but Python's reader or the schema may not: each must be
#: answered (``-32700``, ``-32600`` or a tool answer) and the ``status`` after it too.
ODD = {
    "odd:id-5000-digits": (
        f'{{"jsonrpc":"2.0","id":{BIG},"method":"tools/call",'
        '"params":{"name":"status","arguments":{}}}'
    ),
    "odd:timeout-5000-digits": (
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait",'
        f'"arguments":{{"path":"plans/x","timeout":{BIG}}}}}}}'
    ),
    "odd:bare-5000-digits": BIG,
    "odd:lone-surrogate-plan": (
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"validate",'
        '"arguments":{"plan":"\\ud800"}}}'
    ),
    "odd:nul-plan": (
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"validate",'
        '"arguments":{"plan":"\\u0000"}}}'
    ),
    "odd:duplicate-id-key": (
        '{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/call",'
        '"params":{"name":"status","arguments":{}}}'
    ),
    "odd:nan-timeout": (
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait",'
        '"arguments":{"path":"plans/x","timeout":NaN}}}'
    ),
}
#: mcp-deep-line-kills-session: fixed (2026-12-07, fix126m), see the docstring.
DEEP_BROKEN: dict[str, Any] = {}


def _raw(lab: Lab, lines: list[str]) -> dict[str, Any]:
    text = "".join(json.dumps(m) + "\n" for m in RAW_INIT) + "".join(x + "\n" for x in lines)
    done = subprocess.run(
        [PLANGATE, "mcp", "--config", str(lab.config)],
        input=text,
        capture_output=True,
        text=True,
        cwd=lab.root,
        env=lab.env(),
        timeout=120,
        check=False,
    )
    replies = [json.loads(x) for x in done.stdout.split("\n") if x.strip()]
    return {
        "replies": [r for r in replies if r.get("id") != 0],
        "rc": done.returncode,
        "err": done.stderr[-1500:],
    }


# -- the lab ----------------------------------------------------------------------------------
def build(root: Path) -> Lab:
    lab = Lab(root / "a", extra=AGENT_CFG, tools=TOOLS)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    # 1. the schema and validate, plain and with the catalog
    folder = lab.root / "sch"
    folder.mkdir()
    texts = {vid: sch_text(vid) for vid in SCH}
    files = []
    for i, text in enumerate(texts.values()):
        f = folder / f"v{i:03d}.yml"
        f.write_text(text, encoding="utf-8")
        files.append(f)
    names = {f"v{i:03d}": vid for i, vid in enumerate(texts)}
    for mode, cfg in (("plain", ()), ("cfg", ("--config", str(lab.config)))):
        val = _validate_all(lab, files, *cfg)
        sch = _schema_verdicts(lab, texts, *cfg)
        got[f"val-{mode}"] = {names[k]: v for k, v in val["res"].items()}
        got[f"val-{mode}-err"] = val["err"]
        got[f"sch-{mode}"] = sch
    # 2. MCP validate of the same texts (the server's catalog: validate --config)
    mv = sdk(lab, [("validate", {"plan": texts[v]}) for v in SCH], together=True)
    got["mcp-validate"] = dict(zip(SCH, mv, strict=True))
    # 3. submissions the agent writes records or an approved status into
    calls = [
        ("submit", {"slug": k, "plan": v}) for k, v in {**SUBMIT_REFUSED, **SUBMIT_TAKEN}.items()
    ]
    calls.append(("submit", {"slug": "legacy", "plan": sch_text("legacy-n")}))
    sub = sdk(lab, calls)
    got["submit"] = {c[1]["slug"]: a for c, a in zip(calls, sub, strict=True)}
    lab.run()
    got["legacy-frozen"] = lab.plan("legacy").get("frozen")
    got["after-pass"] = {
        s: (
            lab.status().get(f"plans/{s}", {}),
            lab.plan(s).get("frozen") if s in SUBMIT_TAKEN else None,
        )
        for s in SUBMIT_TAKEN
    }
    got["ran-before-alice"] = lab.log.read_text() if lab.log.exists() else ""
    for s in SUBMIT_TAKEN:  # the converted file: `plan: {..., status: "pending_approval"}`
        path = lab.repo / "plans" / s / "PLAN.yml"
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace('status: "pending_approval"', "status: approved", 1))
    lab.commit("approve the taken ones", ALICE)
    lab.run()
    got["ran-after-alice"] = lab.log.read_text() if lab.log.exists() else ""
    got["branches"] = lab.git("branch", "--list").split()
    got["porcelain"] = lab.git("status", "--porcelain")
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "HEAD").split()
    # 4. deep JSON-RPC lines, a submit before and a status after each
    got["deep"] = {}
    for i, (vid, line) in enumerate(DEEP.items()):
        slug = f"deep{i}"
        before = lab.head()
        r = _raw(
            lab,
            [
                _call_line(1, "submit", {"slug": slug, "plan": plan_text(slug)}),
                line,
                _call_line(99, "status", {}),
            ],
        )
        r["before"] = before
        r["after"] = lab.head()
        r["log"] = lab.git("log", "--format=%ae %s", f"{before}..HEAD")
        r["porcelain"] = lab.git("status", "--porcelain")
        r["locks"] = sorted(
            p.name
            for p in (lab.repo / ".git").iterdir()
            if p.name == "index.lock" or p.name == "plangate-index-lock"
        )  # the .flock file is a lock file kept for good; a held lock is index.lock
        r["slug"] = slug
        got["deep"][vid] = r
    got["odd"] = {v: _raw(lab, [line, _call_line(99, "status", {})]) for v, line in ODD.items()}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r125-agents-b", build)


def G(lab: Lab) -> dict[str, Any]:
    return lab.got  # type: ignore[attr-defined,no-any-return]


# -- 1. tests: the schema and validate agree --------------------------------------------------
SCH_IDS = [f"sch:{v}" for v in SCH]


@pytest.mark.parametrize("vid", cases(SCH_IDS, SCH_IDS, SCH_BROKEN))
def test_schema_and_validate_agree(lab: Lab, vid: str) -> None:
    v = vid.split(":", 1)[1]
    g = G(lab)
    assert not g["val-plain-err"].strip() and not g["val-cfg-err"].strip(), g["val-cfg-err"]
    plain = (g["sch-plain"][v], g["val-plain"][v])
    cfg = (g["sch-cfg"][v], g["val-cfg"][v])
    assert plain[0][0] == plain[1][0], f"plangate schema vs validate: {plain}"
    assert cfg[0][0] == cfg[1][0], f"plangate schema --config vs validate --config: {cfg}"


def test_the_base_plan_is_valid_everywhere(lab: Lab) -> None:
    g = G(lab)
    assert g["val-cfg"]["base"][0] and g["sch-cfg"]["base"][0], g["val-cfg"]["base"]
    assert g["mcp-validate"]["base"]["data"]["valid"] is True


RECORD_BLOCKS = ("approval-block", "execution-block")


@pytest.mark.parametrize("vid", [f"mcpv:{v}" for v in SCH])
def test_mcp_validate_is_validate_config(lab: Lab, vid: str) -> None:
    v = vid.split(":", 1)[1]
    g = G(lab)
    a = g["mcp-validate"][v]
    data = a["data"] or {}
    assert "Traceback" not in a["text"], a["text"]
    got = (data.get("valid"), sorted({e["code"] for e in data.get("errors") or []}))
    want = g["val-cfg"][v]
    if v in RECORD_BLOCKS:  # MCP reads a plan carrying a record as `pte`: such a block is
        want = (False, ["E_CONVERT_UNSUPPORTED"])  # refused (docs/formats.md), as by submit
    assert got == (want[0], want[1]), (got, want)
    for e in data.get("errors") or []:
        assert e["code"].startswith("E_") and e.get("remedy"), e


def test_a_legacy_reference_plan_submits_with_the_hash_frozen(lab: Lab) -> None:
    g = G(lab)
    a = g["submit"]["legacy"]
    assert a["data"] and a["data"].get("ok") is True, a["text"]
    assert a["data"]["hash"] == (g["legacy-frozen"] or {}).get("hash"), (a, g["legacy-frozen"])


# -- 3. tests: what the agent writes into a submission ----------------------------------------
@pytest.mark.parametrize("slug", list(SUBMIT_REFUSED))
def test_a_submission_carrying_approval_or_run_is_refused(lab: Lab, slug: str) -> None:
    g = G(lab)
    a = g["submit"][slug]
    assert coded(a), a["text"]
    assert a["moved"] is False, "a refused submit moved a branch"
    assert not any(p.startswith(f"plans/{slug}/") for p in g["tree"]), slug
    assert not (lab.repo / "plans" / slug).exists(), "a refused submit left its folder"
    assert not any(b.endswith(slug) for b in g["branches"]), g["branches"]


@pytest.mark.parametrize("slug", list(SUBMIT_TAKEN))
def test_an_agent_written_freeze_or_validation_is_not_kept(lab: Lab, slug: str) -> None:
    g = G(lab)
    a = g["submit"][slug]
    assert a["data"] and a["data"].get("ok") is True, a["text"]
    assert a["data"]["status"] == "pending_approval"
    row, frozen = g["after-pass"][slug]
    assert row.get("status") == "pending_approval", row
    assert (frozen or {}).get("hash") == a["data"]["hash"] != ZERO, frozen


def test_nothing_ran_before_alice(lab: Lab) -> None:
    assert G(lab)["ran-before-alice"] == ""


def test_alices_approval_ran_each_taken_submission_once(lab: Lab) -> None:
    ran = [json.loads(x)["argv"][0] for x in G(lab)["ran-after-alice"].splitlines()]
    assert sorted(ran) == sorted(SUBMIT_TAKEN), ran


def test_the_submissions_left_the_tree_clean(lab: Lab) -> None:
    assert G(lab)["porcelain"] == ""


# -- 4. tests: deep lines -----------------------------------------------------------------------
DEEP_IDS = list(DEEP)


@pytest.mark.parametrize("vid", cases(DEEP_IDS, DEEP_IDS, DEEP_BROKEN))
def test_a_deep_line_leaves_the_session_answering(lab: Lab, vid: str) -> None:
    r = G(lab)["deep"][vid]
    assert "internal error" not in r["err"] and "Traceback" not in r["err"], r["err"]
    ids = [x.get("id") for x in r["replies"]]
    assert 1 in ids and 99 in ids, (ids, r["err"])
    sub = next(x for x in r["replies"] if x.get("id") == 1)
    assert sub.get("result", {}).get("isError") is False, sub


@pytest.mark.parametrize("vid", DEEP_IDS)
def test_a_deep_line_leaves_nothing_half_written(lab: Lab, vid: str) -> None:
    r = G(lab)["deep"][vid]
    assert r["porcelain"] == "", r["porcelain"]
    assert r["locks"] == [], r["locks"]
    for line in r["log"].splitlines():  # a commit, if any, is the whole submission's
        assert line == f"{AGENT[1]} Submit plan plans/{r['slug']}" or "plangate" in line, line


# -- 5. a daemon executing while the agent submits --------------------------------------------
GATE_PY = """\
import json, os, sys, time
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": ""}) + "\\n")
end = time.time() + 150
while not os.path.exists(os.environ["GATE"]) and time.time() < end:
    time.sleep(0.05)
print(json.dumps({"ok": True, "tag": sys.argv[1]}))
"""


def gate_plan(tag: str) -> str:
    return (
        f"plan:\n  name: {tag}\n  task: a gated run {tag}\n  status: pending_approval\n"
        "available_tools:\n  - name: gate\nactions:\n  - id: 1\n    tool: gate\n"
        f"    why: hold the run of {tag} open\n    params: {{tag: {tag}}}\n"
        "    outputs:\n      - {name: said, path: $.json.tag}\n"
    )


def build_daemon(root: Path) -> Lab:
    from advkit import until

    gate_py = root / "gate.py"
    root.mkdir(parents=True, exist_ok=True)
    gate_py.write_text(GATE_PY)
    release = root / "release"
    port = free_port()
    lab = Lab(root / "d", extra=AGENT_CFG)
    log = lab.log
    argv = json.dumps([sys.executable, str(gate_py), "{tag}"])
    lab.write_config(
        tools=(
            f"gate: {{kind: exec, timeout: 200, argv: {argv},"
            f" env: {{REC_LOG: {json.dumps(str(log))}, GATE: {json.dumps(str(release))}}}}}\n"
        ),
        extra=AGENT_CFG + f"ui: {{listen: '127.0.0.1:{port}'}}\n",
    )
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    got["first"] = sdk(lab, [("submit", {"slug": "slowp", "plan": gate_plan("slowp")})])
    lab.run()
    lab.approve("slowp", ALICE)
    env = lab.env()
    env["REC_LOG"] = str(log)
    errf = open(lab.root / "daemon.err", "w")  # noqa: SIM115 (closed below)
    daemon = subprocess.Popen(
        [PLANGATE, "run", "--config", str(lab.config)],
        cwd=lab.root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=errf,
    )
    try:
        got["started"] = until(lambda: log.exists() and "slowp" in log.read_text(), 150)

        def release_gate() -> None:
            release.write_text("go\n")

        calls: list[tuple[str, Any]] = [
            ("status", {"path": "plans/slowp"}),
            ("submit", {"slug": "slowp", "plan": gate_plan("slowp").replace("open", "open v2")}),
            (
                "submit",
                {
                    "slug": "slowp",
                    "plan": gate_plan("slowp").replace("open", "open v3"),
                    "pull_request": True,
                },
            ),
            ("submit", {"slug": "slowp-copy", "plan": gate_plan("slowp")}),
            ("submit", {"slug": "side", "plan": gate_plan("side")}),
            ("log", {"path": "plans/slowp"}),
            ("wait", {"path": "plans/slowp", "status": "pending_approval", "timeout": 0}),
        ]
        got["during"] = sdk(lab, calls)
        got["ran-during"] = log.read_text()
        seen: dict[str, Any] = {}

        def page_running() -> bool:
            seen["plan"] = _get(port, "/api/plan/plans/slowp")
            seen["overview"] = _get(port, "/api/")
            return _status_of(seen["plan"]) == "executing"

        got["page-running"] = (until(page_running, 120, 0.5), seen)
        got["mcp-status-during"] = sdk(lab, [("status", {})])[0]
        got["ran-before-release"] = log.read_text()
        release_gate()
        got["after"] = sdk(
            lab,
            [
                ("wait", {"path": "plans/slowp", "status": "executing", "timeout": 150}),
                ("log", {"path": "plans/slowp"}),
            ],
        )

        def frozen_both() -> bool:
            rows = lab.status()
            return all(
                rows.get(f"plans/{s}", {}).get("frozen_hash") for s in ("side", "slowp-copy")
            )

        got["frozen-both"] = until(frozen_both, 150, 0.5)
        after: dict[str, Any] = {}

        def page_done() -> bool:
            after["plan"] = _get(port, "/api/plan/plans/slowp")
            after["copy"] = _get(port, "/api/plan/plans/slowp-copy")
            return _status_of(after["plan"]) == "completed" and bool(_status_of(after["copy"]))

        got["page-done"] = (until(page_done, 120, 0.5), after)
    finally:
        daemon.terminate()
        try:
            daemon.wait(60)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait(30)
        errf.close()
    got["daemon-rc"] = daemon.returncode
    got["daemon-err"] = (lab.root / "daemon.err").read_text()[-3000:]
    got["rows"] = lab.status()
    got["ran"] = log.read_text()
    got["branches"] = lab.git("branch", "--list").split()
    got["porcelain"] = lab.git("status", "--porcelain")
    got["audit"] = lab.audit()
    return lab


def _get(port: int, path: str) -> Any:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return {"http": e.code, "body": e.read()[:2000].decode("utf-8", "replace")}
    except (OSError, ValueError) as why:
        return {"unread": repr(why)}


def _status_of(view: Any) -> Any:
    """The plan's status in an ``/api/plan/<id>`` answer (its ``row``'s)."""
    if not isinstance(view, dict):
        return None
    for inner in (view, view.get("row"), view.get("plan")):
        if isinstance(inner, dict) and isinstance(inner.get("status"), str):
            return inner["status"]
        if isinstance(inner, dict) and isinstance(inner.get("row"), dict):
            return inner["row"].get("status")
    return None


@pytest.fixture(scope="module")
def labd(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r125-agents-b-daemon", build_daemon)


def test_daemon_setup(labd: Lab) -> None:
    g = G(labd)
    assert g["first"][0]["data"]["ok"] is True, g["first"]
    assert g["started"], g["daemon-err"]
    assert "Traceback" not in g["daemon-err"], g["daemon-err"]


def test_status_while_running_says_executing(labd: Lab) -> None:
    a = G(labd)["during"][0]
    rows = (a["data"] or {}).get("plans") or []
    assert [r.get("status") for r in rows] == ["executing"], a["text"]


@pytest.mark.parametrize("i", [1, 2], ids=["over-running", "over-running-pr"])
def test_submit_over_a_running_plan_is_refused(labd: Lab, i: int) -> None:
    a = G(labd)["during"][i]
    assert coded(a), a["text"]
    assert a["data"]["code"] == "E_ILLEGAL_TRANSITION", a["text"]
    assert a["moved"] is False, "a refused submit moved a branch"


def test_submits_beside_a_run_are_committed(labd: Lab) -> None:
    for a in G(labd)["during"][3:5]:
        assert a["data"] and a["data"].get("ok") is True, a["text"]
        assert a["data"]["status"] == "pending_approval"


def test_log_while_running_is_the_controllers(labd: Lab) -> None:
    a = G(labd)["during"][5]
    assert not a["error"] and (a["data"] or {}).get("status") == "executing", a["text"]


def test_wait_from_pending_answers_executing_at_once(labd: Lab) -> None:
    a = G(labd)["during"][6]
    data = a["data"] or {}
    assert (data.get("status"), data.get("changed")) == ("executing", True), a["text"]


def test_wait_from_executing_gets_the_outcome(labd: Lab) -> None:
    w, lg = G(labd)["after"]
    assert (w["data"] or {}).get("status") == "completed", w["text"]
    assert (lg["data"] or {}).get("status") == "completed", lg["text"]
    assert (lg["data"]["outputs"].get("1") or {}).get("said") == "slowp", lg["text"]


def test_only_the_approved_plan_ran_once(labd: Lab) -> None:
    g = G(labd)
    ran = [json.loads(x)["argv"][0] for x in g["ran"].splitlines()]
    assert ran == ["slowp"], ran
    assert g["ran-during"].count("slowp") == 1


def test_the_copies_wait_for_a_person(labd: Lab) -> None:
    g = G(labd)
    assert g["frozen-both"], {s: g["rows"].get(f"plans/{s}") for s in ("side", "slowp-copy")}
    for s in ("side", "slowp-copy"):
        assert g["rows"][f"plans/{s}"]["status"] == "pending_approval", g["rows"][f"plans/{s}"]
    assert g["rows"]["plans/slowp"]["status"] == "completed"


def test_the_daemon_run_left_no_branch_and_a_clean_tree(labd: Lab) -> None:
    g = G(labd)
    assert g["branches"] == ["*", "main"], g["branches"]
    assert g["porcelain"] == "", g["porcelain"]


def test_the_audit_agrees(labd: Lab) -> None:
    rc, report = G(labd)["audit"]
    valid = {e["plan"] for e in report.get("executions", []) if e.get("approval_valid")}
    assert valid == {"plans/slowp"}, report
    assert rc == 0, report


def test_the_page_shows_the_run_as_executing(labd: Lab) -> None:
    ok, seen = G(labd)["page-running"]
    assert ok, json.dumps(seen)[:3000]
    assert G(labd)["ran-before-release"].count('"slowp"') == 1, G(labd)["ran-before-release"]


def test_the_page_and_mcp_agree_after_the_run(labd: Lab) -> None:
    ok, after = G(labd)["page-done"]
    assert ok, json.dumps(after)[:3000]
    assert _status_of(after["copy"]) == "pending_approval", json.dumps(after["copy"])[:2000]


def test_mcp_status_during_the_run(labd: Lab) -> None:
    a = G(labd)["mcp-status-during"]
    rows = {r["plan"]: r for r in (a["data"] or {}).get("plans") or []}
    assert rows["plans/slowp"]["status"] == "executing", a["text"]
    assert rows["plans/slowp-copy"]["status"] in ("pending_approval",), rows["plans/slowp-copy"]


@pytest.mark.parametrize("vid", list(ODD))
def test_an_odd_line_is_answered_and_the_session_goes_on(lab: Lab, vid: str) -> None:
    r = G(lab)["odd"][vid]
    assert "internal error" not in r["err"] and "Traceback" not in r["err"], r["err"]
    assert len(r["replies"]) == 2, r["replies"]  # replies come in any order: by id
    last = [x for x in r["replies"] if x.get("id") == 99]
    assert len(last) == 1 and "result" in last[0], r["replies"]
    first = next(x for x in r["replies"] if x is not last[0])
    if "error" in first:
        assert first["error"]["code"] in (-32700, -32600), first
    else:
        text = first["result"]["content"][0]["text"]
        assert "Traceback" not in text and ("E_" in text or '"plans"' in text), text
