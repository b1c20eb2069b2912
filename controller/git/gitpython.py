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


def _not_started() -> tuple[str, str]:
    """Why GitPython could not run ``git version`` when git said nothing: no git on PATH, or
    a git there that this process cannot start (round 113, ``fd-limit-misdiagnosed-as-no-git``:
    under ``ulimit -n 7`` the answer was "no git executable found on PATH")."""
    import shutil

    found = shutil.which("git")
    if found is None:
        return "no git executable found on PATH", _REMEDY
    import subprocess

    try:
        subprocess.run([found, "version"], capture_output=True, check=False, timeout=30)
    except OSError as exc:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        limit = f" (the open-files limit is {soft})" if exc.errno in (23, 24) else ""
        return (
            f"{found} is on PATH, but this process cannot start it: {exc.strerror}{limit}",
            "raise the open-files limit (ulimit -n; LimitNOFILE= for the service), then "
            "run the command again"
            if limit
            else _REMEDY,
        )
    except subprocess.SubprocessError:
        pass
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if 0 <= soft < 64:  # GitPython's own start needs a few more descriptors than this probe
        return (
            f"{found} is on PATH, but `git version` could not be run through it (the "
            f"open-files limit is {soft}, too low to start git beside Python)",
            "raise the open-files limit (ulimit -n; LimitNOFILE= for the service), then run "
            "the command again",
        )
    return f"{found} is on PATH, but `git version` could not be run through it", _REMEDY


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
        remedy = _REMEDY
    else:
        what, remedy = _not_started()
    raise GitError(f"cannot run git: {what}", remedy=remedy) from None
finally:  # GitPython reads it at its first import only; the tools' environment stays as given
    if _asked is None:
        os.environ.pop("GIT_PYTHON_REFRESH", None)
    else:
        os.environ["GIT_PYTHON_REFRESH"] = _asked

__all__ = ["git"]
