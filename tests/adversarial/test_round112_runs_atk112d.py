"""Round 112 (runs, atk112d): history rewritten under a running or paused plan
in LOCAL mode: the start reverted, amended, a forged ``plangate: complete`` by the agent, the
start erased and merged straight back mid-run, the complete reverted after the run, an erased
start and pause put back by ``git cherry-pick`` (new) or by ``git merge --no-ff -X theirs``
(round 111's fix, confirmed) or ``git reset --hard`` (the documented remedy); the running
plan's own file edited, a two-level nest whose
grandchild is edited, a pinned child replaced by a committed symlink mid-child; the author's
``plangate abort`` after Alice's gate approval before any pass; approvals dated 2099 and 1990;
passes under ``ulimit -f 1`` and ``ulimit -f 16`` (60 KB output); 30 plans approved in 30
commits (Alice and Bob in turn) in one pass.

Lab ``L`` (one build, module scope): exec tool ``t112`` (``rec`` records, ``hook``
runs ``hook-<t>.py``, a git attack on the shared repository, then records, ``big`` prints
60 KB); every plan ``x`` calls ``x-1``, ``x-2``, ``x-3`` (nested ``ns``: ``ns-1``, child
``ns-c1`` ``ns-c2``, ``ns-3``); ``calls.log`` is the ground truth; audit is a fresh
``git clone --no-local``.

Ids: ``once``/``order``/``evil``/``final``/``all_ran_once`` per plan, ``audit_valid`` and
``audit_flags_nothing_unexplained`` per plan (fresh-clone ``plangate audit``),
``restored_run_closed_by_controller[cp|mr]``, ``two_level_nest_invalid``,
``abort_after_gate_approval``, ``rc_reverted_not_rerun``, ``past_dated_approval_once``,
``many_*``, ``passes_*``.

Seen (round 112, 98 ids, ~45-65 s wall): 5 broke (2 classes, strict xfails), 93 held.

- **pick-restored-start-stranded** (``test_final[cp]``, ``test_all_ran_once[cp]``,
  ``test_audit_valid[cp]``, ``test_restored_run_closed_by_controller[cp]``). Plan ``cp``
  (gate on action 2) approved by Alice, ``run --once``: ``cp-1`` runs, paused. main
  ``reset --hard`` to Alice's approval, a pass (holds; her approval refused
  ``E_ALREADY_EXECUTED``); then Alice puts the erased commits back with
  ``git cherry-pick -X theirs <approval>..<erased tip>`` (linear copies, author plangate): the
  row reads ``awaiting_approval``; Alice approves the gate; passes: the row says ``approved``,
  waiting "its run was last started by <copy> under the controller's name, a commit this
  controller did not make ...: another controller or a lost key; this one decides and runs
  nothing of it" (there is no other controller). ``cp-2``/``cp-3`` never run, no outcome is
  ever committed; a fresh-clone audit calls the copies ``illegal`` and the run not valid;
  ``plangate abort --force`` by Alice makes the row ``aborted`` with no controller commit.
  Round 111's fix covers the merge shape only (``mr`` held: closed ``fail``
  E_HISTORY_REWRITTEN, resumed, each action once). Property: a run is continued or closed,
  git history records what happened.
- **merged-back-fail-unexplained** (``test_audit_flags_nothing_unexplained[mr]``): the same
  erase, restored by ``git merge --no-ff -X theirs <erased tip>`` (round 111's suspicion,
  fixed): the controller commits ``plangate: fail plans/mr`` (E_HISTORY_REWRITTEN); a
  fresh-clone ``plangate audit --json`` flags that commit ``controller-unexplained`` ("a commit
  under the controller's identity that it did not make ... no start of the plan for an
  outcome": the start stands behind the merge's second parent). Property: a fresh-clone audit
  agrees with what ran.

Fixed (2026-12-05, afternoon): both classes. The copies are closed like the merge
(``plangate: fail`` E_HISTORY_REWRITTEN, hold released, resume from the journal); the
closing ``fail`` names its start (``Closes-Start:``). Two expectations changed with the fix:
``cp`` settles as Bob (Alice committed the copies, files in the plan's folder, and is its
writer: her resume is ``E_SELF_APPROVAL``), and its fresh-clone audit keeps one honest
``controller-unexplained`` finding naming the erased start (git alone cannot prove it).

Held: the erased start put back by ``git reset --hard <erased tip>`` (``rh``: gate approved,
completed, once each, audit clean); the start reverted, amended or followed by the agent's
forged ``complete`` mid-run, the
start erased and merged back inside action 1: every action once, in order, completed; the
running plan's file edited (``pe-evil``/``pe-extra`` never ran); a child replaced by a
committed symlink to an evil plan mid-child (pinned child ran); a two-level nest is invalid
(nothing ran); the complete reverted by the agent (ignored, flagged, nothing re-ran); the
author's abort after Alice's gate approval (nothing after the gate ran, ``aborted``); approvals
dated 2099 and 1990; passes under ``ulimit -f 1``/``16`` then free passes (completed, once);
30 approvals in 30 commits in one pass (once each, audit valid).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit_got
from test_round2_execution_kit import shared

PY = sys.executable
WORKTREE = Path(__file__).resolve().parents[2]

TOOL = r"""
import json, os, subprocess, sys, time
m, t, d = sys.argv[1], sys.argv[2], os.environ["T_DIR"]
raw = sys.stdin.read()
def log(kind):
    with open(os.path.join(d, "calls.log"), "a") as f:
        f.write(json.dumps({"t": t, "m": m, "k": kind, "stdin": raw, "at": time.time()}) + "\n")
        f.flush()
        os.fsync(f.fileno())
