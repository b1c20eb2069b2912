"""Remote mode: a push the remote's hook refuses (a forge's push protection) costs only the
plan whose commit it holds (round 40, issue 11). Real git: a bare repository with a
``pre-receive`` hook, reached over ``file://``; real ``plangate run --once`` processes, so every
run after the first is a restart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.gitenv import git
from tests.support.gitkit import AGENT, ALICE, PLAN, commit_all, edit_status, write_plan

#: Refuses a push when the controller's commit messages match the pattern in $ROOT/refuse
#: (while that file exists): a stand-in for push protection matching a token pattern.
HOOK = """#!/bin/sh
while read old new ref; do
  range=$old..$new
  if [ "$old" = 0000000000000000000000000000000000000000 ]; then range=$new; fi
  if [ -e "$ROOT/refuse" ] && git log --format=%B "$range" | grep -qE "$(cat "$ROOT/refuse")"; then
    echo "push protection: matched $(cat "$ROOT/refuse")" >&2; exit 1
  fi
done
exit 0
"""


class Forge:
    """A bare repository with the hook, a human's clone and the controller's config."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bare = root / "plans.git"
        seed = root / "seed"
        seed.mkdir()
        git(seed, "init", "-q", "-b", "main")
        (seed / "README").write_text("plans\n")
        commit_all(seed, "initial", ("Owner", "owner@example.com"))
        git(root, "clone", "-q", "--bare", str(seed), str(self.bare))
        hook = self.bare / "hooks" / "pre-receive"
        hook.write_text(HOOK.replace("$ROOT", str(root)))
        hook.chmod(0o755)
        self.human = root / "human"
        git(root, "clone", "-q", str(self.bare), str(self.human))
        self.calls = root / "calls.log"
        (root / "rec.py").write_text(
            "import json, sys\n"
            f"open({str(self.calls)!r}, 'a').write(sys.argv[1] + '\\n')\n"
            "print(json.dumps({'who': sys.argv[1]}))\n"
        )
        argv = json.dumps([sys.executable, str(root / "rec.py"), "{who}"])
        self.config = root / "plangate.yml"
        self.config.write_text(
            f"remote: {{url: 'file://{self.bare}', branch: main, poll_interval: 0.2}}\n"
            "state_dir: state\n"
            "approval: {approvers: ['alice@example.com']}\n"
            "execution: {batch_window: 3600}\n"
            f"tools: {{greet: {{kind: exec, argv: {argv}}}}}\n"
        )

    def refuse(self, pattern: str | None) -> None:
        path = self.root / "refuse"
        if pattern is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(pattern)

    def add(self, slugs: list[str]) -> None:
        for slug in slugs:
            write_plan(self.human, slug, PLAN.replace("world   # trailing comment", slug))
        commit_all(self.human, "add plans", AGENT)
        self.push()

    def approve(self, slugs: list[str]) -> None:
        self.pull()
        for slug in slugs:
            edit_status(self.human, slug, "approved")
        commit_all(self.human, "approve", ALICE)
        self.push()

    def push(self) -> None:
        git(self.human, "push", "-q", "origin", "HEAD:main")

    def pull(self) -> None:
        git(self.human, "pull", "-q", "--ff-only", "origin", "main")

    def run(self) -> subprocess.CompletedProcess[str]:
        result = self._cli("run", "--once")
        assert result.returncode == 0, result.stderr[-2000:]
        return result

    def status(self) -> dict[str, dict[str, Any]]:
        result = self._cli("status", "--json")
        assert result.returncode in (0, 1), result.stderr[-2000:]
        return {row["plan"]: row for row in json.loads(result.stdout)}

    def _cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "controller", *args, "--config", str(self.config)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.root,
        )

    def ran(self, slug: str) -> int:
        if not self.calls.exists():
            return 0
        return self.calls.read_text().splitlines().count(slug)

    def remote_events(self, slug: str) -> list[str]:
        """The controller's events of ``plans/<slug>`` on the remote, oldest first (a
        batched commit's groups too)."""
        out = git(self.root, "--git-dir", str(self.bare), "log", "--reverse", "--format=%B%x00")
        found = []
        for body in out.split("\0"):
            lines = body.strip().splitlines()
            if not lines or not lines[0].startswith("plangate: "):
                continue
            if lines[0].endswith(f" plans/{slug}"):
                found.append(lines[0].split()[1])
            for i, line in enumerate(lines[:-1]):
                if line == f"Plan: plans/{slug}" and lines[i + 1].startswith("Plan-Event: "):
                    found.append(lines[i + 1].removeprefix("Plan-Event: "))
        return found

    def remote_log(self) -> str:
        return git(self.root, "--git-dir", str(self.bare), "log", "--format=%H %s", "main")


