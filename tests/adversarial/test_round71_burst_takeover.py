"""Round 71, bursts: round 70's new-state-directory refusal and ``--take-over``, with the agent's
seal-shaped forged controller commits on the branch.

Lab (one, local mode, fake commit dates, ``run --once`` passes). The agent adds ``t-01``..``t-12``
and the gated ``g-01``/``g-02`` in one commit; the first controller (state ``S1``) freezes them.
Alice's merge approves ``t-01``..``t-04`` and both gates: ``t-01``..``t-04`` complete, the gates
pause. A copy of ``S1`` is taken (``bak``, stopped controller). Alice approves ``t-05``: it runs.
Then the agent, under the controller's identity (``plangate@localhost``), commits five
SEAL-SHAPED forgeries (a ``Controller-Seal:`` line of 64 random hex digits no key made):
``fc`` a ``complete`` of the never-approved ``t-06``; ``ff`` a ``fail`` of the never-approved
``t-07``; ``fs`` a ``start`` of the never-approved ``t-08``; ``fdone`` a ``fail`` over Alice's
completed ``t-01``; ``fgc`` a ``complete`` of the paused ``g-01``. The repo is then cloned
four times, one per way an operator starts a controller on that branch (each its own config,
state and ``ran.log`` seeded with what ran before):

- ``take``: a NEW empty state directory. ``status`` first (read-only), then ``run --once``
  twice (must refuse ``E_STORAGE`` naming the newest forged commit), ``plangate audit
  --config`` (the remedy says: look before taking over), then ``run --once --take-over``,
  then a plain ``run --once`` (must not need it again);
- ``restore``: ``bak`` restored (old ``commit.key``, an older ``commits`` record);
- ``keyonly``: a new state directory holding only ``S1``'s ``commit.key`` (put in place before
  the first start: docs/operations.md says it starts as before);
- ``habit``: the live ``S1`` started with ``--take-over`` by habit (docs: "The option does
  nothing once the state directory has its record").

In each clone, after its start, Alice approves ``t-06``, ``t-07``, ``t-08``, resumes ``t-01``
(status ``approved`` on the file the branch shows) and approves the gate of ``g-01`` and
``g-02``; one pass, one more.

Asserted: ``take-*``: the refusal (code, names the newest forged commit, nothing ran, nothing
committed, still refused after ``status`` and after a first refusal), the audit before the
take-over flags each forged commit's plan, ``--take-over`` starts, the next start needs no
option. Per clone and forged plan: ``<clone>-<v>``: what Alice approved ran exactly once
(``t-06``..``t-08``: once; ``t-01``: never again; ``g-01``/``g-02``: action 2 once, action 1
never again); where the take-over adopted a forgery as trust on first use (docs/threat-model.md,
the accepted limit) the variant asserts only "never twice".

``daemon``: a fifth clone, a new state directory, the service (``plangate run --take-over``
without ``--once``) stopped by SIGTERM after its first pass starts, then ``run --once`` as usual.

Seen. BROKEN (5 ids, 2 classes). ``keyonly`` (``keyonly-fc``, ``-ff``, ``-fgc``): a new state
directory holding only the old ``commit.key`` starts without a refusal (some seals verify, as
docs/operations.md says) and adopts by trust on first use the agent's seal-shaped forgeries its
own key does NOT verify: ``t-06`` ``completed`` with approver alice though it never ran (her
approval ignored "from completed"), ``t-07`` ``failed`` never started, ``g-01`` ``completed``
at its gate (action 2 never runs); the ``restore`` clone (the same key with its old record)
reads the same commits as anyone's and runs each once. ``stuck`` (``take-fs``,
``keyonly-fs``): the adopted forged ``start`` of the never-approved ``t-08`` is neither failed
``E_ACTION_IN_DOUBT`` nor resumable: the row stays ``executing`` for good (``waiting`` null), her
approval an ignored illegal transition "from executing" (docs/operations.md: a run found
started with no journal fails ``E_ACTION_IN_DOUBT`` and a resume approval runs it). HELD: the
refusal (``E_STORAGE`` naming the newest forged commit and both remedies; again after a first
refusal and after a read-only ``status``; nothing ran, nothing committed); ``plangate audit
--config`` before the take-over flags every forged commit by its id; ``--take-over`` logs
``own_commits_taken_over`` and a plain start after it needs nothing (``--once`` and the
daemon, stopped by SIGTERM); ``take-fc``/``-ff``/``-fgc`` adopted as the documented limit
(never twice); ``fdone`` (a forged ``fail`` over a completed run) never runs it again in any
clone; ``restore`` and ``habit`` (the live state started with ``--take-over`` by habit: nothing
adopted) run ``t-06``/``t-07`` once and the gates' action 2 once, and hold ``t-08`` (a sealed
start their key does not verify) as "another controller or a lost key" (round 69's documented
safe side); ``t-05`` (run after the backup) never again after the restore.

Fixed (2026-11-30): one rule for what a state directory adopts on its first start. A
``commit.key`` that verifies commits on the branch makes the record: the commits it verifies
(and the unsealed history from before its first seal), nothing else; a commit under the
controller's name whose seal it rejects is anyone's, whatever else the branch holds (the index
reads the forgeries as forgeries, Alice's approvals run ``t-06``, ``t-07`` and ``g-01``'s
action 2 once). Trust on first use (``--take-over``, or a branch with no seals) is only for a
state directory whose key verifies nothing. And every run the controller counts as its own with
no journal goes the lost-run way, whatever the plan's file holds: the adopted start of ``t-08``
(no ``approval:`` block in the file, so the orphan was never taken up) fails
``E_ACTION_IN_DOUBT`` and Alice's resume runs it once. Changed assertions: ``keyonly-fs`` now
asserts round 69's safe side (``FOREIGN``: the forged start is not adopted, ``t-08`` never runs
and its row says "another controller or a lost key"), as ``restore-fs``; ``takeover-starts``
reads ``own_commits_taken_over`` from the whole log of the start (the lost run's own lines now
push it out of the kept tail).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import ALICE, BOT, Lab, cases, plan_text
from burstkit import date_steps, gated
from test_round2_execution_kit import shared

T = [f"t-{i:02d}" for i in range(1, 13)]
G = ["g-01", "g-02"]
CLONES = ["take", "restore", "keyonly", "habit"]
BROKEN: dict[str, object] = {}


TAGS = [*T, *(f"{g}-{n}" for g in G for n in (1, 2))]


class Clone:
    """One clone of the lab's repo with its own config, state directory and ran.log."""

    def __init__(self, lab: Lab, root: Path, name: str, state: Path) -> None:
        self.lab, self.name = lab, name
        self.repo = root / name / "repo"
        self.repo.parent.mkdir(parents=True)
        subprocess.run(["git", "clone", "-q", str(lab.repo), str(self.repo)], check=True)
        self.git("remote", "remove", "origin")
        self.state = state
        self.log = root / name / "ran.log"
        shutil.copy(lab.log, self.log)
        self.config = root / name / "plangate.yml"
        text = lab.config.read_text()
        text = text.replace(str(lab.repo), str(self.repo)).replace(str(lab.state), str(state))
        self.config.write_text(text.replace(json.dumps(str(lab.log)), json.dumps(str(self.log))))

    def git(self, *args: str, who: tuple[str, str] | None = None) -> str:
        env = self.lab.env(who)
        return subprocess.run(
            ["git", *args], cwd=self.repo, env=env, capture_output=True, text=True, check=True
        ).stdout

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        from tests.support import clifork

        env = self.lab.env()
        env["REC_LOG"] = str(self.log)
        return clifork.run(list(args), cwd=self.repo.parent, env=env, timeout=120)

    def run(self, *extra: str) -> subprocess.CompletedProcess[str]:
        return self.cli("run", "--once", *extra, "--config", str(self.config))

    def count(self, tag: str) -> int:
        rows = [json.loads(x) for x in self.log.read_text().splitlines() if x.strip()]
        return sum(1 for r in rows if r["argv"][:1] == [tag])

    def set_status(self, slug: str, status: str) -> None:
        path = self.repo / "plans" / slug / "PLAN.yml"
        lines = path.read_text().split("\n")
        for i, line in enumerate(lines):
            if line.startswith("  status:") and i < 6:
                lines[i] = f"  status: {status}"
                break
        path.write_text("\n".join(lines))

    def rows(self) -> dict[str, dict]:
        out = self.cli("status", "--json", "--config", str(self.config)).stdout
        try:
            got = json.loads(out)
        except ValueError:
            return {"_raw": {"out": out[-500:]}}
        return {
            r["plan"][len("plans/") :]: {
                k: r.get(k) for k in ("status", "approver", "last_event", "waiting", "reason")
            }
            for r in got
        }