log("call")
if m == "hook":
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
               GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com")
    repo = os.environ["T_REPO"]
    def git(*a, check=True):
        r = subprocess.run(["git", *a], cwd=repo, env=env, capture_output=True, text=True)
        with open(os.path.join(d, "hook.log"), "a") as f:
            f.write(json.dumps({"t": t, "a": a, "rc": r.returncode, "err": r.stderr[-300:]})
                    + "\n")
        return r.stdout.strip()
    exec(open(os.path.join(d, "hook-" + t + ".py")).read())
elif m == "big":
    print(json.dumps({"ok": True, "pad": "x" * 60000}))
    sys.exit(0)
print(json.dumps({"ok": True, "t": t}))
"""

#: the git attacks a ``hook`` action makes on the shared repository mid-run
HOOKS = {
    # rv: the start commit reverted by the agent mid-run. Its own start, found by subject:
    # "HEAD" was whatever the controller committed last, under load another plan's commit
    # (the CI check of 2026-12-06 saw rv revert rc's complete, and the lab's own revert of
    # rc then stopped on a conflict: all 98 ids errored); a revert that conflicts is undone
    "rv-1": (
        'own = git("log", "-1", "--format=%H", "--grep=^plangate: start plans/rv$")\n'
        'git("revert", "--no-edit", own)\n'
        'if os.path.exists(os.path.join(repo, ".git", "REVERT_HEAD")):\n'
        '    git("revert", "--abort")\n'
    ),
    # am: the start commit amended by the agent mid-run (same tree, the agent's commit)
    "am-1": 'git("commit", "-q", "--amend", "--no-edit", "--allow-empty")\n',
    # pe: the running plan's own file edited mid-run (action 3 retargeted, an action added)
    "pe-1": r"""
p = os.path.join(repo, "plans", "pe", "PLAN.yml")
s = open(p).read().replace('t: "pe-3"', 't: "pe-evil"')
s += '  - id: 4\n    tool: t112\n    why: "x"\n    params: {m: rec, t: "pe-extra"}\n'
open(p, "w").write(s)
git("add", "plans/pe/PLAN.yml")
git("commit", "-q", "-m", "agent: edit the running plan")
""",
    # fc: the agent commits a forged 'plangate: complete' (the start's message and trailers)
    "fc-1": r"""
