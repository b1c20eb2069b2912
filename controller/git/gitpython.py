"""GitPython, imported in one place: a git that cannot run is ``E_GIT``, not an import error.

GitPython runs ``git version`` when it is imported and raises ``ImportError`` ("Bad git
executable", or "Failed to initialize" when git answers with an error): every command that
reads the repository then stopped as an internal error, and the MCP server died before it
answered (round 110, atk110b). Here that is ``E_GIT`` with git's own words, as the git CLI's
absence is elsewhere (:func:`controller.git.guard.cannot_run`); raised again by each later
import, so a long-running server answers each request with it.
"""

from __future__ import annotations

import os

from controller.errors import GitError

_REMEDY = "install git, or put a working git first on PATH"

_asked = os.environ.get("GIT_PYTHON_REFRESH")
os.environ["GIT_PYTHON_REFRESH"] = "raise"  # not a warning on stderr, and not quiet: said here
try:
    import git
except ImportError as exc:  # no git found, or git answered with an error (GitPython wraps it)
    cause = exc.__cause__
    stderr = getattr(cause, "stderr", None)  # git ran: its exit status and its words
    if stderr is not None:
        said = " ".join(str(stderr).split()).removeprefix("stderr: ").strip("'")[:300]
        what = f"`git version` exited {getattr(cause, 'status', '?')}: {said or 'no message'}"
    else:
        what = "no git executable found on PATH"
    raise GitError(f"cannot run git: {what}", remedy=_REMEDY) from None
finally:  # GitPython reads it at its first import only; the tools' environment stays as given
    if _asked is None:
        os.environ.pop("GIT_PYTHON_REFRESH", None)
    else:
        os.environ["GIT_PYTHON_REFRESH"] = _asked

__all__ = ["git"]
