"""Signing and verification: `commit.gpgSign` honoured on writing, `verify-commit` on reading.

With ``commit.gpgSign`` true in the git config the daemon sees (read once, when it opens the
repository) every commit is signed by ``git commit-tree -S`` with ``user.signingKey``;
``git commit-tree`` itself ignores that setting. A signature is valid only when git says so
and names a signer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from controller.errors import GitError
from controller.git.base import RepoBase
from controller.git.records import Person

_GOOD_SSH = re.compile(r'Good "git" signature for (\S+) with')
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


class Signing(RepoBase):
    """Signing commits through git, and verifying signatures."""

    def signs_commits(self) -> bool:
        """Is ``commit.gpgSign`` true for this repository? (Read once per open repository.)"""
        if self._must_sign is None:
            result = self.run_raw("config", "--type=bool", "--get", "commit.gpgSign")
            if result.returncode not in (0, 1):  # 1: not set; else not a boolean (git commit
                # refuses it too): never read a broken setting as "do not sign"
                raise GitError(
                    f"git config: {result.stderr.decode('utf-8', 'replace').strip()}",
                    path=str(self.path),
                    remedy="set commit.gpgSign to true or false (git config commit.gpgSign "
                    "true), then retry",
                )
            self._must_sign = result.stdout.strip() == b"true"
        return self._must_sign

    def _commit_tree(
        self, tree: str, parent: str, message: str, author: Person, committer: Person, sign: bool
    ) -> str:
        ident = {
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_COMMITTER_NAME": committer.name,
            "GIT_COMMITTER_EMAIL": committer.email,
        }
        args = ["commit-tree", tree, "-p", parent, "-F", "-"]
        if sign:
            args.insert(1, "-S")
        return self.run(*args, input=message.encode(), env=ident).strip()

    def verify_commit(self, sha: str, allowed_signers: Path | None) -> Signature:
        args = ["verify-commit", "--raw", sha]
        if allowed_signers is not None:
            args = ["-c", f"gpg.ssh.allowedSignersFile={allowed_signers}", *args]
        result = self.run_raw(*args)
        text = (result.stderr + result.stdout).decode("utf-8", "replace").strip()
        ssh = _GOOD_SSH.search(text)
        match = ssh or _GOOD_GPG.search(text)
        signer = next((g for g in match.groups() if g), None) if match else None
        first_line = text.splitlines()[0] if text else "no signature"
        kind = "ssh" if ssh else "gpg" if match else ""
        return Signature(result.returncode == 0 and signer is not None, signer, first_line, kind)
