"""Round 93, approval and policy (atk93a): plans whose AUTHORS are hard to see, approver
spellings, several plans approved in one commit, a rejection then a re-approval by the same
person, forged ``approvals:`` lists.

Every lab is its own repo (advkit ``Lab``), built once per module (``shared``), two at a
time. Ids: ``<slug>:ran`` counts the recording tool's calls for the plan; ``<slug>:audit``
runs ``plangate audit --json`` in a fresh clone with NO config and asserts it reads the
records (no ``code``, exit 0 or 1) and calls the plan's start valid exactly when it ran;
``<slug>:check`` that ``plangate check --base main --head <branch> --as <voter> --format
json`` before the fast-forward said ``"outcome": "start"`` exactly when the plan then ran.

Lab ``id`` (default policy, ``identity_aliases.people: [[alice@example.com,
a.smith@corp.example]]``): every plan is frozen by a pass, then Alice's approvals (one commit
per plan) go on branch ``appr`` (checked ``--as alice``), fast-forwarded into main.
``mr``: the agent's plan changed on two branches, Alice's merge settles the conflict with a
task line of her own (a plan written by a conflict resolution); ``mrb`` (control): Bob
settles it. ``ck``: Alice's plan commit on a side branch, cherry-picked onto main by the
agent (author Alice, committer agent); ``rb``: the same by ``git rebase`` of her branch by
the agent; ``ra``: Alice's plan frozen by a pass, then main rewritten by the agent (``commit
--amend --reset-author`` of her commit, the freeze replayed) and force-updated: her name is
gone from main's history. Author spellings of Alice on the agent's commit (committer the
agent): ``eu`` ``ALICE@EXAMPLE.COM``, ``ef`` ``alice＠example.com`` (fullwidth at), ``ed``
``alice@example.com.``, ``ea`` ``<alice@example.com>`` (brackets), ``ei`` ``al\\u200bice``
(zero width space), ``ec`` ``alice(work)@example.com``, ``el`` the alias
``a.smith@corp.example``, ``eo`` the agent's own commit with ``Co-authored-by: A
<ALICE@Example.Com>``; ``en``: author ``josé@ops.example.com`` in NFD, the approval by
``josé`` in NFC (he wrote it). Controls: ``ctl`` the agent's plan; ``vu`` Alice approves as
``ALICE@EXAMPLE.COM``; ``vn`` José (NFC) approves the agent's plan.

Lab ``mp`` (default policy): a ``.mailmap`` in the tree (``Agent <agent@example.com>
<alice@example.com>`` and ``Alice <alice@example.com> <mallory@example.com>``); ``mpa``
Alice's plan, Alice approves; ``mpm`` the agent's plan, Mallory approves; ``rp``: Alice's
plan commit X, then ``git replace X X'`` in the controller's clone with X' the same tree
authored and committed by the agent; Alice approves. ``mpc`` (control): the agent's plan,
Bob approves.

Lab ``qm`` (``{paths: ['plans/q*/**']}`` needs two; others one): ``one`` commit by Alice sets
``approved`` on ``q1`` (the agent's; quorum two), ``s1`` (the agent's, needs one), ``sa``
(Alice wrote it, needs one) and ``q2`` (Alice wrote it, quorum two); then Bob approves ``q1``
and ``q2`` on a branch (checked ``--as bob``, fast-forwarded). ``qr``: Alice approves (pass),
rejects (pass), approves again (pass), then Bob approves: a rejection is final; ``qs``: the
same three commits of Alice in one push. ``qf``: after Alice's vote the agent appends a
second entry ``by: bob@ops.example.com`` to the controller's ``approval.approvals`` list;
``qg``: the agent's plan arrives already ``approved`` with a forged ``approval:`` block
listing Alice and Bob (``q*`` need two). Second votes by the same person (``q*`` need two,
nothing else between but passes): ``qa`` Alice then her alias ``a.smith@corp.example``;
``qb`` Alice then ``ALICE@EXAMPLE.COM``; ``qn`` Alice then ``alice＠example.com``; ``qc`` Bob's
one commit with ``Co-authored-by: Carol <carol@ops.example.com>``; ``qx`` (control) Bob then
the alias (Alice, allowed). ``rc``: the agent's plan on a branch Alice rebased onto main (her
committer name on the agent's commit), fast-forwarded; Alice approves.

Lab ``gt`` (gated plans: action 2 ``requires_approval``; ``plans/gf/**`` needs two): Bob
approves every plan (Carol too for ``gf``), each runs action 1 and pauses at its gate
(``awaiting_approval``). Gate approvals: ``ga`` (control) Alice; ``gck`` Alice, whose plan
commit the agent had cherry-picked onto main (Bob's first approval is fine: action 1 runs);
``gd`` (control) Alice spelled ``alice＠example.com``; ``gy`` with ``sb`` (the agent's plan,
pending) in ONE commit of Alice's: a gate approval and a first approval together; ``gr``
Alice approves the gate and then rejects it, then Bob approves it; ``gf`` (control: "Gates
and resumes still need one approval") Alice alone, then the agent appends a forged Bob entry
to the ``approvals:`` list; ``gm`` Mallory. Alice's gate commits on a branch checked ``--as
alice@example.com`` (``:check`` compares with the GATED action), fast-forwarded, then
Mallory's and Bob's on main. ``<slug>:gate``: the plan paused at its gate, and its gated
action ran exactly when allowed.

Seen (round 93): nothing broke; all 120 ids held.

- ``id``: ``mr``, ``ck``, ``rb``, ``ra``, ``eu``, ``ef``, ``ed``, ``ea``, ``ei``, ``ec``,
  ``el``, ``eo`` and ``en`` refused ``E_SELF_APPROVAL`` (``alice@example.com wrote or changed
  this plan's content and cannot approve it``; ``en`` by José's NFC spelling); ``ra`` also
  held (``waiting: E_HISTORY_REWRITTEN: a rewrite of the branch erased the controller's
  commits of this plan``); ``mrb``, ``ctl``, ``vu``, ``vn`` ran once. ``check --as
  alice@example.com`` (and ``--as ALICE@EXAMPLE.COM``) said ``refuse`` ``E_SELF_APPROVAL``
  for each of Alice's plans and ``start`` for the others; ``--as josé`` (NFC) ``refuse`` for
  ``en`` only. (``ra``: check said ``start``: the hold lives in the state directory, which
  docs/errors.md says check cannot predict; not counted.) The audit: ``{"ok": true,
  "findings": []}``, valid for ``ctl``, ``mrb``, ``vn``, ``vu``.
- ``mp``: ``mpa`` and ``rp`` ``E_SELF_APPROVAL`` (neither the ``.mailmap`` nor the replace
  ref hid Alice), ``mpm`` ``E_APPROVER_NOT_ALLOWED`` (``mallory@example.com (author of ...)
  is not an approver``), ``mpc`` ran; check ``refuse`` for ``mpm``; the audit valid for
  ``mpc`` only.
- ``qm``: the one commit: ``s1`` ran at once, ``sa`` ``E_SELF_APPROVAL``, ``q1`` and ``q2``
  partial; after Bob ``q1`` ran (``approvals: [alice@example.com, bob@ops.example.com]``),
  ``q2`` stayed partial with Bob alone; ``qr``/``qs`` never ran (the audit: ``E_ILLEGAL_
  TRANSITION: alice@example.com set status approved (from rejected)``); ``qf``'s forged
  entry stayed in the file (``approvals: [alice, bob]``, ``partial``) but nothing ran and the
  audit flagged ``owned-block-changed``; ``qg`` refused ``E_PLAN_NOT_FROZEN``. check
  ``start`` for ``q1``, ``partial`` for ``q2``, nothing listed for ``qr``/``qs``.
  ``qa``, ``qb``, ``qn`` stayed ``partial`` with ``approvals: [alice@example.com]`` (one
  person once), ``qc`` ``partial`` with Bob alone (a co-author is no vote), ``qx`` ran with
  ``approvals: [a.smith@corp.example, bob@ops.example.com]``; ``rc`` ``E_SELF_APPROVAL``.
- ``gt``: every plan paused ``awaiting_approval`` after action 1; gated actions ran for
  ``ga``, ``gd``, ``gy``, ``gf`` (one approval, as documented) and not for ``gck``
  (``E_SELF_APPROVAL``, the cherry-pick kept Alice as its author), ``gm``
  (``E_APPROVER_NOT_ALLOWED``), ``gr`` (her rejection of the gate aborted the plan: the audit
  ``E_ILLEGAL_TRANSITION: bob@ops.example.com set status approved (from aborted)``); ``sb``
  ran from the same commit as ``gy``'s gate. check said ``start`` for ``ga``, ``gd``,
  ``gf``, ``gy``, ``sb``, ``refuse`` (``E_SELF_APPROVAL``) for ``gck``, ``none`` for ``gr``.

Should: docs/approvals.md, "Identities are compared as the mailbox they name: Unicode NFKC
..., case-insensitive, git's stripping of surrounding punctuation ..., comments ...";
"Recording committers too means that rewriting an author's commit (``--author=someone-else``,
a rebase, a cherry-pick) makes you a content changer as well"; "The index never forgets who
produced a content"; the merge's own change of a plan file: "the merger wrote only what none
of them holds"; docs/agents.md: "replace refs stay off"; "One person counts once"; Withdrawals:
a ``rejected`` is for good; ``plangate check`` "predicts what merging ``head`` into ``base``
would do"; "Gates and resumes ... still need one approval" (docs/approvals.md, Policy), judged
by the same rules (author, allowed); the audit reaches the controller's verdicts from git alone.
"""

