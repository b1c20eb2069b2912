"""Round 35, who may reject: becoming a content's *producer* by writing it on the watched
branch before its real writer's commit arrives (round 34's producers, fresh).

docs/approvals.md: a plan's authors who may withdraw it are its producers, "the makers of
the first commit on the watched branch that made that content exist where nobody had made
it before (for a merge, the commits of the merged branch that wrote it; for a converted
source, its writers; for a draft, its writer)"; "whoever brings the same content anywhere
later ... carries it", and a carrier "cannot reject or abort it ... and cannot veto its
version".

Mallory is no approver. The agent writes every plan; Mallory only copies what she sees:

- ``pre-copy``: the agent's pull-request branch adds ``plans/pre-copy``; before it is merged
  Mallory commits the same bytes on main as ``plans/pre-copy-m``; the agent merges the
  branch (``--no-ff``); Mallory rejects her copy; Alice approves the agent's plan.
- ``pre-same``: as ``pre-copy`` but Mallory's copy is at the same path (the merge of the
  identical add changes nothing); she then rejects ``plans/pre-same``; Alice approves.
- ``cherry``: Mallory cherry-picks the agent's unmerged commit onto main (the agent stays
  its author, Mallory is its committer); the branch is merged; she rejects; Alice approves.
- ``pre-draft``: before the branch is merged Mallory commits the agent's plan text as
  ``plans/pre-draft/draft.yml`` (a draft in the plan's folder); the branch is merged; she
  rejects the plan; Alice approves.
- ``pre-edit``: ``plans/pre-edit`` is the agent's (frozen); the agent's branch changes its
  task; before the merge Mallory makes the same change on main; the branch is merged (the
  same change on both sides); she rejects the plan; Alice approves the new version.
- ``ours-copy``: Mallory's own branch adds a copy of the agent's unmerged plan as
  ``plans/ours-copy-m`` and rejects it; she merges her branch ``-s ours`` (nothing lands);
  then the agent's branch is merged; Alice approves ``plans/ours-copy``.
- ``cv-copy``: the agent commits ``plans/cv-copy/PLAN.json``; before the controller's pass
  Mallory commits a byte copy at ``plans/cv-copy-m/PLAN.json``; both are converted; she
  rejects the agent's converted plan; Alice approves it.
- ``cv-copy-own``: as ``cv-copy`` but she rejects her own converted copy.
- ``cv-stray``: as ``cv-copy`` but her byte copy is a stray file ``plans/misc/x.json``.
- ``cv-draft``: the agent commits ``plans/cv-draft/PLAN.json``; before the controller
  converts it Mallory commits its conversion (``plangate convert``) as ``draft.yml`` in the
  same folder; she rejects the converted plan; Alice approves.
- ``ctl``: Alice approves (control).

Asserted: Mallory produced nothing, so none of her rejections withdraws the agent's plan:
Alice's approval runs it exactly once. The fresh-clone audit lists no decision of hers.

The agent's branch commits are made (and dated) a second before Mallory's copies; no
controller pass runs between her copies and the merge (the controller would freeze her copy
and the merge would then conflict), as when both land in one push window.

Results: ``ours-copy``, the four ``cv-*`` and ``ctl`` held. BROKE (strict xfails):
``pre-copy`` (Alice's approval refused ``E_VERSION_WITHDRAWN``: "plans/pre-copy-m was set
rejected by mallory@example.com"), ``pre-same``, ``cherry``, ``pre-draft`` and ``pre-edit``
(her rejection at the plan's own path counted: the plan stays ``rejected``, Alice's approval
is ``E_ILLEGAL_TRANSITION``). The fresh-clone audit agrees with the controller (it lists her
rejections under ``decisions``).

Fixed (the same session): a content's producers are the people in *every* commit that made
it (a copy landed first, a cherry-pick, a draft or the same edit made on the branch, and the
agent's own commit merged later: only someone in both may withdraw it as its author), so the
order in which two independent makings reach the branch decides nothing.

Changed (2026-12-07, fix124o; round 122, ``author-withdrawal-lost-to-a-raced-copy``): who may
withdraw a plan as its author is read from the makings of its version AT the plan's own
folder first (docs/approvals.md, "A race is read at the plan's own folder"), so the agent
keeps the right to withdraw ``plans/pre-copy`` that Mallory's copy at another folder took
away. Mallory made ``plans/pre-copy-m`` there: her rejection of it now withdraws that copy of
hers, and the fresh-clone audit lists it; it vetoes no version (the producers are the people
in both makings: nobody), so Alice's approval of the agent's plan still runs it once. Her
rejections at the agent's plans (the same path, a cherry-pick, a draft in its folder, the
same edit) still count for nothing, and the audit lists no decision of hers there.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared
from test_round4_runs_convert import _ap, _lab, _put

YML = ["pre-copy", "pre-same", "cherry", "pre-draft", "pre-edit", "ours-copy", "ctl"]
CONV = ["cv-copy", "cv-copy-own", "cv-stray", "cv-draft"]
FOUND: dict[str, pytest.MarkDecorator] = {}  # fixed: see the docstring


def _set(lab: Lab, slug: str, status: str) -> None:
    text = lab.git("show", f"HEAD:plans/{slug}/PLAN.yml")
    new = text.replace('status: "pending_approval"', f"status: {status}", 1).replace(
        "status: pending_approval", f"status: {status}", 1
    )
    assert new != text, text
    _put(lab, f"plans/{slug}/PLAN.yml", new)


def _edit(lab: Lab, slug: str) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text()
    new = text.replace(f'task: "attack variant {slug}"', f'task: "attack variant {slug}, v2"')
    assert new != text, text
    path.write_text(new)


def _src(tag: str) -> str:
    return json.dumps(_ap(tag), indent=2) + "\n"


def _build(root: Path) -> Lab:
    lab = _lab(root)
    lab.write("ctl", plan_text("ctl"))
    lab.write("pre-edit", plan_text("pre-edit"))
    lab.commit("agent adds ctl", AGENT)
    lab.run()
    base = lab.head()
    # the agent's pull-request branch
    lab.git("checkout", "-q", "-b", "pr")
    shas = {}
    for vid in ("pre-copy", "pre-same", "cherry", "pre-draft", "ours-copy"):
        lab.write(vid, plan_text(vid))
        shas[vid] = lab.commit(f"agent adds {vid}", AGENT)
    _edit(lab, "pre-edit")
    lab.commit("agent edits pre-edit", AGENT)
    lab.git("checkout", "-q", "-b", "m", base)
    time.sleep(1.05)
    lab.write("ours-copy-m", plan_text("ours-copy"))
    lab.commit("mallory copies ours-copy", MALLORY)
    lab.set_status("ours-copy-m", "rejected")
    lab.commit("mallory rejects her copy", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-s", "ours", "-m", "merge m", "m", who=MALLORY)
    _edit(lab, "pre-edit")
    lab.commit("mallory edits pre-edit as the pr does", MALLORY)
    time.sleep(1.05)
    # Mallory produces the same content on main first
    lab.write("pre-copy-m", plan_text("pre-copy"))
    lab.commit("mallory copies pre-copy", MALLORY)
    lab.write("pre-same", plan_text("pre-same"))
    lab.commit("mallory copies pre-same", MALLORY)
    lab.git("cherry-pick", shas["cherry"], who=MALLORY)
    lab.write("pre-draft", plan_text("pre-draft"), filename="draft.yml")
    lab.commit("mallory drafts pre-draft", MALLORY)
    # converted sources: the agent's commit, then Mallory's copies, one push
    for vid in CONV:
        _put(lab, f"plans/{vid}/PLAN.json", _src(vid))
    lab.commit("agent adds sources", AGENT)
    _put(lab, "plans/cv-copy-m/PLAN.json", _src("cv-copy"))
    _put(lab, "plans/cv-copy-own-m/PLAN.json", _src("cv-copy-own"))
    _put(lab, "plans/misc/x.json", _src("cv-stray"))
    converted = lab.cli("convert", str(lab.repo / "plans/cv-draft/PLAN.json"))
    assert converted.returncode in (0, 1) and "plan:" in converted.stdout, converted.stderr
    _put(lab, "plans/cv-draft/draft.yml", converted.stdout)
    lab.commit("mallory copies sources", MALLORY)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=AGENT)
    lab.run()
    time.sleep(1.05)
    for slug in (
        "pre-copy-m",
        "pre-same",
        "cherry",
        "pre-draft",
        "pre-edit",
        "cv-copy",
        "cv-copy-own-m",
    ):
        _set(lab, slug, "rejected")
        lab.git("add", "-A")
        lab.git("commit", "-q", "-m", f"mallory rejects {slug}", who=MALLORY)
    for slug in ("cv-stray", "cv-draft"):
        _set(lab, slug, "rejected")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "mallory rejects more", who=MALLORY)
    lab.run()
    for slug in [*YML, *CONV]:
        try:
            _set(lab, slug, "approved")
        except AssertionError:  # left rejected: Alice's approval is then an illegal change
            text = (lab.repo / "plans" / slug / "PLAN.yml").read_text()
            _put(
                lab, f"plans/{slug}/PLAN.yml", text.replace("status: rejected", "status: approved")
            )
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "alice approves", who=ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r35-preproduce", _build)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in YML + CONV]
)
def test_a_copier_first_withdraws_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


def test_the_audit_counts_no_copier_decision(lab: Lab) -> None:
    """None at the agent's plans; her rejection of her own copy at the folder she made it in
    (``pre-copy-m``) is hers (2026-12-07, fix124o: see the docstring)."""
    _, report = lab.audit()
    decisions = [
        (d["plan"], d["kind"]) for d in report.get("decisions", []) if d["by"] == MALLORY[1]
    ]
    assert decisions == [("plans/pre-copy-m", "reject")], report.get("decisions")
