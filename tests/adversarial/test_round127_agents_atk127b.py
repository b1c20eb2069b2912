"""Round 127, the agent's surfaces (atk127b): plans an agent submits in the formats agents
already emit, through the official ``mcp`` SDK client, and what runs of them; what an agent
sees after each refusal; one MCP session held open while the repository changes under it;
the page and MCP with 2,000 plans and plans the controller does not read; MCP on a
remote-mode config over a real ``git daemon``. An outsider's attack: the CLI, git, HTTP on
loopback, the SDK client and the docs only.

Lab C (local mode, ``agent.identity`` Planner bot, the secret ``TOK`` in the environment; the
exec tool ``rec`` records each call). ONE ``plangate mcp`` session (``mcp.client.stdio`` +
``ClientSession``) stays open through the whole lab while the test acts between calls:

1. ``validate`` then ``submit`` of eleven plans: an ActionPlan JSON with odd values (``1.0``,
   2**53-1, ``"true"``, ``café``, nesting, ``null``), two Plan Contracts (one whose source says
   ``"status": "approved"``), an Agent Plan (``Custom`` tool), the markdown ``toon-plan``, a
   ``pte`` YAML with a legacy ``${inputs.who}`` and ``approval: {status: pending}``, a model
   reply (one fenced ``json`` ActionPlan), a PLAN.yml saying ``status: approved`` itself, a
   Plan Contract and a markdown plan passing ``$<secrets.TOK>``, and a TOON-plan JSON whose
   steps are listed against their dependencies; ``validate`` of three sources the converter
   refuses (a ``pte`` with its own ``approval``, a string flag, an ActionPlan ``nested_plan``).
2. A pass; ``plangate show --json`` of each; Alice approves nine; two passes.
3. 17 refusals: invalid converted plans (with and without ``pull_request``), a forced wrong
   format, a ``pte`` bringing ``approval``/``execution``, a string flag, two fences, bad slugs,
   a completed slug, the tool ``approve``, ``pull_request: "true"``, a bad ``wait`` status,
   ``log`` of no plan, an unknown format, a nested plan (with and without ``pull_request``).
4. ``log``/``status`` of the plans that used the secret.
5. The repository changes under the open session: Alice switches the working tree to
   ``side`` and the agent submits and asks ``status``; back on main Alice deletes a submitted
   plan and the agent asks ``log``/``status``/``wait``; a ``wait`` in flight while Alice
   switches to ``side3`` (where the plan is deleted); a pass freezes ``hr``, Alice resets main
   over the controller's freeze commit, the agent asks ``status``, submits ``hr2``, Alice
   approves ``hr``, a pass, ``status``/``log``.

Lab P (local mode, ``plangate run`` with ``ui`` on 127.0.0.1): 2,000 draft plans, ``huge``
(1,000,000 bytes: under ``limits.max_plan_bytes`` but over its share for the plan), ``toobig``
(1.1 MB), ``badutf`` (a byte that is no UTF-8) and ``link`` (PLAN.yml a symlink). ``/api/`` and
its 21 ``?status=draft&page=N`` pages, ``/api/plan/`` of the big ones; an MCP session beside
the daemon: ``status`` of all, ``status``/``log`` of each unreadable plan, ``wait`` of a draft
and of ``toobig``.

Lab R (remote mode, a bare ``origin.git`` served by ``git daemon`` on 127.0.0.1; one pass
froze ``rp``): an MCP session on the controller's remote config: ``status``, ``log``,
``wait``, ``submit`` (plain and ``pull_request``); ``plangate status --json`` beside it.

Ids (91):

- ``test_fmt_hash`` (10), ``test_fmt_schema`` (11): ``validate`` and ``submit`` agree (valid,
  hash, format); the PLAN.yml ``validate`` converted to is accepted by ``plangate schema
  --config``.
- ``test_run_as_shown`` (8), ``test_run_order_as_shown``: each approved plan ran once, its tool
  got exactly what ``show --json`` displayed (references filled in, the secret's value where
  ``show`` says ``$<secrets.TOK>``) and what the source said, in the order ``show`` lists.
- ``test_self_approval`` / ``test_self_approval_submit_refused``: a Plan Contract saying
  ``approved`` is submitted ``pending_approval`` and never runs; a PLAN.yml saying
  ``approved`` is ``E_ILLEGAL_TRANSITION``, nothing committed.
- ``test_refusal`` (17), ``test_refusals_left_nothing``: each refusal is the coded shape
  (``E_...``, message, ``path``/``line``, remedy) or ``ok: false`` with coded errors each with a
  remedy; together they left HEAD, every ref and the tree as they were.
- ``test_secret_not_shown`` (5), ``test_secret_not_in_history_or_show``: the secret's value is
  never in MCP ``log``/``status``, ``show`` or git history.
- ``test_chg_*`` (7): another branch checked out is ``E_GIT`` with a remedy (``submit``,
  ``status``, a ``wait`` in flight), never a submission on ``side``; a deleted plan is
  ``E_USAGE`` to ``log``/``status`` and ``status: null`` to ``wait`` (documented); after the
  rewrite nothing ran and every answer is coded.
- ``test_validate_names_format`` (3), ``test_nested_plan_told_what_to_do`` (3): see below.
- ``test_page_*`` (5): ``/api/`` answers with 2,000 plans, each section at most
  ``ui.max_rows``; the 20 pages hold every draft exactly once; page 21 is 400 ``E_USAGE``
  naming 20; the big plans are their row's ``E_PLAN_TOO_LARGE``, the blob never served.
- ``test_mcp_*`` (11): MCP ``status`` lists all 2,002 rows; ``status`` of each unreadable plan
  names its code; ``log`` of it (see below); ``wait`` answers.
- ``test_remote_*`` (6): ``log``/``wait``/``submit`` on a remote-mode config are
  ``E_CONFIG_INVALID`` with a remedy, nothing pushed; ``status`` answers as ``plangate status
  --json`` does.

Seen (round 127: 91 ids, 80 passed, 11 xfailed (strict); 50-80 s wall at -n 1). 3 classes:

- **validate-format-unnamed-on-conversion-refusal** (3 ids, ``test_validate_names_format``
  ``pte-approval``, ``pc-flag``, ``nested``), fails closed (a misleading answer; nothing is
  accepted): MCP ``validate`` of a source the converter refuses answers ``format: null``
  while its errors are located in that format's fields (``approval``,
  ``steps[0].requires_approval``, ``steps[0].action.plan``); with ``format`` forced, or with a
  later validation error (``E_TOOL_UNKNOWN``), it answers the format. docs/agents.md: a
  PLAN.yml holding an ``approval:`` block "is then read as the ``pte`` format and converted
  ... and the answer's ``format`` says ``pte``". Expected: the detected format.
- **mcp-nested-plan-remedy-names-cli-option** (3 ids, ``test_nested_plan_told_what_to_do``
  ``n:nested``, ``r:nested-plan``, ``r:nested-plan-pr``), fails closed: an ActionPlan with a
  ``nested_plan`` step sent to MCP ``validate``/``submit`` is refused ``E_CONVERT_UNSUPPORTED``
  "a nested plan needs an output folder: pass -o DIR", remedy "change the source as the
  message says, or write PLAN.yml by hand": ``-o`` is ``plangate convert``'s option, no MCP
  tool takes one, so the agent is told to do what it cannot. docs/agents.md: ``plan`` may be
  "any format of docs/formats.md (converted first)", step 8 "read its code, path and remedy,
  fix that and call again"; SPEC: every error names a remedy. Expected: the nested plan
  written under ``plans/<slug>/step-N`` as the daemon's conversion of a source does, or a
  remedy an agent can follow over MCP (commit the source as ``PLAN.json``, submit the inner
  plan on its own).
- **mcp-log-unreadable-plan-uncoded** (5 ids, ``test_mcp_unreadable_coded`` ``log-toobig``,
  ``log-badutf``, ``log-link``; ``test_mcp_log_file_status_as_status`` ``toobig``, ``badutf``),
  fails closed (an agent is not told why; nothing runs): MCP ``log`` of a plan the
  controller does not read answers ``status: "unreadable"`` (``null`` for the link),
  ``problems: []``, no code anywhere, while MCP ``status`` of the same path says
  ``E_PLAN_TOO_LARGE`` / ``E_YAML_PARSE`` "not UTF-8 text" / ``E_UNSAFE_PATH`` "a symbolic
  link"; and ``log``'s ``file_status`` is ``pending_approval``, read from a 1.1 MB file "never
  read" and from a file that is no UTF-8, where the ``status`` row says ``file_status: null``.
  docs/operations.md: "a bigger one is never read, and the page and ``/api/plan/<id>`` give
  the row's own E_PLAN_TOO_LARGE ..., as ``status``, MCP and ``show`` do"; docs/agents.md,
  ``log``: "where the controller did not take the file's status ``problems`` names why".
  Expected: the row's code in ``problems`` (or a coded refusal), ``file_status`` as the row's.

Fixed (2026-12-07 afternoon, fix128g): all three classes.

- validate-format-unnamed-on-conversion-refusal: the format was detected inside
  ``convert_text`` but a refused conversion's error did not carry it, so MCP ``validate``
  answered the ``format`` argument as sent (``null``). Now
  :func:`controller.plan.convert._convert_text` sets ``PlangateError.source_format`` on any
  error raised after the format is known (detected or forced), ``agentapi.to_plan_yml``
  does the same for a PLAN.yml YAML cannot read, and ``AgentApi.validate`` answers it; the
  CLI ``validate --json`` records gain ``format`` too (``LoadedPlan.format``, set by
  ``discovery.load_source`` whatever the outcome). Tests: ``test_validate_names_format``
  (3), ``tests/service/test_agent_answers_r127.py``.
- mcp-nested-plan-remedy-names-cli-option: MCP converted with no folder for nested plans,
  and ``actionplan.Nested`` had one message, ``convert``'s "pass -o DIR". Now ``submit``
  converts under the plan's folder (``to_plan_yml(..., folder)``) and commits each nested
  plan's ``plans/<slug>/step-N/PLAN.yml`` in the same commit as the plan (on the pull
  request's branch too), each file under the plan file's checks
  (``AgentApi._commit_once``), validated, hashed and risk-counted as written
  (``agentapi._beside`` over ``nested.writing``; ``nested.file_reader`` now reads that
  overlay as ``nested.load`` does); ``validate`` with ``slug`` does the same and answers
  ``nested``; without one a nested plan is refused with a remedy an agent can follow
  (``convert_text(unplaced=...)``: "call validate again with `slug`"). The lab now submits
  the two nested plans before the first pass (no longer refusals): ids
  ``test_nested_plan_told_what_to_do`` (3), ``test_nested_plan_submitted_with_its_nested_plan``
  (2, new).
- mcp-log-unreadable-plan-uncoded: ``AgentApi.log`` read the plan file itself (any size,
  any bytes, through a link) before asking the status row. Now it asks the row first (the
  one reader ``status`` uses): a held row is refused with its code (``_refuse_held``, as
  ``wait``), an ``unreadable`` row is answered from the row alone (``_unread_log``: its
  ``CODE: message`` in ``problems``, ``file_status: null``), the file never read; the
  next variant, a plan source (``PLAN.json``) that does not convert, was "no plan ...
  check the path" to ``log`` and is now its row's code too. Round 93's ``mlog:*`` ids
  (a plan YAML cannot read: refused ``E_YAML_PARSE`` by the reader ``log`` had of its own)
  now accept this answer as well. Tests:
  ``test_mcp_unreadable_coded`` (``log-*``), ``test_mcp_log_file_status_as_status``,
  ``tests/service/test_agent_answers_r127.py``.
- Also (seen): a refused ``slug`` carries ``path: "slug"``; ``E_PARSE_MULTIBLOCK`` carries
  the line of the second fenced block.

Held: everything else above. Every converted format ran exactly what ``show`` displayed; a
source or PLAN.yml saying ``approved`` never ran; every refusal is coded with a remedy and
left nothing; a secret passed by reference shows nowhere; a working tree on another branch
is refused ``E_GIT`` by every tool (a ``wait`` in flight too); a rewrite holds the plan; the
page pages 2,000 plans exactly; remote mode is refused coded except ``status``, which agrees
with the CLI.

Seen but not asserted: in remote mode MCP ``status`` (and ``plangate status --json``) answer
from the controller's last fetch: a plan pushed to the remote since is "no plan plans/rp2 on
the watched branch", remedy "submit it first", while the remote holds it (the docs say remote
mode is not served yet; whether ``status`` should fetch is not stated). MCP refusals about a
slug (``../x``, ``R-Upper``) and ``E_PARSE_MULTIBLOCK`` carry ``path: null`` (the argument is
known: ``slug``); the PLAN.yml saying ``approved`` is refused with ``path: null`` where
``plan.status`` is the place. ActionPlan ``n: 1.0`` reaches the tool as ``1`` (documented:
docs/plan-format.md, numbers).
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, build_all, load_yaml, plan_text, until

WT = str(Path(__file__).resolve().parents[2])
AGENT_CFG = (
    "agent:\n  identity: {name: Planner bot, email: planner@example.com}\n"
    "  branch_prefix: plangate/\n"
)

# -- the plans, one per format ---------------------------------------------------------
AP_PARAMS = {
    "tag": "ap",
    "n": 1.0,
    "big": 9007199254740991,
    "s": "true",
    "u": "café",
    "nested": {"a": [1, {"b": None}]},
}
AP = json.dumps(
    {
        "plan_version": 1,
        "title": "ap",
        "steps": [
            {"step_number": 1, "description": "record ap", "action": {"type": "rec", **AP_PARAMS}}
        ],
    }
)
PC_SELF = json.dumps(
    {
        "plan_version": 1,
        "goal": "record pcself",
        "inputs": {"who": "ops"},
        "status": "approved",
        "steps": [
            {"step_id": "s1", "tool": "rec", "args": {"tag": "pcself", "who": "$<inputs.who>"}}
        ],
    }
)
PC = json.dumps(
    {
        "plan_version": 1,
        "goal": "record pc",
        "inputs": {"who": "ops"},
        "steps": [
            {"step_id": "s1", "tool": "rec", "args": {"tag": "pc", "who": "$<inputs.who>", "z": 0}}
        ],
    }
)
AG = json.dumps(
    {
        "title": "ag",
        "steps": [
            {
                "id": "x",
                "title": "Record",
                "detail": "ag",
                "tool": {
                    "kind": {"Custom": {"name": "rec", "payload": {"tag": "ag", "k": [1, "2"]}}}
                },
            }
        ],
    }
)
MD = (
    "# md\n\n## Objective\n\nrecord md\n\n## Steps\n\n### Step 1: Record md\n\n"
    '- **Action**: rec\n- **Parameters**: {"tag": "md", "x": "1", "y": {"z": false}}\n'
)
PTE = """\
plan:
  name: pte
  task: record pte
  status: pending_approval
