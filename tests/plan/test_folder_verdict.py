"""One verdict on a plan folder, for its plan file and its source alike (round 74):
``controller.plan.names.folder_verdict`` says why no reader reads a plan of a folder, and
``controller.plan.plans`` reads every path through it (``held_problem``), so ``validate``,
``hash``, ``show`` and ``freeze`` hold the source the daemon would not convert."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.plan.discovery import load_source
from controller.plan.names import folder_verdict, name_verdict, source_verdict
from controller.plan.plans import load_plan, plan_file_in, read_plan, repo_path
from tests.support.plan_factory import BASE_TEXT

#: a source beside an entry claiming the plan file's or its own place; E_PLAN_AMBIGUOUS
HELD = [
    ["PLAN.md", "plan.yml"],
    ["PLAN.json", "Plan.Yaml"],
    ["PLAN.md", "PLAN.y\u206fml"],
    ["PLAN.json", "PLAN.md"],
    ["PLAN.md", "plan.MD"],
    ["PLAN.md", "PLAN.m\u200dd"],
    ["PLAN.json", "plan.JSON"],
    ["PLAN.toon", "PLAN.json\ufeff"],
]


@pytest.mark.parametrize("names", HELD)
def test_a_source_beside_a_claim_or_a_twin_is_held(names: list[str]) -> None:
    found = folder_verdict("plans/x", names)
    assert found is not None and found[0] == "E_PLAN_AMBIGUOUS", found


@pytest.mark.parametrize(
    "names",
    [["PLAN.json"], ["PLAN.md", "EXECUTION_LOG.md"], ["PLAN.yml", "PLAN.json", "plan.JSON"],
     ["PLAN.yml"], ["notes.md", "PLAN.yml"], []],
)  # fmt: skip
def test_a_lone_source_or_a_plan_file_is_read(names: list[str]) -> None:
    """A plan file beside sources is the plan (the sources are no claim of its place)."""
    assert folder_verdict("plans/x", names) is None


def test_plan_file_claims_are_the_verdict_too() -> None:
    found = folder_verdict("plans/x", ["PLAN.yml", "plan.YML"])
    assert found is not None and found[0] == "E_PLAN_AMBIGUOUS"
    assert "PLAN.yml and plan.YML" in found[1]


def _folder(tmp_path: Path, names: list[str]) -> Path:
    folder = tmp_path / "plans" / "x"
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_text(json.dumps({"n": name}))
    return folder


@pytest.mark.parametrize("names", HELD)
def test_every_reader_of_the_folder_refuses_it(tmp_path: Path, names: list[str]) -> None:
    """Round 74: the folder's file (``plan_file_in``: one of two sources, or one beside a
    claim) is read, hashed and frozen by no reader: each answers E_PLAN_AMBIGUOUS."""
    folder = _folder(tmp_path, names)
    path = plan_file_in(folder)
    assert path.parent == folder, path  # a file of it, never the folder (an E_USAGE)
    for plan in (read_plan(path), load_plan(path), load_source(path)):
        assert [p.code for p in plan.problems] == ["E_PLAN_AMBIGUOUS"], plan.problems
        assert plan.hash is None or not plan.valid


def test_a_claim_beside_a_source_holds_a_path_naming_either(tmp_path: Path) -> None:
    folder = _folder(tmp_path, ["PLAN.md"])
    (folder / "plan.yml").symlink_to("../y/PLAN.yml")
    for path in (folder / "PLAN.md", folder / "plan.yml"):
        assert [p.code for p in read_plan(path).problems] == ["E_PLAN_AMBIGUOUS"], path


def test_a_lone_source_spelled_otherwise_says_its_code(tmp_path: Path) -> None:
    folder = _folder(tmp_path, ["plan.JSON"])
    path = plan_file_in(folder)
    assert path == folder / "plan.JSON"
    assert [p.code for p in read_plan(path).problems] == ["E_CONVERT_UNSUPPORTED"]


def test_an_honest_source_and_plan_file_still_read(tmp_path: Path) -> None:
    folder = tmp_path / "plans" / "ok"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_text(BASE_TEXT)
    (folder / "EXECUTION_LOG.md").write_text("# log\n")
    assert load_plan(plan_file_in(folder)).valid
    (folder / "PLAN.yml").unlink()
    (folder / "PLAN.md").write_text(BASE_TEXT)  # a model's reply: plain plan YAML
    assert plan_file_in(folder) == folder / "PLAN.md"
    assert read_plan(folder / "PLAN.md").problems == []


#: folder names the history index holds E_UNSAFE_PATH for themselves (round 75)
NAME_HELD = ["x ", " x", "x\u200czw", "x\u00a0y"]


@pytest.mark.parametrize("name", NAME_HELD)
def test_a_folder_held_for_its_name_is_the_verdict_first(name: str) -> None:
    """Round 75: the name verdict (the index's ``unsafe_name``) is part of the folder's one
    verdict, before any entry of it is looked at; a lone source there is held too."""
    for names in (["PLAN.yml"], ["PLAN.json"], ["PLAN.yml", "plan.YML"]):
        found = folder_verdict(f"plans/{name}", names)
        assert found is not None and found[0] == "E_UNSAFE_PATH", (names, found)
    held = source_verdict(f"plans/{name}", ["PLAN.json"])
    assert held is not None and held[0] == "E_UNSAFE_PATH", held
    assert folder_verdict("plans/x", ["PLAN.json"]) is None


def _git_folder(tmp_path: Path, name: str) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    folder = tmp_path / "plans" / name
    folder.mkdir(parents=True)
    return folder


@pytest.mark.parametrize("name", NAME_HELD)
def test_every_reader_refuses_a_folder_held_for_its_name(tmp_path: Path, name: str) -> None:
    """Round 75: ``validate``, ``hash``, ``show`` and ``freeze`` read ``plans/x /PLAN.yml`` and
    ``plans/x /PLAN.json`` as plans; the path relative to the work tree is judged."""
    folder = _git_folder(tmp_path, name)
    (folder / "PLAN.yml").write_text(BASE_TEXT)
    for plan in (read_plan(folder / "PLAN.yml"), load_plan(plan_file_in(folder))):
        assert [p.code for p in plan.problems] == ["E_UNSAFE_PATH"], plan.problems
    (folder / "PLAN.yml").unlink()
    (folder / "PLAN.json").write_text(json.dumps({"n": 1}))
    assert [p.code for p in load_source(folder / "PLAN.json").problems] == ["E_UNSAFE_PATH"]


def test_only_the_path_below_the_work_tree_is_judged(tmp_path: Path) -> None:
    """A blank in the name of a folder holding the repository names no plan: honest."""
    repo = tmp_path / "my work " / "repo"
    folder = _git_folder(repo, "ok")
    (folder / "PLAN.yml").write_text(BASE_TEXT)
    assert repo_path(folder / "PLAN.yml") == "plans/ok/PLAN.yml"
    assert load_plan(folder / "PLAN.yml").valid


@pytest.mark.parametrize("twin", ["fcase", "f\u200ccase", "FCASE.", "FCASE~1"])
def test_a_twin_folder_with_a_plan_file_holds_the_plan_for_every_reader(
    tmp_path: Path, twin: str
) -> None:
    """Round 75: ``plans/fcase/`` beside ``plans/FCASE/`` is one folder on a case-insensitive
    checkout (HFS+, NTFS for the others): ``validate``, ``hash``, ``show`` and ``freeze``
    read neither plan file (E_PLAN_AMBIGUOUS naming the twin), as the history index holds
    both; a twin folder with notes only, or a folder of another name, holds nothing."""
    plans = tmp_path / "plans"
    for name in ("FCASE", twin, "other"):
        (plans / name).mkdir(parents=True)
        (plans / name / "PLAN.yml").write_text(BASE_TEXT)
    for path in (plans / "FCASE" / "PLAN.yml", plans / twin / "PLAN.yml"):
        # a twin held for its own name (an ignorable character) says that first (r75heldnames)
        own = name_verdict(f"plans/{path.parent.name}")
        expected = own[0] if own is not None else "E_PLAN_AMBIGUOUS"
        for plan in (read_plan(path), load_plan(path)):
            assert [p.code for p in plan.problems] == [expected], plan.problems
            assert plan.hash is None or not plan.valid
    assert load_plan(plans / "other" / "PLAN.yml").valid
    (plans / twin / "PLAN.yml").rename(plans / twin / "notes.md")
    assert load_plan(plans / "FCASE" / "PLAN.yml").valid


UP = [("Team/x", "team/x"), ("A/b/c", "a/b/c"), ("g/H/x", "g/h/x")]
UP += [("longteamname/x", "longte~1/x")]  # an 8.3 short name one level up


@pytest.mark.parametrize(("base", "twin"), UP)
def test_a_twin_above_the_plan_folder_holds_the_plan_for_every_reader(
    tmp_path: Path, base: str, twin: str
) -> None:
    """Round 76: ``plans/team/x/`` beside ``plans/Team/x/`` (the twin ABOVE the plan's own
    folder; two levels up, in the middle, an 8.3 name) is one folder on some checkout:
    ``validate``, ``hash``, ``show`` and ``freeze`` read neither (E_PLAN_AMBIGUOUS naming
    the twin), as the history index holds both; the plans folder is compared as written."""
    for name in (base, twin, "Other/x"):
        (_git_folder(tmp_path, name) if name == base else tmp_path / "plans" / name).mkdir(
            parents=True, exist_ok=True
        )
        (tmp_path / "plans" / name / "PLAN.yml").write_text(BASE_TEXT)
    for one, other in ((base, twin), (twin, base)):
        plan = load_plan(tmp_path / "plans" / one / "PLAN.yml")
        assert [p.code for p in plan.problems] == ["E_PLAN_AMBIGUOUS"], plan.problems
        assert f"plans/{other}/PLAN.yml" in plan.problems[0].message
    assert load_plan(tmp_path / "plans" / "Other" / "x" / "PLAN.yml").valid
    (tmp_path / "Plans" / "Other" / "x").mkdir(parents=True)  # the plans folder's spelling
    (tmp_path / "Plans" / "Other" / "x" / "PLAN.yml").write_text(BASE_TEXT)
    # round 84: a plan file below another spelling of the plans folder claims the place of
    # the plan at that path (it is that file on a case-insensitive checkout), never a plan
    held = load_plan(tmp_path / "plans" / "Other" / "x" / "PLAN.yml")
    assert [p.code for p in held.problems] == ["E_PLAN_AMBIGUOUS"], held.problems
    (tmp_path / "Plans" / "Other" / "x" / "PLAN.yml").unlink()
    assert load_plan(tmp_path / "plans" / "Other" / "x" / "PLAN.yml").valid
    (tmp_path / "plans" / twin / "PLAN.yml").rename(tmp_path / "plans" / twin / "notes.md")
    assert load_plan(tmp_path / "plans" / base / "PLAN.yml").valid
