"""Round 39, may a signing key the operator removed still withdraw from inside a merged branch?

docs/approvals.md: under ``require_signed`` "a rejection or abort counts only in a commit
signed by a key ``allowed_signers`` gives its identity"; withdrawals are judged by the policy
the controller recorded in the withdrawal's first-parent history (rounds 27, 28), and that
policy holds ``allowed_signers`` as the file's text. A side branch can fork before the
operator's change and merge the watched branch afterwards (its first-parent line still
leads to the old policy, while the new record is an ancestor).

Config: the bench's, ``require_signed: true``, ``allowed_signers``: the controller's key,
Alice's, Bob's and Carol's. The agent writes each plan; the controller freezes it; branch
``side-synced`` is forked. The operator then removes Carol's line from
``allowed_signers`` (she stays an approver by the glob ``*@ops.example.com``: only her key
is gone); the controller records the new policy. Carol, signing with her removed key:

- ``kf-fp`` (control): sets ``rejected`` on main.
- ``kf-new``: on a side branch forked after the new record, merged by Mallory ``-s ours``.
- ``kf-synced``: on ``side-synced`` after merging main into it, merged by Mallory ``-s ours``.
- ``kf-cert-*``: the same three with Bob signing with a certificate (key ``bobt``) of the CA
  the file trusted (``*@ops.example.com cert-authority``) until the operator removed that
  line together with Carol's (Bob's own listed key stays).

A pass; Alice approves each (signed; reopened by the agent if it reads ``rejected``); a pass.

Asserted (the defence): Carol's rejection, signed by a key no line gives her in the policy
recorded before it (an ancestor of her commit), counts for nothing: each plan runs once.

Results: all held (a removed key is judged by the policy as the controller has it; contrast
``test_round39_approve_sidedate.py``, where a key's validity window is not).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import signkit
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["kf-fp", "kf-new", "kf-synced", "kf-cert-fp", "kf-cert-new", "kf-cert-synced"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    lines = {
        name: f"{who} {signkit.make_key(keys, name)}\n"
        for name, who in [
            ("bot", "plangate@localhost"),
            ("alice", "alice@example.com"),
            ("bob", "bob@ops.example.com"),
            ("carol", "carol@ops.example.com"),
        ]
    }
    lines["ca"] = f"*@ops.example.com cert-authority {signkit.make_key(keys, 'ca')}\n"
    signkit.make_key(keys, "bobt", "bob@ops.example.com", "-1m:+1d")
    signers = root / "allowed_signers"
    signers.write_text("".join(lines.values()))
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    signkit.signed_run(lab)
    lab.git("branch", "side-synced")
    lab.git("branch", "side-cert-synced")
    signers.write_text("".join(v for k, v in lines.items() if k not in ("carol", "ca")))
    signkit.signed_run(lab)  # records the policy without Carol's key
    lab.records = lab.git("log", "--format=%s", "--", ".plangate/policy.json").splitlines()  # type: ignore[attr-defined]
    for pre, key, who in [("kf", "carol", CAROL), ("kf-cert", "bobt", BOB)]:
        signkit.sign(lab, f"{pre}-fp", key, who, "rejected")
        lab.git("checkout", "-q", "-b", f"side-{pre}-new")
        signkit.sign(lab, f"{pre}-new", key, who, "rejected")
        lab.git("checkout", "-q", "main")
        merge = ["merge", "-q", "--no-ff", "-s", "ours", "-m", "merge new", f"side-{pre}-new"]
        lab.git(*merge, who=MALLORY)
        synced = "side-synced" if pre == "kf" else "side-cert-synced"
        lab.git("checkout", "-q", synced)
        lab.git("merge", "-q", "--no-ff", "-m", "sync main", "main", who=who)
        signkit.sign(lab, f"{pre}-synced", key, who, "rejected")
        lab.git("checkout", "-q", "main")
        merge = ["merge", "-q", "--no-ff", "-s", "ours", "-m", "merge synced", synced]
        lab.git(*merge, who=MALLORY)
    signkit.signed_run(lab)
    lab.after_withdraw = {  # type: ignore[attr-defined]
        r["plan"]: r.get("status")
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    for vid in VIDS:
        if lab.plan(vid)["plan"]["status"] == "rejected":
            lab.set_status(vid, "pending_approval")
            lab.commit(f"agent reopens {vid}", AGENT)
        signkit.sign(lab, vid, "alice", ALICE, "approved")
    signkit.signed_run(lab)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r39-keyfork", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_the_new_policy_was_recorded(lab: Lab) -> None:
    assert len(lab.records) == 2, lab.records  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(VIDS))
def test_a_removed_key_rejects_nothing(lab: Lab, vid: str) -> None:
    after = lab.after_withdraw  # type: ignore[attr-defined]
    assert after.get(f"plans/{vid}") != "rejected", (after, lab.codes(vid))
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
