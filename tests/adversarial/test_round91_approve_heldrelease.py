"""Round 91, approval (r91held2): the deleter of a held plan's same-folder twin is a writer.

Lab (one, built once, five ``run --once`` passes; policy: one of Alice or
``*@ops.example.com``). P1 freezes the plans (the agent's). Then the agent adds to each
held plan a twin holding ANOTHER version (``<slug>-v2``) and P2 sees every one held
``E_PLAN_AMBIGUOUS``:

- ``dy``, ``dl``, ``dz``: the twin in the plan's own folder (``plans/dy/PLAN.yaml``,
  ``plans/dl/plan.yml``, ``plans/dz/PLAN<U+200D>.yml``); BOB deletes it in a plain commit.
- ``by``, ``bz``: the same (``PLAN.yaml``, ``PLAN<U+200D>.yml``) deleted by Bob on his branch
  ``side-b``, merged ``--no-ff`` by Mallory.
- ``my``, ``ml``: Bob's ``git mv -f`` of the twin (``PLAN.yaml``, ``plan.yml``) over
  ``PLAN.yml`` (the twin's version left, the plan's deleted).
- ``sp``: the reference in another spelling (``PLANS/sp/PLAN.yml``) deleted by Bob.
- Controls: ``ay``: the AGENT deletes the twin ``plans/ay/PLAN.yaml``; ``nn``: no hold,
  Bob deletes the agent's ``plans/nn/NOTES.md``.

P3 reads the releases (what is left frozen). Bob then approves every plan (P4); then Alice
approves every plan (P5). ``<slug>:ran`` checks that Bob's approval ran nothing for the
plans he released (the controls once) and that Alice's ran each once (the recording tool's
calls of ``<slug>`` and ``<slug>-v2``); ``<slug>:audit`` that the fresh-clone ``plangate
audit --json`` after P4 calls valid exactly the starts the controller made (the controls
only); ``<slug>:held`` that P2 saw the plan held (no vacuous attack).

Seen (round 91): 6 ids broke, one class: **a deletion of a same-folder twin makes its
deleter no writer** (``dy``, ``by``, ``my`` ``:{ran,audit}``): Bob deleted ``PLAN.yaml`` (on
the line, or on his branch merged by Mallory, or by ``git mv -f`` of it over ``PLAN.yml``)
and his own approval then ran the plan once at P4, the fresh-clone audit calling that start
valid. ``_status_only`` read a deletion as a status change alone (no new file: nothing
written) and ``_ambiguity`` asked it before ``_touchers``; a ``git mv -f`` was a move, which
``_ambiguity`` never counted (the overwritten ``PLAN.yml`` judged at the release as the
twin's). Held: ``dl``, ``dz``, ``bz`` (a deleted ``plan.yml`` or ``PLAN<U+200D>.yml`` is a file
of the folder: its committer a writer, Bob refused ``E_SELF_APPROVAL``), ``ml``, ``sp``
(another spelling, as documented); the controls ran once on Bob's approval.

Should (docs/approvals.md): "whoever deletes one of the two claims chose the content left
and is a writer (round 69's rule): the commit that deleted it, so a deletion a merge brings
from a branch (...) is its branch commits' makers'", whatever the twin's spelling.

Fixed (2026-12-02, r91held2): ``_ambiguity`` no longer asks ``_status_only`` itself; every
touch of a claim goes through ``Lifecycle._touchers``, where a status line alone writes
nothing and a removal is always its maker's (a merged one its branch commits' makers'); a
move of a claim while the plan is held (``git mv -f``) is a touch too. ``INDEX_VERSION`` 120.
All ids pass.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, brief, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

#: the twin deleted by Bob on the line: slug -> twin
LINE = {
    "dy": "plans/dy/PLAN.yaml",
    "dl": "plans/dl/plan.yml",
    "dz": "plans/dz/PLAN\u200d.yml",
}
#: the twin deleted by Bob on his branch, merged --no-ff by Mallory
BRANCH = {"by": "plans/by/PLAN.yaml", "bz": "plans/bz/PLAN\u200d.yml"}
#: Bob's git mv -f of the twin over PLAN.yml
MOVE = {"my": "plans/my/PLAN.yaml", "ml": "plans/ml/plan.yml"}
#: the reference: another spelling, deleted by Bob
SPELL = {"sp": "PLANS/sp/PLAN.yml"}
#: control: the agent deletes the twin
AGENTDEL = {"ay": "plans/ay/PLAN.yaml"}
#: control: no hold, Bob deletes the agent's notes
NOTE = ["nn"]
TWINS = {**LINE, **BRANCH, **MOVE, **SPELL, **AGENTDEL}
SLUGS = [*TWINS, *NOTE]
#: Bob's approval runs these (once); every other plan runs once on Alice's
CONTROLS = {*AGENTDEL, *NOTE}


def _calls(lab: Lab) -> dict[str, int]:
    return {s: len(lab.calls(s)) + len(lab.calls(f"{s}-v2")) for s in SLUGS}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.put("plans/nn/NOTES.md", "the agent's notes\n")
    lab.commit("agent: plans", AGENT)
    lab.run()  # P1: frozen
    for slug, rel in TWINS.items():
        lab.put(rel, plan_text(f"{slug}-v2"))
    lab.commit("agent: twins of another version", AGENT)
    lab.run()  # P2: held
    got["held"] = lab.rows()
    # -- the releases
    for rel in [*LINE.values(), *SPELL.values()]:
        (lab.repo / rel).unlink()
    (lab.repo / "plans/nn/NOTES.md").unlink()
    lab.commit("bob: twins gone", BOB)
    for rel in AGENTDEL.values():
        (lab.repo / rel).unlink()
    lab.commit("agent: twin gone", AGENT)
    for rel in MOVE.values():
        lab.git("mv", "-f", rel, str(Path(rel).parent / "PLAN.yml"))
    lab.git("commit", "-q", "-m", "bob: twins over the plans", who=BOB)
    lab.git("checkout", "-q", "-b", "side-b")
    for rel in BRANCH.values():
        (lab.repo / rel).unlink()
    lab.commit("bob: branch twins gone", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side-b", "side-b", who=MALLORY)
    lab.run()  # P3: released, what is left frozen
    got["released"] = lab.rows()
    for slug in SLUGS:
        lab.set_status(slug, "approved")
    lab.commit("bob: approve", BOB)
    lab.run()  # P4
    got["bob"] = _calls(lab)
    got["bob_rows"] = lab.rows()
    mid = root / "mid"
    mid.mkdir(exist_ok=True)
    _report, valid = clone_audit(lab, mid)
    got["valid"] = sorted(valid)
    for slug in SLUGS:
        if slug not in CONTROLS:
            lab.set_status(slug, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()  # P5
    got["calls"] = _calls(lab)
    got["rows"] = lab.rows()
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r91-approve-heldrelease", _build)


IDS = [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")] + [f"{s}:held" for s in TWINS]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round91_heldrelease(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.rsplit(":", 1)
    plan = f"plans/{slug}"
    if what == "held":
        held = got["held"].get(plan, {})
        assert "E_PLAN_AMBIGUOUS" in json.dumps(held, ensure_ascii=False), brief(held, notes=4)
        return
    row = got["bob_rows"].get(plan, {})
    if what == "audit":
        done = row.get("status") == "completed"
        assert (plan in got["valid"]) == done, (plan, got["valid"], brief(row, notes=4))
        assert (plan in got["valid"]) == (slug in CONTROLS), (
            plan,
            got["valid"],
            brief(row, notes=4),
        )
        return
    bob = 1 if slug in CONTROLS else 0
    assert got["bob"][slug] == bob, (got["bob"][slug], brief(row, notes=4))
    assert got["calls"][slug] == 1, (got["calls"][slug], brief(got["rows"].get(plan, {}), notes=4))


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/r91held2-atk", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r91h2-", dir="/tmp/r91held2-atk"))
    got = _build(out).got  # type: ignore[attr-defined]
    for key in ("held", "released", "bob_rows", "rows"):
        got[key] = {p: brief(r, notes=4) for p, r in got[key].items()}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
