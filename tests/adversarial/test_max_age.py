"""Property: ``max_age`` cannot be dodged (SPEC §5 E_PLAN_EXPIRED).

Attack: the agent freezes the plan itself (``plangate freeze``) and commits it with a clock of
its choosing: a committer date far in the future (and ``frozen.at`` to match) makes a plan
look younger than it is, for ever. Controls: an honest freeze runs; an agent freeze dated in
the past is expired. Config ``max_age: 1h``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text, play
from test_round2_execution_kit import shared


def frozen_by_agent(date: str, at: str | None = None) -> object:
    def step(lab: Lab, vid: str) -> None:
        path = lab.write(vid, plan_text(vid))
        result = lab.cli("freeze", "--config", str(lab.config), str(path))
        assert result.returncode == 0, result.stderr
        if at is not None:
            text = path.read_text()
            start = text.index("  at: ")
            end = text.index("\n", start)
            path.write_text(text[:start] + f"  at: '{at}'" + text[end:])
        lab.extra_env = {"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date}  # type: ignore[attr-defined]
        try:
            lab.commit(f"add {vid}", AGENT)
        finally:
            lab.extra_env = {}  # type: ignore[attr-defined]

    return step


def approve_dated(date: str) -> object:
    def step(lab: Lab, vid: str) -> None:
        lab.extra_env = {"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date}  # type: ignore[attr-defined]
        try:
            lab.approve(vid, ALICE)
        finally:
            lab.extra_env = {}  # type: ignore[attr-defined]

    return step


def submit(lab: Lab, vid: str) -> None:
    lab.write(vid, plan_text(vid))
    lab.commit(f"add {vid}", AGENT)


def approve(lab: Lab, vid: str) -> None:
    lab.approve(vid, ALICE)


ATTACKS = {
    "future-commit-and-at": [
        frozen_by_agent("2099-01-01T00:00:00Z", "2099-01-01T00:00:00Z"),
        approve,
    ],
    "future-commit-only": [frozen_by_agent("2099-01-01T00:00:00Z"), approve],
    "future-at-past-commit": [
        frozen_by_agent("2020-01-01T00:00:00Z", "2099-01-01T00:00:00Z"),
        approve,
    ],
    "past-commit": [frozen_by_agent("2020-01-01T00:00:00Z"), approve],
    "past-commit-backdated-approval": [
        frozen_by_agent("2020-01-01T00:00:00Z"),
        approve_dated("2020-01-01T00:10:00Z"),
    ],
}
CONTROLS = {"honest": [submit, approve]}
#: Every variant held since a future-dated freeze time is capped by the controller's clock.
BROKEN: dict[str, object] = {}


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    lab.write_config(approval="max_age: 1h\n")
    play(lab, {**ATTACKS, **CONTROLS})
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-maxage", _build_lab)


def test_an_honest_plan_within_max_age_runs(lab: Lab) -> None:
    assert len(lab.calls("honest")) == 1


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_a_plan_cannot_look_younger_than_it_is(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], "the plan ran"
    assert lab.refusal(vid) == "E_PLAN_EXPIRED", lab.codes(vid)
