"""Round 81 (runs): the daemon in remote mode: its page's JSON (``/api/``, ``/api/plan/<id>``)
while the served branch is rewritten, its webhook forged and flooded, one state directory shared
by a second controller, and a SIGKILL mid-run followed by two restarts at once.

SPEC §15: a plan runs at most once, exactly as approved; git history alone proves it. The page
reads the branch at the snapshot's head (docs/operations.md, "The page for reviewers and
operators"); the webhook's payload "is never trusted beyond the branch name: the daemon fetches
and reads git itself, so a forged request can at most cause one extra fetch" (The webhook);
"One controller per state directory: a second one exits 2 with ``E_LOCKED``".

Lab (one, ``writerkit.served``: a real ``git daemon``; then ``plangate run`` as a daemon with
``ui.listen`` and ``webhook.listen``). The agent commits ``ctl``, ``rw``, ``fk``, ``ctl2`` (one
``rec`` action each) and ``sl`` (``rec``, then ``hold``: an exec tool that waits for a marker).
Phases:

1. The daemon freezes everything; Alice approves ``ctl`` and ``rw``; both run;
   ``/api/plan/plans/rw`` is read (``api:done``).
2. SHARED STATE: ``plangate run --once`` on the same config (the same state directory) while
   the daemon runs (``second``: exit 2, ``E_LOCKED``, nothing run).
3. REWIND: the agent force-pushes ``main`` back to Alice's approval (the controller's
   ``start``/``complete`` dropped); 3 s later the remote's log and ``/api/plan/plans/rw`` are read
   (``api:rewind``: ``completed`` only if the remote's history holds the record again).
4. ORPHAN: the agent force-pushes an orphan commit (the whole tree, ``rw``'s record copied, ``fk``
   set ``approved`` by the agent); ``/api/plan/plans/rw``, ``/api/plan/plans/fk`` and ``/api/``
   (``api:orphan_rw``: no ``completed``, ``E_HISTORY_REWRITTEN``; ``api:orphan_fk``: never
   approved, held; ``api:orphan_index``: no plan counted ``completed``); the owner restores.
5. WEBHOOK: Alice's approval of ``fk`` exists only on the branch ``side``, and on ``main`` of an
   evil bare repository; a payload naming ``main`` with ``after``/``head_commit`` = that commit and
   ``repository.clone_url``/``git_url``/``url`` = the evil repository is sent without a secret
   (``401``), with a wrong one (``403``), GitHub-signed and as a bearer (``202``); a push to
   ``side`` (``202``), non-JSON bytes (``202``: at most one extra fetch), 2 MiB (``413``, or
   the socket closed on the sender under load); then 150
   forged requests in a row (all ``202``, the daemon alive, its page answering: ``hook:*``).
   ``fk`` must never run.
6. ``ctl2``: Alice approves; the daemon runs it (honest work after all of the above).
7. KILL: Alice approves ``sl``; once ``hold`` runs (``rec`` already called), the daemon's process
   group is SIGKILLed; the marker is released; two ``run --once`` start at the same moment on the
   one state directory (one exits 2 ``E_LOCKED``, the other resumes: ``hold``'s start without an
   end is ``E_ACTION_IN_DOUBT``, the plan fails, never re-runs ``rec``); one more pass.

Variants: ``ran`` (``rec`` calls: ``ctl``, ``rw``, ``ctl2``, ``sl`` once, ``fk`` never), ``audit``
(a fresh clone's ``audit --json``: one valid run each, ``sl``'s ``fail``, none of ``fk``), ``api``
(``done``, ``rewind``, ``orphan_rw``, ``orphan_fk``, ``orphan_index``, ``running``: the page said
``sl`` ``executing`` with ``rec`` done while ``hold`` ran), ``second``, ``hook`` (each request's
answer), ``alive``, ``kill`` (``at_kill``: ``rec`` ran once before the kill; ``pair``: one of the
two restarts ``E_LOCKED``, no traceback; ``after``: the next pass exits 0).

Seen (round 81): no break. Held: a second controller on the daemon's state directory exited 2
``E_LOCKED`` naming the pid; after the REWIND the daemon had pushed its ``start``/``complete`` back
within 3 s, and the page said ``completed`` only with that record on the remote; on the ORPHAN the
page's ``rw`` row lost ``completed`` (``E_ILLEGAL_TRANSITION`` for the agent's copied block, waiting
``E_HISTORY_REWRITTEN``), ``fk`` stayed ``pending_approval`` with the hold, the index counted no
plan completed; every forged webhook was answered as documented and ``fk`` never ran (neither the
side branch nor the evil repository a payload named was read), the daemon survived 150 requests;
``ctl2`` ran once after; the SIGKILL mid-``hold`` left ``rec`` at one call, of the two restarts at
once one was ``E_LOCKED`` and the other recorded ``E_ACTION_IN_DOUBT`` (failed, never re-run); the
fresh-clone audit agreed. Not tried (time): MCP ``wait``/``log`` while a plan runs (MCP is
local-only: a remote-mode config is refused, known), a remote made shallow between the
controller's commit and its push.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text, served_audit, valid_runs
from mcpkit import PLANGATE
from test_round2_execution_kit import shared
from writerkit import free_port, served

HOOK_SECRET = "hook-secret-81c"
HOLD = r"""
import os, sys, time
d = os.environ["HOLD_DIR"]
open(os.path.join(d, "HELD"), "w").write(str(os.getpid()))
for _ in range(400):
    if os.path.exists(os.path.join(d, "GO")):
        break
    time.sleep(0.1)
