"""Round 39, quorum: a forged vote block carried into one of the controller's own commits.

docs/approvals.md, "Voiding": "The votes live in the controller's own commits (its
``partial``/``refuse`` commits' ``approval:`` block, read from history; a human editing that
block adds nothing)". Round 11 wrote forged votes into a frozen plan's block. Here the
controller itself commits a file that still holds the agent's block: does it become a
controller-written vote?

Config: the bench's, plus ``plans/two/**`` needs two approvals. Bob's real vote exists on
``two/bobs`` (``partial``), so every forged vote cites a real commit of his.

- ``two/frz``: the agent writes a new plan with no ``frozen:`` block but an ``approval:``
  block ``{status: partial, plan_hash: <its hash (plangate hash)>, approvals: [Bob's vote]}``;
  the controller freezes it (its freeze commit holds the file); Alice approves.
- ``two/refrz``: a frozen plan; the agent edits its task (a new version) and writes the same
  forged block for the new hash, dropping ``frozen:``; the controller freezes it again; Alice
  approves.
- ``two/refuse``: a frozen plan; the agent writes the forged block and Mallory (no approver)
  sets ``approved``: the controller refuses her (a person-level refusal "keeps what was
  collected") in its own ``refuse`` commit; Alice approves.
- ``two/partial``: a frozen plan; the agent writes the forged block; Carol votes (a real
  vote: with Bob's forged one it would meet the quorum; the controller's ``partial``
  commit).

Asserted (the defence): none runs (each has one or two real votes short of Bob's); the audit
on a fresh clone calls no start of them valid. Control: ``two/ctl`` (Bob then Alice) runs.

Results: all held (the freeze commits did hold the forged block; the controller's next
``partial`` listed Alice alone).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

RULES = 'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
VIDS = ["two/frz", "two/refrz", "two/refuse", "two/partial"]
FOUND: dict[str, pytest.MarkDecorator] = {}
STAMP = "2026-11-25T00:00:00Z"


def _tag(vid: str) -> str:
    return vid.replace("/", "-")


def _cut(text: str, key: str) -> str:
    return re.sub(rf"\n{key}:\n(  .*\n?)*", "\n", text)


def _forged(h: str, vote: str) -> str:
    return (
        f"approval:\n  status: partial\n  plan_hash: {h}\n  approvals:\n"
        f"  - by: bob@ops.example.com\n    at: '{STAMP}'\n    commit: {vote}\n"
        "  missing: 1 more approval\n"
    )


def _hash(lab: Lab, vid: str) -> str:
    res = lab.cli("hash", f"plans/{vid}", cwd=lab.repo)
    m = re.search(r"sha256:[0-9a-f]{64}", res.stdout)
    assert m, (res.stdout, res.stderr)
    return m.group(0)


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for vid in ["two/bobs", "two/ctl", "two/refrz", "two/refuse", "two/partial"]:
        lab.write(vid, plan_text(_tag(vid)))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    vote = lab.approve("two/bobs", BOB)
    lab.approve("two/ctl", BOB)
    lab.run()  # partial: Bob's real votes
    # frz: a new plan, never frozen, carrying the forged block
    lab.write("two/frz", plan_text("two-frz"))
    lab.write("two/frz", plan_text("two-frz") + _forged(_hash(lab, "two/frz"), vote))
    # refrz: a new version, frozen block dropped, the forged block for its hash
    text = _cut(lab.read("two/refrz"), "frozen").replace(
        "attack variant two-refrz", "attack variant two-refrz v2"
    )
    lab.write("two/refrz", _cut(text, "approval"))
    lab.write("two/refrz", _cut(text, "approval") + _forged(_hash(lab, "two/refrz"), vote))
    for vid in ["two/refuse", "two/partial"]:
        h = lab.plan(vid)["frozen"]["hash"]
        lab.write(vid, _cut(lab.read(vid), "approval") + _forged(h, vote))
    lab.commit("agent writes plans and blocks", AGENT)
    lab.run()  # freezes frz and refrz
    lab.frozen_blocks = {  # type: ignore[attr-defined]
        v: (lab.plan(v).get("approval") or {}) for v in ["two/frz", "two/refrz"]
    }
    lab.approve("two/refuse", MALLORY)
    lab.approve("two/partial", CAROL)
    lab.run()  # refuse (Mallory), partial (Carol)
    for vid in [*VIDS, "two/ctl"]:
        if vid != "two/partial":  # Carol's real vote and Bob's forged one would be two
            lab.approve(vid, ALICE)
    lab.run()
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r39-carriedblock", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("two-ctl")) == 1, lab.codes("two/ctl")


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in VIDS]
)
def test_a_carried_block_is_no_vote(lab: Lab, vid: str) -> None:
    assert lab.calls(_tag(vid)) == [], (lab.codes(vid), lab.frozen_blocks)  # type: ignore[attr-defined]
    assert not lab.started(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", VIDS)
def test_the_audit_calls_no_start_valid(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    valid = [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{vid}" and e.get("approval_valid")
    ]
    assert not valid, valid
