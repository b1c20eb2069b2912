"""Round 89, approval and policy (atk89a): quorum, groups, gates, policy changes, dates.

Lab ``main`` (built once, seven ``run --once`` passes). Config: approvers Alice and
``*@ops.example.com``, group ``ops: ["*@ops.example.com", "frank@example.com"]`` (Frank: a
group member who is no approver); ``plans/q*/**`` needs ``{count: 2}``, ``plans/g*/**`` needs
``{group: ops, count: 2}``. After P3 the config changes (POLICY2): ops becomes Carol, Dan and
Frank (Bob leaves it), ``plans/qz*`` needs three, ``plans/qy*`` one. ``<slug>:ran`` counts the
recording tool's calls, ``<slug>:audit`` asserts the fresh clone's ``plangate audit`` calls
valid exactly the plans that ran and the expected ones, ``<slug>:check`` that ``plangate
check --as <merger>`` before a merge predicted ``start`` exactly when the controller then
started it, ``<slug>:gate`` counts the gated action's calls, ``<slug>:paused`` that the gated
plan did reach its gate (no vacuous attack).

Quorum (count 2; Alice's first vote makes ``partial`` unless said otherwise):

- ``qdup``: Alice approves again; ``qcase``: again as ``Alice <ALICE@EXAMPLE.COM>``.
- ``qback``: v2 written and frozen, v1 written back byte for byte and frozen again, Bob
  approves; ``qback2``: the same with Alice's vote on v2 too.
- ``qmmeve``: the agent's root ``.mailmap`` maps Eve (no approver) to Carol; Eve approves.
- ``qforge``: the agent copies Alice's entry under the partial's ``approvals:`` as Bob's, then
  Alice approves again; ``qbot``: the same edit committed under the controller's name
  (author and committer) as ``plangate: partial plans/qbot``.
- ``qrevert``: the agent restores the file as it was before the controller's ``partial``
  (Alice's ``approved`` back, what ``git revert`` of the partial writes).
- ``qcherry``: Alice's approval on a side branch cherry-picked by Bob (author Alice, committer
  Bob): one commit, one vote.
- ``qmerge``: Alice's unsigned approval on a branch merged ``--no-ff`` by Bob (only the merger
  counts); ``qmm``: after Alice's partial, Bob's unsigned approval on a branch merged by
  Mallory; ``qsquash``: Alice's branch (and Carol's empty commit) squash-merged by Bob.
- ``qcoauth``: Bob approves with ``Co-authored-by: Carol`` in his message.
- ``qrejauth``: the agent (the author) rejects after the partial, Bob approves.
- ``qfrank`` (control): Frank (ops member, no approver) rejects after the partial; Bob's
  approval runs it. ``gfrank``: Bob, then Frank's approval.
- ``qmvout``: the agent moves the partial plan to ``plans/zmvout`` (no rule: one approval);
  nobody approves again. ``qmv2``: moved to ``plans/qmv2b``; Alice approves again there.
- ``qz``: Alice (P2, count 2), then under POLICY2 (count 3) Carol: still partial. ``qy``
  (control): Alice (P2, partial), under POLICY2 (count 1) Alice again: runs, and the audit
  judges it by the recorded policy. ``gx``: Bob (P2), Bob leaves ops, Carol: partial.
- ``qpol``: the agent rewrites ``.plangate/policy.json`` with ``rules: []``, Alice approves
  again.
- Groups: Bob, then ``gcase`` ``BOB@OPS.EXAMPLE.COM``, ``gfull`` fullwidth ``\uff42ob@...``,
  ``gname`` ``Robert <bob@ops.example.com>``, ``galice`` Alice (not in ops).

Gates (``qt*``, count 2 for the plan, Alice then Bob; the run pauses at action 2): ``qtbob``
(control) Bob approves the gate; ``qtauth`` the agent (author); ``qtpick`` the agent
cherry-picks Alice's first approval commit (``-X theirs``: her authorship and date);
``qtreuse`` the agent's gate approval committed with ``git commit -C <Alice's approval>``;
``qtfrank`` Frank; ``qtmerge`` Alice's unsigned gate approval on a branch merged by
Mallory; ``qtbr`` (control) the same merged by Bob (a gate needs one approval).

Lab ``time`` (``max_age: 3600``, default policy): Alice's approval with (author, committer)
dates moved: ``tnow`` (0, 0), ``tfut30`` (+30 min), ``tfut`` (+2 h both), ``tfutc`` (committer
+2 h), ``tfuta`` (author +2 h), ``tpast`` (-2 d both), ``tpasta`` (author -2 d). In the
same lab ``{risk: high}`` needs two approvals: ``xrfb`` calls the high-risk ``hot`` only in
a fallback step; Alice alone approves.

Lab ``toolrule`` (``{tools: [hot2]}`` needs two approvals): ``ua`` calls ``rec`` (Alice: runs),
``ub`` calls ``hot2`` (Alice, then Bob: runs), ``xtfb`` calls ``hot2`` only in a fallback
step (Alice alone: partial); then ``plangate audit --json`` in a fresh clone, no config.

Labs ``fseal``/``fnoseal`` (default policy): a forged ``plangate: record policy`` commit
under the controller's name (author and committer), ``.plangate/policy.json`` naming only
``nobody@example.com`` as approver and a matching ``Policy-Hash:`` trailer (``fseal``: with
the real record's ``Controller:``/``Controller-Seal:`` trailers copied); then Alice approves.
The controller runs it (its config decides) and the fresh-clone audit must call it valid.

Seen (round 89): 3 ids broke, 1 class; 113 held.

1. **A recorded policy holding a ``{tools: [...]}`` rule is no recorded policy to the
   fresh-clone audit** (``ua``, ``ub``, ``xtfb`` ``:audit``): the controller recorded its
   policy (``plangate: record policy``, ``.plangate/policy.json`` with ``"rules": [{"match":
   {"flows": null, "paths": null, "risk": null, "tools": ["hot2"]}, ...}]``), ran ``ua``
   and ``ub`` (``approval request (approve) by bob@ops.example.com``, ``plangate: start
   plans/ub``, ``complete``) and made ``xtfb`` partial, but ``plangate audit --json`` in a
   fresh clone exits 2: ``{"ok": false, "code": "E_CONFIG_INVALID", "message": "no config
   found, and the branch holds no recorded policy (.plangate/policy.json) to judge its
   history by"}``, even reset to the record commit itself. Hand probes: the same with a
   ``{tools: [echo]}`` rule; ``{risk: high}``, ``{paths: [...]}``, ``max_age`` and a
   ``risk: high`` tool alone audit fine.

Otherwise nothing broke. Every quorum attack ended ``partial``, ``refuse``
or ignored: ``qforge``/``qbot`` ``approval request (approve) by alice@example.com``,
``plangate: partial``; ``qrevert`` ``approval request (approve) by agent@example.com``,
``plangate: refuse``; ``qmmeve`` ``approval request (approve) by eve@example.com``,
``refuse``; ``gcase``/``gfull`` by ``BOB@OPS.EXAMPLE.COM``/``\uff42ob@ops.example.com``,
``partial``; ``gx``/``qz`` Carol's approval ``partial`` under POLICY2; ``qrejauth``
``agent@example.com set status rejected``, then ``E_ILLEGAL_TRANSITION: bob@ops.example.com
set status approved (from rejected) ...; ignored``; ``qmvout``'s row ``E_OWNED_BLOCK_CHANGED:
the approval: block on the branch is not the controller's record``, nothing ran. Gates:
``qtpick``/``qtreuse`` ``E_APPROVAL_REPLAYED: ... repeats the approval ... (a copy of it: its
author, time and subject brought back for another version or pause ...)``; ``qtauth``,
``qtfrank``, ``qtmerge`` (``refused: mallory@example.com (the merge)
E_APPROVER_NOT_ALLOWED``, check ``refuse``) refused. ``check`` agreed each time (``qmerge``
``partial``, ``qmm`` ``refuse``, ``qtbr`` ``start``; for a gate it shows the plan's ``needs:
2 approvals`` with ``missing: ""``, cosmetic). Dates: ``tfut``/``tfutc`` ``E_PLAN_EXPIRED:
the plan was frozen 2.0 h before its approval was verified``; ``tfuta`` ran (the committer's
date counts); ``tpast``/``tpasta`` refused; the audit agreed on every one. Forged records:
``fa`` ran and the fresh-clone audit called it valid in both labs. Fallbacks: ``xrfb``
``risk: high``, ``more approvals needed: 1 more approval``; ``xtfb`` ``plangate: partial``
(the ``tools`` rule seen through the fallback).

Should (docs/approvals.md, Policy): "Approvals of the same hash accumulate across approval
commits by distinct people ... One person counts once"; "A group member must also match
``approval.approvers``"; "a human editing that block adds nothing"; "Any change to the hashed
content voids them: the plan is frozen again and collection starts from zero"; "Each
collected vote is judged again ... under the policy in force"; "Gates and resumes ... still
need one approval"; a commit inside a merged branch counts only with a signed
``Plan-Approved:`` trailer; ``max_age`` counts "to the *later* of the approving commit's
time and the verifier's own clock"; ``plangate audit``: "Reads git history alone (no state
directory, no config needed): run it in a fresh clone ... Each approval is judged by the
policy its ``start`` commit names (``Policy-Hash:``)", the record holding "``approval``: every
key (..., ``groups``, ``rules``, ...)"; the recorded policy: "What makes a policy *recorded* is a
commit of the controller's, never the file's bytes".

Fixed (2026-12-02, the lead): ``recorded.config_of`` validated the recorded approval rules
against an empty catalog (the recorded tools were added after), so a ``{tools: [...]}`` rule
made every such record unreadable; the catalog's names now go in with the rules.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, BOT, CAROL, MALLORY, Lab, cases, clone_audit, plan_text
from checkkit import predicts_start
from test_round2_execution_kit import shared

EVE = ("Eve", "eve@example.com")
FRANK = ("Frank", "frank@example.com")  # in the group ops, no approver
POLICY = """\
groups:
  ops: ["*@ops.example.com", "frank@example.com"]
