"""Command-line entry point: argument parsing only.

Each subcommand maps its arguments to one function in :mod:`controller.commands`, imported
lazily so that ``plangate validate`` does not pay for GitPython or the HTTP stack. The single
error handler here turns a :class:`~controller.errors.PlangateError` into its message, remedy
and exit code (0 ok, 1 a plan is invalid/refused or an audit found a problem, 2 usage or
configuration error); no traceback reaches a user for bad input.
"""

from __future__ import annotations

import argparse
import errno
import gc
import importlib
import io
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from controller import GIT_LOCATION_ENV, __version__

if TYPE_CHECKING:
    from controller.errors import PlangateError

# subcommand -> ("module:function", how to turn parsed args into keyword arguments)
Handler = tuple[str, Callable[[argparse.Namespace], dict[str, Any]]]


def _common(args: argparse.Namespace) -> dict[str, Any]:
    return {"config_path": args.config}


HANDLERS: dict[str, Handler] = {
    "validate": (
        "controller.commands.validate:validate",
        lambda a: {**_common(a), "paths": a.paths, "as_json": a.json},
    ),
    "freeze": (
        "controller.commands.freeze:freeze",
        lambda a: {**_common(a), "paths": a.paths, "check": a.check},
    ),
    "hash": ("controller.commands.hash:hash_plan", lambda a: {**_common(a), "path": a.path}),
    "show": (
        "controller.commands.show:show",
        lambda a: {
            **_common(a),
            "path": a.path,
            "as_json": a.json,
            "fmt": a.format,
            "verbosity": "verbose" if a.verbose else "quiet" if a.quiet else "normal",
        },
    ),
    "convert": (
        "controller.commands.convert:convert",
        lambda a: {
            **_common(a),
            "sources": a.sources,
            "fmt": a.fmt,
            "out_dir": a.out,
            "force": a.force,
            "as_json": a.json,
        },
    ),
    "mcp": ("controller.commands.mcp:mcp", lambda a: {**_common(a)}),
    "schema": ("controller.commands.schema:schema", lambda a: {"config_path": a.config}),
    "tools": ("controller.commands.tools:tools", lambda a: {**_common(a), "as_json": a.json}),
    "init": ("controller.commands.init:init", lambda a: {"directory": a.directory}),
    "run": (
        "controller.commands.run:run",
        lambda a: {**_common(a), "once": a.once, "take_over": a.take_over},
    ),
    "status": (
        "controller.commands.status:status",
        lambda a: {**_common(a), "as_json": a.json},
    ),
    "approve": (
        "controller.commands.approve:approve",
        lambda a: {
            **_common(a),
            "path": a.path,
            "sign": a.sign,
            "note": a.message,
            "trailer": a.trailer,
            "force": a.force,
        },
    ),
    "reject": (
        "controller.commands.reject:reject",
        lambda a: {**_common(a), "path": a.path, "note": a.message, "force": a.force},
    ),
    "abort": (
        "controller.commands.abort:abort",
        lambda a: {**_common(a), "path": a.path, "note": a.message, "force": a.force},
    ),
    "audit": (
        "controller.commands.audit:audit",
        lambda a: {**_common(a), "as_json": a.json, "controller": a.controller},
    ),
    "check": (
        "controller.commands.check:check",
        lambda a: {
            **_common(a),
            "base": a.base,
            "head": a.head,
            "as_email": a.as_email,
            "fmt": a.format,
        },
    ),
}


class _Parser(argparse.ArgumentParser):
    """argparse, except that a usage error is ``E_USAGE`` with a remedy like every other
    error (after the usage line on a terminal run; the JSON error shape with ``--json``)."""

    json_output = False

    def error(self, message: str) -> NoReturn:
        from controller.errors import UsageError

        if not _Parser.json_output:
            self.print_usage(sys.stderr)
        where = "" if self.prog == "plangate" else f"{self.prog}: "  # printed after "plangate: "
        raise UsageError(f"{where}{message}", remedy=f"see `{self.prog} --help`")


def wants_json(argv: Sequence[str]) -> bool:
    """Whether the command line asks for JSON output (``--json`` or ``--format json``)."""
    args = list(argv)
    pairs = zip(args, [*args[1:], ""], strict=True)
    return "--json" in args or "--format=json" in args or ("--format", "json") in pairs


