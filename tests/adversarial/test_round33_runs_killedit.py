"""Round 33, exactly the approved values, at most once, across a controller killed (SIGKILL)
right after its ``plangate: start`` commit, when the agent then commits a change to the
started plan *in place* before the restart.

Round 30 covered the folder deleted, moved, renamed or its removal reverted (the branch no
longer shows the plan executing); here the branch still shows it ``executing`` at its folder,
with other bytes. Each lab: plan ``victim`` (``tag`` plus ``extra: "approved"``) is approved
by Alice; a ``run --once`` pass is SIGKILLed right after the branch moved to its start
commit (round 28's bench, retried with a new plan until the kill lands there); the agent
then commits one change; two normal passes follow.

- ``edit-params``: ``extra: "approved"`` becomes ``extra: "EVIL"`` (status ``executing`` and
  the ``frozen:`` block kept).
- ``status-approved``: the same edit, and ``status: approved``.
- ``link-folder``: the plan folder becomes a committed symlink to a sibling folder holding
  the edited copy.
- ``add-action``: a second action (``rec`` with ``extra: "EVIL"``) appended.

Asserted per lab: ``rec`` never received ``EVIL`` and the victim's action ran at most once
(held in all four); every pass exits 0 (each pass gets 10 s to end, only to wait) and a
bystander plan approved after the attack runs exactly once; the killed run is not silent:
the victim ended (no longer ``executing``) or its ``status`` row gives a code.

**Broke** (round 33):

- ``link-folder`` (passes/bystander): the restart logs ``run_continued``, runs the approved
  action once from the start commit, then spins logging ``log_not_written`` (E_UNSAFE_PATH:
  ``plans/v0`` is a symbolic link) thousands of times a second; ``run --once`` never ends, so
  no other plan is decided or run. Should: the outcome waits (or is written elsewhere) with
  its code, and the pass ends.
- ``edit-params``, ``status-approved``, ``add-action`` (not silent): after four passes the
  victim never ran, no outcome commit, ``status`` says ``executing`` with problem and reason
  null, and the fresh-clone audit lists the execution with no outcome. Should: continue from
  the start commit's approved content as for a deleted or moved folder (round 30), or say
  why it waits with a code.

Fixed (round 33, the same hour): ``link-folder``'s spin (an outcome that cannot be
committed was put back at once and retried for good; now it waits and the pass ends), and
the in-place edits: a started plan whose branch version no longer hashes to what its job
runs goes on from the start commit's approved content, as a deleted or moved one does
(round 30), and its outcome is committed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared
from test_round28_runs_killwrite import killed_start

MODES = ["edit-params", "status-approved", "link-folder", "add-action"]
R33 = (
    "round 33: a start killed right after the branch move, then the plan folder replaced by a "
    "committed symlink: the restart runs it, then spins on log_not_written (E_UNSAFE_PATH) "
    "and the pass never ends"
)
#: mode -> reason, for test_passes_exit_zero_bystander_runs.
#: Found broken in round 33 (the record): link-folder, fixed the same hour (no marker).
FOUND: dict[str, str] = {"link-folder": R33}
BROKEN: dict[str, str] = {}


def _attack(lab: Lab, mode: str, victim: str) -> None:
    path = lab.repo / "plans" / victim / "PLAN.yml"
    text = lab.git("show", f"HEAD:plans/{victim}/PLAN.yml")  # the start commit's text
    assert "status: executing" in text
    evil = text.replace('extra: "approved"', 'extra: "EVIL"')
    assert evil != text
    if mode == "edit-params":
        path.write_text(evil, encoding="utf-8")
    elif mode == "status-approved":
        path.write_text(evil.replace("status: executing", "status: approved", 1), encoding="utf-8")
    elif mode == "add-action":
        more = (
            '  - id: 99\n    tool: rec\n    why: "more"\n'
            f'    params: {{tag: "{victim}", extra: "EVIL"}}\n'
        )
        marker = "frozen:\n"
        assert marker in text
        path.write_text(text.replace(marker, more + marker, 1), encoding="utf-8")
    elif mode == "link-folder":
        lab.git("rm", "-rqf", f"plans/{victim}")
        other = lab.repo / "plans" / f"{victim}-copy"
        other.mkdir(parents=True)
        (other / "PLAN.yml").write_text(evil, encoding="utf-8")
        folder = lab.repo / "plans" / victim
        if folder.exists():
            for child in folder.iterdir():
                child.unlink()
            folder.rmdir()
        os.symlink(f"{victim}-copy", folder)
    lab.commit(f"agent: {mode}", AGENT)


def _approved_text(n: int) -> str:
    return plan_text(f"v{n}", params='extra: "approved"\n')


def _build(mode: str):  # type: ignore[no-untyped-def]
    def build(root: Path) -> Lab:
        lab = Lab(root)
        victim = f"v{killed_start(lab, lambda n: f'v{n}', _approved_text)}"
        lab.victim = victim  # type: ignore[attr-defined]
        _attack(lab, mode, victim)
        lab.outs = []  # type: ignore[attr-defined]

        def step() -> bool:
            try:
                lab.outs.append(lab.run(timeout=10, check=False).returncode)  # type: ignore[attr-defined]
            except subprocess.TimeoutExpired:  # the pass never ended: no further pass
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


def _marks(mode: str) -> list[pytest.MarkDecorator]:
    if mode in BROKEN:
        return [pytest.mark.xfail(strict=True, raises=AssertionError, reason=BROKEN[mode])]
    return []


def _lab(factory: pytest.TempPathFactory, mode: str) -> Lab:
    return shared(factory, f"r33-killedit-{mode}", _build(mode))


@pytest.mark.parametrize("mode", MODES)
def test_never_evil_at_most_once(tmp_path_factory: pytest.TempPathFactory, mode: str) -> None:
    lab = _lab(tmp_path_factory, mode)
    calls = lab.calls(lab.victim)  # type: ignore[attr-defined]
    assert all("EVIL" not in c["stdin"] for c in calls), calls
    assert len(calls) <= 1, calls


@pytest.mark.parametrize("mode", [pytest.param(m, id=m, marks=_marks(m)) for m in MODES])
def test_passes_exit_zero_bystander_runs(
    tmp_path_factory: pytest.TempPathFactory, mode: str
) -> None:
    lab = _lab(tmp_path_factory, mode)
    assert lab.outs == [0, 0, 0, 0]  # type: ignore[attr-defined]
    assert len(lab.calls("bystander")) == 1


R33_SILENT = (
    "round 33: a start killed right after the branch move, then the started plan edited in "
    "place (still executing): no run, no outcome, status executing with no problem or reason"
)
#: mode -> reason, for test_not_silent.
#: Found broken in round 33 (the record); fixed the same hour: no markers.
FOUND_SILENT = {m: R33_SILENT for m in ("edit-params", "status-approved", "add-action")}
SILENT: dict[str, str] = {}


@pytest.mark.parametrize(
    "mode",
    [
        pytest.param(
            m,
            id=m,
            marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=SILENT[m])]
            if m in SILENT
            else [],
        )
        for m in MODES
        if m != "link-folder"
    ],
)
def test_not_silent(tmp_path_factory: pytest.TempPathFactory, mode: str) -> None:
    """The killed run either ended (an outcome: the plan is no longer executing) or its
    status row says why it waits, with a code."""
    lab = _lab(tmp_path_factory, mode)
    row = lab.status()[f"plans/{lab.victim}"]  # type: ignore[attr-defined]
    said = f"{row.get('problem')} {row.get('reason')}"
    assert row["status"] != "executing" or "E_" in said, row
