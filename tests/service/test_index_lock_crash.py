"""A controller killed while it holds the repository's ``index.lock`` (issue 17's burst test,
SPEC §15 crash safety).

The controller points the index at its commit under git's ``index.lock`` (the update runs
``git update-index`` on a private copy meanwhile, once the commit landed; before it, only
the index's header and checksum are checked). A SIGKILL in that moment leaves the lock
behind, and every later controller then refused to pass (``E_GIT``: "Unable to create
index.lock") until a person removed it: a burst killed half way never finished. The next
controller now removes the stale lock when its state directory's note names that very file;
a lock anyone else holds is left alone.

Real ``plangate run --once`` processes and real git; the crash is a real SIGKILL sent by a
``git`` on PATH that kills its caller during the index update, then runs the real git.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from controller.git.gitrepo import GitRepo
from controller.git.records import Person
from tests.support.gitenv import commit_all, git, identity

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

# Kills the controller (its parent) the first time it updates a private index copy.
CRASHING_GIT = """\
#!/bin/sh
if [ "$1" = "update-index" ] && [ -n "$GIT_INDEX_FILE" ] && [ ! -e "{marker}" ]; then
  : > "{marker}"
  kill -9 $PPID
  sleep 5
fi
exec {git} "$@"
"""


def _plangate(config: Path, path_prefix: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path_prefix is not None:
        env["PATH"] = f"{path_prefix}{os.pathsep}{env['PATH']}"
    return subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _lab(tmp_path: Path, repo: Path) -> Path:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    (repo / "plans" / "one").mkdir(parents=True)
    (repo / "plans" / "one" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "propose", ("Agent", "agent@example.com"))
    return config


def _crash_during_index_update(tmp_path: Path, config: Path) -> None:
    wrapper = tmp_path / "crashing-bin"
    wrapper.mkdir()
    script = wrapper / "git"
    real = shutil.which("git")
    assert real is not None
    script.write_text(CRASHING_GIT.format(marker=tmp_path / "crashed", git=real))
    script.chmod(0o755)
    crashed = _plangate(config, wrapper)
    assert crashed.returncode == -9, crashed.stderr  # killed, as a SIGKILL kills


def test_a_lock_left_by_a_killed_controller_is_released_by_the_next(
    tmp_path: Path, repo: Path
) -> None:
    config = _lab(tmp_path, repo)
    _crash_during_index_update(tmp_path, config)
    lock = repo / ".git" / "index.lock"
    assert lock.exists()  # what git itself would leave: every later pass used to stop here
    # the new index is made once the branch moved (only its header and checksum are read
    # before: round 112's unreadable index refuses the commit): the kill left the lock
    assert git(repo, "log", "-1", "--format=%s").startswith("plangate: ")  # committed before

    again = _plangate(config)
    assert again.returncode == 0, again.stderr
    assert "index_lock.released" in again.stderr + again.stdout
    assert not lock.exists()
    # the index agrees with the controller's commit: nothing staged, nothing modified
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert "frozen:" in git(repo, "show", "HEAD:plans/one/PLAN.yml")
    assert "plangate: freeze plans/one" in git(repo, "log", "--format=%s")

    # and the plan goes on: approved, it runs
    path = repo / "plans" / "one" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    assert _plangate(config).returncode == 0
    assert "status: completed" in git(repo, "show", "HEAD:plans/one/PLAN.yml")


def _as_alice(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *args, "--config", str(config)],
        env={**os.environ, **identity("Alice", "alice@example.com")},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _crash_after_a_start(tmp_path: Path, repo: Path) -> Path:
    """The plan frozen, Alice's approval committed, and the controller SIGKILLed in its
    index write after the start commit (the commit landed, ``index.lock`` left)."""
    config = _lab(tmp_path, repo)
    assert _plangate(config).returncode == 0  # freezes
    path = repo / "plans" / "one" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    _crash_during_index_update(tmp_path, config)
    assert (repo / ".git" / "index.lock").exists()
    assert git(repo, "log", "-1", "--format=%s").startswith("plangate: start")
    return config


def test_a_persons_abort_finishes_a_killed_controllers_index_write(
    tmp_path: Path, repo: Path
) -> None:
    """Round 115's lab L under load: the daemon SIGKILLed right after its start commit,
    before its index write, and Alice's ``plangate abort`` failed E_GIT "Unable to create
    index.lock" until a controller started again. With the controller down and its note
    naming that very lock, her command finishes the controller's writes first."""
    config = _crash_after_a_start(tmp_path, repo)
    done = _as_alice(config, "abort", str(repo / "plans" / "one"))
    assert done.returncode == 0, done.stderr
    assert not (repo / ".git" / "index.lock").exists()
    assert not (tmp_path / "state" / "index-lock").exists()
    # her abort landed on the controller's start, and the index agrees with the branch (a
    # later `git commit` takes nothing of the controller's back)
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert "status: aborted" in git(repo, "show", "HEAD:plans/one/PLAN.yml")
    assert "plangate: start" in git(repo, "log", "-2", "--format=%s")

    after = _plangate(config)
    assert after.returncode == 0, after.stderr
    assert "status: aborted" in git(repo, "show", "HEAD:plans/one/PLAN.yml")


