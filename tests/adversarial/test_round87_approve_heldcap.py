"""Round 87, approval and policy (atk87a): the newest defences at their edges.

Lab (one, built once, seven ``run --once`` passes). Policy: ``plans/q-*`` needs 2 of group
``ops`` (Alice and ``*@ops.example.com``: Bob, Carol). The agent commits one plan per
variant (frozen by the first pass). ``<slug>:ran`` counts the recording tool's calls,
``<slug>:audit`` asserts the fresh clone's ``plangate audit`` calls valid exactly the runs
the controller made (and the expected ones).

Held statuses past the bound of 64 kept (``held_from.decisions``: "past it the oldest
statuses that are no withdrawal are dropped first"); an approval's take-back is no
withdrawal:

- ``sa``: Alice approves, the agent's twin folder ``plans/SA/`` in the same pass window (held
  with her approval open); while held Alice sets ``pending_approval`` (her take-back), then
  65 statuses by MALLORY (``approved``/``pending_approval`` in turn, the last ``approved``);
  released by the agent. Nothing may run: Alice took her approval back.
- ``sa0``: the same with ONE Mallory ``approved`` after the take-back (under the bound).
- ``sp``: as ``sa``, the flood ending ``pending_approval``; Mallory approves after release.
- ``q-tb``: Bob's vote (partial, a pass) before the hold; while held Bob's set-back, then
  66 statuses by Mallory; after release Carol votes. ``q-tb0``: the same without the flood;
  ``q-nh``: the same with NO hold at all (the rule the hold must reproduce: a vote the
  controller recorded stays after its maker's set-back, so all three run once).
- ``hok`` (control): Alice approves, a twin folder, the agent's release: runs once.

Statuses set in the TWIN file / folder while held:

- ``ty``: the agent's twin ``PLAN.yaml`` (same bytes); while held Alice sets ``approved`` IN
  THE TWIN; the agent removes ``PLAN.yml``: the plan now lives in ``PLAN.yaml``, approved
  by Alice while held (refused ``E_PLAN_AMBIGUOUS`` by its maker).
- ``tz``: the agent's twin ``PLAN.yaml`` committed with ``status: approved`` (the author's);
  ALICE releases by removing ``PLAN.yml``. ``tm``: the same twin committed by MALLORY.
- ``tr``: the agent's twin ``PLAN.yaml``; while held Alice ``rejected`` in the twin; the
  agent removes the twin (her rejection's file); Bob approves ``PLAN.yml``.
- ``tc``: the agent's twin folder ``plans/TC/``; while held Alice ``rejected`` in
  ``plans/TC/PLAN.yml``; the agent removes ``plans/TC``; Bob approves ``plans/tc``.
- r87heldtwin's variants (not tried by the attacker): ``tv``: the agent's twin ``PLAN.yaml``
  of ANOTHER version committed ``approved``; Alice removes ``PLAN.yml``: nothing runs.
  ``tw``: Mallory's twin FOLDER ``plans/TW/`` (a byte copy) committed ``approved``; Alice
  removes ``plans/tw``: nothing runs. ``tk`` (control): the agent's twin ``PLAN.yaml`` of
  another version; while held Alice ``rejected`` in it; the agent removes it; Bob approves
  ``PLAN.yml``: runs once (a rejection of another version withdraws nothing of this one).
  ``td``: as ``tr``, but the agent removes BOTH files (the plan gone at its release), then
  commits the same ``PLAN.yml`` back; Bob approves: nothing runs (her rejection vetoed it).

Writers (Bob makes the entry, then approves; each should be ``E_SELF_APPROVAL``):

- ``wc``: ``PLANS/wc/NOTES.md`` authored by Bob, COMMITTED by Alice (a cherry-pick).
- ``wk``: ``Plans/wk/NOTES.md`` authored by Alice, committed by Bob (he applied her patch).
- ``wx``: Bob's ``chmod +x plans/wx/PLAN.yml`` (mode only, same blob).
- ``wd``: ``Plans/wd/a/b/NOTES.md`` two levels down on Bob's branch, merged ``--no-ff``.
- ``wo``: an OCTOPUS merge (the agent) of an unrelated branch and Bob's ``PLANS/wo/NOTES.md``.
- ``wn``: Bob's ``plans./wn/NOTES.md`` on a branch Carol merges into hers, which the agent
  merges (a merge of a merge).
- ``wg``: a gitlink ``plans./wg/sub`` on Bob's branch, merged ``--no-ff``.
- ``wr``: Bob ``git mv`` of a root file into ``PLANS/wr/NOTES.md`` on a branch, merged.
- ``wt``: an evil merge: BOB's ``--no-ff`` merge of the agent's branch adds ``PLANS/wt/NOTES.md``
  in the merge commit itself.
- ``wok`` (control): Bob approves, no note: runs once. ``wap`` (control): ALICE's note in
  ``PLANS/wap/``, Bob approves: runs once.

``plangate approve``/``reject`` with the branch moved under the commit (a ``git`` on Alice's
``PATH`` that, at the command's first ``update-ref``, lets the agent commit first; the
command then retries):

- ``rv``: the agent commits v2 (a new param): must be refused, nothing committed; 0 runs.
- ``rr``: the agent sets ``rejected`` (its own withdrawal): 0 runs.
- ``rb``: the agent commits v2 then v1 back (two commits): at most one run, of v1.
- ``rt``: the agent adds a twin ``PLAN.yaml`` (v2); later removes it: 0 runs (an approval
  while held is refused).
- ``rm``: the agent ``git mv`` PLAN.yml -> PLAN.yaml (same bytes): at most one run, of v1.
- ``rd``: the agent ``git rm`` the plan: approve must commit no plan file back; 0 runs.
- ``jr``: Alice's ``plangate reject`` while the agent commits v2: no rejection of v2
  ("only onto the version first read").
- ``ru`` (control): the agent commits an unrelated file: approve retries, runs once.
  ``rok`` (control): no race, runs once.

Seen (round 87): 9 ids broke, 2 classes (the fresh-clone audit agreed with the controller).

1. **A status set in the commit that makes the twin file is credited to the release**
   (``tz``, ``tm`` ``:{ran,audit}``, ``ty:who``): the agent's (or Mallory's) twin
   ``plans/tz/PLAN.yaml``, a byte copy of the frozen plan with ``status: approved``, holds the
   plan ``E_PLAN_AMBIGUOUS: the folder holds both PLAN.yml and PLAN.yaml``; Alice's commit
   removing ``PLAN.yml`` releases it and the next pass runs it: row ``completed``, notes
   ``71f89c7ec15f approval request (approve) by alice@example.com``, ``plangate: start
   plans/tz``; the audit calls the start valid. Alice never set ``approved``. The other way
   round (``ty``), Alice's ``approved`` set IN the twin while held, released by the agent's
   removal of ``PLAN.yml``, is refused as ``approval request (approve) by
   agent@example.com`` (nothing runs, but it is judged as the releaser's, not hers).
2. **A rejection set in the twin while held is lost with the twin** (``tr``, ``tc``
   ``:{ran,audit}``): Alice's ``rejected`` committed in the byte-exact twin
   ``plans/tr/PLAN.yaml`` (or ``plans/TC/PLAN.yml``, a byte-exact copy in a case twin folder:
   the same version) while held; the agent removes the twin; Bob approves ``PLAN.yml``: it
   runs (``approval request (approve) by bob@ops.example.com``, ``start``, ``complete``), the
   audit agrees. Her rejection of that version never counted.

Held: the bound of 64 kept statuses did not drop Alice's take-back (``sa``, ``sp``: after 65/66
Mallory statuses the row says ``approval (approve) lapsed: ... set status pending_approval
before the controller acted on it`` and Mallory's approvals are refused ``made while the plan
was held E_PLAN_AMBIGUOUS``; nothing ran); ``q-tb``/``q-tb0`` agree with the no-hold ``q-nh``
(each ran once, the flood changed nothing); every writer (author committed by Alice, Alice's
patch committed by Bob, a mode-only ``chmod`` of PLAN.yml, two levels down, octopus, a merge
of a merge, a gitlink in ``plans./``, a ``git mv`` into ``PLANS/``, an evil merge) was refused
``E_SELF_APPROVAL``; the controls ran once. The racing commands: ``rv``/``jr`` refused
``E_PLAN_HASH_MISMATCH: plans/rv changed on main while committing (sha256:f330a ->
sha256:f4727); nothing committed``; ``rr`` ``E_ILLEGAL_TRANSITION: plans/rr is rejected,
which is final``; ``rm``/``rd`` ``E_USAGE: plans/rm/PLAN.yml is not committed`` (nothing
written back); ``rt`` committed onto the twin's tree and the controller refused it
``made while the plan was held E_PLAN_AMBIGUOUS``; ``rb`` ran v1 once; ``ru`` retried and ran.

Fixed (2026-12-01, r87heldtwin): the hold kept only the statuses set in the file it found
(``Lifecycle._held_decision`` returned for any other path), and a release that left the
folder's OTHER file read it as a plan "from nothing", its status the releasing commit's
(``_ambiguity``: ``FileChange(path, None, blob)``, no ``released`` hold); a twin folder's plan
kept its own decisions, deleted with it. Now every plan file of the held folder and of its twin
folders is the plan's: a status change in any of them (a new twin file's status compared with
the status the hold found) is a held decision with its ``file`` and ``hash``, mirrored to the
held twin folders' plans (``_held_twins``, ``_held_seen``; ``held_from.files``: the other
files' blobs last seen); the release judges the status of the file it leaves as the commit
that set it (``_held_left``: the last decision set in THAT file, the file as it left it), the
others before it in commit order (``_held_steps``); a file left that holds the version the hold
found takes the plan on from the hold (``_same_version``); a withdrawal set in a file of
another version, or of a plan the release removes, vetoes that version by hash
(``_side_veto``, ``_held_vetoes``). ``INDEX_VERSION`` 115. Before the fix 11 ids failed (the 9
and ``td:{ran,audit}``); ``tv``, ``tw``, ``tk`` held before and after.

Should (docs/approvals.md): "Who releases the hold lends the status no rights and takes none
from it, by a plain commit or by a merge. The rule is one for every status a human sets while
held: the release judges it as the commit that set it"; a withdrawal by an allowed approver
"wins whatever came after it"; "The list is bounded (64): past it the oldest statuses that are
no withdrawal are dropped first, every withdrawal and the last status are always kept"; "an
approval set back lapses"; "the release judges each as its own commit, in that order,
exactly as the same commits are judged with no hold". CHANGELOG: approve "commits on top ...
only onto the version it first read: a move that brought another version of the plan is
refused ``E_PLAN_HASH_MISMATCH``".
"""