def _hash_of(lab: Lab, slug: str) -> str:
    return str(lab.plan(slug)["frozen"]["hash"])


def _forge(lab: Lab, slug: str, event: str, status: str, approval: str | None) -> str:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    lines = path.read_text().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("  status:") and i < 6:
            lines[i] = f"  status: {status}"
            break
    path.write_text("\n".join(lines))
    lab.git("add", "-A")
    body = f"Plan: plans/{slug}\nPlan-Hash: {_hash_of(lab, slug)}\nPlan-Status: {status}\n"
    if approval:
        body += f"Approved-By: alice@example.com\nApproval-Commit: {approval}\n"
    body += f"Controller: vm/{secrets.token_hex(4)}\nController-Seal: {secrets.token_hex(32)}\n"
    lab.git("commit", "-q", "-m", f"plangate: {event} plans/{slug}\n\n{body}", who=BOT)
    return lab.head()


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    date = date_steps(lab, 1790000000)
    date()
    for v in T:
        lab.write(v, plan_text(v))
    for g in G:
        lab.write(g, gated(g))
    lab.commit("agent plans")
    lab.run()
    date()
    lab.git("checkout", "-q", "-b", "alice/review")
    for v in [*T[:4], *G]:
        lab.set_status(v, "approved")
    approval = lab.commit("approve four and two gated", ALICE)
    lab.git("checkout", "-q", "main")
    date()
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice/review", "alice/review", who=ALICE)
    lab.run()
    bak = root / "bak"
    shutil.copytree(lab.state, bak, symlinks=True)
    date()
    lab.approve("t-05")
    lab.run()
    lab.first = {t_: len(lab.calls(t_)) for t_ in TAGS}  # type: ignore[attr-defined]
    date()
    forged = {
        "fc": _forge(lab, "t-06", "complete", "completed", approval),
        "ff": _forge(lab, "t-07", "fail", "failed", approval),
        "fs": _forge(lab, "t-08", "start", "executing", approval),
        "fdone": _forge(lab, "t-01", "fail", "failed", approval),
        "fgc": _forge(lab, "g-01", "complete", "completed", approval),
    }
    lab.forged = forged  # type: ignore[attr-defined]
    clones = {
        "take": Clone(lab, root, "take", root / "take" / "state"),
        "restore": Clone(lab, root, "restore", bak),
        "keyonly": Clone(lab, root, "keyonly", root / "keyonly" / "state"),
    }
    (root / "keyonly" / "state").mkdir(mode=0o700)
    shutil.copy(lab.state / "commit.key", root / "keyonly" / "state" / "commit.key")
    os.chmod(root / "keyonly" / "state" / "commit.key", 0o600)
    # habit: the lab's own repo and live state directory, started with --take-over by habit
    habit = Clone.__new__(Clone)
    habit.lab, habit.name, habit.repo, habit.state = lab, "habit", lab.repo, lab.state
    habit.log, habit.config = lab.log, lab.config
    clones["habit"] = habit
    out: dict[str, dict] = {}
    take = clones["take"]
    head0 = take.git("rev-parse", "HEAD").strip()
    st = take.cli("status", "--json", "--config", str(take.config))
    r1 = take.run()
    r2 = take.run()
    aud = take.cli("audit", "--json", "--config", str(take.config))
    out["take"] = {
        "status_rc": st.returncode,
        "r1": {"rc": r1.returncode, "err": r1.stderr[-1200:]},
        "r2": {"rc": r2.returncode, "err": r2.stderr[-1200:]},
        "head_after_refusals": take.git("rev-parse", "HEAD").strip() == head0,
        "ran_after_refusals": {g: take.count(g) for g in TAGS},
        "audit_rc": aud.returncode,
        "audit": aud.stdout,
    }
    # daemon: a NEW state directory, the service started once with --take-over, stopped
    # (SIGTERM) after its first pass, then started as usual
    dm = Clone(lab, root, "daemon", root / "daemon" / "state")
    env = lab.env()
    env["REC_LOG"] = str(dm.log)
    err = open(root / "daemon" / "err.log", "w")  # noqa: SIM115 (closed after the daemon)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--take-over", "--config", str(dm.config)],
        cwd=root / "daemon", env=env, stdout=subprocess.DEVNULL, stderr=err,
    )  # fmt: skip
    logged = ""
    for _ in range(600):  # until its first pass has ended (or it exited)
        logged = (root / "daemon" / "err.log").read_text()
        if proc.poll() is not None or '"pass_done"' in logged or "idle" in logged:
            break
        if '"own_commits_taken_over"' in logged and '"policy_in_force"' in logged:
            break  # its first pass is under way: SIGTERM lets it finish and commit
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=180)
    err.close()
    again = dm.run()
    out["daemon"] = {
        "daemon_rc": proc.returncode,
        "taken": '"own_commits_taken_over"' in logged,
        "log": logged[-1500:],
        "again": {"rc": again.returncode, "err": again.stderr[-1200:]},
    }
    starts = {
        "take": ("--take-over",),
        "restore": (),
        "keyonly": (),
        "habit": ("--take-over",),
    }
    for name, clone in clones.items():
        date()
        s = clone.run(*starts[name])
        out.setdefault(name, {})["start"] = {
            "rc": s.returncode,
            "err": s.stderr[-1500:],
            "taken": "own_commits_taken_over" in s.stderr,
        }
        out[name]["rows_start"] = clone.rows()
        date()
        for v in ("t-06", "t-07", "t-08", "t-01", *G):
            clone.set_status(v, "approved")
        clone.git("add", "-A")
        clone.git("commit", "-q", "-m", "approve t-06..08, resume t-01, gates", who=ALICE)
        a = clone.run()
        date()
        b = clone.run()
        out[name]["after"] = {"rc": [a.returncode, b.returncode], "err": b.stderr[-800:]}
        out[name]["ran"] = {g: clone.count(g) for g in TAGS}
        out[name]["rows"] = clone.rows()
    lab.out = out  # type: ignore[attr-defined]
    (root / "out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r71-takeover", _build)