def test_a_running_controllers_lock_is_never_taken_by_a_persons_command(
    tmp_path: Path, repo: Path
) -> None:
    """The same lock while a process holds the state directory (a live controller, here
    the test holding its flock): hers waits, then fails E_GIT as git's own commands do; the
    lock and the note stay for their owner."""
    import fcntl

    config = _crash_after_a_start(tmp_path, repo)
    lock = repo / ".git" / "index.lock"
    with open(tmp_path / "state" / "lock", "a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        refused = _as_alice(config, "abort", str(repo / "plans" / "one"))
    assert refused.returncode != 0
    assert "E_GIT" in refused.stderr and "index.lock" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert lock.exists()
    assert (tmp_path / "state" / "index-lock").exists()


def test_a_lock_someone_else_holds_is_never_removed(tmp_path: Path, repo: Path) -> None:
    config = _lab(tmp_path, repo)
    _crash_during_index_update(tmp_path, config)
    lock = repo / ".git" / "index.lock"
    # a person removed the stale lock, and a git command of theirs holds a new one now
    lock.unlink()
    lock.write_bytes(b"")
    held = _plangate(config)
    assert held.returncode != 0
    assert "E_GIT" in held.stderr and "index.lock" in held.stderr
    assert lock.exists()  # theirs: left alone
    assert "index_lock.released" not in held.stderr + held.stdout


def test_a_human_lock_without_any_crash_is_left_alone(tmp_path: Path, repo: Path) -> None:
    config = _lab(tmp_path, repo)
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(b"")
    held = _plangate(config)
    assert held.returncode != 0
    assert "index.lock" in held.stderr
    assert lock.exists()


def _noted_commit(tmp_path: Path, repo: Path, lands: bool) -> str:
    """A controller's commit of ``plans/x/PLAN.yml`` noted, then (if ``lands``) made, its
    working tree written, and the process 'killed' before the index update."""
    files: dict[str, bytes | None] = {"plans/x/PLAN.yml": b"plan: new\n", "README": None}
    git_repo = GitRepo(repo)
    git_repo.index_lock_note = tmp_path / "index-lock"
    head = git(repo, "rev-parse", "HEAD").strip()
    git_repo.note_index_update(files, head)
    if lands:
        sha = git_repo.commit_files(
            branch="main", parent=head, files=files, message="plangate: x",
            author=Person("plangate", "plangate@localhost"),
        )  # fmt: skip
        assert sha is not None
        git_repo.write_worktree(files)
    return head


def test_an_index_update_lost_to_a_crash_is_made_by_the_next_controller(
    tmp_path: Path, repo: Path
) -> None:
    _noted_commit(tmp_path, repo, lands=True)
    before = git(repo, "status", "--porcelain")
    assert "D  plans/x/PLAN.yml" in before and "D  README" not in before  # index behind
    assert GitRepo(repo).index_lock_note is None  # a plain repo (approve, MCP) notes nothing

    recovering = GitRepo(repo)
    recovering.index_lock_note = tmp_path / "index-lock"
    assert recovering.recover_index() is False  # no lock was left: nothing released
    assert git(repo, "status", "--porcelain") == ""  # index = HEAD = working tree
    assert not (tmp_path / "index-lock").exists()


def test_a_noted_commit_that_never_landed_sets_nothing(tmp_path: Path, repo: Path) -> None:
    head = _noted_commit(tmp_path, repo, lands=False)
    git(repo, "add", "README")  # the index as a person left it
    recovering = GitRepo(repo)
    recovering.index_lock_note = tmp_path / "index-lock"
    recovering.recover_index()
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert git(repo, "status", "--porcelain") == ""  # README still staged as it was, no plan
    assert git(repo, "ls-files", "plans") == ""


def test_temp_files_of_a_killed_write_are_removed_at_the_next_start(tmp_path: Path) -> None:
    """A controller killed in the middle of any working-tree write (a checkpoint between two
    commits, with no note of it) leaves ``.PLAN.yml.<12 hex>.tmp`` beside the plan: the next
    controller removes every untracked one under the plans folder when it takes the state
    directory, so no human's ``git add -A`` commits it (round 30's bench saw one left under
    load). A tracked look-alike, a link and a file of another name are someone's: kept."""
    from tests.support.gitkit import make_config, run_once, write_plan

    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    write_plan(repo)
    commit_all(repo, "plan", ("Agent", "agent@example.com"))
    folder = repo / "plans" / "greet"
    tracked = folder / ".notes.md.aaaaaaaaaaaa.tmp"
    tracked.write_text("someone's file")
    commit_all(repo, "a look-alike, committed", ("Agent", "agent@example.com"))
    stray = folder / ".PLAN.yml.0123456789ab.tmp"
    stray.write_text("half a plan")
    log_stray = folder / ".EXECUTION_LOG.md.ba9876543210.tmp"
    log_stray.write_text("half a log")
    other = folder / ".PLAN.yml.tmp"
    other.write_text("not the controller's name")
    link = folder / ".PLAN.yml.cccccccccccc.tmp"
    link.symlink_to(folder / "PLAN.yml")
    make_config(repo)
    run_once(repo)
    assert not stray.exists() and not log_stray.exists()
    assert tracked.read_text() == "someone's file" and other.exists() and link.is_symlink()


# Writes the index under the lock, with a note, once.
INDEX_WRITER = """\
import sys
from pathlib import Path
from controller.git.gitrepo import GitRepo
repo = GitRepo(Path(sys.argv[1]))
repo.index_lock_note = Path(sys.argv[2])
files = {"many/0": b"new"}
repo.set_index_entries(files, hold=repo.hold_index(files))
"""

# What the kernel does to a process that gets SIGKILL in the middle of writing many pages:
# the write ends early and the process dies. Loaded into the writer only (LD_PRELOAD), it
# cuts a large write into a file under $CUT_WRITES_UNDER in half, then the SIGKILL.
CUT_WRITE_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t write(int fd, const void *buf, size_t n) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    const char *under = getenv("CUT_WRITES_UNDER");
    if (under != NULL && n > 65536) {
        char link[64], path[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t len = readlink(link, path, sizeof path - 1);
        if (len > 0) {
            path[len] = 0;
            if (strncmp(path, under, strlen(under)) == 0) {
                real(fd, buf, n / 2);
                kill(getpid(), SIGKILL);
            }
        }
    }
    return real(fd, buf, n);
}
"""


def test_a_kill_in_the_middle_of_an_index_write_leaves_no_lock_the_next_start_keeps(
    tmp_path: Path, repo: Path
) -> None:
    """A controller SIGKILLed in the middle of writing out a 2 MB index (the kernel ends such
    a write part way for a fatal signal): the next start releases the lock, and the index is
    whole. The CI run of 2026-12-05 stopped on a lock left for good: the new index was
    written into ``index.lock`` itself, a part-written lock matched no note, so every later
    start left it (the person's next ``git add`` failed, as did every commit of the next
    controller). Now the lock is never written: the new index goes beside it and is renamed
    over the old, so the lock stays the very file the note names."""
    import signal

    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("needs a C compiler to cut a write as the kernel does")
    (tmp_path / "cut.c").write_text(CUT_WRITE_C)
    shim = tmp_path / "cut.so"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-o", str(shim), str(tmp_path / "cut.c"), "-ldl"],
        check=True, capture_output=True,
    )  # fmt: skip
    blob = git(repo, "hash-object", "-w", "--stdin", data=b"x\n").strip()
    entries = "".join(f"100644 {blob}\tmany/{i}\0" for i in range(25_000)).encode()
    git(repo, "update-index", "-z", "--index-info", data=entries)
    index = repo / ".git" / "index"
    before = index.read_bytes()
    assert len(before) > 1_500_000
    note, lock = tmp_path / "index-lock", repo / ".git" / "index.lock"
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "LD_PRELOAD": str(shim),
        "CUT_WRITES_UNDER": str((repo / ".git").resolve()),
    }
    writer = subprocess.run(
        [sys.executable, "-c", INDEX_WRITER, str(repo), str(note)],
        env=env, capture_output=True, timeout=60,
    )  # fmt: skip
    assert writer.returncode == -signal.SIGKILL, writer.stderr  # cut, and killed
    assert lock.exists()  # what the kill leaves, as git's own would
    assert index.read_bytes() == before  # the old index stands: nothing torn is in place

    recovering = GitRepo(repo)
    recovering.index_lock_note = note
    assert recovering.recover_index() is True  # known for its own, and released
    assert not lock.exists()
    assert not (repo / ".git" / "plangate-index.new").exists()  # the part-written copy too
    assert index.read_bytes() == before
    git(repo, "add", "README")  # a person's next command works


def _commit_through_another_index(tmp_path: Path, repo: Path, text: str) -> str:
    """Someone's commit of ``plans/x/PLAN.yml`` made through an index file of their own
    (the shared index left as the killed controller left it), as round 66's agent did."""
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "their-index")}
    run = {"cwd": repo, "env": env, "check": True, "capture_output": True}
    subprocess.run(["git", "read-tree", "HEAD"], **run)  # type: ignore[call-overload]
    (repo / "plans" / "x").mkdir(parents=True, exist_ok=True)
    (repo / "plans" / "x" / "PLAN.yml").write_text(text)
    subprocess.run(["git", "add", "plans/x/PLAN.yml"], **run)  # type: ignore[call-overload]
    subprocess.run(
        ["git", "-c", "user.name=Agent", "-c", "user.email=agent@example.com", "commit", "-q",
         "-m", "agent: later"], **run,
    )  # type: ignore[call-overload]  # fmt: skip
    return git(repo, "rev-parse", "HEAD").strip()


