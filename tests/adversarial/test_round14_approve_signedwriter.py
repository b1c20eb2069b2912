"""Round 14, who may make a plan run, with ``require_signed``: content an approver commits
under the agent's name but signs with her own key, and withdrawals that claim an approver's
name without her signature.

Config: ``require_signed: true``; ``allowed_signers`` lists Alice's key for
``alice@example.com`` and Bob's for ``bob@ops.example.com``; one approval.

Without signatures, content written under another name is a claim git cannot check (out of
scope). Here every commit can carry proof of who made it: a commit signed with Alice's key was
made by Alice, whatever author line it shows.

- ``signed-content``: Alice commits the whole plan as author and committer ``Agent``, signed
  with her key; then approves it (signed, as herself).
- ``signed-edit``: the agent writes the plan; Alice commits a content edit as ``Agent``,
  signed with her key; then approves the new version (signed).
- ``signed-notes``: Bob commits ``NOTES.md`` into the plan's folder as ``Agent``, signed with
  his key, before the agent adds the plan; Bob approves (signed).
- ``signed-coauthor-key``: the agent's own commit of the plan (as ``Agent``) carries Bob's
  signature (Bob signed it for the agent); Bob approves (signed).

Defence: ``E_SELF_APPROVAL`` (the signer made the content), nothing runs.

- ``gate-writer``: a gated plan (action 2 ``requires_approval``) whose content Bob committed
  as ``Agent``, signed with his key; Alice approves it (signed), it pauses at the gate; Bob
  approves the gate (signed).
- ``gate-unsigned``: the agent's gated plan; Alice approves it (signed); at the gate Alice's
  approval is unsigned. Defence: ``E_SIGNATURE_INVALID``, the gated action never runs.

- ``forged-reject``: Mallory commits ``status: rejected`` as ``Alice <alice@example.com>``,
  unsigned; then Bob approves (signed). With ``require_signed`` a bare name is a claim: the
  rejection should not count and the plan runs once. (Denial only; recorded for the record.)

Control: ``honest`` (the agent's plan, Alice's signed approval) runs once.

Results: every variant but ``gate-unsigned`` broke (strict xfails). The four ``signed-*``
plans ran on the signer's own signed approval (``plangate status``: ``completed``, approver
Alice / Bob; ``git log --format=%G?/%GS`` shows each content commit ``G`` by that approver's
key); ``gate-writer``'s gated action ran on Bob's signed gate approval.
``gate-unsigned`` held (``E_SIGNATURE_INVALID``). ``forged-reject``
stayed ``rejected`` (Bob's signed approval then ``E_ILLEGAL_TRANSITION``), nothing ran.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen, _sign_args

SELF = ["signed-content", "signed-edit", "signed-notes", "signed-coauthor-key", "gate-writer"]
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
FOUND = {  # round 14: broke (strict xfails); fixed since, see BROKEN
    vid: pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 14: under require_signed, a content commit signed by the approver but "
        "authored as the agent does not make her a writer: her own signed approval runs it",
    )
    for vid in SELF
}
BROKEN: dict[str, pytest.MarkDecorator] = {}  # a signing key is a writer (key:<fingerprint>)
FORGED_FOUND = [
    pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 14: under require_signed, an unsigned commit merely claiming Alice's "
        "name rejects the version for good (a denial, not a run)",
    )
]
FORGED_BROKEN: list[pytest.MarkDecorator] = []  # withdrawals too must be signed, since


def _signed_commit(lab: Lab, key: str, who: tuple[str, str], message: str) -> None:
    lab.git("add", "-A")
    lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "-m", message, who=who)


def _signed_approve(lab: Lab, vid: str, key: str, who: tuple[str, str]) -> None:
    lab.set_status(vid, "approved")
    _signed_commit(lab, key, who, f"approve {vid}")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {name: _keygen(keys / name) for name in ("alice", "bob")}
    signers = root / "allowed_signers"
    signers.write_text(f"alice@example.com {pubs['alice']}\nbob@ops.example.com {pubs['bob']}\n")
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    lab.write("signed-content", plan_text("signed-content"))
    _signed_commit(lab, "alice", AGENT, "add signed-content")
    lab.write("signed-notes", "looks good\n", filename="NOTES.md")
    _signed_commit(lab, "bob", AGENT, "notes")
    lab.write("signed-coauthor-key", plan_text("signed-coauthor-key"))
    _signed_commit(lab, "bob", AGENT, "add signed-coauthor-key")
    lab.write("gate-writer", plan_text("gate-writer", extra_actions=GATE.format(tag="gate-writer")))
    _signed_commit(lab, "bob", AGENT, "add gate-writer")
    for vid in ("signed-edit", "signed-notes", "forged-reject", "honest"):
        lab.write(vid, plan_text(vid))
    lab.write(
        "gate-unsigned", plan_text("gate-unsigned", extra_actions=GATE.format(tag="gate-unsigned"))
    )
    lab.commit("agent adds plans", AGENT)
    lab.write("signed-edit", plan_text("signed-edit", params="extra: 1\n"))
    _signed_commit(lab, "alice", AGENT, "edit signed-edit")
    lab.run()  # freeze
    lab.set_status("forged-reject", "rejected")
    lab.commit("reject forged-reject", ("Alice", "alice@example.com"))
    lab.run()
    for vid in ("signed-content", "signed-edit", "honest", "gate-writer", "gate-unsigned"):
        _signed_approve(lab, vid, "alice", ALICE)
    for vid in ("signed-notes", "signed-coauthor-key", "forged-reject"):
        _signed_approve(lab, vid, "bob", BOB)
    lab.run()
    _signed_approve(lab, "gate-writer", "bob", BOB)
    lab.approve("gate-unsigned", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r14-signedwriter", _build)


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("honest")) == 1, lab.codes("honest")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in SELF])
def test_the_signer_of_the_content_cannot_approve_it(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-gated" if vid.startswith("gate-") else vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", [pytest.param("forged-reject", marks=FORGED_BROKEN)])
def test_an_unsigned_claimed_rejection_does_not_count(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


def test_the_gated_plans_paused(lab: Lab) -> None:
    assert len(lab.calls("gate-unsigned")) == 1, lab.codes("gate-unsigned")


def test_an_unsigned_gate_approval_does_not_open_the_gate(lab: Lab) -> None:
    assert lab.calls("gate-unsigned-gated") == [], lab.codes("gate-unsigned")
    assert "E_SIGNATURE_INVALID" in lab.codes("gate-unsigned"), lab.codes("gate-unsigned")
