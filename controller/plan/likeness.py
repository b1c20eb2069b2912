"""Is this plan made from that one? Two plans compared by their CONTENT, not their spelling.

Round 55: pairing a plan a commit adds with one it removes by equal raw lines judged the
wrong thing both ways. A plan respelled (another indent, quoted keys, trailing blanks, or
``PLAN.json``) with one param added shares no line with its source, while two unrelated
plans for one tool share most of their lines (``- id: N``, ``tool: rec``, ``params:``).

So the two documents are compared as the hash sees them (:func:`hashing.hashed_view`): as
their leaves, each a (path, value) pair, where an item of a list of mappings with an ``id``
is named by that id (an action inserted before it moves no other action), and the value is
its canonical JSON (``1`` and ``1.0``, ``"a"`` and ``'a'`` alike). What distinguishes a
plan, its values (task, names, params, reasons), weighs :data:`VALUE_WEIGHT`; the layout
every plan for one tool shares (action ids, tool names, ``needs``, the tools list) weighs
:data:`LAYOUT_WEIGHT`. The likeness is the weighted Dice coefficient of the two multisets
of leaves: twice the weight they share over the weight of both (0 to 1).

Measured on the labs of the move modules (rounds 17, 34, 37, 50, 51, 55; the unit tests in
``tests/plan/test_likeness.py`` keep two): real moves with an edit score 0.77 (round 50's
carried plans, round 17's), 0.90 (round 37's move-edit, round 55's respelled moves with one
param added), 0.96 (round 51's move-score) and 1.0; pairs that are no move score at most
0.33 (round 55's agent runbook against an approver's unrelated one for the same tool, which
git scored 38 and equal lines over 0.5), 0.25 and 0.13. :data:`MOVE_LIKENESS` (0.5, git's
rename threshold) lies between the two groups with room on both sides.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

from controller.plan.hashing import canonical_bytes, hashed_view

#: At this likeness or more a plan added in a commit is made from a plan that commit removes.
MOVE_LIKENESS = 0.5
#: The weight of a leaf that distinguishes a plan (a value: task, name, a param, a reason).
VALUE_WEIGHT = 1.0
#: The weight of a leaf every plan for one tool shares (an action id, a tool name).
LAYOUT_WEIGHT = 0.1
#: Keys whose values are layout wherever they are.
LAYOUT_KEYS = frozenset({"id", "tool", "needs"})
#: Top-level keys whose whole value is layout (the tools a plan declares).
LAYOUT_BLOCKS = frozenset({"available_tools"})

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
    if keys and (keys[0] in LAYOUT_BLOCKS or keys[-1] in LAYOUT_KEYS):
        return LAYOUT_WEIGHT
    return VALUE_WEIGHT


def likeness(old: Counter[Leaf], new: Counter[Leaf]) -> float:
    """Weighted Dice coefficient of two plans' leaves: 1 for the same content, 0 for none
    in common."""
    total = _weight_of(old) + _weight_of(new)
    if not total:
        return 1.0 if old == new else 0.0
    return 2 * _weight_of(old & new) / total


def _weight_of(found: Counter[Leaf]) -> float:
    return sum(weight(leaf) * n for leaf, n in found.items())
