"""Round 98, approval and policy (atk98a): what r97appr's ``Lifecycle.impossible`` calls
POSSIBLE. Commits under the controller's name whose status change IS one a controller event
makes, at the wrong moment, made before the controller's first pass (trust on first use),
under a quorum of 2; approvals of one hash across an edit and its revert (A-B-A); and
``plangate check`` against squash merges, rebases and approval commits authored by one
person and committed by another.

Every lab is its own repo (advkit ``Lab``), built once per module (``shared``), two at a
time. Ids: ``<slug>:ran`` counts the recording tool's calls against what the promise allows;
``<slug>:audit`` runs ``plangate audit --json`` in a fresh clone (no config) and asserts it
reads the records (no ``code``) and calls the plan's start valid exactly when it ran;
``<slug>:check`` that ``plangate check --base main --head <branch> --as <merger> --format
json`` said ``start`` exactly when the plan then ran (the prediction of the way it landed:
``fast_forward`` where given for fast-forwards, the merge commit's ``outcome`` otherwise).

Lab ``q`` (``plans/**`` needs ``{count: 2}``; every plan the agent's). Before the first pass
Mallory commits under the controller's full identity (author and committer
``plangate@localhost``), one commit per plan: ``rf`` ``plangate: refuse plans/<s>`` setting
``failed`` (a refusal of a resume may leave it so) with no seal; ``rs`` the same with a
seal-shaped ``Controller-Seal:``; ``rw`` ``plangate: refuse`` setting ``awaiting_approval``
(no gate exists); ``aw`` ``plangate: await-approval`` setting ``awaiting_approval``, sealed;
``st`` ``plangate: start`` setting ``executing``, sealed; ``ck`` ``plangate: checkpoint``
setting ``executing``, sealed; ``pa`` ``plangate: partial`` leaving ``pending_approval``
and writing ``approval: {status: partial, approvals: [Bob]}``; ``fz`` ``plangate: freeze``
writing the right ``frozen:`` block and the same forged partial of Bob's; ``cp``
``plangate: complete`` setting ``completed``, sealed; ``fl`` ``plangate: fail`` setting
``failed``, sealed. Each forgery has two plans: ``<f>1`` Alice alone then approves from the
forged status (a resume / gate approval / partial completion: must not run, one vote of
two), ``<f>2`` the agent sets ``pending_approval`` again after the first pass and Alice then
Bob approve (the forgery is anyone's, so two votes run it once). ``st``/``ck`` also ``<f>0``:
nobody votes (never runs). ``ab``: Alice votes, the agent edits the plan, a pass, reverts
the edit (the first hash again), a pass, Bob votes: ``Any change to hashed content voids the
approvals collected so far`` (must not run); ``ab2`` the same then Carol votes (runs).
Controls ``c1`` (Alice alone, 0) and ``c2`` (Alice, Bob: 1).

Lab ``c`` (default policy; every plan Bob's, Bob an allowed approver). Alice approves on a
branch each; ``sqc`` Carol squash-merges it (``git merge --squash`` + her commit); ``sqb``
Bob squash-merges it (self-approval); ``rbc``: main moves, Carol rebases the branch, fast-
forward; ``rbb``: Bob rebases it; ``acb``: the approval authored Alice, committed by Bob,
fast-forward; ``mgb``/``mgc``: merged ``--no-ff`` by Bob / Carol; ``ffa`` (control): Alice's
branch fast-forwarded. Each ``:check`` is taken after the rebase (on the branch that lands).

More of lab ``q``: ``sh`` a forged ``plangate: start`` that writes the plan's real
``frozen:`` block and names its hash (``Plan-Hash:``); ``sx`` also an ``execution:`` block
(action 1 ``pending``); ``sh1``/``sx1`` Alice alone approves from what the file then says,
``sh2``/``sx2`` as the other ``<f>2``. ``<f>0`` (``st0``, ``ck0``, ``cp0``, ``fl0``, ``aw0``,
``rf0``, ``sh0``, ``sx0``): nobody votes; ``:shown`` asserts ``plangate status --json`` says
``pending_approval`` after the first passes. ``l*`` (``lst2``, ``lck2``, ``lcp2``, ``lrf2``,
``lrw2``, ``lfl2``): the same forgeries made AFTER the first pass (the controller's record
exists), then reset and two votes. ``s*`` (``sst2``, ``scp2``, ``srf2``, ``ssh1``, ``sst0``,
``srf0``, ``ssh0``): the forgeries on Mallory's side branch, merged ``--no-ff`` by her
before the first pass. Lab ``s``: a seal-shaped forged ``start`` before the first pass
(``ss:refused``: the pass exits non-zero ``E_STORAGE``, no traceback; ``ss:ran``: 0).
``:check`` in lab ``q``: Bob's second vote on a branch, ``check --as bob``, fast-forwarded.

Seen (round 98): 158 ids, 25 broke (strict xfails) in 2 classes; 133 held.

- BROKE ``tofu-unsealed-run`` (19 ids: ``st2``, ``ck2``, ``cp2``, ``fl2``, ``aw2``, ``sh1``,
  ``sx1`` ``:ran``; ``st0``, ``ck0``, ``cp0``, ``fl0``, ``aw0``, ``sh0``, ``sx0`` ``:shown``;
  ``sh1``, ``sx1``, ``sh2``, ``sx2`` ``:audit``; ``sh2``, ``sx2`` ``:check``). An UNSEALED
  run event under the controller's full identity (``plangate: start``/``checkpoint``/
  ``complete``/``fail``/``await-approval``), committed on the first-parent line before the
  controller's first pass, was taken as the controller's own: ``status --json`` showed
  ``executing``/``completed``/``failed``/``awaiting_approval`` with ``last_event`` the forged
  subject; Alice's approvals ``E_ILLEGAL_TRANSITION: alice@example.com set status approved
  (from executing) ...; ignored``; never ran (``st2``...). Worst, ``sh``/``sx`` (the forged
  start naming the real hash): the first pass committed its own SEALED ``plangate: fail
  plans/sh0`` ``E_ACTION_IN_DOUBT: the journal of this run ... is missing`` (log "Approved by
  —") for a plan nobody approved; then ONE vote (Alice's, read as a resume: ``approval:
  {status: approved, resume: true}``) ran ``sh1``/``sx1`` under a rule needing
  ``{count: 2}`` (``rec`` called once; ``start`` then ``complete``). The fresh-clone audit
  disagreed with the controller each time: ``controller-unexplained ... records start
  plans/sh1 with no Controller-Seal:``, the controller's real fail ``controller-unexplained
  ... no cause on the branch``, the run ``start-without-approval ... quorum: ... needs 1 more
  approval``; ``check`` (git alone) likewise said no ``start`` for ``sh2``/``sx2`` that ran.
  Likely root: without a record (a new state directory) ``statedir.is_own_commit`` decides by
  the identity alone, and ``Lifecycle._is_controller`` returns ``own_commit(sha)`` before
  the git-alone rules (``unsealed_run_events``, ``_unmatched_events``) that the audit and
  ``check`` apply; ``impossible`` (r97appr) only rejects statuses no event makes.
  To weigh: docs/operations.md says a branch with no sealed controller commit "starts as
  before (trust on first use)" (for pre-seal history); round 97 still counted ``fx`` (the
  same window) broke. Beyond adoption: the adopted start had no approval ("Approved by —"),
  yet one resume vote ran it under a 2-vote rule.
- BROKE ``refuse-no-cause`` (4 ids + 2 below: ``rf2``, ``rw2`` ``:ran``; ``rf0:shown``; also seen on
  ``rf1``/``rw1`` which correctly stayed 0). An unsealed ``plangate: refuse plans/<s>``
  before the first pass that set a never-started, never-frozen plan ``failed`` or
  ``awaiting_approval`` (statuses ``EVENT_STATUS['refuse']`` allows whatever the plan's
  state) was adopted by the controller AND by the audit (``illegal: agent@example.com set
  status pending_approval (from failed)``): the author's reset ignored, the plan never
  frozen, Alice's and Bob's approvals refused ``E_PLAN_NOT_FROZEN: the plan has no
  frozen.hash`` with the controller's refuse commit writing ``failed`` again; never ran.
  A veto by no approver. Root: ``records.status_unexplained`` asks only the event/status pair;
  no rule asks whether a refusal could leave ``failed`` (no run) or ``awaiting_approval``
  (no gate), so ``Lifecycle.impossible`` calls it possible.
- Also ``refuse-no-cause``, ``rh`` (the forged ``refuse`` to ``failed`` also writes the
  real ``frozen:`` block; 2 ids: ``rh0:shown`` ``failed``; ``rh1:audit``): Alice's ONE vote
  under the 2-vote rule was read as a resume (``approval: {status: approved, resume:
  true}``) and the controller committed its own sealed ``start`` for it (in ``plangate: 15
  plan events``), then ``plangate: fail plans/rh1`` ``E_ACTION_IN_DOUBT: the journal of this
  run was lost ...: nothing is run`` (``rec`` 0 calls: only the missing journal stopped the
  tool); the audit called that start's approval valid (``approval_kind: resume``,
  ``approval_valid: true``, outcome ``fail``).
- Held: the same forgeries after the first pass (``l*``: ran once on two votes, valid) and on
  a merged side branch (``s*``: ignored; ``ssh1`` not run on one vote); ``iv`` (a forged
  ``invalid``: the author's reset is legal, ran on two votes); ``pa``/``fz`` (a forged
  ``partial``/``freeze`` writing a partial with Bob's vote: Alice alone did not run it, two
  votes did); a seal-shaped forged start refused the new state directory ``E_STORAGE``;
  A-B-A (``ab``: Alice's vote voided by the edit and its revert, Bob's alone ``partial``;
  ``ab2`` ran on Carol's); controls. Lab ``c``: every ``check`` agreed with the controller
  and the audit: squash by Carol (start, ran), squash by Bob and ``--no-ff`` by Bob
  (``refuse`` ``E_SELF_APPROVAL``, not run), rebases by Carol and by Bob (author Alice,
  start, ran), author Alice / committer Bob (start, ran, documented limit without
  signatures), the ``--no-ff`` merge by Carol and the fast-forward control.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import (
    AGENT,
    ALICE,
    BOB,
    BOT,
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

HEX = "7c" * 32


def _check(lab: Lab, head: str, who: str) -> str:
    told = lab.check(head, who)
    return told.stdout + told.stderr


def _forge(lab: Lab, msg: str) -> str:
    lab.git("add", "-A")
    lab.git("commit", "-q", "--allow-empty", "--cleanup=verbatim", "-F", "-", input=msg, who=BOT)
    return lab.head()


def _msg(event: str, slug: str, status: str, sealed: bool) -> str:
    tail = f"\nController-Seal: {HEX}\n" if sealed else "\n"
    return (
        f"plangate: {event} plans/{slug}\n\nRecorded by the controller.\n\n"
        f"Plan: plans/{slug}\nPlan-Status: {status}\n{tail}"
    )


def _hash(lab: Lab, slug: str) -> str:
    res = lab.cli("hash", str(lab.repo / "plans" / slug / "PLAN.yml"))
    return res.stdout.strip().split()[0]


def _append(lab: Lab, slug: str, block: str) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    path.write_text(path.read_text() + block)


#: lab ``q`` forgeries: name -> (event, status written, sealed)
FORGE = {
    "rf": ("refuse", "failed", False),
    "iv": ("invalid", "invalid", False),
    "rw": ("refuse", "awaiting_approval", False),
    "aw": ("await-approval", "awaiting_approval", False),
    "st": ("start", "executing", False),
    "ck": ("checkpoint", "executing", False),
    "pa": ("partial", "pending_approval", False),
    "fz": ("freeze", "pending_approval", False),
    "cp": ("complete", "completed", False),
    "fl": ("fail", "failed", False),
}
QP: dict[str, int] = {}
for _f in FORGE:
    QP[f"{_f}1"] = 0
    QP[f"{_f}2"] = 1
#: forged after the controller's first pass (its record known): the same forgeries, controls
LATE = ["lst2", "lck2", "lcp2", "lrf2", "lrw2", "lfl2"]
#: nobody votes: the forgery must not show as the plan's status (round 67)
NOBODY = ["st0", "ck0", "cp0", "fl0", "aw0", "rf0"]
QP.update({s: 0 for s in NOBODY})
QP.update({s: (0 if s.endswith("1") else 1) for s in LATE})
QP.update({"ab": 0, "ab2": 1, "c1": 0, "c2": 1})


#: a forged start that names the plan's real hash (``frozen:`` and ``Plan-Hash:``); ``sx`` also
#: writes an ``execution:`` block with action 1 ``pending``: nobody approved, nothing may run
FORGE.update({"sh": ("start", "executing", False), "sx": ("start", "executing", False)})
QP.update({"sh0": 0, "sx0": 0, "sh1": 0, "sx1": 0, "sh2": 1, "sx2": 1})
#: ``rh``: a forged ``refuse`` setting ``failed`` that writes the real ``frozen:`` block too
FORGE["rh"] = ("refuse", "failed", False)
QP.update({"rh0": 0, "rh1": 0})
NOBODY += ["sh0", "sx0", "rh0"]

#: forged on a side branch merged --no-ff before the first pass
SIDE = ["sst2", "scp2", "srf2", "sst0", "srf0", "ssh1", "ssh0"]
QP.update({s: (1 if s.endswith("2") else 0) for s in SIDE})
NOBODY += ["sst0", "srf0", "ssh0"]


def _fk(slug: str) -> str | None:
    key = slug[1:3] if slug in LATE or slug in SIDE else slug[:2]
    return key if key in FORGE else None


def _forge_plan(lab: Lab, s: str, agent_commit: str) -> str:
    event, status, sealed = FORGE[_fk(s) or ""]
    if event in ("partial", "freeze"):
        digest = _hash(lab, s)
        if event == "freeze":
            _append(
                lab, s,
                f"frozen:\n  hash: {digest}\n  at: '2026-12-03T00:00:00Z'\n  risk: medium\n"
                "  estimate:\n    seconds: 0.0\n    cost_usd: 0.0\n"
                "  policy:\n    rule: 0\n    require:\n    - group: null\n      count: 2\n",
            )  # fmt: skip
        _append(
            lab, s,
            f"approval:\n  status: partial\n  plan_hash: {digest}\n  approvals:\n"
            f"  - by: {BOB[1]}\n    at: '2026-12-03T00:00:00Z'\n    commit: {agent_commit}\n"
            "  missing: 1 more approval\n",
        )  # fmt: skip
    elif _fk(s) in ("sh", "sx", "rh"):
        digest = _hash(lab, s)
        lab.set_status(s, status)
        _append(
            lab, s,
            f"frozen:\n  hash: {digest}\n  at: '2026-12-03T00:00:00Z'\n  risk: medium\n"
            "  estimate:\n    seconds: 0.0\n    cost_usd: 0.0\n"
            "  policy:\n    rule: 0\n    require:\n    - group: null\n      count: 2\n",
        )  # fmt: skip
        if _fk(s) == "sx":
            _append(
                lab, s,
                "execution:\n  status: executing\n  controller: plangate\n"
                "  started_at: '2026-12-03T00:00:01Z'\n  actions:\n"
                f"  - id: 1\n    key: step:{'0' * 16}\n    status: pending\n    attempts: 0\n",
            )  # fmt: skip
        msg = _msg(event, s, status, sealed).rstrip("\n") + f"\nPlan-Hash: {digest}\n"
        return _forge(lab, msg)
    else:
        lab.set_status(s, status)
    return _forge(lab, _msg(event, s, status, sealed))


QUORUM = """\
rules:
  - match: {paths: ['plans/**']}
    require: [{count: 2}]
