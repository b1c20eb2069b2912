"""A plan's text is parsed once and validated once per step that needs it (issue 17).

From approval to outcome, every text the controller reads or writes (the approved file, the
start commit's, the engine's checkpoints, the outcome's) is parsed at most once, and only
the decision and the engine validate the plan: a 1,000-action plan cost 90 ms a parse and
200 ms a validation, several times per run.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from controller.plan import plans, yamlio
from tests.support.gitkit import (
    AGENT,
    approve,
    commit_all,
    head_plan,
    run_once,
    subjects,
    submitted,
    write_plan,
)


def test_a_run_parses_each_text_once_and_validates_twice(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    submitted(repo)
    approve(repo)
    yamlio._PARSED.clear()
    parsed: Counter[str] = Counter()
    validated: list[Any] = []
    build, check = yamlio._build, plans.check_document

    def counting_build(text: str, *args: Any) -> yamlio.YamlDoc:
        parsed[text] += 1
        return build(text, *args)

    def counting_check(data: Any, *args: Any) -> Any:
        validated.append(data)
        return check(data, *args)

    monkeypatch.setattr(yamlio, "_build", counting_build)
    monkeypatch.setattr(plans, "check_document", counting_check)
    run_once(repo)
    assert subjects(repo)[:2] == ["plangate: complete plans/greet", "plangate: start plans/greet"]
    assert head_plan(repo)["execution"]["status"] == "completed"
    plan_texts = {t: n for t, n in parsed.items() if t.startswith("# Written by the agent")}
    assert max(plan_texts.values()) == 1, plan_texts.values()
    # as frozen, as approved, as started, as completed; never the engine's checkpoints on
    # disk (the outcome recognises its last write without parsing it)
    assert sorted(_shape(t) for t in plan_texts) == [
        ("approved", False, "None"),
        ("completed", True, "completed"),
        ("executing", True, "None"),
        ("pending_approval", False, "None"),
    ]
    statuses = [d["plan"]["status"] for d in validated]
    assert statuses == ["approved", "executing"]  # the decision's, the engine's


def test_a_freeze_parses_the_plan_and_its_frozen_text_once(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history index reads the new version, the freeze validates it and reads back the
    text it writes: the plan's text and the frozen text once each, and no text the freeze
    does not write (the status check's would-be refusal is not read back: what is written
    is, before it is). A running controller: a first start's scan gives its parses back."""
    submitted(repo, "other")
    write_plan(repo, "greet")
    commit_all(repo, "add greet", AGENT)
    yamlio._PARSED.clear()
    parsed: Counter[str] = Counter()
    build = yamlio._build

    def counting_build(text: str, *args: Any) -> yamlio.YamlDoc:
        parsed[text] += 1
        return build(text, *args)

    monkeypatch.setattr(yamlio, "_build", counting_build)
    run_once(repo)
    assert subjects(repo)[0] == "plangate: freeze plans/greet"
    plan_texts = {t: n for t, n in parsed.items() if t.startswith("# Written by the agent")}
    assert sorted(_shape(t)[0] for t in plan_texts) == ["pending_approval", "pending_approval"]
    assert max(plan_texts.values()) == 1, plan_texts.values()
    assert all("validation" not in t for t in plan_texts)


def _shape(text: str) -> tuple[Any, ...]:
    data = yamlio.read_yaml(text).data
    execution = data.get("execution") or {}
    return data["plan"]["status"], "approval" in data, str(execution.get("status"))
