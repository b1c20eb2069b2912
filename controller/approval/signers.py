"""Who holds which signing key: the entries of an ``allowed_signers`` file (ssh-keygen(1),
ALLOWED SIGNERS) as principals and key fingerprints, the way git's ``%GK`` names a key.

A good signature proves who made a commit whatever names it carries, so the key that signed
a content commit makes its holder a writer (see controller.approval.approvals._keys_of).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import shlex
from pathlib import Path


def signer_keys(allowed_signers: Path) -> tuple[tuple[tuple[str, ...], str], ...]:
    """Each entry of an allowed-signers file (ssh-keygen(1), ALLOWED SIGNERS): its principals
    and the SHA256 fingerprint of its key, as git's ``%GK`` prints it. Read again when the
    file changes; an unreadable file or line gives nothing (verification fails closed)."""
    try:
        seen = allowed_signers.stat()
    except OSError:
        return ()
    return _signer_keys(str(allowed_signers), seen.st_mtime_ns, seen.st_size)


@functools.lru_cache(maxsize=8)
def _signer_keys(path: str, _mtime: int, _size: int) -> tuple[tuple[tuple[str, ...], str], ...]:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    entries = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            tokens = shlex.split(line, posix=True)
        except ValueError:
            continue
        for index in range(1, len(tokens) - 1):
            if tokens[index].startswith(_KEY_TYPES):
                try:
                    blob = base64.b64decode(tokens[index + 1], validate=True)
                except ValueError:
                    break
                digest = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
                entries.append((tuple(tokens[0].split(",")), f"SHA256:{digest}"))
                break
    return tuple(entries)


_KEY_TYPES = ("ssh-", "ecdsa-", "sk-ssh-", "sk-ecdsa-")
