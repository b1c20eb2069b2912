"""What every format converter shares: the problem list, the notes, and PLAN.yml builders.

A converter walks its source once and builds PLAN.yml data. Anything PLAN.yml cannot
express is recorded as an ``E_CONVERT_UNSUPPORTED`` problem with its location in the
source (every one of them is reported, not only the first); anything that does not change
what runs but has no PLAN.yml field is kept under ``metadata.converted_from`` so that
nothing is dropped silently.

Every source object is read through :meth:`Ctx.fields` against its format's *shape* (a
mapping of each field the converter knows to the JSON type it takes, declared beside the
converter): a field outside the shape is ``E_CONVERT_UNSUPPORTED``, a value of another type
``E_SCHEMA_INVALID`` with its location and remedy. A flag is true only when it is the JSON
boolean ``true`` and ``"true"``, ``1`` or ``[true]`` are refused, never read as false (round
53: a gate written ``"true"`` converted to no gate at all). ``null`` reads as absent, except
for a boolean.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from controller.errors import ConvertFailed, Problem
from controller.plan.refs import format_path

Loc = tuple[str | int, ...]
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
#: The check tools' answer that preconditions and verifications expect (docs/formats.md).
CHECK_OK = {"path": "$.ok", "equals": True}
DEFAULT_STATUS = "pending_approval"


@dataclass(frozen=True)
class Kind:
    """The JSON type a source field takes, named for the message and with its remedy."""

    name: str
    accepts: Callable[[Any], bool]
    remedy: str
    #: ``null`` reads as the field being absent (never for a flag: null is not a boolean)
    nullable: bool = True


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


BOOL = Kind(
    "a boolean",
    lambda v: isinstance(v, bool),
    "write true or false: a JSON/YAML boolean, not a string, a number or a list",
    nullable=False,
)
STR = Kind("a string", lambda v: isinstance(v, str), "write the value as a string")
INT = Kind("an integer", _is_int, "write a whole number")
NUMBER = Kind(
    "a number", lambda v: _is_int(v) or isinstance(v, float), "write a number (not a string)"
)
OBJECT = Kind("an object", lambda v: isinstance(v, dict), "write an object (a mapping)")
LIST = Kind("a list", lambda v: isinstance(v, list), "write a list")
STRINGS = Kind(
    "a list of strings",
    lambda v: isinstance(v, list) and all(isinstance(item, str) for item in v),
    'write a list of ids as strings, e.g. ["s1", "s2"]',
)
ANY = Kind("any value", lambda v: True, "")
#: The fields of one kind of source object, each with the type it takes.
Shape = Mapping[str, Kind]


@dataclass
class Ctx:
    """One conversion's findings: problems stop it, notes travel in metadata."""

    source: str
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    renamed_tools: dict[str, str] = field(default_factory=dict)
    #: every PLAN.yml tool name given out -> the source name it stands for
    tool_sources: dict[str, str] = field(default_factory=dict)
    lines: dict[Loc, int] = field(default_factory=dict)
    #: The plan's status as the source says it (``pte``: ``plan.status``; None: the format
    #: has none). Never carried beyond ``draft``, but read by the history index: a
    #: rejection committed in the source is judged as one committed in PLAN.yml (round 120).
    source_status: str | None = None

    def unsupported(self, loc: Loc, message: str, remedy: str | None = None) -> None:
        self.problems.append(
            Problem("E_CONVERT_UNSUPPORTED", message, format_path(loc), self.lines.get(loc), remedy)
        )

    def invalid(self, loc: Loc, message: str, remedy: str | None = None) -> None:
        self.problems.append(
            Problem("E_SCHEMA_INVALID", message, format_path(loc), self.lines.get(loc), remedy)
        )

    def note(self, loc: Loc, message: str) -> None:
        self.notes.append(f"{format_path(loc) or '(root)'}: {message}")

    def check(self) -> None:
        if self.problems:
            raise ConvertFailed(self.problems, self.source)

    # --- typed access to the source ------------------------------------------------------

    def fields(self, value: Any, loc: Loc, shape: Shape, what: str = "an object") -> dict[str, Any]:
        """The source object at ``loc`` read by its shape: the one door a converter reads a
        source's fields through. Returns the known fields whose values have their type (a
        null one left out, as absent); every other field is a problem (module docstring)."""
        raw = self.obj(value, loc, what)
        self.only_keys(raw, loc, shape)
        out: dict[str, Any] = {}
        for key, item in raw.items():
            kind = shape.get(key)
            if kind is None or (item is None and kind.nullable):
                continue
            if kind.accepts(item):
                out[key] = item
            else:
                self.invalid(
                    (*loc, key),
                    f"`{key}` must be {kind.name}, got {_kind(item)} {_short(item)}",
                    kind.remedy or None,
                )
        return out

    def obj(self, value: Any, loc: Loc, what: str = "an object") -> dict[str, Any]:
        if isinstance(value, dict):
            return value
        self.invalid(loc, f"expected {what}, got {_kind(value)}")
        return {}

    def items(self, value: Any, loc: Loc) -> list[Any]:
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self.invalid(loc, f"expected a list, got {_kind(value)}")
        return []

    def text(self, value: Any, loc: Loc, *, required: bool = True) -> str:
        """A required text of the source: the one place its refusal is worded. An empty or
        blank string is said to be empty, not "expected a string, got a string" (round 116,
        empty-string-says-got-a-string)."""
        if isinstance(value, str) and value.strip():
            return value
        if value is None and not required:
            return ""
        name = f"`{loc[-1]}`" if loc and isinstance(loc[-1], str) else "the value"
        if value is None:
            message = "a non-empty string is required"
        elif isinstance(value, str):
            what = "empty" if not value else f"blank ({len(value)} blank character(s))"
            message = f"{name} is {what}: a non-empty string is required"
        else:
            message = f"expected a string, got {_kind(value)}"
        self.invalid(loc, message, f"write {name} as a non-empty string")
        return ""

    def seconds(self, value: Any, loc: Loc, *, millis: bool) -> float | int | None:
        """A timeout in seconds (from milliseconds when ``millis``); None when absent."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            self.invalid(loc, f"expected a positive number, got {value!r}")
            return None
        secs = value
        if millis:  # divided as written: 1500.7 ms is 1.5007 s, not 1.5007000000000001
            secs = float(Decimal(repr(value)) / 1000) if isinstance(value, float) else value / 1000
        if secs > 86400:
            # repr: the shortest exact figure, never rounded to the limit (round 113)
            self.unsupported(loc, f"{secs!r} s is over PLAN.yml's longest timeout (86400 s)")
            return None
        return int(secs) if float(secs).is_integer() else secs

    def only_keys(self, value: dict[str, Any], loc: Loc, known: Iterable[str]) -> None:
        """Every key the converter does not map is E_CONVERT_UNSUPPORTED (never dropped)."""
        allowed = set(known)
        for key in value:
            if key not in allowed:
                self.unsupported(
                    (*loc, key),
                    f"field `{key}` has no PLAN.yml equivalent (mapped fields: "
                    f"{', '.join(sorted(allowed))})",
                )

    def tool_name(self, name: str, loc: Loc, spelled: str | None = None) -> str:
        """A tool name PLAN.yml accepts: characters outside [A-Za-z0-9_-] become `_`. The
        renaming must stay one-to-one: two source tools (``deploy.prod``, ``deploy_prod``)
        made one PLAN.yml tool is refused naming both (round 57). ``spelled``: the tool as
        the source wrote it when the converter already derived ``name`` from it (an Agent
        Plan kind ``TypeText`` is ``type_text``): ``typeText`` beside it is another source
        tool, refused the same way (round 103)."""
        fixed = name if NAME.match(name) else _identifier(name)
        source = name if spelled is None else spelled
        other = self.tool_sources.setdefault(fixed, source)
        if other != source:
            self.invalid(
                loc,
                f"tools {other!r} and {source!r} would both be named {fixed!r} in PLAN.yml "
                "(tool names are identifiers): two tools of the source cannot become one",
                "name the source's tools so that they differ in letters, digits, `_` or `-`",
            )
        elif fixed != name:
            self.renamed_tools[fixed] = name
            self.note(
                loc, f"tool {name!r} is named {fixed!r} (PLAN.yml tool names are identifiers)"
            )
        return fixed


def _identifier(name: str) -> str:
    fixed = re.sub(r"[^A-Za-z0-9_-]", "_", name)
    return fixed if re.match(r"^[A-Za-z_]", fixed) else f"_{fixed}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def snake(name: str) -> str:
    """``TypeText`` -> ``type_text``; ``send_text`` stays. ASCII letters only are made lower
    case: ``str.lower`` turns a KELVIN SIGN into ASCII ``k`` (round 105: ``TypeTe<U+212A>t``
    became ``type_tekt`` with no note), so any other character is left for the identifier
    rule to rename, with its note (:meth:`Ctx.tool_name`)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return re.sub(r"[A-Z]+", lambda m: m.group(0).lower(), spaced)


