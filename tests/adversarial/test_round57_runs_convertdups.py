# ruff: noqa: E501
"""Round 57 (runs): a converted source that names one field twice.

docs/formats.md, "Rules that hold for every format": "Nothing is dropped silently. A source
field is either mapped, kept in metadata, or refused", and "Every value has its type, read
strictly" (round 53: a gate written ``"true"`` converted to no gate). PLAN.yml and the YAML
sources are read "with plangate's strict reader (no anchors, aliases, tags or duplicate
keys)", and TOON refuses a duplicate key. A JSON source (ActionPlan, Plan Contract, Agent
Plan, a model's reply, the ``PLAN.json`` the daemon converts) and the markdown plan format
may say a field twice: RFC 8259 leaves the meaning to the reader, so the agent's
``"requires_approval": true, "requires_approval": false`` reads as a gate in the source a
person reads (a diff, a forge's JSON view, a first-wins reader) while the converter keeps
one of the two and says nothing.

Lab: sources written by the test, ``plangate convert --json`` on each (per id, one source,
one field said twice); and lab ``dj`` (local mode): the agent commits a ``PLAN.json``
(Plan Contract) whose step 2 says ``requires_approval`` twice, ``true`` then ``false``; the
daemon's pass converts and freezes it, Alice approves once, one more pass.

Asserted: a source with a field said twice is refused (``ok: false``, an ``E_`` code), never
converted with one of its values dropped; end to end, action 2 never runs on the first
approval. Controls: the same sources said once convert; TOON and PLAN.yml (``pte``) refuse
a duplicate key.

Result: **broke** (17 ids, one class: a field said twice keeps its last value, the other
dropped without a word, ``ok: true``, valid). JSON sources: Plan Contract ``requires_approval``
``true, false`` (the gate is gone; ``false, true`` keeps it, still silently), ``args`` ``to``
twice (the second address reaches the tool), ``steps`` twice (the first list, with its
gate, is gone), ``policy_context.max_tool_calls`` ``1, 500`` (the cap becomes 500); Agent
Plan ``requires_approval`` and ``tool.kind`` twice; ActionPlan ``idempotent: false, true``
(the step becomes idempotent: re-run after a crash) and top-level ``preconditions`` twice
(the check is gone); a model's reply in a fenced block. Markdown: a step's ``Timeout`` twice
(30 s -> 900 s), ``Parameters`` JSON with a key twice, ``Parallel Execution`` twice, a
``## Shared Inputs`` bullet twice (``target: staging``, ``target: production`` ->
production). End to end (``daemon-gate``): the agent's committed ``PLAN.json`` shows
``"requires_approval": true`` on step 2, the daemon's convert commit has no gate, and
Alice's first approval ran action 2 at once (``completed``). The MCP server's ``validate``
answers ``valid: true`` with the gate gone, and ``submit`` commits it (2).
Held: TOON (``Duplicate key``) and ``pte``/PLAN.yml's strict YAML reader refuse a duplicate
key; the controls convert.
Should: read JSON with an ``object_pairs_hook`` that refuses a name said twice at its
location (E_SCHEMA_INVALID, as the YAML and TOON readers do), and a markdown bullet said
twice likewise.

Fixed (2026-11-29): every JSON a source holds is read by one strict reader
(``plan.convert.jsonread``: PLAN.json, Agent Plan, Plan Contract, ActionPlan, a fenced reply,
MCP ``validate``/``submit``, markdown ``Parameters``/lists/``## Shared Inputs``): a member
said twice is E_SCHEMA_INVALID at its location (``steps[0].requires_approval``) with a
remedy, and every problem of the source is reported at once. A markdown bullet said twice
(a step's field, ``## Workflow Config``, a ``## Shared Inputs`` bullet) is refused at its
line. End to end the daemon's pass refuses the ``PLAN.json`` (nothing converted, nothing
ran); MCP ``validate`` says ``valid: false`` and ``submit`` commits nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import ALICE, BenchError, Lab, cases
from test_round2_execution_kit import shared

ROOT = Path(__file__).resolve().parents[2]
MD = (ROOT / "examples/formats/toon-plan-core.md").read_text()
GATE_PC = '{"plan_version": 1, "goal": "g", "steps": [{"step_id": "a", "tool": "rec", "args": {"tag": "x"}, "requires_approval": true, "requires_approval": false}]}'


def _agent(step: str) -> str:
    return '{"title": "t", "steps": [' + step + "]}"


AP_STEP = '{"id": "s1", "title": "a", "detail": "b", "tool": {"kind": {"Custom": {"name": "rec", "payload": {"tag": "x"}}}}, "validations": [], %s}'
ACT = '{"plan_version": 1, "plan_id": "p", "title": "t", "workspace_id": "/w", "created_at": 1, "steps": [{"step_number": 1, "step_id": "s", "action": {"type": "send_text", "pane_id": 0, "text": "hi"}, "description": "d", "preconditions": [], "verification": null, "on_failure": null, "timeout_ms": 1000, %s}], %s}'
TOON = "metadata:\n  title: T\n  objective: o\nsteps[1]{id,task_id,action,step_type,timeout}:\n  step_1,task_1,run_prediction,AGENT_EXECUTION,30\nshared_inputs: {}\nworkflow_config:\n  parallel_execution: true\n  parallel_execution: false\n"
PTE = "plan:\n  name: n\n  task: t\n  status: pending_approval\nactions:\n  - id: 1\n    tool: rec\n    why: w\n    requires_approval: true\n    requires_approval: false\n    params: {tag: x}\n"

# id: (file name, source text, said twice?)
SOURCES: dict[str, tuple[str, str, bool]] = {
    "pc-gate": ("pc.json", GATE_PC, True),
    "pc-gate-reversed": (
        "pc.json",
        GATE_PC.replace('true, "requires_approval": false', 'false, "requires_approval": true'),
        True,
    ),
    "pc-args": (
        "pc.json",
        '{"plan_version": 1, "goal": "g", "steps": [{"step_id": "a", "tool": "rec", "args": {"to": "ops@corp.example", "to": "evil@attacker.example"}}]}',
        True,
    ),
    "pc-steps": (
        "pc.json",
        '{"plan_version": 1, "goal": "g", "steps": [{"step_id": "a", "tool": "rec", "args": {}, "requires_approval": true}], "steps": [{"step_id": "a", "tool": "rec", "args": {}}]}',
        True,
    ),
    "pc-limits": (
        "pc.json",
        '{"plan_version": 1, "goal": "g", "policy_context": {"max_tool_calls": 1, "max_tool_calls": 500}, "steps": [{"step_id": "a", "tool": "rec", "args": {}}]}',
        True,
    ),
    "agent-gate": (
        "ap.json",
        _agent(AP_STEP % '"requires_approval": true, "requires_approval": false'),
        True,
    ),
    "agent-kind": (
        "ap.json",
        _agent(
            AP_STEP.replace(
                '"kind": {"Custom"',
                '"kind": {"Custom": {"name": "rec", "payload": {"tag": "y"}}}, "kind": {"Custom"',
            )
            % '"requires_approval": false'
        ),
        True,
    ),
    "actionplan-idempotent": (
        "act.json",
        ACT % ('"idempotent": false, "idempotent": true', '"preconditions": []'),
        True,
    ),
    "actionplan-preconditions": (
        "act.json",
        ACT
        % (
            '"idempotent": true',
            '"preconditions": [{"type": "pane_exists", "pane_id": 0}], "preconditions": []',
        ),
        True,
    ),
    "reply-fenced": ("reply.md", "```json\n" + GATE_PC + "\n```\n", True),
    "md-timeout": (
        "PLAN.md",
        MD.replace("- **Timeout**: 30s\n", "- **Timeout**: 30s\n- **Timeout**: 900s\n"),
        True,
    ),
    "md-params": (
        "PLAN.md",
        MD.replace(
            "- **Parameters**: {}\n",
            '- **Parameters**: {"to": "ops@corp.example", "to": "evil@attacker.example"}\n',
        ),
        True,
    ),
    "md-workflow": (
        "PLAN.md",
        MD.replace(
            "- Parallel Execution: false\n",
            "- Parallel Execution: false\n- Parallel Execution: true\n",
        ),
        True,
    ),
    "md-inputs": (
        "PLAN.md",
        MD.replace(
            "## Shared Inputs\n(Optional shared data)\n",
            "## Shared Inputs\n- target: staging\n- target: production\n",
        ),
        True,
    ),
    "toon": ("t.toon", TOON, True),
    "pte": ("p.yml", PTE, True),
    "control-pc": ("pc.json", GATE_PC.replace(', "requires_approval": false', ""), False),
    "control-md": ("PLAN.md", MD, False),
}
IDS = list(SOURCES)
BROKEN: dict[str, Any] = {}


def _convert(tmp: Path, vid: str) -> dict[str, Any]:
    name, text, _ = SOURCES[vid]
    folder = tmp / vid
    folder.mkdir()
    (folder / name).write_text(text)
    result = subprocess.run(
        [str(Path(sys.executable).parent / "plangate"), "convert", "--json", name],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return {"rc": result.returncode, "out": result.stdout, "err": result.stderr}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_said_twice_is_refused(tmp_path: Path, vid: str) -> None:
    got = _convert(tmp_path, vid)
    first = json.loads(got["out"].splitlines()[0]) if got["out"].strip() else {}
    if not SOURCES[vid][2]:
        assert got["rc"] == 0 and first.get("ok") is True, got
        return
    assert got["rc"] != 0 and first.get("ok") is False, f"converted: {got['out'][:400]}"
    assert "E_" in json.dumps(first), got


# -- end to end: the daemon converts a committed PLAN.json ------------------------------
PLAN_JSON = (
    '{"plan_version": 1, "goal": "dup gate", "steps": ['
    '{"step_id": "a", "tool": "rec", "args": {"tag": "dj-1"}},'
    '{"step_id": "b", "tool": "rec", "args": {"tag": "dj-2"}, "requires_approval": true, "requires_approval": false}]}'
)
E2E = ["daemon-gate", "daemon-control"]
E2E_BROKEN: dict[str, Any] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root / "dj", extra="agent: {identity: {name: Agent, email: agent@example.com}}\n")
    lab.write("daemon-gate", PLAN_JSON, "PLAN.json")
    lab.write(
        "daemon-control",
        PLAN_JSON.replace('"dj-', '"dc-').replace(', "requires_approval": false', ""),
        "PLAN.json",
    )
    lab.commit("plans as Plan Contract JSON")
    lab.run()
    for vid in E2E:
        path = lab.repo / "plans" / vid / "PLAN.yml"
        text = path.read_text() if path.exists() else ""
        if vid == "daemon-control" and 'status: "pending_approval"' not in text:
            raise BenchError(f"{vid} not converted: {text[:300]}")
        if path.exists():
            path.write_text(text.replace('status: "pending_approval"', "status: approved", 1))
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def dj(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r57-convertdups", _build)


@pytest.mark.parametrize("vid", cases(E2E, E2E, E2E_BROKEN))
def test_the_gate_the_source_shows_holds(dj: Lab, vid: str) -> None:
    prefix = "dj" if vid == "daemon-gate" else "dc"
    try:
        plan = dj.plan(vid)
    except BenchError:  # refused: never converted, never ran
        assert vid == "daemon-gate" and dj.calls("dj-1") == dj.calls("dj-2") == []
        return
    status = plan["plan"]["status"]
    assert len(dj.calls(f"{prefix}-1")) == 1, json.dumps(plan.get("execution"), default=str)[:600]
    assert dj.calls(f"{prefix}-2") == [], f"{prefix}-2 ran on the first approval (status {status})"
    assert status == "awaiting_approval", status


# -- the MCP server's validate and submit (agents' channel) -----------------------------
MCP_IDS = ["mcp-validate", "mcp-submit"]
MCP_BROKEN: dict[str, Any] = {}


def _mcp(lab: Lab, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    message = mcpkit.call(lab, name, arguments, timeout=60)
    return dict(message.get("result") or message)


@pytest.mark.parametrize("vid", cases(MCP_IDS, MCP_IDS, MCP_BROKEN))
def test_mcp_refuses_a_field_said_twice(dj: Lab, vid: str) -> None:
    if vid == "mcp-validate":
        answer = _mcp(dj, "validate", {"plan": GATE_PC})
        data = answer.get("structuredContent") or {}
        assert "E_CONFIG" not in json.dumps(answer), answer
        assert answer.get("isError") or data.get("valid") is False, json.dumps(data)[:600]
        return
    answer = _mcp(dj, "submit", {"plan": GATE_PC, "slug": "mcp-dup"})
    data = answer.get("structuredContent") or {}
    assert "E_CONFIG" not in json.dumps(answer), answer
    assert answer.get("isError") or data.get("ok") is False, json.dumps(data)[:600]
    assert "mcp-dup" not in dj.git("ls-tree", "-r", "--name-only", "HEAD")
