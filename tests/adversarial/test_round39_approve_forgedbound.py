"""Round 39, can an agent void a valid withdrawal by pushing a commit that only claims to be
the controller's?

docs/approvals.md (round 38): a withdrawal's key is judged at "the withdrawal commit's date
... and on the first-parent line never before the controller's last commit before it". Under
``require_signed`` a commit claiming the controller's identity without its signature is no
controller commit (the audit flags it ``forged-controller``). If a claim counts as "the
controller's last commit", the agent can push one dated a little in the future (past the
key's ``valid-before``) just before an approver withdraws with a key still valid: the
withdrawal is then judged after her key's end and ignored.

Config: the bench's, ``require_signed: true``, ``allowed_signers``: the controller's key
(the controller signs its commits), Alice's and Bob's keys, Carol's key with ``valid-before``
a few seconds after the build starts. The agent writes the plans; the controller freezes
them. While Carol's key is valid:

- ``fb-ctl`` (control): Carol rejects (signed), before anything else.
- ``fb-claim``: the agent commits (unsigned) ``plangate: freeze plans/fb-claim`` as
  ``plangate <plangate@localhost>``, author and committer date two seconds after Carol's key
  ends (in the future, well within five minutes); Carol then rejects on top of it (signed,
  dated now: her key is valid).

A pass; Carol's key ends; Alice approves both (signed); a pass; a fresh clone is audited.

Asserted (the defence): both rejections count (the plans are ``rejected``, Alice's approval
runs nothing) and the audit lists both under ``decisions``.

Results: both held (the claimed controller commit does not move the bound, for the
controller or the audit).
"""

from __future__ import annotations

import json
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import signkit
from advkit import AGENT, ALICE, BOT, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

VALID_FOR = 7
VIDS = ["fb-ctl", "fb-claim"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    bot = signkit.make_key(keys, "bot")
    alice = signkit.make_key(keys, "alice")
    bob = signkit.make_key(keys, "bob")
    carol = signkit.make_key(keys, "carol")
    signkit.make_key(keys, "ca")
    expires = int(time.time()) + VALID_FOR
    until = datetime.fromtimestamp(expires, UTC).strftime("%Y%m%d%H%M%SZ")
    signers = root / "allowed_signers"
    signers.write_text(
        f"plangate@localhost {bot}\nalice@example.com {alice}\nbob@ops.example.com {bob}\n"
        f'carol@ops.example.com valid-before="{until}" {carol}\n'
    )
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    signkit.signed_run(lab)
    signkit.sign(lab, "fb-ctl", "carol", CAROL, "rejected")
    stamp = f"@{expires + 2} +0000"
    lab.extra_env = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}  # type: ignore[attr-defined]
    try:
        lab.git("commit", "-q", "--allow-empty", "-m", "plangate: freeze plans/fb-claim", who=BOT)
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
    signkit.sign(lab, "fb-claim", "carol", CAROL, "rejected")
    lab.in_window = time.time() < expires  # type: ignore[attr-defined]
    signkit.signed_run(lab)
    lab.after_withdraw = {  # type: ignore[attr-defined]
        r["plan"]: r.get("status")
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    time.sleep(max(0.0, expires - time.time() + 3.5))
    for vid in VIDS:
        if lab.plan(vid)["plan"]["status"] == "rejected":
            lab.set_status(vid, "pending_approval")
            lab.commit(f"agent reopens {vid}", AGENT)
        signkit.sign(lab, vid, "alice", ALICE, "approved")
    signkit.signed_run(lab)
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r39-forgedbound", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_carol_rejected_within_her_window(lab: Lab) -> None:
    assert lab.in_window  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(VIDS))
def test_a_valid_rejection_stands(lab: Lab, vid: str) -> None:
    after = lab.after_withdraw  # type: ignore[attr-defined]
    assert after.get(f"plans/{vid}") == "rejected", (after, lab.codes(vid))
    assert lab.calls(vid) == [], lab.codes(vid)


@pytest.mark.parametrize("vid", _p(VIDS, "audit-"))
def test_the_audit_lists_the_rejection(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    listed = [
        d
        for d in report.get("decisions", []) or []
        if d.get("plan") == f"plans/{vid}" and d.get("kind") == "reject"
    ]
    assert listed, json.dumps(report)[:3000]
