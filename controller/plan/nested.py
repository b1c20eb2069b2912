"""Nested plans pinned by hash (SPEC §12): ``plan: {path, hash}`` in an action.

The nested plan is read from the plans repository (``config.repo``, or the repository the
parent plan file lies in), strictly: a relative path under the plans folder, no ``..``, no
symlink anywhere on the way, a regular file within the size limit. Its hash must equal the
pin (E_PLAN_HASH_MISMATCH otherwise), so approving the parent approves exactly that version;
it is validated like any plan (its tools checked against the same catalog). One level only:
a nested plan contains no nested plans, gates or ``ask`` (those belong to the parent).

This module does not import :mod:`controller.plan.plans` (which imports it); the caller hands
in its ``check_document``.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from controller.errors import (
    PlanAmbiguous,
    PlangateError,
    PlanHashMismatch,
    Problem,
    SchemaInvalid,
    UnsafePath,
)
from controller.plan import hashing, yamlio
from controller.plan.names import (
    PLAN_FILES,
    ambiguous_claims,
    path_twins,
    pin_problem,
    split_files,
    twin_folder_verdict,
)
from controller.plan.shape import NESTED_NOT_EMPTY, NESTED_NOT_FAILING, NESTED_NOT_GIVEN

if TYPE_CHECKING:
    from controller.plan.schema import NestedPlan, PlanDocument
    from controller.settings import Config

DEFAULT_MAX_BYTES = 1_048_576
#: A commit id as the journal names one (SHA-1 or SHA-256).
_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
CheckDocument = Callable[[Any, "Config | None"], "tuple[PlanDocument | None, list[Problem]]"]


@dataclass(frozen=True)
class Child:
    """A nested plan as pinned: where it is, its model and its hash."""

    path: str
    file: Path
    model: PlanDocument
    hash: str
    #: The parsed document (its ``limits:`` as written, for the caps it runs under).
    data: dict[str, Any]


def repo_root(config: Config | None, origin: Path | None) -> Path | None:
    """The plans repository: ``config.repo``, else the folder holding the parent's plans
    folder (``<root>/plans/.../PLAN.yml``); in remote mode the controller's clone (the
    controller reads either through :func:`read_tree_of`)."""
    if config is not None and config.remote is not None:
        return config.repo_path()
    if config is not None and config.repo is not None:
        return Path(config.repo)
    if origin is None:
        return None
    plans_dir = config.plans_dir if config is not None else "plans"
    first = PurePosixPath(plans_dir).parts[0] if plans_dir else "plans"
    for parent in Path(os.path.abspath(origin)).parents:
        if parent.name == first:
            return parent.parent
    return None


def load(
    pin: NestedPlan,
    config: Config | None,
    origin: Path | None,
    check_document: CheckDocument,
) -> Child:
    """The pinned plan, read and validated; raise with the reason it cannot run."""
    root = repo_root(config, origin)
    fetch = _source(root)
    written = _WRITTEN.get() or {}
    folder = pin.path.rstrip("/") + "/"
    if any(path.startswith(folder) for path in written):
        fetch = _Written(written, fetch, root)
    if fetch is not None:
        file, text = _fetched(pin.path, config, origin, fetch)
    elif root is None:
        raise SchemaInvalid(
            f"nested plan {pin.path}: cannot tell which repository to read it from; "
            "validate with --config (repo:)"
        )
    else:
        file = _plan_file(root, pin.path, config)
        if origin is not None and os.path.abspath(file.parent) == os.path.abspath(origin.parent):
            raise SchemaInvalid(f"nested plan {pin.path}: a plan cannot nest itself")
        text = _read(file, config.limits.max_plan_bytes if config else DEFAULT_MAX_BYTES, root)
    # messages name the repository's path, never the controller's own folders
    shown = _shown(root, file) if fetch is None and root is not None else str(file)
    data = yamlio.read_yaml(text, shown).data
    found = hashing.plan_hash(data) if isinstance(data, dict) else None
    if found != pin.hash:
        raise PlanHashMismatch(
            f"nested plan {pin.path} hashes to {found}, but {pin.hash} is pinned (and was "
            "approved); review the change, then pin the new hash in a new version of the plan"
        )
    if pins(data):  # never validated further: a chain of pins cost time exponential in depth
        raise SchemaInvalid(f"nested plan {pin.path} nests a plan (one level only)")
    model, problems = check_document(data, config)
    if model is None or problems:
        first = problems[0] if problems else Problem("E_SCHEMA_INVALID", "not a plan")
        error = PlangateError(f"nested plan {pin.path}: {first.render()}")
        error.code = first.code  # type: ignore[misc]
        raise error
    assert isinstance(data, dict)  # it hashed to the pin
    return Child(pin.path, file, model, found, data)


#: Where nested plans are read from instead of the working tree, while set: repository path ->
#: bytes (None: absent). ``plangate check`` validates a plan as the merge would hold it.
class Fetch(Protocol):
    """A commit's tree as nested plans are read from it: a repository path's bytes (None
    when absent or unreadable), and the names of a folder's entries (none when it is no
    folder), so a pinned folder is judged by its whole listing, as on disk (round 71's
    claims in any case: ``plan.yml/`` beside ``PLAN.yml``)."""

    def __call__(self, path: str) -> bytes | None: ...

    def names(self, folder: str) -> list[str]: ...


@runtime_checkable
class History(Fetch, Protocol):
    """A :class:`Fetch` that also reads a past commit's tree the same way (the controller's
    branch tip: :func:`load_pinned` reads the pinned version where the run started it)."""

    def at(self, commit: str) -> Fetch: ...


_SOURCE: ContextVar[Fetch | None] = ContextVar("nested_source", default=None)

#: Repositories a controller reads nested plans of from its branch tip, not a working tree
#: (a remote-mode clone has none; a local one is the agent's to write): their root's
#: absolute path -> how their branch's tree is read (:func:`read_tree_of`), one per
#: controller holding it in this process, the latest read.
_TREES: dict[str, list[Fetch]] = {}


def read_tree_of(root: Path, fetch: Fetch) -> None:
    """Read the nested plans of the repository at ``root`` through ``fetch`` (its branch
    tip's tree) while a controller holds it, until :func:`forget_tree_of`."""
    _TREES.setdefault(os.path.abspath(root), []).append(fetch)


def forget_tree_of(root: Path, fetch: Fetch) -> None:
    """``fetch`` no longer reads ``root``'s nested plans (its controller closed); another
    controller's on the same repository in this process still does."""
    key = os.path.abspath(root)
    held = _TREES.get(key, [])
    if fetch in held:
        held.remove(fetch)
    if not held:
        _TREES.pop(key, None)


def _source(root: Path | None) -> Fetch | None:
    """Where nested plans are read from other than ``root``'s working tree: the block's
    (:func:`reading_from`), else the controller's branch tip (:func:`read_tree_of`)."""
    fetch = _SOURCE.get()
    if fetch is None and root is not None and _TREES:
        held = _TREES.get(os.path.abspath(root))
        fetch = held[-1] if held else None
    return fetch


@contextmanager
def reading_from(fetch: Fetch) -> Iterator[None]:
    """Read nested plans through ``fetch`` (a commit's tree) inside this block."""
    token = _SOURCE.set(fetch)
    try:
        yield
    finally:
        _SOURCE.reset(token)


#: Files a conversion writes (repository path -> bytes, None: deleted), read as if written
#: over the tree nested plans are read from, inside :func:`writing`.
_WRITTEN: ContextVar[Mapping[str, bytes | None] | None] = ContextVar("nested_written", default=None)


@contextmanager
def writing(files: Mapping[str, bytes | None]) -> Iterator[None]:
    """Read nested plans inside this block as if ``files`` (a conversion's: its PLAN.yml,
    its nested plans' ``step-N/PLAN.yml``) were written over the tree they are read from (the
    block's :func:`reading_from`, the controller's branch, else the working tree): a source
    is validated, hashed and checked as the daemon validates it once its convert commit
    wrote them (round 121, ``nested-source-predicted-invalid``: an ActionPlan's nested step
    was "does not exist" to ``hash``, ``validate`` and ``check``, and converted and run by
    the daemon)."""
    token = _WRITTEN.set({**(_WRITTEN.get() or {}), **files})
    try:
        yield
    finally:
        _WRITTEN.reset(token)


class _Written:
    """A :class:`Fetch` of ``files`` written over ``under`` (or, with none, the working
    tree at ``root``, read as :func:`_plan_file` reads it: never through a link)."""

    def __init__(
        self, files: Mapping[str, bytes | None], under: Fetch | None, root: Path | None
    ) -> None:
        self.files, self.under, self.root = files, under, root

    def __call__(self, path: str) -> bytes | None:
        if path in self.files:
            return self.files[path]
        if self.under is not None:
            return self.under(path)
        if self.root is None:
            return None
        current = self.root
        for part in PurePosixPath(path).parts:
            current = current / part
            if os.path.islink(current):
                return None
        try:
            with open(current, "rb") as handle:
                if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    return None
                return handle.read()
        except OSError:
            return None

    def names(self, folder: str) -> list[str]:
        if self.under is not None:
            found = set(self.under.names(folder))
        elif self.root is not None and not os.path.islink(self.root / folder):
            found = set(_listed(self.root / folder)) if (self.root / folder).is_dir() else set()
        else:
            found = set()
        for path, data in self.files.items():
            pure = PurePosixPath(path)
            if str(pure.parent) == folder:
                (found.add if data is not None else found.discard)(pure.name)
            elif str(pure.parent).startswith(folder.rstrip("/") + "/") and data is not None:
                found.add(PurePosixPath(path).relative_to(folder).parts[0])
        return sorted(found)


def load_pinned(
    pin: NestedPlan,
    config: Config | None,
    origin: Path | None,
    check_document: CheckDocument,
    commits: Sequence[str],
) -> Child | None:
    """The pinned version of a nested plan that ran, for the record of the run (round 109,
    r109nestrec): read as :func:`load` reads it, else from each of ``commits`` (the start
    commits the run's journal names) through the controller's reader of its history; bytes
    that hash to the pin are the approved version wherever they lie. None when no such bytes
    are found (the record then shows what the journal holds alone)."""
    try:
        return load(pin, config, origin, check_document)
    except PlangateError:
        pass
    fetch = _source(repo_root(config, origin))
    if not isinstance(fetch, History):
        return None  # no history to read (the working tree, a merge's tree)
    for commit in commits:
        if not _HEX.fullmatch(commit):
            continue
        try:
            with reading_from(fetch.at(commit)):
                return load(pin, config, origin, check_document)
        except PlangateError:
            continue
    return None


def _fetched(
    rel: str, config: Config | None, origin: Path | None, fetch: Fetch
) -> tuple[Path, str]:
    """(its path, its text) of a nested plan read through ``fetch``, with the checks of
    :func:`_plan_file` and :func:`_read` (a symlink's blob is its target: not a plan)."""
    parts = check_path(rel, config)
    if origin is not None and PurePosixPath(origin.as_posix()).parent.parts[-len(parts) :] == parts:
        raise SchemaInvalid(f"nested plan {rel}: a plan cannot nest itself")
    max_bytes = config.limits.max_plan_bytes if config else DEFAULT_MAX_BYTES
    present = fetch.names("/".join(parts))
    _unambiguous(rel, present)
    _no_twin(rel, parts, fetch.names, config)
    for name in PLAN_FILES:
        raw = fetch("/".join((*parts, name))) if name in present else None
        if raw is None:
            continue
        if len(raw) > max_bytes:
            raise SchemaInvalid(f"nested plan {rel}: over the limit of {max_bytes} bytes")
        try:
            return Path(*parts, name), raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SchemaInvalid(f"nested plan {rel}: not UTF-8 text") from None
    raise SchemaInvalid(f"nested plan {rel}: no PLAN.yml there")


def check_path(rel: str, config: Config | None) -> tuple[str, ...]:
    """The parts of ``rel`` once it is known to be a plain folder path under the plans
    folder (no ``..``, ``.``, absolute path or unprintable name), naming a plan by the plan
    id rule (a backslash in a name is E_UNSAFE_PATH there, as for ``status``: round 76)."""
    parts = PurePosixPath(rel).parts
    plans_dir = _plans_parts(config)
    bad = (
        rel.startswith("/")
        or any(p in ("..", ".") for p in parts)
        or tuple(parts[: len(plans_dir)]) != plans_dir
        or len(parts) <= len(plans_dir)
    )
    unprintable = next((p for p in parts if not p.isprintable()), None)
    if unprintable is not None:  # a name no reader takes for a plan folder, as status says
        raise UnsafePath(
            f"nested plan path {rel!r}: the name {unprintable!r} holds a character that is "
            "not printed (an invisible or control character)"
        )
    if bad:
        raise SchemaInvalid(
            f"nested plan path {rel!r}: write the plan's folder relative to the repository, "
            f"under {'/'.join(plans_dir)}/ (no .., no absolute path)"
        )
    why = pin_problem("/".join(parts))  # the plan id rule: a folder no reader takes for a plan
    if why is not None:
        raise UnsafePath(f"nested plan path {rel!r}: {why}")
    return parts


def _plans_parts(config: Config | None) -> tuple[str, ...]:
    """The plans folder's parts (``plans``), above which no name is compared folded."""
    return PurePosixPath(config.plans_dir if config is not None else "plans").parts


def _plan_file(root: Path, rel: str, config: Config | None) -> Path:
    """``root/rel/PLAN.yml`` after checking ``rel`` is a plain path under the plans folder
    and that nothing on the way is a symlink."""
    parts = check_path(rel, config)
    current = root
    for part in parts:
        current = current / part
        _no_symlink(current, rel, root)
    _unambiguous(rel, _listed(current))
    _no_twin(rel, parts, lambda folder: _listed(root / folder), config)
    for name in PLAN_FILES:
        candidate = current / name
        if os.path.lexists(candidate):
            _no_symlink(candidate, rel, root)
            return candidate
    raise SchemaInvalid(f"nested plan {rel}: no PLAN.yml in {_shown(root, current)}")


def _shown(root: Path, path: Path) -> str:
    """``path`` as the repository names it: a message may be committed into a plan's record
    or shown to its agent, and the controller's own folders are nobody's business there."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def _listed(folder: Path) -> list[str]:
    """The names in ``folder`` (none when it is no folder: no PLAN.yml there, said later)."""
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _unambiguous(rel: str, present: list[str]) -> None:
    """A pinned folder holding two entries that are a plan file or claim to be one (both
    names, or either in another case: :func:`controller.plan.names.plan_file_claims`) is
    E_PLAN_AMBIGUOUS, as the folder itself is: a reviewer could read the one the pin does
    not name."""
    both = ambiguous_claims(present)
    if both is not None:
        raise PlanAmbiguous(
            f"nested plan {rel}: the folder holds both {' and '.join(both)}: a reviewer "
            "could read one while the other ran, so neither is pinned"
        )


def _twin_verdict(
    parts: Sequence[str], names: Callable[[str], list[str]], config: Config | None
) -> tuple[str, str] | None:
    """:func:`controller.plan.names.twin_folder_verdict` of the pinned folder ``parts``
    (repository path parts) beside its twins at every level under the plans folder
    (:func:`controller.plan.names.path_twins`, folders listed by ``names``): the verdict the
    index gives the pinned plan's row (round 76: ``plans/team/x`` beside ``plans/Team/x``;
    round 75 compared the last part only)."""
    found = path_twins("/".join(parts), names, len(_plans_parts(config)))
    twins = {twin: names(twin) for twin in found}
    split = split_files("/".join(parts), names, "/".join(_plans_parts(config)))  # round 77
    return twin_folder_verdict("/".join(parts), twins, split) if twins or split else None


def _no_twin(
    rel: str, parts: Sequence[str], names: Callable[[str], list[str]], config: Config | None
) -> None:
    """A pinned folder one with another folder on some checkout, at any level, the other
    holding a plan file, is E_PLAN_AMBIGUOUS as the folder itself is (round 75: ``plans/tw/``
    beside ``plans/Tw/``; round 76: ``plans/team/x`` beside ``plans/Team/x``; a pin by either
    spelling ran its bytes while a Mac showed the other's)."""
    found = _twin_verdict(parts, names, config)
    if found is not None:
        raise PlanAmbiguous(f"nested plan {rel}: {found[1]}")


def _no_symlink(path: Path, rel: str, root: Path) -> None:
    shown = _shown(root, path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        raise SchemaInvalid(f"nested plan {rel}: {shown} does not exist") from None
    if stat.S_ISLNK(mode):
        raise UnsafePath(f"nested plan {rel}: {shown} is a symlink; plangate never follows one")


def _read(file: Path, max_bytes: int, root: Path) -> str:
    shown = _shown(root, file)
    if not stat.S_ISREG(os.lstat(file).st_mode):
        raise UnsafePath(f"{shown}: not a regular file")
    with open(file, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise SchemaInvalid(f"{shown}: over the limit of {max_bytes} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SchemaInvalid(f"{shown}: not UTF-8 text") from None


# --- readers for the profile (risk, tools, flows) -----------------------------------------

#: (path, pinned hash) -> the nested plan's parsed data, or None when it cannot be read or
#: does not hash to the pin. The profile counts what such a reader returns.
Reader = Callable[[str, str], "dict[str, Any] | None"]


def _pinned(text: str | bytes, name: str, pin: str, max_bytes: int) -> dict[str, Any] | None:
    """The parsed plan when it is within the size limit and hashes to ``pin``."""
    try:
        raw = text.encode("utf-8") if isinstance(text, str) else text
        if len(raw) > max_bytes:
            return None
        data = yamlio.read_yaml(raw.decode("utf-8"), name).data
        if isinstance(data, dict) and hashing.plan_hash(data) == pin:
            return data
    except (PlangateError, UnicodeDecodeError, ValueError):
        pass
    return None


def file_reader(config: Config | None, origin: Path | None) -> Reader:
    """Nested plans read from the working tree, with the checks of :func:`load`."""
    max_bytes = config.limits.max_plan_bytes if config else DEFAULT_MAX_BYTES

    def read(path: str, pin: str) -> dict[str, Any] | None:
        root = repo_root(config, origin)
        fetch = _source(root)
        written = _WRITTEN.get() or {}
        if any(file.startswith(path.rstrip("/") + "/") for file in written):
            # as load() reads them: a conversion's nested plans as it will write them (round
            # 127: a submitted plan's risk counted its nested plan as unreadable, `high`)
            fetch = _Written(written, fetch, root)
        if fetch is not None:
            return blob_reader(fetch, config)(path, pin)
        if root is None:
            return None
        try:
            file = _plan_file(root, path, config)
            text = _read(file, max_bytes, root)
        except (PlangateError, OSError):
            return None
        return _pinned(text, str(file), pin, max_bytes)

    return read


def blob_reader(fetch: Fetch, config: Config | None) -> Reader:
    """Nested plans read through ``fetch`` (repository path -> bytes, None when absent): a
    commit's tree, for the verdict on an approval at that commit."""
    max_bytes = config.limits.max_plan_bytes if config else DEFAULT_MAX_BYTES

    def read(path: str, pin: str) -> dict[str, Any] | None:
        try:
            parts = check_path(path, config)
        except PlangateError:
            return None
        try:
            listed = fetch.names("/".join(parts))
            if ambiguous_claims(listed) is not None:  # its load() refuses it
                return None
            if _twin_verdict(parts, fetch.names, config) is not None:
                return None
            name = next((name for name in PLAN_FILES if name in listed), None)
            raw = fetch("/".join((*parts, name))) if name is not None else None
        except PlangateError:  # a symlink on the way (its load() refuses it)
            return None
        return None if raw is None else _pinned(raw, f"{path}/{name}", pin, max_bytes)

    return read


def pins(data: Any) -> list[tuple[int, str, str]]:
    """(action id, path, hash) of each nested action in a plan's parsed data."""
    actions = data.get("actions") if isinstance(data, dict) else None
    found = []
    for action in actions if isinstance(actions, list) else []:
        pin = action.get("plan") if isinstance(action, dict) else None
        if isinstance(pin, dict) and isinstance(pin.get("path"), str):
            number = action.get("id")
            found.append(
                (number if isinstance(number, int) else -1, pin["path"], str(pin.get("hash")))
            )
    return found


# --- validation of the parent ------------------------------------------------------------


def problems(
    model: PlanDocument,
    config: Config | None,
    origin: Path | None,
    check_document: CheckDocument,
) -> Iterator[Problem]:
    """What is wrong with each nested action of ``model``."""
    for index, action in enumerate(model.actions):
        if action.plan is None:
            continue
        where = f"actions[{index}]"
        yield from _shape(action, model.on_failure, where)
        try:
            child = load(action.plan, config, origin, check_document)
        except PlangateError as exc:
            yield Problem(exc.code, exc.message, f"{where}.plan")
            continue
        yield from _child_rules(child, where)
        known = set(child.model.inputs)
        for key in action.inputs or {}:
            if key not in known:
                listed = ", ".join(sorted(known)) or "none"
                yield Problem(
                    "E_SCHEMA_INVALID",
                    f"nested plan {child.path} has no input {key!r} (its inputs: {listed}); "
                    "it must declare each input, with a default",
                    f"{where}.inputs.{key}",
                )


def _shape(action: Any, default: str, where: str) -> Iterator[Problem]:
    mode = action.on_failure or default
    if mode in NESTED_NOT_FAILING:
        yield Problem(
            "E_SCHEMA_INVALID",
            f"a nested plan's action fails with stop, skip or fallback, not {mode} (its own "
            "actions can retry)",
            f"{where}.on_failure",
        )
    for key in NESTED_NOT_EMPTY:
        if getattr(action, key):
            yield Problem(
                "E_SCHEMA_INVALID",
                f"{key}: is for tool calls; a nested plan takes inputs:",
                f"{where}.{key}",
            )
    for key in NESTED_NOT_GIVEN:  # the engine never reads them for a nested plan
        if getattr(action, key) is not None:
            yield Problem(
                "E_SCHEMA_INVALID",
                f"{key}: is for tool calls; a nested plan's own actions take theirs (and "
                "limits.max_runtime bounds the run)",
                f"{where}.{key}",
            )
    if action.verify is not None and action.verify.tool is not None:
        yield Problem(
            "E_SCHEMA_INVALID",
            "a nested plan's verify checks its result (no tool)",
            f"{where}.verify",
        )


def _child_rules(child: Child, where: str) -> Iterator[Problem]:
    at = f"{where}.plan"
    if child.model.on_failure == "ask":
        yield Problem("E_SCHEMA_INVALID", f"nested plan {child.path}: on_failure: ask", at)
    for action in child.model.actions:
        if action.plan is not None:
            yield Problem(
                "E_SCHEMA_INVALID", f"nested plan {child.path} nests a plan (one level only)", at
            )
        if action.requires_approval or action.on_failure == "ask":
            yield Problem(
                "E_SCHEMA_INVALID",
                f"nested plan {child.path}, action {action.id}: gates and ask belong to the "
                "parent plan (put requires_approval on the parent's action)",
                at,
            )
