"""Round 117, approval and policy (atk117a): the DEFAULT ``approval.identity: author`` under
realistic forge flows, simulated with git alone.

Lab (one, local mode, ``identity: author``, round 116's policy otherwise): approvers Alice,
``*@ops.example.com`` (Bob, Carol), ``sec@example.com``; groups ``ops``/``security``; plus
tags of ``*@ops.example.com`` and people ``[alice@example.com, a.smith@corp.example]``;
rules ``risk: high`` two of ops and one of security, ``plans/q*/**`` two approvals. The forge
is ``GitHub <noreply@github.com>``: a "rebase and merge" is a ``git cherry-pick`` of each PR
commit with the forge as committer (author and author date kept), a "squash and merge" a
``merge --squash`` committed by the forge under the PR author with ``Co-authored-by:``, a
"merge commit" a ``--no-ff`` merge authored by whoever clicked and committed by the forge.
The Owner writes the plans frozen in pass A (second F, one batched freeze); pull requests
that ADD a plan were written an hour before (author dates pinned), with reviewers' decisions
on the PR branch, and reach main in round B. Round B: decisions; C: gate aborts at the pause
P, quorum second steps, ``git am``s; D: Bob (or the second voter) approves everything.

Ids (279, 57 variants): ``<vid>`` (``rec`` calls of the vid at the end: 0 for a withdrawn
plan, 1 for a control that runs; a gate plan: action 1 once, the gated action never),
``<vid>:status`` (the status row at the end), ``<vid>:audit`` (the fresh-clone ``audit
--json``, no config, calls valid exactly the starts the plan must have), ``<vid>:agree`` (it
calls valid exactly the starts the controller committed: (d)), ``<vid>:decision`` (for a
withdrawal that must count: listed under ``decisions``), ``<vid>:code`` (the exact refusal
of a plan that must not run), ``<vid>:votes`` (a quorum plan one person or a forge tried to
fill: one vote kept, ``missing: 1 more approval``), ``passes`` (every ``run --once`` exited
0, no traceback).

Seen (round 117, 279 ids: 227 passed, 52 xfailed; ~20-30 s wall alone), 3 classes, all
"fail open" ((a): a genuine withdrawal by an allowed approver ignored, a later approval runs
the plan), and in each the fresh-clone audit AGREES with the controller (every ``:agree``
holds; it lists the withdrawal as ``withdraw-not-allowed``):

- **pr-withdrawal-older-than-line-birth** (12 ids: ``prrb``, ``prrbap``, ``rjrbpast``, each
  with ``:status``, ``:audit``, ``:decision``). The agent's PR adds a plan; Carol (an allowed
  approver) reviews it and pushes ``status: rejected`` to the PR branch an hour before it is
  merged; the forge's "rebase and merge" re-creates both commits (committer
  ``noreply@github.com``, author dates kept). The rejection is of THIS content (the agent's
  commit before it wrote it), yet ``E_APPROVAL_REPLAYED: carol@ops.example.com set status
  rejected in <sha>, written before this version of the plan ... came to be and committed by
  another hand than its author's: a withdrawal of an earlier version or pause brought back``:
  the version's "birth" is the controller's last commit on the line before the rebased
  content commit, and any controller commit made during the review (here pass A) is later
  than Carol's rejection. Bob's approval is then refused once ``E_PLAN_NOT_FROZEN`` (the
  file still says ``rejected``; the controller freezes it as ``pending_approval``) and his
  next approval runs the plan; with Alice's approval also on the PR (``prrbap``) Bob's first
  approval runs it. ``rjrbpast``: the same for a plan frozen on main, Carol's rejection
  written on her checkout a minute before the freeze (same hashed content), rebase-merged.
  The same PR merged with a merge commit (``prmc``, ``prmcap``), rebased by Carol herself
  (``prrbself``) or written after the controller's last commit (``prrblate``) counts.
- **same-second-withdrawal-by-another-hand** (32 ids: ``rjrb0``, ``rjam0``, ``rjbob0``,
  ``rjsq0``, ``qrj0``, ``abrb0``, ``abam0``, ``prrbss``, each with ``:status``, ``:audit``,
  ``:decision``). A rejection (abort) by Carol authored in the very second of the version's
  freeze (the run's pause, or the controller's last commit for a PR-added plan), put on the
  branch by the forge's rebase-merge, a forge squash-merge authored by Carol herself
  (``rjsq0``: a NEW commit, author Carol, both dates in that second, only the committer is
  the forge), Bob's ``git am`` of her emailed patch, or Bob's rebase: ignored as above; Bob's
  approval runs the plan (``qrj0``: Carol's rejection between the quorum's two votes;
  ``abrb0``/``abam0``: Bob's gate answer runs the gated action after her abort). This is
  round 109's documented rule (docs/approvals.md "Replayed approvals", withdrawals bullet;
  threat-model row "A rejection or abort of an earlier version ... by another hand") applied
  to the default ``identity: author``; found flaky first as ``rjsq`` (a squash-merge in the
  freeze's second when the bench ran fast), now pinned both ways (``rjsq`` @F+1 holds).
- **squash-added-rejected-plan-revived** (8 ids: ``prsq``, ``prsqc`` with ``:status``,
  ``:audit``, ``:decision``). The same PR (plan + Carol's rejection) squash-merged by the
  forge: the plan first appears ``rejected`` in one commit authored by the agent (the plan's
  author, who may withdraw) or by Carol (an approver): ``E_ILLEGAL_TRANSITION: ... set status
  rejected (from nothing) ...; ignored``; the plan is frozen on the next approval's refusal
  (``E_PLAN_NOT_FROZEN``) and Bob's approval after that runs it, though every file state on
  main said ``rejected`` until Bob set it ``approved``.

What held: every control (rejections after the freeze rebase-merged, ``am``'d, squashed,
merged with a forge merge commit clicked by Bob or Mallory, a plus-tag author, her own
commit in the freeze's second, a PR merged with a merge commit or rebased by herself);
approvals: a forge merge commit clicked by Mallory (``E_APPROVER_NOT_ALLOWED``), approvals of
v1 rebase-merged or ``am``'d onto v2 (``E_APPROVAL_REPLAYED``) or merged by Mallory or Alice
herself after v2 froze (``E_PLAN_HASH_MISMATCH``), her approval ``am --directory``'d onto
another plan (``E_APPROVAL_REPLAYED``), approvals on an unfrozen PR plan
(``E_PLAN_NOT_FROZEN``); quorum: her vote plus her merge click, her people alias, a
``Co-authored-by:``, a squash co-authored by Bob, the forge as author, her vote rebase-merged
twice, Bob plus ``bob+r`` (one vote each time, ``missing: 1 more approval``), two forge
rebase-merged votes by two people run once; reverts of reverts (Mallory's revert of her
revert: ``E_APPROVER_NOT_ALLOWED``; her own, or via the forge, run once; a counted rejection
reverted by Mallory, by Mallory via the forge, or by Carol herself stays rejected); several
plans in one PR (one review PR approving one and rejecting another; a byte-identical twin
refused ``E_ALREADY_EXECUTED``); every fresh-clone audit agreed with the controller.

Fixed (2026-12-05, round 117 fix117w): a withdrawal by someone who may withdraw the plan
counts whoever put it on the branch and whenever it is dated, and a plan first seen
``rejected`` is rejected; all 279 ids pass, no xfail left.

Not tried: signed ``Plan-Approved:`` trailers, remote mode and the daemon (every pass is
``run --once``), ``plangate check``'s prediction of these PRs, ``require_signed``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from test_round2_execution_kit import shared

from tests.adversarial.advkit import (
    AGENT,
    ALICE,
    BOB,
    CAROL,
    MALLORY,
    Lab,
    brief,
    clone_audit_got,
    plan_text,
)

OWNER = ("Owner", "owner@example.com")
SEC = ("Sec", "sec@example.com")
ASMITH = ("A. Smith", "a.smith@corp.example")
FORGE = ("GitHub", "noreply@github.com")


def _config(lab: Lab) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "*@ops.example.com", "sec@example.com"]\n'
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


#: vid -> (calls wanted at the end, statuses accepted at the end)
REJ = (0, {"rejected"})
ABO = (1, {"aborted"})  # a gate plan: action 1 ran, the abort stops action 2
RUN = (1, {"completed"})
NOT = (0, {"pending_approval", "approved", "partial", "rejected"})
WANT: dict[str, tuple[int, set[str]]] = {
    # -- rejections of a version frozen at F, by Carol (an allowed approver) ----------------
    "rjrb0": REJ,  # on her review PR @F, rebase-merged: committer the forge
    "rjrbpast": REJ,  # @F-60 (her checkout before the freeze), rebase-merged by the forge
    "rjrb1": REJ,  # control: @F+1, rebase-merged
    "rjmc0": REJ,  # @F, her own commit, forge merge commit clicked by Bob
    "rjmcm": REJ,  # @F, her own commit, forge merge commit clicked by Mallory
    "rjmcpast": REJ,  # @F-60 on a branch forked before the freeze, forge merge commit
    "rjam0": REJ,  # her emailed rejection @F, ``git am`` by Bob
    "rjam1": REJ,  # control: emailed @F+5, ``git am`` by Bob
    "rjsq": REJ,  # control: her PR squash-merged by the forge @F+1 (author Carol)
    "rjsq0": REJ,  # her PR squash-merged by the forge in the freeze's second (author Carol)
    "rjown0": REJ,  # control: @F, committed by Carol herself on the line
    "pushaprj": REJ,  # one review PR rebase-merged: Alice approves, then Carol rejects (F+1)
    "pushrjap": REJ,  # the same, Carol's rejection first
    # -- pull requests that ADD the plan, reviewed on the PR branch an hour before ----------
    "prrb": REJ,  # agent's plan + Carol's rejection, rebase-merged by the forge
    "prrbself": REJ,  # the same, rebased and pushed by Carol herself
    "prmc": REJ,  # the same, forge merge commit clicked by Bob
    "prsq": REJ,  # squash by the forge, author the agent, Co-authored-by Carol
    "prsqc": REJ,  # squash by the forge, author Carol (an approver), Co-authored-by the agent
    "prrbap": REJ,  # plan + Carol's rejection + Alice's approval, rebase-merged
    "prrblate": REJ,  # control: the PR written after pass A (Carol @F+2), rebase-merged
    "prrbss": REJ,  # the PR's rejection authored in the second of pass A's last commit
    "prap": NOT,  # plan + Alice's approval of the unfrozen plan, rebase-merged
    "prapmc": NOT,  # the same, forge merge commit clicked by Mallory
    # -- approvals ---------------------------------------------------------------------------
    "aprb": RUN,  # control: Alice's review PR after F, rebase-merged
    "apmc": NOT,  # Alice's unsigned approval branch, forge merge commit clicked by Mallory
    "apam": RUN,  # control: Alice's emailed approval (after F), ``git am`` by Bob
    "apold": NOT,  # Alice approved v1 on a branch; v2 frozen; the forge rebase-merges it
    "apoldmc": NOT,  # the same, forge merge commit clicked by Mallory
    "apamv1": NOT,  # Alice's emailed approval of v1, ``git am``'d by Bob onto v2
    "apamm": NOT,  # Alice's emailed approval of ANOTHER plan ``am --directory``'d by Mallory
    # -- quorum (plans/q*: two approvals) -------------------------------------------------------
    "qmcself": NOT,  # Alice's approval, forge merge commit clicked by Alice, then her alias
    "qcoauth": NOT,  # Alice's approval with ``Co-authored-by: Bob``
    "qsq": NOT,  # squash (author Alice, Co-authored-by Bob) of Alice's and Bob's commits
    "qforge": NOT,  # Alice's vote, then a forge-authored web merge setting approved
    "qdup": NOT,  # Alice's vote rebase-merged, then the same commit rebase-merged again
    "qplus": NOT,  # Bob votes, then bob+r@ops.example.com (his plus tag) votes
    "qrb2": RUN,  # control: Alice then Bob, each rebase-merged by the forge
    "qrj0": REJ,  # Alice votes; Carol's rejection @F rebase-merged; Bob votes
    # -- gate aborts at the pause P ------------------------------------------------------------
    "abrb0": ABO,  # Carol's abort @P rebase-merged by the forge; Bob answers the gate
    "abrb1": ABO,  # control: @P+1
    "abam0": ABO,  # Carol's emailed abort @P, ``git am`` by Bob
    "abmc0": ABO,  # Carol's abort @P on her branch, forge merge commit clicked by Bob
    # -- more shapes -----------------------------------------------------------------------
    "rjbob0": REJ,  # Carol's rejection @F rebased onto main by Bob (a maintainer's rebase)
    "rjplus": REJ,  # control: authored carol+review@ops.example.com @F+1, rebase-merged
    "rvself": REJ,  # Carol rejects (counted), then reverts her own rejection; Bob approves
    "prmcap": REJ,  # PR: plan, Carol's rejection, then Alice's approval; forge merge by Bob
    "apoldmca": NOT,  # Alice's v1 approval branch merged by Alice herself after v2 froze
    # -- reverts of reverts ---------------------------------------------------------------
    "rvrv": REJ,  # Carol rejects; Mallory reverts; Mallory reverts the revert; Bob approves
    "rvrvap": NOT,  # Alice approves and reverts; Mallory reverts her revert (one push)
    "rvrvself": RUN,  # control: Alice approves, reverts, reverts her revert (one push)
    "rvrvfg": RUN,  # Alice approves, reverts; her revert of it rebase-merged by the forge
    "rvrjfg": REJ,  # Carol rejects; Mallory's revert of it rebase-merged by the forge
    # -- several plans in one pull request -------------------------------------------------
    "mp1": RUN,  # one PR adds mp1..mp3; Alice approves mp1 and Carol rejects mp2 in one
    "mp2": REJ,  #   review PR rebase-merged by the forge; Bob approves mp2 later
    "mp3": NOT,  # Carol's one commit rejecting mp2 copies nothing onto mp3
    "mpa": RUN,  # one PR adds mpa and mpb, byte-identical content (tag mpa): Alice approves
    "mpb": (1, {"pending_approval", "failed", "rejected"}),  # mpa; Bob approves mpb: runs once
}
#: the tag a vid's plan calls ``rec`` with (mpb holds mpa's content: calls are counted whole)
TAG = {"mpb": "mpa"}
#: quorum plans (two needed) that one person (or a forge) tried to fill alone
QUORUM_ONE = ["qmcself", "qcoauth", "qsq", "qforge", "qdup", "qplus"]
VIDS = list(WANT)
PR_ADDS = [
    "prrb",
    "prrbself",
    "prmc",
    "prsq",
    "prrbap",
    "prap",
    "prapmc",
    "mp1",
    "mp2",
    "mp3",
    "prrblate",
    "prrbss",
    "mpa",
    "mpb",
    "prsqc",
    "prmcap",
]
GATES = ["abrb0", "abrb1", "abam0", "abmc0"]
FROZEN_FIRST = [v for v in VIDS if v not in PR_ADDS]


def _plan(slug: str) -> str:
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
    """Commit everything, ``author`` and ``committer`` apart, author date ``adate``."""
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


def _last(lab: Lab) -> int:
    """The time of the controller's newest commit (its clock)."""
    out = lab.git("log", "-1", "--format=%ct", "--author=plangate@localhost", "main")
    return int(out.strip())


