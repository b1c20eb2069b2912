"""Round 129, policy and audit (atk129p): the policy the controller decides by is its
config's, never a file in the plans repo; the fresh-clone audit (no config), ``audit
--config`` and ``check`` reach the controller's verdicts; every change of
``.plangate/policy.json`` the controller did not make is flagged, naming who made it.

Aimed at what the threat model does not list: a ``plangate.yml`` the agent commits at the
root of the plans repo (read as ``./plangate.yml`` by ``check`` in a CI checkout and by the
auditor's ``plangate audit`` in a fresh clone), the recorded policy changed through merged
pull requests (edited, deleted, a symlink to a forged file, ``.plangate`` a symlink to a
forged folder, a mode flip in an approval, a revert), ``.gitattributes`` on the record
(``eol=crlf``, ``working-tree-encoding=UTF-16LE-BOM``, ``ident``, ``* text``) before a
record, votes collected under one quorum/risk policy when the config loosens or tightens it,
clones of other shapes (blobless, treeless with the remote gone, no checkout, bare, mirror,
a linked worktree at an old commit, ``--shallow-since``) and ``audit --controller`` values.

Labs (``build_all``, local mode, ``run --once``; every id asserts the defence):

- ``q``: rules ``{risk: high} -> 2`` and ``paths plans/q* -> 2``; tools ``hr`` (medium),
  ``hx`` (high), ``hn`` (low). Alice votes ``q1``, ``x1``, ``q2`` (partial under C0); Alice
  approves ``h1`` on a branch; C1: the ``q*`` rule needs 1, ``hr`` high, ``hx`` low;
  ``check --as alice``; merge; pass (nothing starts: a loosened quorum waits for the next
  decision, docs/approvals.md "Judged again"; ``h1`` partial); Bob approves ``h1``, ``n1``
  (``check --as bob``); Alice again on ``q1``/``x1``, Bob on ``q2`` (``check``): all start.
  Ids ``q_*``: partial, checks, ran once, ``audit:<plain|config|single>:<plan>``, clean
  audits, ``audit --controller <value>`` (the address in any case, empty or padded: the plain
  verdicts; anything else: ``E_CONFIG_INVALID`` exit 2, no execution), clone shapes.
- ``pr``: plans ``m1`` (Mallory approves on the agent's branch that adds her to
  ``policy.json``; Alice merges, so Alice's merge approves), ``d1`` (the agent deletes
  ``policy.json`` on a branch, Alice approves and merges), ``s1`` (``policy.json`` a symlink
  to a forged file; Mallory approves; the agent merges), ``s2`` (``.plangate`` a symlink to a
  forged folder; same), ``e1`` (Alice's approval also flips the file's mode), ``g1`` (after
  the agent's ``.gitattributes`` ``-text -diff merge=ours`` on it), ``r1`` (after the agent's
  forged edit and Alice's revert). Ids ``pr_*``: ran, refused, ``check``, the record restored
  as a plain file, ``audit:<kind>:<plan>``, every change flagged, the maker named.
- ``cfa``/``cfi``: the agent's branch commits ``plangate.yml`` (``repo: .``, ``state_dir:
  .st``, Mallory an approver; ``cfi``: ``identity.email`` the agent's) and Mallory approves
  ``k1``; CI: ``check`` at the pull request's root, no ``--config``; a fresh clone's audit at
  its root (``pr``), after the agent's merge (``merged``), in a subfolder, ``--config``.
- ``cff``: as ``cfi`` on main, then the agent (its own name) commits a seal-shaped
  ``plangate: record policy`` with Mallory an approver, Mallory approves ``k1``, the agent
  commits a seal-shaped ``start`` and ``complete`` of ``k1`` (the log copied from ``k2``).
- ``age``: ``a1`` approved 10 minutes (by the lab's dates) after its freeze and run with no
  ``max_age``; then ``max_age: 30m`` (``a2``, ``a3`` on a branch with ``check``: refused
  ``E_PLAN_EXPIRED``; ``a4`` frozen and approved now: runs); then ``max_age`` lifted. Ids
  ``age_*``: ran, codes, ``check``, ``audit:<kind>:<plan>`` (no verdict on the past moves).
- ``ga-<crlf|utf16|ident|star>``: the agent's ``.gitattributes`` on the record, then a
  config change (a record under it), approvals, runs.

Seen (round 129: 172 ids, 156 passed, 16 xfailed (strict); 51-91 s wall at ``-n 2`` under
a load of 14-18; the labs are built once for both workers)

Classes:

- ``in-tree-config-read-by-check-and-audit`` (10 ids: ``cfg_check_predicts[cfa,cfi]``,
  ``cfg_audit_verdicts[cfi:pr,cfi:merged]``, ``cfa_audit_no_foreign_config[pr,merged]``,
  ``cff_audit[root:k1,root:k2]``; fail open: a forged run listed valid, a CI prediction of
  ``start`` the controller refuses). The controller refuses a config inside the watched tree
  (docs/configuration.md "Out of the agent's reach": the config is read "never from a plan
  or from the repository's history"), but ``check`` and ``audit`` without ``--config`` take
  ``./plangate.yml`` from the current folder: in a CI checkout of the agent's pull request,
  or in a fresh clone of main after it is merged, that is the agent's file. ``check`` then
  predicts ``start`` for Mallory's approval (the controller refuses
  ``E_APPROVER_NOT_ALLOWED``); the audit notes "today's config differs ... (the controller
  records it on its next pass)"; with the agent's address as ``identity``, the fresh-clone
  audit reads the agent as the controller: the controller's real run of ``k2`` is no
  execution, its commits are flagged ``illegal``/``owned-block-changed``/``log-changed``,
  and the agent's seal-shaped forged run of ``k1`` (Mallory) is ``approval_valid: true``.
  In a subfolder of the same clone the audit says ``E_CONFIG_INVALID`` (two identities, pass
  ``--controller``): the in-tree file made that choice for the auditor. Repro: a running
  controller (config outside the repo); the agent commits ``plangate.yml`` (a copy of the
  config with ``repo: .``, ``state_dir: .st``, ``mallory@example.com`` added); Mallory
  commits ``status: approved`` on plan ``k1``; ``git clone``; ``cd clone; plangate check
  --base main --head HEAD --as mallory@example.com --format json``: ``k1`` outcome
  ``start``; ``plangate run --once`` on the host: refused. Expected: a config inside the
  repository is never the controller's (refused, or ignored for the lookup, as
  ``plangate run`` refuses it), and "``plangate audit`` on a fresh clone with no config
  reaches the same verdicts as the controller did".
- ``merged-policy-edit-blamed-on-merger`` (6 ids: ``pr_audit_names_the_maker[*:feat]``,
  ``[*:del]``; attribution): the agent's edit (and deletion) of ``policy.json`` on a branch
  Alice merges is flagged ``policy-changed`` on the merge commit as "alice@example.com
  changed (deleted) .plangate/policy.json"; the agent who made it is not named. A decision
  a merge brings is judged as its author's (docs/approvals.md: "Alice's [rejection], merged
  by anyone, counts as hers and flags nobody"), and round 128 asserted the maker named.
  Repro: the agent's branch edits ``.plangate/policy.json``; ``git merge --no-ff`` by
  Alice; ``plangate audit --json`` in a fresh clone.
- ``audit-refuses-bare-clone`` (2 ids: ``q_audit_clone_shapes[bare,mirror]``; fail
  closed): ``plangate audit`` in a ``git clone --bare`` or ``--mirror`` (the whole history)
  is ``E_GIT`` "git reads the repository ... as bare (core.bare = true), so it has no working
  tree to commit in"; the audit commits nothing. Expected: the README's "a fresh clone is
  enough"; every other shape (blobless, treeless, remote gone, no checkout) audits.

Held: ``max_age`` set after a run and lifted again (the run stays valid in every audit, the
refusals predicted); quorum and risk changed between votes and passes (a loosened quorum
waits for the next decision, then counts the votes collected; ``check`` predicted every
outcome; every audit agrees); ``policy.json`` edited, deleted, a symlink, ``.plangate`` a
symlinked folder (the controller refuses Mallory, records its policy again as a plain file;
every change flagged); a mode flip or a revert in an approval (flagged, the run valid);
``.gitattributes`` on the record (records and ``Policy-Hash:`` unchanged, audits clean);
``audit --controller`` with other values (coded ``E_CONFIG_INVALID``); ``--shallow-since``
(``E_GIT`` naming the shallow history); a linked worktree at an old commit audits ``main``.

Seen, not asserted: ``plans/** working-tree-encoding=UTF-16LE-BOM`` committed by the agent
makes the controller read the frozen ``g0`` as unreadable (``E_SCHEMA_INVALID``, the
approval never runs) and the audit flags the agent's attributes commit
``owned-block-changed`` (a plan-side denial, not this side's); after the controller
restored ``.plangate`` from a symlink, the lab's working tree kept the symlink and its index
the restored file (``git status``: ``A .plangate``, ``D .plangate/policy.json``).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import advkit
import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, build_all, plan_text

REC = "{kind: exec, argv: %s, env: {REC_LOG: %s}%s}"


def tool_line(lab: Lab, name: str, risk: str) -> str:
    argv = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    return f"{name}: " + REC % (argv, json.dumps(str(lab.log)), f", risk: {risk}") + "\n"


def tplan(slug: str, tool: str = "rec") -> str:
    return (
        plan_text(slug).replace("name: rec", f"name: {tool}").replace("tool: rec", f"tool: {tool}")
    )


def audit_at(lab: Lab, cwd: Path, *args: str) -> dict[str, Any]:
    out = lab.cli("audit", "--json", *args, cwd=cwd)
    try:
        rep = json.loads(out.stdout)
    except ValueError:
        rep = {"raw": out.stdout[-600:]}
    if not isinstance(rep, dict):
        rep = {"raw": str(rep)[-600:]}
    return {"rc": out.returncode, "report": rep, "err": out.stderr[-1500:]}


def clone_to(lab: Lab, dest: Path, *opts: str) -> Path:
    lab.git("clone", "-q", *opts, f"file://{lab.repo}", str(dest))
    return dest


def audits(lab: Lab, root: Path) -> dict[str, Any]:
    return {
        "plain": audit_at(lab, clone_to(lab, root / "plain")),
        "config": audit_at(lab, lab.repo, "--config", str(lab.config)),
        "single": audit_at(lab, clone_to(lab, root / "single", "--single-branch", "--no-tags")),
    }


def starts(lab: Lab) -> list[tuple[str, str, str | None]]:
    rows = lab.git(
        "log",
        "--format=%H%x00%(trailers:key=Policy-Hash,valueonly,separator=%x2C)",
        "--grep=^plangate: start ",
        "main",
    )
    out = []
    for line in rows.splitlines():
        if "\0" not in line:
            continue
        commit, trailer = line.split("\0", 1)
        data = subprocess.run(
            ["git", "show", f"{commit}:.plangate/policy.json"],
            cwd=lab.repo,
            env=lab.env(),
            capture_output=True,
            check=False,
        ).stdout
        tree = "sha256:" + hashlib.sha256(data).hexdigest() if data else None
        out.append((commit, trailer.strip(), tree))
    return out


# -- lab q: quorum and risk changed between a partial vote and the next pass --------------

Q_PLANS = {"q1": "rec", "x1": "hx", "h1": "hr", "q2": "rec", "n1": "hn"}


def q_config(lab: Lab, count: int, hr: str, hx: str, hn: str = "low") -> None:
    lab.write_config(
        approval=(
            "rules:\n"
            "  - match: {risk: high}\n    require: [{count: 2}]\n"
            f'  - match: {{paths: ["plans/q*"]}}\n    require: [{{count: {count}}}]\n'
        ),
        tools=tool_line(lab, "hr", hr) + tool_line(lab, "hx", hx) + tool_line(lab, "hn", hn),
    )


def q_build(root: Path) -> dict[str, Any]:
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": []}
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"

    def run(tag: str) -> None:
        res = lab.run(check=False)
        got["passes"].append((tag, res.returncode, res.stderr[-400:] if res.returncode else ""))

    q_config(lab, 2, "medium", "high")
    for slug, tool in Q_PLANS.items():
        lab.write(slug, tplan(slug, tool))
    lab.commit("agent: plans", AGENT)
    run("a")
    lab.git_date = f"@{t0 + 60} +0000"
    lab.approve("q1", ALICE)
    lab.approve("x1", ALICE)
    lab.approve("q2", ALICE)
    run("b")
    got["partial"] = {s: (lab.plan(s).get("approval") or {}).get("status") for s in Q_PLANS}
    lab.git_date = f"@{t0 + 120} +0000"
    lab.branch("ha")
    lab.approve("h1", ALICE)
    lab.git("checkout", "-q", "main")
    # the operator: the q rule needs one, hr becomes high, hx low
    q_config(lab, 1, "high", "low")
    got["check_a"] = lab.check_plans("ha", ALICE[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge ha", "ha", who=ALICE)
    lab.git_date = f"@{t0 + 180} +0000"
    run("c")
    got["ran_c"] = {s: len(lab.calls(s)) for s in Q_PLANS}
    got["codes_c"] = {s: (lab.plan(s).get("approval") or {}) for s in Q_PLANS}
    lab.git_date = f"@{t0 + 240} +0000"
    lab.branch("hb")
    lab.approve("h1", BOB)
    lab.approve("n1", BOB)
    lab.git("checkout", "-q", "main")
    got["check_b"] = lab.check_plans("hb", BOB[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge hb", "hb", who=BOB)
    lab.git_date = f"@{t0 + 300} +0000"
    run("d")
    got["ran_d"] = {s: len(lab.calls(s)) for s in Q_PLANS}
    # the loosened quorum is met by votes collected under C0 once a next approval is decided:
    # Alice again on q1 and x1 (the same person again), Bob on q2
    lab.git_date = f"@{t0 + 360} +0000"
    lab.branch("again")
    lab.approve("q1", ALICE)
    lab.approve("x1", ALICE)
    lab.git("checkout", "-q", "main")
    got["check_e"] = lab.check_plans("again", ALICE[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge again", "again", who=ALICE)
    lab.branch("bq")
    lab.approve("q2", BOB)
    lab.git("checkout", "-q", "main")
    got["check_f"] = lab.check_plans("bq", BOB[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge bq", "bq", who=BOB)
    lab.git_date = f"@{t0 + 420} +0000"
    run("e")
    got["ran"] = {s: len(lab.calls(s)) for s in Q_PLANS}
    got["codes"] = {s: (lab.plan(s).get("approval") or {}).get("status") for s in Q_PLANS}
    got["starts"] = starts(lab)
    got["audit"] = audits(lab, root)
    plain = root / "plain"
    got["shapes"] = clone_shapes(lab, root)
    got["ctl"] = {name: audit_at(lab, plain, "--controller", value) for name, value in CTL.items()}
    return got


CTL = {
    "right": "plangate@localhost",
    "upper": "PLANGATE@LOCALHOST",
    "mallory": MALLORY[1],
    "agent": AGENT[1],
    "alice": ALICE[1],
    "empty": "",
    "named": "plangate <plangate@localhost>",
    "spaced": " plangate@localhost ",
    "glob": "*@localhost",
    "nodomain": "plangate",
}


def clone_shapes(lab: Lab, root: Path) -> dict[str, Any]:
    """The fresh-clone audit from clones of other shapes (and other places in one)."""
    out: dict[str, Any] = {}
    out["blobless"] = audit_at(lab, clone_to(lab, root / "bl", "--filter=blob:none"))
    out["treeless"] = audit_at(lab, clone_to(lab, root / "tl", "--filter=tree:0"))
    gone = clone_to(lab, root / "blg", "--filter=blob:none", "--no-checkout")
    lab.git("-C", str(gone), "remote", "set-url", "origin", f"file://{root}/gone")
    out["blobless-gone"] = audit_at(lab, gone)
    out["no-checkout"] = audit_at(lab, clone_to(lab, root / "nc", "--no-checkout"))
    out["subdir"] = audit_at(lab, root / "plain" / "plans")
    lab.git("-C", str(root / "plain"), "worktree", "add", "-q", str(root / "wt"), "HEAD~3")
    out["worktree-old"] = audit_at(lab, root / "wt")
    lab.git("clone", "-q", "--bare", str(lab.repo), str(root / "bare.git"))
    out["bare"] = audit_at(lab, root / "bare.git")
    lab.git("clone", "-q", "--mirror", str(lab.repo), str(root / "mirror.git"))
    out["mirror"] = audit_at(lab, root / "mirror.git")
    since = int(lab.git("log", "-1", "--format=%ct", "main~2").strip())
    out["shallow-since"] = audit_at(lab, clone_to(lab, root / "ss", f"--shallow-since=@{since}"))
    return out


# -- lab cfg: a plangate.yml the agent commits at the root of the plans repo ----------------

CFG_LABS = {"cfa": "approvers", "cfi": "identity"}


def cfg_build(root: Path, name: str) -> dict[str, Any]:
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": []}
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"

    def run(tag: str) -> None:
        res = lab.run(check=False)
        got["passes"].append((tag, res.returncode, res.stderr[-400:] if res.returncode else ""))

    for slug in ("k1", "k2", "k3"):
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    run("a")
    lab.git_date = f"@{t0 + 60} +0000"
    lab.approve("k2", ALICE)
    run("b")
    # the agent's own config, relative paths as configuration.md allows, Mallory an approver
    # (and, lab cfi, the agent the controller identity)
    cfg = (
        lab.config.read_text()
        .replace(f"repo: {lab.repo}", "repo: .")
        .replace(f"state_dir: {lab.state}", "state_dir: .st")
        .replace('"alice@example.com"', '"alice@example.com", "mallory@example.com"')
    )
    if name == "cfi":
        cfg = cfg.replace("email: plangate@localhost", f"email: {AGENT[1]}")
    lab.branch("evil")
    lab.put("plangate.yml", cfg)
    lab.commit("agent: config", AGENT)
    lab.approve("k1", MALLORY)
    lab.git("checkout", "-q", "main")
    # CI: the pull request checked out, `plangate check` at its root (no --config)
    ci = clone_to(lab, root / "ci")
    lab.git("-C", str(ci), "fetch", "-q", "origin", "evil:evil")
    lab.git("-C", str(ci), "checkout", "-q", "evil")
    told = lab.cli(
        "check", "--base", "main", "--head", "evil", "--as", MALLORY[1], "--format", "json",
        cwd=ci,
    )  # fmt: skip
    try:
        plans = json.loads(told.stdout).get("plans", [])
        got["check"] = {
            p["plan"]: [p.get("outcome"), [r.get("code") for r in p.get("refused") or []]]
            for p in plans
        }
    except (ValueError, AttributeError):
        got["check"] = {"raw": told.stdout[-400:] + told.stderr[-400:]}
    got["check_rc"] = told.returncode
    got["audit_pr"] = audit_at(lab, ci)
    lab.git("merge", "-q", "--no-ff", "-m", "merge evil", "evil", who=AGENT)
    lab.git_date = f"@{t0 + 120} +0000"
    run("c")
    got["ran"] = {s: len(lab.calls(s)) for s in ("k1", "k2", "k3")}
    got["code"] = lab.refusal("k1")
    got["audit"] = {
        "merged": audit_at(lab, clone_to(lab, root / "plain")),
        "subdir": audit_at(lab, root / "plain" / "plans"),
        "config": audit_at(lab, lab.repo, "--config", str(lab.config)),
    }
    return got


def canon(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def forged(lab: Lab, message: str, trailers: str, n: int) -> str:
    """A commit by the agent shaped as the controller's (a seal of the right shape)."""
    seal = hashlib.sha256(f"{lab.root}{n}".encode()).hexdigest()
    lab.git("add", "-A")
    body = f"{message}\n\n{trailers}Controller: vm/cd077ed3/5b87fb116ee84965\n"
    lab.git("commit", "-q", "-m", body + f"Controller-Seal: {seal}", who=AGENT)
    return lab.head()


