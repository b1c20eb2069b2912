"""Round 112 (runs, atk112d, second pass): REMOTE mode (a real ``git daemon`` on 127.0.0.1).

Lab ``R`` (one build, module scope, ``writerkit.served``: a bare ``origin.git`` served by
``git daemon`` on 127.0.0.1, the config in remote mode, poll 0.2 s): exec tool ``t112``
(``rec`` records; ``hook`` runs ``hook-<t>.py``, a git attack on the served repository, then
records; ``fail1`` fails its first call; ``slow`` sleeps 2.5 s); ``calls.log`` is the ground
truth; audit is ``plangate audit --json`` in a fresh clone of the served ``main``. This is a
second module on branch atk112d (the branch already held ``test_round112_runs_atk112d.py``,
local mode, from an earlier session: left as it was).

Each hooked plan alone (Alice approves it, a pass, the served branch put back if the hook
took it, a pass; a resume approval only if the row then asks for one):
``fp`` main force-rewound to Alice's approval mid-action 1 (start erased); ``fg`` the same
plus ``reflog expire --all`` and ``gc --prune=now`` on the remote; ``dl`` ``refs/heads/main``
deleted mid-run (put back after the pass); ``rn`` main renamed ``old`` mid-run (renamed back);
``rp`` ``refs/replace`` pushed: Alice's approval replaced by a look-alike whose action 3 is
``rp-evil`` and the start grafted onto it; ``ar`` Alice's abort pushed mid-action 1; ``as``
her abort pushed during the LAST action; ``ra``/``ar2`` failed at action 2, then a resume and
an abort pushed together (both orders); ``nc``/``nd``/``nr`` a parent whose pinned child is
edited / deleted / renamed (an evil plan moved to its path) and pushed mid-parent; ``na`` the
draft child approved on its own mid-parent. Then ``kl`` a pass SIGKILLed mid-action 2, ``ok``
approved after it; ``tz`` passes under TZ Pacific/Kiritimati, Etc/GMT+12, Asia/Kathmandu with
a gate approval dated -1200; 80 plans approved in one commit, one pass.

Ids: ``once``/``order``/``final``/``remote_history_records_run``/``audit_valid``/
``audit_nothing_unexplained``/``all_ran_or_stopped`` per plan, ``changed_child_not_run``,
``rewritten_remote_completed_once``, ``resume_and_abort_together`` per variant, and singles.

Seen (round 112, 132 ids, ~160-170 s wall, over the 60 s aim: one remote pass is ~2-3 s): 0
broke, 132 held.

Held: rewound/pruned/deleted/renamed served branch: the controller's push (a fast-forward of
the rewound branch) or the put-back restores its records, each action once, completed, no
resume needed (a pass with ``main`` missing exits 2 ``E_GIT`` "couldn't find remote ref");
replace refs and a graft ignored (frozen rp-3 ran); abort mid-run stops before action 2; abort
during the last action: completed, once; resume+abort together either order: aborted, the
failed action never again (abort-then-approve refused ``E_ILLEGAL_TRANSITION``); the changed,
deleted or renamed child fails the parent at action 2 (``E_PLAN_HASH_MISMATCH`` /
``E_SCHEMA_INVALID``), nothing of it ran; the child approved alone: ignored (illegal), ran
once as the parent's; SIGKILL mid-action: in doubt, not re-run until a resume, other plans
run; time zones; 80 plans once each, audit valid.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared
from writerkit import served

PY = sys.executable
WORKTREE = Path(__file__).resolve().parents[2]

TOOL = r"""
import json, os, subprocess, sys, tempfile, time
m, t, d = sys.argv[1], sys.argv[2], os.environ["T_DIR"]
raw = sys.stdin.read()
def log(kind):
    with open(os.path.join(d, "calls.log"), "a") as f:
        f.write(json.dumps({"t": t, "m": m, "k": kind, "at": time.time()}) + "\n")
        f.flush()
        os.fsync(f.fileno())
