"""Round 92, approval and policy (atk92a): votes carried across a policy change, merges of
merges carrying votes, signed ``Plan-Approved:`` trailers across a key rotation and through
merges of merges, plans converted from a source somebody else wrote.

Every lab is its own repo (advkit ``Lab``), built once per module (``shared``), two at a
time. Ids: ``<slug>:ran`` counts the recording tool's calls for the plan; ``<slug>:audit``
runs ``plangate audit --json`` in a fresh clone with NO config and asserts it reads the
records (no ``code``, exit 0 or 1) and calls the plan's start valid exactly when it ran;
``<slug>:partial`` that the plan had not run after the first vote alone; ``<slug>:check``
that ``plangate check --base main --head <branch> --as <merger> --format json`` before the
merge said ``"outcome": "start"`` exactly when the plan then ran; ``<slug>:votes`` that the
controller's ``approval:`` block at HEAD holds the expected status, code and ``approvals:``
list (who it counted, against the commits that were made).

Labs ``mt``/``ml``/``mc``/``mk``/``mv`` (one plan each, ``{paths: ['plans/**']}`` needs two;
``max_age`` of 5 s): the agent's plan is frozen, Alice votes at once (``partial``), then after
7 s the config changes and Bob approves on a branch fast-forwarded into main. ``mt``: no
``max_age`` at Alice's vote, ``max_age: 5s`` at Bob's (tightened: must not run); ``ml``: 5 s
then ``1w`` (loosened: runs); ``mc`` 5 s both (control, expired); ``mk`` none (control);
``mv``: 5 s, then the limit dropped (runs). After ``mk`` and ``mv`` ran, the policy is
tightened again (``max_age: 1s``; ``mv`` also ``count: 3``) and recorded, 2 s pass, then the
audit.

Lab ``mm`` (quorum two, unsigned): ``mma`` Alice approves on branch a, Bob merges a into b,
Carol merges b into main (Alice's and Bob's are commits inside merged branches: no votes);
``mmc`` a criss-cross (Alice approves on ca, Bob on cb, Alice merges cb into ca, Bob ca into
cb, Carol merges ca, then cb); ``mmd`` (control) Alice on main, then Carol merges Bob's
approval branch (Carol's merge is the vote); ``mme`` Alice on main, then Mallory (no
approver) merges Bob's approval branch.

Lab ``sg`` (``require_signed``, ssh keys in ``allowed_signers``, the controller signs its
commits, quorum two): each plan gets signed ``Plan-Approved: plans/<p> <hash>`` trailer
commits on a branch, the agent's plain ``status: approved`` commit on it (the request, as in
the docs' worked example) and a signed ``--no-ff`` merge. ``sa`` (control) Alice's trailer,
Carol merges; ``sr`` the same but Alice's key is replaced by a new one in
``allowed_signers`` (rotated) before the merge; ``sd`` Carol's own trailer, Carol merges;
``sx`` Alice's trailers on two branches, Alice merges one into the other (signed), then
merges that into main (one person three times); ``sb`` (control) Bob's trailer on a branch
that Mallory merged (signed by Mallory's key) into another, Alice merges that into main (a
merge of merges). After the last start Alice's key is rotated for good (a policy record)
before the audit.

Lab ``cv`` (default policy): the controller converts a toon-plan ``PLAN.json`` and Alice
approves the converted ``PLAN.yml`` (a flow mapping's ``status`` value changed in place).
``cva`` Alice committed the source; ``cvb`` (control) the agent's; ``cvc`` the agent's,
Alice edited its objective before the pass; ``cvd`` Alice's source on a branch the agent
merged ``--no-ff``; ``cve`` the agent's commit with ``Co-authored-by: Alice``.

Lab ``nc`` (``{risk: high}`` needs two; the catalog tool ``hot`` is ``risk: high``): the
agent's actionplan ``PLAN.json`` sources whose step 2 is a ``nested_plan`` calling ``hot``;
the controller converts each (the child written as ``plans/<p>/step-2``, pinned). ``nca``:
Alice approves the parent alone (the child's risk must count: partial); ``ncb`` (control):
Alice, then Bob on a branch fast-forwarded: runs, the child's ``hot`` call too; ``ncc``: Bob
commits ``plans/ncc/step-2/NOTES.md`` after the conversion (a writer of the parent), then
Alice and Bob approve.

Seen (round 92): nothing broke; 93 ids held.

- ``mt``: ``plangate: partial plans/mt``, ``approval request (approve) by
  bob@ops.example.com``, ``plangate: refuse plans/mt`` with ``E_PLAN_EXPIRED``; ``ml`` and
  ``mv`` ran with ``approvals: [alice@example.com, bob@ops.example.com]``; ``mc`` refused
  ``E_PLAN_EXPIRED``; check said ``start`` for ``ml``/``mk``/``mv`` only; the audit valid for
  those three, no finding, also after the later, tighter records (``mk``/``mv``: a
  ``plangate: record policy`` after ``plangate: complete``). (First draft, dated the
  freeze three days back with ``GIT_*_DATE``: Alice's vote was already refused
  ``E_PLAN_EXPIRED`` by the controller's clock, a version refusal that keeps no vote, so
  ``ml`` stayed partial after Bob: as documented; the module uses a real 5 s window.)
- ``mm``: ``mma`` and ``mmc`` ``partial`` with ``approvals: [carol@ops.example.com]``, ``1
  more approval`` (the inner approvals counted for nothing, the criss-cross counted Carol
  once); ``mmd`` ran (Alice, Carol); ``mme`` refused ``E_APPROVER_NOT_ALLOWED`` by
  ``mallory@example.com``, Alice's vote kept.
- ``sg``: ``sa`` ran (``approvals: [alice@example.com, carol@ops.example.com]``), ``sb`` ran
  (Bob's trailer through Mallory's merge, and Alice's merge), ``sr`` partial with Carol only
  (the rotated key's trailer no longer counts), ``sd`` partial with Carol once, ``sx``
  partial with Alice once; check agreed on each; after the final rotation the fresh-clone
  audit still called ``sa``/``sb`` valid, ``{"ok": true, "findings": []}``. (Without the
  controller signing its own commits the audit flagged every record ``forged-controller``
  and ``policy-hash-mismatch``, as docs/approvals.md says for ``require_signed``.)
- ``cv``: all five converted; ``cva``, ``cvc``, ``cvd``, ``cve`` ``plangate: refuse``
  ``E_SELF_APPROVAL`` by ``alice@example.com``; ``cvb`` ran; the audit valid for ``cvb`` only.

- ``nc``: ``plangate: convert`` then ``plangate: freeze`` for each; ``nca`` ``partial``
  (``approvals: [alice@example.com]``, ``1 more approval``); ``ncb`` started with ``approvals:
  [alice@example.com, bob@ops.example.com]`` and ran ``ncb`` and ``ncb-c``; ``ncc`` refused
  ``E_SELF_APPROVAL`` by ``bob@ops.example.com``, Alice's vote kept; check ``start`` for
  ``ncb`` only (``"risk": "high"``, ``"needs": "2 approvals"``).

Should: docs/approvals.md, "What is checked": ``max_age`` is "the approving commit's time
minus the first freeze of that version"; Policy: "Each collected vote is judged again, from
its commit, under the policy in force when the next approval is decided ... by a key since
removed from ``allowed_signers`` ... no longer counts", "One person counts once and in one
entry"; "Approvals inside a pull request": "A commit *inside* a merged branch (not
first-parent) counts as an approval only when it carries the trailer ``Plan-Approved:`` ...
**and** ``git verify-commit`` accepts its signature"; "The recorded policy": "Each approval
is judged by the policy its ``start`` commit names"; ``plangate check`` "predicts what
merging ``head`` into ``base`` would do"; docs/formats.md, "Who wrote the plan": "the history
index counts the author and committer of every commit that changed the source file ... as
the plan's authors", "a commit's ``Co-authored-by:``, a source added on a merged
branch"; Policy: a plan's risk includes "the actions of the plans it nests", and "whoever
committed any file into a pinned plan's folder is a writer of the parent too".
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections.abc import Callable
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
    brief,
    build_all,
    cases,
    clone_audit_got,
    plan_text,
)
from test_round2_execution_kit import shared

QUORUM = "rules:\n  - match: {paths: ['plans/**']}\n    require: [{count: 2}]\n"


def _check(lab: Lab, head: str, who: str) -> str:
    told = lab.check(head, who)
    return told.stdout + told.stderr


def _blocks(lab: Lab, slugs: list[str]) -> dict[str, Any]:
    """The controller's ``approval:`` block of each plan at HEAD: status, code, the votes."""
    out = {}
    for s in slugs:
        a = lab.plan(s).get("approval") or {}
        votes = sorted(v.get("by") for v in a.get("approvals") or [])
        out[s] = (a.get("status"), a.get("code"), votes)
    return out


