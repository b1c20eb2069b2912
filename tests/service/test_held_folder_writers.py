"""The controller's own writers respect a folder the history index holds (round 73): the
freeze step never freezes a plan whose folder is E_PLAN_AMBIGUOUS (an entry of any kind
claims its file's place), and the daemon converts no plan source into a PLAN.yml that would
sit beside such a claim, nor one of two sources that are one path on a case-insensitive or
HFS+ checkout. Nothing is committed; the row says why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from controller.service.reconcile import Controller
from tests.support.gitenv import AGENT, commit_all, git
from tests.support.gitkit import PLAN, make_config, subjects, write_plan

SOURCE = json.dumps(
    {
        "plan_version": 1,
        "goal": "Greet the world",
        "inputs": {"who": "world"},
        "steps": [{"step_id": "s1", "tool": "greet", "args": {"who": "${inputs.who}"}}],
    },
    indent=1,
)


@contextmanager
def controller(repo: Path) -> Iterator[Controller]:
    ctl = Controller(make_config(repo))
    try:
        yield ctl
    finally:
        ctl.close()


def _claim(repo: Path, folder: str, kind: str, name: str) -> None:
    """Put ``plans/<folder>/<name>`` there as ``kind`` (staged): a symlink, a gitlink (an
    uninitialised submodule), a file, or a folder holding a plan."""
    path = repo / "plans" / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "symlink":
        path.symlink_to("../q/PLAN.yml")
    elif kind == "file":
        path.write_text(PLAN)
    elif kind == "folder":
        path.mkdir()
        (path / "PLAN.yml").write_text(PLAN)
    elif kind == "gitlink":
        path.mkdir()
    git(repo, "add", "-A")
    if kind == "gitlink":
        head = git(repo, "rev-parse", "HEAD").strip()
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},plans/{folder}/{name}")


def _row(ctl: Controller, plan_id: str) -> dict[str, object] | None:
    return next((r for r in ctl.status() if r["plan"] == plan_id), None)


CLAIMS = [
    ("symlink", "plan.yml"),
    ("gitlink", "plan.yml"),
    ("folder", "PLAN.YML"),
    ("folder", "PLAN.y\u200cml"),
    ("file", "PLAN.yaml"),
    ("file", "plan.yml"),
]


@pytest.mark.parametrize(("kind", "name"), CLAIMS)
def test_a_plan_born_beside_a_claim_is_not_frozen_until_the_claim_goes(
    repo: Path, kind: str, name: str
) -> None:
    """Round 73: the first pass froze (and committed ``frozen:`` into) a plan whose folder
    every reader called E_PLAN_AMBIGUOUS; two pending files were frozen into PLAN.yaml."""
    write_plan(repo, "q")
    write_plan(repo, "p")
    _claim(repo, "p", kind, name)
    commit_all(repo, "agent: a plan beside a claim", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()
        row = _row(ctl, "plans/p")
    assert "plangate: freeze plans/q" in subjects(repo)
    assert "plangate: freeze plans/p" not in subjects(repo)
    assert "frozen:" not in git(repo, "show", "HEAD:plans/p/PLAN.yml")
    assert row is not None and "E_PLAN_AMBIGUOUS" in json.dumps(row), row
    git(repo, "rm", "-rqf", f"plans/p/{name}")
    commit_all(repo, "agent: the claim gone", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()
    assert "plangate: freeze plans/p" in subjects(repo)  # a plan again: frozen as any


@pytest.mark.parametrize(("kind", "name"), [*CLAIMS[:4], ("file", "plan.yaml")])
def test_a_source_beside_a_claim_waits_and_nothing_is_committed(
    repo: Path, kind: str, name: str
) -> None:
    """Round 73: ``PLAN.json`` beside a claim of the plan file's place was converted, the
    PLAN.yml committed beside the claim (and frozen): E_PLAN_AMBIGUOUS by the controller's
    own commit. As MCP ``submit`` (round 72): the source waits, nothing committed."""
    write_plan(repo, "q")
    (repo / "plans" / "s").mkdir(parents=True)
    (repo / "plans" / "s" / "PLAN.json").write_text(SOURCE)
    _claim(repo, "s", kind, name)
    commit_all(repo, "agent: a source beside a claim", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()
        row = _row(ctl, "plans/s")
        waiting = ctl._waiting.get("plans/s", "")
    assert not [s for s in subjects(repo) if s.endswith("plans/s")], subjects(repo)
    assert row is not None and row["problem"]["code"] == "E_PLAN_AMBIGUOUS", row  # type: ignore[index]
    assert waiting.startswith("E_PLAN_AMBIGUOUS"), waiting


@pytest.mark.parametrize(
    ("name", "held"),
    [("plan.JSON", "E_PLAN_AMBIGUOUS"), ("PLAN~1.JSO", "E_PLAN_AMBIGUOUS"),
     ("PLAN.json.", "E_PLAN_AMBIGUOUS"), ("PLAN.yml ", "E_PLAN_AMBIGUOUS"), ("notes.md", None)],
)  # fmt: skip
def test_a_held_source_row_says_held_as_a_held_plan_files_row_does(
    repo: Path, name: str, held: str | None
) -> None:
    """Round 74: the row of a source the converter holds had no ``held`` field (its code in
    ``problem`` only), so the page and ``/api/plan/`` read the folder's files again; names
    NTFS makes ``PLAN.json`` or ``PLAN.yml`` (its 8.3 short name, a trailing dot or space)
    hold it as a case twin does."""
    folder = repo / "plans" / "s"
    folder.mkdir(parents=True)
    (folder / "PLAN.json").write_text(SOURCE)
    (folder / name).write_text(SOURCE.replace("world", "moon"))
    commit_all(repo, "agent: a source and a file beside it", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()
        row = _row(ctl, "plans/s")
    if held is None:  # an honest neighbour: converted
        assert "plangate: convert plans/s" in subjects(repo), subjects(repo)
        return
    assert not [s for s in subjects(repo) if s.endswith("plans/s")], subjects(repo)
    assert row is not None and row["held"] == held, row
    assert str(row["reason"]).startswith(held) and name.strip() in str(row["reason"]), row


@pytest.mark.parametrize("twin", ["plan.JSON", "PLAN.json\ufeff", "PLAN.md"])
def test_two_sources_one_path_on_some_checkout_wait(repo: Path, twin: str) -> None:
    """docs/formats.md: "Two sources in one folder wait with E_PLAN_AMBIGUOUS", names
    compared by round 72's fold (round 73: ``plan.JSON`` beside ``PLAN.json`` was converted)."""
    folder = repo / "plans" / "s"
    folder.mkdir(parents=True)
    (folder / "PLAN.json").write_text(SOURCE)
    (folder / twin).write_text(SOURCE.replace("world", "moon"))
    commit_all(repo, "agent: two sources", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()
        row = _row(ctl, "plans/s")
    assert not [s for s in subjects(repo) if s.endswith("plans/s")], subjects(repo)
    assert row is not None and row["problem"]["code"] == "E_PLAN_AMBIGUOUS", row  # type: ignore[index]


@pytest.mark.parametrize(
    ("name", "code"), [("plan.json", "E_CONVERT_UNSUPPORTED"), ("PLAN.js\u200con", "E_UNSAFE_PATH")]
)
def test_a_source_alone_under_a_twin_name_is_not_converted_and_says_why(
    repo: Path, name: str, code: str
) -> None:
    """Round 73 (noted): such a source was neither converted nor listed: no row, no code."""
    folder = repo / "plans" / "s"
    folder.mkdir(parents=True)
    (folder / name).write_text(SOURCE)
    commit_all(repo, "agent: a source", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()
        row = _row(ctl, "plans/s")
    assert not [s for s in subjects(repo) if s.endswith("plans/s")], subjects(repo)
    assert row is not None and row["problem"]["code"] == code, row  # type: ignore[index]


def test_an_uncommitted_source_beside_a_claim_is_not_adopted(repo: Path) -> None:
    """Local mode: the working tree's folder is judged by the same rule."""
    write_plan(repo, "q")
    commit_all(repo, "agent: q", AGENT)
    folder = repo / "plans" / "s"
    folder.mkdir(parents=True)
    (folder / "PLAN.json").write_text(SOURCE)
    (folder / "plan.yml").symlink_to("../q/PLAN.yml")
    with controller(repo) as ctl:
        ctl.reconcile()
        waiting = ctl._waiting.get("plans/s", "")
    assert not [s for s in subjects(repo) if s.endswith("plans/s")], subjects(repo)
    assert (folder / "PLAN.json").exists() and not (folder / "PLAN.yml").exists()
    assert waiting.startswith("E_PLAN_AMBIGUOUS"), waiting


@pytest.mark.parametrize("beside", ["symlink", "PLAN.yaml"])
def test_an_uncommitted_plan_beside_a_claim_is_not_adopted(repo: Path, beside: str) -> None:
    """Local mode: adopting commits the agent's PLAN.yml; beside a committed symlink
    ``plan.yml`` (or an uncommitted second file) it would make the folder E_PLAN_AMBIGUOUS
    by the controller's own commit: it waits, nothing committed."""
    write_plan(repo, "q")
    folder = repo / "plans" / "s"
    folder.mkdir(parents=True)
    if beside == "symlink":
        (folder / "plan.yml").symlink_to("../q/PLAN.yml")
    commit_all(repo, "agent: q and a link", AGENT)
    (folder / "PLAN.yml").write_text(PLAN)
    if beside != "symlink":
        (folder / beside).write_text(PLAN)
    with controller(repo) as ctl:
        ctl.reconcile()
        waiting = ctl._waiting.get("plans/s", "")
    assert not [s for s in subjects(repo) if s.endswith("plans/s")], subjects(repo)
    assert waiting.startswith("E_PLAN_AMBIGUOUS"), waiting


@pytest.mark.parametrize("name", ["s ", "s\u200c", " s"])
def test_a_source_in_a_folder_held_for_its_name_has_a_held_row(repo: Path, name: str) -> None:
    """Round 75: ``plans/c-sp /PLAN.json`` had no status row at all (the converter skipped it
    for its name, the row's reader judged the entries only): the folder's name is part of
    its one verdict, so the row is held E_UNSAFE_PATH and nothing is converted."""
    folder = repo / "plans" / name
    folder.mkdir(parents=True)
    (folder / "PLAN.json").write_text(SOURCE)
    commit_all(repo, "agent: a source", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()
        row = _row(ctl, f"plans/{name}")
    assert not [s for s in subjects(repo) if "convert" in s], subjects(repo)
    assert row is not None and row["held"] == "E_UNSAFE_PATH", row
    assert str(row["reason"]).startswith("E_UNSAFE_PATH"), row