print('{"held": true}')
"""


def _until(pred: Any, timeout: float = 60.0) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.2)
    return False


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=20) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except OSError as e:
        return -1, repr(e)


def _post(port: int, body: bytes, headers: dict[str, str]) -> int:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/webhook", data=body, headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return -1


def _sign(body: bytes) -> dict[str, str]:
    mac = hmac.new(HOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature-256": f"sha256={mac}", "X-GitHub-Event": "push",
            "Content-Type": "application/json"}  # fmt: skip


def _build(root: Path) -> Lab:
    (root / "hold").mkdir(parents=True)
    (root / "hold.py").write_text(HOLD)
    argv = json.dumps([sys.executable, str(root / "hold.py")])
    held = json.dumps(str(root / "hold"))
    lab = Lab(root, tools=f"hold: {{kind: exec, argv: {argv}, env: {{HOLD_DIR: {held}}}}}\n")
    lab.extra_env = {"PLANGATE_WEBHOOK_SECRET": HOOK_SECRET}  # type: ignore[attr-defined]
    for vid in ["ctl", "rw", "fk", "ctl2"]:
        lab.write(vid, plan_text(vid))
    lab.write(
        "sl",
        plan_text(
            "sl", extra_actions='  - id: 2\n    tool: hold\n    why: "hold"\n    params: {}\n'
        ).replace("  - name: rec\n", "  - name: rec\n  - name: hold\n"),
    )
    lab.commit("agent plans", AGENT)
    ui, hook = free_port(), free_port()
    lab.ports = (ui, hook)  # type: ignore[attr-defined]
    lab.seen = {}  # type: ignore[attr-defined]
    with served(lab) as url:
        lab.config.write_text(
            lab.config.read_text()
            + f'ui: {{listen: {ui}}}\nwebhook: {{listen: "127.0.0.1:{hook}"}}\n'
        )
        env = lab.env()
        env["REC_LOG"] = str(lab.log)

        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                [PLANGATE, "run", "--config", str(lab.config)], cwd=root, env=env,
                stdout=subprocess.DEVNULL, stderr=open(root / f"daemon-{time.time()}.err", "wb"),
                start_new_session=True,
            )  # fmt: skip

        def push(ref: str = "HEAD:refs/heads/main", force: bool = False) -> None:
            lab.git("push", "-q", *(["--force"] if force else []), "origin", ref)

        def pull() -> None:
            lab.git("fetch", "-q", "origin", "refs/heads/main")
            lab.git("reset", "-q", "--hard", "FETCH_HEAD")

        def remote_log() -> str:
            return (
                lab.git("log", "--format=%s", "origin/main")
                if lab.git("fetch", "-q", "origin") is not None
                else ""
            )

        push()
        d = start()
        _until(lambda: _get(ui, "/api/")[0] == 200)
        _until(
            lambda: (
                "frozen" in lab.git("log", "-1", "--format=%s", "FETCH_HEAD")
                if lab.git("fetch", "-q", "origin", "main") is not None
                else False
            ),
            30,
        )
        lab.seen["api0"] = _get(ui, "/api/")[1]
        pull()
        lab.approve("ctl")
        lab.approve("rw")
        a1 = lab.head()
        push()
        _until(
            lambda: (
                len(lab.calls("ctl"))
                and len(lab.calls("rw"))
                and "complete plans/rw" in remote_log()
            ),
            60,
        )
        pull()
        t1 = lab.head()
        lab.seen["api_rw_done"] = _get(ui, "/api/plan/plans/rw")
        lab.seen["api_index"] = _get(ui, "/api/")
        # shared state: a second controller on the same state directory while the daemon runs
        second = lab.cli("run", "--once", "--config", str(lab.config))
        lab.seen["second"] = (second.returncode, second.stderr[-1500:])
        # rewind the served main to Alice's approval: the page after
        push(f"{a1}:refs/heads/main", force=True)
        time.sleep(3)
        lab.seen["rewind_remote"] = remote_log()
        lab.seen["rewind_api"] = _get(ui, "/api/plan/plans/rw")
        # orphan: the agent's own history, rw's record copied and fk approved
        lab.git("checkout", "-q", "--orphan", "fresh")
        lab.set_status("fk", "approved")
        lab.commit("agent: fresh start", AGENT)
        push("fresh:refs/heads/main", force=True)
        time.sleep(3)
        lab.seen["orphan_api"] = _get(ui, "/api/plan/plans/rw")
        lab.seen["orphan_api_fk"] = _get(ui, "/api/plan/plans/fk")
        lab.seen["orphan_index"] = _get(ui, "/api/")
        lab.git("checkout", "-q", "-f", "main")
        lab.git("branch", "-q", "-D", "fresh")
        lab.git("reset", "-q", "--hard", t1)
        push(f"{t1}:refs/heads/main", force=True)
        time.sleep(3)
        # webhook: forged and flooded
        lab.git("checkout", "-q", "--detach", t1)
        lab.set_status("fk", "approved")
        sha = lab.commit("approve fk", ALICE)
        push(f"{sha}:refs/heads/side")
        lab.git("checkout", "-q", "-f", "main")
        lab.git("reset", "-q", "--hard", t1)
        evil = root / "evil.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(evil)], check=True)
        subprocess.run(["git", "-C", str(evil), "update-ref", "refs/heads/main", sha], check=True)
        forged = json.dumps({
            "ref": "refs/heads/main", "before": t1, "after": sha,
            "head_commit": {"id": sha}, "commits": [{"id": sha}],
            "repository": {"clone_url": f"file://{evil}", "git_url": f"file://{evil}", "url": f"file://{evil}"},
        }).encode()  # fmt: skip
        codes = {
            "none": _post(hook, forged, {"Content-Type": "application/json"}),
            "wrong": _post(hook, forged, {"X-Plangate-Secret": "nope"}),
            "signed": _post(hook, forged, _sign(forged)),
            "bearer": _post(hook, forged, {"Authorization": f"Bearer {HOOK_SECRET}"}),
            "side": _post(hook, b'{"ref": "refs/heads/side"}', {"X-Plangate-Secret": HOOK_SECRET}),
            "junk": _post(hook, b"\x00\xff" * 100, {"X-Plangate-Secret": HOOK_SECRET}),
            "big": _post(hook, b"{" * (2 << 20), {"X-Plangate-Secret": HOOK_SECRET}),
        }
        flood = [_post(hook, forged, {"X-Plangate-Secret": HOOK_SECRET}) for _ in range(150)]
        codes["flood"] = sorted(set(flood))  # type: ignore[assignment]
        lab.seen["hook"] = codes
        lab.seen["alive_after_flood"] = d.poll() is None and _get(ui, "/api/")[0] == 200
        # ctl2: the daemon still runs honest work after all that
        lab.approve("ctl2")
        push()
        _until(lambda: len(lab.calls("ctl2")) > 0 and "complete plans/ctl2" in remote_log(), 60)
        pull()
        # SIGKILL mid-run, then two restarts at once on the one state directory
        lab.approve("sl")
        push()
        _until(lambda: (root / "hold" / "HELD").exists(), 60)
        lab.seen["held"] = (root / "hold" / "HELD").exists()
        lab.seen["sl_api_running"] = _get(ui, "/api/plan/plans/sl")
        os.killpg(d.pid, signal.SIGKILL)
        d.wait(timeout=20)
        lab.seen["sl_calls_at_kill"] = len(lab.calls("sl"))
        (root / "hold" / "GO").write_text("go")
        time.sleep(1)
        pair = [
            subprocess.Popen(
                [PLANGATE, "run", "--once", "--config", str(lab.config)],
                cwd=root,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(2)
        ]
        outs = [p.communicate(timeout=240) for p in pair]
        lab.seen["pair"] = [
            (p.returncode, o[1].decode("utf-8", "replace")[-1500:])
            for p, o in zip(pair, outs, strict=True)
        ]
        after = lab.run(check=False)
        lab.seen["after"] = (after.returncode, after.stderr[-1500:])
        pull()
        served_audit(lab, url, root / "fresh")
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r81-daemon", _build)


RAN = {"ctl": 1, "rw": 1, "ctl2": 1, "sl": 1, "fk": 0}


@pytest.mark.parametrize("vid", cases(list(RAN), list(RAN), {}))
def test_ran(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == RAN[vid], lab.calls(vid)


@pytest.mark.parametrize("vid", cases(list(RAN), list(RAN), {}))
def test_audit(lab: Lab, vid: str) -> None:
    assert "Traceback" not in lab.audit_err, lab.audit_err  # type: ignore[attr-defined]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == RAN[vid], runs
    if runs:
        assert runs[0]["outcome"] == ("fail" if vid == "sl" else "complete"), runs
    assert lab.report.get("ok") is True, lab.report.get("findings")  # type: ignore[attr-defined]


def _row(lab: Lab, key: str) -> dict[str, Any]:
    code, body = lab.seen[key]  # type: ignore[attr-defined]
    assert code == 200, (code, body[-800:])
    return dict(json.loads(body))


API = ["done", "rewind", "orphan_rw", "orphan_fk", "orphan_index", "running"]


@pytest.mark.parametrize("which", cases(API, API, {}))
def test_api(lab: Lab, which: str) -> None:
    seen = lab.seen  # type: ignore[attr-defined]
    if which == "done":
        assert _row(lab, "api_rw_done")["row"]["status"] == "completed"
    elif which == "rewind":
        row = _row(lab, "rewind_api")["row"]
        log = seen["rewind_remote"].splitlines()
        if row["status"] == "completed":  # only with the record on the remote again
            assert log[0].startswith("plangate: complete") and "plangate: start plans/rw" in log, (
                log
            )
        else:
            assert "E_HISTORY_REWRITTEN" in json.dumps(row), row
    elif which == "orphan_rw":
        row = _row(lab, "orphan_api")["row"]
        assert row["status"] != "completed" and "E_HISTORY_REWRITTEN" in str(row["waiting"]), row
    elif which == "orphan_fk":
        row = _row(lab, "orphan_api_fk")["row"]
        assert row["status"] == "pending_approval" and row["approver"] is None, row
        assert "E_HISTORY_REWRITTEN" in str(row["waiting"]), row
    elif which == "orphan_index":
        counts = _row(lab, "orphan_index")["counts"]
        assert "completed" not in counts and "approved" not in counts, counts
    else:
        row = _row(lab, "sl_api_running")["row"]
        assert row["status"] == "executing" and row["progress"]["done"] == 1, row


def test_second(lab: Lab) -> None:
    code, err = lab.seen["second"]  # type: ignore[attr-defined]
    assert code == 2 and "E_LOCKED" in err and "Traceback" not in err, (code, err)


HOOK = {"none": 401, "wrong": 403, "signed": 202, "bearer": 202, "side": 202, "junk": 202,
        "big": 413, "flood": [202]}  # fmt: skip


@pytest.mark.parametrize("kind", cases(list(HOOK), list(HOOK), {}))
def test_hook(lab: Lab, kind: str) -> None:
    got = lab.seen["hook"][kind]  # type: ignore[attr-defined]
    if kind == "big":  # 413, or the server closed the socket on the sender past the limit
        assert got in (413, -1), lab.seen["hook"]  # type: ignore[attr-defined]
    else:
        assert got == HOOK[kind], lab.seen["hook"]  # type: ignore[attr-defined]
    assert lab.calls("fk") == []


def test_alive(lab: Lab) -> None:
    assert lab.seen["alive_after_flood"] is True  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "what", cases(["at_kill", "pair", "after"], ["at_kill", "pair", "after"], {})
)
def test_kill(lab: Lab, what: str) -> None:
    seen = lab.seen  # type: ignore[attr-defined]
    if what == "at_kill":
        assert seen["held"] and seen["sl_calls_at_kill"] == 1, seen["sl_calls_at_kill"]
    elif what == "pair":
        codes = sorted(code for code, _ in seen["pair"])
        assert not any("Traceback" in err for _, err in seen["pair"]), seen["pair"]
        assert codes in ([0, 2], [0, 0]), seen["pair"]
        assert any("E_ACTION_IN_DOUBT" in err for _, err in seen["pair"]) or codes == [0, 0]
        for code, err in seen["pair"]:
            assert code == 0 or "E_LOCKED" in err, err
    else:
        code, err = seen["after"]
        assert code == 0 and "Traceback" not in err, (code, err)
