"""Round 81 (runs): the agent's MCP ``wait`` and ``log`` while a plan runs, while someone
forges its status mid-run, and around an abort.

Lab (one, local mode; ``plangate run`` as a daemon; the agent's ``plangate mcp`` on the same
repository with its own state directory, as round 80 did). Tools: ``rec`` and ``hold`` (an exec tool
that notes its start in ``HELD-<tag>`` and waits for ``GO-<tag>``). Plans (the agent's): ``wt``
(``rec``, ``hold``), ``fg`` (``rec``, ``hold``), ``ab`` (``rec`` ``ab``, ``hold``, ``rec`` ``ab2``),
``ctl`` (``rec``). Stories, each while the daemon runs:

- ``wt``: Alice approves; once ``hold`` runs, one MCP session asks ``log`` of ``wt`` and ``wait``
  (``status: executing``, 60 s); 2 s later ``GO``: ``wait`` answers ``completed`` (changed),
  ``log`` said ``executing`` with no completion.
- ``fg``: Alice approves; once ``hold`` runs, Mallory (neither approver nor author) commits
  ``status: completed`` and a forged ``execution:`` block into ``fg``'s PLAN.yml; an MCP session
  asks ``wait`` (``status: executing``, 8 s) and ``log``; then ``GO``. What must hold: ``wait``
  never answers ``completed`` before the controller completed the run (it times out unchanged,
  or names the forgery), ``log`` names the forgery (``E_OWNED_BLOCK_CHANGED`` or the ignored
  transition) or says ``executing``, never a bare ``completed``; the run then completes once.
- ``ab``: Alice approves; once ``hold`` runs, Alice commits ``status: aborted`` (an abort request);
  an MCP session asks ``wait`` (``status: executing``, 60 s); 2 s later ``GO``. ``wait`` answers
  ``aborted``; ``log`` afterwards says ``aborted``; ``rec`` ``ab2`` never runs.
- ``ctl``: Alice approves last; it runs once (the daemon still works).

Variants: ``ran`` (``rec`` calls per tag: ``wt``, ``fg``, ``ab``, ``ctl`` once, ``ab2`` never),
``audit`` (fresh clone: one valid run of each plan, ``ab``'s outcome ``abort``), ``mcp`` (per
story as above), ``final`` (the controller's ``status --json`` rows at the end).
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
        _until(lambda: "execution:" in path.read_text(), 20)
        path.write_text(path.read_text().replace("status: executing", "status: completed"))
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
        d.wait(timeout=60)
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
FORGED = xfail_81(
    "MCP wait/log report Mallory's forged status: mid-run, her commit setting `status: completed` "
    "(ignored by the controller, E_ILLEGAL_TRANSITION; the row stays executing, file_status "
    "completed) made `wait` from executing answer completed in 0.5 s and `log` say completed "
    "while the tool still ran"
)
BROKEN: dict[str, Any] = {"fg_wait": FORGED, "fg_log": FORGED}


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