from __future__ import annotations

import json
import os
import subprocess
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
    cases,
    clone_audit,
    identity,
    plan_text,
)
from test_round2_execution_kit import shared

APPROVAL = """\
groups:
  ops: ["alice@example.com", "*@ops.example.com"]
rules:
  - match: {paths: ["plans/q-*"]}
    require: [{group: ops, count: 2}]
"""
PLANGATE = str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "plangate")
GIT = "/usr/bin/git"

HOLD = ["sa", "sa0", "sp", "q-tb", "q-tb0", "q-nh", "hok"]
TWIN = ["ty", "tz", "tm", "tr", "tc"]
#: r87heldtwin's variants of the twin class (not tried by the attacker)
TWIN2 = ["tv", "tw", "tk", "td"]
WRITERS = ["wc", "wk", "wx", "wd", "wo", "wn", "wg", "wr", "wt"]
WCTRL = ["wok", "wap"]
RACES = ["rv", "rr", "rb", "rt", "rm", "rd", "jr", "ru", "rok"]
SLUGS = HOLD + TWIN + TWIN2 + WRITERS + WCTRL + RACES
RUNS = {"hok": 1, "wok": 1, "wap": 1, "ru": 1, "rok": 1, "q-tb": 1, "q-tb0": 1, "q-nh": 1, "tk": 1}
#: at most one run, and only of v1 (the version first read)
ATMOST = {"rb", "rm"}

