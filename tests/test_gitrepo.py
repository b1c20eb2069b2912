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


def test_trees_match_git_mktree_for_any_names(tmp_path: Path) -> None:
    """Our tree objects are byte-identical to git's own, whatever order entries arrive in."""
    import random
    import subprocess

    from controller.gitrepo import parse_tree, serialize_tree

    repo_dir = tmp_path / "r"
    subprocess.run(["git", "init", "-q", repo_dir], check=True)
    blob = (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"],
            cwd=repo_dir,
            input=b"x",
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    empty_tree = (
        subprocess.run(["git", "mktree"], cwd=repo_dir, input=b"", capture_output=True, check=True)
        .stdout.decode()
        .strip()
    )
    names = ["a", "a.b", "a-b", "a0", "b", "ä", "plan s", "A", "a_b"]
    entries = {n: (blob, 0o100644) for n in names}
    entries["a"] = (empty_tree, 0o40000)  # a folder sorts as "a/"
    entries["zz"] = (empty_tree, 0o40000)
    shuffled = dict(random.Random(7).sample(sorted(entries.items()), len(entries)))
    listing = "".join(
        f"{mode:o} {'tree' if mode == 0o40000 else 'blob'} {sha}\t{name}\n"
        for name, (sha, mode) in shuffled.items()
    )
    git_tree = (
        subprocess.run(
            ["git", "mktree"], cwd=repo_dir, input=listing.encode(), capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )
    raw = subprocess.run(
        ["git", "cat-file", "tree", git_tree], cwd=repo_dir, capture_output=True, check=True
    ).stdout
    assert serialize_tree(shuffled) == raw
    parsed = parse_tree(raw)
    assert serialize_tree(parsed, presorted=True) == raw
