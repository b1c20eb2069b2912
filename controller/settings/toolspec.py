"""One entry of the tool catalog (``tools:`` in ``plangate.yml``, SPEC §6).

The catalog decides what a plan's ``tool:`` name may run, so each kind's options are checked
strictly here: only that kind's options, the required one present, URLs, headers, argv,
environment and ``module:function`` targets well formed, ``params_schema`` a JSON Schema;
and what a call risks and costs (``risk``, ``estimate``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    field_validator,
    model_validator,
)

from controller.display import CREDENTIAL_NAME
from controller.plan import regexes
from controller.plan.schemarefs import endless_reference, foreign_references
from controller.plan.shape import with_references
from controller.settings.fields import (
    Amount,
    Risk,
    Seconds,
    _invalid,
    _shown,
    _Strict,
)
from controller.settings.values import (
    _COMMON_OPTIONS,
    _CONTROL,
    _HEADER_NAME,
    _PLACEHOLDER,
    _REQUIRED_OPTION,
    _TARGET,
    HTTP_METHODS,
    KIND_OPTIONS,
)


class Estimate(_Strict):
    """What one call of a tool is expected to take and cost."""

    seconds: Amount = 0.0
    cost_usd: Amount = 0.0


class ToolSpec(_Strict):
    """One catalog entry: what a plan's ``tool:`` name runs (SPEC §6)."""

    kind: Literal["echo", "exec", "python", "http"]
    description: str = ""
    argv: list[str] | None = None
    """exec: the program and its arguments; ``{param}`` placeholders fill one element each."""
    env: dict[str, str] = {}
    """exec, python: extra environment variables."""
    cwd: Path | None = None
    """exec, python: working directory."""
    target: str | None = None
    """python: ``module:function``."""
    method: str = "POST"
    """http: the request method, one of :data:`HTTP_METHODS` (any case; kept upper-case)."""
    url: str | None = None
    """http: an http(s) URL; ``{param}`` placeholders are URL-encoded."""
    headers: dict[str, str] = {}
    """http: extra request headers."""
    params_schema: dict[str, Any] | None = None
    """JSON Schema the params must satisfy (statically at validation, again before running)."""
    idempotent: bool = False
    """Safe to run twice: an action in doubt after a crash is re-run instead of failing."""
    timeout: Seconds = 60.0
    """Seconds before the tool is killed (E_TIMEOUT); an action's ``timeout`` overrides it."""
    output_trust: Literal["untrusted", "trusted", "inherit"] = "untrusted"
    """Who writes its output: ``untrusted`` (outside data, the default), ``trusted`` (the
    operator vouches for it), ``inherit`` (as trusted as its inputs: a pure transformation).
    Untrusted output reaching a ``sensitive`` param needs a guard (SPEC §16)."""
    sensitive: list[str] = []
    """Params that steer where its effects go (recipients, URLs, amounts)."""
    risk: Risk = "medium"
    """``low``: reads only; ``medium``: writes that can be undone; ``high``: publishes,
    deletes or changes many things. A plan's risk is the highest of its tools'."""
    estimate: Estimate | None = None
    """What one call costs: ``{seconds, cost_usd}``; a plan's estimate sums its calls."""

    @field_validator("method")
    @classmethod
    def _method(cls, value: str) -> str:
        if value.upper() not in HTTP_METHODS:
            raise _invalid(
                f"found {_shown(value)}, not an HTTP method a tool can use",
                f"use one of {', '.join(HTTP_METHODS)}",
            )
        return value.upper()

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not _is_http_url(value):
            raise _invalid(
                f"found {_shown(value)}, not an http:// or https:// URL with a host",
                "write a full URL such as https://hooks.example.com/{channel} "
                "({param} placeholders are allowed)",
            )
        return value

    @field_validator("argv")
    @classmethod
    def _argv(cls, value: list[str] | None) -> list[str] | None:
        remedy = "start argv with the program to run, e.g. [kubectl, scale, ...]"
        if value and not value[0].strip():
            raise _invalid(f"found {_shown(value[0])} as the program", remedy)
        if value and any("\0" in arg for arg in value):
            raise _invalid("found a NUL character in an argument", "remove it")
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if not name or "=" in name or "\0" in name + text:
                raise _invalid(
                    f"found the variable {_shown(name)}, which a process environment cannot hold",
                    "use names without `=` and values without NUL characters",
                    key=name,
                )
        return value

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if not _HEADER_NAME.fullmatch(name) or _CONTROL.search(text.replace("\t", "")):
                raise _invalid(
                    f"found the header {_shown(name)}: {_shown(text)}, not a valid HTTP header",
                    "use a header name of letters, digits and - (e.g. X-Team), "
                    "and a value on one line",
                    key=name,
                )
        return value

    @field_validator("target")
    @classmethod
    def _target(cls, value: str | None) -> str | None:
        if value is not None and not _TARGET.fullmatch(value):
            raise _invalid(
                f"found {_shown(value)}, not module:function",
                "write the import path of a module, a colon and the function, "
                "e.g. mailtools:list_mail or pkg.mod:Class.method",
            )
        return value

    @model_validator(mode="after")
    def _kind_fields(self) -> ToolSpec:
        options = KIND_OPTIONS[self.kind]
        stray = sorted(self.model_fields_set - set(options) - set(_COMMON_OPTIONS))
        if stray:
            takes = ", ".join([*options, *_COMMON_OPTIONS[1:]])
            raise _invalid(
                f"found {', '.join(stray)}, not an option of a tool of kind {self.kind}",
                f"remove it: tools of kind {self.kind} take {takes}",
                key=stray[0],
            )
        needed = _REQUIRED_OPTION.get(self.kind)
        if needed and not getattr(self, needed):
            raise _invalid(
                f"missing: a tool of kind {self.kind} needs `{needed}`",
                f"add `{needed}` (see the tool table in docs/configuration.md)",
                key=needed,
            )
        if self.params_schema is not None:
            _check_json_schema(self.params_schema)
        return self


