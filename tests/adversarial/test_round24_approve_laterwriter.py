"""Round 24, ``plangate audit`` on a fresh clone against the controller: an approver who
becomes a writer of a plan only after it ran.

The audit judges each start "whether it was valid at that commit". Rounds 22-23 made more
things writers: any file in the plan's folder, any file in a pinned library's folder, the
exact content written on any path, ever. A write made after the run must not turn a start
the controller rightly made into a finding. Config: the bench's, plus ``plans/two/**`` needs
two approvals. The agent writes every plan; the controller freezes it; the approvers below
approve; the plan runs to ``completed``. Then, after the run:

- ``own-note``: Alice commits ``NOTES.md`` into the plan's folder (she approved it);
- ``lib-note``: the plan pins a library ``plans/lib-note-lib`` (agent's); Alice approved the
  parent; she then commits ``NOTES.md`` into the library's folder;
- ``copy``: Alice commits the plan's exact bytes (status ``draft``) at
  ``plans/copy-alice`` (she now "produced this exact content");
- ``coauthor``: the agent commits ``NOTES.md`` into the folder with ``Co-authored-by:
  Alice``;
- ``two/vote``: Alice and Bob approved (quorum); Alice then commits ``NOTES.md`` into the
  folder;
- ``gate``: Bob approved, the plan paused at a gate, Alice opened it; she then commits
  ``NOTES.md`` into the folder.

Asserted: every plan ran its actions once (the controller's verdict); a fresh clone's
``plangate audit --json`` calls each start ``approval_valid: true`` and flags none of them
(the audit agrees with the controller).

Results: every variant held.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

RULES = 'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
SOLO = ["own-note", "lib-note", "copy", "coauthor"]
VIDS = [*SOLO, "two/vote", "gate"]


def _parent(tag: str, digest: str) -> str:
    return (
        f'plan:\n  name: "{tag}"\n  task: "attack variant {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n"
        f'actions:\n  - id: 1\n    tool: rec\n    why: parent\n    params: {{tag: "{tag}"}}\n'
        f'  - id: 2\n    plan: {{path: plans/{tag}-lib, hash: "{digest}"}}\n    why: lib\n'
    )


def _gate(tag: str) -> str:
    return plan_text(tag) + (
        "  - id: 2\n    tool: rec\n    why: gated\n    requires_approval: true\n"
        f'    params: {{tag: "{tag}-2"}}\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    lab.write("lib-note-lib", plan_text("lib-note-lib", status="draft"))
    lab.commit("agent writes the library", AGENT)
    result = lab.cli("hash", "--config", str(lab.config), "plans/lib-note-lib", cwd=lab.repo)
    assert result.returncode == 0, result.stdout + result.stderr
    lab.write("lib-note", _parent("lib-note", result.stdout.strip().split()[-1]))
    for v in ["own-note", "copy", "coauthor", "two/vote"]:
        lab.write(v, plan_text(v.replace("/", "-")))
    lab.write("gate", _gate("gate"))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for v in SOLO:
        lab.approve(v, ALICE)
    lab.approve("two/vote", ALICE)
    lab.approve("gate", BOB)
    lab.run()  # solo: run; two/vote partial; gate: pause
    time.sleep(1.05)
    lab.approve("two/vote", BOB)
    lab.approve("gate", ALICE)
    lab.run()
    time.sleep(1.05)
    copy_text = lab.git("show", "HEAD:plans/copy/PLAN.yml")
    lab.write("copy-alice", copy_text.replace("status: completed", "status: draft"))
    for v in ["own-note", "two/vote", "gate"]:
        lab.write(v, "Alice: looked at the run\n", filename="NOTES.md")
    lab.write("lib-note-lib", "Alice: looked at the run\n", filename="NOTES.md")
    lab.commit("alice notes after the runs", ALICE)
    lab.write("coauthor", "after the run\n", filename="NOTES.md")
    lab.commit("agent notes\n\nCo-authored-by: Alice <alice@example.com>", AGENT)
    lab.run()
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli("audit", "--json", cwd=clone)
    (root / "audit.json").write_text(out.stdout)
    (root / "audit.err").write_text(out.stderr)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r24-laterwriter", _build)


def _audit(lab: Lab) -> dict[str, Any]:
    return dict(json.loads((lab.root / "audit.json").read_text()))


BROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in VIDS]
)
def test_the_controller_ran_it_once(lab: Lab, vid: str) -> None:
    tag = vid.replace("/", "-")
    assert len(lab.calls(tag)) == 1, lab.codes(vid)
    if vid == "gate":
        assert len(lab.calls("gate-2")) == 1, lab.codes(vid)
    if vid == "lib-note":
        assert len(lab.calls("lib-note-lib")) == 1, lab.codes(vid)


ABROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[ABROKEN[v]] if v in ABROKEN else []) for v in VIDS]
)
def test_a_later_write_does_not_void_the_start_in_the_audit(lab: Lab, vid: str) -> None:
    report = _audit(lab)
    text = json.dumps(report)
    rows = [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{vid}" and e.get("approval_kind") != "none"
    ]
    assert rows, text[:3000]
    for row in rows:
        assert row.get("approval_valid") is True, json.dumps(row)[:2000]
    findings = [f for f in report.get("findings", []) if f"plans/{vid}" in json.dumps(f)]
    assert findings == [], json.dumps(findings)[:2000]