inputs:
  who: ops
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: record pte
    params:
      tag: pte
      who: ${inputs.who}
approval: {status: pending}
"""
FENCED = "```json\n" + AP.replace('"ap"', '"fenced"') + "\n```\n"
YML_SELF = """\
plan:
  name: ymlself
  task: record ymlself
  status: approved
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: record ymlself
    params:
      tag: ymlself
"""
SECRET = "s3cr3t-R127b-Zq"
PSEC = json.dumps(
    {
        "plan_version": 1,
        "goal": "record psec",
        "steps": [{"step_id": "s1", "tool": "rec", "args": {"tag": "psec", "t": "$<secrets.TOK>"}}],
    }
)
TSEC = (
    "# tsec\n\n## Objective\n\nrecord tsec\n\n## Steps\n\n### Step 1: Record tsec\n\n"
    '- **Action**: rec\n- **Parameters**: {"tag": "tsec", "t": "$<secrets.TOK>"}\n'
)
TJ = json.dumps(
    {
        "metadata": {"title": "tj", "objective": "reordered steps"},
        "workflow_config": {"parallel_execution": False},
        "steps": [
            {
                "id": "b",
                "action": "rec",
                "parameters": {"tag": "tj", "o": "b"},
                "dependencies": ["a"],
            },
            {"id": "a", "action": "rec", "parameters": {"tag": "tj", "o": "a"}},
        ],
    }
)
FORMATS = {
    "ap": AP,
    "pc": PC,
    "ag": AG,
    "md": MD,
    "pte": PTE,
    "fenced": FENCED,
    "pcself": PC_SELF,
    "ymlself": YML_SELF,
    "psec": PSEC,
    "tsec": TSEC,
    "tj": TJ,
}
APPROVED = ["ap", "pc", "ag", "md", "pte", "fenced", "psec", "tsec"]
SELF = ["pcself"]
EXPECT = {
    "ap": AP_PARAMS,
    "fenced": {**AP_PARAMS, "tag": "fenced"},
    "pc": {"tag": "pc", "who": "ops", "z": 0},
    "ag": {"tag": "ag", "k": [1, "2"]},
    "md": {"tag": "md", "x": "1", "y": {"z": False}},
    "pte": {"tag": "pte", "who": "ops"},
    "psec": {"tag": "psec", "t": SECRET},
    "tsec": {"tag": "tsec", "t": SECRET},
}

# -- the refusals ------------------------------------------------------------------------
BAD_TOOL = json.dumps(
    {
        "plan_version": 1,
        "title": "badtool",
        "steps": [{"step_number": 1, "description": "x", "action": {"type": "nope", "a": 1}}],
    }
)
PTE_APPROVAL = PTE.replace(
    "approval: {status: pending}", "approval: {status: approved, by: alice@example.com}"
)
PTE_EXEC = PTE.replace("approval: {status: pending}", "execution: {status: completed}")
PC_FLAG = PC.replace('"z": 0}', '"z": 0}, "requires_approval": "true"')
TWO_FENCES = FENCED + "\n" + FENCED
INNER = {
    "plan_version": 1,
    "title": "inner",
    "steps": [
        {"step_number": 1, "description": "inner rec", "action": {"type": "rec", "tag": "nin"}}
    ],
}
NESTED = json.dumps(
    {
        "plan_version": 1,
        "title": "np",
        "steps": [
            {
                "step_number": 1,
                "description": "outer",
                "action": {"type": "nested_plan", "plan": INNER},
            }
        ],
    }
)
#: validate of a source the converter refuses: the format it was read as (detected)
NAMED = {
    "pte-approval": (PTE_APPROVAL, "pte"),
    "pc-flag": (PC_FLAG, "plan-contract"),
    "nested": (NESTED, "actionplan"),
}
#: An ActionPlan with a nested_plan step, submitted (fix128g: it was refused "pass -o DIR")
NESTED_SUBMITS = {
    "nested-plan": {"plan": NESTED, "slug": "r-nested"},
    "nested-plan-pr": {"plan": NESTED, "slug": "r-nestedpr", "pull_request": True},
}
REFUSALS: dict[str, tuple[str, dict[str, Any]]] = {
    "bad-tool": ("submit", {"plan": BAD_TOOL, "slug": "r-badtool"}),
    "bad-tool-pr": ("submit", {"plan": BAD_TOOL, "slug": "r-badtoolpr", "pull_request": True}),
    "forced-format": ("submit", {"plan": AP, "slug": "r-forced", "format": "plan-contract"}),
    "pte-approval": ("submit", {"plan": PTE_APPROVAL, "slug": "r-pteappr"}),
    "pte-execution": ("submit", {"plan": PTE_EXEC, "slug": "r-pteexec"}),
    "pc-flag-string": ("submit", {"plan": PC_FLAG, "slug": "r-pcflag"}),
    "two-fences": ("submit", {"plan": TWO_FENCES, "slug": "r-twofences"}),
    "slug-climb": ("submit", {"plan": PC, "slug": "../r-climb"}),
    "slug-upper": ("submit", {"plan": PC, "slug": "R-Upper"}),
    "slug-completed": ("submit", {"plan": PC, "slug": "ap"}),
    "tool-approve": ("approve", {"path": "plans/pcself"}),
    "pr-string": ("submit", {"plan": PC, "slug": "r-prstr", "pull_request": "true"}),
    "wait-bad-status": ("wait", {"path": "plans/pcself", "status": "Approved", "timeout": 0}),
    "log-no-plan": ("log", {"path": "plans/r-none"}),
    "format-unknown": ("validate", {"plan": PC, "format": "PLAN.YML"}),
}


def _content(res: Any) -> dict[str, Any]:
    err = getattr(res, "is_error", getattr(res, "isError", None))
    text = "".join(getattr(c, "text", "") for c in res.content)
    body = text.split(": ", 1)[1] if err and text.startswith("Error executing") else text
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    return {"error": bool(err), "data": data, "text": text[:4000]}


Step = tuple[str, str, dict[str, Any]] | Any


async def _session(lab: Lab, steps: list[Step]) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**lab.env(), "PYTHONPATH": WT}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "controller", "mcp", "--config", str(lab.config)],
        env=env,
        cwd=str(lab.root),
    )
    out: dict[str, Any] = {}
    with open(lab.root / "mcp.err", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            for step in steps:
                if callable(step):
                    step()
                    continue
                if len(step) == 4:  # a call with the repository changing meanwhile
                    key, name, args, meanwhile = step
                    res, _ = await asyncio.gather(
                        s.call_tool(name, args), asyncio.to_thread(meanwhile)
                    )
                    out[key] = _content(res)
                    continue
                key, name, args = step
                try:
                    out[key] = _content(await s.call_tool(name, args))
                except Exception as e:  # a protocol error: no coded answer
                    out[key] = {"error": True, "data": None, "text": f"{type(e).__name__}: {e}"}
    return out


def session(lab: Lab, steps: list[Step]) -> dict[str, Any]:
    return asyncio.run(asyncio.wait_for(_session(lab, steps), 300))


def approve(lab: Lab, slug: str) -> None:
    """Alice sets the converted plan's status to approved (the flow-style ``plan:`` line)."""
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text()
    new = re.sub(r'status: "?pending_approval"?', "status: approved", text, count=1)
    assert new != text, text[:400]
    path.write_text(new)
    lab.git("add", f"plans/{slug}")
    lab.git("commit", "-q", "-m", f"approve {slug}", who=ALICE)