rules:
  - match: {paths: ["plans/q*/**"]}
    require: [{count: 2}]
  - match: {paths: ["plans/g*/**"]}
    require: [{group: ops, count: 2}]
"""
#: the config after P3: Bob leaves ops, ``plans/qz*`` needs three, ``plans/qy*`` one
POLICY2 = """\
groups:
  ops: ["carol@ops.example.com", "dan@ops.example.com", "frank@example.com"]
rules:
  - match: {paths: ["plans/qz*/**"]}
    require: [{count: 3}]
  - match: {paths: ["plans/qy*/**"]}
    require: [{count: 1}]
  - match: {paths: ["plans/q*/**"]}
    require: [{count: 2}]
  - match: {paths: ["plans/g*/**"]}
    require: [{group: ops, count: 2}]
"""
GATED = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
#: the gate variants (count 2 for the plan; Alice, then Bob): who approves the gate
GATES = {
    "qtbob": "bob",
    "qtauth": "agent",
    "qtpick": "pick",
    "qtreuse": "reuse",
    "qtfrank": "frank",
    "qtmerge": "merge",
    "qtbr": "merged by bob",
}
#: the second vote (step B) of the group variants
SECOND = {
    "gcase": ("Bob", "BOB@OPS.EXAMPLE.COM"),
    "gfull": ("Bob", "\uff42ob@ops.example.com"),
    "gname": ("Robert", "bob@ops.example.com"),
    "gok": CAROL,
    "gfrank": FRANK,
    "galice": ALICE,
}
ALICE_FIRST = [
    "qok", "qdup", "qcase", "qback", "qback2", "qmmeve", "qforge", "qbot", "qrevert",
    "qmm", "qrej", "qrejauth", "qz", "qy", "qpol", "qfrank", "qmvout", "qmv2", *GATES,
]  # fmt: skip
SLUGS = [*ALICE_FIRST, "qcherry", "qmerge", "qsquash", "qcoauth", *SECOND, "gx"]
RUNS = {"qok": 1, "gok": 1, "qrej": 1, "qfrank": 1, "qy": 1, **{s: 1 for s in GATES}}
GATE_RUNS = {"qtbob": 1, "qtbr": 1}
#: Alice's approval's (author, committer) date offsets in seconds under ``max_age: 3600``
DATES = {
    "tnow": (0, 0),
    "tfut30": (1800, 1800),
    "tfut": (7200, 7200),
    "tfutc": (0, 7200),
    "tfuta": (7200, 0),
    "tpast": (-172800, -172800),
    "tpasta": (-172800, 0),
}
#: lab ``time`` also: a high-risk tool (``hot``) or a ruled tool (``hot2``) called only in a
#: fallback step; ``{risk: high}`` and ``{tools: [hot2]}`` need two approvals; Alice approves
RISK_RULES = """\
rules:
  - match: {risk: high}
    require: [{count: 2}]
