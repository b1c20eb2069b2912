"""Remote mode: two real controller processes against one bare repo served by `git daemon`."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.gitenv import git
from tests.support.gitkit import (
    AGENT,
    ALICE,
    PLAN,
    approve,
    commit_all,
    edit_status,
    head_plan,
    write_plan,
)

pytestmark = pytest.mark.skipif(
    subprocess.run(["git", "daemon", "-h"], capture_output=True).returncode not in (0, 129),
    reason="git daemon is not installed",
)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """A bare repo with one commit, served read/write over git:// on 127.0.0.1."""
    base = tmp_path / "served"
    base.mkdir()
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    (seed / "README").write_text("plans\n")
    commit_all(seed, "initial", ("Owner", "owner@example.com"))
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(base / "plans.git"))
    port = _port()
    daemon = subprocess.Popen(
        [
            "git",
            "daemon",
            f"--base-path={base}",
            "--export-all",
            "--enable=receive-pack",
            "--listen=127.0.0.1",
            f"--port={port}",
            "--reuseaddr",
            "--informative-errors",
            str(base),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"git://127.0.0.1:{port}/plans.git"
    deadline = time.monotonic() + 20
    while subprocess.run(["git", "ls-remote", url], capture_output=True).returncode != 0:
        assert time.monotonic() < deadline, "git daemon did not start"
        time.sleep(0.05)
    yield url
    daemon.terminate()
    daemon.wait(10)


def _config(tmp_path: Path, name: str, url: str, extra: str = "") -> Path:
    path = tmp_path / f"{name}.yml"
    path.write_text(
        f"remote: {{url: '{url}', branch: main, poll_interval: 1}}\n"
        f"state_dir: state-{name}\n"
        "approval: {approvers: ['alice@example.com']}\n"
        "tools: {greet: {kind: echo}}\n" + extra
    )
    return path


def _first_starts(configs: list[Path]) -> None:
    """The push race's safety net is tried with two controllers on one remote, set up one
    after the other before any plan: the first start records the policy (a sealed commit),
    and a second NEW state directory on a branch holding another key's seals refuses
    ``E_STORAGE`` (round 70: it cannot tell a second controller from its own lost state) until
    told ``--take-over``, which adopts what is on the branch now (that set-up commit). Started
    together instead, which of them starts first is a race on a loaded machine (CI,
    2026-11-30: the later one refused). (One controller per branch is the deployment:
    docs/approvals.md, Remote mode.)"""
    first, *others = configs
    _run_both([first])
    for config in others:
        _run_both([config], "--take-over")


def _run_both(configs: list[Path], *options: str) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "controller", "run", "--once", "--config", str(c), *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for c in configs
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err


def _frozen_on_remote(tmp_path: Path, served: str, config: Path) -> Path:
    """A person's clone of the served repo after the agent pushed a plan and one pass of the
    controller of ``config`` froze it (pulled)."""
    human = tmp_path / "human"
    git(tmp_path, "clone", "-q", served, str(human))
    write_plan(human)
    commit_all(human, "add plan", AGENT)
    git(human, "push", "-q", "origin", "main")
    _run_both([config])
    git(human, "pull", "-q", "--ff-only")
    return human


def test_two_controllers_one_remote_exactly_one_runs(tmp_path: Path, served: str) -> None:
    configs = [_config(tmp_path, "a", served), _config(tmp_path, "b", served)]
    _first_starts(configs)
    human = tmp_path / "human"
    git(tmp_path, "clone", "-q", served, str(human))
    write_plan(human)
    commit_all(human, "add plan", AGENT)
    git(human, "push", "-q", "origin", "main")
    _run_both(configs)
    git(human, "pull", "-q", "--ff-only")
    approve(human, who=ALICE)
    git(human, "push", "-q", "origin", "main")
    _run_both(configs)
    git(human, "pull", "-q", "--ff-only")
    log = git(human, "log", "--format=%s").splitlines()
    assert log.count("plangate: freeze plans/greet") == 1
    assert log.count("plangate: start plans/greet") == 1
    assert log.count("plangate: complete plans/greet") == 1
    assert "status: completed" in (human / "plans/greet/PLAN.yml").read_text()
    # never forced: the remote's history contains every commit either side ever saw
    assert git(human, "rev-list", "--count", "HEAD").strip() == str(len(log))


def test_remote_human_commit_during_the_run_is_kept(tmp_path: Path, served: str) -> None:
    config = _config(tmp_path, "a", served)
    human = _frozen_on_remote(tmp_path, served, config)
    approve(human, who=ALICE)
    (human / "unrelated.txt").write_text("x\n")
    commit_all(human, "unrelated work", AGENT)
    git(human, "push", "-q", "origin", "main")
    _run_both([config])
    git(human, "pull", "-q", "--ff-only")
    log = git(human, "log", "--format=%s").splitlines()
    assert log[:2] == ["plangate: complete plans/greet", "plangate: start plans/greet"]
    assert "unrelated work" in log


def test_remote_starts_share_a_pushed_commit_and_each_plan_runs_once(
    tmp_path: Path, served: str
) -> None:
    """In remote mode every controller commit is a push: starts decided in one pass share
    commits as in local mode (the first alone, at once), and each plan still runs once, with
    two controllers racing for the same remote."""
    # batches close at the end of the pass (a loaded machine deciding one plan per 0.2 s
    # would otherwise commit each alone)
    unhurried = "execution: {batch_window: 3600}\n"
    configs = [_config(tmp_path, n, served, unhurried) for n in ("a", "b")]
    _first_starts(configs)
    human = tmp_path / "human"
    git(tmp_path, "clone", "-q", served, str(human))
    slugs = [f"p{i:02d}" for i in range(12)]
    for slug in slugs:  # twelve distinct plans (one plan's copies would not run again)
        write_plan(human, slug, PLAN.replace("to the world", f"to {slug}"))
    commit_all(human, "add plans", AGENT)
    git(human, "push", "-q", "origin", "main")
    _run_both(configs)
    git(human, "pull", "-q", "--ff-only")
    for slug in slugs:
        edit_status(human, slug, "approved")
    commit_all(human, "approve all", ALICE)
    git(human, "push", "-q", "origin", "main")
    _run_both(configs)
    git(human, "pull", "-q", "--ff-only")
    started: list[str] = []
    start_commits = 0
    for body in git(human, "log", "--format=%B%x00").split("\0"):
        lines = body.strip().splitlines()
        if not lines:
            continue
        if lines[0].startswith("plangate: start plans/"):
            started.append(lines[0].removeprefix("plangate: start "))
            start_commits += 1
        elif lines[0].startswith("plangate: start ") and lines[0].endswith(" plans"):
            start_commits += 1
            plan = None
            for line in lines:
                if line.startswith("Plan: "):
                    plan = line.removeprefix("Plan: ")
                elif line == "Plan-Event: start" and plan is not None:
                    started.append(plan)
    assert sorted(started) == [f"plans/{slug}" for slug in slugs]  # each started once
    assert start_commits < len(slugs)  # shared, pushed commits
    for slug in slugs:
        assert head_plan(human, slug)["plan"]["status"] == "completed"


def test_a_force_push_over_the_controllers_freeze_holds_the_plan(
    tmp_path: Path, served: str
) -> None:
    """Remote mode: someone force-pushes the branch to before the controller's freeze and
    commits the frozen file as their own; the controller, which knows its freeze commit by
    record, holds the plan: Alice's approval starts nothing (E_HISTORY_REWRITTEN)."""
    config = _config(tmp_path, "a", served)
    human = tmp_path / "human"
    git(tmp_path, "clone", "-q", served, str(human))
    base = git(human, "rev-parse", "HEAD").strip()
    write_plan(human)
    commit_all(human, "add plan", AGENT)
    git(human, "push", "-q", "origin", "main")
    _run_both([config])  # freezes (a pushed controller commit)
    git(human, "pull", "-q", "--ff-only")
    frozen = (human / "plans/greet/PLAN.yml").read_text()
    git(human, "reset", "-q", "--hard", base)
    (human / "plans/greet").mkdir(parents=True)
    (human / "plans/greet/PLAN.yml").write_text(frozen)
    commit_all(human, "agent re-adds the frozen plan", AGENT)
    approve(human, who=ALICE)
    git(human, "push", "-q", "--force", "origin", "main")
    _run_both([config])
    git(human, "pull", "-q", "--ff-only")
    log = git(human, "log", "--format=%s").splitlines()
    assert "plangate: start plans/greet" not in log, log
    approval = head_plan(human)["approval"]
    assert approval["status"] == "refused" and approval["code"] == "E_HISTORY_REWRITTEN", approval


def test_a_remote_that_cannot_write_its_branch_fails_the_pass_naming_its_lock(
    tmp_path: Path, served: str
) -> None:
    """A git process killed on the remote's host (a controller killed inside its push over
    ``file://``: CI, 2026-12-04) leaves ``refs/heads/main.lock`` there: every push is turned
    down as a lost race though nothing moved the branch. The pass fails ``E_GIT`` naming the
    file (it exited 0 with nothing said, and the plans stayed ``executing`` for good); once
    the operator removes it, the next pass runs the plan once."""
    config = _config(tmp_path, "a", served)
    human = _frozen_on_remote(tmp_path, served, config)
    approve(human, who=ALICE)
    git(human, "push", "-q", "origin", "main")
    lock = tmp_path / "served/plans.git/refs/heads/main.lock"
    lock.write_text("")
    cmd = [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)]
    stuck = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert stuck.returncode == 2, stuck.stderr
    assert "E_GIT" in stuck.stderr and "main.lock" in stuck.stderr, stuck.stderr
    assert "remedy:" in stuck.stderr and "Traceback" not in stuck.stderr, stuck.stderr
    assert lock.exists()  # the remote's file is the operator's to remove, never plangate's
    lock.unlink()
    _run_both([config])
    git(human, "pull", "-q", "--ff-only")
    log = git(human, "log", "--format=%s").splitlines()
    assert log.count("plangate: start plans/greet") == 1, log
    assert log.count("plangate: complete plans/greet") == 1, log
    assert "status: completed" in (human / "plans/greet/PLAN.yml").read_text()


CHILD = """\
plan:
  name: "Say it twice"
  task: "A plan meant to be nested"
  status: draft
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: "say it from the child"
    params: {who: child}
"""


def test_a_nested_plan_runs_from_the_clones_tree(tmp_path: Path, served: str) -> None:
    """Remote mode: the controller's clone is bare, so a pinned plan is read from its branch
    tip's tree (round 107's ``nestremote``: it was frozen ``invalid``, "plans does not exist")."""
    from controller.plan import hashing, yamlio

    config = _config(tmp_path, "a", served)
    human = tmp_path / "human"
    git(tmp_path, "clone", "-q", served, str(human))
    write_plan(human, "child", CHILD)
    pinned = hashing.plan_hash(yamlio.read_yaml(CHILD, "child").data)
    parent = PLAN + (
        f"  - id: 2\n    plan: {{path: plans/child, hash: '{pinned}'}}\n"
        '    why: "then the child"\n'
    )
    write_plan(human, "parent", parent)
    commit_all(human, "add plans", AGENT)
    git(human, "push", "-q", "origin", "main")
    _run_both([config])
    git(human, "pull", "-q", "--ff-only")
    assert head_plan(human, "parent")["plan"]["status"] == "pending_approval"
    approve(human, "parent", who=ALICE)
    git(human, "push", "-q", "origin", "main")
    _run_both([config])
    git(human, "pull", "-q", "--ff-only")
    done = head_plan(human, "parent")
    assert done["plan"]["status"] == "completed", done.get("execution")
    ran = {str(a["id"]): a["status"] for a in done["execution"]["actions"]}
    assert ran == {"1": "succeeded", "2": "succeeded", "2/1": "succeeded"}, ran
    log = (human / "plans/parent/EXECUTION_LOG.md").read_text()
    assert "## Nested action 2/1: greet" in log and '"who": "child"' in log
