"""A fake mailbox for the plan-then-execute example: list, read and send email, all local.

The messages live in ``inbox.json`` beside this file (or in ``$MAILBOX_DIR``); sending appends
one JSON line to ``outbox.jsonl`` in the same folder. Nothing leaves the machine, so the
example plan runs end to end on a fresh checkout.

These are plangate ``python`` tools: plain functions, called with the action's params as
keyword arguments, returning JSON data. ``email_send`` takes plangate's ``idempotency_key``
and records it with the message, so running the same action twice sends one email.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


class NotFound(Exception):
    """A message id that is not in the mailbox: retrying will not help."""

    permanent = True


def _folder() -> Path:
    return Path(os.environ.get("MAILBOX_DIR") or Path(__file__).resolve().parent)


def _messages() -> list[dict[str, Any]]:
    return json.loads((_folder() / "inbox.json").read_text(encoding="utf-8"))


def _matches(message: dict[str, Any], folder: str, filter: str) -> bool:
    if message.get("folder", "inbox") != folder:
        return False
    for term in filter.split():
        key, _, value = term.partition(":")
        if key == "is" and value == "unread" and message.get("read"):
            return False
        if key == "from" and value == "customers" and not message.get("customer"):
            return False
    return True


def email_list(folder: str = "inbox", filter: str = "") -> dict[str, Any]:
    """Messages in ``folder`` matching ``filter`` (``is:unread``, ``from:customers``)."""
    found = [m for m in _messages() if _matches(m, folder, filter)]
    return {"messages": [{"id": m["id"], "subject": m["subject"]} for m in found]}


def email_read(id: str) -> dict[str, Any]:
    """One message: id, from, subject and body."""
    for message in _messages():
        if message["id"] == id:
            return {k: message[k] for k in ("id", "from", "subject", "body")}
    raise NotFound(f"no message with id {id!r}")


def email_known(address: str) -> dict[str, Any]:
    """Whether ``address`` wrote to the mailbox before (a check tool: reads only)."""
    return {"known": any(m["from"] == address for m in _messages())}


def email_send(to: str, subject: str, template: str, idempotency_key: str = "") -> dict[str, Any]:
    """Append the reply to the outbox, once per idempotency key."""
    outbox = _folder() / "outbox.jsonl"
    if idempotency_key and outbox.exists():
        for line in outbox.read_text(encoding="utf-8").splitlines():
            sent = json.loads(line)
            if sent.get("idempotency_key") == idempotency_key:
                return {"sent": False, "duplicate_of": sent["message_id"]}
    digest = hashlib.sha256(json.dumps([to, subject, template, idempotency_key]).encode())
    message_id = f"out_{digest.hexdigest()[:12]}"
    record = {
        "message_id": message_id,
        "to": to,
        "subject": subject,
        "template": template,
        "idempotency_key": idempotency_key,
    }
    with outbox.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    return {"sent": True, "message_id": message_id}
