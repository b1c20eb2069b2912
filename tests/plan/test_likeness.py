"""Is this plan made from that one: content compared, spelling ignored (round 55)."""

from __future__ import annotations

import json

import pytest
from ruamel.yaml import YAML

from controller.plan.likeness import MOVE_LIKENESS, leaves, likeness


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


def _alike(old: dict, new: dict) -> float:
    return likeness(leaves(old), leaves(new))


def test_the_same_content_is_wholly_alike_whatever_its_status_or_blocks() -> None:
    mine = _runbook("a", "rotate keys")
    other = json.loads(json.dumps(mine))
    other["plan"]["status"] = "approved"
    other["frozen"] = {"hash": "sha256:00"}
    assert _alike(mine, other) == 1.0


def test_respelled_text_reads_as_the_same_leaves() -> None:
    yaml = YAML(typ="safe", pure=True)
    plain = 'plan:\n  name: "x"\n  task: "t"\nactions:\n  - id: 1\n    tool: rec\n'
    quoted = (
        '"plan":\n    "name": x\n    "task": t\n'
        '"actions":\n    -   "id": 1.0\n        "tool": rec\n'
    )
    assert leaves(yaml.load(plain)) == leaves(yaml.load(quoted))


def test_one_param_added_is_a_move() -> None:
    mine = _runbook("a", "rotate keys", steps=1)
    moved = json.loads(json.dumps(mine))
    moved["actions"][0]["params"]["note"] = "moved"
    assert _alike(mine, moved) == pytest.approx(0.9, abs=0.01)
    assert _alike(mine, moved) >= MOVE_LIKENESS


def test_two_plans_of_one_shape_are_not_one() -> None:
    """The layout every plan for ``rec`` shares weighs little: 0.33, below the threshold
    (equal raw lines judged them more than half alike)."""
    alike = _alike(_runbook("a-old", "rotate keys"), _runbook("a", "prune logs"))
    assert alike == pytest.approx(0.33, abs=0.01)
    assert alike < MOVE_LIKENESS


def test_an_action_inserted_moves_no_other() -> None:
    mine = _runbook("a", "rotate keys", steps=4)
    grown = json.loads(json.dumps(mine))
    grown["actions"].insert(1, {"id": 9, "tool": "rec", "why": "new", "params": {"tag": "a"}})
    assert _alike(mine, grown) > 0.85


def test_layout_alone_is_alike_only_when_equal() -> None:
    bare = {"actions": [{"id": 1, "tool": "rec"}]}
    assert _alike(bare, bare) == 1.0
    assert _alike({"plan": {}}, {"actions": []}) == 1.0  # nothing to weigh on either side
    assert _alike(bare, {"actions": [{"id": 2, "tool": "echo"}]}) == 0.0
