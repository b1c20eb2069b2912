"""Round 83 (runs): an MCP ``submit`` whose server is SIGKILLed in the middle of it (local
mode), then a person's ordinary commit, ``plangate approve``, the controller's pass, or the
agent's second submit; and two MCP servers submitting at once while a ``run --once`` freezes.

docs/agents.md: "Submissions sent together (parallel tool calls) are committed one at a time,
each on the branch as the previous one left it"; an agent that commits with git itself "retries
when git reports `.git/index.lock` exists ...: the controller was writing at that moment".
docs/operations.md (the state directory): "`index-lock` exists only while the controller is
between a commit and its working-tree and index writes: after a crash, the next start finishes
those writes and removes the `.git/index.lock` it left" - the controller's own commits hold
git's index lock across the window in which the branch has moved and the index has not, so a
person's ``git commit`` waits instead of committing the stale index.

Lab (one, local mode, ``agent.identity`` set). Each killed variant ``<v>`` submits
``plans/<v>`` in a ``plangate mcp`` session of its own; the bench polls (no hook: the server
runs none) and SIGKILLs the server's process group at the trigger: ``ref`` the moment
``refs/heads/main`` moves (the submit's commit is on the branch), ``file`` the moment
``plans/<v>/PLAN.yml`` appears in the working tree. Then, before any pass:
- ``<trig>-commit``: Alice approves her own pending plan ``plans/y-<v>`` the careful way
  (``git add plans/y-<v>/PLAN.yml``, ``git commit``: her path alone staged);
- ``<trig>-approve``: Alice runs ``plangate approve plans/y-<v>``;
- ``<trig>-pass``: nothing (the controller's pass comes first);
- ``<trig>-resub``: the agent submits the same plan again in a new session;
- ``ctl-commit`` (control): the submit answered, then Alice's careful commit.
RACE: two ``plangate mcp`` sessions of 4 submits each and a ``run --once`` (freezing a plan
committed just before) started at once.

Checks: ``kept`` (after one pass HEAD holds the submitted ``plans/<v>/PLAN.yml`` as sent, its
row ``pending_approval``: the submission was committed once and is still there); ``alice``
(Alice's commit changed her plan's file alone); ``clean`` (``git status --porcelain`` empty
after the pass); ``once`` (one ``Submit plan plans/<v>`` commit); ``yran`` (Alice's plan ran
once after its approval). RACE: ``answers`` (each of the 8 ``ok``), ``branch`` (each once on
the branch, the pass's freeze kept), ``clean``.

Seen (round 83): **a SIGKILLed MCP ``submit`` leaves the index behind the branch, and a person's
careful commit deletes the submission** (``ref-commit:{kept,alice}``, ``file-commit:alice``, 3):
the server commits the plan (``Agent Submit plan plans/s-ref-commit`` on ``main``) before it writes
the working tree and the index, holding no ``.git/index.lock`` across that window; killed in it,
``git status --porcelain`` prints ``D plans/s-ref-commit/ PLAN.yml`` (staged: the index is the old
tree; ``file``: also ``?? plans/s-file-commit/``). Alice then approves her own plan the way
docs/agents.md tells a writer to (only her path): ``git add plans/y-ref-commit/PLAN.yml && git
commit -m "approve y-ref-commit"``; her commit is ``D plans/s-ref-commit/PLAN.yml`` + ``M
plans/y-ref-commit/PLAN.yml``: the agent's submission is deleted under Alice's name, the next pass
has no row for it (``plangate status`` lists nothing), the agent got no answer. (``file``: the
untracked file left behind is adopted by the next pass's freeze, so the plan comes back, but
Alice's commit still carries the deletion.) Should (docs/operations.md: the controller's own
``index-lock`` "exists only while the controller is between a commit and its working-tree and index
writes: after a crash, the next start finishes those writes"; docs/agents.md: submissions "are
committed"): the submit's window guarded as the controller's is (Alice's ``git commit`` waits on
``index.lock``, or the next start finishes the writes), never a stale index a person commits. Held:
``plangate approve`` after the same kill committed only Alice's file (``ref-approve``,
``file-approve``); the controller's next pass put the index and working tree right (``*-pass``:
``git status`` clean, the submission frozen ``pending_approval``); a second submit of the same plan
after the kill made no second ``Submit`` commit (``*-resub``; noted, conservative: it is refused
``E_USAGE`` "has uncommitted changes in the watched working tree", remedy "someone is editing it by
hand: submit under another slug", about the server's own unfinished write); each ``y-`` plan ran
once; two MCP servers of 4 submits each racing a ``run --once`` committed all 8 once, the pass's
freeze kept, ``git status`` clean. A kill caught inside git's ref transaction sometimes leaves
``HEAD.lock`` (git's own crash; the bench removes it as git's message says).
fixed (2026-12-01, r83mcpkill): every commit plangate makes into the shared working tree beside
the controller (MCP ``submit``, ``plangate approve``/``reject``/``abort``) goes through one writer
(``controller.git.sharedwrite``) under the controller's crash rule: git's ``.git/index.lock``
taken before the branch moves and held until the index and the tree hold the commit, the
commit's entries noted first in ``.git/plangate-index-lock``; a killed writer's note and lock
are finished and removed by the next writer, ``plangate mcp`` start, or controller start or
pass (under an ``flock`` the writer holds: never while one is still writing). Alice's careful
``git add`` in the window now fails loudly ("index.lock ... File exists"); the bench leaves that
lock (docs/operations.md), she commits after the pass, her file alone. A second submit of the
very plan the branch already holds makes no second commit (answered ``ok``). Fixer's variants:
``ref-commita`` (Alice's ``git commit -a`` in the window), ``ref-mcpstart`` (the next MCP start
alone finishes the writes: ``test_mcpstart``), ``test_locked`` (the lock held and Alice refused,
per commit variant), ``test_approve_killed`` (a ``plangate approve`` killed after its commit:
the same rule).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from mcpkit import PLANGATE, _requests
from test_round2_execution_kit import shared

TRIGS = ["ref", "file"]
AFTER = ["commit", "approve", "pass", "resub"]
# fixer's variants (r83mcpkill): Alice's `git commit -a` in the window; the next `plangate mcp`
# start alone (no submit, no pass) finishing the writes
ADDED = ["ref-commita", "ref-mcpstart"]
KILLED = [f"{t}-{a}" for t in TRIGS for a in AFTER] + ADDED
VIDS = [*KILLED, "ctl-commit"]
RACE = [f"a{i}" for i in range(4)] + [f"b{i}" for i in range(4)]


def _slug(vid: str) -> str:
    return "s-" + vid


def _porcelain(lab: Lab) -> list[str]:
    return [line for line in lab.git("status", "--porcelain").splitlines() if line.strip()]


def _mcp(lab: Lab, calls: list[tuple[str, dict[str, Any]]]) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [PLANGATE, "mcp", "--config", str(lab.config)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        cwd=lab.root, env=lab.env(), start_new_session=True, text=True,
    )  # fmt: skip
    assert p.stdin is not None
    p.stdin.write(_requests(calls))
    p.stdin.close()
    return p


def _submit(slug: str) -> tuple[str, dict[str, Any]]:
    return ("submit", {"plan": plan_text(slug), "slug": slug})


def _ok(out: str) -> int:
    return sum(1 for line in out.splitlines() if '\\"ok\\": true' in line)


def _kill_at(lab: Lab, vid: str) -> dict[str, Any]:
    trig, slug = vid.split("-")[0], _slug(vid)
    ref = lab.repo / ".git" / "refs" / "heads" / "main"
    before = ref.read_text()
    f = lab.repo / "plans" / slug / "PLAN.yml"
    p = _mcp(lab, [_submit(slug)])
    end, hit = time.time() + 60, False
    while time.time() < end and p.poll() is None:
        if (trig == "file" and f.exists()) or (
            trig == "ref" and ref.exists() and ref.read_text() != before
        ):
            os.killpg(p.pid, signal.SIGKILL)
            hit = True
            break
    p.wait()
    assert p.stdout is not None
    # a git the kill caught inside its ref transaction leaves its lock (git's own crash): the
    # person follows git's message and docs/operations.md ("with no git running, remove the
    # file it names"); the `.git/index.lock` a killed plangate writer holds is left, as
    # docs/operations.md says (the next plangate writer or pass finishes its writes; fixed
    # 2026-12-01, r83mcpkill: before, the server held none)
    locks = [x for x in (".git/HEAD.lock", ".git/refs/heads/main.lock")
             if (lab.repo / x).exists()]  # fmt: skip
    for x in locks:
        (lab.repo / x).unlink()
    held = (lab.repo / ".git/index.lock").exists()
    return {
        "hit": hit, "ok": _ok(p.stdout.read()), "after_kill": _porcelain(lab), "locks": locks,
        "index_lock": held,
    }  # fmt: skip


def _careful(lab: Lab, vid: str, row: dict[str, Any], *add: str) -> None:
    """Alice's commit of her own plan (``add``: the paths she stages; none: ``commit -a``).
    Refused loudly while a killed writer's ``index.lock`` stands: she waits for the
    controller's next pass (docs/operations.md), then commits."""
    lab.set_status(f"y-{vid}", "approved")
    first = subprocess.run(
        ["git", *(["add", *add] if add else ["commit", "-q", "-a", "-m", f"approve y-{vid}"])],
        cwd=lab.repo, env=lab.env(ALICE), capture_output=True, text=True, check=False,
    )  # fmt: skip
    row["refused"] = first.returncode != 0 and "index.lock" in first.stderr
    if first.returncode != 0:
        assert row["refused"], first.stderr
        lab.run()  # the daemon's next pass finishes the killed writer's writes
    elif not add:
        return  # committed at once (no lock: the writes were done)
    row["before"] = lab.head()
    if add:
        lab.git("add", *add)
        lab.git("commit", "-q", "-m", f"approve y-{vid}", who=ALICE)
    else:
        lab.git("commit", "-q", "-a", "-m", f"approve y-{vid}", who=ALICE)


