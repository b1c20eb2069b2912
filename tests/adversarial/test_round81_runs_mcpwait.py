"""Round 81 (runs): the agent's MCP ``wait`` and ``log`` while a plan runs, while someone
forges its status mid-run, and around an abort (by ``plangate abort`` and by ``git commit -a``).

Lab (one, local mode; ``plangate run`` as a daemon; the agent's ``plangate mcp`` on the same
repository with its own state directory, as round 80 did). Tools: ``rec`` and ``hold`` (an exec tool
that notes its start in ``HELD-<tag>`` and waits for ``GO-<tag>``). Plans (the agent's): ``wt``,
``fg`` (``rec``, ``hold``), ``ab``, ``ca`` (``rec``, ``hold``, ``rec`` ``ab2``/``ca2``), ``ctl``
(``rec``). Stories, one after another while the daemon runs:

- ``wt``: Alice approves; once ``hold`` runs, one MCP session asks ``log`` and ``wait``
  (``status: executing``, 60 s); 2 s later ``GO``. ``wt_wait``: ``completed``, changed;
  ``wt_log``: no problem.
- ``fg``: Alice approves; once ``hold`` runs, Mallory (neither approver nor author) rewrites
  ``status: executing`` to ``status: completed`` in ``fg``'s PLAN.yml (the plan's and the
  controller's ``execution:`` block's) and commits it; an MCP session asks ``wait`` (``status:
  executing``, 8 s), ``log`` and ``status``; ``status --json`` is read; then ``GO``. Must hold:
  ``fg_wait`` never answers ``completed`` while the tool still runs (the controller ignored her
  edit, ``E_ILLEGAL_TRANSITION``); ``fg_log``: ``log``'s ``status`` is not ``completed`` then (it is
  "as committed by the controller", docs/agents.md); ``fg_row``: the controller's row says
  ``executing`` with the ignored transition; ``fg_end``: after ``GO`` the run completes once and
  ``log`` shows the controller's record.
- ``ab``: Alice approves; once ``hold`` runs, she runs ``plangate abort plans/ab`` (``ab_cli``: exit
  0); an MCP ``wait`` from ``executing``; ``GO``. ``ab_wait``: ``aborted``; ``ab_log``: the record
  ``aborted``, action 3 pending; ``rec`` ``ab2`` never runs.
- ``ca``: the same, but Alice edits the status line and runs ``git commit -a`` (how git users
  commit), which also takes the controller's uncommitted progress in the working tree (local mode
  writes the ``execution:`` block and EXECUTION_LOG.md there mid-run, docs/architecture.md step 4).
  ``ca_wait``, ``ca_log`` as for ``ab``.
- ``ctl``: Alice approves last; it runs once.

Variants: ``ran`` (``rec`` calls per tag), ``audit`` (fresh clone: one valid run each, ``ab`` and
``ca`` ``abort``), ``final`` (the rows at the end), ``mcp`` (above), ``findings`` (the fresh clone's
audit: no finding on ``ab`` nor ``ca``, Mallory's forgery named ``owned-block-changed`` and
``illegal``).

Seen (round 81): two breaks. ``mcp:fg_wait`` and ``mcp:fg_log`` (one class): Mallory's commit
setting ``status: completed`` mid-run, which the controller ignored (its row ``executing``,
``last_event`` ``E_ILLEGAL_TRANSITION ... ignored``, ``file_status: completed``), made the agent's
``wait`` from ``executing`` answer ``{"status": "completed", "changed": true}`` within 0.5 s while
``hold`` still ran, and ``log`` answer ``status: completed`` (with ``execution: null`` and the
``E_OWNED_BLOCK_CHANGED`` problem). docs/agents.md tells the agent to ``wait`` then read ``log``
for the outcome, and ``log`` is "as committed by the controller"; should: ``wait`` and ``log``
follow the controller's status (the row's ``status``, as MCP ``status`` does), never a status the
controller ignored. Fixed (2026-12-01, r81mcpwait): ``status``, ``log`` and ``wait`` read one
thing, the plan's status row (``Controller.status(plan=...)``, ``plangate status --json``'s,
through ``AgentApi._reader``); ``wait`` reads it again whenever the branch moves, so it answered
``executing``, unchanged, after its 8 s, and ``completed`` once the run did; ``log`` answers the
row's ``status``, the file's as ``file_status``, and names the ignored status in ``problems``
(the row's ``E_ILLEGAL_TRANSITION`` note) beside ``E_OWNED_BLOCK_CHANGED``.
``findings:ca_clean``: Alice's honest abort by ``git commit -a`` mid-run
committed the controller's uncommitted progress (16 lines of the ``execution:`` block) as hers;
the controller honoured the abort and MCP ``log`` of ``ca`` names no problem, but the fresh-clone
audit flags her commit ``owned-block-changed`` (``ok: false``): the audit and the controller
disagree on honest work (SPEC §15, "``plangate audit`` on a fresh clone agrees with the
controller"); should: the progress a run writes is never left for a human's ``git commit -a`` to
carry (or both readers rule the same); the lead may rule it. Held: ``wait`` answered the
controller's ``completed`` and ``aborted`` when they came; ``plangate abort`` mid-run stopped
``ab`` before action 3, no finding; no plan ran twice, ``ab2``/``ca2`` never; the audit named
Mallory's forgery. Noted: the lab's own ``git add -A`` commits mid-run (an approval while
another plan runs) carry that plan's uncommitted ``EXECUTION_LOG.md`` the same way (a
``log-changed`` finding on ``fg``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, cases, identity, plan_text, valid_runs
from mcpkit import PLANGATE, session
from test_round2_execution_kit import shared

HOLD = r"""
import os, sys, time
d, tag = os.environ["HOLD_DIR"], sys.argv[1]
open(os.path.join(d, "HELD-" + tag), "w").write(str(os.getpid()))
for _ in range(600):
    if os.path.exists(os.path.join(d, "GO-" + tag)):
        break
    time.sleep(0.1)
