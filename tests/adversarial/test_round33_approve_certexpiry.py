"""Round 33, quorum under ``require_signed`` with certified keys: a collected vote whose
certificate has expired since it was cast.

docs/approvals.md (round 15, round 30): every collected vote is judged again, from its
commit, under the policy in force when the next approval is decided, and "where a signature
must count now (an approval, a ``Plan-Approved:`` trailer, a quorum vote ...), the
certificate's own ``valid-after``/``valid-before`` ... are judged at the verifier's clock".

Config: the bench's, ``require_signed: true``, ``plans/two/**`` needs two approvals, and
``allowed_signers``: Bob's, Carol's and Alice's listed keys and
``*@example.com,*@ops.example.com cert-authority <ca>``. Key ``bobt`` holds a certificate for
``bob@ops.example.com`` valid for a few seconds from the build's start.

- ``two/expired-vote``: Bob approves, signed with ``bobt`` while it is valid (the controller
  commits ``partial`` with his vote); the certificate expires; Carol approves (listed key).
- ``two/ctl``: Bob (listed key) then Carol: runs once.

Asserted: the vote counted while the certificate was valid (``partial`` with Bob); once it
expired it no longer counts: ``two/expired-vote`` stays ``partial`` with Carol's vote only
(never started, ``rec`` never ran).

Results: held.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import signkit
from advkit import AGENT, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

VALID_FOR = 20  # 6 until a CI at load 20 took longer than that to count Bob's vote
FOUND: dict[str, pytest.MarkDecorator] = {}


def _approve(lab: Lab, vid: str, key: str, who: tuple[str, str]) -> None:
    path = lab.root / "keys" / (f"{key}-cert.pub" if key == "bobt" else key)
    lab.set_status(vid, "approved")
    lab.git("add", "-A")
    lab.git(
        "-c", "gpg.format=ssh", "-c", f"user.signingkey={path}",
        "commit", "-q", "-S", "-m", f"approve {vid}", who=who,
    )  # fmt: skip


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    ca = signkit.make_key(keys, "ca")
    bob = signkit.make_key(keys, "bob")
    carol = signkit.make_key(keys, "carol")
    signkit.make_key(keys, "bobt", "bob@ops.example.com", f"-1m:+{VALID_FOR}s")
    expires = time.time() + VALID_FOR
    signers = root / "allowed_signers"
    signers.write_text(
        f"bob@ops.example.com {bob}\ncarol@ops.example.com {carol}\n"
        f"*@example.com,*@ops.example.com cert-authority {ca}\n"
    )
    lab.write_config(
        approval=f"require_signed: true\nallowed_signers: {signers}\n"
        'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
    )
    for vid in ["two/expired-vote", "two/ctl"]:
        lab.write(vid, plan_text(vid.replace("/", "-")))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    time.sleep(1.05)
    _approve(lab, "two/expired-vote", "bobt", BOB)
    _approve(lab, "two/ctl", "bob", BOB)
    lab.run()
    lab.partial = lab.plan("two/expired-vote").get("approval")  # type: ignore[attr-defined]
    time.sleep(max(0.0, expires - time.time() + 1.5))
    for vid in ["two/expired-vote", "two/ctl"]:
        _approve(lab, vid, "carol", CAROL)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r33-certexpiry", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("two-ctl")) == 1, lab.codes("two/ctl")


def test_the_vote_counted_while_the_certificate_was_valid(lab: Lab) -> None:
    partial = lab.partial  # type: ignore[attr-defined]
    assert partial and partial.get("status") == "partial", partial
    assert [a["by"] for a in partial.get("approvals", [])] == ["bob@ops.example.com"], partial


@pytest.mark.parametrize("vid", _p(["two/expired-vote"]))
def test_an_expired_certificates_vote_no_longer_counts(lab: Lab, vid: str) -> None:
    assert lab.calls(vid.replace("/", "-")) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
