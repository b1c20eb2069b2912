"""Round 98, approval (atk98d): held plans and history: content a merge's own resolution ADDS
or changes (neighbours of r97held's dropped claims), criss-cross and octopus merges, plan text
that moves, is copied or restored, judged live, on a saved index and on a rebuilt one.

Lab (built once per mode, ``one``, ``step``, ``fresh``; policy: Alice or ``*@ops.example.com``).
P0: the agent writes most plans ``plans/<s>/PLAN.yml`` (one ``rec`` action each); Bob writes
``mvbs``, ``rs``, ``rsf``, ``fmsrc``, Alice ``cpasrc``, Mallory ``mvcs``, ``rsc``, ``cpcsrc``
(each their own commit); P1 freezes them. Then (``--no-commit`` merges: the resolution is
written by hand before the merge commit):

- ``nm`` (Bob), ``nmm`` (Mallory): a NEW plan written only in a merge's own resolution;
  ``nmo`` (Bob), ``nmoc`` (Carol): the same in an octopus whose second side is an empty commit.
- ``ec`` (Bob), ``ecm`` (Mallory): an evil merge on main adds a param to an existing plan;
  ``evb`` (Bob), ``evm`` (Carol): the agent's branch merges main back with that evil edit,
  Mallory merges the branch; ``cc`` (Bob), ``ccc`` (Carol): the same edit in the final merge of
  a criss-cross (two merge bases) on a branch Mallory merges.
- ``xt``: the agent's branch and Carol on main change one param line; Bob merges ``-X theirs``.
- ``mvb``/``mvc``: the agent ``git mv``s Bob's / Mallory's frozen plan folder to a new name;
  ``cpa``/``cpc``: the agent copies Alice's / Mallory's frozen PLAN.yml byte for byte (Alice
  approves these two on main); ``fm``: the agent writes Bob's plan again with other bytes and
  the same hash (a comment line, other quotes).
- ``rs``, ``rsf`` (Bob's), ``rsc`` (Mallory's): the agent changes the plan (frozen again),
  Carol ``git checkout <P0> -- plans/<s>`` restores the original text (``rsf``: plus a comment).
- ``cx`` (Bob), ``cxm`` (Mallory, control), ``cxl``/``cxlm`` (on main itself), ``cxf`` (a plan
  file twin ``plans/CXF/PLAN.yml`` with another version), ``cxs`` (``merge -s ours``): a twin
  claim ``plans/<S>/PLAN.yml/x.txt`` added on main by the agent; branch x: a note (X1); branch y
  (or main): Carol deletes the claim (Y1); the agent merges Y1 into x and puts the claim back
  (X2); Carol merges X1 into y (Y2, lacks it); Bob merges X2 into y ``--no-commit`` and ``git
  rm``s the claim (a criss-cross: bases X1, which holds the claim, and Y1; X1 is made a second
  after Y1, so ``git merge-base`` names X1; git's own join, ``git merge-tree``, KEEPS it);
  Mallory merges y into main.
- ``bm`` (Bob), ``bmm`` (Mallory): the agent's branch adds a twin claim; Bob merges main BACK
  into it ``--no-commit`` dropping the claim its first parent held; Mallory merges the branch.
  ``bl``: main holds the agent's claim; Bob's merge of a note branch into main drops it.

P2 (every plan pending and frozen, nothing ran). P3: Bob sets ``approved`` on his branch
``b-approve``; ``plangate check --base main --head b-approve --as Bob`` predicts; Bob merges it;
Alice approves ``cpa``, ``cpc`` on main. Modes: ``one`` (few passes), ``step`` (a ``run --once``
after every change of main: the saved index between commits), ``fresh`` (P3 on a NEW state
directory with ``--take-over``: the index rebuilt). Ids ``<m>:<s>:ran``: the approver wrote
the plan (or chose its content): refused ``E_SELF_APPROVAL``, ``rec`` never ran; controls ran
once. ``:audit``: the fresh-clone ``plangate audit --json`` calls valid exactly what completed
and the expected ones; ``:check``: check's outcome (``refuse`` with ``E_SELF_APPROVAL`` /
``start``). ``bench:criss-cross`` (the criss-crosses have two bases, git's join keeps the claim,
main lacks it at the end, and the base ``git merge-base`` names holds the claim: before X1 was
dated a second after Y1, one run refused ``step:cx``, likely git naming the other base),
``bench:frozen`` (nothing ran before P3, all pending).

Seen (round 98): 174 ids; 24 broke, one class, the same in all three modes; controller, audit
and check agreed each time.

1. **Criss-cross clean-join test reads one merge base** (``cx``, ``cxl``, ``cxf``, ``cxs``
   ``:{ran,audit,check}`` in ``one``, ``:{ran,audit}`` in ``step``, ``:ran`` in ``fresh``):
   Bob's criss-cross merge dropped a twin claim that the merged side held and git's own join
   keeps (``git merge-tree --write-tree`` of the parents holds it), on a merged branch or on
   main, by ``--no-commit`` + ``git rm`` or by ``-s ours``, for a folder claim or a plan file
   twin; Bob's ``approved`` then ran each once (``approval request (approve) by
   bob@ops.example.com``, ``plangate: start plans/cx``, ``plangate: complete plans/cx``), the
   audit called each valid, ``check --as bob@ops.example.com`` said ``start`` with no refusal.
   The same drop in a merge with one base is refused (round 97 ``rd``). Likely root cause:
   ``Lifecycle._merge_claim_removals`` asks ``_joined_away`` with ``repo.merge_base(parent,
   other)`` (``git merge-base``, the first base only): base X1 holds the claim's bytes and the
   other parent lacks it, so the drop is taken for git's clean removal, while git's virtual
   base (X1 joined with Y1) lacks it.

Held: every other variant, in every mode: Bob's merge resolution adding a new plan (``nm``,
also in an octopus with an empty side, ``nmo``), his evil merges on main, on a branch that
merged main back, and in a criss-cross (``ec``, ``evb``, ``cc``), the moved folder of his plan
(``mvb``), Alice's plan copied byte for byte (``cpa``), Bob's plan rewritten with the same hash
(``fm``), Bob's old text restored by Carol, byte for byte or with a comment (``rs``, ``rsf``),
Bob's merge back into the agent's branch dropping its claim (``bm``) and his dropping merge on
main (``bl``):
``approval refused: E_SELF_APPROVAL: bob@ops.example.com wrote or changed this plan's content
and cannot approve it`` (Alice's for ``cpa``), nothing ran, audit and check agreed. Controls ran
once and were valid: ``nmm``, ``nmoc``, ``ecm``, ``evm``, ``ccc``, ``xt`` (``-X theirs``),
``mvc``, ``cpc``, ``rsc``, ``cxm``, ``cxlm``, ``bmm``, ``ok``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import (
    AGENT,
    ALICE,
    BOB,
    CAROL,
    MALLORY,
    Lab,
    brief,
    cases,
    clone_audit,
    plan_text,
)
from test_round2_execution_kit import shared

#: slug -> who approves it at P3 (Bob on his merged branch, Alice on main)
APPROVER = {
    "nm": BOB,
    "nmm": BOB,
    "nmo": BOB,
    "nmoc": BOB,
    "ec": BOB,
    "ecm": BOB,
    "evb": BOB,
    "evm": BOB,
    "cc": BOB,
    "ccc": BOB,
    "xt": BOB,
    "mvb": BOB,
    "mvc": BOB,
    "cpa": ALICE,
    "cpc": ALICE,
    "rs": BOB,
    "rsf": BOB,
    "rsc": BOB,
    "fm": BOB,
    "cx": BOB,
    "cxm": BOB,
    "cxl": BOB,
    "cxlm": BOB,
    "cxf": BOB,
    "cxs": BOB,
    "bm": BOB,
    "bmm": BOB,
    "bl": BOB,
    "ok": BOB,
}
SLUGS = list(APPROVER)
#: the approver wrote nothing of it by the docs: the approval runs it once
CONTROL = {
    "bmm",
    "cxm",
    "cxlm",
    "nmm",
    "nmoc",
    "ecm",
    "evm",
    "ccc",
    "xt",
    "mvc",
    "cpc",
    "rsc",
    "ok",
}
#: written by someone other than the agent at P0 (source plans, never approved)
SOURCES = {
    BOB: ["mvbs", "rs", "rsf", "fmsrc"],
    ALICE: ["cpasrc"],
    MALLORY: ["mvcs", "rsc", "cpcsrc"],
}
#: created later (by a merge's resolution, a move, a copy): not in the agent's P0 commit
LATER = {"nm", "nmm", "nmo", "nmoc", "mvb", "mvc", "cpa", "cpc", "fm", "rs", "rsf", "rsc"}
MODES = ["one", "step", "fresh"]


def _edit(lab: Lab, slug: str, value: str) -> None:
    """A change of the plan's hashed content: a param ``v`` added after ``tag``."""
    text = lab.read(slug)
    assert f'tag: "{slug}"\n' in text, text
    lab.write(slug, text.replace(f'tag: "{slug}"\n', f'tag: "{slug}"\n      v: "{value}"\n', 1))


