"""Round 65, agent-facing surfaces: round 64's catalog schemas from the other side: a catalog
``params_schema`` whose ``$ref`` leaves its own schema (another tool's ``$id``, or an
``https://`` URI nothing serves). ``plangate schema --config`` resolves the first against the
other tool (the whole catalog is one document there); ``validate`` checks each tool's schema
alone, where it resolves to nothing. What happens when an AGENT's plan names such a tool?

Lab (one, module scope), local mode with ``agent.identity``. The catalog: ``own``
(``$id: urn:r65:own``, ``$defs/v`` an integer), ``xr`` (``v: {$ref:
"urn:r65:own#/$defs/v"}``), ``xh`` (``v: {$ref: "https://schemas.example.invalid/v.json"}``),
and the lab's ``rec``. The agent commits four plans: ``aa`` and ``zz`` (honest ``rec``
calls, before and after the others in path order), ``xr`` and ``xh`` (one action calling
that tool with ``v: 3``); Alice approves all four; two ``run --once`` passes.

Asserted: the controller either refuses the catalog when it reads the config (a config error
naming the tool, before any plan) or reads the plans one by one: ``run --once`` exits 0 with
no internal error (``pass``), ``aa`` and ``zz`` run once (``aa-ran``, ``zz-ran``), ``status
--json`` answers with a row for each plan (``status``), ``validate --json --config`` of the
``xr``/``xh`` plan answers an ``E_`` code of the plan (not ``E_INTERNAL``: ``validate-xr``,
``validate-xh``), MCP ``status`` and ``validate`` answer within the contract
(``mcp-status``, ``mcp-validate-xr``).

Broke (strict xfails, 6): the config is read without complaint (``validate --config`` of a
plan naming none of these tools: valid), then once the agent's plans are committed every
``run --once`` dies: "internal error: _WrappedReferencingError: Unresolvable:
https://schemas.example.invalid/v.json" (exit 2) on each of the three passes (``pass``); the
honest ``aa`` and ``zz``, approved by Alice, are left ``executing`` (started, the pass died)
and never run (``aa-ran``, ``zz-ran``: every plan of the repository stalls on one agent
plan); ``validate --json --config`` of the ``xr``/``xh`` plan answers ``E_INTERNAL``
"Unresolvable: urn:r65:own#/$defs/v" (``validate-xr``, ``validate-xh``); MCP ``validate`` of
it answers "Error executing tool validate" with no code (``mcp-validate-xr``). Held:
``status --json`` and MCP ``status`` answer with every row. Should: a catalog
``params_schema`` whose ``$ref`` does not resolve inside it is refused when the config is
read (naming the tool), as an unrunnable ``pattern`` is; at least an unresolvable reference
is that plan's ``E_PARAMS_INVALID``/config problem, never the pass's; and ``schema --config``
resolves a tool's references as ``validate`` does (alone), not against another tool's
``$id``.

Fixed (2026-11-29): all 6, at the root. A catalog ``params_schema`` is self-contained: when
the config is read every ``$ref``/``$dynamicRef`` (outside ``const``/``enum``/``default``/
``examples``) is resolved inside the tool's own schema with a registry that holds nothing
and fetches nothing (``controller.plan.schemarefs``); one that does not resolve (``xr``'s
``urn:r65:own#/$defs/v``, ``xh``'s ``https://`` URI, a pointer or anchor to nowhere) is
``E_CONFIG_INVALID`` naming ``tools.<name>.params_schema`` and the ``$ref``, with a remedy,
before any plan (``_refused_at_config``: every id holds there). Defence in depth: params
are checked with that registry (never a remote retrieval) and an unresolvable reference met
while checking one call is that plan's ``E_PARAMS_INVALID`` (at run time the action's),
never the pass's crash.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared
from test_round61_surface_mcp import mcp

TOOLS = """\
own:
  kind: exec
  argv: ["/bin/true"]
  params_schema:
    $id: "urn:r65:own"
    $defs: {v: {type: integer}}
    properties: {v: {$ref: "#/$defs/v"}}
