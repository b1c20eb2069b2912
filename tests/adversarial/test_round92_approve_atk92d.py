"""Round 92, approval (atk92d): held plans released by squash, rebase, revert, cherry-pick,
conflicted merges and moves; status-only twins with odd line ends and BOMs.

Lab (one, built once, seven ``run --once`` passes; policy: one of Alice or ``*@ops.example.com``,
and for ``plans/q-*`` two of ``ops`` = Alice or ``*@ops``). P1 freezes the agent's plans (one
``rec`` action each); Bob votes for the ``q-*`` plans (P1b: partial). The agent then adds to each
plan but ``nn`` a twin claiming its place (``plans/<s>/PLAN.yaml``, or ``PLANS/<s>/PLAN.yml`` for
``mf``, ``mo``) holding ANOTHER version (``<s>-v2``) or a copy of the plan (``v1``), for ``rv``,
``rm``, ``wx`` in commits of their own; the link claims below come then too; P2 sees
every one held (``E_PLAN_AMBIGUOUS``, ``E_UNSAFE_PATH``). Statuses set while held, on the line:
Alice's ``rejected`` in the copies of ``wa``, ``wr``, ``wx``, ``xw``; Mallory's in ``wm``'s; Bob's
``approved`` (the status line alone, its line end kept) in the twins of ``ec`` (v2, CR LF), ``eb``
(v2, BOM), ``em`` (v2, BOM + CR LF), ``ek`` (the copy, CR LF) and ``q-b`` (the copy with a BOM);
Bob's ``approved`` with the status line's end turned CR LF (``el``) or a BOM added (``ea``); Carol's
vote in ``q-c``'s CR LF copy (status only) and in ``q-x``'s copy with a BOM added. P3: still held.
Then the releases (branches forked from the held tip):

- By Bob, who thereby chose the content left (expected a writer): ``sq`` the agent's branch
  deleting the twin, ``git merge --squash`` + commit by Bob (with ``wa``); ``rb`` the agent's
  branch rebased by Bob (``git rebase main``: author the agent, committer Bob), fast-forwarded;
  ``cp`` the agent's deletion ``git cherry-pick``ed by Bob; ``rv`` Bob's ``git revert`` of the
  twin's own commit; ``xs``, ``xo`` Bob's branch deleting the twin and editing ``README``,
  merged by Mallory ``-X theirs`` / ``-X ours`` over a ``README`` conflict; ``xh`` the same
  with the ``README`` conflict resolved by hand; ``xt`` Bob's branch deleting the twin while
  the agent rewrote it on main (v3): Mallory's merge stops ``CONFLICT (modify/delete)`` and she
  resolves it by ``git rm`` (Bob's side); ``xu`` the same resolved by the AGENT's merge;
  ``xb`` the same resolved by Bob's own merge; ``xy`` Bob's branch merges main and resolves the
  modify/delete there, merged cleanly by Mallory; ``da`` Bob's branch deletes the twin and
  re-adds its bytes, merged by Mallory, the agent deletes it after; ``ca`` Bob's deletion
  commit cherry-picked by the agent (author Bob); ``mf`` Bob's ``git mv -f PLANS/mf/PLAN.yml
  plans/mf/PLAN.yml``; ``ms`` Bob's ``git mv -f`` of the byte copy over ``PLAN.yml``; ``mo``
  Bob's ``git mv PLANS/mo attic/mo``; ``el``, ``ea``, ``q-x`` (Carol) wrote bytes in the twin.
- By others (Bob no writer): ``sm`` squashed by Mallory; ``ff`` the agent's branch
  fast-forwarded by Bob (with ``wm``); ``rm`` Mallory's revert of the twin's commit; ``cm``
  the agent's deletion cherry-picked by Mallory (with ``wr``); ``dd`` the agent's branch
  deleting and re-adding the twin, merged ``--no-ff`` by Bob, the agent deleting it after;
  ``xc`` the agent's branch deletion, modify/delete resolved by Mallory's merge; ``wx``
  Mallory's ``git revert`` of the twin's commit (a modify/delete conflict over Alice's
  ``rejected``, resolved by ``git rm``); ``xw`` the agent's branch deletion over Alice's
  ``rejected`` (plus an agent's line) on main, resolved by Mallory; ``sa`` Bob's branch
  squashed by the agent (docs: "a squash merge is its squasher's own commit"); the agent
  deletes the twins of ``ec``, ``eb``, ``em``, ``ek``, ``el``, ``ea``, ``ay`` and the quorum's.
- Links (docs/plan-format.md: "A claim is any entry of the folder, whatever its kind"): ``lk``
  the agent's symlink ``plans/lk/PLAN.yaml -> PLAN.yml`` and ``gl`` its gitlink
  ``plans/gl/PLAN.yaml`` (``update-index --cacheinfo 160000``), both deleted by Bob; ``lf``
  the agent replaces ``PLAN.yml`` by a symlink to its ``v2.yml``, Bob puts the frozen bytes
  back (a writer); ``la`` the same put back by the agent (Bob no writer).
- Added by the fixer (r92held): ``lm`` a symlink twin ``plans/lm/PLAN.yaml`` deleted on Bob's
  branch, merged ``--no-ff`` by Mallory (Bob a writer); ``lc`` the same deleted on the agent's
  branch, merged ``--no-ff`` by Bob (Bob no writer: a clean merge is no byte of his).
- Controls: ``ay`` (the agent's deletion), ``la``, ``lc``, ``nn`` (no hold; Bob deletes the agent's
  ``NOTES.md``).

P4 reads the releases. Bob then approves every plan but the quorum's, Carol votes for the
``q-*`` (P5); Alice approves every plan expected not to have run (P6). ``<s>:ran``: Bob's
approval ran the plan once exactly for ``sm ff rm cm dd ec eb em ek wm ay nn xc sa la lc`` and
Carol's vote for ``q-c``, ``q-b`` (Bob's vote from before the hold counts), nothing else; after
Alice's, every plan ran once except the withdrawn ``wa``, ``wr``, ``wx``, ``xw`` (never);
``<s>:audit``: the fresh-clone ``plangate audit --json`` after P5 calls valid exactly the
plans the controller completed and the expected ones; ``<s>:held``: P3 saw the plan held
(``E_PLAN_AMBIGUOUS``, or ``E_UNSAFE_PATH`` for the links).

Seen (round 92): 8 ids broke, two classes; the fresh-clone audit agreed with the controller
each time (valid == completed).

1. **A twin's deletion a CONFLICTED merge brings from a branch is not its branch maker's**
(``xt``, ``xu`` ``:{ran,audit}``): Bob's branch commit
``b-xt: twins gone`` deleted ``plans/xt/PLAN.yaml`` while the agent rewrote it on main;
Mallory's (``xu``: the agent's) ``git merge --no-ff b-xt`` stopped ``CONFLICT (modify/delete):
plans/xt/PLAN.yaml deleted in b-xt and modified in ...``, the merger took Bob's side
(``git rm``; the merge's tree at the path is the second parent's); Bob's approval then ran the
plan: ``approval request (approve) by bob@ops.example.com``, ``plangate: start plans/xt``,
``plangate: complete plans/xt`` (Alice's later ``E_ILLEGAL_TRANSITION ... (from
completed)``), and the fresh-clone audit called that start valid (it agrees with the
controller). The same deletion merged cleanly (``xs``, ``xo`` over a ``README`` conflict,
``xh`` with ``README`` resolved by hand), resolved by Bob's own merge (``xb``) or by a merge
on Bob's branch (``xy``) refused Bob (``plangate: refuse plans/xs``, ``E_SELF_APPROVAL``), and
the agent's deletion resolved by Mallory (``xc``) ran on Bob's approval, as it should.

2. **The deleter of a symlink or gitlink claim is no writer** (``lk``, ``gl``
   ``:{ran,audit}``): P3 showed ``E_UNSAFE_PATH: plans/lk/PLAN.yaml is a symbolic link, not a
   plan file; it is not read`` (``gl``: ``... is a submodule (gitlink), not a plan file; it is
   not read``); Bob deleted the link (``git rm --cached`` of the gitlink) and his approval ran
   the plan (``plangate: start plans/lk``, ``complete``), the audit valid; the same Bob putting
   the frozen bytes back over a symlinked ``PLAN.yml`` (``lf``) was refused.

Fixed (2026-12-02, r92held): a removal a merge leaves is its merged branch's commits' makers'
whenever that branch removed the path (a side parent lacks it, its merge base with the first
parent had it), whether or not git's join conflicted there (``Lifecycle._side_removed``, read by
``_touchers``): a modify/delete resolved by ``git rm`` is the branch makers' AND the merger's
(docs/approvals.md: "a modify/delete ... the merger is counted a writer"); a clean one stays the
branch makers' alone (``_brought_removal``, which now reads an entry of any kind, a symlink or a
gitlink, as there). The removal of a claim that releases an E_UNSAFE_PATH hold (a symlink or
gitlink ``PLAN.yaml`` beside the plan's ``PLAN.yml``) is a touch by its maker through the same
rule (``_apply_plan_change`` asks ``_touchers`` before ``_unsafe_release``). ``xt``, ``xu``,
``lk``, ``gl`` refuse Bob ``E_SELF_APPROVAL`` and run once on Alice's approval, the fresh-clone
audit agreeing. Added ``lm`` (Bob's branch deleting a symlink twin, merged cleanly by Mallory:
broke the same way on the unfixed code, 2 ids) and its control ``lc`` (the agent's branch,
merged by Bob: ran on Bob's approval before and after). ``INDEX_VERSION`` 121. Was: 8 broke
(strict xfails).

Held: the squash by Bob (``sq``, ``E_SELF_APPROVAL``) and by Mallory (``sm``: Bob's ran once), the
agent's squash of Bob's branch (``sa``: Bob ran, as documented), Bob's rebase (``rb``), cherry-pick
(``cp``), revert (``rv``) and the agent's cherry-pick of Bob's deletion (``ca``) all refused Bob;
Mallory's revert (``rm``), cherry-pick (``cm``), Bob's fast-forward (``ff``) and Bob's clean merge
of the agent's delete-and-re-add (``dd``) left him free; Bob's delete-and-re-add (``da``) and every
move (``mf``, ``ms``, ``mo``) made him a writer; a status line alone in a CR LF, BOM or BOM + CR LF
twin (``ec``, ``eb``, ``em``, ``ek``, ``q-b``, ``q-c``) wrote nothing (the setter's later approval
ran once; in ``q-b``, ``q-c`` the held vote was noted ``made while the plan was held
E_PLAN_AMBIGUOUS`` and lapsed, and Carol's vote after the release ran the plan with Bob's vote from
before the hold), while a line end turned CR LF or a BOM added (``el``, ``ea``, ``q-x``) made the
setter a writer (``E_SELF_APPROVAL: carol@ops.example.com wrote or changed this plan's content``;
``el``, ``ea``: ``E_SELF_APPROVAL: bob@ops.example.com ...``); Alice's ``rejected`` set while held
in a copy stayed hers through a squash by Bob (``wa``), a cherry-pick by Mallory (``wr``), Mallory's
conflicted revert (``wx``) and a conflicted merge by Mallory (``xw``): ``rejected``, never ran;
Mallory's (``wm``) was ignored.

Should (docs/approvals.md): "whoever deletes one of the two claims chose the content left and
is a writer (round 69's rule), whatever the claim's spelling ...: the commit that deleted it,
so a deletion a merge brings from a branch (a clean merge, no byte of the merger's) is its
branch commits' makers', never the merger's"; the brief's property: "whoever deletes or moves
one of the two claims chose the content left and is a writer (a merged deletion is its branch
makers')". A conflict resolved by hand is the merger's own writing too (docs/threat-model.md,
round 66), but the merger here only kept the branch's side: the deletion is still Bob's
commit's, and the content left is what his commit chose. For the links, docs/plan-format.md:
"A claim is any entry of the folder, whatever its kind: a file, a folder, a symlink, a gitlink
(submodule)", and docs/approvals.md: "whoever deletes one of the two claims chose the content
left and is a writer ..., whatever the claim's spelling".
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, brief, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

BOM = "\ufeff"

#: slug -> (twin path, twin text kind): "v2" another version, "v1" a byte copy of the plan
TWINS: dict[str, tuple[str, str]] = {
    # releases by Bob (a writer: he chose the content left) -------------------------
    "sq": ("plans/sq/PLAN.yaml", "v2"),  # agent's branch deleting it, squashed by Bob
    "rb": ("plans/rb/PLAN.yaml", "v2"),  # agent's branch deleting it, rebased by Bob
    "cp": ("plans/cp/PLAN.yaml", "v2"),  # agent's deletion cherry-picked by Bob
    "rv": ("plans/rv/PLAN.yaml", "v2"),  # Bob's git revert of the twin's own commit
    "xt": ("plans/xt/PLAN.yaml", "v2"),  # Bob's branch deletion, modify/delete resolved
    "xs": ("plans/xs/PLAN.yaml", "v2"),  # Bob's branch deletion merged -X theirs
    "xo": ("plans/xo/PLAN.yaml", "v2"),  # Bob's branch deletion merged -X ours
    "da": ("plans/da/PLAN.yaml", "v2"),  # Bob's branch deletes then re-adds it
    "mf": ("PLANS/mf/PLAN.yml", "v2"),  # Bob's git mv -f of the twin folder's file over
    "ms": ("plans/ms/PLAN.yaml", "v1"),  # Bob's git mv -f of a byte copy over PLAN.yml
    "mo": ("PLANS/mo/PLAN.yml", "v2"),  # Bob's git mv of the twin folder out of plans
    "el": ("plans/el/PLAN.yaml", "v2"),  # Bob's status in the twin, its line end to CR LF
    "ea": ("plans/ea/PLAN.yaml", "v2"),  # Bob's status in the twin, a BOM added
    # releases by others: Bob no writer ----------------------------------------------
    "sm": ("plans/sm/PLAN.yaml", "v2"),  # squashed by Mallory
    "ff": ("plans/ff/PLAN.yaml", "v2"),  # fast-forwarded by Bob (the agent's commits)
    "rm": ("plans/rm/PLAN.yaml", "v2"),  # Mallory's git revert of the twin's commit
    "cm": ("plans/cm/PLAN.yaml", "v2"),  # the agent's deletion cherry-picked by Mallory
    "dd": ("plans/dd/PLAN.yaml", "v2"),  # the agent's branch deletes and re-adds, Bob merges
    "ec": ("plans/ec/PLAN.yaml", "v2crlf"),  # Bob's status only in a CR LF twin
    "eb": ("plans/eb/PLAN.yaml", "v2bom"),  # Bob's status only in a BOM twin
    "em": ("plans/em/PLAN.yaml", "v2bomcrlf"),  # Bob's status only in a BOM + CR LF twin
    "ek": ("plans/ek/PLAN.yaml", "v1crlf"),  # Bob's status only in a CR LF copy of v1
    "wm": ("plans/wm/PLAN.yaml", "v1"),  # Mallory's rejected in the twin, Bob's ff release
    # withdrawals while held by Alice: the plan rejected ---------------------------------
    "wa": ("plans/wa/PLAN.yaml", "v1"),  # released by Bob's squash
    "wr": ("plans/wr/PLAN.yaml", "v1"),  # released by Mallory's cherry-pick
    "wx": ("plans/wx/PLAN.yaml", "v1"),  # released by Mallory's revert (conflict resolved)
    # conflicted and hand-resolved merges (Mallory merges) ------------------------------
    "xu": ("plans/xu/PLAN.yaml", "v2"),  # Bob's branch deletion, resolved by the agent
    "xb": ("plans/xb/PLAN.yaml", "v2"),  # Bob's deletion, modify/delete resolved by Bob
    "xc": ("plans/xc/PLAN.yaml", "v2"),  # the agent's deletion, resolved by Mallory
    "xw": ("plans/xw/PLAN.yaml", "v1"),  # Alice's rejected on main, agent's branch deletes
    "xh": ("plans/xh/PLAN.yaml", "v2"),  # Bob's clean deletion, README resolved by hand
    "xy": ("plans/xy/PLAN.yaml", "v2"),  # Bob's branch merges main, resolves by deletion
    "ca": ("plans/ca/PLAN.yaml", "v2"),  # Bob's deletion cherry-picked by the agent
    "sa": ("plans/sa/PLAN.yaml", "v2"),  # Bob's deletion squashed by the agent (its own)
    # quorum (2 of ops): Bob's vote before the hold ------------------------------------
    "q-c": ("plans/q-c/PLAN.yaml", "v1crlf"),  # Carol's status only in a CR LF copy
    "q-x": ("plans/q-x/PLAN.yaml", "v1"),  # Carol's status in the twin, a BOM added
    "q-b": ("plans/q-b/PLAN.yaml", "v1bom"),  # Bob's re-vote, status only, BOM twin
    # control -------------------------------------------------------------------------
    "ay": ("plans/ay/PLAN.yaml", "v2"),  # the agent deletes the twin on the line
}
#: links (E_UNSAFE_PATH or a twin): a symlink twin and a gitlink twin deleted by Bob; the
#: plan file itself replaced by a symlink to v2, restored byte for byte by Bob / the agent
LINKS = {"lk": "twin-symlink", "gl": "twin-gitlink", "lf": "file-link", "la": "file-link"}
#: (r92held) a symlink twin deleted on a branch and merged ``--no-ff``: Bob's branch merged by
#: Mallory (Bob a writer), the agent's branch merged by Bob (Bob no writer)
LINKS |= {"lm": "twin-symlink", "lc": "twin-symlink"}
NOTE = ["nn"]  # no hold: Bob deletes the agent's NOTES.md
SLUGS = [*TWINS, *LINKS, *NOTE]
HELD = [*TWINS, *LINKS]
#: Bob's approval runs these once; every other plan runs once on Alice's, but the rejected
BOB_RUNS = {"sm", "ff", "rm", "cm", "dd", "ec", "eb", "em", "ek", "wm", "ay", "nn", "xc", "sa"}
BOB_RUNS |= {"q-c", "q-b", "la", "lc"}
REJECTED = {"wa", "wr", "wx", "xw"}
#: the quorum plans: Bob votes before the hold, Carol after the release (Alice last)
QUORUM = ["q-c", "q-x", "q-b"]
APPROVAL = """\
groups:
  ops: ["alice@example.com", "*@ops.example.com"]
