"""What the record and ``status`` say of a run a tool broke mid-action (round 119, atk119r).

abort-after-crash-records-running: the controller SIGKILLed mid action 1, then the plan's
author commits ``aborted`` before the restart. The restart honoured the abort (``plangate:
abort``, nothing more runs, action 1 not called again) but committed action 1 as still
``running`` (no error) under ``execution.status: aborted``, and EXECUTION_LOG.md said
"⏳ running". Without the abort the same action is ``in_doubt`` (E_ACTION_IN_DOUBT); now it
is with it too.

amended-start-hold-misexplained: action 1's tool amends the controller's start commit
(``git commit --amend --no-edit``, a file added; author kept ``plangate``). The run is held
(nothing more runs until the owner restores the erased tip), but ``status`` blamed "another
controller or a lost key" and offered restoring ``commit.key``; now it names the rewrite,
E_HISTORY_REWRITTEN, and its remedy (restore the erased commits), as a ``reset`` does.

Real git, real ``plangate run --once`` and ``plangate status`` subprocesses, a real exec
tool that SIGKILLs its parent or rewrites the shared checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.gitenv import AGENT, ROOT, commit_all, git, identity

#: Every call is recorded; action 1's mode: ``kill`` SIGKILLs the controller (its parent),
#: ``amend`` amends the start commit (HEAD) with a note added, keeping the old tip's id.
TOOL = """\
import json, os, signal, subprocess, sys
tag, mode, d = sys.argv[1], sys.argv[2], os.environ["T_DIR"]
with open(os.path.join(d, "calls.log"), "a") as f:
    f.write(tag + "\\n")
if tag.endswith("-1") and mode == "kill":
    os.kill(os.getppid(), signal.SIGKILL)
if tag.endswith("-1") and mode == "amend":
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com")
    repo = os.environ["T_REPO"]
    run = lambda *a: subprocess.run(["git", *a], cwd=repo, env=env, check=True,
                                    capture_output=True, text=True).stdout.strip()
    open(os.path.join(d, "erased"), "w").write(run("rev-parse", "HEAD"))
    open(os.path.join(repo, "note.txt"), "w").write("n\\n")
    run("add", "-A")
    run("commit", "-q", "--amend", "--no-edit")
print(json.dumps({"ok": tag}))
"""


class _Lab:
    def __init__(self, tmp_path: Path, repo: Path, slug: str, mode: str) -> None:
        self.tmp, self.repo, self.slug = tmp_path, repo, slug
        (tmp_path / "t.py").write_text(TOOL)
        argv = json.dumps([sys.executable, str(tmp_path / "t.py"), "{tag}", mode])
        env = f"{{T_DIR: '{tmp_path}', T_REPO: '{repo}'}}"
        self.config = tmp_path / "plangate.yml"
        self.config.write_text(
            f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
            "identity: {name: plangate, email: plangate@localhost}\n"
            "approval: {approvers: [alice@example.com]}\n"
            f"tools: {{t: {{kind: exec, argv: {argv}, env: {env}}}}}\n"
        )
        acts = "".join(
            f'  - id: {i}\n    tool: t\n    why: "step {i}"\n    params: {{tag: "{slug}-{i}"}}\n'
            for i in (1, 2, 3)
        )
        (repo / "plans" / slug).mkdir(parents=True)
        self.file = repo / "plans" / slug / "PLAN.yml"
        self.file.write_text(
            f'plan:\n  name: "{slug}"\n  task: "round 119"\n  status: pending_approval\n'
            f"available_tools:\n  - name: t\nactions:\n{acts}"
        )
        commit_all(repo, f"propose {slug}", AGENT)
        assert self.cli("run", "--once").returncode == 0  # frozen
        self.set_status("approved", ("Alice", "alice@example.com"))

    def cli(
        self, *args: str, who: tuple[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "controller", *args, "--config", str(self.config)],
            cwd=self.repo,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(identity(*who) if who else {})},
            capture_output=True,
            text=True,
            timeout=120,
        )

    def set_status(self, status: str, who: tuple[str, str]) -> None:
        text = self.file.read_text()
        head, sep, rest = text.partition("  status: ")
        self.file.write_text(head + sep + status + rest[rest.index("\n") :])
        commit_all(self.repo, f"{status} {self.slug}", who)

    def calls(self) -> list[str]:
        log = self.tmp / "calls.log"
        return log.read_text().split() if log.exists() else []

    def committed(self, name: str) -> str:
        return git(self.repo, "show", f"HEAD:plans/{self.slug}/{name}")

    def row(self) -> dict[str, object]:
        result = self.cli("status", "--json")
        assert result.returncode == 0, result.stderr[-2000:]
        return next(r for r in json.loads(result.stdout) if r["plan"] == f"plans/{self.slug}")


def test_an_abort_after_a_kill_mid_action_records_the_action_in_doubt(
    tmp_path: Path, repo: Path
) -> None:
    lab = _Lab(tmp_path, repo, "kd", "kill")
    killed = lab.cli("run", "--once")
    assert killed.returncode < 0, killed.stderr[-2000:]  # SIGKILLed mid action 1
    lab.set_status("aborted", AGENT)  # the plan's author, before the restart
    again = lab.cli("run", "--once")
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr[-2000:]
    assert lab.calls() == ["kd-1"]  # nothing more ran, action 1 not called again
    assert git(repo, "log", "-1", "--format=%s").startswith("plangate: abort plans/kd")
    from controller.plan import yamlio

    execution = yamlio.read_yaml(lab.committed("PLAN.yml")).data["execution"]
    assert execution["status"] == "aborted"
    first = execution["actions"][0]
    assert first["status"] == "in_doubt", first
    assert first["error"]["code"] == "E_ACTION_IN_DOUBT", first
    assert [a["status"] for a in execution["actions"][1:]] == ["pending", "pending"]
    log = lab.committed("EXECUTION_LOG.md")
    assert "⏳" not in log and "E_ACTION_IN_DOUBT" in log, log


def test_an_amended_start_holds_the_run_as_a_rewrite(tmp_path: Path, repo: Path) -> None:
    lab = _Lab(tmp_path, repo, "am", "amend")
    held = lab.cli("run", "--once")
    assert "Traceback" not in held.stderr, held.stderr[-2000:]
    assert lab.calls() == ["am-1"]  # held: action 2 never started
    row = lab.row()
    said = json.dumps([row["waiting"], row["notes"], row["reason"]])
    assert "E_HISTORY_REWRITTEN" in str(row["waiting"]) and "restore" in str(row["waiting"]), said
    assert "another controller" not in said and "commit.key" not in said, said
    assert lab.cli("run", "--once").returncode == 0 and lab.calls() == ["am-1"]  # still held
    git(repo, "reset", "-q", "--hard", (tmp_path / "erased").read_text().strip())
    done = lab.cli("run", "--once")
    assert done.returncode == 0, done.stderr[-2000:]
    assert lab.calls() == ["am-1", "am-2", "am-3"]  # the run went on: each action once
    assert "status: completed" in lab.committed("PLAN.yml")