log("call")
if m == "hook":
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    base.update(GIT_CONFIG_NOSYSTEM="1")
    bare, url = os.environ["T_BARE"], os.environ["T_URL"]
    def run(cwd, who, *a):
        env = dict(base)
        name, mail = who
        env.update(GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=mail,
                   GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=mail)
        r = subprocess.run(["git", *a], cwd=cwd, env=env, capture_output=True, text=True)
        with open(os.path.join(d, "hook.log"), "a") as f:
            f.write(json.dumps({"t": t, "a": a, "rc": r.returncode, "err": r.stderr[-300:]})
                    + "\n")
        return r.stdout.strip()
    AG, AL = ("Agent", "agent@example.com"), ("Alice", "alice@example.com")
    def bgit(*a):
        return run(bare, AG, *a)
    def scratch():
        w = tempfile.mkdtemp(dir=d)
        run(d, AG, "clone", "-q", "-b", "main", url, w)
        return w
    def save(name, value):
        open(os.path.join(d, name), "w").write(value)
    exec(open(os.path.join(d, "hook-" + t + ".py")).read())
elif m == "fail1":
    mark = os.path.join(d, "mark-" + t)
    if not os.path.exists(mark):
        open(mark, "w").write("x")
        print("first call fails", file=sys.stderr)
        sys.exit(3)
elif m == "slow":
    time.sleep(2.5)
print(json.dumps({"ok": True, "t": t}))
"""


def _set(path: str, status: str) -> str:
    return (
        f"p = os.path.join(w, {path!r})\n"
        "s = open(p).read().split(chr(10))\n"
        "s = [('  status: " + status + "' if x.startswith('  status:') else x) for x in s]\n"
        "open(p, 'w').write(chr(10).join(s))\n"
    )


#: the attacks a ``hook`` action makes on the served repository while its plan runs
HOOKS = {
    # fp: main force-rewound to Alice's approval (the start erased), restored after the pass
    "fp-1": 'save("tip-fp", bgit("rev-parse", "refs/heads/main"))\n'
    'bgit("update-ref", "refs/heads/main", open(os.path.join(d, "appr-fp")).read().strip())\n',
    # fg: the same, then the remote's reflogs expired and gc --prune=now (the start is gone)
    "fg-1": 'save("tip-fg", bgit("rev-parse", "refs/heads/main"))\n'
    'bgit("update-ref", "refs/heads/main", open(os.path.join(d, "appr-fg")).read().strip())\n'
    'bgit("reflog", "expire", "--expire=now", "--all")\n'
    'bgit("gc", "-q", "--prune=now")\n',
    # dl: the served branch deleted mid-run, put back after the pass
    "dl-1": 'save("tip-dl", bgit("rev-parse", "refs/heads/main"))\n'
    'bgit("update-ref", "-d", "refs/heads/main")\n',
    # rn: the served branch renamed mid-run (main -> old), renamed back after two passes
    "rn-1": 'bgit("branch", "-m", "main", "old")\n',
    # rp: refs/replace pushed: Alice's approval replaced by a look-alike whose action 3 is
    # rp-evil, and the start grafted straight onto that look-alike
    "rp-1": r"""
w = scratch()
appr = open(os.path.join(d, "appr-rp")).read().strip()
run(w, AL, "checkout", "-q", appr)
p = os.path.join(w, "plans", "rp", "PLAN.yml")
open(p, "w").write(open(p).read().replace('t: "rp-3"', 't: "rp-evil"'))
run(w, AL, "commit", "-q", "-a", "--amend", "--no-edit")
fake = run(w, AL, "rev-parse", "HEAD")
run(w, AL, "replace", appr, fake)
run(w, AL, "fetch", "-q", "origin", "main")
start = run(w, AL, "rev-parse", "FETCH_HEAD")
run(w, AL, "replace", "--graft", start, fake)
run(w, AL, "push", "-q", "origin", "refs/replace/*:refs/replace/*")
""",
    # ar: Alice's abort pushed while action 1 runs
    "ar-1": "w = scratch()\n"
    + _set("plans/ar/PLAN.yml", "aborted")
    + 'run(w, AL, "commit", "-q", "-a", "-m", "abort ar")\n'
    'run(w, AL, "push", "-q", "origin", "HEAD:main")\n',
    # as: Alice's abort pushed while the LAST action runs (raced with the complete)
    "as-3": "w = scratch()\n"
    + _set("plans/as/PLAN.yml", "aborted")
    + 'run(w, AL, "commit", "-q", "-a", "-m", "abort as")\n'
    'run(w, AL, "push", "-q", "origin", "HEAD:main")\n',
    # nc: the pinned child edited and pushed by the agent mid-parent (action 2 -> nc-evil)
    "nc-1": r"""
