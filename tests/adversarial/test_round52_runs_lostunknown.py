"""Round 52 (runs): what the committed record cannot hold, after a state-directory loss at a
gate (no forgery; the round-45 rule "a value it shows masked or cut, every result and the
approval that started the plan are not known: a reference to one fails E_ACTION_IN_DOUBT").

Lab ``lu`` (local mode, a secrets file with ``TOK``): four plans, each action 1 ``rec``
(param ``who``, output ``who``) then action 2 ``rec`` gated with a ``to`` param:

- ``cut``: ``who`` is 300 characters (cut in the record); ``to: $<actions[1].outputs.who>``.
- ``sec``: ``who: $<secrets.TOK>`` (masked in the record); same ``to``.
- ``appr``: ``to: $<approval.by>``.
- ``part``: ``who: pre-x-post``, ``to: "to-$<actions[1].outputs.who>"`` (a short plain value:
  the control, it goes on).

Alice approves; each pauses at the gate. The whole state directory is gone; Bob approves
every gate; two passes.

Asserted: ``cut``/``sec``/``appr`` end ``failed`` E_ACTION_IN_DOUBT and action 2's tool is
never called; ``part`` completes with ``to: to-pre-x-post``; action 1 ran once each. All
held.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab
from test_round2_execution_kit import shared

PLANS = {
    "cut": ("who: " + "L" * 300, '"$<actions[1].outputs.who>"'),
    "sec": ('who: "$<secrets.TOK>"', '"$<actions[1].outputs.who>"'),
    "appr": ("who: x", '"$<approval.by>"'),
    "part": ("who: pre-x-post", '"to-$<actions[1].outputs.who>"'),
}


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text("TOK: s3cr3t-Value-0042\n")
    lab = Lab(root / "lu", extra=f"secrets: {{file: {root / 'sec.yml'}}}\n")
    for tag, (param, ref) in PLANS.items():
        lab.write(
            tag,
            f"plan:\n  name: {tag}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: rec}]\nactions:\n"
            f"  - id: 1\n    tool: rec\n    why: w\n    params: {{tag: {tag}-1, {param}}}\n"
            "    outputs: [{name: who, path: $.json.echo.who}]\n"
            f"  - {{id: 2, tool: rec, why: w, requires_approval: true, "
            f"params: {{tag: {tag}-2, to: {ref}}}}}\n",
        )
    lab.commit("plans")
    lab.run()
    for tag in PLANS:
        lab.set_status(tag, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    shutil.rmtree(lab.state)
    for tag in PLANS:
        lab.set_status(tag, "approved")
    lab.commit("gates", BOB)
    lab.run(take_over=True)  # the state directory lost for good: told (round 70)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r52-lostunknown", _build)


@pytest.mark.parametrize("tag", ["cut", "sec", "appr"])
def test_unknown_values_fail_closed(lab: Lab, tag: str) -> None:
    assert len(lab.calls(f"{tag}-1")) == 1
    assert lab.calls(f"{tag}-2") == [], lab.calls(f"{tag}-2")
    assert lab.plan(tag)["plan"]["status"] == "failed"
    assert "E_ACTION_IN_DOUBT" in lab.codes(tag)


def test_a_plain_recorded_value_goes_on(lab: Lab) -> None:
    assert len(lab.calls("part-1")) == 1
    sent = lab.calls("part-2")
    assert len(sent) == 1 and '"to": "to-pre-x-post"' in sent[0]["stdin"], sent