def _finish(lab: Lab, root: Path, slugs: list[str], **extra: Any) -> dict[str, Any]:
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root)
    out.update(
        blocks=_blocks(lab, slugs),
        calls={s: len(lab.calls(s)) for s in slugs},
        rows={p: brief(r) for p, r in lab.rows().items() if isinstance(r, dict)},
        **extra,
    )
    return out


WIN = 5
#: max_age labs (quorum 2): (max_age at the freeze and Alice's vote, max_age at Bob's vote
#: and the pass, expected runs). Alice votes at once; Bob after ``WIN`` + 2 s.
AGES: dict[str, tuple[str, str, int]] = {
    "mt": ("", f"max_age: {WIN}s\n", 0),  # tightened after Alice's vote: Bob's comes too late
    "ml": (f"max_age: {WIN}s\n", "max_age: 1w\n", 1),  # loosened: Bob's vote now in time
    "mc": (f"max_age: {WIN}s\n", f"max_age: {WIN}s\n", 0),  # control: expired
    "mk": ("", "", 1),  # control: no max_age
    "mv": (f"max_age: {WIN}s\n", "", 1),  # the limit dropped
}


#: a policy recorded after the start (``mk``, ``mv``): the audit still judges the start by
#: the record its ``start`` commit names
POST = {
    "mk": "max_age: 1s\n" + QUORUM,
    "mv": "max_age: 1s\nrules:\n  - match: {paths: ['plans/**']}\n    require: [{count: 3}]\n",
}


