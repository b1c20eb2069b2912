"""Round 17, signatures: the key that made an approver a writer, rotated out of
``allowed_signers`` before she approves.

Round 14's fix: "a good signature's key is a maker of the commit: the index keeps
``key:<fingerprint>`` among the content's writers, and an approver whose key
``allowed_signers`` lists signed one is refused" (``E_SELF_APPROVAL``). The key is mapped to
its person when the approval is decided, with the file as it is then. Keys get rotated: the
operator lists the approver's new key and drops (or retires) the old one. The old key's line
is still in git history (``.plangate/policy.json`` records ``allowed_signers`` as text).

Config: ``require_signed: true``; ``allowed_signers`` v1: Alice's key 1, Bob's key. Alice
commits each plan under the agent's name (author and committer ``Agent``), signed with her
key 1; the controller freezes it. Then the operator rotates Alice's key:

- ``rot-retired``: v2 keeps key 1 with ``valid-before="20260101"`` and adds her key 2;
  Alice approves, signed with key 2.
- ``rot-removed``: v3 drops key 1's line (key 2 and Bob's stay); Alice approves, signed with
  key 2.

- ``file-key``: no rotation; Alice signed the content with her second listed key, whose line
  says ``namespaces="file"`` (not for git commits); she approves with key 2 (v2).
- ``future-key``: the same with her key listed ``valid-after="20990101"`` (not valid yet).

Defence: ``E_SELF_APPROVAL`` (the content's signer is Alice), nothing runs. Control: ``ctl``
(the agent's own unsigned plan, Alice's signed approval with key 2) runs once.

Results: ``rot-retired``, ``file-key`` and ``future-key`` held (``E_SELF_APPROVAL``:
"alice@example.com's key SHA256:... signed a commit that wrote or changed this plan's
content"). ``rot-removed`` BROKE: the plan Alice signed ran on her own signed approval
(``approval.by: alice@example.com``, ``signature: alice@example.com``); her writing is
forgotten once the operator deletes her old key's line, though the recorded policy in git
still shows that key was hers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen, _sign_args

VIDS = ["rot-retired", "rot-removed", "file-key", "future-key"]
BROKEN = {
    "rot-removed": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 17: a content commit signed by the approver's key stops making her a "
        "writer once that key's line is removed from allowed_signers (key rotation)",
    )
}


def _signed_commit(lab: Lab, message: str, key: str, who: tuple[str, str]) -> None:
    lab.git("add", "-A")
    lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "-m", message, who=who)


def _approve(lab: Lab, slug: str) -> None:
    lab.set_status(slug, "approved")
    _signed_commit(lab, f"approve {slug}", "alice2", ALICE)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    one, two, bob, filekey, future = (
        _keygen(keys / name) for name in ("alice1", "alice2", "bob", "alicefile", "alicenext")
    )
    signers = root / "allowed_signers"
    lines = f'{ALICE[1]} namespaces="file" {filekey}\n{ALICE[1]} valid-after="20990101" {future}\n'
    signers.write_text(f"{ALICE[1]} {one}\n{BOB[1]} {bob}\n" + lines)
    lab.write_config(approval=f"allowed_signers: {signers}\nrequire_signed: true\n")
    signing = {"file-key": "alicefile", "future-key": "alicenext"}
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
        _signed_commit(lab, f"add {vid}", signing.get(vid, "alice1"), AGENT)  # hers, as the agent
    lab.write("ctl", plan_text("ctl"))
    lab.commit("agent adds ctl", AGENT)
    lab.run()  # freeze
    signers.write_text(
        f'{ALICE[1]} valid-before="20260101" {one}\n{ALICE[1]} {two}\n{BOB[1]} {bob}\n' + lines
    )
    lab.run()  # policy recorded
    for slug in ("rot-retired", "ctl", "file-key", "future-key"):
        _approve(lab, slug)
    lab.run()
    signers.write_text(f"{ALICE[1]} {two}\n{BOB[1]} {bob}\n" + lines)
    lab.run()  # policy recorded
    _approve(lab, "rot-removed")
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r17-keyrotation", _build)


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_the_signer_of_the_content_cannot_approve_it_after_rotation(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)
