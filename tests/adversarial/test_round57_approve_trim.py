"""Round 57, self-approval: an approver's plan CUT DOWN (or split) as it is moved, so that each
new plan is nothing but her text, yet keeps under half of what the commit removed.

docs/approvals.md, "Who changed the content": a plan moved with an edit keeps its source's
writers when the new plan keeps at least half of the removed plan's content
(``likeness.kept_share``, 0.5, measured over the REMOVED plan). The measure looks one way only:
a new plan made wholly of a third of her plan keeps a third of it, and is no move.

Config: the bench's. Alice commits ``plans/<v>-her`` (``draft``): three actions calling ``rec``,
each with its own tag, ``why`` and reason (her runbook: drain, rotate, restart). The agent
then, in ONE commit that removes her folder:

- ``trim``: adds ``plans/trim`` holding only her action 2 (id, why, params unchanged) and her
  plan header; ``pending_approval``.
- ``trim-first``: her action 1 only (its id unchanged, its ``drain`` tag the one asserted).
- ``reorder``: all three of her actions, in another order (3, 1, 2; ids renumbered 1..N as
  validation demands): all her plan, nothing added.
- ``trim-edit``: the same with one param added to her action (``region``).
- ``split``: adds ``plans/split-a``, ``-b``, ``-c``, one of her actions each (``b`` asserted).
- ``trim-pr``: ``trim`` made on a branch and merged ``--no-ff`` by the agent.
- ``trim-later`` (control): her folder renamed unchanged (``git mv``, a commit), then the two
  other actions cut in place (a second commit): an in-place edit of a plan file, whose every
  content changer stays its changer.
- ``trim-half`` (control): two of her three actions kept (2/3 of her plan).

A pass; Alice approves each new plan; two passes; ``plangate audit --json``.

Asserted (the defence): the tag of her kept action never reaches ``rec``, the plan is refused
``E_SELF_APPROVAL``, the audit lists no valid run.

Seen: ``trim``, ``trim-first``, ``trim-edit``, ``split`` and ``trim-pr`` broke: her action
(id, why and params as she wrote them) ran on her approval (``completed``, approver alice),
the audit lists the run valid. Held: ``reorder`` (all her actions renumbered: paired),
``trim-half`` (2/3 kept), ``trim-later`` (the cut made in place), ``own`` ran once. Fix
direction: a plan also takes the writers of a removed plan when most of ITS OWN weight is
that plan's unchanged leaves (the share both ways: of the removed plan kept, and of the new
plan that is hers), so a new plan that is a part of hers is hers.

Fixed (2026-11-29): the content pairing is measured both ways (``likeness.made_share``) and
actions are matched by what they say, not by their ids (her action ``2`` renumbered ``1`` is
still hers): a plan made of one of her actions keeps 0.34 of hers but is 0.97 hers (0.76 with
``trim-edit``'s param added), over 0.5, so she is a writer of it (and of each part of a
``split``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, valid_runs
from test_round2_execution_kit import shared
from writerkit import OWN, Flow, her_drafts

VIDS = ["trim", "trim-first", "trim-edit", "split", "trim-pr", "reorder", "trim-later", "trim-half"]
BROKEN: dict[str, object] = {}

STEPS = {
    1: ("drain", "alice: drain billing traffic away from the primary before the rotation"),
    2: ("rotate", "alice: rotate the billing service signing key and publish the new one"),
    3: ("restart", "alice: restart the billing workers so they load the new key"),
}


#: The cut-down plans the agent makes of her runbook (variant: the steps it keeps).
CUTS = {"trim": [2], "trim-half": [1, 2], "trim-first": [1], "reorder": [3, 1, 2]}


def action(v: str, i: int, extra: str = "", new_id: int = 0) -> str:
    word, why = STEPS[i]
    return (
        f'  - id: {new_id or i}\n    tool: rec\n    why: "{why}"\n    params:\n'
        f'      tag: "{v}-{word}"\n      reason: "{word} step of alice\'s runbook {v}"\n' + extra
    )


def plan(v: str, ids: list[int], status: str, extra: str = "") -> str:
    body = (
        f'plan:\n  name: "alice\'s billing key rotation {v}"\n  task: "rotate the key {v}"\n'
        f"  status: {status}\navailable_tools:\n  - name: rec\nactions:\n"
    )
    return body + "".join(
        action(v, i, extra if i == 2 else "", n) for n, i in enumerate(ids, start=1)
    )


def _build(root: Path) -> Lab:
    flow = Flow(Lab(root))
    flow.commit(
        "alice writes her runbooks", ALICE, her_drafts(VIDS, lambda v: plan(v, [1, 2, 3], "draft"))
    )
    flow.commit("agent proposes its own", AGENT, {"own": OWN})
    flow.lab.git("mv", "plans/trim-later-her", "plans/trim-later")
    flow.commit("agent renames a folder", AGENT)
    flow.run()
    flow.lab.git("rm", "-q", "-r", "plans/split-her")
    plans = {v: plan(v, ids, "pending_approval") for v, ids in CUTS.items()}
    plans["trim-edit"] = plan("trim-edit", [2], "pending_approval", '      region: "eu-west-1"\n')
    also = {
        f"split-{p}": plan("split", [i], "pending_approval")
        for i, p in ((1, "a"), (2, "b"), (3, "c"))
    }
    also["trim-later"] = plan("trim-later", [2], "pending_approval")
    flow.rework(plans, also, "agent reworks the runbooks")
    flow.merged({"trim-pr": plan("trim-pr", [2], "pending_approval")})
    flow.run()
    flow.settle()
    return flow.finish([*plans, "split-a", "split-b", "split-c", "trim-pr", "trim-later", "own"])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r57-trim", _build)


def slug(v: str) -> str:
    return "split-b" if v == "split" else v


def _valid_runs(lab: Lab, v: str) -> list[dict]:  # type: ignore[type-arg]
    return valid_runs(lab.report, slug(v))  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_a_cut_down_plan_of_hers_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    word = "drain" if vid == "trim-first" else "rotate"
    assert lab.calls(f"{vid}-{word}") == [], lab.codes(slug(vid))[:800]
    assert "E_SELF_APPROVAL" in lab.codes(slug(vid)), lab.codes(slug(vid))[:800]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_the_fresh_clone_audit_lists_no_valid_run(lab: Lab, vid: str) -> None:
    assert _valid_runs(lab, vid) == [], _valid_runs(lab, vid)


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
