"""Keys a CA certified (round 30): ``cert-authority`` lines of allowed_signers, the
certificate read from a commit's SSH signature, and who holds such a key
(``signers.key_holders``). Everything that does not verify names nobody, without a
traceback; who wrote content fails closed (every principal the CA line allows)."""

from __future__ import annotations

import base64
import dataclasses
import subprocess
import time
from pathlib import Path

import pytest

from controller.approval import sshsig
from controller.approval.approvals import ApprovalRequest, Transition, holds, verify_approval
from controller.approval.signers import (
    CERT_PREFIX,
    certified_key,
    describe_key,
    git_signer,
    key_fingerprint,
    key_holders,
)
from controller.git.gitrepo import GitRepo
from controller.settings import ApprovalSettings
from tests.support.gitenv import ALICE, git, identity

NOW = time.time()
#: ssh-keygen options of a certificate valid in 2020 only.
EXPIRED = ("-V", "20200101:20210101")
#: ssh-keygen options of a certificate limited to one command.
FORCED = ("-O", "no-pty", "-O", "force-command=/bin/true")


class Keys:
    """Keys and certificates made by ssh-keygen in a folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.ca = self.key("ca")
        self.other_ca = self.key("otherca")

    def key(self, name: str) -> str:
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f",
             str(self.folder / name)],
            check=True,
            capture_output=True,
        )  # fmt: skip
        return (self.folder / f"{name}.pub").read_text().strip()

    def cert(self, name: str, principals: str, *options: str, ca: str = "ca") -> bytes:
        """A new key ``name`` and its certificate by ``ca``: the certificate's blob."""
        self.key(name)
        subprocess.run(
            ["ssh-keygen", "-q", "-s", str(self.folder / ca), "-I", name, "-n", principals,
             *options, str(self.folder / f"{name}.pub")],
            check=True,
            capture_output=True,
        )  # fmt: skip
        return base64.b64decode((self.folder / f"{name}-cert.pub").read_text().split()[1])

    def fingerprint(self, name: str) -> str:
        return sshsig.fingerprint(
            base64.b64decode((self.folder / f"{name}.pub").read_text().split()[1])
        )


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    return Keys(tmp_path_factory.mktemp("certkeys"))


def _signers(tmp_path: Path, keys: Keys, *lines: str) -> Path:
    path = tmp_path / "allowed_signers"
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def _ca_line(keys: Keys, options: str = "cert-authority") -> str:
    return f"*@example.com,*@ops.example.com,!*@bad.example.com {options} {keys.ca}"


def _token(keys: Keys, name: str, blob: bytes) -> str:
    token = certified_key(blob, keys.fingerprint(name))
    assert token.startswith(CERT_PREFIX)
    return token


def test_a_user_certificate_names_the_principal_its_ca_line_allows(
    keys: Keys, tmp_path: Path
) -> None:
    blob = keys.cert("alicec", "alice@example.com")
    signers = _signers(tmp_path, keys, _ca_line(keys))
    token = _token(keys, "alicec", blob)
    assert key_fingerprint(token) == keys.fingerprint("alicec")
    assert key_holders(signers, token, NOW) == (("alice@example.com", False),)
    assert key_holders(signers, token, None) == (("alice@example.com", True),)
    assert "certificate for alice@example.com" in describe_key(token)
    # the certified key alone (git's %GK) is listed nowhere: it names nobody
    assert key_holders(signers, keys.fingerprint("alicec"), None) == ()


def test_a_certificate_for_a_principal_the_ca_line_does_not_allow_names_nobody(
    keys: Keys, tmp_path: Path
) -> None:
    signers = _signers(tmp_path, keys, _ca_line(keys))
    for name, principal in (("corpc", "alice@corp.example"), ("badc", "eve@bad.example.com")):
        token = _token(keys, name, keys.cert(name, principal))
        assert key_holders(signers, token, NOW) == ()
        assert key_holders(signers, token, None) == ()


def test_several_principals_each_hold_the_key_that_the_ca_line_allows(
    keys: Keys, tmp_path: Path
) -> None:
    blob = keys.cert("multic", "a.smith@corp.example,alice@example.com,bob@ops.example.com")
    signers = _signers(tmp_path, keys, _ca_line(keys))
    token = _token(keys, "multic", blob)
    assert [p for p, _ in key_holders(signers, token, NOW)] == [
        "alice@example.com",
        "bob@ops.example.com",
    ]
    policy = ApprovalSettings(approvers=["*@example.com"], allowed_signers=signers)
    assert holds("alice@example.com", token, policy, None)
    assert holds("bob@ops.example.com", token, policy, None)
    assert not holds("a.smith@corp.example", token, policy, None)


def test_a_host_certificate_names_nobody(keys: Keys, tmp_path: Path) -> None:
    token = _token(keys, "hostc", keys.cert("hostc", "alice@example.com", "-h"))
    signers = _signers(tmp_path, keys, _ca_line(keys))
    assert key_holders(signers, token, NOW) == ()
    assert key_holders(signers, token, None) == ()