def snapshot(lab: Lab) -> dict[str, Any]:
    return {
        "refs": lab.git("for-each-ref", "--format=%(refname) %(objectname)"),
        "porcelain": lab.git("status", "--porcelain", "--untracked-files=all"),
        "head": lab.head(),
    }


def show_json(lab: Lab, slug: str) -> dict[str, Any]:
    res = lab.cli("show", f"plans/{slug}", "--json", "--config", str(lab.config), cwd=lab.repo)
    return json.loads(res.stdout)


def build_c(root: Path) -> dict[str, Any]:
    lab = Lab(root, extra=AGENT_CFG)
    lab.extra_env = {"PLANGATE_SECRET_TOK": SECRET}  # type: ignore[attr-defined]
    got: dict[str, Any] = {"lab": lab}
    steps: list[Step] = []
    for slug, text in FORMATS.items():
        steps.append((f"v:{slug}", "validate", {"plan": text}))
        steps.append((f"s:{slug}", "submit", {"plan": text, "slug": slug}))

    for case, (text, _) in NAMED.items():
        steps.append((f"n:{case}", "validate", {"plan": text}))
    # submitted since round 128 (fix128g), no longer refusals: before the first pass, which
    # freezes them with the rest (a later pass would move what the rewrite below drops)
    for case, args in NESTED_SUBMITS.items():
        steps.append((f"r:{case}", "submit", args))

    def first_pass() -> None:
        lab.run()
        got["shown"] = {slug: show_json(lab, slug) for slug in APPROVED}
        got["shown"]["tj"] = show_json(lab, "tj")
        for slug in [*APPROVED, "tj"]:
            approve(lab, slug)
        lab.run()
        lab.run()
        got["before_refusals"] = snapshot(lab)

    steps.append(first_pass)
    for case, (name, args) in REFUSALS.items():
        steps.append((f"r:{case}", name, args))

    def after_refusals() -> None:
        got["after_refusals"] = snapshot(lab)

    steps.append(after_refusals)
    for slug in ("psec", "tsec"):
        steps.append((f"sec:log:{slug}", "log", {"path": f"plans/{slug}"}))
        steps.append((f"sec:status:{slug}", "status", {"path": f"plans/{slug}"}))
    steps.append(("sec:status", "status", {}))
    # the repository changes under the open session
    steps.append(("c:w1", "submit", {"plan": PC.replace('"pc"', '"w1"'), "slug": "w1"}))

    def to_side() -> None:
        lab.git("checkout", "-q", "-b", "side")

    steps.append(to_side)
    steps.append(("c:w2", "submit", {"plan": PC.replace('"pc"', '"w2"'), "slug": "w2"}))
    steps.append(("c:w2-status", "status", {"path": "plans/w2"}))

    def back_main() -> None:
        got["side_head"] = lab.head()
        lab.git("checkout", "-q", "main")
        got["main_has_w2"] = (lab.repo / "plans" / "w2").exists()
        lab.git("rm", "-q", "-r", "plans/w1")
        lab.git("commit", "-q", "-m", "drop w1", who=ALICE)

    steps.append(back_main)
    steps.append(("c:w2-status-main", "status", {"path": "plans/w2"}))
    steps.append(("c:w1-log", "log", {"path": "plans/w1"}))
    steps.append(("c:w1-status", "status", {"path": "plans/w1"}))
    steps.append(
        ("c:w1-wait", "wait", {"path": "plans/w1", "status": "pending_approval", "timeout": 0})
    )

    def switch_side3() -> None:
        time.sleep(0.5)  # not an assert's timing: the wait may see the switch or not
        lab.git("checkout", "-q", "-b", "side3")
        lab.git("rm", "-q", "-r", "plans/pcself")
        lab.git("commit", "-q", "-m", "side3 without pcself", who=ALICE)

    steps.append(
        (
            "c:wait-switch",
            "wait",
            {"path": "plans/pcself", "status": "pending_approval", "timeout": 6},
            switch_side3,
        )
    )

    def back_from_side3() -> None:
        got["side3_head_at_wait"] = lab.git("rev-parse", "--abbrev-ref", "HEAD").strip()
        lab.git("checkout", "-q", "main")

    steps.append(back_from_side3)
    # history rewritten under the session: the controller's freeze commit dropped
    steps.append(("c:hr", "submit", {"plan": PC.replace('"pc"', '"hr"'), "slug": "hr"}))

    def rewrite() -> None:
        lab.run()
        got["hr_frozen_by"] = lab.git("log", "-1", "--format=%ae").strip()
        lab.git("reset", "-q", "--hard", "HEAD~1", who=ALICE)

    steps.append(rewrite)
    steps.append(("c:hr-status", "status", {"path": "plans/hr"}))
    steps.append(("c:hr2", "submit", {"plan": PC.replace('"pc"', '"hr2"'), "slug": "hr2"}))

    def approve_after_rewrite() -> None:
        got["hr_pass1"] = lab.run(check=False)
        approve(lab, "hr")
        got["hr_pass2"] = lab.run(check=False)

    steps.append(approve_after_rewrite)
    steps.append(("c:hr-status2", "status", {"path": "plans/hr"}))
    steps.append(("c:hr-log", "log", {"path": "plans/hr"}))
    got["mcp"] = session(lab, steps)
    (root / "mcp.json").write_text(json.dumps(got["mcp"], indent=1))
    lab.run()
    got["rows"] = lab.rows()
    got["schema"] = json.loads(lab.cli("schema", "--config", str(lab.config)).stdout)
    return got


