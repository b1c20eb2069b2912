"""Round 116, approval and policy (atk116a): round 115's unreproduced lead (a rejection
AUTHORED by Mallory and COMMITTED by Alice, or by ``bob+r@ops``, under ``approval.identity:
committer``, ignored; a later approval ran the plan) chased down, then withdrawals, aborts,
quorum votes, merges, fast-forwards and cherry-picks whose author and committer disagree,
with the author date set at, before and after the version's freeze (or the run's pause).

Lab (one, local mode, ``identity: committer``, the policy of round 115): approvers Alice,
``*@ops.example.com``, ``sec@example.com``; groups ``ops`` and ``security``;
``identity_aliases`` plus tags of ``*@ops.example.com`` and people ``[alice@example.com,
a.smith@corp.example]``; rules: ``risk: high`` two of ops and one of security,
``plans/q*/**`` two approvals. The Owner writes every plan. Pass A freezes them all in one
batched ``freeze`` commit at second F. Round B (one push, one ``run --once``): the
withdrawals, quorum first votes, gate starts; round C: abort requests at the gate's pause
(second P), quorum rejections; round D: Bob approves every withdrawn plan, answers every gate,
Carol gives the quorum's second vote. Dates are set with ``GIT_AUTHOR_DATE`` (``@F``,
``@F-86400``, ``@F+1``): no sleeps, the outcome does not depend on how fast the bench is.

Ids: ``<vid>`` (``rec`` calls of the vid's tag at the end: 0 for a withdrawn plan, 1 for a
control that runs), ``<vid>:status`` (the status row at the end: ``rejected``/``aborted``, or
``completed`` for a control that runs), ``<vid>:audit`` (the fresh-clone ``audit --json``, no
config, calls a start valid iff the controller ran it, and none of a withdrawn plan or a
gate answered after an abort), ``<vid>:decision`` (the fresh-clone audit lists the
withdrawal under ``decisions`` iff it must count), ``<vid>:by`` (it names the COMMITTER, in
some spelling of that person, as the maker), ``<vid>:note`` (the status row's notes name the
committer, never the author, as the decision's maker), ``dm*`` and ``dm*:status`` (phase E:
the daemon ``plangate run`` watching the tree, no date pinned: withdrawals made on side
branches before the daemon froze the plans, cherry-picked or rebased by an approver right
after the freeze, then approvals), ``daemon`` (the daemon saw every step and stopped on
SIGTERM without a traceback), ``passes`` (every ``run --once`` exited 0, no traceback).

Variants: rejections authored by Mallory (or Carol) and committed by Alice, ``bob+r@ops``,
``ALICE@EXAMPLE.COM``, ``a.smith@corp.example`` (people alias), Sec, the plan's author, Bob,
dated at the freeze's second (``rjss*``), a second or a day before (``rjpast1``,
``rjpast``), a second after (``rjlater``, control); Alice's own (``rjself``, ``rjselfpast``);
Mallory committing Alice's authored rejection (``rjmal``, ``rjmalss``: must NOT count);
the same on a branch merged ``--no-ff`` by Alice (``rjmrg``) or by Mallory (``rjmrgm``),
fast-forwarded (``rjff``), Mallory's own commit picked by Alice (``rjcp``) or merged by Alice
(``rjmm``); quorum plans voted by Alice then rejected (``qrjss``, ``qrjlater``); gate runs
aborted at the pause's second, a day before, a second after (``abss``, ``abpast``,
``ablater``); approvals authored by Mallory committed by Alice at and before the freeze
(``apss``, ``appast``); approval and rejection in one push in both orders (``pushrj``,
``pushrjl``, ``pushrb``); reverts of a counted rejection by Mallory and by Alice (``rvrj``,
``rvrjself``); an octopus by Alice of Bob's and Sec's unsigned branch approvals on a
high-risk plan (``hoct``); the high tool only in a fallback (``rkfb``) or only in a pinned
nested plan (``rknest``); a version Alice rejected copied by the agent and approved by Bob
(``wdcopy``).

Seen (round 116, 169 ids, 78 passed, 91 xfailed; ~35-45 s wall alone at -n 0 or -n 2, ~80 s
with three copies of the module running at once on 2 cores), 2 classes:

- **committer-withdrawal-read-as-replay** (82 ids: ``rjss``, ``rjssplus``, ``rjsscase``,
  ``rjssalias``, ``rjsssec``, ``rjssown``, ``rjssbob``, ``rjpast``, ``rjpast1``, ``rjff``,
  ``rjcp``, ``qrjss``, ``abss``, ``abpast`` with ``:status``/``:audit``/``:decision``/``:by``;
  ``pushrj``, ``pushrb`` with ``:status``/``:audit``; ``dmpick``, ``dmcarol``, ``dmrebase``
  with ``:status``). Under ``identity: committer`` a rejection or an abort request
  COMMITTED on the first-parent line (or fast-forwarded) by an allowed approver or the
  plan's author, but AUTHORED by someone else with an author date not after the version's
  freeze (or the run's pause), is read as round 109's "withdrawal of an earlier version
  brought back by another hand": ``E_APPROVAL_REPLAYED: mallory@example.com set status
  rejected in <sha>, written before this version of the plan (or this pause of its run) came
  to be and committed by another hand than its author's ...; ignored``. Bob's later approval
  runs the plan (``pushrb``: in the very pass of the rejection), a gate answer runs the
  aborted run's next action, Carol's vote completes a rejected quorum, and the fresh-clone
  audit calls those runs valid (and flags the rejection ``withdraw-not-allowed``). With the
  daemon and no date pinned, Alice's ``git cherry-pick`` or rebase of a rejection written
  before the daemon froze the plan is enough. Round 115's two flaky ids (``rjcom``,
  ``rjcomplus``) are this class: its phase B was written in the second of pass A's freeze
  when the bench ran fast. The SPEC makes the committer the approver under ``committer``,
  docs/approvals.md says the same-second rule never applies to approvals in that mode ("the
  committer is the approver, so never"), round 109 says "her own cherry-pick or rebase of it
  is her decision now and counts", and the same commit on a merged branch DOES count
  (``rjmrg``, ``rjmrgm`` hold): only the line's withdrawal path reads the author.
- **committer-mode-maker-named-as-author** (9 ids: ``rjlater:by``, ``qrjlater:by``,
  ``ablater:by``, ``rjmrgm:by``, ``apss:note``, ``rjlater:note``, ``qrjlater:note``,
  ``ablater:note``, ``rjmal:note``). The decisions are judged right (by the committer), but
  the fresh-clone audit's ``decisions`` name the AUTHOR as the maker (``by:
  mallory@example.com`` for Alice's counted rejection), and the status row's notes do too:
  ``approval request (approve) by mallory@example.com`` for Alice's approval that ran,
  ``mallory@example.com set status rejected`` for Alice's rejection, ``abort requested by
  mallory@example.com``, and for Mallory's refused rejection (authored by Alice)
  ``E_APPROVER_NOT_ALLOWED: alice@example.com set status rejected ..., but only an allowed
  approver or an author of the plan may`` (Alice is an allowed approver).

What held: every control (author date after the freeze, the approver's own authored commit
at any date, Mallory committing Alice's authored rejection is ignored with
``E_APPROVER_NOT_ALLOWED``), merges of a committer-split rejection (``--no-ff`` by Alice or
Mallory), Alice's merge of Mallory's own rejection, an approval authored by Mallory in the
freeze's second and committed by Alice (Alice's, runs once; one dated a day back is refused
``E_APPROVAL_REPLAYED``, the safe side), reverts of a counted rejection, the octopus (one
vote: Alice's), risk from a fallback or a nested plan (``frozen.risk: high``, a lone approval
stays partial), a withdrawn version copied (``E_VERSION_WITHDRAWN``).

Suspected, not asserted: in ``identity: author`` mode the same round-109 rule ignores a
rejection authored by Carol (an approver) in the freeze's second and committed by Bob (an
approver too), or committed by a forge, and the plan runs on the next approval; round 109
documents the rule, so this is a design question (fail-open for withdrawals), not counted.

Not tried: remote mode, signed withdrawals and ``Plan-Approved:`` trailers under
``identity: committer``, resumes of a ``failed`` run aborted under this class, ``check``.

Changed (2026-12-06, round 120 merged-rejection-charged-to-merger, fix121c merged as
fix122c): ``rjmm`` (Mallory's own commit setting ``rejected`` on a branch, authored and
committed by her, merged ``--no-ff`` by Alice) counts for nothing: a rejection a merged
commit made is that commit's, judged by the withdrawal rule (here by its committer,
Mallory), never the merger's (docs/approvals.md: "the merge of a branch where Mallory set
``rejected`` counts for nothing"). Bob's later approval runs the plan; no decision is listed,
and ``rjmm:by`` is gone (only counted withdrawals have a maker to check). ``rjmrgm``
(committed by Alice on the branch) still counts, as Alice's.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_round2_execution_kit import shared

from tests.adversarial.advkit import (
    ALICE,
    BOB,
    CAROL,
    MALLORY,
    BenchError,
    Lab,
    brief,
    clone_audit_got,
    plan_text,
    until,
)

OWNER = ("Owner", "owner@example.com")
SEC = ("Sec", "sec@example.com")
ASMITH = ("A. Smith", "a.smith@corp.example")
BOBR = ("Bob R", "bob+r@ops.example.com")
ALICE_UC = ("Alice", "ALICE@EXAMPLE.COM")

CLS = "committer-withdrawal-read-as-replay"


def _config(lab: Lab) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "*@ops.example.com", "sec@example.com"]\n'
        "  identity: committer\n"
        '  groups: {ops: ["alice@example.com", "*@ops.example.com"], '
        'security: ["sec@example.com"]}\n'
        "  identity_aliases:\n"
        '    plus_tags: ["*@ops.example.com"]\n'
        "    people: [[alice@example.com, a.smith@corp.example]]\n"
        "  rules:\n"
        "    - match: {risk: high}\n"
        "      require: [{group: ops, count: 2}, {group: security, count: 1}]\n"
        '    - match: {paths: ["plans/q*/**"]}\n      require: [{count: 2}]\n'
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  hi: {{kind: exec, argv: {rec}, {env}, risk: high}}\n"
        "  echo: {kind: echo}\n"
    )


#: rejection vids (round B): vid -> (author, committer, author-date offset from F or None
#: for the clock, counts: whether the rejection must withdraw the plan)
REJECTS: dict[str, tuple[tuple[str, str], tuple[str, str], int | None, bool]] = {
    # the round 115 lead, pinned to the freeze's second
    "rjss": (MALLORY, ALICE, 0, True),  # authored Mallory @F, committed Alice
    "rjssplus": (MALLORY, BOBR, 0, True),  # committed by bob+r@ops (plus tag of Bob)
    "rjsscase": (MALLORY, ALICE_UC, 0, True),  # committed by ALICE@EXAMPLE.COM
    "rjssalias": (MALLORY, ASMITH, 0, True),  # committed by Alice's people alias
    "rjsssec": (MALLORY, SEC, 0, True),  # committed by Sec (an approver in no ops group)
    "rjssown": (MALLORY, OWNER, 0, True),  # committed by the plan's author (withdraws it)
    "rjssbob": (CAROL, BOB, 0, True),  # authored by Carol (an approver too), committed Bob
    "rjpast": (MALLORY, ALICE, -86400, True),  # authored a day before the freeze
    "rjpast1": (MALLORY, ALICE, -1, True),  # authored a second before the freeze
    # controls
    "rjlater": (MALLORY, ALICE, 1, True),  # authored a second after the freeze: counts
    "rjself": (ALICE, ALICE, 0, True),  # Alice authors and commits in the freeze second
    "rjselfpast": (ALICE, ALICE, -86400, True),  # her own commit dated a day back: hers
    "rjmal": (ALICE, MALLORY, None, False),  # committed by Mallory: not allowed, ignored
    "rjmalss": (ALICE, MALLORY, 0, False),  # the same in the freeze second
}
#: merged withdrawals (round B): a branch holds Mallory's rejection authored @F, committed
#: by Alice; ``rjmrg`` merged --no-ff by Alice, ``rjff`` fast-forwarded by Alice,
#: ``rjcp`` Mallory's own commit on a side branch cherry-picked onto main by Alice
#: rjmm: Mallory's own commit @F, Alice merges; rjmrgm: authored Mallory @F, committed
#: Alice, on a branch Mallory merges --no-ff
MERGED = ["rjmrg", "rjff", "rjcp", "rjmm", "rjmrgm"]
#: quorum plans (path ``q*``): Alice votes in B, a rejection authored Mallory @F committed by
#: Bob in C, Carol votes in D
QUORUM = {"qrjss": 0, "qrjlater": 1}
#: gate plans: Bob starts in B, the run pauses at action 2; in C an abort request authored by
#: Mallory at the pause's second P (or P+1) committed by Alice; in D Bob answers the gate
GATES = {"abss": 0, "ablater": 1, "abpast": -86400}
#: approvals (round B) under committer mode: authored by Mallory in the freeze second,
#: committed by Alice: Alice's approval (docs: the same-second rule never applies), runs once
APPROVALS = {"apss": 0, "appast": -86400}

WITHDRAWN = [*REJECTS, *MERGED, *QUORUM, *GATES]
_ALICE = {"alice@example.com"}
#: who the fresh-clone audit's ``decisions`` may name as the withdrawal's maker (its
#: committer, in any spelling the policy makes one person), per withdrawal that counts
WHO: dict[str, set[str]] = {
    **{v: _ALICE for v in [*MERGED, *GATES]},
    **{v: {"bob@ops.example.com"} for v in QUORUM},
    "rjssplus": {"bob+r@ops.example.com", "bob@ops.example.com"},
    "rjssalias": {"a.smith@corp.example", "alice@example.com"},
    "rjsssec": {"sec@example.com"},
    "rjssown": {"owner@example.com"},
    "rjssbob": {"bob@ops.example.com"},
}
for _v, (_a, _by, _o, _counts_it) in REJECTS.items():
    WHO.setdefault(_v, {_by[1].lower()} if _counts_it else set())
#: more families: vid -> (calls wanted at the end, status wanted at the end)
EXTRA: dict[str, tuple[int, str]] = {
    # approvals and rejections in one push: Alice approves, then a rejection authored by
    # Mallory committed by Bob (@F: the class above; @F+1: counts); Carol approves in D
    "pushrj": (0, "rejected"),
    "pushrjl": (0, "rejected"),
    # the rejection (authored by Mallory @F, committed by Alice) then Bob's approval, one push
    "pushrb": (0, "rejected"),
    # a version Alice rejected (authored by Mallory after the freeze), copied by the agent to
    # plans/wdcopy2 and approved there by Bob: E_VERSION_WITHDRAWN, nothing runs
    "wdcopy": (0, "rejected"),
    # reverts of a counted rejection: by Mallory, by Alice herself; Bob approves in D
    "rvrj": (0, "rejected"),
    "rvrjself": (0, "rejected"),
    # merges whose parents carry the approvals: a high-risk plan (two ops, one security),
    # Bob's and Sec's unsigned approvals on two branches, Alice's octopus merge: one vote
    "hoct": (0, "pending_approval"),
    # risk tiers: the high tool only in a fallback; only inside a pinned nested plan;
    # Alice's lone approval must not run either (two ops and one security needed)
    "rkfb": (0, "pending_approval"),
    "rknest": (0, "pending_approval"),
}
VIDS = [*WITHDRAWN, *APPROVALS, *EXTRA]


RKFB = """\
plan:
  name: rkfb
  task: "a high-risk tool only in a fallback"
  status: pending_approval
