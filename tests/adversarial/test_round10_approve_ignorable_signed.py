"""Round 10, who may make a plan run: ``test_round10_approve_ignorable.py``'s invisible
spelling of a glob approver's mailbox under ``require_signed`` (the documented answer to
claimed identities). Bob's key is listed for ``bob@ops.example.com``; ``plans/**`` needs two.

- ``dup-cgj``: the agent writes the plan; Bob signs an approval as ``bob@ops.example.com``
  (partial), then signs a second one with the same key as ``bo\\u034fb@ops.example.com``
  (U+034F COMBINING GRAPHEME JOINER: renders as his address).
- ``self-cgj``: Bob writes the plan (as ``bob@ops.example.com``); Alice signs a first vote;
  Bob signs the second as ``bo\\u034fb@ops.example.com``.

Defence: refused (``E_SIGNATURE_INVALID``: the signer is not that identity) or counted as
Bob; never runs. Result: held (E_SIGNATURE_INVALID: "signed by bob@ops.example.com but the
approver identity is bo\\u034fb@ops.example.com"). Control: ``honest`` (Alice and Bob, each
with their own key) runs once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_approval_authors import shared_lab
from test_round3_approve_signers import _keygen, _sign_args

CGJ = ("Bob", "bo\u034fb@ops.example.com")


def _signed(lab: Lab, vid: str, key: str, who: tuple[str, str]) -> None:
    lab.set_status(vid, "approved")
    lab.git("add", "-A")
    lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "-m", f"approve {vid}", who=who)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {name: _keygen(keys / name) for name in ("alice", "bob")}
    signers = root / "allowed_signers"
    signers.write_text(f"alice@example.com {pubs['alice']}\nbob@ops.example.com {pubs['bob']}\n")
    lab.write_config(
        approval=f"require_signed: true\nallowed_signers: {signers}\n"
        'rules:\n  - match: {paths: ["plans/**"]}\n    require: [{count: 2}]\n'
    )
    lab.write("self-cgj", plan_text("self-cgj"))
    lab.commit("bob writes his plan", BOB)
    for vid in ("dup-cgj", "honest"):
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    _signed(lab, "dup-cgj", "bob", BOB)
    _signed(lab, "self-cgj", "alice", ALICE)
    _signed(lab, "honest", "alice", ALICE)
    lab.run()
    _signed(lab, "dup-cgj", "bob", CGJ)
    _signed(lab, "self-cgj", "bob", CGJ)
    _signed(lab, "honest", "bob", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r10-ignorable-signed", _build)


def test_two_keys_run_it(lab: Lab) -> None:
    assert len(lab.calls("honest")) == 1, lab.codes("honest")


@pytest.mark.parametrize("vid", ["dup-cgj", "self-cgj"])
def test_one_key_under_an_invisible_spelling_is_no_second_vote(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
