"""Round 127, policy and audit (atk127p): "git alone proves it". A fresh clone's
``plangate audit`` reaches the controller's verdicts run by run, every policy the controller
applied is recorded in git (``.plangate/policy.json``, ``Policy-Hash:``; SPEC §11, §15), a
policy change the controller did not make is flagged, and ``check --as`` predicts what the
controller then does. Aimed at what changed since round 125: the audit follows a change of
the controller's identity through the ``Previous-Identity:`` trailer of its first record
under the new one (docs/operations.md "Changing the controller's identity", docs/approvals.md
"plangate audit"), the record names ``plans_dir``, runs-once reads earlier plans folders.

Labs (``build_all``, local mode, ``run --once``; builders in ``atk127pkit.py`` and here).
Every chain lab has one plan ``s<i>`` approved by Bob per restart, ``g1`` (two actions, the
second gated: Alice approves under the first identity, Bob answers the gate after the first
identity change), and, with a move, ``plans_dir`` changed to ``ops`` at the end, where the
agent commits ``ops/s0`` (the bytes of ``plans/s0`` as first frozen: s0 ran) and ``ops/t1``;
Alice approves both in a pull request checked ``--as alice`` (by the operator with the
controller's config, and in a fresh clone with an empty state directory: a CI runner), merged.

- Lab i: identity A (``plangate@localhost``) -> B (``pg-b``, Alice removed from the
  approvers: her approval of ``rmk`` refused; Bob's pull request ``ckk`` checked) -> C
  (``pg-c``, Alice back) -> A again; then ``plans/s0b``, a copy of s0, approved (PR, checked).
- Lab j: A -> B -> A, then the move. Lab k (control): A -> B, then the move. Lab n
  (control): one identity, the move. Lab m: A, then identity B and ``plans_dir: ops`` in
  ONE restart.
- Lab f: the agent forges an identity change: a seal-shaped ``plangate: record policy``
  under its own identity ``pg-x`` naming ``Previous-Identity: plangate@localhost``, its
  ``policy.json`` naming itself and Mallory as the only approver; Mallory approves ``f2``
  (PR checked ``--as mallory``), a pass; Alice approves ``f3``, a pass; then ``pg-x`` forges
  f2's ``start`` and ``complete`` (seal-shaped, ``Policy-Hash:`` of its policy).
- Lab g: the operator changes the identity to B; before the controller's first pass under
  B the agent commits a seal-shaped record AS B (``Previous-Identity:`` A, Mallory the only
  approver), Mallory approves ``q2`` (PR checked ``--as mallory``) and commits under her own
  name a record-shaped message with ``Previous-Identity: pg-x``; the pass under B; Bob
  approves ``q3``; a pass.
- Lab h: plan folders named like trailers (``plans/Policy-Hash: sha256:0...``,
  ``plans/y Previous-Identity: pg-x@localhost``, one with a NEWLINE before
  ``Previous-Identity:``) approved by Alice and run under A, the identity changed to B, and
  ``plans/w Previous-Identity: pg-x@localhost`` approved by Bob and run under B (the
  controller's own sealed commits carry these names in their subjects and ``Plan:``).

After each chain lab: a ``--single-branch --no-tags`` clone of main over ``file://``
audited ``--controller`` today's identity, and ``audit --config`` with today's config
naming an identity no record names yet (the operator edited it, no pass since).

Ids (``<lab>:<what>``): ``:passes`` (every pass exit 0); ``:ran`` (the recording tool: each
plan that must run ran once, ``g1`` both actions, ``rmk`` never, the copies never);
``:records`` (each identity change: a record by the new identity whose
``Previous-Identity:`` names the old one); ``:plain`` (a fresh clone without
``--controller``: ``E_CONFIG_INVALID`` naming every identity, exit 2, as documented; lab n:
every run valid); ``:audit:<identity>`` (a fresh clone ``--controller <identity>``, each
identity of the lab) and ``:audit:config`` (``audit --config``): exit 0, no finding, exactly
the controller's runs (plan, kind) and each valid; ``:agree`` (those audits list the same
runs, start commits and policies); ``:policy`` (each run's ``policy_hash`` = its start's
``Policy-Hash:`` = sha256 of ``policy.json`` in its tree); ``:check:<plan>`` / ``:ci:<plan>``
(the operator's / a CI clone's ``check --as`` predicted the controller's outcome: ``start``,
or ``refuse`` ``E_ALREADY_EXECUTED`` for a copy); ``:copy`` (the copy refused
``E_ALREADY_EXECUTED``); ``i:rmk``; ``f:ran``, ``f:refused``
(``E_APPROVER_NOT_ALLOWED``), ``f:check``, ``f:record`` (the controller recorded its own
policy again), ``f:config`` (``audit --config`` never follows the forged link: f1, f3 valid,
the forged record ``policy-changed`` at its commit, the forged run flagged, exit 1),
``f:plain`` (``E_CONFIG_INVALID`` naming both), ``f:fresh`` (documented limit, see below: the
audit still exits 1 with findings on f2); ``:single`` (the single-branch clone: every run,
no finding); ``:today`` (``--config`` with today's identity changed: the same verdicts, as
"a note, not a finding"); ``g:ran``, ``g:refused``, ``g:check``, ``g:link`` (the
controller's own first record under B names A), ``g:record``, ``g:config`` (q1, q3 valid,
the agent's record ``policy-changed`` at its commit, no plan finding), ``g:fresh:<id>``
(q1, q3 valid, no q2 run), ``g:person`` (Mallory's record-shaped commit: no audit names
``pg-x`` or lists it as a policy); ``h:ran`` (the approved folders ran once, the newline
folder never), ``h:audit:<A|B|config>`` (every run valid, judged by its start's own
``Policy-Hash:``, two policies, no finding, exit 0); ``n:next:<copy|check|audit>`` (lab
n once more: a copy ``ops/s0d`` frozen under A, today's config changed to ``pg-next``,
Alice's pull request checked with it, merged, the restart: the copy refused, ``check``
predicted that, ``audit --config`` after the restart lists every run, no finding).

Seen (round 127: 102 ids, 83 passed, 19 xfailed (strict); 27-75 s wall at ``-n 1``, by load)

Classes:

- ``identity-return-splits-audit`` (``i:audit:config``, ``i:audit:pg-c@localhost``,
  ``i:agree``, ``j:audit:config``, ``j:agree``; fail closed): when the controller's identity
  comes back to an earlier one (A -> B -> C -> A, or A -> B -> A, each change with the state
  directory kept, each record carrying the right ``Previous-Identity:``), ``audit --config``
  (today's identity A) misses every run of A's FIRST stretch (``s0``, ``g1``'s first start)
  and flags the controller's own commits of that stretch ``illegal``,
  ``owned-block-changed``, ``log-changed`` and its first record ``policy-changed`` (exit 1);
  in lab i a fresh clone's ``--controller pg-c`` does the same, while ``--controller`` A or
  B list every run, no finding. Expected (docs/operations.md: "``plangate audit --config``
  and, on a fresh clone, ``--controller`` with either identity list every run before and
  after it and flag none of the controller's own commits"; docs/approvals.md: the audit
  "follows these links back and on, reads history from the first identity of that chain").
- ``identity-return-check-misses-run`` (``j:check:ops/s0``; fail open in the prediction,
  the controller held): after A -> B -> A and a ``plans_dir`` move, the operator's
  ``check --as alice`` (the controller's config and state directory) predicted ``start`` for
  ``ops/s0``, a copy of the version that ran as ``plans/s0`` under A's first stretch; the
  controller refused it ``E_ALREADY_EXECUTED`` (and a CI clone's ``check`` predicted that;
  control lab k, A -> B, predicts it). Expected (docs/operations.md, "Moving the plans
  folder": "a version that ran under the old folder never runs again under the new one, and
  ``check`` predicts the refusal").
- ``identity-change-with-move-unlinked`` (``m:records``, ``m:audit:plangate@localhost``,
  ``m:audit:pg-b@localhost``, ``m:audit:config``, ``m:agree``, ``m:check:ops/s0``,
  ``m:single``; fail
  closed for the audit, fail open in the prediction): identity A -> B and ``plans_dir``
  ``plans`` -> ``ops`` in ONE restart (state directory kept): the controller's record under B
  carries NO ``Previous-Identity:``; so ``--controller`` A lists only A's runs (``ops/t1`` gone) and
  flags a ``policy-changed``, ``--controller`` B and ``--config`` list only ``ops/t1`` (s0 and
  g1 gone, a ``policy-changed`` flagged), each exit 1; the operator's ``check``
  (the CI clone's held) predicted ``start`` for the copy
  ``ops/s0`` the controller refused ``E_ALREADY_EXECUTED``. Expected (docs/operations.md:
  a change of ``identity`` with the state directory kept: "that ``plangate: record policy``
  commit is made under the NEW identity and names the old one in a ``Previous-Identity:``
  trailer"; a ``plans_dir`` change is supported too, and nothing says not to make both in one
  restart).
- ``unrecorded-identity-blinds-reads`` (``i:today``, ``j:today``, ``k:today``, ``n:today``,
  ``m:today``, ``n:next:check``; fail closed for the audit, fail open in the prediction):
  with today's config naming a new identity the controller has not run under yet (the
  documented step is "change ``identity`` in the config and restart": between the edit and
  the first pass), ``audit --config`` lists NO run at all and flags every controller commit
  (``illegal``, ``owned-block-changed``, ``log-changed``, every record ``policy-changed``),
  exit 1, even in lab n (one identity all along) and although the state directory's record
  of the controller's commits holds every one of them; and ``check --as alice`` with that
  config predicted ``start`` for ``ops/s0d``, a copy of s0 (which ran), that the controller,
  restarted with that config, refused ``E_ALREADY_EXECUTED`` (``n:next:copy``; by hand
  ``check`` also predicted ``start`` for ``ops/s0`` and ``ops/t1`` against their pull
  request's old base, both refused/ran by then; ``status`` with that config still showed
  the runs). Expected (docs/approvals.md: with a config the audit "adds a note (``notes``,
  not a finding) when today's config differs from the last recorded policy", and with a
  config whose state directory holds the record "it knows the controller's commits by that
  record"; docs/threat-model.md's row "Audit judged by today's config (... flag honest
  runs)"; the brief's property: ``check --as`` predicts what the controller then does; after
  the restart, ``n:next:audit``, the audit agrees again).

Fixed (2026-12-07 afternoon, fix128k): **identity-change-with-move-unlinked**. Cause: the first
record under a new identity named the old one only when the history index (a cache) still held
the old identity's last record (``withdraw_policy``); a ``plans_dir`` change (likewise an
upgrade or a deleted index file) rebuilt the index in that restart under the new identity,
which has no record yet and no link to follow, so ``Committing._record_policy`` found no
previous record and wrote no ``Previous-Identity:``. Fix: the link is decided by the state
directory's record of the commits the controller made (``Committing._previous_record``,
``_record_of``, ``_identity_changed_from``: the newest record commit the controller made,
whatever identity made it), and a history index read before the link is read again after it
within that pass (``_read_history_again``: reset, ``_Moved``), so that pass already reads the
old identity's runs as the controller's. Tests: ``tests/service/test_identity_change_link.py``
(6; 5 fail on main's code: the link after a move, after a deleted index, on a return ``A -> B
-> A`` made with a move; the copy refused and predicted and every audit agreeing; the linking
pass's ``status``); the ids ``m:*`` (7) pass, their xfails removed.

Held: the identity chain A -> B -> C -> A run by run (each change recorded with its link, the
gate answered across the change, Alice's approval refused under B's policy, every run's
``policy_hash`` = its start's trailer = its tree's file, ``--controller`` A and B agree);
A -> B then a move (lab k) and a move alone (lab n): every audit agrees, copies refused and
predicted; a CI clone's ``check`` in every lab; a plain copy after the return (lab i's
``s0b``) refused and predicted; the forged identity link under ``--config`` (not followed,
flagged) and before the controller (Mallory's approval refused, the controller's own policy
recorded again); the agent's record made first under the new identity (lab g): the
controller's own record still links A, Mallory refused and predicted, ``--config`` flags the
forged record; a person's record-shaped commit with ``Previous-Identity:`` links nothing;
trailer-shaped plan folder names (lab h) change no verdict, policy or link.

Seen, not asserted: lab f's fresh clone with ``--controller plangate@localhost`` follows the
agent's forged link (documented: "an agent's seal-shaped record naming itself and a
``Previous-Identity:`` of the controller's is followed by ``--controller`` ... sign the
controller's commits"): it lists Mallory's forged f2 run as a valid execution (beside a
``start-without-approval`` finding on f2), drops the controller's real f3 run and flags the
controller's own later commits ``illegal``; exit 1. Lab g's fresh clone (``--controller``
A or B) lists the agent's pre-emptive record among ``policies`` and flags nothing (exit 0):
by git alone a seal-shaped record made by the identity it names is the controller's
(documented; sign the controller's commits). In labs i and j, a fresh clone's
``--controller`` with the FIRST identity follows the chain right; only ``pg-c`` (lab i) and
``--config`` miss A's first stretch, so the walk seems to start at the wrong end of a loop.
Fixed (2026-12-07 afternoon, fix128i): **identity-return-splits-audit**,
**identity-return-check-misses-run**, **unrecorded-identity-blinds-reads**. Cause: every
reader of the identity links (``Timeline.open``, ``RecordedPolicies.records``/``_identities``)
built a LIST of identities (``identity_chain``, ``in_chain``), which cannot hold one twice: after
``A -> B -> A`` (or ``A -> B -> C -> A``, also for ``--controller pg-c``) its first entry was
``B``, so the walk started at the wrong end of the loop and read A's first stretch as
anyone's, in the audit and in a rebuilt index (``check`` after the move). And the identity at
the head was always the config's: one no record names yet (edited, no pass since) matched no
commit of the controller's. Fix (read side): ``controller.git.identities.followed_back`` walks
the links newest first by their place on the first-parent line from the identity at the head,
as ``ControllerCore._named_history`` does (``stretches``, ``onward`` for ``--controller``);
``recorded_identity`` gives the identity at the head: the config's once a record of the
controller's names it, else the one its last record names (by the state directory's record of
its commits; by git alone, the config's as before: a seal-shaped record may be anyone's);
``Timeline.open``/``_of_config`` (with an ``identity-unrecorded`` note),
``_walk_from``, ``RecordedPolicies._walk``/``records``/``_identities``/``identity`` (the first
stretch's identity before any record) read them; ``HistoryIndex._policies`` finds the records
before following the first. Tests: ``tests/approval/test_audit_identity_return.py`` (5, all
fail on main's code: ``aba``/``abca`` audits, check after a return and a move, an unrecorded
identity's audit/check/restart, a config changed back) and
``tests/git/test_identity_stretches.py`` (5, new functions); the ids ``i:audit:config``,
``i:audit:pg-c@localhost``, ``i:agree``, ``j:audit:config``, ``j:agree``, ``j:check:ops/s0``,
``{i,j,k,n,m}:today``, ``n:next:check`` (12) pass, their xfails removed. The ``m:*`` ids
(fix128k's class) pass with this read-side fix alone too (the rebuilt index finds the old
identity's last record, so the link is written); fix128k's branch, which removed their
xfails, is merged here.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, build_all, load_yaml, plan_text
from atk127pkit import EVIL, IDA, IDB, IDC, audit_in, ci_check, clone, config, gate_plan, starts

OPS = "*@ops.example.com"
AP = [ALICE[1], OPS]

#: lab -> phases: (identity, approvers) of each restart, and whether plans_dir moves at the end
LABS: dict[str, tuple[list[tuple[tuple[str, str], list[str]]], bool]] = {
    # A -> B (Alice out) -> C (Alice back) -> A: the identity returns to the first one
    "i": ([(IDA, AP), (IDB, [OPS]), (IDC, AP), (IDA, AP)], False),
    # A -> B -> A, then plans_dir moves to ops (the history index rebuilt)
    "j": ([(IDA, AP), (IDB, AP), (IDA, AP)], True),
    # control: A -> B, then plans_dir moves
    "k": ([(IDA, AP), (IDB, AP)], True),
    # control: one identity, plans_dir moves
    "n": ([(IDA, AP)], True),
    # A, then identity B and plans_dir ops in one restart (one record names both)
    "m": ([(IDA, AP)], True),
}
#: the identity the move's restart runs under, when it changes there
MOVE_IDENT = {"m": IDB}


def idents_of(name: str) -> list[str]:
    phases, _move = LABS[name]
    return list(
        dict.fromkeys([p[0][1] for p in phases] + [i[1] for i in [MOVE_IDENT.get(name)] if i])
    )


def _run(lab: Lab, got: dict[str, Any], tag: str) -> None:
    res = lab.run(check=False)
    got["passes"].append((tag, res.returncode, res.stderr[-400:] if res.returncode else ""))


def _build_chain(root: Path, name: str) -> dict[str, Any]:
    phases, move = LABS[name]
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": [], "checks": {}}
    config(lab, *phases[0])
    slugs = [f"s{i}" for i in range(len(phases))]
    for s in slugs:
        lab.write(s, plan_text(s))
    lab.write("g1", gate_plan("g1"))
    if name == "i":
        lab.write("rmk", plan_text("rmk"))
        lab.write("ckk", plan_text("ckk"))
    lab.commit("agent: plans", AGENT)
    _run(lab, got, "freeze")
    for i, (ident, approvers) in enumerate(phases):
        if i:
            config(lab, ident, approvers)
        lab.approve(f"s{i}", BOB, f"bob: approve s{i}")
        if i == 0:
            lab.approve("g1", ALICE, "alice: approve g1")
        if i == 1:
            lab.approve("g1", BOB, "bob: go on g1 (the gate)")
            if name == "i":
                # Alice is out under B: her approval is refused; Bob's pull request checked
                lab.approve("rmk", ALICE, "alice: approve rmk")
                lab.branch("pr-ckk")
                lab.approve("ckk", BOB, "bob: approve ckk")
                lab.git("checkout", "-q", "main")
                got["checks"]["ckk"] = lab.check_plans("pr-ckk", BOB[1])
                lab.git("merge", "-q", "--no-ff", "-m", "merge pr-ckk", "pr-ckk", who=BOB)
        _run(lab, got, f"phase{i}")
    first = lab.git("log", "--reverse", "--format=%H", "--", "plans/s0/PLAN.yml").split()[0]
    if name == "i":
        # after the return to A: a copy of s0 as first frozen (it ran under A's first stretch)
        lab.write("s0b", lab.git("show", f"{first}:plans/s0/PLAN.yml"))
        lab.commit("agent: s0 again", AGENT)
        _run(lab, got, "copy")
        lab.branch("pr-s0b")
        lab.approve("s0b", ALICE, "alice: approve s0b")
        lab.git("checkout", "-q", "main")
        got["checks"]["s0b"] = lab.check_plans("pr-s0b", ALICE[1])
        lab.git("merge", "-q", "--no-ff", "-m", "merge pr-s0b", "pr-s0b", who=ALICE)
        _run(lab, got, "copy-approved")
        got["copy"] = lab.refusal("s0b")
    if move:
        lab.put("ops/s0/PLAN.yml", lab.git("show", f"{first}:plans/s0/PLAN.yml"))
        lab.put("ops/t1/PLAN.yml", plan_text("t1"))
        lab.commit("agent: plans in ops (s0 again, t1)", AGENT)
        config(lab, MOVE_IDENT.get(name, phases[-1][0]), phases[-1][1], plans_dir="ops")
        _run(lab, got, "move")
        lab.branch("pr-ops")
        for slug in ("s0", "t1"):
            path = lab.repo / "ops" / slug / "PLAN.yml"
            path.write_text(
                path.read_text().replace("  status: pending_approval", "  status: approved", 1)
            )
        lab.commit("alice: approve ops/s0 and ops/t1", ALICE)
        lab.git("checkout", "-q", "main")
        got["checks"]["ops"] = lab.check_plans("pr-ops", ALICE[1])
        got["checks"]["ci"] = ci_check(lab, root / "ci", "origin/pr-ops", ALICE[1])
        lab.git("merge", "-q", "--no-ff", "-m", "merge pr-ops", "pr-ops", who=ALICE)
        _run(lab, got, "after-move")
        ops = load_yaml(lab.git("show", "HEAD:ops/s0/PLAN.yml"))
        approval = ops.get("approval") or {}
        got["copy"] = approval.get("code") if approval.get("status") == "refused" else None
    tags = [*slugs, "g1", "rmk", "ckk", "t1"]
    got["ran"] = {t: len(lab.calls(t)) for t in tags}
    got["refusal"] = {s: lab.refusal(s) for s in ("rmk", "ckk")}
    got["records"] = lab.git(
        "log",
        "--format=%ae|%(trailers:key=Previous-Identity,valueonly,separator=%x2C)",
        "--grep=^plangate: record policy$",
    ).split()
    got["starts"] = starts(lab)
    fresh = clone(lab, root / "fresh")
    got["audits"] = {"plain": audit_in(lab, fresh)}
    for ident in idents_of(name):
        got["audits"][ident] = audit_in(lab, fresh, "--controller", ident)
    got["audits"]["config"] = audit_in(lab, lab.repo, "--config", str(lab.config))
    # a clone of main alone over file:// (only reachable objects), --controller today's
    single = clone(
        lab, root / "single", "--single-branch", "--no-tags", "-b", "main", transport=True
    )
    last = MOVE_IDENT.get(name, phases[-1][0])
    got["audits"]["single"] = audit_in(lab, single, "--controller", last[1])
    # today's config names an identity no record names yet (changed, no pass since)
    text = lab.config.read_text()
    lab.config.write_text(text.replace(f"email: {last[1]}", "email: pg-next@localhost"))
    got["today"] = audit_in(lab, lab.repo, "--config", str(lab.config))
    lab.config.write_text(text)
    if name == "n":
        # another copy of s0, frozen under A; the operator changes the identity (no pass
        # yet): Alice's pull request checked with today's config, merged, then the restart
        lab.put("ops/s0d/PLAN.yml", lab.git("show", f"{first}:plans/s0/PLAN.yml"))
        lab.commit("agent: s0 once more", AGENT)
        _run(lab, got, "next-freeze")
        lab.config.write_text(text.replace(f"email: {last[1]}", "email: pg-next@localhost"))
        lab.branch("pr-s0d")
        path = lab.repo / "ops" / "s0d" / "PLAN.yml"
        path.write_text(
            path.read_text().replace("  status: pending_approval", "  status: approved", 1)
        )
        lab.commit("alice: approve ops/s0d", ALICE)
        lab.git("checkout", "-q", "main")
        got["checks"]["next"] = lab.check_plans("pr-s0d", ALICE[1])
        lab.git("merge", "-q", "--no-ff", "-m", "merge pr-s0d", "pr-s0d", who=ALICE)
        _run(lab, got, "next")
        approval = load_yaml(lab.git("show", "HEAD:ops/s0d/PLAN.yml")).get("approval") or {}
        got["next-copy"] = approval.get("code") if approval.get("status") == "refused" else None
        got["next-ran"] = len(lab.calls("s0"))
        got["next-audit"] = audit_in(lab, lab.repo, "--config", str(lab.config))
    return got


def _build_forged(root: Path) -> dict[str, Any]:
    """Lab F: the agent forges a controller identity change: a seal-shaped record under its
    own identity (``pg-x``) naming the controller's as ``Previous-Identity:``, its policy
    making Mallory the only approver; then Mallory approves ``f2`` and the agent's identity
    forges its start and outcome."""
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": [], "checks": {}}
    config(lab, IDA, AP)
    for s in ("f1", "f2", "f3"):
        lab.write(s, plan_text(s))
    lab.commit("agent: plans", AGENT)
    _run(lab, got, "freeze")
    lab.approve("f1", ALICE)
    _run(lab, got, "f1")
    pol = json.loads(lab.git("show", "HEAD:.plangate/policy.json"))
    pol["identity"] = {"email": EVIL[1]}
    pol["approval"]["approvers"] = [MALLORY[1]]
    data = json.dumps(pol, separators=(",", ":"), sort_keys=True)
    lab.put(".plangate/policy.json", data)
    import hashlib

    ph = "sha256:" + hashlib.sha256(data.encode()).hexdigest()
    lab.commit(
        "plangate: record policy\n\n"
        f"Policy-Hash: {ph}\nController: vm/0badc0de/0123456789abcdef\n"
        f"Previous-Identity: {IDA[1]}\nController-Seal: {'cd' * 32}\n",
        EVIL,
    )
    got["forged"] = lab.head()
    lab.branch("pr-f2")
    lab.approve("f2", MALLORY, "mallory: approve f2")
    lab.git("checkout", "-q", "main")
    got["checks"]["f2"] = lab.check_plans("pr-f2", MALLORY[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-f2", "pr-f2", who=MALLORY)
    _run(lab, got, "f2")
    lab.approve("f3", ALICE)
    _run(lab, got, "f3")
    # the agent's identity forges f2's run (start and outcome, seal-shaped) under its policy
    fhash = lab.plan("f2")["frozen"]["hash"]
    approval = lab.git("log", "-1", "--format=%H", "--author=mallory", "--", "plans/f2")
    for event, status in (("start", "executing"), ("complete", "completed")):
        lab.set_status("f2", status)
        extra = f"Policy-Hash: {ph}\n" if event == "start" else ""
        lab.commit(
            f"plangate: {event} plans/f2\n\nPlan: plans/f2\nPlan-Hash: {fhash}\n"
            f"Plan-Status: {status}\nApproved-By: {MALLORY[1]}\n"
            f"Approval-Commit: {approval.strip()}\n{extra}"
            f"Controller: vm/0badc0de/0123456789abcdef\nController-Seal: {'ef' * 32}\n",
            EVIL,
        )
    got["ran"] = {t: len(lab.calls(t)) for t in ("f1", "f2", "f3")}
    got["refusal"] = {s: lab.refusal(s) for s in ("f2",)}
    got["head_policy"] = lab.git("show", "HEAD:.plangate/policy.json")
    fresh = clone(lab, root / "fresh")
    got["audits"] = {
        "config": audit_in(lab, lab.repo, "--config", str(lab.config)),
        "fresh-a": audit_in(lab, fresh, "--controller", IDA[1]),
        "plain": audit_in(lab, fresh),
    }
    return got


def _build_preempt(root: Path) -> dict[str, Any]:
    """Lab g: the operator changes the identity to B; before the controller's first pass
    under B, the agent commits a seal-shaped record AS B (``Previous-Identity:`` A, its policy
    naming B and Mallory as the only approver), Mallory approves ``q2`` and commits, under her
    own name, a record-shaped message with ``Previous-Identity: pg-x`` (a note file); then the
    pass under B, Bob approves ``q3``, a pass."""
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": [], "checks": {}}
    config(lab, IDA, AP)
    for s in ("q1", "q2", "q3"):
        lab.write(s, plan_text(s))
    lab.commit("agent: plans", AGENT)
    _run(lab, got, "freeze")
    lab.approve("q1", ALICE)
    _run(lab, got, "q1")
    config(lab, IDB, AP)
    pol = json.loads(lab.git("show", "HEAD:.plangate/policy.json"))
    pol["identity"] = {"email": IDB[1]}
    pol["approval"]["approvers"] = [MALLORY[1]]
    data = json.dumps(pol, separators=(",", ":"), sort_keys=True)
    lab.put(".plangate/policy.json", data)
    ph = "sha256:" + hashlib.sha256(data.encode()).hexdigest()
    lab.commit(
        "plangate: record policy\n\n"
        f"Policy-Hash: {ph}\nController: vm/0badc0de/0123456789abcdef\n"
        f"Previous-Identity: {IDA[1]}\nController-Seal: {'cd' * 32}\n",
        IDB,
    )
    got["forged"] = lab.head()
    lab.put("notes/m.txt", "m\n")
    lab.commit(
        "plangate: record policy\n\n"
        f"Policy-Hash: {ph}\nPrevious-Identity: {EVIL[1]}\nController-Seal: {'ab' * 32}\n",
        MALLORY,
    )
    got["person"] = lab.head()
    lab.branch("pr-q2")
    lab.approve("q2", MALLORY, "mallory: approve q2")
    lab.git("checkout", "-q", "main")
    got["checks"]["q2"] = lab.check_plans("pr-q2", MALLORY[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-q2", "pr-q2", who=MALLORY)
    _run(lab, got, "under-b")
    lab.approve("q3", BOB)
    _run(lab, got, "q3")
    got["ran"] = {t: len(lab.calls(t)) for t in ("q1", "q2", "q3")}
    got["refusal"] = {"q2": lab.refusal("q2")}
    got["records"] = lab.git(
        "log",
        "--format=%H|%ae|%(trailers:key=Previous-Identity,valueonly,separator=%x2C)",
        "--grep=^plangate: record policy$",
    ).split()
    got["head_policy"] = lab.git("show", "HEAD:.plangate/policy.json")
    fresh = clone(lab, root / "fresh")
    got["audits"] = {
        "config": audit_in(lab, lab.repo, "--config", str(lab.config)),
        "fresh-b": audit_in(lab, fresh, "--controller", IDB[1]),
        "fresh-a": audit_in(lab, fresh, "--controller", IDA[1]),
    }
    return got


#: lab h's plan folders: trailer-shaped names (tag -> folder)
HNAMES = {
    "h0": "ok1",
    "h1": "Policy-Hash: sha256:" + "0" * 64,
    "h2": "y Previous-Identity: pg-x@localhost",
    "h3": "x\nPrevious-Identity: pg-x@localhost",
    "h4": "w Previous-Identity: pg-x@localhost",  # approved and run under B
}


def _build_names(root: Path) -> dict[str, Any]:
    """Lab h: plan folders named like trailers (``Policy-Hash: sha256:0...``, ``... Previous-
    Identity: pg-x@localhost``, one with a newline before it), approved by Alice and run under
    A; the identity changed to B; ``h4`` approved and run under B."""
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": [], "checks": {}}
    config(lab, IDA, AP)
    for tag, folder in HNAMES.items():
        lab.write(folder, plan_text(tag))
    lab.commit("agent: plans", AGENT)
    _run(lab, got, "freeze")
    for tag, folder in HNAMES.items():
        if tag in ("h0", "h1", "h2", "h3"):
            lab.set_status(folder, "approved")
    lab.commit("alice: approve three", ALICE)
    _run(lab, got, "a")
    config(lab, IDB, AP)
    lab.approve(HNAMES["h4"], BOB, "bob: approve w")
    _run(lab, got, "b")
    got["ran"] = {t: len(lab.calls(t)) for t in HNAMES}
    got["starts"] = starts(lab)
    fresh = clone(lab, root / "fresh")
    got["audits"] = {
        A: audit_in(lab, fresh, "--controller", A),
        B: audit_in(lab, fresh, "--controller", B),
        "config": audit_in(lab, lab.repo, "--config", str(lab.config)),
    }
    return got


def _labs(root: Path) -> dict[str, Any]:
    builders: dict[str, Any] = {k: (lambda r, k=k: _build_chain(r, k)) for k in LABS}
    builders["f"] = _build_forged
    builders["g"] = _build_preempt
    builders["h"] = _build_names
    return build_all(root, builders, workers=3).got


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _labs(tmp_path_factory.mktemp("r127p"))


A, B, C = IDA[1], IDB[1], IDC[1]
#: every class of this module is fixed (fix128k, fix128i): no id is expected to fail
BROKEN: dict[str, Any] = {}


def expected_runs(name: str) -> list[tuple[str, str]]:
    """(plan, approval_kind) of every run the controller made in a chain lab."""
    phases, move = LABS[name]
    runs = [(f"plans/s{i}", "approve") for i in range(len(phases))] + [("plans/g1", "approve")]
    if len(phases) > 1:
        runs.append(("plans/g1", "gate"))
    if name == "i":
        runs.append(("plans/ckk", "approve"))
    if move:
        runs.append(("ops/t1", "approve"))
    return sorted(runs)


def valid(report: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted(
        (e["plan"], e["approval_kind"])
        for e in report.get("executions", [])
        if e.get("approval_valid")
    )


def brief(a: dict[str, Any]) -> str:
    rep = a["report"]
    return json.dumps(
        {
            "rc": a["rc"],
            "runs": [
                (e.get("plan"), e.get("approval_kind"), e.get("approval_valid"), e.get("code"))
                for e in rep.get("executions", [])
            ],
            "findings": [
                (f.get("kind"), f.get("plan"), f.get("commit")) for f in rep.get("findings", [])
            ],
            "err": a["err"][-300:],
        }
    )[:2500]


def _ids() -> list[Any]:
    out: list[str] = []
    for name, (_phases, move) in LABS.items():
        out += [f"{name}:passes", f"{name}:ran", f"{name}:records", f"{name}:plain"]
        out += [f"{name}:audit:{i}" for i in idents_of(name)]
        out.append(f"{name}:audit:config")
        out += [f"{name}:agree", f"{name}:policy", f"{name}:single", f"{name}:today"]
        if move:
            out += [f"{name}:check:ops/s0", f"{name}:check:ops/t1", f"{name}:copy"]
            out += [f"{name}:ci:ops/s0", f"{name}:ci:ops/t1"]
    out += ["i:check:plans/ckk", "i:check:plans/s0b", "i:copy", "i:rmk"]
    out += ["g:ran", "g:refused", "g:check", "g:link", "g:record", "g:config", "g:person"]
    out += [f"g:fresh:{i}" for i in (A, B)]
    out += ["n:next:copy", "n:next:check", "n:next:audit"]
    out += ["h:ran"] + [f"h:audit:{k}" for k in (A, B, "config")]
    out += ["f:ran", "f:refused", "f:check", "f:config", "f:record", "f:plain", "f:fresh"]
    return [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in out]


@pytest.mark.parametrize("vid", _ids())
def test_policy_audit(labs: dict[str, Any], vid: str) -> None:
    name, what, *rest = vid.split(":", 2)
    got = labs[name]
    if name == "f":
        return _forged(got, what)
    if name == "g":
        return _preempt(got, what, rest)
    if name == "h":
        return _names(got, what, rest)
    phases, move = LABS[name]
    idents = idents_of(name)
    if what == "passes":
        assert all(rc == 0 for _t, rc, _e in got["passes"]), got["passes"]
    elif what == "ran":
        ran = got["ran"]
        want = {f"s{i}": 1 for i in range(len(phases))}
        want["g1"] = 2 if len(phases) > 1 else 1
        want["rmk"] = 0
        want["ckk"] = 1 if name == "i" else 0
        want["t1"] = 1 if move else 0
        assert ran == want, ran
    elif what == "records":
        # each identity change: a record by the new identity naming the old one
        recs = [r.split("|") for r in reversed(got["records"])]
        links = [(e, prev) for e, prev in recs if prev]
        want = [
            (phases[i][0][1], phases[i - 1][0][1])
            for i in range(1, len(phases))
            if phases[i][0] != phases[i - 1][0]
        ]
        if name in MOVE_IDENT:
            want.append((MOVE_IDENT[name][1], phases[-1][0][1]))
        assert links == want, recs
    elif what == "plain":
        a = got["audits"]["plain"]
        if len(idents) > 1:
            # documented: git alone cannot tell which identity is the controller's
            assert a["rc"] == 2, brief(a)
            assert "E_CONFIG_INVALID" in a["err"], a["err"]
            assert all(i in a["err"] for i in idents), a["err"]
        else:
            assert a["rc"] == 0 and valid(a["report"]) == expected_runs(name), brief(a)
            assert not a["report"].get("findings"), brief(a)
    elif what == "audit":
        a = got["audits"][rest[0]]
        assert a["rc"] == 0, brief(a)
        assert valid(a["report"]) == expected_runs(name), brief(a)
        assert not a["report"].get("findings"), brief(a)
        assert all(e.get("approval_valid") for e in a["report"]["executions"]), brief(a)
    elif what in ("single", "today"):
        # a single-branch clone (--controller today's identity) and --config with today's
        # identity changed but not yet run: the same runs, valid, no finding
        a = got[what] if what == "today" else got["audits"]["single"]
        assert a["rc"] == 0, brief(a)
        assert valid(a["report"]) == expected_runs(name), brief(a)
        assert not a["report"].get("findings"), brief(a)
    elif what == "agree":
        # every audit that can answer (each --controller, --config) lists the same runs, and
        # each run names the same policy: the :agree idea across audits
        rows = {}
        for k, a in got["audits"].items():
            if k == "single" or (k == "plain" and len(idents) > 1):
                continue
            rows[k] = sorted(
                (e["plan"], e["approval_kind"], e.get("policy_hash"), e.get("start_commit"))
                for e in a["report"].get("executions", [])
            )
        first = rows[idents[0]]
        assert all(v == first for v in rows.values()), json.dumps(rows)[:3000]
    elif what == "check":
        plan = rest[0]
        outcome, codes = got["checks"][plan.split("/")[1] if plan.startswith("plans/") else "ops"][
            plan
        ]
        slug = plan.split("/")[1]
        if slug in ("s0", "s0b"):
            # a copy of a version that ran: the controller refused it (":copy")
            assert got["copy"] == "E_ALREADY_EXECUTED", got["copy"]
            assert (outcome, codes) == ("refuse", ["E_ALREADY_EXECUTED"]), (outcome, codes)
        else:
            assert got["ran"][slug] == 1, got["ran"]
            assert (outcome, codes) == ("start", []), (outcome, codes)
    elif what == "next":
        # the identity changed after a copy was frozen: the restarted controller refuses the
        # copy, today's check predicted that, and the audit after the restart lists every run
        if rest[0] == "copy":
            assert got["next-ran"] == 1 and got["next-copy"] == "E_ALREADY_EXECUTED", (
                got["next-ran"],
                got["next-copy"],
            )
        elif rest[0] == "check":
            assert got["next-copy"] == "E_ALREADY_EXECUTED", got["next-copy"]
            told = got["checks"]["next"]["ops/s0d"]
            assert told == ("refuse", ["E_ALREADY_EXECUTED"]), told
        else:
            a = got["next-audit"]
            assert a["rc"] == 0 and valid(a["report"]) == expected_runs(name), brief(a)
            assert not a["report"].get("findings"), brief(a)
    elif what == "policy":
        # each run's policy: the audit's policy_hash, its start's Policy-Hash: trailer and the
        # sha256 of .plangate/policy.json in the start's tree are one (read with identity A)
        a = got["audits"][idents[0]]
        rows = [
            (e["plan"], e.get("policy_hash"), got["starts"].get(e.get("start_commit")))
            for e in a["report"].get("executions", [])
        ]
        assert rows and all(st and h == st[0] == st[1] for _p, h, st in rows), rows
    elif what == "copy":
        # the version that ran under A's first stretch never runs again
        assert got["ran"]["s0"] == 1, got["ran"]
        assert got["copy"] == "E_ALREADY_EXECUTED", got["copy"]
    elif what == "rmk":
        assert got["refusal"]["rmk"] == "E_APPROVER_NOT_ALLOWED", got["refusal"]
        assert got["ran"]["rmk"] == 0


def _forged(got: dict[str, Any], what: str) -> None:
    if what == "ran":
        assert got["ran"] == {"f1": 1, "f2": 0, "f3": 1}, got["ran"]
    elif what == "refused":
        assert got["refusal"]["f2"] == "E_APPROVER_NOT_ALLOWED", got["refusal"]
    elif what == "check":
        assert got["checks"]["f2"]["plans/f2"] == ("refuse", ["E_APPROVER_NOT_ALLOWED"])
    elif what == "record":
        # the controller recorded its own policy again after the forged record
        pol = json.loads(got["head_policy"])
        assert pol["identity"] == {"email": A}, pol["identity"]
        assert pol["approval"]["approvers"] == AP, pol["approval"]
    elif what == "config":
        # with the record of the controller's commits, the forged link is never followed:
        # f1 and f3 valid, the forged record flagged, Mallory's forged run flagged
        a = got["audits"]["config"]
        rep = a["report"]
        assert a["rc"] == 1, brief(a)
        assert valid(rep) == [("plans/f1", "approve"), ("plans/f3", "approve")], brief(a)
        fnd = rep.get("findings", [])
        assert any(
            f.get("kind") == "policy-changed" and f.get("commit") == got["forged"] for f in fnd
        ), brief(a)
        assert any(f.get("plan") == "plans/f2" for f in fnd), brief(a)
        assert not any(f.get("plan") in ("plans/f1", "plans/f3") for f in fnd), brief(a)
    elif what == "plain":
        a = got["audits"]["plain"]
        assert a["rc"] == 2 and "E_CONFIG_INVALID" in a["err"], brief(a)
        assert A in a["err"] and EVIL[1] in a["err"], a["err"]
    elif what == "fresh":
        # documented limit: by git alone a seal-shaped link is followed by --controller; the
        # audit still does not pass the history as clean (exit 1, findings on f2)
        a = got["audits"]["fresh-a"]
        assert a["rc"] == 1, brief(a)
        assert any(f.get("plan") == "plans/f2" for f in a["report"].get("findings", [])), brief(a)


def _preempt(got: dict[str, Any], what: str, rest: list[str]) -> None:
    if what == "ran":
        assert got["ran"] == {"q1": 1, "q2": 0, "q3": 1}, got["ran"]
    elif what == "refused":
        assert got["refusal"]["q2"] == "E_APPROVER_NOT_ALLOWED", got["refusal"]
    elif what == "check":
        assert got["checks"]["q2"]["plans/q2"] == ("refuse", ["E_APPROVER_NOT_ALLOWED"])
    elif what == "link":
        # the controller's own first record under B names A, whatever the agent wrote first
        recs = [r.split("|") for r in got["records"]]
        own = [r for r in recs if r[0] != got["forged"] and r[1] == B]
        assert own and own[-1][2] == A, recs
    elif what == "record":
        pol = json.loads(got["head_policy"])
        assert pol["identity"] == {"email": B} and pol["approval"]["approvers"] == AP, pol
    elif what in ("config", "fresh"):
        # q1 (under A) and q3 (under B) valid, q2 never; with the record of the controller's
        # commits the agent's pre-emptive record is flagged policy-changed at its commit
        key = "config" if what == "config" else ("fresh-a" if rest[0] == A else "fresh-b")
        a = got["audits"][key]
        rep = a["report"]
        assert valid(rep) == [("plans/q1", "approve"), ("plans/q3", "approve")], brief(a)
        assert not any(e["plan"] == "plans/q2" for e in rep.get("executions", [])), brief(a)
        if what == "config":
            assert a["rc"] == 1, brief(a)
            fnd = rep.get("findings", [])
            assert any(
                f.get("kind") == "policy-changed" and f.get("commit") == got["forged"] for f in fnd
            ), brief(a)
            assert not any(str(f.get("plan")).startswith("plans/") for f in fnd), brief(a)
    elif what == "person":
        # Mallory's record-shaped message under her own name links nothing and records no
        # policy: no audit names pg-x, none lists it as a policy
        for a in got["audits"].values():
            text = json.dumps(a["report"])
            assert EVIL[1] not in text, brief(a)
            pols = [p.get("commit") for p in a["report"].get("policies", [])]
            assert got["person"] not in pols, brief(a)


def _names(got: dict[str, Any], what: str, rest: list[str]) -> None:
    if what == "ran":
        # the three approved under A and h4 under B ran once; the newline folder never
        assert got["ran"] == {"h0": 1, "h1": 1, "h2": 1, "h3": 0, "h4": 1}, got["ran"]
    elif what == "audit":
        # trailer-shaped folder names change no verdict, no policy and no identity link:
        # every run valid, judged by its start's own Policy-Hash:, no finding, exit 0
        a = got["audits"][rest[0]]
        rep = a["report"]
        want = sorted((f"plans/{HNAMES[t]}", "approve") for t in ("h0", "h1", "h2", "h4"))
        assert a["rc"] == 0 and valid(rep) == want, brief(a)
        assert not rep.get("findings"), brief(a)
        for e in rep["executions"]:
            st = got["starts"].get(e["start_commit"])
            assert st and e["policy_hash"] == st[0] == st[1], (e, st)
        assert len(rep.get("policies", [])) == 2, rep.get("policies")
