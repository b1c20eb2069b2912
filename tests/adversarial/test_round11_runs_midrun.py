# ruff: noqa: E501  (plan texts are kept on one line as written)
"""Round 11, what runs: an action's tool (an outside system the agent controls) rewrites
the plan while it runs, then a later action reads ``$<approval.*>``, ``$<plan.*>`` and
``$<inputs.*>``. docs/plan-format.md: resolution happens just before the action runs; the
approval values and the hashed content must be those of the approved, started version,
never what the working tree or a later agent commit says.

Variants (one plan each, action 1 = ``mut`` does the rewrite, action 2 = ``rec`` records):

- ``tree-approval``: the working tree's ``approval:`` block says Mallory approved, at
  another time, another commit and hash (uncommitted);
- ``commit-approval``: the same, committed by the agent (an unhashed block: the hash holds);
- ``tree-inputs`` / ``commit-inputs``: ``inputs.k`` and ``plan.name``/``task`` rewritten in the
  tree / committed by the agent (the hash changes);
- ``commit-created``: only ``plan.created`` and ``metadata`` changed, committed (hash holds);
- ``commit-garbage``: the agent commits an unparseable PLAN.yml mid-run.

Also asserted: a tree rewrite makes the finished run's outcome wait (documented); once the
edit is discarded the outcome is committed and nothing runs again; ``status`` says why it
waits (docs/approvals.md: "``plangate status`` shows why"). **Broke** (2): the row is a plain
``executing`` (running false; waiting, problem and reason null).

``plangate audit`` must flag the agent's mid-run commit and not the controller's honest
outcome commit. **Broke** (2: ``commit-inputs``, ``commit-garbage``): the outcome commit,
written onto the text that ran (docs/approvals.md), is ``controller-unexplained: a complete
commit changed the plan's content`` — history then accuses the honest controller.

Defence asserted: action 2 got exactly the approved values (approver Alice, the approval
commit Alice made, the frozen hash, the approved inputs and names), action 1 and 2 each ran
once, the plan's record says ``completed`` with Alice as approver.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, Lab
from test_round2_execution_kit import shared

MUT = r"""import json, os, re, subprocess, sys
sys.stdin.read()
mode, slug = sys.argv[1], sys.argv[2]
repo = os.environ["LAB_REPO"]
path = os.path.join(repo, "plans", slug, "PLAN.yml")
text = open(path, encoding="utf-8").read()
if "approval" in mode:  # the approval: block only (unhashed): the hash holds
    head, _, rest = text.partition("\napproval:\n")
    block, sep, tail = rest.partition("\nexecution:")
    block = re.sub(r"(?m)^  by: \S+", "  by: mallory@example.com", block)
    block = re.sub(r"(?m)^  at: .+$", "  at: '1999-01-01T00:00:00Z'", block)
    block = re.sub(r"(?m)^  commit: [0-9a-f]{40}", "  commit: " + "d" * 40, block)
    block = re.sub(r"(?m)^  plan_hash: sha256:[0-9a-f]{64}", "  plan_hash: sha256:" + "e" * 64, block)
    text = head + "\napproval:\n" + block + sep + tail
if "inputs" in mode:
    text = text.replace('k: "good"', 'k: "evil"').replace('name: "' + slug + '"', 'name: "evil-name"').replace('task: "honest"', 'task: "evil-task"')
if "created" in mode:
    text = text.replace('created: "2026-01-01"', 'created: "2030-01-01"').replace("note: a", "note: evil")
if "garbage" in mode:
    text = "plan: [unclosed\n" + text
