"""The controller's tool catalog as plan authors (and agents) see it.

:func:`describe_tool` is the one place that says what a catalog tool is to someone writing a
plan: ``plangate tools``, ``plangate show`` and the specialised ``plangate schema --config``
all use it, so a field added to :class:`controller.settings.ToolSpec` (risk, estimate,
output trust, ...) is shown everywhere by adding it here. What a tool runs is shown (kind,
argv, python target, method and URL); its environment and headers are not (they may hold
credentials).

Whatever describes the catalog to a person or an agent (``plangate tools`` text and
``--json``, the ``runs:`` line of ``plangate show``, ``plangate schema --config``, the MCP
``catalog`` tool) is built here and passes through :func:`shown` with the redactor of every
record the controller writes (``controller.execution.secrets.redactor_for``: the secrets
file, the ``PLANGATE_SECRET_*`` environment and the config's credentials), which each
describer takes as a required argument (this layer sits below ``execution``: the command or
the service builds it). Round 49: a secret's value written literally in the catalog (an argv
item, a description, an env value, a URL path segment or query value) was printed raw by
these commands while every record hid it.
"""

from __future__ import annotations

import copy
from collections.abc import Container
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast
from urllib.parse import quote, urldefrag, urljoin

from controller.plan import schemarefs
from controller.plan.shape import (
    ACTION_REFERENCE_VALUE,
    REFERENCE_VALUE,
    can_check,
    with_references,
)

if TYPE_CHECKING:
    from controller.settings import Config, ToolSpec

T = TypeVar("T")


class Redacting(Protocol):
    """What :func:`shown` needs of ``controller.execution.secrets.Redactor``."""

    def text(self, text: str) -> str: ...

    def data(self, value: Any) -> Any: ...


def shown(redactor: Redacting, value: T) -> T:
    """``value`` (text or JSON data from the catalog or the config) as a person or an agent
    may read it: every value the controller's records hide written ``***`` (the one place
    every printer of the catalog goes through)."""
    if isinstance(value, str):
        return redactor.text(value)  # type: ignore[return-value]
    return redactor.data(value)


def describe_tool(name: str, spec: ToolSpec) -> dict[str, Any]:
    """Everything a plan author may know about one catalog tool, as JSON data."""
    estimate = getattr(spec, "estimate", None)
    return {
        "name": name,
        "description": spec.description,
        "kind": spec.kind,
        "params_schema": spec.params_schema,
        "idempotent": spec.idempotent,
        "timeout": spec.timeout,
        "risk": getattr(spec, "risk", None),
        "estimate": estimate.model_dump(mode="json") if estimate is not None else None,
        "output_trust": getattr(spec, "output_trust", None),
        "sensitive": list(getattr(spec, "sensitive", []) or []),
        "maps_to": maps_to(spec),
    }


def describe_catalog(config: Config, redactor: Redacting) -> list[dict[str, Any]]:
    """Every catalog tool of ``config`` described (:func:`describe_tool`), :func:`shown`."""
    tools = config.tools
    return shown(redactor, [describe_tool(name, tools[name]) for name in sorted(tools)])


def agent_catalog(config: Config, redactor: Redacting) -> dict[str, Any]:
    """The catalog as the MCP ``catalog`` tool gives it to an agent, :func:`shown`."""
    entries = []
    for entry in describe_catalog(config, redactor):
        kept = {k: entry[k] for k in ("name", "description", "params_schema", "idempotent")}
        kept["risk"] = entry["risk"]
        if entry.get("estimate") is not None:
            kept["estimate"] = entry["estimate"]
        entries.append(kept)
    return {"tools": entries, "plans_dir": shown(redactor, config.plans_dir)}


#: The fields of :func:`describe_tool` that are no one's credentials: what the catalog tells
#: plan authors and agents of a tool. ``maps_to`` (argv, URL) is how a tool is handed a
#: credential, and every printer masks it (:func:`maps_to`).
_PUBLISHED = ("name", "description", "params_schema", "sensitive", "output_trust", "estimate")

SECRET_IN_CATALOG_REMEDY = (
    "a secret is never catalog material: agents read the catalog and a schema's verdict on a "
    "guess tells the secret; remove the value from the catalog and pass the secret at run "
    "time as a param (`$<secrets.NAME>`)"
)


