"""Helpers shared by the subcommands: finding the config, expanding plan paths, printing."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from controller.display import visible

if TYPE_CHECKING:
    from controller.errors import Problem
    from controller.settings import Config


def optional_config(config_path: str | None) -> Config | None:
    """The config by precedence (flag > PLANGATE_CONFIG > ./plangate.yml), or None."""
    from controller.settings import find_config, load_config

    found = find_config(config_path)
    if found is None:
        return None
    if not found.is_file():
        from controller.errors import ConfigInvalid

        raise ConfigInvalid(f"config file {found} does not exist")
    return load_config(found)


def required_config(config_path: str | None) -> Config:
    from controller.errors import ConfigInvalid

    config = optional_config(config_path)
    if config is None:
        raise ConfigInvalid(
            "no config found", remedy="pass --config, set PLANGATE_CONFIG or create ./plangate.yml"
        )
    return config


def plan_paths(paths: Iterable[str]) -> list[Path]:
    """Each argument as a plan file: a folder means its PLAN.yml."""
    from controller.plan.plans import plan_file_in

    return [plan_file_in(Path(p)) for p in paths]


def print_problems(source: Path, problems: list[Problem]) -> None:
    """One line per problem, hidden characters escaped: messages quote the plan's values."""
    for problem in problems:
        print(visible(problem.render(str(source))), file=sys.stderr)
