"""Round 119, approval side (atk119w): WITHDRAWALS after round 117's fix (fix117w: a
withdrawal by someone entitled counts whatever its dates and hand; a plan first seen
`rejected` is rejected).

Lab (one, local mode, the default ``identity: author``): approvers Alice and
``*@ops.example.com`` (Bob, Carol); rule ``plans/q*/**`` needs two approvals; Mallory and
Dave (``dave@example.com``, a human plan author) are no approvers; the forge is ``GitHub
<noreply@github.com>``. Tools: ``rec`` (records each call), ``bad`` (records, exits 3). Pass
A: the agent (Dave, Carol for theirs) writes every plan, the controller freezes it. B: first
decisions (rejections, votes, gate approvals, pull requests merged, copies). C: the rejected
versions brought back (revert, copy, move, re-add, evil merge), authors' rejections, aborts.
D: Bob (Carol for a quorum) approves what must stay stopped. E, F: Bob approves again what
reads ``pending_approval``. Then a fresh-clone ``audit --json`` (no config), ``show``, and
``check --as bob`` on five pull-request branches.

Ids (388, 71 variants): ``<vid>`` (``rec`` calls of the vid's tag, copies included: 0 for a
withdrawn plan, 1 for a control; gates: action 1 once, the gated action per ``GATE2``),
``<vid>:status`` (the status row), ``<vid>:audit`` (valid starts in the fresh-clone audit),
``<vid>:agree`` (it calls valid exactly the starts the controller committed),
``<vid>:decision`` (a counted withdrawal is listed under ``decisions``), ``<vid>:code``
(a copy of a vetoed version: ``E_VERSION_WITHDRAWN`` after Bob's approval),
``<vid>:copyrow`` (that copy's row BEFORE any approval names ``E_VERSION_WITHDRAWN``),
``<vid>:illegal`` (the row of a plan whose file says `approved` names
``E_ILLEGAL_TRANSITION``), ``<vid>:reported``/``:flagged`` (a non-entitled withdrawal is
``E_APPROVER_NOT_ALLOWED`` in ``status`` and ``withdraw-not-allowed`` in the audit),
``<vid>:show``, ``<vid>:self`` (the author of a converted, rewritten or moved plan is still
refused ``E_SELF_APPROVAL``), ``davcli*:cli`` (``plangate reject`` by the author commits),
``check:*``, ``passes`` (every ``run --once`` exited 0).

Seen (round 119: 388 ids, 320 passed, 68 xfailed; about 65 s wall alone with -n 1),
4 classes:

- **author-withdrawal-lost-to-another-copy** (49 ids: ``undoauth``, ``readdm``,
  ``copystrip``, ``davundo``, ``davreadd``, ``davcopy``, ``davab``, ``davcopydel``,
  ``davmerged``, ``davcpcarol``, ``qdav``, ``davcli``, each with ``:status``, ``:audit``,
  ``:decision``; and ``davcli:cli``). FAIL OPEN. A plan's author (Dave, or the agent) rejects
  or aborts it after SOMEONE ELSE also made the same content: the agent, Mallory or Carol
  copied it to another slug (even a copy deleted again, or one on a branch Bob merged), or
  reverted a later edit back to it, or re-added it after the author deleted it. The
  author's withdrawal is then ``E_APPROVER_NOT_ALLOWED: dave@example.com set status rejected
  in <sha>, but only an allowed approver or an author of the plan may; ignored`` and Bob's
  approval runs the version its author withdrew (``davab``: Dave's abort at the gate
  ignored, Bob's gate answer runs the gated action; ``qdav``: between two quorum votes;
  ``davcli``: ``plangate reject`` refuses Dave: "dave@example.com is neither an approver
  ... nor an author of plans/davcli", so nothing is committed). The fresh-clone audit
  agrees with the controller (every ``:agree`` holds; it lists no decision). The same
  author's withdrawal counts with no copy (``davself``: his own copy; ``davrjcp``: his
  rejection before the copy; ``davcli0``, ``davcase`` as ``DAVE@EXAMPLE.COM``;
  ``undoself``: the agent undoing its own edit). Seen from outside, the right to withdraw
  is read from the version's producers, "only someone in ALL the commits that made it"
  (docs/approvals.md), keyed by the content's hash: anyone's copy of a plan anywhere
  removes its author's right to withdraw it, contrary to SPEC §4 ("a rejection or an abort
  counts ... when its commit is ... by an author of the plan") and to round 117's rule "a
  doubtful withdrawal counts". Self-approval still reads the authors (``carolmd``,
  ``carollegacy``, ``carolmv``: refused ``E_SELF_APPROVAL``).
  Repro (shell, echo tool): Dave commits ``plans/p/PLAN.yml``; ``run --once`` freezes it;
  the agent commits ``cp -r plans/p plans/p-copy``; Dave commits ``status: rejected`` in
  ``plans/p``; ``run --once``; Bob commits ``status: approved``; ``run --once``: ``plans/p``
  is ``completed``. Without the copy commit it stays ``rejected``.
- **plan-author-loses-withdrawal-to-coeditor** (8 ids: ``coedit``, ``coedit2`` with
  ``:status``, ``:audit``, ``:decision``). FAIL OPEN, the same record as the class above
  seen from a co-edit: the agent writes a plan, Dave changes one param (v2 frozen), the
  agent rejects it: ``E_APPROVER_NOT_ALLOWED: agent@example.com ... only an allowed
  approver or an author of the plan may; ignored``, Bob's approval runs v2 (and the same
  with Dave's plan edited by the agent). docs/approvals.md says "the right to reject or
  abort is a version's producers'"; SPEC §4 says "an author of the plan (who may withdraw
  it)", and the row calls the plan's writer no author. Possibly a deliberate narrowing:
  for the lead to decide (or to write into the SPEC).
- **draft-rejection-ignored** (4 ids: ``rjdraftfirst`` with ``:status``, ``:audit``,
  ``:decision``). FAIL OPEN. Alice rejects the agent's ``draft``: ``E_ILLEGAL_TRANSITION:
  alice@example.com set status rejected (from draft) ...; ignored``; the agent sets that
  very version ``pending_approval``, the controller freezes it and Bob's approval runs it.
  SPEC §4's list of human transitions has no ``draft -> rejected``, so this is the letter of
  the SPEC; but a plan ADDED ``rejected`` is rejected (fix117s) and "a doubtful withdrawal
  counts": an approver's rejection of a draft is a genuine withdrawal that counts nothing.
  FIXED (2026-12-06): ``draft`` -> ``rejected`` is a withdrawal by an allowed approver (only:
  a draft has no author withdrawers, ``Lifecycle.withdrawers``, so round 37's library author
  rejecting her own draft library vetoes no parent); tests/approval/test_draft_withdrawals.py.
- **withdrawn-version-copy-shown-waiting** (7 ids: ``cpslug``, ``cpfull``, ``cpresp``,
  ``cplegacy``, ``cpmd``, ``cpdeep``, ``sqcarol`` with ``:copyrow``). Surface: a frozen copy
  (new slug, respelled, legacy ``${...}``, a converted ``PLAN.md``, a move) of a version an
  approver vetoed reads ``pending_approval - waiting for an approval`` in ``status`` until
  an approval is refused ``E_VERSION_WITHDRAWN``; MCP ``submit`` refuses the same copy at
  once (round 118). Nothing runs (every ``:code`` holds). FIXED (2026-12-06): the row keeps
  ``pending_approval`` and its ``waiting``/``reason`` read ``E_VERSION_WITHDRAWN: this
  exact version ... was rejected in <plan> (<commit> by <who>)``
  (tests/service/test_withdrawn_copy_row.py).

What held (fresh-clone audit agreeing each time): an approver's rejection brought back by
the agent's ``git revert`` (also rebase-merged by the forge), an evil merge resolving the
plan back to ``pending_approval`` (agent, Bob or Mallory merging; Bob's merge resolving to
``approved``), a branch forked before the rejection merged back, a rename ``PLAN.yml`` ->
``PLAN.yaml``, a move into ``plans/deep/a`` as ``PLAN.yaml``, a delete and re-add, a copy at
a new slug as the same bytes, the whole frozen file, flow style with keys reordered and
comments/``created``/``metadata`` changed, legacy ``${inputs.who}``, a ``PLAN.md`` converted
by the daemon (all ``E_VERSION_WITHDRAWN``), a PR rejection then a move on the PR; Alice's
rejection with a content edit then reverted; ``rejected`` written quoted, with a comment,
in flow style, in a CR LF file; one-push sequences (Carol rejects + Bob approves; rejects,
pending, approves; Alice rejects then approves); an edit to v2 or ``draft`` after a
rejection; a squash by Carol with the rejection then copied; quorum: the author's or the
voter's own rejection between votes; aborts: the author's at a gate, Carol's reverted by the
agent in the same push, Carol's rebase-merged, one before the first approval ran, the
author's of a ``failed`` plan (no resume); not entitled and ignored, the plan running once:
Mallory's rejection, after writing a ``NOTES.md`` in the folder or a YAML comment, the
forge's web rejection, Mallory's vote-time rejection in a quorum, her gate abort, her abort
of a failed plan, her copy added ``rejected``; ``show`` of withdrawn plans whose file says
``approved`` (a WARNING line names the ignored change); ``check --as bob`` of a copy of a
vetoed version (``refuse``, ``E_VERSION_WITHDRAWN``), of a rejected plan re-approved, of a
rejection or an abort followed by Bob's approval on the PR (``none``), control ``start``.
Documented and asserted as such: Carol's ``aborted`` of a pending plan is ignored
(``abpend`` runs).

Not tried: ``identity: committer``, ``require_signed`` (signatures), remote mode and the
daemon, MCP ``submit`` as the copier in the first class (its commit is the agent's like any
copy here), the web page's view of these plans.

Fixed (2026-12-06, fix122w): **author-withdrawal-lost-to-another-copy** and **plan-author-
loses-withdrawal-to-coeditor** (57 ids). The cause: ``Lifecycle.withdrawers`` read the
PRODUCERS of the version at stake (``IndexStore.producers_of``: only someone in every commit
that made that content anywhere), so anyone's copy, undo back to it or re-add emptied the
set, and an edit by another made v2 hers alone. Who may withdraw a plan as its author now
reads the ORIGINATORS (``IndexStore.originators_of``, memory table ``originators``,
``INDEX_VERSION`` 140) of the version at stake and of the versions it was edited from at the
plan (``PlanState.versions``): the people in every commit that made that content afresh,
where a making that descends from one counted (a copy elsewhere, a revert back, a re-add, a
copy on a branch forked after it) removes nobody; round 35's race (two makings, neither on
top of the other) still keeps only someone in both, and an edit taken back gives its maker
nothing (round 20). The veto by hash everywhere is still the producers' (every making:
rounds 16, 23, and round 120's ``Lifecycle._veto``). The same idea was merged as fix119w and
reverted (CI: rounds 37, 81, 111 changed, together with fix119d); on fix122c every id of
rounds 16, 20, 23, 34-37, 43, 81 (approve) and 111 keeps its outcome but rounds 36 and 43's
four and two ids that asserted this fail-open (tests/approval/test_author_withdrawals.py).
"""

