"""The writer-rule labs of rounds 57-60 (who wrote a plan, approval side), played once here.

Each attack module tells the same story with its own text: Alice commits her draft, the agent
reworks it in ONE commit (her folder removed, its plan added), a pass, Alice approves, two
passes, and ``plangate audit --json`` says which runs were valid. The other ways the same plan
reaches an approval are here too: a pull request merged ``--no-ff``, a count-2 quorum (Bob,
then Alice), and the prediction commands ``plangate approve --config`` and
``plangate check --as``; the honest story of last week's plans replaced (:func:`last_week`);
and remote mode over a real ``git daemon`` (:func:`served`, :class:`RemoteFlow`). A module
keeps its variants (the texts, as data), its ``BROKEN`` entries and its assertions; the
order of commits and passes lives here.

Git dates whole seconds, so her approval must be dated after the agent's rework: a
:class:`Flow` sleeps that second before it (rounds 57-59), or with ``past`` dates every commit
and pass on a clock an hour back that moves 30 s a step (round 60: no sleep).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from advkit import AGENT, ALICE, BOB, BenchError, Lab, identity

Who = tuple[str, str]
Mark = Callable[[Lab, str], None]

#: The agent's own plan, the control every module runs once on Alice's approval.
OWN = (
    "plan:\n  name: own\n  task: t\n  status: pending_approval\n"
    "available_tools: [{name: rec}]\nactions:\n  - id: 1\n    tool: rec\n"
    "    why: agent's own\n    params: {tag: own}\n"
)

#: Alice's cleanup draft (rounds 58-60): one ``rec`` call, her 12-word reason, three params.
WHY = "alice: drop the stale sessions table on the billing replica before the audit"
PARAMS = {
    "target": "billing-replica-2",
    "command": "DROP TABLE sessions_2019",
    "ticket": "OPS-4411",
}
KEYS = ["tag", *PARAMS]

#: A rule that asks two approvers of every plan.
QUORUM = 'rules:\n  - match: {paths: ["plans/**"]}\n    require: [{count: 2}]\n'


def own_plan(tag: str = "own") -> str:
    return OWN.replace("{tag: own}", f"{{tag: {tag}}}")


def her_values(v: str) -> dict[str, str]:
    return {"tag": f"{v}-her", **PARAMS}


def her_cleanup(v: str) -> str:
    """Alice's draft of variant ``v``: ``rec`` gets her tag ``<v>-her`` and her params."""
    return (
        "plan:\n"
        f'  name: "{v} cleanup"\n'
        f'  task: "{v}: clean the billing replica"\n'
        "  status: pending_approval\n"
        "available_tools:\n  - name: rec\n"
        "actions:\n  - id: 1\n    tool: rec\n"
        f'    why: "{WHY}"\n'
        "    params:\n" + "".join(f'      {k}: "{val}"\n' for k, val in her_values(v).items())
    )


def her_drafts(vids: Iterable[str], make: Callable[[str], str] = her_cleanup) -> dict[str, str]:
    """Her draft ``plans/<v>-her`` for each variant."""
    return {f"{v}-her": make(v) for v in vids}


def mark_approved(lab: Lab, slug: str) -> None:
    """Her approval the way a human gives it: the ``plan.status`` line edited."""
    lab.set_status(slug, "approved")


def mark_in_text(lab: Lab, slug: str) -> None:
    """Her approval for a layout :meth:`Lab.set_status` does not read (a 4-space indent, a
    quoted ``"status"`` key): the first ``status: pending_approval`` line edited."""
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text, found = re.subn(
        r'^(\s*"?status"?): pending_approval$',
        r"\1: approved",
        path.read_text(),
        count=1,
        flags=re.M,
    )
    if not found:
        raise BenchError(f"no pending status line in {path}")
    path.write_text(text)