msg = git("log", "-1", "--format=%B", "HEAD")
msg = msg.replace("plangate: start plans/fc", "plangate: complete plans/fc")
git("commit", "-q", "--allow-empty", "-m", msg)
""",
    # cr: the start erased and merged straight back --no-ff -X theirs mid-run (before any
    # pass saw it erased: no hold)
    "cr-1": r"""
tip = git("rev-parse", "HEAD")
git("reset", "-q", "--hard", "HEAD~1")
git("merge", "-q", "--no-ff", "-X", "theirs", "-m", "restore", tip)
""",
    # nn: the grandchild (pinned by the child) edited and committed mid-child
    "nn-c1": r"""
p = os.path.join(repo, "plans", "gc-nn", "PLAN.yml")
s = open(p).read().replace('t: "nn-g2"', 't: "nn-evil"')
s += '  - id: 3\n    tool: t112\n    why: "x"\n    params: {m: rec, t: "nn-extra"}\n'
open(p, "w").write(s)
git("add", "plans/gc-nn/PLAN.yml")
git("commit", "-q", "-m", "agent: edit the grandchild mid-run")
""",
    # ns: the pinned child's folder replaced by a symlink to an evil plan, committed, mid-child
    "ns-c1": r"""
git("rm", "-q", "-r", "plans/ch-ns")
import shutil
shutil.rmtree(os.path.join(repo, "plans", "ch-ns"), ignore_errors=True)
os.symlink("ev-ns", os.path.join(repo, "plans", "ch-ns"))
git("add", "plans/ch-ns")
git("commit", "-q", "-m", "agent: child now a link")
""",
}


def _act(i: int | str, m: str, t: str, extra: str = "") -> str:
    return f'  - id: {i}\n    tool: t112\n    why: "{t}"\n    params: {{m: {m}, t: "{t}"}}\n{extra}'


def _plan(slug: str, acts: str, status: str = "pending_approval") -> str:
    return (
        f'plan:\n  name: "{slug}"\n  task: "atk112d {slug}"\n  status: {status}\n'
        f"available_tools:\n  - name: t112\nactions:\n{acts}"
    )


GATE = "    requires_approval: true\n"
#: plan -> (mode of action 1, 2, 3, extra of action 2)
PLANS: dict[str, tuple[str, str, str, str]] = {
    "rv": ("hook", "rec", "rec", ""),
    "am": ("hook", "rec", "rec", ""),
    "pe": ("hook", "rec", "rec", ""),
    "fc": ("hook", "rec", "rec", ""),
    "cr": ("hook", "rec", "rec", ""),
    "rc": ("rec", "rec", "rec", ""),  # completed; complete and start reverted; approved again
    "ab": ("rec", "rec", "rec", GATE),  # paused; Alice approves the gate, then agent aborts
    "cp": ("rec", "rec", "rec", GATE),  # paused; erased; restored by cherry-pick
    "mr": ("rec", "rec", "rec", GATE),  # paused; erased; restored by merge --no-ff (r111 fix)
    "rh": ("rec", "rec", "rec", GATE),  # paused; erased; restored by reset --hard (the remedy)
    "fu": ("rec", "rec", "rec", ""),  # approval dated 2099
    "pa": ("rec", "rec", "rec", ""),  # approval dated 1990 (before the plan's commit)
    "uf": ("rec", "rec", "rec", ""),  # a pass under ulimit -f 1, then a pass
    "uk": ("big", "rec", "rec", ""),  # a pass under ulimit -f 16 with a 60 KB output
}
NESTED = {"nn": "hook", "ns": "hook"}
MANY = [f"m{i:02d}" for i in range(30)]
ALL = list(PLANS) + list(NESTED)


def _rows(d: Path) -> list[dict[str, Any]]:
    p = d / "calls.log"
    if not p.exists():
        return []
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()]


def _cli_as(lab: Lab, who: tuple[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**lab.env(who), "PYTHONPATH": str(WORKTREE)}
    return subprocess.run(
        [PY, "-m", "controller", *args, "--config", str(lab.config)],
        cwd=lab.repo, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _hash(lab: Lab, slug: str) -> str:
    return lab.cli(
        "hash", f"plans/{slug}", "--config", str(lab.config), cwd=lab.repo
    ).stdout.strip()


def _mk(root: Path) -> Lab:
    d = root / "t"
    d.mkdir(parents=True)
    (d / "t112.py").write_text(TOOL)
    for tag, hook in HOOKS.items():
        (d / f"hook-{tag}.py").write_text(hook)
    lab = Lab(root / "L")
    argv = json.dumps([PY, str(d / "t112.py"), "{m}", "{t}"])
    env = json.dumps({"T_DIR": str(d), "T_REPO": str(lab.repo)})
    lab.write_config(tools=f"t112: {{kind: exec, argv: {argv}, env: {env}}}\n")
    lab.t = d  # type: ignore[attr-defined]
    lab.seen = {"passes": []}  # type: ignore[attr-defined]
    for x, (m1, m2, m3, extra) in PLANS.items():
        lab.write(x, _plan(x, _act(1, m1, f"{x}-1") + _act(2, m2, f"{x}-2", extra)
                           + _act(3, m3, f"{x}-3")))  # fmt: skip
    for x in MANY:
        lab.write(x, _plan(x, _act(1, "rec", f"{x}-1") + _act(2, "rec", f"{x}-2")))
    # nn: parent nn-1, child (c1 edits the grandchild, c2 the pinned grandchild g1 g2), nn-3
    lab.write("gc-nn", _plan("gc-nn", _act(1, "rec", "nn-g1") + _act(2, "rec", "nn-g2"), "draft"))
    # ns: parent ns-1, child (c1 makes the child folder a link to ev-ns, c2), ns-3
    lab.write("ch-ns", _plan("ch-ns", _act(1, "hook", "ns-c1") + _act(2, "rec", "ns-c2"), "draft"))
    lab.write("ev-ns", _plan("ev-ns", _act(1, "rec", "ns-evil") + _act(2, "rec", "ns-extra"),
                             "draft"))  # fmt: skip
    lab.commit("plans")
    gpin = _hash(lab, "gc-nn")
    nest = f'  - id: 2\n    plan: {{path: plans/gc-nn, hash: "{gpin}"}}\n    why: "g"\n'
    lab.write("ch-nn", _plan("ch-nn", _act(1, "hook", "nn-c1") + nest, "draft"))
    lab.commit("child nn")
    for x in NESTED:
        pin = _hash(lab, f"ch-{x}")
        nest = f'  - id: 2\n    plan: {{path: plans/ch-{x}, hash: "{pin}"}}\n    why: "n"\n'
        lab.write(x, _plan(x, _act(1, "rec", f"{x}-1") + nest + _act(3, "rec", f"{x}-3")))
    lab.commit("parents")
    return lab


def _once(lab: Lab, tag: str, prefix: str = "", env: dict[str, str] | None = None) -> None:
    e = {**lab.env(), "PYTHONPATH": str(WORKTREE), "REC_LOG": str(lab.log), **(env or {})}
    cmd = [PY, "-m", "controller", "run", "--once", "--config", str(lab.config)]
    if prefix:
        cmd = ["bash", "-c", prefix + ' && exec "$@"', "x", *cmd]
    r = subprocess.run(cmd, cwd=lab.root, env=e, capture_output=True, text=True, timeout=300)
    lab.seen["passes"].append((tag, r.returncode, r.stderr[-1500:]))  # type: ignore[attr-defined]


def _approve(lab: Lab, *slugs: str, who: tuple[str, str] = ALICE, date: str | None = None) -> None:
    for s in slugs:
        lab.set_status(s, "approved")
    lab.git("add", "-A")
    args = ["commit", "-q", "-m", f"approve {' '.join(slugs)}"]
    if date:
        args += ["--date", date]
    lab.git(*args, who=who)


def _rowsafe(lab: Lab) -> dict[str, Any]:
    try:
        return lab.rows()
    except Exception as why:
        return {"raw": repr(why)}


def _row(lab: Lab, x: str) -> dict[str, Any]:
    return _rowsafe(lab).get(f"plans/{x}", {})


def _settle(lab: Lab, x: str, tries: int = 3, who: tuple[str, str] = ALICE) -> None:
    """Alice (or ``who``) approves (a gate or a resume) while the plan waits for a person,
    then passes."""
    for i in range(tries):
        st = _row(lab, x).get("status")
        lab.seen[f"{x}:settle{i}"] = st  # type: ignore[attr-defined]
        if st not in ("awaiting_approval", "failed"):
            return
        lab.seen.setdefault(f"{x}:resumed", []).append(st)  # type: ignore[attr-defined]
        _approve(lab, x, who=who)
        _once(lab, f"{x}-settle{i}")
        _once(lab, f"{x}-settle{i}b")


def _erase_restore(lab: Lab, x: str, how: str) -> None:
    """Paused at its gate, main reset to Alice's approval, a pass, the erased tip restored."""
    seen = lab.seen  # type: ignore[attr-defined]
    _approve(lab, x)
    _once(lab, x)
    seen[f"{x}:row_paused"] = _row(lab, x)
    tip = lab.head()
    approval = lab.git("log", "-1", "--format=%H", "--author=alice", "--", f"plans/{x}").strip()
    lab.git("reset", "-q", "--hard", approval)
    _once(lab, f"{x}-erased")
    seen[f"{x}:row_erased"] = _row(lab, x)
    if how == "merge":
        lab.git("merge", "-q", "--no-ff", "-X", "theirs", "-m", "restore", tip, who=ALICE)
    elif how == "reset":
        lab.git("reset", "-q", "--hard", tip)
    else:
        lab.git(
            "cherry-pick",
            "--allow-empty",
            "--keep-redundant-commits",
            "-X",
            "theirs",
            f"{approval}..{tip}",
            who=ALICE,
        )
    _once(lab, f"{x}-restored")
    _once(lab, f"{x}-restored2")
    seen[f"{x}:row_restored"] = _row(lab, x)
    seen[f"{x}:log_restored"] = lab.git("log", "-8", "--format=%h %an %s")
    # round 112 fix: Alice committed the copies, files in the plan's folder (its
    # EXECUTION_LOG.md), so she is the plan's writer and her resume is refused
    # E_SELF_APPROVAL (round 11's folder rule); Bob, another approver, resumes it
    _settle(lab, x, who=BOB if how == "pick" else ALICE)


