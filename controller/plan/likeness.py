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

Round 57: one way was gamed three ways, so the pairing now asks :func:`made_share`: the share
of the old plan kept OR the share of the new plan that is the old plan's unchanged content,
whichever is more (her plan moved out of a draft the agent padded first is 0.78 hers though it
keeps 0.2 of the padded draft; one of her three actions alone is 0.97 hers). Actions are
matched one to one by what they say, not their ids (a cut-down plan renumbers them), and an
action whose ``why`` is kept or reworded by a word or two (:data:`NEAR_WHY`) counts its
unchanged leaves one by one (one word of each ``why`` and a port changed: 0.68 kept). The
honest pairs stay low both ways: ``sp`` 0.013, recurring weeks 0.09, runbooks 0.004.

Round 58: leaves at their place in an action missed her call written elsewhere, and a short
stock ``why`` made the agent's own action hers. So a plan is read as the CALLS it can make
(:func:`calls_view`): each action, fallback step, precondition, ``verify`` tool and
plan-level precondition is one call (a nested plan's ``inputs`` its params), with every
``$<inputs.K>`` / ``${inputs.K}`` resolved to the plan's input. Her call carried anywhere
is her content: her values through ``inputs`` 0.98 hers (her ``why`` moved to
``plan.task``, the action's the agent's: 0.8), her action as a fallback step or a pinned
plan's inputs 0.98, her call as a precondition, ``verify`` or plan precondition 0.75. And
an action survives when what it RUNS does (all its params, a pinned plan), or its ``why``
is kept with the evidence it carries (:func:`why_strength`: its words over
:data:`WHY_WORDS`, 6) and the share of what it runs kept (both ways) together making 1: a
stock "restart the service" (0.5) beside the agent's own tag or two params is no action of
hers (round 58's ``gen-*``: 0.52 by round 57's rule, 0.04 now); beside three of her four
params kept it is (0.82). Reasons of 6 words or more are whole evidence as before (round
57's 7- and 12-word ones, round 58's 12).

Round 59: her call was routed past the view (``$<plan.name>``, an index into a list input, an
``echo`` action's result, a value respelled as another JSON type), and a runbook's long
``why`` made the agent's own weekly plan hers. So each call says what its tool RECEIVES
(:class:`_Known`, :func:`received`), and a ``why`` weighs at most :data:`WHY_MAX` (0.5)
whatever its length: this week's template plan is 0.12 of last week's (0.6 before); round
57's reworded reasons (0.8 of what they run kept) and round 58's stock reason with three of
four params (0.75) still make the action hers.

Round 60: her call was read back from a result the view did not resolve: an ``echo``'s
declared ``outputs``, an earlier call of a real tool that hands its params back, a pinned
library's outputs fed her values. So an ``echo``'s outputs are evaluated on its known result
with the run's JSONPath engine (:meth:`_Known._output`), and a reference to a result the
plan cannot fix stands in for her value at its place when the new plan carries that value
anywhere, or a text of them where her value splits into carried texts along it
(:func:`_standing_in`): 0.76 hers (0.95 with her reason). It never stands for more
than the value written there, so the agent's own plans reading results stay its own (its
own values read back at her keys 0.055, template weeks 0.12, runbooks 0.004).

Round 62: "carried anywhere" was too broad and too narrow. The agent's lookup fed her host
``api-3`` (as its own ``name``) and the host it answers (``api-4``) was read at her ``host``:
refused though the tool gets another host; and her halves joined in a SECOND staging call,
or her values as a pinned library's input DEFAULTS, were carried nowhere whole. So a
reference stands in for her value only when the plan FED that value to the producer it reads
(:class:`_Fed`): to that call's params (a pinned plan's inputs over its defaults, read as of
the pin: :func:`_pin_inputs`; the pinned plan's own calls so fed, when it can be read, say
which key an output reads), or joined there from what a producer upstream could hand back
(references followed transitively), under a key the read names (the reference's path, the
words of a declared output's query, her path below the place). The lookup's answer is then
two of her three params beside another reason: 0.044, as with ``api-4`` written in; the
two-hop join (0.8) and the library's defaults (0.8) are her call.

Round 63: the keys a declared output's query names were the WORDS of its text, so an escape
(``$.json.echo["\\u0061"]``) or a bracketed blank (``['k 1']``) named nothing of what it
reads, and ``..`` named every key. They are now the names the run's engine parses
(:func:`jsonpaths.named_keys`): a descendant ``..standby`` names ``standby``, a wildcard or
filter every key only in the last segment (a later name narrows it). A lookup fed her values
under her own keys and read at ``json.standby.host`` stays hers (an accepted limit: to the
plan it is ``rec``'s ``json.echo.host``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from controller.errors import PlangateError
from controller.plan import jsonpaths, refs
from controller.plan.hashing import canonical_bytes, canonical_order, hashed_view

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
#: At this word likeness or more an action's ``why`` is its old one reworded (round 57: one
#: word of a 12-word reason changed is 0.92, of a 7-word one 0.86; one template's reasons
#: "record that variant a-old ran" and "... a ran" are 0.8, "rotate keys step 2" and "prune
#: logs step 2" 0.5).
NEAR_WHY = 0.85
#: A ``why``'s evidence grows with its words over this many (kept or reworded:
#: :data:`NEAR_WHY`) up to :data:`WHY_MAX` (round 58: a stock "restart the service", 3
#: words, is half the evidence and needs half of what the action runs kept beside it; round
#: 59: so does a longer one).
WHY_WORDS = 6
#: The most a ``why`` (kept or reworded) weighs as evidence, whatever its length (round 59:
#: a runbook's ten-word reason shared by last week's plan of hers and this week's of the
#: agent, every param the agent's own, made its plan hers). The rest is what the action
#: runs: at least half of it kept (both ways: :func:`_share`). Measured: round 57's
#: reworded reasons keep 0.8 of what they run (a port changed), round 58's stock reason
#: with three of four params 0.75; this week's template plan 0 (its tag, its week).
WHY_MAX = 0.5
#: Keys of an action (or fallback step) that are calls of their own (round 58): its
#: checks, its fallback steps. Each is compared as a call, apart from the action.
CALL_KEYS = ("preconditions", "verify", "fallback")
#: The plan's fields a reference may read whose value the plan file itself holds (round 59).
STATIC_PLAN_FIELDS = ("name", "task")
#: Tools whose result is their params (the catalog's ``echo``: "returns its params"), so a
#: reference to their result reads the value their params hold there (round 59).
ECHO_TOOLS = frozenset({"echo"})
#: The key under which a pinned call carries the calls of the plan it pins, as fed (round
#: 62): evidence of what its outputs can hand back, no content of the parent (weight 0).
PINNED = "pinned"
#: The first characters of a JSON text that is no string (a number, true, false, null, a
#: list, a mapping).
_JSON_STARTS = frozenset("-0123456789tfn[{")
_MISSING = object()
#: A value of hers longer than this is not split along a text of references (round 60: the
#: split tries every cut, so its cost grows with the square of the length).
SPLIT_CHARS = 512
#: A value held by more new actions than this finds no match by itself (the action of the
#: same id is always compared).
MATCH_FANOUT = 32
#: The read key of a query that may select a member under any key (``$.json.echo.*``, a
#: filter): it names every key.
ANY_KEY = "*"

#: A path of keys (str) and list items (("id", its id) or ("#", its index)), and a value.
Leaf = tuple[tuple[Any, ...], str]


#: (path, pinned hash) -> the pinned plan's parsed data, or None (:data:`nested.Reader`).
PinReader = Callable[[str, str], "dict[str, Any] | None"]


def leaves(document: dict[str, Any], pinned: PinReader | None = None) -> Counter[Leaf]:
    """The hashed content of a plan document as a multiset of (path, canonical value), its
    actions read as the CALLS the plan can make (:func:`calls_view`, round 58); ``pinned``
    reads the plans it pins as of the pin (round 62: their input defaults)."""
    return Counter(_walk(calls_view(hashed_view(document), pinned), ()))


def calls_view(view: dict[str, Any], pinned: PinReader | None = None) -> dict[str, Any]:
    """A plan's hashed view with ``actions`` rewritten as the list of every call the plan can
    make, wherever the plan file writes it (round 58: her call carried as a fallback step, a
    check or a nested plan's inputs made the same tool call from leaves at other places):
    each action, each of its fallback steps, each precondition and ``verify`` tool of either,
    each plan-level precondition, as one item (tool, params, ``why``...); a nested action's
    ``inputs`` are the params of its call. Each call says what its tool RECEIVES (round 59,
    :class:`_Known`): every reference whose value the plan alone fixes is resolved (an input
    read is then said by the call, not twice), and a param is read as its value whichever
    JSON type spells it (:func:`received`). The rest of the plan (name, task, tools, unread
    inputs) stays where it is."""
    if not isinstance(view, dict):
        return view
    calls: list[Any] = []
    actions = view.get("actions")
    if isinstance(actions, list):
        for index, action in enumerate(actions):
            _calls_of(action, _name_of(action, index), calls, pinned)
    elif actions is not None:
        calls.append(actions)
    checks = view.get("preconditions")
    if isinstance(checks, list):
        for index, check in enumerate(checks):
            _calls_of(check, f"plan/pre/{index}", calls)
    found = {k: v for k, v in view.items() if k not in ("actions", "preconditions")}
    if checks is not None and not isinstance(checks, list):
        found["preconditions"] = checks
    known = _Known(view, calls)
    if actions is not None or calls:
        found["actions"] = [known.call(index) for index in range(len(calls))]
    inputs = known.inputs
    if inputs and known.used:
        left = {k: v for k, v in inputs.items() if k not in known.used}
        if left:
            found["inputs"] = left
        else:
            found.pop("inputs", None)
    return found


def _pin_inputs(action: dict[str, Any], pinned: PinReader | None) -> Any:
    """What a pinned plan receives (round 62's ``lib-early``: the agent's library, committed
    while her draft stood, held her values as input DEFAULTS and was pinned with no inputs):
    the inputs passed, over the pinned plan's own inputs as of the pin when it can be read;
    its calls so fed go to ``action[PINNED]`` (what its outputs can hand back: :class:`_Fed`)."""
    given = action.get("inputs")
    pin = action.get("plan")
    if pinned is None or not isinstance(pin, dict):
        return given
    path, digest = pin.get("path"), pin.get("hash")
    found = pinned(path, digest) if isinstance(path, str) and isinstance(digest, str) else None
    defaults = found.get("inputs") if isinstance(found, dict) else None
    if not isinstance(found, dict) or not (given is None or isinstance(given, dict)):
        return given
    merged = {**(defaults if isinstance(defaults, dict) else {}), **(given or {})}
    inner = calls_view(hashed_view({**found, "inputs": merged}))
    calls = inner.get("actions")
    if isinstance(calls, list):
        keep = ("id", "params", "outputs")
        action[PINNED] = [{k: c[k] for k in keep if k in c} for c in calls if isinstance(c, dict)]
    return merged


def _name_of(item: Any, index: int) -> str:
    name = item.get("id") if isinstance(item, dict) else None
    return f"#{index}" if name is None else _canonical(name)


def _calls_of(item: Any, name: str, calls: list[Any], pinned: PinReader | None = None) -> None:
    """One action, step or check as calls: itself (its own keys, a nested plan's ``inputs``
    as its params, with the defaults of those it does not pass: :func:`_pin_inputs`) and
    those it holds (:data:`CALL_KEYS`), each named under it."""
    if not isinstance(item, dict):
        calls.append(item)
        return
    own = {k: v for k, v in item.items() if k not in CALL_KEYS}
    if "plan" in own and "params" not in own:
        own.pop(PINNED, None)  # only the pinned plan itself says what it runs
        given = _pin_inputs(own, pinned)
        own.pop("inputs", None)
        if given is not None:
            own["params"] = given
    own["id"] = name
    calls.append(own)
    for key in CALL_KEYS:
        held = item.get(key)
        if held is None:
            continue
        if isinstance(held, list):
            for index, sub in enumerate(held):
                _calls_of(sub, f"{name}/{key}/{_name_of(sub, index)}", calls, pinned)
        elif isinstance(held, dict):
            _calls_of(held, f"{name}/{key}", calls, pinned)
        else:
            own[key] = held


class _Known:
    """What the plan alone says a reference reads (round 59: her values reached through
    ``$<plan.name>``, an index into a list input or an ``echo`` action's result ran on her
    own approval): an input at any path, ``plan.name``/``plan.task``, and the result of an
    action whose tool returns its params (:data:`ECHO_TOOLS`), read from those params
    resolved in turn. Legacy ``${...}`` is read as the freeze converts it
    (:func:`refs.convert_legacy`, the one rule). Anything else (an output of a real tool,
    ``approval``, ``secrets``, a reference that reads nothing) stays as written."""

    def __init__(self, view: dict[str, Any], calls: list[Any]) -> None:
        given, plan = view.get("inputs"), view.get("plan")
        self.inputs: dict[str, Any] = given if isinstance(given, dict) else {}
        fields = plan if isinstance(plan, dict) else {}
        self.plan = {k: fields[k] for k in STATIC_PLAN_FIELDS if k in fields}
        self.calls = calls
        self.used: set[str] = set()
        self.done: dict[int, Any] = {}
        self.busy: set[int] = set()
        self.echoes = {
            call["id"]: index
            for index, call in enumerate(calls)
            if isinstance(call, dict) and call.get("tool") in ECHO_TOOLS and "/" not in call["id"]
        }

    def call(self, index: int) -> Any:
        """One call with its references resolved and its params as received."""
        if index not in self.done:
            self.busy.add(index)
            found = self.resolved(self.calls[index])
            if isinstance(found, dict) and "params" in found:
                found["params"] = received(found["params"])
            self.done[index] = found
            self.busy.discard(index)
        return self.done[index]

    def resolved(self, value: Any) -> Any:
        """``value`` with each known reference replaced by its value (a whole-string
        reference by the value itself, one inside a text by the text the tool gets)."""
        if isinstance(value, dict):
            return {k: self.resolved(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolved(v) for v in value]
        if not isinstance(value, str) or "$" not in value:
            return value
        try:
            parts = refs.parse(refs.convert_legacy(value))
        except PlangateError:
            return value
        values = [part if isinstance(part, str) else self.read(part) for part in parts]
        if len(values) == 1 and isinstance(parts[0], refs.Ref):
            return value if values[0] is _MISSING else values[0]
        if any(found is _MISSING for found in values):
            return value
        return "".join(_as_text(found) for found in values)

    def read(self, ref: refs.Ref) -> Any:
        """The value one reference reads, or :data:`_MISSING`."""
        if ref.root == "inputs":
            found = self._follow(self.inputs, ref.path)
            if found is not _MISSING and ref.path:
                self.used.add(str(ref.path[0]))
            # as the run reads an input: its mappings in the hash's order (refs.lookup)
            return canonical_order(found) if isinstance(found, dict | list) else found
        if ref.root == "plan":
            return self._follow(self.plan, ref.path)
        if ref.root != "actions" or ref.path[:1] not in (("result",), ("outputs",)):
            return _MISSING
        index = self.echoes.get(_canonical(ref.action))
        if index is None:
            return _MISSING
        if index in self.busy:  # a cycle (the plan is refused anyway): as written
            return _MISSING
        call = self.call(index)
        params = call.get("params")
        result = params if params is not None else {}
        if ref.path[0] == "result":
            return self._follow(result, ref.path[1:])
        return self._output(call.get("outputs"), result, ref.path[1:])

    def _output(self, declared: Any, result: Any, path: tuple[Any, ...]) -> Any:
        """A declared output of an action whose result the plan fixes, as the run extracts
        it (round 60: the same query engine over the echo's result), then ``path`` in it."""
        if not path or not isinstance(declared, list):
            return _MISSING
        for output in declared:
            if isinstance(output, dict) and output.get("name") == path[0]:
                return self._query(output.get("path"), result, path[1:])
        return _MISSING

    def _query(self, query: Any, result: Any, path: tuple[Any, ...]) -> Any:
        if not isinstance(query, str) or jsonpaths.query_problem(query) is not None:
            return _MISSING  # a query the plan check refuses: as written
        try:
            found, singular = jsonpaths.find(query, result)
        except PlangateError:  # past the query budget: as written
            return _MISSING
        if not found:
            return _MISSING
        return self._follow(found[0] if singular else found, path)

    @staticmethod
    def _follow(value: Any, path: tuple[Any, ...]) -> Any:
        try:
            return refs.follow(value, path)
        except LookupError:
            return _MISSING


def received(value: Any) -> Any:
    """A call's params as the tool receives them, whatever JSON type spells a value (round
    59): an exec tool's argv gets a value as its text (a string as is, anything else as its
    compact JSON), so ``"0"`` and ``0``, ``"true"`` and ``true``, ``'["a","b"]'`` and the
    list are one command. The kind of a tool is the config's, which the history does not
    hold, so every call is read so (the safe direction: a value counts as hers however it
    is typed)."""
    if isinstance(value, dict):
        return {k: received(v) for k, v in value.items()}
    if isinstance(value, list):
        return [received(v) for v in value]
    if not isinstance(value, str) or not value or value[0] not in _JSON_STARTS:
        return value
    try:
        found = json.loads(value, parse_constant=_no_constant)
    except ValueError:
        return value
    if isinstance(found, str) or _as_text(found) != value:
        return value
    return received(found)


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _as_text(value: Any) -> str:
    """A value as a tool's argv or a reference inside a text gets it (``refs``' rule)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


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
    if leaf[0][:1] == ("actions",) and leaf[0][2:3] == (PINNED,):
        return 0.0
    if leaf[0] in TEMPLATE_PATHS:
        return LAYOUT_WEIGHT
    if keys and (keys[0] in LAYOUT_BLOCKS or keys[-1] in LAYOUT_KEYS):
        return LAYOUT_WEIGHT
    return VALUE_WEIGHT


def kept_share(old: Counter[Leaf], new: Counter[Leaf]) -> float:
    """How much of the old plan the new one keeps (0 to 1): the weight of the old plan's
    leaves found unchanged in the new one over the old plan's weight. Additions do not
    dilute it. Actions are matched by what they say, not their ids (:func:`_kept_weight`)."""
    total = _weight_of(old)
    if not total:
        return 1.0 if old == new else 0.0
    return min(1.0, _kept_weight(old, new) / total)


def made_share(old: Counter[Leaf], new: Counter[Leaf]) -> float:
    """How much the new plan is made of the old one, measured both ways (round 57): the
    share of the old plan it keeps, or the share of ITSELF that is the old plan's unchanged
    content, whichever is more. A plan cut down to one of her three actions keeps a third of
    hers but is all hers; her plan moved out of a draft the agent padded first keeps under
    half of the padded draft but is hers but for one param."""
    old_total, new_total = _weight_of(old), _weight_of(new)
    if not old_total or not new_total:
        return 1.0 if old == new else 0.0
    kept = _kept_weight(old, new)
    return min(1.0, max(kept / old_total, kept / new_total))


def _kept_weight(old: Counter[Leaf], new: Counter[Leaf]) -> int:
    """The weight of the old plan's leaves found unchanged in the new one: leaves outside
    the actions by path, and each old action's leaves in the new action it is matched with
    (round 57: a cut-down plan renumbers her action ``2`` as ``1``). A match counts only when
    the old action survives in it (:func:`_survives`), and then leaf by leaf."""
    kept = _weight_of(_outside(old) & _outside(new))
    olds, news = _actions(old), _actions(new)
    fed = _Fed(new)
    for _score, _same, step, other in _matches(olds, news, fed):
        kept += _weight_of(olds[step] & _standing_in(olds[step], news[other], fed))
    return kept


def _matches(
    olds: dict[Any, Counter[Leaf]], news: dict[Any, Counter[Leaf]], fed: _Fed
) -> list[tuple[int, bool, Any, Any]]:
    """Old actions paired one to one with the new actions they survive in, the most kept
    first (the same id first on a tie). An old action is compared with the new action of its
    id and those sharing a value with it that few new actions hold (:data:`MATCH_FANOUT`: the
    layout and a value every action repeats would compare every pair of two big plans), or
    reading a result where it holds a value (round 60: :func:`_standing_in`)."""
    holding: dict[Any, set[Any]] = {}
    for step, said in news.items():
        for leaf in said:
            if _result_parts(leaf[1]) is not None:
                holding.setdefault(leaf[0], set()).add(step)
            elif weight(leaf) == VALUE_WEIGHT:
                holding.setdefault(leaf, set()).add(step)
    found: list[tuple[int, bool, Any, Any]] = []
    for step, said in olds.items():
        near = {step} & news.keys()
        for leaf in said:
            keys: list[Any] = [leaf]
            keys += [leaf[0][:end] for end in range(3, len(leaf[0]) + 1)]
            for key in keys:
                steps = holding.get(key, set())
                if len(steps) <= MATCH_FANOUT:
                    near |= steps
        for other in near:
            seen = _standing_in(said, news[other], fed)
            if _survives(said, seen):
                found.append((_weight_of(said & seen), step == other, step, other))
    chosen: list[tuple[int, bool, Any, Any]] = []
    used_old: set[Any] = set()
    used_new: set[Any] = set()
    for match in sorted(found, key=lambda m: (m[0], m[1]), reverse=True):
        if match[2] not in used_old and match[3] not in used_new:
            used_old.add(match[2])
            used_new.add(match[3])
            chosen.append(match)
    return chosen


class _Fed:
    """What a plan feeds each producer (round 62): per call name (a top-level action with
    its steps and checks), the (key, canonical value) of every param it receives (a pinned
    plan's inputs are its params), the key the last mapping key above the value; and the
    query texts of its declared outputs by name. A real tool's result, or a pinned plan's
    outputs, can hand back only what the plan fed that producer (or fed a producer upstream
    whose result flows into it), under the key the read names."""

    def __init__(self, found: Counter[Leaf]) -> None:
        self.params: dict[str, list[tuple[str, str]]] = {}
        self.outputs: dict[str, dict[str, set[str]]] = {}
        #: A pinned call's plan read: its calls' params and outputs, as fed (round 62).
        self.inner: dict[str, list[tuple[str, str]]] = {}
        self.inner_outputs: dict[str, dict[str, set[str]]] = {}
        named: dict[tuple[str, Any, bool], dict[str, str]] = {}
        for path, value in found:
            name = _producer(path)
            if name is None:
                continue
            inside = path[2:3] == (PINNED,) and len(path) > 4
            rest = path[4:] if inside else path[2:]
            if rest[:1] == ("params",):
                keys = [part for part in rest[1:] if isinstance(part, str)]
                fed = self.inner if inside else self.params
                fed.setdefault(name, []).append((keys[-1] if keys else "", value))
            elif rest[:1] == ("outputs",) and len(rest) == 3 and rest[2] in ("name", "path"):
                place = (*path[: len(path) - len(rest)], rest[1])
                named.setdefault((name, place, inside), {})[rest[2]] = _text(value)
        for (name, _place, inside), output in named.items():
            if "name" in output and "path" in output:
                queries = (self.inner_outputs if inside else self.outputs).setdefault(name, {})
                queries.setdefault(output["name"], set()).add(output["path"])
        self.memo: dict[tuple[str, str, frozenset[str]], bool] = {}

    def reads(self, ref: refs.Ref) -> frozenset[str]:
        """The keys a reference to a result names: its path's and, through a declared
        output, the names of that output's query as the engine parses it (round 63)."""
        keys = {str(part) for part in ref.path if isinstance(part, str)}
        if ref.path[:1] == ("outputs",) and len(ref.path) > 1:
            _words(self.outputs.get(str(ref.action), {}).get(str(ref.path[1]), ()), keys)
            inner = self.inner_outputs.get(str(ref.action), {})
            for word in list(keys):  # a pinned plan's outputs read: what their queries name
                _words(inner.get(word, ()), keys)
        return frozenset(keys)

    def holds(self, ref: refs.Ref, value: str, reads: frozenset[str]) -> bool:
        """Whether the result ``ref`` reads could hand back ``value`` (canonical JSON) at a
        key in ``reads``: the plan fed it to that producer under such a key, written or
        joined from what producers upstream could hand back (round 62's ``two-hop``)."""
        memo = (str(ref.action), value, reads)
        if memo not in self.memo:
            self.memo[memo] = False  # a cycle (the plan is refused anyway): nothing
            self.memo[memo] = any(
                (key in reads or ANY_KEY in reads) and self._fed_as(given, value, reads)
                for key, given in self._producers(str(ref.action))
            )
        return self.memo[memo]

    def _producers(self, name: str) -> list[tuple[str, str]]:
        """What call ``name`` was fed: a pinned plan read, what its own calls were fed."""
        return self.inner[name] if name in self.inner else self.params.get(name, [])

    def _fed_as(self, given: str, value: str, reads: frozenset[str]) -> bool:
        parts = _result_parts(given)
        if parts is None:
            return given == value or _text(given) == _text(value)
        if len(parts) == 1 and isinstance(parts[0], refs.Ref):
            return self.holds(parts[0], value, self.reads(parts[0]) | reads)
        return _splits(_text(value), parts, self)

    def holds_text(self, ref: refs.Ref, text: str) -> bool:
        """Whether ``text`` could be what ``ref`` puts in a text it fills."""
        return self.holds(ref, _canonical(text), self.reads(ref))


def _words(queries: Any, keys: set[str]) -> None:
    """Add the keys output queries name to ``keys``: the names of the query as the run's
    engine parses it (round 63: ``$.json.echo["\\u0061"]`` names ``a``, ``['k 1']`` names
    ``k 1``; the words of its text named neither), and :data:`ANY_KEY` when its last segment
    may select a member under any key (:func:`jsonpaths.named_keys`: ``$..standby`` names
    ``standby`` only, ``$..[0]`` every key: round 64). A query the engine refuses names
    every key (the plan is refused)."""
    for query in queries:
        try:
            names, anywhere = jsonpaths.named_keys(query)
        except Exception:  # not a query the run could evaluate: the safe direction
            keys.add(ANY_KEY)
            continue
        keys.update(names)
        if anywhere:
            keys.add(ANY_KEY)


def _producer(path: tuple[Any, ...]) -> str | None:
    """The top-level action a leaf of the full plan lies in (its steps and checks are its)."""
    step = path[1] if len(path) > 2 and path[0] == "actions" else None
    if not isinstance(step, tuple) or step[0] != "id":
        return None
    return _text(step[1]).split("/")[0]


def _result_parts(value: str) -> list[refs.Part] | None:
    """A leaf's canonical value as literal text and references, when it reads a result or
    outputs of an action that the plan could not resolve (a real tool's, a pinned plan's)
    and nothing else; None otherwise."""
    if not value.startswith('"') or "$<actions[" not in value:
        return None
    try:
        parts = refs.parse(_text(value))
    except PlangateError:
        return None
    found = [part for part in parts if isinstance(part, refs.Ref)]
    if not found or any(part.root != "actions" for part in found):
        return None
    return parts


def _standing_in(said: Counter[Leaf], other: Counter[Leaf], fed: _Fed) -> Counter[Leaf]:
    """The new action ``other`` read against the old one ``said`` (rounds 60, 62): a
    reference to a result the plan cannot fix (a real tool's, whose result may hand back its
    params; a pinned plan's outputs) at a place where the old action holds a value stands in
    for that value when the plan fed it to THAT producer (or upstream of it) under a key the
    read names (:meth:`_Fed.holds`); a text of such references stands in for her value at
    its place when her value splits along it, each reference's part so held. Her values
    staged in one call and read back from its result are hers kept; a lookup fed her host
    under its own key whose answer (another host) is read is the agent's own."""
    places = {leaf[0]: (leaf, parts) for leaf in other if (parts := _result_parts(leaf[1]))}
    if not places:
        return other
    seen = Counter(other)
    for path, value in said:
        if path[2:] == (WHY,):
            continue
        for end in range(3, len(path) + 1):
            place = places.get(path[:end])
            if place is None:
                continue
            stand, parts = place
            if len(parts) == 1 and isinstance(parts[0], refs.Ref):
                below = frozenset(part for part in path[end:] if isinstance(part, str))
                held = fed.holds(parts[0], value, fed.reads(parts[0]) | below)
            else:
                held = end == len(path) and _splits(_text(value), parts, fed)
            if held:
                seen[(path, value)] += 1
                seen[stand] = 0
            break
    return +seen


def _splits(text: str, parts: list[refs.Part], fed: _Fed) -> bool:
    """Whether ``text`` is the literal parts in order with each reference's place filled by
    a text its producer could hand back (round 59's ``echo-cat``, through a real tool's
    result; round 62's ``two-hop``, through two)."""
    if len(text) > SPLIT_CHARS:
        return False
    at = {0}
    for part in parts:
        if isinstance(part, str):
            at = {i + len(part) for i in at if text.startswith(part, i)}
        else:
            at = {
                j
                for i in at
                for j in range(i + 1, len(text) + 1)
                if fed.holds_text(part, text[i:j])
            }
        if not at:
            return False
    return len(text) in at


def _action_of(leaf: Leaf) -> Any:
    """The step naming the action a leaf lies in (None: not in an action)."""
    path = leaf[0]
    return path[1] if len(path) > 2 and path[0] == "actions" else None


def _outside(found: Counter[Leaf]) -> Counter[Leaf]:
    """The leaves in no action."""
    return Counter({leaf: n for leaf, n in found.items() if _action_of(leaf) is None})


def _actions(found: Counter[Leaf]) -> dict[Any, Counter[Leaf]]:
    """Each action's leaves by its step, each named by its path inside the action (so an
    action is compared with another whatever their ids); an action's ``id`` is layout."""
    grouped: dict[Any, Counter[Leaf]] = {}
    for (path, value), n in found.items():
        step = _action_of((path, value))
        if step is not None:
            grouped.setdefault(step, Counter())[(("actions", "*", *path[2:]), value)] += n
    return grouped


def _survives(said: Counter[Leaf], other: Counter[Leaf]) -> bool:
    """An old action survives in a new one when what it RUNS survives (everything else it
    says but its ``why``: params, a pinned plan, all unchanged), or its ``why`` kept or
    nearly so (a word or two of a long reason changed: :data:`NEAR_WHY`) as evidence weighed
    by how much it says (:func:`why_strength`) with the share of what it runs kept making up
    the rest (round 58: a stock "restart the service" beside the agent's own values is no
    action of hers; the same reason with three of her four params kept is). Its layout and
    the params plans for one target share alone do not make it (round 56's ``sp``: five
    target params equal, the ``why`` and tag another's)."""
    told = [leaf for leaf in said if weight(leaf) == VALUE_WEIGHT]
    if not told:  # layout alone: kept when all of it is
        return all(leaf in other for leaf in said)
    why = [leaf for leaf in told if leaf[0][2:] == (WHY,)]
    rest = Counter({leaf: n for leaf, n in said.items() if leaf in told and leaf[0][2:] != (WHY,)})
    if rest and not (rest - other):
        return True
    runs = Counter(
        {
            leaf: n
            for leaf, n in other.items()
            if weight(leaf) == VALUE_WEIGHT and leaf[0][2:] != (WHY,)
        }
    )
    ran = _share(rest, runs) if rest else float(not runs)  # no params: the same call if none
    if not why:
        return False
    reason = _text(why[0][1])
    theirs = [_text(leaf[1]) for leaf in other if leaf[0][2:] == (WHY,)]
    if not (why[0] in other or (theirs and word_likeness(reason, theirs[0]) >= NEAR_WHY)):
        return False
    return why_strength(reason) + ran >= 1.0


def _share(old: Counter[Leaf], new: Counter[Leaf]) -> float:
    """The share of what an action runs that is kept, both ways (as :func:`made_share`: her
    params beside 14 the agent padded her draft with, round 57, are 2 of 3 of the new)."""
    kept = _weight_of(old & new)
    return max(kept / _weight_of(old) if old else 0.0, kept / _weight_of(new) if new else 0.0)


def why_strength(reason: str) -> float:
    """How much a ``why`` says about whose action it is (0 to :data:`WHY_MAX`): its words
    over :data:`WHY_WORDS`, at most half the evidence however long (round 59: a recurring
    plan's runbook sentence is every week's, so what the action runs must be half kept too;
    a stock three-word reason is half already, round 58)."""
    return min(WHY_MAX, len(reason.split()) / WHY_WORDS)


def _text(value: str) -> str:
    """A leaf's canonical JSON value as the text it says (a string unquoted)."""
    try:
        found = json.loads(value)
    except ValueError:
        return value
    return found if isinstance(found, str) else value


def word_likeness(one: str, two: str) -> float:
    """How alike two reasons are by their words (Dice over word multisets, 0 to 1)."""
    first, second = Counter(one.lower().split()), Counter(two.lower().split())
    size = first.total() + second.total()
    return 2 * (first & second).total() / size if size else 1.0


def _weight_of(found: Counter[Leaf]) -> int:
    """The summed weight in tenths (whole numbers: the same leaves sum the same in any order
    and grouping, so a plan wholly kept is 1.0, not 0.9999999999999999)."""
    return sum(round(weight(leaf) * 10) * n for leaf, n in found.items())