def _calls(lab: Lab) -> dict[str, int]:
    return {s: len(lab.calls(s)) for s in SLUGS}


def _build(root: Path, mode: str) -> Lab:
    lab = Lab(root)
    git = lab.git
    got: dict[str, Any] = {}

    def step() -> None:  # the daemon restarted on its saved index after each change of main
        if mode == "step":
            lab.run()

    # P0: the agent's plans; Bob's, Alice's and Mallory's source plans, each their own commit
    for slug in SLUGS:
        if slug not in LATER:
            lab.write(slug, plan_text(slug))
    lab.write("xt", plan_text("xt", params='v: "0"\n'))
    lab.commit("agent: plans", AGENT)
    for who, slugs in SOURCES.items():
        for slug in slugs:
            tag = {"mvbs": "mvb", "fmsrc": "fm", "cpasrc": "cpa", "mvcs": "mvc", "cpcsrc": "cpc"}
            lab.write(slug, plan_text(tag.get(slug, slug)))
        lab.commit(f"{who[0].lower()}: plans", who)
    got["p0"] = git("rev-parse", "HEAD").strip()
    lab.run()  # P1: frozen
    got["frozen"] = lab.rows()

    # nm/nmm: a NEW plan only in the merge's own resolution (Bob's / Mallory's)
    for slug, who in (("nm", BOB), ("nmm", MALLORY)):
        lab.branch(f"b-{slug}")
        lab.note(slug)
        git("checkout", "-q", "main")
        lab.rmerge(who, [f"b-{slug}"], lambda s=slug: lab.write(s, plan_text(s)))
        step()
    # nmo/nmoc: the same in an octopus, one side an empty commit (Bob's / Carol's)
    for slug, who in (("nmo", BOB), ("nmoc", CAROL)):
        lab.branch(f"b-{slug}1")
        lab.note(slug)
        lab.branch(f"b-{slug}2", "main")
        lab.commit(f"agent: empty {slug}", AGENT)
        git("checkout", "-q", "main")
        lab.rmerge(who, [f"b-{slug}1", f"b-{slug}2"], lambda s=slug: lab.write(s, plan_text(s)))
        step()
    # ec/ecm: an evil merge on main changes an existing plan's params
    for slug, who in (("ec", BOB), ("ecm", MALLORY)):
        lab.branch(f"b-{slug}")
        lab.note(slug)
        git("checkout", "-q", "main")
        lab.rmerge(who, [f"b-{slug}"], lambda s=slug, w=who: _edit(lab, s, w[0]))
        step()
    # evb/evm: the agent's branch merges main back (Bob's / Carol's evil merge ON the branch),
    # Mallory merges the branch
    for slug, who in (("evb", BOB), ("evm", CAROL)):
        lab.branch(f"b-{slug}")
        lab.note(slug)
        git("checkout", "-q", "main")
        lab.note(f"{slug}-main", CAROL)
        step()
        git("checkout", "-q", f"b-{slug}")
        lab.rmerge(who, ["main"], lambda s=slug, w=who: _edit(lab, s, w[0]))
        git("checkout", "-q", "main")
        git("merge", "-q", "--no-ff", "--no-edit", f"b-{slug}", who=MALLORY)
        step()
    # cc/ccc: a criss-cross (two merge bases); the final merge's resolution edits the plan
    for slug, who in (("cc", BOB), ("ccc", CAROL)):
        lab.branch(f"x-{slug}")
        lab.note(f"{slug}-x")
        lab.branch(f"y-{slug}", "main")
        lab.note(f"{slug}-y", CAROL)
        git("checkout", "-q", f"x-{slug}")
        git("merge", "-q", "--no-ff", "--no-edit", f"y-{slug}", who=AGENT)
        git("checkout", "-q", f"y-{slug}")
        git("merge", "-q", "--no-ff", "--no-edit", f"x-{slug}~1", who=CAROL)
        lab.rmerge(who, [f"x-{slug}"], lambda s=slug, w=who: _edit(lab, s, w[0]))
        bases = git("merge-base", "--all", f"y-{slug}^1", f"y-{slug}^2").split()
        got[f"bases-{slug}"] = len(bases)
        git("checkout", "-q", "main")
        git("merge", "-q", "--no-ff", "--no-edit", f"y-{slug}", who=MALLORY)
        step()
    # cx/cxm: a twin claim dropped by a criss-cross merge's resolution where ONE merge base
    # holds it and git's own merge (virtual base) adds it: the agent adds the claim on main;
    # x: a note (X1, holds it); y: Carol deletes it (Y1); X2: the agent merges Y1 and puts the
    # claim back; Y2: Carol merges X1 (lacks it); Bob (cxm: Mallory) merges X2 into Y2
    # --no-commit and drops the claim; Mallory merges y into main (a clean deletion)
    # cxl/cxlm: the same with main as y (Carol's deletion and merge on the line, Bob's
    # (Mallory's) dropping merge the line's own commit)
    # cxf: the claim a plan file twin (another version); cxs: Bob's dropping merge `-s ours`
    for slug, who in (
        ("cx", BOB),
        ("cxm", MALLORY),
        ("cxl", BOB),
        ("cxlm", MALLORY),
        ("cxf", BOB),
        ("cxs", BOB),
    ):
        line = slug.startswith("cxl")
        y = "main" if line else f"y-{slug}"
        claim = f"plans/{slug.upper()}/PLAN.yml" + ("" if slug == "cxf" else "/x.txt")
        data = plan_text(f"{slug}-v2", name=slug) if slug == "cxf" else "claim\n"
        lab.put(claim, data)
        lab.commit(f"agent: {slug} twin", AGENT)
        step()
        lab.branch(f"x-{slug}")
        if line:
            git("checkout", "-q", "main")
        else:
            lab.branch(y, "main")
        git("rm", "-r", "-q", f"plans/{slug.upper()}")
        lab.commit(f"carol: {slug} twin gone", CAROL)
        y1 = lab.head()
        time.sleep(1.1)  # X1 strictly newer than Y1: `git merge-base` names X1 (holds the claim)
        git("checkout", "-q", f"x-{slug}")
        lab.note(f"{slug}-x")
        lab.rmerge(AGENT, [y1], lambda c=claim, d=data: lab.put(c, d))
        git("checkout", "-q", y)
        git("merge", "-q", "--no-ff", "--no-edit", f"x-{slug}~1", who=CAROL)
        tree = git("merge-tree", "--write-tree", y, f"x-{slug}").split()[0]
        got[f"gitjoin-{slug}"] = bool(git("ls-tree", "-r", tree, "--", claim).strip())
        got[f"bases-{slug}"] = len(git("merge-base", "--all", y, f"x-{slug}").split())
        named = git("merge-base", y, f"x-{slug}").strip()
        got[f"named-{slug}"] = bool(git("ls-tree", "-r", named, "--", claim).strip())
        if slug == "cxs":
            git("merge", "-q", "--no-ff", "--no-edit", "-s", "ours", f"x-{slug}", who=who)
        else:
            lab.rmerge(
                who,
                [f"x-{slug}"],
                lambda s=slug: git("rm", "-r", "-q", "-f", f"plans/{s.upper()}"),
            )
        if not line:
            git("checkout", "-q", "main")
            git("merge", "-q", "--no-ff", "--no-edit", y, who=MALLORY)
        got[f"main-{slug}"] = bool(git("ls-files", claim).strip())
        step()
    # bm/bmm: the agent's branch adds a twin claim; Bob (bmm: Mallory) merges main BACK into
    # it --no-commit and drops the claim its FIRST parent held; Mallory merges the branch.
    # bl: main holds the agent's claim; Bob merges a note branch into main dropping it
    for slug, who in (("bm", BOB), ("bmm", MALLORY)):
        lab.branch(f"b-{slug}")
        lab.put(f"plans/{slug.upper()}/PLAN.yml/x.txt", "claim\n")
        lab.commit(f"agent: {slug} twin", AGENT)
        git("checkout", "-q", "main")
        lab.note(f"{slug}-main", CAROL)
        step()
        git("checkout", "-q", f"b-{slug}")
        lab.rmerge(who, ["main"], lambda s=slug: git("rm", "-r", "-q", "-f", f"plans/{s.upper()}"))
        git("checkout", "-q", "main")
        git("merge", "-q", "--no-ff", "--no-edit", f"b-{slug}", who=MALLORY)
        step()
    lab.put("plans/BL/PLAN.yml/x.txt", "claim\n")
    lab.commit("agent: bl twin", AGENT)
    step()
    lab.branch("b-bl")
    lab.note("bl")
    git("checkout", "-q", "main")
    lab.rmerge(BOB, ["b-bl"], lambda: git("rm", "-r", "-q", "-f", "plans/BL"))
    step()
    # xt: a conflict in the plan settled -X theirs by Bob: the agent's line against Carol's
    lab.branch("b-xt")
    lab.write("xt", lab.read("xt").replace('v: "0"', 'v: "agent"'))
    lab.commit("agent: xt v", AGENT)
    git("checkout", "-q", "main")
    lab.write("xt", lab.read("xt").replace('v: "0"', 'v: "carol"'))
    lab.commit("carol: xt v", CAROL)
    step()
    git("merge", "-q", "--no-ff", "--no-edit", "-X", "theirs", "b-xt", who=BOB)
    step()
    # mvb/mvc: the agent git-mv's Bob's / Mallory's frozen plan folder to a new name
    git("mv", "plans/mvbs", "plans/mvb")
    git("mv", "plans/mvcs", "plans/mvc")
    lab.commit("agent: move plans", AGENT)
    step()
    # cpa/cpc: the agent copies Alice's / Mallory's frozen PLAN.yml byte for byte
    lab.write("cpa", lab.read("cpasrc"))
    lab.write("cpc", lab.read("cpcsrc"))
    lab.commit("agent: copy plans", AGENT)
    step()
    # fm: the agent writes Bob's plan again with other bytes, the same hash (a comment, quotes)
    text = lab.read("fmsrc")
    again = "# the agent's own plan\n" + text.replace(
        'why: "record that variant fm ran"', "why: 'record that variant fm ran'"
    )
    assert again != text
    lab.write("fm", again)
    lab.commit("agent: fm", AGENT)
    step()
    # rs/rsf/rsc: the agent changes Bob's / Mallory's plan; Carol restores the old text from
    # the source's own commit (rsf: plus a comment line, the same hash)
    for slug in ("rs", "rsf", "rsc"):
        _edit(lab, slug, "agent")
    lab.commit("agent: rs v", AGENT)
    step()
    lab.run()  # the agent's version frozen (a controller that saw it)
    for slug in ("rs", "rsf", "rsc"):
        git("checkout", got["p0"], "--", f"plans/{slug}")
    lab.write("rsf", "# restored\n" + lab.read("rsf"))
    lab.commit("carol: restore rs", CAROL)
    step()
    lab.run()  # P2: every plan frozen
    got["p2"] = _calls(lab)
    got["prerows"] = lab.rows()
    # P3: Bob's approvals on his branch (check predicts, Bob merges), then Alice's on main
    lab.branch("b-approve")
    for slug in SLUGS:
        if APPROVER[slug] == BOB:
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
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-ff", "--no-edit", "b-approve", who=BOB)
    step()
    for slug in SLUGS:
        if APPROVER[slug] == ALICE:
            lab.set_status(slug, "approved")
    lab.commit("alice: approve", ALICE)
    if mode == "fresh":  # the controller restarted on a new state directory: index rebuilt
        lab.state = root / "state2"
        lab.write_config()
    lab.run(take_over=mode == "fresh")  # P3
    got["calls"] = _calls(lab)
    got["rows"] = lab.rows()
    mid = root / "mid"
    mid.mkdir(exist_ok=True)
    _report, valid = clone_audit(lab, mid)
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _lab(factory: pytest.TempPathFactory, mode: str) -> Lab:
    return shared(factory, f"r98-approve-atk98d-{mode}", lambda root: _build(root, mode))


