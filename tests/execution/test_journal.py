"""The journal: durable appends, torn-record recovery, exclusive use, replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.errors import PlangateError
from controller.execution.journal import Journal, journal_path, replay

HASH = "sha256:" + "ab" * 32


def test_path_is_keyed_by_plan_and_hash(tmp_path: Path) -> None:
    one = journal_path(tmp_path, "plans/a/b", HASH)
    other = journal_path(tmp_path, "plans/a/b", "sha256:" + "cd" * 32)
    assert one.parent == other.parent and one != other
    assert one.parent.parent == tmp_path / "journal"
    assert journal_path(tmp_path, "plans/a-b", HASH).parent != one.parent


def test_records_survive_reopening(tmp_path: Path) -> None:
    path = journal_path(tmp_path, "plans/x", HASH)
    with Journal(path) as journal:
        journal.append({"t": "start", "id": 1, "attempt": 1})
        journal.append({"t": "end", "id": 1, "attempt": 1, "status": "succeeded"})
    with Journal(path) as journal:
        assert [r["t"] for r in journal.records] == ["start", "end"]


def test_torn_last_record_is_dropped_and_appends_stay_aligned(tmp_path: Path) -> None:
    path = journal_path(tmp_path, "plans/x", HASH)
    with Journal(path) as journal:
        journal.append({"t": "start", "id": 1, "attempt": 1})
    with open(path, "a") as handle:
        handle.write('{"t":"end","id":1,"sta')  # the process died mid-write
    with Journal(path) as journal:
        assert len(journal.records) == 1
        journal.append({"t": "end", "id": 1, "attempt": 1, "status": "succeeded"})
    lines = path.read_text().splitlines()
    assert [json.loads(line)["t"] for line in lines] == ["start", "end"]


def test_damaged_middle_line_is_reported(tmp_path: Path) -> None:
    path = journal_path(tmp_path, "plans/x", HASH)
    path.parent.mkdir(parents=True)
    path.write_text('{"t":"run"}\nnot json\n{"t":"run"}\n')
    with pytest.raises(PlangateError) as info:
        Journal(path).open()
    assert "line 2" in info.value.message


def test_second_user_is_locked_out(tmp_path: Path) -> None:
    path = journal_path(tmp_path, "plans/x", HASH)
    with Journal(path):
        with pytest.raises(PlangateError) as info:
            Journal(path).open()
        assert info.value.code == "E_LOCKED"
    with Journal(path):
        pass  # released on close


def test_replay_folds_attempts_gates_and_ends() -> None:
    state = replay(
        [
            {"t": "run", "at": "T0"},
            {"t": "start", "id": 1, "attempt": 1},
            {"t": "end", "id": 1, "attempt": 1, "status": "succeeded"},
            {"t": "gate", "id": 2},
            {"t": "start", "id": 2, "attempt": 1},
            {"t": "end", "id": 2, "attempt": 1, "status": "failed", "retry": True},
            {"t": "start", "id": 2, "attempt": 2},
            {"t": "start", "id": 3, "attempt": 1},
        ]
    )
    assert state.first_run_at == "T0" and state.gates == {2}
    one, two, three = (state.actions[i] for i in (1, 2, 3))
    assert one.done and one.status == "succeeded"
    assert two.open_start and two.status == "running" and two.round_attempts == 2
    assert two.attempts == 2 and not two.done
    assert three.open_start


def test_every_record_is_on_disk_before_the_next_tool_call_and_the_return(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Write-ahead: whatever the journal holds when a tool is spawned, and when the run
    returns, was fdatasynced; one fdatasync per action (its start) and one for the outcome."""
    import os
    import sys

    from controller.execution import journal as journal_mod
    from controller.execution.executor import Engine
    from controller.execution.tools import process
    from tests.support.executor_kit import make_plan, run

    synced: dict[int, int] = {}  # fd -> its size at its last fdatasync
    syncs: list[int] = []
    spawns: list[tuple[int, int]] = []  # (journal size, size synced) at each tool spawn
    real_sync, real_spawn = journal_mod._SYNC, process._spawn

    def sync(fd: int) -> None:
        real_sync(fd)
        synced[fd] = os.fstat(fd).st_size
        syncs.append(fd)

    def sizes() -> tuple[int, int]:
        (fd,) = synced  # one run, one journal
        return os.fstat(fd).st_size, synced[fd]

    def spawn(*args: object, **kw: object) -> object:
        spawns.append(sizes())
        return real_spawn(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(journal_mod, "_SYNC", sync)
    monkeypatch.setattr(process, "_spawn", spawn)
    tools = {"py": {"kind": "exec", "argv": [sys.executable, "-c", "print('{}')"]}}
    config, plan_file = make_plan(tmp_path, [{"id": i, "tool": "py"} for i in (1, 2, 3, 4)], tools)
    assert run(Engine(config), plan_file).status == "completed"
    assert len(spawns) == 4 and all(size == done for size, done in spawns), spawns
    (journal,) = (tmp_path / "state" / "journal").rglob("*.jsonl")
    assert journal.stat().st_size == next(iter(synced.values()))  # all on disk at the return
    kinds = [r["t"] for r in journal_mod.read_records(journal)]
    assert kinds.count("end") == 4 and kinds[-1] == "outcome"
    assert len(syncs) == 4 + 1, kinds  # each action's start, and the outcome
