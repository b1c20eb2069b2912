"""Round 34, at most once and never silent, across a controller killed (SIGKILL) right after
its ``plangate: start`` commit, when the agent then changes the *start commit itself* (not
the plan folder, which rounds 30 and 33 covered) before the restart.

Each lab: plan ``victim`` (``tag`` plus ``extra: "approved"``) is approved by Alice; a
``run --once`` pass is SIGKILLed right after the branch moved to its start commit (round
28's bench, retried with a new plan until the kill lands there); the agent then plays one
attack on the branch; normal passes follow (a bystander plan written and approved between
them).

- ``revert-start``: ``git revert --no-edit`` of the start commit (the branch shows the plan
  ``approved`` again, same hash, as before the start).
- ``revert-reapprove``: the same revert, then Alice commits the approval line again
  (``status: approved`` rewritten by her, a fresh approval commit of the same version).
- ``reset-start``: ``git reset --hard`` to the start commit's parent (local mode: the agent
  drops the start commit from the branch; the plan reads ``approved``).
- ``amend-start``: ``git commit --amend`` of the start commit by the agent (same tree, its
  own name and message: the branch shows ``executing`` at a commit that is not the
  controller's).

Asserted per lab: ``rec`` never received anything but the approved values and the victim's
action ran at most once; every pass exits 0 (each gets 20 s, only to wait) and the bystander
approved after the attack runs exactly once; the killed run is not silent: the victim's
plan is no longer ``executing`` at HEAD, or its ``status`` row gives a code.

All held (round 34): the reverts end ``complete`` with one call (the revert-reapprove
approval runs nothing again); ``reset-start`` starts the plan again and it runs once;
``amend-start`` never runs it (``E_ILLEGAL_TRANSITION``: the agent set ``executing``, the
approval lapsed), which status says.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared
from test_round28_runs_killwrite import killed_start

MODES = ["revert-start", "revert-reapprove", "reset-start", "amend-start"]
#: mode -> reason (strict xfail), filled in from what this round saw.
BROKEN: dict[str, str] = {}
SILENT: dict[str, str] = {}


def _attack(lab: Lab, mode: str, victim: str) -> None:
    start = lab.head()
    if mode in ("revert-start", "revert-reapprove"):
        lab.git("revert", "--no-edit", start, who=AGENT)
        if mode == "revert-reapprove":
            time.sleep(1.1)  # the approval is a new second
            lab.set_status(victim, "approved")
            lab.commit(f"approve {victim} again", ALICE)
    elif mode == "reset-start":
        lab.git("reset", "-q", "--hard", f"{start}~1")
    elif mode == "amend-start":
        lab.git("commit", "-q", "--amend", "-m", "agent: tidy", "--reset-author", who=AGENT)


def _approved_text(n: int) -> str:
    return plan_text(f"v{n}", params='extra: "approved"\n')


def _build(mode: str):  # type: ignore[no-untyped-def]
    def build(root: Path) -> Lab:
        lab = Lab(root)
        victim = f"v{killed_start(lab, lambda n: f'v{n}', _approved_text)}"
        lab.victim = victim  # type: ignore[attr-defined]
        # the kill left the index and tree behind the start commit: the agent resyncs its
        # checkout (``git reset --hard``) before it acts on the branch
        lab.git("reset", "-q", "--hard", "HEAD")
        _attack(lab, mode, victim)
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
    return shared(factory, f"r34-killrewrite-{mode}", _build(mode))


@pytest.mark.parametrize("mode", MODES)
def test_approved_values_at_most_once(tmp_path_factory: pytest.TempPathFactory, mode: str) -> None:
    lab = _lab(tmp_path_factory, mode)
    calls = lab.calls(lab.victim)  # type: ignore[attr-defined]
    assert all('"approved"' in c["stdin"] for c in calls), calls
    assert len(calls) <= 1, calls


@pytest.mark.parametrize("mode", [pytest.param(m, id=m, marks=_marks(BROKEN, m)) for m in MODES])
def test_passes_exit_zero_bystander_runs(
    tmp_path_factory: pytest.TempPathFactory, mode: str
) -> None:
    lab = _lab(tmp_path_factory, mode)
    assert lab.outs == [0, 0, 0, 0]  # type: ignore[attr-defined]
    assert len(lab.calls("bystander")) == 1


@pytest.mark.parametrize("mode", [pytest.param(m, id=m, marks=_marks(SILENT, m)) for m in MODES])
def test_not_silent(tmp_path_factory: pytest.TempPathFactory, mode: str) -> None:
    """The killed run either ended (the plan is no longer executing at HEAD) or its status
    row says why it waits, with a code."""
    lab = _lab(tmp_path_factory, mode)
    row = lab.status().get(f"plans/{lab.victim}", {})  # type: ignore[attr-defined]
    said = " ".join(str(row.get(k)) for k in ("problem", "reason", "last_event", "notes"))
    head = lab.plan(lab.victim)  # type: ignore[attr-defined]
    assert head["plan"]["status"] != "executing" or "E_" in said, (row, head["plan"])