V2 = 'sed -i \'s/^      tag: "{s}"$/      tag: "{s}"\\n      x: 2/\' plans/{s}/PLAN.yml'
RACE = {
    "rv": [V2],
    "jr": [V2],
    "rr": ["sed -i 's/^  status: pending_approval/  status: rejected/' plans/rr/PLAN.yml"],
    "rb": [V2, "COMMIT", "sed -i '/^      x: 2$/d' plans/rb/PLAN.yml"],
    "rt": [
        "cp plans/rt/PLAN.yml plans/rt/PLAN.yaml",
        'sed -i \'s/^      tag: "rt"$/      tag: "rt"\\n      x: 2/\' plans/rt/PLAN.yaml',
    ],
    "rm": [f"{GIT} mv plans/rm/PLAN.yml plans/rm/PLAN.yaml"],
    "rd": [f"{GIT} rm -q plans/rd/PLAN.yml"],
    "ru": ["echo moved > other-ru.txt"],
    "rok": [],
}


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _rows(lab: Lab) -> dict[str, Any]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {r["plan"]: r for r in json.loads(out)}


def _set(lab: Lab, rel: str, status: str) -> None:
    path = lab.repo / rel
    lines = path.read_text().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("  status:") and i < 6:
            lines[i] = f"  status: {status}"
            break
    path.write_text("\n".join(lines))


