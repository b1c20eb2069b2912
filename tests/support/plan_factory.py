"""Building plan documents and files for tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

BASE_TEXT = """\
# A plan written by an agent
plan:
  name: "Rotate keys"   # shown to reviewers
  task: 'Rotate the API keys of the staging service'
  status: pending_approval
  created: "2026-11-22T10:00:00Z"
metadata:
  agent: planner-7
inputs:
  service: staging
  count: 2
available_tools:
  - name: echo
    description: "Returns its params"
actions:
  - id: 1
    tool: echo
    why: "List the keys"
    params:
      service: "$<inputs.service>"
      limit: 10
    outputs:
      - name: keys
        path: "$.service"
  - id: 2
    tool: echo
    why: "Rotate the first key"
    params:
      key: "$<actions[1].outputs.keys>"
      note: "rotating $<inputs.service> ($<inputs.count> keys)"
    on_failure: retry
    retries: 2
"""


def base_data() -> dict[str, Any]:
    """The data of BASE_TEXT as a dict (for property tests)."""
    return copy.deepcopy(
        {
            "plan": {
                "name": "Rotate keys",
                "task": "Rotate the API keys of the staging service",
                "status": "pending_approval",
                "created": "2026-11-22T10:00:00Z",
            },
            "metadata": {"agent": "planner-7"},
            "inputs": {"service": "staging", "count": 2},
            "available_tools": [{"name": "echo", "description": "Returns its params"}],
            "actions": [
                {
                    "id": 1,
                    "tool": "echo",
                    "why": "List the keys",
                    "params": {"service": "$<inputs.service>", "limit": 10},
                    "outputs": [{"name": "keys", "path": "$.service"}],
                },
                {
                    "id": 2,
                    "tool": "echo",
                    "why": "Rotate the first key",
                    "params": {
                        "key": "$<actions[1].outputs.keys>",
                        "note": "rotating $<inputs.service> ($<inputs.count> keys)",
                    },
                    "on_failure": "retry",
                    "retries": 2,
                },
            ],
        }
    )


def write_plan(folder: Path, text: str = BASE_TEXT, name: str = "rotate") -> Path:
    path = folder / "plans" / name / "PLAN.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
