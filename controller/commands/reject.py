"""``plangate reject PATH -m WHY``: reject a pending plan by committing its status."""

from __future__ import annotations


def reject(*, config_path: str | None, path: str, note: str | None) -> int:
    from controller.commands.approve import commit_status

    return commit_status(path, "rejected", note=note)
