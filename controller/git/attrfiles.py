"""Where git may read a path's attributes from, and its config, found without running git.

A path none of these files can reach is converted by git's config alone (``core.autocrlf``),
which leaves a blob's own bytes as they are: its readers then ask git nothing (the usual
repository's pass, and ``plangate validate``, which must not even import GitPython for it).
Over-inclusive by design: a "maybe" only leads to a ``git check-attr``.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from controller.errors import PlangateError
from controller.fsutil import read_regular

#: Where git reads the system's attributes (``$(prefix)/etc/gitattributes``), by prefix.
SYSTEM_ATTRIBUTES = (
    "/etc/gitattributes",
    "/usr/etc/gitattributes",
    "/usr/local/etc/gitattributes",
)


#: Config git takes from the environment (``git -c`` passes it on so), where a
#: ``core.attributesFile`` may be set without any file.
_ENV_CONFIG = ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")


#: git's largest ``int`` (``git_config_int`` refuses a value past it)
_INT_MAX = 2**31 - 1
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
#: a number as ``strtoimax(value, &end, 0)`` reads it (leading blanks, a sign, a base), then
#: the rest, which git allows only as a unit (``git_parse_signed``)
_NUMBER = re.compile(r"[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)(.*)", re.S)


def env_bool(name: str) -> bool:
    """The environment variable ``name`` as git reads a boolean one (``git_env_bool``, its
    ``git_config_bool``): unset, empty, ``false``, ``no``, ``off`` (any case) and a zero
    number are false; ``true``, ``yes``, ``on`` and any other number git reads (``2``,
    `` 1``, ``0x10``, ``1k``) true. A value git refuses (``1 ``, ``maybe``, a number past its
    ``int``) makes every git command die, so it is refused here too (:class:`GitError`
    naming it), never read one way or the other (rounds 83-84: ``GIT_CONFIG_NOSYSTEM=0`` had
    been read as set, and ``1 `` printed a hash no controller could freeze)."""
    value = os.environ.get(name)
    if value is None or value.lower() in ("", "false", "no", "off"):
        return False
    if value.lower() in ("true", "yes", "on"):
        return True
    found = _NUMBER.fullmatch(value)
    unit = found.group(3).lower() if found else None
    if found is None or unit not in _UNITS:
        raise _bad_bool(name, value)
    digits = found.group(2)  # strtoimax's base 0: 0x hex, a leading 0 octal, else decimal
    base = 16 if digits[:2].lower() == "0x" else 8 if digits.startswith("0") else 10
    number = int(digits, base) * _UNITS[unit]
    if number > _INT_MAX:  # either sign: git bounds by its largest int (git_parse_signed)
        raise _bad_bool(name, value)
    return number != 0


def _bad_bool(name: str, value: str) -> PlangateError:
    from controller.errors import GitError

    return GitError(
        f"{name}={value!r} is no boolean git reads: git refuses every command with it "
        "(fatal: bad boolean config value)",
        remedy=f"set {name} to 1 or 0 (true or false), or unset it",
    )


def check_git_env() -> None:
    """Refuse, before git or GitPython is asked anything, a boolean variable git would die
    on (:func:`env_bool`): GitPython's import runs ``git version`` and fails with no code."""
    for name in ("GIT_CONFIG_NOSYSTEM", "GIT_ATTR_NOSYSTEM"):
        env_bool(name)


@dataclass(frozen=True)
class Checkout:
    """A working tree's top folder, its git directory and the common one (a linked worktree's
    ``commondir``)."""

    top: Path
    git_dir: Path
    common_dir: Path


