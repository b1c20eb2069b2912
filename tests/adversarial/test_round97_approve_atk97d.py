"""Round 97, approval (atk97d): r96held's edges (a claim only a merged side held, removed in
ways other than one plain branch commit).

Lab (built once per mode, ``one``, ``step``, ``fresh``; policy: Alice or ``*@ops.example.com``).
P1 freezes the agent's plans ``plans/<s>/PLAN.yml`` (one ``rec`` action each). Every twin is a
case twin FOLDER claim ``plans/<S>/PLAN.yml/x.txt`` unless noted (``b2f``, ``rvf``, ``bk``,
``rdb``: a plan file twin ``plans/<S>/PLAN.yml`` v2; ``rdf``, ``bky``: a same-folder
``plans/<s>/PLAN.yaml`` v2). Then, every branch forked from main and merged ``--no-ff``:

- ``b2``, ``b2f``: the agent's branch adds the claims; Bob's branch OF that branch deletes them;
  the agent merges Bob's branch into its own (after a note), Mallory merges the agent's branch:
  the deletion two merges deep.
- ``rd``, ``rdf``: the agent's branch adds the claims; Bob merges it ``--no-commit``, ``git rm``s
  them and commits the merge (the resolution drops them, neither parent deleted them); ``rdm``
  the same by Mallory (control: Bob no writer); ``rdb``: Bob's resolution ``git mv``s the claim
  to ``PLAN.yml.bak``; ``rdo``: Bob's ``--no-commit`` octopus of two agent branches drops one's
  claim; ``rds``: Bob's ``git merge -s ours`` of the agent's branch holding the claim.
- ``rvm``: the agent's branch with the claim merged by Mallory, then Bob's ``git revert -m 1``
  of that merge on the line.
- ``sq``: the agent adds, Bob deletes (and adds a note), Mallory ``git merge --squash``es and
  commits (control: "A squash merge is its squasher's own commit"; Bob's commits are in no
  history).
- ``rv``, ``rvf``: Bob's ``git revert`` of the agent's branch commit that added the claims.
- ``bk``, ``bkd``, ``bky``: Bob's branch commit ``git mv``s each claim to ``<name>.bak`` (no
  claim's name).
- ``ra``, ``rc``: the agent adds, Bob deletes, the agent (``ra``) or Carol (``rc``) adds it again
  on the same branch: main holds the twin after the merge (held), the agent deletes it on the
  line after P2.
- ``o1``, ``o2``, ``oc``: claims on two branches merged in ONE octopus by Mallory; Bob deleted
  ``o1``'s on branch 1 and ``o2``'s on branch 2, Carol ``oc``'s on branch 2 (control).
- ``tw``, ``tw2``: the agent's branch merged twice: once with the claims (held), once after
  Bob's deletion there (``tw2`` before P2, ``tw`` after P2).
- ``mc``, ``ma``: the claim only in a merged branch's MIDDLE commit (notes before and after),
  deleted by Bob (``mc``) or by the agent (``ma``, control); ``ok``: no twin (control).

P2 reads the holds (``ra``, ``rc``, ``tw``), P3 the releases. P4: Bob sets ``approved`` in every
plan on his branch ``b-approve``; ``plangate check --base main --head b-approve --as Bob``
predicts, then Bob merges it. Modes: ``one`` (passes only at P1-P4); ``step`` (a ``run --once``
after every change of main: the controller restarted on its saved index between the commits);
``fresh`` (as ``one``, but P4 runs on a NEW state directory, ``--take-over``: the index rebuilt
from history). ``<m>:<s>:held``: P2 showed ``E_PLAN_AMBIGUOUS``, nothing ran at P2/P3;
``:ran``: Bob, who removed a claim, is a writer: refused ``E_SELF_APPROVAL``, nothing ran
(controls: ran once); ``:audit``: the fresh-clone ``plangate audit --json`` calls valid exactly
what the controller completed and the expected ones; ``:check``: check's outcome is the
expected one (``refuse`` with ``E_SELF_APPROVAL``, controls ``start``) and the controller's.

Seen (round 97): 20 ids broke, one class, the same in all three modes; controller, audit and
check agreed each time.

1. **A merge whose resolution drops a claim only the merged side held makes its merger no
   writer** (``rd``, ``rdf``, ``rdo``, ``rds`` ``:{ran,audit,check}`` in ``one``, ``:ran`` in
   ``step``, ``fresh``): Bob's merge commit of the agent's branch, ``--no-commit`` then ``git rm
   -r plans/RD/PLAN.yml`` (``plans/rdf/PLAN.yaml``; one branch's claim of an octopus;
   ``-s ours``), left the claim out; neither parent deleted it and main never held it. Bob's
   ``approved`` then ran each once (``approval request (approve) by bob@ops.example.com``,
   ``plangate: start plans/rd``, ``plangate: complete plans/rd``), the audit called each valid,
   and ``check --as bob@ops.example.com`` said ``start`` with no refusal. The same resolution
   moving the claim to ``PLAN.yml.bak`` (``rdb``) DID make Bob a writer (``approval refused:
   E_SELF_APPROVAL: bob@ops.example.com wrote or changed this plan's content and cannot
   approve it``): the ``.bak`` file lands below the twin folder, a change of the claim.

Held: every other removal made Bob a writer, in every mode (the index rebuilt on a fresh state
directory too): the deletion two merges deep (``b2``, ``b2f``), ``git revert`` of the adding
commit (``rv``, ``rvf``) and ``git revert -m 1`` of the merge (``rvm``), the rename to ``.bak``
(``bk``, ``bkd``, ``bky``), the claim deleted by Bob and added again by the agent or Carol
(``ra``, ``rc``: held at P2 ``E_PLAN_AMBIGUOUS: plans/RA/PLAN.yml is this plan's file on a
case-insensitive, HFS+ or NTFS checkout ...``, then refused), both branches of one octopus
(``o1``, ``o2``), the branch merged twice (``tw``: held at P2, ``tw2``), the claim only in a
middle commit (``mc``): ``approval refused: E_SELF_APPROVAL``, nothing ran, audit agreed, check
said ``refuse`` ``E_SELF_APPROVAL``. Controls ran once and were valid: Mallory's dropping merge
(``rdm``), Mallory's squash of Bob's deletion (``sq``), Carol's deletion in the octopus (``oc``),
the agent's own deletion in the middle (``ma``), no twin (``ok``).

Should (docs/approvals.md): "whoever deletes one of the two claims chose the content left and
is a writer (round 69's rule), whatever the claim's spelling or kind"; "What the merge commit
itself changes stays the merger's own commit: a status the merge writes that no merged commit
made (a conflict resolved by hand ...) is the merger's"; "A branch's deletion the merge keeps
where git's join conflicted ... is ..., as every modify/delete's resolution, the merger's as
well"; round 96: "A merged commit that removes or moves away an entry which, in its parent's
own tree, was one of two or more claims on a plan's place by the hold's rule chose the content
left: its makers are writers ..., whether or not the line ever held the plan". A merge that
removes the claim its second parent's tree held chose the content left as much as a branch
commit deleting it does.

Fixed (2026-12-02, r97held): the history index reads every merge after the last pass (on
the first-parent line or a merged branch) against its merged parents with one ``git
diff-tree --stdin -m`` (deletions under the plans folder's spellings, names only); a merge
that leaves out a claim-named entry is read further: each claim a merged parent's tree held
(by the hold's rule, one of two or more on a plan's place) that the merge's tree lacks, and
that git's clean join did not remove (another parent lacking it, their merge base holding
the same bytes), makes the merge's makers writers of that plan's folder and of the version
left (``Lifecycle._merge_claim_removals``, the removal itself ``Lifecycle._claims_removed``,
shared with r96held's ``_side_claim_removals``). Bob's ``--no-commit`` + ``git rm``, his
octopus and his ``-s ours`` merge make him a writer: refused ``E_SELF_APPROVAL`` in every
mode, the audit and ``check`` agree; Mallory's dropping merge (``rdm``) still does nothing
(she is no author and approves nothing). INDEX_VERSION 127.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, BOB, CAROL, MALLORY, Lab, brief, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

#: slug -> the twin (a claim of plans/<slug>'s place); ``.../x.txt``: a folder claim
TWIN = {
    "b2": "plans/B2/PLAN.yml/x.txt",
    "b2f": "plans/B2F/PLAN.yml",
    "rd": "plans/RD/PLAN.yml/x.txt",
    "rdf": "plans/rdf/PLAN.yaml",
    "rdm": "plans/RDM/PLAN.yml/x.txt",
    "rdb": "plans/RDB/PLAN.yml",
    "rdo": "plans/RDO/PLAN.yml/x.txt",
    "rds": "plans/RDS/PLAN.yml/x.txt",
    "rvm": "plans/RVM/PLAN.yml/x.txt",
    "sq": "plans/SQ/PLAN.yml/x.txt",
    "rv": "plans/RV/PLAN.yml/x.txt",
    "rvf": "plans/RVF/PLAN.yml",
    "bk": "plans/BK/PLAN.yml",
    "bkd": "plans/BKD/PLAN.yml/x.txt",
    "bky": "plans/bky/PLAN.yaml",
    "ra": "plans/RA/PLAN.yml/x.txt",
    "rc": "plans/RC/PLAN.yml/x.txt",
    "o1": "plans/O1/PLAN.yml/x.txt",
    "o2": "plans/O2/PLAN.yml/x.txt",
    "oc": "plans/OC/PLAN.yml/x.txt",
    "tw": "plans/TW/PLAN.yml/x.txt",
    "tw2": "plans/TW2/PLAN.yml/x.txt",
    "mc": "plans/MC/PLAN.yml/x.txt",
    "ma": "plans/MA/PLAN.yml/x.txt",
    "ok": None,
}
SLUGS = list(TWIN)
#: Bob is no writer by the docs: his approval runs the plan once
CONTROL = {"rdm", "sq", "oc", "ma", "ok"}
#: the line holds the twin when P2 reads it
HELD = {"tw", "ra", "rc"}
MODES = ["one", "step", "fresh"]


def _claim(lab: Lab, slug: str) -> None:
    rel = TWIN[slug]
    assert rel is not None
    lab.put(rel, "claim\n" if rel.endswith("x.txt") else plan_text(f"{slug}-v2", name=slug))


def _top(slug: str) -> str:
    """The claim's top entry (the folder for a folder claim, else the file)."""
    rel = TWIN[slug]
    assert rel is not None
    return rel[: -len("/x.txt")] if rel.endswith("x.txt") else rel