def _index_blob(repo: Path, path: str) -> str:
    return git(repo, "ls-files", "-s", "--", path).split(" ")[1] if path else ""


def test_a_landed_commit_the_branch_moved_past_still_gets_its_index_entries(
    tmp_path: Path, repo: Path
) -> None:
    """The controller's commit landed, it was killed before the index update, and someone
    committed a later version of the file through another index before the restart: the
    index entry still named the version before the controller's commit, and the restarted
    controller read it as someone's staged change and waited for good (round 66's
    ``killed-lookalike`` under load). The restart completes its own interrupted write: the
    entry names its committed blob, and the working tree keeps the later version."""
    _noted_commit(tmp_path, repo, lands=True)
    ours = git(repo, "rev-parse", "HEAD:plans/x/PLAN.yml").strip()
    _commit_through_another_index(tmp_path, repo, "plan: later\n")
    assert "plans/x/PLAN.yml" not in git(repo, "ls-files", "plans")  # the index as left

    recovering = GitRepo(repo)
    recovering.index_lock_note = tmp_path / "index-lock"
    recovering.recover_index()
    assert _index_blob(repo, "plans/x/PLAN.yml") == ours
    assert git(repo, "ls-files", "README") == ""  # its removal, also owed
    assert (repo / "plans" / "x" / "PLAN.yml").read_text() == "plan: later\n"
    assert not (tmp_path / "index-lock").exists()


