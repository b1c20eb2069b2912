"""Loading, validating and freezing PLAN.yml files (SPEC §2, §3, §5 freezing half, §10).

The flow of a plan starts here: read (size limit, strict YAML) -> check it is plain JSON
data -> schema -> rules that span fields (ids, tools, references, catalog params) -> hash.
Every problem of a file is collected, each with its code, YAML location and line, so an
author sees all of them at once.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, cast

from controller.errors import LimitExceeded, PlangateError, Problem, UsageError, YamlParseError
from controller.plan import (
    budget,
    guards,
    hashing,
    jsonvalues,
    names,
    refs,
    regexes,
    schemarefs,
    yamlio,
)

# the plan id rule (controller.plan.names), re-exported: every reader imports it from here
from controller.plan.names import MAX_PATH_PARTS as MAX_PATH_PARTS
from controller.plan.names import PLAN_FILES as PLAN_FILES
from controller.plan.names import PLAN_NAMES as PLAN_NAMES
from controller.plan.names import RECORD_FILES as RECORD_FILES
from controller.plan.names import SOURCE_FILES as SOURCE_FILES
from controller.plan.names import (
    claims_a_place,
    folder_verdict,
    source_claims,
    split_files,
    twin_folder_verdict,
    twin_folders,
)
from controller.plan.names import plan_named_folder as plan_named_folder
from controller.plan.names import unsafe_name as unsafe_name
from controller.plan.shape import MAX_SAFE_INT as MAX_SAFE_INT
from controller.plan.shape import REF_IN_TEXT, with_references

if TYPE_CHECKING:  # pydantic is imported only when a plan is validated (fast `hash`)
    from controller.plan.schema import Action, FallbackStep, Output, PlanDocument
    from controller.settings import Config, ToolSpec

DEFAULT_MAX_BYTES = 1_048_576
DEFAULT_MAX_ACTIONS = 500
DEFAULT_MAX_PARAMS = 1_048_576
FREEZABLE = ("draft", "pending_approval", "invalid")
STATUS = ("plan", "status")
NOT_BLOCK = (
    "the top level must be a block mapping (one key per line, as in docs/plan-format.md), "
    "not a flow mapping such as JSON: the controller writes status and frozen into it"
)


@dataclass
class LoadedPlan:
    """A plan file as read: its text, data, model (when valid) and every problem found."""

    path: Path
    text: str
    data: Any = None
    doc: yamlio.YamlDoc | None = None
    model: PlanDocument | None = None
    problems: list[Problem] = field(default_factory=list)
    #: The format a plan source was read as (``validate --json``'s ``format``), set by
    #: :func:`controller.plan.discovery.load_source` whatever the conversion's outcome
    #: (round 127); None for a PLAN.yml and a source whose format was never told.
    format: str | None = None

    @property
    def valid(self) -> bool:
        return not self.problems and self.model is not None

    @property
    def hash(self) -> str | None:
        """The hash of the file as written (None when it is not a mapping of JSON data). A
        pinned nested plan's YAML error (its problem at ``actions[n].plan``) is not this
        file's: round 84 (r84nestkill), a run killed mid-action whose nested plan was then
        broken read as "hashes to None" and waited for good, its tool left running."""
        if not isinstance(self.data, dict) or any(
            p.code == "E_YAML_PARSE" and not p.path for p in self.problems
        ):
            return None
        if self.doc is not None and self.doc.data is self.data and self.doc.text == self.text:
            return text_hash(self.text)  # the data as read from this text: hashed once
        return _data_hash(self.data)

    @property
    def status(self) -> str | None:
        plan = self.data.get("plan") if isinstance(self.data, dict) else None
        value = plan.get("status") if isinstance(plan, dict) else None
        return value if isinstance(value, str) else None

    @property
    def frozen_hash(self) -> str | None:
        frozen = self.data.get("frozen") if isinstance(self.data, dict) else None
        value = frozen.get("hash") if isinstance(frozen, dict) else None
        return value if isinstance(value, str) else None

    def block(self, key: str) -> dict[str, Any]:
        value = self.data.get(key) if isinstance(self.data, dict) else None
        return value if isinstance(value, dict) else {}


def _data_hash(data: Any) -> str | None:
    try:
        return hashing.plan_hash(data)
    except Exception:  # not JSON data: the problems say why
        return None


#: SHA-256 of a plan's text -> its plan hash (None: not a mapping of JSON data). One text is
#: hashed by its decision, its start and its run (JCS of a 1,000-action plan: 15-50 ms).
_TEXT_HASHES: OrderedDict[bytes, str | None] = OrderedDict()
_TEXT_HASHES_MAX = 256
_TEXT_HASHES_LOCK = threading.Lock()


def text_hash(text: str, fresh: dict[str, Any] | None = None) -> str | None:
    """The plan hash of the data ``text`` reads as (None: not a mapping of JSON data, or not
    YAML), computed once per distinct text: the key is the SHA-256 of its exact characters,
    and the data hashed is a fresh read of the text (from the parse cache when it holds the
    text), never a caller's copy. ``fresh``: what :func:`yamlio.read_yaml` just returned for
    ``text``, unchanged (the history's reader of plan versions has it; a second read would
    cost a copy of it)."""
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    with _TEXT_HASHES_LOCK:
        if key in _TEXT_HASHES:
            _TEXT_HASHES.move_to_end(key)
            return _TEXT_HASHES[key]
    try:
        data = fresh if fresh is not None else yamlio.read_yaml(text).data
    except PlangateError:
        return None
    found = _data_hash(data) if isinstance(data, dict) else None
    with _TEXT_HASHES_LOCK:
        _TEXT_HASHES[key] = found
        if len(_TEXT_HASHES) > _TEXT_HASHES_MAX:
            _TEXT_HASHES.popitem(last=False)
    return found


# --- finding plans ----------------------------------------------------------------------


def find_plan_files(repo: Path, plans_dir: str = "plans") -> Iterator[Path]:
    """Every PLAN.yml (or PLAN.yaml) under the plans directory, in path order."""
    base = repo / plans_dir
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in PLAN_FILES:
            if name in files:
                yield Path(folder) / name
                break


def plan_file_in(path: Path) -> Path:
    """Accept a plan folder or its PLAN.yml; a folder without one but with a plan source (the
    daemon converts it) means that source, or the first of the entries claiming a source's
    place (:func:`controller.plan.names.source_claims`): reading it answers the folder's
    verdict (:func:`held_problem`: two sources, a twin, a claim beside it; round 74)."""
    if path.is_dir():
        for name in PLAN_FILES:
            if (path / name).is_file() or (path / name).is_symlink():  # a link: refused later
                return path / name
        try:
            sources = source_claims(os.listdir(path))
        except OSError:
            sources = []
        if sources:
            return path / sources[0]
    return path


# --- reading and validation -------------------------------------------------------------


def load_plan(
    path: Path, config: Config | None = None, plain: bool = False, *, data: bytes | None = None
) -> LoadedPlan:
    """Read and validate a plan file; problems are collected, never raised.

    ``plain``: the caller reads only whether the plan is valid and its problems, never
    ``model`` (``plangate validate``): a plan of the usual shape is then checked without
    building the pydantic models (:mod:`controller.plan.shape`), with the same problems.
    ``data``: the file's bytes as the caller read them (see :func:`read_plan`).
    """
    plan = read_plan(path, config, data=data)
    if plan.doc is not None:
        _validate(plan, config, plain)
    return plan


def ambiguity(folder_files: Iterable[str], folder: str = ".") -> Problem | None:
    """The folder's verdict (:func:`controller.plan.names.folder_verdict`) as a problem:
    E_PLAN_AMBIGUOUS when its entries hold more than one plan file name, compared
    case-insensitively, or when its source waits (a claim or a second source beside it)."""
    found = folder_verdict(folder, list(folder_files))
    return None if found is None else Problem(*found)


def held_problem(path: Path, plans_dir: str = "plans") -> Problem | None:
    """The verdict on the folder of ``path``, a plan file, a plan source or an entry claiming
    either's place (:func:`controller.plan.names.claims_a_place`): E_PLAN_AMBIGUOUS when a
    second entry beside it is a plan file or claims to be one (rounds 69 and 71), or when a
    source waits (round 74: ``validate``, ``hash``, ``show`` and ``freeze`` read, hashed and
    froze a source beside a claim or a twin the controller held), or when a folder one with
    it on some checkout at any level under ``plans_dir`` holds a plan file (round 76), as
    every reader says."""
    if not claims_a_place(path.name):
        return None
    try:
        return ambiguity(os.listdir(path.parent), repo_path(path.parent) or ".") or _twin_problem(
            path.parent, plans_dir, source=bool(source_claims([path.name]))
        )
    except OSError:
        return None  # no folder: read_plan says so


def _twin_problem(folder: Path, plans_dir: str, *, source: bool = False) -> Problem | None:
    """E_PLAN_AMBIGUOUS when a folder one with ``folder`` on some checkout, at any level from
    the plans folder down (:func:`controller.plan.names.twin_folders`: ``plans/team/x`` of
    ``plans/Team/x``; round 76, round 75 looked beside the folder only), holds a plan file
    (:func:`controller.plan.names.twin_folder_verdict`), as the history index holds both;
    for a ``source``, a plan source too, as the daemon's converter holds it (round 82).
    Outside a git work tree the folder's own parent is the top compared."""
    rel, root = _in_work_tree(folder)
    top = root if root is not None else folder.parent
    if root is None:  # outside a work tree: compared beside the folder only
        rel, plans_dir = folder.name, "."
    found_twins = twin_folders(rel, lambda f: _entries(top / f), plans_dir)
    twins = {twin: _entries(top / twin) for twin in found_twins}
    split = split_files(rel, lambda f: _entries(top / f), plans_dir)  # round 77: fy\PLAN.yml
    found = twin_folder_verdict(rel, twins, split, source=source) if twins or split else None
    return None if found is None else Problem(*found)


