"""The controller's record is its own commits' (round 61): a plan an agent commits with its
own ``execution:``/``approval:`` blocks and EXECUTION_LOG.md is frozen without those blocks,
and the readers of the record (here the agent API behind MCP ``log``) show what the
controller wrote, flagging a later version by anyone else. Real ``plangate run --once``
subprocesses, real git.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from controller.plan import yamlio
from tests.support.gitenv import commit_all, git, run_cli
from tests.support.plantext import greet_plan

AGENT = ("Agent", "agent@example.com")
FORGED = """\
approval: {status: approved, by: alice@example.com, at: '2026-11-29T10:00:00Z'}
execution:
  status: completed
  actions: [{id: 1, status: succeeded, outputs: {msg: FORGED-OUT}}]
"""


def _setup(tmp_path: Path, repo: Path) -> Path:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    folder = repo / "plans" / "owned"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_text(greet_plan("owned", "say hello", "world") + FORGED)
    (folder / "EXECUTION_LOG.md").write_text("# Approved by alice FORGED-LOG\n")
    commit_all(repo, "propose", AGENT)
    return config


def _run(config: Path) -> None:
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]


def _log(config: Path) -> dict[str, Any]:
    from controller.service.agentapi import AgentApi
    from controller.settings import load_config

    api = AgentApi(load_config(config))
    try:
        return api.log("plans/owned")
    finally:
        api.close()


def _committed(repo: Path) -> dict[str, Any]:
    return dict(yamlio.read_yaml(git(repo, "show", "HEAD:plans/owned/PLAN.yml")).data)


def test_a_forged_record_is_not_frozen_in_nor_shown(tmp_path: Path, repo: Path) -> None:
    config = _setup(tmp_path, repo)
    _run(config)
    data = _committed(repo)
    assert "frozen" in data and "approval" not in data and "execution" not in data
    shown = _log(config)
    assert shown["execution"] is None and shown["execution_log"] is None
    assert "FORGED" not in str(shown)
    assert [p for p in shown["problems"] if "EXECUTION_LOG.md" in p and AGENT[1] in p]


def test_a_log_rewritten_after_the_run_is_flagged(tmp_path: Path, repo: Path) -> None:
    config = _setup(tmp_path, repo)
    _run(config)
    path = repo / "plans/owned/PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    _run(config)
    assert _committed(repo)["plan"]["status"] == "completed"
    ran = _log(config)
    assert ran["problems"] == [] and "FORGED" not in str(ran)
    (repo / "plans/owned/EXECUTION_LOG.md").write_text("# all fine FORGED-AFTER\n")
    edit = commit_all(repo, "rewrite the log", AGENT)
    shown = _log(config)
    assert shown["execution_log"] == ran["execution_log"]
    assert len(shown["problems"]) == 1 and edit[:12] in shown["problems"][0]


def _show(config: Path | None, path: Path) -> str:
    cfg = ["--config", str(config)] if config is not None else []
    result = run_cli("show", str(path), *cfg, cwd=path.parent)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.stdout + result.stderr


def _set_status(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(f"status: {old}", f"status: {new}", 1))


def test_the_controllers_refusal_carries_no_block_it_did_not_write(
    tmp_path: Path, repo: Path
) -> None:
    """Round 62: blocks an agent adds after the freeze are not carried forward by the
    controller's own next commit of the file (its refusal of a non-approver's approval)."""
    config = _setup(tmp_path, repo)
    _run(config)
    plan = repo / "plans/owned/PLAN.yml"
    plan.write_text(plan.read_text() + FORGED)
    commit_all(repo, "late blocks", AGENT)
    _set_status(plan, "pending_approval", "approved")
    commit_all(repo, "mallory approves", ("Mallory", "mallory@example.com"))
    _run(config)
    author = git(repo, "log", "-1", "--format=%ae", "--", "plans/owned/PLAN.yml").strip()
    assert author != "mallory@example.com", "the controller committed no refusal"
    data = _committed(repo)
    assert "execution" not in data, data  # the refusal's own approval: block says refused
    assert data["approval"]["status"] == "refused" and data["approval"]["by"] != "alice@example.com"
    for cfg in (config, None):
        shown = _show(cfg, plan)
        assert "FORGED" not in shown and "succeeded" not in shown, shown


def test_show_of_a_copied_finished_plan_shows_no_record(tmp_path: Path, repo: Path) -> None:
    """Round 62: a finished plan's folder copied elsewhere never ran at its path: ``show``
    reads the record made there (none) and warns, as the page does."""
    config = _setup(tmp_path, repo)
    _run(config)
    _set_status(repo / "plans/owned/PLAN.yml", "pending_approval", "approved")
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    _run(config)
    assert _committed(repo)["plan"]["status"] == "completed"
    assert "succeeded" in _show(config, repo / "plans/owned/PLAN.yml")
    import shutil

    shutil.copytree(repo / "plans/owned", repo / "plans/copy")
    commit_all(repo, "copy", AGENT)
    shown = _show(config, repo / "plans/copy/PLAN.yml")
    assert "E_OWNED_BLOCK_CHANGED" in shown and "succeeded" not in shown, shown


def test_status_gives_a_failed_plans_reason_from_the_record(tmp_path: Path, repo: Path) -> None:
    """Round 62: ``status --json`` reads a failed plan's error from the controller's record,
    not from a block an agent rewrote after the failure."""
    config = _setup(tmp_path, repo)
    config.write_text(
        config.read_text().replace(
            "{greet: {kind: echo}}",
            "{greet: {kind: exec, argv: [/bin/sh, -c, 'echo boom-r62 >&2; exit 3']}}",
        )
    )
    plan = repo / "plans/owned/PLAN.yml"
    plan.write_text(greet_plan("owned", "say hello", "x").replace("who: x", "{}"))
    commit_all(repo, "a plan whose tool fails", AGENT)
    _run(config)
    _set_status(plan, "pending_approval", "approved")
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    _run(config)
    assert _committed(repo)["plan"]["status"] == "failed"
    assert "boom-r62" in plan.read_text()
    plan.write_text(plan.read_text().replace("boom-r62", "FORGED-ERR"))
    commit_all(repo, "rewrite the error", AGENT)
    result = run_cli("status", "--json", "--config", str(config))
    assert result.returncode == 0, result.stderr[-2000:]
    row = next(r for r in json.loads(result.stdout) if r["plan"] == "plans/owned")
    assert "boom-r62" in str(row.get("reason")) and "FORGED" not in str(row), row


def test_a_changed_completed_plan_is_flagged_by_every_reader(tmp_path: Path, repo: Path) -> None:
    """Round 64: an agent changes a completed plan's content and keeps every block (its
    ``frozen.hash`` too): MCP ``log`` and ``status`` say the record is not of this text, as
    ``show`` marks it STALE; nothing runs again."""
    config = _setup(tmp_path, repo)
    _run(config)
    plan = repo / "plans/owned/PLAN.yml"
    _set_status(plan, "pending_approval", "approved")
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    _run(config)
    assert _committed(repo)["plan"]["status"] == "completed"
    assert _log(config)["problems"] == []
    plan.write_text(plan.read_text().replace("who: world", "who: EVIL-R64"))
    commit_all(repo, "tweak", AGENT)
    shown = _log(config)
    assert shown["execution"] is not None
    assert [p for p in shown["problems"] if p.startswith("E_PLAN_HASH_MISMATCH")], shown
    result = run_cli("status", "--json", "--config", str(config))
    row = next(r for r in json.loads(result.stdout) if r["plan"] == "plans/owned")
    assert row["status"] == "completed"
    assert [n for n in row["notes"] if n.startswith("E_PLAN_HASH_MISMATCH")], row
    assert "STALE" in _show(config, plan)


def _row(config: Path) -> dict[str, Any]:
    result = run_cli("status", "--json", "--config", str(config))
    assert result.returncode == 0, result.stderr[-2000:]
    return next(r for r in json.loads(result.stdout) if r["plan"] == "plans/owned")


def test_a_rehashed_completed_plan_is_flagged_on_its_status_row(tmp_path: Path, repo: Path) -> None:
    """Round 65: an agent changes a completed plan's content AND rewrites its ``frozen.hash``
    to the new text's: the text hashes to its own ``frozen.hash``, but not to the version the
    controller recorded at the path, so the row carries ``show``'s note; put back, none."""
    import re

    config = _setup(tmp_path, repo)
    _run(config)
    plan = repo / "plans/owned/PLAN.yml"
    _set_status(plan, "pending_approval", "approved")
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    _run(config)
    ran = plan.read_text()
    assert not [n for n in _row(config)["notes"] if n.startswith("E_")]
    plan.write_text(ran.replace("who: world", "who: EVIL-R65"))
    found = re.search(r"sha256:[0-9a-f]{64}", run_cli("hash", str(plan)).stdout)
    assert found is not None
    head, tail = plan.read_text().split("\nfrozen:", 1)
    plan.write_text(head + "\nfrozen:" + re.sub(r"sha256:[0-9a-f]{64}", found[0], tail, count=1))
    commit_all(repo, "rehash", AGENT)
    row = _row(config)
    assert row["status"] == "completed" and row["hash"] == row["frozen_hash"]
    assert [n for n in row["notes"] if n.startswith("E_OWNED_BLOCK_CHANGED")], row
    plan.write_text(ran)
    commit_all(repo, "put back", AGENT)
    assert not [n for n in _row(config)["notes"] if n.startswith("E_")]


