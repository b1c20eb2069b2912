"""Round 3, approval side: with ``require_signed``, a quorum counts people, and the
allowed-signers file says which identities are one person (one key).

Config: every plan needs two approvals; ``allowed_signers`` lists Alice's key for her address,
Bob's one key for his two addresses (``bob@ops…,robert@ops…``, as git's format allows), and
Carol's key for the principal pattern ``*@ops.example.com``.

Attacks: Bob signs one approval as bob@ and the next as robert@; Carol signs as carol@ and as
dave@ (her pattern covers both); Bob signs a ``Plan-Approved:`` trailer as robert@ on a review
branch and merges it, signed, as bob@. Defence: each is one person with one key: the plan waits
for a second person (partial), nothing runs. Control: Alice and Bob (two keys) run it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, cases, plan_text, play
from test_round2_approval_authors import shared_lab

Step = Callable[[Lab, str], None]
ROBERT = ("Robert", "robert@ops.example.com")
DAVE = ("Dave", "dave@ops.example.com")


def _keygen(path: Path) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path.with_suffix(".pub").read_text().strip()


def _sign_args(lab: Lab, key: str) -> list[str]:
    return ["-c", "gpg.format=ssh", "-c", f"user.signingkey={lab.root / 'keys' / key}"]


def submit(lab: Lab, vid: str) -> None:
    lab.write(vid, plan_text(vid))
    lab.commit(f"add {vid}", AGENT)


def signed_approve(key: str, who: tuple[str, str]) -> Step:
    def step(lab: Lab, vid: str) -> None:
        lab.set_status(vid, "approved")
        lab.git("add", "-A")
        lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "-m", f"approve {vid}", who=who)

    return step


def trailer_pr(key: str, who: tuple[str, str], merge_key: str, merger: tuple[str, str]) -> Step:
    def step(lab: Lab, vid: str) -> None:
        frozen = lab.cli("hash", str(lab.repo / "plans" / vid)).stdout.strip()
        lab.git("checkout", "-q", "-b", f"{vid}-review")
        lab.git(
            *_sign_args(lab, key),
            "commit", "-q", "--allow-empty", "-S", "-m",
            f"approve plans/{vid} (trailer)\n\nPlan-Approved: plans/{vid} {frozen}",
            who=who,
        )  # fmt: skip
        lab.set_status(vid, "approved")
        lab.commit(f"request {vid}", AGENT)
        lab.git("checkout", "-q", "main")
        lab.git(
            *_sign_args(lab, merge_key),
            "merge",
            "-q",
            "-S",
            "--no-ff",
            "--no-edit",
            f"{vid}-review",
            who=merger,
        )

    return step


ATTACKS: dict[str, list[Step]] = {
    "one-key-two-addresses": [submit, signed_approve("bob", BOB), signed_approve("bob", ROBERT)],
    "pattern-key-two-addresses": [
        submit,
        signed_approve("carol", CAROL),
        signed_approve("carol", DAVE),
    ],
    "trailer-and-merge-one-key": [submit, trailer_pr("bob", ROBERT, "bob", BOB)],
}
BROKEN: dict[str, object] = {}
CONTROLS: dict[str, list[Step]] = {
    "honest": [submit, signed_approve("alice", ALICE), signed_approve("bob", BOB)],
}
SANITY: dict[str, list[Step]] = {"one-person": [submit, signed_approve("bob", BOB)]}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {name: _keygen(keys / name) for name in ("alice", "bob", "carol")}
    signers = root / "allowed_signers"
    signers.write_text(
        f"alice@example.com {pubs['alice']}\n"
        f"bob@ops.example.com,robert@ops.example.com {pubs['bob']}\n"
        f'"*@ops.example.com" {pubs["carol"]}\n'
    )
    lab.write_config(
        approval=f"require_signed: true\nallowed_signers: {signers}\n"
        'rules:\n  - match: {paths: ["plans/**"]}\n    require: [{count: 2}]\n'
    )
    play(lab, ATTACKS | CONTROLS | SANITY)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r3-signers", _build)


def test_two_people_with_two_keys_run_it(lab: Lab) -> None:
    assert len(lab.calls("honest")) == 1, lab.codes("honest")


def test_one_signed_approval_waits(lab: Lab) -> None:
    assert lab.calls("one-person") == [] and "partial" in lab.codes("one-person")


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_one_key_is_one_person_in_a_quorum(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], f"one key met a quorum of two: {lab.codes(vid)}"
    assert not lab.started(vid), lab.codes(vid)
