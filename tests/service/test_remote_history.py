"""Remote mode reads the branch's whole history from the remote, whatever the remote serves
(round 79): a remote serving a shallow history is refused ``E_GIT`` (at the first start and
after a good one) and nothing is judged, run or pushed until it serves it whole; a branch
named like the watched one (``refs/heads/refs/heads/main``) never stops the push. Real git:
a bare repository reached over ``file://`` (a shallow copy is made by ``git clone --depth``),
real ``plangate run --once`` processes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.gitenv import git
from tests.support.gitkit import AGENT, ALICE, BOB, PLAN, commit_all, edit_status, write_plan


class Forge:
    """``seed`` (the history as written), the bare repository served over ``file://``,
    the controller's config and a log of the tool's calls."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.seed = root / "seed"
        self.seed.mkdir()
        git(self.seed, "init", "-q", "-b", "main")
        write_plan(self.seed, "greet", PLAN.replace("world   # trailing comment", "greet"))
        commit_all(self.seed, "agent plan", AGENT)
        write_plan(self.seed, "own", PLAN.replace("world   # trailing comment", "own"))
        commit_all(self.seed, "alice plan", ALICE)  # hers: her approval must never run it
        (self.seed / "notes.txt").write_text("n\n")
        commit_all(self.seed, "notes", BOB)  # a depth-1 copy's boundary: it adds every file
        self.bare = root / "plans.git"
        self.calls = root / "calls.log"
        (root / "rec.py").write_text(
            "import json, sys\n"
            f"open({str(self.calls)!r}, 'a').write(sys.argv[1] + '\\n')\n"
            "print(json.dumps({'who': sys.argv[1]}))\n"
        )
        argv = json.dumps([sys.executable, str(root / "rec.py"), "{who}"])
        self.config = root / "plangate.yml"
        self.config.write_text(
            f"remote: {{url: 'file://{self.bare}', branch: main}}\n"
            "state_dir: state\n"
            "approval: {approvers: ['alice@example.com', 'bob@ops.example.com']}\n"
            f"tools: {{greet: {{kind: exec, argv: {argv}}}}}\n"
        )

    def serve(self, source: Path, depth: int | None = None) -> None:
        """Serve a bare copy of ``source`` (``depth``: a shallow one), replacing what was."""
        shutil.rmtree(self.bare, ignore_errors=True)
        extra = ["--depth", str(depth)] if depth else []
        git(self.root, "clone", "-q", "--bare", *extra, f"file://{source}", str(self.bare))

    def approve(self, slugs: list[str], who: tuple[str, str] = ALICE) -> None:
        """``who`` sets the plans approved in the seed (pulled from the remote first)."""
        git(self.seed, "pull", "-q", "--ff-only", str(self.bare), "main")
        for slug in slugs:
            edit_status(self.seed, slug, "approved")
        commit_all(self.seed, "approve", who)

    def run(self) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "controller", "run", "--once", "--config", str(self.config)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.root,
        )

    def ran(self) -> list[str]:
        return self.calls.read_text().splitlines() if self.calls.exists() else []

    def tip(self) -> str:
        return git(self.root, "--git-dir", str(self.bare), "rev-parse", "main").strip()

    def subjects(self) -> list[str]:
        out = git(self.root, "--git-dir", str(self.bare), "log", "--format=%s", "main")
        return out.splitlines()