def test_the_lab(lab: Lab) -> None:
    first = lab.first  # type: ignore[attr-defined]
    want = {**{t: 1 for t in T[:5]}, "g-01-1": 1, "g-02-1": 1}
    assert {k: first[k] for k in want} == want, first
    assert all(first[k] == 0 for k in TAGS if k not in want), first


TAKE = ["refuse", "refuse-names", "refuse-twice", "status-first", "refuse-nothing",
        "audit-fc", "audit-ff", "audit-fs", "audit-fdone", "audit-fgc", "takeover-starts",
        "second-start", "daemon-takes-over", "daemon-then-plain"]  # fmt: skip


@pytest.mark.parametrize("vid", cases(TAKE, TAKE, BROKEN))  # type: ignore[arg-type]
def test_a_new_state_directory_refuses_then_takes_over(lab: Lab, vid: str) -> None:
    out = lab.out["take"]  # type: ignore[attr-defined]
    forged = lab.forged  # type: ignore[attr-defined]
    r1, r2 = out["r1"], out["r2"]
    if vid == "refuse":
        assert r1["rc"] != 0 and "E_STORAGE" in r1["err"], r1
    elif vid == "refuse-names":
        assert forged["fgc"][:7] in r1["err"], (forged["fgc"], r1)
    elif vid == "refuse-twice":
        assert r2["rc"] != 0 and "E_STORAGE" in r2["err"], r2
    elif vid == "status-first":
        assert out["status_rc"] in (0, 1) and r1["rc"] != 0, out
    elif vid == "refuse-nothing":
        assert out["head_after_refusals"], out
        assert out["ran_after_refusals"] == lab.first, out  # type: ignore[attr-defined]
    elif vid.startswith("audit-"):
        report = json.loads(out["audit"])
        slug = {"fc": "t-06", "ff": "t-07", "fs": "t-08", "fdone": "t-01", "fgc": "g-01"}[vid[6:]]
        mine = [f for f in report.get("findings", []) if f.get("plan") == f"plans/{slug}"]
        commit = forged[vid[6:]]
        named = [f for f in mine if str(f.get("commit", ""))[:7] == commit[:7]]
        assert named, (commit, mine, out["audit_rc"])
    elif vid == "takeover-starts":
        assert out["start"]["rc"] == 0, out["start"]
        assert out["start"]["taken"], out["start"]
    elif vid == "daemon-takes-over":
        d = lab.out["daemon"]  # type: ignore[attr-defined]
        assert d["taken"] and d["daemon_rc"] == 0, d
    elif vid == "daemon-then-plain":
        d = lab.out["daemon"]  # type: ignore[attr-defined]
        assert d["again"]["rc"] == 0 and "E_STORAGE" not in d["again"]["err"], d
    elif vid == "second-start":
        assert out["after"]["rc"] == [0, 0], out["after"]


