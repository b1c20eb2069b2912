# ruff: noqa: E501
"""Round 24, tool outputs filling params but never changing which actions run: a reference
``$<...>`` written where it would choose what runs rather than a param value.

Each plan: action 1 (``echo``) outputs ``p`` (``plans/c``) and ``t`` (``rec``); action 2 puts a
reference in ``tool:`` (``ref-tool``: an output; ``ref-input-tool``: an input), a nested plan's
``plan.path`` (``ref-path``, with a well-formed pin), an action ``id`` (``ref-id``), ``timeout``
(``ref-timeout``) or an output's JSONPath (``ref-outpath``).

Asserted: the plan is invalid with a code (``E_TOOL_NOT_DECLARED`` / ``E_SCHEMA_INVALID``), and
nothing ran. Held (all six).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import Lab, plan_text
from test_round2_execution_kit import shared

BASE = "plan:\n  name: {n}\n  task: t\n  status: pending_approval\ninputs: {{k: rec}}\navailable_tools: [{{name: rec}}, {{name: echo}}]\nactions:\n  - {{id: 1, tool: echo, why: w, params: {{p: plans/c, t: rec}}, outputs: [{{name: p, path: '$.p'}}, {{name: t, path: '$.t'}}]}}\n"
PIN = "sha256:" + "a" * 64
VARIANTS = {
    "ref-tool": (
        '  - {id: 2, tool: "$<actions[1].outputs.t>", why: w, params: {tag: ref-tool}}\n',
        "E_TOOL_NOT_DECLARED",
    ),
    "ref-input-tool": (
        '  - {id: 2, tool: "$<inputs.k>", why: w, params: {tag: ref-input-tool}}\n',
        "E_TOOL_NOT_DECLARED",
    ),
    "ref-path": (
        f'  - {{id: 2, plan: {{path: "$<actions[1].outputs.p>", hash: "{PIN}"}}, why: w}}\n',
        "E_SCHEMA_INVALID",
    ),
    "ref-id": (
        '  - {id: "$<inputs.k>", tool: rec, why: w, params: {tag: ref-id}}\n',
        "E_SCHEMA_INVALID",
    ),
    "ref-timeout": (
        '  - {id: 2, tool: rec, why: w, params: {tag: ref-timeout}, timeout: "$<inputs.k>"}\n',
        "E_SCHEMA_INVALID",
    ),
    "ref-outpath": (
        '  - {id: 2, tool: rec, why: w, params: {tag: ref-outpath}, outputs: [{name: o, path: "$<inputs.k>"}]}\n',
        "E_SCHEMA_INVALID",
    ),
}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("c", plan_text("c", status="draft"))
    for vid, (action, _) in VARIANTS.items():
        lab.write(vid, BASE.format(n=vid) + action)
    lab.commit("plans")
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r24-refplaces", _build)


@pytest.mark.parametrize("vid", list(VARIANTS))
def test_a_reference_never_chooses_what_runs(lab: Lab, vid: str) -> None:
    row = lab.status()[f"plans/{vid}"]
    assert row["status"] == "invalid", row
    assert VARIANTS[vid][1] in (row["reason"] or ""), row
    assert lab.calls(vid) == [] and lab.calls("c") == []
