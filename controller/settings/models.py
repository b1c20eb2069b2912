"""The ``plangate.yml`` model: one pydantic model per section, a docstring per key.

The models check every value when the file is read (see :mod:`~controller.settings.loading`)
and say where the controller's paths are (:meth:`Config.repo_path`, :meth:`Config.state_path`).
The tool catalog's entries are :mod:`~controller.settings.toolspec`; ``approval:`` is
:mod:`~controller.settings.approval`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, get_args

from pydantic import (
    BeforeValidator,
    Field,
    field_validator,
    model_validator,
)

from controller.errors import ConfigInvalid
from controller.settings.approval import (
    ApprovalSettings,
)
from controller.settings.fields import (
    Amount,
    Count,
    Seconds,
    _env_name,
    _invalid,
    _listen,
    _number,
    _optional_duration,
    _shown,
    _Strict,
)
from controller.settings.toolspec import (
    ToolSpec,
    _is_http_url,
)
from controller.settings.values import (
    _CONTROL,
    NotifyEvent,
    _stored_as_written,
    is_branch_name,
)


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

    #: not "plangate": subjects start with "plangate:", and `git log --format='%an: %s'`
    #: would read "plangate: plangate: complete ..."
    name: str = "controller"
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


class AgentSettings(_Strict):
    """``plangate mcp``: who an agent's submitted plans are committed as, and where."""

    identity: Identity | None = None
    """Name and email of the agent's commits (required to submit; never the controller's)."""
    branch_prefix: str = "plangate/"
    """A pull-request submission goes to ``<branch_prefix><slug>``."""

    @field_validator("branch_prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        if not is_branch_name(f"{value}x"):
            raise _invalid(f"found {_shown(value)}", "write a branch-name prefix such as plangate/")
        return value


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

    max_plan_bytes: Annotated[Count, Field(le=4 * 1024 * 1024)] = 1_048_576
    """At most 4 MiB (``fsutil.READ_LIMIT``: no file or git blob bigger than that is ever
    read whole, round 31)."""
    max_actions: Count = 500
    max_result_bytes: Count = 65_536
    max_params_bytes: Count = 1_048_576
    """Characters of JSON one action's params may resolve to (references can repeat a large
    value many times: a 70 KB plan could make 25 MB); E_LIMIT_EXCEEDED past it, at validation
    for what inputs and plan fields give, at run time for all."""
    max_journal_bytes: Count | None = None
    """Bytes one plan's journal in the state directory may hold, all its runs, actions and
    tries together (default: 8 times ``max_params_bytes``). ``max_params_bytes`` bounds one
    action's params, but every action and every try journals its own (round 38: 20 actions
    wrote 20 MB); a record that would pass this is not written and the run fails
    E_LIMIT_EXCEEDED, the failure itself recorded small."""
    max_tool_calls: Count = 1000
    """Tool calls one run may make, retries included (E_LIMIT_EXCEEDED past it)."""
    max_cost_usd: Amount | None = None
    """The highest estimated cost a plan may have at freeze."""
    max_runtime: float | None = None
    """Seconds (or ``15m``-style text) a run may take, and a plan's estimate may reach."""

    _runtime = field_validator("max_runtime", mode="before")(_optional_duration)

    @property
    def journal_bytes(self) -> int:
        """``max_journal_bytes``, or its default: 8 times ``max_params_bytes``."""
        if self.max_journal_bytes is not None:
            return self.max_journal_bytes
        return JOURNAL_PARAMS_FACTOR * self.max_params_bytes


#: ``limits.max_journal_bytes`` by default: this many times ``limits.max_params_bytes``.
JOURNAL_PARAMS_FACTOR = 8


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
    max_parallel_actions: Count = 4
    """Actions of one plan's ``needs`` graph that may run at once."""
    checkpoint_interval: Seconds = 2.0
    """Seconds between PLAN.yml/EXECUTION_LOG.md updates while a plan runs."""
    resync_interval: Seconds = 300.0
    """Seconds between full reconcile passes (the safety net)."""
    batch_window: Seconds = 0.2
    """Seconds the oldest event of a batched controller commit waits for others (a pass's
    first event is never delayed; docs/approvals.md, "Several plans in one commit")."""
    git_timeout: Seconds = 300.0
    """The longest one git command may take before it is stopped and the pass fails with
    ``E_GIT`` (a git hung on a special file or a stalled file system never stalls the
    controller for good)."""
    adopt_untracked: bool = True
    """Local mode: freeze and commit a ``pending_approval`` PLAN.yml nobody committed. Git
    cannot tell who wrote an adopted plan, so an approver who wrote it could approve it:
    turn it off where agents commit their own plans (docs/threat-model.md)."""


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
    agent: AgentSettings = AgentSettings()
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
    #: A demo or a test bench: the config and state directory may lie inside the watched
    #: working tree (never in production: an agent writing the tree could edit them).
    demo: bool = False
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
        return PurePosixPath(value).as_posix()  # "./plans/" -> "plans": one spelling in logs

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
    def _agent_is_not_the_controller(self) -> Config:
        agent = self.agent.identity
        if agent is not None and agent.email.lower() == self.identity.email.lower():
            raise _invalid(
                "found the controller's own email as agent.identity.email",
                "give the agent its own identity: the controller must tell its commits apart",
                key="agent",
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
        return default_state_dir(self.repo_path())


def default_state_dir(repo: Path) -> Path:
    """Local mode's state directory when ``state_dir`` is not set: outside the repository
    (SPEC §15), one per repository: ``$STATE_DIRECTORY`` under systemd, else
    ``$XDG_STATE_HOME/plangate/<name>-<hash of the repository's real path>`` (default
    ``~/.local/state``). ``plangate status`` without a config finds the same one."""
    systemd_state = os.environ.get("STATE_DIRECTORY")
    if systemd_state:
        return Path(systemd_state.split(":")[0])
    import hashlib

    real = os.path.realpath(repo)
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return Path(base) / "plangate" / f"{Path(real).name or 'repo'}-{digest}"
