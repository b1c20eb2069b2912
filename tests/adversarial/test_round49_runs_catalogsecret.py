# ruff: noqa: E501
"""Round 49, secrets never reaching status output: a value of the controller's secrets file
written in the catalog itself (not through ``$<secrets.*>``), printed by the commands that
describe the catalog to reviewers and agents.

Lab ``cs``: ``secrets.file`` holds ``TOK: Zq8Wxx3Yv7Ut2``. The catalog has ``t1`` (exec, an
``argv`` item and its ``description`` holding that value, and an env ``MODE`` holding it) and
``t2`` (http, the value as a URL path segment and as the value of a query ``mode``). One plan
calls ``t1``.

- ``tools-text`` / ``tools-json``: ``plangate tools --config`` (what an agent reads of the
  catalog, MCP ``catalog`` alike).
- ``mcp-catalog``: ``plangate mcp``'s ``catalog`` tool (initialize, then ``tools/call``).
- ``show``: ``plangate show --config`` of the plan (its ``runs: exec: ...`` line).
- ``schema`` (control): ``plangate schema --config``.
- ``run-http`` / ``run-exec`` (controls): plans calling an http tool whose URL path and
  query hold the value (refused connection) and an exec tool whose argv item holds it and is
  printed on stderr (exit 3), approved and run: the history about the plan and ``status``.

Asserted per variant: the secret's value is not in the output (as every record the
controller writes hides it). Held: ``schema``, ``run-http``, ``run-exec`` (the error names
``http://127.0.0.1:9/***/x?mode=***`` and ``***``). Broke: ``tools-text``, ``tools-json``, ``show``, ``mcp-catalog`` (the description) print the argv
item (and the description, the URL path and query value) raw; the secret is known by value,
so it can be told from the path (unlike round 26's accepted ``path-token``).

Fixed (round 49, issue 11): whatever describes the catalog to a person or an agent is built
in ``controller.plan.catalog`` and passes through one helper, ``shown``, with the redactor
of every record the controller writes (``secrets.redactor_for``: the secrets file, the
``PLANGATE_SECRET_*`` environment and the config's credentials), a required argument of
each describer (the commands get it from ``commands._shared.catalog_redactor``).

Round 71: ``t1``'s description no longer holds the value: a config whose catalog publishes a
secret (a tool's name, description or ``params_schema``) is refused at load,
E_CONFIG_INVALID (``tests/commands/test_catalog_secrets.py``); what a tool runs (argv, env,
URL) may hold one, and is shown masked, as asserted here.
``plangate tools`` (text and ``--json``, ``describe_catalog``), the ``runs:`` line of
``plangate show`` (``catalog_maps``), ``plangate schema --config`` (``specialise_schema``)
and the MCP ``catalog`` tool (``agent_catalog``) print ``***`` where the catalog holds a
secret's value; a secrets file that cannot be read is ``E_CONFIG_INVALID``, as for a run.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import mcpkit
import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

S = "Zq8Wxx3Yv7Ut2"
BROKEN: dict[str, str] = {}  # round 49's breaks, all fixed (see the docstring)


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {S}\n")
    lab = Lab(
        root / "cs",
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n",
        tools=(
            f't1: {{kind: exec, argv: ["/bin/echo", "{S}", "{{x}}"], env: {{MODE: "{S}"}}, description: "uses a token"}}\n'
            f't2: {{kind: http, method: POST, url: "https://h.example/{S}/x?mode={S}"}}\n'
            f't3: {{kind: http, method: POST, url: "http://127.0.0.1:9/{S}/x?mode={S}", timeout: 3}}\n'
            f't4: {{kind: exec, argv: ["/bin/sh", "-c", "echo $0 >&2; exit 3", "{S}"]}}\n'
        ),
    )
    path = lab.write(
        "p",
        "plan:\n  name: p\n  task: t\n  status: pending_approval\navailable_tools: [{name: t1}]\n"
        'actions:\n  - id: 1\n    tool: t1\n    why: w\n    params: {x: "1"}\n',
    )
    cfg = str(lab.config)
    lab.outs = {  # type: ignore[attr-defined]
        "tools-text": lab.cli("tools", "--config", cfg),
        "tools-json": lab.cli("tools", "--json", "--config", cfg),
        "show": lab.cli("show", str(path), "--config", cfg),
        "schema": lab.cli("schema", "--config", cfg),
    }
    for t in ("t3", "t4"):
        lab.write(
            t,
            f"plan:\n  name: {t}\n  task: t\n  status: pending_approval\navailable_tools: [{{name: {t}}}]\n"
            f"actions:\n  - id: 1\n    tool: {t}\n    why: w\n    params: {{x: '1'}}\n",
        )
    lab.commit("plans")
    lab.run()
    lab.set_status("t3", "approved")
    lab.set_status("t4", "approved")
    lab.commit("approve", ALICE)
    lab.run()
    answer = json.dumps(mcpkit.call(lab, "catalog", {}, config=cfg))
    lab.outs["mcp-catalog"] = subprocess.CompletedProcess([], 0, answer, "")  # type: ignore[attr-defined]
    for vid, t in (("run-http", "t3"), ("run-exec", "t4")):
        hist = lab.git("log", "-p", "--format=%B", "--", f"plans/{t}")
        status = (
            lab.cli("status", "--config", cfg).stdout
            + lab.cli("status", "--json", "--config", cfg).stdout
        )
        lab.outs[vid] = subprocess.CompletedProcess([], 0, hist + status, "")  # type: ignore[attr-defined]
    lab.outs = {k: (r.returncode, r.stdout + r.stderr) for k, r in lab.outs.items()}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r49-catalogsecret", _build)


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
        for v in (
            "tools-text",
            "tools-json",
            "show",
            "schema",
            "run-http",
            "run-exec",
            "mcp-catalog",
        )
    ],
)
def test_a_catalog_secret_value_is_not_printed(lab: Lab, vid: str) -> None:
    code, out = lab.outs[vid]  # type: ignore[attr-defined]
    assert "Traceback" not in out, out[-2000:]
    assert code in (0, 1), out[-2000:]
    if vid == "mcp-catalog":
        assert '"t1"' in out, out[-2000:]
    if vid.startswith("run-"):
        assert "E_TOOL_FAILED" in out and "***" in out, out[-2000:]
    assert S not in out, [line for line in out.splitlines() if S in line][:4]