from __future__ import annotations

import json
import os
import unicodedata
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
    Labs,
    build_all,
    cases,
    clone_audit_got,
    plan_text,
)
from test_round2_execution_kit import shared

ALIAS = "identity_aliases:\n  people: [[alice@example.com, a.smith@corp.example]]\n"
QUORUM = "rules:\n  - match: {paths: ['plans/q*/**']}\n    require: [{count: 2}]\n"
JOSE_NFC = unicodedata.normalize("NFC", "josé@ops.example.com")
JOSE_NFD = unicodedata.normalize("NFD", "josé@ops.example.com")


def _check(lab: Lab, head: str, who: str) -> str:
    told = lab.check(head, who)
    return told.stdout + told.stderr


def _blocks(lab: Lab, slugs: list[str]) -> dict[str, Any]:
    out = {}
    for s in slugs:
        try:
            a = lab.plan(s).get("approval") or {}
        except Exception as why:
            out[s] = ("unreadable", str(why)[:80], [])
            continue
        votes = sorted(str(v.get("by")) for v in a.get("approvals") or [])
        out[s] = (a.get("status"), a.get("code"), votes)
    return out


def _finish(lab: Lab, root: Path, slugs: list[str], **extra: Any) -> dict[str, Any]:
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root)
    out.update(blocks=_blocks(lab, slugs), calls={s: len(lab.calls(s)) for s in slugs}, **extra)
    return out