rules:
  - match: {paths: ["plans/q-*"]}
    require: [{group: ops, count: 2}]
"""
#: twins added in commits of their own (a revert's target)
OWN_COMMIT = ["rv", "rm", "wx"]


def _twin_text(slug: str, kind: str) -> str:
    text = plan_text(slug if kind.startswith("v1") else f"{slug}-v2")
    if "crlf" in kind:
        text = text.replace("\n", "\r\n")
    if "bom" in kind:
        text = BOM + text
    return text


def _status(lab: Lab, rel: str, status: str, end: str | None = None, bom: bool = False) -> None:
    """Set the status line of ``rel``; ``end``: force that line's end; ``bom``: add a BOM."""
    path = lab.repo / rel
    data = path.read_bytes().decode("utf-8")
    lines = data.split("\n")
    for i, line in enumerate(lines[:6]):
        if line.startswith("  status:"):
            keep = "\r" if line.endswith("\r") else ""
            lines[i] = f"  status: {status}" + (keep if end is None else end)
            break
    else:
        raise AssertionError(f"no status in {rel}")
    out = "\n".join(lines)
    if bom and not out.startswith(BOM):
        out = BOM + out
    path.write_bytes(out.encode("utf-8"))


def _calls(lab: Lab) -> dict[str, int]:
    return {s: sum(len(lab.calls(f"{s}{t}")) for t in ("", "-v2")) for s in SLUGS}