def cff_build(root: Path) -> dict[str, Any]:
    """The agent commits a plangate.yml naming itself the controller, then (under its own
    name, seal-shaped) a policy record with Mallory an approver and a whole run of k1 that
    Mallory approved: start and complete, the log copied from k2's real run."""
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": []}
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"
    for slug in ("k1", "k2"):
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.git_date = f"@{t0 + 60} +0000"
    lab.approve("k2", ALICE)
    lab.run()
    cfg = (
        lab.config.read_text()
        .replace(f"repo: {lab.repo}", "repo: .")
        .replace(f"state_dir: {lab.state}", "state_dir: .st")
        .replace('"alice@example.com"', '"alice@example.com", "mallory@example.com"')
        .replace("email: plangate@localhost", f"email: {AGENT[1]}")
    )
    lab.put("plangate.yml", cfg)
    lab.commit("agent: config", AGENT)
    raw = (lab.repo / ".plangate/policy.json").read_bytes()
    pol = json.loads(raw)
    pol["identity"]["email"] = AGENT[1]
    pol["approval"]["approvers"].append(MALLORY[1])
    new = canon(pol) + (b"\n" if raw.endswith(b"\n") else b"")
    lab.put(".plangate/policy.json", new)
    ph = "sha256:" + hashlib.sha256(new).hexdigest()
    forged(lab, "plangate: record policy", f"Policy-Hash: {ph}\n", 1)
    appr = lab.approve("k1", MALLORY)
    fh = lab.plan("k1")["frozen"]["hash"]
    text = lab.read("k1").replace("status: approved", "status: executing")
    text += (
        f"approval:\n  status: approved\n  by: {MALLORY[1]}\n  at: '2026-12-07T21:35:43Z'\n"
        f"  commit: {appr}\n  plan_hash: {fh}\n  signature: null\n"
    )
    lab.write("k1", text)
    tr = (
        f"Plan: plans/k1\nPlan-Hash: {fh}\nPlan-Status: executing\n"
        f"Approved-By: {MALLORY[1]}\nApproval-Commit: {appr}\n"
    )
    forged(lab, "plangate: start plans/k1", tr + f"Policy-Hash: {ph}\n", 2)
    text = text.replace("status: executing", "status: completed") + (
        "execution:\n  status: completed\n  controller: plangate@vm\n"
        "  started_at: '2026-12-07T23:34:47Z'\n  finished_at: '2026-12-07T23:34:47Z'\n"
        "  actions:\n  - id: 1\n    key: step:4aa2d41a75198849\n    status: succeeded\n"
        "    attempts: 1\n    started_at: '2026-12-07T23:34:47Z'\n    duration_ms: 180\n"
        "    outputs: {}\n"
    )
    lab.write("k1", text)
    log = lab.git("show", "HEAD:plans/k2/EXECUTION_LOG.md").replace("k2", "k1")
    lab.put("plans/k1/EXECUTION_LOG.md", log)
    forged(lab, "plangate: complete plans/k1", tr.replace("executing", "completed"), 3)
    clone = clone_to(lab, root / "plain")
    got["audit"] = {
        "root": audit_at(lab, clone),
        "subdir": audit_at(lab, clone / "plans"),
        "config": audit_at(lab, lab.repo, "--config", str(lab.config)),
    }
    lab.git_date = f"@{t0 + 120} +0000"
    res = lab.run(check=False)
    got["passes"].append(("c", res.returncode, res.stderr[-400:] if res.returncode else ""))
    got["ran"] = {s: len(lab.calls(s)) for s in ("k1", "k2")}
    return got


