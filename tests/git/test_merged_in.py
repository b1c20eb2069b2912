"""``merged_in``: every commit a merge brought in from a side branch, whatever the number of
merges in the range (one walk for all of them once hid every earlier merge's branch behind
a later merge's first parent: round 5) and whether or not the merge was TREESAME."""

from __future__ import annotations

from pathlib import Path

from controller.git.gitrepo import GitRepo
from tests.support.gitenv import commit_all, git

ALICE = ("Alice", "alice@example.com")
BOB = ("Bob", "bob@example.com")
AGENT = ("Agent", "agent@example.com")


def _put(repo: Path, path: str, text: str) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def _side(repo: Path, branch: str, path: str, text: str, who: tuple[str, str]) -> str:
    git(repo, "checkout", "-q", "-b", branch, "main")
    _put(repo, path, text)
    sha = commit_all(repo, f"{who[0]} on {branch}", who)
    git(repo, "checkout", "-q", "main")
    return sha


def test_every_merged_branch_is_read_over_several_merges(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    _put(repo, "README", "x\n")
    base = commit_all(repo, "init", AGENT)
    alice = _side(repo, "a", "plans/one/PLAN.json", "{}\n", ALICE)
    _put(repo, "plans/one/PLAN.json", "{}\n")  # the first parent makes the same change
    commit_all(repo, "agent adds the same bytes", AGENT)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge a", "a")  # TREESAME to main
    first_merge = git(repo, "rev-parse", "HEAD").strip()
    bob = _side(repo, "b", "plans/two/PLAN.yml", "plan: {}\n", BOB)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge b", "b")
    head = git(repo, "rev-parse", "HEAD").strip()
    gitrepo = GitRepo(repo)
    try:
        found = {r.sha: r.author.email for r in gitrepo.merged_in(None, head, ["plans"])}
        assert found == {alice: ALICE[1], bob: BOB[1]}
        since = {r.sha for r in gitrepo.merged_in(base, head, ["plans"])}
        assert since == {alice, bob}
        later = {r.sha for r in gitrepo.merged_in(first_merge, head, ["plans"])}
        assert later == {bob}
        assert gitrepo.merged_in(head, head, ["plans"]) == []
    finally:
        gitrepo.close()


def test_merges_on_merged_branches_are_read_with_their_first_parent_changes(
    tmp_path: Path,
) -> None:
    """``merges_merged_in``: the merges a merged branch holds (round 68: what such a merge
    wrote is its maker's), each with its changes against its first parent under the paths;
    neither a merge on the first-parent line nor one that changed nothing there."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    _put(repo, "plans/one/NOTES.md", "x\n")
    base = commit_all(repo, "init", AGENT)
    _side(repo, "b", "plans/one/NOTES.md", "b\n", BOB)
    _side(repo, "c", "README", "c\n", BOB)
    git(repo, "switch", "-q", "-c", "alice", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "alice merges b", "b")
    hers = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "merge", "-q", "--no-ff", "-m", "alice merges c", "c")  # nothing under plans
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge alice", "alice")
    head = git(repo, "rev-parse", "HEAD").strip()
    gitrepo = GitRepo(repo)
    try:
        for since in (None, base):
            found = gitrepo.merges_merged_in(since, head, ["plans"])
            assert [(r.sha, [c.path for c in r.changes]) for r in found] == [
                (hers, ["plans/one/NOTES.md"])
            ]
        assert gitrepo.merges_merged_in(head, head, ["plans"]) == []
    finally:
        gitrepo.close()


def test_merge_tree_and_changed_files(repo: Path) -> None:
    """``GitRepo.merge_tree``: the tree git's merge machinery makes of a merge's parents
    (``plangate check``'s simulated merge; rounds 46-47 also asked it whether a merge's status
    came through it, round 48 no longer does); ``changed_files``: each file a branch
    changed since the merge base, at any path, without rename pairs; ``merge_base``."""
    folder = repo / "plans" / "a"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_text("".join(f"line {i}\n" for i in range(20)))
    (repo / "plans" / "keep").write_text("kept\n")
    (repo / "outside").write_text("x\n")
    base = commit_all(repo, "add")
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "plans" / "keep").write_text("changed on the side\n")
    (folder / "PLAN.yml").write_text(
        "line 0 on the side\n" + "".join(f"line {i}\n" for i in range(1, 20))
    )
    side = commit_all(repo, "side")
    git(repo, "checkout", "-q", "-b", "other", base)
    (repo / "docs").mkdir()
    (repo / "docs" / "x").write_text("x\n")
    other = commit_all(repo, "other")
    git(repo, "checkout", "-q", "main")
    git(repo, "mv", "plans/a", "plans/b c")
    (repo / "plans" / "b c" / "PLAN.yml").write_text(
        "".join(f"line {i}\n" for i in range(19)) + "edited\n"
    )
    git(repo, "mv", "outside", "moved-outside")
    first = commit_all(repo, "move and edit")
    gitrepo = GitRepo(repo)
    try:
        assert gitrepo.merge_base(first, side) == base
        changed = gitrepo.changed_files(base, first)
        assert sorted(changed) == ["moved-outside", "plans/b c/PLAN.yml"]
        assert changed["moved-outside"] == gitrepo.blob_sha(first, "moved-outside")
        assert sorted(gitrepo.changed_files(base, side)) == ["plans/a/PLAN.yml", "plans/keep"]
        assert "plans/keep" in gitrepo.changed_files(None, base)  # every file
        merged = gitrepo.merge_tree([first, side])
        assert merged is not None and merged[1]
        text = gitrepo.read_file(merged[0], "plans/b c/PLAN.yml")
        assert text is not None and text.startswith(b"line 0 on the side\n")
        assert text.endswith(b"edited\n")
        octopus = gitrepo.merge_tree([first, side, other])
        assert octopus is not None and octopus[1]
        assert gitrepo.read_file(octopus[0], "plans/b c/PLAN.yml") == text
        assert gitrepo.read_file(octopus[0], "docs/x") == b"x\n"
    finally:
        gitrepo.close()


def test_file_merges_are_git_merge_x_ours_theirs_and_a_union(repo: Path) -> None:
    """``GitRepo.file_merges``: git's hands-off settlements of one file's conflict are the
    very bytes ``git merge -X ours`` / ``-X theirs`` commit, and a union of both sides; a
    binary file has none (round 67)."""
    note = repo / "note"
    note.write_text("a\nb\nc\n")
    commit_all(repo, "add")
    git(repo, "checkout", "-q", "-b", "side")
    note.write_text("a side\nb\nc side\n")
    commit_all(repo, "side")
    git(repo, "checkout", "-q", "main")
    note.write_text("a main\nb\nc\n")
    commit_all(repo, "main")
    made = {}
    for favor in ("ours", "theirs"):
        git(repo, "merge", "-q", "--no-commit", "--no-ff", "-X", favor, "side")
        made[favor] = note.read_bytes()
        git(repo, "merge", "--abort")
    gitrepo = GitRepo(repo)
    try:
        texts = [gitrepo.read_file(rev, "note") or b"" for rev in ("main~1", "main", "side")]
        settled = gitrepo.file_merges(texts[0], texts[1], texts[2])
        assert settled == [made["ours"], made["theirs"], b"a main\na side\nb\nc side\n"]
        assert gitrepo.file_merges(b"\0a\n", b"\0b\n", b"\0c\n") == []
    finally:
        gitrepo.close()
