"""Local mode's own object store (controller/git/store.py): history only from objects git's
pack protocol named by their bytes, whatever the shared ``.git/objects`` holds."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest

from controller.errors import GitError
from controller.git.gitrepo import GitRepo, Person
from tests.support.gitenv import ALICE, commit_all, git

BOT = Person("plangate", "plangate@localhost")


def _store_repo(repo: Path, tmp_path: Path) -> GitRepo:
    return GitRepo(repo, store=tmp_path / "state" / "objects.git")


def _rewrite_loose(repo: Path, name: str, with_object: str) -> bytes:
    """Store the bytes of ``with_object`` under ``name`` (a loose object); the old bytes."""
    import subprocess

    kind = git(repo, "cat-file", "-t", with_object).strip()
    body = subprocess.run(
        ["git", "cat-file", kind, with_object], cwd=repo, capture_output=True, check=True
    ).stdout
    path = repo / ".git" / "objects" / name[:2] / name[2:]
    before = path.read_bytes()
    os.chmod(path, 0o644)
    path.write_bytes(zlib.compress(f"{kind} {len(body)}\0".encode() + body))
    return before


def test_the_controller_reads_the_branch_from_its_own_store(repo: Path, tmp_path: Path) -> None:
    (repo / "plans").mkdir(exist_ok=True)
    (repo / "plans" / "note").write_text("one\n")
    head = commit_all(repo, "one", ALICE)
    gitrepo = _store_repo(repo, tmp_path)
    assert gitrepo.branch_head("main") == head
    store = tmp_path / "state" / "objects.git"
    assert git(store, "--git-dir", str(store), "rev-parse", "refs/heads/main").strip() == head
    assert gitrepo.read_file(head, "plans/note") == b"one\n"
    # a commit made after: fetched when the branch names it
    (repo / "plans" / "note").write_text("two\n")
    second = commit_all(repo, "two", ALICE)
    assert gitrepo.branch_head("main") == second
    assert gitrepo.read_file(second, "plans/note") == b"two\n"


def test_what_the_controller_commits_is_in_both_stores(repo: Path, tmp_path: Path) -> None:
    gitrepo = _store_repo(repo, tmp_path)
    head = gitrepo.branch_head("main")
    assert head is not None
    sha = gitrepo.commit_files(
        branch="main", parent=head, files={"plans/x/PLAN.yml": b"plan: 1\n"},
        message="plangate: x", author=BOT,
    )  # fmt: skip
    assert sha is not None
    # everyone's git in the shared checkout reads it, and the repository is whole
    assert git(repo, "show", f"{sha}:plans/x/PLAN.yml") == "plan: 1\n"
    git(repo, "fsck", "--connectivity-only", "--no-dangling")
    # the controller knows its own commit whole: no fetch needed to go on from it
    assert gitrepo.branch_head("main") == sha
    assert gitrepo.read_file(sha, "plans/x/PLAN.yml") == b"plan: 1\n"


def test_a_rewritten_object_stops_the_read_loudly_and_is_never_read(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "plans").mkdir(exist_ok=True)
    (repo / "plans" / "note").write_text("approved by alice\n")
    approved = commit_all(repo, "alice approves", ALICE)
    gitrepo = _store_repo(repo, tmp_path)
    (repo / "plans" / "note").write_text("what the agent wants\n")
    agent = commit_all(repo, "agent")
    (repo / "plans" / "note").write_text("approved by alice\n")
    tip = commit_all(repo, "agent puts it back")
    tree = git(repo, "rev-parse", f"{approved}:plans").strip()
    saved = _rewrite_loose(repo, tree, git(repo, "rev-parse", f"{agent}:plans").strip())
    assert git(repo, "show", f"{approved}:plans/note") == "what the agent wants\n"  # git trusts it
    with pytest.raises(GitError) as caught:
        gitrepo.branch_head("main")
    assert caught.value.code == "E_GIT" and "object store" in str(caught.value)
    assert caught.value.remedy and "git fsck" in caught.value.remedy
    # what the failed fetch left behind does not count: still refused, never read
    with pytest.raises(GitError):
        _store_repo(repo, tmp_path).branch_head("main")
    # repaired: the history as the objects' names say
    (repo / ".git" / "objects" / tree[:2] / tree[2:]).write_bytes(saved)
    fresh = _store_repo(repo, tmp_path)
    assert fresh.branch_head("main") == tip
    assert fresh.read_file(approved, "plans/note") == b"approved by alice\n"


def test_a_commit_graph_in_the_shared_store_is_never_read(repo: Path, tmp_path: Path) -> None:
    (repo / "plans").mkdir(exist_ok=True)
    (repo / "plans" / "note").write_text("one\n")
    commit_all(repo, "one", ALICE)
    git(repo, "commit-graph", "write", "--reachable")
    graph = repo / ".git" / "objects" / "info" / "commit-graph"
    assert graph.exists()
    graph.write_bytes(b"not a graph")  # git would complain reading it
    gitrepo = _store_repo(repo, tmp_path)
    head = gitrepo.branch_head("main")
    assert head is not None
    out = gitrepo.run_raw("log", "--format=%H", head)
    assert out.returncode == 0 and b"commit-graph" not in out.stderr, out.stderr


def test_upload_pack_runs_no_lazy_fetch_the_agent_configured(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A "partial clone" whose promisor remote's upload-pack is the agent's program: the
    fetch into the store reads a missing object there. It fails; nothing runs. (git's own
    upload-pack turns lazy fetching off unless ``GIT_NO_LAZY_FETCH=0`` is in the environment,
    which passes to git's children like every ``GIT_*`` of the operator's: the command line's
    pins hold then too.)"""
    monkeypatch.setenv("GIT_NO_LAZY_FETCH", "0")
    marker = tmp_path / "ran"
    evil = tmp_path / "evil"
    evil.write_text(f'#!/bin/sh\ntouch "{marker}"\nexit 1\n')
    evil.chmod(0o755)
    (repo / "plans").mkdir(exist_ok=True)
    (repo / "plans" / "note").write_text("one\n")
    commit_all(repo, "one", ALICE)
    for key, value in (
        ("core.repositoryFormatVersion", "1"),
        ("extensions.partialClone", "lazy"),
        ("remote.lazy.url", str(tmp_path)),
        ("remote.lazy.promisor", "true"),
        ("remote.lazy.uploadpack", str(evil)),
        ("protocol.file.allow", "always"),
        ("protocol.allow", "always"),
    ):
        git(repo, "config", key, value)
    blob = git(repo, "rev-parse", "HEAD:plans/note").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # "promised"
    with pytest.raises(GitError):
        _store_repo(repo, tmp_path).branch_head("main")
    assert not marker.exists()


