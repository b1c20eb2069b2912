"""The daemon: reaction time, idle cost and footprint of the real ``plangate run`` process.

1. Local mode on a repo of 50,000 commits holding 10,000 frozen plans: from an approving
   ``git commit`` to the first action's start (median, p99 over 100 approvals; targets 50 ms
   and 200 ms). Floor: that ``git commit`` itself (same change, same run).
2. Remote mode with the webhook: from ``git push`` to the first action's start (median over
   20 pushes; target 500 ms). Floor: the ``git push`` itself.
3. Idle: CPU seconds of the daemon over 60 s on the big repo against a bare watchdog
   observer watching the same folders (ratio; target <= 1.5x).
4. RSS of the daemon with 10,000 plans after its first pass (target <= 100 MB).

The cold start includes, once per state directory, the import of the repository into the
controller's own object store (a ``git fetch``; reported beside it); an approval by a human's
commit includes the fetch of that commit.

The action start is the engine's ``action_started`` log event (JSON, microsecond UTC
timestamps) read from the daemon's stderr. ``--quick``: a small repo and short windows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
from _common import median, p99, profiler, report, stop_profiler  # noqa: E402

from controller.plan import plans  # noqa: E402
from controller.service.webhook import github_signature  # noqa: E402
from tests.support.daemonkit import free_port, git_daemon  # noqa: E402
from tests.support.daemonproc import DaemonProcess, cpu_seconds  # noqa: E402
from tests.support.fastimport import FastImport  # noqa: E402
from tests.support.fastimport import build_repo as build_git_repo  # noqa: E402
from tests.support.gitenv import AGENT, ALICE, git  # noqa: E402
from tests.support.gitenv import identity as who  # noqa: E402
from tests.support.plantext import greet_plan  # noqa: E402

SECRET = "bench-secret"
#: ``--profile DIR``: py-spy records the daemon over the approvals (see ``_common.profiler``)
PROFILE: Path | None = None


def frozen_plan(name: str) -> bytes:
    text = greet_plan(name, f"benchmark plan {name}", f'"{name}"')
    loaded = plans.validate_text(text, Path(f"plans/{name}/PLAN.yml"))
    return plans.freeze_text(loaded, "2026-01-01T00:00:00Z").text.encode()


# --- building the repository with git fast-import -------------------------------------------


def fast_import_stream(commits: int, plan_names: list[str], per_commit: int = 100) -> FastImport:
    """``commits`` commits of a counter file, then the plans, ``per_commit`` to a commit."""
    stream = FastImport()
    for i in range(commits):
        stream.commit(("Dev", "dev@example.com"), f"change {i}", {"history/counter.txt": f"{i}\n"})
    for start in range(0, len(plan_names), per_commit):
        batch = plan_names[start : start + per_commit]
        files = {f"plans/{n}/PLAN.yml": frozen_plan(n) for n in batch}
        stream.commit(AGENT, f"agent proposes {len(batch)} plans", files)
    return stream


def build_repo(path: Path, commits: int, plan_names: list[str]) -> float:
    start = time.perf_counter()
    build_git_repo(path, fast_import_stream(commits, plan_names))
    return time.perf_counter() - start


def write_config(folder: Path, body: str) -> Path:
    config = folder / "plangate.yml"
    config.write_text(textwrap.dedent(body))
    return config


def event_time(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(event["timestamp"]).replace("Z", "+00:00")).timestamp()


def is_start_of(plan_id: str) -> Any:
    return lambda e: e.get("event") == "action_started" and e.get("plan") == plan_id


def is_end_of(plan_id: str) -> Any:
    return lambda e: e.get("event") == "plan_outcome" and e.get("plan") == plan_id


def approve(repo: Path, name: str) -> None:
    path = repo / "plans" / name / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))


# --- 1. local mode: approving commit -> first action ----------------------------------------


#: ``--policy``: a rule that matches every plan and needs one approver from a group, so each
#: approval goes through the whole §11 path (profile, rule, quorum tally, trailer lookup).
POLICY = """\
        approval:
          approvers: ["{alice}"]
          groups: {{ops: ["{alice}"]}}
          rules: [{{match: {{risk: low}}, require: [{{group: ops, count: 1}}]}}]
        tools: {{greet: {{kind: echo, risk: medium, estimate: {{seconds: 1}}}}}}
