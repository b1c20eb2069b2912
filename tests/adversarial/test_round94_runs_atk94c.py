"""Round 94 (runs, atk94c): REMOTE mode over a real ``git daemon`` (round 93's lab), past
round 93's ``r93heir`` fix (a heir resumes a run another process started only after its own
``checkpoint`` claim commit was pushed and won): kills DURING the claim, a claim rewound off
the remote, a slow remote under two racing heirs, forged and replayed claim commits, claims
on a gated plan and on a run whose outcome push was refused, ``commit.key`` rotated between
start and resume.

Lab (one build). Every heir case starts from round 93's ``ca`` shape: one ``run --once``
SIGKILLed once the remote holds the start and before the tool's call; ``shutil.copytree`` of
the state directory (the "copy"); then the old state and the copy started together.

- ``rh``: control (one pass).
- ``ck``: control: the ``ca`` kill, the same state restarted alone.
- ``kc``: the copy runs alone and is SIGKILLed once its clone is ahead of the remote (the
  claim commit made, unpushed); then old and copy together.
- ``kp``: the copy runs alone and is SIGKILLed once the remote moved past the start (the claim
  pushed) and before the tool's call; then old and copy together.
- ``rw``: as ``kp``; then Bob force-pushes the remote back to the start (the claim rewound
  off the remote); old and copy together.
- ``sl``: the remote's ``pre-receive`` sleeps 1.5 s on every push; old and copy together.
- ``fg``: the agent pushes a forged ``plangate: checkpoint plans/fg`` commit (the start's
  message with ``start`` -> ``checkpoint``, its ``Controller:`` trailer, under the
  controller's name; unsealed); old and copy together.
- ``fr``: the agent replays ``kp``'s sealed claim commit message (its trailer) on
  ``plans/fr``; old and copy together.
- ``gt``: gate on action 2: paused, the gate approved, the pass killed once the gate start
  landed and before action 2's call; copy; both.
- ``od``: the remote declines ``complete plans/od`` (``DENY``): the pass runs the tool, its
  outcome push refused; the refusal lifted; copy; both.
- ``kr``: the ``ca`` kill; the copy's ``commit.key`` replaced by a new one (64 hex digits,
  mode 0600); old and copy together.
- ``lk``: LOCAL mode (a lab of its own): the pass killed once the branch moved (the start
  committed) and before the call; the same state restarted twice.

Checks per plan: ``calls`` (each action's tool called at most once; ``rh``, ``od``, ``gt``
exactly once), ``subjects`` (one start (two for ``gt``), at most one end; ``lk``: no
``checkpoint`` commit), ``ended`` (exactly one ``plangate: complete`` of the plan: the approved
plan ran to its end once, the gate approval not lost), ``audit`` (the fresh clone's verdicts:
valid runs ``complete``/``fail`` or nothing, ``await-approval`` + ``complete`` for ``gt``, no
finding of the plan, and a clean verdict only over a branch with at most one end),
preconditions (``landed``, ``claimed``: the copy killed with its claim commit in its clone
only (``kc``) or on the remote (``kp``, ``rw``); ``kr:key``; ``fg:forged``).

Seen (round 94), in every full build run (four): two classes, 7 ids.

- ``rekeyheir`` (``kr:calls``, ``kr:subjects``, ``kr:ended``, ``kr:audit``): the copy with a
  rotated ``commit.key`` and the old state, started together, BOTH claim and BOTH run the
  plan: the tool called twice (pids 24675 and 24800, 344 ms apart; 300 ms in another build),
  both passes exit 0 logging ``plan_outcome``; the remote holds ``start plans/kr``
  (``Controller: vm/b642fef1/3bff004723e48d04``, the killed process), ``checkpoint plans/kr``
  (``.../17d0a4f572b0454c``), a second ``checkpoint plans/kr`` (``.../8475b805d3f80c4f``)
  pushed on top of the first claim, then a ``complete`` from each (in another build the
  order was start, checkpoint, complete, checkpoint, complete: the second heir claimed and
  ran again after the first had completed). The fresh clone's audit flags the later
  checkpoint and complete ``controller-unexplained`` ("records complete plans/kr with no
  cause on the branch: no start of the plan for an outcome ..."), ``log-changed``,
  ``owned-block-changed``.
- ``heiroutcome`` (``od:subjects``, ``od:ended``, ``od:audit``): the remote declined
  ``complete plans/od`` (``push_refused``, ``outcome_not_committed``); the refusal lifted, the
  state copied, old and copy together: the tool was NOT called again (one call), but both
  heirs replayed the journal's outcome and both pushed a ``plangate: complete plans/od``
  (tokens ``vm/b642fef1/2143918dbde9db80`` and ``.../9bec0b75c98fdca1``; the start's is
  ``.../25780b573ea58ace``): two outcome commits of one run on the branch, and the fresh
  clone's audit reports one valid ``complete`` run and NO finding for ``plans/od``.

Held: ``ck`` (control); ``kc`` (heir killed with its claim in its clone only: one call, one
checkpoint on the remote, one complete); ``kp`` and ``rw`` (heir killed after its claim was
pushed; ``rw`` with the remote then force-pushed back to the start): one call, one complete,
audit clean; ``sl`` (``pre-receive`` sleeping 1.5 s under two racing heirs): one claim, one
call; ``fg`` (the agent's unsealed ``checkpoint plans/fg`` made of the start's message, its
``Controller:`` and ``Controller-Seal:`` trailers, under the controller's name, pushed before
the heirs start): one call, one complete; note the fresh clone's audit reported no finding for
the forged checkpoint (a checkpoint of an ``executing`` plan is a plausible run event by git
alone; not asserted here); ``fr`` (``kp``'s sealed claim message replayed on ``plans/fr``):
one call, one complete; ``gt`` (gate start landed, killed before action 2): each action once,
audit ``await-approval`` + ``complete``; ``lk`` (local mode): one call after the restart, no
``checkpoint`` commit.

Should: docs/approvals.md, "Remote mode": "two controllers on one remote therefore never both
run a plan"; docs/operations.md, "Failover in remote mode": "a run the copy's record shows
started by a process that is gone is taken up only after a ``checkpoint`` commit of the
taking process's own (logged ``run_claimed``) was pushed, so the push race decides which of
them resumes it; the other drops the run". ``kr``: docs/operations.md (a copy with a new
``commit.key``): "The commits the old key sealed after the copy are then another
controller's: a plan whose run one of them started or resumed (a gate passed after the copy)
waits (``status``: "another controller or a lost key", docs/approvals.md) until a new version
of it is approved" -- here the re-keyed copy resumed (and re-ran) the old key's run. ``od``:
docs/operations.md's ``push_refused`` row: "The tool does not run again: its journal replays
the outcome" -- it replays it once per heir, and the branch records two outcomes of one run
while the audit finds nothing.

Fixed (2026-12-02, r94heir): both classes, the 7 ids pass. ``rekeyheir``: a run event after
the start under the controller's name that the process cannot attribute (not in its record,
not sealed with its key, but carrying a seal of the right shape that copies none of its own
commits' seals: another key's) is another holder's (``ControllerCore._another_holders``):
``Starting._run_holder`` returns it, so the heir drops the run (``run_claimed_elsewhere``)
instead of claiming over it, and ``Committing._taken_over`` drops an outcome after one.
``heiroutcome``: replaying a refused outcome is a claim (``Starting._replays_outcome``): only
while the branch holds no outcome of the run by the controller and no other holder's event
after its start; the loser of two replays at once finds the winner's sealed ``complete`` at
its retry (``_taken_over``) and commits nothing. The fresh-clone audit now reads an outcome
commit that changes no file (``audit._with_run_records``), so a second outcome of one start
is a finding (``tests/approval/test_audit_started_twice.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared
from test_round91_runs_atk91c import GATE, _align, _calls, _kill_when, _plan, _popen, _ref, _tools
from test_round92_runs_atk92c import HOOK, SLP, _copy_state, _daemon, _stop, _try
from writerkit import free_port

SLOWHOOK = HOOK.replace("#!/bin/sh\n", "#!/bin/sh\n[ -f SLOW ] && sleep 1.5\n", 1)

REMOTE: dict[str, list[tuple[str, str, str]]] = {
    "rh": [("rec", "rh", "")],
    "ck": [("rec", "ck", "")],
    "kc": [("rec", "kc", "")],
    "kp": [("rec", "kp", "")],
    "rw": [("rec", "rw", "")],
    "sl": [("rec", "sl", "")],
    "fg": [("rec", "fg", "")],
    "fr": [("rec", "fr", "")],
    "gt": [("rec", "gt-1", ""), ("rec", "gt-2", GATE)],
    "od": [("rec", "od", "")],
    "kr": [("rec", "kr", "")],
}


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
    (origin / "hooks" / "pre-receive").write_text(SLOWHOOK)
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
    cfg = lab.config
    copies: list[Path] = []

    def ogit(*args: str) -> str:
        return subprocess.run(
            ["git", "--git-dir", str(origin), *args], capture_output=True, text=True, check=True
        ).stdout

    def pull() -> None:
        lab.git("fetch", "-q", "origin")
        lab.git("reset", "-q", "--hard", "origin/main")

    def approve(slug: str) -> None:
        pull()
        lab.approve(slug, ALICE)
        lab.git("push", "-q", "origin", "HEAD:main")

    def moved() -> Callable[[], bool]:
        before = _ref(origin)
        return lambda: _ref(origin) != before

    def passes(tag: str, *cs: Path) -> None:
        for c in cs:
            _try(lab, seen, c, tag)

    def landed_kill(slug: str, tag: str | None = None) -> None:
        """The ``ca`` kill: the start on the remote, the tool not called."""
        t = tag or slug
        approve(slug)
        m = moved()
        ok = _kill_when(lab, lambda: m() and not _calls(d, t))
        seen[f"{slug}:landed"] = ok and not _calls(d, t)

    def forge(slug: str, message: str) -> None:
        """The agent commits and pushes an empty commit with ``message`` under the
        controller's name and email (as the start's commit shows them)."""
        pull()
        who = lab.git("log", "-1", "--format=%an%x00%ae", "--grep", f"start plans/{slug}")
        name, email = who.strip().split("\x00")
        lab.git("commit", "-q", "--allow-empty", "-m", message, who=(name, email))
        lab.git("push", "-q", "origin", "HEAD:main")

    try:
        _try(lab, seen, cfg, "first")
        approve("rh")
        _try(lab, seen, cfg, "rh")
        # ck: control
        landed_kill("ck")
        passes("after-ck", cfg, cfg)
        # kc: the heir killed with its claim commit unpushed
        landed_kill("kc")
        c = _copy_state(lab, "s-kc")
        copies.append(c)
        cl = lab.root / "s-kc" / "clone"
        base = _ref(cl)
        seen["kc:claimed"] = _kill_when(
            lab, lambda: _ref(cl) not in ("", base, _ref(origin)) and not _calls(d, "kc"), config=c
        )
        seen["kc:claimed"] = seen["kc:claimed"] and not _calls(d, "kc")
        seen["kc:msg"] = subprocess.run(
            ["git", "-C", str(cl), "log", "-1", "--format=%B"], capture_output=True, text=True
        ).stdout
        _together(seen, lab, "kc:rc", cfg, c)
        passes("after-kc", cfg, c)
        # kp: the heir killed with its claim pushed, before the call
        landed_kill("kp")
        c = _copy_state(lab, "s-kp")
        copies.append(c)
        m = moved()
        seen["kp:claimed"] = _kill_when(lab, lambda: m() and not _calls(d, "kp"), config=c)
        seen["kp:claimed"] = seen["kp:claimed"] and not _calls(d, "kp")
        seen["kp:msg"] = ogit("log", "-1", "--format=%B", "main")
        _together(seen, lab, "kp:rc", cfg, c)
        passes("after-kp", cfg, c)
        # rw: as kp, then the remote rewound past the claim
        landed_kill("rw")
        start = _ref(origin)
        c = _copy_state(lab, "s-rw")
        copies.append(c)
        m = moved()
        seen["rw:claimed"] = _kill_when(lab, lambda: m() and not _calls(d, "rw"), config=c)
        seen["rw:claimed"] = seen["rw:claimed"] and not _calls(d, "rw")
        seen["rw:msg"] = ogit("log", "-1", "--format=%s", "main")
        lab.git("fetch", "-q", "origin")
        lab.git("push", "-q", "-f", "origin", f"{start}:main")
        _together(seen, lab, "rw:rc", cfg, c)
        passes("after-rw", cfg, c)
        # sl: two heirs racing on a slow remote
        landed_kill("sl")
        c = _copy_state(lab, "s-sl")
        copies.append(c)
        (origin / "SLOW").write_text("1")
        try:
            _together(seen, lab, "sl:rc", cfg, c)
        finally:
            (origin / "SLOW").unlink()
        passes("after-sl", cfg, c)
        # fg: a forged claim commit by the agent
        landed_kill("fg")
        msg = ogit("log", "-1", "--format=%B", "main")
        seen["fg:start"] = msg
        seen["fg:forged"] = msg.startswith("plangate: start plans/fg")
        forge("fg", msg.replace("start plans/fg", "checkpoint plans/fg"))
        c = _copy_state(lab, "s-fg")
        copies.append(c)
        _together(seen, lab, "fg:rc", cfg, c)
        passes("after-fg", cfg, c)
        # fr: kp's sealed claim message replayed on fr
        landed_kill("fr")
        forge("fr", seen["kp:msg"].replace("plans/kp", "plans/fr"))
        c = _copy_state(lab, "s-fr")
        copies.append(c)
        _together(seen, lab, "fr:rc", cfg, c)
        passes("after-fr", cfg, c)
        # gt: the gate start landed, killed before action 2's call
        approve("gt")
        _try(lab, seen, cfg, "gt-1")
        approve("gt")
        m = moved()
        ok = _kill_when(lab, lambda: m() and not _calls(d, "gt-2"))
        seen["gt:landed"] = ok and not _calls(d, "gt-2")
        c = _copy_state(lab, "s-gt")
        copies.append(c)
        _together(seen, lab, "gt:rc", cfg, c)
        passes("after-gt", cfg, c)
        # od: the outcome push refused, then allowed; copy; both
        approve("od")
        (origin / "DENY").write_text("complete plans/od\n")
        try:
            _try(lab, seen, cfg, "od-denied")
        finally:
            (origin / "DENY").unlink()
        seen["od:landed"] = bool(_calls(d, "od")) and "complete plans/od" not in ogit(
            "log", "--format=%s", "main"
        )
        c = _copy_state(lab, "s-od")
        copies.append(c)
        _together(seen, lab, "od:rc", cfg, c)
        passes("after-od", cfg, c)
        # kr: commit.key rotated in the copy between start and resume
        landed_kill("kr")
        c = _copy_state(lab, "s-kr")
        copies.append(c)
        key = lab.root / "s-kr" / "commit.key"
        seen["kr:key"] = key.exists()
        key.write_text(os.urandom(32).hex() + "\n")
        key.chmod(0o600)
        _together(seen, lab, "kr:rc", cfg, c)
        passes("after-kr", cfg, c)
        # lk: local mode, the kill after the start commit and before the call; restarted
        loc = Lab(root / "L", tools=_tools(d))
        loc.write("lk", _plan("lk", [("rec", "lk", "")]))
        loc.commit("plans")
        _try(loc, seen, loc.config, "l-first")
        loc.approve("lk")
        gd = loc.repo / ".git"
        before = _ref(gd)
        ok = _kill_when(loc, lambda: _ref(gd) != before and not _calls(d, "lk"))
        seen["lk:landed"] = ok and not _calls(d, "lk")
        passes_l = [loc.config, loc.config]
        for c in passes_l:
            _try(loc, seen, c, "lk")
        seen["lk:subjects"] = loc.subjects("lk")
        lcl = root / "Laud"
        subprocess.run(["git", "clone", "-q", str(loc.repo), str(lcl)], check=True)
        seen["laudit"] = json.loads(loc.cli("audit", "--json", cwd=lcl).stdout)
        time.sleep(0.5)
        passes("final", *copies, cfg)
        pull()
        seen["subjects"] = {s: lab.subjects(s) for s in REMOTE}
        seen["subjects"]["lk"] = seen.pop("lk:subjects")
        seen["all"] = ogit("log", "--format=%H %s", "main")
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
    return shared(tmp_path_factory, "r94-atk94c", _build)


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


PLANS = [*REMOTE, "lk"]
CHECKS = ["calls", "subjects", "audit", "ended"]
#: exactly one call (no kill before the call, or a kill after it)
ONCE = {"rh", "od"}
GATED = {"gt"}
IDS = [f"{s}:{c}" for s in PLANS for c in CHECKS] + [
    *(f"{s}:landed" for s in PLANS if s not in ("rh",)),
    "kc:claimed",
    "kp:claimed",
    "rw:claimed",
    "kr:key",
    "fg:forged",
]

#: Fixed (2026-12-02, r94heir): heiroutcome, rekeyheir.
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_runs(lab: Lab, vid: str) -> None:
    slug, check = vid.split(":")
    seen, d = lab.seen, lab.t  # type: ignore[attr-defined]
    if check in ("landed", "claimed", "key", "forged"):
        assert seen[vid], seen["passes"][-6:]
        return
    subj = seen["subjects"][slug]
    report = seen["laudit"] if slug == "lk" else seen["audit"]
    if check == "calls":
        runs = (
            [_calls(d, f"{slug}-1"), _calls(d, f"{slug}-2")] if slug in GATED else [_calls(d, slug)]
        )
        if slug in ONCE or slug in GATED:
            assert all(len(r) == 1 for r in runs), (runs, seen.get(f"{slug}:rc"))
        else:
            assert all(len(r) <= 1 for r in runs), (runs, seen.get(f"{slug}:rc"))
    elif check == "subjects":
        starts = {2} if slug in GATED else {1}
        assert len(_starts(subj)) in starts and len(_ends(subj)) <= 1, subj
        if slug == "lk":  # local mode: a restart takes up its own run, no claim commit
            assert not [x for x in subj if x.split()[1] == "checkpoint"], subj
    elif check == "ended":  # the approved plan ran to one complete (nothing lost, nothing twice)
        ends = _ends(subj)
        assert ends == [f"plangate: complete plans/{slug}"], subj
    elif check == "audit":
        runs = [e["outcome"] for e in _valid(report, slug)]
        want = [["await-approval", "complete"]] if slug in GATED else [[], ["complete"], ["fail"]]
        assert sorted(runs) in want, (slug, runs)
        assert not _findings(report, slug), _findings(report, slug)
        assert len(_ends(subj)) <= 1, subj
