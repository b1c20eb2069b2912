"""Is this plan made from that one: content compared, spelling ignored (round 55), by how
much of the old plan the new one keeps (round 56)."""

from __future__ import annotations

import json

import pytest
from ruamel.yaml import YAML

from controller.plan.likeness import (
    MOVE_KEPT,
    NEAR_WHY,
    kept_share,
    leaves,
    made_share,
    word_likeness,
)


def _runbook(tag: str, why: str, steps: int = 8) -> dict:
    """The round 55 swapdelete lab's runbook: 8 ``rec`` actions with step params."""
    actions = [
        {"id": 1, "tool": "rec", "why": f"record that variant {tag} ran", "params": {"tag": tag}}
    ] + [
        {"id": i, "tool": "rec", "why": f"{why} step {i}", "params": {"tag": tag, "step": i}}
        for i in range(2, steps + 1)
    ]
    return {
        "plan": {"name": f"{why} ({tag})", "task": f"attack variant {tag}", "status": "draft"},
        "available_tools": [{"name": "rec"}],
        "actions": actions,
    }


def _one(tag: str, why: str, name: str = "n", task: str = "t", **params: object) -> dict:
    """A one-action plan calling ``rec`` (round 56's labs)."""
    return {
        "plan": {"name": name, "task": task, "status": "draft"},
        "available_tools": [{"name": "rec"}],
        "actions": [{"id": 1, "tool": "rec", "why": why, "params": {"tag": tag, **params}}],
    }


def _kept(old: dict, new: dict) -> float:
    return kept_share(leaves(old), leaves(new))


def _made(old: dict, new: dict) -> float:
    return made_share(leaves(old), leaves(new))


def _copy(doc: dict) -> dict:
    return json.loads(json.dumps(doc))


def test_the_same_content_is_wholly_kept_whatever_its_status_or_blocks() -> None:
    mine = _runbook("a", "rotate keys")
    other = _copy(mine)
    other["plan"]["status"] = "approved"
    other["frozen"] = {"hash": "sha256:00"}
    assert _kept(mine, other) == 1.0


def test_respelled_text_reads_as_the_same_leaves() -> None:
    yaml = YAML(typ="safe", pure=True)
    plain = 'plan:\n  name: "x"\n  task: "t"\nactions:\n  - id: 1\n    tool: rec\n'
    quoted = (
        '"plan":\n    "name": x\n    "task": t\n'
        '"actions":\n    -   "id": 1.0\n        "tool": rec\n'
    )
    assert leaves(yaml.load(plain)) == leaves(yaml.load(quoted))


def test_one_param_added_keeps_all_of_it() -> None:
    mine = _runbook("a", "rotate keys", steps=1)
    moved = _copy(mine)
    moved["actions"][0]["params"]["note"] = "moved"
    assert _kept(mine, moved) == 1.0


@pytest.mark.parametrize("added", [6, 12])
def test_additions_do_not_dilute_the_source(added: int) -> None:
    """Round 56's ``mv6``/``mv12``: the Dice likeness of round 55 fell under 0.5."""
    mine = _one("mv", "record that variant mv ran")
    grown = _copy(mine)
    grown["actions"] += [
        {"id": i, "tool": "echo", "why": f"agent step {i}", "params": {"message": f"m{i}"}}
        for i in range(2, added + 2)
    ]
    assert _kept(mine, grown) == 1.0


def test_ten_params_added_to_her_action_keep_it() -> None:
    mine = _one("mvparams", "record that variant mvparams ran")
    grown = _copy(mine)
    grown["actions"][0]["params"].update({f"knob{i}": f"agent value {i}" for i in range(10)})
    assert _kept(mine, grown) == 1.0


def test_one_value_edited_keeps_the_rest() -> None:
    """A param edited (why kept) or the why reworded (params kept): 0.6 of a one-action
    plan, over the threshold."""
    mine = _one("a", "record it")
    retagged, reworded = _copy(mine), _copy(mine)
    retagged["actions"][0]["params"]["tag"] = "b"
    reworded["actions"][0]["why"] = "note it"
    assert _kept(mine, retagged) == pytest.approx(0.6)
    assert _kept(mine, reworded) == pytest.approx(0.6)
    assert min(_kept(mine, retagged), _kept(mine, reworded)) >= MOVE_KEPT


def test_params_every_plan_on_a_target_shares_are_not_her_action() -> None:
    """Round 56's ``sp``: five target params equal, why and tag the agent's own: 0.01."""
    target = {"host": "db-prod-1", "region": "eu-west-1", "port": 5432, "user": "ops", "db": "b"}
    hers = _one("old", "vacuum", "vacuum billing", "vacuum the billing db", **target)
    mine = _one("sp", "restart it", "restart billing", "restart the billing db", **target)
    assert _kept(hers, mine) == pytest.approx(0.013, abs=0.001)


def test_a_template_s_name_and_task_are_not_her_plan() -> None:
    """Round 56's recurring weeks: name and task equal, the action the agent's: 0.09."""
    hers = _one("old", "rotate by hand", "weekly key rotation", "rotate the keys", list="a,b")
    mine = _one("new", "rotate with vault", "weekly key rotation", "rotate the keys", keys=4)
    assert _kept(hers, mine) == pytest.approx(0.086, abs=0.001)
    assert _kept(hers, mine) < MOVE_KEPT