"""


def bench_local(
    work: Path,
    commits: int,
    n_plans: int,
    approvals: int,
    idle_s: float,
    *,
    policy: bool = False,
    label: str = "local",
) -> tuple[float, float]:
    """Returns the medians of approval -> first action and of the approving pass's decision
    (pass start -> plan handed to a worker)."""
    repo = work / label / "repo"
    names = [f"bench-{i:03d}" for i in range(approvals)] + [f"p{i:05d}" for i in range(n_plans)]
    built = build_repo(repo, commits, names)
    print(
        f"repo: {commits} commits + {len(names)} frozen plans, built in {built:.1f} s", flush=True
    )
    rules = (
        POLICY.format(alice=ALICE[1])
        if policy
        else (
            f"""\
        approval: {{approvers: ["{ALICE[1]}"]}}
        tools: {{greet: {{kind: echo}}}}
        """
        )
    )
    config = write_config(repo.parent, f"        repo: {repo}\n" + rules)
    started = time.perf_counter()
    daemon = DaemonProcess(config)
    try:
        daemon.wait_for(lambda e: e.get("event") == "reconcile.done", 600)
        report(
            "cold start (first pass, 50k commits)" if commits >= 50_000 else "cold start",
            time.perf_counter() - started,
        )
        report("  of which, once: git fetch into an empty store", import_time(repo, work))
        rss, hwm = daemon.rss_mb()
        print(
            f"{'RSS after first pass, ' + str(len(names)) + ' plans':<48} {rss:9.1f} MB"
            f"   target <= 100 MB  {'OK' if rss <= 100 else 'OVER'}   (peak {hwm:.1f} MB)",
            flush=True,
        )
        latencies, with_commit, commit_times = [], [], []
        parts: dict[str, list[float]] = {"wait": [], "pass": [], "engine": []}
        spy = profiler(daemon, PROFILE and PROFILE / f"approvals-{label}.txt")
        for name in names[:approvals]:
            approve(repo, name)
            mark = len(daemon.seen)
            path = f"plans/{name}/PLAN.yml"
            t0 = time.time()
            git(repo, "commit", "-q", "-m", f"approve {name}", "--", path, env=who(*ALICE))
            t1 = time.time()
            commit_times.append(t1 - t0)
            plan_id = f"plans/{name}"
            start = event_time(daemon.wait_for(is_start_of(plan_id), 60))
            latencies.append(start - t1)  # from the approving commit's existence
            with_commit.append(start - t0)  # ...and from the moment `git commit` was started
            daemon.wait_for(is_end_of(plan_id), 60)
            if approving_pass(daemon.seen[mark:]) is None:
                daemon.wait_for(is_busy_pass_end, 60)  # the approving pass logs its end last
            breakdown(daemon.seen[mark:], t1, start, parts)
            wait_clean(repo)
        stop_profiler(spy)
        floor = ("bare git commit", median(commit_times))
        report("bare git commit of the approval (median)", median(commit_times))
        report(f"approval -> first action, median of {approvals}", median(latencies), 0.050, floor)
        report(f"approval -> first action, p99 of {approvals}", p99(latencies), 0.200, floor)
        report("  same, counted from `git commit` started (median)", median(with_commit))
        if parts["pass"]:
            report("  of which: commit done -> approving pass starts", median(parts["wait"]))
            report("  of which: pass start -> plan handed to a worker", median(parts["pass"]))
            report("  of which: worker -> first action (engine)", median(parts["engine"]))
        if idle_s:
            bench_idle(daemon, repo, idle_s)
    finally:
        daemon.stop()
    return median(latencies), median(parts["pass"]) if parts["pass"] else 0.0


def import_time(repo: Path, work: Path) -> float:
    """What the first start spends importing the repository into the controller's own object
    store (controller/git/store.py): the same ``git fetch`` into an empty bare repository."""
    store = work / "import-probe.git"
    git(work, "init", "-q", "--bare", str(store))
    started = time.perf_counter()
    git(work, "--git-dir", str(store), "fetch", "-q", "--no-tags", str(repo / ".git"),
        "+refs/heads/main:refs/heads/main")  # fmt: skip
    took = time.perf_counter() - started
    shutil.rmtree(store)
    return took


def bench_policy(work: Path, commits: int, n_plans: int, approvals: int) -> None:
    """Policy evaluation's cost: the same approvals under the default policy (the floor) and
    under a rule with a group, on identical repos, one after the other."""
    print("\n== approval -> first action: default policy (floor), then a group rule", flush=True)
    plain, plain_pass = bench_local(work, commits, n_plans, approvals, 0, label="plain")
    ruled, ruled_pass = bench_local(
        work, commits, n_plans, approvals, 0, policy=True, label="policy"
    )
    report("policy: approval -> first action, median", ruled, None, ("default policy", plain))
    print(
        f"{'policy adds (median approval -> first action)':<48} {1000 * (ruled - plain):9.1f} ms"
        f"   target <= 5 ms  {'OK' if ruled - plain <= 0.005 else 'OVER'}",
        flush=True,
    )
    print(
        f"{'policy adds (median decision inside the pass)':<48} "
        f"{1000 * (ruled_pass - plain_pass):9.1f} ms",
        flush=True,
    )


def is_busy_pass_end(event: dict[str, Any]) -> bool:
    return event.get("event") == "reconcile.done" and bool(event.get("jobs"))


def approving_pass(events: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The hand-off (``plan_started``) and the end of the pass that made it: the first busy
    pass to end after the hand-off. A pass hands its plans over mid-pass, and the previous
    approval's pass may still be logging its end when this one's events start."""
    at = next((i for i, e in enumerate(events) if e.get("event") == "plan_started"), None)
    if at is None:
        return None
    end = next((e for e in events[at:] if is_busy_pass_end(e)), None)
    return None if end is None else (events[at], end)


