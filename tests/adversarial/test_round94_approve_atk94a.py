"""Round 94, approval and policy (atk94a): the recorded policy file as an attack surface,
the config changed between passes, risk and tool rules reached through fallbacks and nested
plans, quorum entries over overlapping groups, approvals given before the freeze.

Every lab is its own repo (advkit ``Lab``), built once per module (``shared``), two at a
time. Ids: ``<slug>:ran`` counts the recording tool's calls for the plan (and, where the
plan has a fallback, that the fallback never ran); ``<slug>:audit`` runs ``plangate audit
--json`` in a fresh clone with NO config and asserts it reads the records (no ``code``, exit
0 or 1) and calls the plan's start valid exactly when it ran; ``<slug>:check`` that
``plangate check --base main --head <branch> --as <voter> --format json`` on the branch of
the plan's last approval said ``"outcome": "start"`` exactly when the plan then ran.

Lab ``pf`` (``{paths: ['plans/q*/**']}`` needs two; others one). The agent's q-plans, then:
``qe`` the agent rewrites ``.plangate/policy.json`` (rules gone, approvers ``*@example.com``)
in RFC 8785 form, in a commit ``plangate: record policy`` with the matching ``Policy-Hash:``,
authored under the controller's name (committer the agent); Alice approves ``qe`` alone.
``qv``: the agent ``git revert``s the controller's record commit (the file deleted); Alice
approves alone. ``qm``: a branch loosening the file, merged by Bob (an approver); Alice
approves alone. ``qw``/``wr``: a record commit forged under the controller's FULL identity
(author and committer ``plangate@localhost``, matching ``Policy-Hash:``, no
``Controller-Seal:``), the loosened policy making Mallory an approver; in the same push
Mallory rejects ``wr`` (Bob's plan) and Alice approves ``qw`` alone; after the pass Alice
approves ``wr``. ``ws``: the same with a seal-shaped ``Controller-Seal:`` line. ``wc``
(control): Mallory rejects Bob's plan, nothing forged; Alice approves. ``qc``: Alice's vote
collected (partial), the config then drops the rule between passes, Carol approves. ``ux``:
Alice approves a u-plan and, before the pass, the config adds ``plans/u*/**`` needs two.
``qz``: the agent's branch loosens the policy file and Alice approves ``qz`` on it; CI's
``check`` without a config (``qz:checknc``) and with it; fast-forwarded. ``qx``, ``ok``
(controls): Alice then Bob; Bob alone for an unruled plan. ``<slug>:flagged``: the audit
names the commit that changed the file with ``policy-changed``.

Lab ``rk`` (catalog ``hi``: ``risk: high``; ``danger``: no risk; rules ``{risk: high}``
needs two, then ``{tools: [danger]}`` needs two): ``rf`` ``rec`` with a fallback step calling
``hi``; ``rd`` a fallback calling ``danger``; ``rn`` pins a draft child calling ``hi``;
``rdn`` a child calling ``danger``; ``rnn`` pins a draft that pins the ``hi`` child (two
levels); ``rl`` (control) ``rec`` only; ``rf2`` (control) like ``rf``, Alice then Bob.
Alice approves every plan alone on a branch (checked ``--as alice``). ``<slug>:risk``: the
frozen ``risk`` and ``policy.rule``.

Lab ``gp`` (groups ``ops: [alice, *@ops]``, ``sec: [alice, carol@ops]``; ``plans/g*``
needs 1 ops + 1 sec; ``plans/h*`` 1 sec + ``{count: 2}``; ``plans/d*`` two): ``g1`` Alice
alone (in both groups), ``g2`` Alice, Bob; ``g3`` Bob, Carol; ``g4`` Bob, Dave (ops only);
``g5`` Carol alone (both groups); ``h1`` Alice, Bob; ``h4`` Alice, Bob, Dave; ``h2`` Bob,
Dave; ``h3`` Carol alone; ``d1`` Alice; ``d2`` Alice, Bob. Each plan's last voter's
approvals on a branch of their own, checked ``--as`` them. Approvals before the freeze:
``dz`` a draft Alice sets ``approved``, the agent then sets ``pending_approval`` (frozen),
Bob approves (two needed); ``dy`` the same without Bob; ``dq`` Alice approves in the push
that wrote it (before any pass), Bob after the freeze.

Seen (round 94): two ids broke (``wr:audit``, ``wr:flagged``); the controller held
everywhere.

- ``pf``: ``qe``, ``qv``, ``qm``, ``qw`` stayed ``partial`` (``approvals:
  [alice@example.com]``, ``missing: 1 more approval``), never ran; the controller recorded
  its own policy again after each edit (``plangate: record policy``, ``The controller's
  effective policy: restored``). The audit flagged ``policy-changed`` for ``qe`` (``changed
  under the controller's name but committed by agent@example.com``), ``qv`` (``agent@example.com
  deleted .plangate/policy.json``) and ``qm`` (``bob@ops.example.com changed ...``). ``wc``:
  Mallory's rejection ignored by both (audit ``withdraw-not-allowed: E_APPROVER_NOT_ALLOWED:
  mallory@example.com set status rejected ... ignored``), ran once, valid. BROKE ``wr``: the
  controller ignored Mallory's rejection and ran ``wr`` once on Alice's approval, but the
  fresh-clone audit took the forged, UNSEALED record commit as the controller's (its hash is
  listed under ``policies``, no finding names that commit) and judged Mallory's rejection by
  it: ``illegal: E_ILLEGAL_TRANSITION: alice@example.com set status approved (from rejected)
  ...; ignored`` and ``start-without-approval: no approval request precedes this start``;
  ``wr`` not valid. (``ws``, the seal-shaped forgery, read the same way: the documented limit
  of a seal git alone cannot verify, no id.) ``qc`` ran after Carol (``approvals: [alice,
  carol]``), valid; ``ux`` stayed partial; ``qz``: check without config ``E_CONFIG_INVALID:
  no config found``, with it ``partial``; ``qx``, ``ok`` ran (check ``start``).
- ``rk``: frozen ``risk: high``, ``policy.rule: 0`` for ``rf``, ``rf2``, ``rn``; ``rule: 1``
  (tools) for ``rd``, ``rdn``; ``rf``, ``rn``, ``rd``, ``rdn`` stayed ``partial``; ``rnn``
  invalid (``nested plan plans/cx-mid nests a plan (one level only)``); ``rl`` ran, ``rf2``
  after Bob; check agreed (``rnn``: ``none``).
- ``gp``: ``g1`` ``missing: 1 from sec`` (one person, one entry), ``g5`` the same for Carol,
  ``g4`` and ``h2`` ``1 from sec``, ``h1`` ``1 more approval`` (Alice fills ``sec``, Bob one
  of the two), ``h3`` ``2 approvals``; ``g2``, ``g3``, ``h4``, ``d2`` ran; check agreed on
  each. ``dz``/``dy``: Alice's approval of the draft ignored (audit ``E_ILLEGAL_TRANSITION:
  alice@example.com set status approved (from draft)``), ``dz`` and ``dq`` partial with Bob
  alone; none ran.

Should: docs/approvals.md, The recorded policy: "What makes a policy *recorded* is a commit
of the controller's, never the file's bytes"; docs/threat-model.md (Commits under the
controller's name read by git alone): the fresh-clone audit "flags a look-alike whose shape
the controller never makes ... a run event ... with no ``Controller-Seal:`` of 64 hex
digits, which every controller commit carries since round 66": every real ``plangate:
record policy`` commit carries one, the forged record in ``wr`` none, yet it was read as the
controller's record and not flagged, and "Withdrawals are judged by the controller's last own
record before them" so the audit's verdict on ``wr`` departs from the controller's.
Quorum: "One person counts once and in one entry (an approver in two groups is placed where
the quorum needs them)"; risk "actions, fallbacks, checks, and the actions of the plans it
nests"; "The file is a record, not an input".

Fixed (2026-12-02, r94audit): a record counts, for the audit and every git-only reader, only
from a commit of the controller's shape, its identity AND a ``Controller-Seal:`` of the
seal's form (``hashing.seal_shaped``, the predicate of unsealed run events, asked by
``recorded.recorded_hash``); the unsealed look-alike is flagged ``policy-changed`` naming its
commit and the audit judges by the last sealed record (``wr:audit``, ``wr:flagged`` pass).
"""

