"""The burst labs of rounds 65-66 (many plans through one pass or one daemon, and what a
forged record, a SIGKILL or a restored state directory does to them), played here.

A lab dates its commits and passes on a clock of its own that moves 10 s a step
(:func:`date_steps`); its agent's plans are one-action ``rec`` plans and two-action ones
(:func:`gated`: the second behind ``requires_approval``; :func:`two`). A record that only
looks like the controller's is committed under its name (:func:`bot_commit`, a batched
message from :func:`batch_message`). The daemon of part B runs in a session of its own
(:func:`daemon`) until it has made enough calls (:meth:`Daemon.wait_for_calls`), then is
killed; :meth:`Daemon.ran` names what ran by then. A
module keeps its variants, its story, its ``BROKEN`` entries and its assertions;
:func:`status_row` and :func:`findings_of` read the reports for them.

The crash labs of rounds 67-68 (:func:`crash_lab`) have a ``crash`` tool that SIGKILLs the
pass running it (:func:`crashed_pass`), once, mid-plan (:func:`three`); the agent then
commits look-alike ends on an index of its own (:func:`agent_index`, :func:`set_committed`,
the groups of :func:`event_group`) and puts its tree back (:func:`own_index`). A second
controller reads the same repo with a state directory of its own (:func:`second_config`);
every lab ends audited by its config and by a clone (:func:`audited`, :func:`new_runs`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from advkit import ALICE, BOT, BenchError, Lab, clone_audit, plan_text, valid_runs

#: The ``crash`` tool: the first call SIGKILLs the pass (its pid in ``<marks>/pid``) and
#: marks ``<marks>/killed`` with its argument; every later call just answers.
CRASH = """\
import json, os, pathlib, signal, sys
marks = pathlib.Path(sys.argv[1])
if not (marks / "killed").exists():
    (marks / "killed").write_text(sys.argv[2])
    os.killpg(int((marks / "pid").read_text()), signal.SIGKILL)
print(json.dumps({"ok": True}))
"""


#: The ``boom`` tool of rounds 70-71's crash labs: each call appends its argument to the
#: lab's ``ran.log`` (fsynced), and the first one SIGKILLs the pass (its parent) after
#: marking ``<root>/mark``; every later call just answers.
BOOM_PY = """\
import json, os, signal, sys
log, mark = sys.argv[2], sys.argv[3]
with open(log, "a") as f:
    f.write(json.dumps({"argv": [sys.argv[1]]}) + "\\n")
    f.flush()
    os.fsync(f.fileno())
if not os.path.exists(mark):
    open(mark, "w").close()
    os.kill(os.getppid(), signal.SIGKILL)
print("{}")
"""


def boom_plan(tag: str) -> str:
    """The agent's plan ``tag``: one ``boom`` call tagged ``tag``."""
    return (
        f'plan:\n  name: "{tag}"\n  task: "boom {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: boom\nactions:\n"
        f'  - id: 1\n    tool: boom\n    why: "call boom"\n    params: {{tag: "{tag}"}}\n'
    )


def boom_lab(root: Path) -> Lab:
    """A lab in ``root/lab`` whose catalog has the ``boom`` tool (:data:`BOOM_PY`)."""
    script = root / "boom.py"
    script.write_text(BOOM_PY)
    argv = [sys.executable, str(script), "{tag}", str(root / "lab" / "ran.log"), str(root / "mark")]
    return Lab(root / "lab", tools="boom: {kind: exec, argv: " + json.dumps(argv) + "}\n")


def gated(tag: str) -> str:
    """The agent's plan ``tag``: ``rec`` tagged ``<tag>-1``, then ``<tag>-2`` (target
    ``staging``) behind ``requires_approval``."""
    return gated_as(tag, tag)


def gated_as(tag: str, name: str) -> str:
    """:func:`gated` under the plan name ``name`` (a recurring plan's next version)."""
    return (
        f'plan:\n  name: "{name}"\n  task: "agent task {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n"
        f'  - id: 1\n    tool: rec\n    why: "first {tag}"\n    params: {{tag: "{tag}-1"}}\n'
        f'  - id: 2\n    tool: rec\n    why: "second {tag}"\n    requires_approval: true\n'
        f'    params: {{tag: "{tag}-2", target: "staging"}}\n'
    )


