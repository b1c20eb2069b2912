# ruff: noqa: E501  (config and plan text read best on one line)
"""Round 49, quorum groups and one person's spellings: ``groups: {ops: ['*@ops.example.com'],
security: ['BOB@ops.example.com', 'sec@example.com']}``, approvers the bench's plus
``sec@example.com``, ``identity_aliases: {plus_tags: ['*@ops.example.com']}``; rule ``require: [{group: ops, count: 1}, {group: security, count: 1}]``.
Each plan ``plans/g/<vid>`` is the agent's; the controller freezes; then:

- ``one``: Bob approves once (he is in both groups: one person fills one entry).
- ``two-spellings``: Bob approves (``bob@ops.example.com``), then again as
  ``Bob <BOB@OPS.EXAMPLE.COM>``.
- ``plus``: Bob approves, then again as ``bob+sec@ops.example.com`` (a ``+tag`` the
  operator declared; without ``plus_tags`` it is another address, a documented limit).
- ``ctl`` (control): Bob then ``sec@example.com``: runs once.

Asserted (the defence): one person never fills two entries: ``rec`` never ran for the
variants (``partial``), the control ran once.

Seen: all held.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import BOB, Lab, plan_text
from test_round2_execution_kit import shared

CASES = ["one", "two-spellings", "plus"]
SECOND = {
    "two-spellings": ("Bob", "BOB@OPS.EXAMPLE.COM"),
    "plus": ("Bob", "bob+sec@ops.example.com"),
}
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    approval = (
        "identity_aliases: {plus_tags: ['*@ops.example.com']}\n"
        "groups:\n  ops: ['*@ops.example.com']\n  security: ['BOB@ops.example.com', 'sec@example.com']\n"
        "rules:\n  - {match: {paths: ['plans/g/**']}, require: [{group: ops, count: 1}, {group: security, count: 1}]}\n"
    )
    lab = Lab(root, approval=approval)
    text = lab.config.read_text().replace(
        '"*@ops.example.com"]', '"*@ops.example.com", "sec@example.com"]'
    )
    lab.config.write_text(text)
    for vid in ["ctl", *CASES]:
        lab.write(f"g/{vid}", plan_text(vid))
    lab.commit("agent adds plans")
    lab.run()
    for vid in ["ctl", *CASES]:
        lab.set_status(f"g/{vid}", "approved")
    lab.commit("bob approves", BOB)
    lab.run()
    lab.approve("g/ctl", ("Sec", "sec@example.com"))
    for vid, who in SECOND.items():
        lab.approve(f"g/{vid}", who)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r49-groupspell", _build)


def test_the_control_ran_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("g/ctl")


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in CASES]
)
def test_one_person_fills_one_entry(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"g/{vid}")
