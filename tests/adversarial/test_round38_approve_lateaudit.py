"""Round 38, does the fresh-clone audit reach the controller's verdicts when a signing key's
validity window has closed since the controller judged?

docs/approvals.md: under ``require_signed``, where a signature must count (an approval, a
withdrawal) the key's or certificate's ``valid-after``/``valid-before`` are judged "at the
verifier's clock, never the commit's date"; ``plangate audit`` judges "each approval ... by
the policy its ``start`` commit names" and ``max_age`` at "the time of the controller's
``start`` commit". The promise: git history alone proves it, the audit on a fresh clone
agrees with the controller, later too.

Config: the bench's, ``require_signed: true``, ``allowed_signers``: Alice's listed key (no
window), Carol's listed key with ``valid-before`` a few seconds after the build starts, Bob's
listed key, and ``*@example.com,*@ops.example.com cert-authority <ca>``; key ``bobt`` holds
a certificate for ``bob@ops.example.com`` valid for those same few seconds. The agent writes
each plan; the controller freezes it. While the windows are open:

- ``cert-run``: Bob approves, signed with ``bobt`` (certificate): the controller starts it.
- ``line-run``: Carol approves, signed with her windowed listed key: the controller starts it.
- ``cert-reject``: Bob rejects, signed with ``bobt``; the controller passes (counts it).
- ``ctl``: Alice approves (listed key, no window): runs once.

Then the windows close; Alice approves ``cert-reject`` (signed); the controller passes; a
fresh clone is audited (``plangate audit --json``, no config).

- ``line-reject``: Carol rejects, signed with her windowed listed key; a pass counts it.
- ``key-reject`` (control): Bob rejects, signed with his listed key (no window).
- ``early-reject``: Carol rejects, signed with her next key (``valid-after`` = the end of
  the window, not valid yet); a pass ignores it; Alice approves (signed): the plan runs once.
- ``cert-abort``: a gated plan (action 2 ``requires_approval``); Alice approves, action 1
  runs, it pauses; Bob sets ``aborted`` signed with ``bobt``; the controller commits its
  ``plangate: abort`` (``Aborted-By: bob``).

The controller signs its own commits (its key in ``allowed_signers`` as
``plangate@localhost``, given through ``GIT_CONFIG_*``), so the audit has no
``forged-controller`` noise. Then the windows close; Alice approves every rejected plan and
``cert-abort``'s gate (signed); the controller passes; a fresh clone is audited
(``plangate audit --json``, no config). Last, ``<state>/index.sqlite`` is deleted ("a cache
of git: deleting the file is always safe") and ``plangate status`` read again (``rebuild-*``),
then one more pass.

Asserted: the controller ran ``cert-run``/``line-run``/``ctl`` once each, never ran a
rejected plan, ran only action 1 of ``cert-abort``; the audit agrees: each start the
controller made is ``approval_valid`` with no finding, each counted rejection / abort is
under ``decisions`` and not flagged ``withdraw-not-allowed``; after the index rebuild each
counted rejection still reads ``rejected``.

Results: ``cert-run``, ``line-run``, ``ctl``, ``key-reject``, ``rebuild-key-reject`` held
(approvals are judged by the audit at the start's time). BROKE (strict xfails):
``cert-reject``, ``line-reject``, ``cert-abort`` (audit): once the certificate / the
``valid-before`` window has closed, the fresh-clone audit flags the rejections and the abort
the controller counted ``withdraw-not-allowed`` (E_APPROVER_NOT_ALLOWED "only an allowed
approver or an author of the plan may"), lists no decision for them, while for
``cert-abort`` it lists the controller's abort outcome with ``aborted_by: bob``.
``rebuild-cert-reject`` and ``rebuild-line-reject``: after the index rebuild ``plangate
status`` shows the rejected plans ``approved`` (Alice's approval from ``rejected`` now a
request); the next pass refuses it ``E_VERSION_WITHDRAWN`` (memory.sqlite) and nothing runs,
but the plan then reads ``pending_approval``, not ``rejected``.
``early-reject`` BROKE the other way (strict xfail): the controller ignored Carol's
not-yet-valid rejection and ran Alice's approval (``completed``, ``rec`` once); the audit,
run after the key's ``valid-after``, lists Carol's rejection under ``decisions``, flags
Alice's approval ``illegal`` (from ``rejected``) and the controller's start
``start-without-approval`` (``approval_valid: false``).
Tried and not kept: ``plangate check`` of a pull request that copies a withdrawn version
under a new name predicted ``start`` for the windowed key and the control alike (the
documented limit: check reads only the histories of the plans a pull request touches).

Fixed (the same session): a withdrawal's signing key is judged at a time history fixes
(``Lifecycle.signed_at``: the commit's date, unless it claims a time past the reader's clock,
and on the first-parent line never before the controller's last commit before it), so the
controller, a rebuilt index and the fresh-clone audit judge it alike.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import signkit
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text, window_open, with_widening_window
from test_round2_execution_kit import shared

#: the keys' first validity window, in seconds; a lab whose window closed before the
#: controller judged the in-window signatures is rebuilt with it doubled (advkit)
VALID_FOR = 7
RUNS = ["cert-run", "line-run", "ctl"]
REJECTS = ["cert-reject", "line-reject", "key-reject"]
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "cert-abort-gated"
"""
FOUND: dict[str, pytest.MarkDecorator] = {}  # fixed (see the docstring)


