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