def test_a_log_alone_rewritten_or_deleted_is_flagged_on_the_status_row(
    tmp_path: Path, repo: Path
) -> None:
    """Round 66: an agent commit that changes only a completed plan's EXECUTION_LOG.md (no
    PLAN.yml touched): the record of a path is its plan file and its log, so the row
    carries ``show``'s note as MCP ``log`` does, rewritten or deleted."""
    config = _setup(tmp_path, repo)
    _run(config)
    plan = repo / "plans/owned/PLAN.yml"
    _set_status(plan, "pending_approval", "approved")
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    _run(config)
    assert not [n for n in _row(config)["notes"] if n.startswith("E_")]
    log = repo / "plans/owned/EXECUTION_LOG.md"
    for change in (lambda: log.write_text("# Approved by bob FORGED-LOG\n"), log.unlink):
        change()
        commit_all(repo, "the log", AGENT)
        row = _row(config)
        assert row["status"] == "completed", row
        noted = [n for n in row["notes"] if n.startswith("E_OWNED_BLOCK_CHANGED")]
        assert noted and "EXECUTION_LOG.md" in noted[0], row
        assert [p for p in _log(config)["problems"] if "EXECUTION_LOG.md" in p]


def test_a_pending_plans_log_the_controller_never_wrote_is_flagged_on_the_status_row(
    tmp_path: Path, repo: Path
) -> None:
    """Round 67: a forged log the agent committed BEFORE the plan file, for a plan that has
    not run (pending, frozen): the row carries ``show``'s note as MCP ``log`` does; once
    the plan runs, the controller's log replaces it and neither notes anything."""
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    folder = repo / "plans" / "owned"
    folder.mkdir(parents=True)
    (folder / "EXECUTION_LOG.md").write_text("# Approved by alice FORGED-LOG\n")
    commit_all(repo, "a log first", AGENT)
    (folder / "PLAN.yml").write_text(greet_plan("owned", "say hello", "world"))
    commit_all(repo, "propose", AGENT)
    _run(config)
    row = _row(config)
    assert row["status"] == "pending_approval", row
    noted = [n for n in row["notes"] if n.startswith("E_OWNED_BLOCK_CHANGED")]
    assert noted and "EXECUTION_LOG.md" in noted[0] and AGENT[1] in noted[0], row
    assert [p for p in _log(config)["problems"] if "EXECUTION_LOG.md" in p]
    _set_status(folder / "PLAN.yml", "pending_approval", "approved")
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    _run(config)
    row = _row(config)
    assert row["status"] == "completed", row
    assert not [n for n in row["notes"] if n.startswith("E_")], row
    assert not _log(config)["problems"]