#: A value shorter than this is not taken for a credential (it would mask every such text).
MIN_CREDENTIAL_CHARS = 4
#: A URL's user part (with no password) shorter than this is a user name, not a token (round
#: 43): ``deploy``, ``postgres``, ``carol`` are names; GitHub's PATs (40 characters), Sentry's
#: DSN keys (32) and the like are far longer.
MIN_USER_TOKEN_CHARS = 16
_PAIR = re.compile(r"([A-Za-z0-9_.-]+)[=:]\s*([^\s&;,]+)")


def argv_params(spec: ToolSpec) -> set[str]:
    """The params an ``exec`` entry's ``argv`` takes through ``{param}`` placeholders: what
    a plan gives them is the program's command line, which every process on the host can
    read (the controller refuses a secret there at run time, round 128)."""
    if spec.kind != "exec":
        return set()
    return {m.group(0)[1:-1] for item in spec.argv or () for m in _PLACEHOLDER.finditer(item)}


def tool_credentials(spec: ToolSpec) -> set[str]:
    """The values of a catalog entry that are credentials, never to be written (rounds 25,
    26), told by their names, so that ``production`` or ``readonly`` stay readable: the
    value of an ``env`` variable or header named like a credential (``API_KEY``,
    ``Authorization``) and its last word (``Bearer TOKEN``); in any value, argv item or URL
    query, the value of a pair whose name is one (``key=TOKEN``, ``--token=TOKEN``,
    ``--token TOKEN``, ``?api_key=...``); a URL's userinfo (its password and, round 41, its
    user part); a password in a short argv flag (:func:`flag_credential`: ``-u user:PW``,
    ``-pPW``, ``-a PW``)."""
    found: set[str] = set()

    def add(value: str) -> None:
        value = value.strip()
        if len(value) >= MIN_CREDENTIAL_CHARS and "{" not in value:
            found.add(value)

    def pairs(text: str) -> None:
        for name, value in _PAIR.findall(text):
            if CREDENTIAL_NAME.search(name):
                add(value)

    for name, value in [*spec.env.items(), *spec.headers.items()]:
        if CREDENTIAL_NAME.search(name):
            add(value)
            add(value.split()[-1] if value.split() else value)
        pairs(value)
        found |= _url_credentials(value, add)
    argv = spec.argv or []
    for index, item in enumerate(argv[1:], 1):
        pairs(item)
        found |= _url_credentials(item, add)
        following = argv[index + 1] if index + 1 < len(argv) else None
        named = item.startswith("-") and "=" not in item and CREDENTIAL_NAME.search(item)
        if named and following is not None and not following.startswith("-"):
            add(following)
        flag_credential(item, following, add)
    if spec.url:
        found |= url_credentials(spec.url, add)
    return found


