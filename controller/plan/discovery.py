"""Would the controller ever pick this file up (``validate`` warns when not), and how does
it read a plan source (``load_source``)?

The daemon reads ``<repo>/<plans_dir>/<slug>/PLAN.yml`` (or ``PLAN.yaml``, or converts a
``PLAN.json``/``PLAN.toon``/``PLAN.md`` in a folder without one) and nothing else:
a valid ``plan.yml``, a plan outside ``plans_dir`` or outside the repository passes
``validate`` and then waits forever. This module says where the file would have to be.
Pure path arithmetic (no git process): ``validate`` must stay fast.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from controller.errors import (
    ConvertFailed,
    PlangateError,
    PlanTooLarge,
    Problem,
    UsageError,
    YamlParseError,
)
from controller.plan import nested
from controller.plan.plans import PLAN_FILES, SOURCE_FILES, LoadedPlan, read_bounded, too_large

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.settings import Config


class Holds(Protocol):
    """The daemon's hold rules of one source, asked of a commit (the service's
    :class:`controller.service.sources.CheckoutHolds`): why it converts none of it, and why
    it writes none of the files a conversion makes (round 122)."""

    def of_source(self) -> Problem | None: ...

    def of_written(self, files: Mapping[str, bytes | None]) -> Problem | None: ...


#: The daemon's bound on a plan source's size (the daemon and ``validate`` read no more).
MAX_SOURCE_BYTES = 4 * 1024 * 1024


def source_text(data: bytes, size: int | None = None) -> str:
    """A plan source's bytes as its text, the one reading of the pass, its status row,
    ``check``, ``hash``, ``validate`` and ``show``: over :data:`MAX_SOURCE_BYTES` is
    ``E_PLAN_TOO_LARGE``, bytes that are not UTF-8 ``E_YAML_PARSE`` (docs/errors.md: "text
    that is not UTF-8"; round 125, ``non-utf8-source-code-split``: a UTF-16 ``PLAN.json``
    was ``E_YAML_PARSE`` to ``hash`` and ``E_USAGE`` on its row). ``size``: the file's
    size where ``data`` is only the bounded read of it."""
    size = max(size or 0, len(data))
    if size > MAX_SOURCE_BYTES:
        raise PlanTooLarge(too_large(size, MAX_SOURCE_BYTES).message)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlParseError(
            f"not UTF-8 text (byte {exc.start})", remedy="save it as UTF-8"
        ) from None


def discovery_warning(file: Path, config: Config | None) -> str | None:
    """Why the controller would not read ``file`` and where it expects it, or None."""
    plans_dir = config.plans_dir if config is not None else "plans"
    path = file.absolute().parent.resolve() / file.name  # the file itself: never through a link
    if config is not None and config.remote is None:
        repo: Path | None = config.repo_path().resolve()
    else:
        repo = git_root(path)
    if repo is None:
        return (
            "not inside a git repository: the controller reads only plans committed as "
            f"<repo>/{plans_dir}/<name>/PLAN.yml"
        )
    base = repo / plans_dir
    inside = base == path.parent or base in path.parents
    expected = (path.parent if inside else base / path.parent.name) / "PLAN.yml"
    if path.name in SOURCE_FILES:
        beside = plan_beside(path)
        if beside is not None:
            return (
                f"{beside} is beside it: the controller runs that file and converts no "
                "source in its folder"
            )
    elif path.name not in PLAN_FILES:
        source = source_name(path)
        if source is not None:
            expected = expected.with_name(source)
        return (
            "the controller reads a plan folder's PLAN.yml (or PLAN.yaml), or converts its "
            "PLAN.json, PLAN.toon or PLAN.md, each named exactly so, and would never pick "
            f"this one up; expected {expected}"
        )
    if not inside:
        return (
            f"outside the plans folder {base}: the controller would never pick it up; "
            f"expected {expected}"
        )
    return None


def plan_beside(path: Path) -> str | None:
    """The plan file (``PLAN.yml``, ``PLAN.yaml``) in the folder of the source ``path``, or
    None: beside one, the source is a note the controller never converts nor runs (the
    daemon's verdict, :func:`controller.plan.names.source_verdict`). ``hash``, ``validate``
    and ``show`` of the source warn by it (round 125, ``show-source-beside-plan-unwarned``:
    ``show`` rendered the edited source as a plan "waiting to be frozen")."""
    return next((name for name in PLAN_FILES if (path.parent / name).exists()), None)


def _folder(path: Path, config: Config | None) -> str:
    """The source's folder as the daemon names it, relative to the repository (its plan id:
    the path its nested plans are pinned under, which the hash covers), however the path was
    given; as given when no repository holds it (round 121: ``hash`` of the absolute path
    pinned ``/tmp/.../plans/x/step-2``, "write the plan's folder relative to the repository")."""
    root = nested.repo_root(config, path.parent / "PLAN.yml")
    if root is not None:
        try:
            folder = Path(os.path.abspath(path.parent)).relative_to(os.path.abspath(root))
        except ValueError:
            pass
        else:
            return folder.as_posix()
    return path.parent.as_posix()


def source_name(path: Path) -> str | None:
    """The plan source name (:data:`SOURCE_FILES`) a file's suffix says it is written as
    (``actionplan.json`` -> ``PLAN.json``), or None: ``validate`` reads such a file as that
    source, as MCP ``validate`` reads text (a user's trial: it read a `.json` not named
    exactly PLAN.json as YAML, "not a block mapping", where MCP found the format)."""
    if path.name in PLAN_FILES:
        return None
    suffix = path.suffix.lower()
    if not suffix:
        return None  # no suffix says no format (round 113: a folder; round 114: PLAN.yml/x)
    return next((name for name in SOURCE_FILES if name.lower().endswith(suffix)), None)


def git_root(path: Path) -> Path | None:
    """The nearest folder above ``path`` holding ``.git`` (no git process: this stays fast)."""
    for folder in path.parents:
        if (folder / ".git").exists():
            return folder
    return None


def load_source(
    path: Path,
    config: Config | None = None,
    *,
    data: bytes | None = None,
    holds: Holds | None = None,
) -> LoadedPlan:
    """:func:`converted_source`'s plan."""
    return converted_source(path, config, data=data, holds=holds)[0]