def _build(root: Path) -> Lab:
    lab = _mk(root)
    seen, d = lab.seen, lab.t  # type: ignore[attr-defined]
    t0 = time.time()
    _once(lab, "freeze")
    # -- group 1: hooks mid-run, nested, rc, ab, dated approvals
    _approve(lab, "rv", "am", "pe", "fc", "cr", "nn", "ns", "rc", "ab")
    _approve(lab, "fu", date="2099-01-01T00:00:00+1400")
    _approve(lab, "pa", date="1990-01-01T00:00:00-1200")
    _once(lab, "g1")
    _once(lab, "g1-2")
    seen["g1:rows"] = _rowsafe(lab)
    for x in ("rv", "am", "pe", "fc", "cr", "nn", "ns"):
        _settle(lab, x)
    # -- many: 30 plans, one approval commit each (Alice and Bob in turn), one pass
    for i, x in enumerate(MANY):
        _approve(lab, x, who=ALICE if i % 2 else BOB)
    tm = time.time()
    _once(lab, "many")
    seen["many:wall"] = time.time() - tm
    _once(lab, "many-2")
    # -- rc: the complete and the start reverted by the agent, a pass; Alice approves again
    subj = lab.git("log", "--format=%H %s", "--", "plans/rc").splitlines()
    comp = [ln.split()[0] for ln in subj if ln.endswith("plangate: complete plans/rc")]
    start = [ln.split()[0] for ln in subj if ln.endswith("plangate: start plans/rc")]
    seen["rc:found"] = (comp, start)
    if comp and start:
        lab.git("revert", "--no-edit", comp[0], start[0], who=AGENT)
    seen["rc:file_reverted"] = lab.read("rc")[:200]
    _once(lab, "rc-reverted")
    seen["rc:row_reverted"] = _row(lab, "rc")
    if "status: approved" not in lab.read("rc"):
        _approve(lab, "rc")
    else:
        lab.note("rc-nudge")
    _once(lab, "rc-again")
    _once(lab, "rc-again2")
    seen["rc:row_again"] = _row(lab, "rc")
    # -- ab: paused at its gate; Alice approves the gate, then the author asks abort; a pass
    seen["ab:row_paused"] = _row(lab, "ab")
    _approve(lab, "ab")
    r = _cli_as(lab, AGENT, "abort", "plans/ab")
    seen["ab:abort"] = (r.returncode, r.stdout[-300:], r.stderr[-300:])
    _once(lab, "ab")
    _once(lab, "ab-2")
    # -- cp / mr: erased then restored (cherry-pick / merge --no-ff -X theirs)
    _erase_restore(lab, "cp", "pick")
    _erase_restore(lab, "mr", "merge")
    _erase_restore(lab, "rh", "reset")
    # -- uf / uk: passes under a file size limit, then free passes
    _approve(lab, "uf")
    _once(lab, "uf-limited", prefix="ulimit -f 1")
    seen["uf:row_limited"] = _row(lab, "uf")
    _once(lab, "uf")
    _once(lab, "uf-2")
    seen["uf:calls_before_resume"] = [r["t"] for r in _rows(d) if r["t"].startswith("uf-")]
    _settle(lab, "uf")
    _approve(lab, "uk")
    _once(lab, "uk-limited", prefix="ulimit -f 16")
    seen["uk:row_limited"] = _row(lab, "uk")
    _once(lab, "uk")
    _once(lab, "uk-2")
    seen["uk:calls_before_resume"] = [r["t"] for r in _rows(d) if r["t"].startswith("uk-")]
    _settle(lab, "uk")
    _once(lab, "last")
    seen["wall"] = time.time() - t0
    seen["rows"] = _rowsafe(lab)
    seen["plans"] = {}
    for s in ALL + MANY + ["ch-nn", "gc-nn", "ch-ns", "ev-ns"]:
        with contextlib.suppress(Exception):
            seen["plans"][s] = lab.plan(s)
    seen["calls"] = _rows(d)
    seen["audit"] = clone_audit_got(lab, root, "--no-local")
    seen["log"] = lab.git("log", "--format=%h %an %at %s")
    seen["hooklog"] = (d / "hook.log").read_text() if (d / "hook.log").exists() else ""
    return lab


