"""Is this plan made from that one: content compared, spelling ignored (round 55), by how
much of the old plan the new one keeps (round 56)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from ruamel.yaml import YAML

from controller.plan.likeness import (
    MOVE_KEPT,
    NEAR_WHY,
    kept_share,
    leaves,
    made_share,
    why_strength,
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
    """The why reworded (params kept): 0.6 of a one-action plan, over the threshold. Its only
    param edited beside the why kept is another call (round 59: a why is at most half the
    evidence, what the action runs must be half kept)."""
    mine = _one("a", "record that alice rotated the signing key", host="h1")
    retagged, reworded = _copy(mine), _copy(mine)
    retagged["actions"][0]["params"]["tag"] = "b"
    reworded["actions"][0]["why"] = "note it"
    assert why_strength(mine["actions"][0]["why"]) == 0.5
    assert _kept(mine, retagged) == pytest.approx(0.71, abs=0.01)
    assert _kept(mine, reworded) == pytest.approx(0.71, abs=0.01)
    alone = _one("a", "record that alice rotated the signing key")
    assert _made(alone, _one("b", "record that alice rotated the signing key")) < MOVE_KEPT


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


# Round 58: plans compared by the calls they make, and a short stock why is no action of hers.

_WHY = "alice: drop the stale sessions table on the billing replica before the audit"
_HER = {"target": "billing-replica-2", "command": "DROP TABLE sessions_2019", "ticket": "OPS-4411"}


def _hers() -> dict:
    return _one("r58-her", _WHY, "cleanup", "clean the billing replica", **_HER)


def _through_inputs(legacy: bool = False, why: str = _WHY, task: str = "clean") -> dict:
    doc = _hers()
    doc["plan"]["task"] = task
    params = doc["actions"][0]["params"]
    doc["inputs"] = dict(params)
    form = "${{inputs.{}}}" if legacy else "$<inputs.{}>"
    doc["actions"][0]["params"] = {k: form.format(k) for k in params}
    doc["actions"][0]["why"] = why
    return doc


@pytest.mark.parametrize("legacy", [False, True])
def test_her_values_read_through_inputs_are_her_call(legacy: bool) -> None:
    """Round 58's ``inputs``/``inputs-legacy``: every param ``$<inputs.K>`` (``${inputs.K}``)."""
    assert _made(_hers(), _through_inputs(legacy)) == pytest.approx(0.98, abs=0.01)


def test_her_why_moved_to_the_task_leaves_her_call() -> None:
    """Round 58's ``inputs-task``: the action's why the agent's, her params via inputs."""
    moved = _through_inputs(why="agent: run the cleanup described in the task", task=_WHY)
    assert _made(_hers(), moved) == pytest.approx(0.8, abs=0.01)


def test_an_input_inside_a_text_is_resolved() -> None:
    doc = _hers()
    doc["inputs"] = {"table": "sessions_2019"}
    doc["actions"][0]["params"]["command"] = "DROP TABLE $<inputs.table>"
    assert leaves(doc) == leaves(_hers()) + Counter()  # the input read is said by the call


def test_her_action_as_a_fallback_step_is_her_call() -> None:
    """Round 58's ``fallback``: an agent action that fails, her action its fallback step."""
    step = dict(_hers()["actions"][0], id="1.1")
    new = _one("probe", "agent: probe the replica lock", "cleanup", "clean the billing replica")
    new["actions"][0].update(on_failure="fallback", fallback=[step])
    assert _made(_hers(), new) >= 0.9


@pytest.mark.parametrize("where", ["pre", "verify", "plan-pre"])
def test_her_call_as_a_check_is_her_call(where: str) -> None:
    """Round 58's ``pre``/``verify``/``plan-pre``: her call (tool, params) as a check."""
    mine = _hers()
    call = {
        "tool": "rec",
        "params": dict(mine["actions"][0]["params"]),
        "expect": {"path": "$.json.ok", "equals": True},
    }
    new = _one("agent", "agent: warm the edge after the purge", "n", "t")
    if where == "pre":
        new["actions"][0]["preconditions"] = [call]
    elif where == "verify":
        new["actions"][0]["verify"] = dict(call, timeout=5)
    else:
        new["preconditions"] = [call]
    assert _made(mine, new) == pytest.approx(0.75, abs=0.02)


