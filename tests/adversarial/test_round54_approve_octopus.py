"""Round 54, self-approval and withdrawals through an octopus merge's THIRD parent.

docs/approvals.md: "For a merge, these are the identities of the commits the merge brought
in through its second parent that changed the plan", and "A rejection or abort inside a
merged branch ... wins whatever the merge resolves the status to". An octopus merge
(``git merge A B``) has more than two parents; a reader that walks parent 2 only would miss
what parent 3 brought.

Config: the bench's. From one base on main, side branches each of one commit; the agent
octopus-merges them (``git merge --no-ff A B``), with ``-s ours`` for the withdrawals:

- ``w3``: Alice commits a new plan ``plans/w3`` on the THIRD parent's branch (the second
  only adds an unrelated file); ``w2`` (control): the same on the second parent's branch.
- ``e3``: the agent's frozen plan ``plans/e3``; Alice edits its ``plan.task`` on the third
  parent's branch; the merge brings her edit; the controller freezes the new version.
- ``c3``: the same edit made by the agent with ``Co-authored-by: Alice``.
- ``r3``: the agent's frozen plan ``plans/r3``; Alice (an approver) rejects it on the third
  parent's branch; the agent merges with ``-s ours`` (nothing of the branch lands); ``r2``
  (control): on the second parent's.

After a pass Alice approves ``w3``, ``w2``, ``e3``, ``c3`` and Bob approves ``r3``, ``r2``;
two passes; ``plangate audit --json``.

Asserted (the defence): Alice's approvals are refused ``E_SELF_APPROVAL`` and nothing of
``w*``, ``e3``, ``c3`` runs; the rejected plans never run (Bob's approval after the
rejection is ignored); the audit lists no run of any variant.

Seen: all held (the index reads every parent of an octopus merge).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text
from test_round2_execution_kit import shared

MINE = ["w3", "w2", "e3", "c3"]
WITHDRAWN = ["r3", "r2"]
VIDS = MINE + WITHDRAWN
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in ("e3", "c3", "r3", "r2"):
        lab.write(vid, plan_text(vid))
    lab.commit("agent submits", AGENT)
    lab.run()

    def side(name: str, base: str, act, who, message: str | None = None) -> None:  # type: ignore[no-untyped-def]
        lab.git("checkout", "-q", "-b", name, base)
        act()
        lab.commit(message or name, who)
        lab.git("checkout", "-q", "main")

    def noise(name: str) -> None:
        (lab.repo / f"{name}.txt").write_text(name + "\n")

    def edit(vid: str) -> None:
        path = lab.repo / f"plans/{vid}/PLAN.yml"
        path.write_text(path.read_text().replace("attack variant", "edited attack variant"))

    base = lab.head()
    side("w3-x", base, lambda: noise("w3-x"), AGENT)
    side("w3-a", base, lambda: lab.write("w3", plan_text("w3")), ALICE)
    side("w2-a", base, lambda: lab.write("w2", plan_text("w2")), ALICE)
    side("w2-x", base, lambda: noise("w2-x"), AGENT)
    side("e3-x", base, lambda: noise("e3-x"), AGENT)
    side("e3-a", base, lambda: edit("e3"), ALICE)
    side("c3-x", base, lambda: noise("c3-x"), AGENT)
    side(
        "c3-a",
        base,
        lambda: edit("c3"),
        AGENT,
        "tidy c3\n\nCo-authored-by: Alice <alice@example.com>",
    )
    for a, b in (("w3-x", "w3-a"), ("w2-a", "w2-x"), ("e3-x", "e3-a"), ("c3-x", "c3-a")):
        lab.git("merge", "-q", "--no-ff", "-m", f"octopus {a} {b}", a, b, who=AGENT)
    lab.run()
    base = lab.head()
    side("r3-x", base, lambda: noise("r3-x"), AGENT)
    side("r3-a", base, lambda: lab.set_status("r3", "rejected"), ALICE)
    side("r2-a", base, lambda: lab.set_status("r2", "rejected"), ALICE)
    side("r2-x", base, lambda: noise("r2-x"), AGENT)
    for a, b in (("r3-x", "r3-a"), ("r2-a", "r2-x")):
        lab.git("merge", "-q", "-s", "ours", "-m", f"octopus {a} {b}", a, b, who=AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in MINE:
        lab.set_status(vid, "approved")
    lab.commit("alice approves", ALICE)
    for vid in WITHDRAWN:
        lab.set_status(vid, "approved")
    lab.commit("bob approves", BOB)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r54-octopus", _build)


def test_the_bench_made_octopus_merges_and_froze_the_plans(lab: Lab) -> None:
    parents = lab.git("log", "--merges", "--format=%P", "-n", "6").splitlines()
    assert all(len(p.split()) == 3 for p in parents), parents
    for vid in MINE:
        assert (lab.plan(vid).get("frozen") or {}).get("hash"), lab.codes(vid)
    assert "edited attack variant" in lab.read("e3")


@pytest.mark.parametrize("vid", cases(MINE, MINE, BROKEN))  # type: ignore[arg-type]
def test_what_a_parent_brought_is_hers(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", cases(WITHDRAWN, WITHDRAWN, BROKEN))  # type: ignore[arg-type]
def test_a_rejection_behind_any_parent_wins(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert lab.status()[f"plans/{vid}"]["status"] == "rejected", lab.codes(vid)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_the_audit_lists_no_run(lab: Lab, vid: str) -> None:
    report = lab.report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert runs == [], runs
