"""Reading ``plangate.yml``: every problem reported at once.

Unknown keys and bad values are one ``E_CONFIG_INVALID`` naming, for each, the file, line,
key, what was found and the remedy (with a did-you-mean for a mistyped key). Relative paths
in the file are relative to its folder. Where the file is (``--config`` flag >
``PLANGATE_CONFIG`` > ``./plangate.yml``) is :mod:`~controller.settings.lookup`'s part.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import (
    BaseModel,
    ValidationError,
)
from pydantic_core import ErrorDetails

from controller.errors import ConfigInvalid
from controller.settings.fields import (
    _shown,
)
from controller.settings.models import (
    Config,
)


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
    config = _anchor_paths(config, source.parent.resolve() if source else Path.cwd())
    _check_files(config, source)
    return config


def _check_files(config: Config, source: Path | None) -> None:
    """The files the config names for plangate to read are regular files (round 114: a FIFO
    as ``secrets.file`` hung every command, ``/dev/zero`` was read until memory ran out, a
    FIFO as ``allowed_signers`` hung every pass that checked a signature). Looked at, never
    opened here; the readers open them without waiting and check again."""
    from controller.errors import SIGNERS_FILE
    from controller.fsutil import special_file

    name = source or "config"
    signers = config.approval.allowed_signers
    named = [
        ("secrets.file", config.secrets.file, "a regular file of NAME: value lines"),
        ("approval.allowed_signers", signers, SIGNERS_FILE),
    ]
    for key, path, wanted in named:
        what = special_file(path) if path is not None else None
        if what is not None:
            raise ConfigInvalid(
                f"{name}: {key}: {path} is {what}", remedy=f"point {key} at {wanted}"
            )
    if signers is not None and config.approval.require_signed and not signers.exists():
        raise ConfigInvalid(
            f"{name}: approval.allowed_signers: {signers}: no such file, and require_signed is on",
            remedy=f"point approval.allowed_signers at {SIGNERS_FILE}",
        )


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