def _rm(lab: Lab, slug: str) -> None:
    lab.git("rm", "-r", "-q", "-f", _top(slug))


def _calls(lab: Lab) -> dict[str, int]:
    return {s: len(lab.calls(s)) for s in SLUGS}


def _merge(lab: Lab, who: tuple[str, str], *refs: str) -> None:
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-edit", *refs, who=who)


def _build(root: Path, mode: str) -> Lab:
    lab = Lab(root)
    git = lab.git
    got: dict[str, Any] = {}

    def step() -> None:  # the daemon restarted on its saved index after each change of main
        if mode == "step":
            lab.run()

    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()  # P1: frozen
    got["frozen"] = lab.rows()
    # b2: the agent's branch adds the claim, Bob's branch of it deletes it, merged into the
    # agent's branch by the agent, which Mallory merges: the deletion two merges deep
    lab.branch("b-b2")
    _claim(lab, "b2"), _claim(lab, "b2f")
    lab.commit("agent: b2 twins", AGENT)
    lab.branch("b-b2x", "b-b2")
    _rm(lab, "b2"), _rm(lab, "b2f")
    lab.commit("bob: b2 twins gone", BOB)
    git("checkout", "-q", "b-b2")
    lab.put("notes/b2.txt", "agent's note\n")
    lab.commit("agent: a note", AGENT)
    git("merge", "-q", "--no-ff", "--no-edit", "b-b2x", who=AGENT)
    _merge(lab, MALLORY, "b-b2")
    step()
    # rd: the agent's branch adds the claim; the merge's resolution drops it (Bob's merge,
    # rdm: Mallory's): neither parent deleted it
    for slug, who in (("rd", BOB), ("rdm", MALLORY)):
        lab.branch(f"b-{slug}")
        _claim(lab, slug)
        if slug == "rd":
            _claim(lab, "rdf")
        lab.commit(f"agent: {slug} twin", AGENT)
        git("checkout", "-q", "main")
        git("merge", "-q", "--no-ff", "--no-commit", f"b-{slug}", who=who)
        _rm(lab, slug)
        if slug == "rd":
            _rm(lab, "rdf")
        git("commit", "-q", "--no-edit", who=who)
        step()
    # rdb: Bob's merge resolution renames the claim to PLAN.yml.bak (no claim's name)
    lab.branch("b-rdb")
    _claim(lab, "rdb")
    lab.commit("agent: rdb twin", AGENT)
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-ff", "--no-commit", "b-rdb", who=BOB)
    git("mv", _top("rdb"), _top("rdb") + ".bak")
    git("commit", "-q", "--no-edit", who=BOB)
    step()
    # rdo: Bob's octopus merge of two agent branches drops one branch's claim
    lab.branch("b-rdo1")
    _claim(lab, "rdo")
    lab.commit("agent: rdo twin", AGENT)
    lab.branch("b-rdo2", "main")
    lab.put("notes/rdo.txt", "note\n")
    lab.commit("agent: rdo note", AGENT)
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-ff", "--no-commit", "b-rdo1", "b-rdo2", who=BOB)
    _rm(lab, "rdo")
    git("commit", "-q", "--no-edit", who=BOB)
    step()
    # rds: Bob's `git merge -s ours` of the agent's branch holding a claim (all of it dropped)
    lab.branch("b-rds")
    _claim(lab, "rds")
    lab.commit("agent: rds twin", AGENT)
    _merge(lab, BOB, "-s", "ours", "b-rds")
    step()
    # rvm: the agent's branch with a claim merged by Mallory; Bob's `git revert -m 1` of it
    lab.branch("b-rvm")
    _claim(lab, "rvm")
    lab.commit("agent: rvm twin", AGENT)
    _merge(lab, MALLORY, "b-rvm")
    step()
    git("revert", "--no-edit", "-m", "1", lab.head(), who=BOB)
    step()
    # sq: the agent adds, Bob deletes, Mallory squash-merges (a squash is its squasher's)
    lab.branch("b-sq")
    _claim(lab, "sq")
    lab.commit("agent: sq twin", AGENT)
    _rm(lab, "sq")
    lab.put("notes/sq.txt", "bob's note\n")
    lab.commit("bob: sq twin gone", BOB)
    git("checkout", "-q", "main")
    git("merge", "-q", "--squash", "b-sq", who=MALLORY)
    lab.commit("mallory: squash b-sq", MALLORY)
    step()
    # rv: Bob's git revert of the agent's commit that added the claims
    lab.branch("b-rv")
    _claim(lab, "rv"), _claim(lab, "rvf")
    added = lab.commit("agent: rv twins", AGENT)
    git("revert", "--no-edit", added, who=BOB)
    _merge(lab, MALLORY, "b-rv")
    step()
    # bk: Bob renames the claims to names that claim nothing (PLAN.yml.bak, PLAN.yaml.bak)
    lab.branch("b-bk")
    for slug in ("bk", "bkd", "bky"):
        _claim(lab, slug)
    lab.commit("agent: bk twins", AGENT)
    for slug in ("bk", "bkd", "bky"):
        git("mv", _top(slug), _top(slug) + ".bak")
    lab.commit("bob: bk twins renamed .bak", BOB)
    _merge(lab, MALLORY, "b-bk")
    step()
    # ra: the agent adds, Bob deletes, the agent re-adds (rc: Carol re-adds) on one branch
    lab.branch("b-ra")
    _claim(lab, "ra"), _claim(lab, "rc")
    lab.commit("agent: ra twins", AGENT)
    _rm(lab, "ra"), _rm(lab, "rc")
    lab.commit("bob: ra twins gone", BOB)
    _claim(lab, "ra")
    lab.commit("agent: ra twin again", AGENT)
    _claim(lab, "rc")
    lab.commit("carol: rc twin again", CAROL)
    _merge(lab, MALLORY, "b-ra")
    step()
    # o1/o2/oc: claims on two side branches, merged in one octopus by Mallory; o1 deleted by
    # Bob on branch 1, o2 by Bob on branch 2, oc by Carol on branch 2 (Bob no writer)
    lab.branch("b-o1")
    _claim(lab, "o1")
    lab.commit("agent: o1 twin", AGENT)
    _rm(lab, "o1")
    lab.commit("bob: o1 twin gone", BOB)
    lab.branch("b-o2", "main")
    _claim(lab, "o2"), _claim(lab, "oc")
    lab.commit("agent: o2 twins", AGENT)
    _rm(lab, "o2")
    lab.commit("bob: o2 twin gone", BOB)
    _rm(lab, "oc")
    lab.commit("carol: oc twin gone", CAROL)
    _merge(lab, MALLORY, "b-o1", "b-o2")
    step()
    # tw/tw2: the branch merged twice, once with the claim, once after Bob's deletion
    lab.branch("b-tw")
    _claim(lab, "tw"), _claim(lab, "tw2")
    lab.commit("agent: tw twins", AGENT)
    _merge(lab, MALLORY, "b-tw")
    step()
    git("checkout", "-q", "b-tw")
    _rm(lab, "tw2")
    lab.commit("bob: tw2 twin gone", BOB)
    _merge(lab, MALLORY, "b-tw")
    step()
    # mc/ma: the claim only in a merged branch's middle commit (added, then deleted: mc by
    # Bob, ma by the agent), notes before and after
    lab.branch("b-mc")
    lab.put("notes/mc1.txt", "1\n")
    lab.commit("agent: note 1", AGENT)
    _claim(lab, "mc"), _claim(lab, "ma")
    lab.commit("agent: mc twins", AGENT)
    _rm(lab, "mc")
    lab.commit("bob: mc twin gone", BOB)
    _rm(lab, "ma")
    lab.commit("agent: ma twin gone", AGENT)
    lab.put("notes/mc2.txt", "2\n")
    lab.commit("agent: note 2", AGENT)
    _merge(lab, MALLORY, "b-mc")
    got["tree"] = git("ls-files")
    lab.run()  # P2: held (tw, ra, rc)
    got["held"] = lab.rows()
    got["p2"] = _calls(lab)
    # releases: Bob deletes tw's claim on b-tw, merged again; the agent deletes ra's, rc's
    git("checkout", "-q", "b-tw")
    _rm(lab, "tw")
    lab.commit("bob: tw twin gone", BOB)
    _merge(lab, MALLORY, "b-tw")
    step()
    _rm(lab, "ra"), _rm(lab, "rc")
    lab.commit("agent: ra rc twins gone", AGENT)
    lab.run()  # P3: released
    got["released"] = lab.rows()
    got["p3"] = _calls(lab)
    # P4: Bob's approvals on his branch; `plangate check` predicts his merge, then he merges
    lab.branch("b-approve")
    for slug in SLUGS:
        lab.set_status(slug, "approved")
    lab.commit("bob: approve", BOB)
    told = lab.cli(
        "check",
        "--config",
        str(lab.config),
        "--base",
        "main",
        "--head",
        "b-approve",
        "--as",
        BOB[1],
        "--format",
        "json",
        cwd=lab.repo,
    )
    got["check"] = {
        p["plan"]: (p.get("outcome"), [r.get("code") for r in p.get("refused") or []])
        for p in json.loads(told.stdout)["plans"]
    }
    _merge(lab, BOB, "b-approve")
    if mode == "fresh":  # the controller restarted on a new state directory: index rebuilt
        lab.state = root / "state2"
        lab.write_config()
    lab.run(take_over=mode == "fresh")  # P4
    got["calls"] = _calls(lab)
    got["rows"] = lab.rows()
    mid = root / "mid"
    mid.mkdir(exist_ok=True)
    _report, valid = clone_audit(lab, mid)
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _lab(factory: pytest.TempPathFactory, mode: str) -> Lab:
    return shared(factory, f"r97-approve-atk97d-{mode}", lambda root: _build(root, mode))


