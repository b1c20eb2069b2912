"""``plangate approve``/``reject``/``abort`` sign when the person asks (``--sign``) or when
her own git config says so (system, global, ``GIT_CONFIG_*``), never because the shared
repository's ``.git/config`` says ``commit.gpgSign=true``: in local mode the agent writes that
file, and a signature nobody asked for failed every decision on the approver's missing key
(round 122, agent-gpgsign-blocks-human-commands: ``E_GIT: git commit-tree -S: gpg failed to
sign the data``, remedy "see git's message"). A signing failure's remedy names the setting
that asked for the signature."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gitenv import AGENT, ALICE, commit_all, git, identity, run_cli
from tests.support.gitkit import head_plan, write_plan

SLUGS = ("ap", "rj", "ab", "sg", "gl")


@pytest.fixture
def frozen(repo: Path, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    for slug in SLUGS:
        write_plan(repo, slug)
    commit_all(repo, "agent plans", AGENT)
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    # the agent's settings in the shared .git/config; no key anywhere (an empty GNUPGHOME)
    git(repo, "config", "--local", "commit.gpgSign", "true")
    git(repo, "config", "--local", "gpg.program", "false")
    (tmp_path / "gnupg").mkdir(mode=0o700)
    env = {**identity(*ALICE), "GNUPGHOME": str(tmp_path / "gnupg")}
    return repo, config, env


def _cli(repo: Path, config: Path, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """Exit code, all it said, and the remedy line of a refusal."""
    done = run_cli(*args, "--config", str(config), cwd=repo, env=env)
    said = done.stdout + done.stderr
    remedy = next((ln for ln in said.splitlines() if ln.strip().startswith("remedy:")), "")
    return done.returncode, said, remedy


def _signed(repo: Path) -> bool:
    return "\ngpgsig " in git(repo, "cat-file", "commit", "HEAD")


def test_the_repositorys_gpgsign_never_makes_a_decision_sign(
    frozen: tuple[Path, Path, dict[str, str]],
) -> None:
    repo, config, env = frozen
    for args in (
        ("approve", "plans/ap"),
        ("reject", "plans/rj", "-m", "not now"),
        ("approve", "plans/ab"),
        ("abort", "plans/ab", "-m", "stop it"),
    ):
        before = git(repo, "rev-parse", "HEAD")
        code, said, _ = _cli(repo, config, env, *args)
        assert code == 0, (args, said)
        assert git(repo, "rev-parse", "HEAD") != before and not _signed(repo), args
        assert git(repo, "log", "-1", "--format=%ae").strip() == ALICE[1]
    assert [head_plan(repo, s)["plan"]["status"] for s in ("ap", "rj", "ab")] == [
        "approved",
        "rejected",
        "aborted",
    ]
    assert git(repo, "status", "--porcelain") == ""


def test_a_signature_asked_for_is_made_and_its_failure_names_the_setting(
    frozen: tuple[Path, Path, dict[str, str]],
) -> None:
    repo, config, env = frozen
    before = git(repo, "rev-parse", "HEAD")
    # --sign: git signs (and fails here: no key), the remedy names the key's settings
    code, said, remedy = _cli(repo, config, env, "approve", "--sign", "plans/sg")
    assert code == 2 and "E_GIT: git commit-tree -S" in said, said
    assert "--sign" in remedy and "user.signingKey" in remedy, said
    # her own config's commit.gpgSign (the environment's command scope): signed, and named
    env_gl = {
        **env,
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "commit.gpgSign",
        "GIT_CONFIG_VALUE_0": "true",
    }
    code, said, remedy = _cli(repo, config, env_gl, "approve", "plans/gl")
    assert code == 2 and "E_GIT: git commit-tree -S" in said, said
    assert "commit.gpgSign" in remedy and "--show-origin" in remedy, said
    assert git(repo, "rev-parse", "HEAD") == before and git(repo, "status", "--porcelain") == ""
    # with the repository's setting gone, the same refusals stand: it was never the cause
    git(repo, "config", "--local", "--unset", "commit.gpgSign")
    assert _cli(repo, config, env, "approve", "--sign", "plans/sg")[0] == 2
    assert _cli(repo, config, env_gl, "approve", "plans/gl")[0] == 2
    assert _cli(repo, config, env, "approve", "plans/gl")[0] == 0
