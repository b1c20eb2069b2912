"""GitRepo's commits: only the given files, CAS on the branch, trees built correctly."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from controller.git.gitrepo import GitRepo, Person
from tests.support.gitkit import commit_all, git

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

    from controller.git.gitrepo import parse_tree, serialize_tree

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


# --- the approval hot path: big trees patched in place, objects and commits in-process ---


def raw_git(
    repo: Path, *args: str, input: bytes | None = None, env: dict[str, str] | None = None
) -> bytes:
    result = subprocess.run(
        ["git", *args],
        cwd=repo,
        input=input,
        env={**os.environ, **(env or {})},
        capture_output=True,
        check=True,
    )
    return result.stdout


def _big_plans_repo(repo: Path, count: int = 700) -> None:
    """A plans/ folder whose tree object is bigger than BIG_TREE (patched, never parsed)."""
    from controller.git.gitrepo import BIG_TREE

    for i in range(count):
        folder = repo / "plans" / f"p{i:04d}"
        folder.mkdir(parents=True)
        (folder / "PLAN.yml").write_text(f"plan {i}\n")
    commit_all(repo, "many plans")
    size = len(raw_git(repo, "cat-file", "tree", "HEAD:plans"))
    assert (size > BIG_TREE) == (count >= 700)


def _git_tree_for(repo: Path, parent: str, files: dict[str, bytes | None]) -> str:
    """The tree git itself makes for ``parent`` plus ``files`` (a private index)."""
    env = {"GIT_INDEX_FILE": str(repo / ".git" / "test-index")}
    git(repo, "read-tree", parent, env=env)
    for path, data in files.items():
        if data is None:
            git(repo, "update-index", "--force-remove", path, env=env)
            continue
        blob = raw_git(repo, "hash-object", "-w", "--stdin", input=data).decode().strip()
        git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree = git(repo, "write-tree", env=env).strip()
    os.unlink(env["GIT_INDEX_FILE"])
    return tree


def _check_same_tree_as_git(repo: Path, files: dict[str, bytes | None]) -> str:
    gitrepo = GitRepo(repo)
    parent = git(repo, "rev-parse", "HEAD").strip()
    sha = gitrepo.commit_files(
        branch="main", parent=parent, files=files, message="plangate: t\n", author=BOT
    )
    assert sha is not None
    assert git(repo, "rev-parse", f"{sha}^{{tree}}").strip() == _git_tree_for(repo, parent, files)
    assert git(repo, "fsck", "--no-progress", "--strict") == ""
    return sha


def test_replacing_a_file_in_a_big_tree_makes_the_tree_git_makes(repo: Path) -> None:
    _big_plans_repo(repo)
    _check_same_tree_as_git(
        repo, {"plans/p0350/PLAN.yml": b"approved\n", "plans/p0350/EXECUTION_LOG.md": b"# log\n"}
    )


def test_adding_and_deleting_in_a_big_tree_makes_the_tree_git_makes(repo: Path) -> None:
    _big_plans_repo(repo)
    _check_same_tree_as_git(repo, {"plans/new/PLAN.yml": b"new\n", "plans/p0001/PLAN.yml": None})


def test_a_look_alike_folder_with_the_same_content_is_not_patched(repo: Path) -> None:
    """``140000 p0350`` holding a copy of ``p0350`` contains ``40000 p0350\\0<id>`` in its
    own tree entry, and sorts before it: the patch must find the real entry."""
    _big_plans_repo(repo)
    twin = repo / "plans" / "140000 p0350"
    twin.mkdir()
    (twin / "PLAN.yml").write_text("plan 350\n")
    commit_all(repo, "look-alike")
    assert git(repo, "rev-parse", "HEAD:plans/140000 p0350") == git(
        repo, "rev-parse", "HEAD:plans/p0350"
    )
    sha = _check_same_tree_as_git(repo, {"plans/p0350/PLAN.yml": b"approved\n"})
    assert git(repo, "show", f"{sha}:plans/140000 p0350/PLAN.yml") == "plan 350\n"
    assert git(repo, "show", f"{sha}:plans/p0350/PLAN.yml") == "approved\n"


def test_reads_go_through_git_for_any_path(repo: Path) -> None:
    _big_plans_repo(repo, count=10)
    (repo / "plans" / "sp ace:colon").mkdir()
    (repo / "plans" / "sp ace:colon" / "PLAN.yml").write_text("odd\n")
    commit_all(repo, "odd name")
    gitrepo = GitRepo(repo)
    head = gitrepo.branch_head("main")
    assert head is not None
    assert gitrepo.read_file(head, "plans/sp ace:colon/PLAN.yml") == b"odd\n"
    assert gitrepo.read_file(head, "plans/p0003/PLAN.yml") == b"plan 3\n"
    assert gitrepo.read_file(head, "plans/nope/PLAN.yml") is None
    assert gitrepo.blob_sha(head, "plans/p0003") is None  # a folder is not a file


def test_commits_written_in_process_are_byte_identical_to_git_commit_tree(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from controller.git import records as module

    monkeypatch.setenv("TZ", "Asia/Kolkata")  # +0530: the zone must be written as git does
    time.tzset()
    try:
        monkeypatch.setattr(module.time, "time", lambda: 1_800_000_000.25)
        head = git(repo, "rev-parse", "HEAD").strip()
        tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
        message = "plangate: start plans/x\n\nPlan: plans/x\nPlan-Hash: sha256:ab\n"
        ours = module.commit_object(tree, [head], message, BOT, BOT)
        theirs = (
            raw_git(
                repo,
                "commit-tree",
                tree,
                "-p",
                head,
                "-F",
                "-",
                input=message.encode(),
                env={
                    "GIT_AUTHOR_NAME": BOT.name,
                    "GIT_AUTHOR_EMAIL": BOT.email,
                    "GIT_COMMITTER_NAME": BOT.name,
                    "GIT_COMMITTER_EMAIL": BOT.email,
                    "GIT_AUTHOR_DATE": "@1800000000 +0530",
                    "GIT_COMMITTER_DATE": "@1800000000 +0530",
                },
            )
            .decode()
            .strip()
        )
        assert raw_git(repo, "cat-file", "commit", theirs) == ours
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_an_identity_git_would_clean_is_committed_through_git(repo: Path) -> None:
    gitrepo = GitRepo(repo)
    head = gitrepo.branch_head("main")
    assert head is not None
    sha = gitrepo.commit_files(
        branch="main",
        parent=head,
        files={"x.txt": b"x\n"},
        message="m\n",
        author=Person(" plangate. ", "bot@example.com"),
    )
    assert sha is not None
    assert git(repo, "log", "-1", "--format=%an|%ae", sha).strip() == "plangate|bot@example.com"


def test_big_objects_are_stored_uncompressed_and_read_back_by_git(repo: Path) -> None:
    import zlib

    from controller.git.gitrepo import STORE_RAW_ABOVE

    gitrepo = GitRepo(repo)
    data = os.urandom(STORE_RAW_ABOVE + 1)
    sha = gitrepo.store_blob(data)
    assert raw_git(repo, "cat-file", "blob", sha) == data
    path = repo / ".git" / "objects" / sha[:2] / sha[2:]
    assert zlib.decompress(path.read_bytes()) == b"blob %d\0" % len(data) + data
    assert len(path.read_bytes()) > len(data)  # level 0: stored, not deflated
    assert path.stat().st_mode & 0o777 == 0o444  # read-only, as git writes objects
    assert gitrepo.store_blob(data) == sha  # an existing object is left alone


def test_branch_head_reads_loose_and_packed_refs(repo: Path) -> None:
    gitrepo = GitRepo(repo)
    head = git(repo, "rev-parse", "main").strip()
    assert gitrepo.branch_head("main") == head
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git/refs/heads/main").exists()
    assert gitrepo.branch_head("main") == head
    newer = commit_all(repo, "after packing")
    assert gitrepo.branch_head("main") == newer
    assert gitrepo.branch_head("nope") is None


def test_is_ancestor_near_far_and_unrelated(repo: Path) -> None:
    gitrepo = GitRepo(repo)
    first = git(repo, "rev-parse", "HEAD").strip()
    for i in range(20):
        (repo / "n.txt").write_text(f"{i}\n")
        commit_all(repo, f"c{i}")
    head = git(repo, "rev-parse", "HEAD").strip()
    near = git(repo, "rev-parse", "HEAD~3").strip()
    assert gitrepo.is_ancestor(near, head)
    assert gitrepo.is_ancestor(first, head)  # beyond the in-process walk: git answers
    assert not gitrepo.is_ancestor(head, near)
    git(repo, "switch", "-q", "-c", "side", near)
    (repo / "side.txt").write_text("side\n")
    side = commit_all(repo, "side")
    assert not gitrepo.is_ancestor(side, head)
    assert not gitrepo.is_ancestor(head, side)


def _tip(repo: Path, name: str) -> str:
    (repo / f"{name}.txt").write_text(f"{name}\n")
    return commit_all(repo, name)


def _pull(repo: Path, branch: str, into: str) -> str:
    """On ``branch``, merge ``into`` (a `git pull` without rebase); main moved to that merge."""
    git(repo, "switch", "-q", branch)
    git(repo, "merge", "-q", "--no-ff", "-m", f"merge {into}", into)
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", branch)
    return git(repo, "rev-parse", "HEAD").strip()


def test_a_line_that_kept_the_read_tip_is_followed(repo: Path) -> None:
    gitrepo = GitRepo(repo)
    git(repo, "switch", "-q", "-c", "side")
    _tip(repo, "feature")
    git(repo, "switch", "-q", "main")
    last = _tip(repo, "read")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    for i in range(20):  # beyond the in-process walk
        _tip(repo, f"c{i}")
    head = git(repo, "rev-parse", "HEAD").strip()
    assert gitrepo.keeps_read_line(last, head)


def test_a_pull_straight_onto_the_read_tip_is_followed(repo: Path) -> None:
    """Round 29's foxtrot with nothing in between: the merge brings only what was read."""
    gitrepo = GitRepo(repo)
    git(repo, "switch", "-q", "-c", "stale")
    _tip(repo, "mine")
    git(repo, "switch", "-q", "main")
    last = _tip(repo, "read")
    assert gitrepo.keeps_read_line(last, _pull(repo, "stale", "main"))