def secrets_in_catalog(config: Config, redactor: Redacting) -> list[str]:
    """Where ``config``'s catalog publishes a value the controller's records hide (a secret
    of the secrets file or the environment, a credential of the config): each place as a
    dotted config path (``tools.pin.params_schema.properties.e.enum.0``), itself
    :func:`shown`. Round 71: a ``params_schema`` holding a secret (``enum``, ``const``,
    ``pattern``, ``not``) answered a literal guess valid or not, though every quote was
    ``***``: the verdict was the oracle."""
    found: list[tuple[Any, ...]] = []
    for name in sorted(config.tools):
        entry = describe_tool(name, config.tools[name])
        for key in _PUBLISHED:
            where = ("tools", name) if key == "name" else ("tools", name, key)
            _find_hidden(redactor, entry[key], where, found)
    return [".".join(shown(redactor, str(part)) for part in path) for path in found]


def refuse_secrets_in_catalog(config: Config, redactor: Redacting) -> None:
    """E_CONFIG_INVALID when the catalog publishes a secret (:func:`secrets_in_catalog`):
    every place named, never the value; at every load of a config (round 71)."""
    from controller.errors import ConfigInvalid

    places = secrets_in_catalog(config, redactor)
    if not places:
        return
    name = shown(redactor, str(config.source or "config"))
    if len(places) == 1:
        message = f"{name}: {places[0]}: holds a secret's value"
    else:
        message = f"{len(places)} places in {name} hold a secret's value:\n  " + "\n  ".join(places)
    raise ConfigInvalid(message, remedy=SECRET_IN_CATALOG_REMEDY)