def checkout_of(path: Path) -> Checkout | None:
    """The git working tree holding ``path`` (its nearest folder with a ``.git``), as git
    finds it; None outside one (or a ``.git`` file that names no folder)."""
    try:
        here = path.resolve().parent
    except (OSError, RuntimeError):  # a link loop (RuntimeError before Python 3.13): the
        return None  # reader of the file says what is there (round 113)
    for folder in (here, *here.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return Checkout(folder, dot, _common(dot))
        if dot.is_file():
            try:
                line = dot.read_text("utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not line.startswith("gitdir:"):
                return None
            git_dir = (folder / line.removeprefix("gitdir:").strip()).resolve()
            return Checkout(folder, git_dir, _common(git_dir)) if git_dir.is_dir() else None
    return None


def _common(git_dir: Path) -> Path:
    try:
        named = (git_dir / "commondir").read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return git_dir
    return (git_dir / named).resolve()


def files_may_apply(top: Path, git_dir: Path, common_dir: Path, path: str) -> bool:
    """Does a file git reads attributes from exist for ``path`` (a ``.gitattributes`` in its
    folder or one above it in the working tree, ``info/attributes``, the global or system
    file)? Not asked here: a ``.gitattributes`` only the index holds, ``core.attributesFile``.
    Each place is looked at again on every call (only the names are remembered, worked out
    from the same strings and environment: round 93, issue 17)."""
    if any(map(os.path.lexists, _folder_places(os.fspath(top), path))):
        return True
    places = _other_places(os.fspath(git_dir), os.fspath(common_dir), *_places_env())
    return any(map(os.path.lexists, places))


def _places_env() -> tuple[str | None, str | None, bool]:
    """What the names of the global and system attribute files depend on in the
    environment (read on every call: a change applies at once)."""
    env = os.environ
    return env.get("XDG_CONFIG_HOME"), env.get("HOME"), env_bool("GIT_ATTR_NOSYSTEM")


@functools.lru_cache(maxsize=4096)
def _folder_places(top: str, path: str) -> tuple[str, ...]:
    """The ``.gitattributes`` of ``path``'s folder and of each above it, under ``top``."""
    return tuple(
        os.fspath(Path(top) / folder / ".gitattributes") for folder in PurePosixPath(path).parents
    )


@functools.lru_cache(maxsize=64)
def _other_places(
    git_dir: str, common_dir: str, xdg: str | None, home: str | None, nosystem: bool
) -> tuple[str, ...]:
    """``info/attributes``, the global and the system files (``home``: only a key, as
    :func:`os.path.expanduser` reads ``$HOME``)."""
    places = [Path(git_dir) / "info" / "attributes", Path(common_dir) / "info" / "attributes"]
    places.append(Path(xdg or os.path.expanduser("~/.config")) / "git" / "attributes")
    if not nosystem:
        places += [Path(name) for name in SYSTEM_ATTRIBUTES]
    return tuple(dict.fromkeys(map(os.fspath, places)))  # one look at a place named twice


def index_bytes(index: Path) -> bytes | None:
    """The index file's bytes (None: none yet); never through a link put in its place."""
    try:
        return read_regular(index, None)  # git's own file: any size
    except FileNotFoundError:
        return None


def index_may_name_attributes(data: bytes | None, git_dir: Path) -> bool:
    """Could the index file holding ``data`` (in ``git_dir``) name a ``.gitattributes``
    (git reads a tracked one the working tree lacks)? Versions 2 and 3 hold each path
    whole, so their bytes hold the name. Other layouts are a "maybe" (round 116): version
    4 stores a path as what it does not share with the one before it (``gitattributes``
    after ``plans/a/.foo``), and a split index keeps its entries in a
    ``sharedindex.<sha>`` beside it."""
    if not data:
        return False
    if b".gitattributes" in data or data[4:8] not in (b"\0\0\0\x02", b"\0\0\0\x03"):
        return True
    try:
        return any(name.startswith("sharedindex.") for name in os.listdir(git_dir))
    except OSError:
        return True


def config_files(git_dir: Path) -> list[Path]:
    """The config files git reads, as its ``config.c`` finds them: the system file (unless
    ``GIT_CONFIG_NOSYSTEM`` is true as git reads it: :func:`env_bool`), the global ones
    (``GIT_CONFIG_GLOBAL``, else ``$XDG_CONFIG_HOME/git/config`` and ``~/.gitconfig``), the
    repository's and its worktree's. A file one of them includes is not followed: editing it
    applies after a restart, or after any of these is touched."""
    env = os.environ
    files: list[Path] = []
    if not env_bool("GIT_CONFIG_NOSYSTEM"):
        files.append(Path(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    if "GIT_CONFIG_GLOBAL" in env:
        files.append(Path(env["GIT_CONFIG_GLOBAL"]))
    else:
        home = Path(env.get("HOME") or "~").expanduser()
        xdg = env.get("XDG_CONFIG_HOME") or str(home / ".config")
        files += [Path(xdg) / "git" / "config", home / ".gitconfig"]
    return [*files, git_dir / "config", git_dir / "config.worktree"]


def config_names(git_dir: Path, common_dir: Path) -> tuple[str, ...]:
    """:func:`config_files` and the common ``config``, as strings, told apart by the same
    environment (read on every call) and remembered (round 93, issue 17: asked for each
    path's attributes; the files themselves are looked at by the caller each time)."""
    env = os.environ
    key = (
        env_bool("GIT_CONFIG_NOSYSTEM"),
        env.get("GIT_CONFIG_SYSTEM"),
        env.get("GIT_CONFIG_GLOBAL"),
        env.get("HOME"),
        env.get("XDG_CONFIG_HOME"),
    )
    return _config_names(os.fspath(git_dir), os.fspath(common_dir), key)


@functools.lru_cache(maxsize=64)
def _config_names(git_dir: str, common_dir: str, env: tuple[object, ...]) -> tuple[str, ...]:
    del env  # the key alone: config_files reads the environment itself
    files = [*config_files(Path(git_dir)), Path(common_dir) / "config"]
    return tuple(dict.fromkeys(map(os.fspath, files)))  # one look at a file named twice


def may_apply(checkout: Checkout, path: str) -> bool:
    """Could any attribute apply to ``path`` in ``checkout``, asked without git: the files of
    :func:`files_may_apply`, a ``.gitattributes`` the index names, config in the environment,
    or any config file that mentions ``attributesFile`` or includes another (read as bytes,
    over-inclusive)."""
    top, git_dir, common = checkout.top, checkout.git_dir, checkout.common_dir
    if files_may_apply(top, git_dir, common, path):
        return True
    if index_may_name_attributes(index_bytes(git_dir / "index"), git_dir):
        return True
    if any(name in os.environ for name in _ENV_CONFIG):  # `git -c`, GIT_CONFIG_COUNT
        return True
    for file in dict.fromkeys([*config_files(git_dir), common / "config"]):
        try:
            text = read_regular(file, None).lower()
        except OSError:
            continue
        except PlangateError:  # a link (a dotfiles checkout) or no regular file: ask git
            return True
        if b"attributesfile" in text or b"include" in text:
            return True
    return False
