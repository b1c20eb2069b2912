"""``plangate abort PATH``: ask the controller to stop a running or paused plan.

The controller stops before the next action and records ``aborted`` (SPEC §4).
"""

from __future__ import annotations


def abort(*, config_path: str | None, path: str, note: str | None) -> int:
    from controller.commands.approve import commit_status

    return commit_status(path, "aborted", note=note)
