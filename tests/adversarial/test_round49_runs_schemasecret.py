"""Round 49, secrets never reaching what commands print: a value of the controller's secrets
file written in a catalog tool's ``params_schema`` (a ``pattern``, an ``enum`` value, a
``const``), quoted by the problem a plan failing it gets.

Lab ``ss``: ``secrets.file`` holds ``TOK: Zq8Wxx3Yv7Ut2``. The catalog's ``t1`` (echo) has a
``params_schema`` whose ``x`` must match ``^Zq8Wxx3Yv7Ut2$``, whose ``y`` is one of
``[Zq8Wxx3Yv7Ut2, plain]`` and whose ``z`` is the const ``Zq8Wxx3Yv7Ut2``; the plan ``p``
gives ``no`` to each (three E_PARAMS_INVALID problems quoting the schema).

- ``validate-text`` / ``validate-json``: ``plangate validate --config`` (text, ``--json``).
- ``check-text`` / ``check-json``: ``plangate check --config`` of a branch adding the plan.
- ``show-text`` / ``show-json``: ``plangate show --config`` (text, ``--format json``).
- ``freeze``: ``plangate freeze --config``.
- ``mcp-validate`` / ``mcp-submit``: the MCP ``validate`` and ``submit`` tools (what an
  agent reads).
- ``record``: the controller's ``run --once``: the PLAN.yml it commits (``validation:``
  block), its commit messages and ``plangate status`` (text and ``--json``).

Asserted per variant: the problems are reported and the secret's value is not in the
output (as every record the controller writes hides it). Broke: all ten. The problem's
message is jsonschema's, built in ``controller.plan.plans`` (``'no' does not match
'^Zq8Wxx3Yv7Ut2$' (params_schema of tool 't1')``, ``is not one of [...]``, ``was
expected``), and no printer of problems passed it through the redactor of the records: not
the CLI's problem lines, ``--json`` records, ``check``'s report or errors (``show --format
json``), not the MCP server's answers, and not the ``validation:`` block the controller
commits (its commit messages were redacted; the file was not).

Fixed (round 49, issue 11): one choke point per output channel, each with the redactor of
the controller's records (``secrets.redactor_for``). The CLI: ``commands._shared.printed``,
fed by ``optional_config`` with the config the command loaded (nothing imported without
one), which ``print_problems``, ``validate --json``, ``convert --json``, ``check``'s report
and ``cli._refused`` (every error a command reports, text and ``--json``) go through. The
MCP server: ``mcpserver.build_server``'s ``guarded``, every tool's answer and error. The
controller's records: ``plans.invalid_text`` takes the redactor (``redact=``, required) for
each message and path of the ``validation:`` block, as commit messages already had. A
secrets file that cannot be read is E_CONFIG_INVALID, as for a run.

Round 71: a schema holding a secret's value answered a literal guess valid or not (an oracle
though every quote was ``***``); a config whose catalog publishes a secret is now refused at
load by every command (``plan.catalog.refuse_secrets_in_catalog``). Each id now asserts that
refusal, E_CONFIG_INVALID naming the schema's places and never the value (``record``: the
pass is refused, nothing committed).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import mcpkit
import pytest
from advkit import Lab
from test_round2_execution_kit import shared

S = "Zq8Wxx3Yv7Ut2"
BROKEN: dict[str, str] = {}  # round 49's breaks, all fixed (see the docstring)
VIDS = [
    "validate-text",
    "validate-json",
    "check-text",
    "check-json",
    "show-text",
    "show-json",
    "freeze",
    "mcp-validate",
    "mcp-submit",
    "record",
]
PLAN = (
    "plan:\n  name: p\n  task: t\n  status: pending_approval\navailable_tools: [{name: t1}]\n"
    "actions:\n  - id: 1\n    tool: t1\n    why: w\n    params: {x: 'no', y: 'no', z: 'no'}\n"
)


def _mcp(lab: Lab, cfg: str, name: str, arguments: dict[str, object]) -> str:
    replies, stderr = mcpkit.session(lab, [(name, arguments)], config=cfg)
    return stderr + json.dumps(replies)


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {S}\n")
    lab = Lab(
        root / "ss",
        extra=(
            f"secrets: {{file: {root / 'sec.yml'}}}\n"
            "agent: {identity: {name: Agent, email: agent@example.com}}\n"
        ),
        tools=(
            "t1:\n  kind: echo\n  params_schema:\n    type: object\n    properties:\n"
            f"      x: {{type: string, pattern: '^{S}$'}}\n"
            f"      y: {{enum: ['{S}', plain]}}\n"
            f"      z: {{const: '{S}'}}\n"
        ),
    )
    cfg = str(lab.config)
    outs: dict[str, subprocess.CompletedProcess[str]] = {}
    # a pull request adding the plan (check), before it is on main
    lab.git("checkout", "-q", "-b", "pr")
    path = lab.write("p", PLAN)
    lab.commit("add p")
    lab.git("checkout", "-q", "main")
    for vid, fmt in (("check-text", "text"), ("check-json", "json")):
        outs[vid] = lab.cli(
            "check", "--config", cfg, "--base", "main", "--head", "pr", "--format", fmt,
            cwd=lab.repo,
        )  # fmt: skip
    lab.git("merge", "-q", "--ff-only", "pr")
    outs["validate-text"] = lab.cli("validate", str(path), "--config", cfg)
    outs["validate-json"] = lab.cli("validate", "--json", str(path), "--config", cfg)
    outs["show-text"] = lab.cli("show", str(path), "--config", cfg)
    outs["show-json"] = lab.cli("show", str(path), "--format", "json", "--config", cfg)
    outs["freeze"] = lab.cli("freeze", str(path), "--config", cfg)
    for vid, name, args in (
        ("mcp-validate", "validate", {"plan": PLAN}),
        ("mcp-submit", "submit", {"plan": PLAN, "slug": "q"}),
    ):
        outs[vid] = subprocess.CompletedProcess([], 0, _mcp(lab, cfg, name, args), "")
    ran = lab.run(check=False)
    record = (
        ran.stdout
        + ran.stderr
        + lab.git("log", "-p", "--format=%B", "--", "plans/p")
        + lab.cli("status", "--config", cfg).stdout
        + lab.cli("status", "--json", "--config", cfg).stdout
    )
    outs["record"] = subprocess.CompletedProcess([], 0, record, "")
    lab.outs = {k: (r.returncode, r.stdout + r.stderr) for k, r in outs.items()}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r49-schemasecret", _build)


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(
            v,
            id=v,
            marks=[
                pytest.mark.xfail(
                    strict=True, raises=AssertionError, reason=f"round 49: {BROKEN[v]}"
                )
            ]
            if v in BROKEN
            else [],
        )
        for v in VIDS
    ],
)
def test_a_schema_secret_value_is_not_printed(lab: Lab, vid: str) -> None:
    _code, out = lab.outs[vid]  # type: ignore[attr-defined]
    assert "Traceback" not in out, out[-2000:]
    assert "E_CONFIG_INVALID" in out, out[-2000:]  # refused at load (round 71)
    assert "tools.t1.params_schema.properties.x.pattern" in out, out[-2000:]
    assert S not in out, [line for line in out.splitlines() if S in line][:4]
