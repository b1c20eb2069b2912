"""Round 40, a quorum vote whose signature carries a second blob: does the extra blob (a
certificate of the next voter) make plangate count the vote under that voter's key, so that
the next voter's real vote is refused as "one signing key counts once" (round 33) or her
vote is double-counted?

Config: the bench's, ``require_signed: true``, ``allowed_signers``: the controller's key and
``*@example.com,*@ops.example.com cert-authority <ca>``; Alice, Bob and Carol sign with CA
certificates; ``approval.rules: [{match: {}, require: [{count: 2}]}]``. The agent writes
each plan; the controller freezes it. Alice's approval commit (signed with her certificate)
is rewritten (``git hash-object``) with Bob's blob (a signature Bob made on any commit)
after hers: ``tail`` as a second ``gpgsig`` header, ``cont`` as continuation lines,
``sha`` in a ``gpgsig-sha256`` header. The controller passes (``partial``). Then Bob
approves with his own certificate; the controller passes.

Asserted (the defence): Alice's crafted vote is one vote (Alice's): after it the plan is
``partial`` and ``rec`` never ran; Bob's real vote then completes the quorum: the plan
starts once.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import signkit
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared
from test_round40_approve_sigblobs import _commit, _donor, _graft, _key

HOW = {"tail": "tail", "cont": "cont", "sha": "sha-after"}
VARIANTS = list(HOW)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    ca = _key(keys, "ca")
    bot = _key(keys, "bot")
    _key(keys, "alice", "alice@example.com")
    _key(keys, "bob", "bob@ops.example.com")
    signers = root / "allowed_signers"
    signers.write_text(
        f"plangate@localhost {bot}\n*@example.com,*@ops.example.com cert-authority {ca}\n"
    )
    lab.write_config(
        approval=f"require_signed: true\nallowed_signers: {signers}\n"
        "rules:\n  - match: {}\n    require: [{count: 2}]\n"
    )
    for vid in VARIANTS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    signkit.signed_run(lab)
    donor = _donor(lab, "bob", BOB)
    time.sleep(1.05)
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
        _commit(lab, f"approve {vid}", "alice", ALICE)
        _graft(lab, HOW[vid], donor)
    signkit.signed_run(lab)
    lab.after_alice = {v: (lab.subjects(v), len(lab.calls(v))) for v in VARIANTS}  # type: ignore[attr-defined]
    for vid in VARIANTS:
        if lab.plan(vid)["plan"]["status"] == "pending_approval":
            lab.set_status(vid, "approved")
            _commit(lab, f"approve {vid}", "bob", BOB)
    signkit.signed_run(lab)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r40-blobvote", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(VARIANTS))
def test_alices_crafted_vote_is_one_vote(lab: Lab, vid: str) -> None:
    subjects, calls = lab.after_alice[vid]  # type: ignore[attr-defined]
    assert calls == 0, subjects
    assert any(s.startswith("plangate: partial ") for s in subjects), (subjects, lab.codes(vid))


@pytest.mark.parametrize("vid", _p(VARIANTS))
def test_bobs_real_vote_completes_the_quorum(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
