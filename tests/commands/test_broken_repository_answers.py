"""A repository git cannot read whole gets an answer naming the real cause, a remedy that
works, and nothing half-written (round 112, atk112b's five classes).

Real git repositories, the real ``plangate`` command:

- a branch ref holding garbage was "HEAD is detached; git switch main" (on main) and "no
  commits to audit";
- ``audit`` without a config in a repository git refuses said "not inside a git working tree";
- ``approve`` with an index git cannot read committed, then answered ``E_STORAGE`` with a
  remedy that failed on that index;
- a truncated loose object was a Python bytes repr ("SHA b'...' could not be resolved");
- ``approve`` under a file-size limit below the branch's reflog left ``refs/heads/main.lock``
  (git's own ``update-ref`` killed by SIGXFSZ), and every later commit failed on it.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from tests.support.gitenv import ALICE, ROOT, commit_all, git, identity, run_cli

PLAN = """\
plan:
  name: "p"
  task: "t"
  status: pending_approval
available_tools:
  - name: t
actions:
  - id: 1
    tool: t
    why: "w"
    params: {}
"""


def _frozen(repo: Path) -> None:
    folder = repo / "plans" / "p"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "propose p")
    done = run_cli("freeze", "plans/p", cwd=repo)
    assert done.returncode == 0, done.stderr
    commit_all(repo, "freeze p")


def _as_alice(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, env=identity(*ALICE))


def _locks(repo: Path) -> list[str]:
    return sorted(str(p.relative_to(repo)) for p in (repo / ".git").rglob("*.lock"))


def test_a_broken_branch_ref_is_named_with_a_remedy_that_works(repo: Path) -> None:
    _frozen(repo)
    ref = repo / ".git" / "refs" / "heads" / "main"
    ref.write_text("0123\n")
    for args in (("status", "--json"), ("audit", "--json"), ("approve", "plans/p")):
        got = _as_alice(*args, cwd=repo)
        said = got.stdout + got.stderr
        assert got.returncode == 2, said
        assert "refs/heads/main is broken" in said, said
        assert "detached" not in said and "no commits" not in said, said
    remedy = json.loads(_as_alice("status", "--json", cwd=repo).stdout)["remedy"]
    command = remedy.split("refuses to update a broken ref): ", 1)[1]
    subprocess.run(command, shell=True, cwd=repo, check=True)  # the remedy, as given
    assert _as_alice("approve", "plans/p", cwd=repo).returncode == 0


def test_audit_names_gits_refusal_of_the_repository(repo: Path, tmp_path: Path) -> None:
    git(repo, "config", "core.repositoryformatversion", "99")
    got = run_cli("audit", "--json", cwd=repo)
    answer = json.loads(got.stdout)
    assert answer["code"] == "E_GIT", answer
    assert "Expected git repo version <= 1, found 99" in answer["message"], answer
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    answer = json.loads(run_cli("audit", "--json", cwd=outside).stdout)
    assert answer["code"] == "E_CONFIG_INVALID"
    assert "not inside a git working tree" in answer["message"]


def test_approve_with_an_unreadable_index_commits_nothing(repo: Path) -> None:
    _frozen(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / ".git" / "index").write_bytes(b"DIRC" + os.urandom(300))
    got = _as_alice("approve", "plans/p", cwd=repo)
    assert got.returncode == 2, got.stderr
    assert "E_GIT" in got.stderr and "cannot read the index" in got.stderr, got.stderr
    assert "nothing was committed" in got.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == head  # the branch never moved
    assert _locks(repo) == [] and not (repo / ".git" / "plangate-index.new").exists()
    remedy = got.stderr.split("remedy: rebuild it from the branch: ", 1)[1].split(" (")[0]
    subprocess.run(remedy, shell=True, cwd=repo, check=True)  # the remedy, as given
    assert _as_alice("approve", "plans/p", cwd=repo).returncode == 0
    assert git(repo, "status", "--porcelain") == ""


def test_a_truncated_object_is_named_not_shown_as_a_python_repr(repo: Path) -> None:
    _frozen(repo)
    blob = git(repo, "rev-parse", "HEAD:plans/p/PLAN.yml").strip()
    loose = repo / ".git" / "objects" / blob[:2] / blob[2:]
    data = loose.read_bytes()
    loose.chmod(0o644)
    loose.write_bytes(data[:20])
    for args in (("status", "--json"), ("approve", "plans/p")):
        got = _as_alice(*args, cwd=repo)
        said = got.stdout + got.stderr
        assert "E_GIT" in said and f"cannot read object {blob}" in said, said
        assert "object store does not hold it whole" in said and "git fsck" in said, said
        assert "b'" not in said and "Errno" not in said, said


def _approve_limited(repo: Path, limit: int) -> subprocess.CompletedProcess[str]:
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "controller", "approve", "plans/p"],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(ROOT), **identity(*ALICE)},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
    )


def test_a_reflog_past_the_file_size_limit_leaves_no_ref_lock(repo: Path) -> None:
    _frozen(repo)
    for i in range(40):  # a long-lived branch: its reflog past the limit
        git(repo, "commit", "-q", "--allow-empty", "-m", f"pad {i}")
    head = git(repo, "rev-parse", "HEAD").strip()
    assert (repo / ".git" / "logs" / "refs" / "heads" / "main").stat().st_size > 1000
    got = _approve_limited(repo, 1000)
    assert got.returncode == 1, got.stderr
    assert "E_STORAGE" in got.stderr and "SIGXFSZ" in got.stderr, got.stderr
    assert "nothing was committed" in got.stderr and "ulimit -f" in got.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert _locks(repo) == [], _locks(repo)  # neither refs/heads/main.lock nor HEAD.lock
    assert git(repo, "status", "--porcelain") == ""
    done = _as_alice("approve", "plans/p", cwd=repo)  # without the limit: as ever
    assert done.returncode == 0, done.stderr


def test_a_clone_git_reads_as_bare_is_named(repo: Path) -> None:
    """Round 113 (``core-bare-misdiagnosed``): ``core.bare = true`` in a clone made
    ``approve`` answer "None is not a git repository" and ``audit`` "not inside a git working
    tree"; the remedy given puts it right."""
    _frozen(repo)
    git(repo, "config", "core.bare", "true")
    for args in (("approve", "plans/p"), ("audit", "--json")):
        got = _as_alice(*args, cwd=repo)
        said = got.stdout + got.stderr
        assert "as bare (core.bare = true)" in said and "None" not in said, said
    git(repo, "config", "core.bare", "false")
    assert _as_alice("approve", "plans/p", cwd=repo).returncode == 0