def two(tag: str) -> str:
    """The agent's plan ``tag``: ``rec`` tagged ``<tag>-1``, then ``<tag>-2``, no gate."""
    return (
        f'plan:\n  name: "{tag}"\n  task: "agent task {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n"
        f'  - id: 1\n    tool: rec\n    why: "first {tag}"\n    params: {{tag: "{tag}-1"}}\n'
        f'  - id: 2\n    tool: rec\n    why: "second {tag}"\n    params: {{tag: "{tag}-2"}}\n'
    )


def date_steps(lab: Lab, start: int) -> Callable[[], None]:
    """A step of the lab's clock: each call moves it (from ``start``, epoch seconds) 10 s on
    and dates the lab's commits and passes by it (``lab.git_date``)."""
    t = start

    def date() -> None:
        nonlocal t
        t += 10
        lab.git_date = f"@{t} +0000"

    return date


def clock(lab: Lab) -> int:
    """The epoch second the lab's commits are dated by now (set by :func:`date_steps`)."""
    if lab.git_date is None:
        raise BenchError("the lab is not on a clock of its own")
    return int(lab.git_date.split()[0].lstrip("@"))


def batch_message(groups: list[tuple[str, str, str]]) -> str:
    """A batched commit message as the controller writes one: a group per ``(slug, event,
    status)`` (an ``abort`` claims Alice as its aborter), then a ``Controller:`` trailer."""
    body = f"plangate: {len(groups)} plan events\n\n"
    for slug, event, status in groups:
        body += f"Plan: plans/{slug}\nPlan-Event: {event}\nPlan-Status: {status}\n"
        if event == "abort":
            body += "Aborted-By: alice@example.com\n"
    return body + "Controller: host/3f2a9c1b\n"


def bot_commit(lab: Lab, message: str) -> str:
    """Everything in the tree committed under the controller's name (author and committer
    :data:`advkit.BOT`), by someone who is not the controller: the new tip."""
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", message, who=BOT)
    return lab.head()


def log_lines(lab: Lab) -> int:
    """How many calls the recording tool's log holds."""
    return len(lab.log.read_text().splitlines())