def _find_hidden(
    redactor: Redacting, value: Any, where: tuple[Any, ...], found: list[tuple[Any, ...]]
) -> None:
    """Appends to ``found`` the deepest places of ``value`` (at ``where``) the redactor
    changes: a key, a string, a number whose text holds a secret, or a list that spells one
    only as a whole (its lines joined)."""
    if _same(redactor.data(value), value):
        return
    before = len(found)
    if isinstance(value, dict):
        for key, item in value.items():
            if redactor.text(str(key)) != str(key):
                found.append((*where, key))
            else:
                _find_hidden(redactor, item, (*where, key), found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _find_hidden(redactor, item, (*where, index), found)
    if len(found) == before:
        found.append(where)


def _same(seen: Any, value: Any) -> bool:
    """JSON data alike (NaN equal to itself: YAML's ``.nan`` is no secret)."""
    import json

    def text(data: Any) -> str:
        return json.dumps(data, sort_keys=True, default=str, ensure_ascii=False)

    return seen is value or text(seen) == text(value)


def catalog_maps(config: Config, names: set[str], redactor: Redacting) -> dict[str, str]:
    """What each of ``names`` runs (:func:`maps_to`) in ``config``'s catalog, :func:`shown`
    (``plangate show``'s ``runs:`` line)."""
    found = {t: maps_to(config.tools[t]) for t in sorted(names) if t in config.tools}
    return shown(redactor, found)


def maps_to(spec: ToolSpec) -> str:
    """What the tool runs, in one line: ``exec: kubectl scale ...``, ``http: POST https://...``,
    its credentials written ``***`` (round 26: ``show`` printed a URL's password and an
    argv token)."""
    from controller.display import masked_url
    from controller.settings.toolspec import tool_credentials

    if spec.kind == "exec":
        text = "exec: " + " ".join(spec.argv or [])
    elif spec.kind == "python":
        return f"python: {spec.target}"
    elif spec.kind == "http":
        text = f"http: {spec.method} {spec.url}"
    else:
        return "echo: returns its params"
    for credential in sorted(tool_credentials(spec), key=len, reverse=True):
        text = text.replace(credential, "***")
    return masked_url(text)


def specialise_schema(
    schema: dict[str, Any], config: Config, redactor: Redacting
) -> dict[str, Any]:
    """The PLAN.yml JSON Schema narrowed to ``config``'s catalog: ``tool`` (and
    ``available_tools`` names) must be a catalog name, a check's (``verify``,
    ``preconditions``) one that may check (:func:`controller.plan.shape.can_check`,
    E_CHECK_TOOL), and wherever a tool is called (an action, a fallback step, a check) its
    ``params`` must satisfy the tool's ``params_schema`` (JSON Schema 2020-12
    ``if``/``then``), a reference standing for any value (:func:`controller.plan.shape.
    with_references`), so an editor flags a wrong tool or param as you type. Each tool's
    schema is the plan schema's ``$defs/tool.<name>``, its own references rebased
    (:func:`_rebased`); an action's params, where validate reads a legacy ``${...}`` as a
    reference too, are checked by ``$defs/action.<name>`` (:func:`_action_defs`). What it
    takes from the catalog is :func:`shown`."""
    tools = config.tools
    out = copy.deepcopy(schema)
    real = sorted(tools)
    checkers = [n for n in real if can_check(tools[n].idempotent, getattr(tools[n], "risk", None))]
    own_defs = {_def_name(n): _rebased(tools[n].params_schema, n) for n in real}
    action_defs = _action_defs(tools, real)
    own_defs.update(action_defs)
    calls = {
        STEP: _branches(tools, real, ()),
        ACTION: _branches(tools, real, [n for n in real if _def_name(n, ACTION) in own_defs]),
    }
    names, checks, branches, tool_defs = shown(redactor, [real, checkers, calls, own_defs])
    if not isinstance(names, list) or not isinstance(checks, list):
        # the names joined spell a secret: each one masked
        names = [shown(redactor, name) for name in real]
        checks = [shown(redactor, name) for name in checkers]
    defs = out.setdefault("$defs", {})
    defs.update(cast(dict[str, Any], tool_defs))
    for model, is_check, nullable, reads in _CALLERS:
        called = defs.get(model)
        if called is None:
            continue
        called["properties"]["tool"] = {
            **called["properties"]["tool"],
            "enum": [*(checks if is_check else names), *([None] if nullable else [])],
            "description": _CHECK_NOTE if is_check else _TOOL_NOTE,
        }
        # beside the general schema's rules across fields, never instead (round 62)
        called["allOf"] = [*called.get("allOf", []), *cast(dict[str, Any], branches)[reads]]
    available = defs.get("AvailableTool")
    if available is not None:
        available["properties"]["name"] = {**available["properties"]["name"], "enum": names}
    out["title"] = f"{out.get('title', 'PLAN.yml')} (catalog: {', '.join(names) or 'empty'})"
    return out


_TOOL_NOTE = "A tool of the controller's catalog (`plangate tools`)."
_CHECK_NOTE = (
    "A check tool: one of the controller's catalog marked idempotent: true and risk: low "
    "(checks may run many times; E_CHECK_TOOL)."
)
#: How a caller's params read a reference: a step's (``$<...>`` only, :data:`controller.plan.
#: shape.REFERENCE_VALUE`) or an action's (a legacy ``${...}`` too, as validate converts it
#: there: :data:`controller.plan.shape.ACTION_REFERENCE_VALUE`, round 125); also the prefix
#: of the $defs name of the params schema read so (:func:`_def_name`).
STEP, ACTION = "tool", "action"
#: Every model that calls a tool: (its $defs name, it is a check, its tool may be null, how
#: its params read a reference). Only an action's params have legacy references converted
#: (plans.convert_legacy_params): a fallback step's or a check's ``${inputs.x}`` is text.
_CALLERS = (
    ("Action", False, False, ACTION),
    ("FallbackStep", False, False, STEP),
    ("Precondition", True, False, STEP),
    ("Verify", True, True, STEP),
)
_REFERENCES = {STEP: REFERENCE_VALUE, ACTION: ACTION_REFERENCE_VALUE}


def _branches(
    tools: dict[str, ToolSpec], names: list[str], as_action: Container[str]
) -> list[dict[str, Any]]:
    """One ``if tool is N then params meet N's params_schema`` per catalog tool: its
    ``$defs/action.<N>`` for the tools in ``as_action``, ``$defs/tool.<N>`` for the others."""
    return [
        {
            "if": {"properties": {"tool": {"const": name}}, "required": ["tool"]},
            "then": {
                "description": _trust_note(tools[name]),
                "properties": {
                    "params": {
                        "$ref": f"#/$defs/{_def_name(name, ACTION if name in as_action else STEP)}"
                    }
                },
            },
        }
        for name in names
    ]


def _action_defs(tools: dict[str, ToolSpec], names: list[str]) -> dict[str, Any]:
    """``$defs/action.<name>``: the tool's params schema where a reference may also be a
    legacy ``${...}`` (:data:`ACTION`), rebased there, for each tool whose schema has a
    place a reference stands in (else the two read alike: ``tool.<name>`` serves both)."""
    out = {}
    for name in names:
        params_schema = tools[name].params_schema or {}
        if with_references(params_schema) != with_references(params_schema, _REFERENCES[ACTION]):
            out[_def_name(name, ACTION)] = _rebased(params_schema, name, ACTION)
    return out


def _def_name(tool: str, reads: str = STEP) -> str:
    """Where a tool's params schema, read by a caller of kind ``reads`` (:data:`STEP`,
    :data:`ACTION`), sits in the plan schema's ``$defs`` (a dot: no model's name has one;
    no tool's name either, so the two prefixes' anchors and ``$id``s never meet)."""
    return f"{reads}.{tool}"


#: The base of every ``$id`` a tool's schema is embedded with: one namespace per tool.
_OWN_IDS = "urn:plangate:"


@dataclass(frozen=True)
class _Root:
    """Where the tool schema's root resource (no ``$id``) sits in the plan schema."""

    pointer: str  # ``#/$defs/tool.<name>`` (``action.<name>``)
    anchors: str  # ``tool.<name>.`` (``action.<name>.``), the prefix of its anchors


def _rebased(params_schema: Any, tool: str, reads: str = STEP) -> Any:
    """``tool``'s params schema (:func:`controller.plan.shape.with_references`, the reference
    of a caller of kind ``reads``) as it reads at ``#/$defs/tool.<name>`` (``action.<name>``:
    :func:`_def_name`) of the plan schema, its references resolving as when
    ``validate`` checks params against it alone (round 64: its ``$ref: "#/$defs/port"``
    pointed into the PLAN schema's ``$defs``, missing, or its own ``Output``). Its root
    (with no ``$id``) is part of the plan schema's resource: every reference into it (``#``,
    ``#/<pointer>``) is prefixed with its new place, and each anchor gets the prefix
    ``<name>.``. A part with its own ``$id`` is a resource of its own, where ``#`` is
    itself already; its ``$id`` is made the tool's own (:func:`_own_uri`), and so is each
    reference naming a URI (round 65: two tools with one ``$id`` were two resources of one
    URI in the plan schema, one tool's ``$ref`` resolving in the other's). The config
    refuses a reference that does not resolve inside the schema
    (:func:`controller.plan.schemarefs.foreign_references`), so each names the tool's own."""
    schema = with_references(params_schema or {}, _REFERENCES[reads])
    if type(schema) is not dict:
        return schema
    if "$id" not in schema:
        schema = {k: v for k, v in schema.items() if k != "$schema"}  # one dialect: the plan's
    name = _def_name(tool, reads)
    return _rebase(schema, name, "", _Root(f"#/$defs/{name}", f"{name}."))


def _rebase(node: Any, name: str, uri: str, root: _Root | None) -> Any:
    """``node`` rebased; ``name`` its ``$defs`` name (:func:`_def_name`), ``uri`` the base
    URI of the resource it sits in, ``root`` the root's place while it sits in the root
    resource."""
    if isinstance(node, list):
        return [_rebase(item, name, uri, root) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("$id"), str):  # a resource of its own (as referencing reads it)
        uri, root = urljoin(uri, node["$id"].rstrip("#")), None
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in schemarefs.DATA_KEYWORDS:
            out[key] = value
        elif key in schemarefs.NAMED_SCHEMAS and isinstance(value, dict):
            out[key] = {part: _rebase(sub, name, uri, root) for part, sub in value.items()}
        elif key == "$id" and isinstance(value, str):
            out[key] = _own_uri(name, uri)
        elif key in schemarefs.REF_KEYWORDS and isinstance(value, str):
            out[key] = _rebased_ref(value, name, uri, root)
        elif key in schemarefs.ANCHOR_KEYWORDS and isinstance(value, str) and root is not None:
            out[key] = root.anchors + value
        else:
            out[key] = _rebase(value, name, uri, root)
    return out


def _rebased_ref(ref: str, name: str, uri: str, root: _Root | None) -> str:
    """A reference read in the resource at ``uri`` as it reads in the plan schema."""
    if not ref.startswith("#"):
        target, fragment = urldefrag(urljoin(uri, ref))
        if target:  # names a resource with its own $id: the tool's copy of it
            return _own_uri(name, target) + (f"#{fragment}" if fragment else "")
        ref = f"#{fragment}"
    if root is None:  # inside a resource of its own, where # is itself
        return ref
    inside = ref[1:]
    return root.pointer + inside if inside[:1] in ("", "/") else f"#{root.anchors}{inside}"


def _own_uri(name: str, uri: str) -> str:
    """The ``$id`` ``uri`` (absolute, as a reference in the tool's schema resolves it) of
    the tool's schema at ``$defs/<name>`` is embedded with: one per tool and caller kind, so
    two tools' ``$id``s (or one tool's two forms) never meet."""
    return f"{_OWN_IDS}{quote(name, safe='')}:{quote(uri, safe=':/')}"


def _trust_note(spec: ToolSpec) -> str:
    """What the editor tells an author about a tool's data flows (SPEC §16)."""
    trust = getattr(spec, "output_trust", "untrusted")
    sensitive = list(getattr(spec, "sensitive", None) or [])
    note = f"output_trust: {trust}"
    if sensitive:
        note += f"; sensitive params: {', '.join(sensitive)} (outside data needs a guard)"
    return note