"""
#: lab ``toolrule``: only ``{tools: [hot2]}`` needs two
TOOL_RULES = """\
rules:
  - match: {tools: [hot2]}
    require: [{count: 2}]
"""
FALLBACK = """\
plan:
  name: "{t}"
  task: "t"
  status: pending_approval
available_tools:
  - name: rec
  - name: {tool}
actions:
  - id: 1
    tool: rec
    why: "w"
    on_failure: fallback
    params:
      tag: "{t}"
    fallback:
      - id: "1.1"
        tool: {tool}
        why: "fb"
        params:
          tag: "{t}-fb"
"""
FALLBACKS = {"xrfb": "hot"}
#: lab ``toolrule``: ``ua`` (rec; Alice: runs), ``ub`` (hot2; Alice and Bob: runs), ``xtfb``
#: (hot2 only in a fallback; Alice alone: partial)
TOOLRULE_RUNS = {"ua": 1, "ub": 1, "xtfb": 0}
TIME_RUNS = {"tnow": 1, "tfut30": 1, "tfuta": 1}
#: forged policy records (own labs): with the real record's ``Controller:`` trailers or none
FORGES = {"fseal": True, "fnoseal": False}
CHECKED = {
    "qmerge": "bob@ops.example.com",
    "qmm": "mallory@example.com",
    "qtmerge": "mallory@example.com",
    "qtbr": "bob@ops.example.com",
}


def _rows(lab: Lab) -> dict[str, Any]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {r["plan"]: r for r in json.loads(out)}


def _brief(row: dict[str, Any]) -> Any:
    return (
        row.get("status"),
        row.get("approved_by"),
        row.get("code"),
        (row.get("notes") or [])[-3:],
    )


def _forge(lab: Lab, slug: str) -> None:
    """Copy Alice's entry under ``approvals:`` as Bob's."""
    lines = lab.read(slug).split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        if lines[i].strip().startswith("approvals:"):
            ind = len(lines[i]) - len(lines[i].lstrip())
            entry: list[str] = []
            j = i + 1
            while j < len(lines) and (
                len(lines[j]) - len(lines[j].lstrip()) > ind or lines[j].lstrip().startswith("- ")
            ):
                entry.append(lines[j])
                j += 1
            out += entry + [e.replace("alice@example.com", "bob@ops.example.com") for e in entry]
            i = j
            continue
        i += 1
    lab.write(slug, "\n".join(out))


def _check(lab: Lab, head: str, who: str) -> str:
    res = lab.cli(
        "check", "--base", "main", "--head", head, "--as", who, "--format", "json",
        "--config", str(lab.config), cwd=lab.repo,
    )  # fmt: skip
    return res.stdout + res.stderr


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=POLICY)
    got: dict[str, Any] = {"check": {}}
    for slug in SLUGS:
        lab.write(
            slug, plan_text(slug, extra_actions=GATED.format(tag=slug) if slug in GATES else "")
        )
    lab.commit("agent: plans", AGENT)
    lab.run()  # P1: frozen
    # -- step A
    for slug in ALICE_FIRST:
        if slug not in GATES:
            lab.set_status(slug, "approved")
    lab.commit("alice: approve", ALICE)
    for slug in GATES:  # one commit each (the gate variants replay it)
        lab.set_status(slug, "approved")
        lab.commit(f"alice: approve {slug}", ALICE)
    for slug in [*SECOND, "gx"]:
        lab.set_status(slug, "approved")
    lab.commit("bob: approve", BOB)
    lab.set_status("qcoauth", "approved")
    lab.commit("bob: approve\n\nCo-authored-by: Carol <carol@ops.example.com>", BOB)
    for slug in ("qcherry", "qmerge", "qsquash"):
        lab.git("checkout", "-q", "-b", f"side-{slug}", "main")
        lab.set_status(slug, "approved")
        lab.commit(f"alice: approve {slug}", ALICE)
        if slug == "qsquash":
            lab.commit("carol: nothing", CAROL)
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", "side-qcherry", who=BOB)
    got["check"]["qmerge"] = _check(lab, "side-qmerge", CHECKED["qmerge"])
    lab.git("merge", "-q", "--no-ff", "-m", "merge qmerge", "side-qmerge", who=BOB)
    lab.git("merge", "-q", "--squash", "side-qsquash", who=BOB)
    lab.commit("bob: squash qsquash", BOB)
    (lab.repo / ".mailmap").write_text("Carol <carol@ops.example.com> <eve@example.com>\n")
    lab.commit("agent: mailmap", AGENT)
    lab.run()  # P2: partials
    alice_gate = {
        s: lab.git("log", "-1", "--format=%H", "--author=alice@", "--", f"plans/{s}").strip()
        for s in GATES
    }
    got["partial"] = _rows(lab)
    # -- step B
    lab.set_status("qdup", "approved")
    lab.commit("alice: again", ALICE)
    lab.set_status("qcase", "approved")
    lab.commit("alice: again", ("Alice", "ALICE@EXAMPLE.COM"))
    for slug, who in SECOND.items():
        lab.set_status(slug, "approved")
        lab.commit(f"second: {slug}", who)
    lab.set_status("qmmeve", "approved")
    lab.commit("eve: approve", EVE)
    for slug in ("qok", *GATES):
        lab.set_status(slug, "approved")
    lab.commit("bob: approve qok and the gated", BOB)
    pol = lab.repo / ".plangate" / "policy.json"
    got["policy_file"] = pol.exists()
    if pol.exists():
        doc = json.loads(pol.read_text())
        doc["approval"]["rules"] = []
        pol.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
        lab.commit("agent: policy", AGENT)
    for slug in ("qback", "qback2"):
        lab.write(slug, plan_text(slug, params='note: "v2"\n'))
    lab.commit("agent: v2", AGENT)
    _forge(lab, "qforge")
    lab.commit("agent: tidy", AGENT)
    _forge(lab, "qbot")
    lab.commit("plangate: partial plans/qbot", BOT)
    made = lab.git("log", "-1", "--format=%H", "--", "plans/qrevert/PLAN.yml").strip()
    lab.git("checkout", f"{made}^", "--", "plans/qrevert/PLAN.yml")
    lab.commit('Revert "plangate: partial plans/qrevert"', AGENT)
    lab.set_status("qrej", "rejected")
    lab.commit("mallory: reject", MALLORY)
    lab.set_status("qfrank", "rejected")
    lab.commit("frank: reject", FRANK)
    lab.git("mv", "plans/qmvout", "plans/zmvout")
    lab.git("mv", "plans/qmv2", "plans/qmv2b")
    lab.commit("agent: move", AGENT)
    lab.set_status("qrejauth", "rejected")
    lab.commit("agent: reject", AGENT)
    lab.git("checkout", "-q", "-b", "side-qmm", "main")
    lab.set_status("qmm", "approved")
    lab.commit("bob: approve qmm", BOB)
    lab.git("checkout", "-q", "main")
    got["check"]["qmm"] = _check(lab, "side-qmm", CHECKED["qmm"])
    lab.git("merge", "-q", "--no-ff", "-m", "merge qmm", "side-qmm", who=MALLORY)
    lab.run()  # P3: the gated plans pause
    got["paused"] = _rows(lab)
    lab.write_config(approval=POLICY2)
    # -- step C: the gates
    lab.set_status("qtbob", "approved")
    lab.commit("bob: gate", BOB)
    lab.set_status("qtauth", "approved")
    lab.commit("agent: gate", AGENT)
    lab.set_status("qtfrank", "approved")
    lab.commit("frank: gate", FRANK)
    lab.git("checkout", "-q", "-b", "side-qtmerge", "main")
    lab.set_status("qtmerge", "approved")
    lab.commit("alice: gate on a branch", ALICE)
    lab.git("checkout", "-q", "main")
    got["check"]["qtmerge"] = _check(lab, "side-qtmerge", CHECKED["qtmerge"])
    lab.git("merge", "-q", "--no-ff", "-m", "merge qtmerge", "side-qtmerge", who=MALLORY)
    lab.git("checkout", "-q", "-b", "side-qtbr", "main")
    lab.set_status("qtbr", "approved")
    lab.commit("alice: gate on a branch", ALICE)
    lab.git("checkout", "-q", "main")
    got["check"]["qtbr"] = _check(lab, "side-qtbr", CHECKED["qtbr"])
    lab.git("merge", "-q", "--no-ff", "-m", "merge qtbr", "side-qtbr", who=BOB)
    lab.git("cherry-pick", "--strategy-option=theirs", alice_gate["qtpick"], who=AGENT)
    lab.set_status("qtreuse", "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-C", alice_gate["qtreuse"], who=AGENT)
    lab.set_status("qz", "approved")
    lab.set_status("gx", "approved")
    lab.commit("carol: approve", CAROL)
    for slug in ("qforge", "qbot", "qback2", "qy", "qpol"):
        lab.set_status(slug, "approved")
    lab.commit("alice: approve", ALICE)
    lab.set_status("qmv2b", "approved")
    lab.commit("alice: approve qmv2b", ALICE)
    for slug in ("qrej", "qrejauth", "qfrank"):
        lab.set_status(slug, "approved")
    lab.commit("bob: approve", BOB)
    lab.run()  # P4
    for slug in ("qback", "qback2"):
        lab.write(slug, plan_text(slug))
    lab.commit("agent: v1 back", AGENT)
    lab.run()  # P5
    for slug in ("qback", "qback2"):
        lab.set_status(slug, "approved")
    lab.commit("bob: approve v1", BOB)
    lab.run()  # P6
    lab.run()  # P7
    got["calls"] = {s: len(lab.calls(s)) for s in SLUGS}
    moved = {"qmvout": "zmvout", "qmv2": "qmv2b"}
    got["rows"] = _rows(lab)
    for slug, dest in moved.items():
        got["rows"][f"plans/{slug}"] = got["rows"].get(f"plans/{dest}", {})
    got["gated"] = {s: len(lab.calls(f"{s}-gated")) for s in GATES}
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    for slug, dest in moved.items():
        if f"plans/{dest}" in valid:
            got["valid"].append(f"plans/{slug}")
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _forge_lab(root: Path, seal: bool) -> dict[str, Any]:
    """A forged ``plangate: record policy`` under the controller's name (author and
    committer) naming approvers nobody has, then Alice's approval under the real policy."""
    lab = Lab(root)
    lab.write("fa", plan_text("fa"))
    lab.commit("agent: plan", AGENT)
    lab.run()  # freeze, the first record
    real = lab.git("log", "-1", "--format=%B", "--grep=record policy").strip()
    pol = lab.repo / ".plangate" / "policy.json"
    doc = json.loads(pol.read_text())
    doc["approval"]["approvers"] = ["nobody@example.com"]
    data = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    pol.write_bytes(data.encode())
    digest = hashlib.sha256(data.encode()).hexdigest()
    body = (
        "plangate: record policy\n\nThe controller's effective policy: approval.approvers\n\n"
        f"Policy-Hash: sha256:{digest}\n"
    )
    if seal:
        body += "".join(f"{line}\n" for line in real.splitlines() if line.startswith("Controller"))
    lab.commit(body, BOT)
    lab.approve("fa", ALICE)
    lab.run()
    lab.run()
    _report, valid = clone_audit(lab, root)
    return {"calls": len(lab.calls("fa")), "valid": sorted(valid), "rows": _rows(lab)}


