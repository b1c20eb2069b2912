"""Round 80 (runs): exactly once when the controller's push races, is cut or is shared.

SPEC §15: a plan runs at most once, and git history alone proves it. In remote mode the
controller commits in its own clone and pushes; round 80 attacks the push itself.

Lab (one, ``writerkit.served``: a real ``git daemon`` on 127.0.0.1). The served repository
has a ``pre-receive`` and a ``post-receive`` hook, armed by marker files in the lab:
``RACE`` (pre-receive: the forge moves ``main`` to a commit of Bob's made on the spot, so the
push that is being received loses its compare-and-swap: a push racing the controller's),
``HANG`` (pre-receive: write ``HUNG``, sleep, reject: the controller is SIGKILLed while its
push is in flight and nothing landed) and ``PHANG`` (post-receive: write ``PHUNG``, sleep:
the controller is SIGKILLed after the push landed, before it could note it). Each arming
happens after Alice's own push of her approval, so only the controller's push meets it.

The agent commits ``rc``, ``k1``, ``k2``, ``two`` and ``ctl``; a pass freezes them. Then:
``rc``: Alice approves, pushes; ``RACE`` armed; three passes. ``k1``: Alice approves; ``HANG``
armed; a pass started and SIGKILLed (its process group) once ``HUNG`` appears; two passes.
``k2``: the same with ``PHANG``/``PHUNG``. ``two``: Alice approves; a second controller (its own
state directory, the same remote) and the first make a pass at the same moment; then one pass
each. ``ctl``: Alice approves; a pass of the first controller. ``rf``: Alice approves last;
``FRACE`` armed (pre-receive: the forge force-moves ``main`` back one commit, dropping her
approval, while the controller's push is received); three passes: ``rec`` runs ``rf`` at most
once and history proves it (one valid run in the audit, the record on ``main``).

Variants (all honest work; the attacker is the racer, the killer, the second controller): ``ran``
(``rec`` ran each plan exactly once: never twice, never lost), ``audit`` (a fresh clone's ``audit
--json`` lists one valid run of each), ``row`` (``status --json`` of the first controller says
``completed``), ``mcp_log`` (the agent's MCP server, local mode on its own checkout since MCP is
local-only, ``log`` says completed, no error), ``killed_at_most_once`` (``k1``, ``k2``: at the kill
``rec`` had run at most once), ``kept`` (Bob's racing commit is on the remote's ``main`` at the end:
the controller never overwrote what it did not read), ``passes`` (no traceback in any pass; the last
pass of each story exits 0; the second controller's passes are refused, naming ``--take-over``,
docs/operations.md "One service per repository").

Seen (round 80): no break. Held: the forge's racing commit made the controller's push lose its
compare-and-swap, and the next passes pushed the record on top of Bob's commit (kept on ``main``),
``rc`` ran once; a SIGKILL while the push was in flight (nothing landed) and one after it landed
(post-receive still running) each left ``rec`` at one call, the restarted passes exited 0 and the
record reached the remote once; a second controller with its own state directory on the same remote,
started at the same moment as the first, was refused (its clone holds commits sealed by another key:
restore that state or ``--take-over``), so ``two`` ran once; the forge's forced move of ``main``
back one commit (dropping Alice's approval of ``rf``) mid-receive: the next pass pushed the approval
and the controller's ``start``/``complete`` back, ``rf`` ran once and the audit calls it valid
(since round 100, r100rewind, her dropped approval is never pushed back: ``rf`` then does not
run, and the row, the audit and MCP ``log`` say so; moved back over the controller's own commit
only, its record is pushed back and ``rf`` ran once);
every row says completed and the fresh-clone audit lists one valid run each."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text, valid_runs
from mcpkit import session
from test_round2_execution_kit import shared
from writerkit import served

VIDS = ["rc", "k1", "k2", "two", "ctl", "rf"]

HOOK = """#!/bin/sh
d={root}
cat > /dev/null
if [ -f $d/RACE ]; then
  rm -f $d/RACE
  unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
  c=$(GIT_AUTHOR_NAME=Bob GIT_AUTHOR_EMAIL=bob@example.com GIT_COMMITTER_NAME=Bob \\
      GIT_COMMITTER_EMAIL=bob@example.com git commit-tree -p refs/heads/main \\
      -m "bob: racing commit" 'refs/heads/main^{{tree}}')
  git update-ref refs/heads/main "$c" && echo "$c" > $d/RACED
