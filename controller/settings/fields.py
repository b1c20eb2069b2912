"""The building blocks of the config models: strict models, typed numbers, readable errors.

Every bad value is raised as :func:`_invalid` (what was found, and the remedy), which
:mod:`~controller.settings.loading` turns into one ``E_CONFIG_INVALID`` for all problems.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
)
from pydantic_core import PydanticCustomError

from controller.settings.values import (
    _ENV_NAME,
    LISTEN_REMEDY,
    MAX_SECONDS,
    parse_duration,
    parse_listen,
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
#: A JSON value taken as the type it is, never converted (MCP tool arguments, round 104:
#: ``1`` or ``"false"`` read as a flag, ``true`` or ``"1"`` as one second): a boolean, a
#: finite number (an integer is one; JSON has no ``NaN`` or ``Infinity``, which Python's
#: reader takes: round 106, ``wait`` with ``timeout: Infinity`` never answered).
StrictFlag = Annotated[bool, Strict()]
StrictNumber = Annotated[float, Strict(), Field(allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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
