"""Round 73, bursts: two controllers on one remote, set up one after the other as
docs/approvals.md ("Remote mode") says (the second state directory's first start refuses
``E_STORAGE``, then is started once with ``--take-over``; "from then on each decides only its
own runs"), the second one set up in the MIDDLE of the first's burst: while its gated runs
wait at their gates.

Lab (one, remote mode: a bare repository, Alice's and the agent's working clone pushing to
it; controller A and controller B with their own configs and state directories, one catalog,
one ``ran.log``). The agent pushes ``c-01``..``c-10`` and the gated ``cg-1``/``cg-2``; A's
first pass freezes them. Alice approves ``c-01``..``c-04`` and both gated plans (one push); A's
pass: four complete, the two pause at their gates. Then B is set up: its first start (no
option) and its ``--take-over`` start. Alice approves ``cg-1``'s gate and ``c-05``..``c-08``:
B's pass, then A's. Alice approves ``cg-2``'s gate: A's and B's passes at the same moment
(threads). Alice sets ``c-01`` (completed) and ``cg-1`` (completed) ``approved`` again (stray
re-approvals): both passes. ``c-09``/``c-10`` are never approved. Asserted:

- ``b-refused``: B's first start without the option refuses ``E_STORAGE`` naming
  ``--take-over``, commits nothing (the remote's tip unchanged);
- ``b-nofail``: B's take-over commits no ``fail``/``refuse``/``abort`` of A's runs paused at
  their gates (it is set up beside A, not over it);
- ``b-own``: every controller commit of ``cg-1``/``cg-2`` (start, pause, resume, outcome)
  names ONE controller instance (``Controller:``): A's runs are resumed by A alone;
- ``passes``: every pass after the take-over exits 0, no traceback;
- ``ran-<plan>``: each of ``c-01``..``c-08`` ran once in all; each gated plan's action 1 once
  and action 2 once after her gate approval; ``c-09``/``c-10`` never;
- ``rows``: ``status --json`` of each controller shows every approved plan ``completed``;
- ``audit``: ``plangate audit --json`` on a fresh clone of the remote lists one valid run of
  each of ``c-01``..``c-08``, two of each gated plan (start, resume), none of ``c-09``/``c-10``.

Kill lab (``test_a_killed_controller_beside_a_second``; remote mode again, a ``slow`` tool as
round 72's that records its call and then waits). The agent pushes ``k-01``..``k-10``
(``k-05`` slow) and the gated ``kg-1``; A freezes them; Alice approves ``k-01``..``k-08`` and
``kg-1``; A's daemon commits the starts and is SIGKILLed in ``k-05``'s action (five calls).
B is set up (refused, then ``--take-over``) while A is down; A restarts (``run --once``);
twice Alice approves whatever either controller's ``status`` shows in doubt or at a gate, and
A and B each make a pass. Asserted: ``killed`` (the kill cut ``k-05``), ``b-refused``,
``b-ranone`` (B's take-over called no tool), ``b-nofail-k`` (B's take-over commits no
``fail``/``abort`` of A's runs), ``passes``, ``ran-<plan>`` (``k-01``..``k-04``, ``k-06``..``k-08``
once; ``k-05`` once or twice: the cut action, whose resume the docs let run again; ``kg-1``'s
two actions once; ``k-09``/``k-10`` never), ``audit`` (a valid run of each approved plan, none
of the others).

Seen (round 73): BROKEN (3 ids, 1 class: a second controller set up with ``--take-over``
mid-burst decides the first one's runs). ``b-own``: B, set up (refused ``E_STORAGE``, then
``--take-over``) while A's ``cg-1``/``cg-2`` waited at their gates, adopted A's sealed commits
by trust on first use and on Alice's gate approvals RESUMED AND COMPLETED BOTH of A's runs
(``start``/``complete plans/cg-1`` under ``Controller: vm/<B>``; A's pause under
``vm/<A>``). ``rows``: A then shows ``cg-1`` ``approved`` (not ``completed``), ``waiting``:
"its run was last started by ... a commit this controller did not make ...: another controller
or a lost key", and ``cg-2`` ``completed`` with the reason "paused before action 2 (rec):
approve it to continue" beside "E_ILLEGAL_TRANSITION: plangate@localhost set status completed
(from awaiting_approval) ... ignored". ``b-nofail-k``: B's take-over while A was down (killed
mid-burst, to be restarted) committed ``fail plans/<p>`` ``E_ACTION_IN_DOUBT`` over six of A's
runs: ``k-04`` (called, its outcome not yet committed), ``k-05`` (cut) and ``k-06``..``k-08``,
``kg-1`` (started, never called); Alice's resumes as the rows asked then ran those once (A's
journal answered ``k-04``: not called again), B's ``status`` still shows them ``completed`` with
an ``E_ACTION_IN_DOUBT`` reason. Should (docs/approvals.md, "Remote mode": "Two controllers
meant to share a remote are set up one after the other ... started once with ``--take-over``;
from then on each decides only its own runs"; docs/operations.md, "A new state directory":
take over only when "no other controller runs on this branch"): the two passages disagree
for a second controller set up while the first has runs open; either the remote-mode setup
takes over nothing but the policy record (A's open runs stay A's: B waits "another
controller"), or it is documented as allowed only before the first controller's first run.
No action ran twice but the documented resume of the cut ``k-05``; nothing unapproved ran.
HELD: B's first start without the option refuses ``E_STORAGE`` naming ``--take-over``,
nothing pushed; B's take-over called no tool; every approved plan once (A's and B's passes in
turn and at the same moment), gates' action 2 once, ``c-09``/``c-10``/``k-09``/``k-10`` never,
stray re-approvals of completed plans rerun nothing; every pass exits 0; the fresh-clone
audit of the remote lists a valid run of each approved plan, none of the others.
Accepted (2026-11-30, the lead): the docs were wrong, not the take-over. ``--take-over`` adopts
every controller commit on the branch, as a rebuilt host must (it cannot tell a live first
controller from a lost one: round 70); run beside a live controller it is the operator's
mistake the option's docs warn of. docs/approvals.md ("Remote mode") now says one controller
per branch, the push race a safety net, and docs/threat-model.md lists this under "Accepted
limits". The three ids stay strict xfails as the limit's witnesses.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from pathlib import Path

import pytest
from advkit import ALICE, Lab, cases, plan_text
from burstkit import date_steps, gated
from test_round2_execution_kit import shared

C = [f"c-{i:02d}" for i in range(1, 11)]
G = ["cg-1", "cg-2"]
TAGS = [*C, *(f"{g}-{n}" for g in G for n in (1, 2))]
BROKEN: dict[str, object] = {
    "b-own": pytest.mark.xfail(
        strict=True,
        reason="round 73 (accepted limit: --take-over beside a live controller): B, set up "
        "with --take-over while A's gated runs waited at their "
        "gates, resumed and completed A's runs (cg-1, cg-2): it decides A's runs",
    ),
    "b-nofail-k": pytest.mark.xfail(
        strict=True,
        reason="round 73 (accepted limit): B's --take-over beside A (killed mid-burst, "
        "restarted after) "
        "committed fail E_ACTION_IN_DOUBT over six of A's started runs, four never called",
    ),
    "rows": pytest.mark.xfail(
        strict=True,
        reason="round 73 (accepted limit): A then shows cg-1 (completed by B) as 'approved', "
        "waiting for "
        "'another controller or a lost key', and cg-2 'paused ... approve it to continue' "
        "beside an illegal transition",
    ),
}


def _push(lab: Lab, slugs: list[str], message: str) -> None:
    lab.git("pull", "-q", "--rebase", "origin", "main")
    for s in slugs:
        lab.set_status(s, "approved")
    lab.commit(message, ALICE)
    lab.git("push", "-q", "origin", "HEAD:main")


def _bare_log(bare: Path, rng: str) -> list[str]:
    out = subprocess.run(
        ["git", "--git-dir", str(bare), "log", "--format=%an|%s", rng],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return out.splitlines()


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    bare = root / "bare.git"
    date = date_steps(lab, 1790000000)
    date()
    for v in C:
        lab.write(v, plan_text(v))
    for g in G:
        lab.write(g, gated(g))
    lab.commit("agent plans")
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(bare)], check=True)
    lab.git("remote", "add", "origin", str(bare))
    lab.git("fetch", "-q", "origin")
    lab.git("branch", "-q", "--set-upstream-to", "origin/main")
    text = lab.config.read_text().replace(
        f"repo: {lab.repo}\n",
        f"remote: {{url: 'file://{bare}', branch: main, poll_interval: 0.2}}\n",
    )
    lab.config.write_text(text)
    cfg_b = root / "plangate-b.yml"
    cfg_b.write_text(text.replace(f"state_dir: {lab.state}", f"state_dir: {root / 'state-b'}"))
    passes: list[tuple[str, int, bool, str]] = []

    def run(who: str, *extra: str) -> subprocess.CompletedProcess[str]:
        cfg = lab.config if who == "a" else cfg_b
        r = lab.cli("run", "--once", *extra, "--config", str(cfg), timeout=120)
        passes.append((who, r.returncode, "Traceback" in r.stderr, r.stderr[-1200:]))
        return r

    run("a")
    date()
    _push(lab, [*C[:4], *G], "approve the first burst")
    run("a")
    lab.at_gate = {t: len(lab.calls(t)) for t in TAGS}  # type: ignore[attr-defined]
    tip = subprocess.run(["git", "--git-dir", str(bare), "rev-parse", "main"],
                         capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    refused = lab.cli("run", "--once", "--config", str(cfg_b), timeout=120)
    tip2 = subprocess.run(["git", "--git-dir", str(bare), "rev-parse", "main"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    lab.b_refused = {  # type: ignore[attr-defined]
        "rc": refused.returncode, "err": refused.stderr[-1500:], "moved": tip != tip2,
    }  # fmt: skip
    passes.clear()
    run("b", "--take-over")
    lab.b_took = _bare_log(bare, f"{tip2}..main")  # type: ignore[attr-defined]
    date()
    _push(lab, ["cg-1", *C[4:8]], "approve cg-1's gate and four more")
    run("b")
    run("a")
    date()
    _push(lab, ["cg-2"], "approve cg-2's gate")
    threads = [threading.Thread(target=run, args=(w,)) for w in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    date()
    _push(lab, ["c-01", "cg-1"], "approve again")
    run("a")
    run("b")
    run("b")
    run("a")
    lab.passes = passes  # type: ignore[attr-defined]
    lab.ran = {t: len(lab.calls(t)) for t in TAGS}  # type: ignore[attr-defined]
    rows = {}
    for who, cfg in (("a", lab.config), ("b", cfg_b)):
        out = lab.cli("status", "--json", "--config", str(cfg)).stdout
        try:
            rows[who] = {r["plan"][6:]: r.get("status") for r in json.loads(out)}
        except (ValueError, TypeError, KeyError):
            rows[who] = {"_raw": out[-500:]}
    lab.rows = rows  # type: ignore[attr-defined]
    clone = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    res = lab.cli("audit", "--json", cwd=clone)
    report = json.loads(res.stdout)
    lab.runs = {  # type: ignore[attr-defined]
        t: len([e for e in report.get("executions", []) if e.get("plan") == f"plans/{t}"
                and e.get("approval_valid")])
        for t in [*C, *G]
    }  # fmt: skip
    lab.log_b = _bare_log(bare, "main")  # type: ignore[attr-defined]
    fmt = "--format=%s|%(trailers:key=Controller,valueonly,separator=%x2C)"
    lab.ctl = subprocess.run(  # type: ignore[attr-defined]
        ["git", "--git-dir", str(bare), "log", "--reverse", fmt, "main"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    keys = ("b_refused", "b_took", "passes", "ran", "rows", "runs", "log_b", "ctl")
    (root / "out.json").write_text(json.dumps({k: getattr(lab, k) for k in keys}, indent=1))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r73-tworemote", _build)


def test_the_lab(lab: Lab) -> None:
    at = lab.at_gate  # type: ignore[attr-defined]
    want = {**{t: 1 for t in C[:4]}, "cg-1-1": 1, "cg-2-1": 1}
    assert all(at[t] == want.get(t, 0) for t in TAGS), at


PLANS = [*C, *G]
IDS = ["b-refused", "b-nofail", "b-own", "passes", *(f"ran-{p}" for p in PLANS), "rows", "audit"]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_two_controllers_each_decide_their_own(lab: Lab, vid: str) -> None:
    ran = lab.ran  # type: ignore[attr-defined]
    said = (ran, lab.rows, lab.b_took, [p[:3] for p in lab.passes])  # type: ignore[attr-defined]
    if vid == "b-refused":
        r = lab.b_refused  # type: ignore[attr-defined]
        assert r["rc"] != 0 and "E_STORAGE" in r["err"] and "--take-over" in r["err"], r
        assert not r["moved"], r
    elif vid == "b-nofail":
        bad = [s for s in lab.b_took if any(w in s for w in (" fail ", " refuse ", " abort "))]  # type: ignore[attr-defined]
        assert not bad, said
    elif vid == "b-own":
        for g in G:
            mine = [x.split("|")[1] for x in lab.ctl if x.split("|")[0].endswith(f" plans/{g}")]  # type: ignore[attr-defined]
            assert len(set(mine)) == 1, (g, mine)
    elif vid == "passes":
        assert all(rc == 0 and not tb for _, rc, tb, _ in lab.passes), [  # type: ignore[attr-defined]
            p
            for p in lab.passes
            if p[1] or p[2]  # type: ignore[attr-defined]
        ]
    elif vid.startswith("ran-"):
        p = vid[4:]
        if p in G:
            assert (ran[f"{p}-1"], ran[f"{p}-2"]) == (1, 1), said
        else:
            assert ran[p] == (1 if p in C[:8] else 0), said
    elif vid == "rows":
        for who in ("a", "b"):
            rows = lab.rows[who]  # type: ignore[attr-defined]
            for p in [*C[:8], *G]:
                assert rows.get(p) == "completed", (who, p, rows)
    elif vid == "audit":
        runs = lab.runs  # type: ignore[attr-defined]
        want = {**{p: 1 for p in C[:8]}, "c-09": 0, "c-10": 0, "cg-1": 2, "cg-2": 2}
        assert runs == want, (runs, said)


# -- the kill lab: A SIGKILLed mid-burst, B set up beside it, A restarted --------------------

K = [f"k-{i:02d}" for i in range(1, 11)]
KTAGS = [*K, "kg-1-1", "kg-1-2"]


def _doubt_or_gate(rows: dict) -> list[str]:
    out = []
    for slug, row in rows.items():
        doubt = row.get("status") == "failed" and "E_ACTION_IN_DOUBT" in str(row.get("reason"))
        if doubt or row.get("status") == "awaiting_approval":
            out.append(slug)
    return sorted(out)


def _full_rows(lab: Lab, cfg: Path) -> dict:
    out = lab.cli("status", "--json", "--config", str(cfg)).stdout
    try:
        return {r["plan"][6:]: {k: r.get(k) for k in ("status", "reason", "waiting")}
                for r in json.loads(out)}  # fmt: skip
    except (ValueError, TypeError, KeyError):
        return {}


def _build_kill(root: Path) -> Lab:
    import os
    import signal
    import sys

    from burstkit import daemon
    from test_round72_burst_killrestore import SLOW, _slow_plan

    marks = root / "marks"
    marks.mkdir(parents=True)
    (root / "slow.py").write_text(SLOW)
    log = json.dumps(str(root / "lab" / "ran.log"))
    argv = json.dumps([sys.executable, str(root / "slow.py"), "{tag}", str(marks)])
    lab = Lab(root / "lab", tools=f"slow: {{kind: exec, argv: {argv}, env: {{REC_LOG: {log}}}}}\n")
    bare = root / "bare.git"
    for v in K:
        lab.write(v, _slow_plan(v) if v == "k-05" else plan_text(v))
    lab.write("kg-1", gated("kg-1"))
    lab.commit("agent plans")
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(bare)], check=True)
    lab.git("remote", "add", "origin", str(bare))
    lab.git("fetch", "-q", "origin")
    lab.git("branch", "-q", "--set-upstream-to", "origin/main")
    text = lab.config.read_text().replace(
        f"repo: {lab.repo}\n",
        f"remote: {{url: 'file://{bare}', branch: main, poll_interval: 0.2}}\n",
    )
    lab.config.write_text(text)
    cfg_b = root / "plangate-b.yml"
    cfg_b.write_text(text.replace(f"state_dir: {lab.state}", f"state_dir: {root / 'state-b'}"))
    passes: list[tuple[str, int, bool, str, list[str]]] = []

    def run(who: str, *extra: str) -> subprocess.CompletedProcess[str]:
        cfg = lab.config if who == "a" else cfg_b
        r = lab.cli("run", "--once", *extra, "--config", str(cfg), timeout=120)
        warned = re.findall(r'"event": "([a-z_.]+)", "level": "(?:warning|error)"', r.stderr)
        passes.append((who, r.returncode, "Traceback" in r.stderr, r.stderr[-1200:], warned))
        return r

    run("a")
    time_ok = subprocess.run(["sleep", "1.1"], check=True)  # approvals in a later second
    del time_ok
    _push(lab, [*K[:8], "kg-1"], "approve the burst")
    lab.log.touch()
    with daemon(lab, root) as d:
        d.wait_for_calls(5, 90)
        lab.killed_at = d.ran()  # type: ignore[attr-defined]
    (marks / "release").write_text("1")
    lock = lab.state / "lock"
    if lock.exists():
        lock.unlink()
    # a kill that landed inside git's own ref transaction in A's clone (a loaded machine:
    # CI, 2026-12-01) leaves git's lock; the operator follows git's message and
    # docs/operations.md ("with no git running, remove the file it names") before A restarts
    clone = lab.state / "clone"
    for name in ("HEAD.lock", "refs/heads/main.lock", "packed-refs.lock"):
        (clone / name).unlink(missing_ok=True)
    # over file:// the remote's receive-pack is A's child: a kill inside A's push leaves the
    # REMOTE's locks (CI, 2026-12-04: refs/heads/main.lock, then HEAD.lock; every later push
    # of A and B turned down, nothing said; now a pass fails E_GIT naming the file,
    # tests/service/test_remote.py), which the operator removes as that message says
    for name in ("HEAD.lock", "refs/heads/main.lock", "packed-refs.lock"):
        (bare / name).unlink(missing_ok=True)
    tip = subprocess.run(["git", "--git-dir", str(bare), "rev-parse", "main"],
                         capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    refused = lab.cli("run", "--once", "--config", str(cfg_b), timeout=120)
    lab.b_refused = {"rc": refused.returncode, "err": refused.stderr[-1500:]}  # type: ignore[attr-defined]
    run("b", "--take-over")
    lab.b_took = _bare_log(bare, f"{tip}..main")  # type: ignore[attr-defined]
    lab.ran_b = {t: len(lab.calls(t)) for t in KTAGS}  # type: ignore[attr-defined]
    run("a")  # A restarts
    lab.ran_a = {t: len(lab.calls(t)) for t in KTAGS}  # type: ignore[attr-defined]
    asked = []
    for _ in range(2):  # Alice answers what either controller's status asks of her
        want = sorted(
            set(_doubt_or_gate(_full_rows(lab, lab.config)))
            | set(_doubt_or_gate(_full_rows(lab, cfg_b)))
        )
        asked.append(want)
        if want:
            subprocess.run(["sleep", "1.1"], check=True)
            _push(lab, want, "resume " + " ".join(want))
        run("a")
        run("b")
    lab.asked = asked  # type: ignore[attr-defined]
    lab.passes = passes  # type: ignore[attr-defined]
    lab.ran = {t: len(lab.calls(t)) for t in KTAGS}  # type: ignore[attr-defined]
    lab.rows = {"a": _full_rows(lab, lab.config), "b": _full_rows(lab, cfg_b)}  # type: ignore[attr-defined]
    clone = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    report = json.loads(lab.cli("audit", "--json", cwd=clone).stdout)
    lab.runs = {  # type: ignore[attr-defined]
        t: len([e for e in report.get("executions", []) if e.get("plan") == f"plans/{t}"
                and e.get("approval_valid")])
        for t in [*K, "kg-1"]
    }  # fmt: skip
    lab.log_b = _bare_log(bare, "main")  # type: ignore[attr-defined]
    keys = ("killed_at", "b_refused", "b_took", "ran_b", "ran_a", "asked", "passes", "ran",
            "rows", "runs", "log_b")  # fmt: skip
    (root / "out.json").write_text(json.dumps({k: getattr(lab, k) for k in keys}, indent=1))
    _ = (os, signal)
    return lab


@pytest.fixture(scope="module")
def kill(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r73-tworemote-kill", _build_kill)


KIDS = [
    "killed",
    "b-refused",
    "b-ranone",
    "b-nofail-k",
    "passes",
    *(f"ran-{p}" for p in [*K, "kg-1"]),
    "audit",
]


def _said(kill: Lab) -> str:
    """What a failing id prints, whole (a string: pytest cuts a tuple's repr): the calls
    after each step, Alice's answers, B's take-over commits, each controller's rows and the
    warning/error events of every pass (CI, 2026-12-04: a take-over that failed none of A's
    runs and rows left ``executing`` could not be told apart from a cut repr)."""
    events = []
    for who, rc, _tb, _tail, warned in kill.passes:  # type: ignore[attr-defined]
        events.append(f"{who}:{rc}:{','.join(dict.fromkeys(warned))}")
    return json.dumps(
        {
            "ran": kill.ran,  # type: ignore[attr-defined]
            "ran_b": kill.ran_b,  # type: ignore[attr-defined]
            "ran_a": kill.ran_a,  # type: ignore[attr-defined]
            "asked": kill.asked,  # type: ignore[attr-defined]
            "b_took": kill.b_took,  # type: ignore[attr-defined]
            "passes": events,
            "rows": kill.rows,  # type: ignore[attr-defined]
        }
    )


@pytest.mark.parametrize("vid", cases(KIDS, KIDS, BROKEN))  # type: ignore[arg-type]
def test_a_killed_controller_beside_a_second(kill: Lab, vid: str) -> None:
    ran = kill.ran  # type: ignore[attr-defined]
    said = _said(kill)
    if vid == "killed":
        assert kill.killed_at[-1:] == ["k-05"], kill.killed_at  # type: ignore[attr-defined]
    elif vid == "b-refused":
        r = kill.b_refused  # type: ignore[attr-defined]
        assert r["rc"] != 0 and "E_STORAGE" in r["err"], r
    elif vid == "b-ranone":  # B's take-over runs nothing A started
        before = {t: (1 if t in kill.killed_at else 0) for t in KTAGS}  # type: ignore[attr-defined]
        assert kill.ran_b == before, said  # type: ignore[attr-defined]
    elif vid == "b-nofail-k":  # B's take-over commits no outcome of A's runs
        bad = [x for x in kill.b_took if " fail " in x or " abort " in x]  # type: ignore[attr-defined]
        assert not bad, said
    elif vid == "passes":
        bad = [p for p in kill.passes if p[1] or p[2]]  # type: ignore[attr-defined]
        assert not bad, bad
    elif vid.startswith("ran-"):
        p = vid[4:]
        if p == "kg-1":
            assert (ran["kg-1-1"], ran["kg-1-2"]) == (1, 1), said
        elif p == "k-05":  # cut by the kill: in doubt, her resume runs it again (documented)
            assert 1 <= ran[p] <= 2, said
        else:
            assert ran[p] == (1 if p in K[:8] else 0), said
    elif vid == "audit":
        runs = kill.runs  # type: ignore[attr-defined]
        for p in K:
            assert (runs[p] >= 1) == (p in K[:8]), (p, runs, said)
