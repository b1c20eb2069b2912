"""In a shared working tree the controller commits only bytes it produced (SPEC §7, §15).

An agent sharing the checkout keeps rewriting EXECUTION_LOG.md and the ``execution:`` block
of PLAN.yml while the plan runs and after its last action, right up to the controller's
outcome commit; or it swaps the log or the plan for a symlink to a key outside the repo. The
controller builds the committed blobs from the engine's own state, so none of that reaches
the branch, and it never reads through a symlink. Real ``plangate run --once``, real git.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from controller.plan import yamlio
from tests.support.gitenv import commit_all, git, run_cli

# Rewrites the log and the execution block as fast as it can until told to stop: whatever
# the controller re-reads from the working tree after the engine's last write is forged. The
# agent is a process of its own beside the controller (since round 88 a helper its tool left
# behind dies with the tool's call, so the agent's tool step only says it forges).
FORGER = """\
import os, sys, time
folder, stop = sys.argv[1:3]
log, plan = os.path.join(folder, "EXECUTION_LOG.md"), os.path.join(folder, "PLAN.yml")
if sys.argv[3:] == ["tool"]:
    print('{"forging": true}')
    sys.exit(0)
end = time.time() + 20
while time.time() < end and not os.path.exists(stop):
    try:
        with open(log, "w") as f:
            f.write("# FORGED: every action succeeded, approved by the CEO\\n")
        text = open(plan).read()
        if "execution:" in text:
            head = text[: text.index("execution:")]
            with open(plan, "w") as f:
                f.write(head + "execution:\\n  status: FORGED\\n  actions: []\\n")
    except OSError:
        pass
    time.sleep(0.0005)
"""

SWAPPER = """\
import os, sys
folder, target, which = sys.argv[1:4]
path = os.path.join(folder, which)
if os.path.lexists(path):
    os.remove(path)
os.symlink(target, path)
print('{"swapped": true}')
"""

PLAN = textwrap.dedent(
    """\
    plan:
      name: "shared tree"
      task: "an agent shares the working tree"
      status: pending_approval
    available_tools:
      - name: agent
      - name: greet
    actions:
      - id: 1
        tool: agent
        why: "the agent's step"
        params: {{}}
      - id: 2
        tool: greet
        why: "say hello"
        params: {{who: "{slug}"}}
    """
)


def setup(tmp_path: Path, repo: Path, argv: list[str]) -> tuple[Path, Path]:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\n"
        f"tools:\n  greet: {{kind: echo}}\n  agent: {{kind: exec, argv: {json.dumps(argv)}}}\n"
    )
    folder = repo / "plans" / "shared"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_text(PLAN.format(slug="shared"))
    (repo / "plans" / "bystander").mkdir()
    (repo / "plans" / "bystander" / "PLAN.yml").write_text(
        PLAN.format(slug="bystander").replace("tool: agent", "tool: greet")
    )
    commit_all(repo, "plans")
    return config, folder


def run_once(config: Path) -> None:
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]


def approve(repo: Path) -> None:
    for path in (repo / "plans").rglob("PLAN.yml"):
        if not path.is_symlink():
            path.write_text(
                path.read_text().replace("status: pending_approval", "status: approved")
            )
    commit_all(repo, "approve", ("Alice", "alice@example.com"))


def controller_patches(repo: Path) -> str:
    return git(repo, "log", "--author=plangate@localhost", "-p", "--text", "--format=%H %s")


def test_a_log_and_execution_block_rewritten_during_the_run_are_never_committed(
    tmp_path: Path, repo: Path
) -> None:
    stop = tmp_path / "stop"
    forger = tmp_path / "forger.py"
    forger.write_text(FORGER)
    folder = repo / "plans" / "shared"
    setup(tmp_path, repo, [sys.executable, str(forger), str(folder), str(stop), "tool"])
    config = tmp_path / "plangate.yml"
    run_once(config)
    approve(repo)
    agent = subprocess.Popen([sys.executable, str(forger), str(folder), str(stop)])
    try:
        run_once(config)
    finally:
        stop.write_text("")
        agent.wait(timeout=60)
    # A pass that read the plan mid-rewrite waits ("uncommitted edits") rather than overwrite
    # it; the next pass commits the outcome the journal holds. Either way: never the forgery.
    time.sleep(0.2)  # the forger polls its stop file every 0.5 ms
    run_once(config)
    patches = controller_patches(repo)
    assert "FORGED" not in patches
    assert "plangate: complete plans/shared" in git(repo, "log", "--format=%s")
    committed = git(repo, "show", "HEAD:plans/shared/EXECUTION_LOG.md")
    assert "FORGED" not in committed and "completed" in committed
    execution = git(repo, "show", "HEAD:plans/shared/PLAN.yml")
    assert "status: completed" in execution and "FORGED" not in execution


@pytest.mark.parametrize("which", ["EXECUTION_LOG.md", "PLAN.yml"])
def test_a_file_swapped_for_a_symlink_is_never_read_or_committed(
    tmp_path: Path, repo: Path, which: str
) -> None:
    key = tmp_path / "keys" / "deploy_key"
    key.parent.mkdir()
    key.write_text("DEPLOYKEY-SECRET-0123456789\n")
    swapper = tmp_path / "swapper.py"
    swapper.write_text(SWAPPER)
    folder = repo / "plans" / "shared"
    config, _ = setup(tmp_path, repo, [sys.executable, str(swapper), str(folder), str(key), which])
    run_once(config)
    approve(repo)
    run_once(config)
    patches = controller_patches(repo)
    assert "DEPLOYKEY" not in patches
    assert "120000" not in git(repo, "ls-tree", "-r", "HEAD", "plans/")
    assert key.read_text() == "DEPLOYKEY-SECRET-0123456789\n"
    assert "plangate: complete plans/bystander" in git(repo, "log", "--format=%s")
    if which == "EXECUTION_LOG.md":  # the controller's own log replaced the link
        assert "plangate: complete plans/shared" in git(repo, "log", "--format=%s")
    else:  # the plan waits, its outcome uncommitted: nothing is read through the link
        assert "plangate: complete plans/shared" not in git(repo, "log", "--format=%s")
        assert os.path.islink(folder / "PLAN.yml")


def test_read_regular_never_follows_a_link_or_opens_a_fifo(tmp_path: Path) -> None:
    from controller.errors import UnsafePath
    from controller.fsutil import read_regular

    (tmp_path / "file").write_text("ok")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    os.mkfifo(tmp_path / "fifo")
    assert read_regular(tmp_path / "file") == b"ok"
    for name in ("link", "fifo"):
        with pytest.raises(UnsafePath):
            read_regular(tmp_path / name)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing")


HOLD = """\
import os, sys, time
folder = sys.argv[1]
open(os.path.join(folder, "HELD"), "w").close()
end = time.time() + 60
while time.time() < end and not os.path.exists(os.path.join(folder, "GO")):
    time.sleep(0.02)
