"""Round 125, policy and audit (atk125p): "git alone proves it". A fresh clone's
``plangate audit --json`` (no config) must reach the controller's verdicts run by run, every
policy the controller applied must be recorded in git (``.plangate/policy.json``, the
``plangate: record policy`` commits, ``Policy-Hash:`` on every start: SPEC §11, §15,
docs/approvals.md "The recorded policy" and "plangate audit"), a policy change the
controller did not make is flagged, past decisions are judged by the policy recorded at
their time, and ``check --as`` predicts what the controller then does.

Labs (built at once, ``build_all``):

- Lab A (local mode, ``run --once`` passes A, B, C, C1, C2, D, E; the recording tool
  ``rec``). Config C1: approvers and group ``ops`` = Alice, Bob, Carol; rules ``risk: high``
  needs 2 of ``ops``, ``paths: plans/duo*/**`` needs 2; tools ``rec`` (medium), ``lift``
  (medium), ``hot`` (high), ``big`` (high). C2 (before pass B): Alice out, Dave in, the
  group RENAMED ``sre`` (Bob, Carol, Dave) and the rule with it, ``lift`` high, ``hot``
  medium. C3 (before pass D): C1 again, byte for byte (the controller records P1 again, after
  the agent wrote P1's bytes first: a record commit that changes no file). C4 (before E):
  only ``rec``'s definition changes (an env name). Plans (one ``rec``-style action each):
  ``rmali`` (Alice's approval, Alice removed before the pass), ``liftb`` (Bob's vote while
  ``lift`` was medium, then high: partial, Carol completes), ``hotb`` (Bob's single vote
  while ``hot`` was high, then medium: runs), ``grpb`` (Carol's vote under ``ops``, the
  group renamed with Dave in: Dave completes), ``duo1``+``solo1`` (one commit by Bob
  approving a 2-vote and a 1-vote plan; Alice's refused vote under C2, her vote after C3
  completes), ``ckhot``/``cklift`` (a pull request checked ``--as bob`` after the config
  change, before the pass that records it), ``rmali2`` (the agent rewrites
  ``policy.json`` with Alice back, then Alice approves), ``forge1`` (Mallory's approval whose
  message is a controller start: ``Plan-Status: executing``, ``Policy-Hash:`` of P1, a
  seal-shaped line), ``back``/``ckback`` (after the return to C1), ``defn`` (after C4),
  withdrawals across the changes: ``rejc`` (Alice rejects under C2: ignored; Bob runs it),
  ``rejdave`` (Dave rejects under C2, Dave out again: stands), ``rejd`` (Alice rejects after
  C3 was written but before the pass recorded it: ignored), ``rejd2``/``rejd3`` (Alice /
  Dave reject after P1's tree-same re-record; Bob's approvals in a pull request checked
  ``--as bob``), ``rejpr``/``apppr`` (Alice's rejection / approval on a branch forked under
  P1, merged by Bob under P2), ``gate1`` (two actions, the second gated: Bob starts it
  under P2, Alice's gate answer is refused, Dave's resumes it) and ``lim`` (two actions,
  frozen under ``max_tool_calls: 1000``, run under C2's ``limits: {max_tool_calls: 1}``:
  both stop ``E_LIMIT_EXCEEDED`` at their second call, gate1's calls before its pause
  counted). The agent also deletes ``policy.json``. Then five audits: a
  fresh clone, a ``--single-branch --no-tags`` clone over ``file://``, ``audit --config``
  (the state directory's record of its commits), ``audit --config`` with today's config
  changed back to C2 (never recorded), and a clone that fetched ``refs/replace/*`` the
  agent pushed, replacing its two policy commits with harmless-looking ones.
- Lab D (a real ``plangate run`` daemon, local mode, ``require_signed`` with SSH keys in
  ``allowed_signers``, the controller signing its commits). The operator edits the
  ``allowed_signers`` FILE (the config file unchanged): Alice's key rotated to ``alice2``,
  Bob's removed; Alice approves ``hrot`` with her new key, Bob ``hdrop`` with his old one.
  Then Carol's key is rotated and the daemon is sent SIGHUP (a record is waited for), and
  Carol approves ``krot`` with her new key (control).
- Lab P (local mode, ``run --once``): ``plans/p1`` approved and run, Mallory sets
  ``plans/p2`` ``completed`` (illegal), then ``plans_dir: ops`` (a supported change: the
  controller records it, ``plans_dir`` is in the record "how the audit recognises the
  controller's commits"), ``ops/o1`` frozen, approved by Alice and run; a pull request
  approving ``ops/o2`` and the old folder's frozen ``plans/p3``, checked ``--as alice``,
  merged and run. A fresh-clone audit and ``audit --config``.

Ids (``<plan>:<what>``):

- ``:ran`` (the recording tool: once for the plans that must run, never for the others),
  ``:row`` (``status --json``), ``:when`` (the pass each run happened in: nothing ran
  before its quorum under the policy in force at that pass), ``:refused`` (the code);
- ``:fresh``, ``:single``, ``:config``, ``:today``, ``:replaced``: each audit calls exactly
  the runs the controller made valid (the ``:agree`` idea), ``agree:<audit>``: every audit's
  executions (plan, kind, validity, code, ``policy_hash``, start) and findings equal the
  fresh clone's (replace refs and a single-branch clone change nothing; today's config
  changes no verdict, ``today:note`` says it differs from the last record);
- ``:policy``: the start's ``Policy-Hash:`` trailer, the sha256 of ``policy.json`` in the
  start's tree and the audit's ``policy_hash`` all name the policy of the pass that
  started it (P2, P1 again, P4);
- ``ck:<check>:<plan>``: ``check --as`` predicted the outcome the controller then took;
- ``:withdraw``: ignored withdrawals flagged ``withdraw-not-allowed``; a standing one listed
  under ``decisions`` by its maker and Bob's later approval flagged ``illegal``;
- ``flag:forged``/``flag:deleted``/``flag:prewrite``: each human policy commit flagged
  ``policy-changed``; ``flag:only``: no other kind of finding (no ``start-without-approval``,
  ``policy-hash-mismatch``, ``controller-unexplained``), exit 1; ``forge1:no-record``;
  ``gate1:gate`` (Alice's gate answer refused ``E_APPROVER_NOT_ALLOWED``, Dave's gate run
  valid under P2, ``fail``), ``lim:outcome``;
  ``policies:hashes``; ``records:tree-same``; ``passes``;
- ``d:setup``, ``d:<plan>:ran|policy|audit``, ``d:hdrop:refused``: the daemon lab;
  ``:policy`` asserts the policy git records at the controller's decision holds the key it
  judged by (the new key for a run, no key for a refusal);
- ``p:ran``, ``p:check``, ``p:agree``, ``p:<fresh|config>:<p1|o1|o2|illegal|clean>``: every
  run listed valid under its own record, Mallory's illegal status flagged, no other finding.

Seen (round 125: 241 ids, 232 passed, 9 xfailed (strict); about 21 s wall at ``-n 1``)

Classes:

- ``signers-file-change-unrecorded`` (``d:hrot:policy``, ``d:hrot:audit``,
  ``d:hdrop:policy``; fail closed for the audit, and the git record misses a policy the
  controller applied): the daemon re-reads ``allowed_signers`` before each
  ``git verify-commit`` (docs/configuration.md), so it ran Alice's approval signed with her
  new key and refused Bob's (``E_SIGNATURE_INVALID``), but it recorded no new policy: its
  start names the policy recorded before the edit, whose ``allowed_signers`` text holds her
  OLD key and Bob's. The fresh-clone audit flags the honest run ``start-without-approval``,
  ``E_SIGNATURE_INVALID`` (exit 1), and nothing in git explains Bob's refusal. With
  SIGHUP (``krot``), or with ``run --once`` (checked by hand), the controller records the
  new text first and the audit agrees. Expected (SPEC §11: "the controller commits its
  effective policy ... whenever it changes, and every start commit names it";
  docs/approvals.md: the record holds "``allowed_signers`` as the file's text"; "Each
  approval is judged by the policy its ``start`` commit names"): record the signers text the
  verification used (or verify with the recorded text until a reload).

  Fixed (2026-12-07, fix126g): the cause was two readings of one file: the recorded policy
  read ``allowed_signers`` once per config object (``Committing.policy_in_force`` cached it
  until a reload), while ``git verify-commit`` and the key lookups (``signers.signer_keys``)
  read the operator's path afresh at each use. Now the file is read ONCE per pass
  (``ControllerCore.pin_signers``, first thing in ``Controller._reconcile``, through
  ``settings.signersfile.pin_signers``): its bytes are copied into the state directory
  under their hash (``<state_dir>/policies/<sha256:16>.signers``, the name a recorded text
  is written under too) and the config in force names that copy, so the policy the pass
  records (before any decision) and names in its starts and every signature it checks read
  one text; a changed text is a new config in force, recorded by the pass that first read
  it. An unreadable, deleted or non-UTF-8 file stops the pass ``E_CONFIG_INVALID`` naming
  it (nothing decided, no approval spent). ``plangate check`` and ``audit --config`` pin the
  same way for the whole command (``commands._shared.signers_pinned``), and
  ``read_history`` (check, approve, reject, abort) reads one text. Tests:
  ``tests/service/test_signers_pinned.py``; docs/approvals.md ("The recorded policy"),
  docs/configuration.md, docs/operations.md ("Rotating a signing key").
- ``plans-dir-change-splits-audit`` (``p:fresh:o1``, ``p:fresh:o2``, ``p:fresh:clean``,
  ``p:config:p1``, ``p:config:illegal``, ``p:agree``; the fresh clone fails closed,
  ``--config`` fails open): after ``plans_dir`` changes from ``plans`` to ``ops`` (recorded
  by the controller), the audit reads ONE plans folder for the whole history: the fresh
  clone only the first record's (``plans``): the runs of ``ops/o1`` and ``ops/o2`` are not
  listed and the controller's own ``complete`` commits are flagged
  ``controller-unexplained`` (exit 1); ``audit --config`` only today's (``ops``): the run
  of ``plans/p1`` is gone from the report and Mallory's ``completed`` on ``plans/p2``, made
  while ``plans`` was the plans folder, is not flagged (exit 0).
  Expected (SPEC §8: the audit reports "for every plan execution, the approval it
  rests on" and flags "any execution, status or state change that no valid approval or
  controller commit explains"; docs/approvals.md: the record's ``plans_dir`` is "how the
  audit recognises the controller's commits", each approval judged by the policy in force
  then; docs/operations.md: a ``plans_dir`` change needs a restart, so it is supported):
  each stretch of history read with the ``plans_dir`` recorded for it.

  Fixed (2026-12-07, fix126d): the cause was one history index per audit, built for the
  folder :class:`~controller.approval.timeline.Timeline` chose once (the first record's, or
  the config's), and a controller whose index kept the old folder's rows and read the new
  folder only from the restart on. Now the timeline lists where the recorded folder changed
  (``Timeline.folders``); :func:`controller.approval.audit.audit_repo` replays once as
  before and, when more than one folder was recorded, ``_by_folder`` replays each recorded
  folder from the start of history to the record that replaced it for the last time
  (``folder_ends``; today's to the end), merges the parts in history order, and flags a new
  run of a hash already started under another folder (``_started_twice_across``); a
  controller event of a plan under another recorded folder is that folder's replay's to
  judge (``Lifecycle.other_folders``). The controller rebuilds its index when ``plans_dir``
  changed (``core._other_folder``, the folder kept in the index's meta), so ``status``
  shows today's folder only (``plans/p3`` is gone: no longer a plan, as for the audit) and
  the new folder's whole history is read, as ``check`` reads it. Tests:
  ``tests/approval/test_audit_plans_dir.py`` (4), ``tests/service/test_plans_dir_change.py``
  (2); docs/approvals.md ("plangate audit", "State and speed"), docs/operations.md
  ("Moving the plans folder").

Held: every lab A id: approvers removed/added, a group renamed, risk raised and lowered,
the config back to an earlier policy (recorded again, also when the agent wrote its bytes
first), a definition-only change, two plans with different rules in one commit, withdrawals
before/after each record and on a branch forked under an older policy, forged
``policy.json`` edits/deletion/replacement, Mallory's controller-shaped approval message,
replace refs, a single-branch clone, today's config differing, a gate answered across a
policy change, ``max_tool_calls`` lowered after the freeze; ``check --as`` in every shape
tried (lab P's too).

Seen, not asserted: the audit's ``policies`` list names each policy once, at its first
record (P1, P2, P4 here), though the controller recorded P1 again after P2 and runs name
it (the verdicts follow the right record, so a reader of ``policies`` alone cannot tell P1
was back in force); after the ``plans_dir`` change ``plangate status`` keeps a row for the
old folder's ``plans/p3`` saying "waiting for an approval" after Alice's merged approval,
which the controller no longer reads (``show`` warns the file says ``approved``); a commit
changing only ``policy.json``'s mode (``chmod +x``) is not flagged (by hand).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
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
    build_all,
    clone_audit_got,
    plan_text,
    until,
)

DAVE = ("Dave", "dave@ops.example.com")
ALICE_E, BOB_E, CAROL_E, DAVE_E = ALICE[1], BOB[1], CAROL[1], DAVE[1]

#: plan -> tool it calls (``lift`` medium then high, ``hot`` high then medium, ``big`` high)
PLANS = {
    "rmali": "rec",  # Alice's approval, Alice removed before the pass
    "liftb": "lift",  # Bob's vote under medium, lift made high: partial, then Carol
    "hotb": "hot",  # Bob's single vote under high, hot made medium: runs
    "grpb": "big",  # Carol's vote under group ops, group renamed sre (+Dave): Dave completes
    "duo1": "rec",  # paths rule (2), approved with solo1 in one commit by Bob
    "solo1": "rec",  # default rule (1): runs in that commit's pass
    "ckhot": "hot",  # pull request checked --as bob after the config change, before the pass
    "cklift": "lift",  # same pull request: check must predict partial
    "rmali2": "rec",  # agent rewrites policy.json with Alice back, then Alice approves
    "forge1": "rec",  # Mallory's approval carrying controller trailers
    "back": "rec",  # config back to C1 (same policy bytes as P1): Alice approves, runs
    "ckback": "rec",  # pull request checked --as alice after the return to C1, before the pass
    "defn": "rec",  # config changes only rec's definition: Alice approves, runs
    "rejd": "rec",  # Alice rejects after the return to C1 (P1 recorded again); Bob approves
    "rejc": "rec",  # Alice rejects under C2 (she is out: ignored); Bob approves later
    "rejdave": "rec",  # Dave rejects under C2 (he is in); Dave out again, Bob approves
    "rejpr": "rec",  # Alice rejects on a branch forked under P1, merged by Bob under P2
    "apppr": "rec",  # Alice approves on a branch forked under P1, merged by Bob under P2
    "rejd2": "rec",  # Alice rejects after P1's tree-same re-record; Bob's PR approval
    "rejd3": "rec",  # Dave rejects after P1's tree-same re-record (he is out); Bob's PR
    "gate1": "rec",  # two actions, the second gated: Bob starts it under P2, Alice's gate
    #                  answer (out under P2) refused, Dave's (in) resumes it
    "lim": "rec",  # two actions, frozen under max_tool_calls 1000, run under C2's 1
}
#: plans that must have run exactly once by the end (all others never)
RAN = {"liftb", "hotb", "grpb", "duo1", "solo1", "ckhot", "cklift", "back", "ckback", "defn"}
#: plans whose run must be judged by each phase's policy, by the pass that started them
PHASE = {
    "hotb": "P2",
    "solo1": "P2",
    "ckhot": "P2",
    "liftb": "P2b",
    "grpb": "P2b",
    "cklift": "P2b",
    "back": "P3",
    "ckback": "P3",
    "duo1": "P3",
    "defn": "P4",
}
#: refusal code the controller records (HEAD's PLAN.yml) for plans that never ran
REFUSED = {"rmali": "E_APPROVER_NOT_ALLOWED", "rmali2": "E_APPROVER_NOT_ALLOWED"}


def plan_for(slug: str, tool: str) -> str:
    if slug in ("gate1", "lim"):
        gate = "    requires_approval: true\n" if slug == "gate1" else ""
        return (
            f'plan:\n  name: "{slug}"\n  task: "round 125 two steps {slug}"\n'
            "  status: pending_approval\navailable_tools:\n  - name: rec\nactions:\n"
            f'  - id: 1\n    tool: rec\n    why: "first"\n    params: {{tag: "{slug}"}}\n'
            f'  - id: 2\n    tool: rec\n    why: "second"\n{gate}'
            f'    params: {{tag: "{slug}"}}\n'
        )
    return (
        "plan:\n"
        f'  name: "{slug}"\n'
        f'  task: "round 125 policy variant {slug}"\n'
        "  status: pending_approval\n"
        "available_tools:\n"
        f"  - name: {tool}\n"
        "actions:\n"
        "  - id: 1\n"
        f"    tool: {tool}\n"
        f'    why: "record that {slug} ran"\n'
        "    params:\n"
        f'      tag: "{slug}"\n'
    )


def write_config(lab: Lab, phase: str) -> None:
    """C1: approvers alice, bob, carol; group ``ops`` = them; ``lift`` medium, ``hot`` high.
    C2: alice out, dave in; group renamed ``sre`` = bob, carol, dave; ``lift`` high, ``hot``
    medium. C3: C1 again, byte for byte. C4: C1 with ``rec``'s definition changed (an env
    name added)."""
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    log = json.dumps(str(lab.log))
    env = f"env: {{REC_LOG: {log}}}"
    c2 = phase == "C2"
    approvers = [BOB_E, CAROL_E, DAVE_E] if c2 else [ALICE_E, BOB_E, CAROL_E]
    group = "sre" if c2 else "ops"
    rec_env = f"env: {{REC_LOG: {log}, R125_EXTRA: x}}" if phase == "C4" else env
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        f"  approvers: {json.dumps(approvers)}\n"
        "  groups:\n"
        f"    {group}: {json.dumps(approvers)}\n"
        "  rules:\n"
        "    - match: {risk: high}\n"
        f"      require: [{{group: {group}, count: 2}}]\n"
        '    - match: {paths: ["plans/duo*/**"]}\n'
        "      require: [{count: 2}]\n"
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {rec_env}}}\n"
        f"  lift: {{kind: exec, argv: {rec}, {env}, risk: {'high' if c2 else 'medium'}}}\n"
        f"  hot: {{kind: exec, argv: {rec}, {env}, risk: {'medium' if c2 else 'high'}}}\n"
        f"  big: {{kind: exec, argv: {rec}, {env}, risk: high}}\n"
        "  echo: {kind: echo}\n" + ("limits: {max_tool_calls: 1}\n" if c2 else "")
    )


def setst(lab: Lab, slug: str, who: tuple[str, str], msg: str | None = None) -> str:
    lab.set_status(slug, "approved")
    return lab.commit(msg or f"{who[0].lower()}: approve {slug}", who)


def trailers(lab: Lab, rev: str) -> dict[str, str]:
    out = lab.git("log", "-1", "--format=%(trailers:unfold,only)", rev)
    got: dict[str, str] = {}
    for line in out.splitlines():
        if ": " in line:
            k, v = line.split(": ", 1)
            got.setdefault(k, v)
    return got


def events(subject: str, body: str) -> list[tuple[str, str, str | None]]:
    """(plan, event, Policy-Hash) per plan a controller commit records: one-plan commits
    by their subject, batched ones (``Plan-Event:`` trailers) one group per ``Plan:``."""
    if "\nPlan-Event: " not in body:
        parts = subject.split(" ", 2)
        if len(parts) < 3:
            return []
        policy = next(
            (ln.split(": ", 1)[1] for ln in body.splitlines() if ln.startswith("Policy-Hash: ")),
            None,
        )
        return [(parts[2], parts[1], policy)]
    groups: list[dict[str, str]] = []
    for line in body.splitlines():
        key, sep, value = line.partition(": ")
        if not sep:
            continue
        if key == "Plan":
            groups.append({})
        if groups:
            groups[-1].setdefault(key, value)
    return [(g["Plan"], g.get("Plan-Event", ""), g.get("Policy-Hash")) for g in groups]


def policy_at(lab: Lab, rev: str) -> str | None:
    try:
        data = subprocess.run(
            ["git", "show", f"{rev}:.plangate/policy.json"],
            cwd=lab.repo,
            env=lab.env(),
            capture_output=True,
            check=True,
        ).stdout
    except subprocess.CalledProcessError:
        return None
    return "sha256:" + hashlib.sha256(data).hexdigest()


def records(lab: Lab) -> list[tuple[str, str]]:
    """The controller's ``plangate: record policy`` commits, oldest first: (commit, hash)."""
    rows = []
    for r in reversed(lab.log_rows()):
        if r[3] == "plangate: record policy" and r[2] == "plangate@localhost":
            rows.append((r[0], trailers(lab, r[0]).get("Policy-Hash", "")))
    return rows