MANY = 2000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(port: int, path: str) -> tuple[int | None, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except OSError as e:
        return None, str(e).encode()


def build_p(root: Path) -> dict[str, Any]:
    """2,000 draft plans, a plan just under the plan-size limit and one over it; the daemon
    with the page; the page's ``/api/`` paged through, and MCP reading beside the daemon."""
    port = _free_port()
    lab = Lab(root, extra=AGENT_CFG + f"ui: {{listen: '127.0.0.1:{port}'}}\n")
    for i in range(MANY):
        lab.write(f"d/p{i:04d}", plan_text(f"p{i:04d}", status="draft"))
    lab.write("huge", plan_text("huge", params=f'blob: "{"x" * 1_000_000}"\n'))
    lab.write("toobig", plan_text("toobig", params=f'blob: "{"y" * 1_100_000}"\n'))
    lab.put("plans/badutf/PLAN.yml", plan_text("badutf").encode() + b"# \xff\xfe\n")
    (lab.repo / "plans" / "link").mkdir(parents=True)
    (lab.repo / "plans" / "link" / "PLAN.yml").symlink_to("../d/p0000/PLAN.yml")
    lab.commit("agent: many plans", ("Agent", "agent@example.com"))
    got: dict[str, Any] = {"lab": lab}
    env = {**lab.env(), "PYTHONPATH": WT, "REC_LOG": str(lab.log)}
    with open(root / "daemon.err", "w") as errf:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=errf,
            start_new_session=True,
        )
        try:
            got["ready"] = until(lambda: _get(port, "/api/")[0] == 200, 180, 0.3)
            got["overview"] = _get(port, "/api/")
            pages: dict[int, tuple[int | None, bytes]] = {}
            for n in range(1, MANY // 100 + 2):
                pages[n] = _get(port, f"/api/?status=draft&page={n}")
            got["pages"] = pages
            got["toobig"] = _get(port, "/api/plan/plans/toobig")
            got["huge"] = _get(port, "/api/plan/plans/huge")
            got["mcp"] = session(
                lab,
                [
                    ("status", "status", {}),
                    ("status-toobig", "status", {"path": "plans/toobig"}),
                    ("log-toobig", "log", {"path": "plans/toobig"}),
                    (
                        "wait-draft",
                        "wait",
                        {"path": "plans/d/p0001", "status": "draft", "timeout": 0},
                    ),
                    ("status-badutf", "status", {"path": "plans/badutf"}),
                    ("log-badutf", "log", {"path": "plans/badutf"}),
                    ("status-link", "status", {"path": "plans/link"}),
                    ("log-link", "log", {"path": "plans/link"}),
                    ("wait-toobig", "wait", {"path": "plans/toobig", "timeout": 0}),
                ],
            )
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)
    got["daemon_err"] = (root / "daemon.err").read_text()
    return got