from __future__ import annotations

import json
import re
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
    LEGACY_PLAN,
    MALLORY,
    RESPELLED_PLAN,
    BenchError,
    Lab,
    brief,
    clone_audit_got,
    identity,
    plan_text,
)

FORGE = ("GitHub", "noreply@github.com")

#: gate plans: action 2 ``requires_approval``
GATES = {"gateab", "gateabm", "gateabrev", "gateabrb", "davab"}
#: plans that come on a pull request (not written in pass A)
LATE = {"evilmerge", "evilmergeap", "evilmergem", "prmove"}
#: plans whose one action is the failing ``bad`` tool
FAILING = {"failab", "failabm"}

BAD = """\
import json, os, sys
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": ""}) + "\\n")
sys.exit(3)
"""


def _config(lab: Lab) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    (lab.root / "bad.py").write_text(BAD)
    bad = json.dumps([sys.executable, str(lab.root / "bad.py"), "{tag}"])
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "*@ops.example.com"]\n'
        "  rules:\n"
        '    - match: {paths: ["plans/q*/**"]}\n      require: [{count: 2}]\n'
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        "  echo: {kind: echo}\n"
        f"  bad: {{kind: exec, argv: {bad}, {env}}}\n"
    )


def _plan(slug: str, tag: str | None = None, status: str = "pending_approval") -> str:
    tag = tag or slug
    if slug in FAILING:
        return (
            plan_text(tag, status=status)
            .replace("tool: rec", "tool: bad")
            .replace("name: rec", "name: bad")
        )
    gate = (
        '  - id: 2\n    tool: rec\n    why: "second, gated"\n    requires_approval: true\n'
        f'    params:\n      tag: "{tag}-2"\n'
    )
    return plan_text(tag, status=status, extra_actions=gate if slug in GATES else "")


LEGACY = LEGACY_PLAN.replace("{status}", "pending_approval")

RESPELLED = RESPELLED_PLAN.replace("{status}", "pending_approval")

