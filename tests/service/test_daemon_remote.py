"""``plangate run`` in remote mode against a ``git daemon`` on 127.0.0.1: its own clone,
fetching by polling and on a signed webhook, pushing its commits back."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from controller.service.webhook import github_signature
from tests.support.daemonkit import free_port, git_daemon, running_daemon, subjects, wait_until
from tests.support.gitenv import commit_all, git, identity
from tests.support.gitkit import ALICE, approve, write_plan

SECRET = "remote-test-secret"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A bare repo served by git daemon; yields (bare path, clone URL)."""
    srv = tmp_path / "srv"
    bare = srv / "plans.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    with git_daemon(srv) as base:
        yield bare, f"{base}/plans.git"


def human_clone(tmp_path: Path, url: str) -> Path:
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", url, str(work))
    (work / "README").write_text("plans\n")
    commit_all(work, "initial", ("Owner", "owner@example.com"))
    git(work, "push", "-q", "origin", "HEAD:main")
    return work


def write_config(tmp_path: Path, url: str, poll: float, webhook_port: int | None = None) -> Path:
    config = tmp_path / "plangate.yml"
    hook = f"webhook: {{listen: '127.0.0.1:{webhook_port}'}}\n" if webhook_port else ""
    config.write_text(
        textwrap.dedent(
            f"""\
            remote: {{url: "{url}", branch: main, poll_interval: {poll}}}
            state_dir: {tmp_path / "state"}
            approval: {{approvers: ["alice@example.com"]}}
            tools: {{greet: {{kind: echo}}}}
            """
        )
        + hook
    )
    return config


def wait_on_remote(bare: Path, subject: str, timeout: float = 30) -> None:
    wait_until(lambda: subject in subjects(bare, "main"), timeout, f"{subject!r} pushed")


def pull(work: Path) -> None:
    git(work, "pull", "-q", "--ff-only", "origin", "main", env=identity(*ALICE))


def test_polling_freeze_approve_execute(served: tuple[Path, str], tmp_path: Path) -> None:
    bare, url = served
    work = human_clone(tmp_path, url)
    config = write_config(tmp_path, url, poll=0.5)
    with running_daemon(config) as daemon:
        daemon.wait_started()
        pull(work)  # the controller's first pass pushed its recorded policy
        write_plan(work)
        commit_all(work, "agent proposes a plan")
        git(work, "push", "-q", "origin", "main")
        wait_on_remote(bare, "plangate: freeze plans/greet")
        pull(work)
        approve(work, who=ALICE)
        git(work, "push", "-q", "origin", "main")
        wait_on_remote(bare, "plangate: complete plans/greet")
        assert daemon.stop() == 0
    pull(work)
    assert "status: completed" in (work / "plans/greet/PLAN.yml").read_text()
    assert "alice@example.com" in (work / "plans/greet/EXECUTION_LOG.md").read_text()
    assert subjects(bare, "main")[:2] == [
        "plangate: complete plans/greet",
        "plangate: start plans/greet",
    ]


def test_webhook_triggers_fetch_and_bad_signatures_do_not(
    served: tuple[Path, str], tmp_path: Path
) -> None:
    bare, url = served
    work = human_clone(tmp_path, url)
    port = free_port()
    config = write_config(tmp_path, url, poll=3600, webhook_port=port)
    hook = f"http://127.0.0.1:{port}/webhook"

    def notify(secret: str) -> httpx.Response:
        body = b'{"ref": "refs/heads/main"}'
        headers = {
            "X-GitHub-Event": "push",
            "Content-Type": "application/json",
            "X-Hub-Signature-256": github_signature(secret.encode(), body),
        }
        return httpx.post(hook, content=body, headers=headers)

    env = {"PLANGATE_WEBHOOK_SECRET": SECRET}
    with running_daemon(config, env=env) as daemon:
        daemon.wait_started()
        pull(work)  # the controller's first pass pushed its recorded policy
        write_plan(work)
        commit_all(work, "agent proposes a plan")
        git(work, "push", "-q", "origin", "main")
        assert notify("forged").status_code == 403
        daemon.wait_event("webhook.refused")
        assert notify(SECRET).status_code == 202
        wait_on_remote(bare, "plangate: freeze plans/greet")  # poll is an hour: the hook did it
        pull(work)
        approve(work, who=ALICE)
        git(work, "push", "-q", "origin", "main")
        assert notify(SECRET).status_code == 202
        wait_on_remote(bare, "plangate: complete plans/greet")
        assert daemon.stop() == 0
    passes = [e for e in daemon.events() if e.get("event") == "reconcile.done"]
    assert all(
        "webhook:github" in e["reasons"]
        or "start-up" in e["reasons"]
        or any(r.startswith("finished:") for r in e["reasons"])
        for e in passes
    )