def build_r(root: Path) -> dict[str, Any]:
    """Remote mode over a real ``git daemon`` on 127.0.0.1: one pass froze ``rp``; then the
    agent's MCP session on the controller's remote-mode config, and a later push ``rp2``."""
    lab = Lab(root, extra=AGENT_CFG)
    lab.write("rp", plan_text("rp"))
    lab.commit("agent: rp", ("Agent", "agent@example.com"))
    srv = root / "srv"
    srv.mkdir()
    bare = srv / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(bare)], check=True)
    port = _free_port()
    daemon = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
         f"--base-path={srv}", "--listen=127.0.0.1", f"--port={port}", str(srv)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    got: dict[str, Any] = {"lab": lab}
    url = f"git://127.0.0.1:{port}/origin.git"
    try:
        until(
            lambda: (
                subprocess.run(
                    ["git", "ls-remote", url], capture_output=True, check=False
                ).returncode
                == 0
            ),
            60,
            0.2,
        )
        cfg = root / "remote.yml"
        cfg.write_text(
            lab.config.read_text()
            .replace(
                f"repo: {lab.repo}\n",
                f"remote: {{url: '{url}', branch: main, poll_interval: 3600}}\n",
            )
            .replace(f"state_dir: {lab.state}", f"state_dir: {root / 'rstate'}")
        )
        lab.config = cfg
        lab.run()
        got["refs0"] = subprocess.run(
            ["git", "for-each-ref"], cwd=bare, capture_output=True, text=True, check=True
        ).stdout
        got["mcp"] = session(
            lab,
            [
                ("status", "status", {}),
                ("log", "log", {"path": "plans/rp"}),
                ("wait", "wait", {"path": "plans/rp", "timeout": 0}),
                ("submit", "submit", {"plan": PC, "slug": "rsub"}),
                ("submit-pr", "submit", {"plan": PC, "slug": "rsubpr", "pull_request": True}),
            ],
        )
        got["refs1"] = subprocess.run(
            ["git", "for-each-ref"], cwd=bare, capture_output=True, text=True, check=True
        ).stdout
        cli = lab.cli("status", "--json", "--config", str(cfg))
        got["cli_status"] = json.loads(cli.stdout)
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    return got


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_all(
        tmp_path_factory.mktemp("r127b"), {"c": build_c, "p": build_p, "r": build_r}
    ).got


