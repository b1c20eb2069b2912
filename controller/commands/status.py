"""``plangate status [--json]``: every plan with its status, hash, approver and last event."""

from __future__ import annotations

import json
import sys
from typing import Any

from controller.display import visible


def status(*, config_path: str | None, as_json: bool) -> int:
    from controller.commands._shared import required_config
    from controller.service.reconcile import Controller

    controller = Controller(required_config(config_path), lock=False)
    try:
        rows = controller.status()
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
    for row in rows:
        print(_line(row))
    if not rows:
        print("no plans")
    return 0


def _line(row: dict[str, Any]) -> str:
    """One plan, every plan- or git-supplied value escaped (controller.display)."""
    extra = f" waiting: {visible(row['waiting'])}" if row.get("waiting") else ""
    return (
        f"{visible(row['status'] or '?'):18} {visible(row['plan']):40} "
        f"{visible((row['hash'] or '-')[7:19]):12} {visible(row['approver'] or '-'):24} "
        f"{visible(row['last_event'])}{extra}"
    )
