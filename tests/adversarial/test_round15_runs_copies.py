# ruff: noqa: E501
"""Round 15, at most once: copies and moves of a version that started but did not finish,
and moves made by a tool while its own plan runs.

Earlier rounds copied, moved and re-added versions that had *completed*
(``test_runs_once.py``). Here the version stopped half-way; action 1 (``rec``) has run:

- ``failed-copy``: ``plans/f`` failed at action 2 (a tool exiting 3); the agent copies it to
  ``plans/f-copy`` (controller blocks dropped, ``pending_approval``), Alice approves the copy;
- ``gate-copy``: ``plans/g`` waits at the gate of action 2; copied to ``plans/g-copy`` and
  approved by Alice;
- ``gate-move``: ``plans/m`` waits at its gate; the agent ``git mv``\\s it to ``plans/m-moved``
  (pending again) and Alice approves it there.

Defence asserted: action 1 of each ran once in all, the gated action 2 never ran (nobody
approved the gate of the original), and the copy is refused (E_ALREADY_EXECUTED).

And, while the plan runs, its action 1 is a tool that changes git in the shared working tree
(the agent's commit), action 2 records:

- ``midrun-move``: ``git mv plans/mv plans/mv2 && git commit``;
- ``midrun-untrack``: ``git rm -r --cached plans/cp && git commit``.

Defence asserted: action 2 runs once, the plan's outcome is committed at its own path
(``completed``), nothing runs again over two more passes, and the audit flags the agent's
commits only (``plans/mv2``: ``illegal``; the move of ``m``: ``owned-block-changed``), and the honest ``zz`` runs once.

All held (round 15).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

GITT = """import json, os, subprocess, sys
sys.stdin.read()
who = {"GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
       "GIT_COMMITTER_NAME": "Agent", "GIT_COMMITTER_EMAIL": "agent@example.com"}
for cmd in json.loads(sys.argv[1]):
    subprocess.run(["git", "-C", os.environ["LAB_REPO"], *cmd], check=False, env={**os.environ, **who})
print("{}")
"""
COPIES = {
    "failed-copy": ("f", "f-copy"),
    "gate-copy": ("g", "g-copy"),
    "gate-move": ("m", "m-moved"),
}
MIDRUN = {"midrun-move": "mv", "midrun-untrack": "cp"}


def _two(tag: str, first: str, second: str) -> str:
    return f"""plan:
  name: "{tag}"
  task: "t"
  status: pending_approval
available_tools:
  - name: rec
  - name: fail
  - name: gitt
actions:
  - id: 1
{first}  - id: 2
{second}"""


def _rec(tag: str, gate: bool = False) -> str:
    gated = "    requires_approval: true\n" if gate else ""
    return f'    tool: rec\n    why: "w"\n{gated}    params: {{tag: "{tag}"}}\n'


def _git(cmds: list[list[str]]) -> str:
    return f'    tool: gitt\n    why: "w"\n    params: {{args: {json.dumps(json.dumps(cmds))}}}\n'


def _pending(text: str) -> str:
    text = text.split("\nfrozen:")[0] + "\n"
    return re.sub(r"  status: \w+", "  status: pending_approval", text, count=1)


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    (root / "gitt.py").write_text(GITT)
    gitt = json.dumps([sys.executable, str(root / "gitt.py"), "{args}"])
    fail = json.dumps([sys.executable, "-c", "import sys; sys.exit(3)"])
    repo = json.dumps(str(root / "lab" / "repo"))
    lab = Lab(
        root / "lab",
        tools=f"fail: {{kind: exec, argv: {fail}}}\ngitt: {{kind: exec, argv: {gitt}, env: {{LAB_REPO: {repo}}}}}\n",
    )
    lab.write("f", _two("f", _rec("f-1"), '    tool: fail\n    why: "w"\n    params: {}\n'))
    lab.write("g", _two("g", _rec("g-1"), _rec("g-2", gate=True)))
    lab.write("m", _two("m", _rec("m-1"), _rec("m-2", gate=True)))
    lab.write(
        "mv",
        _two(
            "mv",
            _git([["mv", "plans/mv", "plans/mv2"], ["commit", "-q", "-m", "move"]]),
            _rec("mv"),
        ),
    )
    lab.write(
        "cp",
        _two(
            "cp",
            _git([["rm", "-q", "-r", "--cached", "plans/cp"], ["commit", "-q", "-m", "untrack"]]),
            _rec("cp"),
        ),
    )
    lab.write("zz", plan_text("zz"))
    lab.commit("plans", AGENT)
    lab.run()
    for slug in ["f", "g", "m", "mv", "cp", "zz"]:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.first = {s: lab.status()[f"plans/{s}"]["status"] for s in "fgm"}  # type: ignore[attr-defined]
    lab.write("f-copy", _pending(lab.read("f")))
    lab.write("g-copy", _pending(lab.read("g")))
    lab.git("mv", "plans/m", "plans/m-moved")
    log = lab.repo / "plans/m-moved/EXECUTION_LOG.md"
    if log.exists():
        log.unlink()
    (lab.repo / "plans/m-moved/PLAN.yml").write_text(_pending(lab.read("m-moved")))
    lab.commit("copies", AGENT)
    lab.run()
    for _, copy in COPIES.values():
        lab.set_status(copy, "approved")
    lab.commit("approve the copies", ALICE)
    lab.passes = [lab.run(check=False).returncode for _ in range(2)]  # type: ignore[attr-defined]
    lab.audited = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r15-runs-copies", lambda root: _build(root / "copies"))


def test_the_originals_stopped_half_way(lab: Lab) -> None:
    assert lab.first == {"f": "failed", "g": "awaiting_approval", "m": "awaiting_approval"}  # type: ignore[attr-defined]
    assert lab.passes == [0, 0]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", list(COPIES))
def test_a_copy_of_a_half_run_version_runs_nothing_again(lab: Lab, vid: str) -> None:
    original, copy = COPIES[vid]
    assert len(lab.calls(f"{original}-1")) == 1
    assert lab.calls(f"{original}-2") == []
    assert "E_ALREADY_EXECUTED" in lab.codes(copy), lab.codes(copy)


@pytest.mark.parametrize("vid", list(MIDRUN))
def test_a_tool_moving_its_own_plan_mid_run(lab: Lab, vid: str) -> None:
    slug = MIDRUN[vid]
    assert len(lab.calls(slug)) == 1
    assert lab.plan(slug)["execution"]["status"] == "completed"


def test_the_audit_blames_the_agents_move_only(lab: Lab) -> None:
    _, report = lab.audited  # type: ignore[attr-defined]
    findings = report.get("findings", [])
    assert any(f["plan"] == "plans/mv2" for f in findings), findings
    for finding in findings:  # each names a commit of the agent, none of the controller's
        author = lab.git("log", "-1", "--format=%ae", finding["commit"]).strip()
        assert author == AGENT[1], finding
    assert len(lab.calls("zz")) == 1
