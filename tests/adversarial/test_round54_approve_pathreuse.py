"""Round 54, honest flows the round-51 rule refuses: an agent's own plan, drafted outside the
plans folder at a path an approver once wrote to (or beside a plan of hers that looks alike),
moved into a plan folder. The approver wrote none of it; she must be able to approve it.

docs/approvals.md ("Who changed the content", round 51): a plan git pairs from a file outside
the plan paths takes "the writers of its text followed back: the authors of its bytes ...,
the makers of every edit in place of that path, and, at the commit that added it, the writers
of what git pairs it from in turn (there with ``--find-copies-harder`` over the plans
folder ...)". The brief of round 54: an approver refused ``E_SELF_APPROVAL`` for a plan she
did not write is a break too.

Config: the bench's. Alice (an allowed approver) first commits, in her own commits:
``drafts/reuse-path.yml`` (two lines of meeting notes), ``drafts/reuse-deleted.yml`` (a
to-do line, ``git rm``'d by her in a later commit), a one-line typo fix in the agent's
draft ``drafts/reuse-scratch.yml`` (the agent's earlier plan, which the agent then copied to
``plans/first-scratch`` and Bob approved: she cannot approve that one, rightly), and
``plans/alice-runbook/PLAN.yml``, a two-step "restart web" runbook of hers left ``draft``.
Then the agent, in its own commits, writes its own plans (no byte of hers):

- ``reuse-path``: its nightly-report plan written over ``drafts/reuse-path.yml`` (every line
  replaced), then ``git mv`` to ``plans/reuse-path/PLAN.yml``.
- ``reuse-deleted`` (control): the same at the path she had deleted (a new file there).
- ``reuse-scratch``: the scratch draft ``drafts/reuse-scratch.yml`` rewritten whole with a new
  plan, then ``git mv`` to ``plans/reuse-scratch/PLAN.yml``.
- ``look-alike``: its own "restart api" runbook (other name, task, whys and service; the
  same tool, step names and pool as her draft, as every runbook for that tool has) committed
  as ``drafts/look-alike.yml``, then ``git mv`` into ``plans/look-alike``: git's
  ``--find-copies-harder`` pairs the draft with her runbook (C061).
- ``look-alike-direct`` (control): the same text committed straight into its plan folder.

Alice approves all five in one commit; two passes; ``plangate audit --json``.

Asserted (the honest flow): each plan runs on her approval (``rec`` called, ``completed``), no
``E_SELF_APPROVAL``, and the audit lists the run valid.

Seen: ``reuse-deleted``, ``look-alike-direct`` ran. BROKE (strict xfails): ``reuse-path``
(refused ``E_SELF_APPROVAL``: "alice@example.com wrote or changed this plan's content";
she wrote two lines of notes that the agent's commit replaced entirely), ``reuse-scratch``
(her typo fix in the earlier draft makes her a writer of every later text at that path) and
``look-alike`` (a plan she never saw, paired with hers by likeness alone: the same text
committed straight into the plans folder runs). Fix direction: follow edits in place only
through the bytes that survive them (a commit that replaces a file whole starts a new
lineage, as a delete and add already does), and pair an added file with an unchanged plan
only when that plan is its likeliest source by more than the shape every plan for a tool
shares (or accept this and document the look-alike case beside ``cp-edit``).

Fixed (2026-11-29): text outside the plan paths is followed by what survives, as git judges
it: a change git does not pair with the path's old version is a rewrite, where that text was
made; the walk never goes back past it. ``reuse-path`` and ``reuse-scratch`` run on her
approval: her notes and her typo fix did not survive the agent's rewrite. ``reuse-scratch``
keeps its honest-flow expectation on purpose: the rule "anyone who changed a plan's content
is its changer" is about a plan (a folder, whose history the approver approves, and where a
rewrite-and-restore must not shed a writer); a draft outside the plan paths is no plan, only
a source, and what it brings is the text it holds. ``look-alike`` runs: a copy that only
``--find-copies-harder`` finds (its source unchanged and left in place) counts from git's
score 66 (``COPY_SCORE``), and her runbook scores 61.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text
from test_round2_execution_kit import shared

VIDS = ["reuse-path", "reuse-deleted", "reuse-scratch", "look-alike", "look-alike-direct"]
BROKEN: dict[str, object] = {}


def runbook(name: str, task: str, whys: tuple[str, str], tag: str, status: str) -> str:
    steps = "".join(
        f"""\
  - id: {i}
    tool: rec
    why: "{why}"
    params:
      tag: "{tag}"
      step: {step}
      pool: frontend
      timeout_s: 30