def test_an_expired_certificate_signs_nothing_now_but_still_names_its_writer(
    keys: Keys, tmp_path: Path
) -> None:
    expired = _token(keys, "expc", keys.cert("expc", "alice@example.com", *EXPIRED))
    future = _token(keys, "futc", keys.cert("futc", "alice@example.com", "-V", "20990101:forever"))
    signers = _signers(tmp_path, keys, _ca_line(keys))
    for token in (expired, future):
        assert key_holders(signers, token, NOW) == ()  # judged at the verifier's clock
        assert key_holders(signers, token, None) == (("alice@example.com", True),)


def test_the_ca_lines_own_window_and_namespaces_count(keys: Keys, tmp_path: Path) -> None:
    token = _token(keys, "alicec2", keys.cert("alicec2", "alice@example.com"))
    for options in ('cert-authority,namespaces="file"', 'cert-authority,valid-before="20200101"'):
        signers = _signers(tmp_path, keys, _ca_line(keys, options))
        assert key_holders(signers, token, NOW) == ()
        assert key_holders(signers, token, None) == (("alice@example.com", True),)
    signers = _signers(tmp_path, keys, _ca_line(keys, 'cert-authority,namespaces="file,git"'))
    assert key_holders(signers, token, NOW) == (("alice@example.com", False),)


def test_a_certificate_by_a_ca_not_listed_names_nobody(keys: Keys, tmp_path: Path) -> None:
    token = _token(keys, "strayc", keys.cert("strayc", "alice@example.com", ca="otherca"))
    signers = _signers(tmp_path, keys, _ca_line(keys))
    assert key_holders(signers, token, NOW) == ()
    assert key_holders(signers, token, None) == ()
    # the CA's key listed as a plain key: still no cert-authority line for it
    listed = _signers(tmp_path, keys, f"alice@example.com {keys.other_ca}")
    assert key_holders(listed, token, None) == ()


def test_a_certificate_with_a_critical_option_approves_and_withdraws_nothing(
    keys: Keys, tmp_path: Path
) -> None:
    signers = _signers(tmp_path, keys, _ca_line(keys))
    for name, option in (
        ("forcec", "force-command=/bin/true"),
        ("srcc", "source-address=10.0.0.0/8"),
        ("unknownc", "critical:frobnicate=yes"),
    ):
        token = _token(keys, name, keys.cert(name, "alice@example.com", "-O", option))
        assert key_holders(signers, token, NOW) == ()
        assert key_holders(signers, token, None) == (("alice@example.com", True),)


def test_the_ca_key_itself_signs_for_nobody(keys: Keys, tmp_path: Path) -> None:
    signers = _signers(tmp_path, keys, _ca_line(keys))
    assert key_holders(signers, keys.fingerprint("ca"), None) == ()
    assert git_signer(signers, keys.fingerprint("ca"), NOW) is None


def test_malformed_and_forged_certificates_name_nobody(keys: Keys, tmp_path: Path) -> None:
    blob = keys.cert("formc", "alice@example.com")
    signers = _signers(tmp_path, keys, _ca_line(keys))
    fingerprint = keys.fingerprint("formc")
    forged = blob.replace(b"alice@example.com", b"alice@example.org")  # the CA never signed it
    for bad in (blob[:-10], blob[:40], forged, b"\x00\x00\x00\x05junk", b"", b"\xff" * 70000):
        assert certified_key(bad, fingerprint) == fingerprint
        assert sshsig.certificate(bad) is None
    for token in (CERT_PREFIX + "not base64!", CERT_PREFIX, CERT_PREFIX + "AAAA"):
        assert key_holders(signers, token, NOW) == ()
        assert key_holders(signers, token, None) == ()
        assert key_fingerprint(token) == ""
        assert describe_key(token) == "a certificate that does not verify"
    # a certificate of another key than the one git verified names that key alone
    assert certified_key(blob, keys.fingerprint("ca")) == keys.fingerprint("ca")


@pytest.mark.parametrize(
    "commit",
    [
        b"tree t\n\nmessage\n",
        b"tree t\ngpgsig -----BEGIN SSH SIGNATURE-----\n AAAA\n\nmessage\n",
        b"tree t\ngpgsig -----BEGIN SSH SIGNATURE-----\n !!!!\n -----END SSH SIGNATURE-----\n\nm",
        b"tree t\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lH\n -----END SSH SIGNATURE-----"
        b"\n\nm",
        b"tree t\ngpgsig -----BEGIN PGP SIGNATURE-----\n AAAA\n -----END PGP SIGNATURE-----\n\nm",
    ],
)
def test_a_malformed_signature_header_has_no_key(commit: bytes) -> None:
    assert sshsig.signature_key(commit) is None


def _signed_commit(repo: Path, keyfile: Path, message: str) -> str:
    env = identity(*ALICE)
    git(repo, "-c", "gpg.format=ssh", "-c", f"user.signingKey={keyfile}", "commit", "-q", "-S",
        "--allow-empty", "-m", message, env=env)  # fmt: skip
    return git(repo, "rev-parse", "HEAD").strip()