#: Short flags whose value is a password in common clients (round 41): ``-a PW``
#: (redis-cli), ``-p PW`` (sshpass, mysql's ``-pPW`` attached).
_PASSWORD_FLAGS = ("-a", "-p")
#: Flags whose value is ``user:password`` (curl ``-u``/``--user``, ``-uUSER:PW`` attached).
_USER_FLAGS = ("-u", "--user")
#: A value of ``-p`` that is a port or a port mapping (``-p 8080``, ``-p 8080:80/tcp``),
#: not a password.
_PORT = re.compile(r"[0-9]{1,5}|[0-9.:\[\]]*:[0-9]{1,5}(?:/(?:tcp|udp|sctp))?")
#: A value of ``-p``/``-a`` that is a path (``mkdir -p /srv/app``, ``cp -p ./a b``).
_PATH_VALUE = re.compile(r"(?:/|\./|\.\./|~/)")
#: An attached ``-p`` value of lower-case letters is a word of a single-dash long option
#: (find's ``-print``, ``-prune``, ``-perm``, ``-path``), not ``-pPASSWORD``.
_OPTION_WORD = re.compile(r"[a-z]+")


def flag_credential(item: str, following: str | None, add: Callable[[str], None]) -> None:
    """Hands to ``add`` a password an argv item (with the one after it) gives the way common
    clients take one (round 41): the password of ``user:password`` after ``-u``/``--user``
    (``--user=``, ``-uUSER:PW``); the value after ``-a`` or ``-p``, or attached to ``-p``
    (``-pPW``), unless it is a port (all digits, at most 5: ``-p 8080``; a port mapping
    ``8080:80``), a path (``/``, ``./``, ``../``, ``~/``) or, attached, lower-case letters
    only (``-print``); ``--password``/``--pass``/``--auth`` are named like credentials."""
    if item in _USER_FLAGS or any(item.startswith(f"{f}=") for f in _USER_FLAGS[1:]):
        value = following if item in _USER_FLAGS else item.partition("=")[2]
        _user_password(value, add)
    elif item.startswith("-u") and not item.startswith("--") and len(item) > 2:
        _user_password(item[2:], add)
    elif item in _PASSWORD_FLAGS:
        if following is not None and not following.startswith("-"):
            _password(following, add)
    elif item.startswith("-p") and not item.startswith("--") and len(item) > 2:
        value = item[2:]
        if not _OPTION_WORD.fullmatch(value):
            _password(value, add)


def _user_password(value: str | None, add: Callable[[str], None]) -> None:
    if value and ":" in value:
        _password(value.partition(":")[2], add)


def _password(value: str, add: Callable[[str], None]) -> None:
    if _PORT.fullmatch(value) or _PATH_VALUE.match(value):
        return
    add(value)


#: A URL inside a longer value (an env value, a header, an argv item): a scheme and ``://``.
_URL_IN = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")


def _url_credentials(text: str, add: Callable[[str], None]) -> set[str]:
    """The credentials of every URL written in ``text`` (round 40: ``DATABASE_URL``'s
    ``postgres://app:PW@db/x``, a ``redis://:PW@cache`` argv item)."""
    found: set[str] = set()
    for match in _URL_IN.finditer(text) if "://" in text else ():
        found |= url_credentials(match.group(), add)
    return found


