"""Round 57, self-approval: a decoy that keeps MORE of an approver's removed plan than the plan
the agent wants approved, in the same commit.

docs/approvals.md, "Who changed the content": "Each removed plan goes to the plans that keep
the most of it (not the first found); plans tied for it all take its writers". So a second
plan written in the same commit that keeps ALL of hers takes her writers away from the plan
that keeps only most of it (her plan with one of her values edited, still well over the 0.5
of a move).

Config: the bench's. Alice commits ``plans/<v>-her`` (``draft``: one ``rec`` action, her tag,
why and a reason). The agent then, in ONE commit that removes her folder:

- ``decoy``: writes ``plans/decoy-x`` = her exact text (left ``draft``, never submitted) and
  ``plans/decoy`` = her text with her ``reason`` reworded and a ``region`` param added
  (``pending_approval``).
- ``decoy-grown``: the decoy is her text with a param added (keeps all of hers, another hash).
- ``decoy-pr``: ``decoy`` on a branch merged ``--no-ff`` by the agent.
- ``decoy-over``: the plan to approve written over the agent's own frozen plan file
  ``plans/decoy-over`` (in place), the decoy a new folder.
- ``decoy-over-grown``: ``decoy-over`` with ``decoy-grown``'s decoy.
- ``decoy-over-pr``: ``decoy-over`` on a branch merged ``--no-ff`` by the agent.
- ``decoy-in``: the plan to approve a new folder, the decoy (her exact text) written OVER the
  agent's own spare plan file ``plans/decoy-in-x``.
- ``decoy-quoted``: the plan to approve a new folder, respelled with every key quoted (git's
  score low: the likeness decides), the decoy her exact text.
- ``quoted-nodecoy`` (control): ``decoy-quoted`` without the decoy.
- ``over-nodecoy`` (control): ``decoy-over`` without the decoy (round 56's in-place move).
- ``nodecoy`` (control): the same edit, no decoy (round 55's move: she is a writer).

A pass; Alice approves ``plans/<v>`` (never the decoy); two passes; ``plangate audit --json``.

Asserted (the defence): her tag never reaches ``rec``, ``plans/<v>`` is refused
``E_SELF_APPROVAL``, the audit lists no valid run.

Seen: ``decoy-over``, ``decoy-over-grown``, ``decoy-over-pr`` and ``decoy-quoted`` broke (her
approval ran ``rec`` with her tag, ``completed``, approver alice; the audit lists the run
valid): wherever the likeness alone pairs (a plan CHANGED IN PLACE, or a respelled new plan
git scores low), the removed plan goes to the decoy that keeps more of it. Held:
``over-nodecoy`` and ``quoted-nodecoy`` (the same edit alone: paired), ``decoy``,
``decoy-grown``, ``decoy-pr`` and ``decoy-in`` (a new folder git pairs with her file: her
writers follow git's pairing whatever the decoy), ``nodecoy``, ``own`` ran once. Fix
direction: a removed plan's writers go to every plan that keeps at least half of it (the
"best only" choice is what a decoy games), as git's pairing already gives them.

Fixed (2026-11-29): a removed plan's writers go to EVERY plan a commit writes that is made of
it (``Lifecycle._pair_moves``, no best match only), so the decoy takes them and the plan she
approves keeps them: refused ``E_SELF_APPROVAL``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from advkit import Lab, cases, plan_text, valid_runs
from test_round2_execution_kit import shared
from writerkit import Flow, her_drafts, mark_in_text, reworked

VIDS = [
    "decoy",
    "decoy-grown",
    "decoy-pr",
    "decoy-over",
    "decoy-over-grown",
    "decoy-over-pr",
    "decoy-in",
    "decoy-quoted",
    "nodecoy",
    "over-nodecoy",
    "quoted-nodecoy",
]


def quoted(text: str) -> str:
    return re.sub(r"^(\s*(?:- )?)([a-z_]+):", r'\1"\2":', text, flags=re.M)


BROKEN: dict[str, object] = {}


def hers(v: str, status: str = "draft", reason: str = "rotate the billing signing key") -> str:
    return plan_text(
        f"{v}-her",
        status=status,
        name=f"alice rotates {v}",
        params=f'reason: "alice: {reason}"\n',
    )


def wanted(v: str) -> str:
    return hers(v, "pending_approval", "rotate the billing key now") + '      region: "eu-west-1"\n'


MOVED = ["decoy", "decoy-grown", "decoy-over", "nodecoy", "over-nodecoy", "decoy-over-grown"]
PR = ["decoy-pr", "decoy-over-pr"]


def _rework(flow: Flow) -> None:
    plans = {v: wanted(v) for v in [*MOVED, "decoy-in"]}
    plans |= {v: quoted(wanted(v)) for v in ["decoy-quoted", "quoted-nodecoy"]}
    also = {f"{v}-x": hers(v) for v in ["decoy", "decoy-over", "decoy-in", "decoy-quoted"]}
    for v in ["decoy-grown", "decoy-over-grown"]:
        also[f"{v}-x"] = hers(v) + '      note: "kept for reference"\n'
    flow.rework(plans, also, "agent reorganises the drafts")
    flow.merged({v: wanted(v) for v in PR}, {f"{v}-x": hers(v) for v in PR})


def _build(root: Path) -> Lab:
    own = {v: plan_text(f"{v}-agent", name="agent's own") for v in ["decoy-over", "over-nodecoy"]}
    own |= {
        v: plan_text(f"{v}-agent", name="agent's own")
        for v in ["decoy-over-grown", "decoy-over-pr"]
    }
    own["decoy-in-x"] = plan_text("decoy-in-agent", name="agent's own spare")
    own["own"] = plan_text("own", name="agent's own plan")
    drafts = her_drafts(VIDS, hers)
    return reworked(Flow(Lab(root)), drafts, own, _rework, [*VIDS, "own"], mark=mark_in_text)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r57-decoy", _build)


def _valid_runs(lab: Lab, v: str) -> list[dict]:  # type: ignore[type-arg]
    return valid_runs(lab.report, v)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_a_decoy_does_not_take_her_writers_away(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:800]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_the_fresh_clone_audit_lists_no_valid_run(lab: Lab, vid: str) -> None:
    assert _valid_runs(lab, vid) == [], _valid_runs(lab, vid)


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