xr:
  kind: exec
  argv: ["/bin/true"]
  params_schema: {properties: {v: {$ref: "urn:r65:own#/$defs/v"}}}
xh:
  kind: exec
  argv: ["/bin/true"]
  params_schema: {properties: {v: {$ref: "https://schemas.example.invalid/v.json"}}}
"""


def _x(tool: str) -> str:
    return (
        f'plan:\n  name: "{tool}"\n  task: "t"\n  status: pending_approval\n'
        f"available_tools:\n  - name: {tool}\n"
        f'actions:\n  - id: 1\n    tool: {tool}\n    why: "w"\n    params: {{v: 3}}\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n",
        tools=TOOLS,
    )
    lab.git_date = "@1795500000 +0000"
    cfg = str(lab.config)
    got: dict[str, Any] = {}
    probe = root / "probe.yml"
    probe.write_text(plan_text("probe"))
    got["config-refused"] = lab.cli("validate", "--json", "--config", cfg, str(probe))
    lab.write("aa", plan_text("aa"))
    lab.write("zz", plan_text("zz"))
    lab.write("xr", _x("xr"))
    lab.write("xh", _x("xh"))
    lab.commit("agent plans")
    passes = [lab.run(check=False)]
    for slug in ("aa", "zz", "xr", "xh"):
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    passes += [lab.run(check=False), lab.run(check=False)]
    got["passes"] = [(p.returncode, p.stderr[-1500:]) for p in passes]
    got["status"] = lab.cli("status", "--json", "--config", cfg)
    for slug in ("xr", "xh"):
        got[f"validate-{slug}"] = lab.cli(
            "validate", "--json", "--config", cfg, str(lab.repo / f"plans/{slug}/PLAN.yml")
        )
    replies = mcp(lab, [("status", {}), ("validate", {"plan": _x("xr")})])
    got["mcp-status"], got["mcp-validate-xr"] = replies
    got["calls"] = {t: len(lab.calls(t)) for t in ("aa", "zz")}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r65-surface-schemaref", _build)


IDS = ["pass", "aa-ran", "zz-ran", "status", "validate-xr", "validate-xh"]
IDS += ["mcp-status", "mcp-validate-xr"]

#: all fixed (see the module docstring)
BROKEN: dict[str, Any] = {}


def _refused_at_config(got: dict[str, Any]) -> bool:
    done = got["config-refused"]
    text = done.stdout + done.stderr
    return done.returncode != 0 and "E_INTERNAL" not in text and ("xr" in text or "xh" in text)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_catalog_reference_stalls_no_plan(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    if _refused_at_config(got):  # the operator is told before any plan: held
        return
    if vid == "pass":
        for code, err in got["passes"]:
            assert code == 0 and "internal error" not in err, err
    elif vid in ("aa-ran", "zz-ran"):
        assert got["calls"][vid[:2]] == 1, got["calls"]
    elif vid == "status":
        done = got["status"]
        assert done.returncode == 0, done.stderr[-1500:]
        plans = {r["plan"] for r in json.loads(done.stdout)}
        assert {f"plans/{s}" for s in ("aa", "zz", "xr", "xh")} <= plans, plans
    elif vid.startswith("validate-"):
        done = got[vid]
        text = done.stdout + done.stderr
        assert "E_INTERNAL" not in text and "internal error" not in text, text[-1500:]
        assert "E_" in text, text[-1500:]
    else:
        text = json.dumps(got[vid])
        assert "E_INTERNAL" not in text and "internal error" not in text, text[-1500:]
        assert "missing" not in got[vid], text[-1500:]
        if vid == "mcp-validate-xr":  # the error contract: {"ok": false, "code": "E_..."}
            assert "E_" in text, text[-1500:]
        else:
            assert not (got[vid].get("result") or {}).get("isError"), text[-1500:]