def _report(lab: Lab, cwd: Path) -> dict[str, Any]:
    out = lab.cli("audit", "--json", cwd=cwd)
    try:
        return {"rc": out.returncode, "report": json.loads(out.stdout)}
    except ValueError:
        return {"rc": out.returncode, "report": {"raw": out.stdout[-800:] + out.stderr[-800:]}}


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"checks": {}, "passes": []}
    lab.got = got  # type: ignore[attr-defined]

    def run(tag: str) -> None:
        res = lab.run()
        got["passes"].append((tag, res.returncode))
        got[f"head:{tag}"] = lab.head()
        got[f"ran:{tag}"] = {slug: len(lab.calls(slug)) for slug in PLANS}

    # -- A: C1, the plans written and frozen ---------------------------------------------
    write_config(lab, "C1")
    for slug, tool in PLANS.items():
        lab.write(slug, plan_for(slug, tool))
    lab.commit("agent: plans", AGENT)
    run("A")
    got["P1"] = policy_at(lab, "HEAD")

    # -- B: votes under C1 (recorded), then the config becomes C2 before the pass -----------
    setst(lab, "rmali", ALICE)
    setst(lab, "liftb", BOB)
    setst(lab, "hotb", BOB)
    setst(lab, "grpb", CAROL)
    setst(lab, "gate1", BOB)
    setst(lab, "lim", BOB)
    lab.set_status("duo1", "approved")
    lab.set_status("solo1", "approved")
    lab.commit("bob: approve duo1 and solo1", BOB)
    # Mallory's approval dressed as the controller's start under the first policy
    lab.set_status("forge1", "approved")
    lab.commit(
        "plangate: start plans/forge1\n\nPlan: plans/forge1\nPlan-Status: executing\n"
        f"Policy-Hash: {got['P1']}\nApproved-By: alice@example.com\n"
        f"Controller-Seal: {'ab' * 32}\n",
        MALLORY,
    )
    # Alice's rejection and approval on a branch forked while P1 was the record
    lab.branch("pr-old", got["head:A"])
    lab.set_status("rejpr", "rejected")
    lab.commit("alice: reject rejpr", ALICE)
    lab.set_status("apppr", "approved")
    lab.commit("alice: approve apppr", ALICE)
    lab.git("checkout", "-q", "main")
    write_config(lab, "C2")
    # a pull request approving two plans, checked --as bob against the config now in force
    lab.branch("pr-b")
    lab.set_status("ckhot", "approved")
    lab.set_status("cklift", "approved")
    lab.commit("bob: approve ckhot and cklift", BOB)
    lab.git("checkout", "-q", "main")
    got["checks"]["B"] = lab.check_plans("pr-b", BOB_E)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-b", "pr-b", who=BOB)
    run("B")
    got["P2"] = policy_at(lab, "HEAD")

    # -- C: under C2: second votes; the agent rewrites the record; a deletion ---------------
    setst(lab, "liftb", CAROL)
    setst(lab, "grpb", DAVE)
    setst(lab, "cklift", CAROL)
    setst(lab, "duo1", ALICE)  # Alice is out under C2: refused, Bob's vote kept
    p1 = lab.git("show", f"{got['head:A']}:.plangate/policy.json")
    lab.put(".plangate/policy.json", p1)
    got["forged"] = lab.commit("agent: restore the policy", AGENT)
    setst(lab, "rmali2", ALICE)
    setst(lab, "gate1", ALICE)
    lab.set_status("rejc", "rejected")
    lab.commit("alice: reject rejc", ALICE)
    lab.set_status("rejdave", "rejected")
    lab.commit("dave: reject rejdave", DAVE)
    run("C")
    got["checks"]["old"] = lab.check_plans("pr-old", BOB_E)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-old", "pr-old", who=BOB)
    got["gate1:C"] = lab.plan("gate1").get("approval")
    setst(lab, "gate1", DAVE)
    run("C1")
    got["P2b"] = policy_at(lab, "HEAD")
    lab.git("rm", "-q", ".plangate/policy.json")
    got["deleted"] = lab.commit("agent: drop the policy file", AGENT)
    run("C2")

    # -- D: config back to C1 (P1's bytes); Alice completes duo1, approves back ------------
    write_config(lab, "C3")
    # the agent writes P1's bytes first: the controller's record of P1 changes no file
    lab.put(".plangate/policy.json", p1)
    got["prewrite"] = lab.commit("agent: policy file back", AGENT)
    lab.branch("pr-d")
    lab.set_status("ckback", "approved")
    lab.commit("alice: approve ckback", ALICE)
    lab.git("checkout", "-q", "main")
    got["checks"]["D"] = lab.check_plans("pr-d", ALICE_E)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-d", "pr-d", who=ALICE)
    setst(lab, "back", ALICE)
    setst(lab, "duo1", ALICE)
    setst(lab, "rejc", BOB)
    setst(lab, "rejdave", BOB)
    lab.set_status("rejd", "rejected")
    lab.commit("alice: reject rejd", ALICE)
    run("D")
    got["P3"] = policy_at(lab, "HEAD")
    lab.set_status("rejd2", "rejected")
    lab.commit("alice: reject rejd2", ALICE)
    lab.set_status("rejd3", "rejected")
    lab.commit("dave: reject rejd3", DAVE)

    # -- E: only rec's definition changes ----------------------------------------------------
    write_config(lab, "C4")
    lab.branch("pr-e")
    setst(lab, "rejd2", BOB)
    setst(lab, "rejd3", BOB)
    lab.git("checkout", "-q", "main")
    got["checks"]["E"] = lab.check_plans("pr-e", BOB_E)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-e", "pr-e", who=BOB)
    setst(lab, "defn", ALICE)
    setst(lab, "rejd", BOB)
    if lab.read("rejpr").find("status: rejected") >= 0:
        setst(lab, "rejpr", BOB)
    run("E")
    got["P4"] = policy_at(lab, "HEAD")

    # -- observations ------------------------------------------------------------------------
    got["records"] = records(lab)
    got["ran"] = {slug: len(lab.calls(slug)) for slug in PLANS}
    got["rows"] = {k: (v.get("status"), v.get("code")) for k, v in lab.rows().items()}
    got["refusal"] = {slug: lab.refusal(slug) for slug in PLANS}
    got["exec"] = {
        slug: [
            (a.get("status"), (a.get("error") or {}).get("code"))
            for a in (lab.plan(slug).get("execution") or {}).get("actions", [])
        ]
        for slug in ("gate1", "lim")
    }
    starts = {}
    for r in reversed(lab.log_rows()):
        if r[2] == "plangate@localhost":
            for plan, event, policy in events(r[3], r[4]):
                if event == "start":
                    starts.setdefault(plan, (r[0], policy))
    got["starts"] = {k: (c, h, policy_at(lab, c)) for k, (c, h) in starts.items()}
    got["fresh"] = clone_audit_got(lab, root)
    got["single"] = clone_audit_got(
        lab, root, "--single-branch", "--no-tags", "-b", "main", name="single", transport=True
    )
    rc, rep = lab.audit(config=lab.config)
    got["config"] = {"rc": rc, "report": rep}
    # today's config differs from the last record (C2 again, never recorded since)
    write_config(lab, "C2")
    rc, rep = lab.audit(config=lab.config)
    got["today"] = {"rc": rc, "report": rep}
    write_config(lab, "C4")
    # the agent pushes replace refs: its policy commits look like harmless note commits
    for key in ("forged", "deleted"):
        c = got[key]
        tree = lab.git("rev-parse", f"{c}^^{{tree}}").strip()
        fake = lab.git("commit-tree", tree, "-p", f"{c}^", "-m", "agent: notes", who=AGENT).strip()
        lab.git("replace", c, fake)
    repl = root / "replaced"
    lab.git("clone", "-q", str(lab.repo), str(repl))
    subprocess.run(
        ["git", "fetch", "-q", "origin", "refs/replace/*:refs/replace/*"],
        cwd=repl,
        env=lab.env(),
        check=True,
    )
    got["replaced"] = _report(lab, repl)
    return lab