def test_an_entry_staged_since_a_moved_past_commit_is_kept(tmp_path: Path, repo: Path) -> None:
    """As above, but a person staged the file since: their entry is theirs, and the README
    entry, still as the controller found it, is brought to the commit."""
    _noted_commit(tmp_path, repo, lands=True)
    _commit_through_another_index(tmp_path, repo, "plan: later\n")
    (repo / "plans" / "x" / "PLAN.yml").write_text("plan: staged by a person\n")
    git(repo, "add", "plans/x/PLAN.yml")
    staged = _index_blob(repo, "plans/x/PLAN.yml")

    recovering = GitRepo(repo)
    recovering.index_lock_note = tmp_path / "index-lock"
    recovering.recover_index()
    assert _index_blob(repo, "plans/x/PLAN.yml") == staged
    assert git(repo, "ls-files", "README") == ""


def test_an_entry_staged_since_a_landed_commit_is_kept(tmp_path: Path, repo: Path) -> None:
    """The controller's commit landed and its working tree was written, then it was killed
    inside its index write; a person removed the stale lock, edited the file and staged it
    before the restart (round 122, staged-edit-unstaged). The restart points at the commit
    only the entries still as the killed controller left them (README's removal): the
    person's staged entry and their working file are theirs, kept (it used to point the
    entry back at the controller's blob, the staged edit gone from ``git diff --cached``)."""
    _noted_commit(tmp_path, repo, lands=True)
    (repo / "plans" / "x" / "PLAN.yml").write_text("plan: new\n# a person's staged line\n")
    git(repo, "add", "plans/x/PLAN.yml")
    staged = _index_blob(repo, "plans/x/PLAN.yml")

    recovering = GitRepo(repo)
    recovering.index_lock_note = tmp_path / "index-lock"
    recovering.recover_index()
    assert _index_blob(repo, "plans/x/PLAN.yml") == staged
    assert "a person's staged line" in git(repo, "diff", "--cached", "--", "plans/x")
    assert (repo / "plans" / "x" / "PLAN.yml").read_text().endswith("staged line\n")
    assert git(repo, "ls-files", "README") == ""  # the entry it still owed: set
    assert not (tmp_path / "index-lock").exists()