def millis_to_iso(value: Any) -> str | None:
    """A Unix time in milliseconds as an RFC 3339 UTC string."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        moment = datetime.fromtimestamp(value / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def first_line(text: str, limit: int = 100) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


def check(tool: str, params: dict[str, Any]) -> dict[str, Any]:
    """A precondition calling check tool ``tool``, which answers ``{"ok": true|false}``."""
    return {"tool": tool, "params": params, "expect": dict(CHECK_OK)}


def document(
    ctx: Ctx,
    *,
    fmt: str,
    name: str,
    task: str,
    actions: list[dict[str, Any]],
    created: str | None = None,
    inputs: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
    tool_descriptions: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The PLAN.yml data, in the order a reviewer reads it."""
    plan: dict[str, Any] = {"name": name, "task": task, "status": DEFAULT_STATUS}
    if created:
        plan["created"] = created
    origin: dict[str, Any] = {"format": fmt}
    if ctx.renamed_tools:
        origin["tool_names"] = dict(ctx.renamed_tools)
    if ctx.notes:
        origin["notes"] = list(ctx.notes)
    out: dict[str, Any] = {"plan": plan, "metadata": {"converted_from": origin, **(metadata or {})}}
    if inputs:
        out["inputs"] = inputs
    descriptions = tool_descriptions or {}
    out["available_tools"] = [
        {"name": tool, "description": descriptions.get(tool, "")}
        if descriptions.get(tool)
        else {"name": tool}
        for tool in used_tools(actions, (extra or {}).get("preconditions", []))
    ]
    out.update(extra or {})
    out["actions"] = [_ordered(legacy_refs(a, ctx, ("actions", i))) for i, a in enumerate(actions)]
    hidden_names(ctx, out.get("inputs"), ("inputs",))
    hidden_names(ctx, out["actions"], ("actions",))
    return out