@pytest.fixture
def forge(tmp_path: Path) -> Forge:
    return Forge(tmp_path)


def test_remote_refused_batch_is_retried_one_plan_per_commit(forge: Forge) -> None:
    """Nine starts decided in one pass share a commit; the forge refuses it for one plan's
    sake: the events are retried one plan per commit, and only that plan waits (with E_GIT
    and the remote's reason in ``status``), across a restart, until the forge lets it go."""
    slugs = [f"p{i:02d}" for i in range(10)]
    forge.add(slugs)
    forge.run()  # freezes
    forge.refuse("plans/p05")
    forge.approve(slugs)
    result = forge.run()
    assert "batch_refused" in result.stderr  # the batch was refused, then split
    for slug in slugs:
        if slug == "p05":
            continue
        assert forge.remote_events(slug)[-2:] == ["start", "complete"], slug
        assert forge.ran(slug) == 1, slug
    assert "start" not in forge.remote_events("p05")
    assert forge.ran("p05") == 0
    row = forge.status()["plans/p05"]
    assert row["status"] == "approved" and row["last_commit"] in forge.remote_log()
    assert row["waiting"].startswith("E_GIT: the remote refused the start commit of plans/p05")
    assert "push protection: matched plans/p05" in row["waiting"]
    assert (forge.root / "state" / "refused.json").exists()

    before = forge.remote_log()
    forge.run()  # a restart, still refused: it retries once, then the plan waits again
    assert forge.remote_log() == before
    assert forge.status()["plans/p05"]["waiting"].startswith("E_GIT: the remote refused")

    forge.refuse(None)  # the forge's rule fixed
    forge.run()
    assert forge.remote_events("p05")[-2:] == ["start", "complete"]
    assert forge.ran("p05") == 1
    row = forge.status()["plans/p05"]
    assert row["status"] == "completed" and row["waiting"] is None
    assert all(forge.ran(slug) == 1 for slug in slugs)


def test_remote_refused_outcome_survives_a_restart_and_never_reruns(forge: Forge) -> None:
    """The forge refuses a run's outcome: the run happened once; the plan waits (status
    names the refused outcome, the remote's state stays ``executing``); a restart neither
    loses that nor runs the tool again; once the forge accepts, the same outcome lands."""
    forge.add(["q", "r"])
    forge.run()
    forge.refuse("complete plans/q")
    forge.approve(["q"])
    forge.run()
    assert forge.ran("q") == 1
    assert forge.remote_events("q")[-1] == "start"
    row = forge.status()["plans/q"]
    assert row["status"] == "executing" and row["last_commit"] in forge.remote_log()
    assert row["waiting"].startswith("E_GIT: the remote refused the outcome of plans/q")
    assert "pre-receive hook declined" in row["waiting"]

    for _ in range(2):  # restarts: the refusal is remembered, the tool never runs again
        forge.run()
        assert forge.ran("q") == 1
        assert forge.status()["plans/q"]["waiting"].startswith("E_GIT: the remote refused")

    # a commit of ours left above the remote's tip (a kill between commit and push) that
    # the remote refuses: the pass sets its plan aside and drops it, instead of failing
    clone = forge.root / "state" / "clone"
    tip = git(clone, "rev-parse", "refs/heads/main").strip()
    left = git(
        clone,
        "commit-tree",
        "-p",
        tip,
        "-m",
        "plangate: complete plans/q\n\nPlan: plans/q",
        f"{tip}^{{tree}}",
    ).strip()
    git(clone, "update-ref", "refs/heads/main", left, tip)
    forge.run()
    assert git(clone, "rev-parse", "refs/heads/main").strip() == tip
    assert forge.ran("q") == 1

    forge.approve(["r"])  # another plan goes on meanwhile
    forge.run()
    assert forge.remote_events("r")[-2:] == ["start", "complete"]
    assert forge.ran("r") == 1

    forge.refuse(None)
    forge.run()
    assert forge.ran("q") == 1
    assert forge.remote_events("q")[-2:] == ["start", "complete"]
    row = forge.status()["plans/q"]
    assert row["status"] == "completed" and row["waiting"] is None
    assert json.loads((forge.root / "state" / "refused.json").read_text()) == {}