def test_a_commit_that_never_landed_is_not_found_past_the_branch(
    tmp_path: Path, repo: Path
) -> None:
    """A noted commit that never landed, and someone's commit of the same file after: no
    commit of the branch holds the noted entries, so nothing is set."""
    _noted_commit(tmp_path, repo, lands=False)
    _commit_through_another_index(tmp_path, repo, "plan: theirs\n")  # README kept
    recovering = GitRepo(repo)
    recovering.index_lock_note = tmp_path / "index-lock"
    recovering.recover_index()
    assert "plans/x/PLAN.yml" not in git(repo, "ls-files", "plans")
    assert git(repo, "ls-files", "README").strip() == "README"


def test_a_run_killed_before_its_start_reached_the_index_ends_after_a_later_commit(
    tmp_path: Path, repo: Path
) -> None:
    """End to end (round 66's restart under load): the controller killed after its start
    commit landed and before the index named it; then a commit of the plan file through
    another index file (a look-alike ``complete`` under the controller's name, ignored as
    anyone's). The next pass takes the branch into its own store before it recovers, sets
    the index entry its start owed, runs the plan and commits its outcome: it used to read
    the old entry as someone's staged change and wait for good."""
    config = _lab(tmp_path, repo)
    assert _plangate(config).returncode == 0  # frozen
    path = repo / "plans" / "one" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    _crash_during_index_update(tmp_path, config)
    assert git(repo, "log", "-1", "--format=%s").strip() == "plangate: start plans/one"
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "their-index")}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=repo, env=env, check=True)
    text = git(repo, "show", "HEAD:plans/one/PLAN.yml")
    path.write_text(text.replace("\n  status: executing\n", "\n  status: completed\n", 1))
    subprocess.run(["git", "add", "plans/one/PLAN.yml"], cwd=repo, env=env, check=True)
    subprocess.run(
        ["git", "-c", "user.name=plangate", "-c", "user.email=plangate@localhost", "commit",
         "-q", "-m", "plangate: complete plans/one\n\nPlan: plans/one\nPlan-Event: complete\n"
         "Plan-Status: completed\n"], cwd=repo, env=env, check=True,
    )  # fmt: skip
    again = _plangate(config)
    assert again.returncode == 0, again.stderr[-3000:]
    assert git(repo, "log", "-1", "--format=%s").strip() == "plangate: complete plans/one"
    assert "staged in the index" not in again.stderr
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


