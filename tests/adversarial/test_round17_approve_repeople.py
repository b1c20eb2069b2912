"""Round 17, quorum: two collected votes that an alias declared *between* them makes one
person's.

docs/approvals.md (Quorum): "One person counts once"; "Each collected vote is judged again,
from its commit, under the policy in force when the next approval is decided" (round 15
tried ``require_signed``, ``allow_self_approval``, a key revoked, an alias that makes a voter
an *author*, ``identity: committer``). Here the alias makes two voters *one person*.

Config v1: the bench's approvers (Alice, ``*@ops.example.com``), ``plans/two/**`` needs two
approvals, no aliases. The agent writes each plan; the controller freezes; a first vote is
collected under v1 (``partial``). v2 adds ``identity_aliases``: ``people: [[bob@ops.example.com,
rob@ops.example.com]]`` and ``plus_tags: ["*@ops.example.com"]``. A second vote by the same
person under another address follows:

- ``people``: Bob votes as ``bob@ops.example.com`` (v1); under v2 he votes as
  ``rob@ops.example.com``.
- ``people-rev``: Bob votes as ``rob@ops.example.com`` (v1); under v2 as ``bob@...``.
- ``plus``: Bob votes as ``bob+review@ops.example.com`` (v1); under v2 as ``bob@...``.
- ``pr-people`` / ``pr-plus``: the second vote is Bob's merge (as ``rob@`` / ``bob@``) of the
  agent's pull request setting ``approved``; CI's ``plangate check --as <that address>``
  must predict ``partial``, not ``start``.

Defence: under v2 both votes are Bob's: one vote, ``partial``, nothing runs; a fresh clone's
``plangate audit`` finds no start. Control: ``ctl``: Bob (v1) then Carol (v2) run it once.

Results: all held (``partial`` with the first vote only; ``check`` predicted ``partial``;
the audit lists only the control's start).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, BOB, CAROL, BenchError, Lab, plan_text
from test_round2_execution_kit import shared

RULE = "rules:\n  - match: {paths: ['plans/two/**']}\n    require: [{count: 2}]\n"
ALIASES = (
    "identity_aliases:\n"
    "  people: [[bob@ops.example.com, rob@ops.example.com]]\n"
    "  plus_tags: ['*@ops.example.com']\n"
)
ROB = ("Bob", "rob@ops.example.com")
BOBTAG = ("Bob", "bob+review@ops.example.com")
#: variant -> (first voter under v1, second voter under v2)
VIDS = {
    "people": (BOB, ROB),
    "people-rev": (ROB, BOB),
    "plus": (BOBTAG, BOB),
    "pr-people": (BOB, ROB),
    "pr-plus": (BOBTAG, BOB),
}
#: the variants whose second vote is a merge of the agent's pull request (``check`` first)
PRS = ["pr-people", "pr-plus"]
BROKEN: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULE)
    for vid in [*VIDS, "ctl"]:
        lab.write(f"two/{vid}", plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    for vid, (first, _) in VIDS.items():
        lab.approve(f"two/{vid}", first)
    lab.approve("two/ctl", BOB)
    lab.run()  # partial
    lab.write_config(approval=RULE + ALIASES)
    lab.run()  # v2 recorded
    for vid, (_, second) in VIDS.items():
        if vid not in PRS:
            lab.approve(f"two/{vid}", second)
    lab.approve("two/ctl", CAROL)
    lab.run()
    for vid in PRS:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        lab.set_status(f"two/{vid}", "approved")
        lab.commit(f"approve two/{vid}", AGENT)
        lab.git("checkout", "-q", "main")
        result = lab.cli(
            "check", "--config", str(lab.config), "--base", "main", "--head", f"pr-{vid}",
            "--as", VIDS[vid][1][1], "--format", "json", cwd=lab.repo,
        )  # fmt: skip
        if "Traceback" in result.stderr:
            raise BenchError(result.stderr[-2000:])
        (lab.root / f"{vid}.check.json").write_text(result.stdout)
        lab.git("merge", "-q", "--no-ff", "--no-edit", f"pr-{vid}", who=VIDS[vid][1])
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r17-repeople", _build)


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("two/ctl")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_one_person_under_two_addresses_counts_once(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"two/{vid}")
    assert not lab.started(f"two/{vid}"), lab.codes(f"two/{vid}")


@pytest.mark.parametrize("vid", PRS)
def test_check_predicts_no_start(lab: Lab, vid: str) -> None:
    report = json.loads((lab.root / f"{vid}.check.json").read_text())
    row = next(r for r in report["plans"] if r["plan"] == f"plans/two/{vid}")
    assert row.get("outcome") != "start", row
    assert row.get("outcome") == "partial", row


def test_a_fresh_clone_audit_agrees(lab: Lab, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    result = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    report = json.loads(result.stdout)
    plans = {e.get("plan") for e in report.get("executions", [])}
    assert plans & {f"plans/two/{v}" for v in VIDS} == set(), plans
    assert "plans/two/ctl" in plans, report