w = scratch()
p = os.path.join(w, "plans", "ch-nc", "PLAN.yml")
s = open(p).read().replace('t: "nc-c2"', 't: "nc-evil"')
s += '  - id: 3\n    tool: t112\n    why: "x"\n    params: {m: rec, t: "nc-extra"}\n'
open(p, "w").write(s)
run(w, AG, "commit", "-q", "-a", "-m", "agent: edit the child")
run(w, AG, "push", "-q", "origin", "HEAD:main")
""",
    # nd: the pinned child's folder deleted and pushed mid-parent
    "nd-1": 'w = scratch()\nrun(w, AG, "rm", "-q", "-r", "plans/ch-nd")\n'
    'run(w, AG, "commit", "-q", "-m", "agent: child gone")\n'
    'run(w, AG, "push", "-q", "origin", "HEAD:main")\n',
    # nr: the pinned child renamed and pushed mid-parent (an evil plan takes its old path)
    "nr-1": r"""
w = scratch()
run(w, AG, "mv", "plans/ch-nr", "plans/ch-nr-old")
run(w, AG, "mv", "plans/ev-nr", "plans/ch-nr")
run(w, AG, "commit", "-q", "-m", "agent: child renamed, evil in its place")
run(w, AG, "push", "-q", "origin", "HEAD:main")
""",
    # na: Alice approves the (draft) child on its own mid-parent
    "na-1": "w = scratch()\n"
    + _set("plans/ch-na/PLAN.yml", "approved")
    + 'run(w, AL, "commit", "-q", "-a", "-m", "approve the child on its own")\n'
    'run(w, AL, "push", "-q", "origin", "HEAD:main")\n',
}


def _act(i: int | str, m: str, t: str, extra: str = "") -> str:
    return f'  - id: {i}\n    tool: t112\n    why: "{t}"\n    params: {{m: {m}, t: "{t}"}}\n{extra}'


def _plan(slug: str, acts: str, status: str = "pending_approval") -> str:
    return (
        f'plan:\n  name: "{slug}"\n  task: "atk112d-r {slug}"\n  status: {status}\n'
        f"available_tools:\n  - name: t112\nactions:\n{acts}"
    )


GATE = "    requires_approval: true\n"
#: plan -> modes of actions 1, 2, 3 and the extra of action 2
PLANS: dict[str, tuple[str, str, str, str]] = {
    "fp": ("hook", "rec", "rec", ""),
    "fg": ("hook", "rec", "rec", ""),
    "dl": ("hook", "rec", "rec", ""),
    "rn": ("hook", "rec", "rec", ""),
    "rp": ("hook", "rec", "rec", ""),
    "ar": ("hook", "rec", "rec", ""),
    "as": ("rec", "rec", "hook", ""),
    "ra": ("rec", "fail1", "rec", ""),  # fails at 2; resume then abort pushed together
    "ar2": ("rec", "fail1", "rec", ""),  # fails at 2; abort then resume pushed together
    "kl": ("rec", "slow", "rec", ""),  # the pass SIGKILLed mid-action 2
    "tz": ("rec", "rec", "rec", GATE),  # passes under far time zones, a future-dated gate
    "ok": ("rec", "rec", "rec", ""),  # approved after the kill: other plans carry on
}
NESTED = ["nc", "nd", "nr", "na"]
MANY = [f"q{i:02d}" for i in range(80)]
ALL = list(PLANS) + NESTED


def _rows(d: Path) -> list[dict[str, Any]]:
    p = d / "calls.log"
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()] if p.exists() else []


def _bare(lab: Lab) -> Path:
    return lab.root / "served" / "origin.git"


def _bgit(lab: Lab, *args: str) -> str:
    r = subprocess.run(["git", "-C", str(_bare(lab)), *args], env=lab.env(), capture_output=True,
                       text=True, check=False)  # fmt: skip
    return r.stdout.strip()


def _anc(lab: Lab, a: str, b: str) -> bool:
    r = subprocess.run(["git", "-C", str(_bare(lab)), "merge-base", "--is-ancestor", a, b],
                       env=lab.env(), check=False)  # fmt: skip
    return r.returncode == 0


def _hash(lab: Lab, slug: str) -> str:
    return lab.cli(
        "hash", f"plans/{slug}", "--config", str(lab.config), cwd=lab.repo
    ).stdout.strip()


def _pull(lab: Lab) -> None:
    lab.git("fetch", "-q", "origin", "refs/heads/main", check=False)
    lab.git("reset", "-q", "--hard", "FETCH_HEAD", check=False)


def _push(lab: Lab) -> None:
    lab.git("push", "-q", "origin", "HEAD:refs/heads/main")


def _pass(lab: Lab, tag: str, env: dict[str, str] | None = None, kill_on: str = "") -> None:
    e = {**lab.env(), "PYTHONPATH": str(WORKTREE), **(env or {})}
    cmd = [PY, "-m", "controller", "run", "--once", "--config", str(lab.config)]
    p = subprocess.Popen(cmd, cwd=lab.root, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)  # fmt: skip
    if kill_on:
        t_end = time.time() + 60
        while time.time() < t_end and not any(r["t"] == kill_on for r in _rows(lab.t)):  # type: ignore[attr-defined]
            time.sleep(0.05)
        time.sleep(0.3)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
    try:
        _, err = p.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate()
    lab.seen["passes"].append((tag, p.returncode, err[-1500:]))  # type: ignore[attr-defined]
    _pull(lab)


def _mark(lab: Lab, slugs: list[str], status: str, who: tuple[str, str] = ALICE,
          date: str | None = None) -> str:  # fmt: skip
    _pull(lab)
    for s in slugs:
        lab.set_status(s, status)
    lab.git("add", "-A")
    args = ["commit", "-q", "-m", f"{status} {' '.join(slugs)}"] + (
        ["--date", date] if date else []
    )
    lab.git(*args, who=who)
    _push(lab)
    return lab.head()


def _row(lab: Lab, x: str) -> dict[str, Any]:
    try:
        return lab.rows().get(f"plans/{x}", {})
    except Exception as why:
        return {"raw": repr(why)}


def _mk(root: Path) -> Lab:
    d = root / "t"
    d.mkdir(parents=True)
    (d / "t112.py").write_text(TOOL)
    for tag, hook in HOOKS.items():
        (d / f"hook-{tag}.py").write_text(hook)
    lab = Lab(root / "L")
    lab.t = d  # type: ignore[attr-defined]
    lab.seen = {"passes": []}  # type: ignore[attr-defined]
    for x, (m1, m2, m3, extra) in PLANS.items():
        lab.write(x, _plan(x, _act(1, m1, f"{x}-1") + _act(2, m2, f"{x}-2", extra)
                           + _act(3, m3, f"{x}-3")))  # fmt: skip
    for x in NESTED:
        lab.write(f"ch-{x}", _plan(f"ch-{x}", _act(1, "rec", f"{x}-c1") + _act(2, "rec", f"{x}-c2"),
                                   "draft"))  # fmt: skip
    lab.write("ev-nr", _plan("ev-nr", _act(1, "rec", "nr-evil") + _act(2, "rec", "nr-extra"),
                             "draft"))  # fmt: skip
    lab.commit("plans")
    for x in NESTED:
        pin = _hash(lab, f"ch-{x}")
        nest = f'  - id: 2\n    plan: {{path: plans/ch-{x}, hash: "{pin}"}}\n    why: "n"\n'
        lab.write(x, _plan(x, _act(1, "hook", f"{x}-1") + nest + _act(3, "rec", f"{x}-3")))
    lab.commit("parents")
    return lab


def _build(root: Path) -> Lab:
    lab = _mk(root)
    seen, d = lab.seen, lab.t  # type: ignore[attr-defined]
    t0 = time.time()
    with served(lab) as url:
        argv = json.dumps([PY, str(d / "t112.py"), "{m}", "{t}"])
        env = json.dumps({"T_DIR": str(d), "T_BARE": str(_bare(lab)), "T_URL": url})
        lab.write_config(tools=f"t112: {{kind: exec, argv: {argv}, env: {env}}}\n")
        lab.config.write_text(lab.config.read_text().replace(
            f"repo: {lab.repo}\n",
            f"remote: {{url: {json.dumps(url)}, branch: main, poll_interval: 0.2}}\n",
        ))  # fmt: skip
        _push(lab)
        _pass(lab, "freeze")
        # -- group 1: each hooked plan alone: approved, a pass, put back, passes, settled
        for x in ["fp", "fg", "rp", "dl", "rn", "ar", "as", "ra", "ar2", *NESTED]:
            (d / f"appr-{x}").write_text(_mark(lab, [x], "approved"))
            _pass(lab, x)
            seen[f"{x}:remote1"] = _bgit(lab, "log", "--format=%h %an %s", "-6", "--all")
            tipf = d / f"tip-{x}"
            tip = tipf.read_text().strip() if tipf.exists() else ""
            cur = _bgit(lab, "rev-parse", "--verify", "-q", "refs/heads/main")
            if tip and not (cur and _anc(lab, tip, cur)):
                _bgit(lab, "update-ref", "refs/heads/main", tip)
            if _bgit(lab, "rev-parse", "--verify", "-q", "refs/heads/old"):
                if cur:
                    _bgit(lab, "update-ref", "refs/heads/main", _bgit(lab, "rev-parse", "old"))
                    _bgit(lab, "update-ref", "-d", "refs/heads/old")
                else:
                    _bgit(lab, "branch", "-m", "old", "main")
            seen[f"{x}:restored"] = (tip, cur)
            _pass(lab, f"{x}-b")
            seen[f"{x}:row2"] = _row(lab, x)
            seen[f"{x}:before_resume"] = [r["t"] for r in _rows(d) if r["t"].startswith(x + "-")]
            if x not in ("ra", "ar2") and seen[f"{x}:row2"].get("status") in (
                "failed",
                "awaiting_approval",
            ):
                seen[f"{x}:resumed"] = True
                _mark(lab, [x], "approved")
                _pass(lab, f"{x}-d")
                _pass(lab, f"{x}-e")
        # -- ra: resume then abort, pushed together; ar2: abort then resume
        _mark(lab, ["ra"], "approved")
        _mark(lab, ["ra"], "aborted")
        _mark(lab, ["ar2"], "aborted")
        _mark(lab, ["ar2"], "approved")
        _pass(lab, "ra")
        _pass(lab, "ra2")
        # -- kl: the pass SIGKILLed mid-action 2; ok approved after; passes
        _mark(lab, ["kl"], "approved")
        _pass(lab, "kl-killed", kill_on="kl-2")
        seen["kl:row_killed"] = _row(lab, "kl")
        _mark(lab, ["ok"], "approved")
        _pass(lab, "kl-after")
        _pass(lab, "kl-after2")
        seen["kl:row_after"] = _row(lab, "kl")
        seen["kl:calls_before_resume"] = [r["t"] for r in _rows(d) if r["t"].startswith("kl-")]
        if seen["kl:row_after"].get("status") in ("failed", "awaiting_approval"):
            _mark(lab, ["kl"], "approved")
            _pass(lab, "kl-resumed")
            _pass(lab, "kl-resumed2")
        # -- tz: passes under far time zones, Alice's gate approval dated 2 h ahead, -1200
        _mark(lab, ["tz"], "approved")
        _pass(lab, "tz", env={"TZ": "Pacific/Kiritimati"})
        seen["tz:row_paused"] = _row(lab, "tz")
        when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - 10 * 3600))
        _mark(lab, ["tz"], "approved", date=when + "-1200")
        _pass(lab, "tz-gate", env={"TZ": "Etc/GMT+12"})
        _pass(lab, "tz-gate2", env={"TZ": "Asia/Kathmandu"})
        # -- many: 80 plans approved in one commit, one pass
        _pull(lab)
        for x in MANY:
            lab.write(x, _plan(x, _act(1, "rec", f"{x}-1")))
        lab.commit("many plans")
        _push(lab)
        _pass(lab, "many-freeze")
        _mark(lab, MANY, "approved")
        tm = time.time()
        _pass(lab, "many")
        seen["many:wall"] = time.time() - tm
        _pass(lab, "last")
        seen["wall"] = time.time() - t0
        seen["rows"] = lab.rows()
        seen["remote"] = _bgit(lab, "log", "--format=%h %an %s", "refs/heads/main")
        seen["plans"] = {}
        for s in ALL + MANY:
            with contextlib.suppress(Exception):
                seen["plans"][s] = lab.plan(s)
        seen["calls"] = _rows(d)
        seen["hooklog"] = (d / "hook.log").read_text() if (d / "hook.log").exists() else ""
        clone = root / "fresh"
        subprocess.run(["git", "clone", "-q", "-b", "main", url, str(clone)], env=lab.env(),
                       check=True)  # fmt: skip
        out = lab.cli("audit", "--json", cwd=clone)
        try:
            rep = json.loads(out.stdout)
        except ValueError:
            rep = {"raw": out.stdout[-600:]}
        seen["audit"] = {
            "rc": out.returncode,
            "report": rep,
            "err": out.stderr[-800:],
            "valid": sorted(
                {e["plan"] for e in rep.get("executions", []) if e.get("approval_valid")}
            ),
        }
    return lab


@pytest.fixture(scope="module")
def R(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "r112d-R", _build).seen  # type: ignore[attr-defined]


def _n(g: dict[str, Any], t: str) -> int:
    return sum(1 for r in g["calls"] if r["t"] == t)


def _tags(x: str) -> list[str]:
    if x in NESTED:
        return [f"{x}-1", f"{x}-c1", f"{x}-c2", f"{x}-3"]
    return [f"{x}-1", f"{x}-2", f"{x}-3"]


def _status(g: dict[str, Any], x: str) -> Any:
    return (g["plans"].get(x) or {}).get("plan", {}).get("status")


def _final_remote(g: dict[str, Any], x: str) -> list[str]:
    return [ln.split(" ", 2)[2] for ln in g["remote"].splitlines()
            if ln.split(" ", 2)[1] == "plangate" and ln.endswith(f"plans/{x}")]  # fmt: skip


FINAL = {x: ("completed",) for x in ALL}
FINAL.update({x: ("aborted",) for x in ("ar", "ra", "ar2")})
FINAL.update({x: ("failed",) for x in ("nc", "nd", "nr")})
FINAL["as"] = ("completed", "aborted")


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_once(R: dict[str, Any], x: str) -> None:
    """Every action of the plan called at most once before a person's resume (kl: the
    in-doubt action 2 only once before Alice approved its resume)."""
    before = R.get(f"{x}:before_resume") or R.get(f"{x}:calls_before_resume") or []
    if x in ("tz", "ok"):
        before = [r["t"] for r in R["calls"]]
    got = {t: before.count(t) for t in _tags(x)}
    assert all(n <= 1 for n in got.values()), got


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_order(R: dict[str, Any], x: str) -> None:
    """The plan's actions were first called in its order."""
    tags, seq = _tags(x), []
    for r in R["calls"]:
        if r["t"] in tags and r["t"] not in seq:
            seq.append(r["t"])
    assert seq == tags[: len(seq)], seq


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_final(R: dict[str, Any], x: str) -> None:
    """The plan ends with a recorded outcome: the served file and the status row agree."""
    row = R["rows"].get(f"plans/{x}", {})
    assert _status(R, x) in FINAL[x], (_status(R, x), row.get("reason"))
    assert row.get("status") == _status(R, x), row


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_remote_history_records_run(R: dict[str, Any], x: str) -> None:
    """The served main (git alone) holds the run's start and its outcome commit."""
    subj = _final_remote(R, x)
    assert any(s.startswith("plangate: start") for s in subj), subj
    assert any(s.split(" ")[1] in ("complete", "fail", "abort") for s in subj), subj


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_audit_valid(R: dict[str, Any], x: str) -> None:
    """A fresh clone of the served main: ``plangate audit`` calls the plan's run valid."""
    assert f"plans/{x}" in R["audit"]["valid"], R["audit"]["err"]


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_audit_nothing_unexplained(R: dict[str, Any], x: str) -> None:
    """The fresh-clone audit flags no start or controller commit of the plan."""
    bad = [f for f in R["audit"]["report"].get("findings", [])
           if isinstance(f, dict) and f.get("plan") == f"plans/{x}"
           and ("start" in f.get("kind", "") or "controller" in f.get("kind", ""))]  # fmt: skip
    assert not bad, bad[:3]


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_all_ran_or_stopped(R: dict[str, Any], x: str) -> None:
    """Completed plans ran every frozen action; stopped ones ran none after the stop."""
    want = {
        "ar": [1, 0, 0], "ra": [1, 1, 0], "ar2": [1, 1, 0], "kl": [1, 2, 1],
        "nc": [1, 0, 0, 0], "nd": [1, 0, 0, 0], "nr": [1, 0, 0, 0],
    }.get(x, [1] * len(_tags(x)))  # fmt: skip
    assert [_n(R, t) for t in _tags(x)] == want


