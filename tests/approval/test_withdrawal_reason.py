"""Why a plan was rejected, where a user looks for it: the ``status`` row's ``reason`` and the
audit's decisions (a user's trial: docs/agents.md sent agents to ``status`` for the reason,
and only ``git show`` of the rejection had it); and who wrote a plan that ran, in the audit
beside who approved it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.gitenv import commit_all, git, identity, run_cli
from tests.support.plantext import greet_plan

ALICE = ("Alice", "alice@example.com")


def _config(tmp_path: Path, repo: Path) -> Path:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n  approvers: [alice@example.com]\n"
        "tools:\n  greet: {kind: echo}\n"
    )
    return config


def test_a_rejections_words_are_its_rows_reason_and_the_audits(repo: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, repo)
    for slug in ("said", "silent", "ran"):
        (repo / "plans" / slug).mkdir(parents=True)
        (repo / "plans" / slug / "PLAN.yml").write_text(greet_plan(slug, "greet", '"x"'))
    commit_all(repo, "two plans")
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    alice = identity(*ALICE)
    said = run_cli("reject", "plans/said", "-m", "Not at night:\nwait for the window", cwd=repo,
                   env=alice)  # fmt: skip
    # by hand: the subject is all it says; with only trailers after it, still the subject
    file = repo / "plans" / "silent" / "PLAN.yml"
    file.write_text(file.read_text().replace("status: pending_approval", "status: rejected", 1))
    commit_all(repo, "nope\n\nPlan: plans/silent", ALICE)
    assert said.returncode == 0, said.stderr
    ran = repo / "plans" / "ran" / "PLAN.yml"
    ran.write_text(ran.read_text().replace("status: pending_approval", "status: approved", 1))
    commit_all(repo, "approve", ALICE)
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    commits = {
        slug: git(repo, "log", "-1", "--format=%H", "--", f"plans/{slug}").strip()
        for slug in ("said", "silent")
    }

    status = run_cli("status", "--json", "--config", str(config))
    rows = {row["plan"]: row for row in json.loads(status.stdout)}
    assert rows["plans/said"]["status"] == "rejected"
    assert rows["plans/said"]["reason"] == (
        f"rejected by alice@example.com in {commits['said'][:12]}: "
        "Not at night: wait for the window"
    )
    assert rows["plans/silent"]["reason"] == (
        f"rejected by alice@example.com in {commits['silent'][:12]}: nope"
    )

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    audit = run_cli("audit", "--json", cwd=clone, env={"PLANGATE_CONFIG": ""})
    report = json.loads(audit.stdout)
    decisions = {d["plan"]: d for d in report["decisions"]}
    (execution,) = report["executions"]  # who wrote the plan that ran, beside who approved it
    assert (execution["plan"], execution["approver"]) == ("plans/ran", ALICE[1])
    assert execution["authors"] == ["agent@example.com"], execution
    assert decisions["plans/said"]["reason"] == "Not at night: wait for the window"
    assert decisions["plans/silent"]["reason"] == "nope"
    text = run_cli("audit", cwd=clone, env={"PLANGATE_CONFIG": ""}).stdout
    assert "rejected by alice@example.com" in text and ": Not at night: wait for" in text
