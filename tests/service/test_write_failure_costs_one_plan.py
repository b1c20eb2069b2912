"""A controller write that fails costs the plan being written, never the pass (round 56).

With the real ``plangate run --once`` under a per-file size limit (``RLIMIT_FSIZE``, which
stands for a full disk: Python ignores SIGXFSZ, so a write past it fails ``EFBIG``): the
start commit of a 150 KB plan cannot be written as a git object, while an ordinary plan
approved in the same commit can. The pass used to die with ``internal error: OSError``
(exit 2) on every pass; now the big plan waits with E_STORAGE, naming what and what to do,
and the other plan runs.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.gitenv import ROOT, commit_all, git, run_cli

ALICE = ("Alice", "alice@example.com")
LIMIT = 100_000
PLAN = textwrap.dedent(
    """\
    plan:
      name: "{slug}"
      task: "a write that fails"
      status: pending_approval
    inputs: {{pad: "{pad}"}}
    available_tools:
      - name: greet
    actions:
      - id: 1
        tool: greet
        why: "say hello"
        params: {{who: "{slug}"}}
    """
)


def _limited(config: Path) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    return subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
    )


def test_a_start_commit_too_big_to_write_waits_alone(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "initial", ("Owner", "owner@example.com"))
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    for slug, pad in (("huge", "y" * 150_000), ("small", "y")):
        (repo / "plans" / slug).mkdir(parents=True)
        (repo / "plans" / slug / "PLAN.yml").write_text(PLAN.format(slug=slug, pad=pad))
    commit_all(repo, "plans")
    assert run_cli("run", "--once", "--config", str(config), timeout=120).returncode == 0
    for slug in ("huge", "small"):
        path = repo / "plans" / slug / "PLAN.yml"
        path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve both", ALICE)

    result = _limited(config)

    assert result.returncode == 0, result.stderr[-2000:]
    assert "internal error" not in result.stderr
    subjects = git(repo, "log", "--format=%s").splitlines()
    assert "plangate: complete plans/small" in subjects
    assert "plangate: start plans/huge" not in subjects
    waiting = [line for line in result.stderr.splitlines() if "plan_waiting" in line]
    assert any("plans/huge" in line and "E_STORAGE" in line for line in waiting), waiting
    # once the disk has room again, the waiting plan starts and runs
    assert run_cli("run", "--once", "--config", str(config), timeout=120).returncode == 0
    assert "plangate: complete plans/huge" in git(repo, "log", "--format=%s").splitlines()