def test_evil_never_ran(R: dict[str, Any]) -> None:
    """No action an edit, a rename, a replace ref or a graft put in ran."""
    assert not [r["t"] for r in R["calls"] if "evil" in r["t"] or "extra" in r["t"]]


@pytest.mark.parametrize("x", cases(["nc", "nd", "nr"], ["nc", "nd", "nr"], {}))
def test_changed_child_not_run(R: dict[str, Any], x: str) -> None:
    """A pinned child edited, deleted or renamed mid-parent: nothing of it runs, the parent
    fails there (hash mismatch or missing) and its action 3 never runs."""
    assert _n(R, f"{x}-c1") == 0 and _n(R, f"{x}-3") == 0
    reason = str(R["rows"].get(f"plans/{x}", {}).get("reason"))
    assert "E_PLAN_HASH_MISMATCH" in reason or "E_SCHEMA_INVALID" in reason, reason


def test_child_approved_alone_is_ignored(R: dict[str, Any]) -> None:
    """The draft child approved on its own mid-parent: its actions ran once (as the parent's),
    the child's own approval ignored (the audit says illegal), the child still a draft."""
    assert [_n(R, "na-c1"), _n(R, "na-c2")] == [1, 1]
    assert R["rows"].get("plans/ch-na", {}).get("status") == "draft"


