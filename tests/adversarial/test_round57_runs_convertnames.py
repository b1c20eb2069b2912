"""Round 57 (runs): two tools of a converted source renamed into one PLAN.yml tool.

docs/formats.md: "Tool names must be identifiers: any other character becomes ``_``
(``data.extract-site`` -> ``data_extract-site``), recorded in ``tool_names``". The renaming
is not one-to-one: a source that calls ``deploy.prod`` in one step and ``deploy_prod`` in
another (two tools to its planner, its runtime, the PR's reader) converts to two calls of
one tool, ``deploy_prod``, and ``metadata.converted_from.tool_names`` says
``{deploy_prod: "deploy.prod"}``, which is false for the step that said ``deploy_prod``.
"Nothing is dropped silently": the difference between the two tools is dropped, and the
note names only the renamed step.

Lab: sources written by the test, ``plangate convert --json`` per id.

Asserted: a renaming onto a name another of the source's tools has (or two source names
renamed onto one) is refused (``ok: false``, an ``E_`` code). Controls: a single renamed
tool converts (with its note); two tools whose renamings differ convert.

Result: **broke** (3): ``dot-vs-underscore`` (``deploy.prod`` + ``deploy_prod``),
``dot-vs-slash`` (``deploy.prod`` + ``deploy/prod``), ``accents`` (``déploy`` + ``dèploy``
-> ``d_ploy``): converted ``ok: true`` into one tool called twice. Should: refuse a
renaming that is not one-to-one, at the second step's ``tool``, naming both source names.

Fixed (2026-11-29): ``Ctx.tool_name`` keeps every PLAN.yml tool name it gives out with the
source name it stands for; a second source name landing on the same one (renamed or
already an identifier) is E_SCHEMA_INVALID at that step's ``tool``, naming both.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import cases


def _pc(*tools: str) -> str:
    steps = [
        {"step_id": f"s{i}", "tool": tool, "args": {}, "description": f"call {tool}"}
        for i, tool in enumerate(tools)
    ]
    return json.dumps({"plan_version": 1, "goal": "g", "steps": steps}, ensure_ascii=False)


# id: (source, must be refused?)
SOURCES: dict[str, tuple[str, bool]] = {
    "dot-vs-underscore": (_pc("deploy.prod", "deploy_prod"), True),
    "dot-vs-slash": (_pc("deploy.prod", "deploy/prod"), True),
    "accents": (_pc("déploy", "dèploy"), True),
    "control-one-renamed": (_pc("deploy.prod"), False),
    "control-two-renamed": (_pc("deploy.prod", "deploy.staging"), False),
    "control-same-twice": (_pc("deploy.prod", "deploy.prod"), False),
}
IDS = list(SOURCES)
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_one_source_tool_one_plan_tool(tmp_path: Path, vid: str) -> None:
    text, refuse = SOURCES[vid]
    (tmp_path / "pc.json").write_text(text, encoding="utf-8")
    result = subprocess.run(
        [str(Path(sys.executable).parent / "plangate"), "convert", "--json", "pc.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    first = json.loads(result.stdout.splitlines()[0])
    if not refuse:
        assert result.returncode == 0 and first["ok"] is True, result.stdout[:400]
        return
    assert first.get("ok") is False and "E_" in json.dumps(first), (
        f"converted: {result.stdout[:400]}"
    )
