"""Round 75: a plan folder the controller holds for its NAME (a name that begins or ends
with a blank, a hidden character: ``E_UNSAFE_PATH``, "rename the folder") is held by every
CLI command, the writers included, by the one folder verdict
(:func:`controller.plan.names.folder_verdict`, :func:`controller.plan.plans.name_problem`):
nothing read, written or committed, and no command trims the path it is given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.gitenv import ALICE, commit_all, git, identity, run_cli
from tests.support.gitkit import write_plan

NAMES = ["greet ", " greet", "gr\u200ceet"]
COMMANDS = [
    ("approve",),
    ("approve", "--force"),
    ("reject", "-m", "no"),
    ("abort",),
    ("freeze",),
    ("show",),
    ("hash",),
    ("validate",),
]


def _held(repo: Path, name: str) -> str:
    write_plan(repo, "greet")  # the base the held name reads as
    write_plan(repo, name)
    commit_all(repo, "agent: plans")
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: "-".join(a))
def test_every_command_holds_a_folder_held_for_its_name(
    repo: Path, name: str, args: tuple[str, ...]
) -> None:
    head = _held(repo, name)
    done = run_cli(*args[:1], f"plans/{name}", *args[1:], cwd=repo, env=identity(*ALICE))
    assert done.returncode != 0, done
    assert "E_UNSAFE_PATH" in done.stderr and "rename the folder" in done.stderr, done.stderr
    assert "sha256:" not in done.stdout + done.stderr, done
    assert "\u200c" not in done.stdout + done.stderr  # shown escaped
    assert git(repo, "rev-parse", "HEAD").strip() == head  # no commit
    assert git(repo, "status", "--porcelain").strip() == ""  # nothing written


def test_the_base_beside_it_still_reads_and_commits(repo: Path) -> None:
    """The control: ``plans/greet`` beside ``plans/ greet`` (a leading blank: no checkout
    makes the two one folder) is a plan like any other; beside ``plans/greet `` (NTFS drops
    the trailing blank: one folder there) it is held as its twin's base (r75twinfold)."""
    _held(repo, " greet")
    assert run_cli("hash", "plans/greet", cwd=repo).stdout.startswith("sha256:")
    done = run_cli("reject", "plans/greet", "-m", "no", cwd=repo, env=identity(*ALICE))
    assert done.returncode == 0 and done.stdout.startswith("rejected plans/greet "), done
    _held(repo, "greet ")
    twin = run_cli("hash", "plans/greet", cwd=repo)
    assert twin.returncode != 0 and "E_PLAN_AMBIGUOUS" in twin.stderr, twin


def test_convert_refuses_a_source_in_a_folder_held_for_its_name(repo: Path) -> None:
    """``plangate convert "plans/c-sp /PLAN.json"`` printed the PLAN.yml the daemon never
    converts; the control ``plans/c-ok/PLAN.json`` converts."""
    step = {"step_id": "s1", "tool": "greet", "args": {"who": "world"}}
    source = json.dumps({"plan_version": 1, "goal": "Greet the world", "steps": [step]})
    for name in ("c-sp ", "c-ok"):
        (repo / "plans" / name).mkdir(parents=True)
        (repo / "plans" / name / "PLAN.json").write_text(source)
    done = run_cli("convert", "plans/c-sp /PLAN.json", cwd=repo)
    assert done.returncode != 0 and "E_UNSAFE_PATH" in done.stderr, done
    assert "actions:" not in done.stdout, done.stdout
    done = run_cli("convert", "plans/c-ok/PLAN.json", cwd=repo)
    assert "actions:" in done.stdout, done


@pytest.mark.parametrize(("base", "twin"), [("Team/x", "team/x"), ("A/b/c", "a/b/c"), ("F", "f")])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: "-".join(a))
def test_every_reader_holds_a_plan_beside_a_twin_above_its_folder(
    repo: Path, base: str, twin: str, args: tuple[str, ...]
) -> None:
    """Round 76: ``plans/team/x`` beside ``plans/Team/x`` (one folder on a case-insensitive
    checkout, the twin ABOVE the plan's own folder; two levels up) is held E_PLAN_AMBIGUOUS
    by every reader, naming the twin, as the row holds it: nothing read, hashed, written
    or committed (``show``, ``validate``, ``hash`` and ``freeze`` looked one level up;
    ``plans/f`` of ``plans/F``, round 75, the control of the same rule); the writers too
    (``approve``, ``reject``, ``abort`` checked the folder's name only: ``reject plans/F``
    beside ``plans/f`` committed a rejection into a held plan)."""
    write_plan(repo, base)
    write_plan(repo, twin)
    commit_all(repo, "agent: plans")
    head = git(repo, "rev-parse", "HEAD").strip()
    done = run_cli(*args[:1], f"plans/{base}", *args[1:], cwd=repo, env=identity(*ALICE))
    assert done.returncode != 0, done
    assert "E_PLAN_AMBIGUOUS" in done.stderr and f"plans/{twin}/PLAN.yml" in done.stderr, done
    assert "sha256:" not in done.stdout + done.stderr, done
    assert git(repo, "rev-parse", "HEAD").strip() == head  # no commit
    assert git(repo, "status", "--porcelain").strip() == ""  # nothing written


@pytest.mark.parametrize(("base", "file"), [("fy", "fy\\PLAN.yml"), ("fc", "FC\\PLAN.yml"),
                                            ("fu/x", "fu\\x\\PLAN.yml"),
                                            ("fm/x", "fm/x\\PLAN.yml")])  # fmt: skip
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: "-".join(a))
def test_every_reader_holds_a_plan_beside_a_backslash_file_twin(
    repo: Path, base: str, file: str, args: tuple[str, ...]
) -> None:
    """Round 77: the FILE ``plans/fy\\PLAN.yml`` is ``plans/fy/PLAN.yml`` on git for Windows
    (``names.split_files``): ``plans/fy`` is held E_PLAN_AMBIGUOUS by every reader, naming
    the file, as the row holds it; nothing read, hashed, written or committed (``approve``
    and ``reject -m`` committed into it, ``show``, ``validate``, ``hash`` printed its hash)."""
    write_plan(repo, base)
    twin = repo / "plans" / file
    twin.parent.mkdir(parents=True, exist_ok=True)
    twin.write_text((repo / "plans" / base / "PLAN.yml").read_text().replace("Greet", "Tw"))
    commit_all(repo, "agent: plans")
    head = git(repo, "rev-parse", "HEAD").strip()
    done = run_cli(*args[:1], f"plans/{base}", *args[1:], cwd=repo, env=identity(*ALICE))
    assert done.returncode != 0, done
    assert "E_PLAN_AMBIGUOUS" in done.stderr and f"plans/{file}" in done.stderr, done
    assert "sha256:" not in done.stdout + done.stderr, done
    assert git(repo, "rev-parse", "HEAD").strip() == head  # no commit
    assert git(repo, "status", "--porcelain").strip() == ""  # nothing written
