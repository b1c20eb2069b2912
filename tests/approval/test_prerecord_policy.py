"""History before the controller's first policy record is judged by that record, the config
the controller had then, by every reader: the controller, ``plangate audit`` with or without
a config, and ``check`` (round 128, ``pre-record-withdrawal-judged-by-todays-config``,
``audit-config-reads-history-by-todays-limits``). Today's config differing from the record
is a note, not a finding, and never a verdict on the past.

Real repos, the real ``plangate run --once``, ``audit`` and ``check`` in subprocesses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.gitenv import AGENT, ALICE, BOB, MALLORY, commit_all, git, run_cli
from tests.support.gitkit import PLAN, approve, edit_status, head_plan, write_plan

#: A plan file over 2,000 bytes (a long comment: the file's bytes count).
BIG = PLAN + "# " + "x" * 2100 + "\n"


def write_config(repo: Path, approvers: list[str], extra: str = "") -> Path:
    config = repo.parent / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {repo.parent / 'state'}\n"
        f"approval:\n  approvers: {json.dumps(approvers)}\n"
        "tools:\n  greet: {kind: echo}\n" + extra
    )
    return config


def run(config: Path) -> None:
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]


def audit(cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = run_cli("audit", "--json", *args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode in (0, 1), result.stderr[-2000:]
    return result.returncode, json.loads(result.stdout)


def fresh_audit(repo: Path) -> tuple[int, dict[str, Any]]:
    clone = repo.parent / "clone"
    git(repo.parent, "clone", "-q", str(repo), str(clone))
    return audit(clone)


def valid_runs(report: dict[str, Any], plan: str) -> list[bool]:
    return [e["approval_valid"] for e in report["executions"] if e["plan"] == plan]


def test_a_rejection_before_the_first_record_is_judged_by_it_after_an_approver_is_added(
    repo: Path,
) -> None:
    """Mallory's rejection before the controller's first pass withdraws nothing (she is no
    approver then); adding her later changes no verdict on the run that followed."""
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    edit_status(repo, "greet", "rejected")
    commit_all(repo, "reject greet", MALLORY)
    config = write_config(repo, [ALICE[1]])
    run(config)
    approve(repo)
    run(config)
    assert head_plan(repo)["plan"]["status"] == "completed"
    # her rejection is flagged as the controller ignored it, by every audit alike
    ignored = [("plans/greet", "withdraw-not-allowed")]
    _, report = fresh_audit(repo)
    assert valid_runs(report, "plans/greet") == [True], report["findings"]
    assert [(f["plan"], f["kind"]) for f in report["findings"]] == ignored
    config = write_config(repo, [ALICE[1], MALLORY[1]])
    for when in ("edited", "recorded"):
        _, report = audit(repo, "--config", str(config))
        assert valid_runs(report, "plans/greet") == [True], (when, report["findings"])
        assert [(f["plan"], f["kind"]) for f in report["findings"]] == ignored, when
        if when == "edited":
            assert any(n["kind"] == "config-differs" for n in report["notes"]), report["notes"]
            run(config)  # the restart records the new config


def test_a_lowered_size_limit_leaves_the_runs_before_it_valid(repo: Path) -> None:
    """A plan of 2,100+ bytes frozen, approved and run under the default limit; the limit is
    lowered to 2,000: ``audit --config`` reads each version by the limit recorded for it."""
    write_plan(repo, text=BIG)
    commit_all(repo, "add greet", AGENT)
    config = write_config(repo, [ALICE[1]])
    run(config)
    approve(repo)
    run(config)
    assert head_plan(repo)["plan"]["status"] == "completed"
    config = write_config(repo, [ALICE[1]], "limits: {max_plan_bytes: 2000}\n")
    for when in ("edited", "recorded"):
        code, report = audit(repo, "--config", str(config))
        assert valid_runs(report, "plans/greet") == [True], (when, report["findings"])
        assert code == 0 and report["findings"] == [], (when, report["findings"])
        if when == "edited":
            run(config)
    code, report = fresh_audit(repo)
    assert code == 0 and valid_runs(report, "plans/greet") == [True], report["findings"]


def _withdrawn_copy(repo: Path, move: bool) -> tuple[Path, str]:
    """Bob (``*@ops``) rejects ``r1`` before the first pass: it counts. The agent adds a copy
    of its bytes; the operator removes ``*@ops`` (``move``: and moves the plans folder to
    ``ops``, the copy there); Alice approves the copy on a branch ``review``."""
    write_plan(repo, "r1")
    commit_all(repo, "add r1", AGENT)
    edit_status(repo, "r1", "rejected")
    commit_all(repo, "reject r1", BOB)
    run(write_config(repo, [ALICE[1], "*@ops.example.com"]))
    assert head_plan(repo, "r1")["plan"]["status"] == "rejected"
    copy = "ops/r1c" if move else "plans/r1c"
    (repo / copy).mkdir(parents=True)
    (repo / copy / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "a copy of r1", AGENT)
    config = write_config(repo, [ALICE[1]], "plans_dir: ops\n" if move else "")
    run(config)
    git(repo, "switch", "-q", "-c", "review")
    path = repo / copy / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve r1c", ALICE)
    git(repo, "switch", "-q", "main")
    return config, copy


def test_check_predicts_the_refusal_of_a_copy_withdrawn_before_the_first_record(
    repo: Path,
) -> None:
    for move in (False, True):
        root = repo.parent / ("moved" if move else "kept")
        root.mkdir()
        git(repo.parent, "clone", "-q", str(repo), str(root / "repo"))
        here = root / "repo"
        config, copy = _withdrawn_copy(here, move)
        told = run_cli(
            "--config", str(config), "check", "--head", "review", "--as", ALICE[1],
            "--format", "json", cwd=here,
        )  # fmt: skip
        assert told.returncode in (0, 1), told.stderr[-2000:]
        [plan] = [p for p in json.loads(told.stdout)["plans"] if p["plan"] == copy]
        codes = [r.get("code") for r in plan.get("refused") or []]
        assert plan["outcome"] == "refuse" and "E_VERSION_WITHDRAWN" in codes, (move, plan)
        git(here, "merge", "-q", "--no-ff", "-m", "merge review", "review")
        run(config)
        text = git(here, "show", f"HEAD:{copy}/PLAN.yml")
        assert "E_VERSION_WITHDRAWN" in text, (move, text)
        code, report = audit(here, "--config", str(config))
        kinds = [(f["plan"], f["kind"]) for f in report["findings"]]
        assert ("plans/r1", "withdraw-not-allowed") not in kinds, (move, kinds)
        assert any(d["plan"] == "plans/r1" for d in report["decisions"]), (move, report)
        assert code == 0, (move, kinds)


def test_a_raised_size_limit_reads_the_plans_after_it_by_the_new_limit(repo: Path) -> None:
    """The first record holds ``max_plan_bytes: 2000``; the limit is raised, and a plan of
    2,100+ bytes is frozen, approved and run under the new one: every audit reads the
    history after the raise by it (the audit read the whole history by its first limit)."""
    config = write_config(repo, [ALICE[1]], "limits: {max_plan_bytes: 2000}\n")
    run(config)
    config = write_config(repo, [ALICE[1]])
    run(config)
    write_plan(repo, text=BIG)
    commit_all(repo, "add greet", AGENT)
    run(config)
    approve(repo)
    run(config)
    assert head_plan(repo)["plan"]["status"] == "completed"
    for code, report in (audit(repo, "--config", str(config)), fresh_audit(repo)):
        assert valid_runs(report, "plans/greet") == [True], report["findings"]
        assert code == 0 and report["findings"] == [], report["findings"]
