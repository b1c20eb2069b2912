"""A killed controller's host comes back after a rebuilt host ended its run (round 51).

The old controller is killed right after its start commit moved the branch (its journal says
the run started). A second controller on the same repository with a NEW state directory (a
rebuilt host, same identity, started with ``--take-over``: round 70, without it a new state
directory on sealed history refuses) takes the plan over: no journal, so it fails the run
E_ACTION_IN_DOUBT (nothing runs); Alice may then approve a resume, which it runs to
``complete``. The old host then starts again with its own state directory: the branch shows
the run ended (or run again) by commits under the controller's name that it did not make,
so it drops its job (``run_taken_over``): nothing more runs, no second outcome is committed,
and a fresh clone's audit finds no ``outcome-without-start``. An outcome a human forged under
the controller's name stops the run the same way (fails closed).

Real ``plangate run --once`` processes and a real SIGKILL (test_killed_start_gone's lab).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.service.test_killed_start_gone import _Lab
from tests.support.gitenv import ALICE, commit_all, git, identity


def _rebuilt(lab: _Lab) -> Path:
    """The config of a rebuilt host: the same repository and identity, a new state dir."""
    config = lab.tmp / "rebuilt.yml"
    config.write_text(
        lab.config.read_text().replace(
            f"state_dir: {lab.tmp / 'state'}", f"state_dir: {lab.tmp / 'state2'}"
        )
    )
    return config


def _run(config: Path, *options: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", *options, "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stderr


def _status(lab: _Lab) -> str:
    return git(lab.repo, "show", "HEAD:plans/v/PLAN.yml").split("status: ", 1)[1].split()[0]


def _outcomes(lab: _Lab) -> list[str]:
    return [
        s
        for s in lab.subjects()
        if s.startswith(("plangate: complete plans/v", "plangate: fail plans/v"))
    ]


def _killed_then_failed_by_a_rebuilt_host(lab: _Lab) -> Path:
    lab.run(kill_after="plangate: start plans/v")
    assert lab.calls() == []
    git(lab.repo, "reset", "-q", "--hard")  # the kill left the approved file in the tree
    rebuilt = _rebuilt(lab)
    # round 70: a new state directory on sealed history takes it over only when told
    logs = _run(rebuilt, "--take-over") + _run(rebuilt)
    assert lab.calls() == [], logs[-6000:]  # the journal is missing: nothing runs
    assert _status(lab) == "failed"
    assert _outcomes(lab) == ["plangate: fail plans/v"]
    return rebuilt


def _audit_clean(lab: _Lab) -> None:
    findings = str(lab.audit().get("findings"))
    assert "outcome-without-start" not in findings, findings
    assert "controller-unexplained" not in findings, findings


def test_the_old_host_back_after_the_rebuilt_hosts_fail_runs_nothing(
    tmp_path: Path, repo: Path
) -> None:
    lab = _Lab(tmp_path, repo)
    _killed_then_failed_by_a_rebuilt_host(lab)
    head = git(repo, "rev-parse", "HEAD")
    logs = _run(lab.config) + _run(lab.config)  # the old host comes back
    assert lab.calls() == []  # its journaled run is not taken up again
    assert git(repo, "rev-parse", "HEAD") == head, lab.subjects()[:3]  # nothing committed
    assert _status(lab) == "failed"
    assert "run_taken_over" in logs, logs[-2000:]
    _audit_clean(lab)


def test_the_old_host_back_after_a_resume_completed_runs_nothing_twice(
    tmp_path: Path, repo: Path
) -> None:
    lab = _Lab(tmp_path, repo)
    rebuilt = _killed_then_failed_by_a_rebuilt_host(lab)
    plan = repo / "plans" / "v" / "PLAN.yml"
    plan.write_text(plan.read_text().replace("status: failed", "status: approved"))
    commit_all(repo, "resume v", ALICE)
    _run(rebuilt)
    _run(rebuilt)
    assert lab.calls() == [["v"]]  # the resume ran it
    assert _status(lab) == "completed"
    head = git(repo, "rev-parse", "HEAD")
    logs = _run(lab.config) + _run(lab.config)  # the old host comes back
    assert lab.calls() == [["v"]]  # once
    assert git(repo, "rev-parse", "HEAD") == head, lab.subjects()[:3]
    assert _outcomes(lab) == ["plangate: complete plans/v", "plangate: fail plans/v"]
    assert "run_taken_over" in logs, logs[-2000:]
    _audit_clean(lab)


def test_an_outcome_forged_under_the_controllers_name_stops_the_run(
    tmp_path: Path, repo: Path
) -> None:
    """Fails closed: a human's commit under the controller's name that records an outcome
    of the run after its start drops the job as another host's would (refusing to run on is
    safe; the plan stays as the branch shows it)."""
    lab = _Lab(tmp_path, repo)
    lab.run(kill_after="plangate: start plans/v")
    plan = repo / "plans" / "v" / "PLAN.yml"
    git(repo, "reset", "-q", "--hard")
    plan.write_text(plan.read_text().replace("status: executing", "status: failed"))
    git(repo, "add", "-A")
    git(
        repo,
        "commit",
        "-qm",
        "plangate: fail plans/v",
        env=identity("plangate", "plangate@localhost"),
    )
    logs = _run(lab.config) + _run(lab.config)
    assert lab.calls() == []
    assert "run_taken_over" in logs, logs[-2000:]
    assert _outcomes(lab) == ["plangate: fail plans/v"]


@pytest.mark.parametrize("writes", ["plans/v/EXECUTION_LOG.md", "plans/NOTES.md"])
def test_an_outcome_changing_no_file_of_the_plan_stops_the_run(
    tmp_path: Path, repo: Path, writes: str
) -> None:
    """An outcome commit under the controller's name that changes no file of the plan
    (only its EXECUTION_LOG.md, or a file beside the plans): the index notes it on the plan
    its message names (``PlanState.foreign_event``) and the check reads it, but round 68's
    one rule (``lifecycle.shows_end``) moves a run on only by an end the plan's file shows:
    the file still says ``executing``, so the trailer is anyone's and the run goes on, its
    action once (it was dropped while the index read nothing: ``executing`` for good)."""
    lab = _Lab(tmp_path, repo)
    lab.run(kill_after="plangate: start plans/v")
    git(repo, "reset", "-q", "--hard")
    (repo / writes).write_text("# the run ended elsewhere\n")
    git(repo, "add", "-A")
    git(
        repo,
        "commit",
        "-qm",
        "plangate: fail plans/v",
        env=identity("plangate", "plangate@localhost"),
    )
    logs = _run(lab.config) + _run(lab.config)
    assert lab.calls() == [["v"]], logs[-2000:]
    assert "run_taken_over" not in logs and lab.status()["plans/v"]["status"] == "completed"


@pytest.mark.parametrize("event", ["complete", "checkpoint"])
def test_progress_forged_under_the_controllers_name_does_not_strand_the_run(
    tmp_path: Path, repo: Path, event: str
) -> None:
    """Round 66: progress of the run (a ``complete``, a ``checkpoint``) needs its journal,
    which no other host has: under the controller's name but not in its record it is anyone's
    commit, and the restarted controller runs the plan from its own start and journal (it
    stayed ``executing`` for good, nothing running)."""
    lab = _Lab(tmp_path, repo)
    lab.run(kill_after="plangate: start plans/v")
    plan = repo / "plans" / "v" / "PLAN.yml"
    git(repo, "reset", "-q", "--hard")
    status = "completed" if event == "complete" else "executing"
    plan.write_text(plan.read_text().replace("status: executing", f"status: {status}"))
    (repo / "plans" / "v" / "NOTES.md").write_text("the run went on elsewhere\n")
    git(repo, "add", "-A")
    git(
        repo,
        "commit",
        "-qm",
        f"plangate: {event} plans/v",
        env=identity("plangate", "plangate@localhost"),
    )
    logs = _run(lab.config) + _run(lab.config)
    assert lab.calls() == [["v"]], logs[-3000:]
    assert "run_taken_over" not in logs
    assert _status(lab) == "completed"
    assert _outcomes(lab)[0] == "plangate: complete plans/v", lab.subjects()[:3]


def _forged(lab: _Lab, event: str, status: str) -> None:
    """After the kill right after the start: ``event`` under the controller's name, the
    file set to ``status``, which the controller's record lacks."""
    plan = lab.repo / "plans" / "v" / "PLAN.yml"
    git(lab.repo, "reset", "-q", "--hard")
    plan.write_text(plan.read_text().replace("status: executing", f"status: {status}"))
    (lab.repo / "plans" / "v" / "NOTES.md").write_text(f"the run was {event}ed elsewhere\n")
    git(lab.repo, "add", "-A")
    git(
        lab.repo,
        "commit",
        "-qm",
        f"plangate: {event} plans/v",
        env=identity("plangate", "plangate@localhost"),
    )


