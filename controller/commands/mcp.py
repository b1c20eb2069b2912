"""``plangate mcp [--config F]``: serve the agent's interface over MCP on stdio (SPEC §14).

The config must name the agent's identity (``agent.identity``) for ``submit``; everything
else the server needs is the controller's own config (catalog, plans_dir, repo).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.settings.models import Config


def mcp(config_path: str | None = None) -> int:
    from controller import logs
    from controller.commands._shared import required_config
    from controller.service.mcpserver import serve

    config = required_config(config_path)
    # stdout is the protocol: every log line (plangate's, the SDK's) goes to stderr
    logs.configure(level="warning", stream=sys.stderr)
    _finish_writes(config)
    serve(config)
    return 0


def _finish_writes(config: Config) -> None:
    """Local mode: a server killed between a submission's commit and its working-tree and
    index writes left them undone and ``.git/index.lock`` held; this start finishes them
    (:func:`controller.git.sharedwrite.recover`, round 83)."""
    import contextlib

    from controller.errors import PlangateError

    if config.is_remote:
        return
    with contextlib.suppress(OSError, PlangateError):  # no usable git: each call says E_GIT
        from controller.git import sharedwrite
        from controller.git.gitrepo import GitRepo

        sharedwrite.recover(GitRepo(config.repo_path()))
