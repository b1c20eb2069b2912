"""``plangate reject PATH -m WHY [--force]``: reject a pending plan by committing its status.

With a config, first checks that the controller would count it (an approver or an author of
the plan); ``--force`` commits anyway.
"""

from __future__ import annotations


def reject(*, config_path: str | None, path: str, note: str | None, force: bool = False) -> int:
    from controller.commands.approve import commit_status

    return commit_status(path, "rejected", note=note, config_path=config_path, force=force)
