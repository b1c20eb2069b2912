"""Round 95, approval and policy (atk95a): the edges of r94audit (a policy record counts
for git alone only with a seal-shaped ``Controller-Seal:``): look-alike record commits whose
seal sits in odd places of the message or is copied from a real record, records brought by
a merge, and a quorum met by votes from two merged branches.

Every lab is its own repo (advkit ``Lab``), built once per module (``shared``), two at a
time. Ids: ``<slug>:ran`` counts the recording tool's calls for the plan; ``<slug>:audit``
runs ``plangate audit --json`` in a fresh clone with NO config and asserts it reads the
records (no ``code``, exit 0 or 1) and calls the plan's start valid exactly when it ran;
``<slug>:check`` that ``plangate check --base main --head <branch> --as <voter> --format
json`` on the branch of the plan's last approval said ``"outcome": "start"`` exactly when the
plan then ran; ``<slug>:flagged`` that the audit names the look-alike record commit in a
finding or note.

Lab ``sl`` (default policy; every plan Bob's). Per variant, in order: a commit under the
controller's FULL identity (author and committer ``plangate@localhost``, ``--cleanup=
verbatim``), subject ``plangate: record policy``, that rewrites ``.plangate/policy.json`` in
RFC 8785 form with no rules and ``*@example.com`` approvers (Mallory becomes one) and
carries the matching ``Policy-Hash:`` and the real record's ``Controller:`` line, the seal
placed so: ``su`` in the subject only; ``sp`` in a paragraph before the last (the trailer
block holds none); ``cr`` the seal line ended by CR; ``fo`` the seal folded over two lines
(32 hex, then a continuation line of 32); ``sh`` 63 hex digits; ``dd`` the trailer block
after a ``---`` line; ``cm`` a ``# comment`` line between ``Policy-Hash:`` and the seal;
``ch`` a ``(cherry picked from commit ...)`` line after the seal; ``dp`` two different
seal-shaped seals; ``cp`` the real record's very ``Controller-Seal:`` (a seal of another
commit); ``mg`` an unsealed record made on a side branch and merged ``--no-ff`` by Bob.
Then Mallory (no approver by the config) rejects the variant's plan; a pass; Alice approves
it on a branch (checked ``--as alice``), fast-forwarded; a pass. ``ctl`` (control): the
same with nothing forged.

Lab ``mq`` (``{count: 2}`` for ``plans/m*``): ``m2`` Alice approves on branch ``b1`` and
Bob on ``b2`` (both from main after the freeze), each branch one short; Carol merges ``b1``
then ``b2`` (``--no-ff``), checked at the merge; ``m1`` (control) Alice alone; ``mc``
(control) Alice then Bob on main.

More ``sl`` variants: ``sq`` the seal line indented by four spaces (a continuation of
``Controller:``); ``sb`` ``note: Controller-Seal: <hex>`` in the trailer block; ``tb`` a TAB
after ``Controller-Seal:``; ``lk`` the key spelled ``controller-seal:``; ``up`` the seal in
upper-case hex; ``mx`` an unsealed record commit under the controller's name that ALSO sets
the variant's plan ``rejected`` (Mallory's commit after it is then empty).

Seen (round 95): five ids broke (``sp:check``, ``dd:check``, ``sq:check``, ``mx:audit``,
``mx:check``); the controller held everywhere: every ``sl`` plan ran exactly once on
Alice's approval, Mallory's rejection ignored (audit ``withdraw-not-allowed:
E_APPROVER_NOT_ALLOWED: mallory@example.com set status rejected ... ignored``).

- The audit flagged as ``policy-changed`` and judged by the real record: ``su``, ``dd``
  (``.plangate/policy.json changed in no record commit``), ``sp``, ``fo``, ``sh``, ``sq``,
  ``sb``, ``lk``, ``up``, ``mx`` (``a plangate: record policy commit under the controller's
  name with no Controller-Seal: ... a forged record``), ``mg`` (the merge named: ``bob@ops.
  example.com changed .plangate/policy.json``); those plans valid.
- BROKE ``sp``/``dd``/``sq:check``: ``check --as alice`` on Alice's approval said
  ``"status": "rejected"``, ``"counted": []``, ``"outcome": "none"`` where the controller
  then started the plan: check read the record whose only seal is in an earlier paragraph,
  after a ``---`` line, or on an indented continuation line as the policy in force (Mallory
  an approver, her rejection counted), a record the audit itself flags unsealed. For ``su``,
  ``fo``, ``sh``, ``sb``, ``lk``, ``up``, ``mg`` check said ``start``.
- BROKE ``mx``: the unsealed record commit that also set ``status: rejected`` was flagged
  (``policy-changed`` and ``controller-unexplained: subject 'plangate: record policy' is not a
  plangate event for plans/mx``), yet the audit let its rejection stand: ``illegal:
  E_ILLEGAL_TRANSITION: alice@example.com set status approved (from rejected)`` and
  ``start-without-approval: no approval request precedes this start``, ``mx`` not valid;
  check said ``none``; the controller ran it once.
- Within the documented limit (seal-shaped look-alikes, docs/threat-model.md Accepted limits
  "a sealed look-alike record as a record"; only ``:ran`` ids): ``cr`` (CR after the hex),
  ``tb``, ``cm``, ``ch``, ``dp`` and ``cp`` (the real record's own seal copied onto another
  commit) were read by the audit as records (no finding names them; Mallory's rejection
  counted: ``illegal ... (from rejected)``, ``start-without-approval``) and check said
  ``none``. Of note for the lead: ``cp``'s seal is byte-equal to an earlier record's, on a
  different tree and parent, which git alone could tell the controller never makes.
- ``mq``: ``m2`` (votes of Alice and Bob on two branches, merged by Carol) stayed
  ``partial`` for the controller and check, not valid for the audit (consistent, never ran);
  ``m1`` (Alice alone) never ran; ``mc`` ran after Bob (check ``start``).

Should: docs/approvals.md, The recorded policy: "What makes a policy *recorded* is a commit
of the controller's ... that carries a ``Controller-Seal:`` of the seal's form (64 hex
digits, as every controller commit does; a reader without the key checks only the shape: an
unsealed look-alike is a forged record, flagged by the audit and never read as the policy,
round 94)"; "Withdrawals are judged by the controller's last own record before them";
docs/threat-model.md: the fresh-clone audit "flags a look-alike whose shape the controller
never makes"; docs/approvals.md: an unsealed commit under the controller's name "is anyone's
commit that decides nothing" ("its status is an illegal transition, ignored"); check
predicts what the controller decides.

Fixed (2026-12-02, r95audit): ``sp``/``dd``/``sq:check``: one predicate of a record commit by
git alone, ``hashing.controller_sealed`` (author and committer the controller's identity and a
seal-shaped ``Controller-Seal:`` in the trailer block as git parses it), asked by the audit's
timeline and the recorded-policy reader of ``check`` (``history.records``, which scanned every
line of the body). Fixed (2026-12-02, the lead, r95mx): ``mx:audit``, ``mx:check``: once the
history index has read a sealed commit under the controller's name, an unsealed one is
anyone's commit whatever it records (``Lifecycle._is_controller``, ``sealing_seen``); a
history with no seal at all (before round 66, and the unit fixtures that forge unsealed
controller commits) reads as it did.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import (
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
    xfail,
)
from test_round2_execution_kit import shared

HEX = "5e" * 32


def _check(lab: Lab, head: str, who: str) -> str:
    told = lab.check(head, who)
    return told.stdout + told.stderr


def _finish(lab: Lab, root: Path, slugs: list[str], **extra: Any) -> dict[str, Any]:
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root)
    out.update(calls={s: len(lab.calls(s)) for s in slugs}, **extra)
    return out


def _canon(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _loosened(lab: Lab) -> tuple[bytes, str]:
    pol = json.loads((lab.repo / ".plangate" / "policy.json").read_text())
    appr = pol.setdefault("approval", {})
    appr["rules"] = []
    appr["approvers"] = ["*@example.com", "*@ops.example.com"]
    raw = _canon(pol)
    return raw, "sha256:" + hashlib.sha256(raw).hexdigest()


def _real_record(lab: Lab) -> tuple[str, str, str]:
    """(commit, Controller: value, Controller-Seal: value) of the last real record."""
    sha = lab.git("log", "-1", "--format=%H", "--grep=^plangate: record policy").strip()
    body = lab.git("log", "-1", "--format=%B", sha)
    ctl = seal = ""
    for line in body.splitlines():
        if line.startswith("Controller: "):
            ctl = line.split(": ", 1)[1]
        if line.startswith("Controller-Seal: "):
            seal = line.split(": ", 1)[1]
    return sha, ctl, seal


def _message(kind: str, digest: str, ctl: str, seal: str) -> str:
    subj, why = "plangate: record policy", "The controller's effective policy: approval.rules"
    ph, cl = f"Policy-Hash: {digest}", f"Controller: {ctl}"
    s = f"Controller-Seal: {HEX}"
    if kind == "su":
        return f"{subj} {s}\n\n{why}\n\n{ph}\n{cl}\n"
    if kind == "sp":
        return f"{subj}\n\n{why}\n{s}\n\nsee above\n\n{ph}\n{cl}\n"
    if kind == "cr":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\n{s}\r\n"
    if kind == "fo":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\nController-Seal: {HEX[:32]}\n  {HEX[32:]}\n"
    if kind == "sh":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\nController-Seal: {HEX[:63]}\n"
    if kind == "dd":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\n---\n{s}\n"
    if kind == "cm":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\n# sealed below\n{s}\n"
    if kind == "ch":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\n{s}\n(cherry picked from commit {'0' * 40})\n"
    if kind == "dp":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\n{s}\nController-Seal: {'7a' * 32}\n"
    if kind == "sq":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\n    {s}\n"
    if kind == "sb":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\nnote: {s}\n"
    if kind == "tb":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\nController-Seal:\t{HEX}\n"
    if kind == "lk":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\ncontroller-seal: {HEX}\n"
    if kind == "up":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\nController-Seal: {HEX.upper()}\n"
    if kind == "cp":
        return f"{subj}\n\n{why}\n\n{ph}\n{cl}\nController-Seal: {seal}\n"
    return f"{subj}\n\n{why}\n\n{ph}\n{cl}\n"  # mg: unsealed


#: lab ``sl``: variants (each a forged record, then Mallory's rejection, then Alice)
SEALS = [
    "su",
    "sp",
    "cr",
    "fo",
    "sh",
    "dd",
    "sq",
    "sb",
    "tb",
    "lk",
    "up",
    "mx",
    "cm",
    "ch",
    "dp",
    "cp",
    "mg",
]
SLP = {**{s: 1 for s in SEALS}, "ctl": 1}


def _sl(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    lab = Lab(root)
    for s in SLP:
        lab.write(s, plan_text(s))
    lab.commit("bob: plans", BOB)
    lab.run()
    forged: dict[str, str] = {}
    checks: dict[str, str] = {}
    msgs: dict[str, str] = {}
    for s in SLP:
        if s != "ctl":
            _sha, ctl, seal = _real_record(lab)
            raw, digest = _loosened(lab)
            msg = _message(s, digest, ctl, seal)
            if s == "mg":
                lab.branch("side-mg", "main")
            (lab.repo / ".plangate" / "policy.json").write_bytes(raw)
            if s == "mx":  # the record commit also sets the plan rejected
                lab.set_status(s, "rejected")
            lab.git("add", "-A")
            lab.git("commit", "-q", "--cleanup=verbatim", "-F", "-", input=msg, who=BOT)
            forged[s] = lab.head()
            msgs[s] = lab.git("log", "-1", "--format=%B%n--%n%(trailers)", forged[s])[-700:]
            if s == "mg":
                lab.git("checkout", "-q", "main")
                lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side-mg", who=BOB)
                forged["mg-merge"] = lab.head()
        lab.set_status(s, "rejected")
        lab.commit(f"mallory: reject {s}", MALLORY)
        lab.run()
        branch = f"fin-{s}"
        lab.branch(branch, "main")
        lab.approve(s, ALICE, f"approve {s}")
        lab.git("checkout", "-q", "main")
        checks[s] = _check(lab, branch, ALICE[1])
        lab.git("merge", "-q", "--ff-only", branch)
        lab.run()
    return _finish(lab, root, list(SLP), checks=checks, forged=forged, msgs=msgs)


MQ = "rules:\n  - match: {paths: ['plans/m*/**']}\n    require: [{count: 2}]\n"
MQP = {"m2": 0, "m1": 0, "mc": 1}


def _mq(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    lab = Lab(root, approval=MQ)
    for s in MQP:
        lab.write(s, plan_text(s))
    lab.commit("agent: plans", ("Agent", "agent@example.com"))
    lab.run()
    lab.branch("b1", "main")
    lab.approve("m2", ALICE, "approve m2")
    lab.branch("b2", "main")
    lab.approve("m2", BOB, "approve m2")
    lab.branch("mix", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge b1", "b1", who=CAROL)
    lab.git("merge", "-q", "--no-ff", "-m", "merge b2", "b2", who=CAROL, check=False)
    if lab.git("diff", "--name-only", "--diff-filter=U"):
        lab.git("checkout", "--theirs", "--", "plans/m2/PLAN.yml")
        lab.commit("merge b2", CAROL)
    lab.git("checkout", "-q", "main")
    checks = {"m2": _check(lab, "mix", CAROL[1])}
    lab.git("merge", "-q", "--ff-only", "mix")
    lab.run()
    lab.approve("m1", ALICE, "approve m1")
    lab.approve("mc", ALICE, "approve mc")
    lab.run()
    lab.branch("fin", "main")
    lab.approve("mc", BOB, "approve mc")
    lab.git("checkout", "-q", "main")
    checks["mc"] = _check(lab, "fin", BOB[1])
    lab.git("merge", "-q", "--ff-only", "fin")
    return _finish(lab, root, list(MQP), checks=checks)


BUILDERS = {"sl": (_sl, SLP), "mq": (_mq, MQP)}


def _build_all(root: Path) -> Labs:
    return build_all(root, {k: b for k, (b, _) in BUILDERS.items()}, workers=2)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r95-approve-atk95a", _build_all)


PLANS = [(n, s, e) for n, (_, d) in BUILDERS.items() for s, e in d.items()]
#: seal-shaped look-alikes (a seal of 64 hex digits that git's trailer parser finds): read as
#: records by git alone, the documented limit (docs/threat-model.md, Accepted limits): ``:ran``
LIMIT = {"cr", "tb", "cm", "ch", "dp", "cp"}
WHATS = [(n, s, e, w) for n, s, e in PLANS for w in ("ran", "audit", "check", "flagged")]
VALUES = [
    v for v in WHATS
    if not (v[1] in LIMIT and v[3] != "ran")
    and not (v[1] == "m1" and v[3] == "check")
    and not (v[1] not in SEALS and v[3] == "flagged")
]  # fmt: skip
IDS = [f"{v[1]}:{v[3]}" for v in VALUES]
#: fixed (r95audit): ``sp``/``dd``/``sq:check`` (check-reads-unsealed-record)
_MIXED = xfail(
    "audit-honours-unsealed-status",
    "an unsealed record commit under the controller's name that also set the plan rejected:"
    " flagged controller-unexplained, yet its rejection stood (Alice's approval illegal,"
    " start-without-approval); the controller ran the plan",
)
_MIXCHECK = xfail(
    "check-honours-unsealed-status",
    "check on Alice's approval after the unsealed record+rejection commit: outcome none; the"
    " controller ran the plan",
)
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(("labname", "slug", "want", "what"), cases(IDS, VALUES, BROKEN))
def test_round95_atk95a(lab: Any, labname: str, slug: str, want: Any, what: str) -> None:
    got = lab.got[labname]
    plan = f"plans/{slug}"
    calls = got["calls"]
    if what == "ran":
        assert calls[slug] == want, calls
    elif what == "flagged":  # the audit names the look-alike record commit
        commit = got["forged"][slug]
        rep = got["report"]
        both = [commit[:12], got["forged"].get(f"{slug}-merge", commit)[:12]]
        named = [f for f in rep.get("findings", []) + rep.get("notes", [])
                 if any(c in json.dumps(f) for c in both)]  # fmt: skip
        assert named, (commit, got["msgs"][slug], str(rep.get("policies"))[:600])
    elif what == "check":
        out = got["checks"][slug]
        plans = [p for p in json.loads(out[: out.rfind("}") + 1])["plans"] if p["plan"] == plan]
        assert plans, out[-1500:]
        assert (plans[0].get("outcome") == "start") == (calls[slug] > 0), (plans[0], calls)
    else:
        report = got["report"]
        assert report.get("code") is None and got["rc"] in (0, 1), (got["rc"], str(report)[:600])
        assert (plan in got["valid"]) == (calls[slug] > 0), (
            got["valid"], calls, [f for f in report.get("findings", []) if f.get("plan") == plan],
        )  # fmt: skip


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk95a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r95a-", dir="/tmp/atk95a"))
    got = _build_all(out).got
    for v in got.values():
        rep = v.get("report")
        if isinstance(rep, dict):
            v["report"] = {k: rep.get(k) for k in ("ok", "code", "findings", "notes", "policies")}
        for k, c in dict(v.pop("checks", None) or {}).items():
            try:
                j = json.loads(c[: c.rfind("}") + 1])
            except ValueError:
                v[k] = c[-500:]
                continue
            v[k] = [(p["plan"], p.get("outcome"), p.get("refused")) for p in j.get("plans", [])]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