def _as(lab: Lab, author: tuple[str, str], message: str, committer=AGENT, trailer="") -> None:
    """Commit everything with ``author`` as author and ``committer`` as committer."""
    lab.git("add", "-A")
    lab.extra_env = {"GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1]}  # type: ignore[attr-defined]
    try:
        lab.git("commit", "-q", "--allow-empty", "-m", message + trailer, who=committer)
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]


def _retask(lab: Lab, slug: str, task: str) -> None:
    f = lab.repo / "plans" / slug / "PLAN.yml"
    lines = f.read_text().split("\n")
    lines = [f'  task: "{task}"' if ln.startswith("  task:") else ln for ln in lines]
    f.write_text("\n".join(lines))


#: lab ``id``: expected runs
SPELL = {
    "eu": ("A", "ALICE@EXAMPLE.COM"),
    "ef": ("A", "alice\uff20example.com"),
    "ed": ("A", "alice@example.com."),
    "ea": ("A", "<alice@example.com>"),
    "ei": ("A", "al\u200bice@example.com"),
    "ec": ("A", "alice(work)@example.com"),
    "el": ("A. Smith", "a.smith@corp.example"),
}
IDP = {"mr": 0, "mrb": 1, "ck": 0, "rb": 0, "ra": 0, **{s: 0 for s in SPELL}, "eo": 0,
       "en": 0, "ctl": 1, "vu": 1, "vn": 1}  # fmt: skip
