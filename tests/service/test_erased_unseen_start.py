"""A first start erased by a rewrite before any pass of the history index saw it is held, as
any erased start is (round 120, atk120k ``erased-start-refused-unheld``; docs/approvals.md
"A rewritten branch").

The break: the controller was SIGKILLed while it pointed the index at its first start
commit (the branch moved, the frozen hash recorded executed, the index's scan not yet
done). A person removed the stale ``.git/index.lock`` and ran ``git reset --hard HEAD~1``.
No tip the index had seen was gone, so nothing was held: the restart refused Alice's
approval ``E_ALREADY_EXECUTED`` ("already ran") though no action had run, and nothing named
the remedy. Now the start the executed record and the job row both name, off the branch, holds
the plan (``E_HISTORY_REWRITTEN ... restore them``); the old tip put back, the run goes on
from its journal and every action runs once.

Real ``plangate run --once`` processes, real git and a real exec tool; the kill is a real
SIGKILL sent by a ``git`` on PATH during the controller's index update.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.support.gitenv import AGENT, ALICE, ROOT, commit_all, git, identity

PLAN = """\
plan:
  name: "erased"
  task: "records two calls"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "one"
    params: {tag: "v-1"}
  - id: 2
    tool: rec
    why: "two"
    params: {tag: "v-2"}
"""

RECORDER = """\
import json, os, sys
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
print("{}")
"""

# Runs the controller's first update of its private index copy, then kills the controller.
KILLING_GIT = """\
#!/bin/sh
if [ "$1" = "update-index" ] && [ -n "$GIT_INDEX_FILE" ] && [ ! -e "{marker}" ]; then
  : > "{marker}"
  {git} "$@"
  kill -9 $PPID
  sleep 5
