# ruff: noqa: E501
"""Round 56 (runs): the controller out of file descriptors while a graph runs its actions at
once. Like a full disk (``test_round56_runs_diskfull.py``), a resource gone mid-run that no
round had tried: ``RLIMIT_NOFILE`` lowered for one ``run --once`` (as a crowded host or a
unit's ``LimitNOFILE=`` does), then ordinary passes. docs/plan-format.md, Graphs: ready
actions run at once, up to ``execution.max_parallel_actions`` (4); each exec call opens
pipes, each journal record a file.

Lab ``fd30``: ``graph``, eight independent ``rec`` actions (``needs: []``), and ``ok``, one
``rec``; Alice approves both; one pass with 30 descriptors, two ordinary passes; then Alice
approves a resume of ``graph`` and two ordinary passes. Lab ``fd20``: the same with 20
descriptors (the controller cannot even read git).

Asserted: ``*-faithful``: after the limited pass, each action's recorded status says what
happened to its tool: ``succeeded`` exactly when ``rec`` ran for it (once), otherwise not
run (``failed`` "cannot start ... Too many open files", or ``pending``). ``*-once``: in the
end every tool ran exactly once (after the resume for ``fd30``). ``*-ok``: ``ok`` ran.
``fd20-coded``: the limited pass ends with a code (``E_GIT``), not "internal error", and
nothing ran.

Result: all held (which actions got to run varies from run to run; the record always
matched).
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

N = 8


def limited(lab: Lab, nofile: int) -> subprocess.CompletedProcess[str]:
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    return subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(lab.config)],
        cwd=lab.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile)),
    )


def _counts(lab: Lab) -> list[int]:
    return [len(lab.calls(f"g{i}")) for i in range(1, N + 1)]


def _build(root: Path, nofile: int) -> dict[str, Any]:
    lab = Lab(root / f"fd{nofile}")
    acts = "".join(
        f"  - id: {i}\n    tool: rec\n    why: w\n    needs: []\n    params: {{tag: g{i}}}\n"
        for i in range(1, N + 1)
    )
    lab.write(
        "graph",
        f"plan:\n  name: graph\n  task: t\n  status: pending_approval\navailable_tools: [{{name: rec}}]\nactions:\n{acts}",
    )
    lab.write("ok", plan_text("ok"))
    lab.commit("plans")
    lab.run()
    lab.set_status("graph", "approved")
    lab.set_status("ok", "approved")
    lab.commit("approve", ALICE)
    first = limited(lab, nofile)
    seen: dict[str, Any] = {
        "rc": first.returncode,
        "stderr": first.stderr[-800:],
        "limited": _counts(lab),
    }
    lab.run()
    lab.run()
    seen["after"] = _counts(lab)
    execution = lab.plan("graph").get("execution") or {}
    seen["record"] = {
        a["id"]: (a.get("status"), (a.get("error") or {}).get("message", ""))
        for a in execution.get("actions") or []
    }
    seen["status"] = (lab.plan("graph").get("plan") or {}).get("status")
    if seen["status"] == "failed":
        lab.approve("graph", message="resume graph")
        lab.run()
        lab.run()
    seen["end"] = _counts(lab)
    seen["end-status"] = (lab.plan("graph").get("plan") or {}).get("status")
    seen["ok"] = len(lab.calls("ok"))
    return seen


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Any]]:
    def build(root: Path) -> Lab:
        lab = Lab.__new__(Lab)
        lab.seen = {n: _build(root, n) for n in (30, 20)}  # type: ignore[attr-defined]
        return lab

    return shared(tmp_path_factory, "r56-fdlimit", build).seen  # type: ignore[attr-defined]


IDS = [
    "fd30-faithful",
    "fd30-once",
    "fd30-ok",
    "fd20-faithful",
    "fd20-once",
    "fd20-ok",
    "fd20-coded",
]


@pytest.mark.parametrize("vid", cases(IDS, IDS, {}))
def test_out_of_descriptors(seen: dict[int, dict[str, Any]], vid: str) -> None:
    n = int(vid[2:4])
    s = seen[n]
    what = vid.split("-", 1)[1]
    if what == "faithful":
        assert all(c in (0, 1) for c in s["after"]), s
        for i, count in enumerate(s["after"], start=1):
            status = s["record"].get(i, (None, ""))[0]
            if count:
                assert status == "succeeded", (i, s)
            else:
                assert status in ("pending", "failed", None), (i, s)
    elif what == "once":
        assert s["end"] == [1] * N and s["end-status"] == "completed", s
    elif what == "ok":
        assert s["ok"] == 1, s
    else:
        assert s["limited"] == [0] * N, s
        assert "internal error" not in s["stderr"] and "E_" in s["stderr"], s["stderr"]
