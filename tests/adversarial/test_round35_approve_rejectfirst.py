"""Round 35, who may reject: the accepted limit beside the race that was fixed
(``test_round35_approve_preproduce.py``). docs/threat-model.md, "Accepted limits".

The agent's plan waits on its pull-request branch. Mallory (no approver) lands a byte copy
of it on main and, in a later pass but before the pull request is merged, rejects her copy
(``first``). On the branch at that moment she is the only person who made that content: git
cannot tell her copy from her own work, so her withdrawal counts and vetoes that version.
The pull request is merged afterwards and Alice approves the agent's plan: refused
``E_VERSION_WITHDRAWN`` (strict xfail: an accepted limit; the agent's remedy is any change,
a new version; the deployment's is branch protection).

``after`` (control): the same, but her rejection comes after the merge: it counts for
nothing (``E_APPROVER_NOT_ALLOWED``) and Alice's approval runs the plan once.

Changed (2026-12-07, fix124o; round 122, ``author-withdrawal-lost-to-a-raced-copy``): who may
withdraw a plan as its author is read from the makings of its version AT the plan's own
folder first (docs/approvals.md, "A race is read at the plan's own folder"). Mallory made
``plans/after-m`` there, so her rejection of it after the merge now withdraws that copy of
hers (no longer ``E_APPROVER_NOT_ALLOWED``); it still vetoes no version (the producers are
the people in both makings: nobody), so Alice's approval still runs the agent's ``after``
once (asserted as before), and the agent may now withdraw its own ``after``.

Changed (2026-12-07, veto125; round 124, ``racer-veto-before-merge``): the limit is gone. A
producer's (non-approver's) withdrawal binds only the plans she is an author of; at the
agent's ``plans/first`` the authors are the agent's, so Mallory's rejection of ``first-m``
before the merge withdraws her copy alone and Alice's approval runs ``first`` once (no
longer a strict xfail).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("ctl", plan_text("ctl"))
    lab.commit("agent adds ctl", AGENT)
    lab.run()
    base = lab.head()
    lab.git("checkout", "-q", "-b", "pr", base)
    for vid in ("first", "after"):
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.git("checkout", "-q", "main")
    time.sleep(1.05)
    for vid in ("first", "after"):
        lab.write(f"{vid}-m", plan_text(vid))
    lab.commit("mallory copies them", MALLORY)
    lab.run()
    lab.set_status("first-m", "rejected")
    lab.commit("mallory rejects first-m", MALLORY)
    lab.run()
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=AGENT)
    lab.run()
    lab.set_status("after-m", "rejected")
    lab.commit("mallory rejects after-m", MALLORY)
    lab.run()
    time.sleep(1.05)
    for slug in ("first", "after", "ctl"):
        lab.set_status(slug, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r35-rejectfirst", _build)


@pytest.mark.parametrize("vid", ["first", "after", "ctl"])
def test_a_copy_rejected_withdraws_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


def test_the_limit_is_said(lab: Lab) -> None:
    """Her rejection of her own copy, before the merge (2026-12-07, veto125) or after it
    (fix124o), withdraws that copy alone: it vetoes nothing of the agent's, whose ``first``
    and ``after`` run once (see the docstring)."""
    assert "E_VERSION_WITHDRAWN" not in lab.codes("first"), lab.codes("first")
    assert lab.status().get("plans/first-m", {}).get("status") == "rejected"
    row = lab.status().get("plans/after-m", {})
    assert row.get("status") == "rejected", lab.codes("after-m")
    assert "E_APPROVER_NOT_ALLOWED" not in lab.codes("after-m"), lab.codes("after-m")
    assert "E_VERSION_WITHDRAWN" not in lab.codes("after"), lab.codes("after")