class _Unused:
    """Takes the arguments of a subcommand that is not running: building every subcommand's
    parser costs several milliseconds of each start (argparse formats each argument)."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        return None

    def add_mutually_exclusive_group(self, **kwargs: Any) -> _Unused:
        return self


def _build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command``, that subcommand's alone (the others are not needed to
    parse, and a help or usage text never lists a sibling's arguments)."""
    common = _Parser(add_help=False)
    common.add_argument(
        "--config",
        default=argparse.SUPPRESS,
        help="controller config (default: $PLANGATE_CONFIG, then ./plangate.yml)",
    )
    parser = _Parser(
        prog="plangate",
        description="GitOps controller for frozen plans: agents propose, humans approve "
        "through git, plangate executes exactly what was approved.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"plangate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def add(name: str, help_text: str) -> argparse.ArgumentParser | _Unused:
        if command is not None and name != command:
            return _Unused()
        return sub.add_parser(name, help=help_text, description=help_text, parents=[common])

    p = add("validate", "check plan files and report every problem with its code and line")
    p.add_argument("paths", nargs="+", metavar="PATH", help="PLAN.yml files or plan folders")
    p.add_argument("--json", action="store_true", help="one JSON object per file")

    p = add("freeze", "validate plans and write frozen: {hash, at} (round-trip)")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 unless frozen")

    p = add("hash", "print the plan hash (sha256 over RFC 8785 JSON of the hashed view)")
    p.add_argument("path", metavar="PATH")

    p = add("show", "a readable preview of a plan for its reviewer")
    p.add_argument("path", metavar="PATH")
    p.add_argument(
        "--format",
        choices=["text", "json", "toon", "markdown"],
        default="text",
        help="text (default), json, toon (decodes to the json output), markdown (PR comment)",
    )
    p.add_argument("--json", action="store_true", help="same as --format json")
    level = p.add_mutually_exclusive_group()
    level.add_argument("-v", "--verbose", action="store_true", help="full results and errors")
    level.add_argument("-q", "--quiet", action="store_true", help="one line per action")

    p = add(
        "convert",
        "turn plans in other formats (ActionPlan, TOON plan, Plan Contract, ...) into PLAN.yml",
    )
    p.add_argument("sources", nargs="+", metavar="SRC", help="plan files (- for stdin)")
    p.add_argument(
        "--from",
        dest="fmt",
        choices=["actionplan", "toon-plan", "plan-contract", "agent-plan", "pte"],
        help="the source format (default: detected)",
    )
    p.add_argument("-o", "--out", metavar="DIR", help="write DIR/<slug>/PLAN.yml per source")
    p.add_argument("--force", action="store_true", help="replace an existing PLAN.yml")
    p.add_argument("--json", action="store_true", help="one JSON object per source")

    add("mcp", "serve agents over MCP (stdio): catalog, validate, submit, status, log, wait")

    add("schema", "print the JSON Schema of PLAN.yml (for editors); --config: for its catalog")

    p = add("tools", "the controller's tool catalog: what a plan may call, with its params")
    p.add_argument("--json", action="store_true", help="the catalog as JSON")

    p = add("init", "create a new plans repository")
    p.add_argument("directory", metavar="DIR")

    p = add("run", "the controller: watch the repo, verify approvals, run approved plans")
    p.add_argument("--once", action="store_true", help="do all pending work, then exit")
    p.add_argument(
        "--take-over",
        action="store_true",
        help="a new state directory: adopt the controller commits another key sealed (its "
        "lost state's; only when no other controller runs on this branch)",
    )

    p = add("status", "every plan with its status, hash, approver and last event")
    p.add_argument("--json", action="store_true")

    p = add("approve", "approve a plan: commit status approved as the current git user")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--sign", action="store_true", help="sign the approval commit")
    p.add_argument(
        "--trailer",
        action="store_true",
        help="in a pull request: an empty signed commit with Plan-Approved: PLAN HASH "
        "(counts as your approval once the branch is merged)",
    )
    p.add_argument("-m", "--message", help="a note for the commit message")

    p = add("reject", "reject a pending plan: commit status rejected")
    p.add_argument("path", metavar="PATH")
    p.add_argument("-m", "--message", required=True, help="why (kept in the commit message)")

    p = add("abort", "ask the controller to stop a running or paused plan before its next action")
    p.add_argument("path", metavar="PATH")
    p.add_argument("-m", "--message", help="a note for the commit message")

    force_help = (
        "commit even when the config says the controller would refuse or ignore it "
        "(not an approver, your own plan)"
    )
    for name in ("approve", "reject", "abort"):
        if name not in sub.choices:
            continue  # another subcommand runs
        sub.choices[name].add_argument("--force", action="store_true", help=force_help)

    p = add("audit", "check every execution in git history against its approval")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--controller",
        metavar="EMAIL",
        help="without a config: the controller's git identity (needed when more than one "
        "identity recorded a policy naming itself the controller)",
    )

    p = add("check", "for CI: what merging a pull request would do with each plan it changes")
    p.add_argument("--base", help="the branch merged into (default: main, or origin/<branch>)")
    p.add_argument("--head", default="HEAD", help="the pull request's head (default: HEAD)")
    p.add_argument(
        "--as", dest="as_email", metavar="EMAIL",
        help="the person who would merge: an address or git's 'Name <address>'",
    )  # fmt: skip
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    as_json = _Parser.json_output = wants_json(argv)
    shared = sys.modules.get("controller.commands._shared")
    if shared is not None:  # a command before this one (tests) loaded a config
        shared.forget_config()
    try:
        known = argv[0] if argv and argv[0] in HANDLERS else None
        parser = _build_parser(known)
        args = parser.parse_args(argv)
        if not hasattr(args, "config"):
            args.config = None
        _texts_are_utf8(parser, args)
        _ask(args)
        target, to_kwargs = HANDLERS[args.command]
        module_name, function_name = target.split(":")
        function = getattr(importlib.import_module(module_name), function_name)
        if not _brief(args):
            gc.enable()  # held off by entry() while the modules imported
        return int(function(**to_kwargs(args)))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        # controller.errors is imported here, not at start-up: --help never needs it
        from controller.errors import PlangateError

        if isinstance(exc, PlangateError):
            return _refused(exc, as_json)
        if isinstance(exc, OSError):
            return _refused(_os_refusal(exc), as_json)
        if _out_of_room(exc):  # round 113: "internal error: can't start new thread"
            from controller.errors import StorageFailed

            return _refused(
                StorageFailed(
                    f"out of memory: {type(exc).__name__}: {exc}".rstrip(": "),
                    remedy="raise the process's memory limit (ulimit -v; systemd MemoryMax=, "
                    "LimitAS=) or its thread limit (ulimit -u; TasksMax=), then run the "
                    "command again",
                ),
                as_json,
            )
        if type(exc).__module__ == "sqlite3":  # the state directory's database (round 109)
            from controller.errors import StorageFailed

            remedy = "check the state directory's permissions and the disk"
            return _refused(StorageFailed(f"the state database: {exc}", remedy=remedy), as_json)
        # a bug: say so plainly, details on request
        if os.environ.get("PLANGATE_DEBUG"):
            raise
        from controller.display import visible_lines

        if as_json:
            shape = PlangateError(f"internal error: {type(exc).__name__}: {exc}").to_json()
            print(json.dumps({**shape, "remedy": "rerun with PLANGATE_DEBUG=1 and report it"}))
        print(
            f"plangate: internal error: {type(exc).__name__}: {visible_lines(str(exc))}\n"
            "  remedy: rerun with PLANGATE_DEBUG=1 for the traceback and report it",
            file=sys.stderr,
        )
        return 2