@pytest.fixture(scope="module")
def L(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "r112d-L", _build).seen  # type: ignore[attr-defined]


def _called(g: dict[str, Any], t: str) -> int:
    return sum(1 for r in g["calls"] if r["t"] == t and r["k"] == "call")


def _tags(x: str) -> list[str]:
    if x == "nn":
        return ["nn-1", "nn-c1", "nn-g1", "nn-g2", "nn-3"]
    if x in NESTED:
        return [f"{x}-1", f"{x}-c1", f"{x}-c2", f"{x}-3"]
    return [f"{x}-1", f"{x}-2", f"{x}-3"]


def _status(g: dict[str, Any], x: str) -> Any:
    return (g["plans"].get(x) or {}).get("plan", {}).get("status")


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("x", cases(ALL, ALL, BROKEN))
def test_once(L: dict[str, Any], x: str) -> None:
    """Every action called at most once (uk/uf: counted before any resume a person gave)."""
    calls = L["calls"]
    if x in ("uf", "uk"):
        before = L[f"{x}:calls_before_resume"]
        got = {t: before.count(t) for t in _tags(x)}
    else:
        got = {t: sum(1 for r in calls if r["t"] == t and r["k"] == "call") for t in _tags(x)}
    bad = {t: n for t, n in got.items() if n > 1}
    assert not bad, (got, L["rows"].get(f"plans/{x}"))


