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
from typing import Any

import rfc8785

#: Top-level keys the hash ignores: controller-owned blocks and free-form metadata.
UNHASHED_TOP_LEVEL = ("frozen", "approval", "execution", "validation", "metadata")
#: Keys inside ``plan`` the hash ignores: lifecycle state and the creation time.
UNHASHED_PLAN_KEYS = ("status", "created")
PREFIX = "sha256:"


def hashed_view(document: dict[str, Any]) -> dict[str, Any]:
    """The part of a plan document that the hash covers."""
    view = {k: v for k, v in document.items() if k not in UNHASHED_TOP_LEVEL}
    plan = view.get("plan")
    if isinstance(plan, dict):
        view["plan"] = {k: v for k, v in plan.items() if k not in UNHASHED_PLAN_KEYS}
    return view


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 canonical JSON of ``value``."""
    return rfc8785.dumps(value)


def plan_hash(document: dict[str, Any]) -> str:
    """``sha256:<hex>`` of the hashed view of a plan document."""
    return PREFIX + hashlib.sha256(canonical_bytes(hashed_view(document))).hexdigest()


def idempotency_key(plan_hash_value: str, action_id: int | str) -> str:
    """``step:<first 16 hex of SHA-256(plan hash ":" id)>`` (SPEC §6)."""
    digest = hashlib.sha256(f"{plan_hash_value}:{action_id}".encode()).hexdigest()
    return f"step:{digest[:16]}"