#: Action 1's tool: stages a file and leaves ``git commit -i`` of it waiting in its editor
#: (so git holds ``.git/index.lock``; the commit would land under the controller's name),
#: then SIGKILLs the controller, its parent.
LEFT_GIT = """\
import os, signal, subprocess, sys, time
repo, out = sys.argv[1], sys.argv[2]
env = dict(os.environ, GIT_AUTHOR_NAME="plangate", GIT_AUTHOR_EMAIL="plangate@localhost",
           GIT_COMMITTER_NAME="plangate", GIT_COMMITTER_EMAIL="plangate@localhost",
           GIT_EDITOR='sleep 120; f() { echo helper > "$1"; }; f')
open(os.path.join(repo, "notes.txt"), "w").write("the helper's bytes\\n")
subprocess.run(["git", "-C", repo, "add", "notes.txt"], env=env, check=True)
git = subprocess.Popen(["git", "-C", repo, "commit", "-i", "notes.txt"], env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
open(os.path.join(out, "helper"), "w").write(str(git.pid))
lock = os.path.join(repo, ".git", "index.lock")
for _ in range(6000):
    if os.path.exists(lock):
        break
    time.sleep(0.01)
os.kill(os.getppid(), signal.SIGKILL)
time.sleep(60)
"""


def test_a_left_tools_git_holding_the_lock_is_stopped_before_the_restart_writes(
    tmp_path: Path, repo: Path
) -> None:
    """Round 124 (atk124d, left-tool-lock-blocks-restart): the controller SIGKILLed while
    its tool's ``git commit`` (left in its editor) holds ``.git/index.lock``. The restart
    stops the tools a dead controller's run left running before any git command of its
    pass: the helper gets its SIGTERM and removes its lock, so the pass goes on (it failed
    ``E_GIT`` on that lock, every pass, while the helper lived on to commit under the
    controller's name)."""
    import json
    import time

    from tests.support.gitenv import run_cli

    tool = tmp_path / "left_git.py"
    tool.write_text(LEFT_GIT)
    argv = json.dumps([sys.executable, str(tool), str(repo), str(tmp_path)])
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval: {approvers: [alice@example.com]}\n"
        f"tools: {{greet: {{kind: exec, argv: {argv}, timeout: 300}}}}\n"
    )
    (repo / "plans" / "one").mkdir(parents=True)
    (repo / "plans" / "one" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "propose", ("Agent", "agent@example.com"))
    assert _plangate(config).returncode == 0  # frozen
    plan = repo / "plans" / "one" / "PLAN.yml"
    plan.write_text(plan.read_text().replace("pending_approval", "approved"))
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    killed = _plangate(config)
    assert killed.returncode == -9, killed.stderr[-2000:]
    helper = int((tmp_path / "helper").read_text())
    assert (repo / ".git" / "index.lock").exists()  # the helper's, held

    again = _plangate(config)
    assert again.returncode == 0, again.stderr[-2000:]
    assert not (repo / ".git" / "index.lock").exists()
    for _ in range(600):  # the helper was stopped (it is no child of ours: poll /proc)
        stat = Path(f"/proc/{helper}/stat")
        if not stat.exists() or stat.read_text().rsplit(")", 1)[-1].split()[0] == "Z":
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the left git commit still runs")
    rows = json.loads(run_cli("status", "--json", "--config", str(config)).stdout)
    mine = next(p for p in rows if p.get("id", p.get("plan")) == "plans/one")
    assert mine["status"] == "failed" and "E_ACTION_IN_DOUBT" in json.dumps(mine), mine
    log = git(repo, "log", "--format=%cn %s", "--all")
    assert "helper" not in log and "notes.txt" not in git(repo, "log", "--all", "--stat")