class Flow:
    """Plays one lab's commits and passes in order (see the module's docstring on dates)."""

    def __init__(self, lab: Lab, *, past: bool = False) -> None:
        self.lab = lab
        self.past = past
        self.clock = int(time.time()) - 3600

    def tick(self) -> None:
        if self.past:
            self.clock += 30
            self.lab.git_date = f"@{self.clock} +0000"

    def settle(self) -> None:
        """What comes next is dated after every commit so far."""
        if not self.past:
            time.sleep(1.05)

    def commit(self, message: str, who: Who = AGENT, plans: dict[str, str] | None = None) -> str:
        self.tick()
        for slug, text in (plans or {}).items():
            self.lab.write(slug, text)
        return self.lab.commit(message, who)

    def rework(
        self,
        plans: dict[str, str],
        also: dict[str, str] | None = None,
        message: str = "agent reworks the drafts",
    ) -> str:
        """The agent's rework in one commit: each ``<v>-her`` removed, ``plans/<v>`` written
        in its place (and the plans of ``also`` added)."""
        for v in plans:
            self.lab.git("rm", "-q", "-r", f"plans/{v}-her")
        return self.commit(message, AGENT, {**plans, **(also or {})})

    def merged(self, plans: dict[str, str], also: dict[str, str] | None = None) -> None:
        """The rework as a pull request: committed on ``agent/pr``, merged ``--no-ff`` into
        main by the agent."""
        self.lab.git("checkout", "-q", "-b", "agent/pr")
        self.rework(plans, also, "agent reworks on a branch")
        self.lab.git("checkout", "-q", "main")
        self.tick()
        self.lab.git("merge", "-q", "--no-ff", "--no-edit", "agent/pr", who=AGENT)

    def run(self) -> None:
        self.tick()
        self.lab.run()

    def audit(self) -> None:
        _code, self.lab.report = self.lab.audit()  # type: ignore[attr-defined]

    def approve(self, slugs: Iterable[str], mark: Mark = mark_approved, who: Who = ALICE) -> None:
        """``who`` approves ``slugs`` in one commit."""
        self.tick()
        for slug in slugs:
            mark(self.lab, slug)
        self.lab.commit(f"{who[0].lower()} approves", who)

    def finish(self, slugs: Iterable[str], mark: Mark = mark_approved) -> Lab:
        """Alice approves ``slugs``, two passes, the audit (in ``lab.report``)."""
        self.approve(slugs, mark)
        self.run()
        self.run()
        self.audit()
        self.lab.git_date = None
        return self.lab


def reworked(
    flow: Flow,
    drafts: dict[str, str],
    own: dict[str, str],
    rework: Callable[[Flow], object],
    approve: Iterable[str],
    *,
    agent_first: bool = False,
    mark: Mark = mark_approved,
) -> Lab:
    """The story: her ``drafts`` and the agent's ``own`` plans committed (the agent's first
    with ``agent_first``), a pass, ``rework(flow)`` (its commits), a pass, then Alice approves
    ``approve``, two passes and the audit."""
    commits = [("alice drafts her plans", ALICE, drafts), ("agent's own plans", AGENT, own)]
    for message, who, plans in reversed(commits) if agent_first else commits:
        if plans:
            flow.commit(message, who, plans)
    flow.run()
    rework(flow)
    flow.run()
    flow.settle()
    return flow.finish(approve, mark)


def last_week(
    flow: Flow,
    olds: dict[str, str],
    news: dict[str, str],
    *,
    sep: str,
    done: str | None = None,
    archive: str | None = None,
) -> Lab:
    """The honest story: Alice's plans of last week (``plans/<v>-old``: ``olds`` by ``v``), a
    pass, Bob approves ``<done>-old`` (it runs); the agent removes ``<sep>-old`` in a commit of
    its own, then in one commit the others (``<archive>-old`` moved to ``archive/``) with this
    week's plan ``plans/<v>`` (``news``) in each one's place, and ``sep``'s in one more; a
    pass; Alice approves every new plan (in its own layout), two passes, the audit."""
    lab = flow.lab
    flow.commit("alice: last week's plans", ALICE, {f"{v}-old": t for v, t in olds.items()})
    flow.run()
    if done is not None:
        flow.settle()
        flow.approve([f"{done}-old"], who=BOB)
        flow.run()
        flow.run()
    lab.git("rm", "-q", "-r", f"plans/{sep}-old")
    flow.commit("agent: clean up an old plan", AGENT)
    for v in news:
        if v == archive:
            (lab.repo / "archive" / f"{v}-old").mkdir(parents=True)
            lab.git("mv", f"plans/{v}-old/PLAN.yml", f"archive/{v}-old/PLAN.yml")
        elif v != sep:
            lab.git("rm", "-q", "-r", f"plans/{v}-old")
    now = {v: text for v, text in news.items() if v != sep}
    flow.commit("agent: clean up last week, propose this week's plans", AGENT, now)
    flow.commit("agent: propose this week's plan", AGENT, {sep: news[sep]})
    flow.run()
    flow.settle()
    return flow.finish(news, mark_in_text)


