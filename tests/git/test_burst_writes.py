"""What a burst's batched commits rely on in the git layer: the job rows of one batch in
one durable transaction, and objects this process wrote read back without git."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from controller.git import base
from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from controller.git.objects import STORE_RAW_ABOVE
from tests.support.gitkit import commit_all


def _index(tmp_path: Path) -> HistoryIndex:
    return HistoryIndex(
        tmp_path / "index.sqlite", plans_dir="plans", controller_email="plangate@localhost"
    )


def _rows(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as db:  # another reader: what a restart would find
        return dict(db.execute("SELECT plan_id, data FROM jobs"))


def test_jobs_set_together_are_committed_when_the_block_ends(tmp_path: Path) -> None:
    index = _index(tmp_path)
    index.set_job("plans/old", {"n": 0})
    with index.jobs_together():
        index.set_job("plans/a", {"n": 1})
        index.set_job("plans/b", {"n": 2})
        index.set_job("plans/old", None)
        assert sorted(index.jobs()) == ["plans/a", "plans/b"]
        assert sorted(_rows(tmp_path / "index.sqlite")) == ["plans/old"]  # not yet
    assert sorted(_rows(tmp_path / "index.sqlite")) == ["plans/a", "plans/b"]
    index.set_job("plans/c", {"n": 3})  # alone again: committed at once
    assert sorted(_rows(tmp_path / "index.sqlite")) == ["plans/a", "plans/b", "plans/c"]
    index.close()


def test_jobs_set_before_a_failure_in_the_block_are_kept(tmp_path: Path) -> None:
    index = _index(tmp_path)
    with pytest.raises(RuntimeError), index.jobs_together():
        index.set_job("plans/a", {"n": 1})
        raise RuntimeError("the next start failed")
    assert sorted(_rows(tmp_path / "index.sqlite")) == ["plans/a"]  # as one by one would
    index.close()


def test_objects_written_here_are_read_back_without_git(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "f.txt").write_text("x\n")
    commit_all(repo, "start")
    gitrepo = GitRepo(repo)
    small = gitrepo.store_blob(b"a plan as the controller wrote it\n")
    big = gitrepo.store_blob(b"x" * (STORE_RAW_ABOVE + 1))
    asked: list[str] = []
    read = base.RepoBase._object

    def counting(self: base.RepoBase, sha: str, limit: int | None = None) -> bytes:
        asked.append(sha)
        return read(self, sha, limit)

    monkeypatch.setattr(base.RepoBase, "_object", counting)
    assert gitrepo.blob(small) == b"a plan as the controller wrote it\n"
    assert gitrepo.blob(big) == b"x" * (STORE_RAW_ABOVE + 1)
    assert asked == [big]  # a big object is not kept: asked of git


def test_many_working_tree_files_are_written_together_and_atomically(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from controller import fsutil

    (repo / "plans/kept").mkdir(parents=True)
    (repo / "plans/kept/PLAN.yml").write_text("old\n")
    os.chmod(repo / "plans/kept/PLAN.yml", 0o640)
    commit_all(repo, "start")
    synced: list[int] = []
    fsync = os.fsync
    monkeypatch.setattr(fsutil.os, "fsync", lambda fd: (synced.append(fd), fsync(fd))[1])
    monkeypatch.setattr(fsutil, "_MANY_AT_ONCE", 7)  # several rounds
    files: dict[str, bytes | None] = {f"plans/p{i}/PLAN.yml": b"plan %d\n" % i for i in range(20)}
    files["plans/kept/PLAN.yml"] = b"new\n"
    GitRepo(repo).write_worktree(files)
    for path, data in files.items():
        assert (repo / path).read_bytes() == data
    assert (repo / "plans/kept/PLAN.yml").stat().st_mode & 0o777 == 0o640  # mode kept
    assert len(synced) == 2 * 21  # each file and each folder, as one by one
    assert not list(repo.glob("plans/*/.*.tmp"))  # no temp file left


def test_each_plan_of_a_batched_commit_finds_its_group_from_one_parse() -> None:
    from controller.git import records
    from controller.git.message import batch_message

    plans = [f"plans/b{i:03d}" for i in range(200)]
    groups = [
        [("Plan", p), ("Plan-Event", "start"), ("Plan-Hash", f"sha256:{i}")]
        for i, p in enumerate(plans)
    ]
    message = batch_message(groups, [("Controller", "host/1")])
    subject, _, body = message.partition("\n")
    record = records.CommitRecord(
        "0" * 40,
        (),
        records.Person("c", "c@x"),
        records.Person("c", "c@x"),
        0,
        0,
        subject,
        records.parse_trailers(body),
        [],
        body.strip("\n"),
    )
    records._groups_of.cache_clear()
    for i, plan in enumerate(plans):
        event = records.plan_event(record, plan)
        assert event is not None and event.verb == "start"
        assert event.trailers["Plan-Hash"] == f"sha256:{i}"
        assert event.trailers["Controller"] == "host/1"
        event.trailers["Plan-Hash"] = "changed by a caller"  # never seen by the next one
    assert records.plan_event(record, plans[0]).trailers["Plan-Hash"] == "sha256:0"  # type: ignore[union-attr]
    assert records._groups_of.cache_info().misses == 1  # parsed once for 200 plans


@pytest.mark.parametrize("count", [3, 30])  # asked one by one / in one batch
def test_folders_among_a_batchs_paths_are_found_as_one_by_one(repo: Path, count: int) -> None:
    names = [f"plans/p{i}" for i in range(count)]
    for i, name in enumerate(names):
        (repo / name).mkdir(parents=True)
        if i % 3 == 0:  # a folder where the controller writes a file
            (repo / name / "EXECUTION_LOG.md").mkdir()
            (repo / name / "EXECUTION_LOG.md/kept").write_text("x\n")
        else:
            (repo / name / "EXECUTION_LOG.md").write_text("log\n")
    commit_all(repo, "start")
    gitrepo = GitRepo(repo)
    head = gitrepo.run("rev-parse", "HEAD").strip()
    paths = [f"{name}/EXECUTION_LOG.md" for name in names]
    paths += ["plans/gone/EXECUTION_LOG.md", "plans/p1/EXECUTION_LOG.md/below", "plans/p0"]
    paths += ["plans/odd\nname/PLAN.yml"]  # a name git cannot be asked: no folder
    found = gitrepo.trees_among(head, paths)
    assert found == {path for path in paths if gitrepo.is_tree(head, path)}
    assert found == {f"plans/p{i}/EXECUTION_LOG.md" for i in range(0, count, 3)} | {"plans/p0"}


def test_a_commit_changing_many_folders_of_a_big_tree_keeps_every_other_entry(
    repo: Path,
) -> None:
    for i in range(600):  # a `plans` tree over BIG_TREE bytes
        (repo / f"plans/p{i:03d}").mkdir(parents=True)
        (repo / f"plans/p{i:03d}/PLAN.yml").write_text(f"plan {i}\n")
    commit_all(repo, "start")
    gitrepo = GitRepo(repo)
    files: dict[str, bytes | None] = {
        f"plans/p{i:03d}/PLAN.yml": b"new\n" for i in range(0, 600, 7)
    }
    files["plans/new/PLAN.yml"] = b"added\n"
    files["plans/p001/PLAN.yml"] = None  # its folder goes
    tree = gitrepo.tree_with(gitrepo.run("rev-parse", "HEAD^{tree}").strip(), files)
    listed = dict(
        line.split("\t")[::-1]
        for line in gitrepo.run("ls-tree", "-r", "--format=%(objectname)\t%(path)", tree).split(
            "\n"
        )
        if line
    )
    assert "plans/p001/PLAN.yml" not in listed
    assert len([path for path in listed if path.startswith("plans/")]) == 600
    for i in range(600):
        path = f"plans/p{i:03d}/PLAN.yml"
        want = files.get(path, f"plan {i}\n".encode()) if i != 1 else None
        if want is not None:
            assert gitrepo.blob(listed[path]) == want
    assert gitrepo.blob(listed["plans/new/PLAN.yml"]) == b"added\n"


def test_loose_objects_are_written_read_only_whole_and_leave_no_temp_file(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import subprocess

    from controller.git import store

    objects = repo / ".git/objects"
    data = [b"object %d\n" % i for i in range(40)]
    taken = f"tmp_obj_{os.getpid()}_"
    counter = iter(range(10**6))
    monkeypatch.setattr(store, "_TEMP_NAMES", counter)
    for i, blob in enumerate(data):
        header = b"blob %d\0" % len(blob)
        sha = store.object_id(b"blob", blob)
        if i == 5:  # another process's leftover under the name this one would take
            (objects / sha[:2]).mkdir(exist_ok=True)
            (objects / sha[:2] / f"{taken}5").write_bytes(b"stale")
        store.write_loose(objects, sha, header, blob, [])
        path = objects / sha[:2] / sha[2:]
        assert path.stat().st_mode & 0o777 == 0o444
        shown = subprocess.run(
            ["git", "cat-file", "blob", sha], cwd=repo, capture_output=True, check=True
        )
        assert shown.stdout == blob
    left = [p.name for p in objects.glob("*/tmp_obj_*")]
    assert left == [f"{taken}5"]  # the leftover only: nothing of this process's


@pytest.mark.parametrize("count", [3, 30])  # listed one by one / in one batch
def test_a_batchs_folder_listings_are_as_one_by_one(repo: Path, count: int) -> None:
    """Round 71: the history index lists a burst's new plan folders in one batch to compare
    their names case-insensitively (issue 17); a batch lists what one listing does."""
    names = [f"plans/p{i}" for i in range(count)]
    for i, name in enumerate(names):
        (repo / name).mkdir(parents=True)
        (repo / name / "PLAN.yml").write_text("x\n")
        if i % 3 == 0:
            (repo / name / "plan.yml").mkdir()
            (repo / name / "plan.yml/PLAN.yml").write_text("y\n")
    commit_all(repo, "start")
    gitrepo = GitRepo(repo)
    head = gitrepo.run("rev-parse", "HEAD").strip()
    folders = [*names, "plans/gone", "plans/p1/PLAN.yml"]
    found = gitrepo.names_among(head, folders)
    assert found == {folder: gitrepo.names_in(head, folder) for folder in folders}
    assert sorted(found["plans/p0"]) == ["PLAN.yml", "plan.yml"] and found["plans/p1"] == [
        "PLAN.yml"
    ]
    assert found["plans/gone"] == [] and found["plans/p1/PLAN.yml"] == []


def test_the_objects_kept_count_what_keeping_them_costs(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """perf80mem: a plan's blob is about 200 bytes; counted by its bytes alone, the 4 MB kept
    26,000 of them (9 MB) after a cold scan. Each counts with its keeping now, the oldest
    dropped first, and what is dropped is asked of git again, never stale."""
    from controller.git import objects

    (repo / "f.txt").write_text("x\n")
    commit_all(repo, "start")
    gitrepo = GitRepo(repo)
    monkeypatch.setattr(objects, "KEPT_BYTES", 4 * (11 + objects.KEPT_OVERHEAD))
    shas = [gitrepo.store_blob(f"blob {i:5d}\n".encode()) for i in range(6)]  # 11 bytes each
    assert list(gitrepo._kept) == shas[2:]  # the budget holds four, with their keeping
    assert gitrepo._kept_bytes == objects.KEPT_BYTES
    assert gitrepo.blob(shas[0]) == b"blob     0\n"  # dropped: read from git
    gitrepo.forget_kept()
    assert gitrepo._kept == {} and gitrepo._kept_bytes == 0
    assert [gitrepo.blob(s) for s in shas] == [f"blob {i:5d}\n".encode() for i in range(6)]
