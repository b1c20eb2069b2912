"""Who holds which signing key: the entries of an ``allowed_signers`` file (ssh-keygen(1),
ALLOWED SIGNERS) as principals, key fingerprints (as git's ``%GK`` prints them) and the
options that limit a key: ``valid-after``, ``valid-before``, ``namespaces``.

A good signature proves who made a commit whatever names it carries, so the key that signed
a content commit makes its holder a writer (:func:`controller.approval.approvals._keys_of`).
A key's validity window is judged at the verifier's clock, never at the commit's own date,
which its signer sets (round 16: git checks the window at the committer date).
"""

from __future__ import annotations

import base64
import calendar
import functools
import hashlib
import re
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Entry:
    """One line of the file."""

    principals: tuple[str, ...]
    fingerprint: str
    valid_after: float | None = None
    valid_before: float | None = None
    namespaces: tuple[str, ...] | None = None

    def usable(self, at: float) -> bool:
        """Whether this key may sign a git commit at ``at`` (the verifier's clock)."""
        if self.namespaces is not None and "git" not in self.namespaces:
            return False
        if self.valid_after is not None and at < self.valid_after:
            return False
        return self.valid_before is None or at < self.valid_before


def signer_keys(allowed_signers: Path) -> tuple[Entry, ...]:
    """The file's entries, read again when it changes; an unreadable file or line gives
    nothing (verification fails closed)."""
    try:
        seen = allowed_signers.stat()
    except OSError:
        return ()
    return _signer_keys(str(allowed_signers), seen.st_mtime_ns, seen.st_size)


def git_signer(allowed_signers: Path, fingerprint: str, at: float) -> str | None:
    """The signer ``git verify-commit`` names for a good signature by the key
    ``fingerprint`` checked at ``at``, as ssh-keygen reads the file (what ``plangate check``
    predicts for a merge not made yet): the first line holding the key that is valid then,
    and of it the first principal, written as the file writes it (a pattern stays a
    pattern); None when that line does not allow the ``git`` namespace (the verification
    fails) or no line is valid then (git names no signer). Round 23: check assumed the
    merger's address for keys whose line names another principal first, a pattern or a
    negation, and git named that instead."""
    for entry in signer_keys(allowed_signers):
        if entry.fingerprint != fingerprint:
            continue
        if (entry.valid_after is not None and at < entry.valid_after) or (
            entry.valid_before is not None and at >= entry.valid_before
        ):
            continue
        if entry.namespaces is not None and "git" not in entry.namespaces:
            return None
        return entry.principals[0] if entry.principals else None
    return None


#: A token: quoted runs and plain characters up to blank space.
_TOKEN = re.compile(r'(?:"(?:[^"\\]|\\.)*"|[^\s"])+')
#: One option of the options field: ``name`` or ``name="value"`` (a value may hold commas).
_OPTION = re.compile(r'([A-Za-z-]+)(?:="((?:[^"\\]|\\.)*)")?(?:,|$)')
_KEY_TYPES = ("ssh-", "ecdsa-", "sk-ssh-", "sk-ecdsa-")


@functools.lru_cache(maxsize=8)
def _signer_keys(path: str, _mtime: int, _size: int) -> tuple[Entry, ...]:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    entries = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        entry = _entry(_TOKEN.findall(line))
        if entry is not None:
            entries.append(entry)
    return tuple(entries)


def _entry(tokens: list[str]) -> Entry | None:
    for index in range(1, len(tokens) - 1):
        if not tokens[index].startswith(_KEY_TYPES):
            continue
        try:
            blob = base64.b64decode(tokens[index + 1], validate=True)
        except ValueError:
            return None
        digest = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
        options = _options(",".join(tokens[1:index]))
        if options is None:
            return None  # an option we cannot read: the key limits nothing we can honour
        principals = tuple(p for p in tokens[0].strip('"').split(",") if p)
        namespaces = options.get("namespaces")
        return Entry(
            principals,
            f"SHA256:{digest}",
            _when(options.get("valid-after")),
            _when(options.get("valid-before")),
            tuple(namespaces.split(",")) if namespaces is not None else None,
        )
    return None


def _options(text: str) -> dict[str, str] | None:
    found: dict[str, str] = {}
    at = 0
    while at < len(text):
        match = _OPTION.match(text, at)
        if match is None or match.end() == at:
            return None
        found[match.group(1).lower()] = match.group(2) or ""
        at = match.end()
    if ("valid-after" in found and _when(found["valid-after"]) is None) or (
        "valid-before" in found and _when(found["valid-before"]) is None
    ):
        return None
    return found


def _when(text: str | None) -> float | None:
    """``YYYYMMDD[HHMM[SS]][Z]`` (ssh-keygen: local time unless ``Z``) as a Unix time."""
    if not text:
        return None
    utc = text.endswith(("Z", "z"))
    digits = text[:-1] if utc else text
    if not digits.isdigit() or len(digits) not in (8, 12, 14):
        return None
    digits = digits.ljust(14, "0")
    try:
        parts = time.strptime(digits, "%Y%m%d%H%M%S")
    except ValueError:
        return None
    return float(calendar.timegm(parts) if utc else time.mktime(parts))
