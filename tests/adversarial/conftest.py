"""Under ``pytest -n N tests/adversarial``: each file's tests go to one worker (xdist's
``loadfile``) instead of one test at a time to whichever worker is free (``load``).

An attack file builds one lab (a repo played through several ``run --once`` passes) that
its variants only look at. Spread one test at a time, both workers reach a file together:
each built the lab (module scope), or, with the ``shared`` helpers, one builds while the
other waits on its lock with nothing to do. Whole files never meet: every lab is built once,
and no worker waits for another. An explicit ``--dist`` is kept; this file is read only when
tests/adversarial is named on the command line (``pytest -n 2 tests`` keeps ``load``, and
the ``shared`` helpers still build each lab once).
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "load" or "--dist" in " ".join(config.invocation_params.args):
        return None  # xdist's own choice
    from xdist.scheduler import LoadFileScheduling

    return LoadFileScheduling(config, log)