# -- rounds 62-63: her values carried by the agent's own steps (a restart for her ticket) ----
#: The agent's reason for its step, the reason of its staging step, and Alice's reason.
AWHY = "agent: run the maintenance step that the ticket below describes in full detail"
SWHY = "agent: stage the values that the next step of this plan reads back"
HWHY = "alice: restart api-3 after the certificate rotation so it loads the new chain"

#: The catalog's ``look`` tool: the team's standby lookup for a host.
LOOK = 'import json\nprint(json.dumps({"standby": "api-4", "zone": "eu-west-1", "ref": "OPS-9"}))\n'


def plan_head(name: str) -> str:
    """The ``plan:`` block of the agent's plan ``name`` (pending approval)."""
    return f'plan:\n  name: "{name}"\n  task: "agent task {name}"\n  status: pending_approval\n'


def agent_call(
    i: int, tool: str, params: dict[str, object], why: str = AWHY, extra: str = ""
) -> str:
    """Action ``i`` calling ``tool`` with ``params`` (as JSON), then ``extra`` lines."""
    return (
        f'  - id: {i}\n    tool: {tool}\n    why: "{why}"\n'
        f"    params: {json.dumps(params)}\n{extra}"
    )


def her_restart() -> str:
    """Alice's draft: restart api-3 for ticket OPS-9 (her host, region and ticket)."""
    return (
        'plan:\n  name: "restart api-3"\n  task: "OPS-9: restart api-3"\n'
        "  status: pending_approval\navailable_tools:\n  - name: restart\n"
        f'actions:\n  - id: 1\n    tool: restart\n    why: "{HWHY}"\n'
        '    params: {host: "api-3", region: "eu-west-1", ticket: "OPS-9"}\n'
    )


def script_tool(root: Path, name: str, script: str, *args: str) -> str:
    """The catalog line of the exec tool ``name`` running ``script`` (written to
    ``root/<name>.py``) with the argv items ``args`` (YAML) after it."""
    path = root / f"{name}.py"
    path.write_text(script)
    argv = ", ".join([json.dumps(sys.executable), json.dumps(str(path)), *args])
    return f"{name}: {{kind: exec, argv: [{argv}]}}\n"


def restart_lab(root: Path, tools: str) -> Flow:
    """A past-clock :class:`Flow` on a lab in ``root/lab`` whose catalog has ``tools`` and
    ``restart`` (recorded as a ``rec`` call tagged ``restart``)."""
    py = json.dumps(sys.executable)
    lab_root = root / "lab"
    lab_root.mkdir()
    rec = json.dumps(str(lab_root / "rec.py"))
    restart = (
        f"restart: {{kind: exec, argv: [{py}, {rec}, restart],"
        f" env: {{REC_LOG: {json.dumps(str(lab_root / 'ran.log'))}}}}}\n"
    )
    return Flow(Lab(lab_root, tools=tools + restart), past=True)


def restart_drafts(flow: Flow, slips: Iterable[str], honest: Iterable[str]) -> None:
    """Alice commits her drafts ``<v>-her``: her cleanup for each of ``slips``, her restart
    for each of ``honest``."""
    drafts = {f"{v}-her": her_cleanup(v) for v in slips}
    drafts.update({f"{v}-her": her_restart() for v in honest})
    flow.commit("alice drafts her plans", ("Alice", "alice@example.com"), drafts)


def plan_hash(lab: Lab, slug: str) -> str:
    """``plangate hash`` of ``plans/<slug>`` (what a pinned ``plan:`` action names)."""
    got = lab.cli("hash", f"plans/{slug}", cwd=lab.repo)
    found = got.stdout.strip().split()[-1:] or [""]
    if not found[0].startswith("sha256:"):
        raise BenchError(f"plangate hash: {got.stdout} {got.stderr}")
    return found[0]


