"""Round 97, approval and policy (atk97a): the edges of r95audit/r95mx (a controller record
by its git TRAILERS only; once a sealed controller commit was read, an unsealed one under the
controller's name is anyone's): unsealed controller-named commits BEFORE any sealed one,
shallow and single-branch clones, trailer blocks git parses otherwise than a reader, a
controller-named merge, a revert of the controller's record, an approval written by one
person under another's ``GIT_AUTHOR_*``, approvals dated before the freeze, and a quorum met
by one person under two addresses (an operator's alias) in two groups.

Every lab is its own repo (advkit ``Lab``), built once per module (``shared``), two at a
time. Ids: ``<slug>:ran`` counts the recording tool's calls; ``<slug>:audit`` runs ``plangate
audit --json`` in a fresh clone (``file://``) with NO config and asserts it reads the
records (no ``code``, exit 0 or 1) and calls the plan's start valid exactly when it ran;
``<slug>:check`` that ``plangate check --base main --head <branch> --as <voter> --format
json`` on the branch of the plan's last approval said ``"outcome": "start"`` exactly when
the plan then ran (the branch then fast-forwarded); ``<slug>:flagged`` that the audit names
the forged commit in a finding.

Lab ``a`` (default policy; every plan Bob's). A proto lab's first pass gives the real
``.plangate/policy.json`` and ``Controller:`` line. ``ff``: Bob's plans, then the FIRST
commit under the controller's name (author and committer ``plangate@localhost``) is an
unsealed ``plangate: record policy`` with the loosened policy in RFC 8785 form and its
``Policy-Hash:`` (Mallory an approver); Mallory rejects ``ff`` in the same push. ``fx``: in
that push too, an unsealed commit under the controller's name, subject ``plangate: freeze
plans/fx``, sets ``fx`` ``rejected``; ``fz``: another such commit sets ``fz``
``approved`` (nobody voted). First pass; Bob sets both ``pending_approval`` again;
a pass; Alice approves each. ``fc`` (control): Alice approves. ``sa``: Bob (the author)
commits the approval with ``GIT_AUTHOR_*`` of Alice (``git commit``); ``pa``: the same with
``plangate approve plans/pa`` (it committed: ``approved plans/pa in ... on main``). ``od``:
Alice's approval with author and committer date 2023-11-14 (before the freeze),
fast-forwarded; ``oa`` only the author date old; ``ob`` only the committer date old; ``oe``
the ``od`` commit on a branch merged ``--no-ff`` by Alice; ``oc`` (control) dated now.
``rv``: after ``rv`` ran, Mallory ``git revert``s the controller's last record of it
(``plangate: complete plans/rv``). ``mg``: Mallory's rejection on a side branch merged
``--no-ff`` under the controller's full identity (message ``plangate: reject plans/mg``).
``sw``: after the real records, an unsealed ``record policy`` (Mallory an approver), then
Mallory rejects ``sw``; ``sw:shallow``: a ``--depth`` clone cut at that forged record;
``all:single``: a ``--single-branch --branch main`` clone's valid starts equal the full
clone's. Trailer variants, each an unsealed-by-key commit under the controller's full
identity (``--cleanup=verbatim``), subject ``plangate: reject plans/<slug>``, setting the
plan ``rejected``, after the seals: ``ws`` the seal block after a line of three spaces;
``so`` prose, ``Signed-off-by:`` and the seal in one block; ``sc`` ``Controller-Seal :
<hex>``; ``eq`` ``Controller-Seal=<hex>``; ``lt`` a 9,000-character ``Note:`` trailer before
the seal; ``cn`` ``Controller-Seal:`` with its value on a continuation line; ``tz`` lines of
spaces after the seal; ``pr`` a prose line after the seal in its paragraph; ``ns`` no seal.
Then Alice approves each (checked). ``ctl`` (control): Alice approves.

Lab ``al`` (``identity_aliases.people: [[alice@example.com, alice@ops.example.com]]``;
groups ``ops: [*@ops.example.com]``, ``sec: [alice@example.com, carol@ops.example.com]``;
``plans/q*`` needs ``{count: 2}``, ``plans/g*`` one of ``ops`` and one of ``sec``; plans the
agent's): ``q2``/``g2`` Alice then ``alice@ops``; ``q3``/``g3`` the other order; controls
``qc``/``gc`` Alice then Bob, ``gd`` Carol then ``alice@ops``.

Seen (round 97): three ids broke (``od:check``, ``oa:check``, ``fx:ran``).

- BROKE ``od``/``oa:check``: Alice's approval after the freeze, author date 2023-11-14,
  fast-forwarded: ``check --as alice`` said ``"outcome": "start"``; the controller refused
  it ``E_APPROVAL_REPLAYED: b3fcb9931b1b was written before this version of the plan existed
  (a cherry-picked, rebased or re-applied approval of an earlier version)`` and never ran
  either (the audit agreed: not valid). ``ob`` (committer date old only) ran, check
  ``start``. ``oe`` (the old-dated commit brought by Alice's own ``--no-ff`` merge, what
  check simulates) ran, check ``start``, audit valid.
- BROKE ``fx:ran``: the unsealed ``plangate: freeze plans/fx`` commit (Mallory's, before the
  controller's first pass) that set the plan ``rejected`` was counted by the controller:
  ``status`` row ``"status": "rejected"``, ``last_event: E_ILLEGAL_TRANSITION:
  alice@example.com set status approved (from rejected) ...; ignored``, Bob's ``pending``
  again ``illegal`` too; never ran. The audit flagged it (``controller-unexplained: a freeze
  commit cannot set status rejected``) and agreed with the controller (not valid), check
  said ``none``: consistent, but a rejection by no allowed approver or author counted (the
  safe side: a denial), by trust on first use of a commit whose shape the controller never
  makes.
- Held: ``fz``: never ran; its ``status`` row said ``"status": "approved"``, ``frozen_hash:
  null``, ``last_event: ... plangate: freeze plans/fz`` (the forged commit taken as the
  controller's, the plan never frozen); the audit flagged ``controller-unexplained: a freeze
  commit cannot set status approved`` and called nothing valid. ``ff`` (the forged first
  record): the controller and audit ignored Mallory's
  rejection (``withdraw-not-allowed: E_APPROVER_NOT_ALLOWED: mallory@example.com set status
  rejected ... ignored``), the forged record flagged ``policy-changed: a plangate: record
  policy commit under the controller's name with no Controller-Seal: ...: a forged record``;
  ran once on Alice's approval, valid (after the first pass its file still said
  ``rejected`` and was not frozen until Bob set it pending again). ``sw`` the same.
  ``sw:shallow``: ``E_GIT ... is a shallow clone``; ``--single-branch`` agreed. ``mg``: the
  controller-named merge flagged ``controller-unexplained`` (``no Controller-Seal: ... an
  unsealed one is anyone's commit``) and ``withdraw-not-allowed`` for ``plangate@localhost``
  and Mallory; ran. ``rv``: the revert flagged ``log-changed``, ``owned-block-changed``,
  ``illegal: mallory@example.com set status executing (from completed)``; ran once. ``eq``,
  ``pr``, ``ns`` (git finds no seal): flagged ``controller-unexplained``, their rejection
  ``withdraw-not-allowed``; ran, valid, check ``start``.
- Within the documented limits: ``sa``/``pa`` (forged authorship without signatures): the
  approval authored Alice, committed by Bob (``Alice <alice@example.com> / Bob
  <bob@ops.example.com> approve plans/pa``) counted; ran, audit valid. ``ws``, ``so``,
  ``sc``, ``lt``, ``cn``, ``tz`` (git's ``%(trailers)`` finds a 64-hex seal in each): the
  controller ran each once, the audit flagged each ``controller-unexplained: subject
  'plangate: reject plans/ws' is not a plangate event`` yet took its rejection (``illegal ...
  approved (from rejected)``, ``start-without-approval``), check ``none``.
- ``al``: ``q2``, ``q3``, ``g2``, ``g3`` stayed ``partial`` for the controller and check,
  not valid for the audit; ``qc``, ``gc``, ``gd`` ran, check ``start``, valid.

Should: docs/approvals.md, Replayed approvals ("its author date is earlier than the trusted
birth of the version it would approve" is ``E_APPROVAL_REPLAYED``) with ``check``: "decides
with the controller's own function, so the prediction is the controller's decision for the
history as it is now"; docs/threat-model.md: "a commit under its identity that is not in the
record is judged as anyone's (a controller-only status is an illegal transition, ignored
...)" and docs/approvals.md: "Withdrawals (``aborted`` or ``rejected``, by an allowed
approver or an author of the plan)".

Fixed (2026-12-02, r97appr): ``od:check``, ``oa:check``: where ``base`` is an ancestor of the
branch, ``check`` also predicts the fast-forward (the branch's own commits on the first-parent
line, as the controller reads them after it) and adds ``fast_forward`` (``outcome``,
``counted``, ``refused``, ``missing``) to each plan it decides otherwise; ``outcome`` stays
the merge commit's, and so does the exit code (``check._fast_forward``). The check ids
read the prediction of the way the branch landed: ``fast_forward`` where given, ``oe``
(merged ``--no-ff``) its ``outcome``. ``fx:ran``: a commit under the controller's name whose
status change no controller event makes (the audit's rule, moved to
``records.status_unexplained``: a ``freeze`` that sets ``rejected``; ``approved`` or
``rejected`` by any event) is never the controller's, by its record (trust on first use) or
by git alone, sealed or not (``Lifecycle.impossible``, asked by ``_is_controller`` and
``disowned``): Mallory's rejection is ignored (no approver), the audit flags the commit
``controller-unexplained``; ``fx`` runs once on Alice's approval. ``INDEX_VERSION`` 128.
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
)
from test_round2_execution_kit import shared

HEX = "5e" * 32
ALICE2 = ("Alice", "alice@ops.example.com")


def _check(lab: Lab, head: str, who: str) -> str:
    told = lab.check(head, who)
    return told.stdout + told.stderr


def _vote(lab: Lab, slug: str, who: tuple[str, str], checks: dict[str, str], **kw: Any) -> None:
    """``who`` approves ``slug`` on a branch of its own, checked there, fast-forwarded."""
    branch = f"v-{slug}-{who[1].split('@')[0]}-{len(checks)}"
    lab.branch(branch, "main")
    lab.set_status(slug, "approved")
    lab.git("add", "-A")
    env = kw.get("env")
    if env:
        lab.extra_env = env  # type: ignore[attr-defined]
    try:
        lab.git("commit", "-q", "--allow-empty", "-m", f"approve {slug}", who=who)
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
    lab.git("checkout", "-q", "main")
    checks[slug] = _check(lab, branch, kw.get("as_", who)[1])
    lab.git("merge", "-q", "--ff-only", branch)


def _canon(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _loosened(policy: bytes) -> tuple[bytes, str]:
    pol = json.loads(policy)
    appr = pol.setdefault("approval", {})
    appr["rules"] = []
    appr["approvers"] = ["*@example.com", "*@ops.example.com"]
    raw = _canon(pol)
    return raw, "sha256:" + hashlib.sha256(raw).hexdigest()


def _record_msg(digest: str, ctl: str, tail: str = "") -> str:
    return (
        "plangate: record policy\n\nThe controller's effective policy: approval.rules\n\n"
        f"Policy-Hash: {digest}\nController: {ctl}\n{tail}"
    )


def _ctl_line(lab: Lab) -> str:
    body = lab.git("log", "-1", "--format=%B", "--grep=^plangate: record policy")
    for line in body.splitlines():
        if line.startswith("Controller: "):
            return line.split(": ", 1)[1]
    return "plangate"


def _forge(lab: Lab, msg: str, *, policy: bytes | None = None) -> str:
    if policy is not None:
        (lab.repo / ".plangate").mkdir(exist_ok=True)
        (lab.repo / ".plangate" / "policy.json").write_bytes(policy)
    lab.git("add", "-A")
    lab.git("commit", "-q", "--allow-empty", "--cleanup=verbatim", "-F", "-", input=msg, who=BOT)
    return lab.head()


#: lab ``tr``: trailer-block variants of an unsealed status commit under the controller's name
def _trailer_msg(kind: str, slug: str) -> str:
    subj, why = f"plangate: reject plans/{slug}", "The plan was withdrawn."
    s = f"Controller-Seal: {HEX}"
    if kind == "ws":  # the block after a line of spaces
        return f"{subj}\n\n{why}\n   \n{s}\n"
    if kind == "so":  # prose, then Signed-off-by, then the seal in one block
        return f"{subj}\n\n{why}\n\nwithdrawn by the bot\nSigned-off-by: Mallory <m@x>\n{s}\n"
    if kind == "sc":  # a space before the colon
        return f"{subj}\n\n{why}\n\nController-Seal : {HEX}\n"
    if kind == "eq":  # an '=' separator (git's --trailer accepts it)
        return f"{subj}\n\n{why}\n\nController-Seal={HEX}\n"
    if kind == "lt":  # a very long trailer before the seal
        return f"{subj}\n\n{why}\n\nNote: {'x' * 9000}\n{s}\n"
    if kind == "cn":  # the whole value on a continuation line
        return f"{subj}\n\n{why}\n\nController-Seal:\n {HEX}\n"
    if kind == "tz":  # trailing lines of spaces after the seal
        return f"{subj}\n\n{why}\n\n{s}\n   \n  \n"
    if kind == "pr":  # prose after the seal in the same paragraph
        return f"{subj}\n\n{why}\n\n{s}\nand that is all\n"
    return f"{subj}\n\n{why}\n"  # ns: no seal at all


TRAILERS = ["ws", "so", "sc", "eq", "lt", "cn", "tz", "pr", "ns"]


def _git_sees_seal(lab: Lab, sha: str) -> bool:
    out = lab.git("log", "-1", "--format=%(trailers:key=Controller-Seal,valueonly)", sha)
    return any(len(v.strip()) == 64 for v in out.splitlines())


#: lab ``a`` (default policy; every plan Bob's): (slug -> expected runs)
AP = {
    "ff": 1, "fx": 1, "fz": 0, "fc": 1, "sa": 1, "pa": 1, "od": 0, "oe": 1, "oa": 0, "ob": 1,
    "oc": 1, "rv": 1, "mg": 1, "sw": 1,
    **{t: 1 for t in TRAILERS}, "ctl": 1,
}  # fmt: skip


def _a(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    proto = Lab(root / "proto")
    proto.run()
    policy0 = (proto.repo / ".plangate" / "policy.json").read_bytes()
    ctl0 = _ctl_line(proto)
    lab = Lab(root / "a")
    for s in AP:
        lab.write(s, plan_text(s))
    lab.commit("bob: plans", BOB)
    forged: dict[str, str] = {}
    checks: dict[str, str] = {}
    notes: dict[str, Any] = {}
    # ff: the FIRST commit under the controller's name is an unsealed record (Mallory an approver)
    raw, digest = _loosened(policy0)
    forged["ff"] = _forge(lab, _record_msg(digest, ctl0), policy=raw)
    lab.set_status("ff", "rejected")
    lab.commit("mallory: reject ff", MALLORY)
    # fx: a second unsealed commit under the controller's name, before any pass, rejects fx
    lab.set_status("fx", "rejected")
    forged["fx"] = _forge(lab, "plangate: freeze plans/fx\n\nFrozen.\n")
    # fz: and one, subject ``plangate: freeze plans/fz``, sets fz ``approved`` (nobody voted)
    lab.set_status("fz", "approved")
    forged["fz"] = _forge(lab, "plangate: freeze plans/fz\n\nFrozen.\n")
    lab.run()
    notes["ff-after-first-pass"] = lab.plan("ff")["plan"]["status"]
    notes["fx-after-first-pass"] = lab.plan("fx")["plan"]["status"]
    for s in ("ff", "fx"):  # the plan frozen once the file says pending again (Bob's edit)
        if lab.plan(s)["plan"]["status"] != "pending_approval":
            lab.set_status(s, "pending_approval")
            lab.commit(f"bob: {s} pending again", BOB)
    lab.run()
    _vote(lab, "ff", ALICE, checks)
    _vote(lab, "fx", ALICE, checks)
    _vote(lab, "fc", ALICE, checks)
    lab.run()
    # sa: Bob (the plan's author) commits the approval with Alice as its git author
    author = {"GIT_AUTHOR_NAME": ALICE[0], "GIT_AUTHOR_EMAIL": ALICE[1]}
    _vote(lab, "sa", BOB, checks, env=author)
    # pa: Bob runs ``plangate approve`` with GIT_AUTHOR_* of Alice
    try:
        env_bob = {"GIT_COMMITTER_NAME": BOB[0], "GIT_COMMITTER_EMAIL": BOB[1]}
        lab.extra_env = {**author, **env_bob}  # type: ignore[attr-defined]
        res = lab.cli("approve", "plans/pa", "--config", str(lab.config), cwd=lab.repo)
        notes["pa"] = (res.returncode, (res.stdout + res.stderr)[-400:])
        if "approved" not in lab.plan("pa")["plan"]["status"]:
            res = lab.cli(
                "approve", "plans/pa", "--force", "--config", str(lab.config), cwd=lab.repo
            )
            notes["pa-force"] = (res.returncode, (res.stdout + res.stderr)[-400:])
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
    notes["pa-commit"] = lab.git("log", "-1", "--format=%an <%ae> / %cn <%ce> %s")
    # od: Alice's approval dated a year before the freeze; oc (control) dated now
    old = {"GIT_AUTHOR_DATE": "@1700000000 +0000", "GIT_COMMITTER_DATE": "@1700000000 +0000"}
    _vote(lab, "od", ALICE, checks, env=old)
    _vote(lab, "oc", ALICE, checks)
    _vote(lab, "oa", ALICE, checks, env={"GIT_AUTHOR_DATE": "@1700000000 +0000"})
    _vote(lab, "ob", ALICE, checks, env={"GIT_COMMITTER_DATE": "@1700000000 +0000"})
    # oe: the old-dated approval brought by Alice's own --no-ff merge (what check simulates)
    lab.branch("side-oe", "main")
    lab.set_status("oe", "approved")
    lab.git("add", "-A")
    lab.extra_env = old  # type: ignore[attr-defined]
    lab.git("commit", "-q", "-m", "approve oe", who=ALICE)
    lab.extra_env = {}  # type: ignore[attr-defined]
    lab.git("checkout", "-q", "main")
    checks["oe"] = _check(lab, "side-oe", ALICE[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge side-oe", "side-oe", who=ALICE)
    _vote(lab, "rv", ALICE, checks)
    _vote(lab, "ctl", ALICE, checks)
    lab.run()
    # rv: Mallory reverts the controller's last record of the plan that ran
    last = lab.git("log", "-1", "--format=%H", f"--author={BOT[1]}", "--", "plans/rv").strip()
    notes["rv-reverted"] = lab.git("log", "-1", "--format=%s", last)
    lab.git("revert", "--no-edit", last, who=MALLORY)
    forged["rv"] = lab.head()
    lab.run()
    # mg: Mallory's rejection on a side branch, merged under the controller's full identity
    lab.branch("side-mg", "main")
    lab.set_status("mg", "rejected")
    lab.commit("mallory: reject mg", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.commit("bob: note", BOB)
    lab.git("merge", "-q", "--no-ff", "-m", "plangate: reject plans/mg", "side-mg", who=BOT)
    forged["mg"] = lab.head()
    # sw: an unsealed record after the real ones (Mallory an approver), Mallory rejects sw
    raw, digest = _loosened((lab.repo / ".plangate" / "policy.json").read_bytes())
    forged["sw"] = _forge(lab, _record_msg(digest, _ctl_line(lab)), policy=raw)
    lab.set_status("sw", "rejected")
    lab.commit("mallory: reject sw", MALLORY)
    # trailer variants: an unsealed status commit under the controller's name sets it rejected
    seen: dict[str, bool] = {}
    for t in TRAILERS:
        lab.set_status(t, "rejected")
        forged[t] = _forge(lab, _trailer_msg(t, t))
        seen[t] = _git_sees_seal(lab, forged[t])
    lab.run()
    for s in ["mg", "sw", *TRAILERS]:
        _vote(lab, s, ALICE, checks)
    lab.run()
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root, transport=True)
    out["single"] = clone_audit_got(
        lab, root, "--single-branch", "--branch", "main", name="single", transport=True
    )
    depth = int(lab.git("rev-list", "--count", f"{forged['sw']}..HEAD").strip()) + 1
    out["shallow"] = clone_audit_got(lab, root, f"--depth={depth}", name="shallow", transport=True)
    out.update(
        calls={s: len(lab.calls(s)) for s in AP}, checks=checks, forged=forged, notes=notes,
        seen=seen,
    )  # fmt: skip
    return out


ALIASES = """\
identity_aliases:
  people: [[alice@example.com, alice@ops.example.com]]
