"""Round 59, remote mode over a real ``git daemon`` on 127.0.0.1: this round's writer-rule
breaks where the controller has its own clone and reads the forge's history over ``git://``.

docs/approvals.md, "Remote mode": the controller clones ``remote.url`` into its state
directory and judges approvals by the same history index; the agent reaches nothing of the
controller's. Config: ``remote: {url: git://127.0.0.1:<port>/origin.git, branch: main}``;
the agent and Alice push to the daemon (``--enable=receive-pack``). Shapes (each pushed by
the agent after Alice's pushed drafts; see the local-mode modules for the details):

- ``plan-name``, ``inputs-list``, ``echo-split`` (``test_round59_approve_planrefs.py``): in
  ONE commit that removes her draft, a new plan whose ``rec`` call resolves to her exact
  params through ``$<plan.name>``/``$<plan.task>``, ``$<inputs.p[i]>``, or two ``echo``
  actions. Asserted: her tag never reaches ``rec``, ``E_SELF_APPROVAL``, no valid run.
- ``t-layout`` (``test_round59_approve_template.py``): the agent's own plan whose only common
  text with her removed plan is the runbook's reason. Asserted: it runs once on her approval.
- ``own`` (control): the agent's own plan: runs once on her approval.

A pass after each push; Alice pulls, approves each, pushes; two passes; the audit of a fresh
``git clone git://...`` (history alone). The daemon is stopped by its process group after
the build.

Seen: ``plan-name``, ``inputs-list`` and ``echo-split`` broke as in local mode (``rec`` got her
exact params on her own approval, ``completed``, approver alice; the fresh ``git://`` clone's
audit lists each run valid), and ``t-layout`` was wrongly refused as in local mode
(``E_SELF_APPROVAL``, never ran): remote mode, where the agent reaches nothing of the
controller's, changes nothing; the breaks are in the history rules. Held: ``own`` ran once,
audit valid.

Fixed (2026-11-29): one root with ``planrefs`` and ``template``: in remote
mode her call is ``E_SELF_APPROVAL``, the agent's template plan runs once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text, valid_runs
from test_round2_execution_kit import shared
from test_round57_approve_remotedaemon import _port, _wait_for
from test_round59_approve_planrefs import hers as ref_hers
from test_round59_approve_planrefs import wanted as ref_wanted
from test_round59_approve_template import agents as tmpl_agents
from test_round59_approve_template import plan as tmpl_plan

SLIPS = ["plan-name", "inputs-list", "echo-split"]
BROKEN: dict[str, object] = {}
HONEST = ["t-layout", "own"]
BROKEN_HONEST: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    served = root / "served"
    served.mkdir()
    origin = served / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(origin)], check=True)
    port = _port()
    daemon = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--enable=receive-pack",
            f"--base-path={served}",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(served),
        ],
        env=lab.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_for(port)
        url = f"git://127.0.0.1:{port}/origin.git"
        lab.git("remote", "add", "origin", url)
        lab.config.write_text(
            lab.config.read_text().replace(
                f"repo: {lab.repo}\n",
                f"remote: {{url: {json.dumps(url)}, branch: main, poll_interval: 0.2}}\n",
            )
        )

        def push() -> None:
            lab.git("push", "-q", "origin", "main")
            lab.run()
            lab.git("pull", "-q", "--rebase", "origin", "main")

        for v in SLIPS:
            lab.write(f"{v}-her", ref_hers(v))
        lab.write("t-layout-old", tmpl_plan("t-layout-old"))
        lab.commit("alice writes her drafts", ALICE)
        lab.write("own", plan_text("own", name="agent's own"))
        lab.commit("agent proposes its own plan", AGENT)
        push()
        for v in SLIPS:
            lab.git("rm", "-q", "-r", f"plans/{v}-her")
            lab.write(v, ref_wanted(v))
        lab.git("rm", "-q", "-r", "plans/t-layout-old")
        lab.write("t-layout", tmpl_agents("t-layout"))
        lab.commit("agent reworks the drafts", AGENT)
        push()
        time.sleep(1.05)
        for v in [*SLIPS, *HONEST]:
            path = lab.repo / "plans" / v / "PLAN.yml"
            text = path.read_text()
            path.write_text(text.replace("status: pending_approval\n", "status: approved\n", 1))
        lab.commit("alice approves", ALICE)
        push()
        lab.run()
        clone = root / "fresh"
        subprocess.run(["git", "clone", "-q", url, str(clone)], env=lab.env(), check=True)
        out = lab.cli("audit", "--json", cwd=clone)
        assert "Traceback" not in out.stderr, out.stderr[-2000:]
        lab.report = json.loads(out.stdout)  # type: ignore[attr-defined]
        lab.git("pull", "-q", "--rebase", "origin", "main")
    finally:
        os.killpg(daemon.pid, signal.SIGTERM)
        daemon.wait(timeout=10)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-remoterefs", _build)


@pytest.mark.parametrize("vid", cases(SLIPS, SLIPS, BROKEN))  # type: ignore[arg-type]
def test_her_call_is_not_hers_to_approve_in_remote_mode(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:800]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN_HONEST))  # type: ignore[arg-type]
def test_the_agents_own_plan_runs_in_remote_mode(lab: Lab, vid: str) -> None:
    assert "E_SELF_APPROVAL" not in lab.codes(vid), lab.codes(vid)[:800]
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:800]
    assert valid_runs(lab.report, vid), lab.report  # type: ignore[attr-defined]
