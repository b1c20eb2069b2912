"""Round 89, approval (r89held2): the next variants of atk89d's two held-twin classes.

Lab (one, built once, five ``run --once`` passes; the default policy: one of Alice or
``*@ops.example.com``). P1 freezes ``vb``, ``vk``, ``oc``, ``mw``, ``mk``. Then, before the
next pass (ONE scan reads all of it):

- ``sa``, ``sb``, ``sk``: the agent commits each plan; on its branch ``side-s`` it adds a
  twin (``PLANS/sa/PLAN.yml``, ``plans/sb\\PLAN.yml``, ``PLANS/sk/PLAN.yml``, byte copies),
  Alice sets ``rejected`` in ``sa``'s and ``sb``'s (Mallory in ``sk``'s, the control), the
  agent deletes them; Mallory merges ``--no-ff``: a hold made and ended inside one merged
  branch, of a plan the index first meets in the same scan.
- ``vb``, ``vk``: on the same branch the twin ``PLANS/vb/PLAN.yml`` holds v2, Alice rejects
  it (Mallory ``vk``'s, the control), the agent deletes it; later v2 is committed as the plan
  and Bob approves it: the withdrawal of another version on the branch must veto v2.
- ``oc``: the agent's twin ``PLANS/oc/PLAN.yml`` on the first-parent line holds the plan,
  Alice's ``rejected`` in it on her branch ``side-oc`` is merged by Mallory, the agent deletes
  the twin: the hold, the merge and the release in one scan.
- ``mw``, ``mk``: v2 committed as the twin ``plans/mw/PLAN.yaml`` holds the plan, Alice sets
  ``rejected`` in it (Mallory in ``mk``'s, the control), the release is the agent's ``git mv
  -f plans/mw/PLAN.yaml plans/mw/PLAN.yml``; the agent sets ``pending_approval``, Bob
  approves.

Bob then approves every plan. ``<slug>:ran`` counts the recording tool's calls (of ``<slug>``
and ``<slug>-v2``), ``<slug>:audit`` that the fresh clone's ``plangate audit`` calls valid
exactly the runs made and expected. Controls (``sk``, ``vk``, ``mk``): run once.

Seen (round 89, before the fix): 10 of 16 ids broke. ``sa``, ``sb`` ``:{ran,audit}`` (the
plan unknown when the merged branch was read, the withdrawal in its twin matched to no plan;
Bob's approval ran it); ``vb`` (v2 ran on Bob's approval: a withdrawal of another version on
a merged branch, with no hold seen, vetoed nothing); ``oc`` (the hold, the merge and the
release in one scan: the merged withdrawal was read before the scan's commits made the hold,
and matched to no plan; r88held's note); ``mw`` (the class of ``vx``: the release moving v2
over ``PLAN.yml``). The controls held (``sk``, ``vk``, ``mk`` ran once).

Should (docs/approvals.md): "On a merged branch the rule is read in the branch commit's own
tree, whether or not a pass ever saw the plan held"; "A release that moves a twin holding
another version over the plan file ... keeps that twin's decisions".

Fixed (2026-12-02, r89held2): ``Lifecycle._side_withdrawal`` matches the file to every plan
whose file it is by the one rule in the branch commit's tree, and to the plan folder it lands
on when the index has none there yet (``_file_owners(unknown=True)``, ``_landed_plan``); a
withdrawal of another version set while that tree held the plan vetoes it by hash
(``apply_side_withdrawals``); the release's leftover withdrawal of another version vetoes it
(``_held_steps``, ``_held_veto``). All ids pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

#: a hold made and ended inside one merged branch: slug -> (twin, who rejects, v2?)
BRANCH = {
    "sa": ("PLANS/sa/PLAN.yml", ALICE, False),
    "sb": ("plans/sb\\PLAN.yml", ALICE, False),
    "sk": ("PLANS/sk/PLAN.yml", MALLORY, False),  # control
    "vb": ("PLANS/vb/PLAN.yml", ALICE, True),
    "vk": ("PLANS/vk/PLAN.yml", MALLORY, True),  # control
}
#: made in the same scan as the merge (not frozen before)
NEW = ["sa", "sb", "sk"]
#: released by git mv -f of the v2 twin over the plan file: slug -> who rejects
MOVE = {"mw": ALICE, "mk": MALLORY}
SLUGS = [*BRANCH, "oc", *MOVE]
RUNS = {"sk": 1, "vk": 1, "mk": 1}


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _set(lab: Lab, rel: str, status: str) -> None:
    path = lab.repo / rel
    lines = path.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        if line.startswith("  status:") and i < 6:
            lines[i] = f"  status: {status}"
            break
    path.write_text("\n".join(lines), encoding="utf-8")


def _rows(lab: Lab) -> dict[str, Any]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {r["plan"]: r for r in json.loads(out)}


def _brief(row: dict[str, Any]) -> Any:
    return (row.get("status"), row.get("code"), (row.get("notes") or [])[-4:])


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    for slug in SLUGS:
        if slug not in NEW:
            lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()  # P1: frozen
    for slug in NEW:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: new plans", AGENT)
    lab.git("checkout", "-q", "-b", "side-s")
    for slug, (rel, _who, v2) in BRANCH.items():
        _put(lab, rel, plan_text(f"{slug}-v2") if v2 else lab.read(slug))
    lab.commit("agent: branch twins", AGENT)
    for who in (ALICE, MALLORY):
        for rel, w, _v2 in BRANCH.values():
            if w == who:
                _set(lab, rel, "rejected")
        lab.commit(f"{who[0]}: reject in the branch twins", who)
    for rel, _w, _v2 in BRANCH.values():
        (lab.repo / rel).unlink()
    lab.commit("agent: branch twins gone", AGENT)
    lab.git("checkout", "-q", "main")
    _put(lab, "PLANS/oc/PLAN.yml", lab.read("oc"))
    for slug in MOVE:
        _put(lab, f"plans/{slug}/PLAN.yaml", plan_text(f"{slug}-v2"))
    lab.commit("agent: twins", AGENT)
    lab.git("checkout", "-q", "-b", "side-oc")
    _set(lab, "PLANS/oc/PLAN.yml", "rejected")
    lab.commit("alice: reject oc on my branch", ALICE)
    lab.git("checkout", "-q", "main")
    for slug, who in MOVE.items():
        _set(lab, f"plans/{slug}/PLAN.yaml", "rejected")
        lab.commit(f"{who[0]}: reject {slug} v2", who)
    lab.git("merge", "-q", "--no-ff", "-m", "merge side-s", "side-s", who=MALLORY)
    lab.git("merge", "-q", "--no-ff", "-m", "merge side-oc", "side-oc", who=MALLORY)
    (lab.repo / "PLANS/oc/PLAN.yml").unlink()
    for slug in MOVE:
        lab.git("mv", "-f", f"plans/{slug}/PLAN.yaml", f"plans/{slug}/PLAN.yml")
    lab.commit("agent: release", AGENT)
    lab.run()  # P2: one scan
    for slug in ("vb", "vk"):
        lab.write(slug, plan_text(f"{slug}-v2"))
    for slug in MOVE:
        lab.set_status(slug, "pending_approval")
    lab.commit("agent: v2", AGENT)
    lab.run()  # P3
    for slug in SLUGS:
        lab.set_status(slug, "approved")
    lab.commit("bob: approve", BOB)
    lab.run()  # P4
    lab.run()  # P5
    got["calls"] = {s: len(lab.calls(s)) + len(lab.calls(f"{s}-v2")) for s in SLUGS}
    got["rows"] = _rows(lab)
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r89-approve-heldscan", _build)


IDS = [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")]
#: Fixed (2026-12-02, r89held2): no id is expected to fail.
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round89_heldscan(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.rsplit(":", 1)
    plan = f"plans/{slug}"
    row = got["rows"].get(plan, {})
    if what == "audit":
        done = row.get("status") == "completed"
        assert (plan in got["valid"]) == done, (plan, got["valid"], _brief(row))
        assert (plan in got["valid"]) == (slug in RUNS), (plan, got["valid"])
        return
    assert got["calls"][slug] == RUNS.get(slug, 0), (got["calls"][slug], _brief(row))