def _time_lab(root: Path) -> dict[str, Any]:
    """``max_age: 3600``: Alice's approvals with dates moved (author, committer) by seconds."""
    log = json.dumps(str(root / "ran.log"))
    rec = json.dumps([sys.executable, str(root / "rec.py"), "{tag}"])
    lab = Lab(
        root,
        approval="max_age: 3600\n" + RISK_RULES,
        tools=(
            f"hot: {{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}, risk: high}}\n"
            f"hot2: {{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}}}\n"
        ),
    )
    for slug in DATES:
        lab.write(slug, plan_text(slug))
    for slug, tool in FALLBACKS.items():
        lab.write(slug, FALLBACK.format(t=slug, tool=tool))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for slug in FALLBACKS:
        lab.set_status(slug, "approved")
    lab.commit("alice: approve the fallback plans", ALICE)
    now = int(time.time())
    for slug, (author, committer) in DATES.items():
        lab.set_status(slug, "approved")
        lab.git("add", "-A")
        lab.extra_env = {  # type: ignore[attr-defined]
            "GIT_AUTHOR_DATE": f"@{now + author} +0000",
            "GIT_COMMITTER_DATE": f"@{now + committer} +0000",
        }
        try:
            lab.git("commit", "-q", "-m", f"alice: approve {slug}", who=ALICE)
        finally:
            lab.extra_env = {}  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    _report, valid = clone_audit(lab, root)
    calls = {s: len(lab.calls(s)) for s in [*DATES, *FALLBACKS]}
    return {"calls": calls, "valid": sorted(valid), "rows": _rows(lab)}