def _out_of_room(exc: BaseException) -> bool:
    """Whether ``exc`` is the process running out of memory or threads, not a bug: a
    MemoryError, or the RuntimeError CPython raises when no thread can start (its stack
    cannot be mapped under an address-space limit)."""
    if isinstance(exc, MemoryError):
        return True
    return isinstance(exc, RuntimeError) and str(exc) == "can't start new thread"


#: The arguments that name files (``--config``, PATH, SRC, ``-o DIR``, ``init DIR``): a name
#: is the operating system's bytes, UTF-8 or not, and each command reads it by the rules of a
#: path (a plan path that is not UTF-8 is E_UNSAFE_PATH, "rename the folder"; a file that
#: does not exist E_USAGE). Every other argument is text plangate writes or compares (a
#: note, ``--as``, ``--base``...): it must be UTF-8 (:func:`_texts_are_utf8`).
PATH_ARGUMENTS = frozenset({"config", "path", "paths", "sources", "out", "directory"})


def _texts_are_utf8(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The one rule of the command line's text: an argument that is not a file's name and
    holds bytes that are not UTF-8 (Python reads them as lone surrogates) is E_USAGE naming
    the argument and the first such byte, whatever the command (round 122: a ``-m`` note of
    ``approve``/``reject`` ended ``internal error: UnicodeEncodeError`` when its commit
    message was written)."""
    from controller.errors import UsageError

    for dest, value in vars(args).items():
        if dest in PATH_ARGUMENTS:
            continue
        for text in value if isinstance(value, list) else [value]:
            if not isinstance(text, str):
                continue
            at = next((i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF), None)
            if at is None:
                continue
            byte = ord(text[at]) - 0xDC00 if 0xDC80 <= ord(text[at]) <= 0xDCFF else None
            what = f"byte 0x{byte:02x}" if byte is not None else f"U+{ord(text[at]):04X}"
            raise UsageError(
                f"{_argument_name(parser, args, dest)} is not UTF-8 text: {what} at "
                f"character {at + 1}; nothing was done",
                remedy="write it in UTF-8 (the terminal or script that sent it uses another "
                "encoding: convert it with `iconv -t UTF-8`, or set LANG=C.UTF-8)",
            )


def _argument_name(parser: argparse.ArgumentParser, args: argparse.Namespace, dest: str) -> str:
    """How the command line spells the argument ``dest``: ``-m/--message``, ``--as``, or its
    metavar."""
    parsers = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and args.command in action.choices:
            parsers.insert(0, action.choices[args.command])
    for each in parsers:
        for action in each._actions:
            if action.dest == dest:
                return "/".join(action.option_strings) or str(action.metavar or dest)
    return dest


def _ask(args: argparse.Namespace) -> None:
    """The paths the asker named (PATH, SRC, ``-o DIR``): its own text, quoted as written in
    every answer to it (``_shared.printed``, round 69)."""
    named = [*(getattr(args, "paths", None) or ()), *(getattr(args, "sources", None) or ())]
    named += [p for p in (getattr(args, "path", None), getattr(args, "out", None)) if p]
    if named:
        from controller.commands import _shared

        _shared.asked(str(p) for p in named)


#: ``validate`` of at most this many plans keeps the cyclic collector off to its exit.
BRIEF_PLANS = 16


def _brief(args: argparse.Namespace) -> bool:
    """Whether the command reads a few plans and exits: what it leaves in cycles is bounded
    (tens of objects a plan), and its own imports (pydantic's models) happen as it runs."""
    if args.command == "hash":
        return True
    return args.command == "validate" and len(args.paths) <= BRIEF_PLANS


def entry() -> int:
    """The process entry point (the ``plangate`` script, ``python -m controller``): :func:`main`,
    then a quick exit.

    The cyclic garbage collector is off while the command's modules import: what they
    allocate lives as long as the process, so each collection on the way walks it for
    nothing (about 10 ms of a ``plangate validate``). :func:`main` turns it back on before
    the command runs, except for a brief one (:func:`_brief`).

    Once the command is done, the interpreter's teardown would garbage-collect every object
    the imports created (pydantic's model schemas above all) only to free memory the exit
    frees anyway: about 20 ms of a ``plangate validate``. Freezing them first skips that walk.
    Files and atexit handlers are closed and run as before. Tests call :func:`main`.
    """
    gc.disable()
    unshown = _closed_streams()
    for name in GIT_LOCATION_ENV:  # the repository is the config's or the plan's, never
        os.environ.pop(name, None)  # the environment's (round 85: GIT_DIR, ...)
    for stream in (sys.stdout, sys.stderr):  # a name an ASCII terminal cannot show is
        if isinstance(stream, io.TextIOWrapper):  # escaped, never an error (round 109)
            stream.reconfigure(errors="backslashreplace")
    import controller

    controller.started = True  # from here a Ctrl-C stops the command as interrupted
    try:
        code = main()
        sys.stdout.flush()  # a full disk or a closed output: said here, not at the exit
        if unshown:
            print(
                "plangate: the answer was not shown: standard output is closed "
                f"(exit status {code} is the command's)",
                file=sys.stderr,
            )
        return code
    except KeyboardInterrupt:  # a Ctrl-C before main's own handler (round 110, CI check of
        return 130  # 2026-12-07: one landed in wants_json, before main's try)
    except OSError as exc:  # the output could not be written (round 109: > /dev/full)
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (the exit flushes it: nothing left)
        if isinstance(exc, BrokenPipeError):
            return 0  # a reader that stopped reading (``| head``): quiet, as before
        reason = exc.strerror or str(exc)
        print(
            f"plangate: E_STORAGE: cannot write the output: {reason}\n"
            "  remedy: check the disk or the pipe the output goes to",
            file=sys.stderr,
        )
        return 2
    finally:
        gc.freeze()


def _closed_streams() -> bool:
    """Put ``/dev/null`` on a standard descriptor the caller closed (``>&-``; a closed stderr
    gets stdout's, where errors went before), and say whether it was standard output.
    Round 110: ``approve ... >&-`` committed, then stopped on ``sys.stdout`` being None
    with a traceback; and a closed descriptor is the next file opened, so a git child's
    output (or a print) could land in a file the command writes."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            if fd == 2 and 1 not in closed:  # errors then go with the answer (print's way)
                os.dup2(1, 2)
            else:
                null = os.open(os.devnull, os.O_RDWR)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
            closed.append(fd)
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        if fd in closed or getattr(sys, name) is None:
            setattr(sys, name, open(fd, "r" if fd == 0 else "w", closefd=False))  # noqa: SIM115
    return 1 in closed


#: An operating system's refusal of a path as named (round 108: a name over 255 bytes was an
#: internal error on every command that takes a path): the asker's to change.
_PATH_ERRNOS = frozenset(
    {errno.ENAMETOOLONG, errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EISDIR, errno.EINVAL}
)


def _os_refusal(exc: OSError) -> PlangateError:
    """An OSError about a file, as a coded error naming the file: E_USAGE when the path as
    named is what the system refuses (too long, missing, not a folder, a loop of links),
    E_STORAGE otherwise (permissions, a full or read-only disk)."""
    from controller.errors import StorageFailed, UsageError

    reason = exc.strerror or type(exc).__name__
    if exc.filename is None:  # no file named: the current folder, the output, the disk
        if exc.errno == errno.ENOENT:
            remedy = "run it from a folder that exists, or name the config with --config"
            return UsageError(f"the current folder: {reason}", remedy=remedy)
        return StorageFailed(reason, remedy="check the disk, the output and the current folder")
    where = os.fsdecode(exc.filename)
    if exc.errno in _PATH_ERRNOS:
        return UsageError(
            f"{where}: {reason}", remedy="name an existing path, each part at most 255 bytes"
        )
    return StorageFailed(f"{where}: {reason}", remedy="check the file's permissions and the disk")


def _refused(exc: PlangateError, as_json: bool) -> int:
    """A PlangateError as its message, remedy and exit code; no traceback. With a config
    loaded, what it says passes through the command's one redactor (``_shared.printed``:
    an invalid plan's problems quote the catalog, round 49), but for the asker's own text
    it quotes (:meth:`PlangateError.quoted`, round 62) and the paths it named (round 69;
    not beside the catalog's unanswered parts: an invalid plan's problems)."""
    from controller.errors import PlangateError

    shape, text = json.dumps(exc.to_json()), exc.render()
    shared = sys.modules.get("controller.commands._shared")  # not loaded: no config either
    if shared is not None:
        try:
            own = exc.quoted()  # the asker's own text, as written (round 62)
            catalog = any(p.quotes_catalog for p in getattr(exc, "problems", None) or ())
            theirs = exc.catalog_quoted()  # the catalog's, redacted whatever it holds (round 71)
            shape = shared.printed(shape, own, catalog=catalog, theirs=theirs)
            text = shared.printed(text, own, catalog=catalog, theirs=theirs)
        except PlangateError as unreadable:  # the secrets file: nothing could be hidden
            shared.forget_config()
            return _refused(unreadable, as_json)
    if as_json:  # one shape for every command (SPEC §14); ensure_ascii keeps it inert
        print(shape)
    # messages quote plan values; kept on their lines (an error may list several problems)
    from controller.display import visible_lines

    print(f"plangate: {visible_lines(text)}", file=sys.stderr)
    return exc.exit_code


if __name__ == "__main__":
    sys.exit(entry())