JOSE_A = ("José", JOSE_NFD)
JOSE_B = ("José", JOSE_NFC)


def _conflict(lab: Lab, slug: str, resolver: tuple[str, str]) -> None:
    lab.branch(f"x-{slug}", "main")
    _retask(lab, slug, f"branch x of {slug}")
    lab.commit(f"agent: x {slug}", AGENT)
    lab.git("checkout", "-q", "main")
    _retask(lab, slug, f"main of {slug}")
    lab.commit(f"agent: m {slug}", AGENT)
    lab.git("merge", "-q", "--no-ff", f"x-{slug}", who=resolver, check=False)
    lab.git("checkout", "--ours", "--", f"plans/{slug}/PLAN.yml")
    _retask(lab, slug, f"settled by hand {slug}")
    lab.git("add", "-A")
    lab.git("commit", "-q", "--no-edit", who=resolver)


def _id(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    lab = Lab(root, approval=ALIAS)
    for s in IDP:
        if s not in ("ck", "rb", "ra"):
            lab.write(s, plan_text(s))
    lab.commit("agent: plans", AGENT)
    lab.run()
    _conflict(lab, "mr", ALICE)
    _conflict(lab, "mrb", BOB)
    # ck: Alice's commit cherry-picked by the agent
    lab.branch("ack", "main")
    lab.write("ck", plan_text("ck"))
    lab.commit("alice: ck", ALICE)
    pick = lab.head()
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", pick, who=AGENT)
    # rb: Alice's branch rebased by the agent onto main, fast-forwarded
    lab.branch("arb", "main~1")
    lab.write("rb", plan_text("rb"))
    lab.commit("alice: rb", ALICE)
    lab.git("rebase", "-q", "main", who=AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "arb")
    for s, who in SPELL.items():
        _retask(lab, s, f"respelled {s}")
        _as(lab, who, f"agent: {s}")
    _retask(lab, "eo", "co-authored")
    lab.commit("agent: eo\n\nCo-authored-by: A <ALICE@Example.Com>\n", AGENT)
    _retask(lab, "en", "jose wrote it")
    lab.commit("jose: en", JOSE_A)
    lab.run()
    # ra: Alice's plan frozen, then her commit rewritten under the agent's name
    lab.write("ra", plan_text("ra"))
    lab.commit("alice: ra", ALICE)
    alice_ra = lab.head()
    lab.run()
    frozen = (lab.repo / "plans" / "ra" / "PLAN.yml").read_text()
    lab.git("reset", "-q", "--hard", f"{alice_ra}~1")
    lab.write("ra", plan_text("ra"))
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "agent: ra", who=AGENT)
    (lab.repo / "plans" / "ra" / "PLAN.yml").write_text(frozen)
    lab.commit("agent: replay the freeze", AGENT)
    lab.run()
    lab.branch("appr", "main")
    for s in IDP:
        if s in ("vu", "vn"):
            continue
        lab.approve(s, JOSE_B if s == "en" else ALICE, f"approve {s}")
    lab.approve("vu", ("ALICE", "ALICE@EXAMPLE.COM"), "approve vu")
    lab.approve("vn", JOSE_B, "approve vn")
    lab.git("checkout", "-q", "main")
    checks = {
        "alice": _check(lab, "appr", ALICE[1]),
        "upper": _check(lab, "appr", "ALICE@EXAMPLE.COM"),
        "jose": _check(lab, "appr", JOSE_NFC),
    }
    lab.git("merge", "-q", "--ff-only", "appr")
    return _finish(lab, root, list(IDP), checks=checks)


MPP = {"mpa": 0, "mpm": 0, "rp": 0, "mpc": 1}


