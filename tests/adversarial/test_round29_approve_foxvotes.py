"""Round 29, quorum and approval binding through a "foxtrot" merge (an approver's ``git pull``
on a stale local main, fast-forwarded: her own commit becomes main's first parent, the
agent's and controller's later commits move to the second parent).

Config: every plan needs two approvals (``rules: [{match: {paths: ["plans/**"]}, require:
[{count: 2}]}]``). The agent writes the plans; the controller freezes them. Alice approves
every plan; the controller commits ``partial`` (her vote). ``stale`` = main's tip. Then:

- ``edit``: the agent changes action 1's ``why`` (a new version: Alice's vote is void) and
  the controller freezes it anew; Bob (ops), on a local main at ``stale`` (he sees v1 with
  Alice's vote), sets ``approved``, pulls (``git merge main``: the merge resolves to v2,
  ``approved``) and main fast-forwards to his merge;
- ``editup``: as ``edit`` but Bob's approval is a commit made on ``stale`` that the agent
  merges into main ``--no-ff`` (his approval on the second parent; the result is v2);
- ``ctl``: Bob approves on main (v1, two votes: runs once).

The controller passes. Asserted: v2 has one vote (Bob's) at most: ``edit``/``editup`` never
run (partial or refused), ``ctl`` runs once; a fresh clone's audit flags no
``start-without-approval``/``hash-mismatch`` for them.

Results: held. ``edit`` refused ``E_PLAN_HASH_MISMATCH`` ("content changed in <Bob's merge>
after it was approved"), ``editup`` refused ``E_APPROVER_NOT_ALLOWED`` (the agent's merge is
the request), ``ctl`` ran once; the audit flagged none of them.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

RULES = """\
rules:
  - match: {paths: ["plans/**"]}
    require: [{count: 2}]
"""
PLANS = ["edit", "editup", "ctl"]


def _edit(lab: Lab, vid: str) -> None:
    path = lab.repo / "plans" / vid / "PLAN.yml"
    path.write_text(path.read_text().replace("record that variant", "record (v2) that variant"))
    lab.commit(f"agent edits {vid}", AGENT)


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for vid in PLANS:
        lab.write(vid, plan_text(f"fv-{vid}"))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in PLANS:
        lab.approve(vid, ALICE)
    lab.run()  # partial
    stale = lab.head()
    _edit(lab, "edit")
    _edit(lab, "editup")
    lab.run()  # refreeze
    time.sleep(1.05)
    # edit: Bob's foxtrot
    lab.git("checkout", "-q", "-b", "fx", stale)
    lab.approve("edit", BOB)
    lab.git("merge", "--no-ff", "-q", "-m", "Merge branch 'main'", "main", who=BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--ff-only", "-q", "fx")
    # editup: Bob approves on stale, merged by the agent
    lab.git("checkout", "-q", "-b", "up", stale)
    lab.approve("editup", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", "merge up", "up", who=AGENT)
    lab.approve("ctl", BOB)
    lab.run()
    lab.run()
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli("audit", "--json", cwd=clone)
    (root / "audit.json").write_text(out.stdout)
    (root / "audit.err").write_text(out.stderr)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r29-foxvotes", _build)


FOUND: dict[str, pytest.MarkDecorator] = {}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(PLANS))
def test_a_vote_for_v1_does_not_start_v2(lab: Lab, vid: str) -> None:
    want = 1 if vid == "ctl" else 0
    assert len(lab.calls(f"fv-{vid}")) == want, lab.codes(vid)


@pytest.mark.parametrize("vid", _p([f"audit-{v}" for v in PLANS]))
def test_fresh_clone_audit_flags_nothing(lab: Lab, vid: str) -> None:
    text = (lab.root / "audit.json").read_text()
    assert text.strip(), (lab.root / "audit.err").read_text()[-2000:]
    plan = f"plans/{vid.removeprefix('audit-')}"
    found = [
        f
        for f in json.loads(text).get("findings", [])
        if f.get("plan") == plan and f.get("kind") in ("start-without-approval", "hash-mismatch")
    ]
    assert found == [], json.dumps(found)[:2000]
