# ruff: noqa: E501
"""Round 19, secrets never reach git: a secret straddling the controller's own 200-character
cut of an output value in the ``execution:`` block.

docs/execution.md: output values "longer than 200 characters as JSON are shown cut (the log has
them whole)" in PLAN.yml; the redactor promises that "a secret cut in the middle keeps
nothing" for the cuts it lists (a stream cut at ``max_result_bytes``, a message shortened
with an ellipsis). This cut is the controller's, in a block written into the plan.

The exec tool ``emit`` holds the secret in its own catalog ``env`` (as a tool with its own
credentials) and prints ``{"v": "A" * n + SECRET + "B" * 30}``; the plan captures ``$.json.v``
as an output. Variants ``c<n>``: ``n`` from 182 to 199, so the 16-character secret begins
before, at and inside the last characters kept. Asserted (held, all): no 4 characters of the
secret's start are anywhere in ``git log --all -p``, nor 5 in ``plangate status --json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

SECRET = "Zq8wLm3TxR7vNp2K"
OFFSETS = [182, 190, 194, 196, 197, 198, 199]


def _build(root: Path) -> Lab:
    (root / "emit.py").write_text(
        "import json, os, sys\nsys.stdin.read()\nn = int(sys.argv[1])\n"
        'print(json.dumps({"v": "A" * n + os.environ["MYSEC"] + "B" * 30}))\n'
    )
    emit = json.dumps([sys.executable, str(root / "emit.py"), "{n}"])
    lab = Lab(root, tools=f"emit: {{kind: exec, argv: {emit}, env: {{MYSEC: {SECRET}}}}}\n")
    lab.extra_env = {"PLANGATE_SECRET_TOK": SECRET}  # type: ignore[attr-defined]
    for n in OFFSETS:
        lab.write(
            f"c{n}",
            f"plan: {{name: c{n}, task: t, status: pending_approval}}\n"
            "available_tools: [{name: emit}]\nactions:\n"
            f"  - {{id: 1, tool: emit, why: w, params: {{n: {n}}}, outputs: [{{name: o, path: $.json.v}}]}}\n",
        )
    lab.commit("plans")
    lab.run()
    for n in OFFSETS:
        path = lab.repo / "plans" / f"c{n}" / "PLAN.yml"
        path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))
    lab.commit("approve", ALICE)
    lab.run()
    lab.history = lab.git("log", "--all", "-p")  # type: ignore[attr-defined]
    lab.status_text = lab.cli("status", "--json", "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r19-secretcut", _build)


def test_the_plans_completed(lab: Lab) -> None:
    rows = lab.status()
    assert all(rows[f"plans/c{n}"]["status"] == "completed" for n in OFFSETS), rows


@pytest.mark.parametrize("n", OFFSETS, ids=[f"c{n}" for n in OFFSETS])
def test_no_start_of_the_secret_is_committed(lab: Lab, n: int) -> None:
    block = lab.git("show", f"HEAD:plans/c{n}/PLAN.yml").split("\nexecution:", 1)[1]
    assert "AAAA" in block
    assert SECRET[:4] not in block
    assert SECRET[:4] not in lab.history  # type: ignore[attr-defined]
    assert SECRET[:5] not in lab.status_text  # type: ignore[attr-defined]
