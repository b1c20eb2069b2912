"""The plan hash: SHA-256 over the RFC 8785 (JCS) form of the plan's hashed view (SPEC §5).

Recipe (also in docs/plan-format.md, so an auditor can recompute it with other tools):

1. parse PLAN.yml as YAML 1.2 into JSON data;
2. drop the top-level keys ``frozen``, ``approval``, ``execution``, ``validation`` and
   ``metadata``, and ``status`` and ``created`` inside ``plan``;
3. serialize with JCS (RFC 8785) to UTF-8 bytes;
4. ``"sha256:" + lowercase hex of SHA-256 of those bytes``.

Pure functions over data; no I/O.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

#: Top-level keys the hash ignores: controller-owned blocks and free-form metadata.
UNHASHED_TOP_LEVEL = ("frozen", "approval", "execution", "validation", "metadata")
#: Keys inside ``plan`` the hash ignores: lifecycle state and the creation time.
UNHASHED_PLAN_KEYS = ("status", "created")
PREFIX = "sha256:"


def key_order(key: str) -> bytes:
    """A mapping key's place in RFC 8785 order: by UTF-16 code units."""
    return key.encode("utf-16-be", "surrogatepass")


def canonical_order(value: Any) -> Any:
    """``value`` with every mapping's keys in RFC 8785 order, at every depth.

    The hash does not see the order a plan writes keys in, so nothing that runs may see it
    either: the resolver builds params in this order (round 18: two keys swapped after the
    approval reached the tool swapped, in its argv JSON and on stdin)."""
    if isinstance(value, dict):
        return {k: canonical_order(value[k]) for k in sorted(value, key=key_order)}
    if isinstance(value, list):
        return [canonical_order(item) for item in value]
    return value


def hashed_view(document: dict[str, Any]) -> dict[str, Any]:
    """The part of a plan document that the hash covers."""
    view = {k: v for k, v in document.items() if k not in UNHASHED_TOP_LEVEL}
    plan = view.get("plan")
    if isinstance(plan, dict):
        view["plan"] = {k: v for k, v in plan.items() if k not in UNHASHED_PLAN_KEYS}
    return view


#: JCS written by the C JSON encoder (the ``rfc8785`` library writes each value in Python: 16 ms
#: for a 1,000-action plan, against 4). For the values :func:`is_plain_json` admits both produce the
#: same bytes: the same minimal string escapes (lowercase ``\u00xx``), integers in decimal,
#: no spaces, keys sorted by code point, which is UTF-16 order when no key holds a character
#: beyond U+FFFF. Anything else (floats above all) goes to the library, as before.
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
)
_SAFE_INT = 2**53 - 1
#: Deeper values go to the library (whose errors, a cycle's included, stay what they were).
_PLAIN_DEPTH = 200


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 canonical JSON of ``value``."""
    if is_plain_json(value):
        try:
            return _ENCODER.encode(value).encode("utf-8")
        except UnicodeEncodeError:
            pass  # a lone surrogate: the library refuses it with its own error
    import rfc8785  # only for what the C encoder does not write exactly (floats above all)

    return rfc8785.dumps(value)


def exact_double(text: str, value: float) -> bool:
    """Whether the double ``value`` read from the number ``text`` is the number ``text``
    writes: its shortest spelling (what the hash and a tool's JSON hold) has the same decimal
    value. ``0.1`` is exact in this sense (every reader of ``0.1`` gets the double written
    ``0.1``); ``9007199254740993.0``, ``1e-400`` and ``4.99999999999999999999`` are not: a
    reader would hand on another number than the one written (rounds 22 and 24). A value
    that is not finite, or a text that is no decimal number, is left to other checks."""
    if value != value or value in (_INF, -_INF):
        return True
    from decimal import Decimal, InvalidOperation

    try:
        return Decimal(text.replace("_", "")) == Decimal(repr(value))
    except (InvalidOperation, ValueError):
        return True


_INF = float("inf")


def is_plain_json(value: Any) -> bool:
    """Whether ``value`` holds only exact str, safe int, bool, None, list and dict (string
    keys up to U+FFFF): the values the C encoder writes exactly as RFC 8785 does, and plain
    JSON data by any measure (False says only: look closer)."""
    return _plain(value, 0)


def _plain(value: Any, depth: int) -> bool:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -_SAFE_INT <= value <= _SAFE_INT
    if depth > _PLAIN_DEPTH:
        return False
    if kind is list:
        return all(_plain(item, depth + 1) for item in value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not (key.isascii() or max(key) <= "\uffff"):
                return False
            if not _plain(item, depth + 1):
                return False
        return True
    return False


def plan_hash(document: dict[str, Any]) -> str:
    """``sha256:<hex>`` of the hashed view of a plan document."""
    return PREFIX + hashlib.sha256(canonical_bytes(hashed_view(document))).hexdigest()


def idempotency_key(plan_hash_value: str, action_id: int | str) -> str:
    """``step:<first 16 hex of SHA-256(plan hash ":" id)>`` (SPEC §6)."""
    digest = hashlib.sha256(f"{plan_hash_value}:{action_id}".encode()).hexdigest()
    return f"step:{digest[:16]}"


#: The trailer every commit the controller makes carries since round 66: an HMAC-SHA256
#: (64 hex digits) keyed by its state directory (``controller.service.statedir.CommitSeal``),
#: its shape tested here, below every reader of commits and of the recorded policy.
SEAL_TRAILER = "Controller-Seal"


def seal_shaped(trailers: Mapping[str, str]) -> bool:
    """Whether a commit's trailers hold a ``Controller-Seal:`` of the seal's form (64 lowercase
    hex digits), whatever key made it: the one test of a controller commit's shape that git
    alone can make, for run events (``controller.git.lifecycle.unsealed_run_events``) and
    policy records (``controller.approval.recorded.recorded_hash``) alike. A commit
    under the controller's name without one is no controller's (rounds 67, 69, 94); one
    with it is verifiable only with the key."""
    seal = trailers.get(SEAL_TRAILER, "")
    return len(seal) == 64 and all(c in "0123456789abcdef" for c in seal)


def controller_sealed(
    author: str, committer: str, trailers: Mapping[str, str], identity: str
) -> bool:
    """Whether a commit is the controller's by git alone: author AND committer ``identity``
    (git's own rewrites keep the author only) and a ``Controller-Seal:`` of the seal's form
    (:func:`seal_shaped`) in ``trailers``, which must be git's parse of the message's trailer
    block (``%(trailers:only,unfold)``, as ``controller.git.records.CommitRecord.trailers``
    holds it), never a scan of every line: a seal in an earlier paragraph, after a ``---``
    line or on an indented continuation line is no trailer (round 95: ``check`` read such a
    record as the policy in force). The one test every git-only reader asks (the history
    index's controller commits, the audit's timeline and policy records, ``check``); a commit
    failing it is anyone's commit in every respect (rounds 67, 69, 94, 95)."""
    if not identity:
        return False
    named = identity.lower()
    return author.lower() == named and committer.lower() == named and seal_shaped(trailers)