available_tools:
  - name: rec
  - name: hi
actions:
  - id: 1
    tool: rec
    why: "record that variant rkfb ran"
    params:
      tag: "rkfb"
    on_failure: fallback
    fallback:
      - {id: "1.1", tool: hi, why: "fallback", params: {tag: "rkfb-fb"}}
"""


def _nest(child_hash: str) -> str:
    return (
        'plan:\n  name: rknest\n  task: "pins a high-risk child"\n'
        "  status: pending_approval\n"
        "available_tools:\n  - name: rec\n"
        "actions:\n"
        f'  - id: 1\n    plan: {{path: plans/rkchild, hash: "{child_hash}"}}\n'
        '    why: "the child"\n'
        '  - id: 2\n    tool: rec\n    why: "record rknest"\n    params:\n'
        '      tag: "rknest"\n'
    )


def _plan(slug: str) -> str:
    if slug == "rkfb":
        return RKFB
    if slug == "hoct":
        return (
            plan_text(slug)
            .replace("- name: rec\n", "- name: hi\n")
            .replace("tool: rec\n", "tool: hi\n")
        )
    gate = (
        '  - id: 2\n    tool: rec\n    why: "second, gated"\n    requires_approval: true\n'
        f'    params:\n      tag: "{slug}-2"\n'
    )
    return plan_text(slug, extra_actions=gate if slug in GATES else "")


def _c2(
    lab: Lab,
    msg: str,
    author: tuple[str, str],
    committer: tuple[str, str],
    adate: int | None = None,
) -> str:
    """Commit everything with ``author`` and ``committer`` set apart, the author date
    ``adate`` (an epoch second) when given, the committer date the clock's."""
    lab.git("add", "-A")
    env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
    if adate is not None:
        env["GIT_AUTHOR_DATE"] = f"@{adate} +0000"
    lab.extra_env = env
    try:
        lab.git("commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", msg, who=author)
    finally:
        lab.extra_env = {}
    return lab.head()


