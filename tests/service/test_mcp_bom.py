"""MCP reads PLAN.yml text with byte order marks as ``plangate validate`` reads the file
(round 128, atk128b, ``mcp-double-bom-plan-yml-read-as-pte``).

A PLAN.yml starting with two U+FEFF is ``E_YAML_PARSE`` to ``validate``, ``hash`` and
``show`` of the file; MCP ``validate`` answered it ``valid: true``, ``format: "pte"`` with the
base plan's hash and its comments dropped (``submit`` would have committed that conversion):
the "meant as PLAN.yml" test missed ``plan:`` behind the BOMs, and the converter read past
two. Now MCP answers the PLAN.yml reader's error, ``format: plan.yml``. A real ``plangate
mcp`` session and real ``plangate validate`` processes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.service.test_mcp import Session, call, call_error, with_agent, write_config
from tests.support.gitenv import git, run_cli
from tests.support.plantext import greet_plan

TEXT = greet_plan("Greet", "Say hello", '"world"   # the agent\'s comment')


def test_mcp_reads_a_plan_yml_with_byte_order_marks_as_validate_reads_the_file(
    repo: Path, tmp_path: Path
) -> None:
    config = write_config(tmp_path, repo)
    files, seen = {}, {}
    for boms in (0, 1, 2, 3):
        path = tmp_path / "loose" / str(boms) / "PLAN.yml"
        path.parent.mkdir(parents=True)
        path.write_text("\ufeff" * boms + TEXT)
        files[boms] = path
    cli = run_cli("validate", "--json", *map(str, files.values()), cwd=tmp_path)
    records = [json.loads(line) for line in cli.stdout.splitlines()]
    said = {boms: records[i] for i, boms in enumerate(files)}

    async def body(session: Session) -> None:
        for boms in files:
            seen[boms] = await call(session, "validate", plan="\ufeff" * boms + TEXT)
        seen["submit"] = await call_error(session, "submit", plan="\ufeff\ufeff" + TEXT, slug="b")

    with_agent(config, body)
    for boms in (0, 1):  # the plan as written, kept byte for byte
        answer: dict[str, Any] = seen[boms]
        assert answer["valid"] and answer["format"] == "plan.yml", answer
        assert answer["hash"] == said[boms]["hash"] == said[0]["hash"], (answer, said)
    for boms in (2, 3):  # the PLAN.yml reader's refusal, as validate of the file says it
        answer = seen[boms]
        assert (answer["valid"], answer["format"], answer["hash"]) == (False, "plan.yml", None)
        assert [(e["code"], e["line"]) for e in answer["errors"]] == [
            (e["code"], e["line"]) for e in said[boms]["errors"]
        ], (answer, said[boms])
        assert answer["errors"][0]["code"] == "E_YAML_PARSE"
    assert seen["submit"]["code"] == "E_YAML_PARSE", seen["submit"]
    assert "plans/b/PLAN.yml" not in git(repo, "ls-tree", "-r", "--name-only", "main")
