"""Round 5, who may make a plan run: address spellings earlier rounds did not try (they
covered case, NFC/NFD, ``<>``, a trailing dot, ``+tag``). Alice writes the plan's content as
``alice@example.com`` and approves under another spelling that names the same mailbox (a
quoted local part, an RFC 5322 comment, a fullwidth letter NFKC folds, a zero-width
space).

Defence: never run on Alice's approval alone: her self-approval is ``E_SELF_APPROVAL`` or
the other spelling is no approver at all (``E_APPROVER_NOT_ALLOWED``).

Held (4 of 4): every other spelling is no approver (``E_APPROVER_NOT_ALLOWED``). Also tried,
held the same way and dropped for suite time: NBSP after the address, a quoted domain, and
each spelling as the second vote for a plan whose rule needs two (it stays partial).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

SPELLINGS = {
    "quoted": '"alice"@example.com',
    "comment": "alice(work)@example.com",
    "fullwidth": "ａlice@example.com",
    "zwsp": "ali\u200bce@example.com",
}
SELF = [f"self-{k}" for k in SPELLINGS]
QUORUM: list[str] = []
BROKEN: dict[str, list[pytest.MarkDecorator]] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in SELF + QUORUM:
        lab.write(vid, plan_text(vid))
    lab.write("control", plan_text("control"))
    lab.commit("agent adds plans", AGENT)
    for vid in SELF:  # Alice edits the content of her own plans
        path = lab.repo / "plans" / vid / "PLAN.yml"
        path.write_text(path.read_text().replace('why: "record', 'why: "Alice: record'))
    lab.commit("alice edits", ALICE)
    lab.run()  # freeze
    time.sleep(1.1)
    lab.approve("control", ALICE)
    for key in SPELLINGS:
        lab.approve(f"self-{key}", ("Alice", SPELLINGS[key]))
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r5-spelling", _build)


def test_the_control_runs(lab: Lab) -> None:
    assert len(lab.calls("control")) == 1, lab.codes("control")


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in SELF + QUORUM]
)
def test_another_spelling_of_alice_is_still_alice(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    codes = lab.codes(vid)
    assert any(c in codes for c in ("E_SELF_APPROVAL", "E_APPROVER_NOT_ALLOWED")), codes
