# ruff: noqa: E501
"""Round 24, at most once vs exactly the approved actions: idempotency keys of a pinned plan
used twice.

docs/execution.md: the key is ``step:<SHA-256(frozen hash ":" action id)>``. ``plans/par``
pins the same child (``plans/child``, one action calling ``ik`` with ``to: $<inputs.to>``)
twice: action 1 with ``to: bob``, action 2 with ``to: carol``. If both nested calls shared
one key (the child's hash and action id are the same), a tool deduplicating on it (a
payments API) would answer Carol's call with Bob's result: an approved action never done.

``ik`` logs its stdin, ``PLANGATE_IDEMPOTENCY_KEY`` and ``PLANGATE_PLAN``. Asserted: two calls
(bob, carol), each once, with two different keys; the plan completed. Held.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

IK = "import os, sys, json\nd = sys.stdin.read()\nopen(os.environ['REC_LOG'], 'a').write(json.dumps({'argv': ['ik'], 'stdin': d, 'key': os.environ.get('PLANGATE_IDEMPOTENCY_KEY')}) + '\\n')\nprint('{}')\n"


def _build(root: Path) -> Lab:
    (root / "ik.py").write_text(IK)
    tools = f"ik: {{kind: exec, argv: {json.dumps([sys.executable, str(root / 'ik.py')])}, env: {{REC_LOG: {json.dumps(str(root / 'ran.log'))}}}}}\n"
    lab = Lab(root, tools=tools)
    lab.write(
        "child",
        'plan:\n  name: c\n  task: t\n  status: draft\ninputs: {to: d}\navailable_tools: [{name: ik}]\nactions:\n  - {id: 1, tool: ik, why: w, params: {to: "$<inputs.to>"}}\n',
    )
    lab.commit("child")
    pin = lab.cli("hash", str(lab.repo / "plans" / "child")).stdout.split()[0]
    lab.write(
        "par",
        f'plan:\n  name: p\n  task: t\n  status: pending_approval\navailable_tools: [{{name: ik}}]\nactions:\n  - {{id: 1, plan: {{path: plans/child, hash: "{pin}"}}, why: w, inputs: {{to: bob}}}}\n  - {{id: 2, plan: {{path: plans/child, hash: "{pin}"}}, why: w, inputs: {{to: carol}}}}\n',
    )
    lab.commit("parent")
    lab.run()
    lab.approve("par", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r24-idemkey", _build)


def test_each_nested_use_has_its_own_key(lab: Lab) -> None:
    rows = [json.loads(line) for line in lab.log.read_text().splitlines()]
    assert sorted(json.loads(r["stdin"])["to"] for r in rows) == ["bob", "carol"], rows
    assert len({r["key"] for r in rows}) == 2, rows
    assert lab.status()["plans/par"]["status"] == "completed"
