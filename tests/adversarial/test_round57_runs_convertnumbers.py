# ruff: noqa: E501
"""Round 57 (runs): a number in a converted source that no double holds as written.

PLAN.yml refuses such a number (``plangate validate``: "the number 9007199254740993.0 has
no exact double: it would reach the tool and the hash as 9007199254740992.0; quote it");
the intake of a tool's answer refuses it too (docs/execution.md step 5, round 24:
``9007199254740993.0``, ``1e-400``). docs/formats.md: "Nothing is dropped silently" and
"Every value has its type, read strictly". A JSON, TOON or markdown source read by Python's
``json`` (or the ``toon-format`` library) rounds the number first, so the converted PLAN.yml holds another value than the
source (``9007199254740992.0``, ``0.0``, ``1.2345678901234568e+17``), is valid and runs:
the source the agent committed (a diff, the PR, the planner's own log) says one amount and
the tool gets another, with no word from the converter.

Lab: sources written by the test, ``plangate convert --json`` per id; lab ``cn`` (local
mode): the agent commits a Plan Contract ``PLAN.json`` whose step's ``args`` hold
``{"amount": 9007199254740993.0}``; the daemon converts it, Alice approves, one more pass.

Asserted: the source is refused (``ok: false`` or ``valid: false`` with an ``E_`` code) or
converted with the exact number; end to end ``rec`` never gets a number the source did not
say. Controls: ``pte`` (PLAN.yml's own reader, which refuses), a number a double holds
(``0.5``) converts.

Result: **broke** (10 ids, one class): Plan Contract ``args`` with ``9007199254740993.0``
(-> ``9007199254740992.0``), ``1e-400`` (-> ``0.0``), ``123456789012345678.5`` (->
``1.2345678901234568e+17``), the same nested in a list, in ``inputs``; Agent Plan
``payload``; a model's fenced reply; markdown ``Parameters``; TOON ``parameters``: each
converted ``ok: true``, valid, the number rounded. End to end (``daemon``): the committed
``PLAN.json`` says ``9007199254740993.0``, the daemon's convert commit and the hash hold
``9007199254740992.0``, and ``rec`` got ``9007199254740992.0`` on Alice's approval.
Held: ``pte`` (PLAN.yml's reader: "has no exact double ... quote it"), ``0.5``.
Should: read a source's numbers as written (``parse_float``/``parse_int`` hooks, TOON's
number text) and refuse the ones PLAN.yml refuses, at their location, with the same
remedy.

Fixed (2026-11-29): the strict source reader (``plan.convert.jsonread``) reads a JSON
number as written (its ``parse_float`` hook; TOON's through the same hook, markdown
``Parameters`` through the same reader) and refuses one no double holds with PLAN.yml's own
rule and message (``yamlio.InexactFloat.refusal``: "has no exact double ... quote it"),
E_SCHEMA_INVALID at its location (``steps[0].args.amount``). End to end the daemon never
converts the ``PLAN.json``, so ``rec`` is never called with another number.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BenchError, Lab, cases
from test_round2_execution_kit import shared

ROOT = Path(__file__).resolve().parents[2]
MD = (ROOT / "examples/formats/toon-plan-core.md").read_text()


def _pc(args: str, extra: str = "") -> str:
    return (
        '{"plan_version": 1, "goal": "g", '
        + extra
        + '"steps": [{"step_id": "a", "tool": "rec", "args": '
        + args
        + "}]}"
    )


AP = '{"title": "t", "steps": [{"id": "s1", "title": "a", "detail": "b", "tool": {"kind": {"Custom": {"name": "rec", "payload": %s}}}, "validations": [], "requires_approval": false}]}'
TOON = "metadata:\n  title: T\n  objective: o\nsteps[1]:\n  - id: step_1\n    task_id: task_1\n    action: rec\n    step_type: AGENT_EXECUTION\n    timeout: 30\n    parameters:\n      amount: 9007199254740993.0\nshared_inputs: {}\n"
PTE = "plan:\n  name: n\n  task: t\n  status: pending_approval\nactions:\n  - id: 1\n    tool: rec\n    why: w\n    params: {amount: 9007199254740993.0}\n"

# id: (file name, text, must be refused?)
SOURCES: dict[str, tuple[str, str, bool]] = {
    "pc-int-float": ("pc.json", _pc('{"amount": 9007199254740993.0}'), True),
    "pc-underflow": ("pc.json", _pc('{"amount": 1e-400}'), True),
    "pc-digits": ("pc.json", _pc('{"amount": 123456789012345678.5}'), True),
    "pc-nested": ("pc.json", _pc('{"order": {"lines": [{"qty": 9007199254740993.0}]}}'), True),
    "pc-inputs": (
        "pc.json",
        _pc('{"amount": "${inputs.amount}"}', '"inputs": {"amount": 9007199254740993.0}, '),
        True,
    ),
    "agent-payload": ("ap.json", AP % '{"amount": 9007199254740993.0}', True),
    "reply-fenced": ("reply.md", "```json\n" + _pc('{"amount": 1e-400}') + "\n```\n", True),
    "md-params": (
        "plan.md",
        MD.replace("- **Parameters**: {}\n", '- **Parameters**: {"amount": 9007199254740993.0}\n'),
        True,
    ),
    "toon-params": ("t.toon", TOON, True),
    "pte": ("p.yml", PTE, True),
    "control-half": ("pc.json", _pc('{"amount": 0.5}'), False),
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
def test_the_number_as_written(tmp_path: Path, vid: str) -> None:
    got = _convert(tmp_path, vid)
    first = json.loads(got["out"].splitlines()[0]) if got["out"].strip() else {}
    if not SOURCES[vid][2]:
        assert got["rc"] == 0 and first.get("ok") is True and first.get("valid") is True, got
        return
    refused = first.get("ok") is False or first.get("valid") is False
    assert refused and got["rc"] != 0, f"converted: {got['out'][:400]}"
    assert "E_" in json.dumps(first), got


PLAN_JSON = _pc('{"tag": "cn-1", "amount": 9007199254740993.0}')
E2E_BROKEN: dict[str, Any] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root / "cn")
    lab.write("daemon", PLAN_JSON, "PLAN.json")
    lab.commit("plan as Plan Contract JSON")
    lab.run()
    path = lab.repo / "plans/daemon/PLAN.yml"
    if path.exists():
        text = path.read_text()
        if 'status: "pending_approval"' not in text:
            raise BenchError(f"not converted as expected: {text[:300]}")
        path.write_text(text.replace('status: "pending_approval"', "status: approved", 1))
        lab.commit("approve", ALICE)
        lab.run()
    return lab


@pytest.fixture(scope="module")
def cn(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r57-convertnumbers", _build)


@pytest.mark.parametrize("vid", cases(["daemon"], ["daemon"], E2E_BROKEN))
def test_the_tool_gets_the_source_number(cn: Lab, vid: str) -> None:
    calls = cn.calls("cn-1")
    for call in calls:
        got = json.loads(call["stdin"])["amount"]
        assert str(got) in ("9007199254740993", "9007199254740993.0"), f"rec got amount {got}"
    if not calls:
        assert (
            not (cn.repo / "plans/daemon/PLAN.yml").exists()
            or cn.plan(vid)["plan"]["status"] != "completed"
        )
