"""Round 59, the fresh-clone audit against the controller's own freeze: legacy ``${...}``
references other than ``${inputs.K}``.

docs/plan-format.md, "References": ``${actions[1].outputs.x}``, ``${inputs.x}``,
``${plan.x}`` and ``${approval.x}`` (``approved_by``/``approved_at`` become ``by``/``at``) in
action ``params`` are rewritten to ``$<...>`` when the plan is frozen. docs/approvals.md
(audit): ``controller-unexplained`` is a controller commit that changes the plan's content
"other than a freeze converting legacy ``${...}`` references". Found while building
``test_round59_approve_planrefs.py`` (its ``legacy-plan``): the audit flagged that freeze.

Lab: the bench's config. The agent commits one honest plan per variant (its own tag), each
with one legacy reference in a ``rec`` param (``modern``: ``$<inputs.who>``, the control
with nothing to convert): ``inputs`` (``${inputs.who}``, control),
``plan-name`` (``${plan.name}``), ``plan-task`` (``"task: ${plan.task}"`` inside a longer
string), ``plan-hash`` (``${plan.hash}``), ``approval-by`` (``${approval.approved_by}``),
``approval-at`` (``${approval.approved_at}``), ``output`` (``${actions[1].outputs.x}`` of an
``echo`` action 1). A pass freezes them; Alice approves all; two passes; ``plangate audit
--json`` in the lab repository with no config (git history alone).

Asserted: each plan ran once on Alice's approval, the audit lists its run valid and reports
no finding about the plan (the controller did what the docs say it does).

Seen: every legacy variant broke (7: ``inputs``, ``plan-name``, ``plan-task``, ``plan-hash``,
``approval-by``, ``approval-at``, ``output``): the plan ran once on Alice's approval and the
audit lists the run valid, but it reports ``controller-unexplained`` ("a freeze commit changed
the plan's content (sha256:... -> sha256:...)") on the controller's own freeze, the commit that
rewrote ``${...}`` to ``$<...>`` exactly as documented; exit 1 on an honest history. Held:
``modern`` (nothing to convert: no finding). Even ``${inputs.who}``, the form the docs name
first, is flagged. Fix direction: the audit should hash the pre-freeze text as converted (as
the controller does) before comparing it with the freeze's content.

Fixed (2026-11-29): ``_same_content`` compared the RAW texts' hashes, so
every converting freeze differed. The audit now hashes both sides as frozen
(``plans.frozen_form_hash``: ``convert_legacy_params``, the freeze's own rule), so every
reference form the freeze converts is accepted, and nothing else.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, valid_runs
from test_round2_execution_kit import shared

REFS = {
    "modern": "$<inputs.who>",
    "inputs": "${inputs.who}",
    "plan-name": "${plan.name}",
    "plan-task": "task: ${plan.task}",
    "plan-hash": "${plan.hash}",
    "approval-by": "${approval.approved_by}",
    "approval-at": "${approval.approved_at}",
    "output": "${actions[1].outputs.x}",
}
VIDS = list(REFS)
BROKEN: dict[str, object] = {}


def text(v: str) -> str:
    head = f'plan:\n  name: "{v} name"\n  task: "{v} task"\n  status: pending_approval\n'
    head += 'inputs:\n  who: "agent"\n'
    head += "available_tools:\n  - name: echo\n  - name: rec\nactions:\n"
    echo = (
        "  - id: 1\n    tool: echo\n    why: stage a value\n"
        '    params: {x: "staged"}\n    outputs:\n      - {name: x, path: "$.x"}\n'
    )
    rec = (
        "  - id: 2\n    tool: rec\n    why: record it\n"
        f'    params:\n      tag: "{v}"\n      value: "{REFS[v]}"\n'
    )
    return head + echo + rec


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in VIDS:
        lab.write(v, text(v))
    lab.commit("agent's plans", AGENT)
    lab.run()
    time.sleep(1.05)
    for v in VIDS:
        lab.set_status(v, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-legacyaudit", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_the_audit_agrees_with_the_controllers_legacy_freeze(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1200]
    report = lab.report  # type: ignore[attr-defined]
    assert valid_runs(report, vid), report.get("executions")
    mine = [f for f in report.get("findings", []) if f.get("plan") == f"plans/{vid}"]
    assert mine == [], mine