def _ok(ans: dict[str, Any]) -> dict[str, Any]:
    assert not ans["error"], ans["text"]
    assert isinstance(ans["data"], dict), ans["text"]
    return ans["data"]


# -- formats: validate and submit agree, the schema agrees ----------------------------------
@pytest.mark.parametrize("slug", [s for s in FORMATS if s != "ymlself"])
def test_fmt_hash(labs: Any, slug: str) -> None:
    got = labs["c"]["mcp"]
    v, s = _ok(got[f"v:{slug}"]), _ok(got[f"s:{slug}"])
    assert v["valid"] is True, v
    assert s["ok"] is True and s["submitted"] is True, s
    assert v["hash"] == s["hash"], (v, s)
    assert v["format"] == s["format"], (v, s)


@pytest.mark.parametrize("slug", list(FORMATS))
def test_fmt_schema(labs: Any, slug: str) -> None:
    import jsonschema

    v = _ok(labs["c"]["mcp"][f"v:{slug}"])
    text = v.get("plan_yml") or FORMATS[slug]
    doc = load_yaml(text)
    errors = [
        e.message for e in jsonschema.Draft202012Validator(labs["c"]["schema"]).iter_errors(doc)
    ]
    assert errors == [], (errors[:5], text[:800])


# -- what ran is what show displayed -----------------------------------------------------
@pytest.mark.parametrize("slug", APPROVED)
def test_run_as_shown(labs: Any, slug: str) -> None:
    lab: Lab = labs["c"]["lab"]
    calls = lab.calls(slug)
    assert len(calls) == 1, calls
    got = json.loads(calls[0]["stdin"])
    assert got == EXPECT[slug], got
    shown = labs["c"]["shown"][slug]["actions"][0]["params"]
    if slug in ("psec", "tsec"):
        assert shown["t"] == "$<secrets.TOK>", shown
        shown = {**shown, "t": SECRET}
    inputs = labs["c"]["shown"][slug].get("inputs") or {}
    filled = {
        k: (
            inputs[v[len("$<inputs.") : -1]]
            if isinstance(v, str) and v.startswith("$<inputs.")
            else v
        )
        for k, v in shown.items()
    }
    assert filled == got, (shown, got)
    assert labs["c"]["rows"][f"plans/{slug}"]["status"] == "completed", labs["c"]["rows"][
        f"plans/{slug}"
    ]


@pytest.mark.parametrize("slug", SELF)
def test_self_approval(labs: Any, slug: str) -> None:
    lab: Lab = labs["c"]["lab"]
    assert lab.calls(slug) == []
    row = labs["c"]["rows"][f"plans/{slug}"]
    assert row["status"] == "pending_approval", row
    assert not row.get("approver"), row
    s = _ok(labs["c"]["mcp"][f"s:{slug}"])
    assert s["status"] == "pending_approval", s


def test_self_approval_submit_refused(labs: Any) -> None:
    """A PLAN.yml saying ``status: approved`` is refused by ``submit`` (docs/agents.md:
    "submit refuses a plan whose status is not draft/pending_approval"): coded, nothing
    committed, nothing ran."""
    ans = labs["c"]["mcp"]["s:ymlself"]
    assert ans["error"], ans["text"]
    _coded(ans["data"])
    assert ans["data"]["code"] == "E_ILLEGAL_TRANSITION", ans["data"]
    lab: Lab = labs["c"]["lab"]
    assert not (lab.repo / "plans" / "ymlself").exists()
    assert "plans/ymlself" not in labs["c"]["rows"]
    assert lab.calls("ymlself") == []


# -- refusals: coded, located, with a remedy; nothing left behind ---------------------------
def _coded(err: dict[str, Any]) -> None:
    assert re.fullmatch(r"E_[A-Z_]+", str(err.get("code"))), err
    assert err.get("message"), err
    assert err.get("remedy"), err
    assert "Traceback" not in json.dumps(err), err


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refusal(labs: Any, case: str) -> None:
    ans = labs["c"]["mcp"][f"r:{case}"]
    assert "Traceback" not in ans["text"], ans["text"]
    data = ans["data"]
    assert isinstance(data, dict), ans["text"]
    if ans["error"]:
        # an unknown tool is "that shape alone" (docs/agents.md, Errors, every tool)
        if case != "tool-approve":
            assert ans["text"].startswith("Error executing tool "), ans["text"]
        assert data.get("ok") is False, data
        _coded(data)
        assert "path" in data and "line" in data, data
    else:
        assert data.get("ok") is False or data.get("valid") is False, data
        assert data.get("submitted") in (False, None), data
        assert data.get("errors"), data
        for err in data["errors"]:
            _coded(err)
            assert "path" in err, err
    lab: Lab = labs["c"]["lab"]
    slug = REFUSALS[case][1].get("slug")
    if slug and slug != "ap":
        assert not (lab.repo / "plans" / slug).exists()


def test_refusals_left_nothing(labs: Any) -> None:
    assert labs["c"]["before_refusals"] == labs["c"]["after_refusals"]
    refs = labs["c"]["after_refusals"]["refs"].splitlines()
    # the one pull-request branch made before the refusals: the nested plan's (fix128g)
    assert [r for r in refs if "plangate/" in r and "plangate/r-nestedpr " not in r] == []