@pytest.mark.parametrize("x", cases(["fp", "fg", "dl", "rn"], ["fp", "fg", "dl", "rn"], {}))
def test_rewritten_remote_completed_once(R: dict[str, Any], x: str) -> None:
    """The served main rewound (fg: and gc-pruned), deleted or renamed mid-run: the run goes
    on or waits, completes once, no person's resume needed, the served history holds it."""
    assert not R.get(f"{x}:resumed"), R.get(f"{x}:row2")
    assert R["rows"].get(f"plans/{x}", {}).get("status") == "completed"


def test_replace_refs_ignored(R: dict[str, Any]) -> None:
    """refs/replace swapped Alice's approval for a look-alike and grafted the start on it:
    the frozen rp-3 ran, rp-evil never."""
    assert [_n(R, "rp-3"), _n(R, "rp-evil")] == [1, 0]


def test_abort_mid_run_stops(R: dict[str, Any]) -> None:
    """Alice's abort pushed while action 1 runs: nothing after it, the plan aborted."""
    assert [_n(R, f"ar-{i}") for i in (1, 2, 3)] == [1, 0, 0]
    assert _status(R, "ar") == "aborted"


@pytest.mark.parametrize("x", cases(["ra", "ar2"], ["ra", "ar2"], {}))
def test_resume_and_abort_together(R: dict[str, Any], x: str) -> None:
    """A failed plan: a resume and an abort pushed together (either order): aborted, the
    failed action never called again."""
    assert _n(R, f"{x}-2") == 1 and _n(R, f"{x}-3") == 0
    assert _status(R, x) == "aborted"