def hidden_names(ctx: Ctx, tree: Any, loc: Loc) -> None:
    """Refuse every mapping key in ``tree`` (an action's params at any depth, its checks',
    its fallbacks', the plan's inputs) holding a format or default-ignorable character
    (:func:`controller.display.first_ignorable`), whatever the source: ``{"tag": "A",
    "dry_run<U+200B>": true}`` read as ``dry_run`` in every review of a markdown, JSON or
    TOON source, and a tool ignoring the unknown key ran for real (round 110). PLAN.yml
    itself writes such a key escaped (``"dry_run\\u200b"``), which its reviewer sees."""
    from controller.display import first_ignorable, visible

    stack: list[tuple[Any, Loc]] = [(tree, loc)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, list):
            stack.extend((child, (*where, i)) for i, child in enumerate(item))
            continue
        if not isinstance(item, dict):
            continue
        for key, child in item.items():
            char = first_ignorable(key) if isinstance(key, str) else None
            if char is not None:
                _line_of(ctx, (*where, key))
                ctx.invalid(
                    (*where, key),
                    f"the name `{visible(key)}` holds U+{ord(char):04X}, a character review "
                    "tools do not show: it reads as another name",
                    "remove the character from the name",
                )
            stack.append((child, (*where, key)))


def legacy_refs(step: dict[str, Any], ctx: Ctx, loc: Loc) -> dict[str, Any]:
    """``${actions[1].outputs.x}``-style references in params written as ``$<...>``; one
    the rewrite cannot carry whole is refused (:func:`carry_legacy`)."""
    out = dict(step)
    if isinstance(out.get("params"), dict):
        out["params"] = carry_legacy(
            ctx, out["params"], (*loc, "params"), f"action {out.get('id')}: "
        )
    if "fallback" in out:
        out["fallback"] = [
            legacy_refs(f, ctx, (*loc, "fallback", i)) for i, f in enumerate(out["fallback"])
        ]
    return out


def carry_legacy(ctx: Ctx, params: Any, loc: Loc, label: str = "") -> Any:
    """``params`` with legacy ``${...}`` references written as ``$<...>``. A ``${`` that
    opens a legacy reference (``${inputs``, ``${actions``, ...) the rewrite cannot carry whole is
    refused, never cut nor left as text the tool gets (round 108: ``${inputs.to>x}`` became
    ``$<inputs.to>`` and the text ``x>``; ``${actions[1].result["a}b"]}`` stayed text)."""
    from controller.plan.refs import (
        convert_legacy_tree,
        legacy_problem,
        legacy_uncarried,
        walk_strings,
    )

    for where, value in walk_strings(params, loc):
        bad = legacy_uncarried(value)
        if bad is not None:
            line = ctx.lines.get(where) or _nearest_line(ctx, where)
            found = legacy_problem(bad, format_path(where), line)
            ctx.problems.append(replace(found, message=label + found.message))
    return convert_legacy_tree(params, shared=True)