def _rm(lab: Lab, *slugs: str) -> None:
    for slug in slugs:
        (lab.repo / TWINS[slug][0]).unlink()


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.put("plans/nn/NOTES.md", "the agent's notes\n")
    lab.commit("agent: plans", AGENT)
    lab.run()  # P1: frozen
    for slug in QUORUM:
        lab.set_status(slug, "approved")
    lab.commit("bob: vote", BOB)
    lab.run()  # P1b: partial
    got["partial"] = lab.rows()
    for slug, (rel, kind) in TWINS.items():
        if slug not in OWN_COMMIT:
            lab.put(rel, _twin_text(slug, kind))
    lab.commit("agent: twins", AGENT)
    for slug in ("lk", "lm", "lc"):
        os.symlink("PLAN.yml", lab.repo / f"plans/{slug}/PLAN.yaml")
    kept: dict[str, bytes] = {}
    for slug in ("lf", "la"):
        kept[slug] = (lab.repo / f"plans/{slug}/PLAN.yml").read_bytes()
        (lab.repo / f"plans/{slug}/PLAN.yml").unlink()
        lab.put(f"plans/{slug}/v2.yml", plan_text(f"{slug}-v2"))
        os.symlink("v2.yml", lab.repo / f"plans/{slug}/PLAN.yml")
    lab.commit("agent: links", AGENT)
    (lab.repo / "plans/gl/PLAN.yaml").mkdir()
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{lab.head()},plans/gl/PLAN.yaml")
    lab.git("commit", "-q", "-m", "agent: a gitlink twin", who=AGENT)
    own: dict[str, str] = {}
    for slug in OWN_COMMIT:
        rel, kind = TWINS[slug]
        lab.put(rel, _twin_text(slug, kind))
        own[slug] = lab.commit(f"agent: twin {slug}", AGENT)
    lab.run()  # P2: held
    got["held"] = lab.rows()
    # -- statuses set while held, on the line
    for slug in ("wa", "wr", "wx", "xw"):
        _status(lab, TWINS[slug][0], "rejected")
    lab.commit("alice: reject in the twins", ALICE)
    _status(lab, TWINS["wm"][0], "rejected")
    lab.commit("mallory: reject in the twin", MALLORY)
    for slug in ("ec", "eb", "em", "ek"):
        _status(lab, TWINS[slug][0], "approved")
    lab.commit("bob: approve in the twins (status only)", BOB)
    _status(lab, TWINS["el"][0], "approved", end="\r")
    _status(lab, TWINS["ea"][0], "approved", bom=True)
    lab.commit("bob: approve in the twins (line end, BOM)", BOB)
    _status(lab, TWINS["q-b"][0], "approved")
    lab.commit("bob: vote in the twin (status only)", BOB)
    _status(lab, TWINS["q-c"][0], "approved")
    lab.commit("carol: vote in the twin (status only)", CAROL)
    _status(lab, TWINS["q-x"][0], "approved", bom=True)
    lab.commit("carol: vote in the twin (BOM added)", CAROL)
    lab.run()  # P3: still held
    got["held3"] = lab.rows()
    # -- branches, all from the held tip
    git = lab.git
    for name, slugs, who in (
        ("b-ff", ["ff", "wm"], AGENT),
        ("b-sq", ["sq", "wa"], AGENT),
        ("b-sm", ["sm"], AGENT),
        ("b-rb", ["rb"], AGENT),
        ("b-cp", ["cp"], AGENT),
        ("b-cm", ["cm", "wr"], AGENT),
        ("b-xt", ["xt"], BOB),
        ("b-xb", ["xb"], BOB),
        ("b-xu", ["xu"], BOB),
        ("b-xc", ["xc"], AGENT),
        ("b-xw", ["xw"], AGENT),
        ("b-ca", ["ca"], BOB),
        ("b-sa", ["sa"], BOB),
    ):
        lab.branch(name, "main")
        _rm(lab, *slugs)
        lab.commit(f"{name}: twins gone", who)
    for name, slug, who in (("b-lm", "lm", BOB), ("b-lc", "lc", AGENT)):
        lab.branch(name, "main")
        (lab.repo / f"plans/{slug}/PLAN.yaml").unlink()
        lab.commit(f"{name}: link gone", who)
    lab.branch("b-xs", "main")
    _rm(lab, "xs")
    (lab.repo / "README").write_text("plans (theirs)\n")
    lab.commit("bob: twin gone, readme", BOB)
    lab.branch("b-xo", "main")
    _rm(lab, "xo")
    (lab.repo / "README").write_text("plans (xo)\n")
    lab.commit("bob: twin gone, readme", BOB)
    lab.branch("b-xh", "main")
    _rm(lab, "xh")
    (lab.repo / "README").write_text("plans (xh)\n")
    lab.commit("bob: twin gone, readme", BOB)
    lab.branch("b-xy", "main")
    _rm(lab, "xy")
    lab.commit("bob: twin gone", BOB)
    lab.branch("b-da", "main")
    twin_da = (lab.repo / TWINS["da"][0]).read_bytes()
    _rm(lab, "da")
    lab.commit("bob: twin gone", BOB)
    (lab.repo / TWINS["da"][0]).write_bytes(twin_da)
    lab.commit("bob: twin back", BOB)
    lab.branch("b-dd", "main")
    twin_dd = (lab.repo / TWINS["dd"][0]).read_bytes()
    _rm(lab, "dd")
    lab.commit("agent: twin gone", AGENT)
    (lab.repo / TWINS["dd"][0]).write_bytes(twin_dd)
    lab.commit("agent: twin back", AGENT)
    git("checkout", "-q", "main")
    # -- the releases
    git("merge", "-q", "--ff-only", "b-ff", who=BOB)
    (lab.repo / "README").write_text("plans (main)\n")
    for slug in ("xt", "xb", "xc", "xy", "xu"):
        lab.put(TWINS[slug][0], plan_text(f"{slug}-v3"))
    lab.commit("agent: readme, twins v3", AGENT)
    lab.put(TWINS["xw"][0], (lab.repo / TWINS["xw"][0]).read_text() + "# main\n")
    lab.commit("agent: xw twin edited", AGENT)
    git("checkout", "-q", "b-xy")
    git("merge", "--no-ff", "--no-edit", "main", who=BOB, check=False)  # modify/delete
    git("rm", "-q", "--ignore-unmatch", TWINS["xy"][0])
    git("commit", "-q", "--no-edit", who=BOB)
    git("checkout", "-q", "main")
    git("merge", "-q", "--squash", "b-sq", who=BOB)
    git("commit", "-q", "-m", "bob: squash b-sq", who=BOB)
    git("merge", "-q", "--squash", "b-sm", who=MALLORY)
    git("commit", "-q", "-m", "mallory: squash b-sm", who=MALLORY)
    git("checkout", "-q", "b-rb")
    git("rebase", "-q", "main", who=BOB)
    git("checkout", "-q", "main")
    git("merge", "-q", "--ff-only", "b-rb", who=BOB)
    git("cherry-pick", lab.head("b-cp"), who=BOB)
    git("cherry-pick", lab.head("b-cm"), who=MALLORY)
    git("revert", "--no-edit", own["rv"], who=BOB)
    git("revert", "--no-edit", own["rm"], who=MALLORY)
    git("revert", "--no-edit", own["wx"], who=MALLORY, check=False)  # Alice's edit: conflict
    git("rm", "-q", "--ignore-unmatch", TWINS["wx"][0])
    git("commit", "-q", "--no-edit", who=MALLORY)
    git("merge", "--no-ff", "--no-edit", "b-xt", who=MALLORY, check=False)  # modify/delete
    git("rm", "-q", "--ignore-unmatch", TWINS["xt"][0])
    git("commit", "-q", "--no-edit", who=MALLORY)
    for name, slug, who in (
        ("b-xb", "xb", BOB),
        ("b-xu", "xu", AGENT),
        ("b-xc", "xc", MALLORY),
        ("b-xw", "xw", MALLORY),
    ):
        git("merge", "--no-ff", "--no-edit", name, who=who, check=False)  # modify/delete
        git("rm", "-q", "--ignore-unmatch", TWINS[slug][0])
        git("commit", "-q", "--no-edit", who=who)
    git("merge", "-q", "--no-ff", "--no-edit", "b-xy", who=MALLORY)
    git("cherry-pick", lab.head("b-ca"), who=AGENT)
    git("merge", "-q", "--squash", "b-sa", who=AGENT)
    git("commit", "-q", "-m", "agent: squash b-sa", who=AGENT)
    git("merge", "-q", "--no-ff", "--no-edit", "-X", "theirs", "b-xs", who=MALLORY)
    git("merge", "-q", "--no-ff", "--no-edit", "-X", "ours", "b-xo", who=MALLORY)
    git("merge", "--no-ff", "--no-edit", "b-xh", who=MALLORY, check=False)  # README
    (lab.repo / "README").write_text("plans (by hand)\n")
    git("add", "README")
    git("commit", "-q", "--no-edit", who=MALLORY)
    git("merge", "-q", "--no-ff", "--no-edit", "b-lm", who=MALLORY)
    git("merge", "-q", "--no-ff", "--no-edit", "b-lc", who=BOB)
    git("merge", "-q", "--no-ff", "--no-edit", "b-da", who=MALLORY)
    git("merge", "-q", "--no-ff", "--no-edit", "b-dd", who=BOB)
    _rm(lab, "da", "dd")
    lab.commit("agent: twins of da, dd gone", AGENT)
    git("mv", "-f", TWINS["mf"][0], "plans/mf/PLAN.yml")
    git("mv", "-f", TWINS["ms"][0], "plans/ms/PLAN.yml")
    (lab.repo / "attic").mkdir(exist_ok=True)
    git("mv", "PLANS/mo", "attic/mo")
    git("commit", "-q", "-m", "bob: twins moved", who=BOB)
    _rm(lab, "ec", "eb", "em", "ek", "el", "ea", "ay", *QUORUM)
    lab.commit("agent: twins gone", AGENT)
    (lab.repo / "plans/nn/NOTES.md").unlink()
    (lab.repo / "plans/lk/PLAN.yaml").unlink()
    git("rm", "-q", "--cached", "plans/gl/PLAN.yaml")
    (lab.repo / "plans/gl/PLAN.yaml").rmdir()
    (lab.repo / "plans/lf/PLAN.yml").unlink()
    (lab.repo / "plans/lf/PLAN.yml").write_bytes(kept["lf"])
    lab.commit("bob: notes and links gone, lf restored", BOB)
    (lab.repo / "plans/la/PLAN.yml").unlink()
    (lab.repo / "plans/la/PLAN.yml").write_bytes(kept["la"])
    lab.commit("agent: la restored", AGENT)
    got["tree"] = git("ls-files")
    lab.run()  # P4: released
    got["released"] = lab.rows()
    for slug in SLUGS:
        if slug not in QUORUM:
            lab.set_status(slug, "approved")
    lab.commit("bob: approve", BOB)
    for slug in QUORUM:
        lab.set_status(slug, "approved")
    lab.commit("carol: quorum votes after", CAROL)
    lab.run()  # P5
    got["bob"] = _calls(lab)
    got["bob_rows"] = lab.rows()
    mid = root / "mid"
    mid.mkdir(exist_ok=True)
    _report, valid = clone_audit(lab, mid)
    got["valid"] = sorted(valid)
    for slug in SLUGS:
        if slug not in BOB_RUNS:
            lab.set_status(slug, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()  # P6
    got["calls"] = _calls(lab)
    got["rows"] = lab.rows()
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r92-approve-atk92d", _build)


IDS = [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")] + [f"{s}:held" for s in HELD]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round92_atk92d(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.rsplit(":", 1)
    plan = f"plans/{slug}"
    if what == "held":
        held = got["held3"].get(plan, {})
        text = json.dumps(held, ensure_ascii=False)
        assert "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text, brief(held, notes=4)
        return
    row = got["bob_rows"].get(plan, {})
    if what == "audit":
        done = row.get("status") == "completed"
        assert (plan in got["valid"]) == done, (plan, got["valid"], brief(row, notes=4))
        assert (plan in got["valid"]) == (slug in BOB_RUNS), (
            plan,
            got["valid"],
            brief(row, notes=4),
        )
        return
    bob = 1 if slug in BOB_RUNS else 0
    assert got["bob"][slug] == bob, (got["bob"][slug], brief(row, notes=4))
    final = 0 if slug in REJECTED else 1
    assert got["calls"][slug] == final, (
        got["calls"][slug],
        brief(got["rows"].get(plan, {}), notes=4),
    )


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk92d", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="lab-", dir="/tmp/atk92d"))
    got = _build(out).got  # type: ignore[attr-defined]
    for key in ("partial", "held", "held3", "released", "bob_rows", "rows"):
        got[key] = {p: brief(r, notes=4) for p, r in got[key].items()}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
