"""``plangate convert SRC... [--from FORMAT] [-o DIR] [--force] [--json]``.

Turns plans written in other formats into PLAN.yml (docs/formats.md). Without ``-o`` the
PLAN.yml text goes to stdout (one source); with ``-o DIR`` each source becomes
``DIR/<slug>/PLAN.yml``, nested plans below it. Nothing is written unless every source of
the run converted, and an existing PLAN.yml is replaced only with ``--force``. The result
is validated (against the catalog when a config is found) and its problems reported:
exit 1 when a converted plan is not valid yet.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from controller.commands._shared import (
    as_git_checks_out,
    as_git_stores,
    controller_text,
    derived,
    optional_config,
    print_problems,
    printed,
)
from controller.display import visible
from controller.errors import UsageError

if TYPE_CHECKING:
    from controller.plan.convert import Conversion
    from controller.plan.plans import LoadedPlan
    from controller.settings import Config


@dataclass
class _Target:
    source: str
    folder: Path | None
    conversion: Conversion
    plan: LoadedPlan


def convert(
    sources: list[str],
    fmt: str | None = None,
    out_dir: str | None = None,
    force: bool = False,
    as_json: bool = False,
    config_path: str | None = None,
) -> int:
    from controller.plan.convert import check_reads_back, convert_text
    from controller.plan.plans import validate_text

    config = optional_config(config_path)
    if out_dir is None and len(sources) != 1:
        raise UsageError("several sources need -o DIR", remedy="pass -o DIR (e.g. -o plans)")
    if out_dir:
        _refuse_nested(Path(out_dir), config)
    root = _repo_root(Path(out_dir)) if out_dir else None
    targets = []
    for source in sources:
        folder = derived(Path(out_dir) / _slug(source)) if out_dir else None
        base = _relative(folder, root) if folder is not None and root is not None else None
        conversion = convert_text(_read(source, config), source, fmt, base, verify=False)
        if conversion.children and folder is None:
            raise UsageError(f"{source}: holds nested plans", remedy="pass -o DIR to write them")
        path = folder / "PLAN.yml" if folder else Path("PLAN.yml")
        plan = validate_text(conversion.text, path, config)  # one parse: check and validate
        check_reads_back(plan.data if plan.doc is not None else None, conversion.data, source)
        targets.append(_Target(source, folder, conversion, plan))
    if out_dir:
        _write_all(targets, root or Path.cwd(), force)
    return _report(targets, as_json)


def _read(source: str, config: Config | None) -> str:
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    if not path.is_file():  # what is there, when something is (round 113: a FIFO, a loop)
        from controller.commands._shared import _kind_of

        kind = _kind_of(path)
        what = f"{kind}, not a regular file" if kind else "no such file"
        raise UsageError(f"{visible(source)}: {what}", remedy="give a plan file to convert")
    _refuse_held(path)
    _refuse_nested(path, config)
    if path.stat().st_size > 16 * 1024 * 1024:
        raise UsageError(f"{source}: over 16 MiB", remedy="split the plan")
    try:  # as git would store it, where an attribute may convert it (round 80)
        stored = as_git_stores(path, None)
        return (stored if stored is not None else path.read_bytes()).decode("utf-8")
    except UnicodeDecodeError as exc:  # the daemon's answer for the same file (round 117)
        from controller.errors import YamlParseError

        raise YamlParseError(
            f"{visible(source)}: not UTF-8 text (byte {exc.start})",
            remedy="save it as UTF-8",
        ) from None


def _refuse_held(path: Path) -> None:
    """A plan source its folder holds (:func:`controller.plan.plans.held_problem`: a folder
    held for its name, a claim or a twin beside it; :data:`controller.plan.names.HELD_CODES`)
    is refused as the daemon never converts it (round 75: ``convert "plans/c-sp /PLAN.json"``
    printed the PLAN.yml). A source the daemon would only not convert under its name (a
    lone ``plan.json``, ``plan.md``: "named exactly PLAN.json") is the agent's own file to
    convert: converted, with that said on stderr."""
    from controller.errors import error_for
    from controller.plan.names import HELD_CODES
    from controller.plan.plans import held_problem

    held = held_problem(path)
    if held is None:
        return
    if held.code in HELD_CODES:
        raise error_for(held.code, f"{path}: {held.message}", quotes=(str(path),))
    print(
        f"plangate: note: {visible(str(path))}: converted here, but in a plan folder the "
        f"controller would not: {held.message}",
        file=sys.stderr,
    )


def _refuse_nested(path: Path, config: Config | None) -> None:
    """A source in, or an output folder below, a repository nested in the plans folder (a
    submodule, a worktree, a nested clone) is refused as every reader refuses a plan there
    (round 90: ``convert`` read a source in a nested worktree and ``-o`` wrote into one)."""
    from controller.errors import error_for
    from controller.plan.plans import nested_at

    plans_dir = config.plans_dir if config is not None else "plans"
    found = nested_at(path, plans_dir, config.repo if config is not None else None)
    if found is not None:
        raise error_for(found.code, f"{path}: {found.message}", quotes=(str(path),))


def _slug(source: str) -> str:
    """``runs/seo.json`` -> ``seo``; ``plans/seo/PLAN.json`` -> ``seo`` (its folder)."""
    path = Path("stdin" if source == "-" else source)
    stem = path.stem if path.stem.lower() != "plan" else path.resolve().parent.name
    slug = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")
    return slug or "plan"


def _repo_root(folder: Path) -> Path:
    """The git work tree holding ``folder`` (nested plans are pinned by repo path), or cwd."""
    start = folder.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return Path.cwd().resolve()


def _relative(folder: Path, root: Path) -> str:
    try:
        return folder.resolve().relative_to(root).as_posix()
    except ValueError:
        raise UsageError(f"{folder} is outside {root}", remedy="pick -o inside the repo") from None


def _write_all(targets: list[_Target], root: Path, force: bool) -> None:
    from controller.errors import UnsafePath
    from controller.fsutil import write_atomic

    files: dict[Path, str] = {}
    for target in targets:
        conversion = target.conversion
        assert target.folder is not None
        for child, text in conversion.children:
            files[root / child / "PLAN.yml"] = text
        main = target.folder / "PLAN.yml"
        if main in files:
            raise UsageError(f"two sources convert to {main}", remedy="rename one of them")
        files[main] = conversion.text
    for path in files:  # never through a link left in the output folder (SPEC §15)
        for folder in (path, *path.parents):
            if folder == root or folder == Path(folder.anchor):
                break
            if folder.is_symlink():
                raise UnsafePath(
                    f"{folder} is a symlink; plangate convert never writes through one",
                    remedy="remove the link or choose another output folder",
                )
    existing = [str(p) for p in files if p.exists()]
    if existing and not force:
        raise UsageError(
            f"{', '.join(existing)} already exist(s)", remedy="pass --force to replace"
        )
    written = {path: as_git_checks_out(path, text.encode("utf-8")) for path, text in files.items()}
    for path, data in written.items():  # each as git would check it out, all or none refused
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)


def _report(targets: list[_Target], as_json: bool) -> int:
    exit_code = 0
    for target in targets:
        conversion, plan = target.conversion, target.plan
        path = plan.path
        exit_code = exit_code or (0 if plan.valid else 1)
        fmt = conversion.format
        if as_json:
            print(
                printed(
                    json.dumps(
                        {
                            "ok": True,
                            "source": target.source,
                            "format": fmt,
                            "path": str(path) if target.folder else None,
                            "valid": plan.valid,
                            "errors": [
                                p.answered(controller_text).to_json() for p in plan.problems
                            ],
                        }
                    )
                )
            )
            continue
        if target.folder is None:
            sys.stdout.write(conversion.text)
        else:
            print(f"{visible(target.source)} ({fmt}) -> {visible(str(path))}")
        if not plan.valid:
            print_problems(path, plan.problems)
            print(
                f"{visible(str(path))}: converted, but not valid yet: {len(plan.problems)} "
                "problem(s)",
                file=sys.stderr,
            )
    return exit_code