def test_her_values_as_a_pinned_plan_s_inputs_are_her_call() -> None:
    """Round 58's ``nested``: a pinned library plan called with her why and values."""
    mine = _hers()
    action = mine["actions"][0]
    new = _copy(mine)
    new["actions"] = [
        {
            "id": 1,
            "plan": {"path": "plans/lib", "hash": "sha256:ab"},
            "why": action["why"],
            "inputs": dict(action["params"]),
        }
    ]
    assert _made(mine, new) >= 0.9


def _stock(tag: str, why: str = "restart the service", **params: object) -> dict:
    return _one(tag, why, "restart api", "restart the api after the cert rotation", **params)


@pytest.mark.parametrize("extra", [{}, {"service": "web"}])
def test_a_stock_why_beside_the_agent_s_own_values_is_not_hers(extra: dict) -> None:
    """Round 58's ``gen-rm``/``gen-2p``: 0.52 by round 57's rule (why + layout over the plan)."""
    assert why_strength("restart the service") == 0.5
    mine = _one("gen", "restart the service", "bounce web", "bounce the web tier", **extra)
    assert _made(_stock("gen-old"), mine) == pytest.approx(0.04, abs=0.01)


def test_a_stock_why_with_most_of_her_values_kept_is_hers() -> None:
    """A short why is half the evidence: three of her four params beside it make the rest."""
    hers = _stock("gen-old", target="api-1", ticket="OPS-1", window="sun")
    moved = _copy(hers)
    moved["actions"][0]["params"]["tag"] = "gen-new"
    assert _made(hers, moved) >= 0.7


# Round 59: a call compared as its tool receives it; a why alone is no action of hers.

_AWHY = "agent: run the maintenance step that the ticket below describes in full detail"


def _respelled(params: dict, plan: dict | None = None, actions: list | None = None) -> dict:
    doc = _hers()
    doc["plan"].update(plan or {})
    doc["actions"][0].update(why=_AWHY, params=params, id=len(actions or []) + 1)
    doc["actions"] = [*(actions or []), doc["actions"][0]]
    return doc


def _echo(i: int, params: dict) -> dict:
    return {"id": i, "tool": "echo", "why": f"agent: stage part {i}", "params": params}


@pytest.mark.parametrize("form", ["$<plan.{}>", "${{plan.{}}}"])
def test_her_values_through_the_plan_s_fields_are_her_call(form: str) -> None:
    """``plan-name``/``legacy-plan``: her tag as ``plan.name``, her command as ``plan.task``."""
    her = _hers()["actions"][0]["params"]
    params = dict(her, tag=form.format("name"), command=form.format("task"))
    new = _respelled(params, {"name": her["tag"], "task": her["command"]})
    assert _made(_hers(), new) >= 0.7


def test_her_values_through_an_index_into_a_list_input_are_her_call() -> None:
    her = _hers()["actions"][0]["params"]
    new = _respelled({k: f"$<inputs.p[{i}]>" for i, k in enumerate(her)})
    new["inputs"] = {"p": list(her.values())}
    assert leaves(new) == leaves(_respelled(dict(her)))


@pytest.mark.parametrize("split", [False, True])
def test_her_values_staged_in_echo_actions_are_her_call(split: bool) -> None:
    """``echo-nest``/``echo-split``: an echo's result is its params, read back by path."""
    her = _hers()["actions"][0]["params"]
    keys = list(her)
    if split:
        stage = [_echo(1, {k: her[k] for k in keys[:2]}), _echo(2, {k: her[k] for k in keys[2:]})]
        params = {k: f"$<actions[{1 if k in keys[:2] else 2}].result.{k}>" for k in keys}
    else:
        stage = [_echo(1, {"p": dict(her)})]
        params = {k: f"$<actions[1].result.p.{k}>" for k in keys}
    assert _made(_hers(), _respelled(params, actions=stage)) >= 0.6


