"""The controller's configuration, ``plangate.yml`` (SPEC §9).

The config decides who may approve and what tools can do, so it is kept out of reach of
plan authors: it is read from the operator's path, never from a plan. Lookup order:
``--config`` flag > ``PLANGATE_CONFIG`` > ``./plangate.yml``. Unknown keys and bad values
are ``E_CONFIG_INVALID`` naming the key and the remedy.

The package: :mod:`~controller.settings.models` (the sections and their keys, pydantic),
:mod:`~controller.settings.approval` (``approval:``), :mod:`~controller.settings.toolspec` (a
catalog entry), :mod:`~controller.settings.fields` (model building blocks),
:mod:`~controller.settings.values` (pure value parsers), :mod:`~controller.settings.lookup`
(where the file is), :mod:`~controller.settings.loading` (reading it),
:mod:`~controller.settings.credentials` (where the values the redactor hides come from) and
:mod:`~controller.settings.signersfile` (the ``allowed_signers`` file read once, pinned by a
copy). Import from here (the credentials and the signers file from their modules).

Names are loaded on first use (PEP 562): ``from controller.settings import find_config``
costs no pydantic import, so a command run without a config starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.settings.approval import (
        ApprovalRule,
        ApprovalSettings,
        IdentityAliases,
        Requirement,
        RuleMatch,
    )
    from controller.settings.loading import (
        LineOf,
        config_from_data,
        load_config,
    )
    from controller.settings.lookup import CONFIG_NAME, find_config
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

#: Each exported name -> the submodule that defines it.
_WHERE: dict[str, str] = {
    "ApprovalRule": "approval",
    "ApprovalSettings": "approval",
    "IdentityAliases": "approval",
    "Requirement": "approval",
    "RuleMatch": "approval",
    "LineOf": "loading",
    "config_from_data": "loading",
    "load_config": "loading",
    "CONFIG_NAME": "lookup",
    "find_config": "lookup",
    "AgentSettings": "models",
    "Config": "models",
    "ExecutionSettings": "models",
    "Identity": "models",
    "Limits": "models",
    "MetricsSettings": "models",
    "NotifySettings": "models",
    "RemoteSettings": "models",
    "SecretsSettings": "models",
    "UiSettings": "models",
    "WebhookSettings": "models",
    "Estimate": "toolspec",
    "ToolSpec": "toolspec",
    "HTTP_METHODS": "values",
    "KIND_OPTIONS": "values",
    "LISTEN_REMEDY": "values",
    "MAX_SECONDS": "values",
    "NOTIFY_EVENTS": "values",
    "NotifyEvent": "values",
    "RISKS": "values",
    "is_branch_name": "values",
    "parse_duration": "values",
    "parse_listen": "values",
}

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


if not TYPE_CHECKING:  # type checkers see the imports above, so a misspelt name still fails

    def __getattr__(name: str) -> Any:
        module = _WHERE.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