WHATS = {"one": ("ran", "audit", "check"), "step": ("ran", "audit"), "fresh": ("ran",)}
IDS = [
    f"{m}:{s}:{w}"
    for m in MODES
    for s in SLUGS
    for w in WHATS[m]
    if w != "check" or APPROVER[s] == BOB
]
IDS += ["bench:criss-cross", "bench:frozen"]
#: round 98 (r98held): the criss-cross clean-join test asks git's own join (every base)
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round98_atk98d(tmp_path_factory: pytest.TempPathFactory, vid: str) -> None:
    if vid.startswith("bench:"):
        got = _lab(tmp_path_factory, "one").got  # type: ignore[attr-defined]
        if vid == "bench:criss-cross":  # the lab made real criss-crosses
            assert got["bases-cc"] == 2 and got["bases-ccc"] == 2, got
            # cx: two bases, git's own join keeps the claim, main lacks it at the end
            for slug in ("cx", "cxm", "cxl", "cxlm", "cxf", "cxs"):
                assert got[f"bases-{slug}"] == 2, got
                assert got[f"gitjoin-{slug}"] and not got[f"main-{slug}"], got
                assert got[f"named-{slug}"], got  # the base `git merge-base` names holds it
        else:  # nothing ran before the approvals; every plan frozen, pending
            assert not any(got["p2"].values()), got["p2"]
            for slug in SLUGS:
                row = got["prerows"].get(f"plans/{slug}", {})
                assert row.get("status") == "pending_approval", (slug, brief(row))
        return
    mode, slug, what = vid.split(":")
    got = _lab(tmp_path_factory, mode).got  # type: ignore[attr-defined]
    plan = f"plans/{slug}"
    ran = slug in CONTROL
    row = got["rows"].get(plan, {})
    if what == "check":
        outcome, codes = got["check"].get(plan, (None, []))
        assert outcome == ("start" if ran else "refuse"), (outcome, codes, brief(row))
        assert ran or "E_SELF_APPROVAL" in codes, (outcome, codes)
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

    os.makedirs("/tmp/atk98d", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="lab-", dir="/tmp/atk98d"))
    got = _build(out, sys.argv[1] if len(sys.argv) > 1 else "one").got  # type: ignore[attr-defined]
    for key in ("frozen", "prerows", "rows"):
        got[key] = {p: brief(r) for p, r in got[key].items()}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
