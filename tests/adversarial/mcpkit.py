"""The agent's side of ``plangate mcp`` for the attack labs: a raw JSON-RPC session over
stdio, as an MCP client speaks it, with no SDK in between (rounds 49-61).

A session writes ``initialize``, ``notifications/initialized`` and one ``tools/call`` per
call at once, then closes stdin: the server handles the calls concurrently and exits when
it has answered them all. The answers come back by request id, in the order of the calls.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from advkit import BenchError, Lab

PLANGATE = str(Path(sys.executable).with_name("plangate"))

Call = tuple[str, dict[str, Any]]


def handshake(client: str = "advkit") -> list[dict[str, Any]]:
    """The MCP handshake a raw JSON-RPC session opens with: ``initialize`` (id 0), then the
    ``initialized`` notification."""
    return [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": client, "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]


def _requests(calls: list[Call]) -> str:
    """The session's JSON-RPC lines: the handshake (id 0), then call ``i`` as id ``i``."""
    messages = handshake()
    for i, (name, args) in enumerate(calls, 1):
        messages.append(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": name, "arguments": args},
            }
        )
    return "".join(json.dumps(m) + "\n" for m in messages)


def session(
    lab: Lab, calls: list[Call], *, config: str | Path | None = None, timeout: float = 120
) -> tuple[list[dict[str, Any] | None], str]:
    """One ``plangate mcp --config`` session (the lab's config unless ``config``) making
    ``calls``: each call's whole JSON-RPC reply (None where none came) and the server's
    stderr."""
    done = subprocess.run(
        [PLANGATE, "mcp", "--config", str(config or lab.config)],
        input=_requests(calls),
        capture_output=True,
        text=True,
        cwd=lab.root,
        env=lab.env(),
        timeout=timeout,
        check=False,
    )
    replies: dict[Any, dict[str, Any]] = {}
    for line in done.stdout.split("\n"):  # JSON-RPC lines end at \n only (U+2028 is text)
        if line.strip():
            reply = json.loads(line)
            replies[reply.get("id")] = reply
    return [replies.get(i) for i in range(1, len(calls) + 1)], done.stderr


def answers(
    lab: Lab, calls: list[Call], *, config: str | Path | None = None, timeout: float = 120
) -> list[dict[str, Any]]:
    """:func:`session`'s replies, every call answered (a :class:`BenchError` if not)."""
    replies, stderr = session(lab, calls, config=config, timeout=timeout)
    answered = [reply for reply in replies if reply is not None]
    if len(answered) != len(calls):
        raise BenchError(f"plangate mcp left a call unanswered: {stderr[-1500:]}")
    return answered


def call(
    lab: Lab,
    name: str,
    arguments: dict[str, Any],
    *,
    config: str | Path | None = None,
    timeout: float = 120,
) -> dict[str, Any]:
    """One tool call in a session of its own: its whole JSON-RPC reply."""
    return answers(lab, [(name, arguments)], config=config, timeout=timeout)[0]