# -- the repository changed under the open session ----------------------------------------
def test_chg_submit_on_side_branch_named(labs: Any) -> None:
    """Submitted while the working tree is on ``side``: the answer names the branch the
    commit is on (docs/agents.md: "on the watched branch (the working tree's checked-out
    branch)"), or it is refused coded; either way it is not on main unannounced."""
    ans = labs["c"]["mcp"]["c:w2"]
    if ans["error"]:
        _coded(ans["data"])
        return
    data = ans["data"]
    lab: Lab = labs["c"]["lab"]
    branch = data["branch"]
    tip = lab.head(f"refs/heads/{branch}")
    assert lab.git("merge-base", "--is-ancestor", data["commit"], tip, check=False) == ""
    if branch != "main":
        assert not labs["c"]["main_has_w2"]


def test_chg_deleted_plan_log(labs: Any) -> None:
    ans = labs["c"]["mcp"]["c:w1-log"]
    assert ans["error"], ans["text"]
    _coded(ans["data"])


def test_chg_deleted_plan_wait(labs: Any) -> None:
    data = _ok(labs["c"]["mcp"]["c:w1-wait"])
    assert data["status"] is None and data["changed"] is True, data


def test_chg_deleted_plan_status(labs: Any) -> None:
    ans = labs["c"]["mcp"]["c:w1-status"]
    if ans["error"]:
        _coded(ans["data"])
    else:
        assert ans["data"]["plans"] == [] or all(
            p.get("status") in (None, "deleted") for p in ans["data"]["plans"]
        ), ans["data"]


def test_chg_nothing_unapproved_ran(labs: Any) -> None:
    lab: Lab = labs["c"]["lab"]
    for slug in ("w1", "w2", "pcself", "ymlself", "badtool"):
        assert lab.calls(slug) == [], slug


# -- converted order: what show lists is the order things run --------------------------------
def test_run_order_as_shown(labs: Any) -> None:
    lab: Lab = labs["c"]["lab"]
    ran = [json.loads(c["stdin"])["o"] for c in lab.calls("tj")]
    shown = [a["params"]["o"] for a in labs["c"]["shown"]["tj"]["actions"]]
    assert ran == shown == ["a", "b"], (ran, shown)


# -- a secret a converted plan refers to: never shown by an agent surface ---------------------
@pytest.mark.parametrize(
    "key", ["sec:log:psec", "sec:status:psec", "sec:log:tsec", "sec:status:tsec", "sec:status"]
)
def test_secret_not_shown(labs: Any, key: str) -> None:
    ans = labs["c"]["mcp"][key]
    assert not ans["error"], ans["text"]
    assert SECRET not in json.dumps(ans["data"]), ans["text"][:2000]


def test_secret_not_in_history_or_show(labs: Any) -> None:
    lab: Lab = labs["c"]["lab"]
    for slug in ("psec", "tsec"):
        assert SECRET not in lab.history(slug)
        assert SECRET not in json.dumps(show_json(lab, slug))
    assert (lab.repo / "plans").exists()


# -- a wait in flight while the working tree moves to another branch ------------------------
def test_chg_wait_while_switched(labs: Any) -> None:
    """``wait`` on ``plans/pcself`` (pending on main) while Alice switches the controller's
    working tree to ``side3``, where the plan is deleted: the answer is a coded refusal (as
    ``status``/``submit`` answer on another branch: ``E_GIT``) or no change; never "the plan
    is gone" (``status: null``, ``changed: true``) while main still holds it pending."""
    ans = labs["c"]["mcp"]["c:wait-switch"]
    if ans["error"]:
        _coded(ans["data"])
        return
    data = ans["data"]
    assert not (data["changed"] and data["status"] is None), data


def test_chg_rewrite_nothing_ran(labs: Any) -> None:
    lab: Lab = labs["c"]["lab"]
    for slug in ("hr", "hr2"):
        assert lab.calls(slug) == [], slug
    for key in ("c:hr-status", "c:hr-status2", "c:hr-log", "c:hr2"):
        ans = labs["c"]["mcp"][key]
        assert "Traceback" not in ans["text"], ans["text"]
        if ans["error"]:
            _coded(ans["data"])


# -- what an agent is told after a conversion refusal ------------------------------------------
@pytest.mark.parametrize("case", list(NAMED))
def test_validate_names_format(labs: Any, case: str) -> None:
    """docs/agents.md: a PLAN.yml holding an ``approval:`` block "is then read as the ``pte``
    format and converted ... and the answer's ``format`` says ``pte``"; ``validate``'s answer
    carries ``format``. The errors are located in that format's fields, so it was detected."""
    data = _ok(labs["c"]["mcp"][f"n:{case}"])
    assert data["valid"] is False, data
    assert data["errors"], data
    assert data["format"] == NAMED[case][1], data


@pytest.mark.parametrize("key", ["n:nested", "r:nested-plan", "r:nested-plan-pr"])
def test_nested_plan_told_what_to_do(labs: Any, key: str) -> None:
    """An ActionPlan with a ``nested_plan`` step sent to MCP ``validate``/``submit`` (agents.md:
    "any format of docs/formats.md (converted first)"): submitted, or refused with a remedy
    the agent can follow over MCP (SPEC: every error names a remedy; agents.md step 8: "read
    its code, path and remedy, fix that and call again"), never "pass -o DIR", an option
    of ``plangate convert`` that no MCP tool takes."""
    ans = labs["c"]["mcp"][key]
    data = ans["data"]
    assert isinstance(data, dict), ans["text"]
    if data.get("ok") is True:
        return
    errs = data.get("errors") or [data]
    for err in errs:
        told = f"{err.get('message')} {err.get('remedy')}"
        assert "-o DIR" not in told and "pass -o" not in told, err


@pytest.mark.parametrize("case", list(NESTED_SUBMITS))
def test_nested_plan_submitted_with_its_nested_plan(labs: Any, case: str) -> None:
    """fix128g: ``submit`` writes the nested plan where the daemon's conversion of a source
    in the folder would (``plans/<slug>/step-1``, docs/formats.md), in the same commit; the
    plan waits for a person's approval and nothing of it ran."""
    data = _ok(labs["c"]["mcp"][f"r:{case}"])
    slug = NESTED_SUBMITS[case]["slug"]
    assert data["submitted"] is True and data["format"] == "actionplan", data
    assert data["nested"] == [
        {"path": f"plans/{slug}/step-1", "file": f"plans/{slug}/step-1/PLAN.yml"}
    ], data
    lab: Lab = labs["c"]["lab"]
    files = lab.git("show", "--name-only", "--format=", data["commit"]).split()
    assert sorted(files) == [f"plans/{slug}/PLAN.yml", f"plans/{slug}/step-1/PLAN.yml"], files
    inner = load_yaml(lab.git("show", f"{data['commit']}:plans/{slug}/step-1/PLAN.yml"))
    assert inner["actions"][0]["params"] == {"tag": "nin"}, inner
    if not NESTED_SUBMITS[case].get("pull_request"):
        assert labs["c"]["rows"][f"plans/{slug}"]["status"] == "pending_approval"
    assert lab.calls("nin") == []


