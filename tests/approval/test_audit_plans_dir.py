"""A ``plans_dir`` change (docs/operations.md: a restart) and what reads history across it
(round 125, atk125p ``plans-dir-change-splits-audit``): the audit read ONE plans folder for
the whole history (a fresh clone the first record's, ``--config`` today's), so the runs under
the other folder were missing, the controller's own outcomes there flagged, and a forged
status under the old folder before the change unflagged. Each recorded plans folder is now
read from the start of history to the record that replaced it (today's to the end), as the
controller, which rebuilds its index on the change, and ``check`` read it; ``status`` shows
today's folder only.

Real repos, the real ``plangate run --once``, ``status`` and ``audit`` in subprocesses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.gitenv import AGENT, ALICE, BOT, MALLORY, commit_all, git, run_cli
from tests.support.gitkit import PLAN, edit_status

CONFIG = """\
repo: {repo}
state_dir: {state}
plans_dir: {folder}
approval:
  approvers: ["alice@example.com"]
tools:
  greet: {{kind: echo}}
"""


def set_folder(repo: Path, folder: str) -> Path:
    config = repo.parent / "plangate.yml"
    state = repo.parent / "state"
    config.write_text(CONFIG.format(repo=repo, state=state, folder=folder))
    return config


def write(repo: Path, plan: str) -> None:
    """A plan of its own content (a copy of a run one is refused E_ALREADY_EXECUTED)."""
    path = repo / plan / "PLAN.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    assert "Say hello to the world" in PLAN
    path.write_text(PLAN.replace("Say hello to the world", f"Say hello to {plan}"))


def approve(repo: Path, plan: str) -> None:
    path = repo / plan / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))
    commit_all(repo, f"approve {plan}", ALICE)


def run(config: Path, *flags: str) -> None:
    result = run_cli("run", "--once", *flags, "--config", str(config), timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]


def audit(cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = run_cli("audit", "--json", *args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode in (0, 1), result.stderr[-2000:]
    return result.returncode, json.loads(result.stdout)


def audits(repo: Path, tmp_path: Path) -> dict[str, tuple[int, dict[str, Any]]]:
    """The fresh clone's audit (git alone), ``audit --config`` (today's config, with the
    controller's record of its commits) and the same config without that record."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    config = repo.parent / "plangate.yml"
    bare = tmp_path / "bare.yml"
    bare.write_text(config.read_text().replace(f"{repo.parent / 'state'}", str(tmp_path / "none")))
    return {
        "fresh": audit(clone),
        "config": audit(tmp_path, "--config", str(config)),
        "bare": audit(tmp_path, "--config", str(bare)),
    }


def valid_runs(report: dict[str, Any]) -> list[str]:
    return sorted(e["plan"] for e in report["executions"] if e["approval_valid"])


def ran_in(repo: Path, plan: str, config: Path) -> None:
    """``plan`` written by the agent, frozen, approved by Alice and run."""
    write(repo, plan)
    commit_all(repo, f"agent: {plan}", AGENT)
    run(config)
    approve(repo, plan)
    run(config)
    assert f"plangate: complete {plan}" in git(repo, "log", "--format=%s")


def test_every_run_under_either_folder_is_audited_valid(repo: Path, tmp_path: Path) -> None:
    ran_in(repo, "plans/p1", set_folder(repo, "plans"))
    config = set_folder(repo, "ops")
    write(repo, "ops/o1")  # written before the controller restarts with the new folder
    commit_all(repo, "agent: ops/o1", AGENT)
    run(config)
    approve(repo, "ops/o1")
    run(config)
    for name, (code, report) in audits(repo, tmp_path).items():
        assert valid_runs(report) == ["ops/o1", "plans/p1"], (name, report["executions"])
        assert (code, report["findings"]) == (0, []), name
        hashes = [p["hash"] for p in report["policies"]]
        runs = {e["plan"]: e["policy_hash"] for e in report["executions"]}
        assert runs == {"plans/p1": hashes[0], "ops/o1": hashes[1]}, name


def test_a_forged_status_in_the_old_folder_is_flagged_only_while_it_was_read(
    repo: Path, tmp_path: Path
) -> None:
    """Before the change the controller read ``plans/``: Mallory's ``completed`` there is
    flagged by both audits. After it, ``plans/`` is a folder like any other (the controller
    no longer reads it): her second one is no finding, and ``status`` lists none of it."""
    config = set_folder(repo, "plans")
    write(repo, "plans/p2")
    write(repo, "plans/p3")
    commit_all(repo, "agent: plans", AGENT)
    run(config)
    edit_status(repo, "p2", "completed")
    before = commit_all(repo, "mallory: p2 is done", MALLORY)
    run(config)
    config = set_folder(repo, "ops")
    run(config)
    edit_status(repo, "p3", "completed")
    commit_all(repo, "mallory: p3 is done", MALLORY)
    run(config)
    for name, (code, report) in audits(repo, tmp_path).items():
        flagged = [(f["kind"], f["plan"], f["commit"]) for f in report["findings"]]
        assert (code, flagged) == (1, [("illegal", "plans/p2", before)]), (name, flagged)
    result = run_cli("status", "--json", "--config", str(config))
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout) == [], result.stdout  # today's folder holds no plan


