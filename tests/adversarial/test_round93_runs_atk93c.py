"""Round 93 (runs, atk93c): REMOTE mode over a real ``git daemon`` (round 92's lab: its
``origin.git`` with a ``pre-receive`` hook, the tool ``t91`` with ``slp``), past round 92's
``heirrun`` fix: failover copies of the state directory taken at the other points of a run
(after the start was pushed, before and during the first action; while the outcome commit is
unpushed), copies taken from a LIVE (stopped) controller with its process files (heirs of the
same token), a remote branch rewound to before a start after the plan ran, a remote that
accepted the pushes and then lost them (``origin.git`` restored from a backup), gates
approved while two controllers run and while the gate start is unpushed, ``retry:`` across a
kill with a copy beside, and the daemon's webhook with forged and replayed deliveries.

Lab (one build). Kills: ``run --once`` in a session of its own, polled at 0.5 ms,
SIGKILLed (``killpg``) once a condition holds; a "stopped copy" SIGSTOPs the group first,
copies the state directory while the process lives, then SIGKILLs it. A state copy is
``shutil.copytree`` of ``<state_dir>`` with a config naming it. After a kill the old state and
the copy are started together at a second's start.

- ``rh``: control (one pass).
- ``ca``: killed once the remote holds the start and before the tool's call; copy; both.
- ``ck``: as ``ca`` without a copy: the same state restarted alone (control).
- ``cc``: as ``ca``; the copy runs ALONE first (its pass ends), then the old host comes back.
- ``cv``: as ``ca``, but the live process SIGSTOPped, its state copied (process files and
  all), then SIGKILLed; old and copy together.
- ``cb``: (``slp``) killed mid-tool (``READY``); copy; both.
- ``co``: killed once the tool's call is logged and the clone is ahead of the remote (the
  outcome unpushed); copy; both.
- ``cu``: stopped at the unpushed start; copy of the live state; killed; both.
- ``cs``: (``slp``) stopped mid-tool; copy of the live state (same process files); killed;
  old, copy and a copy of the copy all started together.
- ``fw``: ran and completed; Bob force-pushes the remote back to the tip before its start;
  two passes (``fw:mid``: no second call; ``fw:held``: ``status --json`` names
  ``E_HISTORY_REWRITTEN``); Bob pushes the old tip back; a pass.
- ``bk``: ``origin.git`` backed up (``cp -a``) after the approval; the plan ran and
  completed; the backup restored (``bk:lost``: the remote lost start and complete); two
  passes (``bk:refused``).
- ``gw``: (gate on action 2) paused; a copy; the gate approved; old and copy together.
- ``gh``: (gate) paused; the gate approved; the pass killed at the gate start unpushed; copy;
  both.
- ``rt``: (``flk``: fails its first call only; ``on_failure: retry``, ``retries: 2``) killed
  0.3 s after its failed first call (mid-backoff, the start pushed); copy; both.
- ``wh``: the daemon with ``webhook.listen``; ``wh`` approved; deliveries: wrong
  ``X-Plangate-Secret``, GitHub ``X-Hub-Signature-256`` with a wrong key, the right key over
  another body, GitLab token wrong, ``Bearer`` wrong, none, the right HMAC (then replayed 10
  times while the plan runs, 5 after); a ``run --once`` on the daemon's state beside it.

Checks per plan: ``calls`` (each action's tool called once; ``ca``/``ck``/``cc``/``cv`` at
most once, the kill landed before any call; ``rt`` exactly twice: the failed try and one
retry), ``record`` (``completed``, not for runs killed mid-tool or ``bk``), ``subjects`` (one
start, two for a gate, at most one end), ``audit`` (no finding of the plan in a fresh
clone's ``plangate audit``, the valid runs ``complete`` / ``await-approval``+``complete``, an
interrupted run ``fail``, and a clean verdict only over a branch with at most one end),
preconditions (``landed``, ``ahead``, ``paused``, ``forced``, ``lost``, ``ready``, ``done``).

Seen (round 93): one class, ``heirlanded``, 12 ids (``ca``, ``cc``, ``cv``, ``rt`` x ``calls``,
``subjects``, ``audit``), in every build run (six for ``ca``, ``rt``; four for ``cc``, ``cv``):
a start the killed process had PUSHED (the remote holds it) before its first action was
journaled is run by every holder of a copy of the state directory. ``ca``: the tool called twice
1-66 ms apart (e.g. pids 5679 and 5682), both passes exit 0 logging ``"plan": "plans/ca" ...
"status": "completed", "event": "plan_outcome"``; the remote holds ONE ``plangate: start
plans/ca`` and TWO ``plangate: complete plans/ca``. ``cc`` is not even an overlap: the copy ran
alone (one call, ``cc:copy`` held), and the old host's single pass half a second later called
the tool again and pushed a second complete; the three commits carry three tokens (start
``Controller: vm/49c3dd44/8d8078fb5b55910c`` (the killed process), completes
``.../eefb164a9d8c449d`` (the copy) and ``.../cdd0af60237818b8`` (the restarted old host)): each
heir took the landed start of a dead process for its own run. ``cv`` (a copy of the live
process's state, same process files) the same: two calls 17-42 ms apart. ``rt``: killed
mid-backoff after the failed first try, the retry is made by BOTH heirs (three calls: the failed
try, then two 3 ms apart), two completes. The fresh clone's audit flagged the later complete
``controller-unexplained`` ("a commit under the controller's identity that it did not make:
records complete plans/cc with no cause on the branch: no start of the plan for an outcome
..."), ``log-changed`` and ``owned-block-changed`` for ``cc``, ``cv``, ``rt``, and for ``ca`` in
one build; in another build it reported NO finding for ``ca`` over the same shape (one start,
two completes, one valid ``complete`` run): the audit's verdict on a doubled run is not stable.
Held: ``ck`` (the same kill, the same state restarted alone: one call, one complete, audit
clean), so the double run needs two holders; ``cb``/``cs`` (killed mid-tool, copies with or
without process files, three together for ``cs``): the tool never called again, the run ends
``fail`` once; ``co`` (outcome unpushed, copy): one call, one complete; ``cu`` (a live copy at
the unpushed start): one call, one start (round 92's fix holds for the same token too); ``fw``:
after the force-push the next pass refused ``E_ALREADY_EXECUTED`` ("this exact plan ... already
ran here as plans/fw (start ...); a copy, move or rewritten history of it does not run again"),
``status`` showed ``E_HISTORY_REWRITTEN``, the old tip pushed back ended the hold
(``hold_released``, "its commits are back"), one call, audit clean; ``bk``: the restored remote
lost start and complete, the next pass refused ``E_ALREADY_EXECUTED`` and the tool was not
called again; ``gw``/``gh``: each action once, gate start and complete once, audit
``await-approval`` + ``complete``; ``wh``: forged deliveries ``403`` (wrong secret, wrong HMAC
key, right key over another body, GitLab, Bearer), none ``401``, the right HMAC and its 15
replays ``202``, the ``run --once`` beside the daemon ``E_LOCKED``, one call.

Should: docs/approvals.md, "Remote mode": "two controllers on one remote therefore never both
run a plan. Only a push that put the controller's commit on the remote counts: every commit
it makes carries its process's own token (``Controller:``, above), so no other process (a
copy of its state directory started for a failover, the same state restored on the same
host, another state directory with the same ``commit.key``) can make the same bytes"; the
push race that keeps a failover's overlap from running a plan twice does not apply when the
start is already on the remote and each heir takes it for its own. docs/operations.md's
Restore: "no action a commit of it shows started runs again as a new run"; ``cc`` is a
failover whose old host returns after the takeover finished. ``rt``: docs/execution.md,
``retry``: "up to ``retry.attempts`` (or ``retries``) more tries", made by one run.

Fixed (2026-12-02, r93heir): a resume is a claim on the remote. A pass that takes up a run
whose newest run event on the branch (the start, or a checkpoint) another process made first
commits a ``checkpoint`` of the plan with its own ``Controller:`` token (the plan file as the
branch holds it, a line in ``EXECUTION_LOG.md``; logged ``run_claimed``) and runs only when
the push of that commit put it on the remote (``Starting._claimed``, ``_claim_commit``); a
heir whose push loses, or that finds after the event its state directory made one sealed
with the same ``commit.key`` that its record lacks (another heir's claim, progress or
outcome), drops the job row and runs and commits nothing (``run_claimed_elsewhere``). The
run's own start is claimable whoever made it; a later event only when the state's record
held it before the process adopted anything by seal (``ControllerCore.restored_seals``), and
an index that had read commits then adopted by seal reads the branch again
(``_rescan_adopted``: without it, in a first version of this fix, the old host of ``ca``,
back for a pass after losing the claim, adopted the winner's checkpoint, took the plan for an
orphan of its own and committed a ``fail`` in doubt). The 12 ids pass; so does
``cu``, which once failed ``cu:calls`` on the unfixed code (two calls): the SIGSTOP landed
after the start's push, a ``heirlanded`` shape.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, until
from test_round2_execution_kit import shared
from test_round91_runs_atk91c import (
    GATE,
    PY,
    RETRY,
    _align,
    _calls,
    _kill_when,
    _plan,
    _popen,
    _record,
    _ref,
    _tools,
)
from test_round92_runs_atk92c import HOOK, SLP, _copy_state, _daemon, _stop, _try
from writerkit import free_port, wait_for

REMOTE: dict[str, list[tuple[str, str, str]]] = {
    "rh": [("rec", "rh", "")],
    "ca": [("rec", "ca", "")],
    "cb": [("slp", "cb", "")],
    "co": [("rec", "co", "")],
    "ck": [("rec", "ck", "")],
    "cc": [("rec", "cc", "")],
    "cv": [("rec", "cv", "")],
    "cu": [("rec", "cu", "")],
    "cs": [("slp", "cs", "")],
    "fw": [("rec", "fw", "")],
    "bk": [("rec", "bk", "")],
    "gw": [("rec", "gw-1", ""), ("rec", "gw-2", GATE)],
    "gh": [("rec", "gh-1", ""), ("rec", "gh-2", GATE)],
    "rt": [("flk", "rt", RETRY)],
    "wh": [("slp", "wh", "")],
}
SECRET = "s3cret-atk93c"


def _stop_copy(lab: Lab, pred: Callable[[], bool], name: str, limit: float = 60.0) -> Any:
    """A pass SIGSTOPped once ``pred`` holds, its state directory copied while it lives,
    then SIGKILLed: (landed, config of the copy)."""
    proc = _popen(lab, lab.config)
    end = time.time() + limit
    landed = False
    while time.time() < end and proc.poll() is None:
        if pred():
            os.killpg(proc.pid, signal.SIGSTOP)
            landed = True
            break
        time.sleep(0.0005)
    cfg = _copy_state(lab, name)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    return landed, cfg


def _together(seen: dict[str, Any], lab: Lab, key: str, *configs: Path) -> None:
    _align()
    procs = [_popen(lab, c) for c in configs]
    seen[key] = [(p.wait(120), p.stderr.read().decode()[-500:]) for p in procs]  # type: ignore[union-attr]


def _build(root: Path) -> Lab:
    d = root / "t"
    d.mkdir()
    (d / "t91.py").write_text(SLP)
    seen: dict[str, Any] = {}
    lab = Lab(root / "R", tools=_tools(d))
    lab.t = d  # type: ignore[attr-defined]
    for slug, acts in REMOTE.items():
        lab.write(slug, _plan(slug, acts))
    lab.commit("plans")
    folder = lab.root / "served"
    folder.mkdir()
    origin = folder / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(origin)], check=True)
    (origin / "hooks" / "pre-receive").write_text(HOOK)
    (origin / "hooks" / "pre-receive").chmod(0o755)
    port = free_port()
    daemon = _daemon(lab, folder, port)
    url = f"git://127.0.0.1:{port}/origin.git"
    lab.git("remote", "add", "origin", url)
    lab.config.write_text(
        lab.config.read_text().replace(
            f"repo: {lab.repo}\n",
            f"remote: {{url: {json.dumps(url)}, branch: main, poll_interval: 0.2}}\n",
        )
    )
    clone = lab.state / "clone"
    cfg = lab.config
    copies: list[Path] = []

    def pull() -> None:
        lab.git("fetch", "-q", "origin")
        lab.git("reset", "-q", "--hard", "origin/main")

    def approve(slug: str) -> None:
        pull()
        lab.approve(slug, ALICE)
        lab.git("push", "-q", "origin", "HEAD:main")

    def ahead() -> Callable[[], bool]:
        before = _ref(clone)
        return lambda: bool(_ref(clone)) and _ref(clone) not in (before, _ref(origin))

    def moved() -> Callable[[], bool]:
        before = _ref(origin)
        return lambda: _ref(origin) != before

    def passes(tag: str, *cs: Path) -> None:
        for c in cs:
            _try(lab, seen, c, tag)

    try:
        _try(lab, seen, cfg, "first")
        approve("rh")
        _try(lab, seen, cfg, "rh")
        # ca: killed with the start on the remote, before the tool's call
        approve("ca")
        m = moved()
        seen["ca:landed"] = _kill_when(lab, lambda: m() and not _calls(d, "ca"))
        seen["ca:landed"] = seen["ca:landed"] and not _calls(d, "ca")
        c = _copy_state(lab, "s-ca")
        copies.append(c)
        _together(seen, lab, "ca:rc", cfg, c)
        passes("after-ca", cfg, c)
        # ck: as ca, no copy: the same state restarted alone (control)
        approve("ck")
        m = moved()
        seen["ck:landed"] = _kill_when(lab, lambda: m() and not _calls(d, "ck"))
        seen["ck:landed"] = seen["ck:landed"] and not _calls(d, "ck")
        passes("after-ck", cfg, cfg)
        # cc: as ca; the copy runs ALONE, then the old host comes back
        approve("cc")
        m = moved()
        seen["cc:landed"] = _kill_when(lab, lambda: m() and not _calls(d, "cc"))
        seen["cc:landed"] = seen["cc:landed"] and not _calls(d, "cc")
        c = _copy_state(lab, "s-cc")
        copies.append(c)
        passes("cc-copy", c)
        seen["cc:copy"] = len(_calls(d, "cc"))
        passes("cc-old", cfg, c)
        # cv: as ca, the live process stopped and its state copied (same token), killed
        approve("cv")
        m = moved()
        seen["cv:landed"], c = _stop_copy(lab, lambda: m() and not _calls(d, "cv"), "s-cv")
        seen["cv:landed"] = seen["cv:landed"] and not _calls(d, "cv")
        copies.append(c)
        _together(seen, lab, "cv:rc", cfg, c)
        passes("after-cv", cfg, c)
        # cb: killed mid-tool (the start pushed)
        approve("cb")
        seen["cb:landed"] = _kill_when(lab, lambda: (d / "READY-cb").exists())
        c = _copy_state(lab, "s-cb")
        copies.append(c)
        _together(seen, lab, "cb:rc", cfg, c)
        passes("after-cb", cfg, c)
        # co: killed with the outcome in the clone only
        approve("co")
        a = ahead()
        seen["co:landed"] = _kill_when(lab, lambda: bool(_calls(d, "co")) and a())
        seen["co:ahead"] = _ref(clone) != _ref(origin)
        c = _copy_state(lab, "s-co")
        copies.append(c)
        _together(seen, lab, "co:rc", cfg, c)
        passes("after-co", cfg, c)
        # cu: stopped at the unpushed start, the live state copied, killed
        approve("cu")
        seen["cu:landed"], c = _stop_copy(lab, ahead(), "s-cu")
        copies.append(c)
        _together(seen, lab, "cu:rc", cfg, c)
        passes("after-cu", cfg, c)
        # cs: stopped mid-tool, the live state copied (process files and all), killed;
        # the old, the copy and a copy of the copy together
        approve("cs")
        seen["cs:landed"], c = _stop_copy(lab, lambda: (d / "READY-cs").exists(), "s-cs")
        c2 = lab.root / "s-cs2.yml"
        shutil.copytree(lab.root / "s-cs", lab.root / "s-cs2", symlinks=True)
        c2.write_text(c.read_text().replace("/s-cs\n", "/s-cs2\n"))
        copies += [c, c2]
        _together(seen, lab, "cs:rc", cfg, c, c2)
        passes("after-cs", cfg, c, c2)
        # fw: the remote rewound to before the start after the plan ran
        approve("fw")
        base = _ref(origin)
        _try(lab, seen, cfg, "fw")
        done = _ref(origin)
        lab.git("fetch", "-q", "origin")
        lab.git("push", "-q", "-f", "origin", f"{base}:main")
        seen["fw:forced"] = (base, done, _ref(origin))
        passes("fw-rewound", cfg, cfg)
        seen["fw:calls-mid"] = len(_calls(d, "fw"))
        seen["fw:held"] = lab.cli("status", "--json", "--config", str(cfg)).stdout
        lab.git("push", "-q", "-f", "origin", f"{done}:main")
        passes("fw-back", cfg)
        # bk: the remote accepted start and complete, then was restored from a backup
        approve("bk")
        backup = lab.root / "origin-backup.git"
        subprocess.run(["cp", "-a", str(origin), str(backup)], check=True)
        _try(lab, seen, cfg, "bk")
        seen["bk:ran"] = len(_calls(d, "bk"))
        shutil.rmtree(origin)
        subprocess.run(["cp", "-a", str(backup), str(origin)], check=True)
        seen["bk:lost"] = not any(
            x.startswith(("plangate: start plans/bk", "plangate: complete plans/bk"))
            for x in subprocess.run(
                ["git", "--git-dir", str(origin), "log", "--format=%s"],
                capture_output=True, text=True, check=True,
            ).stdout.splitlines()
        )  # fmt: skip
        n = len(seen["passes"])
        passes("bk-restored", cfg, cfg)
        seen["bk:refused"] = [p[2] for p in seen["passes"][n:]]
        # gw: gate approved while two controllers run
        approve("gw")
        _try(lab, seen, cfg, "gw-1")
        pull()
        seen["gw:paused"] = _record(lab, "gw").get("status")
        c = _copy_state(lab, "s-gw")
        copies.append(c)
        approve("gw")
        _together(seen, lab, "gw:rc", cfg, c)
        passes("after-gw", cfg, c)
        # gh: the gate start killed unpushed; copy; both
        approve("gh")
        _try(lab, seen, cfg, "gh-1")
        pull()
        seen["gh:paused"] = _record(lab, "gh").get("status")
        approve("gh")
        seen["gh:landed"] = _kill_when(lab, ahead())
        c = _copy_state(lab, "s-gh")
        copies.append(c)
        _together(seen, lab, "gh:rc", cfg, c)
        passes("after-gh", cfg, c)
        # rt: retry across a kill (mid-backoff), a copy beside
        approve("rt")
        seen["rt:landed"] = _kill_when(
            lab, lambda: bool(_calls(d, "rt")) and time.time() - _calls(d, "rt")[0]["at"] > 0.3
        )
        seen["rt:mid"] = len(_calls(d, "rt"))
        c = _copy_state(lab, "s-rt")
        copies.append(c)
        _together(seen, lab, "rt:rc", cfg, c)
        passes("after-rt", cfg, c)
        time.sleep(4.5)
        passes("after-rt2", cfg, c, cfg)
        # wh: forged and replayed webhook deliveries, a run --once beside the daemon
        hport = free_port()
        cfgw = lab.root / "daemon.yml"
        cfgw.write_text(cfg.read_text() + f'webhook: {{listen: "127.0.0.1:{hport}"}}\n')
        env = {**lab.env(), "PLANGATE_WEBHOOK_SECRET": SECRET}
        dmn = subprocess.Popen(
            [str(Path(PY).parent / "plangate"), "run", "--config", str(cfgw)],
            cwd=lab.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        try:
            wait_for(hport)
            approve("wh")
            body = json.dumps({"ref": "refs/heads/main"}).encode()
            other = json.dumps({"ref": "refs/heads/main", "x": 1}).encode()

            def post(headers: dict[str, str], data: bytes = body) -> int:
                req = urllib.request.Request(f"http://127.0.0.1:{hport}/webhook", data=data)
                for k, v in headers.items():
                    req.add_header(k, v)
                req.add_header("Content-Type", "application/json")
                try:
                    with urllib.request.urlopen(req, timeout=30) as answer:
                        return int(answer.status)
                except urllib.error.HTTPError as why:
                    return int(why.code)

            def sig(key: str, data: bytes) -> str:
                return "sha256=" + hmac.new(key.encode(), data, hashlib.sha256).hexdigest()

            good = {"X-Hub-Signature-256": sig(SECRET, body), "X-GitHub-Event": "push"}
            codes = {
                "wrong-secret": post({"X-Plangate-Secret": "guess"}),
                "wrong-hmac": post({"X-Hub-Signature-256": sig("guess", body)}),
                "hmac-other-body": post({"X-Hub-Signature-256": sig(SECRET, other)}),
                "gitlab-wrong": post({"X-Gitlab-Token": "guess"}),
                "bearer-wrong": post({"Authorization": "Bearer guess"}),
                "none": post({}),
                "good": post(good),
            }
            seen["wh:ready"] = until(lambda: (d / "READY-wh").exists(), 60, 0.01)
            codes["replays"] = [post(good) for _ in range(10)]
            result = lab.cli("run", "--once", "--config", str(cfg), timeout=300)
            seen["wh:beside"] = (result.returncode, result.stderr[-600:])
            seen["wh:codes"] = codes
            seen["wh:done"] = until(
                lambda: (
                    "complete plans/wh" in lab.git("log", "--format=%s", "origin/main")
                    if not lab.git("fetch", "-q", "origin", check=False)
                    else False
                ),
                60,
                0.5,
            )
            codes["late-replays"] = [post(good) for _ in range(5)]
            time.sleep(1.5)
        finally:
            os.killpg(dmn.pid, signal.SIGTERM)
            dmn.wait(timeout=180)
        passes("final", *copies, cfg)
        pull()
        seen["records"] = {s: _record(lab, s) for s in REMOTE}
        seen["subjects"] = {s: lab.subjects(s) for s in REMOTE}
        aud = lab.root / "Raud"
        aud.mkdir()
        subprocess.run(["git", "clone", "-q", str(origin), str(aud / "clone")], check=True)
        result = lab.cli("audit", "--json", cwd=aud / "clone")
        seen["audit"] = json.loads(result.stdout)
    finally:
        _stop(daemon)
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r93-atk93c", _build)


def _valid(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [
        e for e in report["executions"] if e["plan"] == f"plans/{slug}" and e.get("approval_valid")
    ]


def _findings(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [f for f in report.get("findings", []) if f.get("plan") == f"plans/{slug}"]


def _ends(subjects: list[str]) -> list[str]:
    return [x for x in subjects if x.split()[1] in ("complete", "fail", "abort")]


def _starts(subjects: list[str]) -> list[str]:
    return [x for x in subjects if x.split()[1] == "start"]


PLANS = ["rh", "ca", "ck", "cc", "cv", "cb", "co", "cu", "cs", "fw", "bk", "gw", "gh", "rt", "wh"]
CHECKS = ["calls", "record", "subjects", "audit"]
#: killed mid-tool: the record is the interrupted run's, not judged
NO_RECORD = {"cb", "cs", "bk"}
#: gated plans: a tool call per action and a start per gate
GATED = {"gw", "gh"}
IDS = (
    [f"{s}:{c}" for s in PLANS for c in CHECKS if not (c == "record" and s in NO_RECORD)]
    + [f"{s}:landed" for s in ("ca", "ck", "cc", "cv", "cb", "co", "cu", "cs", "gh", "rt")]
    + ["cc:copy", "co:ahead", "gw:paused", "gh:paused", "fw:forced", "fw:held", "fw:mid", "bk:lost"]
    + [
        "bk:ran",
        "bk:refused",
        "wh:ready",
        "wh:done",
        "wh:forged",
        "wh:replays",
        "wh:beside",
        "rt:mid",
    ]
)

#: heirlanded (ca, cc, cv, rt x calls, subjects, audit): fixed (r93heir)
BROKEN: dict[str, Any] = {}


def _tool_calls(d: Path, slug: str) -> list[list[dict[str, Any]]]:
    if slug in GATED:
        return [_calls(d, f"{slug}-1"), _calls(d, f"{slug}-2")]
    return [_calls(d, slug)]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_runs(lab: Lab, vid: str) -> None:
    slug, check = vid.split(":")
    seen, d = lab.seen, lab.t  # type: ignore[attr-defined]
    if check == "landed" or vid in ("co:ahead", "wh:ready", "wh:done"):
        assert seen[vid], seen["passes"][-6:]
        return
    if check == "paused":
        assert seen[vid] == "awaiting_approval", seen[vid]
        return
    if vid == "cc:copy":  # the copy, alone, ran the plan once
        assert seen[vid] == 1, seen["passes"][-4:]
        return
    if vid == "rt:mid":
        assert seen[vid] == 1, seen[vid]
        return
    if vid == "fw:forced":
        base, done, after = seen[vid]
        assert done != base and after == base, seen[vid]
        return
    if vid == "fw:held":
        assert "E_HISTORY_REWRITTEN" in seen[vid], seen[vid][-1500:]
        return
    if vid == "fw:mid":
        assert seen["fw:calls-mid"] == 1, seen["passes"][-4:]
        return
    if vid == "bk:lost":
        assert seen[vid], seen["passes"][-4:]
        return
    if vid == "bk:refused":  # the approval of a plan that ran is refused, never run again
        assert any("E_ALREADY_EXECUTED" in x for x in seen[vid]), seen[vid]
        return
    if vid == "bk:ran":
        assert seen[vid] == 1, seen["passes"][-4:]
        return
    if vid == "wh:forged":
        codes = seen["wh:codes"]
        forged = ["wrong-secret", "wrong-hmac", "hmac-other-body", "gitlab-wrong", "bearer-wrong"]
        assert all(codes[k] == 403 for k in forged) and codes["none"] == 401, codes
        assert codes["good"] == 202, codes
        return
    if vid == "wh:replays":
        assert set(seen["wh:codes"]["replays"]) == {202}, seen["wh:codes"]
        return
    if vid == "wh:beside":
        rc, err = seen[vid]
        assert rc != 0 and "E_LOCKED" in err and len(_calls(d, "wh")) == 1, seen[vid]
        return
    rec = seen["records"][slug]
    subj = seen["subjects"][slug]
    report = seen["audit"]
    if check == "calls":
        runs = _tool_calls(d, slug)
        if slug == "rt":
            # one failed try before the kill, one retry after it (``flk`` fails only once)
            assert len(runs[0]) == 2, (runs, seen.get("rt:rc"))
        elif slug in ("ca", "ck", "cc", "cv"):
            assert len(runs[0]) <= 1, (runs, seen.get("ca:rc"))
        else:
            assert all(len(r) == 1 for r in runs), (runs, seen.get(f"{slug}:rc"))
    elif check == "record":
        assert (rec.get("status"), rec.get("exec")) == ("completed", "completed"), rec
    elif check == "subjects":
        starts = {2} if slug in GATED else {0, 1} if slug == "bk" else {1}
        assert len(_starts(subj)) in starts and len(_ends(subj)) <= 1, subj
    elif check == "audit":
        runs = [e["outcome"] for e in _valid(report, slug)]
        want = [["await-approval", "complete"]] if slug in GATED else [[], ["complete"]]
        if slug in NO_RECORD:  # killed mid-tool: the interrupted run ends ``fail``
            want.append(["fail"])
        assert sorted(runs) in want, (slug, runs)
        assert not _findings(report, slug), _findings(report, slug)
        # a clean verdict agrees with the branch only when it records one run's end
        assert len(_ends(subj)) <= 1, (subj, "audit clean" if not _findings(report, slug) else "")
