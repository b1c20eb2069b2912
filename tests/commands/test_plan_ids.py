"""The plan id a CLI reader names the controller's row by (``plan_id_for``): the path as
named, never through a link inside the repository (round 97, ``show-link-status``)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from controller.commands._shared import plan_id_for


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "real" / "repo"
    (repo / "plans" / "q").mkdir(parents=True)
    (repo / "plans" / "q" / "PLAN.yml").write_text("plan: {}\n")
    (repo / "plans" / "s").symlink_to("q")
    return repo


def test_a_linked_plan_folder_is_its_own_path_not_its_target(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    config = SimpleNamespace(repo_path=lambda: repo)
    assert plan_id_for(repo / "plans/s/PLAN.yml", config) == "plans/s"  # type: ignore[arg-type]
    assert plan_id_for(repo / "plans/q/PLAN.yml", config) == "plans/q"  # type: ignore[arg-type]


def test_the_way_to_the_repository_may_pass_a_link(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (tmp_path / "via").symlink_to(repo)
    config = SimpleNamespace(repo_path=lambda: repo)
    via = tmp_path / "via"
    assert plan_id_for(via / "plans/q/PLAN.yml", config) == "plans/q"  # type: ignore[arg-type]
    assert plan_id_for(via / "plans/s/PLAN.yml", config) == "plans/s"  # type: ignore[arg-type]
    linked = SimpleNamespace(repo_path=lambda: via)  # the config names the link
    assert plan_id_for(repo / "plans/s/PLAN.yml", linked) == "plans/s"  # type: ignore[arg-type]