def _nearest_line(ctx: Ctx, loc: Loc) -> int | None:
    """The source line of ``loc`` or of its nearest enclosing location the reader noted."""
    for end in range(len(loc), 0, -1):
        if loc[:end] in ctx.lines:
            return ctx.lines[loc[:end]]
    return None


ACTION_ORDER = (
    "id",
    "tool",
    "plan",
    "why",
    "needs",
    "params",
    "inputs",
    "outputs",
    "preconditions",
    "verify",
    "on_failure",
    "retry",
    "fallback",
    "timeout",
    "idempotent",
    "requires_approval",
)


def _ordered(action: dict[str, Any]) -> dict[str, Any]:
    """An action's keys in the order a reviewer reads them (fallback steps too)."""
    out = {k: action[k] for k in ACTION_ORDER if k in action}
    out.update({k: v for k, v in action.items() if k not in out})
    if "fallback" in out:
        out["fallback"] = [_ordered(step) for step in out["fallback"]]
    return out


def used_tools(actions: list[dict[str, Any]], preconditions: list[dict[str, Any]]) -> list[str]:
    """Every tool the plan calls (actions, fallbacks, checks), in first-use order."""
    seen: dict[str, None] = {}
    for check_step in preconditions:
        seen.setdefault(check_step["tool"], None)
    for action in actions:
        for step in (action, *action.get("fallback", [])):
            for pre in step.get("preconditions", []):
                seen.setdefault(pre["tool"], None)
            if "tool" in step:
                seen.setdefault(step["tool"], None)
            verify = step.get("verify") or {}
            if "tool" in verify:
                seen.setdefault(verify["tool"], None)
    return list(seen)


def numbered_as_written(
    ctx: Ctx, order: list[str], records: Mapping[str, tuple[Any, Loc]], field: str
) -> None:
    """Refuse ``actions[N]`` references when the converter numbered the steps in another
    order than the source wrote them (``order``: the actions' step ids, ``records``: each
    step and its location, in source order; ``field``: the step's params field). The source
    format numbers no steps, so N can only be read against the steps as written, and the
    action it would name is another step (round 103: ``send`` got ``auth``'s result, not
    ``fetch``'s). Written in dependency order, the numbers are the source's and pass."""
    written = list(records)
    if order == written:
        return
    for step_id, (step, loc) in records.items():
        for ref in positional_refs(step):
            number = ref.action or 0
            named = (
                f"action {number} is step {order[number - 1]!r}"
                if 0 < number <= len(order)
                else f"there is no action {number}"
            )
            also = (
                f" (the source's step {number} is {written[number - 1]!r})"
                if (0 < number <= len(written))
                else ""
            )
            ctx.unsupported(
                (*loc, field),
                f"step {step_id!r}: `{written_as(ref.text, step)}` names an action by its "
                "number, and the "
                f"steps are ordered so each comes after its dependencies: {named}{also}",
                "list the steps so that each comes after the steps it depends on: then "
                "`actions[N]` is the N-th step as written",
            )


def numbered_in_place(ctx: Ctx, loc: Loc, number: Any, index: int, what: str = "step") -> None:
    """A step's own number (ActionPlan ``step_number``, a markdown ``### Step N:`` heading, a
    numeric Plan Contract ``step_id``), when written, is its place: steps are numbered by
    the order they are written, so a number saying otherwise is refused, never another
    step's (round 106: a fallback's steps numbered 2, 1; round 108: headings ``Step 2``,
    ``Step 1``, whose ``actions[1]`` named the step headed ``Step 2``)."""
    if number != index + 1:
        ctx.unsupported(
            loc,
            f"{what} {number} at position {index + 1}: steps must be numbered 1..N in order",
            "number the steps 1..N in the order they are written (or reorder them so)",
        )


