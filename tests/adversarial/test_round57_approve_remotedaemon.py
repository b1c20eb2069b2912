"""Round 57, self-approval in REMOTE mode over a real ``git daemon`` on 127.0.0.1: this round's
slips where the controller has its own clone (the agent cannot write its ``.git``) and reads
the forge's history over ``git://``.

docs/approvals.md, "Remote mode": the controller clones ``remote.url`` into its state
directory, fetches the branch, and judges approvals by the same history index. The writer
rules are the index's, so the agent needs no access to the controller's files to use them.

Config: ``remote: {url: git://127.0.0.1:<port>/origin.git, branch: main}``; the agent and
Alice push to the daemon (``--enable=receive-pack``). Shapes (each a push by the agent after
Alice's pushed draft):

- ``decoy-over``: her plan with its reason reworded written over the agent's own frozen plan,
  a decoy of her exact text in a new folder (``_decoy``).
- ``small-over``: her 3-action runbook, one word of each why and one port changed, written
  over the agent's own frozen plan (``_smalledits``).
- ``trim``: her 3-action draft removed, a new plan of her action 2 alone (``_trim``).
- ``nodecoy`` (control): her plan moved to a new folder with the reworded reason: she is a
  writer.
- ``own`` (control): the agent's own plan: runs once on her approval.

A pass after each push; Alice pulls, approves each, pushes; two passes; the audit of a fresh
``git clone git://...`` (history alone).

Asserted (the defence): her tag never reaches ``rec``, ``E_SELF_APPROVAL``, no valid run.

Seen: ``decoy-over``, ``small-over`` and ``trim`` broke as in local mode (``completed``,
approver alice; the fresh ``git://`` clone's audit lists each run valid): remote mode, where
the agent reaches nothing of the controller's, does not help, the slips are in the history
rules. Held: ``nodecoy``, ``own`` ran once. The daemon is stopped by its process group
after the build.

Fixed (2026-11-29): the history rules fixed for local mode (``likeness.made_share``, every
plan made of a removed plan takes its writers) hold for the controller's own clone and for
the fresh ``git://`` clone's audit alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import Lab, cases, plan_text, valid_runs
from test_round2_execution_kit import shared
from test_round57_approve_decoy import hers as decoy_hers
from test_round57_approve_decoy import wanted as decoy_wanted
from test_round57_approve_smalledits import SIZE as SMALL_SIZE
from test_round57_approve_smalledits import hers as small_hers
from test_round57_approve_trim import plan as trim_plan
from writerkit import RemoteFlow, reworked, served

SMALL_SIZE.setdefault("small-over", 3)
VIDS = ["decoy-over", "small-over", "trim", "nodecoy"]
TAGS = {
    "decoy-over": "decoy-over-her",
    "small-over": "small-over-her",
    "trim": "trim-rotate",
    "nodecoy": "nodecoy-her",
}
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    drafts = {
        "decoy-over-her": decoy_hers("decoy-over"),
        "nodecoy-her": decoy_hers("nodecoy"),
        "small-over-her": small_hers("small-over"),
        "trim-her": trim_plan("trim", [1, 2, 3], "draft"),
    }
    own = {v: plan_text(f"{v}-agent", name="agent's own") for v in ["decoy-over", "small-over"]}
    own["own"] = plan_text("own", name="agent's own")
    plans = {
        "decoy-over": decoy_wanted("decoy-over"),
        "nodecoy": decoy_wanted("nodecoy"),
        "small-over": small_hers("small-over", "pending_approval", True, True),
        "trim": trim_plan("trim", [2], "pending_approval"),
    }
    also = {"decoy-over-x": decoy_hers("decoy-over")}
    with served(lab) as url:
        flow = RemoteFlow(lab, url)
        return reworked(flow, drafts, own, lambda f: f.rework(plans, also), [*VIDS, "own"])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r57-remotedaemon", _build)


def _valid_runs(lab: Lab, v: str) -> list[dict]:  # type: ignore[type-arg]
    return valid_runs(lab.report, v)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_text_is_not_hers_to_approve_in_remote_mode(lab: Lab, vid: str) -> None:
    assert lab.calls(TAGS[vid]) == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:800]
    assert _valid_runs(lab, vid) == [], _valid_runs(lab, vid)


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
    assert _valid_runs(lab, "own"), lab.report  # type: ignore[attr-defined]