APV = ["apv-y", "apv-w"]


def _approve_killed(lab: Lab) -> dict[str, Any]:
    """(fixer's, r83mcpkill) The other writer of the shared tree: ``plangate approve
    plans/apv-y`` SIGKILLed the moment ``main`` moves (its commit on the branch, the tree
    and the index not yet written), then Alice's careful commit of ``plans/apv-w``."""
    ref = lab.repo / ".git" / "refs" / "heads" / "main"
    before = ref.read_text()
    lab.git("pack-refs", "--all")  # the loose ref is written fresh by the approve's move
    p = subprocess.Popen(
        [PLANGATE, "approve", "plans/apv-y", "--config", str(lab.config)],
        cwd=lab.repo, env=lab.env(ALICE), start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    end, hit = time.time() + 60, False
    while time.time() < end and p.poll() is None:
        if ref.exists() and ref.read_text() != before:
            os.killpg(p.pid, signal.SIGKILL)
            hit = True
            break
    p.wait()
    for x in (".git/HEAD.lock", ".git/refs/heads/main.lock"):
        (lab.repo / x).unlink(missing_ok=True)
    row: dict[str, Any] = {"hit": hit, "after_kill": _porcelain(lab)}
    row["index_lock"] = (lab.repo / ".git/index.lock").exists()
    lab.set_status("apv-w", "approved")
    first = subprocess.run(
        ["git", "add", "plans/apv-w/PLAN.yml"],
        cwd=lab.repo, env=lab.env(ALICE), capture_output=True, text=True, check=False,
    )  # fmt: skip
    row["refused"] = first.returncode != 0 and "index.lock" in first.stderr
    if first.returncode != 0:
        lab.run()  # the daemon's next pass finishes the killed approve's writes
    mark = lab.head()
    lab.git("add", "plans/apv-w/PLAN.yml")
    lab.git("commit", "-q", "-m", "approve apv-w", who=ALICE)
    row["alice"] = lab.git("diff", "--name-status", mark, "HEAD").splitlines()
    lab.run()
    row["clean"] = _porcelain(lab)
    row["ran"] = len(lab.calls("apv-y"))  # the approval kept: the plan ran, once
    return row


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent: {identity: {name: Agent, email: agent@example.com}}\n")
    for vid in VIDS:
        lab.write(f"y-{vid}", plan_text(f"y-{vid}"))
    for slug in APV:
        lab.write(slug, plan_text(slug))
    lab.commit("agent plans")
    lab.run()
    seen: dict[str, Any] = {}
    for vid in VIDS:
        slug, after = _slug(vid), vid.split("-")[1]
        if vid.startswith("ctl"):
            p = _mcp(lab, [_submit(slug)])
            p.wait(timeout=120)
            assert p.stdout is not None
            row = {"hit": False, "ok": _ok(p.stdout.read()), "after_kill": _porcelain(lab)}
        else:
            row = _kill_at(lab, vid)
        before = row["before"] = lab.head()
        if after == "commit":
            _careful(lab, vid, row, f"plans/y-{vid}/PLAN.yml")
            before = row["before"]
        elif after == "commita":
            _careful(lab, vid, row)
            before = row["before"]
        elif after == "mcpstart":
            p = _mcp(lab, [])  # a session that calls nothing: the start alone
            p.wait(timeout=120)
            row["started"] = _porcelain(lab)
            row["lock_after_start"] = (lab.repo / ".git/index.lock").exists()
        elif after == "approve":
            env = {**lab.env(ALICE), "REC_LOG": str(lab.log)}
            out = subprocess.run(
                [PLANGATE, "approve", f"plans/y-{vid}", "--config", str(lab.config)],
                cwd=lab.repo, env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            row["approve"] = (out.returncode, out.stderr[-600:])
        elif after == "resub":
            p = _mcp(lab, [_submit(slug)])
            p.wait(timeout=120)
            assert p.stdout is not None
            row["resub"] = p.stdout.read()[-800:]
        if after in ("commit", "commita", "approve"):
            row["alice"] = lab.git("diff", "--name-status", before, "HEAD").splitlines()
        lab.run()
        row["clean"] = _porcelain(lab)
        seen[vid] = row
    seen["apv"] = _approve_killed(lab)
    # RACE: two MCP servers and a pass at once
    lab.write("r0", plan_text("r0"))
    lab.commit("agent r0", AGENT, "plans/r0")
    env = {**lab.env(), "REC_LOG": str(lab.log)}
    procs = [_mcp(lab, [_submit(s) for s in RACE[:4]]), _mcp(lab, [_submit(s) for s in RACE[4:]])]
    run = subprocess.Popen(
        [PLANGATE, "run", "--once", "--config", str(lab.config)],
        cwd=lab.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    oks = 0
    for p in procs:
        p.wait(timeout=120)
        assert p.stdout is not None
        oks += _ok(p.stdout.read())
    run.wait(timeout=300)
    seen["race"] = {"ok": oks, "run": run.returncode, "clean": _porcelain(lab)}
    lab.run()
    # Alice approves every y- plan still pending; one pass runs them
    rows = lab.status()
    for vid in VIDS:
        if rows.get(f"plans/y-{vid}", {}).get("status") == "pending_approval":
            lab.set_status(f"y-{vid}", "approved")
            lab.git("add", f"plans/y-{vid}/PLAN.yml")
    lab.git("commit", "-q", "--allow-empty", "-m", "approve the rest", who=ALICE)
    lab.run()
    seen["subjects"] = lab.git("log", "--format=%s").splitlines()
    # a freeze of plans/r0, alone or batched with the plans that arrived with it (per-plan
    # ``Plan:`` trailers: "plangate: freeze <n> plans" under load)
    seen["r0_commits"] = lab.git("log", "--format=%s", "--grep=^Plan: plans/r0$").splitlines()
    seen["rows"] = {k: v.get("status") for k, v in lab.status().items()}
    seen["files"] = {
        vid: lab.git("show", f"HEAD:plans/{_slug(vid)}/PLAN.yml", check=False) for vid in VIDS
    }
    seen["race_files"] = {
        s: lab.git("show", f"HEAD:plans/{s}/PLAN.yml", check=False) for s in [*RACE, "r0"]
    }
    seen["calls"] = {vid: len(lab.calls(f"y-{vid}")) for vid in VIDS}
    seen["final_clean"] = _porcelain(lab)
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r83-mcpkill", _build)


def _x(what: str) -> Any:
    return pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason=f"round 83 runs: a killed MCP submit leaves a stale index: {what}",
    )


BROKEN: dict[str, Any] = {}
# fixed 2026-12-01 (r83mcpkill): ref-commit:kept, ref-commit:alice, file-commit:alice
KEPT_BROKEN: dict[str, Any] = {}
ALICE_BROKEN: dict[str, Any] = {}


def _window(lab: Lab, vid: str) -> None:
    """A killed variant judges the window it was built for: the branch moved, the index not
    (``D  plans/<slug>/PLAN.yml`` right after the kill); a kill that landed later (a loaded
    machine) says nothing either way."""
    row = lab.seen[vid]  # type: ignore[attr-defined]
    if vid.startswith("ctl"):
        return
    if f"D  plans/{_slug(vid)}/PLAN.yml" not in row["after_kill"]:
        pytest.skip(f"the kill missed the window: {row['after_kill']}")
    if vid.startswith("ref") and f"?? plans/{_slug(vid)}/" in row["after_kill"]:
        # the kill landed after the file was written too: the file case (adopted back)
        pytest.skip(f"the kill landed after the file was written: {row['after_kill']}")


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, {}))
def test_hit(lab: Lab, vid: str) -> None:
    """The bench: the kill landed before the answer (the control: answered)."""
    row = lab.seen[vid]  # type: ignore[attr-defined]
    assert row["hit"] is (not vid.startswith("ctl")), row
    if not vid.startswith("ctl") and row["ok"] == 1 and not row["after_kill"]:
        # a loaded machine: the writer finished and answered before the kill was delivered,
        # the tree clean (CI, 2026-12-01: ``ref-approve``); the window was missed, as
        # ``_window`` skips for the other checks, and nothing is left to judge
        pytest.skip(f"the kill landed after the answer: {row}")
    assert row["ok"] == (1 if vid.startswith("ctl") else 0), row


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, KEPT_BROKEN))
def test_kept(lab: Lab, vid: str) -> None:
    _window(lab, vid)
    seen = lab.seen  # type: ignore[attr-defined]
    assert f"attack variant {_slug(vid)}" in seen["files"][vid], seen[vid]
    assert seen["rows"].get(f"plans/{_slug(vid)}") == "pending_approval", seen[vid]


