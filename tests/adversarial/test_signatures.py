"""Property: with ``require_signed``, only the approver's own key approves (SPEC §5
E_SIGNATURE_INVALID: git accepts the signature, the signer is an allowed approver, and the
signer is the approver).

Attacks with SSH signatures (``allowed_signers`` lists Alice, Bob, Mallory — a colleague
who signs her commits but may not approve — and Alice's expired old key): an unsigned
approval; Mallory signing a commit authored as Alice; Bob (an approver) signing as Alice;
Alice signing as Bob; a key nobody listed; Alice's expired key; a GPG key whose user id
carries Alice's address, in the controller's keyring. Defence: refused E_SIGNATURE_INVALID,
the tool never runs. Control: Alice signing as herself runs.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, cases, plan_text, play
from test_round2_execution_kit import shared

KEYS = ("alice", "bob", "mallory", "stranger", "alice_old", "alice_files")


def _keygen(path: Path) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path.with_suffix(".pub").read_text().strip()


def submit(lab: Lab, vid: str) -> None:
    lab.write(vid, plan_text(vid))
    lab.commit(f"add {vid}", AGENT)


def signed_approval(
    key: str | None, who: tuple[str, str] = ALICE, fmt: str = "ssh"
) -> Callable[[Lab, str], None]:
    def step(lab: Lab, vid: str) -> None:
        lab.set_status(vid, "approved")
        lab.git("add", "-A")
        args = ["commit", "-q", "-m", f"approve {vid}"]
        if key is not None and fmt == "ssh":
            keyfile = lab.root / "keys" / key
            args = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={keyfile}", *args, "-S"]
        elif key is not None:
            args = ["-c", "gpg.format=openpgp", *args, f"-S{key}"]
            lab.extra_env = {"GNUPGHOME": str(lab.mallory_gpg)}  # type: ignore[attr-defined]
        try:
            lab.git(*args, who=who)
        finally:
            lab.extra_env = {}  # type: ignore[attr-defined]

    return step


_SIGNED_SOURCES: dict[str, str] = {}


def submit_pair(lab: Lab, vid: str) -> None:
    """The agent's plan and, in another folder, the plan Alice approves."""
    lab.write(vid, plan_text(vid))
    lab.write(f"{vid}-src", plan_text(f"{vid}-src"))
    lab.commit(f"add {vid} and {vid}-src", AGENT)


def signed_source_approval(lab: Lab, vid: str) -> None:
    signed_approval("alice")(lab, f"{vid}-src")
    _SIGNED_SOURCES[vid] = lab.head()


def move_onto_plan(lab: Lab, vid: str) -> None:
    """``git am --directory`` moves Alice's signed approval onto the agent's plan: her
    name, date and subject stay; her signature cannot (round 4: out of scope unsigned)."""
    patch = lab.git("format-patch", "-1", "--stdout", _SIGNED_SOURCES[vid])
    args = ["git", "am", "-C0", "-p3", f"--directory=plans/{vid}"]
    subprocess.run(args, cwd=lab.repo, env=lab.env(AGENT), input=patch, text=True, check=True)


ATTACKS = {
    "signed-approval-moved": [submit_pair, signed_source_approval, move_onto_plan],
    "unsigned": [submit, signed_approval(None)],
    "mallory-signs-as-alice": [submit, signed_approval("mallory")],
    "bob-signs-as-alice": [submit, signed_approval("bob")],
    "alice-signs-as-bob": [submit, signed_approval("alice", BOB)],
    "stranger-key-as-alice": [submit, signed_approval("stranger")],
    "expired-alice-key": [submit, signed_approval("alice_old")],
    "mallory-signs-as-mallory": [submit, signed_approval("mallory", MALLORY)],
    "alice-file-signing-key": [submit, signed_approval("alice_files")],
    "alice-signs-agents-commit": [submit, signed_approval("alice", AGENT)],
    "gpg-uid-carries-alice": [submit, signed_approval("alice@example.com", fmt="gpg")],
}
CONTROLS = {
    "alice-signs-as-alice": [submit, signed_approval("alice")],
    "bob-signs-as-bob": [submit, signed_approval("bob", BOB)],
}
CODES = {"E_SIGNATURE_INVALID", "E_APPROVER_NOT_ALLOWED"}


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    keys = lab.root / "keys"
    keys.mkdir()
    pub = {name: _keygen(keys / name) for name in KEYS}
    signers = lab.root / "allowed_signers"
    signers.write_text(
        f"alice@example.com {pub['alice']}\n"
        f"bob@ops.example.com {pub['bob']}\n"
        f"mallory@example.com {pub['mallory']}\n"
        f'alice@example.com valid-before="20200101" {pub["alice_old"]}\n'
        f'alice@example.com namespaces="file" {pub["alice_files"]}\n'
    )
    # Mallory makes a GPG key whose user id claims Alice's address in her own keyring; its
    # public half is imported (untrusted) into the keyring the controller verifies with.
    mallory_gpg = lab.root / "mallory-gnupg"
    mallory_gpg.mkdir(mode=0o700)
    gpg_env = {**lab.env(), "GNUPGHOME": str(mallory_gpg)}
    uid = "Mallory <alice@example.com>"
    gen = ["gpg", "--batch", "--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign"]
    subprocess.run([*gen, "never"], env=gpg_env, check=True, capture_output=True)
    export = ["gpg", "--armor", "--export", "alice@example.com"]
    public = subprocess.run(export, env=gpg_env, check=True, capture_output=True).stdout
    (lab.home / ".gnupg").mkdir(mode=0o700)
    imp = ["gpg", "--batch", "--import"]
    subprocess.run(imp, input=public, env=lab.env(), check=True, capture_output=True)
    lab.mallory_gpg = mallory_gpg  # type: ignore[attr-defined]
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    play(lab, {**ATTACKS, **CONTROLS})
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-signed", _build_lab)


@pytest.mark.parametrize("vid", list(CONTROLS))
def test_the_approver_signing_as_herself_runs(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


def test_the_moved_approval_approved_its_own_plan(lab: Lab) -> None:
    assert len(lab.calls("signed-approval-moved-src")) == 1, lab.codes("signed-approval-moved-src")


#: Every variant held since only the allowed-signers file binds a key to an approver.
BROKEN: dict[str, object] = {}


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_only_the_approvers_own_key_approves(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], "the plan ran"
    # an approval moved onto another plan is also the approval of its source brought back
    # (round 18: an approval's identity names no plan), when git gave it a later date
    codes = CODES | {"E_APPROVAL_REPLAYED"} if vid == "signed-approval-moved" else CODES
    assert lab.refusal(vid) in codes, lab.codes(vid)