#: the daemon lab's plans: who signs with which key, and whether the controller ran it
SIGNED = {
    "hrot": (ALICE, "alice2", 1),  # Alice's key rotated in allowed_signers, no SIGHUP
    "hdrop": (BOB, "bob", 0),  # Bob's key removed from allowed_signers, no SIGHUP
    "krot": (CAROL, "carol2", 1),  # Carol's key rotated, then SIGHUP (control)
}


def _signers(lab: Lab, ring: dict[str, str], alice: str, bob: bool, carol: str) -> None:
    lab.root.joinpath("allowed_signers").write_text(
        f"plangate@localhost {ring['bot']}\nalice@example.com {ring[alice]}\n"
        + (f"bob@ops.example.com {ring['bob']}\n" if bob else "")
        + f"carol@ops.example.com {ring[carol]}\n"
    )


def _build_daemon(root: Path) -> Lab:
    """The daemon lab: signed approvals (``require_signed``), a real ``plangate run``."""
    from signkit import make_key, sign

    lab = Lab(root / "dlab")
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    keys = lab.root / "keys"
    keys.mkdir()
    ring = {n: make_key(keys, n) for n in ["alice", "alice2", "bob", "carol", "carol2", "bot"]}
    _signers(lab, ring, "alice", True, "carol")
    signers = lab.root / "allowed_signers"
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for slug in SIGNED:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    env.update(
        GIT_CONFIG_COUNT="3",
        GIT_CONFIG_KEY_0="gpg.format",
        GIT_CONFIG_VALUE_0="ssh",
        GIT_CONFIG_KEY_1="user.signingKey",
        GIT_CONFIG_VALUE_1=str(keys / "bot"),
        GIT_CONFIG_KEY_2="commit.gpgSign",
        GIT_CONFIG_VALUE_2="true",
    )

    def subjects() -> list[str]:
        return lab.git("log", "--format=%s").splitlines()

    def settled(slug: str) -> bool:
        done = (f"plangate: complete plans/{slug}", f"plangate: refuse plans/{slug}")
        return any(s in done for s in subjects()) or any(
            f"plans/{slug}" in r[4] and "Plan-Event: refuse" in r[4] for r in lab.log_rows()
        )

    err = (root / "daemon.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
        env=env,
        cwd=root,
        stdout=err,
        stderr=err,
        start_new_session=True,
    )
    try:
        frozen = lambda: all(  # noqa: E731
            "frozen:" in lab.git("show", f"HEAD:plans/{s}/PLAN.yml", check=False) for s in SIGNED
        )
        got["frozen"] = until(frozen, 120)
        lab.git("reset", "-q", "--hard")
        got["records0"] = subjects().count("plangate: record policy")
        # the operator rotates Alice's key and drops Bob's in the signers file: no SIGHUP
        _signers(lab, ring, "alice2", False, "carol")
        for slug in ("hrot", "hdrop"):
            who, key, _ = SIGNED[slug]
            sign(lab, slug, key, who, "approved")
        got["settled1"] = until(lambda: settled("hrot") and settled("hdrop"), 120)
        got["records1"] = subjects().count("plangate: record policy")
        # the operator rotates Carol's key and tells the daemon (SIGHUP)
        _signers(lab, ring, "alice2", False, "carol2")
        os.kill(proc.pid, signal.SIGHUP)
        got["hup"] = until(
            lambda: subjects().count("plangate: record policy") > got["records1"], 120
        )
        lab.git("reset", "-q", "--hard")
        who, key, _ = SIGNED["krot"]
        sign(lab, "krot", key, who, "approved")
        got["settled2"] = until(lambda: settled("krot"), 120)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        err.close()
    got["ran"] = {slug: len(lab.calls(slug)) for slug in SIGNED}
    got["refusal"] = {slug: lab.refusal(slug) for slug in SIGNED}
    starts: dict[str, tuple[str, str | None]] = {}
    refuses: dict[str, str] = {}
    for r in reversed(lab.log_rows()):
        if r[2] == "plangate@localhost":
            for plan, event, policy in events(r[3], r[4]):
                if event == "start":
                    starts.setdefault(plan, (r[0], policy))
                if event == "refuse":
                    refuses.setdefault(plan, r[0])
    got["starts"] = starts
    # the recorded policy's signers text in force at each start and refusal
    got["signers_at"] = {}
    for plan, commit in [*((p, c) for p, (c, _) in starts.items()), *refuses.items()]:
        text = lab.git("show", f"{commit}:.plangate/policy.json", check=False)
        try:
            got["signers_at"][plan] = json.loads(text)["approval"].get("allowed_signers") or ""
        except (ValueError, KeyError, TypeError):
            got["signers_at"][plan] = f"unreadable: {text[:200]}"
    got["keys"] = {n: ring[n].split()[1] for n in ring}
    got["fresh"] = clone_audit_got(lab, root)
    return lab


