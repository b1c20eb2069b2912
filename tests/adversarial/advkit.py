"""The attacker's bench: a plans repo in a temp folder, the controller's config and state
outside it, and nothing but the real ``plangate`` CLI and real ``git`` to act with.

An attack module builds one :class:`Lab` (module scope, so a few ``run --once`` passes serve
many variants), writes one plan folder per variant, plays the attack with git commits, runs
the controller and then asserts, per variant, that the defence held: the plan was refused
with its code, the recording tool ran zero times (or once), nothing forged was committed.

The ``rec`` tool is an exec tool that appends one JSON line per call (its argv and the JSON
it got on stdin) to ``ran.log``: the ground truth of what really ran.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.support import clifork

AGENT = ("Agent", "agent@example.com")
ALICE = ("Alice", "alice@example.com")
BOB = ("Bob", "bob@ops.example.com")
CAROL = ("Carol", "carol@ops.example.com")
MALLORY = ("Mallory", "mallory@example.com")
BOT = ("plangate", "plangate@localhost")
APPROVERS = ["alice@example.com", "*@ops.example.com"]

RECORDER = """\
import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
print(json.dumps({"ok": True, "echo": json.loads(data) if data.strip() else None}))
"""


class BenchError(RuntimeError):
    """The bench itself failed (git refused a step, the controller's pass crashed): never
    an expected failure, so a strict xfail (``raises=AssertionError``) does not hide it."""


class WindowClosed(Exception):
    """A lab's clock window (a key's validity, ``max_age``, a wall-clock budget) closed before
    the steps that had to happen inside it completed: the bench was too slow (a loaded
    machine), which says nothing of the defence. :func:`with_widening_window` rebuilds."""


def window_open(deadline: float, what: str) -> None:
    """Raise :class:`WindowClosed` unless the clock is still before ``deadline`` (an epoch
    time; checked after the in-window steps, so they all happened before it)."""
    now = time.time()
    if now >= deadline:
        raise WindowClosed(f"{what}: window closed at {deadline:.1f}, now {now:.1f}")


def with_widening_window(
    build: Callable[[Path, int], Lab], *, first: int, tries: int = 4
) -> Callable[[Path], Lab]:
    """``build(root, window)`` as the ``build(root)`` that ``shared`` takes: each try builds
    a fresh lab in ``root/w<n>``; when the build raises :class:`WindowClosed` (its control
    or in-window steps did not complete inside the window) the lab is rebuilt with the window
    doubled, so the attack and the control are always judged inside a valid window. After
    ``tries`` closed windows, a :class:`BenchError` says so (never an assertion: a strict
    xfail must not hide a bench too slow to judge). The lab keeps ``window`` (the one that
    held) and ``closed`` (why the earlier tries were rebuilt)."""

    def wrapped(root: Path) -> Lab:
        window, closed = first, []
        for attempt in range(tries):
            folder = root / f"w{attempt}"
            folder.mkdir(parents=True)
            try:
                lab = build(folder, window)
            except WindowClosed as why:
                closed.append(f"window {window}: {why}")
                window *= 2
                continue
            lab.window = window  # type: ignore[attr-defined]
            lab.closed = closed  # type: ignore[attr-defined]
            return lab
        raise BenchError(
            f"bench too slow: the window closed before the in-window steps completed in all "
            f"{tries} tries: " + "; ".join(closed)
        )

    return wrapped


def identity(who: tuple[str, str]) -> dict[str, str]:
    name, email = who
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


#: A plan written with a legacy ``${...}``-style (or ``$<...>``) reference in ``{ref}``:
#: ``.format(tag=..., status=..., ref=...)`` (rounds 119, 120: a rejected version brought back
#: in the other reference spelling).
LEGACY_PLAN = """\
plan:
  name: "{tag}"
  task: "attack variant {tag}"
  status: {status}
inputs:
  who: ops
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "record that variant {tag} ran"
    params:
      tag: "{tag}"
      who: "{ref}"
"""

#: The same plan as ``plan_text(tag, status=status)``, written otherwise: keys reordered, flow
#: style, quoting, comments, ``created`` and ``metadata`` (none of them hashed);
#: ``.format(tag=..., status=...)``.
RESPELLED_PLAN = """\
# a fresh plan, nothing to see
metadata: {{ticket: OPS-1}}
actions:
  - {{why: 'record that variant {tag} ran', tool: rec, id: 1, params: {{tag: {tag}}}}}
