# ruff: noqa: E501
"""Round 56 (runs): an input key with a ``.`` in a pinned (nested) plan, where the parent fills
the nested plan's inputs (``test_round56_runs_outnames.py``'s ``in-dot``, across a pin).
docs/plan-format.md, Nested plans: the parent's ``inputs:`` "may hold references and
override" the nested plan's declared inputs; Flows and guards: "an input filled with outside
data is outside data wherever the nested plan uses it (``$<inputs.to>``)".

Lab ``nk``: ``send`` is ``rec`` with ``sensitive: [to]``. Each nested plan ``lib-<vid>``
(``status: draft``) declares the variant's inputs and one action ``send`` with ``to:
$<inputs.a.b>``; the parent's action 1 (``echo``, untrusted) gives ``v: {b:
evil@attacker.example}`` and ``s: evil@attacker.example``; action 2 runs the pinned plan
with the variant's ``inputs``. Alice approves every parent; one pass.

- ``flow-a``: nested inputs ``{"a.b": safe, a: {b: safe}}``, the parent fills ``a`` with
  ``$<actions[1].outputs.v>``: the reference resolves through ``a``, so the flow is outside
  data. Held: ``E_UNGUARDED_FLOW`` (naming ``inputs.a.b (= actions[1].outputs.v)``), nothing
  sent.
- ``flow-ctl``: the same with no ``"a.b"`` key. Held likewise.
- ``override-dotkey``: nested inputs ``{"a.b": default-ab@ok.example, a: {b:
  default-a@ok.example}}``, the parent overrides ``"a.b": chosen@ok.example`` (a literal the
  parent's reviewer approves, for the input the nested action names ``$<inputs.a.b>``).
  **Broke**: ``send`` gets ``default-a@ok.example``; the override the reviewer approved goes
  nowhere. Should: refuse such input keys (as output names are refused).

Asserted: ``flow-*``: invalid with E_UNGUARDED_FLOW and ``send`` never ran;
``override-dotkey``: ``send`` got the parent's value or the plan was refused.

Fixed (2026-11-29): input keys follow the output names' rule (E_SCHEMA_INVALID for
``"a.b"``, in the pinned plan and in the parent's override): ``override-dotkey`` is refused.
``flow-a``'s pinned plan declares ``"a.b"`` too, so the parent is now refused for its nested
plan (E_SCHEMA_INVALID naming that key) before the flow is looked at: either refusal holds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

SAFE = "safe@ok.example"
# id: (nested inputs, parent inputs)
VARIANTS: dict[str, tuple[str, str]] = {
    "flow-a": (f'{{"a.b": {SAFE}, a: {{b: {SAFE}}}}}', '{a: "$<actions[1].outputs.v>"}'),
    "flow-ctl": (f"{{a: {{b: {SAFE}}}}}", '{a: "$<actions[1].outputs.v>"}'),
    "override-dotkey": (
        '{"a.b": default-ab@ok.example, a: {b: default-a@ok.example}}',
        '{"a.b": chosen@ok.example}',
    ),
}
IDS = list(VARIANTS)
BROKEN: dict[str, Any] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root / "nk")
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    lab.write_config(
        tools=f"send: {{kind: exec, argv: {rec}, sensitive: [to], env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    )
    for vid, (nested, _) in VARIANTS.items():
        lab.write(
            f"lib-{vid}",
            f"plan:\n  name: lib-{vid}\n  task: t\n  status: draft\ninputs: {nested}\n"
            "available_tools: [{name: send}]\nactions:\n"
            f'  - id: 1\n    tool: send\n    why: w\n    params: {{tag: {vid}, to: "$<inputs.a.b>"}}\n',
        )
    lab.commit("libraries")
    for vid, (_, parent) in VARIANTS.items():
        pin = lab.cli("hash", f"plans/lib-{vid}", cwd=lab.repo).stdout.strip().split()[0]
        lab.write(
            vid,
            f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\navailable_tools: [{{name: echo}}]\nactions:\n"
            "  - id: 1\n    tool: echo\n    why: w\n    params: {v: {b: evil@attacker.example}, s: evil@attacker.example}\n"
            "    outputs: [{name: v, path: $.v}, {name: s, path: $.s}]\n"
            f'  - id: 2\n    plan: {{path: plans/lib-{vid}, hash: "{pin}"}}\n    why: w\n    inputs: {parent}\n',
        )
    lab.commit("plans")
    lab.run()
    for vid in IDS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r56-nestkeys", _build)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_nested_input_reads_one_way(lab: Lab, vid: str) -> None:
    calls = lab.calls(vid)
    plan = lab.plan(vid)
    if vid.startswith("flow-"):
        assert calls == [], calls
        found = json.dumps(plan.get("validation"))
        named = "E_SCHEMA_INVALID" in found and 'inputs[\\"a.b\\"]' in found
        assert "E_UNGUARDED_FLOW" in found or (vid == "flow-a" and named), found
    else:
        sent = [json.loads(c["stdin"])["to"] for c in calls]
        assert sent in ([], ["chosen@ok.example"]), sent
        if not sent:
            assert plan.get("validation"), plan