def test_a_flipped_merge_that_hid_unread_commits_is_not_followed(repo: Path) -> None:
    """Round 63: a commit made on main after the read tip went behind a second parent."""
    gitrepo = GitRepo(repo)
    git(repo, "switch", "-q", "-c", "docs")
    _tip(repo, "docs")
    git(repo, "switch", "-q", "-c", "other", "main")
    _tip(repo, "other")
    git(repo, "switch", "-q", "main")
    last = _tip(repo, "read")
    _tip(repo, "unread")
    assert not gitrepo.keeps_read_line(last, _pull(repo, "docs", "main"))
    # two flips in a row: the second one's first parents never reach the read tip
    last = _tip(repo, "read again")
    _pull(repo, "other", "main")
    assert not gitrepo.keeps_read_line(last, _pull(repo, "docs", "main"))


def _plan(repo: Path, status: str) -> str:
    (repo / "plans/p").mkdir(parents=True, exist_ok=True)
    (repo / "plans/p/PLAN.yml").write_text(f"status: {status}\n")
    return commit_all(repo, f"plan {status}")


def test_the_branchs_own_commits_behind_a_second_parent_hold_whatever_they_descend_from(
    repo: Path,
) -> None:
    """Round 64: her docs branch merged into main (G, unread), the agent's approval on main
    after it (U, unread); her next commit on the branch and a `git pull`, fast-forwarded. G
    and U descend from her first commit, now on the line, and are main's own all the same."""
    gitrepo = GitRepo(repo)
    paths = ("plans", ".plangate/policy.json")
    git(repo, "switch", "-q", "-c", "docs")
    _tip(repo, "docs")
    git(repo, "switch", "-q", "main")
    _plan(repo, "draft")  # read, and after her fork: G's second-parent diff shows it
    last = _tip(repo, "read")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge docs", "docs")
    git(repo, "switch", "-q", "docs")
    _tip(repo, "docs again")
    head = _pull(repo, "docs", "main")
    # G only brought her docs to main (judged against its first parent): no decision hidden
    assert gitrepo.keeps_read_line(last, head, paths)
    assert not gitrepo.keeps_read_line(last, head)  # main's own merge went off the line
    git(repo, "switch", "-q", "docs")
    _tip(repo, "docs 3")  # forked before the tip read (forked AT it: the documented limit)
    git(repo, "switch", "-q", "main")
    last = _tip(repo, "read again")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge docs", "docs")
    _plan(repo, "approved")
    git(repo, "switch", "-q", "docs")
    _tip(repo, "docs 4")
    assert not gitrepo.keeps_read_line(last, _pull(repo, "docs", "main"), paths)