def test_her_resume_goes_on_from_a_forged_fail_that_stopped_the_run(
    tmp_path: Path, repo: Path
) -> None:
    """Round 67: the take-over check drops the run on the forged ``fail``, and the history
    index reads the same entry as the end the branch shows: ``failed``, which her resume
    goes on from (it was refused "from executing", the row ``executing`` for good; the
    burst's ``k-01-resume`` runs the rest of a run whose journal holds its actions)."""
    lab = _Lab(tmp_path, repo)
    lab.run(kill_after="plangate: start plans/v")
    _forged(lab, "fail", "failed")
    logs = _run(lab.config) + _run(lab.config)
    assert lab.calls() == [] and "run_taken_over" in logs, logs[-2000:]
    assert lab.status()["plans/v"]["status"] == "failed"
    plan = repo / "plans" / "v" / "PLAN.yml"
    plan.write_text(plan.read_text().replace("status: failed", "status: approved"))
    commit_all(repo, "resume v", ALICE)
    _run(lab.config)
    _run(lab.config)
    # her resume is taken up (a start of the controller's own); the run was killed right
    # after its first start, so its whole journal (begun by that start, round 68) shows no
    # action ran: her resume runs it once (it had ended E_ACTION_IN_DOUBT, "the journal of
    # this run was lost", with the journal in place)
    assert lab.subjects()[1:3] == ["plangate: start plans/v", "resume v"], lab.subjects()[:4]
    row = lab.status()["plans/v"]
    assert row["status"] == "completed" and lab.calls() == [["v"]], row


def test_a_run_moved_on_by_a_forged_later_start_says_why_and_her_abort_ends_it(
    tmp_path: Path, repo: Path
) -> None:
    """Round 67: a later ``start`` under the controller's name that it did not make drops
    the run; the row says so (it said ``executing``, nothing running or waiting), and her
    abort ends it."""
    lab = _Lab(tmp_path, repo)
    lab.run(kill_after="plangate: start plans/v")
    _forged(lab, "start", "executing")
    _run(lab.config)
    _run(lab.config)
    row = lab.status()["plans/v"]
    assert lab.calls() == [] and row["status"] == "executing", row
    assert "taken over" in str(row["waiting"]) and "aborted" in str(row["waiting"]), row
    plan = repo / "plans" / "v" / "PLAN.yml"
    plan.write_text(plan.read_text().replace("status: executing", "status: aborted"))
    commit_all(repo, "abort v", ALICE)
    _run(lab.config)
    assert lab.calls() == [] and lab.status()["plans/v"]["status"] == "aborted"
