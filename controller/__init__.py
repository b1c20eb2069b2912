"""plangate: a GitOps controller for frozen plans.

The flow of a plan through the package: plans (load, validate) -> hashing/freeze ->
approvals (verify against git history) -> executor (run) -> logbook (record), with the
daemon reconciling the repository's state on every event. See docs/architecture.md.
"""

#: The release, kept equal to ``version`` in pyproject.toml (tests/test_startup.py checks):
#: a constant, so ``plangate --version`` and ``--help`` need no package-metadata lookup.
__version__ = "0.1.0"


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
