"""Every text argument of every command (a note, ``--as``, ``--base``...) is read by one rule:
bytes that are not UTF-8 are ``E_USAGE`` naming the argument, with a remedy, and nothing is
done (round 122, cli-nonutf8-note-internal-error: ``approve -m $'ok \\xc3'`` and ``reject -m
$'bad \\xff\\xfe'`` ended ``internal error: UnicodeEncodeError ... surrogates not allowed``
when the commit message was written). The arguments are found in the parser itself, so a
text argument added later is walked too. A path is a file's name (the operating system's
bytes): it keeps the path rules (a plan path that is not UTF-8 is ``E_UNSAFE_PATH``)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cli import PATH_ARGUMENTS, _build_parser
from tests.support.gitenv import AGENT, ALICE, commit_all, git, identity, run_cli
from tests.support.gitkit import write_plan

BAD = b"not now \xff\xfe"


def _text_arguments() -> list[tuple[str, argparse.Action, argparse.ArgumentParser]]:
    parser = _build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    found = []
    for command, each in sub.choices.items():
        for action in each._actions:
            takes_text = action.nargs != 0 and not action.choices and action.dest != "help"
            if takes_text and action.dest not in PATH_ARGUMENTS:
                found.append((command, action, each))
    return found


TEXTS = _text_arguments()


def _argv(command: str, target: argparse.Action, parser: argparse.ArgumentParser) -> list[bytes]:
    """``command`` with ``target`` given the bad bytes and every other required argument a
    plain value (a PATH: the frozen plan)."""
    argv = [command.encode()]
    for action in parser._actions:
        if action is target or not (action.required or not action.option_strings):
            continue
        if action.option_strings:
            argv += [action.option_strings[0].encode(), b"plain words"]
        else:
            argv.append(b"plans/greet")
    return [*argv, target.option_strings[0].encode(), BAD]


def test_the_walk_finds_the_text_arguments() -> None:
    named = {(c, a.option_strings[-1]) for c, a, _ in TEXTS}
    assert {("approve", "--message"), ("reject", "--message"), ("abort", "--message")} <= named
    assert {("check", "--as"), ("check", "--base"), ("check", "--head")} <= named
    assert ("audit", "--controller") in named


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _frozen_repo(tmp_path_factory.mktemp("texts"))


def _frozen_repo(root: Path) -> tuple[Path, Path]:
    """A repository with the agent's plan ``plans/greet`` frozen, and its config."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_plan(repo)
    commit_all(repo, "an agent's plan", AGENT)
    config = root / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {root / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    return repo, config


@pytest.mark.parametrize(
    "command,action,parser",
    TEXTS,
    ids=[f"{c}:{a.option_strings[-1]}" for c, a, _ in TEXTS],
)
def test_a_text_argument_that_is_not_utf8_is_a_usage_error(
    frozen: tuple[Path, Path],
    command: str,
    action: argparse.Action,
    parser: argparse.ArgumentParser,
) -> None:
    repo, config = frozen
    head = git(repo, "rev-parse", "HEAD")
    argv = [*_argv(command, action, parser), b"--config", os.fsencode(config)]
    done = subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"controller", *argv],
        cwd=repo,
        env={**os.environ, **identity(*(AGENT if command == "reject" else ALICE))},
        capture_output=True,
        timeout=120,
        check=False,
    )
    said = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert done.returncode == 2 and "internal error" not in said, said
    name = "/".join(action.option_strings)
    assert f"E_USAGE: {name} is not UTF-8 text: byte 0xff at character 9" in said, said
    assert "remedy: write it in UTF-8" in said, said
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == ""


def test_a_path_that_is_not_utf8_keeps_the_path_rule(frozen: tuple[Path, Path]) -> None:
    """A file's name is the operating system's bytes: not UTF-8, it is read as a path (and a
    plan folder so named is E_UNSAFE_PATH, with the rename remedy), not refused as text."""
    repo, config = frozen
    done = subprocess.run(
        [sys.executable, "-m", "controller", "approve", "--config", str(config),
         os.fsdecode(b"plans/n-\xff/PLAN.yml")],
        cwd=repo, env={**os.environ, **identity(*ALICE)}, capture_output=True, text=True,
        errors="replace", timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "E_UNSAFE_PATH" in done.stderr, done.stderr
    assert "not UTF-8 text" not in done.stderr


@pytest.mark.parametrize("kind", ["AUTHOR", "COMMITTER"])
@pytest.mark.parametrize("command", ["approve", "reject"])
def test_an_identity_that_is_not_utf8_is_a_usage_error(
    frozen: tuple[Path, Path], kind: str, command: str
) -> None:
    """A git identity given in the environment as bytes that are not UTF-8 (round 122, noted:
    ``GIT_AUTHOR_NAME=$'Al\\xffice' plangate approve`` was an internal error when the commit
    object was written): ``E_USAGE`` naming the identity, a remedy, nothing committed."""
    repo, config = frozen
    head = git(repo, "rev-parse", "HEAD")
    env = {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}
    who = AGENT if command == "reject" else ALICE
    env.update({os.fsencode(k): v.encode() for k, v in identity(*who).items()})
    env[f"GIT_{kind}_NAME".encode()] = b"Al\xffice"
    done = subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"controller", command.encode(), b"plans/greet",
         b"-m", b"a reason", b"--config", os.fsencode(config)],
        cwd=repo, env=env, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    said = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert done.returncode == 2 and "internal error" not in said, said
    assert f"E_USAGE: your git {kind.lower()} identity is not valid UTF-8" in said, said
    assert f"remedy: set GIT_{kind}_NAME" in said, said
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == ""


def test_an_identity_from_email_alone_is_gits(tmp_path: Path) -> None:
    """git takes the address from ``EMAIL`` when no ``user.email`` is set (git-commit(1),
    "COMMIT INFORMATION"); ``git var GIT_AUTHOR_IDENT`` says so. plangate's git children did
    not see ``EMAIL``: ``approve`` was refused "Author identity unknown" (round 122, noted)."""
    repo, config = _frozen_repo(tmp_path)
    bare = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "EMAIL"}
    env = {**bare, "EMAIL": "alice@example.com", "HOME": str(tmp_path),
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "controller", "approve", "plans/greet", "--config", str(config)],
        cwd=repo, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert git(repo, "log", "-1", "--format=%ae").strip() == "alice@example.com"
