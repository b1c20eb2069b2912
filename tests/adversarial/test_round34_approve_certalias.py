"""Round 34, self-approval, quorum and withdrawals under ``require_signed`` when a certified
key's principal is another spelling of an approver: a plus tag or a second address that
``identity_aliases`` makes the same person, or a spelling the identity rules reduce
(fullwidth letters, an invisible character).

docs/approvals.md: identities are compared as the mailbox they name (NFKC, invisible
characters dropped) and ``identity_aliases`` (``plus_tags``, ``people``) adds one person's
other addresses; "one function (``signers.key_holders``) then says who holds a key, listed or
certified, for every use"; a certificate names its holders when its CA's line allows its
principals.

Config: the bench's (approvers Alice and ``*@ops.example.com``), ``require_signed: true``,
``plans/two/**`` needs two approvals, ``identity_aliases: {plus_tags: ["*@example.com",
"*@ops.example.com"], people: [[alice@example.com, a.smith@corp.example]]}`` and
``allowed_signers``: Alice's, Bob's and Carol's listed keys and
``*@example.com,*@ops.example.com,*@corp.example cert-authority <ca>``.

Self-approval (the agent's commit adding the plan, author and committer the agent, is signed
with a certificate the CA issued for the principal below; Alice then approves on main,
signed with her listed key). Defence: ``E_SELF_APPROVAL``, ``rec`` never runs:

- ``cert-plus``: ``alice+ci@example.com`` (a plus tag of Alice);
- ``cert-people``: ``a.smith@corp.example`` (Alice's declared second address);
- ``cert-full``: ``ａlice@example.com`` (fullwidth ``a``; NFKC is ``alice``);
- ``cert-zw``: ``al\\u200bice@example.com`` (a zero-width space inside);
- ``cert-multi``: one certificate for ``carol@ops.example.com,alice+x@example.com``;
- ``ctl``: the agent's unsigned plan; Alice approves: runs once.

Quorum (``two/*``, the agent writes; Alice approves with her listed key, the controller
commits ``partial``; then a second vote, its commit authored by the address below and signed
with that address's certificate). Defence: one person counts once: ``rec`` never runs:

- ``two/q-plus``: ``alice+ci@example.com``;
- ``two/q-people``: ``a.smith@corp.example``;
- ``two/ctl``: Alice, then Bob (listed key): runs once.

Withdrawals (the agent, the plan's author, rejects its pending plan in a commit authored by
the address below, signed with that address's certificate; then Alice approves). Defence:
the author's rejection counts, ``rec`` never runs:

- ``rej-plus``: ``agent+ci@example.com``.

Results: every variant held (each certified spelling was taken as Alice: ``E_SELF_APPROVAL``;
the second vote counted once: ``partial``; the plus-tagged author's rejection counted).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

CERTS = {
    "cert-plus": "alice+ci@example.com",
    "cert-people": "a.smith@corp.example",
    "cert-full": "\uff41lice@example.com",
    "cert-zw": "al\u200bice@example.com",
    "cert-multi": "carol@ops.example.com,alice+x@example.com",
}
QUORUM = {"two/q-plus": "alice+ci@example.com", "two/q-people": "a.smith@corp.example"}
REJECTS = {"rej-plus": "agent+ci@example.com"}
FOUND: dict[str, pytest.MarkDecorator] = {}


def _tag(vid: str) -> str:
    return vid.replace("/", "-")


def _key(keys: Path, name: str, principal: str | None = None) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(keys / name)],
        check=True,
        capture_output=True,
    )
    if principal:
        subprocess.run(
            ["ssh-keygen", "-q", "-s", str(keys / "ca"), "-I", name, "-n", principal,
             str(keys / f"{name}.pub")],
            check=True,
            capture_output=True,
        )  # fmt: skip
    return (keys / f"{name}.pub").read_text().strip()


def _commit(lab: Lab, key: str | None, who: tuple[str, str], message: str) -> None:
    lab.git("add", "-A")
    if key is None:
        lab.git("commit", "-q", "--allow-empty", "-m", message, who=who)
        return
    keys = lab.root / "keys"
    path = keys / (f"{key}-cert.pub" if (keys / f"{key}-cert.pub").exists() else f"{key}.pub")
    lab.git(
        "-c", "gpg.format=ssh", "-c", f"user.signingkey={path}",
        "commit", "-q", "-S", "--allow-empty", "-m", message, who=who,
    )  # fmt: skip


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    ca = _key(keys, "ca")
    alice = _key(keys, "alice")
    bob = _key(keys, "bob")
    carol = _key(keys, "carol")
    for vid, principal in {**CERTS, **QUORUM, **REJECTS}.items():
        _key(keys, _tag(vid), principal)
    signers = root / "allowed_signers"
    signers.write_text(
        f"alice@example.com {alice}\nbob@ops.example.com {bob}\n"
        f"carol@ops.example.com {carol}\n"
        f"*@example.com,*@ops.example.com,*@corp.example cert-authority {ca}\n"
    )
    lab.write_config(
        approval=f"require_signed: true\nallowed_signers: {signers}\n"
        "identity_aliases:\n"
        '  plus_tags: ["*@example.com", "*@ops.example.com"]\n'
        "  people: [[alice@example.com, a.smith@corp.example]]\n"
        'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
    )
    for vid in CERTS:
        lab.write(vid, plan_text(_tag(vid)))
        _commit(lab, _tag(vid), AGENT, f"add {vid}")
    for vid in [*QUORUM, *REJECTS, "ctl", "two/ctl"]:
        lab.write(vid, plan_text(_tag(vid)))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid, principal in REJECTS.items():
        lab.set_status(vid, "rejected")
        _commit(lab, _tag(vid), ("Agent", principal), f"reject {vid}")
    lab.run()
    for vid in [*CERTS, *QUORUM, *REJECTS, "ctl", "two/ctl"]:
        lab.set_status(vid, "approved")
        _commit(lab, "alice", ALICE, f"approve {vid}")
    lab.run()
    time.sleep(1.05)
    for vid, principal in QUORUM.items():
        lab.set_status(vid, "approved")
        _commit(lab, _tag(vid), ("Alice", principal), f"approve {vid} again")
    lab.set_status("two/ctl", "approved")
    _commit(lab, "bob", BOB, "approve two/ctl")
    lab.run()
    lab.shows = lab.git(  # type: ignore[attr-defined]
        "-c", f"gpg.ssh.allowedSignersFile={signers}", "log", "--format=%G? %GS | %ae | %s",
    )  # fmt: skip
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r34-certalias", _build)


def _p(vids: list[str]) -> list[object]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_controls_run_once(lab: Lab) -> None:
    for vid in ("ctl", "two/ctl"):
        assert len(lab.calls(_tag(vid))) == 1, lab.codes(vid) + lab.shows  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(list(CERTS)))
def test_certified_alias_is_a_writer(lab: Lab, vid: str) -> None:
    assert lab.calls(_tag(vid)) == [], lab.codes(vid) + lab.shows  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", _p(list(QUORUM)))
def test_certified_alias_votes_once(lab: Lab, vid: str) -> None:
    assert lab.calls(_tag(vid)) == [], lab.codes(vid) + lab.shows  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(list(REJECTS)))
def test_certified_alias_author_withdraws(lab: Lab, vid: str) -> None:
    assert lab.calls(_tag(vid)) == [], lab.codes(vid) + lab.shows  # type: ignore[attr-defined]