"""


def _q(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    lab = Lab(root, approval=QUORUM)
    for s in QP:
        lab.write(s, plan_text(s))
    agent_commit = lab.commit("agent: plans", AGENT)
    forged: dict[str, str] = {}
    notes: dict[str, Any] = {}
    for s in QP:
        if _fk(s) and s not in LATE and s not in SIDE:
            forged[s] = _forge_plan(lab, s, agent_commit)
    # SIDE: the same forgeries on Mallory's branch, merged --no-ff by her (first pass after)
    lab.branch("side", "main")
    for s in SIDE:
        forged[s] = _forge_plan(lab, s, agent_commit)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=MALLORY)
    lab.run()
    for s in LATE:
        forged[s] = _forge_plan(lab, s, agent_commit)
    lab.run()
    status = lab.status()
    notes["shown"] = {s: status.get(f"plans/{s}", {}).get("status") for s in QP}
    notes["after-first"] = {s: lab.plan(s)["plan"]["status"] for s in QP}
    # <f>2: the author sets it pending again where the file does not say so
    changed = False
    for s in QP:
        if s.endswith("2") and _fk(s) and lab.plan(s)["plan"]["status"] != "pending_approval":
            lab.set_status(s, "pending_approval")
            changed = True
    if changed:
        lab.commit("agent: pending again", AGENT)
        lab.run()
    # first votes: Alice on every plan but the nobody ones
    for s in QP:
        if s in NOBODY:
            continue
        lab.set_status(s, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    notes["after-alice"] = {s: lab.plan(s)["plan"]["status"] for s in QP}
    # ab / ab2: edit and revert between the votes (A-B-A)
    for s in ("ab", "ab2"):
        p = lab.repo / "plans" / s / "PLAN.yml"
        p.write_text(p.read_text().replace(f'tag: "{s}"', f'tag: "{s}"\n      extra: 1'))
    lab.commit("agent: edit", AGENT)
    lab.run()
    lab.git("revert", "--no-edit", "HEAD", who=AGENT)
    lab.run()
    notes["ab-hashes"] = {s: (lab.plan(s).get("frozen") or {}).get("hash") for s in ("ab", "ab2")}
    # second votes: Bob
    checks: dict[str, str] = {}
    for s in QP:
        if s.endswith("2") or s == "ab":
            lab.branch(f"bob-{s}", "main")
            lab.set_status(s, "approved")
            lab.commit(f"bob: approve {s}", BOB)
            lab.git("checkout", "-q", "main")
            checks[s] = _check(lab, f"bob-{s}", BOB[1])
            lab.git("merge", "-q", "--ff-only", f"bob-{s}")
    lab.run()
    lab.set_status("ab2", "approved")
    lab.commit("carol: approve ab2", CAROL)
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root, transport=True)
    notes["final"] = {s: lab.plan(s)["plan"]["status"] for s in QP}
    notes["approval"] = {s: lab.plan(s).get("approval") for s in QP}
    out.update(calls={s: len(lab.calls(s)) for s in QP}, checks=checks, forged=forged, notes=notes)
    return out


#: lab ``c``: slug -> expected runs (None: either, but check must agree)
CP: dict[str, int | None] = {
    "sqc": 1, "sqb": 0, "rbc": 1, "rbb": 1, "acb": 1, "mgb": None, "mgc": 1, "ffa": 1,
}  # fmt: skip
#: checked, then landed by a merge commit or a squash (the ``outcome`` prediction)
MERGED = {"sqc", "sqb", "mgb", "mgc"}


def _c(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    lab = Lab(root)
    for s in CP:
        lab.write(s, plan_text(s))
    lab.commit("bob: plans", BOB)
    lab.run()
    # approvals re-applied by another hand (Carol's rebase, ``acb``'s committer) in the
    # freeze's own second are refused by round 104's rule, by design: the lab approves a
    # second after the freeze, as a reviewer does
    time.sleep(1.05 - time.time() % 1 + 0.05)
    checks: dict[str, str] = {}
    for s in CP:
        lab.branch(f"br-{s}", "main")
        lab.set_status(s, "approved")
        lab.git("add", "-A")
        if s == "acb":
            lab.extra_env = {"GIT_COMMITTER_NAME": BOB[0], "GIT_COMMITTER_EMAIL": BOB[1]}  # type: ignore[attr-defined]
            lab.git("commit", "-q", "-m", f"approve {s}", who=ALICE)
            lab.extra_env = {}  # type: ignore[attr-defined]
        else:
            lab.git("commit", "-q", "-m", f"approve {s}", who=ALICE)
        lab.git("checkout", "-q", "main")
    # main moves (for the rebases)
    (lab.repo / "NOTES").write_text("n\n")
    lab.commit("owner: notes", ("Owner", "owner@example.com"))
    notes: dict[str, Any] = {}
    for s in CP:
        br = f"br-{s}"
        if s in ("rbc", "rbb"):
            who = CAROL if s == "rbc" else BOB
            lab.git("checkout", "-q", br)
            lab.git("rebase", "-q", "main", who=who)
            lab.git("checkout", "-q", "main")
            checks[s] = _check(lab, br, ALICE[1])
            lab.git("merge", "-q", "--ff-only", br)
        elif s in ("sqc", "sqb"):
            who = CAROL if s == "sqc" else BOB
            checks[s] = _check(lab, br, who[1])
            lab.git("merge", "-q", "--squash", br, who=who)
            lab.git("commit", "-q", "-m", f"squash {br}", who=who)
        elif s in ("mgb", "mgc"):
            who = BOB if s == "mgb" else CAROL
            checks[s] = _check(lab, br, who[1])
            lab.git("merge", "-q", "--no-ff", "-m", f"merge {br}", br, who=who)
        else:  # acb, ffa: rebase by Alice first so that it fast-forwards
            lab.git("checkout", "-q", br)
            if s == "acb":
                lab.extra_env = {"GIT_COMMITTER_NAME": BOB[0], "GIT_COMMITTER_EMAIL": BOB[1]}  # type: ignore[attr-defined]
                lab.git("rebase", "-q", "main")
                lab.extra_env = {}  # type: ignore[attr-defined]
            else:
                lab.git("rebase", "-q", "main", who=ALICE)
            lab.git("checkout", "-q", "main")
            checks[s] = _check(lab, br, ALICE[1])
            lab.git("merge", "-q", "--ff-only", br)
        notes[s] = lab.git("log", "-1", "--format=%an <%ae> / %cn <%ce> %s")
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root, transport=True)
    out.update(calls={s: len(lab.calls(s)) for s in CP}, checks=checks, forged={}, notes=notes)
    return out


def _s(root: Path) -> dict[str, Any]:
    """A seal-shaped forged ``start`` before the first pass: a new state directory must refuse
    (``E_STORAGE``), never adopt it, never run, no traceback."""
    root.mkdir(parents=True)
    lab = Lab(root)
    lab.write("ss", plan_text("ss"))
    lab.commit("bob: plan", BOB)
    lab.set_status("ss", "executing")
    forged = _forge(lab, _msg("start", "ss", "executing", True))
    res = lab.run(check=False)
    notes = {"rc": res.returncode, "err": res.stderr[-800:]}
    out = clone_audit_got(lab, root, transport=True)
    out.update(calls={"ss": len(lab.calls("ss"))}, checks={}, forged={"ss": forged}, notes=notes)
    return out


BUILDERS = {"q": (_q, QP), "c": (_c, CP), "s": (_s, {"ss": 0})}


def _build_all(root: Path) -> Labs:
    return build_all(root, {k: b for k, (b, _) in BUILDERS.items()})


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r98-approve-atk98a", _build_all)


#: lab ``q`` plans whose second vote (Bob's) is checked: not ``ab2`` (Carol's third vote runs
#: it), not ``st2``/``ck2``/``cp2`` (their files already said ``approved``: Bob's commit
#: changes no plan, so ``check`` has nothing to say)
QCHECK = {s for s in QP if (s.endswith("2") or s == "ab")} - {
    "ab2",
    "st2",
    "ck2",
    "cp2",
    "sst2",
    "scp2",
}
PLANS = [(n, s, e) for n, (_, d) in BUILDERS.items() for s, e in d.items()]
VALUES = [
    (n, s, e, w) for n, s, e in PLANS for w in ("ran", "audit", "check", "shown")
    if n != "s"
    and not (w == "check" and n == "q" and s not in QCHECK)
    and not (w == "shown" and s not in NOBODY)
]  # fmt: skip
VALUES += [("s", "ss", 0, "refused"), ("s", "ss", 0, "ran")]
IDS = [f"{v[1]}:{v[3]}" for v in VALUES]
#: fixed in round 98 (r98appr): tofu-unsealed-run (19 ids) and refuse-no-cause (6 ids): an
#: unsealed commit in the controller's record stands only as git alone reads it
#: (``Lifecycle.unproven``), and a refusal needs an open approval request (``unmatched_event``)
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(("labname", "slug", "want", "what"), cases(IDS, VALUES, BROKEN))
def test_round98_atk98a(lab: Any, labname: str, slug: str, want: Any, what: str) -> None:
    got = lab.got[labname]
    plan = f"plans/{slug}"
    calls = got["calls"]
    notes = got.get("notes", {})
    if what == "ran":
        if want is None:
            assert calls[slug] <= 1, (calls, notes)
        else:
            assert calls[slug] == want, (
                slug,
                calls[slug],
                {k: v.get(slug) if isinstance(v, dict) else v for k, v in notes.items()},
            )
    elif what == "refused":
        assert notes["rc"] != 0 and "E_STORAGE" in notes["err"], notes
        assert "Traceback" not in notes["err"] and calls[slug] == 0, notes
    elif what == "shown":  # status --json after the first passes: the forgery is not its status
        assert notes["shown"][slug] == "pending_approval", (slug, notes["shown"][slug])
    elif what == "check":
        out = got["checks"][slug]
        plans = [p for p in json.loads(out[: out.rfind("}") + 1])["plans"] if p["plan"] == plan]
        assert plans, out[-1500:]
        landed = plans[0] if slug in MERGED else {**plans[0], **plans[0].get("fast_forward", {})}
        assert (landed.get("outcome") == "start") == (calls[slug] > 0), (plans[0], calls[slug])
    else:
        report = got["report"]
        assert report.get("code") is None and got["rc"] in (0, 1), (got["rc"], str(report)[:600])
        assert (plan in got["valid"]) == (calls[slug] > 0), (
            got["valid"], calls[slug],
            [f for f in report.get("findings", []) if f.get("plan") == plan],
        )  # fmt: skip


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk98a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r98a-", dir="/tmp/atk98a"))
    got = _build_all(out).got
    for v in got.values():
        rep = v.get("report")
        if isinstance(rep, dict):
            v["report"] = {k: rep.get(k) for k in ("ok", "code", "findings")}
        for k, c in dict(v.pop("checks", None) or {}).items():
            try:
                j = json.loads(c[: c.rfind("}") + 1])
            except ValueError:
                v["check-" + k] = c[-500:]
                continue
            v["check-" + k] = [
                (p["plan"], p.get("outcome"), p.get("fast_forward"), p.get("refused"))
                for p in j.get("plans", [])
                if p["plan"] == f"plans/{k}"
            ]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
