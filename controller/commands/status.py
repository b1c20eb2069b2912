"""``plangate status [--json]``: every plan with its status, hash, risk, approver and last
event (``--json`` also the frozen estimate), and, while the controller's passes fail, why
(the text says it first; each ``--json`` row carries it as ``pass_failed``)."""

from __future__ import annotations

import json
import sys
from typing import Any

from controller.display import visible
from controller.service.statedir import pass_failed_waiting


def status(*, config_path: str | None, as_json: bool) -> int:
    from controller.commands._shared import config_or_repo
    from controller.service.reconcile import Controller

    controller = Controller(config_or_repo(config_path), lock=False)
    try:
        rows = controller.status(reasons=True)
        error = controller.status_error
        failure = rows[0].get("pass_failed") if rows else controller.pass_failure.read()
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
        if failure is not None and not rows:  # no row to carry it
            print(f"plangate: warning: {_stuck(failure)}", file=sys.stderr)
        print(json.dumps(rows, indent=2))
        return 0
    if failure is not None:
        print(_stuck(failure))
    if not rows:
        print("no plans")
        return 0
    cells = [_cells(row) for row in rows]
    header = ("STATUS", "PLAN", "HASH", "RISK", "APPROVER", "LAST EVENT")
    # each column as wide as its widest value (never cut: a cut path or address could read
    # as another), with the old widths as the least
    rows_and_header = [header, *cells]
    widths = [max(len(c[i]) for c in rows_and_header) for i in range(len(_LEAST))]
    widths = [max(width, least) for width, least in zip(widths, _LEAST, strict=True)]
    print(_columns(header, widths))
    for row, row_cells in zip(rows, cells, strict=True):
        print(_line(row, row_cells, widths))
    return 0


#: The least width of each column but the last.
_LEAST = (18, 40, 12, 6, 24)


def _columns(cells: tuple[str, ...], widths: list[int]) -> str:
    padded = [cell.ljust(width) for cell, width in zip(cells, widths, strict=False)]
    return " ".join([*padded, cells[-1]]).rstrip()


def _cells(row: dict[str, Any]) -> tuple[str, ...]:
    """One plan's values, every plan- or git-supplied one escaped (controller.display)."""
    return (
        visible(row["status"] or "?"),
        visible(row["plan"]),
        visible((row["hash"] or "-")[7:19] or "-"),
        visible(row.get("risk") or "-"),
        visible(", ".join(row.get("approvers") or []) or row["approver"] or "-"),  # a quorum: all
        visible(row["last_event"] or "-"),  # none for a source that does not convert
    )


def _stuck(failure: dict[str, Any]) -> str:
    """Why the controller is not moving: its last pass's failure, since when, the remedy."""
    return (
        f"controller: its passes fail since {visible(str(failure['since']))} "
        f"({failure['passes']} in a row, the last at {visible(str(failure['at']))}); "
        "it goes on once a pass completes\n"
        f"  {visible(str(failure['code']))}: {visible(str(failure['message']))}\n"
        f"  remedy: {visible(str(failure['remedy']))}"
    )


def _line(row: dict[str, Any], cells: tuple[str, ...], widths: list[int]) -> str:
    """One plan (and why it waits, failed or was refused, on the next line)."""
    text = _columns(cells, widths)
    why = row.get("waiting") or row.get("reason")
    failure = row.get("pass_failed")
    if failure and why == pass_failed_waiting(failure):  # said in full above the table
        why = f"{failure['code']}: the controller's passes fail (above)"
    if why:
        text += f"\n{'':{widths[0]}} {'waiting: ' if row.get('waiting') else ''}{visible(why)}"
    for saved in row.get("displaced") or []:  # bytes its record was written over, kept
        text += f"\n{'':{widths[0]}} displaced (kept): {visible(saved)}"
    return text
