"""``plangate validate``, ``hash``, ``show`` and ``freeze`` read a working-tree plan file as
``git add`` would store it (round 80): under ``working-tree-encoding`` (UTF-16, ISO-8859-1),
``eol=crlf`` or ``ident``, the hash they print is the one the controller freezes from the
commit, and ``freeze`` writes the file back in its checkout's spelling (``git status`` clean
after ``git add``), or refuses with its code when git would not give it back. Before, they
read the raw bytes as UTF-8: a UTF-16 plan was "not UTF-8 text" on the CLI while the
controller froze and ran it, and a reviewer's ``show`` could not display it at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.gitenv import commit_all, git, run_cli
from tests.support.gitkit import PLAN, head_plan, write_plan

CAFE = PLAN.replace("Say hello", "Say café")
CASES = {
    "working-tree-encoding=UTF-16": CAFE.encode("utf-16"),
    "working-tree-encoding=ISO-8859-1": CAFE.encode("latin-1"),
    "eol=crlf": CAFE.replace("\n", "\r\n").encode("utf-8"),
    "ident": ("# $Id$\n" + CAFE).encode("utf-8"),
}


def _checkout(repo: Path, attr: str) -> Path:
    """A plan committed under ``attr`` and checked out again by git (the bytes an approver's
    clone holds)."""
    plan = write_plan(repo)
    plan.write_bytes(CASES[attr])
    (repo / ".gitattributes").write_text(f"plans/*/PLAN.yml {attr}\n")
    commit_all(repo, "agent writes a plan")
    plan.unlink()
    git(repo, "checkout", "-q", "--", ".")
    return plan


def _controller_hash(repo: Path, tmp_path: Path) -> str:
    config = tmp_path / "plangate.yml"
    config.write_text(f"repo: {repo}\ntools: {{greet: {{kind: echo}}}}\n")
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    return str(head_plan(repo)["frozen"]["hash"])


@pytest.mark.parametrize("attr", list(CASES))
def test_hash_and_validate_print_what_the_controller_freezes(
    repo: Path, tmp_path: Path, attr: str
) -> None:
    plan = _checkout(repo, attr)
    hashed = run_cli("hash", str(plan), cwd=repo)
    assert hashed.returncode == 0, hashed.stderr
    checked = run_cli("validate", "--json", str(plan), cwd=repo)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    [record] = [json.loads(line) for line in checked.stdout.splitlines()]
    assert record["valid"] and record["hash"] == hashed.stdout.strip()
    assert _controller_hash(repo, tmp_path) == hashed.stdout.strip()


@pytest.mark.parametrize("attr", ["working-tree-encoding=UTF-16", "ident"])
def test_show_prints_the_text_git_stores(repo: Path, attr: str) -> None:
    plan = _checkout(repo, attr)
    shown = run_cli("show", str(plan), cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert "Say café" in shown.stdout


@pytest.mark.parametrize("attr", list(CASES))
def test_freeze_writes_the_checkout_git_would_write(repo: Path, attr: str) -> None:
    plan = _checkout(repo, attr)
    frozen = run_cli("freeze", str(plan), cwd=repo)
    assert frozen.returncode == 0, frozen.stderr
    git(repo, "add", "plans")
    stored = git(repo, "show", ":plans/greet/PLAN.yml")
    assert "frozen:" in stored and "Say café" in stored  # git reads it back as UTF-8 text
    written = plan.read_bytes()
    plan.unlink()
    git(repo, "checkout", "-q", "--", "plans")
    assert plan.read_bytes() == written  # byte for byte what git checks out
    assert git(repo, "diff") == ""  # git calls the written file clean
    again = run_cli("freeze", "--check", str(plan), cwd=repo)
    assert again.returncode == 0, again.stdout + again.stderr


def test_freeze_refuses_a_checkout_git_would_not_give_back(repo: Path) -> None:
    """A character the encoding cannot spell: writing it would leave a file git reads as
    another text. Refused with its code; the file is left as it was."""
    plan = _checkout(repo, "working-tree-encoding=ISO-8859-1")
    text = CAFE.replace("Say café", "Say 日本").encode("utf-8")
    (repo / ".gitattributes").write_text("")
    plan.write_bytes(text)
    commit_all(repo, "a plan latin-1 cannot spell")
    (repo / ".gitattributes").write_text("plans/*/PLAN.yml working-tree-encoding=ISO-8859-1\n")
    before = plan.read_bytes()
    frozen = run_cli("freeze", str(plan), cwd=repo)
    assert frozen.returncode != 0
    assert "E_" in frozen.stderr and "Traceback" not in frozen.stderr, frozen.stderr
    assert plan.read_bytes() == before


def test_a_plan_outside_any_working_tree_is_read_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "loose" / "plans" / "greet"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_bytes(CAFE.encode("utf-16"))
    checked = run_cli("validate", str(folder / "PLAN.yml"), cwd=tmp_path)
    assert checked.returncode == 1 and "not UTF-8 text" in checked.stderr


def test_convert_reads_and_writes_as_git_would(repo: Path) -> None:
    """A PLAN.json saved in UTF-16 under its attribute converts; the PLAN.yml it writes into a
    folder whose attribute says UTF-16 is written in UTF-16, and git stores the same text."""
    source = repo / "drafts" / "PLAN.json"
    source.parent.mkdir()
    plan = {
        "plan": {"name": "Greet", "task": "Say café", "status": "pending_approval"},
        "available_tools": [{"name": "greet"}],
        "actions": [{"id": 1, "tool": "greet", "why": "hello", "params": {"who": "world"}}],
    }
    source.write_bytes(json.dumps(plan, ensure_ascii=False).encode("utf-16"))
    (repo / ".gitattributes").write_text(
        "drafts/PLAN.json working-tree-encoding=UTF-16\n"
        "plans/**/PLAN.yml working-tree-encoding=UTF-16\n"
    )
    done = run_cli("convert", str(source), "-o", str(repo / "plans"), cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    [written] = list((repo / "plans").glob("*/PLAN.yml"))
    assert "Say café" in written.read_bytes().decode("utf-16")
    git(repo, "add", "-A")
    rel = written.relative_to(repo).as_posix()
    assert "Say café" in git(repo, "show", f":{rel}")
    assert git(repo, "status", "--porcelain").strip().startswith("A")


@pytest.mark.parametrize("name", ["PLAN.md", "PLAN.json"])
def test_freeze_never_writes_into_a_plan_source(tmp_path: Path, name: str) -> None:
    """A PLAN.md holding one fenced YAML block (or a PLAN.json) is converted and frozen by
    the controller as PLAN.yml: ``freeze`` validates it, prints the hash the controller will
    freeze and leaves the file byte for byte (before: it wrote ``frozen:`` into the source)."""
    git(tmp_path, "init", "-q", "-b", "main")
    folder = tmp_path / "plans" / "greet"
    folder.mkdir(parents=True)
    text = f"```yaml\n{CAFE}```\n" if name == "PLAN.md" else json.dumps({"plan": {"name": "x"}})
    (folder / name).write_text(text)
    frozen = run_cli("freeze", str(folder), cwd=tmp_path)
    checked = run_cli("validate", str(folder), cwd=tmp_path)
    assert (folder / name).read_text() == text
    assert frozen.returncode == checked.returncode
    if name == "PLAN.md":
        assert frozen.returncode == 0, frozen.stderr
        assert "not written" in frozen.stdout
        assert checked.stdout.split("(")[-1].rstrip(")\n") in frozen.stdout  # the same hash
        assert run_cli("freeze", "--check", str(folder), cwd=tmp_path).returncode == 0
    else:
        assert "not frozen" in frozen.stdout and "E_" in frozen.stderr


def test_freeze_of_a_source_beside_a_plan_file_warns_as_validate_does(tmp_path: Path) -> None:
    """A PLAN.md beside a PLAN.yml is no plan: the controller runs the PLAN.yml and never
    converts the source. ``freeze`` and ``hash`` of the source say so (round 81: they printed
    a hash the controller would never freeze, with no warning)."""
    git(tmp_path, "init", "-q", "-b", "main")
    folder = tmp_path / "plans" / "side"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_text(PLAN)
    source = f"```yaml\n{CAFE}```\n"  # a markdown file holds its plan in a fence
    (folder / "PLAN.md").write_text(source)
    frozen = run_cli("freeze", str(folder / "PLAN.md"), cwd=tmp_path)
    hashed = run_cli("hash", str(folder / "PLAN.md"), cwd=tmp_path)
    for said in (frozen, hashed):
        assert said.returncode == 0, said.stderr
        assert "PLAN.yml is beside it" in said.stderr
    assert "would not convert it" in frozen.stdout and "sha256:" not in frozen.stdout
    assert (folder / "PLAN.md").read_text() == source


@pytest.mark.parametrize(("one", "other"), [("pair", "PAIR"), ("shortname-long", "SHORTN~1")])
def test_readers_hold_a_source_whose_twin_folder_holds_a_source(
    tmp_path: Path, one: str, other: str
) -> None:
    """``plans/pair/PLAN.md`` beside ``plans/PAIR/PLAN.json`` (or an 8.3 short name): one
    folder on some checkout, and the controller converts neither. ``validate``, ``hash``,
    ``freeze --check`` and ``show`` of each say E_PLAN_AMBIGUOUS (round 82: "valid" and a
    hash the controller never freezes); the PLAN.yml beside a twin source is still the plan."""
    git(tmp_path, "init", "-q", "-b", "main")
    sources = {one: ("PLAN.md", CAFE), other: ("PLAN.json", json.dumps({"plan": {"name": "x"}}))}
    for folder, (name, text) in sources.items():
        (tmp_path / "plans" / folder).mkdir(parents=True)
        (tmp_path / "plans" / folder / name).write_text(text)
    for folder, (name, _text) in sources.items():
        path = str(tmp_path / "plans" / folder / name)
        for verb in (("validate",), ("hash",), ("freeze", "--check"), ("show",)):
            said = run_cli(*verb, path, cwd=tmp_path)
            assert "E_PLAN_AMBIGUOUS" in said.stdout + said.stderr, (verb, folder, said)
            assert "sha256:" not in said.stdout, (verb, folder, said.stdout)
    write_plan(tmp_path, other)  # a plan file beside a twin source: the plan file is the plan
    (tmp_path / "plans" / other / sources[other][0]).unlink()
    plan = run_cli("validate", str(tmp_path / "plans" / other / "PLAN.yml"), cwd=tmp_path)
    assert plan.returncode == 0 and "E_PLAN_AMBIGUOUS" not in plan.stdout + plan.stderr, plan
