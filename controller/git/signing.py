"""Signing and verification: `commit.gpgSign` honoured on writing, `verify-commit` on reading.

With ``commit.gpgSign`` true in the trusted git config (the system and global config of the
user plangate runs as and its environment, read once when it opens the repository; never the
repository's own ``.git/config``, see :mod:`~controller.git.guard`, not even in a person's
clone: round 122) every commit is signed by ``git commit-tree -S`` with ``user.signingKey``
(default: the committer, as git's); ``git commit-tree`` itself ignores that setting. A
person's command signs besides when asked (``approve --sign``, ``--trailer``). A signature is
valid only when git says so and names a signer; the programs and files that decide it are
pinned by the guard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from controller.approval.signers import certified_key
from controller.approval.sshsig import signature_key
from controller.errors import GitError
from controller.git.base import RepoBase
from controller.git.records import Person, git_date

_GOOD_SSH = re.compile(r'Good "git" signature for (\S+) with')
_SSH_KEY = re.compile(r"\bkey (SHA256:[A-Za-z0-9+/=]+)")
_CERTIFIED = re.compile(r" with [A-Z0-9-]+-CERT key SHA256:")
_GOOD_GPG = re.compile(r"GOODSIG [0-9A-F]+ .*?<([^>]+)>|Good signature from \".*?<([^>]+)>")


@dataclass(frozen=True)
class Signature:
    """What ``git verify-commit`` said about a commit."""

    valid: bool
    signer: str | None
    message: str
    #: ``ssh``: the signer is the principal the allowed-signers file binds to the key that
    #: signed; ``gpg``: only a user id the key carries (anyone can put any address there).
    kind: str = ""
    #: The SHA256 fingerprint of the key that signed (ssh), "" when not named; for a key a
    #: CA certified, ``cert:<certificate>`` (:meth:`Signing.signing_key_of`).
    key: str = ""


class Signing(RepoBase):
    """Signing commits through git, and verifying signatures."""

    def signs_commits(self) -> bool:
        """Is ``commit.gpgSign`` true in the config plangate trusts with signing? (Read once
        per open repository.) The scopes trusted for programs and trust anchors alone: never
        the repository's own config, even in a person's clone (``trust_repo_config``), where
        an agent sharing the working tree writes ``.git/config`` (round 122:
        ``commit.gpgSign=true`` there made ``approve`` and ``reject`` without ``--sign`` run
        ``git commit-tree -S`` and fail on the approver's missing key)."""
        if self._must_sign is None:
            value = self.guard.value("commit.gpgSign", program=True)
            self._must_sign = _boolean(value, str(self.path))
        return self._must_sign

    def _commit_tree(
        self,
        tree: str,
        parent: str,
        message: str,
        author: Person,
        committer: Person,
        sign: bool,
        now: int | None = None,
        asked: bool = False,
    ) -> str:
        """``git commit-tree`` of ``tree`` on ``parent``; ``sign``: with ``-S`` (``asked``:
        because the caller asked, else because ``commit.gpgSign`` says so), a failure to sign
        E_GIT with a remedy naming the setting that asked for the signature."""
        ident = {
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_COMMITTER_NAME": committer.name,
            "GIT_COMMITTER_EMAIL": committer.email,
        }
        if now is not None:  # the date the caller records the commit at
            ident["GIT_AUTHOR_DATE"] = ident["GIT_COMMITTER_DATE"] = f"@{git_date(now)}"
        args = ["commit-tree", tree, "-p", parent, "-F", "-"]
        pins: list[tuple[str, str]] = []
        if sign:
            args.insert(1, "-S")
            if self.guard.value("user.signingKey") is None and self._format() != "ssh":
                # git's default key, the committer: the guard's empty pin would name none
                pins.append(("user.signingKey", f"{committer.name} <{committer.email}>"))
        try:
            return self.run(*args, input=message.encode(), env=ident, pins=pins).strip()
        except GitError as exc:
            if not sign:
                raise
            exc.remedy = _signing_remedy(asked)  # type: ignore[misc]
            raise

    def _format(self) -> str:
        return (self.guard.value("gpg.format") or "openpgp").lower()

    def verify_commit(self, sha: str, allowed_signers: Path | None) -> Signature:
        args = ["verify-commit", "--raw", sha]
        pins = []
        if allowed_signers is not None:
            _check_signers_file(allowed_signers)
            pins.append(("gpg.ssh.allowedSignersFile", str(allowed_signers)))
        result = self.run_raw(*args, pins=pins)
        text = (result.stderr + result.stdout).decode("utf-8", "replace").strip()
        ssh = _GOOD_SSH.search(text)
        match = ssh or _GOOD_GPG.search(text)
        signer = next((g for g in match.groups() if g), None) if match else None
        first_line = text.splitlines()[0] if text else "no signature"
        kind = "ssh" if ssh else "gpg" if match else ""
        key = _SSH_KEY.search(text) if ssh else None
        named = key.group(1) if key else ""
        if named and _CERTIFIED.search(text):
            named = self.signing_key_of(sha, named)
        return Signature(
            result.returncode == 0 and signer is not None,
            signer,
            first_line,
            kind,
            named,
        )

    def signing_key_of(self, sha: str, fingerprint: str) -> str:
        """The key that made the good SSH signature on commit ``sha``, which git names
        ``fingerprint``: ``cert:<certificate>`` when the signature's public key is a
        certificate of that key (read from the commit's ``gpgsig`` header: git names the
        certified key alone, and only the certificate says whose it is), else the
        fingerprint (:func:`controller.approval.signers.certified_key`)."""
        header = b"gpgsig-sha256" if len(sha) == 64 else b"gpgsig"
        try:
            data = self._object(sha)
        except GitError:
            return fingerprint
        return certified_key(signature_key(data, header), fingerprint)


_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0", "")


def _boolean(value: str | None, where: str) -> bool:
    """A git boolean, as ``git config --type=bool`` reads it; never a broken one as false."""
    if value is None or value.lower() in _FALSE:
        return False
    if value.lower() in _TRUE:
        return True
    if value.lstrip("-").isdigit():
        return int(value) != 0
    raise GitError(
        f"git config: fatal: bad boolean config value '{value}' for 'commit.gpgsign'",
        path=where,
        remedy="set commit.gpgSign to true or false in the controller's git config "
        "(git config --global commit.gpgSign true), then retry",
    )


def _check_signers_file(path: Path) -> None:
    """The allowed-signers file is the operator's to fix, never a signature's fault (round
    114: a FIFO there blocked ``git verify-commit`` and every pass with it; a folder made
    git refuse a good signature, and the approval was spent on it)."""
    from controller.errors import SIGNERS_FILE, ConfigInvalid
    from controller.fsutil import special_file

    what = special_file(path) or ("" if path.exists() else "no such file")
    if what:
        raise ConfigInvalid(
            f"approval.allowed_signers {path}: {what}; no signature can be checked against it",
            remedy=f"point approval.allowed_signers at {SIGNERS_FILE}",
        )


def _signing_remedy(asked: bool) -> str:
    """What to do when ``git commit-tree -S`` fails: the settings that asked for a signature
    and that choose the key (round 122: "see git's message" named neither)."""
    key = (
        "make your signing key work (user.signingKey and gpg.format in your git config; "
        "`git commit -S` must succeed here)"
    )
    if asked:
        return f"--sign (or --trailer) signs the commit: {key}, then retry"
    return (
        "commit.gpgSign is true in the git config plangate trusts (system, global or "
        "GIT_CONFIG_*; `git config --show-origin --get commit.gpgSign` names the file): "
        f"{key}, or set commit.gpgSign false there, then retry"
    )