groups:
  ops: ["*@ops.example.com"]
  sec: ["alice@example.com", "carol@ops.example.com"]
rules:
  - match: {paths: ['plans/q*/**']}
    require: [{count: 2}]
  - match: {paths: ['plans/g*/**']}
    require: [{group: ops, count: 1}, {group: sec, count: 1}]
"""
#: lab ``al``: (voters in order, expected runs); ``alice@ops`` is Alice by the operator's alias
ALP: dict[str, tuple[list[tuple[str, str]], int]] = {
    "q2": ([ALICE, ALICE2], 0),
    "q3": ([ALICE2, ALICE], 0),
    "qc": ([ALICE, BOB], 1),
    "g2": ([ALICE, ALICE2], 0),
    "g3": ([ALICE2, ALICE], 0),
    "gc": ([ALICE, BOB], 1),
    "gd": ([CAROL, ALICE2], 1),
}


def _al(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    lab = Lab(root, approval=ALIASES)
    for s in ALP:
        lab.write(s, plan_text(s))
    lab.commit("agent: plans", ("Agent", "agent@example.com"))
    lab.run()
    checks: dict[str, str] = {}
    for s, (voters, _) in ALP.items():
        lab.approve(s, voters[0], f"approve {s}")
    lab.run()
    for s, (voters, _) in ALP.items():
        _vote(lab, s, voters[1], checks)
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root, transport=True)
    out.update(calls={s: len(lab.calls(s)) for s in ALP}, checks=checks, forged={}, seen={})
    return out


BUILDERS = {"a": (_a, AP), "al": (_al, {s: e for s, (_v, e) in ALP.items()})}


def _build_all(root: Path) -> Labs:
    return build_all(root, {k: b for k, (b, _) in BUILDERS.items()}, workers=2)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r97-approve-atk97a", _build_all)


#: seal-shaped to git's trailer parser (``%(trailers)``): read as the controller's by git
#: alone, the documented limit (docs/threat-model.md, Accepted limits): ``:ran``, ``:flagged``
LIMIT = {"ws", "so", "sc", "lt", "cn", "tz"}
#: no check: ``sa`` (``--as`` names the committer, the author is another), ``pa``, ``fz`` (no
#: branch)
NOCHECK = {"sa", "pa", "fz"}
#: checked, then landed by a merge commit (every other checked branch fast-forwarded)
MERGED = {"oe"}
FORGED = {"ff", "fx", "fz", "rv", "mg", "sw", *TRAILERS}
PLANS = [(n, s, e) for n, (_, d) in BUILDERS.items() for s, e in d.items()]
WHATS = [(n, s, e, w) for n, s, e in PLANS for w in ("ran", "audit", "check", "flagged")]
VALUES = [
    v for v in WHATS
    if not (v[1] in LIMIT and v[3] in ("audit", "check"))
    and not (v[1] in NOCHECK and v[3] == "check")
    and not (v[1] not in FORGED and v[3] == "flagged")
] + [("a", "sw", 1, "shallow"), ("a", "all", 0, "single")]  # fmt: skip
IDS = [f"{v[1]}:{v[3]}" for v in VALUES]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(("labname", "slug", "want", "what"), cases(IDS, VALUES, BROKEN))
def test_round97_atk97a(lab: Any, labname: str, slug: str, want: Any, what: str) -> None:
    got = lab.got[labname]
    plan = f"plans/{slug}"
    calls = got["calls"]
    if what == "ran":
        assert calls[slug] == want, (calls, got.get("notes"))
    elif what == "flagged":  # the audit names the look-alike commit
        commit = got["forged"][slug]
        rep = got["report"]
        named = [f for f in rep.get("findings", []) + rep.get("notes", [])
                 if commit[:12] in json.dumps(f)]  # fmt: skip
        assert named, (commit, [f for f in rep.get("findings", []) if f.get("plan") == plan])
    elif what == "check":
        out = got["checks"][slug]
        plans = [p for p in json.loads(out[: out.rfind("}") + 1])["plans"] if p["plan"] == plan]
        assert plans, out[-1500:]
        # as the branch landed: fast-forwarded (check's ``fast_forward`` prediction where it
        # differs from the merge commit's), ``oe`` by Alice's merge commit
        landed = plans[0] if slug in MERGED else {**plans[0], **plans[0].get("fast_forward", {})}
        assert (landed.get("outcome") == "start") == (calls[slug] > 0), (plans[0], calls)
    elif what == "shallow":  # a clone cut at the forged record: refused, never judged
        sh = got["shallow"]
        assert sh["report"].get("code") == "E_GIT" and sh["rc"] != 0, (sh["rc"], sh["err"])
    elif what == "single":  # a --single-branch clone reaches the full clone's verdicts
        assert got["single"]["valid"] == got["valid"], (got["single"]["valid"], got["valid"])
        assert got["single"]["report"].get("code") is None, got["single"]["err"]
    else:
        report = got["report"]
        assert report.get("code") is None and got["rc"] in (0, 1), (got["rc"], str(report)[:600])
        assert (plan in got["valid"]) == (calls[slug] > 0), (
            got["valid"], calls, [f for f in report.get("findings", []) if f.get("plan") == plan],
        )  # fmt: skip


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk97a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r97a-", dir="/tmp/atk97a"))
    got = _build_all(out).got
    for v in got.values():
        for key in ("report",):
            rep = v.get(key)
            if isinstance(rep, dict):
                v[key] = {k: rep.get(k) for k in ("ok", "code", "findings", "notes")}
        for key in ("single", "shallow"):
            if key in v:
                v[key] = {
                    "rc": v[key]["rc"],
                    "valid": v[key]["valid"],
                    "err": v[key]["err"],
                    "code": v[key]["report"].get("code"),
                    "findings": v[key]["report"].get("findings"),
                }
        for k, c in dict(v.pop("checks", None) or {}).items():
            try:
                j = json.loads(c[: c.rfind("}") + 1])
            except ValueError:
                v["check-" + k] = c[-500:]
                continue
            v["check-" + k] = [
                (p["plan"], p.get("outcome"), p.get("refused"))
                for p in j.get("plans", [])
                if p["plan"] == f"plans/{k}"
            ]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