def _rebase_merge(lab: Lab, *shas: str) -> None:
    """The forge's "rebase and merge": each commit re-created on main, committer the forge,
    author and author date kept."""
    lab.git("checkout", "-q", "main")
    for sha in shas:
        lab.git("cherry-pick", "--allow-empty", "--keep-redundant-commits", sha, who=FORGE)


def _forge_merge(lab: Lab, branch: str, clicker: tuple[str, str]) -> None:
    """The forge's "create a merge commit": author who clicked, committer the forge."""
    lab.git("checkout", "-q", "main")
    lab.extra_env = {"GIT_COMMITTER_NAME": FORGE[0], "GIT_COMMITTER_EMAIL": FORGE[1]}
    try:
        lab.git("merge", "-q", "--no-ff", "-m", f"Merge pull request from {branch}", branch,
                who=clicker)  # fmt: skip
    finally:
        lab.extra_env = {}


def _squash(
    lab: Lab,
    branch: str,
    author: tuple[str, str],
    coauth: list[tuple[str, str]],
    adate: int | None = None,
) -> None:
    """The forge's "squash and merge": one commit by the PR author, committed by the forge."""
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--squash", branch, who=FORGE)
    trailers = "".join(f"Co-authored-by: {n} <{e}>\n" for n, e in coauth)
    _c2(lab, f"{branch} (#1)\n\n" + (f"\n{trailers}" if trailers else ""), author, FORGE, adate)