#: vid -> (calls of its tag wanted at the end, statuses accepted for plans/<vid> at the end)
REJ = (0, {"rejected"})
ABO = (1, {"aborted"})
RUN = (1, {"completed"})
WANT: dict[str, tuple[int, set[str]]] = {
    # -- an allowed approver's rejection, then the rejected version brought back -----------
    "rvrev": REJ,  # Alice rejects; the agent `git revert`s her commit; Bob approves
    "rvrevf": REJ,  # the same revert rebase-merged by the forge; Bob approves
    "cpslug": REJ,  # Alice rejects; the agent adds the same text at plans/cpslug-2
    "cpfull": REJ,  # ... the whole rejected file (frozen:, status) copied, set pending
    "cpresp": REJ,  # ... respelled: flow style, key order, comments, created, metadata
    "cplegacy": REJ,  # ... the `$<inputs.who>` written `${inputs.who}` (converted at freeze)
    "cpmd": REJ,  # ... as plans/cpmd-2/PLAN.md (one yaml block), converted by the daemon
    "cpdeep": REJ,  # ... moved with `git mv` to plans/deep/a/cpdeep as PLAN.yaml, pending
    "rename": REJ,  # ... PLAN.yml renamed PLAN.yaml in place, pending
    "readd": (
        0,
        {"rejected", "pending_approval"},
    ),  # ... folder deleted (pass), then the same text re-added at the slug
    "mergeback": REJ,  # ... the agent's merge of a branch forked before, resolved to pending
    "brrev": REJ,  # Alice rejects on her branch, the agent reverts it there, Bob merges
    "pushrjok": REJ,  # one push: Carol rejects, Bob approves
    "pushrjpend": REJ,  # one push: Carol rejects, Carol sets pending again, Bob approves
    "flipself": REJ,  # one push: Alice rejects, then Alice approves
    "rjedit": REJ,  # Alice rejects; the agent edits (v2) and sets pending; Bob approves v2
    "rjdraft": REJ,  # Alice rejects; the agent sets draft, then pending; Bob approves
    # -- the plan's author withdraws ----------------------------------------------------------
    "authrj": REJ,  # the agent rejects its own plan, reverts that; Bob approves
    "sqcarol": REJ,  # a squash by the forge adding the plan `rejected`, author Carol; copied
    # -- quorum --------------------------------------------------------------------------------
    "qpart": REJ,  # Bob votes; the agent (author) rejects; Carol votes
    "qpartc": REJ,  # Bob votes; Bob rejects his own vote's plan; Carol votes
    "qpartm": RUN,  # control: Bob votes; Mallory rejects (ignored); Carol votes
    # -- not entitled -------------------------------------------------------------------------
    "mrj": RUN,  # Mallory rejects (ignored, reported); Bob approves: runs once
    "notesrj": RUN,  # Mallory writes NOTES.md in the folder, then rejects; Bob approves
    "cmtrj": RUN,  # Mallory adds a YAML comment (hash kept), then rejects; Bob approves
    "fgrj": RUN,  # the forge (noreply) authors a web-editor rejection; Bob approves
    # -- aborts ---------------------------------------------------------------------------------
    "gateab": ABO,  # paused at the gate; the agent (author) aborts; Bob answers the gate
    "gateabm": (1, {"completed"}),  # paused; Mallory aborts (ignored); Bob answers: runs
    "gateabrev": ABO,  # paused; Carol aborts, the agent reverts it in the same push; Bob
    "gateabrb": ABO,  # paused; Carol's abort on her branch rebase-merged by the forge; Bob
    "abfirst": (0, {"aborted"}),
    "failab": (1, {"aborted"}),  # failed; the agent (author) aborts; Bob's resume: no rerun
    "failabm": (2, {"failed"}),  # control: failed; Mallory aborts (ignored); Bob resumes
    # -- a pull request whose branch holds the rejection, merged with an evil resolution -----
    "evilmerge": REJ,  # Carol rejects on the PR; Bob's merge resolves it to pending; Bob
    "evilmergeap": REJ,  # ... Bob's merge resolves it to approved (then approves again)
    "evilmergem": REJ,  # ... Mallory's merge resolves it to pending; Bob approves
    "prmove": (
        0,
        {"rejected", "pending_approval"},
    ),  # Carol rejects plans/prmove-x on the PR, the agent moves it, merged
    # -- the author's right after someone else re-made the content -----------------------------
    "undoauth": REJ,  # agent v1, v2; Mallory reverts to v1; the agent rejects v1; Bob
    "readdm": REJ,  # the agent deletes its plan; Mallory re-adds it; the agent rejects; Bob
    # -- spellings of the rejecting edit ----------------------------------------------------
    "rjwithedit": REJ,  # Alice edits v2 and rejects in one commit; agent reverts it; Bob
    "rjquoted": REJ,  # status: "rejected"
    "rjcomment": REJ,  # status: rejected  # not now
    "rjflow": REJ,  # plan: {name, task, status: rejected} in flow style
    "rjcrlf": REJ,  # the whole file saved with CR LF by Alice's editor
    # -- a copier's rejection -------------------------------------------------------------------
    "mcopyrj": RUN,  # Mallory copies the plan elsewhere already `rejected`; Bob approves
    "chkok": (0, {"pending_approval"}),  # the control for `check` (never approved on main)
    # -- the author's right after someone else re-made (or copied) the content ---------------
    "copystrip": REJ,  # Mallory copies the agent's plan elsewhere; the agent rejects; Bob
    "davundo": REJ,  # Dave's v1, his v2; the agent reverts to v1; Dave rejects v1; Bob
    "davreadd": REJ,  # Dave's plan; the agent deletes it, then re-adds it; Dave rejects; Bob
    "davcopy": REJ,  # Dave's plan; the agent copies it elsewhere; Dave rejects his; Bob
    "davab": ABO,  # Dave's gate plan paused; the agent copies it elsewhere; Dave aborts; Bob
    "undoself": REJ,  # control: agent v1, v2, the agent itself reverts to v1, rejects; Bob
    "davself": REJ,  # control: Dave copies his own plan elsewhere, rejects his; Bob
    "davcopydel": REJ,  # the agent copies Dave's plan, then deletes the copy; Dave rejects; Bob
    "davmerged": REJ,  # the agent's copy arrives on a branch Bob merges; Dave rejects; Bob
    "davcpcarol": REJ,  # Carol (an approver) copies Dave's plan; Dave rejects; Bob
    "davrjcp": REJ,  # control: Dave rejects first; then the agent copies it, sets pending; Bob
    "qdav": REJ,  # Dave's quorum plan: Bob votes; the agent copies it; Dave rejects; Carol
    "davcase": REJ,  # control: Dave rejects as DAVE@EXAMPLE.COM (no copy); Bob approves
    "davcli": REJ,  # the agent copies Dave's plan; Dave runs `plangate reject`; Bob approves
    "davcli0": REJ,  # control: Dave runs `plangate reject` on his plan (no copy); Bob
    "coedit": REJ,  # the agent's plan; Dave edits it (v2); the agent rejects v2; Bob
    "coedit2": REJ,  # Dave's plan; the agent edits it (v2); Dave rejects v2; Bob
    "davmv": REJ,  # control: the agent `git mv`s Dave's plan (bytes kept); Dave rejects; Bob
    "davmd": REJ,  # control: Dave's PLAN.md converted by the daemon; Dave rejects; Bob
    "davlegacy": REJ,  # control: Dave's `${...}` plan rewritten at freeze; Dave rejects; Bob
    # -- other statuses ---------------------------------------------------------------------
    "abpend": RUN,  # documented: Carol's `aborted` of a pending plan is ignored; Bob approves
    "rjdraftfirst": REJ,  # a draft; Alice rejects it; the agent submits it; Bob approves
    # -- the same rewrites, for self-approval (the author is an approver) ------------------
    "carolmd": (0, {"pending_approval"}),  # Carol's PLAN.md converted; Carol approves
    "carollegacy": (0, {"pending_approval"}),  # Carol's `${...}` plan rewritten; she approves
    "carolmv": (0, {"pending_approval"}),  # Carol's plan `git mv`d by the agent; she approves
}
DAVE = ("Dave", "dave@example.com")
#: plans Dave (a human author, no approver) writes in pass A
DAVES = {"davundo", "davreadd", "davcopy", "davab", "davself", "davcopydel", "davmerged"}
DAVES |= {"davcpcarol", "davrjcp", "qdav", "davcase", "davcli", "davcli0", "davmv", "davmd"}
DAVES |= {"davlegacy", "coedit2"}
#: vids whose gated action 2 counts separately (its tag ``<vid>-2``): runs wanted
GATE2 = {"gateab": 0, "gateabm": 1, "gateabrev": 0, "gateabrb": 0, "davab": 0}
VIDS = list(WANT)
#: copies: the other plan folder each vid puts its version in
COPY = {
    "cpslug": "cpslug-2",
    "cpfull": "cpfull-2",
    "cpresp": "cpresp-2",
    "cplegacy": "cplegacy-2",
    "cpmd": "cpmd-2",
    "cpdeep": "deep/a/cpdeep",
    "sqcarol": "sqcarol-2",
    "mcopyrj": "mcopyrj-m",
    "davmv": "davmv-moved",
    "carolmv": "carolmv-moved",
}