def test_paths_that_are_link_loops_or_fifos_are_named(tmp_path: Path) -> None:
    """Round 113 (``plan-path-link-loop-internal``, ``convert-path-misdiagnosed``): a plan
    path that is a loop of symbolic links was an internal error for validate/hash/show/freeze,
    and ``convert`` of a FIFO or a loop said "no such file"."""
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    os.mkfifo(tmp_path / "f")
    for command in ("validate", "hash", "show", "freeze", "convert"):
        got = run_cli(command, "a", cwd=tmp_path)
        assert got.returncode in (1, 2) and "E_USAGE" in got.stderr, (command, got.stderr)
        assert "internal error" not in got.stderr and "no such file" not in got.stderr
    got = run_cli("convert", "f", cwd=tmp_path)
    assert "E_USAGE: f: a FIFO, not a regular file" in got.stderr, got.stderr


def test_too_few_file_descriptors_to_start_git_is_not_no_git(repo: Path) -> None:
    """Round 113 (``fd-limit-misdiagnosed-as-no-git``): under ``ulimit -n 7`` the answer was
    "no git executable found on PATH", remedy "install git"."""

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (7, 7))

    got = subprocess.run(
        [sys.executable, "-m", "controller", "status"],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
    )
    assert got.returncode == 2, got.stderr
    assert "E_GIT" in got.stderr and "no git executable" not in got.stderr, got.stderr
    assert "open-files limit is 7" in got.stderr and "ulimit -n" in got.stderr, got.stderr


def test_a_file_git_cannot_parse_is_named_with_gits_words(repo: Path) -> None:
    """Round 113 (``bad-shallow-misdiagnosed``, and round 112's broken-ref class through
    ``packed-refs``): a garbage line in ``.git/shallow`` made ``audit`` say "no commits to
    audit" and ``approve`` "is not committed"; one in ``packed-refs`` made every command say
    "HEAD is detached; git switch main". Git's own ``fatal:`` is the cause; removing the line
    it names is the remedy, and the approval then commits."""
    _frozen(repo)
    git(repo, "pack-refs", "--all")
    packed = repo / ".git" / "packed-refs"
    clean = packed.read_bytes()
    for where, line, said_by_git in (
        (packed, b"garbage\n", "unexpected line in .git/packed-refs: garbage"),
        (repo / ".git" / "shallow", b"not-a-sha\n", "bad shallow line: not-a-sha"),
    ):
        before = git(repo, "rev-parse", "HEAD")
        with open(where, "ab") as out:
            out.write(line)
        for args in (("status", "--json"), ("audit", "--json"), ("approve", "plans/p")):
            got = _as_alice(*args, cwd=repo)
            said = got.stdout + got.stderr
            assert got.returncode == 2 and "E_GIT" in said, said
            assert said_by_git in said, said
            for false in ("detached", "no commits", "is not committed"):
                assert false not in said, said
        if where == packed:
            packed.write_bytes(clean)
        else:
            where.unlink()
        assert git(repo, "rev-parse", "HEAD") == before  # nothing was committed meanwhile
    assert _as_alice("approve", "plans/p", cwd=repo).returncode == 0


def test_out_of_memory_is_a_coded_refusal_not_an_internal_error(repo: Path) -> None:
    """Round 113 (``low-memory-internal-error``): under a 40 MB address-space limit no
    thread can start, and ``approve`` said "internal error: RuntimeError: can't start new
    thread". It is E_STORAGE naming the limit; nothing is committed."""
    _frozen(repo)
    before = git(repo, "rev-parse", "HEAD")

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (40 << 20, 40 << 20))

    got = subprocess.run(
        [sys.executable, "-m", "controller", "approve", "plans/p"],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(ROOT), **identity(*ALICE)},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
    )
    assert got.returncode == 1, got.stderr  # E_STORAGE
    assert "internal error" not in got.stderr, got.stderr
    assert "E_STORAGE" in got.stderr and "out of memory" in got.stderr, got.stderr
    assert "ulimit -v" in got.stderr, got.stderr
    assert git(repo, "rev-parse", "HEAD") == before
