"""Who holds which signing key: the entries of an ``allowed_signers`` file (ssh-keygen(1),
ALLOWED SIGNERS) as principals, key fingerprints (as git's ``%GK`` prints them) and the
options that limit a key: ``valid-after``, ``valid-before``, ``namespaces``.

A good signature proves who made a commit whatever names it carries, so the key that signed
a content commit makes its holder a writer (:func:`controller.approval.approvals._keys_of`).
A key's validity window is judged at the verifier's clock, never at the commit's own date,
which its signer sets (round 16: git checks the window at the committer date).

A ``cert-authority`` line trusts every key its CA certified (round 30). Such a key is named
``cert:<certificate>`` wherever a signing key is kept (:func:`certified_key`; git's ``%GK``
names the certified key alone, which no line lists): :func:`key_holders` is the one place
that says who holds a key, listed or certified, and everything that maps a signature to a
person (writers, withdrawals, approvals, quorum votes, ``plangate check``, the audit) asks it.
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

from controller.approval import sshsig


@dataclass(frozen=True)
class Entry:
    """One line of the file."""

    principals: tuple[str, ...]
    fingerprint: str
    valid_after: float | None = None
    valid_before: float | None = None
    namespaces: tuple[str, ...] | None = None
    #: A ``cert-authority`` line: ``fingerprint`` is the CA's, ``principals`` are patterns a
    #: certificate's principals must match; the CA key itself signs for nobody (ssh-keygen).
    cert_authority: bool = False

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
        if entry.fingerprint != fingerprint or entry.cert_authority:
            continue
        if (entry.valid_after is not None and at < entry.valid_after) or (
            entry.valid_before is not None and at >= entry.valid_before
        ):
            continue
        if entry.namespaces is not None and "git" not in entry.namespaces:
            return None
        return entry.principals[0] if entry.principals else None
    return None


#: How a signing key certified by a CA is named where keys are kept: the certificate itself.
CERT_PREFIX = "cert:"


def certified_key(blob: bytes | None, fingerprint: str) -> str:
    """The name of the key that made a good signature whose key git names ``fingerprint``
    (its ``%GK``) and whose SSHSIG blob holds the public key ``blob``: ``cert:<base64>``
    when ``blob`` is a certificate of that very key, else the fingerprint (a certificate of
    another key than git verified, or one that does not parse, names the key alone)."""
    if blob is None or not sshsig.is_certificate(blob):
        return fingerprint
    cert = sshsig.certificate(blob)
    if cert is None or cert.key != fingerprint:
        return fingerprint
    return CERT_PREFIX + base64.b64encode(blob).decode()


@functools.lru_cache(maxsize=4096)
def _certificate(key: str) -> sshsig.Certificate | None:
    try:
        blob = base64.b64decode(key[len(CERT_PREFIX) :], validate=True)
    except ValueError:
        return None
    return sshsig.certificate(blob)


def key_fingerprint(key: str) -> str:
    """The fingerprint of a kept signing key (a certificate's: the certified key's)."""
    if not key.startswith(CERT_PREFIX):
        return key
    cert = _certificate(key)
    return cert.key if cert is not None else ""


def describe_key(key: str) -> str:
    """A kept signing key in words (a certificate's base64 is long)."""
    if key.startswith(ASSUMED_PREFIX):
        ca, _, principal = key[len(ASSUMED_PREFIX) :].partition(" ")
        return f"a certificate for {principal} by CA {ca}"
    if not key.startswith(CERT_PREFIX):
        return key
    cert = _certificate(key)
    if cert is None:
        return "a certificate that does not verify"
    names = ",".join(cert.principals) or "no principal"
    return f"{cert.key} (certificate for {names} by CA {cert.ca})"


#: A certificate ``plangate check`` assumes a merger will sign with (never read from git):
#: ``assumed-cert:<CA fingerprint> <principal>``, a user certificate for that principal by
#: that CA, valid then, with no critical option (:func:`assumed_certificate`).
ASSUMED_PREFIX = "assumed-cert:"


def assumed_certificate(allowed_signers: Path, who: str, at: float) -> str | None:
    """The certificate a merger ``who`` with no listed key may sign with at ``at``: one by
    the CA of the first ``cert-authority`` line valid then, allowing the ``git`` namespace,
    whose principals allow ``who`` (None: no such line)."""
    for entry in signer_keys(allowed_signers):
        allowed = entry.cert_authority and _pattern_list_matches(who, entry.principals)
        if allowed and entry.usable(at):
            return f"{ASSUMED_PREFIX}{entry.fingerprint} {who}"
    return None


def key_holders(allowed_signers: Path, key: str, at: float | None) -> tuple[tuple[str, bool], ...]:
    """Who holds the signing key ``key`` (a fingerprint, or ``cert:<certificate>``) by the
    allowed-signers file, as (principal, is a pattern) pairs.

    A listed key: the principals (patterns, as ssh-keygen reads them) of every line listing
    it, ``cert-authority`` lines excepted (ssh-keygen takes no signature by the CA key
    itself). A certified key: each principal of the certificate that a ``cert-authority``
    line of its CA allows (the line's principals are patterns the certificate's must match,
    a negated one excluding), when the certificate is a user certificate whose CA signature
    verifies. Several principals: the key is held by each of them.

    ``at``: the verifier's clock, for a signature that must count now (an approval, a
    trailer, a rejection or abort): only lines valid then that allow the ``git`` namespace,
    and certificates valid then (their own window too, never the commit's date: round 16)
    with no critical option (ssh-keygen ignores them when it verifies a signature; plangate
    honours none: ``force-command``, ``source-address`` and unknown ones limit a key in
    ways a signature cannot obey, so such a certificate approves and withdraws nothing).
    None: who wrote content, where a key that could be someone's makes them a writer: every
    line and certificate whatever its window, namespaces or options (a retired key still
    names its holder). A principal of a certificate is a name, not a pattern, except for
    writers (fail closed)."""
    entries = signer_keys(allowed_signers)
    if key.startswith(ASSUMED_PREFIX):
        ca, _, principal = key[len(ASSUMED_PREFIX) :].partition(" ")
        assumed = sshsig.Certificate("", ca, True, (principal,), 0, 2**64 - 1, (), "")
        return _certified_holders(entries, assumed, at)
    if not key.startswith(CERT_PREFIX):
        return tuple(
            (principal, True)
            for entry in entries
            if entry.fingerprint == key
            and not entry.cert_authority
            and (at is None or entry.usable(at))
            for principal in entry.principals
        )
    cert = _certificate(key)
    return _certified_holders(entries, cert, at) if cert is not None else ()


def _certified_holders(
    entries: tuple[Entry, ...], cert: sshsig.Certificate, at: float | None
) -> tuple[tuple[str, bool], ...]:
    if not cert.user:
        return ()
    if at is not None and (cert.critical or not cert.valid_at(at)):
        return ()
    found: dict[str, None] = {}
    for entry in entries:
        if not entry.cert_authority or entry.fingerprint != cert.ca:
            continue
        if at is not None and not entry.usable(at):
            continue
        for principal in cert.principals:
            if _pattern_list_matches(principal, entry.principals):
                found[principal] = None
    return tuple((principal, at is None) for principal in found)


def _pattern_list_matches(name: str, patterns: tuple[str, ...]) -> bool:
    """OpenSSH's ``match_pattern_list``: some pattern matches ``name`` and no negated one
    (``!pattern``) does; ``*`` and ``?`` are the only wildcards; case counts."""
    matched = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        if _ssh_pattern(pattern[1:] if negated else pattern).fullmatch(name):
            if negated:
                return False
            matched = True
    return matched


@functools.lru_cache(maxsize=256)
def _ssh_pattern(pattern: str) -> re.Pattern[str]:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile("".join(parts), re.DOTALL)


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
            "cert-authority" in options,
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
