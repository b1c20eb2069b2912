"""The controller's configuration, ``plangate.yml`` (SPEC §9).

The config decides who may approve and what tools can do, so it is kept out of reach of
plan authors: it is read from the operator's path, never from a plan. Lookup order:
``--config`` flag > ``PLANGATE_CONFIG`` > ``./plangate.yml``. Unknown keys and bad values
are ``E_CONFIG_INVALID`` naming the key and the remedy.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from controller.errors import ConfigInvalid

CONFIG_NAME = "plangate.yml"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
#: Methods an ``http`` tool may use (CONNECT and TRACE are not for tools).
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
#: Longest timeout or interval, in seconds: the daemon's waits overflow past ~292 years, and
#: nothing a controller does should wait longer than a year.
MAX_SECONDS = 365 * 86400
#: Options of each tool kind, besides those every kind takes.
KIND_OPTIONS = {
    "echo": (),
    "exec": ("argv", "env", "cwd"),
    "python": ("target", "env", "cwd"),
    "http": ("method", "url", "headers"),
}
_COMMON_OPTIONS = (
    "kind",
    "description",
    "params_schema",
    "idempotent",
    "timeout",
    "output_trust",
    "sensitive",
    "risk",
    "estimate",
)
#: Risk tiers of catalog tools and plans, lowest first (SPEC §11).
RISKS = ("low", "medium", "high")
NotifyEvent = Literal[
    "awaiting-approval", "partial", "refuse", "start", "complete", "fail", "abort"
]
#: Events ``notify:`` can post (SPEC §11).
NOTIFY_EVENTS: tuple[str, ...] = get_args(NotifyEvent)
_REQUIRED_OPTION = {"exec": "argv", "python": "target", "http": "url"}
_IDENT = r"[^\W\d]\w*"
_TARGET = re.compile(rf"{_IDENT}(?:\.{_IDENT})*:{_IDENT}(?:\.{_IDENT})*")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HOST_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_PORT = re.compile(r"[0-9]{1,5}")
_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: Characters git strips from the ends of a commit's name or email (its "crud"); the same set
#: as controller.git.gitrepo, which this layer cannot import.
_GIT_CRUD = frozenset(" .,:;<>\"\\'") | {chr(c) for c in range(33)}
_REF_FORBIDDEN = frozenset(" ~^:?*[\\\x7f") | {chr(c) for c in range(32)}
LISTEN_REMEDY = (
    "write host:port with a port from 1 to 65535 (0: any free port), e.g. 127.0.0.1:8787; "
    "an IPv6 address goes in brackets ([::1]:8787); :8787 listens on all interfaces; "
    "null turns the endpoint off"
)


def parse_duration(value: str | int | float | None) -> float | None:
    """Seconds from ``90``, ``"90s"``, ``"15m"``, ``"12h"``, ``"7d"`` or ``"2w"``."""
    if value is None or isinstance(value, int | float):
        return None if value is None else float(value)
    match = _DURATION.match(value)
    if not match:
        raise ValueError(f"not a duration: {value!r} (write e.g. 90s, 15m, 12h, 7d)")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def parse_listen(value: str) -> tuple[str, int]:
    """``host:port``, ``[v6]:port`` or ``:port`` (all interfaces) -> (host, port).

    The one parser of ``webhook.listen`` and ``metrics.listen``: the config is checked with it
    when it is read, and the endpoints bind what it returns. ValueError says what is wrong.
    """
    host, sep, port_text = value.rpartition(":")
    if not sep:
        raise ValueError("not host:port")
    if not _PORT.fullmatch(port_text) or int(port_text) > 65535:
        raise ValueError(f"port {port_text!r} is not a number from 0 to 65535")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if not _is_ip(host, version=6):
            raise ValueError(f"{host!r} in brackets is not an IPv6 address")
    elif ":" in host:
        raise ValueError("an IPv6 address must be written in brackets")
    elif host and not (_is_ip(host, version=4) or _is_hostname(host)):
        raise ValueError(f"{host!r} is neither an IP address nor a host name")
    return host, int(port_text)


def _is_ip(text: str, version: int) -> bool:
    import ipaddress

    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return address.version == version


def _is_hostname(text: str) -> bool:
    labels = text.removesuffix(".").split(".")
    if len(text) > 253 or labels[-1].isdigit():  # all-numeric: a mistyped IPv4 address
        return False
    return all(_HOST_LABEL.fullmatch(label) for label in labels)


def is_branch_name(name: str) -> bool:
    """True when git accepts ``name`` as a branch: ``git check-ref-format refs/heads/NAME``
    passes and ``git branch`` would not refuse it (a leading ``-``, ``HEAD``)."""
    if name in ("", "@", "HEAD") or name.startswith(("-", "/")) or name.endswith(("/", ".")):
        return False
    if any(s in name for s in ("..", "//", "@{")) or any(c in _REF_FORBIDDEN for c in name):
        return False
    return all(
        part and not part.startswith(".") and not part.endswith(".lock") for part in name.split("/")
    )


def _invalid(problem: str, remedy: str, key: str = "") -> PydanticCustomError:
    """A bad value: what was found and how to fix it; ``key`` names a field of a model check."""
    return PydanticCustomError(
        "config_value", "{problem}", {"problem": problem, "remedy": remedy, "key": key}
    )


def _shown(value: Any) -> str:
    """A found value as the user wrote it, short."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    text = repr(str(value) if isinstance(value, Path) else value)
    return text if len(text) <= 80 else text[:77] + "..."