def _refused_shallow(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2, result.stderr[-2000:]
    assert "E_GIT" in result.stderr and "shallow" in result.stderr, result.stderr[-2000:]
    assert "--unshallow" in result.stderr and "Traceback" not in result.stderr


def test_a_shallow_remote_at_the_first_start_is_refused_until_it_serves_the_whole_history(
    tmp_path: Path,
) -> None:
    """A ``--depth 1`` remote, whose boundary (Bob's commit) looks like the writer of every
    plan: the first start refuses ``E_GIT``, keeps no clone and pushes nothing, pass after
    pass; once the remote serves the whole history the next pass goes on, and Alice's
    approval of the plan she wrote is refused while the agent's plan runs."""
    forge = Forge(tmp_path)
    forge.serve(forge.seed, depth=1)
    tip = forge.tip()
    for _ in range(2):
        _refused_shallow(forge.run())
        assert forge.tip() == tip
        assert not (tmp_path / "state" / "clone").exists()

    forge.serve(forge.seed)  # whole again
    first = forge.run()
    assert first.returncode == 0, first.stderr[-2000:]
    forge.approve(["greet", "own"])
    git(forge.seed, "push", "-q", str(forge.bare), "HEAD:refs/heads/main")
    result = forge.run()
    assert result.returncode == 0, result.stderr[-2000:]
    assert forge.ran() == ["greet"]
    assert "E_SELF_APPROVAL" in result.stderr
    assert "plangate: start plans/own" not in forge.subjects()


def test_a_remote_made_shallow_after_a_good_start_is_refused_while_its_history_is_cut_off(
    tmp_path: Path,
) -> None:
    """A good start on the whole history; then Alice approves, Bob commits, and the remote
    serves a ``--depth 1`` copy: Alice's approval lies behind the boundary, which the clone
    never saw. git rejects the fetch with a warning only (exit 0, the tracking ref left
    behind): every pass refuses ``E_GIT`` instead of going on with a stale tip, and nothing
    runs; once the remote is whole the approved plan runs once."""
    forge = Forge(tmp_path)
    forge.serve(forge.seed)
    first = forge.run()
    assert first.returncode == 0, first.stderr[-2000:]
    forge.approve(["greet"])
    (forge.seed / "notes.txt").write_text("more\n")
    commit_all(forge.seed, "more notes", BOB)
    forge.serve(forge.seed, depth=1)
    tip = forge.tip()
    for _ in range(2):
        _refused_shallow(forge.run())
        assert forge.ran() == [] and forge.tip() == tip

    forge.serve(forge.seed)
    result = forge.run()
    assert result.returncode == 0, result.stderr[-2000:]
    assert forge.ran() == ["greet"]
    assert forge.subjects()[:2] == ["plangate: complete plans/greet", "plangate: start plans/greet"]


def test_a_shallow_remote_on_history_the_clone_holds_whole_goes_on_and_a_shallow_clone_not(
    tmp_path: Path,
) -> None:
    """After a good start the remote serves a ``--depth 1`` copy whose boundary is Alice's
    approval, on the controller's own freeze: the clone holds everything before it, so
    nothing is cut off and the plan runs once. A ``shallow`` file in the controller's own
    clone (an older version's, or written by hand) stops every pass ``E_GIT`` naming it."""
    forge = Forge(tmp_path)
    forge.serve(forge.seed)
    first = forge.run()
    assert first.returncode == 0, first.stderr[-2000:]
    forge.approve(["greet"])
    forge.serve(forge.seed, depth=1)
    result = forge.run()
    assert result.returncode == 0, result.stderr[-2000:]
    assert forge.ran() == ["greet"]

    shallow = tmp_path / "state" / "clone" / "shallow"
    shallow.write_text(git(forge.seed, "rev-parse", "HEAD~3").strip() + "\n")
    for _ in range(2):
        result = forge.run()
        _refused_shallow(result)
        assert str(shallow) in result.stderr
    shallow.unlink()
    result = forge.run()
    assert result.returncode == 0, result.stderr[-2000:]
    assert forge.ran() == ["greet"]


def test_a_branch_named_like_the_watched_one_never_stops_the_push(tmp_path: Path) -> None:
    """Anyone who may create a branch pushes one named ``refs/heads/main`` (the ref
    ``refs/heads/refs/heads/main``), which git matches as a push destination for
    ``refs/heads/main`` too: the controller's pushes still land on ``main`` alone, the
    approved plan runs once, and the look-alike branch is neither moved nor read."""
    forge = Forge(tmp_path)
    forge.serve(forge.seed)
    assert forge.run().returncode == 0
    forge.approve(["greet"])
    git(forge.seed, "push", "-q", str(forge.bare), "HEAD:refs/heads/main")
    edit_status(forge.seed, "own", "approved")
    side = commit_all(forge.seed, "approve own on the look-alike", BOB)
    git(forge.seed, "push", "-q", str(forge.bare), "HEAD:refs/heads/refs/heads/main")
    for _ in range(2):
        result = forge.run()
        assert result.returncode == 0, result.stderr[-2000:]
    assert forge.ran() == ["greet"]
    assert forge.subjects()[:2] == ["plangate: complete plans/greet", "plangate: start plans/greet"]
    look_alike = "refs/heads/refs/heads/main"
    assert git(tmp_path, "--git-dir", str(forge.bare), "rev-parse", look_alike).strip() == side
