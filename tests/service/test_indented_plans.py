"""A plan file indented as a whole is frozen, refused and run as any plan (round 74).

A root block mapping may be indented (every top-level key at column 1: the same YAML). The
controller appended its ``frozen:`` block at column 0, so the freeze waited with
``E_YAML_PARSE`` and Alice's approval was answered by a ``plangate: refuse`` commit whose file
the reader refused. With the real ``plangate run --once``: every commit of the controller
leaves each file readable, its blocks at the file's own column, and the approved plan runs.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from controller.plan import yamlio
from tests.support.gitenv import commit_all, event_subjects, git, run_cli

ALICE = ("Alice", "alice@example.com")
MALLORY = ("Mallory", "mallory@example.com")
PLAN = textwrap.indent(
    textwrap.dedent(
        """\
        # an indented plan
        plan:
          name: "{slug}"
          task: "say hello"
          status: pending_approval
        available_tools:
          - name: greet
        actions:
          - id: 1
            tool: greet
            why: "say hello"
            params: {{who: "{slug}"}}"""
    ),
    " ",
)


def _read(repo: Path, slug: str, ref: str = "HEAD") -> dict:
    text = git(repo, "show", f"{ref}:plans/{slug}/PLAN.yml")
    return yamlio.read_yaml(text, slug).data


def _every_version_reads(repo: Path, slug: str) -> None:
    for sha in git(repo, "log", "--format=%H", "--", f"plans/{slug}/PLAN.yml").split():
        _read(repo, slug, sha)  # raises E_YAML_PARSE on a version the reader refuses


def test_an_indented_plan_is_frozen_refused_and_run_readable(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "initial", ("Owner", "owner@example.com"))
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    for slug in ("ok", "other"):
        (repo / "plans" / slug).mkdir(parents=True)
        (repo / "plans" / slug / "PLAN.yml").write_text(PLAN.format(slug=slug))
    commit_all(repo, "plans")
    assert run_cli("run", "--once", "--config", str(config), timeout=120).returncode == 0
    for slug in ("ok", "other"):
        assert "hash" in _read(repo, slug)["frozen"], slug
        assert "\n frozen:\n   hash: " in (repo / "plans" / slug / "PLAN.yml").read_text()
    for slug, who in (("ok", ALICE), ("other", MALLORY)):
        path = repo / "plans" / slug / "PLAN.yml"
        path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
        commit_all(repo, f"approve {slug}", who)

    result = run_cli("run", "--once", "--config", str(config), timeout=120)

    assert result.returncode == 0, result.stderr[-2000:]
    assert _read(repo, "ok")["plan"]["status"] == "completed"
    assert _read(repo, "ok")["execution"]["status"] == "completed"
    assert _read(repo, "other")["plan"]["status"] != "approved"
    assert "plangate: refuse plans/other" in event_subjects(repo)
    for slug in ("ok", "other"):
        _every_version_reads(repo, slug)