def _entries(folder: Path) -> list[str]:
    """The entries of ``folder``; none for a file, a link or a folder gone."""
    if folder.is_symlink() or not folder.is_dir():
        return []
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _in_work_tree(path: Path) -> tuple[str, Path | None]:
    """``path`` relative to the git work tree holding it (the nearest folder above with a
    ``.git``), and that work tree; the path as given (its root dropped) and None outside
    one. Never trimmed or resolved through a link."""
    absolute = Path(os.path.abspath(path))
    root = next((p for p in absolute.parents if os.path.lexists(p / ".git")), None)
    if root is None:
        return "/".join(path.parts[1:] if path.is_absolute() else path.parts), None
    return absolute.relative_to(root).as_posix(), root


def repo_path(path: Path) -> str:
    """``path`` as the history index names it: relative to the git work tree holding it (the
    nearest folder above with a ``.git``), never trimmed or resolved through a link; outside
    a work tree, the path as given (its root dropped)."""
    return _in_work_tree(path)[0]


def name_problem(path: Path) -> Problem | None:
    """E_UNSAFE_PATH when ``path`` (a plan file's) is no plan's by its name, the rule the
    history index applies to committed paths (:func:`unsafe_name`, over :func:`repo_path`):
    a folder named as a plan file, a folder name beginning or ending with a blank, a hidden
    or control character (round 75: the CLI read, froze and committed into ``plans/a-sp ``,
    whose row held it)."""
    why = unsafe_name(repo_path(path))
    return None if why is None else Problem("E_UNSAFE_PATH", why)


def link_problem(
    path: Path, data: bytes | None = None, plans_dir: str = "plans", watched: Path | None = None
) -> Problem | None:
    """E_UNSAFE_PATH for a plan file that is a symbolic link (dangling or not), or reached
    through one (a folder on its way below the work tree's root: round 88), the verdict
    the controller gives a link committed where a plan file is: the readers (``validate``,
    ``hash``, ``show``, ``freeze``) never show the file a link points at as the plan, which
    nothing would ever run. Outside a git work tree (a plan kept elsewhere and linked for
    ``freeze``) the link is followed. ``data``: the caller read the bytes itself.

    Likewise a plan whose own work tree is a repository nested below the plans folder of the
    work tree around it (round 89: a submodule committed as a gitlink, a ``.git`` file naming
    a git directory elsewhere, a clone never committed): the controller holds that folder
    ``E_UNSAFE_PATH`` and never reads into it, so no reader shows what it holds. Unless that
    repository is the one ``watched`` (the config's ``repo``)."""
    rel, root = _in_work_tree(path)
    if root is None:
        return None  # outside a git work tree no controller reads it: a link is the user's
    nested = nested_problem(root, plans_dir, watched)
    if nested is not None or data is not None:  # bytes the caller read: no link followed
        return nested
    here = root
    for part in PurePosixPath(rel).parts:
        here = here / part
        if here.is_symlink():
            what = "the plan file" if here == Path(os.path.abspath(path)) else f"{part!r}"
            return Problem(
                "E_UNSAFE_PATH",
                f"{what} on the way to the plan is a symbolic link; plangate never follows "
                "one, and the controller holds such a plan without running it: commit the "
                "plan as a regular file in a regular folder",
            )
    return None


def nested_problem(root: Path, plans_dir: str, watched: Path | None) -> Problem | None:
    """E_UNSAFE_PATH when the work tree ``root`` (a plan's or a source's: the nearest folder
    above it with a ``.git``) is a repository nested below the plans folder of the work tree
    around it (:func:`_nested_in`): no reader, converter or adoption reads into it (round 90:
    local mode adopted a plan in a nested worktree, ``convert`` read and wrote there)."""
    nested = _nested_in(root, plans_dir, watched)
    if nested is None:
        return None
    return Problem(
        "E_UNSAFE_PATH",
        f"{nested} is a git repository of its own (a submodule, a worktree or a nested clone) "
        "in the plans folder of the repository around it; plangate never reads a plan "
        "through one, and the controller holds such a folder without running it: commit the "
        "plan as a regular file in a regular folder",
    )


def nested_at(path: Path, plans_dir: str = "plans", watched: Path | None = None) -> Problem | None:
    """:func:`nested_problem` for any ``path`` (a file or folder, existing or not): the work
    tree its nearest existing folder lies in."""
    absolute = Path(os.path.abspath(path))
    start = absolute if absolute.is_dir() else absolute.parent
    root = next((p for p in (start, *start.parents) if os.path.lexists(p / ".git")), None)
    return None if root is None else nested_problem(root, plans_dir, watched)


def _nested_in(root: Path, plans_dir: str, watched: Path | None) -> str | None:
    """``root``'s path in the work tree around it when ``root`` (a plan's work tree) lies
    below that tree's plans folder, in any spelling one with it on some checkout; else None
    (no tree around it, or ``root`` is the ``watched`` repository itself)."""
    if watched is not None and os.path.abspath(watched) == str(root):
        return None
    outer = next((p for p in root.parents if os.path.lexists(p / ".git")), None)
    if outer is None:
        return None
    inner = root.relative_to(outer).as_posix()
    parts, top = names.path_parts(inner), names.path_parts(plans_dir)
    if len(parts) > len(top) and names.same_path("/".join(parts[: len(top)]), plans_dir):
        return inner
    return None