def breakdown(
    events: list[dict[str, Any]], committed: float, start: float, parts: dict[str, list[float]]
) -> None:
    """Split one latency at the approving pass: its start (``reconcile.done`` minus its
    duration) and the moment it handed the plan to a worker (``plan_started``)."""
    found = approving_pass(events)
    if found is None:
        return
    handoff, end = found
    begin = event_time(end) - float(end.get("ms", 0)) / 1000
    handed = event_time(handoff)
    parts["wait"].append(begin - committed)
    parts["pass"].append(handed - begin)
    parts["engine"].append(start - handed)


def wait_clean(repo: Path) -> None:
    deadline = time.monotonic() + 30
    while git(repo, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"):
        if time.monotonic() > deadline:
            raise SystemExit("the working tree did not settle")
        time.sleep(0.005)


# --- 3. idle CPU against a bare observer -----------------------------------------------------

OBSERVER = """\
import sys, time
from watchdog.observers import Observer
from watchdog.events import FileSystemEventHandler
from controller.service.watcher import PLAN_EVENTS, REF_EVENTS
repo = sys.argv[1]
o = Observer()
h = FileSystemEventHandler()
o.schedule(h, repo + "/plans", recursive=True, event_filter=PLAN_EVENTS)
o.schedule(h, repo + "/.git", recursive=False, event_filter=REF_EVENTS)
o.schedule(h, repo + "/.git/refs", recursive=True, event_filter=REF_EVENTS)
o.start()
print("ready", flush=True)
while True:
    time.sleep(3600)
"""


def bench_idle(daemon: DaemonProcess, repo: Path, seconds: float) -> None:
    observer = subprocess.Popen(
        [sys.executable, "-c", OBSERVER, str(repo)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert observer.stdout is not None
        observer.stdout.readline()
        time.sleep(1.0)  # let both settle after the last commit
        d0, o0 = daemon.cpu_seconds(), cpu_seconds(observer.pid)
        time.sleep(seconds)
        d1, o1 = daemon.cpu_seconds(), cpu_seconds(observer.pid)
    finally:
        observer.kill()
        observer.wait()
    daemon_cpu, observer_cpu = d1 - d0, o1 - o0
    # CPU time in ns from schedstat: both are exactly 0 when every thread stays blocked.
    if daemon_cpu == observer_cpu == 0:
        ratio = "n/a (both 0 ns)"
    else:
        ratio = f"{daemon_cpu / max(observer_cpu, 1e-9):.2f}x"
    ok = daemon_cpu <= 1.5 * observer_cpu or daemon_cpu < 0.005
    print(
        f"{f'idle CPU over {seconds:.0f} s: daemon':<48} {daemon_cpu * 1e3:9.3f} ms"
        f"   bare observer {observer_cpu * 1e3:.3f} ms   ratio {ratio}"
        f"   target <= 1.5x  {'OK' if ok else 'OVER'}",
        flush=True,
    )


# --- 2. remote mode with the webhook ---------------------------------------------------------


def bench_remote(work: Path, pushes: int) -> None:
    base = work / "remote"
    srv = base / "srv"
    seed = base / "seed"
    names = [f"hook-{i:03d}" for i in range(pushes)]
    build_repo(seed, 10, names)
    git(base, "clone", "-q", "--bare", str(seed), str(srv / "plans.git"))
    with git_daemon(srv) as served:
        bench_pushes(base, f"{served}/plans.git", free_port(), names)


def bench_pushes(base: Path, url: str, hook_port: int, names: list[str]) -> None:
    """Approve each plan with a push and a webhook call; report push -> first action."""
    import httpx

    daemon = None
    try:
        work_clone = base / "work"
        git(base, "clone", "-q", url, str(work_clone))
        config = write_config(
            base,
            f"""\
            remote: {{url: "{url}", branch: main, poll_interval: 3600}}
            state_dir: {base / "state"}
            approval: {{approvers: ["{ALICE[1]}"]}}
            tools: {{greet: {{kind: echo}}}}
            webhook: {{listen: "127.0.0.1:{hook_port}"}}
            """,
        )
        daemon = DaemonProcess(config, env={"PLANGATE_WEBHOOK_SECRET": SECRET})
        daemon.wait_for(lambda e: e.get("event") == "reconcile.done", 120)
        hook = f"http://127.0.0.1:{hook_port}/webhook"
        body = b'{"ref": "refs/heads/main"}'
        headers = {
            "X-GitHub-Event": "push",
            "Content-Type": "application/json",
            "X-Hub-Signature-256": github_signature(SECRET.encode(), body),
        }
        latencies, push_times = [], []
        with httpx.Client() as client:
            for name in names:
                git(work_clone, "pull", "-q", "--ff-only", "origin", "main", env=who(*ALICE))
                approve(work_clone, name)
                git(work_clone, "commit", "-q", "-am", f"approve {name}", env=who(*ALICE))
                t0 = time.time()
                git(work_clone, "push", "-q", "origin", "main")
                push_times.append(time.time() - t0)
                client.post(hook, content=body, headers=headers)  # what the forge does next
                plan_id = f"plans/{name}"
                latencies.append(event_time(daemon.wait_for(is_start_of(plan_id), 60)) - t0)
                daemon.wait_for(is_end_of(plan_id), 60)
        floor = ("bare git push", median(push_times))
        report("bare git push of the approval (median)", median(push_times))
        report(
            f"push + webhook -> first action, median of {len(names)}", median(latencies), 0.5, floor
        )
    finally:
        if daemon is not None:
            daemon.stop()


def bench_rss(work: Path, commits: int, n_plans: int, prebuilt: Path | None = None) -> None:
    """Cold start and footprint of the daemon on a repo holding ``n_plans`` frozen plans
    (``prebuilt``: a copy of that repo, built once by an earlier run with ``--keep``)."""
    repo = work / "rss" / "repo"
    if prebuilt is not None:
        shutil.copytree(prebuilt, repo, symlinks=True)
        built = 0.0
    else:
        built = build_repo(repo, commits, [f"p{i:05d}" for i in range(n_plans)])
    print(f"repo: {commits} commits + {n_plans} frozen plans, built in {built:.1f} s", flush=True)
    config = write_config(
        repo.parent,
        f"        repo: {repo}\n"
        f"""        approval: {{approvers: ["{ALICE[1]}"]}}\n"""
        "        tools: {greet: {kind: echo}}\n",
    )
    started = time.perf_counter()
    daemon = DaemonProcess(config)
    try:
        daemon.wait_for(lambda e: e.get("event") == "reconcile.done", 900)
        report(f"cold start, {n_plans} plans", time.perf_counter() - started, 10.0)
        rss, hwm = daemon.rss_mb()
        print(
            f"{'RSS after first pass, ' + str(n_plans) + ' plans':<48} {rss:9.1f} MB"
            f"   target <= 150 MB  {'OK' if rss <= 150 else 'OVER'}"
            f"   peak {hwm:.1f} MB   target <= 200 MB  {'OK' if hwm <= 200 else 'OVER'}",
            flush=True,
        )
    finally:
        daemon.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small repo, short windows")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs)")
    parser.add_argument(
        "--policy", action="store_true", help="only: what the approval policy adds (SPEC §11)"
    )
    parser.add_argument(
        "--rss-plans",
        type=int,
        metavar="N",
        help="only: cold start and RSS of the daemon on 50,000 commits holding N plans "
        "(issue 17: 50,000 plans, <= 150 MB after the first pass, <= 200 MB peak)",
    )
    parser.add_argument(
        "--prebuilt", type=Path, help="with --rss-plans: copy this repo instead of building one"
    )
    parser.add_argument(
        "--profile", type=Path, metavar="DIR", help="py-spy the daemon over the approvals"
    )
    args = parser.parse_args()
    global PROFILE
    PROFILE = args.profile
    if args.quick:
        commits, n_plans, approvals, idle_s, pushes = 2_000, 500, 10, 5.0, 5
    else:
        commits, n_plans, approvals, idle_s, pushes = 50_000, 10_000, 100, 60.0, 20
    work = Path(tempfile.mkdtemp(prefix="plangate-bench-daemon-"))
    home = work / "home"
    home.mkdir()
    os.environ.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=str(home / "gc"))
    (home / "gc").write_text("[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n")
    try:
        if args.policy:
            bench_policy(work, commits, n_plans, max(approvals, 30))
            return 0
        if args.rss_plans:
            bench_rss(work, commits, args.rss_plans, args.prebuilt)
            return 0
        bench_local(work, commits, n_plans, approvals, idle_s)
        bench_remote(work, pushes)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
