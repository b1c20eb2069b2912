"""Local-mode watching with real inotify on a real git repository."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.service.watcher import Debouncer, RepoWatcher
from tests.support.gitenv import commit_all, git

PLAN = "plan:\n  name: x\n  task: y\n  status: pending_approval\nactions: []\n"


class Changes:
    def __init__(self) -> None:
        self.q: queue.Queue[str] = queue.Queue()

    def __call__(self, reason: str) -> None:
        self.q.put(reason)

    def wait_for(self, accept: Callable[[str], bool], timeout: float = 10) -> str:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                reason = self.q.get(timeout=left)
            except queue.Empty:
                break
            if accept(reason):
                return reason
        raise AssertionError("no matching change reported")

    def drain(self) -> list[str]:
        items = []
        while True:
            try:
                items.append(self.q.get_nowait())
            except queue.Empty:
                return items


@pytest.fixture(params=[0.5])
def watched(repo: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Path, Changes]]:
    (repo / "plans" / "one").mkdir(parents=True)
    changes = Changes()
    watcher = RepoWatcher(repo, "plans", changes, quiet=request.param).start()
    changes.drain()
    yield repo, changes
    watcher.stop()


def is_ref(reason: str) -> bool:
    return reason.startswith("ref:")


def is_plan(reason: str) -> bool:
    return reason.startswith("file:") and reason.endswith("PLAN.yml")


def test_a_commit_by_anyone_is_noticed(watched: tuple[Path, Changes]) -> None:
    repo, changes = watched
    (repo / "notes.txt").write_text("hello\n")
    commit_all(repo, "a human commit", ("Alice", "alice@example.com"))
    assert changes.wait_for(is_ref) == "ref:main"


def test_merge_and_branch_updates_are_noticed(watched: tuple[Path, Changes]) -> None:
    repo, changes = watched
    git(repo, "branch", "feature")
    changes.wait_for(is_ref)
    git(repo, "update-ref", "refs/heads/main", "HEAD")  # same value: still a write
    git(repo, "pack-refs", "--all")
    changes.wait_for(is_ref)


@pytest.mark.parametrize("watched", [30.0], indirect=True)
def test_plan_written_in_place_is_reported_on_close(watched: tuple[Path, Changes]) -> None:
    repo, changes = watched
    folder = repo / "plans" / "one"
    with (folder / "PLAN.yml").open("w") as handle:
        handle.write(PLAN[:20])
        handle.flush()
        time.sleep(0.3)  # give a wrong implementation the chance to report a half file
        assert not [r for r in changes.drain() if is_plan(r)]
        handle.write(PLAN[20:])
    assert changes.wait_for(is_plan) == f"file:{folder.resolve() / 'PLAN.yml'}"


@pytest.mark.parametrize("fresh_folder", [False, True])
def test_atomic_replace_is_reported(watched: tuple[Path, Changes], fresh_folder: bool) -> None:
    """In an existing folder at once; in a folder made just now, after the quiet period."""
    repo, changes = watched
    folder = repo / "plans" / ("two" if fresh_folder else "one")
    folder.mkdir(exist_ok=True)
    tmp = folder / ".PLAN.yml.tmp"
    tmp.write_text(PLAN)
    os.replace(tmp, folder / "PLAN.yml")
    assert changes.wait_for(is_plan).endswith(f"{folder.name}/PLAN.yml")


def test_other_files_in_plan_folders_are_ignored(watched: tuple[Path, Changes]) -> None:
    repo, changes = watched
    folder = repo / "plans" / "one"
    (folder / "EXECUTION_LOG.md").write_text("# log\n")
    (folder / "PLAN.yml").write_text(PLAN)
    first = changes.wait_for(lambda r: r.startswith("file:"))
    assert first.endswith("PLAN.yml")


def test_plans_dir_created_later(repo: Path) -> None:
    changes = Changes()
    watcher = RepoWatcher(repo, "ops/plans", changes, quiet=30).start()
    try:
        folder = repo / "ops" / "plans" / "late"
        folder.mkdir(parents=True)
        changes.wait_for(lambda r: r.startswith("dir:"))
        (folder / "PLAN.yml").write_text(PLAN)
        changes.wait_for(is_plan)
    finally:
        watcher.stop()


def test_linked_worktree_commits_are_noticed(repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
    (repo / "plans").mkdir()
    changes = Changes()
    watcher = RepoWatcher(repo, "plans", changes).start()
    try:
        changes.drain()
        (tmp_path / "wt" / "f").write_text("x")
        commit_all(tmp_path / "wt", "in the worktree")
        assert changes.wait_for(is_ref) == "ref:side"
    finally:
        watcher.stop()


def test_debouncer_coalesces_and_fire_preempts() -> None:
    fired: list[str] = []
    done = threading.Event()

    def callback(key: str) -> None:
        fired.append(key)
        done.set()

    debouncer = Debouncer(callback)
    for _ in range(5):
        debouncer.poke("a", 0.2)
    assert done.wait(5)
    time.sleep(0.3)
    assert fired == ["a"]
    debouncer.poke("b", 30)
    debouncer.fire("b")
    assert fired == ["a", "b"]
    debouncer.close()


def test_the_plans_tree_costs_one_entry_per_folder_and_follows_moves(
    repo: Path, tmp_path: Path
) -> None:
    """One inotify descriptor for the whole plans tree, an entry per folder (watchdog held a
    watch object and two path maps each: 31 MB with 50,000 plans). Folders made or moved in
    later are watched (their plan files reported), folders moved away are forgotten."""
    for name in ("a", "b", "team/c"):
        (repo / "plans" / name).mkdir(parents=True)
    changes = Changes()
    watcher = RepoWatcher(repo, "plans", changes, quiet=0.2).start()
    try:
        tree = watcher._plans_tree
        assert tree is not None
        assert sorted(tree._paths.values()) == ["", "a", "b", "team", "team/c"]
        changes.drain()
        outside = tmp_path / "outside" / "moved"
        outside.mkdir(parents=True)
        (outside / "PLAN.yml").write_text(PLAN)
        os.replace(outside, repo / "plans" / "team" / "moved")  # a folder moved in, plan inside
        changes.wait_for(lambda r: r.endswith("team/moved/PLAN.yml"))
        (repo / "plans" / "team" / "moved" / "PLAN.yml").write_text(PLAN.replace("y", "z"))
        changes.wait_for(lambda r: r.endswith("team/moved/PLAN.yml"))  # watched from now on
        os.replace(repo / "plans" / "team", tmp_path / "team")  # moved away: forgotten
        changes.wait_for(lambda r: r.endswith("plans/team"))
        wait_until_true(lambda: sorted(tree._paths.values()) == ["", "a", "b"])
    finally:
        watcher.stop()


def wait_until_true(check: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def test_a_thousand_keys_share_one_timer_thread() -> None:
    """A pull of a thousand plans pokes a thousand keys: each is reported once, after its
    quiet period, and no poke starts a thread of its own."""
    reported: list[str] = []
    done = threading.Event()

    def report(key: str) -> None:
        reported.append(key)
        if len(reported) == 1000:
            done.set()

    debouncer = Debouncer(report)
    before = threading.active_count()
    try:
        for i in range(1000):
            debouncer.poke(f"k{i}", 0.2)
            debouncer.poke(f"k{i}", 0.3)  # poked again: still one report
        assert threading.active_count() <= before + 1
        debouncer.poke("late", 30)
        debouncer.cancel("late")
        debouncer.poke("soon", 0.01)  # due before the others: reported first
        assert done.wait(30)
        time.sleep(0.5)
        assert reported[0] == "soon"
        assert sorted(reported[1:]) == sorted(f"k{i}" for i in range(1000))
    finally:
        debouncer.close()
