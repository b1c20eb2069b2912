"""The controller's configuration, ``plangate.yml`` (SPEC §9).

The config decides who may approve and what tools can do, so it is kept out of reach of
plan authors: it is read from the operator's path, never from a plan. Lookup order:
``--config`` flag > ``PLANGATE_CONFIG`` > ``./plangate.yml``. Unknown keys and bad values
are ``E_CONFIG_INVALID`` naming the key and the remedy.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from controller.errors import ConfigInvalid

CONFIG_NAME = "plangate.yml"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(value: str | int | float | None) -> float | None:
    """Seconds from ``90``, ``"90s"``, ``"15m"``, ``"12h"``, ``"7d"`` or ``"2w"``."""
    if value is None or isinstance(value, int | float):
        return None if value is None else float(value)
    match = _DURATION.match(value)
    if not match:
        raise ValueError(f"not a duration: {value!r} (write e.g. 90s, 15m, 12h, 7d)")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RemoteSettings(_Strict):
    """Remote mode: the controller keeps its own clone of ``url`` in the state directory."""

    url: str
    """Git URL of the plans repository (ssh://, https://, git://, or a path)."""
    branch: str = "main"
    """The watched branch."""
    poll_interval: float = Field(15.0, gt=0)
    """Seconds between fetches."""


class Identity(_Strict):
    """Name and email of the controller's own commits."""

    name: str = "plangate"
    email: str = "plangate@localhost"


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

    @field_validator("max_age", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> float | None:
        return parse_duration(value)


class ToolSpec(_Strict):
    """One catalog entry: what a plan's ``tool:`` name runs (SPEC §6)."""

    kind: Literal["echo", "exec", "python", "http"]
    description: str = ""
    argv: list[str] | None = None
    """exec: the program and its arguments; ``{param}`` placeholders fill one element each."""
    env: dict[str, str] = {}
    """exec: extra environment variables."""
    cwd: Path | None = None
    """exec: working directory."""
    target: str | None = None
    """python: ``module:function``."""
    method: str = "POST"
    """http: the request method."""
    url: str | None = None
    """http: the URL; ``{param}`` placeholders are URL-encoded."""
    headers: dict[str, str] = {}
    """http: extra request headers."""
    params_schema: dict[str, Any] | None = None
    """JSON Schema the params must satisfy (statically at validation, again before running)."""
    idempotent: bool = False
    """Safe to run twice: an action in doubt after a crash is re-run instead of failing."""
    timeout: float = Field(60.0, gt=0)
    """Seconds before the tool is killed (E_TIMEOUT); an action's ``timeout`` overrides it."""

    @model_validator(mode="after")
    def _kind_fields(self) -> ToolSpec:
        needed = {"exec": "argv", "python": "target", "http": "url"}.get(self.kind)
        if needed and not getattr(self, needed):
            raise ValueError(f"a tool of kind {self.kind} needs `{needed}`")
        if self.kind == "python" and ":" not in (self.target or ""):
            raise ValueError("python tool target must be `module:function`")
        if self.params_schema is not None:
            _check_json_schema(self.params_schema)
        return self


def _check_json_schema(schema: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"params_schema is not a valid JSON Schema: {exc.message}") from None


class SecretsSettings(_Strict):
    """Where ``$<secrets.NAME>`` values come from: never from the repo."""

    env_prefix: str = "PLANGATE_SECRET_"
    file: Path | None = None
    """A YAML/JSON mapping NAME: value, readable by the controller only."""


class Limits(_Strict):
    """Size limits that keep hostile plans and tools from exhausting the controller."""

    max_plan_bytes: int = Field(1_048_576, gt=0)
    max_actions: int = Field(500, gt=0)
    max_result_bytes: int = Field(65_536, gt=0)


class WebhookSettings(_Strict):
    """Remote mode: an HTTP endpoint that triggers an immediate fetch on push."""

    listen: str | None = None
    """``host:port``, e.g. ``127.0.0.1:8787``."""
    secret_env: str = "PLANGATE_WEBHOOK_SECRET"
    """Environment variable holding the shared secret."""
    max_body_bytes: int = Field(1_048_576, gt=0)


class MetricsSettings(_Strict):
    """Prometheus ``/metrics`` and ``/healthz``."""

    listen: str | None = None


class ExecutionSettings(_Strict):
    """How the daemon runs approved plans."""

    max_concurrent_plans: int = Field(1, gt=0)
    checkpoint_interval: float = Field(2.0, gt=0)
    """Seconds between PLAN.yml/EXECUTION_LOG.md updates while a plan runs."""
    resync_interval: float = Field(300.0, gt=0)
    """Seconds between full reconcile passes (the safety net)."""


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
    execution: ExecutionSettings = ExecutionSettings()
    #: Where the config was read from (not a config key).
    source: Path | None = Field(None, exclude=True)

    @model_validator(mode="after")
    def _one_mode(self) -> Config:
        if self.repo is not None and self.remote is not None:
            raise ValueError("set either `repo` (local mode) or `remote` (remote mode), not both")
        if self.plans_dir.startswith("/") or ".." in Path(self.plans_dir).parts:
            raise ValueError("plans_dir must be a relative path inside the repo")
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
            raise ConfigInvalid("remote mode needs `state_dir` (or systemd's StateDirectory=)")
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
    from controller import yamlio

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigInvalid(f"cannot read config {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigInvalid(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = yamlio.read_yaml(text, str(path)).data
    except Exception as exc:
        raise ConfigInvalid(f"{path}: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigInvalid(f"{path}: the config must be a mapping of keys")
    return config_from_data(data, path)


def config_from_data(data: dict[str, Any], source: Path | None = None) -> Config:
    try:
        config = Config.model_validate({**data, "source": source})
    except ValidationError as exc:
        raise ConfigInvalid(_describe(exc, source)) from None
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


def _describe(exc: ValidationError, source: Path | None) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        lines.append(f"{key}: {msg}")
    where = f"{source}: " if source else ""
    return where + "; ".join(lines)
