"""What the plan-source rounds share (rounds 103, 105): the markdown plan every variant
starts from, ``plangate convert`` of one source with the converter alone, and reading the
converted plan back."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from advkit import Lab, load_yaml

#: One task, one step calling the recorder ``rec`` with ``{"tag": "TAG-ok"}``; ``TAG`` is
#: each variant's own (:func:`md`).
MD = """\
# Record plan

## Objective
Record a tag

## Tasks

### Task 1: Record
- **ID**: task_1
- **Description**: record one tag
- **Steps**: step_1

## Steps

### Step 1: Record ok
- **ID**: step_1
- **Task**: task_1
- **Action**: rec
- **Parameters**: {"tag": "TAG-ok"}
- **Timeout**: 30s
- **Dependencies**: []

## Shared Inputs
- to: ok@example.com

## Workflow Config
- Parallel Execution: false
- Error Recovery: false
"""


def md(tag: str) -> str:
    return MD.replace("TAG", tag)


def as_json(value: Any) -> str:
    return json.dumps(value, indent=1)


def convert_source(
    lab: Lab, folder: Path, name: str, content: str | bytes, fmt: str
) -> dict[str, Any]:
    """``plangate convert`` of ``content`` written to ``folder/name`` (no plangate.yml: the
    converter alone): ``{rc, err, plan}``, ``plan`` the converted PLAN.yml read back."""
    path = folder / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    told = ["--from", fmt] if fmt else []
    done = lab.cli("convert", *told, str(path), cwd=folder)
    got: dict[str, Any] = {"rc": done.returncode, "err": done.stderr[-1500:], "plan": None}
    if done.returncode == 0 and done.stdout.strip():
        got["plan"] = load_yaml(done.stdout)
    return got


def approve_file(lab: Lab, slug: str) -> None:
    """Set the converted ``plans/<slug>/PLAN.yml`` to ``approved`` in the working tree."""
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text(encoding="utf-8")
    new = re.sub(r'status: "?pending_approval"?', "status: approved", text, count=1)
    assert new != text, text[:400]
    path.write_text(new, encoding="utf-8")


def tags(plan: dict[str, Any] | None) -> list[str]:
    """The ``tag`` param of each action, in order."""
    if not plan:
        return []
    return [str((a.get("params") or {}).get("tag")) for a in plan.get("actions") or []]
