"""``plangate status [--json]``: every plan with its status, hash, risk, approver and last
event (``--json`` also the frozen estimate)."""

from __future__ import annotations

import json
import sys
from typing import Any

from controller.display import visible


def status(*, config_path: str | None, as_json: bool) -> int:
    from controller.commands._shared import config_or_repo
    from controller.service.reconcile import Controller

    controller = Controller(config_or_repo(config_path), lock=False)
    try:
        rows = controller.status(reasons=True)
        error = controller.status_error
    finally:
        controller.close()
    if error is not None:
        if not rows:
            raise error  # nothing to show: say why instead of "no plans"
        print(
            "plangate: warning: history not read, showing the last known state: "
            + visible(str(error)),
            file=sys.stderr,
        )
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no plans")
        return 0
    print(_columns("STATUS", "PLAN", "HASH", "RISK", "APPROVER", "LAST EVENT"))
    for row in rows:
        print(_line(row))
    return 0


def _columns(status: str, plan: str, hash_: str, risk: str, approver: str, event: str) -> str:
    return f"{status:18} {plan:40} {hash_:12} {risk:6} {approver:24} {event}".rstrip()


def _line(row: dict[str, Any]) -> str:
    """One plan (and why it waits, failed or was refused, on the next line); every plan- or
    git-supplied value escaped (controller.display)."""
    text = _columns(
        visible(row["status"] or "?"),
        visible(row["plan"]),
        visible((row["hash"] or "-")[7:19] or "-"),
        visible(row.get("risk") or "-"),
        visible(row["approver"] or "-"),
        visible(row["last_event"] or "-"),  # none for a source that does not convert
    )
    why = row.get("waiting") or row.get("reason")
    if why:
        text += f"\n{'':18} {'waiting: ' if row.get('waiting') else ''}{visible(why)}"
    return text