def _mp(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    lab = Lab(root)
    (lab.repo / ".mailmap").write_text(
        "Agent <agent@example.com> <alice@example.com>\n"
        "Alice <alice@example.com> <mallory@example.com>\n"
    )
    lab.commit("agent: mailmap", AGENT)
    lab.write("mpa", plan_text("mpa"))
    lab.commit("alice: mpa", ALICE)
    lab.write("mpm", plan_text("mpm"))
    lab.write("mpc", plan_text("mpc"))
    lab.commit("agent: plans", AGENT)
    lab.write("rp", plan_text("rp"))
    lab.commit("alice: rp", ALICE)
    x = lab.head()
    tree = lab.git("rev-parse", f"{x}^{{tree}}").strip()
    parent = lab.git("rev-parse", f"{x}~1").strip()
    xx = lab.git("commit-tree", tree, "-p", parent, "-m", "agent: rp", who=AGENT).strip()
    lab.git("replace", x, xx)
    lab.run()
    lab.approve("mpa", ALICE, "approve mpa")
    lab.approve("rp", ALICE, "approve rp")
    lab.approve("mpc", BOB, "approve mpc")
    lab.branch("mal", "main")
    lab.approve("mpm", MALLORY, "approve mpm")
    lab.git("checkout", "-q", "main")
    check = _check(lab, "mal", MALLORY[1])
    lab.git("merge", "-q", "--ff-only", "mal")
    return _finish(lab, root, list(MPP), check=check)


QMP = {"q1": 1, "s1": 1, "sa": 0, "q2": 0, "qr": 0, "qs": 0, "qf": 0, "qg": 0}
#: second votes by the first voter under another spelling, a co-author's, an alias's; and
#: ``rc``: the agent's plan rebased onto main by Alice (her committer name on it)
SECOND = {
    "qa": (ALICE, ("A. Smith", "a.smith@corp.example"), 0),
    "qb": (ALICE, ("ALICE", "ALICE@EXAMPLE.COM"), 0),
    "qn": (ALICE, ("Alice", "alice\uff20example.com"), 0),
    "qc": (BOB, None, 0),
    "qx": (BOB, ("A. Smith", "a.smith@corp.example"), 1),
}
QMP.update({s: e for s, (_a, _b, e) in SECOND.items()}, rc=0)


def _qm(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    lab = Lab(root, approval=ALIAS + QUORUM)
    for s in ("q1", "s1", "qr", "qs", "qf", *SECOND):
        lab.write(s, plan_text(s))
    lab.commit("agent: plans", AGENT)
    lab.write("sa", plan_text("sa"))
    lab.write("q2", plan_text("q2"))
    lab.commit("alice: plans", ALICE)
    lab.branch("arc", "main")
    lab.write("rc", plan_text("rc"))
    lab.commit("agent: rc", AGENT)
    lab.git("checkout", "-q", "main")
    lab.commit("agent: an empty step on main", AGENT)
    lab.git("checkout", "-q", "arc")
    lab.git("rebase", "-q", "main", who=ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "arc")
    lab.run()
    for s, (first, _second, _e) in SECOND.items():
        msg = f"approve {s}" + (
            "\n\nCo-authored-by: Carol <carol@ops.example.com>\n" if s == "qc" else ""
        )
        lab.approve(s, first, msg)
    lab.approve("rc", ALICE, "approve rc")
    lab.run()
    for s, (_first, second, _e) in SECOND.items():
        if second:
            lab.approve(s, second, f"second vote {s}")
    lab.run()
    for s in ("q1", "s1", "sa", "q2"):
        lab.set_status(s, "approved")
    lab.commit("alice: approve four", ALICE)
    lab.approve("qr", ALICE, "approve qr")
    lab.approve("qf", ALICE, "approve qf")
    lab.run()
    lab.set_status("qr", "rejected")
    lab.commit("alice: reject qr", ALICE)
    lab.run()
    lab.approve("qr", ALICE, "approve qr again")
    lab.run()
    lab.approve("qs", ALICE, "approve qs")
    lab.set_status("qs", "rejected")
    lab.commit("alice: reject qs", ALICE)
    lab.approve("qs", ALICE, "approve qs again")
    # qf: forge a second vote in the controller's list
    f = lab.repo / "plans" / "qf" / "PLAN.yml"
    text = f.read_text()
    block = lab.plan("qf").get("approval") or {}
    forged = {}
    if block.get("approvals"):
        lines = text.split("\n")
        at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("approvals:"))
        nxt = lines[at + 1]
        ind = len(nxt) - len(nxt.lstrip())
        entry = dict(block["approvals"][0])
        entry["by"] = BOB[1]
        new = [" " * ind + "- " + json.dumps(entry)]
        if lines[at].strip() != "approvals:":  # flow list: replace it
            lines[at] = lines[at][: lines[at].index("approvals:")] + "approvals:"
            new = [" " * ind + "- " + json.dumps(e) for e in block["approvals"] + [entry]]
        lines[at + 1 : at + 1] = new
        f.write_text("\n".join(lines))
        forged = lab.plan("qf").get("approval") or {}
    lab.commit("agent: record bob's vote", AGENT)
    # qg: arrives approved with a forged block
    lab.write(
        "qg",
        plan_text("qg", status="approved") + "approval:\n  status: approved\n  approvals:\n"
        f"    - {{by: {ALICE[1]}}}\n    - {{by: {BOB[1]}}}\n",
    )
    lab.commit("agent: qg", AGENT)
    lab.run()
    early = {s: len(lab.calls(s)) for s in QMP}
    lab.branch("bob", "main")
    for s in ("q1", "q2", "qr", "qs"):
        lab.approve(s, BOB, f"approve {s}")
    lab.git("checkout", "-q", "main")
    check = _check(lab, "bob", BOB[1])
    lab.git("merge", "-q", "--ff-only", "bob")
    return _finish(lab, root, list(QMP), check=check, early=early, forged=str(forged)[:300])


GATED = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
#: lab ``gt``: (action 1 runs, gated action runs)
GTP = {"ga": (1, 1), "gm": (1, 0), "gck": (1, 0), "gf": (1, 1), "gy": (1, 1), "gd": (1, 1),
       "gr": (1, 0)}  # fmt: skip
GQUORUM = "rules:\n  - match: {paths: ['plans/gf/**']}\n    require: [{count: 2}]\n"


def _gt(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    lab = Lab(root, approval=GQUORUM)
    for s in GTP:
        if s != "gck":
            lab.write(s, plan_text(s) + GATED.format(tag=s))
    lab.write("sb", plan_text("sb"))
    lab.commit("agent: gated plans", AGENT)
    lab.branch("agck", "main")
    lab.write("gck", plan_text("gck") + GATED.format(tag="gck"))
    lab.commit("alice: gck", ALICE)
    pick = lab.head()
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", pick, who=AGENT)
    lab.run()
    for s in GTP:
        lab.set_status(s, "approved")
    lab.commit("bob: approve", BOB)
    lab.run()
    lab.approve("gf", CAROL, "carol: approve gf")
    lab.run()
    lab.run()
    paused = {s: lab.plan(s)["plan"]["status"] for s in GTP}
    lab.branch("ag", "main")
    lab.approve("ga", ALICE, "alice: gate ga")
    lab.approve("gck", ALICE, "alice: gate gck")
    lab.approve("gd", ("A", "alice\uff20example.com"), "alice: gate gd")
    lab.set_status("gy", "approved")
    lab.set_status("sb", "approved")
    lab.commit("alice: gate gy and sb", ALICE)
    lab.approve("gr", ALICE, "alice: gate gr")
    lab.set_status("gr", "rejected")
    lab.commit("alice: reject gr", ALICE)
    lab.approve("gf", ALICE, "alice: gate gf")
    lab.git("checkout", "-q", "main")
    check = _check(lab, "ag", ALICE[1])
    lab.git("merge", "-q", "--ff-only", "ag")
    lab.approve("gm", MALLORY, "mallory: gate gm")
    lab.approve("gr", BOB, "bob: gate gr")
    lab.run()
    f = lab.repo / "plans" / "gf" / "PLAN.yml"
    lines = f.read_text().split("\n")
    at = [i for i, ln in enumerate(lines) if ln.strip().startswith("approvals:")]
    if at:
        nxt = lines[at[-1] + 1]
        ind = len(nxt) - len(nxt.lstrip())
        entry = {"by": BOB[1], "at": "2026-01-01T00:00:00Z", "commit": lab.head()}
        lines[at[-1] + 1 : at[-1] + 1] = [" " * ind + "- " + json.dumps(entry)]
        f.write_text("\n".join(lines))
    lab.commit("agent: record bob's gate vote", AGENT)
    out = _finish(lab, root, list(GTP), paused=paused, check=check)
    out["gated"] = {s: len(lab.calls(f"{s}-gated")) for s in GTP}
    out["calls"]["sb"] = len(lab.calls("sb"))
    return out


BUILDERS = {
    "id": (_id, IDP),
    "mp": (_mp, MPP),
    "qm": (_qm, QMP),
    "gt": (_gt, {s: e[0] for s, e in GTP.items()}),
}


def _build_all(root: Path) -> Labs:
    return build_all(root, {k: b for k, (b, _) in BUILDERS.items()}, workers=2)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r93-approve-atk93a", _build_all)


PLANS = [(n, s, e) for n, (_, d) in BUILDERS.items() for s, e in d.items()]
#: who merges the checked branch in the prediction (``--as``); the approval's own voter
VOTER = {"en": "jose", "vn": "jose", "vu": "upper"}
#: ``ra`` is held (``E_HISTORY_REWRITTEN``), which check cannot see (docs/errors.md)
NOCHECK = {
    "ra",
    "gm",
    *SECOND,
    "rc",
    "s1",
    "sa",
    "qf",
    "qg",
    "mpa",
    "rp",
    "mpc",
}  # not on the checked branch
IDS = [f"{s}:{w}" for _n, s, _ in PLANS for w in ("ran", "audit")] + [
    f"{s}:check" for _n, s, _ in PLANS if s not in NOCHECK
]
VALUES = [(n, s, e, w) for n, s, e in PLANS for w in ("ran", "audit")] + [
    (n, s, e, "check") for n, s, e in PLANS if s not in NOCHECK
]
IDS += [f"{s}:gate" for s in GTP] + ["sb:ran", "sb:check"]
VALUES += [("gt", s, e[1], "gate") for s, e in GTP.items()] + [
    ("gt", "sb", 1, "ran"),
    ("gt", "sb", 1, "check"),
]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(("labname", "slug", "want", "what"), cases(IDS, VALUES, BROKEN))
def test_round93_atk93a(lab: Any, labname: str, slug: str, want: int, what: str) -> None:
    got = lab.got[labname]
    plan = f"plans/{slug}"
    calls = got["calls"]
    blk = got["blocks"].get(slug)
    if what == "gate":  # paused at the gate first, the gated action ran only when allowed
        assert got["paused"][slug] == "awaiting_approval", got["paused"]
        assert got["gated"][slug] == want, (got["gated"], blk)
    elif what == "ran":
        assert calls[slug] == want, (calls, blk)
    elif what == "check":
        out = got["checks"][VOTER.get(slug, "alice")] if "checks" in got else got["check"]
        plans = [p for p in json.loads(out[: out.rfind("}") + 1])["plans"] if p["plan"] == plan]
        ran = got.get("gated", {}).get(slug, calls[slug])  # a gate: its gated action
        if not plans and ran == 0:  # a rejected plan: check lists nothing to start
            return
        assert plans, out[-1500:]
        assert (plans[0].get("outcome") == "start") == (ran > 0), (plans[0], calls, blk)
    else:
        report = got["report"]
        assert report.get("code") is None and got["rc"] in (0, 1), (got["rc"], str(report)[:600])
        assert (plan in got["valid"]) == (calls[slug] > 0), (got["valid"], calls)


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk93a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r93a-", dir="/tmp/atk93a"))
    got = _build_all(out).got
    for v in got.values():
        rep = v.get("report")
        if isinstance(rep, dict):
            v["report"] = {k: rep.get(k) for k in ("ok", "code", "message", "findings")}
        for k, c in dict(v.pop("checks", None) or {"check": v.pop("check", "{}")}).items():
            j = json.loads(c[: c.rfind("}") + 1])
            v[k] = [(p["plan"], p.get("outcome"), p.get("refused")) for p in j.get("plans", [])]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