def test_two_plans_of_one_shape_are_not_one() -> None:
    """The layout every plan for ``rec`` shares weighs little, and no action of the other
    survives (round 55: equal raw lines judged them more than half alike)."""
    kept = _kept(_runbook("a-old", "rotate keys"), _runbook("a", "prune logs"))
    assert kept == pytest.approx(0.004, abs=0.001)


def test_an_action_inserted_moves_no_other() -> None:
    mine = _runbook("a", "rotate keys", steps=4)
    grown = _copy(mine)
    grown["actions"].insert(1, {"id": 9, "tool": "rec", "why": "new", "params": {"tag": "a"}})
    assert _kept(mine, grown) == 1.0


def test_layout_alone_is_kept_only_when_equal() -> None:
    bare = {"actions": [{"id": 1, "tool": "rec"}]}
    assert _kept(bare, bare) == 1.0
    assert _kept({"plan": {}}, {"actions": []}) == 1.0  # nothing to weigh on either side
    assert _kept(bare, {"actions": [{"id": 2, "tool": "echo"}]}) == 0.0


def _three(tag: str) -> dict:
    """Round 57's trim lab: three actions of hers, each with a long why and params."""
    doc = _runbook(tag, "rotate keys", steps=1)
    doc["actions"] = [
        {
            "id": i,
            "tool": "rec",
            "why": f"alice: {word} the billing service before the key rotation window",
            "params": {"tag": f"{tag}-{word}", "reason": f"{word} step of alice's runbook"},
        }
        for i, word in enumerate(["drain", "rotate", "restart"], start=1)
    ]
    return doc


def test_a_plan_cut_down_to_one_of_her_actions_is_hers() -> None:
    """Round 57's ``trim``: her second action alone, renumbered 1. A third of hers is kept,
    but the new plan is nearly all hers: measured both ways."""
    mine = _three("trim")
    cut = _copy(mine)
    cut["actions"] = [dict(cut["actions"][1], id=1)]
    assert _kept(mine, cut) == pytest.approx(0.34, abs=0.01)
    assert _made(mine, cut) == pytest.approx(0.97, abs=0.01)
    assert _made(mine, cut) >= MOVE_KEPT


def test_padding_the_source_first_does_not_dilute_her() -> None:
    """Round 57's ``pad-params``: the agent added 14 params to her draft, then moved her
    original out with one param added: 0.2 of the padded draft kept, the new plan 0.78 hers."""
    mine = _one("pad", "record that variant pad ran", reason="alice: rotate the signing key")
    padded, moved = _copy(mine), _copy(mine)
    padded["actions"][0]["params"].update({f"knob{i}": f"agent value {i}" for i in range(14)})
    moved["actions"][0]["params"]["region"] = "eu-west-1"
    assert _kept(padded, moved) < MOVE_KEPT
    assert _made(padded, moved) == pytest.approx(0.78, abs=0.01)


def test_a_reworded_why_does_not_void_the_unchanged_params() -> None:
    """Round 57's ``one-over``: one word of the why and the port changed; her tag, host,
    database and reason unchanged still count, leaf by leaf."""
    why = "alice: fail over the orders database to the replica in the second zone"
    target = {"host": "db-orders-1.internal", "port": 5432, "database": "orders"}
    mine = _one("one-her", why, reason="step 1 of alice's failover runbook", **target)
    edited = _copy(mine)
    edited["actions"][0]["why"] = why.replace("replica", "standby")
    edited["actions"][0]["params"]["port"] = 5433
    assert word_likeness(why, edited["actions"][0]["why"]) >= NEAR_WHY
    assert _made(mine, edited) == pytest.approx(0.69, abs=0.01)


def test_the_honest_pairs_stay_far_under_both_ways() -> None:
    """Round 56's ``sp`` and recurring weeks, and round 55's runbooks: low both ways."""
    target = {"host": "db-prod-1", "region": "eu-west-1", "port": 5432, "user": "ops", "db": "b"}
    hers = _one("old", "vacuum", "vacuum billing", "vacuum the billing db", **target)
    mine = _one("sp", "restart it", "restart billing", "restart the billing db", **target)
    assert _made(hers, mine) == pytest.approx(0.013, abs=0.002)
    week = _one("old", "rotate by hand", "weekly key rotation", "rotate the keys", list="a,b")
    next_week = _one("new", "rotate with vault", "weekly key rotation", "rotate the keys", keys=4)
    assert _made(week, next_week) == pytest.approx(0.086, abs=0.002)
    assert _made(_runbook("a-old", "rotate keys"), _runbook("a", "prune logs")) == pytest.approx(
        0.004, abs=0.001
    )


def test_one_template_s_reasons_are_not_one_reworded() -> None:
    assert word_likeness("record that variant a-old ran", "record that variant a ran") < NEAR_WHY
    assert word_likeness("rotate keys step 2", "prune logs step 2") == 0.5
    assert word_likeness("a b c d e f g h i j k l", "a b c d e f g h i j k m") >= NEAR_WHY


def test_a_removed_plan_s_actions_are_matched_one_to_one() -> None:
    """Two of her actions alike do not both count against one new action."""
    mine = _runbook("a", "rotate keys", steps=2)
    mine["actions"][1] = dict(mine["actions"][0], id=2)
    one = _copy(mine)
    one["actions"] = one["actions"][:1]
    assert _kept(mine, one) < 0.6
    assert _made(mine, one) == 1.0