def _event_time(lab: Lab, slug: str, event: str) -> int:
    out = lab.git(
        "log", "--format=%ct%x00%B%x01", "--author=plangate@localhost", "--", f"plans/{slug}"
    )
    for row in out.split("\x01"):
        if not row.strip():
            continue
        when, body = row.strip("\n").split("\x00", 1)
        if f"plangate: {event} " in body or f"Plan-Event: {event}" in body:
            return int(when)
    raise AssertionError(f"no {event} commit of plans/{slug}: {out[:600]}")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    passes: list[tuple[str, int, bool, str]] = []
    lab.passes = passes  # type: ignore[attr-defined]

    def step(phase: str) -> None:
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))

    def setc(v: str, status: str, who: tuple[str, str], by: tuple[str, str], adate: int | None):
        lab.set_status(v, status)
        return _c2(lab, f"{who[0]}: {status} {v}", who, by, adate)

    _config(lab)
    for v in VIDS:
        if v != "rknest":
            lab.write(v, _plan(v))
    lab.write("rkchild", plan_text("rkchild").replace("- name: rec\n", "- name: hi\n").replace(
        "tool: rec\n", "tool: hi\n"))  # fmt: skip
    told = lab.cli("hash", str(lab.repo / "plans/rkchild/PLAN.yml"), "--config", str(lab.config))
    got["child_hash"] = told.stdout.strip().split()[-1] if told.stdout.strip() else told.stderr
    lab.write("rknest", _nest(got["child_hash"]))
    lab.commit("owner: plans", OWNER)
    step("a")
    freeze = {v: _event_time(lab, v, "freeze") for v in VIDS}
    got["freeze"] = freeze

    # -- B: withdrawals, first votes, starts (one push) ------------------------------------
    for v, (who, by, off, _c) in REJECTS.items():
        setc(v, "rejected", who, by, None if off is None else freeze[v] + off)
    for v in QUORUM:
        setc(v, "approved", ALICE, ALICE, None)
    for v in GATES:
        setc(v, "approved", BOB, BOB, None)
    for v, off in APPROVALS.items():
        setc(v, "approved", MALLORY, ALICE, freeze[v] + off)
    # rjmrg: a branch holding the rejection, merged --no-ff by Alice
    lab.branch("pr-rjmrg")
    setc("rjmrg", "rejected", MALLORY, ALICE, freeze["rjmrg"])
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-rjmrg", "pr-rjmrg", who=ALICE)
    # rjff: the same, fast-forwarded
    lab.branch("pr-rjff")
    setc("rjff", "rejected", MALLORY, ALICE, freeze["rjff"])
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "pr-rjff", who=ALICE)
    # rjcp: Mallory's own rejection on a side branch, cherry-picked by Alice
    lab.branch("pr-rjcp")
    x = setc("rjcp", "rejected", MALLORY, MALLORY, freeze["rjcp"])
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", x, who=ALICE)
    # one push: Alice's approval, then a rejection authored by Mallory committed by Bob
    setc("pushrj", "approved", ALICE, ALICE, None)
    setc("pushrj", "rejected", MALLORY, BOB, freeze["pushrj"])
    setc("pushrjl", "approved", ALICE, ALICE, None)
    setc("pushrjl", "rejected", MALLORY, BOB, freeze["pushrjl"] + 1)
    setc("pushrb", "rejected", MALLORY, ALICE, freeze["pushrb"])
    setc("pushrb", "approved", BOB, BOB, None)
    # rjmm: Mallory's own rejection @F on a branch, merged --no-ff by Alice
    lab.branch("pr-rjmm")
    setc("rjmm", "rejected", MALLORY, MALLORY, freeze["rjmm"])
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-rjmm", "pr-rjmm", who=ALICE)
    lab.branch("pr-rjmrgm")
    setc("rjmrgm", "rejected", MALLORY, ALICE, freeze["rjmrgm"])
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-rjmrgm", "pr-rjmrgm", who=MALLORY)
    # wdcopy: rejected by Alice (authored by Mallory a second after the freeze)
    setc("wdcopy", "rejected", MALLORY, ALICE, freeze["wdcopy"] + 1)
    # reverts of a rejection
    x = setc("rvrj", "rejected", ALICE, ALICE, None)
    lab.git("revert", "--no-edit", x, who=MALLORY)
    x = setc("rvrjself", "rejected", ALICE, ALICE, None)
    lab.git("revert", "--no-edit", x, who=ALICE)
    # hoct: Bob's and Sec's approvals on two branches, Alice's octopus merge
    base = lab.head()
    lab.branch("pr-hoct-b", base)
    setc("hoct", "approved", BOB, BOB, None)
    lab.branch("pr-hoct-s", base)
    setc("hoct", "approved", SEC, SEC, None)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "octopus", "pr-hoct-b", "pr-hoct-s", who=ALICE)
    setc("rkfb", "approved", ALICE, ALICE, None)
    setc("rknest", "approved", ALICE, ALICE, None)
    step("b")
    got["rows_b"] = lab.rows()

    # -- C: abort requests at the pause, quorum rejections ----------------------------------
    pause = {}
    for v, off in GATES.items():
        try:
            pause[v] = _event_time(lab, v, "await-approval")
        except AssertionError:
            continue
        setc(v, "aborted", MALLORY, ALICE, pause[v] + off)
    got["pause"] = pause
    for v, off in QUORUM.items():
        setc(v, "rejected", MALLORY, BOB, freeze[v] + off)
    copy = lab.read("wdcopy")
    lab.write("wdcopy2", copy.replace("  status: rejected", "  status: pending_approval", 1))
    lab.commit("agent: copy wdcopy", ("Agent", "agent@example.com"))
    step("c")
    got["rows_c"] = lab.rows()

    # -- D: Bob approves every withdrawn plan, answers every gate; Carol's quorum vote --------
    for v in [*REJECTS, *MERGED, *GATES]:
        setc(v, "approved", BOB, BOB, None)
    for v in QUORUM:
        setc(v, "approved", CAROL, CAROL, None)
    for v in ("pushrj", "pushrjl"):
        setc(v, "approved", CAROL, CAROL, None)
    for v in ("rvrj", "rvrjself", "wdcopy2"):
        setc(v, "approved", BOB, BOB, None)
    step("d")
    got["risk"] = {
        v: ((lab.plan(v).get("frozen") or {}).get("risk")) for v in ("rkfb", "rknest", "hoct")
    }
    got["child_ran"] = len(lab.calls("rkchild"))

    _daemon_phase(lab)
    lab.ran = {v: len(lab.calls(v)) for v in VIDS}  # type: ignore[attr-defined]
    got["gate_ran"] = {v: len(lab.calls(f"{v}-2")) for v in GATES}
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    got["wdcopy2"] = lab.codes("wdcopy2")
    got["clone"] = clone_audit_got(lab, root)
    return lab