@pytest.mark.parametrize(
    "vid", cases([v for v in VIDS if "commit" in v or "approve" in v],
                 [v for v in VIDS if "commit" in v or "approve" in v], ALICE_BROKEN)
)  # fmt: skip
def test_alice(lab: Lab, vid: str) -> None:
    _window(lab, vid)
    row = lab.seen[vid]  # type: ignore[attr-defined]
    assert row["alice"] == [f"M\tplans/y-{vid}/PLAN.yml"], row


LOCKED = [v for v in KILLED if "commit" in v]


@pytest.mark.parametrize("vid", cases(LOCKED, LOCKED, {}))
def test_locked(lab: Lab, vid: str) -> None:
    """(fixer's, r83mcpkill) The window is the controller's: ``.git/index.lock`` held from
    before the branch moved, so Alice's first ``git add``/``git commit -a`` fails loudly
    ("index.lock ... File exists") instead of taking the older index."""
    _window(lab, vid)
    row = lab.seen[vid]  # type: ignore[attr-defined]
    assert row["index_lock"] and row["refused"], row


def test_mcpstart(lab: Lab) -> None:
    """(fixer's, r83mcpkill) The next ``plangate mcp`` start alone finishes a killed
    submit's writes: the working tree and the index hold the branch, the lock is gone."""
    vid = "ref-mcpstart"
    _window(lab, vid)
    row = lab.seen[vid]  # type: ignore[attr-defined]
    assert row["started"] == [] and not row["lock_after_start"], row


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_clean(lab: Lab, vid: str) -> None:
    row = lab.seen[vid]  # type: ignore[attr-defined]
    assert row["clean"] == [], row


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, {}))
def test_once(lab: Lab, vid: str) -> None:
    subjects = lab.seen["subjects"]  # type: ignore[attr-defined]
    assert subjects.count(f"Submit plan plans/{_slug(vid)}") == 1, subjects[:40]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, {}))