def read_plan(path: Path, config: Config | None = None, *, data: bytes | None = None) -> LoadedPlan:
    """Read and parse a plan file (size limit, UTF-8, strict YAML) without validating it.
    ``data``: the file's bytes as the caller read them, not read again (local mode's
    adoption reads an uncommitted file once, as ``git add`` would store it: round 78)."""
    max_bytes = config.limits.max_plan_bytes if config else DEFAULT_MAX_BYTES
    plans_dir = config.plans_dir if config else "plans"
    watched = config.repo if config else None
    refused = (
        held_problem(path, plans_dir)
        or name_problem(path)
        or link_problem(path, data, plans_dir, watched)
    )
    if refused is not None:
        return LoadedPlan(path, "", problems=[refused])
    try:
        if data is None:
            data = read_bounded(path, max_bytes)
        if len(data) > max_bytes:
            size = max(path.stat().st_size, len(data))
            return LoadedPlan(path, "", problems=[too_large(size, max_bytes)])
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise UsageError(
            f"{path}: no such plan file", remedy="give a PLAN.yml path", quotes=(str(path),)
        ) from None
    except IsADirectoryError:
        raise UsageError(
            f"{path}: a folder without PLAN.yml (or exactly one PLAN.json, PLAN.toon or PLAN.md)",
            remedy="give a plan file path",
        ) from None
    except UnicodeDecodeError as exc:
        problem = Problem("E_YAML_PARSE", f"not UTF-8 text (byte {exc.start})")
        return LoadedPlan(path, "", problems=[problem])
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror}", remedy="give a readable PLAN.yml") from None
    return parse_text(text, path, config)


#: Bytes of every plan file kept for the blocks the controller writes into it (``frozen``,
#: ``approval``, ``execution``, ``validation``): a plan within the limit when submitted stays
#: within it after the controller's commits (round 19: a plan 20 bytes under the limit went
#: over it at its freeze, and was never readable again).
CONTROLLER_ROOM = 64 * 1024
CONTROLLER_BLOCKS = ("frozen", "approval", "execution", "validation")
#: The controller's blocks that are its answer to the plan's author, the problems of the
#: plan's text: written through :meth:`Problem.answered` (:func:`invalid_text`: the author's
#: text as written, the catalog's parts redacted), so a reader shows them as recorded
#: (round 63: redacted again, the page's API masked a status equal to a secret, and a
#: secret's start before a ``...`` the author wrote, where the commit quoted it as written).
ANSWER_BLOCKS = ("validation",)