def _race(lab: Lab, root: Path, slug: str, verb: str = "approve") -> dict[str, Any]:
    """``plangate <verb> plans/<slug>`` as Alice, the agent committing RACE[slug] at the
    command's first ``update-ref`` (a git on her PATH times the race)."""
    bindir = root / "racebin"
    bindir.mkdir(exist_ok=True)
    marker = root / f"raced-{slug}"
    script = root / f"race-{slug}.sh"
    agent = " ".join(f"{k}='{v}'" for k, v in identity(AGENT).items())
    # the command holds index.lock: the agent commits through its own index (plumbing)
    commit = (
        f"{GIT} add -A && t=$({GIT} write-tree) && "
        f"c=$({GIT} commit-tree $t -p $({GIT} rev-parse HEAD) -m 'agent: race {slug}') && "
        f"{GIT} update-ref refs/heads/main $c"
    )
    body = [
        f"cd '{lab.repo}'",
        f"export {agent} GIT_INDEX_FILE='{root}/race-index-{slug}'",
        f"{GIT} read-tree HEAD",
    ]
    for cmd in (c.replace("{s}", slug) for c in RACE[slug]):
        body.append(commit if cmd == "COMMIT" else cmd)
    if RACE[slug]:
        body.append(commit)
    else:
        marker.write_text("")
    script.write_text("\n".join(body) + "\n")
    (bindir / "git").write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = update-ref ] && [ ! -e "{marker}" ]; then\n'
        f'  : > "{marker}"\n'
        f'  ( sh -x "{script}" ) >"{script}.out" 2>&1 </dev/null\n'
        "fi\n"
        f'exec {GIT} "$@"\n'
    )
    os.chmod(bindir / "git", 0o755)
    env = lab.env(ALICE)
    env["PATH"] = f"{bindir}:{os.environ['PATH']}"
    before = lab.head()
    extra = ["-m", "no"] if verb == "reject" else []
    done = subprocess.run(
        [PLANGATE, verb, f"plans/{slug}", *extra, "--config", str(lab.config)],
        cwd=lab.repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    log = lab.git("log", "--format=%h %ae %s", f"{before}..HEAD")
    by_alice = [line for line in log.splitlines() if " alice@example.com " in line]
    tree = lab.git("ls-tree", "-r", "--name-only", "HEAD", f"plans/{slug}").split()
    return {
        "rc": done.returncode,
        "out": (done.stdout + done.stderr)[-600:],
        "raced": marker.exists(),
        "alice_commits": by_alice,
        "tree": tree,
        "log": log,
    }


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    _put(lab, "notes-wr.md", "Alice's notes.\n")
    lab.commit("agent: plans", AGENT)
    lab.run()  # P1: frozen

    # -- quorum votes before the hold (a pass records them partial)
    for slug in ("q-tb", "q-tb0", "q-nh"):
        lab.set_status(slug, "approved")
    lab.commit("bob: vote", BOB)

    # -- writers
    _put(lab, "PLANS/wc/NOTES.md", "Bob.\n")
    lab.git("add", "-A")
    env_c = {**identity(BOB), **{k: v for k, v in identity(ALICE).items() if "COMMITTER" in k}}
    lab.extra_env = env_c  # type: ignore[attr-defined]
    lab.git("commit", "-q", "-m", "bob's note (picked by alice)")
    env_k = {**identity(ALICE), **{k: v for k, v in identity(BOB).items() if "COMMITTER" in k}}
    lab.extra_env = env_k  # type: ignore[attr-defined]
    _put(lab, "Plans/wk/NOTES.md", "Alice.\n")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "alice's note (applied by bob)")
    lab.extra_env = {}  # type: ignore[attr-defined]
    os.chmod(lab.repo / "plans" / "wx" / "PLAN.yml", 0o755)
    lab.commit("bob: chmod", BOB)
    _put(lab, "PLANS/wap/NOTES.md", "Alice.\n")
    lab.commit("alice: note", ALICE)
    # wd, wg, wr: Bob's branch merged --no-ff by the agent
    lab.git("checkout", "-q", "-b", "bob1")
    _put(lab, "Plans/wd/a/b/NOTES.md", "Bob.\n")
    (lab.repo / "PLANS" / "wr").mkdir(parents=True, exist_ok=True)
    lab.git("mv", "notes-wr.md", "PLANS/wr/NOTES.md")
    lab.commit("bob: notes", BOB)
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{lab.head()},plans./wg/sub")
    lab.git("commit", "-q", "-m", "bob: submodule", who=BOB)
    lab.git("checkout", "-q", "main")
    (lab.repo / "plans.").mkdir(exist_ok=True)
    lab.git("merge", "-q", "--no-ff", "-m", "merge bob1", "bob1", who=AGENT)
    # wo: octopus
    lab.git("checkout", "-q", "-b", "o1", "main")
    _put(lab, "other-o1.txt", "x\n")
    lab.commit("agent: o1", AGENT)
    lab.git("checkout", "-q", "-b", "o2", "main")
    _put(lab, "PLANS/wo/NOTES.md", "Bob.\n")
    lab.commit("bob: o2", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "octopus", "o1", "o2", who=AGENT)
    # wn: a merge of a merge
    lab.git("checkout", "-q", "-b", "n1", "main")
    _put(lab, "plans./wn/NOTES.md", "Bob.\n")
    lab.commit("bob: n1", BOB)
    lab.git("checkout", "-q", "-b", "n2", "main")
    _put(lab, "other-n2.txt", "x\n")
    lab.commit("carol: n2", CAROL)
    lab.git("merge", "-q", "--no-ff", "-m", "carol merges n1", "n1", who=CAROL)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge n2", "n2", who=AGENT)
    # wt: an evil merge by Bob
    lab.git("checkout", "-q", "-b", "t1", "main")
    _put(lab, "other-t1.txt", "x\n")
    lab.commit("agent: t1", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-commit", "t1", who=BOB)
    _put(lab, "PLANS/wt/NOTES.md", "Bob.\n")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "bob: merge t1", who=BOB)

    # -- races (each its own plangate approve/reject as Alice)
    got["race"] = {}
    for slug in RACES:
        got["race"][slug] = _race(lab, root, slug, "reject" if slug == "jr" else "approve")
    lab.run()  # P2
    got["p2"] = _rows(lab)

    # -- holds: approvals open, then twins in the same window
    for slug in ("sa", "sa0", "sp", "hok"):
        lab.set_status(slug, "approved")
    lab.commit("alice: approve", ALICE)
    for slug in WRITERS + WCTRL:
        lab.set_status(slug, "approved")
    lab.commit("bob: approve", BOB)
    for slug in ("sa", "sa0", "sp", "hok", "q-tb", "q-tb0"):
        lab.write(slug.upper(), plan_text(f"{slug}-twin"))
    lab.write("TC", lab.read("tc"))  # a byte-exact copy: the same version
    for slug in ("ty", "tr", "td"):
        lab.write(slug, lab.read(slug), "PLAN.yaml")
    lab.write("tk", plan_text("tk-twin"), "PLAN.yaml")  # another version
    lab.commit("agent: twins", AGENT)
    lab.write("tv", plan_text("tv-twin", status="approved"), "PLAN.yaml")
    lab.commit("agent: tv twin v2 approved", AGENT)
    lab.write("TW", lab.read("tw"))
    _set(lab, "plans/TW/PLAN.yml", "approved")
    lab.commit("mallory: tw twin folder approved", MALLORY)
    lab.write("tz", lab.read("tz"), "PLAN.yaml")
    _set(lab, "plans/tz/PLAN.yaml", "approved")
    lab.commit("agent: tz twin approved", AGENT)
    lab.write("tm", lab.read("tm"), "PLAN.yaml")
    _set(lab, "plans/tm/PLAN.yaml", "approved")
    lab.commit("mallory: tm twin approved", MALLORY)
    lab.run()  # P3: held; writers judged
    got["held"] = _rows(lab)

    # -- while held
    for slug in ("sa", "sa0", "sp"):
        lab.set_status(slug, "pending_approval")
    lab.commit("alice: take back", ALICE)
    for slug in ("q-tb", "q-tb0", "q-nh"):
        lab.set_status(slug, "pending_approval")
    lab.commit("bob: take back", BOB)
    _set(lab, "plans/ty/PLAN.yaml", "approved")
    _set(lab, "plans/tr/PLAN.yaml", "rejected")
    _set(lab, "plans/TC/PLAN.yml", "rejected")
    _set(lab, "plans/tk/PLAN.yaml", "rejected")
    _set(lab, "plans/td/PLAN.yaml", "rejected")
    lab.commit("alice: decide in the twins", ALICE)
    lab.set_status("sa0", "approved")
    lab.commit("mallory: sa0", MALLORY)
    flood = {"sa": 65, "sp": 66, "q-tb": 66}
    for step in range(66):
        for slug, count in flood.items():
            if step < count:
                lab.set_status(slug, "approved" if step % 2 == 0 else "pending_approval")
        lab.commit(f"mallory: flood {step}", MALLORY)
    lab.run()  # P4
    got["flooded"] = _rows(lab)

    # -- releases
    for slug in ("sa", "sa0", "sp", "hok", "q-tb", "q-tb0", "tc"):
        lab.git("rm", "-rq", f"plans/{slug.upper()}")
    lab.git(
        "rm",
        "-q",
        "--ignore-unmatch",
        "plans/ty/PLAN.yml",
        "plans/tr/PLAN.yaml",
        "plans/rt/PLAN.yaml",
        "plans/tk/PLAN.yaml",
    )
    td_text = lab.read("td")
    lab.git("rm", "-rq", "plans/td")  # both files: the plan gone at its release
    lab.commit("agent: twins gone", AGENT)
    lab.git("rm", "-q", "plans/tz/PLAN.yml", "plans/tm/PLAN.yml", "plans/tv/PLAN.yml")
    lab.git("rm", "-rq", "plans/tw")
    lab.commit("alice: keep the yaml", ALICE)
    lab.run()  # P5
    got["released"] = _rows(lab)

    # -- after the release
    lab.set_status("sp", "approved")
    lab.commit("mallory: approve sp", MALLORY)
    for slug in ("q-tb", "q-tb0", "q-nh"):
        lab.set_status(slug, "approved")
    lab.commit("carol: vote", CAROL)
    lab.write("td", td_text)  # the version Alice rejected while held, back
    lab.commit("agent: td again", AGENT)
    for slug in ("tr", "tc", "tk", "td"):
        lab.set_status(slug, "approved")
    lab.commit("bob: approve", BOB)
    lab.run()  # P6
    lab.run()  # P7
    got["calls"] = {s: lab.calls(s) for s in SLUGS}
    got["twin_calls"] = {s: len(lab.calls(f"{s}-twin")) for s in SLUGS}
    got["rows"] = _rows(lab)
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    got["log"] = lab.git("log", "--format=%h %an/%cn %s", "--name-status", "-40")[-5000:]
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r87-approve-heldcap", _build)