available_tools: [{{name: rec}}]
plan: {{status: {status}, task: 'attack variant {tag}', name: {tag},
  created: "2026-12-06T00:00:00Z"}}
"""


def plan_text(
    tag: str,
    status: str = "pending_approval",
    params: str = "",
    extra_actions: str = "",
    name: str | None = None,
) -> str:
    """A one-action plan calling ``rec`` with ``tag`` (plus ``params`` lines, 6-space indent)."""
    body = f"""\
plan:
  name: "{name or tag}"
  task: "attack variant {tag}"
  status: {status}
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "record that variant {tag} ran"
    params:
      tag: "{tag}"
"""
    if params:
        body += textwrap.indent(textwrap.dedent(params), "      ")
    return body + extra_actions


def load_yaml(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


_LOCKED = re.compile(r"index\.lock': File exists|cannot lock ref")


class Lab:
    """One plans repo, a config and a state dir outside it, and the recording tool."""

    def __init__(self, root: Path, approval: str = "", extra: str = "", tools: str = "") -> None:
        self.root = root
        self.repo = root / "repo"
        self.config = root / "plangate.yml"
        self.state = root / "state"
        self.log = root / "ran.log"
        self.home = root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.recorder = root / "rec.py"
        self.recorder.write_text(RECORDER)
        self.repo.mkdir()
        self.git("init", "-q", "-b", "main")
        (self.repo / "README").write_text("plans\n")
        self.commit("initial", ("Owner", "owner@example.com"))
        self.write_config(approval=approval, extra=extra, tools=tools)

    def write_config(self, approval: str = "", extra: str = "", tools: str = "") -> None:
        rec = json.dumps([sys.executable, str(self.recorder), "{tag}"])
        self.config.write_text(
            f"repo: {self.repo}\n"
            f"state_dir: {self.state}\n"
            "identity: {name: plangate, email: plangate@localhost}\n"
            "approval:\n"
            f"  approvers: {json.dumps(APPROVERS)}\n"
            + textwrap.indent(textwrap.dedent(approval), "  ")
            + "tools:\n"
            f"  rec: {{kind: exec, argv: {rec}, env: {{REC_LOG: {json.dumps(str(self.log))}}}}}\n"
            "  echo: {kind: echo}\n" + textwrap.indent(textwrap.dedent(tools), "  ") + extra
        )

    # -- acting -------------------------------------------------------------------------
    #: A date (``@<epoch> +0000``) every git command and pass of the lab is dated by
    #: (``GIT_AUTHOR_DATE``/``GIT_COMMITTER_DATE``, which the controller's commits follow too):
    #: a past made without sleeping. None: the clock's.
    git_date: str | None = None

    def env(self, who: tuple[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PLANGATE_"))}
        if self.git_date is not None:
            env.update(GIT_AUTHOR_DATE=self.git_date, GIT_COMMITTER_DATE=self.git_date)
        env.update(
            HOME=str(self.home),
            GIT_CONFIG_GLOBAL=str(self.root / "gitconfig"),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_TERMINAL_PROMPT="0",
        )
        if not (self.root / "gitconfig").exists():
            (self.root / "gitconfig").write_text(
                "[user]\n\tname = Test User\n\temail = test@example.com\n"
                "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
            )
        if who:
            env.update(identity(who))
        env.update(getattr(self, "extra_env", {}))
        return env

    def git(
        self,
        *args: str,
        who: tuple[str, str] | None = None,
        check: bool = True,
        input: str | None = None,
    ) -> str:
        for _ in range(100):
            result = subprocess.run(
                ["git", *args],
                cwd=self.repo,
                env=self.env(who),
                capture_output=True,
                text=True,
                input=input,
                check=False,
            )
            # a daemon's commit holds index.lock (or a ref lock) for a moment: a person runs
            # the command again, as git and docs/agents.md say (only a refused lock retries)
            if result.returncode == 0 or not _LOCKED.search(result.stderr):
                break
            time.sleep(0.1)
        if check and result.returncode != 0:
            raise BenchError(f"git {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    def write(self, slug: str, text: str | bytes, filename: str = "PLAN.yml") -> Path:
        """Write a plan file (or source). A ``PLAN.md`` given plan text in YAML is written in
        one fenced ``yaml`` block, as a markdown file must hold it (round 113: a bare body
        is refused, a forge renders it as markdown); :meth:`put` writes bytes as they are."""
        path = self.repo / "plans" / slug / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        bare = isinstance(text, str) and not text.lstrip().startswith(("# ", "```", "~~~", "{"))
        if bare and filename.lower().endswith(".md"):
            text = f"```yaml\n{text}```\n"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_bytes(text.encode("utf-8"))
        return path

    def read(self, slug: str, filename: str = "PLAN.yml") -> str:
        return (self.repo / "plans" / slug / filename).read_text(encoding="utf-8")

    def set_status(self, slug: str, status: str, filename: str = "PLAN.yml") -> None:
        """Change ``plan.status`` the way a human does: edit that one line, its line end kept
        as an editor keeps it (a CR LF line stays CR LF: round 77, a line end changed is the
        editor's writing)."""
        path = self.repo / "plans" / slug / filename
        with open(path, encoding="utf-8", newline="") as handle:  # a lone CR stays a CR
            lines = handle.read().split("\n")
        for i, line in enumerate(lines):
            if line.startswith("  status:") and i < 6:
                lines[i] = f"  status: {status}" + ("\r" if line.endswith("\r") else "")
                break
        else:
            raise BenchError(f"no plan.status in {path}")
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write("\n".join(lines))

    def commit(self, message: str, who: tuple[str, str] = AGENT, *paths: str) -> str:
        self.git("add", "-A", *paths)
        self.git("commit", "-q", "--allow-empty", "-m", message, who=who)
        return self.head()

    def head(self, rev: str = "HEAD") -> str:
        return self.git("rev-parse", rev).strip()

    def put(self, rel: str, data: str | bytes) -> Path:
        """Write ``data`` (text as UTF-8, bytes as they are) at ``rel`` in the working tree,
        its folders made: any file, not only a plan (a twin claim, a note, a config)."""
        path = self.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return path

    def branch(self, name: str, base: str = "main") -> None:
        """Check out a new branch ``name`` made at ``base``."""
        self.git("checkout", "-q", "-b", name, base)

    def note(self, name: str, who: tuple[str, str] = AGENT) -> str:
        """A commit by ``who`` adding ``notes/<name>.txt`` (a side that touches no plan)."""
        self.put(f"notes/{name}.txt", f"{name}\n")
        return self.commit(f"{who[0].lower()}: note {name}", who)

    def rmerge(
        self, who: tuple[str, str], refs: list[str], resolve: Callable[[], Any], *opts: str
    ) -> str:
        """``who`` merges ``refs`` into the checked-out branch ``--no-commit``, ``resolve()``
        edits the tree, then ``who`` commits the merge: the resolution's bytes are the merge's
        own (an evil merge, a dropped claim)."""
        self.git("merge", "-q", "--no-ff", "--no-commit", *opts, *refs, who=who)
        resolve()
        self.git("add", "-A")
        self.git("commit", "-q", "--no-edit", who=who)
        return self.head()

    def approve(self, slug: str, who: tuple[str, str] = ALICE, message: str | None = None) -> str:
        self.set_status(slug, "approved")
        return self.commit(message or f"approve {slug}", who)

    def cli(
        self, *args: str, cwd: Path | None = None, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        # timeouts here are hang guards, never timing asserts: CI runs 6 workers on 2 cores,
        # and a lab's pass of 100 plans took over 120 s there under a load of 20
        env = self.env()
        env["REC_LOG"] = str(self.log)
        return clifork.run(list(args), cwd=cwd or self.root, env=env, timeout=timeout)

    def run(
        self, timeout: float = 300, check: bool = True, take_over: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """One ``plangate run --once`` pass; with ``check`` it must exit 0 (the controller
        itself worked, whatever the plans' outcomes); ``take_over``: a state directory lost
        on purpose is started over knowingly (round 70)."""
        told = ["--take-over"] if take_over else []
        result = self.cli("run", "--once", *told, "--config", str(self.config), timeout=timeout)
        if check and (result.returncode != 0 or "Traceback" in result.stderr):
            raise BenchError(f"run --once exited {result.returncode}: {result.stderr[-800:]}")
        return result

    def restore_line(self, read: str, merges: list[tuple[str, tuple[str, str]]]) -> None:
        """After a fast-forward to a merge that put unread commits behind a second parent, the
        pass holds (E_HISTORY_REWRITTEN, round 63); the owner follows its remedy: main back to
        ``read``, the tip the controller read, and each update merged again by its maker."""
        refused = self.run(check=False)
        assert refused.returncode != 0, refused.stderr[-800:]
        assert "E_HISTORY_REWRITTEN" in refused.stderr, refused.stderr[-800:]
        self.git("checkout", "-q", "main")
        self.git("reset", "-q", "--hard", read)
        for ref, who in merges:
            self.git("merge", "-q", "--no-ff", "-m", f"merge {ref} again", ref, who=who)

    # -- observing ----------------------------------------------------------------------
    def calls(self, tag: str) -> list[dict[str, Any]]:
        """Every recorded call of ``rec`` for ``tag``: what really ran."""
        if not self.log.exists():
            return []
        text = self.log.read_text()
        text = text[: text.rfind("\n") + 1]  # a call still being written is not read yet
        rows = [json.loads(line) for line in text.split("\n") if line.strip()]
        return [r for r in rows if r["argv"][:1] == [tag]]

    def plan(self, slug: str, rev: str = "HEAD", filename: str = "PLAN.yml") -> dict[str, Any]:
        text = self.git("show", f"{rev}:plans/{slug}/{filename}")
        return dict(load_yaml(text))

    def status(self) -> dict[str, dict[str, Any]]:
        """``plangate status --json`` by plan (cached while HEAD does not move)."""
        head = self.head()
        cached = getattr(self, "_status", None)
        if cached and cached[0] == head:
            return dict(cached[1])
        result = self.cli("status", "--json", "--config", str(self.config))
        if result.returncode not in (0, 1):
            raise BenchError(f"status exited {result.returncode}: {result.stderr[-800:]}")
        rows = {row["plan"]: row for row in json.loads(result.stdout)}
        self._status = (head, rows)
        return rows

    def rows(self) -> dict[str, Any]:
        """``plangate status --json`` by plan, read now (never cached); ``{"raw": text}`` when
        the output is not JSON (what a lab shows when status itself failed)."""
        out = self.cli("status", "--json", "--config", str(self.config)).stdout
        try:
            return {row["plan"]: row for row in json.loads(out)}
        except ValueError:
            return {"raw": out}

    def check(
        self, head: str, who: str, base: str = "main", cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``plangate check --base <base> --head <head> --as <who> --format json``."""
        return self.cli(
            "check", "--config", str(self.config), "--base", base, "--head", head,
            "--as", who, "--format", "json", cwd=cwd or self.repo,
        )  # fmt: skip

    def check_plans(
        self, head: str, who: str, base: str = "main"
    ) -> dict[str, tuple[Any, list[Any]]]:
        """What ``check`` predicts per plan: ``plan -> (outcome, [refusal codes])``;
        ``{"raw": (stdout + stderr, [])}`` when its output is not JSON."""
        told = self.check(head, who, base)
        try:
            plans = json.loads(told.stdout)["plans"]
        except (ValueError, KeyError, TypeError):
            return {"raw": (told.stdout + told.stderr, [])}
        return {
            p["plan"]: (p.get("outcome"), [r.get("code") for r in p.get("refused") or []])
            for p in plans
        }

    def history(self, slug: str) -> str:
        """Everything git history says about ``plans/<slug>``: every commit message and diff
        (``git log -p``), as text (what a secret must never be found in)."""
        out = subprocess.run(
            ["git", "log", "-p", "--format=%B", "--", f"plans/{slug}"],
            cwd=self.repo,
            env=self.env(),
            capture_output=True,
            check=True,
        ).stdout
        return out.decode("utf-8", "replace")

    def log_rows(
        self, fmt: str = "%H%x00%an%x00%ae%x00%s%x00%B%x01", rev: str = "HEAD"
    ) -> list[list[str]]:
        out = self.git("log", f"--format={fmt}", rev)
        return [row.strip("\n").split("\0") for row in out.split("\x01") if row.strip()]

    def subjects(self, slug: str) -> list[str]:
        """Subjects of the controller's commits about ``plans/<slug>``, newest first (a
        batched commit counts as the one-plan commit of each plan it records)."""
        from controller.git.records import batch_groups

        found = []
        for r in self.log_rows():
            if r[2] != BOT[1]:
                continue
            groups = batch_groups(r[4]) if "\nPlan-Event: " in r[4] else []
            subjects = [f"plangate: {t.get('Plan-Event')} {p}" for p, t in groups] or [r[3]]
            found += [s for s in subjects if s.split(" ", 2)[-1] == f"plans/{slug}"]
        return found

    def started(self, slug: str) -> bool:
        return any(s.startswith("plangate: start ") for s in self.subjects(slug))

    def refusal(self, slug: str) -> str | None:
        """The code of the controller's recorded refusal of ``slug`` (HEAD's PLAN.yml)."""
        try:
            data = self.plan(slug)
        except BenchError:
            return None
        approval = data.get("approval") or {}
        if approval.get("status") == "refused":
            return str(approval.get("code"))
        return None

    def codes(self, slug: str) -> str:
        """Everything the controller said about ``slug``: status notes, refusal, validation."""
        text = json.dumps(self.status().get(f"plans/{slug}", {}))
        with contextlib.suppress(BenchError):
            text += json.dumps(self.plan(slug), default=str)
        return text

    def audit(self, *args: str, config: Path | None = None) -> tuple[int, dict[str, Any]]:
        args_ = ["audit", "--json"]
        if config is not None:
            args_ += ["--config", str(config)]
        result = self.cli(*args_, *args, cwd=self.repo)
        assert "Traceback" not in result.stderr, result.stderr[-3000:]
        try:
            report = json.loads(result.stdout)
        except ValueError:
            report = {"raw": result.stdout, "stderr": result.stderr}
        return result.returncode, report


def brief(row: dict[str, Any], notes: int = 3) -> Any:
    """A status row in short, for an assertion's message: status, approver, code, reason,
    last notes."""
    return (
        row.get("status"),
        row.get("approved_by"),
        row.get("code"),
        row.get("reason"),
        (row.get("notes") or [])[-notes:],
    )


class Labs:
    """Several labs built at once (a module's lab per setting): ``got`` maps each key to what
    its builder returned. Picklable, so :func:`test_round2_execution_kit.shared` keeps it."""

    def __init__(self, got: dict[str, Any]) -> None:
        self.got = got


def build_all(root: Path, builders: dict[str, Callable[[Path], Any]], workers: int = 3) -> Labs:
    """Build every lab of ``builders`` (key -> builder of ``root/<key>``) in ``workers``
    threads: each lab is its own repo and processes, so they overlap their waits."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        jobs = {key: pool.submit(build, root / key) for key, build in builders.items()}
        return Labs({key: job.result() for key, job in jobs.items()})


def until(pred: Callable[[], Any], timeout: float = 60.0, step: float = 0.05) -> bool:
    """Poll ``pred`` every ``step`` seconds until it is true (True) or ``timeout`` passed."""
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(step)
    return False


def page_settled(port: int, head: Callable[[], str], timeout: float = 180.0) -> bool:
    """Wait until the page on ``port`` serves and its background audit has read ``head()``
    (the watched branch's head, asked again at each poll).

    A lab that compares page reads taken before and after a change must take its first read
    after this: the audit runs in its own thread, and on a loaded machine it can still be
    working when the page already answers (round 94's surface lab lost that race in CI).
    """
    import urllib.request

    def ready() -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/", timeout=30) as r:
                view = json.loads(r.read())
        except (OSError, ValueError):
            return False
        return (view.get("audit") or {}).get("head") == head()

    return until(ready, timeout=timeout, step=0.2)


def pid_alive(pidfile: Path) -> bool:
    """Whether the process whose pid ``pidfile`` holds is alive and no zombie (Linux /proc)."""
    try:
        stat = Path(f"/proc/{int(pidfile.read_text())}/stat").read_text()
    except (OSError, ValueError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def xfail(cls: str, what: str) -> Any:
    """The marker for an attack that breaks the promise on today's main (issue 11)."""
    import pytest

    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"issue 11: {cls} — {what}")


def cases(ids: list[str], values: list[Any], broken: dict[str, Any]) -> list[Any]:
    """``pytest.param`` per variant, with the xfail marker from ``broken`` (id -> marker)."""
    import pytest

    return [
        pytest.param(*v, id=i, marks=[broken[i]] if i in broken else [])
        if isinstance(v, tuple)
        else pytest.param(v, id=i, marks=[broken[i]] if i in broken else [])
        for i, v in zip(ids, values, strict=True)
    ]


def play(lab: Lab, scenarios: dict[str, list[Any]]) -> None:
    """Play every scenario's steps in rounds, one ``run --once`` pass after each round (as a
    daemon would between pushes). A step is ``step(lab, variant_id)``."""
    rounds = max(len(steps) for steps in scenarios.values())
    for index in range(rounds):
        for vid, steps in scenarios.items():
            if index < len(steps) and steps[index] is not None:
                steps[index](lab, vid)
        lab.run()


def say_lab(root: Path, name: str, say: str, secret: str, vids: list[str]) -> Lab:
    """A lab whose exec tool ``say`` (the script ``say``, called with a form and a mode) gets
    the plan secret ``TOK`` (``secret``): one plan ``<form>-<mode>`` per id of ``vids``,
    approved by Alice and run in one pass; ``lab.status_text`` holds ``status`` as text and
    JSON afterwards (rounds 47-48: what a tool prints around a secret)."""
    (root / "say.py").write_text(say)
    (root / "sec.yml").write_text(f"TOK: {secret}\n")
    py = json.dumps(sys.executable)
    script = json.dumps(str(root / "say.py"))
    lab = Lab(
        root / name,
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n",
        tools=f"say: {{kind: exec, argv: [{py}, {script}, '{{f}}', '{{m}}']}}\n",
    )
    for vid in vids:
        form, mode = vid.rsplit("-", 1)
        lab.write(
            vid,
            f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: say}]\nactions:\n  - id: 1\n    tool: say\n    why: w\n"
            f'    params: {{f: {form}, m: {mode}, key: "$<secrets.TOK>"}}\n',
        )
    lab.commit("plans")
    lab.run()
    for vid in vids:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.status_text = (  # type: ignore[attr-defined]
        lab.cli("status", "--config", str(lab.config)).stdout,
        lab.cli("status", "--json", "--config", str(lab.config)).stdout,
    )
    return lab


def valid_runs(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    """The executions of ``plans/<slug>`` a ``plangate audit --json`` report calls valid."""
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{slug}" and e.get("approval_valid")
    ]


def clone_audit(lab: Lab, folder: Path) -> tuple[dict[str, Any], set[str]]:
    """``plangate audit --json`` in a fresh clone ``folder/clone``: the report and the plans
    whose start it calls valid."""
    clone = folder / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    result = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    report = json.loads(result.stdout)
    valid = {e["plan"] for e in report["executions"] if e.get("approval_valid")}
    return report, valid


def served_audit(lab: Lab, url: str, clone: Path) -> None:
    """``plangate audit --json`` in a fresh clone of the served ``main`` at ``url`` (a remote
    lab's ``git daemon``), kept on the lab: ``lab.report`` (``{}`` for no output) and
    ``lab.audit_err``, stderr's tail."""
    subprocess.run(["git", "clone", "-q", "-b", "main", url, str(clone)], env=lab.env(), check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    lab.audit_err = out.stderr[-2000:]  # type: ignore[attr-defined]
    lab.report = json.loads(out.stdout) if out.stdout.strip() else {}  # type: ignore[attr-defined]


def clone_audit_got(
    lab: Lab, folder: Path, *opts: str, name: str = "clone", transport: bool = False
) -> dict[str, Any]:
    """``plangate audit --json`` in a fresh clone ``folder/<name>`` (``git clone *opts``), kept
    for a lab's ``got`` rather than asserted on the spot (unlike :func:`clone_audit`): ``rc``;
    ``report`` (``{"raw": ..., "stderr": ...}`` when the output is not a JSON object);
    ``valid``, the sorted plans whose start it calls valid; ``err``, stderr's tail.
    ``transport`` clones over ``file://`` (only reachable objects travel; ``--depth`` and
    ``--single-branch`` apply), else from the path (git copies the object store as it is)."""
    clone = folder / name
    lab.git("clone", "-q", *opts, f"file://{lab.repo}" if transport else str(lab.repo), str(clone))
    result = lab.cli("audit", "--json", cwd=clone)
    try:
        report = json.loads(result.stdout)
    except ValueError:
        report = {"raw": result.stdout[-600:], "stderr": result.stderr[-600:]}
    if not isinstance(report, dict):
        report = {"raw": str(report)[-600:]}
    execs = report.get("executions", [])
    valid = sorted({e["plan"] for e in execs if e.get("approval_valid")})
    return {"rc": result.returncode, "report": report, "valid": valid, "err": result.stderr[-600:]}