@pytest.mark.parametrize("shape", ["tip-read-onto-her-commit", "her-updated-branch"])
def test_unread_commits_that_took_the_read_tip_off_the_new_line_hold(
    repo: Path, shape: str
) -> None:
    """The next variants: the agent merges the tip read onto her docs commit (G = (D, S),
    main fast-forwarded: a pull of his own) or main merges her branch after she pulled (G =
    (S, P)); then his approval on main (unread), her next commit and pull, fast-forwarded.
    G took the tip read otherwise than through a commit of the new line that had it, or it
    continues the tip read's own line: unread either way."""
    gitrepo = GitRepo(repo)
    git(repo, "switch", "-q", "-c", "docs")
    _tip(repo, "docs")
    git(repo, "switch", "-q", "main")
    last = _tip(repo, "read")
    if shape == "tip-read-onto-her-commit":
        git(repo, "switch", "-q", "-c", "agent", "docs")
        git(repo, "merge", "-q", "--no-ff", "-m", "merge main", "main")
        git(repo, "switch", "-q", "main")
        git(repo, "merge", "-q", "--ff-only", "agent")
    else:
        git(repo, "switch", "-q", "docs")
        git(repo, "merge", "-q", "--no-ff", "-m", "merge main", "main")
        git(repo, "switch", "-q", "main")
        git(repo, "merge", "-q", "--no-ff", "-m", "merge docs", "docs")
    _plan(repo, "approved")
    git(repo, "switch", "-q", "docs")
    _tip(repo, "docs again")
    head = _pull(repo, "docs", "main")
    assert not gitrepo.keeps_read_line(last, head, ("plans", ".plangate/policy.json"))