def test_yran(lab: Lab, vid: str) -> None:
    assert lab.seen["calls"][vid] == 1, lab.seen[vid]  # type: ignore[attr-defined]


@pytest.mark.parametrize("what", ["answers", "branch", "clean", "frozen"])
def test_race(lab: Lab, what: str) -> None:
    seen = lab.seen  # type: ignore[attr-defined]
    race = seen["race"]
    if what == "answers":
        assert race["ok"] == len(RACE) and race["run"] == 0, race
    elif what == "branch":
        for s in RACE:
            assert seen["subjects"].count(f"Submit plan plans/{s}") == 1, s
            assert f"attack variant {s}" in seen["race_files"][s], s
    elif what == "clean":
        assert race["clean"] == [] and seen["final_clean"] == [], race
    else:
        freezes = [s for s in seen["r0_commits"] if s.startswith("plangate: freeze ")]
        assert freezes, (seen["r0_commits"], seen["subjects"][:40])
        assert all(seen["rows"].get(f"plans/{s}") == "pending_approval" for s in RACE), seen


@pytest.mark.parametrize("what", ["alice", "kept", "locked", "clean"])
def test_approve_killed(lab: Lab, what: str) -> None:
    """(fixer's, r83mcpkill) ``plangate approve`` shares the submit's writer: killed after
    its commit, Alice's careful commit is refused until the pass finishes the writes, then
    changes her file alone; the approval stays on the branch (the plan runs once)."""
    row = lab.seen["apv"]  # type: ignore[attr-defined]
    if "M  plans/apv-y/PLAN.yml" not in row["after_kill"]:
        pytest.skip(f"the kill missed the window: {row['after_kill']}")
    if what == "alice":
        assert row["alice"] == ["M\tplans/apv-w/PLAN.yml"], row
    elif what == "kept":
        assert row["ran"] == 1, row
    elif what == "locked":
        assert row["index_lock"] and row["refused"], row
    else:
        assert row["clean"] == [], row