def quorum_lab(root: Path, v: str, her: str, made: str) -> Lab:
    """A lab under :data:`QUORUM`: her draft ``<v>-her``, the agent's ``made`` in its place,
    Bob approves (a pass), then Alice; two passes and the audit."""
    flow = Flow(Lab(root, approval=QUORUM))
    flow.commit("alice drafts", ALICE, {f"{v}-her": her})
    flow.run()
    flow.rework({v: made})
    flow.run()
    flow.settle()
    flow.approve([v], who=BOB)
    flow.run()
    return flow.finish([v])


def approve_command(lab: Lab, v: str) -> tuple[int, str, bool]:
    """Alice runs ``plangate approve plans/<v> --config``: exit code, output, and whether
    it committed."""
    lab.extra_env = identity(ALICE)  # type: ignore[attr-defined]
    head = lab.head()
    res = lab.cli("approve", f"plans/{v}", "--config", str(lab.config), cwd=lab.repo)
    lab.extra_env = {}  # type: ignore[attr-defined]
    return res.returncode, res.stdout + res.stderr, lab.head() != head


def approved_on_branch(
    flow: Flow, slugs: Iterable[str], mark: Mark = mark_approved, branch: str = "alice/check"
) -> str:
    """Alice's approval of ``slugs`` committed on ``branch``; then ``plangate check --base
    main --head <branch> --as alice@example.com --format json`` from main: its output."""
    lab = flow.lab
    lab.git("checkout", "-q", "-b", branch)
    for slug in slugs:
        mark(lab, slug)
    flow.commit("alice approves on a branch", ALICE)
    lab.git("checkout", "-q", "main")
    res = lab.cli(
        "check", "--base", "main", "--head", branch, "--as", "alice@example.com",
        "--format", "json", "--config", str(lab.config), cwd=lab.repo,
    )  # fmt: skip
    return res.stdout + res.stderr


def check_row(out: str, v: str) -> dict[str, Any]:
    """The row of ``plans/<v>`` in ``plangate check --format json`` output (or the raw end)."""
    try:
        data = json.loads(out[: out.rindex("}") + 1] if "}" in out else out)
    except ValueError:
        return {"raw": out[-1500:]}
    rows = data.get("plans", data) if isinstance(data, dict) else data
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and row.get("plan") == f"plans/{v}":
            return row
    return {"raw": out[-1500:]}


# -- remote mode ------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(port: int) -> None:
    for _ in range(100):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise BenchError("git daemon did not listen")


@contextlib.contextmanager
def served(lab: Lab) -> Iterator[str]:
    """The lab's repo pushed to a bare ``origin`` that ``git daemon`` serves on a free port,
    and the config in remote mode on it; yields its url, stops the daemon after."""
    folder = lab.root / "served"
    folder.mkdir()
    origin = folder / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(origin)], check=True)
    port = free_port()
    daemon = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
         f"--base-path={folder}", "--listen=127.0.0.1", f"--port={port}", str(folder)],
        env=lab.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        wait_for(port)
        url = f"git://127.0.0.1:{port}/origin.git"
        lab.git("remote", "add", "origin", url)
        lab.config.write_text(
            lab.config.read_text().replace(
                f"repo: {lab.repo}\n",
                f"remote: {{url: {json.dumps(url)}, branch: main, poll_interval: 0.2}}\n",
            )
        )
        yield url
    finally:
        os.killpg(daemon.pid, signal.SIGTERM)
        daemon.wait(timeout=180)


class RemoteFlow(Flow):
    """A :class:`Flow` in remote mode: a pass pushes main to ``url`` first and pulls the
    controller's commits after; the audit runs in a fresh clone of ``url``."""

    def __init__(self, lab: Lab, url: str) -> None:
        super().__init__(lab)
        self.url = url

    def run(self) -> None:
        self.lab.git("push", "-q", "origin", "main")
        super().run()
        self.lab.git("pull", "-q", "--rebase", "origin", "main")

    def audit(self) -> None:
        clone = self.lab.root / "fresh"
        env = self.lab.env()
        subprocess.run(["git", "clone", "-q", self.url, str(clone)], env=env, check=True)
        out = self.lab.cli("audit", "--json", cwd=clone)
        assert "Traceback" not in out.stderr, out.stderr[-2000:]
        self.lab.report = json.loads(out.stdout)  # type: ignore[attr-defined]
