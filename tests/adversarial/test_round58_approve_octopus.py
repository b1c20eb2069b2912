"""Round 58, octopus merges: what a merge brings through its THIRD (or later) parent.

docs/approvals.md: "For a merge, these are the identities of the commits the merge brought in
through its second parent that changed the plan, not the person who merged" and (rounds 45-48)
a status a merge brings from a branch that held another version is refused. Nothing says what
happens with an octopus merge (``git merge b1 b2``), which has three parents.

Config: the bench's. The agent commits ``plans/<v>`` (one ``rec`` action), a pass freezes it;
every branch below forks from main after that pass. All merges are the agent's, one octopus
commit on main (``git merge --no-ff --no-edit ...``).

Writers (``w-*``): Alice edits the plan (adds ``force: "yes"``) on branch ``her``; ``dummy`` is a
README change by Owner.
- ``w-third``: ``git merge dummy her`` (her edit through parent 3); a pass; Alice approves.
- ``w-fourth``: ``git merge dummy dummy2 her`` (parent 4).
- ``w-second`` (control): ``git merge her dummy`` (parent 2).

Version (``v-*``): Alice approves version 1 on branch ``ok`` (a status line); the agent's
``edit`` branch adds a param ``extra: "evil"`` (version 2). No pass between the edit and the merge.
- ``v-octo``: ``git merge edit ok`` (her status through parent 3, the edit through parent 2).
- ``v-octo-rev``: ``git merge ok edit`` (her status through parent 2, the edit through 3).
- ``v-main``: the edit committed on main, then ``git merge dummy ok`` (her status through 3).
- ``v-plain`` (control): Alice approves version 1 on main: it runs once.

Two passes after the last step; ``plangate audit --json``.

Asserted (the defence): ``w-*``: Alice's approval refused ``E_SELF_APPROVAL``, the tag never
reaches ``rec``, no valid run in the audit. ``v-*``: version 2 never runs on version 1's
approval (the tag never reaches ``rec``), no valid run in the audit.

Seen: all held. ``w-third``, ``w-fourth``, ``w-second``: ``E_SELF_APPROVAL`` (her edit is
found through every parent of the octopus); ``v-octo``, ``v-octo-rev``, ``v-main``:
``E_PLAN_HASH_MISMATCH``, version 2 never ran; ``v-plain`` ran once. The bench checks that the
six merges really have 3 or 4 parents (``--no-ff``: without it git drops the HEAD parent).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text, valid_runs
from test_round2_execution_kit import shared

OWNER = ("Owner", "owner@example.com")
W = ["w-third", "w-fourth", "w-second"]
V = ["v-octo", "v-octo-rev", "v-main"]
BROKEN: dict[str, object] = {}


def _edit(lab: Lab, v: str, line: str) -> None:
    path = lab.repo / "plans" / v / "PLAN.yml"
    text = path.read_text()
    marker = f'      tag: "{v}"\n'
    assert marker in text, text
    path.write_text(text.replace(marker, marker + line))


def _branch(lab: Lab, name: str, base: str, act) -> None:  # type: ignore[no-untyped-def]
    lab.git("checkout", "-q", "-b", name, base)
    act()
    lab.git("checkout", "-q", "main")


def _dummy(lab: Lab, name: str, base: str) -> None:
    def act() -> None:
        (lab.repo / f"{name}.txt").write_text(name + "\n")
        lab.commit(f"notes {name}", OWNER)

    _branch(lab, name, base, act)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in [*W, *V, "v-plain"]:
        lab.write(v, plan_text(v))
    lab.commit("agent proposes", AGENT)
    lab.run()
    base = lab.head()
    time.sleep(1.05)
    # writers
    for v in W:
        _dummy(lab, f"{v}-d1", base)
        _dummy(lab, f"{v}-d2", base)

        def her(v: str = v) -> None:
            _edit(lab, v, '      force: "yes"\n')
            lab.commit(f"alice tweaks {v}", ALICE)

        _branch(lab, f"{v}-her", base, her)
    # versions
    for v in V:
        _dummy(lab, f"{v}-d1", base)

        def ok(v: str = v) -> None:
            lab.set_status(v, "approved")
            lab.commit(f"alice approves {v}", ALICE)

        _branch(lab, f"{v}-ok", base, ok)
        if v != "v-main":

            def edit(v: str = v) -> None:
                _edit(lab, v, '      extra: "evil"\n')
                lab.commit(f"agent edits {v}", AGENT)

            _branch(lab, f"{v}-edit", base, edit)
    lab.git("merge", "-q", "--no-ff", "--no-edit", "w-third-d1", "w-third-her", who=AGENT)
    lab.git(
        "merge",
        "-q",
        "--no-ff",
        "--no-edit",
        "w-fourth-d1",
        "w-fourth-d2",
        "w-fourth-her",
        who=AGENT,
    )
    lab.git("merge", "-q", "--no-ff", "--no-edit", "w-second-her", "w-second-d1", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "--no-edit", "v-octo-edit", "v-octo-ok", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "--no-edit", "v-octo-rev-ok", "v-octo-rev-edit", who=AGENT)
    _edit(lab, "v-main", '      extra: "evil"\n')
    lab.commit("agent edits v-main", AGENT)
    lab.git("merge", "-q", "--no-ff", "--no-edit", "v-main-d1", "v-main-ok", who=AGENT)
    lab.set_status("v-plain", "approved")
    lab.commit("alice approves v-plain", ALICE)
    lab.run()
    time.sleep(1.05)
    for v in W:
        lab.set_status(v, "approved")
    lab.commit("alice approves the tweaked plans", ALICE)
    lab.run()
    lab.run()
    lab.parents = {  # type: ignore[attr-defined]
        r[0]: r[1] for r in lab.log_rows("%s%x00%P%x01")
    }
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-octopus", _build)


def test_the_merges_are_octopus(lab: Lab) -> None:
    merges = {s: p for s, p in lab.parents.items() if s.startswith("Merge")}  # type: ignore[attr-defined]
    assert sum(len(p.split()) >= 3 for p in merges.values()) == 6, merges


@pytest.mark.parametrize("vid", cases(W, W, BROKEN))  # type: ignore[arg-type]
def test_her_edit_through_any_parent_makes_her_a_writer(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(V, V, BROKEN))  # type: ignore[arg-type]
def test_an_octopus_does_not_carry_her_status_to_another_version(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


def test_plain_approval_runs(lab: Lab) -> None:
    assert len(lab.calls("v-plain")) == 1, lab.codes("v-plain")[:800]
    assert valid_runs(lab.report, "v-plain"), lab.report  # type: ignore[attr-defined]
