"""Secret values for ``$<secrets.NAME>`` and their redaction from everything written (SPEC §6).

Secrets come from the controller's environment (``<secrets.env_prefix>NAME``, by default
``PLANGATE_SECRET_NAME``) or from the operator's secrets file (``secrets.file``: a YAML or
JSON mapping ``NAME: value``), never from the plans repo. The environment wins over the file.

Every configured secret value is redacted, not only the ones a plan used: a tool may echo a
secret it received some other way, and the controller's commit messages must be clean too.
Redaction replaces each occurrence of a value with ``***`` in text and inside JSON data
(strings, mapping keys, and numbers whose JSON text contains a secret), longest value first so
that a secret containing another is hidden whole. Empty values are ignored. A value is also
hidden as it appears escaped inside JSON text (a tool's raw stdout), and a stream cut at its
size limit right inside a secret has that secret's start hidden too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.errors import ConfigInvalid, RefUnavailable

if TYPE_CHECKING:
    from controller.settings import Config, SecretsSettings

MASK = "***"


class SecretStore:
    """The secrets configured for one controller, read when the store is built."""

    def __init__(self, settings: SecretsSettings, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.env_prefix = settings.env_prefix
        self._values: dict[str, str] = _read_file(settings.file) if settings.file else {}
        for key, value in env.items():
            if key.startswith(settings.env_prefix) and len(key) > len(settings.env_prefix):
                self._values[key[len(settings.env_prefix) :]] = value
        self.redactor = Redactor(self._values.values())

    def get(self, name: str) -> str:
        """The value of secret ``name``; E_REF_UNAVAILABLE when it is not configured."""
        if name not in self._values:
            raise RefUnavailable(
                f"$<secrets.{name}>: secret {name!r} is not set "
                f"(environment {self.env_prefix}{name} or the secrets file)",
                remedy=f"set {self.env_prefix}{name} in the controller's environment",
            )
        return self._values[name]

    def env_names(self, environ: Mapping[str, str]) -> list[str]:
        """Variables of ``environ`` that hold secrets (kept out of tool processes)."""
        return [key for key in environ if key.startswith(self.env_prefix)]


def _read_file(path: Path) -> dict[str, str]:
    from controller.plan import yamlio

    try:
        data = yamlio.read_yaml(path.read_text(encoding="utf-8"), str(path)).data
    except OSError as exc:
        raise ConfigInvalid(f"secrets.file {path}: {exc.strerror}") from None
    except Exception as exc:
        raise ConfigInvalid(f"secrets.file {path}: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigInvalid(f"secrets.file {path}: must be a mapping NAME: value")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in data.items()}


#: How a tool notes that it cut a captured stream (see :func:`controller.execution.tools.cut`).
CUT_NOTE = "\n[plangate: output cut at "


def _written_forms(value: str) -> set[str]:
    """A value as a tool may print it: raw, and escaped inside a JSON string."""
    return {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}


class Redactor:
    """Replaces secret values with ``***`` in text and JSON data."""

    def __init__(self, values: Iterable[str]) -> None:
        unique = {f for v in values if isinstance(v, str) and v for f in _written_forms(v)}
        self._values = sorted(unique, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._values)

    def text(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        if CUT_NOTE in text:
            text = self._cut_tail(text)
        return text

    def _cut_tail(self, text: str) -> str:
        """Hide the start of a secret that a stream cut at its limit ended with."""
        at = text.rfind(CUT_NOTE)
        head = text[:at].rstrip("\ufffd")  # a character cut in half decodes as U+FFFD
        for value in self._values:
            for size in range(min(len(value) - 1, len(head)), 0, -1):
                if head.endswith(value[:size]):
                    return head[:-size] + MASK + text[at:]
        return text

    def data(self, value: Any) -> Any:
        """A copy of JSON data with every secret hidden (the input is not changed)."""
        if not self._values:
            return value
        return self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self._walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        if isinstance(value, int | float) and not isinstance(value, bool):
            shown = json.dumps(value)
            return MASK if self.text(shown) != shown else value
        return value


def redactor_for(config: Config) -> Redactor:
    """The redactor of every secret configured for ``config`` (e.g. for commit messages)."""
    return SecretStore(config.secrets).redactor


def redact_text(config: Config, text: str) -> str:
    """``text`` with every configured secret value replaced by ``***``."""
    return redactor_for(config).text(text)