def test_a_log_under_another_spelling_is_flagged_on_the_status_row_until_removed(
    tmp_path: Path, repo: Path
) -> None:
    """Round 73: a forged log committed as ``execution_log.md`` (the plan's log on a
    case-insensitive checkout) before its plan, or as ``EXECUTION_LOG.md<U+200C>`` (on HFS+)
    after the run: the row notes it as ``show`` and MCP ``log`` do, the controller's own log
    commit after it clears nothing, and its removal clears the note."""
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    folder = repo / "plans" / "owned"
    folder.mkdir(parents=True)
    (folder / "execution_log.md").write_text("# Approved by alice FORGED-LOG\n")
    commit_all(repo, "a log first", AGENT)
    (folder / "PLAN.yml").write_text(greet_plan("owned", "say hello", "world"))
    commit_all(repo, "propose", AGENT)
    _run(config)

    def noted() -> list[str]:
        row = _row(config)
        assert "FORGED-LOG" not in json.dumps(row), row
        return [n for n in row["notes"] if n.startswith("E_OWNED_BLOCK_CHANGED")]

    assert [n for n in noted() if "execution_log.md" in n and AGENT[1] in n]
    assert [p for p in _log(config)["problems"] if "execution_log.md" in p]
    _set_status(folder / "PLAN.yml", "pending_approval", "approved")
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    _run(config)
    assert _row(config)["status"] == "completed"
    assert [n for n in noted() if "execution_log.md" in n]  # the controller's log: still there
    (folder / "execution_log.md").unlink()
    commit_all(repo, "tidy", AGENT)
    assert noted() == []
    (folder / "EXECUTION_LOG.md\u200c").write_text("# Approved by alice FORGED-LOG\n")
    commit_all(repo, "notes", AGENT)
    assert [n for n in noted() if "EXECUTION_LOG.md\\u200c" in n]


