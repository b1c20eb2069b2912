"""The history index across a change of the controller's ``identity`` (round 126, fix127i):
a cold scan (a rebuilt index, the state directory kept) read every commit of the old identity
as a person's, so the controller's own runs before the change showed ``pending_approval``
with ``E_ILLEGAL_TRANSITION`` notes. It follows the identity each recorded policy names, from
the record that names the previous one (``Previous-Identity:``) on, as the audit does.

Real repos, the real ``plangate run --once`` and ``status`` in subprocesses.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.approval.test_audit_identity_change import renamed
from tests.support.gitenv import run_cli


def rows(config: Path) -> dict[str, dict[str, object]]:
    result = run_cli("status", "--json", "--config", str(config))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    return {row["plan"]: row for row in json.loads(result.stdout)}


def test_a_rebuilt_index_reads_the_old_identitys_runs_as_the_controllers(repo: Path) -> None:
    config = renamed(repo)
    before = rows(config)
    for name in ("index.sqlite", "memory.sqlite"):  # a rebuild: the index read from nothing
        (repo.parent / "state" / name).unlink(missing_ok=True)
    after = rows(config)
    for plan in ("plans/p1", "plans/p2", "plans/p3"):
        row = after[plan]
        assert (row["status"], row["problem"]) == ("completed", None), (plan, row["notes"])
        notes = " ".join(str(note) for note in row["notes"])  # type: ignore[attr-defined]
        assert "E_ILLEGAL_TRANSITION" not in notes, (plan, notes)
        assert row["last_event"] == before[plan]["last_event"], plan