def _age(root: Path, name: str) -> dict[str, Any]:
    before, after, _ = AGES[name]
    root.mkdir(parents=True)
    lab = Lab(root, approval=before + QUORUM)
    lab.write(name, plan_text(name))
    lab.commit("agent: plan", AGENT)
    lab.run()
    t0 = time.time()
    lab.approve(name, ALICE)
    lab.run()
    alice_in = time.time() - t0 < WIN - 1
    early = {name: len(lab.calls(name))}
    partial = brief(lab.rows().get(f"plans/{name}", {}))
    time.sleep(max(0.0, t0 + WIN + 2 - time.time()))
    lab.write_config(approval=after + QUORUM)
    lab.branch("side", "main")
    lab.approve(name, BOB)
    lab.git("checkout", "-q", "main")
    check = _check(lab, "side", BOB[1])
    lab.git("merge", "-q", "--ff-only", "side")
    if name not in POST:
        return _finish(lab, root, [name], early=early, check=check, alice_in=alice_in,
                       partial=partial)  # fmt: skip
    lab.run()
    lab.run()  # started and done under the policy in force; then the policy tightens
    lab.write_config(approval=POST[name])
    time.sleep(2)
    return _finish(lab, root, [name], early=early, check=check, alice_in=alice_in,
                   partial=partial)  # fmt: skip