class Daemon:
    """A daemon's run over a lab (:func:`daemon`): its process, and the calls the recording
    tool's log held when it started (``before``)."""

    def __init__(self, lab: Lab, before: int, proc: subprocess.Popen[bytes]) -> None:
        self.lab = lab
        self.before = before
        self.proc = proc

    def wait_for_calls(self, count: int, seconds: float) -> None:
        """Until it has made ``count`` calls, or ``seconds`` have passed."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if log_lines(self.lab) >= self.before + count:
                break
            time.sleep(0.01)

    def ran(self) -> list[str]:
        """The tags of the calls recorded since it started."""
        lines = self.lab.log.read_text().splitlines()[self.before :]
        return [json.loads(x)["argv"][0] for x in lines]


def _controller(lab: Lab, cwd: Path, *flags: str) -> subprocess.Popen[bytes]:
    """``plangate run --config`` (the lab's; ``flags`` after it) in ``cwd``, in a session of
    its own, its calls recorded in the lab's log and its output dropped."""
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    argv = [sys.executable, "-m", "controller", "run", "--config", str(lab.config), *flags]
    return subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@contextlib.contextmanager
def daemon(lab: Lab, cwd: Path) -> Iterator[Daemon]:
    """``plangate run --config`` (the lab's) as a daemon in a session of its own, in
    ``cwd``; killed (SIGKILL, mid-burst as a crash) after."""
    before = log_lines(lab)
    proc = _controller(lab, cwd)
    try:
        yield Daemon(lab, before, proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def status_row(text: str, slug: str) -> dict[str, Any]:
    """The row of ``plans/<slug>`` in ``plangate status --json`` output ``text`` (or ``{}``)."""
    rows = {r["plan"]: r for r in json.loads(text)}
    return rows.get(f"plans/{slug}") or {}


def findings_of(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    """The findings of ``plans/<slug>`` in a ``plangate audit --json`` report."""
    return [f for f in report.get("findings", []) if f.get("plan") == f"plans/{slug}"]


def three(tag: str) -> str:
    """The agent's plan ``tag``: ``rec`` tagged ``<tag>-1``, ``crash`` (argument ``tag``),
    ``rec`` tagged ``<tag>-3``."""
    return (
        f'plan:\n  name: "{tag}"\n  task: "agent task {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n  - name: crash\nactions:\n"
        f'  - id: 1\n    tool: rec\n    why: "one {tag}"\n    params: {{tag: "{tag}-1"}}\n'
        f'  - id: 2\n    tool: crash\n    why: "two {tag}"\n    params: {{m: "{tag}"}}\n'
        f'  - id: 3\n    tool: rec\n    why: "three {tag}"\n    params: {{tag: "{tag}-3"}}\n'
    )


def event_group(slug: str, event: str, status: str, extra: str = "") -> str:
    """One plan's group of trailers in a controller-like commit message (``extra`` lines
    after its status)."""
    return f"Plan: plans/{slug}\nPlan-Event: {event}\nPlan-Status: {status}\n{extra}"


def set_committed(lab: Lab, slug: str, status: str, replace: tuple[str, str] | None = None) -> None:
    """``plans/<slug>/PLAN.yml`` as committed at HEAD with its ``plan.status`` set to
    ``status`` (and ``replace`` applied), written and staged."""
    text = lab.git("show", f"HEAD:plans/{slug}/PLAN.yml")
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("  status:") and i < 6:
            lines[i] = f"  status: {status}"
            break
    text = "\n".join(lines)
    if replace:
        text = text.replace(*replace)
    lab.write(slug, text)
    lab.git("add", f"plans/{slug}/PLAN.yml")


def crash_lab(root: Path) -> tuple[Lab, Path]:
    """A lab in ``root/lab`` with the :data:`CRASH` tool ``crash`` (idempotent, 60 s), and
    the folder of its marks."""
    marks = root / "marks"
    marks.mkdir(parents=True)
    (root / "crash.py").write_text(CRASH)
    argv = json.dumps([sys.executable, str(root / "crash.py"), str(marks), "{m}"])
    lab = Lab(
        root / "lab",
        tools=f"crash: {{kind: exec, argv: {argv}, idempotent: true, timeout: 60}}\n",
    )
    return lab, marks


def crashed_pass(lab: Lab, marks: Path) -> list[str]:
    """``plangate run --once`` in a session of its own, which the ``crash`` tool kills: the
    tags of the calls recorded by then (a :class:`BenchError` when it was not killed)."""
    proc = _controller(lab, lab.root, "--once")
    (marks / "pid").write_text(str(proc.pid))
    try:
        proc.wait(120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if proc.returncode != -signal.SIGKILL:
        raise BenchError(f"the pass was not killed: {proc.returncode}")
    return [json.loads(x)["argv"][0] for x in lab.log.read_text().splitlines()]


def agent_index(lab: Lab, root: Path) -> None:
    """The lab's git on an index of the agent's own (``root/agent-index``, read from HEAD),
    the killed pass's stale ref locks gone."""
    lab.extra_env = {"GIT_INDEX_FILE": str(root / "agent-index")}  # type: ignore[attr-defined]
    git_dir = lab.repo / ".git"  # and HEAD.lock: a kill mid-commit leaves it too
    for stale in [*(git_dir / "refs" / "heads").glob("*.lock"), *git_dir.glob("*.lock")]:
        if stale.name != "index.lock":  # the agent commits through its own index
            stale.unlink()
    lab.git("read-tree", "HEAD")


def own_index(lab: Lab) -> None:
    """The agent's tree as it committed it, and the lab's git on its own index again."""
    lab.git("checkout-index", "-a", "-f")
    lab.extra_env = {}  # type: ignore[attr-defined]


def second_config(lab: Lab, root: Path) -> Path:
    """``root/b.yml``: the lab's config with a state directory of its own (``root/B``), a
    second controller over the same repo (kept as ``lab.cfg_b``)."""
    cfg_b = root / "b.yml"
    cfg_b.write_text(
        lab.config.read_text().replace(f"state_dir: {lab.state}", f"state_dir: {root / 'B'}")
    )
    lab.cfg_b = cfg_b  # type: ignore[attr-defined]
    return cfg_b


def audited(lab: Lab, root: Path) -> Lab:
    """The lab, undated, with ``plangate audit --config``'s report (``lab.creport``) and a
    clone's (``lab.report``, ``lab.valid``: :func:`advkit.clone_audit` in ``root``)."""
    lab.git_date = None
    _code, lab.creport = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.report, lab.valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


def new_runs(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    """The valid runs of ``plans/<slug>`` in an audit report that a new approval started."""
    return [e for e in valid_runs(report, slug) if e.get("approval_kind") == "approve"]


# -- rounds 68-70: what the labs count, read and forge (the burst and key labs) -----------------
#: The columns of a ``plangate status --json`` row the burst labs keep.
ROW_KEYS = ("status", "waiting", "last_event")


def counts(lab: Lab, tags: Iterable[str]) -> dict[str, int]:
    """How many times ``rec`` ran with each of ``tags``."""
    return {t: len(lab.calls(t)) for t in tags}


def grown(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    """The counts of ``after`` that moved since ``before``, by how much."""
    return {k: after[k] - before[k] for k in after if after[k] != before[k]}


def slug_rows(listed: Any, keys: Iterable[str] = ROW_KEYS) -> dict[str, dict[str, Any]]:
    """``plangate status --json`` rows by slug (``plans/`` cut off), each with ``keys`` only."""
    return {
        r["plan"][len("plans/") :]: {k: r.get(k) for k in keys}
        for r in listed
        if isinstance(r, dict)
    }


def status_rows(lab: Lab, keys: Iterable[str] = ROW_KEYS) -> dict[str, dict[str, Any]]:
    """``plangate status --json`` (the lab's config) by slug, each row with ``keys`` only."""
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return slug_rows(json.loads(out), keys)


def rows_of(out: str) -> dict[str, dict[str, Any]]:
    """:func:`slug_rows` of a ``status --json`` output that may not be JSON (``{}`` then)."""
    try:
        listed = json.loads(out)
    except ValueError:
        return {}
    return slug_rows(listed)


def try_cli(lab: Lab, *args: str, limit: float = 20) -> tuple[int, str, str]:
    """``plangate <args> --config`` (the lab's) killed after ``limit`` seconds: exit code,
    stdout, stderr; ``-999`` and why when it hung or raised (a reader blocked on a key)."""
    try:
        res = lab.cli(*args, "--config", str(lab.config), timeout=limit)
    except Exception as why:
        return -999, "", f"HUNG/raised: {type(why).__name__}: {why}"[-600:]
    return res.returncode, res.stdout, res.stderr


def review_merge(
    lab: Lab, slugs: Iterable[str], date: Callable[[], None], message: str = "approve the burst"
) -> None:
    """Alice approves ``slugs`` on her review branch ``alice/review``, merged ``--no-ff`` into
    main by her a step of the lab's clock (``date``) later."""
    lab.git("checkout", "-q", "-b", "alice/review")
    for v in slugs:
        lab.set_status(v, "approved")
    lab.commit(message, ALICE)
    lab.git("checkout", "-q", "main")
    date()
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice/review", "alice/review", who=ALICE)


def bot_rows(lab: Lab) -> list[list[str]]:
    """The :meth:`Lab.log_rows` of commits authored under the controller's name."""
    return [r for r in lab.log_rows() if r[2] == BOT[1]]


def forge(lab: Lab, message: str) -> str:
    """What is staged (maybe nothing) committed under the controller's name by someone who is
    not the controller: the new tip."""
    lab.git("commit", "-q", "--allow-empty", "-m", message, who=BOT)
    return lab.head()


def save_out(lab: Lab, root: Path, names: Iterable[str]) -> None:
    """The lab's attributes ``names`` as ``root/out.json``, for a reader after the run."""
    out = {k: getattr(lab, k) for k in names}
    (root / "out.json").write_text(json.dumps(out, indent=1, default=str))


def back_to(lab: Lab, tip: str, state: Path) -> None:
    """main reset to ``tip`` and the state directory replaced by a copy of ``state``."""
    lab.git("reset", "-q", "--hard", tip)
    shutil.rmtree(lab.state)
    shutil.copytree(state, lab.state, symlinks=True)


def approved_plans(
    lab: Lab, date: Callable[[], None], plans: dict[str, str], approve: Iterable[str], message: str
) -> str:
    """The agent's ``plans`` (slug to text) committed, a pass; Alice approves ``approve`` in
    one commit (``message``); each a step of ``date`` on. Her approval commit (no pass yet)."""
    date()
    for slug, text in plans.items():
        lab.write(slug, text)
    lab.commit("agent plans")
    lab.run()
    date()
    for v in approve:
        lab.set_status(v, "approved")
    return lab.commit(message, ALICE)


def gates_held(
    lab: Lab, date: Callable[[], None], plain: list[str], gates: list[str], message: str
) -> str:
    """:func:`approved_plans` of the plans ``plain`` (:func:`advkit.plan_text`) and ``gates``
    (:func:`gated`, the ones approved), then a pass that runs action 1 of each gated plan to
    its gate. Her approval commit."""
    plans = {v: plan_text(v) for v in plain} | {v: gated(v) for v in gates}
    approval = approved_plans(lab, date, plans, gates, message)
    lab.run()
    return approval


def key_burst(
    lab: Lab, plain: list[str], gates: list[str], message: str, held: int = 1
) -> tuple[str, Path, Callable[[], None]]:
    """The key labs' burst (rounds 68-70) on a clock of the lab's own (:func:`date_steps`):
    :func:`gates_held` (``message``), the state directory copied to ``<lab.root>/../bk``,
    then Alice's review branch approves ``plain`` and the gates of all but the last ``held``,
    merged, one pass. The tip then, the copy and the clock."""
    date = date_steps(lab, 1790000000)
    gates_held(lab, date, plain, gates, message)
    bk = lab.root.parent / "bk"
    shutil.copytree(lab.state, bk, symlinks=True)
    date()
    review_merge(lab, [*plain, *gates[: len(gates) - held]], date)
    lab.run()
    return lab.head(), bk, date


def key_trial(
    lab: Lab, date: Callable[[], None], tags: list[str], gate: str, limit: float = 20
) -> tuple[dict[str, Any], dict[str, int]]:
    """Alice approves ``gate`` a step of ``date`` on; one pass and ``status --json``, each
    killed after ``limit`` seconds (:func:`try_cli`): what they said, the rows and what ran
    (``delta``); and the counts of ``tags`` after."""
    before = counts(lab, tags)
    date()
    lab.set_status(gate, "approved")
    lab.commit(f"approve the {gate} gate", ALICE)
    rc, _, err = try_cli(lab, "run", "--once", limit=limit)
    st_rc, st_out, st_err = try_cli(lab, "status", "--json", limit=limit)
    after = counts(lab, tags)
    res = {
        "rc": rc,
        "err": err[-1500:],
        "st_rc": st_rc,
        "st_out": (st_out + st_err)[-1500:],
        "rows": rows_of(st_out),
        "delta": grown(after, before),
    }
    return res, after


def key_refused(res: dict[str, Any]) -> bool:
    """Whether a :func:`key_trial`'s pass and ``status`` both refused (neither hung), the pass
    ``E_STORAGE``, both naming ``commit.key``."""
    return (
        res["rc"] not in (0, -999)
        and "E_STORAGE" in res["err"]
        and "commit.key" in res["err"]
        and res["st_rc"] not in (0, -999)
        and "commit.key" in res["st_out"]
    )


def put_back_key(state: Path, good: Path) -> None:
    """The operator's remedy: whatever stands at ``state/commit.key`` (a file, a link, a
    FIFO, a directory) replaced by a copy of ``good``."""
    key = state / "commit.key"
    if key.is_dir() and not key.is_symlink():
        key.rmdir()
    elif key.is_symlink() or key.exists():
        key.unlink()
    shutil.copy2(good, key)
    key.chmod(0o600)


def key_remedy(
    lab: Lab, tags: list[str], res: dict[str, Any], after: dict[str, int], good: Path
) -> None:
    """The key ``good`` put back (:func:`put_back_key`), one pass and ``status``: ``res``
    gains what ran since ``after`` (``after``) and what they said (``remedy``)."""
    put_back_key(lab.state, good)
    rc2, _, err2 = try_cli(lab, "run", "--once")
    _, st2, _ = try_cli(lab, "status", "--json")
    res["after"] = grown(counts(lab, tags), after)
    res["remedy"] = {"rc": rc2, "err": err2[-800:], "rows": rows_of(st2)}
