"""Is this plan made from that one? Two plans compared by their CONTENT, not their spelling.

Round 55: pairing a plan a commit adds with one it removes by equal raw lines judged the
wrong thing both ways. A plan respelled (another indent, quoted keys, trailing blanks, or
``PLAN.json``) with one param added shares no line with its source, while two unrelated
plans for one tool share most of their lines (``- id: N``, ``tool: rec``, ``params:``).

So the two documents are compared as the hash sees them (:func:`hashing.hashed_view`): as
their leaves, each a (path, value) pair, where an item of a list of mappings with an ``id``
is named by that id (an action inserted before it moves no other action), and the value is
its canonical JSON (``1`` and ``1.0``, ``"a"`` and ``'a'`` alike). What distinguishes a
plan, its values (params, reasons), weighs :data:`VALUE_WEIGHT`; what every plan for one
tool or of one template shares weighs :data:`LAYOUT_WEIGHT`: the layout (action ids, tool
names, ``needs``, the tools list) and the template's strings (``plan.name``, ``plan.task``:
a recurring plan's every week carries them, round 56).

Round 56: the pairing asks how much of the OLD plan survives in the new one
(:func:`kept_share`: the weight of the old plan's leaves found unchanged in the new one
over the old plan's weight), not how alike the two are both ways: a plan moved with 6 or 12
actions or 10 params added kept all of its source yet fell under 0.5 by the Dice likeness of
round 55. And an action of the old plan counts only if it SURVIVES: its ``why`` is found
unchanged, or everything else it says (what it runs: tool params, a pinned plan) is. The
params every plan run on one target shares (host, region, port, user, database) then count
for nothing when the action is another's: round 56's ``sp``, the agent's own plan for the
database of an approver's abandoned one, five params of seven equal, no ``why`` or tag.

Measured on the labs (the unit tests in ``tests/plan/test_likeness.py`` keep them): real
moves keep 1.0 of their source (round 56's moves over a plan file, swaps, moves with 6 or 12
actions or 10 params added; round 55's respelled moves with a param added), 0.89 and more
with a param's value edited; pairs that are no move keep at most 0.12 (round 56's ``sp`` and
recurring weeks: only the tools list and the template's strings) and 0.04 (round 55's
runbook against an approver's unrelated one for the same tool). :data:`MOVE_KEPT` (0.5)
lies between the two groups with room on both sides.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

from controller.plan.hashing import canonical_bytes, hashed_view

#: At this share kept or more a plan a commit writes is made from a plan that commit removes.
MOVE_KEPT = 0.5
#: The weight of a leaf that distinguishes a plan (a value: task, name, a param, a reason).
VALUE_WEIGHT = 1.0
#: The weight of a leaf every plan for one tool shares (an action id, a tool name).
LAYOUT_WEIGHT = 0.1
#: Keys whose values are layout wherever they are.
LAYOUT_KEYS = frozenset({"id", "tool", "needs"})
#: Top-level keys whose whole value is layout (the tools a plan declares).
LAYOUT_BLOCKS = frozenset({"available_tools"})
#: Paths whose value a template gives every plan it makes (round 56: weekly plans).
TEMPLATE_PATHS = frozenset({("plan", "name"), ("plan", "task")})
#: The key of an action whose value says what it is for.
WHY = "why"

#: A path of keys (str) and list items (("id", its id) or ("#", its index)), and a value.
Leaf = tuple[tuple[Any, ...], str]


def leaves(document: dict[str, Any]) -> Counter[Leaf]:
    """The hashed content of a plan document as a multiset of (path, canonical value)."""
    return Counter(_walk(hashed_view(document), ()))


def _walk(value: Any, path: tuple[Any, ...]) -> Iterator[Leaf]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            name = item.get("id") if isinstance(item, dict) else None
            step = ("#", index) if name is None else ("id", _canonical(name))
            yield from _walk(item, (*path, step))
    else:
        yield path, _canonical(value)


def _canonical(value: Any) -> str:
    """A leaf's value as the hash sees it (RFC 8785: ``1.0`` is ``1``)."""
    try:
        return canonical_bytes(value).decode("utf-8")
    except Exception:  # a value JCS refuses (the plan is then refused too): as written
        return json.dumps(value, sort_keys=True, default=str)


def weight(leaf: Leaf) -> float:
    """How much a leaf says about which plan it is (layout little, values much)."""
    keys = [part for part in leaf[0] if isinstance(part, str)]
    if leaf[0] in TEMPLATE_PATHS:
        return LAYOUT_WEIGHT
    if keys and (keys[0] in LAYOUT_BLOCKS or keys[-1] in LAYOUT_KEYS):
        return LAYOUT_WEIGHT
    return VALUE_WEIGHT


def kept_share(old: Counter[Leaf], new: Counter[Leaf]) -> float:
    """How much of the old plan the new one keeps (0 to 1): the weight of the old plan's
    leaves found unchanged in the new one over the old plan's weight, an action's leaves
    counting only when the action survives (:func:`_survives`). Additions do not dilute it."""
    total = _weight_of(old)
    if not total:
        return 1.0 if old == new else 0.0
    both = old & new
    lost = {step for step, said in _by_action(old).items() if not _survives(said, both)}
    kept = Counter({leaf: n for leaf, n in both.items() if _action_of(leaf) not in lost})
    return _weight_of(kept) / total


def _action_of(leaf: Leaf) -> Any:
    """The step naming the action a leaf lies in (None: not in an action)."""
    path = leaf[0]
    return path[1] if len(path) > 2 and path[0] == "actions" else None


def _by_action(found: Counter[Leaf]) -> dict[Any, list[Leaf]]:
    """The leaves of each action that say something (not its layout), by its step."""
    grouped: dict[Any, list[Leaf]] = {}
    for leaf in found:
        step = _action_of(leaf)
        if step is not None:
            said = grouped.setdefault(step, [])
            if weight(leaf) == VALUE_WEIGHT:
                said.append(leaf)
    return grouped


def _survives(said: list[Leaf], both: Counter[Leaf]) -> bool:
    """An old action survives when its ``why`` is kept, or all else it says is (what it
    runs); its layout and the params plans for one target share alone do not make it."""
    if not said:  # layout alone: kept as it is
        return True
    why = [leaf for leaf in said if leaf[0][2:] == (WHY,)]
    rest = [leaf for leaf in said if leaf[0][2:] != (WHY,)]
    if why and all(leaf in both for leaf in why):
        return True
    return bool(rest) and all(leaf in both for leaf in rest)


def _weight_of(found: Counter[Leaf]) -> float:
    return sum(weight(leaf) * n for leaf, n in found.items())