def _tool_lab(root: Path) -> dict[str, Any]:
    """``{tools: [hot2]}`` needs two approvals; the fresh clone's audit with no config."""
    log = json.dumps(str(root / "ran.log"))
    rec = json.dumps([sys.executable, str(root / "rec.py"), "{tag}"])
    lab = Lab(
        root,
        approval=TOOL_RULES,
        tools=f"hot2: {{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}}}\n",
    )
    lab.write("ua", plan_text("ua"))
    lab.write(
        "ub", plan_text("ub").replace("name: rec", "name: hot2").replace("tool: rec", "tool: hot2")
    )
    lab.write("xtfb", FALLBACK.format(t="xtfb", tool="hot2"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for slug in TOOLRULE_RUNS:
        lab.set_status(slug, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    lab.set_status("ub", "approved")
    lab.commit("bob: approve ub", BOB)
    lab.run()
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    try:
        report = json.loads(res.stdout)
    except ValueError:
        report = {"raw": res.stdout}
    valid = sorted({e["plan"] for e in report.get("executions", []) if e.get("approval_valid")})
    calls = {s: len(lab.calls(s)) for s in TOOLRULE_RUNS}
    return {
        "calls": calls,
        "valid": valid,
        "audit": report,
        "rc": res.returncode,
        "rows": _rows(lab),
    }


def _build_all(root: Path) -> Lab:
    """The main lab here, the small labs meanwhile in one thread (each its own folders)."""

    def small() -> dict[str, Any]:
        out = {"tool": _tool_lab(root / "toolrule"), "time": _time_lab(root / "time")}
        out["forge"] = {name: _forge_lab(root / name, seal) for name, seal in FORGES.items()}
        return out

    with ThreadPoolExecutor(max_workers=1) as pool:
        others = pool.submit(small)
        lab = _build(root / "main")
        lab.got.update(others.result())  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r89-approve-atk89a", _build_all)


IDS = (
    [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")]
    + [f"{s}:check" for s in CHECKED]
    + [f"{s}:gate" for s in GATES]
    + [f"{s}:paused" for s in GATES]
    + [f"{s}:{w}" for s in FORGES for w in ("ran", "audit")]
    + [f"{s}:{w}" for s in [*DATES, *FALLBACKS] for w in ("ran", "audit")]
    + [f"{s}:{w}" for s in TOOLRULE_RUNS for w in ("ran", "audit")]
)
_T = (
    "recorded tools rule",
    "a fresh clone's audit finds no recorded policy when it holds a {tools: [...]} rule",
)
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round89_atk89a(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.rsplit(":", 1)
    plan = f"plans/{slug}"
    row = got["rows"].get(plan, {})
    if slug in TOOLRULE_RUNS:
        tl = got["tool"]
        if what == "ran":
            assert tl["calls"][slug] == TOOLRULE_RUNS[slug], (tl["calls"], _brief(tl["rows"][plan]))
        else:
            assert tl["audit"].get("ok") is not False, (tl["rc"], str(tl["audit"])[:400])
            assert (plan in tl["valid"]) == (tl["calls"][slug] > 0), (tl["valid"], tl["calls"])
        return
    if slug in DATES or slug in FALLBACKS:
        tl = got["time"]
        if what == "ran":
            assert tl["calls"][slug] == TIME_RUNS.get(slug, 0), (
                tl["calls"],
                _brief(tl["rows"][plan]),
            )
        else:
            assert (plan in tl["valid"]) == (tl["calls"][slug] > 0), (tl["valid"], tl["calls"])
        return
    if slug in FORGES:  # Alice's approval under the real policy ran; the audit agrees
        forge = got["forge"][slug]
        if what == "ran":
            assert forge["calls"] == 1, forge
        else:
            assert forge["valid"] == ["plans/fa"], forge
        return
    if what == "paused":  # the gate was reached (the attack is no vacuous one)
        assert got["paused"][plan].get("status") == "awaiting_approval", _brief(got["paused"][plan])
        return
    if what == "gate":
        assert got["gated"][slug] == GATE_RUNS.get(slug, 0), (got["gated"][slug], _brief(row))
        return
    if what == "check":
        out = got["check"][slug]
        started = (got["gated"] if slug in GATES else got["calls"])[slug] > 0
        assert predicts_start(out) == started, out[-1500:]
        return
    if what == "audit":
        ran = sorted(f"plans/{s}" for s, n in got["calls"].items() if n)
        assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], ran)
        assert (plan in got["valid"]) == (slug in RUNS), (plan, got["valid"])
        return
    assert got["calls"][slug] == RUNS.get(slug, 0), (got["calls"][slug], _brief(row))


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk89a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r89a-", dir="/tmp/atk89a"))
    got = _build_all(out).got  # type: ignore[attr-defined]
    got["tool"]["rows"] = {p: _brief(r) for p, r in got["tool"]["rows"].items()}
    got["time"]["rows"] = {p: _brief(r) for p, r in got["time"]["rows"].items()}
    for f in got["forge"].values():
        f["rows"] = {p: _brief(r) for p, r in f["rows"].items()}
    for key in ("partial", "rows", "paused"):
        got[key] = {p: _brief(r) for p, r in got[key].items()}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