#: A step's number as a heading writes it (round 109): ``Step``, then the digits 0-9, then the
#: heading's end, a space, ``:`` or ``/``, or a ``.``/``-`` that no digit follows (``Step 2:``,
#: ``Step2``, ``Step 1.``, ``Step 2/3``). ``Step 2a``, ``Step 2.0``, ``Step ２``, ``Step II``,
#: ``Step #2`` and ``### 2.`` are none: no reader is left to guess which number they say.
STEP_HEADING = re.compile(r"^[Ss][Tt][Ee][Pp][ \t]*([0-9]+)(?=$|[\s:/]|[.\-](?![0-9]))")
#: The digits a number is written in, in every source (round 109).
DIGITS = frozenset("0123456789")


def numbered_id(ctx: Ctx, value: Any, loc: Loc, index: int, what: str = "step id") -> None:
    """A step id is a number or a name, never something a reader takes for a number that is
    not one (round 109): written in the digits 0-9 alone it is a number, its place
    (:func:`numbered_in_place`); else it must hold a letter, no white space and no number
    character other than 0-9. ``" 2"``, ``"2.0"``, ``"#2"``, ``"Step 2"``, ``"２"``,
    ``"٢"``, ``"②"`` read as the step numbered 2 and converted in written order, under
    another number; each is refused. ``step_2`` and ``s2`` are names, as ``fetch`` is."""
    if not isinstance(value, str) or not value:
        return
    if value.isascii() and value.isdigit():
        numbered_in_place(ctx, loc, int(value), index, what)
        return
    odd = next((c for c in value if c.isnumeric() and c not in DIGITS), None)
    if odd is not None:
        why = f"holds U+{ord(odd):04X} `{odd}`, a number character other than the digits 0-9"
    elif any(c.isspace() for c in value):
        why = "holds white space"
    elif not any(c.isalpha() for c in value):
        why = "holds no letter"
    else:
        return
    _line_of(ctx, loc)
    ctx.invalid(
        loc,
        f"{what} {value!r} {why}: it reads as a step's number and is none, and steps run "
        "in the order written",
        "write a step id either as its place in the digits 0-9 (1..N in order) or as a name "
        "with a letter and no white space (`fetch`, `step_2`)",
    )


def plain_id(ctx: Ctx, value: Any, loc: Loc, what: str = "step id") -> None:
    """An id that names a step or task must read as itself: one holding a character review
    does not show (a zero-width space, a soft hyphen: display's rule) or not in NFC is
    refused, never a second id that reads as the first (round 108: ``fetch`` and
    ``fetch<U+200B>``, a dependency on the hidden one read as one on ``fetch``)."""
    from controller.display import visible

    if not isinstance(value, str) or visible(value) == value:
        return
    _line_of(ctx, loc)
    ctx.invalid(
        loc,
        f"{what} `{visible(value)}` holds a character review tools do not show, or is not "
        "in NFC: it reads as another id",
        "write ids in visible characters, NFC (letters, digits, `_`, `-`)",
    )


def _line_of(ctx: Ctx, loc: Loc) -> None:
    """Note for ``loc`` the source line of its nearest enclosing location, if it has none."""
    if loc not in ctx.lines:
        line = _nearest_line(ctx, loc)
        if line is not None:
            ctx.lines[loc] = line


def written_as(ref: str, step: Any) -> str:
    """A reference as the source wrote it: ``${...}`` when it was written so."""
    legacy = "${" + ref[2:-1] + "}"
    return legacy if legacy in repr(step) else ref


def positional_refs(value: Any) -> list[Any]:
    """Every ``actions[N]`` reference (:class:`~controller.plan.refs.Ref`) written anywhere
    in a source tree, as ``$<...>`` or ``${...}``; a malformed one is validation's."""
    from controller.errors import RefInvalid
    from controller.plan.refs import convert_legacy, parse

    found = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and "actions[" in item:
            try:
                parts = parse(convert_legacy(item))
            except RefInvalid:
                continue
            found += [p for p in parts if not isinstance(p, str) and p.root == "actions"]
    return found


def topo_order(ids: list[str], deps: dict[str, list[str]]) -> list[str] | None:
    """``ids`` ordered so every id comes after its dependencies, otherwise in source order
    (Kahn's algorithm, earliest ready first); None on a cycle."""
    import heapq

    position = {item: index for index, item in enumerate(ids)}
    waiting = {item: len(set(deps.get(item, []))) for item in ids}
    users: dict[str, list[str]] = {}
    for item in ids:
        for dep in set(deps.get(item, [])):
            users.setdefault(dep, []).append(item)
    ready = [position[item] for item in ids if waiting[item] == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        item = ids[heapq.heappop(ready)]
        order.append(item)
        for user in users.get(item, []):
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, position[user])
    return order if len(order) == len(ids) else None