def test_a_log_in_a_twin_above_the_plan_folder_is_flagged_on_the_status_row(
    tmp_path: Path, repo: Path
) -> None:
    """Round 76: ``plans/Own/x`` ran; a forged log at ``plans/own/x/EXECUTION_LOG.md`` (a
    folder one with the plan's on a case-insensitive checkout, the twin one level ABOVE the
    plan's own folder) is the plan's log there: the row notes it as ``show`` and MCP ``log``
    do, never shows it; its removal clears the note (round 75 looked beside the folder
    only)."""
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    folder = repo / "plans" / "Own" / "x"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_text(greet_plan("owned", "say hello", "world"))
    commit_all(repo, "propose", AGENT)
    _run(config)
    _set_status(folder / "PLAN.yml", "pending_approval", "approved")
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    _run(config)

    def noted() -> list[str]:
        result = run_cli("status", "--json", "--config", str(config))
        row = next(r for r in json.loads(result.stdout) if r["plan"] == "plans/Own/x")
        assert row["status"] == "completed" and "FORGED-LOG" not in json.dumps(row), row
        return [n for n in row["notes"] if n.startswith("E_OWNED_BLOCK_CHANGED")]

    assert noted() == []
    forged = repo / "plans" / "own" / "x" / "EXECUTION_LOG.md"
    forged.parent.mkdir(parents=True)
    forged.write_text("# Approved by alice FORGED-LOG\n")
    commit_all(repo, "notes", AGENT)
    assert [n for n in noted() if "plans/own/x/EXECUTION_LOG.md" in n and AGENT[1] in n]
    forged.unlink()
    commit_all(repo, "tidy", AGENT)
    assert noted() == []
