"""A run that ended in a fallback step (round 128, status-reason-ignores-fallback-step).

Action 1 fails and ``on_failure: fallback`` runs step ``1.1``; the run ends there: ``1.1``
in doubt (the controller SIGKILLed while its non-idempotent tool ran) or failed with its own
code (a missing output). The outcome commit names ``1.1``'s error; so must what an operator
reads before approving a resume (docs/execution.md, "check, then approve a resume"):
``plangate status`` (text and ``--json`` ``reason``), ``plangate show`` (its Status line and a
line for the fallback step's outcome under its action) and the page's code. Real
``plangate run --once`` (killed by its own tool), real git.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from controller.plan import yamlio
from tests.support.gitenv import commit_all, git, run_cli

# ``<calls> <tag> <mode>``: records the call; ``kill`` SIGKILLs the controller (its parent)
# the first time, ``fail`` exits 3, else prints {"ok": true}.
TOOL = """\
import os, signal, sys
calls, tag, mode = sys.argv[1:4]
sys.stdin.read()
with open(calls, "a") as f:
    f.write(tag + "\\n")
mark = calls + "." + tag
if mode == "kill" and not os.path.exists(mark):
    open(mark, "w").close()
    os.kill(os.getppid(), signal.SIGKILL)
if mode == "fail":
    sys.exit(3)
print('{"ok": true}')
"""

PLAN = """\
plan: {{name: fb, task: "a fallback step ends the run", status: pending_approval}}
available_tools: [{{name: boom}}, {{name: kn}}, {{name: ok}}]
actions:
  - id: 1
    tool: boom
    why: fails
    params: {{tag: one}}
    on_failure: fallback
    fallback:
      - id: '1.1'
        tool: {tool}
        why: instead
        params: {{tag: fb}}{outputs}
  - id: 2
    tool: ok
    why: after
    params: {{tag: two}}
"""


def _lab(tmp_path: Path, repo: Path, tool: str, outputs: str = "") -> tuple[Path, Path]:
    script = tmp_path / "tool.py"
    script.write_text(TOOL)
    calls = tmp_path / "calls.txt"

    def entry(mode: str) -> str:
        argv = [sys.executable, str(script), str(calls), "{tag}", mode]
        return f"{{kind: exec, argv: {json.dumps(argv)}}}"

    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\n"
        f"tools: {{boom: {entry('fail')}, kn: {entry('kill')}, ok: {entry('ok')}}}\n"
    )
    (repo / "plans" / "fb").mkdir(parents=True)
    (repo / "plans" / "fb" / "PLAN.yml").write_text(PLAN.format(tool=tool, outputs=outputs))
    commit_all(repo, "propose", ("Agent", "agent@example.com"))
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    path = repo / "plans" / "fb" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    return config, calls


def _passes(config: Path) -> None:
    """``run --once`` until one exits 0 (the kill happens once)."""
    for _ in range(4):
        if run_cli("run", "--once", "--config", str(config), timeout=120).returncode == 0:
            return
    raise AssertionError("no pass ended 0")


def _outcome_code(repo: Path) -> str:
    body = git(repo, "log", "-1", "--format=%B", "--grep=^plangate: fail plans/fb$")
    return body.split("\n")[2].split(":")[0]


def _shown(config: Path, repo: Path) -> tuple[dict, str, str]:  # type: ignore[type-arg]
    listed = run_cli("status", "--json", "--config", str(config))
    assert listed.returncode == 0, listed.stderr
    row = next(r for r in json.loads(listed.stdout) if r["plan"] == "plans/fb")
    text = run_cli("status", "--config", str(config)).stdout
    file = str(repo / "plans" / "fb" / "PLAN.yml")
    show = run_cli("show", file, "--config", str(config))
    assert show.returncode == 0, show.stderr
    return row, text, show.stdout


@pytest.mark.parametrize(
    "tool,outputs,code",
    [
        ("kn", "", "E_ACTION_IN_DOUBT"),
        ("ok", "\n        outputs: [{name: x, path: '$.json.nope'}]", "E_OUTPUT_MISSING"),
    ],
    ids=["in-doubt", "own-code"],
)
def test_status_and_show_name_the_fallback_step_that_ended_the_run(
    tmp_path: Path, repo: Path, tool: str, outputs: str, code: str
) -> None:
    config, calls = _lab(tmp_path, repo, tool, outputs)
    _passes(config)
    assert calls.read_text().split() == ["one", "fb"]  # 1.1 once, action 2 never
    data = yamlio.read_yaml((repo / "plans" / "fb" / "PLAN.yml").read_text()).data
    assert data["plan"]["status"] == "failed"
    assert _outcome_code(repo) == code  # what the outcome commit names
    row, text, show = _shown(config, repo)
    assert row["reason"].startswith(f"fallback step 1.1 of action 1: {code}: "), row
    assert code in text and "E_TOOL_FAILED" not in text, text
    status = next(line for line in show.splitlines() if line.startswith("Status:"))
    assert f"fallback step 1.1 of action 1: {code}" in status, show
    # under [1]: the action's own failure, then what its fallback step did
    under = show.split("[1] boom", 1)[1].split("[2] ok", 1)[0]
    assert "error: E_TOOL_FAILED" in under, under
    step = "in_doubt" if code == "E_ACTION_IN_DOUBT" else "failed"
    assert f"fallback [1.1] ran: {step}" in under and f"error: {code}: " in under, under
    quiet = run_cli("show", str(repo / "plans/fb/PLAN.yml"), "-q", "--config", str(config))
    assert f"; fallback 1.1 {step}" in quiet.stdout, quiet.stdout


def test_the_page_names_the_fallback_steps_code(tmp_path: Path, repo: Path) -> None:
    """The web page's code for the failed plan (read from the file's record) and its action
    table: the fallback step's own code, the step a row of its own."""
    from controller.service.ui.data import recorded_code
    from controller.service.ui.render import _actions

    outputs = "\n        outputs: [{name: x, path: '$.json.nope'}]"
    config, _ = _lab(tmp_path, repo, "ok", outputs)
    _passes(config)
    text = (repo / "plans" / "fb" / "PLAN.yml").read_text()
    assert recorded_code(text) == "E_OUTPUT_MISSING"
    page = "".join(_actions(yamlio.read_yaml(text).data, {}, {}))
    assert "<td>1.1</td>" in page and "E_OUTPUT_MISSING" in page, page