def test_a_real_tool_s_result_is_not_resolved() -> None:
    doc = _respelled({"tag": "$<actions[1].result.tag>"}, actions=[dict(_echo(1, {}), tool="rec")])
    assert (("actions", ("id", '"2"'), "params", "tag"), '"$<actions[1].result.tag>"') in leaves(
        doc
    )


@pytest.mark.parametrize(
    ("hers", "spelled"),
    [
        (0, "0"),
        (True, "true"),
        (["db1", "db2"], '["db1","db2"]'),
        ({"drain": True}, '{"drain":true}'),
    ],
)
def test_a_value_is_what_the_tool_receives_whatever_its_type(hers: object, spelled: str) -> None:
    """``ty-*``: an exec tool's argv renders ``0`` and ``"0"`` alike; other texts stay text."""
    assert leaves(_one("a", "w", value=hers)) == leaves(_one("a", "w", value=spelled))
    for text in ("00", "1.0", '"0"', "True", "[1, 2]", "NaN"):
        assert leaves(_one("a", "w", value=text)) != leaves(_one("a", "w", value=json.loads("0")))


def test_a_template_s_long_why_with_the_agent_s_own_values_is_not_hers() -> None:
    """``t-*``: last week's plan of hers, this week's of the agent, one runbook sentence."""
    why = "restart the api service so it loads the rotated certificates"
    name, task = "weekly api restart", "restart the api after the weekly certificate rotation"
    old = _one("t-old", why, name, task)
    assert _made(old, _one("t", why, name, task)) == pytest.approx(0.12, abs=0.01)
    assert _made(old, _one("t", why, name, task, week=48)) < 0.15
    assert _made(old, _one("t", why, "api restart, week 48", "pick up the certs")) < 0.1


# Round 60: her call read back from a declared output, a real tool's result or a pinned
# plan's outputs.


def _rec(i: int, params: dict, why: str = _AWHY) -> dict:
    return {"id": i, "tool": "rec", "why": why, "params": params}


def _read_back(stage: dict, form: str, why: str = _AWHY, literal: tuple[str, ...] = ()) -> dict:
    """Her plan rewritten: ``stage`` first, then ``rec`` reading each param by ``form``."""
    her = _hers()["actions"][0]["params"]
    params = {k: her[k] if k in literal else form.format(k=k) for k in her}
    doc = _respelled(params, actions=[stage])
    doc["actions"][-1]["why"] = why
    return doc


@pytest.mark.parametrize("query", ["$.p.{k}", "$['p']['{k}']"])
def test_an_echo_s_declared_outputs_are_evaluated_on_its_params(query: str) -> None:
    """``echo-out``/``echo-out-br``: the outputs' query run on the echo's result."""
    her = _hers()["actions"][0]["params"]
    stage = _echo(1, {"p": dict(her)})
    stage["outputs"] = [{"name": k, "path": query.format(k=k)} for k in her]
    new = _read_back(stage, "$<actions[1].outputs.{k}>")
    assert leaves(new) == leaves(_respelled(dict(her), actions=[stage]))
    assert _made(_hers(), new) >= 0.7


def test_an_echo_output_the_query_misses_stays_as_written() -> None:
    stage = _echo(1, {"p": {"a": 1}})
    stage["outputs"] = [{"name": "x", "path": "$.q"}, {"name": "y", "path": "$[?"}]
    reads = {"tag": "$<actions[1].outputs.x>", "t": "$<actions[1].outputs.y>"}
    doc = _respelled(reads, actions=[stage])
    found = {value for _path, value in leaves(doc)}
    assert {'"$<actions[1].outputs.x>"', '"$<actions[1].outputs.y>"'} <= found


