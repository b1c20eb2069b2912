"""The controller's configuration, ``plangate.yml`` (SPEC §9).

The config decides who may approve and what tools can do, so it is kept out of reach of
plan authors: it is read from the operator's path, never from a plan. Lookup order:
``--config`` flag > ``PLANGATE_CONFIG`` > ``./plangate.yml``. Unknown keys and bad values
are ``E_CONFIG_INVALID`` naming the key and the remedy.

The package: :mod:`~controller.settings.models` (the sections and their keys, pydantic),
:mod:`~controller.settings.approval` (``approval:``), :mod:`~controller.settings.toolspec` (a
catalog entry), :mod:`~controller.settings.fields` (model building blocks),
:mod:`~controller.settings.values` (pure value parsers) and :mod:`~controller.settings.loading`
(lookup and reading). Import from here.
"""

from controller.settings.approval import (
    ApprovalRule,
    ApprovalSettings,
    IdentityAliases,
    Requirement,
    RuleMatch,
)
from controller.settings.loading import (
    CONFIG_NAME,
    LineOf,
    config_from_data,
    find_config,
    load_config,
)
from controller.settings.models import (
    AgentSettings,
    Config,
    ExecutionSettings,
    Identity,
    Limits,
    MetricsSettings,
    NotifySettings,
    RemoteSettings,
    SecretsSettings,
    UiSettings,
    WebhookSettings,
)
from controller.settings.toolspec import (
    Estimate,
    ToolSpec,
)
from controller.settings.values import (
    HTTP_METHODS,
    KIND_OPTIONS,
    LISTEN_REMEDY,
    MAX_SECONDS,
    NOTIFY_EVENTS,
    RISKS,
    NotifyEvent,
    is_branch_name,
    parse_duration,
    parse_listen,
)

__all__ = [
    "CONFIG_NAME",
    "HTTP_METHODS",
    "KIND_OPTIONS",
    "LISTEN_REMEDY",
    "MAX_SECONDS",
    "NOTIFY_EVENTS",
    "RISKS",
    "AgentSettings",
    "ApprovalRule",
    "ApprovalSettings",
    "Config",
    "Estimate",
    "ExecutionSettings",
    "Identity",
    "IdentityAliases",
    "Limits",
    "LineOf",
    "MetricsSettings",
    "NotifyEvent",
    "NotifySettings",
    "RemoteSettings",
    "Requirement",
    "RuleMatch",
    "SecretsSettings",
    "ToolSpec",
    "UiSettings",
    "WebhookSettings",
    "config_from_data",
    "find_config",
    "is_branch_name",
    "load_config",
    "parse_duration",
    "parse_listen",
]
