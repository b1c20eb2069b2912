"""``plangate run [--config F] [--once] [--take-over]``: the controller.

``--once`` does all the work that needs no new input (freeze, verify approvals, run approved
plans to their end or next gate, commit, push) under the state-directory lock and exits 0 if
the controller itself worked, whatever the plans' outcomes. Without it, the daemon runs.
``--take-over``: a new state directory adopts the controller commits on the branch that
another state directory's key sealed (its own lost state; refused with E_STORAGE otherwise).
It never overrides a rewritten line: a first start on a branch whose sealed controller commits
went off its first-parent line (a foxtrot) is refused E_HISTORY_REWRITTEN, with or without it.
"""

from __future__ import annotations


def run(*, config_path: str | None, once: bool, take_over: bool = False) -> int:
    from controller.commands._shared import required_config

    config = required_config(config_path)
    if not once and config.webhook.listen:
        from controller.service.webhook import webhook_secret

        webhook_secret(config)  # refused before any listener (metrics, ui) starts
    if not once:
        from controller.service.daemon import serve

        return int(serve(config, take_over=take_over))
    from controller import logs
    from controller.progress import Progress
    from controller.service.reconcile import Controller

    logs.configure()  # stderr: JSON lines unless it is a terminal
    from controller.execution.tools import cgroup

    cgroup.announce()  # how tool calls are contained: a warning if not by cgroups
    controller = Controller(config, take_over=take_over)
    progress = Progress()  # a line on a terminal, `progress` events otherwise
    try:
        controller.index.progress = progress  # a cold history scan can take a while
        return controller.run_once(progress)
    finally:
        progress.close()
        controller.close()