#: lab ``mm`` (quorum 2, unsigned): statuses that reach main only inside merged branches
MERGES = {"mma": 0, "mmc": 0, "mmd": 1, "mme": 0}


def _merge(lab: Lab, ref: str, who: tuple[str, str], msg: str) -> None:
    lab.git("merge", "-q", "--no-ff", "-m", msg, ref, who=who)


def _mm(root: Path) -> dict[str, Any]:
    """``mma``: Alice approves on branch a, Bob merges a into b, Carol merges b into main
    (only Carol's merge is a first-parent vote: partial). ``mmc``: criss-cross, Alice
    approves on a, Bob on b, a merges b (Alice), b merges a (Bob), Carol merges a then b.
    ``mmd`` (control): Alice on main, then Carol merges a branch where Bob approved... as a
    vote by Carol's merge: runs. ``mme``: Alice on main, then Mallory merges Bob's approval
    branch: Mallory is no approver, Bob's inner commit is no vote: partial."""
    root.mkdir(parents=True)
    lab = Lab(root, approval=QUORUM)
    for s in MERGES:
        lab.write(s, plan_text(s))
    lab.commit("agent: plans", AGENT)
    lab.run()
    base = lab.head()
    # mma
    lab.branch("a", base)
    lab.approve("mma", ALICE)
    lab.branch("b", base)
    _merge(lab, "a", BOB, "bob merges a")
    # mmc criss-cross
    lab.branch("ca", base)
    lab.approve("mmc", ALICE)
    lab.branch("cb", base)
    lab.approve("mmc", BOB)
    ca_tip = lab.head("ca")
    cb_tip = lab.head("cb")
    lab.git("checkout", "-q", "ca")
    _merge(lab, cb_tip, ALICE, "alice merges cb")
    lab.git("checkout", "-q", "cb")
    _merge(lab, ca_tip, BOB, "bob merges ca")
    lab.git("checkout", "-q", "main")
    lab.approve("mmd", ALICE)
    lab.approve("mme", ALICE)
    lab.run()
    early = {s: len(lab.calls(s)) for s in MERGES}
    lab.branch("d", "main")
    lab.approve("mmd", BOB)
    lab.branch("e", "main")
    lab.approve("mme", BOB)
    lab.git("checkout", "-q", "main")
    checks = {
        "mma": _check(lab, "b", CAROL[1]),
        "mmc": _check(lab, "ca", CAROL[1]),
        "mmd": _check(lab, "d", CAROL[1]),
        "mme": _check(lab, "e", MALLORY[1]),
    }
    _merge(lab, "b", CAROL, "carol merges b")
    lab.run()
    _merge(lab, "ca", CAROL, "carol merges ca")
    _merge(lab, "cb", CAROL, "carol merges cb")
    lab.run()
    _merge(lab, "d", CAROL, "carol merges d")
    _merge(lab, "e", MALLORY, "mallory merges e")
    return _finish(lab, root, list(MERGES), early=early, checks=checks)


#: lab ``sg`` (``require_signed``, quorum 2; ssh keys): votes in signed ``Plan-Approved:``
#: trailers inside merged branches
SIGNED = {"sa": 1, "sr": 0, "sd": 0, "sx": 0, "sb": 1}


def _key(lab: Lab, who: str) -> list[str]:
    return ["-c", "gpg.format=ssh", "-c", f"user.signingkey={lab.root / 'keys' / who}"]


def _trailer(lab: Lab, slug: str, who: tuple[str, str], key: str) -> None:
    digest = lab.plan(slug)["frozen"]["hash"]
    msg = f"approve plans/{slug} (trailer)\n\nPlan-Approved: plans/{slug} {digest}\n"
    lab.git(*_key(lab, key), "commit", "-q", "-S", "--allow-empty", "-m", msg, who=who)