#: the daemon phase: plan -> (who makes the withdrawal on a side branch before the daemon
#: freezes the plan, who picks it onto main after the freeze (None: the plan's approver
#: approves instead), who approves afterwards, calls wanted at the end)
DAEMON: dict[str, tuple[tuple[str, str] | None, tuple[str, str] | None, tuple[str, str], int]] = {
    "dmrebase": (MALLORY, ALICE, BOB, 0),  # Mallory's rejection rebased by Alice, fast-forwarded
    "dmpick": (MALLORY, ALICE, BOB, 0),  # Mallory's rejection, picked by Alice
    "dmcarol": (CAROL, BOB, ALICE, 0),  # Carol's (an approver) rejection, picked by Bob
    "dmown": (None, ALICE, BOB, 0),  # control: Alice's own rejection after the freeze
    "dmrun": (None, None, ALICE, 1),  # control: Alice approves in the same push
}
WORKTREE = Path(__file__).resolve().parents[2]


def _commit_plan(lab: Lab, slug: str, msg: str, who: tuple[str, str]) -> str:
    """``who`` commits ``plans/<slug>/PLAN.yml`` alone (a daemon shares the working tree)."""
    lab.git("add", f"plans/{slug}/PLAN.yml")
    lab.git("commit", "-q", "-m", msg, "--", f"plans/{slug}/PLAN.yml", who=who)
    return _mine(lab, slug, who)


