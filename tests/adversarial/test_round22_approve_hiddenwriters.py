"""Round 22, who may make a plan run: writers hidden behind merges that move or copy a
plan, behind a format conversion's nested plans, behind aliases in ``Co-authored-by:``; and
withdraw rights a non-approver might gain without writing the version.

Config: the bench's (approvers Alice and ``*@ops.example.com``; one approval), plus
``identity_aliases``: ``plus_tags: ["*@ops.example.com"]`` and
``people: [[alice@example.com, a.smith@corp.example]]``.

Self-approval (Bob, or Alice, wrote the content; the agent only moves/copies/merges it;
the writer then approves on main). Defence: ``E_SELF_APPROVAL``, ``rec`` never runs:

- ``merge-move``: Bob adds ``plans/mm-src`` on a side branch; the agent merges it
  ``--no-commit`` and ``git mv``s the folder to ``plans/merge-move`` inside the merge (the
  merged branch never had the plan's final path).
- ``merge-ren``: Bob adds ``plans/mr-src`` on a side branch, the agent renames it there, and
  merges ``--no-ff``.
- ``subtree``: Bob adds ``plans/sub-src`` on a side branch; the agent makes a subtree merge:
  ``merge -s ours --no-commit`` then ``read-tree --prefix=plans/subtree/ -u side:plans/sub-src``.
- ``ours-copy``: Bob adds ``plans/mo-src`` on a side branch; the agent merges it ``-s ours``
  (nothing lands) and then commits the same bytes at ``plans/ours-copy``.
- ``cv-own``: Bob commits an ActionPlan ``PLAN.json`` whose only step is a ``nested_plan``;
  the controller converts it (``plans/cv-own/PLAN.yml`` + ``step-1/PLAN.yml``); Bob approves
  the parent (control of the documented rule).
- ``cv-pin``: the same source at ``plans/cv-pin-src``; the agent writes ``plans/cv-pin``
  pinning the converted nested plan ``plans/cv-pin-src/step-1``; Bob approves ``cv-pin``.
- ``cv-copy``: the agent copies the converted nested plan (the controller wrote that file)
  to ``plans/cv-copy`` with ``status: pending_approval``; Bob approves the copy.
- ``cv-sub``: the agent sets the converted nested plan ``plans/cv-sub-src/step-1`` itself
  ``pending_approval``; Bob approves it.
- ``co-alias``: the agent's commit carries ``Co-authored-by: A Smith <A.Smith@corp.example>``
  (Alice's declared second address, other case); Alice approves.
- ``co-plus``: ``Co-authored-by: Bob CI <bob+ci@ops.example.com>`` (a plus tag); Bob approves.
- ``alias-author``: Alice commits the plan as ``a.smith@corp.example``; she approves as
  ``alice@example.com``.

Withdraw rights (Mallory: no approver, never wrote the version; she rejects the pending
plan, then Alice approves). Defence: the rejection is ignored, ``rec`` runs once:

- ``w-note-first``: Mallory commits ``NOTES.md`` into the folder *before* the agent adds the
  plan there (a writer of "the plan that folder will hold", never of its content).
- ``w-merge-writer``: Mallory merges (``--no-ff``) the agent's branch that adds the plan.

``audit``: a fresh clone's ``plangate audit --json`` agrees: every start it lists is
``approval_valid`` and no refused plan started.

Results: every variant held (no break found in this module).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

SELF = {
    "merge-move": "merge-move",
    "merge-ren": "merge-ren",
    "subtree": "subtree",
    "ours-copy": "ours-copy",
    "cv-own": "cv-own",
    "cv-pin": "cv-pin",
    "cv-copy": "cv-copy",
    "cv-sub": "cv-sub-src/step-1",
    "co-alias": "co-alias",
    "co-plus": "co-plus",
    "alias-author": "alias-author",
}
WITHDRAW = ["w-note-first", "w-merge-writer"]

ALIASES = """\
identity_aliases:
  plus_tags: ["*@ops.example.com"]
  people: [[alice@example.com, a.smith@corp.example]]
