"""Where ``plangate.yml`` is: the lookup precedence, without reading or checking the file.

Apart from :mod:`~controller.settings.loading` so that a command run without a config
(``plangate validate`` in a plain folder) never imports pydantic or builds the config models.
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_NAME = "plangate.yml"


def find_config(flag: str | Path | None, cwd: Path | None = None) -> Path | None:
    """The config file to use, by precedence; None when there is none."""
    if flag:
        return Path(flag)
    env = os.environ.get("PLANGATE_CONFIG")
    if env:
        return Path(env)
    candidate = (cwd or Path.cwd()) / CONFIG_NAME
    return candidate if candidate.is_file() else None
