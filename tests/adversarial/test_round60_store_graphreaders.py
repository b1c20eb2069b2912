"""Round 60, object store: a forged commit-graph in the shared ``.git`` against the READERS
that still read the shared store (local mode): ``plangate audit``, ``check`` and ``status`` run
in the shared checkout.

Since round 53 the controller reads its own store (``<state_dir>/objects.git``, filled by a
fetch whose ``upload-pack`` runs with the commit-graph pinned off), and since round 58 every
object a reader of the shared store reads is hashed against its name. A commit-graph forges no
object: it gives git a commit's parents and root tree without reading the commit (round 53).
Every commit a reader then reads is genuine; only the CHAIN git walks is not.

Lab (one, plain approvals): the agent adds ``r`` and ``q``, the controller freezes them. Alice
(an approver) rejects ``r`` (commit R); the agent sets ``r`` back to ``pending_approval``
(ignored: illegal); the agent commits ``q`` as ``completed`` under the controller's name
(``plangate: complete plans/q``, commit F: an outcome with no start); the agent's next commit
(T) puts ``q`` back and adds ``q2``; Bob approves ``r`` (commit B, illegal after Alice's veto).
Then the agent writes ``git commit-graph write --reachable`` and patches two entries: the
reopen's first parent is R's parent (R gone from the chain, the reopen changes nothing) and
T's first parent is F's parent (F gone, T changes only ``q2``). One controller pass.

- ``audit-rejection``: ``plangate audit --json --config`` in the shared checkout: asserted it
  still reports something about ``plans/r`` (the vetoed version's illegal reopen/approval) or
  stops with ``E_GIT``.
- ``audit-outcome``: the same audit reports the forged controller outcome of ``plans/q``.
- ``audit-exit``: the same audit does not exit 0 (clean) while a ``--no-local`` clone's audit
  of the same branch has findings.
- ``audit-noconfig``: ``plangate audit --json`` without a config (the CI form) in the shared
  checkout: reports ``plans/r`` or ``plans/q``, or ``E_GIT``.
- ``check``: ``plangate check --base T --head B --as bob`` in the shared checkout predicts no
  start of ``r`` (the controller refuses it).
- ``status``: ``plangate status --json`` (no lock), run after the pass, does not say ``r``
  is approved (run before the pass it poisons the controller: ``_graphstatus.py``).
- ``controller`` (control): the pass exits 0 and ``r`` never runs (its store is whole).
- ``clone-audit`` (control): the audit of a ``git clone --no-local`` has findings for both.

Seen: BROKE (strict xfails): ``audit-rejection``, ``audit-outcome``, ``audit-exit``,
``audit-noconfig``: the shared checkout's audit, with or without a config, said ``ok: true``,
no findings, exit 0 (the ``--no-local`` clone: r's illegal reopen and approval, q's
``outcome-without-start``); ``check``: ``start`` predicted for r (Bob's vote counted). Held:
``controller`` (r never ran), ``status`` after the pass, ``clone-audit``. Should: every git
walk over the shared store pins ``core.commitGraph=false`` (parents from the hashed commit
bytes), or the reader stops with ``E_GIT``.

Fixed (2026-11-29): every git child plangate starts over a store nobody verified (the
repository handle of ``audit``, ``check``, ``status``, ``approve`` in the shared checkout, the
controller's reader of the shared store, one-off ``guarded_env`` calls) runs with the pins
the store fetch's ``upload-pack`` has: ``core.commitGraph=false``,
``fetch.writeCommitGraph=false``, ``gc.writeCommitGraph=false``, ``core.useReplaceRefs=false``
(beside ``GIT_NO_REPLACE_OBJECTS``, the empty grafts file and no hooks), set in one place
(``GitGuard.unverified``, chosen by ``RepoBase``). git then reads each commit's parents from
the commit object: the audit reports r's reopen and approval and q's outcome without a start,
and exits 1 (``audit-*``); ``check`` sees Alice's rejection (``check``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, BOT, Lab, cases, plan_text
from checkkit import predicts_start
from test_round2_execution_kit import shared
from test_round53_approve_commitgraph import patch_graph, write_graph

VIDS = [
    "audit-rejection",
    "audit-outcome",
    "audit-exit",
    "audit-noconfig",
    "check",
    "status",
    "controller",
    "clone-audit",
]
BROKEN: dict[str, pytest.MarkDecorator] = {}  # all fixed (2026-11-29), see the docstring


def _audit(lab: Lab, *args: str, cwd: Path | None = None) -> tuple[int, str]:
    result = lab.cli("audit", "--json", *args, cwd=cwd or lab.repo)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.returncode, result.stdout + result.stderr


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.git_date = "@1790000000 +0000"
    lab.write("r", plan_text("r"))
    lab.write("q", plan_text("q"))
    lab.commit("agent adds r and q", AGENT)
    lab.run()
    lab.set_status("r", "rejected")
    rejection = lab.commit("alice rejects r", ALICE)
    lab.set_status("r", "pending_approval")
    reopen = lab.commit("agent reopens r", AGENT)
    lab.set_status("q", "completed")
    forged = lab.commit("plangate: complete plans/q", BOT)
    lab.set_status("q", "pending_approval")
    lab.write("q2", plan_text("q2"))
    tip = lab.commit("agent adds q2", AGENT)
    lab.set_status("r", "approved")
    bob = lab.commit("bob approves r", BOB)
    clone = root / "clone"
    lab.git("clone", "-q", "--no-local", str(lab.repo), str(clone))
    lab.clone_audit = _audit(lab, "--config", str(lab.config), cwd=clone)  # type: ignore[attr-defined]
    write_graph(lab)
    patch_graph(lab, reopen, parent=lab.head(f"{rejection}^"))
    patch_graph(lab, tip, parent=lab.head(f"{forged}^"))
    lab.chain = lab.git("log", "--format=%s")  # type: ignore[attr-defined]
    lab.shared_audit = _audit(lab, "--config", str(lab.config))  # type: ignore[attr-defined]
    lab.noconfig_audit = _audit(lab)  # type: ignore[attr-defined]
    check = lab.cli(
        "check",
        "--base",
        tip,
        "--head",
        bob,
        "--as",
        "bob@ops.example.com",
        "--format",
        "json",
        "--config",
        str(lab.config),
        cwd=lab.repo,
    )
    lab.check_out = (check.returncode, check.stdout + check.stderr)  # type: ignore[attr-defined]
    lab.pass_ = lab.run(check=False)  # type: ignore[attr-defined]
    # after the pass (run before it, status poisons the controller: _graphstatus.py)
    status = lab.cli("status", "--json", "--config", str(lab.config), cwd=lab.repo)
    lab.status_out = (status.returncode, status.stdout + status.stderr)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r60-graphreaders", _build)


def test_the_graph_really_hides_the_commits(lab: Lab) -> None:
    """Bench check: git in the shared checkout walks the forged chain."""
    chain = lab.chain  # type: ignore[attr-defined]
    assert "alice rejects r" not in chain and "plangate: complete plans/q" not in chain, chain


def _outcome_flagged(out: str) -> bool:
    """q's forged outcome is flagged: ``outcome-without-start`` until round 65, then
    ``controller-unexplained`` (an outcome nobody started is no commit of the controller's)."""
    return "outcome-without-start" in out or "controller-unexplained" in out


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_what_the_shared_store_readers_say(lab: Lab, vid: str) -> None:
    code, out = lab.shared_audit  # type: ignore[attr-defined]
    if vid == "audit-rejection":
        assert "E_GIT" in out or '"plan": "plans/r"' in out, out[-1500:]
    elif vid == "audit-outcome":
        assert "E_GIT" in out or _outcome_flagged(out), out[-1500:]
    elif vid == "audit-exit":
        assert lab.clone_audit[0] != 0  # type: ignore[attr-defined]
        assert code != 0, out[-1500:]
    elif vid == "audit-noconfig":
        _ncode, nout = lab.noconfig_audit  # type: ignore[attr-defined]
        assert "E_GIT" in nout or ('"plan": "plans/r"' in nout and _outcome_flagged(nout)), nout[
            -1500:
        ]
    elif vid == "check":
        _, cout = lab.check_out  # type: ignore[attr-defined]
        assert "E_GIT" in cout or not predicts_start(cout), cout[-1500:]
    elif vid == "status":
        _scode, sout = lab.status_out  # type: ignore[attr-defined]
        rows = {r["plan"]: r for r in json.loads(sout)} if sout.lstrip().startswith("[") else {}
        assert "E_GIT" in sout or rows.get("plans/r", {}).get("status") != "approved", sout[-1500:]
    elif vid == "controller":
        assert lab.pass_.returncode == 0, lab.pass_.stderr[-1500:]  # type: ignore[attr-defined]
        assert lab.calls("r") == []
    elif vid == "clone-audit":
        _ccode, cout = lab.clone_audit  # type: ignore[attr-defined]
        assert '"plan": "plans/r"' in cout and _outcome_flagged(cout), cout[-1500:]