def test_git_reads_the_certificate_of_a_certified_signature(
    keys: Keys, repo: Path, tmp_path: Path
) -> None:
    """verify_commit and the history scans name a certified key by its certificate; a
    commit signed by the same key without its certificate names the key alone; signature
    headers are read as git reads them."""
    blob = keys.cert("gitc", "alice@example.com")
    signers = _signers(tmp_path, keys, _ca_line(keys))
    certified = _signed_commit(repo, keys.folder / "gitc-cert.pub", "certified")
    plain = _signed_commit(repo, keys.folder / "gitc", "plain")
    gitrepo = GitRepo(repo)
    signature = gitrepo.verify_commit(certified, signers)
    assert signature.valid and signature.signer == "alice@example.com"
    assert signature.key == CERT_PREFIX + base64.b64encode(blob).decode()
    gitrepo.read_signatures = True
    records = {r.subject: r for r in gitrepo.first_parent_log(None, plain, [])}
    assert records["certified"].signing_key == signature.key
    assert records["plain"].signing_key == keys.fingerprint("gitc")
    assert gitrepo.commit(certified).signing_key == signature.key
    # a second signature header (git verifies the first block of the headers joined, and
    # says G) hides nothing; text before the block is no signature for git either
    raw = git(repo, "cat-file", "commit", certified).encode()
    head, _, rest = raw.partition(b"\n\n")
    sig = head[head.index(b"gpgsig ") :]
    for extra in (sig, b"gpgsig junk", b"gpgsig " + sig.split(b"\n", 1)[1].lstrip()):
        assert sshsig.signature_key(head + b"\n" + extra + b"\n\n" + rest) == blob
    before = head.replace(b"gpgsig ", b"gpgsig junk\n ", 1)
    assert sshsig.signature_key(before + b"\n\n" + rest) is None
    forged = git(repo, "hash-object", "-t", "commit", "-w", "--literally", "--stdin",
                 data=head + b"\ngpgsig junk\n\n" + rest).strip()  # fmt: skip
    assert gitrepo.verify_commit(forged, signers).key == signature.key


def _request(signers: Path, token: str, **change: object) -> tuple[ApprovalRequest, object]:
    policy = ApprovalSettings(
        approvers=["alice@example.com", "*@ops.example.com"],
        require_signed=True,
        allowed_signers=signers,
    )
    request = ApprovalRequest(
        plan_id="plans/x",
        commit="c" * 40,
        kind=Transition.APPROVE,
        author_email="alice@example.com",
        committer_email="alice@example.com",
        commit_time=int(NOW),
        problems=(),
        current_hash="sha256:" + "a" * 64,
        frozen_hash="sha256:" + "a" * 64,
        changed_in_commit=False,
        changers=frozenset({"agent@example.com"}),
        frozen_since=int(NOW) - 60,
        signature_valid=True,
        signer="alice@example.com",
        signer_key=token,
        verified_at=int(NOW),
    )
    return dataclasses.replace(request, **change), policy  # type: ignore[arg-type]


def test_a_certified_approval_counts_by_the_same_rules(keys: Keys, tmp_path: Path) -> None:
    """Round 30: git accepts a certified signature and names its principal; the approval
    counts as one signed with a listed key, and is refused when the certificate would not
    sign for her now."""
    signers = _signers(tmp_path, keys, _ca_line(keys))
    good = _token(keys, "apprc", keys.cert("apprc", "alice@example.com"))
    request, policy = _request(signers, good)
    assert verify_approval(request, policy).code is None  # type: ignore[arg-type]
    forced = _token(keys, "apprf", keys.cert("apprf", "alice@example.com", *FORCED))
    expired = _token(keys, "appre", keys.cert("appre", "alice@example.com", *EXPIRED))
    bobs = _token(keys, "apprb", keys.cert("apprb", "bob@ops.example.com"))
    for token in (forced, expired, bobs):
        request, policy = _request(signers, token)
        decision = verify_approval(request, policy)  # type: ignore[arg-type]
        assert decision.code == "E_SIGNATURE_INVALID", token
        assert "certificate" in decision.message


def test_content_signed_with_a_certified_key_makes_its_holder_a_writer(
    keys: Keys, tmp_path: Path
) -> None:
    signers = _signers(tmp_path, keys, _ca_line(keys), f"alice@example.com {keys.key('alisted')}")
    wrote = _token(keys, "wrotec", keys.cert("wrotec", "alice@example.com", *EXPIRED))
    listed = keys.fingerprint("alisted")
    request, policy = _request(
        signers, listed, changers=frozenset({"agent@example.com", f"key:{wrote}"})
    )
    decision = verify_approval(request, policy)  # type: ignore[arg-type]
    assert decision.code == "E_SELF_APPROVAL" and "certificate for alice" in decision.message
    # the same key without its certificate, then her approval signed with the certificate
    plain = _token(keys, "samec", keys.cert("samec", "alice@example.com"))
    request, policy = _request(
        signers, plain, changers=frozenset({f"key:{keys.fingerprint('samec')}"})
    )
    assert verify_approval(request, policy).code == "E_SELF_APPROVAL"  # type: ignore[arg-type]
