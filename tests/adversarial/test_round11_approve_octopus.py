"""Round 11, who may make a plan run: content brought in by an octopus merge's third (or
later) parent.

docs/approvals.md: "For a merge, these are the identities of the commits the merge brought
in through its second parent that changed the plan". An octopus merge has more parents:
if only the second is walked, a writer on the third is forgotten.

- ``oct-new3``: Alice adds ``plans/oct-new3`` on her branch; the agent octopus-merges an
  unrelated branch of its own (parent 2) and Alice's (parent 3) onto main; the controller
  freezes; Alice approves what she wrote.
- ``oct-edit3``: the plan is the agent's on main (frozen); Alice edits a param on her branch;
  the agent's octopus merge brings her edit in through parent 3 (parent 2 unrelated);
  the controller re-freezes; Alice approves.
- ``oct-new4``: as ``oct-new3`` with Alice's branch as parent 4 of 4.
- ``oct-new2``: control shape: Alice's branch as parent 2 (the documented case).
- ``oct-bob3``: Bob (a glob approver) adds the plan on parent 3; Bob approves.

Defence: ``E_SELF_APPROVAL``, nothing runs. Control: ``plain`` (agent writes, Alice approves)
runs once. A fresh-clone audit agrees.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, clone_audit, plan_text
from test_round2_approval_authors import shared_lab

VIDS = ["oct-new3", "oct-edit3", "oct-new4", "oct-new2", "oct-bob3"]
BROKEN: dict[str, object] = {}
APPROVER = {"oct-bob3": BOB}


def _xf(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 11: {what}")


def _branch(lab: Lab, name: str, who: tuple[str, str], write: dict[str, str]) -> None:
    lab.git("checkout", "-q", "-b", name, "main")
    for slug, text in write.items():
        lab.write(slug, text)
    if not write:
        (lab.repo / f"{name}.txt").write_text(name + "\n")
    lab.commit(f"{name}", who)
    lab.git("checkout", "-q", "main")


def _octopus(lab: Lab, branches: list[str]) -> None:
    lab.git("merge", "-q", "--no-ff", "--no-edit", *branches, who=AGENT)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("oct-edit3", plan_text("oct-edit3", params="note: v1\n"))
    lab.write("plain", plan_text("plain"))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze oct-edit3 and plain

    # each variant: its own octopus merge made by the agent
    _branch(lab, "n3-a", AGENT, {})
    _branch(lab, "n3-b", ALICE, {"oct-new3": plan_text("oct-new3")})
    _octopus(lab, ["n3-a", "n3-b"])

    edited = lab.read("oct-edit3").replace("note: v1", "note: v2")
    _branch(lab, "e3-a", AGENT, {})
    _branch(lab, "e3-b", ALICE, {"oct-edit3": edited})
    _octopus(lab, ["e3-a", "e3-b"])

    _branch(lab, "n4-a", AGENT, {})
    _branch(lab, "n4-b", AGENT, {})
    _branch(lab, "n4-c", ALICE, {"oct-new4": plan_text("oct-new4")})
    _octopus(lab, ["n4-a", "n4-b", "n4-c"])

    _branch(lab, "n2-b", ALICE, {"oct-new2": plan_text("oct-new2")})
    _branch(lab, "n2-a", AGENT, {})
    _octopus(lab, ["n2-b", "n2-a"])

    _branch(lab, "b3-a", AGENT, {})
    _branch(lab, "b3-b", BOB, {"oct-bob3": plan_text("oct-bob3")})
    _octopus(lab, ["b3-a", "b3-b"])
    lab.run()  # freeze what the merges brought

    parents = {}
    for vid in VIDS:
        data = lab.plan(vid)
        parents[vid] = (data.get("frozen") or {}).get("hash")
    (lab.root / "frozen.json").write_text(json.dumps(parents))
    for vid in VIDS:
        lab.approve(vid, APPROVER.get(vid, ALICE))
    lab.approve("plain", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r11-octopus", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("plain")) == 1, lab.codes("plain")


def test_every_merged_plan_was_frozen(lab: Lab) -> None:
    frozen = json.loads((lab.root / "frozen.json").read_text())
    assert all(frozen.values()), frozen


def test_the_merges_were_octopus(lab: Lab) -> None:
    counts = [len(r[0].split()) for r in lab.log_rows(fmt="%P%x00%x01", rev="main")]
    assert counts.count(3) >= 3 and counts.count(4) == 1, counts


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_a_writer_on_any_parent_is_a_writer(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert lab.refusal(vid) == "E_SELF_APPROVAL", lab.codes(vid)


def test_a_fresh_clone_audit_agrees(lab: Lab, tmp_path: Path) -> None:
    report, valid = clone_audit(lab, tmp_path)
    assert "plans/plain" in valid, report
    for vid in VIDS:
        if vid not in BROKEN:
            assert f"plans/{vid}" not in valid, sorted(valid)
