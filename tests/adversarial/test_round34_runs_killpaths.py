"""Round 34, at most once and never silent, across a controller killed (SIGKILL) right after
its ``plangate: start`` commit, for a plan whose *path* is extreme, when the agent then
removes or moves the folder before the restart (round 30's recovery: the run goes on from
the start commit's content copied into ``<state_dir>/runs/<plan id>/``; round 30 tried a
short quoted name only).

Each lab: plan ``victim`` at one extreme path is approved by Alice; a ``run --once`` pass is
SIGKILLed right after the branch moved to its start commit (round 28's bench, retried with
a new plan until the kill lands there); the agent resyncs its checkout and commits the
attack; normal passes follow (a bystander plan written and approved between them).

- ``long-rm``: one folder of 120 ``é`` (240 bytes, 1,080 once URL-quoted), ``git rm -r``.
- ``deep-rm``: 15 nested folders of 250 ``d`` (3,765 bytes: the plan id plus the state
  folder is past PATH_MAX), ``git rm -r``.
- ``pct-rm``: 19 nested folders of 200 ``%`` (3,819 bytes, each ``%`` three once quoted),
  ``git rm -r``.
- ``deep-mv``: the deep folder ``git mv``-ed to a sibling deep path.

Asserted per lab: the victim's action ran at most once (and exactly once where the start
commit is on the branch); every pass exits 0 (each gets 20 s, only to wait) and the bystander
approved after the attack runs exactly once; the killed run is not silent: no plan is left
``executing`` at HEAD without a code in its ``status`` row. All held (round 34).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared
from test_round28_runs_killwrite import killed_start

PATHS = {
    "long-rm": "é" * 120 + "{n}",
    "deep-rm": "/".join(["d" * 250] * 14 + ["d" * 245 + "{n}"]),
    "pct-rm": "/".join(["%" * 200] * 18 + ["%" * 195 + "{n}"]),
    "deep-mv": "/".join(["m" * 250] * 14 + ["m" * 245 + "{n}"]),
}
MODES = list(PATHS)
BROKEN: dict[str, str] = {}
SILENT: dict[str, str] = {}


def _attack(lab: Lab, mode: str, slug: str) -> None:
    if mode.endswith("-rm"):
        lab.git("rm", "-rq", f"plans/{slug}")
    else:
        target = slug.replace("m" * 250, "n" * 250, 1)
        (lab.repo / "plans" / target).parent.mkdir(parents=True, exist_ok=True)
        lab.git("mv", f"plans/{slug}", f"plans/{target}")
    lab.commit(f"agent: {mode}", AGENT)


def _build(mode: str):  # type: ignore[no-untyped-def]
    def build(root: Path) -> Lab:
        lab = Lab(root)
        attempt = killed_start(
            lab,
            lambda n: PATHS[mode].format(n=n),
            lambda n: plan_text(f"v{n}"),
            clean_tree=False,
        )
        slug, tag = PATHS[mode].format(n=attempt), f"v{attempt}"
        lab.victim = tag  # type: ignore[attr-defined]
        lab.git("reset", "-q", "--hard", "HEAD")  # the agent resyncs its checkout
        _attack(lab, mode, slug)
        lab.outs = []  # type: ignore[attr-defined]

        def step() -> bool:
            try:
                lab.outs.append(lab.run(timeout=20, check=False).returncode)  # type: ignore[attr-defined]
            except subprocess.TimeoutExpired:
                lab.outs.append("timeout")  # type: ignore[attr-defined]
                return False
            return True

        if step():
            lab.write("bystander", plan_text("bystander"))
            lab.commit("bystander", AGENT, "plans/bystander")
            if step():
                lab.set_status("bystander", "approved")
                lab.commit("approve bystander", ALICE, "plans/bystander")
                if step():
                    step()
        return lab

    return build


def _marks(table: dict[str, str], mode: str) -> list[pytest.MarkDecorator]:
    if mode in table:
        return [pytest.mark.xfail(strict=True, raises=AssertionError, reason=table[mode])]
    return []


def _lab(factory: pytest.TempPathFactory, mode: str) -> Lab:
    return shared(factory, f"r34-killpaths-{mode}", _build(mode))


@pytest.mark.parametrize("mode", MODES)
def test_runs_exactly_once(tmp_path_factory: pytest.TempPathFactory, mode: str) -> None:
    lab = _lab(tmp_path_factory, mode)
    calls = lab.calls(lab.victim)  # type: ignore[attr-defined]
    assert len(calls) == 1, calls


@pytest.mark.parametrize("mode", [pytest.param(m, id=m, marks=_marks(BROKEN, m)) for m in MODES])
def test_passes_exit_zero_bystander_runs(
    tmp_path_factory: pytest.TempPathFactory, mode: str
) -> None:
    lab = _lab(tmp_path_factory, mode)
    assert lab.outs == [0, 0, 0, 0]  # type: ignore[attr-defined]
    assert len(lab.calls("bystander")) == 1


@pytest.mark.parametrize("mode", [pytest.param(m, id=m, marks=_marks(SILENT, m)) for m in MODES])
def test_not_silent(tmp_path_factory: pytest.TempPathFactory, mode: str) -> None:
    """No plan is left executing without a code in its status row."""
    lab = _lab(tmp_path_factory, mode)
    for plan, row in lab.status().items():
        said = " ".join(str(row.get(k)) for k in ("problem", "reason", "last_event", "notes"))
        assert row["status"] != "executing" or "E_" in said, (plan[:60], row)
