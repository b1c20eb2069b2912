"""Round 93, approval (atk93d): held plans at the edges of r91/r92 (octopus releases, a merge
whose first parent is the agent's side, a claim replaced by another kind, NFC/NFD and case
twins, a ``PLAN.json`` twin, ``plangate approve`` while held, a hold after the approval).

Lab (one, built once, six ``run --once`` passes; policy: Alice or ``*@ops.example.com``).
P1 freezes the agent's plans (one ``rec`` action each). Alice approves ``hb``, ``hd``; then,
before any pass, the agent adds a twin holding ANOTHER version (``<s>-v2``) beside each plan
(``plans/<s>/PLAN.yaml`` unless noted), symlink twins (``kg``, ``ke``, ``ol``) and a gitlink
twin (``og``); P2 sees every one held (``E_PLAN_AMBIGUOUS`` or ``E_UNSAFE_PATH``) and runs
nothing. While held: Alice sets ``rejected`` in the twins of ``cs`` (``plans/CS/``), ``nr``
(``plans/nre<U+0301>/`` beside ``plans/nr<U+00E9>/``), ``sj`` (``PLANS/sj/PLAN.json``), ``sr``
(``plans/SR/PLAN.md``), ``jr`` (``plans/jr/PLAN.json``) and ``hv`` (v2: a veto of v2); Mallory
in ``hx``'s; Bob runs ``plangate approve --force plans/ap``. Bob replaces a claim by ANOTHER
KIND in one commit: ``ka`` file -> folder ``PLAN.yaml/x.txt``, ``kl`` file -> symlink
``PLAN.yaml -> PLAN.yml`` (the other twin), ``kg`` symlink -> gitlink, ``kf`` the folder
``PLANS/kf/`` -> a symlink ``PLANS/kf -> ../plans/kf``, ``kd`` folder ``PLAN.yaml/`` -> a byte
copy of v1, ``ke`` symlink -> a byte copy of v1 (the control ``ko``: the agent's file ->
folder). P3: still held. Releases:

- Octopus (``git merge b-oc2 b-oc`` by Mallory; Bob's branch ``b-oc`` is the THIRD parent):
  Bob deleted ``oc``'s ``PLAN.yaml``, ``ol``'s symlink, ``cy``'s ``plans/CY/``, ``nu``'s
  ``plans/nue<U+0301>/``, ``po``'s ``PLANS/po/``; control ``oa``: the agent's branch (also
  ``plans/CS/``) in an octopus by Bob.
- Bob's branch ``b-nv`` merged ``--no-ff`` by Mallory: twin FOLDERS ``plans/nve<U+0301>/``
  (``nv``), ``plans/CZ/`` (``cz``), ``PLANS/pk/`` (``pk``), a split name ``plans/bs\\PLAN.yml``
  (``bs``), ``plans/dt./`` (``dt``), ``plans/zw<U+200C>/`` (``zw``), and Bob's ``git mv plans/CM
  attic/cm`` (``cm``, a move of the twin folder out of the plans folder). ``cq``, ``nq``:
  Alice's ``rejected`` in ``plans/CQ/``, ``plans/nqe<U+0301>/`` on branch ``b-cq``, which the
  agent then deletes there, merged ``--no-ff`` by Mallory.
- A merge whose FIRST parent is the agent's side: ``fp``: Bob's branch (deleting ``fp``'s
  twin, ``og``'s gitlink, ``nw``'s ``plans/nwe<U+0301>/``) merged by the agent into its own
  branch, main fast-forwarded to it; ``fm``: Bob deletes the twin on main (unread), the agent's
  branch merges main, main fast-forwarded; ``fr``: Alice's ``rejected`` in ``plans/fr/PLAN.yml``
  on main (unread) the same way, the agent's branch deleting the twin.
- On the line: the agent removes what Bob replaced (``ka``, ``kl``, ``kg``, ``kf``, ``kd``,
  ``ke``, ``ko``) and the twins of ``nr``, ``jr``, ``ap``, ``hd``, ``sj``, ``sr``, ``hv``,
  ``hx``; the agent's ``git mv -f`` of ``hb``'s v2 twin over ``PLAN.yml``; Bob's ``git mv -f
  plans/CX/PLAN.yml plans/cx/PLAN.yml`` (``cx``); Bob deletes ``plans/nfe<U+0301>/``
  (``nf<U+00E9>``), ``plans/CW/`` (``cw``), ``js``'s ``PLAN.json``, ``sk``'s
  ``PLANS/sk/PLAN.json``, ``sm``'s
  ``plans/SM/PLAN.md``, the agent's ``plans/nn/NOTES.md`` (no hold); the agent writes v2 into
  ``hv``'s and ``hx``'s ``PLAN.yml``.

P4 reads the releases. Bob approves every plan but ``hb``, ``hd`` (``ap`` through ``plangate
approve``) (P5); Alice approves the plans Bob could not (P6). ``<s>:ran``: Bob's approval ran
the plan once exactly for the controls ``oa ko nn js jr ap sk sm sj sr`` and ``hx`` (v2), and
was refused ``E_SELF_APPROVAL`` for the plans Bob released (``WRITER``), which Alice's then ran
once (``cx``: the v2 Bob moved there); the rejected (``cs nr fr cq nq``) and ``hv`` (v2 vetoed)
never ran; ``hb`` never ran v2, ``hd`` ran v1 once at the release on Alice's approval from
before the hold; ``<s>:audit``: the fresh-clone ``plangate audit --json`` after P5 calls valid
exactly the plans the controller completed and the expected ones; ``<s>:held``: P2 saw the plan
held and ran nothing (P3 too for the kinds replaced); ``sm:row``, ``sr:row``: the ``PLAN.md``
source in the case twin folder has a row ``E_PLAN_AMBIGUOUS`` (docs/formats.md).

Seen (round 93): 16 ids broke, one class; the fresh-clone audit agreed with the controller
each time (valid == completed).

1. **A twin FOLDER one with the plan's on some checkout, removed on a merged branch, is not its
   branch maker's touch** (``nu``, ``nv``, ``nw``, ``cz``, ``cy``, ``dt``, ``zw``, ``cm``
   ``:{ran,audit}``): P2/P3 held each (``E_PLAN_AMBIGUOUS: plans/CZ/PLAN.yml is this plan's file
   on a case-insensitive, HFS+ or NTFS checkout (its folder and this one are one folder there);
   neither is read or run until one folder is deleted or renamed``; the same for
   ``plans/nve\\u0301/``, ``plans/dt./``, ``plans/zw\\u200c/``). Bob's branch commit ``bob: nv,
   cz, pk twin folders gone`` deleted the twin folder (``cm``: moved it to ``attic/cm``);
   Mallory's clean ``git merge --no-ff b-nv`` brought it (``cy``, ``nu``: Mallory's octopus,
   Bob's branch the third parent; ``nw``: the agent's merge of Bob's branch on the agent's side,
   fast-forwarded to main). Bob's approval then ran each: ``approval request (approve) by
   bob@ops.example.com``, ``plangate: start plans/cz``, ``plangate: complete plans/cz`` (Alice's
   later approval ``E_ILLEGAL_TRANSITION ... (from completed)``), and the fresh-clone audit
   called each start valid. The same deletion by Bob ON THE LINE (``cw``: ``plans/CW/``;
   ``nf<U+00E9>``: ``plans/nfe<U+0301>/``) refused Bob (``plangate: refuse plans/cw``,
   ``E_SELF_APPROVAL``), and so did the same merges for a same-folder ``PLAN.yaml`` (``oc``,
   ``fp``), a symlink (``ol``), a gitlink (``og``), a split name ``plans/bs\\PLAN.yml`` (``bs``)
   and the other spelling of the plans folder ``PLANS/pk/``, ``PLANS/po/`` (``pk``, ``po``).

Held: the octopus, the agent-side merge fast-forwarded (``fp``, ``og``) and an unread deletion
on main merged into the agent's branch (``fm``) all made Bob a writer; every kind replaced by
Bob in one commit (``ka``, ``kl``, ``kg``, ``kf``, ``kd``, ``ke``) kept the plan held (P3) and
made Bob a writer though the agent removed the new claim (the control ``ko`` ran on Bob's);
Bob's ``git mv -f`` of the case twin's file over ``PLAN.yml`` (``cx``: "a plan frozen as another
... moved there: a new life of the path", Bob refused, Alice's approval ran v2 once); Alice's
``rejected`` in a case or NFD twin (``cs``, ``nr``, released by the agent's octopus branch or on
the line) and on main under an agent-side merge (``fr``), and on a merged branch that then
deleted the case or NFD twin folder (``cq``, ``nq``: ``alice@example.com set status rejected on
a merged branch``): ``rejected``, never ran; Alice's ``rejected`` of v2 set in the twin while
held vetoed v2 by hash (``hv``: Bob's later approval of v2 refused ``E_VERSION_WITHDRAWN: this
exact version was withdrawn before it ran``; Mallory's in ``hx`` ignored, v2 ran); ``plangate
approve --force`` while held committed nothing (``plangate: E_PLAN_AMBIGUOUS: 'plans/ap': the
folder holds both PLAN.yml and PLAN.yaml ...``, exit 1), and after the release ``plangate
approve`` ran the plan once; a hold that started after Alice's approval ran nothing while held,
``hb``'s v2 moved over the plan never ran on her approval of v1 (pending again, "a new life of
the path"), ``hd``'s v1 ran once on it after the twin's deletion. A ``PLAN.json`` beside
``PLAN.yml`` (``js``, ``jr``) and a source in a case twin folder (``sk``, ``sm``, ``sj``,
``sr``) hold nothing, as documented ("a ``PLAN.json`` beside a ``PLAN.yml`` is: a note, not a
plan"; "the daemon leaves the source alone, its row waits ``E_PLAN_AMBIGUOUS``, and the PLAN.yml
beside it is the plan"): their rows said ``E_PLAN_AMBIGUOUS: cannot convert plans/SM: plans/SM
is one folder with plans/sm on some checkout``, and Alice's ``rejected`` in such a source
counted for nothing.

Should (docs/approvals.md): "whoever deletes one of the two claims chose the content left and
is a writer (round 69's rule), whatever the claim's spelling ...: the commit that deleted it,
so a deletion a merge brings from a branch (a clean merge, no byte of the merger's) is its
branch commits' makers', never the merger's"; docs/plan-format.md: folder names are compared
by the same rule ("``plans/fcase/`` beside ``plans/FCASE/``, ``plans/f<U+200C>zw/`` beside
``plans/fzw/``, ... ``plans/fdot./`` beside ``plans/fdot/`` ... is one place"); the brief's
property: "a merged deletion is its branch makers'". On the line Bob's deletion of the same
folder is his touch; merged, it is nobody's.

Fixed (2026-12-02, r93held): the hold's one rule (``Lifecycle._claim_sets``) found a twin
folder's claims only among the plans the index held when asked (``_folder_twins``); at a merge
the twin's own plan (``plans/CZ``) left the index with its removal before the plan it held was
judged, so the removal read at the merge's first parent claimed nothing, ``_touchers`` found no
change of the plan's and took the commit's own people (Mallory, or the agent: never Bob; on the
line the same fall-back named Bob, which is why ``cw`` held). Now the rule lists at the commit
read every plan folder one with the plan's that the index holds or held
(``Lifecycle._twin_folders``, ``FolderTwins.known``), for the hold, the held decisions and the
touch alike, in the controller and the fresh-clone audit; a removed twin folder is a claim at
the first parent, and its removal goes through ``_brought``/``_merged_makers`` as a same-folder
twin's does. The 16 ids refuse Bob ``E_SELF_APPROVAL`` and run once on Alice's approval.
Added the next variants: ``gh`` (the plan ``plans/GRP/gh``, its twin ``plans/grp/gh/`` one level
up deleted on ``b-nv``: broke the same way on the unfixed code, 2 ids) and ``cr`` (Bob's ``git
mv plans/CR plans/Cr`` on ``b-nv``, a twin renamed to another twin spelling, the agent deleting
it on the line: held before and after, the merge brought Bob's new claim). ``INDEX_VERSION``
122. Was: 16 broke (strict xfails).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, brief, cases, clone_audit, load_yaml, plan_text
from test_round2_execution_kit import shared

NFC = "nf\u00e9"
NFD = "nfe\u0301"
#: Bob chose the content left (he deleted, moved or replaced a claim): a writer
WRITER = ["oc", "fp", "fm", "ka", "kl", "kg", "kf", NFC, "kd", "ke", "ol", "og", "cx", "nu"]
#: twin FOLDERS deleted on Bob's branch: merged --no-ff by Mallory (nv, cz, pk), in an octopus
#: by Mallory (cy, po), merged by the agent on its side and fast-forwarded (nw)
WRITER += ["nv", "cz", "pk", "cy", "po", "nw"]
#: more spellings on Bob's branch merged by Mallory: a split name ``plans/bs\\PLAN.yml``, an NTFS
#: trailing dot ``plans/dt./``, an HFS-ignored ZWNJ ``plans/zw<U+200C>/``; cw: ``plans/CW/``
#: deleted by Bob on the line (the reference)
WRITER += ["bs", "dt", "zw", "cw"]
#: cm: Bob's ``git mv plans/CM attic/cm`` on ``b-nv`` (a move of the case twin folder, merged)
WRITER += ["cm"]
#: the next variants (r93held): cr: Bob's ``git mv plans/CR plans/Cr`` on ``b-nv`` (a twin folder
#: renamed to another twin spelling, still held), the agent deleting ``plans/Cr`` on the line; gh:
#: the plan ``plans/GRP/gh``, its twin ``plans/grp/gh/`` one level up, Bob's ``git rm -r
#: plans/grp`` on ``b-nv``
WRITER += ["cr", "gh"]
#: controls: Bob no writer, his approval runs the plan once (js, jr: a PLAN.json beside the
#: PLAN.yml is a note, no hold; ap: approved by ``plangate approve`` after the release)
CONTROL = ["oa", "ko", "nn", "js", "jr", "ap", "sk", "sm", "sj", "sr"]
#: Alice's rejected set while held in a twin (fr: in the plan file, on main, unread): never runs
#: (sj, sr: her rejected in a source in a case twin folder, no plan file: a control above)
REJECTED = ["cs", "nr", "fr"]
#: cq, nq: Alice's rejected in ``plans/CQ/``, ``plans/nqe<U+0301>/`` on branch ``b-cq``, which the
#: agent then deletes on that branch, merged ``--no-ff`` by Mallory
REJECTED += ["cq", "nq"]
#: hb, hd: a hold after Alice's approval
SPECIAL = ["hb", "hd"]
#: hv: Alice's rejected in the v2 twin while held (a veto of v2); hx: Mallory's (the control)
VETO = ["hv", "hx"]
SLUGS = [*WRITER, *CONTROL, *REJECTED, *SPECIAL, *VETO]
HELD = [s for s in SLUGS if s not in ("nn", "js", "jr", "sk", "sm", "sj", "sr")]
#: a source in a case twin folder: "its row waits E_PLAN_AMBIGUOUS" (docs/formats.md)
SOURCE_ROWS = {"sm": "plans/SM", "sr": "plans/SR"}
#: slug -> twin path (a file holding v2 unless noted)
TWIN = {
    "oc": "plans/oc/PLAN.yaml",
    "oa": "plans/oa/PLAN.yaml",
    "fp": "plans/fp/PLAN.yaml",
    "fm": "plans/fm/PLAN.yaml",
    "ka": "plans/ka/PLAN.yaml",
    "kl": "plans/kl/PLAN.yaml",
    "ko": "plans/ko/PLAN.yaml",
    "kf": "PLANS/kf/PLAN.yml",
    "cs": "plans/CS/PLAN.yml",
    NFC: f"plans/{NFD}/PLAN.yml",
    "nr": "plans/nre\u0301/PLAN.yml",
    "js": "plans/js/PLAN.json",
    "jr": "plans/jr/PLAN.json",
    "ap": "plans/ap/PLAN.yaml",
    "hb": "plans/hb/PLAN.yaml",
    "hd": "plans/hd/PLAN.yaml",
    "sk": "PLANS/sk/PLAN.json",
    "sj": "PLANS/sj/PLAN.json",
    "sm": "plans/SM/PLAN.md",
    "sr": "plans/SR/PLAN.md",
    "fr": "plans/fr/PLAN.yaml",
    "hv": "plans/hv/PLAN.yaml",
    "hx": "plans/hx/PLAN.yaml",
    "kd": "plans/kd/PLAN.yaml/PLAN.yml",
    "cx": "plans/CX/PLAN.yml",
    "nu": "plans/nue\u0301/PLAN.yml",
    "nv": "plans/nve\u0301/PLAN.yml",
    "nw": "plans/nwe\u0301/PLAN.yml",
    "cz": "plans/CZ/PLAN.yml",
    "cy": "plans/CY/PLAN.yml",
    "pk": "PLANS/pk/PLAN.yml",
    "po": "PLANS/po/PLAN.yml",
    "bs": "plans/bs\\PLAN.yml",
    "dt": "plans/dt./PLAN.yml",
    "zw": "plans/zw\u200c/PLAN.yml",
    "cw": "plans/CW/PLAN.yml",
    "cm": "plans/CM/PLAN.yml",
    "cr": "plans/CR/PLAN.yml",
    "gh": "plans/grp/gh/PLAN.yml",
    "cq": "plans/CQ/PLAN.yml",
    "nq": "plans/nqe\u0301/PLAN.yml",
}
#: symlink (ke, ol) and gitlink (og) twins ``plans/<s>/PLAN.yaml``
LINKS = {"ke": "symlink", "ol": "symlink", "og": "gitlink"}
FOLDER = {s: s for s in SLUGS} | {"nr": "nr\u00e9", "nu": "nu\u00e9", "nv": "nv\u00e9"}
FOLDER |= {"nw": "nw\u00e9", "nq": "nq\u00e9", "gh": "GRP/gh"}
PLANGATE = str(Path(sys.executable).parent / "plangate")


def _json_text(tag: str, status: str = "pending_approval") -> str:
    return json.dumps(load_yaml(plan_text(tag, status=status)), indent=2) + "\n"


def _twin_text(slug: str, status: str = "pending_approval") -> str:
    if slug == "jr":
        return _json_text(slug, status)
    tag = slug if slug in ("cs", "nr", "sj", "sr", "cq", "nq") else f"{slug}-v2"
    if TWIN[slug].endswith(".json"):
        return _json_text(tag, status)
    if TWIN[slug].endswith(".md"):
        return "```yaml\n" + plan_text(tag, status=status) + "```\n"
    return plan_text(tag, status=status)


def _calls(lab: Lab) -> dict[str, tuple[int, int]]:
    return {s: (len(lab.calls(s)), len(lab.calls(f"{s}-v2"))) for s in SLUGS}


def _status(lab: Lab, slug: str, status: str) -> None:
    lab.set_status(FOLDER[slug], status)


def _rm(lab: Lab, rel: str) -> None:
    lab.git("rm", "-r", "-q", "--cached", rel)
    path = lab.repo / rel
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        for sub in sorted(path.rglob("*"), reverse=True):
            sub.unlink() if not sub.is_dir() or sub.is_symlink() else sub.rmdir()
        path.rmdir()


def _build(root: Path) -> Lab:
    lab = Lab(root)
    git = lab.git
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(FOLDER[slug], plan_text(slug))
    lab.put("plans/nn/NOTES.md", "notes\n")
    lab.commit("agent: plans", AGENT)
    lab.run()  # P1: frozen
    got["frozen"] = lab.rows()
    # hb, hd: Alice approves, then (same pass) the agent adds the twin
    for slug in ("hb", "hd"):
        _status(lab, slug, "approved")
    lab.commit("alice: approve hb hd", ALICE)
    for slug, rel in TWIN.items():
        lab.put(rel, _twin_text(slug))
    lab.commit("agent: twins", AGENT)
    for slug in ("kg", "ke", "ol"):
        os.symlink("PLAN.yml", lab.repo / f"plans/{slug}/PLAN.yaml")
    lab.commit("agent: symlink twins", AGENT)
    (lab.repo / "plans/og/PLAN.yaml").mkdir()
    git("update-index", "--add", "--cacheinfo", f"160000,{lab.head()},plans/og/PLAN.yaml")
    git("commit", "-q", "-m", "agent: a gitlink twin", who=AGENT)
    lab.run()  # P2: held
    got["held"] = lab.rows()
    got["held_src"] = {s: got["held"].get(p, {}) for s, p in SOURCE_ROWS.items()}
    got["p2"] = _calls(lab)
    # -- while held: Alice rejects in the twins of cs, nr, jr
    for slug in ("cs", "nr", "sj", "sr", "jr", "hv"):
        lab.put(TWIN[slug], _twin_text(slug, "rejected"))
    lab.commit("alice: reject in the twins", ALICE)
    lab.put(TWIN["hx"], _twin_text("hx", "rejected"))
    lab.commit("mallory: reject in the twin", MALLORY)
    # Bob's plangate approve while held (the controller's own commit path)
    env = lab.env(BOB) | {"PLANGATE_CONFIG": str(lab.config)}
    res = subprocess.run(
        [PLANGATE, "approve", "--force", "plans/ap"],
        cwd=lab.repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    got["approve"] = (
        res.returncode,
        res.stdout[-400:],
        res.stderr[-400:],
        git("log", "-1", "--format=%an %s"),
    )
    # -- kind replaced in one commit by Bob
    _rm(lab, TWIN["ka"])
    lab.put("plans/ka/PLAN.yaml/x.txt", "a folder now\n")
    _rm(lab, TWIN["kl"])
    os.symlink("PLAN.yml", lab.repo / "plans/kl/PLAN.yaml")
    _rm(lab, "plans/kg/PLAN.yaml")
    lab.git("add", "-A")
    (lab.repo / "plans/kg/PLAN.yaml").mkdir()
    git("update-index", "--add", "--cacheinfo", f"160000,{lab.head()},plans/kg/PLAN.yaml")
    v1 = {s: (lab.repo / f"plans/{s}/PLAN.yml").read_bytes() for s in ("kd", "ke")}
    _rm(lab, "plans/kd/PLAN.yaml")
    (lab.repo / "plans/kd/PLAN.yaml").write_bytes(v1["kd"])  # folder -> a byte copy file
    _rm(lab, "plans/ke/PLAN.yaml")
    (lab.repo / "plans/ke/PLAN.yaml").write_bytes(v1["ke"])  # symlink -> a byte copy file
    _rm(lab, "PLANS/kf")
    os.symlink("../plans/kf", lab.repo / "PLANS/kf") if (lab.repo / "PLANS").is_dir() else None
    if not (lab.repo / "PLANS").is_dir():
        (lab.repo / "PLANS").mkdir()
        os.symlink("../plans/kf", lab.repo / "PLANS/kf")
    git("add", "PLANS/kf", "plans/ka", "plans/kl", "plans/kd", "plans/ke")
    git("commit", "-q", "-m", "bob: claims replaced by another kind", who=BOB)
    _rm(lab, TWIN["ko"])
    lab.put("plans/ko/PLAN.yaml/x.txt", "a folder now\n")
    lab.commit("agent: ko's claim a folder now", AGENT)
    lab.run()  # P3: still held
    got["held3"] = lab.rows()
    # -- releases
    held_tip = lab.head()
    lab.branch("b-oc", held_tip)
    _rm(lab, TWIN["oc"])
    _rm(lab, "plans/ol/PLAN.yaml")
    _rm(lab, "plans/nue\u0301")
    _rm(lab, "plans/CY")
    _rm(lab, "PLANS/po")
    lab.commit("bob: oc, ol, nu, cy, po twins gone", BOB)
    lab.branch("b-nv", held_tip)
    for rel in (
        "plans/nve\u0301",
        "plans/CZ",
        "PLANS/pk",
        TWIN["bs"],
        "plans/dt.",
        "plans/zw\u200c",
    ):
        _rm(lab, rel)
    (lab.repo / "attic").mkdir(exist_ok=True)
    git("mv", "plans/CM", "attic/cm")
    git("mv", "plans/CR", "plans/Cr")
    _rm(lab, "plans/grp")
    lab.commit("bob: nv, cz, pk twin folders gone", BOB)
    lab.branch("b-oc2", held_tip)
    lab.put("plans/nn/MORE.md", "more\n")
    lab.commit("agent: more notes", AGENT)
    lab.branch("b-oa", held_tip)
    _rm(lab, TWIN["oa"])
    _rm(lab, "plans/CS")
    lab.commit("agent: oa, CS twins gone", AGENT)
    lab.branch("b-cq", held_tip)
    for slug in ("cq", "nq"):
        lab.put(TWIN[slug], _twin_text(slug, "rejected"))
    lab.commit("alice: reject in the twin folders", ALICE)
    _rm(lab, "plans/CQ")
    _rm(lab, "plans/nqe\u0301")
    lab.commit("agent: twin folders gone", AGENT)
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-ff", "--no-edit", "b-cq", who=MALLORY)
    git("merge", "-q", "--no-ff", "--no-edit", "b-oc2", "b-oc", who=MALLORY)  # octopus
    git("merge", "-q", "--no-ff", "--no-edit", "b-oc2", "b-oa", who=BOB)  # octopus (control)
    git("merge", "-q", "--no-ff", "--no-edit", "b-nv", who=MALLORY)
    # fp: Bob's branch merged INTO the agent's branch, fast-forwarded to main
    base = lab.head()
    lab.branch("b-fp", base)
    _rm(lab, TWIN["fp"])
    _rm(lab, "plans/og/PLAN.yaml")
    _rm(lab, "plans/nwe\u0301")
    lab.commit("bob: fp, og, nw twins gone", BOB)
    lab.branch("b-fa", base)
    (lab.repo / "README").write_text("plans (agent)\n")
    lab.commit("agent: readme", AGENT)
    git("merge", "-q", "--no-ff", "--no-edit", "b-fp", who=AGENT)
    git("checkout", "-q", "main")
    git("merge", "-q", "--ff-only", "b-fa", who=AGENT)
    # kinds: the agent removes what Bob replaced; Bob deletes the NFD twin; js
    for rel in ("plans/ka/PLAN.yaml", "plans/kl/PLAN.yaml", "plans/kg/PLAN.yaml", "PLANS/kf"):
        _rm(lab, rel)
    _rm(lab, "plans/ko/PLAN.yaml")
    _rm(lab, "plans/kd/PLAN.yaml")
    _rm(lab, "plans/ke/PLAN.yaml")
    for slug in ("nr", "jr", "ap", "hd", "sj", "sr", "hv", "hx"):
        _rm(lab, TWIN[slug])
    _rm(lab, "plans/Cr")
    lab.commit("agent: claims gone", AGENT)
    git("mv", "-f", TWIN["hb"], "plans/hb/PLAN.yml", who=AGENT)
    git("commit", "-q", "-m", "agent: hb twin over the plan", who=AGENT)
    git("mv", "-f", TWIN["cx"], "plans/cx/PLAN.yml", who=BOB)
    git("commit", "-q", "-m", "bob: the CX twin over the plan", who=BOB)
    _rm(lab, TWIN[NFC])
    _rm(lab, "plans/CW")
    _rm(lab, TWIN["js"])
    _rm(lab, TWIN["sk"])
    _rm(lab, TWIN["sm"])
    _rm(lab, "plans/nn/NOTES.md")
    lab.commit("bob: nfd, json twins gone, notes gone", BOB)
    # fm: Bob deletes on main (unread), the agent's branch merges main, main fast-forwarded
    base = lab.head()
    lab.branch("b-fm", base)
    (lab.repo / "README").write_text("plans (agent fm)\n")
    lab.commit("agent: readme fm", AGENT)
    _rm(lab, TWIN["fr"])
    lab.commit("agent: fr twin gone", AGENT)
    git("checkout", "-q", "main")
    _rm(lab, TWIN["fm"])
    lab.commit("bob: fm twin gone", BOB)
    _status(lab, "fr", "rejected")
    lab.commit("alice: reject fr", ALICE)
    git("checkout", "-q", "b-fm")
    git("merge", "-q", "--no-ff", "--no-edit", "main", who=AGENT)
    git("checkout", "-q", "main")
    git("merge", "-q", "--ff-only", "b-fm", who=AGENT)
    for slug in VETO:
        lab.write(slug, plan_text(f"{slug}-v2"))
    lab.commit("agent: v2 into the plan", AGENT)
    got["tree"] = git("ls-files")
    lab.run()  # P4: released
    got["released"] = lab.rows()
    got["p4"] = _calls(lab)
    for slug in [*WRITER, *CONTROL, *REJECTED, *VETO]:
        if slug != "ap":
            _status(lab, slug, "approved")
    lab.commit("bob: approve", BOB)
    res = subprocess.run(
        [PLANGATE, "approve", "plans/ap"],
        cwd=lab.repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    got["approve2"] = (
        res.returncode,
        res.stdout[-400:],
        res.stderr[-400:],
        git("log", "-1", "--format=%an %s"),
    )
    lab.run()  # P5
    got["bob"] = _calls(lab)
    got["bob_rows"] = lab.rows()
    mid = root / "mid"
    mid.mkdir(exist_ok=True)
    _report, valid = clone_audit(lab, mid)
    got["valid"] = sorted(valid)
    for slug in WRITER:
        _status(lab, slug, "pending_approval")
    lab.commit("alice: reset", ALICE)
    for slug in WRITER:
        _status(lab, slug, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()  # P6
    got["calls"] = _calls(lab)
    got["rows"] = lab.rows()
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r93-approve-atk93d", _build)


IDS = [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")] + [f"{s}:held" for s in HELD]
IDS += [f"{s}:row" for s in SOURCE_ROWS]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round93_atk93d(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.rsplit(":", 1)
    plan = f"plans/{FOLDER[slug]}"
    if what == "row":
        row = got["held_src"][slug]
        assert "E_PLAN_AMBIGUOUS" in json.dumps(row, ensure_ascii=False), row
        return
    if what == "held":
        text = json.dumps(got["held"].get(plan, {}), ensure_ascii=False)
        assert "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text, brief(
            got["held"].get(plan, {}), notes=4
        )
        if slug in ("ka", "kl", "kg", "kf", "ko"):  # still held after the kind's replacement
            text = json.dumps(got["held3"].get(plan, {}), ensure_ascii=False)
            assert "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text, brief(
                got["held3"].get(plan, {}), notes=4
            )
        assert got["p2"][slug] == (0, 0), got["p2"][slug]
        return
    row = got["bob_rows"].get(plan, {})
    if what == "audit":
        done = row.get("status") == "completed"
        assert (plan in got["valid"]) == done, (plan, got["valid"], brief(row, notes=4))
        expected = slug in CONTROL or slug in ("hd", "hx")
        assert (plan in got["valid"]) == expected, (plan, got["valid"], brief(row, notes=4))
        return
    if slug in SPECIAL:
        # nothing held runs at the release; v2 never runs on an approval of v1
        assert got["p4"][slug][1] == 0 and got["calls"][slug][1] == 0, (
            got["calls"][slug],
            brief(row, notes=4),
        )
        if slug != "hd":
            assert got["p4"][slug] == (0, 0), (
                got["p4"][slug],
                brief(got["released"].get(plan, {}), notes=4),
            )
        assert got["calls"][slug][0] <= 1, got["calls"][slug]
        return
    if slug in VETO:
        # hv: Alice vetoed v2 while held (in the twin), so Bob's approval of v2 runs nothing
        bob = (0, 1) if slug == "hx" else (0, 0)
        assert got["bob"][slug] == bob, (got["bob"][slug], brief(row, notes=4))
        assert got["calls"][slug] == bob, (
            got["calls"][slug],
            brief(got["rows"].get(plan, {}), notes=4),
        )
        return
    bob = (1, 0) if slug in CONTROL else (0, 0)
    assert got["bob"][slug] == bob, (got["bob"][slug], brief(row, notes=4))
    if slug in WRITER:
        assert "E_SELF_APPROVAL" in (row.get("reason") or ""), brief(row, notes=4)
    final = (0, 0) if slug in REJECTED else (0, 1) if slug == "cx" else (1, 0)
    assert got["calls"][slug] == final, (
        got["calls"][slug],
        brief(got["rows"].get(plan, {}), notes=4),
    )


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="lab-", dir="/tmp/atk93d"))
    got = _build(out).got  # type: ignore[attr-defined]
    for key in ("frozen", "held", "held3", "released", "bob_rows", "rows"):
        got[key] = {p: brief(r, notes=4) for p, r in got[key].items()}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