def _mine(lab: Lab, slug: str, who: tuple[str, str]) -> str:
    """The newest commit ``who`` committed on the plan (HEAD may already be the daemon's)."""
    return lab.git(
        "log", "-1", "--format=%H", f"--committer={who[1]}", "--", f"plans/{slug}"
    ).strip()


def _git_clean(lab: Lab, *args: str, who: tuple[str, str]) -> None:
    """``git *args`` as ``who``, again while the daemon's own write holds the index (git
    refuses a rebase or pick over staged changes: the person waits and runs it again)."""
    why = ""
    for _ in range(600):
        res = subprocess.run(
            ["git", *args], cwd=lab.repo, env=lab.env(who), capture_output=True, text=True
        )
        if res.returncode == 0:
            return
        why = res.stderr
        if not any(w in why for w in ("uncommitted", "local changes", "index.lock", "lock")):
            break
        subprocess.run(["git", "rebase", "--abort"], cwd=lab.repo, env=lab.env(), check=False,
                       capture_output=True)  # fmt: skip
        until(lambda: False, timeout=0.2)
    raise BenchError(f"git {' '.join(args)} failed: {why}")


def _note_of(lab: Lab, slug: str, sha: str) -> bool:
    row = lab.rows().get(f"plans/{slug}", {})
    return row.get("status") == "completed" or any(sha[:12] in n for n in row.get("notes") or [])