def test_a_branch_that_forked_from_the_new_line_is_its_side(repo: Path) -> None:
    """A commit off the line that descends from the line, not from the branch's own line
    after the read, is the side of a merge on the line (a colleague's branch off hers)."""
    gitrepo = GitRepo(repo)
    git(repo, "switch", "-q", "-c", "docs")
    _tip(repo, "docs")
    git(repo, "switch", "-q", "main")
    last = _tip(repo, "read")
    git(repo, "switch", "-q", "docs")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge main", "main")  # onto the tip read
    git(repo, "switch", "-q", "-c", "bob")
    _plan(repo, "draft")
    git(repo, "switch", "-q", "docs")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge bob", "bob")
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "docs")
    assert gitrepo.keeps_read_line(last, git(repo, "rev-parse", "HEAD").strip())


@pytest.mark.parametrize("where", ["notes/f.txt", "plans/p/PLAN.yml", ".plangate/policy.json"])
def test_only_unread_commits_touching_what_the_controller_reads_hold_the_line(
    repo: Path, where: str
) -> None:
    """A `git pull` that put an unread documentation commit behind a second parent hides no
    decision and is followed; an unread commit under the plans folder or the policy record
    holds the line as before."""
    gitrepo = GitRepo(repo)
    git(repo, "switch", "-q", "-c", "docs")
    _tip(repo, "docs")
    git(repo, "switch", "-q", "main")
    last = _tip(repo, "read")
    (repo / where).parent.mkdir(parents=True, exist_ok=True)
    (repo / where).write_text("unread\n")
    commit_all(repo, "unread")
    head = _pull(repo, "docs", "main")
    followed = gitrepo.keeps_read_line(last, head, ("plans", ".plangate/policy.json"))
    assert followed == (where == "notes/f.txt")
    assert not gitrepo.keeps_read_line(last, head)  # without paths, any unread commit holds


def test_names_cat_file_cannot_carry_are_walked_not_misread(repo: Path) -> None:
    """git's line protocol strips a final carriage return (``p0350\\r`` is read as ``p0350``)
    and GitPython sends UTF-8 only: such names are found by walking the tree, so a commit
    neither takes a look-alike's files nor drops the folder's own."""
    _big_plans_repo(repo)
    for name in ("p0350\r", "only\r"):
        (repo / "plans" / name).mkdir()
        (repo / "plans" / name / "PLAN.yml").write_text(f"{name!r}\n")
        (repo / "plans" / name / "NOTES.md").write_text("keep me\n")
    raw_name = os.fsencode(repo / "plans") + b"/caf\xe9"
    os.mkdir(raw_name)
    for leaf, text in ((b"/PLAN.yml", b"latin-1 folder\n"), (b"/NOTES.md", b"keep me too\n")):
        with open(raw_name + leaf, "wb") as out:
            out.write(text)
    commit_all(repo, "hostile names")
    latin = os.fsdecode(b"plans/caf\xe9")
    gitrepo = GitRepo(repo)
    head = gitrepo.branch_head("main")
    assert head is not None
    assert gitrepo.read_file(head, "plans/only\r/PLAN.yml") == b"'only\\r'\n"
    assert gitrepo.read_file(head, f"{latin}/PLAN.yml") == b"latin-1 folder\n"
    assert gitrepo.blob_sha(head, "plans/p0350\r") is None  # a folder, not a file
    for folder in ("plans/p0350\r", "plans/only\r", latin):
        sha = _check_same_tree_as_git(repo, {f"{folder}/PLAN.yml": b"approved\n"})
        assert git(repo, "ls-tree", "--name-only", f"{sha}:{folder}").split() == [
            "NOTES.md",
            "PLAN.yml",
        ]


