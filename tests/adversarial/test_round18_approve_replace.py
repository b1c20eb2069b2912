"""Round 18, who may make a plan run: ``git replace`` in the watched repository hides who
wrote a plan.

The watched repository (local mode) is shared with the agent. ``git replace <commit> <twin>``
writes ``refs/replace/<commit>``: from then on every git command that does not set
``GIT_NO_REPLACE_OBJECTS`` (or ``--no-replace-objects``) reads ``<twin>`` wherever history
names ``<commit>``. The agent writes the twin with its own identity (no forged name: the twin
is authored and committed by the agent), same tree and parent as Alice's commit.

Config: the bench's (one approval; approvers Alice and ``*@ops.example.com``).

- ``writer``: Alice commits ``plans/writer`` (her plan); before the controller's first pass
  the agent replaces that commit by its own twin; the controller freezes; Alice approves.
- ``writer-late``: the same, but the agent replaces Alice's commit only after the controller
  froze the plan (its index already read the commit).
- ``parent``: the agent replaces the commit *before* Alice's (the parent) by a twin whose tree
  already holds Alice's plan, so Alice's own commit changes nothing in the plan.

Defence: Alice's approval is ``E_SELF_APPROVAL`` and ``rec`` never runs for the tag; and the
audit of a fresh clone (which has no ``refs/replace``) agrees with what the controller did.
Control: ``ctl`` (the agent's plan, Alice approves) runs once.

Results: all three held (``refuse``, Alice's approval not counted); the fresh clone's audit
lists the same runs as the controller.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["writer", "writer-late", "parent"]
BROKEN: dict[str, object] = {}


def _twin(lab: Lab, commit: str, tree: str | None = None) -> str:
    """A commit with ``commit``'s tree (or ``tree``) and parents, written by the agent."""
    tree = tree or lab.git("rev-parse", f"{commit}^{{tree}}").strip()
    parents = lab.git("rev-parse", f"{commit}^@").split()
    args = ["commit-tree", tree, "-m", "agent tidies"]
    for p in parents:
        args += ["-p", p]
    return lab.git(*args, who=AGENT).strip()


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("writer-late", plan_text("writer-late"))
    lab.commit("alice writes writer-late", ALICE)
    late = lab.head()
    lab.write("ctl", plan_text("ctl"))
    lab.commit("agent adds ctl", AGENT)
    lab.run()  # freeze writer-late and ctl: the index reads Alice's commit
    lab.git("replace", late, _twin(lab, late))
    # writer: replaced before the controller ever reads it
    lab.write("writer", plan_text("writer"))
    lab.commit("alice writes writer", ALICE)
    mine = lab.head()
    lab.git("replace", mine, _twin(lab, mine))
    # parent: the agent's empty commit, then Alice's plan; the empty commit's twin holds the plan
    lab.commit("agent: empty", AGENT)
    before = lab.head()
    lab.write("parent", plan_text("parent"))
    lab.commit("alice writes parent", ALICE)
    alice_tree = lab.git("rev-parse", "HEAD^{tree}").strip()
    lab.git("replace", before, _twin(lab, before, tree=alice_tree))
    lab.run()  # freeze
    for vid in [*VIDS, "ctl"]:
        lab.approve(vid, ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r18-replace", _build)


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_a_replaced_commit_does_not_hide_the_writer(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


def test_a_fresh_clone_audit_agrees(lab: Lab) -> None:
    clone = lab.root / "clone"
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True, env=lab.env())
    result = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    import json

    report = json.loads(result.stdout)
    ran = {e["plan"] for e in report.get("executions", []) if e.get("approval_valid")}
    started = {f"plans/{v}" for v in [*VIDS, "ctl"] if lab.started(v)}
    assert ran == started, (report.get("executions"), report.get("findings"))