def _daemon_phase(lab: Lab) -> None:
    """The daemon (``plangate run``) watching the tree: plans pushed at once, withdrawals
    made before the freeze on side branches brought in by an approver's cherry-pick or
    rebase right after the daemon froze them, then approvals; no date pinned."""
    got = lab.got  # type: ignore[attr-defined]
    for v in DAEMON:
        lab.write(v, plan_text(v))
    lab.commit("owner: daemon plans", OWNER)
    base = lab.head()
    side: dict[str, str] = {}
    for v, (maker, _picker, _later, _w) in DAEMON.items():
        if maker is None:
            continue
        lab.branch(f"side-{v}", base)
        lab.set_status(v, "rejected")
        side[v] = _commit_plan(lab, v, f"{maker[0]}: reject {v}", maker)
    lab.git("checkout", "-q", "main")
    env = {**lab.env(), "PYTHONPATH": str(WORKTREE), "REC_LOG": str(lab.log)}
    err = open(lab.root / "daemon.err", "wb")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
        cwd=lab.root, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
    )  # fmt: skip
    try:
        frozen = until(
            lambda: all(f"plans/{v}" in lab.git("log", "-1", "--format=%B", "--author=plangate@",
                                                 "--", f"plans/{v}") for v in DAEMON),
            timeout=240, step=0.2,
        )  # fmt: skip
        got["dm_frozen"] = frozen
        made: dict[str, str] = {}
        for v, (maker, picker, _later, _w) in DAEMON.items():
            if v == "dmrebase":
                until(lambda: not lab.git("status", "--porcelain", "-uno").strip(), timeout=120)
                lab.git("checkout", "-q", f"side-{v}")
                _git_clean(lab, "rebase", "-q", "main", who=picker)
                lab.git("checkout", "-q", "main")
                lab.git("merge", "-q", "--ff-only", f"side-{v}", who=picker)
                made[v] = _mine(lab, v, picker)
            elif maker is not None:
                _git_clean(lab, "cherry-pick", side[v], who=picker)
                made[v] = _mine(lab, v, picker)
            elif picker is not None:
                lab.set_status(v, "rejected")
                made[v] = _commit_plan(lab, v, f"{picker[0]}: reject {v}", picker)
            else:
                lab.set_status(v, "approved")
                made[v] = _commit_plan(lab, v, f"approve {v}", ALICE)
        got["dm_seen1"] = until(
            lambda: all(_note_of(lab, v, made[v]) for v in DAEMON), timeout=240, step=0.3
        )
        later: dict[str, str] = {}
        for v, (_m, _p, who, _w) in DAEMON.items():
            if v == "dmrun":
                continue
            lab.set_status(v, "approved")
            later[v] = _commit_plan(lab, v, f"{who[0]}: approve {v}", who)
        got["dm_seen2"] = until(
            lambda: all(_note_of(lab, v, later[v]) for v in later), timeout=240, step=0.3
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        err.close()
    got["dm_rc"] = proc.returncode
    got["dm_err"] = (lab.root / "daemon.err").read_text(errors="replace")[-1500:]
    got["dm_ran"] = {v: len(lab.calls(v)) for v in DAEMON}
    got["dm_rows"] = {v: lab.rows().get(f"plans/{v}", {}) for v in DAEMON}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r116-approve-atk116a", _build)


#: merged withdrawals that count for nothing: Mallory's own commit (her committer line) on a
#: branch Alice merges is Mallory's rejection, never the merger's (round 120)
MERGED_IGNORED = {"rjmm"}


def _counts(v: str) -> bool:
    """Whether the vid's withdrawal must count (stop the plan)."""
    if v in REJECTS:
        return REJECTS[v][3]
    if v in MERGED_IGNORED:
        return False
    return v in WITHDRAWN or v in ("pushrj", "pushrjl", "pushrb", "rvrj", "rvrjself", "wdcopy")


IDS = [*VIDS, *[f"{v}:status" for v in VIDS], *[f"{v}:audit" for v in VIDS]]
IDS += [f"{v}:decision" for v in WITHDRAWN]
IDS += [f"{v}:by" for v in WITHDRAWN if _counts(v)]
IDS += ["passes", "daemon"]
IDS += [*DAEMON, *[f"{v}:status" for v in DAEMON]]


def _broken(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 116: {CLS}: {what}")


_BROKEN_VIDS: dict[str, str] = {
    v: "a withdrawal committed by an allowed approver (or the plan's author) but authored by "
    "another, its author date not after the freeze/pause, is E_APPROVAL_REPLAYED and ignored; "
    "Bob's later approval runs the plan"
    for v in [
        "rjss",
        "rjssplus",
        "rjsscase",
        "rjssalias",
        "rjsssec",
        "rjssown",
        "rjssbob",
        "rjpast",
        "rjpast1",
        "rjff",
        "rjcp",
        "qrjss",
        "abss",
        "abpast",
    ]
}
_BROKEN_VIDS["pushrb"] = (
    "a rejection authored by Mallory in the freeze's second, committed by Alice, then Bob's "
    "approval in the same push: the plan runs in that very pass"
)
_BROKEN_VIDS["pushrj"] = (
    "Alice's approval and, in the same push, a rejection committed by Bob authored by Mallory "
    "in the freeze's second: the rejection is E_APPROVAL_REPLAYED, Carol's approval runs it"
)
BROKEN: dict[str, Any] = {}
for _v, _what in _BROKEN_VIDS.items():
    for _k in ("", ":status", ":audit", ":decision", ":by"):
        if _v in EXTRA and _k in (":decision", ":by"):
            continue
        BROKEN[f"{_v}{_k}"] = _broken(_what)


for _v in ("dmpick", "dmcarol", "dmrebase"):
    for _k in ("", ":status"):
        BROKEN[f"{_v}{_k}"] = _broken(
            "daemon, no date pinned: a rejection made on a side branch before the daemon froze "
            "the plan, cherry-picked or rebased by an allowed approver right after, is "
            "E_APPROVAL_REPLAYED; the next approval runs the plan"
        )
CLS2 = "committer-mode-maker-named-as-author"
for _v in ("rjlater", "qrjlater", "ablater", "rjmrgm"):
    BROKEN[f"{_v}:by"] = pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason=f"round 116: {CLS2}: under identity: committer the fresh-clone audit's "
        "decisions name the withdrawal's AUTHOR (Mallory, no approver) as its maker, though "
        "the controller counted it as its committer's",
    )
#: status-row notes under identity: committer: vid -> (address that must not be named as the
#: decision's maker (its author), address that must be (its committer))
NOTES: dict[str, tuple[str, str]] = {
    "apss": ("mallory@example.com", "alice@example.com"),
    "rjlater": ("mallory@example.com", "alice@example.com"),
    "qrjlater": ("mallory@example.com", "bob@ops.example.com"),
    "ablater": ("mallory@example.com", "alice@example.com"),
    "rjmal": ("alice@example.com", "mallory@example.com"),
    "rjself": ("mallory@example.com", "alice@example.com"),  # control
}
for _v in ("apss", "rjlater", "qrjlater", "ablater", "rjmal"):
    BROKEN[f"{_v}:note"] = pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason=f"round 116: {CLS2}: the status row's notes name the decision's AUTHOR as its "
        "maker (Alice's approval 'by mallory', Alice's rejection 'mallory set status "
        "rejected', Mallory's refused one 'E_APPROVER_NOT_ALLOWED: alice@example.com')",
    )
