# ruff: noqa: E501  (attack steps read best on one line)
"""Round 31, self-approval: a writer's address spelled with an IDNA A-label (``xn--``) whose
Unicode holds what the identity rules drop or fold *after* decoding.

docs/approvals.md (Identities): "Invisible characters are dropped first" and "each ``xn--``
label as the Unicode it encodes"; NFKC, case and IDNA full stops fold too. Round 18 tried
``dora@xn--bcher-kva.example`` (a plain A-label). Here the label's Unicode is itself a spelling
the rules reduce (an invisible character, a fullwidth form, an ideographic full stop, upper
case), so the reduction has to run again on what the label decodes to.

Config: the bench's (approvers Alice and ``*@ops.example.com``, one approval). Bob writes
each plan (author and committer) under a spelling of ``bob@ops.example.com``; the controller
freezes it; Bob approves on main as ``bob@ops.example.com``:

- ``plain``: ``bob@ops.example.com`` itself (the documented rule, a control);
- ``zwsp``: ``bob@xn--ops-7m0a.example.com`` (``ops`` + U+200B);
- ``cgj``: ``bob@xn--ops-hmc.example.com`` (``o`` U+034F ``ps``);
- ``shy``: ``bob@xn--ops-hfa.example.com`` (``op`` U+00AD ``s``);
- ``wj``: ``bob@xn--ops-4m0a.example.com`` (U+200B ``ops``);
- ``full``: ``bob@xn--0i7ccj.example.com`` (fullwidth ``ｏｐｓ``);
- ``stop``: ``bob@xn--opsexample-ph3i.com`` (``ops。example``: an ideographic full stop);
- ``upper``: ``bob@xn--OPS-7m0a.example.com`` (``OPS`` + U+200B);
- ``co-zwsp``: the agent writes the plan with ``Co-authored-by: Bob <bob@xn--ops-7m0a.example.com>``.

Asserted: Bob wrote the content, so his approval is ``E_SELF_APPROVAL``: ``rec`` never runs.
``ctl``: the agent writes, Bob approves: runs once.

Bad input (``junk``): a plan written by ``x@xn--55555555555555555555.com`` (punycode that does
not decode) and approved by Bob, and an approval by ``bob@xn--999999999999999999999999a.example.com``
(decodes to no code point) on ``junk2``: the pass finishes (no traceback) and ``ctl`` runs.

Results: every variant held (``E_SELF_APPROVAL``, nothing ran; ``junk`` and ``junk2`` cost
only their plans; ``ctl`` ran once).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, BOB, Lab, plan_text
from test_round2_execution_kit import shared

SPELL = {
    "plain": "bob@ops.example.com",
    "zwsp": "bob@xn--ops-7m0a.example.com",
    "cgj": "bob@xn--ops-hmc.example.com",
    "shy": "bob@xn--ops-hfa.example.com",
    "wj": "bob@xn--ops-4m0a.example.com",
    "full": "bob@xn--0i7ccj.example.com",
    "stop": "bob@xn--opsexample-ph3i.com",
    "upper": "bob@xn--OPS-7m0a.example.com",
}
VIDS = [*SPELL, "co-zwsp"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid, email in SPELL.items():
        lab.write(vid, plan_text(vid))
        lab.commit(f"bob writes {vid}", ("Bob", email))
    lab.write("co-zwsp", plan_text("co-zwsp"))
    lab.commit(
        "agent writes co-zwsp\n\nCo-authored-by: Bob <bob@xn--ops-7m0a.example.com>\n", AGENT
    )
    lab.write("ctl", plan_text("ctl"))
    lab.write("junk2", plan_text("junk2"))
    lab.commit("agent writes ctl", AGENT)
    lab.write("junk", plan_text("junk"))
    lab.commit("x writes junk", ("X", "x@xn--55555555555555555555.com"))
    lab.run()
    for vid in [*VIDS, "ctl", "junk"]:
        lab.approve(vid, BOB)
    lab.approve("junk2", ("Bob", "bob@xn--999999999999999999999999a.example.com"))
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r31-alabels", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", _p(VIDS))
def test_writer_spelled_through_an_a_label_cannot_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


def test_undecodable_labels_cost_only_their_plan(lab: Lab) -> None:
    assert lab.calls("junk2") == [], lab.codes("junk2")
    assert "Traceback" not in lab.codes("junk") + lab.codes("junk2")
