"""The public key inside an SSH signature, and OpenSSH certificates (pure: bytes in, facts out).

A commit signed with ``gpg.format=ssh`` carries its signature in its ``gpgsig`` header as an
armored SSHSIG blob (OpenSSH's PROTOCOL.sshsig: ``"SSHSIG"``, version, public key, namespace,
reserved, hash algorithm, signature). Its public key is the signer's key, or, when the signer
signed with a certified key (``user.signingKey`` the ``-cert.pub`` file), the certificate
itself (PROTOCOL.certkeys): the certified key, its principals, validity, critical options and
the CA's signature over it. git names the holder of such a key only through a
``cert-authority`` line of the allowed-signers file; :mod:`controller.approval.signers` maps
it the same way from the facts read here. The CA's signature is checked with the
``cryptography`` package; anything that does not parse or verify is no certificate at all
(None: the key then names nobody through a CA).
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import struct
from dataclasses import dataclass

_BEGIN = b"-----BEGIN SSH SIGNATURE-----"
_END = b"-----END SSH SIGNATURE-----"
#: The key types of certificates (``ssh-ed25519-cert-v01@openssh.com`` ...).
CERT_SUFFIX = b"-cert-v01@openssh.com"
#: Anything longer is no signature plangate reads (an RSA-16384 certificate is under 6 KB).
MAX_BLOB = 64 * 1024


@dataclass(frozen=True)
class Certificate:
    """What an OpenSSH certificate says, once its CA's signature verified."""

    #: The fingerprint of the certified key (as git's ``%GK`` and ssh-keygen print it).
    key: str
    #: The fingerprint of the CA key that signed it (a ``cert-authority`` line's key).
    ca: str
    #: A user certificate (a host certificate certifies a host, never a signer).
    user: bool
    principals: tuple[str, ...]
    valid_after: int
    valid_before: int
    #: The names of its critical options (``force-command``, ``source-address``, unknown ones).
    critical: tuple[str, ...]
    key_id: str

    def valid_at(self, at: float) -> bool:
        """Within its own validity window at ``at`` (ssh-keygen: ``valid_before`` excluded)."""
        return self.valid_after <= at < self.valid_before


def fingerprint(blob: bytes) -> str:
    """A public key blob's SHA256 fingerprint, written as ssh-keygen and git write it."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def signature_key(commit: bytes, header: bytes = b"gpgsig") -> bytes | None:
    """The public key blob of the SSH signature in a raw commit object's ``header`` (git's
    ``gpgsig``; ``gpgsig-sha256`` in a SHA-256 repository), read as git and ssh-keygen read
    it: the values of every such header joined (git), then the first armored block, which
    must open the text (ssh-keygen: a second block or text after the end marker is ignored,
    anything before the first is no signature). None: no signature there, or malformed."""
    head = commit.split(b"\n\n", 1)[0]
    text: list[bytes] = []
    inside = False
    for line in head.split(b"\n"):
        if line.startswith(b" ") and inside:
            text.append(line[1:])
            continue
        inside = line.startswith(header + b" ")
        if inside:
            text.append(line[len(header) + 1 :])
    buffer = b"\n".join(text)
    if not buffer.startswith(_BEGIN + b"\n"):
        return None
    end = buffer.find(_END, len(_BEGIN))
    if end < 0 or end > MAX_BLOB * 2:
        return None
    try:
        blob = base64.b64decode(b"".join(buffer[len(_BEGIN) : end].split()), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _sshsig_key(blob)


def _sshsig_key(blob: bytes) -> bytes | None:
    if not blob.startswith(b"SSHSIG") or len(blob) < 10:
        return None
    (version,) = struct.unpack(">I", blob[6:10])
    if version != 1:
        return None
    fields = _strings(blob[10:], 5)
    return fields[0] if fields is not None and fields[0] else None


def _strings(data: bytes, count: int) -> list[bytes] | None:
    """``count`` SSH ``string`` fields from the start of ``data`` (None when cut short)."""
    out = []
    at = 0
    for _ in range(count):
        if at + 4 > len(data):
            return None
        (size,) = struct.unpack(">I", data[at : at + 4])
        at += 4
        if at + size > len(data):
            return None
        out.append(data[at : at + size])
        at += size
    return out


def is_certificate(blob: bytes) -> bool:
    """Whether a public key blob is an OpenSSH certificate (by its key type)."""
    fields = _strings(blob, 1)
    return fields is not None and fields[0].endswith(CERT_SUFFIX)


@functools.lru_cache(maxsize=4096)
def certificate(blob: bytes) -> Certificate | None:
    """The certificate ``blob`` is, when it parses and its CA's signature verifies; None
    otherwise (malformed, a key type the library cannot read, a bad CA signature). Kept by
    its bytes: a history signed by a few certificates parses each once."""
    if len(blob) > MAX_BLOB or not is_certificate(blob):
        return None
    try:
        from cryptography.hazmat.primitives.serialization import (
            Encoding,
            PublicFormat,
            SSHCertificate,
            SSHCertificateType,
            load_ssh_public_identity,
        )

        kind = _strings(blob, 1)[0]  # type: ignore[index]
        cert = load_ssh_public_identity(kind + b" " + base64.b64encode(blob))
        if not isinstance(cert, SSHCertificate):
            return None
        cert.verify_cert_signature()  # the CA signed these very fields
        raw = PublicFormat.OpenSSH

        def key_blob(key: object) -> bytes:
            text = key.public_bytes(Encoding.OpenSSH, raw)  # type: ignore[attr-defined]
            return base64.b64decode(text.split()[1])

        return Certificate(
            key=fingerprint(key_blob(cert.public_key())),
            ca=fingerprint(key_blob(cert.signature_key())),
            user=cert.type == SSHCertificateType.USER,
            principals=tuple(p.decode("utf-8", "replace") for p in cert.valid_principals),
            valid_after=int(cert.valid_after),
            valid_before=int(cert.valid_before),
            critical=tuple(
                sorted(name.decode("utf-8", "replace") for name in cert.critical_options)
            ),
            key_id=cert.key_id.decode("utf-8", "replace"),
        )
    except Exception:  # malformed, a type the library cannot read, forged: no certificate
        return None