def url_credentials(url: str, add: Callable[[str], None]) -> set[str]:
    """A URL's userinfo: its password (at any length) and, when it has none, a user part that
    looks like a token (as written and decoded; :data:`MIN_USER_TOKEN_CHARS` or more); its
    query values named like credentials are handed to ``add``. Round 41: the user part alone
    is a credential, where GitHub (a clone URL ``https://<PAT>@github.com/o/r.git``) and
    Sentry (a DSN's key) put the token. Round 43: only such a user part: tool results are
    redacted before outputs are read from them, so hiding an ordinary user name (``deploy``,
    ``carol``) would change the values a plan runs with (``deploy-7 done`` read as
    ``***-7 done``). A user name beside a password is a name. Display masking
    (``display.masked_url``: ``***@host``) still hides every userinfo."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return set()
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if CREDENTIAL_NAME.search(name):
            add(value)
    found = {password, unquote(password)} if password else set()
    if user and not password:  # a user name (``git``, ``deploy``) would mask that word everywhere
        found |= {v for v in (user, unquote(user)) if len(v) >= MIN_USER_TOKEN_CHARS}
    return found


def _is_http_url(url: str) -> bool:
    from urllib.parse import urlsplit

    concrete = _PLACEHOLDER.sub("p", url)  # a filled placeholder is URL-encoded text
    if _CONTROL.search(concrete):
        return False
    try:
        parts = urlsplit(concrete)
        _ = parts.port  # raises ValueError on a port out of range
    except ValueError:
        return False
    host_ok = bool(parts.hostname) and " " not in parts.netloc
    return parts.scheme in ("http", "https") and host_ok


def _check_json_schema(schema: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise _invalid(
            f"not a valid JSON Schema: {exc.message}",
            "write a JSON Schema (draft 2020-12), e.g. {type: object, properties: {...}}",
            key="params_schema",
        ) from None
    _check_self_contained(schema)
    _check_ends(schema)
    keywords = {where.rsplit(".", 1)[-1] for where, _ in _schema_patterns(schema, "")}
    if "patternProperties" in keywords and '"unevaluatedProperties"' in json.dumps(schema):
        raise _invalid(  # jsonschema reads patternProperties there with Python's re
            "patternProperties with unevaluatedProperties: plangate cannot run those patterns "
            "as ECMA-262",
            "use additionalProperties, or properties without patternProperties",
            key="params_schema",
        )
    for where, pattern in _schema_patterns(schema, "params_schema"):
        problem = regexes.ecma_problem(pattern)
        if problem is not None:
            raise _invalid(
                f"{where}: not an ECMA-262 pattern plangate can run as JSON Schema means it: "
                f"{problem}",
                "write the pattern in ECMA-262 without flags: [0-9] for digits, ^...$ for the "
                "whole value, no back-references, named groups or (?...) flags",
                key="params_schema",
            )


def _check_self_contained(schema: dict[str, Any]) -> None:
    """Every reference resolves inside the schema (round 65: a ``$ref`` to another tool's
    ``$id`` or an ``https://`` URI stopped every pass once a plan named the tool), both as
    written and as params are checked against it (round 67: a pointer into a property's
    subschema resolved in the first, nowhere in the second)."""
    foreign = foreign_references(schema, with_references(schema))
    if foreign:
        raise _invalid(
            f"$ref {foreign[0]!r} does not resolve inside this tool's params_schema (a catalog "
            "schema is self-contained: nothing is fetched, another tool's $id is not this one's)",
            "point each $ref into the tool's own schema (#/$defs/<name>, an $anchor, its own $id); "
            "copy a definition two tools share into each tool's $defs",
            key="params_schema",
        )


def _check_ends(schema: dict[str, Any]) -> None:
    """No reference applies the schema to the same value again without end (round 114:
    ``{$ref: "#"}`` loaded, and every reader of a plan calling the tool died of Python's
    recursion limit), neither as written nor as params are checked against it."""
    for form in (schema, with_references(schema)):
        ref = endless_reference(form)
        if ref is not None:
            raise _invalid(
                f"$ref {ref!r} leads back to where it stands without passing through a property "
                "or an item: checking any params against this schema would never end",
                "let each $ref that refers back to its own schema do so below properties, "
                "items or additionalProperties (a tree), or remove the loop",
                key="params_schema",
            )


def _schema_patterns(schema: Any, where: str) -> Iterator[tuple[str, str]]:
    """Each ``pattern`` keyword in ``schema`` (not inside ``enum``/``const``/examples)."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "pattern" and isinstance(value, str):
                yield f"{where}.pattern", value
            if key == "patternProperties" and isinstance(value, dict):
                yield from ((f"{where}.patternProperties", k) for k in value)
            elif key not in ("enum", "const", "default", "examples"):
                yield from _schema_patterns(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for k, value in enumerate(schema):
            yield from _schema_patterns(value, f"{where}[{k}]")