IDS += [f"{v}:note" for v in NOTES]
#: Both classes were fixed the same day (``Lifecycle.identity_mode``: under ``identity:
#: committer`` a decision is its committer's, made when she committed it, never a replay of
#: its author's, and every note, event and the audit name her): the ids broken above now
#: pass and keep watch.
FIXED = set(BROKEN)
BROKEN = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round116_atk116a(lab: Any, vid: str) -> None:
    got = lab.got
    clone = got["clone"]["report"]
    if vid == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    if vid == "daemon":  # the daemon saw every step and stopped cleanly on SIGTERM
        assert got["dm_frozen"] and got["dm_seen1"] and got["dm_seen2"], got["dm_rows"]
        assert "Traceback" not in got["dm_err"], got["dm_err"]
        return
    v, _, kind = vid.partition(":")
    if v in DAEMON:
        drow = got["dm_rows"][v]
        want = DAEMON[v][3]
        if kind == "status":
            assert drow.get("status") == ("completed" if want else "rejected"), brief(drow, 5)
        else:
            assert got["dm_ran"][v] == want, (got["dm_ran"][v], brief(drow, 5))
        return
    row = lab.got_rows.get(f"plans/{v}", {})
    ran = lab.ran.get(v, 0)
    withdrawn = _counts(v)
    if kind == "note":
        wrong, right = NOTES[v]
        notes = [str(n) for n in row.get("notes") or []]
        assert not [n for n in notes if wrong in n], notes
        assert [n for n in notes if right in n], notes
        return
    if v in EXTRA and kind in ("", "status"):
        want_runs, want_status = EXTRA[v]
        if kind == "status":
            assert row.get("status") == want_status, brief(row, 5)
            if v.startswith(("rk", "hoct")):
                assert got["risk"][v] == "high", got["risk"]
            return
        assert ran == want_runs, (ran, brief(row, 5))
        if v == "rknest":
            assert got["child_ran"] == 0, got["child_ran"]
        if v == "wdcopy":
            copy = lab.got_rows.get("plans/wdcopy2", {})
            assert "E_VERSION_WITHDRAWN" in lab.got["wdcopy2"], (brief(copy, 5), lab.got["wdcopy2"])
        return
    if kind == "audit":
        valid = [
            e
            for e in clone.get("executions", [])
            if e.get("plan") == f"plans/{v}" and e.get("approval_valid")
        ]
        if v in GATES:  # the start is valid; the gate's answer after the abort is not
            gate = [e for e in valid if e.get("approval_kind") == "gate"]
            assert bool(gate) == bool(got["gate_ran"][v]), (gate, clone.get("findings"))
            assert not gate, (gate, clone.get("findings"))
            return
        assert bool(valid) == bool(ran), (ran, valid, clone.get("findings"))
        if withdrawn:
            assert not valid, (valid, clone.get("findings"))
        return
    if kind == "by":
        mine = [
            d
            for d in clone.get("decisions", [])
            if d.get("plan") == f"plans/{v}" and d.get("kind") in {"reject", "abort-request"}
        ]
        assert mine, ("no withdrawal listed", clone.get("decisions"))
        want = WHO[v]
        # the address as the commit spells it (``ALICE@EXAMPLE.COM``): one person's
        assert {str(d.get("by")).lower() for d in mine} <= want, (mine, want)
        return
    if kind == "decision":
        kinds = {"reject", "abort-request"}
        mine = [
            d
            for d in clone.get("decisions", [])
            if d.get("plan") == f"plans/{v}" and d.get("kind") in kinds
        ]
        if withdrawn:
            assert mine, ("no withdrawal listed", clone.get("decisions"))
        else:
            assert not mine, mine
        return
    if kind == "status":
        if v in GATES:
            want = "aborted"
        elif v == "appast":  # undecided: refused (replayed) or run once, never more
            assert row.get("status") in ("completed", "pending_approval"), brief(row, 5)
            return
        elif v in APPROVALS:
            want = "completed"
        else:
            want = "rejected" if withdrawn else "completed"
        assert row.get("status") == want, brief(row, 5)
        return
    if v in GATES:
        # the run started (action 1 once), the abort stops it before action 2
        assert got["pause"].get(v), ("never paused", brief(got["rows_b"].get(f"plans/{v}", {})))
        assert ran == 1 and got["gate_ran"][v] == 0, (ran, got["gate_ran"][v], brief(row, 5))
        return
    if v == "appast":
        assert ran <= 1, (ran, brief(row, 5))
        return
    want = 1 if v in APPROVALS or not withdrawn else 0
    assert ran == want, (ran, brief(row, 5))