def test_the_store_is_made_whole_or_not_at_all(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "state" / "objects.git"
    GitRepo(repo, store=store)
    assert (store / "HEAD").is_file() and (store / "objects").is_dir()
    assert not [p for p in store.parent.iterdir() if p.name.startswith(".objects-")]
    GitRepo(repo, store=store)  # opened again as it is


def _store_fsck(tmp_path: Path) -> str:
    store = tmp_path / "state" / "objects.git"
    return git(store, "--git-dir", str(store), "fsck", "--connectivity-only", "--no-dangling")


def test_a_merged_pull_request_is_taken_in_whole_without_a_fetch(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "plans").mkdir(exist_ok=True)
    (repo / "plans" / "a").write_text("a\n")
    commit_all(repo, "base", ALICE)
    _store_repo(repo, tmp_path).branch_head("main")  # the first start: a fetch
    gitrepo = _store_repo(repo, tmp_path)  # the next process: its base is the store's branch
    git(repo, "checkout", "-q", "-b", "review")
    for i in range(3):
        (repo / "plans" / f"new{i}").mkdir()
        (repo / "plans" / f"new{i}" / "PLAN.yml").write_text(f"plan {i}\n")
        commit_all(repo, f"review {i}")
    git(repo, "checkout", "-q", "main")
    (repo / "plans" / "a").write_text("a, edited on main\n")
    commit_all(repo, "main moves on", ALICE)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge review", "review")
    tip = git(repo, "rev-parse", "HEAD").strip()

    def no_fetch(ref: str) -> None:
        raise AssertionError("fetched: the quick intake should have taken it")

    monkeypatch.setattr(gitrepo, "_fetch_into_store", no_fetch)
    assert gitrepo.branch_head("main") == tip
    _store_fsck(tmp_path)  # every object of the merge and the branch is there
    assert gitrepo.read_file(tip, "plans/new2/PLAN.yml") == b"plan 2\n"
    # the next process knows it whole from the store's branch: no fetch, no intake
    again = _store_repo(repo, tmp_path)
    monkeypatch.setattr(again, "_fetch_into_store", no_fetch)
    monkeypatch.setattr(again, "_intake", lambda: pytest.fail("taken in again"))
    assert again.branch_head("main") == tip


def test_the_intake_hashes_every_object_it_takes(repo: Path, tmp_path: Path) -> None:
    """A new commit whose tree the shared store gives other bytes: the intake refuses it
    (NotTaken), and the fetch that decides then fails: E_GIT, never read."""
    from controller.git.store import Intake, NotTaken

    (repo / "plans").mkdir(exist_ok=True)
    (repo / "plans" / "note").write_text("one\n")
    commit_all(repo, "one", ALICE)
    gitrepo = _store_repo(repo, tmp_path)
    gitrepo.branch_head("main")
    (repo / "plans" / "note").write_text("alice approves\n")
    approved = commit_all(repo, "alice", ALICE)
    tree = git(repo, "rev-parse", f"{approved}:plans").strip()
    other = git(repo, "rev-parse", "HEAD~1:plans").strip()
    _rewrite_loose(repo, tree, other)
    intake = gitrepo._intake()
    with pytest.raises(NotTaken, match="does not hash to its name"):
        intake.take(approved)
    with pytest.raises(GitError) as caught:
        gitrepo.branch_head("main")
    assert "object store" in str(caught.value)
    # and the same with a reader that lies outright
    lying = Intake(
        shared=lambda sha: (b"commit", b"tree " + b"0" * 40 + b"\n\nforged\n"),
        size=lambda sha: 50,
        own=intake.own, has=intake.has, write=intake.write, whole=intake.whole,
    )  # fmt: skip
    with pytest.raises(NotTaken):
        lying.take("1" * 40)


def test_a_big_object_is_left_to_git_fetch(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quick intake never reads a blob over 1 MiB into the controller's memory (a
    hostile 80 MB file in a commit): git fetch, which streams it, takes the commit in."""
    _store_repo(repo, tmp_path).branch_head("main")
    (repo / "notes").mkdir()
    (repo / "notes" / "big.bin").write_bytes(os.urandom(2 * 1024 * 1024))
    tip = commit_all(repo, "a big file")
    gitrepo = _store_repo(repo, tmp_path)
    fetched: list[str] = []
    real = gitrepo._fetch_into_store

    def counted(ref: str) -> None:
        fetched.append(ref)
        real(ref)

    monkeypatch.setattr(gitrepo, "_fetch_into_store", counted)
    assert gitrepo.branch_head("main") == tip
    assert fetched == ["refs/heads/main"]
    _store_fsck(tmp_path)


def _packs(objects: Path) -> list[Path]:
    return sorted((objects / "pack").glob("pack-*.idx"))


def _loose(objects: Path) -> int:
    return sum(1 for folder in objects.glob("[0-9a-f][0-9a-f]") for _ in folder.iterdir())


def test_a_burst_commit_writes_one_pack_per_store_that_git_reads_whole(
    repo: Path, tmp_path: Path
) -> None:
    """A commit of many plans (a burst's batch) goes into each store as one pack that
    `git fsck --full --strict` accepts, read by every git and by a running reader; a small
    commit (an approval's) stays loose objects."""
    gitrepo = _store_repo(repo, tmp_path)
    store = tmp_path / "state" / "objects.git" / "objects"
    shared = repo / ".git" / "objects"
    head = gitrepo.branch_head("main")
    assert head is not None
    gitrepo.read_file(head, "README.md")  # the persistent readers run before the pack lands
    files = {f"plans/p{i:03d}/PLAN.yml": f"plan: {i}\n".encode() for i in range(40)}
    packs, loose = (_packs(store), _packs(shared)), (_loose(store), _loose(shared))
    sha = gitrepo.commit_files(
        branch="main", parent=head, files=files, message="plangate: 40 plans", author=BOT
    )
    assert sha is not None
    assert (len(_packs(store)), len(_packs(shared))) == (len(packs[0]) + 1, len(packs[1]) + 1)
    # the commit object alone is loose (40 blobs, 40 folders, plans and the root are packed)
    assert (_loose(store), _loose(shared)) == (loose[0] + 1, loose[1] + 1)
    git(repo, "fsck", "--full", "--strict", "--no-dangling")
    git(store.parent, "--git-dir", str(store.parent), "fsck", "--full", "--strict", "--no-dangling")
    for pack in _packs(store) + _packs(shared):  # every object hashed by git
        git(repo, "verify-pack", str(pack))
    assert git(repo, "show", f"{sha}:plans/p039/PLAN.yml") == "plan: 39\n"
    for i in (0, 17, 39):  # the running readers find the new pack
        assert gitrepo.read_file(sha, f"plans/p{i:03d}/PLAN.yml") == f"plan: {i}\n".encode()
    assert GitRepo(repo, store=store.parent).read_file(sha, "plans/p007/PLAN.yml") == b"plan: 7\n"
    small = gitrepo.commit_files(
        branch="main", parent=sha, files={"plans/p000/PLAN.yml": b"plan: approved\n"},
        message="plangate: approve p000", author=BOT,
    )  # fmt: skip
    assert small is not None and len(_packs(store)) == len(packs[0]) + 1  # loose, no pack
    git(repo, "fsck", "--full", "--strict", "--no-dangling")


def test_a_burst_merged_in_is_taken_in_as_one_pack(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The intake of a merge bringing many plans writes its objects as one pack in the
    controller's store, every object hashed as before; nothing is fetched."""
    gitrepo = _store_repo(repo, tmp_path)
    gitrepo.branch_head("main")
    store = tmp_path / "state" / "objects.git" / "objects"
    before = _packs(store)
    for i in range(30):
        (repo / "plans" / f"n{i:02d}").mkdir(parents=True)
        (repo / "plans" / f"n{i:02d}" / "PLAN.yml").write_text(f"plan {i}\n")
    tip = commit_all(repo, "an agent proposes 30 plans", ALICE)
    monkeypatch.setattr(gitrepo, "_fetch_into_store", lambda ref: pytest.fail("fetched"))
    assert gitrepo.branch_head("main") == tip
    assert len(_packs(store)) == len(before) + 1
    _store_fsck(tmp_path)
    assert gitrepo.read_file(tip, "plans/n29/PLAN.yml") == b"plan 29\n"


def test_the_controllers_own_store_rolls_up_its_small_packs(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past MAX_PACKS packs in the controller's own store, a burst's write rolls the small
    ones up (git's geometric repack); every commit stays readable and the store whole."""
    from controller.git import base

    monkeypatch.setattr(base, "MAX_PACKS", 4)
    gitrepo = _store_repo(repo, tmp_path)
    store = tmp_path / "state" / "objects.git" / "objects"
    head = gitrepo.branch_head("main")
    made = []
    for n in range(8):
        files = {f"plans/b{n}p{i:02d}/PLAN.yml": f"plan {n} {i}\n".encode() for i in range(20)}
        head = gitrepo.commit_files(
            branch="main", parent=head, files=files, message=f"plangate: burst {n}", author=BOT
        )
        assert head is not None
        made.append(head)
        assert len(_packs(store)) <= 5
    git(store.parent, "--git-dir", str(store.parent), "fsck", "--full", "--strict", "--no-dangling")
    for n, sha in enumerate(made):
        assert gitrepo.read_file(sha, f"plans/b{n}p19/PLAN.yml") == f"plan {n} 19\n".encode()
    assert len(_packs(repo / ".git" / "objects")) == 8  # the shared store is its owner's gc's


def test_a_repack_while_a_burst_commit_lands_keeps_its_pack(repo: Path, tmp_path: Path) -> None:
    """The owner's `git repack -a -d` (or `git gc`) run between the burst's pack landing and
    the branch naming it drops nothing: the pack is kept (``.keep``, as ``git index-pack
    --keep``) until the branch moves, then released; the repository stays whole (CI stop
    54: a repack loop beside a daemon's burst left main naming a tree that was gone)."""
    gitrepo = _store_repo(repo, tmp_path)
    shared = repo / ".git" / "objects"
    head = gitrepo.branch_head("main")
    assert head is not None
    files = {f"plans/k{i:03d}/PLAN.yml": f"plan: {i}\n".encode() for i in range(40)}
    seen: list[list[str]] = []

    def repack_now(sha: str) -> None:
        seen.append(sorted(p.name for p in (shared / "pack").glob("*.keep")))
        git(repo, "repack", "-a", "-d", "-q")

    sha = gitrepo.commit_files(
        branch="main", parent=head, files=files, message="plangate: 40 plans", author=BOT,
        before_ref=repack_now,
    )  # fmt: skip
    assert sha is not None
    git(repo, "fsck", "--full", "--strict", "--no-dangling")
    assert git(repo, "show", f"{sha}:plans/k039/PLAN.yml") == "plan: 39\n"
    assert len(seen) == 1 and len(seen[0]) == 1  # kept during the repack
    store = tmp_path / "state" / "objects.git" / "objects"
    assert list((shared / "pack").glob("*.keep")) == list((store / "pack").glob("*.keep")) == []
    git(repo, "repack", "-a", "-d", "-q")  # released: the owner's gc packs it as any other
    git(repo, "fsck", "--full", "--strict", "--no-dangling")
    assert len(_packs(shared)) == 1
