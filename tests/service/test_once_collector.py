"""``run --once`` sets what lives on aside from the cyclic collector while its jobs run, and
gives all of it back (round 83: a 1,000-action run's full collections walked the modules,
the history index and the parse cache's spans again and again, 0.1-0.3 ms an action)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from controller.service.reconcile import Controller
from tests.support.gitkit import approve, head_plan, run_once, submitted


def test_the_jobs_run_with_the_pass_set_aside_and_all_is_given_back(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    submitted(repo)
    approve(repo)
    assert gc.get_freeze_count() == 0
    seen: list[int] = []
    execute = Controller.execute

    def counting(self: Controller, *args: object, **kwargs: object) -> None:
        seen.append(gc.get_freeze_count())
        execute(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Controller, "execute", counting)
    run_once(repo)
    assert head_plan(repo)["execution"]["status"] == "completed"
    assert seen and all(count > 0 for count in seen)  # the pass's objects were set aside
    assert gc.get_freeze_count() == 0  # and are back: the next full collection walks them


def test_garbage_made_by_a_run_is_still_collected(repo: Path) -> None:
    """Nothing a job makes is set aside: a cycle it drops is found by a full collection
    after, as before (and so are the set-aside objects, back in the oldest generation)."""
    submitted(repo)
    approve(repo)
    gc.collect()
    run_once(repo)
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert gc.collect() == 0  # nothing left over for a second collection


def test_a_freeze_made_before_is_left_as_it_is(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that set objects aside itself (a pre-imported CLI server) keeps them so:
    run --once neither adds to its freeze nor gives it back."""
    submitted(repo)
    approve(repo)
    calls: list[str] = []
    monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
    gc.freeze()
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    try:
        run_once(repo)
        assert head_plan(repo)["execution"]["status"] == "completed"
        assert calls == []
        assert gc.get_freeze_count() > 0
    finally:
        monkeypatch.undo()
        gc.unfreeze()