"""


def _source(tag: str) -> str:
    inner = {
        "plan_version": 1,
        "title": f"{tag} inner",
        "workspace_id": "/ci",
        "steps": [
            {"step_number": 1, "action": {"type": "rec", "tag": tag}, "description": "inner rec"}
        ],
    }
    return json.dumps(
        {
            "plan_version": 1,
            "title": f"{tag} outer",
            "workspace_id": "/ci",
            "steps": [
                {
                    "step_number": 1,
                    "action": {"type": "nested_plan", "plan": inner},
                    "description": "run inner",
                }
            ],
        }
    )


def _side_merges(lab: Lab) -> None:
    g = lab.git
    # merge-move: the folder moved inside the merge commit
    g("checkout", "-q", "-b", "s-mm")
    lab.write("mm-src", plan_text("merge-move"))
    lab.commit("bob drafts", BOB)
    g("checkout", "-q", "main")
    g("merge", "--no-ff", "--no-commit", "s-mm", who=AGENT)
    g("mv", "plans/mm-src", "plans/merge-move")
    g("commit", "-q", "-m", "merge s-mm", who=AGENT)
    # merge-ren: renamed on the side branch, merged --no-ff
    g("checkout", "-q", "-b", "s-mr")
    lab.write("mr-src", plan_text("merge-ren"))
    lab.commit("bob drafts", BOB)
    g("mv", "plans/mr-src", "plans/merge-ren")
    lab.commit("agent renames", AGENT)
    g("checkout", "-q", "main")
    g("merge", "--no-ff", "-q", "-m", "merge s-mr", "s-mr", who=AGENT)
    # subtree: merge -s ours + read-tree --prefix
    g("checkout", "-q", "-b", "s-sub")
    lab.write("sub-src", plan_text("subtree"))
    lab.commit("bob drafts", BOB)
    g("checkout", "-q", "main")
    g("merge", "-s", "ours", "--no-commit", "s-sub", who=AGENT)
    g("read-tree", "--prefix=plans/subtree/", "-u", "s-sub:plans/sub-src")
    g("commit", "-q", "-m", "subtree merge s-sub", who=AGENT)
    # ours-copy: merged -s ours, then the bytes copied
    g("checkout", "-q", "-b", "s-oc")
    lab.write("mo-src", plan_text("ours-copy"))
    lab.commit("bob drafts", BOB)
    g("checkout", "-q", "main")
    g("merge", "-s", "ours", "-q", "-m", "merge s-oc ours", "s-oc", who=AGENT)
    lab.write("ours-copy", g("show", "s-oc:plans/mo-src/PLAN.yml"))
    lab.commit("agent copies", AGENT)


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=ALIASES)
    g = lab.git
    _side_merges(lab)
    for vid in ("cv-own", "cv-pin-src", "cv-copy-src", "cv-sub-src"):
        lab.write(vid, _source(vid.removesuffix("-src")), "PLAN.json")
    lab.commit("bob writes sources", BOB)
    # w-note-first: Mallory's note before the plan exists
    lab.write("w-note-first", "context for the agent\n", "NOTES.md")
    lab.commit("mallory notes", MALLORY)
    lab.write("w-note-first", plan_text("w-note-first"))
    lab.commit("agent adds", AGENT)
    # w-merge-writer: Mallory merges the agent's branch
    g("checkout", "-q", "-b", "s-wm")
    lab.write("w-merge-writer", plan_text("w-merge-writer"))
    lab.commit("agent adds", AGENT)
    g("checkout", "-q", "main")
    g("merge", "--no-ff", "-q", "-m", "merge s-wm", "s-wm", who=MALLORY)
    # aliases
    lab.write("co-alias", plan_text("co-alias"))
    lab.commit("add co-alias\n\nCo-authored-by: A Smith <A.Smith@corp.example>", AGENT)
    lab.write("co-plus", plan_text("co-plus"))
    lab.commit("add co-plus\n\nCo-authored-by: Bob CI <bob+ci@ops.example.com>", AGENT)
    lab.write("alias-author", plan_text("alias-author"))
    lab.commit("add alias-author", ("A Smith", "a.smith@corp.example"))
    lab.run()  # convert + freeze
    # the agent builds on the converted nested plans
    nested = lab.plan("cv-pin-src")["actions"][0]["plan"]["hash"]
    lab.write(
        "cv-pin",
        "plan:\n  name: cv-pin\n  task: run the library\n  status: pending_approval\n"
        "actions:\n  - id: 1\n    why: the library\n"
        f'    plan: {{path: plans/cv-pin-src/step-1, hash: "{nested}"}}\n',
    )
    lab.write(
        "cv-copy",
        lab.read("cv-copy-src", "step-1/PLAN.yml").replace(
            'status: "draft"', 'status: "pending_approval"'
        ),
    )
    sub = lab.repo / "plans/cv-sub-src/step-1/PLAN.yml"
    sub.write_text(sub.read_text().replace('status: "draft"', 'status: "pending_approval"'))
    lab.commit("agent builds on the converted plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in WITHDRAW:
        lab.set_status(vid, "rejected")
        lab.commit(f"mallory rejects {vid}", MALLORY)
    lab.run()
    time.sleep(1.05)
    for vid, slug in SELF.items():
        lab.approve(slug, ALICE if vid in ("co-alias", "alias-author") else BOB)
    for vid in WITHDRAW:
        lab.approve(vid, ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r22-hiddenwriters", _build)


@pytest.mark.parametrize("vid", list(SELF))
def test_the_writer_cannot_approve(lab: Lab, vid: str) -> None:
    slug = SELF[vid]
    assert lab.calls(vid) == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)
    assert lab.refusal(slug) == "E_SELF_APPROVAL", lab.codes(slug)


@pytest.mark.parametrize("vid", WITHDRAW)
def test_a_non_writer_cannot_withdraw(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
    assert lab.plan(vid)["plan"]["status"] == "completed", lab.codes(vid)


@pytest.fixture(scope="module")
def audit(lab: Lab) -> dict[str, Any]:
    clone = lab.root / "audit-clone"
    if not clone.exists():
        lab.git("clone", "-q", str(lab.repo), str(clone))
    result = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return dict(json.loads(result.stdout))


def test_the_fresh_clone_audit_agrees(audit: dict[str, Any]) -> None:
    rows = audit["executions"]
    started = {r["plan"] for r in rows}
    assert started == {f"plans/{v}" for v in WITHDRAW}, rows
    assert all(r.get("approval_valid") for r in rows), rows