def _c2(lab: Lab, msg: str, author: tuple[str, str], committer: tuple[str, str]) -> str:
    lab.git("add", "-A")
    lab.extra_env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
    try:
        lab.git("commit", "-q", "--allow-empty", "-m", msg, who=author)
    finally:
        lab.extra_env = {}
    return lab.head()


def _set(lab: Lab, slug: str, status: str, fname: str = "PLAN.yml") -> None:
    """Set the status as an editor would: the status line, or in a flow mapping its value."""
    try:
        lab.set_status(slug, status, fname)
    except BenchError:
        path = lab.repo / "plans" / slug / fname
        text = path.read_text(encoding="utf-8")
        new = re.sub(r'status: ("?)\w+("?)', rf"status: \g<1>{status}\g<2>", text, count=1)
        if new == text:
            raise
        path.write_text(new)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    _config(lab)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    passes: list[tuple[str, int, bool, str]] = []
    lab.passes = passes  # type: ignore[attr-defined]
    sha: dict[str, str] = {}

    def step(phase: str) -> None:
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))

    def setc(slug: str, status: str, who: tuple[str, str], fname: str = "PLAN.yml") -> str:
        _set(lab, slug, status, fname)
        return lab.commit(f"{who[0]}: {status} {slug}", who)

    # -- A: the agent writes every plan; the controller freezes them ---------------------------
    original: dict[str, str] = {}
    for v in VIDS:
        if v == "sqcarol" or v in LATE or v in DAVES or v.startswith("carol"):
            continue
        text = _plan(v, status="draft") if v == "rjdraftfirst" else _plan(v)
        if v == "cplegacy":
            text = LEGACY.format(tag=v, ref="$<inputs.who>")
        original[v] = text
        lab.write(v, text)
    lab.commit("agent: plans", AGENT)
    for v in DAVES:
        original[v] = _plan(v)
        if v == "davlegacy":
            original[v] = LEGACY.format(tag=v, ref="${inputs.who}")
        lab.write(v, original[v], "PLAN.md" if v == "davmd" else "PLAN.yml")
    lab.commit("dave: my plans", DAVE)
    lab.write("carolmd", _plan("carolmd"), "PLAN.md")
    lab.write("carollegacy", LEGACY.format(tag="carollegacy", ref="${inputs.who}"))
    lab.write("carolmv", _plan("carolmv"))
    lab.commit("carol: my plans", CAROL)
    step("a")
    got["frozen"] = {v: (lab.plan(v).get("frozen") or {}).get("hash") for v in original}

    # -- B: first decisions ---------------------------------------------------------------------
    # branches forked at the frozen plan (before any rejection)
    lab.branch("mb-mergeback")
    lab.note("mergeback-branch", AGENT)
    lab.git("checkout", "-q", "main")
    # Alice's rejections on the line
    for v in ("rvrev", "rvrevf", "cpslug", "cpfull", "cpresp", "cplegacy", "cpmd", "cpdeep",
              "rename", "readd", "mergeback", "rjedit", "rjdraft"):  # fmt: skip
        sha[v] = setc(v, "rejected", ALICE)
    # Alice rejects on her branch, the agent reverts it there, Bob merges with a merge commit
    lab.branch("brrev-review")
    sha["brrev"] = setc("brrev", "rejected", ALICE)
    lab.git("revert", "--no-edit", sha["brrev"], who=AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge brrev-review", "brrev-review", who=BOB)
    # one push, several decisions
    setc("pushrjok", "rejected", CAROL)
    setc("pushrjok", "approved", BOB)
    setc("pushrjpend", "rejected", CAROL)
    setc("pushrjpend", "pending_approval", CAROL)
    setc("pushrjpend", "approved", BOB)
    setc("flipself", "rejected", ALICE)
    setc("flipself", "approved", ALICE)
    # the author's own rejection
    sha["authrj"] = setc("authrj", "rejected", AGENT)
    # a PR adding a plan with Carol's rejection, squash-merged: author Carol
    lab.branch("pr-sqcarol")
    lab.write("sqcarol", _plan("sqcarol"))
    lab.commit("agent: add sqcarol", AGENT)
    setc("sqcarol", "rejected", CAROL)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--squash", "pr-sqcarol", who=FORGE)
    _c2(lab, "Add sqcarol (#7)\n\nCo-authored-by: Agent <agent@example.com>\n", CAROL, FORGE)
    original["sqcarol"] = _plan("sqcarol")
    # quorum first votes
    for v in ("qpart", "qpartc", "qpartm"):
        setc(v, "approved", BOB)
    # not entitled
    setc("mrj", "rejected", MALLORY)
    lab.put("plans/notesrj/NOTES.md", "review notes\n")
    lab.commit("mallory: notes", MALLORY)
    text = lab.read("cmtrj").replace("available_tools:", "# looked at it\navailable_tools:")
    lab.write("cmtrj", text)
    lab.commit("mallory: comment", MALLORY)
    lab.set_status("fgrj", "rejected")
    _c2(lab, "Update PLAN.yml", FORGE, FORGE)
    # gates: Alice approves, action 1 runs, the run pauses
    for v in GATES:
        setc(v, "approved", ALICE)
    # an abort of an approval not acted on yet
    setc("abfirst", "approved", ALICE)
    setc("abfirst", "aborted", CAROL)
    for v in FAILING:
        setc(v, "approved", ALICE)
    # pull requests: the agent adds the plan, Carol rejects it on the branch
    for v in LATE:
        slug = "prmove-x" if v == "prmove" else v
        lab.branch(f"pr-{v}")
        lab.write(slug, _plan(slug, tag=v))
        lab.commit(f"agent: add {slug}", AGENT)
        setc(slug, "rejected", CAROL)
        if v == "prmove":
            lab.git("mv", "plans/prmove-x", "plans/prmove")
            lab.set_status("prmove", "pending_approval")
            lab.commit("agent: better name", AGENT)
        lab.git("checkout", "-q", "main")
        resolved = {"evilmergeap": "approved", "prmove": None}.get(v, "pending_approval")
        who = MALLORY if v == "evilmergem" else BOB

        def resolve(v: str = v, resolved: str | None = resolved) -> None:
            if resolved:
                _set(lab, v, resolved)

        lab.rmerge(who, [f"pr-{v}"], resolve)
    # the agent's v2 of undoauth; the agent drops readdm
    lab.write(
        "undoauth", lab.read("undoauth").replace('tag: "undoauth"', 'tag: "undoauth"\n      v: 2')
    )
    sha["undoauth"] = lab.commit("agent: undoauth v2", AGENT)
    lab.git("rm", "-q", "-r", "plans/readdm")
    lab.commit("agent: drop readdm", AGENT)
    # spellings of Alice's rejection
    text = lab.read("rjwithedit").replace('tag: "rjwithedit"', 'tag: "rjwithedit"\n      v: 2')
    lab.write("rjwithedit", text)
    lab.set_status("rjwithedit", "rejected")
    sha["rjwithedit"] = lab.commit("alice: no, and not like this", ALICE)
    path = lab.repo / "plans/rjquoted/PLAN.yml"
    path.write_text(
        path.read_text().replace("  status: pending_approval", '  status: "rejected"', 1)
    )
    lab.commit("alice: reject rjquoted", ALICE)
    path = lab.repo / "plans/rjcomment/PLAN.yml"
    path.write_text(
        path.read_text().replace("  status: pending_approval", "  status: rejected  # not now", 1)
    )
    lab.commit("alice: reject rjcomment", ALICE)
    path = lab.repo / "plans/rjflow/PLAN.yml"
    text = path.read_text()
    head = 'plan:\n  name: "rjflow"\n  task: "attack variant rjflow"\n  status: pending_approval\n'
    assert text.startswith(head), text[:200]
    flow = 'plan: {name: "rjflow", task: "attack variant rjflow", status: rejected}\n'
    path.write_text(flow + text[len(head) :])
    lab.commit("alice: reject rjflow", ALICE)
    path = lab.repo / "plans/rjcrlf/PLAN.yml"
    text = path.read_text().replace("  status: pending_approval", "  status: rejected", 1)
    path.write_bytes(text.replace("\n", "\r\n").encode())
    lab.commit("alice: reject rjcrlf", ALICE)
    lab.write("copystrip-m", original["copystrip"])
    lab.commit("mallory: a copy for me", MALLORY)
    for v in ("davundo", "undoself"):
        text = lab.read(v).replace(f'tag: "{v}"', f'tag: "{v}"\n      v: 2')
        lab.write(v, text)
        sha[v] = lab.commit(f"v2 of {v}", DAVE if v == "davundo" else AGENT)
    lab.git("rm", "-q", "-r", "plans/davreadd")
    lab.commit("agent: drop davreadd", AGENT)
    lab.write("davcopy-2", original["davcopy"])
    lab.commit("agent: a copy of davcopy", AGENT)
    setc("qdav", "approved", BOB)
    for v in ("qdav", "davcli"):
        lab.write(f"{v}-2", original[v])
        lab.commit(f"agent: a copy of {v}", AGENT)
    for v, who in (("coedit", DAVE), ("coedit2", AGENT)):
        lab.write(v, lab.read(v).replace(f'tag: "{v}"', f'tag: "{v}"\n      v: 2'))
        lab.commit(f"{who[0]}: v2 of {v}", who)
    lab.git("mv", "plans/carolmv", "plans/carolmv-moved")
    lab.commit("agent: a better name", AGENT)
    lab.git("mv", "plans/davmv", "plans/davmv-moved")
    lab.commit("agent: a better name", AGENT)
    setc("abpend", "aborted", CAROL)
    setc("rjdraftfirst", "rejected", ALICE)
    lab.write("davself-2", original["davself"])
    lab.commit("dave: a second one", DAVE)
    lab.write("davcopydel-2", original["davcopydel"])
    lab.commit("agent: a copy of davcopydel", AGENT)
    lab.branch("agent-davmerged")
    lab.write("davmerged-2", original["davmerged"])
    lab.commit("agent: a copy of davmerged", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge agent-davmerged", "agent-davmerged", who=BOB)
    lab.write("davcpcarol-2", original["davcpcarol"])
    lab.commit("carol: a copy of davcpcarol", CAROL)
    setc("davrjcp", "rejected", DAVE)
    # Mallory's copy, already rejected
    lab.write(COPY["mcopyrj"], _plan("mcopyrj", status="rejected"))
    lab.commit("mallory: my copy, rejected", MALLORY)
    step("b")
    got["rows_b"] = lab.rows()

    # -- C: the rejected versions brought back; second steps ---------------------------------
    lab.git("revert", "--no-edit", sha["rvrev"], who=AGENT)
    lab.branch("rv-f")
    lab.git("revert", "--no-edit", sha["rvrevf"], who=AGENT)
    rv = lab.head()
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", rv, who=FORGE)
    lab.write(COPY["cpslug"], original["cpslug"])
    lab.commit("agent: cpslug again", AGENT)
    full = lab.read("cpfull")
    lab.write(COPY["cpfull"], full)
    lab.set_status(COPY["cpfull"], "pending_approval")
    lab.commit("agent: cpfull again", AGENT)
    lab.write(COPY["cpresp"], RESPELLED.format(tag="cpresp"))
    lab.commit("agent: cpresp again", AGENT)
    lab.write(COPY["cplegacy"], LEGACY.format(tag="cplegacy", ref="${inputs.who}"))
    lab.commit("agent: cplegacy again", AGENT)
    lab.write(COPY["cpmd"], original["cpmd"], "PLAN.md")
    lab.commit("agent: cpmd again", AGENT)
    (lab.repo / "plans/deep/a").mkdir(parents=True)
    lab.git("mv", "plans/cpdeep", "plans/deep/a/cpdeep")
    lab.git("mv", "plans/deep/a/cpdeep/PLAN.yml", "plans/deep/a/cpdeep/PLAN.yaml")
    lab.set_status("deep/a/cpdeep", "pending_approval", "PLAN.yaml")
    lab.commit("agent: move cpdeep", AGENT)
    lab.git("mv", "plans/rename/PLAN.yml", "plans/rename/PLAN.yaml")
    lab.set_status("rename", "pending_approval", "PLAN.yaml")
    lab.commit("agent: rename", AGENT)
    lab.git("rm", "-q", "-r", "plans/readd")
    lab.commit("agent: drop readd", AGENT)

    def resolve_back() -> None:
        lab.write("mergeback", lab.git("show", "mb-mergeback:plans/mergeback/PLAN.yml"))

    lab.rmerge(AGENT, ["mb-mergeback"], resolve_back)
    lab.write("rjedit", lab.read("rjedit").replace('tag: "rjedit"', 'tag: "rjedit"\n      v: 2'))
    lab.set_status("rjedit", "pending_approval")
    lab.commit("agent: rjedit v2", AGENT)
    setc("rjdraft", "draft", AGENT)
    lab.git("revert", "--no-edit", sha["authrj"], who=AGENT)
    lab.write(COPY["sqcarol"], original["sqcarol"])
    lab.commit("agent: sqcarol again", AGENT)
    setc("qpart", "rejected", AGENT)
    setc("qpartc", "rejected", BOB)
    setc("qpartm", "rejected", MALLORY)
    setc("notesrj", "rejected", MALLORY)
    setc("cmtrj", "rejected", MALLORY)
    got["pause"] = {
        v: (lab.plan(v).get("plan") or {}).get("status") == "awaiting_approval" for v in GATES
    }
    setc("gateab", "aborted", AGENT)
    setc("gateabm", "aborted", MALLORY)
    ab = setc("gateabrev", "aborted", CAROL)
    lab.git("revert", "--no-edit", ab, who=AGENT)
    lab.branch("gateabrb-review")
    ab = setc("gateabrb", "aborted", CAROL)
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", ab, who=FORGE)
    setc("failab", "aborted", AGENT)
    setc("failabm", "aborted", MALLORY)
    lab.git("revert", "--no-edit", sha["undoauth"], who=MALLORY)
    lab.write("readdm", original["readdm"])
    lab.commit("mallory: bring readdm back", MALLORY)
    lab.git("revert", "--no-edit", sha["rjwithedit"], who=AGENT)
    setc("copystrip", "rejected", AGENT)
    lab.git("revert", "--no-edit", sha["davundo"], who=AGENT)
    lab.git("revert", "--no-edit", sha["undoself"], who=AGENT)
    lab.write("davreadd", original["davreadd"])
    lab.commit("agent: bring davreadd back", AGENT)
    setc("davcopy", "rejected", DAVE)
    lab.git("rm", "-q", "-r", "plans/davcopydel-2")
    lab.commit("agent: drop the copy", AGENT)
    for v in ("davself", "davcopydel", "davmerged", "davcpcarol", "davmd", "davlegacy"):
        setc(v, "rejected", DAVE)
    setc("davmv-moved", "rejected", DAVE)
    setc("qdav", "rejected", DAVE)
    setc("coedit", "rejected", AGENT)
    setc("coedit2", "rejected", DAVE)
    setc("davcase", "rejected", ("DAVE", "DAVE@EXAMPLE.COM"))
    got["cli"] = {}
    for v in ("davcli", "davcli0"):
        lab.extra_env = identity(DAVE)
        try:
            out = lab.cli(
                "reject",
                "--config",
                str(lab.config),
                "-m",
                "not this one",
                f"plans/{v}",
                cwd=lab.repo,
            )
        finally:
            lab.extra_env = {}
        got["cli"][v] = (
            out.returncode,
            out.stdout[-600:],
            out.stderr[-600:],
            lab.log_rows("%an%x00%s%x01", "-1")[0],
        )
    setc("abpend", "approved", BOB)
    for v in ("carolmd", "carollegacy", "carolmv-moved"):
        setc(v, "approved", CAROL)
    setc("rjdraftfirst", "pending_approval", AGENT)
    lab.write("davrjcp-2", original["davrjcp"])
    lab.commit("agent: a copy of davrjcp", AGENT)
    setc("davrjcp", "pending_approval", AGENT)
    lab.write("davab-2", lab.git("show", "HEAD:plans/davab/PLAN.yml"))
    _set(lab, "davab-2", "pending_approval")
    lab.commit("agent: a copy of davab", AGENT)
    step("c")
    got["rows_c"] = lab.rows()

    # -- D: Bob (Carol for a quorum) approves what must stay stopped ---------------------------
    lab.write("readd", original["readd"])
    lab.commit("agent: readd", AGENT)
    setc("rjdraft", "pending_approval", AGENT)
    setc("undoauth", "rejected", AGENT)
    setc("readdm", "rejected", AGENT)
    setc("davundo", "rejected", DAVE)
    setc("davreadd", "rejected", DAVE)
    setc("undoself", "rejected", AGENT)
    setc("davab", "aborted", DAVE)
    setc("qdav", "approved", CAROL)
    for v in ("davcase", "davcli", "davcli0", "coedit", "coedit2"):
        setc(v, "approved", BOB)
    for v in (
        "davself",
        "davcopydel",
        "davmerged",
        "davcpcarol",
        "davrjcp",
        "davmd",
        "davlegacy",
        "davmv-moved",
        "rjdraftfirst",
    ):
        setc(v, "approved", BOB)
    for v in (
        "failab",
        "failabm",
        *LATE,
        "rjwithedit",
        "rjquoted",
        "rjcomment",
        "rjflow",
        "rjcrlf",
        "mcopyrj",
    ):
        setc(v, "approved", BOB)
    for v in ("copystrip", "davcopy"):
        setc(v, "approved", BOB)
    for v in ("rvrev", "rvrevf", "mergeback", "brrev", "rjedit", "authrj", "pushrjok",
              "pushrjpend", "flipself", "mrj", "notesrj", "cmtrj", "fgrj", "abfirst"):  # fmt: skip
        setc(v, "approved", BOB)
    for v in ("cpslug", "cpfull", "cpresp", "cplegacy", "cpmd", "sqcarol"):
        slug = COPY[v]
        if (lab.repo / "plans" / slug / "PLAN.yml").exists():
            setc(slug, "approved", BOB)
    setc("deep/a/cpdeep", "approved", BOB, "PLAN.yaml")
    setc("rename", "approved", BOB, "PLAN.yaml")
    for v in ("qpart", "qpartc", "qpartm"):
        setc(v, "approved", CAROL)
    for v in GATES:
        setc(v, "approved", BOB)
    step("d")
    # E, F: Bob approves again what reads pending_approval (a refusal sent it back, or it was
    # re-added, re-drafted or copied), and approves the plans the agent rejected in D
    got["again"] = []

    def again(phase: str, extra: tuple[str, ...] = ()) -> None:
        todo = list(extra)
        for v in VIDS:
            if v in todo or WANT[v][0] != 0 or v == "chkok" or v.startswith("carol"):
                continue
            try:
                st = (lab.plan(v).get("plan") or {}).get("status")
            except BenchError:
                continue
            if st == "pending_approval":
                todo.append(v)
        for v in todo:
            setc(v, "approved", BOB)
        for v, slug in COPY.items():
            if v in ("mcopyrj", "carolmv"):
                continue
            for fname in ("PLAN.yml", "PLAN.yaml"):
                if (lab.repo / "plans" / slug / fname).exists():
                    data = lab.plan(slug, filename=fname)
                    if (data.get("plan") or {}).get("status") == "pending_approval":
                        todo.append(slug)
                        setc(slug, "approved", BOB, fname)
        got["again"].append((phase, todo))
        step(phase)

    again("e", ("undoauth", "readdm", "davundo", "davreadd", "undoself"))
    again("f")
    lab.ran = {v: len(lab.calls(v)) for v in VIDS}  # type: ignore[attr-defined]
    got["gate_ran"] = {v: len(lab.calls(f"{v}-2")) for v in GATES}
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    got["codes"] = {v: lab.codes(v) for v in VIDS}
    got["copies"] = {}
    for v, slug in COPY.items():
        row = lab.got_rows.get(f"plans/{slug}", {})
        got["copies"][v] = {"row": row, "codes": lab.codes(slug)}
    got["shows"] = {
        v: lab.cli("show", "--config", str(lab.config), str(lab.repo / "plans" / v)).stdout
        for v in SHOWN
    }
    lab.subjects_of = {v: lab.subjects(v) for v in VIDS}  # type: ignore[attr-defined]
    lab.subjects_of.update({f"copy:{v}": lab.subjects(s) for v, s in COPY.items()})
    got["clone"] = clone_audit_got(lab, root)
    # `check` on pull requests that would bring a withdrawn version back
    checks: dict[str, Any] = {}
    lab.branch("chk-cp")
    lab.write("chk-cp", lab.git("show", "main:plans/cpfull/PLAN.yml"))
    _set(lab, "chk-cp", "approved")
    lab.commit("bob: approve chk-cp", BOB)
    checks["cp"] = lab.check_plans("chk-cp", BOB[1])
    lab.branch("chk-rv", "main")
    setc("cpslug", "pending_approval", AGENT)
    setc("cpslug", "approved", BOB)
    checks["rv"] = lab.check_plans("chk-rv", BOB[1])
    lab.branch("chk-ok", "main")
    setc("chkok", "approved", BOB)
    checks["ok"] = lab.check_plans("chk-ok", BOB[1])
    lab.branch("chk-rj", "main")
    setc("chkok", "rejected", CAROL)
    setc("chkok", "approved", BOB)
    checks["rj"] = lab.check_plans("chk-rj", BOB[1])
    lab.branch("chk-ab", "main")
    setc("chkok", "approved", ALICE)
    setc("chkok", "aborted", AGENT)
    checks["ab"] = lab.check_plans("chk-ab", BOB[1])
    lab.git("checkout", "-q", "main")
    got["checks"] = checks
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r119-approve-atk119w", _build)


WITHDRAWN = [v for v in VIDS if WANT[v] in (REJ, ABO)]
IDS = [*VIDS, *[f"{v}:status" for v in VIDS], *[f"{v}:audit" for v in VIDS]]
IDS += [f"{v}:agree" for v in VIDS] + ["passes"]
#: copies of a version an allowed approver withdrew: the exact code once Bob approves them
VETOED = ["cpslug", "cpfull", "cpresp", "cplegacy", "cpmd", "cpdeep", "sqcarol"]
IDS += [f"{v}:code" for v in VETOED] + [f"{v}:copyrow" for v in VETOED]
#: plans the file says approved (or pending) while the controller holds them withdrawn: the
#: status row names the ignored status change
ILLEGAL = ["rvrev", "rvrevf", "mergeback", "rjedit", "authrj", "rjwithedit", "evilmerge"]
IDS += [f"{v}:illegal" for v in ILLEGAL]
#: non-entitled withdrawals: reported E_APPROVER_NOT_ALLOWED (status) and flagged by the audit
NOTALLOWED = ["mrj", "notesrj", "cmtrj", "fgrj", "qpartm", "gateabm", "failabm"]
IDS += [f"{v}:reported" for v in NOTALLOWED] + [f"{v}:flagged" for v in NOTALLOWED]
#: `plangate show` of a withdrawn plan whose file says otherwise
SHOWN = ["rvrev", "mergeback", "rjflow", "gateab", "failab"]
IDS += [f"{v}:show" for v in SHOWN]
#: `plangate check --as bob` of pull requests: (plan, outcome wanted to be "start" or not, code)
CHECKS = {
    "cp": ("plans/chk-cp", False, "E_VERSION_WITHDRAWN"),
    "rv": ("plans/cpslug", False, None),
    "ok": ("plans/chkok", True, None),
    "rj": ("plans/chkok", False, None),
    "ab": ("plans/chkok", False, None),
}
IDS += [f"check:{k}" for k in CHECKS]
#: a withdrawal that counted: the fresh-clone audit lists it under `decisions`
DECIDED = [v for v in VIDS if WANT[v] in (REJ, ABO) and v not in ("sqcarol", "undoself")]
IDS += [f"{v}:decision" for v in DECIDED]
SELF = ["carolmd", "carollegacy", "carolmv"]
#: `plangate reject` run by Dave, the plan's author: it commits his rejection (exit 0)
IDS += ["davcli:cli", "davcli0:cli"]
IDS += [f"{v}:self" for v in SELF]
CLS_COPY = "author-withdrawal-lost-to-another-copy"
CLS_ROW = "withdrawn-version-copy-shown-waiting"
CLS_DRAFT = "draft-rejection-ignored"
CLS_COEDIT = "plan-author-loses-withdrawal-to-coeditor"
_WHY_COEDIT = (
    "the plan's writer rejects it after another person edited it (v2 frozen): the agent "
    "after Dave's one-param edit, Dave after the agent's: E_APPROVER_NOT_ALLOWED ('only an "
    "allowed approver or an author of the plan may'), ignored; Bob's approval runs v2. "
    "docs/approvals.md gives the right to a version's producers; SPEC §4 to an author of "
    "the plan"
)
#: the author's withdrawal ignored once someone else also made the content (a copy elsewhere,
#: an undo to it, a re-add): the version then runs on an allowed approver's approval
LOST = ["undoauth", "readdm", "copystrip", "davundo", "davreadd", "davcopy", "davab"]
LOST += ["davcopydel", "davmerged", "davcpcarol", "qdav", "davcli"]
_CLI = {"davcli:cli": "and `plangate reject` run by Dave refuses to commit his rejection"}
_WHY_COPY = (
    "the plan's author (the agent, or Dave, a human author) rejects (aborts) it after "
    "someone else made the same content too (a copy at another slug by Mallory, the agent or "
    "Carol, even deleted since or merged from a branch; an undo to it; a re-add): "
    "'E_APPROVER_NOT_ALLOWED: <author> set status rejected ..., but only an allowed approver "
    "or an author of the plan may; ignored', and Bob's approval (gate answer) runs the "
    "version its author withdrew; the fresh-clone audit agrees (no decision listed)"
)
_WHY_ROW = (
    "a frozen copy of a version an allowed approver withdrew reads 'pending_approval - "
    "waiting for an approval' in `status` (no E_VERSION_WITHDRAWN) until an approval is "
    "refused; MCP submit refuses the same copy E_VERSION_WITHDRAWN (round 118)"
)
_WHY_DRAFT = (
    "Alice (an allowed approver) rejects the agent's draft: 'E_ILLEGAL_TRANSITION: "
    "alice@example.com set status rejected (from draft) ...; ignored'; the agent submits "
    "that very version (`pending_approval`), the controller freezes it and Bob's approval "
    "runs it; a plan ADDED `rejected` is rejected, a draft rejected is not"
)
_SEEN: dict[str, tuple[str, str]] = {
    **{
        f"{v}{k}": (CLS_COEDIT, _WHY_COEDIT)
        for v in ("coedit", "coedit2")
        for k in ("", ":status", ":audit", ":decision")
    },
    **{f"rjdraftfirst{k}": (CLS_DRAFT, _WHY_DRAFT) for k in ("", ":status", ":audit", ":decision")},
    **{
        f"{v}{k}": (CLS_COPY, _WHY_COPY)
        for v in LOST
        for k in ("", ":status", ":audit", ":decision")
    },
    **{f"{v}:copyrow": (CLS_ROW, _WHY_ROW) for v in VETOED},
    **{i: (CLS_COPY, f"{_WHY_COPY}; {w}") for i, w in _CLI.items()},
}
#: fixed (2026-12-06): _SEEN keeps what was seen; the copy and co-edit classes by fix122w (a
#: plan's authors are the originators of its version and of those it was edited from: a
#: re-making elsewhere or in place removes nobody; the veto by hash is the producers')
_FIXED = {CLS_ROW, CLS_DRAFT, CLS_COPY, CLS_COEDIT}
BROKEN: dict[str, Any] = {
    i: pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 119: {c}: {w}")
    for i, (c, w) in _SEEN.items()
    if c not in _FIXED
}


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round119_atk119w(lab: Any, vid: str) -> None:
    got = lab.got
    clone = got["clone"]["report"]
    if vid == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, _, kind = vid.partition(":")
    if v == "check":
        plan, start, code = CHECKS[kind]
        told = got["checks"][kind]
        outcome, codes = told.get(plan, (None, []))
        assert plan in told, told
        assert (outcome == "start") is start, (outcome, codes, told)
        if code:
            assert code in codes, (outcome, codes)
        return
    row = lab.got_rows.get(f"plans/{v}", {})
    want_runs, want_status = WANT[v]
    ran = lab.ran.get(v, 0)
    slugs = {f"plans/{v}"} | ({f"plans/{COPY[v]}"} if v in COPY else set())
    valid = [
        e for e in clone.get("executions", []) if e.get("plan") in slugs and e.get("approval_valid")
    ]
    if kind == "code":
        assert "E_VERSION_WITHDRAWN" in got["copies"][v]["codes"], got["copies"][v]["row"]
        return
    if kind == "copyrow":  # before any approval: the copy's row says it can never run
        crow = got["rows_c"].get(f"plans/{COPY[v]}", {})
        assert "E_VERSION_WITHDRAWN" in json.dumps(crow), brief(crow, 5)
        return
    if kind == "illegal":
        assert row.get("status") == "rejected", brief(row, 5)
        assert "E_ILLEGAL_TRANSITION" in json.dumps(row), brief(row, 5)
        return
    if kind == "reported":
        assert "E_APPROVER_NOT_ALLOWED" in json.dumps(got["rows_c"].get(f"plans/{v}", {})) or (
            "E_APPROVER_NOT_ALLOWED" in json.dumps(row)
        ), (brief(got["rows_c"].get(f"plans/{v}", {}), 6), brief(row, 6))
        return
    if kind == "flagged":
        found = [
            f
            for f in clone.get("findings", [])
            if f.get("plan") == f"plans/{v}" and "withdraw-not-allowed" in json.dumps(f)
        ]
        assert found, [f for f in clone.get("findings", []) if f.get("plan") == f"plans/{v}"]
        return
    if kind == "cli":
        rc, out, err, last = got["cli"][v]
        assert rc == 0 and last[0] == "Dave", (rc, out, err, last)
        return
    if kind == "self":
        assert "E_SELF_APPROVAL" in got["codes"][v] + json.dumps(
            got["copies"].get(v, {}).get("codes", "")
        ), (brief(row, 5), got["copies"].get(v))
        return
    if kind == "decision":
        kinds = {"reject", "abort-request"}
        slugs_ = {f"plans/{v}", f"plans/{COPY.get(v, v)}"}
        mine = [
            d
            for d in clone.get("decisions", [])
            if d.get("plan") in slugs_ and d.get("kind") in kinds
        ]
        assert mine, (
            "no withdrawal listed",
            [d for d in clone.get("decisions", []) if d.get("plan") in slugs_],
        )
        return
    if kind == "show":
        text = got["shows"][v]
        want = next(iter(want_status))
        assert f"Status:  {want}" in text, text[:600]
        return
    if kind == "status":
        if v in COPY and v not in ("sqcarol",):
            return
        assert row.get("status") in want_status, brief(row, 5)
        return
    if kind == "agree":
        starts = [s for s in lab.subjects_of.get(v, []) if s.startswith("plangate: start ")]
        starts += [
            s for s in lab.subjects_of.get(f"copy:{v}", []) if s.startswith("plangate: start ")
        ]
        assert len(valid) == len(starts), (starts, valid, clone.get("findings"))
        return
    if kind == "audit":
        if v in GATES:
            gate = [e for e in valid if e.get("approval_kind") == "gate"]
            assert len(gate) == GATE2[v], (valid, clone.get("findings"))
            return
        assert len(valid) == want_runs, (ran, valid, clone.get("findings"))
        return
    if v in FAILING:
        assert ran == want_runs, (ran, brief(row, 5))
        return
    if v in GATES:
        assert got["pause"].get(v), ("never paused", brief(got["rows_b"].get(f"plans/{v}", {})))
        assert ran == 1 and got["gate_ran"][v] == GATE2[v], (ran, got["gate_ran"][v], brief(row))
        return
    assert ran == want_runs, (ran, brief(row, 5), got["copies"].get(v))
