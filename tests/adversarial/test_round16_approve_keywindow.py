"""Round 16, signatures: a key's validity window in ``allowed_signers``, judged at a date the
signer writes.

OpenSSH's allowed-signers format lets the operator retire a key without deleting the line:
``valid-before="20260101"`` (or not yet valid: ``valid-after``). git checks an SSH signature
against that window at the commit's *committer date* (``-Overify-time``), a date the signer
chooses (``GIT_COMMITTER_DATE``). docs/approvals.md: with ``require_signed`` an approval
counts only when ``git verify-commit`` accepts it with ``allowed_signers`` and the signer is
the approver.

Config: ``require_signed: true``; ``allowed_signers``: Alice's key (no window) and Carol's
key with ``valid-before="20260101"`` (retired before today). The agent writes each plan; the
controller freezes it. Defence: nothing Carol signs today approves (``E_SIGNATURE_INVALID``),
the tool runs zero times.

- ``ctl-retired``: Carol approves, signed, with honest dates (control: refused).
- ``backdated``: Carol approves, signed, with ``GIT_COMMITTER_DATE`` in 2025 (author date
  today, so the replay date rule sees a fresh approval).
- ``backdated-both``: author and committer date both in 2025.
- ``ctl-early``: Carol signs with her next key (``valid-after="20270101"``), honest dates
  (control: refused).
- ``postdated``: the same with ``GIT_COMMITTER_DATE`` in 2027 (author date today).
- ``trailer-backdated``: in a branch Carol commits an empty ``Plan-Approved: <plan> <hash>``
  commit signed with her retired key, committer date 2025; the agent sets ``approved`` on
  the branch; Mallory (no approver) merges it ``--no-ff``.
- ``ctl-alice``: Alice approves signed (control: runs once).
- ``reject-retired``: Carol (an allowed approver) commits ``status: rejected`` signed with
  her retired key, honest dates; then Alice approves, signed. Defence (docs: under
  ``require_signed`` a withdrawal counts only when signed by a key ``allowed_signers`` gives
  its identity): the rejection withdraws nothing, Alice's approval runs the plan once.
- ``reject-backdated``: the same with ``GIT_COMMITTER_DATE`` in 2025.
- ``reject-filekey``: the same, honest dates, signed with Carol's third key, listed
  ``namespaces="file"`` (not for git; the same option holds for approvals, test_signatures
  ``alice-file-signing-key``).
- ``audit-*``: a fresh clone's ``plangate audit --json`` must not call any such start
  ``approval_valid: true``.

Results: ``reject-retired``, ``reject-backdated`` and ``reject-filekey`` broke (strict
xfails): Carol's rejection with the retired (or file-only) key counts (``plangate
status``: "carol@ops.example.com set status rejected"), the plan stays rejected, and
Alice's signed approval runs nothing (``E_ILLEGAL_TRANSITION`` from rejected): a key's
options in ``allowed_signers`` (window, namespaces) are ignored for withdrawals, even at
honest dates. ``backdated``, ``postdated`` and ``trailer-backdated`` broke (strict
xfails): each ran once with Carol recorded as approver (``plangate status``:
``completed``), and the fresh-clone audit calls each start valid. The controls and
``backdated-both`` held (``E_SIGNATURE_INVALID``; ``E_APPROVAL_REPLAYED`` by the
author-date rule).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, CAROL, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen, _sign_args

# round 16: every BROKEN / AUDIT_BROKEN variant broke (strict xfails, kept as found); fixed
# since: a key's validity window and namespaces are judged at the verifier's clock
# (approval/signers.py), for approvals and withdrawals alike
FIXED: dict[str, list[pytest.MarkDecorator]] = {}  # nothing broken now: no marks
VIDS = ["ctl-retired", "backdated", "backdated-both", "ctl-early", "postdated", "trailer-backdated"]
WHY = {
    "backdated": "a retired key (valid-before) signs today with a committer date in 2025",
    "postdated": "a key not yet valid (valid-after) signs today with a committer date in 2027",
    "trailer-backdated": "a retired key signs a merged-branch Plan-Approved trailer with a "
    "committer date in 2025",
}
BROKEN: dict[str, list[pytest.MarkDecorator]] = {
    v: [
        pytest.mark.xfail(
            strict=True,
            raises=AssertionError,
            reason=f"round 16: {w}: git verify-commit judges the key's window at the "
            "committer date, so the approval counts and the plan runs",
        )
    ]
    for v, w in WHY.items()
}
for _v, _w in {
    "reject-retired": "honest dates",
    "reject-backdated": "a committer date in 2025",
    "reject-filekey": "its key limited to namespaces=file (not git)",
}.items():
    BROKEN[_v] = [
        pytest.mark.xfail(
            strict=True,
            raises=AssertionError,
            reason=f"round 16: a rejection signed with a key allowed_signers does not allow for "
            f"git commits now ({_w}) "
            "vetoes the version under require_signed: Alice's later approval runs nothing",
        )
    ]
AUDIT_BROKEN: dict[str, list[pytest.MarkDecorator]] = {
    v: [
        pytest.mark.xfail(
            strict=True,
            raises=AssertionError,
            reason=f"round 16: the fresh-clone audit calls valid a start on {w}",
        )
    ]
    for v, w in WHY.items()
}
OLD = "2025-06-01T12:00:00+0000"
NEW = "2027-06-01T12:00:00+0000"
REJECTS = ["reject-retired", "reject-backdated", "reject-filekey"]
KEY = {"ctl-early": "next", "postdated": "next", "reject-filekey": "files"}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    alice, carol = _keygen(keys / "alice"), _keygen(keys / "carol")
    carol_next = _keygen(keys / "next")
    carol_files = _keygen(keys / "files")
    signers = root / "allowed_signers"
    signers.write_text(
        f'{ALICE[1]} {alice}\n{CAROL[1]} valid-before="20260101" {carol}\n'
        f'{CAROL[1]} valid-after="20270101" {carol_next}\n'
        f'{CAROL[1]} namespaces="file" {carol_files}\n'
    )
    lab.write_config(approval=f"allowed_signers: {signers}\nrequire_signed: true\n")
    for vid in [*VIDS, "ctl-alice", *REJECTS]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    dates = {
        "backdated": {"GIT_COMMITTER_DATE": OLD},
        "backdated-both": {"GIT_COMMITTER_DATE": OLD, "GIT_AUTHOR_DATE": OLD},
        "postdated": {"GIT_COMMITTER_DATE": NEW},
        "reject-backdated": {"GIT_COMMITTER_DATE": OLD},
    }
    # trailer-backdated: Carol's signed Plan-Approved commit inside a branch, merged by
    # Mallory (no approver); committer date in 2025
    digest = lab.plan("trailer-backdated")["frozen"]["hash"]
    lab.git("checkout", "-q", "-b", "pr", "main")
    lab.extra_env = {"GIT_COMMITTER_DATE": OLD}
    msg = f"approve (trailer)\n\nPlan-Approved: plans/trailer-backdated {digest}\n"
    lab.git(*_sign_args(lab, "carol"), "commit", "-q", "-S", "--allow-empty", "-m", msg, who=CAROL)
    lab.extra_env = {}
    lab.set_status("trailer-backdated", "approved")
    lab.commit("agent sets approved", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=MALLORY)
    for vid in VIDS[:-1]:
        lab.extra_env = dates.get(vid, {})
        lab.set_status(vid, "approved")
        lab.git("add", "-A")
        key = KEY.get(vid, "carol")
        lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "-m", f"approve {vid}", who=CAROL)
        lab.extra_env = {}
    lab.set_status("ctl-alice", "approved")
    lab.git("add", "-A")
    lab.git(*_sign_args(lab, "alice"), "commit", "-q", "-S", "-m", "approve", who=ALICE)
    for vid in REJECTS:  # Carol withdraws with her retired key
        lab.extra_env = dates.get(vid, {})
        lab.set_status(vid, "rejected")
        lab.git("add", "-A")
        key = KEY.get(vid, "carol")
        lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "-m", f"reject {vid}", who=CAROL)
        lab.extra_env = {}
    lab.run()
    for vid in REJECTS:
        lab.set_status(vid, "approved")
        lab.git("add", "-A")
        lab.git(*_sign_args(lab, "alice"), "commit", "-q", "-S", "-m", f"approve {vid}", who=ALICE)
    lab.run()
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r16-keywindow", _build)


def test_control_alice_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl-alice")) == 1, lab.codes("ctl-alice")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=FIXED.get(v, [])) for v in VIDS])
def test_a_retired_key_approves_nothing(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=f"audit-{v}", marks=FIXED.get(v, [])) for v in VIDS]
)
def test_the_fresh_clone_audit_calls_no_such_start_valid(lab: Lab, vid: str) -> None:
    rows = [e for e in lab.audit_report.get("executions", []) if e["plan"] == f"plans/{vid}"]
    assert all(r.get("approval_valid") is False for r in rows), rows


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=FIXED.get(v, [])) for v in REJECTS])
def test_a_retired_key_withdraws_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