def controller_room(max_bytes: int) -> int:
    """The room a plan file keeps for the controller's blocks: 64 KiB, or a quarter of a
    smaller ``limits.max_plan_bytes``."""
    return min(CONTROLLER_ROOM, max_bytes // 4)


def _controller_bytes(text: str, doc: yamlio.YamlDoc) -> int:
    """Bytes of the lines of the controller's top-level blocks in ``text``."""
    if not isinstance(doc.data, dict) or not set(CONTROLLER_BLOCKS) & set(doc.data):
        return 0
    lines = text.splitlines(keepends=True)  # as yamlio.edit counts them
    total = 0
    for key, first, last in yamlio.entries(doc):
        if key in CONTROLLER_BLOCKS:
            total += sum(len(line.encode("utf-8")) for line in lines[first : last + 1])
    return total


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """At most ``max_bytes + 1`` bytes of a regular file (a FIFO or device would never end)."""
    if path.is_dir():
        raise IsADirectoryError(path)
    if path.exists() and not path.is_file():
        raise UsageError(f"{path}: not a regular file", remedy="give a PLAN.yml file")
    with path.open("rb") as handle:
        return handle.read(max_bytes + 1)


def too_large(size: int, limit: int) -> Problem:
    return Problem(
        "E_PLAN_TOO_LARGE",
        f"the file is {size} bytes, over the limit of {limit}; split the plan or raise "
        "limits.max_plan_bytes",
    )


def size_problem(text: str, config: Config | None, limit: int | None = None) -> Problem | None:
    """E_PLAN_TOO_LARGE for plan text over ``limit`` (default: limits.max_plan_bytes), read
    as UTF-8: the size check of every plan text, a file's or one an agent sends (round 61:
    the MCP ``validate`` parsed 3 MB and called it prose)."""
    if limit is None:
        limit = config.limits.max_plan_bytes if config else DEFAULT_MAX_BYTES
    size = len(text.encode("utf-8", "surrogatepass"))
    return too_large(size, limit) if size > limit else None


def parse_text(text: str, path: Path, config: Config | None = None) -> LoadedPlan:
    """Parse a plan's text strictly; reading problems are recorded, not raised."""
    plan = LoadedPlan(path, text)
    max_bytes = config.limits.max_plan_bytes if config else DEFAULT_MAX_BYTES
    size = len(text.encode("utf-8"))
    oversize = size_problem(text, config)
    if oversize is not None:
        plan.problems.append(oversize)
        return plan
    try:
        plan.doc = yamlio.read_yaml(text, str(path))
    except YamlParseError as exc:
        line = getattr(exc, "line", None)
        remedy = exc.remedy if exc.remedy != YamlParseError.remedy else None  # its own
        message = _strip_source(exc.message, str(path))
        plan.problems.append(Problem(exc.code, message, "", line, remedy))
        return plan
    plan.data = plan.doc.data
    own, room = size - _controller_bytes(text, plan.doc), controller_room(max_bytes)
    if own > max_bytes - room:
        plan.problems.append(
            Problem(
                "E_PLAN_TOO_LARGE",
                f"the plan is {own} bytes besides the controller's blocks, over "
                f"{max_bytes - room}: limits.max_plan_bytes ({max_bytes}) keeps {room} bytes "
                "for the frozen, approval and execution blocks the controller writes into "
                "it; split the plan or raise limits.max_plan_bytes",
            )
        )
        return plan
    return plan


def validate_text(text: str, path: Path, config: Config | None = None) -> LoadedPlan:
    """Parse and validate a plan's text (legacy ``${...}`` references count as converted)."""
    plan = parse_text(text, path, config)
    if plan.doc is not None:
        _validate(plan, config)
    return plan


def _validate(plan: LoadedPlan, config: Config | None, plain: bool = False) -> None:
    assert plan.doc is not None
    model, problems = check_document(plan.data, config, plan.path, plain)
    if isinstance(plan.data, dict) and not yamlio.is_block_mapping(plan.doc):
        # the controller writes status, frozen and validation by line: a flow mapping (JSON)
        # could be read but never frozen, so it fails here for validate, freeze and daemon
        problems.insert(0, Problem("E_SCHEMA_INVALID", NOT_BLOCK, "", 1))
    located = [p if p.line is not None else _with_line(p, plan.doc) for p in problems]
    # the reading's own problems first (a plan that leaves the controller no room)
    plan.problems = plan.problems + sorted(located, key=lambda p: p.line or 0)
    plan.model = model if not plan.problems else None


def _strip_source(message: str, source: str) -> str:
    return message[len(source) :].lstrip(":0123456789 ") if message.startswith(source) else message


def _with_line(problem: Problem, doc: yamlio.YamlDoc) -> Problem:
    return dataclasses.replace(problem, line=doc.line_of(_split(problem.path)))  # its remedy kept


# a name, an index, a JSON-quoted key (``refs.format_path`` quotes any other key) or [name]
_SEGMENT = re.compile(r'\.?([^.\[\]]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\[([^\]]*)\]')


def _split(path: str) -> list[str | int]:
    """``actions[1].params["a.b"]`` -> ``["actions", 1, "params", "a.b"]``: the inverse of
    :func:`controller.plan.refs.format_path`, so a quoted key finds its own line, not its
    parent's."""
    parts: list[str | int] = []
    for name, index, quoted, other in _SEGMENT.findall(path):
        if index:
            parts.append(int(index))
        elif quoted:
            parts.append(json.loads(quoted))
        else:
            parts.append(name or other.strip("\"'"))
    return parts


def check_document(
    data: Any, config: Config | None = None, origin: Path | None = None, plain: bool = False
) -> tuple[PlanDocument | None, list[Problem]]:
    """The model (legacy refs converted) and every problem (without line numbers).

    ``plain`` (see :func:`load_plan`): a document that
    :func:`controller.plan.shape.plain_document` accepts is checked on its stand-ins of the
    models, and the "model" returned is that stand-in; its problems are the same.
    """
    if not isinstance(data, dict):
        return None, [
            Problem("E_SCHEMA_INVALID", "the file must be a mapping with plan: and actions:")
        ]
    problems = non_json_problems(data)
    problems += _version(data)
    problems += legacy_problems(data)
    converted = convert_legacy_params(data)
    if plain and not problems:
        from controller.plan.shape import plain_document

        stand_in = plain_document(converted)
        if stand_in is not None:  # the schema accepts it: the same rules on the stand-ins
            found = cast("PlanDocument", stand_in)
            problems = check_rules(found, config, origin) + check_caps(data, config, origin)
            return (found if not problems else None), problems
    from controller.plan.schema import parse_document, salvage_document

    model, errors = parse_document(converted)
    schema_problems = [_schema_problem(e) for e in errors]
    # a non-JSON value makes the schema complain about it too: once is enough
    odd = {_top(p.path) for p in problems}
    problems += [
        p for p in schema_problems if _top(p.path) not in odd and not _covered(p, problems)
    ]
    if model is not None:
        problems += check_rules(model, config, origin)
        problems += check_caps(data, config, origin)
    else:  # every kind of error at once: the rules also run over what the schema accepted
        salvaged = salvage_document(converted)
        if salvaged is not None:
            problems += [
                p for p in check_rules(salvaged, config, origin) if not _covered(p, problems)
            ]
    return (model if not problems else None), problems


def schema_model(data: Any) -> PlanDocument | None:
    """The model of a document the schema accepts, whatever the rules say of it (None: the
    schema refuses it). For crash recovery of a run whose plan turned invalid (round 84,
    :meth:`controller.execution.executor.Engine.run`): its actions as approved, never run."""
    if not isinstance(data, dict) or non_json_problems(data):
        return None
    from controller.plan.schema import parse_document

    model, _errors = parse_document(convert_legacy_params(data))
    return model


def without_controller_fields(data: Any) -> Any:
    """``data`` with what only the controller writes put as its start wrote it: the
    ``execution:``/``approval:`` blocks removed and ``plan.status`` ``executing`` (none of it
    hashed). For crash recovery of a journaled run (round 95, forgedtail: an agent's
    ``status: complete`` kept the journal from being consulted)."""
    if not isinstance(data, dict):
        return data
    out = {key: value for key, value in data.items() if key not in OWNED_BLOCKS}
    plan = out.get("plan")
    if isinstance(plan, dict):
        out["plan"] = {**plan, "status": "executing"}
    return out


def _top(path: str) -> str:
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def _covered(problem: Problem, found: list[Problem]) -> bool:
    """Whether an earlier problem already sits at this location or one enclosing it."""
    for other in found:
        if not other.path:
            continue
        if problem.path == other.path:
            return True
        if problem.path.startswith(other.path) and problem.path[len(other.path)] in ".[":
            return True
    return False


def nested_models(
    model: PlanDocument, config: Config | None, origin: Path | None
) -> dict[int, PlanDocument]:
    """Parent action id -> the pinned plan's model, for those that load (the others are
    reported by :func:`controller.plan.nested.problems`)."""
    if all(a.plan is None for a in model.actions):
        return {}
    from controller.plan import nested

    found = {}
    for action in model.actions:
        if action.plan is not None:
            try:
                found[action.id] = nested.load(action.plan, config, origin, check_document).model
            except PlangateError:
                continue
    return found


def check_caps(
    data: dict[str, Any], config: Config | None, origin: Path | None = None
) -> list[Problem]:
    """E_LIMIT_EXCEEDED for each cap (plan ``limits:`` and config ``limits:``) exceeded; a
    nested plan's actions and calls count (read from the working tree)."""
    from controller.plan import nested, profile

    caps = profile.caps_for(data, config.limits if config else None)
    reader = nested.file_reader(config, origin)
    actions, estimate = profile.size_of(data, config.tools if config else {}, reader)
    where = {"max_actions": "actions"}
    return [
        Problem("E_LIMIT_EXCEEDED", cap.message, where.get(cap.key, "limits"))
        for cap in profile.cap_problems(actions, estimate, caps)
    ]


def convert_legacy_params(data: dict[str, Any]) -> dict[str, Any]:
    """The document with legacy ``${...}`` references converted in action params only.

    References mean something only in params; elsewhere (inputs, names, why) ``${...}`` is
    the author's text and must reach tools exactly as frozen.
    """
    actions = data.get("actions")
    if not isinstance(actions, list):
        return data
    converted = [
        {**a, "params": refs.convert_legacy_tree(a["params"])}
        if isinstance(a, dict) and "params" in a
        else a
        for a in actions
    ]
    return {**data, "actions": converted}


def legacy_problems(data: dict[str, Any]) -> list[Problem]:
    """A legacy ``${...}`` in action params that opens a reference the freeze's rewrite
    (:func:`convert_legacy_params`) cannot carry whole: refused, never frozen into a
    reference cut at a ``>`` nor left as text the tool gets (round 108)."""
    actions = data.get("actions")
    found = []
    for index, action in enumerate(actions if isinstance(actions, list) else []):
        if not isinstance(action, dict):
            continue
        for where, value in refs.walk_strings(action.get("params"), ("actions", index, "params")):
            bad = refs.legacy_uncarried(value)
            if bad is not None:
                found.append(refs.legacy_problem(bad, refs.format_path(where)))
    return found


def non_json_problems(data: Any) -> list[Problem]:
    """Values that are not plain JSON data (timestamps, non-string keys, NaN, huge ints)."""
    if hashing.is_plain_json(data):  # the usual plan: checked in a third of the walk's time
        return []
    return list(_non_json(data, ()))


def _non_json(value: Any, path: tuple[str | int, ...]) -> Iterator[Problem]:
    if isinstance(value, str | bool | type(None)) or (
        type(value) is int and abs(value) <= MAX_SAFE_INT
    ):
        return  # the usual leaf: no path written out for it (a 1,000-action plan has 11,000)
    where = refs.format_path(path)
    hint = "; quote it to make it a string"
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                at = refs.format_path((*path, str(key)))
                yield Problem("E_SCHEMA_INVALID", f"key {key!r} is not a string{hint}", at)
            else:
                yield from _non_json(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _non_json(item, (*path, index))
    elif isinstance(value, datetime | date):
        yield Problem("E_SCHEMA_INVALID", f"a YAML timestamp is not JSON data{hint}", where)
    elif isinstance(value, yamlio.InexactFloat):
        yield Problem("E_SCHEMA_INVALID", value.refusal(), where)
    elif isinstance(value, float) and not math.isfinite(value):
        yield Problem("E_SCHEMA_INVALID", f"{value} is not a finite number{hint}", where)
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INT:
        yield Problem("E_SCHEMA_INVALID", f"integer beyond ±(2^53-1) loses precision{hint}", where)
    elif not isinstance(value, str | int | float | bool | type(None)):
        yield Problem("E_SCHEMA_INVALID", f"{type(value).__name__} is not JSON data{hint}", where)


def _version(data: dict[str, Any]) -> list[Problem]:
    from controller.plan.shape import SUPPORTED_VERSION

    plan = data.get("plan")
    version = plan.get("version") if isinstance(plan, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > SUPPORTED_VERSION:
        return [
            Problem(
                "E_PLAN_VERSION_UNSUPPORTED",
                f"format version {version} is newer than this plangate supports "
                f"({SUPPORTED_VERSION}); upgrade plangate",
                "plan.version",
            )
        ]
    return []


def _schema_problem(error: dict[str, Any]) -> Problem:
    from controller.plan.shape import EXPECT_TAGS

    loc = tuple(p for p in error["loc"] if p not in EXPECT_TAGS)
    key = loc[-1:] == ("[key]",)  # a mapping's key, not its value
    loc = loc[:-1] if key else loc
    where = refs.format_path(loc)
    if _is_name_rule(error) and (key or "outputs" in loc):
        return _bad_name(error.get("input"), "key" if key else "name", where)
    if error["type"] == "extra_forbidden":
        return Problem("E_SCHEMA_INVALID", _unknown_key(loc), where)
    if error["type"] == "missing":
        return Problem("E_SCHEMA_INVALID", f"required key `{loc[-1]}` is missing", where)
    if error["type"] == "less_than_equal" and loc == ("plan", "version"):
        return Problem("E_PLAN_VERSION_UNSUPPORTED", error["msg"], where)
    if error["type"] == "model_type":
        return Problem("E_SCHEMA_INVALID", _mapping_wanted(loc, error.get("input")), where)
    return Problem("E_SCHEMA_INVALID", f"{error['msg']} (got {_short(error.get('input'))})", where)


def _mapping_wanted(loc: tuple[Any, ...], given: Any) -> str:
    """What a mapping in the plan holds, for a value that is not one (an agent writing
    ``available_tools: [echo]`` learns to write ``- name: echo``)."""
    from controller.plan.schema import allowed_keys
    from controller.plan.shape import NAME_PATTERN

    keys = allowed_keys(loc)
    said = (
        f"a mapping with {', '.join(f'`{k}`' for k in keys)} is expected here"
        if keys
        else ("a mapping is expected here")
    )
    if isinstance(given, str) and "name" in keys and re.fullmatch(NAME_PATTERN, given):
        said += f"; write `name: {given}` for this one"
    return f"{said} (got {_short(given)})"


def _is_name_rule(error: dict[str, Any]) -> bool:
    from controller.plan.shape import NAME_PATTERN

    pattern = (error.get("ctx") or {}).get("pattern")
    return error["type"] == "string_pattern_mismatch" and pattern == NAME_PATTERN


def _bad_name(name: Any, what: str, where: str) -> Problem:
    """An output name or an input key a reference could read two ways (round 56: with
    inputs ``a.b`` and ``a``, ``$<inputs.a.b>`` read input ``a``'s ``b``): one rule for both."""
    return Problem(
        "E_SCHEMA_INVALID",
        f"{what} {_short(name)} is not a plain name (a letter or `_`, then letters, digits, "
        "`_` or `-`): a reference reads `.`, `[` and quotes as a path into a value",
        where,
        remedy="rename it to a plain name, such as `a_b` for `a.b`, and the references to it",
    )


def _unknown_key(loc: tuple[Any, ...]) -> str:
    import difflib

    from controller.plan.schema import allowed_keys

    allowed = allowed_keys(loc[:-1])
    close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
    hint = f"; did you mean `{close[0]}`?" if close else f"; allowed: {', '.join(allowed)}"
    return f"unknown key `{loc[-1]}`{hint}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_rules(
    model: PlanDocument, config: Config | None = None, origin: Path | None = None
) -> list[Problem]:
    """Rules across fields: ids, limits, tools, outputs, references, catalog params."""
    problems: list[Problem] = []
    problems += _check_ids(model)
    problems += _check_tools(model, config)
    problems += _check_outputs(model)
    children = nested_models(model, config, origin)
    problems += _check_param_sizes(model, config, children)
    problems += guards.static_problems(model)
    if config is not None:
        from controller.plan import flows

        problems += _check_static_params(model, config.tools)
        problems += flows.unguarded_problems(model, config.tools, children)
    from controller.plan import rules

    problems += rules.check(model, config)
    if any(a.plan is not None for a in model.actions):
        from controller.plan import nested

        problems += nested.problems(model, config, origin, check_document)
    return problems


def _check_ids(model: PlanDocument) -> Iterator[Problem]:
    for index, action in enumerate(model.actions):
        if action.id != index + 1:
            yield Problem(
                "E_ACTION_IDS",
                f"action ids must be 1..N in file order: expected {index + 1}, found {action.id}",
                f"actions[{index}].id",
            )


def _check_tools(model: PlanDocument, config: Config | None) -> Iterator[Problem]:
    declared = {tool.name for tool in model.available_tools}
    seen: set[str] = set()
    for index, tool in enumerate(model.available_tools):
        if tool.name in seen:
            yield Problem(
                "E_SCHEMA_INVALID",
                f"tool {tool.name!r} is declared twice in available_tools; keep one entry",
                f"available_tools[{index}].name",
            )
        seen.add(tool.name)
    for index, action in enumerate(model.actions):
        where = f"actions[{index}].tool"
        if action.tool is None:
            continue
        if action.tool not in declared:
            listed = ", ".join(sorted(declared)) or "none"
            yield Problem(
                "E_TOOL_NOT_DECLARED",
                f"tool {action.tool!r} is not in available_tools (declared: {listed}); "
                "declare it there",
                where,
            )
        if config is not None and action.tool not in config.tools:
            known = ", ".join(sorted(config.tools)) or "none"
            yield Problem(
                "E_TOOL_UNKNOWN",
                f"tool {action.tool!r} is not in the controller's catalog (known: {known})",
                where,
            )


def _check_outputs(model: PlanDocument) -> Iterator[Problem]:
    from controller.plan.jsonpaths import query_problem

    for base, outputs in _output_lists(model):
        seen: set[str] = set()
        for o_index, output in enumerate(outputs):
            where = f"{base}.outputs[{o_index}]"
            if output.name in seen:
                yield Problem(
                    "E_SCHEMA_INVALID", f"output {output.name!r} is declared twice", where
                )
            seen.add(output.name)
            problem = query_problem(output.path)
            if problem is not None:
                yield Problem(
                    "E_SCHEMA_INVALID",
                    f"not an RFC 9535 JSONPath query: {problem} (write e.g. $.items[*].id)",
                    f"{where}.path",
                )


def _output_lists(model: PlanDocument) -> Iterator[tuple[str, list[Output]]]:
    """Each action's outputs and each fallback step's (round 62: one rule for both, as the
    schema's ``Output`` model says it)."""
    for index, action in enumerate(model.actions):
        yield f"actions[{index}]", action.outputs
        for f_index, step in enumerate(action.fallback):
            yield f"actions[{index}].fallback[{f_index}]", step.outputs


def plan_symbols(model: PlanDocument) -> refs.PlanSymbols:
    return refs.PlanSymbols(
        outputs={a.id: {o.name for o in a.outputs} for a in model.actions},
        inputs=model.inputs,
    )


def _check_param_sizes(
    model: PlanDocument, config: Config | None, children: dict[int, PlanDocument]
) -> Iterator[Problem]:
    """E_LIMIT_EXCEEDED wherever the run would hand a tool (or a pinned plan) params whose
    literals, inputs and plan fields alone already resolve past ``limits.max_params_bytes``
    (outputs, secrets and approval count at run time, as empty): every site of
    :func:`rules.param_sites`, counted by the run's own :func:`refs.resolve`. A pinned plan's
    sites are counted too, with the inputs this plan gives it (``children``: parent action id
    -> the pinned plan's model), and reported at those inputs (round 124: a fallback step's,
    a check's and a pinned plan's were refused only when their turn came, after earlier
    actions ran)."""
    from controller.plan import rules

    limit = config.limits.max_params_bytes if config else DEFAULT_MAX_PARAMS
    ctx = _validation_context(model, model.inputs)
    for _action, where, value in rules.param_sites(model):
        problem = _size_problem(value, ctx, limit)
        if problem is not None:
            yield Problem(problem.code, problem.message, refs.format_path(where))
    for index, action in enumerate(model.actions):
        child = children.get(action.id)
        if child is None or not action.inputs:
            continue  # without inputs of this plan's, the pinned plan is validated on its own
        try:
            given = refs.resolve(action.inputs, ctx, limit)
        except (PlangateError, TypeError, ValueError):
            continue  # reported above (or by the reference rules)
        child_ctx = _validation_context(child, {**child.inputs, **given})
        for _action, where, value in rules.param_sites(child):
            problem = _size_problem(value, child_ctx, limit)
            if problem is not None:
                path = action.plan.path if action.plan is not None else "?"
                yield Problem(
                    problem.code,
                    f"nested plan {path}, {refs.format_path(where)}, with these inputs: "
                    f"{problem.message}",
                    f"actions[{index}].inputs",
                    remedy="give the nested plan smaller inputs (or reference them fewer "
                    "times in it), or raise limits.max_params_bytes",
                )


def _validation_context(model: PlanDocument, inputs: dict[str, Any]) -> refs.Context:
    """What references resolve against at validation: the plan's inputs and fields, the
    rest (outputs, results, approval, secrets) as empty as it can be."""
    return refs.Context(
        inputs=inputs,
        plan={"name": model.plan.name, "task": model.plan.task, "hash": ""},
        approval=_UNKNOWN_AT_VALIDATION,
        outputs=_UnknownOutputs(),
        results=_UnknownOutputs(),
        secret=lambda _name: "",
    )


def _size_problem(value: Any, ctx: refs.Context, limit: int) -> LimitExceeded | None:
    """The run's E_LIMIT_EXCEEDED for ``value`` resolved against ``ctx``, or None."""
    try:
        refs.resolve(value, ctx, limit)
    except LimitExceeded as exc:
        return exc
    except PlangateError:
        return None  # a reference problem: reported by rules.check
    except (TypeError, ValueError):
        return None  # a value that is not JSON data (a timestamp): the schema reports it
    return None


#: Values known only at run time count as empty at validation.
_UNKNOWN_AT_VALIDATION = {"by": "", "at": "", "commit": ""}


class _UnknownOutputs(dict[int, Any]):
    """Every action's outputs and results, as empty as they can be (known only at run time)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: int) -> Any:
        return _AnyOutput()


class _AnyOutput(dict[str, Any]):
    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Any:
        return ""


_REF_IN_TEXT = re.compile(REF_IN_TEXT)
#: A python tool's keyword the controller fills with the step's key: no param may take it.
RESERVED_PYTHON_PARAM = "idempotency_key"


def _check_static_params(model: PlanDocument, tools: dict[str, ToolSpec]) -> Iterator[Problem]:
    """E_PARAMS_INVALID wherever a tool is called (round 63: a fallback step's params went
    unchecked): one check for every call, :func:`tool_calls`."""
    for base, tool, params in tool_calls(model):
        spec = tools.get(tool)
        if spec is not None and spec.kind == "python" and RESERVED_PYTHON_PARAM in params:
            yield Problem(
                "E_PARAMS_INVALID",
                f"{RESERVED_PYTHON_PARAM} is the controller's: a python tool receives the step's "
                "idempotency key under that name; rename the param",
                refs.format_path((*base, "params", RESERVED_PYTHON_PARAM)),
            )
        if spec is None or spec.params_schema is None:
            continue
        for where, message, own, theirs in static_params_errors(params, spec.params_schema):
            yield Problem(
                "E_PARAMS_INVALID",
                f"{message} (params_schema of tool {tool!r})",
                refs.format_path((*base, "params", *where)),
                quotes_catalog=True,  # the schema's pattern, enum, const (round 49)
                own_quotes=own,
                catalog_quotes=theirs,
            )


def tool_calls(model: PlanDocument) -> Iterator[tuple[tuple[str | int, ...], str, dict[str, Any]]]:
    """(location, tool, params) of every tool call: the plan's preconditions, each action,
    its checks, its fallback steps and theirs (the ``--config`` schema's callers alike,
    :data:`controller.plan.catalog._CALLERS`)."""
    for p_index, pre in enumerate(model.preconditions):
        yield ("preconditions", p_index), pre.tool, pre.params
    for index, action in enumerate(model.actions):
        steps: list[tuple[tuple[str | int, ...], Action | FallbackStep]] = [
            (("actions", index), action),
            *((("actions", index, "fallback", f), s) for f, s in enumerate(action.fallback)),
        ]
        for base, step in steps:
            if step.tool is not None:
                yield base, step.tool, step.params
            for p_index, pre in enumerate(step.preconditions):
                yield (*base, "preconditions", p_index), pre.tool, pre.params
            if step.verify is not None and step.verify.tool is not None:
                yield (*base, "verify"), step.verify.tool, step.verify.params


def static_params_errors(
    params: dict[str, Any], schema: dict[str, Any]
) -> Iterable[tuple[tuple[Any, ...], str, tuple[str, ...], tuple[str, ...]]]:
    """Schema errors that no reference can fix: the rule of the ``--config`` schema
    (:func:`controller.plan.shape.with_references`), a string holding ``$<...>`` standing for
    any value (checked again once resolved), every other string as the tool gets it
    (round 63: ``$$<`` is the text ``$<``, which passed an integer param as a reference).
    Each with the plan's own text its message quotes (:func:`_quoted_values`) and the
    catalog's (:func:`_catalog_values`)."""
    yield from _schema_errors(_as_read(params), with_references(schema, _READ_AS_REFERENCE))


class _Reference(str):
    """A params string holding a reference, as validate reads it: any value once resolved."""


#: validate's reference in :func:`with_references`: a keyword only a :class:`_Reference` meets
_REFERENCE_KEYWORD = "x-plangate-reference"
_READ_AS_REFERENCE: dict[str, Any] = {_REFERENCE_KEYWORD: True}


def _as_read(value: Any) -> Any:
    """``value`` with each string holding a reference a :class:`_Reference`, and each other
    string as the tool gets it (resolved: ``$$<`` is ``$<``)."""
    if isinstance(value, str):
        if _REF_IN_TEXT.search(value):
            return _Reference(value)
        return "".join(str(part) for part in refs.parse(value)) if "$" in value else value
    if isinstance(value, dict):
        return {key: _as_read(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_read(item) for item in value]
    return value


def _reference(validator: Any, wanted: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not isinstance(instance, _Reference):
        yield ValidationError("not a reference")


def _unwrapped(errors: Iterable[Any]) -> Iterator[Any]:
    """The errors as the catalog's own schema words them: where a value is no reference, the
    reasons it fails the wrapped subschema, not "not valid under any of the given schemas"."""
    for error in errors:
        if error.validator == "anyOf" and error.validator_value[0] == _READ_AS_REFERENCE:
            yield from _unwrapped(e for e in error.context if e.relative_schema_path[0] == 1)
        else:
            yield error


def params_errors(params: Any, schema: dict[str, Any]) -> Iterator[tuple[tuple[Any, ...], str]]:
    """(location, message) for each way ``params`` breaks ``schema``, within one time budget
    (:mod:`controller.plan.budget`): past it the params fail (round 20: a catalog pattern
    that backtracks on a tool's output, 2,000 objects checked for uniqueness pair by pair)."""
    for where, message, _own, _theirs in _schema_errors(params, schema):
        yield where, message


def _quoted_values(instance: Any) -> tuple[str, ...]:
    """How a jsonschema message quotes the failing value: its ``repr`` and, for a mapping,
    each key's (``'x' was unexpected``)."""
    keys = [repr(k) for k in instance] if isinstance(instance, dict) else []
    return (repr(instance), *keys)


def _catalog_values(wanted: Any) -> tuple[str, ...]:
    """How a jsonschema message quotes the schema's failing keyword (``enum``, ``const``,
    ``pattern``, ``not``'s subschema): its ``repr`` and, for a list, each item's (``'x' is a
    required property``); never a bare ``True`` or ``None``, which fixed words may spell."""
    if wanted is None or isinstance(wanted, bool):
        return ()
    items = (
        [repr(item) for item in wanted if isinstance(item, str)] if isinstance(wanted, list) else []
    )
    return (repr(wanted), *items)


def _schema_errors(
    params: Any, schema: dict[str, Any]
) -> Iterator[tuple[tuple[Any, ...], str, tuple[str, ...], tuple[str, ...]]]:
    from referencing.exceptions import Unresolvable

    validator = _bounded_validator()(schema, registry=schemarefs.NO_RETRIEVAL)
    try:
        with budget.spending():
            found = _unwrapped(validator.iter_errors(params))
            errors = sorted(found, key=lambda e: list(map(str, e.absolute_path)))
    except Unresolvable as unresolved:  # this plan's problem, never the pass's (round 65)
        yield (), _unresolvable(unresolved), (), ()
        return
    except RecursionError:  # the config refuses endless $refs (round 114): a schema built otherwise
        yield (
            (),
            "the params could not be checked: params_schema refers to itself without end",
            (),
            (),
        )
        return
    except budget.OverBudget:
        yield (
            (),
            (
                f"the params could not be checked against params_schema within {budget.BUDGET:g} s "
                "(a pattern that backtracks, or too many items)"
            ),
            (),
            (),
        )
        return
    for error in errors:
        own, theirs = _quoted_values(error.instance), _catalog_values(error.validator_value)
        yield tuple(error.absolute_path), error.message, own, theirs


def _unresolvable(unresolved: Exception) -> str:
    """What an unresolvable reference in a catalog schema (the config refuses those when
    read: a schema built otherwise) tells the plan's author."""
    ref = getattr(unresolved, "ref", None) or str(unresolved)
    return (
        f"the params could not be checked: params_schema's $ref {ref!r} does not resolve "
        "inside the tool's schema (nothing is fetched); the controller's catalog must be fixed"
    )


@functools.cache
def _bounded_validator() -> Any:
    """Draft 2020-12 with ``pattern`` matched as ECMA-262 (:func:`regexes.ecma`, round 55:
    Python's ``$`` let ``"web\\n"`` through) by the ``regex`` engine under the budget,
    ``uniqueItems`` checked by hashing (jsonschema compares every pair), ``enum`` and
    ``const`` by :func:`controller.plan.jsonvalues.equal` (round 55: one JSON equality)."""
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import ValidationError

    def pattern(validator: Any, wanted: str, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "string"):
            return
        if not _ecma_search(wanted, instance):
            yield ValidationError(f"{instance!r} does not match {wanted!r}")

    def unique_items(validator: Any, unique: bool, instance: Any, schema: Any) -> Iterator[Any]:
        if not unique or not validator.is_type(instance, "array"):
            return
        seen: set[str] = set()
        for item in instance:
            key = jsonvalues.key(item)
            if key in seen:
                yield ValidationError(f"{instance!r} has non-unique elements")
                return
            seen.add(key)
            budget.left()

    def pattern_properties(validator: Any, wanted: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for regex_text, subschema in wanted.items():
            for key, value in instance.items():
                if _ecma_search(regex_text, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=regex_text)

    def additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        known = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        extras = [
            k for k in instance if k not in known and not any(_ecma_search(p, k) for p in patterns)
        ]
        if validator.is_type(extra, "object"):
            for key in extras:
                yield from validator.descend(instance[key], extra, path=key)
        elif not extra and extras:
            yield ValidationError(f"additional properties are not allowed: {sorted(extras)!r}")

    def enum(validator: Any, allowed: list[Any], instance: Any, schema: Any) -> Iterator[Any]:
        if not any(jsonvalues.equal(instance, option) for option in allowed):
            yield ValidationError(f"{instance!r} is not one of {allowed!r}")

    def const(validator: Any, wanted: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not jsonvalues.equal(instance, wanted):
            yield ValidationError(f"{wanted!r} was expected")

    # every keyword that runs a pattern: ECMA-262 under the budget, never Python's re; enum,
    # const and uniqueItems by the product's one JSON equality (jsonvalues)
    keywords: dict[str, Any] = {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
        "uniqueItems": unique_items,
        "enum": enum,
        "const": const,
        _REFERENCE_KEYWORD: _reference,
    }
    return validators.extend(Draft202012Validator, keywords)


def _ecma_search(pattern: str, text: str) -> bool:
    """Whether ECMA-262 ``pattern`` finds a match in ``text`` within the budget; a pattern
    plangate cannot run as ECMA-262 matches nothing (the catalog refuses it when read)."""
    import regex

    try:
        compiled = regexes.ecma(pattern)
        return compiled.search(regexes.code_units(text), timeout=budget.left()) is not None
    except TimeoutError:
        budget.left()
        raise budget.OverBudget from None
    except (regex.error, regexes.NotECMA):
        return False


# --- freezing ---------------------------------------------------------------------------


def now_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class FreezeOutcome:
    plan: LoadedPlan
    text: str
    changed: bool
    hash: str | None


#: The blocks only the controller writes that a freeze keeps as it recorded them (SPEC §2,
#: §7; :data:`controller.git.ownrecord.OWNED`).
OWNED_BLOCKS = ("execution", "approval")


def freeze_text(
    plan: LoadedPlan,
    at: str | None = None,
    facts: dict[str, Any] | None = None,
    owned: dict[str, Any] | None = None,
) -> FreezeOutcome:
    """The plan's text with legacy refs converted and ``frozen`` set; problems -> unchanged.

    ``facts`` (risk, estimate, policy: see controller.approval.policy.frozen_facts) are
    written into ``frozen:`` after the hash and time; they are not hashed. ``owned``: the
    ``execution:``/``approval:`` blocks as the controller recorded them (None: absent); a
    version of them in the file that the controller did not write is replaced, so the freeze
    never carries an author's forged record (round 61).
    """
    if not plan.valid or plan.doc is None:
        return FreezeOutcome(plan, plan.text, False, None)
    text = _convert_legacy_text(plan.doc)
    doc = yamlio.read_yaml(text, str(plan.path)) if text != plan.text else plan.doc
    new_hash = hashing.plan_hash(doc.data)
    restored = _restored_owned(doc.data, owned)
    if (
        plan.frozen_hash == new_hash
        and text == plan.text
        and "validation" not in doc.data
        and not restored
    ):
        return FreezeOutcome(plan, plan.text, False, new_hash)
    if plan.status not in FREEZABLE and plan.frozen_hash != new_hash:
        plan.problems.append(
            Problem(
                "E_PLAN_HASH_MISMATCH",
                f"the plan is {plan.status}; only draft or pending_approval plans can be frozen "
                "again (set status: pending_approval to resubmit)",
                "plan.status",
            )
        )
        return FreezeOutcome(plan, plan.text, False, None)
    frozen_at = at or now_utc()
    if plan.frozen_hash == new_hash:
        frozen_at = str(plan.block("frozen").get("at", frozen_at))
    blocks: dict[str, Any] = {"frozen": {"hash": new_hash, "at": frozen_at, **(facts or {})}}
    if "validation" in doc.data:
        blocks["validation"] = None
    text = yamlio.edit(doc, {**blocks, **restored})
    _assert_hash(text, new_hash, plan.path)  # the one parse of the new text: kept for its commit
    return FreezeOutcome(plan, text, True, new_hash)


def _restored_owned(data: Any, owned: dict[str, Any] | None) -> dict[str, Any]:
    """The owned blocks the file holds otherwise than the controller recorded them, as
    recorded (None: removed); empty without a record to compare with."""
    if owned is None or not isinstance(data, dict):
        return {}
    return {key: owned.get(key) for key in OWNED_BLOCKS if data.get(key) != owned.get(key)}


def invalid_text(
    plan: LoadedPlan,
    max_bytes: int | None = None,
    *,
    redact: Callable[[str], str],
    checked: bool = True,
) -> str:
    """The plan's text with ``status: invalid`` and ``validation.errors`` (code, message,
    path, line); raises :class:`YamlParseError` when the file cannot carry them. With
    ``max_bytes``, a file that would pass it with every error keeps only the first, or only
    the status (round 19: a plan just under the limit, refused for the room it left the
    controller, must not be pushed over it by its refusal). Each problem as an answer to
    the plan's author (:meth:`Problem.answered`): the catalog's parts of a message through
    ``redact``, the redactor of the controller's records (round 49: a problem quoting a
    catalog ``params_schema`` holding a secret's value was committed raw), before the cut,
    so no secret's start is left at it (round 63); the plan's own text as written, as the
    author's commit already holds it (round 62: masked, the block confirmed a guess of a
    secret with one commit and ``git show``). ``checked=False``: the edit is not read back
    (:func:`status_blocker`'s splice-only question; a text to write is always read back)."""
    doc = plan.doc
    if doc is None:
        raise YamlParseError("the file cannot be read as YAML")
    errors = [
        {
            "code": p.code,
            "message": _recorded(p, redact),
            "path": _shortened(p.path),
            "line": p.line,
        }
        for p in plan.problems[:MAX_RECORDED_ERRORS]
    ]
    if len(plan.problems) > MAX_RECORDED_ERRORS:  # the block stays small (round 19)
        more = len(plan.problems) - MAX_RECORDED_ERRORS
        errors.append(
            {
                "code": "E_SCHEMA_INVALID",
                "message": f"and {more} more problems: run plangate validate for all of them",
                "path": "",
                "line": None,
            }
        )

    def edit(block: dict[str, Any] | None) -> str:
        return yamlio.edit(doc, {"validation": block}, {STATUS: "invalid"}, checked=checked)

    text = edit({"errors": errors})
    if max_bytes is not None and len(text.encode("utf-8")) > max_bytes:
        text = edit({"errors": errors[:1]})
        if len(text.encode("utf-8")) > max_bytes:
            text = edit(None)
    return text


#: The ``validation:`` block lists at most this many problems (round 19: 12,000 unknown keys
#: made a 121 KB plan a 3.4 MB file), each message and path at most MAX_RECORDED_CHARS long.
MAX_RECORDED_ERRORS = 20
MAX_RECORDED_CHARS = 500


def _recorded(problem: Problem, redact: Callable[[str], str]) -> str:
    """Answered whole, then shortened: the catalog's secrets are masked whole before the
    cut, and the author's text is quoted as written, its ``…`` no secret's start (round 63:
    cut first, the redactor read a secret's start in the author's text at the cut)."""
    return _shortened(problem.answered(redact).message)


def _shortened(text: str) -> str:
    return text if len(text) <= MAX_RECORDED_CHARS else text[:MAX_RECORDED_CHARS] + "…"


def status_blocker(plan: LoadedPlan, *, checked: bool = True) -> Problem | None:
    """Why the controller cannot write a status into this file (None: it can).

    Unreadable files (not UTF-8, over the size limit, not YAML) and files whose top level is
    not a block mapping with a ``plan:`` mapping cannot say ``status: invalid``; the
    controller reports them in its log, ``status`` and metrics instead. ``checked=False``:
    only whether the edit can be made, its text not read back; for a writer that then reads
    back the text it writes and reports its refusal with :func:`unwritable` (the freeze:
    one parse of a plan's edits, not two, issue 17).
    """
    try:
        invalid_text(plan, redact=str, checked=checked)  # whether it can: nothing is written
    except PlangateError as exc:
        return unwritable(plan, exc)
    return None


def unwritable(plan: LoadedPlan, exc: PlangateError) -> Problem:
    """The problem reported for a file the controller cannot write into: the plan's first
    problem (what its author must fix first), else why the edit failed."""
    first = plan.problems[0] if plan.problems else None
    return first or Problem(exc.code, f"the controller cannot write a status here: {exc.message}")


def frozen_form_hash(plan: LoadedPlan) -> str | None:
    """The hash the plan has once frozen: its legacy ``${...}`` references converted by the
    freeze's own rule (:func:`convert_legacy_params`), so a freeze that only converted them
    changes nothing (round 59: ``plangate audit`` flagged the controller's own freeze)."""
    if plan.hash is None or not isinstance(plan.data, dict):
        return None
    return frozen_form(plan.data)


def frozen_form(data: dict[str, Any]) -> str:
    """The hash of the plan document ``data`` once frozen (its legacy ``${...}`` references
    converted by :func:`convert_legacy_params`): the version as it runs, whichever way its
    references are spelled (:func:`frozen_form_hash`; the history's facts of a version)."""
    return hashing.plan_hash(convert_legacy_params(data))


def _convert_legacy_text(doc: yamlio.YamlDoc) -> str:
    """Rewrite legacy ``${...}`` references inside params scalars, leaving all else as is."""
    spans = []
    data = doc.data
    for index, action in enumerate(data.get("actions") or []):
        if not isinstance(action, dict):
            continue
        for where, value in refs.walk_strings(action.get("params"), ("actions", index, "params")):
            if "${" in value and refs.convert_legacy(value) != value:
                span = doc.spans.get(where)
                if span is not None:
                    spans.append((span.index + doc.bom, span.end_index + doc.bom))
    text = doc.text
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + refs.convert_legacy(text[start:end]) + text[end:]
    return text


def _assert_hash(text: str, expected: str, path: Path) -> None:
    written = yamlio.read_yaml(text, str(path)).data
    if hashing.plan_hash(written) != expected:
        raise PlangateError(
            f"{path}: internal error: the rewritten file does not hash to {expected}; "
            "nothing was written",
            remedy="report this as a bug with the plan attached",
        )