def test_killed_pass_in_doubt_not_rerun(R: dict[str, Any]) -> None:
    """A pass SIGKILLed mid-action 2: the next passes run none of it again (in doubt,
    failed) until Alice's resume; then it completes."""
    assert R["kl:calls_before_resume"] == ["kl-1", "kl-2"]
    assert "E_ACTION_IN_DOUBT" in str(R["kl:row_after"])
    assert _status(R, "kl") == "completed"


def test_other_plan_after_kill(R: dict[str, Any]) -> None:
    """A plan approved after the killed pass runs in the next pass."""
    assert [_n(R, f"ok-{i}") for i in (1, 2, 3)] == [1, 1, 1]


def test_tz_gate(R: dict[str, Any]) -> None:
    """Passes under +14, -12 and +5:45 zones, a gate approval dated -1200: paused at the gate,
    then ran on, each action once."""
    assert "awaiting_approval" in str(R["tz:row_paused"])
    assert [_n(R, f"tz-{i}") for i in (1, 2, 3)] == [1, 1, 1]


def test_many_once(R: dict[str, Any]) -> None:
    """80 plans approved in one commit: one pass ran each once, each completed."""
    assert not [x for x in MANY if _n(R, f"{x}-1") != 1 or _status(R, x) != "completed"]


def test_many_audit(R: dict[str, Any]) -> None:
    """The fresh-clone audit calls each of the 80 runs valid."""
    assert not [x for x in MANY if f"plans/{x}" not in R["audit"]["valid"]]


def test_passes_no_traceback(R: dict[str, Any]) -> None:
    """No pass printed a traceback."""
    assert not [t for t, _, e in R["passes"] if "Traceback" in e]


def test_passes_exit_coded(R: dict[str, Any]) -> None:
    """Every pass exited 0, or nonzero with a coded error (the killed one aside)."""
    bad = [(t, rc) for t, rc, e in R["passes"] if rc not in (0, -9) and "E_" not in e]
    assert not bad, bad
