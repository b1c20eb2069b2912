"""Round 37, signatures: the operator edits the ``allowed_signers`` *file* (the config that
names it does not change) between two passes.

docs/approvals.md: the recorded policy holds "``allowed_signers`` as the file's text" and the
controller records it "on its first pass and whenever its config changes"; ``plangate audit``
judges each approval "by the policy its ``start`` commit names (``Policy-Hash:``)". A key
added to or removed from the file is a change of who may sign.

Config: ``require_signed``; ``allowed_signers`` lists Alice's key (and Carol's). The agent
adds the plans; the controller freezes (and records its policy). Then, with the config file
untouched:

- ``added``: the operator appends Bob's key to the file; Bob approves ``plans/added``, signed.
  Asserted: the controller starts it (``rec`` once), the start's ``Policy-Hash`` is the
  recorded policy holding Bob's key, and the fresh-clone audit calls the run valid.
- ``removed``: the operator removes Alice's line from the file; Alice approves
  ``plans/removed``, signed. Asserted: the controller refuses (``E_SIGNATURE_INVALID``),
  ``rec`` never runs.

Results: both held (the controller records a new policy when the file's text changes; the
audit, with the controller's commits signed, agrees). The controller signs its commits here
(``GIT_CONFIG_*`` in its environment) so that the audit trusts its recorded policies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen, _sign_args

FOUND: dict[str, pytest.MarkDecorator] = {}


def _approve(lab: Lab, vid: str, key: str, who: tuple[str, str]) -> None:
    lab.set_status(vid, "approved")
    lab.git("add", "-A")
    lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "-m", f"approve {vid}", who=who)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {n: _keygen(keys / n) for n in ("alice", "bob", "carol", "ctl")}
    signers = root / "allowed_signers"
    ctl = f"plangate@localhost {pubs['ctl']}\n"
    signers.write_text(
        f"{ctl}alice@example.com {pubs['alice']}\ncarol@ops.example.com {pubs['carol']}\n"
    )
    sign = {"gpg.format": "ssh", "user.signingKey": str(keys / "ctl"), "commit.gpgSign": "true"}
    run = lab.run

    def signed_run() -> None:
        lab.extra_env = {"GIT_CONFIG_COUNT": str(len(sign))}
        for i, (k, v) in enumerate(sign.items()):
            lab.extra_env[f"GIT_CONFIG_KEY_{i}"] = k
            lab.extra_env[f"GIT_CONFIG_VALUE_{i}"] = v
        try:
            run()
        finally:
            lab.extra_env = {}

    lab.run = signed_run  # type: ignore[method-assign]
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for vid in ("added", "removed"):
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    signers.write_text(signers.read_text() + f"bob@ops.example.com {pubs['bob']}\n")
    _approve(lab, "added", "bob", BOB)
    lab.run()
    signers.write_text(
        f"{ctl}carol@ops.example.com {pubs['carol']}\nbob@ops.example.com {pubs['bob']}\n"
    )
    _approve(lab, "removed", "alice", ALICE)
    lab.run()
    lab.git("clone", "-q", str(lab.repo), str(root / "fresh"))
    del lab.run
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r37-signersfile", _build)


def test_added_key_runs_and_the_audit_agrees(lab: Lab) -> None:
    assert len(lab.calls("added")) == 1, lab.codes("added")
    result = lab.cli("audit", "--json", cwd=lab.root / "fresh")
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    report = json.loads(result.stdout)
    runs = [e for e in report.get("executions", []) if e.get("plan") == "plans/added"]
    assert runs and all(e.get("approval_valid") for e in runs), json.dumps(report)[-3000:]


def test_removed_key_no_longer_approves(lab: Lab) -> None:
    assert lab.calls("removed") == [], lab.codes("removed")
    assert lab.refusal("removed") == "E_SIGNATURE_INVALID", lab.codes("removed")
