"""Would the controller ever pick this file up? (``validate`` warns when not.)

The daemon reads ``<repo>/<plans_dir>/<slug>/PLAN.yml`` (or ``PLAN.yaml``) and nothing else:
a valid ``plan.yml``, a plan outside ``plans_dir`` or outside the repository passes
``validate`` and then waits forever. This module says where the file would have to be.
Pure path arithmetic (no git process): ``validate`` must stay fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from controller.plan.plans import PLAN_FILES

if TYPE_CHECKING:
    from controller.settings import Config


def discovery_warning(file: Path, config: Config | None) -> str | None:
    """Why the controller would not read ``file`` and where it expects it, or None."""
    plans_dir = config.plans_dir if config is not None else "plans"
    path = file.resolve()
    if config is not None and config.remote is None:
        repo: Path | None = config.repo_path().resolve()
    else:
        repo = git_root(path)
    if repo is None:
        return (
            "not inside a git repository: the controller reads only plans committed as "
            f"<repo>/{plans_dir}/<name>/PLAN.yml"
        )
    base = repo / plans_dir
    inside = base == path.parent or base in path.parents
    expected = (path.parent if inside else base / path.parent.name) / "PLAN.yml"
    if path.name not in PLAN_FILES:
        return (
            "the controller reads only files named exactly PLAN.yml (or PLAN.yaml) and would "
            f"never pick this one up; expected {expected}"
        )
    if not inside:
        return (
            f"outside the plans folder {base}: the controller would never pick it up; "
            f"expected {expected}"
        )
    return None


def git_root(path: Path) -> Path | None:
    """The nearest folder above ``path`` holding ``.git`` (no git process: this stays fast)."""
    for folder in path.parents:
        if (folder / ".git").exists():
            return folder
    return None