@pytest.mark.parametrize("x", cases(ALL, ALL, BROKEN))
def test_order(L: dict[str, Any], x: str) -> None:
    """The calls of the plan came in its order (first calls)."""
    tags = _tags(x)
    seq: list[str] = []
    for r in L["calls"]:
        if r["t"] in tags and r["k"] == "call" and r["t"] not in seq:
            seq.append(r["t"])
    assert seq == tags[: len(seq)], seq


EVIL = ["pe", "ns", "rv", "am", "fc", "cr"]


@pytest.mark.parametrize("x", cases(EVIL, EVIL, BROKEN))
def test_evil(L: dict[str, Any], x: str) -> None:
    """Nothing an edit, a link, a revert or a forged record added ran."""
    ran = sorted({r["t"] for r in L["calls"] if r["t"].startswith(x + "-")})
    assert not [t for t in ran if "evil" in t or "extra" in t], ran
    assert set(ran) <= set(_tags(x)), ran


FINAL = {
    "rv": ("completed",),
    "am": ("completed",),
    "pe": ("completed",),
    "fc": ("completed",),
    "cr": ("completed",),
    "ns": ("completed",),
    "rc": ("completed",),
    "ab": ("aborted",),
    "cp": ("completed",),
    "mr": ("completed",),
    "rh": ("completed",),
    "fu": ("completed",),
    "uf": ("completed",),
    "uk": ("completed",),
}
FINAL_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("x", cases(list(FINAL), list(FINAL), FINAL_BROKEN))
def test_final(L: dict[str, Any], x: str) -> None:
    """The plan ends with a recorded outcome (the committed status and the status row)."""
    row = L["rows"].get(f"plans/{x}", {})
    if x != "rc":  # rc: the agent's revert of the complete left the file 'executing' (ignored)
        assert _status(L, x) in FINAL[x], (_status(L, x), row)
    assert row.get("status") in FINAL[x], row


