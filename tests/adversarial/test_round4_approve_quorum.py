"""Round 4, approval side: a quorum counts only approvals that still stand, made by distinct
allowed people in their own approval requests, and the rule a plan falls under is the one its
tools really fit.

Config: ``plans/q3/**`` needs three approvals, ``plans/q2/**`` two, risk high (the ``danger``
tool) two. Alice, Bob, Carol are approvers (Bob and Carol through ``*@ops.example.com``).

Attacks:

- lapsed votes: after Alice's vote (partial), Bob sets ``approved`` and, before the controller
  acts, takes it back himself (``pending_approval``), or the author sets it back, or Bob sets
  ``draft`` and the agent re-submits; then Carol approves (Alice + Carol + a lapsed Bob = 3);
- inner commits: Alice sets ``approved`` in a commit of a branch (unsigned; once with a
  ``Plan-Approved:`` trailer) that Bob merges: only Bob is an approval;
- ``coauthor``: Alice's approval commit carries ``Co-authored-by: Bob``: one approval;
- ``mix``: Alice's content edit on a side branch is merged by the agent together with its own
  edit of another line (the result is produced by no single commit): Alice then approves;
- tool names that are the high-risk tool only to a careless eye (upper case, a full-width
  letter; a zero-width space and a Latin look-alike were tried too: schema-invalid, dropped
  for time) to get a one-approval rule.

Defence: the plan waits (partial / refused / invalid), nothing of it runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_approval_authors import shared_lab

LAPSES = ["lapse-self", "lapse-author", "lapse-draft"]
INNER = ["inner", "inner-trailer", "coauthor"]
TOOLS = {"upper": "DANGER", "full": "\uff44anger"}
EXTRA = """\
  - id: 2
    tool: rec
    why: "second"
    params:
      tag: "mix"
      other: o1
"""


def _path(vid: str) -> str:
    return f"q3/{vid}" if vid in LAPSES else f"q2/{vid}" if vid in INNER else vid


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    rec = json.dumps([sys.executable, str(root / "rec.py"), "{tag}"])
    log = json.dumps(str(root / "ran.log"))
    lab = Lab(
        root,
        approval="""\
        rules:
          - match: {paths: ["plans/q3/**"]}
            require: [{count: 3}]
          - match: {paths: ["plans/q2/**"]}
            require: [{count: 2}]
          - match: {risk: high}
            require: [{count: 2}]
        """,
        tools=f"danger: {{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}, risk: high}}\n",
    )
    for vid in LAPSES + INNER + ["honest3"]:
        lab.write(_path(vid) if vid != "honest3" else "q3/honest3", plan_text(vid))
    lab.write("mix", plan_text("mix", params="note: v1\n", extra_actions=EXTRA))
    for vid, name in TOOLS.items():
        text = plan_text(vid).replace("- name: rec", f"- name: {json.dumps(name)}")
        lab.write(vid, text.replace("tool: rec", f"tool: {json.dumps(name)}"))
    lab.commit("agent adds the plans", AGENT)
    lab.run()  # freeze
    for vid in [*LAPSES, "honest3"]:
        lab.approve(f"q3/{vid}", ALICE)
    lab.run()  # partial: Alice
    lab.approve("q3/honest3", BOB)
    lab.approve("q3/lapse-self", BOB)
    lab.set_status("q3/lapse-self", "pending_approval")
    lab.commit("bob takes his approval back", BOB)
    lab.approve("q3/lapse-author", BOB)
    lab.set_status("q3/lapse-author", "pending_approval")
    lab.commit("the author sets it back", AGENT)
    lab.approve("q3/lapse-draft", BOB)
    lab.set_status("q3/lapse-draft", "draft")
    lab.commit("bob sends it back to draft", BOB)
    lab.set_status("q3/lapse-draft", "pending_approval")
    lab.commit("the agent submits it again", AGENT)
    for vid in LAPSES:
        lab.approve(f"q3/{vid}", CAROL)
    lab.run()  # honest3: Alice + Bob (partial), then Carol below
    lab.approve("q3/honest3", CAROL)
    # inner commits on a branch Bob merges
    lab.git("checkout", "-q", "-b", "side")
    lab.approve("q2/inner", ALICE)
    lab.set_status("q2/inner-trailer", "approved")
    digest = lab.plan("q2/inner-trailer")["frozen"]["hash"]
    lab.commit(f"approve\n\nPlan-Approved: plans/q2/inner-trailer {digest}", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=BOB)
    lab.approve(
        "q2/coauthor",
        ALICE,
        message="approve coauthor\n\nCo-authored-by: Bob <bob@ops.example.com>",
    )
    # mix: Alice edits the task on a branch, the agent another line on main, the agent merges
    lab.git("checkout", "-q", "-b", "alice-mix")
    path = lab.repo / "plans" / "mix" / "PLAN.yml"
    path.write_text(path.read_text().replace('task: "attack', 'task: "ALICE attack'))
    lab.commit("alice edits the task", ALICE)
    lab.git("checkout", "-q", "main")
    path.write_text(path.read_text().replace("other: o1", "other: o2"))
    lab.commit("agent edits action 2", AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice-mix", "alice-mix", who=AGENT)
    lab.run()  # freezes mix
    lab.approve("mix", ALICE)
    for vid in TOOLS:
        lab.approve(vid, ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r4-quorum", _build)


def test_three_people_who_still_approve_run_it(lab: Lab) -> None:
    assert len(lab.calls("honest3")) == 1, lab.codes("q3/honest3")


@pytest.mark.parametrize("vid", LAPSES)
def test_a_lapsed_approval_is_no_vote(lab: Lab, vid: str) -> None:
    slug = f"q3/{vid}"
    assert lab.calls(vid) == [], f"ran: {lab.codes(slug)}"
    assert not lab.started(slug)
    approval = lab.plan(slug).get("approval") or {}
    assert approval.get("status") == "partial", lab.codes(slug)
    assert {a["by"] for a in approval["approvals"]} == {ALICE[1], CAROL[1]}, approval


@pytest.mark.parametrize("vid", INNER)
def test_only_the_approval_request_counts_not_inner_commits_or_co_authors(
    lab: Lab, vid: str
) -> None:
    slug = f"q2/{vid}"
    assert lab.calls(vid) == [], f"ran: {lab.codes(slug)}"
    assert not lab.started(slug)
    approval = lab.plan(slug).get("approval") or {}
    assert approval.get("status") == "partial" and len(approval["approvals"]) == 1, approval


def test_content_alice_merged_in_with_other_edits_is_hers(lab: Lab) -> None:
    assert lab.calls("mix") == [], f"ran: {lab.codes('mix')}"
    assert lab.refusal("mix") == "E_SELF_APPROVAL", lab.codes("mix")


@pytest.mark.parametrize("vid", list(TOOLS))
def test_a_look_alike_tool_name_never_runs_on_one_approval(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], f"ran: {lab.codes(vid)}"
    assert not lab.started(vid)
    assert "E_TOOL_UNKNOWN" in lab.codes(vid) or "E_SCHEMA_INVALID" in lab.codes(vid), lab.codes(
        vid
    )
