"""``attrfiles.may_apply``: the look, without git, for any place git reads attributes from
(round 80: the CLI's readers ask git only where it says "maybe"). It must never say "no"
where ``git check-attr`` finds an attribute for the path: each place git reads is tried."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.errors import GitError
from controller.git import attrfiles
from tests.support.gitenv import AGENT, commit_all, git, identity

ATTR = "plans/a/PLAN.yml working-tree-encoding=UTF-16\n"


def _in_index_only(repo: Path) -> None:
    (repo / ".gitattributes").write_text(ATTR)
    git(repo, "add", ".gitattributes")
    (repo / ".gitattributes").unlink()


def _attributes_file(repo: Path) -> None:
    elsewhere = repo.parent / "attrs"
    elsewhere.write_text(ATTR)
    git(repo, "config", "core.attributesFile", str(elsewhere))


def _included(repo: Path) -> None:
    elsewhere = repo.parent / "attrs"
    elsewhere.write_text(ATTR)
    extra = repo.parent / "extra.gitconfig"
    extra.write_text(f"[core]\n\tattributesFile = {elsewhere}\n")
    git(repo, "config", "include.path", str(extra))


def _in_index_only_v4(repo: Path) -> None:
    """Index version 4 keeps each path as what it does not share with the one before it:
    after ``plans/a/.foo`` the name is stored as ``gitattributes``."""
    (repo / "plans" / "a" / ".foo").write_text("x\n")
    (repo / "plans" / "a" / ".gitattributes").write_text("PLAN.yml working-tree-encoding=UTF-16\n")
    git(repo, "add", "plans/a/.foo", "plans/a/.gitattributes")
    git(repo, "update-index", "--index-version", "4")
    (repo / "plans" / "a" / ".gitattributes").unlink()
    assert b".gitattributes" not in (repo / ".git" / "index").read_bytes()


def _in_shared_index_only(repo: Path) -> None:
    """A split index: the entries live in ``sharedindex.<sha>``, the index holds a link."""
    (repo / "plans" / "a" / ".gitattributes").write_text("PLAN.yml working-tree-encoding=UTF-16\n")
    git(repo, "add", "plans/a/.gitattributes")
    git(repo, "commit", "-q", "-m", "attributes", env=identity(*AGENT))
    git(repo, "update-index", "--split-index")
    (repo / "plans" / "a" / ".gitattributes").unlink()
    assert b".gitattributes" not in (repo / ".git" / "index").read_bytes()


PLACES: dict[str, Callable[[Path], None]] = {
    "beside": lambda repo: (repo / "plans" / "a" / ".gitattributes").write_text(
        "PLAN.yml working-tree-encoding=UTF-16\n"
    ),
    "root": lambda repo: (repo / ".gitattributes").write_text(ATTR),
    "info": lambda repo: (repo / ".git" / "info" / "attributes").write_text(ATTR),
    "index-only": _in_index_only,
    "index-only-v4": _in_index_only_v4,
    "shared-index-only": _in_shared_index_only,
    "attributesFile": _attributes_file,
    "include": _included,
}


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "plans" / "a").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / "plans" / "a" / "PLAN.yml").write_text("plan: {}\n")
    commit_all(repo, "a plan")
    return repo


def _git_says(repo: Path) -> bool:
    out = git(repo, "check-attr", "working-tree-encoding", "--", "plans/a/PLAN.yml")
    return not out.rstrip().endswith(": unspecified")


def _may(repo: Path) -> bool:
    checkout = attrfiles.checkout_of(repo / "plans" / "a" / "PLAN.yml")
    assert checkout is not None
    return attrfiles.may_apply(checkout, "plans/a/PLAN.yml")


def test_no_attribute_anywhere_is_a_no(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert not _git_says(repo)
    assert not _may(repo)


@pytest.mark.parametrize("place", list(PLACES))
def test_every_place_git_reads_is_a_maybe(tmp_path: Path, place: str) -> None:
    repo = _repo(tmp_path)
    PLACES[place](repo)
    assert _git_says(repo)  # the lab: git itself finds the attribute there
    assert _may(repo)


def test_config_from_the_environment_is_a_maybe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    elsewhere = tmp_path / "attrs"
    elsewhere.write_text(ATTR)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.attributesFile")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(elsewhere))
    assert _git_says(repo)
    assert _may(repo)


def test_the_global_attributes_file_is_a_maybe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    xdg = tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    (xdg / "git" / "attributes").write_text(ATTR)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    assert _git_says(repo)
    assert _may(repo)


def test_a_linked_worktree_reads_the_common_info_attributes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".git" / "info" / "attributes").write_text(ATTR)
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked))
    checkout = attrfiles.checkout_of(linked / "plans" / "a" / "PLAN.yml")
    assert checkout is not None and checkout.top == linked.resolve()
    assert checkout.common_dir == (repo / ".git").resolve()
    out = git(linked, "check-attr", "working-tree-encoding", "--", "plans/a/PLAN.yml")
    assert out.rstrip().endswith("UTF-16")
    assert attrfiles.may_apply(checkout, "plans/a/PLAN.yml")


def test_outside_any_working_tree_there_is_no_checkout(tmp_path: Path) -> None:
    loose = tmp_path / "loose" / "PLAN.yml"
    loose.parent.mkdir()
    loose.write_text("plan: {}\n")
    if any((parent / ".git").exists() for parent in tmp_path.parents):
        pytest.skip("the temp folder lies in a git working tree")
    assert attrfiles.checkout_of(loose) is None
    assert os.path.exists(loose)


@pytest.mark.parametrize("value", ["0", "false", "No", "off", "", "1", "true", "YES", "on", "2"])
def test_the_system_config_is_read_as_git_reads_nosystem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Round 83: ``GIT_CONFIG_NOSYSTEM=0`` (``false``, ``no``, empty) is git reading the
    system config; the answer follows git's, whatever the spelling."""
    repo = _repo(tmp_path)
    elsewhere = tmp_path / "attrs"
    elsewhere.write_text(ATTR)
    system = tmp_path / "system.cfg"
    system.write_text(f"[core]\n\tattributesFile = {elsewhere}\n")
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(system))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", value)
    assert _may(repo) == _git_says(repo)


