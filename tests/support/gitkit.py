"""Helpers for the approval/controller tests: a config, plans written and edited the way
agents and humans do it, a controller over them, and reading what the controller committed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from controller import settings
from controller.plan import yamlio
from controller.service.reconcile import Controller
from tests.support.gitenv import AGENT, ALICE, BOB, BOT, MALLORY, commit_all, event_subjects, git
from tests.support.plantext import greet_plan

__all__ = ["AGENT", "ALICE", "BOB", "BOT", "MALLORY", "commit_all", "git"]

PLAN = "# Written by the agent; this comment must survive every controller write.\n" + greet_plan(
    "Greet", "Say hello to the world", "world   # trailing comment"
)

GATED = (
    PLAN
    + """\
  - id: 2
    tool: greet
    why: "say goodbye, after a second look"
    requires_approval: true
    params:
      who: "$<actions[1].outputs.who>"
"""
)
GATED = GATED.replace(
    "      who: world   # trailing comment\n",
    "      who: world   # trailing comment\n    outputs:\n      - name: who\n        path: $.who\n",
)


def make_config(repo: Path, **approval: Any) -> settings.Config:
    data = {
        "repo": str(repo),
        "approval": {"approvers": ["alice@example.com", "*@ops.example.com"], **approval},
        "tools": {"greet": {"kind": "echo"}},
    }
    return settings.config_from_data(data, repo.parent / "plangate.yml")


def write_plan(repo: Path, slug: str = "greet", text: str = PLAN) -> Path:
    folder = repo / "plans" / slug
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "PLAN.yml").write_text(text)
    return folder / "PLAN.yml"


def edit_status(repo: Path, slug: str, status: str) -> None:
    path = repo / "plans" / slug / "PLAN.yml"
    doc = yamlio.read_yaml(path.read_text())
    path.write_text(yamlio.set_scalar(doc, ("plan", "status"), status))


def approve(repo: Path, slug: str = "greet", who: tuple[str, str] = ALICE) -> str:
    edit_status(repo, slug, "approved")
    return commit_all(repo, f"approve {slug}", who)


def head_plan(repo: Path, slug: str = "greet") -> dict[str, Any]:
    text = git(repo, "show", f"HEAD:plans/{slug}/PLAN.yml")
    return dict(yamlio.read_yaml(text).data)


def subjects(repo: Path) -> list[str]:
    """Subjects newest first, without the controller's ``record policy`` commits (made on
    its first pass and on a config change; tests/approval/test_recorded_policy.py)."""
    return [s for s in event_subjects(repo) if s != POLICY_SUBJECT]


POLICY_SUBJECT = "plangate: record policy"


def trailers(repo: Path, rev: str = "HEAD") -> dict[str, str]:
    """The commit's trailers as ``git interpret-trailers --parse`` reads them."""
    import subprocess

    message = git(repo, "log", "-1", "--format=%B", rev)
    out = subprocess.run(
        ["git", "interpret-trailers", "--parse"],
        input=message,
        text=True,
        capture_output=True,
        check=True,
        cwd=repo,
    ).stdout
    return dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)


@contextmanager
def controller(repo: Path, **approval: Any) -> Iterator[Controller]:
    ctl = Controller(make_config(repo, **approval))
    try:
        yield ctl
    finally:
        ctl.close()


def status_row(repo: Path, slug: str = "greet") -> dict[str, Any]:
    """One controller pass, then the plan's status row (with its notes)."""
    with controller(repo) as ctl:
        ctl.run_once()
        rows = {str(r["plan"]): r for r in ctl.status(reasons=True)}
    return rows.get(f"plans/{slug}", {})


def submitted(
    repo: Path, slug: str = "greet", who: tuple[str, str] = AGENT, **approval: Any
) -> None:
    """A plan committed by ``who`` and frozen by the controller."""
    write_plan(repo, slug)
    commit_all(repo, f"add {slug}", who)
    with controller(repo, **approval) as ctl:
        assert ctl.reconcile() == []
    assert head_plan(repo, slug)["frozen"]["hash"].startswith("sha256:")


def run_once(repo: Path, **approval: Any) -> None:
    with controller(repo, **approval) as ctl:
        ctl.run_once()