print('{"held": true}')
"""


def xfail_81(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 81: {what}")


def _until(pred: Any, timeout: float = 60.0) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.2)
    return False


def _held_plan(tag: str, tail: str = "") -> str:
    text = plan_text(
        tag,
        extra_actions=f'  - id: 2\n    tool: hold\n    why: "hold"\n    params: {{h: "{tag}"}}\n'
        + tail,
    )
    return text.replace("  - name: rec\n", "  - name: rec\n  - name: hold\n")


def _result(reply: dict[str, Any] | None) -> Any:
    if not reply:
        return None
    return reply.get("result", {}).get("structuredContent", reply.get("result", reply))


def _build(root: Path) -> Lab:
    hold_dir = root / "hold"
    hold_dir.mkdir(parents=True)
    (root / "hold.py").write_text(HOLD)
    argv = json.dumps([sys.executable, str(root / "hold.py"), "{h}"])
    held = json.dumps(str(hold_dir))
    lab = Lab(root, tools=f"hold: {{kind: exec, argv: {argv}, env: {{HOLD_DIR: {held}}}}}\n")
    lab.write("wt", _held_plan("wt"))
    lab.write("fg", _held_plan("fg"))
    tail = '  - id: 3\n    tool: rec\n    why: "after"\n    params: {tag: "ab2"}\n'
    lab.write("ab", _held_plan("ab", tail))
    lab.write("ca", _held_plan("ca", tail.replace('"ab2"', '"ca2"')))
    lab.write("ctl", plan_text("ctl"))
    lab.commit("agent plans", AGENT)
    mcp = root / "mcp.yml"
    mcp.write_text(lab.config.read_text().replace(str(lab.state), str(root / "state-mcp")))
    lab.seen = {}  # type: ignore[attr-defined]
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    errf = (root / "daemon.err").open("wb")  # the daemon's stderr, closed below
    d = subprocess.Popen(
        [PLANGATE, "run", "--config", str(lab.config)], cwd=root, env=env,
        stdout=subprocess.DEVNULL, stderr=errf, start_new_session=True,
    )  # fmt: skip

    def mcp_bg(calls: list[Any], key: str) -> threading.Thread:
        def go() -> None:
            replies, err = session(lab, calls, config=mcp, timeout=120)
            lab.seen[key] = ([_result(r) for r in replies], err[-1500:])  # type: ignore[attr-defined]

        t = threading.Thread(target=go)
        t.start()
        return t

    def frozen() -> bool:
        return all(lab.plan(v).get("frozen") for v in ("wt", "fg", "ab", "ca", "ctl"))

    try:
        assert _until(frozen, 60), (root / "daemon.err").read_text()[-1500:]
        # wt
        lab.approve("wt")
        _until(lambda: (hold_dir / "HELD-wt").exists(), 60)
        time.sleep(1)
        lab.seen["dirty_wt"] = lab.git("status", "--porcelain")  # type: ignore[attr-defined]
        lab.seen["diff_wt"] = lab.git("diff")[-3000:]  # type: ignore[attr-defined]
        t = mcp_bg(
            [("log", {"path": "plans/wt"}),
             ("wait", {"path": "plans/wt", "status": "executing", "timeout": 60})],
            "wt",
        )  # fmt: skip
        time.sleep(2)
        (hold_dir / "GO-wt").write_text("go")
        t.join(150)
        # fg: Mallory forges completion mid-run
        lab.approve("fg")
        _until(lambda: (hold_dir / "HELD-fg").exists(), 60)
        path = lab.repo / "plans" / "fg" / "PLAN.yml"
        # her own execution: block (since r81clean the run leaves none in the tree uncommitted)
        forged = path.read_text().replace("status: executing", "status: completed")
        path.write_text(
            forged + ("" if "execution:" in forged else "execution:\n  status: completed\n")
        )
        lab.commit("fg done", MALLORY, "plans/fg/PLAN.yml")
        t = mcp_bg(
            [("wait", {"path": "plans/fg", "status": "executing", "timeout": 8}),
             ("log", {"path": "plans/fg"}),
             ("status", {"path": "plans/fg"})],
            "fg",
        )  # fmt: skip
        t.join(150)
        lab.seen["fg_still_held"] = not (hold_dir / "GO-fg").exists() and len(lab.calls("fg")) == 1  # type: ignore[attr-defined]
        st = lab.cli("status", "--json", "--config", str(lab.config))
        lab.seen["fg_row"] = [r for r in json.loads(st.stdout) if r["plan"] == "plans/fg"]  # type: ignore[attr-defined]
        (hold_dir / "GO-fg").write_text("go")
        _until(lambda: len(lab.calls("fg")) == 1 and "fg" in lab.git("log", "-3", "--format=%s"))
        # ab: Alice aborts mid-run
        lab.approve("ab")
        _until(lambda: (hold_dir / "HELD-ab").exists(), 60)
        told = subprocess.run(
            [PLANGATE, "abort", "--config", str(lab.config), "plans/ab"],
            cwd=lab.repo, env={**lab.env(), **identity(ALICE)}, capture_output=True, text=True,
        )  # fmt: skip
        lab.seen["ab_cli"] = (told.returncode, told.stderr[-800:])  # type: ignore[attr-defined]
        lab.seen["ab_commit"] = lab.head()  # type: ignore[attr-defined]
        t = mcp_bg([("wait", {"path": "plans/ab", "status": "executing", "timeout": 60})], "ab")
        time.sleep(2)
        (hold_dir / "GO-ab").write_text("go")
        t.join(150)
        lab.seen["ab_log"] = _result(
            session(lab, [("log", {"path": "plans/ab"})], config=mcp)[0][0]
        )  # type: ignore[attr-defined]
        # ca: Alice aborts the way git users do: edit the status line, `git commit -a`
        lab.approve("ca")
        _until(lambda: (hold_dir / "HELD-ca").exists(), 60)
        time.sleep(1)
        lab.set_status("ca", "aborted")
        lab.git("commit", "-q", "-a", "-m", "abort ca", who=ALICE)
        lab.seen["ca_commit"] = lab.head()  # type: ignore[attr-defined]
        lab.seen["ca_files"] = lab.git("show", "--stat", "--format=", "HEAD")  # type: ignore[attr-defined]
        t = mcp_bg([("wait", {"path": "plans/ca", "status": "executing", "timeout": 60})], "ca")
        time.sleep(2)
        (hold_dir / "GO-ca").write_text("go")
        t.join(150)
        lab.seen["ca_log"] = _result(
            session(lab, [("log", {"path": "plans/ca"})], config=mcp)[0][0]
        )  # type: ignore[attr-defined]
        lab.approve("ctl")
        _until(lambda: len(lab.calls("ctl")) == 1, 60)
        time.sleep(2)
        lab.seen["fg_log_end"] = _result(
            session(lab, [("log", {"path": "plans/fg"})], config=mcp)[0][0]
        )  # type: ignore[attr-defined]
    finally:
        os.killpg(d.pid, signal.SIGTERM)
        d.wait(timeout=180)
        errf.close()
    st = lab.cli("status", "--json", "--config", str(lab.config))
    lab.rows = {r["plan"]: r for r in json.loads(st.stdout)} if st.stdout.strip() else {}  # type: ignore[attr-defined]
    clone = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], env=lab.env(), check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    lab.audit_err = out.stderr[-2000:]  # type: ignore[attr-defined]
    lab.report = json.loads(out.stdout) if out.stdout.strip() else {}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r81-mcpwait", _build)


RAN = {"wt": 1, "fg": 1, "ab": 1, "ab2": 0, "ca": 1, "ca2": 0, "ctl": 1}
PLANS = {"wt": "complete", "fg": "complete", "ab": "abort", "ca": "abort", "ctl": "complete"}
BROKEN: dict[str, Any] = {}  # fg_wait, fg_log: fixed (2026-12-01, r81mcpwait)
RIDE = xfail_81(
    "an honest mid-run `git commit -a` abort carries the controller's uncommitted progress "
    "(PLAN.yml execution: block) as Alice's: the fresh-clone audit flags her commit "
    "owned-block-changed (ok: false) while the controller and MCP log of ca show no problem"
)
FIND: dict[str, Any] = {}  # ca_clean: fixed (2026-12-04, r81clean)


@pytest.mark.parametrize("tag", cases(list(RAN), list(RAN), {}))
def test_ran(lab: Lab, tag: str) -> None:
    assert len(lab.calls(tag)) == RAN[tag], lab.calls(tag)


@pytest.mark.parametrize("vid", cases(list(PLANS), list(PLANS), {}))
def test_audit(lab: Lab, vid: str) -> None:
    assert "Traceback" not in lab.audit_err, lab.audit_err  # type: ignore[attr-defined]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["outcome"] == PLANS[vid], runs


@pytest.mark.parametrize("vid", cases(list(PLANS), list(PLANS), {}))
def test_final(lab: Lab, vid: str) -> None:
    want = {"complete": "completed", "abort": "aborted"}[PLANS[vid]]
    assert lab.rows[f"plans/{vid}"]["status"] == want, lab.rows[f"plans/{vid}"]  # type: ignore[attr-defined]


MCP = ["wt_log", "wt_wait", "fg_wait", "fg_log", "fg_row", "fg_end", "ab_cli", "ab_wait",
       "ab_log", "ca_wait", "ca_log"]  # fmt: skip


@pytest.mark.parametrize("which", cases(MCP, MCP, BROKEN))
def test_mcp(lab: Lab, which: str) -> None:
    seen = lab.seen  # type: ignore[attr-defined]
    if which == "wt_log":  # asked while hold ran; the session answers when its last call does
        log = seen["wt"][0][0]
        assert log["status"] in ("executing", "completed") and not log["problems"], log
    elif which == "wt_wait":
        got = seen["wt"][0][1]
        assert got["status"] == "completed" and got["changed"] is True, got
    elif which == "fg_wait":
        got = seen["fg"][0][0]
        assert seen["fg_still_held"] and got["status"] != "completed", got
    elif which == "fg_log":
        log = seen["fg"][0][1]
        assert seen["fg_still_held"] and log["status"] != "completed", log
    elif which == "fg_row":  # the controller's own row, asked while hold still ran
        row = seen["fg_row"][0]
        assert row["status"] == "executing" and "E_ILLEGAL_TRANSITION" in row["last_event"], row
    elif which == "fg_end":
        log = seen["fg_log_end"]
        assert log["status"] == "completed" and log["execution"]["status"] == "completed", log
    elif which == "ab_cli":
        assert seen["ab_cli"][0] == 0, seen["ab_cli"]
    elif which in ("ab_wait", "ca_wait"):
        got = seen[which[:2]][0][0]
        assert got["status"] == "aborted" and got["changed"] is True, got
    else:
        log = seen[f"{which[:2]}_log"]
        assert log["status"] == "aborted" and log["execution"]["status"] == "aborted", log
        assert [a["status"] for a in log["execution"]["actions"]][2] == "pending", log


@pytest.mark.parametrize("which", cases(["ab_clean", "ca_clean", "fg_named"], [0, 1, 2], FIND))
def test_findings(lab: Lab, which: int) -> None:
    """The fresh-clone audit agrees with the controller: no finding on an honest abort
    (``plangate abort``; Alice's ``git commit -a`` of her status edit), and Mallory's forgery
    named (``owned-block-changed`` and ``illegal`` on her commit)."""
    found = lab.report["findings"]  # type: ignore[attr-defined]
    if which < 2:
        plan = ["plans/ab", "plans/ca"][which]
        assert [f for f in found if f["plan"] == plan] == [], found
    else:
        kinds = {f["kind"] for f in found if f["plan"] == "plans/fg" and "mallory" in f["detail"]}
        assert {"owned-block-changed", "illegal"} <= kinds, found