#: what each forged plan must have run, in total, after Alice's approvals
WANT = {"fc": {"t-06": 1}, "ff": {"t-07": 1}, "fs": {"t-08": 1}, "fdone": {"t-01": 1},
        "fgc": {"g-01-1": 1, "g-01-2": 1}, "gate": {"g-02-1": 1, "g-02-2": 1},
        "t05": {"t-05": 1}}  # fmt: skip
IDS = [f"{c}-{v}" for c in CLONES for v in WANT]
#: take-over adopts the forgeries as trust on first use (docs/threat-model.md): never twice
TOFU = {"take-fc", "take-ff", "take-fgc"}
#: a sealed start its key does not verify: "another controller or a lost key" (the documented
#: safe side, round 69): never runs, the row says why (``keyonly-fs`` since the fix: the key
#: alone adopts only what it verifies, as ``restore`` does)
FOREIGN = {"restore-fs", "habit-fs", "keyonly-fs"}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_what_alice_approved_ran_once(lab: Lab, vid: str) -> None:
    name, v = vid.split("-", 1)
    out = lab.out[name]  # type: ignore[attr-defined]
    assert out["start"]["rc"] == 0, out["start"]
    got = {k: out["ran"][k] for k in WANT[v]}
    said = (got, out["rows"], out["start"]["err"][-600:])
    if vid in TOFU:
        assert all(n <= 1 for n in got.values()), said
    elif vid in FOREIGN:
        assert got == {"t-08": 0}, said
        assert "another controller or a lost key" in str(out["rows"]["t-08"]["waiting"]), said
    else:
        assert got == WANT[v], said
