"""The ``allowed_signers`` file read once: one text for a whole decision (round 126).

The operator edits the file the config names (``approval.allowed_signers``) whenever a key
is rotated or revoked, without touching the config. Whatever judges signatures must judge
them all by ONE reading of it, and that reading must be the text the controller records in
its policy (``.plangate/policy.json``: ``allowed_signers`` as the file's text) and names in
its start commits. Round 125 (``signers-file-change-unrecorded``): the daemon recorded the
text once per config but ``git verify-commit`` read the file afresh, so it ran an approval
signed with a rotated key under a recorded policy that held the old key (the audit called
the honest run ``start-without-approval``) and refused one by a removed key that the
record still listed.

:func:`pin_signers` reads the file once (a regular file, at most 4 MB, without waiting,
UTF-8) and returns the config with ``approval.allowed_signers`` naming a copy of those bytes
(:func:`signers_copy`, named by their hash: the same text is the same file), which nothing
but that text ever fills. A controller pass, ``plangate check`` and ``plangate audit
--config`` judge with the pinned config; the recorded policy reads the same copy. A file
that cannot be read is ``E_CONFIG_INVALID`` naming it: nothing is decided with no text, or
with an older one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from controller.errors import SIGNERS_FILE, ConfigInvalid, PlangateError
from controller.fsutil import OPERATOR_FILE_LIMIT, read_operator_file, write_atomic
from controller.settings.models import Config

#: The copies' suffix (``<first 16 hex digits of the text's SHA-256>.signers``).
SUFFIX = ".signers"


def pin_signers(config: Config, into: Path) -> Config:
    """``config`` with its allowed-signers file read now and named by its copy below
    ``into`` (``config`` itself when it names none). Raises ``E_CONFIG_INVALID`` when the
    file cannot be read."""
    path = config.approval.allowed_signers
    if path is None:
        return config
    return with_signers(config, signers_copy(read_signers(path), into))


def with_signers(config: Config, copy: Path) -> Config:
    """``config`` judging signatures by the allowed-signers text in ``copy``."""
    approval = config.approval.model_copy(update={"allowed_signers": copy})
    return config.model_copy(update={"approval": approval})


def read_signers(path: Path) -> bytes:
    """The file's bytes: UTF-8 text of at most 4 MB in a regular file (a link to one is
    followed), read without waiting; otherwise ``E_CONFIG_INVALID`` naming it and why."""
    try:
        data = read_operator_file(path)
    except OSError as exc:
        raise _unreadable(path, exc.strerror or str(exc)) from None
    except PlangateError:  # over the limit (read_operator_file: E_PLAN_TOO_LARGE)
        raise _unreadable(path, f"over {OPERATOR_FILE_LIMIT} bytes") from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _unreadable(path, f"not UTF-8 text (byte {exc.start})") from None
    return data


def signers_copy(data: bytes, into: Path) -> Path:
    """The copy of an allowed-signers text below ``into``, named by its hash; written (atomic)
    unless a copy holding exactly those bytes is there already."""
    copy = into / (hashlib.sha256(data).hexdigest()[:16] + SUFFIX)
    try:
        if copy.read_bytes() == data:
            return copy
    except OSError:
        pass
    into.mkdir(parents=True, exist_ok=True)
    write_atomic(copy, data, durable=False)
    return copy


def _unreadable(path: Path, why: str) -> ConfigInvalid:
    return ConfigInvalid(
        f"approval.allowed_signers {path}: {why}; no signature can be checked against it, "
        "so nothing is decided until it can be read",
        remedy=f"point approval.allowed_signers at {SIGNERS_FILE}; to change it, write the "
        "new file beside it and rename it over the old one (docs/operations.md, "
        "'Rotating a signing key')",
    )
