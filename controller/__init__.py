"""plangate: a GitOps controller for frozen plans.

The flow of a plan through the package: plans (load, validate) -> hashing/freeze ->
approvals (verify against git history) -> executor (run) -> logbook (record), with the
daemon reconciling the repository's state on every event. See docs/architecture.md.
"""

#: The release, kept equal to ``version`` in pyproject.toml (tests/test_startup.py checks):
#: a constant, so ``plangate --version`` and ``--help`` need no package-metadata lookup.
__version__ = "0.1.0"
