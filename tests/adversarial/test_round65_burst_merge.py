"""Round 65, bursts: ONE merge (and one octopus) approving many plans, the merged side read
once per merge (docs/performance.md, ``lifecycle._SidePlans``).

Lab (one, local mode, fake commit dates): the agent commits 25 honest ``rec`` plans and the
attack plans on main (``alice-own`` is written by Alice); a pass freezes them. Alice approves
on side branches and merges them herself (the merge is the request, docs/approvals.md); one
pass after the merges:

- ``alice/batch`` (``--no-ff``): ONE commit of Alice's approving ``ok-01``..``ok-16`` and the
  plans below, then the agent's commits said per variant, then a merge of ``alice/inner``.
- ``alice/o1``, ``alice/o2``, ``agent/o3``: one octopus merge by Alice; ``ok-17``..``ok-24``
  and ``oct-edit`` approved on o1/o2, ``oct-edit``'s target changed by the agent on o3.

Not approvable (asserted: the tool never ran, no valid execution in the audit; each held):
``after-edit`` (the agent changes the approved plan's target on her branch after her
approval: E_PLAN_HASH_MISMATCH), ``after-edit2`` (the same in two commits, a comment first),
``rename-edit`` (``git mv`` + new target: E_PLAN_HASH_MISMATCH), ``removed`` (deleted after
the approval), ``alice-own`` (her own plan: E_SELF_APPROVAL), ``new-approved`` (a new plan
added already ``approved`` on her branch: E_PLAN_NOT_FROZEN), ``inner-edit`` (the agent's
change after her approval on a branch merged into her branch), ``oct-edit`` (approval on one
octopus parent, the change on another: E_PLAN_HASH_MISMATCH).

Honest (asserted: ran exactly once, ``completed``, one valid execution in the audit credited
to Alice, one start and one outcome in ``git log``, batched groups included; held):
``ok-01``..``ok-24``, ``inner-ok``; ``renamed`` (moved with its bytes after her approval) ran
once under its new name.

A file beside the plan (docs/formats.md: a PLAN.json beside a PLAN.yml is a note, left alone):
``second-file`` (the agent's PLAN.json added on her branch after her approval),
``json-before`` (added on her branch before it), ``note-md`` (a NOTES.md after it),
``second-main`` (the PLAN.json committed on main, her approval on main), ``note-solo`` (as
``note-md`` on a branch ``alice/solo`` approving only that plan, merged alone). Then the agent
deletes the PLAN.json files and Alice approves again where the plan still waits. Asserted:
not refused E_SELF_APPROVAL, ran once with the frozen target.

BROKE (strict xfails): ``second-file``, ``json-before``, ``note-md``, ``note-solo`` (so not
the burst path: any merge): her merge is refused
``E_SELF_APPROVAL: alice@example.com wrote or changed this plan's content`` (she wrote
nothing: the agent's note came through her merge), and her new approval after the note is
gone is refused the same: the agent's plan can never be approved by her. The folder rule
(docs/approvals.md "Who changed the content": whoever commits any file into a plan's folder
is a writer) counts the MERGER as committing the agent's note; the same section says a
merge's writers are the merged commits, "not the person who merged". Should: the merged
commits' makers (the agent) are the folder's writers, not the approver merging them. Held:
``second-main`` (the same note on main: ran on her approval).

Fixed (2026-11-29): the history index credited the merge's first-parent diff in a plan's
folder (the agent's note, a plan file below the folder) to the merge's author and committer.
A file a merge brings as a merged branch changed it (that very blob, since its merge base with
the first parent) is now written by the merged commits' makers only (``Lifecycle._brought``;
``merged_authors`` counts them): the agent is the folder's writer, Alice is not, and her
approval stands, on the batch merge and the one-plan merge alike. Bytes a merge writes itself
(a conflict resolved by hand) stay the merger's; a note still makes whoever committed it a
writer (docs/approvals.md, "Who changed the content").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, valid_runs
from policykit import DatedClock
from test_round2_execution_kit import shared

OK = [f"ok-{i:02d}" for i in range(1, 25)]
ATTACK = [
    "after-edit",
    "after-edit2",
    "rename-edit",
    "removed",
    "alice-own",
    "new-approved",
    "inner-edit",
    "oct-edit",
]
HONEST = [*OK, "inner-ok"]
NOTES = ["second-file", "second-main", "json-before", "note-md", "note-solo"]
BROKEN: dict[str, object] = {}


def plan(slug: str, target: str = "staging") -> str:
    return (
        f'plan:\n  name: "{slug}"\n  task: "agent task {slug}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n"
        f'    why: "agent: record {slug}"\n    params: {{tag: "{slug}", target: "{target}"}}\n'
    )


def retarget(lab: Lab, slug: str, new: str = "prod-DROP") -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    path.write_text(path.read_text().replace('target: "staging"', f'target: "{new}"'))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = DatedClock(lab, AGENT, step=10)
    for v in [*HONEST, *ATTACK, "renamed", *NOTES]:
        if v not in ("alice-own", "new-approved"):
            lab.write(v, plan(v))
    c.commit("agent plans")
    lab.write("alice-own", plan("alice-own"))
    c.commit("alice: my plan", ALICE)
    c.run()
    c.git("checkout", "-q", "-b", "alice/batch")
    data = {
        "plan": {"name": "second-file", "task": "t", "status": "approved"},
        "available_tools": [{"name": "rec"}],
        "actions": [
            {
                "id": 1,
                "tool": "rec",
                "why": "w",
                "params": {"tag": "second-file", "target": "prod-DROP"},
            }
        ],
    }
    lab.write("json-before", json.dumps(data).replace("second-file", "json-before"), "PLAN.json")
    c.commit("agent: json before her approval")
    c.approve(
        [
            *OK[:16],
            "note-md",
            "json-before",
            "after-edit",
            "after-edit2",
            "rename-edit",
            "removed",
            "second-file",
            "renamed",
            "alice-own",
        ]
    )
    retarget(lab, "after-edit")
    c.commit("agent: tweak")
    p = lab.repo / "plans" / "after-edit2" / "PLAN.yml"
    p.write_text(p.read_text() + "# reviewed\n")
    c.commit("agent: comment")
    retarget(lab, "after-edit2")
    c.commit("agent: tweak 2")
    c.git("mv", "plans/rename-edit", "plans/rename-edit-2")
    retarget(lab, "rename-edit-2")
    c.commit("agent: move")
    c.git("mv", "plans/renamed", "plans/renamed-2")
    c.commit("agent: move bytes")
    c.git("rm", "-q", "-r", "plans/removed")
    c.commit("agent: remove")
    lab.write("second-file", json.dumps(data), "PLAN.json")
    c.commit("agent: json")
    lab.write("note-md", "# notes\n\nrollback: none needed\n", "NOTES.md")
    c.commit("agent: notes")
    lab.write("new-approved", plan("new-approved").replace("pending_approval", "approved"))
    c.commit("agent: one more, approved")
    # an inner branch of Alice's, merged into the batch branch
    c.git("checkout", "-q", "-b", "alice/inner", "main")
    c.approve(["inner-ok", "inner-edit"])
    retarget(lab, "inner-edit")
    c.commit("agent: inner tweak")
    c.git("checkout", "-q", "alice/batch")
    c.git("merge", "-q", "--no-ff", "-m", "merge alice/inner", "alice/inner", who=ALICE)
    # octopus branches
    c.git("checkout", "-q", "-b", "alice/o1", "main")
    c.approve(OK[16:20])
    c.git("checkout", "-q", "-b", "alice/o2", "main")
    c.approve([*OK[20:24], "oct-edit"])
    c.git("checkout", "-q", "-b", "agent/o3", "main")
    retarget(lab, "oct-edit")
    c.commit("agent: oct tweak")
    c.git("checkout", "-q", "-b", "alice/solo", "main")
    c.approve(["note-solo"])
    lab.write("note-solo", "# notes\n", "NOTES.md")
    c.commit("agent: notes")
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "merge alice/solo", "alice/solo", who=ALICE)
    c.git("merge", "-q", "--no-ff", "-m", "merge alice/batch", "alice/batch", who=ALICE)
    c.git("merge", "-q", "--no-ff", "-m", "octopus", "alice/o1", "alice/o2", "agent/o3", who=ALICE)
    # second-main: the agent's PLAN.json beside a frozen PLAN.yml on main, then her approval
    lab.write("second-main", json.dumps(data).replace("second-file", "second-main"), "PLAN.json")
    c.commit("agent: json on main")
    c.approve(["second-main"])
    c.run()
    c.run()
    rows = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    lab.first = {v: json.dumps(rows.get(f"plans/{v}")) for v in NOTES}  # type: ignore[attr-defined]
    # the remedy (docs/errors.md, E_PLAN_AMBIGUOUS): the agent deletes its PLAN.json; Alice
    # approves the plan (the agent's, untouched since it was frozen) again
    c.git(
        "rm",
        "-q",
        "plans/second-file/PLAN.json",
        "plans/second-main/PLAN.json",
        "plans/json-before/PLAN.json",
    )
    c.commit("agent: one plan file per folder")
    c.run()
    for v in NOTES:
        if lab.plan(v)["plan"]["status"] == "pending_approval":
            c.approve([v], msg=f"approve {v} again")
    c.run()
    lab.status()
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r65-merge", _build)


@pytest.mark.parametrize("vid", cases(ATTACK, ATTACK, BROKEN))  # type: ignore[arg-type]
def test_a_plan_the_merge_may_not_approve_does_not_run(lab: Lab, vid: str) -> None:
    calls = lab.calls(vid) + lab.calls(f"{vid}-2")
    assert calls == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert valid_runs(lab.report, f"{vid}-2") == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_each_plan_the_merge_approves_runs_once_credited_to_alice(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    row = lab.status()[f"plans/{vid}"]
    assert row["status"] == "completed", row
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs
    subjects = lab.subjects(vid)
    assert sum(s.startswith("plangate: start ") for s in subjects) == 1, subjects
    assert sum(s.startswith("plangate: complete ") for s in subjects) == 1, subjects


def test_a_moved_version_runs_at_most_once(lab: Lab) -> None:
    assert len(lab.calls("renamed")) <= 1


@pytest.mark.parametrize("vid", cases(NOTES, NOTES, BROKEN))  # type: ignore[arg-type]
def test_a_note_beside_her_approved_plan_does_not_make_her_its_writer(lab: Lab, vid: str) -> None:
    assert "E_SELF_APPROVAL" not in lab.first[vid], lab.first[vid]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    assert all("prod-DROP" not in c["stdin"] for c in lab.calls(vid))