def _build_pdir(root: Path) -> Lab:
    """The plans_dir lab (``run --once``): plans under ``plans/`` (one run, one forged
    status), then ``plans_dir: ops`` and a plan under ``ops/`` run."""
    lab = Lab(root / "plab")
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    lab.write("p1", plan_text("p1"))
    lab.write("p2", plan_text("p2"))
    lab.write("p3", plan_text("p3"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("p1")
    lab.set_status("p2", "completed")
    got["illegal"] = lab.commit("mallory: p2 is done", MALLORY)
    lab.run()
    got["P1"] = policy_at(lab, "HEAD")
    text = lab.config.read_text()
    lab.config.write_text(text.replace("state_dir:", "plans_dir: ops\nstate_dir:", 1))
    lab.put("ops/o1/PLAN.yml", plan_text("o1"))
    lab.put("ops/o2/PLAN.yml", plan_text("o2"))
    lab.commit("agent: ops plans", AGENT)
    lab.run()
    got["P2"] = policy_at(lab, "HEAD")
    path = lab.repo / "ops/o1/PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))
    lab.commit("alice: approve o1", ALICE)
    # a pull request approving ops/o2 and the old folder's frozen plans/p3, checked --as alice
    lab.branch("pr-o")
    path = lab.repo / "ops/o2/PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))
    lab.set_status("p3", "approved")
    lab.commit("alice: approve o2 and p3", ALICE)
    lab.git("checkout", "-q", "main")
    told = lab.check("pr-o", ALICE_E)
    try:
        got["check"] = {
            p["plan"]: p.get("outcome") for p in json.loads(told.stdout).get("plans", [])
        }
    except (ValueError, AttributeError):
        got["check"] = {"raw": told.stdout[-400:] + told.stderr[-400:]}
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-o", "pr-o", who=ALICE)
    lab.run()
    got["ran"] = {v: len(lab.calls(v)) for v in ("p1", "p2", "p3", "o1", "o2")}
    got["fresh"] = clone_audit_got(lab, root)
    rc, rep = lab.audit(config=lab.config)
    got["config"] = {"rc": rc, "report": rep}
    return lab


def _build_both(root: Path) -> Lab:
    builders = {"a": _build, "d": _build_daemon, "p": _build_pdir}
    labs = build_all(root, builders, workers=2).got
    lab = labs["a"]
    lab.got["d"] = labs["d"].got  # type: ignore[attr-defined]
    lab.got["p"] = labs["p"].got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return _build_both(tmp_path_factory.mktemp("r125p"))


AUDITS = ("fresh", "single", "config", "today", "replaced")
PHASE_OF = {**PHASE, "apppr": "P2b", "rejc": "P3", "rejd": "P4", "rejpr": "P4", "rejd3": "P4"}
PHASE_OF |= {"gate1": "P2", "lim": "P2"}
RAN |= {"rejd", "rejc", "rejpr", "apppr", "rejd3", "gate1", "lim"}
#: runs that end failed: the second call is over C2's max_tool_calls: 1 (for gate1 after
#: Dave's gate answer: the calls before the pause count)
FAILED = {"gate1", "lim"}
#: valid executions per plan in the audit (gate1: its approval and its gate)
EXECS = {"gate1": 2}
#: pass after which each ran plan must have run (and not before)
FIRST = {
    "hotb": "B", "solo1": "B", "ckhot": "B",
    "liftb": "C", "grpb": "C", "cklift": "C", "apppr": "C1",
    "back": "D", "ckback": "D", "duo1": "D", "rejc": "D",
    "defn": "E", "rejd": "E", "rejpr": "E", "rejd3": "E", "gate1": "B", "lim": "B",
}  # fmt: skip
PASSES = ["A", "B", "C", "C1", "C2", "D", "E"]
#: check --as predictions: (check, plan) -> outcome the controller then took
CHECKS = {
    ("B", "ckhot"): "start",
    ("B", "cklift"): "partial",
    ("old", "apppr"): "start",
    ("D", "ckback"): "start",
    ("E", "rejd2"): "none",
    ("E", "rejd3"): "start",
}
#: who the audit must flag for an ignored withdrawal / an illegal approval
NOT_ALLOWED = {"rejc", "rejpr", "rejd", "rejd3"}
ILLEGAL = {"rejdave", "rejd2"}
DECIDED = {"rejdave": DAVE_E, "rejd2": ALICE_E}

IDS = [f"{v}:{k}" for v in PLANS for k in ("ran", "row", *AUDITS)]
IDS += [f"{v}:when" for v in FIRST] + [f"{v}:policy" for v in PHASE_OF]
IDS += [f"{v}:refused" for v in REFUSED] + [f"ck:{c}:{v}" for c, v in CHECKS]
IDS += [f"{v}:withdraw" for v in sorted((*NOT_ALLOWED, *ILLEGAL))]
IDS += ["flag:forged", "flag:deleted", "flag:prewrite", "flag:only", "forge1:no-record"]
IDS += ["policies:hashes", "records:tree-same", "today:note", "gate1:gate", "lim:outcome"]
IDS += [f"agree:{a}" for a in AUDITS[1:]] + ["passes"]
PDIR_KEYS = ("p1", "o1", "o2", "illegal", "clean")
IDS += ["d:setup"] + [f"d:{v}:{k}" for v in SIGNED for k in ("ran", "policy", "audit")]
IDS += ["d:hdrop:refused"]
IDS += ["p:ran", "p:agree", "p:check"] + [
    f"p:{a}:{k}" for a in ("fresh", "config") for k in PDIR_KEYS
]

SIGNERS_CLASS = "signers-file-change-unrecorded"
# signers-file-change-unrecorded (fix126g) and plans-dir-change-splits-audit (fix126d):
# fixed the same session, see the docstring
BROKEN: dict[str, Any] = {}


def _params(ids: list[str]) -> list[Any]:
    return [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in ids]


def _execs(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    return sorted(
        (
            str(e.get("plan")),
            str(e.get("approval_kind")),
            bool(e.get("approval_valid")),
            str(e.get("code")),
            str(e.get("policy_hash")),
            str(e.get("start_commit")),
        )
        for e in report.get("executions", [])
    )


def _valid(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{slug}" and e.get("approval_valid")
    ]


def _findings(report: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [f for f in report.get("findings", []) if f.get("kind") == kind]


@pytest.mark.parametrize("vid", _params(IDS))
def test_policy(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    fresh = got["fresh"]["report"]
    slug, _, kind = vid.partition(":")
    if slug == "d":
        _daemon_case(got["d"], kind)
        return
    if slug == "p":
        _pdir_case(got["p"], kind)
        return
    if vid == "passes":
        assert all(rc == 0 for _, rc in got["passes"]), got["passes"]
        assert len({got["P1"], got["P2"], got["P4"]}) == 3, got
        assert got["P3"] == got["P1"] and got["P2b"] == got["P2"], got
        return
    if kind == "ran":
        assert got["ran"][slug] == (1 if slug in RAN else 0), got["ran"]
        return
    if kind == "row":
        row = got["rows"].get(f"plans/{slug}")
        want = "failed" if slug in FAILED else "completed"
        assert (row and row[0] == want) is (slug in RAN), row
        return
    if kind in AUDITS:
        report = got[kind]["report"]
        assert "executions" in report, report
        valid = _valid(report, slug)
        want = EXECS.get(slug, 1) if slug in RAN else 0
        assert len(valid) == want, (valid, report.get("findings"))
        return
    if kind == "when":
        first = PASSES.index(FIRST[slug])
        seen = [got[f"ran:{p}"][slug] for p in PASSES]
        assert seen == [0] * first + [1] * (len(PASSES) - first), seen
        return
    if kind == "policy":
        # the start's trailer, the file at the start, the audit's verdict and the phase agree
        commit, trailer, file_hash = got["starts"][f"plans/{slug}"]
        want = got[PHASE_OF[slug]]
        (execution,) = [e for e in _valid(fresh, slug) if e.get("approval_kind") == "approve"]
        assert (trailer, file_hash, execution["policy_hash"]) == (want, want, want), (
            trailer, file_hash, execution, want,
        )  # fmt: skip
        assert execution["start_commit"] == commit, execution
        return
    if kind == "refused":
        assert got["refusal"][slug] == REFUSED[slug], got["refusal"][slug]
        return
    if slug == "ck":
        check, plan = kind.split(":")
        outcome, codes = got["checks"][check].get(f"plans/{plan}", (None, []))
        assert outcome == CHECKS[(check, plan)], (outcome, codes)
        return
    if kind == "withdraw":
        path = f"plans/{slug}"
        if slug in NOT_ALLOWED:
            flagged = [f for f in _findings(fresh, "withdraw-not-allowed") if f["plan"] == path]
            assert len(flagged) == 1, fresh.get("findings")
        else:
            flagged = [f for f in _findings(fresh, "illegal") if f["plan"] == path]
            assert len(flagged) == 1 and BOB_E in flagged[0]["detail"], fresh.get("findings")
            decided = [d for d in fresh.get("decisions", []) if d.get("plan") == path]
            assert [(d["kind"], d["by"]) for d in decided] == [("reject", DECIDED[slug])], decided
        return
    if vid.startswith("flag:") and kind in ("forged", "deleted", "prewrite"):
        flagged = [f for f in _findings(fresh, "policy-changed") if f["commit"] == got[kind]]
        assert len(flagged) == 1, fresh.get("findings")
        return
    if vid == "flag:only":
        kinds = sorted({f.get("kind") for f in fresh.get("findings", [])})
        assert kinds == ["illegal", "policy-changed", "withdraw-not-allowed"], kinds
        assert got["fresh"]["rc"] == 1, got["fresh"]["rc"]
        return
    if vid == "forge1:no-record":
        assert not [e for e in fresh["executions"] if e.get("plan") == "plans/forge1"]
        assert got["P1"] in {p["hash"] for p in fresh["policies"]}
        commits = {p["commit"] for p in fresh["policies"]}
        assert commits <= {c for c, _ in got["records"]}, (commits, got["records"])
        return
    if vid == "gate1:gate":
        refused = got["gate1:C"] or {}
        assert (refused.get("status"), refused.get("code"), refused.get("by")) == (
            "refused", "E_APPROVER_NOT_ALLOWED", ALICE_E,
        ), refused  # fmt: skip
        gates = [e for e in _valid(fresh, "gate1") if e.get("approval_kind") == "gate"]
        assert [(e["approver"], e["policy_hash"], e["outcome"]) for e in gates] == [
            (DAVE_E, got["P2"], "fail")
        ], gates
        assert got["exec"]["gate1"] == [("succeeded", None), ("failed", "E_LIMIT_EXCEEDED")]
        return
    if vid == "lim:outcome":
        (run,) = _valid(fresh, "lim")
        assert run["outcome"] == "fail", run
        assert got["exec"]["lim"] == [("succeeded", None), ("failed", "E_LIMIT_EXCEEDED")]
        return
    if vid == "policies:hashes":
        listed = {p["hash"] for p in fresh["policies"]}
        assert listed == {h for _, h in got["records"]}, (fresh["policies"], got["records"])
        return
    if vid == "records:tree-same":
        # the controller recorded P1 again although the agent had written its bytes first
        after = [c for c, h in got["records"] if h == got["P1"]]
        assert len(after) == 2, got["records"]
        assert lab.git("diff", "--name-only", f"{after[1]}^", after[1]).strip() == ""
        return
    if vid == "today:note":
        today = got["today"]["report"]
        notes = [n for n in today.get("notes", []) if n.get("kind") == "config-differs"]
        assert len(notes) == 1 and got["P4"] in notes[0]["detail"], today.get("notes")
        assert _execs(today) == _execs(fresh)
        return
    if slug == "agree":
        other = got[kind]
        assert other["rc"] == got["fresh"]["rc"], (other["rc"], got["fresh"]["rc"])
        assert _execs(other["report"]) == _execs(fresh), other["report"].get("raw")
        mine = sorted((f["kind"], f["plan"], f["commit"]) for f in other["report"]["findings"])
        assert mine == sorted((f["kind"], f["plan"], f["commit"]) for f in fresh["findings"])
        return
    raise AssertionError(f"unknown id {vid}")


def _pdir_case(got: dict[str, Any], what: str) -> None:
    if what == "ran":
        assert got["ran"] == {"p1": 1, "p2": 0, "p3": 0, "o1": 1, "o2": 1}, got["ran"]
        return
    if what == "check":
        # check --as alice on the pull request: ops/o2 starts, the old folder's p3 does not
        assert got["check"].get("ops/o2") == "start", got["check"]
        assert got["check"].get("plans/p3") in (None, "none"), got["check"]
        return
    if what == "agree":
        assert _execs(got["fresh"]["report"]) == _execs(got["config"]["report"])
        return
    audit, kind = what.split(":")
    report = got[audit]["report"]
    if kind in ("p1", "o1", "o2"):
        path = f"plans/{kind}" if kind == "p1" else f"ops/{kind}"
        valid = [e for e in report.get("executions", []) if e.get("plan") == path]
        assert [e.get("approval_valid") for e in valid] == [True], report.get("executions")
        want = got["P1"] if kind == "p1" else got["P2"]
        assert valid[0].get("policy_hash") == want, (valid, want)
        return
    if kind == "illegal":
        flagged = [f for f in _findings(report, "illegal") if f.get("commit") == got["illegal"]]
        assert len(flagged) == 1 and flagged[0]["plan"] == "plans/p2", report.get("findings")
        assert got[audit]["rc"] == 1, got[audit]["rc"]
        return
    if kind == "clean":
        kinds = sorted({f.get("kind") for f in report.get("findings", [])})
        assert set(kinds) <= {"illegal"}, report.get("findings")
        return
    raise AssertionError(f"unknown plans_dir id {what}")


def _daemon_case(got: dict[str, Any], what: str) -> None:
    if what == "setup":
        assert [got[k] for k in ("frozen", "settled1", "hup", "settled2")] == [True] * 4, got
        return
    slug, kind = what.split(":")
    _who, key, ran = SIGNED[slug]
    path = f"plans/{slug}"
    if kind == "ran":
        assert got["ran"][slug] == ran, got["ran"]
        return
    if kind == "refused":
        assert got["refusal"][slug] == "E_SIGNATURE_INVALID", got["refusal"]
        return
    if kind == "policy":
        # the policy git records at the controller's decision holds the key it judged by
        signers = got["signers_at"].get(path, "")
        if ran:
            assert got["starts"][path][1], got["starts"]
            assert got["keys"][key] in signers, (key, signers)
        else:
            assert got["keys"][key] not in signers, (key, signers)
        return
    if kind == "audit":
        report = got["fresh"]["report"]
        assert len(_valid(report, slug)) == ran, report.get("findings")
        flagged = [f for f in report.get("findings", []) if f.get("plan") == path]
        assert not flagged, flagged
        return
    raise AssertionError(f"unknown daemon id {what}")
