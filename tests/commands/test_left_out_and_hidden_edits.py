"""A plan the working tree does not show as git holds it (round 116): left out by a sparse
checkout, edited and hidden by an index bit, or plainly edited. Every command says the same
cause, in its own words, with a remedy that works."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.gitenv import commit_all, git, identity, run_cli
from tests.support.gitkit import AGENT, ALICE, write_plan


def _frozen(repo: Path, tmp_path: Path, *slugs: str) -> Path:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\n"
        "tools: {greet: {kind: echo}}\n"
    )
    for slug in slugs:
        write_plan(repo, slug)
    commit_all(repo, "agent writes plans", AGENT)
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    return config


def _sparse(repo: Path) -> None:
    """``plans/in`` only (after the index's stat data is refreshed: a racily clean entry,
    the controller's write within the index's second, is left in the tree by git)."""
    time.sleep(1.1)
    git(repo, "update-index", "-q", "--really-refresh", check=False)
    git(repo, "sparse-checkout", "set", "plans/in")
    assert not (repo / "plans/out/PLAN.yml").exists(), git(repo, "ls-files", "-v")


def _cli(repo: Path, *args: str) -> tuple[int, str]:
    done = run_cli(*args, cwd=repo, env=identity(*ALICE))
    return done.returncode, done.stdout + done.stderr


#: each reader's arguments, and the command its remedy says to run again
READERS = [
    (("show", "plans/out"), "show"),
    (("show", "plans/out/PLAN.yml", "--json"), "show"),
    (("validate", "plans/out/PLAN.yml"), "validate"),
    (("hash", "plans/out"), "hash"),
    (("freeze", "--check", "plans/out"), "freeze --check"),
]


def test_every_reader_names_the_sparse_checkout_and_its_remedy_works(
    repo: Path, tmp_path: Path
) -> None:
    """Round 116, sparse-absent-plan-misdiagnosed: ``show``/``validate``/``hash``/``freeze
    --check`` of a plan the sparse checkout left out said "no such plan file", remedy "give a
    PLAN.yml path", while ``status`` listed it. Each says what ``approve`` says: on the
    branch, left out by the sparse checkout; the remedy it names brings the file in."""
    _frozen(repo, tmp_path, "in", "out")
    _sparse(repo)
    assert not (repo / "plans/out/PLAN.yml").exists()
    for argv, again in READERS:
        code, said = _cli(repo, *argv)
        assert code == 2 and "E_USAGE" in said, (argv, said)
        assert "not in this working tree: a sparse checkout left it out" in said, (argv, said)
        assert "git sparse-checkout add plans/out" in said and "no such plan" not in said
        assert f"then run `plangate {again}` again" in said, (argv, said)
    git(repo, "sparse-checkout", "add", "plans/out")  # the remedy, as written
    code, said = _cli(repo, "hash", "plans/out")
    assert code == 0 and said.startswith("sha256:"), said


@pytest.mark.parametrize("verb", ["approve", "reject", "abort"])
def test_a_left_out_plan_is_refused_in_the_commands_own_verb(
    repo: Path, tmp_path: Path, verb: str
) -> None:
    """Round 116, refusal-text-wrong-verb: ``reject``/``abort`` of a left-out plan ended
    their remedy "read it, then approve". Each ends in its own verb, nothing committed."""
    config = _frozen(repo, tmp_path, "in", "out")
    _sparse(repo)
    head = git(repo, "rev-parse", "HEAD")
    extra = ["-m", "no"] if verb == "reject" else []
    code, said = _cli(repo, verb, "plans/out", *extra, "--config", str(config))
    assert code == 2 and "sparse checkout" in said, said
    assert said.split("remedy:")[1].rstrip().endswith(f"then {verb}"), said
    assert git(repo, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("verb", ["approve", "reject", "abort"])
def test_an_edited_plan_is_refused_in_the_commands_own_words(
    repo: Path, tmp_path: Path, verb: str
) -> None:
    """Round 116, refusal-text-wrong-verb: ``reject``/``abort`` of a plan with an uncommitted
    edit answered "approving would not cover what you see"."""
    config = _frozen(repo, tmp_path, "dd")
    plan = repo / "plans/dd/PLAN.yml"
    plan.write_text(plan.read_text().replace("world", "EVIL"))
    extra = ["-m", "no"] if verb == "reject" else []
    code, said = _cli(repo, verb, "plans/dd", *extra, "--config", str(config))
    own = {"approve": "approving", "reject": "rejecting", "abort": "aborting"}
    assert code == 2 and f"uncommitted edits; {own[verb]} would not" in said, said
    assert not [w for v, w in own.items() if v != verb and w in said], said
    assert f"then {verb} again" in said, said


@pytest.mark.parametrize("bit", ["assume-unchanged", "skip-worktree"])
def test_an_edit_hidden_by_an_index_bit_names_the_bit_and_the_remedy_works(
    repo: Path, tmp_path: Path, bit: str
) -> None:
    """Round 116, hidden-index-bit-remedy-unworkable: an edit hidden from ``git status`` by
    ``git update-index --assume-unchanged``/``--skip-worktree``: ``approve`` said "commit or
    discard the edits first", which git could not do (status clean, ``git checkout --`` a
    no-op or an error). The refusal names the bit; its remedy, followed, restores the file
    and the approval goes through."""
    config = _frozen(repo, tmp_path, "hb")
    rel = "plans/hb/PLAN.yml"
    plan = repo / rel
    plan.write_text(plan.read_text().replace("world", "EVIL"))
    git(repo, "update-index", f"--{bit}", rel)
    assert git(repo, "status", "--porcelain") == ""
    code, said = _cli(repo, "approve", "plans/hb", "--config", str(config))
    assert code == 2 and f"marked {bit}" in said, said
    assert f"git update-index --no-{bit} -- {rel}" in said.split("remedy:")[1], said
    git(repo, "update-index", f"--no-{bit}", "--", rel)  # the remedy, step by step
    git(repo, "checkout", "--", rel)
    assert "EVIL" not in plan.read_text()
    code, said = _cli(repo, "approve", "plans/hb", "--config", str(config))
    assert code == 0, said
