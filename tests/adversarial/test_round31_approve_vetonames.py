# ruff: noqa: E501  (attack steps read best on one line)
"""Round 31, who may reject or abort under ``require_signed``: a signed withdrawal whose commit
*names* an entitled person without being hers.

docs/approvals.md: "With ``require_signed``, a rejection or abort counts only in a commit signed
by a key ``allowed_signers`` gives its identity". Round 30 tried one approval commit naming a
second person (a vote); here the withdrawal does.

Config: the bench's plus ``require_signed: true`` and ``allowed_signers`` listing Alice's, Bob's
and Mallory's keys (Mallory: a colleague with a key, no approver, never an author). The agent
writes every plan; the controller freezes them. Then Mallory, signing with her own key:

- ``co-reject``: rejects on main as herself, the message carrying ``Co-authored-by: Alice
  <alice@example.com>``;
- ``co-reject-bob``: the same with ``Co-authored-by: Bob <bob@ops.example.com>`` and
  ``Signed-off-by: Bob``;
- ``committer``: rejects authored by Mallory, committed as Alice (``git -c user.*``);
- ``author``: rejects authored as Alice, committed by Mallory;
- ``branch-co``: rejects on a side branch (``Co-authored-by: Alice``), merged ``--no-ff`` by
  the agent.

The controller passes; Alice approves every plan in signed commits; the controller passes.

Asserted: nobody entitled withdrew: every plan runs once (``ctl`` too: nobody touched it).

Results: every variant held (Mallory's rejections ignored; every plan ran once).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen, _sign_args

VIDS = ["co-reject", "co-reject-bob", "committer", "author", "branch-co"]
FOUND: dict[str, pytest.MarkDecorator] = {}
CO_A = "\n\nCo-authored-by: Alice <alice@example.com>\n"
CO_B = "\n\nCo-authored-by: Bob <bob@ops.example.com>\nSigned-off-by: Bob <bob@ops.example.com>\n"


def _signed(lab: Lab, key: str, who: tuple[str, str], msg: str, *pre: str) -> None:
    lab.git("add", "-A")
    lab.git(*_sign_args(lab, key), *pre, "commit", "-q", "-S", "-m", msg, who=who)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {n: _keygen(keys / n) for n in ("alice", "bob", "mallory")}
    signers = root / "allowed_signers"
    signers.write_text(
        f"alice@example.com {pubs['alice']}\nbob@ops.example.com {pubs['bob']}\n"
        f"mallory@example.com {pubs['mallory']}\n"
    )
    lab.write_config(approval=f"allowed_signers: {signers}\nrequire_signed: true\n")
    for vid in [*VIDS, "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.set_status("co-reject", "rejected")
    _signed(lab, "mallory", MALLORY, "reject co-reject" + CO_A)
    lab.set_status("co-reject-bob", "rejected")
    _signed(lab, "mallory", MALLORY, "reject co-reject-bob" + CO_B)
    lab.set_status("committer", "rejected")
    lab.git("add", "-A")
    lab.git(
        *_sign_args(lab, "mallory"), "-c", "user.name=Alice", "-c", "user.email=alice@example.com",
        "commit", "-q", "-S", "--author", "Mallory <mallory@example.com>", "-m", "reject committer",
        who=None,
    )  # fmt: skip
    lab.set_status("author", "rejected")
    lab.git("add", "-A")
    lab.git(
        *_sign_args(lab, "mallory"), "-c", "user.name=Mallory", "-c", "user.email=mallory@example.com",
        "commit", "-q", "-S", "--author", "Alice <alice@example.com>", "-m", "reject author",
    )  # fmt: skip
    lab.git("checkout", "-q", "-b", "side")
    lab.set_status("branch-co", "rejected")
    _signed(lab, "mallory", MALLORY, "reject branch-co" + CO_A)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in [*VIDS, "ctl"]:
        lab.set_status(vid, "approved")
        _signed(lab, "alice", ALICE, f"approve {vid}")
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r31-vetonames", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", _p(VIDS))
def test_a_withdrawal_naming_someone_is_not_theirs(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


_ = BOB