SPELLINGS = [
    *("", "0", "1", "true", "FALSE", "No", "yes", "On", "off", "2", "-1", "+0", " 1", "\t0"),
    *("00", "010", "0x0", "0x1F", "1k", "0K", "1g", "2147483647", "2147483648", "-2147483648"),
    *("-2147483649", "2097152k", "1 ", "0 ", "on ", "maybe", "0.0", "0xg", "0kb", "  ", "1e3"),
    "9999999999999999999999",
]


@pytest.mark.parametrize("value", SPELLINGS)
def test_a_boolean_variable_reads_as_git_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Rounds 83-84: ``GIT_CONFIG_NOSYSTEM`` true, false or refused exactly as git decides
    (git reads the system file when false, and dies on a value it cannot read)."""
    system = tmp_path / "system.cfg"
    system.write_text("[probe]\n\tseen = yes\n")
    env = {**os.environ, "GIT_CONFIG_SYSTEM": str(system), "GIT_CONFIG_NOSYSTEM": value}
    git_says = subprocess.run(
        ["git", "config", "--get", "probe.seen"], env=env, capture_output=True, check=False
    )
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", value)
    if git_says.returncode == 128:  # fatal: bad boolean config value
        with pytest.raises(GitError, match="GIT_CONFIG_NOSYSTEM"):
            attrfiles.env_bool("GIT_CONFIG_NOSYSTEM")
    else:
        reads_system = git_says.stdout.strip() == b"yes"
        assert attrfiles.env_bool("GIT_CONFIG_NOSYSTEM") is not reads_system


def _global(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    (xdg / "git" / "attributes").write_text(ATTR)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))


def _other_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home2"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "attributes").write_text(ATTR)
    monkeypatch.setenv("HOME", str(home))


@pytest.mark.parametrize("place", [*PLACES, "global", "home"])
def test_one_worktree_sees_a_place_added_at_its_next_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: str
) -> None:
    """Round 93 (perf93, issue 17): the daemon's ``WorkTree`` remembers the *names* of the
    places (worked out from the same strings and the same environment), never what is
    there: a place added, or an environment pointing elsewhere, after a "no" is a "maybe"
    at the very next question of the same object."""
    from controller.git.gitrepo import GitRepo

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    repo = _repo(tmp_path)
    tree = GitRepo(repo)
    try:
        assert not tree._attributes_may_apply("plans/a/PLAN.yml")
        assert not tree._attributes_may_apply("plans/a/PLAN.yml")  # asked again: still no
        if place == "global":
            _global(tmp_path, monkeypatch)
        elif place == "home":
            _other_home(tmp_path, monkeypatch)
        else:
            PLACES[place](repo)
        assert _git_says(repo)  # the lab: git itself finds the attribute there
        assert tree._attributes_may_apply("plans/a/PLAN.yml")
    finally:
        tree.close()