# -- lab age: approval.max_age set after a run, then lifted --------------------------------

AGE_PLANS = ["a1", "a2", "a3", "a4"]


def age_build(root: Path) -> dict[str, Any]:
    """``a1`` approved 10 minutes after its freeze and run with no ``max_age``; then
    ``max_age: 30m``: ``a2`` (approved in the push with the change) and ``a3`` (on a branch,
    ``check --as alice``), frozen two hours ago by the lab's dates, are refused
    ``E_PLAN_EXPIRED``; ``a4``, frozen and approved now, runs. ``max_age`` lifted again: no
    verdict on the past changes."""
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": [], "check": {}}
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"

    def run(tag: str) -> None:
        res = lab.run(check=False)
        got["passes"].append((tag, res.returncode, res.stderr[-400:] if res.returncode else ""))

    for slug in ("a1", "a2", "a3"):
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    run("a")
    lab.git_date = f"@{t0 + 600} +0000"
    lab.approve("a1", ALICE)
    run("b")
    lab.write_config(approval="max_age: 30m\n")
    lab.approve("a2", ALICE)
    lab.branch("late")
    lab.approve("a3", ALICE)
    lab.git("checkout", "-q", "main")
    got["check"]["a3"] = lab.check_plans("late", ALICE[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge late", "late", who=ALICE)
    # a4 from now on the clock (the controller measures max_age by its own clock)
    lab.git_date = None
    lab.write("a4", plan_text("a4"))
    lab.commit("agent: a4", AGENT)
    run("c")
    lab.branch("quick")
    lab.approve("a4", ALICE)
    lab.git("checkout", "-q", "main")
    got["check"]["a4"] = lab.check_plans("quick", ALICE[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge quick", "quick", who=ALICE)
    run("d")
    got["codes"] = {s: lab.refusal(s) for s in AGE_PLANS}
    lab.write_config()
    run("e")
    got["ran"] = {s: len(lab.calls(s)) for s in AGE_PLANS}
    got["starts"] = starts(lab)
    got["audit"] = audits(lab, root)
    return got


# -- lab ga: .gitattributes on .plangate/policy.json before a record -------------------------

ATTRS = {
    "crlf": ".plangate/policy.json text eol=crlf\n",
    "utf16": ".plangate/policy.json working-tree-encoding=UTF-16LE-BOM\n",
    "ident": ".plangate/policy.json ident\n",
    "star": "* text eol=crlf\n",
}


def ga_build(root: Path, name: str) -> dict[str, Any]:
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": []}
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"

    def run(tag: str) -> None:
        res = lab.run(check=False)
        got["passes"].append((tag, res.returncode, res.stderr[-400:] if res.returncode else ""))

    lab.write("g0", plan_text("g0"))
    lab.commit("agent: g0", AGENT)
    run("a")
    lab.put(".gitattributes", ATTRS[name])
    lab.write("g1", plan_text("g1"))
    lab.commit("agent: attributes", AGENT, ".gitattributes", "plans")
    lab.write_config(approval="groups: {x: [bob@ops.example.com]}\n")
    run("b")
    lab.git_date = f"@{t0 + 60} +0000"
    lab.approve("g0", ALICE)
    lab.approve("g1", ALICE)
    run("c")
    got["records"] = lab.git(
        "log", "--format=%H", "--grep=^plangate: record policy", "main"
    ).split()
    got["ran"] = {s: len(lab.calls(s)) for s in ("g0", "g1")}
    got["starts"] = starts(lab)
    got["audit"] = audits(lab, root)
    return got


# -- lab pr: .plangate/ changed by merges, deletions, symlinks, a folder, a mode ------------

PR_PLANS = ["m1", "d1", "s1", "s2", "e1", "g1", "r1"]


def pr_build(root: Path) -> dict[str, Any]:
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": [], "check": {}, "forged": {}, "merges": {}}
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"

    def run(tag: str) -> None:
        res = lab.run(check=False)
        got["passes"].append((tag, res.returncode, res.stderr[-400:] if res.returncode else ""))

    for slug in PR_PLANS:
        lab.write(slug, tplan(slug))
    lab.commit("agent: plans", AGENT)
    run("a")
    honest = json.loads((lab.repo / ".plangate/policy.json").read_text())
    evil = json.loads(json.dumps(honest))
    evil["approval"]["approvers"].append(MALLORY[1])
    evil_text = json.dumps(evil, indent=2) + "\n"
    lab.git_date = f"@{t0 + 60} +0000"
    # m1: the agent's pull request edits policy.json and Mallory approves on it; Alice merges
    lab.branch("feat")
    lab.put(".plangate/policy.json", evil_text)
    got["forged"]["feat"] = (lab.commit("agent: policy", AGENT), AGENT[1])
    lab.approve("m1", MALLORY)
    lab.git("checkout", "-q", "main")
    got["check"]["m1"] = lab.check_plans("feat", ALICE[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge feat", "feat", who=ALICE)
    got["merges"]["feat"] = lab.head()
    # d1: the agent deletes policy.json on a branch; Alice approves d1 there and merges it
    lab.branch("del")
    lab.git("rm", "-q", ".plangate/policy.json")
    got["forged"]["del"] = (lab.commit("agent: drop policy", AGENT), AGENT[1])
    lab.approve("d1", ALICE)
    lab.git("checkout", "-q", "main")
    got["check"]["d1"] = lab.check_plans("del", ALICE[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge del", "del", who=ALICE)
    got["merges"]["del"] = lab.head()
    # s1: policy.json a symlink to a forged policy elsewhere; Mallory approves
    lab.branch("sym")
    lab.put("notes/p.json", evil_text)
    (lab.repo / ".plangate").mkdir(exist_ok=True)
    os.symlink("../notes/p.json", lab.repo / ".plangate/policy.json")
    got["forged"]["sym"] = (lab.commit("agent: link policy", AGENT), AGENT[1])
    lab.approve("s1", MALLORY)
    lab.git("checkout", "-q", "main")
    got["check"]["s1"] = lab.check_plans("sym", MALLORY[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge sym", "sym", who=AGENT)
    got["merges"]["sym"] = lab.head()
    # s2: .plangate a symlink to a folder holding a forged policy.json; Mallory approves
    lab.branch("dir")
    lab.git("rm", "-q", "-r", "--ignore-unmatch", ".plangate")
    lab.put("notes/pg/policy.json", evil_text)
    if (lab.repo / ".plangate").exists() or (lab.repo / ".plangate").is_symlink():
        subprocess.run(["rm", "-rf", str(lab.repo / ".plangate")], check=True)
    os.symlink("notes/pg", lab.repo / ".plangate")
    got["forged"]["dir"] = (lab.commit("agent: link folder", AGENT), AGENT[1])
    lab.approve("s2", MALLORY)
    lab.git("checkout", "-q", "main")
    got["check"]["s2"] = lab.check_plans("dir", MALLORY[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge dir", "dir", who=AGENT)
    got["merges"]["dir"] = lab.head()
    run("b")
    got["ran_b"] = {s: len(lab.calls(s)) for s in PR_PLANS}
    got["tree_b"] = lab.git("ls-tree", "main", ".plangate/", ".plangate").strip()
    if (lab.repo / ".plangate").is_symlink():
        (lab.repo / ".plangate").unlink()
    lab.git("reset", "-q", "--hard")
    got["wt_b"] = lab.git("status", "--short")
    lab.git_date = f"@{t0 + 120} +0000"
    # e1: Alice's approval also flips policy.json's mode (no byte changed)
    lab.set_status("e1", "approved")
    lab.git("add", "-A")
    lab.git("update-index", "--chmod=+x", ".plangate/policy.json")
    lab.git("commit", "-q", "-m", "approve e1", who=ALICE)
    got["mode"] = (lab.head(), ALICE[1])
    # g1: policy.json in a gitattributes export-ignore/filter: the agent adds a clean filter
    # attribute for it (no filter defined: git reads the bytes as they are)
    lab.put(".gitattributes", ".plangate/policy.json -text -diff merge=ours\n")
    lab.commit("agent: attributes", AGENT)
    lab.approve("g1", ALICE)
    # r1: the agent's forged edit, then Alice reverts it in her approving commit's parent
    lab.put(".plangate/policy.json", evil_text)
    forged = lab.commit("agent: policy again", AGENT)
    got["forged"]["again"] = (forged, AGENT[1])
    lab.git("revert", "--no-edit", forged, who=ALICE)
    got["forged"]["revert"] = (lab.head(), ALICE[1])
    lab.approve("r1", ALICE)
    lab.git_date = f"@{t0 + 180} +0000"
    run("c")
    got["ran"] = {s: len(lab.calls(s)) for s in PR_PLANS}
    got["codes"] = {s: lab.refusal(s) for s in PR_PLANS}
    got["tree"] = lab.git("ls-tree", "main", ".plangate/", ".plangate").strip()
    got["tree_policy"] = json.loads(lab.git("show", "main:.plangate/policy.json"))
    got["starts"] = starts(lab)
    got["audit"] = audits(lab, root)
    return got


def _builders() -> dict[str, Callable[[Path], Any]]:
    out: dict[str, Callable[[Path], Any]] = {"q": q_build, "pr": pr_build}
    out.update({n: functools.partial(cfg_build, name=n) for n in CFG_LABS})
    out["cff"] = cff_build
    out["age"] = age_build
    out.update({f"ga-{n}": functools.partial(ga_build, name=n) for n in ATTRS})
    return out


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.getbasetemp()
    if base.name.startswith("popen-gw"):
        base = base.parent
    done, failed = base / "r129p-all.pickle", base / "r129p-all.failed"
    with open(base / "r129p-all.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return dict(pickle.loads(done.read_bytes()))
        if failed.exists():
            raise RuntimeError(f"the labs failed to build: {failed.read_text()}")
        try:
            got = build_all(base / "r129p-all", _builders(), workers=5).got
        except Exception as why:
            failed.write_text(f"{type(why).__name__}: {why}"[-3000:])
            raise
        done.write_bytes(pickle.dumps(got))
        return dict(got)


def norm(told: dict[str, Any]) -> dict[str, Any]:
    """``check_plans``' answer with lists for tuples (as JSON would give it)."""
    return {plan: [v[0], list(v[1])] for plan, v in told.items()}


def valid(rep: dict[str, Any], slug: str) -> int:
    return sum(
        1
        for e in rep.get("executions", [])
        if e.get("plan") == f"plans/{slug}" and e.get("approval_valid")
    )


KINDS = ["plain", "config", "single"]


@pytest.mark.parametrize("name", ["q", "pr"])
def test_passes(labs: dict[str, Any], name: str) -> None:
    assert all(p[1] == 0 for p in labs[name]["passes"]), labs[name]["passes"]


@pytest.mark.parametrize("name", ["q", "pr", "age"])
def test_policy_hash_of_every_start(labs: dict[str, Any], name: str) -> None:
    rows = labs[name]["starts"]
    assert rows and all(trailer == tree for _c, trailer, tree in rows), rows


# -- q --------------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", ["q1", "x1", "q2"])
def test_q_partial_under_c0(labs: dict[str, Any], slug: str) -> None:
    assert labs["q"]["partial"][slug] == "partial", labs["q"]["partial"]


def test_q_check_raised_risk(labs: dict[str, Any]) -> None:
    assert norm(labs["q"]["check_a"]) == {"plans/h1": ["partial", []]}, labs["q"]["check_a"]


@pytest.mark.parametrize("slug", list(Q_PLANS))
def test_q_nothing_ran_on_the_config_change(labs: dict[str, Any], slug: str) -> None:
    """h1's single vote under C0 meets no quorum once hr is high; the partial votes wait for
    a next approval (docs/approvals.md, "Judged again"), none starts by itself."""
    assert labs["q"]["ran_c"][slug] == 0, labs["q"]["ran_c"]


@pytest.mark.parametrize("slug", ["h1", "n1"])
def test_q_check_bob(labs: dict[str, Any], slug: str) -> None:
    assert norm(labs["q"]["check_b"]).get(f"plans/{slug}") == ["start", []], labs["q"]["check_b"]
    assert labs["q"]["ran_d"][slug] == 1, labs["q"]["ran_d"]


@pytest.mark.parametrize("slug", ["q1", "x1", "q2"])
def test_q_check_loosened(labs: dict[str, Any], slug: str) -> None:
    told = norm({**labs["q"]["check_e"], **labs["q"]["check_f"]})
    assert told.get(f"plans/{slug}") == ["start", []], told


@pytest.mark.parametrize("slug", list(Q_PLANS))
def test_q_ran_once(labs: dict[str, Any], slug: str) -> None:
    assert labs["q"]["ran"][slug] == 1, labs["q"]["ran"]


Q_AUDIT = [(k, s) for k in KINDS for s in Q_PLANS]


@pytest.mark.parametrize(("kind", "slug"), Q_AUDIT, ids=[f"{k}:{s}" for k, s in Q_AUDIT])
def test_q_audit_runs(labs: dict[str, Any], kind: str, slug: str) -> None:
    got = labs["q"]["audit"][kind]
    assert "Traceback" not in got["err"], got["err"]
    assert valid(got["report"], slug) == 1, (got["rc"], got["report"].get("executions"))


@pytest.mark.parametrize("kind", KINDS)
def test_q_audit_clean(labs: dict[str, Any], kind: str) -> None:
    got = labs["q"]["audit"][kind]
    assert got["rc"] == 0 and not got["report"].get("findings"), got


SAME = ["right", "upper", "empty", "spaced"]


@pytest.mark.parametrize("name", list(CTL))
def test_q_audit_controller_option(labs: dict[str, Any], name: str) -> None:
    """``audit --controller X`` in a fresh clone: the controller's own address (any case, or
    none) reaches the plain audit's verdicts; any other value is a coded refusal
    (E_CONFIG_INVALID, exit 2) that calls no run valid."""
    got = labs["q"]["ctl"][name]
    assert "Traceback" not in got["err"], got["err"]
    rep = got["report"]
    if name in SAME:
        plain = labs["q"]["audit"]["plain"]["report"]
        assert got["rc"] == 0, got
        assert {s: valid(rep, s) for s in Q_PLANS} == {s: valid(plain, s) for s in Q_PLANS}
    else:
        assert got["rc"] == 2 and rep.get("code") == "E_CONFIG_INVALID", got
        assert not rep.get("executions"), rep
        assert rep.get("remedy"), rep


# -- pr -------------------------------------------------------------------------------------

PR_RUNS = {"m1": 1, "d1": 1, "s1": 0, "s2": 0, "e1": 1, "g1": 1, "r1": 1}


@pytest.mark.parametrize("slug", list(PR_RUNS))
def test_pr_ran(labs: dict[str, Any], slug: str) -> None:
    assert labs["pr"]["ran"][slug] == PR_RUNS[slug], labs["pr"]["ran"]


@pytest.mark.parametrize("slug", ["s1", "s2"])
def test_pr_refused(labs: dict[str, Any], slug: str) -> None:
    assert labs["pr"]["codes"][slug] == "E_APPROVER_NOT_ALLOWED", labs["pr"]["codes"]


@pytest.mark.parametrize("slug", ["m1", "d1", "s1", "s2"])
def test_pr_check(labs: dict[str, Any], slug: str) -> None:
    told = norm(labs["pr"]["check"][slug]).get(f"plans/{slug}")
    want = ["start", []] if PR_RUNS[slug] else ["refuse", ["E_APPROVER_NOT_ALLOWED"]]
    assert told == want, labs["pr"]["check"][slug]


@pytest.mark.parametrize("when", ["tree_b", "tree"])
def test_pr_record_restored(labs: dict[str, Any], when: str) -> None:
    """After the symlinked file and the symlinked folder, and after the mode flip, main's
    ``.plangate/policy.json`` is again a plain file (the controller's record)."""
    rows = labs["pr"][when].splitlines()
    assert len(rows) == 1 and rows[0].startswith("100644 blob "), rows
    assert rows[0].endswith("\t.plangate/policy.json"), rows


def test_pr_tree_policy(labs: dict[str, Any]) -> None:
    approvers = labs["pr"]["tree_policy"]["approval"]["approvers"]
    assert MALLORY[1] not in approvers, approvers


PR_AUDIT = [(k, s) for k in KINDS for s in PR_RUNS]


@pytest.mark.parametrize(("kind", "slug"), PR_AUDIT, ids=[f"{k}:{s}" for k, s in PR_AUDIT])
def test_pr_audit_runs(labs: dict[str, Any], kind: str, slug: str) -> None:
    got = labs["pr"]["audit"][kind]
    assert "Traceback" not in got["err"], got["err"]
    assert valid(got["report"], slug) == PR_RUNS[slug], (got["rc"], got["report"])


#: every commit on main's first-parent line that changed the file: the merges that bring a
#: branch's change, the mode flip inside Alice's vote, the agent's mode restore, the forged
#: edit and Alice's revert of it
FLAGGED = 8


@pytest.mark.parametrize("kind", KINDS)
def test_pr_audit_flags_every_change(labs: dict[str, Any], kind: str) -> None:
    got = labs["pr"]["audit"][kind]
    found = got["report"].get("findings", [])
    assert got["rc"] == 1, got
    assert [f.get("kind") for f in found] == ["policy-changed"] * FLAGGED, found
    commits = {f.get("commit") for f in found}
    for key in ("again", "revert"):
        assert labs["pr"]["forged"][key][0] in commits, (key, found)
    for key, merge in labs["pr"]["merges"].items():
        assert merge in commits, (key, found)


BLAME = {
    "feat": advkit.xfail(
        "merged-policy-edit-blamed-on-merger",
        "the agent's policy.json edit merged by Alice is flagged as Alice's change",
    ),
    "del": advkit.xfail(
        "merged-policy-edit-blamed-on-merger",
        "the agent's deletion of policy.json merged by Alice is flagged as Alice's deletion",
    ),
}
BLAME_IDS = [(k, b) for b in ("feat", "del", "sym", "dir") for k in KINDS]


@pytest.mark.parametrize(
    ("kind", "branch"),
    [
        pytest.param(k, b, id=f"{k}:{b}", marks=[BLAME[b]] if b in BLAME else [])
        for k, b in BLAME_IDS
    ],
)
def test_pr_audit_names_the_maker(labs: dict[str, Any], kind: str, branch: str) -> None:
    """The finding for a change brought by a merge names who made the change (the agent's
    commit on the branch), not only who merged it: a plan's bytes brought by a merge are
    never the merger's (docs/approvals.md, a merge "commits only what it wrote itself")."""
    got = labs["pr"]["audit"][kind]
    merge = labs["pr"]["merges"][branch]
    maker_commit, maker = labs["pr"]["forged"][branch]
    rows = [
        f
        for f in got["report"].get("findings", [])
        if f.get("commit") in (merge, maker_commit) and f.get("kind") == "policy-changed"
    ]
    assert rows, got["report"].get("findings")
    assert all(maker in f.get("detail", "") for f in rows), rows


# -- clone shapes (lab q) ---------------------------------------------------------------------

SHAPES_SAME = ["blobless", "treeless", "blobless-gone", "no-checkout", "subdir", "worktree-old"]
BARE = advkit.xfail(
    "audit-refuses-bare-clone",
    "audit in a --bare or --mirror clone is E_GIT 'no working tree to commit in'",
)
SHAPE_CASES = [pytest.param(s, id=s) for s in SHAPES_SAME] + [
    pytest.param(s, id=s, marks=[BARE]) for s in ("bare", "mirror")
]


@pytest.mark.parametrize("shape", SHAPE_CASES)
def test_q_audit_clone_shapes(labs: dict[str, Any], shape: str) -> None:
    """Every clone that holds the whole history (blobless or treeless, its remote gone, no
    checkout, a bare or mirror clone) and every place in one (a subfolder, a linked worktree
    at an older commit) audits the branch as the plain fresh clone does."""
    got = labs["q"]["shapes"][shape]
    plain = labs["q"]["audit"]["plain"]["report"]
    assert "Traceback" not in got["err"], got["err"]
    assert got["rc"] == 0, got
    assert {s: valid(got["report"], s) for s in Q_PLANS} == {s: valid(plain, s) for s in Q_PLANS}


def test_q_audit_shallow_since(labs: dict[str, Any]) -> None:
    got = labs["q"]["shapes"]["shallow-since"]
    assert got["rc"] == 2 and got["report"].get("code") == "E_GIT", got
    assert "shallow" in got["report"].get("message", ""), got
    assert not got["report"].get("executions"), got


# -- cfg ------------------------------------------------------------------------------------

IN_TREE = "in-tree-config-read-by-check-and-audit"


def refused_in_tree(got: dict[str, Any]) -> bool:
    """A coded refusal of the config found inside the clone (no verdict at all) is a fix too."""
    rep = got["report"]
    return got["rc"] == 2 and rep.get("code") == "E_CONFIG_INVALID" and not rep.get("executions")


@pytest.mark.parametrize("name", list(CFG_LABS))
def test_cfg_refused(labs: dict[str, Any], name: str) -> None:
    got = labs[name]
    assert all(p[1] == 0 for p in got["passes"]), got["passes"]
    assert got["ran"] == {"k1": 0, "k2": 1, "k3": 0}, got["ran"]
    assert got["code"] == "E_APPROVER_NOT_ALLOWED", got["code"]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            n,
            id=n,
            marks=[
                advkit.xfail(
                    IN_TREE,
                    "check at the PR's root read the agent's committed plangate.yml and "
                    "predicted start for Mallory's approval",
                )
            ],
        )
        for n in CFG_LABS
    ],
)
def test_cfg_check_predicts(labs: dict[str, Any], name: str) -> None:
    """``plangate check`` in the pull request's checkout (CI, no ``--config``): a config the
    agent committed into the plans repo is no controller's config (the controller refuses
    one inside the watched tree); the prediction must be the controller's refusal, or a
    coded refusal to predict, never ``start``."""
    got = labs[name]
    told = norm({k: tuple(v) for k, v in got["check"].items()}) if "raw" not in got["check"] else {}
    if got["check_rc"] == 2:
        return
    assert told.get("plans/k1") == ["refuse", ["E_APPROVER_NOT_ALLOWED"]], got["check"]


AUDIT_CFG = [(n, k) for n in CFG_LABS for k in ("pr", "merged", "subdir", "config")]
CFG_BROKEN = {
    ("cfi", "pr"): "a fresh clone's audit at its root read the agent's plangate.yml: the "
    "agent is the controller, the honest run of k2 vanished and the controller's commits "
    "were flagged",
    ("cfi", "merged"): "after the merge, the fresh clone's audit at its root read the "
    "agent's plangate.yml: the honest run of k2 vanished, the controller's commits flagged",
}


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        pytest.param(
            n,
            k,
            id=f"{n}:{k}",
            marks=[advkit.xfail(IN_TREE, CFG_BROKEN[(n, k)])] if (n, k) in CFG_BROKEN else [],
        )
        for n, k in AUDIT_CFG
    ],
)
def test_cfg_audit_verdicts(labs: dict[str, Any], name: str, kind: str) -> None:
    """A fresh clone audited at its root (the pull request checked out, or main after the
    merge), in a subfolder, and ``--config`` on the host: k2's run valid, k1 never run, no
    finding about the controller's own commits."""
    got = labs[name]["audit_pr"] if kind == "pr" else labs[name]["audit"][kind]
    rep = got["report"]
    assert "Traceback" not in got["err"], got["err"]
    if kind in ("pr", "merged") and refused_in_tree(got):
        return
    assert valid(rep, "k2") == 1 and valid(rep, "k1") == 0, (got["rc"], rep)
    own = [f for f in rep.get("findings", []) if "plangate@localhost" in f.get("detail", "")]
    assert not own, own


NOTE_BROKEN = advkit.xfail(
    IN_TREE,
    "a fresh clone's audit at its root says 'today's config differs ... (the controller "
    "records it on its next pass)' of the agent's committed plangate.yml",
)


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(k, id=k, marks=[NOTE_BROKEN] if k != "subdir" else [])
        for k in ("pr", "merged", "subdir")
    ],
)
def test_cfa_audit_no_foreign_config(labs: dict[str, Any], kind: str) -> None:
    """With no config of the auditor's, the fresh clone's audit speaks of no config: the
    plangate.yml the agent committed is not "today's config" the controller will record."""
    got = labs["cfa"]["audit_pr"] if kind == "pr" else labs["cfa"]["audit"][kind]
    notes = got["report"].get("notes") or []
    assert not [n for n in notes if n.get("kind") == "config-differs"], notes


# -- ga -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ATTRS))
def test_ga_ran(labs: dict[str, Any], name: str) -> None:
    got = labs[f"ga-{name}"]
    assert all(p[1] == 0 for p in got["passes"]), got["passes"]
    assert got["ran"] == {"g0": 1, "g1": 1}, got["ran"]
    assert len(got["records"]) == 2, got["records"]


@pytest.mark.parametrize("name", list(ATTRS))
def test_ga_policy_hash(labs: dict[str, Any], name: str) -> None:
    rows = labs[f"ga-{name}"]["starts"]
    assert len(rows) == 2 and all(t == tree for _c, t, tree in rows), rows


GA_AUDIT = [(n, k) for n in ATTRS for k in KINDS]


@pytest.mark.parametrize(("name", "kind"), GA_AUDIT, ids=[f"{n}:{k}" for n, k in GA_AUDIT])
def test_ga_audit(labs: dict[str, Any], name: str, kind: str) -> None:
    got = labs[f"ga-{name}"]["audit"][kind]
    rep = got["report"]
    assert got["rc"] == 0 and not rep.get("findings"), got
    assert valid(rep, "g0") == 1 and valid(rep, "g1") == 1, rep


# -- cff ------------------------------------------------------------------------------------


def test_cff_never_ran(labs: dict[str, Any]) -> None:
    got = labs["cff"]
    assert all(p[1] == 0 for p in got["passes"]), got["passes"]
    assert got["ran"] == {"k1": 0, "k2": 1}, got["ran"]


FORGE_ROOT = advkit.xfail(
    IN_TREE,
    "a fresh clone's audit at its root took the agent's committed plangate.yml: the agent "
    "is the controller, its forged run of k1 (Mallory's approval) is valid",
)
FORGE_K2 = advkit.xfail(
    IN_TREE,
    "a fresh clone's audit at its root took the agent's committed plangate.yml: the "
    "controller's real run of k2 is no execution",
)


@pytest.mark.parametrize(
    ("kind", "slug", "want"),
    [
        pytest.param("root", "k1", 0, id="root:k1", marks=[FORGE_ROOT]),
        pytest.param("root", "k2", 1, id="root:k2", marks=[FORGE_K2]),
        pytest.param("config", "k1", 0, id="config:k1"),
        pytest.param("config", "k2", 1, id="config:k2"),
    ],
)
def test_cff_audit(labs: dict[str, Any], kind: str, slug: str, want: int) -> None:
    """The forged run never counts and the real one does: at the clone's root (no config of
    the auditor's) and with the host's config."""
    got = labs["cff"]["audit"][kind]
    assert "Traceback" not in got["err"], got["err"]
    if kind == "root" and refused_in_tree(got):
        return
    assert valid(got["report"], slug) == want, (got["rc"], got["report"])


def test_cff_audit_subdir_asks(labs: dict[str, Any]) -> None:
    """Without the in-tree config (a subfolder of the clone) git alone cannot tell the two
    identities apart: a coded refusal naming both, no verdict."""
    got = labs["cff"]["audit"]["subdir"]
    rep = got["report"]
    assert got["rc"] == 2 and rep.get("code") == "E_CONFIG_INVALID", got
    assert AGENT[1] in rep.get("message", "") and "plangate@localhost" in rep["message"], rep
    assert not rep.get("executions"), rep


# -- age ------------------------------------------------------------------------------------

AGE_RUNS = {"a1": 1, "a2": 0, "a3": 0, "a4": 1}


@pytest.mark.parametrize("slug", AGE_PLANS)
def test_age_ran(labs: dict[str, Any], slug: str) -> None:
    got = labs["age"]
    assert all(p[1] == 0 for p in got["passes"]), got["passes"]
    assert got["ran"][slug] == AGE_RUNS[slug], got["ran"]
    if not AGE_RUNS[slug]:
        assert got["codes"][slug] == "E_PLAN_EXPIRED", got["codes"]


@pytest.mark.parametrize("slug", ["a3", "a4"])
def test_age_check(labs: dict[str, Any], slug: str) -> None:
    told = norm(labs["age"]["check"][slug]).get(f"plans/{slug}")
    want = ["start", []] if AGE_RUNS[slug] else ["refuse", ["E_PLAN_EXPIRED"]]
    assert told == want, labs["age"]["check"][slug]


AGE_AUDIT = [(k, s) for k in KINDS for s in AGE_PLANS]


@pytest.mark.parametrize(("kind", "slug"), AGE_AUDIT, ids=[f"{k}:{s}" for k, s in AGE_AUDIT])
def test_age_audit(labs: dict[str, Any], kind: str, slug: str) -> None:
    """``a1``'s run, approved 10 minutes after its freeze with no ``max_age`` in force, stays
    valid under every later policy; the refusals are no runs; no finding."""
    got = labs["age"]["audit"][kind]
    assert "Traceback" not in got["err"], got["err"]
    assert valid(got["report"], slug) == AGE_RUNS[slug], (got["rc"], got["report"])
    assert got["rc"] == 0 and not got["report"].get("findings"), got
