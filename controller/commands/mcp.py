"""``plangate mcp [--config F]``: serve the agent's interface over MCP on stdio (SPEC §14).

The config must name the agent's identity (``agent.identity``) for ``submit``; everything
else the server needs is the controller's own config (catalog, plans_dir, repo).
"""

from __future__ import annotations

import sys


def mcp(config_path: str | None = None) -> int:
    from controller import logs
    from controller.commands._shared import required_config
    from controller.service.mcpserver import serve

    config = required_config(config_path)
    # stdout is the protocol: every log line (plangate's, the SDK's) goes to stderr
    logs.configure(level="warning", stream=sys.stderr)
    serve(config)
    return 0