@pytest.mark.parametrize(
    ("form", "nested", "why", "literal"),
    [
        ("$<actions[1].result.json.echo.p.{k}>", True, _AWHY, ()),  # exec-res
        ("$<actions[1].outputs.{k}>", True, _AWHY, ()),  # exec-out, lib-in
        ("$<actions[1].result.json.echo.p.{k}>", True, _WHY, ()),  # exec-why
        ("$<actions[1].result.json.echo.p.{k}>", True, _AWHY, ("tag", "target")),  # exec-half
        ("$<actions[1].result.json.echo.p>", False, _AWHY, ()),  # a whole subtree read back
    ],
)
def test_her_values_staged_in_a_real_tool_s_call_are_her_call(
    form: str, nested: bool, why: str, literal: tuple[str, ...]
) -> None:
    """A real tool's result may hand its params back: a reference to it stands in for her
    value the plan carries elsewhere (round 60: 0.76, her reason kept 0.95)."""
    her = _hers()["actions"][0]["params"]
    staged = {k: v for k, v in her.items() if k not in literal}
    stage = _rec(1, {"tag": "stage", "p": staged})
    if nested:
        new = _read_back(stage, form, why, literal)
    else:
        new = _respelled({"p": form}, actions=[stage])
        old = _hers()
        old["actions"][0]["params"] = {"p": dict(her)}
        assert _made(old, new) >= 0.7
        return
    assert _made(_hers(), new) >= (0.9 if why == _WHY else 0.7)


def test_her_values_as_a_pinned_library_s_inputs_read_back_are_her_call() -> None:
    """``lib-in``: her values as the inputs ``a``..``d`` of the agent's pinned library."""
    her = _hers()["actions"][0]["params"]
    letters = dict(zip(her, "abcd", strict=False))
    pin = {
        "id": 1,
        "plan": {"path": "plans/lib-stage", "hash": "sha256:ab"},
        "why": "agent: stage the values",
        "inputs": {letters[k]: v for k, v in her.items()},
    }
    new = _respelled({k: f"$<actions[1].outputs.{letters[k]}>" for k in her}, actions=[pin])
    assert _made(_hers(), new) >= 0.7


def test_a_reference_is_never_more_hers_than_the_value_written_in() -> None:
    """A result standing in for a value the plan carries reads as that value written there."""
    why = "restart the api service so it loads the rotated certificates"
    name, task = "weekly api restart", "restart the api after the weekly certificate rotation"
    old = _one("t-old", why, name, task, host="api-1", region="eu-west-1")
    stage = _rec(1, {"tag": "t-stage", "p": {"tag": "t", "host": "api-1", "region": "eu-west-1"}})
    new = _one("t", why, name, task)
    reads = {k: f"$<actions[1].result.json.echo.p.{k}>" for k in ("tag", "host", "region")}
    new["actions"] = [stage, _rec(2, reads, why)]
    literal = _one("t", why, name, task, host="api-1", region="eu-west-1")
    assert _made(old, new) <= _made(old, literal)


@pytest.mark.parametrize("shared", [(), ("target",), ("target", "ticket")])
def test_the_agent_s_own_values_read_from_a_result_are_not_hers(shared: tuple) -> None:
    """Honest plans that read results heavily: the agent's own values (or her target and
    ticket only) staged and read back at her keys; her reason kept beside her target alone
    (half her params beside her reason is her action, written in or read back alike)."""
    her = _hers()["actions"][0]["params"]
    own = {"tag": "own", "target": "replica-7", "command": "VACUUM", "ticket": "OPS-9"}
    own.update({k: her[k] for k in shared})
    for why in (_AWHY, _WHY)[: 2 if len(shared) < 2 else 1]:
        new = _read_back(_rec(1, {"tag": "lookup", "p": own}), "$<actions[1].result.json.p.{k}>")
        new["actions"][-1]["why"] = why
        assert _made(_hers(), new) < 0.1


def test_a_template_s_weeks_reading_results_stay_apart() -> None:
    """``t-*`` and round 55's runbooks with each step reading an earlier result."""
    why = "restart the api service so it loads the rotated certificates"
    name, task = "weekly api restart", "restart the api after the weekly certificate rotation"
    new = _one("t", why, name, task)
    new["actions"] = [
        _rec(1, {"tag": "t-stage", "p": {"tag": "t"}}),
        _rec(2, {"tag": "$<actions[1].result.json.echo.p.tag>"}, why),
    ]
    assert _made(_one("t-old", why, name, task), new) == pytest.approx(0.12, abs=0.01)
    runbook = _runbook("a", "prune logs")
    for action in runbook["actions"][1:]:
        action["params"]["tag"] = "$<actions[1].result.json.tag>"
    assert _made(_runbook("a-old", "rotate keys"), runbook) < 0.01