def _am(lab: Lab, sha: str, who: tuple[str, str], *opts: str) -> None:
    """An emailed patch of ``sha`` applied with ``git am`` by ``who`` on main."""
    patch = lab.git("format-patch", "-1", "--stdout", sha)
    lab.git("checkout", "-q", "main")
    lab.git("am", "-q", "--3way", *opts, who=who, input=patch)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    passes: list[tuple[str, int, bool, str]] = []
    lab.passes = passes  # type: ignore[attr-defined]

    def step(phase: str) -> None:
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))

    def setc(v: str, status: str, who: tuple[str, str], by: tuple[str, str] | None = None,
             adate: int | None = None, msg: str = "") -> str:  # fmt: skip
        lab.set_status(v, status)
        return _c2(lab, msg or f"{who[0]}: {status} {v}", who, by or who, adate)

    _config(lab)
    t0 = int(lab.git("log", "-1", "--format=%ct").strip())
    # pull requests that add plans, written and reviewed an hour before the controller's pass
    for v in PR_ADDS:
        if v in ("mp2", "mp3", "mpb", "prrblate", "prrbss"):
            continue
        lab.branch(f"pr-{v}")
        if v == "mp1":
            for m in ("mp1", "mp2", "mp3"):
                lab.write(m, _plan(m))
        elif v == "mpa":
            lab.write("mpa", _plan("mpa"))
            lab.write("mpb", _plan("mpa"))
        else:
            lab.write(v, _plan(v))
        _c2(lab, f"agent: add {v}", AGENT, AGENT, t0 - 7200)
        if v in ("prrb", "prrbself", "prmc", "prsq", "prrbap", "prsqc", "prmcap"):
            setc(v, "rejected", CAROL, CAROL, t0 - 3600)
        if v in ("prrbap", "prmcap"):
            setc(v, "approved", ALICE, ALICE, t0 - 3500)
        if v in ("prap", "prapmc"):
            setc(v, "approved", ALICE, ALICE, t0 - 3600)
        lab.git("checkout", "-q", "main")
    # pass A: the Owner's plans frozen at F
    for v in FROZEN_FIRST:
        lab.write(v, _plan(v))
    lab.commit("owner: plans", OWNER)
    pre_freeze = lab.head()
    # Carol's checkout before the freeze: rejections dated F-60 on branches forked there
    step("a")
    freeze = {v: _event_time(lab, v, "freeze") for v in FROZEN_FIRST}
    got["freeze"] = freeze
    base_a = lab.head()

    # -- B ---------------------------------------------------------------------------------
    def review(v: str, status: str, who: tuple[str, str], adate: int | None,
               base: str | None = None, msg: str = "") -> str:  # fmt: skip
        lab.branch(f"rv-{v}-{status}-{who[0]}", base or "main")
        sha = setc(v, status, who, who, adate, msg)
        lab.git("checkout", "-q", "main")
        return sha

    _rebase_merge(lab, review("rjrb0", "rejected", CAROL, freeze["rjrb0"]))
    _rebase_merge(lab, review("rjrbpast", "rejected", CAROL, freeze["rjrbpast"] - 60, pre_freeze))
    _rebase_merge(lab, review("rjrb1", "rejected", CAROL, freeze["rjrb1"] + 1))
    review("rjmc0", "rejected", CAROL, freeze["rjmc0"])
    _forge_merge(lab, "rv-rjmc0-rejected-Carol", BOB)
    review("rjmcm", "rejected", CAROL, freeze["rjmcm"])
    _forge_merge(lab, "rv-rjmcm-rejected-Carol", MALLORY)
    review("rjmcpast", "rejected", CAROL, freeze["rjmcpast"] - 60, pre_freeze)
    _forge_merge(lab, "rv-rjmcpast-rejected-Carol", BOB)
    _am(lab, review("rjam0", "rejected", CAROL, freeze["rjam0"]), BOB)
    _am(lab, review("rjam1", "rejected", CAROL, freeze["rjam1"] + 5), BOB)
    review("rjsq", "rejected", CAROL, None)
    _squash(lab, "rv-rjsq-rejected-Carol", CAROL, [], freeze["rjsq"] + 1)
    review("rjsq0", "rejected", CAROL, None)
    _squash(lab, "rv-rjsq0-rejected-Carol", CAROL, [], freeze["rjsq0"])
    setc("rjown0", "rejected", CAROL, CAROL, freeze["rjown0"])
    x = review("rjbob0", "rejected", CAROL, freeze["rjbob0"])
    lab.git("cherry-pick", x, who=BOB)
    _rebase_merge(lab, review("rjplus", "rejected", ("Carol", "carol+review@ops.example.com"),
                              freeze["rjplus"] + 1))  # fmt: skip
    got["rvself"] = setc("rvself", "rejected", CAROL)
    lab.branch("rv-pushaprj")
    a1 = setc("pushaprj", "approved", ALICE)
    a2 = setc("pushaprj", "rejected", CAROL, CAROL, freeze["pushaprj"] + 1)
    _rebase_merge(lab, a1, a2)
    lab.branch("rv-pushrjap")
    a1 = setc("pushrjap", "rejected", CAROL, CAROL, freeze["pushrjap"] + 1)
    a2 = setc("pushrjap", "approved", ALICE)
    _rebase_merge(lab, a1, a2)

    # pull requests adding plans
    def pr_commits(v: str) -> list[str]:
        out = lab.git("rev-list", "--reverse", f"main..pr-{v}")
        return out.split()

    for v in ("prrb", "prrbap", "prap", "mp1", "mpa"):
        _rebase_merge(lab, *pr_commits(v))
    last = int(lab.git("log", "-1", "--format=%ct", "--author=plangate@localhost").strip())
    got["last_a"] = last
    for v, off in (("prrblate", 2), ("prrbss", 0)):
        lab.branch(f"pr-{v}")
        lab.write(v, _plan(v))
        _c2(lab, f"agent: add {v}", AGENT, AGENT, last + off)
        setc(v, "rejected", CAROL, CAROL, last + off)
        lab.git("checkout", "-q", "main")
        _rebase_merge(lab, *pr_commits(v))
    lab.git("checkout", "-q", "pr-prrbself")
    lab.git("rebase", "-q", "main", who=CAROL)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "pr-prrbself", who=CAROL)
    _forge_merge(lab, "pr-prmc", BOB)
    _forge_merge(lab, "pr-prmcap", BOB)
    _forge_merge(lab, "pr-prapmc", MALLORY)
    _squash(lab, "pr-prsq", AGENT, [CAROL])
    _squash(lab, "pr-prsqc", CAROL, [AGENT])
    # approvals
    _rebase_merge(lab, review("aprb", "approved", ALICE, freeze["aprb"] + 1))
    review("apmc", "approved", ALICE, None)
    _forge_merge(lab, "rv-apmc-approved-Alice", MALLORY)
    _am(lab, review("apam", "approved", ALICE, freeze["apam"] + 1), BOB)
    old = review("apold", "approved", ALICE, None)
    review("apoldmc", "approved", ALICE, None)
    review("apoldmca", "approved", ALICE, None)
    got["apamv1"] = review("apamv1", "approved", ALICE, None)
    for v in ("apold", "apoldmc", "apamv1", "apoldmca"):  # v2: the Owner edits the content
        lab.write(v, lab.read(v).replace(f'why: "record that variant {v} ran"',
                                         f'why: "record that variant {v} ran (v2)"'))  # fmt: skip
    lab.commit("owner: v2", OWNER)
    got["apold"] = old
    # quorum
    review("qmcself", "approved", ALICE, None)
    _forge_merge(lab, "rv-qmcself-approved-Alice", ALICE)
    setc("qcoauth", "approved", ALICE, ALICE, None,
         "approve qcoauth\n\nCo-authored-by: Bob <bob@ops.example.com>\n")  # fmt: skip
    lab.branch("rv-qsq")
    setc("qsq", "approved", ALICE)
    setc("qsq", "pending_approval", BOB)
    setc("qsq", "approved", BOB)
    _squash(lab, "rv-qsq", ALICE, [BOB])
    setc("qforge", "approved", ALICE)
    got["qdup"] = review("qdup", "approved", ALICE, None)
    _rebase_merge(lab, got["qdup"])
    setc("qplus", "approved", BOB)
    _rebase_merge(lab, review("qrb2", "approved", ALICE, freeze["qrb2"] + 1))
    setc("qrj0", "approved", ALICE)
    # gates: Bob starts them
    for v in GATES:
        setc(v, "approved", BOB)
    # reverts
    x = setc("rvrv", "rejected", CAROL)
    got["rvrv"] = x
    rvrv_revert = None
    x = setc("rvrvap", "approved", ALICE)
    lab.git("revert", "--no-edit", x, who=ALICE)
    lab.git("revert", "--no-edit", "HEAD", who=MALLORY)
    x = setc("rvrvself", "approved", ALICE)
    lab.git("revert", "--no-edit", x, who=ALICE)
    lab.git("revert", "--no-edit", "HEAD", who=ALICE)
    got["rvrjfg"] = setc("rvrjfg", "rejected", CAROL)
    x = setc("rvrvfg", "approved", ALICE)
    got["rvrvfg"] = lab.git("revert", "--no-edit", x, who=ALICE) and lab.head()
    step("b")
    got["rows_b"] = lab.rows()
    del rvrv_revert, base_a

    # -- C ---------------------------------------------------------------------------------
    pause: dict[str, int] = {}
    for v in GATES:
        try:
            pause[v] = _event_time(lab, v, "await-approval")
        except AssertionError:
            continue
    got["pause"] = pause
    if "abrb0" in pause:
        _rebase_merge(lab, review("abrb0", "aborted", CAROL, pause["abrb0"]))
    if "abrb1" in pause:
        _rebase_merge(lab, review("abrb1", "aborted", CAROL, pause["abrb1"] + 1))
    if "abam0" in pause:
        _am(lab, review("abam0", "aborted", CAROL, pause["abam0"]), BOB)
    if "abmc0" in pause:
        review("abmc0", "aborted", CAROL, pause["abmc0"])
        _forge_merge(lab, "rv-abmc0-aborted-Carol", BOB)
    # v1 approvals brought onto v2
    lab.branch("rb-apold", got["apold"])
    lab.git("checkout", "-q", "main")
    _rebase_merge(lab, got["apold"])
    _forge_merge(lab, "rv-apoldmc-approved-Alice", MALLORY)
    _forge_merge(lab, "rv-apoldmca-approved-Alice", ALICE)
    _am(lab, got["apamv1"], BOB)
    # Alice's approval of aprb ``am --directory``'d onto apamm by Mallory
    patch = lab.git("format-patch", "-1", "--stdout", lab.git(
        "log", "-1", "--format=%H", "--author=alice@", "--", "plans/aprb").strip())  # fmt: skip
    lab.put("plans/apamm/PLAN.yml", lab.read("apamm"))
    patch = (
        patch.replace("plans/aprb/", "plans/apamm/")
        .replace('attack variant aprb"', 'attack variant apamm"')
        .replace('name: "aprb"', 'name: "apamm"')
    )
    res = lab.git("am", "-q", "--3way", who=MALLORY, input=patch, check=False)
    got["apamm_am"] = res
    lab.git("am", "--abort", check=False)
    # quorum second steps
    setc("qmcself", "approved", ASMITH)
    setc("qforge", "approved", FORGE)
    lab.set_status("qdup", "pending_approval")
    lab.commit("agent: reset qdup for the second PR", AGENT)
    _rebase_merge(lab, got["qdup"])
    setc("qplus", "approved", ("Bob R", "bob+r@ops.example.com"))
    lab.branch("rv-rvrvfg")
    lab.extra_env = {"GIT_AUTHOR_DATE": f"@{_last(lab) + 1} +0000"}
    lab.git("revert", "--no-edit", got["rvrvfg"], who=ALICE)
    lab.extra_env = {}
    _rebase_merge(lab, lab.head("rv-rvrvfg"))
    _rebase_merge(lab, review("qrb2", "approved", BOB, _last(lab) + 1))
    _rebase_merge(lab, review("qrj0", "rejected", CAROL, freeze["qrj0"], base_a_sha := lab.head()))
    del base_a_sha
    # reverts
    lab.git("revert", "--no-edit", got["rvself"], who=CAROL)
    lab.git("revert", "--no-edit", got["rvrv"], who=MALLORY)
    lab.git("revert", "--no-edit", "HEAD", who=MALLORY)
    lab.branch("rv-rvrjfg")
    lab.git("revert", "--no-edit", got["rvrjfg"], who=MALLORY)
    _rebase_merge(lab, lab.head("rv-rvrjfg"))
    # several plans: Alice approves mp1, Carol rejects mp2, one review PR rebase-merged
    lab.branch("rv-mp")
    a1 = setc("mp1", "approved", ALICE, adate=_last(lab) + 1)
    lab.set_status("mp2", "rejected")
    a2 = _c2(lab, "Carol: reject mp2", CAROL, CAROL, _last(lab) + 1)
    _rebase_merge(lab, a1, a2)
    setc("mpa", "approved", ALICE)
    step("c")
    got["rows_c"] = lab.rows()

    # -- D: Bob approves everything that must stay stopped; second votes ---------------------
    for v in VIDS:
        if v in GATES or v in ("aprb", "apmc", "apam", "qrb2", "rvrvself", "mp1"):
            continue
        if v in ("qmcself", "qcoauth", "qsq", "qforge"):
            continue  # quorum plans with one person's vote: nobody else votes
        if v in ("prap", "prapmc", "apold", "apoldmc", "apamv1", "apamm", "mp3", "rvrvap",
                 "apoldmca"):  # fmt: skip
            continue  # these must not run on what they hold
        if v in ("qdup", "qplus", "mpa", "rvrvfg"):
            continue
        setc(v, "approved", BOB)
    for v in GATES:
        if v in pause:
            setc(v, "approved", BOB)
    step("d")
    # E: Bob approves again every plan that must stay withdrawn and reads pending_approval
    # (an approval refused E_PLAN_NOT_FROZEN in D because the plan came in `rejected`)
    again = [v for v in VIDS if WANT[v] == REJ and lab.plan(v).get("plan", {}).get("status")
             == "pending_approval"]  # fmt: skip
    got["again"] = again
    for v in again:
        setc(v, "approved", BOB, msg=f"Bob: approve {v} again")
    step("e")
    lab.ran = {v: len(lab.calls(TAG.get(v, v))) for v in VIDS}  # type: ignore[attr-defined]
    got["gate_ran"] = {v: len(lab.calls(f"{v}-2")) for v in GATES}
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    got["codes"] = {v: lab.codes(v) for v in VIDS}
    got["blocks"] = {v: lab.plan(v).get("approval") for v in QUORUM_ONE}
    lab.subjects_of = {v: lab.subjects(v) for v in VIDS}  # type: ignore[attr-defined]
    got["clone"] = clone_audit_got(lab, root)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r117-approve-atk117a", _build)