fi
if [ -f $d/FRACE ]; then
  rm -f $d/FRACE
  unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
  git update-ref refs/heads/main refs/heads/main~1 && touch $d/FRACED
fi
if [ -f $d/HANG ]; then rm -f $d/HANG; touch $d/HUNG; sleep 6; exit 1; fi
exit 0
"""

POST = """#!/bin/sh
d={root}
cat > /dev/null
if [ -f $d/PHANG ]; then rm -f $d/PHANG; touch $d/PHUNG; sleep 6; fi
exit 0
"""


def _popen(lab: Lab, config: Path) -> subprocess.Popen[str]:
    env = {**lab.env(), "REC_LOG": str(lab.log)}
    exe = str(Path(sys.executable).parent / "plangate")
    return subprocess.Popen(
        [exe, "run", "--once", "--config", str(config)],
        cwd=lab.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent plans", AGENT)
    mcp = (
        root / "mcp.yml"
    )  # the agent's MCP server: local mode on its clone (docs: MCP is local-only)
    mcp.write_text(lab.config.read_text().replace(str(lab.state), str(root / "state-mcp")))
    lab.passes, lab.at_kill = [], {}  # type: ignore[attr-defined]
    with served(lab) as url:
        hooks = root / "served" / "origin.git" / "hooks"
        for name, text in (("pre-receive", HOOK), ("post-receive", POST)):
            (hooks / name).write_text(text.format(root=root))
            (hooks / name).chmod(0o755)

        def run(story: str) -> None:
            res = lab.run(check=False)
            lab.passes.append((story, res.returncode, "Traceback" in res.stderr, res.stderr[-600:]))  # type: ignore[attr-defined]

        def approve(vid: str) -> None:
            lab.git("fetch", "-q", "origin", "refs/heads/main")
            lab.git("reset", "-q", "--hard", "FETCH_HEAD")
            lab.set_status(vid, "approved")
            lab.commit(f"approve {vid}", ALICE)
            lab.git("push", "-q", "origin", "HEAD:refs/heads/main")

        def killed(story: str, marker: str, seen: str) -> None:
            (root / marker).touch()
            proc = _popen(lab, lab.config)
            end = time.monotonic() + 90
            while not (root / seen).exists() and proc.poll() is None and time.monotonic() < end:
                time.sleep(0.05)
            hit = (root / seen).exists()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            lab.at_kill[story] = len(lab.calls(story))  # type: ignore[attr-defined]
            (root / marker).unlink(missing_ok=True)
            lab.passes.append(
                (
                    story + "-killed",
                    0 if hit else 99,
                    False,
                    proc.stderr.read()[-600:] if proc.stderr else "",
                )
            )  # type: ignore[attr-defined]
            time.sleep(7)  # the hook's sleep ends: the forge is no longer receiving

        lab.git("push", "-q", "origin", "HEAD:refs/heads/main")
        run("freeze")
        approve("rc")
        (root / "RACE").touch()
        for _ in range(3):
            run("rc")
        lab.raced = (root / "RACED").read_text().strip() if (root / "RACED").exists() else ""  # type: ignore[attr-defined]
        approve("k1")
        killed("k1", "HANG", "HUNG")
        run("k1")
        run("k1")
        approve("k2")
        killed("k2", "PHANG", "PHUNG")
        run("k2")
        run("k2")
        approve("two")
        second = root / "second.yml"
        second.write_text(
            lab.config.read_text().replace(
                f"state_dir: {lab.state}\n", f"state_dir: {root / 'state-b'}\n"
            )
        )
        procs = [_popen(lab, lab.config), _popen(lab, second)]
        for i, proc in enumerate(procs):
            _, err = proc.communicate(timeout=300)
            lab.passes.append((f"two-{'ab'[i]}", proc.returncode, "Traceback" in err, err[-600:]))  # type: ignore[attr-defined]
        run("two")
        res = lab.cli("run", "--once", "--config", str(second))
        lab.passes.append(("two-b2", res.returncode, "Traceback" in res.stderr, res.stderr[-600:]))  # type: ignore[attr-defined]
        approve("ctl")
        run("ctl")
        approve("rf")
        (root / "FRACE").touch()
        for _ in range(3):
            run("rf")
        lab.fraced = (root / "FRACED").exists()  # type: ignore[attr-defined]
        lab.tip = subprocess.run(
            ["git", "-C", str(root / "served" / "origin.git"), "rev-parse", "refs/heads/main"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        lab.git("fetch", "-q", "origin", "refs/heads/main")
        lab.git("reset", "-q", "--hard", "FETCH_HEAD")
        lab.rows = lab.status()  # type: ignore[attr-defined]
        replies, _ = session(lab, [("log", {"path": f"plans/{v}"}) for v in VIDS], config=mcp)
        lab.mcp = {v: json.dumps(r) for v, r in zip(VIDS, replies, strict=True)}  # type: ignore[attr-defined]
        clone = root / "fresh"
        subprocess.run(["git", "clone", "-q", url, str(clone)], env=lab.env(), check=True)
        lab.ancestry = subprocess.run(
            ["git", "-C", str(clone), "merge-base", "--is-ancestor", lab.raced or "HEAD", "HEAD"],
            capture_output=True, text=True, check=False,
        ).returncode  # type: ignore[attr-defined]  # fmt: skip
        out = lab.cli("audit", "--json", cwd=clone)
        lab.audit_err = out.stderr[-2000:]  # type: ignore[attr-defined]
        lab.report = json.loads(out.stdout) if out.stdout.strip() else {}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r80-pushrace", _build)


BROKEN: dict[str, Any] = {}


def _rf_ran(lab: Lab) -> bool:
    """Did ``rf`` run? Since round 100 (r100rewind) the forge's move of ``main`` back over
    Alice's approval stands when it landed before the start was on ``main``: the controller
    pushes only commits it made, so her dropped approval is not pushed back and ``rf`` does
    not run; moved back over the controller's own commit, the record is pushed back and it
    ran once. Either way history says what happened."""
    return bool(lab.calls("rf"))


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_ran(lab: Lab, vid: str) -> None:
    calls = lab.calls(vid)
    mine = [p for p in lab.passes if p[0].startswith(vid)]  # type: ignore[attr-defined]
    assert len(calls) == (len(calls[:1]) if vid == "rf" else 1), (calls, mine)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_audit(lab: Lab, vid: str) -> None:
    assert "Traceback" not in lab.audit_err, lab.audit_err  # type: ignore[attr-defined]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    want = int(_rf_ran(lab)) if vid == "rf" else 1
    assert len(runs) == want, (runs, lab.audit_err)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_row(lab: Lab, vid: str) -> None:
    row = lab.rows.get(f"plans/{vid}", {})  # type: ignore[attr-defined]
    if vid == "rf" and not _rf_ran(lab):  # her approval rewound away: never started
        assert row and "completed" not in json.dumps(row), row
        return
    assert "completed" in json.dumps(row), row


@pytest.mark.parametrize("vid", cases(["k1", "k2"], ["k1", "k2"], {}))
def test_killed_at_most_once(lab: Lab, vid: str) -> None:
    """When the SIGKILL came, ``rec`` had run the plan at most once (the run before the push
    or the push before the run: either order, never a second run after)."""
    assert lab.at_kill[vid] <= 1 and len(lab.calls(vid)) == 1, lab.at_kill  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_mcp_log(lab: Lab, vid: str) -> None:
    """The agent's MCP ``log`` (remote mode) answers the record the remote holds: one run,
    completed, no error."""
    got = lab.mcp[vid]  # type: ignore[attr-defined]
    if vid == "rf" and not _rf_ran(lab):
        assert '"isError": true' not in got and '"status": "completed"' not in got, got[-1500:]
        return
    assert "completed" in got and '"isError": true' not in got, got[-1500:]


def test_forced_race_hit(lab: Lab) -> None:
    assert lab.fraced, "the forced racing hook never fired"  # type: ignore[attr-defined]


def test_kept(lab: Lab) -> None:
    assert lab.raced, "the racing hook never fired"  # type: ignore[attr-defined]
    assert lab.ancestry == 0, (lab.raced, lab.tip)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, {}))
def test_passes(lab: Lab, vid: str) -> None:
    mine = [p for p in lab.passes if p[0].startswith(vid)]  # type: ignore[attr-defined]
    assert mine and not any(p[2] for p in mine), mine
    if vid == "two":  # the second controller (its own state) is refused, the first goes on
        second = [p for p in mine if p[0].startswith("two-b")]
        assert second and all(p[1] != 0 and "--take-over" in p[3] for p in second), second
        mine = [p for p in mine if not p[0].startswith("two-b")]
    assert mine[-1][1] == 0, mine
    if vid in ("k1", "k2"):
        assert mine[0][0].endswith("-killed") and mine[0][1] == 0, mine[0]