def _smerge(lab: Lab, ref: str, who: tuple[str, str], key: str, slug: str = "") -> None:
    """``who`` merges ``ref`` (``--no-ff``), signed with ``key``; with ``slug`` the merge
    itself sets ``approved`` (the approval request)."""
    lab.git("merge", "-q", "--no-ff", "--no-commit", ref, who=who)
    if slug:
        lab.set_status(slug, "approved")
        lab.git("add", "-A")
    lab.git(*_key(lab, key), "commit", "-q", "-S", "--allow-empty", "-m", f"merge {ref}", who=who)


def _sg(root: Path) -> dict[str, Any]:
    """``sa`` (control): Alice's signed trailer on a branch, Carol's signed merge sets
    ``approved``: two people, runs. ``sr``: the same, but Alice's key is rotated (her old key
    replaced in ``allowed_signers`` by a new one) before the merge: her trailer no longer
    counts, partial. ``sd``: Carol's own trailer, then Carol's merge: one person, partial.
    ``sx``: Alice's trailers on two branches t1 and t2, t1 merges t2 (Alice, signed), Bob
    merges t2 into t1 again... and Alice's signed merge of t1 into main sets ``approved``:
    Alice once, partial. ``sb`` (control): Bob's trailer on a branch that Mallory merged
    into Alice's branch (a merge of merges), Alice's signed merge into main: runs."""
    from signkit import make_key, signed_run

    root.mkdir(parents=True)
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    ring = {n: make_key(keys, n) for n in ["alice", "alice2", "bob", "carol", "mallory", "bot"]}
    signers = root / "allowed_signers"

    def write_signers(alice_key: str) -> None:
        signers.write_text(
            f"plangate@localhost {ring['bot']}\nalice@example.com {ring[alice_key]}\n"
            f"bob@ops.example.com {ring['bob']}\n"
            f"carol@ops.example.com {ring['carol']}\nmallory@example.com {ring['mallory']}\n"
        )

    write_signers("alice")
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n" + QUORUM)
    for s in SIGNED:
        lab.write(s, plan_text(s))
    lab.commit("agent: plans", AGENT)
    signed_run(lab)
    base = lab.head()
    branches: dict[str, tuple[str, str]] = {}  # slug -> (branch, merger)
    lab.branch("r-sa", base)
    _trailer(lab, "sa", ALICE, "alice")
    branches["sa"] = ("r-sa", "carol")
    lab.branch("r-sr", base)
    _trailer(lab, "sr", ALICE, "alice")
    branches["sr"] = ("r-sr", "carol")
    lab.branch("r-sd", base)
    _trailer(lab, "sd", CAROL, "carol")
    branches["sd"] = ("r-sd", "carol")
    lab.branch("t2", base)
    _trailer(lab, "sx", ALICE, "alice")
    lab.branch("t1", base)
    _trailer(lab, "sx", ALICE, "alice")
    _smerge(lab, "t2", ALICE, "alice")
    branches["sx"] = ("t1", "alice")
    lab.branch("bb", base)
    _trailer(lab, "sb", BOB, "bob")
    lab.branch("r-sb", base)
    _smerge(lab, "bb", MALLORY, "mallory")
    branches["sb"] = ("r-sb", "alice")
    for s_, (b_, _m) in branches.items():  # the agent's status line makes each merge a request
        lab.git("checkout", "-q", b_)
        lab.approve(s_, AGENT, f"agent: request {s_}")
    lab.git("checkout", "-q", "main")
    who = {"alice": ALICE, "carol": CAROL}
    checks = {}
    for s in SIGNED:
        b, m = branches[s]
        write_signers("alice2" if s == "sr" else "alice")  # sr: Alice's key rotated
        checks[s] = _check(lab, b, who[m][1])
        _smerge(lab, b, who[m], m)
        signed_run(lab)
    write_signers("alice2")  # rotated for good after the starts: the audit reads the records
    signed_run(lab)
    signed_run(lab)
    out = clone_audit_got(lab, root)
    out.update(
        calls={s: len(lab.calls(s)) for s in SIGNED},
        blocks=_blocks(lab, list(SIGNED)),
        rows={p: brief(r) for p, r in lab.rows().items() if isinstance(r, dict)},
        early={s: 0 for s in SIGNED},
        checks=checks,
    )
    return out


