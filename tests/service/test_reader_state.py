"""A reader without the state lock (``status``, the MCP server) writes nothing of the
controller's state (round 60: a lockless ``status`` over a forged commit-graph rewrote
``index.sqlite`` and ``memory.sqlite``, and the next pass ran a rejected plan)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from controller.service.statedir import StateDir


def _db(path: Path, value: str) -> sqlite3.Connection:
    """Write ``value``; the connection stays open (as the controller's does)."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
    db.execute("INSERT OR REPLACE INTO meta VALUES('tip', ?)", (value,))
    db.commit()
    return db


def _tip(path: Path) -> str:
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return str(db.execute("SELECT value FROM meta WHERE key='tip'").fetchone()[0])
    finally:
        db.close()


def test_a_reader_sees_the_state_and_writes_only_its_copies(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state").ensure()
    _db(state.index_file, "the controller's")
    _db(state.memory_file, "remembered")
    state.held_file.write_text('{"plans/r": {"commits": ["abc"]}}')
    reader = state.read_only()
    assert reader.index_file != state.index_file and reader.held_file != state.held_file
    assert _tip(reader.index_file) == "the controller's"  # what the controller last saved
    assert _tip(reader.memory_file) == "remembered"
    _db(reader.index_file, "the reader's")  # what a reader's scan would save
    _db(reader.memory_file, "forged")
    reader.held_file.write_text("{}")
    assert _tip(state.index_file) == "the controller's" and _tip(state.memory_file) == "remembered"
    assert "plans/r" in state.held_file.read_text()
    assert reader.journal_dir == state.journal_dir  # the rest is read in place
    scratch = reader.index_file.parent
    reader.release()
    assert not scratch.exists()


def test_a_reader_of_a_closed_index_makes_no_file_beside_it(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state").ensure()
    _db(state.index_file, "saved").close()  # the last connection: the WAL is folded in
    before = sorted(p.name for p in state.path.iterdir())
    reader = state.read_only()
    assert _tip(reader.index_file) == "saved"
    reader.release()
    assert sorted(p.name for p in state.path.iterdir()) == before == ["index.sqlite"]


def test_a_reader_of_a_new_state_dir_starts_empty(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state").ensure()
    reader = state.read_only()
    assert not reader.index_file.exists() and not state.index_file.exists()
    reader.release()
    assert sorted(p.name for p in state.path.iterdir()) == []
