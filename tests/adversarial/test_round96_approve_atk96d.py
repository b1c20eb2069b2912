"""Round 96, approval (atk96d): held plans whose twin folder the r94held filter
(``twins.SeenFolders``) may never have seen in a first-parent commit's changes.

Lab (built once, four ``run --once`` passes; policy: Alice or ``*@ops.example.com``). P1
freezes the agent's plans (one ``rec`` action each; ``attic/rn/PLAN.yml/x.txt`` committed
outside the plans folder). Every twin is a FOLDER claim ``<twin>/PLAN.yml/x.txt`` (never a
plan of the index) unless noted. Then:

- On the line (the agent): ``lc`` ``plans/LC/`` (case, control of r94held); ``nd``
  ``plans/nde<U+0301>/``
  beside ``plans/nd<U+00E9>/``; ``zj`` ``plans/zj<U+200D>/`` (ZWJ); ``ts`` ``plans/ts /``
  (trailing space); ``td`` ``plans/td./``; ``sn`` ``plans/shortn~1/`` (8.3 of
  ``plans/shortname/``); ``up`` ``plans/TEAM/up/`` (one level up, plan ``plans/team/up``);
  ``pf`` ``PLANS/pf/``; ``rn`` ``git mv attic/rn plans/RN`` (the twin arrives as a rename);
  ``uh`` ``plans/UH/`` brought by the agent's ``git merge --allow-unrelated-histories`` of an
  orphan root; ``ff`` ``plans/FF/`` on the agent's branch forked at P1, which merges main
  (agent's side first), main fast-forwarded to it; ``fw`` ``plans/ｆｗ/`` (fullwidth: no twin
  by the docs, a control that must NOT hold).
- On a merged branch only (``b-br``, merged ``--no-ff`` by Mallory; main never holds the twin,
  so no first-parent commit's changes name it): the agent adds ``plans/BF/`` (``bf``), a plan
  file twin ``plans/BP/PLAN.yml`` v2 (``bp``), a same-folder ``plans/by/PLAN.yaml`` v2
  (``by``), ``plans/bne<U+0301>/`` beside ``plans/bn<U+00E9>/`` (``bn``); Bob's next commit on
  the branch deletes each.

P2 reads the holds. Bob deletes every line twin on the line (P3). Bob approves every plan (P4).
``<s>:held``: P2 showed the plan held (``E_PLAN_AMBIGUOUS``/``E_UNSAFE_PATH``), nothing ran
(``fw``: NOT held); ``<s>:ran``: Bob, who deleted a claim, is a writer: his approval refused
``E_SELF_APPROVAL``, nothing ran (``fw``: ran once); ``<s>:audit``: the fresh-clone audit
calls valid exactly what the controller completed, and the expected ones.

Seen (round 96): 8 ids broke, one class; the fresh-clone audit agreed with the controller
each time (valid == completed).

1. **A twin that only a merged branch held, deleted there by Bob, makes Bob no writer**
   (``bf``, ``bp``, ``by``, ``bn`` ``:{ran,audit}``): the agent's branch commit added the claim
   (``plans/BF/PLAN.yml/x.txt``, ``plans/BP/PLAN.yml`` v2, ``plans/by/PLAN.yaml`` v2,
   ``plans/bne<U+0301>/PLAN.yml/x.txt``), Bob's next branch commit ``bob: the twins gone`` deleted
   each, Mallory's ``--no-ff`` merge brought the branch. P2 showed each ``pending_approval``,
   ``waiting for an approval``; Bob's ``approved`` then ran each once (``approval request
   (approve) by bob@ops.example.com``, ``plangate: start plans/bf``, ``plangate: complete
   plans/bf``) and the audit called each valid. Not the r94held filter alone: the same-folder
   ``PLAN.yaml`` (``by``) and the plan-file twin (``bp``) broke the same way.

Held: every line twin, whatever the spelling and however it reached the line (``lc``, NFD
``nd``, ZWJ ``zj``, trailing space ``ts``, trailing dot ``td``, 8.3 ``sn``, one level up ``up``,
``PLANS/pf``, a ``git mv`` from ``attic/`` ``rn``, an unrelated-histories merge ``uh``, the
agent-side merge fast-forwarded ``ff``): P2 ``E_PLAN_AMBIGUOUS: plans/nde\\u0301/PLAN.yml is
this plan's file on a case-insensitive, HFS+ or NTFS checkout ...`` (``pf``: ``the folder holds
both PLAN.yml and PLANS/pf/PLAN.yml``), nothing ran; Bob's deletion on the line made him a writer
(``approval refused: E_SELF_APPROVAL: bob@ops.example.com wrote or changed this plan's
content``), nothing ran, audit agreed. The fullwidth control ``plans/ｆｗ/`` held nothing and ran
once on Bob's approval, as documented ("A fullwidth ... is no such spelling").

Fixed (2026-12-02, r96held): a merged branch's commit that removes (or moves away) an entry
which, in that commit's PARENT's own tree, was one of two or more claims on a plan's place by
the hold's rule (``Lifecycle._side_claim_removals``, read by ``_file_owners``/``_claim_sets``)
makes its makers writers of the plan's folder and of the version its claims hold after it,
whether or not the line ever held the plan; only a side commit removing a claim-named entry
under the plans folder lists a tree. All 8 ids pass (INDEX_VERSION 125).

Should (docs/approvals.md): "whoever deletes one of the two claims chose the content left and
is a writer ..., whatever the claim's spelling or kind ...: a deletion a merge brings from a
branch ... is its branch commits' makers', never the merger's"; "On a merged branch the rule is
read in the branch commit's own tree, whether or not a pass ever saw the plan held";
docs/plan-format.md: "A claim is any entry of the folder, whatever its kind".
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, BOB, MALLORY, Lab, brief, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

#: slug -> (plan folder under plans/, twin path of the folder claim, or None)
LINE = {
    "lc": ("lc", "plans/LC"),
    "nd": ("nd\u00e9", "plans/nde\u0301"),
    "zj": ("zj", "plans/zj\u200d"),
    "ts": ("ts", "plans/ts "),
    "td": ("td", "plans/td."),
    "sn": ("shortname", "plans/shortn~1"),
    "up": ("team/up", "plans/TEAM/up"),
    "pf": ("pf", "PLANS/pf"),
    "rn": ("rn", "plans/RN"),
    "uh": ("uh", "plans/UH"),
    "ff": ("ff", "plans/FF"),
    "fw": ("fw", "plans/\uff46\uff57"),
}
BRANCH = {
    "bf": ("bf", "plans/BF/PLAN.yml/x.txt"),
    "bp": ("bp", "plans/BP/PLAN.yml"),
    "by": ("by", "plans/by/PLAN.yaml"),
    "bn": ("bn\u00e9", "plans/bne\u0301/PLAN.yml/x.txt"),
}
FOLDER = {s: v[0] for s, v in (LINE | BRANCH).items()}
#: no twin by the docs (fullwidth): never held, Bob's approval runs it once
CONTROL = ["fw"]
SLUGS = [*LINE, *BRANCH]


def _rm(lab: Lab, rel: str) -> None:
    lab.git("rm", "-r", "-q", rel)


def _calls(lab: Lab) -> dict[str, int]:
    return {s: len(lab.calls(s)) for s in SLUGS}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    git = lab.git
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(FOLDER[slug], plan_text(slug))
    lab.put("attic/rn/PLAN.yml/x.txt", "a folder named PLAN.yml, outside plans/\n")
    lab.commit("agent: plans", AGENT)
    lab.run()  # P1: frozen
    got["frozen"] = lab.rows()
    p1 = lab.head()
    # ff: the agent's branch forked at P1 adds a twin, later merges main, main fast-forwarded
    lab.branch("b-ff", p1)
    lab.put("plans/FF/PLAN.yml/x.txt", "claim\n")
    lab.commit("agent: ff twin on its branch", AGENT)
    git("checkout", "-q", "main")
    for slug in ("lc", "nd", "zj", "ts", "td", "sn", "up", "pf", "fw"):
        lab.put(f"{LINE[slug][1]}/PLAN.yml/x.txt", "claim\n")
    lab.commit("agent: twin folders", AGENT)
    git("mv", "attic/rn", "plans/RN")
    lab.commit("agent: attic/rn moved to plans/RN", AGENT)
    # uh: an unrelated history's root holding the twin, merged by the agent
    git("checkout", "-q", "--orphan", "b-uh")
    git("rm", "-r", "-q", "--cached", ".")
    for entry in lab.repo.iterdir():
        if entry.name != ".git":
            git("clean", "-fdxq", "--", entry.name)
    lab.put("plans/UH/PLAN.yml/x.txt", "claim\n")
    lab.commit("agent: unrelated root", AGENT)
    git("checkout", "-q", "-f", "main")
    git("merge", "-q", "--no-ff", "--no-edit", "--allow-unrelated-histories", "b-uh", who=AGENT)
    # branch-only twins: the agent adds, Bob deletes, Mallory merges
    lab.branch("b-br", "main")
    for slug, (_folder, rel) in BRANCH.items():
        text = "claim\n" if rel.endswith("x.txt") else plan_text(f"{slug}-v2")
        lab.put(rel, text)
    lab.commit("agent: twins on its branch", AGENT)
    for _folder, rel in BRANCH.values():
        _rm(lab, rel)
    lab.commit("bob: the twins gone", BOB)
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-ff", "--no-edit", "b-br", who=MALLORY)
    git("checkout", "-q", "b-ff")
    git("merge", "-q", "--no-ff", "--no-edit", "main", who=AGENT)
    git("checkout", "-q", "main")
    git("merge", "-q", "--ff-only", "b-ff")
    got["tree"] = git("ls-files")
    lab.run()  # P2: held
    got["held"] = lab.rows()
    got["p2"] = _calls(lab)
    for slug in LINE:
        _rm(lab, LINE[slug][1])
    lab.commit("bob: twin folders gone", BOB)
    lab.run()  # P3: released
    got["released"] = lab.rows()
    got["p3"] = _calls(lab)
    for slug in SLUGS:
        lab.set_status(FOLDER[slug], "approved")
    lab.commit("bob: approve", BOB)
    lab.run()  # P4
    got["calls"] = _calls(lab)
    got["rows"] = lab.rows()
    mid = root / "mid"
    mid.mkdir(exist_ok=True)
    _report, valid = clone_audit(lab, mid)
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _lab(factory: pytest.TempPathFactory) -> Lab:
    return shared(factory, "r96-approve-atk96d", _build)


IDS = [
    f"{s}:{w}" for s in SLUGS for w in ("held", "ran", "audit") if not (s in BRANCH and w == "held")
]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round96_atk96d(tmp_path_factory: pytest.TempPathFactory, vid: str) -> None:
    slug, what = vid.split(":")
    got = _lab(tmp_path_factory).got  # type: ignore[attr-defined]
    plan = f"plans/{FOLDER[slug]}"
    ran = slug in CONTROL
    if what == "held":
        text = json.dumps(got["held"].get(plan, {}), ensure_ascii=False)
        held = "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text
        assert held != ran, brief(got["held"].get(plan, {}))
        assert got["p2"][slug] == 0 and got["p3"][slug] == 0, (got["p2"][slug], got["p3"][slug])
        return
    row = got["rows"].get(plan, {})
    if what == "audit":
        done = row.get("status") == "completed"
        assert (plan in got["valid"]) == done, (plan, got["valid"], brief(row))
        assert (plan in got["valid"]) == ran, (plan, got["valid"], brief(row))
        return
    assert got["calls"][slug] == (1 if ran else 0), (got["calls"][slug], brief(row))
    if not ran:
        assert "E_SELF_APPROVAL" in json.dumps(row), brief(row)


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk96d", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="lab-", dir="/tmp/atk96d"))
    got = _build(out).got  # type: ignore[attr-defined]
    for key in ("frozen", "held", "released", "rows"):
        got[key] = {p: brief(r) for p, r in got[key].items()}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
    _ = sys
