"""Helpers for the approval/controller tests: identities, a config, plans written and edited
the way agents and humans do it, and reading what the controller committed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import commit_all, git

from controller import settings
from controller.plan import yamlio

AGENT = ("Agent", "agent@example.com")
ALICE = ("Alice", "alice@example.com")
BOB = ("Bob", "bob@ops.example.com")
MALLORY = ("Mallory", "mallory@example.com")
BOT = ("plangate", "plangate@localhost")

PLAN = """\
# Written by the agent; this comment must survive every controller write.
plan:
  name: "Greet"
  task: "Say hello to the world"
  status: pending_approval
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: "say hello"
    params:
      who: world   # trailing comment
"""

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
    return git(repo, "log", "--format=%s").splitlines()


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