def converted_source(
    path: Path,
    config: Config | None = None,
    *,
    data: bytes | None = None,
    holds: Holds | None = None,
) -> tuple[LoadedPlan, dict[str, bytes]]:
    """(the plan, the nested plans its convert commit writes: ``step-N/PLAN.yml`` by path,
    to read inside :func:`nested.writing`). A plan source (PLAN.json, PLAN.toon, PLAN.md)
    as the daemon reads it: converted to PLAN.yml (docs/formats.md), then validated; a
    source that does not convert is its conversion's problems. Problems of the converted
    plan are located in the PLAN.yml it becomes (`plangate convert` prints that text). A
    source its folder holds (:func:`controller.plan.plans.held_problem`) is that verdict,
    never read; so is one the daemon's rules of its commit hold (``holds``: the committed
    attributes hide it, it is committed as a link, its conversion writes over a plan the
    branch holds; round 122). ``data``: its bytes as the caller read them (as git would
    store them), not read again."""
    from controller.plan.convert import check_reads_back, convert_text
    from controller.plan.plans import held_problem, validate_text

    held = held_problem(path, config.plans_dir if config else "plans")  # round 74
    if held is None and holds is not None:
        held = holds.of_source()  # the daemon's own rule (round 122)
    if held is not None:
        return LoadedPlan(path, "", problems=[held]), {}
    try:
        if data is None:
            data = read_bounded(path, MAX_SOURCE_BYTES)
    except FileNotFoundError:
        raise UsageError(
            f"{path}: no such plan file", remedy="give a plan file path", quotes=(str(path),)
        ) from None
    except OSError as exc:
        raise UsageError(
            f"{path}: {exc.strerror}", remedy="give a readable plan file", quotes=(str(path),)
        ) from None
    try:
        size = path.stat().st_size if len(data) > MAX_SOURCE_BYTES else None
        text = source_text(data, size)
        conversion = convert_text(text, path.name, nested_base=_folder(path, config), verify=False)
        # its nested plans as its convert commit writes them (round 121): read beside it
        written = {f"{child}/PLAN.yml": body.encode("utf-8") for child, body in conversion.children}
        held = holds.of_written(written) if holds is not None else None
        if held is not None:  # the daemon writes none of it: the source waits (round 122)
            return LoadedPlan(path, "", problems=[held]), {}
        with nested.writing(written):
            plan = validate_text(conversion.text, path.parent / "PLAN.yml", config)
        check_reads_back(plan.data if plan.doc is not None else None, conversion.data, path.name)
    except ConvertFailed as exc:
        return LoadedPlan(path, "", problems=list(exc.problems), format=exc.source_format), {}
    except PlangateError as exc:
        problem = Problem(exc.code, exc.message, exc.path, exc.line, exc.remedy or None)
        return LoadedPlan(path, "", problems=[problem], format=exc.source_format), {}
    plan.path = path
    plan.format = conversion.format
    return plan, written