from __future__ import annotations

import hashlib
import json
import os
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
from checkkit import predicts_start
from test_round2_execution_kit import shared

DAVE = ("Dave", "dave@ops.example.com")
QUORUM = "rules:\n  - match: {paths: ['plans/q*/**']}\n    require: [{count: 2}]\n"


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
        out[s] = (a.get("status"), a.get("code"), votes, a.get("missing"))
    return out


def _finish(lab: Lab, root: Path, slugs: list[str], **extra: Any) -> dict[str, Any]:
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root)
    out.update(blocks=_blocks(lab, slugs), calls={s: len(lab.calls(s)) for s in slugs}, **extra)
    return out


def _canon(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _policy(lab: Lab) -> dict[str, Any]:
    return json.loads((lab.repo / ".plangate" / "policy.json").read_text())


def _forge(lab: Lab, data: dict[str, Any], who: tuple[str, str], committer: tuple[str, str]) -> str:
    """Write ``data`` as the policy file and commit it as a record would be made."""
    raw = _canon(data)
    (lab.repo / ".plangate" / "policy.json").write_bytes(raw)
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    lab.git("add", "-A")
    lab.extra_env = {"GIT_AUTHOR_NAME": who[0], "GIT_AUTHOR_EMAIL": who[1]}  # type: ignore[attr-defined]
    try:
        lab.git(
            "commit", "-q", "--allow-empty", "-m",
            f"plangate: record policy\n\napproval.rules\n\nPolicy-Hash: {digest}\n",
            who=committer,
        )  # fmt: skip
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
    return digest


def _loosen(pol: dict[str, Any]) -> dict[str, Any]:
    """The recorded policy with no rules and every ``example.com`` address an approver."""
    pol = json.loads(json.dumps(pol))
    appr = pol.get("approval", {})
    appr["rules"] = []
    appr["approvers"] = ["*@example.com", "*@ops.example.com"]
    return pol


#: lab ``pf``: expected runs
PFP = {"qe": 0, "qv": 0, "qm": 0, "qw": 0, "qc": 1, "wr": 1, "wc": 1, "ws": 1, "qz": 0, "qx": 1,
       "ux": 0, "ok": 1}  # fmt: skip


def _pf(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    lab = Lab(root, approval=QUORUM)
    for s in ("qe", "qv", "qm", "qw", "qc", "qx", "qz", "ux", "ok"):
        lab.write(s, plan_text(s))
    lab.commit("agent: plans", AGENT)
    for s in ("wr", "wc", "ws"):
        lab.write(s, plan_text(s))
    lab.commit("bob: wr wc ws", BOB)
    lab.run()
    # wc (control): Mallory (no approver) rejects Bob's plan, nothing forged; Alice approves
    lab.set_status("wc", "rejected")
    lab.commit("mallory: reject wc", MALLORY)
    lab.run()
    lab.approve("wc", ALICE, "approve wc")
    lab.run()
    real = _policy(lab)
    first = lab.head()
    records = lab.git("log", "--format=%H", "--grep=record policy", "--", ".plangate").split()
    # qe: the agent edits the file (rules gone) with a matching Policy-Hash, under the
    # controller's NAME as author (committer the agent), then Alice approves alone
    forged = {"qe": _forge(lab, _loosen(real), BOT, AGENT) and lab.head()}
    lab.approve("qe", ALICE, "approve qe")
    lab.run()
    # qv: the agent reverts the controller's record commit, then Alice approves alone
    if records:
        lab.git("revert", "--no-edit", records[-1], who=AGENT, check=False)
        lab.git("revert", "--abort", check=False)
    if (lab.repo / ".plangate" / "policy.json").exists():
        (lab.repo / ".plangate" / "policy.json").unlink()
        lab.commit('Revert "plangate: record policy"', AGENT)
    forged["qv"] = lab.head()
    lab.approve("qv", ALICE, "approve qv")
    lab.run()
    # qm: a loosened policy file merged in by Bob (an approver), Alice approves alone
    lab.branch("loose", "main")
    raw = _canon(_loosen(_policy(lab)))
    (lab.repo / ".plangate" / "policy.json").write_bytes(raw)
    lab.commit("agent: policy", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge loose", "loose", who=BOB)
    forged["qm"] = lab.head()
    lab.approve("qm", ALICE, "approve qm")
    lab.run()
    # qw + wr: a record commit forged under the controller's FULL identity (author and
    # committer), loosened; Mallory (no approver) rejects wr (Bob's plan) and Alice
    # approves qw alone, all in one push; then Alice approves wr
    _forge(lab, _loosen(_policy(lab)), BOT, BOT)
    forged["wr"] = lab.head()
    lab.set_status("wr", "rejected")
    lab.commit("mallory: reject wr", MALLORY)
    lab.approve("qw", ALICE, "approve qw")
    lab.run()
    lab.approve("wr", ALICE, "approve wr")
    lab.run()
    # ws: the same with a seal-shaped Controller-Seal line on the forged record
    raw = _canon(_loosen(_policy(lab)))
    (lab.repo / ".plangate" / "policy.json").write_bytes(raw)
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    lab.git("add", "-A")
    lab.git(
        "commit", "-q", "-m",
        "plangate: record policy\n\nThe controller's effective policy: approval.rules\n\n"
        f"Policy-Hash: {digest}\nController: vm/0637186b/2f6b02a3a839b7fe\n"
        f"Controller-Seal: {'ab' * 32}\n",
        who=BOT,
    )  # fmt: skip
    lab.set_status("ws", "rejected")
    lab.commit("mallory: reject ws", MALLORY)
    lab.run()
    lab.approve("ws", ALICE, "approve ws")
    lab.run()
    # qz: the agent's branch loosens the policy file and Alice approves qz there; CI's check
    # WITHOUT a config (a clone holds no plangate.yml) and with it; Carol merges
    lab.branch("loose2", "main")
    raw = _canon(_loosen(_policy(lab)))
    (lab.repo / ".plangate" / "policy.json").write_bytes(raw)
    lab.commit("agent: policy", AGENT)
    lab.approve("qz", ALICE, "approve qz")
    lab.git("checkout", "-q", "main")
    nc = lab.cli("check", "--base", "main", "--head", "loose2", "--as", ALICE[1],
                 "--format", "json", cwd=lab.repo)  # fmt: skip
    checks = {"qz-nc": nc.stdout + nc.stderr, "qz": _check(lab, "loose2", ALICE[1])}
    lab.git("merge", "-q", "--ff-only", "loose2")
    lab.run()
    # qc: Alice's vote collected (partial), then the config drops the rule while the
    # controller keeps passing; Carol's later approval of the same hash decides
    lab.approve("qc", ALICE, "approve qc")
    lab.run()
    lab.write_config(approval="")
    lab.run()
    lab.approve("qc", CAROL, "approve qc")
    lab.run()
    # ux: Alice approves a plan outside q*; before the pass, the config adds a rule for u*
    lab.approve("ux", ALICE, "approve ux")
    lab.write_config(
        approval="rules:\n  - match: {paths: ['plans/u*/**']}\n    require: [{count: 2}]\n"
    )
    lab.run()
    # qx, ok: honest flows on a branch, checked; qx needs two again
    lab.write_config(approval=QUORUM)
    lab.run()
    lab.approve("qx", ALICE, "approve qx")
    lab.run()
    lab.branch("fin", "main")
    lab.approve("qx", BOB, "approve qx")
    lab.approve("ok", BOB, "approve ok")
    lab.git("checkout", "-q", "main")
    checks["bob"] = _check(lab, "fin", BOB[1])
    lab.git("merge", "-q", "--ff-only", "fin")
    return _finish(lab, root, list(PFP), checks=checks, first=first, forged=forged)


HIGH = "rules:\n  - match: {risk: high}\n    require: [{count: 2}]\n" \
    "  - match: {tools: [danger]}\n    require: [{count: 2}]\n"  # fmt: skip


def _tools(root: Path) -> str:
    import sys

    rec = json.dumps([sys.executable, str(root / "rec.py"), "{tag}"])
    env = json.dumps(str(root / "ran.log"))
    return (
        f"hi: {{kind: exec, argv: {rec}, env: {{REC_LOG: {env}}}, risk: high}}\n"
        f"danger: {{kind: exec, argv: {rec}, env: {{REC_LOG: {env}}}}}\n"
    )


def _fb(tag: str, tool: str) -> str:
    return (
        plan_text(tag).replace("  - name: rec\n", f"  - name: rec\n  - name: {tool}\n")
        + "    on_failure: fallback\n    fallback:\n"
        f'      - {{id: "1.1", tool: {tool}, why: "fallback", params: {{tag: "{tag}-fb"}}}}\n'
    )


def _child(tag: str, tool: str) -> str:
    return (
        f'plan:\n  name: "{tag}"\n  task: "child {tag}"\n  status: draft\n'
        f"available_tools:\n  - name: {tool}\nactions:\n  - id: 1\n    tool: {tool}\n"
        f'    why: "child"\n    params:\n      tag: "{tag}"\n'
    )


def _parent(tag: str, path: str, digest: str) -> str:
    return plan_text(tag) + (
        f'  - id: 2\n    plan: {{path: {path}, hash: "{digest}"}}\n    why: "nested"\n'
    )


#: lab ``rk``: expected runs after Alice alone
RKP = {"rf": 0, "rn": 0, "rd": 0, "rdn": 0, "rnn": 0, "rl": 1, "rf2": 1}


def _rk(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    lab = Lab(root, approval=HIGH)
    lab.write_config(approval=HIGH, tools=_tools(root))
    lab.write("rf", _fb("rf", "hi"))
    lab.write("rf2", _fb("rf2", "hi"))
    lab.write("rd", _fb("rd", "danger"))
    lab.write("cx-hi", _child("cx-hi", "hi"))
    lab.write("cx-dg", _child("cx-dg", "danger"))
    lab.write("rl", plan_text("rl"))
    lab.commit("agent: plans", AGENT)
    lab.run()

    def digest(slug: str) -> str:
        return lab.cli("hash", f"plans/{slug}", cwd=lab.repo).stdout.strip().split()[-1]

    hh, dd = digest("cx-hi"), digest("cx-dg")
    lab.write("rn", _parent("rn", "plans/cx-hi", hh))
    lab.write("rdn", _parent("rdn", "plans/cx-dg", dd))
    # rnn: two levels: rnn pins cx-mid, which pins cx-hi
    lab.write("cx-mid", _parent("cx-mid", "plans/cx-hi", hh).replace("pending_approval", "draft"))
    lab.commit("agent: nested", AGENT)
    md = digest("cx-mid")
    lab.write("rnn", _parent("rnn", "plans/cx-mid", md))
    lab.commit("agent: nested 2", AGENT)
    lab.run()
    frozen = {s: (lab.plan(s).get("frozen") or {}) for s in RKP}
    lab.branch("fin", "main")
    for s in RKP:
        lab.approve(s, ALICE, f"approve {s}")
    lab.git("checkout", "-q", "main")
    checks = {"alice": _check(lab, "fin", ALICE[1])}
    lab.git("merge", "-q", "--ff-only", "fin")
    lab.run()
    lab.branch("fin2", "main")
    lab.approve("rf2", BOB, "approve rf2")
    lab.git("checkout", "-q", "main")
    checks["bob"] = _check(lab, "fin2", BOB[1])
    lab.git("merge", "-q", "--ff-only", "fin2")
    out = _finish(lab, root, list(RKP), frozen=frozen,
                  hashes=(hh, dd, md), checks=checks)  # fmt: skip
    out["calls"].update({f"{s}-fb": len(lab.calls(f"{s}-fb")) for s in ("rf", "rf2", "rd")})
    return out


GROUPS = """\
groups:
  ops: ["alice@example.com", "*@ops.example.com"]
  sec: ["alice@example.com", "carol@ops.example.com"]
rules:
  - match: {paths: ['plans/g*/**']}
    require: [{group: ops, count: 1}, {group: sec, count: 1}]
  - match: {paths: ['plans/h*/**']}
    require: [{group: sec, count: 1}, {count: 2}]
  - match: {paths: ['plans/d*/**']}
    require: [{count: 2}]
"""
#: lab ``gp``: (voters in order, expected runs)
GPP = {
    "g1": ([ALICE], 0),
    "g2": ([ALICE, BOB], 1),
    "g3": ([BOB, CAROL], 1),
    "g4": ([BOB, DAVE], 0),
    "g5": ([CAROL], 0),
    "h1": ([ALICE, BOB], 0),
    "h4": ([ALICE, BOB, DAVE], 1),
    "h2": ([BOB, DAVE], 0),
    "h3": ([CAROL], 0),
    "d1": ([ALICE], 0),
    "d2": ([ALICE, BOB], 1),
}


def _gp(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    lab = Lab(root, approval=GROUPS)
    for s in GPP:
        lab.write(s, plan_text(s))
    lab.write("dz", plan_text("dz", status="draft"))
    lab.write("dy", plan_text("dy", status="draft"))
    lab.commit("agent: plans", AGENT)
    lab.write("dq", plan_text("dq"))
    lab.commit("agent: dq", AGENT)
    lab.approve("dq", ALICE, "approve dq before any pass")
    # dz: Alice approves the draft in the very push that wrote it... after one pass: the
    # draft validated, never frozen; Alice sets approved, then the agent sets pending
    lab.run()
    lab.approve("dz", ALICE, "approve dz (draft)")
    lab.approve("dy", ALICE, "approve dy (draft)")
    # dq: Alice's approval in the same push, before any pass froze it
    lab.run()
    lab.set_status("dz", "pending_approval")
    lab.set_status("dy", "pending_approval")
    lab.commit("agent: ready", AGENT)
    lab.run()
    early = {s: lab.plan(s).get("approval") for s in ("dz", "dy")}
    for step in range(2):
        for s, (voters, _e) in GPP.items():
            if step < len(voters) - 1:
                lab.approve(s, voters[step], f"approve {s}")
        lab.run()
    lab.approve("dz", BOB, "approve dz")
    lab.run()
    if lab.plan("dq")["plan"]["status"] != "approved":
        lab.approve("dq", BOB, "approve dq")
    lab.run()
    final: dict[tuple[str, str], list[str]] = {}
    for s, (voters, _e) in GPP.items():
        final.setdefault(voters[-1], []).append(s)
    checks = {}
    for v, mine in final.items():
        branch = "fin-" + v[0].lower()
        lab.branch(branch, "main")
        for s in mine:
            lab.approve(s, v, f"approve {s}")
        lab.git("checkout", "-q", "main")
        checks[v[1]] = _check(lab, branch, v[1])
    for v, mine in final.items():  # each voter's approvals, as the merge would bring them
        for s in mine:
            lab.approve(s, v, f"approve {s}")
    slugs = [*GPP, "dz", "dy", "dq"]
    return _finish(lab, root, slugs, checks=checks, early=str(early)[:600])


BUILDERS = {
    "pf": (_pf, PFP),
    "rk": (_rk, RKP),
    "gp": (_gp, {**{s: e for s, (_v, e) in GPP.items()}, "dz": 0, "dy": 0, "dq": 0}),
}


def _build_all(root: Path) -> Labs:
    return build_all(root, {k: b for k, (b, _) in BUILDERS.items()}, workers=2)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r94-approve-atk94a", _build_all)


PLANS = [(n, s, e) for n, (_, d) in BUILDERS.items() for s, e in d.items()]
#: the check that predicted each plan's last step: (checks key)
CHECKED = {
    "qx": "bob",
    "ok": "bob",
    "qz": "qz",
    **{s: "alice" for s in RKP if s != "rf2"},
    "rf2": "bob",
    **{s: v[-1][1] for s, (v, _e) in GPP.items()},
}
#: ``ws``: a seal-shaped forged record is the documented limit of git alone (no ``:audit``)
IDS = [f"{s}:{w}" for _n, s, _ in PLANS for w in ("ran", "audit") if (s, w) != ("ws", "audit")]
VALUES = [(n, s, e, w) for n, s, e in PLANS for w in ("ran", "audit") if (s, w) != ("ws", "audit")]
IDS += [f"{s}:check" for _n, s, _ in PLANS if s in CHECKED] + ["qz:checknc"]
VALUES += [(n, s, e, "check") for n, s, e in PLANS if s in CHECKED] + [("pf", "qz", 0, "checknc")]
IDS += [f"{s}:flagged" for s in ("qe", "qv", "qm", "wr")]
VALUES += [("pf", s, 0, "flagged") for s in ("qe", "qv", "qm", "wr")]
#: frozen risk and the rule that decides (0: risk high, 1: tools [danger], None)
RISK = {"rf": ("high", 0), "rf2": ("high", 0), "rn": ("high", 0), "rd": ("medium", 1),
        "rdn": ("medium", 1), "rl": ("medium", None)}  # fmt: skip
IDS += [f"{s}:risk" for s in RISK]
VALUES += [("rk", s, r, "risk") for s, r in RISK.items()]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(("labname", "slug", "want", "what"), cases(IDS, VALUES, BROKEN))
def test_round94_atk94a(lab: Any, labname: str, slug: str, want: Any, what: str) -> None:
    got = lab.got[labname]
    plan = f"plans/{slug}"
    calls = got["calls"]
    blk = got["blocks"].get(slug)
    if what == "ran":
        assert calls[slug] == want, (calls, blk)
        if f"{slug}-fb" in calls:  # the fallback never ran: action 1 did not fail
            assert calls[f"{slug}-fb"] == 0, calls
    elif what == "risk":
        frozen = got["frozen"][slug]
        assert (frozen.get("risk"), (frozen.get("policy") or {}).get("rule")) == want, frozen
    elif what == "checknc":  # no config: refused, never judged by the branch's policy file
        out = got["checks"]["qz-nc"]
        assert '"E_CONFIG_INVALID"' in out and not predicts_start(out), out[-800:]
    elif what == "flagged":  # the audit names the commit that changed the policy file
        commit = got["forged"][slug]
        kinds = [f.get("kind") for f in got["report"].get("findings", []) + got["report"].get(
            "notes", []) if str(f.get("commit", "")).startswith(commit[:12])]  # fmt: skip
        assert "policy-changed" in kinds, (commit, str(got["report"])[:1500])
    elif what == "check":
        out = got["checks"][CHECKED[slug]]
        plans = [p for p in json.loads(out[: out.rfind("}") + 1])["plans"] if p["plan"] == plan]
        assert plans, out[-1500:]
        assert (plans[0].get("outcome") == "start") == (calls[slug] > 0), (plans[0], calls, blk)
    else:
        report = got["report"]
        assert report.get("code") is None and got["rc"] in (0, 1), (got["rc"], str(report)[:600])
        assert (plan in got["valid"]) == (calls[slug] > 0), (
            got["valid"], calls, [f for f in report.get("findings", []) if f.get("plan") == plan],
        )  # fmt: skip


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk94a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r94a-", dir="/tmp/atk94a"))
    got = _build_all(out).got
    for v in got.values():
        rep = v.get("report")
        if isinstance(rep, dict):
            v["report"] = {k: rep.get(k) for k in ("ok", "code", "message", "findings")}
        for k, c in dict(v.pop("checks", None) or {"check": v.pop("check", "{}")}).items():
            try:
                j = json.loads(c[: c.rfind("}") + 1])
            except ValueError:
                v[k] = c[-500:]
                continue
            v[k] = [(p["plan"], p.get("outcome"), p.get("refused")) for p in j.get("plans", [])]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