#: which checks each mode asks: ``step`` and ``fresh`` change only what the controller's passes
#: saw (the git history is the same lab's), so they ask the controller; ``check``, ``audit`` in
#: ``one``
WHATS = {
    "one": ("held", "ran", "audit", "check"),
    "step": ("held", "ran"),
    "fresh": ("ran",),
}
IDS = [f"{m}:{s}:{w}" for m in MODES for s in SLUGS for w in WHATS[m] if w != "held" or s in HELD]
#: fixed (r97held): Bob's dropping merges (``rd``, ``rdf``, ``rdo``, ``rds``) make him a writer
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round97_atk97d(tmp_path_factory: pytest.TempPathFactory, vid: str) -> None:
    mode, slug, what = vid.split(":")
    got = _lab(tmp_path_factory, mode).got  # type: ignore[attr-defined]
    plan = f"plans/{slug}"
    ran = slug in CONTROL
    if what == "held":
        text = json.dumps(got["held"].get(plan, {}), ensure_ascii=False)
        assert "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text, brief(
            got["held"].get(plan, {})
        )
        assert got["p2"][slug] == 0 and got["p3"][slug] == 0, (got["p2"][slug], got["p3"][slug])
        return
    row = got["rows"].get(plan, {})
    if what == "check":
        outcome, codes = got["check"].get(plan, (None, []))
        assert outcome == ("start" if ran else "refuse"), (outcome, codes, brief(row))
        assert ran or "E_SELF_APPROVAL" in codes, (outcome, codes)
        assert (outcome == "start") == (got["calls"][slug] == 1), (outcome, got["calls"][slug])
        return
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

    os.makedirs("/tmp/atk97d", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="lab-", dir="/tmp/atk97d"))
    got = _build(out, sys.argv[1] if len(sys.argv) > 1 else "one").got  # type: ignore[attr-defined]
    for key in ("frozen", "held", "released", "rows"):
        got[key] = {p: brief(r) for p, r in got[key].items()}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
