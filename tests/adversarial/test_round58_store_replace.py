"""Round 58, object store: replace refs and grafts in the shared ``.git`` (local mode).

``git replace`` and ``.git/info/grafts`` are not forged objects: every object stays what its
name says, yet every git reader of the shared checkout (``log``, ``diff-tree``, ``show``)
shows the replacement. ``verify-commit`` on Alice's commit still accepts her signature when
only her tree (or her parents) is replaced. The fix of round 53 says the upload-pack side of
the store's fetch runs with replace refs and grafts pinned off, and the intake reads objects
by name; this module checks that neither path lets a replacement in, and that a repository
full of replace refs is no reason to stop (the objects are whole).

Config: ``require_signed: true`` (Alice's and Bob's SSH keys). The agent writes every plan,
the controller freezes them; then, before the controller's pass:

- ``rtree``: Alice approves ``rtree-a`` (signed). The agent sets it back to pending and
  ``rtree-b`` approved in its own commit, then ``git replace <her root tree> <its root tree>``:
  her signed commit shows the approval of ``rtree-b``.
- ``rsub``: the same through the ``plans`` subtree (``rsub-a``/``rsub-b``).
- ``rgraft``: Alice rejects ``rgraft`` (signed); the agent reopens it; Bob approves (signed);
  ``git replace --graft <reopen> <her rejection's parent>`` hides the rejection.
- ``igraft``: the same hide through ``.git/info/grafts`` (``igraft``).
- ``rcommit``: ``git replace <Alice's approval of rcommit-a> <the agent's commit approving
  rcommit-b>`` (a whole commit replaced: the approval git shows is unsigned).
- ``honest``: Alice's signed approval of ``honest``, nothing replaced: control.

Asserted: ``rec`` never runs for ``rtree-b``, ``rsub-b``, ``rgraft``, ``igraft``,
``rcommit-b``; ``honest`` runs exactly once, in the pass with the replacements in place
(nothing is forged, so nothing needs to stop).

Seen: every variant held: the first pass with the replacements in place ran ``honest`` once
(exit 0) and none of the targets; the store's fetch and intake read no replace ref or graft.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen
from test_round53_approve_commitgraph import _signed

VIDS = ["rtree", "rsub", "rgraft", "igraft", "rcommit"]
BROKEN: dict[str, pytest.MarkDecorator] = {}
TARGET = {
    "rtree": "rtree-b",
    "rsub": "rsub-b",
    "rgraft": "rgraft",
    "igraft": "igraft",
    "rcommit": "rcommit-b",
}
SLUGS = [
    "rtree-a",
    "rtree-b",
    "rsub-a",
    "rsub-b",
    "rgraft",
    "igraft",
    "rcommit-a",
    "rcommit-b",
    "honest",
]


def signed_lab(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {name: _keygen(keys / name) for name in ("alice", "bob")}
    signers = root / "allowed_signers"
    signers.write_text(f"alice@example.com {pubs['alice']}\nbob@ops.example.com {pubs['bob']}\n")
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    return lab


def _build(root: Path) -> Lab:
    lab = signed_lab(root)
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    time.sleep(1.1)
    for vid in ("rtree", "rsub"):
        lab.set_status(f"{vid}-a", "approved")
        approval = _signed(lab, ALICE, "alice", f"approve {vid}-a")
        lab.set_status(f"{vid}-a", "pending_approval")
        lab.set_status(f"{vid}-b", "approved")
        mine = lab.commit(f"agent tidies {vid}", AGENT)
        where = "^{tree}" if vid == "rtree" else ":plans"
        lab.git("replace", "-f", lab.head(approval + where), lab.head(mine + where))
    for vid in ("rgraft", "igraft"):
        before = lab.head()
        lab.set_status(vid, "rejected")
        _signed(lab, ALICE, "alice", f"reject {vid}")
        lab.set_status(vid, "pending_approval")
        reopen = lab.commit(f"agent reopens {vid}", AGENT)
        if vid == "rgraft":
            lab.git("replace", "-f", "--graft", reopen, before)
        else:
            (lab.repo / ".git" / "info").mkdir(exist_ok=True)
            (lab.repo / ".git" / "info" / "grafts").write_text(f"{reopen} {before}\n")
        lab.set_status(vid, "approved")
        _signed(lab, BOB, "bob", f"approve {vid}")
    lab.set_status("rcommit-a", "approved")
    approval = _signed(lab, ALICE, "alice", "approve rcommit-a")
    lab.set_status("rcommit-a", "pending_approval")
    lab.set_status("rcommit-b", "approved")
    mine = lab.commit("agent approves rcommit-b", AGENT)
    lab.git("replace", "-f", approval, mine)
    lab.set_status("honest", "approved")
    _signed(lab, ALICE, "alice", "approve honest")
    lab.forged = lab.run(check=False)  # type: ignore[attr-defined]
    lab.forged_calls = {s: len(lab.calls(s)) for s in SLUGS}  # type: ignore[attr-defined]
    lab.run(check=False)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-replace", _build)


def test_replacements_do_not_stop_the_honest_plan(lab: Lab) -> None:
    forged = lab.forged  # type: ignore[attr-defined]
    assert "Traceback" not in forged.stderr
    assert lab.forged_calls["honest"] == 1, forged.stderr[-2000:]  # type: ignore[attr-defined]
    assert len(lab.calls("honest")) == 1


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_a_replacement_runs_nothing(lab: Lab, vid: str) -> None:
    slug = TARGET[vid]
    assert lab.calls(slug) == [], lab.codes(slug)