def test_her_values_joined_from_a_real_tool_s_result_in_a_text_are_her_call() -> None:
    """``echo-cat`` through a real tool: each value's halves staged, joined in a text."""
    her = _hers()["actions"][0]["params"]
    halves = {k: (v[: len(v) // 2], v[len(v) // 2 :]) for k, v in her.items()}
    stage = _rec(1, {"tag": "stage", "a": {k: h[0] for k, h in halves.items()}})
    stage["params"]["b"] = {k: h[1] for k, h in halves.items()}
    form = "$<actions[1].result.json.echo.a.{k}>$<actions[1].result.json.echo.b.{k}>"
    assert _made(_hers(), _read_back(stage, form)) >= 0.7


def test_a_text_of_results_holding_the_agent_s_own_values_is_not_hers() -> None:
    """A text filled from results splits her value only into values the plan carries."""
    stage = _rec(1, {"tag": "lookup", "name": "sessions_2019"})
    new = _read_back(stage, "{k}-$<actions[1].result.json.echo.name>")
    assert _made(_hers(), new) < 0.1
    new = _read_back(stage, "DROP TABLE $<actions[1].result.json.echo.name>")
    assert _made(_hers(), new) < 0.1


# Round 62: a reference stands in for her value only where the plan fed that value to the
# producer it reads (or upstream of it), under a key the read names.


def test_her_values_joined_in_a_second_staging_call_are_her_call() -> None:
    """``two-hop``: halves staged in one ``rec`` call, joined in a second under other keys,
    read back whole at her keys: the join's producer was fed what the first hands back."""
    her = _hers()["actions"][0]["params"]
    halves: dict[str, str] = {"tag": "s1"}
    for k, v in her.items():
        halves[f"{k}1"], halves[f"{k}2"] = v[: len(v) // 2], v[len(v) // 2 :]
    joined = {
        k: f"$<actions[1].result.json.echo.{k}1>$<actions[1].result.json.echo.{k}2>" for k in her
    }
    stages = [_rec(1, halves), _rec(2, {"tag": "s2", "j": joined})]
    new = _respelled({k: f"$<actions[2].result.json.echo.j.{k}>" for k in her}, actions=stages)
    assert _made(_hers(), new) >= 0.7


def _lookup(read: str) -> tuple[dict, dict]:
    """``hon-standby``: her restart of api-3; the agent's plan asks ``look`` (its own keys)
    for the standby of api-3 and restarts the host it names, region and ticket read too."""
    why = "alice: restart api-3 after the certificate rotation so it loads the new chain"
    old = _one("unused", why, "restart api-3", "OPS-9: restart api-3")
    old["actions"][0]["tool"] = "restart"
    old["actions"][0]["params"] = {"host": "api-3", "region": "eu-west-1", "ticket": "OPS-9"}
    look = {
        "id": 1,
        "tool": "look",
        "why": "agent: find the standby of api-3",
        "params": {"name": "api-3", "zone": "eu-west-1", "ref": "OPS-9"},
    }
    keys = {"host": "standby", "region": "zone", "ticket": "ref"}
    restart = {
        "id": 2,
        "tool": "restart",
        "why": "agent: restart the standby that serves api-3 for the same ticket",
        "params": {k: read.format(k=v) for k, v in keys.items()},
    }
    new = _copy(old)
    new["plan"]["name"] = "hon-standby"
    new["actions"] = [look, restart]
    return old, new


def test_a_lookup_fed_her_value_whose_answer_is_read_is_not_hers() -> None:
    """``hon-standby``: api-3 fed to ``look`` as its ``name``; its ``standby`` read at her
    ``host``: no stand-in (the read names another key), as with ``api-4`` written in."""
    old, new = _lookup("$<actions[1].result.json.{k}>")
    written = _copy(new)
    written["actions"][1]["params"] = {"host": "api-4", "region": "eu-west-1", "ticket": "OPS-9"}
    assert _made(old, new) <= _made(old, written) < MOVE_KEPT


def test_a_pinned_lookup_fed_her_values_is_not_hers() -> None:
    """``hon-pin``: the team's lookup library pinned with api-3 etc. as its inputs."""
    old, new = _lookup("$<actions[1].outputs.{k}>")
    new["actions"][0] = {
        "id": 1,
        "plan": {"path": "plans/lookup-lib", "hash": "sha256:ab"},
        "why": "agent: find the standby of api-3",
        "inputs": {"name": "api-3", "zone": "eu-west-1", "ref": "OPS-9"},
        "outputs": [{"name": x, "path": f"$.outputs['1'].{x}"} for x in ("standby", "zone", "ref")],
    }
    assert _made(old, new) < MOVE_KEPT


def test_a_pinned_library_s_input_defaults_are_what_it_receives() -> None:
    """``lib-early``: the library (committed while her draft stood) holds her values as
    input DEFAULTS; pinned with no inputs, its outputs read at her keys. Read as of the pin,
    the defaults are its call's params; unread (no reader), nothing stands in."""
    her = _hers()["actions"][0]["params"]
    letters = dict(zip(her, "abcd", strict=False))
    library = {"inputs": {letters[k]: v for k, v in her.items()}, "actions": []}
    pin = {
        "id": 1,
        "plan": {"path": "plans/lib-early-stage", "hash": "sha256:ab"},
        "why": "agent: stage the values",
        "outputs": [{"name": x, "path": f"$.outputs['1'].{x}"} for x in "abcd"],
    }
    new = _respelled({k: f"$<actions[1].outputs.{letters[k]}>" for k in her}, actions=[pin])

    def pinned(path: str, digest: str) -> dict | None:
        return library if (path, digest) == ("plans/lib-early-stage", "sha256:ab") else None

    assert made_share(leaves(_hers()), leaves(new, pinned)) >= 0.7
    assert _made(_hers(), new) < 0.1


def test_an_output_query_with_a_wildcard_names_every_key() -> None:
    """Her values staged under the agent's keys and read through ``$.json.echo.*`` (a list
    of every value staged): the query names no key, so it names them all."""
    her = _hers()["actions"][0]["params"]
    stage = _rec(1, {k.upper(): v for k, v in her.items()})
    stage["outputs"] = [{"name": "all", "path": "$.json.echo.*"}]
    new = _read_back(stage, "$<actions[1].outputs.all>")
    new["actions"][-1]["params"] = {k: f"$<actions[1].outputs.all[{i}]>" for i, k in enumerate(her)}
    assert _made(_hers(), new) >= 0.7


def _library(tool: str, params: dict, outputs: dict) -> dict:
    """A pinned library: one call of ``tool`` on its inputs, its outputs declared."""
    return {
        "plan": {"name": "lib", "task": "a library", "status": "draft"},
        "inputs": {"name": "x"},
        "actions": [
            {
                "id": 1,
                "tool": tool,
                "why": "the library's step",
                "params": params,
                "outputs": [{"name": k, "path": q} for k, q in outputs.items()],
            }
        ],
    }


@pytest.mark.parametrize(
    ("tool", "params", "query", "hers"),
    [
        ("echo", {"standby": "$<inputs.name>"}, "$.standby", True),  # a renaming library
        ("look", {"name": "$<inputs.name>"}, "$.json.standby", False),  # hon-pin's lookup
    ],
)
def test_a_pinned_plan_read_says_what_its_outputs_hand_back(
    tool: str, params: dict, query: str, hers: bool
) -> None:
    """Read as of the pin, a library's own calls say which key of what it was fed an output
    reads: an ``echo`` that renames her value to ``standby`` hands it back there; a lookup
    fed it as ``name`` answers ``standby`` of its own."""
    her = _hers()["actions"][0]["params"]
    library = _library(tool, params, {"standby": query})
    pin = {
        "id": 1,
        "plan": {"path": "plans/lib", "hash": "sha256:ab"},
        "why": "agent: find the standby",
        "inputs": {"name": her["target"]},
        "outputs": [{"name": "standby", "path": "$.outputs['1'].standby"}],
    }
    literal = ("tag", "command", "ticket")
    new = _read_back(pin, "$<actions[1].outputs.standby>", literal=literal)
    got = made_share(leaves(_hers()), leaves(new, lambda _p, _h: library))
    assert (got >= 0.7) if hers else (got < MOVE_KEPT)


# Round 63: the keys an output's query names are the names the run's engine parses from it.


@pytest.mark.parametrize(
    ("key", "query"),
    [
        ("{k}", '$.json.echo["\\u00{x}"]'),  # out-escape: the escape is the key
        ("k {k}", "$.json.echo['k {k}']"),  # out-space: a bracketed name with a blank
        ("{k}", "$.json.*['{k}']"),  # a later name narrows a wildcard to that key
        ("{k}", "$..['{k}']"),  # a descendant segment selects the members named so
    ],
)
def test_an_output_query_names_the_keys_the_engine_parses(key: str, query: str) -> None:
    """Her values staged under keys the queries reach by an escape, a bracketed blank, a
    wildcard then a name, or ``..``: each output names the key it selects, as the run reads."""
    her = _hers()["actions"][0]["params"]
    letters = dict(zip(her, "abcd", strict=False))
    names = {k: key.format(k=letters[k]) for k in her}
    stage = _rec(1, {"tag": "stage", **{names[k]: v for k, v in her.items()}})
    stage["outputs"] = [
        {"name": f"w{letters[k]}", "path": query.format(k=letters[k], x=f"{ord(letters[k]):02x}")}
        for k in her
    ]
    new = _read_back(stage, "$<actions[1].outputs.w{k}>")
    new["actions"][-1]["params"] = {k: f"$<actions[1].outputs.w{letters[k]}>" for k in her}
    assert _made(_hers(), new) >= 0.7


def test_a_descendant_query_names_what_it_selects_not_every_key() -> None:
    """``hon-desc``: round 62's lookup fed api-3 as its ``name``, its standby read through
    an output ``$..standby``: the query selects members named ``standby`` (api-4), so it
    stands in for nothing fed as ``name``, as with the answer written in."""
    old, new = _lookup("$<actions[1].outputs.{k}>")
    queries = {"standby": "$..standby", "zone": "$.json.zone", "ref": "$.json.ref"}
    new["actions"][0]["outputs"] = [{"name": k, "path": q} for k, q in queries.items()]
    written = _copy(new)
    written["actions"][1]["params"] = {"host": "api-4", "region": "eu-west-1", "ticket": "OPS-9"}
    assert _made(old, new) <= _made(old, written) < MOVE_KEPT
    new["actions"][0]["outputs"][0]["path"] = "$..*"  # every member below: every key
    assert _made(old, new) >= MOVE_KEPT


# Round 64: a descendant segment then an index or slice reads through every key it passes.


@pytest.mark.parametrize(
    ("query", "hers"),
    [
        ("$.json.echo..[0]", True),  # desc-index
        ("$.json.echo..[0:1]", True),  # desc-slice
        ("$..[-1]", True),  # desc-neg
        ("$.json.echo..[?@ == @][0]", True),  # a filter narrows nothing by name either
        ("$.json.echo..[0].other", False),  # a later name narrows it: no list item there
    ],
)
def test_a_descendant_index_names_every_key_it_passes(query: str, hers: bool) -> None:
    """Her four values staged as one-element lists under the agent's keys ``zz1``..``zz4``
    and read back at her keys through one output ``..[0]`` (``..[0:1]``, ``$..[-1]``): the
    output may hand back an item of a list under any key, so the references stand in."""
    her = _hers()["actions"][0]["params"]
    staged = {f"zz{i}": [v] for i, v in enumerate(her.values(), 1)}
    stage = _rec(1, {"tag": "stage", **staged})
    stage["outputs"] = [{"name": "all", "path": query}]
    new = _read_back(stage, "")
    new["actions"][-1]["params"] = {k: f"$<actions[1].outputs.all[{i}]>" for i, k in enumerate(her)}
    assert (_made(_hers(), new) >= 0.7) if hers else (_made(_hers(), new) < MOVE_KEPT)
