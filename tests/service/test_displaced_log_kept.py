"""A person's edit of the run's record, written over by the controller's commit, is kept.

The controller commits only bytes it produced (its log, its ``execution:`` block: round 95,
an agent's forgery never rides on its seal), and its checkout of that commit writes them
into the shared working tree and index. Round 122 (``log-edit-overwritten``): after a kill
in action 2, a person's line in ``EXECUTION_LOG.md`` (in the working tree, or staged) was
gone after the restart's outcome, with nothing left anywhere. Now the displaced bytes are
saved first under ``.git/plangate-displaced/<plan folder>/<stamp>-<commit>/`` (the
working tree's file as ``EXECUTION_LOG.md``, the index's as ``EXECUTION_LOG.md.staged``),
named in the status row (``displaced``) and in the log (``worktree_displaced``); a tree
holding only the controller's own bytes displaces nothing (docs/execution.md).

Real ``plangate run --once`` processes, real git, a real SIGKILL of the controller by its
tool in action 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.gitenv import commit_all, git

TOOL = r"""
import json, os, signal, sys, time
t, d = sys.argv[1], os.environ["T_DIR"]
mark = os.path.join(d, "killed-" + t)
if t.endswith("-2") and not os.path.exists(mark) and os.environ.get("T_KILL"):
    open(mark, "w").close()
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(1)
print(json.dumps({"ok": True, "t": t}))
"""

PLAN = """\
plan:
  name: "{slug}"
  task: "two steps"
  status: pending_approval
available_tools:
  - name: k
actions:
  - id: 1
    tool: k
    why: "one"
    params: {{t: "{slug}-1"}}
  - id: 2
    tool: k
    why: "two"
    params: {{t: "{slug}-2"}}
"""

LINE = "person log edit"
ALICE = ("Alice", "alice@example.com")


def _lab(tmp_path: Path, repo: Path) -> Path:
    tool = tmp_path / "k.py"
    tool.write_text(TOOL)
    argv = json.dumps([sys.executable, str(tool), "{t}"])
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\n"
        f"tools: {{k: {{kind: exec, argv: {argv}, env: {{T_DIR: '{tmp_path}'}}}}}}\n"
    )
    return config


def _run(config: Path, kill: bool = False) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("T_KILL", None)
    if kill:
        env["T_KILL"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _status(config: Path, plan: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-m", "controller", "status", "--json", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    data = json.loads(out)
    rows = data if isinstance(data, list) else data.get("plans", data.get("rows", []))
    return next(row for row in rows if row.get("plan") == plan)


def _approve(repo: Path, slug: str) -> None:
    path = repo / "plans" / slug / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, f"approve {slug}", ALICE)


def _killed_in_action_2(tmp_path: Path, repo: Path, slug: str) -> Path:
    config = _lab(tmp_path, repo)
    (repo / "plans" / slug).mkdir(parents=True)
    (repo / "plans" / slug / "PLAN.yml").write_text(PLAN.format(slug=slug))
    commit_all(repo, "propose", ("Agent", "agent@example.com"))
    assert _run(config).returncode == 0  # frozen
    _approve(repo, slug)
    killed = _run(config, kill=True)
    assert killed.returncode == -9, killed.stderr[-600:]
    return config


def _saved(repo: Path, row: dict[str, object]) -> dict[str, bytes]:
    names = row.get("displaced")
    assert isinstance(names, list)
    return {Path(name).name: (repo / name).read_bytes() for name in names}


def test_a_log_edit_and_a_staged_one_are_saved_and_named(tmp_path: Path, repo: Path) -> None:
    config = _killed_in_action_2(tmp_path, repo, "x")
    log = repo / "plans" / "x" / "EXECUTION_LOG.md"
    staged = f"# staged by a person\n{LINE} (staged)\n".encode()
    log.write_bytes(staged)
    git(repo, "add", "plans/x/EXECUTION_LOG.md")  # the staged version
    tree = f"# edited by a person\n{LINE} (working tree)\n".encode()
    log.write_bytes(tree)  # and the working tree's, another one

    again = _run(config)
    assert again.returncode == 0, again.stderr[-800:]
    assert "worktree_displaced" in again.stderr + again.stdout
    row = _status(config, "plans/x")
    assert row["status"] == "failed", row  # E_ACTION_IN_DOUBT: action 2 never re-run
    saved = _saved(repo, row)
    assert saved == {"EXECUTION_LOG.md": tree, "EXECUTION_LOG.md.staged": staged}, saved
    for name in row["displaced"]:  # type: ignore[union-attr]
        assert str(name).startswith(".git/plangate-displaced/plans%2Fx/"), name
    # the controller's commit holds its own record, none of the person's bytes
    committed = git(repo, "show", "HEAD:plans/x/EXECUTION_LOG.md")
    assert LINE not in committed and LINE not in git(repo, "show", "HEAD:plans/x/PLAN.yml")
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_clean_tree_displaces_nothing(tmp_path: Path, repo: Path) -> None:
    config = _killed_in_action_2(tmp_path, repo, "y")
    again = _run(config)
    assert again.returncode == 0, again.stderr[-800:]
    assert "worktree_displaced" not in again.stderr + again.stdout
    row = _status(config, "plans/y")
    assert row["status"] == "failed" and row["displaced"] == [], row
    assert not (repo / ".git" / "plangate-displaced").exists()
    # the next run's records displace nothing either
    (repo / "plans" / "z").mkdir(parents=True)
    (repo / "plans" / "z" / "PLAN.yml").write_text(PLAN.format(slug="z"))
    commit_all(repo, "propose z", ("Agent", "agent@example.com"))
    assert _run(config).returncode == 0
    _approve(repo, "z")
    assert _run(config).returncode == 0
    assert _status(config, "plans/z")["status"] == "completed"
    assert not (repo / ".git" / "plangate-displaced").exists()


def test_an_untracked_chmod_000_log_is_kept(tmp_path: Path, repo: Path) -> None:
    """The untracked log a person wrote after the kill (the start wrote none), then made
    ``chmod 000``: saved byte for byte where it can be read, else a note of what it was."""
    config = _killed_in_action_2(tmp_path, repo, "w")
    log = repo / "plans" / "w" / "EXECUTION_LOG.md"
    log.write_text(f"{LINE}\n")
    log.chmod(0)
    again = _run(config)
    assert again.returncode == 0, again.stderr[-800:]
    row = _status(config, "plans/w")
    names = row["displaced"]
    assert isinstance(names, list) and len(names) == 1, row
    saved = repo / names[0]
    if saved.name == "EXECUTION_LOG.md":  # read: saved as it was
        assert saved.read_bytes() == f"{LINE}\n".encode()
    else:  # not readable by this user: a note
        assert saved.name == "EXECUTION_LOG.md.note", saved
    assert LINE not in git(repo, "show", "HEAD:plans/w/EXECUTION_LOG.md")
