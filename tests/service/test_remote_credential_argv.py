"""Remote mode with a password in ``remote.url`` (round 128, ``credential-in-git-argv``):
the controller ran ``git clone ... http://deploy:PW@127.0.0.1:<port>/plans.git`` and git
``git-remote-http origin <that URL>`` on every fetch and push, the password in
``/proc/<pid>/cmdline`` for every process on the host to read, though every record hides
it (docs/execution.md, "Redaction"). Real controller passes against a real smart-HTTP
server behind basic auth, every command line on the host read while they run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.authgit import Watcher, hold_url_in_config, served
from tests.support.gitenv import git
from tests.support.gitkit import AGENT, ALICE, approve, commit_all, head_plan, write_plan

USER = "deploy"
PW = "Qm3Vz8Lt5Rk2Wx7Hp"
#: the migration test's own (tests beside it run in parallel, each watching the host)
OLD_PW = "Bv6Hs1Kx4Wq9Zd2Mf"


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    """A served bare repository (``<root>/plans.git``) and a person's clone of it (by path:
    the person's own git is no part of what is watched)."""
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    (seed / "README").write_text("plans\n")
    commit_all(seed, "initial", ("Owner", "owner@example.com"))
    root = tmp_path / "served"
    root.mkdir()
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(root / "plans.git"))
    human = tmp_path / "human"
    git(tmp_path, "clone", "-q", str(root / "plans.git"), str(human))
    return root, human


def _config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "plangate.yml"
    path.write_text(
        f"remote: {{url: '{url}', branch: main}}\n"
        f"state_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: ['alice@example.com']}\n"
        "tools: {greet: {kind: echo}}\n"
    )
    return path


def _pass(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _push(human: Path, message: str) -> None:
    commit_all(human, message, AGENT if message.startswith("add") else ALICE)
    git(human, "push", "-q", "origin", "main")


def test_remote_mode_over_http_with_a_password_never_shows_it_on_a_command_line(
    tmp_path: Path,
) -> None:
    root, human = _setup(tmp_path)
    with served(root, USER, PW) as (base, sent):
        config = _config(tmp_path, base.replace("http://", f"http://{USER}:{PW}@") + "plans.git")
        write_plan(human)
        _push(human, "add plan")
        with Watcher([PW]) as watcher:
            first = _pass(config)  # clone, freeze, push
            git(human, "pull", "-q", "--ff-only")
            approve(human, who=ALICE)
            git(human, "push", "-q", "origin", "main")
            second = _pass(config)  # fetch, start, run, complete, push
    assert first.returncode == 0, first.stderr[-2000:]
    assert second.returncode == 0, second.stderr[-2000:]
    assert not watcher.found, sorted(watcher.found)[:3]
    assert any("git-remote-http" in line for line in watcher.processes)
    assert f"{USER}:{PW}" in sent
    git(human, "pull", "-q", "--ff-only")
    assert head_plan(human)["plan"]["status"] == "completed"
    config_text = (tmp_path / "state" / "clone" / "config").read_text()
    assert PW not in config_text and f"{USER}@" not in config_text


def test_a_clone_made_with_the_password_in_its_config_forgets_it(tmp_path: Path) -> None:
    """A state directory from before the fix: its clone's ``remote.origin.url`` holds
    ``http://deploy:PW@...``; the next pass writes it without the userinfo, and its fetch
    and push name no password."""
    root, human = _setup(tmp_path)
    with served(root, USER, OLD_PW) as (base, _sent):
        full = base.replace("http://", f"http://{USER}:{OLD_PW}@") + "plans.git"
        config = _config(tmp_path, full)
        assert _pass(config).returncode == 0
        clone = tmp_path / "state" / "clone"
        hold_url_in_config(clone, full)  # as a clone made before held it
        git(human, "pull", "-q", "--ff-only")  # the first pass's policy record
        write_plan(human)
        _push(human, "add plan")
        with Watcher([OLD_PW]) as watcher:
            again = _pass(config)
    assert again.returncode == 0, again.stderr[-2000:]
    assert not watcher.found, sorted(watcher.found)[:3]
    assert OLD_PW not in (clone / "config").read_text()
    assert git(clone, "config", "remote.origin.url").strip() == base + "plans.git"
    git(human, "pull", "-q", "--ff-only")
    assert head_plan(human)["plan"]["status"] == "pending_approval"
