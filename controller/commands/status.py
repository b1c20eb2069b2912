"""``plangate status [--json]``: every plan with its status, hash, approver and last event."""

from __future__ import annotations

import json
import sys


def status(*, config_path: str | None, as_json: bool) -> int:
    from controller.commands._shared import required_config
    from controller.reconcile import Controller

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
            f"plangate: warning: history not read, showing the last known state: {error}",
            file=sys.stderr,
        )
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        extra = f" waiting: {row['waiting']}" if row.get("waiting") else ""
        print(
            f"{row['status'] or '?':18} {row['plan']:40} {(row['hash'] or '-')[7:19]:12} "
            f"{row['approver'] or '-':24} {row['last_event']}{extra}"
        )
    if not rows:
        print("no plans")
    return 0