WITHDRAWN = [v for v in VIDS if WANT[v] in (REJ, ABO)]
#: the refusal each plan that must not run is given (the exact code, in the status row or the
#: controller's `approval:` block)
CODES = {
    "prap": "E_PLAN_NOT_FROZEN",
    "prapmc": "E_PLAN_NOT_FROZEN",
    "apmc": "E_APPROVER_NOT_ALLOWED",
    "apold": "E_APPROVAL_REPLAYED",
    "apamv1": "E_APPROVAL_REPLAYED",
    "apamm": "E_APPROVAL_REPLAYED",
    "apoldmc": "E_PLAN_HASH_MISMATCH",
    "apoldmca": "E_PLAN_HASH_MISMATCH",
    "qforge": "E_APPROVER_NOT_ALLOWED",
    "rvrvap": "E_APPROVER_NOT_ALLOWED",
    "mpb": "E_ALREADY_EXECUTED",
}
IDS = [*VIDS, *[f"{v}:status" for v in VIDS], *[f"{v}:audit" for v in VIDS]]
IDS += [f"{v}:agree" for v in VIDS] + [f"{v}:decision" for v in WITHDRAWN] + ["passes"]
IDS += [f"{v}:code" for v in CODES] + [f"{v}:votes" for v in QUORUM_ONE]
CLS_OLD = "pr-withdrawal-older-than-line-birth"
CLS_TIE = "same-second-withdrawal-by-another-hand"
CLS_SQ = "squash-added-rejected-plan-revived"
_BROKEN_VIDS: dict[str, tuple[str, str]] = {
    **{
        v: (
            CLS_OLD,
            "Carol's rejection of this very content (the PR's own, or the same hashed content "
            "before the freeze), authored before the controller's last commit (or freeze), "
            "rebase-merged by the forge: E_APPROVAL_REPLAYED ('a withdrawal of an earlier "
            "version ... brought back'), ignored; Bob's later approval runs the plan",
        )
        for v in ("prrb", "prrbap", "rjrbpast")
    },
    **{
        v: (
            CLS_TIE,
            "Carol's rejection (abort) authored in the second of the freeze (pause, or the "
            "controller's last commit), put on the branch by the forge's rebase-merge or Bob's "
            "git am: E_APPROVAL_REPLAYED, ignored; Bob's approval (gate answer, second vote) "
            "runs the plan",
        )
        for v in ("rjrb0", "rjam0", "qrj0", "abrb0", "abam0", "prrbss", "rjsq0", "rjbob0")
    },
    **{
        v: (
            CLS_SQ,
            "a PR adding the plan with Carol's rejection, squash-merged: the plan first "
            "appears `rejected` (E_ILLEGAL_TRANSITION 'from nothing', ignored), is frozen on "
            "the next approval's refusal and Bob's approval after that runs it",
        )
        for v in ("prsq", "prsqc")
    },
}
#: every class fixed (fix117w, 2026-12-05): _BROKEN_VIDS keeps what was seen
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round117_atk117a(lab: Any, vid: str) -> None:
    got = lab.got
    clone = got["clone"]["report"]
    if vid == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, _, kind = vid.partition(":")
    row = lab.got_rows.get(f"plans/{v}", {})
    if kind == "code":
        assert CODES[v] in got["codes"][v], (CODES[v], brief(row, 6))
        return
    if kind == "votes":  # one person (or a forge) counted once: one vote collected, partial
        block = got["blocks"][v] or {}
        votes = {str(a.get("by")).lower() for a in block.get("approvals") or []}
        # a refusal of the forge keeps what was collected (`missing`, one vote)
        assert block.get("status") in ("partial", "refused"), block
        assert len(votes) == 1 and block.get("missing") == "1 more approval", block
        return
    ran = lab.ran.get(v, 0)
    want_runs, want_status = WANT[v]
    if kind == "status":
        assert row.get("status") in want_status, brief(row, 5)
        return
    valid = [
        e
        for e in clone.get("executions", [])
        if e.get("plan") == f"plans/{v}" and e.get("approval_valid")
    ]
    if kind == "agree":  # the fresh-clone audit calls valid exactly the runs the controller made
        starts = [s for s in lab.subjects_of.get(v, []) if s.startswith("plangate: start ")]
        assert len(valid) == len(starts), (starts, valid, clone.get("findings"))
        return
    if kind == "decision":
        kinds = {"reject", "abort-request"}
        mine = [d for d in clone.get("decisions", [])
                if d.get("plan") == f"plans/{v}" and d.get("kind") in kinds]  # fmt: skip
        assert mine, ("no withdrawal listed", clone.get("decisions"), clone.get("findings"))
        return
    if kind == "audit":
        valid = [
            e
            for e in clone.get("executions", [])
            if e.get("plan") == f"plans/{v}" and e.get("approval_valid")
        ]
        if v in GATES:  # the start is valid; no gate answer after the abort is
            gate = [e for e in valid if e.get("approval_kind") == "gate"]
            assert not gate and len(valid) == 1, (valid, clone.get("findings"))
            return
        want_valid = 0 if v in TAG else want_runs  # mpb holds mpa's content: never valid
        assert len(valid) == want_valid, (ran, valid, clone.get("findings"))
        return
    if v in GATES:
        assert got["pause"].get(v), ("never paused", brief(got["rows_b"].get(f"plans/{v}", {})))
        assert ran == 1 and got["gate_ran"][v] == 0, (ran, got["gate_ran"][v], brief(row, 5))
        return
    assert ran == want_runs, (ran, brief(row, 5))