print('{"held": true}')
"""


def test_a_run_leaves_nothing_uncommitted_for_a_humans_commit_a_to_carry(
    tmp_path: Path, repo: Path
) -> None:
    """Round 81 (ca_clean): in local mode a run writes no progress into the shared working
    tree, so while it runs ``git status`` is clean, and Alice's abort made with a plain ``git
    commit -a`` carries her status edit alone: the controller honours it, the second action
    never runs, and the fresh-clone audit finds nothing on her commit (it flagged the run's
    uncommitted ``execution:`` block she carried as ``owned-block-changed``)."""
    gate = tmp_path / "gate"
    gate.mkdir()
    hold = tmp_path / "hold.py"
    hold.write_text(HOLD)
    config, folder = setup(tmp_path, repo, [sys.executable, str(hold), str(gate)])
    run_once(config)  # frozen
    approve(repo)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    argv = [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)]
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            end = time.time() + 60
            while not (gate / "HELD").exists() and time.time() < end and proc.poll() is None:
                time.sleep(0.02)
            assert (gate / "HELD").exists(), proc.stderr.read().decode()[-2000:]
            assert git(repo, "status", "--porcelain") == ""  # nothing of the run's, uncommitted
            plan = folder / "PLAN.yml"
            plan.write_text(plan.read_text().replace("status: executing", "status: aborted", 1))
            git(repo, "commit", "-q", "-a", "-m", "abort", env=ALICE_ENV)
            mine = git(repo, "show", "--format=", "--unified=0", "HEAD")
            changed = [
                line
                for line in mine.splitlines()
                if line[:1] in "+-" and not line.startswith(("+++", "---"))
            ]
            assert changed == ["-  status: executing", "+  status: aborted"], mine
        finally:
            (gate / "GO").write_text("go")
            _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and b"Traceback" not in err, err[-2000:]
    data = yamlio.read_yaml(git(repo, "show", "HEAD:plans/shared/PLAN.yml")).data
    assert data["plan"]["status"] == "aborted", data
    assert [a["status"] for a in data["execution"]["actions"]] == ["succeeded", "pending"], data
    assert git(repo, "status", "--porcelain") == ""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    report = json.loads(run_cli("audit", "--json", cwd=clone).stdout)
    assert [f for f in report["findings"] if f["plan"] == "plans/shared"] == [], report
    runs = [e for e in report["executions"] if e.get("plan") == "plans/shared"]
    assert [(r["outcome"], r["approval_valid"]) for r in runs] == [("abort", True)], runs


ALICE_ENV = {
    "GIT_AUTHOR_NAME": "Alice",
    "GIT_AUTHOR_EMAIL": "alice@example.com",
    "GIT_COMMITTER_NAME": "Alice",
    "GIT_COMMITTER_EMAIL": "alice@example.com",
}
