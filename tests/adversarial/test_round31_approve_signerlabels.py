"""Round 31, self-approval under ``require_signed``: Alice's second key listed in
``allowed_signers`` under a principal spelled with an IDNA A-label, or on a line that names
several principals, used to sign the agent's content.

Round 30 (``signerlines``) tried line spellings and principals Alice by aliases, fullwidth
letters and comments. Here:

- ``alabel``: principal ``alice@xn--example-6z6c.com`` (``example`` + U+200B);
- ``alabel-ace``: ``alice@XN--example-6z6c.com`` (the ACE prefix in capitals);
- ``alabel-full``: ``alice@xn--mi7chab1aes7c.com`` (fullwidth ``ｅｘａｍｐｌｅ``);
- ``cgj-label``: ``alice@xn--example-sye.com`` (``exampl`` U+034F ``e``);
- ``zwsp-raw``: ``alice@example\u200b.com`` (the invisible character written raw, no A-label);
- ``multi-first``: ``alice@example.com,carol@ops.example.com`` (Alice first);
- ``multi-second``: ``carol@ops.example.com,alice@example.com`` (Alice second: git names the
  first principal ssh-keygen prints).

Config: the bench's, ``require_signed: true``, ``allowed_signers`` as above plus Alice's
approving key ``alice`` on a plain line. The agent's commit adding each plan is signed with
the variant's key (author and committer the agent); the controller freezes; Alice approves
signed with ``alice``.

Withdrawal: ``veto-alabel``: Alice rejects the agent's pending plan (author Alice) signed with
the ``alabel`` key; ``veto-plain``: the same with her plain key (control); the controller
passes; Bob approves (signed with his listed key). Asserted: her rejection wins, ``rec`` never
runs.

Asserted: a key that signed the content names its holder, Alice: ``E_SELF_APPROVAL``, ``rec``
never runs. ``ctl`` (the agent's unsigned plan, Alice approves) runs once.

Results: git accepts every signature (``%G?`` ``G``, ``%GS`` the listed principal).
``alabel-full``, ``zwsp-raw``, ``multi-first``, ``multi-second`` held (``E_SELF_APPROVAL``).
BROKE (strict xfails): ``alabel``, ``alabel-ace``, ``cgj-label``: the key that signed the
agent's content is not counted as Alice's; her signed approval starts the plan and ``rec``
runs once. The same spellings as a commit's author or co-author hold
(``test_round31_approve_alabels.py``), as does the invisible character written raw in the
principal (``zwsp-raw``): the principal's A-label is decoded without dropping the invisible
characters it decodes to. ``veto-alabel`` BROKE too (strict xfail): Alice's rejection signed
with that key is not hers; Bob's approval started the plan (``veto-plain`` held: rejected,
nothing ran).

Fixed (round 31): ``normalize_identity`` is now a fixed point: what decoding an A-label
brings out (an invisible character, a full stop, another A-label) is reduced again. Every
variant passes; ``FOUND`` stays as the record.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

LINES = {
    "alabel": "alice@xn--example-6z6c.com",
    "alabel-ace": "alice@XN--example-6z6c.com",
    "alabel-full": "alice@xn--mi7chab1aes7c.com",
    "zwsp-raw": "alice@example\u200b.com",
    "cgj-label": "alice@xn--example-sye.com",
    "multi-first": "alice@example.com,carol@ops.example.com",
    "multi-second": "carol@ops.example.com,alice@example.com",
}
VETO = {"veto-alabel": "k-alabel", "veto-plain": "alice"}
_BROKE = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 31: an allowed_signers principal whose domain is an xn-- label decoding to an "
    "invisible character (U+200B, U+034F; any case of the ACE prefix) does not name Alice, so "
    "content signed with her key is not hers and her approval starts the plan",
)
FOUND: dict[str, pytest.MarkDecorator] = {v: _BROKE for v in ("alabel", "alabel-ace", "cgj-label")}
FOUND["veto-alabel"] = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 31: Alice's rejection signed with her key listed under an xn-- principal "
    "(U+200B) is not counted as hers; Bob's approval then starts the plan",
)


def _key(keys: Path, name: str) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(keys / name)],
        check=True,
        capture_output=True,
    )
    return (keys / f"{name}.pub").read_text().strip()


def _commit(lab: Lab, key: str, who: tuple[str, str], message: str) -> None:
    lab.git("add", "-A")
    path = lab.root / "keys" / key
    lab.git(
        "-c", "gpg.format=ssh", "-c", f"user.signingkey={path}",
        "commit", "-q", "-S", "--allow-empty", "-m", message, who=who,
    )  # fmt: skip


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    text = f"alice@example.com {_key(keys, 'alice')}\nbob@ops.example.com {_key(keys, 'bob')}\n"
    for vid, principal in LINES.items():
        text += f"{principal} {_key(keys, f'k-{vid}')}\n"
    signers = root / "allowed_signers"
    signers.write_bytes(text.encode())
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    shows = {}
    for vid in LINES:
        lab.write(vid, plan_text(vid))
        _commit(lab, f"k-{vid}", AGENT, f"add {vid}")
        shows[vid] = lab.git(
            "-c", f"gpg.ssh.allowedSignersFile={signers}", "log", "-1", "--format=%G? %GS"
        ).strip()
    lab.shows = shows  # type: ignore[attr-defined]
    lab.write("ctl", plan_text("ctl"))
    for vid in VETO:
        lab.write(vid, plan_text(vid))
    lab.commit("add ctl", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid, key in VETO.items():
        lab.set_status(vid, "rejected")
        _commit(lab, key, ALICE, f"reject {vid}")
    lab.run()
    time.sleep(1.05)
    for vid in VETO:
        lab.set_status(vid, "approved")
        _commit(lab, "bob", BOB, f"approve {vid}")
    for vid in [*LINES, "ctl"]:
        lab.set_status(vid, "approved")
        _commit(lab, "alice", ALICE, f"approve {vid}")
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r31-signerlabels", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v) for v in vids]  # FOUND: the record; fixed, so no marks


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", list(LINES))
def test_git_accepts_the_signature(lab: Lab, vid: str) -> None:
    assert lab.shows[vid].startswith("G "), lab.shows[vid]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(list(LINES)))
def test_her_second_key_makes_her_a_writer(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], (lab.shows[vid], lab.codes(vid))  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", _p(list(VETO)))
def test_her_signed_rejection_with_that_key_wins(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