# -- the page and MCP with 2,000 plans and a plan at the size limit ---------------------------
def test_page_ready(labs: Any) -> None:
    assert labs["p"]["ready"], labs["p"]["daemon_err"][-2000:]
    assert "Traceback" not in labs["p"]["daemon_err"], labs["p"]["daemon_err"][-3000:]


def test_page_overview_bounded(labs: Any) -> None:
    st, body = labs["p"]["overview"]
    assert st == 200, body[:500]
    view = json.loads(body)
    assert view["counts"].get("draft") == MANY, view["counts"]
    for sec in view["sections"]:
        assert len(sec["plans"]) <= 100, (sec["status"], len(sec["plans"]))
    assert len(body) < 500_000, len(body)


def test_page_pages_every_plan_once(labs: Any) -> None:
    seen: list[str] = []
    for n in range(1, MANY // 100 + 1):
        st, body = labs["p"]["pages"][n]
        assert st == 200, (n, body[:300])
        (sec,) = [x for x in json.loads(body)["sections"] if x["status"] == "draft"]
        assert sec["page"] == n and sec["pages"] == MANY // 100, sec | {"plans": None}
        seen += [p["plan"] for p in sec["plans"]]
    assert sorted(seen) == sorted(f"plans/d/p{i:04d}" for i in range(MANY))


def test_page_past_last_refused(labs: Any) -> None:
    st, body = labs["p"]["pages"][MANY // 100 + 1]
    assert st == 400, body[:300]
    err = json.loads(body)
    _coded(err)
    assert err["code"] == "E_USAGE" and str(MANY // 100) in err["remedy"], err


def test_page_too_large_plan(labs: Any) -> None:
    for key in ("toobig", "huge"):
        st, body = labs["p"][key]
        assert st == 200, body[:300]
        assert json.loads(body)["row"]["code"] == "E_PLAN_TOO_LARGE", body[:600]
    assert b"y" * 1000 not in labs["p"]["toobig"][1]


def test_mcp_status_all_rows(labs: Any) -> None:
    data = _ok(labs["p"]["mcp"]["status"])
    plans = {p["plan"] for p in data["plans"]}
    assert len([p for p in plans if p.startswith("plans/d/")]) == MANY
    assert {"plans/huge", "plans/toobig"} <= plans


@pytest.mark.parametrize(
    "key",
    ["status-toobig", "log-toobig", "status-badutf", "log-badutf", "status-link", "log-link"],
)
def test_mcp_unreadable_coded(labs: Any, key: str) -> None:
    """A plan the controller does not read (over ``limits.max_plan_bytes``, not UTF-8, a
    link): MCP ``status`` and ``log`` say why with its code (docs/operations.md: "a bigger
    one is never read, and the page and ``/api/plan/<id>`` give the row's own
    E_PLAN_TOO_LARGE ..., as ``status``, MCP and ``show`` do"; docs/agents.md, ``log``:
    "where the controller did not take the file's status ``problems`` names why")."""
    ans = labs["p"]["mcp"][key]
    assert "Traceback" not in ans["text"], ans["text"]
    assert "y" * 1000 not in ans["text"]
    if ans["error"]:
        _coded(ans["data"])
        return
    data = ans["data"]
    if key.startswith("status"):
        (row,) = data["plans"]
        assert re.search(r"E_[A-Z_]+", json.dumps(row)), row
        return
    assert re.search(r"E_[A-Z_]+", json.dumps(data["problems"])), data


def test_mcp_wait_draft_unchanged(labs: Any) -> None:
    data = _ok(labs["p"]["mcp"]["wait-draft"])
    assert data["status"] == "draft" and data["changed"] is False, data


@pytest.mark.parametrize("slug", ["toobig", "badutf"])
def test_mcp_log_file_status_as_status(labs: Any, slug: str) -> None:
    """MCP ``log``'s ``file_status`` is "the plan file's as committed", as the ``status`` row
    reads it: for a file the controller never reads (over the size limit, not UTF-8) the row
    has ``file_status: null``; ``log`` answered ``pending_approval``, read from that file."""
    (row,) = _ok(labs["p"]["mcp"][f"status-{slug}"])["plans"]
    log = _ok(labs["p"]["mcp"][f"log-{slug}"])
    assert log["file_status"] == row["file_status"], (log, row)


def test_mcp_wait_unreadable(labs: Any) -> None:
    ans = labs["p"]["mcp"]["wait-toobig"]
    if ans["error"]:
        _coded(ans["data"])
        return
    assert ans["data"]["status"] == "unreadable" and ans["data"]["changed"] is False, ans["data"]


# -- remote mode: the tools the docs say are not served refuse it, coded; nothing pushed ------
@pytest.mark.parametrize("key", ["log", "wait", "submit", "submit-pr"])
def test_remote_refused_coded(labs: Any, key: str) -> None:
    """docs/agents.md: "Remote mode (``remote:``) is not served yet: run it on a clone in
    local mode"."""
    ans = labs["r"]["mcp"][key]
    assert ans["error"], ans["text"]
    _coded(ans["data"])
    assert ans["data"]["code"] == "E_CONFIG_INVALID", ans["data"]


def test_remote_nothing_pushed(labs: Any) -> None:
    assert labs["r"]["refs0"] == labs["r"]["refs1"]
    assert "plangate/" not in labs["r"]["refs1"]


def test_remote_status_as_cli(labs: Any) -> None:
    """MCP ``status`` is "as ``plangate status --json``": the same rows in remote mode."""
    data = _ok(labs["r"]["mcp"]["status"])
    mcp_rows = {p["plan"]: (p["status"], p["hash"]) for p in data["plans"]}
    cli_rows = {p["plan"]: (p["status"], p["hash"]) for p in labs["r"]["cli_status"]}
    assert mcp_rows == cli_rows, (mcp_rows, cli_rows)
    assert mcp_rows["plans/rp"][0] == "pending_approval"