IDS = (
    [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")]
    + [f"{s}:cmd" for s in RACES]
    + [f"{s}:entry" for s in WRITERS]
    + ["ty:who", "all:twins"]
)
#: Fixed (2026-12-01, r87heldtwin): no id is expected to fail.
BROKEN: dict[str, Any] = {}


def _brief(row: dict[str, Any]) -> Any:
    return (row.get("status"), row.get("approved_by"), (row.get("notes") or [])[-3:])


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round87_heldcap(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.rsplit(":", 1)
    if slug == "all":
        assert sum(got["twin_calls"].values()) == 0, got["twin_calls"]
        return
    plan = f"plans/{slug}"
    row = got["rows"].get(plan, {})
    calls = got["calls"][slug]
    if what == "audit":
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], ran)
        if slug not in ATMOST:
            assert (plan in got["valid"]) == (slug in RUNS), (plan, got["valid"])
        return
    if what == "who":  # an approval set while held is refused by its maker (Alice)
        text = json.dumps(row.get("notes") or [])
        assert "by alice@example.com" in text and "by agent@" not in text, _brief(row)
        return
    if what == "entry":  # the writer's entry made him one: his approval refused
        assert "E_SELF_APPROVAL" in json.dumps(row, ensure_ascii=False), _brief(row)
        return
    if what == "cmd":
        race = got["race"][slug]
        assert race["raced"], race
        if slug in ("rv", "jr", "rd", "rm"):  # another version (or none): nothing committed
            assert race["rc"] != 0 and not race["alice_commits"], race
        if slug == "rd":
            assert not [p for p in race["tree"] if "PLAN" in p], race
        if slug in ("ru", "rok"):
            assert race["rc"] == 0 and race["alice_commits"], race
        return
    if slug in ATMOST:
        assert len(calls) <= 1, (calls, _brief(row))
        assert all('"x"' not in c["stdin"] for c in calls), calls
        return
    assert len(calls) == RUNS.get(slug, 0), (len(calls), _brief(row))


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r87hc-", dir="/tmp/atk87a"))
    got = _build(out).got  # type: ignore[attr-defined]
    got["calls"] = {s: len(c) for s, c in got["calls"].items()}
    for key in ("p2", "held", "flooded", "released", "rows"):
        got[key] = {p: _brief(r) for p, r in got[key].items()}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
