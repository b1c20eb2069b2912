"""One bad entry costs that plan a coded error and never stalls others (SPEC §15; issue 11).

In one repo, beside an honest plan, with the real ``plangate run --once`` and real git: a
gitlink and a symlink committed where a PLAN.yml should be (E_UNSAFE_PATH), a 2 MB plan in
history (E_PLAN_TOO_LARGE, never parsed), a FIFO left in the working tree (never opened),
PLAN.yml and PLAN.yaml in one folder (E_PLAN_AMBIGUOUS, neither runs, until one is deleted),
and a CRLF plan, which is frozen and runs like any other (its line endings kept).
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.gitenv import commit_all, git, identity, run_cli

ALICE = ("Alice", "alice@example.com")
AGENT = ("Agent", "agent@example.com")

PLAN = textwrap.dedent(
    """\
    plan:
      name: "{slug}"
      task: "one bad entry"
      status: {status}
    available_tools:
      - name: greet
    actions:
      - id: 1
        tool: greet
        why: "say hello"
        params: {{who: "{slug}"}}
    """
)


def plan(slug: str, status: str = "pending_approval") -> str:
    return PLAN.format(slug=slug, status=status)


def run_once(config: Path) -> None:
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]


def rows(config: Path) -> dict[str, dict[str, Any]]:
    result = run_cli("status", "--json", "--config", str(config))
    return {row["plan"]: row for row in json.loads(result.stdout)}


def started(repo: Path, slug: str) -> bool:
    return f"plangate: start plans/{slug}" in git(repo, "log", "--format=%s").splitlines()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("bad")
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "initial", ("Owner", "owner@example.com"))
    config = root / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {root / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    plans = repo / "plans"
    for slug in ("control", "big", "amb", "amb-birth"):
        (plans / slug).mkdir(parents=True)
    (plans / "control" / "PLAN.yml").write_text(plan("control"))
    (plans / "crlf").mkdir()
    (plans / "crlf" / "PLAN.yml").write_bytes(plan("crlf").replace("\n", "\r\n").encode())
    (plans / "big" / "PLAN.yml").write_text(plan("big") + "# " + "x" * 2_000_000 + "\n")
    (plans / "amb" / "PLAN.yml").write_text(plan("amb-yml"))
    (plans / "amb" / "PLAN.yaml").write_text(plan("amb-yaml"))
    (plans / "amb-birth" / "PLAN.yml").write_text(plan("amb-birth-yml", "approved"))
    (plans / "amb-birth" / "PLAN.yaml").write_text(plan("amb-birth-yaml", "approved"))
    git(repo, "add", "-A")
    # a gitlink and a symlink where plan files should be, straight into the index
    missing = "1234567890abcdef1234567890abcdef12345678"
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{missing},plans/gitlink/PLAN.yml")
    target = (root / "target").as_posix().encode()
    sha = (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=repo, input=target, capture_output=True
        )
        .stdout.decode()
        .strip()
    )
    git(repo, "update-index", "--add", "--cacheinfo", f"120000,{sha},plans/symlink/PLAN.yml")
    git(repo, "commit", "-q", "-m", "plans", env=identity(*AGENT))
    os.mkfifo(plans / "control" / "NOTES.fifo")
    (plans / "fifo").mkdir()
    os.mkfifo(plans / "fifo" / "PLAN.yml")  # untracked, in the working tree only
    run_once(config)
    for slug in ("control", "crlf"):
        path = plans / slug / "PLAN.yml"
        path.write_bytes(path.read_bytes().replace(b"pending_approval", b"approved"))
        git(repo, "add", str(path))
    git(repo, "commit", "-q", "-m", "approve", env=identity(*ALICE))
    run_once(config)
    return repo, config


def test_the_honest_plan_ran(lab: tuple[Path, Path]) -> None:
    _repo, config = lab
    assert rows(config)["plans/control"]["status"] == "completed"


@pytest.mark.parametrize(
    ("slug", "code"),
    [
        ("gitlink", "E_UNSAFE_PATH"),
        ("symlink", "E_UNSAFE_PATH"),
        ("big", "E_PLAN_TOO_LARGE"),
        ("amb", "E_PLAN_AMBIGUOUS"),
        ("amb-birth", "E_PLAN_AMBIGUOUS"),
    ],
)
def test_a_bad_entry_costs_that_plan_a_coded_error(
    lab: tuple[Path, Path], slug: str, code: str
) -> None:
    repo, config = lab
    row = rows(config)[f"plans/{slug}"]
    # never frozen or started; a plan too large to read shows as `unreadable` (issue 12)
    assert row["status"] in (None, "unreadable") and row["hash"] is None
    assert any(note.startswith(code) for note in row["notes"]), row
    assert not started(repo, slug)


def test_a_fifo_in_the_working_tree_is_never_opened(lab: tuple[Path, Path]) -> None:
    repo, config = lab
    assert "plans/fifo" not in rows(config)  # run --once returned: it never blocked on it
    assert (repo / "plans" / "fifo" / "PLAN.yml").is_fifo()


def test_a_crlf_plan_is_frozen_and_runs_with_its_line_endings(lab: tuple[Path, Path]) -> None:
    repo, config = lab
    assert rows(config)["plans/crlf"]["status"] == "completed"
    committed = git(repo, "show", "HEAD:plans/crlf/PLAN.yml")
    text = (repo / "plans" / "crlf" / "PLAN.yml").read_bytes()
    assert b"frozen:" in text and b"\r\n" in text and b"\n" not in text.replace(b"\r\n", b"")
    assert "execution:" in committed


def test_deleting_one_of_two_plan_files_makes_the_other_a_plan_again(
    lab: tuple[Path, Path],
) -> None:
    repo, config = lab
    git(repo, "rm", "-q", "plans/amb/PLAN.yaml")
    git(repo, "commit", "-q", "-m", "keep the .yml", env=identity(*AGENT))
    run_once(config)
    row = rows(config)["plans/amb"]
    assert row["status"] == "pending_approval" and row["hash"] is not None
    assert "frozen:" in git(repo, "show", "HEAD:plans/amb/PLAN.yml")
