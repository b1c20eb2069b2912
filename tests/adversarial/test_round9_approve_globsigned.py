# ruff: noqa: E501  (attack steps read best on one line)
"""Round 9, who may make a plan run: the glob-approver spelling attack of
``test_round9_approve_globspell.py`` under ``require_signed`` (the documented answer to
claimed identities). Bob's key is listed for ``bob@ops.example.com``; ``plans/**`` needs two.

- ``dup-comment``: Bob signs an approval as ``bob@ops.example.com`` (partial), then signs a
  second one with the same key as ``bob(ops)@ops.example.com``: one key, one mailbox, one vote.

Defence: the second approval is refused (``E_SIGNATURE_INVALID``, the signer is not that
identity) or counts as the same person; the plan stays partial and never runs.
Result: held (E_SIGNATURE_INVALID). Control: ``honest`` (Alice and Bob, each with their own key) runs once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_approval_authors import shared_lab
from test_round3_approve_signers import _keygen, _sign_args


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
    for vid in ("dup-comment", "honest"):
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    _signed(lab, "dup-comment", "bob", BOB)
    _signed(lab, "honest", "alice", ALICE)
    lab.run()
    _signed(lab, "dup-comment", "bob", ("Bob", "bob(ops)@ops.example.com"))
    _signed(lab, "honest", "bob", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r9-globsigned", _build)


def test_two_keys_run_it(lab: Lab) -> None:
    assert len(lab.calls("honest")) == 1, lab.codes("honest")


def test_one_key_under_two_spellings_is_one_vote(lab: Lab) -> None:
    assert lab.calls("dup-comment") == [], lab.codes("dup-comment")
    assert not lab.started("dup-comment"), lab.codes("dup-comment")
