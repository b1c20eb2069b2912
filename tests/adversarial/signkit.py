"""SSH-signed approvals for the labs of rounds 33-40 (keys, certificates, signing passes).

:func:`signed_lab` makes the keys in ``root/keys`` (a CA, Alice, Bob, Carol, the
controller's ``bot`` and Bob's certificate ``bobt`` with a short validity window), lists
them in ``root/allowed_signers`` (Carol's key ``valid-before`` the certificate expires) and
requires signed approvals. People sign with :func:`sign`; the controller signs its own
commits in :func:`signed_run`, as its service user's ``GIT_CONFIG_*`` say (rounds 38-40);
:func:`make_key` makes one key or certificate. A module keeps its variants, its sleeps and
window checks, its ``FOUND`` entries and its assertions.
"""

from __future__ import annotations

import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

from advkit import Lab

Who = tuple[str, str]


def make_key(keys: Path, name: str, principal: str | None = None, validity: str = "") -> str:
    """An ed25519 key ``keys/<name>`` (certified by ``keys/ca`` for ``principal`` with
    ``-V validity`` when given): its public line."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(keys / name)],
        check=True,
        capture_output=True,
    )
    if principal:
        extra = ["-V", validity] if validity else []
        subprocess.run(
            ["ssh-keygen", "-q", "-s", str(keys / "ca"), "-I", name, "-n", principal, *extra,
             str(keys / f"{name}.pub")],
            check=True,
            capture_output=True,
        )  # fmt: skip
    return (keys / f"{name}.pub").read_text().strip()


def signed_lab(root: Path, valid_for: int, carol_next: bool = False) -> tuple[Lab, int]:
    """A lab in ``root`` that requires signed approvals, its keys as the module's docstring
    says (Bob's certificate valid from a minute ago for ``valid_for`` s; with
    ``carol_next``, Carol's next key ``carol2`` listed ``valid-after`` that): the lab and the
    expiry (epoch seconds)."""
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    ring = {n: make_key(keys, n) for n in ["ca", "alice", "bob", "carol", "bot"]}
    if carol_next:
        ring["carol2"] = make_key(keys, "carol2")
    t0 = time.time()  # the certificate's window ends no earlier than the listed keys'
    make_key(keys, "bobt", "bob@ops.example.com", f"-1m:+{valid_for}s")
    expires = int(t0) + valid_for
    until = datetime.fromtimestamp(expires, UTC).strftime("%Y%m%d%H%M%SZ")
    after = f'carol@ops.example.com valid-after="{until}" {ring["carol2"]}\n' if carol_next else ""
    signers = root / "allowed_signers"
    signers.write_text(
        f"plangate@localhost {ring['bot']}\nalice@example.com {ring['alice']}\n"
        f"bob@ops.example.com {ring['bob']}\n"
        f'carol@ops.example.com valid-before="{until}" {ring["carol"]}\n'
        f"{after}*@example.com,*@ops.example.com cert-authority {ring['ca']}\n"
    )
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    return lab, expires


def sign(lab: Lab, vid: str, key: str, who: Who, status: str, when: int | None = None) -> None:
    """``who`` sets ``plans/<vid>`` to ``status`` in a commit signed with ``key`` (``bobt``:
    Bob's certificate), dated ``when`` (epoch seconds) when given."""
    path = lab.root / "keys" / (f"{key}-cert.pub" if key == "bobt" else key)
    lab.set_status(vid, status)
    lab.git("add", "-A")
    if when is not None:
        stamp = f"@{when} +0000"
        lab.extra_env = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}  # type: ignore[attr-defined]
    try:
        lab.git(
            "-c", "gpg.format=ssh", "-c", f"user.signingkey={path}",
            "commit", "-q", "-S", "-m", f"{status} {vid}", who=who,
        )  # fmt: skip
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]


def signed_run(lab: Lab) -> None:
    """One controller pass that signs its commits (the service user's ``GIT_CONFIG_*``)."""
    key = lab.root / "keys" / "bot"
    lab.extra_env = {  # type: ignore[attr-defined]
        "GIT_CONFIG_COUNT": "3",
        "GIT_CONFIG_KEY_0": "gpg.format",
        "GIT_CONFIG_VALUE_0": "ssh",
        "GIT_CONFIG_KEY_1": "user.signingKey",
        "GIT_CONFIG_VALUE_1": str(key),
        "GIT_CONFIG_KEY_2": "commit.gpgSign",
        "GIT_CONFIG_VALUE_2": "true",
    }
    try:
        lab.run()
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