def test_a_message_git_refuses_is_not_written_in_process(repo: Path) -> None:
    """git refuses a NUL byte in a commit message; so does commit_files (E_GIT)."""
    from controller.errors import GitError

    gitrepo = GitRepo(repo)
    head = gitrepo.branch_head("main")
    assert head is not None
    with pytest.raises(GitError, match="NUL byte"):
        gitrepo.commit_files(
            branch="main", parent=head, files={"x.txt": b"x\n"}, message="a\0b\n", author=BOT
        )
    assert gitrepo.branch_head("main") == head


def test_index_entries_for_a_path_with_a_newline(repo: Path) -> None:
    gitrepo = GitRepo(repo)
    gitrepo.set_index_entries({"odd/line\nbreak.txt": b"x\n", "plain.txt": b"y\n"})
    listed = raw_git(repo, "ls-files", "-z").split(b"\0")
    assert b"odd/line\nbreak.txt" in listed and b"plain.txt" in listed
    gitrepo.set_index_entries({"odd/line\nbreak.txt": None})
    assert b"odd/line\nbreak.txt" not in raw_git(repo, "ls-files", "-z").split(b"\0")


def test_first_parent_log_streams_in_either_order_and_reports_git_errors(repo: Path) -> None:
    from controller.errors import GitError

    for i in range(3):
        (repo / "plans").mkdir(exist_ok=True)
        (repo / "plans" / f"f{i}").write_text(f"{i}\n")
        commit_all(repo, f"c{i}")
    gitrepo = GitRepo(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    oldest = [r.subject for r in gitrepo.first_parent_log(None, head, ["plans"])]
    newest = [r.subject for r in gitrepo.first_parent_log(None, head, ["plans"], newest_first=True)]
    assert oldest == ["c0", "c1", "c2"] and newest == ["c2", "c1", "c0"]
    stream = gitrepo.first_parent_log(None, head, ["plans"], newest_first=True)
    assert next(stream).subject == "c2"
    stream.close()  # stopping early ends git quietly
    with pytest.raises(GitError, match="git log"):
        list(gitrepo.first_parent_log("1" * 40, head, ["plans"]))


def test_a_sha256_repository_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """plangate writes SHA-1 object ids; in a SHA-256 repository they would be garbage."""
    from tests.support.gitenv import run_cli

    repo = tmp_path / "s256"
    raw_git(tmp_path, "init", "-q", "--object-format=sha256", "-b", "main", str(repo))
    (repo / "README").write_text("x\n")
    raw_git(repo, "add", "README")
    raw_git(repo, "commit", "-q", "-m", "init")
    config = tmp_path / "plangate.yml"
    config.write_text(f"repo: {repo}\napproval: {{approvers: []}}\ntools: {{}}\n")
    result = run_cli("run", "--once", "--config", str(config))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "E_GIT" in result.stderr and "sha256" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("where", ["repository", "global"])
def test_a_hasconfig_include_is_read_without_a_traceback(
    tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 83: ``includeIf "hasconfig:remote.*.url:..."`` (a common way to pick a work
    identity in ~/.gitconfig) sent GitPython's config reader into a recursion whose
    parsers' ``__del__`` printed a traceback on every command; the SHA-256 check still
    reads the repository's own config, as git does."""
    from tests.support.gitenv import run_cli

    repo = tmp_path / "hc"
    raw_git(tmp_path, "init", "-q", "-b", "main", str(repo))
    included = tmp_path / "work.cfg"
    included.write_text("[user]\n\temail = agent@example.com\n")
    key = "includeIf.hasconfig:remote.*.url:https://forge.example/**.path"
    if where == "repository":
        raw_git(repo, "config", key, str(included))
    else:  # a global config of this test's own: the session's is every test's
        own = tmp_path / "global.cfg"
        own.write_bytes(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_bytes())
        monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(own))
        raw_git(repo, "config", "--global", key, str(included))
    raw_git(repo, "remote", "add", "origin", "https://forge.example/a.git")
    (repo / "plans").mkdir()
    (repo / "README").write_text("x\n")
    raw_git(repo, "add", "README")
    raw_git(repo, "commit", "-q", "-m", "init")
    config = tmp_path / "plangate.yml"
    config.write_text(f"repo: {repo}\napproval: {{approvers: []}}\ntools: {{}}\n")
    for args in (["run", "--once"], ["status"]):
        result = run_cli(*args, "--config", str(config))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr


def test_separator_characters_in_names_subjects_and_paths_are_read_verbatim(repo: Path) -> None:
    """git keeps the control characters the log format separates with (0x1d-0x1f) in
    names, subjects, trailers and file names: anyone who pushes must not be able to cut
    a commit in two (the scan then stopped for every plan) or shift its fields."""
    odd = "plans/a\x1eb\x1f\x1dc/PLAN.yml"
    (repo / odd).parent.mkdir(parents=True)
    (repo / odd).write_text("x\n")
    (repo / "plans/p").mkdir()
    (repo / "plans/p/PLAN.yml").write_text("y\n")
    git(repo, "add", "-A")
    message = "one\x1etwo\x1fthree\x1dfour\n\nApproved-By: x\x1ey@example.com\n"
    env = {"GIT_AUTHOR_NAME": "Ev\x1fil", "GIT_AUTHOR_EMAIL": "ev\x1eil@example.com"}
    git(repo, "commit", "-q", "-m", message, env=env)
    gitrepo = GitRepo(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    parent = git(repo, "rev-parse", "HEAD~1").strip()
    read = [
        *gitrepo.first_parent_log(parent, head, ["plans"]),
        *gitrepo.first_parent_log(parent, head, ["plans"], newest_first=True),
        *gitrepo.range_log(parent, head, ["plans"]),
        gitrepo.commit(head),
    ]
    for record in read:
        assert record.sha == head and record.parents == (parent,)
        assert record.subject == "one\x1etwo\x1fthree\x1dfour"
        assert record.author == Person("Ev\x1fil", "ev\x1eil@example.com")
        assert record.trailers == {"Approved-By": "x\x1ey@example.com"}
    for record in read[:3]:
        assert [c.path for c in record.changes] == [odd, "plans/p/PLAN.yml"]


def test_log_show_signature_in_the_git_config_does_not_break_history_reading(
    repo: Path, tmp_path: Path
) -> None:
    """Teams that sign commits often set log.showSignature; git then writes each verdict
    into the log's output, before the commit's own record."""
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    signers = tmp_path / "signers"
    signers.write_text(f"agent@example.com {(tmp_path / 'key.pub').read_text()}")
    for name, value in (
        ("gpg.format", "ssh"),
        ("user.signingKey", str(key)),
        ("gpg.ssh.allowedSignersFile", str(signers)),
        ("log.showSignature", "true"),
    ):
        git(repo, "config", name, value)
    parent = git(repo, "rev-parse", "HEAD").strip()
    (repo / "plans").mkdir()
    for i in range(2):
        (repo / "plans" / f"f{i}").write_text(f"{i}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-S", "-m", f"c{i}")
    head = git(repo, "rev-parse", "HEAD").strip()
    gitrepo = GitRepo(repo)
    for newest_first in (False, True):
        records = list(gitrepo.first_parent_log(parent, head, ["plans"], newest_first=newest_first))
        assert sorted(r.subject for r in records) == ["c0", "c1"]
        assert sorted(c.path for r in records for c in r.changes) == ["plans/f0", "plans/f1"]
    assert [r.subject for r in gitrepo.range_log(parent, head, ["plans"])] == ["c1", "c0"]
    assert gitrepo.commit(head).subject == "c1"


def test_a_tag_named_like_the_branch_does_not_hide_the_branch(repo: Path) -> None:
    """`git tag main` makes `symbolic-ref --short HEAD` say "heads/main": the controller
    would think the tree switched branches and stop every pass (round 3)."""
    from controller.git.gitrepo import GitRepo

    git(repo, "tag", "main")
    assert GitRepo(repo).current_branch() == "main"


def test_a_shallow_clone_is_refused_with_its_remedy(repo: Path, tmp_path: Path) -> None:
    from controller.errors import GitError
    from controller.git.gitrepo import GitRepo

    for i in range(3):
        (repo / f"f{i}").write_text(str(i))
        git(repo, "add", f"f{i}")
        git(repo, "commit", "-q", "-m", f"c{i}")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{repo}", str(shallow))
    with pytest.raises(GitError) as refused:
        GitRepo(shallow).check_health()
    assert "shallow" in refused.value.message and "--unshallow" in (refused.value.remedy or "")
    GitRepo(repo).check_health()  # a whole clone is fine


def test_mode_of_answers_as_git_ls_tree_for_every_kind_of_entry(repo: Path) -> None:
    """``mode_of`` asks git for the folder and reads only that folder's tree (issue 17): its
    answer is ``git ls-tree``'s for plain, executable, linked and submodule entries, folders,
    absent paths, top-level files and names git cannot be asked (a newline)."""
    plans = repo / "plans"
    for i in range(600):  # a plans folder big enough to be a "big tree"
        (plans / f"p{i:03d}").mkdir(parents=True)
        (plans / f"p{i:03d}/PLAN.yml").write_text(f"plan: {i}\n")
    (plans / "p001/PLAN.yml").chmod(0o755)
    (plans / "p002/PLAN.yml").unlink()
    (plans / "p002/PLAN.yml").symlink_to("../p003/PLAN.yml")
    (plans / "nl\nx").mkdir()
    (plans / "nl\nx/PLAN.yml").write_text("plan: nl\n")
    head = commit_all(repo, "plans")
    sub = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sub},plans/p004/mod")
    head = commit_all(repo, "a gitlink")
    gitrepo = GitRepo(repo)
    paths = [
        "plans/p000/PLAN.yml", "plans/p001/PLAN.yml", "plans/p002/PLAN.yml", "plans/p004/mod",
        "plans/p005", "plans/p005/NOPE.yml", "plans/none/PLAN.yml", "README", "plans",
        "plans/nl\nx/PLAN.yml", "plans/p000/PLAN.yml/deeper",
    ]  # fmt: skip
    for path in paths:
        listed = git(repo, "ls-tree", "-z", head, "--", path).split("\0")[0]
        expected = listed.split()[0] if listed and listed.split()[1] != "tree" else None
        assert gitrepo.mode_of(head, path) == expected, path


def _drop_object(repo: Path, sha: str) -> None:
    """Make ``sha`` unreadable: its loose file removed (a store it never reached)."""
    os.unlink(repo / ".git" / "objects" / sha[:2] / sha[2:])


def _lab_with_plan(repo: Path) -> tuple[str, dict[str, str]]:
    (repo / "plans/pa").mkdir(parents=True)
    (repo / "plans/pa/PLAN.yml").write_text("a: 1\n")
    commit_all(repo, "plan")
    head = git(repo, "rev-parse", "HEAD").strip()
    ids = {
        "blob": git(repo, "rev-parse", "HEAD:plans/pa/PLAN.yml").strip(),
        "folder": git(repo, "rev-parse", "HEAD:plans/pa").strip(),
        "plans": git(repo, "rev-parse", "HEAD:plans").strip(),
        "commit": head,
    }
    return head, ids


@pytest.mark.parametrize("lost", ["blob", "folder", "plans", "commit"])
def test_unreadable_objects_are_git_failures_never_absent_paths(repo: Path, lost: str) -> None:
    """Round 85 (r85surface): a read that failed (git cannot read the commit, a tree on the
    way or the blob) is ``E_GIT``, never "not there"; an absent path stays None."""
    from controller.errors import GitError

    head, ids = _lab_with_plan(repo)
    _drop_object(repo, ids[lost])
    gitrepo = GitRepo(repo)
    with pytest.raises(GitError, match=ids[lost][:12]):
        gitrepo.read_file(head, "plans/pa/PLAN.yml")
    if lost == "commit":
        with pytest.raises(GitError, match="cannot read object"):
            gitrepo.rev("HEAD")
    else:  # what git can read answers as before
        assert gitrepo.rev("HEAD") == head
    if lost in ("blob", "folder"):  # the plans folder read: another folder is absent
        assert gitrepo.read_file(head, "plans/none/PLAN.yml") is None


def test_unreadable_check_leaves_absent_paths_absent(repo: Path) -> None:
    head, _ids = _lab_with_plan(repo)
    gitrepo = GitRepo(repo)
    assert gitrepo.read_file(head, "plans/pa/PLAN.yaml") is None
    assert gitrepo.read_file(head, "plans/nope/PLAN.yml") is None
    assert gitrepo.read_file(head, "nope/x/y") is None
    assert gitrepo.mode_of(head, "plans/nope/PLAN.yml") is None
    assert gitrepo.rev("refs/heads/nope") is None
    assert gitrepo.names_in(head, "plans/nope") == []


def test_a_file_the_controller_commits_keeps_its_mode_on_the_branch(repo: Path) -> None:
    """Round 87 (modeflip): a file the controller writes over a ``100755`` entry stays
    ``100755`` (in a small tree and a big one, patched in place), a ``100644`` one and a
    new one are ``100644``; a symlink written over becomes a plain file."""
    from controller.git.objects import BIG_TREE

    (repo / "plans/x").mkdir(parents=True)
    (repo / "plans/x/PLAN.yml").write_text("a: 1\n")
    (repo / "plans/x/plain.yml").write_text("b: 1\n")
    os.chmod(repo / "plans/x/PLAN.yml", 0o755)
    os.symlink("plain.yml", repo / "plans/x/link.yml")
    big = repo / "big"
    big.mkdir()
    for i in range(BIG_TREE // 40 + 10):  # a tree over BIG_TREE bytes
        (big / f"file-{i:05d}.txt").write_text(f"{i}\n")
    os.chmod(big / "file-00003.txt", 0o755)
    commit_all(repo, "tree")
    gitrepo = GitRepo(repo)
    head = gitrepo.rev("HEAD")
    assert head
    files: dict[str, bytes | None] = {
        "plans/x/PLAN.yml": b"a: 2\n",
        "plans/x/plain.yml": b"b: 2\n",
        "plans/x/link.yml": b"c: 2\n",
        "plans/x/EXECUTION_LOG.md": b"log\n",
        "big/file-00003.txt": b"three\n",
    }
    sha = gitrepo.commit_files(
        branch="main", parent=head, files=files, message="plangate: test\n", author=BOT
    )
    assert sha
    assert git(repo, "fsck", "--no-progress") == ""
    modes = {
        line.split("\t")[1]: line.split()[0]
        for line in git(repo, "ls-tree", "-r", sha).splitlines()
        if line.split("\t")[1] in files
    }
    assert modes == {
        "plans/x/PLAN.yml": "100755",
        "plans/x/plain.yml": "100644",
        "plans/x/link.yml": "100644",
        "plans/x/EXECUTION_LOG.md": "100644",
        "big/file-00003.txt": "100755",
    }
    assert "mode change 100755" not in git(repo, "show", "--summary", "--format=", sha)
    assert gitrepo.file_modes(head, list(files)) == {
        path: int(mode, 8) for path, mode in modes.items()
    }


def test_the_index_and_the_checkout_get_the_committed_mode(repo: Path) -> None:
    """Round 87: the index entries and the working-tree files written beside a commit carry
    its modes (``git status`` clean for a ``100755`` plan file); the executable bit of a file
    written is the commit's, of one not written (same bytes) what it was."""
    from controller.git import sharedwrite

    (repo / "plans/x").mkdir(parents=True)
    (repo / "plans/x/PLAN.yml").write_text("a: 1\n")
    (repo / "plans/x/same.yml").write_text("s: 1\n")
    os.chmod(repo / "plans/x/PLAN.yml", 0o755)
    os.chmod(repo / "plans/x/same.yml", 0o755)
    commit_all(repo, "agent")
    gitrepo = GitRepo(repo)
    head = gitrepo.rev("HEAD")
    assert head
    sha = sharedwrite.commit_checked_out(
        gitrepo, branch="main", parent=head, message="plangate: test\n", author=BOT,
        files={"plans/x/PLAN.yml": b"a: 2\n", "plans/x/same.yml": b"s: 1\n",
               "plans/x/new.yml": b"n: 1\n"},
    )  # fmt: skip
    assert sha
    assert git(repo, "status", "--porcelain") == ""
    staged = git(repo, "ls-files", "-s", "plans/x").splitlines()
    assert [line.split()[0] for line in staged] == ["100755", "100644", "100755"]
    assert os.stat(repo / "plans/x/PLAN.yml").st_mode & 0o100
    assert not os.stat(repo / "plans/x/new.yml").st_mode & 0o111
    # a file written over a 100644 entry loses an executable bit it had in the checkout
    (repo / "plans/x/new.yml").write_text("n: 2\n")
    os.chmod(repo / "plans/x/new.yml", 0o755)
    gitrepo.write_worktree({"plans/x/new.yml": b"n: 3\n"}, {"plans/x/new.yml": 0o100644})
    assert not os.stat(repo / "plans/x/new.yml").st_mode & 0o111
    gitrepo.write_worktree({"plans/x/new.yml": b"n: 4\n"})  # no modes: the file's kept
    assert not os.stat(repo / "plans/x/new.yml").st_mode & 0o111


def test_a_fifo_where_a_file_goes_is_replaced_unopened_and_a_folder_kept(repo: Path) -> None:
    """Round 106: a FIFO an agent left at a plan's EXECUTION_LOG.md kept the run's log out
    of its outcome commit (a FIFO blocks its reader). The checkout renames the file over it
    without opening it; a folder where a file goes is left as it is, what it holds kept."""
    (repo / "plans/x").mkdir(parents=True)
    (repo / "plans/x/PLAN.yml").write_text("a: 1\n")
    commit_all(repo, "agent")
    os.mkfifo(repo / "plans/x/EXECUTION_LOG.md")
    (repo / "plans/x/notes.md").mkdir()
    (repo / "plans/x/notes.md/kept").write_text("theirs\n")
    gitrepo = GitRepo(repo)
    gitrepo.write_worktree({"plans/x/EXECUTION_LOG.md": b"# log\n", "plans/x/notes.md": b"n\n"})
    assert (repo / "plans/x/EXECUTION_LOG.md").read_bytes() == b"# log\n"
    assert (repo / "plans/x/notes.md/kept").read_text() == "theirs\n"
