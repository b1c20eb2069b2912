"""plangate: a GitOps controller for frozen plans.

The flow of a plan through the package: plans (load, validate) -> hashing/freeze ->
approvals (verify against git history) -> executor (run) -> logbook (record), with the
daemon reconciling the repository's state on every event. See docs/architecture.md.
"""

#: The release, kept equal to ``version`` in pyproject.toml (tests/test_startup.py checks):
#: a constant, so ``plangate --version`` and ``--help`` need no package-metadata lookup.
__version__ = "0.1.0"

import os
from typing import Any

#: Set by :func:`controller.cli.entry` once the command itself runs: a Ctrl-C before that, in
#: the start-up (round 112's CI: one landed in the check of the standard streams), is a quiet
#: exit 130, as one inside an import is.
started = False


def _interrupt(signum: int, frame: Any) -> None:
    """Ctrl-C in the ``plangate`` command: Python's ``KeyboardInterrupt`` (the command stops
    as interrupted, exit 130), except inside an import, which writes nothing: there a quiet
    exit 130 (round 110, atk110b: a ``KeyboardInterrupt`` traceback from the middle of the
    CLI's own import, or pyo3's ``PanicException`` with a Rust backtrace when it came while
    pydantic-core loaded, which no ``except`` can hide: Rust prints it first)."""
    if not started:  # still setting up (imports, standard streams): nothing written yet
        os._exit(128 + signum)
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            os._exit(128 + signum)
        frame = frame.f_back
    raise KeyboardInterrupt


def _loading_the_cli() -> bool:
    """Whether this import is the ``plangate`` command's own start (the console script, or
    ``python -m controller``, whose package import sees ``sys.argv[0] == "-m"``)."""
    import sys

    first = sys.argv[0] if sys.argv else ""
    return first == "-m" or first.replace("\\", "/").rsplit("/", 1)[-1] in (
        "plangate",
        "plangate.exe",
    )


if _loading_the_cli():
    import signal

    signal.signal(signal.SIGINT, _interrupt)

#: git's variables that choose WHICH repository, store, index or namespace git reads and
#: writes: the ``plangate`` process drops them at its start (:func:`controller.cli.entry`)
#: and no git child is given them (:mod:`controller.git.guard`). plangate names its
#: repository by a path (the config's ``repo:``, or the clone holding the plan named),
#: never by the environment: a hook, ``git rebase -x`` or an agent's harness sets them for
#: its own repository (round 85: under ``GIT_DIR``/``GIT_OBJECT_DIRECTORY`` naming Mallory's
#: clone, refs were read from the configured repository and objects from hers). Here, not
#: in the guard: ``plangate --help`` imports no git module.
GIT_LOCATION_ENV = frozenset(
    {
        "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE",
        "GIT_PREFIX", "GIT_QUARANTINE_PATH", "GIT_SHALLOW_FILE",
    }
)  # fmt: skip


def _refuse_pydantic_plugins() -> None:
    """No pydantic plugin ever sees or changes how plangate validates.

    At its first model pydantic imports ``importlib.metadata`` and reads every installed
    distribution's entry points for plugins (about 17 ms of a ``plangate validate``), then
    hands each plugin every value it validates: plans, plangate.yml, agent requests. The
    controller uses none and must not pick one up from whatever shares its environment.
    ``PYDANTIC_DISABLE_PLUGINS`` would reach the tools' environment too, so pydantic's loader
    is answered here instead, before pydantic is imported (once it is, nothing changes).
    """
    import sys
    import types

    name = "pydantic.plugin._loader"
    if name in sys.modules:
        return
    loader = types.ModuleType(name, "plangate: no pydantic plugins (controller/__init__.py)")
    loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
    sys.modules[name] = loader


_refuse_pydantic_plugins()