def _build(root: Path, valid_for: int) -> Lab:
    lab, expires = signkit.signed_lab(root, valid_for, carol_next=True)
    for vid in [*RUNS, *REJECTS]:
        lab.write(vid, plan_text(vid))
    lab.write("cert-abort", plan_text("cert-abort", extra_actions=GATE))
    lab.write("early-reject", plan_text("early-reject"))
    lab.commit("agent adds plans", AGENT)
    signkit.signed_run(lab)
    time.sleep(1.05)
    signkit.sign(lab, "cert-run", "bobt", BOB, "approved")
    signkit.sign(lab, "line-run", "carol", CAROL, "approved")
    signkit.sign(lab, "cert-reject", "bobt", BOB, "rejected")
    signkit.sign(lab, "key-reject", "bob", BOB, "rejected")
    signkit.sign(lab, "ctl", "alice", ALICE, "approved")
    signkit.sign(lab, "line-reject", "carol", CAROL, "rejected")
    signkit.sign(lab, "early-reject", "carol2", CAROL, "rejected")  # her next key: not valid yet
    signkit.sign(lab, "cert-abort", "alice", ALICE, "approved")
    signkit.signed_run(lab)  # cert-abort's action 1 runs, it pauses at its gate
    signkit.sign(lab, "cert-abort", "bobt", BOB, "aborted")
    signkit.sign(lab, "early-reject", "alice", ALICE, "approved")
    signkit.signed_run(lab)
    # every signature above was judged by a pass that ended before the windows closed (and
    # before Carol's next key opened); else this lab says nothing: rebuild it wider
    window_open(expires, "the in-window passes")
    lab.early = {v: lab.started(v) for v in RUNS}  # type: ignore[attr-defined]
    time.sleep(max(0.0, expires - time.time() + 1.5))
    for vid in REJECTS:
        signkit.sign(lab, vid, "alice", ALICE, "approved")
    signkit.sign(lab, "cert-abort", "alice", ALICE, "approved")  # the gate
    signkit.signed_run(lab)
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_rc = res.returncode  # type: ignore[attr-defined]
    lab.audit_report = (  # type: ignore[attr-defined]
        json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}
    )
    # the index is "a cache of git: deleting the file is always safe" (docs/approvals.md)
    for leftover in lab.state.glob("index.sqlite*"):
        leftover.unlink()
    res = lab.cli("status", "--json", "--config", str(lab.config))
    rows = {r["plan"]: r for r in json.loads(res.stdout)}
    lab.rebuilt = {  # type: ignore[attr-defined]
        v: rows.get(f"plans/{v}", {}).get("status") for v in [*REJECTS, "cert-abort"]
    }
    signkit.signed_run(lab)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r38-lateaudit", with_widening_window(_build, first=VALID_FOR))


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


#: what the audit must not say of a verdict the controller reached (an ``illegal`` flag for
#: an approval the controller itself ignored from ``rejected`` is agreement, not a finding)
WRONG = {"withdraw-not-allowed", "start-without-approval", "outcome-without-start", "hash-mismatch"}


def _findings(report: dict[str, Any], vid: str) -> list[Any]:
    if "raw" in report:
        return [report]
    return [
        item
        for item in report.get("findings", []) or []
        if item.get("plan") == f"plans/{vid}" and item.get("kind") in WRONG
    ]


@pytest.mark.parametrize("vid", _p(RUNS))
def test_the_controller_ran_it_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
    assert lab.early[vid], lab.codes(vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", REJECTS)
def test_the_counted_rejection_stands(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", _p(RUNS))
def test_the_fresh_clone_audit_agrees_later(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert runs, json.dumps(report)[:3000]
    assert all(e.get("approval_valid") for e in runs), runs
    assert not _findings(report, vid), _findings(report, vid)


@pytest.mark.parametrize("vid", _p(REJECTS))
def test_the_audit_lists_the_counted_rejection(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    decisions = [d for d in report.get("decisions", []) if d.get("plan") == f"plans/{vid}"]
    assert any(d.get("kind") == "reject" for d in decisions), json.dumps(report)[:3000]
    assert not _findings(report, vid), _findings(report, vid)


def test_the_counted_abort_stands(lab: Lab) -> None:
    assert len(lab.calls("cert-abort")) == 1, lab.codes("cert-abort")
    assert lab.calls("cert-abort-gated") == [], lab.codes("cert-abort")
    assert any(s.startswith("plangate: abort ") for s in lab.subjects("cert-abort"))


@pytest.mark.parametrize("vid", _p(["cert-abort"]))
def test_the_audit_agrees_on_the_abort(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    decisions = [d for d in report.get("decisions", []) if d.get("plan") == f"plans/{vid}"]
    assert any(d.get("kind") == "abort-request" for d in decisions), json.dumps(report)[:3000]
    assert not _findings(report, vid), _findings(report, vid)


@pytest.mark.parametrize("vid", _p([f"rebuild-{v}" for v in REJECTS]))
def test_the_rebuilt_index_keeps_the_rejection(lab: Lab, vid: str) -> None:
    plan = vid.removeprefix("rebuild-")
    assert lab.rebuilt[plan] == "rejected", lab.rebuilt  # type: ignore[attr-defined]
    assert lab.calls(plan) == [], lab.codes(plan)


@pytest.mark.parametrize("vid", _p(["early-reject"]))
def test_a_withdrawal_ignored_then_is_not_counted_later(lab: Lab, vid: str) -> None:
    """Carol's rejection signed with a key not valid yet is ignored; Alice's approval runs
    it; once the key's window opens the audit must still call that start valid."""
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert runs and all(e.get("approval_valid") for e in runs), json.dumps(report)[:3000]
    bad = [f for f in _findings(report, vid) if f.get("kind") != "withdraw-not-allowed"]
    assert not bad, bad
