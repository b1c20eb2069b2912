"""A pass's few new first-parent commits are read from their objects, not asked of ``git
log`` (issue 17: the approving pass spawned seven git processes, now two). The walk must list
what ``git log --first-parent since..until`` lists, and hand the question to git wherever it
cannot be sure: a ``since`` off the first-parent line, a shallow repository, a long range."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.git import commits
from controller.git.gitrepo import GitRepo
from tests.support.gitenv import commit_all, git
from tests.support.gitkit import ALICE, BOB


def _commit(repo: Path, name: str, text: str, who: tuple[str, str] = ALICE) -> str:
    (repo / name).write_text(text)
    commit_all(repo, f"change {name}", who)
    return git(repo, "rev-parse", "HEAD").strip()


def _logged(repo: Path, since: str, until: str) -> list[tuple[str, str, str]]:
    out = git(repo, "log", "--first-parent", "--format=%H %T %P", f"{since}..{until}")
    chain = []
    for line in reversed(out.splitlines()):
        sha, tree, *parents = line.split()
        chain.append((sha, tree, parents[0] if parents else ""))
    return chain


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    _commit(repo, "a.txt", "a\n")
    return repo


def test_a_linear_range_and_a_merge_read_as_git_log_lists_them(repo: Path) -> None:
    since = git(repo, "rev-parse", "HEAD").strip()
    _commit(repo, "b.txt", "b\n")
    git(repo, "checkout", "-q", "-b", "side")
    _commit(repo, "side.txt", "s\n", BOB)
    git(repo, "checkout", "-q", "main")
    _commit(repo, "c.txt", "c\n")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    until = git(repo, "rev-parse", "HEAD").strip()
    walked = GitRepo(repo)._walked_chain(since, until)
    assert walked is not None and len(walked) == 3  # b, c, the merge: not the side commit
    assert walked == _logged(repo, since, until)
    assert GitRepo(repo)._parent_tree(since) == git(repo, "rev-parse", f"{since}^{{tree}}").strip()


def test_a_since_off_the_first_parent_line_is_asked_of_git(repo: Path) -> None:
    """``since`` reached only through a merge's second parent: git log excludes all of
    its ancestors, which a first-parent walk cannot know; git answers."""
    git(repo, "checkout", "-q", "-b", "side")
    since = _commit(repo, "side.txt", "s\n", BOB)
    git(repo, "checkout", "-q", "main")
    _commit(repo, "b.txt", "b\n")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    until = git(repo, "rev-parse", "HEAD").strip()
    gitrepo = GitRepo(repo)
    assert gitrepo._walked_chain(since, until) is None
    assert gitrepo._first_parent_chain(since, until) == _logged(repo, since, until)


def test_a_long_range_and_a_shallow_repository_are_asked_of_git(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    since = git(repo, "rev-parse", "HEAD").strip()
    for i in range(4):
        _commit(repo, "n.txt", f"{i}\n")
    until = git(repo, "rev-parse", "HEAD").strip()
    monkeypatch.setattr(commits, "WALKED_COMMITS", 3)
    assert GitRepo(repo)._walked_chain(since, until) is None
    assert GitRepo(repo)._first_parent_chain(since, until) == _logged(repo, since, until)
    monkeypatch.setattr(commits, "WALKED_COMMITS", 32)
    assert GitRepo(repo)._walked_chain(since, until) == _logged(repo, since, until)
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{repo}", str(shallow))
    head = git(shallow, "rev-parse", "HEAD").strip()
    base = git(shallow, "rev-parse", "HEAD~1").strip()
    assert GitRepo(shallow)._walked_chain(base, head) is None


def test_a_policy_record_in_the_new_commits_is_never_missed(repo: Path) -> None:
    """``may_mention`` says no only when no new message holds the text, and none is in an
    ``encoding`` git would convert from."""
    since = git(repo, "rev-parse", "HEAD").strip()
    _commit(repo, "b.txt", "b\n")
    gitrepo = GitRepo(repo)
    until = git(repo, "rev-parse", "HEAD").strip()
    assert not gitrepo.may_mention(since, until, "plangate: record policy")
    (repo / "c.txt").write_text("c\n")
    git(repo, "add", "c.txt")
    git(repo, "commit", "-q", "-m", "x\n\nplangate: record policy\n")
    until = git(repo, "rev-parse", "HEAD").strip()
    assert GitRepo(repo).may_mention(since, until, "plangate: record policy")
    (repo / "d.txt").write_text("d\n")
    git(repo, "add", "d.txt")
    git(repo, "-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "-m", "other")
    after = git(repo, "rev-parse", "HEAD").strip()
    assert GitRepo(repo).may_mention(until, after, "plangate: record policy")
    assert not GitRepo(repo).may_mention(since, since, "plangate: record policy")