fi
exec {git} "$@"
"""


def _run(config: Path, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if path is not None:
        env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
    return subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _row(config: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "controller", "status", "--json", "--config", str(config)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    return {row["plan"]: row for row in json.loads(out)}["plans/v"]


def _approved(tmp_path: Path, repo: Path) -> tuple[Path, Path]:
    """Plan ``v`` frozen by the controller and approved by Alice: (config, calls log)."""
    log = tmp_path / "calls.log"
    (tmp_path / "rec.py").write_text(RECORDER)
    argv = json.dumps([sys.executable, str(tmp_path / "rec.py"), "{tag}"])
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval: {approvers: [alice@example.com]}\n"
        f"tools: {{rec: {{kind: exec, argv: {argv}, env: {{REC_LOG: '{log}'}}}}}}\n"
    )
    plan = repo / "plans" / "v" / "PLAN.yml"
    plan.parent.mkdir(parents=True)
    plan.write_text(PLAN)
    commit_all(repo, "propose v")
    assert _run(config).returncode == 0  # frozen
    plan.write_text(plan.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve v", ALICE)
    return config, log


def _killed_start(tmp_path: Path, repo: Path, reset: str) -> tuple[Path, Path, str]:
    """Plan ``v`` frozen and approved, its first start killed inside the index write, then
    the stale lock removed and ``git reset <reset> HEAD~1``: (config, calls log, erased)."""
    config, log = _approved(tmp_path, repo)
    wrapper = tmp_path / "bin"
    wrapper.mkdir()
    (wrapper / "git").write_text(
        KILLING_GIT.format(marker=tmp_path / "killed", git=shutil.which("git"))
    )
    (wrapper / "git").chmod(0o755)
    killed = _run(config, wrapper)
    assert killed.returncode == -9, killed.stderr[-1500:]
    erased = git(repo, "rev-parse", "HEAD").strip()
    assert git(repo, "log", "-1", "--format=%s").startswith("plangate: start plans/v")
    (repo / ".git" / "index.lock").unlink()  # the person's clean-up of the stale lock
    git(repo, "reset", "-q", reset, "HEAD~1")
    return config, log, erased


def _calls(log: Path) -> list[str]:
    return [json.loads(line)[0] for line in log.read_text().splitlines()] if log.exists() else []


def test_a_first_start_erased_before_the_index_saw_it_is_held_then_restored(
    tmp_path: Path, repo: Path
) -> None:
    config, log, erased = _killed_start(tmp_path, repo, "--hard")

    again = _run(config)

    assert again.returncode == 0, again.stderr[-1500:]
    assert _calls(log) == []  # no action ran, none runs
    row = _row(config)
    said = json.dumps([row.get("waiting"), row.get("reason")])
    assert "E_HISTORY_REWRITTEN" in str(row.get("waiting")) and "restore" in said, said
    assert "already ran" not in said and "E_ALREADY_EXECUTED" not in said, said
    assert "E_ALREADY_EXECUTED" not in git(repo, "log", "--format=%B", "main")

    git(repo, "reset", "-q", "--hard", erased)  # the remedy the row names
    assert _run(config).returncode == 0

    assert "status: completed" in git(repo, "show", "main:plans/v/PLAN.yml")
    assert _calls(log) == ["v-1", "v-2"]  # each action once
    assert _row(config).get("waiting") is None


def test_a_replay_of_the_erased_start_under_its_name_is_not_its_own(
    tmp_path: Path, repo: Path
) -> None:
    """Round 122 (atk122d ``replayed-start-hold-unrestorable``): the erased start
    cherry-picked back with the controller as committer (another date) has the start's tree,
    parent and message, so its ``Controller-Seal:`` verifies; it was adopted as the
    controller's own (listed in ``<state_dir>/commits``), and once the named remedy erased
    it the hold named both siblings, which no tip holds: held for good. A copy of a commit
    the controller recorded, under another id, is never its own; the hold names only the
    erased start, and the remedy ends it."""
    config, log, erased = _killed_start(tmp_path, repo, "--hard")
    bot = {"GIT_COMMITTER_NAME": "plangate", "GIT_COMMITTER_EMAIL": "plangate@localhost"}
    bot["GIT_COMMITTER_DATE"] = "@1800000000 +0000"
    git(repo, "cherry-pick", "--allow-empty", erased, env={**identity(*AGENT), **bot})
    replay = git(repo, "rev-parse", "HEAD").strip()
    assert replay != erased

    assert _run(config).returncode == 0
    own = (tmp_path / "state" / "commits").read_text().split()
    assert replay not in own and erased in own
    row = _row(config)
    said = json.dumps([row.get("waiting"), row.get("reason")])
    assert "E_HISTORY_REWRITTEN" in said and erased[:12] in said, said
    assert replay[:12] not in said, said
    assert _calls(log) == []

    git(repo, "reset", "-q", "--hard", erased)  # the remedy the row names
    assert _run(config).returncode == 0

    assert "status: completed" in git(repo, "show", "main:plans/v/PLAN.yml")
    assert _calls(log) == ["v-1", "v-2"]  # each action once
    assert _row(config).get("waiting") is None


def test_an_erased_start_merged_back_before_the_restart_is_audited(
    tmp_path: Path, repo: Path
) -> None:
    """Round 122 (atk122d ``merged-back-start-unaudited``): the erased start merged back
    ``--no-ff`` after a person's note, before the restart. The controller never saw it
    erased (nothing held) and goes on with the run from that start; a fresh clone's audit
    listed no execution of the plan and flagged the controller's own sealed ``complete``
    (``controller-unexplained``, ``illegal``) and the merge (``owned-block-changed``). The
    audit reads the run records the merge brings back beside the line as the controller's:
    one valid execution, completed, nothing flagged."""
    config, log, erased = _killed_start(tmp_path, repo, "--hard")
    (repo / "notes").mkdir()
    (repo / "notes" / "n.txt").write_text("n\n")
    commit_all(repo, "a note")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge back", erased, env=identity(*AGENT))

    assert _run(config).returncode == 0
    assert _calls(log) == ["v-1", "v-2"]  # each action once
    assert "status: completed" in git(repo, "show", "main:plans/v/PLAN.yml")

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    audit = subprocess.run(
        [sys.executable, "-m", "controller", "audit", "--json"],
        cwd=clone,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(audit.stdout)
    runs = [(e["start_commit"], e["approval_valid"], e["outcome"]) for e in report["executions"]]
    assert runs == [(erased, True, "complete")], (runs, report["findings"])
    assert report["findings"] == [] and audit.returncode == 0, report["findings"]


def test_a_start_the_index_read_then_erased_is_held_and_already_ran(
    tmp_path: Path, repo: Path
) -> None:
    """The other side of the rule: a first start the history index read did start on this
    branch. Erased with the run's outcome (``git reset --hard`` back to Alice's approval),
    the plan is held and her approval, read again, is refused ``E_ALREADY_EXECUTED``
    (docs/errors.md: "already started once on this branch ... rewritten history"), the hold
    shown beside it; nothing runs again, and the old tip put back ends the hold. Rounds 58
    (``softreset``), 93 (``bk``) and 116 (``sr``) assert this in their labs; the first
    version of the round 120 fix refused it ``E_HISTORY_REWRITTEN`` instead."""
    config, log = _approved(tmp_path, repo)
    approval = git(repo, "rev-parse", "HEAD").strip()
    assert _run(config).returncode == 0
    assert _calls(log) == ["v-1", "v-2"]
    done = git(repo, "rev-parse", "HEAD").strip()
    assert git(repo, "log", "-1", "--format=%s").startswith("plangate: complete plans/v")

    git(repo, "reset", "-q", "--hard", approval)  # start and outcome erased
    again = _run(config)

    assert again.returncode == 0, again.stderr[-1500:]
    assert _calls(log) == ["v-1", "v-2"]  # nothing ran again
    row = _row(config)
    assert "E_HISTORY_REWRITTEN" in str(row.get("waiting")), row
    said = json.dumps([row.get("waiting"), row.get("reason")]) + git(
        repo, "log", "--format=%B", "main"
    )
    assert "E_ALREADY_EXECUTED" in said, said[-1500:]

    git(repo, "reset", "-q", "--hard", done)  # the old tip put back
    assert _run(config).returncode == 0
    assert _row(config).get("waiting") is None
    assert "status: completed" in git(repo, "show", "main:plans/v/PLAN.yml")
    assert _calls(log) == ["v-1", "v-2"]


def test_a_running_daemon_goes_on_with_the_held_run_when_its_start_is_put_back(
    tmp_path: Path, repo: Path
) -> None:
    """``reset --soft``: the working tree keeps the start's bytes, so the held pass commits
    nothing (no refusal to erase) and the restore is a plain fast-forward, which rebuilds
    no index: the held run's job row, kept, is taken up again when the hold ends."""
    config, log, erased = _killed_start(tmp_path, repo, "--soft")
    err = tmp_path / "daemon.err"
    with open(err, "w") as sink:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "controller", "run", "--config", str(config)],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        assert until(lambda: "history_rewritten" in err.read_text()), err.read_text()[-1500:]
        assert "E_HISTORY_REWRITTEN" in str(_row(config).get("waiting"))
        git(repo, "reset", "-q", "--hard", erased)

        def completed() -> bool:
            return "status: completed" in git(repo, "show", "main:plans/v/PLAN.yml")

        assert until(completed), err.read_text()[-2000:]
    finally:
        daemon.terminate()
        daemon.wait(timeout=60)
    assert _calls(log) == ["v-1", "v-2"]  # each action once


def until(pred: Any, timeout: float = 90.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.2)
    return bool(pred())
