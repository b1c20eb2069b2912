"""GitRepo's commits: only the given files, CAS on the branch, trees built correctly."""

from __future__ import annotations

from pathlib import Path

from gitkit import commit_all, git

from controller.gitrepo import GitRepo, Person

BOT = Person("plangate", "plangate@localhost")


def test_commit_files_touches_only_the_given_paths(repo: Path) -> None:
    (repo / "a/b").mkdir(parents=True)
    (repo / "a/b/keep.txt").write_text("keep\n")
    (repo / "z.txt").write_text("z\n")
    commit_all(repo, "tree")
    (repo / "z.txt").write_text("human edit\n")
    git(repo, "add", "z.txt")
    gitrepo = GitRepo(repo)
    head = gitrepo.rev("HEAD")
    assert head
    sha = gitrepo.commit_files(
        branch="main",
        parent=head,
        message="plangate: test\n",
        files={"a/b/new.txt": b"new\n", "a/c/d.txt": b"deep\n"},
        author=BOT,
    )
    assert sha == git(repo, "rev-parse", "main").strip()
    assert git(repo, "fsck", "--no-progress") == ""
    assert sorted(git(repo, "show", "--name-only", "--format=", sha).split()) == [
        "a/b/new.txt",
        "a/c/d.txt",
    ]
    assert git(repo, "show", f"{sha}:a/b/keep.txt") == "keep\n"
    assert git(repo, "diff", "--cached", "--name-only", sha).split() == [
        "a/b/new.txt",
        "a/c/d.txt",
        "z.txt",
    ]  # the human's staged edit is still staged


def test_commit_files_refuses_when_the_branch_moved(repo: Path) -> None:
    gitrepo = GitRepo(repo)
    old = gitrepo.rev("HEAD")
    assert old
    commit_all(repo, "someone else")
    assert (
        gitrepo.commit_files(
            branch="main", parent=old, files={"x": b"x"}, message="m\n", author=BOT
        )
        is None
    )
    assert git(repo, "log", "-1", "--format=%s") == "someone else\n"


def test_deleting_the_last_file_of_a_folder_drops_the_folder(repo: Path) -> None:
    (repo / "d").mkdir()
    (repo / "d/only.txt").write_text("x")
    commit_all(repo, "d")
    gitrepo = GitRepo(repo)
    head = gitrepo.rev("HEAD")
    assert head
    sha = gitrepo.commit_files(
        branch="main", parent=head, files={"d/only.txt": None}, message="rm\n", author=BOT
    )
    assert sha and "d" not in git(repo, "ls-tree", "--name-only", sha).split()
    assert git(repo, "fsck", "--no-progress") == ""