def _number(value: Any) -> Any:
    # pydantic would read `true` as 1: a yes/no where a number belongs is a mistake
    if isinstance(value, bool):
        raise _invalid(f"found {_shown(value)}, a yes/no value", "write a number")
    return value


Seconds = Annotated[
    float, BeforeValidator(_number), Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False)
]
Count = Annotated[int, BeforeValidator(_number), Field(gt=0)]
Amount = Annotated[float, BeforeValidator(_number), Field(ge=0, allow_inf_nan=False)]
Risk = Literal["low", "medium", "high"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RemoteSettings(_Strict):
    """Remote mode: the controller keeps its own clone of ``url`` in the state directory."""

    url: str
    """Git URL of the plans repository (ssh://, https://, git://, or a path)."""
    branch: str = "main"
    """The watched branch."""
    poll_interval: Seconds = 15.0
    """Seconds between fetches."""

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.strip() or value.startswith("-") or _CONTROL.search(value):
            raise _invalid(
                f"found {_shown(value)}, not a git URL",
                "write the repository's URL (ssh://, https://, git:// or a path); "
                "it cannot be empty, start with `-` or hold control characters",
            )
        return value

    @field_validator("branch")
    @classmethod
    def _branch(cls, value: str) -> str:
        if not is_branch_name(value):
            raise _invalid(
                f"found {_shown(value)}, which git does not accept as a branch name",
                "write a branch name such as main (see `git check-ref-format`)",
            )
        return value


class Identity(_Strict):
    """Name and email of the controller's own commits."""

    name: str = "plangate"
    email: str = "plangate@localhost"

    @field_validator("name", "email")
    @classmethod
    def _as_git_stores_it(cls, value: str) -> str:
        # git would silently change such a value, and the controller would then fail to
        # recognise its own commits in the history
        if not _stored_as_written(value):
            raise _invalid(
                f"found {_shown(value)}, which git would not store as written",
                "write it without < > or control characters, and without spaces or "
                "punctuation (. , : ; \" ' \\) at either end",
            )
        return value


def _stored_as_written(text: str) -> bool:
    """True when git keeps a commit's name or email as given (it strips or refuses others)."""
    if not text or text[0] in _GIT_CRUD or text[-1] in _GIT_CRUD:
        return False
    return not (_CONTROL.search(text) or "<" in text or ">" in text)


def _optional_duration(value: Any) -> float | None:
    """A positive duration (``90``, ``"15m"``, ``"7d"``) in seconds, or None."""
    remedy = "write a positive duration: seconds, or a number with s, m, h, d or w (7d)"
    if isinstance(value, bool) or not isinstance(value, str | int | float | None):
        raise _invalid(f"found {_shown(value)}, not a duration", remedy)
    try:
        seconds = parse_duration(value)
    except ValueError:
        raise _invalid(f"found {_shown(value)}, not a duration", remedy) from None
    if seconds is not None and not 0 < seconds < math.inf:
        raise _invalid(f"found {_shown(value)}, not a positive duration", remedy)
    return seconds


class RuleMatch(_Strict):
    """What a plan must have for a rule to apply; every key given must fit (empty: any plan)."""

    risk: Risk | None = None
    """The plan's risk is at least this."""
    paths: list[str] | None = None
    """Globs on the plan's path (``plans/sandbox/**``); one must match."""
    tools: list[str] | None = None
    """Catalog tool names; the plan must call one of them."""
    flows: Literal["untrusted_to_sensitive"] | None = None
    """Not available yet: refused when the config is read (see docs/approvals.md)."""

    @field_validator("flows")
    @classmethod
    def _flows(cls, value: str | None) -> str | None:
        # Matching on data flows needs the flow analysis of issue 18; accepting the key now
        # would silently require fewer approvals than the operator wrote.
        if value is not None:
            raise _invalid(
                "found flows: untrusted_to_sensitive, which this plangate cannot evaluate yet",
                "remove `flows` from the rule (match on risk, paths or tools instead)",
            )
        return value


class Requirement(_Strict):
    """``count`` distinct approvers, from ``group`` (or any allowed approver)."""

    group: str | None = None
    count: Count = 1


class ApprovalRule(_Strict):
    """One policy rule: which plans (``match``) need which approvals (``require``)."""

    match: RuleMatch = RuleMatch()
    require: Annotated[list[Requirement], Field(min_length=1)]


class ApprovalSettings(_Strict):
    """Who may approve plans, and how an approval is checked (SPEC §5)."""

    approvers: list[str] = []
    """Glob patterns on the approver's email; an empty list allows nobody."""
    identity: Literal["author", "committer"] = "author"
    """Which identity of the approving commit is the approver."""
    allow_self_approval: bool = False
    """Allow an approver who changed the plan's hashed content to approve it."""
    require_signed: bool = False
    """Require ``git verify-commit`` to accept the approving commit."""
    allowed_signers: Path | None = None
    """File for git's ``gpg.ssh.allowedSignersFile`` (SSH signatures)."""
    max_age: float | None = None
    """Seconds (or ``7d``-style text): a plan frozen longer ago cannot be approved."""
    groups: dict[str, list[str]] = {}
    """Named sets of approver patterns (globs on the email), used by ``rules``."""
    rules: list[ApprovalRule] = []
    """The first rule whose ``match`` fits a plan says which approvals it needs (SPEC §11);
    no rule matches -> one approval by an allowed approver."""

    _duration = field_validator("max_age", mode="before")(_optional_duration)

    @field_validator("groups")
    @classmethod
    def _group_names(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name):
                raise _invalid(
                    f"found the group name {_shown(name)}",
                    "name groups with letters, digits, _ and -, starting with a letter or _",
                    key=name,
                )
        return value

    @model_validator(mode="after")
    def _known_groups(self) -> ApprovalSettings:
        for r_index, rule in enumerate(self.rules):
            for q_index, need in enumerate(rule.require):
                if need.group is not None and need.group not in self.groups:
                    known = ", ".join(self.groups) or "none"
                    raise _invalid(
                        f"rules[{r_index}].require[{q_index}] names the group "
                        f"{_shown(need.group)}, which approval.groups does not define",
                        f"define it under approval.groups (defined: {known}) or fix the name",
                        key="rules",
                    )
        return self


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


class SecretsSettings(_Strict):
    """Where ``$<secrets.NAME>`` values come from: never from the repo."""

    env_prefix: str = "PLANGATE_SECRET_"
    """Environment variables ``<env_prefix>NAME`` hold secret NAME (kept from tool processes)."""
    file: Path | None = None
    """A YAML/JSON mapping NAME: value, readable by the controller only."""

    @field_validator("env_prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        # an empty prefix would make every variable (PATH, HOME, ...) a secret: redacted from
        # all output and kept from every tool process
        return _env_name(
            value, "the start of an environment variable name", "a prefix", "PLANGATE_SECRET_"
        )


class Limits(_Strict):
    """Size limits that keep hostile plans and tools from exhausting the controller."""

    max_plan_bytes: Count = 1_048_576
    max_actions: Count = 500
    max_result_bytes: Count = 65_536
    max_tool_calls: Count = 1000
    """Tool calls one run may make, retries included (E_LIMIT_EXCEEDED past it)."""
    max_cost_usd: Amount | None = None
    """The highest estimated cost a plan may have at freeze."""
    max_runtime: float | None = None
    """Seconds (or ``15m``-style text) a run may take, and a plan's estimate may reach."""

    _runtime = field_validator("max_runtime", mode="before")(_optional_duration)


def _env_name(value: str, expected: str, what: str, example: str) -> str:
    if not _ENV_NAME.fullmatch(value):
        raise _invalid(
            f"found {_shown(value)}, not {expected}",
            f"write {what} of letters, digits and _, e.g. {example}",
        )
    return value


def _listen(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        parse_listen(value)
    except ValueError as exc:
        raise _invalid(f"found {_shown(value)}: {exc}", LISTEN_REMEDY) from None
    return value


class WebhookSettings(_Strict):
    """Remote mode: an HTTP endpoint that triggers an immediate fetch on push."""

    listen: str | None = None
    """``host:port``, e.g. ``127.0.0.1:8787`` (see :func:`parse_listen`)."""
    secret_env: str = "PLANGATE_WEBHOOK_SECRET"
    """Environment variable holding the shared secret."""
    max_body_bytes: Count = 1_048_576

    _check_listen = field_validator("listen")(_listen)

    @field_validator("secret_env")
    @classmethod
    def _secret_env(cls, value: str) -> str:
        return _env_name(value, "an environment variable name", "a name", "PLANGATE_WEBHOOK_SECRET")


class MetricsSettings(_Strict):
    """Prometheus ``/metrics`` and ``/healthz``."""

    listen: str | None = None
    """``host:port``, e.g. ``127.0.0.1:9187`` (see :func:`parse_listen`)."""

    _check_listen = field_validator("listen")(_listen)


class UiSettings(_Strict):
    """The read-only web page for reviewers and operators (docs/operations.md)."""

    listen: str | None = None
    """Off when null. ``8790`` (a bare port) listens on loopback only; ``host:port`` as for
    ``metrics.listen`` (see :func:`parse_listen`)."""
    token_env: str | None = None
    """Environment variable holding a bearer token the page then requires (null: none)."""
    commit_url: str | None = None
    """Link for a commit, ``{commit}`` replaced by its id, e.g.
    ``https://github.com/org/plans/commit/{commit}`` (null: the page's own commit view)."""
    max_rows: Count = 100
    """Plans listed per status on one page (the rest are a page further)."""

    @field_validator("listen", mode="before")
    @classmethod
    def _loopback_port(cls, value: object) -> object:
        if (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, str) and value.isdigit()
        ):
            value = f"127.0.0.1:{value}"
        return _listen(value)  # type: ignore[arg-type]

    @field_validator("token_env")
    @classmethod
    def _token_env(cls, value: str | None) -> str | None:
        if value is None:
            return None
        return _env_name(value, "an environment variable name", "a name", "PLANGATE_UI_TOKEN")

    @field_validator("commit_url")
    @classmethod
    def _commit_url(cls, value: str | None) -> str | None:
        if value is not None and (
            "{commit}" not in value or not value.startswith(("https://", "http://"))
        ):
            raise _invalid(
                f"found {_shown(value)}",
                "write an http(s) URL holding {commit}, "
                "e.g. https://github.com/org/plans/commit/{commit}",
            )
        return value


class ExecutionSettings(_Strict):
    """How the daemon runs approved plans."""

    max_concurrent_plans: Count = 1
    checkpoint_interval: Seconds = 2.0
    """Seconds between PLAN.yml/EXECUTION_LOG.md updates while a plan runs."""
    resync_interval: Seconds = 300.0
    """Seconds between full reconcile passes (the safety net)."""


def _url_list(value: Any) -> Any:
    return {"urls": value} if isinstance(value, list) else value


class NotifySettings(_Strict):
    """Where the controller posts a JSON message when a plan needs someone or ends (§11).

    Written as a list of URLs, or as this mapping. Posting never delays the controller.
    """

    urls: list[str] = []
    """http(s) URLs that receive each event as a JSON POST."""
    url_env: list[str] = []
    """Environment variables holding further URLs (a Slack webhook URL is itself a secret)."""
    events: list[NotifyEvent] = list(get_args(NotifyEvent))
    """The events to post; default all."""
    retries: Annotated[int, BeforeValidator(_number), Field(ge=0, le=10)] = 3
    """Tries after the first on a failure (backoff 1 s, 2 s, 4 s, ...)."""
    timeout: Seconds = 5.0
    """Seconds one POST may take."""

    @field_validator("urls")
    @classmethod
    def _urls(cls, value: list[str]) -> list[str]:
        for url in value:
            if not _is_http_url(url) or "{" in url:
                raise _invalid(
                    f"found {_shown(url)}, not an http:// or https:// URL with a host",
                    "write a full URL such as https://hooks.slack.com/services/...",
                )
        return value

    @field_validator("url_env")
    @classmethod
    def _url_env(cls, value: list[str]) -> list[str]:
        for name in value:
            _env_name(name, "an environment variable name", "a name", "PLANGATE_NOTIFY_URL")
        return value


class Config(_Strict):
    """The whole ``plangate.yml``."""

    repo: Path | None = None
    remote: RemoteSettings | None = None
    plans_dir: str = "plans"
    state_dir: Path | None = None
    identity: Identity = Identity()
    approval: ApprovalSettings = ApprovalSettings()
    tools: dict[str, ToolSpec] = {}
    python_path: list[Path] = []
    secrets: SecretsSettings = SecretsSettings()
    limits: Limits = Limits()
    webhook: WebhookSettings = WebhookSettings()
    metrics: MetricsSettings = MetricsSettings()
    ui: UiSettings = UiSettings()
    execution: ExecutionSettings = ExecutionSettings()
    notify: Annotated[NotifySettings, BeforeValidator(_url_list)] = NotifySettings()
    #: Where the config was read from (not a config key).
    source: Path | None = Field(None, exclude=True)

    @field_validator("tools", mode="before")
    @classmethod
    def _tool_names(cls, value: Any) -> Any:
        from controller.plan.schema import NAME_PATTERN

        for name in value if isinstance(value, dict) else ():
            if not isinstance(name, str) or not re.fullmatch(NAME_PATTERN, name):
                raise _invalid(
                    f"found the tool name {_shown(name)}, which no plan can declare",
                    "name tools with letters, digits, _ and -, starting with a letter or _",
                    key=name,
                )
        return value

    @field_validator("plans_dir")
    @classmethod
    def _plans_dir(cls, value: str) -> str:
        if value.startswith("/") or ".." in Path(value).parts:
            raise _invalid(
                f"found {_shown(value)}, not a relative path inside the repo",
                "write a path relative to the repo root, without `..`, e.g. plans",
            )
        return value

    @model_validator(mode="after")
    def _rule_tools(self) -> Config:
        for index, rule in enumerate(self.approval.rules):
            unknown = sorted(set(rule.match.tools or ()) - set(self.tools))
            if unknown:
                raise _invalid(
                    f"rules[{index}].match.tools names {', '.join(unknown)}, not in the catalog",
                    f"name catalog tools (known: {', '.join(sorted(self.tools)) or 'none'})",
                    key="approval",
                )
        return self

    @model_validator(mode="after")
    def _one_mode(self) -> Config:
        if self.repo is not None and self.remote is not None:
            raise _invalid(
                "found both `repo` and `remote`",
                "set either `repo` (local mode) or `remote` (remote mode), not both",
                key="remote",
            )
        return self

    @property
    def is_remote(self) -> bool:
        return self.remote is not None

    def repo_path(self) -> Path:
        """Local mode: the working tree; remote mode: the controller's clone."""
        if self.remote is not None:
            return self.state_path() / "clone"
        if self.repo is not None:
            return self.repo
        return self.source.parent if self.source else Path.cwd()

    def state_path(self) -> Path:
        if self.state_dir is not None:
            return self.state_dir
        if self.remote is not None:
            systemd_state = os.environ.get("STATE_DIRECTORY")
            if systemd_state:
                return Path(systemd_state.split(":")[0])
            # checked here, not when the file is read: systemd sets the variable only for the
            # service, and `plangate validate` with the same config must still work elsewhere
            raise ConfigInvalid(
                f"{self.source or 'config'}: remote mode needs `state_dir`",
                path="state_dir",
                remedy="set state_dir (e.g. /var/lib/plangate), or run under systemd with "
                "StateDirectory=plangate",
            )
        return self.repo_path() / ".git" / "plangate"


def find_config(flag: str | Path | None, cwd: Path | None = None) -> Path | None:
    """The config file to use, by precedence; None when there is none."""
    if flag:
        return Path(flag)
    env = os.environ.get("PLANGATE_CONFIG")
    if env:
        return Path(env)
    candidate = (cwd or Path.cwd()) / CONFIG_NAME
    return candidate if candidate.is_file() else None


def load_config(path: Path) -> Config:
    """Read and check a config file; relative paths in it are relative to its folder."""
    from controller.plan import yamlio

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigInvalid(f"cannot read config {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigInvalid(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        doc = yamlio.read_yaml(text, str(path))
    except Exception as exc:
        raise ConfigInvalid(f"{path}: {exc}") from None
    data = {} if doc.data is None else doc.data
    if not isinstance(data, dict):
        raise ConfigInvalid(f"{path}: the config must be a mapping of keys")
    return config_from_data(data, path, line_of=doc.line_of)


LineOf = Callable[[Sequence[str | int]], int | None]


def config_from_data(
    data: dict[str, Any], source: Path | None = None, *, line_of: LineOf | None = None
) -> Config:
    """Check config data; every bad value is reported at once, with where it was written."""
    try:
        config = Config.model_validate({**data, "source": source})
    except ValidationError as exc:
        raise _config_invalid(exc, source, line_of) from None
    return _anchor_paths(config, source.parent.resolve() if source else Path.cwd())


def _anchor_paths(config: Config, base: Path) -> Config:
    def anchor(p: Path | None) -> Path | None:
        return None if p is None else (p if p.is_absolute() else base / p)

    return config.model_copy(
        update={
            "repo": anchor(config.repo),
            "state_dir": anchor(config.state_dir),
            "python_path": [anchor(p) for p in config.python_path],
            "secrets": config.secrets.model_copy(update={"file": anchor(config.secrets.file)}),
            "approval": config.approval.model_copy(
                update={"allowed_signers": anchor(config.approval.allowed_signers)}
            ),
        }
    )


def _config_invalid(
    exc: ValidationError, source: Path | None, line_of: LineOf | None
) -> ConfigInvalid:
    """One E_CONFIG_INVALID for all problems: file, line, key, what was found, the remedy."""
    problems = [_problem(err) for err in exc.errors()]
    name = source or "config"

    def line(loc: tuple[str | int, ...]) -> int:
        return (line_of(loc) if line_of else None) or 0

    def where(loc: tuple[str | int, ...]) -> str:
        return f"{name}:{line(loc)}: " if line(loc) else f"{name}: "

    if len(problems) == 1:
        loc, what, remedy = problems[0]
        return ConfigInvalid(f"{where(loc)}{_dotted(loc)}: {what}", remedy=remedy)
    problems.sort(key=lambda problem: line(problem[0]))
    lines = [f"{where(loc)}{_dotted(loc)}: {what}; {remedy}" for loc, what, remedy in problems]
    return ConfigInvalid(
        f"{len(problems)} problems in {name}:\n  " + "\n  ".join(lines),
        remedy="fix each key as said (accepted values: docs/configuration.md)",
    )


def _problem(err: ErrorDetails) -> tuple[tuple[str | int, ...], str, str]:
    """(location, what was found, remedy) of one pydantic error."""
    loc = tuple(err["loc"])
    ctx = err.get("ctx") or {}
    if err["type"] == "config_value":
        key = ctx.get("key")
        return ((*loc, key) if key else loc), str(ctx["problem"]), str(ctx["remedy"])
    if err["type"] == "extra_forbidden":
        return loc, "unknown key", _unknown_key_remedy(loc)
    if err["type"] == "missing":
        return loc, "missing (required)", "add the key"
    if err["type"] in ("model_type", "model_attributes_type", "dict_type"):
        return loc, f"found {_shown(err['input'])}", "write a mapping of keys here"
    return (
        loc,
        f"found {_shown(err['input'])}",
        err["msg"].lower().replace("input ", "the value ", 1),
    )


def _dotted(loc: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def _unknown_key_remedy(loc: tuple[str | int, ...]) -> str:
    import difflib

    keys = _keys_at(loc[:-1])
    close = difflib.get_close_matches(str(loc[-1]), keys, n=1)
    if close:
        return f"did you mean `{close[0]}`? Keys here: {', '.join(keys)}"
    return f"remove it; keys here: {', '.join(keys)}" if keys else "remove it"


def _keys_at(loc: tuple[str | int, ...]) -> list[str]:
    """The keys the config model accepts at ``loc`` (e.g. ``("tools", "fetch")``)."""
    model: type[BaseModel] | None = Config
    parts = list(loc)
    while parts and model is not None:
        field = model.model_fields.get(str(parts.pop(0)))
        if field is None:
            return []
        model, keyed = _model_in(field.annotation)
        if keyed and parts:
            parts.pop(0)  # the key of a mapping such as tools: the tool's name
    return [name for name in (model.model_fields if model else {}) if name != "source"]


def _model_in(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The config model inside a field's type, and whether it sits under mapping keys."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    args = get_args(annotation)
    if get_origin(annotation) is dict:
        return _model_in(args[1])[0], True
    for arg in args:
        model, keyed = _model_in(arg)
        if model is not None:
            return model, keyed
    return None, False