TOON = (
    '{{"metadata": {{"title": "{t}", "objective": "record {t}{x}"}},'
    ' "tasks": [{{"id": "t1", "name": "T", "steps": ["s1"], "dependencies": []}}],'
    ' "steps": [{{"id": "s1", "task_id": "t1", "action": "rec", "parameters": {{"tag": "{t}"}},'
    ' "step_type": "AGENT_EXECUTION", "timeout": 30, "dependencies": []}}],'
    ' "shared_inputs": {{}}, "workflow_config": {{"parallel_execution": false}}}}\n'
)
#: lab ``cv`` (default policy): plans the controller converts from a ``PLAN.json`` source
CONVERT = {"cva": 0, "cvb": 1, "cvc": 0, "cvd": 0, "cve": 0}


def _cv(root: Path) -> dict[str, Any]:
    """``cva``: Alice commits the source, the controller converts, Alice approves (she wrote
    it). ``cvb`` (control): the agent's source, Alice approves: runs. ``cvc``: the agent's
    source, Alice edits its objective before the pass. ``cvd``: Alice's source on a branch
    the agent merges ``--no-ff``. ``cve``: Alice's source committed with the agent as author
    and Alice in a ``Co-authored-by:`` trailer."""
    root.mkdir(parents=True)
    lab = Lab(root)
    src = lab.repo / "plans"
    (src / "cva").mkdir(parents=True)
    (src / "cva" / "PLAN.json").write_text(TOON.format(t="cva", x=""))
    lab.commit("alice: a plan source", ALICE)
    (src / "cvb").mkdir()
    (src / "cvb" / "PLAN.json").write_text(TOON.format(t="cvb", x=""))
    (src / "cvc").mkdir()
    (src / "cvc" / "PLAN.json").write_text(TOON.format(t="cvc", x=""))
    lab.commit("agent: plan sources", AGENT)
    (src / "cvc" / "PLAN.json").write_text(TOON.format(t="cvc", x=" now"))
    lab.commit("alice: fix the objective", ALICE)
    lab.git("checkout", "-q", "-b", "alice-src")
    (src / "cvd").mkdir()
    (src / "cvd" / "PLAN.json").write_text(TOON.format(t="cvd", x=""))
    lab.commit("alice: cvd source", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice-src", "alice-src", who=AGENT)
    (src / "cve").mkdir()
    (src / "cve" / "PLAN.json").write_text(TOON.format(t="cve", x=""))
    lab.commit("agent: cve\n\nCo-authored-by: Alice <alice@example.com>\n", AGENT)
    lab.run()
    lab.run()
    converted = {s: (lab.repo / "plans" / s / "PLAN.yml").exists() for s in CONVERT}
    for s in CONVERT:
        if converted[s]:  # the converter writes ``plan: {..., status: "pending_approval"}``
            f = lab.repo / "plans" / s / "PLAN.yml"
            text = f.read_text()
            f.write_text(text.replace('status: "pending_approval"', 'status: "approved"', 1))
    lab.commit("alice: approve", ALICE)
    return _finish(lab, root, list(CONVERT), early={s: 0 for s in CONVERT}, converted=converted)


AP = (
    '{{"plan_version": 1, "plan_id": "plan:{t}", "title": "{t}", "workspace_id": "/ci",'
    ' "steps": [{{"step_number": 1, "step_id": "step:aaaaaaaaaaaaaaaa",'
    ' "action": {{"type": "rec", "tag": "{t}"}}, "description": "rec", "idempotent": true}},'
    ' {{"step_number": 2, "step_id": "step:bbbbbbbbbbbbbbbb", "action": {{"type": "nested_plan",'
    ' "plan": {{"plan_version": 1, "plan_id": "plan:{t}c", "title": "{t}c", "workspace_id": "/ci",'
    ' "steps": [{{"step_number": 1, "step_id": "step:1111111111111111",'
    ' "action": {{"type": "hot", "tag": "{t}-c"}}, "description": "hot", "idempotent": true}}]}}}},'
    ' "description": "child", "idempotent": true}}]}}\n'
)
RISKY = "rules:\n  - match: {risk: high}\n    require: [{count: 2}]\n"
#: lab ``nc`` (``{risk: high}`` needs two; ``hot`` is high): actionplan sources whose nested
#: step calls ``hot``; the converter writes the child as ``plans/<p>/step-2`` (pinned)
NESTCONV = {"nca": 0, "ncb": 1, "ncc": 0}


def _nc(root: Path) -> dict[str, Any]:
    """``nca``: Alice approves the converted parent alone (the child's high risk counts:
    partial). ``ncb`` (control): Alice, then Bob: runs, the child's ``hot`` call too.
    ``ncc``: Bob commits a note into the converted child's folder ``plans/ncc/step-2`` before
    the votes: a writer of the parent, so Alice then Bob stays short."""
    root.mkdir(parents=True)
    log = json.dumps(str(root / "ran.log"))
    rec = json.dumps([sys.executable, str(root / "rec.py"), "{tag}"])
    lab = Lab(
        root,
        approval=RISKY,
        tools=f"hot: {{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}, risk: high}}\n",
    )
    for t in NESTCONV:
        (lab.repo / "plans" / t).mkdir(parents=True)
        (lab.repo / "plans" / t / "PLAN.json").write_text(AP.format(t=t))
    lab.commit("agent: sources", AGENT)
    lab.run()
    lab.run()
    converted = {t: (lab.repo / "plans" / t / "PLAN.yml").exists() for t in NESTCONV}
    (lab.repo / "plans" / "ncc" / "step-2" / "NOTES.md").write_text("looks fine\n")
    lab.commit("bob: a note on the child", BOB)
    lab.run()
    for t in NESTCONV:
        f = lab.repo / "plans" / t / "PLAN.yml"
        f.write_text(f.read_text().replace('status: "pending_approval"', 'status: "approved"', 1))
    lab.commit("alice: approve", ALICE)
    lab.run()
    early = {t: len(lab.calls(t)) for t in NESTCONV}
    lab.branch("side", "main")
    for t in ("ncb", "ncc"):
        f = lab.repo / "plans" / t / "PLAN.yml"
        f.write_text(f.read_text().replace('status: "pending_approval"', 'status: "approved"', 1))
    lab.commit("bob: approve", BOB)
    lab.git("checkout", "-q", "main")
    check = _check(lab, "side", BOB[1])
    lab.git("merge", "-q", "--ff-only", "side")
    out = _finish(lab, root, list(NESTCONV), early=early, check=check, converted=converted)
    out["child"] = {t: len(lab.calls(f"{t}-c")) for t in NESTCONV}
    return out


def _build_all(root: Path) -> Labs:
    builders: dict[str, Callable[[Path], Any]] = {
        **{name: functools.partial(_age, name=name) for name in AGES},
        "mm": _mm, "sg": _sg, "cv": _cv, "nc": _nc,
    }  # fmt: skip
    return build_all(root, builders, workers=2)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r92-approve-atk92a", _build_all)


PLANS: list[tuple[str, str, int]] = (
    [(a, a, AGES[a][2]) for a in AGES]
    + [("mm", s, n) for s, n in MERGES.items()]
    + [("sg", s, n) for s, n in SIGNED.items()]
    + [("cv", s, n) for s, n in CONVERT.items()]
    + [("nc", s, n) for s, n in NESTCONV.items()]
)
PARTIAL = [(a, a) for a in AGES] + [("mm", s) for s in MERGES] + [("nc", s) for s in ("ncb", "ncc")]
A, B, C = ALICE[1], BOB[1], CAROL[1]
#: the ``approval:`` block the controller left: (status, code, the votes it lists)
BLOCKS: dict[str, tuple[str, str | None, list[str]]] = {
    "mt": ("refused", "E_PLAN_EXPIRED", []),
    "ml": ("approved", None, [A, B]),
    "mc": ("refused", "E_PLAN_EXPIRED", []),
    "mk": ("approved", None, [A, B]),
    "mv": ("approved", None, [A, B]),
    "mma": ("partial", None, [C]),
    "mmc": ("partial", None, [C]),
    "mmd": ("approved", None, [A, C]),
    "mme": ("refused", "E_APPROVER_NOT_ALLOWED", [A]),
    "sa": ("approved", None, [A, C]),
    "sr": ("partial", None, [C]),
    "sd": ("partial", None, [C]),
    "sx": ("partial", None, [A]),
    "sb": ("approved", None, [A, B]),
    "cva": ("refused", "E_SELF_APPROVAL", []),
    "cvb": ("approved", None, []),
    "cvc": ("refused", "E_SELF_APPROVAL", []),
    "cvd": ("refused", "E_SELF_APPROVAL", []),
    "cve": ("refused", "E_SELF_APPROVAL", []),
    "nca": ("partial", None, [A]),
    "ncb": ("approved", None, [A, B]),
    "ncc": ("refused", "E_SELF_APPROVAL", [A]),
}
CHECKS = (
    [(a, a) for a in AGES]
    + [("mm", s) for s in MERGES]
    + [("sg", s) for s in SIGNED]
    + [("nc", s) for s in ("ncb", "ncc")]  # nca: not on the branch
)
IDS = (
    [f"{s}:{w}" for _n, s, _ in PLANS for w in ("ran", "audit")]
    + [f"{s}:partial" for _n, s in PARTIAL]
    + [f"{s}:check" for _n, s in CHECKS]
    + [f"{s}:votes" for _n, s, _ in PLANS]
)
VALUES = (
    [(n, s, e, w) for n, s, e in PLANS for w in ("ran", "audit")]
    + [(n, s, 0, "partial") for n, s in PARTIAL]
    + [(n, s, 0, "check") for n, s in CHECKS]
    + [(n, s, 0, "votes") for n, s, _ in PLANS]
)
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(("labname", "slug", "want", "what"), cases(IDS, VALUES, BROKEN))
def test_round92_atk92a(lab: Any, labname: str, slug: str, want: int, what: str) -> None:
    got = lab.got[labname]
    plan = f"plans/{slug}"
    row = got["rows"].get(plan)
    calls = got["calls"]
    if what == "ran":
        assert calls[slug] == want, (calls, row)
    elif what == "partial":
        assert got["early"][slug] == 0, (got["early"], row)
    elif what == "votes":  # who the controller says voted, and its code
        assert tuple(got["blocks"][slug]) == BLOCKS[slug], (got["blocks"][slug], row)
    elif what == "check":  # check --as the merger predicted ``start`` exactly when it ran
        out = got["checks"][slug] if "checks" in got else got["check"]
        plans = [p for p in json.loads(out[: out.rfind("}") + 1])["plans"] if p["plan"] == plan]
        assert plans, out[-1500:]
        assert (plans[0].get("outcome") == "start") == (calls[slug] > 0), (plans[0], calls, row)
    else:
        report = got["report"]
        assert report.get("code") is None and got["rc"] in (0, 1), (got["rc"], str(report)[:600])
        assert (plan in got["valid"]) == (calls[slug] > 0), (got["valid"], calls)


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk92a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r92a-", dir="/tmp/atk92a"))
    got = _build_all(out).got
    for v in got.values():
        rep = v.get("report")
        if isinstance(rep, dict):
            v["report"] = {k: rep.get(k) for k in ("ok", "code", "message", "findings", "notes")}
        for k in ("check",):
            if k in v:
                v[k] = v[k][-1500:]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
