"""Shared fixtures: real git repositories in temp dirs and an isolated git config.

Tests never touch the developer's $HOME or global git config: HOME and GIT_CONFIG_GLOBAL
point into a per-session temp folder, and every commit pins its author and committer. The
helpers themselves are in ``tests/support`` (the benchmarks use them too).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.gitenv import commit_all, git

MATRIX_TAILS = Path(__file__).with_name("matrix_tails.txt")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``matrix`` every case but the first of the tests ``matrix_tails.txt`` names: the
    default suite runs ``-m "not matrix"``, ``make test-matrix`` the rest."""
    named = {
        line.strip()
        for line in MATRIX_TAILS.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    first: set[str] = set()
    for item in items:
        base, bracket, _ = item.nodeid.partition("[")
        if not bracket or base not in named:
            continue
        if base in first:
            item.add_marker(pytest.mark.matrix)
        else:
            first.add(base)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Bytecode for the package, as ``make install`` writes it: with PYTHONDONTWRITEBYTECODE
    set, every ``plangate`` process the tests start (hundreds in tests/adversarial) would
    otherwise compile each module edited since, again and again."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the controlling process did it
    import compileall

    compileall.compile_dir(Path(__file__).resolve().parent.parent / "controller", quiet=2)


@pytest.fixture(scope="session", autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Test User\n\temail = test@example.com\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        '[protocol "file"]\n\tallow = always\n'
    )
    saved = dict(os.environ)
    os.environ.update(
        HOME=str(home),
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
    )
    os.environ.pop("STATE_DIRECTORY", None)  # systemd's: the default state_dir (tests: none)
    for key in list(os.environ):
        if key.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_", "PLANGATE_", "XDG_STATE_HOME")):
            del os.environ[key]
    yield home
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository with one initial commit on main."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README").write_text("plans\n")
    commit_all(path, "initial", ("Owner", "owner@example.com"))
    return path
