"""Round 27, who may reject or abort under ``require_signed``: a signed withdrawal whose signer's
key leaves ``allowed_signers`` before the controller's next pass.

docs/approvals.md: with ``require_signed`` "a rejection or abort counts only in a commit signed
by a key ``allowed_signers`` gives its identity"; withdrawals "win ... in any order of
commits". Config: the bench's plus ``require_signed: true`` and ``allowed_signers`` listing
Alice's and Bob's keys. The agent writes every plan; the controller freezes them. Then:

- ``seen``: Bob rejects the plan in a commit signed with his listed key; the controller
  passes (it sees the rejection);
- ``unseen``: Bob rejects the plan the same way after that pass.

Then, with no pass in between, the operator rotates Bob out of ``allowed_signers`` (Bob
stays an approver: only his key line goes). Alice approves both in signed commits; the
controller passes. ``ctl``: the agent's plan Alice approves only then (runs once).

Asserted: Bob's signed rejection, valid when made, wins: neither plan runs (the twins differ
only in when a pass happened). ``audit-agrees``: a fresh clone's audit reports no
``start-without-approval`` for these plans (it agrees with the controller's starts).

Results: ``seen`` held (stays rejected, nothing ran); ``unseen`` BROKE (ran once after
Alice's approval); ``audit-agrees`` BROKE (the audit flags that start
``start-without-approval``). Control ``ctl`` ran once.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen, _sign_args


def _signed(lab: Lab, key: str, who: tuple[str, str], vid: str, status: str) -> None:
    lab.set_status(vid, status)
    lab.git("add", "-A")
    lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "-m", f"{status} {vid}", who=who)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {n: _keygen(keys / n) for n in ("alice", "bob")}
    signers = root / "allowed_signers"
    signers.write_text(f"alice@example.com {pubs['alice']}\nbob@ops.example.com {pubs['bob']}\n")
    lab.write_config(approval=f"allowed_signers: {signers}\nrequire_signed: true\n")
    for vid in ["seen", "unseen", "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    _signed(lab, "bob", BOB, "seen", "rejected")
    lab.run()
    time.sleep(1.05)
    _signed(lab, "bob", BOB, "unseen", "rejected")
    signers.write_text(f"alice@example.com {pubs['alice']}\n")  # Bob's key rotated out
    time.sleep(1.05)
    for vid in ["seen", "unseen", "ctl"]:
        _signed(lab, "alice", ALICE, vid, "approved")
    lab.run()
    lab.run()
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli("audit", "--json", cwd=clone)
    (root / "audit.json").write_text(out.stdout)
    (root / "audit.err").write_text(out.stderr)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r27-vetokeys", _build)


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason="round 27: " + why)


#: What round 27 broke (strict xfails until fixed in the same round; kept as the record).
FOUND: dict[str, pytest.MarkDecorator] = {
    "unseen": _broke(
        "Bob's rejection, signed with a key allowed_signers listed when he made it, is "
        "ignored once his key is rotated out before the controller's next pass; Alice's "
        "later signed approval starts the plan (its twin 'seen', one pass earlier, stays "
        "rejected)"
    ),
    "audit-agrees": _broke(
        "the fresh-clone audit judges Bob's signed rejection by the policy recorded when it "
        "was made and flags the controller's start of unseen start-without-approval"
    ),
}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[]) for v in vids]


@pytest.mark.parametrize("vid", _p(["seen", "unseen"]))
def test_signed_rejection_wins(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", _p(["audit-agrees"]))
def test_fresh_clone_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    text = (lab.root / "audit.json").read_text()
    assert text.strip(), (lab.root / "audit.err").read_text()[-2000:]
    report = json.loads(text)
    found = [
        f
        for f in report.get("findings", [])
        if f.get("plan") in {"plans/seen", "plans/unseen", "plans/ctl"}
        and f.get("kind") == "start-without-approval"
    ]
    assert found == [], json.dumps(found)[:2000]
