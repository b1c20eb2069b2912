"""A controller killed while its ``git update-ref`` holds the branch's lock files (round 109,
kill-held-ref-lock; SPEC §15 crash safety).

Moving the branch, git takes ``refs/heads/<b>.lock`` (holding the new commit) and
``HEAD.lock`` (for HEAD's reflog). A SIGKILL of the controller's process group in that
moment left both, and every later pass stopped ``E_GIT ... cannot move refs/heads/main``, and
every human commit failed, until a person removed them. The controller now notes the ref it
is about to move in its state directory; the next controller removes exactly the locks that
note names (made after it, holding nothing or the noted commit). Anyone else's is left.

Real ``plangate run --once`` processes and real git: a ``git`` on PATH that, the first time
the controller moves the branch, has the real git take the very locks (``update-ref --stdin``
``prepare``) and then SIGKILLs both it and the controller.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.gitenv import commit_all, git

PLAN = """\
plan:
  name: "one step"
  task: "greets"
  status: pending_approval
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: "hello"
    params: {who: "world"}
"""

# The first `update-ref <ref> <new> [<old>]`: the real git prepares that very transaction
# (it takes the ref's lock and HEAD.lock, writes the new commit into the lock) and waits;
# then it and the controller (its parent) are SIGKILLed, as a kill of the process group does.
KILLING_GIT = """\
#!/bin/sh
if [ "$1" = "update-ref" ] && [ "$2" = "-m" ] && [ ! -e "{marker}" ]; then
  : > "{marker}"
  fifo="{marker}.fifo"
  mkfifo "$fifo"
  {git} update-ref --stdin < "$fifo" &
  held=$!
  exec 3> "$fifo"
  printf 'start\\nupdate %s %s %s\\nprepare\\n' "$4" "$5" "$6" >&3
  while [ ! -e "{locks}/HEAD.lock" ]; do sleep 0.01; done
  kill -9 $held $PPID
  sleep 5
  exit 1
fi
exec {git} "$@"
"""


def _plangate(config: Path, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
    return subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _lab(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    (repo / "plans" / "one").mkdir(parents=True)
    (repo / "plans" / "one" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "propose", ("Agent", "agent@example.com"))
    return repo, config


def _killed_moving_the_branch(tmp_path: Path, repo: Path, config: Path) -> None:
    wrapper = tmp_path / "killing-bin"
    wrapper.mkdir()
    real = shutil.which("git")
    assert real is not None
    script = wrapper / "git"
    script.write_text(KILLING_GIT.format(marker=tmp_path / "killed", git=real, locks=repo / ".git"))
    script.chmod(0o755)
    killed = _plangate(config, wrapper)
    assert killed.returncode == -9, killed.stderr


def test_ref_locks_left_by_a_killed_controller_are_released_by_the_next(
    tmp_path: Path,
) -> None:
    repo, config = _lab(tmp_path)
    head = git(repo, "rev-parse", "HEAD").strip()
    _killed_moving_the_branch(tmp_path, repo, config)
    locks = [repo / ".git" / "HEAD.lock", repo / ".git" / "refs" / "heads" / "main.lock"]
    assert all(lock.exists() for lock in locks)  # what git itself leaves
    assert git(repo, "rev-parse", "HEAD").strip() == head  # the branch never moved
    human = subprocess.run(
        ["git", "commit", "--allow-empty", "-qm", "note"], cwd=repo, capture_output=True
    )
    assert human.returncode != 0  # every human commit failed while they stayed

    again = _plangate(config)
    assert again.returncode == 0, again.stderr
    assert "ref_lock.released" in again.stderr + again.stdout
    assert not any(lock.exists() for lock in locks)
    assert "plangate: freeze plans/one" in git(repo, "log", "--format=%s")
    commit_all(repo, "a human's commit goes through", ("Alice", "alice@example.com"))

    path = repo / "plans" / "one" / "PLAN.yml"  # and the plan goes on: approved, it runs
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    assert _plangate(config).returncode == 0
    assert "status: completed" in git(repo, "show", "HEAD:plans/one/PLAN.yml")


def test_a_ref_lock_that_is_not_the_noted_one_is_left(tmp_path: Path) -> None:
    """After the kill a person's git holds the branch's lock for another commit: the note
    names the controller's commit, so that lock is theirs, left, and the pass says so."""
    repo, config = _lab(tmp_path)
    _killed_moving_the_branch(tmp_path, repo, config)
    lock = repo / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text(git(repo, "rev-parse", "HEAD").strip() + "\n")  # not the noted commit
    held = _plangate(config)
    assert held.returncode != 0
    assert "E_GIT" in held.stderr and "main.lock" in held.stderr
    assert lock.exists()
    assert not (repo / ".git" / "HEAD.lock").exists()  # the noted one: released


def test_a_ref_lock_without_any_kill_is_left(tmp_path: Path) -> None:
    repo, config = _lab(tmp_path)
    lock = repo / ".git" / "refs" / "heads" / "main.lock"
    lock.write_bytes(b"")
    held = _plangate(config)
    assert held.returncode != 0
    assert "E_GIT" in held.stderr and "main.lock" in held.stderr
    assert lock.exists()
