"""``plangate abort PATH [--force]``: ask the controller to stop a running or paused plan.

The commit is a request: the controller stops before the next action and records
``aborted`` (SPEC §4), so the command says "abort requested". With a config, it first checks
that the controller would count it (an approver or an author of the plan); ``--force``
commits anyway.
"""

from __future__ import annotations


def abort(*, config_path: str | None, path: str, note: str | None, force: bool = False) -> int:
    from controller.commands.approve import commit_status

    return commit_status(path, "aborted", note=note, config_path=config_path, force=force)