open(path, "w", encoding="utf-8").write(text)
if mode.startswith("commit"):
    env = dict(os.environ, GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
               GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com")
    for _ in range(50):
        r = subprocess.run(["git", "commit", "-q", "-m", "agent edit " + slug, "--", path], cwd=repo, env=env, capture_output=True)
        if r.returncode == 0:
            break
        import time; time.sleep(0.1)
print(json.dumps({"ok": True}))
"""

MODES = [
    "tree-approval",
    "commit-approval",
    "tree-inputs",
    "commit-inputs",
    "commit-created",
    "commit-garbage",
]


def _plan(slug: str) -> str:
    return f"""\
plan:
  name: "{slug}"
  task: "honest"
  status: pending_approval
  created: "2026-01-01"
metadata: {{note: a}}
inputs: {{k: "good"}}
available_tools: [{{name: mut}}, {{name: rec}}]
actions:
  - {{id: 1, tool: mut, why: "an outside system", params: {{mode: "{slug}", slug: "{slug}"}}}}
  - {{id: 2, tool: rec, why: "record", needs: [1], params: {{tag: "{slug}", by: "$<approval.by>", at: "$<approval.at>", commit: "$<approval.commit>", ph: "$<approval.plan_hash>", name: "$<plan.name>", task: "$<plan.task>", hash: "$<plan.hash>", k: "$<inputs.k>", line: "by=$<approval.by> k=$<inputs.k>"}}}}
"""


def _build(root: Path) -> Lab:
    mut = root / "mut.py"
    mut.write_text(MUT)
    lab = Lab(root)
    lab.extra_env = {}  # type: ignore[attr-defined]
    lab.write_config(
        tools=f"mut: {{kind: exec, argv: {json.dumps([sys.executable, str(mut), '{mode}', '{slug}'])}, env: {{LAB_REPO: {json.dumps(str(lab.repo))}, GIT_CONFIG_GLOBAL: {json.dumps(str(root / 'gitconfig'))}, HOME: {json.dumps(str(lab.home))}}}, output_trust: trusted}}\n"
    )
    for m in MODES:
        lab.write(m, _plan(m))
    lab.commit("plans", AGENT)
    lab.run()
    lab.approvals = {m: lab.approve(m) for m in MODES}  # type: ignore[attr-defined]
    lab.frozen = {m: lab.plan(m)["frozen"]["hash"] for m in MODES}  # type: ignore[attr-defined]
    lab.run()
    lab.status()
    lab.audit_report = lab.audit()[1]  # type: ignore[attr-defined]
    lab.waiting_rows = {m: lab.status()[f"plans/{m}"] for m in MODES}  # type: ignore[attr-defined]
    # the edits in the tree are discarded: the waiting outcome is committed, nothing reruns
    lab.git("checkout", "--", *(f"plans/{m}/PLAN.yml" for m in MODES if m.startswith("tree")))
    lab.run()
    lab.after_rows = {m: lab.status()[f"plans/{m}"] for m in MODES}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r11-midrun", _build)


@pytest.mark.parametrize("mode", MODES)
def test_later_actions_see_the_approved_values(lab: Lab, mode: str) -> None:
    calls = lab.calls(mode)
    assert len(calls) == 1, calls
    got = json.loads(calls[0]["stdin"])
    assert got["by"] == "alice@example.com", got
    assert got["commit"] == lab.approvals[mode], got  # type: ignore[attr-defined]
    assert got["ph"] == got["hash"] == lab.frozen[mode], got  # type: ignore[attr-defined]
    assert not got["at"].startswith("1999"), got
    assert (got["name"], got["task"], got["k"]) == (mode, "honest", "good"), got
    assert got["line"] == "by=alice@example.com k=good", got


COMMITTED = [m for m in MODES if m.startswith("commit")]


@pytest.mark.parametrize("mode", MODES)
def test_the_record_names_alice_once(lab: Lab, mode: str) -> None:
    row = lab.after_rows[mode]  # type: ignore[attr-defined]
    assert row["status"] == "completed", row
    assert len(lab.calls(mode)) == 1
    assert row["approver"] == "alice@example.com", row
    assert lab.subjects(mode).count(f"plangate: start plans/{mode}") == 1


@pytest.mark.parametrize(
    "mode",
    [
        # round 11: the audit called the controller's outcome commit (the approved text
        # restored over the agent's mid-run edit) controller-unexplained; fixed since
        pytest.param(m)
        for m in COMMITTED
    ],
)
def test_the_audit_blames_the_agent_not_the_controller(lab: Lab, mode: str) -> None:
    findings = [f for f in lab.audit_report.get("findings", []) if f.get("plan") == f"plans/{mode}"]  # type: ignore[attr-defined]
    text = json.dumps(findings)
    if mode == "commit-created":
        # an edit of unhashed fields alone is no finding (until round 81's fix the agent's
        # commit also carried the run's uncommitted execution: block, which was flagged)
        assert findings == [], findings
        return
    assert "agent@example.com" in text, findings  # the agent's mid-run commit is flagged
    unexplained = [f for f in findings if "controller-unexplained" in json.dumps(f)]
    assert unexplained == [], unexplained


# round 11: a finished run whose outcome waited on uncommitted edits showed as plain
# `executing` (running false, waiting/problem/reason null); fixed since
@pytest.mark.parametrize("mode", [m for m in MODES if m.startswith("tree")])
def test_status_says_why_the_outcome_waits(lab: Lab, mode: str) -> None:
    row = lab.waiting_rows[mode]  # type: ignore[attr-defined]
    said = json.dumps({k: row.get(k) for k in ("problem", "reason", "waiting")})
    assert "uncommitted" in said or "edit" in said, row
