# ruff: noqa: E501
"""Round 56 (runs): the disk fills after the tools ran, when the controller writes the plan's
record (the outcome commit, a gate's continuation). Same bench as
``test_round56_runs_diskfull.py``: one ``run --once`` under a per-file size limit of 100,000
bytes (``RLIMIT_FSIZE``), then ordinary passes.

- lab ``do``: ``many``, 120 ``rec`` actions each with a 700-character ``why`` (a 92 KB plan:
  its PLAN.yml with the ``execution:`` block, and its EXECUTION_LOG.md, pass 100 KB), and
  ``ok``, one ``rec``; Alice approves both in one commit; two limited passes, two ordinary.
- lab ``dg``: ``gate``, a 150 KB plan (an input of 150,000 ``y``) with action 2 gated; its
  action 1 ran and it waits at the gate (ordinary passes); Alice approves the gate; one
  limited pass, two ordinary.

Asserted: ``many-once``: each of the 120 tools ran exactly once in the end and the plan is
``completed`` with every action ``succeeded`` (held: the tools ran in the limited pass, the
outcome was committed by the next ordinary one, nothing ran again). ``gate-held``: the gated
action does not run in the pass that cannot write its record, runs exactly once afterwards
(held). ``ok-runs``: the honest plan runs in the limited passes. **Broke**: ``many``'s
outcome cannot be written (``outcome_not_committed``), then the pass dies with ``internal
error: OSError: [Errno 27] File too large`` (exit 2), twice; ``ok`` was already started
(``plangate: start plans/ok`` is on the branch) but its tool never runs until the limit is
gone: one plan's oversized record stalls a started plan beside it.

Fixed (2026-11-29): a commit whose write fails before the branch moves is tried one plan per
commit, and the plan whose own commit cannot be written waits (E_STORAGE) while the pass goes
on (``committing._not_written``); its outcome is committed by a later pass from the journal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared
from test_round56_runs_diskfull import limited

N = 120


def _build(root: Path) -> Lab:
    lab = Lab(root / "do")
    acts = "".join(
        f"  - id: {i}\n    tool: rec\n    why: {'w' * 700}\n    params: {{tag: many{i}}}\n"
        for i in range(1, N + 1)
    )
    lab.write(
        "many",
        f"plan:\n  name: many\n  task: t\n  status: pending_approval\navailable_tools: [{{name: rec}}]\nactions:\n{acts}",
    )
    lab.write("ok", plan_text("ok"))
    lab.commit("plans")
    lab.run()
    lab.set_status("many", "approved")
    lab.set_status("ok", "approved")
    lab.commit("approve", ALICE)
    runs = [limited(lab), limited(lab)]
    seen: dict[str, Any] = {
        "rcs": [r.returncode for r in runs],
        "stderr": [r.stderr[-600:] for r in runs],
        "ok-limited": len(lab.calls("ok")),
        "subjects-limited": lab.git("log", "--format=%s").splitlines(),
    }
    lab.run()
    lab.run()
    seen["many"] = [len(lab.calls(f"many{i}")) for i in range(1, N + 1)]
    execution = lab.plan("many").get("execution") or {}
    seen["many-status"] = execution.get("status")
    seen["many-actions"] = sorted({a.get("status") for a in execution.get("actions") or []})
    seen["ok"] = len(lab.calls("ok"))
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


def _build_gate(root: Path) -> Lab:
    lab = Lab(root / "dg")
    lab.write(
        "gate",
        f"plan:\n  name: gate\n  task: t\n  status: pending_approval\ninputs: {{pad: {'y' * 150_000}}}\n"
        "available_tools: [{name: rec}]\nactions:\n  - id: 1\n    tool: rec\n    why: w\n    params: {tag: gate1}\n"
        "  - id: 2\n    tool: rec\n    why: w\n    requires_approval: true\n    params: {tag: gate2}\n",
    )
    lab.commit("plan")
    lab.run()
    lab.approve("gate")
    lab.run()
    seen: dict[str, Any] = {"waiting": (lab.plan("gate").get("plan") or {}).get("status")}
    lab.approve("gate", message="approve the gate")
    limited(lab)
    seen["limited"] = (len(lab.calls("gate1")), len(lab.calls("gate2")))
    lab.run()
    lab.run()
    seen["after"] = (len(lab.calls("gate1")), len(lab.calls("gate2")))
    seen["status"] = (lab.plan("gate").get("plan") or {}).get("status")
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r56-diskoutcome", _build)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r56-diskoutcome-gate", _build_gate)


IDS = ["many-once", "gate-held", "ok-runs"]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_full_disk_after_the_tools(lab: Lab, gate: Lab, vid: str) -> None:
    if vid == "many-once":
        s = lab.seen  # type: ignore[attr-defined]
        assert s["many"] == [1] * N, s["many"]
        assert s["many-status"] == "completed" and s["many-actions"] == ["succeeded"], s
    elif vid == "gate-held":
        g = gate.seen  # type: ignore[attr-defined]
        assert g["waiting"] == "awaiting_approval", g
        assert g["limited"][1] == 0, g
        assert g["after"] == (1, 1) and g["status"] == "completed", g
    else:
        s = lab.seen  # type: ignore[attr-defined]
        assert s["ok-limited"] == 1, s
        assert "internal error" not in "".join(s["stderr"]), s["stderr"]
