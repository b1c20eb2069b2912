"""Local mode: PLAN.yml files an agent wrote in the working tree but did not commit.

Finding them must not cost a walk of every plan folder on every pass (see
:class:`UntrackedScanner`); the controller then freezes and commits them (adoption).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container
from pathlib import Path, PurePosixPath

from controller.git.history import is_text
from controller.plan import plans


class UntrackedScanner:
    """Finds PLAN.yml files the branch does not hold without walking every plan folder.

    ``git status`` over 10,000 plan folders costs more than the whole approval budget, so
    only folders that are not plan folders (``plans/`` itself, grouping folders, new
    folders) are watched, and one is listed again only when its mtime changed: creating a
    folder or a file changes its parent's mtime.
    """

    def __init__(self, repo: Path, plans_dir: str) -> None:
        self.repo = repo
        self.root = plans_dir.strip("/") or "."
        self.mtimes: dict[str, int] = {}
        self.found: set[str] = set()
        self._children: dict[str, list[str]] = {}

    def scan(
        self, tracked_dirs: Container[str], held: Callable[[str], str] | None = None
    ) -> set[str]:
        """The untracked plan files; ``held(folder)``: the string a folder's path is kept as
        (the index's plan id for a plan's folder: one string per plan, perf85mem)."""
        pending = [self.root]
        seen: set[str] = set()
        while pending:
            folder = pending.pop()
            seen.add(folder)
            try:
                mtime = (self.repo / folder).stat().st_mtime_ns
            except OSError:
                continue
            if self.mtimes.get(folder) == mtime:
                pending += [d for d in self._children.get(folder, ()) if d not in tracked_dirs]
                continue
            self.mtimes[folder] = mtime
            pending += self._list(folder, tracked_dirs, held)
        self.mtimes = {k: v for k, v in self.mtimes.items() if k in seen}
        self.found = {f for f in self.found if (self.repo / f).is_file()}
        return {f for f in self.found if str(PurePosixPath(f).parent) not in tracked_dirs}

    def _list(
        self, folder: str, tracked_dirs: Container[str], held: Callable[[str], str] | None = None
    ) -> list[str]:
        subdirs: list[str] = []
        try:
            entries = list(os.scandir(self.repo / folder))
        except OSError:
            return subdirs
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder != "." else entry.name
            if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                subdirs.append(rel if held is None else held(rel))
            elif (
                entry.name in (*plans.PLAN_FILES, *plans.SOURCE_FILES)
                and folder not in tracked_dirs
                and is_text(rel)
                and plans.unsafe_name(rel) is None
            ):
                self.found.add(rel)
        self._children[folder] = subdirs
        return [d for d in subdirs if d not in tracked_dirs]