"""
        for i, (why, step) in enumerate(zip(whys, ("drain", "restart"), strict=True), 1)
    )
    return (
        f'plan:\n  name: "{name}"\n  task: "{task}"\n  status: {status}\n'
        "available_tools:\n  - name: rec\nactions:\n" + steps
    )


def _agents(vid: str) -> str:
    return runbook(
        f"Weekly api restart ({vid})",
        "restart api as every week",
        ("drain first", "then restart"),
        vid,
        "pending_approval",
    )


def _other(vid: str) -> str:
    """The agent's nightly report: a shape like neither her runbook nor the first plan."""
    return f"""\
plan:
  name: "Nightly report ({vid})"
  task: "send the nightly numbers to the data team, as every night since March"
  status: pending_approval
metadata: {{owner: agent, ticket: DATA-1182}}
inputs:
  channel: data-team
  window_hours: 24
available_tools:
  - name: rec
    description: "the report sender"
actions:
  - id: 1
    tool: rec
    why: "post the numbers of the last day to the team's channel"
    params:
      tag: "{vid}"
      channel: "$<inputs.channel>"
      hours: "$<inputs.window_hours>"
      format: markdown
"""


def _build(root: Path) -> Lab:
    lab = Lab(root)
    drafts = lab.repo / "drafts"
    drafts.mkdir()
    (drafts / "reuse-scratch.yml").write_text(plan_text("first-scratch", status="draft"))
    lab.commit("agent drafts its first plan", AGENT)
    (drafts / "reuse-path.yml").write_text("# meeting notes\n- ask ops about the pool\n")
    (drafts / "reuse-deleted.yml").write_text("# alice's to-do\n- rotate keys\n")
    scratch = drafts / "reuse-scratch.yml"
    scratch.write_text(scratch.read_text().replace("attack variant", "attack: variant"))
    lab.write(
        "alice-runbook",
        runbook(
            "Restart web (January)",
            "the January memory leak",
            ("take the pool out of rotation", "restart it"),
            "alice-runbook",
            "draft",
        ),
    )
    lab.commit("alice: notes, a typo fix, her runbook", ALICE)
    lab.git("rm", "-q", "drafts/reuse-deleted.yml")
    lab.commit("alice drops her to-do", ALICE)
    (lab.repo / "plans/first-scratch").mkdir(parents=True)
    shutil.copyfile(scratch, lab.repo / "plans/first-scratch/PLAN.yml")
    text = (lab.repo / "plans/first-scratch/PLAN.yml").read_text()
    (lab.repo / "plans/first-scratch/PLAN.yml").write_text(
        text.replace("status: draft", "status: pending_approval")
    )
    lab.commit("agent submits its first plan", AGENT)
    lab.run()
    lab.approve("first-scratch", BOB)
    lab.run()
    for vid in ("reuse-path", "reuse-deleted", "reuse-scratch"):
        (drafts / f"{vid}.yml").write_text(_other(vid))
    (drafts / "look-alike.yml").write_text(_agents("look-alike"))
    lab.write("look-alike-direct", _agents("look-alike-direct"))
    lab.commit("agent drafts its weekly plans", AGENT)
    for vid in ("reuse-path", "reuse-deleted", "reuse-scratch", "look-alike"):
        (lab.repo / f"plans/{vid}").mkdir(parents=True)
        lab.git("mv", f"drafts/{vid}.yml", f"plans/{vid}/PLAN.yml")
    lab.commit("agent submits its weekly plans", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r54-pathreuse", _build)


def test_the_bench_ran_the_first_plan_on_bobs_approval(lab: Lab) -> None:
    assert len(lab.calls("first-scratch")) == 1, lab.codes("first-scratch")


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_the_agents_own_plan_runs_on_her_approval(lab: Lab, vid: str) -> None:
    assert "E_SELF_APPROVAL" not in lab.codes(vid), lab.codes(vid)
    assert lab.calls(vid), lab.codes(vid)
    assert lab.plan(vid)["plan"]["status"] == "completed", lab.codes(vid)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_the_audit_lists_the_run_valid(lab: Lab, vid: str) -> None:
    report = lab.report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert [e.get("approval_valid") for e in runs] == [True], runs
