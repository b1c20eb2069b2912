"""plangate: a GitOps controller for frozen plans.

The flow of a plan through the package: plans (load, validate) -> hashing/freeze ->
approvals (verify against git history) -> executor (run) -> logbook (record), with the
daemon reconciling the repository's state on every event. See docs/architecture.md.
"""