def test_two_level_nest_invalid(L: dict[str, Any]) -> None:
    """A child that nests a plan is invalid (one level only): nothing of it ran."""
    ran = [r["t"] for r in L["calls"] if r["t"].startswith("nn-")]
    assert not ran, ran
    assert L["rows"].get("plans/nn", {}).get("status") == "invalid", L["rows"].get("plans/nn")


@pytest.mark.parametrize("x", cases(["cp", "mr", "rh"], ["cp", "mr", "rh"], {}))
def test_restored_run_closed_by_controller(L: dict[str, Any], x: str) -> None:
    """After the erased start is put back, git history records the run's end: a controller
    outcome commit (complete, fail, abort) of the plan after the restore."""
    lines = L["log"].splitlines()
    subjects = [ln.split(" ", 3)[3] for ln in lines if ln.split(" ", 1)[1].startswith("plangate ")]
    outcomes = [s for s in subjects if s.split(" ")[1] in ("complete", "fail", "abort")
                and s.endswith(f"plans/{x}")]  # fmt: skip
    assert outcomes, (L[f"{x}:log_restored"], L["rows"].get(f"plans/{x}"))


ALLRAN = ["rv", "am", "pe", "fc", "cr", "rc", "cp", "mr", "rh", "fu", "uf", "uk"]


@pytest.mark.parametrize("x", cases(ALLRAN, ALLRAN, {}))
def test_all_ran_once(L: dict[str, Any], x: str) -> None:
    """The approved plan ran whole: every frozen action exactly once."""
    got = [_called(L, t) for t in _tags(x)]
    if x in ("uf", "uk") and L.get(f"{x}:resumed"):
        assert all(n >= 1 for n in got), got
    else:
        assert got == [1] * len(got), (got, L["rows"].get(f"plans/{x}"))


