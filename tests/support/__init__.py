"""Helpers the tests and the benchmarks share: real git in temp folders, pinned identities,
plans written the way agents and humans write them, repositories built with fast-import, and
the real ``plangate run`` process with its JSON log.

Both import it as ``tests.support`` (the repository root is on ``sys.path``: pytest's
``pythonpath``, and each benchmark's own ``sys.path`` line).
"""
