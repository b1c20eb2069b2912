"""Round 18, who may make a plan run: one signing key listed on several ``allowed_signers``
lines casts several quorum votes.

Round 3 (``test_round3_approve_signers.py``) held "one key is one person" for one line naming
two principals (``bob@…,robert@…``) and for a pattern line. git's format also lets the operator
list the same public key on separate lines (one per address, as an address is added later), or
with options (``namespaces="git"``); the key is still one person.

Config: ``require_signed``, every plan needs two approvals; approvers Alice,
``*@ops.example.com`` and ``*@bücher.example``/``*@xn--bcher-kva.example``.
``allowed_signers``: Alice's key; Bob's one key on three lines (``bob@ops…``,
``robert@ops…``, ``bert@ops…`` with ``namespaces="git"``); Carol's key; Dora's one key for
``dora@bücher.example,dora@xn--bcher-kva.example``.

- ``lines-two``: Bob signs an approval as bob@ (partial), then one as robert@.
- ``lines-opts``: Bob signs as bob@, then as bert@ (the line with options).
- ``lines-trailer``: Bob signs a ``Plan-Approved:`` trailer as robert@ on a review branch and
  merges it, signed, as bob@.
- ``idna-signed``: Dora signs as ``dora@bücher.example``, then as ``dora@xn--bcher-kva.example``.

Defence: one key, one person: the plan stays partial, ``rec`` never runs for it.
Controls: ``honest`` (Alice's and Carol's keys) runs once; ``one`` (Bob once) stays partial.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from advkit import ALICE, BOB, CAROL, Lab, cases, play
from test_round2_approval_authors import shared_lab
from test_round3_approve_signers import _keygen, signed_approve, submit, trailer_pr

Step = Callable[[Lab, str], None]
ROBERT = ("Robert", "robert@ops.example.com")
BERT = ("Bert", "bert@ops.example.com")
DORA_U = ("Dora", "dora@bücher.example")
DORA_A = ("Dora", "dora@xn--bcher-kva.example")

ATTACKS: dict[str, list[Step]] = {
    "lines-two": [submit, signed_approve("bob", BOB), signed_approve("bob", ROBERT)],
    "lines-opts": [submit, signed_approve("bob", BOB), signed_approve("bob", BERT)],
    "lines-trailer": [submit, trailer_pr("bob", ROBERT, "bob", BOB)],
    "idna-signed": [submit, signed_approve("dora", DORA_U), signed_approve("dora", DORA_A)],
}
BROKEN: dict[str, object] = {}
CONTROLS: dict[str, list[Step]] = {
    "honest": [submit, signed_approve("alice", ALICE), signed_approve("carol", CAROL)],
    "one": [submit, signed_approve("bob", BOB)],
}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {name: _keygen(keys / name) for name in ("alice", "bob", "carol", "dora")}
    signers = root / "allowed_signers"
    signers.write_text(
        f"alice@example.com {pubs['alice']}\n"
        f"bob@ops.example.com {pubs['bob']}\n"
        f"carol@ops.example.com {pubs['carol']}\n"
        f"robert@ops.example.com {pubs['bob']}\n"
        f'bert@ops.example.com namespaces="git" {pubs["bob"]}\n'
        f"dora@bücher.example,dora@xn--bcher-kva.example {pubs['dora']}\n"
    )
    lab.write_config(
        approval=f"require_signed: true\nallowed_signers: {signers}\n"
        'rules:\n  - match: {paths: ["plans/**"]}\n    require: [{count: 2}]\n'
    )
    approvers = [
        "alice@example.com",
        "*@ops.example.com",
        "*@bücher.example",
        "*@xn--bcher-kva.example",
    ]
    text = lab.config.read_text()
    old = "  approvers: " + json.dumps(["alice@example.com", "*@ops.example.com"]) + "\n"
    assert old in text
    lab.config.write_text(text.replace(old, "  approvers: " + json.dumps(approvers) + "\n"))
    play(lab, ATTACKS | CONTROLS)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r18-keylines", _build)


def test_two_keys_run_it(lab: Lab) -> None:
    assert len(lab.calls("honest")) == 1, lab.codes("honest")


def test_one_signed_approval_waits(lab: Lab) -> None:
    assert lab.calls("one") == [] and "partial" in lab.codes("one"), lab.codes("one")


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_one_key_on_many_lines_is_one_vote(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], f"one key met a quorum of two: {lab.codes(vid)}"
    assert not lab.started(vid), lab.codes(vid)