def test_a_folder_back_in_force_is_read_to_the_end(repo: Path, tmp_path: Path) -> None:
    """``plans`` -> ``ops`` -> ``plans``: a run in each stretch, each audited valid by the
    policy recorded for it."""
    ran_in(repo, "plans/p1", set_folder(repo, "plans"))
    ran_in(repo, "ops/o1", set_folder(repo, "ops"))
    ran_in(repo, "plans/p2", set_folder(repo, "plans"))
    for name, (code, report) in audits(repo, tmp_path).items():
        assert valid_runs(report) == ["ops/o1", "plans/p1", "plans/p2"], (name, report)
        assert (code, report["findings"]) == (0, []), name


def copy_of_run(repo: Path, source: str, plan: str) -> None:
    """The agent's copy of ``source``'s frozen version at ``plan``, as written before it ran."""
    frozen = git(repo, "show", f"HEAD:{source}/PLAN.yml")
    start = frozen.index("\nexecution:") if "\nexecution:" in frozen else len(frozen)
    copy = frozen[:start].replace("status: completed", "status: pending_approval", 1)
    (repo / plan).mkdir(parents=True)
    (repo / plan / "PLAN.yml").write_text(copy if copy.endswith("\n") else copy + "\n")
    commit_all(repo, f"agent: {plan}, a copy", AGENT)


def test_a_copy_under_the_new_folder_never_runs_again(repo: Path, tmp_path: Path) -> None:
    """A controller given a new state directory AND the new folder at once (its record of
    what it started is gone, and its index reads ``ops/`` alone) is asked to run a copy of
    ``plans/p1``'s frozen version under ``ops/``. A version runs at most once (SPEC §15):
    the index reads the starts made under every folder the controller recorded, each in its
    stretch of history, so the copy is refused ``E_ALREADY_EXECUTED`` and never starts;
    ``check`` predicts it, and both audits find the one run valid and nothing else.
    (Before the fix the copy ran again, flagged ``started-twice`` by the audit only.)"""
    ran_in(repo, "plans/p1", set_folder(repo, "plans"))
    config = set_folder(repo, "ops")
    config.write_text(config.read_text().replace("/state\n", "/state2\n"))
    copy_of_run(repo, "plans/p1", "ops/c1")
    run(config, "--take-over")  # the old state is lost for good (docs/operations.md)
    approve(repo, "ops/c1")
    predicted = run_cli(
        "check", "--config", str(config), "--base", "HEAD~1", "--head", "HEAD",
        "--as", "alice@example.com", "--format", "json", cwd=repo,
    )  # fmt: skip
    assert "Traceback" not in predicted.stderr, predicted.stderr[-2000:]
    assert "E_ALREADY_EXECUTED" in predicted.stdout, predicted.stdout[-2000:]
    run(config)
    subjects = git(repo, "log", "--format=%s")
    assert "plangate: start ops/c1" not in subjects, subjects
    shown = run_cli("status", "--json", "--config", str(config))
    rows = {row["plan"]: row for row in json.loads(shown.stdout)}
    assert "E_ALREADY_EXECUTED" in json.dumps(rows["ops/c1"]), rows["ops/c1"]
    for name, (code, report) in audits(repo, tmp_path).items():
        runs = {e["plan"]: (e["approval_valid"], e["code"]) for e in report["executions"]}
        assert runs == {"plans/p1": (True, None)}, (name, runs)
        assert (code, report["findings"]) == (0, []), (name, report["findings"])


def test_a_copy_under_the_new_folder_with_the_old_state_never_runs_again(
    repo: Path, tmp_path: Path
) -> None:
    """The same copy with the state directory kept: the index is rebuilt for the new folder
    and ``executed.jsonl`` still holds the version; refused alike."""
    ran_in(repo, "plans/p1", set_folder(repo, "plans"))
    config = set_folder(repo, "ops")
    copy_of_run(repo, "plans/p1", "ops/c1")
    run(config)
    approve(repo, "ops/c1")
    run(config)
    assert "plangate: start ops/c1" not in git(repo, "log", "--format=%s")


def test_a_start_under_the_old_folder_after_its_stretch_counts_for_nothing(
    repo: Path, tmp_path: Path
) -> None:
    """Only the stretch a folder was in force is read for its starts: a commit under the
    controller's name, sealed-shaped, that 'starts' a pending plan's version under the old
    folder AFTER the change (anyone who can push may write one) does not keep that version
    from running under the new folder."""
    ran_in(repo, "plans/p1", set_folder(repo, "plans"))
    config = set_folder(repo, "ops")
    config.write_text(config.read_text().replace("/state\n", "/state2\n"))
    write(repo, "ops/o2")
    commit_all(repo, "agent: ops/o2", AGENT)
    run(config, "--take-over")
    frozen = git(repo, "show", "HEAD:ops/o2/PLAN.yml")
    digest = next(
        line.split()[-1] for line in frozen.splitlines() if line.strip().startswith("hash:")
    )
    (repo / "plans/p9").mkdir(parents=True)
    (repo / "plans/p9/PLAN.yml").write_text(frozen.replace("pending_approval", "executing", 1))
    forged = (
        "plangate: start plans/p9\n\nPlan-Hash: " + digest + "\nPlan-Status: executing\n"
        "Controller-Seal: " + "ab" * 32 + "\n"
    )
    commit_all(repo, forged, BOT)
    approve(repo, "ops/o2")
    run(config)
    assert "plangate: complete ops/o2" in git(repo, "log", "--format=%s")
