"""Round 94, approval (atk94d): held plans at the edges of r93held (twin folders that were never
a plan in the index, twins that come and go across merges, a plan whose own folder goes while
its twin stays, a controller restarted with a fresh state directory between hold and release).

Lab (built twice, once per mode, six ``run --once`` passes; policy: Alice or
``*@ops.example.com``). P1 freezes the agent's plans ``plans/<s>/PLAN.yml`` (one ``rec`` action
each). The agent then adds, on the line, a case twin folder ``plans/<S>/`` (``<S>`` the slug in
capitals) that was NEVER a plan in the index: holding only a FOLDER ``PLAN.yml/x.txt`` (``ya``,
``ys``, ``yc``, ``yw``, ``bf``), only a folder ``PLAN.yml/`` holding a plan file
``plans/YH/PLAN.yml/PLAN.yml`` (``yh``), a symlink ``PLAN.yml -> ../<s>/PLAN.yml`` (``yl``,
``bl``), a gitlink ``PLAN.yml`` (``yg``, ``bg``); a twin folder holding ``<s>-v2`` (``yo``,
``yp``, ``yq``, ``yt``, ``yu``); a same-folder twin ``plans/<s>/PLAN.yaml`` (v2) beside a case
twin folder holding only ``NOTES.md`` (``yn``), only a source ``PLAN.json`` (``yj``), only a
``PLAN.yml/`` folder (``yk``); the reference ``plans/yf/PLAN.YML/x.txt`` in the plan's OWN
folder (``yf``). On branches merged ``--no-ff`` by Mallory: the agent's ``b-yr`` adds
``plans/YR/``, ``plans/YY/`` (v2); Bob's ``b-yv`` adds ``plans/YV/`` (v2). P2 reads the holds.
While held: Alice's ``rejected`` in ``yw``'s plan file and in the twin ``plans/YT/PLAN.yml`` (a
veto of v2); Mallory's in ``plans/YU/PLAN.yml``. Mode ``fresh``: the controller is then pointed at
a NEW state directory (``run --once --take-over``: the index rebuilt from history,
``INDEX_VERSION`` 122); mode ``live``: the same state. P3: still held. Releases (forked at the
held tip):

- Bob's branch ``b-bob`` merged ``--no-ff`` by Mallory: commit 1 deletes ``plans/YA``,
  ``plans/YL``, ``plans/YG``, ``plans/YR``, ``plans/YW``, ``plans/YY`` and the plan's OWN folders
  ``plans/yo/``, ``plans/yt/`` (their twins ``plans/YO``, ``plans/YT`` stay); commit 2 ``git mv``s
  ``plans/bl/PLAN.yml`` over ``plans/BL``'s symlink (``bg``: gitlink, ``bf``: ``PLAN.yml/``
  folder), and in ONE commit removes ``plans/yn/PLAN.yaml`` (``yj``, ``yk``: theirs) while
  giving ``plans/YN/`` (``YJ``, ``YK``: the source's folder, the ``PLAN.yml/`` folder replaced)
  a ``PLAN.yml`` (v2), and deletes ``plans/YH``.
- The agent's branch merged by Bob deletes ``plans/YC``, ``plans/YV``; the agent's ``b-yy`` adds
  ANOTHER twin ``plans/Yy/`` (v3) after Bob's removal of ``plans/YY`` (merged by Mallory after
  ``b-bob``: the twin comes and goes and comes).
- On the line: the agent deletes ``plans/YN``, ``plans/YJ``, ``plans/YK``, ``plans/YS``,
  ``plans/Yy``, ``plans/yf/PLAN.YML``, the own folders ``plans/yq/``, ``plans/yu/``; Bob deletes
  the own folder ``plans/yp/``.

P4 reads the releases. Bob approves every plan left (``plans/YO`` for ``yo`` etc., the folder
left) (P5); Alice approves the plans Bob could not (P6). ``<m>:<s>:ran``: Bob's approval ran
the plan once for the controls ``ys yc yf`` (v1), ``yq`` (``plans/YQ``, v2: the agent removed the
plan's folder) and was refused ``E_SELF_APPROVAL`` for the plans Bob released or added a twin to
(``WRITER``), which Alice's then ran once (``yo``, ``yp``: v2 at ``plans/YO``, ``plans/YP``); the
rejected ``yw``, ``yt`` never ran; ``yu`` (see Held) ran nothing; ``<m>:<s>:audit``: the
fresh-clone ``plangate audit --json`` after P5 calls valid exactly the plans the controller
completed and the expected ones; ``<m>:<s>:held``: P2 and P3 showed the plan held
(``E_PLAN_AMBIGUOUS`` or ``E_UNSAFE_PATH``) and nothing ran.

Seen (round 94): 20 ids broke (10 per mode), one class; the fresh-clone audit agreed with the
controller each time (valid == completed), and both modes saw exactly the same.

1. **A folder named ``PLAN.yml`` in a case twin folder is no claim of the plan file's place**
   (``ya``, ``yh`` ``:{held,ran,audit}``; ``ys``, ``yc``, ``yw``, ``bf`` ``:held``, both modes):
   ``plans/YA/PLAN.yml/x.txt`` beside ``plans/ya/PLAN.yml``: P2 and P3 showed ``plans/ya``
   ``pending_approval``, ``waiting for an approval`` (no hold; nothing ran, as no approval
   came). ``plans/YH/PLAN.yml/PLAN.yml`` got its own row ``E_UNSAFE_PATH: a folder named
   PLAN.yml is no plan folder (... a path naming a plan file is read as its folder's plan);
   rename the folder``, while ``plans/yh`` stayed ``waiting for an approval``. Bob's branch
   deleting ``plans/YA`` (``plans/YH``), merged by Mallory, was then no touch: Bob's approval
   ran each (``approval request (approve) by bob@ops.example.com``, ``plangate: start
   plans/ya``, ``plangate: complete plans/ya``; Alice's later ``E_ILLEGAL_TRANSITION ... (from
   completed)``) and the audit called it valid. The same ``PLAN.YML/`` folder in the plan's OWN
   folder holds (``yf``: ``E_PLAN_AMBIGUOUS: the folder holds both PLAN.yml and PLAN.YML``), and
   a symlink or gitlink ``PLAN.yml`` in the case twin folder holds (``yl``, ``yg``, ``bl``,
   ``bg``: ``E_PLAN_AMBIGUOUS: plans/YL/PLAN.yml is this plan's file on a case-insensitive, HFS+
   or NTFS checkout ...``) and its deletion on Bob's merged branch refused Bob
   ``E_SELF_APPROVAL``. (``bf``: Bob's ``git mv`` of the plan over ``plans/BF/PLAN.yml/`` still
   made him a writer of ``plans/BF``: a move.)

Held (both modes, the fresh state directory included): twin folders that were never a plan
in the index holding a symlink or gitlink (``yl``, ``yg``), deleted on Bob's merged branch: Bob
a writer; Bob's ``git mv`` of the plan over a twin folder's link claim (``bl``, ``bg``); ONE commit
of Bob's removing the same-folder ``PLAN.yaml`` while giving a note-only, source-only or
``PLAN.yml/``-folder case twin folder a ``PLAN.yml`` (``yn``, ``yj``, ``yk``: still held, the
agent then deleting the new claim; Bob refused ``E_SELF_APPROVAL``, Alice's ran v1 once); a twin
added on the agent's merged branch and deleted on Bob's (``yr``), added on Bob's merged branch
(``yv``: "whoever commits the twin is a changer of the plan it holds"), added, deleted by Bob,
and another spelling added again (``yy``: held again, Bob refused); the plan's own folder
deleted while its twin stays, by Bob on a merged branch (``yo``) or on the line (``yp``): Bob a
writer of what remains (``plans/YO``: ``approval refused: E_SELF_APPROVAL:
bob@ops.example.com wrote or changed this plan's content``; Alice's ran v2 once), by the agent
(``yq``: Bob's ran v2 once); Alice's ``rejected`` in the twin ``plans/YT/PLAN.yml`` while held,
Bob deleting ``plans/yt/`` on a merged branch: ``plans/YT`` ``rejected`` (Bob's later approval
``E_ILLEGAL_TRANSITION ... (from rejected)``), never ran; Alice's ``rejected`` in ``yw``'s file
(not held, see 1): rejected. ``yu``: Mallory's ``rejected`` in the twin ``plans/YU`` while held,
the agent deleting ``plans/yu/``: ``plans/YU`` was frozen only in the pass that read Bob's
approval, which was refused ``E_PLAN_NOT_FROZEN: the plan has no frozen.hash; it was never
frozen`` (nothing ran: the safe side; asserted as such). Both modes: the same verdicts, so the
index rebuilt from history under a new state directory kept every hold and every writer.
(Also seen, not asserted: after ``plans/YG``, ``plans/YL`` were deleted, ``plangate status``
still listed rows ``plans/YG``/``plans/YL`` ``E_UNSAFE_PATH ... is a symbolic link``.)

Should (docs/plan-format.md): "A claim is any entry of the folder, whatever its kind: a file, a
folder, a symlink, a gitlink (submodule)"; a file split into a folder "claims the plan file's
place of ``plans/fy`` exactly as ``PLAN.YML/`` does"; "When the twin folder holds a plan file or
a claim of its place, both plans are ``E_PLAN_AMBIGUOUS``"; and docs/approvals.md: "whoever
deletes one of the two claims chose the content left and is a writer ..., whatever the claim's
spelling or kind ...: a deletion a merge brings from a branch ... is its branch commits'
makers'". On a case-insensitive checkout ``plans/YA/PLAN.yml/`` and ``plans/ya/PLAN.yml`` are
one name; the symlink and gitlink claims there hold, the folder claim does not.

Fixed (2026-12-02, r94held): the hold's one rule (``Lifecycle._claim_sets``) listed a plan's
twin folders from the index's plans only (``FolderTwins.known``, round 93); a case twin folder
that was never a plan of the index (it holds no plan FILE, only a folder ``PLAN.yml/``) was never
listed, while a link or gitlink ``PLAN.yml`` got its own ``E_UNSAFE_PATH`` row and so a plan id.
Now the rule lists the twin folders at the commit read from the TREE (``Lifecycle._tree_twins``:
``names.twin_folders`` walked over ``twins.Listing``, each level's listing read and folded once
per commit, so a plans folder of 10,000 entries costs one read, not one per plan), whatever they
hold, with the index's (``Lifecycle._twin_folders``), for the hold, the held decisions and the
touch alike, in the controller and the fresh-clone audit. An entry below a claim folder
(``plans/YA/PLAN.yml/x.txt``) re-judges every plan one with its folder (``_shadowed``), and its
change is a change of the claim ``plans/YA/PLAN.yml`` (``_claim_entry``, read by
``_claims_plan``; ``plans/YH/PLAN.yml/PLAN.yml`` too: the first folder so named), so Bob's
merged deletion of ``plans/YA`` is his branch's touch: refused ``E_SELF_APPROVAL``, Alice's ran
v1 once. A plan added beside (or after) such a twin's claim is judged from the tree as well
(``_judge_added``; ``tests/git/test_folder_twins.py``: case, ZWNJ, 8.3, trailing-dot, one level
up and backslash twins, the claim before, with or after the plan). ``INDEX_VERSION`` 123. Was:
20 broke (strict xfails, 10 per mode).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, brief, cases, clone_audit, load_yaml, plan_text
from test_round2_execution_kit import shared

#: Bob chose the content left (he deleted a claim): a writer of the plan (the folder approved)
WRITER = ["ya", "yl", "yg", "yn", "yr", "yo", "yp", "yv", "yy", "bl", "bg", "bf", "yj", "yk", "yh"]
#: Bob no writer: his approval runs the plan once (yq: runs v2, the twin left)
CONTROL = ["ys", "yc", "yq", "yf"]
#: Alice's rejected set while held in the plan file: never runs
REJECTED = ["yw", "yt"]
#: yu: Mallory's rejected (not hers to set) in the twin plans/YU/PLAN.yml while held, the agent
#: deleting plans/yu/: the twin left was never frozen (born held), so Bob's approval is refused
#: E_PLAN_NOT_FROZEN (seen): asserted on the safe side only (never more than one run, audit agrees)
SAFE = ["yu"]
SLUGS = [*WRITER, *CONTROL, *REJECTED, *SAFE]
#: the folder whose plan is approved after the release (the plan's own folder removed: the twin)
APPROVED = {s: s for s in SLUGS} | {"yo": "YO", "yp": "YP", "yq": "YQ", "yt": "YT", "yu": "YU"}
APPROVED |= {"bl": "BL", "bg": "BG", "bf": "BF"}
#: the tag that runs when the plan left runs (the twin's v2 when the plan's folder went)
RUNS = {s: s for s in SLUGS} | {s: f"{s}-v2" for s in ("yo", "yp", "yq", "yt", "yu")}
MODES = ["live", "fresh"]


def _rm(lab: Lab, rel: str) -> None:
    lab.git("rm", "-r", "-q", "--cached", rel)
    path = lab.repo / rel
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        for sub in sorted(path.rglob("*"), reverse=True):
            sub.unlink() if not sub.is_dir() or sub.is_symlink() else sub.rmdir()
        path.rmdir()


def _calls(lab: Lab) -> dict[str, tuple[int, int]]:
    return {s: (len(lab.calls(s)), len(lab.calls(f"{s}-v2"))) for s in SLUGS}


def _gitlink(lab: Lab, rel: str) -> None:
    (lab.repo / rel).mkdir(parents=True)
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{lab.head()},{rel}")


def _build(root: Path, mode: str) -> Lab:
    lab = Lab(root)
    git = lab.git
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()  # P1: frozen
    got["frozen"] = lab.rows()
    # -- twins on the line, never a plan in the index: a PLAN.yml/ folder, a symlink, a gitlink
    for slug in ("ya", "ys", "yc", "yw", "bf"):
        lab.put(f"plans/{slug.upper()}/PLAN.yml/x.txt", "a folder named PLAN.yml\n")
    for slug in ("yl", "bl"):
        (lab.repo / f"plans/{slug.upper()}").mkdir()
        os.symlink(f"../{slug}/PLAN.yml", lab.repo / f"plans/{slug.upper()}/PLAN.yml")
    lab.put("plans/yf/PLAN.YML/x.txt", "a folder named PLAN.YML in the plan's own folder\n")
    for slug in ("yo", "yp", "yq", "yt", "yu"):
        lab.put(f"plans/{slug.upper()}/PLAN.yml", plan_text(f"{slug}-v2"))
    # yn: a same-folder twin PLAN.yaml (v2) and a case twin folder holding only a note
    lab.put("plans/yn/PLAN.yaml", plan_text("yn-v2"))
    lab.put("plans/YN/NOTES.md", "notes only\n")
    # yj, yk: the same, the case twin folder holding only a source PLAN.json, a PLAN.yml/ folder
    lab.put("plans/yj/PLAN.yaml", plan_text("yj-v2"))
    lab.put("plans/YJ/PLAN.json", json.dumps(load_yaml(plan_text("yj-v2"))) + "\n")
    lab.put("plans/yk/PLAN.yaml", plan_text("yk-v2"))
    lab.put("plans/YK/PLAN.yml/x.txt", "a folder named PLAN.yml\n")
    # yh: the case twin folder's PLAN.yml/ folder is itself a plan folder (plans/YH/PLAN.yml)
    lab.put("plans/YH/PLAN.yml/PLAN.yml", plan_text("yh-v2"))
    lab.commit("agent: twins", AGENT)
    _gitlink(lab, "plans/YG/PLAN.yml")
    _gitlink(lab, "plans/BG/PLAN.yml")
    git("commit", "-q", "-m", "agent: a gitlink twin folder", who=AGENT)
    # yr: the twin comes on the agent's branch, merged by Mallory; yv: on Bob's, by Mallory
    base = lab.head()
    lab.branch("b-yr", base)
    lab.put("plans/YR/PLAN.yml", plan_text("yr-v2"))
    lab.put("plans/YY/PLAN.yml", plan_text("yy-v2"))
    lab.commit("agent: yr, yy twins", AGENT)
    lab.branch("b-yv", base)
    lab.put("plans/YV/PLAN.yml", plan_text("yv-v2"))
    lab.commit("bob: yv twin", BOB)
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-ff", "--no-edit", "b-yr", who=MALLORY)
    git("merge", "-q", "--no-ff", "--no-edit", "b-yv", who=MALLORY)
    lab.run()  # P2: held
    got["held"] = lab.rows()
    got["p2"] = _calls(lab)
    # -- while held: Alice's rejected in yw's plan file
    lab.set_status("yw", "rejected")
    lab.set_status("YT", "rejected")
    lab.commit("alice: reject yw, and yt's v2 in plans/YT", ALICE)
    lab.set_status("YU", "rejected")
    lab.commit("mallory: reject yu's v2 in plans/YU", MALLORY)
    if mode == "fresh":
        # the controller restarted with a fresh state directory between the hold and release
        lab.state = root / "state2"
        lab.write_config()
        got["restart"] = lab.run(take_over=True).stderr[-600:]
    else:
        lab.run()
    got["held3"] = lab.rows()
    # -- releases
    tip = lab.head()
    lab.branch("b-bob", tip)
    for rel in ("plans/YA", "plans/YL", "plans/YG", "plans/YR", "plans/YW", "plans/yo"):
        _rm(lab, rel)
    _rm(lab, "plans/yt")
    _rm(lab, "plans/YY")
    lab.commit("bob: twin folders gone", BOB)
    # bl, bg, bf: Bob moves the plan's file over the twin folder's link, gitlink, folder
    for slug in ("bl", "bg", "bf"):
        _rm(lab, f"plans/{slug.upper()}/PLAN.yml")
        git("mv", f"plans/{slug}/PLAN.yml", f"plans/{slug.upper()}/PLAN.yml")
    lab.commit("bob: the plans moved over their twin folders' claims", BOB)
    # yn: Bob removes the same-folder twin and gives the note folder a PLAN.yml in one commit
    _rm(lab, "plans/yn/PLAN.yaml")
    lab.put("plans/YN/PLAN.yml", plan_text("yn-v2"))
    _rm(lab, "plans/yj/PLAN.yaml")
    lab.put("plans/YJ/PLAN.yml", plan_text("yj-v2"))
    _rm(lab, "plans/yk/PLAN.yaml")
    _rm(lab, "plans/YK/PLAN.yml")
    lab.put("plans/YK/PLAN.yml", plan_text("yk-v2"))
    _rm(lab, "plans/YH")
    lab.commit("bob: yn's, yj's, yk's PLAN.yaml gone, YN, YJ, YK a plan; YH gone", BOB)
    lab.branch("b-agent", tip)
    _rm(lab, "plans/YC")
    _rm(lab, "plans/YV")
    lab.commit("agent: YC, YV gone", AGENT)
    # yy: the agent's branch (forked at the held tip) adds another twin spelling, plans/Yy
    lab.branch("b-yy", tip)
    lab.put("plans/Yy/PLAN.yml", plan_text("yy-v3"))
    lab.commit("agent: yy's twin again, plans/Yy", AGENT)
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-ff", "--no-edit", "b-bob", who=MALLORY)
    git("merge", "-q", "--no-ff", "--no-edit", "b-agent", who=BOB)
    git("merge", "-q", "--no-ff", "--no-edit", "b-yy", who=MALLORY)
    # on the line: the agent removes YN (Bob's new claim), YS; Bob removes plans/yp; agent yq
    _rm(lab, "plans/YN")
    _rm(lab, "plans/YJ")
    _rm(lab, "plans/YK")
    _rm(lab, "plans/YS")
    _rm(lab, "plans/yq")
    _rm(lab, "plans/yu")
    _rm(lab, "plans/yf/PLAN.YML")
    _rm(lab, "plans/Yy")
    lab.commit("agent: YN, YS, Yy, yf's PLAN.YML/, yq, yu gone", AGENT)
    _rm(lab, "plans/yp")
    lab.commit("bob: yp gone", BOB)
    got["tree"] = git("ls-files")
    lab.run()  # P4: released
    got["released"] = lab.rows()
    got["p4"] = _calls(lab)
    for slug in SLUGS:
        lab.set_status(APPROVED[slug], "approved")
    lab.commit("bob: approve", BOB)
    lab.run()  # P5
    got["bob"] = _calls(lab)
    got["bob_rows"] = lab.rows()
    mid = root / "mid"
    mid.mkdir(exist_ok=True)
    _report, valid = clone_audit(lab, mid)
    got["valid"] = sorted(valid)
    for slug in WRITER:
        lab.set_status(APPROVED[slug], "pending_approval")
    lab.commit("alice: reset", ALICE)
    for slug in WRITER:
        lab.set_status(APPROVED[slug], "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()  # P6
    got["calls"] = _calls(lab)
    got["rows"] = lab.rows()
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _build_live(root: Path) -> Lab:
    return _build(root, "live")


def _build_fresh(root: Path) -> Lab:
    return _build(root, "fresh")


def _lab(factory: pytest.TempPathFactory, mode: str) -> Lab:
    build = _build_live if mode == "live" else _build_fresh
    return shared(factory, f"r94-approve-atk94d-{mode}", build)


IDS = [f"{m}:{s}:{w}" for m in MODES for s in SLUGS for w in ("ran", "audit", "held")]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round94_atk94d(tmp_path_factory: pytest.TempPathFactory, vid: str) -> None:
    mode, slug, what = vid.split(":")
    got = _lab(tmp_path_factory, mode).got  # type: ignore[attr-defined]
    plan = f"plans/{slug}"
    if what == "held":
        for key in ("held", "held3"):
            text = json.dumps(got[key].get(plan, {}), ensure_ascii=False)
            assert "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text, (
                key,
                brief(got[key].get(plan, {})),
            )
        assert got["p2"][slug] == (0, 0), got["p2"][slug]
        return
    target = f"plans/{APPROVED[slug]}"
    row = got["bob_rows"].get(target, {})
    ran = slug in CONTROL
    if what == "audit":
        done = row.get("status") == "completed"
        assert (target in got["valid"]) == done, (target, got["valid"], brief(row))
        if slug not in SAFE:
            assert (target in got["valid"]) == ran, (target, got["valid"], brief(row))
        return
    if slug in SAFE:
        assert got["calls"][slug][0] == 0 and got["calls"][slug][1] <= 1, got["calls"][slug]
        return
    v2 = RUNS[slug].endswith("-v2")
    bob = ((0, 1) if v2 else (1, 0)) if ran else (0, 0)
    assert got["p4"][slug] == (0, 0), (got["p4"][slug], brief(got["released"].get(target, {})))
    assert got["bob"][slug] == bob, (got["bob"][slug], brief(row))
    if slug in WRITER:
        assert "E_SELF_APPROVAL" in json.dumps(row), brief(row)
    final = (0, 0) if slug in REJECTED else (0, 1) if v2 else (1, 0)
    assert got["calls"][slug] == final, (got["calls"][slug], brief(got["rows"].get(target, {})))


if __name__ == "__main__":
    import tempfile

    for mode in sys.argv[1:] or MODES:
        out = Path(tempfile.mkdtemp(prefix=f"lab-{mode}-", dir="/tmp/atk94d"))
        got = _build(out, mode).got  # type: ignore[attr-defined]
        for key in ("frozen", "held", "held3", "released", "bob_rows", "rows"):
            got[key] = {p: brief(r) for p, r in got[key].items()}
        print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