def test_abort_after_gate_approval(L: dict[str, Any]) -> None:
    """Alice approved the gate, then the author asked abort before any pass: nothing after the
    gate ran."""
    assert [_called(L, f"ab-{i}") for i in (1, 2, 3)] == [1, 0, 0], L["ab:abort"]


def test_rc_reverted_not_rerun(L: dict[str, Any]) -> None:
    """The complete and start reverted, approved again: the version that ran never runs again
    (no action a second time), and nothing says it is running."""
    assert [_called(L, f"rc-{i}") for i in (1, 2, 3)] == [1, 1, 1], L["rc:row_again"]


def test_past_dated_approval_once(L: dict[str, Any]) -> None:
    """An approval dated 1990 (before the plan's own commit): run once or refused, never twice;
    the fresh-clone audit agrees with what ran."""
    n = [_called(L, f"pa-{i}") for i in (1, 2, 3)]
    assert n in ([0, 0, 0], [1, 1, 1]), n
    assert (n[0] == 1) == ("plans/pa" in L["audit"]["valid"]), (n, L["rows"].get("plans/pa"))


def test_many_all_ran(L: dict[str, Any]) -> None:
    """30 plans, one approval commit each: each completed, each action once."""
    bad = [x for x in MANY if _called(L, f"{x}-1") != 1 or _called(L, f"{x}-2") != 1]
    assert not bad, bad
    st = [x for x in MANY if _status(L, x) != "completed"]
    assert not st, st


def test_many_audit(L: dict[str, Any]) -> None:
    """The fresh-clone audit calls each of the 30 runs valid."""
    valid = set(L["audit"]["valid"])
    assert not [x for x in MANY if f"plans/{x}" not in valid]


AUDITED = [x for x in ALL if x not in ("ab", "pa", "nn")]


@pytest.mark.parametrize("x", cases(AUDITED, AUDITED, {}))
def test_audit_valid(L: dict[str, Any], x: str) -> None:
    """The fresh-clone audit calls the plan's run valid (the run rests on a valid approval)."""
    assert f"plans/{x}" in L["audit"]["valid"], (L["audit"]["err"], L["audit"]["rc"])


REWRITTEN = ["rv", "am", "pe", "fc", "cr", "rc", "cp", "mr", "rh", "ns"]


@pytest.mark.parametrize("x", REWRITTEN)
def test_audit_flags_nothing_unexplained(L: dict[str, Any], x: str) -> None:
    """The fresh-clone audit flags no start or controller commit of the plan it cannot
    explain. ``mr`` (merged-back-fail-unexplained) is fixed: the closing ``fail`` names its
    start (``Closes-Start:``), reachable behind the merge. For ``cp`` the expectation changed
    with the fix (docs/threat-model.md, round 112): the start the ``fail`` closes was erased
    for good (the branch holds only Alice's copies of it), so git alone cannot prove the
    ``fail`` is the controller's; the one honest finding names that start as absent from the
    history and points to the controller's record (``audit --config``)."""
    rep = L["audit"]["report"]
    bad = [
        f
        for f in rep.get("findings", [])
        if isinstance(f, dict)
        and f.get("plan") == f"plans/{x}"
        and ("start" in f.get("kind", "") or "controller" in f.get("kind", ""))
    ]
    if x == "cp":
        closing = [f for f in bad if "which this history does not hold" in f.get("detail", "")]
        assert len(closing) == 1 and "audit --config" in closing[0]["detail"], bad[:5]
        bad = [f for f in bad if f not in closing]
    assert not bad, bad[:5]


def test_passes_no_traceback(L: dict[str, Any]) -> None:
    """No pass printed a traceback."""
    bad = [(t, e[-400:]) for t, _, e in L["passes"] if "Traceback" in e]
    assert not bad, bad


def test_passes_exit_ok(L: dict[str, Any]) -> None:
    """Every pass (but the file-size limited ones) exited 0, or nonzero with a coded error."""
    bad = [
        (t, rc, e[-300:])
        for t, rc, e in L["passes"]
        if rc != 0 and "E_" not in e and "limited" not in t
    ]
    assert not bad, bad
